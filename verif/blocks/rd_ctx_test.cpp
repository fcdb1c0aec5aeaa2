// srnic_rd_ctx bench: inserts, lookups, frees and QP flushes against a C++ model of the
// table (lowest free slot on insert, valid bits, a two-cycle lookup pipeline that searches
// the table as it stands one cycle after the request). Lookups hit only by QP and a PSN
// inside [first, last] with 24-bit wrap-around; a full table holds ins_ready low until a
// free reopens it; a free names the QP too and frees the entry only while it still belongs
// to that QP (a late free of a flushed entry must not free the next READ in that slot); a
// flush (QP reset, the QP entering the error state, or a go-back-N rewind of the QP: three
// ports that may fire together) removes exactly that QP's entries (and blocks inserts for
// the cycle). Every entry carries the READ's path MTU and last-response length back to the
// lookup. Random traffic compares ins_ready and every lookup answer with the model. The two
// fence query ports are checked every cycle: qa_busy/qb_busy is set iff the table (as it
// stands this cycle) holds a valid entry of that QPN, whatever inserted, freed or flushed
// it; so is the implied-NAK query: bq_hit iff the QP has a valid entry whose last PSN is
// strictly before bq_psn (24-bit serial arithmetic: bq_psn - last in 1 .. 2^23 - 1), probed
// around each entry's last PSN (last, +1, +2^23 - 1, +2^23, -1), across the PSN wrap; and
// bq_any iff bq_qpn has any valid entry (whatever bq_psn), after inserts, frees, stale frees
// and each kind of flush. n_free, every cycle: the free entries of the table as it stood in the
// previous cycle (0 in the first cycle after reset), whatever inserted, freed or flushed them.
// qb_cnt, every cycle: the valid entries of qb_qpn as the table stands this cycle (the send
// path's per-QP share); n_freed: the entries freed (free or any flush) at the last edge.
// The read port, every cycle at a random index: valid as the table stands this cycle, and a
// live entry's QPN, address, PSN range, MTU and last-response length.
#include <algorithm>
#include <cstdio>
#include <string>
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
// a after b (24-bit serial number arithmetic, half window)
bool psn_gt(uint32_t a, uint32_t b) { return a != b && ((a - b) & kPsnMask) < 0x800000; }

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
  Answer out;      // what the outputs show this cycle
  int n_free = 0;  // what n_free shows this cycle
  int n_freed = 0; // what n_freed shows this cycle: entries freed at the last edge

  void reset() {
    for (auto& e : t) e.valid = false;
    lk1 = false;
    out = {};
    n_free = 0;
    n_freed = 0;
  }
  int free_slot() const {
    for (int i = 0; i < kEntries; ++i)
      if (!t[size_t(i)].valid) return i;
    return -1;
  }
  bool busy(uint32_t qpn) const { return count(qpn) > 0; }
  int count(uint32_t qpn) const {
    int n = 0;
    for (const auto& e : t) n += e.valid && e.qpn == qpn;
    return n;
  }
  int used() const {
    int n = 0;
    for (const auto& e : t) n += e.valid;
    return n;
  }
  // the implied-NAK query: a valid entry of qpn whose last PSN is before psn
  bool before(uint32_t qpn, uint32_t psn) const {
    for (const auto& e : t)
      if (e.valid && e.qpn == qpn && psn_gt(psn, e.last)) return true;
    return false;
  }
  bool ins_ready(bool flush, bool qflush = false, bool rwflush = false) const {
    return free_slot() >= 0 && !flush && !qflush && !rwflush;
  }
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
            uint32_t fr_qpn, bool fl, uint32_t fl_qpn, bool qfl, uint32_t qfl_qpn, bool rwf, uint32_t rwf_qpn) {
    Answer next = out;
    next.rsp = false;
    if (lk1) next = search(lk1_qpn, lk1_psn);
    else next.rsp = false;
    out = next;
    n_free = kEntries - used();
    lk1 = lk;
    lk1_qpn = lk_qpn;
    lk1_psn = lk_psn;
    const int slot = free_slot();
    std::vector<bool> was(kEntries);
    for (int i = 0; i < kEntries; ++i) was[size_t(i)] = t[size_t(i)].valid;
    if (fr && t[size_t(fr_idx)].qpn == fr_qpn) t[size_t(fr_idx)].valid = false;
    if (rwf)
      for (auto& e : t)
        if (e.qpn == rwf_qpn) e.valid = false;
    if (fl)
      for (auto& e : t)
        if (e.qpn == fl_qpn) e.valid = false;
    if (qfl)
      for (auto& e : t)
        if (e.qpn == qfl_qpn) e.valid = false;
    n_freed = 0;
    for (int i = 0; i < kEntries; ++i) n_freed += was[size_t(i)] && !t[size_t(i)].valid;
    if (ins && slot >= 0 && !fl && !qfl && !rwf) {
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
    dut->rw_flush_valid = 0;
    dut.reset();
    model.reset();
  }

  // One cycle with the given inputs; checks the outputs against the model. A free names the
  // QPN of the entry it frees (as the RX engine does) unless fr_qpn >= 0 names another.
  void step(bool ins, const Entry& ie, bool lk, uint32_t lk_qpn, uint32_t lk_psn, bool fr = false,
            int fr_idx = 0, bool fl = false, uint32_t fl_qpn = 0, bool qfl = false, uint32_t qfl_qpn = 0,
            bool rwf = false, uint32_t rwf_qpn = 0, int64_t fr_qpn = -1) {
    const uint32_t frq = fr_qpn >= 0 ? uint32_t(fr_qpn) : model.t[size_t(fr_idx % kEntries)].qpn;
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
    dut->free_qpn = frq;
    dut->rw_flush_valid = rwf;
    dut->rw_flush_qpn = rwf_qpn;
    dut->flush_valid = fl;
    dut->flush_qpn = fl_qpn;
    dut->qerr_flush_valid = qfl;
    dut->qerr_flush_qpn = qfl_qpn;
    const uint32_t cand[] = {ie.qpn, lk_qpn, fl_qpn, qfl_qpn, model.t[size_t(fr_idx % kEntries)].qpn, rwf_qpn};
    uint32_t qq[3];
    for (uint32_t& x : qq) {
      const uint64_t r = rng.below(10);
      if (force_query >= 0) x = uint32_t(force_query);
      else if (r < 5) x = cand[rng.below(6)];
      else if (r < 8) x = model.t[rng.below(kEntries)].qpn;
      else x = uint32_t(rng.below(kQpns));
    }
    const uint32_t bpsn = force_bq_psn >= 0 ? uint32_t(force_bq_psn) : pick_bq_psn(qq[2]);
    dut->qa_qpn = qq[0];
    dut->qb_qpn = qq[1];
    dut->bq_qpn = qq[2];
    dut->bq_psn = bpsn;
    const int rx = int(rng.below(kEntries));
    dut->rx_idx = uint32_t(rx);
    dut.eval();
    const uint64_t c = dut.cycle();
    {  // the read port: the entry by index, as the table stands this cycle
      const Entry& e = model.t[size_t(rx)];
      ASSERT_EQ(bool(dut->rx_valid), e.valid) << "cycle " << c << ": read port, entry " << rx;
      if (e.valid) {
        EXPECT_EQ(uint32_t(dut->rx_qpn), e.qpn) << "cycle " << c << ": read port QPN, entry " << rx;
        EXPECT_EQ(uint64_t(dut->rx_pa), e.pa) << "cycle " << c << ": read port address, entry " << rx;
        EXPECT_EQ(uint32_t(dut->rx_first), e.first) << "cycle " << c << ": read port first PSN, entry " << rx;
        EXPECT_EQ(uint32_t(dut->rx_last), e.last) << "cycle " << c << ": read port last PSN, entry " << rx;
        EXPECT_EQ(uint32_t(dut->rx_mtu), e.mtu) << "cycle " << c << ": read port MTU, entry " << rx;
        EXPECT_EQ(uint32_t(dut->rx_last_len), e.llen) << "cycle " << c << ": read port last length, entry " << rx;
        ++rx_live;
      }
    }
    for (int k = 0; k < 2; ++k) {
      const bool b = k ? dut->qb_busy : dut->qa_busy;
      ASSERT_EQ(b, model.busy(qq[k])) << "cycle " << c << ": query port " << (k ? "b" : "a") << " QPN " << qq[k];
      ++(b ? busy_yes : busy_no);
    }
    ASSERT_EQ(int(dut->qb_cnt), model.count(qq[1])) << "cycle " << c << ": entries of QPN " << qq[1] << " (qb_cnt)";
    max_qb_cnt = std::max(max_qb_cnt, int(dut->qb_cnt));
    ASSERT_EQ(int(dut->n_freed), model.n_freed) << "cycle " << c << ": entries freed at the last edge";
    max_freed = std::max(max_freed, int(dut->n_freed));
    const bool bq = model.before(qq[2], bpsn);
    ASSERT_EQ(bool(dut->bq_hit), bq) << "cycle " << c << ": implied-NAK query QPN " << qq[2] << " PSN 0x" << std::hex
                                     << bpsn << " (" << describe(qq[2]) << ")";
    ++(bq ? bq_yes : bq_no);
    const bool any = model.busy(qq[2]);
    ASSERT_EQ(bool(dut->bq_any), any) << "cycle " << c << ": bq_any for QPN " << qq[2] << " (" << describe(qq[2])
                                      << ")";
    ++(any ? any_yes : any_no);
    bq_any_psn_only += any && !bq;  // an entry of the QP, none before bq_psn
    ASSERT_EQ(bool(dut->ins_ready), model.ins_ready(fl, qfl, rwf)) << "cycle " << c << ", " << model.used() << " used";
    ASSERT_EQ(int(dut->n_free), model.n_free) << "cycle " << c << ": free entries (as of the previous cycle; "
                                              << kEntries - model.used() << " free now)";
    ++n_free_seen[size_t(model.n_free)];
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
    if (fr && model.t[size_t(fr_idx)].valid) ++(model.t[size_t(fr_idx)].qpn == frq ? frees : stale_frees);
    model.edge(ins, ie, lk, lk_qpn, lk_psn, fr, fr_idx, frq, fl, fl_qpn, qfl, qfl_qpn, rwf, rwf_qpn);
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

  // A PSN for the implied-NAK query of qpn: around the last PSN of one of its entries (at it,
  // just after, the far end of the half window, just beyond it, just before), or anywhere.
  uint32_t pick_bq_psn(uint32_t qpn) {
    std::vector<int> mine;
    for (int i = 0; i < kEntries; ++i)
      if (model.t[size_t(i)].valid && model.t[size_t(i)].qpn == qpn) mine.push_back(i);
    if (mine.empty() || rng.percent(10)) return rng.u32() & kPsnMask;
    const Entry& e = model.t[size_t(mine[rng.below(mine.size())])];
    static const uint32_t offs[] = {0, 1, 2, 0x7FFFFF, 0x800000, 0x800001, kPsnMask, 0x7FFFFE};
    if (rng.percent(15)) return (e.first + uint32_t(rng.below(((e.last - e.first) & kPsnMask) + 1))) & kPsnMask;
    return (e.last + offs[rng.below(8)]) & kPsnMask;
  }
  std::string describe(uint32_t qpn) const {
    std::string d = "entries";
    char b[64];
    for (int i = 0; i < kEntries; ++i)
      if (model.t[size_t(i)].valid && model.t[size_t(i)].qpn == qpn) {
        std::snprintf(b, sizeof b, " [%d: 0x%06x..0x%06x]", i, model.t[size_t(i)].first, model.t[size_t(i)].last);
        d += b;
      }
    return d;
  }

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
  uint64_t inserts = 0, answers = 0, hits = 0, busy_yes = 0, busy_no = 0, bq_yes = 0, bq_no = 0;
  uint64_t any_yes = 0, any_no = 0, bq_any_psn_only = 0;
  uint64_t rx_live = 0;  // cycles the read port named a live entry (its fields checked)
  uint64_t frees = 0, stale_frees = 0;  // frees of valid entries naming their QP / another QP
  std::vector<uint64_t> n_free_seen = std::vector<uint64_t>(kEntries + 1);
  int max_qb_cnt = 0, max_freed = 0;  // the largest counts the two outputs showed  // cycles n_free showed each count
  int force_query = -1;                 // all three query ports ask for this QPN (-1: random)
  int64_t force_bq_psn = -1;            // the implied-NAK query asks for this PSN (-1: random)
};

// Fence queries of one QP: busy while any entry of it is valid; not after the last one is
// freed, flushed (QP reset), flushed by a QP failure or by a rewind; entries of other QPs do
// not count.
TEST_F(RdCtxBench, QueryPortsFollowTable) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = uint32_t(rng.below(kQpns)), other = (q + 1) % kQpns;
  force_query = int(q);
  for (int way = 0; way < 4 && !HasFatalFailure(); ++way) {
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
      EXPECT_TRUE(dut->qa_busy && dut->qb_busy && dut->bq_any) << "busy from the cycle after the insert";
    }
    if (way == 0) {
      for (size_t n = 0; n < slots.size(); ++n) {
        step(false, {}, false, 0, 0, true, slots[n]);
        EXPECT_EQ(bool(dut->qa_busy), n + 1 < slots.size()) << "after free " << n;
        EXPECT_EQ(bool(dut->bq_any), n + 1 < slots.size()) << "bq_any after free " << n;
      }
    } else if (way == 1) {
      step(false, {}, false, 0, 0, false, 0, true, q);
      EXPECT_FALSE(dut->qa_busy || dut->qb_busy || dut->bq_any) << "after the QP reset flush";
    } else if (way == 2) {
      step(false, {}, false, 0, 0, false, 0, false, 0, true, q);
      EXPECT_FALSE(dut->qa_busy || dut->qb_busy || dut->bq_any) << "after the qerr flush";
    } else {
      step(false, {}, false, 0, 0, false, 0, false, 0, false, 0, true, q);
      EXPECT_FALSE(dut->qa_busy || dut->qb_busy || dut->bq_any) << "after the rewind flush";
    }
    force_query = int(other);
    idle(1);
    EXPECT_TRUE(dut->qa_busy && dut->bq_any) << "the other QP's entry was removed";
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

// qb_cnt follows one QP's entries up to three quarters of the table (in the full build 48,
// beyond the send path's share of 16), and n_freed counts what one edge freed: a single free,
// then a flush of all the other entries of that QP at once.
TEST_F(RdCtxBench, ShareCountAndFreedCount) {
  SRNIC_BENCH_TRACE();
  reset();
  const int n5 = kEntries - kEntries / 4;
  force_query = 5;
  for (int i = 0; i < kEntries; ++i) {
    const Entry e = make(i < n5 ? 5 : 9, 2);
    step(true, e, false, 0, 0);
    advance(e);
  }
  idle(2);
  EXPECT_EQ(max_qb_cnt, n5) << "qb_cnt never showed QP 5's entries";
  step(false, Entry{}, false, 0, 0, true, 0);  // entry 0 (QP 5) freed
  idle(2);
  EXPECT_EQ(max_freed, 1);
  step(false, Entry{}, false, 0, 0, false, 0, true, 5);  // QP 5 reset: the rest at one edge
  idle(2);
  EXPECT_EQ(max_freed, n5 - 1) << "a flush of QP 5's entries";
  EXPECT_EQ(model.used(), kEntries - n5);
  force_query = -1;
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
    const unsigned p_rw = unsigned(rng.range(0, 4)), p_stale = unsigned(rng.range(0, 30));
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
      const bool fl = rng.percent(p_flush), qfl = rng.percent(p_flush), rwf = rng.percent(p_rw);
      const uint32_t fq = hot[rng.below(n_hot)], qfq = hot[rng.below(n_hot)], rwq = hot[rng.below(n_hot)];
      // a late free: names a QP the entry may no longer belong to
      const int64_t frq = rng.percent(p_stale) ? int64_t(hot[rng.below(n_hot)]) : -1;
      fulls += model.free_slot() < 0;
      const bool ready = model.ins_ready(fl, qfl, rwf);
      step(have, pend, lk, lq, lp, fr, fi, fl, fq, qfl, qfq, rwf, rwq, frq);
      if (have && ready) {
        advance(pend);
        have = false;
      }
      if (fl && rng.percent(50)) next_psn[fq] = rng.u32() & kPsnMask;  // the QP restarts
      if (rwf && rng.percent(50)) {  // the rewound QP requests its READs again, from an earlier PSN
        next_psn[rwq] = (next_psn[rwq] - uint32_t(rng.below(3000))) & kPsnMask;
        for (const auto& e : model.t)  // never overlapping a READ still in the table
          if (e.valid && e.qpn == rwq) next_psn[rwq] = (e.last + 1) & kPsnMask;
      }
    }
  }
  idle(3);
  EXPECT_GT(inserts, 10000u);
  EXPECT_GT(hits, 5000u);
  EXPECT_GT(answers - hits, 2000u);
  EXPECT_GT(fulls, 100) << "table never full";
  EXPECT_GT(busy_yes, 10000u) << "query ports never busy";
  EXPECT_GT(busy_no, 10000u) << "query ports never idle";
  EXPECT_GT(bq_yes, 10000u) << "implied-NAK query never hit";
  EXPECT_GT(bq_no, 10000u) << "implied-NAK query always hit";
  EXPECT_GT(any_yes, 10000u) << "bq_any never set";
  EXPECT_GT(any_no, 5000u) << "bq_any always set";
  EXPECT_GT(bq_any_psn_only, 5000u) << "bq_any never set without bq_hit";
  EXPECT_GT(rx_live, 5000u) << "the read port rarely named a live entry";
  EXPECT_GT(stale_frees, 500u) << "no free naming another QP";
  EXPECT_GT(frees, 5000u);
  int counts = 0;
  for (uint64_t n : n_free_seen) counts += n > 0;
  EXPECT_GT(n_free_seen[0], 100u) << "n_free never 0";
  EXPECT_GT(counts, kEntries / 2) << "n_free showed few of the counts";
  std::printf("[bench] n_free showed %d of the %d counts\n", counts, kEntries + 1);
  std::printf("[bench] %llu inserts, %llu lookups (%llu hits), %llu frees, %llu ignored frees of another QP's entry, "
              "implied-NAK query %llu hit / %llu not, bq_any %llu set / %llu not (%llu without a hit)\n",
              (unsigned long long)inserts, (unsigned long long)answers, (unsigned long long)hits,
              (unsigned long long)frees, (unsigned long long)stale_frees, (unsigned long long)bq_yes,
              (unsigned long long)bq_no, (unsigned long long)any_yes, (unsigned long long)any_no,
              (unsigned long long)bq_any_psn_only);
}

