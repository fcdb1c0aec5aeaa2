// Full-chip environment: NIC setup through the host library, posting, polling, monitors,
// live scoreboard, coverage. See chip_env.hpp.
#include "srnic/env/chip_env.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "sim_backend.hpp"
#include "srnic/abi.hpp"
#include "verilated.h"
#ifndef SRNIC_SIM_TOP_HEADER
#define SRNIC_SIM_TOP_HEADER "Vsrnic_core.h"
#endif
#include SRNIC_SIM_TOP_HEADER
#include "srnic/agents/verilated_bind.hpp"
#include "srnic/roce/psn.hpp"
#include "srnic/sim/eth_mac.hpp"
#ifdef SRNIC_ENV_COVERAGE
#include "srnic/uvm/coverage_db.hpp"
#include "verilated_cov.h"
#endif

namespace srnic::verif::env {

namespace {

constexpr uint64_t kMac0 = 0x020000000001ull;
constexpr uint32_t kIp0 = 0x0A000001u;
// A late receive goes this long after the last send WR of its QP's failing side (about 67 us:
// the failure has long been reported by then).
constexpr uint64_t kLateRecvDelay = 20000;
// QP resets (Knobs::qp_reset): a frame a NIC was handing its MAC when a reset returned has been
// taken this many cycles later; and a frame may wait this long in the receiving NIC's RX buffer
// before the NIC takes it (a frame of a reset connection can arrive that long after the link
// delivered it, on top of the link's delay, a reordered frame's hold-back and a duplicate's gap).
constexpr uint64_t kResetSettle = 1000;
constexpr double kRxBufferNs = 30000;

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

sw::Mtu mtu_enum(uint32_t mtu) {
  switch (mtu) {
    case 256: return sw::Mtu::Mtu256;
    case 512: return sw::Mtu::Mtu512;
    case 1024: return sw::Mtu::Mtu1024;
    case 2048: return sw::Mtu::Mtu2048;
    default: return sw::Mtu::Mtu4096;
  }
}

bool consumes_recv(WrOpcode op) {
  return op == WrOpcode::Send || op == WrOpcode::SendImm || op == WrOpcode::WriteImm;
}

// The scheduler checker's turn rate (docs/decisions.md 90): the slowest rate at which one
// scheduling turn's burst leaves this World's NIC. The link: its rate, half of it for requests
// (the packetizer alternates requester and responder packets), less the pause storm's share,
// less 82 bytes per packet (preamble, gap, Ethernet, FCS, IPv4, UDP, BTH, ICRC) at the plan's
// smallest path MTU. The payload reads: one per packet, through half of the read tags (READ
// responses read theirs through the same tags), each a read latency with its largest jitter.
double sched_turn_gbps(const sim::WorldConfig& wc, const TrafficPlan& p) {
  uint32_t mtu = p.mtu;
  for (const QpPlan& q : p.qps) mtu = std::min(mtu, q.mtu);
  const double duty = wc.link.pause_storm_period_ns > 0 ? wc.link.pause_storm_duty : 0.0;
  const double link = wc.eth.rate_gbps * 0.5 * (1.0 - duty) * mtu / (mtu + 82.0);
  const double reads = 0.5 * wc.pcie.max_outstanding_reads * mtu * 8.0 /
                       (wc.pcie.read_latency_ns + wc.pcie.read_jitter_max_ns);
  return std::min(link, reads);
}

uint32_t pow2_at_least(uint64_t n, uint32_t lo) {
  uint32_t v = lo;
  while (v < n) v <<= 1;
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Posting

bool PostDriver::drive(PostItem& item) {
  HostAgent& me = env_.host(h_);
  const TrafficPlan& p = env_.plan();
  sw::QueuePair& qp = *me.qps[item.q];
  const auto& hl = env_.layout();
  wr_.resize(item.n);
  rwr_.resize(item.n);
  sge_.resize(item.n);
  if (item.recv) {
    const size_t first = me.next_recv[item.q];
    for (uint32_t k = 0; k < item.n; ++k) {
      const RecvWr v = make_recv_wr(p, hl, h_, item.q, first + k);
      rwr_[k] = sw::RecvWr{};
      rwr_[k].wr_id = v.wr_id;
      rwr_[k].sg_list = &sge_[k];
      rwr_[k].num_sge = 1;
      rwr_[k].next = k + 1 < item.n ? &rwr_[k + 1] : nullptr;
      sge_[k] = sw::Sge{v.addr, v.length, v.lkey};
    }
    const sw::RecvWr* bad = nullptr;
    if (int err = qp.post_recv(rwr_.data(), &bad))
      error("POST", "host " + std::to_string(h_) + " QP " + hex(qp.qp_num()) + ": post_recv of " +
                        std::to_string(item.n) + " failed, errno " + std::to_string(err));
    me.next_recv[item.q] += item.n;
    // the doorbell is the last MMIO write post_recv made
    me.recv_db[item.q].emplace_back(me.next_recv[item.q], env_.world().pcie(h_).mmio_writes_posted());
  } else {
    const size_t first = me.next_send[item.q];
    for (uint32_t k = 0; k < item.n; ++k) {
      const SendWr v = make_send_wr(p, hl, h_, item.q, first + k);
      sw::SendWr& w = wr_[k];
      w = sw::SendWr{};
      w.wr_id = v.wr_id;
      w.sg_list = &sge_[k];
      w.num_sge = 1;
      w.opcode = static_cast<sw::WrOpcode>(v.opcode);  // both follow ibv_wr_opcode
      w.send_flags = (v.signaled ? sw::SendFlags::Signaled : 0u) | (v.fence ? sw::SendFlags::Fence : 0u);
      w.imm_data = v.imm;
      w.remote_addr = v.raddr;
      w.rkey = v.rkey;
      w.next = k + 1 < item.n ? &wr_[k + 1] : nullptr;
      sge_[k] = sw::Sge{v.laddr, v.length, v.lkey};
      env_.coverage().sample_wr(p.qps[item.q].side[h_].send[first + k], p.qps[item.q].mtu, p.qps.size());
    }
    const sw::SendWr* bad = nullptr;
    if (int err = qp.post_send(wr_.data(), &bad))
      error("POST", "host " + std::to_string(h_) + " QP " + hex(qp.qp_num()) + ": post_send of " +
                        std::to_string(item.n) + " failed, errno " + std::to_string(err));
    me.next_send[item.q] += item.n;
    if (me.next_send[item.q] == p.qps[item.q].side[h_].send.size()) me.sends_done_at[item.q] = env_.cycle();
  }
  env_.coverage().sample_doorbell(item.recv, item.n, p.doorbell, env_.note_post());
  return true;
}

bool TrafficSequence::send_ready(uint32_t q) const { return send_run(q, 1) > 0; }

// How many of QP q's next send WRs can go now (ring room, receive credits), up to max_n.
uint32_t TrafficSequence::send_run(uint32_t q, uint32_t max_n) const {
  const HostAgent& me = env_.host(h_);
  const HostAgent& peer = env_.host(1 - h_);
  const TrafficPlan& p = env_.plan();
  const std::vector<WrPlan>& sends = p.qps[q].side[h_].send;
  const sw::QueuePair& qp = *me.qps[q];
  const uint64_t room = qp.sq_size() - qp.sq_outstanding();
  // Receive WR index each send consumes on the peer: count of earlier consumers.
  size_t recv_idx = consumers_before_[q][me.next_send[q]];
  const size_t peer_recvs = p.qps[q].side[1 - h_].recv.size();
  uint32_t n = 0;
  for (size_t i = me.next_send[q]; i < sends.size() && n < max_n && n < room; ++i) {
    if (consumes_recv(sends[i].op)) {
      // The receive must be posted first, and its doorbell taken by the peer NIC (a doorbell
      // write can wait on AXI-Lite behind held ones); a send beyond the peer's receives (RNR
      // on purpose) waits until every receive of the peer is posted.
      const size_t need = recv_idx < peer_recvs ? recv_idx + 1 : peer_recvs;
      if (peer.recv_visible[q] < need) break;
      ++recv_idx;
    }
    ++n;
  }
  return n;
}

TrafficSequence::TrafficSequence(ChipEnv& env, uint32_t host) : Sequence("traffic"), env_(env), h_(host) {
  // Per QP, the number of receive-consuming sends before each send (prefix counts).
  for (const QpPlan& qp : env.plan().qps) {
    std::vector<uint32_t> pre(1, 0);
    for (const WrPlan& w : qp.side[host].send) pre.push_back(pre.back() + (consumes_recv(w.op) ? 1 : 0));
    consumers_before_.push_back(std::move(pre));
  }
}

void HostAgent::update_recv_visible(uint64_t acked) {
  if (acked == recv_acked_seen) return;  // called every idle cycle: scan only when a write was acknowledged
  recv_acked_seen = acked;
  for (size_t q = 0; q < recv_db.size(); ++q)
    while (!recv_db[q].empty() && recv_db[q].front().second <= acked) {
      recv_visible[q] = recv_db[q].front().first;
      recv_db[q].pop_front();
    }
}

uvm::Next TrafficSequence::next(PostItem& item) {
  HostAgent& me = env_.host(h_);
  env_.host(1 - h_).update_recv_visible(env_.world().pcie(1 - h_).mmio_writes_acked());
  const TrafficPlan& p = env_.plan();
  const uint32_t nq = static_cast<uint32_t>(p.qps.size());
  if (env_.cycle() < wait_until_) return uvm::Next::Wait;
  bool all_posted = true;
  const uint32_t batch = p.doorbell == Doorbell::OneAtATime ? 1 : p.max_batch;
  // Receives: refill any QP's RQ that has room.
  using End = HostAgent::End;
  for (uint32_t k = 0; k < nq; ++k) {
    const uint32_t q = (cursor_ + k) % nq;
    const size_t left = p.qps[q].side[h_].recv.size() - me.next_recv[q];
    if (!left || me.end[q] == End::Reset) continue;  // (a reset QP's WRs not posted by then never are)
    all_posted = false;
    if (me.end[q] != End::Live) continue;
    const sw::QueuePair& qp = *me.qps[q];
    const uint64_t room = qp.rq_size() - qp.rq_outstanding();
    if (!room) continue;
    // A late receive (the last of its side) waits until side 0 of its QP posted its last WR
    // long enough ago for the QP to have failed; the ones before it go without it.
    const std::vector<RecvPlan>& recvs = p.qps[q].side[h_].recv;
    const bool late_last = recvs.back().late;
    uint64_t ready_n = left;
    if (late_last && left == 1) {
      const uint64_t done = env_.host(0).sends_done_at[q];
      if (done == ~0ull || env_.cycle() < done + kLateRecvDelay) continue;
    } else if (late_last) {
      ready_n = left - 1;
    }
    item.recv = true;
    item.q = q;
    item.n = static_cast<uint32_t>(std::min<uint64_t>({ready_n, room, rng().uniform(1, batch)}));
    return uvm::Next::Item;
  }
  // Sends (ready_ is reused: this runs every idle cycle).
  std::vector<uint32_t>& ready = ready_;
  ready.clear();
  for (uint32_t q = 0; q < nq; ++q) {
    if (me.next_send[q] < p.qps[q].side[h_].send.size() && me.end[q] != End::Reset) {
      all_posted = false;
      if (me.end[q] == End::Live && send_ready(q)) ready.push_back(q);
    }
  }
  if (all_posted) return uvm::Next::Done;
  if (ready.empty()) return uvm::Next::Wait;
  uint32_t q = ready[rng().uniform(0, ready.size() - 1)];
  // Gaps between doorbells are per host; with many QPs they shrink so that each QP still sees
  // its doorbells at about the same pace.
  const uint64_t scale = std::max<uint64_t>(1, nq / 8);
  switch (p.doorbell) {
    case Doorbell::OneAtATime:
      item.n = 1;
      wait_until_ = env_.cycle() + rng().uniform(0, 300 / scale);
      break;
    case Doorbell::Batched: {
      if (want_ && me.end[want_q_] != End::Live) want_ = 0;  // the QP waited for was reset
      const uint32_t want = want_ ? want_ : static_cast<uint32_t>(rng().uniform(1, p.max_batch));
      if (p.whole_batches) {  // wait until the whole batch fits (ring_wrap: batches across the ring end)
        if (want_) q = want_q_;
        item.n = send_run(q, want);
        const uint64_t left = p.qps[q].side[h_].send.size() - me.next_send[q];
        // (unsignaled WRs or missing receives may keep it from fitting: after 3000 cycles,
        // what fits goes)
        if (!want_) want_since_ = env_.cycle();
        if (item.n < std::min<uint64_t>({want, left, me.qps[q]->sq_size()}) &&
            (item.n == 0 || env_.cycle() < want_since_ + 3000)) {
          want_ = want;
          want_q_ = q;
          wait_until_ = env_.cycle() + 16;
          return uvm::Next::Wait;
        }
        want_ = 0;
      } else {
        item.n = send_run(q, want);
      }
      wait_until_ = env_.cycle() + rng().uniform(0, 1500 / scale);
      break;
    }
    default:  // ManyQps: bursts that ring many QPs in consecutive cycles, then a pause
      if (burst_left_ == 0) burst_left_ = static_cast<uint32_t>(rng().uniform(4, 64));
      q = ready[cursor_++ % ready.size()];
      item.n = send_run(q, static_cast<uint32_t>(rng().uniform(1, 4)));
      if (--burst_left_ == 0) wait_until_ = env_.cycle() + rng().uniform(500, 4000) / scale;
      break;
  }
  if (p.full_rate) wait_until_ = std::min(wait_until_, env_.cycle());
  item.recv = false;
  item.q = q;
  return uvm::Next::Item;
}

// ---------------------------------------------------------------------------------------------
// Host agent

HostAgent::HostAgent(uvm::Component& parent, std::string name, ChipEnv& env, uint32_t host)
    : Component(parent, std::move(name)),
      seqr(*this, "seqr"),
      drv(*this, "drv", env, host),
      axi(*this, "axi", [] {
        agents::Axi4Config c;
        c.max_beats = 64;          // 4 KB bursts at most (the PCIe model's limit too)
        c.require_aligned = true;  // the core starts every burst on a beat boundary
        c.cover_read_ids = 4;      // SQ WQE, payload, RQ WQE, completion re-fetch
        c.cover_write_ids = 1;
        return c;
      }()),
      axil(*this, "axil", [] {
        // cg_axil regions: the register map's blocks (docs/abi.md).
        agents::AxiLiteConfig c;
        c.regions = {{"ident", 0x000, 0x01F},   {"config", 0x020, 0x0FF},    {"doorbell", 0x100, 0x1FF},
                     {"command", 0x200, 0x3FF}, {"counters", 0x400, 0x7FF}};
        return c;
      }()),
      tx(*this, "tx"),
      rx(*this, "rx"),
      env_(env),
      h_(host) {}

HostAgent::~HostAgent() = default;

void HostAgent::connect() { drv.connect_sequencer(seqr); }

void HostAgent::tick() {
  if (!dev || env_.cycle() % env_.config().poll_cycles) return;
  for (int pass = 0; pass < 2; ++pass) {
    sw::CompletionQueue& cq = pass ? *rcq : *scq;
    const QueueKind kind = pass ? QueueKind::Recv : QueueKind::Send;
    for (;;) {
      const int n = cq.poll_cq(32, wc_);
      for (int k = 0; k < n; ++k) {
        ++completions_seen;
        completions.write(CompletionItem{h_, kind, wc_[k]});
      }
      if (n < 32) break;
    }
  }
}

void HostAgent::check() {
  if (!dev) return;
  for (const auto& qp : qps)
    if (qp && qp->stale_completions())
      error("STALE_CQE", "QP " + hex(qp->qp_num()) + ": " + std::to_string(qp->stale_completions()) +
                             " completion(s) named no outstanding WQE");
}

// ---------------------------------------------------------------------------------------------
// Protocol monitor

ProtocolMonitor::ProtocolMonitor(uvm::Component& parent, std::string name, uint32_t mtu, bool allow_retransmit)
    : Component(parent, std::move(name)),
      from_host0([this](const agents::AxisFrame& f) { on_frame(0, f); }),
      from_host1([this](const agents::AxisFrame& f) { on_frame(1, f); }),
      checker_([mtu, allow_retransmit] {
        roce::CheckerConfig c;
        c.mtu = mtu;
        c.allow_retransmit = allow_retransmit;
        c.keep_violations = 64;
        return c;
      }()) {}

void ProtocolMonitor::on_frame(uint32_t host, const agents::AxisFrame& f) {
  checker_.on_frame(f.bytes.data(), f.bytes.size());
  // srnic's own rule on top of the protocol: a requester asks for an ACK at least every 64
  // packets of a QP (AckReq on the last packet of a message and whenever PSN % 64 == 63), so a
  // responder's ACKs keep up with long messages.
  const std::vector<uint8_t>& b = f.bytes;
  if (b.size() >= 14 + 20 + 8 + 12 && b[12] == 0x08 && b[13] == 0x00 && (b[14] & 0x0F) == 5 && b[23] == 17 &&
      b[36] == 0x12 && b[37] == 0xB7) {
    const uint8_t* bth = b.data() + 42;
    const uint8_t op = bth[0];
    if (op <= 0x0C) {  // RC requests
      const uint32_t dqpn = (uint32_t(bth[5]) << 16) | (uint32_t(bth[6]) << 8) | bth[7];
      const bool ackreq = (bth[8] & 0x80) != 0;
      const uint32_t psn = (uint32_t(bth[9]) << 16) | (uint32_t(bth[10]) << 8) | bth[11];
      AckReqRun& r = since_ackreq_[(uint64_t(host) << 32) | dqpn];
      if (r.seen && !roce::psn_gt(psn, r.last)) r.n = 0;  // a go-back-N resend starts a new run
      r.seen = true;
      r.last = psn;
      uint32_t& n = r.n;
      n = ackreq ? 0 : n + 1;
      if (n == 64)
        error("ACKREQ_GAP", "host " + std::to_string(host) + " QP " + hex(dqpn) +
                                ": 64 request packets in a row without AckReq (last PSN " +
                                hex(psn) + ")");
    }
  }
  while (reported_ < checker_.violations().size()) {
    const roce::Violation& v = checker_.violations()[reported_++];
    error("PROTO", "host " + std::to_string(host) + " frame " + std::to_string(v.frame) + ": " + v.kind +
                       ": " + v.detail);
  }
}

void ProtocolMonitor::disconnect_pair(uint32_t ip_a, uint32_t qpn_a, uint32_t ip_b, uint32_t qpn_b) {
  checker_.disconnect_ipv4(ip_a, qpn_a, ip_b, qpn_b);
  since_ackreq_.erase(qpn_b);                     // host 0's requests to qpn_b
  since_ackreq_.erase((uint64_t(1) << 32) | qpn_a);  // host 1's to qpn_a
}

void ProtocolMonitor::report() {
  std::ostringstream os;
  checker_.print_summary(os, 0);
  info("PROTO_SUMMARY", os.str(), uvm::verbosity::kLow);
}

// ---------------------------------------------------------------------------------------------
// Scoreboard

TrafficScoreboard::TrafficScoreboard(uvm::Component& parent, std::string name, ChipEnv& env)
    : Component(parent, std::move(name)), env_(env) {}

void TrafficScoreboard::set_prediction(std::unique_ptr<Prediction> p) {
  pred_ = std::move(p);
  sb_ = std::make_unique<Scoreboard>(*pred_);
  for (const ExpectedQueue& q : pred_->queues) {
    if (q.relaxed) {
      ++relaxed_queues_;
      // (wait for them like for exact queues: a lost request of a failing WR, resent after an
      // ACK timeout, completes long after the quiet time)
      if (q.must_complete > 0 && !sb_->settled(q.host, q.qpn, q.kind)) {
        must_complete_[{q.host, q.qpn, q.kind}] = false;
        ++relaxed_pending_;
      }
      continue;
    }
    exact_[{q.host, q.qpn, q.kind}] = {0, q.completions.size()};
    exact_pending_ += q.completions.size();
  }
  for (const std::string& n : pred_->notes) info("MODEL", n, uvm::verbosity::kHigh);
}

void TrafficScoreboard::on_completion(const CompletionItem& c) {
  last_cycle_ = env_.cycle();
  // The plan QP the WR belongs to (its wr_id names it, send_wr_id / recv_wr_id) and the QPN the
  // model knows it by (HostLayout::qpn; the NIC's QPN of a later incarnation differs).
  const size_t q = static_cast<size_t>((c.wc.wr_id >> 32) & 0x7FFFFFFF);
  const HostAgent& a = env_.host(c.host);
  uint32_t qpn = c.wc.qp_num;
  if (q < a.nic_qpn.size()) {
    // A reset discards every WR outstanding (IBA: RESET empties the work queues without
    // completions); the library consumes the CQEs of the old incarnation the NIC had written
    // before the reset returned (decisions 109, 115). So no WR posted before the reset may
    // complete after it, whenever the NIC wrote its CQE.
    if (a.reset_at[q]) {
      if (++reset_cqes_ <= 8)
        error("RESET_CQE", "host " + std::to_string(c.host) + " QP " + hex(c.wc.qp_num) + " polled a completion " +
                               "{wr_id " + hex(c.wc.wr_id) + ", " + sw::to_string(c.wc.status) +
                               "} (CQE timestamp " + std::to_string(c.wc.timestamp) +
                               ") of a WR posted before the host reset the QP (the reset returned at cycle " +
                               std::to_string(a.reset_at[q]) + "): a reset completes nothing it discards");
      return;
    }
    if (c.wc.qp_num == a.nic_qpn[q]) qpn = env_.layout()[c.host].qpn[q];
  }
  Completion x;
  x.wr_id = c.wc.wr_id;
  x.status = static_cast<WcStatus>(c.wc.status);
  x.opcode = static_cast<WcOpcode>(c.wc.opcode);
  x.byte_len = c.wc.byte_len;
  x.imm = c.wc.imm_data;
  x.wc_flags = c.wc.wc_flags;
  x.qpn = qpn;
  const uint64_t before = sb_->mismatches();
  sb_->on_completion(c.host, c.kind, x);
  if (sb_->mismatches() != before)
    error("SB_COMPLETION", before == 0 ? sb_->first_mismatch()
                                       : "host " + std::to_string(c.host) + " QP " + hex(c.wc.qp_num) +
                                             " wr_id " + hex(c.wc.wr_id) + ": completion mismatch");
  auto it = exact_.find({c.host, qpn, c.kind});
  if (it != exact_.end() && it->second.first < it->second.second) {
    ++it->second.first;
    --exact_pending_;
  }
  auto r = must_complete_.find({c.host, qpn, c.kind});
  if (r != must_complete_.end() && !r->second && sb_->settled(c.host, qpn, c.kind)) {
    r->second = true;
    --relaxed_pending_;
  }
}

void TrafficScoreboard::on_dma_write(uint32_t host, const agents::Axi4WriteTxn& t) {
  if (!pred_) return;
  const BufferImage* img = pred_->buffer(host, 0);
  const HostAgent& ha = env_.host(host);
  const uint64_t lo = img->pa, hi = img->pa + img->bytes.size();
  const uint64_t base = t.addr & ~uint64_t(agents::kAxiDataBytes - 1);  // data[k] is byte base + k
  const uint64_t end = base + t.data.size();
  bool reported = false;
  for (uint64_t a = base; a < end; ++a) {
    const size_t k = static_cast<size_t>(a - base);
    if (!t.strb[k]) continue;
    if (a >= lo && a < hi) {
      const size_t i = static_cast<size_t>(a - lo);
      ++dma_checked_;
      // (a byte of a relaxed stream's WR is checked at the end, once its WR is seen to succeed:
      // an earlier writer's bytes may legitimately pass through it first)
      if (img->determined[i] != kByteDetermined || img->bytes[i] == t.data[k] || reported) continue;
      reported = true;
      ++data_errors_;
      if (data_errors_ > 8) continue;
      const int32_t w = img->writer[i];
      error("SB_DATA", "host " + std::to_string(host) + " DMA write at " + hex(a) + " (area+" + hex(i) +
                           ") byte " + hex(t.data[k]) + ", predicted " + hex(img->bytes[i]) +
                           (w >= 0 ? "; it belongs to " + pred_->describe_op(w)
                                   : "; no operation should write it (gap or source)"));
      continue;
    }
    bool cq = (a >= ha.scq->base() && a < ha.scq->base() + uint64_t(ha.scq->size()) * 32) ||
              (a >= ha.rcq->base() && a < ha.rcq->base() + uint64_t(ha.rcq->size()) * 32);
    for (const auto& [elo, ehi] : env_.extra_dma[host]) cq = cq || (a >= elo && a < ehi);
    if (!cq && !reported) {
      reported = true;
      error("DMA_STRAY", "host " + std::to_string(host) + " DMA write at " + hex(a) +
                             " outside the data area and the CQ rings (burst at " + hex(t.addr) + ")");
    }
  }
}

void TrafficScoreboard::check() {
  if (!sb_) return;
  for (uint32_t h = 0; h < 2; ++h)
    for (size_t b = 0; const BufferImage* img = pred_->buffer(h, b); ++b) {
      std::vector<uint8_t> got(img->bytes.size());
      env_.world().memory(h).read(img->pa, got.data(), got.size());
      const uint64_t before = sb_->mismatches();
      sb_->check_buffer(h, b, got.data(), got.size());
      if (sb_->mismatches() != before) error("SB_MEMORY", sb_->last_mismatch());
    }
  size_t listed = 0;
  for (const auto& [key, cnt] : exact_) {
    if (cnt.first >= cnt.second || ++listed > 8) continue;
    const auto& [h, qpn, kind] = key;
    const auto& qpns = env_.layout()[h].qpn;
    const size_t q = static_cast<size_t>(std::find(qpns.begin(), qpns.end(), qpn) - qpns.begin());
    const HostAgent& a = env_.host(h);
    const size_t posted = q < qpns.size() ? (kind == QueueKind::Send ? a.next_send[q] : a.next_recv[q]) : 0;
    const size_t planned = q < qpns.size() ? (kind == QueueKind::Send ? env_.plan().qps[q].side[h].send.size()
                                                                      : env_.plan().qps[q].side[h].recv.size())
                                           : 0;
    error("SB_PENDING", "host " + std::to_string(h) + " QP " + hex(qpn) + (kind == QueueKind::Send ? " send" : " recv") +
                            " queue: " + std::to_string(cnt.first) + " of " + std::to_string(cnt.second) +
                            " completions arrived; " + std::to_string(posted) + " of " + std::to_string(planned) +
                            " WRs posted");
  }
  const uint64_t before = sb_->mismatches();
  sb_->finish();
  // (the last of finish()'s reports, an earlier mismatch being reported already)
  if (const uint64_t n = sb_->mismatches() - before)
    error("SB_MISSING", sb_->last_mismatch() + (n > 1 ? " (and " + std::to_string(n - 1) + " more)" : ""));
}

void TrafficScoreboard::report() {
  if (!sb_) return;
  info("SB_SUMMARY", sb_->summary() + ", DMA bytes checked live " + std::to_string(dma_checked_),
       uvm::verbosity::kLow);
}

// ---------------------------------------------------------------------------------------------
// Coverage

EnvCoverage::EnvCoverage(uvm::Component& parent, std::string name)
    : Component(parent, std::move(name)),
      cg_wr("cg_wr", this),
      cg_cqe("cg_cqe", this),
      cg_rx("cg_rx", this),
      cg_doorbell("cg_doorbell", this) {
  auto& op = cg_wr.coverpoint("opcode");
  op.bin("write", 0).bin("write_imm", 1).bin("send", 2).bin("send_imm", 3).bin("read", 4);
  auto& sz = cg_wr.coverpoint("size");
  for (int c = 0; c < int(SizeClass::kCount); ++c) sz.bin(to_string(SizeClass(c)), c);
  auto& mtu = cg_wr.coverpoint("mtu");
  mtu.bin("256", 256).bin("512", 512).bin("1024", 1024).bin("2048", 2048).bin("4096", 4096);
  auto& qps = cg_wr.coverpoint("qps");
  qps.bin("1", 1).range("2-8", 2, 8).range("9-64", 9, 64).range("65-512", 65, 512).range("513+", 513, 1 << 20);
  auto& bad = cg_wr.coverpoint("bad");
  for (int b = 0; b < int(BadKind::kCount); ++b) bad.bin(to_string(BadKind(b)), b);
  cg_wr.cross("opcode_x_size", {&op, &sz});
  cg_wr.cross("opcode_x_mtu", {&op, &mtu});
  cg_wr.cross("opcode_x_qps", {&op, &qps});
  cg_wr.cross("size_x_mtu", {&sz, &mtu});

  auto& kind = cg_cqe.coverpoint("queue");
  kind.bin("send", 0).bin("recv", 1);
  auto& wop = cg_cqe.coverpoint("opcode");
  wop.bin("send", 0).bin("rdma_write", 1).bin("rdma_read", 2).bin("recv", 128).bin("recv_rdma_imm", 129);
  auto& st = cg_cqe.coverpoint("status");
  st.bin("success", 0).bin("loc_prot_err", 4).bin("wr_flush_err", 5).bin("rem_inv_req_err", 9)
      .bin("rem_access_err", 10).bin("rnr_retry_exc_err", 13).default_bin("other");
  cg_cqe.cross("queue_x_status", {&kind, &st}).ignore_if([](const std::vector<std::string>& b) {
    // Receives complete with SUCCESS, REM_INV_REQ_ERR (message longer than the buffer),
    // REM_ACCESS_ERR (WRITE_WITH_IMM with a bad rkey) or WR_FLUSH_ERR; the local-protection and
    // RNR errors are the requester's.
    return b[0] == "recv" && (b[1] == "rnr_retry_exc_err" || b[1] == "loc_prot_err");
  });

  auto& rx = cg_rx.coverpoint("event");
  rx.bin("icrc_drop", abi::CNT_RX_DROP_ICRC).bin("malformed_drop", abi::CNT_RX_DROP_MALFORMED)
      .bin("unknown_qp_drop", abi::CNT_RX_DROP_QP).bin("nak_sent", abi::CNT_TX_NAK)
      .bin("nak_received", abi::CNT_RX_NAK).bin("access_err", abi::CNT_RX_ACCESS_ERR)
      .bin("bad_doorbell", abi::CNT_DB_BAD).bin("ack_sent", abi::CNT_TX_ACK).default_bin("other");

  auto& dk = cg_doorbell.coverpoint("queue");
  dk.bin("send", 0).bin("recv", 1);
  auto& dn = cg_doorbell.coverpoint("wrs");
  dn.bin("1", 1).range("2-4", 2, 4).range("5-16", 5, 16).range("17+", 17, 1 << 20);
  auto& dp = cg_doorbell.coverpoint("pattern");
  for (int d = 0; d < int(Doorbell::kCount); ++d) dp.bin(to_string(Doorbell(d)), d);
  auto& dc = cg_doorbell.coverpoint("same_cycle_posts");
  dc.bin("1", 1).range("2+", 2, 1 << 20);
  cg_doorbell.cross("queue_x_wrs", {&dk, &dn});
  cg_doorbell.cross("pattern_x_wrs", {&dp, &dn}).ignore_if([](const std::vector<std::string>& b) {
    // one WR per doorbell; bursts over many QPs post 1..4 WRs per QP
    return (b[0] == "one-at-a-time" && b[1] != "1") || (b[0] == "many-qps" && (b[1] == "5-16" || b[1] == "17+"));
  });
}

void EnvCoverage::sample_wr(const WrPlan& w, uint32_t mtu, size_t qps) {
  cg_wr.sample({int64_t(w.op), int64_t(w.cls), int64_t(mtu), int64_t(qps), int64_t(w.bad)});
}

void EnvCoverage::sample_cqe(const CompletionItem& c) {
  cg_cqe.sample({c.kind == QueueKind::Recv ? 1 : 0, int64_t(c.wc.opcode), int64_t(c.wc.status)});
}

void EnvCoverage::sample_rx(const std::vector<uint32_t>& counters) {
  for (size_t i = 0; i < counters.size(); ++i)
    if (counters[i]) cg_rx.sample({int64_t(i)});
}

void EnvCoverage::sample_doorbell(bool recv, uint32_t n, Doorbell pattern, uint32_t posts_this_cycle) {
  cg_doorbell.sample({recv ? 1 : 0, int64_t(n), int64_t(pattern), int64_t(posts_this_cycle)});
}

void EnvCoverage::report() {
  for (uvm::Covergroup* g : {&cg_wr, &cg_cqe, &cg_rx, &cg_doorbell}) {
    char b[128];
    std::snprintf(b, sizeof b, "%s: %.1f%% (%llu samples)", g->name().c_str(), g->coverage(),
                  static_cast<unsigned long long>(g->samples()));
    info("COVERAGE", b, uvm::verbosity::kLow);
  }
}

// ---------------------------------------------------------------------------------------------
// Env

ChipEnv::ChipEnv(uvm::Component& parent, std::string name, const TrafficPlan& plan, const EnvConfig& cfg)
    : Component(parent, std::move(name)),
      plan_(plan),
      cfg_(cfg),
      proto_(create<ProtocolMonitor>("proto", plan.mtu, cfg.lossy)),
      sb_(*this, "sb", *this),
      cov_(*this, "cov"),
      dut_cov_(*this, "dut_cov"),
      sched_(*this, "sched", cfg.sched),
      completion_sub_([this](const CompletionItem& c) {
        sb_.on_completion(c);
        cov_.sample_cqe(c);
      }),
      dma_sub0_([this](const agents::Axi4WriteTxn& t) { sb_.on_dma_write(0, t); }),
      dma_sub1_([this](const agents::Axi4WriteTxn& t) { sb_.on_dma_write(1, t); }),
      tx_sub0_([this](const agents::AxisFrame& f) { on_tx_frame(0, f); }),
      tx_sub1_([this](const agents::AxisFrame& f) { on_tx_frame(1, f); }),
      rx_sub0_([this](const agents::AxisFrame& f) { on_rx_frame(0, f); }),
      rx_sub1_([this](const agents::AxisFrame& f) { on_rx_frame(1, f); }) {
  for (uint32_t h = 0; h < 2; ++h) {
    hosts_.push_back(&create<HostAgent>("host" + std::to_string(h), *this, h));
    // The RX stream has no tready; injected test frames may be runts.
    hosts_[h]->rx.config().cover_stalls = false;
  }
}

ChipEnv::~ChipEnv() {
  for (HostAgent* h : hosts_) {  // host-library objects before the World they talk to
    h->qps.clear();
    h->mr.reset();
    h->dst_mr.reset();
    h->alien_mr.reset();
    h->alien_pd.reset();
    h->scq.reset();
    h->rcq.reset();
    h->pd.reset();
    h->dev.reset();
    h->be.reset();
  }
}

void ChipEnv::build() {
  sim::WorldConfig wc;
  wc.hosts = 2;
  wc.pcie.read_latency_ns = cfg_.pcie_latency_ns;
  uint32_t max_mtu = plan_.mtu;
  for (const auto& q : plan_.qps) max_mtu = std::max(max_mtu, q.mtu);
  lossless_cable_ns_ = sim::lossless_cable_ns(abi::RX_BUF_BEATS, abi::RX_XOFF_BEATS, max_mtu + 78, 100.0,
                                              1000.0 / wc.clock_mhz);
  if (cfg_.cable_random) {
    uvm::Rng cr = ctx().stream(path() + ".cable");
    cfg_.link_delay_ns = double(cr.uniform(0, uint64_t(lossless_cable_ns_)));
    char b[120];
    std::snprintf(b, sizeof b, "cable %.0f ns each way (the pause headroom covers %.0f ns at MTU %u)",
                  cfg_.link_delay_ns, lossless_cable_ns_, max_mtu);
    info("CABLE", b);
  }
  wc.link.delay_ns = cfg_.link_delay_ns;
  if (cfg_.pcie_random || cfg_.pause_storm) {
    uvm::Rng ir = ctx().stream(path() + ".impair");
    std::string what;
    if (cfg_.pcie_random) {
      wc.pcie.read_latency_ns = double(ir.uniform(500, 3000));
      wc.pcie.read_jitter_min_ns = 0;
      wc.pcie.read_jitter_max_ns = double(ir.uniform(0, 1000));
      wc.pcie.write_latency_ns = double(ir.uniform(200, 1500));
      wc.pcie.max_posted_bytes = 1024u << ir.uniform(1, 4);      // 2..16 KiB of write credit
      wc.pcie.max_outstanding_reads = 4u << ir.uniform(0, 4);    // 4..64 read tags
      wc.pcie.aw_queue_depth = 2u << ir.uniform(0, 3);
      wc.pcie.mmio_read_latency_ns = double(ir.uniform(600, 2000));
      char b[200];
      std::snprintf(b, sizeof b, "PCIe read latency %.0f ns + jitter up to %.0f ns, write latency %.0f ns, "
                    "%u B posted credit, %u read tags", wc.pcie.read_latency_ns, wc.pcie.read_jitter_max_ns,
                    wc.pcie.write_latency_ns, wc.pcie.max_posted_bytes, wc.pcie.max_outstanding_reads);
      what += b;
    }
    if (cfg_.pause_storm) {
      wc.link.pause_storm_period_ns = double(ir.uniform(1000, 8000));
      wc.link.pause_storm_duty = double(ir.uniform(20, 60)) / 100.0;
      if (cfg_.pause_period_ns > 0) wc.link.pause_storm_period_ns = cfg_.pause_period_ns;
      if (cfg_.pause_duty > 0) wc.link.pause_storm_duty = cfg_.pause_duty;
      char b[120];
      std::snprintf(b, sizeof b, "%spause storm %.0f%% of every %.0f ns", what.empty() ? "" : "; ",
                    100 * wc.link.pause_storm_duty, wc.link.pause_storm_period_ns);
      what += b;
    }
    info("IMPAIR", what);
  }
  if (cfg_.lossy) draw_lossy(wc.link);
  if (cfg_.tx_window < 0 && cfg_.window_random) {
    // a quarter keep the default; the rest from no cap to windows of a few packets
    static const int64_t kWindows[] = {0, 1, 2, 4, 8, 16, 32, 64, 256};
    uvm::Rng wr = ctx().stream(path() + ".window");
    if (wr.uniform(0, 3) != 0) cfg_.tx_window = kWindows[wr.uniform(0, sizeof kWindows / sizeof kWindows[0] - 1)];
  }
  if (cfg_.tx_window >= 0)
    info("TX_WINDOW", cfg_.tx_window ? "in-flight cap " + std::to_string(cfg_.tx_window) + " packets per QP"
                                     : std::string("no in-flight cap"));
  wc.seed = ctx().stream(path() + ".world").next_u64();
  wc.pcap = ctx().plusarg("pcap");
  wc.trace = ctx().plusarg("waves");
  if (ctx().has_plusarg("waves_from_us")) wc.trace_from_ns = 1000.0 * std::stod(ctx().plusarg("waves_from_us"));
  if (ctx().has_plusarg("waves_to_us")) wc.trace_to_ns = 1000.0 * std::stod(ctx().plusarg("waves_to_us"));
  wc.count_rtl_errors = true;
  if (!ctx().has_plusarg("sched_turn_gbps")) cfg_.sched.turn_gbps = sched_turn_gbps(wc, plan_);
  sched_.set_config(cfg_.sched);
  char b[160];
  std::snprintf(b, sizeof b, "scheduler wait bound %.1f us + %.2f us per busy QP (a %u-byte turn at %.1f Gb/s)",
                cfg_.sched.wait_base_ns / 1000, cfg_.sched.sched_burst * 8 / cfg_.sched.turn_gbps / 1000,
                cfg_.sched.sched_burst, cfg_.sched.turn_gbps);
  info("SCHED_BOUND", b, uvm::verbosity::kMedium);
  double held = 0;  // the longest a frame stays on the link beyond its delay (lossy: drawn)
  for (const sim::Impairments& im : wc.link.impair)
    held = std::max({held, im.reorder > 0 ? im.reorder_delay_ns : 0.0, im.dup > 0 ? im.dup_gap_ns : 0.0});
  // (1 us: a 9600-byte frame's time on the wire)
  stale_cycles_ = static_cast<uint64_t>((wc.link.delay_ns + held + 1000 + kRxBufferNs) * wc.clock_mhz / 1000);
  rx_window_cycles_ = static_cast<uint64_t>(kRxBufferNs * wc.clock_mhz / 1000);
  world_ = std::make_unique<sim::World>(wc);
  world_->set_observer([this](uint64_t c) { observe(c); });
  if (cfg_.lossy)
    world_->link(0).set_drop_filter([this](int from, const sim::Frame& f) { return lose(from, f); });
}

// +lossy: per direction, the loss, reorder and duplication probabilities (drawn unless given).
void ChipEnv::draw_lossy(sim::LinkConfig& link) {
  uvm::Rng ir = ctx().stream(path() + ".lossy");
  loss_rng_ = std::make_unique<uvm::Rng>(ctx().stream(path() + ".loss"));
  const auto pick = [&ir](double given, uint64_t lo_ppm, uint64_t hi_ppm) {
    const double drawn = double(ir.uniform(lo_ppm, hi_ppm)) / 1e6;  // drawn anyway: same stream either way
    return given >= 0 ? given : drawn;
  };
  std::string what;
  for (int d = 0; d < 2; ++d) {
    sim::Impairments& im = link.impair[size_t(d)];
    loss_[d] = pick(cfg_.loss, 1000, 30000);
    im.reorder = pick(cfg_.reorder, 0, 10000);
    im.reorder_delay_ns = double(ir.uniform(200, 3000));
    im.dup = pick(cfg_.dup, 0, 10000);
    im.dup_gap_ns = double(ir.uniform(0, 500));
    char b[200];
    std::snprintf(b, sizeof b, "%shost %d -> host %d: loss %.3f%%, reorder %.3f%% (held back %.0f ns), dup %.3f%% "
                  "(copy %.0f ns later)", d ? "; " : "", d, 1 - d, 100 * loss_[d], 100 * im.reorder,
                  im.reorder_delay_ns, 100 * im.dup, im.dup_gap_ns);
    what += b;
  }
  char b[80];
  std::snprintf(b, sizeof b, "; QP timeout %u (%.1f us), retry_cnt 7", cfg_.qp_timeout,
                4.096 * double(1ull << cfg_.qp_timeout));
  info("IMPAIR", what + b);
}

// The lossy link's random loss (a drop filter rather than Impairments::loss so that fatal NAKs
// can be spared, see EnvConfig::lossy).
bool ChipEnv::lose(int from, const sim::Frame& f) {
  const bool drawn = loss_rng_->bernoulli(loss_[from & 1]);   // drawn for every frame: same stream either way
  const std::vector<uint8_t>& b = f.bytes;
  // EnvConfig::require_resend: host 0's third request frame is lost on purpose, so that every
  // such run loses a request and must resend it (a run whose draws lose none would pass unseen)
  const bool roce = b.size() >= 14 + 20 + 8 + 12 && b[12] == 0x08 && b[13] == 0x00 && b[23] == 17 &&
                    b[36] == 0x12 && b[37] == 0xB7;
  if (cfg_.require_resend && from == 0 && !forced_lost_ && roce && b[42] <= 0x0C && ++requests_seen_ == 3) {
    forced_lost_ = true;
    forced_qpn_ = (uint32_t(b[47]) << 16) | (uint32_t(b[48]) << 8) | b[49];
    ++lost_[0];
    return true;
  }
  if (!drawn) return false;
  // ACK frame (Ethernet + IPv4 + UDP + BTH opcode 0x11), AETH syndrome 011xxxxx with NAK code 1..3
  const bool ack = b.size() >= 14 + 20 + 8 + 12 + 4 && b[12] == 0x08 && b[13] == 0x00 && (b[14] & 0x0F) == 5 &&
                   b[23] == 17 && b[36] == 0x12 && b[37] == 0xB7 && b[42] == 0x11;
  const uint8_t syn = ack ? b[54] : 0;
  const bool fatal_nak = ack && (syn >> 5) == 3 && (syn & 0x1F) >= 1 && (syn & 0x1F) <= 3;
  if (!fatal_nak) ++lost_[from & 1];
  return !fatal_nak;
}

// Some QP of the plan fails on purpose (a bad WR, a receive exhausted, moved to ERR by the host).
bool ChipEnv::plan_fails_qp() const {
  for (const auto& q : plan_.qps)
    if (q.bad_side0 || q.exhaust_side0 || q.host_err) return true;
  return false;
}

uint32_t ChipEnv::note_post() {
  burst_posts_ = cycle() - last_post_cycle_ < 16 && burst_posts_ ? burst_posts_ + 1 : 1;
  last_post_cycle_ = cycle();
  return burst_posts_;
}

void ChipEnv::connect() {
  hosts_[0]->tx.ap.connect(proto_.from_host0);
  hosts_[1]->tx.ap.connect(proto_.from_host1);
  for (uint32_t h = 0; h < 2; ++h) {
    hosts_[h]->completions.connect(completion_sub_);
    hosts_[h]->axi.write_ap.connect(h ? dma_sub1_ : dma_sub0_);
    // functional coverage of what the NICs did (DutCoverage)
    hosts_[h]->tx.ap.connect(dut_cov_.tx(h));
    hosts_[h]->rx.ap.connect(dut_cov_.rx(h));
    hosts_[h]->axi.read_ap.connect(dut_cov_.dma_read(h));
    hosts_[h]->axi.write_ap.connect(dut_cov_.dma_write(h));
    hosts_[h]->axil.ap.connect(dut_cov_.csr(h));
    // scheduler invariants from the same monitors (SchedChecker)
    hosts_[h]->tx.ap.connect(sched_.tx(h));
    hosts_[h]->rx.ap.connect(sched_.rx(h));
    hosts_[h]->axi.read_ap.connect(sched_.dma_read(h));
    hosts_[h]->axi.write_ap.connect(sched_.dma_write(h));
    hosts_[h]->axil.ap.connect(sched_.csr(h));
    // frames of reset QPs (Knobs::qp_reset)
    hosts_[h]->tx.ap.connect(h ? tx_sub1_ : tx_sub0_);
    hosts_[h]->rx.ap.connect(h ? rx_sub1_ : rx_sub0_);
  }
}

// A failed RTL assertion (debug build) or $error has printed its own line
// "[<ps>] %Error: <file>:<line>: Assertion failed in <scope>: <message>"; the env turns it
// into an ERROR report so the run fails, and the test goes on to its normal end.
void ChipEnv::check_rtl_errors() {
  const int n = world_->rtl_errors();
  if (n == rtl_errors_) return;
  error("SVA", std::to_string(n - rtl_errors_) + " RTL assertion failure(s) before cycle " +
                   std::to_string(world_->cycle()) + " (the %Error line above names the assertion), " +
                   std::to_string(n) + " in total");
  rtl_errors_ = n;
}

void ChipEnv::observe(uint64_t) {
  check_rtl_errors();
  for (uint32_t h = 0; h < 2; ++h) {
    const sim::Top& t = world_->top(h);
    HostAgent& a = *hosts_[h];
    agents::bind_axi4(t, axi_sig_);
    a.axi.sample(axi_sig_);
    agents::bind_axil(t, axil_sig_);
    a.axil.sample(axil_sig_);
    agents::bind_axis_tx(t, tx_sig_);
    a.tx.sample(tx_sig_);
    agents::bind_axis_rx(t, rx_sig_);
    a.rx.sample(rx_sig_);
  }
  // Steps outside the run loop (host-library calls waiting on MMIO reads, run_cycles) advance
  // the context's cycle too, so every monitor and report shares one time base.
  if (!in_edge_) ctx().advance_cycles(1);
}

void ChipEnv::step() {
  in_edge_ = true;  // the Phaser counts this cycle itself
  world_->step();
  in_edge_ = false;
}

void ChipEnv::run_cycles(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) world_->step();
}

void ChipEnv::inject_frame(uint32_t to, std::vector<uint8_t> bytes) {
  sim::Frame f;
  f.bytes = std::move(bytes);
  f.t_sent_ns = world_->now_ns();
  world_->link(0).send(1 - to, std::move(f));
}

void ChipEnv::setup_nics() {
  const uint32_t nq = static_cast<uint32_t>(plan_.qps.size());
  for (uint32_t h = 0; h < 2; ++h) {
    HostAgent& a = *hosts_[h];
    a.be = std::make_unique<sim::SimBackend>(*world_, h);
    a.dev = std::make_unique<sw::Device>(*a.be);
    sw::Device& dev = *a.dev;
    // (a connection replaced by a new QP holds a second QPN while it is reset)
    uint32_t need = 0;
    for (const QpPlan& q : plan_.qps) need += q.prev < 0 ? 1 + (q.next >= 0) : 0;
    if (need + dev.caps().first_qpn > dev.caps().max_qp)
      fatal("SETUP", "plan needs " + std::to_string(need) + " QPs, the NIC has " + std::to_string(dev.caps().max_qp));
    dev.set_mac(kMac0 + h);
    dev.set_ipv4(kIp0 + h);
    if (cfg_.tx_window >= 0) dev.set_tx_window(static_cast<uint32_t>(cfg_.tx_window));
    a.pd = dev.alloc_pd();
    uint64_t sq_total = 0, rq_total = 0;
    for (const QpPlan& q : plan_.qps) {
      sq_total += q.sq_depth;
      rq_total += q.rq_depth;
    }
    a.scq = dev.create_cq(std::min<uint32_t>(pow2_at_least(sq_total, 2), dev.caps().max_cqe));
    a.rcq = dev.create_cq(std::min<uint32_t>(pow2_at_least(rq_total, 2), dev.caps().max_cqe));
    // Data area: random initial contents, one MR over it.
    // Start at a random 64-byte offset in a page (the allocation covers it).
    const uint64_t area = a.be->dma_alloc(plan_.area_bytes[h] + 4096, 4096) + 64 * rng().uniform(0, 63);
    std::vector<uint8_t> init(plan_.area_bytes[h]);
    uvm::Rng fill = ctx().stream(path() + ".fill" + std::to_string(h));
    for (size_t i = 0; i < init.size(); i += 8) {
      const uint64_t v = fill.next_u64();
      for (size_t b = 0; b < 8 && i + b < init.size(); ++b) init[i + b] = uint8_t(v >> (8 * b));
    }
    world_->memory(h).write(area, init.data(), init.size());
    // A key that was valid once: an MR registered and deregistered again before the real ones
    // (its index is reused with a new tag).
    layout_[h].stale_key = dev.reg_mr(*a.pd, area, 64, sw::Access::LocalWrite)->lkey();
    const uint64_t iova = area + plan_.iova_delta[h];
    const unsigned all = sw::Access::LocalWrite | sw::Access::RemoteWrite | sw::Access::RemoteRead;
    if (plan_.split[h]) {
      const uint64_t sb = plan_.src_bytes[h];
      a.mr = dev.reg_mr_phys(*a.pd, iova, area, sb, plan_.src_access[h]);  // kAccess* bits equal sw::Access
      a.dst_mr = dev.reg_mr_phys(*a.pd, iova + sb, area + sb, plan_.area_bytes[h] - sb, plan_.dst_access[h]);
    } else {
      a.mr = dev.reg_mr_phys(*a.pd, iova, area, plan_.area_bytes[h], all);
    }
    layout_[h].area = area;
    layout_[h].iova = iova;
    layout_[h].key = a.mr->lkey();
    layout_[h].dst_key = a.dst_mr ? a.dst_mr->lkey() : a.mr->lkey();
    layout_[h].pd = a.pd->handle();
    // A small region registered in a second protection domain: no QP may use its key.
    a.alien_pd = dev.alloc_pd();
    const uint64_t alien = a.be->dma_alloc(kAlienBytes, 4096);
    std::vector<uint8_t> alien_init(kAlienBytes);
    for (size_t i = 0; i < alien_init.size(); i += 8) {
      const uint64_t v = fill.next_u64();
      for (size_t b = 0; b < 8; ++b) alien_init[i + b] = uint8_t(v >> (8 * b));
    }
    world_->memory(h).write(alien, alien_init.data(), alien_init.size());
    a.alien_mr = dev.reg_mr(*a.alien_pd, alien, kAlienBytes,
                            sw::Access::LocalWrite | sw::Access::RemoteWrite | sw::Access::RemoteRead);
    layout_[h].alien = alien;
    layout_[h].alien_key = a.alien_mr->lkey();
    layout_[h].alien_pd = a.alien_pd->handle();
    (h ? alien1_ : alien0_) = std::move(alien_init);
    // the QPs' RESET commands back to back, CMD_STATUS read once (decision 94)
    sw::CommandBatch batch(dev);
    for (uint32_t q = 0; q < nq; ++q) {
      const QpPlan& qp = plan_.qps[q];
      if (qp.prev < 0) {
        a.qps.push_back(create_end(h, q));
        layout_[h].qpn.push_back(a.qps.back()->qp_num());
        a.nic_qpn.push_back(a.qps.back()->qp_num());
      } else {
        // a later incarnation of a reset connection: its QP comes with its predecessor's reset
        uint32_t first = q;
        while (plan_.qps[first].prev >= 0) first = static_cast<uint32_t>(plan_.qps[first].prev);
        a.qps.emplace_back();
        layout_[h].qpn.push_back(incarnation_qpn(layout_[h].qpn[first], qp.incarnation));
        a.nic_qpn.push_back(0);
      }
      // (new PSNs for every incarnation, from the seed)
      const uint32_t psn = static_cast<uint32_t>(rng().next_u64() & 0xFFFFFF);
      a.sq_psn.push_back(qp.psn_set ? qp.psn[h] : psn);  // psn_wrap knob
    }
    batch.finish();
    a.end.assign(nq, HostAgent::End::Waiting);
    a.reset_at.assign(nq, 0);
    a.next_send.assign(nq, 0);
    a.next_recv.assign(nq, 0);
    a.recv_visible.assign(nq, 0);
    a.recv_db.assign(nq, {});
    a.sends_done_at.assign(nq, ~0ull);
    (h ? init1_ : init0_) = std::move(init);
  }
}

std::unique_ptr<sw::QueuePair> ChipEnv::create_end(uint32_t h, uint32_t q) {
  HostAgent& a = *hosts_[h];
  sw::QpInitAttr ia;
  ia.send_cq = a.scq.get();
  ia.recv_cq = a.rcq.get();
  ia.cap.max_send_wr = plan_.qps[q].sq_depth;
  ia.cap.max_recv_wr = plan_.qps[q].rq_depth;
  return a.dev->create_qp(*a.pd, ia);
}

void ChipEnv::connect_qp(sw::QueuePair& qp, uint32_t h, uint32_t peer_qpn, uint32_t sq_psn, uint32_t rq_psn,
                         uint32_t mtu, unsigned access, uint8_t rnr_retry, uint8_t timeout) {
  sw::QpAttr a;
  a.qp_state = sw::QpState::Init;
  a.qp_access_flags = access;
  qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::PkeyIndex | sw::QpAttrMask::Port |
                   sw::QpAttrMask::AccessFlags);
  a.qp_state = sw::QpState::Rtr;
  a.path_mtu = mtu_enum(mtu);
  a.dest_qp_num = peer_qpn;
  a.rq_psn = rq_psn;
  a.ah_attr.dmac = kMac0 + (1 - h);
  a.ah_attr.dip = kIp0 + (1 - h);
  a.min_rnr_timer = 1;
  a.max_dest_rd_atomic = 16;
  qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Av | sw::QpAttrMask::PathMtu | sw::QpAttrMask::DestQpn |
                   sw::QpAttrMask::RqPsn | sw::QpAttrMask::MaxDestRdAtomic | sw::QpAttrMask::MinRnrTimer);
  a.qp_state = sw::QpState::Rts;
  a.sq_psn = sq_psn;
  a.timeout = timeout;
  a.retry_cnt = 7;
  a.rnr_retry = rnr_retry;
  a.max_rd_atomic = 16;
  qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Timeout | sw::QpAttrMask::RetryCnt |
                   sw::QpAttrMask::RnrRetry | sw::QpAttrMask::SqPsn | sw::QpAttrMask::MaxQpRdAtomic);
}

