// PcieBfm: read/write bandwidth and latency of the Gen3 x16 model, AXI ordering rules, rule
// violations, MMIO timing and ordering, MSI-X ordering behind DMA writes, and injected DMA
// errors (SLVERR / DECERR by address range, burst number and seeded rate).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
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

// ---------------------------------------------------------------------------------- errors

PcieErrorRule rule(PcieErrorRule::Channel ch, uint8_t resp = PcieErrorRule::kSlvErr) {
  PcieErrorRule r;
  r.channel = ch;
  r.resp = resp;
  return r;
}
constexpr auto kRd = PcieErrorRule::Channel::Read;
constexpr auto kWr = PcieErrorRule::Channel::Write;

bool all_ff(const std::vector<uint8_t>& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](uint8_t x) { return x == 0xFF; });
}

// What a mixed run of reads and writes did, cycle by cycle.
struct Trace {
  std::vector<uint64_t> reads;   // per read in completion order: seq, first and last cycle
  std::vector<uint8_t> read_data, rresp;
  std::vector<uint64_t> w_done;  // per write: the cycle its last beat was accepted
  std::vector<uint8_t> bid, bresp;
  std::vector<double> landed;    // observer: address and time of every beat
  PcieStats stats;
  double p50 = 0, p99 = 0;
  uint64_t cycles = 0;
};

Trace run_mixed(const PcieConfig& cfg) {
  Bench b(cfg);
  Trace tr;
  fill_pattern(b.mem, kBase, 64 * 4096);
  b.pcie.set_write_observer([&](uint64_t addr, const uint8_t*, uint64_t, double t) {
    tr.landed.push_back(double(addr - kBase));
    tr.landed.push_back(t);
  });
  SplitMix64 g(21);
  for (unsigned i = 0; i < 300; ++i) {
    const unsigned beats = 1 + g.next() % 64;
    const uint64_t addr = kBase + (g.next() % 64) * 4096;
    if (g.next() % 3 == 0)
      b.axi.write(static_cast<uint8_t>(g.next() % 4), addr + 0x80000, std::vector<uint8_t>(beats * 64, uint8_t(i)));
    else
      b.axi.read(static_cast<uint8_t>(g.next() % 4), addr, beats);
  }
  EXPECT_TRUE(b.run_until([&] { return b.axi.idle() && b.pcie.idle(); }, 2'000'000));
  for (const auto& r : b.axi.done) {
    tr.reads.insert(tr.reads.end(), {r.seq, r.first_cycle, r.last_cycle});
    tr.read_data.insert(tr.read_data.end(), r.data.begin(), r.data.end());
    tr.rresp.insert(tr.rresp.end(), r.resp.begin(), r.resp.end());
  }
  for (const auto& w : b.axi.writes_done) tr.w_done.push_back(w.w_done_cycle);
  for (const auto& x : b.axi.b_log) {
    tr.bid.push_back(x.id);
    tr.bresp.push_back(x.resp);
  }
  tr.stats = b.pcie.stats();
  tr.p50 = b.pcie.read_latency().percentile(0.5);
  tr.p99 = b.pcie.read_latency().percentile(0.99);
  tr.cycles = b.cycle;
  EXPECT_TRUE(b.viols.empty());
  return tr;
}

