// srnic_tx_payload bench: random read commands (0..80 beats at any 64-byte aligned address,
// many near a 4 KiB end) with random valid gaps, answered by an in-order AXI read slave with
// random AR back-pressure and latency from a C++ host memory (each byte a hash of its
// address), and popped by a consumer with random gaps. A reference model keeps what the
// block must: the beats reserved (taken commands' beats not yet popped) and the bursts still
// to issue. Checked every cycle: cmd_ready exactly when nothing is left to issue and the
// buffer has room for the command's beats besides the reserved ones; rd_busy exactly when
// bursts are left after this cycle; each AR the next piece of the taken commands, as long as
// possible without crossing 4 KiB, held while stalled; read data never refused (the RTL
// assertion on the buffer); every beat out the next beat of the commands, in order, with its
// memory contents.
#include <algorithm>
#include <cstring>
#include <deque>

#include "Vsrnic_tx_payload.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr unsigned kPbuf = BENCH_PBUF;

inline uint8_t mem_byte(uint64_t a) {
  uint64_t s = (a >> 3) ^ 0x2545F4914F6CDD1Dull;
  return uint8_t(splitmix64(s) >> (8 * (a & 7)));
}

class TxPayloadBench : public ::testing::Test {
 public:
  TxPayloadBench() : rng(test_seed()), dut(rng.next()) {}

  struct Knobs {
    unsigned cmd = 60, ar = 70, lat = 40, pop = 70;
    unsigned max_beats = 80, zero = 10;
  };
  struct Cmd {
    uint64_t addr;
    unsigned beats;
  };
  struct RBeat {
    uint64_t at, addr;
  };

  void reset() {
    dut->cmd_valid = dut->ar_ready = dut->r_valid = dut->pb_pop = 0;
    dut.reset();
  }

  Cmd random_cmd(const Knobs& k) {
    Cmd c;
    c.addr = (rng.next() >> 4) & ~63ull;
    if (rng.percent(25)) c.addr = (c.addr | 0xFFF) - 63 - 64 * rng.below(4);  // near a 4 KiB end
    c.beats = rng.percent(k.zero) ? 0 : unsigned(rng.range(1, k.max_beats));
    return c;
  }

  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    if (!holding && !queued.empty() && rng.percent(k.cmd)) holding = true;
    dut->cmd_valid = holding;
    if (holding) {
      dut->cmd_addr = queued.front().addr;
      dut->cmd_nbeats = queued.front().beats;
    } else {
      dut->cmd_addr = rng.next() & ~63ull;
      dut->cmd_nbeats = uint8_t(rng.below(256));
    }
    dut->ar_ready = rng.percent(k.ar);
    const bool r = !rbeats.empty() && rbeats.front().at <= c;
    dut->r_valid = r;
    uint8_t b[64];
    if (r)
      for (int i = 0; i < 64; ++i) b[i] = mem_byte(rbeats.front().addr + uint64_t(i));
    else
      for (int i = 0; i < 64; ++i) b[i] = rng.u8();
    for (int w = 0; w < 16; ++w) std::memcpy(&dut->r_data[size_t(w)], b + 4 * w, 4);
    dut.eval();
    // the consumer pops only what is offered (pb_pop is an input the block trusts)
    const bool pop = dut->pb_valid && rng.percent(k.pop);
    dut->pb_pop = pop;
    dut.eval();

