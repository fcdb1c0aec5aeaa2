// AxiLiteMonitor on synthetic cycle sequences: published transactions with data, strobes,
// responses and cycles; one test per protocol rule that must raise exactly its error id;
// outstanding limit; statistics and coverage bins.
#include "srnic/agents/axil.hpp"

#include "harness.hpp"

namespace srnic::verif::agents::test {
namespace {

struct AxilCyc {
  AxiLiteSignals s;
  AxiLiteSignals get() const { return s; }
};

class AxilEnv : public ScriptEnv<AxilCyc> {
 public:
  explicit AxilEnv(uvm::Context& ctx, const AxiLiteConfig& cfg = {})
      : ScriptEnv(ctx), mon(*this, "axil", cfg) {
    mon.set_source(current());
  }
  void connect() override { mon.ap.connect(txns); }

  void aw(size_t c, uint32_t addr, bool ready = true) {
    AxiLiteSignals& s = at(c).s;
    s.awvalid = true;
    s.awready = ready;
    s.awaddr = addr;
  }
  void w(size_t c, uint32_t data, uint8_t strb, bool ready = true) {
    AxiLiteSignals& s = at(c).s;
    s.wvalid = true;
    s.wready = ready;
    s.wdata = data;
    s.wstrb = strb;
  }
  void b(size_t c, uint8_t resp = 0, bool ready = true) {
    AxiLiteSignals& s = at(c).s;
    s.bvalid = true;
    s.bready = ready;
    s.bresp = resp;
  }
  void ar(size_t c, uint32_t addr, bool ready = true) {
    AxiLiteSignals& s = at(c).s;
    s.arvalid = true;
    s.arready = ready;
    s.araddr = addr;
  }
  void r(size_t c, uint32_t data, uint8_t resp = 0, bool ready = true) {
    AxiLiteSignals& s = at(c).s;
    s.rvalid = true;
    s.rready = ready;
    s.rdata = data;
    s.rresp = resp;
  }

  AxiLiteMonitor mon;
  Collect<AxiLiteTxn> txns;
};

using AxilTest = AgentTest;

void expect_txn(const AxiLiteTxn& t, bool write, uint32_t addr, uint32_t data, uint8_t strb,
                uint64_t req, uint64_t rsp) {
  EXPECT_EQ(t.write, write);
  EXPECT_EQ(t.addr, addr);
  EXPECT_EQ(t.data, data);
  EXPECT_EQ(t.strb, strb);
  EXPECT_EQ(t.resp, 0);
  EXPECT_EQ(t.cycle_req, req);
  EXPECT_EQ(t.cycle_rsp, rsp);
}

TEST_F(AxilTest, CleanTrafficPublishesEachResponse) {
  AxilEnv env(ctx);
  env.aw(0, 0x1004);  // W1: AW and W together
  env.w(0, 0xA1, 0xF);
  env.b(2);
  env.ar(1, 0x0010);  // R1
  env.r(3, 0x11111111);
  env.w(3, 0xB2, 0x3);  // W2: W first, AW stalled a cycle
  env.aw(4, 0x2008, false);
  env.aw(5, 0x2008);
  env.b(7, 0, false);
  env.b(8);
  env.ar(4, 0xF000, false);  // R2: AR and R both stalled a cycle
  env.ar(5, 0xF000);
  env.r(7, 0x22222222, 0, false);
  env.r(8, 0x22222222);
  env.aw(9, 0x3000);  // W3: AW first, W stalled a cycle
  env.w(10, 0xC3, 0x1, false);
  env.w(11, 0xC3, 0x1);
  env.b(12);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.txns.items.size(), 5u);
  expect_txn(env.txns.items[0], true, 0x1004, 0xA1, 0xF, 0, 2);
  expect_txn(env.txns.items[1], false, 0x0010, 0x11111111, 0, 1, 3);
  expect_txn(env.txns.items[2], true, 0x2008, 0xB2, 0x3, 5, 8);  // B before R in one cycle
  expect_txn(env.txns.items[3], false, 0xF000, 0x22222222, 0, 5, 8);
  expect_txn(env.txns.items[4], true, 0x3000, 0xC3, 0x1, 11, 12);
  EXPECT_EQ(env.mon.stats().reads, 2u);
  EXPECT_EQ(env.mon.stats().writes, 3u);
  EXPECT_EQ(env.mon.stats().max_outstanding_reads, 1u);
  EXPECT_EQ(env.mon.stats().max_outstanding_writes, 1u);

