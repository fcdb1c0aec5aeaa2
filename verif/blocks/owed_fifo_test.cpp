// owed_fifo bench: K queues of (index, tag) pairs whose producer never waits, against a
// behavioural reference of the contract in rtl/lib/owed_fifo.sv (what may and what must come
// out, not the RTL's sweep order).
//
// Reference, per queue: the entries pushed and not yet popped, grouped by (index, tag), each
// required (must come out) or optional (may come out). A push (i, t, kinds) adds a required
// entry to each queue in kinds. Entries of the same (i, t) already outstanding in that queue
// become optional: the push may merge into an owed bit, so the group owes at least one more
// output (the newest push's) and at most one per entry. Every outstanding entry of index i
// under another tag, in any queue, becomes optional: a newer tag may make the module forget
// what was owed under the old one (an entry already in a FIFO still comes out).
//
// Checked every cycle, after eval() and before the edge:
//  - each valid head (m_idx, m_tag) is an outstanding entry of its queue (nothing invented or
//    duplicated); popped when m_ready, required entries first;
//  - a queue with a required entry (pushed in an earlier cycle) shows m_valid || pending;
//  - pending is 0 for a queue with nothing outstanding;
//  - once a queue shows !m_valid && !pending (what a consumer waits for), nothing pushed before
//    may come out of it any more: its reference is cleared.
// At the end of every test the pushes stop and every m_ready is 1: within 2 * NUM / LANES +
// (outstanding entries) + K * DEPTH + 16 cycles every required entry has come out and the
// module shows pending == 0, m_valid == 0.
//
// Directed tests pin what the reference leaves open, where the bench knows a FIFO is full (so
// a push to it is owed): a newer tag drops what was owed under the old one on every queue (and
// their pending at once), a duplicate of an owed entry comes out once, an owed entry comes out
// after the FIFO's entries and after one pushed while it waited; with no FIFO ever full a queue
// is a plain FIFO (order, one cycle latency, pending never set); the init sweep (NUM / LANES
// cycles, pushes with room taken, a push needing an owed bit lost and reported); a reset drops
// everything.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "Vowed_fifo.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int clog2(uint64_t n) {
  int b = 0;
  while ((1ull << b) < n) ++b;
  return b;
}

constexpr int kNum = BENCH_NUM;
constexpr int kK = BENCH_K;
constexpr int kTagW = BENCH_TAGW;
constexpr int kDepth = BENCH_DEPTH;
constexpr int kLanes = BENCH_LANES;
constexpr int kRows = kNum / kLanes;
constexpr int kIw = clog2(kNum);
constexpr uint32_t kTags = 1u << kTagW;
constexpr uint32_t kAll = (1u << kK) - 1;
static_assert(kK >= 1 && kK <= 8 && kTagW <= 16 && kIw + kTagW <= 32, "bench limits");
static_assert(kRows > kDepth, "the init test pushes DEPTH entries during the init sweep");

struct Push {
  bool valid = false;
  uint32_t idx = 0, tag = 0, kinds = 0;
};
constexpr Push kIdle{};

struct Out {
  uint32_t idx, tag;
  uint64_t cycle;
};

// Outstanding entries of one (queue, index, tag).
struct Group {
  int req = 0;  // must come out
  int opt = 0;  // may come out
};

struct RefQueue {
  std::unordered_map<uint32_t, Group> groups;  // key: idx << TAGW | tag
  int64_t required = 0;
  int64_t outstanding = 0;
  void clear() {
    groups.clear();
    required = 0;
    outstanding = 0;
  }
};

inline uint32_t key(uint32_t idx, uint32_t tag) { return idx << kTagW | tag; }

class OwedFifoBench : public ::testing::Test {
 protected:
  OwedFifoBench() : rng(test_seed()), dut(rng.next()) { drive(kIdle, 0); }

  void drive(const Push& p, uint32_t ready) {
    dut->s_valid = p.valid;
    dut->s_idx = p.idx;
    dut->s_tag = p.tag;
    dut->s_kinds = p.kinds;
    dut->m_ready = ready & kAll;
  }
  uint32_t m_valid() { return uint32_t(dut->m_valid) & kAll; }
  uint32_t pending() { return uint32_t(dut->pending) & kAll; }
  uint32_t head_idx(int k) { return uint32_t(get_bits(dut->m_idx, k * kIw, kIw)); }
  uint32_t head_tag(int k) { return uint32_t(get_bits(dut->m_tag, k * kTagW, kTagW)); }
  bool nothing_required() const {
    for (const auto& q : ref)
      if (q.required) return false;
    return true;
  }
  int64_t outstanding() const {
    int64_t n = 0;
    for (const auto& q : ref) n += q.outstanding;
    return n;
  }

