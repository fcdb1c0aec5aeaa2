// Link impairment model: each impairment's rate against its configuration over many frames,
// Gilbert-Elliott burst lengths, reordering, jitter keeping order, duplicates, single-bit
// corruption, the directed drop rules, seeding, stream and direction independence, the counters
// and the pcap side file. Every run is seeded, so the statistical checks are deterministic; their
// bounds are five standard deviations wide.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "srnic/sim/eth_mac.hpp"

namespace srnic::sim::test {
namespace {

constexpr size_t kBth = 14 + 20 + 8;  // BTH offset in the frames built here
constexpr size_t kTag = kBth + 12;    // 4-byte frame tag (little endian) after the BTH

// A RoCEv2 frame: Ethernet, IPv4, UDP to `port`, BTH, `payload` bytes (the tag first), ICRC.
std::vector<uint8_t> roce_frame(uint8_t op, uint32_t qpn, uint32_t psn, uint32_t tag, size_t payload = 64,
                                uint16_t port = 4791) {
  const size_t ip_len = 20 + 8 + 12 + payload + 4;
  std::vector<uint8_t> f(std::max<size_t>(14 + ip_len, 60), 0);
  const uint8_t eth[14] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00};
  std::memcpy(f.data(), eth, 14);
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[2] = uint8_t(ip_len >> 8);
  ip[3] = uint8_t(ip_len);
  ip[6] = 0x40;  // don't fragment
  ip[8] = 64;
  ip[9] = 17;
  uint8_t* udp = ip + 20;
  udp[0] = 0xC0;
  udp[2] = uint8_t(port >> 8);
  udp[3] = uint8_t(port);
  uint8_t* bth = udp + 8;
  bth[0] = op;
  bth[5] = uint8_t(qpn >> 16);
  bth[6] = uint8_t(qpn >> 8);
  bth[7] = uint8_t(qpn);
  bth[9] = uint8_t(psn >> 16);
  bth[10] = uint8_t(psn >> 8);
  bth[11] = uint8_t(psn);
  SplitMix64 g(tag);
  for (size_t i = kTag; i < 14 + ip_len; ++i) f[i] = uint8_t(g.next());
  std::memcpy(&f[kTag], &tag, 4);
  return f;
}

uint32_t tag_of(const std::vector<uint8_t>& f) {
  uint32_t t = 0;
  std::memcpy(&t, &f[kTag], 4);
  return t;
}

struct Got {
  uint32_t tag;
  double t;  // poll time it was received (within one poll step after it arrived)
  std::vector<uint8_t> bytes;
  bool bad_fcs;
};

struct Trace {
  std::vector<Got> got;              // at the receiving side, in delivery order
  std::vector<ImpairEvent> events;   // the monitor's reports
  std::vector<std::vector<uint8_t>> sent;
  LinkStats stats;
};

constexpr double kGapNs = 10;   // frames leave every 10 ns
constexpr double kStepNs = 1;   // the receiver polls every 1 ns

using MakeFrame = std::function<std::vector<uint8_t>(uint64_t)>;
std::vector<uint8_t> plain(uint64_t i) { return roce_frame(0x0A, 5, uint32_t(i & 0xFFFFFF), uint32_t(i)); }

// Sends n frames from side `from` (frame i at (i + 1) * kGapNs), then polls the other side until
// everything has arrived.
Trace run(Link& link, int from, uint64_t n, const MakeFrame& make = plain) {
  Trace r;
  link.set_impair_monitor([&r](const ImpairEvent& e) { r.events.push_back(e); });
  for (uint64_t i = 0; i < n; ++i) {
    Frame f;
    f.bytes = make(i);
    f.t_sent_ns = double(i + 1) * kGapNs;
    r.sent.push_back(f.bytes);
    link.send(from, std::move(f));
  }
  Frame out;
  for (double t = 0; link.in_flight(from ^ 1) > 0; t += kStepNs)
    while (link.receive(from ^ 1, t, out)) r.got.push_back(Got{tag_of(out.bytes), t, out.bytes, out.bad_fcs});
  link.set_impair_monitor({});
  r.stats = link.stats(from);
  return r;
}

Trace run_cfg(const LinkConfig& lc, int from, uint64_t n, const MakeFrame& make = plain) {
  Link link(lc);
  return run(link, from, n, make);
}

LinkConfig config(uint64_t seed, const Impairments& im) {
  LinkConfig lc;
  lc.seed = seed;
  lc.impair_both(im);
  return lc;
}

// |observed - n p| within five standard deviations of a binomial count.
void expect_rate(uint64_t observed, uint64_t n, double p, const char* what) {
  const double mean = double(n) * p, sd = std::sqrt(double(n) * p * (1 - p));
  EXPECT_NEAR(double(observed), mean, 5 * sd) << what << ": " << observed << " of " << n << ", p " << p;
}

std::set<uint64_t> indices(const std::vector<ImpairEvent>& ev, uint32_t action) {
  std::set<uint64_t> s;
  for (const ImpairEvent& e : ev)
    if (e.actions & action) s.insert(e.index);
  return s;
}

// ------------------------------------------------------------------------------ no impairment

TEST(Netem, WithoutImpairmentsFramesArriveUnchangedInOrderAfterTheDelay) {
  LinkConfig lc;
  lc.delay_ns = 137;
  Link link(lc);
  std::vector<std::vector<uint8_t>> sent;
  for (unsigned i = 0; i < 50; ++i) {
    Frame f;
    f.bytes = roce_frame(0x04, 7, i, i, 10 + 37 * i);
    f.t_sent_ns = 5.0 * i;  // a frame every 5 ns: many in flight at once
    sent.push_back(f.bytes);
    link.send(0, std::move(f));
  }
  Frame out;
  for (unsigned i = 0; i < 50; ++i) {
    const double due = 5.0 * i + 137;
    EXPECT_FALSE(link.receive(1, std::nextafter(due, 0.0), out)) << i;
    ASSERT_TRUE(link.receive(1, due, out)) << i;
    EXPECT_EQ(out.bytes, sent[i]);
    EXPECT_FALSE(out.bad_fcs);
  }
  EXPECT_FALSE(link.receive(1, 1e9, out));
  EXPECT_FALSE(link.receive(0, 1e9, out));
  const LinkStats& s = link.stats(0);
  EXPECT_EQ(s.frames, 50u);
  EXPECT_EQ(s.lost + s.reordered + s.duplicated + s.corrupted + s.jittered, 0u);
}

// ------------------------------------------------------------------------------ random loss

TEST(Netem, RandomLossRateAndCounters) {
  Impairments im;
  im.loss = 0.05;
  const uint64_t n = 100000;
  const Trace r = run_cfg(config(11, im), 0, n);
  expect_rate(r.stats.lost_random, n, im.loss, "random loss");
  EXPECT_EQ(r.stats.lost, r.stats.lost_random);
  EXPECT_EQ(r.got.size() + r.stats.lost, n);
  const std::set<uint64_t> lost = indices(r.events, ImpairEvent::kLostRandom);
  EXPECT_EQ(lost.size(), r.stats.lost_random);
  EXPECT_EQ(r.events.size(), lost.size());
  // Exactly the frames reported lost are missing; the rest arrive in order.
  uint64_t k = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (lost.count(i)) continue;
    ASSERT_LT(k, r.got.size());
    ASSERT_EQ(r.got[k].tag, i);
    ++k;
  }
}

