// The srnic-sim workload driver: NIC setup through srnic::sw, the perftest-style bandwidth loop
// and the ping-pong latency loop, live checking against the reference model, and statistics.
#include "workload_run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "sim_backend.hpp"
#include "srnic/roce/checker.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"
#include "srnic/verif/scoreboard.hpp"
#include "srnic/weir.hpp"

namespace srnic::sim {

namespace {

std::string fmt_ns(double ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", ns);
  return b;
}

constexpr uint32_t kMaxCqe = 1u << 15;
constexpr int kPollBatch = 64;
constexpr size_t kChunk = 64 * 1024;  // scratch for message stores and checks
constexpr uint64_t kIterMask = (uint64_t(1) << 40) - 1;

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

uint32_t pow2_at_least(uint64_t n) {
  uint32_t v = 2;
  while (v < n && v < kMaxCqe) v <<= 1;
  return v;
}

struct HostCtx {
  std::unique_ptr<SimBackend> be;
  std::unique_ptr<sw::Device> dev;
  std::unique_ptr<sw::ProtectionDomain> pd;
  std::vector<std::unique_ptr<sw::CompletionQueue>> scq, rcq;
  std::unique_ptr<sw::MemoryRegion> mr;
  std::vector<std::unique_ptr<sw::QueuePair>> qps;
  std::vector<QpSide> sides;
  std::vector<uint32_t> qpn_to_q;  // QPN -> QP index (~0u: none)
  std::vector<uint64_t> next_send, done_send, next_recv, done_recv;
  std::vector<uint32_t> sq_psn;
};

// Where the NIC may write in one host's memory: the destination slot of each message in flight
// towards this host and the CQ rings.
struct DmaMap {
  uint64_t block = 0, span = 0, len = 0;    // data block: regions of `span` bytes back to back
  std::vector<uint32_t> region_q;           // region j -> QP whose destination it is (~0u: a source)
  std::vector<uint32_t> dst_region;         // QP -> index of its destination region in regions()
  std::vector<std::pair<uint64_t, uint64_t>> cqs;  // [base, end) of every CQ ring
  std::vector<uint64_t> slot_msg;           // [q * dst slots + slot]: iteration + 1 in flight there, 0: none
};

class Runner {
 public:
  explicit Runner(const RunConfig& cfg)
      : cfg_(cfg), plan_(make_plan(cfg)), bytes_(cfg, plan_), dslots_(dst_slots(cfg, plan_)) {}
  RunResult run();

 private:
  void build_world();
  void setup_host(uint32_t h, const std::vector<RegionRef>& regs,
                  std::vector<std::vector<uint8_t>>& init);
  void connect();
  bool post_sends(uint32_t h, uint32_t q, uint64_t max_n);
  void refill(uint32_t h, uint32_t q);
  void post_recvs(uint32_t h, uint32_t q);
  bool sends(uint32_t h) const { return h == 0 || both_send(cfg_); }
  // -D: posting stops once the duration has passed since the first post (each QP up to its
  // next signaled WR); the run ends when every posted WR has completed.
  bool in_window(double t) const { return cfg_.duration_us <= 0 || t <= res_.t_first_ns + cfg_.duration_us * 1000; }
  uint64_t expected_posted() const;
  bool bandwidth_done() const;
  void poll_host(uint32_t h);
  void poll_cq(uint32_t h, sw::CompletionQueue& cq, verif::QueueKind kind);
  bool check_limits();
  void bandwidth_loop();
  void retire(uint32_t h, uint32_t q, uint64_t len);
  void check_imm(uint32_t h, uint32_t q, uint64_t i, const sw::WorkCompletion& wc);
  void latency_loop();
  void drain();
  void collect(RunResult& r, double main_wall_s, uint64_t main_cycles);
  // Per-message data checks.
  void store_message(const verif::HostStore& st);
  void track(uint32_t dh, uint32_t q, uint64_t i, bool in_flight);
  uint64_t dst_addr(uint32_t dh, uint32_t q, uint64_t i) const {
    return host_[dh].sides[q].dst + dst_offset(cfg_, plan_, i);
  }
  std::string verify(uint32_t dh, uint32_t sender, uint32_t q, uint64_t i);
  std::string explain(uint32_t dh, uint32_t sender, uint32_t q, uint64_t i, const std::vector<uint8_t>& got);
  void check_polled(uint32_t dh, uint32_t sender, uint32_t q, uint64_t i);
  bool fault_here(uint32_t q, uint64_t i) const {
    return cfg_.fault != RunConfig::Fault::None && q == 0 && i == cfg_.inject_at;
  }
  void on_dma_write(uint32_t h, uint64_t addr, const uint8_t* data, uint64_t strb, double t);
  std::string dma_stray(uint32_t h, uint64_t a, uint64_t b) const;  // empty if [a, b) is allowed
  void on_cqe(uint32_t h, const uint8_t* p, double t);
  void fail(const std::string& why) {
    if (res_.failure.empty()) res_.failure = why;
  }

