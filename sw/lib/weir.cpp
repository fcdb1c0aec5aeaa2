// weir.cpp: Weir doorbell pacing (life-cycle monitor, active-QP monitor, AIAD rate control,
// credits, WQE slicing with CQE aggregation) on top of QueuePair::post_send and
// CompletionQueue::poll_cq.
//
// Decisions (the paper leaves them open) and their reasons:
//
// 1. Posting: Weir::post_send queues a copy of the WR in software and writes nothing to the NIC;
//    the WQE is written and its doorbell rung together (QueuePair::post_send) when its credit
//    comes. Writing WQEs early without a doorbell would let a NIC that prefetches (the `cached`
//    build reads the WQEs after a doorbell's) see a slot that is not yet meant to be read, and
//    the ring write costs nothing while the WR waits.
// 2. Order: one FIFO of WQEs in post order over all QPs. A WR's doorbell rings in the order the
//    application posted, so the WQEs at the NIC belong to the few QPs posted most recently
//    rather than to every QP at once; this is what keeps a per-QP WQE cache's working set small.
//    Consecutive WQEs of one QP whose credit has come share one doorbell (at most max_list).
//    If the head's SQ ring is full (slicing can need more slots than WRs), ringing stops until
//    completions free slots: head-of-line blocking, accepted for the simpler strict order.
//    Once a WQE's credit has come, the WQEs of the same QP queued after it ring with it up to
//    the next SQ index that is a multiple of ring_group (8), their credit taken in advance. A
//    WQE cache fills lines of 8 consecutive WQEs (srnic_wqe_cache); ringing one WQE at a time
//    made the NIC fetch a line whose other slots were not yet written, and miss on each of them
//    later (512 QPs: hit rate 87%, 48 Gb/s with single-WQE doorbells).
// 3. Clock: every time is in NIC core cycles. A CQE carries the NIC's cycle counter; the doorbell
//    time is the same counter, read with Device::read_timestamp() (two register reads, a PCIe
//    round trip each) every sync_every WQEs (1000, the paper's interval) and extrapolated in
//    between from Backend::now_ns() (simulated time in srnic-sim) at clock_mhz. Reading it per
//    doorbell would stall the host for microseconds each time. Never the wall clock.
// 4. Life cycle: every WQE is signaled; delay = CQE timestamp - doorbell time (48-bit counter,
//    difference taken modulo 2^48), filtered by an EWMA with W = 7/8 per CQE (Eq. 2). CQEs on an
//    RC QP arrive in WQE order, so each CQE is matched with the oldest rung WQE of its QP.
// 5. base_delay: the smallest delay seen since the Weir object was made: the life cycle of a
//    WQE that did not queue (scheduling, payload DMA, serialisation, the ACK's round trip). It
//    needs no per-NIC constant and adapts to the link; a fixed value (the paper's tunable) would
//    need calibrating for every clock, PCIe latency and message size.
// 6. alpha/beta: Eq. 3 and 4 with init_alpha 1.0, init_beta 0.5 and N = 64 QPs: the rate rises
//    while the filtered delay is below 2x base (ratio <= alpha), holds up to 2.5x and falls
//    above. 2x base keeps enough WQEs at the NIC to fill the wire (Little's law: rate x base
//    delay is the minimum), and the 0.5 gap keeps AIAD from toggling on every CQE. alpha grows
//    with every 64 active QPs because more QPs served round-robin lengthen a WQE's wait even
//    when the cache holds them all.
// 7. Active QPs: a QP is active while it has WQEs rung and not completed (the NIC-side
//    concurrency that loads the cache); WRs still waiting in Weir do not count, as the NIC has
//    not seen them. A bitmap of 64-bit words by QPN with a per-QP count of WQEs at the NIC.
// 8. Rate: starts at the line rate (the paper) and never exceeds it (ringing faster than the
//    wire drains only fills the cache); floor 1/64 of it; AIAD steps 1/256 of it per CQE, so
//    a full swing takes 256 CQEs, a few life cycles at 512-byte messages.
// 9. Credit clock: a WQE of L bytes (at least 64, one WQE's worth, so empty messages are not
//    free) moves the next credit time to max(next, now - burst) + L / rate. The burst (4 KiB at
//    the current rate) lets a host that polls in steps ring the WQEs whose credit fell between
//    two polls, without saving up unbounded credit while idle.
// 10. Slicing: RDMA WRITE and READ WRs longer than slice_bytes (4 KiB) are cut into 4 KiB WQEs
//    over the same buffers (offsets into the local and the remote buffer); SEND is never cut (the
//    receiver would consume one receive WQE per piece). Only the last piece of a WRITE with
//    immediate carries the immediate; Fence stays on the first, Solicited on the last. Pieces
//    before the last carry wr_id kSliceWrId so that nothing reading raw CQEs takes them for the
//    WR. The WR completes when its last piece does (byte_len summed, the first error's status).
// 11. What the application sees: completions of its signaled WRs and every error; the CQEs of
//    unsignaled WRs and of slices before the last are counted in hidden_cqes only.
#include "srnic/weir.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace srnic::sw {

