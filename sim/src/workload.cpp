// Workload planning for srnic-sim: message sizes, buffer slots and the reference-model workload.
#include "workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "srnic/abi.hpp"
#include "srnic/sim/common.hpp"
#include "srnic/sim/eth_mac.hpp"

namespace srnic::sim {

const char* to_string(Op op) {
  switch (op) {
    case Op::Write: return "write";
    case Op::Read: return "read";
    case Op::Send: return "send";
  }
  return "?";
}

const char* to_string(WireMode m) { return m == WireMode::Ext ? "ext" : "std"; }

const char* to_string(RunConfig::Fault f) {
  switch (f) {
    case RunConfig::Fault::None: return "none";
    case RunConfig::Fault::Corrupt: return "corrupt";
    case RunConfig::Fault::Lost: return "lost";
    case RunConfig::Fault::Misplace: return "misplace";
    case RunConfig::Fault::Imm: return "imm";
  }
  return "?";
}

const char* to_string(RunConfig::WriteReorder r) {
  switch (r) {
    case RunConfig::WriteReorder::Off: return "off";
    case RunConfig::WriteReorder::Ids: return "across-ids";
    case RunConfig::WriteReorder::All: return "all";
  }
  return "?";
}

double RunConfig::watchdog_ns() const {
  if (watchdog_us > 0) return watchdog_us * 1000.0;
  // On an impaired link, leave room for a few local ACK timeouts (4.096 us * 2^8 each, see the
  // QP setup).
  const double timeouts = impairs(*this) ? 4 * 4096.0 * 256 : 0;
  // Between two completions the QPs may each send up to one signaled WR's worth of messages
  // (-Q N: N, -l N: a list of N): all of them at 10 Gb/s, so that a default never fails a correct run.
  const double per_completion = double(std::max<uint32_t>({1u, signal_every, post_list})) * double(latency ? 1 : qps);
  return 200000.0 + static_cast<double>(size) * 8.0 / 10.0 * per_completion + timeouts;
}

LinkConfig link_config(const RunConfig& cfg) {
  LinkConfig lc;
  lc.delay_ns = cfg.link_delay_ns;
  lc.loss = cfg.loss;
  lc.impair = cfg.impair;
  lc.drop_rules = cfg.drop;
  return lc;
}

bool impairs(const RunConfig& cfg) {
  const LinkConfig lc = link_config(cfg);
  return lc.direction(0).any() || lc.direction(1).any() || !lc.drop_rules.empty();
}

uint32_t mixed_size(uint64_t random, uint64_t size, uint32_t mtu, uint64_t random2) {
  switch (random % 6) {
    case 0: return 0;
    case 1: return 1;
    case 2: return mtu - 1;
    case 3: return mtu;
    case 4: return mtu + 1;
    default: return static_cast<uint32_t>(random2 % (size + 1));
  }
}

Plan make_plan(const RunConfig& cfg) {
  Plan p;
  const uint32_t nq = cfg.latency ? 1 : cfg.qps;
  p.sizes.resize(nq);
  for (uint32_t q = 0; q < nq; ++q) {
    auto& s = p.sizes[q];
    s.resize(cfg.iters);
    if (cfg.mixed) {
      SplitMix64 g(SplitMix64::child(cfg.seed, 0x1000 + q));
      for (auto& v : s) {
        const uint64_t r = g.next();
        v = mixed_size(r, cfg.size, cfg.mtu, g.next());
      }
    } else {
      std::fill(s.begin(), s.end(), static_cast<uint32_t>(cfg.size));
    }
    for (uint32_t v : s) {
      p.max_size = std::max<uint64_t>(p.max_size, v);
      p.total_bytes += v;
    }
  }
  p.messages = uint64_t(nq) * cfg.iters;
  p.stride = p.max_size;
  if (cfg.latency) {
    // Ping-pong: two source slots whose last bytes differ, one message in flight.
    p.slots = 2;
    p.inflight = 1;
  } else {
    // The budget is shared by the host's regions: one per QP, two when both hosts send.
    const uint64_t budget = (cfg.mem_mib << 20) / (uint64_t(nq) * (both_send(cfg) ? 2 : 1));
    const uint64_t fit = p.stride ? budget / p.stride : cfg.tx_depth;
    const uint64_t cap = std::min<uint64_t>(cfg.iters, cfg.tx_depth);
    p.slots = static_cast<uint32_t>(std::max<uint64_t>(1, std::min(fit, cap)));
    p.inflight = std::min<uint32_t>(cfg.tx_depth, p.slots);
    // -o: READs in flight per QP (the host holds the rest back; srnic has no per-QP limit).
    if (cfg.op == Op::Read && cfg.outs) p.inflight = std::min(p.inflight, cfg.outs);
  }
  p.region = std::max<uint64_t>(64, p.slots * p.stride);
  p.sq_entries = 2;
  while (p.sq_entries < p.inflight) p.sq_entries <<= 1;
  const bool two_sided = has_recv(cfg);
  // Requester completions: one per signaled WR; receives always complete.
  const uint64_t sig = cfg.latency ? cfg.iters : (cfg.iters + cfg.signal_every - 1) / cfg.signal_every;
  p.expected_completions = uint64_t(nq) * (sig + (two_sided ? cfg.iters : 0)) * (both_send(cfg) ? 2 : 1);
  return p;
}

std::vector<uint64_t> perftest_sizes() {
  std::vector<uint64_t> v;
  for (uint64_t s = 2; s <= (uint64_t(1) << 23); s <<= 1) v.push_back(s);
  return v;
}

uint64_t duration_iters(const RunConfig& cfg) {
  const uint64_t smallest = cfg.mixed ? 0 : cfg.size;
  const double ns_per_msg = static_cast<double>(wire_bytes(cfg.op, smallest, cfg.mtu)) * 8.0 / 100.0;
  const double n = std::ceil(cfg.duration_us * 1000.0 / ns_per_msg) + cfg.tx_depth;
  return n >= double(uint64_t(1) << 40) ? uint64_t(1) << 40 : static_cast<uint64_t>(n);
}

MemoryEstimate estimate_memory(const RunConfig& cfg) {
  MemoryEstimate e;
  const uint64_t nq = cfg.latency ? 1 : cfg.qps;
  const uint64_t senders = both_send(cfg) ? 2 : 1;
  // Regions per host: WRITE/SEND/READ one per QP (a source on one host, a destination on the
  // other), two when both hosts send (regions()).
  e.regions_per_host = nq * senders;
  e.min_slots = cfg.latency ? 2 : 1;
  e.slot_bytes = cfg.mixed ? std::max<uint64_t>(cfg.size, cfg.mtu + 1) : cfg.size;
  const Plan shape = [&] {
    // The slots make_plan chooses, without planning every message.
    Plan p;
    p.stride = e.slot_bytes;
    if (cfg.latency) {
      p.slots = 2;
    } else {
      const uint64_t budget = (cfg.mem_mib << 20) / e.regions_per_host;
      const uint64_t fit = p.stride ? budget / p.stride : cfg.tx_depth;
      p.slots = static_cast<uint32_t>(std::max<uint64_t>(1, std::min({fit, cfg.iters, uint64_t(cfg.tx_depth)})));
    }
    return p;
  }();
  const uint64_t region = std::max<uint64_t>(64, shape.slots * shape.stride);
  e.buffer_bytes = e.regions_per_host * ((region + shape.guard + 63) & ~uint64_t(63));
  e.messages = nq * cfg.iters * senders * (has_recv(cfg) ? 2 : 1);
  // Measured: every buffer byte is held about five times over both hosts (host memory, the
  // initial image, the predicted image, its determinacy byte; docs/large-messages.md), every
  // work request about 512 bytes (plan, WR lists, expected completion, writer record), plus the
  // model and its tables.
  e.ram_bytes = 5.0 * 2.0 * static_cast<double>(e.buffer_bytes) + 512.0 * static_cast<double>(e.messages) +
                double(uint64_t(64) << 20);
  return e;
}

namespace {

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int k = 0;
  while (b >= 1024 && k < 6) {
    b /= 1024;
    ++k;
  }
  char t[32];
  std::snprintf(t, sizeof t, "%.3g %s", b, unit[k]);
  return t;
}

}  // namespace

