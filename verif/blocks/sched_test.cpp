// srnic_sched bench: random doorbells, kicks (held until kick_ready, as the send path does),
// turn hand-outs (m_ready) and turn ends (done_more) against a cycle-exact C++ model
// (doorbell FIFO shared by doorbells and kicks, ready queue, active/pending bits, the
// post-reset sweep), comparing m_valid, m_qpn, done_ready, db_overflow, db_room and
// kick_ready every cycle. A kick is taken only in a cycle without a doorbell and only below
// the slot the doorbell FIFO keeps for a doorbell already on its way (kick_ready = !db_valid
// && room for two). Independently of the model, the RTL outputs must keep the scheduler's
// promises: a QP is never handed out while its turn is in flight, never gets more turns
// than doorbells plus kicks plus "more" turn ends, and once the traffic stops, every QP that
// got an accepted doorbell or kick at or after the start of its last turn (or ended a turn
// with more work) is handed out again.
#include <algorithm>
#include <vector>

#include "Vsrnic_sched.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
constexpr int kDbDepth = BENCH_DB_DEPTH;

// Fixed-capacity FIFO of QPNs.
class Ring {
 public:
  explicit Ring(int cap) : buf_(size_t(cap)) {}
  int size() const { return n_; }
  bool full() const { return n_ == int(buf_.size()); }
  int front() const { return buf_[size_t(head_)]; }
  void push(int v) { buf_[size_t((head_ + n_++) % int(buf_.size()))] = v; }
  void pop() { head_ = (head_ + 1) % int(buf_.size()); --n_; }
  void clear() { head_ = n_ = 0; }

 private:
  std::vector<int> buf_;
  int head_ = 0, n_ = 0;
};

// Cycle-exact reference of srnic_sched: per QP {active, pending}, a doorbell FIFO, the
// ready queue, and the post-reset sweep (NUM_QPS/8 cycles) during which events wait.
struct SchedModel {
  std::vector<uint8_t> active = std::vector<uint8_t>(kQps), pending = active, inq = active;
  Ring dbq{kDbDepth}, rq{kQps};
  int init_left = kQps / 8;
  int dups = 0;  // times a QP was queued while already in the queue

  void reset() {
    std::fill(active.begin(), active.end(), 0);
    std::fill(pending.begin(), pending.end(), 0);
    std::fill(inq.begin(), inq.end(), 0);
    dbq.clear();
    rq.clear();
    init_left = kQps / 8;
  }
  bool overflow(bool db) const { return db && dbq.full(); }
  bool room() const { return dbq.size() < kDbDepth - 1; }
  bool kick_ready(bool db) const { return !db && !dbq.full() && room(); }
  bool done_ready() const { return init_left == 0; }
  void edge(bool db, int db_q, bool kick, int kick_q, bool done, int done_q, bool more, bool m_ready) {
    const bool init = init_left > 0;
    const bool pop = rq.size() > 0 && m_ready;
    const bool ev_done = done && !init;
    const bool ev_db = dbq.size() > 0 && !init && !done;
    const bool db_accept = db && !dbq.full();
    const bool kick_accept = kick && kick_ready(db);
    const int q = ev_done ? done_q : ev_db ? dbq.front() : -1;
    bool push = false;
    if (ev_done) {
      push = more || pending[size_t(q)];
      active[size_t(q)] = push;
      pending[size_t(q)] = 0;
    } else if (ev_db) {
      if (active[size_t(q)]) {
        pending[size_t(q)] = 1;
      } else {
        push = true;
        active[size_t(q)] = 1;
      }
    }
    if (pop) {
      --inq[size_t(rq.front())];
      rq.pop();
    }
    if (push) {
      if (inq[size_t(q)]++) ++dups;
      rq.push(q);
    }
    if (ev_db) dbq.pop();
    if (db_accept) dbq.push(db_q);
    if (kick_accept) dbq.push(kick_q);
    if (init) --init_left;
  }
};

class SchedBench : public ::testing::Test {
 public:
  SchedBench() : rng(test_seed()), dut(rng.next()) {}

