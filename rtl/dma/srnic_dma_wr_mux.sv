// srnic_dma_wr_mux: shares the AXI write channels between two clients (payload
// placement, CQE writes). A client's burst is granted at its AW and holds the W channel
// until WLAST, so bursts never interleave and host memory sees the writes in the order
// they were granted: a CQE issued after its payload is never visible before it.
// Fatal (decision 108): while `fatal` is high nothing more reaches host memory. A burst granted
// then is taken from its client and discarded (no AW, its W beats accepted and dropped); a
// burst whose AW was already offered or issued keeps the AXI rules (AWVALID held until taken,
// every W beat sent) but its beats go out with no byte enabled (a beat already offered and
// waiting keeps its strobe: its data was read before the error).
`default_nettype none
module srnic_dma_wr_mux (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic         fatal,     // the NIC's fatal latch (registered)
  input  wire logic [1:0]   c_aw_valid,
  input  wire logic [127:0] c_aw_addr,
  input  wire logic [15:0]  c_aw_len,
  output logic [1:0]        c_aw_ready,
  input  wire logic [1:0]   c_w_valid,
  input  wire logic [1023:0] c_w_data,
  input  wire logic [127:0] c_w_strb,
  input  wire logic [1:0]   c_w_last,
  output logic [1:0]        c_w_ready,
  output logic [3:0]        m_axi_awid,
  output logic [63:0]       m_axi_awaddr,
  output logic [7:0]        m_axi_awlen,
  output logic [2:0]        m_axi_awsize,
  output logic [1:0]        m_axi_awburst,
  output logic              m_axi_awvalid,
  input  wire logic         m_axi_awready,
  output logic [511:0]      m_axi_wdata,
  output logic [63:0]       m_axi_wstrb,
  output logic              m_axi_wlast,
  output logic              m_axi_wvalid,
  input  wire logic         m_axi_wready,
  input  wire logic [3:0]   m_axi_bid,
  input  wire logic [1:0]   m_axi_bresp,
  input  wire logic         m_axi_bvalid,
  output logic              m_axi_bready,
  output logic              bresp_err,
  output logic [1:0]        bresp_code
);
  logic w_busy, w_owner;      // W channel belongs to w_owner until WLAST
  logic w_sink;              // the burst holding the W channel was discarded (no AW issued)
  logic rr;
  logic hold, hold_sel;      // an offered AW keeps its client until accepted (AXI stability)
  wire  pick1 = hold ? hold_sel : (c_aw_valid[1] && (!c_aw_valid[0] || rr));
  wire  grant = !w_busy && |c_aw_valid;
  wire  sink  = fatal && !hold;   // a new burst while fatal: taken and discarded
  assign m_axi_awvalid = grant && !sink;
  assign m_axi_awid    = 4'd0;
  assign m_axi_awaddr  = pick1 ? c_aw_addr[127:64] : c_aw_addr[63:0];
  assign m_axi_awlen   = pick1 ? c_aw_len[15:8] : c_aw_len[7:0];
  assign m_axi_awsize  = 3'd6;
  assign m_axi_awburst = 2'b01;
  always_comb begin
    c_aw_ready = '0;
    if (grant && (m_axi_awready || sink)) c_aw_ready[pick1] = 1'b1;
  end
  wire  aw_take = grant && (m_axi_awready || sink);
  assign m_axi_wvalid = w_busy && !w_sink && c_w_valid[w_owner];
  assign m_axi_wdata  = w_owner ? c_w_data[1023:512] : c_w_data[511:0];
  // a beat offered before fatal rose and still waiting keeps its strobe (AXI: a waiting beat
  // does not change); every beat first offered while fatal has none
  logic w_held, w_zero_q;
  wire  w_zero = w_held ? w_zero_q : fatal;
  assign m_axi_wstrb  = w_zero ? 64'd0 : w_owner ? c_w_strb[127:64] : c_w_strb[63:0];
  assign m_axi_wlast  = c_w_last[w_owner];
  always_comb begin
    c_w_ready = '0;
    if (w_busy) c_w_ready[w_owner] = w_sink || m_axi_wready;
  end
  wire  w_end = w_busy && c_w_valid[w_owner] && c_w_ready[w_owner] && c_w_last[w_owner];
  always_ff @(posedge clk) begin
    if (rst) begin
      w_busy <= 1'b0; w_owner <= 1'b0; w_sink <= 1'b0; rr <= 1'b0; hold <= 1'b0; hold_sel <= 1'b0;
      w_held <= 1'b0; w_zero_q <= 1'b0;
    end else begin
      w_held <= m_axi_wvalid && !m_axi_wready;
      w_zero_q <= w_zero;
      hold <= grant && !sink && !m_axi_awready;
      hold_sel <= pick1;
      if (aw_take) begin w_busy <= 1'b1; w_owner <= pick1; w_sink <= sink; rr <= !pick1; end
      if (w_end) w_busy <= 1'b0;
    end
  end
  assign m_axi_bready = 1'b1;
  assign bresp_err  = m_axi_bvalid && m_axi_bresp != 2'b00;
  assign bresp_code = m_axi_bresp;
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^m_axi_bid;
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AXI4 AW/W rules on the master port (the clients hold
  // their own AW and W until taken), W ownership.
  a_aw_hold: assert property (@(posedge clk) disable iff (rst)
    m_axi_awvalid && !m_axi_awready |=> m_axi_awvalid && $stable(m_axi_awaddr) && $stable(m_axi_awlen))
    else $error("srnic_dma_wr_mux: AWVALID dropped or AW payload changed before AWREADY");
  a_w_hold: assert property (@(posedge clk) disable iff (rst)
    m_axi_wvalid && !m_axi_wready |=> m_axi_wvalid && $stable(m_axi_wdata) &&
      $stable(m_axi_wstrb) && $stable(m_axi_wlast))
    else $error("srnic_dma_wr_mux: WVALID dropped or W payload changed before WREADY");
  a_w_only_when_owned: assert property (@(posedge clk) disable iff (rst)
    m_axi_wvalid |-> w_busy && !w_sink)
    else $error("srnic_dma_wr_mux: W beat outside a granted burst");
  a_aw_grant_onehot: assert property (@(posedge clk) disable iff (rst)
    $onehot0(c_aw_ready) && $onehot0(c_w_ready))
    else $error("srnic_dma_wr_mux: AW or W granted to both clients at once");
  a_no_aw_while_w_busy: assert property (@(posedge clk) disable iff (rst)
    w_busy |-> c_aw_ready == 2'b00)
    else $error("srnic_dma_wr_mux: new burst granted while the W channel is owned (interleaving)");
  a_fatal_no_new_aw: assert property (@(posedge clk) disable iff (rst)
    fatal && m_axi_awvalid |-> hold)
    else $error("srnic_dma_wr_mux: a write burst issued to host memory while fatal");
  a_fatal_no_bytes: assert property (@(posedge clk) disable iff (rst)
    fatal && m_axi_wvalid && !w_held |-> m_axi_wstrb == '0)
    else $error("srnic_dma_wr_mux: a byte written to host memory while fatal");
`endif
endmodule
`default_nettype wire
