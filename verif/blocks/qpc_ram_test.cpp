// srnic_qpc_ram bench. A C++ model (contents, locks) predicts every cycle: req_ready (a
// locked QPN stalls every read of it, a locking read also needs a free lock), ext_ready
// (the owner write wins; a command waits while its QP is locked), rsp_valid one cycle after an accepted read, and rsp_data including
// writes that land while the read is in flight. A random read-modify-write client (more
// workers than locks) increments values under locks; without other writers, every QP must
// end at its initial value plus its number of increments (no lost update).
#include <algorithm>
#include <array>
#include <vector>

#include "Vsrnic_qpc_ram.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
constexpr int kLocks = BENCH_LOCKS;

class QpcRamBench : public ::testing::Test {
 public:
  QpcRamBench() : rng(test_seed()), dut(rng.next()), mem(kQps), known(kQps, false) {}

  // Inputs for one cycle.
  struct In {
    bool req = false, lock = false;
    int rq = 0;
    bool wr = false, unlock = false;
    int wq = 0;
    uint64_t wd = 0;
    bool ext = false;
    int eq = 0;
    uint64_t ed = 0;
    In& read(int q, bool l = false) { req = true; rq = q; lock = l; return *this; }
    In& write(int q, uint64_t d, bool u = false) { wr = true; wq = q; wd = d; unlock = u; return *this; }
    In& ext_write(int q, uint64_t d) { ext = true; eq = q; ed = d; return *this; }
  };
  // What the cycle did (sampled before the edge).
  struct Out {
    bool accepted = false;
    bool rsp = false;
    uint64_t rsp_data = 0;
    bool ext_taken = false;
  };

  bool locked(int q) const {
    for (int i = 0; i < nlocks; ++i)
      if (lock_q[i] == q) return true;
    return false;
  }
  void release(int q) {
    for (int i = 0; i < nlocks; ++i)
      if (lock_q[i] == q) {
        lock_q[i] = lock_q[--nlocks];
        return;
      }
  }

  // Inputs start random (x-initial unique): idle them, then reset. The RAM then clears itself,
  // one entry per cycle, with both ports not ready; afterwards every entry reads zero.
  void reset() {
    dut->req_valid = dut->wr_valid = dut->ext_valid = 0;
    dut.reset();
    for (int i = 0; i < kQps; ++i) {
      dut->req_valid = 1;
      dut->req_qpn = static_cast<uint32_t>(rng.next() % kQps);
      dut->req_lock = 0;
      dut->ext_valid = 1;
      dut.eval();
      EXPECT_FALSE(dut->req_ready) << "read accepted during the reset sweep, cycle " << i;
      EXPECT_FALSE(dut->ext_ready) << "command write accepted during the reset sweep, cycle " << i;
      dut->ext_valid = 0;
      dut->req_valid = 0;
      dut.tick();
    }
    std::fill(mem.begin(), mem.end(), 0);
    std::fill(known.begin(), known.end(), true);
    nlocks = 0;
    inflight = false;
  }

