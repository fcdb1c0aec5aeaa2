// Axi4Monitor on synthetic cycle sequences: whole transactions with their bytes, strobes,
// responses and cycles; W before AW; id ordering; one test per protocol rule that must raise
// exactly its error id; statistics and coverage.
#include "srnic/agents/axi4.hpp"

#include "harness.hpp"

namespace srnic::verif::agents::test {
namespace {

struct AxiCyc {
  Axi4Signals s;
  std::array<uint32_t, 16> wd{}, rd{};
  Axi4Signals get() const {
    Axi4Signals x = s;
    x.wdata = wd.data();
    x.rdata = rd.data();
    return x;
  }
};

constexpr uint64_t kAll = ~0ull;

class AxiEnv : public ScriptEnv<AxiCyc> {
 public:
  explicit AxiEnv(uvm::Context& ctx, const Axi4Config& cfg = {})
      : ScriptEnv(ctx), mon(*this, "axi", cfg) {
    mon.set_source(current());
  }
  void connect() override {
    mon.read_ap.connect(reads);
    mon.write_ap.connect(writes);
  }

  void aw(size_t c, uint8_t id, uint64_t addr, uint8_t len, bool ready = true, uint8_t size = 6,
          uint8_t burst = kBurstIncr) {
    Axi4Signals& s = at(c).s;
    s.awvalid = true;
    s.awready = ready;
    s.awid = id;
    s.awaddr = addr;
    s.awlen = len;
    s.awsize = size;
    s.awburst = burst;
  }
  void w(size_t c, unsigned seed, uint64_t strb, bool last, bool ready = true) {
    AxiCyc& x = at(c);
    x.s.wvalid = true;
    x.s.wready = ready;
    x.s.wstrb = strb;
    x.s.wlast = last;
    fill(x.wd, seed);
  }
  void b(size_t c, uint8_t id, uint8_t resp = kRespOkay, bool ready = true) {
    Axi4Signals& s = at(c).s;
    s.bvalid = true;
    s.bready = ready;
    s.bid = id;
    s.bresp = resp;
  }
  void ar(size_t c, uint8_t id, uint64_t addr, uint8_t len, bool ready = true, uint8_t size = 6,
          uint8_t burst = kBurstIncr) {
    Axi4Signals& s = at(c).s;
    s.arvalid = true;
    s.arready = ready;
    s.arid = id;
    s.araddr = addr;
    s.arlen = len;
    s.arsize = size;
    s.arburst = burst;
  }
  void r(size_t c, uint8_t id, unsigned seed, bool last, uint8_t resp = kRespOkay,
         bool ready = true) {
    AxiCyc& x = at(c);
    x.s.rvalid = true;
    x.s.rready = ready;
    x.s.rid = id;
    x.s.rresp = resp;
    x.s.rlast = last;
    fill(x.rd, seed);
  }

