// srnic_qp_gen: the incarnation of every QP (decision 109). A QP_MODIFY to RESET, once every
// block holding a slice of the QP context has taken it (bump_*, from srnic_csr), advances the
// QP's incarnation by one (GEN_W bits, wrapping). Work that one block queues for another (send
// segments and packet jobs, responder answers, completion events, rewinds, stop and error
// requests) carries the incarnation read when it was made; the block that would act on it
// reads the current one and drops the work if they differ, so nothing queued before a reset
// acts on the QP's next incarnation.
//
// The bump comes after every block has taken the command, so work made while the command was
// being taken still carries the old incarnation; no block makes new work for the QP until the
// host has moved it on from RESET (the next commands), by which time the bump is done.
// Read ports are combinational (NPORTS copies of a NUM_QPS x GEN_W array on an FPGA); the
// array is not reset: incarnations only have to differ from the one work was made for, and
// every queue is empty after a reset.
`default_nettype none
module srnic_qp_gen #(
  parameter int NUM_QPS = 16384,
  parameter int NPORTS  = 8
) (
  input  wire logic clk,
  input  wire logic bump_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] bump_qpn,
  input  wire logic [NPORTS*$clog2(NUM_QPS)-1:0] rd_qpn,
  output logic [NPORTS*srnic_pkg::GEN_W-1:0]     rd_gen
);
  localparam int AW = $clog2(NUM_QPS);
  localparam int G  = srnic_pkg::GEN_W;
  logic [G-1:0] gen [NUM_QPS];
  always_ff @(posedge clk) if (bump_valid) gen[bump_qpn] <= gen[bump_qpn] + G'(1);
  always_comb
    for (int p = 0; p < NPORTS; p++) rd_gen[p*G +: G] = gen[rd_qpn[p*AW +: AW]];
endmodule
`default_nettype wire
