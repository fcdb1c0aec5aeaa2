// verilated_bind.hpp against a stand-in for the Verilated srnic_core (same member names and
// Verilator port types), and the monitors' promise not to allocate on idle or stalled cycles
// (counted through a replaced global operator new).
#include "srnic/agents/verilated_bind.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <sstream>

namespace {
// Allocations made while `g_counting` is set.
bool g_counting = false;
size_t g_allocs = 0;
}  // namespace

void* operator new(size_t n) {
  if (g_counting) ++g_allocs;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace srnic::verif::agents::test {
namespace {

namespace uvm = srnic::verif::uvm;

// Verilator's port types: CData/SData/IData/QData and VlWide<16> with data().
using CData = uint8_t;
using SData = uint16_t;
using IData = uint32_t;
using QData = uint64_t;
struct Wide16 {
  uint32_t w[16] = {};
  const uint32_t* data() const { return w; }
};

struct FakeCore {
  CData m_axi_awid = 3, m_axi_awlen = 7, m_axi_awsize = 6, m_axi_awburst = 1, m_axi_awvalid = 1,
        m_axi_awready = 0;
  QData m_axi_awaddr = 0x123456789ABCDEC0ull;
  Wide16 m_axi_wdata;
  QData m_axi_wstrb = 0xFFFF0000FFFF0000ull;
  CData m_axi_wlast = 1, m_axi_wvalid = 1, m_axi_wready = 1;
  CData m_axi_bid = 9, m_axi_bresp = 2, m_axi_bvalid = 1, m_axi_bready = 0;
  CData m_axi_arid = 5, m_axi_arlen = 63, m_axi_arsize = 6, m_axi_arburst = 1, m_axi_arvalid = 0,
        m_axi_arready = 1;
  QData m_axi_araddr = 0xFEDCBA9876543200ull;
  CData m_axi_rid = 12, m_axi_rresp = 3, m_axi_rlast = 1, m_axi_rvalid = 1, m_axi_rready = 1;
  Wide16 m_axi_rdata;
  SData s_axil_awaddr = 0xBEE0, s_axil_araddr = 0x0C04;
  CData s_axil_awvalid = 1, s_axil_awready = 0, s_axil_wstrb = 0x5, s_axil_wvalid = 1,
        s_axil_wready = 1, s_axil_bresp = 2, s_axil_bvalid = 0, s_axil_bready = 1,
        s_axil_arvalid = 1, s_axil_arready = 1, s_axil_rresp = 3, s_axil_rvalid = 1,
        s_axil_rready = 0;
  IData s_axil_wdata = 0xCAFEF00D, s_axil_rdata = 0x8BADF00D;
  Wide16 m_axis_tx_tdata, s_axis_rx_tdata;
  QData m_axis_tx_tkeep = 0xFF, s_axis_rx_tkeep = 0xFFFF;
  CData m_axis_tx_tlast = 1, m_axis_tx_tuser = 0, m_axis_tx_tvalid = 1, m_axis_tx_tready = 0;
  CData s_axis_rx_tlast = 0, s_axis_rx_tuser = 1, s_axis_rx_tvalid = 1;
};

TEST(VerilatedBind, FillsEveryFieldFromThePortNames) {
  FakeCore t;
  t.m_axi_wdata.w[15] = 0x11;
  t.m_axi_rdata.w[0] = 0x22;
  CoreSignals s;
  bind_core(t, s);
  EXPECT_EQ(s.axi.awid, 3);
  EXPECT_EQ(s.axi.awaddr, 0x123456789ABCDEC0ull);
  EXPECT_EQ(s.axi.awlen, 7);
  EXPECT_EQ(s.axi.awsize, 6);
  EXPECT_EQ(s.axi.awburst, 1);
  EXPECT_TRUE(s.axi.awvalid);
  EXPECT_FALSE(s.axi.awready);
  EXPECT_EQ(s.axi.wdata, t.m_axi_wdata.w);
  EXPECT_EQ(s.axi.wdata[15], 0x11u);
  EXPECT_EQ(s.axi.wstrb, 0xFFFF0000FFFF0000ull);
  EXPECT_TRUE(s.axi.wlast && s.axi.wvalid && s.axi.wready);
  EXPECT_EQ(s.axi.bid, 9);
  EXPECT_EQ(s.axi.bresp, 2);
  EXPECT_TRUE(s.axi.bvalid);
  EXPECT_FALSE(s.axi.bready);
  EXPECT_EQ(s.axi.arid, 5);
  EXPECT_EQ(s.axi.araddr, 0xFEDCBA9876543200ull);
  EXPECT_EQ(s.axi.arlen, 63);
  EXPECT_FALSE(s.axi.arvalid);
  EXPECT_TRUE(s.axi.arready);
  EXPECT_EQ(s.axi.rid, 12);
  EXPECT_EQ(s.axi.rdata, t.m_axi_rdata.w);
  EXPECT_EQ(s.axi.rresp, 3);
  EXPECT_TRUE(s.axi.rlast && s.axi.rvalid && s.axi.rready);

  EXPECT_EQ(s.axil.awaddr, 0xBEE0u);
  EXPECT_TRUE(s.axil.awvalid);
  EXPECT_FALSE(s.axil.awready);
  EXPECT_EQ(s.axil.wdata, 0xCAFEF00Du);
  EXPECT_EQ(s.axil.wstrb, 0x5);
  EXPECT_EQ(s.axil.bresp, 2);
  EXPECT_FALSE(s.axil.bvalid);
  EXPECT_TRUE(s.axil.bready);
  EXPECT_EQ(s.axil.araddr, 0x0C04u);
  EXPECT_EQ(s.axil.rdata, 0x8BADF00Du);
  EXPECT_EQ(s.axil.rresp, 3);
  EXPECT_TRUE(s.axil.rvalid);
  EXPECT_FALSE(s.axil.rready);

  EXPECT_EQ(s.tx.tdata, t.m_axis_tx_tdata.w);
  EXPECT_EQ(s.tx.tkeep, 0xFFu);
  EXPECT_TRUE(s.tx.tlast && s.tx.tvalid && s.tx.has_tready);
  EXPECT_FALSE(s.tx.tready || s.tx.tuser);
  EXPECT_EQ(s.rx.tdata, t.s_axis_rx_tdata.w);
  EXPECT_EQ(s.rx.tkeep, 0xFFFFu);
  EXPECT_TRUE(s.rx.tuser && s.rx.tvalid && s.rx.tready);
  EXPECT_FALSE(s.rx.tlast || s.rx.has_tready);
}

TEST(MonitorCost, NoAllocationOnIdleOrStalledCycles) {
  std::ostringstream out;
  uvm::Context ctx(1, out);
  uvm::Component top(ctx, "top");
  Axi4Config acfg;
  acfg.allow_outstanding_at_end = true;
  Axi4Monitor axi(top, "axi", acfg);
  AxiLiteMonitor axil(top, "axil");
  AxisMonitor axis(top, "axis");
  uint32_t words[16] = {};

  // Warm-up: one transaction each, so that first-use allocations are behind us.
  Axi4Signals a;
  a.arvalid = a.arready = true;
  a.arsize = 6;
  a.arburst = kBurstIncr;
  axi.sample(a);
  a = Axi4Signals{};
  a.rvalid = a.rready = a.rlast = true;
  a.rdata = words;
  axi.sample(a);
  AxiLiteSignals l;
  l.arvalid = l.arready = true;
  axil.sample(l);
  l = AxiLiteSignals{};
  l.rvalid = l.rready = true;
  axil.sample(l);
  AxisSignals x;
  x.tvalid = x.tlast = true;
  x.tkeep = ~0ull;
  x.tdata = words;
  axis.sample(x);
  ASSERT_EQ(ctx.reports().failures(), 0u) << out.str();

  // Idle cycles, then cycles with every VALID held against a low READY.
  Axi4Signals stall_a;
  stall_a.awvalid = stall_a.wvalid = stall_a.arvalid = true;
  stall_a.wdata = words;
  AxiLiteSignals stall_l;
  stall_l.awvalid = stall_l.wvalid = stall_l.arvalid = true;
  AxisSignals stall_x;
  stall_x.tvalid = true;
  stall_x.tready = false;
  stall_x.tkeep = ~0ull;
  stall_x.tdata = words;
  g_allocs = 0;
  g_counting = true;
  for (int i = 0; i < 1000; ++i) {
    axi.sample(Axi4Signals{});
    axil.sample(AxiLiteSignals{});
    axis.sample(AxisSignals{});
  }
  for (int i = 0; i < 1000; ++i) {
    axi.sample(stall_a);
    axil.sample(stall_l);
    axis.sample(stall_x);
  }
  g_counting = false;
  EXPECT_EQ(g_allocs, 0u);
  EXPECT_EQ(ctx.reports().failures(), 0u) << out.str();
  EXPECT_EQ(axis.stats().stall_cycles, 1000u);
}

}  // namespace
}  // namespace srnic::verif::agents::test
