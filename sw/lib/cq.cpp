// cq.cpp: completion queues: ring setup, CQE polling by owner phase, WQE retirement, DB_CQ,
// flush completions of a fatal NIC.
#include <algorithm>
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

}  // namespace

std::unique_ptr<CompletionQueue> Device::create_cq(uint32_t cqe) {
  if (cqe == 0 || cqe > caps_.max_cqe)
    throw Error(EINVAL, "create_cq: cqe must be 1.." + std::to_string(caps_.max_cqe));
  const unsigned log_size = ceil_log2(cqe < 2 ? 2 : cqe);
  const uint32_t cqn = alloc_index(cq_used_, 0, "CQ numbers");
  try {
    const uint64_t base = be_.dma_alloc(size_t(sizeof(abi::Cqe)) << log_size, kRingAlign);
    abi::CqContext c{};
    c.base = base;
    c.log_size = uint8_t(log_size);
    c.flags = 1;  // valid
    execute(abi::CMD_CQ_WRITE, cqn, &c, sizeof c);
    return std::unique_ptr<CompletionQueue>(new CompletionQueue(*this, cqn, log_size, base));
  } catch (...) {
    cq_used_[cqn] = 0;
    throw;
  }
}

CompletionQueue::CompletionQueue(Device& dev, uint32_t cqn, unsigned log_size, uint64_t base)
    : dev_(dev), cqn_(cqn), log_size_(log_size), base_(base) {}

CompletionQueue::~CompletionQueue() {
  auto& d = dev_.discards_;
  d.erase(std::remove_if(d.begin(), d.end(), [this](const auto& e) { return e.first == this; }), d.end());
  abi::CqContext c{};  // flags.valid = 0
  try {
    dev_.execute(abi::CMD_CQ_WRITE, cqn_, &c, sizeof c);
  } catch (const Error&) {
  }
  dev_.cq_used_[cqn_] = 0;
}

void CompletionQueue::set_ci_batch(uint32_t n) {
  const uint32_t half = size() / 2;
  ci_batch_ = n < 1 ? 1 : (n > half ? half : n);
}

void CompletionQueue::ring_ci() {
  dev_.be_.mmio_write32(abi::REG_DB_CQ, (ci_ & 0xFFFF) << 16 | (cqn_ & 0xFFFF));
  db_ci_ = ci_;
}

void CompletionQueue::update_ci() {
  if (ci_ != db_ci_) ring_ci();
}

int CompletionQueue::poll_cq(int num_entries, WorkCompletion* wc) {
  Backend& be = dev_.be_;
  const uint32_t mask = size() - 1;
  const uint32_t half = size() / 2;
  int n = 0;
  while (n < num_entries) {
    const uint64_t addr = base_ + uint64_t(ci_ & mask) * sizeof(abi::Cqe);
    // Owner first, then the whole entry: the rest of the CQE is only read once it is valid.
    uint8_t owner;
    be.mem_read(addr + offsetof(abi::Cqe, owner), &owner, 1);
    if ((owner & 1) != (((ci_ >> log_size_) & 1) ^ 1)) break;
    if (!skip_.empty() && skip_.front() == ci_) {  // a CQE of a QP reset since it was written
      skip_.pop_front();
      ++ci_;
      if (ci_ - db_ci_ >= half) ring_ci();
      continue;
    }
    abi::Cqe cqe;
    be.mem_read(addr, &cqe, sizeof cqe);

    WorkCompletion& w = wc[n++];
    w.wr_id = cqe.wr_id;
    w.status = WcStatus(cqe.status);
    w.opcode = WcOpcode(cqe.opcode);
    w.byte_len = cqe.byte_len;
    std::memcpy(&w.imm_data, cqe.imm, 4);
    w.wc_flags = (cqe.flags & abi::CQE_FLAG_WITH_IMM) ? unsigned(WcFlags::WithImm) : 0u;
    w.qp_num = cqe.qpn & 0xFFFFFF;
    w.timestamp = abi::cqe_timestamp(cqe);

    if (QueuePair* qp = dev_.find_qp(w.qp_num)) {
      bool recv;
      if (qp->send_cq_ != qp->recv_cq_)
        recv = qp->recv_cq_ == this;
      else
        recv = (cqe.opcode & 0x80) != 0;  // receive opcodes have bit 7 set
      if (recv ? qp->recv_cq_ == this : qp->send_cq_ == this) qp->retire(recv, cqe.wqe_idx);
    }
    ++ci_;
    if (ci_ - db_ci_ >= half) ring_ci();
  }
  if (ci_ - db_ci_ >= ci_batch_) ring_ci();
  // A fatal NIC writes no more CQEs: the ring is drained above, the rest is flushed here.
  if (n < num_entries && dev_.fatal_) n += flush_outstanding(num_entries - n, wc + n);
  return n;
}

// Marks every CQE of QP qpn now in the ring (written, not yet polled) to be consumed without
// being returned: the QP was reset and they belong to its earlier life (decision 109). The NIC
// writes no CQE of that life after the reset command, so later CQEs of qpn are the new life's.
void CompletionQueue::discard_qp(uint32_t qpn) {
  Backend& be = dev_.be_;
  const uint32_t mask = size() - 1;
  for (uint32_t i = ci_;; ++i) {
    if (i - ci_ >= size()) break;
    const uint64_t addr = base_ + uint64_t(i & mask) * sizeof(abi::Cqe);
    uint8_t owner;
    be.mem_read(addr + offsetof(abi::Cqe, owner), &owner, 1);
    if ((owner & 1) != (((i >> log_size_) & 1) ^ 1)) break;
    abi::Cqe cqe;
    be.mem_read(addr, &cqe, sizeof cqe);
    if ((cqe.qpn & 0xFFFFFF) != qpn) continue;
    // in ring order: the reset of another QP since the last poll may have marked later entries
    const auto at = std::lower_bound(skip_.begin(), skip_.end(), i,
                                     [this](uint32_t a, uint32_t b) { return a - ci_ < b - ci_; });
    if (at == skip_.end() || *at != i) skip_.insert(at, i);
  }
}

// The software flush of a fatal device. Posting fails once the device is known fatal, so the
// outstanding WRs only decrease and each is completed once: by its CQE if the NIC wrote one
// (consumed before this runs), else here. A QP with both queues on this CQ flushes its SQ first.
int CompletionQueue::flush_outstanding(int num_entries, WorkCompletion* wc) {
  int n = 0;
  for (QueuePair* qp : dev_.qps_) {
    if (n == num_entries) break;
    if (!qp) continue;
    if (qp->send_cq_ == this) n += qp->flush(false, num_entries - n, wc + n);
    if (qp->recv_cq_ == this) n += qp->flush(true, num_entries - n, wc + n);
  }
  return n;
}

}  // namespace srnic::sw