std::string check_memory(const RunConfig& cfg) {
  const MemoryEstimate e = estimate_memory(cfg);
  const uint64_t need = e.regions_per_host * e.min_slots * e.slot_bytes;
  const uint64_t budget = cfg.mem_mib << 20;
  if (need > budget) {
    const uint64_t mib = (need + (uint64_t(1) << 20) - 1) >> 20;
    return "a " + std::to_string(e.slot_bytes) + "-byte message needs --mem-mib " + std::to_string(mib) +
           " or more (" + std::to_string(e.regions_per_host) + " data region(s) per host of " +
           std::to_string(e.min_slots) + " slot(s) each); --mem-mib is " + std::to_string(cfg.mem_mib);
  }
  const double limit = cfg.max_ram_gib * double(uint64_t(1) << 30);
  if (e.ram_bytes > limit) {
    char lim[32];
    std::snprintf(lim, sizeof lim, "%g", cfg.max_ram_gib);
    return "the run would need about " + human_bytes(e.ram_bytes) + " of memory (" + std::to_string(e.messages) +
           " work requests in the reference model, 2 x " + human_bytes(double(e.buffer_bytes)) +
           " of data buffers), above --max-ram-gib " + lim +
           "; use fewer --iters or --qps, a shorter -D or smaller messages";
  }
  return {};
}