void ChipEnv::connect_qps() {
  // Both NICs take their QP_MODIFY commands back to back (CMD_STATUS read once at the end,
  // decision 94); the monitors apply them when that read shows them accepted.
  sw::CommandBatch batch0(*hosts_[0]->dev), batch1(*hosts_[1]->dev);
  for (uint32_t h = 0; h < 2; ++h) {
    HostAgent& me = *hosts_[h];
    HostAgent& peer = *hosts_[1 - h];
    // the protocol checker learns each QP's path MTU (requests and responses to host h)
    // (later incarnations of reset connections are connected when their predecessor is reset)
    for (uint32_t q = 0; q < plan_.qps.size(); ++q)
      if (plan_.qps[q].mtu != plan_.mtu && plan_.qps[q].prev < 0)
        proto_.set_flow_mtu(roce::flow_mtu_key(kIp0 + h, me.qps[q]->qp_num()), plan_.qps[q].mtu);
    for (uint32_t q = 0; q < plan_.qps.size(); ++q)
      if (plan_.qps[q].prev < 0)
        connect_qp(*me.qps[q], h, peer.qps[q]->qp_num(), me.sq_psn[q], peer.sq_psn[q], plan_.qps[q].mtu,
                   plan_.qps[q].access[h],  // kAccess* bits equal sw::Access
                   plan_.qps[q].rnr_retry, cfg_.qp_timeout);
  }
  batch0.finish();
  batch1.finish();
  for (uint32_t q = 0; q < plan_.qps.size(); ++q) {
    if (plan_.qps[q].prev >= 0) continue;
    proto_.connect_pair(kIp0, hosts_[0]->qps[q]->qp_num(), kIp0 + 1, hosts_[1]->qps[q]->qp_num());
    for (uint32_t h = 0; h < 2; ++h) {
      hosts_[h]->end[q] = HostAgent::End::Live;
      ++watch_[h].live_dest[hosts_[1 - h]->nic_qpn[q]];
    }
    if (plan_.qps[q].next >= 0) resets_.push_back(QpReset{q});
  }
}

