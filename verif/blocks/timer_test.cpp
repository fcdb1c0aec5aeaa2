// srnic_timer bench: per-QP local ACK timeout and RNR timers against a reference of the
// timers in cycles. Every accepted kick and cfg sets or clears the QP's reference timer
// (mode, exponent E, the cycle it was accepted); every expiry the sweeper decides (the push
// into the fire FIFO, read from the model's public signals, which serialises a decision
// before a kick accepted in the same cycle) must belong to a running timer of that kind,
// come no earlier than 2^E * CYC_PER_UNIT + 2 cycles after its kick and no later than the
// bound documented in rtl/transport/srnic_timer.sv:
//     (2^E + 2^g) * CYC_PER_UNIT + 2 * NUM_QPS + cycles the timer clock stood still,
// g = max(0, E - 8); a running timer past that bound is reported lost. The stand-still cycles
// come from the model (`frozen`) and are checked to occur only while the fire FIFO is full
// (this cycle or the one before), which the bench knows exactly: the fire outputs are
// checked against a FIFO of the decided expiries (order, QPN, kind, FWFT timing, held
// until taken), each presented within FIFO_DEPTH - 1 cycles plus the cycles the consumer
// held a fire back. The expected exponents are computed here from the protocol tables:
// ACK 4.096 us * 2^t = 2^(t+2) units of 1.024 us, RNR the table of timer codes rounded up
// to a power of two of units.
// Tests: reset clear (nothing fires, inputs wait), random kicks/cfg/backpressure over hot
// QP sets, RESTART postponing ACK timers and leaving RNR waits, STOP and cfg cancelling,
// timeout 0, directed races of a kick or cfg accepted 4 and 2 cycles before, in, and 2
// cycles after the cycle the sweeper decides the QP, a fire FIFO held full much longer
// than the stamp window, the duration of every RNR code and ACK timeout measured through
// the earliest of many phase-shifted expiries, STOP_ACK leaving RNR waits alone, and RENEW
// restarting a running ACK timer only (never arming a stopped one, never touching an RNR wait),
// and a cfg cancelling its QP's fires not yet taken (waiting for one already offered).
#include <algorithm>
#include <deque>
#include <vector>

#include "Vsrnic_timer.h"
#include "Vsrnic_timer___024root.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
constexpr uint64_t kCpu = BENCH_CYC_PER_UNIT;
constexpr bool kFull = kQps > 1024;
constexpr uint64_t kSweep = 2 * uint64_t(kQps);  // cycles between two decisions of a QP
constexpr size_t kFifoDepth = 4;
// Random traffic uses short timers so that they expire within the test: ACK timeouts
// 1..kShortAck, RNR codes 1..kShortRnr (and now and then any value).
constexpr int kShortAck = kFull ? 3 : 5;
constexpr int kShortRnr = kFull ? 3 : 9;

enum Mode { kOff = 0, kAck = 1, kRnr = 2 };
enum Kind { kRestart = 0, kRnrKick = 1, kStop = 2, kStopAck = 3, kRenew = 4 };

// RNR NAK timer codes (roce-protocol.md 4.1) in ns; the IB time unit is 1024 ns.
constexpr uint64_t kRnrNs[32] = {
    655360000, 10000,   20000,   30000,    40000,    60000,    80000,    120000,
    160000,    240000,  320000,  480000,   640000,   960000,   1280000,  1920000,
    2560000,   3840000, 5120000, 7680000,  10240000, 15360000, 20480000, 30720000,
    40960000,  61440000, 81920000, 122880000, 163840000, 245760000, 327680000, 491520000};

// Smallest E with 2^E units >= the table value: never early, and < 2x the table.
int rnr_exp(int code) {
  int e = 0;
  while ((uint64_t(1024) << e) < kRnrNs[code]) ++e;
  return e;
}
int ack_exp(int timeout) { return timeout + 2; }  // 4.096 us * 2^t = 2^(t+2) * 1.024 us

uint64_t dur_cycles(int e) { return (uint64_t(1) << e) * kCpu; }
int step_exp(int e) { return e > 8 ? e - 8 : 0; }
// Latest decision after the kick, without the cycles the timer clock stood still.
uint64_t late_cycles(int e) { return ((uint64_t(1) << e) + (uint64_t(1) << step_exp(e))) * kCpu + kSweep; }

struct Timer {
  int mode = kOff;
  int e = 0;
  uint64_t k = 0;          // cycle the kick was accepted
  uint64_t frozen_k = 0;   // stand-still cycles counted before that cycle
};

struct Fire {
  int qpn;
  bool rnr;
  bool live;          // false: cancelled by a cfg of its QP (leaves the FIFO unseen)
  uint64_t cycle;     // decision (push) cycle
  uint64_t kick;      // cycle of the kick that armed it
  uint64_t nr_push;   // held-back cycles counted up to the push
};

struct Req {
  bool valid = false;
  int qpn = 0;
  int kind = 0;  // kick kind
  int arg = 0;   // cfg: timeout attribute; kick: RNR code
};

class TimerBench : public ::testing::Test {
 public:
  TimerBench() : rng(test_seed()), dut(rng.next()) {}

  // The model's public signals (ph, sw_qpn, sw_dec, push, push_rnr, frozen).
  Vsrnic_timer___024root& sig() { return *dut->rootp; }

