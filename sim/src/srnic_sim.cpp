// srnic-sim: perftest-style full-chip simulation of two srnic NICs back to back. Prints
// perftest's table (one row per size with -a, per period with --run_infinitely, per direction
// too with --report_both) followed by srnic-sim's checks, with --output only the numbers, or
// with --json one JSON object on stdout. -V prints the build. Exit status: 0 pass, 1 a run or
// data-check failure (the reproducing command is printed), 2 bad command line.
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "report.hpp"
#include "srnic/sim/world.hpp"
#include "workload_cli.hpp"
#include "workload_run.hpp"

// The commit the build was made from (sim/CMakeLists.txt writes the header at build time).
#if __has_include("srnic_build_info.h")
#include "srnic_build_info.h"
#endif
#ifndef SRNIC_BUILD_COMMIT
#define SRNIC_BUILD_COMMIT "unknown"
#define SRNIC_BUILD_RTL_COMMIT "unknown"
#define SRNIC_BUILD_TREE "unknown"
#endif
#ifndef SRNIC_SIM_NAME
#define SRNIC_SIM_NAME "srnic-sim"
#endif
#ifndef SRNIC_BUILD_TYPE
#define SRNIC_BUILD_TYPE ""
#endif
#ifndef SRNIC_VERILATOR_VERSION
#define SRNIC_VERILATOR_VERSION "unknown"
#endif

using namespace srnic::sim;

namespace {

std::string version_line() {
#if defined(__clang__)
  const std::string compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  const std::string compiler = "g++ " __VERSION__;
#else
  const std::string compiler = "unknown compiler";
#endif
  std::string c = compiler;
  while (!c.empty() && c.back() == ' ') c.pop_back();
  const std::string type = SRNIC_BUILD_TYPE;
  return std::string(SRNIC_SIM_NAME) + " version: commit " + SRNIC_BUILD_COMMIT + " (working tree " +
         SRNIC_BUILD_TREE + " when built), RTL last changed in " + SRNIC_BUILD_RTL_COMMIT + "; model " +
         World::model_name() + " (Verilator " + SRNIC_VERILATOR_VERSION + "); " +
         (type.empty() ? std::string() : type + " build, ") + c;
}

}  // namespace

int main(int argc, char** argv) {
  RunConfig cfg;
  const CliResult cli = parse_cli(argc, argv, cfg);
  if (cli.version) {
    std::cout << version_line() << "\n";
    return 0;
  }
  if (!cli.run) {
    if (cli.code == 0)
      std::cout << cli.message;
    else
      std::cerr << cli.message << "\n";
    return cli.code;
  }
  if (!cfg.trace.empty() && !World::trace_supported()) {
    std::cerr << "srnic-sim: --trace needs the debug build (srnic-sim-debug, configure with "
                 "-DSRNIC_SIM_DEBUG=ON); this is the fast build ("
              << World::model_name() << ") without tracing\n";
    return 2;
  }
  const bool full = !cfg.json && cfg.output == RunConfig::Output::Full;
  (full ? std::cout : std::cerr) << "seed: " << cfg.seed << std::endl;
  const WallEstimate est = estimate_wall(cfg);
  if (est.wall_s > 60)
    std::cerr << "srnic-sim: this run should take about " << human_seconds(est.wall_s) << " of wall time ("
              << (est.lower_bound ? "at least " : "") << human_seconds(est.sim_us / 1e6) << " simulated)\n";
  // One simulation per size: the given one, or with -a each of perftest's sizes.
  const std::vector<uint64_t> sizes = cfg.all_sizes ? perftest_sizes() : std::vector<uint64_t>{cfg.size};
  const std::string model = World::model_name();
  std::vector<std::pair<RunConfig, RunResult>> runs;
  bool pass = true;
  for (uint64_t size : sizes) {
    RunConfig one = cfg;
    one.size = size;
    one.all_sizes = false;
    if (one.duration_us > 0) one.iters = duration_iters(one);
    RunResult r;
    try {
      r = run_workload(one);
    } catch (const std::exception& e) {
      std::cerr << "srnic-sim: error: " << e.what() << "\n"
                << "reproduce: " << reproduce_command(one) << "\n";
      return 1;
    }
    if (full) {
      if (runs.empty()) print_header(stdout, one, r, model, &est);
      print_row(stdout, one, r);
    } else if (!cfg.json) {
      print_value(stdout, one, r);
    }
    if (const std::string why = run_failure(r); !why.empty()) {
      pass = false;
      std::cerr << "srnic-sim: FAILED" << (cfg.all_sizes ? " (size " + std::to_string(size) + ")" : "") << ": "
                << why << "\n"
                << "reproduce: " << reproduce_command(one) << "\n";
    }
    runs.emplace_back(one, std::move(r));
  }
  if (cfg.json) {
    const nlohmann::json j = cfg.all_sizes ? sweep_json(runs, model) : run_json(runs[0].first, runs[0].second, model);
    std::cout << j.dump() << "\n";
  } else if (full) {
    if (cfg.report_both) print_directions(stdout, runs);
    print_footer(stdout);
    for (const auto& [c, r] : runs) print_checks(stdout, c, r);
  }
  return pass ? 0 : 1;
}
