// Sequences, sequencer arbitration, driver timing, monitor and scoreboard.
#include "srnic/uvm/monitor.hpp"
#include "srnic/uvm/phaser.hpp"
#include "srnic/uvm/scoreboard.hpp"
#include "srnic/uvm/sequence.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace srnic::verif::uvm {
namespace {

struct Item {
  std::string tag;  // sequence name + index, e.g. "A0"
  int value = 0;
  int rsp = 0;
};

// Yields `n` items "<name><i>", waiting until cycle `from` before the first.
class CountSeq : public Sequence<Item> {
 public:
  CountSeq(std::string name, int n, uint64_t from = 0) : Sequence(std::move(name)), n_(n), from_(from) {}
  Next next(Item& item) override {
    if (i_ == n_) return Next::Done;
    if (sequencer()->cycle() < from_) return Next::Wait;
    item.tag = name() + std::to_string(i_);
    item.value = static_cast<int>(rng().uniform(0, 1000));
    ++i_;
    return Next::Item;
  }
  void item_done(const Item& item) override { responses.push_back(item.rsp); }
  void finished() override { finished_at = static_cast<int64_t>(sequencer()->cycle()); }
  std::vector<int> responses;
  int64_t finished_at = -1;

 private:
  int n_;
  uint64_t from_;
  int i_ = 0;
};

// Takes `cycles_per_item` cycles per item and answers value + 1.
class Drv : public Driver<Item> {
 public:
  Drv(Component& p, std::string n, int cycles_per_item)
      : Driver(p, std::move(n)), cpi_(cycles_per_item) {}
  std::vector<std::string> order;
  std::vector<uint64_t> done_cycle;

 protected:
  bool drive(Item& item) override {
    if (++spent_ < cpi_) return false;
    spent_ = 0;
    item.rsp = item.value + 1;
    order.push_back(item.tag);
    done_cycle.push_back(cycle());
    return true;
  }

 private:
  int cpi_;
  int spent_ = 0;
};

struct Env : Component {
  Env(Context& ctx, int cpi) : Component(ctx, "env"), seqr(*this, "seqr"), drv(*this, "drv", cpi) {}
  void connect() override { drv.connect_sequencer(seqr); }
  Sequencer<Item> seqr;
  Drv drv;
};

struct SeqFixture : ::testing::Test {
  std::ostringstream out;
  Context ctx{11, out};
};

std::vector<std::string> run_with(Context& ctx, Arbitration arb, std::vector<CountSeq*> seqs,
                                  int cpi = 1) {
  Env env(ctx, cpi);
  env.seqr.set_arbitration(arb);
  Phaser ph(env);
  ph.build();
  ph.connect();
  for (CountSeq* s : seqs) env.seqr.start(*s);
  ph.run();
  ph.check();
  return env.drv.order;
}

using SeqTest = SeqFixture;

TEST_F(SeqTest, FifoGrantsTheEarliestSequenceUntilItIsDone) {
  CountSeq a("A", 3), b("B", 2);
  EXPECT_EQ(run_with(ctx, Arbitration::Fifo, {&a, &b}),
            (std::vector<std::string>{"A0", "A1", "A2", "B0", "B1"}));
  EXPECT_EQ(ctx.reports().failures(), 0u);
}

TEST_F(SeqTest, RoundRobinRotatesAndSkipsFinishedSequences) {
  CountSeq a("A", 1), b("B", 3), c("C", 2);
  EXPECT_EQ(run_with(ctx, Arbitration::RoundRobin, {&a, &b, &c}),
            (std::vector<std::string>{"A0", "B0", "C0", "B1", "C1", "B2"}));
}

TEST_F(SeqTest, WaitingSequenceIsPassedOver) {
  CountSeq a("A", 2, /*from=*/3), b("B", 2);
  // A waits until cycle 3, B fills cycles 0 and 1, nothing in cycle 2, then A.
  EXPECT_EQ(run_with(ctx, Arbitration::Fifo, {&a, &b}),
            (std::vector<std::string>{"B0", "B1", "A0", "A1"}));
}

TEST_F(SeqTest, WeightedFollowsPriorities) {
  CountSeq a("A", 4000), b("B", 4000);
  a.set_priority(300);
  b.set_priority(100);
  const auto order = run_with(ctx, Arbitration::Weighted, {&a, &b});
  int a_first = 0;
  for (size_t i = 0; i < 2000; ++i) a_first += order[i][0] == 'A';
  EXPECT_NEAR(a_first / 2000.0, 0.75, 0.04);
  std::ostringstream o2;
  Context again(11, o2);
  CountSeq a2("A", 4000), b2("B", 4000);
  a2.set_priority(300);
  b2.set_priority(100);
  EXPECT_EQ(run_with(again, Arbitration::Weighted, {&a2, &b2}), order);  // same seed, same run
}

TEST_F(SeqTest, ItemTimingResponsesAndObjectionsEndTheRun) {
  CountSeq a("A", 4);
  Env env(ctx, 3);
  Phaser ph(env);
  ph.build();
  ph.connect();
  env.seqr.start(a);
  EXPECT_EQ(ctx.objections(), 1u);
  ph.run();
  // Items take cycles 0-2, 3-5, 6-8, 9-11; A reports Done when polled in cycle 12.
  EXPECT_EQ(env.drv.done_cycle, (std::vector<uint64_t>{2, 5, 8, 11}));
  EXPECT_EQ(a.finished_at, 12);
  EXPECT_EQ(ph.run_cycles(), 13u);
  EXPECT_TRUE(a.done());
  EXPECT_EQ(a.items_granted(), 4u);
  ASSERT_EQ(a.responses.size(), 4u);
  EXPECT_EQ(env.drv.items_driven(), 4u);
  EXPECT_EQ(ctx.objections(), 0u);
}

TEST_F(SeqTest, SequenceStreamsAreDeterministicAndDistinctPerStart) {
  CountSeq a("S", 5), b("S", 5);  // same name, two starts
  Env env(ctx, 1);
  Phaser ph(env);
  ph.build();
  ph.connect();
  env.seqr.start(a);
  env.seqr.start(b);
  ph.run();
  std::vector<int> first, second;
  std::ostringstream o2;
  Context again(11, o2);
  CountSeq a2("S", 5), b2("S", 5);
  Env env2(again, 1);
  Phaser ph2(env2);
  ph2.build();
  ph2.connect();
  env2.seqr.start(a2);
  env2.seqr.start(b2);
  ph2.run();
  EXPECT_EQ(a.responses, a2.responses);
  EXPECT_EQ(b.responses, b2.responses);
  EXPECT_NE(a.responses, b.responses);
}

TEST_F(SeqTest, ProtocolErrorsAreReported) {
  Env env(ctx, 1);
  Item it;
  env.seqr.item_done(it);
  EXPECT_EQ(ctx.reports().count_id("SEQ_PROTOCOL"), 1u);
  CountSeq a("A", 2);
  env.seqr.start(a, /*object=*/false);
  env.seqr.start(a);
  EXPECT_EQ(ctx.reports().count_id("SEQ_START"), 1u);
  ASSERT_TRUE(env.seqr.try_next_item(it));
  EXPECT_FALSE(env.seqr.try_next_item(it));  // one item outstanding at a time
  EXPECT_EQ(ctx.reports().count_id("SEQ_PROTOCOL"), 2u);
}

// ---- Monitor and scoreboard ---------------------------------------------------------------

struct Pkt {
  std::vector<int> beats;
  bool operator==(const Pkt& o) const { return beats == o.beats; }
};
std::ostream& operator<<(std::ostream& os, const Pkt& p) {
  os << "pkt{";
  for (size_t i = 0; i < p.beats.size(); ++i) os << (i ? "," : "") << p.beats[i];
  return os << "}";
}

// Watches a fake bus: a beat every cycle from `wire`, `last` ends a packet.
class PktMon : public Monitor<Pkt> {
 public:
  PktMon(Component& p, std::string n, const int* wire, const bool* last, const bool* valid)
      : Monitor(p, std::move(n)), wire_(wire), last_(last), valid_(valid) {}