    // the command contract
    const unsigned want = holding ? queued.front().beats : unsigned(dut->cmd_nbeats);
    const bool ready_model = left_beats == 0 && resv + want <= kPbuf;
    ASSERT_EQ(bool(dut->cmd_ready), ready_model)
        << "cycle " << c << ": cmd_ready (reserved " << resv << ", beats asked " << want << ", to issue " << left_beats
        << ")";
    // AR
    if (ar_stalled) {
      ASSERT_TRUE(dut->ar_valid) << "cycle " << c << ": ar_valid dropped before ar_ready";
      ASSERT_EQ(uint64_t(dut->ar_addr), ar_hold_addr) << "cycle " << c << ": ar_addr changed while stalled";
      ASSERT_EQ(unsigned(dut->ar_len), ar_hold_len) << "cycle " << c << ": ar_len changed while stalled";
    }
    ASSERT_EQ(bool(dut->ar_valid), left_beats != 0) << "cycle " << c << ": ar_valid with " << left_beats << " beats to issue";
    bool last_burst = false;
    if (dut->ar_valid) {
      const uint64_t a = dut->ar_addr;
      const unsigned n = unsigned(dut->ar_len) + 1;
      const unsigned to4k = unsigned(4096 - (left_addr & 4095)) / 64;
      ASSERT_EQ(a, left_addr) << "cycle " << c << ": payload read address";
      ASSERT_EQ(n, std::min(left_beats, to4k)) << "cycle " << c << ": burst length at 0x" << std::hex << a;
      last_burst = n == left_beats;
    }
    const bool ar_fire = dut->ar_valid && dut->ar_ready;
    ASSERT_EQ(bool(dut->rd_busy), left_beats != 0 && !(ar_fire && last_burst))
        << "cycle " << c << ": rd_busy (" << left_beats << " beats to issue, last burst taken " << (ar_fire && last_burst)
        << ")";
    ar_stalled = dut->ar_valid && !dut->ar_ready;
    ar_hold_addr = dut->ar_addr;
    ar_hold_len = dut->ar_len;
    if (ar_fire) {
      const unsigned n = unsigned(dut->ar_len) + 1;
      const uint64_t at = std::max(c + 1 + rng.below(k.lat + 1), last_r_at + 1);
      for (unsigned i = 0; i < n; ++i) rbeats.push_back({at + i, left_addr + 64ull * i});
      last_r_at = at + n - 1;
      left_addr += 64ull * n;
      left_beats -= n;
      ++ars;
    }
    // beats out
    if (pop) {
      ASSERT_FALSE(expect_addr.empty()) << "cycle " << c << ": a beat offered that no command asked for";
      uint8_t got[64];
      for (int w = 0; w < 16; ++w) std::memcpy(got + 4 * w, &dut->pb_data[size_t(w)], 4);
      const uint64_t a = expect_addr.front();
      for (int i = 0; i < 64; ++i)
        ASSERT_EQ(got[i], mem_byte(a + uint64_t(i)))
            << "cycle " << c << ": beat " << beats_out << " (host 0x" << std::hex << a << ") byte " << std::dec << i;
      expect_addr.pop_front();
      ++beats_out;
      --resv;
    }
    // a command taken
    const bool fire = holding && dut->cmd_ready;
    if (fire) {
      const Cmd& q = queued.front();
      for (unsigned i = 0; i < q.beats; ++i) expect_addr.push_back(q.addr + 64ull * i);
      left_addr = q.addr;
      left_beats = q.beats;
      resv += q.beats;
      max_resv = std::max(max_resv, resv);
      ++cmds;
    } else if (holding && !dut->cmd_ready && left_beats == 0) {
      ++room_waits;   // refused for lack of room alone
    }
    dut.tick();
    if (r) rbeats.pop_front();
    if (fire) {
      queued.pop_front();
      holding = false;
    }
  }

  void run(const Knobs& k, int max_cycles = 500000) {
    for (int i = 0; i < max_cycles && !HasFatalFailure(); ++i) {
      if (queued.empty() && expect_addr.empty() && rbeats.empty()) break;
      cycle(k);
    }
  }
  void drain() {
    Knobs k;
    k.cmd = k.ar = k.pop = 100;
    k.lat = 0;
    run(k, 100000);
    EXPECT_TRUE(queued.empty()) << queued.size() << " commands never taken";
    EXPECT_TRUE(expect_addr.empty()) << expect_addr.size() << " beats never delivered";
    for (int i = 0; i < 10 && !HasFatalFailure(); ++i) cycle(k);
    EXPECT_FALSE(dut->ar_valid);
    EXPECT_FALSE(dut->pb_valid);
    EXPECT_FALSE(dut.rtl_error());
  }

  Rng rng;
  Dut<Vsrnic_tx_payload> dut;
  std::deque<Cmd> queued;
  bool holding = false;
  std::deque<uint64_t> expect_addr;    // host address of every beat still to come out
  std::deque<RBeat> rbeats;
  uint64_t last_r_at = 0, left_addr = 0;
  unsigned left_beats = 0, resv = 0, max_resv = 0;
  bool ar_stalled = false;
  uint64_t ar_hold_addr = 0;
  unsigned ar_hold_len = 0;
  uint64_t cmds = 0, ars = 0, beats_out = 0, room_waits = 0;
};

TEST_F(TxPayloadBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int phase = 0; phase < 20 && !HasFatalFailure(); ++phase) {
    Knobs k;
    k.cmd = unsigned(rng.range(10, 100));
    k.ar = unsigned(rng.range(10, 100));
    k.lat = unsigned(rng.range(0, 200));
    k.pop = unsigned(rng.range(5, 100));
    for (int i = 0; i < 100; ++i) queued.push_back(random_cmd(k));
    run(k);
  }
  drain();
  EXPECT_EQ(cmds, 2000u);
  EXPECT_GT(ars, cmds) << "commands split at 4 KiB";
}

// The consumer stops: commands fill the buffer's reservation to the last beat and then wait
// for room, each taken again only when every one of its beats fits.
TEST_F(TxPayloadBench, ReservationFillsTheBuffer) {
  SRNIC_BENCH_TRACE();
  reset();
  Knobs k;
  k.cmd = k.ar = 100;
  k.lat = 20;
  k.pop = 0;
  unsigned asked = 0;
  while (asked + 1 <= kPbuf + 40) {   // more than the buffer holds
    Cmd c = random_cmd(k);
    c.beats = unsigned(rng.range(1, 17));
    asked += c.beats;
    queued.push_back(c);
  }
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_FALSE(queued.empty()) << "every command taken with nothing popped";
  EXPECT_GT(room_waits, 100u) << "a command waited for room";
  EXPECT_LE(max_resv, kPbuf);
  EXPECT_GT(max_resv + 17, kPbuf) << "the reservation stopped short of the buffer";
  drain();
}

// Everything ready: a command is taken at best every other cycle (the command, then its AR),
// so 64-beat commands stream at one beat per cycle.
TEST_F(TxPayloadBench, FullRate) {
  SRNIC_BENCH_TRACE();
  reset();
  Knobs k;
  k.cmd = k.ar = k.pop = 100;
  k.lat = 10;
  for (int i = 0; i < 400; ++i) queued.push_back({uint64_t(i) * 64 * 64, 64});
  const uint64_t c0 = dut.cycle();
  run(k);
  const uint64_t cycles = dut.cycle() - c0;
  drain();
  EXPECT_EQ(beats_out, 400u * 64);
  EXPECT_LE(double(cycles) / double(400 * 64), 1.05) << cycles << " cycles for " << 400 * 64 << " beats";
}

}  // namespace
}  // namespace srnic::verif::blocks
