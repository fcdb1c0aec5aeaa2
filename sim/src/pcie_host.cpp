// PcieHost: PCIe link, root complex and host CPU model behind the NIC's AXI and AXI-Lite ports.
//
// Upstream (device -> host) TLPs are serialised in the order they are formed: MRd (header only),
// MWr (<= max_payload, split at max_payload-aligned addresses) and MSI-X writes. Each MRd
// (<= max_read_request, aligned) asks the host for completions that start so that the first CplD
// has fully arrived read_latency_ns (+ jitter) after the MRd left; the downstream link serves
// completions in order of host readiness, one MRd's CplDs back to back. Posted writes reach host
// memory write_latency_ns after leaving, in order (PcieConfig::write_order can let writes of
// different AXI IDs, or any writes, pass each other); the host reads memory for an MRd only after
// applying every posted write that left before it (PCIe: a read does not pass posted writes).
//
// Error injection decides at the AR / AW handshake; the burst then takes the same path as any
// other. A read in error skips the memory read (its slot holds 0xFF bytes); a write in error
// forms its MWr TLPs as usual, marked discard, so they take link time and ordering slots but
// write nothing when they arrive.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "srnic/sim/pcie_bfm.hpp"

namespace srnic::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr unsigned kMaxBeats = 256;          // AXI4 INCR limit; the contract uses <= 64
constexpr size_t kMaxUnassignedWBeats = 256; // W beats accepted ahead of their AW

template <class T>
bool heap_after(const T& a, const T& b) {
  return a.host_ready != b.host_ready ? a.host_ready > b.host_ready : a.order > b.order;
}

std::string fmt(const char* f, unsigned long long a = 0, unsigned long long b = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

unsigned round_to_beats(unsigned v) { return std::max(64u, v / 64 * 64); }

// Stream numbers of the error rules' rate draws (children of PcieConfig::seed): rule i of
// PcieErrorInjection::rules draws from kErrorStream + i.
constexpr uint64_t kErrorStream = 0xE220'0000;

// Decimal or 0x hex, digits only (no sign, no octal).
bool parse_u64(const std::string& s, uint64_t& v) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string digits = hex ? s.substr(2) : s;
  if (digits.empty() || digits.size() > (hex ? 16u : 20u)) return false;
  for (char c : digits)
    if (!(hex ? std::isxdigit(static_cast<unsigned char>(c)) : std::isdigit(static_cast<unsigned char>(c))))
      return false;
  errno = 0;
  v = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
  return errno == 0;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool PcieErrorRule::parse(const std::string& text, PcieErrorRule& out, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = "PCIe error rule '" + text + "': " + m;
    return false;
  };
  std::vector<std::string> items;
  for (size_t pos = 0;;) {
    const size_t colon = text.find(':', pos);
    items.push_back(text.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos));
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  PcieErrorRule r;
  const std::string ch = lower(items[0]);
  if (ch == "read")
    r.channel = Channel::Read;
  else if (ch == "write")
    r.channel = Channel::Write;
  else
    return fail("must start with read or write (the DMA channel), got '" + items[0] + "'");
  bool has_addr = false, has_rate = false, has_nth = false, has_code = false;
  for (size_t i = 1; i < items.size(); ++i) {
    const std::string& item = items[i];
    const size_t eq = item.find('=');
    const std::string key = lower(item.substr(0, eq));
    const std::string val = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    if (eq == std::string::npos) {
      if (key != "slverr" && key != "decerr")
        return fail("unknown item '" + item + "' (use addr=LO-HI, rate=P, nth=N, slverr or decerr)");
      if (has_code) return fail("the response code is given twice");
      has_code = true;
      r.resp = key == "slverr" ? kSlvErr : kDecErr;
    } else if (key == "addr") {
      if (has_addr) return fail("'addr' given twice");
      has_addr = true;
      const size_t dash = val.find('-');
      if (dash == std::string::npos || !parse_u64(val.substr(0, dash), r.lo) || !parse_u64(val.substr(dash + 1), r.hi))
        return fail("addr must be LO-HI (decimal or 0x hex, HI exclusive), got '" + val + "'");
      if (r.lo >= r.hi) return fail("addr range " + val + " is empty (LO must be below HI)");
    } else if (key == "rate") {
      if (has_rate) return fail("'rate' given twice");
      has_rate = true;
      char* end = nullptr;
      r.rate = val.empty() ? 0 : std::strtod(val.c_str(), &end);
      if (val.empty() || *end != '\0' || !(r.rate > 0 && r.rate <= 1))
        return fail("rate must be a probability in (0, 1], got '" + val + "'");
    } else if (key == "nth") {
      if (has_nth) return fail("'nth' given twice");
      has_nth = true;
      if (!parse_u64(val, r.nth) || r.nth == 0) return fail("nth must be an integer >= 1, got '" + val + "'");
    } else {
      return fail("unknown item '" + item + "' (use addr=LO-HI, rate=P, nth=N, slverr or decerr)");
    }
  }
  if (!has_addr && !has_rate && !has_nth) return fail("needs addr=LO-HI, rate=P or nth=N (which bursts)");
  out = r;
  return true;
}

