// Byte-level encode/decode tests for every header struct.
#include <gtest/gtest.h>

#include <vector>

#include "srnic/roce/headers.hpp"

namespace srnic::roce {
namespace {

template <class H>
std::vector<uint8_t> enc(const H& h) {
  std::vector<uint8_t> b(H::kSize, 0xEE);
  h.encode(b.data());
  return b;
}

TEST(Headers, BthLayout) {
  Bth b;
  b.opcode = 0x0A;
  b.se = true;
  b.mig_req = false;
  b.pad_cnt = 3;
  b.tver = 0;
  b.pkey = 0xFFFF;
  b.resv8a = 0x40;
  b.dest_qp = 0xABCDEF;
  b.ack_req = true;
  b.resv7 = 0x05;
  b.psn = 0x123456;
  EXPECT_EQ(enc(b), (std::vector<uint8_t>{0x0A, 0xB0, 0xFF, 0xFF, 0x40, 0xAB, 0xCD, 0xEF, 0x85, 0x12, 0x34, 0x56}));
  const Bth d = Bth::decode(enc(b).data());
  EXPECT_EQ(d.opcode, 0x0A);
  EXPECT_TRUE(d.se);
  EXPECT_EQ(d.pad_cnt, 3);
  EXPECT_TRUE(d.becn());
  EXPECT_FALSE(d.fecn());
  EXPECT_EQ(d.dest_qp, 0xABCDEFu);
  EXPECT_TRUE(d.ack_req);
  EXPECT_EQ(d.resv7, 5);
  EXPECT_EQ(d.psn, 0x123456u);
}

TEST(Headers, RethAethImmDethIeth) {
  EXPECT_EQ(enc(Reth{0x0102030405060708ull, 0x11223344, 0x55667788}),
            (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));
  EXPECT_EQ(enc(Aeth{0x62, 0x0A0B0C}), (std::vector<uint8_t>{0x62, 0x0A, 0x0B, 0x0C}));
  EXPECT_EQ(enc(ImmDt{0xDEADBEEF}), (std::vector<uint8_t>{0xDE, 0xAD, 0xBE, 0xEF}));
  EXPECT_EQ(enc(Deth{0x80010000, 0x000123}), (std::vector<uint8_t>{0x80, 0x01, 0, 0, 0, 0, 0x01, 0x23}));
  EXPECT_EQ(enc(Ieth{0xCAFEF00D}), (std::vector<uint8_t>{0xCA, 0xFE, 0xF0, 0x0D}));
  const Reth r = Reth::decode(enc(Reth{0x7f0000001000ull, 0x1234, 4096}).data());
  EXPECT_EQ(r.va, 0x7f0000001000ull);
  EXPECT_EQ(r.rkey, 0x1234u);
  EXPECT_EQ(r.dma_len, 4096u);
  const Deth d = Deth::decode(enc(Deth{0x11111111, 0xABCDEF}).data());
  EXPECT_EQ(d.qkey, 0x11111111u);
  EXPECT_EQ(d.src_qp, 0xABCDEFu);
}

TEST(Headers, AtomicEthAndAck) {
  AtomicEth a{0x1000, 0x77, 0x0102030405060708ull, 0x1112131415161718ull};
  const auto b = enc(a);
  EXPECT_EQ(b[7], 0x00);
  EXPECT_EQ(b[6], 0x10);
  EXPECT_EQ(b[11], 0x77);
  EXPECT_EQ(b[12], 0x01);
  EXPECT_EQ(b[19], 0x08);
  EXPECT_EQ(b[20], 0x11);
  EXPECT_EQ(b[27], 0x18);
  const AtomicEth d = AtomicEth::decode(b.data());
  EXPECT_EQ(d.swap_add, a.swap_add);
  EXPECT_EQ(d.compare, a.compare);
  EXPECT_EQ(AtomicAckEth::decode(enc(AtomicAckEth{42}).data()).orig, 42u);
  EXPECT_EQ(enc(AtomicAckEth{42})[7], 42);
}

TEST(Headers, Ipv4ChecksumOfKnownHeader) {
  // IPv4 header of the ConnectX-4 CNP capture; its checksum is 0x9161.
  const uint8_t h[20] = {0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
                         0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01};
  const Ipv4Hdr ip = Ipv4Hdr::decode(h);
  EXPECT_EQ(ip.tos, 0xC2);
  EXPECT_EQ(ip.total_length, 60);
  EXPECT_EQ(ip.src, 0x0A001101u);
  EXPECT_EQ(ip.dst, 0x0A001201u);
  EXPECT_EQ(ip.checksum, 0x9161);
  EXPECT_EQ(ip.compute_checksum(), 0x9161);
  std::vector<uint8_t> b(20);
  ip.encode(b.data());
  EXPECT_EQ(b, std::vector<uint8_t>(h, h + 20));
}

TEST(Headers, Ipv6FirstWord) {
  Ipv6Hdr h;
  h.traffic_class = 0x6A;
  h.flow_label = 0x12345;
  h.payload_length = 0x20;
  h.hop_limit = 64;
  const auto b = enc(h);
  EXPECT_EQ(b[0], 0x66);
  EXPECT_EQ(b[1], 0xA1);
  EXPECT_EQ(b[2], 0x23);
  EXPECT_EQ(b[3], 0x45);
  EXPECT_EQ(b[6], 17);
  const Ipv6Hdr d = Ipv6Hdr::decode(b.data());
  EXPECT_EQ(d.traffic_class, 0x6A);
  EXPECT_EQ(d.flow_label, 0x12345u);
  EXPECT_EQ(d.version, 6);
}

}  // namespace
}  // namespace srnic::roce
