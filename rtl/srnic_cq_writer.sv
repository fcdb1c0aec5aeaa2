// srnic_cq_writer: writes 32-byte CQEs into completion rings in host memory. Requests
// from the RX engine (a: receive completions) and the completion engine (b: send
// completions) are taken round-robin, one per cycle, into a two-stage pipeline:
//   take   (cycle t)    the CQ's configuration, producer and consumer index are read from
//                       their RAMs (synchronous: the data is there at t+1);
//   decide (cycle t+1)  a full ring (producer - consumer == size), a CQ that is not set up
//                       or a CQN out of range drops the CQE and pulses cnt_overflow; any
//                       other CQE gets its slot: address base + (pi mod size) * 32, owner
//                       (phase) bit = NOT bit log_size of the producer index, the timestamp
//                       of this cycle; it goes to the AW and W FIFOs and the producer index
//                       advances.
// The decide stage never waits: a CQE is taken only with room reserved for it in the W FIFO
// and the interrupt FIFO, counted from registered state, so a_ready/b_ready do not depend on
// aw_ready, w_ready or irq_ready, and a drop is reported exactly one cycle after the take.
// Back-to-back CQEs of one CQ: the producer index the RAM returns misses the write of the
// CQE decided in the take cycle, so the decide stage uses the last producer index it wrote
// when the CQN matches (pf_*). A doorbell (new consumer index) is seen by every CQE decided
// after the doorbell's cycle: the RAM read misses a doorbell in the take cycle, which is
// kept for one cycle (df_*) and used instead of the RAM's value for its CQ.
// AXI: every CQE is one 64-byte beat (aw_len 0, w_last 1) with its half strobed. The W of a
// CQE is offered from the cycle after its AW was taken, so data never reaches the bus ahead
// of its address (srnic_dma_wr_mux takes W only inside a granted burst anyway), while the
// AWs of later CQEs go on: the channels do not wait for each other, and AW and W of two
// consecutive CQEs are offered in the same cycle.
// Interrupts: one per CQE written (irq_vector = CQN), raised after its W was taken, in write
// order; up to IQ_DEPTH wait in a FIFO while irq_ready is low, and no CQE is taken that
// could not queue its interrupt, so none is lost.
// CQ_WRITE commands (reset a CQ's configuration and both indices) wait until the pipeline
// is empty (nothing taken, decided or waiting for AW/W; interrupts may still wait) and for
// a cycle without a doorbell (one write port on the consumer indices); no CQE is taken
// while a command waits.
// Throughput: with AW, W and irq always ready and both sources always valid, one CQE per
// cycle, to one CQ or alternating CQs (block_cq_writer Throughput*: 1.00 CQE per cycle
// measured; in the chip srnic_dma_wr_mux grants a burst every second cycle at most).
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
  // At full rate the W FIFO holds the CQE whose W is taken and the one whose AW is taken (W
  // follows AW by a cycle); the take's credit counts them and the CQE being decided without
  // the pops of the cycle (registered state only): 3 must stay below the depth.
  localparam int WQ_DEPTH = 4;
  localparam int WQ_CW = $clog2(WQ_DEPTH) + 1;
  // The interrupt credit counts every CQE that may still write (decide stage, W FIFO) beside
  // the queued interrupts: 1 + 2 + 1 at full rate, so 5 slots would do; sync_fifo takes
  // powers of two.
  localparam int IQ_DEPTH = 8;
  localparam int IQ_CW = $clog2(IQ_DEPTH) + 1;
  localparam int WQ_W = CW + 1 + 256;   // CQN (its interrupt), upper half, CQE

  // ---------------------------------------------------------------- take
  logic                 rr;
  logic                 s1_valid;       // a CQE in the decide stage
  srnic_pkg::cqe_req_t  s1;
  logic [WQ_CW-1:0]     wq_count, awq_count;
  logic [IQ_CW-1:0]     iq_count;
  wire  pick_b  = b_valid && (!a_valid || rr);
  wire  wq_room = 32'(wq_count) + 32'(s1_valid) < WQ_DEPTH;
  wire  iq_room = 32'(iq_count) + 32'(wq_count) + 32'(s1_valid) < IQ_DEPTH;
  wire  take    = (a_valid || b_valid) && !cq_cmd_valid && wq_room && iq_room;
  assign a_ready = take && !pick_b;
  assign b_ready = take && pick_b;
  wire [15:0] sel_cqn = pick_b ? b_req.cqn : a_req.cqn;

  // ---------------------------------------------------------------- CQ state
  logic [CFG_W-1:0] cfg_q;
  logic [15:0]      pi_q, ci_q;
  logic             pi_we;
  logic [15:0]      pi_wdata;
  logic [CW-1:0]    pi_waddr;
  sdp_ram #(.WIDTH(CFG_W), .DEPTH(NUM_CQS)) u_cfg (
    .clk, .wr_en(cq_cmd_ready), .wr_addr(cq_cmd.cqn[CW-1:0]),
    .wr_data({cq_cmd.base, cq_cmd.log_size, cq_cmd.valid}),
    .rd_en(take), .rd_addr(sel_cqn[CW-1:0]), .rd_data(cfg_q));
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_CQS)) u_pi (
    .clk, .wr_en(pi_we), .wr_addr(pi_waddr), .wr_data(pi_wdata),
    .rd_en(take), .rd_addr(sel_cqn[CW-1:0]), .rd_data(pi_q));
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_CQS)) u_ci (
    .clk, .wr_en(db_valid || cq_cmd_ready),
    .wr_addr(db_valid ? db_cqn[CW-1:0] : cq_cmd.cqn[CW-1:0]), .wr_data(db_valid ? db_ci : 16'd0),
    .rd_en(take), .rd_addr(sel_cqn[CW-1:0]), .rd_data(ci_q));
  // a CQ_WRITE resets both indices; it waits while a doorbell uses the ci port, and for an
  // empty pipeline, so no CQE decided with the old configuration or indices is still around
  assign cq_cmd_ready = cq_cmd_valid && !s1_valid && wq_count == '0 && !db_valid;

  // ---------------------------------------------------------------- decide
  logic             pf_valid;       // the last producer index written, for back-to-back CQEs
  logic [CW-1:0]    pf_cqn;
  logic [15:0]      pf_pi;
  logic             df_valid;       // the doorbell of the previous cycle, which the RAM read missed
  logic [CW-1:0]    df_cqn;
  logic [15:0]      df_ci;
  wire [CW-1:0] s1_idx = s1.cqn[CW-1:0];
  wire [15:0]   pi_cur = pf_valid && pf_cqn == s1_idx ? pf_pi : pi_q;
  wire [15:0]   ci_cur = df_valid && df_cqn == s1_idx ? df_ci : ci_q;
  wire [63:0]   base   = cfg_q[CFG_W-1 -: 64];
  wire [3:0]    log_s  = cfg_q[4:1];
  wire          valid  = cfg_q[0];
  wire [15:0]   size   = 16'd1 << log_s;
  wire          cqn_ok = {16'd0, s1.cqn} < NUM_CQS;
  wire          ok_now = cqn_ok && valid && (pi_cur - ci_cur) != size;
  wire          put    = s1_valid && ok_now;
  wire [63:0]   addr   = base + {43'd0, pi_cur & (size - 16'd1), 5'd0};
  assign pi_we    = put || cq_cmd_ready;
  assign pi_waddr = cq_cmd_ready ? cq_cmd.cqn[CW-1:0] : s1_idx;
  assign pi_wdata = cq_cmd_ready ? 16'd0 : pi_cur + 16'd1;
  assign cnt_overflow = s1_valid && !ok_now;

  logic [255:0] entry;
  always_comb begin
    entry = '0;
    entry[srnic_abi_pkg::CQE_WR_ID_OFF*8 +: 64]    = s1.wr_id;
    entry[srnic_abi_pkg::CQE_BYTE_LEN_OFF*8 +: 32] = s1.byte_len;
    entry[srnic_abi_pkg::CQE_IMM_OFF*8 +: 32]      = s1.imm;
    entry[srnic_abi_pkg::CQE_QPN_OFF*8 +: 32]      = {{(32-srnic_pkg::QPN_W){1'b0}}, s1.qpn};
    entry[srnic_abi_pkg::CQE_WQE_IDX_OFF*8 +: 16]  = s1.wqe_idx;
    entry[srnic_abi_pkg::CQE_OPCODE_OFF*8 +: 8]    = s1.opcode;
    entry[srnic_abi_pkg::CQE_STATUS_OFF*8 +: 8]    = s1.status;
    entry[srnic_abi_pkg::CQE_TIMESTAMP_OFF*8 +: 48] = timestamp;
    entry[srnic_abi_pkg::CQE_FLAGS_OFF*8 +: 8]     = {7'd0, s1.with_imm};
    entry[srnic_abi_pkg::CQE_OWNER_OFF*8 +: 8]     = {7'd0, ~pi_cur[log_s]};
  end

  // ---------------------------------------------------------------- AW, W, interrupts
  logic             awq_s_ready, wq_s_ready, iq_s_ready;
  logic [57:0]      awq_addr;
  logic             wq_valid;
  logic [WQ_W-1:0]  wq_data;
  logic [WQ_CW-1:0] aw_ahead;       // AWs taken whose W was not
  logic [CW-1:0]    iq_cqn;
  sync_fifo #(.WIDTH(58), .DEPTH(WQ_DEPTH)) u_awq (
    .clk, .rst, .s_data(addr[63:6]), .s_valid(put), .s_ready(awq_s_ready),
    .m_data(awq_addr), .m_valid(aw_valid), .m_ready(aw_ready), .count(awq_count));
  sync_fifo #(.WIDTH(WQ_W), .DEPTH(WQ_DEPTH)) u_wq (
    .clk, .rst, .s_data({s1_idx, addr[5], entry}), .s_valid(put), .s_ready(wq_s_ready),
    .m_data(wq_data), .m_valid(wq_valid), .m_ready(w_ready && aw_ahead != '0), .count(wq_count));
  wire w_hi = wq_data[256];
  assign aw_addr  = {awq_addr, 6'd0};
  assign aw_len   = 8'd0;
  assign w_valid  = wq_valid && aw_ahead != '0;
  assign w_data   = w_hi ? {wq_data[255:0], 256'd0} : {256'd0, wq_data[255:0]};
  assign w_strb   = w_hi ? {{32{1'b1}}, 32'd0} : {32'd0, {32{1'b1}}};
  assign w_last   = 1'b1;
  sync_fifo #(.WIDTH(CW), .DEPTH(IQ_DEPTH)) u_iq (
    .clk, .rst, .s_data(wq_data[WQ_W-1 -: CW]), .s_valid(w_valid && w_ready), .s_ready(iq_s_ready),
    .m_data(iq_cqn), .m_valid(irq_valid), .m_ready(irq_ready), .count(iq_count));
  assign irq_vector = 16'(iq_cqn);
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{db_cqn, sel_cqn, addr[4:0], awq_s_ready, wq_s_ready, iq_s_ready};
  /* verilator lint_on UNUSEDSIGNAL */

  always_ff @(posedge clk) begin
    if (take) s1 <= pick_b ? b_req : a_req;
    if (put) begin
      pf_cqn <= s1_idx;
      pf_pi  <= pi_cur + 16'd1;
    end
    df_cqn <= db_cqn[CW-1:0];
    df_ci  <= db_ci;
    if (rst) begin
      rr <= 1'b0; s1_valid <= 1'b0; pf_valid <= 1'b0; df_valid <= 1'b0; aw_ahead <= '0;
    end else begin
      if (take) rr <= !pick_b;
      s1_valid <= take;
      // a CQ_WRITE resets the producer index the register may hold
      if (put) pf_valid <= 1'b1;
      else if (cq_cmd_ready) pf_valid <= 1'b0;
      df_valid <= db_valid;
      aw_ahead <= aw_ahead + WQ_CW'(aw_valid && aw_ready) - WQ_CW'(w_valid && w_ready);
    end
  end

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AW/W/interrupt held, one source, ring indices, the
  // reservations that let the decide stage never wait, AW/W pairing, commands on empty.
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
    s1_valid && cqn_ok && valid |-> 16'(pi_cur - ci_cur) <= size)
    else $error("srnic_cq_writer: CQ %0d holds %0d entries, more than its size %0d", s1.cqn, pi_cur - ci_cur, size);
  a_write_in_ring: assert property (@(posedge clk) disable iff (rst)
    put |-> ((addr - base) >> 5) < (64'd1 << log_s))
    else $error("srnic_cq_writer: CQE address outside its ring");
  a_wq_reserved: assert property (@(posedge clk) disable iff (rst)
    put |-> awq_s_ready && wq_s_ready)
    else $error("srnic_cq_writer: decided CQE %0d found the AW or W FIFO full", s1.cqn);
  a_iq_reserved: assert property (@(posedge clk) disable iff (rst)
    w_valid && w_ready |-> iq_s_ready)
    else $error("srnic_cq_writer: CQE written while the interrupt FIFO is full (interrupt lost)");
  a_iq_bound: assert property (@(posedge clk) disable iff (rst)
    32'(iq_count) + 32'(wq_count) + 32'(s1_valid) <= IQ_DEPTH)
    else $error("srnic_cq_writer: %0d interrupts and %0d CQEs in flight exceed the interrupt FIFO",
                iq_count, 32'(wq_count) + 32'(s1_valid));
  // every CQE in the W FIFO has its AW waiting in the AW FIFO or already taken
  a_aw_w_paired: assert property (@(posedge clk) disable iff (rst)
    32'(awq_count) + 32'(aw_ahead) == 32'(wq_count))
    else $error("srnic_cq_writer: %0d AWs waiting + %0d taken != %0d Ws waiting", awq_count, aw_ahead, wq_count);
  a_cmd_on_empty: assert property (@(posedge clk) disable iff (rst)
    cq_cmd_ready |-> !take && !s1_valid && !aw_valid && !w_valid)
    else $error("srnic_cq_writer: CQ_WRITE taken with a CQE in the pipeline");
`endif
endmodule
`default_nettype wire
