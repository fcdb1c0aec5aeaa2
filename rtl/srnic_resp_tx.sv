// srnic_resp_tx: the responder's transmit queues. Tasks from the RX engine become packets: an
// ACK/NAK one packet; a READ its response packets (FIRST/MIDDLE/LAST or ONLY, AETH with the
// MSN on FIRST/LAST/ONLY), cut to the path MTU.
//
// Per-QP order, not one FIFO for the NIC. A QP's answers must leave in PSN order (an ACK that
// overtook the READ responses before it would be an implied NAK at the requester), but answers
// of different QPs need not wait for each other: with one FIFO, an ACK waited behind every READ
// response queued before it, of any QP, and a long READ (megabytes, a millisecond on the wire)
// delayed every other QP's ACKs past its local ACK timeout. So there are two queues:
//   ordered queue: every READ, and every ACK/NAK of a QP that has a task in this queue (a
//                  READ being answered or waiting, or an ACK/NAK queued behind one);
//   ACK queue:     the ACKs/NAKs of every other QP.
// The ACK queue goes first at every packet boundary (between two READ response packets too),
// so an ACK/NAK queued before a READ of its QP also leaves before that READ's responses. Which
// QPs have tasks in the ordered queue is kept in a small table (TRACK QPs, with the number of
// their tasks there); a READ of another QP waits in the stage while the table is full.
//
// ACK coalescing: a task enters through a one-entry stage in front of the queues. A plain ACK
// (not a NAK) for the QP whose plain ACK sits in the stage replaces it (ACKs are cumulative:
// the newer PSN and MSN cover the older one). So a storm of ACKs for a QP never blocks the RX
// engine while the link is paused; without that, two NICs pausing each other could both stall
// with full queues (the RX engine waits for the queue, the queue for the paused link, the
// pause for the RX engine to drain).
`default_nettype none
module srnic_resp_tx #(
  parameter int DEPTH  = 256,   // ordered queue (tasks)
  parameter int ADEPTH = 32,    // ACK queue (tasks)
  parameter int TRACK  = 16     // QPs with tasks in the ordered queue
) (
  input  wire logic  clk,
  input  wire logic  rst,
  input  wire logic  s_valid,
  input  var srnic_pkg::resp_task_t s_task,
  output logic       s_ready,
  output logic       job_valid,
  output srnic_pkg::tx_job_t job,
  input  wire logic  job_ready,
  output logic       sent_ack,
  output logic       sent_nak
);
  localparam int QW = srnic_pkg::QPN_W;
  localparam int CW = $clog2(DEPTH + 1);
  localparam int TW = $clog2(TRACK);
  initial if ((1 << TW) != TRACK) $fatal(1, "srnic_resp_tx: TRACK must be a power of two");

  srnic_pkg::resp_task_t t, stage;
  typedef struct packed {      // what the ACK queue keeps of a task
    logic [QW-1:0] qpn;
    logic [23:0]   psn;
    logic [7:0]    syndrome;
    logic [23:0]   msn;
  } ack_t;
  ack_t a, a_in;
  always_comb begin
    a_in.qpn = stage.qpn; a_in.psn = stage.psn; a_in.syndrome = stage.syndrome; a_in.msn = stage.msn;
  end
  logic       t_valid, t_pop, a_valid, a_pop, stage_valid, q_ready, aq_ready;

  // ------------------------------------------------------------ QPs in the ordered queue
  logic [TRACK-1:0] tr_used;
  logic [QW-1:0]    tr_qpn [TRACK];
  logic [CW-1:0]    tr_cnt [TRACK];
  logic             st_hit, st_free;      // the staged task's QP is in the table / a free slot
  logic [TW-1:0]    st_idx, st_fidx;
  logic [TW-1:0]    pop_idx;              // the table slot of the ordered queue's head
  always_comb begin
    st_hit = 1'b0; st_idx = '0; st_free = 1'b0; st_fidx = '0; pop_idx = '0;
    for (int i = TRACK - 1; i >= 0; i--) begin
      if (tr_used[i] && tr_qpn[i] == stage.qpn) begin st_hit = 1'b1; st_idx = TW'(i); end
      if (!tr_used[i]) begin st_free = 1'b1; st_fidx = TW'(i); end
      if (tr_used[i] && tr_qpn[i] == t.qpn) pop_idx = TW'(i);
    end
  end
  // where the staged task goes: the ordered queue (a READ, or its QP has tasks there), else
  // the ACK queue
  wire to_ord = stage.is_read || st_hit;
  wire push_o = stage_valid && to_ord && q_ready && (st_hit || st_free);
  wire push_a = stage_valid && !to_ord && aq_ready;
  wire push   = push_o || push_a;

  wire  s_ack = !s_task.is_read && s_task.syndrome == srnic_pkg::AETH_ACK;
  wire  merge = stage_valid && !stage.is_read && stage.syndrome == srnic_pkg::AETH_ACK && s_ack &&
                stage.qpn == s_task.qpn;
  assign s_ready = !stage_valid || push || merge;
  always_ff @(posedge clk) begin
    if (rst) stage_valid <= 1'b0;
    else if (s_valid && s_ready) stage_valid <= 1'b1;
    else if (push) stage_valid <= 1'b0;
    if (s_valid && s_ready) stage <= s_task;
  end
  sync_fifo #(.WIDTH($bits(t)), .DEPTH(DEPTH)) u_q (
    .clk, .rst, .s_data(stage), .s_valid(push_o), .s_ready(q_ready),
    .m_data(t), .m_valid(t_valid), .m_ready(t_pop), .count());
  sync_fifo #(.WIDTH($bits(a)), .DEPTH(ADEPTH)) u_aq (
    .clk, .rst, .s_data(a_in), .s_valid(push_a), .s_ready(aq_ready),
    .m_data(a), .m_valid(a_valid), .m_ready(a_pop), .count());

  always_ff @(posedge clk) begin
    if (rst) tr_used <= '0;
    else begin
      for (int i = 0; i < TRACK; i++) begin
        if (push_o && st_hit && st_idx == TW'(i)) begin
          if (!(t_pop && pop_idx == TW'(i))) tr_cnt[i] <= tr_cnt[i] + CW'(1);
        end else if (push_o && !st_hit && st_fidx == TW'(i)) begin
          tr_used[i] <= 1'b1; tr_qpn[i] <= stage.qpn; tr_cnt[i] <= CW'(1);
        end else if (t_pop && pop_idx == TW'(i)) begin
          tr_cnt[i] <= tr_cnt[i] - CW'(1);
          if (tr_cnt[i] == CW'(1)) tr_used[i] <= 1'b0;
        end
      end
    end
  end

  // ------------------------------------------------------------ packets
  logic [31:0] off;        // bytes of the current READ already sent
  logic [23:0] psn_off;
  wire  [12:0] mtu_b   = srnic_pkg::mtu_bytes(t.mtu);
  wire  [31:0] remain  = t.len - off;
  wire         is_last = remain <= {19'd0, mtu_b};
  wire         is_first = off == 32'd0;
  wire  [12:0] plen    = is_last ? remain[12:0] : mtu_b;
  // The ACK queue goes first at every packet boundary; a job offered and not taken stays
  // offered (lock_t holds an ordered-queue job against an ACK that arrives meanwhile).
  logic        lock_t;
  wire         use_a   = a_valid && !lock_t;

  always_comb begin
    job = '0;
    if (use_a) begin
      job.qpn      = a.qpn;
      job.aeth_msn = a.msn;
      job.opcode   = srnic_pkg::OP_ACK;
      job.psn      = a.psn;
      job.aeth_syn = a.syndrome;
    end else begin
      job.qpn = t.qpn;
      job.aeth_msn = t.msn;
      if (t.is_read) begin
        job.opcode   = (is_first && is_last) ? srnic_pkg::OP_READ_RESP_ONLY : is_first ? srnic_pkg::OP_READ_RESP_FIRST :
                       is_last ? srnic_pkg::OP_READ_RESP_LAST : srnic_pkg::OP_READ_RESP_MIDDLE;
        job.psn      = t.psn + psn_off;
        job.aeth_syn = srnic_pkg::AETH_ACK;
        job.pay_addr = t.addr + {32'd0, off};
        job.pay_len  = plen;
      end else begin
        job.opcode   = srnic_pkg::OP_ACK;
        job.psn      = t.psn;
        job.aeth_syn = t.syndrome;
      end
    end
  end
  assign job_valid = a_valid || t_valid;
  wire fire   = job_valid && job_ready;
  wire fire_t = fire && !use_a;
  assign a_pop = fire && use_a;
  assign t_pop = fire_t && (!t.is_read || is_last);
  wire   ack_job = use_a || !t.is_read;
  wire [1:0] syn_cls = use_a ? a.syndrome[6:5] : t.syndrome[6:5];
  assign sent_ack = fire && ack_job && syn_cls == 2'b00;
  assign sent_nak = fire && ack_job && syn_cls != 2'b00;

  always_ff @(posedge clk) begin
    if (rst) lock_t <= 1'b0;
    else lock_t <= job_valid && !job_ready && !use_a;
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      off <= '0; psn_off <= '0;
    end else if (fire_t && t.is_read) begin
      if (is_last) begin off <= '0; psn_off <= '0; end
      else begin off <= off + {19'd0, plen}; psn_off <= psn_off + 24'd1; end
    end
  end

`ifndef SYNTHESIS
  // Assertions (verilator --assert): job output held, READ segmentation bounds, the QP table
  // names exactly the QPs of the ordered queue's head (and never one of the ACK queue's).
  a_job_hold: assert property (@(posedge clk) disable iff (rst)
    job_valid && !job_ready |=> job_valid && $stable(job))
    else $error("srnic_resp_tx: job withdrawn or changed before it was taken");
  a_read_offset: assert property (@(posedge clk) disable iff (rst)
    t_valid && t.is_read |-> off < t.len || (off == 32'd0 && t.len == 32'd0))
    else $error("srnic_resp_tx: READ response offset %0d beyond the READ length %0d", off, t.len);
  a_ack_no_offset: assert property (@(posedge clk) disable iff (rst)
    t_valid && !t.is_read |-> off == 32'd0 && psn_off == 24'd0)
    else $error("srnic_resp_tx: ACK/NAK while a READ segmentation is half done");
  a_ack_nak_exclusive: assert property (@(posedge clk) disable iff (rst)
    !(sent_ack && sent_nak))
    else $error("srnic_resp_tx: a packet counted as both ACK and NAK");
  logic head_tracked;
  always_comb begin
    head_tracked = 1'b0;
    for (int i = 0; i < TRACK; i++) if (tr_used[i] && tr_qpn[i] == t.qpn) head_tracked = 1'b1;
  end
  a_head_tracked: assert property (@(posedge clk) disable iff (rst)
    t_valid |-> head_tracked)
    else $error("srnic_resp_tx: the ordered queue's head QP %0d is not in the QP table", t.qpn);
  a_ack_not_ordered: assert property (@(posedge clk) disable iff (rst)
    push_a |-> !st_hit && !stage.is_read)
    else $error("srnic_resp_tx: a task of QP %0d passed its ordered tasks", stage.qpn);
`endif
endmodule
`default_nettype wire
