// Frame builder and decoder tests: recorded vectors, round trips and every decode error.
#include <gtest/gtest.h>

#include "srnic/roce/icrc.hpp"
#include "srnic/roce/packet.hpp"
#include "vectors.hpp"

namespace srnic::roce {
namespace {

using test::load_vector;

// Recomputes the IPv4 checksum and ICRC after a test edits header bytes.
void refresh(std::vector<uint8_t>& f, size_t l3 = 14) {
  if ((f[l3] >> 4) == 4) {
    Ipv4Hdr ip = Ipv4Hdr::decode(&f[l3]);
    put_be16(&f[l3 + 10], ip.compute_checksum());
  }
  const size_t n = f.size() - l3 - 4;
  icrc_store(&f[f.size() - 4], icrc_compute(&f[l3], n));
}

TEST(Decode, CnpVector) {
  const auto v = load_vector("cx4_cnp");
  DecodedPacket p;
  ASSERT_EQ(decode(v.frame, p), DecodeError::Ok);
  EXPECT_EQ(p.bth.opcode, op::kCnp);
  EXPECT_TRUE(p.bth.becn());
  EXPECT_EQ(p.bth.dest_qp, 0x0118u);
  EXPECT_EQ(p.udp.sport, 0);
  EXPECT_EQ(p.ip4.tos, 0xC2);
  EXPECT_EQ(p.payload_len, 0u);
  EXPECT_EQ(p.icrc, v.icrc);
}

TEST(Decode, ScapyUcSendOnlyVector) {
  const auto v = load_vector("scapy_uc_send_only");
  DecodedPacket p;
  ASSERT_EQ(decode(v.frame, p), DecodeError::Ok);
  EXPECT_STREQ(p.info->name, "UC_SEND_ONLY");
  EXPECT_TRUE(p.bth.mig_req);
  EXPECT_EQ(p.bth.pad_cnt, 2);
  EXPECT_EQ(p.bth.dest_qp, 0xD3u);
  EXPECT_EQ(p.bth.psn, 13571856u);
  EXPECT_EQ(p.payload_len, 18u);
  EXPECT_EQ(p.udp.checksum, 0xACA2);  // non-zero UDP checksum is accepted
}

TEST(Decode, RcWriteOnlyVector) {
  const auto v = load_vector("rc_write_only");
  DecodedPacket p;
  ASSERT_EQ(decode(v.frame, p, 1024), DecodeError::Ok);
  EXPECT_EQ(p.bth.opcode, op::kRcWriteOnly);
  EXPECT_TRUE(p.bth.ack_req);
  EXPECT_EQ(p.bth.psn, 0x101u);
  EXPECT_EQ(p.reth.va, 0x00007f0000001000ull);
  EXPECT_EQ(p.reth.rkey, 0x1234u);
  EXPECT_EQ(p.reth.dma_len, 8u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(p.payload), p.payload_len), "ABCDEFGH");
  EXPECT_EQ(p.end_offset, v.frame.size());
}

TEST(Decode, RcAckVector) {
  const auto v = load_vector("rc_ack");
  DecodedPacket p;
  ASSERT_EQ(decode(v.frame, p), DecodeError::Ok);
  EXPECT_EQ(p.aeth.syndrome, 0x1F);
  EXPECT_EQ(p.aeth.msn, 1u);
  EXPECT_EQ(p.bth.dest_qp, 0x34u);
  EXPECT_EQ(p.bth.psn, 0x100u);
}

TEST(Decode, Ipv6SendOnlyVector) {
  const auto v = load_vector("rc_send_only_ipv6");
  DecodedPacket p;
  ASSERT_EQ(decode(v.frame, p), DecodeError::Ok);
  EXPECT_TRUE(p.ipv6);
  EXPECT_EQ(p.ip6.traffic_class, 0x6A);
  EXPECT_EQ(p.ip6.flow_label, 0x12345u);
  EXPECT_EQ(p.bth.pad_cnt, 3);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(p.payload), p.payload_len), "hello");
}

TEST(Build, ReproducesRcWriteOnlyVector) {
  EXPECT_EQ(test::rc_write_only_fields().build(), load_vector("rc_write_only").frame);
}

TEST(Build, ReproducesRcAckVector) {
  EXPECT_EQ(test::rc_ack_fields().build(), load_vector("rc_ack").frame);
}

