// srnic-sim: perftest-style full-chip simulation of two srnic NICs back to back. Prints a
// perftest-like table, or with --json one JSON object on stdout. Exit status: 0 pass, 1 a run
// or data-check failure (the reproducing command is printed), 2 bad command line.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "srnic/sim/world.hpp"
#include "workload_cli.hpp"
#include "workload_run.hpp"

using namespace srnic::sim;

namespace {

// Minimal JSON writer: objects, arrays, numbers, strings, booleans, null.
class Json {
 public:
  explicit Json(std::ostream& o) : o_(o) {}
  Json& begin_obj(const char* key = nullptr) { return open(key, '{'); }
  Json& end_obj() { return close('}'); }
  Json& begin_arr(const char* key = nullptr) { return open(key, '['); }
  Json& end_arr() { return close(']'); }
  Json& kv(const char* key, const std::string& v) { return raw(key, quote(v)); }
  Json& kv(const char* key, const char* v) { return raw(key, quote(v)); }
  Json& kv(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
  Json& kv(const char* key, double v) { return raw(key, num(v)); }
  Json& kv(const char* key, uint64_t v) { return raw(key, std::to_string(v)); }
  Json& kv(const char* key, uint32_t v) { return raw(key, std::to_string(v)); }
  Json& null(const char* key) { return raw(key, "null"); }
  Json& val(uint64_t v) { return raw(nullptr, std::to_string(v)); }

 private:
  static std::string quote(const std::string& s) {
    std::string r = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') {
        r += '\\';
        r += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        r += b;
      } else {
        r += c;
      }
    }
    return r + "\"";
  }
  static std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
  }
  void sep(const char* key) {
    if (!first_) o_ << ",";
    first_ = false;
    if (key) o_ << quote(key) << ":";
  }
  Json& raw(const char* key, const std::string& v) {
    sep(key);
    o_ << v;
    return *this;
  }
  Json& open(const char* key, char c) {
    sep(key);
    o_ << c;
    first_ = true;
    return *this;
  }
  Json& close(char c) {
    o_ << c;
    first_ = false;
    return *this;
  }
  std::ostream& o_;
  bool first_ = true;
};

void pcie_json(Json& j, const HostReport& h) {
  const srnic::sim::PcieStats& p = h.pcie;
  j.begin_obj();
  j.kv("up_tlps", p.up_tlps).kv("up_wire_bytes", p.up_wire_bytes).kv("up_payload_bytes", p.up_payload_bytes);
  j.kv("down_tlps", p.down_tlps).kv("down_wire_bytes", p.down_wire_bytes).kv("down_payload_bytes", p.down_payload_bytes);
  j.kv("up_busy_us", p.up_busy_ns / 1000).kv("down_busy_us", p.down_busy_ns / 1000);
  j.kv("mrd_tlps", p.mrd_tlps).kv("mwr_tlps", p.mwr_tlps).kv("cpl_tlps", p.cpl_tlps).kv("msi_tlps", p.msi_tlps);
  j.kv("read_bursts", p.read_bursts).kv("read_bytes", p.read_bytes);
  j.kv("write_bursts", p.write_bursts).kv("write_bytes", p.write_bytes);
  j.kv("mmio_writes", p.mmio_writes).kv("mmio_reads", p.mmio_reads).kv("irqs", p.irqs);
  j.kv("w_backpressure_cycles", p.w_backpressure_cycles);
  j.kv("read_latency_p50_ns", h.pcie_read_p50_ns).kv("read_latency_p99_ns", h.pcie_read_p99_ns);
  j.end_obj();
}

void eth_json(Json& j, const HostReport& h) {
  const srnic::sim::EthStats& e = h.eth;
  j.begin_obj();
  j.kv("tx_frames", e.tx_frames).kv("tx_bytes", e.tx_bytes).kv("tx_wire_bytes", e.tx_wire_bytes);
  j.kv("tx_oversize", e.tx_oversize).kv("tx_aborted", e.tx_aborted);
  j.kv("rx_frames", e.rx_frames).kv("rx_bytes", e.rx_bytes);
  j.kv("tx_utilisation", h.eth_tx_utilisation).kv("link_lost", h.link_lost).kv("pause_requests", h.pause_requests);
  j.end_obj();
}

