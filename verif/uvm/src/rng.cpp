// Rng: xoshiro256** (Blackman/Vigna) seeded with splitmix64, plus unbiased range reduction.
#include "srnic/uvm/rng.hpp"

#include <stdexcept>

namespace srnic::verif::uvm {

namespace {
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t stable_hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(uint64_t seed) : seed_(seed) {
  uint64_t sm = seed;
  for (auto& w : s_) w = splitmix64(sm);
}

Rng Rng::child(std::string_view name) const {
  // Mix the name hash through splitmix so nearby seeds and similar names decorrelate.
  uint64_t sm = seed_ ^ rotl(stable_hash(name), 17);
  splitmix64(sm);
  return Rng(splitmix64(sm));
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::uniform(uint64_t lo, uint64_t hi) {
  if (lo > hi) throw std::invalid_argument("Rng::uniform: lo > hi");
  const uint64_t span = hi - lo;  // range size minus one
  if (span == UINT64_MAX) return next_u64();
  const uint64_t n = span + 1;
  // Reject the top partial copy of [0, n) so every residue is equally likely.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;
  uint64_t x;
  do {
    x = next_u64();
  } while (x > limit);
  return lo + x % n;
}

int64_t Rng::uniform_signed(int64_t lo, int64_t hi) {
  if (lo > hi) throw std::invalid_argument("Rng::uniform_signed: lo > hi");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + uniform(0, span));
}

double Rng::unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

bool Rng::bernoulli(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  return unit() < p;
}

size_t Rng::weighted(const uint32_t* weights, size_t n) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += weights[i];
  if (total == 0) throw std::invalid_argument("Rng::weighted: all weights are zero");
  uint64_t r = uniform(0, total - 1);
  for (size_t i = 0; i < n; ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return n - 1;  // not reached
}

}  // namespace srnic::verif::uvm
