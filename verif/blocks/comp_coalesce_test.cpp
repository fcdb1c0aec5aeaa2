// srnic_comp_coalesce bench: ACK, READ_DONE and CEV_RETRY events for random QPs (PSNs rising
// per QP and kind, across the 24-bit wrap) mixed with NAK events from the RX engine and local
// errors (CEV_LERR / CEV_HERR) on the send path's port, random input timing and output
// back-pressure. The reference is the QP's list of accepted, unreported events: each
// CEV_ACKS must merge exactly a non-empty prefix of that list (newest ACK PSN, newest
// READ-done PSN, and the retry episode with its kind, RNR code and PSN when the prefix holds
// one; the has_* flags saying which), so nothing is reported twice, an ACK or READ_DONE
// accepted before a retry is never reported after it (the engine sees the ACKs before the
// episode), and once traffic stops every QP's last CEV_ACKS carries the newest PSNs it was
// sent. Like the RX engine, the bench starts at most one retry episode per QP until the
// episode was reported and answered (a random delay after its CEV_ACKS is taken);
// SecondRetryAssertion breaks that rule on purpose and expects a_one_retry. Direct events
// (NAKs from the RX engine, local errors from the send path) come out unchanged (every
// field), in acceptance order, ahead of any CEV_ACKS; in a cycle with an RX direct event
// the local-error port is refused, and a local error offered all the time still gets
// through. A stalled engine gets at most one CEV_ACKS per pending QP (plus the one staged);
// after reset the merge waits for the pending-bit sweep. An event offered every cycle must
// not starve the output (merges and takes share the one table port).
// The engine's busy set is modelled: a CEV_ACKS the bench takes may keep its QP busy for a
// while (p_busy), and one QP may be held busy for good (hog). A CEV_ACKS for a busy QP must
// never be offered; the QPs behind a busy one must still be reported (it goes to the back
// of the queue), and the busy QP's events (its retry episode too) must all be reported once
// it is free.
// QP incarnations: every merged event carries its QP's incarnation (comp_ev_t.gen; each QP
// starts at a random one). Now and then (p_gen) a QP is reset: its incarnation moves on (by
// one mostly, by up to 15 now and then), its PSNs restart anywhere (often below the old ones)
// and it may start a retry episode at once. An event of another incarnation than the pending
// entry's replaces the entry instead of merging with it: a CEV_ACKS merges the events of its
// prefix from the last change of incarnation on and carries their incarnation; the events
// before are discarded (their retry episode too), and the QP stays queued once.
// NewIncarnationReplacesPendingEntry pins that with written-out expectations. Direct events
// pass their incarnation through unchanged like every other field.
#include <deque>
#include <vector>

#include "Vsrnic_comp_coalesce.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
constexpr int kSweep = kQps / 16;
constexpr uint32_t kPsnMask = 0xFFFFFF;

constexpr size_t kEvF = kCompEv.widths.size();  // comp_ev_t fields (CompEvF)
constexpr uint32_t kAck = 0, kReadDone = 1, kRetry = 2, kNak = 3, kAcks = 5, kLerr = 6, kHerr = 7;

struct Ev {
  uint64_t f[kEvF] = {};  // comp_ev_t fields (CompEvF)
  uint64_t cycle = 0;   // accepted
  uint32_t kind() const { return uint32_t(f[kCeKind]); }
  uint32_t qpn() const { return uint32_t(f[kCeQpn]); }
  uint32_t psn() const { return uint32_t(f[kCePsn]); }
  uint32_t gen() const { return uint32_t(f[kCeGen]); }
};

class CoalesceBench : public ::testing::Test {
 public:
  CoalesceBench()
      : rng(test_seed()), dut(rng.next()), pend(kQps), next_ack(kQps), next_rd(kQps), busy_until(kQps),
        rt_state(kQps), rt_free_at(kQps), gen(kQps) {
    for (int q = 0; q < kQps; ++q) {
      gen[size_t(q)] = uint8_t(rng.below(16));
      next_ack[size_t(q)] = rng.percent(50) ? kPsnMask - uint32_t(rng.below(300)) : rng.u32() & kPsnMask;
      next_rd[size_t(q)] = rng.percent(50) ? kPsnMask - uint32_t(rng.below(300)) : rng.u32() & kPsnMask;
    }
  }

