// srnic_wqe_cache: a WQE cache between srnic_wqe_fetch's WQE read port and the DMA read mux,
// for the `cached` build variant only: the baseline SRNIC is compared with in its Figure 9
// (a commercial NIC's SQ WQE cache of limited capacity). The default build is cache-free
// (SRNIC §4.3.1: every turn reads its WQEs from the host and drops what it does not use)
// and does not instantiate this block.
//
// Lines. LINES lines of LINE_WQES 64-byte WQEs, WAYS-way set-associative (SETS = LINES /
// WAYS). A line is tagged by (QPN, absolute WQE index >> log2(LINE_WQES)), never by host
// address, so a ring slot reused after a wrap (a newer WQE, another absolute index) never
// hits an older line; set = (QPN + line number) mod SETS. Each line has a valid mask, one
// bit per WQE: posted and fetched, or being fetched. Replacement is round-robin per set
// (st_evict when a valid line is replaced). Only QPs whose ring has at least LINE_WQES
// slots are cached (an aligned line then never crosses the ring end); the requests of
// smaller rings bypass the cache (read straight through, nothing stored, a miss).
//
// Lookup. One lookup per cycle: a demand request (priority) or the head of the prefetch
// queue. A request of up to 8 WQEs touches at most 2 lines: two segments, looked up
// together. A demand request hits when every WQE it asks for is valid; a missing segment
// (also one partially valid) is read from the host whole and written into its line
// (allocated, or merged into the valid mask), and its beats go to the requester. When both
// segments miss they are read in one burst (the request never crosses the ring end or a
// 4 KiB boundary). Blocking: at most MISS_SLOTS demand reads (misses and bypasses) are in
// flight, counted from the lookup until their last beat arrives; at the limit the cache
// takes no request at all, hits included (u_ar_ready low). MISS_SLOTS 1 is a blocking
// cache.
//
// Prefetch. A per-QP table (two NUM_QPS-deep RAMs) holds the SQ configuration of the last
// command (enabled = INIT/RTR/RTS, sq_base, log_sq) and the producer index of the last
// doorbell. A doorbell prefetches the WQEs it posts, [pi_old, min(db_pi, pi_old +
// LINE_WQES)), when the QP's reads had caught up to within LINE_WQES of pi_old (a third RAM
// keeps the end of each QP's last demand request); a demand request [idx, idx+n) prefetches the QP's next WQEs, [idx+n,
// min(u_ar_pi, idx+n+LINE_WQES)). Prefetch windows wait in a PFQ_DEPTH queue (dropped when
// it is full: st_pf_drop); at lookup a segment whose WQEs are all valid is skipped, others
// allocate or merge their line and are read (never across 4 KiB: a segment is cut there),
// written to the line and not forwarded. At most PF_SLOTS prefetch reads are in flight.
// A window still queued when a demand request of its QP reaches it (starts before the
// request's end) is dropped: the requester got there first, and those WQEs may complete
// (and their slots be reposted) at any time from then on, so they are never read late.
//
// Order. Every lookup queues one descriptor (its segments: hit, fill or bypass) and its
// host reads, in lookup order; reads go out in that order and return in order, and one
// back end works through the descriptors, one beat per cycle: a hit reads the data RAM,
// a fill takes the next arriving beat, writes it into its line and forwards it if it is
// demand's. So every RAM read and write happens in lookup order: a hit on a line still
// being filled is served after the fill's data is written, and a line replaced by a later
// lookup is rewritten only after the earlier descriptors that read it. Room in the arrival
// FIFO is reserved for every read before it is issued, so arriving beats are always taken.
// A hit's first beat leaves two cycles after the request is taken when nothing is queued
// before it; then one beat per cycle.
//
// Commands. A command with init_idx (RESET->INIT: the QP's indices restart at 0) or one
// that leaves the QP outside INIT/RTR/RTS invalidates every line of the QP (a parallel
// clear of the tags), zeroes its producer index (init_idx) and cancels its prefetches not
// yet issued: queued windows are dropped, and reads already looked up are not issued (the
// back end takes as many empty beats for them, written nowhere). Integration contract:
// a command of a QP comes when none of the QP's requests is in flight (srnic_wqe_fetch
// applies a command once no turn of the QP is), an init_idx command never in the same cycle
// as a doorbell (srnic_wqe_fetch takes such a command only in a cycle without one: wire
// qp_cmd_fire to its qp_cmd handshake), and no command in the NUM_QPS cycles after reset,
// while the table clears itself (srnic_qpc_ram's clear holds the command path as long).
//
// Cost at the defaults (NUM_QPS 16384, LINES 256, WAYS 4, LINE_WQES 8): the per-QP table
// holds 95 bits per QP (63 of SQ configuration, 16 of producer index, 16 of read cursor):
// 190 KiB; the lines 128 KiB of data RAM (2048 x 512 bits) and 36 bits of tag, state and valid mask per line in
// flops (9,216 flops); the arrival FIFO 64 beats (4 KiB).
`default_nettype none
module srnic_wqe_cache #(
  parameter int NUM_QPS    = 16384,
  parameter int LINES      = 256,  // cache lines of LINE_WQES WQEs each
  parameter int WAYS       = 4,    // set-associative; SETS = LINES / WAYS (power of two, >= 2)
  parameter int LINE_WQES  = 8,    // power of two, 8..64
  parameter int MISS_SLOTS = 1,    // demand-miss reads in flight (1 = a blocking cache)
  parameter int PF_SLOTS   = 4,    // prefetch reads in flight (>= 2)
  parameter int PFQ_DEPTH  = 8     // prefetch requests waiting; more are dropped (hints)
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  // upstream: WQE reads of srnic_wqe_fetch (u_ar_len+1 consecutive WQEs, never across the
  // ring end or a 4 KiB boundary; the QP, the absolute index of the first WQE, the QP's
  // producer index and log2 of its ring size alongside; held until ready)
  input  wire logic                       u_ar_valid,
  input  wire logic [63:0]                u_ar_addr,
  input  wire logic [7:0]                 u_ar_len,
  input  wire logic [$clog2(NUM_QPS)-1:0] u_ar_qpn,
  input  wire logic [15:0]                u_ar_idx,
  input  wire logic [15:0]                u_ar_pi,
  input  wire logic [3:0]                 u_ar_log_sq,
  output logic                            u_ar_ready,
  // read data, in request order, at most one beat per cycle (no ready)
  output logic                            u_r_valid,
  output logic [511:0]                    u_r_data,
  // downstream: AXI read client (in-order data, no ready on R)
  output logic                            d_ar_valid,
  output logic [63:0]                     d_ar_addr,
  output logic [7:0]                      d_ar_len,
  input  wire logic                       d_ar_ready,
  input  wire logic                       d_r_valid,
  input  wire logic [511:0]               d_r_data,
  // doorbells (snooped, never stalled): the QP's SQ producer index moved to db_pi
  input  wire logic                       db_valid,
  input  wire logic [15:0]                db_qpn,
  input  wire logic [15:0]                db_pi,
  // QP commands (snooped, one cycle per command)
  input  wire logic                       qp_cmd_fire,
  input  var srnic_pkg::qp_cmd_t          qp_cmd,
  // counters, one-cycle pulses: a request that is all hits; a request with a missing
  // segment (or bypassing); a prefetch read issued (with its d_ar handshake); a prefetch
  // window dropped because the queue was full (not those overtaken by a request or cancelled
  // by a command); a valid line replaced. The last two are counted and let out one per cycle
  // (two in one cycle show in two cycles). All one cycle after the event.
  output logic                            st_hit,
  output logic                            st_miss,
  output logic                            st_pf,
  output logic                            st_pf_drop,
  output logic                            st_evict
);
  localparam int QW   = $clog2(NUM_QPS);
  localparam int SETS = LINES / WAYS;
  localparam int SW   = $clog2(SETS);
  localparam int WW   = WAYS > 1 ? $clog2(WAYS) : 1;
  localparam int LIW  = $clog2(LINES);
  localparam int LW   = $clog2(LINE_WQES);
  localparam int NW   = LW + 1;                 // a WQE count, 0..LINE_WQES
  localparam int LNW  = 16 - LW;                // line number: absolute index >> LW
  localparam int RAW  = LIW + LW;               // data RAM address
  localparam int SLOTS = MISS_SLOTS + PF_SLOTS;
  localparam int RQD  = 1 << $clog2(SLOTS);     // reads looked up, not yet issued
  localparam int RQW  = $clog2(RQD);
  localparam int AFD  = 1 << $clog2(SLOTS * LINE_WQES);  // arrival FIFO (beats)
  localparam int AFW  = $clog2(AFD);
  localparam int DQD  = 16;                     // descriptors waiting for the back end
  localparam int PQW  = $clog2(PFQ_DEPTH);
  localparam int CW   = 8;                      // slot counters
  localparam int WSH  = $clog2(WAYS);
  localparam int MW   = 2 * LINE_WQES;
  initial begin
    if (NUM_QPS < 2 || (1 << QW) != NUM_QPS) $fatal(1, "srnic_wqe_cache: NUM_QPS must be a power of two >= 2");
    if ((1 << LIW) != LINES || WAYS < 1 || (1 << $clog2(WAYS)) != WAYS || SETS < 2)
      $fatal(1, "srnic_wqe_cache: LINES and WAYS must be powers of two with LINES / WAYS >= 2");
    if ((1 << LW) != LINE_WQES || LINE_WQES < 8 || LINE_WQES > 64)
      $fatal(1, "srnic_wqe_cache: LINE_WQES must be a power of two in 8..64");
    if (MISS_SLOTS < 1 || PF_SLOTS < 2 || SLOTS > 64)
      $fatal(1, "srnic_wqe_cache: MISS_SLOTS >= 1, PF_SLOTS >= 2, MISS_SLOTS + PF_SLOTS <= 64");
    if (PFQ_DEPTH < 2 || (1 << PQW) != PFQ_DEPTH) $fatal(1, "srnic_wqe_cache: PFQ_DEPTH must be a power of two >= 2");
  end

  function automatic logic [15:0] ring_mask(input logic [3:0] log_sq);
    ring_mask = 16'((17'd1 << log_sq) - 17'd1);
  endfunction
  // LINE_WQES-bit mask of n WQEs from offset off (off + n <= LINE_WQES)
  function automatic logic [LINE_WQES-1:0] seg_mask(input logic [LW-1:0] off, input logic [NW-1:0] n);
    logic [MW-1:0] m;
    m = (MW'(1) << n) - MW'(1);
    seg_mask = LINE_WQES'(m << off);
  endfunction
  // a prefetch window [s, ...) is reached by a request ending at e (s before e)
  function automatic logic reached(input logic [15:0] s, input logic [15:0] e);
    logic [15:0] d;
    d = e - s;
    reached = d != 16'd0 && d <= 16'h8000;
  endfunction

  // ------------------------------------------------------------------ commands
  wire           cmd_en   = qp_cmd.state == 3'(srnic_abi_pkg::QPS_INIT) || qp_cmd.state == 3'(srnic_abi_pkg::QPS_RTR) ||
                            qp_cmd.state == 3'(srnic_abi_pkg::QPS_RTS);
  wire           kill     = qp_cmd_fire && (qp_cmd.init_idx || !cmd_en);
  wire [QW-1:0]  kill_qpn = qp_cmd.qpn[QW-1:0];

  // ------------------------------------------------------------------ per-QP table
  typedef struct packed {
    logic        en;       // INIT, RTR or RTS: the ring may be read
    logic [57:0] base;     // sq_base / 64
    logic [3:0]  log_sq;
  } qcfg_t;
  localparam int QCFG_W = 63;
  logic          clr_busy;
  logic [QW-1:0] clr_ptr;
  always_ff @(posedge clk) begin
    if (rst) begin
      clr_busy <= 1'b1; clr_ptr <= '0;
    end else if (clr_busy) begin
      clr_ptr <= clr_ptr + 1'b1;
      if (clr_ptr == QW'(NUM_QPS - 1)) clr_busy <= 1'b0;
    end
  end
  qcfg_t cmd_cfg, cfg_rd, cw_data, d1_cfg;
  always_comb begin
    cmd_cfg.en     = cmd_en;
    cmd_cfg.base   = qp_cmd.sq_base[63:6];
    cmd_cfg.log_sq = qp_cmd.log_sq;
  end
  wire cfg_we = clr_busy || qp_cmd_fire;
  sdp_ram #(.WIDTH(QCFG_W), .DEPTH(NUM_QPS)) u_cfg (
    .clk, .wr_en(cfg_we), .wr_addr(clr_busy ? clr_ptr : qp_cmd.qpn[QW-1:0]),
    .wr_data(clr_busy ? '0 : cmd_cfg), .rd_en(db_valid), .rd_addr(db_qpn[QW-1:0]), .rd_data(cfg_rd));
  // producer index: a doorbell writes its own in the cycle it reads the old one (the RAM
  // returns the old contents), so back-to-back doorbells of a QP need no forwarding
  wire pi_init = qp_cmd_fire && qp_cmd.init_idx;
  logic [15:0] pi_rd;
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_QPS)) u_pi (
    .clk, .wr_en(db_valid || pi_init), .wr_addr(db_valid ? db_qpn[QW-1:0] : qp_cmd.qpn[QW-1:0]),
    .wr_data(db_valid ? db_pi : 16'd0), .rd_en(db_valid), .rd_addr(db_qpn[QW-1:0]), .rd_data(pi_rd));
  // the doorbell stage (D1): the table read returns; a command written in the doorbell's
  // cycle is forwarded
  logic          d1_v, cw_v;
  logic [QW-1:0] d1_qpn, cw_qpn;
  logic [15:0]   d1_pi;
  always_ff @(posedge clk) begin
    if (rst) begin
      d1_v <= 1'b0; cw_v <= 1'b0;
    end else begin
      d1_v <= db_valid && !clr_busy;
      cw_v <= qp_cmd_fire && !clr_busy;
    end
    d1_qpn <= db_qpn[QW-1:0]; d1_pi <= db_pi;
    cw_qpn <= qp_cmd.qpn[QW-1:0]; cw_data <= cmd_cfg;
  end
  assign d1_cfg = (cw_v && cw_qpn == d1_qpn) ? cw_data : cfg_rd;

  // ------------------------------------------------------------------ prefetch queue
  typedef struct packed {
    logic [QW-1:0] qpn;
    logic [15:0]   s;      // first WQE (absolute index)
    logic [NW-1:0] n;      // WQEs, 1..LINE_WQES
    logic [57:0]   base;   // sq_base / 64
    logic [3:0]    log_sq;
  } pfw_t;
  pfw_t                 pq [PFQ_DEPTH];
  logic [QW-1:0]        pq_qpn [PFQ_DEPTH];   // copies of pq[].qpn and pq[].s, searched
  logic [15:0]          pq_s [PFQ_DEPTH];
  logic [PFQ_DEPTH-1:0] pq_dead;
  logic [PQW-1:0]       pq_wp, pq_rp;
  logic [PQW:0]         pq_cnt;
  pfw_t                 pq_head;
  assign pq_head = pq[pq_rp];

  // ------------------------------------------------------------------ lookup
  logic           lk_dem;      // a demand request is taken
  logic           lk_pf;       // the prefetch queue's head is looked up
  logic           pf_go;       // ... and done (popped)
  logic           dq_ready;
  logic [CW-1:0]  miss_cnt, pf_cnt;
  wire            pq_head_dead = pq_dead[pq_rp] || (kill && pq_head.qpn == kill_qpn);
  wire            pq_pop_dead  = pq_cnt != '0 && pq_head_dead;
  assign u_ar_ready = 32'(miss_cnt) < MISS_SLOTS && dq_ready;
  assign lk_dem     = u_ar_valid && u_ar_ready;
  assign lk_pf      = !lk_dem && pq_cnt != '0 && !pq_head_dead;

  wire [NW-1:0]  dem_n    = NW'(u_ar_len[3:0]) + NW'(1);
  wire           dem_byp  = u_ar_log_sq < 4'(LW);            // ring below LINE_WQES slots
  wire [57:0]    dem_base = u_ar_addr[63:6] - {42'd0, u_ar_idx & ring_mask(u_ar_log_sq)};
  wire [QW-1:0]  l_qpn    = lk_dem ? u_ar_qpn    : pq_head.qpn;
  wire [15:0]    l_idx    = lk_dem ? u_ar_idx    : pq_head.s;
  wire [NW-1:0]  l_n      = lk_dem ? dem_n       : pq_head.n;
  wire [57:0]    l_base   = lk_dem ? dem_base    : pq_head.base;
  wire [15:0]    l_mask   = ring_mask(lk_dem ? u_ar_log_sq : pq_head.log_sq);

  // the two segments: [off0, off0+n0) of line ln0, [0, n1) of line ln1
  wire [LW-1:0]  off0  = l_idx[LW-1:0];
  wire [LNW-1:0] ln0   = l_idx[15:LW];
  wire [LNW-1:0] ln1   = ln0 + 1'b1;
  wire [NW-1:0]  room0 = NW'(LINE_WQES) - NW'(off0);
  wire [NW-1:0]  n0f   = l_n < room0 ? l_n : room0;
  wire [NW-1:0]  n1f   = l_n - n0f;
  wire [57:0]    a0    = l_base + {42'd0, l_idx & l_mask};
  wire [57:0]    a1    = l_base + {42'd0, {ln1, LW'(0)} & l_mask};
  // a prefetch segment is cut at a 4 KiB boundary (the rest of its line is read on demand)
  wire [6:0]     r4k0  = 7'd64 - {1'b0, a0[5:0]};
  wire [6:0]     r4k1  = 7'd64 - {1'b0, a1[5:0]};
  wire [NW-1:0]  n0    = (!lk_dem && 7'(n0f) > r4k0) ? NW'(r4k0) : n0f;
  wire [NW-1:0]  n1    = (!lk_dem && 7'(n1f) > r4k1) ? NW'(r4k1) : n1f;
  wire [LINE_WQES-1:0] sm0 = seg_mask(off0, n0);
  wire [LINE_WQES-1:0] sm1 = seg_mask(LW'(0), n1);
  wire [SW-1:0]  set0  = SW'(l_qpn) + SW'(ln0);
  wire [SW-1:0]  set1  = SW'(l_qpn) + SW'(ln1);

  // line state (flops)
  logic [LINES-1:0]     lv;        // allocated
  logic [QW-1:0]        ltq [LINES];
  logic [LNW-1:0]       ltn [LINES];
  logic [LINE_WQES-1:0] lm  [LINES];
  logic [SETS*WW-1:0]   rp;        // round-robin victim per set, WW bits each (flat: one reset)

  logic           hit0, hit1;
  logic [LIW-1:0] hl0, hl1;
  // line l of set s, way w: (s << log2(WAYS)) | w
  always_comb begin
    hit0 = 1'b0; hl0 = '0;
    hit1 = 1'b0; hl1 = '0;
    for (int w = 0; w < WAYS; w++) begin
      logic [LIW-1:0] c0, c1;
      c0 = (LIW'(set0) << WSH) | LIW'(w);
      c1 = (LIW'(set1) << WSH) | LIW'(w);
      if (lv[c0] && ltq[c0] == l_qpn && ltn[c0] == ln0) begin hit0 = 1'b1; hl0 = c0; end
      if (lv[c1] && ltq[c1] == l_qpn && ltn[c1] == ln1) begin hit1 = 1'b1; hl1 = c1; end
    end
  end
  wire [WW-1:0]  rp0 = rp[set0 * WW +: WW];
  wire [WW-1:0]  rp1 = rp[set1 * WW +: WW];
  wire [LIW-1:0] vl0 = (LIW'(set0) << WSH) | LIW'(rp0);
  wire [LIW-1:0] vl1 = (LIW'(set1) << WSH) | LIW'(rp1);
  wire need0 = n0 != '0 && !(hit0 && (lm[hl0] & sm0) == sm0);
  wire need1 = n1 != '0 && !(hit1 && (lm[hl1] & sm1) == sm1);
  wire [1:0] pf_nr = 2'(need0) + 2'(need1);
  assign pf_go = lk_pf && (pf_nr == 2'd0 || (32'(pf_cnt) + 32'(pf_nr) <= PF_SLOTS && dq_ready));
  wire cached_lk = (lk_dem && !dem_byp) || pf_go;    // a lookup that may change lines
  wire do0 = cached_lk && need0;
  wire do1 = cached_lk && need1;
  wire al0 = do0 && !hit0;                            // allocations
  wire al1 = do1 && !hit1;
  wire [1:0] ev_new = 2'(al0 && lv[vl0]) + 2'(al1 && lv[vl1]);
  wire [LIW-1:0] dl0 = hit0 ? hl0 : vl0;
  wire [LIW-1:0] dl1 = hit1 ? hl1 : vl1;

  always_ff @(posedge clk) begin
    if (do0) begin
      if (hit0) lm[hl0] <= lm[hl0] | sm0;
      else begin
        ltq[vl0] <= l_qpn; ltn[vl0] <= ln0; lm[vl0] <= sm0;
        rp[set0 * WW +: WW] <= 32'(rp0) == WAYS - 1 ? '0 : rp0 + 1'b1;
      end
    end
    if (do1) begin
      if (hit1) lm[hl1] <= lm[hl1] | sm1;
      else begin
        ltq[vl1] <= l_qpn; ltn[vl1] <= ln1; lm[vl1] <= sm1;
        rp[set1 * WW +: WW] <= 32'(rp1) == WAYS - 1 ? '0 : rp1 + 1'b1;
      end
    end
    if (rst) rp <= '0;
  end
  // valid bits: allocations set them; a killing command clears every line of its QP as the
  // tags stand after this cycle's lookup (a line the lookup gives to the QP included)
  always_ff @(posedge clk) begin
    if (rst) lv <= '0;
    else begin
      for (int i = 0; i < LINES; i++) begin
        if ((al0 && vl0 == LIW'(i)) || (al1 && vl1 == LIW'(i))) begin
          lv[i] <= !(kill && l_qpn == kill_qpn);
        end else if (kill && ltq[i] == kill_qpn) begin
          lv[i] <= 1'b0;
        end
      end
    end
  end

  // ------------------------------------------------------------------ descriptors
  typedef struct packed {
    logic           host;  // beats come from the host (arrival FIFO), else from the data RAM
    logic           fwd;   // beats go to the requester
    logic           wr;    // beats are written into the line
    logic [LIW-1:0] line;
    logic [LW-1:0]  off;
    logic [NW-1:0]  n;     // 0: no segment
  } seg_t;
  typedef struct packed {
    seg_t s0;
    seg_t s1;
  } desc_t;
  localparam int DESC_W = 2 * (3 + LIW + LW + NW);
  desc_t dq_in, dq_head;
  seg_t  sg0, sg1;
  always_comb begin
    sg0.host = need0;  sg0.fwd = lk_dem; sg0.wr = need0;
    sg0.line = dl0; sg0.off = off0; sg0.n = n0;
    sg1.host = need1;  sg1.fwd = lk_dem; sg1.wr = need1;
    sg1.line = dl1; sg1.off = '0;   sg1.n = n1;
    if (lk_dem && dem_byp) begin
      sg0.host = 1'b1; sg0.wr = 1'b0; sg0.n = dem_n;
      sg1.n = '0;
    end
    if (!lk_dem) begin                 // prefetch: only the segments read, the first first
      if (!need0) sg0 = sg1;
      if (!need0 || !need1) sg1.n = '0;
      if (!need0 && !need1) sg0.n = '0;
    end
    dq_in.s0 = sg0;
    dq_in.s1 = sg1;
  end
  wire dq_push = lk_dem || (pf_go && pf_nr != 2'd0);
  logic dq_valid, dq_pop;
  sync_fifo #(.WIDTH(DESC_W), .DEPTH(DQD)) u_dq (
    .clk, .rst, .s_data(dq_in), .s_valid(dq_push), .s_ready(dq_ready),
    .m_data(dq_head), .m_valid(dq_valid), .m_ready(dq_pop), .count());

  // ------------------------------------------------------------------ host reads
  // Reads looked up and not yet issued, in lookup order (flops: a killing command marks its
  // QP's prefetch reads dead). One demand read per request (both segments in one burst when
  // both miss), one per prefetch segment.
  logic [57:0]    rq_addr [RQD];
  logic [7:0]     rq_len  [RQD];
  logic [QW-1:0]  rq_qpn  [RQD];
  logic [RQD-1:0] rq_pf, rq_dead;
  logic [RQW-1:0] rq_wp, rq_rp;
  logic [RQW:0]   rq_cnt;
  logic           r0_v, r1_v;
  logic [57:0]    r0_addr, r1_addr;
  logic [NW-1:0]  r0_n, r1_n;
  always_comb begin
    r0_v = 1'b0; r1_v = 1'b0;
    r0_addr = a0; r0_n = n0;
    r1_addr = a1; r1_n = n1;
    if (lk_dem) begin
      r0_v = dem_byp || need0 || need1;
      if (dem_byp) begin r0_addr = u_ar_addr[63:6]; r0_n = dem_n; end
      else if (need0 && need1) r0_n = dem_n;
      else if (!need0) begin r0_addr = a1; r0_n = n1; end
    end else if (pf_go) begin
      r0_v = need0 || need1;
      r1_v = need0 && need1;
      if (!need0) begin r0_addr = a1; r0_n = n1; end
    end
  end
  wire r_dead = kill && !lk_dem && l_qpn == kill_qpn;   // looked up as its QP is killed
  wire miss_res = r0_v && lk_dem;

  logic           aq_valid, aq_pop;
  logic [9:0]     aq_head;    // {pf, dummy, len}
  logic [AFW:0]   af_count;
  logic [AFW:0]   resv;       // beats of issued reads not arrived
  wire  [8:0]     rq_beats = 9'(rq_len[rq_rp]) + 9'd1;
  wire            room_ok  = 32'(af_count) + 32'(resv) + 32'(rq_beats) <= AFD;
  wire            aq_dummy = aq_valid && aq_head[8];
  assign d_ar_valid = rq_cnt != '0 && !rq_dead[rq_rp] && !aq_dummy && room_ok;
  assign d_ar_addr  = {rq_addr[rq_rp], 6'd0};
  assign d_ar_len   = rq_len[rq_rp];
  // a dead read is "issued" to the arrival side once nothing is in flight: its beats are made
  // up there, in order, and written nowhere
  wire dm_go  = rq_cnt != '0 && rq_dead[rq_rp] && !aq_valid && room_ok;
  wire rq_pop = (d_ar_valid && d_ar_ready) || dm_go;

  always_ff @(posedge clk) begin
    // a kill marks the QP's prefetch reads dead, except one offered on d_ar this cycle
    for (int i = 0; i < RQD; i++)
      if (kill && rq_pf[i] && rq_qpn[i] == kill_qpn && !(d_ar_valid && RQW'(i) == rq_rp)) rq_dead[i] <= 1'b1;
    if (r0_v) begin
      rq_addr[rq_wp] <= r0_addr; rq_len[rq_wp] <= 8'(r0_n) - 8'd1; rq_qpn[rq_wp] <= l_qpn;
      rq_pf[rq_wp] <= !lk_dem; rq_dead[rq_wp] <= r_dead;
    end
    if (r1_v) begin
      rq_addr[rq_wp + 1'b1] <= r1_addr; rq_len[rq_wp + 1'b1] <= 8'(r1_n) - 8'd1; rq_qpn[rq_wp + 1'b1] <= l_qpn;
      rq_pf[rq_wp + 1'b1] <= 1'b1; rq_dead[rq_wp + 1'b1] <= r_dead;
    end
    if (rst) begin
      rq_wp <= '0; rq_rp <= '0; rq_cnt <= '0;
    end else begin
      rq_wp  <= rq_wp + RQW'(r0_v) + RQW'(r1_v);
      rq_rp  <= rq_rp + RQW'(rq_pop);
      rq_cnt <= rq_cnt + (RQW+1)'(r0_v) + (RQW+1)'(r1_v) - (RQW+1)'(rq_pop);
    end
  end

  // issued reads, for the arrival side: {prefetch, dummy, len}
  logic aq_ready;
  sync_fifo #(.WIDTH(10), .DEPTH(RQD)) u_aq (
    .clk, .rst, .s_data({rq_pf[rq_rp], dm_go, rq_len[rq_rp]}), .s_valid(rq_pop), .s_ready(aq_ready),
    .m_data(aq_head), .m_valid(aq_valid), .m_ready(aq_pop), .count());

  // arrivals: beats of the head read (made up for a dead one)
  logic [7:0] ac;
  wire        arr     = d_r_valid || aq_dummy;
  wire        arr_end = arr && ac == aq_head[7:0];
  assign aq_pop = arr_end;
  always_ff @(posedge clk) begin
    if (rst) begin
      ac <= '0; resv <= '0;
    end else begin
      if (arr) ac <= arr_end ? 8'd0 : ac + 8'd1;
      resv <= resv + (rq_pop ? (AFW+1)'(rq_beats) : '0) - (AFW+1)'(arr);
    end
  end
  wire miss_rel = arr_end && !aq_head[9];
  wire pf_rel   = arr_end && aq_head[9];
  always_ff @(posedge clk) begin
    if (rst) begin
      miss_cnt <= '0; pf_cnt <= '0;
    end else begin
      miss_cnt <= miss_cnt + CW'(miss_res) - CW'(miss_rel);
      pf_cnt   <= pf_cnt + (pf_go ? CW'(pf_nr) : '0) - CW'(pf_rel);
    end
  end

  logic         af_valid, af_pop, af_ready;
  logic [512:0] af_head;      // {made up, data}
  sync_fifo #(.WIDTH(513), .DEPTH(AFD)) u_af (
    .clk, .rst, .s_data({aq_dummy, d_r_data}), .s_valid(arr), .s_ready(af_ready),
    .m_data(af_head), .m_valid(af_valid), .m_ready(af_pop), .count(af_count));

  // ------------------------------------------------------------------ back end
  logic          be_seg;      // working on s1
  logic [NW-1:0] be_beat;
  seg_t          cur;
  assign cur = be_seg ? dq_head.s1 : dq_head.s0;
  wire           be_go = dq_valid && (!cur.host || af_valid);
  wire           be_last = be_beat == cur.n - NW'(1);
  wire [RAW-1:0] be_addr = {cur.line, cur.off + LW'(be_beat)};
  assign dq_pop = be_go && be_last && (be_seg || dq_head.s1.n == '0);
  assign af_pop = be_go && cur.host;
  always_ff @(posedge clk) begin
    if (rst) begin
      be_seg <= 1'b0; be_beat <= '0;
    end else if (be_go) begin
      if (!be_last) be_beat <= be_beat + 1'b1;
      else begin
        be_beat <= '0;
        be_seg  <= !be_seg && dq_head.s1.n != '0;
      end
    end
  end
  logic [511:0] ram_q;
  sdp_ram #(.WIDTH(512), .DEPTH(LINES * LINE_WQES)) u_data (
    .clk, .wr_en(be_go && cur.host && cur.wr && !af_head[512]), .wr_addr(be_addr), .wr_data(af_head[511:0]),
    .rd_en(be_go && !cur.host), .rd_addr(be_addr), .rd_data(ram_q));
  logic         ob_ram;
  logic [511:0] ob_data;
  always_ff @(posedge clk) begin
    if (rst) u_r_valid <= 1'b0;
    else     u_r_valid <= be_go && cur.fwd;
    ob_ram <= !cur.host;
    if (be_go && cur.host) ob_data <= af_head[511:0];
  end
  assign u_r_data = ob_ram ? ram_q : ob_data;

  // ------------------------------------------------------------------ prefetch windows
  // demand requests taken this cycle and in the last (a doorbell's window is formed a cycle
  // after the doorbell): windows they reach are dropped
  logic          dk_v;
  logic [QW-1:0] dk_qpn;
  logic [15:0]   dk_end;
  wire  [15:0]   dem_end = u_ar_idx + 16'(dem_n);
  // read cursor hint: the index after the QP's last demand request (the WQE its next turn
  // reads); a doorbell prefetches only when the reads had caught up to within a line of the
  // old producer index (the WQEs it posts are then the next ones read; a QP with a deeper
  // backlog reads other WQEs first, and prefetching these would only evict lines in use).
  // A hint: a write lost to a command in the same cycle only changes a prefetch decision.
  logic [15:0] ce_rd;
  sdp_ram #(.WIDTH(16), .DEPTH(NUM_QPS)) u_ce (
    .clk, .wr_en(pi_init || lk_dem), .wr_addr(pi_init ? qp_cmd.qpn[QW-1:0] : u_ar_qpn),
    .wr_data(pi_init ? 16'd0 : dem_end), .rd_en(db_valid), .rd_addr(db_qpn[QW-1:0]), .rd_data(ce_rd));
  always_ff @(posedge clk) begin
    dk_v <= !rst && lk_dem; dk_qpn <= u_ar_qpn; dk_end <= dem_end;
  end
  // doorbell: the newly posted WQEs
  pfw_t pa, pb;
  wire [15:0] db_avail = d1_pi - pi_rd;
  wire [15:0] db_behind = pi_rd - ce_rd;   // posted before this doorbell and not yet read
  wire        pa_v = d1_v && d1_cfg.en && d1_cfg.log_sq >= 4'(LW) && db_avail != 16'd0 &&
                     db_behind < 16'(LINE_WQES) &&
                     {1'b0, db_avail} <= (17'd1 << d1_cfg.log_sq) &&
                     !(kill && kill_qpn == d1_qpn) &&
                     !(lk_dem && u_ar_qpn == d1_qpn && reached(pi_rd, dem_end)) &&
                     !(dk_v && dk_qpn == d1_qpn && reached(pi_rd, dk_end));
  always_comb begin
    pa.qpn = d1_qpn; pa.s = pi_rd;
    pa.n = db_avail < 16'(LINE_WQES) ? NW'(db_avail) : NW'(LINE_WQES);
    pa.base = d1_cfg.base; pa.log_sq = d1_cfg.log_sq;
  end
  // demand request: the QP's next posted WQEs
  wire [15:0] nl_avail = u_ar_pi - dem_end;
  wire        pb_v = lk_dem && !dem_byp && nl_avail != 16'd0 && {1'b0, nl_avail} <= (17'd1 << u_ar_log_sq) &&
                     !(kill && kill_qpn == u_ar_qpn);
  always_comb begin
    pb.qpn = u_ar_qpn; pb.s = dem_end;
    pb.n = nl_avail < 16'(LINE_WQES) ? NW'(nl_avail) : NW'(LINE_WQES);
    pb.base = dem_base; pb.log_sq = u_ar_log_sq;
  end
  wire [PQW:0] pq_free = (PQW+1)'(PFQ_DEPTH) - pq_cnt;
  wire pa_push = pa_v && pq_free != '0;
  wire pb_push = pb_v && pq_free > (PQW+1)'(pa_push);
  wire pq_pop  = pq_pop_dead || pf_go;
  wire [1:0] drop_new = 2'(pa_v && !pa_push) + 2'(pb_v && !pb_push);
  always_ff @(posedge clk) begin
    for (int i = 0; i < PFQ_DEPTH; i++)
      if ((kill && pq_qpn[i] == kill_qpn) || (lk_dem && pq_qpn[i] == u_ar_qpn && reached(pq_s[i], dem_end)))
        pq_dead[i] <= 1'b1;
    if (pa_push) begin
      pq[pq_wp] <= pa; pq_qpn[pq_wp] <= pa.qpn; pq_s[pq_wp] <= pa.s; pq_dead[pq_wp] <= 1'b0;
    end
    if (pb_push) begin
      pq[pq_wp + PQW'(pa_push)] <= pb; pq_qpn[pq_wp + PQW'(pa_push)] <= pb.qpn;
      pq_s[pq_wp + PQW'(pa_push)] <= pb.s; pq_dead[pq_wp + PQW'(pa_push)] <= 1'b0;
    end
    if (rst) begin
      pq_wp <= '0; pq_rp <= '0; pq_cnt <= '0;
    end else begin
      pq_wp  <= pq_wp + PQW'(pa_push) + PQW'(pb_push);
      pq_rp  <= pq_rp + PQW'(pq_pop);
      pq_cnt <= pq_cnt + (PQW+1)'(pa_push) + (PQW+1)'(pb_push) - (PQW+1)'(pq_pop);
    end
  end

  // ------------------------------------------------------------------ counters
  logic [7:0] ev_pend, dr_pend;
  wire  [8:0] ev_tot = 9'(ev_pend) + 9'(ev_new);
  wire  [8:0] dr_tot = 9'(dr_pend) + 9'(drop_new);
  always_ff @(posedge clk) begin
    if (rst) begin
      st_hit <= 1'b0; st_miss <= 1'b0; st_pf <= 1'b0; st_evict <= 1'b0; st_pf_drop <= 1'b0;
      ev_pend <= '0; dr_pend <= '0;
    end else begin
      st_hit     <= lk_dem && !dem_byp && !need0 && !need1;
      st_miss    <= lk_dem && (dem_byp || need0 || need1);
      st_pf      <= d_ar_valid && d_ar_ready && rq_pf[rq_rp];
      st_evict   <= ev_tot != '0;
      st_pf_drop <= dr_tot != '0;
      ev_pend    <= ev_tot == '0 ? 8'd0 : ev_tot > 9'd255 ? 8'd255 : 8'(ev_tot - 9'd1);
      dr_pend    <= dr_tot == '0 ? 8'd0 : dr_tot > 9'd255 ? 8'd255 : 8'(dr_tot - 9'd1);
    end
  end

  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{u_ar_addr[5:0], u_ar_len[7:4], db_qpn, qp_cmd, af_ready, aq_ready};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): beats delivered = beats requested, slot limits, the
  // arrival FIFO's reservation, AXI rules downstream, one way per tag; and the requester's
  // and integrator's side of the contract (requests within 8 WQEs, the ring and 4 KiB;
  // init_idx commands apart from doorbells; no command while the table clears).
  logic [31:0] owed;    // beats requested and not delivered
  always_ff @(posedge clk) begin
    if (rst) owed <= '0;
    else owed <= owed + (lk_dem ? 32'(dem_n) : 32'd0) - 32'(u_r_valid);
  end
  a_beat_owed: assert property (@(posedge clk) disable iff (rst)
    u_r_valid |-> owed != 32'd0)
    else $error("srnic_wqe_cache: read data beat beyond the beats requested");
  a_beats_all_delivered: assert property (@(posedge clk) disable iff (rst)
    !dq_valid && !u_r_valid |-> owed == 32'd0)
    else $error("srnic_wqe_cache: idle with %0d requested beats not delivered", owed);
  a_miss_slots: assert property (@(posedge clk) disable iff (rst)
    32'(miss_cnt) <= MISS_SLOTS)
    else $error("srnic_wqe_cache: %0d demand reads in flight (MISS_SLOTS %0d)", miss_cnt, MISS_SLOTS);
  a_pf_slots: assert property (@(posedge clk) disable iff (rst)
    32'(pf_cnt) <= PF_SLOTS)
    else $error("srnic_wqe_cache: %0d prefetch reads in flight (PF_SLOTS %0d)", pf_cnt, PF_SLOTS);
  a_rq_bound: assert property (@(posedge clk) disable iff (rst)
    32'(rq_cnt) <= 32'(miss_cnt) + 32'(pf_cnt) && 32'(rq_cnt) <= RQD)
    else $error("srnic_wqe_cache: %0d reads waiting for %0d slots", rq_cnt, 32'(miss_cnt) + 32'(pf_cnt));
  a_af_no_overflow: assert property (@(posedge clk) disable iff (rst)
    arr |-> af_ready)
    else $error("srnic_wqe_cache: arrival FIFO overflow");
  a_af_reserved: assert property (@(posedge clk) disable iff (rst)
    32'(af_count) + 32'(resv) <= AFD)
    else $error("srnic_wqe_cache: arrival FIFO holds and awaits more beats than it has room for");
  a_aq_room: assert property (@(posedge clk) disable iff (rst)
    rq_pop |-> aq_ready)
    else $error("srnic_wqe_cache: issued-read queue overflow");
  a_r_expected: assert property (@(posedge clk) disable iff (rst)
    d_r_valid |-> aq_valid && !aq_head[8] && resv != '0)
    else $error("srnic_wqe_cache: read data arrived that no issued read asked for");
  a_dummy_no_fwd: assert property (@(posedge clk) disable iff (rst)
    be_go && cur.host && af_head[512] |-> !cur.fwd)
    else $error("srnic_wqe_cache: a cancelled read's empty beat forwarded to the requester");
  a_d_ar_hold: assert property (@(posedge clk) disable iff (rst)
    d_ar_valid && !d_ar_ready |=> d_ar_valid && $stable(d_ar_addr) && $stable(d_ar_len))
    else $error("srnic_wqe_cache: host read withdrawn or changed before it was taken");
  a_d_ar_4k: assert property (@(posedge clk) disable iff (rst)
    d_ar_valid |-> {7'd0, d_ar_addr[11:6]} + {5'd0, d_ar_len} < 13'd64 && 32'(d_ar_len) < LINE_WQES)
    else $error("srnic_wqe_cache: host read across 4 KiB or longer than a line");
  a_pfq_bound: assert property (@(posedge clk) disable iff (rst)
    32'(pq_cnt) <= PFQ_DEPTH)
    else $error("srnic_wqe_cache: prefetch queue overflow");
  a_counter_room: assert property (@(posedge clk) disable iff (rst)
    ev_tot < 9'd255)
    else $error("srnic_wqe_cache: eviction counter saturated");
  logic tag_dup;
  always_comb begin
    tag_dup = 1'b0;
    for (int s = 0; s < SETS; s++)
      for (int a = 0; a < WAYS; a++)
        for (int b = a + 1; b < WAYS; b++)
          if (lv[s * WAYS + a] && lv[s * WAYS + b] && ltq[s * WAYS + a] == ltq[s * WAYS + b] &&
              ltn[s * WAYS + a] == ltn[s * WAYS + b]) tag_dup = 1'b1;
  end
  a_one_way_per_tag: assert property (@(posedge clk) disable iff (rst)
    !tag_dup)
    else $error("srnic_wqe_cache: a line is held in two ways of its set");
  // the requester's and the integrator's side
  a_req_shape: assert property (@(posedge clk) disable iff (rst)
    u_ar_valid |-> u_ar_len < 8'd8 && u_ar_addr[5:0] == 6'd0 &&
      {7'd0, u_ar_addr[11:6]} + {5'd0, u_ar_len} < 13'd64 &&
      {1'b0, u_ar_idx & ring_mask(u_ar_log_sq)} + 17'(dem_n) <= (17'd1 << u_ar_log_sq))
    else $error("srnic_wqe_cache: request of %0d WQEs at index %0d beyond 8 WQEs, the ring end or 4 KiB",
                u_ar_len + 1, u_ar_idx);
  a_req_hold: assert property (@(posedge clk) disable iff (rst)
    u_ar_valid && !u_ar_ready |=> u_ar_valid && $stable(u_ar_addr) && $stable(u_ar_len) && $stable(u_ar_idx) &&
      $stable(u_ar_qpn))
    else $error("srnic_wqe_cache: request withdrawn or changed before it was taken");
  a_init_apart_from_db: assert property (@(posedge clk) disable iff (rst)
    qp_cmd_fire && qp_cmd.init_idx |-> !db_valid)
    else $error("srnic_wqe_cache: init_idx command in the cycle of a doorbell");
  a_no_cmd_while_clearing: assert property (@(posedge clk) disable iff (rst)
    qp_cmd_fire |-> !clr_busy)
    else $error("srnic_wqe_cache: command while the per-QP table clears after reset");
`endif
endmodule
`default_nettype wire
