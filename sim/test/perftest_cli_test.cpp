// srnic-sim speaks perftest: its option names with its meanings beside the long names, the -D
// time units, -a, -N, -o, --output, --report_both, --run_infinitely, the immediates, the wall-time
// estimate, perftest's #iterations and title, and every bad input answered with one line and exit
// status 2 (each failure names the command line that reproduces it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "report.hpp"
#include "workload.hpp"
#include "workload_cli.hpp"

using namespace srnic::sim;

namespace {

using test::command;
using test::parse;
using test::words;

RunConfig ok(const std::vector<std::string>& args) {
  RunConfig cfg;
  const CliResult r = parse(args, cfg);
  EXPECT_TRUE(r.run) << "reproduce: " << command(args) << "\n" << r.message;
  return cfg;
}

void refused(const std::vector<std::string>& args, const std::string& needle) { test::expect_usage_error(args, needle); }

}  // namespace

TEST(PerftestCli, ShortOptionsHavePerftestsMeanings) {
  const RunConfig c = ok({"-s", "4096", "-n", "1000", "-q", "4", "-m", "1024", "--report_gbits"});
  EXPECT_EQ(c.size, 4096u);
  EXPECT_EQ(c.iters, 1000u);
  EXPECT_EQ(c.qps, 4u);
  EXPECT_EQ(c.mtu, 1024u);
  EXPECT_TRUE(c.report_gbits);
  EXPECT_FALSE(c.bidir);
  EXPECT_EQ(c.duration_us, 0);

  const RunConfig d = ok({"-t", "64", "-Q", "8", "-l", "4", "-b", "-F", "-s", "65536", "-n", "64"});
  EXPECT_EQ(d.tx_depth, 64u);
  EXPECT_EQ(d.signal_every, 8u);  // perftest's CQ moderation
  EXPECT_EQ(d.post_list, 4u);
  EXPECT_TRUE(d.bidir);
  EXPECT_EQ(d.post_batch, 1u);
  EXPECT_EQ(ok({"-u", "10"}).timeout, 10u);  // perftest's QP timeout attribute

  // perftest's long names, with = as getopt takes them.
  const RunConfig e = ok({"--size=512", "--iters=7", "--qp=3", "--mtu=2048", "--tx-depth=16", "--bidirectional",
                          "--CPU-freq", "--cq-mod=2", "--post_list=2"});
  EXPECT_EQ(e.size, 512u);
  EXPECT_EQ(e.iters, 7u);
  EXPECT_EQ(e.qps, 3u);
  EXPECT_EQ(e.mtu, 2048u);
  EXPECT_EQ(e.tx_depth, 16u);
  EXPECT_TRUE(e.bidir);
  EXPECT_EQ(e.signal_every, 2u);
  EXPECT_EQ(e.post_list, 2u);
  // The names srnic-sim always had still work.
  const RunConfig f = ok({"--qps", "5", "--signal-every", "4", "--iters", "40"});
  EXPECT_EQ(f.qps, 5u);
  EXPECT_EQ(f.signal_every, 4u);
}

TEST(PerftestCli, AllSizesAndLatencyDefaults) {
  const RunConfig a = ok({"-a"});
  EXPECT_TRUE(a.all_sizes);
  const std::vector<uint64_t> s = perftest_sizes();
  ASSERT_EQ(s.size(), 23u);
  EXPECT_EQ(s.front(), 2u);
  EXPECT_EQ(s.back(), 1u << 23);
  EXPECT_NE(reproduce_command(a).find(" -a"), std::string::npos);
  // The latency tools' default size is 2 bytes; -s still sets it.
  EXPECT_EQ(ok({"--latency"}).size, 2u);
  EXPECT_EQ(ok({"--latency", "-s", "64"}).size, 64u);
  EXPECT_EQ(ok({}).size, 65536u);
  EXPECT_TRUE(ok({"--latency", "-a", "-n", "5"}).all_sizes);
}