TEST(Netem, LinkLossAppliesToBothDirectionsAndADirectionMayOverrideIt) {
  LinkConfig lc;
  lc.seed = 3;
  lc.loss = 0.1;
  lc.impair[1].loss = 0.3;
  EXPECT_EQ(lc.direction(0).loss, 0.1);
  EXPECT_EQ(lc.direction(1).loss, 0.3);
  const uint64_t n = 50000;
  Link link(lc);
  const Trace a = run(link, 0, n);
  const Trace b = run(link, 1, n);
  expect_rate(a.stats.lost_random, n, 0.1, "side 0");
  expect_rate(b.stats.lost_random, n, 0.3, "side 1");
}

// ------------------------------------------------------------------------------ burst loss

// Lengths of the runs of consecutive lost indices.
std::vector<uint64_t> runs_of(const std::set<uint64_t>& lost) {
  std::vector<uint64_t> runs;
  uint64_t prev = ~0ull;
  for (uint64_t i : lost) {
    if (!runs.empty() && i == prev + 1)
      ++runs.back();
    else
      runs.push_back(1);
    prev = i;
  }
  return runs;
}

TEST(Netem, GilbertFromRateAndBurst) {
  BurstLoss b;
  ASSERT_TRUE(BurstLoss::from_rate_burst(0.02, 4, b));
  EXPECT_DOUBLE_EQ(b.p_bad_good, 0.25);
  EXPECT_DOUBLE_EQ(b.p_good_bad, 0.02 / (4 * 0.98));
  EXPECT_NEAR(b.mean_loss(), 0.02, 1e-12);
  EXPECT_NEAR(b.mean_burst(), 4, 1e-9);
  std::string why;
  EXPECT_FALSE(BurstLoss::from_rate_burst(0.9, 1, b, &why));  // p(good->bad) would be 9
  EXPECT_NE(why.find("p(good->bad) > 1"), std::string::npos) << why;
  EXPECT_FALSE(BurstLoss::from_rate_burst(1, 4, b, &why));
  EXPECT_FALSE(BurstLoss::from_rate_burst(0.1, 0.5, b, &why));
  ASSERT_TRUE(BurstLoss::from_rate_burst(0.5, 1, b));  // every other frame on average, alone
  EXPECT_DOUBLE_EQ(b.p_good_bad, 1.0);
  ASSERT_TRUE(BurstLoss::from_rate_burst(0, 3, b));
  EXPECT_FALSE(b.enabled());
}

TEST(Netem, BurstLossRateAndMeanBurstLength) {
  Impairments im;
  ASSERT_TRUE(BurstLoss::from_rate_burst(0.02, 4, im.burst));
  const uint64_t n = 200000;
  const Trace r = run_cfg(config(21, im), 0, n);
  const std::set<uint64_t> lost = indices(r.events, ImpairEvent::kLostBurst);
  EXPECT_EQ(lost.size(), r.stats.lost_burst);
  EXPECT_EQ(r.stats.lost, r.stats.lost_burst);
  EXPECT_EQ(r.got.size() + r.stats.lost, n);
  // Losses come in bursts, so the count varies more than a binomial: about one draw per
  // burst, each worth ~b frames (sd ~ sqrt(n r (2b - 1))).
  const double sd = std::sqrt(double(n) * 0.02 * 7);
  EXPECT_NEAR(double(lost.size()), n * 0.02, 5 * sd);
  const std::vector<uint64_t> runs = runs_of(lost);
  double mean = 0;
  for (uint64_t x : runs) mean += double(x);
  mean /= double(runs.size());
  // Geometric run lengths: sd sqrt(b (b - 1)) per run.
  EXPECT_NEAR(mean, 4.0, 5 * std::sqrt(12.0 / double(runs.size()))) << runs.size() << " bursts";
  // Random loss at the same rate has runs of ~1.02.
  EXPECT_GT(mean, 3.0);
}

