// srnic_rx_rqfetch: receive-WQE fetch on packet arrival (SRNIC §4.3.2), between the RX
// parser and the RX engine.
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
  logic [15:0]   pi_q, fci_q;
  logic          fci_we;
  logic [AW-1:0] fci_waddr;
  logic [15:0]   fci_wdata;
  // the command writes the configuration and, on RESET->INIT, zeroes both indices; it
  // waits for a cycle without doorbell or fetch-index traffic
  logic fci_busy;
  // ... nor in a cycle where a record starts reading the indices it would reset
  wire cmd_go = qp_cmd_valid && !db_valid && !fci_busy && !rd_en;
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

  typedef enum logic [1:0] {F_IDLE, F_READ, F_ISSUE, F_OUT} fstate_e;
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

  // pass-through records go straight out; WQE consumers read their QP's indices first
  // a resync is taken between records, so no read of the fetch index is in flight
  assign resync_ready = fs == F_IDLE;
  wire   rs_go        = resync_valid && resync_ready;
  assign s_ready = fs == F_IDLE && out_ready && !resync_valid;
  assign rd_en   = s_ready && s_valid && needs;
  assign rd_qpn  = s_meta.dqpn[AW-1:0];

  rqcfg_t c;
  assign c = cfg_q;
  wire [15:0] mask  = (16'd1 << c.log_rq) - 16'd1;
  wire        avail = fci_q != pi_q;
  wire        space = resv < WDEPTH[$clog2(WDEPTH):0];
  assign ar_valid = fs == F_ISSUE && avail && space;
  assign ar_addr  = c.rq_base + {42'd0, fci_q & mask, 6'd0};
  assign fci_busy = fs != F_IDLE || resync_valid;

  always_comb begin
    out_in = (fs == F_IDLE) ? s_meta : mq;
    out_push = (s_ready && s_valid && !needs) || (fs == F_ISSUE && (!avail || (space && ar_ready)));
    if (fs == F_ISSUE) begin
      out_in.rq_fetched = avail;
      out_in.rq_idx     = fci_q;
    end else begin
      out_in.rq_fetched = 1'b0;
      out_in.rq_idx     = '0;
    end
    fci_we    = (fs == F_ISSUE && avail && space && ar_ready) || rs_go;
    fci_waddr = rs_go ? resync_qpn[AW-1:0] : mq.dqpn[AW-1:0];
    fci_wdata = rs_go ? resync_ci : fci_q + 16'd1;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      fs <= F_IDLE;
    end else begin
      case (fs)
        F_IDLE: if (rd_en) begin mq <= s_meta; fs <= F_READ; end
        F_READ: fs <= F_ISSUE;
        F_ISSUE: if (!avail || (space && ar_ready)) fs <= F_IDLE;
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
  wire unused_ok = ^{qp_cmd, db_qpn, resync_qpn, mq};
  /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
