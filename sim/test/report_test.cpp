// srnic-sim's reports: the JSON schema (version, labelled hosts, structured scoreboard, per-QP
// results and fairness, latency statistics and histogram) and perftest's text columns.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cli_test_util.hpp"
#include "report.hpp"

using namespace srnic::sim;
using nlohmann::json;

namespace {

// A finished two-QP bandwidth run, filled by hand.
std::pair<RunConfig, RunResult> sample_run() {
  RunConfig c;
  c.size = 4096;
  c.qps = 2;
  c.iters = 10;
  c.mtu = 1024;
  RunResult r;
  r.finished = r.data_ok = true;
  r.completions = r.expected_completions = 20;
  r.bytes = 20 * 4096;
  r.messages = 20;
  r.posted = 20;
  r.measured_ns = 10000;
  r.goodput_gbps = 8.0;
  r.msg_rate_mrps = 2.0;
  r.peak_gbps = 16.0;
  r.peak_msg_rate_mrps = 4.0;
  r.scoreboard = {20, 81920, 0, 0, ""};
  r.scoreboard_summary = "completions matched 20, bytes matched 81920, bytes skipped 0, mismatches 0";
  r.per_qp = {QpResult{10, 40960, 10, 100, 5100, 6.5536, 2.0}, QpResult{10, 40960, 10, 100, 10100, 3.2768, 1.0}};
  r.jain_index = 0.9;
  r.hosts.resize(2);
  for (uint32_t h = 0; h < 2; ++h) {
    r.hosts[h].qpns = {2 + h, 3 + h};
    r.hosts[h].sq_psns = {0x100u + h, 0x200u + h};
    r.hosts[h].sq_bases = {0x1000, 0x2000};
    r.hosts[h].counters = {{"TX_FRAMES", 40 + h}, {"TX_RETRANSMIT", 0}};
    r.hosts[h].counters_read = true;
    r.hosts[h].sides = {QpSide{2 + h, 1, 0x10000, 0x20000, 0x100, 0x100}, QpSide{3 + h, 1, 0x30000, 0x40000, 0x100, 0x100}};
  }
  return {c, r};
}

using test::printed;

std::string header(const RunConfig& c, const RunResult& r) {
  return printed([&](std::FILE* f) { print_header(f, c, r, "Vtest"); });
}

}  // namespace

// The PCIe error rules of the run (canonical text, the injecting host) and each host's
// injected-error counters.
TEST(ReportJson, PcieErrorInjection) {
  auto [c, r] = sample_run();
  json j = run_json(c, r, "Vtest");
  EXPECT_EQ(j.at("pcie_errors"), json::array());
  EXPECT_TRUE(j.at("pcie_error_host").is_null());
  PcieErrorRule rule;
  ASSERT_TRUE(PcieErrorRule::parse("write:addr=4096-8192:decerr", rule));
  c.pcie_errors = {rule};
  c.pcie_error_host = 1;
  r.hosts[1].pcie.wr_err_bursts = 3;
  r.hosts[1].pcie.rd_err_bursts = 2;
  r.hosts[1].pcie.rd_err_beats = 9;
  j = run_json(c, r, "Vtest");
  EXPECT_EQ(j.at("pcie_errors"), json({"write:addr=0x1000-0x2000:decerr"}));
  EXPECT_EQ(j.at("pcie_error_host"), 1);
  const json& p = j["hosts"][1].at("pcie");
  EXPECT_EQ(p.at("wr_err_bursts"), 3);
  EXPECT_EQ(p.at("rd_err_bursts"), 2);
  EXPECT_EQ(p.at("rd_err_beats"), 9);
  EXPECT_EQ(j["hosts"][0]["pcie"].at("wr_err_bursts"), 0);
}