  const RunConfig& cfg_;
  Plan plan_;
  MessageBytes bytes_;
  uint32_t dslots_;
  DmaMap dm_[2];
  std::vector<uint64_t> cqe_next_[2];  // per QP: first requester message not yet covered by a CQE
  std::vector<uint8_t> chunk_;
  std::vector<uint8_t> fault_saved_;
  uint32_t nq_ = 0;
  std::unique_ptr<World> world_;
  HostCtx host_[2];
  std::unique_ptr<sw::Weir> weir_;  // --weir: host 0's sends go through it
  std::unique_ptr<roce::ProtocolChecker> checker_;
  std::unique_ptr<verif::Prediction> pred_;
  std::unique_ptr<verif::Scoreboard> sb_;
  RunResult res_;
  std::vector<sw::SendWr> wr_scratch_;
  std::vector<sw::Sge> sge_scratch_;
  std::vector<sw::RecvWr> rwr_scratch_;
  std::vector<uint32_t> dirty_[2];   // per host: QPs with a send completion since the last refill
  std::vector<uint8_t> is_dirty_[2];
  std::vector<double> post_ns_, done_ns_;  // each message posted / retired, in time order (BW peak)
  std::vector<double> dir_post_ns_[2], dir_done_ns_[2];  // -b: the same per requesting host
  std::vector<QpResult> qp_;
  std::vector<std::vector<uint8_t>> init_;  // -D: the regions' initial contents, for the final check
  bool stopped_ = false;                    // -D: the duration has passed
  sw::WorkCompletion wc_[kPollBatch];
  double last_progress_ns_ = 0;
  bool t_first_set_ = false;
  bool data_failed_ = false;
  uint64_t bus_reports_ = 0;
};

void Runner::build_world() {
  WorldConfig wc;
  wc.hosts = 2;
  wc.clock_mhz = cfg_.clock_mhz;
  wc.pcie.read_latency_ns = cfg_.pcie_latency_ns;
  wc.pcie.max_outstanding_reads = cfg_.pcie_tags;
  wc.pcie.errors.rules = cfg_.pcie_errors;
  wc.pcie_error_host = cfg_.pcie_error_host;
  wc.link = link_config(cfg_);
  wc.link.pcap_lost = true;   // the capture shows what was sent; FILE.impair.csv names the lost ones
  wc.seed = cfg_.seed;
  wc.pcap = cfg_.pcap;
  wc.trace = cfg_.trace;
  wc.trace_from_ns = cfg_.trace_from_us * 1000.0;
  switch (cfg_.pcie_reorder) {
    case RunConfig::WriteReorder::Off: wc.pcie.write_order = PcieConfig::WriteOrder::InOrder; break;
    case RunConfig::WriteReorder::Ids: wc.pcie.write_order = PcieConfig::WriteOrder::AcrossIds; break;
    case RunConfig::WriteReorder::All: wc.pcie.write_order = PcieConfig::WriteOrder::All; break;
  }
  world_ = std::make_unique<World>(wc);
  // Every NIC write into host memory, as it lands: inside an allowed range, and a CQE only
  // after the bytes of the message it reports.
  for (uint32_t h = 0; h < 2; ++h)
    world_->pcie(h).set_write_observer([this, h](uint64_t addr, const uint8_t* data, uint64_t strb, double t) {
      on_dma_write(h, addr, data, strb, t);
    });
  // Bus-rule violations: keep the first, print the first few (the models never stop on them).
  for (uint32_t h = 0; h < 2; ++h) {
    auto handler = [this, h](const Violation& v) {
      char b[64];
      std::snprintf(b, sizeof b, "host %u cycle %llu ", h, static_cast<unsigned long long>(v.cycle));
      const std::string text = b + v.channel + ": " + v.what;
      if (res_.first_bus_violation.empty()) res_.first_bus_violation = text;
      if (++bus_reports_ <= 5) std::fprintf(stderr, "srnic-sim: bus violation: %s\n", text.c_str());
    };
    world_->pcie(h).set_violation_handler(handler);
    world_->eth(h).set_violation_handler(handler);
  }
  if (cfg_.protocol_check) {
    roce::CheckerConfig cc;
    cc.mtu = cfg_.mtu;
    // Resends need a cause: the link's impairments, or (a cable longer than the pause headroom
    // covers) frames the receiving NIC drops for lack of buffer, which the wire cannot show;
    // collect() then requires such drops (or a timeout) behind every resend.
    cc.allow_retransmit = impairs(cfg_) || cfg_.link_delay_ns > max_lossless_cable_ns(cfg_);
    cc.keep_violations = 4;
    checker_ = std::make_unique<roce::ProtocolChecker>(cc);
    for (uint32_t h = 0; h < 2; ++h)
      world_->eth(h).set_tx_monitor([this](const Frame& f) {
        if (!checker_->on_frame(f.bytes.data(), f.bytes.size()) && res_.first_protocol_violation.empty() &&
            !checker_->violations().empty()) {
          const roce::Violation& v = checker_->violations().front();
          res_.first_protocol_violation = "frame " + std::to_string(v.frame) + ": " + v.kind + ": " + v.detail;
        }
      });
  }
}

void Runner::setup_host(uint32_t h, const std::vector<RegionRef>& regs,
                        std::vector<std::vector<uint8_t>>& init) {
  HostCtx& hc = host_[h];
  hc.be = std::make_unique<SimBackend>(*world_, h);
  hc.dev = std::make_unique<sw::Device>(*hc.be);
  sw::Device& dev = *hc.dev;
  if (nq_ + dev.caps().first_qpn > dev.caps().max_qp)
    throw std::runtime_error("host " + std::to_string(h) + ": the NIC has " +
                             std::to_string(dev.caps().max_qp - dev.caps().first_qpn) +
                             " usable QPs, --qps " + std::to_string(nq_) + " requested");
  dev.set_mac(0x020000000001ull + h);
  dev.set_ipv4(0x0A000001u + h);
  if (cfg_.window >= 0) dev.set_tx_window(uint32_t(cfg_.window));
  hc.pd = dev.alloc_pd();
  // The NIC's commands (CQs, MR, QPs) are written back to back and checked once at the end.
  sw::CommandBatch batch(dev);

  // One CQ per group of QPs, sized for every WR the group can have outstanding.
  const uint32_t per_cq = std::max<uint32_t>(1, kMaxCqe / plan_.sq_entries);
  const uint32_t ncq = (nq_ + per_cq - 1) / per_cq;
  if (2 * ncq > dev.caps().max_cq) throw std::runtime_error("not enough CQs for this many QPs");
  for (uint32_t k = 0; k < ncq; ++k) {
    const uint32_t members = std::min(per_cq, nq_ - k * per_cq);
    const uint32_t entries = pow2_at_least(uint64_t(members) * plan_.sq_entries);
    hc.scq.push_back(dev.create_cq(entries));
    hc.rcq.push_back(dev.create_cq(entries));
    hc.scq.back()->set_ci_batch(std::max<uint32_t>(1, entries / 8));
    hc.rcq.back()->set_ci_batch(std::max<uint32_t>(1, entries / 8));
    for (const auto* cq : {hc.scq.back().get(), hc.rcq.back().get()})
      dm_[h].cqs.emplace_back(cq->base(), cq->base() + uint64_t(cq->size()) * sizeof(abi::Cqe));
  }

  // Data block: this host's regions back to back, each followed by its guard; one MR over it.
  const uint64_t span = (plan_.region + plan_.guard + 63) & ~uint64_t(63);
  std::vector<size_t> mine;
  for (size_t k = 0; k < regs.size(); ++k)
    if (regs[k].host == h) mine.push_back(k);
  const uint64_t block_len = span * mine.size();
  const uint64_t block = hc.be->dma_alloc(block_len, 4096);
  hc.sides.assign(nq_, QpSide{});
  DmaMap& dm = dm_[h];
  dm.block = block;
  dm.span = span;
  dm.len = block_len;
  dm.region_q.assign(mine.size(), ~0u);
  dm.dst_region.assign(nq_, ~0u);
  dm.slot_msg.assign(uint64_t(nq_) * dslots_, 0);
  for (size_t j = 0; j < mine.size(); ++j) {
    const size_t k = mine[j];
    const uint64_t addr = block + j * span;
    if (!regs[k].src) {
      dm.region_q[j] = regs[k].qp;
      dm.dst_region[regs[k].qp] = static_cast<uint32_t>(k);
    }
    std::vector<uint8_t>& bytes = init[k];
    bytes.resize(span);
    fill_random(cfg_.seed, 0x100000 + k, bytes.data(), bytes.size());
    if (cfg_.latency && cfg_.op == Op::Write) {
      // Ping-pong markers: the receiver polls the last byte of its destination.
      if (regs[k].src) {
        for (uint32_t s = 0; s < plan_.slots; ++s) bytes[(s + 1) * plan_.stride - 1] = uint8_t(s + 1);
      } else {
        bytes[plan_.stride - 1] = 0;
      }
    }
    world_->memory(h).write(addr, bytes.data(), bytes.size());
    QpSide& s = hc.sides[regs[k].qp];
    (regs[k].src ? s.src : s.dst) = addr;
  }
  hc.mr = dev.reg_mr(*hc.pd, block, std::max<uint64_t>(block_len, 64),
                     sw::Access::LocalWrite | sw::Access::RemoteWrite | sw::Access::RemoteRead);

  hc.qpn_to_q.assign(dev.caps().max_qp, ~0u);
  for (uint32_t q = 0; q < nq_; ++q) {
    sw::QpInitAttr ia;
    ia.send_cq = hc.scq[q / per_cq].get();
    ia.recv_cq = hc.rcq[q / per_cq].get();
    ia.cap.max_send_wr = plan_.sq_entries;
    ia.cap.max_recv_wr = plan_.sq_entries;
    ia.wire_ext = cfg_.mode == WireMode::Ext;
    hc.qps.push_back(dev.create_qp(*hc.pd, ia));
    QpSide& s = hc.sides[q];
    s.qpn = hc.qps.back()->qp_num();
    s.pd = hc.pd->handle();
    s.src_key = s.dst_key = hc.mr->lkey();
    hc.qpn_to_q[s.qpn] = q;
    hc.sq_psn.push_back(static_cast<uint32_t>(SplitMix64::child(cfg_.seed, 0x2000 + 2 * q + h) & 0xFFFFFF));
  }
  batch.finish();
  cqe_next_[h].assign(nq_, 0);
  hc.next_send.assign(nq_, 0);
  hc.done_send.assign(nq_, 0);
  hc.next_recv.assign(nq_, 0);
  hc.done_recv.assign(nq_, 0);
}

void Runner::connect() {
  // Both NICs take their QP_MODIFY commands back to back (CMD_STATUS read once at the end), so
  // connecting 16K QPs costs register writes, not a read round trip per command. All QPs go to
  // INIT, then to RTR, then to RTS: consecutive commands then differ in few CMD_DATA words,
  // and the host library writes only those.
  sw::CommandBatch batch0(*host_[0].dev), batch1(*host_[1].dev);
  for (const sw::QpState next : {sw::QpState::Init, sw::QpState::Rtr, sw::QpState::Rts}) {
    for (uint32_t h = 0; h < 2; ++h) {
      HostCtx& me = host_[h];
      const HostCtx& peer = host_[1 - h];
      for (uint32_t q = 0; q < nq_; ++q) {
        sw::QueuePair& qp = *me.qps[q];
        sw::QpAttr a;
        a.qp_state = next;
        if (next == sw::QpState::Init) {
          a.qp_access_flags = sw::Access::RemoteWrite | sw::Access::RemoteRead;
          qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::PkeyIndex | sw::QpAttrMask::Port |
                           sw::QpAttrMask::AccessFlags);
        } else if (next == sw::QpState::Rtr) {
          a.path_mtu = mtu_enum(cfg_.mtu);
          a.dest_qp_num = peer.sides[q].qpn;
          a.rq_psn = peer.sq_psn[q];
          a.ah_attr.dmac = 0x020000000001ull + (1 - h);
          a.ah_attr.dip = 0x0A000001u + (1 - h);
          a.min_rnr_timer = 1;
          a.max_dest_rd_atomic = 16;
          qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Av | sw::QpAttrMask::PathMtu |
                           sw::QpAttrMask::DestQpn | sw::QpAttrMask::RqPsn |
                           sw::QpAttrMask::MaxDestRdAtomic | sw::QpAttrMask::MinRnrTimer);
        } else {
          // Local ACK timeout from --timeout (default 8: 4.096 us * 2^8 = 1 ms, far above the
          // simulated round trip).
          a.sq_psn = me.sq_psn[q];
          a.timeout = uint8_t(cfg_.timeout);
          a.retry_cnt = uint8_t(cfg_.retry_cnt);
          a.rnr_retry = 7;
          a.max_rd_atomic = 16;
          qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Timeout | sw::QpAttrMask::RetryCnt |
                           sw::QpAttrMask::RnrRetry | sw::QpAttrMask::SqPsn | sw::QpAttrMask::MaxQpRdAtomic);
        }
      }
    }
  }
  batch0.finish();
  batch1.finish();
}

