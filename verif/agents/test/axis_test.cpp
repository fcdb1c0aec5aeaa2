// AxisMonitor on synthetic cycle sequences: frames with their bytes, beats, stalls, gaps and
// cycles on a stream with and without tready; one test per rule that must raise exactly its
// error id; the gap warning; statistics and coverage bins.
#include "srnic/agents/axis.hpp"

#include <algorithm>

#include "harness.hpp"

namespace srnic::verif::agents::test {
namespace {

struct AxisCyc {
  AxisSignals s;
  std::array<uint32_t, 16> d{};
  AxisSignals get() const {
    AxisSignals x = s;
    x.tdata = d.data();
    return x;
  }
};

std::vector<uint8_t> frame_bytes(size_t len, unsigned seed) {
  std::vector<uint8_t> v(len);
  for (size_t i = 0; i < len; ++i) v[i] = pat(seed, static_cast<unsigned>(i));
  return v;
}

uint64_t keep_of(size_t n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }

class AxisEnv : public ScriptEnv<AxisCyc> {
 public:
  explicit AxisEnv(uvm::Context& ctx, const AxisConfig& cfg = {}, bool has_tready = true)
      : ScriptEnv(ctx), mon(*this, "axis", cfg), has_tready_(has_tready) {
    mon.set_source(current());
  }
  void connect() override { mon.ap.connect(frames); }

  // One beat at cycle c: bytes p[0..n) in lanes 0..n-1 with the given tkeep.
  void beat(size_t c, const uint8_t* p, size_t n, uint64_t tkeep, bool last, bool ready = true,
            bool user = false) {
    AxisCyc& x = at(c);
    x.s.tvalid = true;
    x.s.tready = ready;
    x.s.has_tready = has_tready_;
    x.s.tkeep = tkeep;
    x.s.tlast = last;
    x.s.tuser = user;
    uint8_t b[64] = {};
    std::copy(p, p + std::min<size_t>(n, 64), b);
    for (unsigned j = 0; j < 16; ++j)
      x.d[j] = uint32_t{b[4 * j]} | uint32_t{b[4 * j + 1]} << 8 | uint32_t{b[4 * j + 2]} << 16 |
               uint32_t{b[4 * j + 3]} << 24;
  }
  // Frame f as consecutive beats from cycle c; a beat listed in `stall` is first presented one
  // cycle with tready low; a beat listed in `gap_before` follows `gap` idle cycles. Returns the
  // cycle after the last beat.
  size_t send(size_t c, const std::vector<uint8_t>& f, std::vector<size_t> stall = {},
              std::vector<size_t> gap_before = {}, size_t gap = 0, bool user_last = false) {
    const size_t n = (f.size() + 63) / 64;
    for (size_t k = 0; k < n; ++k) {
      if (std::find(gap_before.begin(), gap_before.end(), k) != gap_before.end()) c += gap;
      const size_t len = std::min<size_t>(64, f.size() - 64 * k);
      const bool last = k + 1 == n;
      if (std::find(stall.begin(), stall.end(), k) != stall.end())
        beat(c++, &f[64 * k], len, keep_of(len), last, false, last && user_last);
      beat(c++, &f[64 * k], len, keep_of(len), last, true, last && user_last);
    }
    return c;
  }

  AxisMonitor mon;
  Collect<AxisFrame> frames;

 private:
  bool has_tready_;
};

using AxisTest = AgentTest;

TEST_F(AxisTest, CleanTxFramesWithStallsAndGaps) {
  AxisEnv env(ctx);
  const auto f1 = frame_bytes(130, 1), f2 = frame_bytes(60, 2), f3 = frame_bytes(1518, 3);
  size_t c = env.send(0, f1, {1});  // cycles 0..3, beat 2 stalled once
  EXPECT_EQ(c, 4u);
  c = env.send(c + 1, f2);          // cycle 5
  env.send(c + 1, f3, {}, {10}, 2);  // from cycle 7, two idle cycles before beat 11
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.frames.items.size(), 3u);
  const AxisFrame& a = env.frames.items[0];
  EXPECT_EQ(a.bytes, f1);
  EXPECT_EQ(a.beats, 3u);
  EXPECT_EQ(a.stall_cycles, 1u);
  EXPECT_EQ(a.gap_cycles, 0u);
  EXPECT_EQ(a.cycle_first, 0u);
  EXPECT_EQ(a.cycle_last, 3u);
  EXPECT_FALSE(a.tuser_on_last);
  const AxisFrame& b = env.frames.items[1];
  EXPECT_EQ(b.bytes, f2);
  EXPECT_EQ(b.beats, 1u);
  EXPECT_EQ(b.cycle_first, 5u);
  EXPECT_EQ(b.cycle_last, 5u);
  EXPECT_EQ(b.stall_cycles, 0u);
  const AxisFrame& f = env.frames.items[2];
  EXPECT_EQ(f.bytes, f3);
  EXPECT_EQ(f.beats, 24u);
  EXPECT_EQ(f.gap_cycles, 2u);
  EXPECT_EQ(f.cycle_first, 7u);
  EXPECT_EQ(f.cycle_last, 7u + 24 + 2 - 1);

