// Formal harness for srnic_pkg::psn_ge (rtl/pkg/srnic_pkg.sv): 24-bit PSN "a >= b".
// Combinational, all 2^48 input pairs at once (one solver step, free inputs).
//
// psn_ge(a, b) must equal
//   (1) the serial-number definition (a - b) mod 2^24 < 2^23, computed here in 32-bit
//       arithmetic with an explicit modulo (no reliance on 24-bit wrap of the RTL);
//   (2) RFC 1982 serial-number order for 24 bits: a == b, or b < a in serial order
//       (b < a and a - b < 2^23, or b > a and b - a > 2^23);
// and the wrap is checked directly: psn_ge(a + 1, a) for every a (0xFFFFFF -> 0
// included), psn_ge(a, a), never psn_ge(a, a + 1); for a != b at a distance other than
// 2^23 exactly one of psn_ge(a, b) and psn_ge(b, a) holds.
`default_nettype none
module f_psn_ge (
  input wire logic [23:0] a,
  input wire logic [23:0] b
);
`ifdef FORMAL
  wire        ge    = srnic_pkg::psn_ge(a, b);
  wire        ge_ba = srnic_pkg::psn_ge(b, a);
  wire [31:0] d     = ({8'd0, a} + 32'h0100_0000 - {8'd0, b}) % 32'h0100_0000;
  wire        def1  = d < 32'h0080_0000;
  wire [31:0] a32   = {8'd0, a};
  wire [31:0] b32   = {8'd0, b};
  wire        def2  = (a32 == b32) ||
                      (b32 < a32 && a32 - b32 < 32'h0080_0000) ||
                      (b32 > a32 && b32 - a32 > 32'h0080_0000);
  wire [31:0] a_inc = (a32 + 32'd1) % 32'h0100_0000;   // a + 1 modulo 2^24
  wire        far   = (d == 32'h0080_0000);            // exactly half the space apart
  always_comb begin
    assert(ge == def1);
    assert(ge == def2);
    assert(srnic_pkg::psn_ge(a_inc[23:0], a));
    assert(!srnic_pkg::psn_ge(a, a_inc[23:0]));
    assert(srnic_pkg::psn_ge(a, a));
    assert(srnic_pkg::psn_ge(24'h000000, 24'hFFFFFF));
    assert(!srnic_pkg::psn_ge(24'hFFFFFF, 24'h000000));
    if (a != b && !far) assert(ge != ge_ba);
    if (far) assert(!ge && !ge_ba);
  end
`endif
endmodule
`default_nettype wire
