// Link and EthPort implementation.
//
// TX: beats accepted on m_axis_tx are assembled into whole frames (store-and-forward). A frame
// starts on the wire at max(wire free, frame complete); its last bit leaves after preamble/SFD
// (8 B), the frame padded to 60 B, and FCS (4 B); the wire is free again after a further 12 B
// IFG. The frame is handed to the Link at the cycle its last bit has left.
// RX: a frame that has fully arrived is driven on s_axis_rx, 64 bytes per cycle, back to back.
#include "srnic/sim/eth_mac.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

namespace srnic::sim {

namespace {
constexpr size_t kMinFrame = 60;            // without FCS
constexpr unsigned kWireOverhead = 4 + 8 + 12;  // FCS, preamble/SFD, IFG
constexpr size_t kMaxHeldPcap = 4096;
constexpr size_t kMaxPool = 256;
constexpr size_t kEthHeader = 14;
constexpr uint16_t kRoceV2Port = 4791;

// Impairment streams: SplitMix64::child(seed, tag * 2 + sending side).
constexpr uint64_t kLossStream = 0x1055, kBurstStream = 0xB0257, kReorderStream = 0x2E02D,
                   kDupStream = 0xD0B, kJitterStream = 0x717E2, kCorruptStream = 0xC022;

constexpr const char* kNotesHeader = "frame,sent,dir,t_sent_ns,t_arrive_ns,action,detail,opcode,qpn,psn";

uint32_t be16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }
uint32_t be24(const uint8_t* p) { return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]; }

// Bytes [begin, end) a corruption may hit: after the Ethernet header and, when the frame carries
// an IPv4 packet, within it (padding after a short packet is not covered by the ICRC, so a flip
// there would go unnoticed).
std::pair<size_t, size_t> corruptible(const std::vector<uint8_t>& b) {
  size_t end = b.size();
  if (end >= kEthHeader + 20 && b[12] == 0x08 && b[13] == 0x00 && (b[kEthHeader] >> 4) == 4) {
    const size_t ip_len = be16(&b[kEthHeader + 2]);
    if (ip_len >= 20 && kEthHeader + ip_len <= end) end = kEthHeader + ip_len;
  }
  return {kEthHeader, std::max(end, kEthHeader)};
}

// RC opcodes by name, then the groups accepted in drop rules.
struct OpName {
  const char* name;
  int lo, hi;
};
constexpr OpName kOpNames[] = {
    {"SEND_FIRST", 0x00, 0x00},           {"SEND_MIDDLE", 0x01, 0x01},
    {"SEND_LAST", 0x02, 0x02},            {"SEND_LAST_IMM", 0x03, 0x03},
    {"SEND_ONLY", 0x04, 0x04},            {"SEND_ONLY_IMM", 0x05, 0x05},
    {"WRITE_FIRST", 0x06, 0x06},          {"WRITE_MIDDLE", 0x07, 0x07},
    {"WRITE_LAST", 0x08, 0x08},           {"WRITE_LAST_IMM", 0x09, 0x09},
    {"WRITE_ONLY", 0x0A, 0x0A},           {"WRITE_ONLY_IMM", 0x0B, 0x0B},
    {"READ_REQUEST", 0x0C, 0x0C},         {"READ_RESPONSE_FIRST", 0x0D, 0x0D},
    {"READ_RESPONSE_MIDDLE", 0x0E, 0x0E}, {"READ_RESPONSE_LAST", 0x0F, 0x0F},
    {"READ_RESPONSE_ONLY", 0x10, 0x10},   {"ACK", 0x11, 0x11},
    {"ATOMIC_ACK", 0x12, 0x12},           {"CMP_SWAP", 0x13, 0x13},
    {"FETCH_ADD", 0x14, 0x14},            {"SEND_LAST_INV", 0x16, 0x16},
    {"SEND_ONLY_INV", 0x17, 0x17},        {"SEND", 0x00, 0x05},
    {"WRITE", 0x06, 0x0B},                {"READ_RESPONSE", 0x0D, 0x10},
};

// Unsigned decimal or 0x hex number, the whole string.
bool parse_number(const std::string& s, uint64_t& v) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  errno = 0;
  char* end = nullptr;
  v = std::strtoull(s.c_str(), &end, hex ? 16 : 10);
  return errno == 0 && end == s.c_str() + s.size();
}

