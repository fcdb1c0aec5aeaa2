// CRC-32 and ICRC tests against known values and the recorded vectors.
#include <gtest/gtest.h>

#include <cstring>

#include "srnic/roce/crc32.hpp"
#include "srnic/roce/icrc.hpp"
#include "vectors.hpp"

namespace srnic::roce {
namespace {

TEST(Crc32, CheckValue) {
  const char* s = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(s), 9), 0xCBF43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
}

TEST(Crc32, TableMatchesBitwiseDefinition) {
  const auto& t = crc32_table();
  EXPECT_EQ(t[0], 0u);
  EXPECT_EQ(t[1], 0x77073096u);
  EXPECT_EQ(t[128], 0xEDB88320u);
  EXPECT_EQ(t[255], 0x2D02EF8Du);
}

TEST(Crc32, UpdateIsIncremental) {
  uint8_t buf[100];
  for (int i = 0; i < 100; ++i) buf[i] = uint8_t(i * 7 + 3);
  const uint32_t whole = crc32(buf, 100);
  uint32_t reg = crc32_update(0xFFFFFFFFu, buf, 37);
  reg = crc32_update(reg, buf + 37, 63);
  EXPECT_EQ(reg ^ 0xFFFFFFFFu, whole);
}

TEST(Icrc, SeedIsEightOnesAbsorbed) {
  const uint8_t ff[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(crc32_update(0xFFFFFFFFu, ff, 8), kIcrcSeed);
}

class IcrcVector : public ::testing::TestWithParam<const char*> {};

TEST_P(IcrcVector, MatchesRecordedValueAndWireBytes) {
  const test::Vector v = test::load_vector(GetParam());
  const size_t l3 = 14;
  const size_t n = v.frame.size() - l3 - kIcrcSize;
  EXPECT_EQ(icrc_compute(v.frame.data() + l3, n), v.icrc);
  EXPECT_EQ(icrc_load(v.frame.data() + v.frame.size() - 4), v.icrc);
  uint8_t wire[4];
  icrc_store(wire, v.icrc);
  EXPECT_EQ(0, std::memcmp(wire, v.frame.data() + v.frame.size() - 4, 4));
}

INSTANTIATE_TEST_SUITE_P(Vectors, IcrcVector,
                         ::testing::Values("cx4_cnp", "scapy_uc_send_only", "rc_write_only", "rc_ack",
                                           "rc_send_only_ipv6"));

// Masked fields must not change the ICRC; an unmasked neighbour must.
TEST(Icrc, Ipv4MaskedFieldsAreIgnored) {
  test::Vector v = test::load_vector("rc_write_only");
  uint8_t* l3 = v.frame.data() + 14;
  const size_t n = v.frame.size() - 18;
  const size_t masked[] = {1, 8, 10, 11, 20 + 6, 20 + 7, 28 + 4};
  for (size_t off : masked) {
    std::vector<uint8_t> f(l3, l3 + n);
    f[off] ^= 0x5A;
    EXPECT_EQ(icrc_compute(f.data(), n), v.icrc) << "offset " << off;
  }
  const size_t covered[] = {0, 2, 4, 6, 9, 12, 19, 20, 24, 28, 29, 33, 36, 40, n - 1};
  for (size_t off : covered) {
    std::vector<uint8_t> f(l3, l3 + n);
    f[off] ^= 0x01;
    EXPECT_NE(icrc_compute(f.data(), n), v.icrc) << "offset " << off;
  }
}

TEST(Icrc, Ipv6MaskedFieldsAreIgnored) {
  test::Vector v = test::load_vector("rc_send_only_ipv6");
  uint8_t* l3 = v.frame.data() + 14;
  const size_t n = v.frame.size() - 18;
  // Traffic class (low nibble of byte 0, byte 1 high nibble), flow label, hop limit, UDP csum, resv8a.
  for (auto [off, x] : std::vector<std::pair<size_t, uint8_t>>{
           {0, 0x0F}, {1, 0xFF}, {2, 0xFF}, {3, 0xFF}, {7, 0xFF}, {46, 0xFF}, {47, 0xFF}, {52, 0xC0}}) {
    std::vector<uint8_t> f(l3, l3 + n);
    f[off] ^= x;
    EXPECT_EQ(icrc_compute(f.data(), n), v.icrc) << "offset " << off;
  }
  for (size_t off : {size_t(4), size_t(6), size_t(8), size_t(39), size_t(40), size_t(44), size_t(48), size_t(56)}) {
    std::vector<uint8_t> f(l3, l3 + n);
    f[off] ^= 0x10;
    EXPECT_NE(icrc_compute(f.data(), n), v.icrc) << "offset " << off;
  }
}

TEST(Icrc, MaskHeadersSetsExactlyTheVariantFields) {
  uint8_t h4[kIcrcMaskedIpv4Len] = {};
  h4[0] = 0x45;
  icrc_mask_headers(h4, false);
  for (size_t i = 0; i < sizeof h4; ++i) {
    const bool m = i == 1 || i == 8 || i == 10 || i == 11 || i == 26 || i == 27 || i == 32;
    EXPECT_EQ(h4[i], m ? 0xFF : (i == 0 ? 0x45 : 0)) << i;
  }
  uint8_t h6[kIcrcMaskedIpv6Len] = {};
  h6[0] = 0x60;
  icrc_mask_headers(h6, true);
  EXPECT_EQ(h6[0], 0x6F);
  EXPECT_EQ(h6[1], 0xFF);
  EXPECT_EQ(h6[3], 0xFF);
  EXPECT_EQ(h6[4], 0x00);
  EXPECT_EQ(h6[7], 0xFF);
  EXPECT_EQ(h6[46], 0xFF);
  EXPECT_EQ(h6[52], 0xFF);
  EXPECT_EQ(h6[53], 0x00);
}

}  // namespace
}  // namespace srnic::roce
