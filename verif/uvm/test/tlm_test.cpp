// Analysis ports, subscribers and FIFOs.
#include "srnic/uvm/tlm.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace srnic::verif::uvm {
namespace {

struct Log : Subscriber<int> {
  std::string tag;
  std::vector<std::string>* out;
  Log(std::string t, std::vector<std::string>* o) : tag(std::move(t)), out(o) {}
  void write(const int& v) override { out->push_back(tag + std::to_string(v)); }
};

TEST(AnalysisPort, FansOutInConnectionOrderAndChains) {
  std::vector<std::string> got;
  Log a("a", &got), b("b", &got), c("c", &got);
  AnalysisPort<int> child, parent;
  child.connect(a);
  child.connect(parent);  // hierarchical: child -> parent -> b, c
  parent.connect(b);
  parent.connect(c);
  child.write(1);
  child.write(2);
  EXPECT_EQ(got, (std::vector<std::string>{"a1", "b1", "c1", "a2", "b2", "c2"}));
  EXPECT_EQ(child.writes(), 2u);
  EXPECT_EQ(parent.writes(), 2u);

  int sum = 0;
  SubscriberFn<int> fn([&](const int& v) { sum += v; });
  AnalysisPort<int> p;
  p.connect(fn);
  p.write(5);
  p.write(7);
  EXPECT_EQ(sum, 12);
}

TEST(TlmFifo, BoundedRefusesWhenFullAndWrapsInOrder) {
  TlmFifo<int> f(3);
  EXPECT_TRUE(f.try_put(1));
  EXPECT_TRUE(f.try_put(2));
  EXPECT_TRUE(f.try_put(3));
  EXPECT_TRUE(f.full());
  EXPECT_FALSE(f.try_put(4));
  int v = 0;
  ASSERT_TRUE(f.try_get(v));
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(f.try_put(4));  // wraps around the ring
  EXPECT_EQ(f.at(0), 2);
  EXPECT_EQ(f.at(2), 4);
  for (int want : {2, 3, 4}) {
    ASSERT_TRUE(f.try_get(v));
    EXPECT_EQ(v, want);
  }
  EXPECT_FALSE(f.try_get(v));
  EXPECT_THROW(f.front(), std::logic_error);
}

TEST(TlmFifo, UnboundedGrowsAndKeepsOrderAcrossWrap) {
  TlmFifo<int> f;
  int v = 0;
  for (int i = 0; i < 10; ++i) f.try_put(i);
  for (int i = 0; i < 8; ++i) f.try_get(v);  // head moves into the ring
  for (int i = 10; i < 100; ++i) ASSERT_TRUE(f.try_put(i));
  EXPECT_EQ(f.size(), 92u);
  for (int want = 8; want < 100; ++want) {
    ASSERT_TRUE(f.try_get(v));
    ASSERT_EQ(v, want);
  }
  EXPECT_TRUE(f.empty());

  AnalysisFifo<int> af;
  af.write(3);
  af.write(4);
  ASSERT_TRUE(af.try_get(v));
  EXPECT_EQ(v, 3);
  EXPECT_EQ(af.size(), 1u);
}

}  // namespace
}  // namespace srnic::verif::uvm
