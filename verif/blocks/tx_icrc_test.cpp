// srnic_tx_icrc bench: frames built by srnic_roce's Packet builder go in without their ICRC
// (as srnic_tx_pkt produces them) and must come out byte for byte as the builder made them,
// ICRC appended least significant byte first, spilling into an extra beat when the last beat
// is fuller than 60 bytes. Random input gaps and output back-pressure; frame_sent counts
// output frames; output frames decode cleanly with the srnic_roce decoder.
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
    dut.reset();
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

  void cycle(unsigned p_valid, unsigned p_ready) {
    if (!holding && !in.empty() && rng.percent(p_valid)) holding = true;
    dut->s_tvalid = holding;
    if (holding) {
      const Beat& b = in.front();
      for (int w = 0; w < 16; ++w) std::memcpy(&dut->s_tdata[size_t(w)], b.data + 4 * w, 4);
      dut->s_tkeep = b.keep;
      dut->s_tlast = b.last;
    }
    dut->m_tready = rng.percent(p_ready);
    dut.eval();
    const bool in_fire = dut->s_tvalid && dut->s_tready;
    if (dut->m_tvalid && dut->m_tready) collect();
    EXPECT_EQ(bool(dut->frame_sent), dut->m_tvalid && dut->m_tready && dut->m_tlast) << "cycle " << dut.cycle();
    frames_sent += dut->frame_sent;
    // AXI-Stream: a valid output beat stays until taken.
    if (out_stalled) {
      EXPECT_TRUE(dut->m_tvalid) << "cycle " << dut.cycle() << ": m_tvalid dropped";
    }
    out_stalled = dut->m_tvalid && !dut->m_tready;
    dut.tick();
    if (in_fire) {
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
    const auto& exp = expected.front();
    size_t diff = 0;
    while (diff < exp.size() && diff < cur.size() && exp[diff] == cur[diff]) ++diff;
    EXPECT_EQ(cur.size(), exp.size()) << "frame " << frames_checked << " length";
    if (diff < exp.size() && diff < cur.size()) {
      ADD_FAILURE() << "frame " << frames_checked << " (" << exp.size() << " bytes): first difference at byte "
                    << diff << ": got 0x" << std::hex << int(cur[diff]) << " expected 0x" << int(exp[diff])
                    << (diff + 4 >= exp.size() ? " (in the ICRC)" : "");
    }
    roce::DecodedPacket d;
    if (expected_decodes.front()) {
      EXPECT_EQ(roce::decode(cur, d), roce::DecodeError::Ok) << "frame " << frames_checked;
    }
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
  bool holding = false, out_stalled = false;
  uint64_t frames_sent = 0, frames_checked = 0;
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

}  // namespace
}  // namespace srnic::verif::blocks
