// qp.cpp: RC queue pairs: creation, state transitions (QP_MODIFY), posting WQEs, retirement,
// software flush after the NIC went fatal.
#include <cerrno>
#include <cstring>

#include "srnic/verbs.hpp"

namespace srnic::sw {

namespace {

unsigned ceil_log2(uint32_t n) {
  unsigned l = 0;
  while ((1u << l) < n) ++l;
  return l;
}

constexpr uint64_t kRingAlign = 4096;
constexpr uint32_t kMaxLength = 1u << 31;

// Allowed transitions and their required/optional attributes (RC), after the kernel's
// qp_state_table restricted to what this NIC supports: no SQD/SQE, no alternate path.
struct Transition {
  bool valid;
  uint32_t req, opt;
};

Transition transition(QpState cur, QpState next) {
  using M = QpAttrMask;
  if (next == QpState::Reset) return {true, 0, 0};
  if (next == QpState::Err) return {cur != QpState::Reset, 0, 0};
  switch (cur) {
    case QpState::Reset:
      if (next == QpState::Init) return {true, M::PkeyIndex | M::Port | M::AccessFlags, 0};
      break;
    case QpState::Init:
      if (next == QpState::Init) return {true, 0, M::PkeyIndex | M::Port | M::AccessFlags};
      if (next == QpState::Rtr)
        return {true, M::Av | M::PathMtu | M::DestQpn | M::RqPsn | M::MaxDestRdAtomic | M::MinRnrTimer,
                M::AccessFlags | M::PkeyIndex};
      break;
    case QpState::Rtr:
      if (next == QpState::Rts)
        return {true, M::Timeout | M::RetryCnt | M::RnrRetry | M::SqPsn | M::MaxQpRdAtomic,
                M::CurState | M::AccessFlags | M::MinRnrTimer};
      break;
    case QpState::Rts:
      if (next == QpState::Rts) return {true, 0, M::CurState | M::AccessFlags | M::MinRnrTimer};
      break;
    default:
      break;
  }
  return {false, 0, 0};
}

}  // namespace

std::unique_ptr<QueuePair> Device::create_qp(const ProtectionDomain& pd, const QpInitAttr& init) {
  if (&pd.device() != this) throw Error(EINVAL, "create_qp: PD belongs to another device");
  if (!init.send_cq || !init.recv_cq) throw Error(EINVAL, "create_qp: send_cq and recv_cq are required");
  if (&init.send_cq->device() != this || &init.recv_cq->device() != this)
    throw Error(EINVAL, "create_qp: CQ belongs to another device");
  const QpCap& c = init.cap;
  if (c.max_send_wr > caps_.max_qp_wr || c.max_recv_wr > caps_.max_qp_wr)
    throw Error(EINVAL, "create_qp: max_send_wr/max_recv_wr above " + std::to_string(caps_.max_qp_wr));
  if (c.max_send_sge > 1 || c.max_recv_sge > 1) throw Error(EINVAL, "create_qp: at most one SGE per WR");
  if (c.max_inline_data) throw Error(EINVAL, "create_qp: inline data is not supported");

  const unsigned log_sq = ceil_log2(c.max_send_wr < 2 ? 2 : c.max_send_wr);
  const unsigned log_rq = ceil_log2(c.max_recv_wr < 2 ? 2 : c.max_recv_wr);
  const uint32_t qpn = alloc_index(qp_used_, caps_.first_qpn, "QP numbers");
  try {
    const uint64_t sq = be_.dma_alloc(size_t(sizeof(abi::SqWqe)) << log_sq, kRingAlign);
    const uint64_t rq = be_.dma_alloc(size_t(sizeof(abi::RqWqe)) << log_rq, kRingAlign);
    std::unique_ptr<QueuePair> qp(new QueuePair(*this, pd, qpn, init, log_sq, log_rq, sq, rq));
    execute(abi::CMD_QP_MODIFY, qpn, &qp->ctx_, sizeof qp->ctx_);  // clean RESET entry
    qps_[qpn] = qp.get();
    return qp;
  } catch (...) {
    qp_used_[qpn] = 0;
    throw;
  }
}

QueuePair::QueuePair(Device& dev, const ProtectionDomain& pd, uint32_t qpn, const QpInitAttr& init,
                     unsigned log_sq, unsigned log_rq, uint64_t sq_base, uint64_t rq_base)
    : dev_(dev), pd_(pd), qpn_(qpn), send_cq_(init.send_cq), recv_cq_(init.recv_cq),
      sq_sig_all_(init.sq_sig_all), log_sq_(log_sq), log_rq_(log_rq), ctx_{} {
  cap_ = init.cap;
  cap_.max_send_wr = 1u << log_sq;
  cap_.max_recv_wr = 1u << log_rq;
  ctx_.state = abi::QPS_RESET;
  ctx_.log_sq_size = uint8_t(log_sq);
  ctx_.log_rq_size = uint8_t(log_rq);
  ctx_.flags = init.wire_ext ? 1 : 0;
  ctx_.pd = pd.handle();
  ctx_.send_cqn = uint16_t(init.send_cq->cqn());
  ctx_.recv_cqn = uint16_t(init.recv_cq->cqn());
  ctx_.sq_base = sq_base;
  ctx_.rq_base = rq_base;
}

QueuePair::~QueuePair() {
  dev_.qps_[qpn_] = nullptr;
  abi::QpContext c = ctx_;
  c.state = abi::QPS_RESET;
  try {
    dev_.execute(abi::CMD_QP_MODIFY, qpn_, &c, sizeof c);
    // its CQEs still in the CQs are never returned (as after a reset): a QP created later may
    // get the same QPN
    dev_.discard_after_reset(*send_cq_, qpn_);
    if (recv_cq_ != send_cq_) dev_.discard_after_reset(*recv_cq_, qpn_);
  } catch (const Error&) {
  }
  dev_.qp_used_[qpn_] = 0;
}

void QueuePair::modify(const QpAttr& a, uint32_t mask) {
  using M = QpAttrMask;
  const std::string who = "modify QP " + std::to_string(qpn_) + ": ";
  auto fail = [&](const std::string& msg) { throw Error(EINVAL, who + msg); };

  QpState cur = state_;
  if (mask & M::CurState) {
    if (a.cur_qp_state != state_)
      fail(std::string("cur_qp_state ") + to_string(a.cur_qp_state) + " but the QP is in " + to_string(state_));
  }
  const QpState next = (mask & M::State) ? a.qp_state : cur;
  if (next == QpState::Sqd || next == QpState::Sqe || uint8_t(next) > uint8_t(QpState::Err))
    fail(std::string("state ") + to_string(next) + " is not supported");
  const Transition t = transition(cur, next);
  const std::string edge = std::string(to_string(cur)) + " -> " + to_string(next);
  if (!t.valid) fail("invalid transition " + edge);
  if ((mask & t.req) != t.req) fail(edge + " requires " + attr_mask_string(t.req & ~mask));
  if (const uint32_t extra = mask & ~(t.req | t.opt | M::State))
    fail(edge + " does not accept " + attr_mask_string(extra));

  if ((mask & M::PkeyIndex) && a.pkey_index != 0) fail("pkey_index must be 0");
  if ((mask & M::Port) && a.port_num != 1) fail("port_num must be 1");
  if ((mask & M::AccessFlags) &&
      (a.qp_access_flags & ~unsigned(Access::LocalWrite | Access::RemoteWrite | Access::RemoteRead |
                                     Access::RemoteAtomic)))
    fail("unsupported qp_access_flags");
  if ((mask & M::PathMtu) && (uint8_t(a.path_mtu) < 1 || uint8_t(a.path_mtu) > 5))
    fail("path_mtu must be 1 (256) .. 5 (4096)");
  if ((mask & M::DestQpn) && a.dest_qp_num > 0xFFFFFF) fail("dest_qp_num wider than 24 bits");
  if ((mask & M::RqPsn) && a.rq_psn > 0xFFFFFF) fail("rq_psn wider than 24 bits");
  if ((mask & M::SqPsn) && a.sq_psn > 0xFFFFFF) fail("sq_psn wider than 24 bits");
  if ((mask & M::MinRnrTimer) && a.min_rnr_timer > 31) fail("min_rnr_timer must be 0..31");
  if ((mask & M::Timeout) && a.timeout > 31) fail("timeout must be 0..31");
  if ((mask & M::RetryCnt) && a.retry_cnt > 7) fail("retry_cnt must be 0..7");
  if ((mask & M::RnrRetry) && a.rnr_retry > 7) fail("rnr_retry must be 0..7");
  if (mask & M::Av) {
    if (a.ah_attr.dmac >> 48) fail("ah_attr.dmac wider than 48 bits");
    if (a.ah_attr.dmac == 0 || (a.ah_attr.dmac >> 40) & 1) fail("ah_attr.dmac must be a unicast MAC");
    if (a.ah_attr.dip == 0) fail("ah_attr.dip is 0.0.0.0");
    if (a.ah_attr.flow_label > 0xFFFFF) fail("ah_attr.flow_label wider than 20 bits");
  }

  QpAttr na = attr_;
  abi::QpContext c = ctx_;
  if (next == QpState::Reset) {
    na = QpAttr{};
    c = abi::QpContext{};
    c.log_sq_size = ctx_.log_sq_size;
    c.log_rq_size = ctx_.log_rq_size;
    c.flags = ctx_.flags;
    c.pd = ctx_.pd;
    c.send_cqn = ctx_.send_cqn;
    c.recv_cqn = ctx_.recv_cqn;
    c.sq_base = ctx_.sq_base;
    c.rq_base = ctx_.rq_base;
  }
  na.qp_state = na.cur_qp_state = next;
  c.state = uint8_t(next);
  if (mask & M::AccessFlags) {
    na.qp_access_flags = a.qp_access_flags;
    c.access = uint8_t(a.qp_access_flags & (Access::RemoteWrite | Access::RemoteRead | Access::RemoteAtomic));
  }
  if (mask & M::PathMtu) c.mtu = uint8_t(na.path_mtu = a.path_mtu);
  if (mask & M::DestQpn) c.dest_qpn = na.dest_qp_num = a.dest_qp_num;
  if (mask & M::RqPsn) c.rq_psn = na.rq_psn = a.rq_psn;
  if (mask & M::SqPsn) c.sq_psn = na.sq_psn = a.sq_psn;
  if (mask & M::MinRnrTimer) c.min_rnr_timer = na.min_rnr_timer = a.min_rnr_timer;
  if (mask & M::Timeout) c.timeout = na.timeout = a.timeout;
  if (mask & M::RetryCnt) na.retry_cnt = a.retry_cnt;
  if (mask & M::RnrRetry) na.rnr_retry = a.rnr_retry;
  c.retry = uint8_t((na.retry_cnt & 7) | (na.rnr_retry & 7) << 3);
  if (mask & M::MaxQpRdAtomic) na.max_rd_atomic = a.max_rd_atomic;
  if (mask & M::MaxDestRdAtomic) na.max_dest_rd_atomic = a.max_dest_rd_atomic;
  if (mask & M::Av) {
    na.ah_attr = a.ah_attr;
    c.dest_mac = a.ah_attr.dmac;
    c.dest_ip = a.ah_attr.dip;
  }
  if (mask & (M::Av | M::DestQpn)) {
    const uint32_t fl = na.ah_attr.flow_label ? na.ah_attr.flow_label : calc_flow_label(qpn_, na.dest_qp_num);
    c.udp_sport = flow_label_to_udp_sport(fl);
  }

  dev_.execute(abi::CMD_QP_MODIFY, qpn_, &c, sizeof c);
  ctx_ = c;
  attr_ = na;
  if (next == QpState::Reset) {
    sq_pi_ = sq_ci_ = rq_pi_ = rq_ci_ = 0;
    // CQEs of the QP's old life in its CQs are never returned (the NIC writes none after the
    // reset command is done: decisions 109, 115; in a command batch that is at its end)
    dev_.discard_after_reset(*send_cq_, qpn_);
    if (recv_cq_ != send_cq_) dev_.discard_after_reset(*recv_cq_, qpn_);
  }
  state_ = next;
}

// A fatal NIC would never execute or complete a WR posted now, so the post fails loudly.
void QueuePair::throw_fatal(const char* call) const {
  throw Error(EIO, std::string("srnic: ") + call + " on QP " + std::to_string(qpn_) +
                       " refused: the NIC is fatal until reset after a " + to_string(*dev_.fatal_));
}

int QueuePair::post_send(const SendWr* wr, const SendWr** bad_wr) {
  if (bad_wr) *bad_wr = nullptr;
  if (!wr) return 0;
  if (dev_.fatal_) {
    if (bad_wr) *bad_wr = wr;
    throw_fatal("post_send");
  }
  auto reject = [&](const SendWr* w, int err) {
    if (bad_wr) *bad_wr = w;
    return err;
  };
  if (state_ != QpState::Rts && state_ != QpState::Err) return reject(wr, EINVAL);
  const unsigned flag_mask = SendFlags::Fence | SendFlags::Signaled | SendFlags::Solicited;
  uint32_t count = 0;
  for (const SendWr* w = wr; w; w = w->next) {
    if (uint8_t(w->opcode) > uint8_t(WrOpcode::RdmaRead) || w->num_sge != 1 || !w->sg_list ||
        w->sg_list->length > kMaxLength || (w->send_flags & ~flag_mask))
      return reject(w, EINVAL);
    if (sq_outstanding() + ++count > sq_size()) return reject(w, ENOMEM);
  }
  Backend& be = dev_.be_;
  const uint32_t mask = sq_size() - 1;
  for (const SendWr* w = wr; w; w = w->next) {
    abi::SqWqe q{};
    q.opcode = uint8_t(w->opcode);
    q.idx = uint16_t(sq_pi_);
    q.flags = uint8_t(w->send_flags | (sq_sig_all_ ? unsigned(SendFlags::Signaled) : 0u));
    std::memcpy(q.imm, &w->imm_data, 4);
    q.wr_id = w->wr_id;
    q.laddr = w->sg_list->addr;
    q.length = w->sg_list->length;
    q.lkey = w->sg_list->lkey;
    q.raddr = w->remote_addr;
    q.rkey = w->rkey;
    be.mem_write(ctx_.sq_base + uint64_t(sq_pi_ & mask) * sizeof q, &q, sizeof q);
    ++sq_pi_;
  }
  be.mmio_write32(abi::REG_DB_SQ, (sq_pi_ & 0xFFFF) << 16 | (qpn_ & 0xFFFF));
  return 0;
}

int QueuePair::post_recv(const RecvWr* wr, const RecvWr** bad_wr) {
  if (bad_wr) *bad_wr = nullptr;
  if (!wr) return 0;
  if (dev_.fatal_) {
    if (bad_wr) *bad_wr = wr;
    throw_fatal("post_recv");
  }
  auto reject = [&](const RecvWr* w, int err) {
    if (bad_wr) *bad_wr = w;
    return err;
  };
  if (state_ == QpState::Reset) return reject(wr, EINVAL);
  uint32_t count = 0;
  for (const RecvWr* w = wr; w; w = w->next) {
    if (w->num_sge != 1 || !w->sg_list || w->sg_list->length > kMaxLength) return reject(w, EINVAL);
    if (rq_outstanding() + ++count > rq_size()) return reject(w, ENOMEM);
  }
  Backend& be = dev_.be_;
  const uint32_t mask = rq_size() - 1;
  for (const RecvWr* w = wr; w; w = w->next) {
    abi::RqWqe q{};
    q.wr_id = w->wr_id;
    q.addr = w->sg_list->addr;
    q.length = w->sg_list->length;
    q.lkey = w->sg_list->lkey;
    be.mem_write(ctx_.rq_base + uint64_t(rq_pi_ & mask) * sizeof q, &q, sizeof q);
    ++rq_pi_;
  }
  be.mmio_write32(abi::REG_DB_RQ, (rq_pi_ & 0xFFFF) << 16 | (qpn_ & 0xFFFF));
  return 0;
}

// A completion at ring slot wqe_idx retires that WQE and every earlier one (unsignaled sends
// complete silently before the next signaled one). wqe_idx may be a slot or a 16-bit counter.
void QueuePair::retire(bool recv, uint16_t wqe_idx) {
  uint32_t& ci = recv ? rq_ci_ : sq_ci_;
  const uint32_t pi = recv ? rq_pi_ : sq_pi_;
  const uint32_t mask = (recv ? rq_size() : sq_size()) - 1;
  const uint32_t ahead = (uint32_t(wqe_idx) - ci) & mask;
  if (ahead < pi - ci)
    ci += ahead + 1;
  else
    ++stale_;
}

// Completes up to max outstanding WRs of the SQ (recv false) or the RQ with WR_FLUSH_ERR, oldest
// first, and retires them. The wr_id (and a send's opcode, for the completion's opcode as the
// NIC reports flushed sends) comes from the WQE this library wrote into the ring, which the
// NIC only reads. byte_len, flags and timestamp stay 0: no NIC saw these completions.
int QueuePair::flush(bool recv, int max, WorkCompletion* wc) {
  Backend& be = dev_.be_;
  uint32_t& ci = recv ? rq_ci_ : sq_ci_;
  const uint32_t pi = recv ? rq_pi_ : sq_pi_;
  int n = 0;
  for (; n < max && ci != pi; ++n, ++ci) {
    WorkCompletion& w = wc[n];
    w = WorkCompletion{};
    w.status = WcStatus::WrFlushErr;
    w.qp_num = qpn_;
    if (recv) {
      abi::RqWqe q;
      be.mem_read(ctx_.rq_base + uint64_t(ci & (rq_size() - 1)) * sizeof q, &q, sizeof q);
      w.wr_id = q.wr_id;
      w.opcode = WcOpcode::Recv;
    } else {
      abi::SqWqe q;
      be.mem_read(ctx_.sq_base + uint64_t(ci & (sq_size() - 1)) * sizeof q, &q, sizeof q);
      w.wr_id = q.wr_id;
      w.opcode = q.opcode == abi::WR_READ ? WcOpcode::RdmaRead
                 : (q.opcode == abi::WR_SEND || q.opcode == abi::WR_SEND_IMM) ? WcOpcode::Send
                                                                              : WcOpcode::RdmaWrite;
    }
  }
  return n;
}

}  // namespace srnic::sw
