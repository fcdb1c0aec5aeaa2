// bench.hpp: shared pieces of the per-block RTL benches: the test seed, the seeded random
// engine (splitmix64-seeded xoshiro256**), and a clocked owner of one Verilator model.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <verilated.h>

#include <cstring>

#include "srnic/abi.hpp"

namespace srnic::verif::blocks {

// One 64-byte SQ WQE (driver ABI layout) as the 16 words of a 512-bit AXI beat; `rsvd`
// (optional, 20 bytes) fills the reserved bytes 44..63, its first two also bytes 2..3 (the
// running index) unless `idx` (0..65535) is given.
inline void encode_sq_wqe(uint8_t op, uint8_t flags, uint32_t imm, uint64_t wr_id, uint64_t laddr,
                          uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t* beat,
                          const uint8_t* rsvd = nullptr, int32_t idx = -1) {
  abi::SqWqe w{};
  w.opcode = op;
  w.flags = flags;
  std::memcpy(w.imm, &imm, 4);
  w.wr_id = wr_id;
  w.laddr = laddr;
  w.length = len;
  w.lkey = lkey;
  w.raddr = raddr;
  w.rkey = rkey;
  uint8_t b[64];
  std::memcpy(b, &w, 64);
  if (rsvd) {
    b[2] = rsvd[0];
    b[3] = rsvd[1];
    std::memcpy(b + 44, rsvd, 20);
  }
  if (idx >= 0) {
    b[2] = uint8_t(idx);
    b[3] = uint8_t(idx >> 8);
  }
  std::memcpy(beat, b, 64);
}

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xoshiro256**, seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }
  uint64_t next() {
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
  // Uniform in [0, n), n > 0 (multiply-shift; the bias is far below what a bench can see).
  uint64_t below(uint64_t n) { return uint64_t((unsigned __int128)next() * n >> 64); }
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }  // [lo, hi]
  bool percent(unsigned p) { return below(100) < p; }
  uint32_t u32() { return uint32_t(next() >> 32); }
  uint8_t u8() { return uint8_t(next() >> 56); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// The run's seed: $SRNIC_SEED if set, else 1. Printed once per process.
inline uint64_t run_seed() {
  static const uint64_t seed = [] {
    const char* env = std::getenv("SRNIC_SEED");
    const uint64_t s = env ? std::strtoull(env, nullptr, 0) : 1;
    std::printf("[bench] seed %llu (set SRNIC_SEED to change)\n", (unsigned long long)s);
    return s;
  }();
  return seed;
}

// Seed of the current test: the run seed mixed with the test's full name, so each test
// draws its own stream and can be rerun alone.
inline uint64_t test_seed() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a over "Suite.Name"
  const std::string name = std::string(info->test_suite_name()) + "." + info->name();
  for (char c : name) h = (h ^ uint8_t(c)) * 0x100000001B3ull;
  uint64_t s = run_seed() ^ h;
  return splitmix64(s);
}

inline std::string reproduce_line() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return "seed " + std::to_string(run_seed()) + "; reproduce: SRNIC_SEED=" +
         std::to_string(run_seed()) + " " + ::testing::internal::GetArgvs()[0] +
         " --gtest_filter=" + info->test_suite_name() + "." + info->name();
}

// Attaches the seed and the reproduce command to every failure in the enclosing scope.
#define SRNIC_BENCH_TRACE() SCOPED_TRACE(::srnic::verif::blocks::reproduce_line())

