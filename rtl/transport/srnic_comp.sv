// srnic_comp: requester completion engine. Send-queue completions need the WQEs, which
// stay in host memory: nothing about outstanding WQEs is kept on chip except, per QP,
// the index of the oldest incomplete WQE and its first PSN. For each event it fetches
// the WQEs from that index that the event can cover, recomputes each WQE's PSN range from
// its length and the path MTU, and walks them:
//   ACKS(psn, psn2)  (merged by srnic_comp_coalesce) completes SEND/WRITE WQEs whose last
//                    PSN is covered by the newest ACK or READ response, and READ WQEs
//                    whose data is placed (last PSN <= psn2); it stops at the first
//                    WQE not yet covered, and fetches more WQEs while whole runs
//                    complete;
//   ACKS with a retry episode (has_rt, from the RX engine, merged behind its ACKs): after
//                    the ACKs, everything before rt_psn counts as acknowledged and the
//                    first incomplete WQE is where the send path resends from (go-back-N):
//                    the WQE holding rt_psn at its byte offset, or the first PSN of a READ
//                    before rt_psn that got no (or not all) responses; a local ACK timeout
//                    resends the oldest incomplete WQE from its start, if anything was
//                    sent. Each episode uses one retry (rnr_retry for RNR NAKs, retry_cnt
//                    otherwise; 7 = no limit; a WQE completed successfully restores both),
//                    except the end of an RNR wait (a timeout marked RTC_RNR_END, also sent
//                    when the send path found a reused WQE slot), which uses none, always
//                    moves the send state to the start of the oldest incomplete WQE, and
//                    whose answer is marked up (the send path unparks the QP);
//                    when none is left the WQE completes with RETRY_EXC_ERR or
//                    RNR_RETRY_EXC_ERR and the QP fails like on a fatal NAK. Every episode
//                    gets exactly one answer on rw_* (apply = 0 when nothing is resent), which
//                    the send path applies and passes on to the RX engine;
//   NAK(psn, st)     completes the WQEs before psn, then the one holding psn with st, and
//                    stops the QP's send side, whose WQEs are then flushed (see LERR);
//   LERR(psn, st, pi) the send path stopped at a WQE it cannot execute (malformed, local
//                    protection); it is completed with st as soon as every WQE before it
//                    is (now, or on a later ACK walk), and every WQE after it, up to the
//                    producer index pi, with WR_FLUSH_ERR (later LERRs raise pi);
//   HERR(pi)         the host moved the QP to ERR (the send path is stopped): every WQE
//                    not yet completed, up to pi, completes with WR_FLUSH_ERR at once, also
//                    those sent and not yet acknowledged; herr_done tells the CSR.
// Successful unsignaled WQEs produce no CQE; failed ones always do.
// The first WQE of a QP to complete in error (a fatal NAK, retries exhausted, or the
// WQE the send path refused) moves the QP to the error state: besides stopping the send
// side, the RX engine is told (qerr) so the QP's receive side stops too and its receive
// queue is flushed.
//
// Pipeline. No step of the engine waits for a host read while another QP has work: an
// issue stage takes an event, reads the QP's state and asks for the WQEs, and a walk stage
// completes them when they arrive; up to CTXS events (of different QPs) are between the two.
// The WQE reads of one AXI ID return in order, so the walk stage takes the events in the
// order their reads were made. One QP has at most one event in the pipeline (its state is
// locked from the issue stage's read to the walk stage's write-back); busy_qpn/busy tell
// srnic_comp_coalesce which QPs to hold back, so their ACKs keep merging meanwhile.
// Run size: an event can complete at most (its PSN - the oldest WQE's first PSN + 1) WQEs,
// each WQE using at least one PSN; the issue stage reads that many, at most MAX_RUN, never
// across the ring end (a walk that completes a whole run fetches the next). WQE beats land
// in a FETCH_BEATS-deep FIFO: an event is taken only when MAX_RUN beats of it are free, the
// unused part is returned once the run is sized, and the rest when the event is done
// (a continuation reuses its event's share), so RREADY never waits and a walk never waits
// for the issue stage while holding beats another event needs.
`default_nettype none
module srnic_comp #(
  parameter int NUM_QPS     = 16384,
  parameter int CTXS        = 8,     // events in the pipeline (of different QPs)
  // one QP has one event in flight, so MAX_RUN WQEs per WQE read bound its completion rate
  // (decision 76): 32 per 1.1 us read is about 25 M/s
  parameter int MAX_RUN     = 32,    // WQEs one fetch reads at most
  parameter int FETCH_BEATS = 128    // WQE beat FIFO (reads outstanding plus beats waiting)
) (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic         qp_cmd_valid,
  input  var srnic_pkg::qp_cmd_t qp_cmd,
  output logic              qp_cmd_ready,
  input  wire logic         ev_valid,
  input  var srnic_pkg::comp_ev_t ev_in,
  output logic              ev_ready,
  // is busy_qpn's QP in the pipeline? (srnic_comp_coalesce holds its merged ACKs back)
  input  wire logic [srnic_pkg::QPN_W-1:0] busy_qpn,
  output logic              busy,
  // WQE reads (AXI ID 3)
  output logic              ar_valid,
  output logic [63:0]       ar_addr,
  output logic [7:0]        ar_len,
  input  wire logic         ar_ready,
  input  wire logic         r_valid,
  input  wire logic [511:0] r_data,
  // after a fatal NAK: stop the QP's send side (it then reports its WQEs for flushing)
  output logic              stop_valid,
  output logic [15:0]       stop_qpn,
  output logic [srnic_pkg::GEN_W-1:0] stop_gen,   // the incarnation of the event behind it
  input  wire logic         stop_ready,
  // the QP entered the error state: stop its receive side and flush its receive queue
  output logic              qerr_valid,
  output logic [15:0]       qerr_qpn,
  output logic [srnic_pkg::GEN_W-1:0] qerr_gen,
  input  wire logic         qerr_ready,
  output logic              qerr_owed,     // a qerr waits to enter the qerr queue (owed_fifo)
  output logic              stop_owed,     // a stop waits to enter the stop queue
  output logic              herr_done,     // a HERR event was taken (flush begun, qerr queued)
  // the answer to each retry episode, for the send path
  output logic              rw_valid,
  output srnic_pkg::rewind_t rw,
  input  wire logic         rw_ready,
  // is a READ response of rx_rdq_qpn in the RX engine, maybe still being placed (the RX
  // engine answers combinationally)
  output logic [$clog2(NUM_QPS)-1:0] rx_rdq_qpn,
  input  wire logic         rx_rd_busy,
  // send completions
  output logic              cqe_valid,
  output srnic_pkg::cqe_req_t cqe,
  input  wire logic         cqe_ready,
  output logic              walk_busy,  // the walk stage holds an event (performance counter)
  // QP incarnations (srnic_qp_gen, decision 109): an event made for an earlier incarnation of
  // its QP is dropped unread (stale_drop); what an event leads to (a rewind, a stop, a qerr)
  // carries the event's incarnation.
  output logic [$clog2(NUM_QPS)-1:0] gen_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_cur,
  output logic              stale_drop
);
  localparam int AW = $clog2(NUM_QPS);
  localparam int SW = $clog2(CTXS);
  localparam int RW = $clog2(MAX_RUN) + 1;      // 0..MAX_RUN
  localparam int BW = $clog2(FETCH_BEATS) + 1;  // 0..FETCH_BEATS
  initial begin
    if (CTXS < 2 || (1 << SW) != CTXS) $fatal(1, "srnic_comp: CTXS must be a power of two >= 2");
    if (MAX_RUN < 8 || (1 << (RW - 1)) != MAX_RUN) $fatal(1, "srnic_comp: MAX_RUN must be a power of two >= 8");
    if (FETCH_BEATS < MAX_RUN || (1 << (BW - 1)) != FETCH_BEATS)
      $fatal(1, "srnic_comp: FETCH_BEATS must be a power of two >= MAX_RUN");
  end

  typedef struct packed {
    logic [63:0] sq_base;
    logic [3:0]  log_sq;
    logic [2:0]  mtu;
    logic [15:0] send_cqn;
    logic [2:0]  retry_cnt;
    logic [2:0]  rnr_retry;
  } ccfg_t;
  typedef struct packed {
    logic        flushing;    // the bad WQE is done: WQEs up to fl_pi complete WR_FLUSH_ERR
    logic [15:0] fl_pi;
    logic        err_valid;   // a bad WQE starts at err_psn
    logic [23:0] err_psn;
    logic [7:0]  err_status;
    logic [15:0] ci;
    logic [23:0] psn;
    logic [2:0]  retry_left;  // retries left in this run of failures (retry_cnt, rnr_retry)
    logic [2:0]  rnr_left;
    logic        rdr_v;       // the head WQE is a READ placed in order up to rdr (exclusive):
    logic [23:0] rdr;         // every later episode at it re-reads from rdr, never before
  } cst_t;
  ccfg_t cmd_cfg;
  cst_t  cmd_st;
  localparam int CFG_W = $bits(cmd_cfg);
  localparam int ST_W  = $bits(cmd_st);
  always_comb begin
    cmd_cfg.sq_base = qp_cmd.sq_base; cmd_cfg.log_sq = qp_cmd.log_sq; cmd_cfg.mtu = qp_cmd.mtu;
    cmd_cfg.send_cqn = qp_cmd.send_cqn;
    cmd_cfg.retry_cnt = qp_cmd.retry_cnt; cmd_cfg.rnr_retry = qp_cmd.rnr_retry;
    cmd_st = '0; cmd_st.psn = qp_cmd.sq_psn;
    cmd_st.retry_left = qp_cmd.retry_cnt; cmd_st.rnr_left = qp_cmd.rnr_retry;
  end
  typedef enum logic {K_CFG, K_ST} kstate_e;
  kstate_e kst;
  logic cfg_ext_ready, st_ext_ready;
  wire need_st = qp_cmd.init_idx || qp_cmd.init_sq_psn;
  wire cfg_ext = qp_cmd_valid && kst == K_CFG;
  wire st_ext  = qp_cmd_valid && kst == K_ST;
  assign qp_cmd_ready = qp_cmd_valid && ((kst == K_CFG && cfg_ext_ready && !need_st) || (kst == K_ST && st_ext_ready));
  always_ff @(posedge clk) begin
    if (rst) kst <= K_CFG;
    else if (qp_cmd_ready) kst <= K_CFG;
    else if (cfg_ext && cfg_ext_ready) kst <= K_ST;
  end

  // ------------------------------------------------------------------ QP state slices
  logic rd_req, cfg_ready, st_ready, cfg_v, st_v, st_wr;
  logic [AW-1:0]    st_wr_qpn;
  cst_t             st_wr_data;
  logic [CFG_W-1:0] cfg_rsp;
  logic [ST_W-1:0]  st_rsp;
  srnic_qpc_ram #(.WIDTH(CFG_W), .NUM_QPS(NUM_QPS)) u_cfg (
    .clk, .rst, .req_valid(rd_req), .req_ready(cfg_ready), .req_qpn(ev_in.qpn[AW-1:0]), .req_lock(1'b0),
    .rsp_valid(cfg_v), .rsp_data(cfg_rsp),
    .wr_valid(1'b0), .wr_qpn('0), .wr_data('0), .wr_unlock(1'b0),
    .ext_valid(cfg_ext), .ext_ready(cfg_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_cfg));
  // the state of a QP with an event in the pipeline is locked: a QP command waits for it
  srnic_qpc_ram #(.WIDTH(ST_W), .NUM_QPS(NUM_QPS), .LOCKS(CTXS)) u_st (
    .clk, .rst, .req_valid(rd_req), .req_ready(st_ready), .req_qpn(ev_in.qpn[AW-1:0]), .req_lock(1'b1),
    .rsp_valid(st_v), .rsp_data(st_rsp),
    .wr_valid(st_wr), .wr_qpn(st_wr_qpn), .wr_data(st_wr_data), .wr_unlock(1'b1),
    .ext_valid(st_ext), .ext_ready(st_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_st));
  cst_t st_q;
  assign st_q = st_rsp;

  // ------------------------------------------------------------------ pipeline slots
  // One slot per event between taking it and its write-back; the slots are the busy set.
  logic [CTXS-1:0] sl_valid;
  logic [AW-1:0]   sl_qpn [CTXS];
  logic            in_busy, sl_free;
  logic [SW-1:0]   sl_idx;
  always_comb begin
    busy = 1'b0; in_busy = 1'b0; sl_free = 1'b0; sl_idx = '0;
    for (int i = 0; i < CTXS; i++) begin
      if (sl_valid[i] && sl_qpn[i] == busy_qpn[AW-1:0]) busy = 1'b1;
      if (sl_valid[i] && sl_qpn[i] == ev_in.qpn[AW-1:0]) in_busy = 1'b1;
      if (!sl_valid[i] && !sl_free) begin sl_free = 1'b1; sl_idx = SW'(i); end
    end
  end

  // WQE beats: reads in flight plus beats waiting for the walk. resv counts the beats held
  // by the events in the pipeline (MAX_RUN from taking an event until its run is sized).
  logic [511:0]  wq;
  logic          wq_valid, wq_pop;
  logic [BW-1:0] resv;
  sync_fifo #(.WIDTH(512), .DEPTH(FETCH_BEATS)) u_wq (
    .clk, .rst, .s_data(r_data), .s_valid(r_valid), .s_ready(),
    .m_data(wq), .m_valid(wq_valid), .m_ready(wq_pop), .count());

  // what the issue stage hands to the walk stage (in read order): {event, configuration,
  // state, slot, n}, n = WQEs read (and beats held); a flat vector (Yosys 0.23 does not take
  // a package struct inside a local struct)
  localparam int EV_W = $bits(ev_in);
  localparam int WC_W = EV_W + CFG_W + ST_W + SW + RW;

  // ACKS: SEND/WRITE WQEs are covered up to the later of the two PSNs
  function automatic logic [23:0] ack_limit(input logic [23:0] psn, input logic [23:0] psn2,
                                            input logic has_ack, input logic has_rd);
    ack_limit = !has_ack ? psn2 : !has_rd ? psn : srnic_pkg::psn_ge(psn2, psn) ? psn2 : psn;
  endfunction
  // with a retry episode other than a timeout, everything before rt_psn is acknowledged too;
  // an event without ACKs (a timeout alone) acknowledges nothing: `none` (the PSN before the
  // QP's oldest incomplete WQE)
  function automatic logic [23:0] rt_limit(input logic [23:0] psn, input logic [23:0] psn2,
                                           input logic has_ack, input logic has_rd, input logic has_rt,
                                           input logic [1:0] kind, input logic [23:0] rt_psn,
                                           input logic [23:0] none);
    logic [23:0] a, r, lim;
    a = (has_ack || has_rd) ? ack_limit(psn, psn2, has_ack, has_rd) : none;
    r = rt_psn - 24'd1;
    if (!has_rt || kind == srnic_pkg::RT_TIMEOUT) lim = a;
    else if (!has_ack && !has_rd) lim = r;
    else lim = srnic_pkg::psn_ge(r, a) ? r : a;
    rt_limit = lim;
  endfunction
  // an RNR wait ended (a timeout episode that uses no retry; its answer unparks the QP)
  function automatic logic rnr_end(input logic [1:0] kind, input logic [4:0] code);
    rnr_end = kind == srnic_pkg::RT_TIMEOUT && code == srnic_pkg::RTC_RNR_END;
  endfunction

  // ------------------------------------------------------------------ issue stage
  typedef enum logic [2:0] {I_IDLE, I_READ, I_HERR, I_SIZE, I_AR, I_WB} istate_e;
  istate_e is;
  srnic_pkg::comp_ev_t i_ev;
  ccfg_t         i_c;
  cst_t          i_s;
  logic [SW-1:0] i_slot;
  logic [RW-1:0] i_held;     // beats this event holds
  logic [15:0]   i_idx;      // next WQE to read
  logic [RW-1:0] i_left;     // WQEs still to read
  logic          ow_init;    // the owed stop / qerr bits are being cleared after reset
  logic          h_qerr;     // the HERR moves the QP to ERR (it was not failed already)
  // the walk stage hands back an event whose whole run completed and that covers more
  logic          cont_valid, cont_take;
  logic [WC_W-1:0] cont;

  wire i_herr = i_ev.kind == srnic_pkg::CEV_HERR;
  wire i_lerr = i_ev.kind == srnic_pkg::CEV_LERR;
  wire [23:0] i_lim = i_ev.kind == srnic_pkg::CEV_NAK ? i_ev.psn : rt_limit(i_ev.psn, i_ev.psn2, i_ev.has_ack, i_ev.has_rd, i_ev.has_rt, i_ev.rt_kind, i_ev.rt_psn,
                                                                  i_s.psn - 24'd1);
  wire        i_rt  = i_ev.kind == srnic_pkg::CEV_ACKS && i_ev.has_rt;
  // A host stop (HERR) is never stale: the CSR holds the QP's next command until it is taken.
  assign gen_qpn   = ev_in.qpn[AW-1:0];
  wire   ev_stale  = ev_in.gen != gen_cur && ev_in.kind != srnic_pkg::CEV_HERR;
  wire   ev_take   = is == I_IDLE && !cont_valid && ev_valid && !ev_stale && !in_busy && sl_free &&
                     resv <= BW'(FETCH_BEATS - MAX_RUN) && cfg_ready && st_ready && !ow_init;
  assign stale_drop = is == I_IDLE && !cont_valid && ev_valid && ev_stale;
  assign ev_ready  = ev_take || stale_drop;
  assign rd_req    = ev_take;
  assign cont_take = is == I_IDLE && cont_valid;

  // run size: the WQEs the event can reach, at most MAX_RUN and the beats held, never
  // across the ring end
  wire [15:0] i_size  = 16'd1 << i_c.log_sq;
  wire [15:0] i_room  = i_size - (i_s.ci & (i_size - 16'd1));
  wire        i_fl    = i_s.flushing || (i_s.err_valid && i_s.psn == i_s.err_psn);
  wire [15:0] need_fl = (i_s.fl_pi == i_s.ci) ? 16'd1 : i_s.fl_pi - i_s.ci;
  wire [23:0] need_ak = srnic_pkg::psn_ge(i_lim, i_s.psn) ? i_lim - i_s.psn + 24'd1 : 24'd1;
  // a retry episode also reads the WQE holding rt_psn (where the resend starts)
  wire [23:0] need_rt = (i_rt && i_ev.rt_kind != srnic_pkg::RT_TIMEOUT && srnic_pkg::psn_ge(i_ev.rt_psn, i_s.psn)) ?
                        i_ev.rt_psn - i_s.psn + 24'd1 : 24'd1;
  wire [23:0] need    = i_fl ? {8'd0, need_fl} : (need_rt > need_ak) ? need_rt : need_ak;
  logic [RW-1:0] run;
  always_comb begin
    run = i_held;
    if (need < 24'(run)) run = RW'(need);
    if (i_room < 16'(run)) run = RW'(i_room);
  end
  // bursts of at most 8 beats, never across 4 KiB
  wire [63:0] f_addr = i_c.sq_base + {42'd0, i_idx & (i_size - 16'd1), 6'd0};
  wire [6:0]  room4k = 7'd64 - {1'b0, f_addr[11:6]};
  logic [3:0] blen;
  always_comb begin
    blen = 4'd8;
    if (i_left < RW'(blen)) blen = 4'(i_left);
    if (room4k < 7'(blen)) blen = 4'(room4k);
  end
  assign ar_valid = is == I_AR;
  assign ar_addr  = f_addr;
  assign ar_len   = {4'd0, blen} - 8'd1;
  wire [WC_W-1:0] push_ctx = {i_ev, i_c, i_s, i_slot, run};
  logic  wf_valid, wf_pop, wf_room;
  logic [WC_W-1:0] wf_ctx;
  wire   wf_push = is == I_SIZE;
  sync_fifo #(.WIDTH(WC_W), .DEPTH(CTXS)) u_wf (
    .clk, .rst, .s_data(push_ctx), .s_valid(wf_push), .s_ready(wf_room),
    .m_data(wf_ctx), .m_valid(wf_valid), .m_ready(wf_pop), .count());

  // ------------------------------------------------------------------ walk stage
  typedef enum logic [2:0] {W_IDLE, W_WALK, W_DRAIN, W_CONT, W_WB} wstate_e;
  wstate_e ws;
  assign walk_busy = ws != W_IDLE;
  srnic_pkg::comp_ev_t ev;
  ccfg_t         c;
  cst_t          s;
  logic [SW-1:0] w_slot;
  logic [RW-1:0] n, taken;
  assign wf_pop = ws == W_IDLE && wf_valid;

  wire [7:0]  w_op    = wq[srnic_abi_pkg::SQWQE_OPCODE_OFF*8 +: 8];
  wire [7:0]  w_flags = wq[srnic_abi_pkg::SQWQE_FLAGS_OFF*8 +: 8];
  wire [31:0] w_len   = wq[srnic_abi_pkg::SQWQE_LENGTH_OFF*8 +: 32];
  wire [12:0] mtu_b   = srnic_pkg::mtu_bytes(c.mtu);
  wire [31:0] np_raw  = (w_len + {19'd0, mtu_b} - 32'd1) >> srnic_pkg::mtu_log2(c.mtu);
  wire [23:0] npkts   = (w_len == 32'd0) ? 24'd1 : np_raw[23:0];
  wire [23:0] w_last  = s.psn + npkts - 24'd1;
  wire        w_read  = w_op == srnic_abi_pkg::WR_READ;
  // a WQE the send path refuses (or a stale slot that looks like one) is never covered by an
  // ACK: its PSN range is meaningless; only its local-error event completes it
  wire        w_bad   = w_op > srnic_abi_pkg::WR_READ || w_len > srnic_pkg::MAX_MSG_BYTES;
  wire [15:0] size    = 16'd1 << c.log_sq;
  wire        is_nak  = ev.kind == srnic_pkg::CEV_NAK;
  wire        is_lerr = ev.kind == srnic_pkg::CEV_LERR;
  wire        is_herr = ev.kind == srnic_pkg::CEV_HERR;
  // head WQE is the bad one the send path refused, unless a fatal NAK of an earlier WQE
  // failed the QP first: then it is flushed like every WQE after that one
  wire        at_bad  = s.err_valid && s.psn == s.err_psn && !s.flushing;
  wire        flush   = s.flushing && s.ci != s.fl_pi;       // head WQE is to be flushed
  wire        fl_stop = s.flushing && s.ci == s.fl_pi;       // everything posted is flushed
  wire [23:0] ack_lim = rt_limit(ev.psn, ev.psn2, ev.has_ack, ev.has_rd, ev.has_rt, ev.rt_kind, ev.rt_psn,
                                  s.psn - 24'd1);
  wire [23:0] lim     = is_nak ? ev.psn : ack_lim;

  // Retry episode at the head WQE (the first one not complete): where the send path resends
  // from. A READ before rt_psn that is not complete lost responses: it is read again from its
  // first PSN (the RX engine names the first missing response PSN in rt_psn when the READ was
  // partly placed, so then rt_psn lies inside it). A timeout resends the head WQE from its
  // start if anything of it (or after it) was sent: rt_psn is the send path's next PSN.
  // A READ partly placed is never read again from before its first missing response: the
  // episode that named that PSN records it (rdr), and every later episode at the same READ,
  // timeouts included, re-reads from there at the earliest. Its responses are placed in PSN
  // order, so what lies before rdr is in memory. Without it a timeout (the re-read's own first
  // response lost) went back to the READ's start: a long READ on a lossy link then never got
  // through (every attempt lost a response somewhere), and Linux rxe, which narrows its saved
  // READ to a partial re-read's range, drops a READ from the start after one.
  logic rt_done;                       // this event's episode is answered (walk stage)
  wire  is_rt    = ev.kind == srnic_pkg::CEV_ACKS && ev.has_rt && !rt_done;
  wire  rt_tmo   = ev.rt_kind == srnic_pkg::RT_TIMEOUT;
  wire  rt_rnr   = ev.rt_kind == srnic_pkg::RT_RNR;
  wire  rt_end   = rnr_end(ev.rt_kind, ev.rt_code);
  wire  rt_in    = srnic_pkg::psn_ge(ev.rt_psn, s.psn) && srnic_pkg::psn_ge(w_last, ev.rt_psn);
  // the head WQE is complete by this event's ACKs or READ data: the episode is not at it
  // (never a malformed slot: its PSN span is meaningless and may wrap past the ACK limit)
  wire  w_acked  = !w_bad && ((!w_read && srnic_pkg::psn_ge(ack_lim, w_last)) ||
                              (w_read && ev.has_rd && srnic_pkg::psn_ge(ev.psn2, w_last)));
  // The end of an RNR wait (or a reused WQE slot found by the send path, decision 49) always
  // moves the send state to the head WQE's start: the send state may be behind it (the slot
  // it was about to read again completed meanwhile), and the head need not be posted yet.
  // A refused WQE waiting further on (err_valid) does not stop it: the WQEs before it are
  // resent (the send path leaves its stop for the rewind and refuses the WQE again); at the
  // refused WQE itself (at_bad) there is nothing to resend.
  wire  rt_here  = is_rt && !s.flushing && !at_bad && !w_acked &&
                   (rt_end || (!w_bad && (rt_tmo ? s.psn != ev.rt_psn :
                                          (rt_in || (w_read && srnic_pkg::psn_gt(ev.rt_psn, w_last))))));
  wire [23:0] rt_base = (!rt_tmo && rt_in) ? ev.rt_psn : s.psn;
  wire [23:0] rt_to   = (w_read && s.rdr_v && srnic_pkg::psn_gt(s.rdr, rt_base)) ? s.rdr : rt_base;
  wire [31:0] rt_off = {8'd0, rt_to - s.psn} << srnic_pkg::mtu_log2(c.mtu);
  wire  rt_out   = rt_rnr ? (c.rnr_retry != 3'd7 && s.rnr_left == 3'd0) :
                   (!rt_end && c.retry_cnt != 3'd7 && s.retry_left == 3'd0);
  wire  rt_fail  = rt_here && rt_out;  // no retry left: the head WQE fails
  wire fatal   = is_nak || rt_fail;     // the head WQE fails and stops the QP's send side
  // what to do with the WQE at the head of the run
  logic w_complete, w_error;
  always_comb begin
    w_complete = 1'b0; w_error = 1'b0;
    if (at_bad || flush) begin
      w_complete = 1'b1; w_error = 1'b1;
    end else if (is_lerr || is_herr || w_bad || fl_stop) begin
      w_complete = 1'b0;
    end else if (is_nak) begin
      // a fatal NAK beyond the head WQE completes it, unless it is a READ the RX engine
      // reports without all its responses (has_rd, from psn2 on): that READ fails with the
      // NAK's status (its responder will answer no re-read; decision 87)
      if (srnic_pkg::psn_ge(ev.psn, w_last) && ev.psn != w_last) begin
        w_complete = 1'b1;
        w_error    = w_read && ev.has_rd && srnic_pkg::psn_ge(w_last, ev.psn2);
      end else if (srnic_pkg::psn_ge(ev.psn, s.psn)) begin w_complete = 1'b1; w_error = 1'b1; end
    end else if (rt_fail) begin
      w_complete = 1'b1; w_error = 1'b1;
    end else begin
      w_complete = w_acked;
    end
  end
  // after a whole run, the event may cover more: the next WQE starts at or before its limit,
  // or it is the refused one (completed in error as soon as it is at the head)
  wire [23:0] next_psn = w_last + 24'd1;
  wire        more     = at_bad || flush || srnic_pkg::psn_ge(lim, next_psn) ||
                         (s.err_valid && next_psn == s.err_psn) ||
                         (is_rt && !rt_tmo && srnic_pkg::psn_ge(ev.rt_psn, next_psn));

  wire   cqe_needed = w_flags[srnic_abi_pkg::WQE_FLAG_SIGNALED] || w_error;
  wire   stop_needed = w_error && fatal && !at_bad && !flush;  // first failure on the wire
  wire   qerr_needed = at_bad || stop_needed;                  // the QP enters ERR
  // A READ that fails or is flushed completes only while no response of its QP is in the RX
  // engine: the RX engine takes a reported failure (qerr) before its next packet and then
  // drops the QP's responses, so only a response taken before that can still be placing;
  // waiting for it means no byte of the READ lands after its CQE. The RX engine never waits
  // for this engine while it places, so the wait always ends.
  // The failure a CQE reports (qerr, stop) is pushed when the CQE is first offered, so the RX
  // engine takes no packet between the offer and the failure (it waits for qerr_valid and
  // qerr_owed); an offered CQE stays offered until it is taken (offered).
  logic  offered;
  assign rx_rdq_qpn = ev.qpn[AW-1:0];
  wire   rd_hold  = w_read && w_error && rx_rd_busy && !offered;
  wire   walk_go  = (!cqe_needed || cqe_ready) && !rd_hold;
  assign wq_pop   = (ws == W_WALK && wq_valid && w_complete && walk_go) ||
                    (ws == W_DRAIN && wq_valid);
  assign cqe_valid = ws == W_WALK && wq_valid && w_complete && cqe_needed && !rd_hold;
  wire   first_offer = cqe_valid && !offered;
  always_comb begin
    cqe = '0;
    cqe.gen      = ev.gen;
    cqe.cqn      = c.send_cqn;
    cqe.wr_id    = wq[srnic_abi_pkg::SQWQE_WR_ID_OFF*8 +: 64];
    cqe.byte_len = w_len;
    cqe.qpn      = srnic_pkg::QPN_W'(ev.qpn);
    cqe.wqe_idx  = s.ci;
    cqe.opcode   = w_read ? srnic_abi_pkg::WC_RDMA_READ :
                   (w_op == srnic_abi_pkg::WR_SEND || w_op == srnic_abi_pkg::WR_SEND_IMM) ? srnic_abi_pkg::WC_SEND :
                   srnic_abi_pkg::WC_RDMA_WRITE;
    cqe.status   = at_bad ? s.err_status : flush ? srnic_abi_pkg::WC_WR_FLUSH_ERR :
                   (w_error && rt_fail) ? (rt_rnr ? srnic_abi_pkg::WC_RNR_RETRY_EXC_ERR : srnic_abi_pkg::WC_RETRY_EXC_ERR) :
                   w_error ? ev.status : srnic_abi_pkg::WC_SUCCESS;
  end
  assign cont = {ev, c, s, w_slot, n};
  assign cont_valid = ws == W_CONT;

  // The answer to a retry episode: decided at the head WQE in the walk (rw_d), else none
  // (apply = 0) at the write-back. One per episode; a write-back that owes one waits for room.
  srnic_pkg::rewind_t rw_d, rw_in;
  logic rw_in_ready, rw_push;
  wire  w_owes = ev.kind == srnic_pkg::CEV_ACKS && ev.has_rt;
  wire  i_owes = i_ev.kind == srnic_pkg::CEV_ACKS && i_ev.has_rt;
  // state write-back: the walk stage's, else the issue stage's (an event that needs no read)
  wire w_wb = ws == W_WB && (!w_owes || rw_in_ready);
  wire i_wb = is == I_WB && !w_wb && (!i_owes || rw_in_ready);
  always_comb begin
    rw_in = '0;
    if (w_wb) begin
      rw_in = rt_done ? rw_d : '0;
      // an RNR wait's end whose merged ACKs completed the whole run (the walk never read the
      // next WQE) still moves the send state to the head: the WQE after the run, from its start
      // (unless the head is the refused WQE)
      if (!rt_done && rnr_end(ev.rt_kind, ev.rt_code) && !s.flushing && !(s.err_valid && s.psn == s.err_psn)) begin
        rw_in.apply = 1'b1; rw_in.ci = s.ci; rw_in.off = '0; rw_in.psn = s.psn;
        rw_in.code = ev.rt_code;
      end
      rw_in.gen = ev.gen;
      rw_in.qpn = srnic_pkg::QPN_W'(ev.qpn);
      rw_in.up  = rnr_end(ev.rt_kind, ev.rt_code);
    end else begin
      rw_in.gen = i_ev.gen;
      rw_in.qpn = srnic_pkg::QPN_W'(i_ev.qpn);
      rw_in.up  = rnr_end(i_ev.rt_kind, i_ev.rt_code);
    end
  end
  assign rw_push = (w_wb && w_owes) || (i_wb && i_owes);
  sync_fifo #(.WIDTH($bits(rw_in)), .DEPTH(4)) u_rw (
    .clk, .rst, .s_data(rw_in), .s_valid(rw_push), .s_ready(rw_in_ready),
    .m_data(rw), .m_valid(rw_valid), .m_ready(rw_ready), .count());
  assign st_wr      = w_wb || i_wb;
  assign st_wr_qpn  = w_wb ? ev.qpn[AW-1:0] : i_ev.qpn[AW-1:0];
  assign st_wr_data = w_wb ? s : i_s;

  // Stops and qerrs never make the engine wait (decision 110): their consumers, the send path
  // and the RX engine, may themselves wait for room in srnic_comp_coalesce, which only this
  // engine drains. A QP gets at most one stop and one qerr per incarnation, so owed_fifo keeps
  // what its 16-entry queues cannot take as one owed bit per QP and queue (with the
  // incarnation) and sweeps it in when they have room. A HERR's qerr waits for a cycle in
  // which the walk pushes nothing.
  logic       walk_qerr, herr_push, ow_valid;
  logic [1:0] ow_kinds, ow_m_valid, ow_m_ready, ow_pending;
  logic [2*AW-1:0] ow_m_idx;
  logic [2*srnic_pkg::GEN_W-1:0] ow_m_tag;
  assign walk_qerr = first_offer && qerr_needed;
  assign herr_push = is == I_HERR && h_qerr && !walk_qerr;
  assign herr_done = is == I_HERR && (!h_qerr || herr_push);
  assign ow_valid  = walk_qerr || herr_push;
  assign ow_kinds  = walk_qerr ? {1'b1, stop_needed} : 2'b10;   // {qerr, stop}
  owed_fifo #(.NUM(NUM_QPS), .K(2), .TAGW(srnic_pkg::GEN_W), .DEPTH(16), .LANES(NUM_QPS >= 32 ? 16 : NUM_QPS / 2)) u_owed (
    .clk, .rst, .s_valid(ow_valid), .s_idx(walk_qerr ? ev.qpn[AW-1:0] : i_ev.qpn[AW-1:0]),
    .s_tag(walk_qerr ? ev.gen : i_ev.gen), .s_kinds(ow_kinds),
    .m_valid(ow_m_valid), .m_idx(ow_m_idx), .m_tag(ow_m_tag), .m_ready(ow_m_ready),
    .pending(ow_pending), .init_busy(ow_init));
  assign stop_valid = ow_m_valid[0];
  assign stop_qpn   = 16'(ow_m_idx[0 +: AW]);
  assign stop_gen   = ow_m_tag[0 +: srnic_pkg::GEN_W];
  assign qerr_valid = ow_m_valid[1];
  assign qerr_qpn   = 16'(ow_m_idx[AW +: AW]);
  assign qerr_gen   = ow_m_tag[srnic_pkg::GEN_W +: srnic_pkg::GEN_W];
  assign ow_m_ready = {qerr_ready, stop_ready};
  assign qerr_owed  = ow_pending[1];
  assign stop_owed  = ow_pending[0];

  // beats held: MAX_RUN taken with an event, the unused part returned when its run is
  // sized, the rest when it is written back
  wire [BW-1:0] resv_add = ev_take ? BW'(MAX_RUN) : '0;
  wire [BW-1:0] resv_rel = (is == I_SIZE ? BW'(i_held) - BW'(run) : '0) +
                           (i_wb ? BW'(i_held) : '0) + (w_wb ? BW'(n) : '0);

  always_ff @(posedge clk) begin
    if (rst) begin
      is <= I_IDLE; ws <= W_IDLE; sl_valid <= '0; resv <= '0; offered <= 1'b0;
    end else begin
      offered <= cqe_valid && !cqe_ready;
      resv <= resv + resv_add - resv_rel;
      if (ev_take) begin sl_valid[sl_idx] <= 1'b1; sl_qpn[sl_idx] <= ev_in.qpn[AW-1:0]; end
      if (i_wb) sl_valid[i_slot] <= 1'b0;
      if (w_wb) sl_valid[w_slot] <= 1'b0;
      // issue stage
      case (is)
        I_IDLE: begin
          if (cont_take) begin
            {i_ev, i_c, i_s, i_slot, i_held} <= cont;
            is <= I_SIZE;
          end else if (ev_take) begin
            i_ev <= ev_in; i_slot <= sl_idx; i_held <= RW'(MAX_RUN);
            is <= I_READ;
          end
        end
        I_READ: if (cfg_v) begin
          i_c <= cfg_rsp; i_s <= st_rsp;
          if (i_rt) begin
            // a retry episode always walks from the oldest WQE, also when a refused WQE waits
            // further on (its ACKs complete what they cover, and the WQEs before the refused
            // one are resent); a QP being flushed answers at once
            is <= st_q.flushing ? I_WB : I_SIZE;
          end else if (i_herr) begin
            // everything not completed is flushed; a refused WQE waiting for its turn is
            // flushed like the others
            i_s.err_valid <= 1'b0; i_s.flushing <= 1'b1; i_s.fl_pi <= i_ev.psn2[15:0];
            h_qerr <= !st_q.flushing;
            is <= I_HERR;
          end else if (i_lerr) begin
            // the first report names the bad WQE; every report raises the flush limit
            if (!st_q.err_valid && !st_q.flushing) begin
              i_s.err_valid <= 1'b1; i_s.err_psn <= i_ev.psn; i_s.err_status <= i_ev.status;
            end
            i_s.fl_pi <= i_ev.psn2[15:0];
            // complete now what nothing outstanding holds back
            is <= (st_q.flushing || st_q.psn == i_ev.psn) ? I_SIZE : I_WB;
          end else
            // nothing to do for an event that does not reach the oldest incomplete WQE
            is <= srnic_pkg::psn_ge(i_lim, st_q.psn) ? I_SIZE : I_WB;
        end
        I_HERR: if (herr_done) is <= (i_s.ci != i_s.fl_pi) ? I_SIZE : I_WB;
        I_SIZE: if (wf_room) begin
          i_held <= run; i_idx <= i_s.ci; i_left <= run;
          is <= I_AR;
        end
        I_AR: if (ar_ready) begin
          i_idx  <= i_idx + {12'd0, blen};
          i_left <= i_left - RW'(blen);
          if (i_left == RW'(blen)) is <= I_IDLE;
        end
        I_WB: if (i_wb) is <= I_IDLE;
        default: is <= I_IDLE;
      endcase
      // walk stage
      case (ws)
        W_IDLE: if (wf_valid) begin
          {ev, c, s, w_slot, n} <= wf_ctx;
          taken <= '0;
          rt_done <= 1'b0;
          ws <= W_WALK;
        end
        W_WALK: if (wq_valid) begin
          if (!w_complete) begin
            ws <= W_DRAIN;
            if (is_rt) begin
              // answer the episode at the head WQE: resend from rt_to, or nothing
              rt_done <= 1'b1;
              rw_d <= '0;
              if (rt_here) begin
                rw_d.apply <= 1'b1; rw_d.ci <= s.ci; rw_d.off <= rt_off; rw_d.psn <= rt_to;
                rw_d.rnr <= rt_rnr; rw_d.code <= ev.rt_code;
                if (w_read && rt_to != s.psn) begin s.rdr_v <= 1'b1; s.rdr <= rt_to; end
                if (rt_rnr) s.rnr_left <= (c.rnr_retry == 3'd7) ? 3'd7 : s.rnr_left - 3'd1;
                else if (!rt_end) s.retry_left <= (c.retry_cnt == 3'd7) ? 3'd7 : s.retry_left - 3'd1;
              end
            end
          end else if (walk_go) begin
            if (rt_fail) begin rt_done <= 1'b1; rw_d <= '0; end   // answered: nothing resent, the QP fails
            if (!w_error) begin s.retry_left <= c.retry_cnt; s.rnr_left <= c.rnr_retry; end
            taken <= taken + RW'(1);
            s.ci  <= s.ci + 16'd1;
            s.rdr_v <= 1'b0;
            // a refused or flushed WQE sent nothing: it uses no PSNs
            s.psn <= (at_bad || flush) ? s.psn : next_psn;
            if (at_bad) begin s.err_valid <= 1'b0; s.flushing <= 1'b1; end
            if (stop_needed) begin
              // fatal NAK (or lost READ responses): later WQEs are flushed once the send path
              // reports its producer index
              s.flushing <= 1'b1; s.fl_pi <= s.ci + 16'd1;
            end
            // flushing goes on through the run (and the next ones) up to the limit
            if ((w_error && !at_bad && !flush) || ((at_bad || flush) && s.ci + 16'd1 == s.fl_pi))
              ws <= (taken + RW'(1) == n) ? W_WB : W_DRAIN;
            else if (taken + RW'(1) == n) ws <= more ? W_CONT : W_WB;   // whole run done
          end
        end
        W_DRAIN: begin
          if (wq_valid) taken <= taken + RW'(1);
          if (taken == n || (wq_valid && taken + RW'(1) == n)) ws <= W_WB;
        end
        W_CONT: if (cont_take) ws <= W_IDLE;
        W_WB: if (w_wb) ws <= W_IDLE;
        default: ws <= W_IDLE;
      endcase
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{qp_cmd, wq, np_raw, st_v, ev, st_q, busy_qpn};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): legal states, WQE read held, beat budget, run walk
  // bounds, CQE held, one event per QP in the pipeline.
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    is inside {I_IDLE, I_READ, I_HERR, I_SIZE, I_AR, I_WB} && ws inside {W_IDLE, W_WALK, W_DRAIN, W_CONT, W_WB})
    else $error("srnic_comp: illegal state %0d/%0d", is, ws);
  a_ar_hold: assert property (@(posedge clk) disable iff (rst)
    ar_valid && !ar_ready |=> ar_valid && $stable(ar_addr) && $stable(ar_len))
    else $error("srnic_comp: WQE read withdrawn or changed before it was taken");
  a_ar_no_4k_cross: assert property (@(posedge clk) disable iff (rst)
    ar_valid |-> {7'd0, ar_addr[11:6]} + {5'd0, ar_len} < 13'd64 && ar_len < 8'd8)
    else $error("srnic_comp: WQE read longer than 8 beats or across a 4 KiB boundary");
  a_wq_no_overflow: assert property (@(posedge clk) disable iff (rst)
    r_valid |-> u_wq.s_ready)
    else $error("srnic_comp: WQE FIFO overflow (beats arrived that no event held room for)");
  a_resv_bound: assert property (@(posedge clk) disable iff (rst)
    resv <= BW'(FETCH_BEATS) && {1'b0, u_wq.count} <= (BW+1)'(resv))
    else $error("srnic_comp: beat budget broken (held %0d, waiting %0d)", resv, u_wq.count);
  a_walk_in_run: assert property (@(posedge clk) disable iff (rst)
    ws == W_WALK || ws == W_DRAIN |-> n >= RW'(1) && n <= RW'(MAX_RUN) && taken <= n && (ws == W_DRAIN || taken < n))
    else $error("srnic_comp: walk past the fetched run (taken %0d of %0d)", taken, n);
  a_run_sized: assert property (@(posedge clk) disable iff (rst)
    is == I_SIZE |-> run >= RW'(1) && run <= i_held)
    else $error("srnic_comp: run of %0d WQEs with %0d beats held", run, i_held);
  a_cqe_hold: assert property (@(posedge clk) disable iff (rst)
    cqe_valid && !cqe_ready |=> cqe_valid && $stable(cqe))
    else $error("srnic_comp: send CQE withdrawn or changed before it was taken");
  a_ring_flush_limit: assert property (@(posedge clk) disable iff (rst)
    ws == W_WALK && wq_valid && s.flushing |-> 16'(s.fl_pi - s.ci) <= size)
    else $error("srnic_comp: flush limit more than a ring ahead of the consumer index (QP %0d)", ev.qpn);
  logic sva_slot_dup;
  always_comb begin
    sva_slot_dup = 1'b0;
    for (int i = 0; i < CTXS; i++)
      for (int k = i + 1; k < CTXS; k++)
        if (sl_valid[i] && sl_valid[k] && sl_qpn[i] == sl_qpn[k]) sva_slot_dup = 1'b1;
  end
  a_one_event_per_qp: assert property (@(posedge clk) disable iff (rst)
    !sva_slot_dup)
    else $error("srnic_comp: two events of one QP in the pipeline");
`endif
endmodule
`default_nettype wire
