// Phaser: runs the phases of one component tree. build (top-down), connect (bottom-up), then the
// cycle-driven run phase, then check and report (bottom-up). Each run cycle is:
//   tick() on every component -> settle() -> sample() on every component -> edge() -> cycle+1
// where settle and edge are supplied by the test (e.g. Verilator eval() and a clock edge).
// The run phase ends when, after a cycle, no objection is raised and none has been for the
// drain time; or when the watchdog cycle limit is reached (an ERROR naming who still objects);
// or when the report server requests a stop (error limit).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "srnic/uvm/component.hpp"

namespace srnic::verif::uvm {

class Phaser {
 public:
  enum class RunEnd { NotRun, Objections, Watchdog, Stopped };
  using Hook = std::function<void()>;

  explicit Phaser(Component& top);

  // Cycles run after the objection count reaches zero before the run phase ends.
  void set_drain_cycles(uint64_t n) { drain_cycles_ = n; }
  // Longest run phase, in cycles; 0 disables the watchdog.
  void set_watchdog_cycles(uint64_t n) { watchdog_cycles_ = n; }
  void set_edge(Hook h) { edge_ = std::move(h); }
  void set_settle(Hook h) { settle_ = std::move(h); }

  // All phases in order. A FatalError thrown by a component propagates to the caller.
  void run_all();
  // The phases one at a time, for tests that need to act between them.
  void build();
  void connect();
  void run();
  void check();
  void report();

  RunEnd run_end() const { return run_end_; }
  uint64_t run_cycles() const { return run_cycles_; }

 private:
  void collect(Component* c);
  void bottom_up(Component* c, void (Component::*hook)());

  Component& top_;
  Context& ctx_;
  std::vector<Component*> order_;  // pre-order (top-down) list, fixed after build
  uint64_t drain_cycles_ = 0;
  uint64_t watchdog_cycles_ = 1000000;
  Hook edge_;
  Hook settle_;
  RunEnd run_end_ = RunEnd::NotRun;
  uint64_t run_cycles_ = 0;
};

const char* to_string(Phaser::RunEnd e);

}  // namespace srnic::verif::uvm