std::string PcieErrorRule::to_string() const {
  std::string s = channel == Channel::Read ? "read" : "write";
  char b[80];
  if (lo < hi) {
    std::snprintf(b, sizeof b, ":addr=0x%llx-0x%llx", static_cast<unsigned long long>(lo),
                  static_cast<unsigned long long>(hi));
    s += b;
  }
  if (rate > 0) {
    std::snprintf(b, sizeof b, "%.15g", rate);
    if (std::strtod(b, nullptr) != rate) std::snprintf(b, sizeof b, "%.17g", rate);
    s += std::string(":rate=") + b;
  }
  if (nth > 0) s += ":nth=" + std::to_string(nth);
  s += resp == kDecErr ? ":decerr" : ":slverr";
  return s;
}

PcieHost::PcieHost(HostMemory& mem, const PcieConfig& cfg, Clock clock)
    : mem_(mem),
      cfg_(cfg),
      clock_(clock),
      rng_(SplitMix64::child(cfg.seed, 0x50C1E)),
      rd_lat_(cfg.latency_bucket_ns > 0 ? cfg.latency_bucket_ns : 10.0, 4096),
      aw_(cfg.aw_queue_depth ? cfg.aw_queue_depth : 1),
      wbeats_(512),
      posted_(256),
      bq_(64),
      mmio_q_(16) {
  cfg_.max_payload = round_to_beats(cfg_.max_payload);
  cfg_.max_read_request = round_to_beats(cfg_.max_read_request);
  if (cfg_.max_outstanding_reads == 0) cfg_.max_outstanding_reads = 1;
  if (cfg_.aw_queue_depth == 0) cfg_.aw_queue_depth = 1;
  if (cfg_.read_jitter_max_ns < cfg_.read_jitter_min_ns) cfg_.read_jitter_max_ns = cfg_.read_jitter_min_ns;
  ns_per_byte_ = 1.0 / cfg_.tlp_gbytes_per_s();
  set_errors(cfg_.errors);

  const unsigned n = cfg_.max_outstanding_reads;
  slots_.resize(n);
  for (auto& s : slots_) {
    s.ready.assign(kMaxBeats, kInf);
    s.data.assign(kMaxBeats * 64, 0);
  }
  for (unsigned i = n; i-- > 0;) free_slots_.push_back(static_cast<uint16_t>(i));
  order_.reserve(n);
  heap_.reserve(static_cast<size_t>(n) * (kMaxBeats * 64 / cfg_.max_read_request + 1));
}

