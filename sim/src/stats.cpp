// Result statistics of srnic-sim (see stats.hpp).
#include "stats.hpp"

#include <algorithm>
#include <cmath>

namespace srnic::sim {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(p * static_cast<double>(sorted.size()));
  const size_t idx = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(idx, sorted.size() - 1)];
}

namespace {

// The smallest width of 1, 2 or 5 times a power of ten that is at least w (w > 0).
double nice_width(double w) {
  const double p = std::pow(10.0, std::floor(std::log10(w)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= w * (1 - 1e-12)) return m * p;
  return 10 * p;
}

}  // namespace

LatencyStats summarize_latency(std::vector<double> s, unsigned max_bins) {
  LatencyStats l;
  l.samples = s.size();
  if (s.empty()) return l;
  std::sort(s.begin(), s.end());
  const double n = static_cast<double>(s.size());
  double sum = 0;
  for (double v : s) sum += v;
  const double mean = sum / n;
  double var = 0;
  for (double v : s) var += (v - mean) * (v - mean);
  l.min_us = s.front() / 1000;
  l.max_us = s.back() / 1000;
  l.mean_us = mean / 1000;
  l.stdev_us = std::sqrt(var / n) / 1000;
  // The median: the middle sample, or the mean of the two middle ones.
  const size_t m = s.size() / 2;
  l.typical_us = (s.size() % 2 ? s[m] : (s[m - 1] + s[m]) / 2) / 1000;
  l.p50_us = percentile_sorted(s, 0.50) / 1000;
  l.p90_us = percentile_sorted(s, 0.90) / 1000;
  l.p99_us = percentile_sorted(s, 0.99) / 1000;
  l.p99_9_us = percentile_sorted(s, 0.999) / 1000;

  LatencyHistogram& h = l.histogram;
  const double span = s.back() - s.front();
  h.bin_ns = nice_width(std::max(span / std::max(1u, max_bins), 1.0));
  h.start_ns = std::floor(s.front() / h.bin_ns) * h.bin_ns;
  // The last sample may need one bin more than max_bins when the start is rounded down.
  h.counts.assign(static_cast<size_t>(std::floor((s.back() - h.start_ns) / h.bin_ns)) + 1, 0);
  for (double v : s) {
    const size_t k = std::min(static_cast<size_t>(std::floor((v - h.start_ns) / h.bin_ns)), h.counts.size() - 1);
    ++h.counts[k];
  }
  return l;
}

double peak_msg_rate_per_ns(const std::vector<double>& post, const std::vector<double>& done) {
  const size_t n = std::min(post.size(), done.size());
  struct Pt {
    double x, y;
  };
  // Message i is the point (i, post[i]); completion j the point (j + 1, done[j]). The time per
  // message of the window i..j is the slope between them; the best window for j is the tangent
  // from completion j to the upper hull of the post points 0..j.
  std::vector<Pt> hull;
  hull.reserve(n);
  auto cross = [](const Pt& o, const Pt& a, const Pt& b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
  };
  double best = 0;  // smallest positive time per message seen
  for (size_t j = 0; j < n; ++j) {
    const Pt p{static_cast<double>(j), post[j]};
    while (hull.size() >= 2 && cross(hull[hull.size() - 2], hull.back(), p) >= 0) hull.pop_back();
    hull.push_back(p);
    const Pt q{static_cast<double>(j + 1), done[j]};
    auto slope = [&](size_t k) { return (q.y - hull[k].y) / (q.x - hull[k].x); };
    size_t lo = 0, hi = hull.size() - 1;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (slope(mid + 1) <= slope(mid))
        lo = mid + 1;
      else
        hi = mid;
    }
    const double s = slope(lo);
    if (s > 0 && (best == 0 || s < best)) best = s;
  }
  return best > 0 ? 1 / best : 0;
}

double jain_index(const std::vector<double>& x) {
  double sum = 0, sq = 0;
  for (double v : x) {
    sum += v;
    sq += v * v;
  }
  if (x.empty() || sq == 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * sq);
}

}  // namespace srnic::sim
