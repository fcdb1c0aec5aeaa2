// Ethernet, IPv4, IPv6, UDP and InfiniBand transport headers with big-endian encode/decode.
// Each struct holds host-order fields; encode() writes kSize bytes, decode() reads kSize bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace srnic::roce {

using MacAddr = std::array<uint8_t, 6>;
using Ipv6Addr = std::array<uint8_t, 16>;

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr uint16_t kEtherTypeVlan = 0x8100;
constexpr uint8_t kIpProtoUdp = 17;
constexpr uint16_t kRoceUdpPort = 4791;
constexpr size_t kIcrcSize = 4;

// Big-endian field access.
inline void put_be16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8); p[1] = uint8_t(v); }
inline void put_be24(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 16); p[1] = uint8_t(v >> 8); p[2] = uint8_t(v); }
inline void put_be32(uint8_t* p, uint32_t v) { put_be16(p, uint16_t(v >> 16)); put_be16(p + 2, uint16_t(v)); }
inline void put_be64(uint8_t* p, uint64_t v) { put_be32(p, uint32_t(v >> 32)); put_be32(p + 4, uint32_t(v)); }
inline uint16_t get_be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get_be24(const uint8_t* p) { return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]; }
inline uint32_t get_be32(const uint8_t* p) { return uint32_t(get_be16(p)) << 16 | get_be16(p + 2); }
inline uint64_t get_be64(const uint8_t* p) { return uint64_t(get_be32(p)) << 32 | get_be32(p + 4); }

struct EthHdr {
  static constexpr size_t kSize = 14;
  MacAddr dst{};
  MacAddr src{};
  uint16_t ethertype = kEtherTypeIpv4;
  void encode(uint8_t* p) const;
  static EthHdr decode(const uint8_t* p);
};

struct Ipv4Hdr {
  static constexpr size_t kSize = 20;  // no options
  uint8_t version_ihl = 0x45;
  uint8_t tos = 0;                     // DSCP << 2 | ECN
  uint16_t total_length = 0;
  uint16_t id = 0;
  uint16_t flags_frag = 0x4000;        // DF
  uint8_t ttl = 64;
  uint8_t protocol = kIpProtoUdp;
  uint16_t checksum = 0;
  uint32_t src = 0;                    // 10.0.0.1 = 0x0A000001
  uint32_t dst = 0;
  void encode(uint8_t* p) const;
  static Ipv4Hdr decode(const uint8_t* p);
  // Header checksum over the encoded header with the checksum field taken as zero.
  uint16_t compute_checksum() const;
};

struct Ipv6Hdr {
  static constexpr size_t kSize = 40;
  uint8_t version = 6;
  uint8_t traffic_class = 0;           // DSCP << 2 | ECN
  uint32_t flow_label = 0;             // 20 bits
  uint16_t payload_length = 0;
  uint8_t next_header = kIpProtoUdp;
  uint8_t hop_limit = 64;
  Ipv6Addr src{};
  Ipv6Addr dst{};
  void encode(uint8_t* p) const;
  static Ipv6Hdr decode(const uint8_t* p);
};

struct UdpHdr {
  static constexpr size_t kSize = 8;
  uint16_t sport = 0xC000;
  uint16_t dport = kRoceUdpPort;
  uint16_t length = 0;
  uint16_t checksum = 0;
  void encode(uint8_t* p) const;
  static UdpHdr decode(const uint8_t* p);
};

struct Bth {
  static constexpr size_t kSize = 12;
  uint8_t opcode = 0;
  bool se = false;
  bool mig_req = false;
  uint8_t pad_cnt = 0;                 // 2 bits
  uint8_t tver = 0;                    // 4 bits
  uint16_t pkey = 0xFFFF;
  uint8_t resv8a = 0;                  // bit7 FECN, bit6 BECN, bits 5:0 reserved
  uint32_t dest_qp = 0;                // 24 bits
  bool ack_req = false;
  uint8_t resv7 = 0;
  uint32_t psn = 0;                    // 24 bits
  bool fecn() const { return resv8a & 0x80; }
  bool becn() const { return resv8a & 0x40; }
  void encode(uint8_t* p) const;
  static Bth decode(const uint8_t* p);
};

struct Reth {
  static constexpr size_t kSize = 16;
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t dma_len = 0;
  void encode(uint8_t* p) const;
  static Reth decode(const uint8_t* p);
};

struct Aeth {
  static constexpr size_t kSize = 4;
  uint8_t syndrome = 0x1F;
  uint32_t msn = 0;                    // 24 bits
  void encode(uint8_t* p) const;
  static Aeth decode(const uint8_t* p);
};

struct ImmDt {
  static constexpr size_t kSize = 4;
  uint32_t imm = 0;                    // the 4 wire bytes read big-endian
  void encode(uint8_t* p) const;
  static ImmDt decode(const uint8_t* p);
};

struct Deth {
  static constexpr size_t kSize = 8;
  uint32_t qkey = 0;
  uint32_t src_qp = 0;                 // 24 bits
  void encode(uint8_t* p) const;
  static Deth decode(const uint8_t* p);
};

struct AtomicEth {
  static constexpr size_t kSize = 28;
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint64_t swap_add = 0;
  uint64_t compare = 0;
  void encode(uint8_t* p) const;
  static AtomicEth decode(const uint8_t* p);
};

struct AtomicAckEth {
  static constexpr size_t kSize = 8;
  uint64_t orig = 0;
  void encode(uint8_t* p) const;
  static AtomicAckEth decode(const uint8_t* p);
};

struct Ieth {
  static constexpr size_t kSize = 4;
  uint32_t rkey = 0;
  void encode(uint8_t* p) const;
  static Ieth decode(const uint8_t* p);
};

struct Feth {
  static constexpr size_t kSize = 4;
  uint32_t value = 0;                  // bits 3:0 placement type, 5:4 selectivity level
  void encode(uint8_t* p) const;
  static Feth decode(const uint8_t* p);
};

// The 16 reserved bytes that follow the BTH of a CNP.
struct CnpPad {
  static constexpr size_t kSize = 16;
  std::array<uint8_t, 16> bytes{};
  void encode(uint8_t* p) const;
  static CnpPad decode(const uint8_t* p);
};

}  // namespace srnic::roce