// N or N-M (inclusive), each in [0, max].
bool parse_range(const std::string& s, uint64_t max, uint64_t& lo, uint64_t& hi) {
  const size_t dash = s.find('-');
  if (dash == std::string::npos) {
    if (!parse_number(s, lo) || lo > max) return false;
    hi = lo;
    return true;
  }
  return parse_number(s.substr(0, dash), lo) && parse_number(s.substr(dash + 1), hi) && lo <= hi && hi <= max;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

// ------------------------------------------------------------------------ impairment model

double BurstLoss::mean_loss() const {
  if (!enabled()) return 0;
  const double sum = p_good_bad + p_bad_good;
  const double bad = sum > 0 ? p_good_bad / sum : 0;  // stationary P(bad); never leaves good if 0
  return (1 - bad) * loss_good + bad * loss_bad;
}

double BurstLoss::mean_burst() const {
  // Runs of losses: P(lost) / P(lost, previous frame not lost), in the stationary chain. A
  // frame's loss is drawn in its state, then the chain steps.
  const double pl = mean_loss();
  if (pl <= 0) return 0;
  const double sum = p_good_bad + p_bad_good;
  const double bad = sum > 0 ? p_good_bad / sum : 0, good = 1 - bad;
  const double next_g = (1 - p_good_bad) * loss_good + p_good_bad * loss_bad;  // P(next lost | good now)
  const double next_b = p_bad_good * loss_good + (1 - p_bad_good) * loss_bad;
  const double pll = good * loss_good * next_g + bad * loss_bad * next_b;
  return pl > pll ? pl / (pl - pll) : std::numeric_limits<double>::infinity();
}

bool BurstLoss::from_rate_burst(double rate, double burst, BurstLoss& out, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return false;
  };
  if (!(rate >= 0 && rate < 1)) return fail("mean loss rate must be >= 0 and < 1");
  if (!(burst >= 1 && std::isfinite(burst))) return fail("mean burst length must be >= 1 frame");
  const double p_gb = rate / (burst * (1 - rate));
  if (p_gb > 1 + 1e-12) {
    char b[160];
    std::snprintf(b, sizeof b, "mean loss rate %g with mean burst %g needs p(good->bad) > 1 (the rate must be <= burst / (burst + 1))",
                  rate, burst);
    return fail(b);
  }
  out = BurstLoss{std::min(p_gb, 1.0), 1 / burst, 0, 1};
  return true;
}

RoceFields parse_roce(const uint8_t* p, size_t n) {
  RoceFields r;
  if (n < kEthHeader + 20 || p[12] != 0x08 || p[13] != 0x00) return r;
  const uint8_t* ip = p + kEthHeader;
  const size_t ihl = size_t(ip[0] & 0x0F) * 4;
  if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != 17) return r;  // IPv4 carrying UDP
  if ((be16(ip + 6) & 0x1FFF) != 0) return r;                  // a later fragment: no UDP header
  const size_t udp = kEthHeader + ihl;
  if (n < udp + 8 + 12 || be16(p + udp + 2) != kRoceV2Port) return r;
  const uint8_t* bth = p + udp + 8;
  r.ok = true;
  r.opcode = bth[0];
  r.qpn = be24(bth + 5);
  r.psn = be24(bth + 9);
  return r;
}

const char* roce_opcode_name(uint8_t opcode) {
  for (const OpName& o : kOpNames)
    if (o.lo == o.hi && o.lo == opcode) return o.name;
  return nullptr;
}