double PcieHost::up_send(unsigned payload, double t) {
  const unsigned wire = payload + cfg_.tlp_overhead;
  const double dur = wire * ns_per_byte_;
  up_free_ = std::max(up_free_, t) + dur;
  ++useq_;
  ++stats_.up_tlps;
  stats_.up_wire_bytes += wire;
  stats_.up_payload_bytes += payload;
  stats_.up_busy_ns += dur;
  return up_free_;
}

double PcieHost::down_send(unsigned payload, double t) {
  const unsigned wire = payload + cfg_.tlp_overhead;
  const double dur = wire * ns_per_byte_;
  down_free_ = std::max(down_free_, t) + dur;
  ++stats_.down_tlps;
  stats_.down_wire_bytes += wire;
  stats_.down_payload_bytes += payload;
  stats_.down_busy_ns += dur;
  return down_free_;
}

void PcieHost::check_addr(uint64_t cycle, const char* ch, uint64_t addr, unsigned len,
                          unsigned size, unsigned burst) {
  if (size != 6) viol_.report(cycle, ch, fmt("size %llu, expected 6 (64-byte beats)", size));
  if (burst != 1) viol_.report(cycle, ch, fmt("burst type %llu, expected 1 (INCR)", burst));
  if (len > 63) viol_.report(cycle, ch, fmt("len %llu: more than 64 beats", len));
  if (addr & 63) viol_.report(cycle, ch, fmt("address 0x%llx not aligned to the 64-byte beat", addr));
  const uint64_t last = (addr & ~63ULL) + (len + 1ULL) * 64 - 1;
  if ((addr >> 12) != (last >> 12))
    viol_.report(cycle, ch, fmt("burst 0x%llx..0x%llx crosses a 4 KiB boundary", addr, last));
}

void PcieHost::set_errors(const PcieErrorInjection& errors) {
  std::vector<ErrorRule> rd, wr;
  for (size_t i = 0; i < errors.rules.size(); ++i) {
    const PcieErrorRule& r = errors.rules[i];
    if (r.lo > r.hi || !(r.rate >= 0 && r.rate <= 1) ||
        (r.resp != PcieErrorRule::kSlvErr && r.resp != PcieErrorRule::kDecErr))
      throw std::invalid_argument("PcieHost: bad error rule " + std::to_string(i) + " (" + r.to_string() + ")");
    ErrorRule e{r, SplitMix64(SplitMix64::child(cfg_.seed, kErrorStream + i))};
    (r.channel == PcieErrorRule::Channel::Read ? rd : wr).push_back(e);
  }
  cfg_.errors = errors;
  rd_rules_ = std::move(rd);
  wr_rules_ = std::move(wr);
}

uint8_t PcieHost::injected_error(std::vector<ErrorRule>& rules, uint64_t n, uint64_t lo, uint64_t hi) {
  uint8_t resp = 0;
  for (ErrorRule& e : rules) {
    const PcieErrorRule& r = e.rule;
    // Every rate rule draws for every burst, selected or not, so its stream stays in step.
    const bool drawn = r.rate <= 0 || e.rng.uniform() < r.rate;
    if (resp == 0 && drawn && (r.nth == 0 || r.nth == n) && (r.lo >= r.hi || (lo < r.hi && r.lo < hi)))
      resp = r.resp;
  }
  return resp;
}

// ---------------------------------------------------------------------------------- reads