TEST(ReportJson, SchemaVersionHostsScoreboardPerQp) {
  const auto [c, r] = sample_run();
  const json j = run_json(c, r, "Vtest");
  EXPECT_EQ(j.at("schema_version"), kJsonSchemaVersion);
  EXPECT_EQ(j.at("schema_version"), 2);
  EXPECT_EQ(j.at("tool"), "srnic-sim");
  // SPEC section 5 keys.
  for (const char* k : {"goodput_gbps", "msg_rate_mrps", "latency_us", "sim_time_us", "sim_cycles", "wall_s",
                        "cycles_per_s", "completions", "errors", "data_ok", "retransmits"})
    EXPECT_TRUE(j.contains(k)) << k;
  // Hosts are labelled objects, not bare arrays.
  ASSERT_EQ(j.at("hosts").size(), 2u);
  EXPECT_EQ(j["hosts"][0].at("name"), "host0");
  EXPECT_EQ(j["hosts"][1].at("name"), "host1");
  EXPECT_EQ(j["hosts"][0].at("role"), "requester");
  EXPECT_EQ(j["hosts"][1].at("role"), "responder");
  EXPECT_EQ(j["hosts"][1].at("counters").at("TX_FRAMES"), 41);
  EXPECT_TRUE(j["hosts"][0].at("pcie").is_object());
  EXPECT_TRUE(j["hosts"][0].at("eth").is_object());
  EXPECT_EQ(j["hosts"][0].at("qpns"), json({2, 3}));
  for (const char* gone : {"pcie", "eth", "counters", "qpns", "sq_psns", "sq_bases"})
    EXPECT_FALSE(j.contains(gone)) << gone << " is per host now";
  // The scoreboard is fields, not a sentence.
  const json& sb = j.at("scoreboard");
  ASSERT_TRUE(sb.is_object());
  EXPECT_EQ(sb.at("completions_matched"), 20);
  EXPECT_EQ(sb.at("bytes_matched"), 81920);
  EXPECT_EQ(sb.at("bytes_skipped"), 0);
  EXPECT_EQ(sb.at("mismatches"), 0);
  EXPECT_TRUE(sb.at("first_mismatch").is_null());
  // Per QP and fairness.
  ASSERT_EQ(j.at("per_qp").size(), 2u);
  const json& q1 = j["per_qp"][1];
  EXPECT_EQ(q1.at("qp"), 1);
  EXPECT_EQ(q1.at("qpn"), json({3, 4}));
  EXPECT_EQ(q1.at("completions"), 10);
  EXPECT_EQ(q1.at("bytes"), 40960);
  EXPECT_DOUBLE_EQ(q1.at("goodput_gbps").get<double>(), 3.2768);
  EXPECT_DOUBLE_EQ(q1.at("last_done_us").get<double>(), 10.1);
  EXPECT_DOUBLE_EQ(j.at("fairness").at("jain_index").get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(j["fairness"].at("goodput_min_gbps").get<double>(), 3.2768);
  EXPECT_DOUBLE_EQ(j["fairness"].at("goodput_max_gbps").get<double>(), 6.5536);
  // perftest's row, in MB/sec (2^20 bytes/s) unless --report_gbits.
  const json& pt = j.at("perftest");
  EXPECT_EQ(pt.at("columns")[2], "BW peak[MB/sec]");
  EXPECT_DOUBLE_EQ(pt.at("row")[3].get<double>(), 8e9 / 8 / 1048576);
  EXPECT_EQ(pt.at("row")[1], 20);  // perftest's #iterations: -n x QPs
  EXPECT_TRUE(j.at("latency_us").is_null());
  EXPECT_TRUE(j.at("duration_us").is_null());
  EXPECT_TRUE(j.at("failure").is_null());
  // It serialises and parses back.
  EXPECT_EQ(json::parse(j.dump()), j);
}

TEST(ReportJson, LatencyHasStdevPercentilesAndHistogram) {
  auto [c, r] = sample_run();
  c.latency = true;
  c.qps = 1;
  r.has_latency = true;
  r.latency = summarize_latency({3000, 3100, 3200, 3300, 9000});
  const json j = run_json(c, r, "Vtest");
  const json& l = j.at("latency_us");
  for (const char* k : {"min", "max", "typical", "mean", "stdev", "p50", "p90", "p99", "p99_9", "samples", "metric"})
    EXPECT_TRUE(l.contains(k)) << k;
  EXPECT_DOUBLE_EQ(l.at("typical").get<double>(), 3.2);
  EXPECT_DOUBLE_EQ(l.at("p99_9").get<double>(), 9.0);
  EXPECT_GT(l.at("stdev").get<double>(), 2.0);
  const json& h = l.at("histogram");
  uint64_t n = 0;
  for (const auto& k : h.at("counts")) n += k.get<uint64_t>();
  EXPECT_EQ(n, 5u);
  EXPECT_GT(h.at("bin_us").get<double>(), 0);
  EXPECT_EQ(j.at("perftest").at("columns")[7], "99% percentile[usec]");
  EXPECT_EQ(j.at("perftest").at("columns")[8], "99.9% percentile[usec]");
}

TEST(ReportJson, SweepHoldsOneRunPerSize) {
  auto a = sample_run();
  auto b = sample_run();
  b.first.size = 8;
  b.second.data_ok = false;
  b.second.failure = "data: broken";
  const json j = sweep_json({a, b}, "Vtest");
  EXPECT_EQ(j.at("schema_version"), 2);
  EXPECT_TRUE(j.at("all_sizes").get<bool>());
  ASSERT_EQ(j.at("runs").size(), 2u);
  EXPECT_EQ(j["runs"][1].at("size"), 8);
  EXPECT_FALSE(j.at("data_ok").get<bool>());
}

TEST(ReportText, PerftestColumns) {
  auto cr = sample_run();
  auto& c = cr.first;
  auto& r = cr.second;
  c.report_gbits = true;
  const std::string h = header(c, r);
  // The column titles perftest's ib_write_bw prints with --report_gbits.
  EXPECT_NE(h.find(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("RDMA_Write BW Test"), std::string::npos) << h;
  EXPECT_NE(h.find(" local address: LID 0000 QPN 0x0002 PSN 0x000100"), std::string::npos) << h;
  EXPECT_NE(h.find(" remote address: LID 0000 QPN 0x0003"), std::string::npos) << h;
  // The row's numbers start under their titles.
  const std::string row = printed([&](std::FILE* f) { print_row(f, c, r); });
  EXPECT_EQ(row, " 4096       20             16.00              8.00                 2.000000\n") << row;
  c.report_gbits = false;
  EXPECT_NE(header(c, r).find("BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"), std::string::npos);

  c.latency = true;
  r.latency = summarize_latency({3000, 3100});
  const std::string lh = header(c, r);
  // The column titles of perftest's latency tools.
  EXPECT_NE(lh.find(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                    "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"),
            std::string::npos)
      << lh;
  for (const char* t : {"t_min[usec]", "t_max[usec]", "t_typical[usec]", "t_avg[usec]", "t_stdev[usec]",
                        "99% percentile[usec]", "99.9% percentile[usec]"})
    EXPECT_NE(lh.find(t), std::string::npos) << t;
  EXPECT_NE(lh.find("RDMA_Write Latency Test"), std::string::npos);
}