  // Turns the bench holds: QPN -> cycles left until it ends the turn (-1 = not busy).
  struct Turn {
    int left = -1;
    bool more = false;
  };

  void run(int cycles, int hot_n, unsigned p_db, unsigned p_ready, int max_turn, unsigned p_more,
           unsigned p_kick = 0) {
    for (int i = 0; i < cycles; ++i) {
      if (rng.percent(2)) hot_n = int(rng.range(1, hot.size()));
      if (!kick_hold && rng.percent(p_kick)) {  // a new kick, held until kick_ready
        kick_hold = true;
        kick_q = hot[rng.below(size_t(hot_n))];
      }
      const bool db = rng.percent(p_db);
      const int db_q = hot[rng.below(size_t(hot_n))];
      const bool m_ready = rng.percent(p_ready);
      // end one due turn per cycle
      bool done = false;
      int done_q = 0;
      bool more = false;
      for (int q : in_turn)
        if (turns[size_t(q)].left == 0) {
          done = true;
          done_q = q;
          more = turns[size_t(q)].more;
          break;
        }
      step(db, db_q, done, done_q, more, m_ready, max_turn, p_more);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  void step(bool db, int db_q, bool done, int done_q, bool more, bool m_ready, int max_turn,
            unsigned p_more) {
    dut->db_valid = db;
    dut->db_qpn = db_q;
    dut->done_valid = done;
    dut->done_qpn = done_q;
    dut->done_more = more;
    dut->m_ready = m_ready;
    dut->kick_valid = kick_hold;
    dut->kick_qpn = kick_q;
    dut.eval();
    const uint64_t c = dut.cycle();
    ASSERT_EQ(bool(dut->done_ready), model.done_ready()) << "cycle " << c;
    ASSERT_EQ(bool(dut->kick_ready), model.kick_ready(db))
        << "cycle " << c << ": kick_ready with doorbell " << db << ", " << model.dbq.size() << " in the doorbell FIFO";
    if (!dut->done_ready) done = false;  // the turn end waits; the bench retries it
    ASSERT_EQ(bool(dut->db_overflow), model.overflow(db)) << "cycle " << c;
    ASSERT_EQ(bool(dut->db_room), model.room()) << "cycle " << c << ": doorbell room";
    ASSERT_EQ(bool(dut->m_valid), model.rq.size() > 0) << "cycle " << c;
    if (dut->m_valid) {
      ASSERT_EQ(int(dut->m_qpn), model.rq.front()) << "cycle " << c;
    }
    const bool pop = dut->m_valid && m_ready;
    const int q = dut->m_qpn;
    // Promises, checked on the RTL outputs.
    if (pop) {
      ASSERT_EQ(turns[size_t(q)].left, -1) << "cycle " << c << ": QP " << q << " handed out while busy";
      ++n_turns[size_t(q)];
      ASSERT_LE(n_turns[size_t(q)], n_reasons[size_t(q)])
          << "cycle " << c << ": QP " << q << " got more turns than doorbells + more-ends";
      last_turn[size_t(q)] = int64_t(c);
      owed_more[size_t(q)] = 0;
    }
    if (db && !dut->db_overflow) {
      last_db[size_t(db_q)] = int64_t(c);
      ++n_reasons[size_t(db_q)];
      ++dbs;
    }
    overflows += db && dut->db_overflow;
    const bool kick_taken = kick_hold && dut->kick_ready;
    if (kick_taken) {
      last_db[size_t(kick_q)] = int64_t(c);
      ++n_reasons[size_t(kick_q)];
      ++kicks;
    } else if (kick_hold) {
      if (db) ++kick_wait_db;
      else if (model.dbq.size() == kDbDepth - 1) ++kick_wait_reserve;
      else ++kick_wait_full;
    }
    if (done) {
      turns[size_t(done_q)].left = -1;
      for (size_t i = 0; i < in_turn.size(); ++i)
        if (in_turn[i] == done_q) {
          in_turn[i] = in_turn.back();
          in_turn.pop_back();
          break;
        }
      if (more) {
        owed_more[size_t(done_q)] = 1;
        ++n_reasons[size_t(done_q)];
      }
    }
    model.edge(db, db_q, kick_hold, kick_q, bool(dut->done_valid), done_q, more, m_ready);
    dut.tick();
    if (kick_taken) kick_hold = false;
    for (int t : in_turn)
      if (turns[size_t(t)].left > 0) --turns[size_t(t)].left;
    if (pop) {
      turns[size_t(q)].left = int(rng.below(size_t(max_turn) + 1));
      turns[size_t(q)].more = rng.percent(p_more);
      in_turn.push_back(q);
      ++total_turns;
    }
  }

  // Stops doorbells, ends every turn without more work and lets the queue drain.
  void drain() {
    int idle = 0;
    for (int i = 0; i < 40 * kDbDepth + 4 * int(hot.size()) + 1000 && idle < 3 * kDbDepth + 8; ++i) {
      for (int t : in_turn) turns[size_t(t)].more = false;
      const size_t before = total_turns;
      run(1, 1, 0, 100, 3, 0);
      if (::testing::Test::HasFatalFailure()) return;
      idle = (total_turns == before && in_turn.empty() && !dut->m_valid && !kick_hold) ? idle + 1 : 0;
    }
    ASSERT_FALSE(kick_hold) << "kick never taken";
    ASSERT_TRUE(in_turn.empty());
    ASSERT_FALSE(dut->m_valid);
    for (size_t q = 0; q < size_t(kQps); ++q) {
      EXPECT_LT(last_db[q], last_turn[q]) << "QP " << q << ": doorbell or kick at cycle " << last_db[q]
                                          << " lost (last turn started at cycle " << last_turn[q] << ")";
      EXPECT_EQ(owed_more[q], 0) << "QP " << q << ": turn ended with more work, no new turn";
    }
  }

  void report() const {
    std::printf("[bench] %llu cycles, %llu turns, %llu doorbells (%llu overflows), %llu kicks; kicks waited "
                "%llu cycles for a doorbell, %llu at the reserve slot, %llu at a full FIFO\n",
                (unsigned long long)dut.cycle(), (unsigned long long)total_turns, (unsigned long long)dbs,
                (unsigned long long)overflows, (unsigned long long)kicks, (unsigned long long)kick_wait_db,
                (unsigned long long)kick_wait_reserve, (unsigned long long)kick_wait_full);
  }

  void start(size_t n_hot) {
    dut->db_valid = dut->done_valid = dut->m_ready = dut->kick_valid = 0;  // inputs start random
    kick_hold = false;
    dut.reset();
    model.reset();
    hot.clear();
    for (size_t i = 0; i < n_hot; ++i)
      hot.push_back(n_hot >= size_t(kQps) ? int(i) : int(rng.below(kQps)));
  }

  Rng rng;
  Dut<Vsrnic_sched> dut;
  SchedModel model;
  std::vector<int> hot;
  std::vector<Turn> turns = std::vector<Turn>(kQps);
  std::vector<int> in_turn;
  std::vector<int64_t> last_db = std::vector<int64_t>(kQps, -2), last_turn = std::vector<int64_t>(kQps, -1);
  std::vector<uint64_t> n_turns = std::vector<uint64_t>(kQps), n_reasons = n_turns;
  std::vector<uint8_t> owed_more = std::vector<uint8_t>(kQps);
  uint64_t dbs = 0, overflows = 0, total_turns = 0;
  // the kicker (the send path): one kick held until kick_ready
  bool kick_hold = false;
  int kick_q = 0;
  uint64_t kicks = 0, kick_wait_db = 0, kick_wait_reserve = 0, kick_wait_full = 0;
};

TEST_F(SchedBench, SingleQpDoorbellDuringTurn) {
  SRNIC_BENCH_TRACE();
  start(1);
  for (int i = 0; i < kQps / 8 + 2 && !dut->done_ready; ++i) step(false, 0, false, 0, false, false, 0, 0);
  ASSERT_TRUE(dut->done_ready) << "reset sweep did not finish";
  const int q = kQps - 1;
  step(true, q, false, 0, false, false, 0, 0);   // doorbell
  for (int i = 0; i < 3; ++i) step(false, 0, false, 0, false, false, 0, 0);
  ASSERT_TRUE(dut->m_valid);
  EXPECT_EQ(int(dut->m_qpn), q);
  step(false, 0, false, 0, false, true, 0, 0);   // turn starts
  EXPECT_FALSE(dut->m_valid);
  step(true, q, false, 0, false, true, 0, 0);    // doorbell while busy
  for (int i = 0; i < 3; ++i) step(false, 0, false, 0, false, true, 0, 0);
  EXPECT_FALSE(dut->m_valid) << "QP handed out while its turn is in flight";
  turns[size_t(q)].left = 0;
  step(false, 0, true, q, false, false, 0, 0);   // turn ends without more work
  step(false, 0, false, 0, false, false, 0, 0);
  EXPECT_TRUE(dut->m_valid) << "doorbell during the turn lost";
  drain();
  EXPECT_FALSE(dut.rtl_error());
}

TEST_F(SchedBench, RandomSmallHotSet) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 6));
  for (int phase = 0; phase < 100 && !HasFatalFailure(); ++phase)
    run(3000, int(hot.size()), unsigned(rng.range(5, 70)), unsigned(rng.range(20, 100)),
        int(rng.range(0, 12)), unsigned(rng.range(0, 40)), rng.percent(25) ? 0 : unsigned(rng.range(1, 60)));
  if (HasFatalFailure()) return;
  drain();
  EXPECT_EQ(model.dups, 0);
  EXPECT_GT(total_turns, 2000u);
  EXPECT_GT(dut.cycle(), 300000u);
  EXPECT_GT(overflows, 0u) << "doorbell FIFO never filled";
  EXPECT_GT(kicks, 1000u);
  EXPECT_GT(kick_wait_db, 100u) << "no kick waited for a doorbell";
  EXPECT_GT(kick_wait_reserve, 100u) << "no kick waited at the doorbells' reserve slot";
  EXPECT_GT(kick_wait_full, 100u) << "no kick waited at a full doorbell FIFO";
  report();
  EXPECT_FALSE(dut.rtl_error()) << "RTL $error fired";
}