  const AxisStats& st = env.mon.stats();
  EXPECT_EQ(st.frames, 3u);
  EXPECT_EQ(st.bytes, 130u + 60 + 1518);
  EXPECT_EQ(st.beats, 28u);
  EXPECT_EQ(st.stall_cycles, 1u);
  EXPECT_EQ(st.short_frames, 0u);
  EXPECT_EQ(st.gap_warnings, 0u);
  EXPECT_EQ(st.max_frame_len, 1518u);

  const uvm::Covergroup& cg = env.mon.coverage();
  EXPECT_EQ(cg.samples(), 3u);
  const auto& len = *cg.coverpoints()[0];
  EXPECT_EQ(len.hits("128-511"), 1u);
  EXPECT_EQ(len.hits("<64"), 1u);
  EXPECT_EQ(len.hits("1518-4095"), 1u);
  EXPECT_EQ(len.hits("1024-1517"), 0u);
  EXPECT_EQ(cg.coverpoints()[1]->hits("3-16"), 1u);
  EXPECT_EQ(cg.coverpoints()[1]->hits("1"), 1u);
  EXPECT_EQ(cg.coverpoints()[1]->hits("17-64"), 1u);
  EXPECT_EQ(cg.coverpoints()[2]->hits("yes"), 1u);
  EXPECT_EQ(cg.coverpoints()[2]->hits("no"), 2u);
}

TEST_F(AxisTest, RxStreamWithoutTreadyTakesEveryValidBeat) {
  AxisConfig cfg;
  cfg.cover_stalls = false;
  AxisEnv env(ctx, cfg, false);
  const auto f1 = frame_bytes(200, 4), f2 = frame_bytes(42, 5);
  for (size_t k = 0; k < 4; ++k) {  // tready low in the struct: ignored without tready
    const size_t n = std::min<size_t>(64, 200 - 64 * k);
    env.beat(k, &f1[64 * k], n, keep_of(n), k == 3, false);
  }
  env.send(5, f2);  // short frame: the MAC pads it, so it is only counted
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.frames.items.size(), 2u);
  EXPECT_EQ(env.frames.items[0].bytes, f1);
  EXPECT_EQ(env.frames.items[0].stall_cycles, 0u);
  EXPECT_EQ(env.frames.items[1].bytes, f2);
  EXPECT_EQ(env.mon.stats().short_frames, 1u);
  EXPECT_EQ(env.mon.coverage().coverpoints()[2]->goal_bins(), 1u);  // stall "yes" ignored
}

TEST_F(AxisTest, TuserOnTheLastBeatIsReported) {
  AxisEnv env(ctx);
  env.send(0, frame_bytes(100, 6), {}, {}, 0, true);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  ASSERT_EQ(env.frames.items.size(), 1u);
  EXPECT_TRUE(env.frames.items[0].tuser_on_last);
  EXPECT_EQ(env.mon.stats().tuser_frames, 1u);
}

TEST_F(AxisTest, TvalidDroppedBeforeTready) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(64, 1);
  env.beat(0, f.data(), 64, ~0ull, true, false);
  env.run();
  expect_only("AXIS_STABLE", 1);
}

TEST_F(AxisTest, TdataChangedWhileStalled) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(64, 1), g = frame_bytes(64, 2);
  env.beat(0, f.data(), 64, ~0ull, true, false);
  env.beat(1, g.data(), 64, ~0ull, true);
  env.run();
  expect_only("AXIS_STABLE", 1);
}

TEST_F(AxisTest, TlastChangedWhileStalled) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(128, 1);
  env.beat(0, f.data(), 64, ~0ull, true, false);
  env.beat(1, f.data(), 64, ~0ull, false);
  env.beat(2, &f[64], 64, ~0ull, true);
  env.run();
  expect_only("AXIS_STABLE", 1);
}

