// Component tree and Phaser: paths, lookup, phase order, objections, drain, watchdog, stop.
#include "srnic/uvm/phaser.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace srnic::verif::uvm {
namespace {

using Trace = std::vector<std::string>;

// Records every phase hook as "<name>.<hook>".
class Rec : public Component {
 public:
  Rec(Component& parent, std::string name, Trace& t) : Component(parent, std::move(name)), t_(t) {}
  Rec(Context& ctx, std::string name, Trace& t) : Component(ctx, std::move(name)), t_(t) {}
  std::function<void(Rec&)> on_build, on_start, on_tick;

 protected:
  void build() override {
    t_.push_back(name() + ".build");
    if (on_build) on_build(*this);
  }
  void connect() override { t_.push_back(name() + ".connect"); }
  void start_of_run() override {
    t_.push_back(name() + ".start");
    if (on_start) on_start(*this);
  }
  void tick() override {
    if (trace_cycles) t_.push_back(name() + ".tick");
    if (on_tick) on_tick(*this);
  }
  void sample() override {
    if (trace_cycles) t_.push_back(name() + ".sample");
  }
  void end_of_run() override { t_.push_back(name() + ".end"); }
  void check() override { t_.push_back(name() + ".check"); }
  void report() override { t_.push_back(name() + ".report"); }

 public:
  bool trace_cycles = false;

