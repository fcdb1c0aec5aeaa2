// srnic_tx_icrc bench: frames built by srnic_roce's Packet builder go in without their ICRC
// (as srnic_tx_pkt produces them) and must come out byte for byte as the builder made them,
// ICRC appended least significant byte first, spilling into an extra beat when the last beat
// is fuller than 60 bytes. Random input gaps and output back-pressure; frame_sent counts
// output frames; output frames decode cleanly with the srnic_roce decoder. AXI-Stream: an
// offered beat stays, unchanged (data, keep, last, user), until taken; TUSER only on a last
// beat.
// Fatal (decision 108), raised at a random cycle and kept high: a frame's ICRC is inverted
// (all 4 bytes, also in a spill beat) and its last beat carries TUSER exactly when fatal is
// high in the cycle after its last input beat entered (when srnic_icrc_calc reports the ICRC
// and it is queued); every other frame leaves intact with TUSER 0. No frame starts on the
// output while fatal (a first beat offered before and held by TREADY low finishes its frame,
// as does a frame under way): the output is a prefix of the input frames, and the frames
// after it are discarded with their input still taken (the input drains, also with TREADY
// low from then on).
#include <array>
#include <deque>
#include <vector>

#include "Vsrnic_tx_icrc.h"
#include "frames.hpp"

namespace srnic::verif::blocks {
namespace {

class TxIcrcBench : public ::testing::Test {
 public:
  TxIcrcBench() : rng(test_seed()), dut(rng.next()) {}

  void reset() {
    dut->s_tvalid = 0;
    dut->m_tready = 0;
    dut->fatal = 0;
    dut.reset();
    in.clear();
    expected.clear();
    expected_decodes.clear();
    cur.clear();
    last_in.clear();
    holding = out_stalled = fatal = false;
    quiet_ready = 0;
    fatal_at = ~0ull;
    frames_sent = frames_checked = 0;
  }

  // Queues one packet: input = frame without ICRC; expected output = the whole frame.
  void add(const roce::Packet& p) { add_frame(p.build(), true); }
  // Queues a whole frame (ICRC included) that the decoder may not accept (decodes = false).
  void add_frame(std::vector<uint8_t> f, bool decodes) {
    expected.push_back(f);
    expected_decodes.push_back(decodes);
    f.resize(f.size() - roce::kIcrcSize);
    for (const auto& b : to_beats(f)) in.push_back(b);
  }
  // Fatal from this cycle on.
  void raise_fatal() {
    fatal = true;
    fatal_at = dut.cycle();
  }
  // Fatal high and no frame under way on the output: nothing may be offered any more.
  bool quiet() const { return fatal && cur.empty() && !out_stalled; }

