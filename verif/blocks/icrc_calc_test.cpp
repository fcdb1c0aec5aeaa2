// srnic_icrc_calc bench: random RoCEv2 IPv4 frames from srnic_roce's Packet builder (every
// opcode the builder supports, payloads 0..4096) stream in at 64 bytes per beat, with the
// ICRC (as on receive), without it (as on transmit) or with Ethernet padding after it, the
// bytes past the frame end in its last beat random, and random idle cycles (random data and
// sof while idle) between beats and frames. crc_valid must pulse exactly once per frame, one
// cycle after the beat holding the last covered byte, with the ICRC the builder computed.
// A frame cut short (fewer beats than its IP length needs; the block sees no tkeep, so the
// shortfall is counted in beats) must produce no crc_valid and must not disturb the next.
#include <deque>
#include <vector>

#include "Vsrnic_icrc_calc.h"
#include "frames.hpp"
#include "srnic/roce/icrc.hpp"

namespace srnic::verif::blocks {
namespace {

enum class Mode { WithIcrc, NoIcrc, Padded, Truncated };

struct InBeat {
  uint8_t data[64];
  bool valid, sof;
  bool last_covered;  // the beat with the frame's last covered byte
  uint32_t crc;
  uint64_t frame;
};

class IcrcCalcBench : public ::testing::Test {
 public:
  IcrcCalcBench() : rng(test_seed()), dut(rng.next()) {
    for (int c = 0; c < 256; ++c)
      if (roce::opcode_info(uint8_t(c))) opcodes.push_back(uint8_t(c));
  }

  void reset() {
    dut->in_valid = 0;
    dut->in_sof = 0;
    dut.reset();
  }

  // A random frame of `opcode` with `plen` payload bytes (ignored if the opcode has none).
  std::vector<uint8_t> frame(uint8_t opcode, size_t plen) {
    roce::Packet p = random_packet(rng, 4096, {0x02, 0, 0, 0, 0, 1}, 0x0A000001);
    p.bth.opcode = opcode;
    p.bth.pkey = uint16_t(rng.u32());
    p.bth.tver = uint8_t(rng.below(16));
    p.bth.mig_req = rng.percent(50);
    p.bth.resv7 = uint8_t(rng.below(128));
    p.ip4.flags_frag = uint16_t(rng.u32());
    p.udp.dport = rng.percent(80) ? roce::kRoceUdpPort : uint16_t(rng.u32());
    p.deth.qkey = rng.u32();
    p.deth.src_qp = rng.u32() & 0xFFFFFF;
    p.atomic.va = rng.next();
    p.atomic.swap_add = rng.next();
    p.atomic.compare = rng.next();
    p.ieth.rkey = rng.u32();
    p.feth.value = rng.u32();
    p.atomic_ack.orig = rng.next();
    p.payload.resize(roce::opcode_info(opcode)->has_payload ? plen : 0);
    for (auto& b : p.payload) b = rng.u8();
    return p.build();
  }

  size_t random_len() {
    switch (rng.below(4)) {
      case 0: return rng.below(130);
      case 1: return 4096 - rng.below(130);
      default: return rng.range(0, 4096);
    }
  }

  // Queues frame f delivered as `mode`, then `gap` idle cycles.
  void send(const std::vector<uint8_t>& f, Mode mode, int gap) {
    const size_t covered = f.size() - roce::kIcrcSize;  // E: Ethernet header through pad
    const size_t need = (covered + 63) / 64;             // beats that hold covered bytes
    size_t len = f.size();
    switch (mode) {
      case Mode::NoIcrc: len = covered; break;
      case Mode::Padded: len = f.size() + rng.range(1, 140); break;
      case Mode::Truncated: len = 64 * rng.range(1, need - 1); break;
      default: break;
    }
    const size_t nbeats = (len + 63) / 64;
    const uint32_t crc = roce::icrc_load(f.data() + covered);
    for (size_t k = 0; k < nbeats; ++k) {
      InBeat b{};
      for (size_t i = 0; i < 64; ++i) {
        const size_t at = 64 * k + i;
        b.data[i] = at < f.size() && at < len ? f[at] : (at < len ? 0 : rng.u8());
      }
      b.valid = true;
      b.sof = k == 0;
      b.last_covered = mode != Mode::Truncated && k == need - 1;
      b.crc = crc;
      b.frame = n_frames;
      in.push_back(b);
      if (k + 1 < nbeats) idle(rng.percent(p_inner) ? int(rng.range(1, 3)) : 0);
    }
    idle(gap);
    ++n_frames;
    if (mode == Mode::Truncated) ++n_truncated;
    else ++expected_pulses;
  }

  void idle(int n) {
    for (int i = 0; i < n; ++i) {
      InBeat b{};
      for (auto& x : b.data) x = rng.u8();
      b.sof = rng.percent(50);
      in.push_back(b);
    }
  }

