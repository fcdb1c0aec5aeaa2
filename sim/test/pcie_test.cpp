// PcieBfm: read/write bandwidth and latency of the Gen3 x16 model, AXI ordering rules, rule
// violations, MMIO timing and ordering, and MSI-X ordering behind DMA writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "srnic/sim/pcie_bfm.hpp"
#include "test_drivers.hpp"

namespace srnic::sim::test {
namespace {

constexpr uint64_t kBase = 0x1000'0000'0000ULL;

uint8_t pattern_byte(uint64_t addr) {
  SplitMix64 g(addr >> 3);
  return static_cast<uint8_t>(g.next() >> (8 * (addr & 7)));
}

void fill_pattern(HostMemory& m, uint64_t addr, uint64_t len) {
  std::vector<uint8_t> buf(len);
  for (uint64_t i = 0; i < len; ++i) buf[i] = pattern_byte(addr + i);
  m.write(addr, buf.data(), len);
}

struct Bench {
  HostMemory mem;
  PcieBfm<TestTop> pcie;
  TestTop top;
  AxiMaster axi;
  AxilRegs regs;
  uint64_t cycle = 0;
  std::vector<Violation> viols;

  explicit Bench(const PcieConfig& cfg = {}, Clock clk = {}) : pcie(mem, cfg, clk) {
    pcie.set_violation_handler([this](const Violation& v) { viols.push_back(v); });
    drive();
  }
  void drive() {
    pcie.drive(top, cycle);
    axi.drive(top, cycle);
    regs.drive(top, cycle);
  }
  void step() {
    pcie.sample(top, cycle);
    axi.sample(top, cycle);
    regs.sample(top, cycle);
    ++cycle;
    drive();
  }
  template <class P>
  bool run_until(P done, uint64_t max_cycles) {
    for (uint64_t i = 0;; ++i) {
      if (done()) return true;  // evaluated once per cycle: predicates may consume results
      if (i == max_cycles) return false;
      step();
    }
  }
  double ns(uint64_t c) const { return pcie.clock().ns(c); }
};

double expected_gbytes_per_s(const PcieConfig& c) {
  return c.max_payload / double(c.max_payload + c.tlp_overhead) * c.tlp_gbytes_per_s();
}

TEST(PcieBfm, LinkRateFigures) {
  PcieConfig c;
  EXPECT_NEAR(c.raw_gbytes_per_s(), 15.754, 0.001);
  EXPECT_NEAR(expected_gbytes_per_s(c), 256.0 / 280.0 * 15.754 * 0.98, 0.002);
}

TEST(PcieBfm, SingleReadLatencyEqualsRoundTrip) {
  for (double mhz : {300.0, 250.0}) {
    PcieConfig cfg;
    cfg.read_jitter_max_ns = 0;
    Bench b(cfg, Clock{mhz});
    fill_pattern(b.mem, kBase, 8192);
    b.run_until([] { return false; }, 10);
    b.axi.read(3, kBase + 0x40, 1);
    ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == 1; }, 10000));
    const auto& r = b.axi.done[0];
    const double lat = b.ns(r.first_cycle) - b.ns(r.ar_cycle);
    const double period = 1000.0 / mhz;
    EXPECT_GE(lat, 1100.0) << mhz;
    EXPECT_LE(lat, 1100.0 + 3 * period) << mhz;
    EXPECT_EQ(b.mem.first_difference(kBase + 0x40, r.data.data(), 64), -1);
    EXPECT_NEAR(b.pcie.read_latency().percentile(0.5), 1100.0, 3 * period + 10);

