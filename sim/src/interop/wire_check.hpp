// WireCheck: checks what a guest-initiated transfer did to srnic's memory against the frames
// that crossed the wire, independently of the NIC. Requests from the guest (SEND, RDMA WRITE,
// RDMA READ request) are followed in PSN order (a retransmitted duplicate is skipped, a PSN
// gap is an error: the harness is lossless): WRITE payloads build a shadow image of the target
// buffer, SEND payloads are assembled into messages, READ requests are remembered. srnic's READ
// responses are compared on the fly with its memory at the requested address. After the
// traffic, check_writes() compares the memory with the shadow and next_message() hands out the
// SEND messages in order for comparison with the receive buffers.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace srnic::sim::interop {

class WireCheck {
 public:
  // Memory window [base, base + len) of the target buffer, readable through `read`; mtu is the
  // path MTU (READ response offsets); first_psn the guest's first request PSN.
  WireCheck(uint64_t base, uint64_t len, uint32_t mtu, uint32_t first_psn,
            std::function<void(uint64_t, void*, size_t)> read);

  // Every frame of the run, in wire order (to_nic: sent by the guest).
  void frame(const uint8_t* f, size_t n, bool to_nic);

  // "" or the first difference between memory and the written bytes.
  std::string check_writes() const;
  // Next complete SEND message, false if none.
  bool next_message(std::vector<uint8_t>& out);
  // First error seen on the wire ("" if none).
  const std::string& error() const { return error_; }
  uint64_t write_bytes() const { return write_bytes_; }
  uint64_t read_bytes_checked() const { return read_checked_; }
  uint64_t duplicates() const { return dups_; }
  // Target address of the guest's first WRITE (0 before it).
  uint64_t first_write_va() const { return first_wva_; }

 private:
  struct ReadReq {
    uint32_t psn, npkts;
    uint64_t va;
    uint32_t len;
  };
  void fail(const std::string& e);
  void request(uint8_t op, uint32_t psn, const uint8_t* p, size_t n);
  void response(uint8_t op, uint32_t psn, const uint8_t* p, size_t n);

  uint64_t base_, len_;
  uint32_t mtu_;
  uint32_t epsn_;
  std::function<void(uint64_t, void*, size_t)> read_;
  std::vector<uint8_t> shadow_;
  std::vector<bool> written_;
  uint64_t wva_ = 0;               // address of the next WRITE payload byte
  uint64_t first_wva_ = 0;
  bool in_write_ = false, in_send_ = false;
  std::vector<uint8_t> msg_;
  std::deque<std::vector<uint8_t>> msgs_;
  std::deque<ReadReq> reads_;
  std::string error_;
  uint64_t write_bytes_ = 0, read_checked_ = 0, dups_ = 0;
};

}  // namespace srnic::sim::interop