// Rules that select nothing (a range no burst touches, an nth beyond the run, rate rules that
// draw for every burst) leave the run cycle for cycle as it is without rules: the error draws
// come from their own streams, never from the jitter or reordering stream.
TEST(PcieErrors, RulesThatSelectNothingChangeNothing) {
  PcieConfig plain;
  plain.read_jitter_max_ns = 300;
  plain.write_order = PcieConfig::WriteOrder::AcrossIds;
  PcieConfig ruled = plain;
  PcieErrorRule far = rule(kRd);
  far.lo = 0x10;
  far.hi = 0x20;
  PcieErrorRule late = rule(kWr, PcieErrorRule::kDecErr);
  late.nth = 1'000'000;
  PcieErrorRule drawn = rule(kRd);  // draws for every read, selects none (no read is that low)
  drawn.rate = 1;
  drawn.lo = 0x40;
  drawn.hi = 0x80;
  PcieErrorRule drawn_w = rule(kWr);
  drawn_w.rate = 0.5;
  drawn_w.nth = 1'000'000;
  ruled.errors.rules = {far, late, drawn, drawn_w};

  const Trace a = run_mixed(plain), b = run_mixed(ruled);
  EXPECT_GT(a.reads.size(), 3u * 150);
  EXPECT_GT(a.bresp.size(), 50u);
  EXPECT_GT(a.landed.size(), 2u * 1000);
  EXPECT_EQ(a.reads, b.reads);
  EXPECT_EQ(a.read_data, b.read_data);
  EXPECT_EQ(a.rresp, b.rresp);
  EXPECT_EQ(a.w_done, b.w_done);
  EXPECT_EQ(a.bid, b.bid);
  EXPECT_EQ(a.bresp, b.bresp);
  EXPECT_EQ(a.landed, b.landed);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.p50, b.p50);
  EXPECT_EQ(a.p99, b.p99);
  EXPECT_EQ(a.stats.up_wire_bytes, b.stats.up_wire_bytes);
  EXPECT_EQ(a.stats.down_wire_bytes, b.stats.down_wire_bytes);
  EXPECT_EQ(a.stats.up_busy_ns, b.stats.up_busy_ns);
  EXPECT_EQ(a.stats.read_bursts, b.stats.read_bursts);
  EXPECT_EQ(a.stats.write_bursts, b.stats.write_bursts);
  EXPECT_EQ(a.stats.w_backpressure_cycles, b.stats.w_backpressure_cycles);
  EXPECT_EQ(std::count(a.rresp.begin(), a.rresp.end(), 0), long(a.rresp.size()));
  EXPECT_EQ(std::count(a.bresp.begin(), a.bresp.end(), 0), long(a.bresp.size()));
  EXPECT_EQ(b.stats.rd_err_bursts + b.stats.wr_err_bursts + b.stats.rd_err_beats, 0u);
}

// A read burst overlapping [lo, hi) returns every beat with the code and all-0xFF data; bursts
// that end at lo or start at hi are served from memory.
TEST(PcieErrors, ReadAddressRangeSlverrAndDecerr) {
  for (uint8_t code : {PcieErrorRule::kSlvErr, PcieErrorRule::kDecErr}) {
    PcieConfig cfg;
    PcieErrorRule r = rule(kRd, code);
    r.lo = kBase + 0x2100;
    r.hi = kBase + 0x2140;
    cfg.errors.rules = {r};
    Bench b(cfg);
    fill_pattern(b.mem, kBase, 0x4000);
    b.axi.read(0, kBase + 0x2000, 4);   // ends at lo: served
    b.axi.read(1, kBase + 0x2000, 5);   // last beat overlaps: error
    b.axi.read(2, kBase + 0x2140, 2);   // starts at hi: served
    b.axi.read(3, kBase + 0x2000, 64);  // covers the range: error
    b.axi.read(0, kBase + 0x2100, 1);   // inside: error
    ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == 5; }, 20000));
    const bool want_err[] = {false, true, false, true, true};
    uint64_t err_beats = 0;
    for (const auto& rd : b.axi.done) {
      ASSERT_EQ(rd.resp.size(), rd.beats);
      if (want_err[rd.seq]) {
        err_beats += rd.beats;
        EXPECT_TRUE(all_ff(rd.data)) << rd.seq;
        EXPECT_TRUE(std::all_of(rd.resp.begin(), rd.resp.end(), [&](uint8_t x) { return x == code; })) << rd.seq;
      } else {
        EXPECT_EQ(b.mem.first_difference(rd.addr, rd.data.data(), rd.data.size()), -1) << rd.seq;
        EXPECT_EQ(std::count(rd.resp.begin(), rd.resp.end(), 0), long(rd.beats)) << rd.seq;
      }
    }
    EXPECT_EQ(b.pcie.stats().rd_err_bursts, 3u);
    EXPECT_EQ(b.pcie.stats().rd_err_beats, err_beats);
    EXPECT_EQ(b.pcie.stats().read_bursts, 5u);
    EXPECT_EQ(b.pcie.stats().wr_err_bursts, 0u);
    EXPECT_EQ(b.axi.errors, 0u);
    EXPECT_TRUE(b.viols.empty());
    // The memory itself was never touched.
    EXPECT_EQ(b.mem.read_u8(kBase + 0x2100), pattern_byte(kBase + 0x2100));
  }
}