TEST_F(AxisTest, PartialTkeepWithoutTlast) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(96, 1);
  env.beat(0, f.data(), 32, keep_of(32), false);
  env.beat(1, &f[32], 64, ~0ull, true);
  env.run();
  expect_only("AXIS_TKEEP", 1);
  ASSERT_EQ(env.frames.items.size(), 1u);
  EXPECT_EQ(env.frames.items[0].bytes, f);  // kept bytes only
}

TEST_F(AxisTest, NonContiguousTkeepOnTheLastBeat) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(128, 1);
  env.beat(0, f.data(), 64, ~0ull, false);
  env.beat(1, &f[64], 64, 0xFFFF00FFull, true);
  env.run();
  expect_only("AXIS_TKEEP", 1);
}

TEST_F(AxisTest, EmptyTkeepOnTheLastBeat) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(128, 1);
  env.beat(0, f.data(), 64, ~0ull, false);
  env.beat(1, &f[64], 64, 0, true);
  env.run();
  expect_only("AXIS_TKEEP", 1);
}

TEST_F(AxisTest, FrameLongerThanMax) {
  AxisConfig cfg;
  cfg.max_len = 128;
  AxisEnv env(ctx, cfg);
  size_t c = env.send(0, frame_bytes(128, 1));
  env.send(c, frame_bytes(129, 2));
  env.run();
  expect_only("AXIS_LEN", 1);
  EXPECT_NE(log().find("frame of 129 bytes"), std::string::npos) << log();
}

TEST_F(AxisTest, ShortFrameWhenPaddingIsRequired) {
  AxisConfig cfg;
  cfg.allow_short = false;
  AxisEnv env(ctx, cfg);
  size_t c = env.send(0, frame_bytes(60, 1));
  env.send(c, frame_bytes(59, 2));
  env.run();
  expect_only("AXIS_LEN", 1);
  EXPECT_EQ(env.mon.stats().short_frames, 1u);
}

TEST_F(AxisTest, TuserWithoutTlast) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(128, 1);
  env.beat(0, f.data(), 64, ~0ull, false, true, true);
  env.beat(1, &f[64], 64, ~0ull, true);
  env.run();
  expect_only("AXIS_TUSER", 1);
}

TEST_F(AxisTest, TuserWithoutTlastAllowedWhenConfigured) {
  AxisConfig cfg;
  cfg.tuser_last_only = false;
  AxisEnv env(ctx, cfg);
  const auto f = frame_bytes(128, 1);
  env.beat(0, f.data(), 64, ~0ull, false, true, true);
  env.beat(1, &f[64], 64, ~0ull, true);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
}

TEST_F(AxisTest, LongGapIsAWarningNotAnError) {
  AxisConfig cfg;
  cfg.max_gap_cycles = 2;
  AxisEnv env(ctx, cfg);
  size_t c = env.send(0, frame_bytes(192, 1), {}, {1}, 2);  // gap of 2: allowed
  env.send(c, frame_bytes(192, 2), {}, {1, 2}, 3);            // two gaps of 3
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  EXPECT_EQ(ctx.reports().count(uvm::Severity::Warning), 2u) << log();
  EXPECT_EQ(errors("AXIS_GAP"), 2u);
  EXPECT_EQ(env.mon.stats().gap_warnings, 2u);
  ASSERT_EQ(env.frames.items.size(), 2u);
  EXPECT_EQ(env.frames.items[1].gap_cycles, 6u);
}

TEST_F(AxisTest, FrameOpenAtTheEnd) {
  AxisEnv env(ctx);
  const auto f = frame_bytes(64, 1);
  env.beat(0, f.data(), 64, ~0ull, false);
  env.run();
  expect_only("MON_PARTIAL", 1);
}

TEST_F(AxisTest, FrameOpenAtTheEndAllowed) {
  AxisConfig cfg;
  cfg.allow_open_at_end = true;
  AxisEnv env(ctx, cfg);
  const auto f = frame_bytes(64, 1);
  env.beat(0, f.data(), 64, ~0ull, false);
  env.run();
  EXPECT_EQ(failures(), 0u) << log();
  EXPECT_TRUE(env.mon.in_transaction());
}

}  // namespace
}  // namespace srnic::verif::agents::test
