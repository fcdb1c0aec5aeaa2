// srnic_rd_ctx bench: inserts, lookups, frees and QP flushes against a C++ model of the
// table (lowest free slot on insert, valid bits, a two-cycle lookup pipeline that searches
// the table as it stands one cycle after the request). Lookups hit only by QP and a PSN
// inside [first, last] with 24-bit wrap-around; a full table holds ins_ready low until a
// free reopens it; a flush (QP reset, or the QP entering the error state: two ports that
// may fire together) removes exactly that QP's entries (and blocks inserts for the cycle).
// Every entry carries the READ's path MTU and last-response length back to the lookup.
// Random traffic compares ins_ready and every lookup answer with the model. The two fence
// query ports are checked every cycle: qa_busy/qb_busy is set iff the table (as it stands
// this cycle) holds a valid entry of that QPN, whatever inserted, freed or flushed it.
#include <vector>

#include "Vsrnic_rd_ctx.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kEntries = BENCH_ENTRIES;
constexpr int kQpnBits = BENCH_QPN_BITS;
constexpr uint32_t kQpns = 1u << kQpnBits;
constexpr uint32_t kPsnMask = 0xFFFFFF;

bool psn_in(uint32_t psn, uint32_t first, uint32_t last) {
  return ((psn - first) & kPsnMask) < 0x800000 && ((last - psn) & kPsnMask) < 0x800000;
}

struct Entry {
  bool valid = false;
  uint32_t qpn = 0, first = 0, last = 0;
  uint64_t pa = 0;
  uint32_t mtu = 0, llen = 0;
};

struct Answer {
  bool rsp = false, hit = false;
  int idx = 0;
  Entry e;
};

// Reference of the table and its lookup pipeline.
struct RdCtxModel {
  std::vector<Entry> t = std::vector<Entry>(kEntries);
  bool lk1 = false;
  uint32_t lk1_qpn = 0, lk1_psn = 0;
  Answer out;  // what the outputs show this cycle

  void reset() {
    for (auto& e : t) e.valid = false;
    lk1 = false;
    out = {};
  }
  int free_slot() const {
    for (int i = 0; i < kEntries; ++i)
      if (!t[size_t(i)].valid) return i;
    return -1;
  }
  bool busy(uint32_t qpn) const {
    for (const auto& e : t)
      if (e.valid && e.qpn == qpn) return true;
    return false;
  }
  int used() const {
    int n = 0;
    for (const auto& e : t) n += e.valid;
    return n;
  }
  bool ins_ready(bool flush, bool qflush = false) const { return free_slot() >= 0 && !flush && !qflush; }
  // The search the RTL does for a key registered in the previous cycle (the last match wins).
  Answer search(uint32_t qpn, uint32_t psn) const {
    Answer a;
    a.rsp = true;
    for (int i = 0; i < kEntries; ++i) {
      const Entry& e = t[size_t(i)];
      if (e.valid && e.qpn == qpn && psn_in(psn, e.first, e.last)) {
        a.hit = true;
        a.idx = i;
        a.e = e;
      }
    }
    return a;
  }
  void edge(bool ins, const Entry& ie, bool lk, uint32_t lk_qpn, uint32_t lk_psn, bool fr, int fr_idx,
            bool fl, uint32_t fl_qpn, bool qfl, uint32_t qfl_qpn) {
    Answer next = out;
    next.rsp = false;
    if (lk1) next = search(lk1_qpn, lk1_psn);
    else next.rsp = false;
    out = next;
    lk1 = lk;
    lk1_qpn = lk_qpn;
    lk1_psn = lk_psn;
    const int slot = free_slot();
    if (fr) t[size_t(fr_idx)].valid = false;
    if (fl)
      for (auto& e : t)
        if (e.qpn == fl_qpn) e.valid = false;
    if (qfl)
      for (auto& e : t)
        if (e.qpn == qfl_qpn) e.valid = false;
    if (ins && slot >= 0 && !fl && !qfl) {
      t[size_t(slot)] = ie;
      t[size_t(slot)].valid = true;
    }
  }
};