  void reset() {
    dut->s_valid = 0;
    dut->l_valid = 0;
    dut->m_ready = 0;
    dut->busy = 0;
    dut.reset();
    std::fill(busy_until.begin(), busy_until.end(), 0);
    std::fill(rt_state.begin(), rt_state.end(), RtFree);
    for (auto& p : pend) p.clear();
    direct.clear();
    hold = lhold = false;
    reset_cycle = dut.cycle();
  }

  // every field random: the block must pass direct events unchanged and ignore the fields an
  // event kind does not use
  void randomize(Ev& e) {
    for (size_t i = 0; i < kEvF; ++i) e.f[i] = rng.next() & ((1ull << kCompEv.at(i).width) - 1);
  }

  Ev make(unsigned p_nak) {
    Ev e;
    randomize(e);
    const uint32_t q = hot[rng.below(hot.size())];
    e.f[kCeQpn] = q;
    if (rng.percent(p_nak)) {
      e.f[kCeKind] = kNak;
      return e;
    }
    if (rng.percent(p_gen)) new_incarnation(q);
    e.f[kCeGen] = gen[q];
    // a retry episode only while the QP has none open (the RX engine's rwp)
    if (rt_state[q] == RtFree && rt_free_at[q] <= dut.cycle() && rng.percent(p_retry)) {
      e.f[kCeKind] = kRetry;
      rt_state[q] = RtOpen;
      return e;
    }
    const bool ack = rng.percent(50);
    auto& n = ack ? next_ack[q] : next_rd[q];
    n = (n + (rng.percent(3) ? uint32_t(rng.range(5, 5000)) : uint32_t(rng.range(1, 3)))) & kPsnMask;
    e.f[kCeKind] = ack ? kAck : kReadDone;
    e.f[kCePsn] = n;
    return e;
  }

  // q is reset: the next incarnation (one on mostly, up to 15 on), PSNs anywhere (mostly
  // below the old ones, which a merge with the old entry would keep), no retry episode open.
  void new_incarnation(uint32_t q) {
    gen[q] = uint8_t((gen[q] + (rng.percent(80) ? 1 : rng.range(2, 15))) & 15);
    for (uint32_t* n : {&next_ack[q], &next_rd[q]})
      *n = rng.percent(70) ? (*n - uint32_t(rng.range(1, 5000))) & kPsnMask : rng.u32() & kPsnMask;
    rt_state[q] = RtFree;
    rt_free_at[q] = 0;
    ++resets;
  }

  Ev make_local() {
    Ev e;
    randomize(e);
    e.f[kCeKind] = rng.percent(70) ? kLerr : kHerr;
    e.f[kCeQpn] = rng.below(kQps);
    return e;
  }

  static void drive(const Ev& e, VlWide<4>& port) {
    for (size_t i = 0; i < kEvF; ++i) set_bits(port, kCompEv.at(i).lsb, kCompEv.at(i).width, e.f[i]);
  }

  bool is_direct(uint32_t kind) const { return kind != kAck && kind != kReadDone && kind != kRetry; }

  void cycle(unsigned p_in, unsigned p_nak, unsigned p_out, unsigned p_local = 0) {
    if (!hold && rng.percent(p_in)) {
      cur = make(p_nak);
      hold = true;
    }
    if (!lhold && rng.percent(p_local)) {
      lcur = make_local();
      lhold = true;
    }
    dut->s_valid = hold;
    if (hold) drive(cur, dut->s_ev);
    dut->l_valid = lhold;
    if (lhold) drive(lcur, dut->l_ev);
    dut->m_ready = rng.percent(p_out);
    dut.eval();
    const uint64_t c = dut.cycle();
    // the engine answers the busy query for the QP at the head of the queue
    dut->busy = is_busy(uint32_t(dut->busy_qpn), c);
    dut.eval();
    // a direct event accepted in an earlier cycle is shown before anything else
    if (!direct.empty() && direct.front().cycle < c) {
      ASSERT_TRUE(dut->m_valid) << "cycle " << c << ": direct event accepted at " << direct.front().cycle
                                << " not shown";
      ASSERT_NE(kCompEv.get(dut->m_ev, kCeKind), kAcks) << "cycle " << c << ": CEV_ACKS ahead of a waiting "
                                                        << "direct event";
    }
    // the RX engine's direct events go first: the local-error port waits meanwhile
    if (hold && is_direct(cur.kind()) && dut->l_ready)
      ADD_FAILURE() << "cycle " << c << ": local error taken in the cycle of an RX direct event";
    if (dut->m_valid && dut->m_ready) take(c);
    if (HasFatalFailure()) return;
    if (hold && dut->s_ready) {
      cur.cycle = c;
      if (is_direct(cur.kind())) direct.push_back(cur);
      else pend[cur.qpn()].push_back(cur);
      if (cur.kind() == kRetry) ++sent_rt;
      ++(is_direct(cur.kind()) ? sent_naks : sent_co);
      hold = false;
    }
    if (lhold && dut->l_ready) {
      lcur.cycle = c;
      direct.push_back(lcur);
      ++sent_local;
      lhold = false;
    }
    if (lhold) ++local_wait;
    dut.tick();
  }

