// srnic_cq_writer bench: two request ports (round-robin), CQ_WRITE commands and CQ doorbells
// from a host model that consumes CQEs, against a reference of each CQ's base, size,
// producer and consumer index. Every CQE write must go to base + (pi mod size) * 32 as one
// 64-byte beat with the right half strobed, carry the request's fields, the timestamp and
// the owner (phase) bit the ABI defines (docs/interfaces.md §4, parsed with srnic/abi.hpp);
// a full ring, an unconfigured CQ or a CQN out of range drops the CQE and pulses
// cnt_overflow; every written CQE raises an interrupt for its CQ.
#include <array>
#include <cstring>
#include <deque>
#include <vector>

#include "Vsrnic_cq_writer.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"
#include "srnic/abi.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kCqs = BENCH_NUM_CQS;

// cqe_req_t (kCqeReq) and cq_cmd_t (kCqCmd): pkg_layouts.hpp

struct CqeReq {
  uint16_t cqn;
  uint64_t wr_id;
  uint32_t byte_len, imm;
  uint16_t qpn, wqe_idx;
  uint8_t opcode, status;
  bool with_imm;
};
struct Cq {
  uint64_t base = 0;
  int log_size = 0;
  bool valid = false;
  uint16_t pi = 0, ci = 0;
};
struct Expected {
  bool write;
  CqeReq req;
  uint64_t addr;
  bool owner;
};

class CqWriterBench : public ::testing::Test {
 public:
  CqWriterBench() : rng(test_seed()), dut(rng.next()), cqs(kCqs), irq_owed(kCqs) {}

  void reset() {
    dut->a_valid = dut->b_valid = dut->cq_cmd_valid = dut->db_valid = 0;
    dut->aw_ready = dut->w_ready = dut->irq_ready = 0;
    dut.reset();
  }

  template <class T>
  void drive_req(T& sig, const CqeReq& r) {
    auto put = [&](size_t f, uint64_t v) { set_bits(sig, kCqeReq.at(f).lsb, kCqeReq.at(f).width, v); };
    put(kCrCqn, r.cqn);
    put(kCrWrId, r.wr_id);
    put(kCrByteLen, r.byte_len);
    put(kCrImm, r.imm);
    put(kCrQpn, r.qpn);
    put(kCrWqeIdx, r.wqe_idx);
    put(kCrOpcode, r.opcode);
    put(kCrStatus, r.status);
    put(kCrWithImm, r.with_imm);
  }

  CqeReq random_req() {
    CqeReq r{};
    const uint64_t p = rng.below(100);
    r.cqn = p < 3 ? uint16_t(kCqs + rng.below(100)) : uint16_t(hot[rng.below(hot.size())]);
    r.wr_id = rng.next();
    r.byte_len = rng.u32();
    r.imm = rng.u32();
    r.qpn = uint16_t(rng.u32());
    r.wqe_idx = uint16_t(rng.u32());
    r.opcode = rng.u8();
    r.status = rng.u8();
    r.with_imm = rng.percent(50);
    return r;
  }