TEST(Build, ReproducesIpv6SendOnlyVector) {
  Packet p = test::vector_base();
  p.ipv6 = true;
  p.ip6.traffic_class = 0x6A;
  p.ip6.flow_label = 0x12345;
  p.ip6.hop_limit = 64;
  p.ip6.src = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  p.ip6.dst = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  p.bth.opcode = op::kRcSendOnly;
  p.bth.dest_qp = 0x12;
  p.bth.ack_req = true;
  p.bth.psn = 0x100;
  p.payload = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_EQ(p.build(), load_vector("rc_send_only_ipv6").frame);
}

TEST(Build, ReproducesCnpVector) {
  Packet p;
  p.eth.dst = {0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2};
  p.eth.src = {0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32};
  p.ip4.tos = 0xC2;
  p.ip4.id = 0x718C;
  p.ip4.src = 0x0A001101;
  p.ip4.dst = 0x0A001201;
  p.udp.sport = 0;
  p.bth.opcode = op::kCnp;
  p.bth.resv8a = 0x40;
  p.bth.dest_qp = 0x0118;
  EXPECT_EQ(p.build(), load_vector("cx4_cnp").frame);
}

// Every supported opcode survives build -> decode with its headers and payload intact.
TEST(Build, RoundTripAllOpcodes) {
  for (int c = 0; c < 256; ++c) {
    const OpcodeInfo* oi = opcode_info(uint8_t(c));
    if (!oi) continue;
    for (size_t len : {size_t(0), size_t(1), size_t(7), size_t(256)}) {
      if (!oi->has_payload && len) continue;
      if (oi->position == Position::Last && len == 0) continue;
      if (oi->kind == OpKind::AtomicWrite && len != 8) len = 8;
      Packet p = test::vector_base();
      p.has_vlan = c % 3 == 0;
      p.vlan_tci = 0x0123;
      p.bth.opcode = uint8_t(c);
      p.bth.psn = 0xFFFFF0u + uint32_t(c % 16);
      p.bth.dest_qp = 0x800000u | uint32_t(c);
      p.reth = {0x1122334455667788ull, 0xABCD00 | uint32_t(c), uint32_t(len)};
      p.immdt.imm = 0xFEEDC0DE;
      p.aeth = {0x62, 0x00ABCD};
      p.deth = {0x80010000, 0x1};
      p.atomic = {0x1000, 7, 0x0102030405060708ull, 99};
      p.atomic_ack.orig = 0xA5A5A5A5A5A5A5A5ull;
      p.ieth.rkey = 0x4444;
      p.feth.value = 0x13;
      for (size_t i = 0; i < len; ++i) p.payload.push_back(uint8_t(i * 13 + c));
      const auto f = p.build();
      ASSERT_EQ(f.size(), p.frame_size());
      DecodedPacket d;
      ASSERT_EQ(decode(f, d), DecodeError::Ok) << oi->name << " len " << len;
      EXPECT_EQ(d.has_vlan, p.has_vlan);
      EXPECT_EQ(d.bth.psn, p.bth.psn);
      EXPECT_EQ(d.bth.dest_qp, p.bth.dest_qp);
      EXPECT_EQ(d.bth.pad_cnt, (4 - len % 4) % 4);
      ASSERT_EQ(d.payload_len, len);
      EXPECT_TRUE(std::equal(p.payload.begin(), p.payload.end(), d.payload));
      if (oi->headers & kHdrReth) {
        EXPECT_EQ(d.reth.rkey, p.reth.rkey) << oi->name;
      }
      if (oi->headers & kHdrImmDt) {
        EXPECT_EQ(d.immdt.imm, 0xFEEDC0DEu) << oi->name;
      }
      if (oi->headers & kHdrAeth) {
        EXPECT_EQ(d.aeth.msn, 0xABCDu) << oi->name;
      }
      if (oi->headers & kHdrDeth) {
        EXPECT_EQ(d.deth.qkey, 0x80010000u) << oi->name;
      }
      if (oi->headers & kHdrAtomicEth) {
        EXPECT_EQ(d.atomic.swap_add, 0x0102030405060708ull) << oi->name;
      }
      if (oi->headers & kHdrAtomicAckEth) {
        EXPECT_EQ(d.atomic_ack.orig, 0xA5A5A5A5A5A5A5A5ull) << oi->name;
      }
      if (oi->headers & kHdrIeth) {
        EXPECT_EQ(d.ieth.rkey, 0x4444u) << oi->name;
      }
      if (oi->headers & kHdrFeth) {
        EXPECT_EQ(d.feth.value, 0x13u) << oi->name;
      }
    }
  }
}