bool DropRule::parse(const std::string& text, DropRule& out, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = "drop rule '" + text + "': " + m;
    return false;
  };
  DropRule r;
  unsigned seen = 0;  // bit per key
  static const char* const kKeys[] = {"dir", "op", "qpn", "psn", "nth", "every"};
  size_t pos = 0;
  if (text.empty()) return fail("empty (use KEY=VALUE,... with keys dir, op, qpn, psn, nth, every)");
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return fail("'" + item + "' is not KEY=VALUE");
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    unsigned k = 0;
    while (k < 6 && key != kKeys[k]) ++k;
    if (k == 6) return fail("unknown key '" + key + "' (use dir, op, qpn, psn, nth, every)");
    if (seen & (1u << k)) return fail("'" + key + "' given twice");
    seen |= 1u << k;
    uint64_t lo = 0, hi = 0;
    switch (k) {
      case 0:
        if (val != "0" && val != "1") return fail("dir must be 0 or 1 (the sending host), got '" + val + "'");
        r.dir = val[0] - '0';
        break;
      case 1: {
        std::string name = upper(val);
        if (name.rfind("RDMA_", 0) == 0) name = name.substr(5);
        bool found = false;
        for (const OpName& o : kOpNames)
          if (name == o.name) {
            r.op_lo = o.lo;
            r.op_hi = o.hi;
            found = true;
          }
        if (!found) {
          if (!parse_range(val, 255, lo, hi))
            return fail("op must be an RC opcode name (e.g. READ_RESPONSE_MIDDLE, SEND, WRITE, READ_RESPONSE) or "
                        "a number or range in 0..255, got '" + val + "'");
          r.op_lo = int(lo);
          r.op_hi = int(hi);
        }
        break;
      }
      case 2:
        if (!parse_number(val, lo) || lo > 0xFFFFFF) return fail("qpn must be in 0..16777215, got '" + val + "'");
        r.qpn = int64_t(lo);
        break;
      case 3:
        if (!parse_range(val, 0xFFFFFF, lo, hi))
          return fail("psn must be a PSN or range N-M in 0..16777215, got '" + val + "'");
        r.psn_lo = uint32_t(lo);
        r.psn_hi = uint32_t(hi);
        break;
      default:
        if (!parse_number(val, lo) || lo < 1) return fail(key + " must be an integer >= 1, got '" + val + "'");
        (k == 4 ? r.nth : r.every) = lo;
        break;
    }
  }
  if (r.nth && r.every) return fail("use nth or every, not both");
  out = r;
  return true;
}

std::string DropRule::to_string() const {
  std::string s;
  char b[64];
  auto add = [&](const char* t) {
    if (!s.empty()) s += ',';
    s += t;
  };
  if (dir >= 0) add(dir ? "dir=1" : "dir=0");
  if (op_lo != 0 || op_hi != 255 || (qpn < 0 && psn_lo == 0 && psn_hi == 0xFFFFFF && dir < 0)) {
    const char* name = nullptr;
    for (const OpName& o : kOpNames)
      if (o.lo == op_lo && o.hi == op_hi) name = o.name;
    if (name)
      std::snprintf(b, sizeof b, "op=%s", name);
    else if (op_lo == op_hi)
      std::snprintf(b, sizeof b, "op=0x%02x", op_lo);
    else
      std::snprintf(b, sizeof b, "op=0x%02x-0x%02x", op_lo, op_hi);
    add(b);
  }
  if (qpn >= 0) {
    std::snprintf(b, sizeof b, "qpn=%lld", static_cast<long long>(qpn));
    add(b);
  }
  if (psn_lo != 0 || psn_hi != 0xFFFFFF) {
    if (psn_lo == psn_hi)
      std::snprintf(b, sizeof b, "psn=%u", psn_lo);
    else
      std::snprintf(b, sizeof b, "psn=%u-%u", psn_lo, psn_hi);
    add(b);
  }
  if (nth) {
    std::snprintf(b, sizeof b, "nth=%llu", static_cast<unsigned long long>(nth));
    add(b);
  }
  if (every) {
    std::snprintf(b, sizeof b, "every=%llu", static_cast<unsigned long long>(every));
    add(b);
  }
  return s;
}

const char* ImpairEvent::action_name(uint32_t a) {
  switch (a) {
    case kLostRandom: return "lost_random";
    case kLostBurst: return "lost_burst";
    case kLostFilter: return "lost_filter";
    case kReordered: return "reordered";
    case kDuplicated: return "duplicated";
    case kCopy: return "copy";
    case kCorrupted: return "corrupted";
    case kJittered: return "jitter";
  }
  return "?";
}

// ------------------------------------------------------------------------------------ Link

