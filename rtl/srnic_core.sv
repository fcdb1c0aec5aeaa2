// srnic_core: top level of the srnic RoCEv2 RDMA NIC.
//
//   doorbell -> srnic_sched -> srnic_wqe_fetch -> srnic_tx_pkt -> srnic_tx_icrc -> Ethernet TX
//                                 payload reads: srnic_tx_payload ^
//                                                   ^ responder jobs (srnic_resp_tx)
//   Ethernet RX -> srnic_rx_parse -> srnic_rx_engine -> payload writes, ACK/NAK/READ tasks,
//                                                      completion events (srnic_comp), CQEs
//   srnic_comp, srnic_rx_engine -> srnic_cq_writer -> CQEs in host memory
// Host memory is reached through one AXI4 master (reads shared by ID, writes in order);
// registers, doorbells and commands through an AXI4-Lite slave (srnic_csr).
// Per-QP state is split into slices, each owned by the block that updates it
// (srnic_qpc_ram instances), written by the command path on QP_MODIFY.
`default_nettype none
module srnic_core #(
  parameter int NUM_QPS = 16384,
  parameter int NUM_MRS = 256,
  parameter int NUM_CQS = 1024,
  // core clock cycles per timer unit (>= 1.024 us: 308 at 300 MHz; see srnic_timer)
  parameter int TIMER_CYC_PER_UNIT = 308,
  // the `cached` build (SRNIC Figure 9's baseline, decision 80): a WQE cache in front of the
  // send path's WQE reads (srnic_wqe_cache: 512 lines x 8 WQEs, the current and the next 8
  // WQEs of 256 QPs; blocking on a miss); 0 = cache-free, the design
  parameter int CACHED = 0
) (
  input  wire logic         clk,
  input  wire logic         rst,
  // host memory (AXI4 master)
  output logic [3:0]        m_axi_awid,
  output logic [63:0]       m_axi_awaddr,
  output logic [7:0]        m_axi_awlen,
  output logic [2:0]        m_axi_awsize,
  output logic [1:0]        m_axi_awburst,
  output logic              m_axi_awvalid,
  input  wire logic         m_axi_awready,
  output logic [511:0]      m_axi_wdata,
  output logic [63:0]       m_axi_wstrb,
  output logic              m_axi_wlast,
  output logic              m_axi_wvalid,
  input  wire logic         m_axi_wready,
  input  wire logic [3:0]   m_axi_bid,
  input  wire logic [1:0]   m_axi_bresp,
  input  wire logic         m_axi_bvalid,
  output logic              m_axi_bready,
  output logic [3:0]        m_axi_arid,
  output logic [63:0]       m_axi_araddr,
  output logic [7:0]        m_axi_arlen,
  output logic [2:0]        m_axi_arsize,
  output logic [1:0]        m_axi_arburst,
  output logic              m_axi_arvalid,
  input  wire logic         m_axi_arready,
  input  wire logic [3:0]   m_axi_rid,
  input  wire logic [511:0] m_axi_rdata,
  input  wire logic [1:0]   m_axi_rresp,
  input  wire logic         m_axi_rlast,
  input  wire logic         m_axi_rvalid,
  output logic              m_axi_rready,
  // registers (AXI4-Lite slave)
  input  wire logic [15:0]  s_axil_awaddr,
  input  wire logic         s_axil_awvalid,
  output logic              s_axil_awready,
  input  wire logic [31:0]  s_axil_wdata,
  input  wire logic [3:0]   s_axil_wstrb,
  input  wire logic         s_axil_wvalid,
  output logic              s_axil_wready,
  output logic [1:0]        s_axil_bresp,
  output logic              s_axil_bvalid,
  input  wire logic         s_axil_bready,
  input  wire logic [15:0]  s_axil_araddr,
  input  wire logic         s_axil_arvalid,
  output logic              s_axil_arready,
  output logic [31:0]       s_axil_rdata,
  output logic [1:0]        s_axil_rresp,
  output logic              s_axil_rvalid,
  input  wire logic         s_axil_rready,
  // Ethernet
  output logic [511:0]      m_axis_tx_tdata,
  output logic [63:0]       m_axis_tx_tkeep,
  output logic              m_axis_tx_tlast,
  output logic              m_axis_tx_tuser,
  output logic              m_axis_tx_tvalid,
  input  wire logic         m_axis_tx_tready,
  input  wire logic [511:0] s_axis_rx_tdata,
  input  wire logic [63:0]  s_axis_rx_tkeep,
  input  wire logic         s_axis_rx_tlast,
  input  wire logic         s_axis_rx_tuser,
  input  wire logic         s_axis_rx_tvalid,
  output logic              rx_pause,        // ask the link partner to pause (XOFF) / resume
  // interrupts
  output logic              irq_valid,
  output logic [15:0]       irq_vector,
  input  wire logic         irq_ready
);
  localparam int AW = $clog2(NUM_QPS);
  localparam int NC = srnic_abi_pkg::NUM_COUNTERS;

  // ---------------------------------------------------------------- CSR
  logic [47:0] local_mac, timestamp;
  logic [31:0] local_ip, sched_burst, tx_window;
  logic [3:0]  sched_wqes;
  logic db_sq, db_rq, db_cq, db_bad, db_sq_room;
  logic [15:0] db_index, db_value;
  logic [5:0] qp_cmd_valid;
  logic [5:0] qp_cmd_ready;
  srnic_pkg::qp_cmd_t qp_cmd;
  logic mr_cmd_valid;
  logic [$clog2(NUM_MRS)-1:0] mr_cmd_index;
  srnic_pkg::mr_entry_t mr_cmd;
  logic cq_cmd_valid, cq_cmd_ready;
  srnic_pkg::cq_cmd_t cq_cmd;
  logic [NC-1:0] cnt_inc;
  logic herr_valid, herr_ready, herr_done, qerr_valid, qerr_owed;
  // DMA error responses and the fatal latch (decision 108)
  logic       fatal, rd_err, bresp_err;
  logic [3:0] rd_err_id;
  logic [1:0] rd_err_resp, bresp_code;
  // QP incarnations (decision 109): bumped by the CSR when a reset command is done, read by
  // every block that makes or acts on work queued for a QP
  localparam int GW = srnic_pkg::GEN_W;
  localparam int GEN_PORTS = 9;   // fetch a..d, TX ICRC, RX engine a..b, completion engine, CQ writer
  logic                    gen_bump_valid;
  logic [AW-1:0]           gen_bump_qpn;
  logic                    cqw_drain_busy;   // the CQ writer writes what it took before a QP reset
  logic [GEN_PORTS*AW-1:0] gen_rd_qpn;
  logic [GEN_PORTS*GW-1:0] gen_rd;
  logic                    stale_fetch, stale_comp, stale_rx, stale_tx, stale_cq;
  logic [srnic_pkg::QPN_W-1:0] cq_gen_qpn;
  srnic_qp_gen #(.NUM_QPS(NUM_QPS), .NPORTS(GEN_PORTS)) u_gen (
    .clk, .bump_valid(gen_bump_valid), .bump_qpn(gen_bump_qpn), .rd_qpn(gen_rd_qpn), .rd_gen(gen_rd));
  logic [AW-1:0] herr_qpn;

  srnic_csr #(.NUM_QPS(NUM_QPS), .NUM_MRS(NUM_MRS), .NUM_CQS(NUM_CQS), .N_QPC_CONSUMERS(6)) u_csr (
    .clk, .rst,
    .s_axil_awaddr, .s_axil_awvalid, .s_axil_awready, .s_axil_wdata, .s_axil_wstrb, .s_axil_wvalid,
    .s_axil_wready, .s_axil_bresp, .s_axil_bvalid, .s_axil_bready, .s_axil_araddr, .s_axil_arvalid,
    .s_axil_arready, .s_axil_rdata, .s_axil_rresp, .s_axil_rvalid, .s_axil_rready,
    .local_mac, .local_ip, .sched_burst, .sched_wqes, .tx_window, .timestamp,
    .db_sq_valid(db_sq), .db_rq_valid(db_rq), .db_cq_valid(db_cq), .db_index, .db_value, .db_bad, .db_sq_room,
    .herr_valid, .herr_qpn, .herr_ready, .herr_done, .qerr_busy(qerr_valid || qerr_owed), .cqw_drain_busy,
    .qp_cmd_valid, .qp_cmd_ready, .qp_cmd, .mr_cmd_valid, .mr_cmd_index, .mr_cmd,
    .cq_cmd_valid, .cq_cmd_ready, .cq_cmd, .cnt_inc,
    .dma_rd_err(rd_err), .dma_rd_err_id(rd_err_id), .dma_rd_err_resp(rd_err_resp),
    .dma_wr_err(bresp_err), .dma_wr_err_resp(bresp_code), .fatal, .gen_bump_valid, .gen_bump_qpn);

  // ---------------------------------------------------------------- MR table
  logic [1:0]   mr_req, mr_rsp, mr_ok;
  logic [63:0]  mr_key, mr_pd, mr_len;
  logic [7:0]   mr_access;
  logic [127:0] mr_va, mr_pa;
  srnic_mr_table #(.NUM_MRS(NUM_MRS), .NPORTS(2)) u_mr (
    .clk, .rst, .wr_valid(mr_cmd_valid), .wr_index(mr_cmd_index), .wr_entry(mr_cmd),
    .req_valid(mr_req), .req_key(mr_key), .req_pd(mr_pd), .req_access(mr_access), .req_va(mr_va),
    .req_len(mr_len), .rsp_valid(mr_rsp), .rsp_ok(mr_ok), .rsp_pa(mr_pa));

  // ---------------------------------------------------------------- DMA muxes
  logic [3:0]   rd_ar_valid, rd_ar_ready, rd_r_valid;
  logic [255:0] rd_ar_addr;
  logic [31:0]  rd_ar_len;
  logic [511:0] rd_r_data;
  logic         rd_r_last;
  srnic_dma_rd_mux #(.N(4)) u_rdmux (
    .clk, .rst, .c_ar_valid(rd_ar_valid), .c_ar_addr(rd_ar_addr), .c_ar_len(rd_ar_len),
    .c_ar_ready(rd_ar_ready), .c_r_valid(rd_r_valid), .c_r_data(rd_r_data), .c_r_last(rd_r_last),
    .m_axi_arid, .m_axi_araddr, .m_axi_arlen, .m_axi_arsize, .m_axi_arburst, .m_axi_arvalid,
    .m_axi_arready, .m_axi_rid, .m_axi_rdata, .m_axi_rresp, .m_axi_rlast, .m_axi_rvalid, .m_axi_rready,
    .err_valid(rd_err), .err_id(rd_err_id), .err_resp(rd_err_resp));

  logic [1:0]    wr_aw_valid, wr_aw_ready, wr_w_valid, wr_w_ready, wr_w_last;
  logic [127:0]  wr_aw_addr, wr_w_strb;
  logic [15:0]   wr_aw_len;
  logic [1023:0] wr_w_data;
  srnic_dma_wr_mux u_wrmux (
    .clk, .rst, .fatal, .c_aw_valid(wr_aw_valid), .c_aw_addr(wr_aw_addr), .c_aw_len(wr_aw_len),
    .c_aw_ready(wr_aw_ready), .c_w_valid(wr_w_valid), .c_w_data(wr_w_data), .c_w_strb(wr_w_strb),
    .c_w_last(wr_w_last), .c_w_ready(wr_w_ready),
    .m_axi_awid, .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize, .m_axi_awburst, .m_axi_awvalid,
    .m_axi_awready, .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast, .m_axi_wvalid, .m_axi_wready,
    .m_axi_bid, .m_axi_bresp, .m_axi_bvalid, .m_axi_bready, .bresp_err, .bresp_code);

  // ---------------------------------------------------------------- requester TX path
  logic          s_valid, s_ready, done_valid, done_more, done_ready, db_overflow;
  logic [AW-1:0] s_qpn, done_qpn;
  // go-back-N between the completion engine, the send path, the RX engine and the timers
  logic          rw_valid, rw_ready, note_valid, note_ready, note_owed, f_note_valid;
  logic [AW-1:0] f_note_qpn;
  logic [GW-1:0] f_note_gen;
  logic          note_gen;    // the low bit of the note's incarnation
  logic          kick_valid, kick_ready, rnr_valid, rnr_ready, tmo_valid, tmo_rnr, tmo_ready, rdc_rw_flush;
  logic [AW-1:0] note_qpn, kick_qpn, rnr_qpn, tmo_qpn, rdc_rw_flush_qpn;
  logic          stale_valid, stale_ready;
  logic [AW-1:0] stale_qpn;
  logic [4:0]    rnr_code;
  logic          tkx_valid, tkx_ready, tkx_room, rxk_valid, rxk_ready, rxk_stop;
  logic [AW-1:0] tkx_qpn, rxk_qpn;
  srnic_pkg::rewind_t rw;
  srnic_sched #(.NUM_QPS(NUM_QPS)) u_sched (
    .clk, .rst, .db_valid(db_sq), .db_qpn(db_index[AW-1:0]), .db_overflow, .db_room(db_sq_room),
    .kick_valid, .kick_qpn, .kick_ready,
    .done_valid, .done_qpn, .done_more, .done_ready, .m_valid(s_valid), .m_qpn(s_qpn), .m_ready(s_ready));

  logic    req_job_valid, req_job_ready, req_pkt_ready, bad_wqe, lerr_valid, lerr_ready;
  logic    qp_stop_valid, qp_stop_ready;
  logic    rdc_qa_busy, rdc_qb_busy;
  logic [6:0] rdc_n_free, rdc_qb_cnt, rdc_freed;
  logic [AW-1:0] rdc_qa_qpn, rdc_qb_qpn;
  logic [15:0] qp_stop_qpn;
  logic [GW-1:0] qp_stop_gen, qerr_gen;
  srnic_pkg::comp_ev_t lerr;
  srnic_pkg::tx_job_t req_job;
  // the send path's WQE reads (AXI ID 0): straight to the read mux, or through the WQE cache
  logic          wf_ar_valid, wf_ar_ready, wf_r_valid;
  logic [63:0]   wf_ar_addr;
  logic [7:0]    wf_ar_len;
  logic [AW-1:0] wf_ar_qpn;
  logic [15:0]   wf_ar_idx, wf_ar_pi;
  logic [3:0]    wf_ar_log_sq;
  logic [511:0]  wf_r_data;
  logic          wc_hit, wc_miss, wc_pf, wc_pf_drop, wc_evict;
  generate
    if (CACHED != 0) begin : g_cache
      srnic_wqe_cache #(.NUM_QPS(NUM_QPS), .LINES(512), .PF_SLOTS(8), .PFQ_DEPTH(32)) u_wcache (
        .clk, .rst,
        .u_ar_valid(wf_ar_valid), .u_ar_addr(wf_ar_addr), .u_ar_len(wf_ar_len), .u_ar_qpn(wf_ar_qpn),
        .u_ar_idx(wf_ar_idx), .u_ar_pi(wf_ar_pi), .u_ar_log_sq(wf_ar_log_sq), .u_ar_ready(wf_ar_ready),
        .u_r_valid(wf_r_valid), .u_r_data(wf_r_data),
        .d_ar_valid(rd_ar_valid[0]), .d_ar_addr(rd_ar_addr[0 +: 64]), .d_ar_len(rd_ar_len[0 +: 8]),
        .d_ar_ready(rd_ar_ready[0]), .d_r_valid(rd_r_valid[0]), .d_r_data(rd_r_data),
        .db_valid(db_sq), .db_qpn(db_index), .db_pi(db_value),
        .qp_cmd_fire(qp_cmd_valid[0] && qp_cmd_ready[0]), .qp_cmd,
        .st_hit(wc_hit), .st_miss(wc_miss), .st_pf(wc_pf), .st_pf_drop(wc_pf_drop), .st_evict(wc_evict));
    end else begin : g_direct
      assign rd_ar_valid[0]      = wf_ar_valid;
      assign rd_ar_addr[0 +: 64] = wf_ar_addr;
      assign rd_ar_len[0 +: 8]   = wf_ar_len;
      assign wf_ar_ready         = rd_ar_ready[0];
      assign wf_r_valid          = rd_r_valid[0];
      assign wf_r_data           = rd_r_data;
      assign {wc_hit, wc_miss, wc_pf, wc_pf_drop, wc_evict} = '0;
      /* verilator lint_off UNUSEDSIGNAL */
      wire unused_wc = ^{wf_ar_qpn, wf_ar_idx, wf_ar_pi, wf_ar_log_sq};
      /* verilator lint_on UNUSEDSIGNAL */
    end
  endgenerate
  // the RX engine's completion events: to the coalescer, and the acknowledgements among them
  // (ACK, READ done) also to the send path's window (both take it in the same cycle)
  logic      cev_valid, cev_ready, coal_s_ready, win_ack_valid, win_ack_ready;
  srnic_pkg::comp_ev_t  cev;
  wire       cev_is_ack = cev.kind == srnic_pkg::CEV_ACK || cev.kind == srnic_pkg::CEV_READ_DONE;
  assign cev_ready     = coal_s_ready && (!cev_is_ack || win_ack_ready);
  assign win_ack_valid = cev_valid && cev_is_ack && coal_s_ready;
  logic      win_wait;
  srnic_wqe_fetch #(.NUM_QPS(NUM_QPS)) u_fetch (
    .clk, .rst, .sched_burst, .sched_wqes, .tx_window,
    .ack_valid(win_ack_valid), .ack_qpn(cev.qpn[AW-1:0]), .ack_psn(cev.psn), .ack_ready(win_ack_ready),
    .s_valid, .s_qpn, .s_ready,
    .stop_valid(qp_stop_valid), .stop_qpn(qp_stop_qpn[AW-1:0]), .stop_gen(qp_stop_gen), .stop_ready(qp_stop_ready),
    .hstop_valid(herr_valid), .hstop_qpn(herr_qpn), .hstop_ready(herr_ready),
    .rw_valid, .rw, .rw_ready,
    .note_valid(f_note_valid), .note_qpn(f_note_qpn), .note_gen(f_note_gen), .note_ready(1'b1),
    .kick_valid, .kick_qpn, .kick_ready,
    .rnr_valid, .rnr_qpn, .rnr_code, .rnr_ready, .rdc_rw_flush, .rdc_rw_flush_qpn,
    .stale_valid, .stale_qpn, .stale_ready,
    .done_valid, .done_qpn, .done_more, .done_ready,
    .qp_cmd_valid(qp_cmd_valid[0]), .qp_cmd, .qp_cmd_ready(qp_cmd_ready[0]),
    .db_valid(db_sq), .db_qpn(db_index), .db_pi(db_value),
    .ar_valid(wf_ar_valid), .ar_addr(wf_ar_addr), .ar_len(wf_ar_len), .ar_qpn(wf_ar_qpn), .ar_idx(wf_ar_idx),
    .ar_pi(wf_ar_pi), .ar_log_sq(wf_ar_log_sq), .ar_una(), .ar_ready(wf_ar_ready), .r_valid(wf_r_valid), .r_data(wf_r_data),
    .mr_req(mr_req[0]), .mr_key(mr_key[0 +: 32]), .mr_access(mr_access[0 +: 4]), .mr_pd(mr_pd[0 +: 32]), .mr_va(mr_va[0 +: 64]),
    .mr_len(mr_len[0 +: 32]), .mr_rsp(mr_rsp[0]), .mr_ok(mr_ok[0]), .mr_pa(mr_pa[0 +: 64]),
    .rdc_valid, .rdc_ready, .rdc_first, .rdc_last, .rdc_pa, .rdc_mtu, .rdc_last_len,
    .rdc_qa_qpn, .rdc_qa_busy, .rdc_qb_qpn, .rdc_qb_busy, .rdc_free({1'b0, rdc_n_free}),
    .rdc_qb_cnt, .rdc_freed, .qp_reset_valid(gen_bump_valid), .qp_reset_qpn(gen_bump_qpn),
    .job_valid(req_job_valid), .job(req_job), .job_ready(req_job_ready), .bad_wqe,
    .lerr_valid, .lerr, .lerr_ready, .turn_end, .turn_drop, .turn_qpn(), .win_wait,
    .gen_a_qpn(gen_rd_qpn[0*AW +: AW]), .gen_a(gen_rd[0*GW +: GW]),
    .gen_b_qpn(gen_rd_qpn[1*AW +: AW]), .gen_b(gen_rd[1*GW +: GW]),
    .gen_c_qpn(gen_rd_qpn[2*AW +: AW]), .gen_c(gen_rd[2*GW +: GW]),
    .gen_d_qpn(gen_rd_qpn[3*AW +: AW]), .gen_d(gen_rd[3*GW +: GW]), .stale_drop(stale_fetch));
  // The send path never waits to pass an answer on (decision 112): the RX engine may be waiting
  // for room in the completion path that only the completion engine drains, while the
  // completion engine waits for the send path to take its next answer. A QP has one retry
  // episode at a time, so one note per QP is outstanding at most: owed_fifo keeps what its
  // 4 entries cannot take as one bit per QP (and the incarnation's low bit) and sweeps it in.
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_note_gen = ^f_note_gen[GW-1:1];
  /* verilator lint_on UNUSEDSIGNAL */
  owed_fifo #(.NUM(NUM_QPS), .K(1), .TAGW(1), .DEPTH(4), .LANES(NUM_QPS >= 32 ? 16 : NUM_QPS / 2)) u_note (
    .clk, .rst, .s_valid(f_note_valid), .s_idx(f_note_qpn), .s_tag(f_note_gen[0]), .s_kinds(1'b1),
    .m_valid(note_valid), .m_idx(note_qpn), .m_tag(note_gen), .m_ready(note_ready), .pending(note_owed),
    .init_busy());

  // outstanding READ contexts (requester)
  logic        rdc_valid, rdc_ready, rdc_lk_valid, rdc_lk_rsp, rdc_lk_hit, rdc_free_valid, rdc_flush_valid;
  logic [23:0] rdc_first, rdc_last, rdc_lk_psn, rdc_lk_first, rdc_lk_last;
  logic [63:0] rdc_pa, rdc_lk_pa;
  logic [5:0]  rdc_lk_idx, rdc_free_idx;
  logic [2:0]  rdc_mtu, rdc_lk_mtu;
  logic [12:0] rdc_last_len, rdc_lk_last_len, rdc_rx_last_len;
  logic [5:0]  rdc_rx_idx;
  logic        rdc_rx_valid;
  logic [AW-1:0] rdc_rx_qpn;
  logic [63:0] rdc_rx_pa;
  logic [23:0] rdc_rx_first, rdc_rx_last;
  logic [2:0]  rdc_rx_mtu;
  logic        rdc_qerr_flush_valid, rdc_bq_hit, rdc_bq_any;
  logic [AW-1:0] rdc_qerr_flush_qpn, rdc_free_qpn, rdc_bq_qpn;
  logic [23:0] rdc_bq_psn;
  srnic_rd_ctx #(.ENTRIES(64), .QPN_BITS(AW)) u_rdctx (
    .clk, .rst, .ins_valid(rdc_valid), .ins_ready(rdc_ready), .ins_qpn(req_job.qpn[AW-1:0]),
    .ins_first(rdc_first), .ins_last(rdc_last), .ins_pa(rdc_pa),
    .ins_mtu(rdc_mtu), .ins_last_len(rdc_last_len),
    .lk_valid(rdc_lk_valid), .lk_qpn(rdc_lk_qpn), .lk_psn(rdc_lk_psn), .lk_rsp(rdc_lk_rsp),
    .lk_hit(rdc_lk_hit), .lk_idx(rdc_lk_idx), .lk_pa(rdc_lk_pa), .lk_first(rdc_lk_first), .lk_last(rdc_lk_last),
    .lk_mtu(rdc_lk_mtu), .lk_last_len(rdc_lk_last_len),
    .rx_idx(rdc_rx_idx), .rx_valid(rdc_rx_valid), .rx_qpn(rdc_rx_qpn), .rx_pa(rdc_rx_pa),
    .rx_first(rdc_rx_first), .rx_last(rdc_rx_last), .rx_mtu(rdc_rx_mtu), .rx_last_len(rdc_rx_last_len),
    .free_valid(rdc_free_valid), .free_idx(rdc_free_idx), .free_qpn(rdc_free_qpn),
    .rw_flush_valid(rdc_rw_flush), .rw_flush_qpn(rdc_rw_flush_qpn),
    .bq_qpn(rdc_bq_qpn), .bq_psn(rdc_bq_psn), .bq_hit(rdc_bq_hit), .bq_any(rdc_bq_any),
    .flush_valid(rdc_flush_valid), .flush_qpn(qp_cmd.qpn[AW-1:0]),
    .qerr_flush_valid(rdc_qerr_flush_valid), .qerr_flush_qpn(rdc_qerr_flush_qpn),
    .qa_qpn(rdc_qa_qpn), .qa_busy(rdc_qa_busy), .qb_qpn(rdc_qb_qpn), .qb_busy(rdc_qb_busy), .qb_cnt(rdc_qb_cnt),
    .n_free(rdc_n_free), .n_freed(rdc_freed));

  logic    rsp_job_valid, rsp_job_ready, sent_ack, sent_nak;
  srnic_pkg::tx_job_t rsp_job;
  logic    task_valid, task_ready;
  srnic_pkg::resp_task_t task_q;
  logic          rack_valid, rack_ready, ack_deferred, resv_room, resv_take, resv_rel;
  logic [AW-1:0] rack_qpn;
  srnic_resp_tx #(.NUM_QPS(NUM_QPS)) u_resp (
    .clk, .rst, .s_valid(task_valid), .s_task(task_q), .s_ready(task_ready),
    .job_valid(rsp_job_valid), .job(rsp_job), .job_ready(rsp_job_ready), .sent_ack, .sent_nak,
    .rack_valid, .rack_qpn, .rack_ready, .ack_deferred, .resv_room, .resv_take, .resv_rel);

  logic [511:0] pk_tdata;
  logic [63:0]  pk_tkeep;
  logic         pk_tlast, pk_tvalid, pk_tready, frame_sent;
  logic [srnic_pkg::QPN_W-1:0] pk_tqpn, tx_gen_qpn;
  logic [GW-1:0] pk_tgen;
  logic busy_txpkt, busy_comp, busy_cls, busy_place;   // performance counters
  logic          pay_cmd_valid, pay_cmd_ready, pay_rd_busy, pay_valid, pay_pop;
  logic [63:0]   pay_cmd_addr;
  logic [7:0]    pay_cmd_nbeats;
  logic [511:0]  pay_data;
  logic turn_end, turn_drop;
  srnic_tx_pkt #(.NUM_QPS(NUM_QPS)) u_txpkt (
    .clk, .rst, .local_mac, .local_ip, .qp_cmd_valid(qp_cmd_valid[1]), .qp_cmd, .qp_cmd_ready(qp_cmd_ready[1]),
    .req_valid(req_job_valid && tkx_room), .req_job, .req_ready(req_pkt_ready),
    .rsp_valid(rsp_job_valid), .rsp_job, .rsp_ready(rsp_job_ready),
    .rd_cmd_valid(pay_cmd_valid), .rd_cmd_addr(pay_cmd_addr), .rd_cmd_nbeats(pay_cmd_nbeats),
    .rd_cmd_ready(pay_cmd_ready), .rd_busy(pay_rd_busy), .pb_data(pay_data), .pb_valid(pay_valid),
    .pb_pop(pay_pop),
    .m_tdata(pk_tdata), .m_tkeep(pk_tkeep), .m_tlast(pk_tlast), .m_tvalid(pk_tvalid), .m_tready(pk_tready),
    .m_tqpn(pk_tqpn), .m_tgen(pk_tgen), .busy(busy_txpkt));

  // the packetizer's payload reads (AXI ID 1): one command per packet, beats back in order
  srnic_tx_payload u_txpay (
    .clk, .rst, .cmd_valid(pay_cmd_valid), .cmd_addr(pay_cmd_addr), .cmd_nbeats(pay_cmd_nbeats),
    .cmd_ready(pay_cmd_ready), .rd_busy(pay_rd_busy),
    .ar_valid(rd_ar_valid[1]), .ar_addr(rd_ar_addr[64 +: 64]), .ar_len(rd_ar_len[8 +: 8]),
    .ar_ready(rd_ar_ready[1]), .r_valid(rd_r_valid[1]), .r_data(rd_r_data),
    .pb_data(pay_data), .pb_valid(pay_valid), .pb_pop(pay_pop));

  srnic_tx_icrc u_txicrc (
    .clk, .rst, .fatal, .s_tdata(pk_tdata), .s_tkeep(pk_tkeep), .s_tlast(pk_tlast), .s_tvalid(pk_tvalid),
    .s_tqpn(pk_tqpn), .s_tgen(pk_tgen), .s_tready(pk_tready), .m_tdata(m_axis_tx_tdata), .m_tkeep(m_axis_tx_tkeep), .m_tlast(m_axis_tx_tlast),
    .m_tvalid(m_axis_tx_tvalid), .m_tuser(m_axis_tx_tuser), .m_tready(m_axis_tx_tready), .frame_sent,
    .gen_qpn(tx_gen_qpn), .gen_cur(gen_rd[4*GW +: GW]), .stale_drop(stale_tx));
  assign gen_rd_qpn[4*AW +: AW] = tx_gen_qpn[AW-1:0];

  // ---------------------------------------------------------------- RX path
  logic     pmeta_valid, pmeta_ready, meta_valid, meta_ready, d_valid, d_ready;
  srnic_pkg::rx_meta_t pmeta, meta;
  logic [511:0] d_data;
  logic cnt_rx_frame, cnt_drop_icrc, cnt_drop_malformed, cnt_drop_overflow;
  srnic_rx_parse #(.DEPTH(srnic_abi_pkg::RX_BUF_BEATS), .MDEPTH(srnic_abi_pkg::RX_BUF_BEATS),
                   .PAUSE_ON(srnic_abi_pkg::RX_XOFF_BEATS), .PAUSE_OFF(srnic_abi_pkg::RX_XOFF_BEATS / 2)) u_rxparse (
    .clk, .rst, .local_mac, .local_ip,
    .s_tdata(s_axis_rx_tdata), .s_tkeep(s_axis_rx_tkeep), .s_tlast(s_axis_rx_tlast),
    .s_tuser(s_axis_rx_tuser), .s_tvalid(s_axis_rx_tvalid),
    .meta_valid(pmeta_valid), .meta(pmeta), .meta_ready(pmeta_ready), .d_valid, .d_data, .d_ready,
    .cnt_rx_frame, .cnt_drop_icrc, .cnt_drop_malformed, .cnt_drop_overflow, .rx_pause);

  logic [AW-1:0] rdc_lk_qpn;
  logic      rcqe_valid, rcqe_ready, scqe_valid, scqe_ready;
  srnic_pkg::cqe_req_t  rcqe, scqe;
  logic      cnt_drop_qp, cnt_dup, cnt_psn_err, cnt_access_err, cnt_rx_nak, cnt_no_room;
  logic      rx_aw_valid, rx_w_valid, rx_w_last;
  logic [63:0] rx_aw_addr, rx_w_strb;
  logic [7:0]  rx_aw_len;
  logic [511:0] rx_w_data;
  // receive WQEs are read when their packets arrive
  logic         wqe_valid, wqe_pop, resync_valid, resync_ready;
  logic [511:0] wqe_data;
  logic [15:0]  resync_qpn, resync_ci;
  logic         resync_err, qerr_ready, rx_rd_busy;
  logic [AW-1:0] rx_rdq_qpn;
  logic [15:0]  qerr_qpn;
  srnic_rx_rqfetch #(.NUM_QPS(NUM_QPS)) u_rqf (
    .clk, .rst, .qp_cmd_valid(qp_cmd_valid[4]), .qp_cmd, .qp_cmd_ready(qp_cmd_ready[4]),
    .db_valid(db_rq), .db_qpn(db_index), .db_pi(db_value),
    .s_valid(pmeta_valid), .s_meta(pmeta), .s_ready(pmeta_ready),
    .m_valid(meta_valid), .m_meta(meta), .m_ready(meta_ready),
    .wqe_valid, .wqe_data, .wqe_pop, .resync_valid, .resync_ready, .resync_qpn, .resync_ci, .resync_err,
    .ar_valid(rd_ar_valid[2]), .ar_addr(rd_ar_addr[128 +: 64]), .ar_ready(rd_ar_ready[2]),
    .r_valid(rd_r_valid[2]), .r_data(rd_r_data));

  // every request leaving the send path tells the RX engine the QP's next PSN (a resent one
  // does not: the next PSN stays the highest one sent)
  wire        snd_valid = req_job_valid && req_job_ready && !req_job.resend;
  wire        sent_again = req_job_valid && req_job_ready && req_job.resend;
  wire [23:0] snd_next  = (req_job.opcode == srnic_pkg::OP_READ_REQ) ? rdc_last + 24'd1 : req_job.psn + 24'd1;
  srnic_rx_engine #(.NUM_QPS(NUM_QPS)) u_rxeng (
    .clk, .rst, .meta_valid, .meta, .meta_ready, .d_valid, .d_data, .d_ready,
    .qp_cmd_valid(qp_cmd_valid[2]), .qp_cmd, .qp_cmd_ready(qp_cmd_ready[2]),
    .mr_req(mr_req[1]), .mr_key(mr_key[32 +: 32]), .mr_pd(mr_pd[32 +: 32]), .mr_access(mr_access[4 +: 4]),
    .mr_va(mr_va[64 +: 64]), .mr_len(mr_len[32 +: 32]), .mr_rsp(mr_rsp[1]), .mr_ok(mr_ok[1]),
    .mr_pa(mr_pa[64 +: 64]),
    .wqe_valid, .wqe_data, .wqe_pop, .resync_valid, .resync_ready, .resync_qpn, .resync_ci, .resync_err,
    .qerr_valid, .qerr_qpn, .qerr_gen, .qerr_ready, .qerr_owed, .note_valid, .note_qpn, .note_gen,
    .note_ready, .note_owed, .tmo_valid, .tmo_qpn, .tmo_rnr, .tmo_ready,
    .rack_valid, .rack_qpn, .rack_ready, .resv_room, .resv_take, .resv_rel,
    .rdq_qpn(rx_rdq_qpn), .rdq_busy(rx_rd_busy),
    .aw_valid(rx_aw_valid), .aw_addr(rx_aw_addr), .aw_len(rx_aw_len), .aw_ready(wr_aw_ready[0]),
    .w_valid(rx_w_valid), .w_data(rx_w_data), .w_strb(rx_w_strb), .w_last(rx_w_last), .w_ready(wr_w_ready[0]),
    .task_valid, .task_out(task_q), .task_ready,
    .cev_valid, .cev, .cev_ready,
    .rdc_lk_valid, .rdc_lk_qpn, .rdc_lk_psn, .rdc_lk_rsp, .rdc_lk_hit, .rdc_lk_idx, .rdc_lk_pa,
    .rdc_lk_first, .rdc_lk_last, .rdc_lk_mtu, .rdc_lk_last_len,
    .rdc_rx_idx, .rdc_rx_valid, .rdc_rx_qpn, .rdc_rx_pa, .rdc_rx_first, .rdc_rx_last, .rdc_rx_mtu, .rdc_rx_last_len,
    .rdc_free_valid, .rdc_free_idx, .rdc_free_qpn,
    .rdc_bq_qpn, .rdc_bq_psn, .rdc_bq_hit, .rdc_bq_any,
    .rdc_flush_valid, .rdc_qerr_flush_valid, .rdc_qerr_flush_qpn,
    .cqe_valid(rcqe_valid), .cqe(rcqe), .cqe_ready(rcqe_ready),
    .snd_valid, .snd_qpn(req_job.qpn[AW-1:0]), .snd_next,
    .tk_valid(rxk_valid), .tk_qpn(rxk_qpn), .tk_stop(rxk_stop), .tk_ready(rxk_ready),
    .cnt_drop_qp, .cnt_dup, .cnt_no_room, .cnt_psn_err, .cnt_access_err, .cnt_rx_nak, .busy_cls, .busy_place,
    .gen_a_qpn(gen_rd_qpn[5*AW +: AW]), .gen_a(gen_rd[5*GW +: GW]),
    .gen_b_qpn(gen_rd_qpn[6*AW +: AW]), .gen_b(gen_rd[6*GW +: GW]), .stale_drop(stale_rx));
  assign rd_ar_len[16 +: 8] = 8'd0;

  logic      ev_valid, ev_ready, comp_busy;
  logic [srnic_pkg::QPN_W-1:0] comp_busy_qpn;
  srnic_pkg::comp_ev_t  ev;
  srnic_comp_coalesce #(.NUM_QPS(NUM_QPS)) u_coal (
    .clk, .rst, .s_valid(cev_valid && (!cev_is_ack || win_ack_ready)), .s_ev(cev), .s_ready(coal_s_ready),
    .l_valid(lerr_valid), .l_ev(lerr), .l_ready(lerr_ready),
    .m_valid(ev_valid), .m_ev(ev), .m_ready(ev_ready), .busy_qpn(comp_busy_qpn), .busy(comp_busy));

  srnic_comp #(.NUM_QPS(NUM_QPS)) u_comp (
    .clk, .rst, .qp_cmd_valid(qp_cmd_valid[3]), .qp_cmd, .qp_cmd_ready(qp_cmd_ready[3]),
    .ev_valid, .ev_in(ev), .ev_ready, .busy_qpn(comp_busy_qpn), .busy(comp_busy),
    .ar_valid(rd_ar_valid[3]), .ar_addr(rd_ar_addr[192 +: 64]), .ar_len(rd_ar_len[24 +: 8]),
    .ar_ready(rd_ar_ready[3]), .r_valid(rd_r_valid[3]), .r_data(rd_r_data),
    .stop_valid(qp_stop_valid), .stop_qpn(qp_stop_qpn), .stop_gen(qp_stop_gen), .stop_ready(qp_stop_ready),
    .qerr_valid, .qerr_qpn, .qerr_gen, .qerr_ready, .qerr_owed, .stop_owed(), .herr_done, .rw_valid, .rw, .rw_ready, .rx_rd_busy, .rx_rdq_qpn,
    .cqe_valid(scqe_valid), .cqe(scqe), .cqe_ready(scqe_ready), .walk_busy(busy_comp),
    .gen_qpn(gen_rd_qpn[7*AW +: AW]), .gen_cur(gen_rd[7*GW +: GW]), .stale_drop(stale_comp));

  // ---------------------------------------------------------------- timers
  // Local ACK timeout and RNR waits (srnic_timer). Kicks, in priority order: an RNR wait from
  // the send path (rnr_*), the RX engine's restart/stop on an accepted response (rxk_*), and a
  // restart for every request packet leaving the send path (tkx_*, a FIFO the send path
  // waits on when full). The RX engine's stop is STOP_ACK: an RNR wait is never cancelled by
  // a response; its restart is RENEW: a response never arms a stopped timer (one that
  // acknowledges nothing new, a copy or one the ACK of everything overtook, would otherwise
  // start a timeout for a QP with nothing outstanding). Expiries go to the RX engine as retry episodes (a local ACK timeout, or the
  // end of an RNR wait, whose answer unparks the QP: decision 48). The send path's reports of
  // a reused WQE slot (stale_*, decision 49) take the same way as an RNR wait's end, before
  // the expiries. QP_MODIFY sets the QP's timeout attribute and stops its timer.
  logic          tm_kick_valid, tm_kick_ready, tm_fire_valid, tm_fire_ready, tm_fire_rnr;
  logic [AW-1:0] tm_kick_qpn, tm_fire_qpn;
  logic [2:0]    tm_kick_kind;
  sync_fifo #(.WIDTH(AW), .DEPTH(4)) u_tkq (
    .clk, .rst, .s_data(req_job.qpn[AW-1:0]), .s_valid(req_job_valid && req_job_ready), .s_ready(tkx_room),
    .m_data(tkx_qpn), .m_valid(tkx_valid), .m_ready(tkx_ready), .count());
  assign req_job_ready = req_pkt_ready && tkx_room;
  assign tm_kick_valid = rnr_valid || rxk_valid || tkx_valid;
  assign tm_kick_qpn   = rnr_valid ? rnr_qpn : rxk_valid ? rxk_qpn : tkx_qpn;
  assign tm_kick_kind  = rnr_valid ? 3'd1 : rxk_valid ? (rxk_stop ? 3'd3 : 3'd4) : 3'd0;
  assign rnr_ready     = tm_kick_ready;
  assign rxk_ready     = tm_kick_ready && !rnr_valid;
  assign tkx_ready     = tm_kick_ready && !rnr_valid && !rxk_valid;
  srnic_timer #(.NUM_QPS(NUM_QPS), .CYC_PER_UNIT(TIMER_CYC_PER_UNIT)) u_timer (
    .clk, .rst, .cfg_valid(qp_cmd_valid[5]), .cfg_qpn(qp_cmd.qpn[AW-1:0]), .cfg_timeout(qp_cmd.timeout),
    .cfg_ready(qp_cmd_ready[5]),
    .kick_valid(tm_kick_valid), .kick_qpn(tm_kick_qpn), .kick_kind(tm_kick_kind), .kick_rnr(rnr_code),
    .kick_ready(tm_kick_ready),
    .fire_valid(tm_fire_valid), .fire_qpn(tm_fire_qpn), .fire_rnr(tm_fire_rnr), .fire_ready(tm_fire_ready));
  assign tmo_valid     = stale_valid || tm_fire_valid;
  assign tmo_rnr       = stale_valid || tm_fire_rnr;
  assign tmo_qpn       = stale_valid ? stale_qpn : tm_fire_qpn;
  assign stale_ready   = tmo_ready;
  assign tm_fire_ready = tmo_ready && !stale_valid;

  // ---------------------------------------------------------------- CQ writer
  logic        cq_aw_valid, cq_w_valid, cq_w_last, cq_overflow;
  logic [63:0] cq_aw_addr, cq_w_strb;
  logic [7:0]  cq_aw_len;
  logic [511:0] cq_w_data;
  srnic_cq_writer #(.NUM_CQS(NUM_CQS)) u_cq (
    .clk, .rst, .timestamp, .cq_cmd_valid, .cq_cmd, .cq_cmd_ready,
    .db_valid(db_cq), .db_cqn(db_index), .db_ci(db_value),
    .a_valid(rcqe_valid), .a_req(rcqe), .a_ready(rcqe_ready),
    .b_valid(scqe_valid), .b_req(scqe), .b_ready(scqe_ready),
    .aw_valid(cq_aw_valid), .aw_addr(cq_aw_addr), .aw_len(cq_aw_len), .aw_ready(wr_aw_ready[1]),
    .w_valid(cq_w_valid), .w_data(cq_w_data), .w_strb(cq_w_strb), .w_last(cq_w_last), .w_ready(wr_w_ready[1]),
    .irq_valid, .irq_vector, .irq_ready, .cnt_overflow(cq_overflow),
    .drain_req(gen_bump_valid), .drain_busy(cqw_drain_busy),
    .gen_qpn(cq_gen_qpn), .gen_cur(gen_rd[8*GW +: GW]), .stale_drop(stale_cq));
  assign gen_rd_qpn[8*AW +: AW] = cq_gen_qpn[AW-1:0];

  assign wr_aw_valid = {cq_aw_valid, rx_aw_valid};
  assign wr_aw_addr  = {cq_aw_addr, rx_aw_addr};
  assign wr_aw_len   = {cq_aw_len, rx_aw_len};
  assign wr_w_valid  = {cq_w_valid, rx_w_valid};
  assign wr_w_data   = {cq_w_data, rx_w_data};
  assign wr_w_strb   = {cq_w_strb, rx_w_strb};
  assign wr_w_last   = {cq_w_last, rx_w_last};

  // ---------------------------------------------------------------- counters
  always_comb begin
    cnt_inc = '0;
    cnt_inc[srnic_abi_pkg::CNT_TX_FRAMES]         = frame_sent;
    cnt_inc[srnic_abi_pkg::CNT_RX_FRAMES]         = cnt_rx_frame;
    cnt_inc[srnic_abi_pkg::CNT_RX_DROP_ICRC]      = cnt_drop_icrc;
    cnt_inc[srnic_abi_pkg::CNT_RX_DROP_MALFORMED] = cnt_drop_malformed;
    cnt_inc[srnic_abi_pkg::CNT_RX_DROP_QP]        = cnt_drop_qp;
    cnt_inc[srnic_abi_pkg::CNT_RX_DROP_OVERFLOW]  = cnt_drop_overflow;
    cnt_inc[srnic_abi_pkg::CNT_TX_NAK]            = sent_nak;
    cnt_inc[srnic_abi_pkg::CNT_RX_NAK]            = cnt_rx_nak;
    cnt_inc[srnic_abi_pkg::CNT_DB_BAD]            = db_bad || db_overflow || bad_wqe;
    cnt_inc[srnic_abi_pkg::CNT_CQ_OVERFLOW]       = cq_overflow;
    cnt_inc[srnic_abi_pkg::CNT_RX_DUP]            = cnt_dup;
    cnt_inc[srnic_abi_pkg::CNT_TX_ACK]            = sent_ack;
    cnt_inc[srnic_abi_pkg::CNT_RX_PSN_ERR]        = cnt_psn_err;
    cnt_inc[srnic_abi_pkg::CNT_RX_ACCESS_ERR]     = cnt_access_err;
    cnt_inc[srnic_abi_pkg::CNT_TX_RETRANSMIT]     = sent_again;
    cnt_inc[srnic_abi_pkg::CNT_REWIND]            = rdc_rw_flush;
    cnt_inc[srnic_abi_pkg::CNT_ACK_TIMEOUT]       = tmo_valid && tmo_ready && !tmo_rnr;
    cnt_inc[srnic_abi_pkg::CNT_ACK_DEFERRED]      = ack_deferred;
    cnt_inc[srnic_abi_pkg::CNT_RNR_WAIT]          = rnr_valid && rnr_ready;
    cnt_inc[srnic_abi_pkg::CNT_STALE_WQE]         = stale_valid && stale_ready;
    // per-engine busy cycles (docs/scale.md: cycles per packet of each engine)
    cnt_inc[srnic_abi_pkg::CNT_RX_CLS_BUSY]       = busy_cls;
    cnt_inc[srnic_abi_pkg::CNT_RX_PLACE_BUSY]     = busy_place;
    cnt_inc[srnic_abi_pkg::CNT_TX_PKT_BUSY]       = busy_txpkt;
    cnt_inc[srnic_abi_pkg::CNT_COMP_BUSY]         = busy_comp;
    cnt_inc[srnic_abi_pkg::CNT_SQ_TURNS]          = turn_end;
    cnt_inc[srnic_abi_pkg::CNT_SQ_TURNS_DROPPED]  = turn_drop;
    // the `cached` build's WQE cache (zero in the cache-free design)
    cnt_inc[srnic_abi_pkg::CNT_WQE_CACHE_HIT]     = wc_hit;
    cnt_inc[srnic_abi_pkg::CNT_WQE_CACHE_MISS]    = wc_miss;
    cnt_inc[srnic_abi_pkg::CNT_WQE_CACHE_PREFETCH] = wc_pf;
    cnt_inc[srnic_abi_pkg::CNT_WQE_CACHE_PF_DROP] = wc_pf_drop;
    cnt_inc[srnic_abi_pkg::CNT_WQE_CACHE_EVICT]   = wc_evict;
    cnt_inc[srnic_abi_pkg::CNT_TX_WINDOW_WAIT]    = win_wait;
    cnt_inc[srnic_abi_pkg::CNT_PCIE_RD_ERR]       = rd_err;
    cnt_inc[srnic_abi_pkg::CNT_PCIE_WR_ERR]       = bresp_err;
    cnt_inc[srnic_abi_pkg::CNT_RESP_NO_ROOM]      = cnt_no_room;
    cnt_inc[srnic_abi_pkg::CNT_STALE_DROP]        = stale_fetch || stale_comp || stale_rx || stale_tx || stale_cq;
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{rd_r_last, qp_stop_qpn, tx_gen_qpn, cq_gen_qpn};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): chip-level contracts between blocks. The register
  // block holds a doorbell write while the scheduler's doorbell queue is full, so the
  // scheduler's overflow alarm never rises in the chip (its block bench provokes it).
  a_no_doorbell_drop: assert property (@(posedge clk) disable iff (rst)
    !db_overflow)
    else $error("srnic_core: SQ doorbell for QP %0d dropped (scheduler doorbell queue full)", db_index);
`endif
endmodule
`default_nettype wire
