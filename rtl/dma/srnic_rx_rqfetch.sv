// srnic_rx_rqfetch: receive-WQE fetch on packet arrival (SRNIC §4.3.2), between the RX
// parser and the RX engine, and the receive-queue flush of QPs in error.
//
// Every packet that will consume a receive WQE (SEND FIRST/ONLY, WRITE LAST/ONLY with
// immediate) gets its WQE read from host memory as soon as its record leaves the parser,
// at the QP's fetch index, which then advances. The records go on to the RX engine in
// order, marked with the fetched index, and the WQEs come back in the same order (one
// AXI ID) into a FIFO the engine pops when it processes the packet. So the PCIe read
// latency overlaps with the packets queued ahead in the RX buffer instead of stalling
// the engine, and no WQE is kept per QP: nothing is prefetched before a packet needs it.
// If no WQE is posted when the packet arrives, the record says so (the engine answers
// with an RNR NAK). When the engine drops a packet that had a WQE fetched (duplicate,
// PSN gap, error), it resynchronises the QP's fetch index to its consumer index.
// The RQ producer index (doorbells) lives here.
//
// Flush. When a QP's receive side enters the error state the engine hands its consumer
// index over with a resynchronisation marked err. From then on this block owns the QP's
// receive queue: packets of the QP get no WQE, and a walker reads every posted WQE from
// the consumer index to the producer index and sends each as a flush record (rq_flush)
// down the same record stream; the engine completes it with WR_FLUSH_ERR. WQEs posted
// later are flushed the same way: a doorbell for a QP in error queues it for the walker.
// Per QP two bits: err, and pend (queued for the walker), so the walker queue holds each
// QP at most once and is as deep as there are QPs; it can never overflow. The walker
// takes one WQE per step and alternates with packet records, so a host ringing doorbells
// on a QP in error cannot hold up the receive path. The bits clear
// after reset (one QP per cycle) and err clears when the QP is reset (RESET->INIT).
`default_nettype none
module srnic_rx_rqfetch #(
  parameter int NUM_QPS = 16384,
  parameter int WDEPTH  = 32       // WQEs fetched ahead of the engine
) (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic         qp_cmd_valid,
  input  var srnic_pkg::qp_cmd_t qp_cmd,
  output logic              qp_cmd_ready,
  input  wire logic         db_valid,
  input  wire logic [15:0]  db_qpn,
  input  wire logic [15:0]  db_pi,
  // records from the parser, to the engine
  input  wire logic         s_valid,
  input  var srnic_pkg::rx_meta_t s_meta,
  output logic              s_ready,
  output logic              m_valid,
  output srnic_pkg::rx_meta_t m_meta,
  input  wire logic         m_ready,
  // fetched WQEs, in record order
  output logic              wqe_valid,
  output logic [511:0]      wqe_data,
  input  wire logic         wqe_pop,
  // resynchronisation from the engine
  input  wire logic         resync_valid,
  output logic              resync_ready,
  input  wire logic [15:0]  resync_qpn,
  input  wire logic [15:0]  resync_ci,
  input  wire logic         resync_err,   // the QP's receive side entered the error state
  // WQE reads (AXI ID 2)
  output logic              ar_valid,
  output logic [63:0]       ar_addr,
  input  wire logic         ar_ready,
  input  wire logic         r_valid,
  input  wire logic [511:0] r_data
);
  localparam int AW = $clog2(NUM_QPS);

  typedef struct packed {
    logic [63:0] rq_base;
    logic [3:0]  log_rq;
  } rqcfg_t;
  rqcfg_t cmd_cfg;
  assign cmd_cfg.rq_base = qp_cmd.rq_base;
  assign cmd_cfg.log_rq  = qp_cmd.log_rq;
  localparam int CFG_W = $bits(cmd_cfg);

  // per QP: RQ configuration, producer index (doorbells), fetch index
  logic          rd_en;
  logic [AW-1:0] rd_qpn;
  logic [CFG_W-1:0] cfg_q;
  logic          init_busy, wk_pop;
  logic [15:0]   pi_q, fci_q;
  logic          fci_we;
  logic [AW-1:0] fci_waddr;
  logic [15:0]   fci_wdata;
  // the command writes the configuration and, on RESET->INIT, zeroes both indices; it
  // waits for a cycle without doorbell or fetch-index traffic
  logic fci_busy;
  // ... nor in a cycle where a record starts reading the indices it would reset
  wire cmd_go = qp_cmd_valid && !db_valid && !fci_busy && !rd_en && !init_busy && !wk_pop;
  assign qp_cmd_ready = cmd_go;
  sdp_ram #(.WIDTH(CFG_W), .DEPTH(NUM_QPS)) u_cfg (
    .clk, .wr_en(cmd_go), .wr_addr(qp_cmd.qpn[AW-1:0]), .wr_data(cmd_cfg),
    .rd_en(rd_en), .rd_addr(rd_qpn), .rd_data(cfg_q));
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_QPS)) u_pi (
    .clk, .wr_en(db_valid || (cmd_go && qp_cmd.init_idx)),
    .wr_addr(db_valid ? db_qpn[AW-1:0] : qp_cmd.qpn[AW-1:0]), .wr_data(db_valid ? db_pi : 16'd0),
    .rd_en(rd_en), .rd_addr(rd_qpn), .rd_data(pi_q));
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_QPS)) u_fci (
    .clk, .wr_en(fci_we || (cmd_go && qp_cmd.init_idx)),
    .wr_addr(fci_we ? fci_waddr : qp_cmd.qpn[AW-1:0]), .wr_data(fci_we ? fci_wdata : 16'd0),
    .rd_en(rd_en), .rd_addr(rd_qpn), .rd_data(fci_q));

  wire [7:0] op = s_meta.opcode;
  wire needs = !s_meta.drop && {8'd0, s_meta.dqpn} < NUM_QPS &&
               (op == srnic_pkg::OP_SEND_FIRST || op == srnic_pkg::OP_SEND_ONLY || op == srnic_pkg::OP_SEND_ONLY_IMM ||
                op == srnic_pkg::OP_WRITE_LAST_IMM || op == srnic_pkg::OP_WRITE_ONLY_IMM);

  typedef enum logic [2:0] {F_IDLE, F_READ, F_ISSUE, W_READ, W_ISSUE} fstate_e;
  fstate_e fs;
  srnic_pkg::rx_meta_t mq;
  logic [$clog2(WDEPTH):0] resv;      // WQEs read or buffered, not yet popped
  logic out_ready;

  // records leave through a FIFO so the engine's pace does not block fetching
  srnic_pkg::rx_meta_t out_in;
  logic out_push;
  sync_fifo #(.WIDTH($bits(out_in)), .DEPTH(64)) u_out (
    .clk, .rst, .s_data(out_in), .s_valid(out_push), .s_ready(out_ready),
    .m_data(m_meta), .m_valid(m_valid), .m_ready(m_ready), .count());

  // the indices and configuration read for the record or walker step in hand
  rqcfg_t c;
  assign c = cfg_q;
  wire [15:0] mask  = (16'd1 << c.log_rq) - 16'd1;
  wire        avail = fci_q != pi_q;
  wire        space = resv < WDEPTH[$clog2(WDEPTH):0];

  // ---------------------------------------------------------------- flush bookkeeping
  // fl[q] = {err, pend}; read asynchronously, one write per cycle (sweep, doorbell,
  // hand-over, walker pop, reset command; at most one of them can happen in a cycle)
  logic [1:0]    fl [NUM_QPS];
  logic [AW-1:0] init_q;
  logic [AW-1:0] fq_qpn;
  logic          fq_valid, fq_push, fq_in_ready;
  logic [AW-1:0] fq_in;
  logic [AW-1:0] wq;                  // QP the walker flushes
  logic          wk_active;           // ... until its fetch index reaches its producer index
  logic          wk_turn;             // the walker goes before a waiting record
  sync_fifo #(.WIDTH(AW), .DEPTH(NUM_QPS)) u_fq (
    .clk, .rst, .s_data(fq_in), .s_valid(fq_push), .s_ready(fq_in_ready),
    .m_data(fq_qpn), .m_valid(fq_valid), .m_ready(wk_pop), .count());
  wire [1:0] fl_db  = fl[db_qpn[AW-1:0]];
  wire [1:0] fl_rs  = fl[resync_qpn[AW-1:0]];
  wire       err_rec = fl[s_meta.dqpn[AW-1:0]][1];
  wire       err_wk  = fl[fq_qpn][1];
  // a doorbell for a QP in error that is not queued yet queues it
  wire db_q   = db_valid && !init_busy && fl_db[1] && !fl_db[0];
  // A resync is taken in F_IDLE, so no read of the fetch index is in flight; a hand-over
  // not in a doorbell cycle (one write to fl per cycle). It is also taken while a fetch
  // waits for room in the WQE FIFO: the engine, which frees that room, is waiting for the
  // resync. If the waiting fetch is for the same QP, its index is stale: the record goes
  // out without a WQE (as a record fetched before the resync would not match either).
  wire   rs_stall     = (fs == F_ISSUE || fs == W_ISSUE) && avail && !space;
  wire   rs_same      = resync_qpn[AW-1:0] == ((fs == W_ISSUE) ? wq : mq.dqpn[AW-1:0]);
  wire   rs_state_ok  = fs == F_IDLE || (rs_stall && (!rs_same || fs == W_ISSUE || out_ready));
  assign resync_ready = rs_state_ok && (!resync_err || (!db_valid && !init_busy && fq_in_ready));
  wire   rs_go        = resync_valid && resync_ready;
  wire   rs_abort     = rs_go && fs != F_IDLE && rs_same;   // the waiting fetch gives up
  // the walker takes a queued QP when nothing else needs the indices, and steps through it
  // one WQE per turn, taking turns with records
  wire   wk_slot = fs == F_IDLE && !resync_valid && !init_busy && (wk_turn || !s_valid);
  assign wk_pop = wk_slot && !wk_active && fq_valid && !db_valid;
  wire   wk_go  = wk_pop && err_wk;     // a QP reset meanwhile is skipped
  wire   wk_err = fl[wq][1];
  wire   wk_step = wk_slot && wk_active && wk_err;
  assign fq_push = db_q || (rs_go && resync_err && !fl_rs[0]);
  assign fq_in   = db_q ? db_qpn[AW-1:0] : resync_qpn[AW-1:0];
  always_ff @(posedge clk) begin
    if (rst) begin
      init_busy <= 1'b1;
      init_q    <= '0;
    end else if (init_busy) begin
      fl[init_q] <= 2'b00;
      init_q <= init_q + 1'b1;
      if (init_q == AW'(NUM_QPS - 1)) init_busy <= 1'b0;
    end else if (db_q) fl[db_qpn[AW-1:0]] <= 2'b11;
    else if (rs_go && resync_err) fl[resync_qpn[AW-1:0]] <= 2'b11;
    else if (wk_pop) fl[fq_qpn] <= {err_wk, 1'b0};
    else if (cmd_go && qp_cmd.init_idx) fl[qp_cmd.qpn[AW-1:0]] <= {1'b0, fl[qp_cmd.qpn[AW-1:0]][0]};
  end
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && fq_push && !fq_in_ready) $error("srnic_rx_rqfetch: flush queue overflow");
  end
`endif

  // ---------------------------------------------------------------- records and walker
  // pass-through records go straight out; WQE consumers read their QP's indices first.
  // A resync is taken between records, so no read of the fetch index is in flight.
  // Records of a QP in error fetch nothing (the walker owns its queue).
  wire   rec_err = !init_busy && err_rec;
  assign s_ready = fs == F_IDLE && out_ready && !resync_valid && !wk_go && !wk_step;
  wire   rec_rd  = s_ready && s_valid && needs && !rec_err;
  assign rd_en   = rec_rd || wk_go || wk_step;
  assign rd_qpn  = wk_go ? fq_qpn : wk_step ? wq : s_meta.dqpn[AW-1:0];

  wire        wk_issue = fs == W_ISSUE && avail && space && out_ready;
  assign ar_valid = (fs == F_ISSUE && avail && space) || wk_issue;
  assign ar_addr  = c.rq_base + {42'd0, fci_q & mask, 6'd0};
  assign fci_busy = fs != F_IDLE || resync_valid;

  always_comb begin
    out_in = (fs == F_IDLE) ? s_meta : mq;
    out_push = (s_ready && s_valid && !rec_rd) || (fs == F_ISSUE && (!avail || (space && ar_ready))) ||
               (wk_issue && ar_ready) || (fs == F_ISSUE && rs_abort);
    if (fs == F_ISSUE || fs == W_ISSUE) begin
      out_in.rq_fetched = avail && !rs_abort;
      out_in.rq_idx     = fci_q;
    end else begin
      out_in.rq_fetched = 1'b0;
      out_in.rq_idx     = '0;
    end
    if (fs == W_ISSUE) begin
      // a flush record: no frame beats; opcode SEND ONLY makes a plain receive completion
      out_in = '0;
      out_in.opcode     = srnic_pkg::OP_SEND_ONLY;
      out_in.dqpn       = 24'(wq);
      out_in.rq_fetched = 1'b1;
      out_in.rq_idx     = fci_q;
      out_in.rq_flush   = 1'b1;
    end
    fci_we    = (fs == F_ISSUE && avail && space && ar_ready) || (wk_issue && ar_ready) || rs_go;
    fci_waddr = rs_go ? resync_qpn[AW-1:0] : (fs == W_ISSUE) ? wq : mq.dqpn[AW-1:0];
    fci_wdata = rs_go ? resync_ci : fci_q + 16'd1;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      fs <= F_IDLE;
      wk_active <= 1'b0;
      wk_turn <= 1'b0;
    end else begin
      case (fs)
        F_IDLE: if (wk_go) begin
                  wq <= fq_qpn; wk_active <= 1'b1; wk_turn <= 1'b0; fs <= W_READ;
                end else if (wk_step) begin
                  wk_turn <= 1'b0; fs <= W_READ;
                end else begin
                  if (wk_slot && wk_active) wk_active <= 1'b0;   // the QP was reset meanwhile
                  if (s_ready && s_valid) wk_turn <= 1'b1;
                  if (rec_rd) begin mq <= s_meta; fs <= F_READ; end
                end
        F_READ: fs <= F_ISSUE;
        F_ISSUE: if (rs_abort || !avail || (space && ar_ready)) fs <= F_IDLE;
        // the walker's indices are read in the step's first cycle, after the previous
        // step's fetch index write has landed; a doorbell it misses queues the QP again
        W_READ: fs <= W_ISSUE;
        W_ISSUE: if (rs_abort) fs <= F_IDLE;     // the step starts again with fresh indices
                 else if (!avail) begin fs <= F_IDLE; wk_active <= 1'b0; end
                 else if (space && out_ready && ar_ready) fs <= F_IDLE;
        default: fs <= F_IDLE;
      endcase
    end
  end

  sync_fifo #(.WIDTH(512), .DEPTH(WDEPTH)) u_wqe (
    .clk, .rst, .s_data(r_data), .s_valid(r_valid), .s_ready(),
    .m_data(wqe_data), .m_valid(wqe_valid), .m_ready(wqe_pop), .count());
  always_ff @(posedge clk) begin
    if (rst) resv <= '0;
    else resv <= resv + ($clog2(WDEPTH)+1)'(ar_valid && ar_ready) - ($clog2(WDEPTH)+1)'(wqe_valid && wqe_pop);
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{qp_cmd, db_qpn, resync_qpn, mq, fl_rs[1]};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): legal states, WQE read held, WQE FIFO reservation.
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    fs inside {F_IDLE, F_READ, F_ISSUE, W_READ, W_ISSUE})
    else $error("srnic_rx_rqfetch: illegal state %0d", fs);
  a_ar_hold: assert property (@(posedge clk) disable iff (rst)
    ar_valid && !ar_ready |=> ar_valid && $stable(ar_addr))
    else $error("srnic_rx_rqfetch: WQE read withdrawn or changed before it was taken");
  a_wqe_no_overflow: assert property (@(posedge clk) disable iff (rst)
    r_valid |-> u_wqe.s_ready)
    else $error("srnic_rx_rqfetch: WQE FIFO overflow (read data beyond the reservation)");
  a_wqe_within_resv: assert property (@(posedge clk) disable iff (rst)
    32'(u_wqe.count) <= 32'(resv) && 32'(resv) <= WDEPTH)
    else $error("srnic_rx_rqfetch: WQE FIFO holds more than reserved, or reservation above WDEPTH");
  a_out_no_overflow: assert property (@(posedge clk) disable iff (rst)
    out_push |-> out_ready)
    else $error("srnic_rx_rqfetch: record FIFO overflow (a record lost)");
`endif
endmodule
`default_nettype wire