std::string human_seconds(double s) {
  char t[32];
  const char* unit = "s";
  if (s >= 3600) {
    s /= 3600;
    unit = "h";
  } else if (s >= 60) {
    s /= 60;
    unit = "min";
  } else if (s < 1e-3) {
    s *= 1e6;
    unit = "us";
  } else if (s < 1) {
    s *= 1e3;
    unit = "ms";
  }
  std::snprintf(t, sizeof t, s >= 10 ? "%.0f" : s >= 1 ? "%.1f" : "%.2g", s);
  std::string r = t;
  if (r.size() > 2 && r.compare(r.size() - 2, 2, ".0") == 0) r.resize(r.size() - 2);
  return r + " " + unit;
}

namespace {

// Simulated time in us of one size's run (iters already planned for -D), set-up included.
double run_sim_us(const RunConfig& cfg, bool& lower_bound) {
  // Set-up (measured): both NICs opened, CQs and MRs created, about 70 us, then 0.24 us per QP
  // pair created and connected (16,382 pairs: 4.0 ms).
  const double nq = cfg.latency ? 1 : cfg.qps;
  const double setup = 70 + 0.25 * nq;
  // The mixed sizes average about half the largest.
  const uint64_t size = cfg.mixed ? cfg.size / 2 : cfg.size;
  const double wire_ns = double(wire_bytes(cfg.op, size, cfg.mtu)) * 8.0 / 100.0;
  if (cfg.latency) {
    // A round trip is about 6.2 us at 64 bytes (READ: post to completion, 3.5 us), plus the
    // message's wire time each way.
    const double per = cfg.op == Op::Read ? 3500 + wire_ns : 2 * (3100 + wire_ns);
    return setup + double(cfg.iters) * per / 1000.0;
  }
  if (cfg.duration_us > 0) return setup + cfg.duration_us + 10;
  // -n: at least the wire time of one direction's messages, the NIC's message rate (about 42 M
  // messages/s) and one QP's (about 14 M/s).
  lower_bound = true;
  const double msgs = nq * double(cfg.iters);
  const double traffic_ns = std::max({msgs * wire_ns, msgs * 1e3 / 42.0, double(cfg.iters) * 1e3 / 14.0});
  return setup + traffic_ns / 1000.0 + 10;
}

}  // namespace

WallEstimate estimate_wall(const RunConfig& cfg) {
  WallEstimate e;
  const std::vector<uint64_t> sizes = cfg.all_sizes ? perftest_sizes() : std::vector<uint64_t>{cfg.size};
  for (uint64_t size : sizes) {
    RunConfig one = cfg;
    one.size = size;
    one.all_sizes = false;
    e.sim_us += run_sim_us(one, e.lower_bound);
  }
  e.wall_s = e.sim_us * cfg.clock_mhz / kTypicalCyclesPerS;
  return e;
}