TEST(Netem, GeneralGilbertElliottMatchesItsStationaryFormulas) {
  Impairments im;
  im.burst = BurstLoss{0.01, 0.1, 0.002, 0.6};
  const uint64_t n = 300000;
  const Trace r = run_cfg(config(22, im), 1, n);
  const std::set<uint64_t> lost = indices(r.events, ImpairEvent::kLostBurst);
  const double rate = double(lost.size()) / n;
  EXPECT_NEAR(rate, im.burst.mean_loss(), 0.15 * im.burst.mean_loss());
  const std::vector<uint64_t> runs = runs_of(lost);
  const double mean = double(lost.size()) / double(runs.size());
  EXPECT_NEAR(mean, im.burst.mean_burst(), 0.1 * im.burst.mean_burst());
}

// ------------------------------------------------------------------------------ reordering

TEST(Netem, ReorderHoldsFramesBackSoLaterFramesOvertakeThem) {
  Impairments im;
  im.reorder = 0.02;
  im.reorder_delay_ns = 1000;  // 100 frames' time
  const uint64_t n = 100000;
  const Trace r = run_cfg(config(31, im), 0, n);
  ASSERT_EQ(r.got.size(), n);
  const std::set<uint64_t> held = indices(r.events, ImpairEvent::kReordered);
  EXPECT_EQ(held.size(), r.stats.reordered);
  expect_rate(held.size(), n, im.reorder, "reorder");
  EXPECT_FALSE(std::is_sorted(r.got.begin(), r.got.end(), [](const Got& a, const Got& b) { return a.tag < b.tag; }));
  // Frames not held back keep their order; a held-back frame comes reorder_delay_ns late,
  // after the ~100 frames sent after it.
  uint32_t prev = 0;
  bool first = true;
  std::map<uint32_t, size_t> pos;
  for (size_t k = 0; k < r.got.size(); ++k) {
    const Got& g = r.got[k];
    pos[g.tag] = k;
    const double due = (g.tag + 1) * kGapNs + 100 + (held.count(g.tag) ? 1000 : 0);
    EXPECT_GE(g.t, due) << g.tag;
    EXPECT_LT(g.t, due + kStepNs) << g.tag;
    if (held.count(g.tag)) continue;
    if (!first) {
      EXPECT_GT(g.tag, prev);
    }
    prev = g.tag;
    first = false;
  }
  // Frame h + 100 is due at the same time as held-back frame h: the one sent first comes first.
  for (uint64_t h : held) {
    if (h + 100 < n && !held.count(h + 99) && !held.count(h + 100)) {
      EXPECT_GT(pos[uint32_t(h)], pos[uint32_t(h + 99)]) << h;
      EXPECT_LT(pos[uint32_t(h)], pos[uint32_t(h + 100)]) << h;
    }
  }
}

// ------------------------------------------------------------------------------ jitter

TEST(Netem, JitterAloneNeverReorders) {
  Impairments im;
  im.jitter_ns = 500;  // 50 frames' time
  const uint64_t n = 100000;
  const Trace r = run_cfg(config(41, im), 0, n);
  ASSERT_EQ(r.got.size(), n);
  for (size_t k = 0; k < n; ++k) ASSERT_EQ(r.got[k].tag, k);
  for (size_t k = 1; k < n; ++k) ASSERT_GE(r.got[k].t, r.got[k - 1].t);
  // Each frame: at least its own delay plus jitter draw, at most its own draw or the previous
  // frame's arrival.
  std::vector<double> draw(n, 0);
  for (const ImpairEvent& e : r.events) draw[e.index] = e.jitter_ns;
  double prev = 0;
  double mean = 0;
  for (size_t k = 0; k < n; ++k) {
    const double own = (k + 1) * kGapNs + 100 + draw[k];
    const double due = std::max(own, prev);
    ASSERT_GE(r.got[k].t, due) << k;
    ASSERT_LT(r.got[k].t, due + kStepNs) << k;
    prev = due;
    mean += draw[k];
  }
  mean /= n;
  // Uniform on [0, 500): mean 250, sd 500 / sqrt(12) per draw.
  EXPECT_NEAR(mean, 250, 5 * 500 / std::sqrt(12.0 * n));
  EXPECT_EQ(r.stats.jittered, r.events.size());
  EXPECT_GT(r.stats.jittered, n * 99 / 100);
  // The reported arrival is the real one.
  for (const ImpairEvent& e : r.events) {
    ASSERT_GE(r.got[e.index].t, e.t_arrive_ns) << e.index;
    ASSERT_LT(r.got[e.index].t, e.t_arrive_ns + kStepNs) << e.index;
  }
}

