// Formal harness for the lookup of rtl/transport/srnic_rd_ctx.sv at ENTRIES=4, QPN_BITS=3
// (k-induction).
//
// The table is read through probes (p_*) at the cycle the lookup searches it (the cycle
// after lk_valid); the answer comes one cycle later (lk_rsp). For every answer:
//   - lk_rsp comes exactly 2 cycles after lk_valid (no reset in between);
//   - lk_hit  ==  some entry was valid, had the looked-up QPN and a PSN range containing the
//     PSN, where "contains" is the circular (24-bit wrap) interval: (psn - first) mod 2^24
//     <= (last - first) mod 2^24;
//   - on a hit, entry lk_idx was such an entry, and lk_pa, lk_first, lk_last, lk_mtu and
//     lk_last_len are that entry's fields.
// The fence query ports: qa_busy (qb_busy) == some entry is valid and has QPN qa_qpn (qb_qpn),
// for any QPNs, every cycle. The implied-NAK query: bq_hit == some valid entry of QPN bq_qpn
// has a last PSN strictly before bq_psn (circular: (bq_psn - last) mod 2^24 in [1, 2^23));
// bq_any == some valid entry has QPN bq_qpn.
// The free count: n_free == the number of entries that were not valid one cycle earlier (0 in
// the cycle after a reset cycle), every cycle.
// Environment assumption: an inserted READ spans fewer than 2^23 PSNs ((last - first) mod
// 2^24 < 2^23), as any PSN window must; the table keeps that for its valid entries (proved).
`default_nettype none
module f_rd_ctx (
  input wire logic        clk,
  input wire logic        rst,
  input wire logic        ins_valid,
  input wire logic [2:0]  ins_qpn,
  input wire logic [23:0] ins_first,
  input wire logic [23:0] ins_last,
  input wire logic [63:0] ins_pa,
  input wire logic [2:0]  ins_mtu,
  input wire logic [12:0] ins_last_len,
  input wire logic        lk_valid,
  input wire logic [2:0]  lk_qpn,
  input wire logic [23:0] lk_psn,
  input wire logic        free_valid,
  input wire logic [1:0]  free_idx,
  input wire logic [2:0]  free_qpn,
  input wire logic        rw_flush_valid,
  input wire logic [2:0]  rw_flush_qpn,
  input wire logic [2:0]  bq_qpn,
  input wire logic [23:0] bq_psn,
  input wire logic        flush_valid,
  input wire logic [2:0]  flush_qpn,
  input wire logic        qerr_flush_valid,
  input wire logic [2:0]  qerr_flush_qpn,
  input wire logic [2:0]  qa_qpn,
  input wire logic [2:0]  qb_qpn
);
  localparam int E = 4;
  localparam int QB = 3;

  logic        ins_ready, lk_rsp, lk_hit;
  logic [1:0]  lk_idx;
  logic [63:0] lk_pa;
  logic [23:0] lk_first, lk_last;
  logic [2:0]  lk_mtu;
  logic [12:0] lk_last_len;
  logic        qa_busy, qb_busy, bq_hit, bq_any;
  logic [2:0]  n_free;
  srnic_rd_ctx #(.ENTRIES(E), .QPN_BITS(QB)) dut (
    .clk, .rst,
    .ins_valid, .ins_ready, .ins_qpn, .ins_first, .ins_last, .ins_pa, .ins_mtu, .ins_last_len,
    .lk_valid, .lk_qpn, .lk_psn, .lk_rsp, .lk_hit, .lk_idx, .lk_pa, .lk_first, .lk_last,
    .lk_mtu, .lk_last_len,
    .free_valid, .free_idx, .free_qpn, .rw_flush_valid, .rw_flush_qpn,
    .flush_valid, .flush_qpn, .qerr_flush_valid, .qerr_flush_qpn,
    .qa_qpn, .qa_busy, .qb_qpn, .qb_busy, .bq_qpn, .bq_psn, .bq_hit, .bq_any, .n_free);

  // probes: the table
  logic [E-1:0]    p_valid;
  logic [E*QB-1:0] p_qpn;
  logic [E*24-1:0] p_first, p_last;
  logic [E*64-1:0] p_pa;
  logic [E*3-1:0]  p_mtu;
  logic [E*13-1:0] p_llen;
  //@ connect p_valid dut.valid
  //@ connect-array p_qpn dut.qpn_m 4 3
  //@ connect-array p_first dut.first_m 4 24
  //@ connect-array p_last dut.last_m 4 24
  //@ connect-array p_pa dut.pa_m 4 64
  //@ connect-array p_mtu dut.mtu_m 4 3
  //@ connect-array p_llen dut.llen_m 4 13

`ifdef FORMAL
  logic f_init = 1'b1;
  always_ff @(posedge clk) f_init <= 1'b0;
  always_comb if (f_init) assume(rst);

  function automatic logic in_range(input logic [23:0] psn, input logic [23:0] first,
                                    input logic [23:0] last);
    logic [23:0] d, span;
    d = psn - first;
    span = last - first;
    in_range = d <= span;
  endfunction

  always_comb if (ins_valid) assume(24'(ins_last - ins_first) < 24'h800000);

  function automatic logic [E-1:0] q_match(input logic [QB-1:0] q);
    for (int i = 0; i < E; i++) q_match[i] = p_valid[i] && p_qpn[i * QB +: QB] == q;
  endfunction

  // entries of QPN bq_qpn whose last PSN is strictly before bq_psn (stated here as a distance)
  logic [E-1:0] b_match;
  logic [23:0]  b_d;
  always_comb
    for (int i = 0; i < E; i++) begin
      b_d = bq_psn - p_last[i * 24 +: 24];
      b_match[i] = p_valid[i] && p_qpn[i * QB +: QB] == bq_qpn && b_d != 24'd0 && !b_d[23];
    end

  // entries not valid this cycle
  logic [2:0] n_invalid;
  always_comb begin
    n_invalid = 3'd0;
    for (int i = 0; i < E; i++) n_invalid = n_invalid + 3'(!p_valid[i]);
  end
  always_ff @(posedge clk)
    if (!f_init) assert(n_free == ($past(rst) ? 3'd0 : $past(n_invalid)));

  // the search happens in the cycle after lk_valid
  logic        s_lk;
  logic [QB-1:0] s_qpn;
  logic [23:0] s_psn;
  logic [E-1:0] match;
  always_comb
    for (int i = 0; i < E; i++)
      match[i] = p_valid[i] && p_qpn[i * QB +: QB] == s_qpn &&
                 in_range(s_psn, p_first[i * 24 +: 24], p_last[i * 24 +: 24]);

  logic        r_rsp;
  logic [E-1:0] r_match;
  logic [E*64-1:0] r_pa;
  logic [E*24-1:0] r_first, r_last;
  logic [E*3-1:0]  r_mtu;
  logic [E*13-1:0] r_llen;
  always_ff @(posedge clk) begin
    s_lk  <= !rst && lk_valid;
    s_qpn <= lk_qpn;
    s_psn <= lk_psn;
    r_rsp <= !rst && s_lk;
    if (s_lk) begin
      r_match <= match;
      r_pa <= p_pa; r_first <= p_first; r_last <= p_last; r_mtu <= p_mtu; r_llen <= p_llen;
    end
  end

  always_comb begin
    if (!f_init) begin
      for (int i = 0; i < E; i++)
        if (p_valid[i]) assert(24'(p_last[i * 24 +: 24] - p_first[i * 24 +: 24]) < 24'h800000);
      assert(lk_rsp == r_rsp);
      if (lk_rsp) begin
        assert(lk_hit == (r_match != '0));   // hit iff some valid entry matches
        for (int i = 0; i < E; i++)
          if (lk_hit && lk_idx == 2'(i)) begin
            assert(r_match[i]);              // valid, same QPN, PSN inside [first, last]
            assert(lk_pa == r_pa[i * 64 +: 64]);
            assert(lk_first == r_first[i * 24 +: 24]);
            assert(lk_last == r_last[i * 24 +: 24]);
            assert(lk_mtu == r_mtu[i * 3 +: 3]);
            assert(lk_last_len == r_llen[i * 13 +: 13]);
          end
      end
      // fence queries: busy iff some valid entry has that QPN
      assert(qa_busy == (q_match(qa_qpn) != '0));
      assert(qb_busy == (q_match(qb_qpn) != '0));
      // implied-NAK query
      assert(bq_any == (q_match(bq_qpn) != '0));
      assert(bq_hit == (b_match != '0));
      cover(bq_hit && b_match != q_match(bq_qpn));         // one READ before, one not
      cover(bq_hit && bq_psn < p_last[23:0] && p_valid[0] && p_qpn[2:0] == bq_qpn);  // across the wrap
      cover(qa_busy && qb_busy && qa_qpn != qb_qpn);
      cover(!qa_busy && p_valid == '1);
      cover(lk_rsp && lk_hit && lk_first > lk_last);       // a hit on a range that wraps
      cover(lk_rsp && !lk_hit && r_match == '0 && p_valid != '0);
      cover(n_free == 3'd0 && p_valid != '1);             // a full table, an entry freed since
      cover(n_free == 3'd4 && p_valid != '0);             // an empty table, an insert since
    end
  end
`endif
endmodule
`default_nettype wire