  void start() {
    dut->cfg_valid = dut->kick_valid = 0;
    dut->fire_ready = 1;
    dut.reset();
    model_reset();
    wait_ready();
  }
  void model_reset() {
    std::fill(tm.begin(), tm.end(), Timer{});
    std::fill(attr.begin(), attr.end(), 0);
    n_running = 0;
    fifo.clear();
    cfg = kick = Req{};
    full_prev = false;
    head_seen = false;
  }
  // Steps until the block takes requests (the RAM clear after reset: NUM_QPS cycles).
  void wait_ready() {
    const uint64_t c0 = dut.cycle();
    dut_ready_seen = false;
    for (int i = 0; i < kQps + 8 && !HasFatalFailure(); ++i) {
      dut.eval();
      if (dut->cfg_ready) break;
      ASSERT_FALSE(dut->kick_ready) << "cycle " << dut.cycle() << ": kick_ready during the RAM clear";
      step();
    }
    ASSERT_TRUE(dut->cfg_ready) << "not ready after the RAM clear";
    ASSERT_GE(dut.cycle() - c0, uint64_t(kQps)) << "ready before the RAM was cleared";
    dut_ready_seen = true;
    last_slot = dut.cycle();
  }

  // One cycle: drive the held requests and fire_ready, check outputs and decisions against
  // the reference, apply accepted requests, clock.
  void step() {
    auto& t = dut.top();
    t.cfg_valid = cfg.valid;
    t.cfg_qpn = uint32_t(cfg.qpn);
    t.cfg_timeout = uint32_t(cfg.arg);
    t.kick_valid = kick.valid;
    t.kick_qpn = uint32_t(kick.qpn);
    t.kick_kind = uint32_t(kick.kind);
    t.kick_rnr = uint32_t(kick.arg);
    t.fire_ready = ready;
    dut.eval();
    const uint64_t c = dut.cycle();
    const bool full = fifo.size() == kFifoDepth;

    // fire outputs: a FWFT FIFO of the decided expiries; a cancelled head leaves unseen
    ASSERT_EQ(bool(t.fire_valid), !fifo.empty() && fifo.front().live)
        << "cycle " << c << ": fire_valid vs " << fifo.size() << " decided expiries not taken"
        << (fifo.empty() || fifo.front().live ? "" : " (the head cancelled)");
    if (t.fire_valid) {
      const Fire& f = fifo.front();
      ASSERT_EQ(int(t.fire_qpn), f.qpn) << "cycle " << c << ": fire out of order";
      ASSERT_EQ(bool(t.fire_rnr), f.rnr) << "cycle " << c << ": fire kind of QP " << f.qpn;
      if (!head_seen) {
        head_seen = true;
        // presented within FIFO_DEPTH - 1 takes of earlier fires plus held-back cycles
        ASSERT_LE(c - (f.cycle + 1), kFifoDepth - 1 + (nr_total - f.nr_push))
            << "cycle " << c << ": fire of QP " << f.qpn << " (kick at " << f.kick << ") decided at " << f.cycle
            << " presented late";
      }
    }
    const bool take = t.fire_valid && t.fire_ready;
    if (take) ++n_taken;
    const bool pop = !fifo.empty() && (!fifo.front().live || take);
    if (t.fire_valid && !t.fire_ready) ++nr_total;

    // the timer clock stands still only while the fire FIFO is (or just was) full
    const bool frozen = sig().srnic_timer__DOT__frozen;
    if (frozen) {
      ASSERT_TRUE(full || full_prev) << "cycle " << c << ": timer clock stopped without backpressure";
      ++frozen_total;
    }

    // the sweeper's decision comes before a request accepted in the same cycle
    if (sig().srnic_timer__DOT__push) {
      decide(c, int(sig().srnic_timer__DOT__sw_qpn), bool(sig().srnic_timer__DOT__push_rnr));
      if (HasFatalFailure()) return;
    }

    // requests
    const bool acc_cfg = cfg.valid && t.cfg_ready;
    const bool acc_kick = kick.valid && t.kick_ready;
    // a kick slot every 2 cycles (unless a cfg takes it)
    if (t.kick_ready || acc_cfg) last_slot = c;
    if (dut_ready_seen) {
      ASSERT_LE(c - last_slot, 1u) << "cycle " << c << ": no kick slot for two cycles";
    }
    ASSERT_FALSE(acc_cfg && acc_kick) << "cycle " << c << ": cfg and kick taken in one cycle";
    // a cfg waits only for its QP's fire that is offered (not withdrawn), and then leaves the
    // slot to a kick
    if (dut_ready_seen && cfg.valid && sig().srnic_timer__DOT__ph) {
      const bool offered = t.fire_valid && int(t.fire_qpn) == cfg.qpn;
      ASSERT_EQ(bool(t.cfg_ready), !offered) << "cycle " << c << ": cfg of QP " << cfg.qpn
                                             << (offered ? " taken while its fire is offered" : " not taken");
      if (offered) ++n_cfg_waits;
    }
    const bool push = sig().srnic_timer__DOT__push;
    if (acc_cfg) {
      apply_cfg(cfg.qpn, cfg.arg);
      // the QP's fires not yet taken are cancelled, the one pushed in this cycle included
      for (size_t i = take ? 1 : 0; i < fifo.size(); ++i)
        if (fifo[i].qpn == cfg.qpn && fifo[i].live) {
          fifo[i].live = false;
          ++n_cancelled;
        }
      if (push && last_fire.qpn == cfg.qpn) {
        last_fire.live = false;
        ++n_cancelled;
      }
      cfg.valid = false;
    }
    if (acc_kick) {
      apply_kick(c, kick.qpn, kick.kind, kick.arg);
      kick.valid = false;
    }

    if (pop) {
      fifo.pop_front();
      head_seen = false;
    }
    if (push) fifo.push_back(last_fire);
    ASSERT_LE(fifo.size(), kFifoDepth) << "cycle " << c;
    full_prev = full;

    // lost timers: one QP per cycle, round robin
    check_lost(c, int(c % uint64_t(kQps)));
    if (HasFatalFailure()) return;
    dut.tick();
  }
  void decide(uint64_t c, int q, bool rnr) {
    Timer& m = tm[size_t(q)];
    ASSERT_NE(m.mode, kOff) << "cycle " << c << ": fire for QP " << q << " without a running timer";
    ASSERT_EQ(rnr, m.mode == kRnr) << "cycle " << c << ": fire kind of QP " << q;
    const uint64_t d = c - m.k;
    ASSERT_GE(d, dur_cycles(m.e) + 2) << "cycle " << c << ": QP " << q << " fired early: kick at " << m.k
                                      << ", 2^" << m.e << " units";
    const uint64_t stood = frozen_total - m.frozen_k;
    ASSERT_LE(d, late_cycles(m.e) + stood) << "cycle " << c << ": QP " << q << " fired late: kick at " << m.k
                                           << ", 2^" << m.e << " units, clock stood " << stood;
    min_late_margin = std::min<int64_t>(min_late_margin, int64_t(late_cycles(m.e) + stood) - int64_t(d));
    last_fire = Fire{q, rnr, true, c, m.k, nr_total};
    fires.push_back(last_fire);
    ++(rnr ? n_rnr_fires : n_ack_fires);
    set_off(q);
  }
  void check_lost(uint64_t c, int q) {
    const Timer& m = tm[size_t(q)];
    if (m.mode == kOff) return;  // (n_running counts the others)
    ASSERT_LE(c - m.k, late_cycles(m.e) + (frozen_total - m.frozen_k))
        << "cycle " << c << ": " << (m.mode == kRnr ? "RNR" : "ACK") << " timer of QP " << q << " (kick at "
        << m.k << ", 2^" << m.e << " units) lost";
  }
  void arm(uint64_t c, int q, int mode, int e) {
    if (tm[size_t(q)].mode == kOff) ++n_running;
    tm[size_t(q)] = Timer{mode, e, c, frozen_total};
  }
  void set_off(int q) {
    if (tm[size_t(q)].mode != kOff) --n_running;
    tm[size_t(q)].mode = kOff;
  }
  void apply_cfg(int q, int timeout) {
    attr[size_t(q)] = timeout;
    set_off(q);
    ++n_cfgs;
  }
  void apply_kick(uint64_t c, int q, int kind, int arg) {
    const Timer& m = tm[size_t(q)];
    ++n_kicks;
    // races: the kick taken within two cycles of the sweeper's decision of its QP
    const int sw = int(sig().srnic_timer__DOT__sw_qpn);
    if (sw == q || sw == (q + 1) % kQps || (sw + 1) % kQps == q) ++n_near_sweeper;
    switch (kind) {
      case kRestart:
        if (m.mode == kRnr) break;  // an RNR wait is not touched
        if (attr[size_t(q)] == 0) set_off(q);
        else arm(c, q, kAck, ack_exp(attr[size_t(q)]));
        break;
      case kRnrKick:
        arm(c, q, kRnr, rnr_exp(arg));
        break;
      case kStop:
        set_off(q);
        break;
      case kStopAck:
        if (m.mode == kRnr) break;  // an RNR wait is not touched
        set_off(q);
        break;
      case kRenew:
        if (m.mode == kAck) arm(c, q, kAck, ack_exp(attr[size_t(q)]));  // OFF and RNR unchanged
        break;
      default:
        break;
    }
  }