std::string check_wall(const RunConfig& cfg) {
  const WallEstimate e = estimate_wall(cfg);
  if (cfg.yes || e.wall_s <= kMaxWallS) return {};
  char speed[160];
  std::snprintf(speed, sizeof speed,
                "at the simulator's typical %.0fK cycles/s (%.0fx slower than real time at %g MHz)",
                kTypicalCyclesPerS / 1000, cfg.clock_mhz * 1e6 / kTypicalCyclesPerS, cfg.clock_mhz);
  std::string what;
  if (cfg.duration_us > 0) {
    char d[64];
    std::snprintf(d, sizeof d, "%g", cfg.period_us > 0 ? cfg.period_us / 1e6 : cfg.duration_us / 1e6);
    what = std::string("-D ") + d + " is " + human_seconds(cfg.duration_us / 1e6) + " of simulated time" +
           (cfg.period_us > 0 ? " over its --periods" : "") + (cfg.all_sizes ? " per size" : "");
  } else {
    what = "this run simulates " + std::string(e.lower_bound ? "at least " : "about ") + human_seconds(e.sim_us / 1e6);
  }
  std::string fix = cfg.duration_us > 0 ? "use a shorter -D (0.001 is 1 ms, about " +
                                              human_seconds(1000 * cfg.clock_mhz / kTypicalCyclesPerS + 0.5) + ")"
                                        : std::string(cfg.latency ? "use fewer -n" : "use fewer -n or --qps, or smaller messages");
  return what + ": about " + human_seconds(e.wall_s) + " of wall time " + speed + ", above the " +
         human_seconds(kMaxWallS) + " bound; " + fix + ", or add --yes to run it anyway";
}

void fill_random(uint64_t seed, uint64_t stream, uint8_t* dst, size_t n) {
  SplitMix64 g(SplitMix64::child(seed, stream));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t v = g.next();
    std::memcpy(dst + i, &v, 8);
  }
  if (i < n) {
    const uint64_t v = g.next();
    std::memcpy(dst + i, &v, n - i);
  }
}

namespace {

// 64-bit finaliser (murmur3 fmix64): a cheap, well-mixed word per (message key, word index).
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

}  // namespace

MessageBytes::MessageBytes(const RunConfig& cfg, const Plan& plan)
    : seed_(cfg.seed), marker_slots_(cfg.latency && cfg.op == Op::Write ? plan.slots : 0) {}

uint64_t MessageBytes::key(const MessageRef& m) const {
  return mix64(mix64(seed_ ^ 0x6D657373616765ULL) + tag(m) * kGolden);
}

uint32_t MessageBytes::imm(const MessageRef& m) const { return static_cast<uint32_t>(mix64(key(m) ^ 0x696D6D) >> 16); }

void MessageBytes::fill(const MessageRef& m, uint64_t len, uint64_t offset, uint8_t* dst, size_t n) const {
  const uint64_t k = key(m);
  uint64_t word = offset >> 3;
  size_t i = 0;
  if (const unsigned b = offset & 7; b && n) {
    const uint64_t v = mix64(k + word * kGolden);
    const size_t c = std::min<size_t>(8 - b, n);
    std::memcpy(dst, reinterpret_cast<const uint8_t*>(&v) + b, c);
    i = c;
    ++word;
  }
  for (; i + 8 <= n; i += 8, ++word) {
    const uint64_t v = mix64(k + word * kGolden);
    std::memcpy(dst + i, &v, 8);
  }
  if (i < n) {
    const uint64_t v = mix64(k + word * kGolden);
    std::memcpy(dst + i, &v, n - i);
  }
  if (const uint8_t mk = marker(m); mk && len && len - 1 >= offset && len - 1 < offset + n)
    dst[len - 1 - offset] = mk;
}

int64_t MessageBytes::first_difference(const MessageRef& m, uint64_t len, uint64_t offset, const uint8_t* got,
                                       size_t n) const {
  uint8_t want[512];
  for (size_t done = 0; done < n;) {
    const size_t c = std::min(sizeof want, n - done);
    fill(m, len, offset + done, want, c);
    if (std::memcmp(want, got + done, c) != 0)
      for (size_t k = 0; k < c; ++k)
        if (want[k] != got[done + k]) return int64_t(done + k);
    done += c;
  }
  return -1;
}

