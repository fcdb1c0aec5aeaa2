// Functional coverage: bins, special bins, crosses, percentages, goals and the text report.
#include "srnic/uvm/coverage.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "srnic/uvm/component.hpp"

namespace srnic::verif::uvm {
namespace {

TEST(Coverage, BinsCountValuesAndRanges) {
  Covergroup cg("cg");
  Coverpoint& len = cg.coverpoint("len");
  len.bin("zero", 0).range("small", 1, 63).range("big", 64, 4096).bin("odd", {3, 5, 7});
  cg.sample({0});
  cg.sample({5});  // small and odd (bins may overlap)
  cg.sample({100});
  cg.sample({100});
  EXPECT_EQ(len.hits("zero"), 1u);
  EXPECT_EQ(len.hits("small"), 1u);
  EXPECT_EQ(len.hits("odd"), 1u);
  EXPECT_EQ(len.hits("big"), 2u);
  EXPECT_DOUBLE_EQ(len.coverage(), 100.0);
  cg.sample({5000});  // in no bin, no default: nothing counted
  EXPECT_EQ(len.hits("big"), 2u);
  EXPECT_EQ(cg.samples(), 5u);
}

TEST(Coverage, EachAndSplitBins) {
  Covergroup cg("cg");
  Coverpoint& op = cg.coverpoint("op");
  op.bins_each("op", 0, 3);
  Coverpoint& addr = cg.coverpoint("addr");
  addr.bins_split("a", 0, 9, 3);  // [0..2] [3..5] [6..9]
  ASSERT_EQ(op.bins(), 4u);
  EXPECT_EQ(op.bin_name(2), "op[2]");
  ASSERT_EQ(addr.bins(), 3u);
  cg.sample({2, 9});
  cg.sample({2, 3});
  EXPECT_EQ(op.hits("op[2]"), 2u);
  EXPECT_EQ(addr.hits("a[2]"), 1u);
  EXPECT_EQ(addr.hits("a[1]"), 1u);
  EXPECT_EQ(addr.hits("a[0]"), 0u);
  EXPECT_DOUBLE_EQ(op.coverage(), 25.0);
  EXPECT_NEAR(addr.coverage(), 200.0 / 3, 1e-9);
  EXPECT_NEAR(cg.coverage(), (25.0 + 200.0 / 3) / 2, 1e-9);
}

TEST(Coverage, IgnoreIllegalDefaultAreNotGoals) {
  std::ostringstream out;
  Context ctx(1, out);
  Component owner(ctx, "env");
  Covergroup cg("cg", &owner);
  Coverpoint& cp = cg.coverpoint("v");
  cp.range("lo", 0, 9).range("hi", 10, 19).ignore("skip", 5, 5).illegal("bad", 100, 200).default_bin();
  cg.sample({5});    // ignored even though "lo" holds 5
  cg.sample({150});  // illegal: an ERROR through the owner
  cg.sample({50});   // default
  cg.sample({1});
  EXPECT_EQ(cp.hits("lo"), 1u);
  EXPECT_EQ(cp.hits("skip"), 1u);
  EXPECT_EQ(cp.hits("bad"), 1u);
  EXPECT_EQ(cp.hits("default"), 1u);
  EXPECT_EQ(cp.goal_bins(), 2u);
  EXPECT_DOUBLE_EQ(cp.coverage(), 50.0);
  EXPECT_EQ(cg.illegal_hits(), 1u);
  EXPECT_EQ(ctx.reports().count_id("COV_ILLEGAL"), 1u);
  EXPECT_NE(out.str().find("cg.v: illegal value 150"), std::string::npos);
  EXPECT_EQ(cg.hier(), "env.cg");
}

TEST(Coverage, AtLeastWeightAndGoal) {
  Covergroup cg("cg");
  Coverpoint& a = cg.coverpoint("a");
  a.bin("x", 0).bin("y", 1).at_least(2);
  Coverpoint& b = cg.coverpoint("b");
  b.bin("p", 0).bin("q", 1).weight(3);
  cg.set_goal(80);
  cg.sample({0, 0});
  EXPECT_DOUBLE_EQ(a.coverage(), 0.0);  // one hit is not enough
  cg.sample({0, 0});
  EXPECT_DOUBLE_EQ(a.coverage(), 50.0);
  EXPECT_DOUBLE_EQ(b.coverage(), 50.0);
  cg.sample({1, 1});
  // a: 50% (y hit once), b: 100%; weighted (50*1 + 100*3) / 4.
  EXPECT_DOUBLE_EQ(cg.coverage(), 87.5);
  EXPECT_TRUE(cg.goal_met());
  cg.set_goal(90);
  EXPECT_FALSE(cg.goal_met());
}

TEST(Coverage, CrossCountsCombinationsAndHonoursIgnore) {
  Covergroup cg("cg");
  Coverpoint& op = cg.coverpoint("op");
  op.bin("rd", 0).bin("wr", 1).default_bin();
  Coverpoint& len = cg.coverpoint("len");
  len.range("short", 0, 7).range("long", 8, 255).range("any", 0, 255);
  Cross& x = cg.cross("op_len", {&op, &len});
  x.ignore_if([](const std::vector<std::string>& b) { return b[1] == "any"; });
  cg.sample({0, 3});   // rd,short + rd,any(ignored)
  cg.sample({1, 100}); // wr,long + wr,any(ignored)
  cg.sample({1, 100});
  cg.sample({7, 3});   // op in default bin: no cross hit
  ASSERT_EQ(x.bins(), 6u);  // 2 normal op bins x 3 len bins
  EXPECT_EQ(x.bin_name(0), "rd,short");
  EXPECT_EQ(x.hits("rd,short"), 1u);
  EXPECT_EQ(x.hits("wr,long"), 2u);
  EXPECT_EQ(x.hits("rd,long"), 0u);
  EXPECT_EQ(x.hits("rd,any"), 1u);
  EXPECT_EQ(x.bin_kind(2), BinKind::Ignore);
  EXPECT_EQ(x.goal_bins(), 4u);
  EXPECT_DOUBLE_EQ(x.coverage(), 50.0);
}

TEST(Coverage, TypedGroupAndFreezeRules) {
  struct Txn {
    int op, len;
  };
  CovergroupOf<Txn> cg("txn");
  Coverpoint& op = cg.coverpoint("op", [](const Txn& t) { return t.op; });
  op.bins_each("op", 0, 1);
  Coverpoint& len = cg.coverpoint("len", [](const Txn& t) { return t.len; });
  len.range("s", 0, 9).range("l", 10, 99);
  cg.cross("opxlen", {&op, &len});
  cg.sample(Txn{1, 50});
  EXPECT_EQ(op.hits("op[1]"), 1u);
  EXPECT_EQ(len.hits("l"), 1u);
  EXPECT_EQ(cg.crosses()[0]->hits("op[1],l"), 1u);
  EXPECT_THROW(op.bin("late", 5), std::logic_error);
  EXPECT_THROW(cg.coverpoint("late", [](const Txn&) { return 0; }), std::logic_error);
  Covergroup plain("plain");
  plain.coverpoint("a").bin("x", 1);
  EXPECT_THROW(plain.sample({1, 2}), std::invalid_argument);
  EXPECT_THROW(plain.coverpoint("a"), std::invalid_argument);
  EXPECT_THROW(plain.coverpoint("b").bin("it's", 1), std::invalid_argument);
  Covergroup empty("empty");
  empty.coverpoint("nobins");
  EXPECT_THROW(empty.sample({1}), std::logic_error);
}

TEST(Coverage, TextReport) {
  Covergroup cg("pkt");
  cg.coverpoint("op").bin("send", 0).bin("write", 1).illegal("bad", 9, 9);
  cg.sample({0});
  std::ostringstream os;
  cg.print(os);
  const std::string s = os.str();
  EXPECT_NE(s.find("covergroup pkt: 50.0% (goal 100.0%, 1 samples, BELOW GOAL)"), std::string::npos);
  EXPECT_NE(s.find("coverpoint op: 50.0% (1/2 bins)"), std::string::npos);
  EXPECT_NE(s.find("write"), std::string::npos);
  EXPECT_NE(s.find("<- not covered"), std::string::npos);
  EXPECT_NE(s.find("(illegal)"), std::string::npos);
}

}  // namespace
}  // namespace srnic::verif::uvm
