// frames.hpp: random RoCEv2 frames from srnic_roce's Packet builder, and the AXI-Stream beat
// form (64-byte beats, byte i of a beat in bits [8i+7:8i], tkeep contiguous from byte 0).
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "bench.hpp"
#include "srnic/roce/icrc.hpp"
#include "srnic/roce/opcode.hpp"
#include "srnic/roce/packet.hpp"

namespace srnic::verif::blocks {

struct Beat {
  uint8_t data[64];
  uint64_t keep;
  bool last;
  bool user;
};

inline std::vector<Beat> to_beats(const std::vector<uint8_t>& f, bool user = false) {
  std::vector<Beat> beats;
  for (size_t off = 0; off < f.size(); off += 64) {
    Beat b{};
    const size_t n = std::min<size_t>(64, f.size() - off);
    std::memcpy(b.data, f.data() + off, n);
    b.keep = n == 64 ? ~0ull : (1ull << n) - 1;
    b.last = off + 64 >= f.size();
    b.user = user;
    beats.push_back(b);
  }
  return beats;
}

// Frame f (ICRC included) cut so that its length without the ICRC is `mod64` modulo 64 (f
// must be long enough), with the IPv4 total length rewritten and the ICRC recomputed: frames
// of lengths that 4-byte padded RoCE packets never have, for blocks that take any length.
inline std::vector<uint8_t> cut_to_length_mod64(std::vector<uint8_t> f, size_t mod64) {
  f.resize(f.size() - roce::kIcrcSize);
  f.resize(f.size() - (f.size() - mod64 % 64 + 64) % 64);
  const size_t ip_len = f.size() - 14 + roce::kIcrcSize;
  f[16] = uint8_t(ip_len >> 8);
  f[17] = uint8_t(ip_len);
  f.resize(f.size() + roce::kIcrcSize);
  roce::icrc_store(f.data() + f.size() - roce::kIcrcSize, roce::icrc_compute(f.data() + 14, ip_len - roce::kIcrcSize));
  return f;
}

// RC opcodes the NIC sends and receives.
inline const uint8_t kRcOpcodes[] = {
    roce::op::kRcSendFirst, roce::op::kRcSendMiddle, roce::op::kRcSendLast, roce::op::kRcSendLastImm,
    roce::op::kRcSendOnly, roce::op::kRcSendOnlyImm, roce::op::kRcWriteFirst, roce::op::kRcWriteMiddle,
    roce::op::kRcWriteLast, roce::op::kRcWriteLastImm, roce::op::kRcWriteOnly, roce::op::kRcWriteOnlyImm,
    roce::op::kRcReadRequest, roce::op::kRcReadResponseFirst, roce::op::kRcReadResponseMiddle,
    roce::op::kRcReadResponseLast, roce::op::kRcReadResponseOnly, roce::op::kRcAck};

// A random RC packet between two fixed endpoints; payload length follows the opcode's rule
// for the given MTU (FIRST/MIDDLE = mtu, LAST 1..mtu, ONLY 0..mtu).
inline roce::Packet random_packet(Rng& rng, uint32_t mtu, const roce::MacAddr& dst_mac,
                                  uint32_t dst_ip) {
  roce::Packet p;
  p.eth.dst = dst_mac;
  p.eth.src = {0x02, 0, 0, 0, 0, 0x02};
  p.ip4.src = 0x0A000002;
  p.ip4.dst = dst_ip;
  p.ip4.tos = rng.u8();
  p.ip4.ttl = rng.u8();
  p.ip4.id = uint16_t(rng.u32());
  p.udp.sport = uint16_t(0xC000 | rng.below(0x4000));
  p.udp.checksum = rng.percent(50) ? 0 : uint16_t(rng.u32());
  p.bth.opcode = kRcOpcodes[rng.below(sizeof kRcOpcodes)];
  p.bth.se = rng.percent(20);
  p.bth.resv8a = rng.percent(30) ? rng.u8() : 0;  // FECN/BECN: not covered by the ICRC
  p.bth.dest_qp = rng.u32() & 0xFFFFFF;
  p.bth.ack_req = rng.percent(50);
  p.bth.psn = rng.u32() & 0xFFFFFF;
  p.reth.va = rng.next();
  p.reth.rkey = rng.u32();
  p.reth.dma_len = rng.u32();
  p.immdt.imm = rng.u32();
  p.aeth.syndrome = rng.u8();
  p.aeth.msn = rng.u32() & 0xFFFFFF;
  const auto* oi = roce::opcode_info(p.bth.opcode);
  size_t len = 0;
  if (oi->has_payload) {
    switch (oi->position) {
      case roce::Position::First:
      case roce::Position::Middle: len = mtu; break;
      case roce::Position::Last: len = rng.range(1, mtu); break;
      default: len = rng.percent(20) ? rng.below(4) : rng.range(0, mtu); break;
    }
  }
  p.payload.resize(len);
  for (auto& b : p.payload) b = rng.u8();
  return p;
}

}  // namespace srnic::verif::blocks
