// srnic_sched bench: random doorbells, turn hand-outs (m_ready) and turn ends (done_more)
// against a cycle-exact C++ model (doorbell FIFO, ready queue, active/pending bits, the
// post-reset sweep), comparing m_valid, m_qpn, done_ready and db_overflow every cycle. Independently of the model, the
// RTL outputs must keep the scheduler's promises: a QP is never handed out while its turn
// is in flight, never gets more turns than doorbells plus "more" turn ends, and once the
// traffic stops, every QP that got an accepted doorbell at or after the start of its last
// turn (or ended a turn with more work) is handed out again.
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
  bool done_ready() const { return init_left == 0; }
  void edge(bool db, int db_q, bool done, int done_q, bool more, bool m_ready) {
    const bool init = init_left > 0;
    const bool pop = rq.size() > 0 && m_ready;
    const bool ev_done = done && !init;
    const bool ev_db = dbq.size() > 0 && !init && !done;
    const bool db_accept = db && !dbq.full();
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

  void run(int cycles, int hot_n, unsigned p_db, unsigned p_ready, int max_turn, unsigned p_more) {
    for (int i = 0; i < cycles; ++i) {
      if (rng.percent(2)) hot_n = int(rng.range(1, hot.size()));
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
    dut.eval();
    const uint64_t c = dut.cycle();
    ASSERT_EQ(bool(dut->done_ready), model.done_ready()) << "cycle " << c;
    if (!dut->done_ready) done = false;  // the turn end waits; the bench retries it
    ASSERT_EQ(bool(dut->db_overflow), model.overflow(db)) << "cycle " << c;
    ASSERT_EQ(bool(dut->db_room), int(model.dbq.size()) < kDbDepth - 1) << "cycle " << c << ": doorbell room";
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
    model.edge(db, db_q, bool(dut->done_valid), done_q, more, m_ready);
    dut.tick();
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
      idle = (total_turns == before && in_turn.empty() && !dut->m_valid) ? idle + 1 : 0;
    }
    ASSERT_TRUE(in_turn.empty());
    ASSERT_FALSE(dut->m_valid);
    for (size_t q = 0; q < size_t(kQps); ++q) {
      EXPECT_LT(last_db[q], last_turn[q]) << "QP " << q << ": doorbell at cycle " << last_db[q]
                                          << " lost (last turn started at cycle " << last_turn[q] << ")";
      EXPECT_EQ(owed_more[q], 0) << "QP " << q << ": turn ended with more work, no new turn";
    }
  }

  void start(size_t n_hot) {
    dut->db_valid = dut->done_valid = dut->m_ready = 0;  // inputs start random
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
        int(rng.range(0, 12)), unsigned(rng.range(0, 40)));
  if (HasFatalFailure()) return;
  drain();
  EXPECT_EQ(model.dups, 0);
  EXPECT_GT(total_turns, 2000u);
  EXPECT_GT(dut.cycle(), 300000u);
  EXPECT_GT(overflows, 0u) << "doorbell FIFO never filled";
  EXPECT_FALSE(dut.rtl_error()) << "RTL $error fired";
}

TEST_F(SchedBench, RandomManyQps) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 64));
  for (int phase = 0; phase < 60 && !HasFatalFailure(); ++phase)
    run(3000, int(hot.size()), unsigned(rng.range(10, 50)), unsigned(rng.range(30, 100)),
        int(rng.range(0, 30)), unsigned(rng.range(0, 30)));
  if (HasFatalFailure()) return;
  drain();
  EXPECT_EQ(model.dups, 0);
  EXPECT_GT(total_turns, 1000u);
  EXPECT_FALSE(dut.rtl_error()) << "RTL $error fired";
}

TEST_F(SchedBench, ResetClearsState) {
  SRNIC_BENCH_TRACE();
  start(std::min(kQps, 8));
  run(500, int(hot.size()), 40, 60, 5, 20);
  if (HasFatalFailure()) return;
  // Reset drops every queued QP and turn; the bench forgets its turns too.
  dut.reset();
  model.reset();
  for (int t : in_turn) turns[size_t(t)].left = -1;
  in_turn.clear();
  std::fill(last_db.begin(), last_db.end(), -2);
  std::fill(owed_more.begin(), owed_more.end(), 0);
  dut.eval();
  EXPECT_FALSE(dut->m_valid);
  run(2000, int(hot.size()), 30, 60, 5, 20);
  if (HasFatalFailure()) return;
  drain();
  EXPECT_FALSE(dut.rtl_error()) << "RTL $error fired";
}

}  // namespace
}  // namespace srnic::verif::blocks
