// srnic_resp_tx: the responder's transmit queues. Tasks from the RX engine become packets: an
// ACK/NAK one packet; a READ its response packets (FIRST/MIDDLE/LAST or ONLY, AETH with the
// MSN on FIRST/LAST/ONLY), cut to the path MTU.
//
// Per-QP order, not one FIFO for the NIC. A QP's answers must leave in PSN order (an ACK that
// overtook the READ responses before it would be an implied NAK at the requester), but answers
// of different QPs need not wait for each other: with one FIFO, an ACK waited behind every READ
// response queued before it, of any QP, and a long READ (megabytes, a millisecond on the wire;
// up to 2 GiB, 170 ms) delayed every other QP's answers. So there are two queues:
//   ordered queue: every READ, and every ACK/NAK of a QP that has a task in this queue (a
//                  READ being answered or waiting, or an ACK/NAK queued behind one);
//   ACK queue:     the ACKs/NAKs of every other QP.
// The ACK queue goes first at every packet boundary (between two READ response packets too),
// so an ACK/NAK queued before a READ of its QP also leaves before that READ's responses.
//
// The ordered queue is one buffer of DEPTH tasks holding TRACK + 1 linked lists (decision
// 117): one per QP of a small table (TRACK QPs), and one shared list for the tasks of QPs that
// found the table full (untracked). Each list is served in its order; the lists take turns one
// packet at a time (round robin), so READ responses of different QPs interleave: a long READ
// of one QP takes its share of the link, not all of it, and every other QP's answers keep
// going. An untracked task is counted in one of OVF_BUCKETS buckets by the low bits of its
// QPN, and every later task of that bucket (ACK/NAK too, or a QP that would find a free table
// slot) joins the shared list behind it, so no answer passes an earlier one of its QP (QPs
// sharing the bucket wait with it; a bucket, not a bit per QP, keeps this off the per-QP
// budget). A QP's tasks are therefore always in one list.
//
// ACK coalescing: a task enters through a one-entry stage in front of the queues. A plain ACK
// (not a NAK) for the QP whose plain ACK sits in the stage replaces it (ACKs are cumulative:
// the newer PSN and MSN cover the older one).
//
// Deferred ACKs (decision 106). A plain ACK is never refused: one that can neither enter the
// stage nor replace the staged ACK is dropped, and its QP is marked as owed an ACK (one bit per
// QP, and the QP's number in a FIFO as deep as there are QPs, so a QP is in it at most once and
// it never overflows). While the ACK queue has room, the oldest owed QP is offered to the RX
// engine as a re-ACK event (rack_*), which answers it with a plain ACK from the responder's
// state as it is then (the expected PSN - 1 and the MSN: at least what the dropped ACK said).
// So the RX engine never waits for room for a plain ACK. Before, plain ACKs of more QPs than the
// queues hold filled them behind a paused link; the RX engine then stopped, its RX buffer
// filled, and two NICs pausing each other stayed paused for ever (a 100 us pause storm with
// bidirectional small messages on 193 QPs).
//
// Nothing waits (decision 116): s_ready is always 1. Two kinds of answer:
//   deferrable: a plain ACK or a NAK PSN sequence error. The responder's state regenerates it
//     (ePSN - 1 as an ACK; ePSN as a NAK while the QP's nak_sent is set), so one with no room
//     is dropped and its QP owed, as above. A staged deferrable task that cannot move is
//     evicted (its QP owed) when a task that cannot be deferred arrives.
//   reserved: a READ, an RNR NAK or a fatal NAK (state cannot regenerate it). The RX engine
//     takes a request packet only while the ordered queue has a free slot that no one holds
//     (resv_room), and reserves that slot at the take (resv_take); the packet gives it back
//     at its write-back if its answer is deferrable or none (resv_rel), else its task brings
//     it here. A reserved task never waits in the stage: it enters the ACK queue if its QP
//     may and there is room, else the ordered queue, where its slot is. Deferrable tasks use
//     the ordered queue only while RESV_HEAD slots stay free beyond the reservations, so a
//     queue filled by ACKs does not refuse request packets: READ tasks keep their slots while
//     the link is paused, and a srnic peer has up to 63 READs outstanding (RESV_HEAD 8 let
//     ACKs of QPs with lists fill 247 slots, and the READs behind them ran out of room).
// So the RX engine never waits for this block, whatever the link does: before, a READ arriving
// while the stage held an ACK for a full ACK queue waited there, the RX engine and then its RX
// buffer behind it, and two NICs pausing each other stayed paused for ever. A request packet
// the RX engine refuses for lack of room is dropped unexecuted (counter RESP_NO_ROOM); the
// requester resends it after a NAK for a later packet, or after its timer.
`default_nettype none
module srnic_resp_tx #(
  parameter int DEPTH  = 256,   // ordered queue (tasks)
  parameter int ADEPTH = 32,    // ACK queue (tasks)
  parameter int TRACK  = 16,    // QPs with tasks in the ordered queue
  parameter int OVF_BUCKETS = 64, // counters of untracked tasks, by QPN modulo OVF_BUCKETS
  parameter int RESV_HEAD = 96, // ordered-queue slots deferrable tasks leave free (at most DEPTH / 2)
  parameter int NUM_QPS = 16384 // QPs that may be owed an ACK
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
  output logic       sent_nak,
  // re-ACK events: the QP is owed a plain ACK (its ACK was deferred); taken by the RX engine
  output logic       rack_valid,
  output logic [$clog2(NUM_QPS)-1:0] rack_qpn,
  input  wire logic  rack_ready,
  output logic       ack_deferred,   // a deferrable answer was deferred (counter ACK_DEFERRED)
  // ordered-queue reservations of the RX engine (see the header)
  output logic       resv_room,      // a request packet may be taken (a slot is free)
  input  wire logic  resv_take,      // a request packet was taken: one slot reserved
  input  wire logic  resv_rel        // a taken packet's answer needs no slot: one released
);
  localparam int QW = srnic_pkg::QPN_W;
  localparam int CW = $clog2(DEPTH + 1);
  localparam int TW = $clog2(TRACK);
  localparam int AW = $clog2(NUM_QPS);
  localparam int ACW = $clog2(ADEPTH + 1);
  localparam int BW = $clog2(OVF_BUCKETS);
  localparam int HEAD = (RESV_HEAD < DEPTH / 2) ? RESV_HEAD : DEPTH / 2;
  initial if (DEPTH < 4) $fatal(1, "srnic_resp_tx: DEPTH must be at least 4");
  initial if ((1 << TW) != TRACK) $fatal(1, "srnic_resp_tx: TRACK must be a power of two");
  initial if ((1 << BW) != OVF_BUCKETS || OVF_BUCKETS < 2) $fatal(1, "srnic_resp_tx: OVF_BUCKETS must be a power of two >= 2");

  localparam int L  = TRACK + 1;          // lists: 0..TRACK-1 per tracked QP, TRACK untracked
  localparam int LW = $clog2(L);
  localparam int PW = $clog2(DEPTH);
  initial if ((1 << PW) != DEPTH) $fatal(1, "srnic_resp_tx: DEPTH must be a power of two");

  srnic_pkg::resp_task_t t, stage;         // t: the head task of the list being served
  typedef struct packed {      // what the ACK queue keeps of a task
    logic [srnic_pkg::GEN_W-1:0] gen;
    logic [QW-1:0] qpn;
    logic [23:0]   psn;
    logic [7:0]    syndrome;
    logic [23:0]   msn;
  } ack_t;
  ack_t a, a_in;
  always_comb begin
    a_in.gen = stage.gen; a_in.qpn = stage.qpn; a_in.psn = stage.psn; a_in.syndrome = stage.syndrome; a_in.msn = stage.msn;
  end
  logic       t_valid, t_pop, a_valid, a_pop, stage_valid, q_ready, aq_ready;
  logic [CW-1:0] ovf_cnt [OVF_BUCKETS];   // untracked tasks in the ordered queue, per bucket

  // ------------------------------------------------------------ the ordered queue's lists
  srnic_pkg::resp_task_t buf_t [DEPTH];    // task entries
  logic [PW-1:0]    buf_nxt [DEPTH];       // next entry of the same list
  logic [DEPTH-1:0] buf_used;
  logic [PW-1:0]    l_head [L], l_tail [L];
  logic [CW-1:0]    l_cnt  [L];
  logic [31:0]      l_off  [L];            // bytes of the list's head READ already sent
  logic [23:0]      l_poff [L];            // its response packets already sent
  logic [LW-1:0]    cur;                   // the list whose head is offered
  logic [CW-1:0]    q_count;               // entries in use

  // ------------------------------------------------------------ QPs with a list
  logic [TRACK-1:0] tr_used;
  logic [QW-1:0]    tr_qpn [TRACK];
  logic             st_hit, st_free;      // the staged task's QP is in the table / a free slot
  logic [TW-1:0]    st_idx, st_fidx;
  always_comb begin
    st_hit = 1'b0; st_idx = '0; st_free = 1'b0; st_fidx = '0;
    for (int i = TRACK - 1; i >= 0; i--) begin
      if (tr_used[i] && tr_qpn[i] == stage.qpn) begin st_hit = 1'b1; st_idx = TW'(i); end
      if (!tr_used[i]) begin st_free = 1'b1; st_fidx = TW'(i); end
    end
  end
  // where the staged task goes: the ordered queue (a READ, its QP has tasks there, or untracked
  // tasks are there), else the ACK queue; with no table slot for its QP it goes untracked
  wire [BW-1:0] st_bkt = stage.qpn[BW-1:0];
  wire [CW-1:0] st_bkt_cnt = ovf_cnt[st_bkt];
  // ordered-queue slots: in the queue (q_count) and reserved by the RX engine (resv)
  logic [CW-1:0] resv;
  wire [31:0] q_held  = 32'(q_count) + 32'(resv);
  assign resv_room    = q_held < DEPTH;
  wire   q_room_def   = q_held + 32'(resv_take) + HEAD < DEPTH;
  wire st_def = srnic_pkg::resp_deferrable(stage.is_read, stage.syndrome);
  // a reserved task goes to the ordered queue when the ACK queue has no room for it
  wire to_ord = stage.is_read || st_hit || st_bkt_cnt != '0 || (!st_def && !aq_ready);
  wire push_o = stage_valid && to_ord && (st_def ? q_room_def : q_ready);
  // untracked: no table slot, or earlier untracked tasks of its bucket (it goes behind them)
  wire ovf_in = !st_hit && (!st_free || st_bkt_cnt != '0);
  wire [LW-1:0] push_l = ovf_in ? LW'(TRACK) : st_hit ? LW'(st_idx) : LW'(st_fidx);
  wire push_a = stage_valid && !to_ord && aq_ready;
  wire push   = push_o || push_a;

  wire  s_def = srnic_pkg::resp_deferrable(s_task.is_read, s_task.syndrome);
  wire  s_ack = !s_task.is_read && s_task.syndrome == srnic_pkg::AETH_ACK;
  wire  merge = stage_valid && !stage.is_read && stage.syndrome == srnic_pkg::AETH_ACK && s_ack &&
                stage.qpn == s_task.qpn;
  wire  take  = !stage_valid || push || merge;   // the task enters the stage
  // a task that cannot enter is deferred if it may be; a reserved one evicts the staged task
  // instead (which is then deferrable: a reserved staged task always moves)
  wire  defer = s_valid && !take && s_def;
  wire  evict = s_valid && !take && !s_def;
  assign s_ready = 1'b1;
  always_ff @(posedge clk) begin
    if (rst) stage_valid <= 1'b0;
    else if (s_valid) stage_valid <= 1'b1;   // taken, or the staged task stays
    else if (push) stage_valid <= 1'b0;
    if (s_valid && (take || evict)) stage <= s_task;
  end
  always_ff @(posedge clk) begin
    if (rst) resv <= '0;
    else resv <= resv + CW'(resv_take) - CW'(resv_rel) - CW'(push && !st_def);
  end
  logic [ACW-1:0] aq_count;
  // a free entry (the lowest), one push and one pop per cycle
  logic [PW-1:0] fr_idx;
  always_comb begin
    fr_idx = '0;
    for (int e = DEPTH - 1; e >= 0; e--) if (!buf_used[e]) fr_idx = PW'(e);
  end
  assign q_ready = q_count != CW'(DEPTH);
  wire [PW-1:0] pop_e   = l_head[cur];
  wire          pop_ovf = cur == LW'(TRACK);
  wire [BW-1:0] t_bkt   = t.qpn[BW-1:0];
  wire [CW-1:0] t_bkt_cnt = ovf_cnt[t_bkt];
  always_ff @(posedge clk) begin
    if (push_o) begin
      buf_t[fr_idx] <= stage;
      if (l_cnt[push_l] != '0 && !(t_pop && cur == push_l && l_cnt[push_l] == CW'(1)))
        buf_nxt[l_tail[push_l]] <= fr_idx;
    end
    if (rst) begin
      buf_used <= '0; q_count <= '0;
      for (int k = 0; k < L; k++) l_cnt[k] <= '0;
    end else begin
      q_count <= q_count + CW'(push_o) - CW'(t_pop);
      if (t_pop) buf_used[pop_e] <= 1'b0;
      if (push_o) buf_used[fr_idx] <= 1'b1;
      for (int k = 0; k < L; k++) begin
        l_cnt[k] <= l_cnt[k] + CW'(push_o && push_l == LW'(k)) - CW'(t_pop && cur == LW'(k));
        // the head moves on at a pop; an empty list (or one emptied now) gets the new entry
        if (push_o && push_l == LW'(k) && (l_cnt[k] == '0 || (t_pop && cur == LW'(k) && l_cnt[k] == CW'(1))))
          l_head[k] <= fr_idx;
        else if (t_pop && cur == LW'(k))
          l_head[k] <= buf_nxt[l_head[k]];
        if (push_o && push_l == LW'(k)) l_tail[k] <= fr_idx;
      end
    end
  end
  always_ff @(posedge clk) begin
    for (int b = 0; b < OVF_BUCKETS; b++) begin
      if (rst) ovf_cnt[b] <= '0;
      else ovf_cnt[b] <= ovf_cnt[b] + CW'(push_o && ovf_in && st_bkt == BW'(b)) - CW'(t_pop && pop_ovf && t_bkt == BW'(b));
    end
  end
  sync_fifo #(.WIDTH($bits(a)), .DEPTH(ADEPTH)) u_aq (
    .clk, .rst, .s_data(a_in), .s_valid(push_a), .s_ready(aq_ready),
    .m_data(a), .m_valid(a_valid), .m_ready(a_pop), .count(aq_count));

  // ------------------------------------------------------------ deferred ACKs
  logic [NUM_QPS-1:0] owed;         // the QP is in the owed FIFO
  logic [AW-1:0]      ow_head;
  logic               ow_valid, rack_pend;
  wire  [AW-1:0]      d_qpn   = evict ? stage.qpn[AW-1:0] : s_task.qpn[AW-1:0];
  wire                ow_pop  = rack_valid && rack_ready;
  // a QP popped in this cycle may be owed again at once (its new answer came after the event)
  wire                ow_push = (defer || evict) && (!owed[d_qpn] || (ow_pop && rack_qpn == d_qpn));
  assign ack_deferred = defer || evict;
  sync_fifo #(.WIDTH(AW), .DEPTH(NUM_QPS)) u_owed (
    .clk, .rst, .s_data(d_qpn), .s_valid(ow_push), .s_ready(),
    .m_data(ow_head), .m_valid(ow_valid), .m_ready(ow_pop), .count());
  always_ff @(posedge clk) begin
    // (one bit per QP: a reset value as wide as NUM_QPS is what is meant)
    /* verilator lint_off WIDTHCONCAT */
    if (rst) owed <= '0;
    /* verilator lint_on WIDTHCONCAT */
    else begin
      if (ow_pop) owed[rack_qpn] <= 1'b0;
      if (ow_push) owed[d_qpn] <= 1'b1;
    end
  end
  // An owed QP is offered while both queues have room for its answer (it goes to the ordered
  // queue if its QP has tasks there); the offer is held until the RX engine takes it (if the
  // room is gone by then, the answer is deferred again).
  wire room = 32'(aq_count) + 32'd2 <= ADEPTH && q_held + HEAD + 2 <= DEPTH;
  always_ff @(posedge clk) begin
    if (rst) rack_pend <= 1'b0;
    else if (ow_pop) rack_pend <= 1'b0;
    else if (ow_valid && room) rack_pend <= 1'b1;
  end
  assign rack_valid = rack_pend && ow_valid;
  assign rack_qpn   = ow_head;

  // a table slot is taken by the first task of its QP and freed when its list empties
  always_ff @(posedge clk) begin
    if (rst) tr_used <= '0;
    else begin
      for (int i = 0; i < TRACK; i++) begin
        if (push_o && !ovf_in && !st_hit && st_fidx == TW'(i)) begin
          tr_used[i] <= 1'b1; tr_qpn[i] <= stage.qpn;
        end else if (t_pop && cur == LW'(i) && l_cnt[i] == CW'(1) && !(push_o && push_l == LW'(i))) begin
          tr_used[i] <= 1'b0;
        end
      end
    end
  end

  // ------------------------------------------------------------ packets
  // The ACK queue goes first at every packet boundary; then the lists take turns, one packet
  // each (rr: the list after the one served last). A job offered and not taken stays offered
  // (lock_t holds a list's job against an ACK or another list's task that arrives meanwhile).
  logic          lock_t;
  logic [LW-1:0] rr, lock_l, pick, pick_hi, pick_lo;
  logic          pick_v, hi_v;
  always_comb begin
    // the first non-empty list at or after rr, else the first one
    pick_hi = '0; pick_lo = '0; hi_v = 1'b0; pick_v = 1'b0;
    for (int k = L - 1; k >= 0; k--) begin
      if (l_cnt[k] != '0) begin
        pick_lo = LW'(k); pick_v = 1'b1;
        if (LW'(k) >= rr) begin pick_hi = LW'(k); hi_v = 1'b1; end
      end
    end
    pick = hi_v ? pick_hi : pick_lo;
  end
  assign cur     = lock_t ? lock_l : pick;
  assign t_valid = lock_t || pick_v;
  assign t       = buf_t[l_head[cur]];
  wire  [31:0] off     = l_off[cur];
  wire  [23:0] psn_off = l_poff[cur];
  wire  [12:0] mtu_b   = srnic_pkg::mtu_bytes(t.mtu);
  wire  [31:0] remain  = t.len - off;
  wire         is_last = remain <= {19'd0, mtu_b};
  wire         is_first = off == 32'd0;
  wire  [12:0] plen    = is_last ? remain[12:0] : mtu_b;
  wire         use_a   = a_valid && !lock_t;

  always_comb begin
    job = '0;
    if (use_a) begin
      job.gen      = a.gen;
      job.qpn      = a.qpn;
      job.aeth_msn = a.msn;
      job.opcode   = srnic_pkg::OP_ACK;
      job.psn      = a.psn;
      job.aeth_syn = a.syndrome;
    end else begin
      job.gen = t.gen;
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
    if (rst) begin
      lock_t <= 1'b0; lock_l <= '0; rr <= '0;
    end else begin
      lock_t <= job_valid && !job_ready && !use_a;
      lock_l <= cur;
      if (fire_t) rr <= (cur == LW'(L - 1)) ? '0 : cur + LW'(1);
    end
  end
  // READ segmentation, per list (the list's head READ)
  always_ff @(posedge clk) begin
    if (rst) begin
      for (int k = 0; k < L; k++) begin l_off[k] <= '0; l_poff[k] <= '0; end
    end else if (fire_t && t.is_read) begin
      if (is_last) begin l_off[cur] <= '0; l_poff[cur] <= '0; end
      else begin l_off[cur] <= off + {19'd0, plen}; l_poff[cur] <= psn_off + 24'd1; end
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
    for (int i = 0; i < TRACK; i++) if (cur == LW'(i) && tr_used[i] && tr_qpn[i] == t.qpn) head_tracked = 1'b1;
  end
  a_head_tracked: assert property (@(posedge clk) disable iff (rst)
    t_valid && cur != LW'(TRACK) |-> head_tracked)
    else $error("srnic_resp_tx: list %0d's head QP %0d is not the QP of its table slot", cur, t.qpn);
  a_ovf_count: assert property (@(posedge clk) disable iff (rst)
    t_valid && cur == LW'(TRACK) |-> t_bkt_cnt != '0)
    else $error("srnic_resp_tx: an untracked task in the ordered queue is not counted");
  logic [31:0] cnt_sum;
  logic        slot_bad;
  always_comb begin
    cnt_sum = '0; slot_bad = 1'b0;
    for (int k = 0; k < L; k++) cnt_sum = cnt_sum + 32'(l_cnt[k]);
    for (int i = 0; i < TRACK; i++) slot_bad = slot_bad || (tr_used[i] != (l_cnt[i] != '0));
  end
  a_list_counts: assert property (@(posedge clk) disable iff (rst)
    cnt_sum == 32'(q_count) && !slot_bad)
    else $error("srnic_resp_tx: list counts (%0d) disagree with the entries in use (%0d), or a table slot with its list", cnt_sum, q_count);
  a_ack_queue_alone: assert property (@(posedge clk) disable iff (rst)
    push_a |-> st_bkt_cnt == '0 && !st_hit)
    else $error("srnic_resp_tx: an ACK/NAK entered the ACK queue while its QP or an untracked task of its bucket was in the ordered queue");
  a_owed_fifo: assert property (@(posedge clk) disable iff (rst)
    ow_push |-> u_owed.s_ready)
    else $error("srnic_resp_tx: the owed-ACK FIFO overflowed (a QP in it twice)");
  a_rack_hold: assert property (@(posedge clk) disable iff (rst)
    rack_valid && !rack_ready |=> rack_valid && $stable(rack_qpn))
    else $error("srnic_resp_tx: re-ACK event withdrawn or changed before it was taken");
  a_defer_deferrable: assert property (@(posedge clk) disable iff (rst)
    defer |-> s_def)
    else $error("srnic_resp_tx: a READ, RNR or fatal NAK task was deferred");
  a_evict_deferrable: assert property (@(posedge clk) disable iff (rst)
    evict |-> stage_valid && st_def)
    else $error("srnic_resp_tx: a staged READ, RNR or fatal NAK task was evicted");
  a_reserved_moves: assert property (@(posedge clk) disable iff (rst)
    stage_valid && !st_def |-> push)
    else $error("srnic_resp_tx: a READ, RNR or fatal NAK task of QP %0d found no room (reservation broken)", stage.qpn);
  a_resv_bound: assert property (@(posedge clk) disable iff (rst)
    q_held <= DEPTH && 32'(resv) + 32'(resv_take) >= 32'(resv_rel) + 32'(push && !st_def) &&
    !(resv_take && !resv_room))
    else $error("srnic_resp_tx: ordered-queue reservations out of balance (%0d queued, %0d reserved)", q_count, resv);
  a_ack_not_ordered: assert property (@(posedge clk) disable iff (rst)
    push_a |-> !st_hit && !stage.is_read)
    else $error("srnic_resp_tx: a task of QP %0d passed its ordered tasks", stage.qpn);
`endif
endmodule
`default_nettype wire