// A free names the QP: it frees the entry only while it belongs to that QP. The case it is
// for: a QP's READ entry flushed (here by a rewind) while its free is on its way, the slot
// taken by another QP's READ, then the late free arrives: the new entry must stay.
TEST_F(RdCtxBench, FreeOnlyWhileEntryBelongsToQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t a = uint32_t(rng.below(kQpns)), b = (a + 1 + uint32_t(rng.below(kQpns - 1))) % kQpns;
  for (int rep = 0; rep < 8 && !HasFatalFailure(); ++rep) {
    // a few entries of both QPs, then pick one of a's
    for (int i = 0; i < kEntries / 2; ++i) {
      const Entry e = make(i & 1 ? b : a, 6);
      step(true, e, false, 0, 0);
      advance(e);
    }
    int s = -1;
    for (int i = 0; i < kEntries && s < 0; ++i)
      if (model.t[size_t(i)].valid && model.t[size_t(i)].qpn == a) s = i;
    ASSERT_GE(s, 0);
    const Entry ea = model.t[size_t(s)];
    // a free naming another QP leaves the entry alone
    step(false, {}, false, 0, 0, true, s, false, 0, false, 0, false, 0, int64_t(b));
    ASSERT_TRUE(model.t[size_t(s)].valid);
    lookup(a, ea.first);
    idle(1);  // the answer shows two cycles after the request
    EXPECT_TRUE(dut->lk_rsp && dut->lk_hit) << "entry freed by a free naming another QP";
    // rewind of a: all of a's entries go; b's READ takes the lowest free slot (<= s)
    step(false, {}, false, 0, 0, false, 0, false, 0, false, 0, true, a);
    const int slot = model.free_slot();
    const Entry eb = make(b, 4);
    step(true, eb, false, 0, 0);
    advance(eb);
    ASSERT_TRUE(model.t[size_t(slot)].valid && model.t[size_t(slot)].qpn == b);
    // the late free of a's old entry in that slot
    step(false, {}, false, 0, 0, true, slot, false, 0, false, 0, false, 0, int64_t(a));
    force_query = int(b);
    lookup(b, eb.last);
    idle(1);  // the answer shows two cycles after the request
    EXPECT_TRUE(dut->lk_rsp && dut->lk_hit) << "a late free of QP " << a << " freed QP " << b << "'s READ in slot " << slot;
    EXPECT_TRUE(dut->qa_busy);
    force_query = -1;
    // the right free frees it
    step(false, {}, false, 0, 0, true, slot, false, 0, false, 0, false, 0, int64_t(b));
    EXPECT_FALSE(model.t[size_t(slot)].valid);
    lookup(b, eb.last);
    idle(1);  // the answer shows two cycles after the request
    EXPECT_TRUE(dut->lk_rsp && !dut->lk_hit) << "entry not freed by its own QP's free";
    step(false, {}, false, 0, 0, false, 0, true, b);  // clear b for the next round
  }
  EXPECT_EQ(stale_frees, 16u);
}