  // Reset with idle inputs; the reference forgets everything. Checks the outputs right after.
  void reset_only() {
    drive(kIdle, 0);
    dut.reset();
    for (auto& q : ref) q.clear();
    dut.eval();
    ASSERT_EQ(m_valid(), 0u) << "m_valid right after reset";
    ASSERT_EQ(pending(), 0u) << "pending right after reset";
    ASSERT_TRUE(dut->init_busy) << "init_busy right after reset";
  }
  // Reset, then wait out the init sweep (NUM / LANES cycles, checked).
  void reset() {
    reset_only();
    if (HasFatalFailure()) return;
    int n = 0;
    for (; n <= kRows; ++n) {
      dut.eval();
      if (!dut->init_busy) break;
      ASSERT_EQ(pending(), 0u) << "pending during the init sweep, cycle " << n;
      ASSERT_EQ(m_valid(), 0u) << "m_valid during the init sweep, cycle " << n;
      cycle(kIdle, rng.next());
      if (HasFatalFailure()) return;
    }
    ASSERT_EQ(n, kRows) << "init_busy should fall after exactly NUM / LANES cycles";
  }

  // One cycle: drive, settle, check, clock, update the reference.
  void cycle(const Push& p, uint64_t ready_bits) {
    const uint32_t ready = uint32_t(ready_bits) & kAll;
    drive(p, ready);
    dut.eval();
    const uint64_t now = dut.cycle();
    const uint32_t v = m_valid(), pend = pending();
    for (int k = 0; k < kK; ++k) {
      RefQueue& q = ref[size_t(k)];
      const bool vk = (v >> k) & 1, pk = (pend >> k) & 1;
      if (pk) saw_pending[size_t(k)] = true;
      ASSERT_TRUE(q.required == 0 || vk || pk)
          << "cycle " << now << " queue " << k << ": " << q.required
          << " required entries outstanding, but neither m_valid nor pending";
      ASSERT_TRUE(q.outstanding > 0 || !pk)
          << "cycle " << now << " queue " << k << ": pending with nothing outstanding";
      if (vk) {
        const uint32_t i = head_idx(k), t = head_tag(k);
        auto it = q.groups.find(key(i, t));
        ASSERT_TRUE(it != q.groups.end())
            << "cycle " << now << " queue " << k << ": head (idx " << i << ", tag " << t
            << ") matches no outstanding entry (invented or duplicated)";
        if ((ready >> k) & 1) {
          Group& g = it->second;
          if (g.req > 0) {
            --g.req;
            --q.required;
          } else {
            --g.opt;
            ++n_opt_out;
          }
          --q.outstanding;
          if (g.req == 0 && g.opt == 0) q.groups.erase(it);
          outs[size_t(k)].push_back({i, t, now});
          ++n_out;
        }
      } else if (!pk && q.outstanding > 0) {
        // The consumer's "everything pushed so far has been seen": the rest never comes out.
        q.clear();
      }
    }
    dut.tick();
    if (p.valid && p.kinds != 0) apply_push(p);
  }

  void apply_push(const Push& p) {
    bool replaced = false, merged = false;
    for (int k = 0; k < kK; ++k) {
      RefQueue& q = ref[size_t(k)];
      for (uint32_t u = 0; u < kTags; ++u) {
        if (u == p.tag) continue;
        auto it = q.groups.find(key(p.idx, u));
        if (it == q.groups.end()) continue;
        replaced = true;
        it->second.opt += it->second.req;
        q.required -= it->second.req;
        it->second.req = 0;
      }
    }
    for (int k = 0; k < kK; ++k) {
      if (!((p.kinds >> k) & 1)) continue;
      RefQueue& q = ref[size_t(k)];
      Group& g = q.groups[key(p.idx, p.tag)];
      if (g.req + g.opt > 0) merged = true;
      g.opt += g.req;
      q.required -= g.req;
      g.req = 1;
      ++q.required;
      ++q.outstanding;
    }
    ++n_push;
    n_replacing += replaced;
    n_merging += merged;
  }

