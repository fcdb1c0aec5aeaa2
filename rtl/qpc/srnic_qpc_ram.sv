// srnic_qpc_ram: one slice of per-QP context with a fixed-latency read-modify-write
// interface.
//
// A read issued at cycle t returns its data at t+1 (rsp_valid). Writes that land while
// a read is in flight (at t or t+1) are forwarded into the response, so a reader never
// sees a value older than the last completed write.
//
// Same-QP hazards across a longer modify stage are handled by locks: a read with
// req_lock=1 holds its QPN until the owner writes it back (wr_unlock=1). A later read
// of a locked QPN is stalled (req_ready=0) until then, so two read-modify-write
// operations on one QP never overlap and no update is lost. Reads of other QPs proceed.
// An external writer (the command path) may write when the owner does not (ext_*) and the
// QP is not locked: a command waits for a read-modify-write of its QP in progress, so the
// owner's write-back cannot undo it. Ext writes never unlock.
// After reset the RAM is cleared to zero, one entry per cycle (NUM_QPS cycles, both ports
// not ready meanwhile): a QP that was never configured reads as all-zero context (state
// RESET), whatever the RAM held before, so a doorbell or packet for it is ignored.
//   CLEAR: 1 = clear after reset (default), 0 = contents undefined until written.
`default_nettype none
module srnic_qpc_ram #(
  parameter int WIDTH   = 64,
  parameter int NUM_QPS = 16384,
  parameter int LOCKS   = 4,
  parameter bit CLEAR   = 1'b1
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  // read port
  input  wire logic                       req_valid,
  output logic                            req_ready,
  input  wire logic [$clog2(NUM_QPS)-1:0] req_qpn,
  input  wire logic                       req_lock,
  output logic                            rsp_valid,
  output logic [WIDTH-1:0]                rsp_data,
  // owner write port (always accepted)
  input  wire logic                       wr_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] wr_qpn,
  input  wire logic [WIDTH-1:0]           wr_data,
  input  wire logic                       wr_unlock,
  // external write port (command path); accepted when the owner does not write
  input  wire logic                       ext_valid,
  output logic                            ext_ready,
  input  wire logic [$clog2(NUM_QPS)-1:0] ext_qpn,
  input  wire logic [WIDTH-1:0]           ext_data
);
  localparam int AW = $clog2(NUM_QPS);
  initial begin
    if (NUM_QPS < 2 || (1 << AW) != NUM_QPS) $fatal(1, "srnic_qpc_ram: NUM_QPS must be a power of two >= 2");
  end

  // locks
  logic [LOCKS-1:0]  lock_valid;
  logic [AW-1:0]     lock_qpn [LOCKS];
  logic              hit_lock, lock_free, ext_locked;
  logic [$clog2(LOCKS > 1 ? LOCKS : 2)-1:0] free_idx;
  always_comb begin
    hit_lock   = 1'b0;
    ext_locked = 1'b0;
    lock_free  = 1'b0;
    free_idx   = '0;
    for (int i = 0; i < LOCKS; i++) begin
      if (lock_valid[i] && lock_qpn[i] == req_qpn) hit_lock = 1'b1;
      if (lock_valid[i] && lock_qpn[i] == ext_qpn) ext_locked = 1'b1;
      if (!lock_valid[i] && !lock_free) begin
        lock_free = 1'b1;
        free_idx  = i[$bits(free_idx)-1:0];
      end
    end
  end
  // reset sweep
  logic          clr_busy;
  logic [AW-1:0] clr_addr;
  always_ff @(posedge clk) begin
    if (rst) begin
      clr_busy <= CLEAR;
      clr_addr <= '0;
    end else if (clr_busy) begin
      clr_addr <= clr_addr + 1'b1;
      if (clr_addr == AW'(NUM_QPS - 1)) clr_busy <= 1'b0;
    end
  end

  // A read may not pass a lock on its QP, nor take a lock when all are in use.
  assign req_ready = !clr_busy && !hit_lock && (!req_lock || lock_free);
  wire do_read = req_valid && req_ready;

  // write port mux: the sweep, then the owner, then the command path
  wire          we    = clr_busy || wr_valid || (ext_valid && !ext_locked);
  wire [AW-1:0] waddr = clr_busy ? clr_addr : wr_valid ? wr_qpn : ext_qpn;
  wire [WIDTH-1:0] wdata = clr_busy ? '0 : wr_valid ? wr_data : ext_data;
  assign ext_ready = !clr_busy && !wr_valid && !ext_locked;

  logic [WIDTH-1:0] ram_q;
  sdp_ram #(.WIDTH(WIDTH), .DEPTH(NUM_QPS)) u_ram (
    .clk, .wr_en(we), .wr_addr(waddr), .wr_data(wdata),
    .rd_en(do_read), .rd_addr(req_qpn), .rd_data(ram_q));

  logic             rd_q, fwd_q;
  logic [AW-1:0]    rd_qpn_q;
  logic [WIDTH-1:0] fwd_data_q;
  always_ff @(posedge clk) begin
    rd_q       <= do_read && !rst;
    rd_qpn_q   <= req_qpn;
    fwd_q      <= we && waddr == req_qpn;
    fwd_data_q <= wdata;
  end
  assign rsp_valid = rd_q;
  assign rsp_data  = (we && waddr == rd_qpn_q) ? wdata : (fwd_q ? fwd_data_q : ram_q);

  always_ff @(posedge clk) begin
    if (rst) begin
      lock_valid <= '0;
    end else begin
      for (int i = 0; i < LOCKS; i++)
        if (wr_valid && wr_unlock && lock_valid[i] && lock_qpn[i] == wr_qpn) lock_valid[i] <= 1'b0;
      if (do_read && req_lock) begin
        lock_valid[free_idx] <= 1'b1;
        lock_qpn[free_idx]   <= req_qpn;
      end
    end
  end

`ifndef SYNTHESIS
  // An unlock must name a locked QP.
  logic unlock_hit;
  always_comb begin
    unlock_hit = 1'b0;
    for (int i = 0; i < LOCKS; i++) if (lock_valid[i] && lock_qpn[i] == wr_qpn) unlock_hit = 1'b1;
  end
  always_ff @(posedge clk) begin
    if (!rst && wr_valid && wr_unlock && !unlock_hit) $error("srnic_qpc_ram: unlock of unlocked qpn %0d", wr_qpn);
  end
`endif
`ifndef SYNTHESIS
  // Assertions (verilator --assert): lock table consistency.
  logic sva_lock_dup;
  always_comb begin
    sva_lock_dup = 1'b0;
    for (int i = 0; i < LOCKS; i++)
      for (int k = i + 1; k < LOCKS; k++)
        if (lock_valid[i] && lock_valid[k] && lock_qpn[i] == lock_qpn[k]) sva_lock_dup = 1'b1;
  end
  a_lock_unique: assert property (@(posedge clk) disable iff (rst)
    !sva_lock_dup)
    else $error("srnic_qpc_ram: a QP holds two locks");
  a_rsp_follows_read: assert property (@(posedge clk) disable iff (rst)
    rsp_valid |-> $past(req_valid && req_ready))
    else $error("srnic_qpc_ram: response without a read the cycle before");
  a_no_access_during_clear: assert property (@(posedge clk) disable iff (rst)
    clr_busy |-> !req_ready && !ext_ready)
    else $error("srnic_qpc_ram: access accepted during the reset sweep");
`endif
endmodule
`default_nettype wire
