// Hostile peer: during the env's live random traffic, forges valid-ICRC frames (packet
// library) into the link toward one NIC, aimed at victim QP pairs of their own, and knows
// exactly what each must cause: the standard NAK or counted drop, the victim operation's
// completion status, the bytes that may change in the victim's buffers, the NIC counters.
// The random traffic on the plan's QPs is checked by the env as in every test (other QPs
// unaffected); the forged requests are announced to the protocol checker (note_forged).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "srnic/env/chip_env.hpp"

namespace srnic::verif::env {

enum class Attack : uint8_t {
  Duplicate,           // a request already executed, again, with other data: ACKed, not placed
  PsnAhead,            // a request ahead of the expected PSN: one PSN-sequence NAK, dropped
  UnknownOpcode,       // an opcode srnic does not implement: dropped, counted malformed
  WrongQpn,            // a QPN that does not exist: dropped, counted
  GhostAck,            // an ACK for a PSN never sent: dropped, counted, completes nothing
  GhostNak,            // a fatal NAK for a PSN never sent: dropped, counted, fails nothing
  GhostReadResponse,   // a READ response for a PSN never requested: dropped, counted, not placed
  MiddleWithoutFirst,  // WRITE MIDDLE with no message in progress: NAK Invalid Request, QP error
  LastOverrun,         // WRITE LAST beyond the RETH length: NAK Invalid Request, QP error
  HugeRead,            // a 2 GiB READ past the MR: NAK Remote Access Error, QP error
  LongReadResponse,    // the READ's response too long: READ fails BAD_RESP_ERR, nothing placed
  ShortReadResponse,   // too short: the same
  kCount
};
const char* attack_name(Attack a);

class HostilePeer : public uvm::Component {
 public:
  HostilePeer(uvm::Component& parent, std::string name, ChipEnv& env);
  ~HostilePeer() override;
  // Before traffic: one victim QP pair per attack (every kind once, then a few random extra),
  // buffers, CQs, permitted DMA ranges, the drop filter for READ responses the forged ones
  // replace, and the start cycle of each attack.
  void setup();
  // Destroys the victims' host-library objects while the env's devices still exist (the
  // test's destructor calls it).
  void release();

  void start_of_run() override;
  void tick() override;
  void check() override;
  void report() override;

 private:
  struct Victim;
  void step(Victim& v);
  void post(Victim& v, bool read, uint64_t wr_id, uint64_t loff, uint64_t roff, uint32_t len);
  void forge(Victim& v, uint32_t to, const std::vector<uint8_t>& frame);
  std::vector<uint8_t> request(Victim& v, uint8_t opcode, uint32_t psn, uint64_t roff, uint32_t dma_len,
                               std::vector<uint8_t> payload);
  std::vector<uint8_t> response(Victim& v, uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t len);
  void count(uint32_t host, int counter, uint32_t n = 1);
  void poll();

  ChipEnv& env_;
  std::vector<std::unique_ptr<Victim>> victims_;
  std::unique_ptr<sw::CompletionQueue> cq_[2];
  std::unique_ptr<sw::MemoryRegion> mr_[2];
  uint64_t buf_[2] = {0, 0};
  std::vector<uint8_t> init_[2];     // initial contents of the victim buffers
  std::vector<uint8_t> want_[2];     // what they must hold at the end
  std::vector<uint32_t> read_victim_qpn_;  // host-0 QPNs whose real READ responses are dropped
  uint32_t done_ = 0;
  uint64_t forged_ = 0;
  bool objecting_ = false;
};

}  // namespace srnic::verif::env