  void take(uint64_t c) {
    const auto& m = dut->m_ev;
    Ev g;
    for (size_t i = 0; i < kEvF; ++i) g.f[i] = kCompEv.get(m, i);
    if (g.kind() != kAcks) {
      ASSERT_FALSE(direct.empty()) << "cycle " << c << ": direct event (kind " << g.kind() << ") out of nowhere";
      const Ev& e = direct.front();
      for (size_t i = 0; i < kEvF; ++i)
        EXPECT_EQ(g.f[i], e.f[i]) << "cycle " << c << ": direct event (kind " << e.kind() << ", accepted at cycle "
                                  << e.cycle << ") field " << i;
      if (e.kind() == kNak) ++got_naks;
      else ++got_local;
      direct.pop_front();
      return;
    }
    const uint32_t q = g.qpn();
    ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
    ASSERT_FALSE(is_busy(q, c)) << "cycle " << c << ": CEV_ACKS for QP " << q << ", busy in the engine";
    if (rng.percent(p_busy)) busy_until[q] = c + uint64_t(rng.range(1, 300));
    EXPECT_EQ(g.f[kCeStatus], 0u) << "cycle " << c;
    const bool gh_ack = g.f[kCeHasAck], gh_rd = g.f[kCeHasRd], gh_rt = g.f[kCeHasRt];
    ASSERT_TRUE(gh_ack || gh_rd || gh_rt) << "cycle " << c << ": empty CEV_ACKS for QP " << q;
    // find the prefix of the QP's unreported events this event merges: what it reports is the
    // merge of the prefix's events from its last change of incarnation on (`from`)
    auto& p = pend[q];
    bool ha = false, hr = false, ht = false;
    uint32_t a = 0, r = 0, gn = 0;
    size_t from = 0;
    const Ev* rt = nullptr;
    auto matches = [&] {
      return gn == g.gen() && ha == gh_ack && hr == gh_rd && ht == gh_rt && (!ha || a == g.f[kCePsn]) &&
             (!hr || r == g.f[kCePsn2]) &&
             (!ht || (rt->f[kCeRtKind] == g.f[kCeRtKind] && rt->f[kCeRtCode] == g.f[kCeRtCode] &&
                      rt->f[kCeRtPsn] == g.f[kCeRtPsn]));
    };
    size_t k = 0;
    while (k < p.size() && p[k].cycle < c) {
      const Ev& e = p[k];
      if (k > 0 && e.gen() != gn) {  // another incarnation: the entry starts again
        ha = hr = ht = false;
        rt = nullptr;
        from = k;
      }
      gn = e.gen();
      if (e.kind() == kAck) ha = true, a = e.psn();
      else if (e.kind() == kReadDone) hr = true, r = e.psn();
      else ht = true, rt = &e;
      ++k;
      if (matches()) break;
    }
    ASSERT_TRUE(k > 0 && matches()) << "cycle " << c << ": CEV_ACKS qp " << q << " gen " << g.gen() << " ack " << gh_ack
                                    << "/0x" << std::hex
                                    << g.f[kCePsn] << " rd " << gh_rd << "/0x" << g.f[kCePsn2] << " rt " << gh_rt
                                    << "/kind " << g.f[kCeRtKind] << " code 0x" << g.f[kCeRtCode] << " psn 0x"
                                    << g.f[kCeRtPsn] << std::dec << " is no merge of the " << p.size()
                                    << " unreported events (first: kind " << (p.empty() ? 9 : p[0].kind())
                                    << " psn 0x" << std::hex << (p.empty() ? 0 : p[0].psn()) << ")";
    if (ht) {
      // reported: the episode is answered a while later, then the RX engine may start another
      // (in the incarnation it was opened in: a later one may have opened its own already)
      if (gn == gen[q]) {
        rt_state[q] = RtFree;
        rt_free_at[q] = c + rng.range(0, rt_answer);
      }
      ++got_rt;
      size_t before = 0;  // ACK / READ_DONE events accepted before the retry, merged with it
      for (size_t i = from; i < k && p[i].kind() != kRetry; ++i) ++before;
      if (before > 0) ++rt_behind_acks;
      if (from + before + 1 < k) ++rt_then_acks;
    }
    // the events of earlier incarnations in the prefix are discarded
    for (size_t i = 0; i < from; ++i) lost_rt += p[i].kind() == kRetry;
    discarded += from;
    replaced += from > 0;
    p.erase(p.begin(), p.begin() + std::ptrdiff_t(k));
    merged += k;
    ++got_acks;
    if (c < reset_cycle + uint64_t(kSweep)) ADD_FAILURE() << "cycle " << c << ": CEV_ACKS during the reset sweep";
  }

