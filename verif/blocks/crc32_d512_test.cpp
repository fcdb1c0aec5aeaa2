// crc32_d512 bench: the 64-byte-per-cycle CRC and its generated package against the
// software CRC-32 of srnic_roce. For every leading-zero count k in 0..127, k zero bytes
// followed by random data ending on a 64-byte boundary, started from INIT[k], must give
// crc32(8 x 0xFF ++ data), the ICRC construction. Also covers idle cycles between steps,
// start without step, and restarting in the middle of a computation.
#include <cstring>
#include <vector>

#include "Vcrc32_d512.h"
#include "bench.hpp"
#include "srnic/roce/crc32.hpp"
#include "srnic/roce/icrc.hpp"

namespace srnic::verif::blocks {
namespace {

using roce::crc32;
using roce::crc32_update;

// crc32 of 8 bytes of 0xFF followed by `data`, computed the plain way.
uint32_t icrc_style(const std::vector<uint8_t>& data) {
  std::vector<uint8_t> all(8, 0xFF);
  all.insert(all.end(), data.begin(), data.end());
  return crc32(all.data(), all.size());
}

class Crc32D512Bench : public ::testing::Test {
 protected:
  Crc32D512Bench() : rng(test_seed()), dut(rng.next()) {}

  // Drives one beat (byte i of the beat = bytes[off + i]) and the control bits.
  void drive(bool start, int init_k, bool step, const uint8_t* beat) {
    dut->start = start;
    dut->init_k = init_k;
    dut->step = step;
    for (int w = 0; w < 16; ++w) {
      uint32_t v = 0;
      if (beat) std::memcpy(&v, beat + 4 * w, 4);  // little-endian host: byte 4w in bits 7:0
      dut->data[w] = v;
    }
  }

  // Runs k zero bytes + data (k + data.size() a multiple of 64) through the DUT, with
  // random idle cycles between beats, and returns the finalised CRC.
  uint32_t run(int k, const std::vector<uint8_t>& data, bool separate_start, int max_gap) {
    std::vector<uint8_t> stream(k, 0);
    stream.insert(stream.end(), data.begin(), data.end());
    EXPECT_EQ(stream.size() % 64, 0u);
    const size_t beats = stream.size() / 64;
    if (separate_start) {
      drive(true, k, false, nullptr);
      dut.tick();
    }
    for (size_t b = 0; b < beats; ++b) {
      const int gap = max_gap ? int(rng.below(max_gap + 1)) : 0;
      for (int g = 0; g < gap; ++g) {
        // Idle cycle with garbage on the data bus: must not change the state.
        std::vector<uint8_t> junk(64);
        for (auto& x : junk) x = rng.u8();
        drive(false, int(rng.below(128)), false, junk.data());
        dut.tick();
      }
      drive(!separate_start && b == 0, k, true, stream.data() + 64 * b);
      dut.tick();
    }
    drive(false, 0, false, nullptr);
    dut.eval();
    return dut->crc;
  }

  std::vector<uint8_t> random_bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& x : v) x = rng.u8();
    return v;
  }

  Rng rng;
  Dut<Vcrc32_d512> dut;
};

TEST_F(Crc32D512Bench, InitTableAbsorbsLeadingZeros) {
  SRNIC_BENCH_TRACE();
  const std::vector<uint8_t> zeros(128, 0);
  for (int k = 0; k < 128; ++k) {
    drive(true, k, false, nullptr);
    dut.tick();
    drive(false, 0, false, nullptr);
    dut.eval();
    const uint32_t init = ~uint32_t(dut->crc);  // register value INIT[k]
    EXPECT_EQ(crc32_update(init, zeros.data(), size_t(k)), roce::kIcrcSeed) << "init_k " << k;
  }
}

TEST_F(Crc32D512Bench, EveryLeadingZeroCount) {
  SRNIC_BENCH_TRACE();
  for (int k = 0; k < 128; ++k) {
    for (int rep = 0; rep < 16; ++rep) {
      // data length L >= 1 with (k + L) % 64 == 0, up to 6 beats in total
      const int min_beats = k / 64 + 1;
      const int total = 64 * int(rng.range(min_beats, 6));
      const auto data = random_bytes(size_t(total - k));
      const bool sep = rep & 1;
      const uint32_t got = run(k, data, sep, rep >= 2 ? 3 : 0);
      ASSERT_EQ(got, icrc_style(data)) << "init_k " << k << " data bytes " << data.size()
                                       << (sep ? " start before step" : " start with step");
    }
  }
}

TEST_F(Crc32D512Bench, KnownVector) {
  SRNIC_BENCH_TRACE();
  // "123456789" after 55 zero bytes: ICRC-style CRC of the 9 bytes.
  const std::vector<uint8_t> data = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(run(55, data, false, 0), icrc_style(data));
  // A 64-byte block with init_k 0 is plain CRC-32 of 0xFF x 8 ++ block.
  const auto block = random_bytes(64);
  EXPECT_EQ(run(0, block, true, 0), icrc_style(block));
}

TEST_F(Crc32D512Bench, RestartDiscardsState) {
  SRNIC_BENCH_TRACE();
  for (int rep = 0; rep < 50; ++rep) {
    // Abandon a computation after a few beats, then run a fresh one.
    const auto junk = random_bytes(64 * 3);
    drive(true, int(rng.below(128)), true, junk.data());
    dut.tick();
    drive(false, 0, true, junk.data() + 64);
    dut.tick();
    const int k = int(rng.below(64));
    const auto data = random_bytes(size_t(128 - k));
    ASSERT_EQ(run(k, data, rep & 1, 1), icrc_style(data)) << "init_k " << k;
  }
}

}  // namespace
}  // namespace srnic::verif::blocks
