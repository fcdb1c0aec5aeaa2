// Test base and TestRegistry. A test is the top component of its tree; the registry creates it
// by name in a fresh Context, runs all phases, and prints the seed first, then the messages, the
// report summary, the verdict and, last, a one-line command that reproduces the run. The exit
// code is 0 when no ERROR or FATAL was reported, 1 otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "srnic/uvm/component.hpp"
#include "srnic/uvm/phaser.hpp"

namespace srnic::verif::uvm {

class Test : public Component {
 public:
  explicit Test(Context& ctx, std::string name = "test") : Component(ctx, std::move(name)) {}
  // Called once before build: set drain time, watchdog, and the settle/edge hooks that step
  // the design under test.
  virtual void configure(Phaser& phaser) { (void)phaser; }
};

using TestFactory = std::function<std::unique_ptr<Test>(Context&)>;

struct RunOptions {
  std::string program = "uvm_test";  // argv[0], used in the reproduce command
  int verbosity = verbosity::kMedium;
  std::vector<std::pair<std::string, int>> component_verbosity;  // path, threshold
  uint64_t error_limit = 10;                                      // 0 = no limit
  std::ostream* out = nullptr;                                    // nullptr = std::cout
  std::vector<std::pair<std::string, std::string>> plusargs;      // +name=value, in order
};

class TestRegistry {
 public:
  // The registry that SRNIC_UVM_TEST adds to.
  static TestRegistry& global();

  void add(const std::string& name, TestFactory factory, const std::string& description = "");
  template <class T>
  void add(const std::string& name, const std::string& description = "") {
    add(name, [](Context& ctx) { return std::make_unique<T>(ctx); }, description);
  }
  bool contains(const std::string& name) const { return tests_.count(name) != 0; }
  std::vector<std::string> names() const;
  void list(std::ostream& os) const;

  // Runs one test; 0 = passed, 1 = failed (any ERROR/FATAL, or unknown test name).
  int run(const std::string& name, uint64_t seed, const RunOptions& opts = {}) const;
  // Command line: --test NAME [--seed N] [--verbosity LEVEL] [--verbosity-at PATH=LEVEL]...
  //               [--error-limit N] [--list] [+name[=value]]... Without --seed a random seed is
  //               drawn (and printed). Plusargs reach the test through Context::plusarg().
  int main(int argc, char** argv) const;

 private:
  struct Entry {
    TestFactory factory;
    std::string description;
  };
  std::map<std::string, Entry> tests_;
};

// Runs `name` from the global registry with `seed`; argv[0] names the program.
int run_test(const std::string& name, uint64_t seed, int argc, char** argv);

// Parses "NONE", "LOW", "MEDIUM", "HIGH", "FULL", "DEBUG" (any case) or a number; -1 if invalid.
int parse_verbosity(const std::string& s);

template <class T>
struct RegisterTest {
  RegisterTest(const char* name, const char* description = "") {
    TestRegistry::global().add<T>(name, description);
  }
};

}  // namespace srnic::verif::uvm

// Registers test class CLASS (constructible from Context&) under NAME in the global registry.
#define SRNIC_UVM_TEST(CLASS, NAME) \
  static const ::srnic::verif::uvm::RegisterTest<CLASS> srnic_uvm_register_##CLASS{NAME}
