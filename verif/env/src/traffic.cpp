// Constrained-random traffic plans and the reference-model workload built from them.
#include "srnic/env/traffic.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace srnic::verif::env {

const char* to_string(SizeClass c) {
  switch (c) {
    case SizeClass::Zero: return "zero";
    case SizeClass::One: return "one";
    case SizeClass::MtuMinus1: return "mtu-1";
    case SizeClass::Mtu: return "mtu";
    case SizeClass::MtuPlus1: return "mtu+1";
    case SizeClass::Small: return "small";
    case SizeClass::Medium: return "medium";
    case SizeClass::Large: return "large";
    case SizeClass::Huge: return "huge";
    default: return "?";
  }
}

const char* to_string(Doorbell d) {
  switch (d) {
    case Doorbell::OneAtATime: return "one-at-a-time";
    case Doorbell::Batched: return "batched";
    case Doorbell::ManyQps: return "many-qps";
    default: return "?";
  }
}

const char* to_string(BadKind b) {
  switch (b) {
    case BadKind::None: return "none";
    case BadKind::LocalKey: return "local-key";
    case BadKind::LocalBounds: return "local-bounds";
    case BadKind::RemoteKey: return "remote-key";
    case BadKind::RemoteBounds: return "remote-bounds";
    case BadKind::RecvTooSmall: return "recv-too-small";
    case BadKind::QpAccess: return "qp-access";
    case BadKind::ForeignPdLocal: return "foreign-pd-local";
    case BadKind::ForeignPdRemote: return "foreign-pd-remote";
    case BadKind::MrRights: return "mr-rights";
    case BadKind::StaleKey: return "stale-key";
    default: return "?";
  }
}

const char* to_string(ResetHow r) {
  switch (r) {
    case ResetHow::Modify: return "modify to RESET";
    case ResetHow::Recreate: return "destroy and create";
    case ResetHow::Replace: return "create and destroy";
    default: return "?";
  }
}

std::string TrafficPlan::summary() const {
  char b[256];
  std::snprintf(b, sizeof b, "%zu QPs, MTU %u, %llu send WRs, %llu receive WRs, %llu payload bytes, doorbell %s",
                qps.size(), mtu, static_cast<unsigned long long>(send_wrs),
                static_cast<unsigned long long>(recv_wrs), static_cast<unsigned long long>(total_payload),
                to_string(doorbell));
  std::string out = b;
  // the hard cases this plan draws, when any
  size_t own_mtu = 0, fenced = 0, stale = 0, rights = 0, host_err = 0;
  for (const QpPlan& q : qps) {
    own_mtu += q.mtu != mtu;
    host_err += q.host_err;
    for (const SidePlan& sp : q.side)
      for (const WrPlan& w : sp.send) {
        fenced += w.reuse >= 0;
        stale += w.bad == BadKind::StaleKey;
        rights += w.bad == BadKind::MrRights;
      }
  }
  const int split_n = int(split[0]) + int(split[1]);
  const int iova_n = int(iova_delta[0] != 0) + int(iova_delta[1] != 0);
  if (own_mtu || fenced || stale || rights || split_n || iova_n) {
    std::snprintf(b, sizeof b, "; %zu QPs with their own MTU, %zu fenced WRs sending READ data, %d hosts with "
                  "split MRs, %d with iova != pa, %zu stale-key and %zu MR-rights bad WRs",
                  own_mtu, fenced, split_n, iova_n, stale, rights);
    out += b;
  }
  if (host_err) out += "; " + std::to_string(host_err) + " QPs moved to ERR by the host";
  size_t reset_conns = 0, resets = 0, how[size_t(ResetHow::kCount)] = {};
  for (const QpPlan& q : qps) {
    if (q.next < 0) continue;
    ++resets;
    reset_conns += q.prev < 0;
    for (uint32_t h = 0; h < 2; ++h) ++how[size_t(q.reset_how[h])];
  }
  if (resets) {
    std::snprintf(b, sizeof b, "; %zu connections reset %zu times (ends: %zu by %s, %zu by %s, %zu by %s)",
                  reset_conns, resets, how[0], to_string(ResetHow::Modify), how[1], to_string(ResetHow::Recreate),
                  how[2], to_string(ResetHow::Replace));
    out += b;
  }
  return out;
}

