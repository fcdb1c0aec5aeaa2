// srnic_tx_window: the per-QP acknowledged PSN behind the send path's in-flight cap (IRN's
// BDP-FC). For each QP it keeps una, the oldest PSN not yet acknowledged, and one bit, wwait:
// the QP's send side stopped because its window was full and waits for an acknowledgement.
//
// The send path (srnic_wqe_fetch) reads una with the rest of a QP's state when it issues a
// turn (port A) and sends at most `window` packets beyond it. Everything else goes through
// port B, one request at a time, read then write (2 cycles):
//   init  - the QP's send side starts (or restarts) at PSN psn: una = psn, wwait = 0;
//   ack   - every PSN up to and including psn is acknowledged (an ACK, the last response of a
//           READ): una moves forward only (an older acknowledgement, reordered or duplicated,
//           changes nothing); if the QP waits and una moved, wwait clears and the QP is kicked;
//   wait  - the send path found the window full with una = u: if una is still u, wwait is
//           set; if it moved meanwhile (the acknowledgement came between the read and the
//           request), the QP is kicked at once. So no acknowledgement is lost between the
//           send path's read and its decision to wait: either the wait sees it or it sees
//           the wait.
// Requests are served init, then wait, then ack. Acknowledgements wait in a FIFO (ACK_DEPTH).
// Port A (read only) and port B (read or write) map to one true dual-port block RAM; the
// table is not cleared after reset: a QP's entry is written by init before its send side
// can send (commands), and a stray wwait bit of an unconfigured QP costs at most one kick of
// a QP that then finds nothing to do.
`default_nettype none
module srnic_tx_window #(
  parameter int NUM_QPS   = 16384,
  parameter int ACK_DEPTH = 8
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  // port A: una of rd_qpn, one cycle after rd_en
  input  wire logic                       rd_en,
  input  wire logic [$clog2(NUM_QPS)-1:0] rd_qpn,
  output logic [23:0]                     rd_una,
  // port B requests
  input  wire logic                       init_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] init_qpn,
  input  wire logic [23:0]                init_psn,
  output logic                            init_ready,
  input  wire logic                       ack_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] ack_qpn,
  input  wire logic [23:0]                ack_psn,
  output logic                            ack_ready,
  input  wire logic                       wait_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] wait_qpn,
  input  wire logic [23:0]                wait_una,
  output logic                            wait_ready,
  // a waiting QP got credit: queue it again (like a doorbell)
  output logic                            kick_valid,
  output logic [$clog2(NUM_QPS)-1:0]      kick_qpn,
  input  wire logic                       kick_ready,
  // statistics: a wait was set (the QP stopped for credit)
  output logic                            st_wait
);
  localparam int AW = $clog2(NUM_QPS);
  initial begin
    if ((1 << AW) != NUM_QPS) $fatal(1, "srnic_tx_window: NUM_QPS must be a power of two");
  end

  // the table: {wwait, una}
  logic [24:0]   mem [NUM_QPS];
  logic          b_en, b_we;
  logic [AW-1:0] b_addr;
  logic [24:0]   b_wdata, b_rdata;
  always_ff @(posedge clk) begin
    if (rd_en) rd_una <= mem[rd_qpn][23:0];
  end
  always_ff @(posedge clk) begin
    if (b_we) mem[b_addr] <= b_wdata;
    if (b_en) b_rdata <= mem[b_addr];
  end

  // acknowledgements wait here
  logic          aq_valid, aq_pop;
  logic [AW+23:0] aq_data;
  sync_fifo #(.WIDTH(AW + 24), .DEPTH(ACK_DEPTH)) u_aq (
    .clk, .rst, .s_data({ack_qpn, ack_psn}), .s_valid(ack_valid), .s_ready(ack_ready),
    .m_data(aq_data), .m_valid(aq_valid), .m_ready(aq_pop), .count());

  typedef enum logic [1:0] {B_IDLE, B_RMW, B_KICK} bstate_e;
  typedef enum logic [1:0] {R_INIT, R_WAIT, R_ACK} req_e;
  bstate_e       bst;
  req_e          r_kind;
  logic [AW-1:0] r_qpn;
  logic [23:0]   r_psn;

  wire   idle = bst == B_IDLE;
  assign init_ready = idle;
  assign wait_ready = idle && !init_valid;
  assign aq_pop     = idle && !init_valid && !wait_valid && aq_valid;
  wire   take       = idle && (init_valid || wait_valid || aq_valid);

  // read-modify-write: what the request makes of the entry
  wire [23:0] cur_una  = b_rdata[23:0];
  wire        cur_wait = b_rdata[24];
  wire [23:0] ack_una  = r_psn + 24'd1;
  logic       r_write, r_kick;
  logic [24:0] r_new;
  always_comb begin
    r_new = b_rdata; r_write = 1'b0; r_kick = 1'b0;
    case (r_kind)
      R_INIT: begin r_new = {1'b0, r_psn}; r_write = 1'b1; end
      R_WAIT: begin
        if (cur_una == r_psn) begin r_new = {1'b1, cur_una}; r_write = 1'b1; end
        else begin r_new = {1'b0, cur_una}; r_write = cur_wait; r_kick = 1'b1; end
      end
      default: begin
        if (srnic_pkg::psn_gt(ack_una, cur_una)) begin
          r_new = {1'b0, ack_una}; r_write = 1'b1; r_kick = cur_wait;
        end
      end
    endcase
  end

  always_comb begin
    b_en = take; b_we = 1'b0; b_addr = r_qpn; b_wdata = r_new;
    if (take) b_addr = init_valid ? init_qpn : wait_valid ? wait_qpn : aq_data[AW+23:24];
    else if (bst == B_RMW) b_we = r_write;
  end
  assign st_wait = bst == B_RMW && r_kind == R_WAIT && r_write && r_new[24];

  assign kick_valid = bst == B_KICK;
  assign kick_qpn   = r_qpn;

  always_ff @(posedge clk) begin
    if (rst) begin
      bst <= B_IDLE;
    end else begin
      case (bst)
        B_IDLE: if (take) begin
          bst <= B_RMW;
          if (init_valid) begin r_kind <= R_INIT; r_qpn <= init_qpn; r_psn <= init_psn; end
          else if (wait_valid) begin r_kind <= R_WAIT; r_qpn <= wait_qpn; r_psn <= wait_una; end
          else begin r_kind <= R_ACK; r_qpn <= aq_data[AW+23:24]; r_psn <= aq_data[23:0]; end
        end
        B_RMW: bst <= r_kick ? B_KICK : B_IDLE;
        B_KICK: if (kick_ready) bst <= B_IDLE;
        default: bst <= B_IDLE;
      endcase
    end
  end

`ifndef SYNTHESIS
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    bst inside {B_IDLE, B_RMW, B_KICK})
    else $error("srnic_tx_window: illegal state %0d", bst);
  a_kick_held: assert property (@(posedge clk) disable iff (rst)
    kick_valid && !kick_ready |=> kick_valid && $stable(kick_qpn))
    else $error("srnic_tx_window: kick withdrawn before it was taken");
  // una only moves forward, except when a QP is (re)started
  a_una_forward: assert property (@(posedge clk) disable iff (rst)
    b_we && r_kind != R_INIT |-> srnic_pkg::psn_ge(b_wdata[23:0], cur_una))
    else $error("srnic_tx_window: una of QP %0d moved back from %0h to %0h", r_qpn, cur_una, b_wdata[23:0]);
`endif
endmodule
`default_nettype wire