  // Directed tests (engine stalled, never busy): an event of q of the given kind, PSN and
  // incarnation, the other fields random; offered until taken.
  Ev event(uint32_t kind, uint32_t q, uint32_t psn, uint32_t g) {
    Ev e;
    randomize(e);
    e.f[kCeGen] = g;
    e.f[kCeKind] = kind;
    e.f[kCeQpn] = q;
    e.f[kCePsn] = psn;
    return e;
  }
  void offer(const Ev& e) {
    dut->s_valid = 1;
    drive(e, dut->s_ev);
    dut->m_ready = 0;
    dut->busy = 0;
    for (int i = 0; i < 50; ++i) {
      dut.eval();
      const bool ok = dut->s_ready;
      dut.tick();
      if (ok) break;
      ASSERT_LT(i, 49) << "event not taken";
    }
    dut->s_valid = 0;
  }
  // The events the output shows in `cycles` cycles with m_ready high.
  std::vector<Ev> collect(int cycles) {
    std::vector<Ev> out;
    for (int i = 0; i < cycles; ++i) {
      dut->m_ready = 1;
      dut->busy = 0;
      dut.eval();
      if (dut->m_valid) {
        Ev g;
        for (size_t f = 0; f < kEvF; ++f) g.f[f] = kCompEv.get(dut->m_ev, f);
        out.push_back(g);
      }
      dut.tick();
    }
    dut->m_ready = 0;
    return out;
  }

  bool is_busy(uint32_t q, uint64_t c) const {
    return q < uint32_t(kQps) && (int64_t(q) == hog || busy_until[q] > c);
  }

  void drain() {
    for (int i = 0; i < 20 * kQps + 5000 && !HasFatalFailure(); ++i) cycle(0, 0, 100);
    EXPECT_FALSE(hold);
    EXPECT_FALSE(lhold);
    EXPECT_TRUE(direct.empty()) << direct.size() << " direct events lost";
    for (int q = 0; q < kQps; ++q)
      EXPECT_TRUE(pend[size_t(q)].empty()) << "QP " << q << ": " << pend[size_t(q)].size()
                                           << " events never reported (newest kind "
                                           << (pend[size_t(q)].empty() ? 9 : pend[size_t(q)].back().kind()) << ")";
    dut.eval();
    EXPECT_FALSE(dut->m_valid);
  }

  void pick_hot(size_t n) {
    hot.clear();
    for (size_t i = 0; i < n; ++i) hot.push_back(n >= size_t(kQps) ? uint32_t(i) : uint32_t(rng.below(kQps)));
  }

  enum RtState : uint8_t { RtFree, RtOpen };

  Rng rng;
  Dut<Vsrnic_comp_coalesce> dut;
  std::vector<std::deque<Ev>> pend;  // per QP: accepted ACK/READ_DONE/RETRY events not yet reported
  std::deque<Ev> direct;             // accepted direct events (both ports), in acceptance order
  std::vector<uint32_t> next_ack, next_rd, hot;
  std::vector<uint64_t> busy_until;  // per QP: busy in the engine before this cycle
  std::vector<RtState> rt_state;     // per QP: a retry episode accepted and not yet reported
  std::vector<uint64_t> rt_free_at;  // per QP: the last episode is answered (another may start)
  std::vector<uint8_t> gen;          // per QP: its incarnation (what its merged events carry)
  unsigned p_busy = 0;               // % of taken CEV_ACKS whose QP then stays busy a while
  unsigned p_retry = 0;              // % of merged events that are a retry episode (QP allowing)
  unsigned p_gen = 0;                // % of merged events made after their QP was reset
  uint64_t rt_answer = 100;          // an episode is answered 0..rt_answer cycles after its report
  int64_t hog = -1;                  // a QP busy until released
  Ev cur, lcur;
  bool hold = false, lhold = false;
  uint64_t reset_cycle = 0, sent_co = 0, sent_naks = 0, sent_local = 0, got_acks = 0, got_naks = 0, got_local = 0;
  uint64_t merged = 0, sent_rt = 0, got_rt = 0, rt_behind_acks = 0, rt_then_acks = 0, local_wait = 0;
  // QP resets, events of an earlier incarnation discarded (retry episodes among them), CEV_ACKS
  // that replaced an entry
  uint64_t resets = 0, discarded = 0, lost_rt = 0, replaced = 0;
};

