// Tests of the srnic-sim command line (validation, one-line errors) and the workload plan
// (mixed sizes, slots, in-flight limit, reference-model workload, 100GE goodput limit).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "workload.hpp"
#include "workload_cli.hpp"

using namespace srnic::sim;

using test::expect_usage_error;
using test::parse;

TEST(Cli, DefaultsAndValues) {
  RunConfig cfg;
  CliResult r = parse({}, cfg);
  ASSERT_TRUE(r.run);
  EXPECT_EQ(cfg.op, Op::Write);
  EXPECT_EQ(cfg.mtu, 4096u);
  EXPECT_EQ(cfg.tx_depth, 128u);
  EXPECT_EQ(cfg.clock_mhz, 300.0);

  RunConfig c2;
  r = parse({"--op", "send", "--size", "1073741824", "--qps", "1", "--iters", "3", "--mtu", "256",
             "--mode", "std", "--seed", "77", "--mixed", "--json", "--pcap", "x.pcap", "--clock-mhz", "250",
             "--pcie-latency-ns", "500", "--link-delay-ns", "20", "--max-cycles", "1000", "--tx-depth", "8",
             "--mem-mib", "1024"},
            c2);
  ASSERT_TRUE(r.run) << r.message;
  EXPECT_EQ(c2.op, Op::Send);
  EXPECT_EQ(c2.size, 1ull << 30);
  EXPECT_EQ(c2.qps, 1u);
  EXPECT_EQ(c2.iters, 3u);
  EXPECT_EQ(c2.mtu, 256u);
  EXPECT_EQ(c2.mode, WireMode::Std);
  EXPECT_EQ(c2.seed, 77u);
  EXPECT_TRUE(c2.mixed);
  EXPECT_TRUE(c2.json);
  EXPECT_EQ(c2.pcap, "x.pcap");
  EXPECT_EQ(c2.clock_mhz, 250.0);
  EXPECT_EQ(c2.pcie_latency_ns, 500.0);
  EXPECT_EQ(c2.link_delay_ns, 20.0);
  EXPECT_EQ(c2.max_cycles, 1000u);
  EXPECT_EQ(c2.tx_depth, 8u);
}

TEST(Cli, BadInputIsOneLineExitTwo) {
  expect_usage_error({"--op", "atomic"}, "unknown op 'atomic'");
  expect_usage_error({"--size", "1073741825"}, "message size must be in 0..1073741824");
  expect_usage_error({"--size", "-1"}, "message size");
  expect_usage_error({"--mtu", "1000"}, "MTU must be a power of two in 256..4096");
  expect_usage_error({"--mtu", "128"}, "MTU must be a power of two");
  expect_usage_error({"--mtu", "8192"}, "MTU must be a power of two");
  expect_usage_error({"--qps", "0"}, "number of QPs must be in 1..16382");
  expect_usage_error({"--qps", "16383"}, "number of QPs must be in 1..16382");
  expect_usage_error({"--iters", "0"}, "iterations must be in 1..");
  expect_usage_error({"--loss", "1.5"}, "loss probability");
  expect_usage_error({"--mode", "ext"}, "not supported until the SRNIC header extensions exist");
  expect_usage_error({"--mode", "fast"}, "unknown mode 'fast'");
  expect_usage_error({"--latency", "--qps", "2"}, "--latency runs one QP pair");
  expect_usage_error({"--latency", "--size", "0"}, "--size >= 1");
  expect_usage_error({"--bogus"}, "--bogus");
}

