// EthMac + Link + PcapWriter: line rate, store-and-forward timing, drops, padding, loss and the
// pcap file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "srnic/sim/eth_mac.hpp"
#include "test_drivers.hpp"

namespace srnic::sim::test {
namespace {

std::vector<uint8_t> make_frame(size_t len, uint32_t tag) {
  std::vector<uint8_t> f(len);
  SplitMix64 g(tag);
  for (auto& b : f) b = static_cast<uint8_t>(g.next());
  // Locally administered unicast MACs, IPv4 ethertype, tag in the first payload bytes.
  const uint8_t hdr[14] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00};
  std::memcpy(f.data(), hdr, std::min<size_t>(len, 14));
  if (len >= 18) std::memcpy(f.data() + 14, &tag, 4);
  return f;
}

// Two MACs on one link; A's TX fed by a source, B's RX collected by a sink (and vice versa).
struct Bench {
  PcapWriter pcap;
  Link link;
  TestTop ta, tb;
  EthMac<TestTop> mac_a, mac_b;
  AxisSource src_a, src_b;
  AxisSink sink_a, sink_b;
  uint64_t cycle = 0;

  explicit Bench(const LinkConfig& lc = {}, const EthConfig& ec = {}, const std::string& pcap_path = "")
      : link(lc, open_pcap(pcap_path)), mac_a(link, 0, ec), mac_b(link, 1, ec) {
    drive();
  }
  PcapWriter* open_pcap(const std::string& path) {
    if (path.empty()) return nullptr;
    pcap.open(path);
    return &pcap;
  }
  void drive() {
    mac_a.drive(ta, cycle);
    mac_b.drive(tb, cycle);
    src_a.drive(ta, cycle);
    src_b.drive(tb, cycle);
  }
  void step() {
    mac_a.sample(ta, cycle);
    mac_b.sample(tb, cycle);
    src_a.sample(ta, cycle);
    src_b.sample(tb, cycle);
    sink_a.sample(ta, cycle);
    sink_b.sample(tb, cycle);
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
  // Nothing left anywhere, including the beat driven this cycle.
  bool idle() const { return sink_quiet() && src_a.idle() && src_b.idle() && mac_a.idle() && mac_b.idle() && link.in_flight(0) == 0 && link.in_flight(1) == 0; }
  double ns(uint64_t c) const { return Clock{}.ns(c); }
  bool sink_quiet() const { return !ta.s_axis_rx_tvalid && !tb.s_axis_rx_tvalid; }
};

TEST(EthMac, BackToBack1024ByteFramesRunAtLineRate) {
  Bench b;
  constexpr unsigned kFrames = 2000;
  for (unsigned i = 0; i < kFrames; ++i) b.src_a.send(make_frame(1024, i));
  ASSERT_TRUE(b.run_until([&] { return b.sink_b.frames.size() == kFrames; }, 200000));
  const auto& f = b.sink_b.frames;
  for (unsigned i = 0; i < kFrames; ++i) ASSERT_EQ(f[i].bytes, make_frame(1024, i)) << i;
  const unsigned from = 100;
  const double dt = b.ns(f.back().first_cycle) - b.ns(f[from].first_cycle);
  const double frame_gbps = double(kFrames - 1 - from) * 1024 * 8 / dt;
  EXPECT_NEAR(frame_gbps / (100.0 * 1024 / (1024 + 24)), 1.0, 0.002) << frame_gbps;
  EXPECT_GT(b.src_a.stall_cycles, 0u);  // the 100G wire is slower than the 512-bit bus
  EXPECT_NEAR(b.mac_a.utilisation(b.ns(f.back().first_cycle) - b.ns(f[0].first_cycle)), 1.0, 0.01);
  EXPECT_EQ(b.mac_a.stats().tx_frames, kFrames);
  EXPECT_EQ(b.mac_a.stats().tx_wire_bytes, kFrames * 1048ULL);
  EXPECT_EQ(b.mac_b.stats().rx_frames, kFrames);
  EXPECT_EQ(b.sink_b.errors, 0u);
  EXPECT_EQ(b.mac_a.violations() + b.mac_b.violations(), 0u);
  EXPECT_TRUE(b.sink_a.frames.empty());

  // First frame: 16 bus beats (cycles 1..16), then preamble + frame + FCS, then the cable.
  const double first = b.ns(f[0].first_cycle);
  const double expect = b.ns(17) + (8 + 1024 + 4) * 8 / 100.0 + 100.0;
  EXPECT_GE(first, expect);
  EXPECT_LT(first, expect + Clock{}.period_ns() + 1e-9);
  // RX beats are back to back: 16 cycles per 1024-byte frame.
  EXPECT_EQ(f[0].last_cycle - f[0].first_cycle, 15u);
}

// Flow control. B asks A to pause while A has a long queue of 122-byte frames: once the pause
// frame (after B's frame in progress) and the cable have reached A, A starts no frame; after the
// resume A sends at the line rate, never faster. (A pause used to leave A's wire clock behind, so
// the frames held during the pause went out at once with start times inside it: B received
// them back to back at the bus rate, faster than the wire, and overflowed on a paused link.)
TEST(EthMac, PauseHoldsThePartnerAndTheResumeKeepsTheLineRate) {
  Bench b;
  constexpr unsigned kFrames = 1500, kLen = 122;
  for (unsigned i = 0; i < kFrames; ++i) b.src_a.send(make_frame(kLen, i));
  const double period = Clock{}.period_ns();
  const double frame_ns = double(kLen + 24) * 8 / 100.0;
  ASSERT_TRUE(b.run_until([&] { return b.sink_b.frames.size() == 200; }, 100000));
  const double t_on = b.ns(b.cycle);
  b.tb.rx_pause = 1;
  const uint64_t pause_cycles = 3000;   // 10 us
  for (uint64_t i = 0; i < pause_cycles; ++i) b.step();
  const double t_off = b.ns(b.cycle);
  b.tb.rx_pause = 0;
  ASSERT_TRUE(b.run_until([&] { return b.sink_b.frames.size() == kFrames; }, 200000));
  const auto& f = b.sink_b.frames;
  for (unsigned i = 0; i < kFrames; ++i) ASSERT_EQ(f[i].bytes, make_frame(kLen, i)) << i;

  // What may still arrive after the request: the pause frame (a minimum frame on B's idle
  // wire), the cable, A's frame in progress, the cable back, the bus beats, two cycles of
  // sampling.
  const double hold_by = t_on + 84 * 8 / 100.0 + 100.0 + frame_ns + 100.0 + 2 * period + 3 * period;
  unsigned during = 0, late = 0;
  for (const auto& r : f) {
    const double t = b.ns(r.first_cycle);
    if (t > t_on && t < t_off + 200.0) ++during;
    if (t > hold_by && t < t_off + 200.0) ++late;
  }
  EXPECT_EQ(late, 0u) << "frames started while A was paused";
  EXPECT_LE(during, unsigned((hold_by - t_on) / frame_ns) + 1);   // what was on the way, at the line rate
  EXPECT_GE(during, 10u);
  EXPECT_GT(b.link.pause_requests(1), 0u);

  // After the resume: no run of frames faster than the wire.
  size_t first_after = 0;
  while (first_after < f.size() && b.ns(f[first_after].first_cycle) < t_off) ++first_after;
  ASSERT_LT(first_after + 100, f.size());
  for (size_t i = first_after + 1; i < f.size(); ++i) {
    const double gap = b.ns(f[i].first_cycle) - b.ns(f[i - 1].first_cycle);
    ASSERT_GE(gap, frame_ns - period - 1e-9) << "frame " << i << " arrived " << gap << " ns after the one before it";
  }
  const double span = b.ns(f.back().first_cycle) - b.ns(f[first_after].first_cycle);
  EXPECT_NEAR(double(f.size() - 1 - first_after) * frame_ns / span, 1.0, 0.01);
  EXPECT_EQ(b.mac_a.violations() + b.mac_b.violations(), 0u);
}

// The headroom bound: what the formula takes into account, on numbers worked by hand.
TEST(EthMac, LosslessCableBound) {
  // 1024 beats, XOFF above 512, 4,174-byte frames (MTU 4096), 100 Gb/s, 3.33 ns clock:
  // headroom 511 beats = 32,704 B, less the partner's frame (66 beats, 4,224 B), at 128 B per
  // 89 wire bytes is 1,584.2 ns of line rate; less this side's frame, its pause frame (84 B)
  // and two cycles (349.2 ns) and halved: 617.5 ns each way.
  const double p = 1000.0 / 300.0;
  const double d = lossless_cable_ns(1024, 512, 4174, 100.0, p);
  const double want = ((32704.0 - 4224.0) / (128.0 / 89.0 * 12.5) - (4174.0 + 24 + 60 + 24) / 12.5 - 2 * p) / 2;
  EXPECT_NEAR(d, want, 1e-6);
  EXPECT_NEAR(d, 617.5, 0.1);
  EXPECT_GT(lossless_cable_ns(2048, 1024, 4174, 100.0, p), 2 * d);   // twice the buffer: more than twice the cable
  EXPECT_GT(lossless_cable_ns(1024, 512, 1102, 100.0, p), d);        // shorter frames: a longer cable
  EXPECT_EQ(lossless_cable_ns(128, 100, 4174, 100.0, p), 0.0);        // headroom below one frame
}

TEST(EthMac, OversizeAndAbortedFramesDroppedShortFramesPadded) {
  Bench b;
  b.src_a.send(make_frame(9600, 1));
  b.src_a.send(make_frame(9601, 2));
  b.src_a.send(make_frame(500, 3), /*abort=*/true);
  b.src_a.send(make_frame(40, 4));
  b.src_a.send(make_frame(100, 5));
  ASSERT_TRUE(b.run_until([&] { return b.idle() && b.sink_b.frames.size() >= 3; }, 100000));
  for (int i = 0; i < 2000; ++i) b.step();
  const auto& f = b.sink_b.frames;
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].bytes, make_frame(9600, 1));
  std::vector<uint8_t> padded = make_frame(40, 4);
  padded.resize(60, 0);
  EXPECT_EQ(f[1].bytes, padded);
  EXPECT_EQ(f[2].bytes, make_frame(100, 5));
  EXPECT_EQ(b.mac_a.stats().tx_oversize, 1u);
  EXPECT_EQ(b.mac_a.stats().tx_aborted, 1u);
  EXPECT_EQ(b.mac_a.stats().tx_frames, 3u);
  EXPECT_EQ(b.mac_a.violations(), 0u);
}