  void cycle() {
    InBeat b{};
    if (!in.empty()) {
      b = in.front();
      in.pop_front();
    } else {
      for (auto& x : b.data) x = rng.u8();
    }
    dut->in_valid = b.valid;
    dut->in_sof = b.sof;
    for (int w = 0; w < 16; ++w) std::memcpy(&dut->in_data[size_t(w)], b.data + 4 * w, 4);
    dut.eval();
    const uint64_t c = dut.cycle();
    if (due) {
      EXPECT_TRUE(dut->crc_valid) << "cycle " << c << " frame " << due_frame << ": no crc_valid";
      if (dut->crc_valid) {
        EXPECT_EQ(uint32_t(dut->crc), due_crc)
            << "cycle " << c << " frame " << due_frame << ": ICRC got 0x" << std::hex << dut->crc
            << " expected 0x" << due_crc;
        ++pulses;
      }
    } else if (dut->crc_valid) {
      ADD_FAILURE() << "cycle " << c << ": crc_valid with no frame ending (last frame started " << cur_frame << ")";
    }
    if (b.valid && b.sof) cur_frame = b.frame;
    due = b.valid && b.last_covered;
    due_crc = b.crc;
    due_frame = b.frame;
    dut.tick();
  }

  void run() {
    while ((!in.empty() || due) && !HasFatalFailure()) cycle();
    for (int i = 0; i < 3; ++i) cycle();
    EXPECT_EQ(pulses, expected_pulses);
    EXPECT_FALSE(dut.rtl_error());
  }

  Rng rng;
  Dut<Vsrnic_icrc_calc> dut;
  std::vector<uint8_t> opcodes;
  std::deque<InBeat> in;
  unsigned p_inner = 0;
  bool due = false;
  uint32_t due_crc = 0;
  uint64_t due_frame = 0, cur_frame = 0;
  uint64_t n_frames = 0, n_truncated = 0, expected_pulses = 0, pulses = 0;
};

// Every supported opcode at every position of the covered end within a beat, back to back.
TEST_F(IcrcCalcBench, EveryOpcodeEveryShift) {
  SRNIC_BENCH_TRACE();
  reset();
  ASSERT_GT(opcodes.size(), 30u);
  for (uint8_t op : opcodes) {
    const bool pay = roce::opcode_info(op)->has_payload;
    for (int s = 0; s < (pay ? 64 : 1); ++s) {
      const size_t base = pay ? rng.below(64) * 64 : 0;
      send(frame(op, base + size_t(s)), rng.percent(50) ? Mode::WithIcrc : Mode::NoIcrc, 0);
    }
    send(frame(op, pay ? 4096 : 0), Mode::WithIcrc, 0);
    send(frame(op, 0), Mode::NoIcrc, 0);
  }
  run();
  EXPECT_GT(pulses, 1500u);
}

// RoCE frames cover a multiple of 4 bytes (the pad), but the engine takes any IP length: frames
// cut to every covered length modulo 64, odd ones too, with the IP length rewritten and the
// ICRC recomputed by the packet library.
TEST_F(IcrcCalcBench, AnyCoveredLength) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int s = 0; s < 64 * 4; ++s) {
    // RC SEND ONLY, covered length s mod 64
    const std::vector<uint8_t> f = cut_to_length_mod64(frame(0x04, rng.range(200, 4096)), size_t(s));
    send(f, Mode(rng.below(3)), rng.percent(50) ? 0 : int(rng.range(1, 3)));
  }
  run();
  EXPECT_EQ(pulses, 256u);
}

// Random frames, modes and gaps (also inside frames), truncated frames among them.
TEST_F(IcrcCalcBench, RandomGapsAndTruncation) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int n = 0; n < 4000; ++n) {
    p_inner = n < 1000 ? 0 : unsigned(rng.range(0, 50));
    auto f = frame(opcodes[rng.below(opcodes.size())], random_len());
    Mode m = Mode(rng.below(3));
    if (f.size() - roce::kIcrcSize > 64 && rng.percent(15)) m = Mode::Truncated;
    send(f, m, rng.percent(50) ? 0 : int(rng.range(1, 5)));
  }
  run();
  EXPECT_GT(n_truncated, 300u);
}

// Truncated frames directly followed (no gap) by full ones, and runs of truncated frames.
TEST_F(IcrcCalcBench, TruncatedThenGood) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int n = 0; n < 300; ++n) {
    const int cut = int(rng.range(1, 3));
    for (int i = 0; i < cut; ++i) {
      auto f = frame(roce::op::kRcWriteOnly, rng.range(200, 4096));
      send(f, Mode::Truncated, 0);
    }
    send(frame(opcodes[rng.below(opcodes.size())], random_len()), Mode(rng.below(3)), 0);
  }
  run();
  EXPECT_EQ(expected_pulses, 300u);
}

}  // namespace
}  // namespace srnic::verif::blocks
