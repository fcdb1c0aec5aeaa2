// Context and Component. A Context is one test's world: seed, report server, simulated cycle,
// objection total and current phase. Components form a named tree under it; each has a full
// dotted path, its own random stream (seed + path), reporting helpers, objection counts and
// virtual phase hooks that the Phaser calls in UVM order.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "srnic/uvm/report.hpp"
#include "srnic/uvm/rng.hpp"

namespace srnic::verif::uvm {

class Component;

enum class Phase { Construct, Build, Connect, Run, Check, Report, Done };
const char* to_string(Phase p);

class Context {
 public:
  explicit Context(uint64_t seed, std::ostream& out);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  uint64_t seed() const { return seed_; }
  ReportServer& reports() { return reports_; }
  const ReportServer& reports() const { return reports_; }
  // Stream for `path`: depends only on the seed and the path string.
  Rng stream(std::string_view path) const { return root_rng_.child(path); }

  uint64_t cycle() const { return cycle_; }
  // Cycles that pass outside the Phaser's run loop (e.g. while a blocking host-model call steps
  // the design during setup) keep the one time base of monitors and reports.
  void advance_cycles(uint64_t n) { cycle_ += n; }
  Phase phase() const { return phase_; }
  uint64_t objections() const { return objections_; }

  // Component by full dotted path ("env.agent.drv"), or nullptr.
  Component* find(std::string_view path) const;
  const std::vector<Component*>& tops() const { return tops_; }

  // Plusargs of the run (`+name=value` or `+name` on the command line, UVM style).
  void set_plusarg(std::string name, std::string value) {
    plusargs_.emplace_back(std::move(name), std::move(value));
  }
  bool has_plusarg(std::string_view name) const;
  // Value of +name=value (the last one given), or `def` when absent.
  std::string plusarg(std::string_view name, std::string_view def = "") const;
  // Numeric plusarg (decimal or 0x hex), `def` when absent; throws std::invalid_argument if bad.
  uint64_t plusarg_u64(std::string_view name, uint64_t def) const;
  const std::vector<std::pair<std::string, std::string>>& plusargs() const { return plusargs_; }

 private:
  friend class Component;
  friend class Phaser;

  uint64_t seed_;
  Rng root_rng_;
  ReportServer reports_;
  uint64_t cycle_ = 0;
  Phase phase_ = Phase::Construct;
  uint64_t objections_ = 0;
  std::vector<Component*> tops_;
  std::vector<std::pair<std::string, std::string>> plusargs_;
};

class Component {
 public:
  // A top-level component (usually the test).
  Component(Context& ctx, std::string name);
  // A child of `parent`; names are unique among siblings and contain no '.'.
  Component(Component& parent, std::string name);
  virtual ~Component();
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  Component* parent() const { return parent_; }
  const std::vector<Component*>& children() const { return children_; }
  // Descendant by path relative to this component ("agent.drv"), or nullptr.
  Component* find(std::string_view rel_path) const;

  // Creates a child owned by this component: create<Driver>("drv", args...).
  template <class T, class... Args>
  T& create(std::string name, Args&&... args) {
    auto p = std::make_unique<T>(*this, std::move(name), std::forward<Args>(args)...);
    T& ref = *p;
    owned_.push_back(std::move(p));
    return ref;
  }

  Context& ctx() const { return *ctx_; }
  ReportServer& reports() const { return ctx_->reports(); }
  Rng& rng() { return rng_; }
  uint64_t cycle() const { return ctx_->cycle(); }

  void info(std::string_view id, std::string_view text, int level = verbosity::kMedium) const {
    reports().info(path_, id, text, level);
  }
  void warning(std::string_view id, std::string_view text) const {
    reports().warning(path_, id, text);
  }
  void error(std::string_view id, std::string_view text) const {
    reports().error(path_, id, text);
  }
  [[noreturn]] void fatal(std::string_view id, std::string_view text) const {
    reports().fatal(path_, id, text);
  }

  // Objections keep the run phase going; dropping more than were raised is an error.
  void raise_objection(uint64_t n = 1);
  void drop_objection(uint64_t n = 1);
  uint64_t objection_count() const { return objections_; }

  // Indented tree of names, for debugging the topology.
  void print_tree(std::ostream& os, int indent = 0) const;

 protected:
  friend class Phaser;
  // Phase hooks, called by the Phaser:
  //   build          top-down (create children here)
  //   connect        bottom-up (connect ports)
  //   start_of_run   top-down, once before the first cycle (raise objections, start sequences)
  //   tick           every cycle, top-down, before the clock edge (drivers drive)
  //   sample         every cycle, top-down, after the inputs settle (monitors sample)
  //   end_of_run     bottom-up, once after the last cycle
  //   check          bottom-up
  //   report         bottom-up
  virtual void build() {}
  virtual void connect() {}
  virtual void start_of_run() {}
  virtual void tick() {}
  virtual void sample() {}
  virtual void end_of_run() {}
  virtual void check() {}
  virtual void report() {}

 private:
  void init(std::string name);

  Context* ctx_;
  Component* parent_;
  std::string name_;
  std::string path_;
  Rng rng_;
  std::vector<Component*> children_;
  std::vector<std::unique_ptr<Component>> owned_;
  uint64_t objections_ = 0;
};

}  // namespace srnic::verif::uvm