// Posts up to max_n further messages of QP q on host h with one doorbell.
bool Runner::post_sends(uint32_t h, uint32_t q, uint64_t max_n) {
  HostCtx& hc = host_[h];
  const HostCtx& peer = host_[1 - h];
  sw::QueuePair& qp = *hc.qps[q];
  sw::Weir* weir = h == 0 ? weir_.get() : nullptr;
  const uint64_t room = weir ? weir->send_room(qp) : qp.sq_size() - qp.sq_outstanding();
  uint64_t n = std::min({max_n, cfg_.iters - hc.next_send[q], room});
  if (stopped_) {
    // After the duration only up to the next signaled WR, whose completion retires the rest.
    const uint64_t se = cfg_.signal_every;
    n = std::min(n, (se - hc.next_send[q] % se) % se);
  }
  if (n == 0) return false;
  const QpSide& me = hc.sides[q];
  const QpSide& pe = peer.sides[q];
  for (uint64_t k = 0; k < n; ++k) {
    // the WR the reference model expects, posted through the host library, after the host has
    // stored the message's own bytes into its source slot
    const uint64_t i = hc.next_send[q] + k;
    const verif::SendWr v = make_send(cfg_, plan_, h, me, pe, q, i);
    store_message(v.store);
    const uint32_t dh = cfg_.op == Op::Read ? h : 1 - h;
    if (cfg_.op != Op::Send) track(dh, q, i, true);  // a receive tracks a SEND's destination
    const bool fault = fault_here(q, i);
    if (fault && cfg_.fault == RunConfig::Fault::Lost) {
      fault_saved_.resize(plan_.sizes[q][i]);
      world_->memory(dh).read(dst_addr(dh, q, i), fault_saved_.data(), fault_saved_.size());
    }
    sw::SendWr& w = wr_scratch_[k];
    sw::Sge& s = sge_scratch_[k];
    w = sw::SendWr{};
    w.wr_id = v.wr_id;
    w.sg_list = &s;
    w.num_sge = 1;
    w.send_flags = v.signaled ? sw::SendFlags::Signaled : 0u;
    w.next = k + 1 < n ? &wr_scratch_[k + 1] : nullptr;
    w.opcode = static_cast<sw::WrOpcode>(v.opcode);   // both follow ibv_wr_opcode
    w.imm_data = v.imm;
    if (fault && cfg_.fault == RunConfig::Fault::Imm) w.imm_data ^= 0x00010000u;
    w.remote_addr = v.raddr;
    w.rkey = v.rkey;
    s.addr = v.laddr;
    s.length = v.length;
    s.lkey = v.lkey;
    if (fault && cfg_.fault == RunConfig::Fault::Misplace) {
      if (cfg_.op == Op::Write) w.remote_addr += 64;
      if (cfg_.op == Op::Read) s.addr += 64;
    }
  }
  const sw::SendWr* bad = nullptr;
  if (int err = weir ? weir->post_send(qp, &wr_scratch_[0], &bad) : qp.post_send(&wr_scratch_[0], &bad)) {
    fail("host " + std::to_string(h) + " QP " + std::to_string(qp.qp_num()) + ": post_send failed (errno " +
         std::to_string(err) + ")");
    return false;
  }
  const double now = world_->now_ns();
  if (!t_first_set_) {
    res_.t_first_ns = now;
    t_first_set_ = true;
  }
  if (qp_[q].first_post_ns < 0) qp_[q].first_post_ns = now;
  post_ns_.insert(post_ns_.end(), n, now);
  if (cfg_.bidir) dir_post_ns_[h].insert(dir_post_ns_[h].end(), n, now);
  res_.posted += n;
  hc.next_send[q] += n;
  return true;
}

// Posts what QP q of host h may post now: with -l lists of exactly post_list WRs (the last of
// a QP may be shorter), else everything that fits once post_batch WRs can be posted, in one list.
void Runner::refill(uint32_t h, uint32_t q) {
  const HostCtx& hc = host_[h];
  auto room = [&] { return plan_.inflight - (hc.next_send[q] - hc.done_send[q]); };
  auto left = [&] { return cfg_.iters - hc.next_send[q]; };
  if (cfg_.post_list) {
    while (left() && room() >= std::min<uint64_t>(cfg_.post_list, left()))
      if (!post_sends(h, q, cfg_.post_list)) break;
    return;
  }
  const uint64_t batch = std::min<uint64_t>(cfg_.post_batch, plan_.inflight);
  if (room() && room() >= std::min(batch, left())) post_sends(h, q, room());
}

