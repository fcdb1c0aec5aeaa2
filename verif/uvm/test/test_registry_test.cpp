// TestRegistry: seed first, reproduce line last, exit codes, FATAL handling, command line.
#include "srnic/uvm/test.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace srnic::verif::uvm {
namespace {

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) v.push_back(l);
  return v;
}

// Runs for `cycles` cycles; reports `errors` errors and optionally a FATAL at cycle 2.
class Scripted : public Test {
 public:
  Scripted(Context& ctx, int cycles, int errors, bool fatal)
      : Test(ctx), cycles_(cycles), errors_(errors), fatal_(fatal) {}
  bool checked = false;
  static inline uint64_t last_draw = 0;

 protected:
  void configure(Phaser& ph) override { ph.set_drain_cycles(2); }
  void start_of_run() override {
    raise_objection();
    last_draw = rng().next_u64();
  }
  void tick() override {
    if (fatal_ && cycle() == 2) fatal("BOOM", "fatal in tick");
    if (static_cast<int>(cycle()) < errors_) error("ERR", "error " + std::to_string(cycle()));
    if (static_cast<int>(cycle()) == cycles_ - 1) drop_objection();
  }
  void check() override { info("CHECKED", "check phase ran"); }

 private:
  int cycles_, errors_;
  bool fatal_;
};

TestRegistry make_registry() {
  TestRegistry r;
  r.add("pass", [](Context& c) { return std::make_unique<Scripted>(c, 5, 0, false); }, "passes");
  r.add("fail", [](Context& c) { return std::make_unique<Scripted>(c, 5, 2, false); });
  r.add("fatal", [](Context& c) { return std::make_unique<Scripted>(c, 5, 0, true); });
  r.add("many", [](Context& c) { return std::make_unique<Scripted>(c, 100, 100, false); });
  return r;
}

TEST(TestRegistry, PassingRunPrintsSeedFirstReproduceLast) {
  const TestRegistry r = make_registry();
  std::ostringstream out;
  RunOptions o;
  o.program = "./bench";
  o.out = &out;
  EXPECT_EQ(r.run("pass", 42, o), 0);
  const auto l = lines(out.str());
  ASSERT_GE(l.size(), 3u);
  EXPECT_EQ(l.front(), "SEED 42  test pass");
  EXPECT_EQ(l.back(), "reproduce: ./bench --test pass --seed 42");
  EXPECT_NE(out.str().find("TEST PASSED: pass"), std::string::npos);
  EXPECT_NE(out.str().find("objections dropped after 7 cycles"), std::string::npos);  // 5 + drain 2
  EXPECT_NE(out.str().find("[CHECKED] check phase ran"), std::string::npos);
  const uint64_t draw = Scripted::last_draw;
  std::ostringstream again;
  o.out = &again;
  r.run("pass", 42, o);
  EXPECT_EQ(Scripted::last_draw, draw);  // same seed, same stream
  r.run("pass", 43, o);
  EXPECT_NE(Scripted::last_draw, draw);
}

TEST(TestRegistry, ErrorsFailTheTestAndTheSummaryCountsThem) {
  const TestRegistry r = make_registry();
  std::ostringstream out;
  RunOptions o;
  o.out = &out;
  EXPECT_EQ(r.run("fail", 7, o), 1);
  EXPECT_NE(out.str().find("TEST FAILED: fail (2 errors"), std::string::npos);
  EXPECT_NE(out.str().find("[ERR] 2"), std::string::npos);
  EXPECT_EQ(lines(out.str()).back(), "reproduce: uvm_test --test fail --seed 7");
}

TEST(TestRegistry, FatalEndsCleanlyWithSummaryAndReproduce) {
  const TestRegistry r = make_registry();
  std::ostringstream out;
  RunOptions o;
  o.out = &out;
  EXPECT_EQ(r.run("fatal", 3, o), 1);
  const std::string s = out.str();
  EXPECT_NE(s.find("[BOOM] fatal in tick"), std::string::npos);
  EXPECT_NE(s.find("--- report summary ---"), std::string::npos);
  EXPECT_NE(s.find("ended by FATAL at cycle 2"), std::string::npos);
  EXPECT_EQ(s.find("[CHECKED]"), std::string::npos);  // no phases after a FATAL
  EXPECT_EQ(lines(s).back(), "reproduce: uvm_test --test fatal --seed 3");
}