// The link impairments: the rules, and per direction (frames host `from` sends) the
// configuration in effect and what the link did.
void impairments_json(Json& j, const RunConfig& c, const RunResult& r) {
  const LinkConfig lc = link_config(c);
  j.begin_obj("impairments");
  j.kv("active", impairs(c));
  j.begin_arr("drop");
  for (const DropRule& d : lc.drop_rules) j.kv(nullptr, d.to_string());
  j.end_arr();
  j.begin_arr("directions");
  for (int d = 0; d < 2; ++d) {
    const Impairments im = lc.direction(d);
    j.begin_obj();
    j.kv("from", uint32_t(d)).kv("to", uint32_t(1 - d));
    j.begin_obj("config");
    j.kv("loss", im.loss);
    if (im.burst.enabled()) {
      const BurstLoss& b = im.burst;
      j.begin_obj("burst_loss");
      j.kv("p_good_bad", b.p_good_bad).kv("p_bad_good", b.p_bad_good).kv("loss_good", b.loss_good);
      j.kv("loss_bad", b.loss_bad).kv("mean_loss", b.mean_loss()).kv("mean_burst", b.mean_burst());
      j.end_obj();
    } else {
      j.null("burst_loss");
    }
    j.kv("reorder", im.reorder).kv("reorder_delay_ns", im.reorder_delay_ns);
    j.kv("dup", im.dup).kv("dup_gap_ns", im.dup_gap_ns).kv("jitter_ns", im.jitter_ns).kv("corrupt", im.corrupt);
    j.end_obj();
    const LinkStats s = size_t(d) < r.hosts.size() ? r.hosts[size_t(d)].link : LinkStats{};
    j.begin_obj("counters");
    j.kv("frames", s.frames).kv("lost", s.lost).kv("lost_random", s.lost_random).kv("lost_burst", s.lost_burst);
    j.kv("lost_filter", s.lost_filter).kv("reordered", s.reordered).kv("duplicated", s.duplicated);
    j.kv("corrupted", s.corrupted).kv("jittered", s.jittered);
    j.end_obj();
    j.end_obj();
  }
  j.end_arr();
  j.end_obj();
}