class RdCtxBench : public ::testing::Test {
 public:
  RdCtxBench() : rng(test_seed()), dut(rng.next()), next_psn(kQpns) {
    for (auto& p : next_psn) p = rng.percent(30) ? kPsnMask - uint32_t(rng.below(40)) : rng.u32() & kPsnMask;
  }

  void reset() {
    dut->ins_valid = dut->lk_valid = dut->free_valid = dut->flush_valid = dut->qerr_flush_valid = 0;
    dut.reset();
    model.reset();
  }

  // One cycle with the given inputs; checks the outputs against the model.
  void step(bool ins, const Entry& ie, bool lk, uint32_t lk_qpn, uint32_t lk_psn, bool fr = false,
            int fr_idx = 0, bool fl = false, uint32_t fl_qpn = 0, bool qfl = false, uint32_t qfl_qpn = 0) {
    dut->ins_valid = ins;
    dut->ins_qpn = ie.qpn;
    dut->ins_first = ie.first;
    dut->ins_last = ie.last;
    dut->ins_pa = ie.pa;
    dut->ins_mtu = ie.mtu;
    dut->ins_last_len = ie.llen;
    dut->lk_valid = lk;
    dut->lk_qpn = lk_qpn;
    dut->lk_psn = lk_psn;
    dut->free_valid = fr;
    dut->free_idx = uint32_t(fr_idx);
    dut->flush_valid = fl;
    dut->flush_qpn = fl_qpn;
    dut->qerr_flush_valid = qfl;
    dut->qerr_flush_qpn = qfl_qpn;
    const uint32_t cand[] = {ie.qpn, lk_qpn, fl_qpn, qfl_qpn, model.t[size_t(fr_idx % kEntries)].qpn};
    uint32_t qq[2];
    for (uint32_t& x : qq) {
      const uint64_t r = rng.below(10);
      if (force_query >= 0) x = uint32_t(force_query);
      else if (r < 5) x = cand[rng.below(5)];
      else if (r < 8) x = model.t[rng.below(kEntries)].qpn;
      else x = uint32_t(rng.below(kQpns));
    }
    dut->qa_qpn = qq[0];
    dut->qb_qpn = qq[1];
    dut.eval();
    const uint64_t c = dut.cycle();
    for (int k = 0; k < 2; ++k) {
      const bool b = k ? dut->qb_busy : dut->qa_busy;
      ASSERT_EQ(b, model.busy(qq[k])) << "cycle " << c << ": query port " << (k ? "b" : "a") << " QPN " << qq[k];
      ++(b ? busy_yes : busy_no);
    }
    ASSERT_EQ(bool(dut->ins_ready), model.ins_ready(fl, qfl)) << "cycle " << c << ", " << model.used() << " used";
    ASSERT_EQ(bool(dut->lk_rsp), model.out.rsp) << "cycle " << c;
    if (model.out.rsp) {
      ++answers;
      ASSERT_EQ(bool(dut->lk_hit), model.out.hit) << "cycle " << c << " lookup qpn " << last_key[0] << " psn "
                                                  << last_key[1];
      if (model.out.hit) {
        ++hits;
        EXPECT_EQ(int(dut->lk_idx), model.out.idx) << "cycle " << c;
        EXPECT_EQ(uint64_t(dut->lk_pa), model.out.e.pa) << "cycle " << c;
        EXPECT_EQ(uint32_t(dut->lk_first), model.out.e.first) << "cycle " << c;
        EXPECT_EQ(uint32_t(dut->lk_last), model.out.e.last) << "cycle " << c;
        EXPECT_EQ(uint32_t(dut->lk_mtu), model.out.e.mtu) << "cycle " << c;
        EXPECT_EQ(uint32_t(dut->lk_last_len), model.out.e.llen) << "cycle " << c;
      }
    }
    last_key[0] = prev_key[0];
    last_key[1] = prev_key[1];
    prev_key[0] = lk_qpn;
    prev_key[1] = lk_psn;
    if (ins && dut->ins_ready) ++inserts;
    model.edge(ins, ie, lk, lk_qpn, lk_psn, fr, fr_idx, fl, fl_qpn, qfl, qfl_qpn);
    dut.tick();
  }
  void idle(int n = 1) {
    for (int i = 0; i < n && !HasFatalFailure(); ++i) step(false, {}, false, 0, 0);
  }
  void lookup(uint32_t qpn, uint32_t psn) { step(false, {}, true, qpn, psn); }