TEST(Netem, JitterWithReorderDoesReorder) {
  Impairments im;
  im.jitter_ns = 500;
  im.reorder = 0.01;
  im.reorder_delay_ns = 300;
  const Trace r = run_cfg(config(42, im), 0, 20000);
  EXPECT_FALSE(std::is_sorted(r.got.begin(), r.got.end(), [](const Got& a, const Got& b) { return a.tag < b.tag; }));
  for (size_t k = 1; k < r.got.size(); ++k) ASSERT_GE(r.got[k].t, r.got[k - 1].t);  // delivery by arrival time
}

// ------------------------------------------------------------------------------ duplication

TEST(Netem, DuplicatedFramesArriveTwiceTheGapApart) {
  Impairments im;
  im.dup = 0.01;
  im.dup_gap_ns = 55;
  const uint64_t n = 100000;
  const Trace r = run_cfg(config(51, im), 0, n);
  const std::set<uint64_t> dup = indices(r.events, ImpairEvent::kDuplicated);
  EXPECT_EQ(dup.size(), r.stats.duplicated);
  EXPECT_EQ(indices(r.events, ImpairEvent::kCopy), dup);
  expect_rate(dup.size(), n, im.dup, "duplication");
  ASSERT_EQ(r.got.size(), n + dup.size());
  std::map<uint32_t, std::vector<const Got*>> by_tag;
  for (const Got& g : r.got) by_tag[g.tag].push_back(&g);
  ASSERT_EQ(by_tag.size(), n);
  for (const auto& [tag, v] : by_tag) {
    ASSERT_EQ(v.size(), dup.count(tag) ? 2u : 1u) << tag;
    EXPECT_EQ(v[0]->bytes, r.sent[tag]);
    if (v.size() == 2) {
      EXPECT_EQ(v[1]->bytes, r.sent[tag]);
      EXPECT_NEAR(v[1]->t - v[0]->t, 55, kStepNs) << tag;
    }
  }
}

TEST(Netem, ACopyWithoutGapFollowsItsOriginal) {
  Impairments im;
  im.dup = 0.2;
  const Trace r = run_cfg(config(52, im), 1, 2000);
  for (size_t k = 0; k + 1 < r.got.size(); ++k)
    ASSERT_LE(r.got[k].tag, r.got[k + 1].tag) << k;  // order kept, the copy right after the original
  EXPECT_EQ(r.got.size(), 2000 + r.stats.duplicated);
}

// ------------------------------------------------------------------------------ corruption

// Bit positions (byte * 8 + bit) where a and b differ.
std::vector<size_t> diff_bits(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  std::vector<size_t> d;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    for (int k = 0; k < 8; ++k)
      if (((a[i] ^ b[i]) >> k) & 1) d.push_back(i * 8 + k);
  return d;
}

TEST(Netem, CorruptionFlipsExactlyOneBitInsideTheIpPacket) {
  Impairments im;
  im.corrupt = 0.02;
  const uint64_t n = 100000;
  // Some frames shorter than 60 bytes before padding: the padding is not corrupted.
  const Trace r = run_cfg(config(61, im), 0, n, [](uint64_t i) { return roce_frame(0x0A, 5, 0, uint32_t(i), i % 7); });
  ASSERT_EQ(r.got.size(), n);
  std::map<uint64_t, int64_t> bit;
  for (const ImpairEvent& e : r.events) bit[e.index] = e.bit;
  EXPECT_EQ(bit.size(), r.stats.corrupted);
  expect_rate(r.stats.corrupted, n, im.corrupt, "corruption");
  std::vector<uint64_t> per_byte(200, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const std::vector<size_t> d = diff_bits(r.sent[i], r.got[i].bytes);
    ASSERT_EQ(r.got[i].bytes.size(), r.sent[i].size());
    if (!bit.count(i)) {
      ASSERT_TRUE(d.empty()) << i;
      continue;
    }
    ASSERT_EQ(d.size(), 1u) << i;
    EXPECT_EQ(int64_t(d[0]), bit[i]);
    EXPECT_FALSE(r.got[i].bad_fcs) << i;  // an ICRC error, not an FCS error
    const size_t ip_len = size_t(r.sent[i][16]) << 8 | r.sent[i][17];
    EXPECT_GE(d[0], 14u * 8) << i;
    EXPECT_LT(d[0], (14 + ip_len) * 8) << i;
    ++per_byte[d[0] / 8];
  }
  // Every header byte is hit sometimes (the IPv4 header, UDP, BTH, payload and ICRC).
  for (size_t b = 14; b < 14 + 20 + 8 + 12 + 4; ++b) EXPECT_GT(per_byte[b], 0u) << b;
}

TEST(Netem, CorruptionOfANonIpFrameSparesOnlyTheEthernetHeader) {
  Impairments im;
  im.corrupt = 1;
  const Trace r = run_cfg(config(62, im), 0, 2000, [](uint64_t i) {
    std::vector<uint8_t> f = roce_frame(0, 0, 0, uint32_t(i));
    f[12] = 0x88;  // not IPv4
    f[13] = 0xB5;
    return f;
  });
  ASSERT_EQ(r.got.size(), 2000u);
  size_t max_bit = 0;
  for (size_t i = 0; i < 2000; ++i) {
    const std::vector<size_t> d = diff_bits(r.sent[i], r.got[i].bytes);
    ASSERT_EQ(d.size(), 1u);
    ASSERT_GE(d[0], 14u * 8);
    max_bit = std::max(max_bit, d[0]);
    EXPECT_FALSE(r.got[i].bytes.empty());
  }
  EXPECT_GE(max_bit, (r.sent[0].size() - 2) * 8);  // reaches the end of the frame
}