  Axi4Monitor mon;
  Collect<Axi4ReadTxn> reads;
  Collect<Axi4WriteTxn> writes;
};

std::vector<uint8_t> strobes(std::initializer_list<uint64_t> per_beat) {
  std::vector<uint8_t> v;
  for (uint64_t m : per_beat)
    for (unsigned i = 0; i < 64; ++i) v.push_back(static_cast<uint8_t>((m >> i) & 1));
  return v;
}

using Axi4Test = AgentTest;

// ---- clean traffic -----------------------------------------------------------------------

TEST_F(Axi4Test, CleanTrafficPublishesWholeTransactions) {
  AxiEnv env(ctx);
  // Write A: id 1, 2 beats; AW waits a cycle, the second W beat waits a cycle, B waits a cycle.
  env.aw(0, 1, 0x1000, 1, false);
  env.aw(1, 1, 0x1000, 1);
  env.w(1, 10, kAll, false);
  env.w(2, 11, kAll, true, false);
  env.w(3, 11, kAll, true);
  env.b(5, 1, kRespOkay, false);
  env.b(6, 1);
  // Write B: id 2, one beat at an unaligned start (lanes 16..63 of the beat are in the burst).
  env.aw(4, 2, 0x2050, 0);
  env.w(4, 12, 0x00000000FFFF0000ull, true);
  env.b(7, 2, kRespSlvErr);
  // Read C: id 3, 3 beats, interleaved with read D (id 4); its second beat waits a cycle.
  env.ar(0, 3, 0x3000, 2);
  env.ar(1, 4, 0x4000, 0);
  env.r(2, 3, 20, false);
  env.r(3, 4, 30, true);
  env.r(4, 3, 21, false, kRespOkay, false);
  env.r(5, 3, 21, false);
  env.r(6, 3, 22, true, kRespSlvErr);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();

  ASSERT_EQ(env.writes.items.size(), 2u);
  const Axi4WriteTxn& a = env.writes.items[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.addr, 0x1000u);
  EXPECT_EQ(a.beats(), 2u);
  EXPECT_EQ(a.data, beats({10, 11}));
  EXPECT_EQ(a.strb, strobes({kAll, kAll}));
  EXPECT_EQ(a.strobed_bytes(), 128u);
  EXPECT_EQ(a.resp, kRespOkay);
  EXPECT_EQ(a.cycle_addr, 1u);
  EXPECT_EQ(a.cycle_first_data, 1u);
  EXPECT_EQ(a.cycle_last_data, 3u);
  EXPECT_EQ(a.cycle_resp, 6u);
  const Axi4WriteTxn& bw = env.writes.items[1];
  EXPECT_EQ(bw.id, 2);
  EXPECT_EQ(bw.addr, 0x2050u);
  EXPECT_EQ(bw.data, beats({12}));
  EXPECT_EQ(bw.strb, strobes({0x00000000FFFF0000ull}));
  EXPECT_EQ(bw.resp, kRespSlvErr);
  EXPECT_EQ(bw.cycle_addr, 4u);
  EXPECT_EQ(bw.cycle_last_data, 4u);
  EXPECT_EQ(bw.cycle_resp, 7u);

  ASSERT_EQ(env.reads.items.size(), 2u);
  const Axi4ReadTxn& d = env.reads.items[0];  // completes first
  EXPECT_EQ(d.id, 4);
  EXPECT_EQ(d.addr, 0x4000u);
  EXPECT_EQ(d.data, beats({30}));
  EXPECT_EQ(d.resp, kRespOkay);
  EXPECT_EQ(d.cycle_addr, 1u);
  EXPECT_EQ(d.cycle_first, 3u);
  EXPECT_EQ(d.cycle_last, 3u);
  const Axi4ReadTxn& c = env.reads.items[1];
  EXPECT_EQ(c.id, 3);
  EXPECT_EQ(c.addr, 0x3000u);
  EXPECT_EQ(c.len, 2);
  EXPECT_EQ(c.size, 6);
  EXPECT_EQ(c.burst, kBurstIncr);
  EXPECT_EQ(c.data, beats({20, 21, 22}));
  EXPECT_EQ(c.resp, kRespSlvErr);  // worst of the beats
  EXPECT_EQ(c.cycle_addr, 0u);
  EXPECT_EQ(c.cycle_first, 2u);
  EXPECT_EQ(c.cycle_last, 6u);

  const Axi4Stats& st = env.mon.stats();
  EXPECT_EQ(st.reads, 2u);
  EXPECT_EQ(st.writes, 2u);
  EXPECT_EQ(st.read_beats, 4u);
  EXPECT_EQ(st.write_beats, 3u);
  EXPECT_EQ(st.read_bytes, 256u);
  EXPECT_EQ(st.write_bytes, 144u);
  EXPECT_EQ(st.max_outstanding_reads, 2u);
  EXPECT_EQ(st.max_outstanding_writes, 2u);
  EXPECT_EQ(st.read_slverr, 1u);
  EXPECT_EQ(st.write_slverr, 1u);
  EXPECT_EQ(st.read_decerr + st.write_decerr, 0u);
  EXPECT_EQ(env.mon.outstanding_reads() + env.mon.outstanding_writes(), 0u);

  // Coverage: one sample per accepted address.
  const uvm::Covergroup& cg = env.mon.coverage();
  EXPECT_EQ(cg.samples(), 4u);
  const auto& cps = cg.coverpoints();
  EXPECT_EQ(cps[0]->hits("read"), 2u);
  EXPECT_EQ(cps[0]->hits("write"), 2u);
  EXPECT_EQ(cps[2]->hits("1"), 2u);    // B, D
  EXPECT_EQ(cps[2]->hits("2-7"), 2u);  // A, C
  EXPECT_EQ(cps[3]->hits("1"), 2u);    // C, A were alone in their direction
  EXPECT_EQ(cps[3]->hits("2-3"), 2u);  // D, B
  EXPECT_EQ(cg.crosses()[0]->hits("read,id[3]"), 1u);
  EXPECT_EQ(cg.crosses()[0]->hits("write,id[2]"), 1u);
  EXPECT_EQ(cg.crosses()[0]->hits("write,id[3]"), 0u);
  EXPECT_EQ(cg.crosses()[1]->hits("read,2-7"), 1u);
}

TEST_F(Axi4Test, BurstsEndingAtA4kBoundaryAreClean) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0xF80, 1);      // 0xF80..0xFFF
  env.ar(1, 2, 0x10000, 63);   // 64 beats = one whole 4 KB page
  env.r(2, 1, 1, false);
  env.r(3, 1, 2, true);
  for (unsigned k = 0; k < 64; ++k) env.r(4 + k, 2, k, k == 63);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.reads.items.size(), 2u);
  EXPECT_EQ(env.reads.items[1].data.size(), 4096u);
  EXPECT_EQ(env.mon.coverage().coverpoints()[2]->hits("64+"), 1u);
}