Link::Link(const LinkConfig& cfg, PcapWriter* pcap)
    : cfg_(cfg), pcap_(pcap), q_{Ring<Arrival>(64), Ring<Arrival>(64)} {
  for (int d = 0; d < 2; ++d) {
    Dir& x = dir_[d];
    x.im = cfg_.direction(d);
    auto stream = [&](uint64_t tag) { return SplitMix64(SplitMix64::child(cfg_.seed, tag * 2 + uint64_t(d))); };
    x.loss = stream(kLossStream);
    x.burst = stream(kBurstStream);
    x.reorder = stream(kReorderStream);
    x.dup = stream(kDupStream);
    x.jitter = stream(kJitterStream);
    x.corrupt = stream(kCorruptStream);
    x.floor_ns = std::numeric_limits<double>::lowest();
  }
  set_drop_rules(cfg_.drop_rules);
  if (cfg_.pause_storm_period_ns > 0) {
    SplitMix64 ph(SplitMix64::child(cfg.seed, 0x5707));
    for (double& p : storm_phase_ns_) p = ph.uniform() * cfg_.pause_storm_period_ns;
  }
  if (dir_[0].im.any() || dir_[1].im.any() || !cfg_.drop_rules.empty()) open_notes();
}

Link::~Link() { flush_pcap(); }

void Link::set_drop_rules(std::vector<DropRule> rules) {
  cfg_.drop_rules = std::move(rules);
  for (Dir& d : dir_) d.hits.assign(cfg_.drop_rules.size(), 0);
}

void Link::open_notes() {
  if (pcap_ && pcap_->is_open() && !pcap_->open_notes(kNotesSuffix, kNotesHeader))
    throw std::runtime_error("pcap: cannot create " + pcap_->path() + kNotesSuffix);
}

void Link::send(int from_side, Frame&& f) {
  const int from = from_side & 1;
  Dir& d = dir_[from];
  const Impairments& im = d.im;
  LinkStats& st = stats_[from];
  ImpairEvent ev;
  ev.from = from;
  ev.index = st.frames++;
  ev.t_sent_ns = f.t_sent_ns;
  st.bytes += f.bytes.size();

  // Every enabled impairment draws from its own stream for every frame, lost or not, so frame
  // n's decisions depend only on n, and turning one impairment on leaves the others' alone.
  const bool lost_random = im.loss > 0 && d.loss.uniform() < im.loss;
  bool lost_burst = false;
  if (im.burst.enabled()) {
    lost_burst = d.burst.uniform() < (d.bad ? im.burst.loss_bad : im.burst.loss_good);
    d.bad = d.burst.uniform() < (d.bad ? 1.0 - im.burst.p_bad_good : im.burst.p_good_bad);
  }
  const bool held = im.reorder > 0 && d.reorder.uniform() < im.reorder;
  const bool dup = im.dup > 0 && d.dup.uniform() < im.dup;
  const double jitter = im.jitter_ns > 0 ? d.jitter.uniform() * im.jitter_ns : 0.0;
  bool corrupt = false;
  uint64_t corrupt_at = 0;
  if (im.corrupt > 0) {
    corrupt = d.corrupt.uniform() < im.corrupt;
    corrupt_at = d.corrupt.next();
  }
  // The BTH as sent (before any corruption), for the drop rules and the record.
  if (im.any() || !cfg_.drop_rules.empty() || drop_filter_) ev.roce = parse_roce(f.bytes.data(), f.bytes.size());
  // Directed drops: every rule counts its matches; the first rule that drops is the cause.
  for (size_t k = 0; k < cfg_.drop_rules.size(); ++k) {
    const DropRule& r = cfg_.drop_rules[k];
    if (r.matches(from, ev.roce) && r.drops(++d.hits[k]) && ev.rule < 0) ev.rule = int(k);
  }
  const bool by_filter = (drop_filter_ && drop_filter_(from, f)) || ev.rule >= 0;

  if (lost_random || lost_burst || by_filter) {
    ++st.lost;
    if (lost_random) {
      ev.actions = ImpairEvent::kLostRandom;
      ++st.lost_random;
    } else if (lost_burst) {
      ev.actions = ImpairEvent::kLostBurst;
      ++st.lost_burst;
    } else {
      ev.actions = ImpairEvent::kLostFilter;
      ++st.lost_filter;
    }
    if (ev.actions != ImpairEvent::kLostFilter) ev.rule = -1;
    if (impair_mon_) impair_mon_(ev);
    if (pcap_) record(f, cfg_.pcap_lost, &ev);
    recycle(std::move(f.bytes));
    return;
  }
  ev.rule = -1;

  if (corrupt) {
    const auto [lo, hi] = corruptible(f.bytes);
    if (hi > lo) {
      ev.bit = static_cast<int64_t>(lo * 8 + corrupt_at % ((hi - lo) * 8));
      f.bytes[size_t(ev.bit / 8)] ^= static_cast<uint8_t>(1u << (ev.bit % 8));
      ev.actions |= ImpairEvent::kCorrupted;
      ++st.corrupted;
    }
  }
  // Arrival: never before the previous frame that was not held back (jitter keeps order);
  // a held-back frame comes reorder_delay_ns after that and does not hold up later frames.
  const double t0 = f.t_sent_ns + cfg_.delay_ns;
  double t = std::max(t0 + jitter, d.floor_ns);
  if (im.jitter_ns > 0 && t > t0) {
    ev.actions |= ImpairEvent::kJittered;
    ev.jitter_ns = jitter;
    ++st.jittered;
  }
  if (held) {
    t += im.reorder_delay_ns;
    ev.actions |= ImpairEvent::kReordered;
    ++st.reordered;
  } else {
    d.floor_ns = t;
  }
  ev.t_arrive_ns = t;
  Frame copy;
  if (dup) {
    ev.actions |= ImpairEvent::kDuplicated;
    ++st.duplicated;
    copy.bytes = take_buffer();
    copy.bytes.assign(f.bytes.begin(), f.bytes.end());
    copy.t_sent_ns = f.t_sent_ns + im.dup_gap_ns;
    copy.bad_fcs = f.bad_fcs;
  }
  const bool impaired = ev.actions != 0;
  if (impaired && impair_mon_) impair_mon_(ev);
  if (pcap_) record(f, true, impaired ? &ev : nullptr);
  deliver(from ^ 1, std::move(f), t, !held);
  if (dup) {
    ImpairEvent c = ev;
    c.actions = ImpairEvent::kCopy | (ev.actions & ImpairEvent::kCorrupted);
    c.t_sent_ns = copy.t_sent_ns;
    c.t_arrive_ns = t + im.dup_gap_ns;
    c.jitter_ns = 0;
    if (impair_mon_) impair_mon_(c);
    if (pcap_) record(copy, true, &c);
    deliver(from ^ 1, std::move(copy), c.t_arrive_ns, false);
  }
}

