// srnic-sim: perftest-style full-chip simulation of two srnic NICs back to back. Prints
// perftest's table (one row per size with -a) followed by srnic-sim's checks, or with --json one
// JSON object on stdout. Exit status: 0 pass, 1 a run or data-check failure (the reproducing
// command is printed), 2 bad command line.
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "report.hpp"
#include "srnic/sim/world.hpp"
#include "workload_cli.hpp"
#include "workload_run.hpp"

using namespace srnic::sim;

int main(int argc, char** argv) {
  RunConfig cfg;
  const CliResult cli = parse_cli(argc, argv, cfg);
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
  (cfg.json ? std::cerr : std::cout) << "seed: " << cfg.seed << std::endl;
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
    if (!cfg.json) {
      if (runs.empty()) print_header(stdout, one, r, model);
      print_row(stdout, one, r);
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
  } else {
    print_footer(stdout);
    for (const auto& [c, r] : runs) print_checks(stdout, c, r);
  }
  return pass ? 0 : 1;
}
