// owed_fifo: K queues of (index, tag) pairs whose producer never waits.
//
// Each queue k is a DEPTH-entry FIFO (m_valid[k], m_idx, m_tag, m_ready[k]). A push names
// an index, a tag and the queues it goes to (s_kinds). A queue with room takes it at once;
// for a queue that is full the index is marked as owed instead: one owed bit per index and
// queue, and one tag per index, shared by its K bits. A sweep walks the owed bits (LANES
// indices to a row, one row per cycle) and moves an owed index into its queue once that queue
// has room, one per cycle. So the producer is never held up, whatever the consumers do, and
// the storage is bounded by NUM x (K + TAGW) bits, provided each index is pushed at most once
// per queue and tag until it has been popped. A second push of an (index, queue, tag) that is
// owed merges into the bit if that queue is still full; if it has room, the push is queued and
// the owed bit still comes out too (twice). The tags are incarnations: a push that finds a
// queue full, for an index owed under another tag, replaces the tag and forgets what was owed
// under the old one; a push that every queue it names takes at once leaves owed bits of an older
// tag as they are, and they come out later. Consumers therefore drop stale tags themselves.
//
// Order: a queue's FIFO keeps push order; an index that was owed comes out after those
// pushed while it waited, and owed indices come out in sweep order. pending[k] says an index
// of queue k is owed (not yet in its FIFO): a consumer that must see every entry pushed
// before it acts (the RX engine with the completion engine's qerrs) waits for
// !m_valid[k] && !pending[k].
//
// The sweep stalls in a cycle with a push that needs an owed bit, and a queue takes no swept
// index in a cycle it takes a push: a producer that keeps a queue full and pushes to it every
// cycle holds owed indices of the other queues back (the completion engine pushes once per
// failing CQE, never in consecutive cycles for long).
//
// After reset the owed bits are cleared, one row per cycle (NUM / LANES cycles, init_busy);
// a push in that time goes to its FIFOs or, if one is full, is lost (asserted).
`default_nettype none
module owed_fifo #(
  parameter int NUM   = 16384,  // indices (a power of two)
  parameter int K     = 2,      // queues
  parameter int TAGW  = 4,      // tag bits
  parameter int DEPTH = 16,     // FIFO entries per queue
  parameter int LANES = 16      // indices per row of owed bits (the sweep's step)
) (
  input  wire logic                      clk,
  input  wire logic                      rst,
  input  wire logic                      s_valid,
  input  wire logic [$clog2(NUM)-1:0]    s_idx,
  input  wire logic [TAGW-1:0]           s_tag,
  input  wire logic [K-1:0]              s_kinds,
  output logic [K-1:0]                   m_valid,
  output logic [K*$clog2(NUM)-1:0]       m_idx,    // queue k at [k*IW +: IW]
  output logic [K*TAGW-1:0]              m_tag,    // queue k at [k*TAGW +: TAGW]
  input  wire logic [K-1:0]              m_ready,
  output logic [K-1:0]                   pending,  // queue k has owed indices
  output logic                           init_busy
);
  localparam int IW   = $clog2(NUM);
  localparam int LW   = $clog2(LANES);
  localparam int ROWS = NUM / LANES;
  localparam int RW   = $clog2(ROWS);
  localparam int EW   = K + TAGW;          // one index: K owed bits, then its tag
  localparam int CW   = IW + 1;            // owed count per queue: 0..NUM
  initial begin
    if ((1 << IW) != NUM || (1 << LW) != LANES || LANES < 2 || ROWS < 2)
      $fatal(1, "owed_fifo: NUM and LANES must be powers of two, 2 <= LANES <= NUM / 2");
    if (K < 1 || TAGW < 1) $fatal(1, "owed_fifo: K and TAGW must be >= 1");
  end

  // ------------------------------------------------------------------ queues
  logic [K-1:0] f_push, f_ready;
  logic [K-1:0]    f_from_s;  // queue k takes the push (else, if f_push[k], the swept index)
  logic [IW-1:0]   w_idx;     // the swept index
  logic [TAGW-1:0] w_tag;
  for (genvar k = 0; k < K; k++) begin : g_q
    sync_fifo #(.WIDTH(IW + TAGW), .DEPTH(DEPTH)) u_f (
      .clk, .rst, .s_data(f_from_s[k] ? {s_tag, s_idx} : {w_tag, w_idx}), .s_valid(f_push[k]),
      .s_ready(f_ready[k]), .m_data({m_tag[k*TAGW +: TAGW], m_idx[k*IW +: IW]}), .m_valid(m_valid[k]),
      .m_ready(m_ready[k]), .count());
  end

  // ------------------------------------------------------------------ owed bits
  logic [LANES*EW-1:0] rows [ROWS];
  logic [RW-1:0]       init_row, ptr;
  logic [K*CW-1:0]     cnt;
  wire  [K-1:0] s_direct = s_valid ? (s_kinds & f_ready) : '0;   // into the FIFO now
  wire  [K-1:0] s_spill  = s_valid ? (s_kinds & ~f_ready) : '0;  // owed instead
  wire          spill    = s_spill != '0 && !init_busy;

  // the push's row: merge or replace its lane
  wire  [RW-1:0]       p_row  = s_idx[IW-1:LW];
  wire  [LW-1:0]       p_lane = s_idx[LW-1:0];
  wire  [LANES*EW-1:0] p_old  = rows[p_row];
  wire  [EW-1:0]       p_ent  = p_old[p_lane*EW +: EW];
  wire  [K-1:0]        p_bits = p_ent[EW-1 -: K];
  wire  [TAGW-1:0]     p_tagq = p_ent[TAGW-1:0];
  wire                 p_repl = p_bits != '0 && p_tagq != s_tag;   // owed for an earlier tag
  wire  [K-1:0]        p_keep = p_repl ? '0 : p_bits;
  wire  [K-1:0]        p_new  = p_keep | s_spill;
  logic [LANES*EW-1:0] p_row_new;
  always_comb begin
    p_row_new = p_old;
    p_row_new[p_lane*EW +: EW] = {p_new, s_tag};
  end

  // the sweep: the first owed bit in row ptr whose queue has room and takes no push now
  wire  [LANES*EW-1:0] w_old = rows[ptr];
  wire  [K-1:0]        w_room = f_ready & ~s_direct;
  logic                w_hit;
  logic [LW-1:0]       w_lane;
  logic [K-1:0]        w_kind;   // one-hot
  always_comb begin
    w_hit = 1'b0; w_lane = '0; w_kind = '0;
    for (int l = LANES - 1; l >= 0; l--) begin
      for (int k = K - 1; k >= 0; k--) begin
        if (w_old[l*EW + TAGW + k] && w_room[k]) begin
          w_hit = 1'b1; w_lane = LW'(l); w_kind = '0; w_kind[k] = 1'b1;
        end
      end
    end
  end
  wire sweep_go = !init_busy && !spill && cnt != '0 && w_hit;
  assign w_idx = {ptr, w_lane};
  assign w_tag = w_old[w_lane*EW +: TAGW];
  logic [LANES*EW-1:0] w_row_new;
  always_comb begin
    w_row_new = w_old;
    w_row_new[w_lane*EW + TAGW +: K] = w_old[w_lane*EW + TAGW +: K] & ~w_kind;
  end

  assign f_from_s = s_direct;
  assign f_push   = s_direct | (sweep_go ? w_kind : '0);

  // counts: +1 per newly owed bit, -1 per bit dropped by a replacement or swept
  logic [K*CW-1:0] cnt_nx;
  always_comb begin
    cnt_nx = cnt;
    for (int k = 0; k < K; k++) begin
      if (spill && s_spill[k] && !p_keep[k]) cnt_nx[k*CW +: CW] = cnt_nx[k*CW +: CW] + 1'b1;
      if (spill && p_repl && p_bits[k])      cnt_nx[k*CW +: CW] = cnt_nx[k*CW +: CW] - 1'b1;
      if (sweep_go && w_kind[k])             cnt_nx[k*CW +: CW] = cnt_nx[k*CW +: CW] - 1'b1;
    end
  end
  always_comb begin
    for (int k = 0; k < K; k++) pending[k] = cnt[k*CW +: CW] != '0;
  end

  always_ff @(posedge clk) begin
    if (init_busy) rows[init_row] <= '0;
    else if (spill) rows[p_row] <= p_row_new;
    else if (sweep_go) rows[ptr] <= w_row_new;
    if (rst) begin
      init_busy <= 1'b1; init_row <= '0; ptr <= '0; cnt <= '0;
    end else begin
      if (init_busy) begin
        init_row <= init_row + 1'b1;
        if (init_row == RW'(ROWS - 1)) init_busy <= 1'b0;
      end
      cnt <= cnt_nx;
      // stay on a row while it gives up bits; move on when it has none the queues can take
      if (!init_busy && !spill && cnt != '0 && !w_hit) ptr <= ptr + 1'b1;
    end
  end

`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst && init_busy && s_valid && (s_kinds & ~f_ready) != '0)
      $error("owed_fifo: a push that needs an owed bit while the bits are being cleared was lost");
  end
`endif
endmodule
`default_nettype wire