// Frames not held back arrive in the order they were sent (the in-order queue); held-back frames
// and copies wait in `late`, sorted latest first, and are merged in by arrival time.
void Link::deliver(int to, Frame&& f, double t, bool in_order) {
  if (in_order) {
    Arrival& a = q_[to].push();
    a.frame = std::move(f);
    a.t = t;
    a.seq = seq_[to]++;
    return;
  }
  std::vector<Arrival>& late = late_[to];
  // After every entry due later, before those due at t or earlier (this one was sent last).
  const auto pos = std::partition_point(late.begin(), late.end(), [t](const Arrival& a) { return a.t > t; });
  Arrival a;
  a.frame = std::move(f);
  a.t = t;
  a.seq = seq_[to]++;
  late.insert(pos, std::move(a));
}

bool Link::receive(int side, double now_ns, Frame& out) {
  const int s = side & 1;
  advance(s, now_ns);
  Ring<Arrival>& q = q_[s];
  std::vector<Arrival>& late = late_[s];
  bool from_late = false;
  if (!late.empty()) {
    const Arrival& l = late.back();
    from_late = q.empty() || l.t < q.front().t || (l.t == q.front().t && l.seq < q.front().seq);
  } else if (q.empty()) {
    return false;
  }
  Arrival& a = from_late ? late.back() : q.front();
  if (a.t > now_ns) return false;
  if (out.bytes.capacity()) recycle(std::move(out.bytes));
  out = std::move(a.frame);
  if (from_late) {
    late.pop_back();
  } else {
    q.front().frame.bytes = std::vector<uint8_t>();
    q.pop_front();
  }
  return true;
}