  void cycle(unsigned p_valid, unsigned p_ready) {
    if (!holding && !in.empty() && rng.percent(p_valid)) holding = true;
    dut->s_tvalid = holding;
    if (holding) {
      const Beat& b = in.front();
      for (int w = 0; w < 16; ++w) std::memcpy(&dut->s_tdata[size_t(w)], b.data + 4 * w, 4);
      dut->s_tkeep = b.keep;
      dut->s_tlast = b.last;
    }
    dut->fatal = fatal;
    // once quiet, TREADY follows quiet_ready (0: discarded frames must drain without it)
    const bool q = quiet();
    dut->m_tready = rng.percent(q ? quiet_ready : p_ready);
    dut.eval();
    const uint64_t c = dut.cycle();
    const bool in_fire = dut->s_tvalid && dut->s_tready;
    // AXI-Stream: an offered beat stays, unchanged, until taken.
    if (out_stalled) {
      EXPECT_TRUE(dut->m_tvalid) << "cycle " << c << ": m_tvalid dropped" << (fatal ? " (fatal)" : "");
      bool same = dut->m_tkeep == st_keep && bool(dut->m_tlast) == st_last && bool(dut->m_tuser) == st_user;
      for (int w = 0; w < 16; ++w) same = same && dut->m_tdata[size_t(w)] == st_data[size_t(w)];
      EXPECT_TRUE(same) << "cycle " << c << ": beat changed before TREADY" << (fatal ? " (fatal)" : "");
    }
    if (dut->m_tvalid) {
      if (!dut->m_tlast) EXPECT_FALSE(dut->m_tuser) << "cycle " << c << ": TUSER on a beat that is not last";
      if (q) ADD_FAILURE() << "cycle " << c << ": a frame offered while fatal (frame " << frames_checked << ")";
    }
    if (dut->m_tvalid && dut->m_tready) collect();
    EXPECT_EQ(bool(dut->frame_sent), dut->m_tvalid && dut->m_tready && dut->m_tlast) << "cycle " << dut.cycle();
    frames_sent += dut->frame_sent;
    out_stalled = dut->m_tvalid && !dut->m_tready;
    for (int w = 0; w < 16; ++w) st_data[size_t(w)] = dut->m_tdata[size_t(w)];
    st_keep = dut->m_tkeep;
    st_last = dut->m_tlast;
    st_user = dut->m_tuser;
    dut.tick();
    if (in_fire) {
      if (in.front().last) last_in.push_back(c);
      in.pop_front();
      holding = false;
    }
  }

  void collect() {
    const uint64_t keep = dut->m_tkeep;
    const bool last = dut->m_tlast;
    ASSERT_EQ(keep & (keep + 1), 0u) << "tkeep not contiguous from byte 0: " << std::hex << keep;
    if (!last) {
      ASSERT_EQ(keep, ~0ull) << "partial beat before tlast";
    }
    ASSERT_NE(keep, 0u);
    uint8_t bytes[64];
    for (int w = 0; w < 16; ++w) std::memcpy(bytes + 4 * w, &dut->m_tdata[size_t(w)], 4);
    for (int i = 0; i < 64 && ((keep >> i) & 1); ++i) cur.push_back(bytes[i]);
    if (!last) return;
    ASSERT_FALSE(expected.empty()) << "output frame with none expected";
    ASSERT_LT(frames_checked, last_in.size()) << "frame " << frames_checked << " left before its last input beat";
    // the ICRC is queued the cycle after the frame's last input beat, inverted if fatal then
    const bool bad = last_in[frames_checked] + 1 >= fatal_at;
    std::vector<uint8_t> exp = expected.front();
    if (bad)
      for (size_t i = exp.size() - roce::kIcrcSize; i < exp.size(); ++i) exp[i] = uint8_t(~exp[i]);
    size_t diff = 0;
    while (diff < exp.size() && diff < cur.size() && exp[diff] == cur[diff]) ++diff;
    EXPECT_EQ(cur.size(), exp.size()) << "frame " << frames_checked << " length";
    if (diff < exp.size() && diff < cur.size()) {
      ADD_FAILURE() << "frame " << frames_checked << " (" << exp.size() << " bytes" << (bad ? ", ICRC inverted" : "")
                    << "): first difference at byte " << diff << ": got 0x" << std::hex << int(cur[diff])
                    << " expected 0x" << int(exp[diff]) << (diff + 4 >= exp.size() ? " (in the ICRC)" : "");
    }
    EXPECT_EQ(bool(dut->m_tuser), bad) << "frame " << frames_checked << ": TUSER on its last beat";
    roce::DecodedPacket d;
    if (expected_decodes.front() && !bad) {
      EXPECT_EQ(roce::decode(cur, d), roce::DecodeError::Ok) << "frame " << frames_checked;
    }
    const bool spilled = (exp.size() - roce::kIcrcSize + 63) % 64 >= 60;   // last beat > 60 bytes
    if (bad) ++(spilled ? stats.bad_spill : stats.bad);
    else if (fatal) ++stats.intact_after_fatal;
    if (last_in[frames_checked] + 1 == fatal_at) ++stats.edge_bad;
    if (last_in[frames_checked] + 2 == fatal_at) ++stats.edge_intact;
    expected.pop_front();
    expected_decodes.pop_front();
    cur.clear();
    ++frames_checked;
  }