TEST(PerftestCli, DurationInSimulatedTime) {
  // Seconds as perftest's -D, or with a unit.
  EXPECT_DOUBLE_EQ(ok({"-D", "0.0001"}).duration_us, 100.0);
  EXPECT_DOUBLE_EQ(ok({"-D", "2ms"}).duration_us, 2000.0);
  EXPECT_DOUBLE_EQ(ok({"-D", "50us"}).duration_us, 50.0);
  EXPECT_DOUBLE_EQ(ok({"--duration", "20000ns"}).duration_us, 20.0);
  // The plan covers what the link could carry in that time, plus a full send queue.
  RunConfig c = ok({"-D", "10us", "-s", "4096", "-q", "2"});
  EXPECT_EQ(c.iters, duration_iters(c));
  const double per_msg_ns = double(wire_bytes(Op::Write, 4096, 4096)) * 8 / 100;
  EXPECT_EQ(c.iters, uint64_t(std::ceil(10000 / per_msg_ns)) + c.tx_depth);
  // The reproducing command carries -D, not the planned iterations, and parses back.
  const std::string cmd = reproduce_command(c);
  EXPECT_NE(cmd.find(" -D 10us"), std::string::npos) << cmd;
  EXPECT_EQ(cmd.find("--iters"), std::string::npos) << cmd;
  const RunConfig back = ok(words(cmd));
  EXPECT_DOUBLE_EQ(back.duration_us, 10.0);
  EXPECT_EQ(back.iters, c.iters);
}

TEST(PerftestCli, ReproduceCommandCarriesThePerftestModes) {
  const RunConfig c = ok({"-s", "1024", "-q", "3", "-b", "-l", "8", "--report_gbits", "-Q", "8", "-n", "64"});
  const std::string cmd = reproduce_command(c);
  const RunConfig b = ok(words(cmd));
  EXPECT_TRUE(b.bidir) << cmd;
  EXPECT_EQ(b.post_list, 8u) << cmd;
  EXPECT_TRUE(b.report_gbits) << cmd;
  EXPECT_EQ(b.signal_every, 8u) << cmd;
  EXPECT_EQ(b.qps, 3u) << cmd;
  EXPECT_EQ(b.size, 1024u) << cmd;
}