    // A 4 KiB burst on an idle link: the first beat arrives with the first 256-byte completion.
    b.axi.read(0, kBase + 0x1000, 64);
    ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == 2; }, 10000));
    const auto& r2 = b.axi.done[1];
    const double lat2 = b.ns(r2.first_cycle) - b.ns(r2.ar_cycle);
    EXPECT_GE(lat2, 1100.0);
    EXPECT_LE(lat2, 1100.0 + 3 * period + 8 * 24 / b.pcie.config().tlp_gbytes_per_s());
    // Whole burst paced by the downstream link: 16 CplDs of 280 wire bytes, each releasing its
    // 4 beats on arrival.
    const double burst_ns = b.ns(r2.last_cycle) - b.ns(r2.first_cycle);
    EXPECT_NEAR(burst_ns, 15 * 280 / b.pcie.config().tlp_gbytes_per_s() + 3 * period, period);
    EXPECT_EQ(b.mem.first_difference(kBase + 0x1000, r2.data.data(), 4096), -1);
    EXPECT_EQ(b.pcie.stats().mrd_tlps, 1u + 8u);
    EXPECT_EQ(b.pcie.stats().cpl_tlps, 1u + 16u);
    EXPECT_TRUE(b.viols.empty());
  }
}

TEST(PcieBfm, ReadBandwidthConvergesToLinkRate) {
  Bench b;
  constexpr unsigned kReads = 1024;
  fill_pattern(b.mem, kBase, kReads * 4096ULL);
  for (unsigned i = 0; i < kReads; ++i) b.axi.read(static_cast<uint8_t>(i % 4), kBase + i * 4096ULL, 64);
  ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == kReads; }, 2'000'000));
  std::vector<uint64_t> ends;
  for (const auto& r : b.axi.done) ends.push_back(r.last_cycle);
  std::sort(ends.begin(), ends.end());
  const unsigned from = 128;
  const double bytes = double(kReads - 1 - from) * 4096;
  const double gbps = bytes / (b.ns(ends.back()) - b.ns(ends[from]));
  const double expect = expected_gbytes_per_s(b.pcie.config());
  EXPECT_NEAR(gbps / expect, 1.0, 0.01) << gbps << " GB/s vs " << expect;
  for (const auto& r : b.axi.done)
    ASSERT_EQ(b.mem.first_difference(r.addr, r.data.data(), r.data.size()), -1) << std::hex << r.addr;
  EXPECT_EQ(b.pcie.stats().cpl_tlps, kReads * 16u);
  EXPECT_EQ(b.pcie.stats().mrd_tlps, kReads * 8u);
  EXPECT_EQ(b.pcie.stats().read_bytes, kReads * 4096ULL);
  EXPECT_EQ(b.axi.interleaves, 0u);
  EXPECT_EQ(b.axi.errors, 0u);
  EXPECT_TRUE(b.viols.empty());
  EXPECT_TRUE(b.pcie.idle());
}

// Completion order of single-beat reads issued back to back over 4 IDs: inversions between IDs
// (only possible through per-request jitter), none within an ID.
unsigned count_cross_id_inversions(const PcieConfig& cfg, unsigned* same_id_inversions) {
  Bench b(cfg);
  fill_pattern(b.mem, kBase, 64 * 1024);
  SplitMix64 g(7);
  for (unsigned i = 0; i < 400; ++i) b.axi.read(static_cast<uint8_t>(g.next() % 4), kBase + (g.next() % 1024) * 64, 1);
  EXPECT_TRUE(b.run_until([&] { return b.axi.done.size() == 400; }, 200'000));
  unsigned cross = 0, same = 0;
  for (size_t i = 0; i < b.axi.done.size(); ++i)
    for (size_t j = i + 1; j < b.axi.done.size(); ++j) {
      const auto &x = b.axi.done[i], &y = b.axi.done[j];
      if (y.seq < x.seq) (x.id == y.id ? same : cross)++;
    }
  for (const auto& r : b.axi.done)
    EXPECT_EQ(b.mem.first_difference(r.addr, r.data.data(), 64), -1);
  EXPECT_TRUE(b.viols.empty());
  *same_id_inversions = same;
  return cross;
}

TEST(PcieBfm, JitterReordersAcrossIdsButNotWithinAnId) {
  unsigned same = 0;
  EXPECT_GT(count_cross_id_inversions(PcieConfig{}, &same), 10u);
  EXPECT_EQ(same, 0u);
  PcieConfig nojitter;
  nojitter.read_jitter_max_ns = 0;
  EXPECT_EQ(count_cross_id_inversions(nojitter, &same), 0u);
  EXPECT_EQ(same, 0u);
}

TEST(PcieBfm, MixedBurstsNeverInterleaveAndKeepIdOrder) {
  PcieConfig cfg;
  cfg.read_jitter_max_ns = 200;
  Bench b(cfg);
  fill_pattern(b.mem, kBase, 256 * 4096);
  SplitMix64 g(11);
  for (unsigned i = 0; i < 600; ++i) {
    const unsigned beats = 1 + g.next() % 64;
    const unsigned off = static_cast<unsigned>(g.next() % (65 - beats));
    b.axi.read(static_cast<uint8_t>(g.next() % 4), kBase + (g.next() % 256) * 4096 + off * 64ULL, beats);
  }
  ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == 600; }, 2'000'000));
  EXPECT_EQ(b.axi.interleaves, 0u);
  EXPECT_EQ(b.axi.errors, 0u);
  uint64_t last_seq[4] = {0, 0, 0, 0};
  bool first[4] = {true, true, true, true};
  unsigned reordered = 0;
  uint64_t prev = 0;
  for (const auto& r : b.axi.done) {
    if (!first[r.id]) {
      EXPECT_GT(r.seq, last_seq[r.id]);
    }
    first[r.id] = false;
    last_seq[r.id] = r.seq;
    if (r.seq < prev) ++reordered;
    prev = r.seq;
    ASSERT_EQ(b.mem.first_difference(r.addr, r.data.data(), r.data.size()), -1);
  }
  EXPECT_GT(reordered, 0u);
  EXPECT_TRUE(b.viols.empty());
}

