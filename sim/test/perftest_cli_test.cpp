// srnic-sim speaks perftest: its option names with its meanings beside the long names, the -D
// time units, -a, and every bad input answered with one line and exit status 2 (each failure
// names the command line that reproduces it).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
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
  ok({"-a", "-q", "16", "--mem-mib", "128"});
  ok({"-n", "10000000", "-q", "10", "--max-ram-gib", "64"});
}

TEST(PerftestCli, HelpTellsTheTruth) {
  RunConfig cfg;
  const CliResult h = parse({"--help"}, cfg);
  ASSERT_EQ(h.code, 0);
  const std::string& t = h.message;
  for (const char* opt : {"-s,--size", "-n,--iters", "-q,--qps,--qp", "-m,--mtu", "-t,--tx-depth", "-a,--all",
                          "-D,--duration", "-b,--bidirectional", "-F,--CPU-freq", "--report_gbits",
                          "-Q,--cq-mod,--signal-every", "-l,--post_list", "--latency", "--max-ram-gib"})
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