TEST(PerftestCli, BadInputIsOneLineExitTwo) {
  // The issue's cases.
  refused({"-s"}, "-s");
  refused({"--qps", "16383"}, "number of QPs must be in 1..16382");
  refused({"--iters", "1099511627776"}, "above --max-ram-gib 16");
  refused({"--size", "1073741824"}, "needs --mem-mib 1024 or more");
  refused({"--mode", "ext"}, "not supported until the SRNIC header extensions exist");
  // -D.
  refused({"-D", "0"}, "duration must be a positive simulated time");
  refused({"-D", "abc"}, "duration must be a positive simulated time");
  refused({"-D", "5h"}, "duration must be a positive simulated time");
  refused({"-D", "7200"}, "between 1 ns and 3600 s");
  refused({"-D", "10us", "-n", "5"}, "excludes");
  refused({"-D", "10us", "--latency"}, "-D is for the bandwidth tests");
  refused({"-D", "10us", "--inject-fault", "lost"}, "--inject-fault needs --iters");
  refused({"-q", "16382", "-s", "512", "-D", "1"}, "above --max-ram-gib");
  // Combinations perftest's modes do not have.
  refused({"-b", "--latency"}, "-b is for the bandwidth tests");
  refused({"-a", "-s", "64"}, "excludes");
  refused({"-a", "--mixed"}, "-a and --mixed cannot be combined");
  refused({"-l", "4", "--post-batch", "4"}, "excludes");
  refused({"-l", "256", "-t", "128", "-n", "1000"}, "-l 256 exceeds the 128 WRs in flight");
  refused({"-l", "2", "--latency"}, "--latency posts one WR at a time");
  refused({"-Q", "0"}, "CQ moderation must be in 1..32768");
  refused({"-q", "0"}, "number of QPs must be in 1..16382");
  refused({"-m", "9000"}, "MTU must be a power of two");
  refused({"-t", "0"}, "tx depth must be in 1..32768");
  // Memory: -a checks every size; the data budget names the option to raise.
  refused({"-a", "-q", "16"}, "-a size 8388608: a 8388608-byte message needs --mem-mib 128 or more");
  refused({"-s", "1048576", "-q", "128"}, "needs --mem-mib 128 or more");
  refused({"-n", "10000000", "-q", "10"}, "above --max-ram-gib 16");
  refused({"--max-ram-gib", "0"}, "memory limit must be > 0");
  // perftest options that do not apply to a simulation: named, with the reason.
  refused({"-d", "rxe0"}, "-d (perftest's device): srnic-sim simulates its two srnic NICs itself; drop it");
  refused({"-s", "64", "192.168.1.2"}, "'192.168.1.2' (perftest's server address): srnic-sim runs both hosts itself");
  refused({"-c", "UD"}, "-c (perftest's transport): srnic implements RC only");
  refused({"-x", "3"}, "-x (perftest's GID index)");
  refused({"-R"}, "-R (perftest's rdma_cm)");
  refused({"--bogus", "3"}, "unknown option: --bogus 3 (srnic-sim --help lists the options)");
  refused({"-I", "64"}, "-I (perftest's inline size)");
  // What the budgets allow.
  ok({"--size", "1073741824", "--mem-mib", "1024", "-n", "1"});
  ok({"-a", "-q", "16", "--mem-mib", "128", "--yes"});  // about 55 min of wall time: needs --yes
  ok({"-n", "10000000", "-q", "10", "--max-ram-gib", "64", "--yes"});
}

TEST(PerftestCli, HelpTellsTheTruth) {
  RunConfig cfg;
  const CliResult h = parse({"--help"}, cfg);
  ASSERT_EQ(h.code, 0);
  const std::string& t = h.message;
  for (const char* opt : {"-s,--size", "-n,--iters", "-q,--qps,--qp", "-m,--mtu", "-t,--tx-depth", "-a,--all",
                          "-D,--duration", "-b,--bidirectional", "-F,--CPU-freq", "--report_gbits",
                          "-Q,--cq-mod,--signal-every", "-l,--post_list", "--latency", "--max-ram-gib",
                          "-N,--noPeak", "-V,--version", "--report_both,--report-both", "--output",
                          "--run_infinitely", "--periods", "--write_with_imm", "--send_with_imm", "-o,--outs",
                          "--yes"})
    EXPECT_NE(t.find(opt), std::string::npos) << opt;
  EXPECT_NE(t.find("1..16382"), std::string::npos);
  EXPECT_EQ(t.find("16383"), std::string::npos);
  // ext is refused, and the help says so next to the option.
  const size_t mode = t.find("--mode");
  ASSERT_NE(mode, std::string::npos);
  EXPECT_NE(t.substr(mode, 300).find("refused"), std::string::npos) << t.substr(mode, 300);
  // Loss works (go-back-N): its help must not call it refused.
  const size_t loss = t.find("--loss");
  ASSERT_NE(loss, std::string::npos);
  EXPECT_EQ(t.substr(loss, 120).find("refused"), std::string::npos) << t.substr(loss, 120);
  EXPECT_NE(t.find("SIMULATED time"), std::string::npos);
  EXPECT_NE(t.find("Usage: srnic-sim [OPTIONS]\n"), std::string::npos) << t.substr(0, 200);
}