// ------------------------------------------------------------------------------ drop rules

TEST(Netem, RoceParserReadsTheBthAndRejectsOtherFrames) {
  const std::vector<uint8_t> f = roce_frame(0x0E, 0x123456, 0xABCDEF, 1);
  const RoceFields r = parse_roce(f.data(), f.size());
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.opcode, 0x0E);
  EXPECT_EQ(r.qpn, 0x123456u);
  EXPECT_EQ(r.psn, 0xABCDEFu);
  std::vector<uint8_t> opt = f;  // IPv4 options: the BTH moves by IHL
  opt.insert(opt.begin() + 34, 4, 0);
  opt[14] = 0x46;
  const RoceFields o = parse_roce(opt.data(), opt.size());
  ASSERT_TRUE(o.ok);
  EXPECT_EQ(o.qpn, 0x123456u);
  EXPECT_FALSE(parse_roce(f.data(), kBth + 11).ok);  // too short for a BTH
  EXPECT_FALSE(parse_roce(roce_frame(0x0E, 5, 0, 1, 64, 4792).data(), f.size()).ok);
  std::vector<uint8_t> v6 = f;
  v6[12] = 0x86;
  v6[13] = 0xDD;
  EXPECT_FALSE(parse_roce(v6.data(), v6.size()).ok);
  std::vector<uint8_t> tcp = f;
  tcp[14 + 9] = 6;
  EXPECT_FALSE(parse_roce(tcp.data(), tcp.size()).ok);
  EXPECT_STREQ(roce_opcode_name(0x0E), "READ_RESPONSE_MIDDLE");
  EXPECT_EQ(roce_opcode_name(0x15), nullptr);
}

TEST(Netem, DropRuleTextForm) {
  DropRule r;
  std::string why;
  ASSERT_TRUE(DropRule::parse("dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3", r, &why)) << why;
  EXPECT_EQ(r.dir, 1);
  EXPECT_EQ(r.op_lo, 0x0E);
  EXPECT_EQ(r.op_hi, 0x0E);
  EXPECT_EQ(r.qpn, 5);
  EXPECT_EQ(r.nth, 3u);
  EXPECT_EQ(r.to_string(), "dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3");
  ASSERT_TRUE(DropRule::parse("op=rdma_read_response,psn=0x10-0x20,every=2", r, &why)) << why;
  EXPECT_EQ(r.dir, -1);
  EXPECT_EQ(r.op_lo, 0x0D);
  EXPECT_EQ(r.op_hi, 0x10);
  EXPECT_EQ(r.psn_lo, 16u);
  EXPECT_EQ(r.psn_hi, 32u);
  EXPECT_EQ(r.every, 2u);
  EXPECT_EQ(r.to_string(), "op=READ_RESPONSE,psn=16-32,every=2");
  ASSERT_TRUE(DropRule::parse("op=0x15-0x16", r, &why)) << why;
  EXPECT_EQ(r.to_string(), "op=0x15-0x16");
  for (const char* text : {"dir=1,op=SEND_ONLY,psn=7", "qpn=16777215", "op=17", "dir=0,every=9", "op=0-255"}) {
    DropRule a, b;
    ASSERT_TRUE(DropRule::parse(text, a, &why)) << text << ": " << why;
    ASSERT_TRUE(DropRule::parse(a.to_string(), b, &why)) << a.to_string() << ": " << why;
    EXPECT_EQ(b.to_string(), a.to_string());
  }
  const std::pair<const char*, const char*> bad[] = {
      {"", "empty"},
      {"dir=2", "dir must be 0 or 1"},
      {"op=READ", "op must be an RC opcode name"},
      {"op=256", "op must be"},
      {"qpn=0x1000000", "qpn must be in 0..16777215"},
      {"psn=9-3", "psn must be"},
      {"nth=0", "nth must be an integer >= 1"},
      {"nth=1,every=2", "not both"},
      {"qpn=5,qpn=6", "given twice"},
      {"colour=red", "unknown key 'colour'"},
      {"qpn", "is not KEY=VALUE"},
      {"qpn=5,", "is not KEY=VALUE"},
      {"qpn=-1", "qpn must be"},
  };
  for (const auto& [text, needle] : bad) {
    EXPECT_FALSE(DropRule::parse(text, r, &why)) << text;
    EXPECT_NE(why.find(needle), std::string::npos) << text << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos);
  }
}

// Traffic for the drop rules: QPs 4, 5, 6 round robin; opcodes cycling through a READ response
// sequence and a SEND; every 5th frame not RoCE (UDP port 4792) but otherwise the same.
std::vector<uint8_t> mixed(uint64_t i) {
  static const uint8_t ops[] = {0x0D, 0x0E, 0x0E, 0x0F, 0x04};
  return roce_frame(ops[(i / 3) % 5], 4 + i % 3, uint32_t(i), uint32_t(i), 32, i % 5 == 4 ? 4792 : 4791);
}

// Indices among `sent` (side `from`) that rule r matches, in order.
std::vector<uint64_t> matching(const DropRule& r, int from, const std::vector<std::vector<uint8_t>>& sent) {
  std::vector<uint64_t> m;
  for (uint64_t i = 0; i < sent.size(); ++i)
    if (r.matches(from, parse_roce(sent[i].data(), sent[i].size()))) m.push_back(i);
  return m;
}