// +dump_plan: every WR and receive with its addresses (for debugging a failing seed).
void ChipEnv::dump_plan() const {
  for (uint32_t q = 0; q < plan_.qps.size(); ++q)
    for (uint32_t h = 0; h < 2; ++h) {
      const SidePlan& sp = plan_.qps[q].side[h];
      for (size_t i = 0; i < sp.send.size(); ++i) {
        const SendWr w = make_send_wr(plan_, layout_, h, q, i);
        char b[256];
        std::snprintf(b, sizeof b, "host %u qp %u (qpn 0x%x) send #%zu %s len %u laddr area+0x%llx raddr peer+0x%llx%s%s",
                      h, q, layout_[h].qpn[q], i, to_string(w.opcode), w.length,
                      static_cast<unsigned long long>(w.laddr - layout_[h].iova),
                      static_cast<unsigned long long>(w.raddr ? w.raddr - layout_[1 - h].iova : 0),
                      sp.send[i].signaled ? "" : " unsignaled",
                      sp.send[i].bad != BadKind::None ? (std::string(" BAD ") + to_string(sp.send[i].bad)).c_str() : "");
        info("PLAN_WR", b, uvm::verbosity::kLow);
      }
      for (size_t i = 0; i < sp.recv.size(); ++i) {
        char b[160];
        std::snprintf(b, sizeof b, "host %u qp %u (qpn 0x%x) recv #%zu len %u addr area+0x%llx", h, q,
                      layout_[h].qpn[q], i, sp.recv[i].len, static_cast<unsigned long long>(sp.recv[i].off));
        info("PLAN_WR", b, uvm::verbosity::kLow);
      }
    }
}

