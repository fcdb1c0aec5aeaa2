// srnic-sim's reports (see report.hpp).
#include "report.hpp"

#include <algorithm>
#include <cinttypes>

#include "srnic/abi.hpp"

namespace srnic::sim {

using nlohmann::json;

namespace {

json pcie_json(const HostReport& h) {
  const PcieStats& p = h.pcie;
  return json{{"up_tlps", p.up_tlps},
              {"up_wire_bytes", p.up_wire_bytes},
              {"up_payload_bytes", p.up_payload_bytes},
              {"down_tlps", p.down_tlps},
              {"down_wire_bytes", p.down_wire_bytes},
              {"down_payload_bytes", p.down_payload_bytes},
              {"up_busy_us", p.up_busy_ns / 1000},
              {"down_busy_us", p.down_busy_ns / 1000},
              {"mrd_tlps", p.mrd_tlps},
              {"mwr_tlps", p.mwr_tlps},
              {"cpl_tlps", p.cpl_tlps},
              {"msi_tlps", p.msi_tlps},
              {"read_bursts", p.read_bursts},
              {"read_bytes", p.read_bytes},
              {"write_bursts", p.write_bursts},
              {"write_bytes", p.write_bytes},
              {"mmio_writes", p.mmio_writes},
              {"mmio_reads", p.mmio_reads},
              {"irqs", p.irqs},
              {"w_backpressure_cycles", p.w_backpressure_cycles},
              {"rd_err_bursts", p.rd_err_bursts},
              {"rd_err_beats", p.rd_err_beats},
              {"wr_err_bursts", p.wr_err_bursts},
              {"read_latency_p50_ns", h.pcie_read_p50_ns},
              {"read_latency_p99_ns", h.pcie_read_p99_ns}};
}

json eth_json(const HostReport& h) {
  const EthStats& e = h.eth;
  return json{{"tx_frames", e.tx_frames},         {"tx_bytes", e.tx_bytes},
              {"tx_wire_bytes", e.tx_wire_bytes}, {"tx_oversize", e.tx_oversize},
              {"tx_aborted", e.tx_aborted},       {"rx_frames", e.rx_frames},
              {"rx_bytes", e.rx_bytes},           {"tx_utilisation", h.eth_tx_utilisation},
              {"link_lost", h.link_lost},         {"pause_requests", h.pause_requests}};
}

// The link impairments: the rules, and per direction (frames host `from` sends) the
// configuration in effect and what the link did.
json impairments_json(const RunConfig& c, const RunResult& r) {
  const LinkConfig lc = link_config(c);
  json j{{"active", impairs(c)}, {"drop", json::array()}, {"directions", json::array()}};
  for (const DropRule& d : lc.drop_rules) j["drop"].push_back(d.to_string());
  for (int d = 0; d < 2; ++d) {
    const Impairments im = lc.direction(d);
    json burst = nullptr;
    if (im.burst.enabled()) {
      const BurstLoss& b = im.burst;
      burst = {{"p_good_bad", b.p_good_bad}, {"p_bad_good", b.p_bad_good}, {"loss_good", b.loss_good},
               {"loss_bad", b.loss_bad},     {"mean_loss", b.mean_loss()}, {"mean_burst", b.mean_burst()}};
    }
    const LinkStats s = size_t(d) < r.hosts.size() ? r.hosts[size_t(d)].link : LinkStats{};
    j["directions"].push_back(
        {{"from", d},
         {"to", 1 - d},
         {"config",
          {{"loss", im.loss},
           {"burst_loss", burst},
           {"reorder", im.reorder},
           {"reorder_delay_ns", im.reorder_delay_ns},
           {"dup", im.dup},
           {"dup_gap_ns", im.dup_gap_ns},
           {"jitter_ns", im.jitter_ns},
           {"corrupt", im.corrupt}}},
         {"counters",
          {{"frames", s.frames},
           {"lost", s.lost},
           {"lost_random", s.lost_random},
           {"lost_burst", s.lost_burst},
           {"lost_filter", s.lost_filter},
           {"reordered", s.reordered},
           {"duplicated", s.duplicated},
           {"corrupted", s.corrupted},
           {"jittered", s.jittered}}}});
  }
  return j;
}

json latency_json(const RunConfig& c, const LatencyStats& l) {
  const LatencyHistogram& h = l.histogram;
  return json{{"samples", l.samples},
              {"min", l.min_us},
              {"max", l.max_us},
              {"typical", l.typical_us},
              {"mean", l.mean_us},
              {"stdev", l.stdev_us},
              {"p50", l.p50_us},
              {"p90", l.p90_us},
              {"p99", l.p99_us},
              {"p99_9", l.p99_9_us},
              {"metric", c.op == Op::Read ? "post to completion" : "round trip / 2"},
              {"histogram", {{"start_us", h.start_ns / 1000}, {"bin_us", h.bin_ns / 1000}, {"counts", h.counts}}}};
}

const char* role(const RunConfig& c, size_t h) {
  if (both_send(c)) return "requester+responder";
  return h == 0 ? "requester" : "responder";
}

}  // namespace

uint64_t iterations(const RunConfig& c, const RunResult& r, uint32_t host) {
  if (c.latency) return c.iters;
  return c.duration_us > 0 ? r.dirs[host].messages : c.iters * c.qps;
}

const char* output_name(RunConfig::Output o) {
  switch (o) {
    case RunConfig::Output::Full: return "full";
    case RunConfig::Output::Bandwidth: return "bandwidth";
    case RunConfig::Output::MessageRate: return "message_rate";
    case RunConfig::Output::Latency: return "latency";
  }
  return "?";
}

double bw_in_unit(const RunConfig& c, double gbps) {
  return c.report_gbits ? gbps : gbps * 1e9 / 8.0 / 1048576.0;
}

json run_json(const RunConfig& c, const RunResult& r, const std::string& model) {
  json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["tool"] = "srnic-sim";
  j["model"] = model;
  // The run's options.
  j["op"] = to_string(c.op);
  j["size"] = c.size;
  j["qps"] = c.qps;
  j["iters"] = c.iters;
  j["mtu"] = c.mtu;
  j["mode"] = to_string(c.mode);
  j["loss"] = c.loss;
  j["seed"] = c.seed;
  j["latency_mode"] = c.latency;
  j["bidirectional"] = c.bidir;
  j["duration_us"] = c.duration_us > 0 ? json(c.duration_us) : json(nullptr);
  j["mixed"] = c.mixed;
  j["clock_mhz"] = c.clock_mhz;
  j["pcie_latency_ns"] = c.pcie_latency_ns;
  j["pcie_tags"] = c.pcie_tags;
  j["link_delay_ns"] = c.link_delay_ns;
  j["tx_depth"] = c.tx_depth;
  j["signal_every"] = c.signal_every;
  j["post_batch"] = c.post_batch;
  j["post_list"] = c.post_list;
  j["imm"] = c.imm;
  j["outs"] = c.outs ? json(c.outs) : json(nullptr);
  j["no_peak"] = c.no_peak;
  j["report_both"] = c.report_both;
  j["output"] = output_name(c.output);
  j["period_us"] = c.period_us > 0 ? json(c.period_us) : json(nullptr);
  j["periods"] = c.period_us > 0 ? json(c.periods) : json(nullptr);
  const WallEstimate est = estimate_wall(c);
  j["estimate"] = {{"sim_us", est.sim_us}, {"wall_s", est.wall_s}, {"lower_bound", est.lower_bound},
                   {"cycles_per_s", kTypicalCyclesPerS}};
  j["pcie_reorder_writes"] = to_string(c.pcie_reorder);
  json pcie_errors = json::array();
  for (const PcieErrorRule& r : c.pcie_errors) pcie_errors.push_back(r.to_string());
  j["pcie_errors"] = pcie_errors;
  j["pcie_error_host"] = c.pcie_errors.empty() ? json(nullptr) : json(c.pcie_error_host);
  if (c.fault != RunConfig::Fault::None) {
    j["inject_fault"] = to_string(c.fault);
    j["inject_at"] = c.inject_at;
  }
  // Results.
  j["goodput_gbps"] = r.goodput_gbps;
  j["goodput_limit_gbps"] = c.mixed ? 0.0 : goodput_limit_gbps(c.op, c.size, c.mtu);
  j["msg_rate_mrps"] = r.msg_rate_mrps;
  // -N: no peak (null); latency runs keep their 0 (readers format every run's value).
  j["peak_gbps"] = c.no_peak ? json(nullptr) : json(r.peak_gbps);
  j["peak_msg_rate_mrps"] = c.no_peak ? json(nullptr) : json(r.peak_msg_rate_mrps);
  // The row perftest would print, in its unit.
  if (r.has_latency) {
    const LatencyStats& l = r.latency;
    j["perftest"] = {{"columns", {"#bytes", "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]",
                                  "t_avg[usec]", "t_stdev[usec]", "99% percentile[usec]", "99.9% percentile[usec]"}},
                     {"row", {c.size, c.iters, l.min_us, l.max_us, l.typical_us, l.mean_us, l.stdev_us, l.p99_us,
                              l.p99_9_us}}};
    j["latency_us"] = latency_json(c, l);
  } else {
    const std::string u = c.report_gbits ? "Gb/sec" : "MB/sec";
    j["perftest"] = {{"columns", {"#bytes", "#iterations", "BW peak[" + u + "]", "BW average[" + u + "]",
                                  "MsgRate[Mpps]"}},
                     {"row", {c.size, iterations(c, r), bw_in_unit(c, r.peak_gbps), bw_in_unit(c, r.goodput_gbps),
                              r.msg_rate_mrps}}};
    if (c.report_both) {
      // perftest's "Local results" and "Remote results": host 0's and host 1's requests.
      json rows = json::array();
      for (uint32_t h = 0; h < 2; ++h) {
        const DirResult& d = r.dirs[h];
        rows.push_back({c.size, iterations(c, r, h), bw_in_unit(c, d.peak_gbps), bw_in_unit(c, d.goodput_gbps),
                        d.msg_rate_mrps});
      }
      j["perftest"]["local_row"] = rows[0];
      j["perftest"]["remote_row"] = rows[1];
    }
    if (!r.periods.empty()) {
      json rows = json::array();
      for (const PeriodResult& p : r.periods)
        rows.push_back({c.size, p.local_messages, 0.0, bw_in_unit(c, p.goodput_gbps), p.msg_rate_mrps});
      j["perftest"]["period_rows"] = rows;
    }
    j["latency_us"] = nullptr;
  }
  j["sim_time_us"] = r.sim_time_us;
  j["sim_cycles"] = r.sim_cycles;
  j["wall_s"] = r.wall_s;
  j["setup_us"] = r.setup_us;
  j["setup_wall_s"] = r.setup_wall_s;
  j["cycles_per_s"] = r.cycles_per_s;
  j["completions"] = r.completions;
  j["expected_completions"] = r.expected_completions;
  j["errors"] = r.errors;
  j["data_ok"] = r.data_ok;
  j["data_checked_messages"] = r.checked_messages;
  j["data_checked_bytes"] = r.checked_bytes;
  j["imm_checked"] = r.checked_imms;
  j["cqe_data_checks"] = r.cqe_checked_messages;
  j["dma_write_bytes_checked"] = r.dma_write_bytes;
  j["dma_stray_writes"] = r.dma_stray_writes;
  j["retransmits"] = r.retransmits;
  j["wire_retransmits"] = r.wire_retransmits;
  j["wire_rewinds"] = r.wire_rewinds;
  j["bytes"] = r.bytes;
  j["messages"] = r.messages;
  j["posted"] = r.posted;
  j["measured_us"] = r.measured_ns / 1000.0;
  j["frames"] = r.frames;
  j["protocol_violations"] = r.protocol_violations;
  j["first_protocol_violation"] = r.first_protocol_violation;
  j["bus_violations"] = r.bus_violations;
  j["lossless_cable_ns"] = r.lossless_cable_ns;
  j["rx_overflow_drops"] = r.rx_overflow_drops;
  j["first_bus_violation"] = r.first_bus_violation;
  j["failure"] = r.failure.empty() ? json(nullptr) : json(r.failure);
  const ScoreboardReport& s = r.scoreboard;
  j["scoreboard"] = {{"completions_matched", s.completions_matched},
                     {"bytes_matched", s.bytes_matched},
                     {"bytes_skipped", s.bytes_skipped},
                     {"mismatches", s.mismatches},
                     {"first_mismatch", s.first_mismatch.empty() ? json(nullptr) : json(s.first_mismatch)}};
  j["impairments"] = impairments_json(c, r);
  j["slots"] = r.slots;
  j["inflight"] = r.inflight;
  j["stride"] = r.stride;
  // Per QP, and how evenly the QPs shared the link.
  json per_qp = json::array();
  double lo = 0, hi = 0;
  for (size_t q = 0; q < r.per_qp.size(); ++q) {
    const QpResult& p = r.per_qp[q];
    json qpn = json::array();
    for (const HostReport& h : r.hosts)
      if (q < h.qpns.size()) qpn.push_back(h.qpns[q]);
    per_qp.push_back({{"qp", q},
                      {"qpn", qpn},
                      {"messages", p.messages},
                      {"bytes", p.bytes},
                      {"completions", p.completions},
                      {"goodput_gbps", p.goodput_gbps},
                      {"msg_rate_mrps", p.msg_rate_mrps},
                      {"first_post_us", p.first_post_ns >= 0 ? json(p.first_post_ns / 1000) : json(nullptr)},
                      {"last_done_us", p.last_done_ns >= 0 ? json(p.last_done_ns / 1000) : json(nullptr)}});
    lo = q == 0 ? p.goodput_gbps : std::min(lo, p.goodput_gbps);
    hi = q == 0 ? p.goodput_gbps : std::max(hi, p.goodput_gbps);
  }
  j["per_qp"] = per_qp;
  // Per requesting host (host 1 posts only with -b), over the run's interval.
  json dirs = json::array();
  for (uint32_t h = 0; h < 2; ++h) {
    const DirResult& d = r.dirs[h];
    dirs.push_back({{"host", h},
                    {"messages", d.messages},
                    {"bytes", d.bytes},
                    {"goodput_gbps", d.goodput_gbps},
                    {"msg_rate_mrps", d.msg_rate_mrps},
                    {"peak_gbps", r.has_peak && (c.bidir || h == 0) ? json(d.peak_gbps) : json(nullptr)}});
  }
  j["directions"] = dirs;
  if (!r.periods.empty()) {
    json per = json::array();
    for (size_t k = 0; k < r.periods.size(); ++k) {
      const PeriodResult& p = r.periods[k];
      per.push_back({{"period", k},
                     {"start_us", double(k) * c.period_us},
                     {"messages", p.messages},
                     {"local_messages", p.local_messages},
                     {"bytes", p.bytes},
                     {"goodput_gbps", p.goodput_gbps},
                     {"msg_rate_mrps", p.msg_rate_mrps}});
    }
    j["period_results"] = per;
  }
  j["fairness"] = {{"qps", r.per_qp.size()}, {"jain_index", r.jain_index}, {"goodput_min_gbps", lo},
                   {"goodput_max_gbps", hi}};
  // Per host, labelled.
  json hosts = json::array();
  for (size_t h = 0; h < r.hosts.size(); ++h) {
    const HostReport& hr = r.hosts[h];
    json counters = json::object();
    for (const auto& [name, v] : hr.counters) counters[name] = v;
    hosts.push_back({{"name", "host" + std::to_string(h)},
                     {"index", h},
                     {"role", role(c, h)},
                     {"qpns", hr.qpns},
                     {"sq_psns", hr.sq_psns},
                     {"sq_bases", hr.sq_bases},
                     {"pcie", pcie_json(hr)},
                     {"eth", eth_json(hr)},
                     {"counters", hr.counters_read ? counters : json(nullptr)},
                     {"nic_fatal", hr.nic_fatal.empty() ? json(nullptr) : json(hr.nic_fatal)}});
  }
  j["hosts"] = hosts;
  if (r.has_weir) {
    const WeirReport& w = r.weir;
    j["weir"] = {{"host", 0},
                 {"rate_gbps", w.rate_gbps},
                 {"ewma_delay_ns", w.ewma_delay_ns},
                 {"base_delay_ns", w.base_delay_ns},
                 {"active_qps", w.active_qps},
                 {"max_active_qps", w.max_active_qps},
                 {"posted", w.posted},
                 {"wqes_rung", w.wqes_rung},
                 {"doorbells", w.doorbells},
                 {"deferred", w.deferred},
                 {"slices", w.slices},
                 {"hidden_cqes", w.hidden_cqes},
                 {"increases", w.increases},
                 {"holds", w.holds},
                 {"decreases", w.decreases},
                 {"timestamp_syncs", w.timestamp_syncs}};
  }
  return j;
}

json sweep_json(const std::vector<std::pair<RunConfig, RunResult>>& runs, const std::string& model) {
  json j{{"schema_version", kJsonSchemaVersion}, {"tool", "srnic-sim"}, {"model", model}, {"all_sizes", true}};
  bool ok = !runs.empty();
  json arr = json::array();
  for (const auto& [c, r] : runs) {
    arr.push_back(run_json(c, r, model));
    ok = ok && run_failure(r).empty();
  }
  j["data_ok"] = ok;
  j["runs"] = arr;
  return j;
}

// --------------------------------------------------------------------------- text

namespace {

const char* kLine = "---------------------------------------------------------------------------------------";

const char* op_title(Op op) {
  switch (op) {
    case Op::Write: return "RDMA_Write";
    case Op::Read: return "RDMA_Read";
    case Op::Send: return "Send";
  }
  return "?";
}

// One line of columns: each cell left-aligned in its width, one space apart.
void columns(std::FILE* f, const std::vector<std::string>& cells, const std::vector<int>& widths) {
  std::string line = " ";
  for (size_t k = 0; k < cells.size(); ++k) {
    std::string cell = cells[k];
    if (k + 1 < cells.size()) cell.resize(std::max<size_t>(cell.size(), size_t(widths[k])), ' ');
    line += cell + (k + 1 < cells.size() ? " " : "");
  }
  std::fprintf(f, "%s\n", line.c_str());
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

const std::vector<int> kBwWidths{10, 14, 18, 20, 0};
const std::vector<int> kLatWidths{6, 14, 14, 12, 18, 14, 15, 22, 0};


void bw_titles(std::FILE* f, const RunConfig& c) {
  const std::string u = c.report_gbits ? "Gb/sec" : "MB/sec";
  columns(f, {"#bytes", "#iterations", "BW peak[" + u + "]", "BW average[" + u + "]", "MsgRate[Mpps]"}, kBwWidths);
}

void bw_row(std::FILE* f, const RunConfig& c, uint64_t iters, double peak_gbps, double gbps, double mrps) {
  columns(f,
          {std::to_string(c.size), std::to_string(iters), fmt("%.2f", bw_in_unit(c, peak_gbps)),
           fmt("%.2f", bw_in_unit(c, gbps)), fmt("%.6f", mrps)},
          kBwWidths);
}

}  // namespace

std::string test_title(const RunConfig& c) {
  // perftest's wording: "RDMA_Write Bidirectional BW Test", "Send Post List BW Test", ...
  std::string t = std::string(op_title(c.op)) + " ";
  if (c.latency) return t + "Latency Test";
  if (c.bidir) t += "Bidirectional ";
  if (c.post_list > 1) t += "Post List ";
  return t + "BW Test";
}

void print_header(std::FILE* f, const RunConfig& c, const RunResult& r, const std::string& model,
                  const WallEstimate* estimate) {
  std::fprintf(f, "%s\n", kLine);
  std::fprintf(f, "                    %s\n", test_title(c).c_str());
  std::fprintf(f, " Dual-port       : OFF\t\tDevice         : srnic (simulated, %s)\n", model.c_str());
  std::fprintf(f, " Number of qps   : %-8u\tTransport type : IB\n", c.latency ? 1u : c.qps);
  std::fprintf(f, " Connection type : RC\t\tUsing SRQ      : OFF\n");
  std::fprintf(f, " TX depth        : %u\n", c.latency ? 1u : r.inflight);
  if (!c.latency) std::fprintf(f, " CQ Moderation   : %u\n", c.signal_every);
  if (c.post_list) std::fprintf(f, " Post List       : %u\n", c.post_list);
  std::fprintf(f, " Mtu             : %u[B]\n", c.mtu);
  std::fprintf(f, " Link type       : Ethernet (100GE model, %g ns cable)\n", c.link_delay_ns);
  if (c.link_delay_ns > max_lossless_cable_ns(c))
    std::fprintf(f, " note            : the cable is longer than the %.0f ns the RX buffer's pause headroom covers at "
                    "this MTU: frames can be dropped for lack of buffer (RX_DROP_OVERFLOW) and resent\n",
                 max_lossless_cable_ns(c));
  if (c.op == Op::Read && c.outs)
    std::fprintf(f, " Outstand reads  : %u per QP (-o; held back by the host: srnic has no per-QP limit)\n", c.outs);
  else if (c.op == Op::Read)
    std::fprintf(f, " Outstand reads  : %u (the NIC's READ contexts, shared by the QPs)\n", kMaxOutstandingReads);
  else
    std::fprintf(f, " Max inline data : 0[B]\n");
  if (c.imm) std::fprintf(f, " Immediate data  : ON (%s; each message its own, checked on receive)\n",
                          c.op == Op::Send ? "SEND with immediate" : "RDMA WRITE with immediate");
  std::fprintf(f, " Wire mode       : %s\n", c.mode == WireMode::Std ? "std (RoCEv2, go-back-N)" : "ext");
  std::fprintf(f, " Core clock      : %g MHz\t\tPCIe read RTT  : %g ns, %u tags\n", c.clock_mhz, c.pcie_latency_ns,
               c.pcie_tags);
  if (c.bidir) std::fprintf(f, " Bidirectional   : ON (BW is the sum of both directions)\n");
  if (c.period_us > 0)
    std::fprintf(f, " Duration        : %u periods of %g us of simulated time (--run_infinitely), a row each\n",
                 c.periods, c.period_us);
  else if (c.duration_us > 0)
    std::fprintf(f, " Duration        : %g us of simulated time\n", c.duration_us);
  if (!c.latency)
    std::fprintf(f, " #iterations     : %s\n",
                 c.duration_us > 0 ? "host 0's messages completed within the duration, all QPs (as perftest)"
                                   : "messages host 0 posted, all QPs: -n x -q (as perftest)");
  if (c.no_peak) std::fprintf(f, " BW peak         : not measured (-N)\n");
  const WallEstimate est = estimate ? *estimate : estimate_wall(c);
  std::fprintf(f, " Estimated wall  : %s (%s%s simulated at ~%.0fK cycles/s)\n", human_seconds(est.wall_s).c_str(),
               est.lower_bound ? "at least " : "", human_seconds(est.sim_us / 1e6).c_str(), kTypicalCyclesPerS / 1000);
  if (c.mixed) std::fprintf(f, " Message sizes   : mixed, up to %llu[B]\n", static_cast<unsigned long long>(c.size));
  std::fprintf(f, "%s\n", kLine);
  // The QPs' addresses: host 0 is "local", host 1 "remote", as seen by perftest's client.
  const size_t shown = std::min<size_t>(r.hosts.empty() ? 0 : r.hosts[0].sides.size(), 8);
  for (size_t q = 0; q < shown; ++q)
    for (size_t h = 0; h < r.hosts.size() && h < 2; ++h) {
      const HostReport& hr = r.hosts[h];
      if (q >= hr.sides.size()) continue;
      const QpSide& s = hr.sides[q];
      const bool dst = s.dst != 0;
      std::fprintf(f, " %s address: LID 0000 QPN 0x%04x PSN 0x%06x RKey 0x%06x VAddr 0x%016" PRIx64 "\n",
                   h == 0 ? "local" : "remote", s.qpn, q < hr.sq_psns.size() ? hr.sq_psns[q] : 0u,
                   dst ? s.dst_key : s.src_key, dst ? s.dst : s.src);
    }
  if (!r.hosts.empty() && r.hosts[0].sides.size() > shown)
    std::fprintf(f, " ... %zu more QPs (--json lists every one)\n", r.hosts[0].sides.size() - shown);
  std::fprintf(f, "%s\n", kLine);
  if (c.latency) {
    columns(f,
            {"#bytes", "#iterations", "t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]",
             "t_stdev[usec]", "99% percentile[usec]", "99.9% percentile[usec]"},
            kLatWidths);
  } else {
    bw_titles(f, c);
  }
  std::fflush(f);
}

void print_row(std::FILE* f, const RunConfig& c, const RunResult& r) {
  const std::string size = std::to_string(c.size);
  if (c.latency) {
    const LatencyStats& l = r.latency;
    columns(f,
            {size, std::to_string(c.iters), fmt("%.2f", l.min_us), fmt("%.2f", l.max_us), fmt("%.2f", l.typical_us),
             fmt("%.2f", l.mean_us), fmt("%.2f", l.stdev_us), fmt("%.2f", l.p99_us), fmt("%.2f", l.p99_9_us)},
            kLatWidths);
  } else if (!r.periods.empty()) {
    // --run_infinitely: a row per period, as perftest prints one every -D (no BW peak).
    for (const PeriodResult& p : r.periods) bw_row(f, c, p.local_messages, 0, p.goodput_gbps, p.msg_rate_mrps);
  } else {
    bw_row(f, c, iterations(c, r), r.peak_gbps, r.goodput_gbps, r.msg_rate_mrps);
  }
  std::fflush(f);
}

void print_directions(std::FILE* f, const std::vector<std::pair<RunConfig, RunResult>>& runs) {
  if (runs.empty()) return;
  for (uint32_t h = 0; h < 2; ++h) {
    std::fprintf(f, "%s\n\n %s results:\n%s\n", kLine, h == 0 ? "Local" : "Remote", kLine);
    bw_titles(f, runs[0].first);
    for (const auto& [c, r] : runs) {
      const DirResult& d = r.dirs[h];
      bw_row(f, c, iterations(c, r, h), d.peak_gbps, d.goodput_gbps, d.msg_rate_mrps);
    }
  }
  std::fflush(f);
}

void print_value(std::FILE* f, const RunConfig& c, const RunResult& r) {
  // perftest's --output: the number alone, "%lf" (BW in the unit of the run).
  auto one = [&](double bw_gbps, double mrps) {
    std::fprintf(f, "%f\n", c.output == RunConfig::Output::Bandwidth ? bw_in_unit(c, bw_gbps) : mrps);
  };
  if (c.output == RunConfig::Output::Latency)
    std::fprintf(f, "%f\n", r.latency.mean_us);
  else if (!r.periods.empty())
    for (const PeriodResult& p : r.periods) one(p.goodput_gbps, p.msg_rate_mrps);
  else
    one(r.goodput_gbps, r.msg_rate_mrps);
  std::fflush(f);
}

void print_footer(std::FILE* f) { std::fprintf(f, "%s\n", kLine); }

void print_checks(std::FILE* f, const RunConfig& c, const RunResult& r) {
  const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::fprintf(f, " srnic-sim, %llu-byte %s: data check %s (completions %llu/%llu, errors %llu; %s)\n", u(c.size),
               c.latency ? "latency" : "bandwidth", r.data_ok ? "OK" : "FAILED", u(r.completions),
               u(r.expected_completions), u(r.errors), r.scoreboard_summary.c_str());
  std::fprintf(f,
               " messages checked: %llu (%llu bytes) when polled, %llu when their CQE landed; DMA writes: %llu bytes "
               "checked, %llu stray\n",
               u(r.checked_messages), u(r.checked_bytes), u(r.cqe_checked_messages), u(r.dma_write_bytes),
               u(r.dma_stray_writes));
  if (c.imm)
    std::fprintf(f, " immediates checked: %llu receive completions carried their message's own\n",
                 u(r.checked_imms));
  if (!c.latency && !c.mixed) {
    const double lim = goodput_limit_gbps(c.op, c.size, c.mtu) * (c.bidir ? 2 : 1);
    const std::string peak = r.has_peak ? " (peak " + fmt("%.2f", r.peak_gbps) + ")" : "";
    std::fprintf(f, " goodput %.2f Gb/s%s = %.1f%% of the 100GE limit %.2f Gb/s%s over %.2f us\n", r.goodput_gbps,
                 peak.c_str(), lim > 0 ? 100.0 * r.goodput_gbps / lim : 0.0, lim, c.bidir ? " (both directions)" : "",
                 r.measured_ns / 1000.0);
  }
  if (r.per_qp.size() > 1) {
    double lo = r.per_qp[0].goodput_gbps, hi = lo;
    for (const QpResult& q : r.per_qp) {
      lo = std::min(lo, q.goodput_gbps);
      hi = std::max(hi, q.goodput_gbps);
    }
    std::fprintf(f, " %zu QPs: Jain's fairness index %.4f, per-QP goodput %.2f .. %.2f Gb/s\n", r.per_qp.size(),
                 r.jain_index, lo, hi);
  }
  std::fprintf(f, " wire: %llu frames, %llu protocol violations, %llu retransmits, %llu bus violations\n",
               u(r.frames), u(r.protocol_violations), u(r.retransmits), u(r.bus_violations));
  // Per-engine busy cycles per frame, from the NICs' performance counters (whole run, set-up
  // included), beside the budget: the cycles one data frame of this workload takes on the wire.
  if (!c.mixed) {
    const uint64_t pkts = c.size == 0 ? 1 : (c.size + c.mtu - 1) / c.mtu;
    const double budget = c.clock_mhz * 1e6 * double(wire_bytes(c.op, c.size, c.mtu)) * 8.0 / double(pkts) / 100e9;
    for (size_t h = 0; h < r.hosts.size(); ++h) {
      const HostReport& hr = r.hosts[h];
      if (!hr.counters_read) continue;
      const auto cnt = [&](int i) { return double(hr.counters[size_t(i)].second); };
      const double in = cnt(abi::CNT_RX_FRAMES), out = cnt(abi::CNT_TX_FRAMES);
      const auto per = [](double v, double n) { return n > 0 ? v / n : 0.0; };
      std::fprintf(f,
                   " engines, host %zu (cycles per frame; line rate: a data frame every %.1f): RX classification "
                   "%.1f, RX placement %.1f, completion engine %.1f (per frame in, %llu); TX packetizer %.1f (per "
                   "frame out, %llu)\n",
                   h, budget, per(cnt(abi::CNT_RX_CLS_BUSY), in), per(cnt(abi::CNT_RX_PLACE_BUSY), in),
                   per(cnt(abi::CNT_COMP_BUSY), in), u(uint64_t(in)), per(cnt(abi::CNT_TX_PKT_BUSY), out),
                   u(uint64_t(out)));
    }
  }
  if (impairs(c))
    for (size_t h = 0; h < r.hosts.size(); ++h) {
      const LinkStats& s = r.hosts[h].link;
      std::fprintf(f,
                   " link %zu->%zu: %llu frames, lost %llu (random %llu, burst %llu, filter %llu), reordered %llu, "
                   "duplicated %llu, corrupted %llu, jittered %llu\n",
                   h, 1 - h, u(s.frames), u(s.lost), u(s.lost_random), u(s.lost_burst), u(s.lost_filter),
                   u(s.reordered), u(s.duplicated), u(s.corrupted), u(s.jittered));
    }
  std::fprintf(f, " sim: %llu cycles, %.2f us simulated, %.2f s wall, %.0f cycles/s while traffic ran\n",
               u(r.sim_cycles), r.sim_time_us, r.wall_s, r.cycles_per_s);
  std::fprintf(f, " set-up (NICs, %u QP pairs created and connected): %.2f us simulated, %.2f s wall\n", c.qps,
               r.setup_us, r.setup_wall_s);
  if (!r.failure.empty()) std::fprintf(f, " failure: %s\n", r.failure.c_str());
}

std::string run_failure(const RunResult& r) {
  std::string why = r.failure;
  if (why.empty() && !r.data_ok) why = "data check failed";
  if (why.empty() && r.protocol_violations) why = "protocol: " + r.first_protocol_violation;
  if (why.empty() && r.bus_violations)
    why = std::to_string(r.bus_violations) + " PCIe/Ethernet bus-rule violations, first: " + r.first_bus_violation;
  return why;
}

}  // namespace srnic::sim