  // Drives `in`, checks the outputs against the model, applies the edge and the model update.
  Out cycle(const In& in) {
    Out o;
    dut->req_valid = in.req;
    dut->req_qpn = in.rq;
    dut->req_lock = in.lock;
    dut->wr_valid = in.wr;
    dut->wr_qpn = in.wq;
    dut->wr_data = in.wd;
    dut->wr_unlock = in.unlock;
    dut->ext_valid = in.ext;
    dut->ext_qpn = in.eq;
    dut->ext_data = in.ed;
    dut.eval();
    const uint64_t c = dut.cycle();
    const bool exp_ready = !locked(in.rq) && (!in.lock || nlocks < kLocks);
    EXPECT_EQ(bool(dut->req_ready), exp_ready) << "cycle " << c << " qpn " << in.rq << " lock " << in.lock;
    EXPECT_EQ(bool(dut->ext_ready), !in.wr && !locked(in.eq)) << "cycle " << c << " ext qpn " << in.eq;
    EXPECT_EQ(bool(dut->rsp_valid), inflight) << "cycle " << c;
    // The write landing in this cycle, if any (owner first).
    const bool ext_ok = in.ext && !in.wr && !locked(in.eq);  // a command waits for its QP's lock
    const bool w = in.wr || ext_ok;
    const int wq = in.wr ? in.wq : in.eq;
    const uint64_t wd = in.wr ? in.wd : in.ed;
    if (inflight && dut->rsp_valid) {
      o.rsp = true;
      o.rsp_data = dut->rsp_data;
      const bool fresh = w && wq == inflight_q;
      if (fresh || known[inflight_q]) {
        const uint64_t exp = fresh ? wd : mem[inflight_q];
        EXPECT_EQ(o.rsp_data, exp) << "cycle " << c << " read of qpn " << inflight_q
                                   << (fresh ? " (write landing in the response cycle)" : "");
        ++checked;
      }
    }
    o.accepted = in.req && exp_ready;
    o.ext_taken = ext_ok;
    dut.tick();
    if (w) {
      mem[wq] = wd;
      known[wq] = true;
    }
    if (in.wr && in.unlock) {
      EXPECT_TRUE(locked(in.wq)) << "bench bug: unlock of unlocked qpn " << in.wq;
      release(in.wq);
    }
    if (o.accepted && in.lock) lock_q[nlocks++] = in.rq;
    inflight = o.accepted;
    inflight_q = in.rq;
    return o;
  }

  Rng rng;
  Dut<Vsrnic_qpc_ram> dut;
  std::vector<uint64_t> mem;
  std::vector<bool> known;
  std::array<int, kLocks> lock_q{};
  int nlocks = 0;
  bool inflight = false;
  int inflight_q = 0;
  uint64_t checked = 0;
};

TEST_F(QpcRamBench, LatencyAndForwarding) {
  SRNIC_BENCH_TRACE();
  reset();
  const int x = kQps - 1, y = 1;
  cycle(In().write(x, 0xA));
  cycle(In().write(y, 0xB));
  // Read with nothing landing: RAM value, exactly one cycle later.
  Out o = cycle(In().read(x));
  EXPECT_TRUE(o.accepted);
  o = cycle(In());
  EXPECT_TRUE(o.rsp);
  EXPECT_EQ(o.rsp_data, 0xAu);
  EXPECT_FALSE(cycle(In()).rsp);
  // Write in the read cycle.
  cycle(In().read(x).write(x, 0xC));
  EXPECT_EQ(cycle(In()).rsp_data, 0xCu);
  // Write in the response cycle (owner, then external).
  cycle(In().read(x));
  EXPECT_EQ(cycle(In().write(x, 0xD)).rsp_data, 0xDu);
  cycle(In().read(x));
  EXPECT_EQ(cycle(In().ext_write(x, 0xE)).rsp_data, 0xEu);
  // A write to another QP does not leak into the response.
  cycle(In().read(x).write(y, 0xF));
  EXPECT_EQ(cycle(In().ext_write(y, 0x10)).rsp_data, 0xEu);
  // Back-to-back reads of alternating QPs.
  cycle(In().read(x));
  o = cycle(In().read(y));
  EXPECT_EQ(o.rsp_data, 0xEu);
  EXPECT_EQ(cycle(In()).rsp_data, 0x10u);
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(QpcRamBench, ResetClearsEveryEntry) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int q = 0; q < kQps; ++q) cycle(In().write(q, 0x1000 + q));
  reset();  // contents written before a reset are gone
  for (int q = 0; q < kQps; ++q) {
    EXPECT_TRUE(cycle(In().read(q)).accepted);
    EXPECT_EQ(cycle(In()).rsp_data, 0u) << "qpn " << q;
  }
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(QpcRamBench, LockStallsSameQpOnly) {
  SRNIC_BENCH_TRACE();
  reset();
  const int x = 5, y = 6;
  cycle(In().write(x, 1));
  cycle(In().write(y, 2));
  EXPECT_TRUE(cycle(In().read(x, true)).accepted);
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(cycle(In().read(x)).accepted) << "plain read of a locked QP";
    EXPECT_FALSE(cycle(In().read(x, true)).accepted) << "locking read of a locked QP";
  }
  EXPECT_TRUE(cycle(In().read(y)).accepted) << "read of another QP stalled";
  // A plain write does not unlock; the owner's unlocking write does.
  cycle(In().write(x, 7));
  EXPECT_FALSE(cycle(In().read(x)).accepted);
  cycle(In().write(x, 8, true));
  EXPECT_TRUE(cycle(In().read(x)).accepted);
  EXPECT_EQ(cycle(In()).rsp_data, 8u);
  // An external write waits while its QP is locked (the owner's write-back must not undo
  // it), lands after the unlock, and does not unlock by itself.
  EXPECT_TRUE(cycle(In().read(y, true)).accepted);
  Out o = cycle(In().ext_write(y, 9));
  EXPECT_FALSE(o.ext_taken) << "command write taken while its QP is locked";
  EXPECT_TRUE(cycle(In().ext_write(x, 11)).ext_taken) << "command write to an unlocked QP waits";
  EXPECT_FALSE(cycle(In().read(y)).accepted);
  cycle(In().write(y, 10, true));
  EXPECT_TRUE(cycle(In().ext_write(y, 9)).ext_taken);
  EXPECT_TRUE(cycle(In().read(y)).accepted);
  EXPECT_EQ(cycle(In()).rsp_data, 9u) << "the command's value wins over the earlier write-back";
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(QpcRamBench, LocksExhausted) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kLocks; ++i) EXPECT_TRUE(cycle(In().read(i, true)).accepted);
  const int z = kLocks;
  EXPECT_FALSE(cycle(In().read(z, true)).accepted) << "lock taken with none free";
  EXPECT_TRUE(cycle(In().read(z)).accepted) << "plain read needs no lock";
  cycle(In().write(0, 3, true));
  EXPECT_TRUE(cycle(In().read(z, true)).accepted);
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(QpcRamBench, ExternalWriteYields) {
  SRNIC_BENCH_TRACE();
  reset();
  const int x = 3;
  // Both write the same QP in the same cycle: the owner's value is stored, ext must retry.
  Out o = cycle(In().write(x, 0x111).ext_write(x, 0x222));
  EXPECT_FALSE(o.ext_taken);
  cycle(In().read(x));
  EXPECT_EQ(cycle(In()).rsp_data, 0x111u);
  o = cycle(In().ext_write(x, 0x222));
  EXPECT_TRUE(o.ext_taken);
  cycle(In().read(x));
  EXPECT_EQ(cycle(In()).rsp_data, 0x222u);
}