// A write burst overlapping the range is not applied (none of its beats, also across its 16
// TLPs), the observer never sees it, and its B carries the code; the others land as usual.
TEST(PcieErrors, WriteAddressRangeIsNotApplied) {
  for (uint8_t code : {PcieErrorRule::kDecErr, PcieErrorRule::kSlvErr}) {
    PcieConfig cfg;
    PcieErrorRule r = rule(kWr, code);
    r.lo = kBase + 0x1FFF;
    r.hi = kBase + 0x2001;
    cfg.errors.rules = {r};
    Bench b(cfg);
    b.mem.fill(kBase, 0xEE, 0x8000);
    std::vector<uint64_t> seen;
    b.pcie.set_write_observer([&](uint64_t addr, const uint8_t*, uint64_t, double) { seen.push_back(addr); });
    b.axi.write(0, kBase + 0x1000, std::vector<uint8_t>(4096, 0x11));  // last byte at lo: error
    b.axi.write(1, kBase + 0x3000, std::vector<uint8_t>(128, 0x22));   // outside: applied
    b.axi.write(2, kBase + 0x2000, std::vector<uint8_t>(64, 0x33));    // first byte below hi: error
    b.axi.write(3, kBase + 0x2040, std::vector<uint8_t>(64, 0x44));    // above: applied
    ASSERT_TRUE(b.run_until([&] { return b.axi.idle() && b.pcie.idle(); }, 50000));
    for (uint64_t a = kBase + 0x1000; a < kBase + 0x2040; ++a) ASSERT_EQ(b.mem.read_u8(a), 0xEE) << std::hex << a;
    EXPECT_EQ(b.mem.read_u8(kBase + 0x3000), 0x22);
    EXPECT_EQ(b.mem.read_u8(kBase + 0x307F), 0x22);
    EXPECT_EQ(b.mem.read_u8(kBase + 0x2040), 0x44);
    EXPECT_EQ(seen, (std::vector<uint64_t>{kBase + 0x3000, kBase + 0x3040, kBase + 0x2040}));
    ASSERT_EQ(b.axi.b_log.size(), 4u);
    const uint8_t want[] = {code, 0, code, 0};
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(b.axi.b_log[i].id, i);
      EXPECT_EQ(b.axi.b_log[i].resp, want[i]) << i;
    }
    EXPECT_EQ(b.pcie.stats().wr_err_bursts, 2u);
    EXPECT_EQ(b.pcie.stats().write_bursts, 4u);
    EXPECT_EQ(b.pcie.stats().mwr_tlps, 16u + 1 + 1 + 1);  // the link carried them all
    EXPECT_EQ(b.pcie.stats().rd_err_bursts, 0u);
    // A read of the range afterwards sees the old contents (it is not an error: reads have no rule).
    b.axi.read(0, kBase + 0x1F80, 2);
    b.axi.read(0, kBase + 0x2000, 1);
    ASSERT_TRUE(b.run_until([&] { return b.axi.done.size() == 2; }, 10000));
    EXPECT_EQ(b.axi.done[0].data, std::vector<uint8_t>(128, 0xEE));
    EXPECT_EQ(b.axi.done[1].data, std::vector<uint8_t>(64, 0xEE));
    EXPECT_TRUE(b.viols.empty());
  }
}