// A rewind flush removes every entry of its QP and no other, alone or together with the QP
// reset and error flushes of other QPs, and holds an insert offered in the same cycle.
TEST_F(RdCtxBench, RewindFlushRemovesOnlyThatQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t qs[4] = {0, 1 % kQpns, 2 % kQpns, kQpns - 1};
  for (int rep = 0; rep < 6 && !HasFatalFailure(); ++rep) {
    while (model.free_slot() >= 0 && !HasFatalFailure()) {
      const Entry e = make(qs[rng.below(4)], 6);
      step(true, e, false, 0, 0);
      advance(e);
    }
    const uint32_t rq = qs[rng.below(4)];
    const bool with_others = rep & 1;
    const uint32_t fq = qs[(rep + 1) % 4], qfq = qs[(rep + 2) % 4];
    std::vector<Entry> before = model.t;
    // free one entry of another QP to make room: the insert must still wait for the flush cycle
    int other = -1;
    for (int i = 0; i < kEntries && other < 0; ++i)
      if (model.t[size_t(i)].qpn != rq) other = i;
    if (other >= 0) step(false, {}, false, 0, 0, true, other);
    const uint64_t ins0 = inserts;
    const Entry e = make(qs[rng.below(4)], 3);
    dut->ins_valid = 1;
    step(true, e, false, 0, 0, false, 0, with_others, fq, with_others, qfq, true, rq);
    EXPECT_EQ(inserts, ins0) << "insert taken during a rewind flush";
    for (int i = 0; i < kEntries; ++i) {
      const Entry& b = before[size_t(i)];
      const bool gone = b.qpn == rq || (with_others && (b.qpn == fq || b.qpn == qfq)) || i == other;
      EXPECT_EQ(model.t[size_t(i)].valid, !gone) << "slot " << i;
      if (i != other) lookup(b.qpn, b.last);
    }
    idle(3);
    step(false, {}, false, 0, 0, false, 0, true, qs[0], true, qs[1], true, qs[2]);
    step(false, {}, false, 0, 0, false, 0, true, qs[3]);
  }
  EXPECT_GT(hits, 0u);
  EXPECT_GT(answers - hits, 0u);
}