  // Holds a request until it is taken; returns the cycle it was taken.
  uint64_t send_kick(int q, int kind, int arg = 0) {
    kick = Req{true, q, kind, arg};
    for (int i = 0; i < 1000 && kick.valid && !HasFatalFailure(); ++i) step();
    EXPECT_FALSE(kick.valid) << "kick not taken";
    return dut.cycle() - 1;
  }
  uint64_t send_cfg(int q, int timeout) {
    cfg = Req{true, q, 0, timeout};
    for (int i = 0; i < 1000 && cfg.valid && !HasFatalFailure(); ++i) step();
    EXPECT_FALSE(cfg.valid) << "cfg not taken";
    return dut.cycle() - 1;
  }
  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n && !HasFatalFailure(); ++i) step();
  }
  bool any_running() const { return n_running > 0; }
  // Runs until every running timer has fired and the FIFO is empty (bounded by the timers' own
  // late bounds: a lost timer fails the round-robin check first).
  void settle(uint64_t cap = 50'000'000) {
    ready = true;
    for (uint64_t i = 0; i < cap && (any_running() || !fifo.empty()) && !HasFatalFailure(); ++i) {
      step();
      if ((i & 1023) == 0)
        for (int q = 0; q < kQps && !HasFatalFailure(); ++q) check_lost(dut.cycle(), q);
    }
    ASSERT_FALSE(any_running()) << "timers still running after " << cap << " cycles";
    idle(4);
    ASSERT_TRUE(fifo.empty());
  }
  // Stops every running timer whose expiry is further away than `horizon` cycles.
  void stop_long(uint64_t horizon) {
    for (int q = 0; q < kQps && !HasFatalFailure(); ++q)
      if (tm[size_t(q)].mode != kOff && late_cycles(tm[size_t(q)].e) > horizon) send_kick(q, kStop);
  }

  // Sweeper position (public signals): steps idle until the current cycle is the one in which
  // a request is taken `delta` cycles (even) after the sweeper decides QP q. The FIFO must not
  // fill meanwhile (ready is held high).
  void align(int q, int delta) {
    ready = true;
    const int at = ((q + delta / 2) % kQps + kQps) % kQps;
    for (uint64_t i = 0; i < 4 * kSweep && !HasFatalFailure(); ++i) {
      if (sig().srnic_timer__DOT__ph && sig().srnic_timer__DOT__sw_dec && int(sig().srnic_timer__DOT__sw_qpn) == at)
        return;
      step();
    }
    FAIL() << "sweeper never reached QP " << at;
  }
  std::vector<Fire> decisions_of(int q, uint64_t from) const {
    std::vector<Fire> v;
    for (const auto& f : fires)
      if (f.qpn == q && f.cycle >= from) v.push_back(f);
    return v;
  }

  // Random traffic over `hot`: requests held until taken, random fire_ready.
  Req random_kick(const std::vector<int>& hot) {
    Req r;
    r.valid = true;
    r.qpn = hot[rng.below(hot.size())];
    const uint64_t x = rng.below(100);
    r.kind = x < 40 ? kRestart : x < 55 ? kRenew : x < 75 ? kRnrKick : x < 88 ? kStop : kStopAck;
    r.arg = rng.percent(95) ? int(rng.range(1, kShortRnr)) : int(rng.below(32));
    return r;
  }
  Req random_cfg(const std::vector<int>& hot) {
    Req r;
    r.valid = true;
    r.qpn = hot[rng.below(hot.size())];
    const uint64_t x = rng.below(100);
    r.arg = x < 15 ? 0 : x < 95 ? int(rng.range(1, kShortAck)) : int(rng.below(32));
    return r;
  }
  // p_kick and p_cfg: chances per cycle in units of 1/100000; p_ready in percent.
  void random_run(uint64_t cycles, const std::vector<int>& hot, unsigned p_kick, unsigned p_cfg, unsigned p_ready) {
    for (uint64_t i = 0; i < cycles && !HasFatalFailure(); ++i) {
      if (!kick.valid && rng.below(100000) < p_kick) kick = random_kick(hot);
      if (!cfg.valid && rng.below(100000) < p_cfg) cfg = random_cfg(hot);
      ready = rng.percent(p_ready);
      step();
    }
  }
  // Phases of random traffic with changing rates and backpressure (some long holds).
  void random_phases(int phases, uint64_t len, const std::vector<int>& hot) {
    for (int ph = 0; ph < phases && !HasFatalFailure(); ++ph) {
      // mostly sparse kicks (timers get to expire: sparser for more QPs and for the long
      // sweep of the full build), now and then a kick every slot
      const uint64_t sparse = kFull ? 4 * uint64_t(hot.size()) : 25 * uint64_t(hot.size());
      const unsigned p_kick = unsigned(rng.percent(70) ? rng.range(sparse / 10 + 1, sparse) : rng.range(1000, 100000));
      const unsigned p_cfg = unsigned(rng.range(0, p_kick / 10 + 1));
      const uint64_t r = rng.below(10);
      const unsigned p_ready = r < 5 ? 100 : r < 8 ? unsigned(rng.range(20, 90)) : 0;
      random_run(p_ready == 0 ? rng.range(1, len) : len, hot, p_kick, p_cfg, p_ready);
    }
    kick.valid = cfg.valid = false;
  }

  Rng rng;
  Dut<Vsrnic_timer> dut;
  std::vector<Timer> tm = std::vector<Timer>(kQps);
  std::vector<int> attr = std::vector<int>(kQps);
  std::deque<Fire> fifo;
  std::vector<Fire> fires;
  Fire last_fire{};
  Req cfg, kick;
  bool ready = true;
  bool full_prev = false;
  bool dut_ready_seen = false;
  bool head_seen = false;  // the FIFO head has been presented
  uint64_t nr_total = 0;      // cycles a fire was held back (fire_valid && !fire_ready)
  uint64_t frozen_total = 0;  // cycles the timer clock stood still
  uint64_t last_slot = 0;
  int n_running = 0;  // reference timers not off
  uint64_t n_kicks = 0, n_cfgs = 0, n_ack_fires = 0, n_rnr_fires = 0, n_near_sweeper = 0;
  uint64_t n_cancelled = 0, n_cfg_waits = 0, n_taken = 0;  // fires a cfg cancelled; cycles a cfg waited for its fire
  int64_t min_late_margin = INT64_MAX;
};