void Link::set_pause(int side, bool on, double now_ns) {
  const int s = side & 1;
  if (pause_last_[s] == on) return;
  pause_last_[s] = on;
  if (on) ++pause_reqs_[s];
  pause_q_[s].push_back(PauseEv{now_ns + cfg_.delay_ns, on});
}

bool Link::tx_paused(int side, double now_ns) {
  const int far = (side & 1) ^ 1;
  Ring<PauseEv>& q = pause_q_[far];
  while (!q.empty() && q.front().t <= now_ns) {
    paused_by_[far] = q.front().on;
    q.pop_front();
  }
  if (cfg_.pause_storm_period_ns > 0 && cfg_.pause_storm_duty > 0) {
    const double per = cfg_.pause_storm_period_ns;
    if (std::fmod(now_ns + storm_phase_ns_[side & 1], per) < cfg_.pause_storm_duty * per) return true;
  }
  return paused_by_[far];
}

void Link::advance(int side, double now_ns) {
  double& n = now_[side & 1];
  if (now_ns > n) {
    n = now_ns;
    if (!held_.empty()) write_ready_pcap();
  }
}

// Queues the pcap record of f (in_pcap) and the side-file line of ev (if any); both are written
// in time-stamp order once both sides have advanced past f.t_sent_ns.
void Link::record(const Frame& f, bool in_pcap, const ImpairEvent* ev) {
  if (!in_pcap && !ev) return;
  if (ev) open_notes();
  Held h{f.t_sent_ns, held_order_++, {}, in_pcap, ev != nullptr, ev ? *ev : ImpairEvent{}};
  if (in_pcap) {
    h.bytes = take_buffer();
    h.bytes.assign(f.bytes.begin(), f.bytes.end());
  }
  auto pos = std::upper_bound(held_.begin(), held_.end(), h, [](const Held& a, const Held& b) {
    return a.t != b.t ? a.t < b.t : a.order < b.order;
  });
  held_.insert(pos, std::move(h));
  write_ready_pcap();
}

void Link::write_held(Held& h) {
  if (h.in_pcap) {
    pcap_->write(h.t, h.bytes.data(), h.bytes.size());
    recycle(std::move(h.bytes));
  }
  if (h.noted && pcap_->notes_open()) write_note(h);
}

// One side-file line (see kNotesSuffix): the pcap record just written (if the frame is in it).
void Link::write_note(const Held& h) {
  const ImpairEvent& e = h.ev;
  std::string act, detail;
  for (uint32_t a = 1; a <= ImpairEvent::kJittered; a <<= 1)
    if (e.actions & a) {
      if (!act.empty()) act += '+';
      act += ImpairEvent::action_name(a);
    }
  char b[96];
  auto add = [&](const char* t) {
    if (!detail.empty()) detail += ' ';
    detail += t;
  };
  if (e.bit >= 0) {
    std::snprintf(b, sizeof b, "bit=%lld", static_cast<long long>(e.bit));
    add(b);
  }
  if (e.actions & ImpairEvent::kLostFilter) add(e.rule >= 0 ? ("rule=" + std::to_string(e.rule)).c_str() : "rule=filter");
  if (e.actions & ImpairEvent::kJittered) {
    std::snprintf(b, sizeof b, "jitter_ns=%.3f", e.jitter_ns);
    add(b);
  }
  char frame[24] = "", arrive[32] = "", op[8] = "", qpn[12] = "", psn[12] = "";
  if (h.in_pcap) std::snprintf(frame, sizeof frame, "%llu", static_cast<unsigned long long>(pcap_->records()));
  if (e.t_arrive_ns >= 0) std::snprintf(arrive, sizeof arrive, "%.3f", e.t_arrive_ns);
  if (e.roce.ok) {
    std::snprintf(op, sizeof op, "0x%02x", e.roce.opcode);
    std::snprintf(qpn, sizeof qpn, "%u", e.roce.qpn);
    std::snprintf(psn, sizeof psn, "%u", e.roce.psn);
  }
  char line[512];
  std::snprintf(line, sizeof line, "%s,%llu,%d>%d,%.3f,%s,%s,%s,%s,%s,%s", frame,
                static_cast<unsigned long long>(e.index), e.from, e.from ^ 1, e.t_sent_ns, arrive, act.c_str(),
                detail.c_str(), op, qpn, psn);
  pcap_->note(line);
}