TEST_F(Axi4Test, WBeatsBeforeTheirAwAreQueuedInAwOrder) {
  AxiEnv env(ctx);
  env.w(0, 1, kAll, false);  // burst X, 2 beats
  env.w(1, 2, kAll, true);
  env.w(2, 3, kAll, true);   // burst Y, 1 beat
  env.aw(3, 5, 0x5000, 1);
  env.aw(4, 6, 0x6000, 0);
  env.b(6, 5);
  env.b(7, 6);
  env.w(8, 4, kAll, false);  // burst Z: first beat before its AW, second after
  env.aw(9, 7, 0x7000, 1);
  env.w(10, 5, kAll, true);
  env.b(12, 7, kRespDecErr);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.writes.items.size(), 3u);
  const auto& x = env.writes.items[0];
  EXPECT_EQ(x.id, 5);
  EXPECT_EQ(x.data, beats({1, 2}));
  EXPECT_EQ(x.cycle_first_data, 0u);
  EXPECT_EQ(x.cycle_last_data, 1u);
  EXPECT_EQ(x.cycle_addr, 3u);
  const auto& y = env.writes.items[1];
  EXPECT_EQ(y.id, 6);
  EXPECT_EQ(y.data, beats({3}));
  EXPECT_EQ(y.cycle_addr, 4u);
  const auto& z = env.writes.items[2];
  EXPECT_EQ(z.id, 7);
  EXPECT_EQ(z.data, beats({4, 5}));
  EXPECT_EQ(z.resp, kRespDecErr);
  EXPECT_EQ(z.cycle_first_data, 8u);
  EXPECT_EQ(z.cycle_last_data, 10u);
  EXPECT_EQ(env.mon.stats().write_decerr, 1u);
}

