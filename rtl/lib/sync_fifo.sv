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
endmodule
`default_nettype wire