  // A READ of 1..max_pk packets for qpn at its next PSN (PSN ranges of one QP never overlap).
  Entry make(uint32_t qpn, uint32_t max_pk) {
    Entry e;
    e.qpn = qpn;
    e.first = next_psn[qpn];
    e.last = (e.first + uint32_t(rng.below(max_pk))) & kPsnMask;
    e.pa = rng.next();
    e.mtu = uint32_t(rng.range(1, 5));
    e.llen = uint32_t(rng.below(4097));
    return e;
  }
  void advance(const Entry& e) { next_psn[e.qpn] = (e.last + 1 + uint32_t(rng.below(3))) & kPsnMask; }

  // A PSN for a lookup of qpn: inside one of its entries, just outside, or anywhere.
  uint32_t pick_psn(uint32_t qpn) {
    std::vector<int> mine;
    for (int i = 0; i < kEntries; ++i)
      if (model.t[size_t(i)].valid && model.t[size_t(i)].qpn == qpn) mine.push_back(i);
    if (mine.empty() || rng.percent(10)) return rng.u32() & kPsnMask;
    const Entry& e = model.t[size_t(mine[rng.below(mine.size())])];
    const uint32_t span = (e.last - e.first) & kPsnMask;
    switch (rng.below(4)) {
      case 0: return (e.first - 1) & kPsnMask;
      case 1: return (e.last + 1) & kPsnMask;
      default: return (e.first + uint32_t(rng.below(span + 1))) & kPsnMask;
    }
  }

  Rng rng;
  Dut<Vsrnic_rd_ctx> dut;
  RdCtxModel model;
  std::vector<uint32_t> next_psn;
  uint32_t prev_key[2] = {0, 0}, last_key[2] = {0, 0};
  uint64_t inserts = 0, answers = 0, hits = 0, busy_yes = 0, busy_no = 0;
  int force_query = -1;  // both query ports ask for this QPN (-1: random)
};

// Fence queries of one QP: busy while any entry of it is valid; not after the last one is
// freed, flushed (QP reset) or flushed by a QP failure; entries of other QPs do not count.
TEST_F(RdCtxBench, QueryPortsFollowTable) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = uint32_t(rng.below(kQpns)), other = (q + 1) % kQpns;
  force_query = int(q);
  for (int way = 0; way < 3 && !HasFatalFailure(); ++way) {
    idle(2);
    EXPECT_EQ(bool(dut->qa_busy), false);
    Entry eo = make(other, 4);
    step(true, eo, false, 0, 0);
    advance(eo);
    idle(1);
    EXPECT_FALSE(dut->qa_busy) << "an entry of another QP counted";
    std::vector<int> slots;
    for (int n = 0; n < 3; ++n) {
      slots.push_back(model.free_slot());
      Entry e = make(q, 8);
      step(true, e, false, 0, 0);
      advance(e);
      EXPECT_TRUE(dut->qa_busy && dut->qb_busy) << "busy from the cycle after the insert";
    }
    if (way == 0) {
      for (size_t n = 0; n < slots.size(); ++n) {
        step(false, {}, false, 0, 0, true, slots[n]);
        EXPECT_EQ(bool(dut->qa_busy), n + 1 < slots.size()) << "after free " << n;
      }
    } else if (way == 1) {
      step(false, {}, false, 0, 0, false, 0, true, q);
      EXPECT_FALSE(dut->qa_busy || dut->qb_busy) << "after the QP reset flush";
    } else {
      step(false, {}, false, 0, 0, false, 0, false, 0, true, q);
      EXPECT_FALSE(dut->qa_busy || dut->qb_busy) << "after the qerr flush";
    }
    force_query = int(other);
    idle(1);
    EXPECT_TRUE(dut->qa_busy) << "the other QP's entry was removed";
    step(false, {}, false, 0, 0, false, 0, true, other);
    force_query = int(q);
  }
}