TEST_F(Axi4Test, ReadsOfOneIdInOrderOtherIdsMayOvertake) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x100 * 64, 0);
  env.ar(1, 1, 0x200 * 64, 0);
  env.ar(2, 2, 0x300 * 64, 0);
  env.r(4, 2, 3, true);
  env.r(5, 1, 1, true);
  env.r(6, 1, 2, true);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.reads.items.size(), 3u);
  EXPECT_EQ(env.reads.items[0].addr, 0x300u * 64);
  EXPECT_EQ(env.reads.items[0].data, beats({3}));
  EXPECT_EQ(env.reads.items[1].addr, 0x100u * 64);
  EXPECT_EQ(env.reads.items[1].data, beats({1}));
  EXPECT_EQ(env.reads.items[2].addr, 0x200u * 64);
  EXPECT_EQ(env.reads.items[2].data, beats({2}));
  EXPECT_EQ(env.mon.stats().max_outstanding_reads, 3u);
}

TEST_F(Axi4Test, NarrowBeatsCarryTheirOwnLanes) {
  Axi4Config cfg;
  cfg.allowed_sizes = 0x7F;
  AxiEnv env(ctx, cfg);
  env.aw(0, 1, 0x1008, 1, true, 2);  // 4-byte beats: lanes 8..11, then 12..15
  env.w(1, 1, 0xF00, false);
  env.w(2, 2, 0xF000, true);
  env.b(4, 1);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.writes.items.size(), 1u);
  EXPECT_EQ(env.writes.items[0].strobed_bytes(), 8u);
}

TEST_F(Axi4Test, CoverageIdsFollowTheConfiguration) {
  Axi4Config cfg;
  cfg.cover_read_ids = 4;  // srnic_core: one read id per DMA client, writes on id 0
  cfg.cover_write_ids = 1;
  AxiEnv env(ctx, cfg);
  for (uint8_t i = 0; i < 4; ++i) {
    env.ar(i, i, 0x1000u * (i + 1), 0);
    env.r(4 + i, i, i, true);
  }
  env.aw(0, 0, 0x9000, 0);
  env.w(0, 9, kAll, true);
  env.b(2, 0);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  const uvm::Covergroup& cg = env.mon.coverage();
  EXPECT_EQ(cg.coverpoints()[1]->goal_bins(), 4u);
  const uvm::CoverItem& x = *cg.crosses()[0];
  EXPECT_EQ(x.goal_bins(), 5u);  // read x id[0..3], write x id[0]
  EXPECT_EQ(x.covered_bins(), 5u);
  EXPECT_DOUBLE_EQ(x.coverage(), 100.0);
}

// ---- one test per rule --------------------------------------------------------------------

TEST_F(Axi4Test, AwValidDroppedBeforeReady) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 0, false);
  env.run();
  expect_only("AXI_STABLE", 1);
}

TEST_F(Axi4Test, AwAddressChangedWhileStalled) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 0, false);
  env.aw(1, 1, 0x1040, 0);
  env.w(2, 1, kAll, true);
  env.b(4, 1);
  env.run();
  expect_only("AXI_STABLE", 1);
}

TEST_F(Axi4Test, WDataChangedWhileStalled) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 0);
  env.w(1, 1, kAll, true, false);
  env.w(2, 2, kAll, true);
  env.b(4, 1);
  env.run();
  expect_only("AXI_STABLE", 1);
  EXPECT_NE(log().find("first changed data byte lane 0"), std::string::npos) << log();
}

TEST_F(Axi4Test, ArValidDroppedBeforeReady) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x1000, 0, false);
  env.ar(1, 1, 0x1000, 0, false);
  env.run();
  expect_only("AXI_STABLE", 1);
}

TEST_F(Axi4Test, BResponseChangedWhileStalled) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 0);
  env.w(0, 1, kAll, true);
  env.b(2, 1, kRespOkay, false);
  env.b(3, 1, kRespSlvErr);
  env.run();
  expect_only("AXI_STABLE", 1);
}

