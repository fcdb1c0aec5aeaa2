// srnic-sim's statistics: nearest-rank percentiles, the latency summary and histogram, perftest's
// BW peak (checked against the quadratic definition on random data from one printed seed) and
// Jain's fairness index.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "srnic/sim/common.hpp"
#include "stats.hpp"

using namespace srnic::sim;

namespace {

// The seed of every random test: SRNIC_SEED, or a fixed default; printed with every failure.
uint64_t test_seed() {
  const char* s = std::getenv("SRNIC_SEED");
  return s ? std::strtoull(s, nullptr, 0) : 20261124;
}

std::string reproduce(const char* test) {
  return "reproduce: SRNIC_SEED=" + std::to_string(test_seed()) + " sim_perftest_test --gtest_filter=" + test;
}

// perftest's BW peak by its definition: the best (j - i + 1) / (done[j] - post[i]) over i <= j.
double peak_brute(const std::vector<double>& post, const std::vector<double>& done) {
  double best = 0;
  for (size_t i = 0; i < post.size(); ++i)
    for (size_t j = i; j < done.size(); ++j) {
      const double d = done[j] - post[i];
      if (d > 0) best = std::max(best, double(j - i + 1) / d);
    }
  return best;
}

}  // namespace

TEST(Stats, NearestRankPercentiles) {
  std::vector<double> v;
  for (int k = 1; k <= 100; ++k) v.push_back(k);
  EXPECT_EQ(percentile_sorted(v, 0.50), 50);
  EXPECT_EQ(percentile_sorted(v, 0.99), 99);
  EXPECT_EQ(percentile_sorted(v, 0.999), 100);
  EXPECT_EQ(percentile_sorted(v, 1.0), 100);
  EXPECT_EQ(percentile_sorted(v, 0.001), 1);
  EXPECT_EQ(percentile_sorted({}, 0.5), 0);
  v.resize(1000);
  for (int k = 0; k < 1000; ++k) v[size_t(k)] = k + 1;
  EXPECT_EQ(percentile_sorted(v, 0.999), 999);  // the 999th of 1000
}

TEST(Stats, LatencySummaryMatchesPerftestColumns) {
  // ns, unsorted: 1000, 2000, 3000, 4000 us-scale values in ns.
  const LatencyStats l = summarize_latency({4000, 1000, 3000, 2000});
  EXPECT_EQ(l.samples, 4u);
  EXPECT_DOUBLE_EQ(l.min_us, 1.0);
  EXPECT_DOUBLE_EQ(l.max_us, 4.0);
  EXPECT_DOUBLE_EQ(l.typical_us, 2.5);  // median of an even count: mean of the middle two
  EXPECT_DOUBLE_EQ(l.mean_us, 2.5);
  EXPECT_DOUBLE_EQ(l.stdev_us, std::sqrt(1.25));  // population standard deviation
  EXPECT_DOUBLE_EQ(l.p50_us, 2.0);
  EXPECT_DOUBLE_EQ(l.p99_us, 4.0);
  EXPECT_DOUBLE_EQ(l.p99_9_us, 4.0);
  const LatencyStats one = summarize_latency({3051.5});
  EXPECT_DOUBLE_EQ(one.typical_us, 3.0515);
  EXPECT_DOUBLE_EQ(one.stdev_us, 0);
  ASSERT_EQ(one.histogram.counts.size(), 1u);
  EXPECT_EQ(summarize_latency({}).samples, 0u);
}

TEST(Stats, HistogramCoversEverySample) {
  const uint64_t seed = test_seed();
  SplitMix64 g(seed);
  std::vector<double> s;
  for (int k = 0; k < 5000; ++k) s.push_back(2900 + double(g.next() % 100000) / 100.0);  // 2.9 .. 3.9 us
  const LatencyStats l = summarize_latency(s, 40);
  const LatencyHistogram& h = l.histogram;
  uint64_t n = 0;
  for (uint64_t c : h.counts) n += c;
  EXPECT_EQ(n, s.size()) << reproduce("Stats.HistogramCoversEverySample");
  EXPECT_LE(h.start_ns, l.min_us * 1000);
  EXPECT_GT(h.start_ns + h.bin_ns * double(h.counts.size()), l.max_us * 1000);
  EXPECT_LE(h.counts.size(), 41u);
  // The width is 1, 2 or 5 times a power of ten, the start a multiple of it.
  const double m = h.bin_ns / std::pow(10.0, std::floor(std::log10(h.bin_ns)));
  EXPECT_TRUE(std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9) << h.bin_ns;
  EXPECT_NEAR(std::remainder(h.start_ns, h.bin_ns), 0, 1e-6);
}

TEST(Stats, PeakRateIsTheFastestRunOfMessages) {
  // Posted at 0, 0, 0, 0; completed at 10, 11, 12, 40: messages 0..2 took 12 ns, 4 per 40 ns
  // overall; the best window is 0..2 (3 / 12 = 0.25 per ns).
  EXPECT_DOUBLE_EQ(peak_msg_rate_per_ns({0, 0, 0, 0}, {10, 11, 12, 40}), 0.25);
  EXPECT_EQ(peak_msg_rate_per_ns({}, {}), 0);
  const uint64_t seed = test_seed();
  SplitMix64 g(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + g.next() % 60;
    std::vector<double> post(n), done(n);
    double t = 0, d = 0;
    for (size_t k = 0; k < n; ++k) {
      t += double(g.next() % 50);  // posts in bursts (equal times) and gaps
      post[k] = t;
      d = std::max(d, t) + 1 + double(g.next() % 80);  // the k-th completion after the k-th post
      done[k] = d;
    }
    EXPECT_NEAR(peak_msg_rate_per_ns(post, done), peak_brute(post, done), 1e-12)
        << "trial " << trial << ", n " << n << "; " << reproduce("Stats.PeakRateIsTheFastestRunOfMessages");
  }
}

TEST(Stats, JainIndex) {
  EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({8, 0, 0, 0}), 0.25);  // one QP takes everything: 1/n
  EXPECT_DOUBLE_EQ(jain_index({1, 2, 3}), 36.0 / (3 * 14));
  EXPECT_DOUBLE_EQ(jain_index({}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({0, 0}), 1.0);
}