void ChipEnv::start_of_run() {
  raise_objection();
  info("PLAN", plan_.summary(), uvm::verbosity::kLow);
  setup_nics();
  connect_qps();
  const std::vector<uint8_t> init[2] = {init0_, init1_};
  const std::vector<uint8_t> alien[2] = {alien0_, alien1_};
  Workload wl = make_workload(plan_, layout_, init, alien);
  wl.lossy = cfg_.lossy;
  sb_.set_prediction(std::make_unique<Prediction>(predict(wl)));
  init0_.clear();
  init1_.clear();
  if (ctx().has_plusarg("dump_plan")) dump_plan();
  if (before_traffic) before_traffic(*this);
  for (uint32_t h = 0; h < 2; ++h) {
    seq_[h] = std::make_unique<TrafficSequence>(*this, h);
    hosts_[h]->seqr.start(*seq_[h]);
  }
  info("SETUP", "NICs configured at cycle " + std::to_string(world_->cycle()), uvm::verbosity::kLow);
}

bool ChipEnv::host_errs() {
  bool all = true;
  if (herr_due_.empty()) {
    herr_due_.assign(plan_.qps.size(), 0);
    herr_done_.assign(plan_.qps.size(), false);
  }
  for (uint32_t q = 0; q < plan_.qps.size(); ++q) {
    const QpPlan& qp = plan_.qps[q];
    if (!qp.host_err || herr_done_[q]) continue;
    all = false;
    if (herr_due_[q] == 0) {
      if (hosts_[0]->next_send[q] >= qp.host_err_after) herr_due_[q] = cycle() + qp.host_err_delay + 1;
      continue;
    }
    if (cycle() < herr_due_[q]) continue;
    herr_done_[q] = true;
    sw::QpAttr a;
    a.qp_state = sw::QpState::Err;
    hosts_[0]->qps[q]->modify(a, sw::QpAttrMask::State);
    ++host_err_qps_;
    last_post_cycle_ = cycle();
    info("HOST_ERR", "host 0 moved QP " + hex(hosts_[0]->qps[q]->qp_num()) + " to ERR after " +
                         std::to_string(hosts_[0]->next_send[q]) + " of its " +
                         std::to_string(qp.side[0].send.size()) + " send WRs were posted",
         uvm::verbosity::kMedium);
  }
  return all;
}

