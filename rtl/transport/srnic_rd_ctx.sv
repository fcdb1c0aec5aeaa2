// srnic_rd_ctx: outstanding RDMA READ contexts of the requester (standard RoCEv2 mode).
//
// READ responses carry no address, so the requester must know where each response goes.
// When the send path emits a READ request it inserts {QP, PSN range, target address,
// path MTU, payload length of the last response} (the target's local key already
// checked); the RX engine looks a response up by {QP, PSN}, checks every response's
// opcode and length against the entry (so nothing lands outside [pa, pa + READ length)),
// and frees the entry after the READ's last response is placed or when the READ fails.
// The table is shared by all QPs (ENTRIES outstanding READs in total, a constant
// independent of the number of QPs); when it is full the send path waits before emitting
// another READ. A QP reset (RESET->INIT, flush) or the QP entering the error state
// (qerr_flush) frees all of that QP's entries, and so does a go-back-N rewind of the QP's
// send side (rw_flush): its READs at or after the rewind PSN are requested again.
// A free names the QP too and frees the entry only while it still belongs to that QP.
// Lookups answer two cycles after the request. A read port gives an entry by its index,
// combinationally (the RX engine keeps only the index of the READ whose responses it is
// placing, not a copy of the entry). Two query ports tell, combinationally,
// whether a QP has any entry (the send path's fence check; the second also counts them, for
// the send path's per-QP share); a third whether a QP has a READ
// that ends before a given PSN (the RX engine's implied NAK: an ACK or NAK beyond it means
// its responses were lost), and whether that QP has any entry at all.
`default_nettype none
module srnic_rd_ctx #(
  parameter int ENTRIES = 64,
  parameter int QPN_BITS = 16
) (
  input  wire logic                clk,
  input  wire logic                rst,
  // insert (send path)
  input  wire logic                ins_valid,
  output logic                     ins_ready,
  input  wire logic [QPN_BITS-1:0] ins_qpn,
  input  wire logic [23:0]         ins_first,
  input  wire logic [23:0]         ins_last,
  input  wire logic [63:0]         ins_pa,
  input  wire logic [2:0]          ins_mtu,
  input  wire logic [12:0]         ins_last_len,
  // lookup (RX engine)
  input  wire logic                lk_valid,
  input  wire logic [QPN_BITS-1:0] lk_qpn,
  input  wire logic [23:0]         lk_psn,
  output logic                     lk_rsp,
  output logic                     lk_hit,
  output logic [$clog2(ENTRIES)-1:0] lk_idx,
  output logic [63:0]              lk_pa,
  output logic [23:0]              lk_first,
  output logic [23:0]              lk_last,
  output logic [2:0]               lk_mtu,
  output logic [12:0]              lk_last_len,
  // read by index (combinational)
  input  wire logic [$clog2(ENTRIES)-1:0] rx_idx,
  output logic                     rx_valid,
  output logic [QPN_BITS-1:0]      rx_qpn,
  output logic [63:0]              rx_pa,
  output logic [23:0]              rx_first,
  output logic [23:0]              rx_last,
  output logic [2:0]               rx_mtu,
  output logic [12:0]              rx_last_len,
  // free
  input  wire logic                free_valid,
  input  wire logic [$clog2(ENTRIES)-1:0] free_idx,
  input  wire logic [QPN_BITS-1:0] free_qpn,
  input  wire logic                rw_flush_valid,
  input  wire logic [QPN_BITS-1:0] rw_flush_qpn,
  input  wire logic                flush_valid,
  input  wire logic [QPN_BITS-1:0] flush_qpn,
  input  wire logic                qerr_flush_valid,
  input  wire logic [QPN_BITS-1:0] qerr_flush_qpn,
  // fence queries
  input  wire logic [QPN_BITS-1:0] qa_qpn,
  output logic                     qa_busy,
  input  wire logic [QPN_BITS-1:0] qb_qpn,
  output logic                     qb_busy,
  output logic [$clog2(ENTRIES):0] qb_cnt,    // entries of qb_qpn (the send path's share)
  // implied-NAK query: does bq_qpn have a READ whose last PSN is before bq_psn
  input  wire logic [QPN_BITS-1:0] bq_qpn,
  input  wire logic [23:0]         bq_psn,
  output logic                     bq_hit,
  output logic                     bq_any,    // bq_qpn has any entry (its timer may not stop)
  // free entries, registered: the count of one cycle earlier (an insert shows a cycle late)
  output logic [$clog2(ENTRIES):0] n_free,
  // entries freed at the last clock edge (a free, a flush): the send path's wake-ups
  output logic [$clog2(ENTRIES):0] n_freed
);
  localparam int IW = $clog2(ENTRIES);
  logic [ENTRIES-1:0] valid;
  logic [QPN_BITS-1:0] qpn_m   [ENTRIES];
  logic [23:0]         first_m [ENTRIES];
  logic [23:0]         last_m  [ENTRIES];
  logic [63:0]         pa_m    [ENTRIES];
  logic [2:0]          mtu_m   [ENTRIES];
  logic [12:0]         llen_m  [ENTRIES];

  // free slot
  logic          have_free;
  logic [IW-1:0] free_slot;
  always_comb begin
    have_free = 1'b0; free_slot = '0;
    for (int i = 0; i < ENTRIES; i++)
      if (!valid[i] && !have_free) begin have_free = 1'b1; free_slot = IW'(i); end
  end
  assign ins_ready = have_free && !flush_valid && !qerr_flush_valid && !rw_flush_valid;
  localparam int CW = $clog2(ENTRIES) + 1;
  logic [CW-1:0] free_cnt;
  always_comb begin
    free_cnt = '0;
    for (int i = 0; i < ENTRIES; i++) free_cnt = free_cnt + CW'(!valid[i]);
  end
  always_ff @(posedge clk) n_free <= rst ? '0 : free_cnt;
  // an entry freed at an edge is not inserted again at the same edge (an insert takes a free one)
  logic [ENTRIES-1:0] valid_q;
  always_ff @(posedge clk) valid_q <= rst ? '0 : valid;
  always_comb begin
    n_freed = '0;
    for (int i = 0; i < ENTRIES; i++) n_freed = n_freed + CW'(valid_q[i] && !valid[i]);
  end

  always_comb begin
    qa_busy = 1'b0; qb_busy = 1'b0; bq_hit = 1'b0; bq_any = 1'b0; qb_cnt = '0;
    for (int i = 0; i < ENTRIES; i++) begin
      if (valid[i] && qpn_m[i] == qa_qpn) qa_busy = 1'b1;
      if (valid[i] && qpn_m[i] == qb_qpn) qb_busy = 1'b1;
      qb_cnt = qb_cnt + CW'(valid[i] && qpn_m[i] == qb_qpn);
      if (valid[i] && qpn_m[i] == bq_qpn && srnic_pkg::psn_gt(bq_psn, last_m[i])) bq_hit = 1'b1;
      if (valid[i] && qpn_m[i] == bq_qpn) bq_any = 1'b1;
    end
  end

  assign rx_valid = valid[rx_idx];
  assign rx_qpn   = qpn_m[rx_idx];
  assign rx_pa    = pa_m[rx_idx];
  assign rx_first = first_m[rx_idx];
  assign rx_last  = last_m[rx_idx];
  assign rx_mtu   = mtu_m[rx_idx];
  assign rx_last_len = llen_m[rx_idx];

  // lookup: stage 1 registers the key, stage 2 searches and registers the answer
  logic          lk1;
  logic [QPN_BITS-1:0] lk1_qpn;
  logic [23:0]   lk1_psn;
  always_ff @(posedge clk) begin
    lk1 <= !rst && lk_valid;
    lk1_qpn <= lk_qpn;
    lk1_psn <= lk_psn;
    lk_rsp <= !rst && lk1;
    if (lk1) begin
      lk_hit <= 1'b0;
      for (int i = 0; i < ENTRIES; i++) begin
        if (valid[i] && qpn_m[i] == lk1_qpn && srnic_pkg::psn_ge(lk1_psn, first_m[i]) &&
            srnic_pkg::psn_ge(last_m[i], lk1_psn)) begin
          lk_hit <= 1'b1; lk_idx <= IW'(i);
          lk_pa <= pa_m[i]; lk_first <= first_m[i]; lk_last <= last_m[i];
          lk_mtu <= mtu_m[i]; lk_last_len <= llen_m[i];
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      valid <= '0;
    end else begin
      if (free_valid && qpn_m[free_idx] == free_qpn) valid[free_idx] <= 1'b0;
      if (rw_flush_valid)
        for (int i = 0; i < ENTRIES; i++) if (qpn_m[i] == rw_flush_qpn) valid[i] <= 1'b0;
      if (flush_valid)
        for (int i = 0; i < ENTRIES; i++) if (qpn_m[i] == flush_qpn) valid[i] <= 1'b0;
      if (qerr_flush_valid)
        for (int i = 0; i < ENTRIES; i++) if (qpn_m[i] == qerr_flush_qpn) valid[i] <= 1'b0;
      if (ins_valid && ins_ready) begin
        valid[free_slot]   <= 1'b1;
        qpn_m[free_slot]   <= ins_qpn;
        first_m[free_slot] <= ins_first;
        last_m[free_slot]  <= ins_last;
        pa_m[free_slot]    <= ins_pa;
        mtu_m[free_slot]   <= ins_mtu;
        llen_m[free_slot]  <= ins_last_len;
      end
    end
  end

`ifndef SYNTHESIS
  // Assertions (verilator --assert): table consistency.
  int unsigned sva_hits;
  always_comb begin
    sva_hits = 0;
    for (int i = 0; i < ENTRIES; i++)
      if (valid[i] && qpn_m[i] == lk1_qpn && srnic_pkg::psn_ge(lk1_psn, first_m[i]) &&
          srnic_pkg::psn_ge(last_m[i], lk1_psn)) sva_hits = sva_hits + 1;
  end
  a_lookup_unique: assert property (@(posedge clk) disable iff (rst)
    lk1 |-> sva_hits <= 1)
    else $error("srnic_rd_ctx: %0d entries match QP %0d PSN %0d (overlapping READ contexts)", sva_hits, lk1_qpn, lk1_psn);
  a_ins_ready_free: assert property (@(posedge clk) disable iff (rst)
    ins_ready |-> !valid[free_slot] && valid != '1)
    else $error("srnic_rd_ctx: insert accepted without a free entry");
  a_ins_takes_slot: assert property (@(posedge clk) disable iff (rst)
    ins_valid && ins_ready |=> valid[$past(free_slot)])
    else $error("srnic_rd_ctx: inserted entry not valid afterwards");
  a_rsp_timing: assert property (@(posedge clk) disable iff (rst)
    lk_rsp |-> $past(lk_valid, 2))
    else $error("srnic_rd_ctx: lookup answer without a lookup two cycles earlier");
  a_range_order: assert property (@(posedge clk) disable iff (rst)
    ins_valid && ins_ready |-> srnic_pkg::psn_ge(ins_last, ins_first))
    else $error("srnic_rd_ctx: READ context with last PSN before its first");
`endif
endmodule
`default_nettype wire