// Random read-modify-write client: kLocks + 1 workers, observers, external and plain writes.
class RmwClient {
 public:
  enum class St { Idle, Req, Rsp, Modify, Write };
  struct Worker {
    St st = St::Idle;
    int q = 0, delay = 0;
    uint64_t val = 0;
  };

  RmwClient(QpcRamBench& b, Rng& r, const std::vector<int>& hot, bool others)
      : bench(b), rng(r), hot(hot), others(others) {}

  int pick() { return hot[rng.below(std::min<size_t>(hot.size(), hot_n))]; }

  void step() {
    if (rng.percent(1)) hot_n = size_t(rng.range(1, hot.size()));
    QpcRamBench::In in;
    // read port: keep a pending request until accepted
    if (req_owner == -2 && !stopping) {
      for (size_t i = 0; i < workers.size(); ++i)
        if (workers[i].st == St::Idle && rng.percent(30)) {
          workers[i].st = St::Req;
          workers[i].q = pick();
          req_owner = int(i);
          req_q = workers[i].q;
          req_lock = true;
          break;
        }
      if (req_owner == -2 && rng.percent(20)) {
        req_owner = -1;  // observer
        req_q = pick();
        req_lock = false;
      }
    }
    if (req_owner != -2) {
      in.req = true;
      in.rq = req_q;
      in.lock = req_lock;
    }
    // owner write port: one worker write-back, else sometimes a plain write
    for (auto& w : workers)
      if (w.st == St::Write) {
        in.wr = true;
        in.unlock = true;
        in.wq = w.q;
        in.wd = w.val + 1;
        w.st = St::Idle;
        ++increments[w.q];
        break;
      }
    if (!in.wr && others && !stopping && rng.percent(5)) {
      const int q = pick();
      if (!bench.locked(q)) {
        in.wr = true;
        in.wq = q;
        in.wd = rng.next();
      }
    }
    // external port: hold until taken
    if (!ext_pend && others && !stopping && rng.percent(10)) {
      ext_pend = true;
      ext_q = pick();
      ext_d = rng.next();
    }
    in.ext = ext_pend;
    in.eq = ext_q;
    in.ed = ext_d;

    const QpcRamBench::Out o = bench.cycle(in);
    if (o.ext_taken) ext_pend = false;
    // response for the read accepted last cycle
    if (o.rsp && rsp_owner >= 0) {
      auto& w = workers[size_t(rsp_owner)];
      w.val = o.rsp_data;
      w.st = St::Modify;
      w.delay = int(rng.below(5));
    }
    rsp_owner = -2;
    if (o.accepted) {
      rsp_owner = req_owner;
      if (req_owner >= 0) workers[size_t(req_owner)].st = St::Rsp;
      req_owner = -2;
      stall = 0;
    } else if (in.req) {
      ++stall;
      ++stalls;
    }
    for (auto& w : workers)
      if (w.st == St::Modify && w.delay-- == 0) w.st = St::Write;
  }
  bool quiet() const {
    for (auto& w : workers)
      if (w.st != St::Idle) return false;
    return req_owner == -2 && !ext_pend;
  }