namespace weir {

void Ewma::add(double sample) {
  value_ = empty_ ? sample : w_ * value_ + (1 - w_) * sample;
  empty_ = false;
}

uint32_t ActiveQps::add(uint32_t qpn, int64_t n) {
  if (qpn >= outstanding_.size()) {
    outstanding_.resize(qpn + 1, 0);
    bits_.resize(qpn / 64 + 1, 0);
  }
  uint32_t& o = outstanding_[qpn];
  const bool was = o != 0;
  const int64_t next = int64_t(o) + n;
  o = next > 0 ? uint32_t(next) : 0;
  const bool is = o != 0;
  const uint64_t bit = uint64_t(1) << (qpn % 64);
  if (is && !was) {
    bits_[qpn / 64] |= bit;
    ++count_;
  } else if (was && !is) {
    bits_[qpn / 64] &= ~bit;
    --count_;
  }
  return count_;
}

bool ActiveQps::active(uint32_t qpn) const {
  return qpn / 64 < bits_.size() && (bits_[qpn / 64] >> (qpn % 64) & 1);
}

Thresholds thresholds(const RateParams& p, uint32_t active) {
  const uint32_t n = std::max<uint32_t>(1, p.qps_per_step);
  const uint32_t steps = std::max<uint32_t>(1, (active + n - 1) / n);
  const double alpha = steps * p.init_alpha;
  return {alpha, alpha + p.init_alpha - p.init_beta};
}

RateControl::Step RateControl::update(double delay, double base_delay, uint32_t active) {
  if (base_delay <= 0) return Step::Hold;
  const Thresholds t = thresholds(p_, active);
  const double ratio = delay / base_delay - 1;
  if (ratio <= t.alpha) {
    rate_ = std::min(p_.line_rate, rate_ + p_.inc);
    return Step::Increase;
  }
  if (ratio >= t.beta) {
    rate_ = std::max(p_.min_rate, rate_ - p_.dec);
    return Step::Decrease;
  }
  return Step::Hold;
}

void CreditClock::spend(uint64_t now, uint64_t bytes, double rate) {
  next_ = std::max(next_, double(now) - burst_) + double(bytes) / rate;
}

std::vector<Slice> slice(WrOpcode op, uint32_t length, uint32_t slice_bytes) {
  const bool cuttable = op == WrOpcode::RdmaWrite || op == WrOpcode::RdmaWriteWithImm || op == WrOpcode::RdmaRead;
  if (!cuttable || slice_bytes == 0 || length <= slice_bytes) return {Slice{0, length, true}};
  std::vector<Slice> out;
  for (uint64_t off = 0; off < length; off += slice_bytes)
    out.push_back(Slice{off, uint32_t(std::min<uint64_t>(slice_bytes, length - off)), false});
  out.back().last = true;
  return out;
}

}  // namespace weir

namespace {

constexpr uint64_t kSliceWrId = ~uint64_t(0);
constexpr uint64_t kTsMask = (uint64_t(1) << 48) - 1;
constexpr uint64_t kMinWqeBytes = 64;

}  // namespace

// One application WR: its copy, and how its pieces have completed so far.
struct Weir::AppWr {
  SendWr wr;
  Sge sge;
  uint32_t pieces_left = 0;
  uint32_t byte_len = 0;
  WcStatus status = WcStatus::Success;
};

// A WQE at the NIC.
struct Weir::Rung {
  uint64_t seq;
  bool last;
  uint64_t t_doorbell;
};

struct Weir::QpQueue {
  QueuePair* qp = nullptr;
  std::deque<AppWr> apps;  // not yet completed, in post order
  uint64_t base_seq = 0;   // sequence number of apps.front()
  std::deque<Rung> rung;
};