  // Stop pushing, every m_ready 1: every required entry out within the bound, then the
  // module idle (pending 0, m_valid 0). Optional leftovers are discarded.
  void drain() {
    const int64_t bound = 2 * kRows + outstanding() + kK * kDepth + 16;
    int64_t n = 0;
    for (;; ++n) {
      dut.eval();
      if (nothing_required() && m_valid() == 0 && pending() == 0) break;
      if (n >= bound) break;
      cycle(kIdle, kAll);
      if (HasFatalFailure()) return;
    }
    max_drain = std::max(max_drain, n);
    for (int k = 0; k < kK; ++k) {
      const RefQueue& q = ref[size_t(k)];
      std::string missing;
      int shown = 0;
      for (const auto& [kk, g] : q.groups) {
        if (g.req > 0 && shown++ < 8)
          missing += " (idx " + std::to_string(kk >> kTagW) + ", tag " + std::to_string(kk & (kTags - 1)) + ")";
      }
      ASSERT_EQ(q.required, 0) << "queue " << k << ": required entries not out after " << n
                               << " drain cycles (bound " << bound << "):" << missing;
    }
    ASSERT_EQ(pending(), 0u) << "pending after the drain (" << n << " cycles)";
    ASSERT_EQ(m_valid(), 0u) << "m_valid after the drain (" << n << " cycles)";
    for (auto& q : ref) q.clear();
  }

  uint32_t random_kinds() { return uint32_t(rng.range(1, kAll)); }
  uint32_t random_tag() { return uint32_t(rng.below(kTags)); }
  uint32_t other_tag(uint32_t t) { return uint32_t((t + 1 + rng.below(kTags - 1)) % kTags); }

  // A random order of all indices.
  std::vector<uint32_t> permutation() {
    std::vector<uint32_t> v(kNum);
    for (int i = 0; i < kNum; ++i) v[size_t(i)] = uint32_t(i);
    for (int i = kNum - 1; i > 0; --i) std::swap(v[size_t(i)], v[rng.below(uint64_t(i) + 1)]);
    return v;
  }

  // With every m_ready 0, pushes DEPTH indices order[next..] to `kinds` (empty FIFOs: they
  // fill up).
  void fill(uint32_t kinds, std::vector<uint32_t>& order, size_t& next) {
    for (int n = 0; n < kDepth; ++n) {
      cycle({true, order[next++], random_tag(), kinds}, 0);
      if (HasFatalFailure()) return;
    }
  }

  // Outputs of queue k from position `from` on with this (idx, tag); tag < 0: any tag.
  int count_out(int k, size_t from, uint32_t idx, int tag) const {
    int n = 0;
    for (size_t j = from; j < outs[size_t(k)].size(); ++j) {
      const Out& o = outs[size_t(k)][j];
      n += o.idx == idx && (tag < 0 || o.tag == uint32_t(tag));
    }
    return n;
  }

  Rng rng;
  Dut<Vowed_fifo> dut;
  std::array<RefQueue, kK> ref;
  std::array<std::vector<Out>, kK> outs;
  std::array<bool, kK> saw_pending{};
  uint64_t n_out = 0, n_opt_out = 0, n_push = 0, n_replacing = 0, n_merging = 0;
  int64_t max_drain = 0;
};

// Right after reset nothing is valid or pending, init_busy falls after exactly NUM / LANES
// cycles, and a push whose queues have room goes through during the sweep (in push order).
TEST_F(OwedFifoBench, InitSweep) {
  SRNIC_BENCH_TRACE();
  reset_only();
  if (HasFatalFailure()) return;
  std::vector<uint32_t> order = permutation();
  std::vector<std::pair<uint32_t, uint32_t>> pushed;
  int n = 0;
  for (; n <= kRows; ++n) {
    dut.eval();
    if (!dut->init_busy) break;
    ASSERT_EQ(pending(), 0u) << "pending during the init sweep, cycle " << n;
    Push p;
    if (n < kDepth) {  // DEPTH pushes to every queue: they fill, none needs an owed bit
      p = {true, order[size_t(n)], random_tag(), kAll};
      pushed.push_back({p.idx, p.tag});
    }
    cycle(p, 0);
    if (HasFatalFailure()) return;
  }
  ASSERT_EQ(n, kRows) << "init_busy should fall after exactly NUM / LANES cycles";
  EXPECT_EQ(m_valid(), kAll);
  EXPECT_EQ(pending(), 0u);
  drain();
  if (HasFatalFailure()) return;
  for (int k = 0; k < kK; ++k) {
    ASSERT_EQ(outs[size_t(k)].size(), pushed.size()) << "queue " << k;
    for (size_t j = 0; j < pushed.size(); ++j) {
      EXPECT_EQ(outs[size_t(k)][j].idx, pushed[j].first) << "queue " << k << " output " << j;
      EXPECT_EQ(outs[size_t(k)][j].tag, pushed[j].second) << "queue " << k << " output " << j;
    }
  }
}