// nth counts the handshakes of its own channel: read nth=3 hits the third AR, whatever the
// writes in between; write nth=2 the second AW. Two rules that both select a burst: the first
// gives the code.
TEST(PcieErrors, NthBurstOfEachChannel) {
  PcieConfig cfg;
  PcieErrorRule r3 = rule(kRd);
  r3.nth = 3;
  PcieErrorRule r3d = rule(kRd, PcieErrorRule::kDecErr);  // also the 3rd, and the 5th: 3rd is SLVERR by order
  r3d.rate = 1;
  r3d.lo = kBase + 0x4000;
  r3d.hi = kBase + 0x5000;
  PcieErrorRule w2 = rule(kWr, PcieErrorRule::kDecErr);
  w2.nth = 2;
  cfg.errors.rules = {r3, w2, r3d};
  Bench b(cfg);
  fill_pattern(b.mem, kBase, 0x8000);
  b.mem.fill(kBase + 0x10000, 0xEE, 0x1000);
  for (unsigned i = 0; i < 6; ++i) {
    // The 3rd read (seq 2) and the 5th (seq 4) are in 0x4000..0x4FFF.
    const uint64_t at = (i == 2 || i == 4) ? 0x4000 + i * 0x100 : i * 0x800;
    b.axi.read(static_cast<uint8_t>(i), kBase + at, 2);
    b.axi.write(static_cast<uint8_t>(i), kBase + 0x10000 + i * 0x100, std::vector<uint8_t>(64, uint8_t(i + 1)));
  }
  ASSERT_TRUE(b.run_until([&] { return b.axi.idle() && b.pcie.idle(); }, 50000));
  ASSERT_EQ(b.axi.done.size(), 6u);
  for (const auto& rd : b.axi.done) {
    const uint8_t want = rd.seq == 2 ? PcieErrorRule::kSlvErr : rd.seq == 4 ? PcieErrorRule::kDecErr : 0;
    EXPECT_EQ(rd.resp, std::vector<uint8_t>(2, want)) << rd.seq;
    if (want)
      EXPECT_TRUE(all_ff(rd.data)) << rd.seq;
    else
      EXPECT_EQ(b.mem.first_difference(rd.addr, rd.data.data(), 128), -1) << rd.seq;
  }
  ASSERT_EQ(b.axi.b_log.size(), 6u);
  for (unsigned i = 0; i < 6; ++i) {
    EXPECT_EQ(b.axi.b_log[i].resp, i == 1 ? PcieErrorRule::kDecErr : 0) << i;
    EXPECT_EQ(b.mem.read_u8(kBase + 0x10000 + i * 0x100), i == 1 ? 0xEE : i + 1) << i;
  }
  EXPECT_EQ(b.pcie.stats().rd_err_bursts, 2u);
  EXPECT_EQ(b.pcie.stats().rd_err_beats, 4u);
  EXPECT_EQ(b.pcie.stats().wr_err_bursts, 1u);
}