TEST(PcieBfm, ReportsAxiRuleViolations) {
  PcieConfig cfg;
  cfg.max_outstanding_reads = 1;
  Bench b(cfg);
  auto has = [&](const char* ch, const char* text) {
    return std::any_of(b.viols.begin(), b.viols.end(), [&](const Violation& v) {
      return v.channel == ch && v.what.find(text) != std::string::npos;
    });
  };
  b.axi.read(0, kBase + 0xFC0, 2);  // crosses 4 KiB
  ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == 1; }, 10000));
  EXPECT_EQ(b.viols.size(), 1u);
  EXPECT_TRUE(has("pcie.AR", "4 KiB"));
  EXPECT_EQ(b.axi.done[0].data.size(), 128u);  // still served

  b.axi.read(1, kBase, 1, /*size=*/5, /*burst=*/2);
  ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == 2; }, 10000));
  EXPECT_TRUE(has("pcie.AR", "size 5"));
  EXPECT_TRUE(has("pcie.AR", "INCR"));

  // wlast on beat 2 of 4 and none on beat 4.
  AxiMaster::Write w{0, kBase + 0x2000, std::vector<uint8_t>(256, 1)};
  w.wlast_beat = 1;
  b.axi.write(w);
  ASSERT_TRUE(b.run_until([&] { return b.axi.b_count == 1; }, 10000));
  EXPECT_TRUE(has("pcie.W", "wlast on beat 2 of a 4-beat burst"));
  EXPECT_TRUE(has("pcie.W", "wlast missing"));

  // AR payload changed while waiting: the second read waits for the only read slot.
  const size_t before = b.viols.size();
  b.axi.read(0, kBase, 64);
  b.axi.read(1, kBase + 0x3000, 1);
  bool poked = false;
  ASSERT_TRUE(b.run_until(
      [&] {
        if (!poked && b.top.m_axi_arvalid && !b.top.m_axi_arready && b.top.m_axi_arid == 1) {
          b.top.m_axi_araddr += 64;
          poked = true;
        }
        return b.axi.done.size() == 4;
      },
      20000));
  EXPECT_TRUE(poked);
  EXPECT_GT(b.viols.size(), before);
  EXPECT_TRUE(has("pcie.AR", "payload changed"));
  EXPECT_EQ(b.pcie.violations(), b.viols.size());
}