void print_json(const RunConfig& c, const RunResult& r) {
  std::ostringstream o;
  Json j(o);
  j.begin_obj();
  j.kv("op", to_string(c.op)).kv("size", c.size).kv("qps", c.qps).kv("iters", c.iters).kv("mtu", c.mtu);
  j.kv("mode", to_string(c.mode)).kv("loss", c.loss).kv("seed", c.seed).kv("latency_mode", c.latency);
  j.kv("mixed", c.mixed).kv("clock_mhz", c.clock_mhz).kv("pcie_latency_ns", c.pcie_latency_ns);
  j.kv("link_delay_ns", c.link_delay_ns).kv("tx_depth", c.tx_depth).kv("signal_every", c.signal_every);
  j.kv("post_batch", c.post_batch).kv("pcie_reorder_writes", to_string(c.pcie_reorder));
  if (c.fault != RunConfig::Fault::None) j.kv("inject_fault", to_string(c.fault)).kv("inject_at", c.inject_at);
  j.kv("model", World::model_name());
  j.kv("goodput_gbps", r.goodput_gbps);
  j.kv("goodput_limit_gbps", c.mixed ? 0.0 : goodput_limit_gbps(c.op, c.size, c.mtu));
  j.kv("msg_rate_mrps", r.msg_rate_mrps);
  if (r.has_latency) {
    const LatencyStats& l = r.latency;
    j.begin_obj("latency_us");
    j.kv("p50", l.p50_us).kv("p99", l.p99_us).kv("min", l.min_us).kv("max", l.max_us).kv("mean", l.mean_us);
    j.kv("samples", l.samples).kv("metric", c.op == Op::Read ? "post to completion" : "round trip / 2");
    j.end_obj();
  } else {
    j.null("latency_us");
  }
  j.kv("sim_time_us", r.sim_time_us).kv("sim_cycles", r.sim_cycles).kv("wall_s", r.wall_s);
  j.kv("cycles_per_s", r.cycles_per_s).kv("completions", r.completions);
  j.kv("expected_completions", r.expected_completions).kv("errors", r.errors).kv("data_ok", r.data_ok);
  j.kv("data_checked_messages", r.checked_messages).kv("data_checked_bytes", r.checked_bytes);
  j.kv("cqe_data_checks", r.cqe_checked_messages);
  j.kv("dma_write_bytes_checked", r.dma_write_bytes).kv("dma_stray_writes", r.dma_stray_writes);
  j.kv("retransmits", r.retransmits).kv("wire_retransmits", r.wire_retransmits);
  j.kv("bytes", r.bytes).kv("messages", r.messages);
  j.kv("measured_us", r.t_last_ns > r.t_first_ns ? (r.t_last_ns - r.t_first_ns) / 1000.0 : 0.0);
  j.kv("frames", r.frames).kv("protocol_violations", r.protocol_violations);
  j.kv("first_protocol_violation", r.first_protocol_violation);
  j.kv("bus_violations", r.bus_violations).kv("first_bus_violation", r.first_bus_violation);
  if (r.failure.empty())
    j.null("failure");
  else
    j.kv("failure", r.failure);
  j.kv("scoreboard", r.scoreboard_summary);
  impairments_json(j, c, r);
  j.kv("slots", r.slots).kv("inflight", r.inflight).kv("stride", r.stride);
  j.begin_arr("qpns");
  for (const HostReport& h : r.hosts) {
    j.begin_arr();
    for (uint32_t q : h.qpns) j.val(q);
    j.end_arr();
  }
  j.end_arr();
  j.begin_arr("sq_psns");
  for (const HostReport& h : r.hosts) {
    j.begin_arr();
    for (uint32_t q : h.sq_psns) j.val(q);
    j.end_arr();
  }
  j.end_arr();
  j.begin_arr("sq_bases");
  for (const HostReport& h : r.hosts) {
    j.begin_arr();
    for (uint64_t b : h.sq_bases) j.val(b);
    j.end_arr();
  }
  j.end_arr();
  j.begin_arr("pcie");
  for (const HostReport& h : r.hosts) pcie_json(j, h);
  j.end_arr();
  j.begin_arr("eth");
  for (const HostReport& h : r.hosts) eth_json(j, h);
  j.end_arr();
  j.begin_arr("counters");
  for (const HostReport& h : r.hosts) {
    j.begin_obj();
    for (const auto& [name, v] : h.counters) j.kv(name.c_str(), v);
    j.end_obj();
  }
  j.end_arr();
  j.end_obj();
  std::cout << o.str() << "\n";
}

const char* op_title(Op op) {
  switch (op) {
    case Op::Write: return "RDMA_Write";
    case Op::Read: return "RDMA_Read";
    case Op::Send: return "Send";
  }
  return "?";
}