// Link impairment options: [DIR:]VALUE per direction, one-line errors naming the range.
TEST(Cli, LinkImpairmentOptions) {
  RunConfig cfg;
  CliResult r = parse({"--dup", "0.1", "--dup", "1:0.2", "--dup-gap", "40", "--jitter", "0:300", "--reorder", "0.05",
                       "--reorder-delay", "1:2500", "--corrupt", "1:0.001", "--burst-loss", "0.02,4", "--loss", "0.01",
                       "--loss", "1:0.03", "--drop", "dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3", "--drop", "psn=7"},
                      cfg);
  ASSERT_TRUE(r.run) << r.message;
  EXPECT_EQ(cfg.loss, 0.01);
  EXPECT_EQ(cfg.impair[0].loss, 0);
  EXPECT_EQ(cfg.impair[1].loss, 0.03);
  EXPECT_EQ(cfg.impair[0].dup, 0.1);
  EXPECT_EQ(cfg.impair[1].dup, 0.2);
  EXPECT_EQ(cfg.impair[0].dup_gap_ns, 40);
  EXPECT_EQ(cfg.impair[1].dup_gap_ns, 40);
  EXPECT_EQ(cfg.impair[0].jitter_ns, 300);
  EXPECT_EQ(cfg.impair[1].jitter_ns, 0);
  EXPECT_EQ(cfg.impair[0].reorder_delay_ns, 1000);
  EXPECT_EQ(cfg.impair[1].reorder_delay_ns, 2500);
  EXPECT_EQ(cfg.impair[1].corrupt, 0.001);
  EXPECT_DOUBLE_EQ(cfg.impair[0].burst.mean_loss(), 0.02);
  EXPECT_DOUBLE_EQ(cfg.impair[1].burst.mean_burst(), 4);
  ASSERT_EQ(cfg.drop.size(), 2u);
  EXPECT_EQ(cfg.drop[0].to_string(), "dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3");
  const LinkConfig lc = link_config(cfg);
  EXPECT_EQ(lc.direction(0).loss, 0.01);
  EXPECT_EQ(lc.direction(1).loss, 0.03);
  EXPECT_EQ(lc.drop_rules.size(), 2u);
  EXPECT_EQ(lc.delay_ns, cfg.link_delay_ns);
  EXPECT_TRUE(impairs(cfg));

  // A DIR: value overrides the plain one whatever the order.
  RunConfig o;
  parse({"--jitter", "1:7", "--jitter", "9"}, o);
  EXPECT_EQ(o.impair[0].jitter_ns, 9);
  EXPECT_EQ(o.impair[1].jitter_ns, 7);

  // The four parameters of the Gilbert-Elliott chain.
  RunConfig g;
  parse({"--burst-loss", "0:0.01,0.1,0.002,0.6"}, g);
  EXPECT_EQ(g.impair[0].burst.p_good_bad, 0.01);
  EXPECT_EQ(g.impair[0].burst.loss_bad, 0.6);
  EXPECT_FALSE(g.impair[1].burst.enabled());

  // Nothing configured: no impairment.
  RunConfig plain;
  ASSERT_TRUE(parse({"--reorder-delay", "5", "--dup-gap", "3"}, plain).run);
  EXPECT_FALSE(impairs(plain));
}

TEST(Cli, BadImpairmentValuesAreOneLineErrors) {
  expect_usage_error({"--reorder", "2"}, "reorder probability must be >= 0 and <= 1, got 2");
  expect_usage_error({"--dup", "-0.1"}, "duplication probability must be >= 0 and <= 1");
  expect_usage_error({"--corrupt", "x"}, "corruption probability must be a number, got 'x'");
  expect_usage_error({"--jitter", "-5"}, "jitter must be >= 0");
  expect_usage_error({"--reorder-delay", "2e9"}, "reorder delay must be >= 0 and <= 1e+09");
  expect_usage_error({"--dup-gap", "-1"}, "duplicate gap must be >= 0");
  expect_usage_error({"--dup", "2:0.1"}, "direction must be 0 or 1");
  expect_usage_error({"--loss", "01:0.1"}, "direction must be 0 or 1");
  expect_usage_error({"--burst-loss", "0.9,1"}, "needs p(good->bad) > 1");
  expect_usage_error({"--burst-loss", "0.01"}, "burst loss must be RATE,BURST");
  expect_usage_error({"--burst-loss", "0.01,0.5"}, "mean burst length must be >= 1");
  expect_usage_error({"--burst-loss", "0.1,0.2,0.3,1.5"}, "P_GB,P_BG,LOSS_GOOD,LOSS_BAD (each 0..1)");
  expect_usage_error({"--drop", "op=FOO"}, "drop rule 'op=FOO': op must be an RC opcode name");
  expect_usage_error({"--drop", "nth=0"}, "nth must be an integer >= 1");
  expect_usage_error({"--drop", "qpn=1,colour=red"}, "unknown key 'colour'");
  expect_usage_error({"--dup", "0.1", "0.2"}, "0.2");  // one value per option
}