// Hot QP set: every QP of the small build; in the full build a spread of QPs including the
// first and last (the sweeper's wrap).
std::vector<int> spread_qps(Rng& rng, size_t n) {
  std::vector<int> v;
  if (size_t(kQps) <= n) {
    for (int q = 0; q < kQps; ++q) v.push_back(q);
    return v;
  }
  v = {0, 1, kQps - 2, kQps - 1};
  while (v.size() < n) {
    const int q = int(rng.below(kQps));
    if (std::find(v.begin(), v.end(), q) == v.end()) v.push_back(q);
  }
  return v;
}

// After reset the inputs wait for the RAM clear and no QP fires, whatever kicks arrive for
// QPs never configured (timeout attribute 0: a RESTART leaves them off); a reset in the
// middle of running timers drops them and the FIFO.
TEST_F(TimerBench, ResetClearsAndWaits) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  const auto hot = spread_qps(rng, 64);
  for (int q : hot) send_kick(q, kRestart);
  idle(3 * kSweep);
  EXPECT_TRUE(fires.empty()) << "a QP never configured fired";
  // running timers, some fired and not taken, then reset
  for (int q : hot) send_cfg(q, 1);
  for (int q : hot) send_kick(q, rng.percent(50) ? kRestart : kRnrKick, 1);
  ready = false;
  idle(2 * kSweep + late_cycles(rnr_exp(1)));
  if (HasFatalFailure()) return;
  EXPECT_FALSE(fifo.empty()) << "nothing fired before the reset";
  const size_t before = fires.size();
  ready = true;
  dut.reset();
  model_reset();
  wait_ready();
  idle(3 * kSweep + late_cycles(rnr_exp(1)));
  EXPECT_EQ(fires.size(), before) << "a timer survived the reset";
  // the attribute was cleared too: RESTART leaves the QPs off
  for (int q : hot) send_kick(q, kRestart);
  idle(2 * kSweep + late_cycles(ack_exp(1)));
  EXPECT_EQ(fires.size(), before) << "timeout attribute survived the reset";
}