TEST(Build, UnsupportedOpcodeThrows) {
  Packet p = test::vector_base();
  p.bth.opcode = 0x15;
  EXPECT_THROW(p.build(), std::invalid_argument);
}

TEST(Decode, TrailingBytesAreIgnored) {
  auto f = load_vector("rc_ack").frame;
  f.resize(f.size() + 4, 0xAB);  // e.g. an FCS left on the frame
  DecodedPacket p;
  EXPECT_EQ(decode(f, p), DecodeError::Ok);
  EXPECT_EQ(p.end_offset, f.size() - 4);
}

struct Corruption {
  const char* name;
  void (*edit)(std::vector<uint8_t>&);
  DecodeError expect;
};

// Each edit breaks exactly one rule (checksums are refreshed unless the test is about them).
const Corruption kCorruptions[] = {
    {"short_eth", [](std::vector<uint8_t>& f) { f.resize(10); }, DecodeError::TruncatedEth},
    {"ethertype", [](std::vector<uint8_t>& f) { f[12] = 0x88; f[13] = 0x15; }, DecodeError::BadEtherType},
    {"short_ip", [](std::vector<uint8_t>& f) { f.resize(30); }, DecodeError::TruncatedIp},
    {"version", [](std::vector<uint8_t>& f) { f[14] = 0x65; refresh(f); }, DecodeError::BadIpVersion},
    {"ihl", [](std::vector<uint8_t>& f) { f[14] = 0x46; refresh(f); }, DecodeError::BadIpHeaderLen},
    {"ip_len_long", [](std::vector<uint8_t>& f) { f[17] += 4; refresh(f); }, DecodeError::BadIpLength},
    {"ip_len_tiny", [](std::vector<uint8_t>& f) { f[16] = 0; f[17] = 24; refresh(f); }, DecodeError::BadIpLength},
    {"ip_csum", [](std::vector<uint8_t>& f) { f[25] ^= 1; }, DecodeError::BadIpChecksum},
    {"fragment", [](std::vector<uint8_t>& f) { f[20] = 0x20; refresh(f); }, DecodeError::IpFragment},
    {"protocol", [](std::vector<uint8_t>& f) { f[23] = 6; refresh(f); }, DecodeError::NotUdp},
    {"udp_len", [](std::vector<uint8_t>& f) { f[39] -= 4; refresh(f); }, DecodeError::BadUdpLength},
    {"dport", [](std::vector<uint8_t>& f) { f[37] = 0xB8; refresh(f); }, DecodeError::NotRoce},
    {"tver", [](std::vector<uint8_t>& f) { f[43] |= 1; refresh(f); }, DecodeError::BadTver},
    {"opcode", [](std::vector<uint8_t>& f) { f[42] = 0x15; refresh(f); }, DecodeError::UnknownOpcode},
    {"pad_on_no_payload", [](std::vector<uint8_t>& f) { f[42] = op::kRcReadRequest; refresh(f); },
     DecodeError::UnexpectedPayload},
    {"icrc", [](std::vector<uint8_t>& f) { f[f.size() - 1] ^= 0x80; }, DecodeError::BadIcrc},
    {"payload_bit", [](std::vector<uint8_t>& f) { f[70] ^= 0x04; }, DecodeError::BadIcrc},
    {"ip_id", [](std::vector<uint8_t>& f) { f[19] ^= 1; Ipv4Hdr ip = Ipv4Hdr::decode(&f[14]); put_be16(&f[24], ip.compute_checksum()); },
     DecodeError::BadIcrc},
};

TEST(Decode, EachErrorIsNamed) {
  for (const Corruption& c : kCorruptions) {
    auto f = load_vector("rc_write_only").frame;
    c.edit(f);
    DecodedPacket p;
    EXPECT_EQ(decode(f, p), c.expect) << c.name << " -> " << decode_error_name(decode(f, p));
  }
  EXPECT_STREQ(decode_error_name(DecodeError::BadIcrc), "bad_icrc");
  EXPECT_STREQ(decode_error_name(DecodeError::NotRoce), "not_roce");
}