TEST(PcieBfm, PostedWritesAppliedInOrderWithLatency) {
  Bench b;
  // A single beat: leaves after its 88 wire bytes, applied write_latency_ns later.
  std::vector<uint8_t> d(64, 0x77);
  b.axi.write(2, kBase + 0x40, d);
  ASSERT_TRUE(b.run_until([&] { return b.mem.read_u8(kBase + 0x40) == 0x77; }, 10000));
  ASSERT_EQ(b.axi.writes_done.size(), 1u);
  const double edge = b.ns(b.axi.writes_done[0].w_done_cycle + 1);
  const double lat = b.ns(b.cycle) - edge;
  const double ser = 88 / b.pcie.config().tlp_gbytes_per_s();
  EXPECT_GE(lat, 400 + ser);
  EXPECT_LT(lat, 400 + ser + b.pcie.clock().period_ns() + 1e-9);

  // Payload X (4 KiB) then flag Y, 40 times: whenever Y shows k, all of X shows >= k.
  const uint64_t X = kBase + 0x10000, Y = kBase + 0x20000;
  for (int k = 1; k <= 40; ++k) {
    b.axi.write(0, X, std::vector<uint8_t>(4096, static_cast<uint8_t>(k)));
    b.axi.write(0, Y, std::vector<uint8_t>(64, static_cast<uint8_t>(k)));
  }
  unsigned bad = 0, checks = 0;
  ASSERT_TRUE(b.run_until(
      [&] {
        const uint8_t f = b.mem.read_u8(Y);
        if (f) {
          ++checks;
          if (b.mem.read_u8(X + 4095) < f || b.mem.read_u8(X) < f) ++bad;
        }
        return b.axi.idle() && b.pcie.idle();
      },
      200000));
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(checks, 100u);
  EXPECT_EQ(b.mem.read_u8(X + 1234), 40);
  EXPECT_EQ(b.mem.read_u8(Y), 40);
  EXPECT_EQ(b.axi.b_count, 81u);
  EXPECT_EQ(b.pcie.stats().write_bursts, 81u);
  EXPECT_TRUE(b.viols.empty());
}

// Posted-write reordering (PcieConfig::write_order): payload X on one ID, flag Y after it. In
// order, and with AcrossIds when both use one ID, Y never shows before X; with X and Y on
// different IDs (AcrossIds) or with All, Y overtakes X. The write observer sees every beat in
// the order it is applied.
TEST(PcieBfm, PostedWriteReorderingModes) {
  struct Mode {
    PcieConfig::WriteOrder order;
    uint8_t flag_id;
    bool may_pass;
  };
  for (const Mode& m : {Mode{PcieConfig::WriteOrder::InOrder, 1, false},
                        Mode{PcieConfig::WriteOrder::AcrossIds, 0, false},
                        Mode{PcieConfig::WriteOrder::AcrossIds, 1, true},
                        Mode{PcieConfig::WriteOrder::All, 0, true}}) {
    PcieConfig cfg;
    cfg.write_order = m.order;
    Bench b(cfg);
    const uint64_t X = kBase + 0x10000, Y = kBase + 0x20000;
    uint64_t beats = 0;
    unsigned passed = 0, seen = 0;
    b.pcie.set_write_observer([&](uint64_t addr, const uint8_t* data, uint64_t strb, double) {
      ++beats;
      EXPECT_EQ(strb, ~0ULL);
      EXPECT_EQ(b.mem.read_u8(addr), data[0]);  // applied before the observer runs
      if (addr == Y) {
        ++seen;
        if (b.mem.read_u8(X) < data[0] || b.mem.read_u8(X + 4095) < data[0]) ++passed;
      }
    });
    for (int k = 1; k <= 40; ++k) {
      b.axi.write(0, X, std::vector<uint8_t>(4096, static_cast<uint8_t>(k)));
      b.axi.write(m.flag_id, Y, std::vector<uint8_t>(64, static_cast<uint8_t>(k)));
    }
    ASSERT_TRUE(b.run_until([&] { return b.axi.idle() && b.pcie.idle(); }, 200000));
    EXPECT_EQ(beats, 40u * 65);
    EXPECT_EQ(seen, 40u);
    if (m.may_pass)
      EXPECT_GT(passed, 0u) << "mode " << int(m.order);
    else
      EXPECT_EQ(passed, 0u) << "mode " << int(m.order);
    EXPECT_EQ(b.mem.read_u8(X + 1234), 40);
    EXPECT_TRUE(b.viols.empty());
  }
}