  QpcRamBench& bench;
  Rng& rng;
  std::vector<int> hot;
  size_t hot_n = 1000;
  bool others;
  bool stopping = false;
  std::array<Worker, kLocks + 1> workers{};
  int req_owner = -2, rsp_owner = -2;  // -2 none, -1 observer, else worker
  int req_q = 0;
  bool req_lock = false;
  bool ext_pend = false;
  int ext_q = 0;
  uint64_t ext_d = 0;
  int stall = 0;
  uint64_t stalls = 0;
  std::vector<uint64_t> increments = std::vector<uint64_t>(kQps);
};

std::vector<int> hot_set(Rng& rng) {
  std::vector<int> hot;
  const int n = std::min(kQps, 48);
  for (int i = 0; i < n; ++i) hot.push_back(kQps <= 48 ? i : int(rng.below(kQps)));
  return hot;
}

void run_random(QpcRamBench& b, Rng& rng, bool others, int cycles) {
  b.reset();
  const auto hot = hot_set(rng);
  std::vector<uint64_t> init(kQps);
  for (int q : hot) {
    init[size_t(q)] = rng.next() >> 8;
    b.cycle(QpcRamBench::In().write(q, init[size_t(q)]));
  }
  RmwClient c(b, rng, hot, others);
  for (int i = 0; i < cycles; ++i) {
    c.step();
    ASSERT_LT(c.stall, 200) << "read request stalled for good at cycle " << b.dut.cycle();
    if (b.HasFailure()) return;
  }
  c.stopping = true;  // finish the work in flight, start none
  for (int i = 0; i < 200 && !c.quiet(); ++i) c.step();
  ASSERT_TRUE(c.quiet());
  EXPECT_GT(c.stalls, 100u) << "lock conflicts never happened";
  EXPECT_GE(b.dut.cycle(), uint64_t(cycles));
  EXPECT_GT(b.checked, uint64_t(cycles) / 10);
  if (!others) {
    uint64_t total = 0;
    for (int q : hot) {
      total += c.increments[size_t(q)];
      EXPECT_EQ(b.mem[size_t(q)], init[size_t(q)] + c.increments[size_t(q)]) << "lost update on qpn " << q;
    }
    EXPECT_GT(total, uint64_t(cycles) / 20);
  }
  EXPECT_FALSE(b.dut.rtl_error()) << "RTL $error fired";
}

TEST_F(QpcRamBench, RandomRmwNoLostUpdate) {
  SRNIC_BENCH_TRACE();
  run_random(*this, rng, false, 300000);
}

TEST_F(QpcRamBench, RandomRmwWithOtherWriters) {
  SRNIC_BENCH_TRACE();
  run_random(*this, rng, true, 300000);
}

}  // namespace
}  // namespace srnic::verif::blocks
