// srnic_cq_writer: writes 32-byte CQEs into completion rings in host memory. Requests
// from the RX engine (receive completions) and the completion engine (send completions)
// are served round-robin, one per cycle, in a pipeline:
//   take   read the CQ's configuration, producer and consumer index (one RAM read each);
//   check  the cycle after: drop the CQE if the CQ is not set up or its ring is full
//          (producer - consumer == size, counted), else compose it with its owner (phase)
//          bit = NOT bit log_size of the producer index, advance the producer index and
//          queue the write in a 2-entry output FIFO;
//   write  AW, then the W beat of the FIFO's head, then an interrupt for its CQ.
// A take is made only when the output FIFO has room for every CQE between take and write,
// so check never stalls and always follows its read by one cycle. The producer index read
// in the cycle that check wrote it is stale; check forwards its own write of the cycle
// before. The consumer index comes from DB_CQ doorbells; a doorbell in the take cycle is
// seen by the next CQE (a conservative ring-full test). A CQ_WRITE command waits until
// the pipeline and the FIFO are empty. One interrupt may stand for several CQEs of a CQ:
// a write whose CQ differs from the pending interrupt's waits until that one is taken.
// A CQE request made for an earlier incarnation of its QP (decision 109: the host reset the QP
// since) is taken and dropped, so no completion of a reset QP reaches its CQ after the reset.
// A CQE taken before the reset is written before the reset command completes (decision 115):
// drain_req (the reset's incarnation advance) stops taking until the check stage and the
// output FIFO are empty (at most two CQEs, each waiting only for the write channel); requests
// still offered meanwhile wait, and those of the reset QP are stale by then. drain_busy: a CQE
// taken is still in the pipeline, or a drain goes on (registers only: the CSR may look at it
// in the cycle of its own drain_req).
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
  output logic              cnt_overflow,
  // a QP reset (decision 115): write what was taken, take nothing new meanwhile
  input  wire logic         drain_req,
  output logic              drain_busy,     // a CQE taken is not written yet, or a drain goes on
  // QP incarnations (srnic_qp_gen): gen_cur answers gen_qpn, the QP of the request offered
  output logic [srnic_pkg::QPN_W-1:0] gen_qpn,
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_cur,
  output logic              stale_drop
);
  localparam int CW = $clog2(NUM_CQS);
  localparam int CFG_W = 64 + 4 + 1;
  localparam int OUT_W = 16 + 59 + 256;    // CQN, 32-byte slot address, CQE

  // ---------------------------------------------------------------- take
  logic     s1_v;                 // check stage holds a CQE (its CQ state read last cycle)
  srnic_pkg::cqe_req_t r;         // the check stage's CQE
  logic     rr;
  logic [1:0] of_count;
  logic     of_push, of_pop;
  // room in the output FIFO for this CQE and the one in check (not counting this cycle's
  // pop keeps the AXI ready inputs out of a_ready/b_ready; the FIFO drains one CQE per
  // two cycles, and so does this)
  wire      room   = {1'b0, of_count} + {2'd0, s1_v} < 3'd2;
  wire      pick_b = b_valid && (!a_valid || rr);
  srnic_pkg::cqe_req_t sel_req;
  assign sel_req  = pick_b ? b_req : a_req;
  assign gen_qpn  = sel_req.qpn;
  wire      sel_stale = sel_req.gen != gen_cur;
  logic     draining;
  wire      take   = (a_valid || b_valid) && !cq_cmd_valid && room && !sel_stale && !drain_req && !draining;
  assign stale_drop = (a_valid || b_valid) && !cq_cmd_valid && sel_stale;
  assign drain_busy = draining || s1_v || of_count != 2'd0;
  assign a_ready = (take || stale_drop) && !pick_b;
  assign b_ready = (take || stale_drop) && pick_b;
  wire [15:0] sel_cqn = pick_b ? b_req.cqn : a_req.cqn;
  wire        cqn_ok  = {16'd0, r.cqn} < NUM_CQS;

  logic [CFG_W-1:0] cfg_q;
  logic [15:0]      pi_q, ci_q;
  logic             pi_we;
  logic [15:0]      pi_wdata;
  logic [CW-1:0]    pi_waddr;
  // a CQ_WRITE resets both indices; it waits for an empty pipeline and a doorbell-free ci port
  assign cq_cmd_ready = cq_cmd_valid && !s1_v && of_count == 2'd0 && !db_valid;
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

  // ---------------------------------------------------------------- check
  // the producer index check wrote in the cycle of this CQE's read
  logic        fw_v;
  logic [15:0] fw_cqn, fw_pi;
  wire  [15:0] pi_now = fw_v && fw_cqn == r.cqn ? fw_pi : pi_q;
  wire [63:0] base  = cfg_q[CFG_W-1 -: 64];
  wire [3:0]  log_s = cfg_q[4:1];
  wire        valid = cfg_q[0];
  wire [15:0] size  = 16'd1 << log_s;
  wire        ok_now = cqn_ok && valid && (pi_now - ci_q) != size;
  assign pi_we    = (s1_v && ok_now) || cq_cmd_ready;
  assign pi_waddr = cq_cmd_ready ? cq_cmd.cqn[CW-1:0] : r.cqn[CW-1:0];
  assign pi_wdata = cq_cmd_ready ? 16'd0 : pi_now + 16'd1;
  assign of_push  = s1_v && ok_now;
  assign cnt_overflow = s1_v && !ok_now;
  wire [63:0] addr = base + {43'd0, pi_now & (size - 16'd1), 5'd0};
  logic [255:0] entry;
  always_comb begin
    entry = '0;
    entry[srnic_abi_pkg::CQE_WR_ID_OFF*8 +: 64]    = r.wr_id;
    entry[srnic_abi_pkg::CQE_BYTE_LEN_OFF*8 +: 32] = r.byte_len;
    entry[srnic_abi_pkg::CQE_IMM_OFF*8 +: 32]      = r.imm;
    entry[srnic_abi_pkg::CQE_QPN_OFF*8 +: 32]      = {{(32-srnic_pkg::QPN_W){1'b0}}, r.qpn};
    entry[srnic_abi_pkg::CQE_WQE_IDX_OFF*8 +: 16]  = r.wqe_idx;
    entry[srnic_abi_pkg::CQE_OPCODE_OFF*8 +: 8]    = r.opcode;
    entry[srnic_abi_pkg::CQE_STATUS_OFF*8 +: 8]    = r.status;
    entry[srnic_abi_pkg::CQE_TIMESTAMP_OFF*8 +: 48] = timestamp;
    entry[srnic_abi_pkg::CQE_FLAGS_OFF*8 +: 8]     = {7'd0, r.with_imm};
    entry[srnic_abi_pkg::CQE_OWNER_OFF*8 +: 8]     = {7'd0, ~pi_now[log_s]};
  end

  // ---------------------------------------------------------------- write
  logic [OUT_W-1:0] of_data;
  logic             of_valid;
  logic [1:0]       of_cnt_w;
  logic             of_s_ready;     // always set when pushed (take reserves the room)
  sync_fifo #(.WIDTH(OUT_W), .DEPTH(2)) u_out (
    .clk, .rst, .s_data({r.cqn, addr[63:5], entry}), .s_valid(of_push), .s_ready(of_s_ready),
    .m_data(of_data), .m_valid(of_valid), .m_ready(of_pop), .count(of_cnt_w));
  assign of_count = of_cnt_w;
  wire [15:0]  o_cqn   = of_data[OUT_W-1 -: 16];
  wire [63:0]  o_addr  = {of_data[256 +: 59], 5'd0};
  wire [255:0] o_entry = of_data[255:0];
  logic aw_done;                  // the head's AW was taken; its W beat is next
  // the interrupt slot is free for the head's CQ, or already stands for it
  wire  irq_ok = !irq_valid || irq_ready || irq_vector == o_cqn;
  assign aw_valid = of_valid && !aw_done;
  assign aw_addr  = {o_addr[63:6], 6'd0};
  assign aw_len   = 8'd0;
  assign w_valid  = of_valid && aw_done && irq_ok;
  assign w_data   = o_addr[5] ? {o_entry, 256'd0} : {256'd0, o_entry};
  assign w_strb   = o_addr[5] ? {{32{1'b1}}, 32'd0} : {32'd0, {32{1'b1}}};
  assign w_last   = 1'b1;
  assign of_pop   = w_valid && w_ready;

  always_ff @(posedge clk) begin
    if (rst) begin
      s1_v <= 1'b0; rr <= 1'b0; irq_valid <= 1'b0; aw_done <= 1'b0; fw_v <= 1'b0; draining <= 1'b0;
    end else begin
      if (drain_req) draining <= 1'b1;
      else if (draining && !s1_v && of_count == 2'd0) draining <= 1'b0;
      s1_v <= take;
      if (take) begin r <= sel_req; rr <= !pick_b; end
      else if (stale_drop) rr <= !pick_b;
      fw_v <= pi_we;
      fw_cqn <= cq_cmd_ready ? cq_cmd.cqn : r.cqn;
      fw_pi <= pi_wdata;
      if (aw_valid && aw_ready) aw_done <= 1'b1;
      if (of_pop) aw_done <= 1'b0;
      if (irq_valid && irq_ready) irq_valid <= 1'b0;
      if (of_pop) begin irq_valid <= 1'b1; irq_vector <= o_cqn; end
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{db_cqn, sel_cqn, addr[4:0], o_addr[4:0], of_s_ready, r.gen};   // r.gen: checked at take
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AW/W/interrupt held, ring indices, no output overrun.
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
  a_out_room: assert property (@(posedge clk) disable iff (rst)
    of_push |-> of_count != 2'd2 || of_pop)
    else $error("srnic_cq_writer: output FIFO overrun");
  // a CQ's producer index never runs more than the ring size ahead of its consumer index
  a_ring_not_overfull: assert property (@(posedge clk) disable iff (rst)
    s1_v && cqn_ok && valid |-> 16'(pi_now - ci_q) <= size)
    else $error("srnic_cq_writer: CQ %0d holds %0d entries, more than its size %0d", r.cqn, pi_now - ci_q, size);
  a_drain_takes_none: assert property (@(posedge clk) disable iff (rst)
    draining |-> !take)
    else $error("srnic_cq_writer: a CQE taken while a QP reset drains the pipeline");
  a_write_in_ring: assert property (@(posedge clk) disable iff (rst)
    of_push |-> ((addr - base) >> 5) < (64'd1 << log_s))
    else $error("srnic_cq_writer: CQE address outside its ring");
`endif
endmodule
`default_nettype wire