// Random kicks of every kind, cfg changes and backpressure on a few QPs (kicks often hit a
// QP with a running timer, and the sweeper's decision of it).
TEST_F(TimerBench, RandomSmallHotSet) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  std::vector<int> hot = spread_qps(rng, 64);
  hot.resize(4);
  for (int q : hot) send_cfg(q, int(rng.range(1, kShortAck)));
  random_phases(kFull ? 150 : 600, kFull ? 40000 : 4000, hot);
  if (HasFatalFailure()) return;
  stop_long(kFull ? 200000 : 20000);
  settle();
  std::printf("[bench] %llu cycles, %llu kicks (%llu near the sweeper), %llu cfg, %llu ACK / %llu RNR fires "
              "(%llu cancelled by a cfg, %llu cycles a cfg waited for its offered fire), clock stood %llu cycles, "
              "min late margin %lld\n",
              (unsigned long long)dut.cycle(), (unsigned long long)n_kicks, (unsigned long long)n_near_sweeper, (unsigned long long)n_cfgs,
              (unsigned long long)n_ack_fires, (unsigned long long)n_rnr_fires, (unsigned long long)n_cancelled,
              (unsigned long long)n_cfg_waits, (unsigned long long)frozen_total, (long long)min_late_margin);
  EXPECT_GT(n_ack_fires, kFull ? 20u : 300u);
  EXPECT_GT(n_rnr_fires, kFull ? 20u : 300u);
  EXPECT_GT(n_near_sweeper, kFull ? 0u : 1000u);
  // (four QPs fill the 4-deep fire FIFO only in the small build's short sweeps)
  if (!kFull) {
    EXPECT_GT(frozen_total, 0u) << "the fire FIFO never filled";
  }
}

TEST_F(TimerBench, RandomManyQps) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  const auto hot = spread_qps(rng, kFull ? 256 : 64);
  for (int q : hot) send_cfg(q, int(rng.range(0, kShortAck)));
  random_phases(kFull ? 100 : 400, kFull ? 50000 : 5000, hot);
  if (HasFatalFailure()) return;
  stop_long(kFull ? 200000 : 20000);
  settle();
  std::printf("[bench] %llu cycles, %llu kicks, %llu cfg, %llu ACK / %llu RNR fires, clock stood %llu cycles, "
              "min late margin %lld\n",
              (unsigned long long)dut.cycle(), (unsigned long long)n_kicks, (unsigned long long)n_cfgs, (unsigned long long)n_ack_fires,
              (unsigned long long)n_rnr_fires, (unsigned long long)frozen_total, (long long)min_late_margin);
  EXPECT_GT(frozen_total, 0u) << "the fire FIFO never filled";
  EXPECT_GT(n_ack_fires + n_rnr_fires, kFull ? 50u : 500u);
}

// A RESTART postpones a running ACK timer: restarted more often than its duration it never
// fires; left alone it fires once, a duration after the last RESTART.
TEST_F(TimerBench, RestartPostponesAck) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  const int q = kQps / 2 + 3;
  send_cfg(q, 1);
  const uint64_t d = dur_cycles(ack_exp(1));
  const uint64_t first = send_kick(q, kRestart);
  uint64_t last = first;
  while (dut.cycle() < first + 2 * kSweep + 10 * d && !HasFatalFailure()) {
    idle(d / 2);
    last = send_kick(q, kRestart);
  }
  EXPECT_TRUE(decisions_of(q, first).empty()) << "ACK timer fired although restarted";
  settle();
  const auto f = decisions_of(q, first);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].rnr);
  EXPECT_GE(f[0].cycle, last + d);
}

// A RESTART neither shortens, cancels nor converts an RNR wait; after the RNR fire a
// RESTART starts the ACK timer again.
TEST_F(TimerBench, RestartLeavesRnrWait) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  const int q = 5;
  const int code = 2;
  send_cfg(q, 1);
  send_kick(q, kRestart);
  const uint64_t k = send_kick(q, kRnrKick, code);  // replaces the running ACK timer
  while (tm[size_t(q)].mode == kRnr && !HasFatalFailure()) {
    idle(rng.range(1, 2 * kCpu));
    if (tm[size_t(q)].mode == kRnr) send_kick(q, kRestart);
  }
  auto f = decisions_of(q, k);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].rnr) << "RESTART turned the RNR wait into an ACK timer";
  EXPECT_GE(f[0].cycle, k + dur_cycles(rnr_exp(code)) + 2);
  const uint64_t r = send_kick(q, kRestart);
  settle();
  f = decisions_of(q, r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].rnr);
}

// STOP and cfg cancel running ACK timers and RNR waits; timeout attribute 0 never fires,
// also after a running timer when the attribute changes to 0.
TEST_F(TimerBench, StopCfgAndTimeoutZeroCancel) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  const auto hot = spread_qps(rng, 16);
  const uint64_t t0 = dut.cycle();
  for (size_t i = 0; i < hot.size(); ++i) {
    const int q = hot[i];
    send_cfg(q, 1);
    send_kick(q, (i & 1) ? kRnrKick : kRestart, 1);
    if (i % 4 < 2) send_kick(q, kStop);
    else send_cfg(q, i % 4 == 2 ? 0 : 2);
  }
  // attribute 0: RESTARTs for several sweeps leave the QPs off
  for (size_t i = 2; i < hot.size(); i += 4)
    for (int n = 0; n < 6; ++n) {
      send_kick(hot[i], kRestart);
      idle(kSweep / 2);
    }
  idle(3 * kSweep + late_cycles(rnr_exp(1)));
  EXPECT_TRUE(fires.empty()) << "a stopped or reconfigured timer fired (first QP " << fires[0].qpn << ")";
  (void)t0;
}

