// Rng: the one random engine of the verification environment. xoshiro256** seeded through
// splitmix64; child streams derive from the seed (not the current state) and a stable hash of a
// name, so a component's stream depends only on the test seed and its path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace srnic::verif::uvm {

// splitmix64 step: advances `state` and returns the next output.
uint64_t splitmix64(uint64_t& state);
// FNV-1a 64-bit hash of `s`: stable across compilers, runs and platforms.
uint64_t stable_hash(std::string_view s);

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);

  uint64_t seed() const { return seed_; }

  // A new stream seeded from this stream's seed and `name`; independent of draws made so far.
  Rng child(std::string_view name) const;

  uint64_t next_u64();
  uint32_t next_u32() { return static_cast<uint32_t>(next_u64() >> 32); }
  // Uniform integer in [lo, hi] (inclusive), without modulo bias. Requires lo <= hi.
  uint64_t uniform(uint64_t lo, uint64_t hi);
  int64_t uniform_signed(int64_t lo, int64_t hi);
  // Uniform double in [0, 1) with 53 random bits.
  double unit();
  // True with probability p (p <= 0: never, p >= 1: always).
  bool bernoulli(double p);
  // Index in [0, n) drawn with probability weights[i] / sum(weights). Requires a non-zero sum.
  size_t weighted(const uint32_t* weights, size_t n);
  template <class Container>
  size_t weighted(const Container& weights) {
    return weighted(weights.data(), weights.size());
  }
  // Fisher-Yates shuffle of [first, last) (random-access iterators).
  template <class It>
  void shuffle(It first, It last) {
    const auto n = static_cast<uint64_t>(last - first);
    for (uint64_t i = n; i > 1; --i) {
      const uint64_t j = uniform(0, i - 1);
      using std::swap;
      swap(first[i - 1], first[j]);
    }
  }

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace srnic::verif::uvm
