// srnic_tx_payload: the payload reader of the TX pipe. For each packet srnic_tx_pkt sends, it
// takes one read command (the payload's first host address, rounded down to a 64-byte beat,
// and its length in beats), issues the AXI reads (AXI ID 1, split at 4 KiB boundaries) and
// hands the beats back in command order through a payload buffer of PBUF beats.
//
// A command is taken only when the buffer has room for all of its beats besides every beat
// already reserved (cmd_ready depends on cmd_nbeats), so read data never waits: the AXI R
// channel of this client is never back-pressured and the reads run ahead of the packetizer
// by up to PBUF beats, covering the PCIe read latency. One command is issued at a time:
// the next is taken once the last burst of the previous one has been accepted; rd_busy says
// bursts of the command taken are still to be issued after this cycle.
//
// Per packet: the command in one cycle, then one AR per burst (a packet of up to 4 KiB spans
// at most two bursts), beats in at one per cycle.
`default_nettype none
module srnic_tx_payload #(
  parameter int PBUF = 512     // payload buffer, 64-byte beats
) (
  input  wire logic         clk,
  input  wire logic         rst,
  // read commands, one per packet (nbeats 0: nothing to read, taken at once)
  input  wire logic         cmd_valid,
  input  wire logic [63:0]  cmd_addr,     // 64-byte aligned
  input  wire logic [7:0]   cmd_nbeats,
  output logic              cmd_ready,
  output logic              rd_busy,      // bursts still to issue after this cycle
  // payload reads (AXI ID 1)
  output logic              ar_valid,
  output logic [63:0]       ar_addr,
  output logic [7:0]        ar_len,
  input  wire logic         ar_ready,
  input  wire logic         r_valid,
  input  wire logic [511:0] r_data,
  // payload beats, in command order
  output logic [511:0]      pb_data,
  output logic              pb_valid,
  input  wire logic         pb_pop
);
  localparam int RW = $clog2(PBUF) + 1;

  // current command: from rd_addr, rd_left beats, split at 4 KiB
  logic [63:0] rd_addr;
  logic [7:0]  rd_left;
  wire  [6:0]  to_4k = 7'd64 - {1'b0, rd_addr[11:6]};
  wire  [7:0]  burst = (rd_left > {1'b0, to_4k}) ? {1'b0, to_4k} : rd_left;
  wire         ar_fire = ar_valid && ar_ready;
  assign ar_valid = rd_left != 8'd0;
  assign ar_addr  = rd_addr;
  assign ar_len   = burst - 8'd1;
  assign rd_busy  = rd_left != 8'd0 && !(ar_fire && rd_left == burst);

  // beats reserved by taken commands and not yet popped
  logic [RW-1:0] resv;
  wire  [15:0]   resv_need = 16'(resv) + 16'(cmd_nbeats);
  assign cmd_ready = rd_left == 8'd0 && resv_need <= 16'(PBUF);
  wire  cmd_fire = cmd_valid && cmd_ready;

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_left <= '0; resv <= '0;
    end else begin
      resv <= resv + (cmd_fire ? RW'(cmd_nbeats) : '0) - RW'(pb_pop);
      if (cmd_fire) begin
        rd_addr <= cmd_addr;
        rd_left <= cmd_nbeats;
      end else if (ar_fire) begin
        rd_addr <= rd_addr + {50'd0, burst, 6'd0};
        rd_left <= rd_left - burst;
      end
    end
  end

  sync_fifo #(.WIDTH(512), .DEPTH(PBUF)) u_pbuf (
    .clk, .rst, .s_data(r_data), .s_valid(r_valid), .s_ready(),
    .m_data(pb_data), .m_valid(pb_valid), .m_ready(pb_pop), .count());

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AR rules, the reservation, the command contract.
  a_ar_hold: assert property (@(posedge clk) disable iff (rst)
    ar_valid && !ar_ready |=> ar_valid && $stable(ar_addr) && $stable(ar_len))
    else $error("srnic_tx_payload: payload read withdrawn or changed before it was taken");
  a_ar_no_4k_cross: assert property (@(posedge clk) disable iff (rst)
    ar_valid |-> {7'd0, ar_addr[11:6]} + {5'd0, ar_len} < 13'd64)
    else $error("srnic_tx_payload: payload read crosses a 4 KiB boundary");
  a_pbuf_no_overflow: assert property (@(posedge clk) disable iff (rst)
    r_valid |-> u_pbuf.s_ready)
    else $error("srnic_tx_payload: payload buffer overflow (read data beyond the reservation)");
  a_pbuf_within_resv: assert property (@(posedge clk) disable iff (rst)
    32'(u_pbuf.count) <= 32'(resv) && 32'(resv) <= PBUF)
    else $error("srnic_tx_payload: payload buffer holds more beats than reserved, or reservation above PBUF");
  a_pop_reserved: assert property (@(posedge clk) disable iff (rst)
    pb_pop |-> pb_valid)
    else $error("srnic_tx_payload: beat popped from an empty payload buffer");
  a_cmd_aligned: assert property (@(posedge clk) disable iff (rst)
    cmd_valid |-> cmd_addr[5:0] == 6'd0)
    else $error("srnic_tx_payload: read command address not 64-byte aligned");
`endif
endmodule
`default_nettype wire