TEST_F(Axi4Test, RResponseChangedWhileStalled) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x1000, 0);
  env.r(2, 1, 1, true, kRespOkay, false);
  env.r(3, 1, 1, true, kRespSlvErr);
  env.run();
  expect_only("AXI_STABLE", 1);
}

TEST_F(Axi4Test, BurstCrossing4k) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0xFC0, 1);  // 0xFC0..0x103F
  env.r(2, 1, 1, false);
  env.r(3, 1, 2, true);
  env.run();
  expect_only("AXI_4K", 1);
  EXPECT_NE(log().find("0xfc0..0x103f"), std::string::npos) << log();
}

TEST_F(Axi4Test, SizeNotAllowed) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x1000, 0, true, 5);
  env.r(2, 1, 1, true);
  env.run();
  expect_only("AXI_SIZE", 1);
}

TEST_F(Axi4Test, BurstTypeNotAllowed) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 0, true, 6, kBurstFixed);
  env.w(1, 1, kAll, true);
  env.b(3, 1);
  env.run();
  expect_only("AXI_BURST", 1);
}

TEST_F(Axi4Test, TooManyBeats) {
  Axi4Config cfg;
  cfg.max_beats = 16;
  cfg.allow_outstanding_at_end = true;
  AxiEnv env(ctx, cfg);
  env.ar(0, 1, 0x0, 16);
  env.run();
  expect_only("AXI_LEN", 1);
}

TEST_F(Axi4Test, WrapWithThreeBeats) {
  Axi4Config cfg;
  cfg.allowed_bursts = (1u << kBurstIncr) | (1u << kBurstWrap);
  cfg.allow_outstanding_at_end = true;
  AxiEnv env(ctx, cfg);
  env.ar(0, 1, 0x1000, 2, true, 6, kBurstWrap);
  env.run();
  expect_only("AXI_WRAP", 1);
}

TEST_F(Axi4Test, UnalignedStartWhenAlignmentRequired) {
  Axi4Config cfg;
  cfg.require_aligned = true;
  AxiEnv env(ctx, cfg);
  env.ar(0, 1, 0x1008, 0);
  env.r(2, 1, 1, true);
  env.run();
  expect_only("AXI_ALIGN", 1);
}

TEST_F(Axi4Test, WlastEarly) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 1);
  env.w(1, 1, kAll, true);
  env.w(2, 2, kAll, true);
  env.b(4, 1);
  env.run();
  expect_only("AXI_WLAST", 1);
  EXPECT_NE(log().find("WLAST on beat 1 of 2"), std::string::npos) << log();
}

TEST_F(Axi4Test, WlastMissing) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 1);
  env.w(1, 1, kAll, false);
  env.w(2, 2, kAll, false);
  env.b(4, 1);
  env.run();
  expect_only("AXI_WLAST", 1);
  EXPECT_NE(log().find("WLAST missing on beat 2 of 2"), std::string::npos) << log();
}

TEST_F(Axi4Test, StrobesBeforeAnUnalignedStart) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1010, 0);
  env.w(1, 1, kAll, true);  // lanes 0..15 lie before the start address
  env.b(3, 1);
  env.run();
  expect_only("AXI_WSTRB", 1);
}

TEST_F(Axi4Test, NarrowBeatStrobeOutsideItsLanes) {
  Axi4Config cfg;
  cfg.allowed_sizes = 0x7F;
  AxiEnv env(ctx, cfg);
  env.aw(0, 1, 0x1008, 1, true, 2);
  env.w(1, 1, 0xF00, false);
  env.w(2, 2, 0xF00, true);  // beat 2 owns lanes 12..15
  env.b(4, 1);
  env.run();
  expect_only("AXI_WSTRB", 1);
}

TEST_F(Axi4Test, BWithoutAnyWrite) {
  AxiEnv env(ctx);
  env.b(0, 3);
  env.run();
  expect_only("AXI_BID", 1);
}