void PcieHost::accept_ar(const PcieFromNic& in, uint64_t cycle, double t) {
  check_addr(cycle, "pcie.AR", in.araddr, in.arlen, in.arsize, in.arburst);
  const uint16_t slot = free_slots_.back();
  free_slots_.pop_back();
  ReadBurst& b = slots_[slot];
  b.id = in.arid;
  b.base = in.araddr & ~63ULL;
  b.beats = in.arlen + 1u;
  b.next = 0;
  b.t_ar = t;
  std::fill(b.ready.begin(), b.ready.begin() + b.beats, kInf);
  order_.push_back(slot);
  ++stats_.read_bursts;
  ++ar_count_;
  b.resp = rd_rules_.empty() ? 0 : injected_error(rd_rules_, ar_count_, b.base, b.base + b.beats * 64ULL);
  if (b.resp) {
    ++stats_.rd_err_bursts;
    std::fill(b.data.begin(), b.data.begin() + b.beats * 64, uint8_t{0xFF});
  }

  const uint32_t bytes = b.beats * 64;
  const uint64_t mrrs = cfg_.max_read_request, mps = cfg_.max_payload;
  for (uint32_t off = 0; off < bytes;) {
    const uint64_t a = b.base + off;
    const uint32_t end = static_cast<uint32_t>(std::min<uint64_t>(bytes, (a / mrrs + 1) * mrrs - b.base));
    const uint32_t first_cpl = static_cast<uint32_t>(std::min<uint64_t>(end - off, mps - a % mps));
    const double dep = up_send(0, t);
    ++stats_.mrd_tlps;
    const double jitter = cfg_.read_jitter_min_ns +
                          rng_.uniform() * (cfg_.read_jitter_max_ns - cfg_.read_jitter_min_ns);
    MRd m;
    m.host_ready = dep + cfg_.read_latency_ns + jitter - (first_cpl + cfg_.tlp_overhead) * ns_per_byte_;
    m.order = mrd_order_++;
    m.useq = useq_ - 1;
    m.slot = slot;
    m.offset = off;
    m.len = end - off;
    heap_.push_back(m);
    std::push_heap(heap_.begin(), heap_.end(), [](const MRd& x, const MRd& y) { return heap_after(x, y); });
    off = end;
  }
}

void PcieHost::serve_completions() {
  auto cmp = [](const MRd& x, const MRd& y) { return heap_after(x, y); };
  const uint64_t mps = cfg_.max_payload;
  while (!heap_.empty()) {
    const double start = std::max(down_free_, heap_.front().host_ready);
    if (start > now_) break;
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    const MRd m = heap_.back();
    heap_.pop_back();
    while (!posted_.empty() && posted_.front().useq < m.useq) {
      if (!posted_.front().applied) apply_posted(0);
      retire_applied();
    }
    ReadBurst& b = slots_[m.slot];
    if (!b.resp) mem_.read(b.base + m.offset, &b.data[m.offset], m.len);
    double t = start;
    for (uint32_t off = m.offset, end = m.offset + m.len; off < end;) {
      const uint64_t a = b.base + off;
      const uint32_t cend = static_cast<uint32_t>(std::min<uint64_t>(end, off + (mps - a % mps)));
      t = down_send(cend - off, t);
      ++stats_.cpl_tlps;
      for (uint32_t k = off / 64; k < cend / 64; ++k) b.ready[k] = t;
      if (off == 0) r_scan_at_ = std::min(r_scan_at_, t);
      off = cend;
    }
  }
}

// Picks the next burst for R: the oldest open burst of each ID is eligible; among those whose
// first beat has arrived, the earliest arrival wins. Rescans only when something may have
// changed (a first beat arrived, a burst finished, or a known arrival time has passed).
void PcieHost::select_r_burst() {
  if (r_active_ >= 0 || now_ < r_scan_at_) return;
  uint64_t seen[4] = {0, 0, 0, 0};
  double best_t = kInf, next_t = kInf;
  for (uint16_t s : order_) {
    const uint8_t id = slots_[s].id;
    uint64_t& w = seen[id >> 6];
    const uint64_t bit = 1ULL << (id & 63);
    if (w & bit) continue;  // an older burst with this ID goes first
    w |= bit;
    const double t0 = slots_[s].ready[0];
    if (t0 <= now_) {
      if (t0 < best_t) {
        best_t = t0;
        r_active_ = s;
      }
    } else {
      next_t = std::min(next_t, t0);
    }
  }
  r_scan_at_ = r_active_ >= 0 ? 0.0 : next_t;
}