  void run_until_done(unsigned p_valid, unsigned p_ready) {
    for (int i = 0; i < 200000 && (!in.empty() || !expected.empty()); ++i) {
      cycle(p_valid, p_ready);
      if (HasFatalFailure()) return;
    }
    EXPECT_TRUE(in.empty() && expected.empty()) << "frames stuck: " << expected.size();
  }

  Rng rng;
  Dut<Vsrnic_tx_icrc> dut;
  std::deque<Beat> in;
  std::deque<std::vector<uint8_t>> expected;
  std::deque<bool> expected_decodes;
  std::vector<uint8_t> cur;
  std::vector<uint64_t> last_in;   // per input frame: the cycle its last beat entered
  bool holding = false, out_stalled = false;
  bool fatal = false;              // driven on the fatal input
  unsigned quiet_ready = 0;        // TREADY percentage once quiet()
  uint64_t fatal_at = ~0ull;       // first cycle of fatal
  std::array<uint32_t, 16> st_data{};
  uint64_t st_keep = 0;
  bool st_last = false, st_user = false;
  uint64_t frames_sent = 0, frames_checked = 0;
  struct {
    uint64_t bad = 0, bad_spill = 0, intact_after_fatal = 0, dropped = 0;
    uint64_t edge_bad = 0, edge_intact = 0;   // ICRC queued in fatal's first cycle / the cycle before
  } stats;
};

const roce::MacAddr kPeerMac = {0x02, 0, 0, 0, 0, 0x01};

TEST_F(TxIcrcBench, EveryLastBeatFill) {
  SRNIC_BENCH_TRACE();
  reset();
  // SEND_ONLY with payload 0..255 walks the frame length through every residue mod 64
  // (frames without ICRC are 2 mod 4 bytes long, so last beats hold 2, 6, ..., 62 bytes).
  for (size_t len = 0; len < 256; ++len) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcSendOnly;
    p.payload.resize(len);
    add(p);
  }
  run_until_done(100, 100);
  EXPECT_EQ(frames_checked, 256u);
  EXPECT_EQ(frames_sent, 256u);
}

// RoCE frames are 4-byte padded, but the block takes any length: frames cut to every length
// mod 64 (last beats of 1 to 64 bytes, odd ones too), IP length rewritten, ICRC recomputed by
// the packet library.
TEST_F(TxIcrcBench, AnyFrameLength) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int s = 0; s < 64 * 3; ++s) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcSendOnly;
    p.payload.resize(rng.range(100, 1500));
    add_frame(cut_to_length_mod64(p.build(), size_t(s)), false);   // length without ICRC = s mod 64
  }
  run_until_done(80, 60);
  EXPECT_EQ(frames_checked, 192u);
  EXPECT_EQ(frames_sent, 192u);
}

void random_run(TxIcrcBench& b, size_t min_frame) {
  for (int n = 0; n < 300;) {
    const roce::Packet p = random_packet(b.rng, b.rng.percent(50) ? 4096 : 1024, kPeerMac, 0x0A000001);
    if (p.frame_size() < min_frame) continue;
    b.add(p);
    ++n;
  }
  const size_t total = b.expected.size();
  for (int phase = 0; phase < 20 && !b.HasFatalFailure(); ++phase) {
    const unsigned pv = unsigned(b.rng.range(30, 100)), pr = unsigned(b.rng.range(20, 100));
    for (int i = 0; i < 2000 && !b.HasFatalFailure(); ++i) b.cycle(pv, pr);
  }
  b.run_until_done(100, 100);
  EXPECT_EQ(b.frames_checked, total);
  EXPECT_EQ(b.frames_sent, total);
}