// Bit-field access to model ports of any width: plain integers (up to 64 bits) and VlWide.
template <class T>
void set_bits(T& sig, int lsb, int width, uint64_t v) {
  for (int i = 0; i < width; ++i) {
    const T bit = T(1) << (lsb + i);
    sig = ((v >> i) & 1) ? (sig | bit) : (sig & ~bit);
  }
}
template <std::size_t N>
void set_bits(VlWide<N>& sig, int lsb, int width, uint64_t v) {
  for (int i = 0; i < width; ++i) {
    const int b = lsb + i;
    const uint32_t bit = 1u << (b % 32);
    sig[size_t(b / 32)] = ((v >> i) & 1) ? (sig[size_t(b / 32)] | bit) : (sig[size_t(b / 32)] & ~bit);
  }
}
template <class T>
uint64_t get_bits(const T& sig, int lsb, int width) {
  uint64_t v = uint64_t(sig) >> lsb;
  return width >= 64 ? v : v & ((1ull << width) - 1);
}
template <std::size_t N>
uint64_t get_bits(const VlWide<N>& sig, int lsb, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    const int b = lsb + i;
    v |= uint64_t((sig[size_t(b / 32)] >> (b % 32)) & 1) << i;
  }
  return v;
}

// Bit layout of a packed struct port: members in declaration order, the first at the top.
struct Field {
  int lsb, width;
};
template <size_t N>
struct Layout {
  std::array<int, N> widths;
  constexpr Field at(size_t i) const {
    int lsb = 0;
    for (size_t j = N; j-- > i + 1;) lsb += widths[j];
    return {lsb, widths[i]};
  }
  template <class T>
  uint64_t get(const T& sig, size_t i) const {
    const Field f = at(i);
    return get_bits(sig, f.lsb, f.width);
  }
};

// Owns a VerilatedContext and one model M. Per cycle the bench drives inputs, calls eval()
// to settle combinational outputs, checks them, then tick() applies the rising edge.
template <class M>
class Dut {
 public:
  explicit Dut(uint64_t seed) : ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->randReset(2);                              // --x-initial unique: random, not zeros
    ctx_->randSeed(int(seed % 0x7FFFFFFEull) + 1);   // 0 would mean "time-based"
    ctx_->fatalOnError(false);                       // an RTL $error is counted, not fatal
    ctx_->errorLimit(1 << 30);
    top_ = std::make_unique<M>(ctx_.get(), "top");
    top_->clk = 0;
    top_->eval();
  }
  // Every RTL $error and failed assertion (the benches are built with --assert) is counted,
  // printed by Verilator as "[<cycle>] %Error: <file>:<line>: Assertion failed in <scope>:
  // <message>", and fails the test here unless the test expected it (expect_rtl_errors).
  ~Dut() {
    top_->final();
    const int n = ctx_->errorCount();
    if (n > 0)
      ADD_FAILURE() << n << " RTL assertion failure(s) or $error(s), first at cycle " << first_error_cycle_
                    << " (see the %Error lines above); " << reproduce_line();
  }
  Dut(const Dut&) = delete;
  Dut& operator=(const Dut&) = delete;

  M* operator->() { return top_.get(); }
  M& top() { return *top_; }
  void eval() { top_->eval(); }
  // Rising then falling edge; inputs keep their values.
  void tick() {
    ctx_->time(cycle_ + 1);   // assertion reports show the bench cycle as their time
    top_->clk = 1;
    top_->eval();
    top_->clk = 0;
    top_->eval();
    ++cycle_;
    if (first_error_cycle_ == 0 && ctx_->errorCount() > 0) first_error_cycle_ = cycle_;
  }
  // Synchronous reset held for n cycles.
  void reset(int n = 2) {
    top_->rst = 1;
    for (int i = 0; i < n; ++i) tick();
    top_->rst = 0;
    top_->eval();
  }
  uint64_t cycle() const { return cycle_; }
  // True once the RTL has executed $error or an assertion has failed.
  bool rtl_error() const { return ctx_->errorCount() > 0 || ctx_->gotError(); }
  int rtl_errors() const { return ctx_->errorCount(); }
  // For tests that provoke an assertion on purpose: returns how many RTL errors were
  // reported so far and clears the count, so the destructor's check covers the rest.
  int take_rtl_errors() {
    const int n = ctx_->errorCount();
    ctx_->errorCount(0);
    first_error_cycle_ = 0;
    return n;
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> top_;
  uint64_t cycle_ = 0;
  uint64_t first_error_cycle_ = 0;
};

}  // namespace srnic::verif::blocks
