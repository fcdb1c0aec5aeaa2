// crc32_d512: reflected CRC-32 over 64 bytes per cycle. The register is loaded with
// crc32_d512_pkg::INIT[init_k] (absorbing init_k leading zero bytes) on `start`, and
// advanced by one 64-byte block per `step`. `crc` is the finalised value (~register).
`default_nettype none
module crc32_d512 (
  input  wire logic         clk,
  input  wire logic         start,
  input  wire logic [6:0]   init_k,
  input  wire logic         step,
  input  wire logic [511:0] data,
  output logic [31:0]       crc
);
  logic [31:0] state;
  function automatic logic [31:0] next_state(input logic [31:0] s, input logic [511:0] d);
    for (int j = 0; j < 32; j++)
      next_state[j] = ^(s & crc32_d512_pkg::SMASK[j*32 +: 32]) ^ ^(d & crc32_d512_pkg::DMASK[j*512 +: 512]);
  endfunction
  // `start` and `step` may coincide: the first block is then applied to the initial value.
  wire [31:0] base = start ? crc32_d512_pkg::INIT[init_k*32 +: 32] : state;
  always_ff @(posedge clk) begin
    if (step) state <= next_state(base, data);
    else if (start) state <= base;
  end
  assign crc = ~state;
endmodule
`default_nettype wire