// Frames of at least 4 beats: at most 4 frames can have their last beat in the beat FIFO.
TEST_F(TxIcrcBench, RandomLongFramesWithBackPressure) {
  SRNIC_BENCH_TRACE();
  reset();
  random_run(*this, 3 * 64 + 1);
}

// Any frame sizes, including runs of one-beat frames behind a stalled output.
TEST_F(TxIcrcBench, RandomFramesWithBackPressure) {
  SRNIC_BENCH_TRACE();
  reset();
  random_run(*this, 0);
}

// One-beat frames pile up behind a stalled output: every one must still get its ICRC.
TEST_F(TxIcrcBench, ManyShortFramesBehindStalledOutput) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int n = 0; n < 6; ++n) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcAck;
    p.payload.clear();
    add(p);
  }
  for (int i = 0; i < 20; ++i) cycle(100, 0);  // all six frames enter, nothing leaves
  run_until_done(100, 100);
  EXPECT_EQ(frames_checked, 6u) << "frames stuck behind a lost ICRC";
}

TEST_F(TxIcrcBench, ShortestFrames) {
  SRNIC_BENCH_TRACE();
  reset();
  // ACKs and READ requests: one-beat frames, back to back with no gaps.
  for (int n = 0; n < 100; ++n) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = n & 1 ? roce::op::kRcAck : roce::op::kRcReadRequest;
    p.payload.clear();
    add(p);
  }
  run_until_done(100, 100);
  EXPECT_EQ(frames_checked, 100u);
}

// Frames for the fatal runs: builder frames, and frames cut so that their last beat holds 61
// to 64 bytes (the ICRC spills into an extra beat) or any number of bytes.
void add_mixed_frames(TxIcrcBench& b, int n) {
  for (int i = 0; i < n; ++i) {
    roce::Packet p = random_packet(b.rng, b.rng.percent(50) ? 1024 : 256, kPeerMac, 0x0A000001);
    const int kind = int(b.rng.below(4));
    if (kind == 0) {
      b.add(p);
      continue;
    }
    p.bth.opcode = roce::op::kRcSendOnly;
    p.payload.resize(kind == 3 ? b.rng.range(80, 600) : b.rng.range(10, kind == 1 ? 80 : 600));
    const size_t mod64 = kind == 3 ? b.rng.below(64) : (61 + b.rng.below(4)) % 64;
    b.add_frame(cut_to_length_mod64(p.build(), mod64), false);
  }
}

// Where fatal rises, in the cycle about to run.
enum class Rise { FirstBeatHeld, SpillBeatHeld, MidFrame, IcrcNow, IcrcLastCycle, Any };
constexpr int kRises = 6;
const char* const kRiseName[kRises] = {"first beat held",
                                       "spill beat held",
                                       "mid frame before its last input beat",
                                       "ICRC of the frame under way queued now",
                                       "ICRC queued the cycle before",
                                       "any cycle"};

bool rise_here(const TxIcrcBench& b, Rise r) {
  const uint64_t c = b.dut.cycle();
  const bool under_way = !b.cur.empty() || b.out_stalled;
  // the output's frame is the newest one whose last beat entered, `ago` cycles ago
  auto last_entered = [&](uint64_t ago) {
    return under_way && b.last_in.size() == b.frames_checked + 1 && b.last_in.back() + ago == c;
  };
  switch (r) {
    case Rise::FirstBeatHeld: return b.out_stalled && b.cur.empty();
    case Rise::SpillBeatHeld:   // a last beat of at most 4 bytes after a full one
      return b.out_stalled && b.st_last && !b.cur.empty() && __builtin_popcountll(b.st_keep) <= 4;
    case Rise::MidFrame: return !b.cur.empty() && b.last_in.size() <= b.frames_checked;
    case Rise::IcrcNow: return last_entered(1);
    case Rise::IcrcLastCycle: return last_entered(2);
    default: return true;
  }
}