Weir::Weir(Device& dev, const WeirConfig& cfg)
    : dev_(dev), cfg_(cfg), ewma_(cfg.ewma_weight), rc_([&] {
        weir::RateParams p;
        p.line_rate = cfg.line_rate_gbps * 1e9 / 8 / (cfg.clock_mhz * 1e6);
        p.min_rate = p.line_rate * cfg.min_fraction;
        p.inc = p.dec = p.line_rate * cfg.step_fraction;
        p.init_alpha = cfg.init_alpha;
        p.init_beta = cfg.init_beta;
        p.qps_per_step = cfg.qps_per_step;
        return p;
      }()),
      credit_(cfg.burst_bytes / (cfg.line_rate_gbps * 1e9 / 8 / (cfg.clock_mhz * 1e6))) {}

Weir::~Weir() = default;

uint64_t Weir::now() {
  const uint64_t ns = dev_.backend().now_ns();
  if (!synced_ || since_sync_ >= cfg_.sync_every) {
    ts_sync_ = dev_.read_timestamp() & kTsMask;
    ns_sync_ = dev_.backend().now_ns();
    synced_ = true;
    since_sync_ = 0;
    ++stats_.timestamp_syncs;
    return ts_sync_;
  }
  return ts_sync_ + uint64_t(double(ns - ns_sync_) * cfg_.clock_mhz / 1000.0);
}

Weir::QpQueue& Weir::queue_of(uint32_t qpn) {
  if (qpn >= qps_.size()) qps_.resize(qpn + 1, nullptr);
  if (!qps_[qpn]) {
    qp_store_.push_back(std::make_unique<QpQueue>());
    qps_[qpn] = qp_store_.back().get();
  }
  return *qps_[qpn];
}

uint32_t Weir::send_room(const QueuePair& qp) const {
  const size_t used = qp.qp_num() < qps_.size() && qps_[qp.qp_num()] ? qps_[qp.qp_num()]->apps.size() : 0;
  return used >= qp.sq_size() ? 0 : uint32_t(qp.sq_size() - used);
}

int Weir::post_send(QueuePair& qp, const SendWr* wr, const SendWr** bad_wr) {
  if (bad_wr) *bad_wr = nullptr;
  if (!wr) return 0;
  auto reject = [&](const SendWr* w, int err) {
    if (bad_wr) *bad_wr = w;
    return err;
  };
  if (qp.state() != QpState::Rts && qp.state() != QpState::Err) return reject(wr, EINVAL);
  const unsigned flag_mask = SendFlags::Fence | SendFlags::Signaled | SendFlags::Solicited;
  uint32_t count = 0;
  const uint32_t room = send_room(qp);
  for (const SendWr* w = wr; w; w = w->next) {
    if (uint8_t(w->opcode) > uint8_t(WrOpcode::RdmaRead) || w->num_sge != 1 || !w->sg_list ||
        w->sg_list->length > (1u << 31) || (w->send_flags & ~flag_mask))
      return reject(w, EINVAL);
    if (++count > room) return reject(w, ENOMEM);
  }
  QpQueue& qs = queue_of(qp.qp_num());
  qs.qp = &qp;
  for (const SendWr* w = wr; w; w = w->next) {
    AppWr a;
    a.wr = *w;
    a.sge = *w->sg_list;
    a.wr.next = nullptr;
    a.wr.sg_list = nullptr;
    const std::vector<weir::Slice> pieces = weir::slice(w->opcode, w->sg_list->length, cfg_.slice_bytes);
    a.pieces_left = uint32_t(pieces.size());
    const uint64_t seq = qs.base_seq + qs.apps.size();
    qs.apps.push_back(a);
    for (const weir::Slice& p : pieces) queue_.push_back(Pending{&qs, seq, p, false});
    stats_.slices += pieces.size() - 1;
    ++stats_.posted;
  }
  return 0;
}