TEST(Netem, DropRuleLosesExactlyTheNthMatchingFrameOfItsDirection) {
  DropRule rule;
  ASSERT_TRUE(DropRule::parse("dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3", rule));
  LinkConfig lc;
  lc.drop_rules = {rule};
  Link link(lc);
  // The same traffic both ways: only side 1's third match is lost.
  const Trace a = run(link, 0, 600, mixed);
  const Trace b = run(link, 1, 600, mixed);
  EXPECT_EQ(a.got.size(), 600u);
  EXPECT_TRUE(a.events.empty());
  const std::vector<uint64_t> m = matching(rule, 1, b.sent);
  ASSERT_GE(m.size(), 4u);
  EXPECT_TRUE(matching(rule, 0, a.sent).empty());
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0].index, m[2]);
  EXPECT_EQ(b.events[0].actions, ImpairEvent::kLostFilter);
  EXPECT_EQ(b.events[0].rule, 0);
  EXPECT_EQ(b.events[0].roce.opcode, 0x0E);
  EXPECT_EQ(b.events[0].roce.qpn, 5u);
  EXPECT_EQ(b.stats.lost_filter, 1u);
  EXPECT_EQ(b.stats.lost, 1u);
  ASSERT_EQ(b.got.size(), 599u);
  for (const Got& g : b.got) EXPECT_NE(g.tag, m[2]);
}

TEST(Netem, DropRulesEveryNthAllMatchesAndPsnRanges) {
  auto lost_with = [](const char* text, int from) {
    DropRule r;
    EXPECT_TRUE(DropRule::parse(text, r)) << text;
    LinkConfig lc;
    lc.drop_rules = {r};
    Link link(lc);
    const Trace x = run(link, from, 900, mixed);
    std::vector<uint64_t> lost;
    for (const ImpairEvent& e : x.events) lost.push_back(e.index);
    EXPECT_EQ(x.stats.lost_filter, lost.size()) << text;
    EXPECT_EQ(x.got.size() + lost.size(), 900u) << text;
    return std::make_pair(lost, matching(r, from, x.sent));
  };
  {  // every=2: the 2nd, 4th, ... match
    const auto [lost, m] = lost_with("op=READ_RESPONSE,qpn=4,every=2", 0);
    std::vector<uint64_t> want;
    for (size_t k = 1; k < m.size(); k += 2) want.push_back(m[k]);
    EXPECT_EQ(lost, want);
  }
  {  // neither: every match, both directions
    const auto [lost, m] = lost_with("op=SEND_ONLY", 1);
    EXPECT_EQ(lost, m);
    EXPECT_FALSE(m.empty());
  }
  {  // a PSN range; non-RoCE frames in it never match
    const auto [lost, m] = lost_with("psn=100-199", 0);
    EXPECT_EQ(lost, m);
    EXPECT_EQ(m.size(), 80u);  // 100 PSNs, 20 of them on non-RoCE frames
  }
  {  // the rule names side 1: side 0 loses nothing
    const auto [lost, m] = lost_with("dir=1,psn=100-199", 0);
    EXPECT_TRUE(lost.empty());
  }
}

TEST(Netem, DropRulesCountFramesThatAreLostAnyway) {
  DropRule rule;
  ASSERT_TRUE(DropRule::parse("op=READ_RESPONSE_MIDDLE,every=4", rule));
  LinkConfig lc;
  lc.seed = 5;
  lc.loss = 0.5;
  lc.drop_rules = {rule};
  const Trace r = run_cfg(lc, 0, 2000, mixed);
  const std::vector<uint64_t> m = matching(rule, 0, r.sent);
  const std::set<uint64_t> random = indices(r.events, ImpairEvent::kLostRandom);
  std::set<uint64_t> want;  // the 4th, 8th, ... match, unless random loss took it first
  for (size_t k = 3; k < m.size(); k += 4)
    if (!random.count(m[k])) want.insert(m[k]);
  EXPECT_EQ(indices(r.events, ImpairEvent::kLostFilter), want);
  EXPECT_EQ(r.stats.lost_filter, want.size());
  EXPECT_GT(want.size(), 10u);
}

TEST(Netem, DropFilterFunctionIsSeenForEveryFrameAndCounted) {
  Link link;
  uint64_t calls = 0;
  link.set_drop_filter([&calls](int from, const Frame& f) {
    ++calls;
    return from == 0 && tag_of(f.bytes) % 10 == 3;
  });
  const Trace r = run(link, 0, 1000);
  EXPECT_EQ(calls, 1000u);
  EXPECT_EQ(r.stats.lost_filter, 100u);
  ASSERT_EQ(r.events.size(), 100u);
  EXPECT_EQ(r.events[0].rule, -1);
  EXPECT_EQ(r.got.size(), 900u);
}

// ------------------------------------------------------------------------------ seeds, streams

Impairments everything() {
  Impairments im;
  im.loss = 0.02;
  EXPECT_TRUE(BurstLoss::from_rate_burst(0.01, 3, im.burst));
  im.reorder = 0.02;
  im.reorder_delay_ns = 400;
  im.dup = 0.02;
  im.dup_gap_ns = 30;
  im.jitter_ns = 40;
  im.corrupt = 0.02;
  return im;
}

bool same_events(const std::vector<ImpairEvent>& a, const std::vector<ImpairEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].index != b[k].index || a[k].actions != b[k].actions || a[k].bit != b[k].bit ||
        a[k].t_arrive_ns != b[k].t_arrive_ns || a[k].jitter_ns != b[k].jitter_ns)
      return false;
  return true;
}

