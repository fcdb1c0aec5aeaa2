// HostMemory: sparse pages, page-crossing accesses, comparison, iteration and allocation.
#include <gtest/gtest.h>

#include <vector>

#include "srnic/sim/host_memory.hpp"

using srnic::sim::HostMemory;

TEST(HostMemory, UntouchedReadsZeroWithoutAllocating) {
  HostMemory m;
  uint8_t buf[100];
  std::fill(buf, buf + 100, 0xAA);
  m.read(0x123456789000ULL, buf, sizeof buf);
  for (uint8_t b : buf) EXPECT_EQ(b, 0);
  EXPECT_EQ(m.page_count(), 0u);
}

TEST(HostMemory, WriteAcrossPageBoundary) {
  HostMemory m;
  std::vector<uint8_t> data(300);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  const uint64_t a = 0x7fff'ffff'ff00ULL;  // 256 bytes before a page end
  m.write(a, data.data(), data.size());
  EXPECT_EQ(m.page_count(), 2u);
  std::vector<uint8_t> back(300);
  m.read(a, back.data(), back.size());
  EXPECT_EQ(back, data);
  EXPECT_EQ(m.read_u8(a + 255), data[255]);
  EXPECT_EQ(m.read_u8(a + 256), data[256]);
  EXPECT_EQ(m.read_u8(a - 1), 0);
  EXPECT_EQ(m.read_u8(a + 300), 0);
  EXPECT_EQ(m.first_difference(a, data.data(), data.size()), -1);
  data[290] ^= 1;
  EXPECT_EQ(m.first_difference(a, data.data(), data.size()), 290);
}

TEST(HostMemory, ScalarsAreLittleEndianAcrossPages) {
  HostMemory m;
  m.write_u64(0x1ffd, 0x0102030405060708ULL);
  EXPECT_EQ(m.read_u8(0x1ffd), 0x08);
  EXPECT_EQ(m.read_u8(0x2004), 0x01);
  EXPECT_EQ(m.read_u64(0x1ffd), 0x0102030405060708ULL);
  EXPECT_EQ(m.read_u32(0x1fff), 0x03040506u);
  EXPECT_EQ(m.read_u16(0x1ffe), 0x0607);
  m.write_u32(0x1fff, 0xdeadbeef);
  EXPECT_EQ(m.read_u64(0x1ffd), 0x0102deadbeef0708ULL);
}

TEST(HostMemory, FillMaskedWriteAndPageIteration) {
  HostMemory m;
  m.fill(0x3000 - 10, 0x5a, 20);
  EXPECT_EQ(m.read_u8(0x3000 - 11), 0);
  EXPECT_EQ(m.read_u8(0x3000 - 10), 0x5a);
  EXPECT_EQ(m.read_u8(0x3000 + 9), 0x5a);
  EXPECT_EQ(m.read_u8(0x3000 + 10), 0);
  uint8_t beat[64];
  for (int i = 0; i < 64; ++i) beat[i] = static_cast<uint8_t>(0x80 + i);
  m.write_masked(0x9000, beat, 0x8000'0000'0000'0005ULL);
  EXPECT_EQ(m.read_u8(0x9000), 0x80);
  EXPECT_EQ(m.read_u8(0x9001), 0);
  EXPECT_EQ(m.read_u8(0x9002), 0x82);
  EXPECT_EQ(m.read_u8(0x903f), 0xbf);
  m.write_u8(0x100000, 1);
  std::vector<uint64_t> pages;
  m.for_each_page([&](uint64_t p, const uint8_t* d) {
    pages.push_back(p);
    EXPECT_NE(d, nullptr);
  });
  EXPECT_EQ(pages, (std::vector<uint64_t>{0x2000, 0x3000, 0x9000, 0x100000}));
  EXPECT_EQ(m.page(0x5000), nullptr);
  EXPECT_EQ(m.page(0x9000)[2], 0x82);
}

TEST(HostMemory, CompareTwoMemories) {
  HostMemory a, b;
  std::vector<uint8_t> d(10000, 3);
  a.write(0x10'0010, d.data(), d.size());
  b.write(0x20'0020, d.data(), d.size());
  EXPECT_EQ(HostMemory::first_difference(a, 0x10'0010, b, 0x20'0020, d.size()), -1);
  b.write_u8(0x20'0020 + 5000, 4);
  EXPECT_EQ(HostMemory::first_difference(a, 0x10'0010, b, 0x20'0020, d.size()), 5000);
  // untouched on one side compares against zeros
  EXPECT_EQ(HostMemory::first_difference(a, 0x50'0000, b, 0x60'0000, 8192), -1);
  EXPECT_EQ(HostMemory::first_difference(a, 0x10'0000, b, 0x60'0000, 8192), 0x10);
}

TEST(HostMemory, BumpAllocator) {
  HostMemory m(0x1000'0000'0000ULL);
  EXPECT_EQ(m.alloc(100), 0x1000'0000'0000ULL);
  const uint64_t b = m.alloc(10, 4096);
  EXPECT_EQ(b, 0x1000'0000'1000ULL);
  const uint64_t c = m.alloc(1, 64);
  EXPECT_EQ(c, 0x1000'0000'1040ULL);
  EXPECT_EQ(m.alloc_next(), c + 1);
  m.reset_alloc();
  EXPECT_EQ(m.alloc(8), 0x1000'0000'0000ULL);
  EXPECT_EQ(HostMemory().alloc_base(), 0x1000'0000'0000ULL);
}