TEST_F(CoalesceBench, SweepDelaysMergeAndNothingIsLost) {
  SRNIC_BENCH_TRACE();
  pick_hot(4);
  p_retry = 5;
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
  p_retry = 3;
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  const uint64_t before = got_acks;
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(80, 0, 0);  // engine stalled
  ASSERT_GT(sent_co, 1000u);
  EXPECT_GT(sent_rt, 0u) << "no retry episode while the engine was stalled";
  drain();
  // While the engine is stalled everything merges into one pending entry per QP; when it
  // resumes, merges and takes alternate, so the events still waiting in the 16-entry merge
  // FIFO can each re-arm their QP once.
  EXPECT_LE(got_acks - before, hot.size() + 1 + 16) << "events of a pending QP not merged";
  EXPECT_EQ(merged, sent_co);
  EXPECT_EQ(got_rt, sent_rt);
}

TEST_F(CoalesceBench, SustainedInputDoesNotStarveOutput) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 8));
  p_retry = 2;
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
  p_retry = 5;
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  for (int i = 0; i < 400 && !HasFatalFailure(); ++i) cycle(90, 30, 0, 20);  // direct FIFO and merge fill
  for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) cycle(60, 30, 40, 10);
  drain();
  EXPECT_GT(got_naks, 500u);
  EXPECT_GT(got_local, 150u);
  EXPECT_EQ(got_naks, sent_naks);
  EXPECT_EQ(got_local, sent_local);
}

// Local errors offered every cycle while the RX engine sends a NAK every cycle it can: the
// local error waits, but a cycle without an RX direct event lets it in.
TEST_F(CoalesceBench, LocalErrorsGetThroughRxNaks) {
  SRNIC_BENCH_TRACE();
  pick_hot(8);
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(70, 80, 100, 100);
  drain();
  EXPECT_GT(local_wait, 100u) << "the local-error port never had to wait";
  EXPECT_GT(got_local, 300u);
  EXPECT_EQ(got_local, sent_local);
  EXPECT_EQ(got_naks, sent_naks);
}