TEST(Netem, TheSeedDecidesEverything) {
  const Trace a = run_cfg(config(71, everything()), 0, 20000);
  const Trace b = run_cfg(config(71, everything()), 0, 20000);
  const Trace c = run_cfg(config(72, everything()), 0, 20000);
  EXPECT_TRUE(same_events(a.events, b.events));
  ASSERT_EQ(a.got.size(), b.got.size());
  for (size_t k = 0; k < a.got.size(); ++k) {
    ASSERT_EQ(a.got[k].bytes, b.got[k].bytes) << k;
    ASSERT_EQ(a.got[k].t, b.got[k].t) << k;
  }
  EXPECT_FALSE(same_events(a.events, c.events));
  // Every kind happened (no drop rule here).
  for (uint32_t act = 1; act <= ImpairEvent::kJittered; act <<= 1) {
    if (act != ImpairEvent::kLostFilter) {
      EXPECT_FALSE(indices(a.events, act).empty()) << ImpairEvent::action_name(act);
    }
  }
}

TEST(Netem, EachImpairmentHasItsOwnStream) {
  const uint64_t n = 20000;
  Impairments only;
  only.loss = 0.05;
  Impairments all = everything();
  all.loss = 0.05;
  const Trace a = run_cfg(config(81, only), 0, n);
  const Trace b = run_cfg(config(81, all), 0, n);
  // Random loss hits the same frames with or without the other impairments.
  EXPECT_EQ(indices(a.events, ImpairEvent::kLostRandom), indices(b.events, ImpairEvent::kLostRandom));
  // Duplication picks the same frames with or without loss, less the frames lost.
  Impairments dup_only;
  dup_only.dup = 0.05;
  Impairments dup_loss = dup_only;
  dup_loss.loss = 0.3;
  const Trace d = run_cfg(config(82, dup_only), 0, n);
  const Trace e = run_cfg(config(82, dup_loss), 0, n);
  std::set<uint64_t> want = indices(d.events, ImpairEvent::kDuplicated);
  for (uint64_t i : indices(e.events, ImpairEvent::kLostRandom)) want.erase(i);
  EXPECT_EQ(indices(e.events, ImpairEvent::kDuplicated), want);
  EXPECT_LT(want.size(), indices(d.events, ImpairEvent::kDuplicated).size());
}

TEST(Netem, DirectionsAreConfiguredAndDrawnSeparately) {
  LinkConfig lc;
  lc.seed = 91;
  lc.impair[0] = everything();
  Link one(lc);
  // Side 1 -> 0 is untouched.
  const Trace back = run(one, 1, 5000);
  EXPECT_TRUE(back.events.empty());
  ASSERT_EQ(back.got.size(), 5000u);
  for (size_t k = 0; k < back.got.size(); ++k) EXPECT_EQ(back.got[k].bytes, back.sent[k]);
  // Side 0's decisions do not depend on the traffic the other way.
  const Trace fwd = run(one, 0, 5000);
  const Trace alone = run_cfg(lc, 0, 5000);
  EXPECT_TRUE(same_events(fwd.events, alone.events));
  // The same configuration both ways still draws different decisions per direction.
  LinkConfig both = config(92, everything());
  Link l2(both);
  const Trace x = run(l2, 0, 5000);
  const Trace y = run(l2, 1, 5000);
  EXPECT_FALSE(same_events(x.events, y.events));
}

// ------------------------------------------------------------------------------ counters

TEST(Netem, CountersEqualTheEvents) {
  const uint64_t n = 50000;
  const Trace r = run_cfg(config(101, everything()), 1, n);
  std::map<uint32_t, uint64_t> count;
  for (const ImpairEvent& e : r.events)
    for (uint32_t a = 1; a <= ImpairEvent::kJittered; a <<= 1)
      if (e.actions & a) ++count[a];
  const LinkStats& s = r.stats;
  EXPECT_EQ(s.frames, n);
  EXPECT_EQ(s.lost_random, count[ImpairEvent::kLostRandom]);
  EXPECT_EQ(s.lost_burst, count[ImpairEvent::kLostBurst]);
  EXPECT_EQ(s.lost_filter, count[ImpairEvent::kLostFilter]);
  EXPECT_EQ(s.lost, s.lost_random + s.lost_burst + s.lost_filter);
  EXPECT_EQ(s.reordered, count[ImpairEvent::kReordered]);
  EXPECT_EQ(s.duplicated, count[ImpairEvent::kDuplicated]);
  EXPECT_EQ(s.duplicated, count[ImpairEvent::kCopy]);
  // A copy of a corrupted frame is reported corrupted too but counted once.
  uint64_t corrupted_originals = 0;
  for (const ImpairEvent& e : r.events)
    if ((e.actions & ImpairEvent::kCorrupted) && !(e.actions & ImpairEvent::kCopy)) ++corrupted_originals;
  EXPECT_EQ(s.corrupted, corrupted_originals);
  EXPECT_EQ(s.jittered, count[ImpairEvent::kJittered]);
  EXPECT_EQ(r.got.size(), n - s.lost + s.duplicated);
  expect_rate(s.lost_random, n, 0.02, "loss");
  expect_rate(s.reordered, n - s.lost, 0.02, "reorder");
  expect_rate(s.duplicated, n - s.lost, 0.02, "dup");
  expect_rate(s.corrupted, n - s.lost, 0.02, "corrupt");
}

