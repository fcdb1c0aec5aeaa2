// srnic_wqe_fetch: the requester's DMA engine front end. For each QP the scheduler
// hands out, it runs one scheduling turn (SRNIC §4.3.1):
//   issue stage:  read the QP's SQ configuration, send state and producer index; if the
//                 QP is in RTS and has WQEs, read up to SCHED_WQES WQEs (one 64-byte
//                 beat each, never across the ring end) from host memory;
//   plan stage:   walk the fetched WQEs in order and decide how much of each this turn
//                 sends, up to SCHED_BURST payload bytes (whole packets); a message larger
//                 than the budget continues in the next turn from the saved offset. WQEs
//                 fetched but not reached are dropped (fetch-and-drop): nothing is cached
//                 per QP;
//   emit stage:   cut the planned segments into packet jobs, one per cycle.
// Fence (WQE_FLAG_FENCE, IBA semantics): a fenced WQE is not started while a READ posted
// before it on the same QP is outstanding (planned and not yet emitted, or waiting for its
// responses in srnic_rd_ctx). The turn stops in front of it and the QP is requeued; while
// the READs are outstanding its turns end in the issue stage without reading WQEs again.
// At turn end the send state (consumer index, offset in the current WQE, next PSN) is
// written back.
// Several turns of one QP in flight (decision 75): a turn ends for the scheduler when it is
// issued (done_*), and the QP is queued again at once if WQEs beyond the ones this turn reads
// are posted. Its next turn reads the WQEs after the youngest turn of the QP in flight (the
// fetch cursor is that turn's first index plus its WQE count; nothing per QP is stored for
// it) and is planned with the send state the turn before it wrote back (forwarded into the
// turns waiting in the ring). At most TURNS_PER_QP turns of a QP are in flight. A turn that
// ends early (budget spent inside its WQEs, fence, no READ context, bad or reused WQE) marks
// the younger turns of its QP as doomed: the plan stage drops their WQEs unread
// (fetch-and-drop) and the QP is kicked to be queued again if it has work left (also when
// it stopped at a refused WQE: the WQEs the doomed turns read are reported for flushing);
// until the doomed turns are gone, the QP's turns end in the issue stage and requeue it. Stop
// requests, rewinds and commands of a QP wait until none of its turns is in flight.
// Go-back-N: the completion engine answers each retry episode with a rewind (rw_*): the QP's
// send state is held (its turns in flight end first), every segment of the QP already planned
// is emitted (jobs in the packetizer leave before any resent packet, with their PSNs), its
// READ contexts are dropped (the READs at or after the rewind PSN are requested again), and
// the send state moves back to WQE ci, offset off, PSN psn. Jobs whose PSN is below the
// highest PSN sent so far (psn_hi) are marked resend. A resend passes over what is already
// acknowledged (decision 113): the packets of a SEND or WRITE before the QP's una (read at
// issue) are not sent again, except the WQE's last packet: the WQE goes on at una
// (MIDDLE/LAST), or with its last packet alone if all of it is before una (the ACK that
// packet draws completes the WQE; the completion engine keeps no ACK that came while a READ
// before it was open). A timeout rewinds to the start of the oldest incomplete WQE and an
// episode may outlive the ACK that completes its WQEs; without this one lost tail ACK resent
// the whole message. READs are re-requested as the rewind says.
// A READ resumed inside its range is
// requested for the rest only (partial re-read: PSN, remote address and length advanced). An
// RNR answer parks the QP (turns end without work) without moving the send state (drained and
// its READ contexts dropped like a rewind) and starts its RNR wait; where to resume is decided
// when the wait ends: the RX engine opens an episode for that (decision 48), and its answer
// (marked up: a rewind, or nothing to resend) unparks the QP. Other rewinds leave a park as it
// is. Every answer, applied or not, is passed on to the RX engine (note_*), which ends the
// episode.
// In-flight cap (IRN's BDP-FC, decision 82): a QP sends at most W = tx_window packets beyond its oldest unacknowledged PSN (una, kept by srnic_tx_window and read with the rest of
// the QP's state). The plan stage cuts a turn where the window closes (whole packets; a READ
// request goes out whole if any room is left, its responses count once requested) and puts
// AckReq on the packet that fills it; the issue stage ends a turn of a QP whose window is full
// without reading WQEs and asks srnic_tx_window to kick the QP when una moves (or at once if it
// moved since it was read). AckReq also goes on every W/4-th PSN (power of two, at most 64), so
// a responder that acknowledges only on AckReq keeps the window open.
// READ contexts (decision 120): a READ is planned only with a context reserved for it. A QP
// is always granted RD_SHARE of srnic_rd_ctx's contexts (held or reserved) and takes more only
// while RD_RESERVE more stay free, so QPs whose peers answer slowly, or never (timeout 0),
// cannot take them all, and one busy QP still uses most of them. A turn that finds no context
// for its READ stops in front of it and the QP joins a wait list: until it is woken (one
// wake-up per freed context, and while contexts are free one every 256 cycles) its turns end
// in the issue stage without a WQE read, instead of re-reading its WQEs every turn.
// Issue, plan and emit stages overlap across QPs (turns of different QPs in flight), and
// WQE data space is reserved before each read so the shared AXI R channel never stalls.
`default_nettype none
module srnic_wqe_fetch #(
  parameter int NUM_QPS      = 16384,
  parameter int MAX_TURNS    = 8,     // turns in flight (ring), a power of two
  parameter int TURNS_PER_QP = 4,     // turns of one QP in flight, 1..MAX_TURNS
  parameter int RD_SHARE     = 16,    // READ contexts a QP is always granted (of srnic_rd_ctx's 64)
  parameter int RD_RESERVE   = 16,    // beyond its share a QP leaves this many contexts free
  parameter int CW_DEPTH     = 64     // QPs waiting for a READ context, a power of two
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  input  wire logic [31:0]                sched_burst,
  input  wire logic [3:0]                 sched_wqes,
  // in-flight cap (IRN's BDP-FC): at most tx_window packets beyond the oldest unacknowledged
  // PSN; 0 = no cap
  input  wire logic [31:0]                tx_window,
  // acknowledgements (an ACK, the last response of a READ): every PSN up to ack_psn
  input  wire logic                       ack_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] ack_qpn,
  input  wire logic [23:0]                ack_psn,
  output logic                            ack_ready,
  // scheduler
  input  wire logic                       s_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] s_qpn,
  output logic                            s_ready,
  // stop requests (a remote fatal NAK): the QP's send side stops and reports its WQEs for
  // flushing, without a scheduling turn
  input  wire logic                       stop_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] stop_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] stop_gen,   // the incarnation it was made for
  output logic                            stop_ready,
  // host stop (the host moved the QP to ERR): like a stop request, and the completion engine
  // is told with CEV_HERR to flush every WQE of the QP
  input  wire logic                       hstop_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] hstop_qpn,
  output logic                            hstop_ready,
  // go-back-N: rewinds from the completion engine (also the answers that end RNR waits)
  input  wire logic                       rw_valid,
  input  var srnic_pkg::rewind_t          rw,
  output logic                            rw_ready,
  // ... and what they cause: the episode ends (RX engine), the QP is queued again
  // (scheduler), its RNR wait starts (timers), its READ contexts are dropped
  output logic                            note_valid,
  output logic [$clog2(NUM_QPS)-1:0]      note_qpn,
  output logic [srnic_pkg::GEN_W-1:0]     note_gen,   // the incarnation of the answer
  input  wire logic                       note_ready,
  output logic                            kick_valid,
  output logic [$clog2(NUM_QPS)-1:0]      kick_qpn,
  input  wire logic                       kick_ready,
  output logic                            rnr_valid,
  output logic [$clog2(NUM_QPS)-1:0]      rnr_qpn,
  output logic [4:0]                      rnr_code,
  input  wire logic                       rnr_ready,
  // a WQE slot read for a resend held a newer WQE (decision 49): the QP is parked and the RX
  // engine opens an episode whose answer moves the send state to the oldest incomplete WQE
  output logic                            stale_valid,
  output logic [$clog2(NUM_QPS)-1:0]      stale_qpn,
  input  wire logic                       stale_ready,
  output logic                            rdc_rw_flush,
  output logic [$clog2(NUM_QPS)-1:0]      rdc_rw_flush_qpn,
  output logic                            done_valid,
  output logic [$clog2(NUM_QPS)-1:0]      done_qpn,
  output logic                            done_more,
  input  wire logic                       done_ready,
  // configuration and doorbells
  input  wire logic                       qp_cmd_valid,
  input  var srnic_pkg::qp_cmd_t          qp_cmd,
  output logic                            qp_cmd_ready,
  input  wire logic                       db_valid,
  input  wire logic [15:0]                db_qpn,
  input  wire logic [15:0]                db_pi,
  // WQE reads (AXI ID 0)
  output logic                            ar_valid,
  output logic [63:0]                     ar_addr,
  output logic [7:0]                      ar_len,
  // ... and what a WQE cache in front of them needs (the `cached` build, srnic_wqe_cache): the
  // QP, the running index of the first WQE read, the QP's producer index, its ring size
  output logic [$clog2(NUM_QPS)-1:0]      ar_qpn,
  output logic [15:0]                     ar_idx,
  output logic [15:0]                     ar_pi,
  output logic [3:0]                      ar_log_sq,
  // the QP's oldest unacknowledged PSN this turn plans with (a resend passes over the
  // packets before it); for benches and traces
  output logic [23:0]                     ar_una,
  input  wire logic                       ar_ready,
  input  wire logic                       r_valid,
  input  wire logic [511:0]               r_data,
  // local key check
  output logic                            mr_req,
  output logic [31:0]                     mr_key,
  output logic [3:0]                      mr_access,
  output logic [31:0]                     mr_pd,
  output logic [63:0]                     mr_va,
  output logic [31:0]                     mr_len,
  input  wire logic                       mr_rsp,
  input  wire logic                       mr_ok,
  input  wire logic [63:0]                mr_pa,
  // READ contexts: every READ request emitted is registered for its responses
  output logic                            rdc_valid,
  input  wire logic                       rdc_ready,
  output logic [23:0]                     rdc_first,
  output logic [23:0]                     rdc_last,
  output logic [63:0]                     rdc_pa,
  output logic [2:0]                      rdc_mtu,
  output logic [12:0]                     rdc_last_len,
  // fence: does the QP have READs waiting for responses (two query ports, combinational)
  output logic [$clog2(NUM_QPS)-1:0]      rdc_qa_qpn,
  input  wire logic                       rdc_qa_busy,
  output logic [$clog2(NUM_QPS)-1:0]      rdc_qb_qpn,
  input  wire logic                       rdc_qb_busy,
  input  wire logic [7:0]                 rdc_free,      // free READ contexts, one cycle late
  input  wire logic [6:0]                 rdc_qb_cnt,    // READ contexts rdc_qb_qpn holds
  input  wire logic [6:0]                 rdc_freed,     // READ contexts freed at the last edge
  // a QP reset (the incarnation advances): the QP leaves the READ context wait list
  input  wire logic                       qp_reset_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] qp_reset_qpn,
  // packet jobs
  output logic                            job_valid,
  output srnic_pkg::tx_job_t              job,
  input  wire logic                       job_ready,
  // a WQE that cannot be executed (bad opcode/length, local protection): reported to the
  // completion engine, which completes it in error once the WQEs before it are done and
  // flushes the WQEs after it (up to the reported producer index); the QP's send side stops
  // there, and WQEs posted later are reported for flushing too
  output logic                            bad_wqe,
  output logic                            lerr_valid,
  output srnic_pkg::comp_ev_t             lerr,
  input  wire logic                       lerr_ready,
  // a turn left the plan stage (performance counters, benches): planned (its send state
  // written back), or dropped unread (doomed)
  output logic                            turn_end,
  output logic                            turn_drop,
  output logic [$clog2(NUM_QPS)-1:0]      turn_qpn,
  output logic                            win_wait,   // a QP stopped for credit (window full)
  // QP incarnations (srnic_qp_gen, decision 109): a for the plan stage's QP (stamped on its
  // segments and error reports), b for the segment being cut, c for a rewind, d for a stop
  // request. A segment, rewind or stop made for an earlier incarnation is dropped (stale_drop).
  output logic [$clog2(NUM_QPS)-1:0]      gen_a_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_a,
  output logic [$clog2(NUM_QPS)-1:0]      gen_b_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_b,
  output logic [$clog2(NUM_QPS)-1:0]      gen_c_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_c,
  output logic [$clog2(NUM_QPS)-1:0]      gen_d_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_d,
  output logic                            stale_drop
);
  localparam int AW = $clog2(NUM_QPS);
  localparam int CFG_W = 64 + 4 + 3 + 3 + 32;
  localparam int ST_W  = 16 + 32 + 24 + 1 + 1 + 16 + 1 + 1 + 24;
  localparam int WBUF  = MAX_TURNS * 8;
  localparam int RW_   = $clog2(MAX_TURNS);
  localparam int FLW   = $clog2(MAX_TURNS + 2);
  initial begin
    if (MAX_TURNS < 2 || (1 << RW_) != MAX_TURNS) $fatal(1, "srnic_wqe_fetch: MAX_TURNS must be a power of two >= 2");
    if (TURNS_PER_QP < 1 || TURNS_PER_QP > MAX_TURNS) $fatal(1, "srnic_wqe_fetch: TURNS_PER_QP must be 1..MAX_TURNS");
  end

  // ------------------------------------------------------------ per-QP state RAMs
  typedef struct packed {
    logic [63:0] sq_base;
    logic [3:0]  log_sq;
    logic [2:0]  mtu;
    logic [2:0]  state;
    logic [31:0] pd;
  } sqcfg_t;
  typedef struct packed {
    logic [15:0] ci;
    logic [31:0] off;
    logic [23:0] psn;
    logic        err;    // stopped: at a bad WQE, or by a stop request
    logic        refd;   // ... at a bad WQE (refused, reported): a rewind to a WQE before it
                         // clears err (the WQEs before it are resent; it is refused again)
    logic [15:0] fl_pi;  // producer index last reported for flushing
    logic        fwait;  // the last turn stopped at a fenced WQE
    logic        park;   // RNR wait: no turn sends until the RNR timer fires
    logic [23:0] psn_hi; // the highest next PSN so far: PSNs below it are resent
  } txst_t;

  logic          rd_req;
  logic [AW-1:0] rd_qpn;
  logic          cfg_rsp_v, st_rsp_v, cfg_ready, st_ready;
  logic [CFG_W-1:0] cfg_rsp;
  logic [ST_W-1:0]  st_rsp;
  logic [15:0]   pi_rsp;
  logic          st_wr;
  logic [AW-1:0] st_wr_qpn;
  txst_t         st_wr_data;

  // command path: configuration always, send state on RESET->INIT and RTR->RTS, and to RESET
  // (decision 125): the configuration (state RESET) is written first, so no later turn reads
  // WQEs, and the command is taken once no turn of the QP is in flight; a turn issued before
  // it and planned after the incarnation advanced would stamp its jobs with the new one
  typedef enum logic [1:0] {K_CFG, K_ST, K_PI} kstate_e;
  kstate_e kst;
  sqcfg_t  cmd_cfg;
  txst_t   cmd_st;
  logic    cfg_ext_ready, st_ext_ready;
  always_comb begin
    cmd_cfg.sq_base = qp_cmd.sq_base;
    cmd_cfg.log_sq  = qp_cmd.log_sq;
    cmd_cfg.mtu     = qp_cmd.mtu;
    cmd_cfg.state   = qp_cmd.state;
    cmd_cfg.pd      = qp_cmd.pd;
    cmd_st.ci  = '0;
    cmd_st.off = '0;
    cmd_st.psn = qp_cmd.sq_psn;
    cmd_st.err = 1'b0;
    cmd_st.refd = 1'b0;
    cmd_st.fl_pi = '0;
    cmd_st.fwait = 1'b0;
    cmd_st.park = 1'b0;
    cmd_st.psn_hi = qp_cmd.sq_psn;
  end
  wire need_st = qp_cmd.init_idx || qp_cmd.init_sq_psn || qp_cmd.state == 3'(srnic_abi_pkg::QPS_RESET);
  wire cfg_ext = qp_cmd_valid && kst == K_CFG;
  logic cmd_busy;   // a turn of the command's QP is in flight or in the issue stage (below)
  logic win_init_ready;
  // the send state and the window's una are written together (una = the starting PSN)
  wire st_ext  = qp_cmd_valid && kst == K_ST && !cmd_busy && win_init_ready;
  wire st_go   = st_ext && st_ext_ready;
  assign qp_cmd_ready = qp_cmd_valid && ((kst == K_CFG && cfg_ext_ready && !need_st) ||
                                         (kst == K_ST && st_go && !qp_cmd.init_idx) ||
                                         (kst == K_PI && !db_valid));
  always_ff @(posedge clk) begin
    if (rst) kst <= K_CFG;
    else if (qp_cmd_ready) kst <= K_CFG;
    else if (kst == K_CFG && cfg_ext && cfg_ext_ready) kst <= K_ST;
    else if (kst == K_ST && st_go) kst <= K_PI;
  end

  srnic_qpc_ram #(.WIDTH(CFG_W), .NUM_QPS(NUM_QPS)) u_cfg (
    .clk, .rst, .req_valid(rd_req), .req_ready(cfg_ready), .req_qpn(rd_qpn), .req_lock(1'b0),
    .rsp_valid(cfg_rsp_v), .rsp_data(cfg_rsp),
    .wr_valid(1'b0), .wr_qpn('0), .wr_data('0), .wr_unlock(1'b0),
    .ext_valid(cfg_ext), .ext_ready(cfg_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_cfg));
  // no locks: turns of a QP are ordered by the ring below, and whatever else writes the send
  // state (stop requests, rewinds, commands) waits until no turn of the QP is in flight
  srnic_qpc_ram #(.WIDTH(ST_W), .NUM_QPS(NUM_QPS), .LOCKS(1)) u_st (
    .clk, .rst, .req_valid(rd_req), .req_ready(st_ready), .req_qpn(rd_qpn), .req_lock(1'b0),
    .rsp_valid(st_rsp_v), .rsp_data(st_rsp),
    .wr_valid(st_wr), .wr_qpn(st_wr_qpn), .wr_data(st_wr_data), .wr_unlock(1'b0),
    .ext_valid(st_ext), .ext_ready(st_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_st));
  // producer indices: doorbells, cleared on RESET->INIT
  wire pi_cmd = qp_cmd_valid && kst == K_PI && !db_valid;
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_QPS)) u_pi (
    .clk, .wr_en(db_valid || pi_cmd), .wr_addr(db_valid ? db_qpn[AW-1:0] : qp_cmd.qpn[AW-1:0]),
    .wr_data(db_valid ? db_pi : 16'd0), .rd_en(rd_req), .rd_addr(rd_qpn), .rd_data(pi_rsp));

  // the window's acknowledged PSNs (port A read with the state above)
  logic [23:0]   una_rsp;
  logic          wwait_valid, wwait_ready, wk_valid, wk_ready;
  logic [AW-1:0] wk_qpn;
  // A rewind from PSN p also tells the window that everything before p is done: a NAK
  // acknowledges what precedes its PSN, a partial re-read starts at the first READ response
  // not placed, a timeout at the oldest incomplete WQE (or where its READ was placed up to).
  // Without it a READ longer than the window that lost a response was re-read from a PSN
  // beyond the window and waited for an acknowledgement that nothing would send. The rewind's
  // acknowledgement waits in rwa (one; the next rewind waits for it) and takes the window's
  // port when the RX engine's acknowledgements leave it free.
  logic          rwa_v;
  logic [AW-1:0] rwa_qpn;
  logic [23:0]   rwa_psn;
  logic          w_ack_ready;
  wire           rwa_take = rwa_v && !ack_valid && w_ack_ready;
  assign ack_ready = w_ack_ready;
  srnic_tx_window #(.NUM_QPS(NUM_QPS)) u_win (
    .clk, .rst, .rd_en(rd_req), .rd_qpn, .rd_una(una_rsp),
    .init_valid(st_go), .init_qpn(qp_cmd.qpn[AW-1:0]), .init_psn(qp_cmd.sq_psn), .init_ready(win_init_ready),
    .ack_valid(ack_valid || rwa_v), .ack_qpn(ack_valid ? ack_qpn : rwa_qpn), .ack_psn(ack_valid ? ack_psn : rwa_psn),
    .ack_ready(w_ack_ready),
    .wait_valid(wwait_valid), .wait_qpn(iss_qpn), .wait_una(a_una), .wait_ready(wwait_ready),
    .kick_valid(wk_valid), .kick_qpn(wk_qpn), .kick_ready(wk_ready), .st_wait(win_wait));
  // the window in packets: tx_window (at most 2^22); 0: no cap (nothing below looks at the room)
  wire        win_on = tx_window != 32'd0;
  wire [23:0] win_pk = !win_on ? 24'h7F_FFFF :
                       (tx_window > 32'h40_0000) ? 24'h40_0000 : tx_window[23:0];
  // room left in the window: W minus the packets from una to psn (all of W if psn is behind
  // una, which a rewind into a partly acknowledged message can do)
  function automatic logic [23:0] win_room(input logic [23:0] psn, input logic [23:0] una,
                                           input logic [23:0] w);
    logic [23:0] d;
    d = psn - una;
    if (d[23]) win_room = w;
    else if (d >= w) win_room = 24'd0;
    else win_room = w - d;
  endfunction

  // ------------------------------------------------------------ issue stage
  typedef struct packed {
    logic [AW-1:0] qpn;
    sqcfg_t        cfg;
    txst_t         st;
    logic [3:0]    n;
    logic [15:0]   pi;
    logic          stop;    // a stop request, not a scheduler turn
    logic          host;    // the stop came from the host (QP moved to ERR)
    logic [15:0]   fs;      // index of the first WQE read
    logic          spec;    // issued while an earlier turn of the QP was in flight
    logic [23:0]   una;     // the oldest unacknowledged PSN, read at issue (may be older)
  } turn_t;

  logic          iss_busy;         // a read of the QP state is in flight
  logic [AW-1:0] iss_qpn;
  logic          iss_stop, iss_host, iss_rw;
  srnic_pkg::rewind_t iss_rwd;
  logic          seg_busy_a;              // segments of iss_qpn planned, not yet emitted
  logic          rdq_busy_a, rdq_busy_p;   // READs planned, not yet in srnic_rd_ctx (below)
  logic          ctx_push, ctx_ready, ctx_valid, ctx_pop;
  turn_t         ctx_in, ctx;
  logic          ctx_doom;                // the oldest turn in the ring is doomed
  logic [$clog2(WBUF):0] wbuf_resv;      // beats reserved (requested, not yet consumed)
  logic          idle_done;              // issue stage reports a turn with nothing to do

  // Turns in flight: the ring of issued turns (oldest first) and the plan stage's turn. Three
  // searches by QPN: the issue stage's QP (a), the QP an input wants to read (i) and the
  // command's QP (c).
  // (the fields searched and the send state, forwarded into waiting turns, kept apart)
  turn_t            rg [MAX_TURNS];
  txst_t            rg_st [MAX_TURNS];
  logic [AW-1:0]    rg_qpn [MAX_TURNS];
  logic [15:0]      rg_end [MAX_TURNS];     // fs + n
  logic [MAX_TURNS-1:0] rg_ok;              // a WQE-reading turn (not a stop, not a flush)
  logic [MAX_TURNS-1:0] rg_doom;
  logic [RW_-1:0]   rg_wp, rg_rp;
  logic [RW_:0]     rg_cnt;
  logic             t_doom;                 // the plan stage's turn is doomed
  logic             t_fly;                  // the plan stage holds a turn
  turn_t            t;
  logic             fl_any_a, fl_ok_a, fl_any_i, fl_any_c;
  logic [FLW-1:0]   fl_cnt_a;
  logic [15:0]      fl_end_a;               // fetch cursor: after the youngest turn's WQEs
  logic [AW-1:0]    sel_qpn;
  logic [RW_-1:0]   rg_k;
  always_comb begin
    rg_k     = rg_rp;
    fl_any_a = t_fly && t.qpn == iss_qpn;
    fl_cnt_a = FLW'(fl_any_a);
    fl_ok_a  = !t_doom && !t.stop && t.n != 4'd0;
    fl_end_a = t.fs + {12'd0, t.n};
    fl_any_i = t_fly && t.qpn == sel_qpn;
    fl_any_c = t_fly && t.qpn == qp_cmd.qpn[AW-1:0];
    for (int i = 0; i < MAX_TURNS; i++) begin
      rg_k = rg_rp + RW_'(i);
      if ((RW_+1)'(i) < rg_cnt) begin
        if (rg_qpn[rg_k] == iss_qpn) begin
          fl_any_a = 1'b1;
          fl_cnt_a = fl_cnt_a + FLW'(1);
          fl_ok_a  = !rg_doom[rg_k] && rg_ok[rg_k];
          fl_end_a = rg_end[rg_k];
        end
        if (rg_qpn[rg_k] == sel_qpn) fl_any_i = 1'b1;
        if (rg_qpn[rg_k] == qp_cmd.qpn[AW-1:0]) fl_any_c = 1'b1;
      end
    end
  end
  assign cmd_busy = fl_any_c || (iss_busy && iss_qpn == qp_cmd.qpn[AW-1:0]);

  // stop requests go before host stops, host stops before rewinds, rewinds before scheduler
  // turns; the first three wait until no turn of their QP is in flight
  // A stop or rewind made for an earlier incarnation of its QP is dropped as it arrives.
  assign gen_c_qpn = rw.qpn[AW-1:0];
  assign gen_d_qpn = stop_qpn;
  wire   stop_stale = stop_valid && stop_gen != gen_d;
  wire   rw_stale   = rw_valid && rw.gen != gen_c;
  wire   stop_live  = stop_valid && !stop_stale;
  wire   rw_live    = rw_valid && !rw_stale;
  wire   take_stop  = stop_live;
  wire   take_hstop = !stop_live && hstop_valid;
  wire   take_rw    = !stop_live && !hstop_valid && rw_live;
  assign sel_qpn = take_stop ? stop_qpn : take_hstop ? hstop_qpn : take_rw ? rw.qpn[AW-1:0] : s_qpn;
  wire   sel_wait = (stop_live || hstop_valid || rw_live) && fl_any_i;
  assign rd_req  = (stop_live || hstop_valid || rw_live || s_valid) && !iss_busy && cfg_ready && st_ready &&
                   !sel_wait;
  assign rd_qpn  = sel_qpn;
  assign s_ready = rd_req && !take_stop && !take_hstop && !take_rw;
  assign stop_ready  = (rd_req && take_stop) || stop_stale;
  assign hstop_ready = rd_req && take_hstop;
  assign rw_ready     = (rd_req && take_rw) || rw_stale;

  // the state read is captured when it returns and held until the turn is issued; a turn of
  // the same QP ending in the plan stage meanwhile writes its state through (a_st_cur)
  sqcfg_t      a_cfg;
  txst_t       a_st, a_st_cur;
  logic [15:0] a_pi;
  logic [23:0] a_una;
  logic        a_valid;
  logic        p_wr;
  txst_t       cur_wb;
  assign a_st_cur = (p_wr && t.qpn == iss_qpn) ? cur_wb : a_st;
  always_ff @(posedge clk) begin
    if (cfg_rsp_v) begin a_cfg <= cfg_rsp; a_st <= st_rsp; a_pi <= pi_rsp; a_una <= una_rsp; end
    else if (a_valid) a_st <= a_st_cur;
  end
  // A scheduler turn of a QP with turns in flight reads after the youngest of them; it waits
  // (ends here, the QP requeued) while that one is doomed or a stop, or TURNS_PER_QP are in
  // flight.
  // A WQE read once offered is held unchanged until it is taken (AXI): its decision is
  // latched (a_lk: first index, WQE count, spec), because what it was made from may change
  // while the read waits: the QP's turn in the plan stage ends (its send state written
  // through, the turn no longer in flight), a turn ending early dooms the youngest turn it
  // reads after (the latched turn is then pushed doomed: a_lk_doom), sched_wqes changes.
  logic        a_lk, a_lk_spec, a_lk_doom;
  logic [15:0] a_lk_base;
  logic [3:0]  a_lk_n;
  wire        a_sched = !iss_stop && !iss_rw;
  wire        a_spec  = a_sched && (a_lk ? a_lk_spec : fl_any_a);
  wire        a_hold  = a_spec && !a_lk && (!fl_ok_a || 32'(fl_cnt_a) >= TURNS_PER_QP);
  wire [15:0] a_base  = a_lk ? a_lk_base : a_spec ? fl_end_a : a_st_cur.ci;
  wire [15:0] a_size  = 16'd1 << a_cfg.log_sq;
  wire [15:0] a_avail = a_pi - a_base;
  wire [15:0] a_room  = a_size - (a_base & (a_size - 16'd1));
  logic [15:0] a_n;
  wire [63:0] a_addr   = a_cfg.sq_base + {42'd0, (a_base & (a_size - 16'd1)), 6'd0};
  wire [15:0] a_room4k = 16'd64 - {10'd0, a_addr[11:6]};
  always_comb begin
    a_n = a_avail;
    if (a_n > {12'd0, sched_wqes}) a_n = {12'd0, sched_wqes};
    if (a_n > a_room) a_n = a_room;
    if (a_n > a_room4k) a_n = a_room4k;    // an AXI burst never crosses 4 KiB
    if (a_lk) a_n = {12'd0, a_lk_n};
  end
  // fence: the QP stopped at a fenced WQE and still has READs outstanding; the turn ends here
  // and the QP is requeued (no WQE read until the READs are done)
  wire a_fence = a_st_cur.fwait && (rdc_qa_busy || rdq_busy_a);
  wire a_go   = a_cfg.state == 3'(srnic_abi_pkg::QPS_RTS) && a_avail != 16'd0 && !a_st_cur.err && !iss_stop &&
                !a_st_cur.park && !iss_rw && !a_hold;
  // window full: a turn that starts from the send state (not a read-ahead turn: the plan stage
  // cuts those) ends here and waits for credit (srnic_tx_window kicks the QP)
  wire a_wfull  = win_on && !a_spec && win_room(a_st_cur.psn, a_una, win_pk) == 24'd0;
  // waiting for a READ context (on the wait list): the turn ends here without a WQE read and
  // the QP is not queued again; the list wakes it
  logic cw_mem_a;
  wire a_cwait  = !a_lk && a_go && !a_fence && cw_mem_a;
  wire a_wwait  = !a_lk && a_go && !a_fence && !a_cwait && a_wfull;
  wire a_work = a_lk || (a_go && !a_fence && !a_cwait && !a_wfull);
  // a stopped QP with WQEs posted since its last report: tell the completion engine, which
  // flushes them (a turn without a WQE read); a host stop always reports
  wire a_flush = !iss_rw && !a_hold && !a_lk &&
                 ((a_st_cur.err && a_pi != a_st_cur.fl_pi) || (iss_stop && !a_st_cur.err) || iss_host);
  always_comb begin
    ctx_in.qpn = iss_qpn;
    ctx_in.cfg = a_cfg;
    ctx_in.st  = a_st_cur;
    ctx_in.st.err = a_st_cur.err || iss_stop;
    ctx_in.st.refd = a_st_cur.refd && !iss_stop;   // a stop request makes the stop final
    ctx_in.stop = iss_stop;
    ctx_in.host = iss_host;
    ctx_in.n   = a_flush ? 4'd0 : a_n[3:0];
    ctx_in.pi  = a_pi;
    ctx_in.fs  = a_base;
    ctx_in.spec = a_spec;
    ctx_in.una  = a_una;
  end
  wire [15:0] wbuf_need = 16'(wbuf_resv) + a_n;
  wire wbuf_ok = wbuf_need <= 16'(WBUF);
  // A scheduler turn ends when it is issued: done goes out with the push, or, when the
  // scheduler does not take it then, from dq_* as soon as it does (the read cannot wait for
  // done_ready once offered). While dq_* holds a turn end no other one is offered.
  logic          dq_valid, dq_more;
  logic [AW-1:0] dq_qpn;
  assign ar_valid  = a_valid && (a_lk || (a_work && ctx_ready && wbuf_ok && !dq_valid));
  assign ar_addr   = a_addr;
  assign ar_qpn    = iss_qpn;
  assign ar_idx    = a_base;
  assign ar_pi     = a_pi;
  assign ar_log_sq = a_cfg.log_sq;
  assign ar_una    = a_una;
  assign ar_len    = {4'd0, a_n[3:0]} - 8'd1;
  wire   flush_push = a_valid && a_flush && ctx_ready && (iss_stop || (done_ready && !dq_valid));
  assign ctx_push  = (ar_valid && ar_ready) || flush_push;
  // a turn without work ends here
  assign idle_done = a_valid && !a_work && !a_flush;

  // Rewind: applied to a QP that is in RTS and not stopped, once none of its segments waits
  // to be emitted; then the RX engine is told (the episode ends), and the QP is queued again
  // (unless it stays parked), or, for an RNR answer, parked with the send state where it is
  // and its RNR wait started. An answer marked up (an RNR wait ended) unparks the QP, which
  // is queued again if it was parked.
  wire   rw_apply = iss_rw && iss_rwd.apply && a_cfg.state == 3'(srnic_abi_pkg::QPS_RTS) &&
                    (!a_st.err || a_st.refd);
  wire   rw_park  = rw_apply && iss_rwd.rnr;
  wire   rw_move  = rw_apply && !iss_rwd.rnr;
  txst_t rw_st;
  always_comb begin
    rw_st = a_st;
    if (rw_move) begin
      rw_st.ci = iss_rwd.ci; rw_st.off = iss_rwd.off; rw_st.psn = iss_rwd.psn; rw_st.fwait = 1'b0;
      rw_st.err = 1'b0; rw_st.refd = 1'b0;   // (err here: stopped at a refused WQE, see rw_apply)
      if (srnic_pkg::psn_gt(a_st.psn, a_st.psn_hi)) rw_st.psn_hi = a_st.psn;
    end
    if (rw_park) rw_st.park = 1'b1;
    if (iss_rw && iss_rwd.up) rw_st.park = 1'b0;
  end
  wire   rw_kick  = !rw_st.park && (rw_move || (iss_rw && iss_rwd.up && a_st.park));

  // No new read is issued while a turn waits in the issue stage (iss_busy).
  logic a_release;
  always_ff @(posedge clk) begin
    if (rst) begin
      iss_busy <= 1'b0; a_valid <= 1'b0; iss_stop <= 1'b0; iss_host <= 1'b0; iss_rw <= 1'b0;
    end else begin
      if (rd_req) begin
        iss_busy <= 1'b1; iss_qpn <= rd_qpn; iss_stop <= take_stop || take_hstop; iss_host <= take_hstop;
        iss_rw <= take_rw; iss_rwd <= rw;
      end
      if (cfg_rsp_v) a_valid <= 1'b1;
      if (a_release) begin a_valid <= 1'b0; iss_busy <= 1'b0; end
    end
  end
  always_ff @(posedge clk) begin
    if (rst || a_release) begin
      a_lk <= 1'b0; a_lk_doom <= 1'b0;
    end else if (ar_valid && !ar_ready) begin
      if (!a_lk) begin a_lk <= 1'b1; a_lk_base <= a_base; a_lk_n <= a_n[3:0]; a_lk_spec <= a_spec; end
      if (doom_ev && t.qpn == iss_qpn) a_lk_doom <= 1'b1;
    end
  end

  // the ring of issued turns; a doom marks every turn of the QP in it (and the one entering)
  logic          doom_ev;          // the plan stage's turn ended early (below)
  wire           push_doom = doom_ev && t.qpn == iss_qpn;
  logic          p_wr_fwd;
  assign ctx_ready = rg_cnt != (RW_+1)'(MAX_TURNS);
  assign ctx_valid = rg_cnt != '0;
  always_comb begin
    ctx    = rg[rg_rp];
    ctx.st = rg_st[rg_rp];
  end
  assign ctx_doom  = rg_doom[rg_rp];
  assign p_wr_fwd  = p_wr;
  always_ff @(posedge clk) begin
    if (rst) begin
      rg_wp <= '0; rg_rp <= '0; rg_cnt <= '0; rg_doom <= '0;
    end else begin
      for (int i = 0; i < MAX_TURNS; i++) begin
        if (doom_ev && rg_qpn[i] == t.qpn) rg_doom[i] <= 1'b1;
        // the send state the plan stage writes back is the one the QP's next turn starts from
        if (p_wr_fwd && rg_qpn[i] == t.qpn) rg_st[i] <= cur_wb;
      end
      if (ctx_push) begin
        rg[rg_wp] <= ctx_in;
        rg_st[rg_wp] <= ctx_in.st;
        rg_qpn[rg_wp] <= iss_qpn;
        rg_end[rg_wp] <= a_base + {12'd0, ctx_in.n};
        rg_ok[rg_wp] <= !iss_stop && ctx_in.n != 4'd0;
        rg_doom[rg_wp] <= push_doom || a_lk_doom;
        rg_wp <= rg_wp + RW_'(1);
      end
      if (ctx_pop) rg_rp <= rg_rp + RW_'(1);
      rg_cnt <= rg_cnt + (RW_+1)'(ctx_push) - (RW_+1)'(ctx_pop);
    end
  end

  // WQE beats, space reserved at issue
  logic [511:0] wq_data;
  logic         wq_valid, wq_pop;
  sync_fifo #(.WIDTH(512), .DEPTH(WBUF)) u_wbuf (
    .clk, .rst, .s_data(r_data), .s_valid(r_valid), .s_ready(),
    .m_data(wq_data), .m_valid(wq_valid), .m_ready(wq_pop), .count());
  always_ff @(posedge clk) begin
    if (rst) wbuf_resv <= '0;
    else wbuf_resv <= wbuf_resv + (ctx_push ? ($clog2(WBUF)+1)'(ctx_in.n) : '0) - ($clog2(WBUF)+1)'(wq_pop);
  end

  // ------------------------------------------------------------ plan stage
  // Walks the fetched WQEs and decides, per WQE, which part of it this turn sends: a
  // segment [off_start, off_end) with its first PSN. The segment goes to the emit stage
  // and the send state moves on at once, so the turn ends (state written back, QP
  // requeued, its next WQE read issued) while this turn's packets are still being cut:
  // the next turn's WQE fetch overlaps this turn's transmission.
  typedef enum logic [2:0] {P_IDLE, P_WQE, P_MR, P_SEG, P_DRAIN, P_END, P_LERR, P_SKIP} pstate_e;
  pstate_e pst;
  txst_t   cur;
  logic [31:0] budget;      // remaining byte budget of the turn
  logic [23:0] wleft;       // packets the window still allows this turn
  logic [3:0]  taken_n;     // WQE beats consumed
  logic [7:0]  w_op, w_flags;
  logic [31:0] w_imm, w_len, w_rkey;
  logic [63:0] w_raddr, w_pa;

  assign ctx_pop = pst == P_IDLE && ctx_valid;
  assign t_fly = pst != P_IDLE;
  wire [12:0] mtu_b    = srnic_pkg::mtu_bytes(t.cfg.mtu);
  wire [3:0]  mtu_l2   = srnic_pkg::mtu_log2(t.cfg.mtu);
  wire        w_is_read = w_op == srnic_abi_pkg::WR_READ;
  wire [31:0] remain   = w_len - cur.off;
  // bytes this turn: whole packets until the budget is spent, at most the rest of the WQE
  wire [31:0] bud_pk   = ((budget + {19'd0, mtu_b} - 32'd1) >> mtu_l2) << mtu_l2;
  // ... and at most the packets the window allows
  wire [35:0] wl_b36   = {12'd0, wleft} << mtu_l2;
  wire [31:0] wl_b     = (wl_b36[35:32] != 4'd0) ? 32'hFFFF_FFFF : wl_b36[31:0];
  wire [31:0] bud_w    = (win_on && wl_b < bud_pk) ? wl_b : bud_pk;
  wire [31:0] seg_len  = (w_is_read || remain < bud_w) ? remain : bud_w;   // a READ: all the rest
  wire        seg_done = w_is_read || seg_len == remain;      // the WQE finishes this turn
  wire [31:0] np_raw   = (seg_len + {19'd0, mtu_b} - 32'd1) >> mtu_l2;
  wire [23:0] seg_npk  = (seg_len == 32'd0) ? 24'd1 : np_raw[23:0];
  wire [31:0] seg_cost = (w_is_read || seg_len < 32'd64) ? 32'd64 : seg_len;
  wire        out_of_budget = seg_cost >= budget;
  wire        win_fill = seg_npk >= wleft;    // this segment fills the window
  // acknowledged already (a resend behind una): packets of the WQE left, those before una
  wire [31:0] rem_np_raw = (remain + {19'd0, mtu_b} - 32'd1) >> mtu_l2;
  wire [23:0] rem_npk  = (remain == 32'd0) ? 24'd1 : rem_np_raw[23:0];
  // (never the WQE's last packet: the completion engine keeps no ACK beyond an open READ, so
  // a WQE behind one completes only on an ACK that comes after the READ's responses)
  wire        sk_on    = !w_is_read && srnic_pkg::psn_gt(cur.psn_hi, cur.psn) && srnic_pkg::psn_gt(t.una, cur.psn) &&
                         rem_npk > 24'd1;
  wire [23:0] sk_una   = t.una - cur.psn;
  wire [23:0] sk_n     = (sk_una < rem_npk) ? sk_una : rem_npk - 24'd1;
  wire [31:0] sk_off   = {8'd0, sk_n} << mtu_l2;   // (below remain)

  // segment record for the emit stage
  typedef struct packed {
    logic [srnic_pkg::GEN_W-1:0] gen;   // the QP's incarnation when it was planned
    logic [AW-1:0] qpn;
    logic [2:0]  mtu;
    logic [7:0]  op;
    logic [7:0]  flags;
    logic [31:0] imm;
    logic [31:0] len;
    logic [31:0] rkey;
    logic [63:0] raddr;
    logic [63:0] pa;
    logic [31:0] off;
    logic [31:0] off_end;
    logic [23:0] psn;
    logic [23:0] psn_hi;
    logic        wend;     // the segment fills the window: AckReq on its last packet
  } seg_t;
  seg_t seg_in, sg;
  always_comb begin
    seg_in.gen = gen_a;
    seg_in.qpn = t.qpn; seg_in.mtu = t.cfg.mtu; seg_in.op = w_op; seg_in.flags = w_flags;
    seg_in.imm = w_imm; seg_in.len = w_len; seg_in.rkey = w_rkey; seg_in.raddr = w_raddr;
    seg_in.pa = w_pa; seg_in.off = cur.off; seg_in.off_end = cur.off + seg_len; seg_in.psn = cur.psn;
    seg_in.psn_hi = cur.psn_hi;
    seg_in.wend = win_fill && win_on;
  end
  logic seg_ready, seg_valid, seg_pop;
  wire  seg_push = pst == P_SEG && seg_ready;

  // Segments planned but not yet emitted (the 16 the segment FIFO holds, the one being cut
  // included), in plan order, which is also emit order, with their QPN and whether they are a
  // READ (not yet registered in srnic_rd_ctx: a fenced WQE waits for these too). Searched by
  // QPN for the issue stage (a: READs for the fence, any segment for a rewind) and the plan
  // stage (p).
  logic [AW-1:0] sq_qpn [16];
  logic [15:0]   sq_v, sq_rd;
  logic [3:0]    sq_wp, sq_rp;
  wire sq_push = seg_push;
  wire sq_pop  = seg_pop;
  logic [4:0] rd_resv;     // READs planned, not yet in srnic_rd_ctx: each has a context reserved
  logic [4:0] rd_resv_p;   // ... of them, the plan stage's QP's
  always_comb begin
    rdq_busy_a = 1'b0; rdq_busy_p = 1'b0; seg_busy_a = 1'b0; rd_resv = '0; rd_resv_p = '0;
    for (int i = 0; i < 16; i++) begin
      rd_resv = rd_resv + 5'(sq_v[i] && sq_rd[i]);
      rd_resv_p = rd_resv_p + 5'(sq_v[i] && sq_rd[i] && sq_qpn[i] == t.qpn);
      if (sq_v[i] && sq_rd[i] && sq_qpn[i] == iss_qpn) rdq_busy_a = 1'b1;
      if (sq_v[i] && sq_rd[i] && sq_qpn[i] == t.qpn) rdq_busy_p = 1'b1;
      if (sq_v[i] && sq_qpn[i] == iss_qpn) seg_busy_a = 1'b1;
    end
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      sq_v <= '0; sq_wp <= '0; sq_rp <= '0;
    end else begin
      if (sq_push) begin
        sq_qpn[sq_wp] <= t.qpn; sq_v[sq_wp] <= 1'b1; sq_rd[sq_wp] <= w_is_read; sq_wp <= sq_wp + 4'd1;
      end
      if (sq_pop) begin sq_v[sq_rp] <= 1'b0; sq_rp <= sq_rp + 4'd1; end
    end
  end
  assign rdc_qa_qpn = iss_qpn;
  assign rdc_qb_qpn = t.qpn;
  sync_fifo #(.WIDTH($bits(seg_in)), .DEPTH(16)) u_seg (
    .clk, .rst, .s_data(seg_in), .s_valid(seg_push), .s_ready(seg_ready),
    .m_data(sg), .m_valid(seg_valid), .m_ready(seg_pop), .count());

  wire [7:0]  wq_op  = wq_data[srnic_abi_pkg::SQWQE_OPCODE_OFF*8 +: 8];
  wire [31:0] wq_len = wq_data[srnic_abi_pkg::SQWQE_LENGTH_OFF*8 +: 32];
  // Every WQE carries its running index (decision 49). One that is not the index read for is
  // either a newer WQE in the slot (same slot, up to 2^15 ahead: the host reused the slot after
  // its WQE completed, which happens when acknowledgements complete WQEs a rewind is about to
  // send again) or a WQE the host wrote wrongly (refused like a malformed one).
  wire [15:0] wq_idx   = wq_data[srnic_abi_pkg::SQWQE_IDX_OFF*8 +: 16];
  wire [15:0] idx_ahead = wq_idx - cur.ci;
  wire [15:0] idx_mask  = (16'd1 << t.cfg.log_sq) - 16'd1;
  wire stale_now   = wq_idx != cur.ci && (idx_ahead & idx_mask) == 16'd0 && !idx_ahead[15];
  wire wqe_bad_now = wq_op > srnic_abi_pkg::WR_READ || wq_len > srnic_pkg::MAX_MSG_BYTES ||
                     (wq_idx != cur.ci && !stale_now);
  wire rd_now      = wq_op == srnic_abi_pkg::WR_READ;
  // a fenced WQE not yet started while a READ of this QP is outstanding
  wire fence_now   = wq_data[srnic_abi_pkg::SQWQE_FLAGS_OFF*8 + srnic_abi_pkg::WQE_FLAG_FENCE] &&
                     cur.off == 32'd0 && (rdc_qb_busy || rdq_busy_p) && !stale_now;
  // A READ is planned only with a READ context reserved for it, so the emit stage never waits
  // for one: a READ waiting there would hold every QP's segments behind it, and with them a
  // rewind's drain, while the contexts it waits for may be freed only by that rewind. The free
  // count is one cycle late (an insert of the previous cycle is no longer reserved but not yet
  // counted), hence the one context of margin. Without room the turn ends in front of the READ
  // and the QP waits for a context (the wait list, below).
  wire rdc_room    = {1'b0, rdc_free} >= 9'(rd_resv) + 9'd2;
  // A QP's share (decision 120): RD_SHARE contexts, held in srnic_rd_ctx (exact: an insert shows
  // in rdc_qb_cnt at the edge it leaves rd_resv_p) or reserved by planned READs; more only while
  // RD_RESERVE contexts stay free beyond the margin
  wire rdc_spare   = {1'b0, rdc_free} >= 9'(rd_resv) + 9'd2 + 9'(RD_RESERVE);
  wire qp_room     = 8'(rdc_qb_cnt) + 8'(rd_resv_p) < 8'(RD_SHARE) || rdc_spare;
  wire ctx_short   = rd_now && !wqe_bad_now && !fence_now && !stale_now && (!rdc_room || !qp_room);
  // the window is full: stop in front of the WQE; the QP is requeued and waits for credit
  wire win_short   = win_on && wleft == 24'd0 && !wqe_bad_now && !fence_now && !stale_now;
  assign wq_pop = (pst == P_WQE || pst == P_DRAIN || pst == P_SKIP) && wq_valid;
  // the source of a WRITE/SEND needs no right; a READ target needs LOCAL_WRITE
  assign mr_req = pst == P_WQE && wq_valid && !wqe_bad_now && !fence_now && !ctx_short && !win_short &&
                  !stale_now;
  assign mr_access = rd_now ? 4'b0001 : 4'b0000;
  assign mr_key = wq_data[srnic_abi_pkg::SQWQE_LKEY_OFF*8 +: 32];
  assign mr_pd  = t.cfg.pd;
  assign mr_va  = wq_data[srnic_abi_pkg::SQWQE_LADDR_OFF*8 +: 64];
  assign mr_len = wq_len;
  assign bad_wqe = pst == P_WQE && wq_valid && wqe_bad_now && !fence_now;
  logic [7:0] lerr_status;
  assign lerr_valid = pst == P_LERR;
  always_comb begin
    lerr = '0;
    lerr.kind   = t.host ? srnic_pkg::CEV_HERR : srnic_pkg::CEV_LERR;
    lerr.gen    = gen_a;
    lerr.qpn    = srnic_pkg::QPN_W'(t.qpn);
    lerr.psn    = cur.psn;
    lerr.status = lerr_status;
    lerr.psn2   = {8'd0, t.pi};     // WQEs up to this producer index are to be flushed
  end

  // Turn ends in the plan stage: the send state is written back. A turn that ended early
  // (not every WQE it read was planned to its end) dooms the younger turns of its QP, and
  // kicks the QP (queued again like at a doorbell) if it has work left; a turn that found a
  // reused slot reports it instead (the QP parks; the answer to the report kicks it). Stop
  // requests write back and do neither. A turn that stopped the QP at a refused WQE kicks it
  // too: the WQEs after it are flushed up to the producer index this turn read, and the doomed
  // younger turns may have read WQEs posted since (their done reported no more work, their
  // doorbells are used up); the turn the kick gives reports those for flushing. A turn without
  // a WQE read (a stopped QP's flush report) has no younger turns and does not kick.
  wire p_done = pst == P_END;
  logic t_stale;             // this turn found a newer WQE in a slot: the QP parks
  logic t_cwait;             // this turn stopped in front of a READ for want of a context
  wire p_early = cur.ci != t.fs + {12'd0, t.n} || cur.off != 32'd0 || cur.err || cur.park || cur.fwait;
  // A turn that stopped for want of a READ context is not kicked: the QP joins the wait list
  // (below) and is woken when a context is freed, unless one is there for it by now (the turn
  // decided on a count a free may have changed since) or the list is full (kicked as before).
  logic cw_full, cw_mem_p;
  wire p_cwq   = p_done && t_cwait && !t.stop && !cur.park && !(rdc_room && qp_room) && (!cw_full || cw_mem_p);
  wire p_cw    = p_cwq && !cw_mem_p;
  wire p_kick  = p_done && !t.stop && t.n != 4'd0 && p_early && !cur.park && (cur.ci != t.pi || cur.off != 32'd0) &&
                 !p_cwq;
  wire p_go    = t.stop || ((!p_kick || kick_ready) && (!t_stale || stale_ready));
  assign p_wr  = p_done && p_go;
  assign doom_ev = p_wr && !t.stop && p_early;
  assign turn_end  = p_wr;
  assign turn_drop = pst == P_SKIP && wq_valid && taken_n + 4'd1 == t.n;
  assign turn_qpn  = t.qpn;
  assign stale_valid = p_done && t_stale && !t.stop;
  assign stale_qpn   = t.qpn;
  // Rewind outputs (see above): only in a cycle in which the issue stage can write the send
  // state back (the plan stage's turn end has the write port first, and the kick port), so
  // each goes out exactly once, together with that write.
  wire   misc_ok  = a_valid && !p_done;
  wire   rw_wait  = rw_apply && seg_busy_a;   // the QP's planned segments still leave first
  wire   rw_go    = misc_ok && iss_rw && !rw_wait && note_ready && (!rw_park || rnr_ready) &&
                    (!rw_kick || kick_ready) && !rwa_v;
  assign note_valid = misc_ok && iss_rw && !rw_wait && (!rw_park || rnr_ready) && (!rw_kick || kick_ready) &&
                      !rwa_v;
  always_ff @(posedge clk) begin
    if (rst) rwa_v <= 1'b0;
    else if (rw_go && rw_move) begin
      rwa_v <= 1'b1; rwa_qpn <= iss_qpn; rwa_psn <= iss_rwd.psn - 24'd1;
    end else if (rwa_take) rwa_v <= 1'b0;
  end
  assign note_qpn   = iss_qpn;
  assign note_gen   = iss_rwd.gen;
  assign rnr_valid  = misc_ok && rw_park && !seg_busy_a && note_ready;
  assign rnr_qpn    = iss_qpn;
  assign rnr_code   = iss_rwd.code;
  // the window's kicks (credit came back) take the port when neither of these wants it
  wire   k_mine     = p_kick || (misc_ok && rw_kick && !rw_wait && note_ready && !rwa_v);   // (as rw_go)
  logic  cw_wake;
  logic [AW-1:0] cw_qpn;
  assign kick_valid = k_mine || wk_valid || cw_wake;
  assign kick_qpn   = p_kick ? t.qpn : k_mine ? iss_qpn : wk_valid ? wk_qpn : cw_qpn;
  assign wk_ready   = kick_ready && !k_mine;

  // READ context waits (decision 120): the QPs whose turn stopped in front of a READ for want
  // of a context, in order (CW_DEPTH entries, each a QPN and a live bit). A freed context earns
  // one wake-up: the oldest waiter leaves the list and is kicked (queued again like at a
  // doorbell); its next turn reads its WQEs and plans the READ, or joins the list again at the
  // tail. While a QP is on the list its turns (a doorbell's) end in the issue stage without a
  // WQE read. Credits are dropped while nobody waits. While contexts are free one waiter is
  // also woken every 256 cycles, so a QP waiting for its own share (another QP's free woke
  // another waiter) is not left waiting while contexts are free. A rewind applied to a waiting
  // QP (which kicks or parks it) and a QP reset take it off the list (its entry dies in place
  // and is dropped unseen at the head).
  localparam int CWW = $clog2(CW_DEPTH);
  logic [AW-1:0]       cw_q [CW_DEPTH];
  logic [CW_DEPTH-1:0] cw_v, cw_m_a, cw_m_p, cw_m_r;
  logic [CWW-1:0]      cw_hp, cw_tp;
  logic [CWW:0]        cw_n;
  logic [6:0]          cw_cred;
  logic [7:0]          cw_tick;
  logic                cw_poll;
  always_comb
    for (int i = 0; i < CW_DEPTH; i++) begin
      cw_m_a[i] = cw_v[i] && cw_q[i] == iss_qpn;
      cw_m_p[i] = cw_v[i] && cw_q[i] == t.qpn;
      cw_m_r[i] = cw_v[i] && cw_q[i] == qp_reset_qpn;
    end
  assign cw_mem_a = |cw_m_a;
  assign cw_mem_p = |cw_m_p;
  assign cw_full  = cw_n == (CWW+1)'(CW_DEPTH);
  wire   cw_any   = cw_n != '0;
  assign cw_qpn   = cw_q[cw_hp];
  assign cw_wake  = cw_any && cw_v[cw_hp] && (cw_cred != 7'd0 || cw_poll);
  wire   cw_wpop  = cw_wake && kick_ready && !k_mine && !wk_valid;
  wire   cw_pop   = cw_wpop || (cw_any && !cw_v[cw_hp]);
  wire   cw_push  = p_wr && p_cw;
  wire   cw_unrw  = rw_go && rw_apply;       // the rewind kicks or parks the QP (iss_qpn)
  wire [7:0] cw_cred_sum = 8'(cw_cred) + 8'(rdc_freed) - 8'(cw_wpop && cw_cred != 7'd0);
  always_ff @(posedge clk) begin
    if (rst) begin
      cw_v <= '0; cw_hp <= '0; cw_tp <= '0; cw_n <= '0;
      cw_cred <= '0; cw_tick <= '0; cw_poll <= 1'b0;
    end else begin
      for (int i = 0; i < CW_DEPTH; i++)
        if ((cw_unrw && cw_m_a[i]) || (qp_reset_valid && cw_m_r[i])) cw_v[i] <= 1'b0;
      if (cw_pop) begin cw_v[cw_hp] <= 1'b0; cw_hp <= cw_hp + CWW'(1); end
      if (cw_push) begin cw_q[cw_tp] <= t.qpn; cw_v[cw_tp] <= 1'b1; cw_tp <= cw_tp + CWW'(1); end
      cw_n <= cw_n + (CWW+1)'(cw_push) - (CWW+1)'(cw_pop);
      cw_tick <= cw_tick + 8'd1;
      cw_poll <= cw_any && (cw_poll || (cw_tick == 8'hFF && rdc_room)) && !(cw_wpop && cw_cred == 7'd0);
      if (!cw_any && !cw_push) cw_cred <= '0;
      else cw_cred <= (cw_cred_sum > 8'd64) ? 7'd64 : cw_cred_sum[6:0];
    end
  end
  assign rdc_rw_flush     = rw_go && rw_apply;
  assign rdc_rw_flush_qpn = iss_qpn;
  // The issue stage lets its turn go: pushed into the ring, a rewind applied (written back),
  // a stop with nothing to report, a scheduler turn without work (done).
  wire i_wr = idle_done && iss_rw && rw_go;
  // queued again: WQEs beyond the ones read, or waiting (fence, turns of the QP in flight)
  wire i_more = ctx_push ? (ctx_in.n != 4'd0 && a_base + {12'd0, a_n[3:0]} != a_pi)
                         : (a_hold || (a_go && a_fence));   // (a_cwait: the wait list wakes it)
  // a turn that waits for credit ends once srnic_tx_window has taken the wait
  wire   idle_end = idle_done && (!a_wwait || wwait_ready);
  assign wwait_valid = a_valid && a_sched && idle_done && a_wwait && done_ready && !dq_valid;
  assign done_valid = dq_valid || (a_valid && a_sched && (ctx_push || idle_end));
  assign done_qpn   = dq_valid ? dq_qpn : iss_qpn;
  assign done_more  = dq_valid ? dq_more : i_more;
  always_ff @(posedge clk) begin
    if (rst) dq_valid <= 1'b0;
    else if (dq_valid) begin
      if (done_ready) dq_valid <= 1'b0;
    end else if (ctx_push && a_sched && !done_ready) begin
      dq_valid <= 1'b1; dq_qpn <= iss_qpn; dq_more <= i_more;
    end
  end
  assign a_release  = ctx_push || i_wr || (idle_done && iss_stop) ||
                      (idle_end && a_sched && done_ready && !dq_valid);
  assign st_wr      = p_wr || i_wr;
  assign st_wr_qpn  = p_wr ? t.qpn : iss_qpn;
  // a turn's write-back carries psn_hi along once the send state passes it, so it never falls
  // 2^23 PSNs behind (then the serial comparison would mark new PSNs as resends)
  always_comb begin
    cur_wb = cur;
    if (!srnic_pkg::psn_gt(cur.psn_hi, cur.psn)) cur_wb.psn_hi = cur.psn;   // not resending
  end
  assign st_wr_data = p_wr ? cur_wb : rw_st;

  always_ff @(posedge clk) begin
    if (rst) begin
      pst <= P_IDLE; t_doom <= 1'b0;
    end else begin
      case (pst)
        P_IDLE: if (ctx_valid) begin
          t <= ctx; cur <= ctx.st; budget <= sched_burst; taken_n <= '0; t_doom <= ctx_doom;
          wleft <= win_room(ctx.st.psn, ctx.una, win_pk);
          cur.fwait <= 1'b0; t_stale <= 1'b0; t_cwait <= 1'b0;
          lerr_status <= srnic_abi_pkg::WC_WR_FLUSH_ERR;
          // a doomed turn's WQEs are dropped unread; a stopped QP reports new WQEs to flush
          pst <= ctx_doom ? (ctx.n == 4'd0 ? P_IDLE : P_SKIP) : ctx.st.err ? P_LERR : P_WQE;
        end
        P_WQE: if (wq_valid) begin
          w_op    <= wq_op;
          w_flags <= wq_data[srnic_abi_pkg::SQWQE_FLAGS_OFF*8 +: 8];
          w_imm   <= wq_data[srnic_abi_pkg::SQWQE_IMM_OFF*8 +: 32];
          w_len   <= wq_len;
          w_raddr <= wq_data[srnic_abi_pkg::SQWQE_RADDR_OFF*8 +: 64];
          w_rkey  <= wq_data[srnic_abi_pkg::SQWQE_RKEY_OFF*8 +: 32];
          w_pa    <= '0;
          taken_n <= taken_n + 4'd1;
          if (stale_now) begin
            // a newer WQE in the slot: the one read for completed meanwhile; park until the
            // completion engine names the oldest incomplete WQE (an RNR-end episode)
            cur.park <= 1'b1; t_stale <= 1'b1;
            pst <= (taken_n + 4'd1 == t.n) ? P_END : P_DRAIN;
          end else if (fence_now) begin
            // stop in front of the fenced WQE; the turn ends and the QP is requeued
            cur.fwait <= 1'b1;
            pst <= (taken_n + 4'd1 == t.n) ? P_END : P_DRAIN;
          end else if (ctx_short || win_short) begin
            // stop in front of the WQE: the window is full (the QP is requeued (kicked) and,
            // if its window is still full then, waits for credit), or no READ context to
            // reserve (the QP waits for one: p_cw)
            t_cwait <= ctx_short && !win_short;
            pst <= (taken_n + 4'd1 == t.n) ? P_END : P_DRAIN;
          end else if (wqe_bad_now) begin
            lerr_status <= srnic_abi_pkg::WC_LOC_QP_OP_ERR;
            pst <= P_LERR;
          end else pst <= P_MR;
        end
        P_MR: if (mr_rsp) begin
          w_pa <= mr_pa;
          if (!mr_ok) begin
            lerr_status <= srnic_abi_pkg::WC_LOC_PROT_ERR; pst <= P_LERR;
          end else begin
            if (sk_on) begin cur.off <= cur.off + sk_off; cur.psn <= cur.psn + sk_n; end
            pst <= P_SEG;
          end
        end
        P_SEG: if (seg_ready) begin
          cur.psn <= cur.psn + seg_npk;
          budget  <= out_of_budget ? 32'd0 : budget - seg_cost;
          wleft   <= win_fill ? 24'd0 : wleft - seg_npk;
          if (seg_done) begin
            cur.ci  <= cur.ci + 16'd1;
            cur.off <= '0;
          end else begin
            cur.off <= cur.off + seg_len;
          end
          if (!seg_done || out_of_budget) pst <= (taken_n == t.n) ? P_END : P_DRAIN;
          else pst <= (taken_n == t.n) ? P_END : P_WQE;
        end
        P_DRAIN: if (wq_valid) begin
          taken_n <= taken_n + 4'd1;
          if (taken_n + 4'd1 == t.n) pst <= P_END;
        end
        // report the bad WQE (at the PSN it would have started at) and stop the QP
        P_LERR: if (lerr_ready) begin
          cur.err <= 1'b1;
          if (!cur.err) cur.refd <= 1'b1;   // refused here (not the report of a stopped QP)
          cur.fl_pi <= t.pi;
          pst <= (taken_n == t.n) ? P_END : P_DRAIN;
        end
        P_END: if (p_go) pst <= P_IDLE;
        P_SKIP: if (wq_valid) begin
          taken_n <= taken_n + 4'd1;
          if (taken_n + 4'd1 == t.n) pst <= P_IDLE;
        end
        default: pst <= P_IDLE;
      endcase
    end
  end

  // ------------------------------------------------------------ emit stage
  // Cuts each segment into MTU packets, one job per cycle.
  logic [31:0] e_off;
  logic [23:0] e_psn;
  logic        e_busy;
  wire [12:0] e_mtu_b  = srnic_pkg::mtu_bytes(sg.mtu);
  wire [31:0] e_remain = sg.len - e_off;
  wire [31:0] e_rlen   = sg.len - sg.off;     // a READ: the bytes requested (the rest of it)
  wire        e_last   = e_remain <= {19'd0, e_mtu_b};
  wire [12:0] e_plen   = e_last ? e_remain[12:0] : e_mtu_b;
  wire        e_first  = e_off == 32'd0;
  wire        e_read   = sg.op == srnic_abi_pkg::WR_READ;
  wire        e_send   = sg.op == srnic_abi_pkg::WR_SEND || sg.op == srnic_abi_pkg::WR_SEND_IMM;
  wire        e_imm    = sg.op == srnic_abi_pkg::WR_SEND_IMM || sg.op == srnic_abi_pkg::WR_WRITE_IMM;
  wire        e_seg_end = e_read || e_off + {19'd0, e_plen} >= sg.off_end;
  // AckReq interval: every 64th PSN, or every W/4-th (a power of two) when the window is smaller
  wire [23:0] e_wq     = win_pk >> 2;
  wire [5:0]  e_ackm   = e_wq >= 24'd64 ? 6'h3F : e_wq >= 24'd32 ? 6'h1F : e_wq >= 24'd16 ? 6'h0F :
                         e_wq >= 24'd8 ? 6'h07 : e_wq >= 24'd4 ? 6'h03 : e_wq >= 24'd2 ? 6'h01 : 6'h00;
  logic [7:0] op;
  always_comb begin
    if (e_read) op = srnic_pkg::OP_READ_REQ;
    else if (e_send) op = (e_first && e_last) ? (e_imm ? srnic_pkg::OP_SEND_ONLY_IMM : srnic_pkg::OP_SEND_ONLY) :
                          e_first ? srnic_pkg::OP_SEND_FIRST :
                          e_last ? (e_imm ? srnic_pkg::OP_SEND_LAST_IMM : srnic_pkg::OP_SEND_LAST) : srnic_pkg::OP_SEND_MIDDLE;
    else op = (e_first && e_last) ? (e_imm ? srnic_pkg::OP_WRITE_ONLY_IMM : srnic_pkg::OP_WRITE_ONLY) :
              e_first ? srnic_pkg::OP_WRITE_FIRST :
              e_last ? (e_imm ? srnic_pkg::OP_WRITE_LAST_IMM : srnic_pkg::OP_WRITE_LAST) : srnic_pkg::OP_WRITE_MIDDLE;
  end
  always_comb begin
    job = '0;
    job.gen       = sg.gen;
    job.qpn       = srnic_pkg::QPN_W'(sg.qpn);
    job.opcode    = op;
    job.psn       = e_psn;
    job.ackreq    = e_read || e_last || (e_psn[5:0] & e_ackm) == e_ackm || (sg.wend && e_seg_end);
    job.se        = e_last && sg.flags[srnic_abi_pkg::WQE_FLAG_SOLICITED] && !e_read;
    job.reth_va   = e_read ? sg.raddr + {32'd0, sg.off} : sg.raddr;
    job.reth_rkey = sg.rkey;
    job.reth_len  = e_read ? e_rlen : sg.len;
    job.resend    = srnic_pkg::psn_gt(sg.psn_hi, e_psn);
    job.imm       = sg.imm;
    job.pay_addr  = sg.pa + {32'd0, e_off};
    job.pay_len   = e_read ? 13'd0 : e_plen;
  end
  // a READ request leaves only together with its context entry
  wire [31:0] e_np_raw = (e_rlen + {19'd0, e_mtu_b} - 32'd1) >> srnic_pkg::mtu_log2(sg.mtu);
  wire [23:0] e_npk    = (e_rlen == 32'd0) ? 24'd1 : e_np_raw[23:0];
  // a segment planned for an earlier incarnation of its QP is dropped whole, unsent
  assign gen_a_qpn = t.qpn;
  assign gen_b_qpn = sg.qpn;
  // (a packet job offered and not yet taken stays offered, stale or not: the TX ICRC stage
  // drops its frame; a READ request is offered only together with its context and may go)
  logic e_held;
  wire e_stale = seg_valid && e_busy && sg.gen != gen_b && (e_read || !e_held);
  assign stale_drop = e_stale || stop_stale || rw_stale;
  assign job_valid = seg_valid && e_busy && !e_stale && (!e_read || rdc_ready);
  assign rdc_valid = seg_valid && e_busy && !e_stale && e_read && job_ready;
  assign rdc_first = e_psn;
  assign rdc_last  = e_psn + e_npk - 24'd1;
  assign rdc_pa    = sg.pa + {32'd0, sg.off};
  assign rdc_mtu   = sg.mtu;
  // payload bytes of the last response: the READ length minus the full-MTU responses before it
  wire [31:0] e_llen = e_rlen - ({8'd0, e_npk - 24'd1} << srnic_pkg::mtu_log2(sg.mtu));
  assign rdc_last_len = e_llen[12:0];
  wire emit = job_valid && job_ready;
  assign seg_pop = (emit && e_seg_end) || e_stale;

  always_ff @(posedge clk) e_held <= !rst && job_valid && !job_ready;
  always_ff @(posedge clk) begin
    if (rst) begin
      e_busy <= 1'b0;
    end else if (seg_valid && !e_busy) begin
      e_busy <= 1'b1; e_off <= sg.off; e_psn <= sg.psn;     // load the segment
    end else if (e_stale) begin
      e_busy <= 1'b0;
    end else if (emit) begin
      if (e_seg_end) e_busy <= 1'b0;
      else begin e_off <= e_off + {19'd0, e_plen}; e_psn <= e_psn + 24'd1; end
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{st_rsp_v, qp_cmd, db_qpn, wq_data, t, np_raw, rem_np_raw, e_np_raw, e_llen[31:13], iss_rwd};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): legal states, WQE read held, WQE buffer reservation,
  // plan-stage bounds, jobs and local-error events held.
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    pst inside {P_IDLE, P_WQE, P_MR, P_SEG, P_DRAIN, P_END, P_LERR, P_SKIP} && kst inside {K_CFG, K_ST, K_PI})
    else $error("srnic_wqe_fetch: illegal state (pst %0d, kst %0d)", pst, kst);
  a_ar_hold: assert property (@(posedge clk) disable iff (rst)
    ar_valid && !ar_ready |=> ar_valid && $stable(ar_addr) && $stable(ar_len))
    else $error("srnic_wqe_fetch: WQE read withdrawn or changed before it was taken");
  a_ar_no_4k_cross: assert property (@(posedge clk) disable iff (rst)
    ar_valid |-> {7'd0, ar_addr[11:6]} + {5'd0, ar_len} < 13'd64)
    else $error("srnic_wqe_fetch: WQE read across a 4 KiB boundary");
  a_wbuf_no_overflow: assert property (@(posedge clk) disable iff (rst)
    r_valid |-> u_wbuf.s_ready)
    else $error("srnic_wqe_fetch: WQE buffer overflow (read data beyond the reservation)");
  a_wbuf_within_resv: assert property (@(posedge clk) disable iff (rst)
    32'(u_wbuf.count) <= 32'(wbuf_resv) && 32'(wbuf_resv) <= WBUF)
    else $error("srnic_wqe_fetch: WQE buffer holds more than reserved, or reservation above WBUF");
  a_plan_in_turn: assert property (@(posedge clk) disable iff (rst)
    pst != P_IDLE |-> taken_n <= t.n)
    else $error("srnic_wqe_fetch: plan stage consumed %0d WQEs of a %0d-WQE turn", taken_n, t.n);
  a_job_hold: assert property (@(posedge clk) disable iff (rst)
    job_valid && !job_ready && !e_read |=> job_valid && $stable(job))
    else $error("srnic_wqe_fetch: packet job withdrawn or changed before it was taken");
  a_lerr_hold: assert property (@(posedge clk) disable iff (rst)
    lerr_valid && !lerr_ready |=> lerr_valid && $stable(lerr))
    else $error("srnic_wqe_fetch: local-error event withdrawn or changed before it was taken");
  a_read_ctx_reserved: assert property (@(posedge clk) disable iff (rst)
    9'(rd_resv) <= {1'b0, rdc_free} + 9'd1)
    else $error("srnic_wqe_fetch: %0d READs planned with %0d READ contexts free", rd_resv, rdc_free);
  a_read_share: assert property (@(posedge clk) disable iff (rst)
    sq_push && w_is_read |-> 8'(rdc_qb_cnt) + 8'(rd_resv_p) < 8'(RD_SHARE) ||
                             {1'b0, rdc_free} + 9'd1 >= 9'(rd_resv) + 9'd2 + 9'(RD_RESERVE))
    else $error("srnic_wqe_fetch: QP %0d plans a READ holding %0d + %0d contexts (share %0d)",
                t.qpn, rdc_qb_cnt, rd_resv_p, RD_SHARE);
  a_cwait_once: assert property (@(posedge clk) disable iff (rst)
    cw_push |-> !p_kick && !cw_full)
    else $error("srnic_wqe_fetch: QP %0d both kicked and put on the READ context wait list", t.qpn);
  a_cwait_no_read: assert property (@(posedge clk) disable iff (rst)
    ctx_push && !a_lk && ctx_in.n != 4'd0 && !a_spec |-> !cw_mem_a)
    else $error("srnic_wqe_fetch: QP %0d read its WQEs while waiting for a READ context", iss_qpn);
  // a turn that is not doomed starts where the QP's send state stands: every turn before it
  // of the same QP planned all the WQEs it read (otherwise it would have doomed this one)
  a_turn_chain: assert property (@(posedge clk) disable iff (rst)
    ctx_pop && !ctx_doom && !ctx.stop && ctx.n != 4'd0 && !ctx.st.err |->
      ctx.fs == ctx.st.ci && (!ctx.spec || ctx.st.off == 32'd0))
    else $error("srnic_wqe_fetch: turn of QP %0d read WQEs from %0d, its send state stands at %0d (offset %0d)",
                ctx.qpn, ctx.fs, ctx.st.ci, ctx.st.off);
  a_turns_per_qp: assert property (@(posedge clk) disable iff (rst)
    ctx_push && a_spec && fl_any_a && !a_lk_doom |-> fl_ok_a && 32'(fl_cnt_a) < TURNS_PER_QP)
    else $error("srnic_wqe_fetch: turn of QP %0d issued behind %0d turns in flight (or a doomed one)", iss_qpn, fl_cnt_a);
  a_wait_for_turns: assert property (@(posedge clk) disable iff (rst)
    rd_req && (take_stop || take_hstop || take_rw) |-> !fl_any_i)
    else $error("srnic_wqe_fetch: stop or rewind of QP %0d read while a turn of it is in flight", sel_qpn);
  // a request packet whose PSN the QP sent before is marked resend (TX_RETRANSMIT counts it,
  // and the RX engine's highest PSN sent must not move back): a shadow of the highest PSN
  // emitted per QP, forgotten when a command sets the send state
  logic [23:0] sh_hi [NUM_QPS];
  logic [NUM_QPS-1:0] sh_v;
  wire         sh_v_e  = sh_v[job.qpn[AW-1:0]];
  wire  [23:0] sh_hi_e = sh_hi[job.qpn[AW-1:0]];
  always_ff @(posedge clk) begin
    if (rst) begin
      /* verilator lint_off WIDTHCONCAT */
      sh_v <= '0;
      /* verilator lint_on WIDTHCONCAT */
    end else begin
      if (emit && (!sh_v_e || !srnic_pkg::psn_gt(sh_hi_e, e_psn + 24'd1))) begin
        sh_v[job.qpn[AW-1:0]] <= 1'b1; sh_hi[job.qpn[AW-1:0]] <= e_psn + 24'd1;
      end
      if (st_go) sh_v[qp_cmd.qpn[AW-1:0]] <= 1'b0;
    end
  end
  a_resend_marked: assert property (@(posedge clk) disable iff (rst)
    emit && sh_v_e && srnic_pkg::psn_gt(sh_hi_e, e_psn) |-> job.resend)
    else $error("srnic_wqe_fetch: QP %0d sent PSN %0h again unmarked (sent up to %0h before; psn_hi %0h)",
                job.qpn, e_psn, sh_hi_e, sg.psn_hi);
  a_read_with_ctx: assert property (@(posedge clk) disable iff (rst)
    job_valid && job_ready && e_read |-> rdc_valid && rdc_ready)
    else $error("srnic_wqe_fetch: READ request sent without its READ context");
`endif
endmodule
`default_nettype wire
