// cqe_writer.hpp: plays the NIC's side of one CQ ring in the host library tests: writes CQEs
// with the owner phase of the current pass.
#pragma once

#include <cstdint>

#include "memory_backend.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sw::test {

class CqeWriter {
 public:
  CqeWriter(MemoryBackend& be, const CompletionQueue& cq) : be_(be), cq_(cq) {}
  void push(abi::Cqe c) {
    c.owner = uint8_t(((pi_ >> cq_.log_size()) & 1) ^ 1);
    be_.store(slot(pi_), c);
    ++pi_;
  }
  void push(uint32_t qpn, uint16_t wqe_idx, uint8_t opcode, uint64_t wr_id) {
    abi::Cqe c{};
    c.qpn = qpn;
    c.wqe_idx = wqe_idx;
    c.opcode = opcode;
    c.wr_id = wr_id;
    push(c);
  }
  uint64_t slot(uint32_t i) const { return cq_.base() + uint64_t(i & (cq_.size() - 1)) * sizeof(abi::Cqe); }
  uint32_t pi() const { return pi_; }

 private:
  MemoryBackend& be_;
  const CompletionQueue& cq_;
  uint32_t pi_ = 0;
};

}  // namespace srnic::sw::test
