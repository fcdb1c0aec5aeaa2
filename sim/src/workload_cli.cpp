// srnic-sim command line: CLI11 options with validators that name the accepted range, and the
// cross-option checks (ext mode, link impairments the NIC cannot take yet, latency constraints).
#include "workload_cli.hpp"

#include <CLI/CLI.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

namespace srnic::sim {

namespace {

// Validator accepting an unsigned integer in [lo, hi]; `what` names the value in the message.
CLI::Validator uint_range(uint64_t lo, uint64_t hi, const std::string& what) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        uint64_t v = 0;
        if (s.empty() || s[0] == '-' || !CLI::detail::lexical_cast(s, v))
          return what + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                 ", got '" + s + "'";
        if (v < lo || v > hi)
          return what + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + s;
        return {};
      },
      std::to_string(lo) + ".." + std::to_string(hi));
}

// Empty if s is a number in [lo, hi] (or (lo, hi]), else the message.
std::string check_real(const std::string& s, double lo, double hi, const std::string& what, bool open_lo = false) {
  double v = 0;
  if (!CLI::detail::lexical_cast(s, v) || v != v) return what + " must be a number, got '" + s + "'";
  if (v < lo || v > hi || (open_lo && v == lo)) {
    std::ostringstream o;
    o << what << " must be " << (open_lo ? "> " : ">= ") << lo;
    if (hi < 1e300) o << " and <= " << hi;
    o << ", got " << s;
    return o.str();
  }
  return {};
}

CLI::Validator real_range(double lo, double hi, const std::string& what, bool open_lo = false) {
  return CLI::Validator([=](std::string& s) -> std::string { return check_real(s, lo, hi, what, open_lo); },
                        "number");
}

// Link impairment values are "[DIR:]VALUE": DIR 0 or 1 limits the value to the frames host DIR
// sends (and overrides a plain value for that direction, whatever the order); without it the
// value applies to both directions. False if DIR is not 0 or 1.
bool split_dir(const std::string& s, int& dir, std::string& value) {
  const size_t colon = s.find(':');
  dir = -1;
  value = s;
  if (colon == std::string::npos) return true;
  if (colon != 1 || (s[0] != '0' && s[0] != '1')) return false;
  dir = s[0] - '0';
  value = s.substr(2);
  return true;
}

std::string check_dir(const std::string& s, const std::string& what, std::string& value) {
  int dir = -1;
  if (!split_dir(s, dir, value))
    return what + ": direction must be 0 or 1 (DIR:VALUE applies to the frames host DIR sends), got '" + s + "'";
  return {};
}

// Validator of a "[DIR:]number" in [lo, hi].
CLI::Validator dir_real(double lo, double hi, const std::string& what) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        std::string v;
        std::string e = check_dir(s, what, v);
        return e.empty() ? check_real(v, lo, hi, what) : e;
      },
      "[DIR:]number");
}

// --burst-loss value: RATE,BURST (the simple Gilbert model, BurstLoss::from_rate_burst) or the
// four chain parameters P_GB,P_BG,LOSS_GOOD,LOSS_BAD. Empty and `out` set, or the message.
std::string parse_burst(const std::string& s, BurstLoss& out) {
  const std::string form =
      "burst loss must be RATE,BURST (mean loss rate 0..1, mean burst >= 1 frames) or "
      "P_GB,P_BG,LOSS_GOOD,LOSS_BAD (each 0..1), got '" + s + "'";
  std::vector<double> v;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, ',')) {
    double x = 0;
    if (!CLI::detail::lexical_cast(item, x) || x != x) return form;
    v.push_back(x);
  }
  if (!s.empty() && s.back() == ',') return form;
  if (v.size() == 2) {
    std::string why;
    if (!BurstLoss::from_rate_burst(v[0], v[1], out, &why)) return "burst loss: " + why + ", got '" + s + "'";
    return {};
  }
  if (v.size() != 4) return form;
  for (double x : v)
    if (x < 0 || x > 1) return form;
  out = BurstLoss{v[0], v[1], v[2], v[3]};
  return {};
}

// A double as typed on a command line (15 significant digits read back as the value typed).
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.15g", v);
  return b;
}

// --burst-loss text of b: RATE,BURST when that reads back as exactly b, else the four chain
// parameters with every digit.
std::string burst_text(const BurstLoss& b) {
  if (b.loss_good == 0 && b.loss_bad == 1 && b.p_bad_good > 0) {
    const std::string t = num(b.mean_loss()) + "," + num(1 / b.p_bad_good);
    BurstLoss back;
    if (parse_burst(t, back).empty() && back.p_good_bad == b.p_good_bad && back.p_bad_good == b.p_bad_good) return t;
  }
  char t[128];
  std::snprintf(t, sizeof t, "%.17g,%.17g,%.17g,%.17g", b.p_good_bad, b.p_bad_good, b.loss_good, b.loss_bad);
  return t;
}

