// Protocol checker for a stream of RoCEv2 frames (a capture or a simulated wire).
// Per frame: decode + ICRC, PadCnt, zero pad bytes. Per flow (destination IP, destination QPN),
// separately for requests and responses: PSN order, opcode sequence FIRST/MIDDLE/LAST/ONLY,
// payload lengths against the path MTU, and WRITE payload totals against RETH.DMA Length.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "srnic/roce/packet.hpp"

namespace srnic::roce {

struct CheckerConfig {
  uint32_t mtu = 1024;             // path MTU in payload bytes
  // Per-flow path MTUs (QPs of one capture may use different ones): key = IPv4 destination
  // << 24 | destination QPN (see flow_mtu_key); flows not listed use `mtu`.
  std::map<uint64_t, uint32_t> flow_mtu;
  bool allow_retransmit = false;   // accept go-back-N rewinds (PSN stepping back) as retransmissions
  size_t keep_violations = 100;    // how many violations to keep with their text
};

struct Violation {
  uint64_t frame;                  // 1-based frame number
  std::string kind;                // decode error name, "psn_order", "opcode_sequence", ...
  std::string detail;
};

inline uint64_t flow_mtu_key(uint32_t ipv4_dst, uint32_t dest_qpn) {
  return (uint64_t(ipv4_dst) << 24) | (dest_qpn & 0xFFFFFF);
}

class ProtocolChecker {
 public:
  explicit ProtocolChecker(CheckerConfig cfg = {});

  // Path MTU of one flow (see CheckerConfig::flow_mtu).
  void set_flow_mtu(uint64_t key, uint32_t mtu) { cfg_.flow_mtu[key] = mtu; }

  // Checks the next frame (numbered from 1 in call order). Returns true if it raised no violation.
  bool on_frame(const uint8_t* data, size_t len);

  uint64_t frames() const { return frames_; }
  uint64_t violation_count() const { return violations_; }
  uint64_t retransmits() const { return retransmits_; }
  const std::vector<Violation>& violations() const { return kept_; }
  const std::array<uint64_t, 256>& opcode_counts() const { return opcode_counts_; }
  const std::map<std::string, uint64_t>& violation_counts() const { return by_kind_; }

  // Frames, per-opcode counts, violation counts by kind and the first `max_listed` violations.
  void print_summary(std::ostream& os, size_t max_listed = 10) const;

 private:
  struct FlowKey {
    std::array<uint8_t, 16> addr;
    uint32_t qpn;
    bool response;
    bool operator<(const FlowKey& o) const;
  };
  struct Flow {
    bool started = false;
    uint32_t psn = 0;              // requests: next expected PSN; responses: last PSN seen
    OpKind in_progress = OpKind::Cnp;  // Cnp = no multi-packet message in progress
    bool resid_known = false;
    uint64_t resid = 0;            // WRITE bytes still expected
  };

  void report(const std::string& kind, const std::string& detail);
  void check_request(Flow& f, const DecodedPacket& p, const std::string& who);
  void check_response(Flow& f, const DecodedPacket& p, const std::string& who);
  void check_sequence(Flow& f, const DecodedPacket& p, const std::string& who, bool rewound);
  void check_length(const DecodedPacket& p, const std::string& who);
  uint32_t mtu_of(const DecodedPacket& p) const;

  CheckerConfig cfg_;
  uint64_t frames_ = 0;
  uint64_t violations_ = 0;
  uint64_t retransmits_ = 0;
  bool frame_ok_ = true;
  std::array<uint64_t, 256> opcode_counts_{};
  std::map<std::string, uint64_t> by_kind_;
  std::vector<Violation> kept_;
  std::map<FlowKey, Flow> flows_;
};

}  // namespace srnic::roce