// ------------------------------------------------------------------------------ pcap side file

std::string temp_path(const char* name) {
  return std::string(::testing::TempDir()) + "srnic_netem_" + std::to_string(::getpid()) + "_" + name;
}

uint32_t le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

std::vector<std::vector<uint8_t>> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<uint8_t>> recs;
  EXPECT_GE(file.size(), 24u);
  size_t off = 24;
  while (off + 16 <= file.size()) {
    const uint32_t incl = le32(&file[off + 8]);
    off += 16;
    recs.emplace_back(file.begin() + std::ptrdiff_t(off), file.begin() + std::ptrdiff_t(off + incl));
    off += incl;
  }
  EXPECT_EQ(off, file.size());
  return recs;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) v.push_back(cur);
  if (!s.empty() && s.back() == sep) v.push_back("");
  return v;
}

TEST(Netem, PcapSideFileNamesEveryImpairedFrame) {
  const std::string path = temp_path("side.pcap");
  const uint64_t n = 3000;
  Trace r;
  {
    PcapWriter pcap(path);
    LinkConfig lc = config(111, everything());
    lc.pcap_lost = false;
    DropRule rule;
    ASSERT_TRUE(DropRule::parse("dir=0,op=READ_RESPONSE_MIDDLE,nth=2", rule));
    lc.drop_rules = {rule};
    Link link(lc, &pcap);
    r = run(link, 0, n, mixed);
    link.advance(0, 1e9);
    link.advance(1, 1e9);
  }
  const std::vector<std::vector<uint8_t>> recs = read_pcap(path);
  const LinkStats& s = r.stats;
  EXPECT_EQ(recs.size(), n - s.lost + s.duplicated);  // lost frames left out, copies in
  std::ifstream in(path + Link::kNotesSuffix);
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "frame,sent,dir,t_sent_ns,t_arrive_ns,action,detail,opcode,qpn,psn");
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) rows.push_back(split(line, ','));
  EXPECT_EQ(rows.size(), r.events.size());
  std::map<std::string, uint64_t> actions;
  uint64_t prev_frame = 0;
  bool rule_seen = false;
  for (const auto& c : rows) {
    ASSERT_EQ(c.size(), 10u) << line;
    for (const std::string& a : split(c[5], '+')) ++actions[a];
    const uint64_t sent = std::stoull(c[1]);
    EXPECT_EQ(c[2], "0>1");
    const bool lost = c[5].rfind("lost_", 0) == 0;
    EXPECT_EQ(c[0].empty(), lost) << c[5];  // lost frames are not in the pcap
    EXPECT_EQ(c[4].empty(), lost);
    if (c[5] == "lost_filter") {
      rule_seen = true;
      EXPECT_EQ(c[6], "rule=0");
      EXPECT_EQ(c[7], "0x0e");
    }
    // RoCE fields for RoCE frames only.
    EXPECT_EQ(c[7].empty(), sent % 5 == 4) << sent;
    if (!c[7].empty()) {
      EXPECT_EQ(std::stoull(c[9]), sent);
    }
    if (c[0].empty()) continue;
    const uint64_t frame = std::stoull(c[0]);
    EXPECT_GT(frame, prev_frame);  // pcap order
    prev_frame = frame;
    ASSERT_LE(frame, recs.size());
    const std::vector<uint8_t>& rec = recs[frame - 1];
    // The record is the frame as delivered: corrupted ones differ from the sent frame in the
    // named bit.
    const std::vector<size_t> d = diff_bits(r.sent[sent], rec);
    if (c[5].find("corrupted") != std::string::npos) {
      ASSERT_EQ(d.size(), 1u);
      EXPECT_EQ(c[6].substr(0, 4 + std::to_string(d[0]).size()), "bit=" + std::to_string(d[0]));
    } else {
      EXPECT_TRUE(d.empty()) << line;
    }
  }
  EXPECT_TRUE(rule_seen);
  EXPECT_EQ(actions["lost_random"], s.lost_random);
  EXPECT_EQ(actions["lost_burst"], s.lost_burst);
  EXPECT_EQ(actions["lost_filter"], s.lost_filter);
  EXPECT_EQ(actions["reordered"], s.reordered);
  EXPECT_EQ(actions["duplicated"], s.duplicated);
  EXPECT_EQ(actions["copy"], s.duplicated);
  EXPECT_EQ(actions["jitter"], s.jittered);
  if (access("/usr/bin/tshark", X_OK) == 0) {
    const std::string cmd = "/usr/bin/tshark -r " + path + " -T fields -e frame.number 2>/dev/null | wc -l";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    unsigned long count = 0;
    EXPECT_EQ(std::fscanf(p, "%lu", &count), 1);
    EXPECT_EQ(pclose(p), 0);
    EXPECT_EQ(count, recs.size());
  }
  std::remove(path.c_str());
  std::remove((path + Link::kNotesSuffix).c_str());
}

TEST(Netem, NoSideFileWithoutImpairments) {
  const std::string path = temp_path("plain.pcap");
  {
    PcapWriter pcap(path);
    Link link({}, &pcap);
    run(link, 0, 10);
    EXPECT_FALSE(pcap.notes_open());
  }
  EXPECT_EQ(access((path + Link::kNotesSuffix).c_str(), F_OK), -1);
  EXPECT_EQ(read_pcap(path).size(), 10u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace srnic::sim::test