void Link::write_ready_pcap() {
  const double horizon = std::min(now_[0], now_[1]);
  size_t n = 0;
  while (n < held_.size() && (held_[n].t <= horizon || held_.size() - n > kMaxHeldPcap)) {
    write_held(held_[n]);
    ++n;
  }
  if (n) held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(n));
}

void Link::flush_pcap() {
  if (!pcap_) return;
  for (Held& h : held_) write_held(h);
  held_.clear();
  pcap_->flush();
}

std::vector<uint8_t> Link::take_buffer() {
  if (pool_.empty()) {
    std::vector<uint8_t> v;
    v.reserve(2048);
    return v;
  }
  std::vector<uint8_t> v = std::move(pool_.back());
  pool_.pop_back();
  v.clear();
  return v;
}

void Link::recycle(std::vector<uint8_t>&& buf) {
  if (pool_.size() < kMaxPool && buf.capacity()) pool_.push_back(std::move(buf));
}

double lossless_cable_ns(unsigned buf_beats, unsigned xoff_beats, unsigned max_frame, double gbps,
                         double clock_ns) {
  const double r = gbps / 8.0;                                          // bytes per ns
  const double head = (double(buf_beats) - double(xoff_beats) - 1.0) * 64.0;
  const double partner = std::ceil(double(max_frame) / 64.0) * 64.0;    // arrives whole
  const double per_wire = 128.0 / double(65 + kWireOverhead);
  const double window = (head - partner) / (per_wire * r);              // ns of line rate absorbed
  const double own = double(max_frame + kWireOverhead + kMinFrame + kWireOverhead) / r + 2.0 * clock_ns;
  return std::max(0.0, (window - own) / 2.0);
}

// ------------------------------------------------------------------------------------ EthPort

EthPort::EthPort(Link& link, int side, const EthConfig& cfg, Clock clock)
    : link_(link), side_(side & 1), cfg_(cfg), clock_(clock), ns_per_byte_(8.0 / cfg.rate_gbps), txq_(16) {}

double EthPort::wire_ns(size_t len) const {
  return static_cast<double>(std::max(len, kMinFrame) + kWireOverhead) * ns_per_byte_;
}

void EthPort::drop_assembly() {
  fifo_bytes_ -= std::min<uint64_t>(fifo_bytes_, asm_.size());
  link_.recycle(std::move(asm_));
  asm_ = std::vector<uint8_t>();
  asm_active_ = false;
}

void EthPort::sample_pins(const EthFromNic& in, uint64_t cycle) {
  const double t = clock_.ns(cycle + 1);
  if (in.rx_pause != pause_sent_) {
    // A pause (XOFF) or resume (XON) request is a MAC control frame: it waits for the frame in
    // progress, takes a minimum frame's time on this side's wire and then the cable's delay.
    pause_sent_ = in.rx_pause;
    wire_free_ = std::max(wire_free_, t) + wire_ns(kMinFrame);
    link_.set_pause(side_, in.rx_pause, wire_free_);
  }
  if (t_stall_) {
    if (!in.tvalid)
      viol_.report(cycle, "eth.tx", "tvalid dropped before tready");
    else if (in.tkeep != prev_.tkeep || in.tlast != prev_.tlast || in.tuser != prev_.tuser ||
             std::memcmp(in.tdata, prev_.tdata, 64) != 0)
      viol_.report(cycle, "eth.tx", "payload changed while tvalid waited for tready");
  }
  t_stall_ = in.tvalid && !drv_.tready;
  prev_ = in;
  if (!(in.tvalid && drv_.tready)) return;

  if (!in.tlast && in.tkeep != ~0ULL)
    viol_.report(cycle, "eth.tx", "tkeep not all ones on a beat without tlast");
  else if (in.tkeep == 0 || (in.tkeep & (in.tkeep + 1)) != 0)
    viol_.report(cycle, "eth.tx", "tkeep on the last beat is not a non-empty run from byte 0");

  if (!asm_active_) {
    asm_ = link_.take_buffer();
    asm_active_ = true;
    asm_abort_ = false;
    asm_len_ = 0;
  }
  const unsigned n = static_cast<unsigned>(__builtin_popcountll(in.tkeep));
  asm_len_ += n;
  asm_abort_ |= in.tuser;
  if (asm_len_ <= cfg_.max_frame) {
    if (in.tkeep == keep_mask(n)) {
      asm_.insert(asm_.end(), in.tdata, in.tdata + n);
    } else {
      for (unsigned i = 0; i < 64; ++i)
        if ((in.tkeep >> i) & 1) asm_.push_back(in.tdata[i]);
    }
    fifo_bytes_ += n;
  }
  if (!in.tlast) return;

  if (asm_abort_) {
    ++stats_.tx_aborted;
    drop_assembly();
  } else if (asm_len_ > cfg_.max_frame) {
    ++stats_.tx_oversize;
    drop_assembly();
  } else {
    if (cfg_.pad_short && asm_.size() < kMinFrame) {
      fifo_bytes_ += kMinFrame - asm_.size();
      asm_.resize(kMinFrame, 0);
    }
    TxItem& it = txq_.push();
    it.frame.bytes = std::move(asm_);
    it.frame.t_sent_ns = 0;
    it.frame.bad_fcs = false;
    it.t_ready = t;
    asm_ = std::vector<uint8_t>();
    asm_active_ = false;
  }
}