TEST_F(SchedBench, RandomManyQps) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 64));
  for (int phase = 0; phase < 60 && !HasFatalFailure(); ++phase)
    run(3000, int(hot.size()), unsigned(rng.range(10, 50)), unsigned(rng.range(30, 100)),
        int(rng.range(0, 30)), unsigned(rng.range(0, 30)), unsigned(rng.range(0, 40)));
  if (HasFatalFailure()) return;
  drain();
  EXPECT_EQ(model.dups, 0);
  EXPECT_GT(total_turns, 1000u);
  EXPECT_GT(kicks, 1000u);
  report();
  EXPECT_FALSE(dut.rtl_error()) << "RTL $error fired";
}

TEST_F(SchedBench, ResetClearsState) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 8));
  run(500, int(hot.size()), 40, 60, 5, 20, 30);
  if (HasFatalFailure()) return;
  // Reset drops every queued QP and turn; the bench forgets its turns too.
  dut->kick_valid = 0;
  kick_hold = false;  // the kicker is reset too
  dut.reset();
  model.reset();
  for (int t : in_turn) turns[size_t(t)].left = -1;
  in_turn.clear();
  std::fill(last_db.begin(), last_db.end(), -2);
  std::fill(owed_more.begin(), owed_more.end(), 0);
  dut.eval();
  EXPECT_FALSE(dut->m_valid);
  run(2000, int(hot.size()), 30, 60, 5, 20, 30);
  if (HasFatalFailure()) return;
  drain();
  EXPECT_FALSE(dut.rtl_error()) << "RTL $error fired";
}