// A push during the init sweep that would need an owed bit (its queue is full) is lost, and
// the RTL says so ($error).
TEST_F(OwedFifoBench, AssertionPushNeedingAnOwedBitDuringInitIsLost) {
  SRNIC_BENCH_TRACE();
  reset_only();
  if (HasFatalFailure()) return;
  std::vector<uint32_t> order = permutation();
  for (int n = 0; n < kDepth; ++n) {
    cycle({true, order[size_t(n)], random_tag(), 1}, 0);
    if (HasFatalFailure()) return;
  }
  ASSERT_TRUE(dut->init_busy);
  // Not added to the reference: it must not come out.
  drive({true, order[size_t(kDepth)], random_tag(), 1}, 0);
  dut.eval();
  dut.tick();
  EXPECT_EQ(dut.take_rtl_errors(), 1) << "the lost push's $error";
  for (int n = kDepth + 1; n < kRows; ++n) {
    cycle(kIdle, 0);
    if (HasFatalFailure()) return;
  }
  dut.eval();
  ASSERT_FALSE(dut->init_busy);
  EXPECT_EQ(pending(), 0u);
  drain();
  if (HasFatalFailure()) return;
  EXPECT_EQ(outs[0].size(), size_t(kDepth));
}

// m_ready always 1, at most one push every other cycle to one queue: nothing is ever owed and
// the queue is a plain FIFO (each entry out in the cycle after its push, in push order).
TEST_F(OwedFifoBench, NoSpillKeepsOrder) {
  SRNIC_BENCH_TRACE();
  reset();
  if (HasFatalFailure()) return;
  const int qk = int(rng.below(kK));
  std::vector<uint32_t> order = permutation();
  std::vector<std::pair<uint32_t, uint32_t>> pushed;
  std::vector<uint64_t> pushed_at;
  bool last = false;
  size_t next = 0;
  for (int c = 0; c < 4000; ++c) {
    Push p;
    if (!last && rng.percent(70)) {
      if (next == order.size()) next = 0;  // an index comes back only after NUM others
      p = {true, order[next++], random_tag(), 1u << qk};
      pushed.push_back({p.idx, p.tag});
      pushed_at.push_back(dut.cycle());
    }
    last = p.valid;
    dut.eval();
    ASSERT_EQ(pending(), 0u) << "cycle " << dut.cycle();
    cycle(p, kAll);
    if (HasFatalFailure()) return;
  }
  drain();
  if (HasFatalFailure()) return;
  for (int k = 0; k < kK; ++k) {
    if (k != qk) EXPECT_TRUE(outs[size_t(k)].empty()) << "queue " << k;
  }
  const auto& o = outs[size_t(qk)];
  ASSERT_EQ(o.size(), pushed.size());
  for (size_t j = 0; j < o.size(); ++j) {
    ASSERT_EQ(o[j].idx, pushed[j].first) << "output " << j;
    ASSERT_EQ(o[j].tag, pushed[j].second) << "output " << j;
    ASSERT_EQ(o[j].cycle, pushed_at[j] + 1) << "output " << j << ": one cycle after its push";
  }
  EXPECT_GT(pushed.size(), 1000u);
}