// QP resets (Knobs::qp_reset). A connection's reset is due once both ends are connected and
// each side has posted its share of send WRs, a drawn delay later. The hosts reset their ends as
// a user of the library would (QueuePair::modify to RESET, or destroying the QP and creating
// another), both commands at once or one after the other, whatever is still in flight. The next
// incarnation is connected (INIT, RTR, RTS on both ends, new PSNs) only once no frame of the old
// connection can still reach either end: every frame each NIC had handed its MAC has left it,
// crossed the link and been taken from the RX buffer. Old frames meet QPs in RESET, which drop
// them, and never the new connection (whose answer to a stale request, a duplicate's re-ACK, a
// sequence NAK or a duplicate READ answered with the old PSNs, is IBA behaviour that depends on
// how the new PSNs fall).
bool ChipEnv::qp_resets() {
  bool all = true;
  const size_t n = resets_.size();  // (a reconnect appends the next incarnation's reset)
  for (size_t i = 0; i < n; ++i) {
    QpReset& r = resets_[i];
    if (r.connected) continue;
    all = false;
    const QpPlan& qp = plan_.qps[r.q];
    const uint32_t first = qp.reset_first, second = 1 - first;
    if (r.ends == 0 && r.due == 0) {
      if (hosts_[0]->next_send[r.q] >= qp.reset_after[0] && hosts_[1]->next_send[r.q] >= qp.reset_after[1])
        r.due = cycle() + qp.reset_delay + 1;
      continue;
    }
    if (r.ends < 2 && cycle() < r.due) continue;
    if (r.ends == 0) {
      for (uint32_t h = 0; h < 2; ++h) r.outstanding[h] = hosts_[h]->qps[r.q]->sq_outstanding();
      resets_busy_ += r.outstanding[0] && r.outstanding[1];
      if (qp.reset_gap == 0) {
        // both commands at once (in command batches: each NIC takes its reset without waiting)
        sw::CommandBatch b0(*hosts_[0]->dev), b1(*hosts_[1]->dev);
        reset_end(r, first);
        reset_end(r, second);
        b0.finish();
        b1.finish();
        reset_done(r, first);
        reset_done(r, second);
      } else {
        reset_end(r, first);
        reset_done(r, first);
        r.due = cycle() + qp.reset_gap;
      }
      continue;
    }
    if (r.ends == 1) {
      reset_end(r, second);
      reset_done(r, second);
      continue;
    }
    const uint64_t both = std::max(r.done[0], r.done[1]);
    if (!r.marked) {
      // what each NIC had handed its MAC by now includes every frame of the old connection
      // (STALE_TX: none may start after its end's reset); the protocol checker forgets it
      if (cycle() < both + kResetSettle) continue;
      r.marked = cycle();
      for (uint32_t h = 0; h < 2; ++h) r.tx_mark[h] = hosts_[h]->tx.stats().frames;
      proto_.disconnect_pair(kIp0, r.old_qpn[0], kIp0 + 1, r.old_qpn[1]);
      continue;
    }
    if (!r.on_wire) {
      if (world_->eth(0).stats().tx_frames < r.tx_mark[0] || world_->eth(1).stats().tx_frames < r.tx_mark[1])
        continue;
      r.on_wire = cycle();
    }
    if (cycle() < r.on_wire + stale_cycles_) continue;
    // A QP created for the next incarnation may have the QPN of another connection's QP reset
    // lately (the library hands out the lowest free one): its old peer may still be sending to
    // that QPN, so it waits until that connection's frames are drained too (as a connection
    // manager keeps a QPN in time-wait).
    bool reused = false;
    for (uint32_t h = 0; h < 2; ++h) {
      const auto d = watch_[h].dead.find(hosts_[h]->nic_qpn[size_t(qp.next)]);
      reused = reused || (d != watch_[h].dead.end() && !drained(resets_[d->second.reset]));
    }
    if (reused) continue;
    reconnect(r);
  }
  return all;
}

