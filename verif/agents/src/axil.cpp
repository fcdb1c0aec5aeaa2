// AxiLiteMonitor. Each cycle: stability of the five channels against the previous cycle, then
// the responses (B, R) against the requests accepted in earlier cycles only, then the requests.
// AW and W are accepted independently and paired in order (the n-th AW with the n-th W); AXI4-Lite
// has no ids, so responses match the oldest open request of their direction.
#include "srnic/agents/axil.hpp"

#include "detail.hpp"

namespace srnic::verif::agents {

namespace {

using ull = unsigned long long;

const char* resp_name(uint8_t r) {
  static const char* const names[4] = {"OKAY", "EXOKAY", "SLVERR", "DECERR"};
  return names[r & 3];
}

}  // namespace

AxiLiteMonitor::AxiLiteMonitor(uvm::Component& parent, std::string name, const AxiLiteConfig& cfg)
    : Monitor(parent, std::move(name)), cfg_(cfg), cg_("cg_axil", this) {
  auto& dir = cg_.coverpoint("dir").bin("read", 0).bin("write", 1);
  auto& region = cg_.coverpoint("region");
  if (cfg_.regions.empty()) {
    region.bins_split("page", 0, 0xFFFF, 16);
  } else {
    for (const AxiLiteRegion& r : cfg_.regions) region.range(r.name, r.lo, r.hi);
  }
  region.default_bin("other");
  auto& resp = cg_.coverpoint("resp").bin("okay", 0).ignore("exokay", 1, 1);
  if (cfg_.cover_error_resp) {
    resp.bin("slverr", 2).bin("decerr", 3);
  } else {
    resp.ignore("slverr", 2, 2).ignore("decerr", 3, 3);
  }
  cg_.cross("dir_x_region", {&dir, &region});
  cg_.cross("dir_x_resp", {&dir, &resp});
}

void AxiLiteMonitor::sample() {
  if (src_ != nullptr) sample(*src_);
}

void AxiLiteMonitor::check_stable(const AxiLiteSignals& s) {
  const AxiLiteSignals& p = prev_;
  if (aw_wait_) {
    if (!s.awvalid)
      error("AXIL_STABLE", strf("AW: AWVALID dropped before AWREADY (addr 0x%04x)", p.awaddr));
    else if (s.awaddr != p.awaddr)
      error("AXIL_STABLE", strf("AW: address changed while waiting for AWREADY: 0x%04x->0x%04x",
                                p.awaddr, s.awaddr));
  }
  if (w_wait_) {
    if (!s.wvalid)
      error("AXIL_STABLE", strf("W: WVALID dropped before WREADY (data 0x%08x strb 0x%x)",
                                p.wdata, p.wstrb));
    else if (s.wdata != p.wdata || s.wstrb != p.wstrb)
      error("AXIL_STABLE",
            strf("W: payload changed while waiting for WREADY: data 0x%08x->0x%08x strb 0x%x->0x%x",
                 p.wdata, s.wdata, p.wstrb, s.wstrb));
  }
  if (b_wait_) {
    if (!s.bvalid)
      error("AXIL_STABLE", strf("B: BVALID dropped before BREADY (bresp %u)", p.bresp));
    else if (s.bresp != p.bresp)
      error("AXIL_STABLE", strf("B: bresp changed while waiting for BREADY: %u->%u", p.bresp,
                                s.bresp));
  }
  if (ar_wait_) {
    if (!s.arvalid)
      error("AXIL_STABLE", strf("AR: ARVALID dropped before ARREADY (addr 0x%04x)", p.araddr));
    else if (s.araddr != p.araddr)
      error("AXIL_STABLE", strf("AR: address changed while waiting for ARREADY: 0x%04x->0x%04x",
                                p.araddr, s.araddr));
  }
  if (r_wait_) {
    if (!s.rvalid)
      error("AXIL_STABLE", strf("R: RVALID dropped before RREADY (data 0x%08x rresp %u)", p.rdata,
                                p.rresp));
    else if (s.rdata != p.rdata || s.rresp != p.rresp)
      error("AXIL_STABLE",
            strf("R: payload changed while waiting for RREADY: data 0x%08x->0x%08x rresp %u->%u",
                 p.rdata, s.rdata, p.rresp, s.rresp));
  }
}

void AxiLiteMonitor::respond(AxiLiteTxn& t, uint8_t resp) {
  t.resp = resp & 3;
  t.cycle_rsp = cycle();
  if (t.write)
    ++stats_.writes;
  else
    ++stats_.reads;
  if (t.resp == 2) ++stats_.slverr;
  if (t.resp == 3) ++stats_.decerr;
  cg_.sample({t.write ? 1 : 0, static_cast<int64_t>(t.addr), t.resp});
  publish(t);
}

void AxiLiteMonitor::pair_writes() {
  while (!aws_.empty() && !ws_.empty()) {
    AxiLiteTxn& t = writes_.emplace_back();
    t.write = true;
    t.addr = aws_.front().addr;
    t.data = ws_.front().data;
    t.strb = ws_.front().strb;
    t.cycle_req = std::max(aws_.front().cycle, ws_.front().cycle);
    aws_.pop_front();
    ws_.pop_front();
  }
}

void AxiLiteMonitor::sample(const AxiLiteSignals& s) {
  check_stable(s);

  // Responses, against the requests of earlier cycles.
  if (s.bvalid && !b_wait_) {
    if (writes_.empty()) {
      const bool aw = !aws_.empty() || (s.awvalid && s.awready);
      const bool w = !ws_.empty() || (s.wvalid && s.wready);
      if (aw || w)
        error("AXIL_B", strf("B (%s) before both halves of the write were accepted: AW %s, W %s",
                             resp_name(s.bresp),
                             !aws_.empty() ? "accepted" : aw ? "accepted in this cycle" : "not yet",
                             !ws_.empty() ? "accepted" : w ? "accepted in this cycle" : "not yet"));
      else
        error("AXIL_B", strf("B (%s) with no write outstanding", resp_name(s.bresp)));
    }
    if ((s.bresp & 3) == 1) error("AXIL_RESP", "B with EXOKAY, which AXI4-Lite does not have");
  }
  if (s.bvalid && s.bready && !writes_.empty()) {
    respond(writes_.front(), s.bresp);
    writes_.pop_front();
  }
  if (s.rvalid && !r_wait_) {
    if (reads_.empty())
      error("AXIL_R", strf("R (data 0x%08x, %s) with no read outstanding%s", s.rdata,
                           resp_name(s.rresp),
                           s.arvalid && s.arready ? " (its AR is accepted only in this cycle)" : ""));
    if ((s.rresp & 3) == 1) error("AXIL_RESP", "R with EXOKAY, which AXI4-Lite does not have");
  }
  if (s.rvalid && s.rready && !reads_.empty()) {
    AxiLiteTxn& t = reads_.front();
    t.data = s.rdata;
    respond(t, s.rresp);
    reads_.pop_front();
  }

  // Requests.
  const bool aw = s.awvalid && s.awready, w = s.wvalid && s.wready;
  if (aw) aws_.push_back(Addr{s.awaddr, cycle()});
  if (w) ws_.push_back(Data{s.wdata, s.wstrb, cycle()});
  if (aw || w) {
    pair_writes();
    const size_t n = outstanding_writes();
    stats_.max_outstanding_writes = std::max<uint64_t>(stats_.max_outstanding_writes, n);
    if (cfg_.max_outstanding != 0 && n > cfg_.max_outstanding)
      error("AXIL_OUTSTANDING", strf("%zu writes outstanding after %s 0x%04x, limit %u", n,
                                     aw ? "AW" : "W of", aw ? s.awaddr : s.wdata,
                                     cfg_.max_outstanding));
  }
  if (s.arvalid && s.arready) {
    AxiLiteTxn& t = reads_.emplace_back();
    t.write = false;
    t.addr = s.araddr;
    t.cycle_req = cycle();
    const size_t n = reads_.size();
    stats_.max_outstanding_reads = std::max<uint64_t>(stats_.max_outstanding_reads, n);
    if (cfg_.max_outstanding != 0 && n > cfg_.max_outstanding)
      error("AXIL_OUTSTANDING", strf("%zu reads outstanding after AR 0x%04x, limit %u", n,
                                     s.araddr, cfg_.max_outstanding));
  }

  aw_wait_ = s.awvalid && !s.awready;
  w_wait_ = s.wvalid && !s.wready;
  b_wait_ = s.bvalid && !s.bready;
  ar_wait_ = s.arvalid && !s.arready;
  r_wait_ = s.rvalid && !s.rready;
  prev_ = s;
}

void AxiLiteMonitor::check() {
  if (cfg_.allow_outstanding_at_end) return;
  if (!reads_.empty())
    error("MON_PARTIAL", strf("%zu read(s) without R at the end; oldest: addr 0x%04x (AR at cycle "
                              "%llu)",
                              reads_.size(), reads_.front().addr,
                              (ull)reads_.front().cycle_req));
  if (!writes_.empty())
    error("MON_PARTIAL", strf("%zu write(s) without B at the end; oldest: addr 0x%04x (accepted "
                              "at cycle %llu)",
                              writes_.size(), writes_.front().addr,
                              (ull)writes_.front().cycle_req));
  if (!aws_.empty() || !ws_.empty())
    error("MON_PARTIAL", strf("write halves unpaired at the end: %zu AW without W, %zu W without AW",
                              aws_.size(), ws_.size()));
}

}  // namespace srnic::verif::agents