// Both consumers stalled, every index pushed once to both queues: pending rises, and the
// drain gives each index exactly once per queue, with its tag.
TEST_F(OwedFifoBench, BurstOfEveryIndex) {
  SRNIC_BENCH_TRACE();
  reset();
  if (HasFatalFailure()) return;
  std::vector<uint32_t> order = permutation();
  std::vector<uint32_t> tag(kNum);
  for (auto& t : tag) t = random_tag();
  for (uint32_t i : order) {
    cycle({true, i, tag[i], kAll}, 0);
    if (HasFatalFailure()) return;
  }
  dut.eval();
  EXPECT_EQ(pending(), kAll) << "every queue owes indices";
  EXPECT_EQ(m_valid(), kAll);
  drain();
  if (HasFatalFailure()) return;
  for (int k = 0; k < kK; ++k) {
    ASSERT_EQ(outs[size_t(k)].size(), size_t(kNum)) << "queue " << k;
    std::vector<int> seen(kNum);
    for (const Out& o : outs[size_t(k)]) {
      ++seen[o.idx];
      EXPECT_EQ(o.tag, tag[o.idx]) << "queue " << k << " idx " << o.idx;
    }
    for (int i = 0; i < kNum; ++i) ASSERT_EQ(seen[size_t(i)], 1) << "queue " << k << " idx " << i;
  }
  std::printf("[bench] %d indices x %d queues drained in %lld cycles\n", kNum, kK, (long long)max_drain);
}

// FIFOs full, (i, t1) owed, then (i, t2) pushed to one queue: t2 replaces t1, so (i, t1)
// never comes out, neither on that queue nor on another where it was owed (whose pending
// falls at once), and (i, t2) comes out once.
TEST_F(OwedFifoBench, NewerTagReplacesOwed) {
  SRNIC_BENCH_TRACE();
  reset();
  if (HasFatalFailure()) return;
  std::vector<uint32_t> order = permutation();
  size_t next = 0;
  for (int round = 0; round < 24; ++round) {
    if (next + kDepth + 1 > order.size()) {
      order = permutation();
      next = 0;
    }
    const int qt = round == 0 ? 0 : int(rng.below(kK));
    const uint32_t k1 = round % 2 == 0 ? kAll : (random_kinds() | 1u << qt);
    fill(kAll, order, next);
    if (HasFatalFailure()) return;
    const uint32_t i = order[next++], t1 = random_tag(), t2 = other_tag(t1);
    std::array<size_t, kK> from;
    for (int k = 0; k < kK; ++k) from[size_t(k)] = outs[size_t(k)].size();
    cycle({true, i, t1, k1}, 0);
    if (HasFatalFailure()) return;
    for (int n = int(rng.below(4)); n > 0; --n) {
      cycle(kIdle, 0);
      if (HasFatalFailure()) return;
    }
    dut.eval();
    ASSERT_EQ(pending(), k1) << "round " << round << ": (i, t1) owed";
    cycle({true, i, t2, 1u << qt}, 0);
    if (HasFatalFailure()) return;
    dut.eval();
    ASSERT_EQ(pending(), 1u << qt) << "round " << round << ": only (i, t2) owed, on queue " << qt;
    for (int n = int(rng.below(4)); n > 0; --n) {
      cycle(kIdle, 0);
      if (HasFatalFailure()) return;
    }
    drain();
    if (HasFatalFailure()) return;
    for (int k = 0; k < kK; ++k) {
      if (k == qt) {
        EXPECT_EQ(count_out(k, from[size_t(k)], i, int(t2)), 1) << "round " << round << " queue " << k;
        EXPECT_EQ(count_out(k, from[size_t(k)], i, int(t1)), 0) << "round " << round << " queue " << k;
        EXPECT_EQ(outs[size_t(k)].back().idx, i) << "round " << round << ": the owed entry after the FIFO's";
      } else {
        EXPECT_EQ(count_out(k, from[size_t(k)], i, -1), 0) << "round " << round << " queue " << k;
      }
      EXPECT_EQ(outs[size_t(k)].size() - from[size_t(k)], size_t(kDepth) + (k == qt))
          << "round " << round << " queue " << k;
    }
    if (HasFailure()) return;
  }
}