  void cycle(unsigned p_req, unsigned p_cmd, unsigned p_db, unsigned p_aw, unsigned p_w, unsigned p_irq) {
    // requesters: hold until taken
    for (int k = 0; k < 2; ++k)
      if (!req_hold[size_t(k)] && rng.percent(p_req)) {
        req_hold[size_t(k)] = true;
        req[size_t(k)] = random_req();
      }
    dut->a_valid = req_hold[0];
    dut->b_valid = req_hold[1];
    drive_req(dut->a_req, req[0]);
    drive_req(dut->b_req, req[1]);
    // CQ_WRITE commands
    if (!cmd_hold && rng.percent(p_cmd)) {
      cmd_hold = true;
      cmd_cqn = uint16_t(hot[rng.below(hot.size())]);
      cmd_cq.base = rng.next() & ~31ull;
      cmd_cq.log_size = int(rng.range(0, 5));
      cmd_cq.valid = !rng.percent(10);
    }
    dut->cq_cmd_valid = cmd_hold;
    auto cmd = [&](size_t f, uint64_t v) { set_bits(dut->cq_cmd, kCqCmd.at(f).lsb, kCqCmd.at(f).width, v); };
    cmd(kCcCqn, cmd_cqn);
    cmd(kCcBase, cmd_cq.base);
    cmd(kCcLogSize, uint64_t(cmd_cq.log_size));
    cmd(kCcValid, cmd_cq.valid);
    // host: consume some CQEs of a CQ (CI moves towards the PI of the CQEs it has seen)
    bool db = false;
    uint16_t db_cqn = 0, db_ci = 0;
    if (rng.percent(p_db)) {
      db_cqn = uint16_t(hot[rng.below(hot.size())]);
      const Cq& q = cqs[db_cqn];
      db_ci = uint16_t(q.ci + rng.below(uint16_t(written_pi[db_cqn] - q.ci) + 1u));
      db = true;
    }
    dut->db_valid = db;
    dut->db_cqn = db_cqn;
    dut->db_ci = db_ci;
    dut->aw_ready = rng.percent(p_aw);
    dut->w_ready = rng.percent(p_w);
    dut->irq_ready = rng.percent(p_irq);
    dut->timestamp = ts;
    dut.eval();
    const uint64_t c = dut.cycle();

    // a request taken: decide its fate from the CQ state before this cycle's updates
    const bool ta = dut->a_valid && dut->a_ready, tb = dut->b_valid && dut->b_ready;
    EXPECT_FALSE(ta && tb) << "cycle " << c;
    if (ta || tb) {
      EXPECT_FALSE(cmd_hold) << "cycle " << c << ": request taken while a CQ_WRITE waits";
      const CqeReq& r = req[tb ? 1 : 0];
      if (req_hold[0] && req_hold[1]) {
        EXPECT_NE(int(tb), last_pick) << "cycle " << c << ": round-robin not alternating";
      }
      last_pick = tb;
      Expected e{false, r, 0, false};
      if (r.cqn < kCqs) {
        Cq& q = cqs[r.cqn];
        const uint16_t size = uint16_t(1u << q.log_size);
        if (q.valid && uint16_t(q.pi - q.ci) != size) {
          e.write = true;
          e.addr = q.base + uint64_t(q.pi & (size - 1)) * 32;
          e.owner = !((q.pi >> q.log_size) & 1);
          ++q.pi;
        }
      }
      expect.push_back(e);
      req_hold[tb ? 1 : 0] = false;
    }
    if (dut->cnt_overflow) {
      // CQEs taken before the dropped one may still wait for the bus. The drop is the
      // oldest CQE expected to drop; had the DUT dropped a CQE expected to be written
      // instead, that one's write would be missing and the next write's address and
      // contents would not match.
      auto it = expect.begin();
      while (it != expect.end() && it->write) ++it;
      ASSERT_TRUE(it != expect.end()) << "cycle " << c << ": CQE dropped, expected a write";
      expect.erase(it);
      ++drops;
    }
    // AXI write
    EXPECT_EQ(int(dut->aw_len), 0);
    EXPECT_TRUE(dut->w_last || !dut->w_valid);
    if (dut->aw_valid && dut->aw_ready) {
      ASSERT_FALSE(expect.empty()) << "cycle " << c << ": write with no request";
      ASSERT_TRUE(expect.front().write) << "cycle " << c << ": write for a CQE that should be dropped";
      EXPECT_EQ(uint64_t(dut->aw_addr), expect.front().addr & ~63ull) << "cycle " << c;
      aw_seen = true;
    }
    // an interrupt taken stands for the CQEs written before this cycle
    if (dut->irq_valid && dut->irq_ready) {
      const int v = dut->irq_vector;
      EXPECT_LT(v, kCqs);
      if (v < kCqs) {
        EXPECT_GT(irq_owed[size_t(v)], 0) << "cycle " << c << ": interrupt for CQ " << v << " without a CQE";
        irq_owed[size_t(v)] = 0;  // one interrupt may cover several CQEs of a CQ
      }
    }
    if (dut->w_valid && dut->w_ready) {
      ASSERT_TRUE(aw_seen) << "cycle " << c << ": W before AW";
      check_cqe(c);
      if (HasFatalFailure()) return;
      const Expected& e = expect.front();
      written_pi[e.req.cqn] = uint16_t(written_pi[e.req.cqn] + 1);
      ++irq_owed[e.req.cqn];
      expect.pop_front();
      aw_seen = false;
      ++writes;
    }
    // state updates at the edge
    if (cmd_hold && dut->cq_cmd_ready) {
      Cq& q = cqs[cmd_cqn];
      q = cmd_cq;
      q.pi = q.ci = 0;
      written_pi[cmd_cqn] = 0;
      cmd_hold = false;
      ++cmds;
    }
    if (db && db_cqn < kCqs) cqs[db_cqn].ci = db_ci;
    dut.tick();
    ++ts;
  }

