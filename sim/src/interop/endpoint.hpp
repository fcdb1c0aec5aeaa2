// Endpoint: one RC QP of the simulated srnic host set up through the host library (PD, one
// registered buffer, a send and a receive CQ), connected to a QP of the guest, with checked
// completion polling and the data pattern both sides use to verify payloads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "node.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim::interop {

// What the peer tool announced about its QP.
struct RemoteQp {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint32_t ip = 0;     // from its IPv4-mapped GID
  uint32_t rkey = 0;   // perftest only
  uint64_t vaddr = 0;  // perftest only
};

// Bytes of message `msg` of a run with `seed`: differ per message and per byte position.
void fill_pattern(uint64_t seed, uint64_t msg, uint8_t* dst, size_t len);

// The 16 GID bytes of an IPv4 address (::ffff:a.b.c.d) and back (false if not IPv4-mapped).
void ipv4_gid(uint32_t ip, uint8_t gid[16]);
bool gid_ipv4(const uint8_t gid[16], uint32_t& ip);
std::string ipv4_str(uint32_t ip);

class Endpoint {
 public:
  // buf_bytes of registered memory (local write, remote read/write), sq/rq ring entries.
  Endpoint(Node& node, uint64_t buf_bytes, uint32_t sq, uint32_t rq, uint32_t psn);
  ~Endpoint();

  uint32_t qpn() const { return qp_->qp_num(); }
  uint32_t psn() const { return psn_; }
  uint64_t buf() const { return buf_; }
  uint32_t key() const { return mr_->rkey(); }

  // INIT -> RTR -> RTS against the peer (path MTU in bytes, READs the peer may have
  // outstanding towards us and we towards it).
  void connect(const RemoteQp& r, uint32_t mtu, uint8_t dest_rd_atomic, uint8_t rd_atomic);

  void post_send(sw::WrOpcode op, uint64_t wr_id, uint64_t laddr, uint32_t len, uint64_t raddr = 0,
                 uint32_t rkey = 0, uint32_t imm = 0);
  void post_recv(uint64_t wr_id, uint64_t laddr, uint32_t len);
  // Polls both CQs; every completion must succeed, else throws naming it.
  void poll();
  // Completions seen so far (popped by the caller).
  std::vector<sw::WorkCompletion> sends, recvs;

  void write(uint64_t addr, const void* src, size_t n);
  void read(uint64_t addr, void* dst, size_t n);
  // Compares n bytes at addr with the pattern of message msg; "" or the first difference.
  std::string check(uint64_t addr, size_t n, uint64_t seed, uint64_t msg);

 private:
  Node& node_;
  uint32_t psn_;
  uint64_t buf_ = 0;
  std::unique_ptr<sw::ProtectionDomain> pd_;
  std::unique_ptr<sw::CompletionQueue> scq_, rcq_;
  std::unique_ptr<sw::MemoryRegion> mr_;
  std::unique_ptr<sw::QueuePair> qp_;
};

}  // namespace srnic::sim::interop