TEST_F(CoalesceBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 40));
  reset();
  for (int phase = 0; phase < 30 && !HasFatalFailure(); ++phase) {
    if (rng.percent(30)) pick_hot(size_t(rng.range(1, std::min(kQps, 64))));
    const unsigned pi = unsigned(rng.range(5, 100)), pn = unsigned(rng.range(0, 15)), po = unsigned(rng.range(5, 100));
    const unsigned pl = rng.percent(50) ? unsigned(rng.range(0, 10)) : 0;
    p_busy = rng.percent(50) ? unsigned(rng.range(1, 80)) : 0;
    p_retry = rng.percent(70) ? unsigned(rng.range(1, 30)) : 0;
    p_gen = rng.percent(70) ? unsigned(rng.range(1, 6)) : 0;
    rt_answer = rng.range(0, 400);
    for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(pi, pn, po, pl);
  }
  drain();
  std::printf("[bench] %llu QP resets: %llu CEV_ACKS replaced an entry, %llu events discarded (%llu retry episodes)\n",
              (unsigned long long)resets, (unsigned long long)replaced, (unsigned long long)discarded,
              (unsigned long long)lost_rt);
  EXPECT_EQ(merged, sent_co);
  EXPECT_EQ(got_rt + lost_rt, sent_rt);
  EXPECT_GT(resets, 100u);
  EXPECT_GT(replaced, 30u) << "few events of a new incarnation found their QP pending";
  EXPECT_GT(lost_rt, 2u) << "few retry episodes discarded by a new incarnation";
  EXPECT_GT(sent_co, 20000u);
  EXPECT_GT(sent_rt, 500u);
  EXPECT_GT(rt_behind_acks, 50u) << "no retry merged behind ACKs of its QP";
  EXPECT_GT(rt_then_acks, 50u) << "no ACK merged after a retry of its QP";
  EXPECT_GT(got_local, 100u);
  EXPECT_LT(got_acks, sent_co * 3 / 4) << "hardly any merging";
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(CoalesceBench, BusyQpsWaitAndDoNotHoldUpOthers) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 24));
  hog = int64_t(hot[0]);
  p_busy = 60;
  p_retry = 5;
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  for (int i = 0; i < 20000 && !HasFatalFailure(); ++i) cycle(70, 5, 80, 3);
  ASSERT_FALSE(pend[size_t(hog)].empty()) << "no events for the busy QP: the test proves nothing";
  ASSERT_EQ(rt_state[size_t(hog)], RtOpen) << "no retry episode waits for the busy QP";
  // every QP but the hog reports everything while the hog stays busy at the queue head
  for (int i = 0; i < 20000 && !HasFatalFailure(); ++i) cycle(0, 0, 100);
  for (uint32_t q : hot) {
    if (int64_t(q) == hog) continue;
    EXPECT_TRUE(pend[q].empty()) << "QP " << q << " held up behind busy QP " << hog;
  }
  EXPECT_FALSE(pend[size_t(hog)].empty()) << "busy QP " << hog << " reported while busy";
  hog = -1;  // released: its merged events come out, its retry episode too
  drain();
  EXPECT_EQ(merged, sent_co);
  EXPECT_EQ(got_rt, sent_rt);
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(CoalesceBench, ResetMidTraffic) {
  SRNIC_BENCH_TRACE();
  pick_hot(5);
  p_retry = 10;
  p_gen = 3;
  reset();
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(70, 10, 30, 5);
  // whatever was pending is gone (retry episodes too); nothing from before may be reported
  reset();
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(70, 10, 30, 5);
  drain();
}

