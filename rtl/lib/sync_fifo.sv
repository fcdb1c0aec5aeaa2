// sync_fifo: single-clock FIFO, power-of-two depth, first-word-fall-through output.
// Storage is a plain array (maps to distributed or block RAM); count is exposed so
// producers can reserve space ahead of time.
`default_nettype none
module sync_fifo #(
  parameter int WIDTH = 8,
  parameter int DEPTH = 16
) (
  input  wire logic             clk,
  input  wire logic             rst,
  input  wire logic [WIDTH-1:0] s_data,
  input  wire logic             s_valid,
  output logic                  s_ready,
  output logic [WIDTH-1:0]      m_data,
  output logic                  m_valid,
  input  wire logic             m_ready,
  output logic [$clog2(DEPTH):0] count
);
  localparam int AW = $clog2(DEPTH);
  initial begin
    if ((1 << AW) != DEPTH) $fatal(1, "sync_fifo: DEPTH must be a power of two");
  end
  logic [WIDTH-1:0] mem [DEPTH];
  logic [AW:0] wr_ptr, rd_ptr;
  wire push = s_valid && s_ready;
  wire pop  = m_valid && m_ready;
  assign count   = wr_ptr - rd_ptr;
  assign s_ready = count != DEPTH[AW:0];
  assign m_valid = count != '0;
  assign m_data  = mem[rd_ptr[AW-1:0]];
  always_ff @(posedge clk) begin
    if (push) mem[wr_ptr[AW-1:0]] <= s_data;
    if (rst) begin
      wr_ptr <= '0;
      rd_ptr <= '0;
    end else begin
      if (push) wr_ptr <= wr_ptr + 1'b1;
      if (pop)  rd_ptr <= rd_ptr + 1'b1;
    end
  end

`ifndef SYNTHESIS
  // Assertions (verilator --assert). A producer that does not watch s_ready (it reserved
  // room ahead of time) is checked where it instantiates the FIFO: s_valid |-> s_ready.
  a_fifo_count_bound: assert property (@(posedge clk) disable iff (rst)
    32'(count) <= DEPTH)
    else $error("sync_fifo: fill level above DEPTH (pointers inconsistent)");
  a_fifo_no_overflow: assert property (@(posedge clk) disable iff (rst)
    $past(s_valid && count == DEPTH[AW:0] && !rst) |-> wr_ptr == $past(wr_ptr))
    else $error("sync_fifo: write pointer moved on a push into a full FIFO");
  a_fifo_no_underflow: assert property (@(posedge clk) disable iff (rst)
    $past(m_ready && count == '0 && !rst) |-> rd_ptr == $past(rd_ptr))
    else $error("sync_fifo: read pointer moved on a pop from an empty FIFO");
  a_fifo_head_held: assert property (@(posedge clk) disable iff (rst)
    m_valid && !m_ready |=> m_valid && $stable(m_data))
    else $error("sync_fifo: head entry dropped or changed before it was popped");
`endif
endmodule
`default_nettype wire