TEST(EthMac, ReportsStreamViolations) {
  Bench b;
  std::vector<Violation> v;
  b.mac_a.set_violation_handler([&](const Violation& x) { v.push_back(x); });
  // A beat without tlast and with a partial tkeep.
  b.ta.m_axis_tx_tvalid = 1;
  b.ta.m_axis_tx_tkeep = 0xFF;
  b.ta.m_axis_tx_tlast = 0;
  b.mac_a.sample(b.ta, 0);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].channel, "eth.tx");
  EXPECT_NE(v[0].what.find("tkeep"), std::string::npos);
}

TEST(EthMac, LinkLossIsSeededAndCounted) {
  auto run = [](uint64_t seed, std::vector<uint32_t>* got) {
    LinkConfig lc;
    lc.loss = 0.3;
    lc.seed = seed;
    Bench b(lc);
    for (unsigned i = 0; i < 1000; ++i) b.src_a.send(make_frame(64, i));
    b.run_until([&] { return b.idle(); }, 100000);
    for (const auto& f : b.sink_b.frames) {
      uint32_t tag;
      std::memcpy(&tag, f.bytes.data() + 14, 4);
      got->push_back(tag);
    }
    EXPECT_EQ(b.link.stats(0).frames, 1000u);
    EXPECT_EQ(b.link.stats(0).lost + got->size(), 1000u);
    EXPECT_EQ(b.mac_b.stats().rx_frames, got->size());
    return b.link.stats(0).lost;
  };
  std::vector<uint32_t> a, a2, c;
  const uint64_t lost = run(42, &a);
  EXPECT_GT(lost, 240u);
  EXPECT_LT(lost, 360u);
  run(42, &a2);
  EXPECT_EQ(a, a2);
  run(43, &c);
  EXPECT_NE(a, c);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
}

