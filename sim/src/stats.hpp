// Result statistics of srnic-sim, independent of the simulation so they are unit-tested on
// their own: latency summaries as perftest's latency tools print them (min, max, typical =
// median, average, standard deviation, 99% and 99.9% percentiles) with a histogram, perftest's
// peak bandwidth (the best rate over any run of consecutive messages), and Jain's fairness index.
#pragma once

#include <cstdint>
#include <vector>

namespace srnic::sim {

// Latency samples binned at a fixed width: counts[k] holds the samples in
// [start_ns + k * bin_ns, start_ns + (k + 1) * bin_ns).
struct LatencyHistogram {
  double start_ns = 0;
  double bin_ns = 0;
  std::vector<uint64_t> counts;
};

struct LatencyStats {
  uint64_t samples = 0;
  // Microseconds. typical is the median (perftest's t_typical), stdev the population standard
  // deviation, pNN the nearest-rank percentiles (the smallest sample with at least NN% of the
  // samples at or below it).
  double min_us = 0, max_us = 0, typical_us = 0, mean_us = 0, stdev_us = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, p99_9_us = 0;
  LatencyHistogram histogram;
};

// Nearest-rank percentile of ascending samples, p in (0, 1]; 0 for no samples.
double percentile_sorted(const std::vector<double>& sorted, double p);

// Summary of latency samples in ns (any order). The histogram has at most max_bins bins of a
// width of 1, 2 or 5 times a power of ten ns, starting at a multiple of the width.
LatencyStats summarize_latency(std::vector<double> samples_ns, unsigned max_bins = 40);

// Peak message rate in messages per ns, as perftest's "BW peak": post_ns[i] is when the i-th
// message was posted and done_ns[j] when the j-th completion (in completion order) was seen, both
// ascending; the peak is the best of (j - i + 1) / (done_ns[j] - post_ns[i]) over every i <= j,
// the rate of the fastest run of consecutive messages. O(n log n) (upper convex hull of the post
// points). 0 when no window has a positive duration.
double peak_msg_rate_per_ns(const std::vector<double>& post_ns, const std::vector<double>& done_ns);

// Jain's fairness index (sum x)^2 / (n sum x^2): 1 when every x is equal, 1/n when one takes
// everything. 1 for an empty list or all zeros (nothing to be unfair about).
double jain_index(const std::vector<double>& x);

}  // namespace srnic::sim
