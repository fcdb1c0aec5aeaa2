// srnic_icrc_calc: RoCEv2 ICRC (IPv4) over a frame streaming at 64 bytes per cycle.
//
// The ICRC covers the IP header (TOS, TTL and checksum masked to ones), the UDP header
// (checksum masked), the BTH (byte 4 masked), the extension headers, payload and pad,
// with the CRC register seeded as if 8 bytes of 0xFF came first. The covered data ends
// at frame offset E = 14 + IP total length - 4. To handle the variable last beat with a
// single 64-byte CRC step, the stream is delayed by s = (-E) mod 64 bytes so that E falls
// on a beat boundary; the Ethernet header and the s inserted bytes are zeros in front of
// the data, absorbed by starting from crc32_d512_pkg::INIT[14 + s]. The shifted stream
// has exactly as many beats as the covered part of the frame, so no flush beat is
// needed. Bytes beyond E (the ICRC itself on receive) shift out of the last beat.
//
// crc_valid pulses one cycle after the last covered beat. A frame shorter than its IP
// length never produces crc_valid; the next sof restarts the engine.
`default_nettype none
module srnic_icrc_calc (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic         in_valid,
  input  wire logic         in_sof,     // first beat of a frame
  input  wire logic [511:0] in_data,
  output logic              crc_valid,
  output logic [31:0]       crc
);
  // beat 0: lengths and masking
  wire [15:0] ip_len  = {in_data[16*8 +: 8], in_data[17*8 +: 8]};
  wire [16:0] e_end   = 17'd14 + {1'b0, ip_len} - 17'd4;
  wire [5:0]  s0      = 6'(-e_end[5:0]);
  wire [10:0] beats0  = 11'((e_end + 17'd63) >> 6);
  logic [511:0] masked0;
  always_comb begin
    masked0 = in_data;
    masked0[0 +: 14*8] = '0;                 // Ethernet header: leading zeros
    masked0[15*8 +: 8] = 8'hFF;              // IPv4 TOS
    masked0[22*8 +: 8] = 8'hFF;              // TTL
    masked0[24*8 +: 16] = 16'hFFFF;          // header checksum
    masked0[40*8 +: 16] = 16'hFFFF;          // UDP checksum
    masked0[46*8 +: 8] = 8'hFF;              // BTH resv8a (FECN/BECN)
  end

  logic         active;
  logic [5:0]   s;
  logic [10:0]  left;       // covered beats still to step
  logic [511:0] prev;
  wire  [5:0]   s_cur    = in_sof ? s0 : s;
  wire  [511:0] cur      = in_sof ? masked0 : in_data;
  wire  [511:0] prev_cur = in_sof ? 512'd0 : prev;
  // delay by s bytes: byte i of cur goes to i+s; the top s bytes of prev fill 0..s-1
  wire  [511:0] shifted  = (s_cur == 6'd0) ? cur :
                           ((cur << {s_cur, 3'd0}) | (prev_cur >> {7'd64 - {1'b0, s_cur}, 3'd0}));
  wire          do_step  = in_valid && (in_sof ? (beats0 != 11'd0) : (active && left != 11'd0));
  wire          last     = do_step && (in_sof ? beats0 == 11'd1 : left == 11'd1);

  crc32_d512 u_crc (
    .clk, .start(in_valid && in_sof), .init_k(7'd14 + {1'b0, s0}), .step(do_step), .data(shifted), .crc);

  always_ff @(posedge clk) begin
    if (rst) begin
      active <= 1'b0; crc_valid <= 1'b0; left <= '0;
    end else begin
      crc_valid <= last;
      if (in_valid) begin
        prev <= cur;
        if (in_sof) begin
          s <= s0;
          active <= beats0 > 11'd1;
          left <= beats0 - 11'd1;
        end else if (do_step) begin
          left <= left - 11'd1;
          if (left == 11'd1) active <= 1'b0;
        end
      end
    end
  end

`ifndef SYNTHESIS
  // Assertions (verilator --assert): the beat counter and the active flag agree (a frame
  // covers at least one beat, so left never wraps), no step outside a frame, and the CRC is
  // reported exactly one cycle after the last covered beat.
  a_left_active: assert property (@(posedge clk) disable iff (rst) active == (left != 11'd0))
    else $error("srnic_icrc_calc: %0d beats left with active %0d", left, active);
  a_sof_beats: assert property (@(posedge clk) disable iff (rst) in_valid && in_sof |-> beats0 != 11'd0)
    else $error("srnic_icrc_calc: frame covering no beat (IP length %0d)", ip_len);
  a_no_stray_step: assert property (@(posedge clk) disable iff (rst) in_valid && !in_sof && !active |-> !do_step)
    else $error("srnic_icrc_calc: CRC step outside a frame");
  a_crc_one_after_last: assert property (@(posedge clk) disable iff (rst) last |=> crc_valid)
    else $error("srnic_icrc_calc: last covered beat without crc_valid the cycle after");
  a_crc_only_after_last: assert property (@(posedge clk) disable iff (rst) crc_valid |-> $past(last))
    else $error("srnic_icrc_calc: crc_valid without a last covered beat");
`endif
endmodule
`default_nettype wire