  void check_cqe(uint64_t c) {
    const Expected& e = expect.front();
    uint8_t beat[64];
    for (int w = 0; w < 16; ++w) std::memcpy(beat + 4 * w, &dut->w_data[size_t(w)], 4);
    const uint64_t strb = dut->w_strb;
    const bool hi = (e.addr >> 5) & 1;
    EXPECT_EQ(strb, hi ? 0xFFFFFFFF00000000ull : 0x00000000FFFFFFFFull) << "cycle " << c;
    abi::Cqe q;
    std::memcpy(&q, beat + (hi ? 32 : 0), 32);
    const CqeReq& r = e.req;
    EXPECT_EQ(uint64_t(q.wr_id), r.wr_id) << "cycle " << c;
    EXPECT_EQ(uint32_t(q.byte_len), r.byte_len);
    uint32_t imm;
    std::memcpy(&imm, q.imm, 4);
    EXPECT_EQ(imm, r.imm);
    EXPECT_EQ(uint32_t(q.qpn), uint32_t(r.qpn));
    EXPECT_EQ(uint16_t(q.wqe_idx), r.wqe_idx);
    EXPECT_EQ(q.opcode, r.opcode);
    EXPECT_EQ(q.status, r.status);
    uint64_t t = 0;
    std::memcpy(&t, q.timestamp, 6);
    // the completion time is taken when the CQE is prepared and held while the write
    // waits for the bus (AXI payload stability): at most a bus stall before this beat
    EXPECT_LE(t, ts & 0xFFFFFFFFFFFFull);
    EXPECT_LE((ts & 0xFFFFFFFFFFFFull) - t, 1000u) << "timestamp too old";
    EXPECT_EQ(q.flags, uint8_t(r.with_imm ? abi::CQE_FLAG_WITH_IMM : 0));
    EXPECT_EQ(q.owner, uint8_t(e.owner)) << "cycle " << c << " CQ " << r.cqn;
  }

  void setup_cqs(int n) {
    hot.clear();
    for (int i = 0; i < n; ++i) hot.push_back(i == 0 ? kCqs - 1 : int(rng.below(kCqs)));
    // configure each hot CQ once through the command port
    for (int q : hot) {
      cmd_hold = true;
      cmd_cqn = uint16_t(q);
      cmd_cq = Cq{rng.next() & ~31ull, int(rng.range(0, 4)), true, 0, 0};
      while (cmd_hold && !HasFatalFailure()) cycle(0, 0, 0, 100, 100, 100);
    }
  }

  Rng rng;
  Dut<Vsrnic_cq_writer> dut;
  std::vector<Cq> cqs;
  std::vector<uint16_t> written_pi = std::vector<uint16_t>(kCqs);
  std::vector<int> irq_owed;
  std::vector<int> hot;
  std::array<bool, 2> req_hold{};
  std::array<CqeReq, 2> req{};
  bool cmd_hold = false;
  uint16_t cmd_cqn = 0;
  Cq cmd_cq;
  std::deque<Expected> expect;
  bool aw_seen = false;
  int last_pick = -1;
  uint64_t ts = 0x0000FFFFFFF00000ull, drops = 0, writes = 0, cmds = 0;
};

TEST_F(CqWriterBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(6);
  for (int phase = 0; phase < 40 && !HasFatalFailure(); ++phase) {
    const unsigned pr = unsigned(rng.range(5, 100)), pdb = unsigned(rng.range(0, 40));
    const unsigned pa = unsigned(rng.range(20, 100)), pw = unsigned(rng.range(20, 100));
    const unsigned pi = phase % 3 == 0 ? unsigned(rng.range(10, 100)) : 100;
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) cycle(pr, 1, pdb, pa, pw, pi);
  }
  for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle(0, 0, 0, 100, 100, 100);
  EXPECT_TRUE(expect.empty());
  EXPECT_GT(writes, 2000u);
  EXPECT_GT(drops, 100u) << "rings never filled";
  for (int q : hot) EXPECT_EQ(irq_owed[size_t(q)], 0) << "CQ " << q << ": CQE written, no interrupt";
}