// A requester message of host h's QP q with `len` bytes completed now.
void Runner::retire(uint32_t h, uint32_t q, uint64_t len) {
  const double now = world_->now_ns();
  done_ns_.push_back(now);
  if (cfg_.bidir) dir_done_ns_[h].push_back(now);
  if (!in_window(now)) return;
  QpResult& r = qp_[q];
  r.bytes += len;
  ++r.messages;
  r.last_done_ns = now;
  res_.bytes += len;
  ++res_.messages;
  DirResult& d = res_.dirs[h];
  d.bytes += len;
  ++d.messages;
  if (cfg_.period_us > 0 && !res_.periods.empty()) {
    // --run_infinitely: the period the completion falls in
    const double k = std::floor((now - res_.t_first_ns) / (cfg_.period_us * 1000.0));
    PeriodResult& p = res_.periods[std::min(res_.periods.size() - 1, size_t(std::max(0.0, k)))];
    p.bytes += len;
    ++p.messages;
    if (h == 0) ++p.local_messages;
  }
}

// A receive completion of message i of QP q on host h carries the message's own immediate.
void Runner::check_imm(uint32_t h, uint32_t q, uint64_t i, const sw::WorkCompletion& wc) {
  const uint32_t want = bytes_.imm(MessageRef{1 - h, q, i});
  ++res_.checked_imms;
  if ((wc.wc_flags & sw::WcFlags::WithImm) && wc.imm_data == want) return;
  data_failed_ = true;
  char b[200];
  std::snprintf(b, sizeof b, "immediate: host %u QP %u iteration %llu: expected %s, got %s%s", h, q,
                static_cast<unsigned long long>(i), hex(want).c_str(), hex(wc.imm_data).c_str(),
                (wc.wc_flags & sw::WcFlags::WithImm) ? "" : " (completion without IBV_WC_WITH_IMM)");
  fail(b);
}

uint64_t Runner::expected_posted() const {
  uint64_t n = 0;
  for (uint32_t h = 0; h < 2; ++h) {
    if (!sends(h)) continue;
    for (uint32_t q = 0; q < nq_; ++q) {
      const uint64_t posted = host_[h].next_send[q];
      n += signaled_count(cfg_, posted) + (has_recv(cfg_) ? posted : 0);
    }
  }
  return n;
}

bool Runner::bandwidth_done() const {
  if (cfg_.duration_us <= 0) return res_.completions >= plan_.expected_completions;
  if (!stopped_) return false;
  for (uint32_t h = 0; h < 2; ++h)
    for (uint32_t q = 0; sends(h) && q < nq_; ++q) {
      const uint64_t n = host_[h].next_send[q];
      if (n % cfg_.signal_every && n < cfg_.iters) return false;  // its last WR is not signaled yet
    }
  return res_.completions >= expected_posted();
}

void Runner::post_recvs(uint32_t h, uint32_t q) {
  HostCtx& hc = host_[h];
  sw::QueuePair& qp = *hc.qps[q];
  const uint64_t room = qp.rq_size() - qp.rq_outstanding();
  // At most one receive per destination slot: a slot is reused only after its message was checked.
  const uint64_t free_slots = hc.done_recv[q] + dslots_ - hc.next_recv[q];
  const uint64_t n = std::min({cfg_.iters - hc.next_recv[q], room, free_slots});
  if (n == 0) return;
  const QpSide& me = hc.sides[q];
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t i = hc.next_recv[q] + k;
    if (cfg_.op == Op::Send) track(h, q, i, true);  // a WRITE's destination is tracked by its sender
    sw::RecvWr& w = rwr_scratch_[k];
    sw::Sge& s = sge_scratch_[k];
    w = sw::RecvWr{};
    w.wr_id = recv_wr_id(q, i);
    w.sg_list = &s;
    w.num_sge = 1;
    w.next = k + 1 < n ? &rwr_scratch_[k + 1] : nullptr;
    s.addr = me.dst + dst_offset(cfg_, plan_, i);
    s.length = static_cast<uint32_t>(plan_.stride);
    s.lkey = me.dst_key;
    if (fault_here(q, i) && cfg_.fault == RunConfig::Fault::Misplace) s.addr += 64;
  }
  const sw::RecvWr* bad = nullptr;
  if (int err = qp.post_recv(&rwr_scratch_[0], &bad)) {
    fail("host " + std::to_string(h) + " QP " + std::to_string(qp.qp_num()) + ": post_recv failed (errno " +
         std::to_string(err) + ")");
    return;
  }
  hc.next_recv[q] += n;
}

void Runner::poll_cq(uint32_t h, sw::CompletionQueue& cq, verif::QueueKind kind) {
  HostCtx& hc = host_[h];
  sw::Weir* weir = h == 0 && kind == verif::QueueKind::Send ? weir_.get() : nullptr;
  for (;;) {
    // Through Weir, n < kPollBatch also means the CQ is empty (hidden CQEs are polled past).
    const int n = weir ? weir->poll_cq(cq, kPollBatch, wc_) : cq.poll_cq(kPollBatch, wc_);
    for (int k = 0; k < n; ++k) {
      const sw::WorkCompletion& wc = wc_[k];
      ++res_.completions;
      res_.t_last_ns = last_progress_ns_ = world_->now_ns();
      if (wc.status != sw::WcStatus::Success) ++res_.errors;
      verif::Completion c;
      c.wr_id = wc.wr_id;
      c.status = static_cast<verif::WcStatus>(wc.status);
      c.opcode = static_cast<verif::WcOpcode>(wc.opcode);
      c.byte_len = wc.byte_len;
      c.imm = wc.imm_data;
      c.wc_flags = wc.wc_flags;
      c.qpn = wc.qp_num;
      const uint32_t q = wc.qp_num < hc.qpn_to_q.size() ? hc.qpn_to_q[wc.qp_num] : ~0u;
      // The immediate first: its own message names host, QP and iteration.
      if (cfg_.imm && kind == verif::QueueKind::Recv && q != ~0u && wc.status == sw::WcStatus::Success &&
          ((wc.wr_id >> 40) & 0x7FFFFF) == q && (wc.wr_id & kIterMask) < cfg_.iters)
        check_imm(h, q, wc.wr_id & kIterMask, wc);
      if (!sb_->on_completion(h, kind, c)) fail("scoreboard: " + sb_->first_mismatch());
      if (q == ~0u) {
        fail("host " + std::to_string(h) + ": completion for unknown QPN " + std::to_string(wc.qp_num));
        continue;
      }
      ++qp_[q].completions;
      if (kind == verif::QueueKind::Send) {
        // A completion also retires the unsignaled WRs before it.
        const uint64_t i = wc.wr_id & ((uint64_t(1) << 40) - 1);
        if ((wc.wr_id >> 40) == q && i < cfg_.iters && i >= hc.done_send[q]) {
          const uint32_t dh = cfg_.op == Op::Read ? h : 1 - h;
          for (uint64_t k = hc.done_send[q]; k <= i; ++k) {
            if (cfg_.op != Op::Send) track(dh, q, k, false);
            if (wc.status != sw::WcStatus::Success && k == i) break;
            // WRITE: the bytes at the responder; READ: the local destination (SEND: at the
            // receive completion).
            if (cfg_.op != Op::Send) check_polled(dh, h, q, k);
            retire(h, q, plan_.sizes[q][k]);
          }
          hc.done_send[q] = i + 1;
        } else {
          ++hc.done_send[q];
        }
      } else {
        const uint64_t i = wc.wr_id & kIterMask;
        if (((wc.wr_id >> 40) & 0x7FFFFF) == q && i < cfg_.iters && cfg_.op == Op::Send) {
          // SEND: the receive placed the data (a WRITE with immediate is checked at its sender)
          if (wc.status == sw::WcStatus::Success) check_polled(h, 1 - h, q, i);
          track(h, q, i, false);
        }
        ++hc.done_recv[q];
      }
      if (kind == verif::QueueKind::Send && sends(h) && !is_dirty_[h][q]) {
        is_dirty_[h][q] = 1;
        dirty_[h].push_back(q);
      }
      if (kind == verif::QueueKind::Recv && !cfg_.latency) post_recvs(h, q);
    }
    if (n < kPollBatch) break;
  }
}