 protected:
  void sample() override {
    if (!*valid_) return;
    if (!in_transaction()) {
      begin_transaction();
      cur_.beats.clear();
    }
    cur_.beats.push_back(*wire_);
    if (*last_) publish(cur_);
  }

 private:
  const int* wire_;
  const bool* last_;
  const bool* valid_;
  Pkt cur_;
};

struct PktEnv : Component {
  // Stimulus: (value, last) per cycle; valid while the script lasts.
  PktEnv(Context& ctx, std::vector<std::pair<int, bool>> script)
      : Component(ctx, "env"), script_(std::move(script)), mon(*this, "mon", &wire, &last, &valid),
        sb(*this, "sb") {}
  void connect() override { mon.ap.connect(sb.actual); }
  void start_of_run() override { raise_objection(); }
  void tick() override {
    valid = cycle() < script_.size();
    if (valid) {
      wire = script_[cycle()].first;
      last = script_[cycle()].second;
    } else if (objection_count()) {
      drop_objection();
    }
  }
  std::vector<std::pair<int, bool>> script_;
  int wire = 0;
  bool last = false, valid = false;
  PktMon mon;
  Scoreboard<Pkt> sb;
};

TEST_F(SeqTest, MonitorPublishesWholeTransactionsScoreboardMatches) {
  PktEnv env(ctx, {{1, false}, {2, true}, {3, true}, {4, false}, {5, false}, {6, true}});
  env.sb.expected.write(Pkt{{1, 2}});
  env.sb.expected.write(Pkt{{3}});
  env.sb.expected.write(Pkt{{4, 5, 6}});
  Phaser ph(env);
  ph.run_all();
  EXPECT_EQ(env.mon.published(), 3u);
  EXPECT_EQ(env.sb.matched(), 3u);
  EXPECT_EQ(env.sb.mismatched(), 0u);
  EXPECT_EQ(ctx.reports().failures(), 0u);
}

TEST_F(SeqTest, ScoreboardReportsFirstMismatchAndLeftovers) {
  PktEnv env(ctx, {{1, true}, {2, false}, {9, true}, {3, false}});  // last packet never ends
  env.sb.expected.write(Pkt{{1}});
  env.sb.expected.write(Pkt{{2, 3}});
  env.sb.expected.write(Pkt{{7}});
  Phaser ph(env);
  ph.run_all();
  EXPECT_EQ(env.sb.matched(), 1u);
  EXPECT_EQ(env.sb.mismatched(), 1u);
  EXPECT_EQ(env.sb.first_mismatch(), "item #1: expected pkt{2,3}, got pkt{2,9}");
  EXPECT_EQ(ctx.reports().count_id("SB_MISMATCH"), 1u);
  EXPECT_EQ(ctx.reports().count_id("SB_MISSING"), 1u);  // pkt{7} never seen
  EXPECT_EQ(ctx.reports().count_id("MON_PARTIAL"), 1u);  // beat 3 without its last
}

}  // namespace
}  // namespace srnic::verif::uvm