// No frame of the connection r reset can arrive any more.
bool ChipEnv::drained(const QpReset& r) const {
  return r.connected || (r.on_wire && cycle() >= r.on_wire + stale_cycles_);
}

// Host h resets its end of plan QP r.q; the next incarnation's QP on this host is the same one
// (modify) or a new one (created after or before the old one is destroyed).
void ChipEnv::reset_end(QpReset& r, uint32_t h) {
  HostAgent& a = *hosts_[h];
  const QpPlan& qp = plan_.qps[r.q];
  const uint32_t n = static_cast<uint32_t>(qp.next);
  const ResetHow how = qp.reset_how[h];
  r.start[h] = cycle();
  r.old_qpn[h] = a.nic_qpn[r.q];
  a.end[r.q] = HostAgent::End::Reset;
  // frames reaching the old QP from now on are dropped, and so may be those received lately
  // that wait in the RX buffer
  ResetWatch& w = watch_[h];
  w.dead[r.old_qpn[h]] = ResetWatch::Dead{~0ull, size_t(&r - resets_.data())};
  reset_qpns_[h].insert(r.old_qpn[h]);
  for (const auto& [c, qpn] : w.recent) w.drops_hi += qpn == r.old_qpn[h];
  const sw::QueuePair& old = *a.qps[r.q];
  info("QP_RESET", "host " + std::to_string(h) + " resets QP " + hex(r.old_qpn[h]) + " (" + to_string(how) +
                       ") with " + std::to_string(old.sq_outstanding()) + " send and " +
                       std::to_string(old.rq_outstanding()) + " receive WRs outstanding, " +
                       std::to_string(a.next_send[r.q]) + " of its " + std::to_string(qp.side[h].send.size()) +
                       " send WRs posted",
       uvm::verbosity::kMedium);
  switch (how) {
    case ResetHow::Modify: {
      sw::QpAttr at;
      at.qp_state = sw::QpState::Reset;
      a.qps[r.q]->modify(at, sw::QpAttrMask::State);
      a.qps[n] = std::move(a.qps[r.q]);
      break;
    }
    case ResetHow::Recreate:
      a.qps[r.q].reset();
      a.qps[n] = create_end(h, n);
      break;
    default:
      a.qps[n] = create_end(h, n);
      a.qps[r.q].reset();
      break;
  }
  a.nic_qpn[n] = a.qps[n]->qp_num();
}

void ChipEnv::reset_done(QpReset& r, uint32_t h) {
  r.done[h] = cycle();
  hosts_[h]->reset_at[r.q] = cycle();
  watch_[h].dead[r.old_qpn[h]].done = cycle();
  // the NIC may start no frame of its old end from now on, to the peer's end (whichever QP it
  // is by then) or anywhere else
  const uint32_t dest = hosts_[1 - h]->nic_qpn[r.q];
  watch_[h].stale_dest[dest] = cycle();
  --watch_[h].live_dest[dest];
  ++r.ends;
  last_post_cycle_ = cycle();
}

// Connects the next incarnation of a reset connection: new PSNs, its own path MTU and access
// flags, the QPNs each end has now.
void ChipEnv::reconnect(QpReset& r) {
  const uint32_t n = static_cast<uint32_t>(plan_.qps[r.q].next);
  const QpPlan& qp = plan_.qps[n];
  HostAgent* a[2] = {hosts_[0], hosts_[1]};
  for (uint32_t h = 0; h < 2; ++h) {
    watch_[h].dead.erase(a[h]->nic_qpn[n]);
    watch_[h].stale_dest.erase(a[1 - h]->nic_qpn[n]);
    proto_.set_flow_mtu(roce::flow_mtu_key(kIp0 + h, a[h]->nic_qpn[n]), qp.mtu);
  }
  {
    sw::CommandBatch b0(*a[0]->dev), b1(*a[1]->dev);
    for (uint32_t h = 0; h < 2; ++h)
      connect_qp(*a[h]->qps[n], h, a[1 - h]->nic_qpn[n], a[h]->sq_psn[n], a[1 - h]->sq_psn[n], qp.mtu,
                 qp.access[h], qp.rnr_retry, cfg_.qp_timeout);
    b0.finish();
    b1.finish();
  }
  proto_.connect_pair(kIp0, a[0]->nic_qpn[n], kIp0 + 1, a[1]->nic_qpn[n]);
  for (uint32_t h = 0; h < 2; ++h) {
    a[h]->end[n] = HostAgent::End::Live;
    ++watch_[h].live_dest[a[1 - h]->nic_qpn[n]];
  }
  r.connected = true;
  last_post_cycle_ = cycle();
  resets_late_ += r.late_frames > 0;
  char b[320];
  std::snprintf(b, sizeof b,
                "QPs 0x%x <-> 0x%x (resets returned at cycles %llu / %llu) connected again as 0x%x <-> 0x%x "
                "(incarnation %u), PSNs 0x%06x / 0x%06x, %.1f us after the second end's reset; %llu frames of the "
                "old connection reached a reset end",
                r.old_qpn[0], r.old_qpn[1], static_cast<unsigned long long>(r.done[0]),
                static_cast<unsigned long long>(r.done[1]), a[0]->nic_qpn[n], a[1]->nic_qpn[n], qp.incarnation,
                a[0]->sq_psn[n], a[1]->sq_psn[n], world_->clock().ns(cycle() - std::max(r.done[0], r.done[1])) / 1000,
                static_cast<unsigned long long>(r.late_frames));
  info("QP_RESET", b, uvm::verbosity::kMedium);
  if (qp.next >= 0) resets_.push_back(QpReset{n});
}

// In a plan with resets every frame a NIC starts goes to its peer and to a QPN one of its QPs
// is connected to and not reset: a frame to the peer QPN of an end reset before it started is
// work queued before the reset (STALE_TX), and so is one built from a reset QP's context (its
// destination cleared).
void ChipEnv::on_tx_frame(uint32_t h, const agents::AxisFrame& f) {
  if (resets_.empty()) return;
  ResetWatch& w = watch_[h];
  const sim::RoceFields r = sim::parse_roce(f.bytes.data(), f.bytes.size());
  if (!r.ok) return;
  const uint8_t* ip = f.bytes.data() + 30;  // IPv4 destination (parse_roce checked the headers)
  const uint32_t dip = (uint32_t(ip[0]) << 24) | (uint32_t(ip[1]) << 16) | (uint32_t(ip[2]) << 8) | ip[3];
  const auto stale = w.stale_dest.find(r.qpn);
  const auto live = w.live_dest.find(r.qpn);
  std::string why;
  if (stale != w.stale_dest.end()) {
    // (a frame started before the reset returned may end after it)
    if (f.cycle_first > stale->second)
      why = "after the host had reset its end of that connection (returned at cycle " +
            std::to_string(stale->second) + ")";
  } else if (dip != kIp0 + 1 - h || live == w.live_dest.end() || live->second == 0) {
    why = "to a destination none of its QPs is connected to (IPv4 " + hex(dip) + ")";
  }
  if (why.empty() || ++w.stale_tx > 8) return;
  error("STALE_TX", "host " + std::to_string(h) + "'s NIC started a frame to QPN " + hex(r.qpn) + " (opcode " +
                        hex(r.opcode) + ", PSN " + hex(r.psn) + ") at cycle " + std::to_string(f.cycle_first) + ", " +
                        why + ": nothing queued before a reset may leave after it");
}