void Runner::poll_host(uint32_t h) {
  HostCtx& hc = host_[h];
  for (auto& cq : hc.scq) poll_cq(h, *cq, verif::QueueKind::Send);
  if (has_recv(cfg_))
    for (auto& cq : hc.rcq) poll_cq(h, *cq, verif::QueueKind::Recv);
}

// Watchdog and cycle limit; false when the run must stop.
bool Runner::check_limits() {
  if (!res_.failure.empty()) return false;
  const double now = world_->now_ns();
  if (now - last_progress_ns_ > cfg_.watchdog_ns()) {
    // A NIC that went fatal (a DMA error response, decision 108) is why nothing completes.
    for (uint32_t h = 0; h < 2; ++h)
      if (auto st = host_[h].dev->query_fatal()) {
        fail("host " + std::to_string(h) + "'s NIC is fatal: " + sw::to_string(*st) +
             " (it sends and writes nothing more until reset)");
        return false;
      }
    char b[256];
    std::snprintf(b, sizeof b,
                  "watchdog: no completion for %.1f us of simulated time (completions %llu of %llu, cycle %llu)",
                  (now - last_progress_ns_) / 1000.0, static_cast<unsigned long long>(res_.completions),
                  static_cast<unsigned long long>(plan_.expected_completions),
                  static_cast<unsigned long long>(world_->cycle()));
    fail(b);
    return false;
  }
  if (cfg_.max_cycles && world_->cycle() >= cfg_.max_cycles) {
    fail("--max-cycles " + std::to_string(cfg_.max_cycles) + " reached (completions " +
         std::to_string(res_.completions) + " of " + std::to_string(plan_.expected_completions) + ")");
    return false;
  }
  return true;
}

void Runner::bandwidth_loop() {
  // Receivers: host 1, and host 0 too when both send (-b).
  if (has_recv(cfg_))
    for (uint32_t h = 0; h < 2; ++h)
      for (uint32_t q = 0; sends(1 - h) && q < nq_; ++q) post_recvs(h, q);
  for (uint32_t h = 0; h < 2; ++h)
    for (uint32_t q = 0; sends(h) && q < nq_; ++q) refill(h, q);
  while (!bandwidth_done()) {
    for (uint32_t k = 0; k < cfg_.poll_cycles; ++k) world_->step();
    if (cfg_.duration_us > 0 && !stopped_ && !in_window(world_->now_ns())) {
      // The duration is over: let every QP post up to its next signaled WR, and no further.
      stopped_ = true;
      for (uint32_t h = 0; h < 2; ++h)
        for (uint32_t q = 0; sends(h) && q < nq_; ++q) refill(h, q);
    }
    poll_host(0);
    poll_host(1);
    // Refill a QP once a batch of slots is free (or the rest of its messages fit).
    for (uint32_t h = 0; h < 2; ++h) {
      for (uint32_t q : dirty_[h]) {
        is_dirty_[h][q] = 0;
        refill(h, q);
      }
      dirty_[h].clear();
    }
    if (!check_limits()) return;
  }
  res_.finished = true;
}

void Runner::latency_loop() {
  // Ping-pong (WRITE: the receiver polls the last byte; SEND: the receive completion), or for
  // READ the time from posting to the completion.
  const bool ping_pong = cfg_.op != Op::Read;
  if (has_recv(cfg_))
    for (uint32_t h = 0; h < 2; ++h) post_recvs(h, 0);
  std::vector<double> samples;
  samples.reserve(cfg_.iters);
  HostCtx& a = host_[0];
  HostCtx& b = host_[1];
  auto arrived = [&](uint32_t h, uint64_t i) {
    HostCtx& hc = host_[h];
    if (has_recv(cfg_)) return hc.done_recv[0] > i;  // the receive completion (with immediate: as perftest)
    const uint8_t want = uint8_t(i % plan_.slots + 1);
    return world_->memory(h).read_u8(hc.sides[0].dst + plan_.stride - 1) == want;
  };
  for (uint64_t i = 0; i < cfg_.iters; ++i) {
    // The previous message was checked before its source and destination slots are reused.
    while (a.done_send[0] < i || !post_sends(0, 0, 1)) {
      if (!res_.failure.empty() || !check_limits()) return;
      world_->step();
      poll_host(0);
      poll_host(1);
    }
    const double t0 = world_->now_ns();
    if (ping_pong) {
      bool answered = false;
      for (;;) {
        world_->step();
        poll_host(0);
        poll_host(1);
        if (has_recv(cfg_)) {
          post_recvs(1, 0);
          post_recvs(0, 0);
        }
        if (!answered && arrived(1, i) && b.done_send[0] >= i) answered = post_sends(1, 0, 1);
        if (answered && arrived(0, i)) break;
        if (!check_limits()) return;
        if (world_->now_ns() - t0 > cfg_.watchdog_ns()) {
          fail("watchdog: ping-pong round trip " + std::to_string(i) + " did not return within " +
               std::to_string(cfg_.watchdog_ns() / 1000.0) + " us of simulated time");
          return;
        }
      }
      samples.push_back((world_->now_ns() - t0) / 2);
    } else {
      while (a.done_send[0] <= i) {
        world_->step();
        poll_host(0);
        if (!check_limits()) return;
      }
      samples.push_back(res_.t_last_ns - t0);
    }
  }
  while (res_.completions < plan_.expected_completions) {
    world_->step();
    poll_host(0);
    poll_host(1);
    if (!check_limits()) return;
  }
  res_.finished = true;
  res_.latency = summarize_latency(std::move(samples));
  res_.has_latency = true;
}

// Lets posted DMA writes and frames in flight settle before memory is compared.
void Runner::drain() {
  for (uint64_t k = 0; k < 200000 && !world_->idle(); ++k) world_->step();
  for (int k = 0; k < 64; ++k) world_->step();
}