TEST_F(Axi4Test, BInTheCycleOfTheLastW) {
  AxiEnv env(ctx);
  env.aw(0, 1, 0x1000, 1);
  env.w(1, 1, kAll, false);
  env.w(2, 2, kAll, true);
  env.b(2, 1, kRespOkay, false);  // presented with the last W, accepted a cycle later
  env.b(3, 1);
  env.run();
  expect_only("AXI_BID", 1);
  EXPECT_NE(log().find("before the last W beat"), std::string::npos) << log();
  EXPECT_EQ(env.writes.items.size(), 1u);
}

TEST_F(Axi4Test, BWithTheWrongId) {
  Axi4Config cfg;
  cfg.allow_outstanding_at_end = true;
  AxiEnv env(ctx, cfg);
  env.aw(0, 1, 0x1000, 0);
  env.w(0, 1, kAll, true);
  env.b(2, 2);
  env.run();
  expect_only("AXI_BID", 1);
  EXPECT_TRUE(env.writes.items.empty());
}

TEST_F(Axi4Test, RWithoutAnyRead) {
  AxiEnv env(ctx);
  env.r(0, 1, 1, true);
  env.run();
  expect_only("AXI_RID", 1);
}

TEST_F(Axi4Test, RInTheCycleOfItsAr) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x1000, 0);
  env.r(0, 1, 1, true);  // too early: dropped
  env.r(1, 1, 2, true);
  env.run();
  expect_only("AXI_RID", 1);
  EXPECT_NE(log().find("accepted only in this cycle"), std::string::npos) << log();
  ASSERT_EQ(env.reads.items.size(), 1u);
  EXPECT_EQ(env.reads.items[0].data, beats({2}));
}

TEST_F(Axi4Test, RlastEarly) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x1000, 1);
  env.r(1, 1, 1, true);
  env.r(2, 1, 2, true);
  env.run();
  expect_only("AXI_RLAST", 1);
}

TEST_F(Axi4Test, RlastMissing) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x1000, 1);
  env.r(1, 1, 1, false);
  env.r(2, 1, 2, false);
  env.run();
  expect_only("AXI_RLAST", 1);
  EXPECT_EQ(env.reads.items.size(), 1u);  // the beat count ends the burst
}

TEST_F(Axi4Test, OpenBurstsAtTheEnd) {
  AxiEnv env(ctx);
  env.ar(0, 1, 0x1000, 1);
  env.r(1, 1, 1, false);     // read: 1 of 2 beats
  env.aw(0, 2, 0x2000, 1);
  env.w(1, 1, kAll, false);  // write: 1 of 2 beats
  env.aw(2, 3, 0x3000, 0);   // write waiting for its data behind it
  env.run();
  EXPECT_EQ(errors("MON_PARTIAL"), 2u) << log();  // reads, writes short of W
  EXPECT_EQ(failures(), 2u) << log();
}

TEST_F(Axi4Test, OpenBurstsKinds) {
  AxiEnv env(ctx);
  env.aw(0, 2, 0x2000, 0);
  env.w(0, 1, kAll, true);  // complete, no B
  env.w(3, 2, kAll, true);  // W without an AW
  env.run();
  EXPECT_EQ(errors("MON_PARTIAL"), 2u) << log();
  EXPECT_EQ(failures(), 2u) << log();
}

TEST_F(Axi4Test, OpenBurstsAllowedAtTheEnd) {
  Axi4Config cfg;
  cfg.allow_outstanding_at_end = true;
  AxiEnv env(ctx, cfg);
  env.ar(0, 1, 0x1000, 1);
  env.aw(0, 2, 0x2000, 0);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  EXPECT_EQ(env.mon.outstanding_reads(), 1u);
  EXPECT_EQ(env.mon.outstanding_writes(), 1u);
}

}  // namespace
}  // namespace srnic::verif::agents::test
