// srnic_resp_tx: the responder's transmit queue. Tasks from the RX engine are kept in
// order: an ACK/NAK becomes one packet; a READ becomes its response packets
// (FIRST/MIDDLE/LAST or ONLY, AETH with the MSN on FIRST/LAST/ONLY), cut to the path MTU.
// Keeping ACKs and READ responses in one queue keeps the responder's answers in PSN
// order, so an ACK never overtakes the READ responses before it.
`default_nettype none
module srnic_resp_tx #(
  parameter int DEPTH = 64
) (
  input  wire logic  clk,
  input  wire logic  rst,
  input  wire logic  s_valid,
  input  var srnic_pkg::resp_task_t s_task,
  output logic       s_ready,
  output logic       job_valid,
  output srnic_pkg::tx_job_t job,
  input  wire logic  job_ready,
  output logic       sent_ack,
  output logic       sent_nak
);
  srnic_pkg::resp_task_t t;
  logic       t_valid, t_pop;
  sync_fifo #(.WIDTH($bits(t)), .DEPTH(DEPTH)) u_q (
    .clk, .rst, .s_data(s_task), .s_valid, .s_ready,
    .m_data(t), .m_valid(t_valid), .m_ready(t_pop), .count());

  logic [31:0] off;        // bytes of the current READ already sent
  logic [23:0] psn_off;
  wire  [12:0] mtu_b   = srnic_pkg::mtu_bytes(t.mtu);
  wire  [31:0] remain  = t.len - off;
  wire         is_last = remain <= {19'd0, mtu_b};
  wire         is_first = off == 32'd0;
  wire  [12:0] plen    = is_last ? remain[12:0] : mtu_b;

  always_comb begin
    job = '0;
    job.qpn = t.qpn;
    job.aeth_msn = t.msn;
    if (t.is_read) begin
      job.opcode   = (is_first && is_last) ? srnic_pkg::OP_READ_RESP_ONLY : is_first ? srnic_pkg::OP_READ_RESP_FIRST :
                     is_last ? srnic_pkg::OP_READ_RESP_LAST : srnic_pkg::OP_READ_RESP_MIDDLE;
      job.psn      = t.psn + psn_off;
      job.aeth_syn = srnic_pkg::AETH_ACK;
      job.pay_addr = t.addr + {32'd0, off};
      job.pay_len  = plen;
    end else begin
      job.opcode   = srnic_pkg::OP_ACK;
      job.psn      = t.psn;
      job.aeth_syn = t.syndrome;
    end
  end
  assign job_valid = t_valid;
  wire fire = job_valid && job_ready;
  assign t_pop = fire && (!t.is_read || is_last);
  assign sent_ack = fire && !t.is_read && t.syndrome[6:5] == 2'b00;
  assign sent_nak = fire && !t.is_read && t.syndrome[6:5] != 2'b00;

  always_ff @(posedge clk) begin
    if (rst) begin
      off <= '0; psn_off <= '0;
    end else if (fire && t.is_read) begin
      if (is_last) begin off <= '0; psn_off <= '0; end
      else begin off <= off + {19'd0, plen}; psn_off <= psn_off + 24'd1; end
    end
  end
endmodule
`default_nettype wire