// The implied-NAK query on fixed cases around the 24-bit wrap: an entry of the QP whose last
// PSN is 0xFFFFFE; hit for bq_psn 0xFFFFFF, 0 and 0x7FFFFD (last + 2^23 - 1), no hit for the
// last PSN itself, 0x7FFFFE (last + 2^23), 0xFFFFFD (before it) or for another QP. Several
// entries: any one before bq_psn is enough; a freed or flushed entry no longer counts.
TEST_F(RdCtxBench, ImpliedNakQueryAcrossWrap) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = kQpns - 1, o = q ^ 1;
  auto probe = [&](uint32_t qpn, uint32_t psn) {
    force_query = int(qpn);
    force_bq_psn = psn;
    idle(1);  // checks bq_hit against the model in this cycle
    dut->bq_qpn = qpn;
    dut->bq_psn = psn;
    dut.eval();
    const bool hit = dut->bq_hit;
    force_query = -1;
    force_bq_psn = -1;
    return hit;
  };
  step(true, Entry{true, q, 0xFFFFF0, 0xFFFFFE, 1, 1, 0}, false, 0, 0);
  step(true, Entry{true, o, 0x000000, 0x000010, 2, 1, 0}, false, 0, 0);
  EXPECT_TRUE(probe(q, 0xFFFFFF));
  EXPECT_TRUE(probe(q, 0x000000));
  EXPECT_TRUE(probe(q, 0x000005));
  EXPECT_TRUE(probe(q, 0x7FFFFD));
  EXPECT_FALSE(probe(q, 0xFFFFFE)) << "last PSN itself is not after it";
  EXPECT_FALSE(probe(q, 0x7FFFFE)) << "last + 2^23 is outside the half window";
  EXPECT_FALSE(probe(q, 0xFFFFFD));
  EXPECT_FALSE(probe(q, 0xFFFFF0));
  EXPECT_FALSE(probe(o, 0x000010)) << "the other QP's entry ends at 0x10";
  EXPECT_TRUE(probe(o, 0x000011));
  EXPECT_FALSE(probe(o, 0xFFFFFF)) << "0xFFFFFF is before 0x000010";
  EXPECT_FALSE(probe(q ^ 2, 0x000011)) << "a QP without entries";
  // a second entry of q after the wrap: 0x000003..0x000008
  step(true, Entry{true, q, 0x000003, 0x000008, 3, 1, 0}, false, 0, 0);
  EXPECT_TRUE(probe(q, 0x000004)) << "the first entry (last 0xFFFFFE) is before 0x000004";
  const int first_slot = 0;
  ASSERT_EQ(model.t[size_t(first_slot)].last, 0xFFFFFEu);
  step(false, {}, false, 0, 0, true, first_slot);  // free the first entry
  EXPECT_FALSE(probe(q, 0x000004)) << "a freed entry still counts";
  EXPECT_FALSE(probe(q, 0x000008));
  EXPECT_TRUE(probe(q, 0x000009));
  step(false, {}, false, 0, 0, false, 0, false, 0, false, 0, true, q);  // rewind flush
  EXPECT_FALSE(probe(q, 0x000009)) << "a flushed entry still counts";
  EXPECT_TRUE(probe(o, 0x000011));
}