TEST(PerftestCli, MemoryEstimate) {
  RunConfig c;
  c.size = 1ull << 30;
  c.iters = 1;
  c.mem_mib = 2048;
  const MemoryEstimate e = estimate_memory(c);
  EXPECT_EQ(e.regions_per_host, 1u);
  EXPECT_EQ(e.slot_bytes, 1ull << 30);
  // docs/large-messages.md measured 10.5 GB for this run.
  EXPECT_GT(e.ram_bytes, 10e9);
  EXPECT_LT(e.ram_bytes, 12e9);
  c.bidir = true;
  EXPECT_EQ(estimate_memory(c).regions_per_host, 2u);
  RunConfig m;
  m.iters = 1000000;
  m.size = 64;
  EXPECT_NEAR(estimate_memory(m).ram_bytes, 512e6 + 64 * 1048576.0, 30e6);
}

// ------------------------------------------------------------------ perftest options added later

TEST(PerftestCli, MorePerftestOptions) {
  // -N: no BW peak.
  EXPECT_TRUE(ok({"-N"}).no_peak);
  EXPECT_TRUE(ok({"--noPeak"}).no_peak);
  // --report_both (and perftest's own spelling --report-both) with -b.
  EXPECT_TRUE(ok({"-b", "--report_both"}).report_both);
  EXPECT_TRUE(ok({"-b", "--report-both"}).report_both);
  // --output: perftest's three levels.
  EXPECT_EQ(ok({"--output=bandwidth"}).output, RunConfig::Output::Bandwidth);
  EXPECT_EQ(ok({"--output", "message_rate"}).output, RunConfig::Output::MessageRate);
  EXPECT_EQ(ok({"--latency", "--output=latency"}).output, RunConfig::Output::Latency);
  EXPECT_EQ(ok({}).output, RunConfig::Output::Full);
  // -o: READs in flight per QP, up to the NIC's 64 READ contexts; the plan holds them to it.
  const RunConfig o = ok({"--op", "read", "-o", "16", "-n", "100"});
  EXPECT_EQ(o.outs, 16u);
  EXPECT_EQ(make_plan(o).inflight, 16u);
  EXPECT_EQ(ok({"--op", "read", "--outs=64"}).outs, 64u);
  EXPECT_EQ(make_plan(ok({"--op", "read", "-n", "100"})).inflight, 100u);  // no -o: tx depth and slots only
  // Immediates: --write_with_imm on WRITE, --send_with_imm selects SEND.
  const RunConfig w = ok({"--write_with_imm", "-n", "10"});
  EXPECT_TRUE(w.imm);
  EXPECT_EQ(w.op, Op::Write);
  EXPECT_TRUE(has_recv(w));
  const RunConfig sn = ok({"--send_with_imm", "-n", "10"});
  EXPECT_TRUE(sn.imm);
  EXPECT_EQ(sn.op, Op::Send);
  EXPECT_FALSE(has_recv(ok({"-n", "10"})));
  // A WRITE with immediate consumes a receive: the plan expects its completion too.
  EXPECT_EQ(make_plan(w).expected_completions, 2 * 10u);
  EXPECT_EQ(make_plan(ok({"-n", "10"})).expected_completions, 10u);
  // --run_infinitely: --periods rows of -D; the run posts for all of them.
  const RunConfig r = ok({"-D", "10us", "--run_infinitely", "--periods", "3", "-s", "4096"});
  EXPECT_DOUBLE_EQ(r.period_us, 10.0);
  EXPECT_EQ(r.periods, 3u);
  EXPECT_DOUBLE_EQ(r.duration_us, 30.0);
  EXPECT_EQ(r.iters, duration_iters(r));
  EXPECT_EQ(ok({"-D", "10us"}).periods, 1u);
  EXPECT_DOUBLE_EQ(ok({"-D", "10us"}).period_us, 0.0);
}

TEST(PerftestCli, VersionIsAskedFor) {
  RunConfig cfg;
  for (const char* v : {"-V", "--version"}) {
    const CliResult r = parse({v}, cfg);
    EXPECT_TRUE(r.version) << v;
    EXPECT_FALSE(r.run) << v;
    EXPECT_EQ(r.code, 0) << v;
  }
  EXPECT_FALSE(parse({"-n", "5"}, cfg).version);
}