void ChipEnv::on_rx_frame(uint32_t h, const agents::AxisFrame& f) {
  if (resets_.empty()) return;
  const sim::RoceFields r = sim::parse_roce(f.bytes.data(), f.bytes.size());
  if (!r.ok) return;
  ResetWatch& w = watch_[h];
  const uint64_t now = cycle();
  w.recent.emplace_back(now, r.qpn);
  while (w.recent.front().first + rx_window_cycles_ < now) w.recent.pop_front();
  const auto it = w.dead.find(r.qpn);
  if (it == w.dead.end()) return;
  ++w.drops_hi;
  if (now > it->second.done) ++w.drops_lo;
  ++resets_[it->second.reset].late_frames;
}

void ChipEnv::tick() {
  if (traffic_done_) return;
  const uint64_t tx_frames = hosts_[0]->tx.stats().frames + hosts_[1]->tx.stats().frames;
  if (tx_frames != tx_frames_seen_) {
    tx_frames_seen_ = tx_frames;
    last_tx_cycle_ = cycle();
  }
  const bool errs_done = host_errs();
  const bool resets_done = qp_resets();
  bool posted = true;
  for (uint32_t h = 0; h < 2; ++h)
    if (hosts_[h]->seqr.running()) posted = false;
  if (!posted || !errs_done || !resets_done || !sb_.exact_done()) return;
  // Relaxed queues (after an error) end once no completion has come for a while.
  if (sb_.has_relaxed() && cycle() - std::max(sb_.last_completion_cycle(), last_post_cycle_) < cfg_.quiet_cycles)
    return;
  // Every completion is in, yet a QP may still have a PSN no answer covered: an unsignaled
  // last WR whose tail packet or ACK the link lost. The NIC is still at work (its ACK timeout
  // will resend); end the run after that, so that every resend is checked and the counters
  // are not read in the middle of a retry.
  if (!unanswered_qps(true).empty()) return;
  // ... and a go-back-N episode goes on to the end of what it rewound over even when the first
  // duplicate ACK completes every WR (the resent packets below the ACKed PSN still leave): end
  // the run once neither NIC has sent a frame for a while.
  if (cycle() - last_tx_cycle_ < kWireQuietCycles) return;
  traffic_done_ = true;
  drop_objection();
}

// Host QPs with a PSN sent and not answered on the wire (SchedChecker::unanswered), as
// "host H QP 0xQPN from PSN 0xP", leaving out the QPs of a plan that fails a QP on purpose
// (a bad WR, exhausted receives, a host's move to ERR: the peer's requests may go unanswered
// until its retries run out, which the relaxed queues wait for).
std::vector<std::string> ChipEnv::unanswered_qps(bool first_only) const {
  std::vector<std::string> out;
  for (uint32_t h = 0; h < 2; ++h)
    for (const auto& [qpn, psn] : sched_.unanswered(h)) {
      bool exempt = false;
      for (uint32_t q = 0; q < plan_.qps.size() && q < layout_[h].qpn.size(); ++q)
        if (layout_[h].qpn[q] == qpn) {
          const QpPlan& p = plan_.qps[q];
          exempt = p.bad_side0 || p.exhaust_side0 || p.host_err;
        }
      if (exempt) continue;
      out.push_back("host " + std::to_string(h) + " QP " + hex(qpn) + " from PSN " + hex(psn));
      if (first_only) return out;
    }
  return out;
}

void ChipEnv::end_of_run() {
  if (!traffic_done_) {
    for (const std::string& q : unanswered_qps()) info("HANG", q + " not answered", uvm::verbosity::kLow);
    // Hang diagnostics: where each NIC stands on its interfaces.
    for (uint32_t h = 0; h < 2; ++h) {
      const sim::Top& t = world_->top(h);
      HostAgent& a = *hosts_[h];
      char b[320];
      std::snprintf(b, sizeof b,
                    "host %u at hang: DMA reads outstanding %zu (ARVALID %d ARREADY %d RVALID %d), writes outstanding "
                    "%zu (AWVALID %d WVALID %d), TX TVALID %d TREADY %d, RX TVALID %d, rx_pause %d, link paused %d, "
                    "TX frames %llu, RX frames %llu",
                    h, a.axi.outstanding_reads(), int(t.m_axi_arvalid), int(t.m_axi_arready), int(t.m_axi_rvalid),
                    a.axi.outstanding_writes(), int(t.m_axi_awvalid), int(t.m_axi_wvalid), int(t.m_axis_tx_tvalid),
                    int(t.m_axis_tx_tready), int(t.s_axis_rx_tvalid), int(t.rx_pause),
                    int(world_->link(0).tx_paused(int(h), world_->now_ns())),
                    static_cast<unsigned long long>(a.tx.stats().frames),
                    static_cast<unsigned long long>(a.rx.stats().frames));
      info("HANG", b, uvm::verbosity::kLow);
    }
  }
  for (uint32_t h = 0; h < 2; ++h) {
    HostAgent& a = *hosts_[h];
    a.counters.clear();
    for (int i = 0; i < abi::NUM_COUNTERS; ++i) a.counters.push_back(a.dev->read_counter(i));
    cov_.sample_rx(a.counters);
    dut_cov_.sample_counters(a.counters);
  }
}

void ChipEnv::check() {
  check_rtl_errors();
  if (!traffic_done_) error("NOT_DONE", "traffic did not finish (see the watchdog message)");
  for (uint32_t h = 0; h < 2; ++h) {
    const HostAgent& a = *hosts_[h];
    if (a.counters.empty()) continue;
    for (const auto& [idx, want] : expected_counters[h]) {
      if (a.counters[size_t(idx)] != want)
        error("COUNTER", "host " + std::to_string(h) + " counter " + abi::counter_name(idx) + " = " +
                             std::to_string(a.counters[size_t(idx)]) + ", expected " + std::to_string(want));
    }
    if (!cfg_.expect_clean_rx) continue;
    // (RX_DROP_OVERFLOW: the LOSSLESS check below, in every run)
    for (int idx : {abi::CNT_RX_DROP_ICRC, abi::CNT_RX_DROP_MALFORMED, abi::CNT_RX_DROP_QP,
                    abi::CNT_CQ_OVERFLOW, abi::CNT_DB_BAD, abi::CNT_RX_DUP}) {
      if (expected_counters[h].count(idx)) continue;
      // a lossy link duplicates requests and makes requesters resend them (RX_DUP, bounded
      // below); resent and duplicate frames reaching a QP in ERR (after a fatal NAK or RNR
      // exhaustion) are dropped: RX_DROP_QP may count only in a plan where some QP fails
      if (cfg_.lossy && idx == abi::CNT_RX_DUP) continue;
      if (cfg_.lossy && idx == abi::CNT_RX_DROP_QP && plan_fails_qp()) continue;
      // ACKs and READ responses reaching a QP the host moved to ERR are dropped and counted
      if (idx == abi::CNT_RX_DROP_QP && h == 0 && host_err_qps_) continue;
      // Frames reaching a QP the hosts reset (Knobs::qp_reset; requests and answers of the old
      // connection still on their way, the peer's resends while its end is not reset yet) are
      // dropped and counted: every frame that arrived after the reset returned, until a QP with
      // that QPN was connected again, and perhaps those that arrived while it was being reset
      // or shortly before (waiting in the RX buffer).
      if (idx == abi::CNT_RX_DROP_QP && !resets_.empty()) {
        const uint64_t n = a.counters[size_t(idx)];
        const ResetWatch& w = watch_[h];
        if (n < w.drops_lo || n > w.drops_hi)
          error("COUNTER", "host " + std::to_string(h) + " counter RX_DROP_QP = " + std::to_string(n) +
                               ", but " + std::to_string(w.drops_lo) + " frames reached QPs after their reset and " +
                               std::to_string(w.drops_hi) + " while or shortly before it (the counter must lie " +
                               "between the two)");
        continue;
      }
      if (a.counters[size_t(idx)])
        error("COUNTER", "host " + std::to_string(h) + " counter " + abi::counter_name(idx) + " = " +
                             std::to_string(a.counters[size_t(idx)]) + " in a run that provokes none");
    }
  }
  for (uint32_t h = 0; h < 2; ++h) {
    const HostAgent& a = *hosts_[h];
    if (a.counters.empty()) continue;
    info("LINK", "host " + std::to_string(h) + ": " + std::to_string(world_->link(0).pause_requests(int(h))) +
                     " pause requests, " + std::to_string(a.counters[size_t(abi::CNT_RX_FRAMES)]) + " frames received, " +
                     std::to_string(a.counters[size_t(abi::CNT_RX_DROP_OVERFLOW)]) + " dropped for lack of RX buffer, " +
                     std::to_string(a.counters[size_t(abi::CNT_ACK_DEFERRED)]) + " answers deferred, " +
                     std::to_string(a.counters[size_t(abi::CNT_RESP_NO_ROOM)]) + " requests refused for lack of responder queue room",
         uvm::verbosity::kLow);
  }
  // Every duplicate request a responder sees is a copy the wire made or a request resent:
  // RX_DUP of a host is at most the duplicates the link made towards it plus its peer's resends.
  for (uint32_t h = 0; h < 2 && cfg_.lossy; ++h) {
    const HostAgent& a = *hosts_[h];
    const HostAgent& peer = *hosts_[1 - h];
    if (a.counters.empty() || peer.counters.empty()) continue;
    const uint64_t dup = a.counters[size_t(abi::CNT_RX_DUP)];
    const uint64_t copies = world_->link(0).stats(int(1 - h)).duplicated;
    const uint64_t resent = peer.counters[size_t(abi::CNT_TX_RETRANSMIT)];
    if (dup > copies + resent)
      error("COUNTER", "host " + std::to_string(h) + " counted " + std::to_string(dup) +
                           " duplicate requests (RX_DUP), more than the " + std::to_string(copies) +
                           " copies the link made towards it and the " + std::to_string(resent) +
                           " requests its peer resent");
  }
  // The counters read at the end against what the monitors on the same ports saw. The run ends
  // only when no QP has a PSN unanswered and the wire has been quiet for the drain, so the two
  // agree exactly; a difference is a counter that misses frames, or a NIC still sending while
  // the counters were read (a retry after the end: see tick()).
  //   TX_FRAMES, RX_FRAMES  every frame the port took from the NIC / gave it
  //   TX_RETRANSMIT         the request packets whose PSN the QP sent before: exactly those the
  //                         scheduler checker sees leave with a PSN below the highest one it saw
  //                         (go-back-N, RNR retries, partial re-reads); in a plan with QP
  //                         resets also the resent packets of an old incarnation the NIC
  //                         counted when it built them and then discarded as stale (decision
  //                         109): at most one per cycle of STALE_DROP more
  for (uint32_t h = 0; h < 2 && traffic_done_; ++h) {  // (after a hang the NIC may still send)
    const HostAgent& a = *hosts_[h];
    if (a.counters.empty()) continue;
    const std::pair<int, uint64_t> seen[] = {{abi::CNT_TX_FRAMES, a.tx.stats().frames},
                                             {abi::CNT_RX_FRAMES, a.rx.stats().frames},
                                             {abi::CNT_TX_RETRANSMIT, sched_.stats().resent_by[h]}};
    for (const auto& [idx, want] : seen) {
      const uint64_t got = a.counters[size_t(idx)];
      if (idx == abi::CNT_TX_RETRANSMIT && !resets_.empty()) {
        const uint64_t stale = a.counters[size_t(abi::CNT_STALE_DROP)];
        if (got < want || got > want + stale)
          error("COUNTER", "host " + std::to_string(h) + " counter TX_RETRANSMIT = " + std::to_string(got) +
                               ", but its port's monitors saw " + std::to_string(want) +
                               " request packets leave with a PSN sent before, and STALE_DROP (" +
                               std::to_string(stale) + ") allows at most that many more");
        continue;
      }
      if (got != want)
        error("COUNTER", "host " + std::to_string(h) + " counter " + abi::counter_name(idx) + " = " +
                             std::to_string(a.counters[size_t(idx)]) + ", but its port's monitors saw " +
                             std::to_string(want) +
                             (idx == abi::CNT_TX_RETRANSMIT ? " request packets leave with a PSN sent before"
                                                            : " frames"));
    }
  }
  if (cfg_.require_resend && !hosts_[0]->counters.empty()) {
    if (!forced_lost_)
      error("LOSSY", "no request frame of host 0 was lost on purpose (fewer than 3 request frames?)");
    else if (!hosts_[0]->counters[size_t(abi::CNT_TX_RETRANSMIT)] && !reset_qpns_[1].count(forced_qpn_))
      // (unless the QP the lost request went to was reset before it was resent)
      error("LOSSY", "host 0 lost a request frame and resent none (TX_RETRANSMIT 0)");
  }
  // Flow control keeps the link lossless up to the cable the pause headroom covers: whatever the
  // traffic, the link's own losses or a pause storm, no frame may be dropped for lack of RX buffer.
  for (uint32_t h = 0; h < 2 && cfg_.link_delay_ns <= lossless_cable_ns_; ++h) {
    const HostAgent& a = *hosts_[h];
    if (a.counters.empty() || expected_counters[h].count(abi::CNT_RX_DROP_OVERFLOW)) continue;
    if (const uint64_t n = a.counters[size_t(abi::CNT_RX_DROP_OVERFLOW)])
      error("LOSSLESS", "host " + std::to_string(h) + " dropped " + std::to_string(n) +
                            " frames for lack of RX buffer (RX_DROP_OVERFLOW) on a paused link with a " +
                            std::to_string(int(cfg_.link_delay_ns)) + " ns cable (the headroom covers " +
                            std::to_string(int(lossless_cable_ns_)) + " ns)");
  }
  // Between two srnic NICs the responder's ordered queue never runs out of slots: a requester has
  // at most 64 READs outstanding (its READ contexts) and the queue keeps 256 - 8 slots for READ,
  // RNR and fatal NAK answers (decision 116), so no request may be refused for lack of room.
  for (uint32_t h = 0; h < 2; ++h) {
    const HostAgent& a = *hosts_[h];
    if (a.counters.empty() || expected_counters[h].count(abi::CNT_RESP_NO_ROOM)) continue;
    if (const uint64_t n = a.counters[size_t(abi::CNT_RESP_NO_ROOM)])
      error("NO_ROOM", "host " + std::to_string(h) + " refused " + std::to_string(n) +
                           " request packets for lack of room in its responder queue (RESP_NO_ROOM)");
  }
  if (world_->violations())
    error("BUS", std::to_string(world_->violations()) + " PCIe/Ethernet bus-rule violation(s) reported by the models");
}