TEST(Cli, ReproduceCommandCarriesTheImpairments) {
  RunConfig cfg;
  parse({"--loss", "0.0123456789", "--loss", "1:0.5", "--burst-loss", "0:0.02,4", "--burst-loss",
         "1:0.01,0.1,0.002,0.6", "--reorder", "0.05", "--reorder-delay", "1:2500", "--dup", "0:0.1", "--dup-gap", "33",
         "--jitter", "250", "--corrupt", "1:0.001", "--drop", "dir=1,op=0x0e,qpn=5,nth=3", "--drop", "psn=1-9,every=2"},
        cfg);
  cfg.impair[1].burst.p_good_bad = 1.0 / 3;  // the chain parameters are printed with every digit
  const std::string cmd = reproduce_command(cfg);
  EXPECT_NE(cmd.find("--burst-loss 0:0.02,4 "), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--drop dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3"), std::string::npos) << cmd;
  std::vector<std::string> words;
  std::istringstream in(cmd.substr(cmd.find(' ') + 1));
  for (std::string w; in >> w;) words.push_back(w);
  RunConfig back;
  parse(words, back);
  EXPECT_EQ(back.loss, cfg.loss);
  for (int d = 0; d < 2; ++d) {
    const Impairments &a = cfg.impair[d], &b = back.impair[d];
    EXPECT_EQ(b.loss, a.loss) << d;
    EXPECT_EQ(b.burst.p_good_bad, a.burst.p_good_bad) << d;
    EXPECT_EQ(b.burst.p_bad_good, a.burst.p_bad_good) << d;
    EXPECT_EQ(b.burst.loss_good, a.burst.loss_good) << d;
    EXPECT_EQ(b.burst.loss_bad, a.burst.loss_bad) << d;
    EXPECT_EQ(b.reorder, a.reorder) << d;
    EXPECT_EQ(b.reorder_delay_ns, a.reorder_delay_ns) << d;
    EXPECT_EQ(b.dup, a.dup) << d;
    EXPECT_EQ(b.dup_gap_ns, a.dup_gap_ns) << d;
    EXPECT_EQ(b.jitter_ns, a.jitter_ns) << d;
    EXPECT_EQ(b.corrupt, a.corrupt) << d;
  }
  ASSERT_EQ(back.drop.size(), 2u);
  EXPECT_EQ(back.drop[1].to_string(), "psn=1-9,every=2");
}

// --pcie-error SPEC (repeatable) and --pcie-error-host: the rules reach RunConfig in order,
// parse back from the reproducing command, and misuse is a one-line error.
TEST(Cli, PcieErrorOptions) {
  RunConfig plain;
  ASSERT_TRUE(parse({}, plain).run);
  EXPECT_TRUE(plain.pcie_errors.empty());
  EXPECT_EQ(plain.pcie_error_host, 0u);
  EXPECT_EQ(reproduce_command(plain).find("--pcie-error"), std::string::npos);

  RunConfig cfg;
  CliResult r = parse({"--pcie-error", "read:nth=120", "--pcie-error", "write:addr=0x1000-0x2000:decerr",
                       "--pcie-error", "read:rate=0.001:slverr", "--pcie-error-host", "1"},
                      cfg);
  ASSERT_TRUE(r.run) << r.message;
  ASSERT_EQ(cfg.pcie_errors.size(), 3u);
  EXPECT_EQ(cfg.pcie_error_host, 1u);
  const PcieErrorRule& a = cfg.pcie_errors[0];
  EXPECT_EQ(a.channel, PcieErrorRule::Channel::Read);
  EXPECT_EQ(a.nth, 120u);
  EXPECT_EQ(a.resp, PcieErrorRule::kSlvErr);
  const PcieErrorRule& b = cfg.pcie_errors[1];
  EXPECT_EQ(b.channel, PcieErrorRule::Channel::Write);
  EXPECT_EQ(b.lo, 0x1000u);
  EXPECT_EQ(b.hi, 0x2000u);
  EXPECT_EQ(b.resp, PcieErrorRule::kDecErr);
  EXPECT_EQ(cfg.pcie_errors[2].rate, 0.001);

  const std::string cmd = reproduce_command(cfg);
  EXPECT_NE(cmd.find("--pcie-error read:nth=120:slverr --pcie-error write:addr=0x1000-0x2000:decerr "
                     "--pcie-error read:rate=0.001:slverr --pcie-error-host 1"),
            std::string::npos)
      << cmd;
  RunConfig back;
  ASSERT_TRUE(parse(test::words(cmd), back).run) << cmd;
  ASSERT_EQ(back.pcie_errors.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(back.pcie_errors[i].to_string(), cfg.pcie_errors[i].to_string()) << i;
  EXPECT_EQ(back.pcie_error_host, 1u);
}

TEST(Cli, BadPcieErrorOptionsAreOneLineErrors) {
  expect_usage_error({"--pcie-error", "read"}, "needs addr=LO-HI, rate=P or nth=N");
  expect_usage_error({"--pcie-error", "dma:nth=1"}, "must start with read or write");
  expect_usage_error({"--pcie-error", "read:nth=0"}, "nth must be an integer >= 1");
  expect_usage_error({"--pcie-error", "read:rate=0"}, "rate must be a probability in (0, 1]");
  expect_usage_error({"--pcie-error", "read:rate=1.01"}, "rate must be a probability in (0, 1]");
  expect_usage_error({"--pcie-error", "write:addr=0x2000-0x1000"}, "addr range 0x2000-0x1000 is empty");
  expect_usage_error({"--pcie-error", "write:addr=0x1000-0x1000"}, "is empty");
  expect_usage_error({"--pcie-error", "write:addr=4096"}, "addr must be LO-HI");
  expect_usage_error({"--pcie-error", "write:nth=3:okerr"}, "unknown item 'okerr'");
  expect_usage_error({"--pcie-error", "write:nth=3:slverr:decerr"}, "response code is given twice");
  expect_usage_error({"--pcie-error", "read:nth=1", "--pcie-error-host", "2"}, "PCIe error host must be in 0..1");
  expect_usage_error({"--pcie-error-host", "1"}, "--pcie-error-host needs --pcie-error");
  expect_usage_error({"--pcie-error", "read:nth=1", "read:nth=2"}, "read:nth=2");  // one rule per option
}

TEST(Cli, ReproduceCommandCarriesTheRun) {
  RunConfig cfg;
  ASSERT_TRUE(parse({"--seed", "5", "--op", "read", "--mixed", "--size", "9000"}, cfg).run);
  const std::string cmd = reproduce_command(cfg);
  EXPECT_NE(cmd.find("--op read"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--seed 5"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--mixed"), std::string::npos) << cmd;
  // The command parses back into the same configuration.
  RunConfig back;
  ASSERT_TRUE(parse(test::words(cmd), back).run);
  EXPECT_EQ(back.op, cfg.op);
  EXPECT_EQ(back.seed, cfg.seed);
  EXPECT_EQ(back.mixed, cfg.mixed);
  EXPECT_EQ(back.size, cfg.size);
}

TEST(Plan, FixedSizeSlotsAndInflight) {
  RunConfig cfg;
  cfg.size = 65536;
  cfg.qps = 4;
  cfg.iters = 1000;
  cfg.mem_mib = 64;
  const Plan p = make_plan(cfg);
  ASSERT_EQ(p.sizes.size(), 4u);
  EXPECT_EQ(p.sizes[3].size(), 1000u);
  EXPECT_EQ(p.stride, 65536u);
  // 64 MiB / 4 QPs / 64 KiB = 256 slots, capped by tx_depth 128.
  EXPECT_EQ(p.slots, 128u);
  EXPECT_EQ(p.inflight, 128u);
  EXPECT_EQ(p.sq_entries, 128u);
  EXPECT_EQ(p.total_bytes, 4u * 1000u * 65536u);
  EXPECT_EQ(p.expected_completions, 4000u);
  EXPECT_EQ(p.offset(129), 65536u);

  cfg.qps = 64;  // 1 MiB per QP: 16 slots, so 16 in flight
  const Plan q = make_plan(cfg);
  EXPECT_EQ(q.slots, 16u);
  EXPECT_EQ(q.inflight, 16u);
  EXPECT_LE(uint64_t(q.slots) * q.stride * 64, 64ull << 20);

  cfg.op = Op::Send;
  cfg.iters = 3;
  const Plan s = make_plan(cfg);
  EXPECT_EQ(s.slots, 3u);  // never more slots than messages
  EXPECT_EQ(s.expected_completions, 64u * 3 * 2);
}

TEST(Plan, SignalEveryCountsSignaledWrs) {
  RunConfig cfg;
  cfg.iters = 10;
  cfg.qps = 2;
  cfg.signal_every = 4;
  // WRs 3, 7 and the last one (9) are signaled.
  EXPECT_FALSE(signaled(cfg, 0));
  EXPECT_TRUE(signaled(cfg, 3));
  EXPECT_TRUE(signaled(cfg, 7));
  EXPECT_FALSE(signaled(cfg, 8));
  EXPECT_TRUE(signaled(cfg, 9));
  EXPECT_EQ(make_plan(cfg).expected_completions, 2u * 3);
  cfg.op = Op::Send;  // receives always complete
  EXPECT_EQ(make_plan(cfg).expected_completions, 2u * (3 + 10));

  RunConfig c;
  EXPECT_TRUE(parse({"--signal-every", "16", "--iters", "100"}, c).run);
  expect_usage_error({"--signal-every", "16", "--tx-depth", "8", "--iters", "100"},
                     "--signal-every 16 exceeds the 8 WRs in flight per QP");
  expect_usage_error({"--signal-every", "2", "--latency"}, "--latency signals every WR");
  expect_usage_error({"--signal-every", "0"}, "CQ moderation must be in 1..32768");
}

TEST(Plan, HugeMessageUsesOneSlot) {
  RunConfig cfg;
  cfg.size = 1ull << 30;
  cfg.iters = 2;
  const Plan p = make_plan(cfg);
  EXPECT_EQ(p.slots, 1u);
  EXPECT_EQ(p.inflight, 1u);
  EXPECT_EQ(p.region, 1ull << 30);
}

TEST(Plan, MixedSizesComeFromTheMenuAndTheSeed) {
  RunConfig cfg;
  cfg.mixed = true;
  cfg.size = 9000;
  cfg.mtu = 1024;
  cfg.qps = 3;
  cfg.iters = 600;
  const Plan a = make_plan(cfg);
  std::set<uint32_t> seen;
  uint64_t others = 0;
  for (const auto& q : a.sizes)
    for (uint32_t v : q) {
      if (v == 0 || v == 1 || v == 1023 || v == 1024 || v == 1025)
        seen.insert(v);
      else
        ++others;
      EXPECT_LE(v, 9000u);
    }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_GT(others, 150u);  // about a sixth of 1800 are uniform draws
  EXPECT_EQ(a.stride, a.max_size);
  // Same seed, same sizes; other seed, other sizes; QPs differ from each other.
  EXPECT_EQ(make_plan(cfg).sizes, a.sizes);
  EXPECT_NE(a.sizes[0], a.sizes[1]);
  cfg.seed = 2;
  EXPECT_NE(make_plan(cfg).sizes, a.sizes);
}

TEST(Plan, LatencyPingPong) {
  RunConfig cfg;
  cfg.latency = true;
  cfg.size = 64;
  cfg.iters = 10;
  const Plan p = make_plan(cfg);
  EXPECT_EQ(p.slots, 2u);
  EXPECT_EQ(p.expected_completions, 20u);  // both hosts write every round
  const auto r = regions(cfg);
  EXPECT_EQ(r.size(), 4u);  // src and dst on both hosts
  cfg.op = Op::Read;
  EXPECT_EQ(make_plan(cfg).expected_completions, 10u);
  EXPECT_EQ(regions(cfg).size(), 2u);
}

TEST(Workload, VerifWorkloadMatchesThePlan) {
  RunConfig cfg;
  cfg.op = Op::Read;
  cfg.size = 100;
  cfg.qps = 2;
  cfg.iters = 5;
  const Plan p = make_plan(cfg);
  const auto regs = regions(cfg);
  ASSERT_EQ(regs.size(), 4u);
  // Read: host 0 holds the destinations, host 1 the sources.
  EXPECT_FALSE(regs[0].src);
  EXPECT_EQ(regs[0].host, 0u);
  EXPECT_TRUE(regs[1].src);
  std::vector<QpSide> a(2), b(2);
  std::vector<std::vector<uint8_t>> init(regs.size());
  uint64_t base = 0x10000;
  for (size_t k = 0; k < regs.size(); ++k) {
    init[k].assign(p.region + 64, uint8_t(k));
    QpSide& s = (regs[k].host ? b : a)[regs[k].qp];
    (regs[k].src ? s.src : s.dst) = base;
    s.src_key = s.dst_key = 0x100 + regs[k].host;
    s.qpn = 2 + regs[k].qp;
    s.pd = 1;
    base += 0x10000;
  }
  const srnic::verif::Workload w = make_verif_workload(cfg, p, a, b, init);
  ASSERT_EQ(w.hosts.size(), 2u);
  ASSERT_EQ(w.hosts[0].qps.size(), 2u);
  const auto& q1 = w.hosts[0].qps[1];
  ASSERT_EQ(q1.send.size(), 5u);
  EXPECT_TRUE(w.hosts[1].qps[1].send.empty());
  EXPECT_EQ(q1.send[3].opcode, srnic::verif::WrOpcode::Read);
  EXPECT_EQ(q1.send[3].laddr, a[1].dst + p.offset(3));
  EXPECT_EQ(q1.send[3].raddr, b[1].src + p.offset(3));
  EXPECT_EQ(q1.send[3].wr_id, send_wr_id(1, 3));
  // The READ's bytes are stored into the responder's source slot before it is posted.
  EXPECT_EQ(q1.send[3].store.host, 1u);
  EXPECT_EQ(q1.send[3].store.pa, b[1].src + p.offset(3));
  EXPECT_EQ(q1.send[3].store.len, 100u);
  EXPECT_EQ(MessageBytes::from_tag(q1.send[3].store.tag).iter, 3u);
  EXPECT_EQ(q1.peer_qpn, b[1].qpn);
  // The model runs on it and predicts every read completion.
  const srnic::verif::Prediction pred = srnic::verif::predict(w);
  const auto* eq = pred.queue(0, a[1].qpn, srnic::verif::QueueKind::Send);
  ASSERT_NE(eq, nullptr);
  EXPECT_EQ(eq->completions.size(), 5u);
  // Message 4 of QP 1 (slot 4 % slots) ends up with its own bytes.
  const srnic::verif::BufferImage* dst = nullptr;
  for (const auto& img : pred.buffers)
    if (img.host == 0 && img.pa == a[1].dst) dst = &img;
  ASSERT_NE(dst, nullptr);
  std::vector<uint8_t> want(100);
  MessageBytes(cfg, p).fill({0, 1, 4}, 100, 0, want.data(), want.size());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), dst->bytes.begin() + ptrdiff_t(p.offset(4))));
}