void print_table(const RunConfig& c, const RunResult& r) {
  const char* line = "---------------------------------------------------------------------------------------";
  std::printf("%s\n", line);
  std::printf("                    %s %s Test (srnic-sim, %s)\n", op_title(c.op), c.latency ? "Latency" : "BW",
              World::model_name());
  std::printf(" Number of qps   : %-10u Mode      : %s%s\n", c.latency ? 1u : c.qps, to_string(c.mode),
              c.mixed ? "  (mixed sizes)" : "");
  std::printf(" Mtu             : %-10u Clock     : %g MHz\n", c.mtu, c.clock_mhz);
  std::printf(" TX depth        : %-10u Slots/QP  : %u (in flight %u)\n", c.tx_depth, r.slots, r.inflight);
  std::printf("%s\n", line);
  if (r.has_latency) {
    const LatencyStats& l = r.latency;
    std::printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_99%%[usec]\n");
    std::printf(" %-6llu %-11llu    %-11.2f    %-11.2f  %-15.2f    %-11.2f    %-11.2f\n",
                static_cast<unsigned long long>(c.size), static_cast<unsigned long long>(c.iters), l.min_us,
                l.max_us, l.p50_us, l.mean_us, l.p99_us);
  } else {
    std::printf(" #bytes     #iterations    BW average[Gb/sec]   BW limit[Gb/sec]   MsgRate[Mpps]\n");
    const double lim = c.mixed ? 0.0 : goodput_limit_gbps(c.op, c.size, c.mtu);
    std::printf(" %-10llu %-14llu %-20.2f %-18.2f %-.6f\n", static_cast<unsigned long long>(c.size),
                static_cast<unsigned long long>(c.iters), r.goodput_gbps, lim, r.msg_rate_mrps);
  }
  std::printf("%s\n", line);
  std::printf(" data check: %s (completions %llu/%llu, errors %llu; %s)\n", r.data_ok ? "OK" : "FAILED",
              static_cast<unsigned long long>(r.completions),
              static_cast<unsigned long long>(r.expected_completions), static_cast<unsigned long long>(r.errors),
              r.scoreboard_summary.c_str());
  std::printf(" messages checked: %llu (%llu bytes) when polled, %llu when their CQE landed; DMA writes: %llu bytes checked, "
              "%llu stray\n",
              static_cast<unsigned long long>(r.checked_messages), static_cast<unsigned long long>(r.checked_bytes),
              static_cast<unsigned long long>(r.cqe_checked_messages),
              static_cast<unsigned long long>(r.dma_write_bytes), static_cast<unsigned long long>(r.dma_stray_writes));
  std::printf(" wire: %llu frames, %llu protocol violations, %llu retransmits, %llu bus violations\n",
              static_cast<unsigned long long>(r.frames), static_cast<unsigned long long>(r.protocol_violations),
              static_cast<unsigned long long>(r.retransmits), static_cast<unsigned long long>(r.bus_violations));
  if (impairs(c))
    for (size_t h = 0; h < r.hosts.size(); ++h) {
      const LinkStats& s = r.hosts[h].link;
      std::printf(" link %zu->%zu: %llu frames, lost %llu (random %llu, burst %llu, filter %llu), reordered %llu, "
                  "duplicated %llu, corrupted %llu, jittered %llu\n",
                  h, 1 - h, static_cast<unsigned long long>(s.frames), static_cast<unsigned long long>(s.lost),
                  static_cast<unsigned long long>(s.lost_random), static_cast<unsigned long long>(s.lost_burst),
                  static_cast<unsigned long long>(s.lost_filter), static_cast<unsigned long long>(s.reordered),
                  static_cast<unsigned long long>(s.duplicated), static_cast<unsigned long long>(s.corrupted),
                  static_cast<unsigned long long>(s.jittered));
    }
  std::printf(" sim: %llu cycles, %.2f us simulated, %.2f s wall, %.0f cycles/s\n",
              static_cast<unsigned long long>(r.sim_cycles), r.sim_time_us, r.wall_s, r.cycles_per_s);
  if (!r.failure.empty()) std::printf(" failure: %s\n", r.failure.c_str());
}

}  // namespace

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
  RunResult r;
  try {
    r = run_workload(cfg);
  } catch (const std::exception& e) {
    std::cerr << "srnic-sim: error: " << e.what() << "\n"
              << "reproduce: " << reproduce_command(cfg) << "\n";
    return 1;
  }
  if (cfg.json)
    print_json(cfg, r);
  else
    print_table(cfg, r);
  const bool pass = r.failure.empty() && r.data_ok && r.protocol_violations == 0 && r.bus_violations == 0;
  if (!pass) {
    std::string why = r.failure;
    if (why.empty() && r.protocol_violations) why = "protocol: " + r.first_protocol_violation;
    if (why.empty() && r.bus_violations)
      why = std::to_string(r.bus_violations) + " PCIe/Ethernet bus-rule violations, first: " + r.first_bus_violation;
    std::cerr << "srnic-sim: FAILED: " << why << "\n"
              << "reproduce: " << reproduce_command(cfg) << "\n";
    return 1;
  }
  return 0;
}