void Weir::progress() {
  if (queue_.empty()) return;
  const uint64_t t = now();
  while (!queue_.empty()) {
    if (cfg_.pacing && !credit_.ready(t)) {
      queue_.front().waited = true;
      break;
    }
    QpQueue& qs = *queue_.front().qs;
    QueuePair& qp = *qs.qp;
    const uint32_t free_slots = qp.sq_size() - qp.sq_outstanding();
    if (free_slots == 0) break;
    // Consecutive WQEs of this QP whose credit has come, one doorbell.
    list_.clear();
    sges_.clear();
    const size_t most = std::min<size_t>({free_slots, cfg_.max_list, queue_.size()});
    list_.reserve(most);
    sges_.reserve(most);
    size_t k = 0;
    for (; k < most; ++k) {
      const Pending& p = queue_[k];
      // Past the first, a WQE rings without its credit while it completes a ring group: the
      // credit it takes is owed by the WQEs after it.
      const bool group_end = cfg_.ring_group <= 1 || (qp.sq_pi() + k) % cfg_.ring_group == 0;
      if (p.qs != &qs) break;
      if (k > 0 && cfg_.pacing && !credit_.ready(t) && group_end) {
        queue_[k].waited = true;
        break;
      }
      const AppWr& a = qs.apps[p.seq - qs.base_seq];
      SendWr w = a.wr;
      Sge s = a.sge;
      s.addr += p.piece.offset;
      s.length = p.piece.length;
      w.remote_addr += p.piece.offset;
      w.send_flags |= SendFlags::Signaled;
      if (!p.piece.last) {
        w.wr_id = kSliceWrId;
        w.send_flags &= ~unsigned(SendFlags::Solicited);
        if (w.opcode == WrOpcode::RdmaWriteWithImm) w.opcode = WrOpcode::RdmaWrite;
      }
      if (p.piece.offset) w.send_flags &= ~unsigned(SendFlags::Fence);
      list_.push_back(w);
      sges_.push_back(s);
      credit_.spend(t, std::max<uint64_t>(kMinWqeBytes, p.piece.length), rc_.rate());
      if (p.waited) ++stats_.deferred;
    }
    for (size_t j = 0; j < k; ++j) {
      list_[j].sg_list = &sges_[j];
      list_[j].next = j + 1 < k ? &list_[j + 1] : nullptr;
    }
    const SendWr* bad = nullptr;
    if (qp.post_send(list_.data(), &bad) != 0) break;  // checked at post time; leave them queued
    for (size_t j = 0; j < k; ++j) {
      qs.rung.push_back(Rung{queue_.front().seq, queue_.front().piece.last, t});
      queue_.pop_front();
    }
    stats_.max_active = std::max(stats_.max_active, active_.add(qp.qp_num(), int64_t(k)));
    stats_.wqes_rung += k;
    ++stats_.doorbells;
    since_sync_ += uint32_t(k);
  }
}

void Weir::on_cqe(const WorkCompletion& c, WorkCompletion* out, int& n) {
  QpQueue* qs = c.qp_num < qps_.size() ? qps_[c.qp_num] : nullptr;
  if (!qs || (uint8_t(c.opcode) & 0x80) || qs->rung.empty()) {
    out[n++] = c;  // not a WQE Weir rang (a receive, or another QP's)
    return;
  }
  const Rung r = qs->rung.front();
  qs->rung.pop_front();
  active_.add(c.qp_num, -1);
  const double delay = double((c.timestamp - r.t_doorbell) & kTsMask);
  ewma_.add(delay);
  if (base_delay_ <= 0 || delay < base_delay_) base_delay_ = std::max(1.0, delay);
  switch (rc_.update(ewma_.value(), base_delay_, active_.count())) {
    case weir::RateControl::Step::Increase: ++stats_.increases; break;
    case weir::RateControl::Step::Hold: ++stats_.holds; break;
    case weir::RateControl::Step::Decrease: ++stats_.decreases; break;
  }
  AppWr& a = qs->apps[r.seq - qs->base_seq];
  a.byte_len += c.byte_len;
  if (c.status != WcStatus::Success && a.status == WcStatus::Success) a.status = c.status;
  --a.pieces_left;
  if (!r.last) {
    ++stats_.hidden_cqes;
    return;
  }
  const bool signaled = (a.wr.send_flags & SendFlags::Signaled) != 0;
  if (signaled || a.status != WcStatus::Success) {
    WorkCompletion w = c;
    w.wr_id = a.wr.wr_id;
    w.byte_len = a.byte_len;
    w.status = a.status;
    out[n++] = w;
    ++stats_.completions;
  } else {
    ++stats_.hidden_cqes;
  }
  while (!qs->apps.empty() && qs->apps.front().pieces_left == 0) {
    qs->apps.pop_front();
    ++qs->base_seq;
  }
}

int Weir::poll_cq(CompletionQueue& cq, int num_entries, WorkCompletion* wc) {
  progress();
  int n = 0;
  WorkCompletion buf[64];
  while (n < num_entries) {
    const int want = std::min<int>(64, num_entries - n);
    const int got = cq.poll_cq(want, buf);
    for (int k = 0; k < got; ++k) on_cqe(buf[k], wc, n);
    if (got < want) break;
  }
  progress();
  return n;
}

double Weir::rate_gbps() const { return rc_.rate() * cfg_.clock_mhz * 1e6 * 8 / 1e9; }
double Weir::ewma_delay_ns() const { return ewma_.value() * 1000.0 / cfg_.clock_mhz; }
double Weir::base_delay_ns() const { return base_delay_ * 1000.0 / cfg_.clock_mhz; }

}  // namespace srnic::sw
