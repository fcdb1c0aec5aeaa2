// srnic_comp_coalesce bench: ACK and READ_DONE events for random QPs (PSNs rising per QP
// and kind, across the 24-bit wrap) mixed with NAK events, random input timing and output
// back-pressure. Each CEV_ACKS must merge exactly a non-empty prefix of the QP's events not
// yet reported (newest ACK PSN, newest READ-done PSN, the has_* flags), so nothing is
// reported twice and, once traffic stops, every QP's last CEV_ACKS carries the newest PSNs
// it was sent. NAKs come out unchanged, in order, and ahead of any CEV_ACKS. A stalled
// engine gets at most one CEV_ACKS per pending QP (plus the one staged); after reset the
// merge waits for the pending-bit sweep. An event offered every cycle must not starve the
// output (merges and takes share the one table port).
// The engine's busy set is modelled: a CEV_ACKS the bench takes may keep its QP busy for a
// while (p_busy), and one QP may be held busy for good (hog). A CEV_ACKS for a busy QP must
// never be offered; the QPs behind a busy one must still be reported (it goes to the back
// of the queue), and the busy QP's events must all be reported once it is free.
#include <deque>
#include <vector>

#include "Vsrnic_comp_coalesce.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
constexpr int kSweep = kQps / 16;
constexpr uint32_t kPsnMask = 0xFFFFFF;

// srnic_pkg::comp_ev_t
enum EvF { kKind, kQpn, kPsn, kStatus, kPsn2, kHasAck, kHasRd };
constexpr Layout<7> kEv{{3, 16, 24, 8, 24, 1, 1}};
constexpr uint32_t kAck = 0, kReadDone = 1, kNak = 3, kAcks = 5;

struct Ev {
  uint32_t kind = 0, qpn = 0, psn = 0, status = 0, psn2 = 0;
  bool has_ack = false, has_rd = false;
  uint64_t cycle = 0;  // accepted
};

class CoalesceBench : public ::testing::Test {
 public:
  CoalesceBench()
      : rng(test_seed()), dut(rng.next()), pend(kQps), next_ack(kQps), next_rd(kQps), busy_until(kQps) {
    for (int q = 0; q < kQps; ++q) {
      next_ack[size_t(q)] = rng.percent(50) ? kPsnMask - uint32_t(rng.below(300)) : rng.u32() & kPsnMask;
      next_rd[size_t(q)] = rng.percent(50) ? kPsnMask - uint32_t(rng.below(300)) : rng.u32() & kPsnMask;
    }
  }

  void reset() {
    dut->s_valid = 0;
    dut->l_valid = 0;  // local-error port (send path) idle in this bench
    dut->m_ready = 0;
    dut->busy = 0;
    dut.reset();
    std::fill(busy_until.begin(), busy_until.end(), 0);
    for (auto& p : pend) p.clear();
    naks.clear();
    hold = false;
    reset_cycle = dut.cycle();
  }

  Ev make(unsigned p_nak) {
    Ev e;
    e.qpn = hot[rng.below(hot.size())];
    if (rng.percent(p_nak)) {
      e.kind = kNak;
      e.psn = rng.u32() & kPsnMask;
      e.status = rng.range(1, 13);
      e.psn2 = rng.u32() & kPsnMask;  // not meaningful for a NAK, must pass unchanged
      return e;
    }
    const bool ack = rng.percent(50);
    auto& n = ack ? next_ack[e.qpn] : next_rd[e.qpn];
    n = (n + (rng.percent(3) ? uint32_t(rng.range(5, 5000)) : uint32_t(rng.range(1, 3)))) & kPsnMask;
    e.kind = ack ? kAck : kReadDone;
    e.psn = n;
    e.status = rng.u8();  // ignored for ACK / READ_DONE
    return e;
  }