void Runner::collect(RunResult& r, double main_wall_s, uint64_t main_cycles) {
  r.expected_completions = cfg_.duration_us > 0 && !cfg_.latency ? expected_posted() : plan_.expected_completions;
  // Goodput over the first post .. last completion, or with -D over the duration.
  const double span = cfg_.duration_us > 0 ? cfg_.duration_us * 1000.0 : r.t_last_ns - r.t_first_ns;
  r.measured_ns = span > 0 ? span : 0;
  if (span > 0 && r.messages) {
    r.goodput_gbps = static_cast<double>(r.bytes) * 8.0 / span;
    r.msg_rate_mrps = static_cast<double>(r.messages) / span * 1000.0;
  }
  // BW peak (unless -N): over every message, and with -b over each host's own.
  r.has_peak = !cfg_.latency && !cfg_.no_peak;
  if (r.has_peak && !done_ns_.empty()) {
    uint64_t host_bytes[2] = {0, 0};
    for (uint32_t q = 0; q < nq_; ++q)
      for (uint32_t h = 0; h < 2; ++h)
        for (uint64_t i = 0; sends(h) && i < host_[h].done_send[q] && i < plan_.sizes[q].size(); ++i)
          host_bytes[h] += plan_.sizes[q][i];
    const double rate = peak_msg_rate_per_ns(post_ns_, done_ns_);
    r.peak_msg_rate_mrps = rate * 1000.0;
    r.peak_gbps = rate * 8.0 * static_cast<double>(host_bytes[0] + host_bytes[1]) / static_cast<double>(done_ns_.size());
    for (uint32_t h = 0; h < 2 && cfg_.bidir; ++h) {
      if (dir_done_ns_[h].empty()) continue;
      const double hr = peak_msg_rate_per_ns(dir_post_ns_[h], dir_done_ns_[h]);
      r.dirs[h].peak_msg_rate_mrps = hr * 1000.0;
      r.dirs[h].peak_gbps = hr * 8.0 * static_cast<double>(host_bytes[h]) / static_cast<double>(dir_done_ns_[h].size());
    }
    if (!cfg_.bidir) {
      r.dirs[0].peak_gbps = r.peak_gbps;
      r.dirs[0].peak_msg_rate_mrps = r.peak_msg_rate_mrps;
    }
  }
  for (DirResult& d : r.dirs)
    if (span > 0 && d.messages) {
      d.goodput_gbps = static_cast<double>(d.bytes) * 8.0 / span;
      d.msg_rate_mrps = static_cast<double>(d.messages) / span * 1000.0;
    }
  for (PeriodResult& p : r.periods) {
    const double ns = cfg_.period_us * 1000.0;
    p.goodput_gbps = static_cast<double>(p.bytes) * 8.0 / ns;
    p.msg_rate_mrps = static_cast<double>(p.messages) / ns * 1000.0;
  }
  std::vector<double> goodputs;
  for (QpResult& q : qp_) {
    const double own = cfg_.duration_us > 0 ? span : q.last_done_ns - q.first_post_ns;
    if (own > 0 && q.messages) {
      q.goodput_gbps = static_cast<double>(q.bytes) * 8.0 / own;
      q.msg_rate_mrps = static_cast<double>(q.messages) / own * 1000.0;
    }
    goodputs.push_back(q.goodput_gbps);
  }
  r.per_qp = qp_;
  r.jain_index = jain_index(goodputs);
  if (weir_) {
    const sw::WeirStats& s = weir_->stats();
    r.has_weir = true;
    WeirReport& w = r.weir;
    w.rate_gbps = weir_->rate_gbps();
    w.ewma_delay_ns = weir_->ewma_delay_ns();
    w.base_delay_ns = weir_->base_delay_ns();
    w.active_qps = weir_->active_qps();
    w.max_active_qps = s.max_active;
    w.posted = s.posted;
    w.wqes_rung = s.wqes_rung;
    w.doorbells = s.doorbells;
    w.deferred = s.deferred;
    w.slices = s.slices;
    w.hidden_cqes = s.hidden_cqes;
    w.increases = s.increases;
    w.holds = s.holds;
    w.decreases = s.decreases;
    w.timestamp_syncs = s.timestamp_syncs;
  }
  r.sim_cycles = world_->cycle();
  r.sim_time_us = world_->now_ns() / 1000.0;
  r.cycles_per_s = main_wall_s > 0 ? main_cycles / main_wall_s : 0;
  if (checker_) {
    r.frames = checker_->frames();
    r.protocol_violations = checker_->violation_count();
    r.wire_retransmits = checker_->resent_requests();
    r.wire_rewinds = checker_->retransmits();
  }
  r.bus_violations = world_->violations();
  r.slots = plan_.slots;
  r.inflight = plan_.inflight;
  r.stride = plan_.stride;
  r.hosts.resize(2);
  for (uint32_t h = 0; h < 2; ++h) {
    HostReport& hr = r.hosts[h];
    hr.pcie = world_->pcie(h).stats();
    hr.pcie_read_p50_ns = world_->pcie(h).read_latency().percentile(0.5);
    hr.pcie_read_p99_ns = world_->pcie(h).read_latency().percentile(0.99);
    hr.eth = world_->eth(h).stats();
    hr.eth_tx_utilisation = span > 0 ? world_->eth(h).stats().tx_busy_ns / span : 0;
    hr.link = world_->link(0).stats(int(h));
    hr.link_lost = hr.link.lost;
    hr.pause_requests = world_->link(0).pause_requests(int(h));
    for (uint32_t q = 0; q < nq_; ++q) {
      hr.qpns.push_back(host_[h].sides[q].qpn);
      hr.sq_psns.push_back(host_[h].sq_psn[q]);
      hr.sq_bases.push_back(host_[h].qps[q]->sq_base());
    }
    hr.sides = host_[h].sides;
  }
  // NIC counters last: reading them advances the simulation.
  for (uint32_t h = 0; h < 2; ++h) {
    HostReport& hr = r.hosts[h];
    try {
      for (int c = 0; c < abi::NUM_COUNTERS; ++c)
        hr.counters.emplace_back(abi::counter_name(c), host_[h].dev->read_counter(c));
      hr.counters_read = true;
      if (auto st = host_[h].dev->query_fatal()) {
        hr.nic_fatal = sw::to_string(*st);
        if (r.failure.empty())
          r.failure = "host " + std::to_string(h) + "'s NIC is fatal: " + hr.nic_fatal;
      }
      r.retransmits += hr.counters[abi::CNT_TX_RETRANSMIT].second;
      r.rx_overflow_drops += hr.counters[abi::CNT_RX_DROP_OVERFLOW].second;
      r.ack_timeouts += hr.counters[abi::CNT_ACK_TIMEOUT].second;
      r.rnr_naks += hr.counters[abi::CNT_RNR_WAIT].second;
    } catch (const std::exception& e) {
      if (r.failure.empty()) r.failure = std::string("reading NIC counters: ") + e.what();
    }
  }
}

// ------------------------------------------------------------------------ per-message data

// The host writes the message's own bytes into its source slot (as software would refill a
// buffer) before the WR is posted.
void Runner::store_message(const verif::HostStore& st) {
  const MessageRef m = MessageBytes::from_tag(st.tag);
  SimBackend& be = *host_[st.host].be;
  for (uint64_t off = 0; off < st.len; off += kChunk) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, st.len - off));
    bytes_.fill(m, st.len, off, chunk_.data(), n);
    be.mem_write(st.pa + off, chunk_.data(), n);
  }
}

// Marks message i of QP q as in flight towards destination host dh (its slot may be written),
// or no longer (the slot is closed to the NIC until its next message).
void Runner::track(uint32_t dh, uint32_t q, uint64_t i, bool in_flight) {
  const uint64_t slot = i % dslots_;
  uint64_t& v = dm_[dh].slot_msg[uint64_t(q) * dslots_ + slot];
  if (in_flight)
    v = i + 1;
  else if (v == i + 1)
    v = 0;
}

// Compares the destination slot of message i of QP q (posted by `sender`) on host dh with the
// message's bytes; an empty string when they match.
std::string Runner::verify(uint32_t dh, uint32_t sender, uint32_t q, uint64_t i) {
  const uint64_t len = plan_.sizes[q][i];
  const uint64_t addr = dst_addr(dh, q, i);
  const MessageRef m{sender, q, i};
  for (uint64_t off = 0; off < len; off += kChunk) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, len - off));
    world_->memory(dh).read(addr + off, chunk_.data(), n);
    const int64_t d = bytes_.first_difference(m, len, off, chunk_.data(), n);
    if (d < 0) continue;
    std::vector<uint8_t> got(len);
    world_->memory(dh).read(addr, got.data(), len);
    return explain(dh, sender, q, i, got);
  }
  return {};
}