std::vector<RegionRef> regions(const RunConfig& cfg) {
  std::vector<RegionRef> r;
  const uint32_t nq = cfg.latency ? 1 : cfg.qps;
  const bool both = both_send(cfg);  // ping-pong or bidirectional: each host sends
  for (uint32_t q = 0; q < nq; ++q) {
    for (uint32_t h = 0; h < 2; ++h) {
      if (both) {
        r.push_back({h, q, true});
        r.push_back({h, q, false});
      } else {
        // Data flows host 0 -> host 1 for WRITE/SEND and host 1 -> host 0 for READ.
        const bool src = (cfg.op == Op::Read) == (h == 1);
        r.push_back({h, q, src});
      }
    }
  }
  return r;
}

verif::SendWr make_send(const RunConfig& cfg, const Plan& plan, uint32_t host, const QpSide& me,
                        const QpSide& peer, uint32_t q, uint64_t i) {
  verif::SendWr w;
  w.wr_id = send_wr_id(q, i);
  w.length = plan.sizes[q][i];
  w.signaled = signaled(cfg, i);
  const uint64_t off = plan.offset(i);
  const uint64_t dst_off = dst_offset(cfg, plan, i);
  const uint64_t tag = MessageBytes::tag(MessageRef{host, q, i});
  // The message's bytes go into its source slot: the local one, or for READ the remote one.
  w.store = cfg.op == Op::Read ? verif::HostStore{1 - host, peer.src + off, w.length, tag}
                               : verif::HostStore{host, me.src + off, w.length, tag};
  if (cfg.imm) w.imm = MessageBytes(cfg, plan).imm(MessageRef{host, q, i});
  switch (cfg.op) {
    case Op::Write:
      w.opcode = cfg.imm ? verif::WrOpcode::WriteImm : verif::WrOpcode::Write;
      w.laddr = me.src + off;
      w.lkey = me.src_key;
      w.raddr = peer.dst + dst_off;
      w.rkey = peer.dst_key;
      break;
    case Op::Read:
      w.opcode = verif::WrOpcode::Read;
      w.laddr = me.dst + off;
      w.lkey = me.dst_key;
      w.raddr = peer.src + off;
      w.rkey = peer.src_key;
      break;
    case Op::Send:
      w.opcode = cfg.imm ? verif::WrOpcode::SendImm : verif::WrOpcode::Send;
      w.laddr = me.src + off;
      w.lkey = me.src_key;
      break;
  }
  return w;
}

namespace {

verif::RecvWr make_recv(const RunConfig& cfg, const Plan& plan, const QpSide& me, uint32_t q,
                        uint64_t i) {
  verif::RecvWr r;
  r.wr_id = recv_wr_id(q, i);
  r.addr = me.dst + dst_offset(cfg, plan, i);
  r.length = static_cast<uint32_t>(plan.stride);
  r.lkey = me.dst_key;
  return r;
}

}  // namespace