// bq_any on fixed cases: set for a QP with any valid entry whatever bq_psn (also where
// bq_hit is not: at, inside and before its READs, 2^23 away), not for a QP without one (an
// entry of the neighbouring QPN does not count); it follows inserts, a free naming another
// QP (no effect), frees, and each of the three flushes, each visible from the next cycle.
TEST_F(RdCtxBench, AnyEntryQuery) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = uint32_t(rng.below(kQpns)), o = q ^ 1;
  auto any = [&](uint32_t qpn, uint32_t psn) {
    force_query = int(qpn);
    force_bq_psn = psn;
    idle(1);  // checks bq_any (and bq_hit) against the model in this cycle
    dut->bq_qpn = qpn;
    dut->bq_psn = psn;
    dut.eval();
    const bool a = dut->bq_any;
    force_query = -1;
    force_bq_psn = -1;
    return a;
  };
  const uint32_t psns[] = {0x000000, 0x000100, 0x000104, 0x000105, 0x0000FF, 0x800104, 0xFFFFFF};
  for (uint32_t p : psns) EXPECT_FALSE(any(q, p)) << "empty table, PSN " << p;
  step(true, Entry{true, o, 0x000100, 0x000104, 1, 1, 0}, false, 0, 0);  // slot 0: the neighbour's
  for (uint32_t p : psns) EXPECT_FALSE(any(q, p)) << "another QP's entry, PSN " << p;
  for (uint32_t p : psns) EXPECT_TRUE(any(o, p)) << "PSN " << p;
  step(true, Entry{true, q, 0x000200, 0x000200, 2, 1, 0}, false, 0, 0);  // slot 1
  step(true, Entry{true, q, 0x000201, 0x000203, 3, 1, 0}, false, 0, 0);  // slot 2
  for (uint32_t p : psns) EXPECT_TRUE(any(q, p)) << "PSN " << p;
  step(false, {}, false, 0, 0, true, 1, false, 0, false, 0, false, 0, int64_t(o));  // a free naming o
  EXPECT_TRUE(any(q, 0x000200));
  step(false, {}, false, 0, 0, true, 1);  // freed
  EXPECT_TRUE(any(q, 0x000200)) << "slot 2 is still q's";
  step(false, {}, false, 0, 0, true, 2);
  EXPECT_FALSE(any(q, 0x000200)) << "both of q's entries freed";
  EXPECT_TRUE(any(o, 0x000200));
  for (int way = 0; way < 3 && !HasFatalFailure(); ++way) {
    step(true, Entry{true, q, 0x000300, 0x000301, 4, 1, 0}, false, 0, 0);
    EXPECT_TRUE(any(q, 0x000300));
    step(false, {}, false, 0, 0, false, 0, way == 0, q, way == 1, q, way == 2, q);
    EXPECT_FALSE(any(q, 0x000300)) << "after flush " << way;
    EXPECT_TRUE(any(o, 0x000300)) << "the neighbour's entry flushed by flush " << way;
  }
}