TEST(PerftestCli, ReproduceCommandCarriesTheNewOptions) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--op", "read", "-o", "8", "-N", "-n", "32"},
        {"--send_with_imm", "-n", "16", "-b", "--report_both"},
        {"--write_with_imm", "-n", "16", "--output=message_rate"},
        {"-D", "20us", "--run_infinitely", "--periods", "4"},
        {"--latency", "--output=latency", "--write_with_imm"},
        {"-D", "1", "--yes"}}) {
    const RunConfig c = ok(args);
    const std::string cmd = reproduce_command(c);
    const RunConfig b = ok(words(cmd));
    EXPECT_EQ(b.op, c.op) << cmd;
    EXPECT_EQ(b.outs, c.outs) << cmd;
    EXPECT_EQ(b.no_peak, c.no_peak) << cmd;
    EXPECT_EQ(b.imm, c.imm) << cmd;
    EXPECT_EQ(b.report_both, c.report_both) << cmd;
    EXPECT_EQ(b.output, c.output) << cmd;
    EXPECT_EQ(b.periods, c.periods) << cmd;
    EXPECT_DOUBLE_EQ(b.period_us, c.period_us) << cmd;
    EXPECT_DOUBLE_EQ(b.duration_us, c.duration_us) << cmd;
    EXPECT_EQ(b.yes, c.yes) << cmd;
  }
}

TEST(PerftestCli, NewOptionsMisuseIsOneLineExitTwo) {
  // -o: READ only, 1..64 (srnic's READ contexts).
  refused({"-o", "16"}, "-o (outstanding READs) is for --op read");
  refused({"--op", "read", "-o", "65"}, "srnic keeps at most 64 READs outstanding (its READ contexts, shared by every QP), got 65");
  refused({"--op", "read", "-o", "0"}, "outstanding READs must be an integer in 1..64");
  refused({"--op", "read", "-o", "x"}, "outstanding READs must be an integer in 1..64");
  // -N, --report_both, --output.
  refused({"-N", "--latency"}, "-N is for the bandwidth tests");
  refused({"--report_both"}, "--report_both reports each direction of a bidirectional run; add -b");
  refused({"--output=foo"}, "perftest's output levels are bandwidth, message_rate and latency, got 'foo'");
  refused({"--output=latency"}, "--output=latency is for the latency tests");
  refused({"--latency", "--output=bandwidth"}, "--output=bandwidth is for the bandwidth tests");
  refused({"--output=bandwidth", "--json"}, "--output and --json both choose what is printed");
  refused({"-b", "--report_both", "--output=bandwidth"}, "--output prints one number per row; drop --report_both");
  // --run_infinitely and --periods.
  refused({"--run_infinitely", "--periods", "2"}, "--run_infinitely needs -D");
  refused({"--run_infinitely", "-D", "10us"}, "a simulation has to end and prints its rows then; give --periods N");
  refused({"--periods", "2", "-D", "10us"}, "--periods needs --run_infinitely");
  refused({"--run_infinitely", "-D", "10us", "--periods", "2", "--latency"}, "-D is for the bandwidth tests");
  refused({"--run_infinitely", "--periods", "2", "--latency"}, "--run_infinitely is for the bandwidth tests");
  refused({"--run_infinitely", "-D", "10us", "--periods", "2", "-a"}, "--run_infinitely runs one size; drop -a");
  refused({"--run_infinitely", "-D", "10us", "--periods", "2", "-b", "--report_both"},
          "--run_infinitely prints one row per period; drop --report_both");
  refused({"--run_infinitely", "-D", "10us", "--periods", "0"}, "periods must be in 1..1000000");
  // Immediates.
  refused({"--write_with_imm", "--op", "read"}, "--write_with_imm is for --op write (ib_write_bw / ib_write_lat), not --op read");
  refused({"--send_with_imm", "--op", "write"}, "--send_with_imm is for --op send");
  refused({"--write_with_imm", "--send_with_imm"}, "cannot be combined");
  refused({"--inject-fault", "imm"}, "--inject-fault imm needs --write_with_imm or --send_with_imm");
  // -o is no longer among the options refused as not applying to a simulation.
  RunConfig cfg;
  EXPECT_EQ(parse({"--op", "read", "-o", "16"}, cfg).message.find("drop it"), std::string::npos);
}