// Describes how the destination of a message differs from its bytes: the first differing
// byte, how many differ, and what the slot holds instead if it is recognisable.
std::string Runner::explain(uint32_t dh, uint32_t sender, uint32_t q, uint64_t i, const std::vector<uint8_t>& got) {
  const uint64_t len = got.size();
  const uint64_t addr = dst_addr(dh, q, i);
  std::vector<uint8_t> want(len);
  bytes_.fill(MessageRef{sender, q, i}, len, 0, want.data(), len);
  uint64_t first = len, ndiff = 0;
  for (uint64_t k = 0; k < len; ++k)
    if (want[k] != got[k]) {
      if (first == len) first = k;
      ++ndiff;
    }
  const uint64_t slot = i % dslots_;
  char b[400];
  std::snprintf(b, sizeof b,
                "host %u QP %u (QPN %s) iteration %llu slot %llu offset %llu (address %s): expected %s, got %s; "
                "%llu of %llu bytes differ",
                dh, q, hex(host_[dh].sides[q].qpn).c_str(), static_cast<unsigned long long>(i),
                static_cast<unsigned long long>(slot), static_cast<unsigned long long>(first),
                hex(addr + first).c_str(), hex(want[first]).c_str(), hex(got[first]).c_str(),
                static_cast<unsigned long long>(ndiff), static_cast<unsigned long long>(len));
  std::string r = b;
  // What the slot holds instead: an earlier message of this slot, or its initial contents.
  auto holds = [&](const std::vector<uint8_t>& other) {
    for (uint64_t k = first; k < len; ++k)
      if (got[k] != want[k] && got[k] != other[k]) return false;
    return true;
  };
  if (i >= dslots_) {
    std::vector<uint8_t> prev(len);
    bytes_.fill(MessageRef{sender, q, i - dslots_}, len, 0, prev.data(), len);
    if (holds(prev)) return r + "; those bytes are still iteration " + std::to_string(i - dslots_) + "'s (message not placed)";
  }
  const uint32_t k = dm_[dh].dst_region[q];
  const uint64_t span = dm_[dh].span;
  std::vector<uint8_t> init(span);
  fill_random(cfg_.seed, 0x100000 + k, init.data(), span);
  const uint64_t base = dst_offset(cfg_, plan_, i);
  std::vector<uint8_t> orig(init.begin() + ptrdiff_t(base), init.begin() + ptrdiff_t(base + len));
  if (holds(orig)) r += "; those bytes are the slot's initial contents (message not placed)";
  // Misplaced: the message's leading bytes elsewhere in this QP's destination region.
  if (len >= 16 && dm_[dh].span <= (uint64_t(256) << 20)) {
    const uint64_t region = dm_[dh].span;
    std::vector<uint8_t> all(region);
    const uint64_t rbase = host_[dh].sides[q].dst;
    world_->memory(dh).read(rbase, all.data(), region);
    const auto it = std::search(all.begin(), all.end(), want.begin(), want.begin() + 16);
    if (it != all.end()) {
      const int64_t at = int64_t(it - all.begin()), delta = at - int64_t(base);
      if (delta != 0)
        r += "; its first bytes are at region offset " + std::to_string(at) + " (" + (delta > 0 ? "+" : "") +
             std::to_string(delta) + " bytes from the slot: misplaced)";
    }
  }
  return r;
}

void Runner::check_polled(uint32_t dh, uint32_t sender, uint32_t q, uint64_t i) {
  const uint64_t len = plan_.sizes[q][i];
  if (fault_here(q, i)) {
    const uint64_t addr = dst_addr(dh, q, i);
    if (cfg_.fault == RunConfig::Fault::Corrupt && len)
      world_->memory(dh).write_u8(addr + len / 2, world_->memory(dh).read_u8(addr + len / 2) ^ 0x5A);
    if (cfg_.fault == RunConfig::Fault::Lost)
      world_->memory(dh).write(addr, fault_saved_.data(), fault_saved_.size());
  }
  ++res_.checked_messages;
  res_.checked_bytes += len;
  const std::string why = verify(dh, sender, q, i);
  if (!why.empty()) {
    data_failed_ = true;
    fail("data: " + why);
  }
}

// [a, b) on host h: empty when the NIC may write it now, else why not.
std::string Runner::dma_stray(uint32_t h, uint64_t a, uint64_t b) const {
  const DmaMap& m = dm_[h];
  for (const auto& [lo, hi] : m.cqs)
    if (a >= lo && b <= hi) return {};
  if (a < m.block || b > m.block + m.len) return "outside the data buffers and the CQ rings";
  const uint64_t j = (a - m.block) / m.span, off = a - m.block - j * m.span;
  if (b - m.block > (j + 1) * m.span) return "across two data regions";
  const uint32_t q = m.region_q[j];
  if (q == ~0u) return "in a source region";
  if (plan_.stride == 0 || off >= uint64_t(dslots_) * plan_.stride)
    return "in the guard after QP " + std::to_string(q) + "'s destination slots";
  const uint64_t slot = off / plan_.stride;
  const uint64_t v = m.slot_msg[uint64_t(q) * dslots_ + slot];
  const std::string where = "QP " + std::to_string(q) + " destination slot " + std::to_string(slot);
  if (v == 0) return "in " + where + ", which has no message in flight";
  const uint64_t start = slot * plan_.stride, len = plan_.sizes[q][v - 1];
  if (off < start || off + (b - a) > start + len)
    return "in " + where + " past the " + std::to_string(len) + " bytes of iteration " + std::to_string(v - 1) +
           " in flight there";
  return {};
}

void Runner::on_dma_write(uint32_t h, uint64_t addr, const uint8_t* data, uint64_t strb, double t) {
  if (!strb) return;
  res_.dma_write_bytes += static_cast<uint64_t>(__builtin_popcountll(strb));
  // Strobed runs (the NIC's strobes are contiguous; check each run otherwise).
  for (uint64_t m = strb; m;) {
    const unsigned lo = static_cast<unsigned>(__builtin_ctzll(m));
    const uint64_t rest = ~m >> lo;
    const unsigned n = rest ? static_cast<unsigned>(__builtin_ctzll(rest)) : 64 - lo;
    m &= n + lo >= 64 ? 0 : ~uint64_t(0) << (lo + n);
    const std::string why = dma_stray(h, addr + lo, addr + lo + n);
    if (why.empty()) continue;
    ++res_.dma_stray_writes;
    data_failed_ = true;
    char b[160];
    std::snprintf(b, sizeof b, "DMA write to host %u at %s, %u bytes, at %.1f ns (cycle %llu): ", h,
                  hex(addr + lo).c_str(), n, t, static_cast<unsigned long long>(world_->cycle()));
    fail(b + why);
    return;
  }
  // A CQE lands: the bytes of the message(s) it completes must already be in host memory.
  for (const auto& [lo, hi] : dm_[h].cqs) {
    if (addr + 64 <= lo || addr >= hi) continue;
    for (unsigned half = 0; half < 64; half += 32)
      if (((strb >> half) & 0xFFFFFFFFull) == 0xFFFFFFFFull && addr + half >= lo && addr + half + 32 <= hi)
        on_cqe(h, data + half, t);
    break;
  }
}