// n_free: 0 in the first cycle after reset, then the free entries of the table as it stood in
// the previous cycle: an insert, a free and each kind of flush (QP reset, error, rewind) show one
// cycle after the cycle they were made in; an insert and a free in one cycle cancel out; a full
// table shows 0. (step() also compares n_free with the model in every cycle.)
TEST_F(RdCtxBench, FreeCountOneCycleLate) {
  SRNIC_BENCH_TRACE();
  const uint32_t q = uint32_t(rng.below(kQpns)), o = (q + 1) % kQpns;
  auto shows = [&]() {
    dut.eval();
    return int(dut->n_free);
  };
  for (int rep = 0; rep < 3 && !HasFatalFailure(); ++rep) {
    reset();
    EXPECT_EQ(shows(), 0) << "first cycle after reset";
    idle(1);
    EXPECT_EQ(shows(), kEntries);
    for (int i = 0; i < kEntries && !HasFatalFailure(); ++i) {
      const Entry e = make(i % 3 ? q : o, 4);
      step(true, e, false, 0, 0);
      advance(e);
      EXPECT_EQ(shows(), kEntries - i) << "insert " << i << " shows in the cycle after the next";
    }
    idle(1);
    EXPECT_EQ(shows(), 0) << "full table";
    // a free, then an insert and a free in one cycle
    step(false, {}, false, 0, 0, true, 1);
    EXPECT_EQ(shows(), 0);
    idle(1);
    EXPECT_EQ(shows(), 1);
    const Entry e = make(q, 2);
    step(true, e, false, 0, 0, true, 2);
    advance(e);
    EXPECT_EQ(shows(), 1);
    idle(1);
    EXPECT_EQ(shows(), 1) << "an insert and a free in one cycle";
    // one kind of flush per round, of the QP with about two thirds of the entries
    const int used = model.used();
    int of_q = 0;
    for (const auto& x : model.t) of_q += x.valid && x.qpn == q;
    ASSERT_GT(of_q, 1);
    step(false, {}, false, 0, 0, false, 0, rep == 0, q, rep == 1, q, rep == 2, q);
    EXPECT_EQ(shows(), kEntries - used) << "flush " << rep << " shows a cycle late";
    const int left = model.used();
    EXPECT_EQ(left, used - of_q);
    idle(1);
    EXPECT_EQ(shows(), kEntries - left) << "after flush " << rep;
  }
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