// Directed races with the sweeper: a request taken 4 or 2 cycles before, in, or 2 cycles
// after the cycle in which the sweeper decides a QP whose timer is due. Taken before the
// decision it wins (the decision sees it: forwarding into the sweeper's read); taken in or
// after it, it comes second (the sweeper fires, the request sees the cleared entry).
TEST_F(TimerBench, RacesWithSweeper) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  enum Op { kOpRestart, kOpStop, kOpCfg, kOpRnr, kOpStopAck };
  struct Case {
    const char* name;
    bool rnr_timer;  // the due timer is an RNR wait (else ACK)
    Op op;
  };
  const Case cases[] = {{"ACK+RESTART", false, kOpRestart}, {"ACK+STOP", false, kOpStop},
                        {"ACK+cfg", false, kOpCfg},         {"ACK+RNR", false, kOpRnr},
                        {"RNR+RESTART", true, kOpRestart},  {"RNR+STOP", true, kOpStop},
                        {"ACK+STOP_ACK", false, kOpStopAck}, {"RNR+STOP_ACK", true, kOpStopAck}};
  const int deltas[] = {-4, -2, 0, 2};
  int n = 0;
  for (const Case& cs : cases)
    for (int delta : deltas) {
      SCOPED_TRACE(std::string(cs.name) + " delta " + std::to_string(delta));
      const int q = (7 + 37 * n++) % kQps;
      send_cfg(q, 1);
      const int e = cs.rnr_timer ? rnr_exp(1) : ack_exp(1);
      const int a = int((dur_cycles(e) + 2 * kCpu + 16 + 1) & ~uint64_t(1));
      ASSERT_LT(uint64_t(a) + 4, kSweep);
      align(q, -a);
      if (HasFatalFailure()) return;
      const uint64_t armed = cs.rnr_timer ? send_kick(q, kRnrKick, 1) : send_kick(q, kRestart);
      align(q, delta);
      if (HasFatalFailure()) return;
      const uint64_t d = dut.cycle() - uint64_t(int64_t(delta));  // the sweeper's decision of q
      uint64_t took = 0;
      switch (cs.op) {
        case kOpRestart: took = send_kick(q, kRestart); break;
        case kOpStop: took = send_kick(q, kStop); break;
        case kOpCfg: took = send_cfg(q, 1); break;
        case kOpRnr: took = send_kick(q, kRnrKick, 1); break;
        case kOpStopAck: took = send_kick(q, kStopAck); break;
      }
      ASSERT_EQ(took, d + uint64_t(int64_t(delta))) << "request not taken in the aligned cycle";
      settle();
      if (HasFatalFailure()) return;
      const auto f = decisions_of(q, armed);
      const bool before = delta < 0;
      // The due timer fires at the decision unless a request taken before it stopped or
      // replaced it; a RESTART before the decision leaves an RNR wait alone.
      const bool ignored = cs.rnr_timer && (cs.op == kOpRestart || cs.op == kOpStopAck);
      const bool want_at_d = !before || ignored;
      // Afterwards the request's own timer fires once: a RESTART's ACK timer (unless it
      // was ignored), an RNR kick's wait.
      size_t want_later = 0;
      if (cs.op == kOpRnr || (cs.op == kOpRestart && !(ignored && before))) want_later = 1;
      const bool fired_at_d = !f.empty() && f[0].cycle == d;
      EXPECT_EQ(fired_at_d, want_at_d) << "decision at cycle " << d;
      if (fired_at_d) {
        EXPECT_EQ(f[0].rnr, cs.rnr_timer);
      }
      const size_t later = f.size() - (fired_at_d ? 1 : 0);
      EXPECT_EQ(later, want_later) << "fires after the decision";
      if (later == 1) {
        EXPECT_EQ(f.back().rnr, cs.op == kOpRnr);
      }
    }
}

// The fire FIFO held full far longer than the stamp window (255 units): the sweeper waits
// (no expiry skipped), the timer clock stands still, and kicks are still taken; every timer
// fires once the consumer takes fires again.
TEST_F(TimerBench, FifoFullLong) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  auto hot = spread_qps(rng, kFull ? 96 : 64);
  const std::vector<int> others(hot.end() - 16, hot.end());  // kicked during the hold
  hot.resize(hot.size() - 16);
  for (int q : hot) send_cfg(q, int(rng.range(1, 2)));
  for (int q : hot) send_kick(q, rng.percent(70) ? kRestart : kRnrKick, int(rng.range(1, 3)));
  ready = false;
  const uint64_t hold = 4 * (255 * kCpu + kSweep);
  const uint64_t frozen0 = frozen_total;
  // kicks and cfg go on while the FIFO is full
  random_run(hold, others, 20000, 1000, 0);
  kick.valid = cfg.valid = false;
  if (HasFatalFailure()) return;
  EXPECT_EQ(fifo.size(), kFifoDepth) << "FIFO did not fill";
  EXPECT_GT(frozen_total - frozen0, hold / 2) << "timer clock did not stand still";
  stop_long(kFull ? 200000 : 20000);  // long timers some kicks of the hold armed
  settle();
  std::printf("[bench] %llu fires, clock stood %llu cycles\n", (unsigned long long)fires.size(),
              (unsigned long long)frozen_total);
  for (int q : hot) EXPECT_EQ(decisions_of(q, 0).size(), 1u) << "QP " << q;
}