// ---------------------------------------------------------------------------------- writes

void PcieHost::accept_aw(const PcieFromNic& in, uint64_t cycle) {
  check_addr(cycle, "pcie.AW", in.awaddr, in.awlen, in.awsize, in.awburst);
  const uint64_t base = in.awaddr & ~63ULL;
  const unsigned beats = in.awlen + 1u;
  ++aw_count_;
  const uint8_t resp = wr_rules_.empty() ? 0 : injected_error(wr_rules_, aw_count_, base, base + beats * 64ULL);
  if (resp) ++stats_.wr_err_bursts;
  aw_.push_back(AwEntry{in.awid, base, beats, 0, resp});
}

void PcieHost::assign_w_beats(uint64_t cycle, double t) {
  while (w_unassigned_ && !aw_.empty()) {
    AwEntry& e = aw_.front();
    WBeat& w = wbeats_[wbeats_.size() - w_unassigned_];
    --w_unassigned_;
    const unsigned k = e.assigned++;
    const bool last = e.assigned == e.beats;
    w.addr = e.base + 64ULL * k;
    if (w.last != last)
      viol_.report(cycle, "pcie.W",
                   w.last ? fmt("wlast on beat %llu of a %llu-beat burst", k + 1, e.beats)
                          : fmt("wlast missing on the last beat of a %llu-beat burst", e.beats));
    ++tlp_beats_;
    if (w.strb) {
      tlp_lo_ = std::min<uint64_t>(tlp_lo_, w.addr + __builtin_ctzll(w.strb));
      tlp_hi_ = std::max<uint64_t>(tlp_hi_, w.addr + 63 - __builtin_clzll(w.strb));
      stats_.write_bytes += __builtin_popcountll(w.strb);
    }
    if (last || (w.addr + 64) % cfg_.max_payload == 0) close_wr_tlp(t, e.id, e.resp != 0);
    if (last) {
      bq_.push_back(BResp{e.id, e.resp});
      ++stats_.write_bursts;
      aw_.pop_front();
    }
  }
}

void PcieHost::close_wr_tlp(double t, uint8_t id, bool discard) {
  const unsigned payload =
      tlp_lo_ <= tlp_hi_ ? static_cast<unsigned>((tlp_hi_ | 3) - (tlp_lo_ & ~3ULL) + 1) : 4;
  const double dep = up_send(payload, t);
  ++stats_.mwr_tlps;
  push_posted(Posted{dep, posted_arrival(dep, id), useq_ - 1, 0, tlp_beats_, payload, false, 0, false, discard});
  tlp_beats_ = 0;
  tlp_lo_ = ~0ULL;
  tlp_hi_ = 0;
}

// When a posted TLP that left at `dep` reaches host memory. In order: write_latency_ns after
// leaving (the link keeps the order). Reordering: plus a random delay, but never before an
// earlier write it may not pass (one ID's earlier writes; for MSI-X every earlier write).
double PcieHost::posted_arrival(double dep, int id) {
  double a = dep + cfg_.write_latency_ns;
  if (cfg_.write_order == PcieConfig::WriteOrder::InOrder) return a;
  if (id < 0) {
    a = std::max(a, max_arrive_);
  } else {
    a += rng_.uniform() * cfg_.write_reorder_ns;
    if (cfg_.write_order == PcieConfig::WriteOrder::AcrossIds) {
      a = std::max(a, id_arrive_[id]);
      id_arrive_[id] = a;
    }
  }
  return a;
}