// Exact contents, engine stalled: ACK and READ_DONE of QP a before and after its retry
// episode merge into one CEV_ACKS with the newest PSNs and the episode; QP b's events stay
// apart; a NAK accepted last comes out first; after the take, a new ACK of a is reported
// alone (the episode is not repeated).
TEST_F(CoalesceBench, RetryMergesWithTheAcksAroundIt) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  const uint32_t a = uint32_t(rng.below(kQps)), b = uint32_t(a + 1 + rng.below(kQps - 1)) % kQps;
  auto offer = [&](Ev e) {
    dut->s_valid = 1;
    drive(e, dut->s_ev);
    dut->m_ready = 0;
    dut->busy = 0;
    for (int i = 0; i < 50; ++i) {
      dut.eval();
      const bool ok = dut->s_ready;
      dut.tick();
      if (ok) break;
      ASSERT_LT(i, 49) << "event not taken";
    }
    dut->s_valid = 0;
  };
  auto ev = [&](uint32_t kind, uint32_t q, uint32_t psn) {
    Ev e;
    randomize(e);
    e.f[kCeGen] = gen[q];
    e.f[kCeKind] = kind;
    e.f[kCeQpn] = q;
    e.f[kCePsn] = psn;
    return e;
  };
  // an ACK of a third QP is staged first: the engine is stalled, everything after it merges
  uint32_t c3 = 0;
  while (c3 == a || c3 == b) ++c3;
  offer(ev(kAck, c3, 0x000777));
  offer(ev(kAck, a, 0xFFFFF0));
  offer(ev(kReadDone, b, 0x000100));
  offer(ev(kReadDone, a, 0x000010));
  Ev rt = ev(kRetry, a, rng.u32() & kPsnMask);
  rt.f[kCeRtKind] = 2;
  rt.f[kCeRtCode] = 0x13;
  rt.f[kCeRtPsn] = 0x000005;
  offer(rt);
  offer(ev(kAck, a, 0x000002));  // across the wrap: newer than 0xFFFFF0
  offer(ev(kAck, a, 0xFFFFF8));  // older than 0x000002: does not replace it
  Ev nak = ev(kNak, b, 0x123456);
  offer(nak);
  for (int i = 0; i < 40; ++i) {  // merges finish, the first QP is staged
    dut->m_ready = 0;
    dut.eval();
    dut.tick();
  }
  std::vector<Ev> out;
  for (int i = 0; i < 100 && out.size() < 4; ++i) {
    dut->m_ready = 1;
    dut.eval();
    if (dut->m_valid) {
      Ev g;
      for (size_t f = 0; f < kEvF; ++f) g.f[f] = kCompEv.get(dut->m_ev, f);
      out.push_back(g);
    }
    dut.tick();
  }
  ASSERT_EQ(out.size(), 4u);
  for (size_t f = 0; f < kEvF; ++f) EXPECT_EQ(out[0].f[f], nak.f[f]) << "the NAK first, unchanged: field " << f;
  EXPECT_EQ(out[1].qpn(), c3) << "the staged event second";
  const Ev* ga = out[2].qpn() == a ? &out[2] : &out[3];
  const Ev* gb = out[2].qpn() == a ? &out[3] : &out[2];
  EXPECT_EQ(ga->qpn(), a);
  EXPECT_EQ(gb->qpn(), b);
  EXPECT_EQ(ga->kind(), kAcks);
  EXPECT_EQ(ga->gen(), gen[a]);
  EXPECT_EQ(gb->gen(), gen[b]);
  EXPECT_EQ(ga->f[kCeHasAck], 1u);
  EXPECT_EQ(ga->f[kCePsn], 0x000002u);
  EXPECT_EQ(ga->f[kCeHasRd], 1u);
  EXPECT_EQ(ga->f[kCePsn2], 0x000010u);
  EXPECT_EQ(ga->f[kCeHasRt], 1u);
  EXPECT_EQ(ga->f[kCeRtKind], 2u);
  EXPECT_EQ(ga->f[kCeRtCode], 0x13u);
  EXPECT_EQ(ga->f[kCeRtPsn], 0x000005u);
  EXPECT_EQ(ga->f[kCeStatus], 0u);
  EXPECT_EQ(gb->kind(), kAcks);
  EXPECT_EQ(gb->f[kCeHasAck], 0u);
  EXPECT_EQ(gb->f[kCeHasRd], 1u);
  EXPECT_EQ(gb->f[kCePsn2], 0x000100u);
  EXPECT_EQ(gb->f[kCeHasRt], 0u) << "QP b got QP a's retry episode";
  // a new ACK of a after the take: reported alone
  offer(ev(kAck, a, 0x000003));
  Ev g2;
  bool got = false;
  for (int i = 0; i < 100 && !got; ++i) {
    dut->m_ready = 1;
    dut.eval();
    if (dut->m_valid) {
      for (size_t f = 0; f < kEvF; ++f) g2.f[f] = kCompEv.get(dut->m_ev, f);
      got = true;
    }
    dut.tick();
  }
  ASSERT_TRUE(got);
  EXPECT_EQ(g2.qpn(), a);
  EXPECT_EQ(g2.f[kCeHasAck], 1u);
  EXPECT_EQ(g2.f[kCePsn], 0x000003u);
  EXPECT_EQ(g2.f[kCeHasRd], 0u);
  EXPECT_EQ(g2.f[kCeHasRt], 0u) << "the retry episode was reported twice";
  EXPECT_FALSE(dut.rtl_error());
}

