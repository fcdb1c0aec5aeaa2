// Command line of srnic-sim (CLI11): options, validation with one-line messages, and the
// canonical command that reproduces a run.
#pragma once

#include <string>

#include "workload.hpp"

namespace srnic::sim {

// Result of parse_cli: run the simulation, or exit with `code` after printing `message`
// (help text on stdout for code 0, one error line on stderr for code 2).
// -V/--version: version set, code 0, the caller prints the build (srnic_sim.cpp knows it).
struct CliResult {
  bool run = false;
  int code = 0;
  std::string message;
  bool version = false;
};

// Parses and validates argv into cfg. Bad input gives code 2 and a single-line message.
CliResult parse_cli(int argc, const char* const* argv, RunConfig& cfg);

// The srnic-sim command line that reproduces cfg (every option that affects the run).
std::string reproduce_command(const RunConfig& cfg);

}  // namespace srnic::sim