void PcieHost::push_posted(const Posted& src) {
  Posted& p = posted_.push();
  p = src;
  p.first_beat = posted_beat_seq_;
  posted_beat_seq_ += p.nbeats;
  posted_waiting_ += p.payload;
  max_arrive_ = std::max(max_arrive_, p.arrive);
  last_posted_arrive_ = max_arrive_;
  if (cfg_.write_order != PcieConfig::WriteOrder::InOrder) {
    due_.push_back(Due{p.arrive, posted_head_seq_ + posted_.size() - 1});
    std::push_heap(due_.begin(), due_.end(), [](const Due& x, const Due& y) {
      return x.arrive != y.arrive ? x.arrive > y.arrive : x.seq > y.seq;
    });
  }
}

// Applies posted_[idx] to host memory (its beats stay in wbeats_ until retired).
void PcieHost::apply_posted(size_t idx) {
  Posted& p = posted_[idx];
  const size_t first = static_cast<size_t>(p.first_beat - beat_head_seq_);
  if (!p.discard) {
    for (unsigned i = 0; i < p.nbeats; ++i) {
      const WBeat& w = wbeats_[first + i];
      mem_.write_masked(w.addr, w.data, w.strb, 64);
      if (write_observer_) write_observer_(w.addr, w.data, w.strb, now_);
    }
  }
  p.applied = true;
  if (p.msi) {
    ++irq_counts_[p.vector];
    ++stats_.irqs;
    if (irq_handler_) irq_handler_(p.vector, p.arrive);
  }
}

// Drops applied entries (and their beats) from the head of the posted queue.
void PcieHost::retire_applied() {
  while (!posted_.empty() && posted_.front().applied) {
    const Posted& p = posted_.front();
    if (posted_departed_)
      --posted_departed_;
    else
      posted_waiting_ -= p.payload;  // forced out by a later read before its departure was seen
    for (unsigned i = 0; i < p.nbeats; ++i) wbeats_.pop_front();
    beat_head_seq_ += p.nbeats;
    posted_.pop_front();
    ++posted_head_seq_;
  }
}

// Applies every posted write whose arrival time has come.
void PcieHost::apply_due() {
  if (cfg_.write_order == PcieConfig::WriteOrder::InOrder) {
    while (!posted_.empty() && posted_.front().arrive <= now_) {
      apply_posted(0);
      retire_applied();
    }
    return;
  }
  auto cmp = [](const Due& x, const Due& y) { return x.arrive != y.arrive ? x.arrive > y.arrive : x.seq > y.seq; };
  while (!due_.empty() && due_.front().arrive <= now_) {
    std::pop_heap(due_.begin(), due_.end(), cmp);
    const uint64_t seq = due_.back().seq;
    due_.pop_back();
    if (seq < posted_head_seq_) continue;  // already applied and retired (forced by a read)
    const size_t idx = static_cast<size_t>(seq - posted_head_seq_);
    if (!posted_[idx].applied) apply_posted(idx);
  }
  retire_applied();
}

// ---------------------------------------------------------------------------------- MMIO

void PcieHost::mmio_write(uint32_t addr, uint32_t data, uint8_t strb) {
  const double due = std::max(now_ + cfg_.mmio_write_latency_ns, mmio_last_due_);
  mmio_last_due_ = due;
  mmio_q_.push_back(MmioOp{false, static_cast<uint16_t>(addr), data, strb, due, 0});
  ++mmio_writes_posted_;
  down_send(4, now_);
}

uint64_t PcieHost::mmio_read_issue(uint32_t addr) {
  const double due = std::max(now_ + cfg_.mmio_read_latency_ns / 2, mmio_last_due_);
  mmio_last_due_ = due;
  const uint64_t token = ++mmio_token_;
  mmio_q_.push_back(MmioOp{true, static_cast<uint16_t>(addr), 0, 0, due, token});
  down_send(0, now_);
  return token;
}

bool PcieHost::mmio_read_done(uint64_t token, uint32_t& value) {
  auto it = mmio_results_.find(token);
  if (it == mmio_results_.end() || it->second.done > now_) return false;
  value = it->second.value;
  mmio_results_.erase(it);
  return true;
}

