// srnic_dma_rd_mux: shares the AXI read channels among N clients. Client k uses AXI ID k;
// address requests are granted round-robin, read data is routed back by RID. Every
// client reserves space for what it asks for, so RREADY is always high and one client
// can never block another's data. A beat answered with an error (RRESP SLVERR or DECERR) is
// reported on err_* for the NIC's fatal latch (decision 108); it is delivered like any other.
`default_nettype none
module srnic_dma_rd_mux #(
  parameter int N = 4
) (
  input  wire logic           clk,
  input  wire logic           rst,
  input  wire logic [N-1:0]   c_ar_valid,
  input  wire logic [N*64-1:0] c_ar_addr,
  input  wire logic [N*8-1:0] c_ar_len,
  output logic [N-1:0]        c_ar_ready,
  output logic [N-1:0]        c_r_valid,
  output logic [511:0]        c_r_data,
  output logic                c_r_last,
  output logic [3:0]          m_axi_arid,
  output logic [63:0]         m_axi_araddr,
  output logic [7:0]          m_axi_arlen,
  output logic [2:0]          m_axi_arsize,
  output logic [1:0]          m_axi_arburst,
  output logic                m_axi_arvalid,
  input  wire logic           m_axi_arready,
  input  wire logic [3:0]     m_axi_rid,
  input  wire logic [511:0]   m_axi_rdata,
  input  wire logic [1:0]     m_axi_rresp,
  input  wire logic           m_axi_rlast,
  input  wire logic           m_axi_rvalid,
  output logic                m_axi_rready,
  // a read beat answered with an error: its AXI ID and RRESP (one pulse per beat)
  output logic                err_valid,
  output logic [3:0]          err_id,
  output logic [1:0]          err_resp
);
  localparam int IW = $clog2(N);
  initial if ((1 << IW) != N) $fatal(1, "srnic_dma_rd_mux: N must be a power of two");
  logic [IW-1:0] last_grant;
  logic [IW-1:0] sel;
  logic          any;
  always_comb begin
    any = 1'b0;
    sel = '0;
    for (int k = 1; k <= N; k++) begin
      logic [IW-1:0] idx;
      idx = last_grant + IW'(k);     // N is a power of two: wraps modulo N
      if (!any && c_ar_valid[idx]) begin any = 1'b1; sel = idx; end
    end
  end
  // registered AR slice: a granted request is held until the slave takes it
  always_ff @(posedge clk) begin
    if (rst) begin
      m_axi_arvalid <= 1'b0; last_grant <= '0;
    end else if (!m_axi_arvalid || m_axi_arready) begin
      m_axi_arvalid <= any;
      if (any) begin
        m_axi_arid   <= 4'(sel);
        m_axi_araddr <= c_ar_addr[sel*64 +: 64];
        m_axi_arlen  <= c_ar_len[sel*8 +: 8];
        last_grant   <= sel;
      end
    end
  end
  always_comb begin
    c_ar_ready = '0;
    if (any && (!m_axi_arvalid || m_axi_arready)) c_ar_ready[sel] = 1'b1;
  end
  assign m_axi_arsize  = 3'd6;
  assign m_axi_arburst = 2'b01;
  assign m_axi_rready  = 1'b1;
  always_comb begin
    c_r_valid = '0;
    if (m_axi_rvalid && {28'd0, m_axi_rid} < N) c_r_valid[m_axi_rid[IW-1:0]] = 1'b1;
  end
  assign c_r_data = m_axi_rdata;
  assign c_r_last = m_axi_rlast;
  assign err_valid = m_axi_rvalid && m_axi_rresp != 2'b00;
  assign err_id    = m_axi_rid;
  assign err_resp  = m_axi_rresp;

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AXI4 AR rules on the master port, grant rules. The
  // clients keep their bursts inside 4 KiB (checked in each client).
  a_ar_hold: assert property (@(posedge clk) disable iff (rst)
    m_axi_arvalid && !m_axi_arready |=> m_axi_arvalid && $stable(m_axi_arid) &&
      $stable(m_axi_araddr) && $stable(m_axi_arlen))
    else $error("srnic_dma_rd_mux: ARVALID dropped or AR payload changed before ARREADY");
  a_ar_grant_onehot: assert property (@(posedge clk) disable iff (rst)
    $onehot0(c_ar_ready) && (c_ar_ready & ~c_ar_valid) == '0)
    else $error("srnic_dma_rd_mux: more than one client granted, or a client granted without a request");
  a_r_route_onehot: assert property (@(posedge clk) disable iff (rst)
    $onehot0(c_r_valid))
    else $error("srnic_dma_rd_mux: read data routed to more than one client");
`endif
endmodule
`default_nettype wire