TEST(PerftestCli, WallTimeIsEstimatedAndLongRunsNeedYes) {
  // -D is simulated time; perftest's unit is seconds: -D 5 is about 2 hours of simulation.
  refused({"-D", "5"},
          "-D 5 is 5 s of simulated time: about 2.1 h of wall time at the simulator's typical 200K cycles/s (1500x "
          "slower than real time at 300 MHz), above the 10 min bound; use a shorter -D");
  refused({"-D", "5"}, "or add --yes to run it anyway");
  const RunConfig y = ok({"-D", "5", "--yes"});
  EXPECT_TRUE(y.yes);
  EXPECT_NEAR(estimate_wall(y).wall_s, 5 * 300e6 / 200e3, 60);
  // -n runs: at least the line rate (1e6 x 64 KiB is 5.4 s of wire time).
  refused({"-n", "1000000"}, "this run simulates at least 5.");
  refused({"--latency", "-n", "1000000"}, "this run simulates about 6.2 s");
  refused({"-D", "0.001", "--run_infinitely", "--periods", "1000"}, "of simulated time over its --periods");
  // Around the bound: 0.3 s of simulated time runs, 0.5 s does not.
  ok({"-D", "0.3"});
  refused({"-D", "0.5"}, "above the 10 min bound");
  // Short runs: the estimate is of the order of the measured speed (200K cycles/s).
  const WallEstimate d = estimate_wall(ok({"-D", "1ms"}));
  EXPECT_FALSE(d.lower_bound);
  EXPECT_NEAR(d.sim_us, 1000 + 70, 20);
  EXPECT_NEAR(d.wall_s, (1000 + 70) * 300 / 200e3, 0.05);
  const WallEstimate n = estimate_wall(ok({"-s", "65536", "-n", "64"}));
  EXPECT_TRUE(n.lower_bound);
  EXPECT_NEAR(n.sim_us, 70 + 64 * double(wire_bytes(Op::Write, 65536, 4096)) * 8 / 100 / 1000, 20);
  // -a adds its sizes; a slower clock is fewer cycles per simulated second.
  EXPECT_GT(estimate_wall(ok({"-a"})).wall_s, 100);
  RunConfig slow = ok({"-D", "1ms"});
  slow.clock_mhz = 150;
  EXPECT_NEAR(estimate_wall(slow).wall_s, d.wall_s / 2, 0.01);
  EXPECT_EQ(human_seconds(7500), "2.1 h");
  EXPECT_EQ(human_seconds(600), "10 min");
  EXPECT_EQ(human_seconds(1.5), "1.5 s");
  EXPECT_EQ(human_seconds(0.00081), "810 us");
}

namespace {

// A finished two-QP bidirectional WRITE run, filled by hand: host 0 completed 30 messages, host 1 10.
std::pair<RunConfig, RunResult> bidir_run() {
  RunConfig c;
  c.size = 1000;
  c.qps = 2;
  c.iters = 20;
  c.bidir = true;
  c.report_both = true;
  RunResult r;
  r.finished = r.data_ok = true;
  r.has_peak = true;
  r.bytes = 40 * 1000;
  r.messages = 40;
  r.measured_ns = 10000;
  r.goodput_gbps = 32;
  r.msg_rate_mrps = 4;
  r.peak_gbps = 40;
  r.dirs[0] = DirResult{30, 30000, 24, 3, 30, 3.75};
  r.dirs[1] = DirResult{10, 10000, 8, 1, 10, 1.25};
  r.hosts.resize(2);
  return {c, r};
}

using test::printed;

}  // namespace

