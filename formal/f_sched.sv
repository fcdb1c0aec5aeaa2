// Formal harness for rtl/dma/srnic_sched.sv at NUM_QPS=16, DB_DEPTH=2 (k-induction; the run
// queue is a 16-deep sync_fifo, the doorbell queue 2 deep).
//
// Shadow state kept by the harness, per QP (all 16, not one symbolic QP):
//   serving[q]  a turn of q is in flight: q was popped (m_valid && m_ready) and its turn
//               end (done_valid && done_ready) has not come yet;
//   owed[q]     a doorbell of q was accepted (db_valid && !db_overflow) and no turn of q
//               has started since (a pop of q in a later cycle clears it).
// Kicks (kick_valid, taken on kick_ready) enter the doorbell queue like doorbells and are
// owed the same way.
// Environment assumption: a turn end names a QP whose turn is in flight (serving).
// Properties:
//   - never queued twice: q appears at most once in the run queue, and never while its
//     turn is in flight; the run queue never overflows (push while full);
//   - the RTL's per-QP bits are exact: after the reset sweep, active[q] == (q queued or
//     serving), pending[q] implies active[q]; a turn end is never for an inactive QP;
//   - no doorbell lost: owed[q] implies q waits in the doorbell queue, or q is in the run
//     queue, or q is being served with pending set (so its turn end queues it again);
//   - directly: a doorbell processed for a QP neither queued nor served queues it in that
//     cycle; a turn end of a QP with pending set queues it again.
// A doorbell refused because the doorbell queue is full is reported on db_overflow (the
// core counts it) and is outside these properties; so is liveness (the run queue being
// popped, turn ends leaving cycles for doorbells).
`default_nettype none
module f_sched (
  input wire logic       clk,
  input wire logic       rst,
  input wire logic       db_valid,
  input wire logic [3:0] db_qpn,
  input wire logic       kick_valid,
  input wire logic [3:0] kick_qpn,
  input wire logic       done_valid,
  input wire logic [3:0] done_qpn,
  input wire logic       done_more,
  input wire logic       m_ready
);
  localparam int N = 16, QW = 4, DB = 2;

  logic       db_overflow, db_room, kick_ready, done_ready, m_valid;
  logic [3:0] m_qpn;
  srnic_sched #(.NUM_QPS(N), .DB_DEPTH(DB)) dut (
    .clk, .rst, .db_valid, .db_qpn, .db_overflow, .db_room, .kick_valid, .kick_qpn, .kick_ready, .done_valid, .done_qpn, .done_more,
    .done_ready, .m_valid, .m_qpn, .m_ready);

  // probes
  logic [N*QW-1:0]  p_rq_mem;
  logic [4:0]       p_rq_wr, p_rq_rd;
  logic [DB*QW-1:0] p_db_mem;
  logic [1:0]       p_db_wr, p_db_rd;
  logic [31:0]      p_bits;
  logic             p_init_busy, p_init_row;
  logic             p_push, p_fifo_ready, p_ev_db;
  logic [3:0]       p_ev_qpn;
  //@ connect-array p_rq_mem dut.u_rq.mem 16 4
  //@ connect p_rq_wr dut.u_rq.wr_ptr
  //@ connect p_rq_rd dut.u_rq.rd_ptr
  //@ connect-array p_db_mem dut.u_dbq.mem 2 4
  //@ connect p_db_wr dut.u_dbq.wr_ptr
  //@ connect p_db_rd dut.u_dbq.rd_ptr
  //@ connect-array p_bits dut.bits 2 16
  //@ connect p_init_busy dut.init_busy
  //@ connect p_init_row dut.init_row
  //@ connect p_push dut.push
  //@ connect p_fifo_ready dut.fifo_ready
  //@ connect p_ev_db dut.ev_db
  //@ connect p_ev_qpn dut.ev_qpn

`ifdef FORMAL
  logic f_init = 1'b1;
  always_ff @(posedge clk) f_init <= 1'b0;
  always_comb if (f_init) assume(rst);

  logic [N-1:0] serving, owed;
  always_comb if (done_valid) assume(serving[done_qpn]);

  wire pop    = m_valid && m_ready;
  wire done   = done_valid && done_ready;
  // a doorbell or a kick (they share the doorbell queue; a kick is taken only without a doorbell)
  wire db_acc = (db_valid && !db_overflow) || (kick_valid && kick_ready);
  wire [3:0] acc_qpn = db_valid ? db_qpn : kick_qpn;
  always_ff @(posedge clk) begin
    if (rst) begin
      serving <= '0;
      owed    <= '0;
    end else begin
      for (int q = 0; q < N; q++) begin
        if ((pop && m_qpn == 4'(q)) && !(db_acc && acc_qpn == 4'(q))) owed[q] <= 1'b0;
        if (db_acc && acc_qpn == 4'(q)) owed[q] <= 1'b1;
        if (done && done_qpn == 4'(q)) serving[q] <= 1'b0;
        if (pop && m_qpn == 4'(q)) serving[q] <= 1'b1;
      end
    end
  end

  // queue contents seen through the probes
  wire [4:0] rq_n = p_rq_wr - p_rq_rd;
  wire [1:0] db_n = p_db_wr - p_db_rd;
  logic [N-1:0] slot_v, in_rq, twice, in_db, active, pending;
  logic [DB-1:0] dslot_v;
  logic seen;
  always_comb begin
    for (int j = 0; j < N; j++) slot_v[j] = {1'b0, 4'(4'(j) - p_rq_rd[3:0])} < rq_n;
    for (int j = 0; j < DB; j++) dslot_v[j] = {1'b0, 1'(1'(j) - p_db_rd[0])} < db_n;
    for (int q = 0; q < N; q++) begin
      seen = 1'b0; twice[q] = 1'b0;
      for (int j = 0; j < N; j++)
        if (slot_v[j] && p_rq_mem[j * QW +: QW] == 4'(q)) begin
          twice[q] = twice[q] | seen;
          seen = 1'b1;
        end
      in_rq[q] = seen;
      in_db[q] = 1'b0;
      for (int j = 0; j < DB; j++)
        if (dslot_v[j] && p_db_mem[j * QW +: QW] == 4'(q)) in_db[q] = 1'b1;
    end
    for (int q = 0; q < N; q++) begin
      active[q]  = p_bits[(q / 8) * 16 + (q % 8) * 2];
      pending[q] = p_bits[(q / 8) * 16 + (q % 8) * 2 + 1];
    end
  end

  always_comb begin
    if (!f_init) begin
      assert(rq_n <= N);
      assert(db_n <= DB);
      assert(!(p_push && !p_fifo_ready));               // run queue never overflows
      assert(!(kick_ready && (db_valid || !db_room)));  // kicks leave the doorbells their slot
      cover(kick_valid && kick_ready && serving[kick_qpn]);
      assert(twice == '0);                              // never queued twice
      assert((in_rq & serving) == '0);                  // never queued while served
      if (p_init_busy) begin                            // reset sweep: nothing queued or served
        assert(rq_n == 0);
        assert(serving == '0);
        if (p_init_row) assert(p_bits[15:0] == 16'd0);
      end else begin
        assert(active == (in_rq | serving));            // per-QP bits exact
        assert((pending & ~active) == '0);
        if (done) assert(active[done_qpn]);
      end
      // no doorbell lost
      assert((owed & ~(in_db | in_rq | (serving & pending))) == '0);
      // direct forms
      if (p_ev_db && !in_rq[p_ev_qpn] && !serving[p_ev_qpn])
        assert(p_push && p_fifo_ready);
      if (done && pending[done_qpn]) assert(p_push && p_fifo_ready);
      cover(done && pending[done_qpn] && !done_more);   // re-queued by a pending doorbell
      cover(rq_n == 5'd3 && serving != '0);
    end
  end
`endif
endmodule
`default_nettype wire