uint64_t PcieHost::irq_count(uint16_t vector) const {
  auto it = irq_counts_.find(vector);
  return it == irq_counts_.end() ? 0 : it->second;
}

bool PcieHost::idle() const {
  return order_.empty() && heap_.empty() && aw_.empty() && wbeats_.empty() && posted_.empty() &&
         bq_.empty() && mmio_q_.empty() && !mmio_busy_ && axil_b_pending_ == 0;
}

// ---------------------------------------------------------------------------------- cycle

const PcieToNic& PcieHost::drive_pins(uint64_t cycle) {
  cycle_ = cycle;
  now_ = clock_.ns(cycle);

  while (posted_departed_ < posted_.size() && posted_[posted_departed_].dep <= now_) {
    posted_waiting_ -= posted_[posted_departed_].payload;
    ++posted_departed_;
  }
  apply_due();
  serve_completions();

  select_r_burst();
  drv_.rvalid = false;
  if (r_active_ >= 0) {
    const ReadBurst& b = slots_[r_active_];
    if (b.ready[b.next] <= now_) {
      drv_.rvalid = true;
      drv_.rid = b.id;
      drv_.rresp = b.resp;
      drv_.rlast = b.next + 1 == b.beats;
      std::memcpy(drv_.rdata, &b.data[b.next * 64ULL], 64);
    }
  }
  if (!drv_.rvalid) drv_.rlast = false;

  drv_.bvalid = !bq_.empty();
  drv_.bid = drv_.bvalid ? bq_.front().id : 0;
  drv_.bresp = drv_.bvalid ? bq_.front().resp : 0;
  drv_.arready = !free_slots_.empty();
  drv_.awready = aw_.size() < cfg_.aw_queue_depth && !hold_writes_;
  const bool credit = posted_waiting_ <= cfg_.max_posted_bytes;
  if (!credit) ++stats_.w_backpressure_cycles;
  drv_.wready = credit && w_unassigned_ < kMaxUnassignedWBeats && !hold_writes_;

  if (!mmio_busy_ && !mmio_q_.empty()) {
    const MmioOp& op = mmio_q_.front();
    if (op.due <= now_ && (!op.read || axil_b_pending_ == 0)) {
      mmio_busy_ = true;
      mmio_aw_done_ = mmio_w_done_ = mmio_ar_done_ = false;
    }
  }
  drv_.axil_awvalid = drv_.axil_wvalid = drv_.axil_arvalid = false;
  if (mmio_busy_) {
    const MmioOp& op = mmio_q_.front();
    if (op.read) {
      drv_.axil_arvalid = !mmio_ar_done_;
      drv_.axil_araddr = op.addr;
    } else {
      drv_.axil_awvalid = !mmio_aw_done_;
      drv_.axil_awaddr = op.addr;
      drv_.axil_wvalid = !mmio_w_done_;
      drv_.axil_wdata = op.data;
      drv_.axil_wstrb = op.strb;
    }
  }
  drv_.axil_bready = drv_.axil_rready = true;
  drv_.irq_ready = true;
  return drv_;
}

