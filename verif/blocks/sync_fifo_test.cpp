// sync_fifo bench: random push/pop traffic against a reference queue, checking every cycle
// the flags (s_ready = not full, m_valid = not empty), count, first-word-fall-through data,
// and that a reset empties the FIFO.
#include <vector>

#include "Vsync_fifo.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kWidth = BENCH_WIDTH;
constexpr int kDepth = BENCH_DEPTH;
constexpr uint64_t kMask = kWidth >= 64 ? ~0ull : (1ull << kWidth) - 1;

// Reference: a ring of kDepth words.
struct RefFifo {
  std::vector<uint64_t> buf = std::vector<uint64_t>(kDepth);
  int head = 0, size = 0;
  void push(uint64_t v) { buf[(head + size++) % kDepth] = v; }
  uint64_t front() const { return buf[head]; }
  void pop() { head = (head + 1) % kDepth; --size; }
};

class SyncFifoBench : public ::testing::Test {
 protected:
  SyncFifoBench() : rng(test_seed()), dut(rng.next()) {}

  // Inputs start random (x-initial unique): idle them, then reset.
  void reset() {
    dut->s_valid = 0;
    dut->m_ready = 0;
    dut.reset();
  }

  void set_data(uint64_t v) {
    if constexpr (kWidth > 32) {
      dut->s_data = v & kMask;
    } else {
      dut->s_data = uint32_t(v & kMask);
    }
  }
  uint64_t m_data() { return uint64_t(dut->m_data) & kMask; }

  // One cycle: drive, settle, compare outputs with the reference, clock, update reference.
  void cycle(bool push, bool pop, uint64_t data) {
    dut->s_valid = push;
    dut->m_ready = pop;
    set_data(data);
    dut.eval();
    ASSERT_EQ(int(dut->count), ref.size) << "cycle " << dut.cycle();
    ASSERT_EQ(bool(dut->s_ready), ref.size < kDepth) << "cycle " << dut.cycle();
    ASSERT_EQ(bool(dut->m_valid), ref.size > 0) << "cycle " << dut.cycle();
    if (ref.size > 0) {
      ASSERT_EQ(m_data(), ref.front()) << "cycle " << dut.cycle() << " size " << ref.size;
    }
    const bool do_push = push && ref.size < kDepth;
    const bool do_pop = pop && ref.size > 0;
    dut.tick();
    if (do_pop) ref.pop();
    if (do_push) ref.push(data & kMask);
    pushes += do_push;
    pops += do_pop;
    if (ref.size == kDepth) saw_full = true;
  }

  Rng rng;
  Dut<Vsync_fifo> dut;
  RefFifo ref;
  uint64_t pushes = 0, pops = 0;
  bool saw_full = false;
};

TEST_F(SyncFifoBench, FillDrainInOrder) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kDepth + 2; ++i) {
    cycle(true, false, uint64_t(i) * 0x9E3779B97F4A7C15ull);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(ref.size, kDepth);
  EXPECT_FALSE(dut->s_ready);
  // Full: a simultaneous push and pop only pops (s_ready is low).
  cycle(true, true, 0x1234);
  if (HasFatalFailure()) return;
  EXPECT_EQ(ref.size, kDepth - 1);
  for (int i = 0; i < kDepth + 2; ++i) {
    cycle(false, true, 0);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(ref.size, 0);
  // Empty: a push with m_ready high is not popped in the same cycle.
  cycle(true, true, 0x55);
  if (HasFatalFailure()) return;
  EXPECT_EQ(ref.size, 1);
  cycle(false, false, 0);
}

TEST_F(SyncFifoBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int phase = 0; phase < 3000; ++phase) {
    // Phases lean towards filling, draining or balanced traffic, so both ends are hit.
    const unsigned p_push = unsigned(rng.range(10, 90));
    const unsigned p_pop = unsigned(rng.range(10, 90));
    const int len = int(rng.range(1, 64));
    for (int i = 0; i < len; ++i) {
      cycle(rng.percent(p_push), rng.percent(p_pop), rng.next());
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_TRUE(saw_full);
  EXPECT_GT(pops, 1000u);
}

TEST_F(SyncFifoBench, ResetEmpties) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kDepth - 1; ++i) cycle(true, false, rng.next());
  if (HasFatalFailure()) return;
  // A push during reset is discarded along with the contents.
  dut->s_valid = 1;
  dut->rst = 1;
  dut.tick();
  dut->rst = 0;
  dut->s_valid = 0;
  dut.eval();
  EXPECT_EQ(int(dut->count), 0);
  EXPECT_FALSE(dut->m_valid);
  EXPECT_TRUE(dut->s_ready);
  ref = RefFifo{};
  for (int i = 0; i < 3 * kDepth; ++i) {
    cycle(rng.percent(60), rng.percent(50), rng.next());
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace srnic::verif::blocks