void Runner::on_cqe(uint32_t h, const uint8_t* p, double t) {
  abi::Cqe c;
  std::memcpy(&c, p, sizeof c);
  if (c.status != 0 || c.qpn >= host_[h].qpn_to_q.size()) return;
  const uint32_t q = host_[h].qpn_to_q[c.qpn];
  const uint64_t i = c.wr_id & kIterMask;
  if (q == ~0u || ((c.wr_id >> 40) & 0x7FFFFF) != q || i >= cfg_.iters) return;  // the scoreboard reports it
  auto check = [&](uint32_t dh, uint32_t sender, uint64_t k) {
    ++res_.cqe_checked_messages;
    const std::string why = verify(dh, sender, q, k);
    if (why.empty()) return;
    data_failed_ = true;
    char b[160];
    std::snprintf(b, sizeof b, "completion before data: host %u CQE (wr_id %s) landed at %.1f ns, its message is not in place: ",
                  h, hex(c.wr_id).c_str(), t);
    fail(b + why);
  };
  if (c.opcode >= 128) {
    if (has_recv(cfg_)) check(h, 1 - h, i);  // SEND, or the WRITE with immediate this receive completes
    return;
  }
  uint64_t& next = cqe_next_[h][q];
  if (cfg_.op != Op::Send)
    for (uint64_t k = next; k <= i; ++k) check(cfg_.op == Op::Read ? h : 1 - h, h, k);
  next = std::max(next, i + 1);
}

RunResult Runner::run() {
  const auto wall0 = std::chrono::steady_clock::now();
  nq_ = static_cast<uint32_t>(plan_.sizes.size());
  res_.expected_completions = plan_.expected_completions;
  wr_scratch_.resize(plan_.sq_entries);
  chunk_.resize(kChunk);
  sge_scratch_.resize(plan_.sq_entries);
  rwr_scratch_.resize(plan_.sq_entries);
  build_world();
  const std::vector<RegionRef> regs = regions(cfg_);
  {
    std::vector<std::vector<uint8_t>> init(regs.size());
    setup_host(0, regs, init);
    setup_host(1, regs, init);
    connect();
    if (cfg_.weir) {
      sw::WeirConfig wc;
      wc.clock_mhz = cfg_.clock_mhz;
      wc.line_rate_gbps = EthConfig{}.rate_gbps;
      weir_ = std::make_unique<sw::Weir>(*host_[0].dev, wc);
    }
    verif::Workload w = make_verif_workload(cfg_, plan_, host_[0].sides, host_[1].sides, init);
    if (cfg_.duration_us > 0) init_ = std::move(init);
    init.clear();
    pred_ = std::make_unique<verif::Prediction>(verif::predict(w));
  }
  sb_ = std::make_unique<verif::Scoreboard>(*pred_);

  qp_.assign(nq_, QpResult{});
  if (cfg_.period_us > 0) res_.periods.assign(cfg_.periods, PeriodResult{});
  for (uint32_t h = 0; h < 2; ++h) {
    is_dirty_[h].assign(nq_, 0);
    dirty_[h].reserve(nq_);
  }
  const auto main0 = std::chrono::steady_clock::now();
  const uint64_t cyc0 = world_->cycle();
  // set-up: both NICs opened, CQs, MR and every QP created and connected, the prediction built
  res_.setup_us = world_->now_ns() / 1000.0;
  res_.setup_wall_s = std::chrono::duration<double>(main0 - wall0).count();
  last_progress_ns_ = world_->now_ns();
  if (cfg_.latency)
    latency_loop();
  else
    bandwidth_loop();
  const uint64_t main_cycles = world_->cycle() - cyc0;
  const double main_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - main0).count();

  drain();
  // The final memory is compared with the prediction of what was posted: every WR, or with -D
  // the WRs posted before the run stopped posting (a prefix of each QP's plan, predicted anew;
  // the completions were compared against the whole plan, whose prefix is the same).
  verif::Scoreboard* mem_sb = sb_.get();
  std::unique_ptr<verif::Prediction> posted_pred;
  std::unique_ptr<verif::Scoreboard> posted_sb;
  const bool prefix = cfg_.duration_us > 0 && !cfg_.latency;
  if (prefix) {
    std::array<std::vector<uint64_t>, 2> posted;
    for (uint32_t h = 0; h < 2; ++h) posted[h] = host_[h].next_send;
    verif::Workload w = make_verif_workload(cfg_, plan_, host_[0].sides, host_[1].sides, init_, &posted);
    init_.clear();
    posted_pred = std::make_unique<verif::Prediction>(verif::predict(w));
    posted_sb = std::make_unique<verif::Scoreboard>(*posted_pred);
    mem_sb = posted_sb.get();
  }
  const bool mem_ok = mem_sb->check_memory([this](uint32_t h, uint64_t pa, uint8_t* dst, size_t len) {
    world_->memory(h).read(pa, dst, len);
  });
  if (res_.finished && !prefix) sb_->finish();
  if (!mem_ok) fail("memory: " + mem_sb->first_mismatch());
  res_.first_mismatch = sb_->ok() ? mem_sb->first_mismatch() : sb_->first_mismatch();
  ScoreboardReport& sr = res_.scoreboard;
  sr.completions_matched = sb_->completion_matches();
  sr.bytes_matched = mem_sb->byte_matches();
  sr.bytes_skipped = mem_sb->bytes_skipped();
  sr.mismatches = sb_->mismatches() + (prefix ? mem_sb->mismatches() : 0);
  sr.first_mismatch = res_.first_mismatch;
  res_.scoreboard_summary = "completions matched " + std::to_string(sr.completions_matched) + ", bytes matched " +
                            std::to_string(sr.bytes_matched) + ", bytes skipped " +
                            std::to_string(sr.bytes_skipped) + ", mismatches " + std::to_string(sr.mismatches);
  const uint64_t want = prefix ? expected_posted() : plan_.expected_completions;
  res_.data_ok = res_.finished && sb_->ok() && mem_sb->ok() && res_.completions == want && !data_failed_;
  collect(res_, main_wall, main_cycles);
  if (res_.failure.empty() && !res_.data_ok) fail("data check: " + res_.first_mismatch);
  // Flow control makes the link lossless: up to the cable its headroom covers, the RX buffer
  // must never drop a frame for lack of room, whatever the traffic and the link's own losses.
  res_.lossless_cable_ns = max_lossless_cable_ns(cfg_);
  if (!impairs(cfg_) && res_.wire_retransmits && !res_.rx_overflow_drops && !res_.ack_timeouts && !res_.rnr_naks)
    fail("protocol: " + std::to_string(res_.wire_retransmits) +
         " frames resent on a lossless link without a cause (no frame lost, dropped by a NIC, RNR NAKed or timed out)");
  if (res_.rx_overflow_drops && cfg_.link_delay_ns <= res_.lossless_cable_ns)
    fail("RX_DROP_OVERFLOW: " + std::to_string(res_.rx_overflow_drops) +
         " frames dropped for lack of RX buffer on a paused link with a " + fmt_ns(cfg_.link_delay_ns) +
         " ns cable (the pause headroom covers " + fmt_ns(res_.lossless_cable_ns) + " ns)");
  // A stalled run usually has a reason in the NIC's error counters: name the nonzero ones.
  if (!res_.finished && !res_.failure.empty()) {
    std::string why;
    for (uint32_t h = 0; h < 2; ++h)
      for (const auto& [name, v] : res_.hosts[h].counters)
        if (v && name != "TX_FRAMES" && name != "RX_FRAMES" && name != "TX_ACK")
          why += " host" + std::to_string(h) + "." + name + "=" + std::to_string(v);
    if (!why.empty()) res_.failure += "; NIC counters:" + why;
  }
  res_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  // The NIC objects are not torn down: their destructors would issue one command per object
  // through the simulation, which ends here.
  for (HostCtx& hc : host_) {
    for (auto& qp : hc.qps) (void)qp.release();
    (void)hc.mr.release();
    for (auto& cq : hc.scq) (void)cq.release();
    for (auto& cq : hc.rcq) (void)cq.release();
    (void)hc.pd.release();
    (void)hc.dev.release();
  }
  return res_;
}

}  // namespace

RunResult run_workload(const RunConfig& cfg) {
  Runner r(cfg);
  return r.run();
}

}  // namespace srnic::sim
