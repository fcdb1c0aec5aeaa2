// srnic_sched: simple fair (round-robin) send scheduler.
//
// A FIFO of ready QPNs; each QP is in it at most once. Per QP two bits:
//   active  - the QP is in the FIFO or its turn is being issued by srnic_wqe_fetch;
//   pending - a doorbell arrived while it was active.
// Doorbell (or kick) for an inactive QP: make it active and queue it. For an active QP: set
// pending (its turn may already have read the old producer index). At turn end (done: the
// turn was issued, its WQE read is on its way, or it found nothing to do) the QP is queued
// again if the fetch engine says it has work beyond the turn or must wait, or if pending is
// set, otherwise it becomes inactive. Several turns of a QP may then be in flight in the
// fetch engine; a turn there that ends early kicks its QP. So a doorbell is never lost and a QP is never queued twice; a doorbell that
// hits a QP still waiting in the FIFO costs at most one extra turn that finds nothing.
// Popping the FIFO does not touch the per-QP bits, so one event per cycle updates them:
// turn ends have priority, doorbells wait in a small FIFO. The FIFO tells the register
// block when it has room (db_room); a doorbell write waits on the AXI-Lite bus while it has
// none, so a doorbell storm is slowed down, never dropped (db_overflow stays low; it is
// kept as a counted alarm).
//
// The bits are kept 8 QPs to a row in a RAM with an asynchronous read; after reset a
// sweep clears it (NUM_QPS/8 cycles) while events wait.
//
// This is the seam where a credit-aware event mux (congestion control's window) or weighted
// round robin replaces the plain FIFO: same ports, a richer per-QP state.
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
  output logic                            db_room,       // room for one more doorbell
  // kicks (go-back-N: a rewound or unparked QP has work again): handled like doorbells
  input  wire logic                       kick_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] kick_qpn,
  output logic                            kick_ready,
  input  wire logic                       done_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] done_qpn,
  input  wire logic                       done_more,
  output logic                            done_ready,
  output logic                            m_valid,
  output logic [$clog2(NUM_QPS)-1:0]      m_qpn,
  input  wire logic                       m_ready
);
  localparam int AW = $clog2(NUM_QPS);
  localparam int ROWS = NUM_QPS / 8;
  localparam int RW = $clog2(ROWS);
  initial begin
    if (NUM_QPS < 16 || (1 << AW) != NUM_QPS) $fatal(1, "srnic_sched: NUM_QPS must be a power of two >= 16");
  end

  // per-QP bits: row r holds QPs 8r..8r+7, {pending, active} per QP
  logic [15:0]  bits [ROWS];
  logic         init_busy;
  logic [RW-1:0] init_row;

  logic [AW-1:0] dbq_qpn;
  logic          dbq_valid, dbq_ready, dbq_in_ready;
  logic [$clog2(DB_DEPTH):0] dbq_count;
  sync_fifo #(.WIDTH(AW), .DEPTH(DB_DEPTH)) u_dbq (
    .clk, .rst, .s_data(db_valid ? db_qpn : kick_qpn), .s_valid(db_valid || (kick_valid && kick_ready)), .s_ready(dbq_in_ready),
    .m_data(dbq_qpn), .m_valid(dbq_valid), .m_ready(dbq_ready), .count(dbq_count));
  assign db_overflow = db_valid && !dbq_in_ready;
  // a kick waits for a cycle without a doorbell and for room below the doorbells' reserve
  assign kick_ready  = !db_valid && dbq_in_ready && db_room;
  // the register block registers a doorbell once more before it arrives here: keep a slot
  // for the one that may be on its way
  assign db_room = 32'(dbq_count) < DB_DEPTH - 1;

  logic          push;
  logic          fifo_ready;
  sync_fifo #(.WIDTH(AW), .DEPTH(NUM_QPS)) u_rq (
    .clk, .rst, .s_data(ev_qpn), .s_valid(push), .s_ready(fifo_ready),
    .m_data(m_qpn), .m_valid(m_valid), .m_ready(m_ready), .count());

  // one event per cycle: turn end first, then a doorbell
  assign done_ready = !init_busy;
  assign dbq_ready  = !init_busy && !done_valid;
  wire          ev_done = done_valid && !init_busy;
  wire          ev_db   = dbq_valid && dbq_ready;
  wire [AW-1:0] ev_qpn  = ev_done ? done_qpn : dbq_qpn;
  wire [RW-1:0] row     = ev_qpn[AW-1:3];
  wire [3:0]    lane    = {ev_qpn[2:0], 1'b0};
  wire [15:0]   cur_row = bits[row];
  wire          active  = cur_row[lane];
  wire          pending = cur_row[lane + 4'd1];
  logic         new_active, new_pending;
  always_comb begin
    push = 1'b0;
    new_active = active;
    new_pending = pending;
    if (ev_done) begin
      push = done_more || pending;
      new_active = push;
      new_pending = 1'b0;
    end else if (ev_db) begin
      if (active) new_pending = 1'b1;
      else begin push = 1'b1; new_active = 1'b1; end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      init_busy <= 1'b1;
      init_row  <= '0;
    end else if (init_busy) begin
      bits[init_row] <= '0;
      init_row <= init_row + 1'b1;
      if (init_row == RW'(ROWS - 1)) init_busy <= 1'b0;
    end else if (ev_done || ev_db) begin
      logic [15:0] r;
      r = cur_row;
      r[lane] = new_active;
      r[lane + 4'd1] = new_pending;
      bits[row] <= r;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && push && !fifo_ready) $error("srnic_sched: schedule queue overflow");
    if (!rst && ev_done && !active) $error("srnic_sched: turn end for QP %0d that is not active", done_qpn);
  end
`endif
`ifndef SYNTHESIS
  // Assertions (verilator --assert): per-QP bits and queue bounds.
  // a QP enters the schedule queue only when it was not active (so at most once)
  a_queue_once: assert property (@(posedge clk) disable iff (rst || init_busy)
    ev_db && !ev_done && push |-> !active)
    else $error("srnic_sched: doorbell queued QP %0d that is already active", ev_qpn);
  a_pending_implies_active: assert property (@(posedge clk) disable iff (rst || init_busy)
    pending |-> active)
    else $error("srnic_sched: QP %0d pending without being active", ev_qpn);
  a_out_hold: assert property (@(posedge clk) disable iff (rst)
    m_valid && !m_ready |=> m_valid && $stable(m_qpn))
    else $error("srnic_sched: scheduled QP withdrawn or changed before it was taken");
`endif
endmodule
`default_nettype wire