uint32_t draw_size(SizeClass c, uint32_t mtu, const Knobs& k, uvm::Rng& rng) {
  switch (c) {
    case SizeClass::Zero: return 0;
    case SizeClass::One: return 1;
    case SizeClass::MtuMinus1: return mtu - 1;
    case SizeClass::Mtu: return mtu;
    case SizeClass::MtuPlus1: return mtu + 1;
    case SizeClass::Small: return static_cast<uint32_t>(rng.uniform(2, k.small_max));
    case SizeClass::Medium: return static_cast<uint32_t>(rng.uniform(k.small_max + 1, k.medium_max));
    case SizeClass::Large: return static_cast<uint32_t>(rng.uniform(k.medium_max + 1, k.large_max));
    case SizeClass::Huge: return static_cast<uint32_t>(rng.uniform(k.huge_min, k.huge_max));
    default: throw std::invalid_argument("draw_size: bad size class");
  }
}

SizeClass classify_size(uint64_t len, uint32_t mtu, const Knobs& k) {
  if (len == 0) return SizeClass::Zero;
  if (len == 1) return SizeClass::One;
  if (len + 1 == mtu) return SizeClass::MtuMinus1;
  if (len == mtu) return SizeClass::Mtu;
  if (len == uint64_t(mtu) + 1) return SizeClass::MtuPlus1;
  if (len <= k.small_max) return SizeClass::Small;
  if (len <= k.medium_max) return SizeClass::Medium;
  if (len <= k.large_max) return SizeClass::Large;
  return SizeClass::Huge;
}

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kAreaGap = 4096;  // unwritten bytes between the src and dst parts

bool consumes_recv(WrOpcode op) {
  return op == WrOpcode::Send || op == WrOpcode::SendImm || op == WrOpcode::WriteImm;
}

// Destination-slot allocator of one host: slots in increasing order, unwritten gaps between.
struct SlotAlloc {
  uint64_t cursor = 0;
  uint64_t take(uint64_t len, double cross4k, uvm::Rng& rng) {
    uint64_t start = cursor + rng.uniform(1, 96);
    if (len >= 2 && rng.bernoulli(cross4k)) {
      // Straddle the next 4 KB boundary at a random split.
      uint64_t b = (start / kPage + 1) * kPage;
      const uint64_t before = rng.uniform(1, std::min<uint64_t>(len - 1, kPage - 1));
      while (b - before < start) b += kPage;
      start = b - before;
    }
    cursor = start + len;
    return start;
  }
};

uint64_t src_offset(uint64_t len, uint64_t src_bytes, double cross4k, uvm::Rng& rng) {
  const uint64_t span = src_bytes - len;  // src_bytes >= len + kPage
  if (len >= 2 && rng.bernoulli(cross4k)) {
    const uint64_t pages = span / kPage;
    if (pages >= 1) {
      const uint64_t b = rng.uniform(1, pages) * kPage;
      const uint64_t before = rng.uniform(1, std::min<uint64_t>(len - 1, kPage - 1));
      if (b >= before && b - before <= span) return b - before;
    }
  }
  return rng.uniform(0, span);
}

// PSN and ring wraps (Knobs::psn_wrap, ring_wrap), from a child stream of the plan's stream so
// that the rest of the plan does not depend on them.
void draw_wraps(TrafficPlan& p, const Knobs& k, const uvm::Rng& plan_rng) {
  uvm::Rng rng = plan_rng.child("wraps");
  const bool psn = rng.bernoulli(k.psn_wrap), rings = rng.bernoulli(k.ring_wrap);
  p.whole_batches = rings;
  for (QpPlan& qp : p.qps) {
    if (rings) {
      qp.sq_depth = rng.bernoulli(0.5) ? 2 : 4;
      // every (sq_depth/2)-th WR signaled, as in pass 1, for the new depth
      const uint32_t sig_every = std::max<uint32_t>(1, qp.sq_depth / 2);
      for (SidePlan& sp : qp.side)
        for (size_t i = 0; i < sp.send.size(); ++i)
          if ((i + 1) % sig_every == 0) sp.send[i].signaled = true;
      // a failing QP's receive ring holds all of its receives (see above)
      const bool err_qp = qp.bad_side0 || qp.exhaust_side0;
      if (!err_qp) qp.rq_depth = rng.bernoulli(0.5) ? 2 : 4;
    }
    if (!psn) continue;
    qp.psn_set = true;
    for (uint32_t h = 0; h < 2; ++h) {
      // PSNs side h's requests use: one per packet, a READ as many as its responses
      uint64_t n = 0;
      for (const WrPlan& w : qp.side[h].send) n += w.len == 0 ? 1 : (uint64_t(w.len) + p.mtu - 1) / p.mtu;
      // start 1..n PSNs below 2^24: the wrap falls somewhere in this side's traffic
      qp.psn[h] = static_cast<uint32_t>((1u << 24) - rng.uniform(1, std::max<uint64_t>(1, std::min<uint64_t>(n, 1u << 20))));
    }
  }
}

