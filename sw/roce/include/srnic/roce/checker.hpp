// Protocol checker for a stream of RoCEv2 frames (a capture or a simulated wire).
// Per frame: decode + ICRC, PadCnt, zero pad bytes. Per flow (destination IP, destination QPN),
// separately for requests and responses: PSN order, opcode sequence FIRST/MIDDLE/LAST/ONLY,
// payload lengths against the path MTU, and WRITE payload totals against RETH.DMA Length.
//
// Connections registered with connect() are also checked across the two directions: every
// ACK/NAK must acknowledge a PSN the peer actually sent (a PSN-sequence NAK may name the next
// PSN to come), every READ response must belong to an outstanding READ request (PSN inside
// request PSN .. request PSN + n - 1, in order, FIRST/MIDDLE/LAST or ONLY by position, MTU bytes
// except the last, the request's DMA length in total), and the MSN in every AETH must count the
// request messages the responder completed (a SEND/WRITE at its last packet, a READ when its
// request is accepted). Frames injected into the wire by a test (note_forged) are not checked
// and change no flow state; a response naming a forged request's PSN is accepted.
//
// With allow_retransmit (go-back-N), requests and responses may step back; a READ may be
// answered again from its first response (a resent or duplicated request), a READ resent from a
// later response lies inside its original (responses start over at its own PSN, it is not a new
// message), and the MSN of a READ response lies between the messages up to the READ and the
// messages sent so far (the responder's MSN when it answered again).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
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

  // Declares an RC connection between QP qpn_a at address a and QP qpn_b at address b
  // (16-byte addresses, IPv4 as IPv4-mapped IPv6), so responses are tied to requests.
  void connect(const std::array<uint8_t, 16>& a, uint32_t qpn_a, const std::array<uint8_t, 16>& b,
               uint32_t qpn_b);
  void connect_ipv4(uint32_t ip_a, uint32_t qpn_a, uint32_t ip_b, uint32_t qpn_b);
  // Forgets the connection between QP qpn_a at a and QP qpn_b at b: the state of the request
  // and response flows to both QPs and what it knew of their requests (both QPs were reset).
  // Frames to either QP from then on start flows afresh; connect() ties a new connection again.
  void disconnect(const std::array<uint8_t, 16>& a, uint32_t qpn_a, const std::array<uint8_t, 16>& b,
                  uint32_t qpn_b);
  void disconnect_ipv4(uint32_t ip_a, uint32_t qpn_a, uint32_t ip_b, uint32_t qpn_b);
  // A frame a test injected into the wire (not sent by an endpoint under test): counted, not
  // checked; a request's PSN is remembered so that the responder's ACK/NAK for it is accepted.
  void note_forged(const uint8_t* data, size_t len);
  uint64_t forged() const { return forged_; }

  uint64_t frames() const { return frames_; }
  uint64_t violation_count() const { return violations_; }
  // steps back (allow_retransmit): a request or response PSN before the one expected
  uint64_t retransmits() const { return retransmits_; }
  // request frames sent again: a PSN before the furthest one its flow has sent (each frame of a
  // resend counts, not only the step back that starts it)
  uint64_t resent_requests() const { return resent_requests_; }
  // requests that went forward to a PSN sent before, ending a resend early (allow_retransmit)
  uint64_t resend_skips() const { return resend_skips_; }
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
    uint32_t hi = 0;               // requests: the PSN after the furthest one sent
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

  // Requests of one direction of a connection, for tying the responses to them. PSNs are
  // unwrapped to 64 bits around the next PSN.
  struct ReqTrack {
    bool started = false;
    uint64_t first = 0, next = 0;        // PSNs sent: [first, next)
    uint32_t messages = 0;               // request messages sent completely so far
    std::map<uint64_t, uint32_t> msn_at; // PSN a message completes at -> messages up to it
    struct Read {
      uint64_t len;
      uint64_t npkts;
      uint64_t expect;                   // next response PSN
      uint32_t mtu;                      // the connection's path MTU
    };
    std::map<uint64_t, Read> reads;      // outstanding READs by request PSN (allow_retransmit: all)
    std::set<uint64_t> forged;           // PSNs of forged requests
    uint64_t unwrap(uint32_t psn) const;
    uint32_t msn_through(uint64_t u) const;  // messages completed at PSNs <= u
    // The latest of the READs whose responses cover PSN u (among the 1024 starting last at or
    // before u) for which pred(first PSN, read) holds; reads.end() if none.
    template <class Pred>
    std::map<uint64_t, Read>::iterator read_covering(uint64_t u, Pred pred);
  };
  static FlowKey key_of(const DecodedPacket& p);
  void track_request(ReqTrack& t, const DecodedPacket& p);
  void track_response(ReqTrack& t, const DecodedPacket& p, const std::string& who);

  CheckerConfig cfg_;
  uint64_t frames_ = 0;
  uint64_t violations_ = 0;
  uint64_t retransmits_ = 0;
  uint64_t resent_requests_ = 0;
  uint64_t resend_skips_ = 0;
  bool frame_ok_ = true;
  std::array<uint64_t, 256> opcode_counts_{};
  std::map<std::string, uint64_t> by_kind_;
  std::vector<Violation> kept_;
  std::map<FlowKey, Flow> flows_;
  std::map<FlowKey, ReqTrack> tracks_;       // request flows of registered connections
  std::map<FlowKey, FlowKey> response_to_;   // response flow -> the request flow it answers
  uint64_t forged_ = 0;
};

}  // namespace srnic::roce
