// Test harness: replays a script of per-cycle signal snapshots into a monitor through the
// Phaser, so that the context cycle, the phase hooks and the check phase run as in a real test.
// Cycle c of the run presents script[c] (Cyc::get() builds the snapshot, pointing into the
// script), then idle cycles follow until the objection drains.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "srnic/uvm/component.hpp"
#include "srnic/uvm/phaser.hpp"
#include "srnic/uvm/tlm.hpp"

namespace srnic::verif::agents::test {

namespace uvm = srnic::verif::uvm;

template <class Cyc>
class ScriptEnv : public uvm::Component {
 public:
  using Sig = decltype(std::declval<const Cyc&>().get());

  explicit ScriptEnv(uvm::Context& ctx) : Component(ctx, "env") {}

  // The snapshot of cycle c (the script grows with idle cycles as needed).
  Cyc& at(size_t c) {
    if (script_.size() <= c) script_.resize(c + 1);
    return script_[c];
  }
  void run() {
    uvm::Phaser ph(*this);
    ph.set_watchdog_cycles(100000);
    ph.run_all();
  }
  const Sig* current() const { return &cur_; }

 protected:
  void start_of_run() override { raise_objection(); }
  void tick() override {
    if (cycle() < script_.size()) {
      cur_ = script_[cycle()].get();
    } else {
      cur_ = Sig{};
      if (objection_count() != 0) drop_objection();
    }
  }

 private:
  std::vector<Cyc> script_;
  Sig cur_{};
};

// Collects every transaction written to a port.
template <class T>
struct Collect : uvm::Subscriber<T> {
  std::vector<T> items;
  void write(const T& t) override { items.push_back(t); }
};

// Byte i of the test pattern `seed`.
inline uint8_t pat(unsigned seed, unsigned i) { return static_cast<uint8_t>(seed * 37u + i * 11u + 5u); }

// A 64-byte beat of pattern `seed` as 16 little-endian words.
inline void fill(std::array<uint32_t, 16>& w, unsigned seed) {
  for (unsigned j = 0; j < 16; ++j) {
    w[j] = 0;
    for (unsigned b = 0; b < 4; ++b) w[j] |= uint32_t{pat(seed, 4 * j + b)} << (8 * b);
  }
}

// The bytes of consecutive 64-byte beats with the given pattern seeds.
inline std::vector<uint8_t> beats(std::initializer_list<unsigned> seeds) {
  std::vector<uint8_t> v;
  for (unsigned s : seeds)
    for (unsigned i = 0; i < 64; ++i) v.push_back(pat(s, i));
  return v;
}

// Base fixture: one context whose report output is kept for failure messages.
struct AgentTest : ::testing::Test {
  std::ostringstream out;
  uvm::Context ctx{1, out};
  uint64_t errors(const char* id) const { return ctx.reports().count_id(id); }
  uint64_t failures() const { return ctx.reports().failures(); }
  std::string log() const { return out.str(); }
  // Exactly n errors, all with `id`.
  void expect_only(const char* id, uint64_t n) const {
    EXPECT_EQ(errors(id), n) << log();
    EXPECT_EQ(failures(), n) << log();
  }
};

}  // namespace srnic::verif::agents::test
