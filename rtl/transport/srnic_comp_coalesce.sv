// srnic_comp_coalesce: feeds the completion engine. ACK and READ_DONE events are merged
// per QP: a QP with news waits once in a QPN FIFO while its newest acknowledged PSN and
// newest placed-READ PSN accumulate in a table, and the completion engine gets one
// CEV_ACKS event for everything that arrived meanwhile. So the RX engine never waits
// for the completion engine's WQE reads, however many ACKs arrive (at most one entry
// per QP is pending). A retry episode (CEV_RETRY) is merged the same way, so the completion
// engine sees it together with, and after, every ACK and READ_DONE the RX engine produced
// before it (a READ whose data was placed is never re-read); the RX engine starts at most one
// episode per QP until the send path has applied the answer, so one slot per QP holds it.
// Other events (fatal NAKs, and local WQE errors from the send path) pass through a FIFO and go
// first.
// The engine has events of several QPs in flight but at most one per QP: a QP at the head
// of the QPN FIFO that the engine reports busy (busy_qpn/busy) goes to the back of the FIFO
// instead, still pending, so its ACKs keep merging and the QPs behind it are not held up.
// Each merged entry keeps the incarnation of the QP its events were made for (decision 109):
// an event of another incarnation replaces what is pending instead of merging with it (the
// completion engine drops whichever of them is stale).
`default_nettype none
module srnic_comp_coalesce #(
  parameter int NUM_QPS = 16384
) (
  input  wire logic  clk,
  input  wire logic  rst,
  input  wire logic  s_valid,
  input  var srnic_pkg::comp_ev_t s_ev,
  output logic       s_ready,
  // local errors from the send path (direct)
  input  wire logic  l_valid,
  input  var srnic_pkg::comp_ev_t l_ev,
  output logic       l_ready,
  output logic       m_valid,
  output srnic_pkg::comp_ev_t m_ev,
  input  wire logic  m_ready,
  // the engine's busy set
  output logic [srnic_pkg::QPN_W-1:0] busy_qpn,
  input  wire logic  busy
);
  localparam int AW = $clog2(NUM_QPS);
  localparam int ROWS = NUM_QPS / 16;
  localparam int RW = $clog2(ROWS);
  initial begin
    if (NUM_QPS < 32 || (1 << AW) != NUM_QPS) $fatal(1, "srnic_comp_coalesce: NUM_QPS must be a power of two >= 32");
  end

  wire is_co = s_ev.kind == srnic_pkg::CEV_ACK || s_ev.kind == srnic_pkg::CEV_READ_DONE ||
               s_ev.kind == srnic_pkg::CEV_RETRY;

  // direct events
  srnic_pkg::comp_ev_t d_ev;
  logic d_valid, d_pop, d_in_ready;
  // the RX engine's direct events go first; a local error waits for a free cycle
  wire rx_direct = s_valid && !is_co;
  assign l_ready = !rx_direct && d_in_ready;
  sync_fifo #(.WIDTH($bits(s_ev)), .DEPTH(64)) u_direct (
    .clk, .rst, .s_data(rx_direct ? s_ev : l_ev), .s_valid(rx_direct || l_valid), .s_ready(d_in_ready),
    .m_data(d_ev), .m_valid(d_valid), .m_ready(d_pop), .count());
  // events to merge
  srnic_pkg::comp_ev_t c_ev;
  logic c_valid, c_pop, c_in_ready;
  sync_fifo #(.WIDTH($bits(s_ev)), .DEPTH(16)) u_co (
    .clk, .rst, .s_data(s_ev), .s_valid(s_valid && is_co), .s_ready(c_in_ready),
    .m_data(c_ev), .m_valid(c_valid), .m_ready(c_pop), .count());
  assign s_ready = is_co ? c_in_ready : d_in_ready;

  // per-QP pending bit (16 to a row, cleared by a sweep after reset) and merged PSNs
  logic [15:0]   pend [ROWS];
  logic          init_busy;
  logic [RW-1:0] init_row;
  typedef struct packed {
    logic [srnic_pkg::GEN_W-1:0] gen;
    logic [23:0] ack;
    logic [23:0] rd;
    logic        has_ack;
    logic        has_rd;
    logic        has_rt;
    logic [1:0]  rt_kind;
    logic [4:0]  rt_code;
    logic [23:0] rt_psn;
  } acc_t;
  acc_t          acc_rd, acc_wr;
  logic          acc_we;
  logic [AW-1:0] acc_waddr, acc_raddr;
  logic          acc_re;
  sdp_ram #(.WIDTH($bits(acc_wr)), .DEPTH(NUM_QPS)) u_acc (
    .clk, .wr_en(acc_we), .wr_addr(acc_waddr), .wr_data(acc_wr),
    .rd_en(acc_re), .rd_addr(acc_raddr), .rd_data(acc_rd));

  // QPs with news
  logic [AW-1:0] q_in, q_head;
  logic          q_push, q_valid, q_pop;
  logic          q_room;
  sync_fifo #(.WIDTH(AW), .DEPTH(NUM_QPS)) u_q (
    .clk, .rst, .s_data(q_in), .s_valid(q_push), .s_ready(q_room),
    .m_data(q_head), .m_valid(q_valid), .m_ready(q_pop), .count());
  assign busy_qpn = srnic_pkg::QPN_W'(q_head);

  typedef enum logic [1:0] {K_IDLE, K_MERGE, K_TAKE} kst_e;
  kst_e          kst;
  srnic_pkg::comp_ev_t k_ev;           // event being merged
  logic [AW-1:0] k_qpn;
  logic          staged;               // a CEV_ACKS event waits for the engine
  srnic_pkg::comp_ev_t st_ev;

  // merges and takes alternate when both wait, so a steady stream of events cannot
  // starve the completion engine
  logic last_take;
  // (a busy head goes to the back of the queue instead: that counts as a take)
  wire can_take    = q_valid && !staged && (!busy || q_room);
  wire start_merge = !init_busy && kst == K_IDLE && c_valid && !(can_take && !last_take);
  wire start_turn  = !init_busy && kst == K_IDLE && can_take && !start_merge;
  wire rotate      = start_turn && busy;
  wire start_take  = start_turn && !busy;
  assign c_pop     = start_merge;
  assign q_pop     = start_turn;
  assign acc_re    = start_merge || start_take;
  assign acc_raddr = start_merge ? c_ev.qpn[AW-1:0] : q_head;

  // merge: the row's pending bit decides whether the stored PSNs still count
  wire [RW-1:0] row  = k_qpn[AW-1:4];
  wire [3:0]    lane = k_qpn[3:0];
  wire [15:0]   prow = pend[row];
  wire          was_pend = prow[lane];
  wire          same_gen = acc_rd.gen == k_ev.gen;   // pending news of the same incarnation
  always_comb begin
    acc_wr = '0;
    if (kst == K_MERGE) begin
      acc_wr = (was_pend && same_gen) ? acc_rd : '0;
      acc_wr.gen = k_ev.gen;
      if (k_ev.kind == srnic_pkg::CEV_ACK) begin
        if (!acc_wr.has_ack || srnic_pkg::psn_ge(k_ev.psn, acc_wr.ack)) acc_wr.ack = k_ev.psn;
        acc_wr.has_ack = 1'b1;
      end else if (k_ev.kind == srnic_pkg::CEV_RETRY) begin
        acc_wr.has_rt  = 1'b1;
        acc_wr.rt_kind = k_ev.rt_kind;
        acc_wr.rt_code = k_ev.rt_code;
        acc_wr.rt_psn  = k_ev.rt_psn;
      end else begin
        if (!acc_wr.has_rd || srnic_pkg::psn_ge(k_ev.psn, acc_wr.rd)) acc_wr.rd = k_ev.psn;
        acc_wr.has_rd = 1'b1;
      end
    end
  end
  assign acc_we    = kst == K_MERGE;
  assign acc_waddr = k_qpn;
  assign q_push    = (kst == K_MERGE && !was_pend) || rotate;
  assign q_in      = rotate ? q_head : k_qpn;

  // output: direct events first
  assign m_valid = d_valid || staged;
  assign m_ev    = d_valid ? d_ev : st_ev;
  assign d_pop   = d_valid && m_ready;
  wire   st_pop  = !d_valid && staged && m_ready;

  always_ff @(posedge clk) begin
    if (rst) begin
      kst <= K_IDLE; staged <= 1'b0; init_busy <= 1'b1; init_row <= '0; last_take <= 1'b0;
    end else begin
      if (init_busy) begin
        pend[init_row] <= '0;
        init_row <= init_row + 1'b1;
        if (init_row == RW'(ROWS - 1)) init_busy <= 1'b0;
      end
      if (st_pop) staged <= 1'b0;
      case (kst)
        K_IDLE: begin
          if (start_merge) begin k_ev <= c_ev; k_qpn <= c_ev.qpn[AW-1:0]; kst <= K_MERGE; last_take <= 1'b0; end
          else if (start_take) begin k_qpn <= q_head; kst <= K_TAKE; last_take <= 1'b1; end
          else if (rotate) last_take <= 1'b1;
        end
        K_MERGE: begin
          logic [15:0] r;
          r = prow; r[lane] = 1'b1;
          pend[row] <= r;
          kst <= K_IDLE;
        end
        K_TAKE: begin
          logic [15:0] r;
          r = prow; r[lane] = 1'b0;
          pend[row] <= r;
          st_ev <= '0;
          st_ev.gen     <= acc_rd.gen;
          st_ev.kind    <= srnic_pkg::CEV_ACKS;
          st_ev.qpn     <= srnic_pkg::QPN_W'(k_qpn);
          st_ev.psn     <= acc_rd.ack;
          st_ev.psn2    <= acc_rd.rd;
          st_ev.has_ack <= acc_rd.has_ack;
          st_ev.has_rd  <= acc_rd.has_rd;
          st_ev.has_rt  <= acc_rd.has_rt;
          st_ev.rt_kind <= acc_rd.rt_kind;
          st_ev.rt_code <= acc_rd.rt_code;
          st_ev.rt_psn  <= acc_rd.rt_psn;
          st_ev.status  <= srnic_abi_pkg::WC_SUCCESS;
          staged <= 1'b1;
          kst <= K_IDLE;
        end
        default: kst <= K_IDLE;
      endcase
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^k_ev;
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert). The output prefers direct events, so an ACKS event
  // that waits may be overtaken (m_ev changes); m_valid itself is held.
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    kst inside {K_IDLE, K_MERGE, K_TAKE})
    else $error("srnic_comp_coalesce: illegal state %0d", kst);
  a_out_held: assert property (@(posedge clk) disable iff (rst)
    m_valid && !m_ready |=> m_valid)
    else $error("srnic_comp_coalesce: event withdrawn before it was taken");
  a_direct_first: assert property (@(posedge clk) disable iff (rst)
    d_valid && !m_ready |=> d_valid && $stable(d_ev))
    else $error("srnic_comp_coalesce: direct event withdrawn or changed before it was taken");
  // each QP is queued at most once (its pending bit), so the QP queue never overflows
  a_q_no_overflow: assert property (@(posedge clk) disable iff (rst)
    q_push |-> u_q.s_ready)
    else $error("srnic_comp_coalesce: pending-QP queue overflow (a QP queued twice)");
  a_one_retry: assert property (@(posedge clk) disable iff (rst || init_busy)
    kst == K_MERGE && k_ev.kind == srnic_pkg::CEV_RETRY |-> !(was_pend && same_gen && acc_rd.has_rt))
    else $error("srnic_comp_coalesce: second retry episode of QP %0d before the first was taken", k_qpn);
  a_take_pending: assert property (@(posedge clk) disable iff (rst || init_busy)
    kst == K_TAKE |-> was_pend)
    else $error("srnic_comp_coalesce: QP %0d taken from the queue without its pending bit", k_qpn);
`endif
endmodule
`default_nettype wire
