// srnic_sched: simple fair (round-robin) send scheduler.
//
// A FIFO of ready QPNs; each QP is in it at most once. Per QP two bits:
//   queued  - the QPN sits in the FIFO;
//   busy    - the QPN was popped and its scheduling turn is in flight;
//   pending - a doorbell arrived while the turn was in flight.
// Doorbell for an idle QP: queue it. For a queued QP: nothing (the turn will read the
// new producer index). For a busy QP: set pending, because the turn may already have
// read the old producer index. At turn end (done), the QP is queued again if the turn
// left work or a doorbell came in meanwhile; otherwise it goes idle. So a doorbell is
// never lost and a QP is never queued twice. One event is handled per cycle; turn-end
// events have priority over doorbells, which wait in a small FIFO.
//
// This is the seam where the cache-free SRNIC scheduler (credit-aware event mux)
// replaces it: same ports, a richer per-QP state.
`default_nettype none
module srnic_sched #(
  parameter int NUM_QPS  = 16384,
  parameter int DB_DEPTH = 16
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  input  wire logic                       db_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] db_qpn,
  output logic                            db_overflow,
  input  wire logic                       done_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] done_qpn,
  input  wire logic                       done_more,
  output logic                            done_ready,
  output logic                            m_valid,
  output logic [$clog2(NUM_QPS)-1:0]      m_qpn,
  input  wire logic                       m_ready
);
  localparam int AW = $clog2(NUM_QPS);
  logic [NUM_QPS-1:0] queued, busy, pending;

  logic [AW-1:0] dbq_qpn;
  logic          dbq_valid, dbq_ready, dbq_in_ready;
  sync_fifo #(.WIDTH(AW), .DEPTH(DB_DEPTH)) u_dbq (
    .clk, .rst, .s_data(db_qpn), .s_valid(db_valid), .s_ready(dbq_in_ready),
    .m_data(dbq_qpn), .m_valid(dbq_valid), .m_ready(dbq_ready), .count());
  assign db_overflow = db_valid && !dbq_in_ready;

  logic          push;
  logic [AW-1:0] push_qpn;
  logic          fifo_ready;
  sync_fifo #(.WIDTH(AW), .DEPTH(NUM_QPS)) u_rq (
    .clk, .rst, .s_data(push_qpn), .s_valid(push), .s_ready(fifo_ready),
    .m_data(m_qpn), .m_valid(m_valid), .m_ready(m_ready), .count());

  assign done_ready = 1'b1;
  assign dbq_ready  = !done_valid;
  wire do_db = dbq_valid && !done_valid;
  wire pop   = m_valid && m_ready;

  always_comb begin
    push = 1'b0;
    push_qpn = done_qpn;
    if (done_valid) begin
      push = done_more || pending[done_qpn];
    end else if (do_db) begin
      push_qpn = dbq_qpn;
      push = !queued[dbq_qpn] && !busy[dbq_qpn];
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      queued <= '0; busy <= '0; pending <= '0;
    end else begin
      if (pop) begin
        queued[m_qpn] <= 1'b0;
        busy[m_qpn]   <= 1'b1;
      end
      if (done_valid) begin
        busy[done_qpn]    <= 1'b0;
        pending[done_qpn] <= 1'b0;
        if (push) queued[done_qpn] <= 1'b1;
      end else if (do_db) begin
        if (busy[dbq_qpn]) pending[dbq_qpn] <= 1'b1;
        else if (push) queued[dbq_qpn] <= 1'b1;
      end
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && push && !fifo_ready) $error("srnic_sched: schedule queue overflow");
    if (!rst && done_valid && !busy[done_qpn]) $error("srnic_sched: turn end for QP %0d that is not busy", done_qpn);
  end
`endif
endmodule
`default_nettype wire
