// Big-endian encode/decode of the Ethernet, IP, UDP and IB transport headers.
#include "srnic/roce/headers.hpp"

#include <cstring>

namespace srnic::roce {

void EthHdr::encode(uint8_t* p) const {
  std::memcpy(p, dst.data(), 6);
  std::memcpy(p + 6, src.data(), 6);
  put_be16(p + 12, ethertype);
}
EthHdr EthHdr::decode(const uint8_t* p) {
  EthHdr h;
  std::memcpy(h.dst.data(), p, 6);
  std::memcpy(h.src.data(), p + 6, 6);
  h.ethertype = get_be16(p + 12);
  return h;
}

void Ipv4Hdr::encode(uint8_t* p) const {
  p[0] = version_ihl;
  p[1] = tos;
  put_be16(p + 2, total_length);
  put_be16(p + 4, id);
  put_be16(p + 6, flags_frag);
  p[8] = ttl;
  p[9] = protocol;
  put_be16(p + 10, checksum);
  put_be32(p + 12, src);
  put_be32(p + 16, dst);
}
Ipv4Hdr Ipv4Hdr::decode(const uint8_t* p) {
  Ipv4Hdr h;
  h.version_ihl = p[0];
  h.tos = p[1];
  h.total_length = get_be16(p + 2);
  h.id = get_be16(p + 4);
  h.flags_frag = get_be16(p + 6);
  h.ttl = p[8];
  h.protocol = p[9];
  h.checksum = get_be16(p + 10);
  h.src = get_be32(p + 12);
  h.dst = get_be32(p + 16);
  return h;
}
uint16_t Ipv4Hdr::compute_checksum() const {
  Ipv4Hdr t = *this;
  t.checksum = 0;
  uint8_t b[kSize];
  t.encode(b);
  uint32_t sum = 0;
  for (size_t i = 0; i < kSize; i += 2) sum += get_be16(b + i);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return uint16_t(~sum);
}

void Ipv6Hdr::encode(uint8_t* p) const {
  put_be32(p, uint32_t(version & 0xF) << 28 | uint32_t(traffic_class) << 20 | (flow_label & 0xFFFFF));
  put_be16(p + 4, payload_length);
  p[6] = next_header;
  p[7] = hop_limit;
  std::memcpy(p + 8, src.data(), 16);
  std::memcpy(p + 24, dst.data(), 16);
}
Ipv6Hdr Ipv6Hdr::decode(const uint8_t* p) {
  Ipv6Hdr h;
  const uint32_t w = get_be32(p);
  h.version = uint8_t(w >> 28);
  h.traffic_class = uint8_t(w >> 20);
  h.flow_label = w & 0xFFFFF;
  h.payload_length = get_be16(p + 4);
  h.next_header = p[6];
  h.hop_limit = p[7];
  std::memcpy(h.src.data(), p + 8, 16);
  std::memcpy(h.dst.data(), p + 24, 16);
  return h;
}

void UdpHdr::encode(uint8_t* p) const {
  put_be16(p, sport);
  put_be16(p + 2, dport);
  put_be16(p + 4, length);
  put_be16(p + 6, checksum);
}
UdpHdr UdpHdr::decode(const uint8_t* p) {
  return UdpHdr{get_be16(p), get_be16(p + 2), get_be16(p + 4), get_be16(p + 6)};
}

void Bth::encode(uint8_t* p) const {
  p[0] = opcode;
  p[1] = uint8_t((se ? 0x80 : 0) | (mig_req ? 0x40 : 0) | (pad_cnt & 3) << 4 | (tver & 0xF));
  put_be16(p + 2, pkey);
  p[4] = resv8a;
  put_be24(p + 5, dest_qp);
  p[8] = uint8_t((ack_req ? 0x80 : 0) | (resv7 & 0x7F));
  put_be24(p + 9, psn);
}
Bth Bth::decode(const uint8_t* p) {
  Bth h;
  h.opcode = p[0];
  h.se = p[1] & 0x80;
  h.mig_req = p[1] & 0x40;
  h.pad_cnt = (p[1] >> 4) & 3;
  h.tver = p[1] & 0xF;
  h.pkey = get_be16(p + 2);
  h.resv8a = p[4];
  h.dest_qp = get_be24(p + 5);
  h.ack_req = p[8] & 0x80;
  h.resv7 = p[8] & 0x7F;
  h.psn = get_be24(p + 9);
  return h;
}

void Reth::encode(uint8_t* p) const {
  put_be64(p, va);
  put_be32(p + 8, rkey);
  put_be32(p + 12, dma_len);
}
Reth Reth::decode(const uint8_t* p) { return Reth{get_be64(p), get_be32(p + 8), get_be32(p + 12)}; }

void Aeth::encode(uint8_t* p) const {
  p[0] = syndrome;
  put_be24(p + 1, msn);
}
Aeth Aeth::decode(const uint8_t* p) { return Aeth{p[0], get_be24(p + 1)}; }

void ImmDt::encode(uint8_t* p) const { put_be32(p, imm); }
ImmDt ImmDt::decode(const uint8_t* p) { return ImmDt{get_be32(p)}; }

void Deth::encode(uint8_t* p) const {
  put_be32(p, qkey);
  p[4] = 0;
  put_be24(p + 5, src_qp);
}
Deth Deth::decode(const uint8_t* p) { return Deth{get_be32(p), get_be24(p + 5)}; }

void AtomicEth::encode(uint8_t* p) const {
  put_be64(p, va);
  put_be32(p + 8, rkey);
  put_be64(p + 12, swap_add);
  put_be64(p + 20, compare);
}
AtomicEth AtomicEth::decode(const uint8_t* p) {
  return AtomicEth{get_be64(p), get_be32(p + 8), get_be64(p + 12), get_be64(p + 20)};
}

void AtomicAckEth::encode(uint8_t* p) const { put_be64(p, orig); }
AtomicAckEth AtomicAckEth::decode(const uint8_t* p) { return AtomicAckEth{get_be64(p)}; }

void Ieth::encode(uint8_t* p) const { put_be32(p, rkey); }
Ieth Ieth::decode(const uint8_t* p) { return Ieth{get_be32(p)}; }

void Feth::encode(uint8_t* p) const { put_be32(p, value); }
Feth Feth::decode(const uint8_t* p) { return Feth{get_be32(p)}; }

void CnpPad::encode(uint8_t* p) const { std::memcpy(p, bytes.data(), kSize); }
CnpPad CnpPad::decode(const uint8_t* p) {
  CnpPad h;
  std::memcpy(h.bytes.data(), p, kSize);
  return h;
}

}  // namespace srnic::roce