// Turns from kicks alone (no doorbell at all): every kick is taken, none is lost, and the
// doorbell FIFO never goes past its reserve slot (kicks leave it to the doorbells).
TEST_F(SchedBench, RandomKicksWithoutDoorbells) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 12));
  size_t peak = 0;
  for (int phase = 0; phase < 40 && !HasFatalFailure(); ++phase) {
    // some phases end a turn nearly every cycle (short turns, mostly "more"): the doorbell
    // FIFO is not popped then, and the kicks pile up to the reserve slot
    const bool busy = rng.percent(50);
    const unsigned p_ready = unsigned(rng.range(20, 100)), p_kick = unsigned(rng.range(30, 100));
    const int max_turn = busy ? int(rng.range(0, 2)) : int(rng.range(0, 20));
    const unsigned p_more = busy ? unsigned(rng.range(80, 98)) : unsigned(rng.range(0, 40));
    for (int i = 0; i < 1000 && !HasFatalFailure(); ++i) {
      run(1, int(hot.size()), 0, p_ready, max_turn, p_more, p_kick);
      peak = std::max(peak, size_t(model.dbq.size()));
    }
  }
  if (HasFatalFailure()) return;
  drain();
  EXPECT_EQ(model.dups, 0);
  EXPECT_EQ(peak, size_t(kDbDepth - 1)) << "kicks alone must fill the doorbell FIFO up to its reserve slot, not into it";
  EXPECT_GT(kicks, 2000u);
  EXPECT_GT(kick_wait_reserve, 100u);
  EXPECT_EQ(kick_wait_full, 0u);
  EXPECT_GT(total_turns, 1000u);
  report();
}

