// srnic_csr: AXI4-Lite register file, doorbells, counters and the command interface.
//
// Doorbells become one-cycle events (SQ, RQ, CQ). Commands are staged in CMD_DATA and
// executed when CMD is written: QP_MODIFY is decoded into a qp_cmd_t that every block
// holding a slice of the QP context must accept (each has its own ready); MR_WRITE and
// CQ_WRITE go to the MR tables and the CQ writer. CMD_STATUS.busy stays set until all
// consumers have taken the command. While a command executes, writes to CMD and CMD_DATA wait
// (the AXI-Lite write is not completed), so a host may write commands back to back and read
// CMD_STATUS once: commands run in the order written. The first refused command sets the
// error (sticky until CMD_STATUS is read) and every command written after it is skipped;
// CMD_STATUS also counts the commands accepted since it was last read, which tells the host
// which of its commands was refused. The CSR keeps each QP's last state to tell which
// transitions (RESET->INIT, ->RTR, ->RTS) re-initialise indices and PSNs.
// A QP_MODIFY that moves a QP from INIT, RTR or RTS to ERR then stops the QP's send side
// (herr, taken by the fetch engine) and stays busy until the completion engine has begun
// flushing its WQEs (herr_done), so a following RESET cannot overtake the flush. A QP_MODIFY
// starts only while no QP failure is waiting for the RX engine (qerr_busy): a failure
// reported before the command reaches the receive side before the command does.
// NIC_STATUS (decision 108): the first DMA access answered with an error latches FATAL with its
// channel, response code and AXI ID until reset; `fatal` tells the write mux and the TX ICRC
// stage to let nothing more out from the next cycle on.
// A QP_MODIFY to RESET, once every consumer has taken it, advances the QP's incarnation
// (gen_bump_*, srnic_qp_gen, decision 109), and stays busy until the CQ writer has written the
// CQEs it took before (cqw_drain_busy, decision 115): no CQE of the QP's old life reaches a CQ
// after the command completes.
`default_nettype none
module srnic_csr #(
  parameter int NUM_QPS = 16384,
  parameter int NUM_MRS = 256,
  parameter int NUM_CQS = 1024,
  parameter int N_QPC_CONSUMERS = 4
) (
  input  wire logic        clk,
  input  wire logic        rst,
  // AXI4-Lite slave
  input  wire logic [15:0] s_axil_awaddr,
  input  wire logic        s_axil_awvalid,
  output logic             s_axil_awready,
  input  wire logic [31:0] s_axil_wdata,
  input  wire logic [3:0]  s_axil_wstrb,
  input  wire logic        s_axil_wvalid,
  output logic             s_axil_wready,
  output logic [1:0]       s_axil_bresp,
  output logic             s_axil_bvalid,
  input  wire logic        s_axil_bready,
  input  wire logic [15:0] s_axil_araddr,
  input  wire logic        s_axil_arvalid,
  output logic             s_axil_arready,
  output logic [31:0]      s_axil_rdata,
  output logic [1:0]       s_axil_rresp,
  output logic             s_axil_rvalid,
  input  wire logic        s_axil_rready,
  // configuration
  output logic [47:0]      local_mac,
  output logic [31:0]      local_ip,
  output logic [31:0]      sched_burst,
  output logic [3:0]       sched_wqes,
  output logic [31:0]      tx_window,
  output logic [47:0]      timestamp,
  // doorbells
  output logic             db_sq_valid,
  output logic             db_rq_valid,
  output logic             db_cq_valid,
  output logic [15:0]      db_index,     // QPN or CQN
  output logic [15:0]      db_value,     // producer or consumer index
  output logic             db_bad,       // doorbell naming a QP/CQ that does not exist
  input  wire logic        db_sq_room,   // the scheduler can take an SQ doorbell
  // host-driven ERR
  output logic             herr_valid,
  output logic [$clog2(NUM_QPS)-1:0] herr_qpn,
  input  wire logic        herr_ready,
  input  wire logic        herr_done,
  input  wire logic        qerr_busy,
  input  wire logic        cqw_drain_busy,   // the CQ writer holds CQEs it took (or drains after a QP reset)
  // commands
  output logic [N_QPC_CONSUMERS-1:0] qp_cmd_valid,   // per consumer, until it takes the command
  input  wire logic [N_QPC_CONSUMERS-1:0] qp_cmd_ready,
  output srnic_pkg::qp_cmd_t qp_cmd,
  output logic             mr_cmd_valid,
  output logic [$clog2(NUM_MRS)-1:0] mr_cmd_index,
  output srnic_pkg::mr_entry_t mr_cmd,
  output logic             cq_cmd_valid,
  input  wire logic        cq_cmd_ready,
  output srnic_pkg::cq_cmd_t cq_cmd,
  // counters
  input  wire logic [srnic_abi_pkg::NUM_COUNTERS-1:0] cnt_inc,
  // DMA error responses (one pulse per failed read beat or write response) and the fatal latch
  input  wire logic        dma_rd_err,
  input  wire logic [3:0]  dma_rd_err_id,
  input  wire logic [1:0]  dma_rd_err_resp,
  input  wire logic        dma_wr_err,
  input  wire logic [1:0]  dma_wr_err_resp,
  output logic             fatal,
  // a QP_MODIFY to RESET every consumer has taken: the QP's next incarnation (srnic_qp_gen)
  output logic             gen_bump_valid,
  output logic [$clog2(NUM_QPS)-1:0] gen_bump_qpn
);
  localparam int NC = srnic_abi_pkg::NUM_COUNTERS;
  localparam int QAW = $clog2(NUM_QPS);

  // ---------------------------------------------------------------- registers
  logic [31:0] cmd_data [16];
  logic [31:0] counters [NC];
  logic [47:0] ts;
  logic [31:0] ts_hi_latch;
  logic        cmd_busy, cmd_err;
  logic [3:0]  cmd_why;        // reason of the first refusal since CMD_STATUS was read (bits 11:8)
  logic [15:0] cmd_acc;        // commands accepted since CMD_STATUS was read, saturating (bits 31:16)
  logic [7:0]  nic_status;     // NIC_STATUS[7:0]: AXI ID, response code, write, FATAL
  assign fatal = nic_status[srnic_abi_pkg::NIC_ST_FATAL];

  assign timestamp = ts;

  // ---------------------------------------------------------------- AXI-Lite write
  logic        aw_pend, w_pend;
  logic [15:0] aw_addr;
  logic [31:0] w_data;
  logic        wr_fire;
  assign s_axil_awready = !aw_pend && !s_axil_bvalid;
  assign s_axil_wready  = !w_pend && !s_axil_bvalid;
  assign s_axil_bresp   = 2'b00;
  // an SQ doorbell waits (the write is not completed) while the scheduler has no room for it;
  // a command or its payload waits while a command executes
  wire cmd_reg = aw_addr == srnic_abi_pkg::REG_CMD ||
                 (aw_addr >= srnic_abi_pkg::REG_CMD_DATA0 && aw_addr < srnic_abi_pkg::REG_CMD_DATA0 + 16'd64);
  assign wr_fire = aw_pend && w_pend && !s_axil_bvalid && (aw_addr != srnic_abi_pkg::REG_DB_SQ || db_sq_room) &&
                   (!cmd_reg || cst == C_IDLE);

  // ---------------------------------------------------------------- commands
  typedef enum logic [2:0] {C_IDLE, C_STATE_RD, C_ISSUE, C_HSTOP, C_HWAIT, C_CQDRAIN} cstate_e;
  cstate_e cst;
  logic [7:0]  cmd_op;
  logic [23:0] cmd_idx;
  logic [N_QPC_CONSUMERS-1:0] taken;
  logic [511:0] payload;
  always_comb for (int i = 0; i < 16; i++) payload[i*32 +: 32] = cmd_data[i];

  // previous state per QP
  logic [2:0] prev_state_q;
  logic       st_we;
  sdp_ram #(.WIDTH(3), .DEPTH(NUM_QPS)) u_state (
    .clk, .wr_en(st_we), .wr_addr(cmd_idx[QAW-1:0]), .wr_data(qp_cmd.state),
    .rd_en(cst == C_STATE_RD), .rd_addr(cmd_idx[QAW-1:0]), .rd_data(prev_state_q));

  function automatic logic [63:0] field(input logic [511:0] p, input int off, input int w);
    logic [63:0] v;
    v = p[off*8 +: 64];
    if (w < 64) v = v & ((64'd1 << w) - 64'd1);
    field = v;
  endfunction

  always_comb begin
    qp_cmd          = '0;
    qp_cmd.qpn      = cmd_idx[srnic_pkg::QPN_W-1:0];
    qp_cmd.state    = payload[srnic_abi_pkg::QPC_STATE_OFF*8 +: 3];
    qp_cmd.mtu      = payload[srnic_abi_pkg::QPC_MTU_OFF*8 +: 3];
    qp_cmd.access   = payload[srnic_abi_pkg::QPC_ACCESS_OFF*8 +: 4];
    qp_cmd.log_sq   = payload[srnic_abi_pkg::QPC_LOG_SQ_SIZE_OFF*8 +: 4];
    qp_cmd.log_rq   = payload[srnic_abi_pkg::QPC_LOG_RQ_SIZE_OFF*8 +: 4];
    qp_cmd.sport    = payload[srnic_abi_pkg::QPC_UDP_SPORT_OFF*8 +: 16];
    qp_cmd.dqpn     = payload[srnic_abi_pkg::QPC_DEST_QPN_OFF*8 +: 24];
    qp_cmd.pd       = payload[srnic_abi_pkg::QPC_PD_OFF*8 +: 32];
    qp_cmd.sq_psn   = payload[srnic_abi_pkg::QPC_SQ_PSN_OFF*8 +: 24];
    qp_cmd.rq_psn   = payload[srnic_abi_pkg::QPC_RQ_PSN_OFF*8 +: 24];
    qp_cmd.send_cqn = payload[srnic_abi_pkg::QPC_SEND_CQN_OFF*8 +: 16];
    qp_cmd.recv_cqn = payload[srnic_abi_pkg::QPC_RECV_CQN_OFF*8 +: 16];
    qp_cmd.dip      = payload[srnic_abi_pkg::QPC_DEST_IP_OFF*8 +: 32];
    qp_cmd.dmac     = payload[srnic_abi_pkg::QPC_DEST_MAC_OFF*8 +: 48];
    qp_cmd.sq_base  = payload[srnic_abi_pkg::QPC_SQ_BASE_OFF*8 +: 64];
    qp_cmd.rq_base  = payload[srnic_abi_pkg::QPC_RQ_BASE_OFF*8 +: 64];
    qp_cmd.retry_cnt = payload[srnic_abi_pkg::QPC_RETRY_OFF*8 +: 3];
    qp_cmd.rnr_retry = payload[srnic_abi_pkg::QPC_RETRY_OFF*8 + 3 +: 3];
    qp_cmd.timeout   = payload[srnic_abi_pkg::QPC_TIMEOUT_OFF*8 +: 5];
    qp_cmd.min_rnr   = payload[srnic_abi_pkg::QPC_MIN_RNR_TIMER_OFF*8 +: 5];
    qp_cmd.init_idx    = prev_state_q == 3'(srnic_abi_pkg::QPS_RESET) && qp_cmd.state == 3'(srnic_abi_pkg::QPS_INIT);
    qp_cmd.init_rq_psn = prev_state_q == 3'(srnic_abi_pkg::QPS_INIT) && qp_cmd.state == 3'(srnic_abi_pkg::QPS_RTR);
    qp_cmd.init_sq_psn = prev_state_q == 3'(srnic_abi_pkg::QPS_RTR) && qp_cmd.state == 3'(srnic_abi_pkg::QPS_RTS);

    mr_cmd        = '0;
    mr_cmd.iova   = payload[srnic_abi_pkg::MR_IOVA_OFF*8 +: 64];
    mr_cmd.length = payload[srnic_abi_pkg::MR_LENGTH_OFF*8 +: 64];
    mr_cmd.pa     = payload[srnic_abi_pkg::MR_PA_OFF*8 +: 64];
    mr_cmd.key    = payload[srnic_abi_pkg::MR_KEY_OFF*8 +: 32];
    mr_cmd.pd     = payload[srnic_abi_pkg::MR_PD_OFF*8 +: 32];
    mr_cmd.access = payload[srnic_abi_pkg::MR_ACCESS_OFF*8 +: 4];
    mr_cmd.valid  = |payload[srnic_abi_pkg::MR_VALID_OFF*8 +: 8];

    cq_cmd          = '0;
    cq_cmd.cqn      = cmd_idx[15:0];
    cq_cmd.base     = payload[srnic_abi_pkg::CQC_BASE_OFF*8 +: 64];
    cq_cmd.log_size = payload[srnic_abi_pkg::CQC_LOG_SIZE_OFF*8 +: 4];
    cq_cmd.valid    = payload[srnic_abi_pkg::CQC_FLAGS_OFF*8];
  end
  assign mr_cmd_index = cmd_idx[$clog2(NUM_MRS)-1:0];

  // Host input the NIC refuses (command error, nothing changes): rings not aligned to their
  // entry size, ring sizes beyond what the 16-bit indices and the 4-bit size fields hold,
  // an unknown QP state, a path MTU code outside 256..4096 once the QP has a path (RTR/RTS).
  wire [7:0]  p_state  = payload[srnic_abi_pkg::QPC_STATE_OFF*8 +: 8];
  wire [7:0]  p_mtu    = payload[srnic_abi_pkg::QPC_MTU_OFF*8 +: 8];
  wire [7:0]  p_log_sq = payload[srnic_abi_pkg::QPC_LOG_SQ_SIZE_OFF*8 +: 8];
  wire [7:0]  p_log_rq = payload[srnic_abi_pkg::QPC_LOG_RQ_SIZE_OFF*8 +: 8];
  wire [5:0]  p_sq     = payload[srnic_abi_pkg::QPC_SQ_BASE_OFF*8 +: 6];    // low address bits
  wire [5:0]  p_rq     = payload[srnic_abi_pkg::QPC_RQ_BASE_OFF*8 +: 6];
  wire [4:0]  p_cq     = payload[srnic_abi_pkg::CQC_BASE_OFF*8 +: 5];
  wire [7:0]  p_log_cq = payload[srnic_abi_pkg::CQC_LOG_SIZE_OFF*8 +: 8];
  wire p_state_ok = p_state == srnic_abi_pkg::QPS_RESET || p_state == srnic_abi_pkg::QPS_INIT ||
                    p_state == srnic_abi_pkg::QPS_RTR || p_state == srnic_abi_pkg::QPS_RTS ||
                    p_state == srnic_abi_pkg::QPS_ERR;
  wire p_has_path = p_state == srnic_abi_pkg::QPS_RTR || p_state == srnic_abi_pkg::QPS_RTS;
  wire qp_payload_ok = p_state_ok && (!p_has_path || (p_mtu >= 8'd1 && p_mtu <= 8'd5)) &&
                       p_log_sq <= 8'd15 && p_log_rq <= 8'd15 && p_sq == 6'd0 && p_rq == 6'd0;
  wire cq_payload_ok = !payload[srnic_abi_pkg::CQC_FLAGS_OFF*8] ||
                       (p_cq == 5'd0 && p_log_cq <= 8'd15);

  // a command written to CMD (only ever while no command executes): accepted, refused (reason
  // 1: opcode or index, 3: payload) or, after an unread refusal, skipped
  wire [7:0] w_op = w_data[31:24];
  wire w_idx_ok = (w_op == srnic_abi_pkg::CMD_QP_MODIFY && {8'd0, w_data[23:0]} < NUM_QPS) ||
                  (w_op == srnic_abi_pkg::CMD_MR_WRITE && {8'd0, w_data[23:0]} < NUM_MRS) ||
                  (w_op == srnic_abi_pkg::CMD_CQ_WRITE && {8'd0, w_data[23:0]} < NUM_CQS);
  wire w_pay_ok = !((w_op == srnic_abi_pkg::CMD_QP_MODIFY && !qp_payload_ok) ||
                    (w_op == srnic_abi_pkg::CMD_CQ_WRITE && !cq_payload_ok));
  wire cmd_wr     = wr_fire && aw_addr == srnic_abi_pkg::REG_CMD && !cmd_err;
  wire cmd_start  = cmd_wr && w_idx_ok && w_pay_ok;
  wire cmd_refuse = cmd_wr && !(w_idx_ok && w_pay_ok);
  wire [3:0] refuse_why = w_idx_ok ? 4'd3 : 4'd1;
  wire status_rd  = s_axil_arvalid && s_axil_arready && s_axil_araddr == srnic_abi_pkg::REG_CMD_STATUS;

  wire qp_issue = cst == C_ISSUE && cmd_op == srnic_abi_pkg::CMD_QP_MODIFY;
  assign qp_cmd_valid = qp_issue ? ~taken : '0;
  assign mr_cmd_valid = cst == C_ISSUE && cmd_op == srnic_abi_pkg::CMD_MR_WRITE;
  assign cq_cmd_valid = cst == C_ISSUE && cmd_op == srnic_abi_pkg::CMD_CQ_WRITE;
  wire [N_QPC_CONSUMERS-1:0] taken_now = taken | (qp_cmd_valid & qp_cmd_ready);
  wire cmd_done = (qp_issue && &taken_now) || mr_cmd_valid || (cq_cmd_valid && cq_cmd_ready);
  assign st_we = qp_issue && &taken_now;
  assign gen_bump_valid = st_we && qp_cmd.state == 3'(srnic_abi_pkg::QPS_RESET);
  assign gen_bump_qpn   = cmd_idx[QAW-1:0];
  // INIT/RTR/RTS -> ERR: the send side is stopped and every WQE flushed
  wire to_err = qp_issue && qp_cmd.state == 3'(srnic_abi_pkg::QPS_ERR) &&
                prev_state_q != 3'(srnic_abi_pkg::QPS_ERR) && prev_state_q != 3'(srnic_abi_pkg::QPS_RESET);
  assign herr_valid = cst == C_HSTOP;
  assign herr_qpn   = cmd_idx[QAW-1:0];

  // ---------------------------------------------------------------- doorbells
  wire [15:0] wr_reg = aw_addr;
  wire is_db_sq = wr_fire && wr_reg == srnic_abi_pkg::REG_DB_SQ;
  wire is_db_rq = wr_fire && wr_reg == srnic_abi_pkg::REG_DB_RQ;
  wire is_db_cq = wr_fire && wr_reg == srnic_abi_pkg::REG_DB_CQ;
  wire db_qp_ok = {16'd0, w_data[15:0]} < NUM_QPS;
  wire db_cq_ok = {16'd0, w_data[15:0]} < NUM_CQS;
  always_ff @(posedge clk) begin
    db_sq_valid <= !rst && is_db_sq && db_qp_ok;
    db_rq_valid <= !rst && is_db_rq && db_qp_ok;
    db_cq_valid <= !rst && is_db_cq && db_cq_ok;
    db_bad      <= !rst && (((is_db_sq || is_db_rq) && !db_qp_ok) || (is_db_cq && !db_cq_ok));
    db_index    <= w_data[15:0];
    db_value    <= w_data[31:16];
  end

  // ---------------------------------------------------------------- sequential
  always_ff @(posedge clk) begin
    if (rst) begin
      aw_pend <= 1'b0; w_pend <= 1'b0; s_axil_bvalid <= 1'b0;
      s_axil_rvalid <= 1'b0;
      local_mac <= '0; local_ip <= '0;
      sched_burst <= 32'd65536; sched_wqes <= 4'd8; tx_window <= 32'd128;
      ts <= '0;
      cst <= C_IDLE; cmd_busy <= 1'b0; cmd_err <= 1'b0; cmd_why <= 4'd0; cmd_acc <= '0; taken <= '0;
      cmd_op <= '0; cmd_idx <= '0;
      for (int i = 0; i < NC; i++) counters[i] <= '0;
      nic_status <= '0;
    end else begin
      if (!fatal && dma_rd_err)      nic_status <= {dma_rd_err_id, dma_rd_err_resp, 2'b01};
      else if (!fatal && dma_wr_err) nic_status <= {4'd0, dma_wr_err_resp, 2'b11};
      ts <= ts + 48'd1;
      for (int i = 0; i < NC; i++) if (cnt_inc[i]) counters[i] <= counters[i] + 32'd1;

      if (s_axil_awvalid && s_axil_awready) begin aw_pend <= 1'b1; aw_addr <= s_axil_awaddr; end
      if (s_axil_wvalid && s_axil_wready) begin w_pend <= 1'b1; w_data <= s_axil_wdata; end
      if (s_axil_bvalid && s_axil_bready) s_axil_bvalid <= 1'b0;
      if (wr_fire) begin
        aw_pend <= 1'b0; w_pend <= 1'b0; s_axil_bvalid <= 1'b1;
        case (wr_reg)
          srnic_abi_pkg::REG_MAC_LO:      local_mac[31:0] <= w_data;
          srnic_abi_pkg::REG_MAC_HI:      local_mac[47:32] <= w_data[15:0];
          srnic_abi_pkg::REG_IPV4:        local_ip <= w_data;
          srnic_abi_pkg::REG_SCHED_BURST: sched_burst <= (w_data < 32'd64) ? 32'd64 : w_data;
          srnic_abi_pkg::REG_SCHED_WQES:  sched_wqes <= (w_data[3:0] == 4'd0 || w_data > 32'd8) ? 4'd8 : w_data[3:0];
          srnic_abi_pkg::REG_TX_WINDOW:   tx_window <= (w_data > 32'h40_0000) ? 32'h40_0000 : w_data;
          srnic_abi_pkg::REG_CMD: ;   // cmd_start / cmd_refuse below
          default: begin
            if (wr_reg >= srnic_abi_pkg::REG_CMD_DATA0 && wr_reg < srnic_abi_pkg::REG_CMD_DATA0 + 16'd64)
              cmd_data[wr_reg[5:2]] <= w_data;
          end
        endcase
      end
      if (cmd_start) begin
        cmd_op <= w_op; cmd_idx <= w_data[23:0]; taken <= '0;
        cst <= C_STATE_RD; cmd_busy <= 1'b1;
      end
      // CMD_STATUS: a read returns and clears the refusal and the accepted count; what happens
      // in the cycle of the read is left for the next read
      if (status_rd) begin
        cmd_err <= cmd_refuse;
        cmd_why <= cmd_refuse ? refuse_why : 4'd0;
        cmd_acc <= {15'd0, cmd_start};
      end else begin
        if (cmd_refuse) begin cmd_err <= 1'b1; cmd_why <= refuse_why; end
        if (cmd_start && cmd_acc != 16'hFFFF) cmd_acc <= cmd_acc + 16'd1;
      end

      case (cst)
        C_STATE_RD: if (!qerr_busy) cst <= C_ISSUE;   // prev_state_q valid next cycle
        C_ISSUE: begin
          taken <= taken_now;
          if (cmd_done) begin
            if (to_err) cst <= C_HSTOP;
            else if (gen_bump_valid && cqw_drain_busy) cst <= C_CQDRAIN;
            else begin cst <= C_IDLE; cmd_busy <= 1'b0; end
          end
        end
        C_CQDRAIN: if (!cqw_drain_busy) begin cst <= C_IDLE; cmd_busy <= 1'b0; end
        C_HSTOP: if (herr_ready) cst <= C_HWAIT;
        C_HWAIT: if (herr_done) begin cst <= C_IDLE; cmd_busy <= 1'b0; end
        default: ;
      endcase

      if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
      if (s_axil_arvalid && s_axil_arready) begin
        s_axil_rvalid <= 1'b1;
        s_axil_rdata  <= 32'd0;
        case (s_axil_araddr)
          srnic_abi_pkg::REG_ID:          s_axil_rdata <= srnic_abi_pkg::ID_VALUE;
          srnic_abi_pkg::REG_VERSION:     s_axil_rdata <= srnic_abi_pkg::VERSION_VALUE;
          srnic_abi_pkg::REG_CAPS:        s_axil_rdata <= {8'd0, 8'($clog2(NUM_CQS)), 8'($clog2(NUM_MRS)), 8'($clog2(NUM_QPS))};
          srnic_abi_pkg::REG_NIC_STATUS:  s_axil_rdata <= {24'd0, nic_status};
          srnic_abi_pkg::REG_MAC_LO:      s_axil_rdata <= local_mac[31:0];
          srnic_abi_pkg::REG_MAC_HI:      s_axil_rdata <= {16'd0, local_mac[47:32]};
          srnic_abi_pkg::REG_IPV4:        s_axil_rdata <= local_ip;
          srnic_abi_pkg::REG_TS_LO:       begin s_axil_rdata <= ts[31:0]; ts_hi_latch <= {16'd0, ts[47:32]}; end
          srnic_abi_pkg::REG_TS_HI:       s_axil_rdata <= ts_hi_latch;
          srnic_abi_pkg::REG_SCHED_BURST: s_axil_rdata <= sched_burst;
          srnic_abi_pkg::REG_SCHED_WQES:  s_axil_rdata <= {28'd0, sched_wqes};
          srnic_abi_pkg::REG_TX_WINDOW:   s_axil_rdata <= tx_window;
          srnic_abi_pkg::REG_CMD_STATUS:  s_axil_rdata <= {cmd_acc, 4'd0, cmd_why, 6'd0, cmd_err, cmd_busy};
          default: begin
            if (s_axil_araddr >= srnic_abi_pkg::REG_CMD_DATA0 && s_axil_araddr < srnic_abi_pkg::REG_CMD_DATA0 + 16'd64)
              s_axil_rdata <= cmd_data[s_axil_araddr[5:2]];
            else if (s_axil_araddr >= srnic_abi_pkg::REG_CNT_BASE && s_axil_araddr < srnic_abi_pkg::REG_CNT_BASE + 16'(4 * NC))
              s_axil_rdata <= counters[s_axil_araddr[$clog2(NC)+1:2]];
          end
        endcase
      end
    end
  end
  assign s_axil_arready = !s_axil_rvalid;
  // Registers are written as whole 32-bit words; the QP index range is checked above.
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{s_axil_wstrb, cmd_idx[23:16]};
  /* verilator lint_on UNUSEDSIGNAL */
  assign s_axil_rresp   = 2'b00;

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AXI4-Lite response rules, command handshakes.
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    cst inside {C_IDLE, C_STATE_RD, C_ISSUE, C_HSTOP, C_HWAIT, C_CQDRAIN})
    else $error("srnic_csr: illegal command state %0d", cst);
  a_herr_hold: assert property (@(posedge clk) disable iff (rst)
    herr_valid && !herr_ready |=> herr_valid && $stable(herr_qpn))
    else $error("srnic_csr: host stop withdrawn or changed before it was taken");
  a_b_hold: assert property (@(posedge clk) disable iff (rst)
    s_axil_bvalid && !s_axil_bready |=> s_axil_bvalid && $stable(s_axil_bresp))
    else $error("srnic_csr: BVALID dropped or BRESP changed before BREADY");
  a_r_hold: assert property (@(posedge clk) disable iff (rst)
    s_axil_rvalid && !s_axil_rready |=> s_axil_rvalid && $stable(s_axil_rdata) && $stable(s_axil_rresp))
    else $error("srnic_csr: RVALID dropped or read data changed before RREADY");
  a_qp_cmd_hold: assert property (@(posedge clk) disable iff (rst)
    |(qp_cmd_valid & ~qp_cmd_ready) |=> (qp_cmd_valid & $past(qp_cmd_valid & ~qp_cmd_ready)) == $past(qp_cmd_valid & ~qp_cmd_ready) && $stable(qp_cmd))
    else $error("srnic_csr: QP command withdrawn or changed before every consumer took it");
  a_cq_cmd_hold: assert property (@(posedge clk) disable iff (rst)
    cq_cmd_valid && !cq_cmd_ready |=> cq_cmd_valid && $stable(cq_cmd))
    else $error("srnic_csr: CQ command withdrawn or changed before it was taken");
  a_cmd_wait: assert property (@(posedge clk) disable iff (rst)
    wr_fire && cmd_reg |-> cst == C_IDLE)
    else $error("srnic_csr: command register written while a command executes");
  a_db_onehot: assert property (@(posedge clk) disable iff (rst)
    $onehot0({db_sq_valid, db_rq_valid, db_cq_valid, db_bad}))
    else $error("srnic_csr: one register write raised two doorbells");
`endif
endmodule
`default_nettype wire