// FIFO full, (i, t) pushed twice (or three times) while owed: it comes out exactly once.
TEST_F(OwedFifoBench, DuplicateWhileOwedMerges) {
  SRNIC_BENCH_TRACE();
  reset();
  if (HasFatalFailure()) return;
  std::vector<uint32_t> order = permutation();
  size_t next = 0;
  for (int round = 0; round < 24; ++round) {
    if (next + kDepth + 1 > order.size()) {
      order = permutation();
      next = 0;
    }
    const uint32_t kinds = round == 0 ? 1u : random_kinds();
    fill(round == 0 ? 1u : kAll, order, next);
    if (HasFatalFailure()) return;
    const uint32_t i = order[next++], t = random_tag();
    std::array<size_t, kK> from;
    for (int k = 0; k < kK; ++k) from[size_t(k)] = outs[size_t(k)].size();
    const int times = round % 3 == 2 ? 3 : 2;
    for (int n = 0; n < times; ++n) {
      cycle({true, i, t, kinds}, 0);
      if (HasFatalFailure()) return;
      for (int w = int(rng.below(3)); w > 0; --w) {
        cycle(kIdle, 0);
        if (HasFatalFailure()) return;
      }
    }
    dut.eval();
    ASSERT_EQ(pending(), kinds) << "round " << round;
    drain();
    if (HasFatalFailure()) return;
    for (int k = 0; k < kK; ++k) {
      EXPECT_EQ(count_out(k, from[size_t(k)], i, int(t)), int((kinds >> k) & 1))
          << "round " << round << " queue " << k;
      EXPECT_EQ(count_out(k, from[size_t(k)], i, -1), int((kinds >> k) & 1))
          << "round " << round << " queue " << k;
      if ((kinds >> k) & 1) {
        EXPECT_EQ(outs[size_t(k)].back().idx, i) << "round " << round << ": the owed entry after the FIFO's";
      }
    }
    if (HasFailure()) return;
  }
}

// FIFOs full, X owed on queue q; one entry of q popped, and in the next cycle Y pushed to q:
// Y takes the free slot at once (X stays owed), and X comes out after Y (an owed index comes
// out after those pushed while it waited).
TEST_F(OwedFifoBench, OwedComesOutAfterThosePushedWhileItWaited) {
  SRNIC_BENCH_TRACE();
  reset();
  if (HasFatalFailure()) return;
  std::vector<uint32_t> order = permutation();
  size_t next = 0;
  for (int round = 0; round < 24; ++round) {
    if (next + kDepth + 2 > order.size()) {
      order = permutation();
      next = 0;
    }
    const int q = round == 0 ? 0 : int(rng.below(kK));
    fill(kAll, order, next);
    if (HasFatalFailure()) return;
    std::array<size_t, kK> from;
    for (int k = 0; k < kK; ++k) from[size_t(k)] = outs[size_t(k)].size();
    const uint32_t x = order[next++], y = order[next++];
    cycle({true, x, random_tag(), 1u << q}, 0);
    if (HasFatalFailure()) return;
    for (int n = int(rng.below(4)); n > 0; --n) {
      cycle(kIdle, 0);
      if (HasFatalFailure()) return;
    }
    cycle(kIdle, 1u << q);  // one slot free from the next cycle
    if (HasFatalFailure()) return;
    dut.eval();
    ASSERT_EQ(pending(), 1u << q) << "round " << round << ": X still owed when Y is pushed";
    cycle({true, y, random_tag(), 1u << q}, 0);
    if (HasFatalFailure()) return;
    dut.eval();
    ASSERT_EQ(pending(), 1u << q) << "round " << round << ": Y took the free slot, X still owed";
    drain();
    if (HasFatalFailure()) return;
    const auto& o = outs[size_t(q)];
    ASSERT_EQ(o.size() - from[size_t(q)], size_t(kDepth) + 2) << "round " << round;  // the fill, Y, X
    EXPECT_EQ(o[o.size() - 2].idx, y) << "round " << round << ": Y right after the FIFO's entries";
    EXPECT_EQ(o[o.size() - 1].idx, x) << "round " << round << ": X after Y";
    if (HasFailure()) return;
  }
}

