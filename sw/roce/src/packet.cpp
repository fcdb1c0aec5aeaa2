// Frame assembly (lengths, checksum, pad, ICRC) and validating decode of RoCEv2 frames.
#include "srnic/roce/packet.hpp"

#include <stdexcept>

#include "srnic/roce/icrc.hpp"

namespace srnic::roce {

namespace {

// Writes the extension headers selected by `mask` in wire order; returns bytes written.
size_t encode_ext(const Headers& h, uint16_t mask, uint8_t* p) {
  uint8_t* s = p;
  if (mask & kHdrFeth) { h.feth.encode(p); p += Feth::kSize; }
  if (mask & kHdrDeth) { h.deth.encode(p); p += Deth::kSize; }
  if (mask & kHdrReth) { h.reth.encode(p); p += Reth::kSize; }
  if (mask & kHdrAtomicEth) { h.atomic.encode(p); p += AtomicEth::kSize; }
  if (mask & kHdrImmDt) { h.immdt.encode(p); p += ImmDt::kSize; }
  if (mask & kHdrIeth) { h.ieth.encode(p); p += Ieth::kSize; }
  if (mask & kHdrAeth) { h.aeth.encode(p); p += Aeth::kSize; }
  if (mask & kHdrAtomicAckEth) { h.atomic_ack.encode(p); p += AtomicAckEth::kSize; }
  if (mask & kHdrCnpPad) { h.cnp.encode(p); p += CnpPad::kSize; }
  return size_t(p - s);
}

void decode_ext(Headers& h, uint16_t mask, const uint8_t* p) {
  if (mask & kHdrFeth) { h.feth = Feth::decode(p); p += Feth::kSize; }
  if (mask & kHdrDeth) { h.deth = Deth::decode(p); p += Deth::kSize; }
  if (mask & kHdrReth) { h.reth = Reth::decode(p); p += Reth::kSize; }
  if (mask & kHdrAtomicEth) { h.atomic = AtomicEth::decode(p); p += AtomicEth::kSize; }
  if (mask & kHdrImmDt) { h.immdt = ImmDt::decode(p); p += ImmDt::kSize; }
  if (mask & kHdrIeth) { h.ieth = Ieth::decode(p); p += Ieth::kSize; }
  if (mask & kHdrAeth) { h.aeth = Aeth::decode(p); p += Aeth::kSize; }
  if (mask & kHdrAtomicAckEth) { h.atomic_ack = AtomicAckEth::decode(p); p += AtomicAckEth::kSize; }
  if (mask & kHdrCnpPad) h.cnp = CnpPad::decode(p);
}

const OpcodeInfo& info_or_throw(uint8_t code) {
  const OpcodeInfo* i = opcode_info(code);
  if (!i) throw std::invalid_argument("Packet: unsupported opcode");
  return *i;
}

}  // namespace

size_t Packet::frame_size() const {
  const OpcodeInfo& oi = info_or_throw(bth.opcode);
  const size_t pad = (4 - payload.size() % 4) % 4;
  return EthHdr::kSize + (has_vlan ? 4 : 0) + (ipv6 ? Ipv6Hdr::kSize : Ipv4Hdr::kSize) +
         UdpHdr::kSize + Bth::kSize + oi.header_len + payload.size() + pad + kIcrcSize;
}

std::vector<uint8_t> Packet::build() const {
  std::vector<uint8_t> out;
  build_into(out);
  return out;
}

void Packet::build_into(std::vector<uint8_t>& out) const {
  const OpcodeInfo& oi = info_or_throw(bth.opcode);
  const size_t pad = (4 - payload.size() % 4) % 4;
  out.assign(frame_size(), 0);
  uint8_t* p = out.data();

  EthHdr e = eth;
  const uint16_t l3type = ipv6 ? kEtherTypeIpv6 : kEtherTypeIpv4;
  if (has_vlan) {
    e.ethertype = kEtherTypeVlan;
    e.encode(p);
    put_be16(p + 14, vlan_tci);
    put_be16(p + 16, l3type);
    p += 18;
  } else {
    e.ethertype = l3type;
    e.encode(p);
    p += EthHdr::kSize;
  }
  uint8_t* l3 = p;
  const size_t udp_len = UdpHdr::kSize + Bth::kSize + oi.header_len + payload.size() + pad + kIcrcSize;
  if (udp_len > 0xFFFF - Ipv4Hdr::kSize) throw std::invalid_argument("Packet: too large");
  if (ipv6) {
    Ipv6Hdr h = ip6;
    h.version = 6;
    h.next_header = kIpProtoUdp;
    h.payload_length = uint16_t(udp_len);
    h.encode(p);
    p += Ipv6Hdr::kSize;
  } else {
    Ipv4Hdr h = ip4;
    h.version_ihl = 0x45;
    h.protocol = kIpProtoUdp;
    h.total_length = uint16_t(Ipv4Hdr::kSize + udp_len);
    h.checksum = h.compute_checksum();
    h.encode(p);
    p += Ipv4Hdr::kSize;
  }
  UdpHdr u = udp;
  u.length = uint16_t(udp_len);
  u.encode(p);
  p += UdpHdr::kSize;
  Bth b = bth;
  b.pad_cnt = uint8_t(pad);
  b.encode(p);
  p += Bth::kSize;
  p += encode_ext(*this, oi.headers, p);
  std::copy(payload.begin(), payload.end(), p);
  p += payload.size() + pad;  // pad bytes are already zero
  icrc_store(p, icrc_compute(l3, size_t(p - l3)));
}

const char* decode_error_name(DecodeError e) {
  static const char* const kNames[] = {
      "ok",           "truncated_eth",   "bad_ethertype",      "truncated_ip",
      "bad_ip_version", "bad_ip_header_len", "bad_ip_length",  "bad_ip_checksum",
      "ip_fragment",  "not_udp",         "bad_udp_length",     "not_roce",
      "truncated_bth", "bad_tver",       "unknown_opcode",     "truncated_headers",
      "bad_padcnt",   "unexpected_payload", "bad_payload_length", "bad_icrc"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == size_t(DecodeError::kCount));
  return size_t(e) < size_t(DecodeError::kCount) ? kNames[size_t(e)] : "invalid";
}

DecodeError decode(const uint8_t* f, size_t len, DecodedPacket& out, uint32_t mtu) {
  out = DecodedPacket{};
  if (len < EthHdr::kSize) return DecodeError::TruncatedEth;
  out.eth = EthHdr::decode(f);
  size_t off = EthHdr::kSize;
  uint16_t type = out.eth.ethertype;
  if (type == kEtherTypeVlan) {
    if (len < off + 4) return DecodeError::TruncatedEth;
    out.has_vlan = true;
    out.vlan_tci = get_be16(f + off);
    type = get_be16(f + off + 2);
    off += 4;
  }
  if (type != kEtherTypeIpv4 && type != kEtherTypeIpv6) return DecodeError::BadEtherType;
  out.ipv6 = type == kEtherTypeIpv6;
  out.l3_offset = off;
  const uint8_t* l3 = f + off;
  size_t l3_len;  // IP header + IP payload, from the IP length field
  size_t udp_avail;
  if (out.ipv6) {
    if (len < off + Ipv6Hdr::kSize) return DecodeError::TruncatedIp;
    out.ip6 = Ipv6Hdr::decode(l3);
    if (out.ip6.version != 6) return DecodeError::BadIpVersion;
    l3_len = Ipv6Hdr::kSize + out.ip6.payload_length;
    if (off + l3_len > len || out.ip6.payload_length < UdpHdr::kSize) return DecodeError::BadIpLength;
    if (out.ip6.next_header != kIpProtoUdp) return DecodeError::NotUdp;
    udp_avail = out.ip6.payload_length;
    off += Ipv6Hdr::kSize;
  } else {
    if (len < off + Ipv4Hdr::kSize) return DecodeError::TruncatedIp;
    out.ip4 = Ipv4Hdr::decode(l3);
    if ((out.ip4.version_ihl >> 4) != 4) return DecodeError::BadIpVersion;
    if ((out.ip4.version_ihl & 0xF) != 5) return DecodeError::BadIpHeaderLen;
    l3_len = out.ip4.total_length;
    if (off + l3_len > len || l3_len < Ipv4Hdr::kSize + UdpHdr::kSize) return DecodeError::BadIpLength;
    if (out.ip4.compute_checksum() != out.ip4.checksum) return DecodeError::BadIpChecksum;
    if (out.ip4.flags_frag & 0x3FFF) return DecodeError::IpFragment;
    if (out.ip4.protocol != kIpProtoUdp) return DecodeError::NotUdp;
    udp_avail = l3_len - Ipv4Hdr::kSize;
    off += Ipv4Hdr::kSize;
  }
  out.udp = UdpHdr::decode(f + off);
  if (out.udp.length != udp_avail) return DecodeError::BadUdpLength;
  if (out.udp.dport != kRoceUdpPort) return DecodeError::NotRoce;
  off += UdpHdr::kSize;
  const size_t end = out.l3_offset + l3_len;  // just past the ICRC
  if (end < off + Bth::kSize + kIcrcSize) return DecodeError::TruncatedBth;
  out.bth = Bth::decode(f + off);
  off += Bth::kSize;
  if (out.bth.tver != 0) return DecodeError::BadTver;
  out.info = opcode_info(out.bth.opcode);
  if (!out.info) return DecodeError::UnknownOpcode;
  const OpcodeInfo& oi = *out.info;
  const size_t icrc_off = end - kIcrcSize;
  if (off + oi.header_len > icrc_off) return DecodeError::TruncatedHeaders;
  decode_ext(out, oi.headers, f + off);
  off += oi.header_len;
  const size_t data = icrc_off - off;  // payload + pad
  if (out.bth.pad_cnt > data) return DecodeError::BadPadCnt;
  const size_t plen = data - out.bth.pad_cnt;
  if (!oi.has_payload) {
    if (out.bth.pad_cnt != 0) return DecodeError::BadPadCnt;
    if (data != 0) return DecodeError::UnexpectedPayload;
  } else if (data % 4 != 0) {
    return DecodeError::BadPadCnt;  // payload + pad must end on a 4-byte boundary
  }
  if (oi.kind == OpKind::AtomicWrite && plen != 8) return DecodeError::UnexpectedPayload;
  if (oi.position == Position::Last && plen == 0) return DecodeError::BadPayloadLength;
  if (mtu != 0 && oi.has_payload) {
    const bool ok = (oi.position == Position::First || oi.position == Position::Middle)
                        ? plen == mtu
                        : plen <= mtu;
    if (!ok) return DecodeError::BadPayloadLength;
  }
  out.payload = f + off;
  out.payload_len = uint32_t(plen);
  out.end_offset = end;
  out.icrc = icrc_load(f + icrc_off);
  if (icrc_compute(l3, icrc_off - out.l3_offset) != out.icrc) return DecodeError::BadIcrc;
  return DecodeError::Ok;
}

}  // namespace srnic::roce
