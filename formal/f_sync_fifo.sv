// Formal harness for rtl/lib/sync_fifo.sv at WIDTH=8, DEPTH=4 (proved by k-induction).
//
// A reference queue (r_q, r_n) follows the accepted handshakes. Properties:
//   - count stays within 0..DEPTH and equals the number of accepted pushes minus pops
//     (a push offered while full is not accepted, a pop is accepted only when not empty);
//   - s_ready == (count != DEPTH), m_valid == (count != 0);
//   - m_data is the oldest word still in the queue: words leave in push order, none lost,
//     none duplicated.
// Inductive strengthening: the storage words between the read and write pointers equal
// the reference queue. The storage and the pointers are read through probe wires
// (p_*) that tools/formal connects to the flattened instance (lines starting "//@").
`default_nettype none
module f_sync_fifo (
  input wire logic       clk,
  input wire logic       rst,
  input wire logic [7:0] s_data,
  input wire logic       s_valid,
  input wire logic       m_ready
);
  localparam int W  = 8;
  localparam int D  = 4;
  localparam int AW = 2;

  logic          s_ready, m_valid;
  logic [W-1:0]  m_data;
  logic [AW:0]   count;
  sync_fifo #(.WIDTH(W), .DEPTH(D)) dut (
    .clk, .rst, .s_data, .s_valid, .s_ready, .m_data, .m_valid, .m_ready, .count);

  // probes into the instance
  logic [AW:0]    p_wr_ptr, p_rd_ptr;
  logic [D*W-1:0] p_mem;
  //@ connect p_wr_ptr dut.wr_ptr
  //@ connect p_rd_ptr dut.rd_ptr
  //@ connect-array p_mem dut.mem 4 8

`ifdef FORMAL
  logic f_init = 1'b1;
  always_ff @(posedge clk) f_init <= 1'b0;
  always_comb if (f_init) assume(rst);

  // reference queue: r_q[0 +: W] is the oldest word
  wire push = s_valid && s_ready;
  wire pop  = m_valid && m_ready;
  logic [D*W-1:0] r_q, r_q_nx;
  logic [AW:0]    r_n, r_n_nx;
  always_comb begin
    r_q_nx = r_q;
    r_n_nx = r_n;
    if (pop) begin
      r_q_nx = r_q >> W;
      r_n_nx = r_n_nx - 1'b1;
    end
    if (push) begin
      for (int j = 0; j < D; j++)
        if (r_n_nx == AW'(j)) r_q_nx[j * W +: W] = s_data;
      r_n_nx = r_n_nx + 1'b1;
    end
  end
  always_ff @(posedge clk) begin
    r_q <= r_q_nx;
    r_n <= rst ? '0 : r_n_nx;
  end

  always_comb begin
    if (!f_init) begin
      // occupancy within 0..DEPTH and equal to accepted pushes minus pops
      assert(count <= D);
      assert(count == r_n);
      // flags consistent with the count
      assert(s_ready == (count != D));
      assert(m_valid == (count != 0));
      // order: the head is the oldest word accepted and not yet popped
      if (m_valid) assert(m_data == r_q[0 +: W]);
      // inductive strengthening: the words in flight are the reference queue
      for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++)
          if (count > (AW + 1)'(i) && AW'(p_rd_ptr[AW-1:0] + AW'(i)) == AW'(j))
            assert(p_mem[j * W +: W] == r_q[i * W +: W]);
    end
  end

  // reachability (yosys-smtbmc -c): full, and a push and a pop in the same cycle when full
  always_comb if (!f_init) begin
    cover(count == D);
    cover(count == D && m_ready && s_valid);
  end
`endif
endmodule
`default_nettype wire