TEST(Limit, GoodputLimitFor100GE) {
  // 64 KiB WRITE at MTU 4096: 16 packets of 4096 + 82 B overhead, RETH once.
  const double w = goodput_limit_gbps(Op::Write, 65536, 4096);
  EXPECT_NEAR(w, 100.0 * 65536 / (65536 + 16 * 82 + 16), 1e-9);
  // MTU 1024: 64 packets.
  EXPECT_NEAR(goodput_limit_gbps(Op::Send, 65536, 1024), 100.0 * 65536 / (65536 + 64 * 82), 1e-9);
  EXPECT_LT(goodput_limit_gbps(Op::Write, 65536, 1024), w);
  EXPECT_EQ(goodput_limit_gbps(Op::Write, 0, 4096), 0.0);
  // 1-byte payload pads to 4 and the frame to the 60-byte minimum.
  EXPECT_NEAR(goodput_limit_gbps(Op::Send, 1, 4096), 100.0 * 1 / (62 + 24), 1e-9);
}

TEST(Cli, DataCheckTestOptions) {
  RunConfig cfg;
  ASSERT_TRUE(parse({"--iters", "10", "--inject-fault", "lost"}, cfg).run);
  EXPECT_EQ(cfg.fault, RunConfig::Fault::Lost);
  EXPECT_EQ(cfg.inject_at, 5u);  // iters / 2
  EXPECT_NE(reproduce_command(cfg).find("--inject-fault lost --inject-at 5"), std::string::npos);
  RunConfig c2;
  ASSERT_TRUE(parse({"--pcie-reorder-writes", "--inject-fault", "misplace", "--inject-at", "0"}, c2).run);
  EXPECT_EQ(c2.pcie_reorder, RunConfig::WriteReorder::Ids);
  EXPECT_EQ(c2.inject_at, 0u);
  EXPECT_NE(reproduce_command(c2).find("--pcie-reorder-writes"), std::string::npos);
  expect_usage_error({"--inject-fault", "bogus"}, "unknown fault 'bogus'");
  expect_usage_error({"--inject-at", "3"}, "--inject-at needs --inject-fault");
  expect_usage_error({"--iters", "4", "--inject-fault", "corrupt", "--inject-at", "4"}, "below --iters");
  expect_usage_error({"--pcie-reorder-writes", "--pcie-reorder-all-writes"}, "not both");
}