// The duration of every RNR timer code and ACK timeout, measured: the earliest expiry over
// QPs kicked at spread phases of the sweep is within about a unit of the deadline, so its
// delay gives the exponent E (2^E <= delay / CYC_PER_UNIT < 2^(E+1)). Each RNR code's
// 2^E units of 1.024 us must be >= the table value and < 2x it; ACK timeout t gives
// E = t + 2. Timeouts above 18 and attribute 0 must not fire within the test. The full
// build (16K QPs, 308-cycle unit) checks that the short codes expire no earlier than the
// table value at 300 MHz.
TEST_F(TimerBench, DurationsOfAllCodes) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  auto exp_of = [&](uint64_t delay) {
    int e = 0;
    while (e < 40 && (uint64_t(2) << e) * kCpu <= delay) ++e;
    return e;
  };
  if (kFull) {
    std::vector<std::pair<int, uint64_t>> ack, rnr;  // {QP, kick cycle}
    for (int t = 1; t <= 6; ++t) send_cfg(100 * t, t);
    for (int t = 1; t <= 6; ++t) ack.push_back({100 * t, send_kick(100 * t, kRestart)});
    for (int c = 1; c <= 8; ++c) rnr.push_back({5000 + 7 * c, send_kick(5000 + 7 * c, kRnrKick, c)});
    settle();
    for (int i = 0; i < 6; ++i) {
      const auto f = decisions_of(ack[size_t(i)].first, ack[size_t(i)].second);
      ASSERT_EQ(f.size(), 1u);
      const uint64_t ns3 = (f[0].cycle - ack[size_t(i)].second) * 10;  // 3x ns at 300 MHz
      EXPECT_GE(ns3, 3 * (uint64_t(4096) << (i + 1))) << "ACK timeout " << i + 1 << " early in real time";
    }
    for (int i = 0; i < 8; ++i) {
      const auto f = decisions_of(rnr[size_t(i)].first, rnr[size_t(i)].second);
      ASSERT_EQ(f.size(), 1u);
      const uint64_t ns3 = (f[0].cycle - rnr[size_t(i)].second) * 10;
      EXPECT_GE(ns3, 3 * kRnrNs[i + 1]) << "RNR code " << i + 1 << " early in real time";
    }
    return;
  }
  // Earliest delay over all QPs, kicked in reverse order: QP q is kicked 2*(N-1-q) cycles
  // after the first and decided 2q cycles after QP 0, so the kick-to-visit phase steps by 4.
  auto min_delay = [&](bool rnr, int arg) {
    if (!rnr)
      for (int q = 0; q < kQps; ++q) send_cfg(q, arg);
    std::vector<uint64_t> k(static_cast<size_t>(kQps));
    const size_t f0 = fires.size();
    for (int q = kQps - 1; q >= 0; --q) k[size_t(q)] = rnr ? send_kick(q, kRnrKick, arg) : send_kick(q, kRestart);
    settle();
    uint64_t best = UINT64_MAX;
    for (size_t i = f0; i < fires.size(); ++i) best = std::min(best, fires[i].cycle - k[size_t(fires[i].qpn)]);
    EXPECT_EQ(fires.size() - f0, size_t(kQps));
    return best;
  };
  std::vector<int> e_rnr(32, -1), e_ack(32, -1);
  for (int c = 0; c < 32 && !HasFatalFailure(); ++c)
    if (rnr_exp(c) <= 8) e_rnr[size_t(c)] = exp_of(min_delay(true, c));
  for (int t = 1; t <= 6 && !HasFatalFailure(); ++t) e_ack[size_t(t)] = exp_of(min_delay(false, t));
  if (HasFatalFailure()) return;
  // the long ones on one QP each, all at once (the sweep is short against them)
  std::vector<std::pair<int, uint64_t>> kicks(64, {-1, 0});
  const uint64_t batch = dut.cycle();
  int q = 0;
  for (int t = 7; t <= 31; ++t) send_cfg(q + t - 7, t);
  send_cfg(40, 0);
  for (int t = 7; t <= 31; ++t, ++q) kicks[size_t(q)] = {t, send_kick(q, kRestart)};
  send_kick(40, kRestart);
  q = 41;  // QPs 41..63: the 23 RNR codes with E > 8
  for (int c = 0; c < 32; ++c)
    if (e_rnr[size_t(c)] < 0) {
      ASSERT_LT(q, kQps);
      kicks[size_t(q)] = {100 + c, send_kick(q, kRnrKick, c)};
      ++q;
    }
  // run past the longest expected expiry (RNR code 0), then stop what is left
  idle(late_cycles(rnr_exp(0)) + 2);
  for (int t = 19; t <= 31; ++t) EXPECT_EQ(tm[size_t(t - 7)].mode, kAck) << "timeout " << t << " missing";
  stop_long(0);
  settle();
  for (int i = 0; i < 64; ++i) {
    const auto [id, k] = kicks[size_t(i)];
    if (id < 0) continue;
    const auto f = decisions_of(i, k);
    if (id < 100 && id > 18) {
      EXPECT_TRUE(f.empty()) << "ACK timeout " << id << " fired after " << f[0].cycle - k << " cycles";
      continue;
    }
    ASSERT_EQ(f.size(), 1u) << (id < 100 ? "ACK timeout " : "RNR code ") << id % 100;
    (id < 100 ? e_ack : e_rnr)[size_t(id % 100)] = exp_of(f[0].cycle - k);
  }
  EXPECT_TRUE(decisions_of(40, batch).empty()) << "timeout 0 fired";
  for (int c = 0; c < 32; ++c) {
    EXPECT_EQ(e_rnr[size_t(c)], rnr_exp(c)) << "RNR code " << c;
    if (e_rnr[size_t(c)] < 0) continue;
    const uint64_t ns = uint64_t(1024) << e_rnr[size_t(c)];
    EXPECT_GE(ns, kRnrNs[c]) << "RNR code " << c << ": 2^" << e_rnr[size_t(c)] << " units below the table";
    EXPECT_LT(ns, 2 * kRnrNs[c]) << "RNR code " << c << ": 2^" << e_rnr[size_t(c)] << " units 2x the table";
  }
  for (int t = 1; t <= 18; ++t) EXPECT_EQ(e_ack[size_t(t)], t + 2) << "ACK timeout " << t;
}

