// Axi4Monitor. Each cycle: stability of the five channels against the previous cycle, then the
// responses (B, R) against the requests accepted in earlier cycles only (a response in the
// cycle of its request's handshake is too early), then the requests (AW, W, AR). W beats are
// assigned by count to the oldest AW still short of data; beats that arrive before any such AW
// wait in lead_ and go to the next AW (AXI4 has no write interleaving, so W follows AW order).
#include "srnic/agents/axi4.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "detail.hpp"

namespace srnic::verif::agents {

namespace {

using ull = unsigned long long;

unsigned beat_bytes(uint8_t size) { return 1u << std::min<unsigned>(size, 6); }

// Byte lanes [lo, hi] that carry beat k of a burst (AXI4 address arithmetic).
void beat_lanes(uint64_t addr, uint8_t len, uint8_t size, uint8_t burst, unsigned k,
                unsigned& lo, unsigned& hi) {
  const uint64_t n = beat_bytes(size);
  uint64_t a = addr;
  if (burst != kBurstFixed && k != 0) {
    a = (addr & ~(n - 1)) + k * n;
    if (burst == kBurstWrap) {
      const uint64_t span = (len + 1ull) * n;
      const uint64_t lower = addr / span * span;
      if (a >= lower + span) a -= span;
    }
  }
  lo = static_cast<unsigned>(a % kAxiDataBytes);
  hi = static_cast<unsigned>((a & ~(n - 1)) % kAxiDataBytes + n - 1);
}

uint64_t lane_mask(unsigned lo, unsigned hi) {
  const uint64_t upto = hi >= 63 ? ~0ull : (1ull << (hi + 1)) - 1;
  return upto & ~((1ull << lo) - 1);
}

const char* resp_name(uint8_t r) {
  static const char* const names[4] = {"OKAY", "EXOKAY", "SLVERR", "DECERR"};
  return names[r & 3];
}

}  // namespace

size_t Axi4WriteTxn::strobed_bytes() const {
  return static_cast<size_t>(std::count(strb.begin(), strb.end(), uint8_t{1}));
}

Axi4Monitor::Axi4Monitor(uvm::Component& parent, std::string name, const Axi4Config& cfg)
    : Component(parent, std::move(name)), cfg_(cfg), cg_("cg_axi", this) {
  auto& dir = cg_.coverpoint("dir").bin("read", 0).bin("write", 1);
  const unsigned nr = std::clamp(cfg_.cover_read_ids, 1u, kAxiIds);
  const unsigned nw = std::clamp(cfg_.cover_write_ids, 1u, kAxiIds);
  auto& id = cg_.coverpoint("id").bins_each("id", 0, std::max(nr, nw) - 1);
  auto& beats = cg_.coverpoint("beats")
                    .bin("1", 1)
                    .range("2-7", 2, 7)
                    .bin("8", 8)
                    .range("9-63", 9, 63)
                    .range("64+", 64, 256);
  cg_.coverpoint("outstanding")
      .bin("1", 1)
      .range("2-3", 2, 3)
      .range("4-7", 4, 7)
      .range("8-15", 8, 15)
      .range("16-31", 16, 31)
      .range("32+", 32, INT64_MAX);
  cg_.cross("dir_x_id", {&dir, &id}).ignore_if([nr, nw](const std::vector<std::string>& b) {
    const unsigned v = static_cast<unsigned>(std::stoul(b[1].substr(3)));  // "id[v]"
    return v >= (b[0] == "read" ? nr : nw);
  });
  cg_.cross("dir_x_beats", {&dir, &beats});
}

void Axi4Monitor::sample() {
  if (src_ != nullptr) sample(*src_);
}

void Axi4Monitor::sample(const Axi4Signals& s) {
  check_stable(s);
  on_b(s);
  on_r(s);
  on_aw(s);
  on_w(s);
  on_ar(s);

  aw_wait_ = s.awvalid && !s.awready;
  w_wait_ = s.wvalid && !s.wready;
  b_wait_ = s.bvalid && !s.bready;
  ar_wait_ = s.arvalid && !s.arready;
  r_wait_ = s.rvalid && !s.rready;
  prev_ = s;
  prev_.wdata = prev_.rdata = nullptr;
  if (w_wait_) {
    if (s.wdata) std::memcpy(prev_wdata_, s.wdata, sizeof prev_wdata_);
    else std::memset(prev_wdata_, 0, sizeof prev_wdata_);
  }
  if (r_wait_) {
    if (s.rdata) std::memcpy(prev_rdata_, s.rdata, sizeof prev_rdata_);
    else std::memset(prev_rdata_, 0, sizeof prev_rdata_);
  }
}

// ------------------------------------------------------------------------------ stability

namespace {

// First differing byte lane of two data beats, or -1.
int first_diff(const uint32_t* a, const uint32_t* b) {
  uint8_t x[kAxiDataBytes], y[kAxiDataBytes];
  words_to_bytes(a, x);
  words_to_bytes(b, y);
  for (unsigned i = 0; i < kAxiDataBytes; ++i)
    if (x[i] != y[i]) return static_cast<int>(i);
  return -1;
}

}  // namespace

void Axi4Monitor::check_stable(const Axi4Signals& s) {
  const Axi4Signals& p = prev_;
  if (aw_wait_) {
    if (!s.awvalid) {
      error("AXI_STABLE", strf("AW: AWVALID dropped before AWREADY (id %u addr 0x%llx len %u)",
                               p.awid, (ull)p.awaddr, p.awlen));
    } else if (s.awid != p.awid || s.awaddr != p.awaddr || s.awlen != p.awlen ||
               s.awsize != p.awsize || s.awburst != p.awburst) {
      error("AXI_STABLE",
            strf("AW: payload changed while waiting for AWREADY: id %u->%u addr 0x%llx->0x%llx "
                 "len %u->%u size %u->%u burst %u->%u",
                 p.awid, s.awid, (ull)p.awaddr, (ull)s.awaddr, p.awlen, s.awlen, p.awsize,
                 s.awsize, p.awburst, s.awburst));
    }
  }
  if (w_wait_) {
    if (!s.wvalid) {
      error("AXI_STABLE", strf("W: WVALID dropped before WREADY (wstrb 0x%016llx wlast %d)",
                               (ull)p.wstrb, p.wlast));
    } else {
      const int lane = first_diff(prev_wdata_, s.wdata);
      if (lane >= 0 || s.wstrb != p.wstrb || s.wlast != p.wlast) {
        error("AXI_STABLE",
              strf("W: payload changed while waiting for WREADY: wstrb 0x%016llx->0x%016llx "
                   "wlast %d->%d, first changed data byte lane %d",
                   (ull)p.wstrb, (ull)s.wstrb, p.wlast, s.wlast, lane));
      }
    }
  }
  if (b_wait_) {
    if (!s.bvalid) {
      error("AXI_STABLE", strf("B: BVALID dropped before BREADY (id %u bresp %u)", p.bid, p.bresp));
    } else if (s.bid != p.bid || s.bresp != p.bresp) {
      error("AXI_STABLE", strf("B: payload changed while waiting for BREADY: id %u->%u bresp %u->%u",
                               p.bid, s.bid, p.bresp, s.bresp));
    }
  }
  if (ar_wait_) {
    if (!s.arvalid) {
      error("AXI_STABLE", strf("AR: ARVALID dropped before ARREADY (id %u addr 0x%llx len %u)",
                               p.arid, (ull)p.araddr, p.arlen));
    } else if (s.arid != p.arid || s.araddr != p.araddr || s.arlen != p.arlen ||
               s.arsize != p.arsize || s.arburst != p.arburst) {
      error("AXI_STABLE",
            strf("AR: payload changed while waiting for ARREADY: id %u->%u addr 0x%llx->0x%llx "
                 "len %u->%u size %u->%u burst %u->%u",
                 p.arid, s.arid, (ull)p.araddr, (ull)s.araddr, p.arlen, s.arlen, p.arsize,
                 s.arsize, p.arburst, s.arburst));
    }
  }
  if (r_wait_) {
    if (!s.rvalid) {
      error("AXI_STABLE", strf("R: RVALID dropped before RREADY (id %u rresp %u rlast %d)", p.rid,
                               p.rresp, p.rlast));
    } else {
      const int lane = first_diff(prev_rdata_, s.rdata);
      if (lane >= 0 || s.rid != p.rid || s.rresp != p.rresp || s.rlast != p.rlast) {
        error("AXI_STABLE",
              strf("R: payload changed while waiting for RREADY: id %u->%u rresp %u->%u "
                   "rlast %d->%d, first changed data byte lane %d",
                   p.rid, s.rid, p.rresp, s.rresp, p.rlast, s.rlast, lane));
      }
    }
  }
}

// ---------------------------------------------------------------------------- address phase

void Axi4Monitor::check_addr(const char* ch, uint8_t id, uint64_t addr, uint8_t len, uint8_t size,
                             uint8_t burst) {
  const unsigned beats = len + 1u;
  const uint64_t n = beat_bytes(size);
  const auto what = [&] {
    return strf("%s id %u addr 0x%llx len %u (%u beats) size %u burst %u", ch, id, (ull)addr, len,
                beats, size, burst);
  };
  if (size > 6 || !((cfg_.allowed_sizes >> size) & 1))
    error("AXI_SIZE", what() + strf(": size not allowed (allowed sizes mask 0x%02x, bus 64 B)",
                                    cfg_.allowed_sizes));
  const bool burst_ok = burst <= kBurstWrap && ((cfg_.allowed_bursts >> burst) & 1);
  if (!burst_ok)
    error("AXI_BURST", what() + strf(": burst type not allowed (allowed bursts mask 0x%x)",
                                     cfg_.allowed_bursts));
  const unsigned max = burst == kBurstIncr ? cfg_.max_beats : std::min(16u, cfg_.max_beats);
  if (beats > max) error("AXI_LEN", what() + strf(": more than %u beats", max));
  if (burst == kBurstWrap && burst_ok &&
      ((beats != 2 && beats != 4 && beats != 8 && beats != 16) || (addr & (n - 1)) != 0))
    error("AXI_WRAP", what() + ": WRAP needs 2, 4, 8 or 16 beats and an aligned start address");
  if (cfg_.require_aligned && (addr & (n - 1)) != 0)
    error("AXI_ALIGN", what() + strf(": start address not aligned to the %llu-byte beat", (ull)n));
  if (burst == kBurstIncr) {
    const uint64_t last = (addr & ~(n - 1)) + beats * n - 1;
    if ((addr >> 12) != (last >> 12))
      error("AXI_4K", what() + strf(": bytes 0x%llx..0x%llx cross a 4 KB boundary", (ull)addr,
                                    (ull)last));
  }
}

void Axi4Monitor::cover(int dir, uint8_t id, uint8_t len, uint64_t depth) {
  cg_.sample({dir, id & (kAxiIds - 1), len + 1, static_cast<int64_t>(depth)});
}

void Axi4Monitor::on_ar(const Axi4Signals& s) {
  if (!(s.arvalid && s.arready)) return;
  const uint8_t id = s.arid & (kAxiIds - 1);
  check_addr("AR", id, s.araddr, s.arlen, s.arsize, s.arburst);
  Read r;
  r.txn.id = id;
  r.txn.addr = s.araddr;
  r.txn.len = s.arlen;
  r.txn.size = s.arsize;
  r.txn.burst = s.arburst;
  r.txn.data.assign(r.txn.beats() * size_t{kAxiDataBytes}, 0);
  r.txn.cycle_addr = cycle();
  reads_[id].push_back(std::move(r));
  ++n_reads_;
  stats_.max_outstanding_reads = std::max<uint64_t>(stats_.max_outstanding_reads, n_reads_);
  cover(0, id, s.arlen, n_reads_);
}

void Axi4Monitor::on_aw(const Axi4Signals& s) {
  if (!(s.awvalid && s.awready)) return;
  const uint8_t id = s.awid & (kAxiIds - 1);
  check_addr("AW", id, s.awaddr, s.awlen, s.awsize, s.awburst);
  Write w;
  w.txn.id = id;
  w.txn.addr = s.awaddr;
  w.txn.len = s.awlen;
  w.txn.size = s.awsize;
  w.txn.burst = s.awburst;
  w.txn.data.assign(w.txn.beats() * size_t{kAxiDataBytes}, 0);
  w.txn.strb.assign(w.txn.beats() * size_t{kAxiDataBytes}, 0);
  w.txn.cycle_addr = cycle();
  wdata_.push_back(std::move(w));
  ++n_writes_;
  stats_.max_outstanding_writes = std::max<uint64_t>(stats_.max_outstanding_writes, n_writes_);
  cover(1, id, s.awlen, n_writes_);
  // W beats that came first belong to this AW (lead_ is only filled while wdata_ is empty).
  while (!lead_.empty() && !wdata_.empty()) {
    const LeadBeat& b = lead_.front();
    add_w_beat(b.data, b.strb, b.last, b.cycle);
    lead_.pop_front();
  }
}

void Axi4Monitor::on_w(const Axi4Signals& s) {
  if (!(s.wvalid && s.wready)) return;
  if (!wdata_.empty()) {
    uint8_t bytes[kAxiDataBytes];
    words_to_bytes(s.wdata, bytes);
    add_w_beat(bytes, s.wstrb, s.wlast, cycle());
    return;
  }
  LeadBeat& b = lead_.emplace_back();
  words_to_bytes(s.wdata, b.data);
  b.strb = s.wstrb;
  b.last = s.wlast;
  b.cycle = cycle();
}

void Axi4Monitor::add_w_beat(const uint8_t* data, uint64_t strb, bool last, uint64_t cyc) {
  Write& w = wdata_.front();
  Axi4WriteTxn& t = w.txn;
  const unsigned k = w.beat++;
  std::memcpy(&t.data[k * size_t{kAxiDataBytes}], data, kAxiDataBytes);
  for (unsigned i = 0; i < kAxiDataBytes; ++i)
    t.strb[k * size_t{kAxiDataBytes} + i] = static_cast<uint8_t>((strb >> i) & 1);
  if (k == 0) t.cycle_first_data = cyc;
  t.cycle_last_data = cyc;
  ++stats_.write_beats;
  stats_.write_bytes += static_cast<uint64_t>(__builtin_popcountll(strb));

  unsigned lo, hi;
  beat_lanes(t.addr, t.len, t.size, t.burst, k, lo, hi);
  const uint64_t outside = strb & ~lane_mask(lo, hi);
  if (outside != 0)
    error("AXI_WSTRB",
          strf("W beat %u of %u of write id %u addr 0x%llx (accepted at cycle %llu): WSTRB "
               "0x%016llx enables lanes outside the beat's lanes %u..%u (first: lane %d)",
               k + 1, t.beats(), t.id, (ull)t.addr, (ull)cyc, (ull)strb, lo, hi,
               __builtin_ctzll(outside)));
  const bool final_beat = w.beat == t.beats();
  if (last != final_beat)
    error("AXI_WLAST", final_beat
                           ? strf("WLAST missing on beat %u of %u of write id %u addr 0x%llx "
                                  "(accepted at cycle %llu)",
                                  k + 1, t.beats(), t.id, (ull)t.addr, (ull)cyc)
                           : strf("WLAST on beat %u of %u of write id %u addr 0x%llx (accepted "
                                  "at cycle %llu)",
                                  k + 1, t.beats(), t.id, (ull)t.addr, (ull)cyc));
  if (final_beat) {
    bwait_[t.id].push_back(std::move(w));
    wdata_.pop_front();
  }
}

// ------------------------------------------------------------------------------- responses

void Axi4Monitor::on_b(const Axi4Signals& s) {
  if (!s.bvalid) return;
  const uint8_t id = s.bid & (kAxiIds - 1);
  std::deque<Write>& q = bwait_[id];
  if (!b_wait_) {  // a response newly presented this cycle
    if (q.empty()) {
      const Write* pend = nullptr;
      for (const Write& w : wdata_) {
        if (w.txn.id == id) {
          pend = &w;
          break;
        }
      }
      if (pend != nullptr)
        error("AXI_BID", strf("B id %u (%s) before the last W beat of write addr 0x%llx was "
                              "accepted (%u of %u beats)",
                              id, resp_name(s.bresp), (ull)pend->txn.addr, pend->beat,
                              pend->txn.beats()));
      else
        error("AXI_BID", strf("B id %u (%s) with no write of that id outstanding", id,
                              resp_name(s.bresp)));
    }
  }
  if (!s.bready || q.empty()) return;  // an unmatched B was reported when presented
  Write w = std::move(q.front());
  q.pop_front();
  w.txn.resp = s.bresp & 3;
  w.txn.cycle_resp = cycle();
  --n_writes_;
  ++stats_.writes;
  if (w.txn.resp == kRespSlvErr) ++stats_.write_slverr;
  if (w.txn.resp == kRespDecErr) ++stats_.write_decerr;
  write_ap.write(w.txn);
}

void Axi4Monitor::on_r(const Axi4Signals& s) {
  if (!s.rvalid) return;
  const uint8_t id = s.rid & (kAxiIds - 1);
  std::deque<Read>& q = reads_[id];
  if (!r_wait_) {
    if (q.empty()) {
      const bool same = s.arvalid && s.arready && (s.arid & (kAxiIds - 1)) == id;
      error("AXI_RID", strf("R id %u (%s, rlast %d) with no read of that id outstanding%s", id,
                            resp_name(s.rresp), s.rlast,
                            same ? " (its AR is accepted only in this cycle)" : ""));
    }
  }
  if (!s.rready || q.empty()) return;
  Read& r = q.front();
  Axi4ReadTxn& t = r.txn;
  const unsigned k = r.beat++;
  words_to_bytes(s.rdata, &t.data[k * size_t{kAxiDataBytes}]);
  if (k == 0) t.cycle_first = cycle();
  t.resp = std::max<uint8_t>(t.resp, s.rresp & 3);
  unsigned lo, hi;
  beat_lanes(t.addr, t.len, t.size, t.burst, k, lo, hi);
  ++stats_.read_beats;
  stats_.read_bytes += hi - lo + 1;
  const bool final_beat = r.beat == t.beats();
  if (s.rlast != final_beat)
    error("AXI_RLAST", final_beat
                           ? strf("RLAST missing on beat %u of %u of read id %u addr 0x%llx", k + 1,
                                  t.beats(), id, (ull)t.addr)
                           : strf("RLAST on beat %u of %u of read id %u addr 0x%llx", k + 1,
                                  t.beats(), id, (ull)t.addr));
  if (!final_beat) return;
  t.cycle_last = cycle();
  --n_reads_;
  ++stats_.reads;
  if (t.resp == kRespSlvErr) ++stats_.read_slverr;
  if (t.resp == kRespDecErr) ++stats_.read_decerr;
  read_ap.write(t);
  q.pop_front();
}

// ----------------------------------------------------------------------------------- check

void Axi4Monitor::check() {
  if (cfg_.allow_outstanding_at_end) return;
  if (n_reads_ != 0) {
    const Read* first = nullptr;
    for (const auto& q : reads_)
      if (!q.empty() && (first == nullptr || q.front().txn.cycle_addr < first->txn.cycle_addr))
        first = &q.front();
    error("MON_PARTIAL",
          strf("%zu read burst(s) outstanding at the end; oldest: id %u addr 0x%llx (AR at cycle "
               "%llu), %u of %u R beats",
               n_reads_, first->txn.id, (ull)first->txn.addr, (ull)first->txn.cycle_addr,
               first->beat, first->txn.beats()));
  }
  if (!wdata_.empty()) {
    const Write& w = wdata_.front();
    error("MON_PARTIAL",
          strf("%zu write burst(s) short of W beats at the end; oldest: id %u addr 0x%llx (AW at "
               "cycle %llu), %u of %u W beats",
               wdata_.size(), w.txn.id, (ull)w.txn.addr, (ull)w.txn.cycle_addr, w.beat,
               w.txn.beats()));
  }
  size_t nb = 0;
  const Write* first = nullptr;
  for (const auto& q : bwait_) {
    nb += q.size();
    if (!q.empty() && (first == nullptr || q.front().txn.cycle_addr < first->txn.cycle_addr))
      first = &q.front();
  }
  if (nb != 0)
    error("MON_PARTIAL",
          strf("%zu write burst(s) without a B at the end; oldest: id %u addr 0x%llx (AW at cycle "
               "%llu)",
               nb, first->txn.id, (ull)first->txn.addr, (ull)first->txn.cycle_addr));
  if (!lead_.empty())
    error("MON_PARTIAL", strf("%zu W beat(s) accepted without an AW at the end; first at cycle %llu",
                              lead_.size(), (ull)lead_.front().cycle));
}

}  // namespace srnic::verif::agents