const EthToNic& EthPort::drive_pins(uint64_t cycle) {
  now_ = clock_.ns(cycle);

  // TX wire.
  for (;;) {
    if (wire_busy_ && onwire_.t_sent_ns <= now_) {
      if (tx_mon_) tx_mon_(onwire_);
      link_.send(side_, std::move(onwire_));
      onwire_ = Frame();
      wire_busy_ = false;
    }
    if (wire_busy_ || txq_.empty()) break;
    const double start = std::max(wire_free_, txq_.front().t_ready);
    if (start > now_) break;
    if (link_.tx_paused(side_, now_)) {
      // flow control: the far end asked to pause. The wire stays idle meanwhile: the next frame
      // starts after the pause, never at a time inside it (which would send the frames held
      // during the pause faster than the line rate).
      wire_free_ = std::max(wire_free_, now_);
      break;
    }
    TxItem& it = txq_.front();
    const size_t len = it.frame.bytes.size();
    const size_t wire_len = std::max(len, kMinFrame);
    onwire_ = std::move(it.frame);
    it.frame = Frame();
    txq_.pop_front();
    onwire_.t_sent_ns = start + static_cast<double>(8 + wire_len + 4) * ns_per_byte_;
    const double dur = wire_ns(len);
    wire_free_ = start + dur;
    wire_busy_ = true;
    fifo_bytes_ -= std::min<uint64_t>(fifo_bytes_, len);
    ++stats_.tx_frames;
    stats_.tx_bytes += len;
    stats_.tx_wire_bytes += wire_len + kWireOverhead;
    stats_.tx_busy_ns += dur;
  }
  drv_.tready = fifo_bytes_ <= cfg_.tx_fifo_bytes;

  // RX stream.
  link_.advance(side_, now_);
  while (!rx_active_ && link_.receive(side_, now_, rx_)) {
    if (rx_.bytes.empty()) continue;
    rx_active_ = true;
    rx_off_ = 0;
    if (rx_mon_) rx_mon_(rx_);
  }
  drv_.rx_tvalid = rx_active_;
  drv_.rx_tlast = drv_.rx_tuser = false;
  drv_.rx_tkeep = 0;
  if (rx_active_) {
    const size_t len = rx_.bytes.size();
    const unsigned n = static_cast<unsigned>(std::min<size_t>(64, len - rx_off_));
    std::memcpy(drv_.rx_tdata, rx_.bytes.data() + rx_off_, n);
    if (n < 64) std::memset(drv_.rx_tdata + n, 0, 64 - n);
    drv_.rx_tkeep = keep_mask(n);
    rx_off_ += n;
    if (rx_off_ >= len) {
      drv_.rx_tlast = true;
      drv_.rx_tuser = rx_.bad_fcs;
      rx_active_ = false;
      ++stats_.rx_frames;
      stats_.rx_bytes += len;
    }
  }
  return drv_;
}

}  // namespace srnic::sim
