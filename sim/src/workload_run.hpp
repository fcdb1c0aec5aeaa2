// Runs a RunConfig on a two-host World: sets up both NICs through the host library, feeds the
// same work requests to the reference model, checks every completion as it is polled and all
// buffers at the end, and measures throughput and latency in simulated time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "srnic/sim/eth_mac.hpp"
#include "srnic/sim/pcie_bfm.hpp"
#include "stats.hpp"
#include "workload.hpp"

namespace srnic::sim {

struct HostReport {
  std::vector<std::pair<std::string, uint32_t>> counters;  // NIC counters (abi::counter_name)
  bool counters_read = false;
  std::string nic_fatal;           // NIC_STATUS at the end: empty, or the fatal error it names
  PcieStats pcie;
  double pcie_read_p50_ns = 0, pcie_read_p99_ns = 0;
  EthStats eth;
  double eth_tx_utilisation = 0;  // over the measured interval
  uint64_t link_lost = 0;         // frames this host sent that the link dropped
  LinkStats link;                 // what the link did to the frames this host sent
  uint64_t pause_requests = 0;    // times this host's NIC asked its link partner to pause
  std::vector<uint32_t> qpns;
  std::vector<uint32_t> sq_psns;
  std::vector<uint64_t> sq_bases;  // SQ ring address per QP
  std::vector<QpSide> sides;       // per QP: QPN, regions and their keys
};

// What one QP did (both hosts' messages on it with -b). Messages and bytes are those of
// successful requester WRs; with -D only those completed within the duration.
struct QpResult {
  uint64_t messages = 0, bytes = 0;
  uint64_t completions = 0;         // every completion of the QP, both hosts, send and receive
  double first_post_ns = -1, last_done_ns = -1;
  double goodput_gbps = 0, msg_rate_mrps = 0;  // over the QP's own interval (-D: the duration)
};

// What one host's requests did (perftest's local side is host 0, the remote side host 1, which
// posts only with -b): messages and bytes as QpResult, rates over the run's interval (the same
// as RunResult's, so the directions add up to the run), BW peak over its own messages.
struct DirResult {
  uint64_t messages = 0, bytes = 0;
  double goodput_gbps = 0, msg_rate_mrps = 0;
  double peak_gbps = 0, peak_msg_rate_mrps = 0;
};

// One period of --run_infinitely: the messages completed within it (both hosts with -b; host
// 0's alone in local_messages) over the period.
struct PeriodResult {
  uint64_t messages = 0, local_messages = 0, bytes = 0;
  double goodput_gbps = 0, msg_rate_mrps = 0;
};

// The scoreboard's counts: completions compared with the reference model, bytes of the final
// memory compared (or left out as undetermined), mismatches and the first one.
struct ScoreboardReport {
  uint64_t completions_matched = 0, bytes_matched = 0, bytes_skipped = 0, mismatches = 0;
  std::string first_mismatch;
};

// What host 0's Weir layer did (--weir): srnic/weir.hpp.
struct WeirReport {
  double rate_gbps = 0;        // doorbell rate at the end of the run
  double ewma_delay_ns = 0;    // WQE life cycle, filtered
  double base_delay_ns = 0;    // shortest life cycle seen
  uint32_t active_qps = 0, max_active_qps = 0;
  uint64_t posted = 0, wqes_rung = 0, doorbells = 0, deferred = 0, slices = 0, hidden_cqes = 0;
  uint64_t increases = 0, holds = 0, decreases = 0, timestamp_syncs = 0;
};

struct RunResult {
  bool finished = false;       // every expected completion arrived
  std::string failure;         // first reason the run failed, empty if none
  uint64_t completions = 0, expected_completions = 0;
  uint64_t errors = 0;         // completions with a status other than SUCCESS
  bool data_ok = false;        // scoreboard clean, memory as predicted, all completions arrived,
                               // every message's own bytes in its slot, no stray DMA write
  uint64_t checked_messages = 0, checked_bytes = 0;  // messages compared with their bytes when polled
  uint64_t cqe_checked_messages = 0;  // messages whose bytes were in place when their CQE landed
  uint64_t dma_write_bytes = 0;       // NIC DMA write bytes checked against the allowed ranges
  uint64_t dma_stray_writes = 0;      // DMA write beats outside them
  std::string first_mismatch;
  std::string scoreboard_summary;
  ScoreboardReport scoreboard;
  uint64_t bytes = 0, messages = 0;  // successful requester messages (-D: within the duration)
  uint64_t posted = 0;               // messages posted, both hosts
  double t_first_ns = 0, t_last_ns = 0;
  double measured_ns = 0;            // the interval goodput is measured over
  double goodput_gbps = 0, msg_rate_mrps = 0;
  // perftest's BW peak: the fastest run of consecutive messages (stats.hpp); not computed with -N.
  double peak_gbps = 0, peak_msg_rate_mrps = 0;
  bool has_peak = false;
  std::array<DirResult, 2> dirs;       // per requesting host
  std::vector<PeriodResult> periods;   // --run_infinitely: one per period
  uint64_t checked_imms = 0;           // receive completions whose immediate was the message's own
  std::vector<QpResult> per_qp;
  double jain_index = 1;  // Jain's fairness index over the QPs' goodput
  bool has_latency = false;
  LatencyStats latency;
  uint64_t sim_cycles = 0;
  double sim_time_us = 0, wall_s = 0, cycles_per_s = 0;
  double setup_us = 0, setup_wall_s = 0;  // before the first WR is posted: simulated, wall
  uint64_t frames = 0, protocol_violations = 0;
  uint64_t retransmits = 0;       // NIC counter TX_RETRANSMIT summed over the hosts
  uint64_t wire_retransmits = 0;  // request frames the protocol checker saw sent again
  uint64_t wire_rewinds = 0;      // times a flow's PSN stepped back on the wire (requests and responses)
  std::string first_protocol_violation;
  uint64_t bus_violations = 0;  // PCIe / Ethernet bus-rule reports of the BFMs
  // The longest cable the RX buffer's pause headroom covers at this MTU (lossless_cable_ns):
  // up to it, a frame dropped for lack of RX buffer (RX_DROP_OVERFLOW) fails the run.
  double lossless_cable_ns = 0;
  uint64_t rx_overflow_drops = 0;  // RX_DROP_OVERFLOW summed over the hosts
  uint64_t ack_timeouts = 0, rnr_naks = 0;  // ACK_TIMEOUT, RNR_WAIT summed over the hosts
  std::string first_bus_violation;
  uint32_t slots = 0, inflight = 0;
  uint64_t stride = 0;
  std::vector<HostReport> hosts;
  bool has_weir = false;
  WeirReport weir;
};

// Runs the workload. Throws std::runtime_error (or srnic::sw::Error) if setup fails.
RunResult run_workload(const RunConfig& cfg);

}  // namespace srnic::sim