// Short UDP payload, truncated extension headers, PadCnt and payload-length rules.
TEST(Decode, LengthRules) {
  auto build = [](uint8_t opc, size_t len) {
    Packet p = test::vector_base();
    p.bth.opcode = opc;
    p.payload.assign(len, 0x5A);
    return p.build();
  };
  DecodedPacket d;
  // ACK with its AETH cut off: total 62 -> shrink the packet by 4 bytes of AETH.
  auto ack = build(op::kRcAck, 0);
  ack.erase(ack.begin() + 54, ack.begin() + 58);
  put_be16(&ack[16], uint16_t(ack.size() - 14));
  put_be16(&ack[38], uint16_t(ack.size() - 34));
  refresh(ack);
  EXPECT_EQ(decode(ack, d), DecodeError::TruncatedHeaders);
  // A packet holding only a BTH and no ICRC room.
  auto tiny = build(op::kRcSendOnly, 0);
  tiny.resize(14 + 20 + 8 + 12);
  put_be16(&tiny[16], uint16_t(tiny.size() - 14));
  put_be16(&tiny[38], uint16_t(tiny.size() - 34));
  Ipv4Hdr ip = Ipv4Hdr::decode(&tiny[14]);
  put_be16(&tiny[24], ip.compute_checksum());
  EXPECT_EQ(decode(tiny, d), DecodeError::TruncatedBth);
  // PadCnt 3 on a 2-byte payload area (4 bytes with pad 0 reinterpreted).
  auto s = build(op::kRcSendOnly, 2);  // 2 bytes + 2 pad
  EXPECT_EQ(decode(s, d), DecodeError::Ok);
  EXPECT_EQ(d.payload_len, 2u);
  s[43] = (s[43] & 0xCF) | 0x30;
  refresh(s);
  EXPECT_EQ(decode(s, d), DecodeError::Ok);  // PadCnt 3 of 4 data bytes is self-consistent
  EXPECT_EQ(d.payload_len, 1u);
  auto z = build(op::kRcSendOnly, 0);
  z[43] |= 0x10;  // PadCnt 1 with no data bytes
  refresh(z);
  EXPECT_EQ(decode(z, d), DecodeError::BadPadCnt);
  // LAST must carry at least one byte.
  auto last = build(op::kRcSendOnly, 0);
  last[42] = op::kRcSendLast;
  refresh(last);
  EXPECT_EQ(decode(last, d), DecodeError::BadPayloadLength);
  // With an MTU: FIRST must be exactly MTU, ONLY at most MTU.
  EXPECT_EQ(decode(build(op::kRcSendFirst, 256), d, 256), DecodeError::Ok);
  EXPECT_EQ(decode(build(op::kRcSendFirst, 252), d, 256), DecodeError::BadPayloadLength);
  EXPECT_EQ(decode(build(op::kRcSendMiddle, 512), d, 256), DecodeError::BadPayloadLength);
  EXPECT_EQ(decode(build(op::kRcSendOnly, 256), d, 256), DecodeError::Ok);
  EXPECT_EQ(decode(build(op::kRcSendOnly, 260), d, 256), DecodeError::BadPayloadLength);
  EXPECT_EQ(decode(build(op::kRcSendOnly, 260), d, 0), DecodeError::Ok);
  // ATOMIC_WRITE carries exactly 8 bytes.
  EXPECT_EQ(decode(build(op::kRcAtomicWrite, 8), d), DecodeError::Ok);
  EXPECT_EQ(decode(build(op::kRcAtomicWrite, 12), d), DecodeError::UnexpectedPayload);
}

TEST(Decode, VlanTaggedFrame) {
  Packet p = test::rc_write_only_fields();
  p.has_vlan = true;
  p.vlan_tci = 0x6005;
  const auto f = p.build();
  EXPECT_EQ(f[12], 0x81);
  EXPECT_EQ(f[13], 0x00);
  DecodedPacket d;
  ASSERT_EQ(decode(f, d), DecodeError::Ok);
  EXPECT_EQ(d.vlan_tci, 0x6005);
  EXPECT_EQ(d.l3_offset, 18u);
  // The ICRC does not cover the Ethernet header, so it equals the untagged vector's.
  EXPECT_EQ(d.icrc, load_vector("rc_write_only").icrc);
}

}  // namespace
}  // namespace srnic::roce