// A kick schedules an idle QP exactly like a doorbell (same latency to m_valid), and a kick
// while the QP's turn is in flight is remembered: the QP is queued again at the turn end.
TEST_F(SchedBench, KickSchedulesLikeDoorbell) {
  SRNIC_BENCH_TRACE();
  start(2);
  for (int i = 0; i < kQps / 8 + 2 && !dut->done_ready; ++i) step(false, 0, false, 0, false, false, 0, 0);
  ASSERT_TRUE(dut->done_ready) << "reset sweep did not finish";
  const int a = kQps - 1, b = int(rng.below(kQps - 1));
  int lat[2] = {-1, -1};
  for (int way = 0; way < 2; ++way) {  // 0: doorbell for a, 1: kick for b
    const int q = way ? b : a;
    if (way) {
      kick_hold = true;
      kick_q = b;
      dut->kick_valid = 1;
      dut->kick_qpn = uint32_t(b);
      dut->db_valid = 0;
      dut.eval();
      ASSERT_TRUE(dut->kick_ready) << "kick not taken by an empty doorbell FIFO";
      step(false, 0, false, 0, false, false, 0, 0);
      ASSERT_FALSE(kick_hold);
    } else {
      step(true, a, false, 0, false, false, 0, 0);
    }
    for (int i = 1; i < 10 && lat[way] < 0; ++i) {
      dut.eval();
      if (dut->m_valid) lat[way] = i;
      else step(false, 0, false, 0, false, false, 0, 0);
    }
    ASSERT_GE(lat[way], 0) << (way ? "kick" : "doorbell") << " never scheduled the QP";
    EXPECT_EQ(int(dut->m_qpn), q);
    step(false, 0, false, 0, false, true, 0, 0);  // turn starts
    turns[size_t(q)].left = 1000000;              // held until the bench ends it
    ASSERT_FALSE(dut->m_valid);
  }
  EXPECT_EQ(lat[1], lat[0]) << "a kick takes as long as a doorbell to schedule its QP";
  // kick b while its turn is in flight: not handed out, queued again at the turn end
  kick_hold = true;
  kick_q = b;
  for (int i = 0; i < 6; ++i) step(false, 0, false, 0, false, true, 0, 0);
  EXPECT_FALSE(kick_hold) << "kick not taken";
  EXPECT_FALSE(dut->m_valid) << "QP handed out while its turn is in flight";
  turns[size_t(a)].left = turns[size_t(b)].left = 0;
  step(false, 0, true, a, false, false, 0, 0);  // a ends without more work: inactive
  step(false, 0, true, b, false, false, 0, 0);  // b ends without more work, but was kicked
  step(false, 0, false, 0, false, false, 0, 0);
  dut.eval();
  ASSERT_TRUE(dut->m_valid) << "kick during the turn lost";
  EXPECT_EQ(int(dut->m_qpn), b);
  drain();
  EXPECT_EQ(n_turns[size_t(a)], 1u);
  EXPECT_EQ(n_turns[size_t(b)], 2u);
}