void PcieHost::sample_pins(const PcieFromNic& in, uint64_t cycle) {
  const double t = clock_.ns(cycle + 1);  // the rising edge that ends this cycle

  // Source stability: once valid is up without ready, valid and payload hold.
  if (ar_stall_) {
    if (!in.arvalid)
      viol_.report(cycle, "pcie.AR", "arvalid dropped before arready");
    else if (in.arid != prev_.arid || in.araddr != prev_.araddr || in.arlen != prev_.arlen ||
             in.arsize != prev_.arsize || in.arburst != prev_.arburst)
      viol_.report(cycle, "pcie.AR", "payload changed while arvalid waited for arready");
  }
  if (aw_stall_) {
    if (!in.awvalid)
      viol_.report(cycle, "pcie.AW", "awvalid dropped before awready");
    else if (in.awid != prev_.awid || in.awaddr != prev_.awaddr || in.awlen != prev_.awlen ||
             in.awsize != prev_.awsize || in.awburst != prev_.awburst)
      viol_.report(cycle, "pcie.AW", "payload changed while awvalid waited for awready");
  }
  if (w_stall_) {
    if (!in.wvalid)
      viol_.report(cycle, "pcie.W", "wvalid dropped before wready");
    else if (in.wstrb != prev_.wstrb || in.wlast != prev_.wlast ||
             std::memcmp(in.wdata, prev_.wdata, 64) != 0)
      viol_.report(cycle, "pcie.W", "payload changed while wvalid waited for wready");
  }
  ar_stall_ = in.arvalid && !drv_.arready;
  aw_stall_ = in.awvalid && !drv_.awready;
  w_stall_ = in.wvalid && !drv_.wready;

  // Writes first: AXI orders nothing between the read and write channels.
  if (in.awvalid && drv_.awready) accept_aw(in, cycle);
  if (in.wvalid && drv_.wready) {
    WBeat& w = wbeats_.push();
    w.addr = 0;
    w.strb = in.wstrb;
    w.last = in.wlast;
    std::memcpy(w.data, in.wdata, 64);
    ++w_unassigned_;
  }
  assign_w_beats(cycle, t);
  if (in.arvalid && drv_.arready) accept_ar(in, cycle, t);

  if (drv_.rvalid && in.rready) {
    ReadBurst& b = slots_[r_active_];
    if (b.next == 0) rd_lat_.add(t - b.t_ar);
    stats_.read_bytes += 64;
    if (b.resp) ++stats_.rd_err_beats;
    if (++b.next == b.beats) {
      order_.erase(std::find(order_.begin(), order_.end(), static_cast<uint16_t>(r_active_)));
      free_slots_.push_back(static_cast<uint16_t>(r_active_));
      r_active_ = -1;
      r_scan_at_ = 0;
    }
  }
  if (drv_.bvalid && in.bready) bq_.pop_front();

  // AXI-Lite: the response of a read is checked before its address handshake, so a response in
  // the same cycle as the AR handshake is flagged.
  if (in.axil_rvalid) {
    if (mmio_busy_ && mmio_q_.front().read && mmio_ar_done_) {
      const double done = std::max(t + cfg_.mmio_read_latency_ns / 2, last_posted_arrive_);
      up_send(4, t);
      mmio_results_[mmio_q_.front().token] = MmioResult{in.axil_rdata, done};
      mmio_q_.pop_front();
      mmio_busy_ = false;
      ++stats_.mmio_reads;
    } else {
      viol_.report(cycle, "pcie.axil.R", "rvalid without an outstanding read");
    }
  }
  if (in.axil_bvalid) {
    if (axil_b_pending_) {
      --axil_b_pending_;
      ++mmio_writes_acked_;
    } else
      viol_.report(cycle, "pcie.axil.B", "bvalid without an outstanding write");
  }
  if (mmio_busy_) {
    const MmioOp& op = mmio_q_.front();
    if (op.read) {
      if (drv_.axil_arvalid && in.axil_arready) mmio_ar_done_ = true;
    } else {
      if (drv_.axil_awvalid && in.axil_awready) mmio_aw_done_ = true;
      if (drv_.axil_wvalid && in.axil_wready) mmio_w_done_ = true;
      if (mmio_aw_done_ && mmio_w_done_) {
        mmio_q_.pop_front();
        mmio_busy_ = false;
        ++axil_b_pending_;
        ++stats_.mmio_writes;
      }
    }
  }

  if (in.irq_valid && drv_.irq_ready) {
    const double dep = up_send(4, t);
    ++stats_.msi_tlps;
    push_posted(Posted{dep, posted_arrival(dep, -1), useq_ - 1, 0, 0, 4, true, in.irq_vector, false, false});
  }
  prev_ = in;
}

}  // namespace srnic::sim