 private:
  Trace& t_;
};

Trace filter(const Trace& t, const std::string& hook) {
  Trace out;
  for (const auto& s : t) {
    if (s.size() > hook.size() && s.compare(s.size() - hook.size(), hook.size(), hook) == 0) {
      out.push_back(s.substr(0, s.size() - hook.size() - 1));
    }
  }
  return out;
}

struct Fixture : ::testing::Test {
  std::ostringstream out;
  Context ctx{1, out};
  Trace t;
};

using Tree = Fixture;

TEST_F(Tree, PathsLookupAndNameRules) {
  Rec top(ctx, "top", t);
  Rec a(top, "a", t);
  Rec a1(a, "a1", t);
  EXPECT_EQ(a1.path(), "top.a.a1");
  EXPECT_EQ(a1.parent(), &a);
  EXPECT_EQ(top.find("a.a1"), &a1);
  EXPECT_EQ(top.find(""), &top);
  EXPECT_EQ(top.find("a.nope"), nullptr);
  EXPECT_EQ(ctx.find("top.a"), &a);
  EXPECT_EQ(ctx.find("top"), &top);
  EXPECT_EQ(ctx.find("other.a"), nullptr);
  EXPECT_THROW(Rec(top, "a", t), std::invalid_argument);
  EXPECT_THROW(Rec(top, "x.y", t), std::invalid_argument);
  EXPECT_THROW(Rec(top, "", t), std::invalid_argument);
  {
    Rec tmp(top, "tmp", t);
    EXPECT_EQ(top.children().size(), 2u);
  }
  EXPECT_EQ(top.children().size(), 1u);  // a destroyed child leaves the tree
}

TEST_F(Tree, ComponentStreamsFollowSeedAndPath) {
  std::ostringstream o2, o3;
  Context same(1, o2), other(2, o3);
  Rec x(ctx, "env", t), y(same, "env", t), z(other, "env", t);
  Rec xa(x, "a", t), ya(y, "a", t), xb(x, "b", t);
  const uint64_t v = xa.rng().next_u64();
  EXPECT_EQ(v, ya.rng().next_u64());
  EXPECT_NE(v, xb.rng().next_u64());
  EXPECT_NE(x.rng().next_u64(), z.rng().next_u64());
}

using Phases = Fixture;

TEST_F(Phases, UvmOrderTopDownAndBottomUp) {
  Rec top(ctx, "top", t);
  Rec a(top, "a", t);
  // b and a's child a1 are created during build, as UVM builds do.
  top.on_build = [&](Rec& self) { self.create<Rec>("b", t); };
  a.on_build = [&](Rec& self) { self.create<Rec>("a1", t); };
  Phaser ph(top);
  ph.set_drain_cycles(0);
  ph.run_all();
  EXPECT_EQ(filter(t, "build"), (Trace{"top", "a", "a1", "b"}));
  EXPECT_EQ(filter(t, "connect"), (Trace{"a1", "a", "b", "top"}));
  EXPECT_EQ(filter(t, "start"), (Trace{"top", "a", "a1", "b"}));
  EXPECT_EQ(filter(t, "end"), (Trace{"a1", "a", "b", "top"}));
  EXPECT_EQ(filter(t, "check"), (Trace{"a1", "a", "b", "top"}));
  EXPECT_EQ(filter(t, "report"), (Trace{"a1", "a", "b", "top"}));
  // Whole phases, not interleaved: every connect after every build, etc.
  const auto pos = [&](const std::string& s) { return std::find(t.begin(), t.end(), s) - t.begin(); };
  EXPECT_LT(pos("b.build"), pos("a1.connect"));
  EXPECT_LT(pos("top.connect"), pos("top.start"));
  EXPECT_LT(pos("top.end"), pos("a1.check"));
  EXPECT_LT(pos("top.check"), pos("a1.report"));
  EXPECT_EQ(ctx.phase(), Phase::Done);
  EXPECT_THROW(Rec(top, "late", t), std::logic_error);  // no components after build
}

TEST_F(Phases, CycleOrderTickSettleSampleEdge) {
  Rec top(ctx, "top", t);
  Rec a(top, "a", t);
  top.trace_cycles = a.trace_cycles = true;
  top.on_start = [](Rec& self) { self.raise_objection(); };
  top.on_tick = [](Rec& self) {
    if (self.cycle() == 1) self.drop_objection();
  };
  Phaser ph(top);
  ph.set_settle([&] { t.push_back("settle"); });
  ph.set_edge([&] { t.push_back("edge@" + std::to_string(ctx.cycle())); });
  ph.build();
  ph.connect();
  t.clear();
  ph.run();
  EXPECT_EQ(t, (Trace{"top.start", "a.start",                                              //
                      "top.tick", "a.tick", "settle", "top.sample", "a.sample", "edge@0",  //
                      "top.tick", "a.tick", "settle", "top.sample", "a.sample", "edge@1",  //
                      "a.end", "top.end"}));
  EXPECT_EQ(ph.run_cycles(), 2u);
  EXPECT_EQ(ph.run_end(), Phaser::RunEnd::Objections);
}

TEST_F(Phases, DrainTimeCountsFromTheLastDropAndRestartsOnRaise) {
  Rec top(ctx, "top", t);
  Rec a(top, "a", t);
  a.on_start = [](Rec& self) { self.raise_objection(2); };
  a.on_tick = [](Rec& self) {
    if (self.cycle() == 10) self.drop_objection(2);
    if (self.cycle() == 13) self.raise_objection();  // during the drain: the run goes on
    if (self.cycle() == 20) self.drop_objection();
  };
  Phaser ph(top);
  ph.set_drain_cycles(5);
  ph.build();
  ph.connect();
  ph.run();
  // Last drop in cycle 20; cycles 21..25 drain; the run ends after 26 cycles.
  EXPECT_EQ(ph.run_cycles(), 26u);
  EXPECT_EQ(ctx.cycle(), 26u);
  EXPECT_EQ(ph.run_end(), Phaser::RunEnd::Objections);
  EXPECT_EQ(ctx.objections(), 0u);
  EXPECT_EQ(ctx.reports().failures(), 0u);
}

TEST_F(Phases, DrainWithoutReraise) {
  Rec top(ctx, "top", t);
  top.on_start = [](Rec& self) { self.raise_objection(); };
  top.on_tick = [](Rec& self) {
    if (self.cycle() == 10) self.drop_objection();
  };
  Phaser ph(top);
  ph.set_drain_cycles(5);
  ph.run_all();
  EXPECT_EQ(ph.run_cycles(), 16u);
}

TEST_F(Phases, NoObjectionRunsOneCyclePlusDrain) {
  Rec top(ctx, "top", t);
  Phaser ph(top);
  ph.set_drain_cycles(3);
  ph.run_all();
  EXPECT_EQ(ph.run_cycles(), 4u);
}

TEST_F(Phases, WatchdogEndsRunWithErrorNamingObjectors) {
  Rec top(ctx, "top", t);
  Rec a(top, "a", t);
  a.on_start = [](Rec& self) { self.raise_objection(); };
  Phaser ph(top);
  ph.set_watchdog_cycles(50);
  ph.run_all();
  EXPECT_EQ(ph.run_end(), Phaser::RunEnd::Watchdog);
  EXPECT_EQ(ph.run_cycles(), 50u);
  EXPECT_EQ(ctx.reports().count_id("WATCHDOG"), 1u);
  EXPECT_NE(out.str().find("objections held by: top.a(1)"), std::string::npos);
  EXPECT_EQ(filter(t, "check").size(), 2u);  // checks still run
}

TEST_F(Phases, ErrorLimitStopsTheRunButChecksStillRun) {
  Rec top(ctx, "top", t);
  top.on_start = [](Rec& self) { self.raise_objection(); };
  top.on_tick = [](Rec& self) {
    if (self.cycle() >= 5) self.error("BAD", "cycle " + std::to_string(self.cycle()));
  };
  ctx.reports().set_error_limit(3);
  Phaser ph(top);
  ph.run_all();
  EXPECT_EQ(ph.run_end(), Phaser::RunEnd::Stopped);
  EXPECT_EQ(ph.run_cycles(), 8u);  // errors in cycles 5, 6, 7; the run stops after cycle 7
  EXPECT_EQ(ctx.reports().count(Severity::Error), 3u);
  EXPECT_EQ(filter(t, "check"), Trace{"top"});
  EXPECT_EQ(filter(t, "report"), Trace{"top"});
}

TEST_F(Phases, DroppingTooManyObjectionsIsAnError) {
  Rec top(ctx, "top", t);
  top.raise_objection();
  top.drop_objection(2);
  EXPECT_EQ(ctx.reports().count_id("OBJECTION"), 1u);
  EXPECT_EQ(top.objection_count(), 0u);
  EXPECT_EQ(ctx.objections(), 0u);
}

TEST_F(Phases, FatalPropagatesOutOfRun) {
  Rec top(ctx, "top", t);
  top.on_start = [](Rec& self) { self.raise_objection(); };
  top.on_tick = [](Rec& self) {
    if (self.cycle() == 3) self.fatal("DEAD", "gone");
  };
  Phaser ph(top);
  EXPECT_THROW(ph.run_all(), FatalError);
  EXPECT_EQ(ctx.cycle(), 3u);
  EXPECT_TRUE(filter(t, "check").empty());
}

}  // namespace
}  // namespace srnic::verif::uvm
