// srnic_rx_engine: processes received packets in arrival order, in two stages. This module
// is the classification stage: it takes one packet (or event) at a time, reads the QP's
// state, runs every check, decides what the packet does and writes the state back; at the
// write-back the packet becomes a job for the placement stage (srnic_rx_place), which
// writes its payload and then emits its task, receive completion and completion event, in
// job order. So the next packets are classified while one is placed: a 512-byte SEND takes
// about 10 cycles of classification and 11 of placement, overlapped (docs/scale.md). The
// stage never waits for the placement stage once a packet is taken (it takes one only when
// the job ring has a free entry), so nothing it does waits on the consumers of its outputs.
//
// Responder (requests: SEND, WRITE, READ): PSN check against the expected PSN (ePSN;
// duplicates are ACKed again, a gap gets one NAK PSN-sequence-error until the expected
// PSN arrives), opcode-sequence check, QP access flags, R_Key check in the MR table,
// receive-WQE fetch for SEND (and WRITE with immediate), length checks, payload
// placement in host memory, MSN, ACK/NAK generation, READ response tasks and receive
// completions. An error of class C (invalid request, remote access) NAKs and moves the
// responder to an error state in which it drops further requests.
// Requester (responses: ACK, NAK, READ responses): a response for a PSN the QP never
// sent (at or after the next PSN the send path will use, which it reports per request on
// snd_*) is dropped and counted as a PSN error, so it can neither complete WQEs that were
// not sent (or not even posted) nor place data; ACK/NAK events to the completion
// engine; READ response data is placed using the READ's context, looked up in
// srnic_rd_ctx (filled when the READ request was sent), and the READ's end is reported
// to the completion engine. Every READ response is checked against its READ before
// anything is placed: the opcode must be the one its position calls for (ONLY for a
// one-packet READ, else FIRST, MIDDLE..., LAST) and the payload exactly the READ's path
// MTU (FIRST, MIDDLE) or the READ's remainder (LAST, ONLY). A response that does not fit
// is not placed and fails the READ with BAD_RESP_ERR, so nothing is written outside
// [pa, pa + READ length), the range the local key allowed. A READ that fails frees its
// srnic_rd_ctx entry; the QP entering the error state frees all of them, and responses
// that reach a QP in error are dropped unplaced.
//
// Payload placement (srnic_rx_place) realigns frame bytes (payload at frame offset 54..74)
// to the destination address at one beat per cycle, with write strobes on partial beats
// and bursts split at 4 KiB boundaries.
//
// Receive WQEs are read on packet arrival by srnic_rx_rqfetch and wait, in packet
// order, in its FIFO; a packet whose fetched WQE is not the QP's next (after a dropped
// packet) or that finds none posted gets an RNR NAK, and the fetch index is
// resynchronised.
//
// Error state of the receive side. A class C error found here, or a requester failure
// of the same QP reported by the completion engine (qerr), moves the receive side to the
// error state: requests are dropped from then on, and the consumer index is handed to
// srnic_rx_rqfetch (a resynchronisation marked err), which flushes every posted receive
// WQE through this engine as flush records; each completes with WR_FLUSH_ERR. A WRITE
// ONLY with immediate consumes its receive WQE before the R_Key check (RNR comes first,
// as in the IBA responder order), so a bad R_Key completes that WQE with REM_ACCESS_ERR.
//
// Go-back-N (requester). A lost packet shows as a NAK PSN sequence error, an RNR NAK, a gap
// in a READ's responses, a response of a later READ while an earlier one got none of its
// responses, an ACK (or NAK) beyond a READ that did not get all its responses
// (implied NAK; an ACK inside a READ's range is none), or a local ACK timeout (tmo_*, from
// the timers). Each starts a retry episode: a CEV_RETRY event names where to resend from
// (the first missing READ response PSN when a READ is partly placed, else the NAK's PSN; for a
// timeout the next send PSN, so the completion engine can tell whether anything is
// outstanding), and the QP is marked (rwp) until the send path
// has applied the completion engine's answer (note_*). Meanwhile the QP's READ responses are dropped (the send path
// drops its READ contexts when it rewinds, and no READ may complete from responses that a
// resend will bring again) and further NAKs only acknowledge (one episode at a time; a NAK
// the responder does not repeat is recovered by the timer). A READ response whose opcode does
// not fit its position is dropped as stale (a response to a READ before a partial re-read);
// one with the right opcode and a wrong length still fails the READ.
// After the note the QP resends (rcv) until in-order progress (a READ response placed, or an
// ACK beyond no unfinished READ): meanwhile responses to what was sent before the rewind
// (an ACK beyond a READ, a sequence NAK, a READ response beyond one without responses) open
// no episode. An episode of a QP holding READ contexts marks it (rrd; its rewind drops
// them): until it holds a READ context again (the resend requested its first READ again) no context shows that an ACK
// is beyond a READ the rewind requests again, so ACKs are no progress then.
// A duplicate READ request is executed again from its own PSN, address and length after the
// R_Key check (a requester re-reading what it lost); it changes no responder state. RNR
// NAKs carry the QP's min_rnr_timer.
// The end of a QP's RNR wait (tmo_rnr) opens a timeout episode marked RTC_RNR_END (no retry
// used; its answer unparks the QP, decision 48); if an episode is open it is kept (rxp) and
// opened when that episode's note comes.
//
// All per-QP receive state lives in srnic_qpc_ram slices read at the start of a packet
// and written back at its end; packets are classified strictly in order, so two packets of
// one QP never overlap in this stage (the placement stage needs no QP state: a job carries
// its destination and its outputs).
`default_nettype none
module srnic_rx_engine #(
  parameter int NUM_QPS = 16384
) (
  input  wire logic         clk,
  input  wire logic         rst,
  // parsed packets and their frame beats
  input  wire logic         meta_valid,
  input  var srnic_pkg::rx_meta_t meta,
  output logic              meta_ready,
  input  wire logic         d_valid,
  input  wire logic [511:0] d_data,
  output logic              d_ready,
  // configuration and doorbells
  input  wire logic         qp_cmd_valid,
  input  var srnic_pkg::qp_cmd_t qp_cmd,
  output logic              qp_cmd_ready,
  // MR checks
  output logic              mr_req,
  output logic [31:0]       mr_key,
  output logic [31:0]       mr_pd,
  output logic [3:0]        mr_access,
  output logic [63:0]       mr_va,
  output logic [31:0]       mr_len,
  input  wire logic         mr_rsp,
  input  wire logic         mr_ok,
  input  wire logic [63:0]  mr_pa,
  // receive WQEs fetched on arrival (srnic_rx_rqfetch)
  input  wire logic         wqe_valid,
  input  wire logic [511:0] wqe_data,
  output logic              wqe_pop,
  output logic              resync_valid,
  input  wire logic         resync_ready,
  output logic [15:0]       resync_qpn,
  output logic [15:0]       resync_ci,
  output logic              resync_err,
  // the completion engine moved a QP to the error state
  input  wire logic         qerr_valid,
  input  wire logic [15:0]  qerr_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] qerr_gen,   // the incarnation it was made for
  output logic              qerr_ready,
  // a qerr waits in the completion engine to enter the qerr queue: packets wait for it too
  input  wire logic         qerr_owed,
  // go-back-N: a QP's retry episode was answered by the send path; a QP's local ACK timeout
  input  wire logic         note_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] note_qpn,
  input  wire logic         note_gen,    // the low bit of the incarnation it was made for
  output logic              note_ready,
  // a note waits in the core's note queue to be offered (owed_fifo): packets wait for it too
  input  wire logic         note_owed,
  input  wire logic         tmo_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] tmo_qpn,
  input  wire logic         tmo_rnr,      // not a timeout: the QP's RNR wait ended
  output logic              tmo_ready,
  // re-ACK events (srnic_resp_tx, decisions 106, 116): answer the QP from its state (a plain
  // ACK of ePSN - 1, or a NAK PSN sequence error of ePSN while nak_sent)
  input  wire logic         rack_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] rack_qpn,
  output logic              rack_ready,
  // responder queue reservations (srnic_resp_tx, decision 116): a request packet is taken
  // with a slot reserved for an answer that cannot be regenerated (READ, RNR or fatal NAK);
  // without a free slot it is dropped unexecuted
  input  wire logic         resv_room,
  output logic              resv_take,
  output logic              resv_rel,
  // is a READ response of rdq_qpn being taken, classified or placed (from its take until its
  // payload is written; combinational): srnic_comp holds that QP's failed and flushed READ
  // completions meanwhile
  input  wire logic [$clog2(NUM_QPS)-1:0] rdq_qpn,
  output logic              rdq_busy,
  // payload writes
  output logic              aw_valid,
  output logic [63:0]       aw_addr,
  output logic [7:0]        aw_len,
  input  wire logic         aw_ready,
  output logic              w_valid,
  output logic [511:0]      w_data,
  output logic [63:0]       w_strb,
  output logic              w_last,
  input  wire logic         w_ready,
  // responder transmit tasks
  output logic              task_valid,
  output srnic_pkg::resp_task_t task_out,
  input  wire logic         task_ready,
  // completion engine
  output logic              cev_valid,
  output srnic_pkg::comp_ev_t cev,
  input  wire logic         cev_ready,
  // READ contexts
  output logic              rdc_lk_valid,
  output logic [$clog2(NUM_QPS)-1:0] rdc_lk_qpn,
  output logic [23:0]       rdc_lk_psn,
  input  wire logic         rdc_lk_rsp,
  input  wire logic         rdc_lk_hit,
  input  wire logic [5:0]   rdc_lk_idx,
  input  wire logic [63:0]  rdc_lk_pa,
  input  wire logic [23:0]  rdc_lk_first,
  input  wire logic [23:0]  rdc_lk_last,
  input  wire logic [2:0]   rdc_lk_mtu,
  input  wire logic [12:0]  rdc_lk_last_len,
  // the entry of the READ in progress, read by its index (combinational)
  output logic [5:0]        rdc_rx_idx,
  input  wire logic         rdc_rx_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] rdc_rx_qpn,
  input  wire logic [63:0]  rdc_rx_pa,
  input  wire logic [23:0]  rdc_rx_first,
  input  wire logic [23:0]  rdc_rx_last,
  input  wire logic [2:0]   rdc_rx_mtu,
  input  wire logic [12:0]  rdc_rx_last_len,
  output logic              rdc_free_valid,
  output logic [5:0]        rdc_free_idx,
  output logic [$clog2(NUM_QPS)-1:0] rdc_free_qpn,
  // does the QP have a READ that ends before the ACK/NAK's PSN (combinational)
  output logic [$clog2(NUM_QPS)-1:0] rdc_bq_qpn,
  output logic [23:0]       rdc_bq_psn,
  input  wire logic         rdc_bq_hit,
  input  wire logic         rdc_bq_any,    // the QP has any outstanding READ context
  output logic              rdc_flush_valid,
  output logic              rdc_qerr_flush_valid,
  output logic [$clog2(NUM_QPS)-1:0] rdc_qerr_flush_qpn,
  // receive completions
  output logic              cqe_valid,
  output srnic_pkg::cqe_req_t cqe,
  input  wire logic         cqe_ready,
  // a request left the send path: snd_next is the PSN after it (after a READ's responses)
  input  wire logic         snd_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] snd_qpn,
  input  wire logic [23:0]  snd_next,
  // local ACK timer (srnic_timer kicks): an accepted response restarts the QP's timer, or
  // stops it when everything sent is acknowledged; held until taken
  output logic              tk_valid,
  output logic [$clog2(NUM_QPS)-1:0] tk_qpn,
  output logic              tk_stop,
  input  wire logic         tk_ready,
  // counters
  output logic              cnt_drop_qp,
  output logic              cnt_dup,
  output logic              cnt_no_room,   // a request dropped unexecuted: no responder queue slot
  output logic              cnt_psn_err,
  output logic              cnt_access_err,
  output logic              cnt_rx_nak,
  // performance counters: the classification stage holds a packet or event; the placement
  // stage's mover works on a job
  output logic              busy_cls,
  output logic              busy_place,
  // QP incarnations (srnic_qp_gen, decision 109): a for the QP of the packet or event in hand
  // (stamped on the answers and completion events it makes), b for a qerr, or a note when no
  // qerr is offered, which is dropped if it was made for an earlier incarnation (stale_drop; a
  // note carries the incarnation's low bit, decision 112)
  output logic [$clog2(NUM_QPS)-1:0] gen_a_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_a,
  output logic [$clog2(NUM_QPS)-1:0] gen_b_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_b,
  output logic              stale_drop
);
  localparam int AW = $clog2(NUM_QPS);

  // ---------------------------------------------------------------- per-QP state
  typedef struct packed {
    logic [2:0]  state;
    logic [2:0]  mtu;
    logic [3:0]  access;
    logic [31:0] pd;
    logic [15:0] recv_cqn;
    logic [4:0]  min_rnr;    // RNR timer code of this QP's RNR NAKs
  } rxcfg_t;
  typedef struct packed {
    logic [23:0] epsn;
    logic [23:0] msn;
    logic [15:0] rq_ci;
    logic [1:0]  in_msg;     // 0 none, 1 SEND, 2 WRITE
    logic        nak_sent;
    logic        err;
    // the message in progress (in_msg), WRITE or SEND alike: one set of fields, since a
    // message starts only when none is in progress
    logic [63:0] m_pa;       // next destination byte
    logic [31:0] m_len;      // WRITE: the RETH's DMA length; SEND: the receive buffer's length
    logic [31:0] m_done;     // bytes placed so far
    logic [63:0] rcv_wrid;   // the receive WQE a SEND (or WRITE with immediate) consumes
    logic [15:0] rcv_idx;
    logic        rd_valid;   // a READ's responses are being placed: its srnic_rd_ctx entry
    logic [5:0]  rd_idx;     // (address, PSN range, path MTU, last response length) is read
                             // by this index; it stays the QP's until rd_valid clears
    logic [23:0] rd_next;    // the READ response PSN expected next
    logic        rwp;        // a retry episode is open (rewind pending)
    logic        rcv;        // resending after an episode: no in-order progress seen yet
    logic        rrd;        // an episode's rewind drops READ contexts: an ACK is progress only
                             // once the QP holds a READ context again
    logic        rxp;        // an RNR wait ended during an episode: its episode follows the note
  } rxst_t;
  rxcfg_t cmd_cfg;
  rxst_t  cmd_st;
  rxst_t  st_q;
  localparam int CFG_W = $bits(cmd_cfg);
  localparam int ST_W  = $bits(cmd_st);
  always_comb begin
    cmd_cfg.state = qp_cmd.state; cmd_cfg.mtu = qp_cmd.mtu; cmd_cfg.access = qp_cmd.access;
    cmd_cfg.pd = qp_cmd.pd;
    cmd_cfg.recv_cqn = qp_cmd.recv_cqn; cmd_cfg.min_rnr = qp_cmd.min_rnr;
    cmd_st = '0;
    cmd_st.epsn = qp_cmd.rq_psn;
  end
  // command: configuration, then the receive state on RESET->INIT / INIT->RTR
  typedef enum logic {K_CFG, K_ST} kstate_e;
  kstate_e kst;
  logic cfg_ext_ready, st_ext_ready;
  wire need_st = qp_cmd.init_idx || qp_cmd.init_rq_psn;
  wire cfg_ext = qp_cmd_valid && kst == K_CFG;
  wire st_ext  = qp_cmd_valid && kst == K_ST;
  // RTR->RTS also sets the next send PSN (below); it waits for a cycle without a send-path write.
  // A RESET waits while a packet or event of its QP is in process (rst_hold, decision 125): the
  // work it makes at write-back is stamped with the incarnation read then, which must still be
  // the old one (the incarnation advances once every block has taken the command). A packet
  // whose context is read in the cycle the command is taken sees RESET (the read forwards the
  // write) and is dropped.
  logic rst_hold;
  assign qp_cmd_ready = qp_cmd_valid && !(qp_cmd.init_sq_psn && snd_wr) && !rst_hold &&
                        ((kst == K_CFG && cfg_ext_ready && !need_st) || (kst == K_ST && st_ext_ready));
  always_ff @(posedge clk) begin
    if (rst) kst <= K_CFG;
    else if (qp_cmd_ready) kst <= K_CFG;
    else if (kst == K_CFG && cfg_ext && cfg_ext_ready) kst <= K_ST;
  end

  logic          rd_req, cfg_ready, st_ready, cfg_v, st_v;
  logic [AW-1:0] rd_qpn;
  logic [CFG_W-1:0] cfg_rsp;
  logic [ST_W-1:0]  st_rsp;
  assign st_q = st_rsp;
  logic          st_wr;
  rxst_t         s;          // working copy of the receive state
  rxcfg_t        c;
  logic [AW-1:0] qpn;

  srnic_qpc_ram #(.WIDTH(CFG_W), .NUM_QPS(NUM_QPS)) u_cfg (
    .clk, .rst, .req_valid(rd_req), .req_ready(cfg_ready), .req_qpn(rd_qpn), .req_lock(1'b0),
    .rsp_valid(cfg_v), .rsp_data(cfg_rsp),
    .wr_valid(1'b0), .wr_qpn('0), .wr_data('0), .wr_unlock(1'b0),
    .ext_valid(cfg_ext), .ext_ready(cfg_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_cfg));
  srnic_qpc_ram #(.WIDTH(ST_W), .NUM_QPS(NUM_QPS), .LOCKS(1)) u_st (
    .clk, .rst, .req_valid(rd_req), .req_ready(st_ready), .req_qpn(rd_qpn), .req_lock(1'b1),
    .rsp_valid(st_v), .rsp_data(st_rsp),
    .wr_valid(st_wr), .wr_qpn(qpn), .wr_data(s), .wr_unlock(1'b1),
    .ext_valid(st_ext), .ext_ready(st_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_st));

  // Next PSN the send path will use, per QP: written (one cycle after the request left the
  // send path, a register in between) as each request leaves and on RTR->RTS; read with the
  // receive state.
  logic          snd_wr;
  logic [AW-1:0] snd_wr_qpn;
  logic [23:0]   snd_wr_psn;
  always_ff @(posedge clk) begin
    if (rst) snd_wr <= 1'b0;
    else snd_wr <= snd_valid;
    snd_wr_qpn <= snd_qpn;
    snd_wr_psn <= snd_next;
  end
  wire         snd_cmd = qp_cmd_ready && qp_cmd.init_sq_psn;
  // a request of the QP in process left the send path after its next PSN was read (or is
  // leaving now): snd_nxt may be stale, so the timer is restarted, never stopped
  logic        snd_seen;
  wire         snd_now = (snd_wr && snd_wr_qpn == qpn) || (snd_valid && snd_qpn == qpn);
  logic [23:0] snd_rsp, snd_nxt;
  sdp_ram #(.WIDTH(24), .DEPTH(NUM_QPS)) u_snd (
    .clk, .wr_en(snd_wr || snd_cmd), .wr_addr(snd_wr ? snd_wr_qpn : qp_cmd.qpn[AW-1:0]),
    .wr_data(snd_wr ? snd_wr_psn : qp_cmd.sq_psn), .rd_en(rd_req), .rd_addr(rd_qpn), .rd_data(snd_rsp));

  // ---------------------------------------------------------------- packet FSM
  typedef enum logic [4:0] {
    E_IDLE, E_READ, E_CLASSIFY, E_MR, E_RQ_R, E_RQ_MR, E_RQ_USE, E_RDLK,
    E_FINISH, E_WB, E_SKIPW, E_RESYNC, E_FLUSH
  } estate_e;
  estate_e    est;
  srnic_pkg::rx_meta_t   m;
  logic [7:0] nbeats;          // frame beats of the packet in the RX buffer (the job takes them)
  assign rst_hold = qp_cmd.state == 3'(srnic_abi_pkg::QPS_RESET) && est != E_IDLE && qpn == qp_cmd.qpn[AW-1:0];

  wire [7:0]  op       = m.opcode;
  wire        is_resp  = op >= srnic_pkg::OP_READ_RESP_FIRST;
  wire        is_send  = op <= srnic_pkg::OP_SEND_ONLY_IMM;
  wire        is_write = op >= srnic_pkg::OP_WRITE_FIRST && op <= srnic_pkg::OP_WRITE_ONLY_IMM;
  wire        is_rreq  = op == srnic_pkg::OP_READ_REQ;
  wire        is_first = op == srnic_pkg::OP_SEND_FIRST || op == srnic_pkg::OP_SEND_ONLY || op == srnic_pkg::OP_SEND_ONLY_IMM ||
                         op == srnic_pkg::OP_WRITE_FIRST || op == srnic_pkg::OP_WRITE_ONLY || op == srnic_pkg::OP_WRITE_ONLY_IMM;
  wire        is_last  = op == srnic_pkg::OP_SEND_LAST || op == srnic_pkg::OP_SEND_LAST_IMM || op == srnic_pkg::OP_SEND_ONLY ||
                         op == srnic_pkg::OP_SEND_ONLY_IMM || op == srnic_pkg::OP_WRITE_LAST || op == srnic_pkg::OP_WRITE_LAST_IMM ||
                         op == srnic_pkg::OP_WRITE_ONLY || op == srnic_pkg::OP_WRITE_ONLY_IMM;
  wire        has_imm  = srnic_pkg::op_has_imm(op);
  wire        needs_rwqe_now = (is_send && is_first) || (is_write && has_imm && is_last);
  wire [12:0] mtu_b    = srnic_pkg::mtu_bytes(c.mtu);
  wire [3:0]  mtu_l2   = srnic_pkg::mtu_log2(c.mtu);
  wire [23:0] psn_d    = m.psn - s.epsn;
  wire        psn_ok   = psn_d == 24'd0;
  wire        psn_dup  = psn_d[23];           // behind ePSN (within the half window)
  // packets of a READ's responses: 33 bits, so a length near 2^32 cannot wrap the sum (and a
  // length above MAX_MSG_BYTES is refused: at most 2^23 packets, within the PSN half window)
  wire [32:0] rd_np_raw = ({1'b0, m.reth_len} + {20'd0, mtu_b} - 33'd1) >> mtu_l2;
  wire [23:0] rd_npkts  = (m.reth_len == 32'd0) ? 24'd1 : rd_np_raw[23:0];
  wire        qp_rx_ok  = c.state == 3'(srnic_abi_pkg::QPS_RTR) || c.state == 3'(srnic_abi_pkg::QPS_RTS);
  wire        qp_tx_ok  = c.state == 3'(srnic_abi_pkg::QPS_RTS);
  // a QP that exists (not RESET): its failures and receive flushes are carried out, also in
  // INIT and in the ERR state the host moved it to
  wire        qp_live   = c.state != 3'(srnic_abi_pkg::QPS_RESET);
  // a response for a PSN never sent: at or after the next send PSN (a PSN-sequence NAK names
  // the PSN the responder expects, which may be the next one)
  wire        rsp_ghost = is_resp && srnic_pkg::psn_ge(m.psn, snd_nxt) &&
                          !(op == srnic_pkg::OP_ACK && m.aeth_syn == srnic_pkg::AETH_NAK_PSN && m.psn == snd_nxt);
  wire        seq_ok    = is_rreq ? s.in_msg == 2'd0 :
                          is_first ? s.in_msg == 2'd0 :
                          is_send ? s.in_msg == 2'd1 : s.in_msg == 2'd2;
  wire        acc_ok    = is_write ? c.access[srnic_abi_pkg::ACC_REMOTE_WRITE] :
                          is_rreq ? c.access[srnic_abi_pkg::ACC_REMOTE_READ] : 1'b1;
  // payload length rules
  wire [31:0] wr_resid  = s.m_len - s.m_done;   // WRITE: bytes still to come
  // a RETH (READ request, WRITE FIRST/ONLY) asking for more than IBA's largest message is an
  // invalid request (NAK Invalid Request, the responder enters its error state)
  wire        reth_big  = (is_rreq || (is_write && is_first)) && m.reth_len > srnic_pkg::MAX_MSG_BYTES;
  wire        len_ok    = reth_big ? 1'b0 :
                          is_send ? ((is_last || m.pay_len == mtu_b) && m.pay_len <= mtu_b) :
                          is_write ? (is_first ? (is_last ? {19'd0, m.pay_len} == m.reth_len
                                                          : (m.pay_len == mtu_b && m.reth_len > {19'd0, mtu_b}))
                                               : (is_last ? {19'd0, m.pay_len} == wr_resid
                                                          : (m.pay_len == mtu_b && wr_resid > {19'd0, mtu_b}))) :
                          m.pay_len == 13'd0;
  wire        rcv_fits  = {19'd0, m.pay_len} + s.m_done <= s.m_len;
  // The opcode alone fits the position (a response with another opcode belongs to another
  // request for this PSN: a READ sent again from its first PSN after a partial re-read began).
  // The first PSN of a READ may also be answered as the continuation of an earlier READ that
  // covered it: a partial re-read (requested from the first missing response) is answered
  // with FIRST/ONLY by a responder that runs it as a new READ (srnic) and with MIDDLE/LAST by
  // one that replays the original READ from that PSN (Linux rxe). Either carries the bytes of
  // that PSN: a PSN always stands for the same part of the same WQE (resends regenerate
  // them), and the length is checked against the position all the same.
  function automatic logic op_fits(input logic [7:0] opc, input logic [23:0] psn,
                                   input logic [23:0] first, input logic [23:0] last);
    if (psn == first && psn == last) op_fits = opc == srnic_pkg::OP_READ_RESP_ONLY || opc == srnic_pkg::OP_READ_RESP_LAST;
    else if (psn == first)           op_fits = opc == srnic_pkg::OP_READ_RESP_FIRST || opc == srnic_pkg::OP_READ_RESP_MIDDLE;
    else if (psn == last)            op_fits = opc == srnic_pkg::OP_READ_RESP_LAST;
    else                             op_fits = opc == srnic_pkg::OP_READ_RESP_MIDDLE;
  endfunction
  // A READ response fits its READ [first, last] (path MTU, last response length) when its
  // opcode is the one its PSN's position calls for and its payload has the exact length.
  function automatic logic rsp_fits(input logic [7:0] opc, input logic [23:0] psn,
                                    input logic [23:0] first, input logic [23:0] last,
                                    input logic [2:0] mtu, input logic [12:0] llen,
                                    input logic [12:0] plen);
    logic at_first, at_last;
    at_first = psn == first;
    at_last  = psn == last;
    if (at_first && at_last) rsp_fits = op_fits(opc, psn, first, last) && plen == llen;
    else if (at_first)       rsp_fits = op_fits(opc, psn, first, last) && plen == srnic_pkg::mtu_bytes(mtu);
    else if (at_last)        rsp_fits = opc == srnic_pkg::OP_READ_RESP_LAST && plen == llen;
    else                     rsp_fits = opc == srnic_pkg::OP_READ_RESP_MIDDLE && plen == srnic_pkg::mtu_bytes(mtu);
  endfunction
  // the READ in progress (s.rd_valid), from its srnic_rd_ctx entry
  assign rdc_rx_idx = s.rd_idx;
  wire [63:0] rd_pa    = rdc_rx_pa;
  wire [23:0] rd_first = rdc_rx_first;
  wire [23:0] rd_last  = rdc_rx_last;
  wire [2:0]  rd_mtu   = rdc_rx_mtu;
  wire [12:0] rd_llen  = rdc_rx_last_len;
  wire rsp_ok_cur = rsp_fits(op, m.psn, rd_first, rd_last, rd_mtu, rd_llen, m.pay_len);
  wire rsp_ok_lk  = rsp_fits(op, m.psn, rdc_lk_first, rdc_lk_last, rdc_lk_mtu, rdc_lk_last_len, m.pay_len);
  wire op_ok_cur = op_fits(op, m.psn, rd_first, rd_last);
  wire op_ok_lk  = op_fits(op, m.psn, rdc_lk_first, rdc_lk_last);
  // an ACK or NAK beyond a READ that is not complete (implied NAK): the one in progress (resend
  // from its first missing response) or one without any response yet (srnic_rd_ctx query)
  wire rd_cur_beyond = s.rd_valid && srnic_pkg::psn_gt(m.psn, rd_last);
  wire rd_beyond     = rd_cur_beyond || rdc_bq_hit;
  logic       rd_fail_free;    // the READ failed: free its srnic_rd_ctx entry with the event
  logic [5:0] rd_fail_idx;

  // outcome of the classification
  logic [63:0] dst;         // placement address
  logic        do_place;    // the job places the payload at dst
  logic        want_cev;    // a completion engine event
  logic        ack;         // send an ACK/NAK task
  logic [7:0]  ack_syn;
  logic [23:0] ack_psn;
  logic        rd_task;
  logic [63:0] rd_pa_q;
  logic        want_cqe;
  logic [7:0]  cqe_status;
  srnic_pkg::comp_ev_t    cev_q;
  logic [31:0] total_len;   // READ response: none; WRITE_IMM: DMA length; SEND: bytes received
  logic        is_qerr;     // not a packet: the completion engine reports the QP in error
  logic        is_note;     // not a packet: the QP's retry episode was answered
  logic        is_tmo;      // not a packet: the QP's local ACK timeout expired
  logic        is_rnr_end;  // ... or, with is_tmo, its RNR wait ended
  logic        is_rack;     // not a packet: the QP is owed a plain ACK (its ACK was deferred)
  wire         is_ev = is_qerr || is_note || is_tmo || is_rack;   // an event, not a packet
  logic        dup_rd;      // a duplicate READ request, executed again
  logic        err0;        // the receive side was in error when the packet started
  logic        acc_fail;    // WRITE ONLY with immediate, bad R_Key: its receive WQE completes in error
  wire         err_new = s.err && !err0;   // this packet moved it there: hand over
  logic        resv_q;      // the packet holds a responder queue reservation
  logic        no_room;     // a request packet taken without one: dropped unexecuted



  // The engine is the only reader of its state RAMs and releases its lock before E_IDLE,
  // so reads issued from E_IDLE are always accepted (checked below).
  // Nothing starts while a timer kick of the previous packet waits (one kick per packet), or
  // while the placement stage has no free job entry: a packet taken always finds one at its
  // write-back, so the engine never waits for the stage (nor for what waits on its outputs).
  logic  job_ready;
  wire   can_take   = est == E_IDLE && !tk_valid && job_ready;
  assign qerr_ready = can_take && qerr_valid;
  assign note_ready = can_take && !qerr_valid && note_valid;
  assign tmo_ready  = can_take && !qerr_valid && !note_valid && tmo_valid;
  assign rack_ready = can_take && !qerr_valid && !note_valid && !tmo_valid && rack_valid;
  wire   ev_take    = qerr_ready || note_ready || tmo_ready || rack_ready;   // an event that is not a packet
  wire   idle_take  = can_take && meta_valid && !qerr_valid && !qerr_owed && !note_valid && !note_owed && !tmo_valid &&
                      !rack_valid;
  // READ responses in flight through the engine. With qerr taken first (idle_take waits for
  // it, and for one still owed in the completion engine), a response taken after a failure was reported is dropped; only ones taken before may
  // still be placing: the one being classified (from its take to its write-back) and those
  // in the placement stage.
  wire   meta_rdata = meta.opcode >= srnic_pkg::OP_READ_RESP_FIRST && meta.opcode <= srnic_pkg::OP_READ_RESP_ONLY;
  wire   cur_rdata  = m.opcode >= srnic_pkg::OP_READ_RESP_FIRST && m.opcode <= srnic_pkg::OP_READ_RESP_ONLY;
  logic  place_busy;
  assign rdq_busy   = (idle_take && meta_rdata && !meta.drop && meta.dqpn[AW-1:0] == rdq_qpn) ||
                      (est != E_IDLE && !is_ev && cur_rdata && qpn == rdq_qpn) ||
                      place_busy;
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && rd_req && !(cfg_ready && st_ready)) $error("srnic_rx_engine: state read refused in E_IDLE");
    // an answer that cannot be regenerated comes only from a packet holding a reservation
    if (!rst && est == E_WB && ack && !srnic_pkg::resp_deferrable(rd_task, ack_syn) && !resv_q)
      $error("srnic_rx_engine: QP %0d: a READ, RNR or fatal NAK answer without a responder queue reservation", qpn);
  end
`endif
  assign meta_ready = idle_take;
  wire   meta_req   = !meta.drop && {8'd0, meta.dqpn} < NUM_QPS && !meta.rq_flush &&
                      meta.opcode < srnic_pkg::OP_READ_RESP_FIRST;
  assign resv_take  = idle_take && meta_req && resv_room;
  // at the write-back the slot goes back unless the answer is one that holds it
  assign resv_rel   = est == E_WB && resv_q && !(ack && !srnic_pkg::resp_deferrable(rd_task, ack_syn));
  assign gen_b_qpn  = qerr_valid ? qerr_qpn[AW-1:0] : note_qpn;
  wire   qerr_ok    = {16'd0, qerr_qpn} < NUM_QPS && qerr_gen == gen_b;
  wire   note_ok    = note_gen == gen_b[0];
  assign stale_drop = (qerr_ready && {16'd0, qerr_qpn} < NUM_QPS && qerr_gen != gen_b) || (note_ready && !note_ok);
  assign rd_req     = (idle_take && !meta.drop && {8'd0, meta.dqpn} < NUM_QPS) || (qerr_ready && qerr_ok) ||
                      (note_ready && note_ok) || tmo_ready || rack_ready;
  assign rd_qpn     = qerr_ready ? qerr_qpn[AW-1:0] : note_ready ? note_qpn : tmo_ready ? tmo_qpn :
                      rack_ready ? rack_qpn : meta.dqpn[AW-1:0];

  // MR check requests
  logic [31:0] rq_len;
  logic [63:0] rw_wrid, rw_pa;      // receive WQE being consumed
  logic        rw_ok;
  // E_CLASSIFY sends a request to E_MR (its R_Key check) when it is a READ (new or a
  // duplicate) or a WRITE FIRST/ONLY with a length that passed every check before that one
  // (the branch order of E_CLASSIFY below). The check is asked for in E_CLASSIFY itself, so
  // its answer comes a cycle earlier than from a request made in E_MR; a_cls_mr holds this
  // condition to the branches that go to E_MR.
  wire cls_req  = !is_ev && !m.rq_flush && !is_resp && qp_rx_ok && !s.err && !no_room;
  wire cls_rkey = (is_rreq || (is_write && is_first)) && acc_ok && len_ok && m.reth_len != 32'd0;
  wire cls_mr   = est == E_CLASSIFY && cls_req && cls_rkey &&
                  ((psn_dup && is_rreq) ||
                   (!psn_dup && psn_ok && seq_ok &&
                    !(is_write && has_imm && is_last && !(m.rq_fetched && m.rq_idx == s.rq_ci))));
  always_comb begin
    mr_req = cls_mr || (est == E_RQ_R && wqe_valid);
    mr_pd  = c.pd;
    if (est == E_RQ_R) begin
      mr_key    = wqe_data[srnic_abi_pkg::RQWQE_LKEY_OFF*8 +: 32];
      mr_access = 4'b0001;
      mr_va     = wqe_data[srnic_abi_pkg::RQWQE_ADDR_OFF*8 +: 64];
      mr_len    = wqe_data[srnic_abi_pkg::RQWQE_LENGTH_OFF*8 +: 32];
    end else begin
      mr_key    = m.reth_rkey;
      mr_access = is_rreq ? 4'b0100 : 4'b0010;
      mr_va     = m.reth_va;
      mr_len    = m.reth_len;
    end
  end


  // ---------------------------------------------------------------- outputs to other blocks
  srnic_pkg::resp_task_t tsk;
  srnic_pkg::cqe_req_t   rcqe;
  always_comb begin
    tsk = '0;
    tsk.is_read  = rd_task;
    tsk.qpn      = srnic_pkg::QPN_W'(qpn);
    tsk.psn      = ack_psn;
    tsk.syndrome = ack_syn;
    tsk.msn      = s.msn;
    tsk.addr     = rd_pa_q;
    tsk.len      = m.reth_len;
    tsk.mtu      = c.mtu;
  end
  logic rdlk_sent;
  assign rdc_lk_valid = est == E_RDLK && !rdlk_sent;
  assign rdc_lk_psn   = m.psn;
  assign rdc_lk_qpn   = qpn;
  assign rdc_free_valid = (est == E_FINISH && is_resp && m.psn == rd_last) ||
                          (est == E_WB && rd_fail_free);
  assign rdc_free_idx   = (est == E_WB) ? rd_fail_idx : s.rd_idx;
  assign rdc_free_qpn   = qpn;
  assign rdc_bq_qpn     = qpn;
  assign rdc_bq_psn     = m.psn;
  assign tk_qpn         = qpn;
  // a QP moved to RESET (from any state: no error flush need have freed anything) and a QP
  // initialised again free every READ context the QP still holds
  assign rdc_flush_valid = qp_cmd_ready && (qp_cmd.init_idx || qp_cmd.state == 3'(srnic_abi_pkg::QPS_RESET));
  // a QP in error loses its READ contexts. A retry episode keeps them until the rewind (the
  // send path drops them when it applies it): a fence waits for them, so a fenced WQE cannot
  // leave with what an unfinished READ has not placed yet (decision 47)
  assign rdc_qerr_flush_valid = est == E_CLASSIFY && is_qerr;
  assign rdc_qerr_flush_qpn   = qpn;
  always_ff @(posedge clk) begin
    if (rst || est != E_RDLK) rdlk_sent <= 1'b0;
    else rdlk_sent <= 1'b1;
  end
  always_comb begin
    rcqe = '0;
    rcqe.cqn      = c.recv_cqn;
    rcqe.wr_id    = s.rcv_wrid;        // flush: the flushed WQE's (set in E_FLUSH)
    rcqe.byte_len = total_len;
    rcqe.imm      = m.imm;
    rcqe.qpn      = srnic_pkg::QPN_W'(qpn);
    rcqe.wqe_idx  = s.rcv_idx;
    rcqe.opcode   = is_write ? srnic_abi_pkg::WC_RECV_RDMA_WITH_IMM : srnic_abi_pkg::WC_RECV;
    rcqe.status   = cqe_status;
    rcqe.with_imm = has_imm;
  end
  assign st_wr = est == E_WB;
  logic wqe_owed;            // this packet's fetched receive WQE is still in the FIFO
  assign wqe_pop      = (est == E_RQ_R || est == E_SKIPW || est == E_FLUSH) && wqe_valid;
  assign resync_valid = est == E_RESYNC;
  assign resync_qpn   = 16'(qpn);
  assign resync_ci    = s.rq_ci;
  assign resync_err   = s.err;      // E_RESYNC in error state only to hand over

  // counters
  wire   cls_pkt        = est == E_CLASSIFY && !is_ev && !m.rq_flush;   // classifying a packet
  assign cnt_drop_qp    = (idle_take && !meta.drop && {8'd0, meta.dqpn} >= NUM_QPS) ||
                          (cls_pkt && (is_resp ? !qp_tx_ok : !qp_rx_ok));
  assign cnt_dup        = cls_pkt && !is_resp && qp_rx_ok && !s.err && !no_room && psn_dup;
  assign cnt_no_room    = cls_pkt && !is_resp && qp_rx_ok && !s.err && no_room;
  assign cnt_psn_err    = (cls_pkt && !is_resp && qp_rx_ok && !s.err && !no_room && !psn_ok && !psn_dup) ||
                          (cls_pkt && is_resp && qp_tx_ok && rsp_ghost) ||        // never sent
                          (est == E_RDLK && rdc_lk_rsp && !rdc_lk_hit);           // no READ there
  assign cnt_access_err = est == E_MR && mr_rsp && !mr_ok;
  assign cnt_rx_nak     = cls_pkt && qp_tx_ok && !rsp_ghost && op == srnic_pkg::OP_ACK && m.aeth_syn[6:5] != 2'b00;

  // ---------------------------------------------------------------- placement stage
  // A packet leaves this stage at its write-back (a dropped frame at its take) as a job:
  // its payload, its frame beats and what it produces once placed.
  srnic_pkg::rx_job_t job;
  logic  place_idle;   // (unused: the ring's state is visible in its bench)
  wire   drop_push = idle_take && (meta.drop || {8'd0, meta.dqpn} >= NUM_QPS);
  wire   job_push  = est == E_WB || drop_push;
  always_comb begin
    job = '0;
    if (drop_push) begin
      job.nbeats   = meta.nbeats;
    end else begin
      job.place    = do_place;
      job.dst      = dst;
      job.pay_off  = m.pay_off;
      job.pay_len  = m.pay_len;
      job.nbeats   = nbeats;
      job.rd       = cur_rdata && !is_ev;
      job.qpn      = srnic_pkg::QPN_W'(qpn);
      job.has_task = ack;
      job.task_    = tsk;
      job.task_.gen = gen_a;
      job.has_cqe  = want_cqe;
      job.cqe      = rcqe;
      job.cqe.gen  = gen_a;
      job.has_cev  = want_cev;
      job.cev      = cev_q;
      job.cev.gen  = gen_a;
    end
  end
  assign gen_a_qpn = qpn;
  // A packet to place is announced in its E_FINISH cycle (its write-back, and push, follow in
  // the next): an idle mover starts one cycle earlier.
  srnic_rx_place #(.NUM_QPS(NUM_QPS)) u_place (
    .clk, .rst, .job_valid(job_push), .job_in(job), .job_ready,
    .pre_valid(est == E_FINISH && do_place), .pre_job(job),
    .d_valid, .d_data, .d_ready,
    .aw_valid, .aw_addr, .aw_len, .aw_ready, .w_valid, .w_data, .w_strb, .w_last, .w_ready,
    .task_valid, .task_out, .task_ready, .cqe_valid, .cqe, .cqe_ready, .cev_valid, .cev, .cev_ready,
    .rdq_qpn, .rdq_busy(place_busy), .idle(place_idle), .mv_busy(busy_place));
  assign busy_cls = est != E_IDLE;

  // ---------------------------------------------------------------- sequencing
  // A READ this engine fails moves the QP to the error state at once, so the responses of
  // its later READs, right behind on the wire, are not placed (the completion engine's
  // qerr follows and finds the QP in error already); a receive WQE a SEND in progress
  // holds is flushed now, as qerr would have.
  task automatic fail_qp();
    s.err      <= 1'b1;
    want_cqe   <= !s.err && s.in_msg == 2'd1;
    cqe_status <= srnic_abi_pkg::WC_WR_FLUSH_ERR;
  endtask

  // A retry episode starts: resend from psn (see the header); the QP's READ responses are
  // dropped until the send path has applied the answer.
  task automatic retry(input logic [1:0] kind, input logic [23:0] psn, input logic [4:0] code);
    s.rwp          <= 1'b1;
    s.rd_valid     <= 1'b0;
    if (rdc_bq_any) s.rrd <= 1'b1;   // READs the rewind requests again lose their contexts
    cev_q          <= '0;
    cev_q.kind     <= srnic_pkg::CEV_RETRY;
    cev_q.qpn      <= srnic_pkg::QPN_W'(qpn);
    cev_q.rt_kind  <= kind;
    cev_q.rt_psn   <= psn;
    cev_q.rt_code  <= code;
    want_cev <= 1'b1; est <= E_WB;
  endtask
  // an ACK-like event (a NAK during an episode only acknowledges what is before its PSN)
  task automatic ack_to(input logic [23:0] psn);
    cev_q <= '0;
    cev_q.kind <= srnic_pkg::CEV_ACK; cev_q.qpn <= srnic_pkg::QPN_W'(qpn); cev_q.psn <= psn;
    cev_q.status <= srnic_abi_pkg::WC_SUCCESS;
    want_cev <= 1'b1; est <= E_WB;
  endtask


  always_ff @(posedge clk) begin
    if (rst) begin
      est <= E_IDLE; nbeats <= '0; tk_valid <= 1'b0; snd_seen <= 1'b0; resv_q <= 1'b0; no_room <= 1'b0;
    end else begin
      if (tk_valid && tk_ready) tk_valid <= 1'b0;
      if (snd_now) snd_seen <= 1'b1;
      case (est)
        E_IDLE: begin
          // the next PSN is read in this cycle: a send of the same QP now or one cycle ago
          // (not yet written) makes it stale
          snd_seen <= (snd_wr && snd_wr_qpn == rd_qpn) || (snd_valid && snd_qpn == rd_qpn);
          if (ev_take) begin
            m <= '0;
            is_qerr <= qerr_ready; is_note <= note_ready; is_tmo <= tmo_ready; is_rnr_end <= tmo_rnr;
            is_rack <= rack_ready;
            resv_q <= 1'b0; no_room <= 1'b0;
            wqe_owed <= 1'b0;
            nbeats <= '0;
            qpn <= rd_qpn;
            est <= ((!qerr_ready || qerr_ok) && (!note_ready || note_ok)) ? E_READ : E_IDLE;
          end else if (idle_take) begin
            m <= meta;
            is_qerr <= 1'b0; is_note <= 1'b0; is_tmo <= 1'b0; is_rack <= 1'b0;
            resv_q <= resv_take; no_room <= meta_req && !resv_room;
            wqe_owed <= meta.rq_fetched;
            nbeats <= meta.nbeats;
            qpn <= meta.dqpn[AW-1:0];
            // a dropped frame only has its beats taken (a job pushed now)
            est <= (meta.drop || {8'd0, meta.dqpn} >= NUM_QPS) ? E_IDLE : E_READ;
          end
        end
        E_READ: if (cfg_v) begin
          c <= cfg_rsp; s <= st_rsp; err0 <= st_q.err; snd_nxt <= snd_rsp;
          est <= E_CLASSIFY;
        end
        E_CLASSIFY: begin
          // defaults
          ack <= 1'b0; rd_task <= 1'b0; want_cqe <= 1'b0; want_cev <= 1'b0; do_place <= 1'b0;
          cqe_status <= srnic_abi_pkg::WC_SUCCESS;
          acc_fail <= 1'b0; total_len <= '0; rd_fail_free <= 1'b0; dup_rd <= 1'b0;
          cev_q.psn2 <= '0; cev_q.has_ack <= 1'b0; cev_q.has_rd <= 1'b0;
          ack_psn <= m.psn; ack_syn <= srnic_pkg::AETH_ACK;
          if (is_qerr) begin
            // the requester side failed: the whole QP is in error; a receive WQE a SEND
            // in progress holds is flushed first
            if (qp_live) s.err <= 1'b1;
            s.rd_valid <= 1'b0;      // its READ contexts are freed (rdc_qerr_flush)
            want_cqe <= qp_live && !s.err && s.in_msg == 2'd1;
            cqe_status <= srnic_abi_pkg::WC_WR_FLUSH_ERR;
            est <= E_WB;
          end else if (is_note) begin
            s.rwp <= 1'b0;           // the episode is over: READ responses count again
            s.rcv <= 1'b1;           // responses to what was sent before the rewind may follow
            s.rxp <= 1'b0;
            // an RNR wait that ended during the episode gets its own episode now
            if (s.rxp && qp_tx_ok && !s.err) retry(srnic_pkg::RT_TIMEOUT, snd_nxt, srnic_pkg::RTC_RNR_END);
            else est <= E_WB;
          end else if (is_tmo) begin
            // local ACK timeout: resend what is outstanding (the completion engine compares
            // the oldest incomplete WQE with the next send PSN); the end of an RNR wait: the
            // same without using a retry, and the answer unparks the QP (decision 48). An
            // open episode covers a timeout; an RNR wait's end waits for its note.
            if (qp_tx_ok && !s.err && !s.rwp)
              retry(srnic_pkg::RT_TIMEOUT, snd_nxt, is_rnr_end ? srnic_pkg::RTC_RNR_END : 5'd0);
            else begin
              if (qp_tx_ok && !s.err && is_rnr_end) s.rxp <= 1'b1;
              est <= E_WB;
            end
          end else if (is_rack) begin
            // a deferred answer: what the responder's state says now: a NAK PSN sequence error
            // of ePSN while one is outstanding (nak_sent), else a plain ACK of ePSN - 1 with the
            // MSN, as for a duplicate request; nothing for a QP not receiving or in error
            if (qp_rx_ok && !s.err) begin
              ack <= 1'b1;
              ack_psn <= s.nak_sent ? s.epsn : s.epsn - 24'd1;
              ack_syn <= s.nak_sent ? srnic_pkg::AETH_NAK_PSN : srnic_pkg::AETH_ACK;
            end
            est <= E_WB;
          end else if (m.rq_flush) begin
            est <= E_FLUSH;
          end else if (is_resp) begin
            // ---------------- requester side
            if (!qp_tx_ok) est <= E_WB;
            else if (rsp_ghost) est <= E_WB;      // never sent: dropped (counted)
            else if ((s.err || s.rwp) && op != srnic_pkg::OP_ACK) est <= E_WB;   // READ data for a failed QP, or in an episode
            else if (op == srnic_pkg::OP_ACK) begin
              // the timer restarts (stops when everything sent is acknowledged and no READ waits)
              if (!s.err) begin
                tk_valid <= 1'b1;
                tk_stop  <= m.aeth_syn[6:5] == 2'b00 && m.psn + 24'd1 == snd_nxt && !s.rd_valid &&
                            !rdc_bq_any && !snd_seen && !snd_now;
              end
              cev_q.qpn <= srnic_pkg::QPN_W'(qpn); cev_q.psn <= m.psn; cev_q.status <= srnic_abi_pkg::WC_SUCCESS;
              cev_q.has_rt <= 1'b0;
              if (m.aeth_syn[6:5] == 2'b00) begin
                // an ACK beyond a READ that is not complete: its responses were lost (while
                // resending it may answer what was sent before the rewind: acknowledge only)
                if (!s.rwp && !s.rcv && !s.err && rd_beyond)
                  retry(srnic_pkg::RT_IMPLIED, rd_cur_beyond ? s.rd_next : m.psn + 24'd1, 5'd0);
                else begin
                  // in-order progress; after an episode that freed READ contexts only once the
                  // resend has requested a READ again (until then no context shows that the
                  // ACK is beyond a READ the rewind requests again)
                  if (!rd_beyond && (!s.rrd || rdc_bq_any)) begin
                    s.rcv <= 1'b0;
                    if (!s.rwp) s.rrd <= 1'b0;   // (READs sent during an episode are dropped at its rewind)
                  end
                  cev_q.kind <= srnic_pkg::CEV_ACK; want_cev <= 1'b1; est <= E_WB;
                end
              end else if (m.aeth_syn[6:5] == 2'b01 || m.aeth_syn == srnic_pkg::AETH_NAK_PSN) begin
                // RNR NAK, NAK PSN sequence error: resend from the NAK's PSN (or from a READ
                // before it that is not complete) after the RNR timer / at once
                // (while resending, a sequence NAK may be for what was sent before the rewind:
                // it only acknowledges; a new loss is then recovered by the timer)
                if (!s.rwp && !s.err && (m.aeth_syn[6:5] == 2'b01 || !s.rcv))
                  retry(m.aeth_syn[6:5] == 2'b01 ? srnic_pkg::RT_RNR : srnic_pkg::RT_SEQ,
                        rd_cur_beyond ? s.rd_next : m.psn, m.aeth_syn[4:0]);
                else ack_to(m.psn - 24'd1);
              end else begin
                cev_q.kind <= srnic_pkg::CEV_NAK;
                cev_q.status <= (m.aeth_syn == srnic_pkg::AETH_NAK_INV_REQ) ? srnic_abi_pkg::WC_REM_INV_REQ_ERR :
                                (m.aeth_syn == srnic_pkg::AETH_NAK_REM_ACCESS) ? srnic_abi_pkg::WC_REM_ACCESS_ERR :
                                srnic_abi_pkg::WC_REM_OP_ERR;
                // A READ before the NAK's PSN without all its responses (lost, or still behind
                // the NAK) never gets them: the responder's QP is in ERR now. The completion
                // engine must not take it as done (decision 87): has_rd marks the event, psn2
                // is at or before that READ's first PSN (the READ in progress: its first PSN;
                // one without responses, or one the rewind dropped and has not requested again:
                // the NAK's PSN less the largest window, 2^22, so any READ at the head).
                if (rd_cur_beyond) begin
                  cev_q.has_rd <= 1'b1; cev_q.psn2 <= rd_first;
                end else if (rdc_bq_hit || (s.rcv && s.rrd && !rdc_bq_any)) begin
                  cev_q.has_rd <= 1'b1; cev_q.psn2 <= m.psn - 24'h40_0000;
                end
                want_cev <= 1'b1; est <= E_WB;
              end
            end else begin
              // READ response. Responses arrive in PSN order: one past the expected PSN (or a
              // response of a later READ while this one is unfinished) means responses were
              // lost: a retry episode re-reads from the first missing one; a response before
              // the expected PSN is a duplicate and is dropped.
              if (s.rd_valid && srnic_pkg::psn_ge(m.psn, rd_first) && srnic_pkg::psn_ge(rd_last, m.psn)) begin
                if (m.psn == s.rd_next && rsp_ok_cur) begin
                  dst <= rd_pa + ({40'd0, m.psn - rd_first} << srnic_pkg::mtu_log2(rd_mtu));
                  do_place <= m.pay_len != 13'd0; est <= E_FINISH;
                end else if (m.psn == s.rd_next && !op_ok_cur) begin
                  est <= E_WB;       // stale: a response for another request of this PSN
                end else if (m.psn == s.rd_next) begin
                  // wrong opcode or length for its position: not placed, the READ fails
                  s.rd_valid <= 1'b0; rd_fail_free <= 1'b1; fail_qp(); rd_fail_idx <= s.rd_idx;
                  cev_q.kind <= srnic_pkg::CEV_NAK; cev_q.qpn <= srnic_pkg::QPN_W'(qpn); cev_q.psn <= rd_first;
                  cev_q.status <= srnic_abi_pkg::WC_BAD_RESP_ERR;
                  want_cev <= 1'b1; est <= E_WB;
                end else if (srnic_pkg::psn_ge(m.psn, s.rd_next)) begin
                  retry(srnic_pkg::RT_IMPLIED, s.rd_next, 5'd0);
                end else begin
                  est <= E_WB;
                end
              end else if (s.rd_valid && srnic_pkg::psn_ge(m.psn, rd_last)) begin
                retry(srnic_pkg::RT_IMPLIED, s.rd_next, 5'd0);   // the unfinished READ lost its last responses
              end else if (!s.rd_valid && rdc_bq_hit) begin
                // a response beyond a READ that got none of its responses: all of them were
                // lost; the completion engine rewinds to that READ (the first incomplete WQE).
                // While resending it is a response to a request sent before the rewind: dropped.
                if (s.rcv) est <= E_WB;
                else retry(srnic_pkg::RT_IMPLIED, m.psn, 5'd0);
              end else begin
                est <= E_RDLK;      // look the READ up in the context table
              end
            end
          end else if (!qp_rx_ok || s.err) begin
            est <= E_WB;
          end else if (no_room) begin
            est <= E_WB;                // no responder queue slot: dropped unexecuted (counted)
          end else if (psn_dup && is_rreq) begin
            // duplicate READ: executed again from its own PSN after the access checks (the
            // requester lost responses); a READ the checks refuse is dropped silently
            dup_rd <= 1'b1;
            if (!acc_ok || !len_ok) est <= E_WB;
            else if (m.reth_len == 32'd0) begin rd_pa_q <= '0; est <= E_FINISH; end
            else est <= E_MR;                // the R_Key check was asked for (cls_mr)
          end else if (psn_dup) begin
            // duplicate request: acknowledge again, do not execute
            ack <= 1'b1; ack_psn <= s.epsn - 24'd1; ack_syn <= srnic_pkg::AETH_ACK;
            est <= E_WB;
          end else if (!psn_ok) begin
            if (!s.nak_sent) begin
              ack <= 1'b1; ack_psn <= s.epsn; ack_syn <= srnic_pkg::AETH_NAK_PSN;
              s.nak_sent <= 1'b1;
              est <= E_WB;
            end else est <= E_WB;
          end else if (!seq_ok || !acc_ok || !len_ok) begin
            // invalid request; a receive WQE a SEND in progress holds completes in error
            ack <= 1'b1; ack_syn <= srnic_pkg::AETH_NAK_INV_REQ; s.err <= 1'b1; est <= E_WB;
            want_cqe <= s.in_msg == 2'd1; cqe_status <= srnic_abi_pkg::WC_REM_INV_REQ_ERR;
          end else if (is_rreq || (is_write && is_first)) begin
            if (m.reth_len == 32'd0) begin
              rd_pa_q <= '0;
              est <= is_rreq ? E_FINISH : E_FINISH;
              if (is_write) begin s.m_pa <= '0; s.m_len <= '0; s.m_done <= '0; end
              if (is_write && has_imm) begin
                if (m.rq_fetched && m.rq_idx == s.rq_ci) est <= E_RQ_R;
                else begin ack <= 1'b1; ack_syn <= srnic_pkg::AETH_RNR_BASE | {3'd0, c.min_rnr}; est <= E_WB; end
              end
            end else if (is_write && has_imm && is_last && !(m.rq_fetched && m.rq_idx == s.rq_ci)) begin
              // WRITE ONLY with immediate: the receive WQE is checked before the R_Key
              ack <= 1'b1; ack_syn <= srnic_pkg::AETH_RNR_BASE | {3'd0, c.min_rnr}; est <= E_WB;
            end else begin
              est <= E_MR;                     // the R_Key check was asked for (cls_mr)
            end
          end else if (needs_rwqe_now) begin
            // the WQE fetched on arrival must be the QP's next one; otherwise RNR NAK
            if (m.rq_fetched && m.rq_idx == s.rq_ci) est <= E_RQ_R;
            else begin ack <= 1'b1; ack_syn <= srnic_pkg::AETH_RNR_BASE | {3'd0, c.min_rnr}; est <= E_WB; end
          end else begin
            // SEND middle/last, WRITE middle/last
            if (is_send && !rcv_fits) begin
              ack <= 1'b1; ack_syn <= srnic_pkg::AETH_NAK_INV_REQ; s.err <= 1'b1;
              want_cqe <= 1'b1; cqe_status <= srnic_abi_pkg::WC_REM_INV_REQ_ERR; est <= E_WB;
            end else begin
              dst <= s.m_pa;
              do_place <= m.pay_len != 13'd0; est <= E_FINISH;
            end
          end
        end
        E_MR: begin
          if (mr_rsp) begin
            if (!mr_ok && dup_rd) begin
              est <= E_WB;               // a duplicate READ the R_Key refuses: dropped
            end else if (!mr_ok) begin
              ack <= 1'b1; ack_syn <= srnic_pkg::AETH_NAK_REM_ACCESS; s.err <= 1'b1;
              // a WRITE ONLY with immediate consumes its receive WQE, which completes in error
              acc_fail <= is_write && has_imm && is_last;
              est <= (is_write && has_imm && is_last) ? E_RQ_R : E_WB;
            end else if (is_rreq) begin
              rd_pa_q <= mr_pa; est <= E_FINISH;
            end else begin
              s.m_pa <= mr_pa; s.m_len <= m.reth_len; s.m_done <= '0;
              dst <= mr_pa;
              if (has_imm && is_last) begin
                if (m.rq_fetched && m.rq_idx == s.rq_ci) est <= E_RQ_R;
                else begin ack <= 1'b1; ack_syn <= srnic_pkg::AETH_RNR_BASE | {3'd0, c.min_rnr}; est <= E_WB; end
              end else begin do_place <= m.pay_len != 13'd0; est <= E_FINISH; end
            end
          end
        end
        E_RQ_R: if (wqe_valid) begin
          rw_wrid  <= wqe_data[srnic_abi_pkg::RQWQE_WR_ID_OFF*8 +: 64];
          rq_len   <= wqe_data[srnic_abi_pkg::RQWQE_LENGTH_OFF*8 +: 32];
          wqe_owed <= 1'b0;
          est <= E_RQ_MR;
        end
        E_RQ_MR: if (mr_rsp) begin
          rw_pa <= mr_pa; rw_ok <= mr_ok;
          est <= E_RQ_USE;
        end
        E_RQ_USE: begin
          s.rcv_wrid <= rw_wrid; s.rcv_idx <= s.rq_ci;
          s.rq_ci <= s.rq_ci + 16'd1;
          // a WRITE with immediate keeps its message fields: the WQE only supplies wr_id
          if (!is_write) begin s.m_pa <= rw_pa; s.m_len <= rq_len; s.m_done <= '0; end
          if (acc_fail) begin
            want_cqe <= 1'b1; cqe_status <= srnic_abi_pkg::WC_REM_ACCESS_ERR; est <= E_WB;
          end else if (is_write) begin
            // WRITE with immediate: the receive WQE only supplies wr_id
            dst <= s.m_pa;
            do_place <= m.pay_len != 13'd0; est <= E_FINISH;
          end else if (!rw_ok && m.pay_len != 13'd0) begin
            ack <= 1'b1; ack_syn <= srnic_pkg::AETH_NAK_REM_OP; s.err <= 1'b1;
            want_cqe <= 1'b1; cqe_status <= srnic_abi_pkg::WC_LOC_QP_OP_ERR; est <= E_WB;
          end else if ({19'd0, m.pay_len} > rq_len) begin
            ack <= 1'b1; ack_syn <= srnic_pkg::AETH_NAK_INV_REQ; s.err <= 1'b1;
            want_cqe <= 1'b1; cqe_status <= srnic_abi_pkg::WC_REM_INV_REQ_ERR; est <= E_WB;
          end else begin
            dst <= rw_pa;
            do_place <= m.pay_len != 13'd0; est <= E_FINISH;
          end
        end
        E_RDLK: if (rdc_lk_rsp) begin
          if (!rdc_lk_hit) est <= E_WB;     // no outstanding READ owns this PSN: drop
          else if (m.psn != rdc_lk_first) begin
            // the READ's first responses are missing (while resending: a response to the READ
            // sent before the rewind, dropped)
            if (s.rcv) est <= E_WB;
            else retry(srnic_pkg::RT_IMPLIED, rdc_lk_first, 5'd0);
          end else if (!op_ok_lk) begin
            est <= E_WB;                    // stale: a response for another request of this PSN
          end else if (!rsp_ok_lk) begin
            // the right opcode with a length that does not fit the READ
            rd_fail_free <= 1'b1; fail_qp(); rd_fail_idx <= rdc_lk_idx;
            cev_q <= '0;
            cev_q.kind <= srnic_pkg::CEV_NAK; cev_q.qpn <= srnic_pkg::QPN_W'(qpn); cev_q.psn <= rdc_lk_first;
            cev_q.status <= srnic_abi_pkg::WC_BAD_RESP_ERR;
            want_cev <= 1'b1; est <= E_WB;
          end else begin
            s.rd_valid <= 1'b1; s.rd_idx <= rdc_lk_idx;
            dst <= rdc_lk_pa;          // the first response: offset 0
            do_place <= m.pay_len != 13'd0; est <= E_FINISH;
          end
        end
        E_FINISH: begin
          // state updates after placement
          if (is_resp) begin
            s.rd_next <= m.psn + 24'd1;
            s.rcv     <= 1'b0;       // in-order progress
            s.rrd     <= 1'b0;
            tk_valid  <= 1'b1;       // a READ response placed: restart the timer (stop after the last)
            tk_stop   <= m.psn == rd_last && m.psn + 24'd1 == snd_nxt && !snd_seen && !snd_now;
            if (m.psn == rd_last) begin
              s.rd_valid <= 1'b0;
              cev_q.kind <= srnic_pkg::CEV_READ_DONE; cev_q.qpn <= srnic_pkg::QPN_W'(qpn); cev_q.psn <= m.psn;
              cev_q.status <= srnic_abi_pkg::WC_SUCCESS;
              want_cev <= 1'b1; est <= E_WB;
            end else est <= E_WB;
          end else begin
            if (dup_rd) begin
              // executed again: the responses go out, no responder state changes
              rd_task <= 1'b1; ack <= 1'b1; ack_psn <= m.psn;
              est <= E_WB;
            end else if (is_rreq) begin
              s.nak_sent <= 1'b0;
              s.epsn <= s.epsn + rd_npkts;
              s.msn  <= s.msn + 24'd1;
              rd_task <= 1'b1; ack <= 1'b1; ack_psn <= m.psn;
              est <= E_WB;
            end else begin
              s.nak_sent <= 1'b0;
              s.epsn <= s.epsn + 24'd1;
              s.m_pa   <= s.m_pa + {51'd0, m.pay_len};
              s.m_done <= s.m_done + {19'd0, m.pay_len};
              s.in_msg <= is_last ? 2'd0 : (is_send ? 2'd1 : 2'd2);
              if (is_last) s.msn <= s.msn + 24'd1;
              total_len <= is_write ? s.m_len : s.m_done + {19'd0, m.pay_len};
              want_cqe <= is_last && (is_send || has_imm);
              ack <= m.ackreq; ack_syn <= srnic_pkg::AETH_ACK; ack_psn <= m.psn;
              est <= E_WB;
            end
          end
        end
        // a packet whose beats are all taken (placed, or none) is done at its write-back
        // the write-back hands the packet to the placement stage (job_push)
        E_WB: est <= wqe_owed ? E_SKIPW : err_new ? E_RESYNC : E_IDLE;
        // the packet was not executed but had a receive WQE fetched: drop that WQE and
        // move the fetch index back to the QP's consumer index (in error state the fetch
        // index belongs to the flush, unless this packet hands it over)
        E_SKIPW: if (wqe_valid) begin
          wqe_owed <= 1'b0;
          est <= (!s.err || err_new) ? E_RESYNC : E_IDLE;
        end
        E_RESYNC: if (resync_ready) est <= E_IDLE;
        // a flush record: complete the receive WQE it carries with WR_FLUSH_ERR (a QP reset
        // since the hand-over only drops it)
        E_FLUSH: if (wqe_valid) begin
          wqe_owed <= 1'b0;
          s.rcv_wrid <= wqe_data[srnic_abi_pkg::RQWQE_WR_ID_OFF*8 +: 64];
          s.rcv_idx  <= m.rq_idx;
          want_cqe <= qp_live && s.err; cqe_status <= srnic_abi_pkg::WC_WR_FLUSH_ERR;
          est <= E_WB;
        end
        default: est <= E_IDLE;
      endcase
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{qp_cmd, m, wqe_data, st_v, psn_d, rd_np_raw, st_q,
                     s, c, cmd_cfg, place_idle};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): legal state, the READ context in use, resync held until
  // taken (the placement stage checks its own outputs).
  // the R_Key check asked for in E_CLASSIFY is the one E_MR waits for, and only that one
  a_cls_mr: assert property (@(posedge clk) disable iff (rst)
    est == E_CLASSIFY |=> (est == E_MR) == $past(cls_mr))
    else $error("srnic_rx_engine: E_CLASSIFY asked for an R_Key check it does not wait for, or waits for one it did not ask for");
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    est <= E_FLUSH)
    else $error("srnic_rx_engine: illegal state %0d", est);
  // the READ in progress is read from its srnic_rd_ctx entry: while a packet of the QP is
  // classified or finished, that entry must still be live and the QP's
  a_rd_entry_owned: assert property (@(posedge clk) disable iff (rst)
    (est == E_CLASSIFY || est == E_FINISH) && s.rd_valid |-> rdc_rx_valid && rdc_rx_qpn == qpn)
    else $error("srnic_rx_engine: QP %0d places READ responses by context %0d, which is %s", qpn, s.rd_idx,
                rdc_rx_valid ? "another QP's" : "free");
  a_resync_hold: assert property (@(posedge clk) disable iff (rst)
    resync_valid && !resync_ready |=> resync_valid && $stable(resync_qpn) && $stable(resync_ci) && $stable(resync_err))
    else $error("srnic_rx_engine: resync withdrawn or changed before it was taken");
`endif
endmodule
`default_nettype wire