std::string temp_path(const char* name) {
  return std::string(::testing::TempDir()) + "srnic_" + std::to_string(::getpid()) + "_" + name;
}

struct PcapRecord {
  uint32_t sec, nsec, incl, orig;
  std::vector<uint8_t> data;
};

uint32_t le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

// Both directions into one pcap; returns the records parsed from the file.
std::vector<PcapRecord> write_two_way_pcap(const std::string& path, std::vector<std::vector<uint8_t>>* sent) {
  std::vector<PcapRecord> recs;
  {
    Bench b({}, {}, path);
    for (unsigned i = 0; i < 20; ++i) {
      b.src_a.send(make_frame(64 + 50 * i, i));
      b.src_b.send(make_frame(1500 - 30 * i, 100 + i));
    }
    b.mac_a.set_tx_monitor([&](const Frame& f) { sent->push_back(f.bytes); });
    b.mac_b.set_tx_monitor([&](const Frame& f) { sent->push_back(f.bytes); });
    EXPECT_TRUE(b.run_until([&] { return b.idle(); }, 100000));
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(file.size(), 24u);
  if (file.size() < 24) return recs;
  EXPECT_EQ(le32(&file[0]), 0xa1b23c4du);
  EXPECT_EQ(file[4] | file[5] << 8, 2);
  EXPECT_EQ(file[6] | file[7] << 8, 4);
  EXPECT_EQ(le32(&file[16]), 65535u);
  EXPECT_EQ(le32(&file[20]), 1u);
  size_t off = 24;
  while (off + 16 <= file.size()) {
    PcapRecord r{le32(&file[off]), le32(&file[off + 4]), le32(&file[off + 8]), le32(&file[off + 12]), {}};
    off += 16;
    EXPECT_LE(off + r.incl, file.size());
    r.data.assign(file.begin() + static_cast<std::ptrdiff_t>(off), file.begin() + static_cast<std::ptrdiff_t>(std::min(file.size(), off + r.incl)));
    off += r.incl;
    recs.push_back(std::move(r));
  }
  EXPECT_EQ(off, file.size());
  return recs;
}

TEST(PcapWriter, RecordsBothDirectionsInTimeOrder) {
  const std::string path = temp_path("two_way.pcap");
  std::vector<std::vector<uint8_t>> sent;
  const auto recs = write_two_way_pcap(path, &sent);
  ASSERT_EQ(recs.size(), 40u);
  ASSERT_EQ(sent.size(), 40u);
  uint64_t prev = 0;
  unsigned matched = 0;
  for (const auto& r : recs) {
    const uint64_t t = r.sec * 1000000000ULL + r.nsec;
    EXPECT_LT(r.nsec, 1000000000u);
    EXPECT_GE(t, prev);
    prev = t;
    EXPECT_EQ(r.incl, r.orig);
    EXPECT_EQ(r.incl, r.data.size());
    for (const auto& s : sent) matched += s == r.data;
  }
  EXPECT_EQ(matched, 40u);
  // The first record is A's 64-byte frame: one bus beat in cycle 1, then preamble + 64 B + FCS.
  EXPECT_EQ(recs[0].data.size(), 64u);
  EXPECT_EQ(recs[0].sec, 0u);
  EXPECT_EQ(recs[0].nsec, static_cast<uint32_t>(std::llround(Clock{}.ns(2) + (8 + 64 + 4) * 0.08)));
  std::remove(path.c_str());
}

TEST(PcapWriter, TsharkReadsTheFile) {
  if (access("/usr/bin/tshark", X_OK) != 0) GTEST_SKIP() << "tshark not installed";
  const std::string path = temp_path("tshark.pcap");
  std::vector<std::vector<uint8_t>> sent;
  write_two_way_pcap(path, &sent);
  const std::string cmd = "/usr/bin/tshark -r " + path + " -T fields -e frame.len -e eth.dst 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char line[256];
  unsigned n = 0, ok = 0;
  while (std::fgets(line, sizeof line, p)) {
    ++n;
    unsigned len = 0;
    char dst[64] = {};
    if (std::sscanf(line, "%u %63s", &len, dst) == 2 && len >= 64 && std::string(dst) == "02:00:00:00:00:02") ++ok;
  }
  EXPECT_EQ(pclose(p), 0);
  EXPECT_EQ(n, 40u);
  EXPECT_EQ(ok, 40u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace srnic::sim::test