TEST_F(RdCtxBench, WrappingRangeLookups) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = kQpns - 1;
  Entry e{true, q, 0xFFFFF0, 0x00000F, 0x123456789ABCDEF0ull, 5, 4096};
  step(true, e, false, 0, 0);
  Entry e2{true, q ^ 1, 0x000100, 0x000100, 0xFEDCBA9876543210ull, 1, 0};  // one-packet, zero-length READ
  step(true, e2, false, 0, 0);
  const uint32_t probes[] = {0xFFFFF0, 0xFFFFFF, 0x000000, 0x00000F, 0xFFFFEF, 0x000010, 0x7FFFF8, 0x000100};
  for (uint32_t p : probes) lookup(q, p);
  for (uint32_t p : probes) lookup(q ^ 1, p);
  idle(3);
  EXPECT_EQ(answers, 16u);
  EXPECT_EQ(hits, 5u);  // 4 inside the wrapping range, 1 for the one-PSN entry
}

TEST_F(RdCtxBench, FullTableBlocksInsertsUntilFree) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kEntries; ++i) {
    const Entry e = make(uint32_t(rng.below(kQpns)), 8);
    step(true, e, false, 0, 0);
    advance(e);
  }
  ASSERT_EQ(model.used(), kEntries);
  dut.eval();
  EXPECT_FALSE(dut->ins_ready);
  // An insert offered to a full table is not taken, however long it waits.
  const Entry extra = make(0, 4);
  for (int i = 0; i < 5; ++i) step(true, extra, false, 0, 0);
  EXPECT_EQ(inserts, uint64_t(kEntries));
  // Free a slot in the middle: the waiting insert goes there on the next cycle.
  const int slot = int(rng.below(kEntries));
  const Entry old = model.t[size_t(slot)];
  step(true, extra, false, 0, 0, true, slot);
  EXPECT_EQ(inserts, uint64_t(kEntries)) << "insert taken in the cycle of the free";
  step(true, extra, false, 0, 0);
  EXPECT_EQ(inserts, uint64_t(kEntries) + 1);
  lookup(extra.qpn, extra.first);
  lookup(old.qpn, old.first);  // the freed entry no longer answers (unless it was extra's)
  idle(3);
  EXPECT_EQ(model.used(), kEntries);
}

TEST_F(RdCtxBench, FlushRemovesOnlyThatQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t qs[3] = {1, 2, kQpns - 1};
  std::vector<Entry> all;
  for (int i = 0; i < kEntries - 1; ++i) {
    const Entry e = make(qs[rng.below(3)], 6);
    step(true, e, false, 0, 0);
    advance(e);
    all.push_back(e);
  }
  // flush QP 2 with an insert offered in the same cycle: the insert must wait
  const Entry e = make(1, 3);
  step(true, e, false, 0, 0, false, 0, true, 2);
  EXPECT_EQ(inserts, uint64_t(kEntries) - 1);
  for (const auto& a : all) lookup(a.qpn, a.last);
  idle(3);
  int hit_expect = 0;
  for (const auto& a : all) hit_expect += a.qpn != 2;
  EXPECT_EQ(hits, uint64_t(hit_expect));
  EXPECT_EQ(model.used(), hit_expect);
}

TEST_F(RdCtxBench, ResetFlushAndErrorFlushTogether) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t qs[3] = {1, 2, kQpns - 1};
  std::vector<Entry> all;
  for (int i = 0; i < kEntries - 2; ++i) {
    const Entry e = make(qs[rng.below(3)], 6);
    step(true, e, false, 0, 0);
    advance(e);
    all.push_back(e);
  }
  // QP 2 is reset while QP 1 enters the error state, an insert offered in the same cycle
  const Entry e = make(kQpns - 1, 3);
  step(true, e, false, 0, 0, false, 0, true, 2, true, 1);
  EXPECT_EQ(inserts, uint64_t(kEntries) - 2) << "insert taken during a flush";
  // the error flush alone also holds inserts off
  step(true, e, false, 0, 0, false, 0, false, 0, true, 1);
  EXPECT_EQ(inserts, uint64_t(kEntries) - 2) << "insert taken during an error flush";
  for (const auto& a : all) lookup(a.qpn, a.first);
  idle(3);
  int hit_expect = 0;
  for (const auto& a : all) hit_expect += a.qpn == kQpns - 1;
  EXPECT_EQ(hits, uint64_t(hit_expect));
  EXPECT_EQ(model.used(), hit_expect);
}