TEST(TestRegistry, ErrorLimitStopsEarlyAndIsReproduced) {
  const TestRegistry r = make_registry();
  std::ostringstream out;
  RunOptions o;
  o.out = &out;
  o.error_limit = 4;
  EXPECT_EQ(r.run("many", 1, o), 1);
  EXPECT_NE(out.str().find("TEST FAILED: many (4 errors"), std::string::npos);
  EXPECT_NE(out.str().find("stop requested after 4 cycles"), std::string::npos);
  EXPECT_EQ(lines(out.str()).back(), "reproduce: uvm_test --test many --seed 1 --error-limit 4");
}

TEST(TestRegistry, UnknownTestFailsAndListsTests) {
  const TestRegistry r = make_registry();
  std::ostringstream out;
  RunOptions o;
  o.out = &out;
  EXPECT_EQ(r.run("nope", 1, o), 1);
  EXPECT_NE(out.str().find("pass  - passes"), std::string::npos);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"fail", "fatal", "many", "pass"}));
  TestRegistry dup;
  dup.add("x", [](Context& c) { return std::make_unique<srnic::verif::uvm::Test>(c); });
  EXPECT_THROW(dup.add("x", [](Context& c) { return std::make_unique<srnic::verif::uvm::Test>(c); }),
               std::invalid_argument);
}

TEST(TestRegistry, CommandLine) {
  const TestRegistry r = make_registry();
  const char* ok[] = {"prog", "--test", "pass", "--seed", "9", "--verbosity", "high"};
  testing::internal::CaptureStdout();
  EXPECT_EQ(r.main(7, const_cast<char**>(ok)), 0);
  std::string s = testing::internal::GetCapturedStdout();
  EXPECT_EQ(lines(s).front(), "SEED 9  test pass");
  EXPECT_EQ(lines(s).back(), "reproduce: prog --test pass --seed 9 --verbosity HIGH");

  const char* bad[] = {"prog", "--test", "fail", "--seed", "9"};
  testing::internal::CaptureStdout();
  EXPECT_EQ(r.main(5, const_cast<char**>(bad)), 1);
  testing::internal::GetCapturedStdout();

  const char* noseed[] = {"prog", "--test", "pass", "--verbosity-at", "test=LOW"};
  testing::internal::CaptureStdout();
  EXPECT_EQ(r.main(5, const_cast<char**>(noseed)), 0);
  s = testing::internal::GetCapturedStdout();
  EXPECT_EQ(s.rfind("SEED ", 0), 0u);  // a drawn seed is still printed first
  EXPECT_NE(lines(s).back().find("--verbosity-at test=LOW"), std::string::npos);
  EXPECT_EQ(s.find("[CHECKED]"), std::string::npos);  // MEDIUM info filtered at LOW

  // Plusargs reach the Context and the reproduce command; CLI11 never sees them.
  const char* plus[] = {"prog", "+waves=a.fst", "--test", "plus", "--seed", "3", "+flag", "+n=0x10"};
  TestRegistry r2 = make_registry();
  std::string got_waves, got_flag;
  uint64_t got_n = 0;
  r2.add("plus", [&](Context& c) {
    got_waves = c.plusarg("waves");
    got_flag = c.has_plusarg("flag") ? "yes" : "no";
    got_n = c.plusarg_u64("n", 0);
    EXPECT_EQ(c.plusarg_u64("absent", 7), 7u);
    EXPECT_EQ(c.plusarg("absent", "d"), "d");
    return std::make_unique<Scripted>(c, 3, 0, false);
  });
  testing::internal::CaptureStdout();
  EXPECT_EQ(r2.main(8, const_cast<char**>(plus)), 0);
  s = testing::internal::GetCapturedStdout();
  EXPECT_EQ(got_waves, "a.fst");
  EXPECT_EQ(got_flag, "yes");
  EXPECT_EQ(got_n, 16u);
  EXPECT_EQ(lines(s).back(), "reproduce: prog --test plus --seed 3 +waves=a.fst +flag +n=0x10");
  Context c(1, std::cout);
  c.set_plusarg("n", "12x");
  EXPECT_THROW(c.plusarg_u64("n", 0), std::invalid_argument);

  EXPECT_EQ(parse_verbosity("Full"), verbosity::kFull);
  EXPECT_EQ(parse_verbosity("250"), 250);
  EXPECT_EQ(parse_verbosity("loud"), -1);
}

}  // namespace
}  // namespace srnic::verif::uvm