TEST(PerftestReport, IterationsAreHostZerosMessagesOverAllQps) {
  // perftest prints -n x QPs (and with -D the messages completed), for its own side: host 0.
  auto cr = bidir_run();
  RunConfig& c = cr.first;
  RunResult& r = cr.second;
  EXPECT_EQ(iterations(c, r), 20u * 2);
  EXPECT_EQ(iterations(c, r, 1), 20u * 2);
  c.duration_us = 10;
  EXPECT_EQ(iterations(c, r), 30u);
  EXPECT_EQ(iterations(c, r, 1), 10u);
  c.duration_us = 0;
  c.latency = true;
  EXPECT_EQ(iterations(c, r), 20u);
  // The header says what the column counts.
  c.latency = false;
  const std::string h = printed([&](std::FILE* f) { print_header(f, c, r, "Vtest"); });
  EXPECT_NE(h.find(" #iterations     : messages host 0 posted, all QPs: -n x -q (as perftest)\n"), std::string::npos) << h;
  c.duration_us = 10;
  EXPECT_NE(printed([&](std::FILE* f) { print_header(f, c, r, "Vtest"); })
                .find(" #iterations     : host 0's messages completed within the duration, all QPs (as perftest)\n"),
            std::string::npos);
}

TEST(PerftestReport, TitleAndHeaderSayWhatRuns) {
  auto cr = bidir_run();
  RunConfig& c = cr.first;
  RunResult& r = cr.second;
  // perftest's wording.
  EXPECT_EQ(test_title(c), "RDMA_Write Bidirectional BW Test");
  c.post_list = 4;
  EXPECT_EQ(test_title(c), "RDMA_Write Bidirectional Post List BW Test");
  c.bidir = false;
  c.post_list = 0;
  EXPECT_EQ(test_title(c), "RDMA_Write BW Test");
  c.op = Op::Send;
  c.latency = true;
  EXPECT_EQ(test_title(c), "Send Latency Test");
  // READ: outstanding reads instead of inline data; the estimate, -N and immediates are named.
  c = bidir_run().first;
  c.op = Op::Read;
  c.bidir = false;
  c.outs = 8;
  c.no_peak = true;
  std::string h = printed([&](std::FILE* f) { print_header(f, c, r, "Vtest"); });
  EXPECT_NE(h.find("                    RDMA_Read BW Test\n"), std::string::npos) << h;
  EXPECT_NE(h.find(" Outstand reads  : 8 per QP"), std::string::npos) << h;
  EXPECT_EQ(h.find("Max inline data"), std::string::npos) << h;
  EXPECT_NE(h.find(" BW peak         : not measured (-N)"), std::string::npos) << h;
  EXPECT_NE(h.find(" Estimated wall  : "), std::string::npos) << h;
  c.op = Op::Write;
  c.outs = 0;
  c.imm = true;
  h = printed([&](std::FILE* f) { print_header(f, c, r, "Vtest"); });
  EXPECT_NE(h.find(" Immediate data  : ON (RDMA WRITE with immediate"), std::string::npos) << h;
  EXPECT_NE(h.find(" Max inline data : 0[B]"), std::string::npos) << h;
}

