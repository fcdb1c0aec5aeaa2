// Formal harness for the MR check: rtl/qpc/srnic_mr_table.sv with its rtl/qpc/srnic_mr_port.sv
// lookup pipelines and rtl/lib/sdp_ram.sv storage, at NUM_MRS=4, NPORTS=2 (k-induction).
//
// A shadow table sh follows the writes (wr_valid/wr_index/wr_entry); it is the
// "registered region" of each index. For every request on every port, the entry at index
// key[31:8] as it was when the request was made (a write in the same cycle is not seen,
// like the RAM) travels with the request, and when the answer comes (2 cycles later):
//   - rsp_valid comes exactly 2 cycles after req_valid (no reset in between);
//   - if rsp_ok and len != 0: key[31:8] < NUM_MRS, the entry is valid, its full 32-bit key
//     equals the request key, its PD equals the request PD, the requested rights are a
//     subset of its rights, va >= iova and va + len <= iova + length computed without
//     64-bit wrap (and va + len <= 2^64: the access itself does not wrap); the PA is
//     pa + (va - iova) modulo 2^64;
//   - conversely rsp_ok is set whenever all of these hold, and for every zero-length access
//     (documented behaviour: zero-length accesses pass without a key check).
// Environment assumption (driver contract, sw/lib/device.cpp reg_mr_phys rejects MRs whose
// range wraps): every valid entry written, and every valid entry present at start, has
// iova + length < 2^64 and pa + length < 2^64.
// Valid bits: an entry grants nothing after a reset until it is written again (the port
// copies keep their valid bits in flops cleared by reset; the RAM keeps its contents): the
// shadow's valid bits sv are cleared by rst and follow the writes' valid field.
// Inductive strengthening: each port's RAM copy equals the shadow table, and each port's valid
// flops equal sv.
`default_nettype none
module f_mr_table (
  input wire logic                 clk,
  input wire logic                 rst,
  input wire logic                 wr_valid,
  input wire logic [1:0]           wr_index,
  input var  srnic_pkg::mr_entry_t wr_entry,
  input wire logic [1:0]           req_valid,
  input wire logic [63:0]          req_key,
  input wire logic [63:0]          req_pd,
  input wire logic [7:0]           req_access,
  input wire logic [127:0]         req_va,
  input wire logic [63:0]          req_len
);
  localparam int N  = 4;     // NUM_MRS
  localparam int NP = 2;     // NPORTS
  localparam int EW = srnic_pkg::MR_ENTRY_W;

  logic [NP-1:0]    rsp_valid, rsp_ok;
  logic [NP*64-1:0] rsp_pa;
  srnic_mr_table #(.NUM_MRS(N), .NPORTS(NP)) dut (
    .clk, .rst, .wr_valid, .wr_index, .wr_entry,
    .req_valid, .req_key, .req_pd, .req_access, .req_va, .req_len,
    .rsp_valid, .rsp_ok, .rsp_pa);

  // probes: the RAM copy of each port
  logic [N*EW-1:0] p_mem0, p_mem1;
  //@ connect-array p_mem0 dut.g_port[0].u_port.u_ram.mem 4 261
  //@ connect-array p_mem1 dut.g_port[1].u_port.u_ram.mem 4 261
  logic [N-1:0] p_vld0, p_vld1;
  //@ connect p_vld0 dut.g_port[0].u_port.vld
  //@ connect p_vld1 dut.g_port[1].u_port.vld

`ifdef FORMAL
  logic f_init = 1'b1;
  always_ff @(posedge clk) f_init <= 1'b0;
  always_comb if (f_init) assume(rst);

  function automatic logic no_wrap(input logic [EW-1:0] e);
    no_wrap = !e[O_VALID] || (({1'b0, e[O_IOVA +: 64]} + {1'b0, e[O_LEN +: 64]}) < {1'b1, 64'd0} &&
                              ({1'b0, e[O_PA +: 64]}   + {1'b0, e[O_LEN +: 64]}) < {1'b1, 64'd0});
  endfunction

  // field offsets of srnic_pkg::mr_entry_t in a flat vector (checked against the struct
  // below; struct members of generate-scope variables are not resolved by Yosys 0.23)
  localparam int O_VALID = 0, O_ACC = 1, O_PD = 5, O_KEY = 37, O_PA = 69, O_LEN = 133, O_IOVA = 197;
  wire [EW-1:0] wr_flat = wr_entry;
  always_comb begin
    assert(wr_flat[O_VALID] == wr_entry.valid && wr_flat[O_ACC +: 4] == wr_entry.access &&
           wr_flat[O_PD +: 32] == wr_entry.pd && wr_flat[O_KEY +: 32] == wr_entry.key &&
           wr_flat[O_PA +: 64] == wr_entry.pa && wr_flat[O_LEN +: 64] == wr_entry.length &&
           wr_flat[O_IOVA +: 64] == wr_entry.iova);
  end

  // shadow table
  logic [N*EW-1:0] sh;
  logic [N-1:0]    sv;
  always_ff @(posedge clk)
    for (int i = 0; i < N; i++) if (wr_valid && wr_index == 2'(i)) sh[i * EW +: EW] <= wr_entry;
  always_ff @(posedge clk)
    if (rst) sv <= '0;
    else for (int i = 0; i < N; i++) if (wr_valid && wr_index == 2'(i)) sv[i] <= wr_entry.valid;

  always_comb begin
    if (wr_valid) assume(no_wrap(wr_flat));
    if (f_init)
      for (int i = 0; i < N; i++) begin
        assume(no_wrap(sh[i * EW +: EW]));
        assume(p_mem0[i * EW +: EW] == sh[i * EW +: EW]);
        assume(p_mem1[i * EW +: EW] == sh[i * EW +: EW]);
      end
    else begin
      for (int i = 0; i < N; i++) begin
        assert(no_wrap(sh[i * EW +: EW]));
        assert(p_mem0[i * EW +: EW] == sh[i * EW +: EW]);
        assert(p_mem1[i * EW +: EW] == sh[i * EW +: EW]);
      end
      assert(p_vld0 == sv && p_vld1 == sv);
    end
  end

  for (genvar p = 0; p < NP; p++) begin : g_chk
    wire [31:0] key = req_key[p * 32 +: 32];
    // entry selected by the key now (before any write of this cycle)
    logic [EW-1:0] sel;
    always_comb begin
      sel = '0;
      for (int i = 0; i < N; i++) if (key[9:8] == 2'(i)) begin
        sel = sh[i * EW +: EW];
        sel[O_VALID] = sh[i * EW + O_VALID] && sv[i];   // valid only if written since the reset
      end
    end
    logic v1, v2, idx1, idx2;
    logic [31:0] key1, key2, pd1, pd2, len1, len2;
    logic [3:0]  acc1, acc2;
    logic [63:0] va1, va2;
    logic [EW-1:0] ent1, ent2;
    wire [63:0] m_iova = ent2[O_IOVA +: 64], m_len = ent2[O_LEN +: 64], m_pa = ent2[O_PA +: 64];
    wire [31:0] m_key = ent2[O_KEY +: 32], m_pd = ent2[O_PD +: 32];
    wire [3:0]  m_acc = ent2[O_ACC +: 4];
    wire        m_valid = ent2[O_VALID];
    always_ff @(posedge clk) begin
      v1 <= !rst && req_valid[p];
      key1 <= key; pd1 <= req_pd[p * 32 +: 32]; len1 <= req_len[p * 32 +: 32];
      acc1 <= req_access[p * 4 +: 4]; va1 <= req_va[p * 64 +: 64];
      idx1 <= key[31:8] < N;
      ent1 <= sel;
      v2 <= !rst && v1;
      key2 <= key1; pd2 <= pd1; len2 <= len1; acc2 <= acc1; va2 <= va1; idx2 <= idx1; ent2 <= ent1;
    end

    wire        ok  = rsp_ok[p];
    wire [63:0] pa  = rsp_pa[p * 64 +: 64];
    wire [64:0] end_acc = {1'b0, va2} + {33'd0, len2};
    wire [64:0] end_mr  = {1'b0, m_iova} + {1'b0, m_len};
    wire spec_ok = len2 == 32'd0 ||
                   (idx2 && m_valid && m_key == key2 && m_pd == pd2 &&
                    (acc2 & ~m_acc) == 4'd0 && va2 >= m_iova && end_acc <= end_mr);
    always_comb begin
      if (!f_init) begin
        assert(rsp_valid[p] == v2);
        if (rsp_valid[p]) begin
          assert(ok == spec_ok);
          if (len2 == 32'd0) assert(ok);
          if (ok && len2 != 32'd0) begin
            assert(idx2);                              // key[31:8] names an existing MR
            assert(m_valid);
            assert(m_key == key2);
            assert(m_pd == pd2);
            assert((acc2 & ~m_acc) == 4'd0);     // rights requested within the MR's
            assert(va2 >= m_iova);
            assert(end_acc <= end_mr);                 // [va, va+len) inside [iova, iova+length)
            assert(end_acc <= {1'b1, 64'd0});          // no 64-bit wrap of the access
            assert(pa == m_pa + (va2 - m_iova));
          end
        end
        cover(rsp_valid[p] && ok && len2 != 32'd0);
        cover(rsp_valid[p] && !ok && m_valid && m_key == key2);
      end
    end
  end
`endif
endmodule
`default_nettype wire