// Host-driven ERR (Knobs::host_err), from its own child stream. Host 1's sends on such a QP
// are dropped (its requests would be dropped by the QP in ERR and wait for ever); host 1's
// receives behind the ERR never complete, so its receive ring holds all of them.
void draw_host_err(TrafficPlan& p, const Knobs& k, const uvm::Rng& plan_rng) {
  if (k.host_err <= 0) return;
  uvm::Rng rng = plan_rng.child("host_err");
  for (QpPlan& qp : p.qps) {
    if (qp.next >= 0 || qp.prev >= 0 || qp.bad_side0 || qp.exhaust_side0 || qp.side[0].send.empty() ||
        !rng.bernoulli(k.host_err))
      continue;
    qp.host_err = true;
    qp.host_err_after = static_cast<uint32_t>(rng.uniform(0, qp.side[0].send.size()));
    qp.host_err_delay = static_cast<uint32_t>(rng.bernoulli(0.3) ? rng.uniform(0, 50) : rng.uniform(50, 3000));
    qp.side[1].send.clear();
    for (RecvPlan& r : qp.side[0].recv) r.late = false;
    while (qp.rq_depth < qp.side[1].recv.size()) qp.rq_depth *= 2;
  }
}

// QP resets (Knobs::qp_reset), from their own child stream: which connections are reset and how
// often. Each reset appends a plan QP for the connection's next incarnation, drawn afterwards
// like every other QP (but neither failing nor one-way, as the QPs it follows).
void draw_reset_chains(TrafficPlan& p, const Knobs& k, const uvm::Rng& plan_rng) {
  if (k.qp_reset <= 0 || k.max_qp_resets == 0) return;
  uvm::Rng rng = plan_rng.child("qp_reset");
  const size_t first = p.qps.size();
  for (size_t q = 0; q < first; ++q) {
    if (!rng.bernoulli(k.qp_reset)) continue;
    uint32_t n = 1;
    while (n < k.max_qp_resets && rng.bernoulli(k.qp_reset_again)) ++n;
    size_t cur = q;
    for (uint32_t i = 0; i < n; ++i) {
      const size_t nx = p.qps.size();
      p.qps.emplace_back();
      p.qps[cur].next = int32_t(nx);
      p.qps[nx].prev = int32_t(cur);
      p.qps[nx].incarnation = p.qps[cur].incarnation + 1;
      cur = nx;
    }
  }
}

// When and how each reset comes (Knobs::qp_reset), once the WRs are drawn: mostly once both
// sides have WRs posted, sometimes before either has; both ends' commands at once, one right
// after the other, or the second end up to 100 us later (its requests meanwhile meet an end
// already reset).
void draw_reset_points(TrafficPlan& p, const Knobs& k, const uvm::Rng& plan_rng) {
  if (k.qp_reset <= 0) return;
  uvm::Rng rng = plan_rng.child("qp_reset_points");
  for (QpPlan& qp : p.qps) {
    if (qp.next < 0) continue;
    for (uint32_t h = 0; h < 2; ++h) {
      const size_t n = qp.side[h].send.size();
      qp.reset_after[h] = n == 0 || rng.bernoulli(0.1) ? 0 : static_cast<uint32_t>(rng.uniform(1, n));
      qp.reset_how[h] = static_cast<ResetHow>(rng.weighted(k.reset_how_weight));
    }
    qp.reset_delay = static_cast<uint32_t>(rng.bernoulli(0.5) ? rng.uniform(0, 300) : rng.uniform(300, 3000));
    qp.reset_first = static_cast<uint8_t>(rng.uniform(0, 1));
    switch (rng.uniform(0, 2)) {
      case 0: qp.reset_gap = 0; break;
      case 1: qp.reset_gap = static_cast<uint32_t>(rng.uniform(1, 600)); break;
      default: qp.reset_gap = static_cast<uint32_t>(rng.uniform(600, 30000)); break;
    }
    // a QP reset by QP_MODIFY keeps its rings (every (sq_depth/2)-th WR signaled for them)
    QpPlan& nx = p.qps[size_t(qp.next)];
    if (qp.reset_how[0] == ResetHow::Modify || qp.reset_how[1] == ResetHow::Modify) {
      nx.sq_depth = qp.sq_depth;
      nx.rq_depth = qp.rq_depth;
      const uint32_t sig_every = std::max<uint32_t>(1, nx.sq_depth / 2);
      for (SidePlan& sp : nx.side)
        for (size_t i = 0; i < sp.send.size(); ++i)
          if ((i + 1) % sig_every == 0) sp.send[i].signaled = true;
    }
  }
}

}  // namespace

