// srnic-sim's reports: one JSON object per run (nlohmann::json, schema kJsonSchemaVersion, keys in
// sim/README.md) and perftest's text layout (header, columns, one row per run) followed by
// srnic-sim's own checks. Independent of Verilator, so the layout and the schema are unit-tested.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload_run.hpp"

namespace srnic::sim {

// Version 2: labelled hosts, structured scoreboard, per-QP results and fairness, latency stdev,
// percentiles and histogram, perftest's columns. (Version 1, unnumbered, had per-host arrays.)
constexpr int kJsonSchemaVersion = 2;

// One run.
nlohmann::json run_json(const RunConfig& c, const RunResult& r, const std::string& model);
// -a: {"schema_version", "tool", "all_sizes": true, "data_ok", "runs": [one object per size]}.
nlohmann::json sweep_json(const std::vector<std::pair<RunConfig, RunResult>>& runs, const std::string& model);

// Bandwidth in perftest's unit: MB/sec (2^20 bytes per second), or Gb/sec with --report_gbits.
double bw_in_unit(const RunConfig& c, double gbps);

// perftest's layout: the header (test, parameters, QP addresses) with the column titles, one
// row per run, then the closing line; print_checks adds what srnic-sim checked in a run.
void print_header(std::FILE* f, const RunConfig& c, const RunResult& r, const std::string& model);
void print_row(std::FILE* f, const RunConfig& c, const RunResult& r);
void print_footer(std::FILE* f);
void print_checks(std::FILE* f, const RunConfig& c, const RunResult& r);

// Why a run failed (data, protocol or bus rules), empty when it passed.
std::string run_failure(const RunResult& r);

}  // namespace srnic::sim