// Which bursts a rate rule selects depends on the seed and the burst's number only: the same
// seed gives the same bursts (also with other jitter, which changes the completion order), another
// seed others, and about rate x bursts of them.
std::vector<uint64_t> random_errors(uint64_t seed, double jitter_ns, PcieErrorRule::Channel ch) {
  PcieConfig cfg;
  cfg.seed = seed;
  cfg.read_jitter_max_ns = jitter_ns;
  PcieErrorRule r = rule(ch);
  r.rate = 0.25;
  cfg.errors.rules = {r};
  Bench b(cfg);
  fill_pattern(b.mem, kBase, 0x10000);
  b.mem.fill(kBase + 0x10000, 0xEE, 400 * 64);
  for (unsigned i = 0; i < 400; ++i) {
    if (ch == kRd)
      b.axi.read(static_cast<uint8_t>(i % 4), kBase + (i % 1024) * 64, 1);
    else
      b.axi.write(0, kBase + 0x10000 + i * 64, std::vector<uint8_t>(64, 0x5A));
  }
  EXPECT_TRUE(b.run_until([&] { return b.axi.idle() && b.pcie.idle(); }, 400'000));
  std::vector<uint64_t> hit;
  if (ch == kRd) {
    for (const auto& rd : b.axi.done) {
      EXPECT_EQ(rd.resp[0] != 0, all_ff(rd.data)) << rd.seq;
      if (rd.resp[0]) hit.push_back(rd.seq);
    }
    std::sort(hit.begin(), hit.end());
    EXPECT_EQ(hit.size(), b.pcie.stats().rd_err_bursts);
  } else {
    for (unsigned i = 0; i < b.axi.b_log.size(); ++i) {
      const bool err = b.axi.b_log[i].resp != 0;
      EXPECT_EQ(b.mem.read_u8(kBase + 0x10000 + i * 64), err ? 0xEE : 0x5A) << i;
      if (err) hit.push_back(i);
    }
    EXPECT_EQ(hit.size(), b.pcie.stats().wr_err_bursts);
  }
  return hit;
}

TEST(PcieErrors, RandomRuleIsReproducibleFromTheSeed) {
  for (auto ch : {kRd, kWr}) {
    const auto a = random_errors(5, 50, ch);
    EXPECT_GT(a.size(), 60u);
    EXPECT_LT(a.size(), 140u);
    EXPECT_EQ(random_errors(5, 50, ch), a);
    EXPECT_EQ(random_errors(5, 400, ch), a);
    EXPECT_NE(random_errors(6, 50, ch), a);
  }
}

TEST(PcieErrors, TextForm) {
  PcieErrorRule r;
  std::string why;
  ASSERT_TRUE(PcieErrorRule::parse("read:nth=120", r, &why)) << why;
  EXPECT_EQ(r.channel, kRd);
  EXPECT_EQ(r.nth, 120u);
  EXPECT_EQ(r.resp, PcieErrorRule::kSlvErr);
  EXPECT_EQ(r.to_string(), "read:nth=120:slverr");
  ASSERT_TRUE(PcieErrorRule::parse("write:addr=0x1000-0x2000:decerr", r, &why)) << why;
  EXPECT_EQ(r.channel, kWr);
  EXPECT_EQ(r.lo, 0x1000u);
  EXPECT_EQ(r.hi, 0x2000u);
  EXPECT_EQ(r.resp, PcieErrorRule::kDecErr);
  EXPECT_EQ(r.to_string(), "write:addr=0x1000-0x2000:decerr");
  ASSERT_TRUE(PcieErrorRule::parse("Read:SLVERR:rate=0.001:addr=4096-8192:nth=7", r, &why)) << why;
  EXPECT_EQ(r.rate, 0.001);
  EXPECT_EQ(r.to_string(), "read:addr=0x1000-0x2000:rate=0.001:nth=7:slverr");
  PcieErrorRule back;
  r.rate = 1.0 / 3;
  ASSERT_TRUE(PcieErrorRule::parse(r.to_string(), back, &why)) << why;
  EXPECT_EQ(back.rate, r.rate);

  auto bad = [&](const char* text, const char* needle) {
    PcieErrorRule x;
    x.nth = 99;
    std::string w;
    EXPECT_FALSE(PcieErrorRule::parse(text, x, &w)) << text;
    EXPECT_NE(w.find(needle), std::string::npos) << text << ": " << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
    EXPECT_EQ(x.nth, 99u) << text;  // untouched
  };
  bad("", "must start with read or write");
  bad("dma:nth=1", "must start with read or write");
  bad("read", "needs addr=LO-HI, rate=P or nth=N");
  bad("read:slverr", "needs addr=LO-HI");
  bad("read:nth=0", "nth must be an integer >= 1");
  bad("read:nth=-1", "nth must be an integer >= 1");
  bad("read:nth=1:nth=2", "'nth' given twice");
  bad("read:rate=0", "rate must be a probability in (0, 1]");
  bad("read:rate=1.5", "rate must be a probability in (0, 1]");
  bad("read:rate=0.1x", "rate must be a probability");
  bad("write:addr=0x2000-0x1000", "is empty");
  bad("write:addr=0x1000-0x1000", "is empty");
  bad("write:addr=0x1000", "addr must be LO-HI");
  bad("write:addr=0x1000-zz", "addr must be LO-HI");
  bad("write:nth=1:okay", "unknown item 'okay'");
  bad("write:nth=1:code=1", "unknown item 'code=1'");
  bad("write:nth=1:slverr:decerr", "given twice");
}

TEST(PcieErrors, BadRulesAreRefused) {
  HostMemory mem;
  for (int k = 0; k < 3; ++k) {
    PcieConfig cfg;
    PcieErrorRule r = rule(kWr);
    if (k == 0) r.resp = 1;  // EXOKAY is not an error
    if (k == 1) r.rate = 1.5;
    if (k == 2) {
      r.lo = 2;
      r.hi = 1;
    }
    cfg.errors.rules = {r};
    EXPECT_THROW({ PcieHost host(mem, cfg); }, std::invalid_argument) << k;
  }
}

}  // namespace
}  // namespace srnic::sim::test