// Fatal rises at a random cycle (pinned to one of the Rise cases when it comes up) of random
// traffic with back-pressure; the run goes on until the input is consumed and the output
// quiet, then 50 cycles more with nothing offered; in every other pair of runs TREADY stays
// low once the output is quiet. The frame checks are in cycle/collect.
TEST_F(TxIcrcBench, FatalAtRandomCycle) {
  SRNIC_BENCH_TRACE();
  std::array<int, kRises> pinned{};
  uint64_t sent = 0;
  for (int ep = 0; ep < 300 && !HasFatalFailure(); ++ep) {
    reset();
    add_mixed_frames(*this, int(rng.range(10, 40)));
    const size_t total = expected.size();
    const unsigned pv = unsigned(rng.range(30, 100)), pr = unsigned(rng.range(20, 100));
    const Rise where = Rise(ep % kRises);
    const unsigned qr = (ep / kRises) % 2 ? 0 : unsigned(rng.range(20, 100));
    const int before = int(rng.range(0, 400));
    for (int i = 0; !in.empty() || !expected.empty(); ++i) {
      ASSERT_LT(i, 100000) << "episode " << ep << ": frames stuck before fatal";
      if (i >= before && rise_here(*this, where)) {
        raise_fatal();
        quiet_ready = qr;
        ++pinned[size_t(where)];
        break;
      }
      cycle(pv, pr);
    }
    for (int i = 0; fatal && !(in.empty() && quiet()); ++i) {
      ASSERT_LT(i, 100000) << "episode " << ep << ": input not consumed or frame not finished while fatal";
      cycle(pv, pr);
    }
    for (int i = 0; i < 50; ++i) cycle(pv, pr);
    EXPECT_EQ(frames_sent, frames_checked) << "episode " << ep;
    if (!fatal) EXPECT_EQ(frames_checked, total) << "episode " << ep;
    stats.dropped += total - frames_checked;
    sent += frames_checked;
  }
  for (int r = 0; r < kRises; ++r) EXPECT_GT(pinned[size_t(r)], 3) << "fatal rising with: " << kRiseName[r];
  EXPECT_GT(stats.bad, 10u) << "frames with their ICRC inverted";
  EXPECT_GT(stats.bad_spill, 3u) << "frames with their ICRC inverted, spilling into an extra beat";
  EXPECT_GT(stats.intact_after_fatal, 10u) << "frames with an ICRC from before fatal, finishing after it";
  EXPECT_GT(stats.edge_bad, 3u);
  EXPECT_GT(stats.edge_intact, 3u);
  EXPECT_GT(stats.dropped, 300u);
  EXPECT_GT(sent, 300u);
}

// The first beat of a frame is offered and held by TREADY low when fatal rises: the frame
// still leaves whole; its ICRC was known before (a one-beat frame: offered with it), so it is
// intact. The frame behind it is discarded, its input taken without TREADY.
TEST_F(TxIcrcBench, FatalWithFirstBeatHeld) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int n = 0; n < 2; ++n) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcAck;
    p.payload.clear();
    add(p);
  }
  for (int i = 0; i < 10; ++i) cycle(100, 0);   // both enter; the first is offered and held
  ASSERT_TRUE(out_stalled);
  ASSERT_TRUE(in.empty());
  raise_fatal();
  for (int i = 0; i < 5; ++i) cycle(100, 0);    // still offered, unchanged
  for (int i = 0; i < 50 && !quiet(); ++i) cycle(100, 100);
  for (int i = 0; i < 20; ++i) cycle(100, 100);
  EXPECT_EQ(frames_checked, 1u);
  EXPECT_EQ(stats.intact_after_fatal, 1u);
  EXPECT_EQ(frames_sent, 1u);
}

}  // namespace
}  // namespace srnic::verif::blocks
