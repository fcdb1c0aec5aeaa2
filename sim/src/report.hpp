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
// perftest's #iterations: the messages of the host's requests (host 0, perftest's local side, by
// default) over all its QPs: -n x -q, or with -D those completed within the duration. Latency: -n.
uint64_t iterations(const RunConfig& c, const RunResult& r, uint32_t host = 0);
// perftest's test title: "RDMA_Write BW Test", "Send Bidirectional BW Test", "RDMA_Read Latency Test".
std::string test_title(const RunConfig& c);
const char* output_name(RunConfig::Output o);

// perftest's layout: the header (test, parameters, QP addresses, the wall-time estimate: the
// run's own unless `estimate` is given) with the column titles, one row per run (with
// --run_infinitely one per period), then the closing line; print_directions adds perftest's
// --report_both sections (each host's requests, one row per run); print_checks adds what
// srnic-sim checked in a run. print_value is perftest's --output: one number per row.
void print_header(std::FILE* f, const RunConfig& c, const RunResult& r, const std::string& model,
                  const WallEstimate* estimate = nullptr);
void print_row(std::FILE* f, const RunConfig& c, const RunResult& r);
void print_directions(std::FILE* f, const std::vector<std::pair<RunConfig, RunResult>>& runs);
void print_value(std::FILE* f, const RunConfig& c, const RunResult& r);
void print_footer(std::FILE* f);
void print_checks(std::FILE* f, const RunConfig& c, const RunResult& r);

// Why a run failed (data, protocol or bus rules), empty when it passed.
std::string run_failure(const RunResult& r);

}  // namespace srnic::sim
