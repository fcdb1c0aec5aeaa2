// srnic_comp: requester completion engine. Send-queue completions need the WQEs, which
// stay in host memory: nothing about outstanding WQEs is kept on chip except, per QP,
// the index of the oldest incomplete WQE and its first PSN. For each event it fetches
// up to 8 WQEs from that index (one read, like a scheduler turn), recomputes each WQE's
// PSN range from its length and the path MTU, and walks them:
//   ACKS(psn, psn2)  (merged by srnic_comp_coalesce) completes SEND/WRITE WQEs whose last
//                    PSN is covered by the newest ACK or READ response, and READ WQEs
//                    whose data is placed (last PSN <= psn2); it stops at the first
//                    WQE not yet covered, and fetches more WQEs while whole batches
//                    complete;
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
// The first WQE of a QP to complete in error (a fatal NAK, lost READ responses, or the
// WQE the send path refused) moves the QP to the error state: besides stopping the send
// side, the RX engine is told (qerr) so the QP's receive side stops too and its receive
// queue is flushed.
`default_nettype none
module srnic_comp #(
  parameter int NUM_QPS = 16384
) (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic         qp_cmd_valid,
  input  var srnic_pkg::qp_cmd_t qp_cmd,
  output logic              qp_cmd_ready,
  input  wire logic         ev_valid,
  input  var srnic_pkg::comp_ev_t ev_in,
  output logic              ev_ready,
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
  input  wire logic         stop_ready,
  // the QP entered the error state: stop its receive side and flush its receive queue
  output logic              qerr_valid,
  output logic [15:0]       qerr_qpn,
  input  wire logic         qerr_ready,
  output logic              herr_done,     // a HERR event was taken (flush begun, qerr queued)
  // send completions
  output logic              cqe_valid,
  output srnic_pkg::cqe_req_t cqe,
  input  wire logic         cqe_ready
);
  localparam int AW = $clog2(NUM_QPS);

  typedef struct packed {
    logic [63:0] sq_base;
    logic [3:0]  log_sq;
    logic [2:0]  mtu;
    logic [15:0] send_cqn;
  } ccfg_t;
  typedef struct packed {
    logic        flushing;    // the bad WQE is done: WQEs up to fl_pi complete WR_FLUSH_ERR
    logic [15:0] fl_pi;
    logic        err_valid;   // a bad WQE starts at err_psn
    logic [23:0] err_psn;
    logic [7:0]  err_status;
    logic [15:0] ci;
    logic [23:0] psn;
  } cst_t;
  ccfg_t cmd_cfg;
  cst_t  cmd_st;
  localparam int CFG_W = $bits(cmd_cfg);
  localparam int ST_W  = $bits(cmd_st);
  always_comb begin
    cmd_cfg.sq_base = qp_cmd.sq_base; cmd_cfg.log_sq = qp_cmd.log_sq; cmd_cfg.mtu = qp_cmd.mtu;
    cmd_cfg.send_cqn = qp_cmd.send_cqn;
    cmd_st = '0; cmd_st.psn = qp_cmd.sq_psn;
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

  logic rd_req, cfg_ready, st_ready, cfg_v, st_v, st_wr;
  logic [CFG_W-1:0] cfg_rsp;
  logic [ST_W-1:0]  st_rsp;
  srnic_pkg::comp_ev_t ev;
  ccfg_t    c;
  cst_t     s;
  srnic_qpc_ram #(.WIDTH(CFG_W), .NUM_QPS(NUM_QPS)) u_cfg (
    .clk, .rst, .req_valid(rd_req), .req_ready(cfg_ready), .req_qpn(ev_in.qpn[AW-1:0]), .req_lock(1'b0),
    .rsp_valid(cfg_v), .rsp_data(cfg_rsp),
    .wr_valid(1'b0), .wr_qpn('0), .wr_data('0), .wr_unlock(1'b0),
    .ext_valid(cfg_ext), .ext_ready(cfg_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_cfg));
  srnic_qpc_ram #(.WIDTH(ST_W), .NUM_QPS(NUM_QPS), .LOCKS(1)) u_st (
    .clk, .rst, .req_valid(rd_req), .req_ready(st_ready), .req_qpn(ev_in.qpn[AW-1:0]), .req_lock(1'b1),
    .rsp_valid(st_v), .rsp_data(st_rsp),
    .wr_valid(st_wr), .wr_qpn(ev.qpn[AW-1:0]), .wr_data(s), .wr_unlock(1'b1),
    .ext_valid(st_ext), .ext_ready(st_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]), .ext_data(cmd_st));

  typedef enum logic [2:0] {C_IDLE, C_READ, C_FETCH, C_WALK, C_DRAIN, C_WB, C_HERR} cstate_e;
  cstate_e cs;
  logic [3:0] n, taken;

  // WQE beats (at most 8 outstanding, one fetch at a time)
  logic [511:0] wq;
  logic         wq_valid, wq_pop;
  sync_fifo #(.WIDTH(512), .DEPTH(8)) u_wq (
    .clk, .rst, .s_data(r_data), .s_valid(r_valid), .s_ready(),
    .m_data(wq), .m_valid(wq_valid), .m_ready(wq_pop), .count());

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
  wire        w_bad   = w_op > srnic_abi_pkg::WR_READ || w_len > 32'h8000_0000;
  wire [15:0] size    = 16'd1 << c.log_sq;
  wire [15:0] room    = size - (s.ci & (size - 16'd1));
  wire [63:0] f_addr  = c.sq_base + {42'd0, s.ci & (size - 16'd1), 6'd0};
  wire [15:0] room4k  = 16'd64 - {10'd0, f_addr[11:6]};    // an AXI burst never crosses 4 KiB
  wire [15:0] room_m  = (room < room4k) ? room : room4k;
  wire [3:0]  nfetch  = (room_m < 16'd8) ? room_m[3:0] : 4'd8;
  wire        is_nak  = ev.kind == srnic_pkg::CEV_NAK;
  wire        is_lerr = ev.kind == srnic_pkg::CEV_LERR;
  wire        is_herr = ev.kind == srnic_pkg::CEV_HERR;
  logic       h_qerr;     // the HERR moves the QP to ERR (it was not failed already)
  // head WQE is the bad one the send path refused, unless a fatal NAK of an earlier WQE
  // failed the QP first: then it is flushed like every WQE after that one
  wire        at_bad  = s.err_valid && s.psn == s.err_psn && !s.flushing;
  wire        flush   = s.flushing && s.ci != s.fl_pi;       // head WQE is to be flushed
  wire        fl_stop = s.flushing && s.ci == s.fl_pi;       // everything posted is flushed
  cst_t       st_q;
  assign st_q = st_rsp;
  // ACKS: SEND/WRITE WQEs are covered up to the later of the two PSNs
  wire [23:0] ack_lim = !ev.has_ack ? ev.psn2 : !ev.has_rd ? ev.psn :
                        srnic_pkg::psn_ge(ev.psn2, ev.psn) ? ev.psn2 : ev.psn;
  wire [23:0] lim     = is_nak ? ev.psn : ack_lim;

  // An ACK beyond an unfinished READ: the responder answers in PSN order, so the READ's
  // responses were all sent before it and some were lost. Without retransmission (loss
  // recovery) the READ fails like a fatal NAK, with RETRY_EXC_ERR.
  wire implied = !is_nak && !is_lerr && !is_herr && w_read && ev.has_ack && srnic_pkg::psn_ge(ev.psn, w_last) &&
                 ev.psn != w_last && !(ev.has_rd && srnic_pkg::psn_ge(ev.psn2, w_last));
  wire fatal   = is_nak || implied;     // the head WQE fails and stops the QP's send side
  // what to do with the WQE at the head of the batch
  logic w_complete, w_error;
  always_comb begin
    w_complete = 1'b0; w_error = 1'b0;
    if (at_bad || flush) begin
      w_complete = 1'b1; w_error = 1'b1;
    end else if (is_lerr || is_herr || w_bad || fl_stop) begin
      w_complete = 1'b0;
    end else if (is_nak) begin
      if (srnic_pkg::psn_ge(ev.psn, w_last) && ev.psn != w_last) w_complete = 1'b1;
      else if (srnic_pkg::psn_ge(ev.psn, s.psn)) begin w_complete = 1'b1; w_error = 1'b1; end
    end else if (implied) begin
      w_complete = 1'b1; w_error = 1'b1;
    end else begin
      w_complete = (!w_read && srnic_pkg::psn_ge(ack_lim, w_last)) ||
                   (w_read && ev.has_rd && srnic_pkg::psn_ge(ev.psn2, w_last));
    end
  end

  assign ev_ready = cs == C_IDLE && ev_valid && cfg_ready && st_ready;
  assign rd_req   = ev_ready;
  assign ar_valid = cs == C_FETCH;
  assign ar_addr  = f_addr;
  assign ar_len   = {4'd0, nfetch} - 8'd1;
  wire   cqe_needed = w_flags[srnic_abi_pkg::WQE_FLAG_SIGNALED] || w_error;
  wire   stop_needed = w_error && fatal && !at_bad && !flush;  // first failure on the wire
  wire   qerr_needed = at_bad || stop_needed;                  // the QP enters ERR
  wire   ev_room  = (stop_in_ready || !stop_needed) && (qerr_in_ready || !qerr_needed);
  wire   walk_go  = (!cqe_needed || cqe_ready) && ev_room;
  assign wq_pop   = (cs == C_WALK && wq_valid && w_complete && walk_go) ||
                    (cs == C_DRAIN && wq_valid);
  assign cqe_valid = cs == C_WALK && wq_valid && w_complete && cqe_needed && ev_room;
  always_comb begin
    cqe = '0;
    cqe.cqn      = c.send_cqn;
    cqe.wr_id    = wq[srnic_abi_pkg::SQWQE_WR_ID_OFF*8 +: 64];
    cqe.byte_len = w_len;
    cqe.qpn      = srnic_pkg::QPN_W'(ev.qpn);
    cqe.wqe_idx  = s.ci;
    cqe.opcode   = w_read ? srnic_abi_pkg::WC_RDMA_READ :
                   (w_op == srnic_abi_pkg::WR_SEND || w_op == srnic_abi_pkg::WR_SEND_IMM) ? srnic_abi_pkg::WC_SEND :
                   srnic_abi_pkg::WC_RDMA_WRITE;
    cqe.status   = at_bad ? s.err_status : flush ? srnic_abi_pkg::WC_WR_FLUSH_ERR :
                   (w_error && implied) ? srnic_abi_pkg::WC_RETRY_EXC_ERR :
                   w_error ? ev.status : srnic_abi_pkg::WC_SUCCESS;
  end
  assign st_wr = cs == C_WB;
  // stop requests wait in a small FIFO; a walk that needs one when it is full waits
  logic stop_push, stop_in_ready, qerr_push, qerr_in_ready;
  wire  walk_step = cs == C_WALK && wq_valid && w_complete && walk_go;
  assign stop_push = walk_step && stop_needed;
  assign qerr_push = (walk_step && qerr_needed) || (cs == C_HERR && h_qerr && qerr_in_ready);
  assign herr_done = cs == C_HERR && (!h_qerr || qerr_in_ready);
  sync_fifo #(.WIDTH(16), .DEPTH(16)) u_stop (
    .clk, .rst, .s_data(16'(ev.qpn)), .s_valid(stop_push), .s_ready(stop_in_ready),
    .m_data(stop_qpn), .m_valid(stop_valid), .m_ready(stop_ready), .count());
  sync_fifo #(.WIDTH(16), .DEPTH(16)) u_qerr (
    .clk, .rst, .s_data(16'(ev.qpn)), .s_valid(qerr_push), .s_ready(qerr_in_ready),
    .m_data(qerr_qpn), .m_valid(qerr_valid), .m_ready(qerr_ready), .count());

  always_ff @(posedge clk) begin
    if (rst) begin
      cs <= C_IDLE;
    end else begin
      case (cs)
        C_IDLE: if (ev_ready) begin ev <= ev_in; cs <= C_READ; end
        C_READ: if (cfg_v) begin
          c <= cfg_rsp; s <= st_rsp;
          if (is_herr) begin
            // everything not completed is flushed; a refused WQE waiting for its turn is
            // flushed like the others
            s.err_valid <= 1'b0; s.flushing <= 1'b1; s.fl_pi <= ev.psn2[15:0];
            h_qerr <= !st_q.flushing;
            cs <= C_HERR;
          end else if (is_lerr) begin
            // the first report names the bad WQE; every report raises the flush limit
            if (!st_q.err_valid && !st_q.flushing) begin
              s.err_valid <= 1'b1; s.err_psn <= ev.psn; s.err_status <= ev.status;
            end
            s.fl_pi <= ev.psn2[15:0];
            // complete now what nothing outstanding holds back
            cs <= (st_q.flushing || st_q.psn == ev.psn) ? C_FETCH : C_WB;
          end else
            // nothing to do for an event that does not reach the oldest incomplete WQE
            cs <= srnic_pkg::psn_ge(lim, st_rsp[23:0]) ? C_FETCH : C_WB;
        end
        C_FETCH: if (ar_ready) begin n <= nfetch; taken <= '0; cs <= C_WALK; end
        C_WALK: if (wq_valid) begin
          if (!w_complete) cs <= C_DRAIN;
          else if (walk_go) begin
            taken <= taken + 4'd1;
            s.ci  <= s.ci + 16'd1;
            // a refused or flushed WQE sent nothing: it uses no PSNs
            s.psn <= (at_bad || flush) ? s.psn : w_last + 24'd1;
            if (at_bad) begin s.err_valid <= 1'b0; s.flushing <= 1'b1; end
            if (stop_needed) begin
              // fatal NAK (or lost READ responses): later WQEs are flushed once the send path
              // reports its producer index
              s.flushing <= 1'b1; s.fl_pi <= s.ci + 16'd1;
            end
            // flushing goes on through the batch (and the next ones) up to the limit
            if ((w_error && !at_bad && !flush) || ((at_bad || flush) && s.ci + 16'd1 == s.fl_pi))
              cs <= (taken + 4'd1 == n) ? C_WB : C_DRAIN;
            else if (taken + 4'd1 == n) cs <= C_FETCH;     // whole batch done: fetch more
          end
        end
        C_DRAIN: begin
          if (wq_valid) taken <= taken + 4'd1;
          if (taken == n || (wq_valid && taken + 4'd1 == n)) cs <= C_WB;
        end
        C_HERR: if (herr_done) cs <= (s.ci != s.fl_pi) ? C_FETCH : C_WB;
        C_WB: cs <= C_IDLE;
        default: cs <= C_IDLE;
      endcase
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{qp_cmd, wq, np_raw, st_v, ev, st_q};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): legal state, WQE read held, WQE FIFO bound, batch
  // walk bounds, CQE held.
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    cs inside {C_IDLE, C_READ, C_FETCH, C_WALK, C_DRAIN, C_WB, C_HERR})
    else $error("srnic_comp: illegal state %0d", cs);
  a_ar_hold: assert property (@(posedge clk) disable iff (rst)
    ar_valid && !ar_ready |=> ar_valid && $stable(ar_addr) && $stable(ar_len))
    else $error("srnic_comp: WQE read withdrawn or changed before it was taken");
  a_ar_no_4k_cross: assert property (@(posedge clk) disable iff (rst)
    ar_valid |-> {7'd0, ar_addr[11:6]} + {5'd0, ar_len} < 13'd64 && ar_len < 8'd8)
    else $error("srnic_comp: WQE read longer than 8 beats or across a 4 KiB boundary");
  a_wq_no_overflow: assert property (@(posedge clk) disable iff (rst)
    r_valid |-> u_wq.s_ready)
    else $error("srnic_comp: WQE FIFO overflow (more than one batch outstanding)");
  a_walk_in_batch: assert property (@(posedge clk) disable iff (rst)
    cs == C_WALK || cs == C_DRAIN |-> n >= 4'd1 && n <= 4'd8 && taken <= n && (cs == C_DRAIN || taken < n))
    else $error("srnic_comp: walk past the fetched batch (taken %0d of %0d)", taken, n);
  a_cqe_hold: assert property (@(posedge clk) disable iff (rst)
    cqe_valid && !cqe_ready |=> cqe_valid && $stable(cqe))
    else $error("srnic_comp: send CQE withdrawn or changed before it was taken");
  a_ring_flush_limit: assert property (@(posedge clk) disable iff (rst)
    cs == C_WALK && wq_valid && s.flushing |-> 16'(s.fl_pi - s.ci) <= size)
    else $error("srnic_comp: flush limit more than a ring ahead of the consumer index (QP %0d)", ev.qpn);
`endif
endmodule
`default_nettype wire