  void drive(const Ev& e) {
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->s_ev, kEv.at(f).lsb, kEv.at(f).width, v); };
    put(kKind, e.kind);
    put(kQpn, e.qpn);
    put(kPsn, e.psn);
    put(kStatus, e.status);
    put(kPsn2, e.psn2);
    put(kHasAck, rng.below(2));  // inputs the block must ignore
    put(kHasRd, rng.below(2));
  }

  void cycle(unsigned p_in, unsigned p_nak, unsigned p_out) {
    if (!hold && rng.percent(p_in)) {
      cur = make(p_nak);
      hold = true;
    }
    dut->s_valid = hold;
    dut->l_valid = 0;
    if (hold) drive(cur);
    dut->m_ready = rng.percent(p_out);
    dut.eval();
    const uint64_t c = dut.cycle();
    // the engine answers the busy query for the QP at the head of the queue
    dut->busy = is_busy(uint32_t(dut->busy_qpn), c);
    dut.eval();
    // a NAK accepted in an earlier cycle is shown before anything else
    if (!naks.empty() && naks.front().cycle < c) {
      ASSERT_TRUE(dut->m_valid) << "cycle " << c << ": NAK accepted at " << naks.front().cycle << " not shown";
      ASSERT_EQ(kEv.get(dut->m_ev, kKind), kNak) << "cycle " << c << ": CEV_ACKS ahead of a waiting NAK";
    }
    if (dut->m_valid && dut->m_ready) take(c);
    if (HasFatalFailure()) return;
    if (hold && dut->s_ready) {
      cur.cycle = c;
      if (cur.kind == kNak) naks.push_back(cur);
      else pend[cur.qpn].push_back(cur);
      ++(cur.kind == kNak ? sent_naks : sent_co);
      hold = false;
    }
    dut.tick();
  }

  void take(uint64_t c) {
    const auto& m = dut->m_ev;
    Ev g;
    g.kind = uint32_t(kEv.get(m, kKind));
    g.qpn = uint32_t(kEv.get(m, kQpn));
    g.psn = uint32_t(kEv.get(m, kPsn));
    g.status = uint32_t(kEv.get(m, kStatus));
    g.psn2 = uint32_t(kEv.get(m, kPsn2));
    g.has_ack = kEv.get(m, kHasAck);
    g.has_rd = kEv.get(m, kHasRd);
    if (g.kind == kNak) {
      ASSERT_FALSE(naks.empty()) << "cycle " << c << ": NAK out of nowhere";
      const Ev& e = naks.front();
      EXPECT_EQ(g.qpn, e.qpn) << "cycle " << c;
      EXPECT_EQ(g.psn, e.psn) << "cycle " << c;
      EXPECT_EQ(g.status, e.status) << "cycle " << c;
      EXPECT_EQ(g.psn2, e.psn2) << "cycle " << c;
      naks.pop_front();
      ++got_naks;
      return;
    }
    ASSERT_EQ(g.kind, kAcks) << "cycle " << c;
    ASSERT_LT(g.qpn, uint32_t(kQps)) << "cycle " << c;
    ASSERT_FALSE(is_busy(g.qpn, c)) << "cycle " << c << ": CEV_ACKS for QP " << g.qpn << ", busy in the engine";
    if (rng.percent(p_busy)) busy_until[g.qpn] = c + uint64_t(rng.range(1, 300));
    EXPECT_EQ(g.status, 0u) << "cycle " << c;
    ASSERT_TRUE(g.has_ack || g.has_rd) << "cycle " << c << ": empty CEV_ACKS for QP " << g.qpn;
    // find the prefix of the QP's unreported events this event merges
    auto& p = pend[g.qpn];
    bool ha = false, hr = false;
    uint32_t a = 0, r = 0;
    size_t k = 0;
    while (k < p.size() && p[k].cycle < c) {
      if (p[k].kind == kAck) ha = true, a = p[k].psn;
      else hr = true, r = p[k].psn;
      ++k;
      if (ha == g.has_ack && hr == g.has_rd && (!ha || a == g.psn) && (!hr || r == g.psn2)) break;
    }
    const bool match = k > 0 && ha == g.has_ack && hr == g.has_rd && (!ha || a == g.psn) && (!hr || r == g.psn2);
    ASSERT_TRUE(match) << "cycle " << c << ": CEV_ACKS qp " << g.qpn << " ack " << g.has_ack << "/0x" << std::hex
                       << g.psn << " rd " << g.has_rd << "/0x" << g.psn2 << std::dec << " is no merge of the "
                       << p.size() << " unreported events (first: kind " << (p.empty() ? 9 : p[0].kind)
                       << " psn 0x" << std::hex << (p.empty() ? 0 : p[0].psn) << ")";
    p.erase(p.begin(), p.begin() + std::ptrdiff_t(k));
    merged += k;
    ++got_acks;
    if (c < reset_cycle + uint64_t(kSweep)) ADD_FAILURE() << "cycle " << c << ": CEV_ACKS during the reset sweep";
  }

  bool is_busy(uint32_t q, uint64_t c) const {
    return q < uint32_t(kQps) && (int64_t(q) == hog || busy_until[q] > c);
  }

  void drain() {
    for (int i = 0; i < 20 * kQps + 5000 && !HasFatalFailure(); ++i) cycle(0, 0, 100);
    EXPECT_FALSE(hold);
    EXPECT_TRUE(naks.empty()) << naks.size() << " NAKs lost";
    for (int q = 0; q < kQps; ++q)
      EXPECT_TRUE(pend[size_t(q)].empty()) << "QP " << q << ": " << pend[size_t(q)].size()
                                           << " events never reported (newest psn 0x" << std::hex
                                           << (pend[size_t(q)].empty() ? 0 : pend[size_t(q)].back().psn) << ")";
    dut.eval();
    EXPECT_FALSE(dut->m_valid);
  }

  void pick_hot(size_t n) {
    hot.clear();
    for (size_t i = 0; i < n; ++i) hot.push_back(n >= size_t(kQps) ? uint32_t(i) : uint32_t(rng.below(kQps)));
  }

  Rng rng;
  Dut<Vsrnic_comp_coalesce> dut;
  std::vector<std::deque<Ev>> pend;  // per QP: accepted ACK/READ_DONE events not yet reported
  std::deque<Ev> naks;
  std::vector<uint32_t> next_ack, next_rd, hot;
  std::vector<uint64_t> busy_until;  // per QP: busy in the engine before this cycle
  unsigned p_busy = 0;               // % of taken CEV_ACKS whose QP then stays busy a while
  int64_t hog = -1;                  // a QP busy until released
  Ev cur;
  bool hold = false;
  uint64_t reset_cycle = 0, sent_co = 0, sent_naks = 0, got_acks = 0, got_naks = 0, merged = 0;
};

