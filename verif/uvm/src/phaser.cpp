// Phaser: phase ordering, the cycle loop, drain time and watchdog.
#include "srnic/uvm/phaser.hpp"

#include <string>

namespace srnic::verif::uvm {

const char* to_string(Phaser::RunEnd e) {
  switch (e) {
    case Phaser::RunEnd::NotRun: return "not run";
    case Phaser::RunEnd::Objections: return "objections dropped";
    case Phaser::RunEnd::Watchdog: return "watchdog";
    case Phaser::RunEnd::Stopped: return "stop requested";
  }
  return "?";
}

Phaser::Phaser(Component& top) : top_(top), ctx_(top.ctx()) {}

void Phaser::run_all() {
  build();
  connect();
  run();
  check();
  report();
}

void Phaser::collect(Component* c) {
  order_.push_back(c);
  for (Component* ch : c->children()) collect(ch);
}

void Phaser::bottom_up(Component* c, void (Component::*hook)()) {
  for (Component* ch : c->children()) bottom_up(ch, hook);
  (c->*hook)();
}

void Phaser::build() {
  ctx_.phase_ = Phase::Build;
  // Top-down, depth first; index loops because build() adds children as it goes.
  std::vector<Component*> stack{&top_};
  while (!stack.empty()) {
    Component* c = stack.back();
    stack.pop_back();
    c->build();
    const auto& ch = c->children();
    for (size_t i = ch.size(); i-- > 0;) stack.push_back(ch[i]);
  }
  order_.clear();
  collect(&top_);
}

void Phaser::connect() {
  ctx_.phase_ = Phase::Connect;
  bottom_up(&top_, &Component::connect);
}

void Phaser::run() {
  ctx_.phase_ = Phase::Run;
  ReportServer& rs = ctx_.reports();
  for (Component* c : order_) c->start_of_run();

  const uint64_t start = ctx_.cycle_;
  bool draining = false;
  uint64_t drain_left = 0;
  run_end_ = RunEnd::Objections;
  for (;;) {
    if (rs.stop_requested()) {
      run_end_ = RunEnd::Stopped;
      break;
    }
    if (watchdog_cycles_ != 0 && ctx_.cycle_ - start >= watchdog_cycles_) {
      std::string who;
      for (const Component* c : order_) {
        if (c->objection_count() != 0) {
          who += " " + c->path() + "(" + std::to_string(c->objection_count()) + ")";
        }
      }
      if (who.empty()) who = " none (draining)";
      top_.error("WATCHDOG", "run phase reached " + std::to_string(watchdog_cycles_) +
                                 " cycles; objections held by:" + who);
      run_end_ = RunEnd::Watchdog;
      break;
    }
    for (Component* c : order_) c->tick();
    if (settle_) settle_();
    for (Component* c : order_) c->sample();
    if (edge_) edge_();
    ++ctx_.cycle_;

    if (ctx_.objections_ != 0) {
      draining = false;
      continue;
    }
    if (!draining) {
      draining = true;
      drain_left = drain_cycles_;
    }
    if (drain_left == 0) break;
    --drain_left;
  }
  run_cycles_ = ctx_.cycle_ - start;
  bottom_up(&top_, &Component::end_of_run);
}

void Phaser::check() {
  ctx_.phase_ = Phase::Check;
  bottom_up(&top_, &Component::check);
}

void Phaser::report() {
  ctx_.phase_ = Phase::Report;
  bottom_up(&top_, &Component::report);
  ctx_.phase_ = Phase::Done;
}

}  // namespace srnic::verif::uvm