// Phases of random traffic: push rates, per-queue m_ready rates (long stalls included, so
// entries are owed), random or hot indices (merges, requeues), per-index tags advanced now
// and then (replacements); some phases end with a full drain.
TEST_F(OwedFifoBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  if (HasFatalFailure()) return;
  std::vector<uint32_t> cur_tag(kNum);
  for (auto& t : cur_tag) t = random_tag();
  int drains = 0;
  uint64_t cycles = 0;
  while (cycles < 100000) {
    const unsigned p_push = unsigned(rng.range(5, 100));
    std::array<unsigned, kK> p_ready;
    for (auto& p : p_ready) {
      const uint64_t r = rng.below(10);
      p = r < 3 ? 0u : r < 5 ? 100u : unsigned(rng.range(5, 95));
    }
    std::vector<uint32_t> hot(size_t(rng.range(1, 3 * kDepth)));
    for (auto& h : hot) h = uint32_t(rng.below(kNum));
    const unsigned p_hot = rng.percent(50) ? unsigned(rng.range(20, 100)) : 0u;
    const unsigned p_advance = unsigned(rng.range(0, 20));
    const int len = int(rng.range(16, 512));
    for (int c = 0; c < len; ++c, ++cycles) {
      Push p;
      if (rng.percent(p_push)) {
        const uint32_t i = rng.percent(p_hot) ? hot[rng.below(hot.size())] : uint32_t(rng.below(kNum));
        if (rng.percent(p_advance)) cur_tag[i] = (cur_tag[i] + 1) % kTags;
        p = {true, i, cur_tag[i], random_kinds()};
      }
      uint64_t ready = 0;
      for (int k = 0; k < kK; ++k) ready |= uint64_t(rng.percent(p_ready[size_t(k)])) << k;
      cycle(p, ready);
      if (HasFatalFailure()) return;
    }
    if (rng.percent(15)) {
      drain();
      if (HasFatalFailure()) return;
      ++drains;
    }
  }
  drain();
  if (HasFatalFailure()) return;
  for (int k = 0; k < kK; ++k) EXPECT_TRUE(saw_pending[size_t(k)]) << "queue " << k << " never owed";
  EXPECT_GT(n_out, 5000u);
  EXPECT_GT(n_replacing, 20u);
  EXPECT_GT(n_merging, 20u);
  std::printf("[bench] %llu pushes (%llu over another tag, %llu over the same), %llu outputs (%llu optional), "
              "%d drains (longest %lld cycles)\n",
              (unsigned long long)n_push, (unsigned long long)n_replacing, (unsigned long long)n_merging,
              (unsigned long long)n_out, (unsigned long long)n_opt_out, drains + 1, (long long)max_drain);
}

// Owed entries (and full FIFOs) at a reset: nothing is valid or pending after it, during and
// after the init sweep, and nothing pushed before it ever comes out (the tags before the reset
// are not used after it).
TEST_F(OwedFifoBench, ResetClears) {
  SRNIC_BENCH_TRACE();
  reset();
  if (HasFatalFailure()) return;
  const uint32_t old_tag = 0, new_tag = 1;
  for (int round = 0; round < 4; ++round) {
    // Consumers stalled: the first DEPTH + 1 pushes (to every queue) leave each queue full and
    // owing at least one index.
    const int n_old = int(rng.range(kDepth + 1, 8 * kDepth));
    for (int n = 0; n < n_old; ++n) {
      cycle({true, uint32_t(rng.below(kNum)), old_tag, n <= kDepth ? kAll : random_kinds()}, 0);
      if (HasFatalFailure()) return;
    }
    dut.eval();
    ASSERT_EQ(pending(), kAll) << "round " << round << ": entries owed before the reset";
    ASSERT_EQ(m_valid(), kAll) << "round " << round;
    reset();
    if (HasFatalFailure()) return;
    for (auto& o : outs) o.clear();
    dut.eval();
    EXPECT_EQ(m_valid(), 0u);
    EXPECT_EQ(pending(), 0u);
    // Idle with m_ready 1: nothing comes out by itself.
    for (int n = 0; n < 2 * kRows; ++n) {
      dut.eval();
      ASSERT_EQ(m_valid() | pending(), 0u) << "round " << round << " idle cycle " << n;
      cycle(kIdle, kAll);
      if (HasFatalFailure()) return;
    }
    // New entries, owed too, so the sweep walks every row: only new ones come out.
    const int n_new = int(rng.range(kDepth + 1, 8 * kDepth));
    for (int n = 0; n < n_new; ++n) {
      cycle({true, uint32_t(rng.below(kNum)), new_tag, random_kinds()}, rng.percent(20) ? rng.next() : 0);
      if (HasFatalFailure()) return;
    }
    drain();
    if (HasFatalFailure()) return;
    size_t n_after = 0;
    for (int k = 0; k < kK; ++k) {
      n_after += outs[size_t(k)].size();
      for (const Out& o : outs[size_t(k)])
        ASSERT_EQ(o.tag, new_tag) << "round " << round << " queue " << k << " idx " << o.idx << ": from before the reset";
    }
    EXPECT_GT(n_after, 0u);
  }
}

}  // namespace
}  // namespace srnic::verif::blocks