// Interrupts for different CQs raised while the interrupt output is stalled must all be
// delivered (or at least one per CQ), not overwritten.
TEST_F(CqWriterBench, InterruptsNotLostWhileStalled) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(2);
  const int a = hot[0], b = hot[1] == hot[0] ? (hot[0] + 1) % kCqs : hot[1];
  hot[1] = b;
  for (int q : {a, b}) {  // rings of 8: nothing drops in this test
    cmd_hold = true;
    cmd_cqn = uint16_t(q);
    cmd_cq = Cq{0x10000ull * uint64_t(q + 1), 3, true, 0, 0};
    while (cmd_hold) cycle(0, 0, 0, 100, 100, 100);
  }
  // First CQE with irq_ready low: it is written and its interrupt waits.
  req_hold[0] = true;
  req[0] = random_req();
  req[0].cqn = uint16_t(a);
  for (int i = 0; i < 200 && req_hold[0]; ++i) cycle(0, 0, 0, 100, 100, 0);
  ASSERT_FALSE(req_hold[0]) << "first CQE request not taken";
  // Second CQE on another CQ: its write must wait while the first interrupt is not
  // taken (the interrupt follows the write), instead of replacing it.
  req_hold[0] = true;
  req[0] = random_req();
  req[0].cqn = uint16_t(b);
  for (int i = 0; i < 50; ++i) cycle(0, 0, 0, 100, 100, 0);
  EXPECT_EQ(writes, 1u) << "second CQE written while the first interrupt was pending";
  // A third CQE on the first CQ waits behind it (writes stay in order).
  req_hold[1] = true;
  req[1] = random_req();
  req[1].cqn = uint16_t(a);
  for (int i = 0; i < 50; ++i) cycle(0, 0, 0, 100, 100, 0);
  EXPECT_EQ(writes, 1u);
  for (int i = 0; i < 200 && (req_hold[0] || req_hold[1] || !expect.empty()); ++i) cycle(0, 0, 0, 100, 100, 100);
  ASSERT_FALSE(req_hold[0] || req_hold[1]) << "CQE requests not taken after the interrupt";
  for (int i = 0; i < 20; ++i) cycle(0, 0, 0, 100, 100, 100);
  EXPECT_EQ(writes, 3u);
  EXPECT_EQ(irq_owed[size_t(a)], 0) << "interrupt for CQ " << a << " lost";
  EXPECT_EQ(irq_owed[size_t(b)], 0) << "interrupt for CQ " << b << " lost";
}

// A consumer index far ahead of the producer index (host software never writes one) makes
// the ring look over-full when the next CQE is placed: a_ring_not_overfull reports it.
TEST_F(CqWriterBench, AssertionReportsOverfullRing) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(1);
  const int q = hot[0];
  dut->cq_cmd_valid = 0;
  dut->b_valid = 0;
  dut->db_valid = 1;
  dut->db_cqn = uint16_t(q);
  dut->db_ci = 0x8000;
  dut.eval();
  dut.tick();
  dut->db_valid = 0;
  CqeReq r = random_req();
  r.cqn = uint16_t(q);
  drive_req(dut->a_req, r);
  dut->a_valid = 1;
  dut->aw_ready = dut->w_ready = dut->irq_ready = 1;
  dut.eval();
  for (int i = 0; i < 20 && !dut->a_ready; ++i) {
    dut.tick();
    dut.eval();
  }
  dut.tick();
  dut->a_valid = 0;
  for (int i = 0; i < 10; ++i) dut.tick();
  EXPECT_GE(dut.take_rtl_errors(), 1) << "a_ring_not_overfull did not report the over-full ring";
}


// Throughput: CQEs of one CQ (each needs the producer index the one before it wrote) and of
// alternating CQs are written back to back at one per two cycles, the AXI write's AW and W
// beats, when the bus and the interrupt output never stall.
TEST_F(CqWriterBench, OneCqePerTwoCyclesOnOneCq) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(2);
  if (hot[1] == hot[0]) hot[1] = (hot[0] + 1) % kCqs;
  for (int q : hot) {  // rings of 1024 CQEs: none fills in this test
    cmd_hold = true;
    cmd_cqn = uint16_t(q);
    cmd_cq = Cq{0x100000ull * uint64_t(q + 1), 10, true, 0, 0};
    while (cmd_hold && !HasFatalFailure()) cycle(0, 0, 0, 100, 100, 100);
  }
  for (int same = 1; same >= 0 && !HasFatalFailure(); --same) {
    const uint64_t w0 = writes;
    for (int i = 0; i < 400 && !HasFatalFailure(); ++i) {
      for (int k = 0; k < 2; ++k)  // keep both requesters busy
        if (!req_hold[size_t(k)]) {
          req_hold[size_t(k)] = true;
          req[size_t(k)] = random_req();
          req[size_t(k)].cqn = uint16_t(hot[same ? 0 : size_t(k)]);
        }
      cycle(0, 0, 0, 100, 100, 100);
    }
    EXPECT_GE(writes - w0, 190u) << (same ? "one CQ" : "two CQs") << ": fewer than one CQE per two cycles";
  }
  EXPECT_EQ(drops, 0u);
}

}  // namespace
}  // namespace srnic::verif::blocks
