// sdp_ram bench: random writes and reads against a reference array. Read data appears one
// cycle after rd_en; a read of an address written in the same cycle returns the old contents.
#include <vector>

#include "Vsdp_ram.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kWidth = BENCH_WIDTH;
constexpr int kDepth = BENCH_DEPTH;
static_assert(kWidth <= 32, "bench drives the data as one 32-bit word");
constexpr uint32_t kMask = kWidth == 32 ? ~0u : (1u << kWidth) - 1;

TEST(SdpRamBench, RandomReadWrite) {
  SRNIC_BENCH_TRACE();
  Rng rng(test_seed());
  Dut<Vsdp_ram> dut(rng.next());
  std::vector<uint32_t> ref(kDepth);
  std::vector<bool> known(kDepth, false);
  // Confine traffic to a small window part of the time so reads often hit fresh writes.
  bool pending = false;
  uint32_t expect = 0;
  int pending_addr = 0;
  uint64_t checked = 0, same_cycle = 0;
  for (int i = 0; i < 400000; ++i) {
    const int span = (i / 1000) % 2 ? kDepth : 8;
    const bool we = rng.percent(50), re = rng.percent(60);
    const int wa = int(rng.below(span)), ra = int(rng.below(span));
    const uint32_t wd = rng.u32() & kMask;
    dut->wr_en = we;
    dut->wr_addr = wa;
    dut->wr_data = wd;
    dut->rd_en = re;
    dut->rd_addr = ra;
    dut.eval();
    if (pending) {
      ASSERT_EQ(uint32_t(dut->rd_data), expect) << "cycle " << dut.cycle() << " addr " << pending_addr;
      ++checked;
    }
    pending = re && known[ra];
    expect = ref[ra];  // old contents, even if written this cycle
    pending_addr = ra;
    same_cycle += re && we && ra == wa && known[ra];
    dut.tick();
    if (we) {
      ref[wa] = wd;
      known[wa] = true;
    }
  }
  EXPECT_GT(checked, 10000u);
  EXPECT_GT(same_cycle, 100u);
}

}  // namespace
}  // namespace srnic::verif::blocks
