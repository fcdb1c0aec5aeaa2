// srnic_mr_port: one lookup pipeline of srnic_mr_table with its own copy of the table.
`default_nettype none
module srnic_mr_port #(
  parameter int NUM_MRS = 256
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  input  wire logic                       wr_valid,
  input  wire logic [$clog2(NUM_MRS)-1:0] wr_index,
  input  var srnic_pkg::mr_entry_t        wr_entry,
  input  wire logic                       req_valid,
  input  wire logic [31:0]                req_key,
  input  wire logic [31:0]                req_pd,
  input  wire logic [3:0]                 req_access,
  input  wire logic [63:0]                req_va,
  input  wire logic [31:0]                req_len,
  output logic                            rsp_valid,
  output logic                            rsp_ok,
  output logic [63:0]                     rsp_pa
);
  localparam int IW = $clog2(NUM_MRS);
  localparam int EW = srnic_pkg::MR_ENTRY_W;
`ifndef SYNTHESIS
  initial if ($bits(srnic_pkg::mr_entry_t) != EW) $fatal(1, "srnic_mr_port: MR_ENTRY_W out of date");
`endif
  logic [EW-1:0] ent_raw;
  srnic_pkg::mr_entry_t ent;
  logic        v1, idx_ok1;
  logic [31:0] key1, pd1, len1;
  logic [3:0]  acc1;
  logic [63:0] va1;
  // index bits above the table size make the lookup fail
  wire idx_ok = (req_key >> 8) < NUM_MRS;

  sdp_ram #(.WIDTH(EW), .DEPTH(NUM_MRS)) u_ram (
    .clk, .wr_en(wr_valid), .wr_addr(wr_index), .wr_data(wr_entry),
    .rd_en(req_valid), .rd_addr(req_key[8 +: IW]), .rd_data(ent_raw));
  assign ent = ent_raw;

  // Valid bits in flops, cleared by reset: the RAM keeps its contents over a reset, and an
  // entry a former user of the NIC left valid must not grant access to a new one (whose PDs
  // and keys start again from the same numbers). Read with the RAM, in the request's cycle.
  logic [NUM_MRS-1:0] vld;
  logic               vld1;
  always_ff @(posedge clk) begin
    if (rst) vld <= '0;
    else if (wr_valid) vld[wr_index] <= wr_entry.valid;
  end

  always_ff @(posedge clk) begin
    v1 <= !rst && req_valid;
    key1 <= req_key; pd1 <= req_pd; acc1 <= req_access; va1 <= req_va; len1 <= req_len;
    idx_ok1 <= idx_ok;
    vld1 <= vld[req_key[8 +: IW]];
  end

  wire [64:0] end_req = {1'b0, va1} + {33'd0, len1};
  wire [64:0] end_mr  = {1'b0, ent.iova} + {1'b0, ent.length};
  wire ok = (len1 == 32'd0) ||
            (idx_ok1 && vld1 && ent.valid && ent.key == key1 && ent.pd == pd1 && (acc1 & ~ent.access) == 4'd0 &&
             va1 >= ent.iova && end_req <= end_mr);
  always_ff @(posedge clk) begin
    rsp_valid <= !rst && v1;
    rsp_ok    <= ok;
    rsp_pa    <= ent.pa + (va1 - ent.iova);
  end

`ifndef SYNTHESIS
  // Assertions (verilator --assert): every request is answered exactly two cycles later,
  // and an accepted non-empty access lies inside the entry's physical range [pa, pa+length)
  // (stated on physical addresses, independently of the iova bounds check that decides it;
  // MRs that wrap past 2^64 are refused by the host library and not asserted on).
  wire [64:0] pa_lo  = {1'b0, ent.pa + (va1 - ent.iova)};
  wire [64:0] mr_top = {1'b0, ent.pa} + {1'b0, ent.length};
  a_answer_latency: assert property (@(posedge clk) disable iff (rst) rsp_valid == $past(v1))
    else $error("srnic_mr_port: answer not two cycles after its request");
  a_ok_inside_mr: assert property (@(posedge clk) disable iff (rst)
    v1 && ok && len1 != 32'd0 && !mr_top[64] |-> pa_lo >= {1'b0, ent.pa} && pa_lo + {33'd0, len1} <= mr_top)
    else $error("srnic_mr_port: key 0x%08x accepted for [0x%016x, +%0d), outside the MR's physical range",
                key1, pa_lo[63:0], len1);
`endif
endmodule
`default_nettype wire