  const uvm::Covergroup& cg = env.mon.coverage();
  EXPECT_EQ(cg.samples(), 5u);
  const auto& region = *cg.coverpoints()[1];
  EXPECT_EQ(region.hits("page[0]"), 1u);
  EXPECT_EQ(region.hits("page[1]"), 1u);
  EXPECT_EQ(region.hits("page[15]"), 1u);
  EXPECT_EQ(cg.coverpoints()[2]->hits("okay"), 5u);
  EXPECT_EQ(cg.crosses()[0]->hits("write,page[2]"), 1u);
  EXPECT_EQ(cg.crosses()[0]->hits("read,page[2]"), 0u);
  EXPECT_EQ(cg.crosses()[1]->hits("read,okay"), 2u);
}

TEST_F(AxilTest, ConfiguredRegionsAndErrorResponses) {
  AxiLiteConfig cfg;
  cfg.regions = {{"csr", 0x0000, 0x00FF}, {"doorbell", 0x1000, 0x1FFF}};
  cfg.cover_error_resp = true;
  AxilEnv env(ctx, cfg);
  env.ar(0, 0x0010);
  env.r(2, 0xDEAD, 2);  // SLVERR: counted, no protocol error
  env.ar(3, 0x8000);
  env.r(5, 0xBEEF, 3);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.txns.items.size(), 2u);
  EXPECT_EQ(env.txns.items[0].resp, 2);
  EXPECT_EQ(env.txns.items[1].data, 0xBEEFu);
  EXPECT_EQ(env.mon.stats().slverr, 1u);
  EXPECT_EQ(env.mon.stats().decerr, 1u);
  const uvm::Covergroup& cg = env.mon.coverage();
  EXPECT_EQ(cg.coverpoints()[1]->hits("csr"), 1u);
  EXPECT_EQ(cg.coverpoints()[1]->hits("doorbell"), 0u);
  EXPECT_EQ(cg.coverpoints()[1]->hits("other"), 1u);
  EXPECT_EQ(cg.coverpoints()[2]->hits("slverr"), 1u);
  EXPECT_EQ(cg.crosses()[1]->hits("read,decerr"), 1u);
}

TEST_F(AxilTest, AwValidDroppedBeforeReady) {
  AxilEnv env(ctx);
  env.aw(0, 0x10, false);
  env.run();
  expect_only("AXIL_STABLE", 1);
}

TEST_F(AxilTest, WDataChangedWhileStalled) {
  AxilEnv env(ctx);
  env.w(0, 1, 0xF, false);
  env.w(1, 2, 0xF);
  env.aw(1, 0x10);
  env.b(3);
  env.run();
  expect_only("AXIL_STABLE", 1);
}

TEST_F(AxilTest, ArAddressChangedWhileStalled) {
  AxilEnv env(ctx);
  env.ar(0, 0x10, false);
  env.ar(1, 0x14);
  env.r(3, 7);
  env.run();
  expect_only("AXIL_STABLE", 1);
}

TEST_F(AxilTest, RDataChangedWhileStalled) {
  AxilEnv env(ctx);
  env.ar(0, 0x10);
  env.r(2, 1, 0, false);
  env.r(3, 2);
  env.run();
  expect_only("AXIL_STABLE", 1);
}

TEST_F(AxilTest, BValidDroppedBeforeReady) {
  AxiLiteConfig cfg;
  cfg.allow_outstanding_at_end = true;
  AxilEnv env(ctx, cfg);
  env.aw(0, 0x10);
  env.w(0, 1, 0xF);
  env.b(2, 0, false);
  env.run();
  expect_only("AXIL_STABLE", 1);
}

TEST_F(AxilTest, BBeforeTheWrite) {
  AxilEnv env(ctx);
  env.aw(0, 0x10);
  env.b(1, 0, false);  // presented with the AW accepted but no W yet
  env.w(2, 5, 0xF);
  env.b(2, 0, false);
  env.b(3);
  env.run();
  expect_only("AXIL_B", 1);
  EXPECT_NE(log().find("AW accepted, W not yet"), std::string::npos) << log();
  ASSERT_EQ(env.txns.items.size(), 1u);
  EXPECT_EQ(env.txns.items[0].data, 5u);
}

TEST_F(AxilTest, BInTheCycleOfItsRequest) {
  AxiLiteConfig cfg;
  cfg.allow_outstanding_at_end = true;
  AxilEnv env(ctx, cfg);
  env.aw(0, 0x10);
  env.w(0, 5, 0xF);
  env.b(0);
  env.run();
  expect_only("AXIL_B", 1);
  EXPECT_TRUE(env.txns.items.empty());
}

TEST_F(AxilTest, BWithoutAnyWrite) {
  AxilEnv env(ctx);
  env.b(0);
  env.run();
  expect_only("AXIL_B", 1);
}

TEST_F(AxilTest, RWithoutAnyRead) {
  AxilEnv env(ctx);
  env.r(0, 1);
  env.run();
  expect_only("AXIL_R", 1);
}

TEST_F(AxilTest, MoreThanMaxOutstanding) {
  AxiLiteConfig cfg;
  cfg.max_outstanding = 1;
  AxilEnv env(ctx, cfg);
  env.ar(0, 0x10);
  env.ar(1, 0x14);
  env.r(3, 1);
  env.r(4, 2);
  env.aw(5, 0x20);
  env.w(5, 1, 0xF);
  env.aw(6, 0x24);
  env.w(6, 2, 0xF);
  env.b(8);
  env.b(9);
  env.run();
  expect_only("AXIL_OUTSTANDING", 2);
  EXPECT_EQ(env.mon.stats().max_outstanding_reads, 2u);
  EXPECT_EQ(env.mon.stats().max_outstanding_writes, 2u);
}

TEST_F(AxilTest, ExokayResponse) {
  AxilEnv env(ctx);
  env.ar(0, 0x10);
  env.r(2, 1, 1);
  env.run();
  expect_only("AXIL_RESP", 1);
}

TEST_F(AxilTest, OpenRequestsAtTheEnd) {
  AxilEnv env(ctx);
  env.ar(0, 0x10);
  env.aw(1, 0x20);  // AW without W
  env.run();
  expect_only("MON_PARTIAL", 2);
}

}  // namespace
}  // namespace srnic::verif::agents::test