TrafficPlan make_traffic_plan(const Knobs& k, uvm::Rng& rng) {
  if (k.mtus.empty() || k.sq_depths.empty() || k.rq_depths.empty() || k.min_qps == 0 ||
      k.min_qps > k.max_qps || k.min_wrs > k.max_wrs)
    throw std::invalid_argument("make_traffic_plan: inconsistent knobs");
  TrafficPlan p;
  p.mtu = k.mtus[rng.uniform(0, k.mtus.size() - 1)];
  p.doorbell = static_cast<Doorbell>(rng.weighted(k.doorbell_weight));
  p.max_batch = std::max<uint32_t>(2, k.max_batch);
  p.full_rate = k.full_rate;
  const uint32_t nq = static_cast<uint32_t>(rng.uniform(k.min_qps, k.max_qps));
  p.qps.resize(nq);
  draw_reset_chains(p, k, rng);
  for (uint32_t h = 0; h < 2; ++h) {
    p.split[h] = rng.bernoulli(k.split_mrs);
    // sources: read by the peer's READs; destinations: written by the peer, local READ
    // targets and receive buffers. One extra right at random on each.
    p.src_access[h] = kAccessRemoteRead | (rng.bernoulli(0.5) ? kAccessLocalWrite : 0u);
    p.dst_access[h] = kAccessLocalWrite | kAccessRemoteWrite | (rng.bernoulli(0.5) ? kAccessRemoteRead : 0u);
    if (rng.bernoulli(k.iova_shift)) {
      // far above any physical address; page-aligned (page offsets of I/O virtual and physical
      // addresses agree, as with a real IOMMU) or not
      p.iova_delta[h] = rng.uniform(1ull << 40, 1ull << 62);
      if (rng.bernoulli(0.5)) p.iova_delta[h] &= ~uint64_t(kPage - 1);
    }
  }

  // Pass 1: operations, lengths, bad WRs, receive lengths.
  uint64_t max_src[2] = {0, 0};
  for (QpPlan& qp : p.qps) {
    qp.mtu = rng.bernoulli(k.per_qp_mtu) ? k.mtus[rng.uniform(0, k.mtus.size() - 1)] : p.mtu;
    qp.sq_depth = k.sq_depths[rng.uniform(0, k.sq_depths.size() - 1)];
    qp.rq_depth = k.rq_depths[rng.uniform(0, k.rq_depths.size() - 1)];
    // A QP that ends in error: its side 0 ends with a bad WR, or its last receive-consuming
    // message finds no receive (RNR). Such a QP carries traffic in one direction only: a QP in
    // ERR drops the requests that reach it, and without a retransmission timer their
    // requester would wait for ever. Its receives (spare ones on both sides, the ones side 0
    // consumes) are flushed or completed in error when it fails.
    // (a connection the hosts reset fails for no other reason and carries traffic both ways)
    const bool reset = qp.next >= 0 || qp.prev >= 0;
    qp.bad_side0 = rng.bernoulli(k.bad_wr) && !reset;
    qp.exhaust_side0 = !qp.bad_side0 && rng.bernoulli(k.rnr_exhaust) && !reset;
    const bool err_qp = qp.bad_side0 || qp.exhaust_side0;
    for (uint32_t h = 0; h < 2; ++h) {
      if (h == 1 && ((!rng.bernoulli(k.bidir) && !reset) || err_qp)) continue;
      const uint32_t n = static_cast<uint32_t>(rng.uniform(k.min_wrs, k.max_wrs));
      // Every (sq_depth/2)-th WR is signaled so unsignaled WRs retire and the ring never jams.
      const uint32_t sig_every = std::max<uint32_t>(1, qp.sq_depth / 2);
      for (uint32_t i = 0; i < n; ++i) {
        WrPlan w;
        w.op = static_cast<WrOpcode>(rng.weighted(k.op_weight));
        w.cls = static_cast<SizeClass>(rng.weighted(k.size_weight));
        w.len = draw_size(w.cls, qp.mtu, k, rng);
        if (p.total_payload + w.len > k.max_total_bytes) {
          w.cls = SizeClass::Small;
          w.len = draw_size(w.cls, qp.mtu, k, rng);
        }
        w.imm = rng.next_u32();
        w.signaled = i + 1 == n || (i + 1) % sig_every == 0 || !rng.bernoulli(k.unsignaled);
        p.total_payload += w.len;
        qp.side[h].send.push_back(w);
      }
      if (h == 0 && qp.bad_side0) {
        BadKind bad = static_cast<BadKind>(rng.weighted(k.bad_weight));
        if (bad == BadKind::MrRights && !p.split[1 - h]) bad = BadKind::RemoteKey;  // needs the peer's source MR
        // Requester-local errors leave the peer running: they may sit anywhere in the queue
        // (the WRs after them are flushed). Errors the responder finds end the queue.
        const bool local = bad == BadKind::LocalKey || bad == BadKind::LocalBounds || bad == BadKind::ForeignPdLocal;
        std::vector<WrPlan>& sends = qp.side[h].send;
        WrPlan& w = sends[local ? rng.uniform(0, sends.size() - 1) : sends.size() - 1];
        w.bad = bad;
        w.signaled = true;
        if (bad == BadKind::QpAccess) {
          // The peer QP lacks one remote right; this WR needs it, earlier WRs do not.
          const bool no_write = rng.bernoulli(0.5);
          w.op = no_write ? WrOpcode::Write : WrOpcode::Read;
          qp.access[1] = no_write ? kAccessRemoteRead : kAccessRemoteWrite;
          for (WrPlan& e : sends) {
            if (&e == &w) continue;
            if (no_write && (e.op == WrOpcode::Write || e.op == WrOpcode::WriteImm)) e.op = WrOpcode::Send;
            if (!no_write && e.op == WrOpcode::Read) e.op = WrOpcode::Write;
          }
        }
        if (bad == BadKind::ForeignPdRemote && w.op != WrOpcode::Read && w.op != WrOpcode::Write) w.op = WrOpcode::Write;
        if ((bad == BadKind::ForeignPdLocal || bad == BadKind::ForeignPdRemote) && w.len > kAlienBytes / 2) {
          w.len = static_cast<uint32_t>(rng.uniform(1, kAlienBytes / 2));
          w.cls = SizeClass::Small;
        }
        // a bad remote range needs a WRITE, WRITE_WITH_IMM or READ (a single-packet
        // WRITE_WITH_IMM consumes a receive on the peer, which completes in error)
        if ((w.bad == BadKind::RemoteKey || w.bad == BadKind::RemoteBounds || w.bad == BadKind::StaleKey) &&
            w.op != WrOpcode::Read && w.op != WrOpcode::Write && w.op != WrOpcode::WriteImm)
          w.op = WrOpcode::Write;
        if (w.bad == BadKind::MrRights) {
          // a WRITE into the peer's sources (whose MR has no REMOTE_WRITE), at most a page
          w.op = WrOpcode::Write;
          if (w.len > kPage) {
            w.len = static_cast<uint32_t>(rng.uniform(2, kPage));
            w.cls = classify_size(w.len, qp.mtu, k);
          }
        }
        if (w.bad == BadKind::RecvTooSmall && w.op != WrOpcode::Send && w.op != WrOpcode::SendImm)
          w.op = WrOpcode::Send;
        if (w.len < 2 && w.bad != BadKind::LocalKey && w.bad != BadKind::RemoteKey) {
          w.len = 64;
          w.cls = SizeClass::Small;
        }
      }
      for (const WrPlan& w : qp.side[h].send) {
        const uint32_t src_host = w.op == WrOpcode::Read ? 1 - h : h;
        max_src[src_host] = std::max<uint64_t>(max_src[src_host], w.len);
      }
    }
  }
  for (uint32_t h = 0; h < 2; ++h) p.src_bytes[h] = (max_src[h] + 2 * kPage + kPage - 1) / kPage * kPage;

  // Pass 2: offsets. Destination slots are laid out after src + gap.
  SlotAlloc dst[2];
  for (QpPlan& qp : p.qps) {
    bool exhaust = false;
    for (uint32_t h = 0; h < 2; ++h) {
      SidePlan& me = qp.side[h];
      SidePlan& peer = qp.side[1 - h];
      const uint64_t peer_dst_base = p.src_bytes[1 - h] + kAreaGap;
      const uint64_t my_dst_base = p.src_bytes[h] + kAreaGap;
      size_t recv_users = 0;
      for (const WrPlan& w : me.send) recv_users += consumes_recv(w.op);
      if (h == 0 && recv_users == 0) qp.exhaust_side0 = false;  // nothing to run out of
      const bool drop_last_recv = h == 0 && qp.exhaust_side0;
      size_t used = 0;
      std::vector<size_t> reads;  // this side's READs so far (their targets may be sent on)
      for (size_t wi = 0; wi < me.send.size(); ++wi) {
        WrPlan& w = me.send[wi];
        switch (w.op) {
          case WrOpcode::Write:
          case WrOpcode::WriteImm:
            w.local_off = src_offset(w.len, p.src_bytes[h], k.cross4k, rng);
            w.remote_off = peer_dst_base + dst[1 - h].take(w.len, k.cross4k, rng);
            break;
          case WrOpcode::Read:
            w.local_off = my_dst_base + dst[h].take(w.len, k.cross4k, rng);
            w.remote_off = src_offset(w.len, p.src_bytes[1 - h], k.cross4k, rng);
            break;
          default:
            w.local_off = src_offset(w.len, p.src_bytes[h], k.cross4k, rng);
            break;
        }
        if (w.op == WrOpcode::Read && w.bad == BadKind::None && w.len > 0) reads.push_back(wi);
        // Send on what an earlier READ of this QP fetched: only correct with the fence (the
        // WR must not read its source before the READ's data has landed).
        if (w.op != WrOpcode::Read && w.bad == BadKind::None && !reads.empty() && w.len > 0 &&
            rng.bernoulli(k.fence_reuse)) {
          const size_t ri = reads[rng.uniform(0, reads.size() - 1)];
          const WrPlan& r = me.send[ri];
          const uint64_t skip = rng.uniform(0, r.len - 1);
          p.total_payload -= w.len;
          w.len = static_cast<uint32_t>(std::min<uint64_t>(w.len, r.len - skip));
          p.total_payload += w.len;
          w.cls = classify_size(w.len, qp.mtu, k);
          w.local_off = r.local_off + skip;
          w.fence = true;
          w.reuse = static_cast<int32_t>(ri);
        }
        if (w.bad == BadKind::LocalBounds)
          w.local_off = 0;  // moved past the MR end once the area size is known
        if (w.bad == BadKind::RemoteBounds) w.remote_off = 0;
        // other-PD WRs address the other region (offsets into it)
        if (w.bad == BadKind::ForeignPdLocal) w.local_off = rng.uniform(0, kAlienBytes - w.len);
        if (w.bad == BadKind::ForeignPdRemote) w.remote_off = rng.uniform(0, kAlienBytes - w.len);
        if (w.bad == BadKind::MrRights) w.remote_off = rng.uniform(0, p.src_bytes[1 - h] - w.len);
        if (!consumes_recv(w.op)) continue;
        ++used;
        if (drop_last_recv && used == recv_users) {
          exhaust = true;
          continue;
        }
        RecvPlan r;
        if (w.op == WrOpcode::WriteImm) {
          r.len = static_cast<uint32_t>(rng.uniform(0, 64));
        } else if (w.bad == BadKind::RecvTooSmall) {
          r.len = static_cast<uint32_t>(rng.uniform(0, w.len - 1));
        } else {
          r.len = w.len + static_cast<uint32_t>(rng.bernoulli(0.5) ? 0 : rng.uniform(1, 64));
        }
        r.off = peer_dst_base + dst[1 - h].take(r.len, k.cross4k, rng);
        peer.recv.push_back(r);
      }
    }
    if (exhaust) qp.rnr_retry = 0;
  }
  // A few spare receives that no message consumes (they stay posted, or are flushed when the
  // QP fails). The peer of an RNR-exhausting side gets none: it must run out.
  for (QpPlan& qp : p.qps)
    for (uint32_t h = 0; h < 2; ++h) {
      const uint32_t spare = static_cast<uint32_t>(rng.uniform(0, 2));
      const bool err_qp = qp.bad_side0 || qp.exhaust_side0;
      if (h == 1 && qp.exhaust_side0) continue;
      for (uint32_t s = 0; s < spare && (!qp.side[h].recv.empty() || err_qp); ++s) {
        RecvPlan r;
        r.len = static_cast<uint32_t>(rng.uniform(0, 256));
        r.off = p.src_bytes[h] + kAreaGap + dst[h].take(r.len, k.cross4k, rng);
        // the last spare of a failing QP may be posted after the QP failed (then the NIC
        // flushes it when its doorbell arrives)
        r.late = err_qp && s + 1 == spare && rng.bernoulli(k.late_recv);
        qp.side[h].recv.push_back(r);
      }
    }
  // Receives that never complete (behind a QP's failure, on the side that stays up) hold
  // their ring slots for good: a failing QP's receive ring holds all its receives at once.
  for (QpPlan& qp : p.qps) {
    if (!qp.bad_side0 && !qp.exhaust_side0) continue;
    while (qp.rq_depth < std::max(qp.side[0].recv.size(), qp.side[1].recv.size())) qp.rq_depth *= 2;
  }
  // The MR ends after a margin, or (tight_end) exactly where the last slot ends, so that some
  // accesses end exactly at the MR's last byte.
  for (uint32_t h = 0; h < 2; ++h)
    p.area_bytes[h] = rng.bernoulli(k.tight_end) && dst[h].cursor > 0
                          ? p.src_bytes[h] + kAreaGap + dst[h].cursor
                          : (p.src_bytes[h] + kAreaGap + dst[h].cursor + 128 + 63) / 64 * 64;
  // Out-of-bounds WRs: one byte or half the range past the MR end.
  for (QpPlan& qp : p.qps)
    for (uint32_t h = 0; h < 2; ++h)
      for (WrPlan& w : qp.side[h].send) {
        const uint64_t over = rng.bernoulli(0.5) ? 1 : w.len / 2;
        if (w.bad == BadKind::LocalBounds) w.local_off = p.area_bytes[h] - w.len + over;
        if (w.bad == BadKind::RemoteBounds) w.remote_off = p.area_bytes[1 - h] - w.len + over;
      }
  draw_wraps(p, k, rng);
  draw_host_err(p, k, rng);
  draw_reset_points(p, k, rng);
  for (const QpPlan& qp : p.qps)
    for (uint32_t h = 0; h < 2; ++h) {
      p.send_wrs += qp.side[h].send.size();
      p.recv_wrs += qp.side[h].recv.size();
    }
  return p;
}