// PCIe ordering with a slow posted path: a DMA read, or an MMIO read's completion, issued after a
// DMA write still observes that write.
TEST(PcieBfm, ReadsDoNotPassPostedWrites) {
  PcieConfig cfg;
  cfg.write_latency_ns = 3000;  // longer than any read round trip
  Bench b(cfg);
  const uint64_t X = kBase + 0x4000;
  b.axi.write(0, X, std::vector<uint8_t>(128, 0x5A));
  ASSERT_TRUE(b.run_until([&] { return !b.axi.writes_done.empty(); }, 1000));
  b.axi.read(1, X, 2);
  const uint64_t tok = b.pcie.mmio_read_issue(0x0);
  uint32_t v = 0;
  bool mmio_done = false, mem_seen_at_mmio = false;
  ASSERT_TRUE(b.run_until(
      [&] {
        if (!mmio_done && b.pcie.mmio_read_done(tok, v)) {
          mmio_done = true;
          mem_seen_at_mmio = b.mem.read_u8(X + 127) == 0x5A;
        }
        return mmio_done && b.axi.done.size() == 1;
      },
      10000));
  EXPECT_TRUE(mem_seen_at_mmio);
  EXPECT_EQ(b.axi.done[0].data, std::vector<uint8_t>(128, 0x5A));
  // The DMA read returned well before the write's own 3 us latency.
  EXPECT_LT(b.ns(b.axi.done[0].last_cycle) - b.ns(b.axi.writes_done[0].w_done_cycle), 2000.0);
  EXPECT_TRUE(b.viols.empty());
}

TEST(PcieBfm, WriteStreamBackpressuredToLinkRate) {
  Bench b;
  constexpr unsigned kWrites = 512;
  for (unsigned i = 0; i < kWrites; ++i) {
    std::vector<uint8_t> d(4096);
    for (unsigned j = 0; j < 4096; ++j) d[j] = pattern_byte(kBase + i * 4096ULL + j);
    b.axi.write(0, kBase + i * 4096ULL, d);
  }
  ASSERT_TRUE(b.run_until([&] { return b.axi.idle() && b.pcie.idle(); }, 2'000'000));
  const auto& w = b.axi.writes_done;
  ASSERT_EQ(w.size(), kWrites);
  const unsigned from = 128;
  const double gbps = double(kWrites - 1 - from) * 4096 / (b.ns(w.back().w_done_cycle) - b.ns(w[from].w_done_cycle));
  EXPECT_NEAR(gbps / expected_gbytes_per_s(b.pcie.config()), 1.0, 0.01) << gbps;
  EXPECT_GT(b.pcie.stats().w_backpressure_cycles, 1000u);
  EXPECT_EQ(b.pcie.stats().mwr_tlps, kWrites * 16u);
  EXPECT_EQ(b.pcie.stats().up_wire_bytes, kWrites * 16u * 280u);
  EXPECT_EQ(b.pcie.stats().write_bytes, kWrites * 4096ULL);
  for (unsigned i = 0; i < kWrites; i += 37)
    for (unsigned j = 0; j < 4096; j += 61) ASSERT_EQ(b.mem.read_u8(kBase + i * 4096ULL + j), pattern_byte(kBase + i * 4096ULL + j));
  EXPECT_TRUE(b.viols.empty());
}

TEST(PcieBfm, PartialStrobesWriteOnlyEnabledBytes) {
  Bench b;
  b.mem.fill(kBase, 0xEE, 128);
  AxiMaster::Write w{0, kBase, std::vector<uint8_t>(128, 0x11)};
  w.last_strb = 0xFF;  // second beat: 8 bytes
  b.axi.write(w);
  ASSERT_TRUE(b.run_until([&] { return b.axi.idle() && b.pcie.idle(); }, 10000));
  EXPECT_EQ(b.mem.read_u8(kBase + 63), 0x11);
  EXPECT_EQ(b.mem.read_u8(kBase + 71), 0x11);
  EXPECT_EQ(b.mem.read_u8(kBase + 72), 0xEE);
  EXPECT_EQ(b.pcie.stats().write_bytes, 72u);
  EXPECT_EQ(b.pcie.stats().up_payload_bytes, 72u);
}

