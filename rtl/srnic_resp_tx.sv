// srnic_resp_tx: the responder's transmit queue. Tasks from the RX engine are kept in
// order: an ACK/NAK becomes one packet; a READ becomes its response packets
// (FIRST/MIDDLE/LAST or ONLY, AETH with the MSN on FIRST/LAST/ONLY), cut to the path MTU.
// Keeping ACKs and READ responses in one queue keeps the responder's answers in PSN
// order, so an ACK never overtakes the READ responses before it.
//
// ACK coalescing: a task enters through a one-entry stage in front of the queue. While the
// queue is full, a plain ACK (not a NAK) for the QP whose plain ACK sits in the stage
// replaces it (ACKs are cumulative: the newer PSN and MSN cover the older one). So a storm of
// ACKs for a QP never blocks the RX engine while the link is paused; without that, two NICs
// pausing each other could both stall with full queues (the RX engine waits for the queue,
// the queue for the paused link, the pause for the RX engine to drain).
`default_nettype none
module srnic_resp_tx #(
  parameter int DEPTH = 256
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
  srnic_pkg::resp_task_t t, stage;
  logic       t_valid, t_pop, stage_valid, q_ready;
  wire  push  = stage_valid && q_ready;
  wire  s_ack = !s_task.is_read && s_task.syndrome == srnic_pkg::AETH_ACK;
  wire  merge = stage_valid && !stage.is_read && stage.syndrome == srnic_pkg::AETH_ACK && s_ack &&
                stage.qpn == s_task.qpn;
  assign s_ready = !stage_valid || push || merge;
  always_ff @(posedge clk) begin
    if (rst) stage_valid <= 1'b0;
    else if (s_valid && s_ready) stage_valid <= 1'b1;
    else if (push) stage_valid <= 1'b0;
    if (s_valid && s_ready) stage <= s_task;
  end
  sync_fifo #(.WIDTH($bits(t)), .DEPTH(DEPTH)) u_q (
    .clk, .rst, .s_data(stage), .s_valid(stage_valid), .s_ready(q_ready),
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

`ifndef SYNTHESIS
  // Assertions (verilator --assert): job output held, READ segmentation bounds.
  a_job_hold: assert property (@(posedge clk) disable iff (rst)
    job_valid && !job_ready |=> job_valid && $stable(job))
    else $error("srnic_resp_tx: job withdrawn or changed before it was taken");
  a_read_offset: assert property (@(posedge clk) disable iff (rst)
    job_valid && t.is_read |-> off < t.len || (off == 32'd0 && t.len == 32'd0))
    else $error("srnic_resp_tx: READ response offset %0d beyond the READ length %0d", off, t.len);
  a_ack_no_offset: assert property (@(posedge clk) disable iff (rst)
    job_valid && !t.is_read |-> off == 32'd0 && psn_off == 24'd0)
    else $error("srnic_resp_tx: ACK/NAK while a READ segmentation is half done");
  a_ack_nak_exclusive: assert property (@(posedge clk) disable iff (rst)
    !(sent_ack && sent_nak))
    else $error("srnic_resp_tx: a packet counted as both ACK and NAK");
`endif
endmodule
`default_nettype wire