uint64_t send_wr_id(uint32_t q, size_t i) { return (uint64_t(q) << 32) | i; }
uint64_t recv_wr_id(uint32_t q, size_t i) { return (uint64_t(1) << 63) | (uint64_t(q) << 32) | i; }

SendWr make_send_wr(const TrafficPlan& p, const HostLayout (&hl)[2], uint32_t h, uint32_t q, size_t i) {
  const WrPlan& w = p.qps[q].side[h].send[i];
  SendWr s;
  s.wr_id = send_wr_id(q, i);
  s.opcode = w.op;
  const bool pd_l = w.bad == BadKind::ForeignPdLocal, pd_r = w.bad == BadKind::ForeignPdRemote;
  // the MR a range lies in: the destinations' when it starts past the sources (split MRs)
  auto key_at = [&](uint32_t host, uint64_t off) { return off >= p.src_bytes[host] ? hl[host].dst_key : hl[host].key; };
  s.laddr = (pd_l ? hl[h].alien : hl[h].iova) + w.local_off;
  s.length = w.len;
  s.lkey = w.bad == BadKind::LocalKey ? key_at(h, w.local_off) ^ kBogusKeyXor : pd_l ? hl[h].alien_key : key_at(h, w.local_off);
  if (w.op == WrOpcode::Write || w.op == WrOpcode::WriteImm || w.op == WrOpcode::Read) {
    const uint32_t peer = 1 - h;
    s.raddr = (pd_r ? hl[peer].alien : hl[peer].iova) + w.remote_off;
    s.rkey = w.bad == BadKind::RemoteKey ? key_at(peer, w.remote_off) ^ kBogusKeyXor
             : w.bad == BadKind::StaleKey ? hl[peer].stale_key
             : pd_r                       ? hl[peer].alien_key
                                          : key_at(peer, w.remote_off);
  }
  s.fence = w.fence;
  s.imm = (w.op == WrOpcode::WriteImm || w.op == WrOpcode::SendImm) ? w.imm : 0;
  s.signaled = w.signaled;
  return s;
}

