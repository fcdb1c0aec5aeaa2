// srnic_mr_table: on-chip memory-region table (contiguous MRs) with NPORTS independent
// lookup pipelines. Each port checks a key against the entry at index key>>8: valid,
// full 32-bit key, protection domain, access rights and bounds [va, va+len) inside
// [iova, iova+length); it returns the host physical address of va. Zero-length
// accesses always pass (no key check), as in the RoCE reference behaviour.
// Storage is replicated per port (one write, NPORTS reads). Latency: 2 cycles.
`default_nettype none
module srnic_mr_table #(
  parameter int NUM_MRS = 256,
  parameter int NPORTS  = 3
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  input  wire logic                       wr_valid,
  input  wire logic [$clog2(NUM_MRS)-1:0] wr_index,
  input  var srnic_pkg::mr_entry_t        wr_entry,
  input  wire logic [NPORTS-1:0]          req_valid,
  input  wire logic [NPORTS*32-1:0]       req_key,
  input  wire logic [NPORTS*32-1:0]       req_pd,
  input  wire logic [NPORTS*4-1:0]        req_access,   // rights needed
  input  wire logic [NPORTS*64-1:0]       req_va,
  input  wire logic [NPORTS*32-1:0]       req_len,
  output logic [NPORTS-1:0]               rsp_valid,
  output logic [NPORTS-1:0]               rsp_ok,
  output logic [NPORTS*64-1:0]            rsp_pa
);
  for (genvar p = 0; p < NPORTS; p++) begin : g_port
    srnic_mr_port #(.NUM_MRS(NUM_MRS)) u_port (
      .clk, .rst, .wr_valid, .wr_index, .wr_entry,
      .req_valid(req_valid[p]), .req_key(req_key[p*32 +: 32]), .req_pd(req_pd[p*32 +: 32]),
      .req_access(req_access[p*4 +: 4]), .req_va(req_va[p*64 +: 64]), .req_len(req_len[p*32 +: 32]),
      .rsp_valid(rsp_valid[p]), .rsp_ok(rsp_ok[p]), .rsp_pa(rsp_pa[p*64 +: 64]));
  end

`ifndef SYNTHESIS
  // Assertion (verilator --assert): the per-port copies of the table stay identical: two
  // ports asked the same non-empty question in the same cycle give the same answer (the
  // address only when the access is accepted: entries never written hold whatever each copy
  // powered up with, and a zero-length access passes without looking at its entry).
  logic [NPORTS*NPORTS-1:0] same_q, same_q2;   // bit a*NPORTS+b: ports a and b got the same non-empty request
  always_ff @(posedge clk) begin
    for (int a = 0; a < NPORTS; a++)
      for (int b = 0; b < NPORTS; b++)
        same_q[a*NPORTS+b] <= req_valid[a] && req_valid[b] && req_key[a*32 +: 32] == req_key[b*32 +: 32] &&
                              req_pd[a*32 +: 32] == req_pd[b*32 +: 32] && req_access[a*4 +: 4] == req_access[b*4 +: 4] &&
                              req_va[a*64 +: 64] == req_va[b*64 +: 64] && req_len[a*32 +: 32] == req_len[b*32 +: 32] &&
                              req_len[a*32 +: 32] != 32'd0;
    same_q2 <= same_q;
  end
  logic ports_differ;
  always_comb begin
    ports_differ = 1'b0;
    for (int a = 0; a < NPORTS; a++)
      for (int b = 0; b < NPORTS; b++)
        if (same_q2[a*NPORTS+b] && (rsp_ok[a] != rsp_ok[b] || (rsp_ok[a] && rsp_pa[a*64 +: 64] != rsp_pa[b*64 +: 64])))
          ports_differ = 1'b1;
  end
  a_ports_agree: assert property (@(posedge clk) disable iff (rst) !ports_differ)
    else $error("srnic_mr_table: two ports answer the same lookup differently");
`endif
endmodule
`default_nettype wire
