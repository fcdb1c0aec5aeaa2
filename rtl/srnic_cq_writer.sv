// srnic_cq_writer: writes 32-byte CQEs into completion rings in host memory. Requests
// from the RX engine (receive completions) and the completion engine (send completions)
// are served round-robin, one at a time: read the CQ's configuration, producer and
// consumer index, write the CQE with its owner (phase) bit = NOT bit log_size of the
// producer index, advance the producer index, raise an interrupt for the CQ. A full
// ring (producer - consumer == size) or a CQ that is not set up drops the CQE and counts
// it. The consumer index comes from DB_CQ doorbells.
`default_nettype none
module srnic_cq_writer #(
  parameter int NUM_CQS = 1024
) (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic [47:0]  timestamp,
  input  wire logic         cq_cmd_valid,
  input  var srnic_pkg::cq_cmd_t cq_cmd,
  output logic              cq_cmd_ready,
  input  wire logic         db_valid,
  input  wire logic [15:0]  db_cqn,
  input  wire logic [15:0]  db_ci,
  input  wire logic         a_valid,
  input  var srnic_pkg::cqe_req_t a_req,
  output logic              a_ready,
  input  wire logic         b_valid,
  input  var srnic_pkg::cqe_req_t b_req,
  output logic              b_ready,
  output logic              aw_valid,
  output logic [63:0]       aw_addr,
  output logic [7:0]        aw_len,
  input  wire logic         aw_ready,
  output logic              w_valid,
  output logic [511:0]      w_data,
  output logic [63:0]       w_strb,
  output logic              w_last,
  input  wire logic         w_ready,
  output logic              irq_valid,
  output logic [15:0]       irq_vector,
  input  wire logic         irq_ready,
  output logic              cnt_overflow
);
  localparam int CW = $clog2(NUM_CQS);
  localparam int CFG_W = 64 + 4 + 1;

  typedef enum logic [2:0] {Q_IDLE, Q_READ, Q_CHECK, Q_AW, Q_W, Q_CMD} qstate_e;
  qstate_e  qs;
  srnic_pkg::cqe_req_t r;
  logic     rr;
  wire      pick_b = b_valid && (!a_valid || rr);
  // a new CQE waits while the previous interrupt is not taken, so none is lost
  wire      take   = qs == Q_IDLE && (a_valid || b_valid) && !cq_cmd_valid && !(irq_valid && !irq_ready);
  assign a_ready = take && !pick_b;
  assign b_ready = take && pick_b;
  wire [15:0] sel_cqn = pick_b ? b_req.cqn : a_req.cqn;
  wire        cqn_ok  = {16'd0, r.cqn} < NUM_CQS;

  logic [CFG_W-1:0] cfg_q;
  logic [15:0]      pi_q, ci_q;
  logic             pi_we;
  logic [15:0]      pi_wdata;
  logic [CW-1:0]    pi_waddr;
  sdp_ram #(.WIDTH(CFG_W), .DEPTH(NUM_CQS)) u_cfg (
    .clk, .wr_en(cq_cmd_valid && qs == Q_IDLE), .wr_addr(cq_cmd.cqn[CW-1:0]),
    .wr_data({cq_cmd.base, cq_cmd.log_size, cq_cmd.valid}),
    .rd_en(take), .rd_addr(sel_cqn[CW-1:0]), .rd_data(cfg_q));
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_CQS)) u_pi (
    .clk, .wr_en(pi_we), .wr_addr(pi_waddr), .wr_data(pi_wdata),
    .rd_en(take), .rd_addr(sel_cqn[CW-1:0]), .rd_data(pi_q));
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_CQS)) u_ci (
    .clk, .wr_en(db_valid || (cq_cmd_valid && qs == Q_IDLE)),
    .wr_addr(db_valid ? db_cqn[CW-1:0] : cq_cmd.cqn[CW-1:0]), .wr_data(db_valid ? db_ci : 16'd0),
    .rd_en(take), .rd_addr(sel_cqn[CW-1:0]), .rd_data(ci_q));
  // a CQ_WRITE resets both indices; it waits while a doorbell uses the ci port
  assign cq_cmd_ready = cq_cmd_valid && qs == Q_IDLE && !db_valid;
  assign pi_we    = (qs == Q_CHECK && ok_now) || cq_cmd_ready;
  assign pi_waddr = cq_cmd_ready ? cq_cmd.cqn[CW-1:0] : r.cqn[CW-1:0];
  assign pi_wdata = cq_cmd_ready ? 16'd0 : pi_q + 16'd1;

  wire [63:0] base  = cfg_q[CFG_W-1 -: 64];
  wire [3:0]  log_s = cfg_q[4:1];
  wire        valid = cfg_q[0];
  wire [15:0] size  = 16'd1 << log_s;
  wire        ok_now = cqn_ok && valid && (pi_q - ci_q) != size;
  logic [63:0] addr;
  logic [255:0] entry;
  logic [15:0]  pi_cur;
  logic [3:0]   log_cur;
  logic [47:0]  ts_q;         // completion time, fixed while the write waits (AXI stability)

  always_comb begin
    entry = '0;
    entry[srnic_abi_pkg::CQE_WR_ID_OFF*8 +: 64]    = r.wr_id;
    entry[srnic_abi_pkg::CQE_BYTE_LEN_OFF*8 +: 32] = r.byte_len;
    entry[srnic_abi_pkg::CQE_IMM_OFF*8 +: 32]      = r.imm;
    entry[srnic_abi_pkg::CQE_QPN_OFF*8 +: 32]      = {{(32-srnic_pkg::QPN_W){1'b0}}, r.qpn};
    entry[srnic_abi_pkg::CQE_WQE_IDX_OFF*8 +: 16]  = r.wqe_idx;
    entry[srnic_abi_pkg::CQE_OPCODE_OFF*8 +: 8]    = r.opcode;
    entry[srnic_abi_pkg::CQE_STATUS_OFF*8 +: 8]    = r.status;
    entry[srnic_abi_pkg::CQE_TIMESTAMP_OFF*8 +: 48] = ts_q;
    entry[srnic_abi_pkg::CQE_FLAGS_OFF*8 +: 8]     = {7'd0, r.with_imm};
    entry[srnic_abi_pkg::CQE_OWNER_OFF*8 +: 8]     = {7'd0, ~pi_cur[log_cur]};
  end
  assign aw_valid = qs == Q_AW;
  assign aw_addr  = {addr[63:6], 6'd0};
  assign aw_len   = 8'd0;
  assign w_valid  = qs == Q_W;
  assign w_data   = addr[5] ? {entry, 256'd0} : {256'd0, entry};
  assign w_strb   = addr[5] ? {{32{1'b1}}, 32'd0} : {32'd0, {32{1'b1}}};
  assign w_last   = 1'b1;
  assign cnt_overflow = qs == Q_CHECK && !ok_now;
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{db_cqn, sel_cqn, addr[4:0]};
  /* verilator lint_on UNUSEDSIGNAL */

  always_ff @(posedge clk) begin
    if (rst) begin
      qs <= Q_IDLE; rr <= 1'b0; irq_valid <= 1'b0;
    end else begin
      if (irq_valid && irq_ready) irq_valid <= 1'b0;
      case (qs)
        Q_IDLE: if (take) begin r <= pick_b ? b_req : a_req; rr <= !pick_b; qs <= Q_READ; end
        Q_READ: qs <= Q_CHECK;
        Q_CHECK: begin
          addr    <= base + {43'd0, pi_q & (size - 16'd1), 5'd0};
          pi_cur  <= pi_q;
          log_cur <= log_s;
          ts_q    <= timestamp;
          qs <= ok_now ? Q_AW : Q_IDLE;
        end
        Q_AW: if (aw_ready) qs <= Q_W;
        Q_W: if (w_ready) begin
          qs <= Q_IDLE;
          irq_valid  <= 1'b1;
          irq_vector <= r.cqn;
        end
        default: qs <= Q_IDLE;
      endcase
    end
  end

`ifndef SYNTHESIS
  // Assertions (verilator --assert): legal states, AW/W/interrupt held, ring indices.
  logic [63:0] cfg_base_q;
  always_ff @(posedge clk) if (qs == Q_CHECK) cfg_base_q <= base;
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    qs inside {Q_IDLE, Q_READ, Q_CHECK, Q_AW, Q_W})
    else $error("srnic_cq_writer: illegal state %0d", qs);
  a_aw_hold: assert property (@(posedge clk) disable iff (rst)
    aw_valid && !aw_ready |=> aw_valid && $stable(aw_addr) && $stable(aw_len))
    else $error("srnic_cq_writer: AW withdrawn or changed before it was taken");
  a_w_hold: assert property (@(posedge clk) disable iff (rst)
    w_valid && !w_ready |=> w_valid && $stable(w_data) && $stable(w_strb) && $stable(w_last))
    else $error("srnic_cq_writer: CQE write withdrawn or changed before it was taken");
  a_irq_hold: assert property (@(posedge clk) disable iff (rst)
    irq_valid && !irq_ready |=> irq_valid && $stable(irq_vector))
    else $error("srnic_cq_writer: interrupt withdrawn or changed before it was taken");
  a_one_source: assert property (@(posedge clk) disable iff (rst)
    !(a_ready && b_ready))
    else $error("srnic_cq_writer: both CQE sources taken in one cycle");
  // a CQ's producer index never runs more than the ring size ahead of its consumer index
  a_ring_not_overfull: assert property (@(posedge clk) disable iff (rst)
    qs == Q_CHECK && cqn_ok && valid |-> 16'(pi_q - ci_q) <= size)
    else $error("srnic_cq_writer: CQ %0d holds %0d entries, more than its size %0d", r.cqn, pi_q - ci_q, size);
  a_write_in_ring: assert property (@(posedge clk) disable iff (rst)
    qs == Q_AW |-> ((addr - cfg_base_q) >> 5) < (64'd1 << log_cur))
    else $error("srnic_cq_writer: CQE address outside its ring");
`endif
endmodule
`default_nettype wire