TEST_F(CoalesceBench, SweepDelaysMergeAndNothingIsLost) {
  SRNIC_BENCH_TRACE();
  pick_hot(4);
  reset();
  // events offered from the first cycle after reset, into the sweep (the merge FIFO fills)
  for (int i = 0; i < kSweep + 2 && !HasFatalFailure(); ++i) cycle(100, 0, 100);
  for (int i = 0; i < 200 && !HasFatalFailure(); ++i) cycle(30, 0, 100);
  EXPECT_GT(got_acks, 0u) << "nothing reported after the sweep";
  drain();
}

TEST_F(CoalesceBench, StalledEngineGetsOneEventPerQp) {
  SRNIC_BENCH_TRACE();
  pick_hot(6);
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  const uint64_t before = got_acks;
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(80, 0, 0);  // engine stalled
  ASSERT_GT(sent_co, 1000u);
  drain();
  // While the engine is stalled everything merges into one pending entry per QP; when it
  // resumes, merges and takes alternate, so the events still waiting in the 16-entry merge
  // FIFO can each re-arm their QP once.
  EXPECT_LE(got_acks - before, hot.size() + 1 + 16) << "events of a pending QP not merged";
  EXPECT_EQ(merged, sent_co);
}

TEST_F(CoalesceBench, SustainedInputDoesNotStarveOutput) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 8));
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) cycle(100, 0, 100);
  EXPECT_GT(got_acks, 400u) << "an event every cycle starves CEV_ACKS";
  drain();
  EXPECT_EQ(merged, sent_co);
}

TEST_F(CoalesceBench, NaksPassFirstInOrder) {
  SRNIC_BENCH_TRACE();
  pick_hot(8);
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  for (int i = 0; i < 400 && !HasFatalFailure(); ++i) cycle(90, 30, 0);  // NAK FIFO and merge fill
  for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) cycle(60, 30, 40);
  drain();
  EXPECT_GT(got_naks, 500u);
  EXPECT_EQ(got_naks, sent_naks);
}

TEST_F(CoalesceBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 40));
  reset();
  for (int phase = 0; phase < 30 && !HasFatalFailure(); ++phase) {
    if (rng.percent(30)) pick_hot(size_t(rng.range(1, std::min(kQps, 64))));
    const unsigned pi = unsigned(rng.range(5, 100)), pn = unsigned(rng.range(0, 15)), po = unsigned(rng.range(5, 100));
    p_busy = rng.percent(50) ? unsigned(rng.range(1, 80)) : 0;
    for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(pi, pn, po);
  }
  drain();
  EXPECT_EQ(merged, sent_co);
  EXPECT_GT(sent_co, 20000u);
  EXPECT_LT(got_acks, sent_co * 3 / 4) << "hardly any merging";
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(CoalesceBench, BusyQpsWaitAndDoNotHoldUpOthers) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 24));
  hog = int64_t(hot[0]);
  p_busy = 60;
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  for (int i = 0; i < 20000 && !HasFatalFailure(); ++i) cycle(70, 5, 80);
  ASSERT_FALSE(pend[size_t(hog)].empty()) << "no events for the busy QP: the test proves nothing";
  // every QP but the hog reports everything while the hog stays busy at the queue head
  for (int i = 0; i < 20000 && !HasFatalFailure(); ++i) cycle(0, 0, 100);
  for (uint32_t q : hot)
    if (int64_t(q) != hog)
      EXPECT_TRUE(pend[q].empty()) << "QP " << q << " held up behind busy QP " << hog;
  EXPECT_FALSE(pend[size_t(hog)].empty()) << "busy QP " << hog << " reported while busy";
  hog = -1;  // released: its merged events come out
  drain();
  EXPECT_EQ(merged, sent_co);
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(CoalesceBench, ResetMidTraffic) {
  SRNIC_BENCH_TRACE();
  pick_hot(5);
  reset();
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(70, 10, 30);
  // whatever was pending is gone; nothing from before may be reported afterwards
  reset();
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(70, 10, 30);
  drain();
}

}  // namespace
}  // namespace srnic::verif::blocks
