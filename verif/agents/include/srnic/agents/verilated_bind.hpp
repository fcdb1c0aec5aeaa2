// Fills the monitors' signal structs from a Verilated srnic_core (or any type with the same port
// member names): 1-bit and narrow ports are CData/SData/IData, 64-bit ports QData, 512-bit
// ports VlWide<16> whose data() is used as the word pointer. Include it next to the Verilated
// model's header; this header includes no Verilator header itself. Call after the inputs have
// settled (eval) and before sample(): data pointers point into the model and stay valid until
// the next eval.
#pragma once

#include "srnic/agents/axi4.hpp"
#include "srnic/agents/axil.hpp"
#include "srnic/agents/axis.hpp"

namespace srnic::verif::agents {

template <class Top>
void bind_axi4(const Top& t, Axi4Signals& s) {
  s.awid = t.m_axi_awid;
  s.awaddr = t.m_axi_awaddr;
  s.awlen = t.m_axi_awlen;
  s.awsize = t.m_axi_awsize;
  s.awburst = t.m_axi_awburst;
  s.awvalid = t.m_axi_awvalid;
  s.awready = t.m_axi_awready;
  s.wdata = t.m_axi_wdata.data();
  s.wstrb = t.m_axi_wstrb;
  s.wlast = t.m_axi_wlast;
  s.wvalid = t.m_axi_wvalid;
  s.wready = t.m_axi_wready;
  s.bid = t.m_axi_bid;
  s.bresp = t.m_axi_bresp;
  s.bvalid = t.m_axi_bvalid;
  s.bready = t.m_axi_bready;
  s.arid = t.m_axi_arid;
  s.araddr = t.m_axi_araddr;
  s.arlen = t.m_axi_arlen;
  s.arsize = t.m_axi_arsize;
  s.arburst = t.m_axi_arburst;
  s.arvalid = t.m_axi_arvalid;
  s.arready = t.m_axi_arready;
  s.rid = t.m_axi_rid;
  s.rdata = t.m_axi_rdata.data();
  s.rresp = t.m_axi_rresp;
  s.rlast = t.m_axi_rlast;
  s.rvalid = t.m_axi_rvalid;
  s.rready = t.m_axi_rready;
}

template <class Top>
void bind_axil(const Top& t, AxiLiteSignals& s) {
  s.awaddr = t.s_axil_awaddr;
  s.awvalid = t.s_axil_awvalid;
  s.awready = t.s_axil_awready;
  s.wdata = t.s_axil_wdata;
  s.wstrb = t.s_axil_wstrb;
  s.wvalid = t.s_axil_wvalid;
  s.wready = t.s_axil_wready;
  s.bresp = t.s_axil_bresp;
  s.bvalid = t.s_axil_bvalid;
  s.bready = t.s_axil_bready;
  s.araddr = t.s_axil_araddr;
  s.arvalid = t.s_axil_arvalid;
  s.arready = t.s_axil_arready;
  s.rdata = t.s_axil_rdata;
  s.rresp = t.s_axil_rresp;
  s.rvalid = t.s_axil_rvalid;
  s.rready = t.s_axil_rready;
}

// NIC -> MAC stream, with tready.
template <class Top>
void bind_axis_tx(const Top& t, AxisSignals& s) {
  s.tdata = t.m_axis_tx_tdata.data();
  s.tkeep = t.m_axis_tx_tkeep;
  s.tlast = t.m_axis_tx_tlast;
  s.tuser = t.m_axis_tx_tuser;
  s.tvalid = t.m_axis_tx_tvalid;
  s.tready = t.m_axis_tx_tready;
  s.has_tready = true;
}

// MAC -> NIC stream: no tready, the NIC takes every beat.
template <class Top>
void bind_axis_rx(const Top& t, AxisSignals& s) {
  s.tdata = t.s_axis_rx_tdata.data();
  s.tkeep = t.s_axis_rx_tkeep;
  s.tlast = t.s_axis_rx_tlast;
  s.tuser = t.s_axis_rx_tuser;
  s.tvalid = t.s_axis_rx_tvalid;
  s.tready = true;
  s.has_tready = false;
}

// Every monitored interface of one srnic_core.
struct CoreSignals {
  Axi4Signals axi;
  AxiLiteSignals axil;
  AxisSignals tx, rx;
};

template <class Top>
void bind_core(const Top& t, CoreSignals& s) {
  bind_axi4(t, s.axi);
  bind_axil(t, s.axil);
  bind_axis_tx(t, s.tx);
  bind_axis_rx(t, s.rx);
}

}  // namespace srnic::verif::agents
