// Shared simulation utilities: core clock conversion, the seeded random stream, a growable
// ring buffer, a latency histogram, protocol-violation reports and 512-bit bus helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace srnic::sim {

// Core clock. Cycle n spans [ns(n), ns(n+1)); the rising edge that ends cycle n is at ns(n+1).
struct Clock {
  double mhz = 300.0;
  double period_ns() const { return 1000.0 / mhz; }
  double ns(uint64_t cycle) const { return static_cast<double>(cycle) * 1000.0 / mhz; }
};

// splitmix64: the one random algorithm of the simulation.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Seed of an independent child stream `stream` of `seed`.
  static uint64_t child(uint64_t seed, uint64_t stream) {
    SplitMix64 g(seed ^ (stream * 0xd1b54a32d192ed03ULL));
    return g.next();
  }

 private:
  uint64_t s_;
};

// FIFO over a power-of-two vector; grows by doubling, never shrinks, so steady-state pushes and
// pops do not allocate. Popped slots keep their object (and its capacity) for reuse.
template <class T>
class Ring {
 public:
  explicit Ring(size_t capacity = 16) {
    size_t c = 1;
    while (c < capacity) c <<= 1;
    buf_.resize(c);
  }
  bool empty() const { return n_ == 0; }
  size_t size() const { return n_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return buf_[(head_ + n_ - 1) & (buf_.size() - 1)]; }
  T& operator[](size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  // Appends a slot (holding whatever the slot last held) and returns it.
  T& push() {
    if (n_ == buf_.size()) grow();
    ++n_;
    return back();
  }
  void push_back(T v) { push() = std::move(v); }
  void pop_front() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --n_;
  }
  void clear() { head_ = n_ = 0; }

 private:
  void grow() {
    std::vector<T> nb(buf_.size() * 2);
    for (size_t i = 0; i < n_; ++i) nb[i] = std::move((*this)[i]);
    buf_.swap(nb);
    head_ = 0;
  }
  std::vector<T> buf_;
  size_t head_ = 0, n_ = 0;
};

// Linear-bucket histogram of non-negative values (e.g. latencies in ns) with exact min/max/mean.
class Histogram {
 public:
  explicit Histogram(double bucket = 10.0, size_t buckets = 4096)
      : bucket_(bucket), counts_(buckets + 1, 0) {}
  void add(double v);
  uint64_t count() const { return n_; }
  double min() const { return n_ ? min_ : 0.0; }
  double max() const { return n_ ? max_ : 0.0; }
  double mean() const { return n_ ? sum_ / static_cast<double>(n_) : 0.0; }
  // Value below which a fraction p (0..1) of the samples lie, resolved to the bucket midpoint
  // and clamped to [min, max]; 0 when empty.
  double percentile(double p) const;
  void clear();

 private:
  double bucket_;
  std::vector<uint64_t> counts_;  // last bucket collects overflow
  uint64_t n_ = 0;
  double min_ = 0, max_ = 0, sum_ = 0;
};

// A broken bus rule seen by a model (never fatal: models report and carry on).
struct Violation {
  uint64_t cycle = 0;
  std::string channel;  // e.g. "pcie.AR", "eth.tx"
  std::string what;
};
using ViolationHandler = std::function<void(const Violation&)>;

// Counts violations and forwards them to a handler (default: print the first 20 to stderr).
class ViolationSink {
 public:
  void set_handler(ViolationHandler h) { handler_ = std::move(h); }
  void report(uint64_t cycle, const char* channel, std::string what);
  uint64_t count() const { return count_; }

 private:
  ViolationHandler handler_;
  uint64_t count_ = 0;
};

// 512-bit bus <-> bytes. W is anything indexable as 16 uint32_t words (Verilator's VlWide<16>,
// std::array<uint32_t,16>); byte i of the beat is bits [8i+7:8i].
template <class W>
inline void wide_to_bytes(const W& w, uint8_t* out) {
  for (int i = 0; i < 16; ++i) {
    const uint32_t v = w[i];
    out[4 * i + 0] = static_cast<uint8_t>(v);
    out[4 * i + 1] = static_cast<uint8_t>(v >> 8);
    out[4 * i + 2] = static_cast<uint8_t>(v >> 16);
    out[4 * i + 3] = static_cast<uint8_t>(v >> 24);
  }
}
template <class W>
inline void bytes_to_wide(const uint8_t* in, W& w) {
  for (int i = 0; i < 16; ++i)
    w[i] = static_cast<uint32_t>(in[4 * i]) | static_cast<uint32_t>(in[4 * i + 1]) << 8 |
           static_cast<uint32_t>(in[4 * i + 2]) << 16 | static_cast<uint32_t>(in[4 * i + 3]) << 24;
}

// tkeep/wstrb mask of the first n bytes of a 64-byte beat.
inline uint64_t keep_mask(unsigned n) { return n >= 64 ? ~0ULL : ((1ULL << n) - 1); }

}  // namespace srnic::sim