// -D value: simulated time, a number with an optional unit s, ms, us or ns (no unit: seconds,
// as perftest's -D). Empty and `us` set, or the message.
std::string parse_duration(const std::string& s, double& us) {
  static const std::pair<const char*, double> units[] = {{"ms", 1e3}, {"us", 1.0}, {"ns", 1e-3}, {"s", 1e6}};
  std::string num = s;
  double scale = 1e6;
  for (const auto& [u, f] : units) {
    const size_t n = std::strlen(u);
    if (s.size() > n && s.compare(s.size() - n, n, u) == 0) {
      num = s.substr(0, s.size() - n);
      scale = f;
      break;
    }
  }
  double v = 0;
  if (!CLI::detail::lexical_cast(num, v) || !(v > 0))
    return "duration must be a positive simulated time such as 0.001 (seconds), 2ms, 50us or 20000ns, got '" + s +
           "'";
  us = v * scale;
  if (us < 0.001 || us > 3600e6)
    return "duration must be between 1 ns and 3600 s of simulated time, got '" + s + "'";
  return {};
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

CliResult parse_cli(int argc, const char* const* argv, RunConfig& cfg) {
  CLI::App app{"srnic-sim: perftest-style RoCEv2 workload between simulated srnic NICs",
               "srnic-sim"};
  const std::map<std::string, Op> ops{{"write", Op::Write}, {"read", Op::Read}, {"send", Op::Send}};
  const std::map<std::string, WireMode> modes{{"std", WireMode::Std}, {"ext", WireMode::Ext}};
  std::string op_s = to_string(cfg.op), mode_s = to_string(cfg.mode);

  // perftest's options with perftest's meanings (ib_write_bw, ib_read_bw, ib_send_bw; the
  // latency tools ib_*_lat with --latency), beside the long names srnic-sim always had.
  app.add_option("--op", op_s, "operation: write | read | send (ib_write_bw / ib_read_bw / ib_send_bw)")
      ->check(CLI::Validator(
          [&](std::string& s) -> std::string {
            return ops.count(s) ? std::string() : "unknown op '" + s + "' (use write, read or send)";
          },
          "write|read|send"))
      ->capture_default_str();
  app.add_option("-s,--size", cfg.size, "message size in bytes, 0 .. 1 GiB (default 65536; 2 with --latency)")
      ->check(uint_range(0, 1ull << 30, "message size"))
      ->capture_default_str();
  app.add_option("-q,--qps,--qp", cfg.qps,
                 "connected QP pairs, 1.." + std::to_string(kUsableQps) + " (the NIC's QPs minus QPN 0 and 1)")
      ->check(uint_range(1, kUsableQps, "number of QPs"))
      ->capture_default_str();
  app.add_option("-n,--iters", cfg.iters, "messages per QP (per host with -b); the memory they need is checked")
      ->check(uint_range(1, 1ull << 40, "iterations"))
      ->capture_default_str();
  app.add_option("-m,--mtu", cfg.mtu, "path MTU: 256 | 512 | 1024 | 2048 | 4096")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            uint64_t v = 0;
            if (!CLI::detail::lexical_cast(s, v) || v < 256 || v > 4096 || (v & (v - 1)))
              return "MTU must be a power of two in 256..4096, got '" + s + "'";
            return {};
          },
          "256..4096"))
      ->capture_default_str();
  app.add_option("-t,--tx-depth", cfg.tx_depth, "outstanding WRs per QP (1..32768)")
      ->check(uint_range(1, 32768, "tx depth"))
      ->capture_default_str();
  auto* all_opt = app.add_flag("-a,--all", cfg.all_sizes,
                               "run every size 2, 4, .. 2^23 bytes, one simulation per size, one line each");
  std::string duration_s;
  auto* dur_opt =
      app.add_option("-D,--duration", duration_s,
                     "post for this much SIMULATED time instead of --iters messages: seconds as perftest "
                     "(0.001) or with a unit (2ms, 50us, 20000ns); one simulated ms takes 1-3 s of wall "
                     "time, and a run estimated above 10 min of wall time needs --yes")
          ->type_name("TIME")
          ->check(CLI::Validator(
              [](std::string& s) -> std::string {
                double us = 0;
                return parse_duration(s, us);
              },
              "TIME")
                     .description(""));
  app.add_flag("-b,--bidirectional", cfg.bidir, "both hosts post on every QP; BW is the sum of both directions");
  app.add_flag("--report_both,--report-both", cfg.report_both,
               "with -b: also a row per direction (host 0's requests: Local, host 1's: Remote), as perftest");
  app.add_flag("-N,--noPeak", cfg.no_peak, "do not compute the BW peak (its column reads 0.00, as perftest)");
  bool version = false;
  app.add_flag("-V,--version", version, "print the RTL commit and the build of this srnic-sim, and exit");
  const std::map<std::string, RunConfig::Output> outputs{{"bandwidth", RunConfig::Output::Bandwidth},
                                                         {"message_rate", RunConfig::Output::MessageRate},
                                                         {"latency", RunConfig::Output::Latency}};
  std::string output_s;
  app.add_option("--output", output_s,
                 "print only one number per row, as perftest: bandwidth (BW average) | message_rate (MsgRate) | "
                 "latency (t_avg, with --latency)")
      ->check(CLI::Validator(
          [&](std::string& s) -> std::string {
            return outputs.count(s) ? std::string()
                                    : "perftest's output levels are bandwidth, message_rate and latency, got '" + s + "'";
          },
          "bandwidth|message_rate|latency"));
  bool run_infinitely = false;
  app.add_flag("--run_infinitely", run_infinitely,
               "with -D and --periods N: N periods of -D, one row each (perftest repeats -D until stopped; a "
               "simulation has to end)");
  app.add_option("--periods", cfg.periods, "periods --run_infinitely runs (1..1000000)")
      ->check(uint_range(1, 1000000, "periods"));
  bool write_imm = false, send_imm = false;
  app.add_flag("--write_with_imm", write_imm,
               "RDMA WRITE with immediate (ib_write_bw --write_with_imm): each message consumes a receive and "
               "carries its own 32-bit immediate, checked at the receive completion");
  app.add_flag("--send_with_imm", send_imm,
               "SEND with immediate (ib_send_bw --send_with_imm); selects --op send");
  app.add_option("-o,--outs", cfg.outs,
                 "READs in flight per QP, 1.." + std::to_string(kMaxOutstandingReads) +
                     " (--op read); the host holds the others back (srnic has no per-QP limit; its " +
                     std::to_string(kMaxOutstandingReads) + " READ contexts are shared by the QPs)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            uint64_t v = 0;
            if (s.empty() || s[0] == '-' || !CLI::detail::lexical_cast(s, v) || v == 0)
              return "outstanding READs must be an integer in 1.." + std::to_string(kMaxOutstandingReads) +
                     ", got '" + s + "'";
            if (v > kMaxOutstandingReads)
              return "srnic keeps at most " + std::to_string(kMaxOutstandingReads) +
                     " READs outstanding (its READ contexts, shared by every QP), got " + s + "; use 1.." +
                     std::to_string(kMaxOutstandingReads);
            return {};
          },
          "1.." + std::to_string(kMaxOutstandingReads)));
  app.add_flag("--yes", cfg.yes,
               "run even when the estimated wall time is above " + human_seconds(kMaxWallS) +
                   " (a simulated second takes about 25 minutes)");
  app.add_flag("-F,--CPU-freq", "accepted as perftest does; simulated time has no CPU frequency to check");
  app.add_flag("--report_gbits", cfg.report_gbits, "report bandwidth in Gb/s (default MB/s, 2^20 bytes/s, as perftest)");
  app.add_option("-Q,--cq-mod,--signal-every", cfg.signal_every,
                 "signal every Nth WR (and the last): one completion per N WRs")
      ->check(uint_range(1, 32768, "CQ moderation"))
      ->capture_default_str();
  auto* post_list_opt =
      app.add_option("-l,--post_list", cfg.post_list, "post WRs in lists of N, one doorbell per list")
          ->check(uint_range(1, 32768, "post list"));
  app.add_option("--mode", mode_s,
                 "wire mode: std (standard RoCEv2, go-back-N); ext (SRNIC header extensions) is refused "
                 "until the NIC has them")
      ->check(CLI::Validator(
          [&](std::string& s) -> std::string {
            return modes.count(s) ? std::string() : "unknown mode '" + s + "' (use std or ext)";
          },
          "std|ext"))
      ->capture_default_str();
  // Link impairments: each value is [DIR:]VALUE (see split_dir); the options may be repeated.
  std::vector<std::string> loss_s, burst_s, reorder_s, reorder_delay_s, dup_s, dup_gap_s, jitter_s, corrupt_s,
      drop_s;
  auto impairment = [&](const char* name, std::vector<std::string>& into, const char* type, const std::string& help,
                        CLI::Validator v) {
    app.add_option(name, into, help)
        ->allow_extra_args(false)
        ->check(std::move(v).description(""))
        ->type_name(type)
        ->group("Link impairments (DIR: 0 or 1, only the frames that host sends; repeatable)");
  };
  impairment("--loss", loss_s, "[DIR:]P", "random frame loss probability on the link (0..1)",
             dir_real(0, 1, "loss probability"));
  impairment("--burst-loss", burst_s, "[DIR:]RATE,BURST",
             "Gilbert-Elliott burst loss: mean loss rate and mean frames lost in a row, or the chain "
             "P_GB,P_BG,LOSS_GOOD,LOSS_BAD",
             CLI::Validator(
                 [](std::string& s) -> std::string {
                   std::string v;
                   BurstLoss b;
                   std::string e = check_dir(s, "burst loss", v);
                   return e.empty() ? parse_burst(v, b) : e;
                 },
                 "[DIR:]RATE,BURST"));
  impairment("--reorder", reorder_s, "[DIR:]P", "probability that a frame is held back so later frames overtake it",
             dir_real(0, 1, "reorder probability"));
  impairment("--reorder-delay", reorder_delay_s, "[DIR:]NS", "how long a held-back frame is held back (default 1000)",
             dir_real(0, 1e9, "reorder delay"));
  impairment("--dup", dup_s, "[DIR:]P", "probability that a frame is delivered twice",
             dir_real(0, 1, "duplication probability"));
  impairment("--dup-gap", dup_gap_s, "[DIR:]NS", "the copy arrives this long after the original (default 0)",
             dir_real(0, 1e9, "duplicate gap"));
  impairment("--jitter", jitter_s, "[DIR:]NS", "extra delay per frame uniform in 0..NS, order kept",
             dir_real(0, 1e9, "jitter"));
  impairment("--corrupt", corrupt_s, "[DIR:]P",
             "probability that one bit after the Ethernet header is flipped (an ICRC error, good FCS)",
             dir_real(0, 1, "corruption probability"));
  impairment("--drop", drop_s, "RULE",
             "directed drop: KEY=VALUE,... of dir=0|1, op=NAME|N|N-M, qpn=N, psn=N|N-M, nth=N, every=N "
             "(e.g. dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3)",
             CLI::Validator(
                 [](std::string& s) -> std::string {
                   DropRule r;
                   std::string why;
                   return DropRule::parse(s, r, &why) ? std::string() : why;
                 },
                 "RULE"));
  app.add_option("--seed", cfg.seed, "seed of every random choice")->capture_default_str();
  app.add_flag("--latency", cfg.latency,
               "latency test as ib_write_lat / ib_send_lat (ping-pong, half the round trip) and ib_read_lat "
               "(post to completion), 1 QP; prints t_min .. 99.9% percentile");
  app.add_flag("--weir", cfg.weir,
               "host 0 posts and polls its sends through the Weir layer (srnic/weir.hpp): doorbells paced "
               "by WQE life cycles; bandwidth tests only");
  app.add_flag("--mixed", cfg.mixed, "random sizes per message: 0, 1, MTU-1, MTU, MTU+1, 0..size");
  app.add_option("--pcap", cfg.pcap,
                 "write every frame sent (both directions, lost ones included) to FILE; with impairments, "
                 "FILE.impair.csv lists each impaired frame by its pcap number (lost, reordered, ...)");
  app.add_option("--trace", cfg.trace, "FST waveform to FILE (debug build srnic-sim-debug only)");
  app.add_option("--trace-from-us", cfg.trace_from_us, "start the waveform at this simulated time in us")
      ->check(CLI::NonNegativeNumber)
      ->needs("--trace");
  app.add_flag("--json", cfg.json, "one JSON object with the results on stdout");
  app.add_option("--clock-mhz", cfg.clock_mhz, "core clock in MHz")
      ->check(real_range(0, 5000, "clock frequency", true))
      ->capture_default_str();
  app.add_option("--pcie-latency-ns", cfg.pcie_latency_ns, "PCIe read round trip in ns")
      ->check(real_range(0, 1e9, "PCIe latency"))
      ->capture_default_str();
  app.add_option("--pcie-tags", cfg.pcie_tags,
                 "PCIe read requests in flight at once (tags): 64 on UltraScale, 256 on UltraScale+ (Alveo U200/U250/U280)")
      ->check(uint_range(1, 1024, "PCIe tags"))
      ->capture_default_str();
  app.add_option("--link-delay-ns", cfg.link_delay_ns, "cable propagation delay each way in ns")
      ->check(real_range(0, 1e9, "link delay"))
      ->capture_default_str();
  app.add_option("-u,--qp-timeout,--timeout", cfg.timeout, "QP local ACK timeout attribute: 4.096 us * 2^T (0: no timer)")
      ->check(uint_range(0, 31, "timeout"))
      ->capture_default_str();
  app.add_option("--retry-cnt", cfg.retry_cnt, "QP retry_cnt: timeouts and sequence NAKs per WQE before RETRY_EXC_ERR (7: no limit)")
      ->check(uint_range(0, 7, "retry count"))
      ->capture_default_str();
  app.add_option("--window", cfg.window,
                 "in-flight cap per QP in packets (TX_WINDOW: at most N packets beyond the oldest "
                 "unacknowledged one; 0: no cap; default: the NIC's, 128)")
      ->check(uint_range(0, 1u << 22, "window"));
  app.add_option("--max-cycles", cfg.max_cycles, "stop with an error after N core cycles (0: no limit)")
      ->capture_default_str();
  app.add_option("--watchdog-us", cfg.watchdog_us,
                 "stop when nothing completes for this much simulated time (0: 200 us + the messages between two "
                 "completions (QPs x max(-Q, -l)) at 10 Gb/s, more on an impaired link)")
      ->check(real_range(0, 1e12, "watchdog"))
      ->capture_default_str();
  app.add_option("--mem-mib", cfg.mem_mib,
                 "data buffer budget per host in MiB: sets the slots per QP; a message that does not fit is refused")
      ->check(uint_range(1, 65536, "memory budget"))
      ->capture_default_str();
  app.add_option("--max-ram-gib", cfg.max_ram_gib,
                 "refuse a run whose estimated memory (reference model, buffers) is above this many GiB")
      ->check(real_range(0, 1e6, "memory limit", true))
      ->capture_default_str();
  app.add_option("--poll-cycles", cfg.poll_cycles, "host software runs every N core cycles")
      ->check(uint_range(1, 1000000, "poll interval"))
      ->capture_default_str();
  auto* post_batch_opt = app.add_option("--post-batch", cfg.post_batch,
                 "refill a QP once N WRs can be posted, all of them in one list (one doorbell)")
      ->check(uint_range(1, 32768, "post batch"))
      ->capture_default_str();
  bool no_check = false;
  app.add_flag("--no-protocol-check", no_check, "do not run the RoCE protocol checker on the wire");
  bool reorder_ids = false, reorder_all = false;
  app.add_flag("--pcie-reorder-writes", reorder_ids,
               "PCIe root complex lets posted DMA writes of different AXI IDs pass each other");
  app.add_flag("--pcie-reorder-all-writes", reorder_all,
               "stress: any posted DMA write may pass any other (relaxed ordering everywhere)");
  std::vector<std::string> pcie_error_s;
  app.add_option("--pcie-error", pcie_error_s,
                 "answer DMA bursts of host --pcie-error-host with an AXI error (repeatable): read|write, then "
                 ":addr=LO-HI (bursts overlapping [LO, HI)), :rate=P (each burst with probability P), :nth=N (the "
                 "N-th burst), :slverr (default) or :decerr; e.g. read:nth=120, write:addr=0x1000-0x2000:decerr. "
                 "The NIC treats any such error as fatal")
      ->allow_extra_args(false)
      ->type_name("SPEC")
      ->check(CLI::Validator(
                  [](std::string& s) -> std::string {
                    PcieErrorRule r;
                    std::string why;
                    return PcieErrorRule::parse(s, r, &why) ? std::string() : why;
                  },
                  "SPEC")
                  .description(""));
  app.add_option("--pcie-error-host", cfg.pcie_error_host, "the host whose PCIe model injects --pcie-error (0 or 1)")
      ->check(uint_range(0, 1, "PCIe error host"))
      ->capture_default_str();
  const std::map<std::string, RunConfig::Fault> faults{{"corrupt", RunConfig::Fault::Corrupt},
                                                       {"lost", RunConfig::Fault::Lost},
                                                       {"misplace", RunConfig::Fault::Misplace},
                                                       {"imm", RunConfig::Fault::Imm}};
  std::string fault_s;
  bool inject_at_set = false;
  app.add_option("--inject-fault", fault_s,
                 "test option: corrupt | lost | misplace one message of QP 0 (see --inject-at), or post it with "
                 "another immediate (imm, with --write_with_imm / --send_with_imm), to show that the data checks "
                 "fail the run")
      ->group("Test options")
      ->check(CLI::Validator(
          [&](std::string& s) -> std::string {
            return faults.count(s) ? std::string() : "unknown fault '" + s + "' (use corrupt, lost, misplace or imm)";
          },
          "corrupt|lost|misplace|imm"));
  app.add_option_function<uint64_t>(
         "--inject-at",
         [&](const uint64_t& v) {
           cfg.inject_at = v;
           inject_at_set = true;
         },
         "test option: iteration of QP 0 that --inject-fault hits (default: iters / 2)")
      ->group("Test options");

  // perftest options that have no meaning in a simulation of two NICs in one process: named in
  // the help and refused with the reason, rather than "not expected".
  std::vector<std::string> not_modelled;
  const std::string refused_group = "perftest options srnic-sim refuses (they do not apply to a simulation)";
  auto refuse = [&](const std::string& names, const std::string& what, const std::string& why, bool flag = false) {
    const std::string head = names.substr(0, names.find(',')) + " (perftest's " + what + "): " + why;
    if (flag)
      app.add_flag_callback(names, [&not_modelled, head] { not_modelled.push_back(head); }, what + ": " + why)
          ->group(refused_group);
    else
      app.add_option_function<std::string>(
             names, [&not_modelled, head](const std::string&) { not_modelled.push_back(head); }, what + ": " + why)
          ->group(refused_group);
  };
  refuse("-d,--ib-dev", "device", "srnic-sim simulates its two srnic NICs itself");
  refuse("-i,--ib-port", "device port", "each simulated NIC has one");
  refuse("-p,--port", "TCP port", "both hosts run in this one process");
  refuse("-x,--gid-index", "GID index", "the simulated hosts use fixed IPv4 addresses");
  refuse("-c,--connection", "transport", "srnic implements RC only");
  refuse("-I,--inline_size", "inline size", "srnic fetches every payload by DMA");
  refuse("-R,--rdma_cm", "rdma_cm", "the QPs are connected through the host library", true);
  // Words left over: perftest's server address, or options srnic-sim does not have.
  app.allow_extras();
  all_opt->excludes("--size");
  dur_opt->excludes("--iters");
  post_list_opt->excludes(post_batch_opt);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return {false, 0, app.help()};
  } catch (const CLI::ParseError& e) {
    return {false, 2, "srnic-sim: " + one_line(e.what())};
  }
  if (version) return {false, 0, {}, true};
  cfg.op = ops.at(op_s);
  cfg.mode = modes.at(mode_s);
  // Impairments: plain values first (both directions), then DIR: values override theirs. The
  // validators have accepted every value.
  auto real = [](const std::string& v) {
    double x = 0;
    CLI::detail::lexical_cast(v, x);
    return x;
  };
  auto per_dir = [&](const std::vector<std::string>& vals, const auto& set) {
    for (int pass = 0; pass < 2; ++pass)
      for (const std::string& s : vals) {
        int dir = -1;
        std::string v;
        split_dir(s, dir, v);
        if ((dir >= 0) != (pass == 1)) continue;
        for (int d = 0; d < 2; ++d)
          if (dir < 0 || dir == d) set(cfg.impair[size_t(d)], v, dir < 0);
      }
  };
  per_dir(loss_s, [&](Impairments& im, const std::string& v, bool both) {
    (both ? cfg.loss : im.loss) = real(v);  // plain: LinkConfig::loss; DIR: that direction's own
  });
  per_dir(burst_s, [&](Impairments& im, const std::string& v, bool) { parse_burst(v, im.burst); });
  per_dir(reorder_s, [&](Impairments& im, const std::string& v, bool) { im.reorder = real(v); });
  per_dir(reorder_delay_s, [&](Impairments& im, const std::string& v, bool) { im.reorder_delay_ns = real(v); });
  per_dir(dup_s, [&](Impairments& im, const std::string& v, bool) { im.dup = real(v); });
  per_dir(dup_gap_s, [&](Impairments& im, const std::string& v, bool) { im.dup_gap_ns = real(v); });
  per_dir(jitter_s, [&](Impairments& im, const std::string& v, bool) { im.jitter_ns = real(v); });
  per_dir(corrupt_s, [&](Impairments& im, const std::string& v, bool) { im.corrupt = real(v); });
  for (const std::string& text : drop_s) {
    DropRule r;
    DropRule::parse(text, r);
    cfg.drop.push_back(r);
  }
  cfg.protocol_check = !no_check;
  if (reorder_ids && reorder_all) return {false, 2, "srnic-sim: use --pcie-reorder-writes or --pcie-reorder-all-writes, not both"};
  cfg.pcie_reorder = reorder_all   ? RunConfig::WriteReorder::All
                     : reorder_ids ? RunConfig::WriteReorder::Ids
                                   : RunConfig::WriteReorder::Off;
  for (const std::string& text : pcie_error_s) {
    PcieErrorRule r;
    PcieErrorRule::parse(text, r);
    cfg.pcie_errors.push_back(r);
  }
  if (app.count("--pcie-error-host") && cfg.pcie_errors.empty())
    return {false, 2, "srnic-sim: --pcie-error-host needs --pcie-error"};
  cfg.fault = fault_s.empty() ? RunConfig::Fault::None : faults.at(fault_s);
  if (cfg.fault != RunConfig::Fault::None && !inject_at_set) cfg.inject_at = cfg.iters / 2;
  if (inject_at_set && cfg.fault == RunConfig::Fault::None)
    return {false, 2, "srnic-sim: --inject-at needs --inject-fault"};
  if (cfg.fault != RunConfig::Fault::None && cfg.inject_at >= cfg.iters)
    return {false, 2, "srnic-sim: --inject-at must be below --iters (" + std::to_string(cfg.iters) + ")"};

  auto bad = [](const std::string& m) { return CliResult{false, 2, "srnic-sim: " + m}; };
  if (!not_modelled.empty()) return bad(not_modelled.front() + "; drop it");
  if (const std::vector<std::string> extra = app.remaining(); !extra.empty()) {
    if (extra[0].empty() || extra[0][0] != '-')
      return bad("'" + extra[0] + "' (perftest's server address): srnic-sim runs both hosts itself; drop it");
    std::string all;
    for (const std::string& x : extra) all += (all.empty() ? "" : " ") + x;
    return bad("unknown option: " + all + " (srnic-sim --help lists the options)");
  }
  // The latency tools' default message size.
  if (cfg.latency && !app.count("--size") && !cfg.all_sizes) cfg.size = 2;
  if (!duration_s.empty()) {
    parse_duration(duration_s, cfg.duration_us);
    if (cfg.latency) return bad("-D is for the bandwidth tests; --latency runs --iters round trips");
    if (cfg.fault != RunConfig::Fault::None) return bad("--inject-fault needs --iters, not -D");
  }
  // Immediates: perftest's --write_with_imm (ib_write_*) and --send_with_imm (ib_send_*).
  if (write_imm && send_imm) return bad("--write_with_imm and --send_with_imm cannot be combined");
  if (send_imm && !app.count("--op")) cfg.op = Op::Send;
  if (write_imm && cfg.op != Op::Write)
    return bad("--write_with_imm is for --op write (ib_write_bw / ib_write_lat), not --op " +
               std::string(to_string(cfg.op)));
  if (send_imm && cfg.op != Op::Send)
    return bad("--send_with_imm is for --op send (ib_send_bw / ib_send_lat), not --op " + std::string(to_string(cfg.op)));
  cfg.imm = write_imm || send_imm;
  if (cfg.fault == RunConfig::Fault::Imm && !cfg.imm)
    return bad("--inject-fault imm needs --write_with_imm or --send_with_imm");
  if (cfg.outs && cfg.op != Op::Read)
    return bad("-o (outstanding READs) is for --op read (ib_read_bw / ib_read_lat), as perftest");
  if (cfg.no_peak && cfg.latency) return bad("-N is for the bandwidth tests (the latency tests have no BW peak)");
  if (cfg.report_both && !cfg.bidir)
    return bad("--report_both reports each direction of a bidirectional run; add -b");
  if (!output_s.empty()) {
    cfg.output = outputs.at(output_s);
    if (cfg.json) return bad("--output and --json both choose what is printed; use one");
    if (cfg.latency && cfg.output != RunConfig::Output::Latency)
      return bad("--output=" + output_s + " is for the bandwidth tests; the latency tests take --output=latency");
    if (!cfg.latency && cfg.output == RunConfig::Output::Latency)
      return bad("--output=latency is for the latency tests (--latency); the bandwidth tests take --output=bandwidth "
                 "or --output=message_rate");
    if (cfg.report_both) return bad("--output prints one number per row; drop --report_both");
  }
  // --run_infinitely: perftest repeats -D until it is stopped, a row per period; a simulation
  // prints its rows when it ends, so it runs --periods N of them.
  if (app.count("--periods") && !run_infinitely) return bad("--periods needs --run_infinitely");
  if (run_infinitely) {
    if (cfg.latency) return bad("--run_infinitely is for the bandwidth tests, as perftest");
    if (duration_s.empty())
      return bad("--run_infinitely needs -D, the period of each row (perftest's default of 5 s is about 2 hours of "
                 "simulation)");
    if (!app.count("--periods"))
      return bad("--run_infinitely: a simulation has to end and prints its rows then; give --periods N (N rows of -D "
                 "each)");
    if (cfg.all_sizes) return bad("--run_infinitely runs one size; drop -a");
    if (cfg.report_both) return bad("--run_infinitely prints one row per period; drop --report_both");
    cfg.period_us = cfg.duration_us;
    cfg.duration_us *= cfg.periods;
  } else {
    cfg.periods = 1;
  }
  // The NIC speaks standard RoCEv2 only: refuse what it cannot do rather than run something
  // else under that name.
  if (cfg.mode == WireMode::Ext)
    return bad("--mode ext is not supported until the SRNIC header extensions exist (use --mode std)");
  if (cfg.latency) {
    if (cfg.qps != 1) return bad("--latency runs one QP pair; use --qps 1");
    if (cfg.mixed) return bad("--latency and --mixed cannot be combined");
    if (cfg.bidir) return bad("-b is for the bandwidth tests; a latency test is a ping-pong already");
    if (cfg.post_list) return bad("--latency posts one WR at a time; drop -l");
    if (cfg.weir) return bad("--weir paces the bandwidth tests' doorbells; drop it with --latency");
  }
  if (cfg.latency && cfg.signal_every != 1) return bad("--latency signals every WR; drop -Q/--signal-every");
  if (cfg.all_sizes && cfg.mixed) return bad("-a and --mixed cannot be combined");
  if (cfg.all_sizes && cfg.fault != RunConfig::Fault::None) return bad("--inject-fault needs one size, not -a");
  // Every size of the run (-a: each of perftest's sizes) must fit the memory budgets and the
  // send queue.
  const std::vector<uint64_t> sizes = cfg.all_sizes ? perftest_sizes() : std::vector<uint64_t>{cfg.size};
  for (uint64_t size : sizes) {
    RunConfig one = cfg;
    one.size = size;
    const std::string at = cfg.all_sizes ? "-a size " + std::to_string(size) + ": " : std::string();
    if (one.latency && one.op == Op::Write && one.size == 0)
      return bad("--latency --op write needs --size >= 1 (the receiver polls the last byte)");
    if (one.duration_us > 0) one.iters = duration_iters(one);
    if (const std::string why = check_memory(one); !why.empty()) return bad(at + why);
    if (one.signal_every > 1 || one.post_list > 1) {
      const Plan p = make_plan(one);
      if (one.signal_every > p.inflight && one.iters > p.inflight)
        return bad(at + "-Q/--signal-every " + std::to_string(one.signal_every) + " exceeds the " +
                   std::to_string(p.inflight) + " WRs in flight per QP (raise --tx-depth or --mem-mib)");
      if (one.post_list > p.inflight && one.iters > p.inflight)
        return bad(at + "-l " + std::to_string(one.post_list) + " exceeds the " + std::to_string(p.inflight) +
                   " WRs in flight per QP (raise --tx-depth or --mem-mib)");
    }
    if (!cfg.all_sizes) cfg.iters = one.iters;
  }
  // Simulated time is expensive: refuse what would run for hours unless --yes says so.
  if (const std::string why = check_wall(cfg); !why.empty()) return bad(why);
  return {true, 0, {}};
}