TEST_F(RdCtxBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t n_hot = std::min<uint32_t>(kQpns, 6);
  std::vector<uint32_t> hot;
  for (uint32_t i = 0; i < n_hot; ++i) hot.push_back(uint32_t(rng.below(kQpns)));
  Entry pend = make(hot[0], 20);
  bool have = false;
  int fulls = 0;
  for (int phase = 0; phase < 40 && !HasFatalFailure(); ++phase) {
    const unsigned p_ins = unsigned(rng.range(10, 90)), p_free = unsigned(rng.range(10, 90));
    const unsigned p_lk = unsigned(rng.range(20, 100)), p_flush = unsigned(rng.range(0, 3));
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) {
      if (!have && rng.percent(p_ins)) {
        pend = make(hot[rng.below(n_hot)], rng.percent(10) ? 2000 : 20);
        have = true;
      }
      const uint32_t lq = rng.percent(90) ? hot[rng.below(n_hot)] : uint32_t(rng.below(kQpns));
      const bool lk = rng.percent(p_lk);
      const uint32_t lp = pick_psn(lq);
      std::vector<int> valid;
      for (int k = 0; k < kEntries; ++k)
        if (model.t[size_t(k)].valid) valid.push_back(k);
      const bool fr = !valid.empty() && rng.percent(p_free);
      const int fi = fr ? valid[rng.below(valid.size())] : 0;
      const bool fl = rng.percent(p_flush), qfl = rng.percent(p_flush);
      const uint32_t fq = hot[rng.below(n_hot)], qfq = hot[rng.below(n_hot)];
      fulls += model.free_slot() < 0;
      const bool ready = model.ins_ready(fl, qfl);
      step(have, pend, lk, lq, lp, fr, fi, fl, fq, qfl, qfq);
      if (have && ready) {
        advance(pend);
        have = false;
      }
      if (fl && rng.percent(50)) next_psn[fq] = rng.u32() & kPsnMask;  // the QP restarts
    }
  }
  idle(3);
  EXPECT_GT(inserts, 10000u);
  EXPECT_GT(hits, 5000u);
  EXPECT_GT(answers - hits, 2000u);
  EXPECT_GT(fulls, 100) << "table never full";
  EXPECT_GT(busy_yes, 10000u) << "query ports never busy";
  EXPECT_GT(busy_no, 10000u) << "query ports never idle";
}

TEST_F(RdCtxBench, ResetEmptiesTable) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kEntries; ++i) {
    const Entry e = make(3 % kQpns, 4);
    step(true, e, false, 0, 0);
    advance(e);
  }
  lookup(3 % kQpns, model.t[0].first);
  reset();
  dut.eval();
  EXPECT_TRUE(dut->ins_ready);
  EXPECT_FALSE(dut->lk_rsp) << "lookup answered across reset";
  for (int i = 0; i < kEntries; ++i) lookup(3 % kQpns, model.t[size_t(i)].first);
  idle(3);
  EXPECT_EQ(hits, 0u);
}

// Two READ contexts of one QP with overlapping PSN ranges (the send path never inserts
// them): a lookup in the overlap matches both, and a_lookup_unique reports it.
TEST_F(RdCtxBench, AssertionReportsOverlappingContexts) {
  SRNIC_BENCH_TRACE();
  reset();
  auto insert = [&](uint32_t first, uint32_t last) {
    dut->ins_valid = 1;
    dut->ins_qpn = 1;
    dut->ins_first = first;
    dut->ins_last = last;
    dut->ins_pa = 0;
    dut->ins_mtu = 1;
    dut->ins_last_len = 0;
    dut.eval();
    dut.tick();
    dut->ins_valid = 0;
  };
  insert(100, 110);
  insert(105, 120);
  EXPECT_EQ(dut.take_rtl_errors(), 0);
  dut->lk_valid = 1;
  dut->lk_qpn = 1;
  dut->lk_psn = 107;
  dut.eval();
  dut.tick();
  dut->lk_valid = 0;
  for (int i = 0; i < 3; ++i) dut.tick();
  EXPECT_GE(dut.take_rtl_errors(), 1) << "a_lookup_unique did not report the double match";
}

}  // namespace
}  // namespace srnic::verif::blocks