TEST(Workload, MessageBytesAreOwnedByOneMessage) {
  RunConfig cfg;
  const Plan p = make_plan(cfg);
  const MessageBytes mb(cfg, p);
  std::vector<uint8_t> a(100), b(100), c(100), piece(37);
  mb.fill({0, 3, 7}, 100, 0, a.data(), a.size());
  mb.fill({0, 3, 7}, 100, 0, b.data(), b.size());
  EXPECT_EQ(a, b);
  mb.fill({0, 3, 8}, 100, 0, c.data(), c.size());  // next iteration
  EXPECT_NE(a, c);
  mb.fill({1, 3, 7}, 100, 0, c.data(), c.size());  // other host
  EXPECT_NE(a, c);
  mb.fill({0, 4, 7}, 100, 0, c.data(), c.size());  // other QP
  EXPECT_NE(a, c);
  // Any offset and length give the same bytes.
  mb.fill({0, 3, 7}, 100, 13, piece.data(), piece.size());
  EXPECT_TRUE(std::equal(piece.begin(), piece.end(), a.begin() + 13));
  EXPECT_EQ(mb.first_difference({0, 3, 7}, 100, 13, piece.data(), piece.size()), -1);
  piece[20] ^= 1;
  EXPECT_EQ(mb.first_difference({0, 3, 7}, 100, 13, piece.data(), piece.size()), 20);
  const MessageRef m = MessageBytes::from_tag(MessageBytes::tag({1, 16383, (uint64_t(1) << 40) - 1}));
  EXPECT_EQ(m.host, 1u);
  EXPECT_EQ(m.qp, 16383u);
  EXPECT_EQ(m.iter, (uint64_t(1) << 40) - 1);
  // Latency WRITE: the last byte is the ping-pong marker.
  cfg.latency = true;
  cfg.size = 64;
  const Plan lp = make_plan(cfg);
  const MessageBytes lm(cfg, lp);
  lm.fill({0, 0, 3}, 64, 0, a.data(), 64);
  EXPECT_EQ(a[63], 2);  // 3 % 2 slots + 1
}

TEST(Random, FillIsSeededAndCoversTail) {
  std::vector<uint8_t> a(13), b(13), c(13);
  fill_random(1, 7, a.data(), a.size());
  fill_random(1, 7, b.data(), b.size());
  fill_random(1, 8, c.data(), c.size());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}