// A kick waits while a doorbell is presented (doorbells every cycle for a while: kick_ready
// low all along), then goes in the first cycle without one.
TEST_F(SchedBench, KickWaitsForDoorbells) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 16));
  for (int i = 0; i < kQps / 8 + 2 && !dut->done_ready; ++i) step(false, 0, false, 0, false, false, 0, 0);
  ASSERT_TRUE(dut->done_ready);
  const int kq = hot[0];
  kick_hold = true;
  kick_q = kq;
  const int n = int(rng.range(5, 40));
  for (int i = 0; i < n && !HasFatalFailure(); ++i) {
    step(true, hot[rng.below(hot.size())], false, 0, false, false, 0, 0);  // no turn starts: the FIFO drains
    ASSERT_TRUE(kick_hold) << "kick taken in a cycle with a doorbell (cycle " << i << ")";
  }
  EXPECT_EQ(kick_wait_db, uint64_t(n));
  EXPECT_EQ(overflows, 0u);
  step(false, 0, false, 0, false, false, 0, 0);
  EXPECT_FALSE(kick_hold) << "kick not taken in the first cycle without a doorbell";
  EXPECT_EQ(kicks, 1u);
  drain();
}

// The doorbell FIFO keeps its last slot for a doorbell the register block has already
// accepted: while events wait (the reset sweep) doorbells fill it up to that slot, a kick
// then waits, and a doorbell arriving afterwards still finds room (no overflow). The kick
// goes in once the FIFO has drained below the reserve, and schedules its QP.
TEST_F(SchedBench, KickRespectsDoorbellReserve) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 16));
  ASSERT_GE(kQps / 8, kDbDepth + 3) << "the reset sweep is too short for this test";
  for (int i = 0; i < kDbDepth - 1; ++i) step(true, hot[size_t(i) % hot.size()], false, 0, false, false, 0, 0);
  dut.eval();
  ASSERT_FALSE(dut->done_ready) << "the sweep ended before the FIFO was filled";
  EXPECT_FALSE(dut->db_room);
  kick_hold = true;
  kick_q = hot.back();
  for (int i = 0; i < kDbDepth - 1; ++i)
    if (kick_q == hot[size_t(i) % hot.size()] || kick_q == hot[0]) {  // a QP without a doorbell
      kick_q = (kick_q + 1) % kQps;
      i = -1;
    }
  for (int i = 0; i < 2; ++i) step(false, 0, false, 0, false, false, 0, 0);
  EXPECT_TRUE(kick_hold) << "kick took the doorbells' reserve slot";
  EXPECT_EQ(kick_wait_reserve, 2u);
  dut.eval();
  ASSERT_FALSE(dut->done_ready);
  dut->db_valid = 1;
  dut->db_qpn = uint32_t(hot[0]);
  dut.eval();
  EXPECT_FALSE(dut->db_overflow) << "the doorbell on its way found the FIFO full";
  step(true, hot[0], false, 0, false, false, 0, 0);
  EXPECT_EQ(overflows, 0u);
  EXPECT_EQ(model.dbq.size(), kDbDepth);
  for (int i = 0; i < kQps / 8 + 4 * kDbDepth + 10 && kick_hold && !HasFatalFailure(); ++i)
    step(false, 0, false, 0, false, false, 0, 0);
  EXPECT_FALSE(kick_hold) << "kick never taken after the FIFO drained";
  drain();
  EXPECT_EQ(n_turns[size_t(kick_q)], 1u);
}

}  // namespace
}  // namespace srnic::verif::blocks