TEST(PcieBfm, MmioTimingAndOrder) {
  Bench b;
  b.run_until([] { return false; }, 10);
  const uint64_t c0 = b.cycle;
  b.pcie.mmio_write(0x10, 0xABCD);
  ASSERT_TRUE(b.run_until([&] { return !b.regs.log.empty(); }, 1000));
  const double wlat = b.ns(b.regs.log[0].cycle) - b.ns(c0);
  EXPECT_GE(wlat, 200.0);
  EXPECT_LT(wlat, 200.0 + b.pcie.clock().period_ns() + 1e-9);
  EXPECT_EQ(b.regs.regs[0x10], 0xABCDu);

  const uint64_t c1 = b.cycle;
  const uint64_t tok = b.pcie.mmio_read_issue(0x10);
  uint32_t v = 0;
  ASSERT_TRUE(b.run_until([&] { return b.pcie.mmio_read_done(tok, v); }, 2000));
  EXPECT_EQ(v, 0xABCDu);
  const double rt = b.ns(b.cycle) - b.ns(c1);
  EXPECT_GE(rt, 900.0);
  EXPECT_LE(rt, 900.0 + 4 * b.pcie.clock().period_ns());
  EXPECT_FALSE(b.pcie.mmio_read_done(tok, v));  // consumed

  // A read issued right after a write sees it; a read issued before a write does not.
  b.pcie.mmio_write(0x20, 7);
  const uint64_t t1 = b.pcie.mmio_read_issue(0x20);
  const uint64_t t2 = b.pcie.mmio_read_issue(0x30);
  b.pcie.mmio_write(0x30, 5);
  for (uint32_t i = 1; i <= 3; ++i) b.pcie.mmio_write(0x40, i);
  uint32_t v1 = 99, v2 = 99;
  bool d1 = false, d2 = false;
  ASSERT_TRUE(b.run_until(
      [&] {
        d1 = d1 || b.pcie.mmio_read_done(t1, v1);
        d2 = d2 || b.pcie.mmio_read_done(t2, v2);
        return d1 && d2 && b.pcie.mmio_pending() == 0;
      },
      5000));
  EXPECT_EQ(v1, 7u);
  EXPECT_EQ(v2, 0u);
  EXPECT_EQ(b.regs.regs[0x30], 5u);
  std::vector<uint32_t> seq;
  for (const auto& a : b.regs.log)
    if (a.write && a.addr == 0x40) seq.push_back(a.data);
  EXPECT_EQ(seq, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(b.pcie.stats().mmio_writes, 6u);
  EXPECT_EQ(b.pcie.stats().mmio_reads, 3u);
  EXPECT_TRUE(b.viols.empty());
}

TEST(PcieBfm, InterruptArrivesAfterPrecedingWrites) {
  Bench b;
  const uint64_t cqe = kBase + 0x8000;
  int seen_value = -1;
  double t_irq = 0;
  b.pcie.set_irq_handler([&](uint16_t vec, double t) {
    EXPECT_EQ(vec, 5);
    seen_value = b.mem.read_u8(cqe);
    t_irq = t;
  });
  b.axi.write(0, cqe, std::vector<uint8_t>(64, 0x3C));
  ASSERT_TRUE(b.run_until([&] { return !b.axi.writes_done.empty(); }, 1000));
  // Raise the interrupt for one cycle right after the write's data was accepted.
  b.top.irq_valid = 1;
  b.top.irq_vector = 5;
  const uint64_t irq_cycle = b.cycle;
  b.step();
  b.top.irq_valid = 0;
  ASSERT_TRUE(b.run_until([&] { return b.pcie.irq_count(5) == 1; }, 1000));
  EXPECT_EQ(seen_value, 0x3C);
  // The MSI-X TLP queues behind the write's 88 wire bytes on the upstream link.
  const double rate = b.pcie.config().tlp_gbytes_per_s();
  const double w_dep = b.ns(b.axi.writes_done[0].w_done_cycle + 1) + 88 / rate;
  EXPECT_NEAR(t_irq, std::max(w_dep, b.ns(irq_cycle + 1)) + 28 / rate + 400, 1e-6);
  EXPECT_EQ(b.pcie.stats().irqs, 1u);
  EXPECT_EQ(b.pcie.irq_count(4), 0u);
}

}  // namespace
}  // namespace srnic::sim::test
