// TestRegistry: creating, running and reporting one test; the command-line entry point.
#include "srnic/uvm/test.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <random>

namespace srnic::verif::uvm {

TestRegistry& TestRegistry::global() {
  static TestRegistry r;
  return r;
}

void TestRegistry::add(const std::string& name, TestFactory factory,
                       const std::string& description) {
  if (!tests_.emplace(name, Entry{std::move(factory), description}).second) {
    throw std::invalid_argument("test '" + name + "' registered twice");
  }
}

std::vector<std::string> TestRegistry::names() const {
  std::vector<std::string> v;
  for (const auto& kv : tests_) v.push_back(kv.first);
  return v;
}

void TestRegistry::list(std::ostream& os) const {
  for (const auto& [name, e] : tests_) {
    os << "  " << name << (e.description.empty() ? "" : "  - " + e.description) << '\n';
  }
}

int parse_verbosity(const std::string& s) {
  std::string u;
  for (const char c : s) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u == "NONE") return verbosity::kNone;
  if (u == "LOW") return verbosity::kLow;
  if (u == "MEDIUM") return verbosity::kMedium;
  if (u == "HIGH") return verbosity::kHigh;
  if (u == "FULL") return verbosity::kFull;
  if (u == "DEBUG") return verbosity::kDebug;
  if (!u.empty() && std::all_of(u.begin(), u.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      u.size() < 9) {
    return std::stoi(u);
  }
  return -1;
}

namespace {
std::string verbosity_name(int v) {
  switch (v) {
    case verbosity::kNone: return "NONE";
    case verbosity::kLow: return "LOW";
    case verbosity::kMedium: return "MEDIUM";
    case verbosity::kHigh: return "HIGH";
    case verbosity::kFull: return "FULL";
    case verbosity::kDebug: return "DEBUG";
    default: return std::to_string(v);
  }
}
}  // namespace

int TestRegistry::run(const std::string& name, uint64_t seed, const RunOptions& opts) const {
  std::ostream& out = opts.out ? *opts.out : std::cout;
  out << "SEED " << seed << "  test " << name << '\n';

  std::string reproduce = opts.program + " --test " + name + " --seed " + std::to_string(seed);
  if (opts.verbosity != verbosity::kMedium) reproduce += " --verbosity " + verbosity_name(opts.verbosity);
  for (const auto& [path, v] : opts.component_verbosity) {
    reproduce += " --verbosity-at " + path + "=" + verbosity_name(v);
  }
  if (opts.error_limit != RunOptions{}.error_limit) {
    reproduce += " --error-limit " + std::to_string(opts.error_limit);
  }
  for (const auto& [n, v] : opts.plusargs) reproduce += " +" + n + (v.empty() ? "" : "=" + v);

  const auto it = tests_.find(name);
  if (it == tests_.end()) {
    out << "unknown test '" << name << "'; registered tests:\n";
    list(out);
    out << "TEST FAILED: " << name << '\n' << "reproduce: " << reproduce << '\n';
    return 1;
  }

  Context ctx(seed, out);
  ReportServer& rs = ctx.reports();
  rs.set_verbosity(opts.verbosity);
  for (const auto& [path, v] : opts.component_verbosity) rs.set_verbosity(path, v);
  rs.set_error_limit(opts.error_limit);
  for (const auto& [n, v] : opts.plusargs) ctx.set_plusarg(n, v);

  std::string how = "not run";
  try {
    std::unique_ptr<Test> test = it->second.factory(ctx);
    Phaser phaser(*test);
    test->configure(phaser);
    phaser.run_all();
    how = std::string("run phase ended: ") + to_string(phaser.run_end()) + " after " +
          std::to_string(phaser.run_cycles()) + " cycles";
  } catch (const FatalError&) {
    how = "ended by FATAL at cycle " + std::to_string(ctx.cycle());
  } catch (const std::exception& e) {
    how = "ended by exception at cycle " + std::to_string(ctx.cycle());
    rs.error("", "EXCEPTION", e.what());
  }

  rs.summary();
  const bool pass = rs.failures() == 0;
  out << (pass ? "TEST PASSED: " : "TEST FAILED: ") << name << " (" << rs.count(Severity::Error)
      << " errors, " << rs.count(Severity::Fatal) << " fatals, " << rs.count(Severity::Warning)
      << " warnings; " << how << ")\n";
  out << "reproduce: " << reproduce << '\n';
  out.flush();
  return pass ? 0 : 1;
}

int TestRegistry::main(int argc, char** argv) const {
  CLI::App app{"srnic UVM-lite test runner"};
  std::string test;
  uint64_t seed = 0;
  std::string verb = "MEDIUM";
  std::vector<std::string> verb_at;
  RunOptions opts;
  bool list_only = false;
  app.add_option("--test", test, "test to run");
  auto* seed_opt = app.add_option("--seed", seed, "random seed (default: drawn and printed)");
  app.add_option("--verbosity", verb, "INFO threshold: NONE LOW MEDIUM HIGH FULL DEBUG or a number");
  app.add_option("--verbosity-at", verb_at, "PATH=LEVEL: threshold for a component subtree");
  app.add_option("--error-limit", opts.error_limit, "stop after this many errors (0 = never)");
  app.add_flag("--list", list_only, "list registered tests");
  // Plusargs (+name[=value]) are taken out before CLI11 sees the command line.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i > 0 && a.size() > 1 && a[0] == '+') {
      const size_t eq = a.find('=');
      opts.plusargs.emplace_back(a.substr(1, eq == std::string::npos ? std::string::npos : eq - 1),
                                 eq == std::string::npos ? "" : a.substr(eq + 1));
    } else {
      args.push_back(argv[i]);
    }
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (list_only) {
    list(std::cout);
    return 0;
  }
  if (test.empty()) {
    std::cerr << "--test is required; registered tests:\n";
    list(std::cerr);
    return 1;
  }
  opts.verbosity = parse_verbosity(verb);
  if (opts.verbosity < 0) {
    std::cerr << "bad --verbosity '" << verb << "'\n";
    return 1;
  }
  for (const std::string& pv : verb_at) {
    const size_t eq = pv.find('=');
    const int v = eq == std::string::npos ? -1 : parse_verbosity(pv.substr(eq + 1));
    if (v < 0) {
      std::cerr << "bad --verbosity-at '" << pv << "' (want PATH=LEVEL)\n";
      return 1;
    }
    opts.component_verbosity.emplace_back(pv.substr(0, eq), v);
  }
  if (seed_opt->count() == 0) {
    std::random_device rd;
    seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  opts.program = argc > 0 ? argv[0] : "uvm_test";
  return run(test, seed, opts);
}

int run_test(const std::string& name, uint64_t seed, int argc, char** argv) {
  RunOptions opts;
  if (argc > 0 && argv && argv[0]) opts.program = argv[0];
  return TestRegistry::global().run(name, seed, opts);
}

}  // namespace srnic::verif::uvm