// STOP_ACK (kind 3) stops a running ACK timer and leaves an RNR wait alone: the RNR wait
// still fires, the stopped ACK timer never does.
TEST_F(TimerBench, StopAckLeavesRnrWait) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  send_cfg(9, 1);
  send_cfg(10, 1);
  const uint64_t k_ack = send_kick(9, kRestart);
  const uint64_t k_rnr = send_kick(10, kRnrKick, 1);
  send_kick(9, kStopAck);
  send_kick(10, kStopAck);
  EXPECT_EQ(dut.take_rtl_errors(), 0) << "STOP_ACK raised an assertion";
  settle();
  EXPECT_TRUE(decisions_of(9, k_ack).empty()) << "an ACK timer fired after STOP_ACK";
  const auto f = decisions_of(10, k_rnr);
  ASSERT_EQ(f.size(), 1u) << "the RNR wait did not fire once after STOP_ACK";
  EXPECT_TRUE(f[0].rnr);
}

// RENEW (kind 4, what an accepted response sends) postpones a running ACK timer like RESTART,
// but never arms a stopped one and never touches an RNR wait: renewed for several sweeps, an
// OFF entry stays silent (a response that acknowledges nothing new must not start a timeout
// for a QP with nothing outstanding), an RNR wait fires as an RNR wait at its own time, and a
// running ACK timer fires once, a duration after the last RENEW.
TEST_F(TimerBench, RenewRestartsOnlyARunningAckTimer) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  const int off_q = 3, rnr_q = kQps / 2, ack_q = kQps - 1, stopped_q = 7;
  for (int q : {off_q, rnr_q, ack_q, stopped_q}) send_cfg(q, 1);
  const uint64_t d = dur_cycles(ack_exp(1));
  const uint64_t k_rnr = send_kick(rnr_q, kRnrKick, 2);
  const uint64_t first = send_kick(ack_q, kRestart);
  send_kick(stopped_q, kRestart);
  send_kick(stopped_q, kStopAck);  // everything acknowledged: then a late copy of an ACK
  uint64_t last = first;
  while (dut.cycle() < first + 2 * kSweep + 6 * d && !HasFatalFailure()) {
    idle(d / 2);
    for (int q : {off_q, stopped_q}) send_kick(q, kRenew);
    if (tm[size_t(rnr_q)].mode == kRnr) send_kick(rnr_q, kRenew);
    last = send_kick(ack_q, kRenew);
  }
  EXPECT_TRUE(decisions_of(ack_q, first).empty()) << "a renewed ACK timer fired";
  settle();
  EXPECT_TRUE(decisions_of(off_q, 0).empty()) << "RENEW armed a QP whose timer never ran";
  EXPECT_TRUE(decisions_of(stopped_q, 0).empty()) << "RENEW armed a stopped ACK timer";
  const auto r = decisions_of(rnr_q, k_rnr);
  ASSERT_EQ(r.size(), 1u) << "the RNR wait did not fire once";
  EXPECT_TRUE(r[0].rnr) << "RENEW turned the RNR wait into an ACK timer";
  EXPECT_LE(r[0].cycle, k_rnr + late_cycles(rnr_exp(2)) + frozen_total) << "RENEW postponed the RNR wait";
  const auto f = decisions_of(ack_q, first);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0].rnr);
  EXPECT_GE(f[0].cycle, last + d);
}

// A cfg (every QP_MODIFY, a reset among them) cancels its QP's expiries decided and not yet
// taken, so none of a QP's earlier incarnation reaches the RX engine after a reset: with the
// consumer holding the fires back, three QPs fire; cfgs of the second and third leave only the
// head to be offered. A cfg of the QP whose fire is offered waits until that fire is taken (an
// offered fire is never withdrawn) and kicks are taken meanwhile; then the cancelled entries
// leave unseen.
TEST_F(TimerBench, CfgCancelsPendingFires) {
  SRNIC_BENCH_TRACE();
  start();
  if (HasFatalFailure()) return;
  const int qs[3] = {2, kQps / 2, kQps - 3};
  for (int q : qs) send_cfg(q, 1);
  ready = false;
  for (int q : qs) send_kick(q, kRestart);
  for (uint64_t i = 0; i < 4 * kSweep + late_cycles(ack_exp(1)) && fifo.size() < 3 && !HasFatalFailure(); ++i)
    step();
  ASSERT_EQ(fifo.size(), 3u) << "the three timers did not fire";
  const int head = fifo[0].qpn, second = fifo[1].qpn, third = fifo[2].qpn;
  send_cfg(second, 1);
  send_cfg(third, 0);
  EXPECT_EQ(n_cancelled, 2u) << "cfgs of QPs with fires waiting behind the head";
  EXPECT_EQ(fifo.size(), 3u) << "cancelled entries keep their places";
  cfg = Req{true, head, 0, 1};
  idle(16);
  EXPECT_TRUE(cfg.valid) << "the cfg of the QP whose fire is offered was taken";
  EXPECT_GE(n_cfg_waits, 8u);
  send_kick(second, kRestart);  // a kick is taken while the cfg waits
  EXPECT_TRUE(cfg.valid);
  const uint64_t taken = n_taken;
  ready = true;
  idle(8);
  EXPECT_FALSE(cfg.valid) << "the cfg was not taken after the fire was";
  EXPECT_EQ(n_taken, taken + 1) << "only the head's fire may be taken";
  EXPECT_TRUE(fifo.empty()) << "the cancelled entries did not leave";
  settle();
  EXPECT_EQ(dut.take_rtl_errors(), 0);
}

}  // namespace
}  // namespace srnic::verif::blocks