verif::Workload make_verif_workload(const RunConfig& cfg, const Plan& plan,
                                    const std::vector<QpSide>& a, const std::vector<QpSide>& b,
                                    const std::vector<std::vector<uint8_t>>& init,
                                    const std::array<std::vector<uint64_t>, 2>* posted) {
  const std::vector<RegionRef> regs = regions(cfg);
  if (init.size() != regs.size()) throw std::invalid_argument("make_verif_workload: init size");
  verif::Workload w;
  w.hosts.resize(2);
  const uint32_t nq = static_cast<uint32_t>(plan.sizes.size());
  const uint8_t data_access = verif::kAccessLocalWrite | verif::kAccessRemoteWrite | verif::kAccessRemoteRead;

  // One MR per (host, key), spanning every buffer that uses the key.
  std::map<std::pair<uint32_t, uint32_t>, verif::MemoryRegion> mrs;
  for (size_t k = 0; k < regs.size(); ++k) {
    const RegionRef& r = regs[k];
    const QpSide& s = (r.host == 0 ? a : b)[r.qp];
    verif::Buffer buf;
    buf.name = std::string("qp") + std::to_string(r.qp) + (r.src ? ".src" : ".dst");
    buf.pa = r.src ? s.src : s.dst;
    buf.init = init[k];
    const uint32_t key = r.src ? s.src_key : s.dst_key;
    const uint64_t end = buf.pa + std::max<uint64_t>(buf.init.size(), plan.region);
    auto it = mrs.find({r.host, key});
    if (it == mrs.end()) {
      verif::MemoryRegion mr;
      mr.key = key;
      mr.iova = mr.pa = buf.pa;
      mr.length = end - buf.pa;
      mr.pd = s.pd;
      mr.access = data_access;
      mrs.emplace(std::make_pair(r.host, key), mr);
    } else {
      verif::MemoryRegion& mr = it->second;
      const uint64_t lo = std::min(mr.pa, buf.pa);
      const uint64_t hi = std::max(mr.pa + mr.length, end);
      mr.iova = mr.pa = lo;
      mr.length = hi - lo;
    }
    w.hosts[r.host].buffers.push_back(std::move(buf));
  }
  for (const auto& [hk, mr] : mrs) w.hosts[hk.first].mrs.push_back(mr);

  const MessageBytes bytes(cfg, plan);
  w.fill = [bytes](const verif::HostStore& st, uint64_t offset, uint8_t* dst, size_t n) {
    bytes.fill(MessageBytes::from_tag(st.tag), st.len, offset, dst, n);
  };
  const bool both = both_send(cfg);
  auto count = [&](uint32_t h, uint32_t q) { return posted ? (*posted)[h][q] : cfg.iters; };
  for (uint32_t q = 0; q < nq; ++q) {
    for (uint32_t h = 0; h < 2; ++h) {
      const QpSide& me = (h == 0 ? a : b)[q];
      const QpSide& peer = (h == 0 ? b : a)[q];
      verif::QpSpec qs;
      qs.qpn = me.qpn;
      qs.pd = me.pd;
      qs.access = verif::kAccessRemoteWrite | verif::kAccessRemoteRead;
      qs.peer_host = 1 - h;
      qs.peer_qpn = peer.qpn;
      qs.mtu = cfg.mtu;
      const bool sends = h == 0 || both;
      const bool recvs = has_recv(cfg) && (h == 1 || both);
      if (sends) {
        const uint64_t n = count(h, q);
        qs.send.reserve(n);
        for (uint64_t i = 0; i < n; ++i) qs.send.push_back(make_send(cfg, plan, h, me, peer, q, i));
      }
      if (recvs) {
        const uint64_t n = count(1 - h, q);  // one receive per message the peer sends
        qs.recv.reserve(n);
        for (uint64_t i = 0; i < n; ++i) qs.recv.push_back(make_recv(cfg, plan, me, q, i));
      }
      w.hosts[h].qps.push_back(std::move(qs));
    }
  }
  return w;
}

uint64_t wire_bytes(Op op, uint64_t size, uint32_t mtu) {
  const uint64_t pkts = size == 0 ? 1 : (size + mtu - 1) / mtu;
  const uint64_t headers = 14 + 20 + 8 + 12 + 4;  // Ethernet, IPv4, UDP, BTH, ICRC
  const uint64_t framing = 4 + 8 + 12;             // FCS, preamble/SFD, IFG
  uint64_t wire = 0;
  for (uint64_t k = 0; k < pkts; ++k) {
    const uint64_t payload = k + 1 < pkts ? mtu : size - (pkts - 1) * mtu;
    uint64_t frame = headers + ((payload + 3) & ~uint64_t(3));  // payload padded to 4 bytes
    if (op == Op::Write && k == 0) frame += 16;                  // RETH
    if (op == Op::Read && (k == 0 || k + 1 == pkts)) frame += 4; // AETH
    wire += std::max<uint64_t>(frame, 60) + framing;
  }
  return wire;
}

double goodput_limit_gbps(Op op, uint64_t size, uint32_t mtu) {
  return size == 0 ? 0.0 : 100.0 * static_cast<double>(size) / static_cast<double>(wire_bytes(op, size, mtu));
}

double max_lossless_cable_ns(const RunConfig& c) {
  // the longest RoCEv2 frame at this MTU: Ethernet, IPv4, UDP, BTH, RETH and ImmDt headers, ICRC
  const unsigned max_frame = c.mtu + 14 + 20 + 8 + 12 + 16 + 4 + 4;
  return lossless_cable_ns(abi::RX_BUF_BEATS, abi::RX_XOFF_BEATS, max_frame, 100.0, 1000.0 / c.clock_mhz);
}

}  // namespace srnic::sim