std::vector<uvm::Covergroup*> ChipEnv::covergroups() {
  std::vector<uvm::Covergroup*> v = {&cov_.cg_wr,       &cov_.cg_cqe,      &cov_.cg_rx,     &cov_.cg_doorbell,
                                     &dut_cov_.cg_wire, &dut_cov_.cg_dma, &dut_cov_.cg_err, &dut_cov_.cg_recovery};
  for (HostAgent* h : hosts_) {
    v.push_back(&h->axi.coverage());
    v.push_back(&h->axil.coverage());
    v.push_back(&h->tx.coverage());
    v.push_back(&h->rx.coverage());
  }
  return v;
}

void ChipEnv::report() {
  char b[256];
  if (!resets_.empty()) {
    size_t done = 0;
    for (const QpReset& r : resets_) done += r.ends == 2;
    uint32_t stale[2] = {0, 0};
    for (uint32_t h = 0; h < 2; ++h)
      if (!hosts_[h]->counters.empty()) stale[h] = hosts_[h]->counters[abi::CNT_STALE_DROP];
    std::snprintf(b, sizeof b, "%zu QP resets, %u of them with send WRs outstanding on both ends and %u with frames "
                  "of the old connection reaching a reset end; STALE_DROP %u / %u",
                  done, resets_busy_, resets_late_, stale[0], stale[1]);
    info("QP_RESET", b, uvm::verbosity::kLow);
  }
  std::snprintf(b, sizeof b, "%llu cycles (%.1f us simulated), %llu frames on the wire, %llu completions",
                static_cast<unsigned long long>(world_->cycle()), world_->now_ns() / 1000.0,
                static_cast<unsigned long long>(proto_.frames()),
                static_cast<unsigned long long>(hosts_[0]->completions_seen + hosts_[1]->completions_seen));
  info("RUN", b, uvm::verbosity::kLow);
  if (!cfg_.lossy) return;
  for (int d = 0; d < 2; ++d) {
    const sim::LinkStats& st = world_->link(0).stats(d);
    std::snprintf(b, sizeof b, "host %d -> host %d: %llu frames, %llu lost, %llu reordered, %llu duplicated", d, 1 - d,
                  static_cast<unsigned long long>(st.frames), static_cast<unsigned long long>(lost_[d]),
                  static_cast<unsigned long long>(st.reordered), static_cast<unsigned long long>(st.duplicated));
    info("LINK", b, uvm::verbosity::kLow);
  }
}

// ---------------------------------------------------------------------------------------------
// Test base

ChipTest::ChipTest(uvm::Context& ctx, const Knobs& knobs, const EnvConfig& cfg)
    : Test(ctx), knobs_(knobs), cfg_(cfg) {
  // Plusargs override the test's knobs (debugging, regression variants).
  knobs_.min_qps = static_cast<uint32_t>(ctx.plusarg_u64("min_qps", knobs_.min_qps));
  knobs_.max_qps = static_cast<uint32_t>(ctx.plusarg_u64("max_qps", std::max<uint64_t>(knobs_.max_qps, knobs_.min_qps)));
  knobs_.min_wrs = static_cast<uint32_t>(ctx.plusarg_u64("min_wrs", knobs_.min_wrs));
  knobs_.max_wrs = static_cast<uint32_t>(ctx.plusarg_u64("max_wrs", std::max<uint64_t>(knobs_.max_wrs, knobs_.min_wrs)));
  if (ctx.has_plusarg("mtu")) knobs_.mtus = {static_cast<uint32_t>(ctx.plusarg_u64("mtu", 1024))};
  if (ctx.has_plusarg("pcie_random")) cfg_.pcie_random = true;
  if (ctx.has_plusarg("pause_storm")) cfg_.pause_storm = true;
  // +pause_period_us=P +pause_duty=D: the pause storm's period and duty instead of the draw
  if (ctx.has_plusarg("pause_period_us")) cfg_.pause_period_ns = 1000 * std::stod(ctx.plusarg("pause_period_us"));
  if (ctx.has_plusarg("pause_duty")) cfg_.pause_duty = std::stod(ctx.plusarg("pause_duty"));
  if (cfg_.pause_period_ns > 0 || cfg_.pause_duty > 0) cfg_.pause_storm = true;
  if (ctx.has_plusarg("cable_random")) cfg_.cable_random = true;
  // +forced_loss=0: no request lost on purpose (runs pinned to reproduce what a seed found
  // before the forced loss existed)
  if (ctx.has_plusarg("forced_loss")) cfg_.require_resend = ctx.plusarg_u64("forced_loss", 1) != 0;
  if (ctx.has_plusarg("link_delay_ns")) {
    cfg_.link_delay_ns = std::stod(ctx.plusarg("link_delay_ns"));
    cfg_.cable_random = false;
  }
  if (ctx.has_plusarg("tx_window")) cfg_.tx_window = static_cast<int64_t>(ctx.plusarg_u64("tx_window", 128));
  // +lossy (drawn impairments) or explicit +loss=P +reorder=P +dup=P (the rest drawn)
  for (const char* name : {"loss", "reorder", "dup"})
    if (ctx.has_plusarg(name)) cfg_.lossy = true;
  if (ctx.has_plusarg("lossy")) cfg_.lossy = true;
  if (ctx.has_plusarg("loss")) cfg_.loss = std::stod(ctx.plusarg("loss"));
  if (ctx.has_plusarg("reorder")) cfg_.reorder = std::stod(ctx.plusarg("reorder"));
  if (ctx.has_plusarg("dup")) cfg_.dup = std::stod(ctx.plusarg("dup"));
  if (cfg_.lossy && cfg_.qp_timeout > 4) cfg_.qp_timeout = 4;
  if (cfg_.lossy || cfg_.pcie_random) cfg_.window_random = true;   // impaired runs draw the cap too
  if (ctx.has_plusarg("psn_wrap")) knobs_.psn_wrap = std::stod(ctx.plusarg("psn_wrap"));
  if (ctx.has_plusarg("ring_wrap")) knobs_.ring_wrap = std::stod(ctx.plusarg("ring_wrap"));
  if (ctx.has_plusarg("host_err")) knobs_.host_err = std::stod(ctx.plusarg("host_err"));
  if (ctx.has_plusarg("qp_reset")) knobs_.qp_reset = std::stod(ctx.plusarg("qp_reset"));
  if (ctx.has_plusarg("max_qp_resets"))
    knobs_.max_qp_resets = static_cast<uint32_t>(ctx.plusarg_u64("max_qp_resets", knobs_.max_qp_resets));
  if (ctx.has_plusarg("sched_wait_base_us"))
    cfg_.sched.wait_base_ns = 1000 * std::stod(ctx.plusarg("sched_wait_base_us"));
  if (ctx.has_plusarg("sched_turn_gbps")) cfg_.sched.turn_gbps = std::stod(ctx.plusarg("sched_turn_gbps"));
  uvm::Rng r = ctx.stream("plan");
  plan_ = make_traffic_plan(knobs_, r);
  env_ = &create<ChipEnv>("env", plan_, cfg_);
}

void ChipTest::configure(uvm::Phaser& ph) {
  ph.set_edge([this] { env_->step(); });
  ph.set_drain_cycles(2000);
  // Watchdog: 300 us plus the payload at 5 Gb/s plus 1 us per WR, in 300 MHz cycles.
  double ns = 300000.0 + double(plan_.total_payload) * 8 / 5.0 + 1000.0 * double(plan_.send_wrs + plan_.recv_wrs);
  if (cfg_.pcie_random || cfg_.pause_storm) ns *= 4;  // slower PCIe and a paused link
  if (cfg_.cable_random || cfg_.link_delay_ns > 100) ns *= 2;   // longer round trips
  // a lossy link: every lost tail of a QP's traffic waits for a local ACK timeout (65.5 us plus
  // up to one timer sweep), and a QP may lose several in a row
  if (cfg_.lossy) ns = ns * 4 + 3e6;
  // a QP reset: up to 100 us between its ends, the old connection's frames drained, the next
  // incarnation's traffic started over
  for (const QpPlan& q : plan_.qps) ns += q.next >= 0 ? 300000.0 : 0.0;
  ph.set_watchdog_cycles(static_cast<uint64_t>(ns * 0.3) + 100000);
}

void ChipTest::build() {}

void ChipTest::start_of_run() {
  // +cov_reset_out=FILE: the RTL coverage counters right after reset (the World resets the NICs
  // when it is built), to tell activity during reset from activity after it.
  const std::string out = ctx().plusarg("cov_reset_out");
  if (out.empty()) return;
#ifdef SRNIC_ENV_COVERAGE
  env_->world().context().coveragep()->write(out.c_str());
#else
  error("COVERAGE", "+cov_reset_out needs the coverage build (srnic-uvm-cov)");
#endif
}

void ChipTest::report() {
  const std::string out = ctx().plusarg("cov_out");
  if (out.empty()) return;
#ifdef SRNIC_ENV_COVERAGE
  VerilatedCovContext* cov = env_->world().context().coveragep();
  for (uvm::Covergroup* g : env_->covergroups()) uvm::register_coverage(*cov, *g);
  cov->write(out.c_str());
  info("COVERAGE", "wrote " + out, uvm::verbosity::kLow);
#else
  error("COVERAGE", "+cov_out needs the coverage build (srnic-uvm-cov)");
#endif
}

}  // namespace srnic::verif::env
