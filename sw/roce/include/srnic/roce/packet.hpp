// RoCEv2 frame builder and validating decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "srnic/roce/headers.hpp"
#include "srnic/roce/opcode.hpp"

namespace srnic::roce {

// Every header a RoCEv2 frame may carry. Which extension headers are used is decided by
// bth.opcode (see OpcodeInfo::headers); the others are ignored.
struct Headers {
  EthHdr eth;
  bool has_vlan = false;
  uint16_t vlan_tci = 0;
  bool ipv6 = false;
  Ipv4Hdr ip4;
  Ipv6Hdr ip6;
  UdpHdr udp;
  Bth bth;
  Feth feth;
  Deth deth;
  Reth reth;
  AtomicEth atomic;
  ImmDt immdt;
  Ieth ieth;
  Aeth aeth;
  AtomicAckEth atomic_ack;
  CnpPad cnp;
};

// Assembles a frame (Ethernet header through ICRC, no FCS) from the header fields and payload.
// build() fills in the EtherType, IPv4 version/IHL/protocol/total length/checksum (or the IPv6
// payload length/next header), UDP length, BTH PadCnt, the zero pad bytes and the ICRC.
// Everything else (addresses, TOS, TTL, ID, ports, UDP checksum, BTH fields) is taken as given.
struct Packet : Headers {
  std::vector<uint8_t> payload;

  // Frame length in bytes; throws std::invalid_argument for an unsupported opcode.
  size_t frame_size() const;
  std::vector<uint8_t> build() const;
  // Same as build() but writes into `out` (resized), so a caller can reuse the storage.
  void build_into(std::vector<uint8_t>& out) const;
};

enum class DecodeError : uint8_t {
  Ok = 0,
  TruncatedEth,        // shorter than the Ethernet (+VLAN) header
  BadEtherType,        // neither IPv4 nor IPv6
  TruncatedIp,         // IP header does not fit
  BadIpVersion,        // version nibble does not match the EtherType
  BadIpHeaderLen,      // IPv4 IHL != 5 (options are not supported by RoCEv2 NICs)
  BadIpLength,         // IP length larger than the frame or too small for IP+UDP
  BadIpChecksum,
  IpFragment,          // MF set or fragment offset != 0
  NotUdp,              // protocol / next header != 17
  BadUdpLength,        // UDP length != IP payload length
  NotRoce,             // UDP destination port != 4791
  TruncatedBth,        // UDP payload too short for BTH + ICRC
  BadTver,             // BTH TVer != 0
  UnknownOpcode,
  TruncatedHeaders,    // the opcode's extension headers do not fit
  BadPadCnt,           // PadCnt larger than the data, or non-zero without payload
  UnexpectedPayload,   // data present on an opcode that carries none (or wrong size)
  BadPayloadLength,    // payload length violates the opcode's rule for the given MTU
  BadIcrc,
  kCount
};

const char* decode_error_name(DecodeError e);  // "bad_icrc", ...

// A decoded frame. `payload` points into the caller's frame buffer (not owned) and excludes
// the pad bytes, which start at payload + payload_len.
struct DecodedPacket : Headers {
  const OpcodeInfo* info = nullptr;
  const uint8_t* payload = nullptr;
  uint32_t payload_len = 0;
  uint32_t icrc = 0;          // as received (equal to the computed value when decode succeeds)
  size_t l3_offset = 0;       // offset of the IP header in the frame
  size_t end_offset = 0;      // offset just past the ICRC (trailing bytes are ignored)
};

// Decodes and validates a frame. With mtu != 0 the payload length is also checked against the
// opcode's position (FIRST/MIDDLE == mtu, LAST 1..mtu, ONLY 0..mtu). On an error `out` holds
// whatever was decoded before the failing check.
DecodeError decode(const uint8_t* frame, size_t len, DecodedPacket& out, uint32_t mtu = 0);
inline DecodeError decode(const std::vector<uint8_t>& frame, DecodedPacket& out,
                          uint32_t mtu = 0) {
  return decode(frame.data(), frame.size(), out, mtu);
}

}  // namespace srnic::roce