TEST(PerftestReport, ReportBothPrintsEachDirection) {
  const auto run = bidir_run();
  const std::string t = printed([&](std::FILE* f) { print_directions(f, {run}); });
  // perftest's sections, each with its titles and the host's row (MB/sec: 24 Gb/s = 2861.02).
  const size_t local = t.find("\n Local results:\n");
  const size_t remote = t.find("\n Remote results:\n");
  ASSERT_NE(local, std::string::npos) << t;
  ASSERT_NE(remote, std::string::npos) << t;
  EXPECT_LT(local, remote);
  EXPECT_NE(t.find(" 1000       40             3576.28            2861.02              3.000000\n", local), std::string::npos) << t;
  EXPECT_NE(t.find(" 1000       40             1192.09            953.67               1.000000\n", remote), std::string::npos) << t;
  // The JSON has both rows and the directions.
  const nlohmann::json j = run_json(run.first, run.second, "Vtest");
  EXPECT_EQ(j.at("perftest").at("local_row")[1], 40);
  EXPECT_DOUBLE_EQ(j["perftest"]["remote_row"][3].get<double>(), bw_in_unit(run.first, 8));
  ASSERT_EQ(j.at("directions").size(), 2u);
  EXPECT_EQ(j["directions"][0].at("messages"), 30);
  EXPECT_DOUBLE_EQ(j["directions"][1].at("goodput_gbps").get<double>(), 8.0);
  // Without --report_both no sections in the JSON row.
  auto plain = run;
  plain.first.report_both = false;
  EXPECT_FALSE(run_json(plain.first, plain.second, "Vtest").at("perftest").contains("local_row"));
}

TEST(PerftestReport, NoPeakPeriodsAndOutput) {
  auto cr = bidir_run();
  RunConfig& c = cr.first;
  RunResult& r = cr.second;
  c.bidir = c.report_both = false;
  // -N: the peak column reads 0.00 as perftest's, the JSON has no number.
  c.no_peak = true;
  r.has_peak = false;
  r.peak_gbps = 0;
  EXPECT_EQ(printed([&](std::FILE* f) { print_row(f, c, r); }),
            " 1000       40             0.00               3814.70              4.000000\n");
  nlohmann::json j = run_json(c, r, "Vtest");
  EXPECT_TRUE(j.at("peak_gbps").is_null());
  EXPECT_EQ(printed([&](std::FILE* f) { print_checks(f, c, r); }).find("(peak"), std::string::npos);
  // --run_infinitely: a row per period with host 0's messages of that period.
  c.duration_us = 30;
  c.period_us = 10;
  c.periods = 3;
  r.periods = {PeriodResult{10, 10, 10000, 8, 1}, PeriodResult{15, 15, 15000, 12, 1.5},
               PeriodResult{15, 15, 15000, 12, 1.5}};
  const std::string rows = printed([&](std::FILE* f) { print_row(f, c, r); });
  EXPECT_EQ(rows,
            " 1000       10             0.00               953.67               1.000000\n"
            " 1000       15             0.00               1430.51              1.500000\n"
            " 1000       15             0.00               1430.51              1.500000\n");
  j = run_json(c, r, "Vtest");
  EXPECT_EQ(j.at("period_results").size(), 3u);
  EXPECT_EQ(j.at("perftest").at("period_rows").size(), 3u);
  EXPECT_DOUBLE_EQ(j.at("period_us").get<double>(), 10.0);
  // --output: the numbers alone, one per row, "%f" as perftest's "%lf".
  c.output = RunConfig::Output::Bandwidth;
  EXPECT_EQ(printed([&](std::FILE* f) { print_value(f, c, r); }), "953.674316\n1430.511475\n1430.511475\n");
  c.output = RunConfig::Output::MessageRate;
  r.periods.clear();
  EXPECT_EQ(printed([&](std::FILE* f) { print_value(f, c, r); }), "4.000000\n");
  c.report_gbits = true;
  c.output = RunConfig::Output::Bandwidth;
  EXPECT_EQ(printed([&](std::FILE* f) { print_value(f, c, r); }), "32.000000\n");
  c.latency = true;
  c.output = RunConfig::Output::Latency;
  r.latency = summarize_latency({3000, 3200});
  EXPECT_EQ(printed([&](std::FILE* f) { print_value(f, c, r); }), "3.100000\n");
}
