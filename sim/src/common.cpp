// Histogram and violation reporting.
#include "srnic/sim/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace srnic::sim {

void Histogram::add(double v) {
  if (v < 0) v = 0;
  const double b = v / bucket_;
  const size_t last = counts_.size() - 1;
  const size_t i = b >= static_cast<double>(last) ? last : static_cast<size_t>(b);
  ++counts_[i];
  if (n_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  sum_ += v;
  ++n_;
}

double Histogram::percentile(double p) const {
  if (n_ == 0) return 0.0;
  p = std::clamp(p, 0.0, 1.0);
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p * n_)));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      if (i == counts_.size() - 1) return max_;
      return std::clamp((static_cast<double>(i) + 0.5) * bucket_, min_, max_);
    }
  }
  return max_;
}

void Histogram::clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  n_ = 0;
  min_ = max_ = sum_ = 0;
}

void ViolationSink::report(uint64_t cycle, const char* channel, std::string what) {
  ++count_;
  Violation v{cycle, channel, std::move(what)};
  if (handler_) {
    handler_(v);
  } else if (count_ <= 20) {
    std::fprintf(stderr, "[cycle %llu] %s violation: %s\n", static_cast<unsigned long long>(cycle),
                 v.channel.c_str(), v.what.c_str());
  }
}

}  // namespace srnic::sim