std::string reproduce_command(const RunConfig& c) {
  std::ostringstream o;
  o << "srnic-sim --op " << to_string(c.op);
  if (c.all_sizes)
    o << " -a";
  else
    o << " --size " << c.size;
  o << " --qps " << c.qps;
  if (c.period_us > 0)
    o << " -D " << num(c.period_us) << "us --run_infinitely --periods " << c.periods;
  else if (c.duration_us > 0)
    o << " -D " << num(c.duration_us) << "us";
  else
    o << " --iters " << c.iters;
  o << " --mtu " << c.mtu << " --mode " << to_string(c.mode) << " --seed " << c.seed;
  if (c.bidir) o << " -b";
  if (c.imm) o << (c.op == Op::Send ? " --send_with_imm" : " --write_with_imm");
  if (c.outs) o << " -o " << c.outs;
  if (c.loss > 0) o << " --loss " << num(c.loss);
  // Impairments: one plain option when both directions agree, else one per direction.
  const Impairments none;
  auto both_ways = [&](const char* opt, auto get, auto text) {
    const auto a = get(c.impair[0]), b = get(c.impair[1]), d = get(none);
    if (a == b) {
      if (a != d) o << " " << opt << " " << text(a);
      return;
    }
    if (a != d) o << " " << opt << " 0:" << text(a);
    if (b != d) o << " " << opt << " 1:" << text(b);
  };
  auto real_text = [](double v) { return num(v); };
  // A direction's own loss (plain --loss sets LinkConfig::loss, printed above).
  for (int d = 0; d < 2; ++d)
    if (c.impair[size_t(d)].loss > 0) o << " --loss " << d << ":" << num(c.impair[size_t(d)].loss);
  both_ways(
      "--burst-loss",
      [](const Impairments& im) {
        const BurstLoss& b = im.burst;
        return std::array<double, 4>{b.p_good_bad, b.p_bad_good, b.loss_good, b.loss_bad};
      },
      [](const std::array<double, 4>& v) { return burst_text(BurstLoss{v[0], v[1], v[2], v[3]}); });
  both_ways("--reorder", [](const Impairments& im) { return im.reorder; }, real_text);
  both_ways("--reorder-delay", [](const Impairments& im) { return im.reorder_delay_ns; }, real_text);
  both_ways("--dup", [](const Impairments& im) { return im.dup; }, real_text);
  both_ways("--dup-gap", [](const Impairments& im) { return im.dup_gap_ns; }, real_text);
  both_ways("--jitter", [](const Impairments& im) { return im.jitter_ns; }, real_text);
  both_ways("--corrupt", [](const Impairments& im) { return im.corrupt; }, real_text);
  for (const DropRule& r : c.drop) o << " --drop " << r.to_string();
  if (c.latency) o << " --latency";
  if (c.weir) o << " --weir";
  if (c.mixed) o << " --mixed";
  const RunConfig d;
  if (c.clock_mhz != d.clock_mhz) o << " --clock-mhz " << c.clock_mhz;
  if (c.pcie_latency_ns != d.pcie_latency_ns) o << " --pcie-latency-ns " << c.pcie_latency_ns;
  if (c.pcie_tags != d.pcie_tags) o << " --pcie-tags " << c.pcie_tags;
  if (c.link_delay_ns != d.link_delay_ns) o << " --link-delay-ns " << c.link_delay_ns;
  if (c.timeout != d.timeout) o << " --timeout " << c.timeout;
  if (c.retry_cnt != d.retry_cnt) o << " --retry-cnt " << c.retry_cnt;
  if (c.window >= 0) o << " --window " << c.window;
  if (c.max_cycles != d.max_cycles) o << " --max-cycles " << c.max_cycles;
  if (c.tx_depth != d.tx_depth) o << " --tx-depth " << c.tx_depth;
  if (c.signal_every != d.signal_every) o << " --signal-every " << c.signal_every;
  if (c.post_batch != d.post_batch) o << " --post-batch " << c.post_batch;
  if (c.post_list) o << " -l " << c.post_list;
  if (c.report_gbits) o << " --report_gbits";
  if (c.no_peak) o << " -N";
  if (c.report_both) o << " --report_both";
  if (c.output == RunConfig::Output::Bandwidth) o << " --output=bandwidth";
  if (c.output == RunConfig::Output::MessageRate) o << " --output=message_rate";
  if (c.output == RunConfig::Output::Latency) o << " --output=latency";
  if (c.yes) o << " --yes";
  if (c.max_ram_gib != d.max_ram_gib) o << " --max-ram-gib " << num(c.max_ram_gib);
  if (c.watchdog_us != d.watchdog_us) o << " --watchdog-us " << c.watchdog_us;
  if (c.mem_mib != d.mem_mib) o << " --mem-mib " << c.mem_mib;
  if (c.poll_cycles != d.poll_cycles) o << " --poll-cycles " << c.poll_cycles;
  if (!c.protocol_check) o << " --no-protocol-check";
  if (c.pcie_reorder == RunConfig::WriteReorder::Ids) o << " --pcie-reorder-writes";
  if (c.pcie_reorder == RunConfig::WriteReorder::All) o << " --pcie-reorder-all-writes";
  for (const PcieErrorRule& r : c.pcie_errors) o << " --pcie-error " << r.to_string();
  if (!c.pcie_errors.empty() && c.pcie_error_host != d.pcie_error_host) o << " --pcie-error-host " << c.pcie_error_host;
  if (c.fault != RunConfig::Fault::None)
    o << " --inject-fault " << to_string(c.fault) << " --inject-at " << c.inject_at;
  if (!c.pcap.empty()) o << " --pcap " << c.pcap;
  if (!c.trace.empty()) o << " --trace " << c.trace;
  if (c.trace_from_us > 0) o << " --trace-from-us " << c.trace_from_us;
  if (c.json) o << " --json";
  return o.str();
}

}  // namespace srnic::sim