// Exact contents, engine stalled: QP a's ACK, retry episode and READ_DONE of incarnation g are
// pending when a is reset; its next events (incarnation g + 1: an ACK at a PSN below the old
// one, a second retry episode, an older ACK) replace the entry: one CEV_ACKS for a, with
// incarnation g + 1, the new ACK PSN and episode, no READ_DONE; the second episode is no
// second episode of one incarnation (no a_one_retry). QP b's event between them is untouched.
// Then an incarnation that moves on by 8 (the low three bits equal) replaces again.
TEST_F(CoalesceBench, NewIncarnationReplacesPendingEntry) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  const uint32_t a = uint32_t(rng.below(kQps)), b = uint32_t(a + 1 + rng.below(kQps - 1)) % kQps;
  uint32_t c3 = 0;
  while (c3 == a || c3 == b) ++c3;
  const uint32_t g = gen[a], g1 = (g + 1) & 15;
  offer(event(kAck, c3, 0x000777, gen[c3]));  // staged: everything after it merges
  offer(event(kAck, a, 0x000500, g));
  Ev rt = event(kRetry, a, rng.u32() & kPsnMask, g);
  rt.f[kCeRtKind] = 1;
  rt.f[kCeRtCode] = 0x03;
  rt.f[kCeRtPsn] = 0x000400;
  offer(rt);
  offer(event(kReadDone, a, 0x000600, g));
  offer(event(kAck, b, 0x000010, gen[b]));
  offer(event(kAck, a, 0x000100, g1));  // below 0x500: a merge would keep 0x500
  Ev rt2 = event(kRetry, a, rng.u32() & kPsnMask, g1);
  rt2.f[kCeRtKind] = 2;
  rt2.f[kCeRtCode] = 0x13;
  rt2.f[kCeRtPsn] = 0x000050;
  offer(rt2);
  offer(event(kAck, a, 0x0000F0, g1));  // older than 0x100 of the same incarnation: kept out
  for (int i = 0; i < 40; ++i) {  // merges finish
    dut.eval();
    dut.tick();
  }
  const std::vector<Ev> out = collect(200);
  ASSERT_EQ(out.size(), 3u) << "QP a queued twice, or an event lost";
  EXPECT_EQ(out[0].qpn(), c3);
  EXPECT_EQ(out[1].qpn(), a) << "QP a no longer first in the queue";
  EXPECT_EQ(out[2].qpn(), b);
  const Ev& ga = out[1];
  EXPECT_EQ(ga.kind(), kAcks);
  EXPECT_EQ(ga.gen(), g1) << "the entry's incarnation";
  EXPECT_EQ(ga.f[kCeHasAck], 1u);
  EXPECT_EQ(ga.f[kCePsn], 0x000100u) << "the ACK of the old incarnation merged with the new one";
  EXPECT_EQ(ga.f[kCeHasRd], 0u) << "the READ_DONE of the old incarnation kept";
  EXPECT_EQ(ga.f[kCeHasRt], 1u);
  EXPECT_EQ(ga.f[kCeRtKind], 2u) << "the retry episode of the old incarnation kept";
  EXPECT_EQ(ga.f[kCeRtCode], 0x13u);
  EXPECT_EQ(ga.f[kCeRtPsn], 0x000050u);
  EXPECT_EQ(out[2].gen(), gen[b]);
  EXPECT_EQ(out[2].f[kCePsn], 0x000010u);
  EXPECT_EQ(out[2].f[kCeHasRt], 0u);
  // incarnations g1 and g1 + 8 (equal in their low three bits): replaced, not merged
  const uint32_t g2 = (g1 + 8) & 15;
  offer(event(kAck, c3, 0x000778, gen[c3]));
  offer(event(kReadDone, a, 0x000700, g1));
  offer(event(kAck, a, 0x000200, g2));
  for (int i = 0; i < 40; ++i) {
    dut.eval();
    dut.tick();
  }
  const std::vector<Ev> out2 = collect(200);
  ASSERT_EQ(out2.size(), 2u);
  EXPECT_EQ(out2[1].qpn(), a);
  EXPECT_EQ(out2[1].gen(), g2);
  EXPECT_EQ(out2[1].f[kCeHasAck], 1u);
  EXPECT_EQ(out2[1].f[kCePsn], 0x000200u);
  EXPECT_EQ(out2[1].f[kCeHasRd], 0u) << "incarnations " << g1 << " and " << g2 << " merged";
}

// A second retry episode of a QP merged while its first is still pending breaks the RX
// engine's rule (one episode per QP until answered): a_one_retry must fire.
TEST_F(CoalesceBench, SecondRetryAssertion) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kSweep + 2; ++i) cycle(0, 0, 0);
  const uint32_t q = uint32_t(rng.below(kQps)), other = (q + 1) % kQps;
  // an ACK of another QP is staged first (m_ready low), so q's first episode stays pending
  Ev ack;
  randomize(ack);
  ack.f[kCeKind] = kAck;
  ack.f[kCeQpn] = other;
  Ev e;
  randomize(e);
  e.f[kCeKind] = kRetry;
  e.f[kCeQpn] = q;
  dut->m_ready = 0;
  dut->busy = 0;
  for (int n = 0; n < 3; ++n) {
    dut->s_valid = 1;
    drive(n == 0 ? ack : e, dut->s_ev);
    for (int i = 0; i < 50; ++i) {
      dut.eval();
      const bool ok = dut->s_ready;
      dut.tick();
      if (ok) break;
    }
    dut->s_valid = 0;
    for (int i = 0; i < 10; ++i) {
      dut.eval();
      dut.tick();
    }
  }
  EXPECT_GE(dut.take_rtl_errors(), 1) << "a second retry episode of QP " << q << " merged without a_one_retry";
}

}  // namespace
}  // namespace srnic::verif::blocks