RecvWr make_recv_wr(const TrafficPlan& p, const HostLayout (&hl)[2], uint32_t h, uint32_t q, size_t i) {
  const RecvPlan& r = p.qps[q].side[h].recv[i];
  RecvWr w;
  w.wr_id = recv_wr_id(q, i);
  w.addr = hl[h].iova + r.off;
  w.length = r.len;
  w.lkey = hl[h].dst_key;
  return w;
}

Workload make_workload(const TrafficPlan& p, const HostLayout (&hl)[2], const std::vector<uint8_t> (&init)[2],
                       const std::vector<uint8_t> (&alien_init)[2]) {
  Workload wl;
  wl.hosts.resize(2);
  for (uint32_t h = 0; h < 2; ++h) {
    HostSpec& hs = wl.hosts[h];
    if (init[h].size() != p.area_bytes[h]) throw std::invalid_argument("make_workload: init size");
    hs.buffers.push_back(Buffer{"host" + std::to_string(h) + ".area", hl[h].area, init[h]});
    MemoryRegion mr;
    mr.key = hl[h].key;
    mr.iova = hl[h].iova;
    mr.pa = hl[h].area;
    mr.length = p.area_bytes[h];
    mr.pd = hl[h].pd;
    mr.access = kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead;
    if (p.split[h]) {
      mr.length = p.src_bytes[h];
      mr.access = static_cast<uint8_t>(p.src_access[h]);
      MemoryRegion dm = mr;
      dm.key = hl[h].dst_key;
      dm.iova = hl[h].iova + p.src_bytes[h];
      dm.pa = hl[h].area + p.src_bytes[h];
      dm.length = p.area_bytes[h] - p.src_bytes[h];
      dm.access = static_cast<uint8_t>(p.dst_access[h]);
      hs.mrs.push_back(dm);
    }
    hs.mrs.push_back(mr);
    if (!alien_init[h].empty()) {
      hs.buffers.push_back(Buffer{"host" + std::to_string(h) + ".other_pd", hl[h].alien, alien_init[h]});
      MemoryRegion am;
      am.key = hl[h].alien_key;
      am.iova = am.pa = hl[h].alien;
      am.length = alien_init[h].size();
      am.pd = hl[h].alien_pd;
      am.access = kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead;
      hs.mrs.push_back(am);
    }
    for (uint32_t q = 0; q < p.qps.size(); ++q) {
      QpSpec qs;
      qs.qpn = hl[h].qpn[q];
      qs.pd = hl[h].pd;
      qs.access = p.qps[q].access[h];
      qs.peer_host = 1 - h;
      qs.peer_qpn = hl[1 - h].qpn[q];
      qs.rnr_retry = p.qps[q].rnr_retry;
      qs.retry_cnt = 7;  // ChipEnv connects every QP with retry_cnt 7 (no limit)
      qs.mtu = p.qps[q].mtu;
      qs.host_err = h == 0 && p.qps[q].host_err;
      qs.reset = p.qps[q].next >= 0;
      for (size_t i = 0; i < p.qps[q].side[h].send.size(); ++i) qs.send.push_back(make_send_wr(p, hl, h, q, i));
      for (size_t i = 0; i < p.qps[q].side[h].recv.size(); ++i) qs.recv.push_back(make_recv_wr(p, hl, h, q, i));
      hs.qps.push_back(std::move(qs));
    }
  }
  return wl;
}

}  // namespace srnic::verif::env
