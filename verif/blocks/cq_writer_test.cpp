// srnic_cq_writer bench: two request ports (round-robin), CQ_WRITE commands and CQ doorbells
// from a host model that consumes CQEs, against a reference of each CQ's base, size,
// producer and consumer index. The reference decides each CQE where the writer does, in the
// cycle after its take, from the CQ state before that cycle's updates (so a doorbell of the
// take cycle counts, one of the decide cycle does not). Every CQE write must go to
// base + (pi mod size) * 32 as one 64-byte beat with the right half strobed, after its AW,
// carry the request's fields, the timestamp of its decide cycle and the owner (phase) bit
// the ABI defines (docs/interfaces.md §4, parsed with srnic/abi.hpp); a full ring, an
// unconfigured CQ or a CQN out of range drops the CQE and pulses cnt_overflow in that
// cycle; every written CQE raises one interrupt for its CQ, in write order. AW, W and the
// interrupt must hold while not taken. Traffic mixes random CQs, back-to-back CQEs of one
// CQ and two sources alternating between two CQs, under random AW/W/irq back-pressure,
// doorbells and CQ_WRITEs; the throughput tests measure CQEs per cycle with nothing held.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
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
  CqeReq req;
  uint64_t addr;
  bool owner;
  uint64_t ts;  // timestamp of the decide cycle
};
struct Doorbell {
  uint16_t cqn, ci;
};

// Where the requests of both sources go.
enum class Target {
  kRandom,     // any hot CQ, now and then a CQN out of range
  kSame,       // both sources to hot[0]: back-to-back CQEs of one CQ
  kAlternate,  // a to hot[0], b to hot[1]: round-robin alternates the CQ every CQE
};

class CqWriterBench : public ::testing::Test {
 public:
  CqWriterBench() : rng(test_seed()), dut(rng.next()), cqs(kCqs) {}

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

  CqeReq random_req(int source) {
    CqeReq r{};
    switch (target) {
      case Target::kRandom:
        r.cqn = rng.percent(3) ? uint16_t(kCqs + rng.below(100)) : uint16_t(hot[rng.below(hot.size())]);
        break;
      case Target::kSame:
        r.cqn = uint16_t(hot[0]);
        break;
      case Target::kAlternate:
        r.cqn = uint16_t(hot[size_t(source) % hot.size()]);
        break;
    }
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
    const uint64_t c = dut.cycle();
    // requesters: hold until taken
    for (int k = 0; k < 2; ++k)
      if (!req_hold[size_t(k)] && rng.percent(p_req)) {
        req_hold[size_t(k)] = true;
        req[size_t(k)] = random_req(k);
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
    std::optional<Doorbell> db;
    if (force_db) {
      db = force_db;
      force_db.reset();
    } else if (rng.percent(p_db)) {
      const uint16_t q = uint16_t(hot[rng.below(hot.size())]);
      const Cq& s = cqs[q];
      db = Doorbell{q, rng.percent(p_db_all) ? written_pi[q]
                                             : uint16_t(s.ci + rng.below(uint16_t(written_pi[q] - s.ci) + 1u))};
    }
    dut->db_valid = db.has_value();
    dut->db_cqn = db ? db->cqn : 0;
    dut->db_ci = db ? db->ci : 0;
    dut->aw_ready = rng.percent(p_aw);
    dut->w_ready = rng.percent(p_w);
    dut->irq_ready = rng.percent(p_irq);
    dut->timestamp = ts;
    dut.eval();

    check_held(c);
    // the CQE taken in the previous cycle is decided now, from the CQ state before this
    // cycle's updates (doorbells up to the previous cycle included)
    bool drop = false;
    if (deciding) {
      const CqeReq r = *deciding;
      deciding.reset();
      bool write = false;
      if (r.cqn < kCqs) {
        Cq& q = cqs[r.cqn];
        const uint16_t size = uint16_t(1u << q.log_size);
        auto fits = [&](uint16_t ci) { return q.valid && uint16_t(q.pi - ci) != size; };
        write = fits(q.ci);
        // the writer's RAMs miss the previous cycle's doorbell and producer index update:
        // count the decisions that needed them forwarded
        if (last_db && last_db->cqn == r.cqn && write != fits(last_db_old_ci)) ++db_forwarded;
        if (write && last_write_cqn == int(r.cqn)) ++pi_forwarded;
        if (!write && uint16_t(q.pi - q.ci) == size && q.valid) ++full_drops;
        if (write) {
          expect_aw.push_back(Expected{r, q.base + uint64_t(q.pi & (size - 1)) * 32,
                                       !((q.pi >> q.log_size) & 1), ts & 0xFFFFFFFFFFFFull});
          ++q.pi;
          ++decided_writes;
        }
      }
      drop = !write;
      last_write_cqn = write ? int(r.cqn) : -1;
    } else {
      last_write_cqn = -1;
    }
    EXPECT_EQ(bool(dut->cnt_overflow), drop) << "cycle " << c << ": cnt_overflow";
    if (drop) ++drops;

    // a request taken: decided in the next cycle
    const bool ta = dut->a_valid && dut->a_ready, tb = dut->b_valid && dut->b_ready;
    EXPECT_FALSE(ta && tb) << "cycle " << c;
    if (ta || tb) {
      EXPECT_FALSE(cmd_hold) << "cycle " << c << ": request taken while a CQ_WRITE waits";
      if (req_hold[0] && req_hold[1]) {
        EXPECT_NE(int(tb), last_pick) << "cycle " << c << ": round-robin not alternating";
      }
      last_pick = tb;
      deciding = req[tb ? 1 : 0];
      req_hold[tb ? 1 : 0] = false;
      ++takes;
    }
    // AXI write
    EXPECT_EQ(int(dut->aw_len), 0);
    EXPECT_TRUE(dut->w_last || !dut->w_valid);
    const bool aw_fire = dut->aw_valid && dut->aw_ready, w_fire = dut->w_valid && dut->w_ready;
    if (aw_fire) {
      ASSERT_FALSE(expect_aw.empty()) << "cycle " << c << ": AW with no CQE to write";
      EXPECT_EQ(uint64_t(dut->aw_addr), expect_aw.front().addr & ~63ull) << "cycle " << c;
      expect_w.push_back(expect_aw.front());
      expect_aw.pop_front();
    }
    if (w_fire) {
      ASSERT_FALSE(expect_w.empty()) << "cycle " << c << ": W before AW";
      check_cqe(c);
      if (HasFatalFailure()) return;
      const Expected& e = expect_w.front();
      written_pi[e.req.cqn] = uint16_t(written_pi[e.req.cqn] + 1);
      expect_irq.push_back(e.req.cqn);
      expect_w.pop_front();
      ++writes;
    }
    if (aw_fire && w_fire) ++aw_w_same_cycle;
    if (dut->irq_valid && dut->irq_ready) {
      ASSERT_FALSE(expect_irq.empty()) << "cycle " << c << ": interrupt for CQ " << dut->irq_vector
                                       << " without a CQE";
      EXPECT_EQ(int(dut->irq_vector), int(expect_irq.front())) << "cycle " << c << ": interrupt out of order";
      expect_irq.pop_front();
      ++irqs;
    }
    // state updates at the edge
    if (cmd_hold && dut->cq_cmd_ready) {
      EXPECT_TRUE(!deciding && expect_aw.empty() && expect_w.empty())
          << "cycle " << c << ": CQ_WRITE taken with a CQE in the pipeline";
      Cq& q = cqs[cmd_cqn];
      q = cmd_cq;
      q.pi = q.ci = 0;
      written_pi[cmd_cqn] = 0;
      cmd_hold = false;
      ++cmds;
    }
    last_db.reset();
    if (db && db->cqn < kCqs) {
      last_db = db;
      last_db_old_ci = cqs[db->cqn].ci;
      cqs[db->cqn].ci = db->ci;
    }
    held_aw = dut->aw_valid && !dut->aw_ready;
    held_w = dut->w_valid && !dut->w_ready;
    held_irq = dut->irq_valid && !dut->irq_ready;
    aw_was = dut->aw_addr;
    std::memcpy(w_was.data(), &dut->w_data[0], 64);
    strb_was = dut->w_strb;
    irq_was = dut->irq_vector;
    dut.tick();
    ++ts;
  }

  // After the first mismatch the reference has usually lost step with the writer and every
  // later cycle would fail too: the loops stop at the first failure or RTL assertion.
  bool going() const { return !HasFailure() && !dut.rtl_error(); }

  // AXI and interrupt stability, seen from the ports
  void check_held(uint64_t c) {
    if (held_aw) {
      EXPECT_TRUE(dut->aw_valid) << "cycle " << c << ": AW withdrawn";
      EXPECT_EQ(uint64_t(dut->aw_addr), aw_was) << "cycle " << c << ": AW changed while held";
    }
    if (held_w) {
      EXPECT_TRUE(dut->w_valid) << "cycle " << c << ": W withdrawn";
      EXPECT_EQ(std::memcmp(w_was.data(), &dut->w_data[0], 64), 0) << "cycle " << c << ": W changed while held";
      EXPECT_EQ(uint64_t(dut->w_strb), strb_was) << "cycle " << c;
    }
    if (held_irq) {
      EXPECT_TRUE(dut->irq_valid) << "cycle " << c << ": interrupt withdrawn";
      EXPECT_EQ(int(dut->irq_vector), int(irq_was)) << "cycle " << c << ": interrupt changed while held";
    }
  }

  void check_cqe(uint64_t c) {
    const Expected& e = expect_w.front();
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
    // the completion time is the decide cycle's, held while the write waits for the bus
    EXPECT_EQ(t, e.ts) << "cycle " << c << ": timestamp";
    EXPECT_EQ(q.flags, uint8_t(r.with_imm ? abi::CQE_FLAG_WITH_IMM : 0));
    EXPECT_EQ(q.owner, uint8_t(e.owner)) << "cycle " << c << " CQ " << r.cqn;
    // the other half of the beat is not strobed and carries nothing
    static const uint8_t zeros[32] = {};
    EXPECT_EQ(std::memcmp(beat + (hi ? 0 : 32), zeros, 32), 0) << "cycle " << c << ": unstrobed half not zero";
  }

  // One CQ_WRITE through the command port (waits for the pipeline to drain).
  void configure(int cqn, const Cq& cfg) {
    cmd_hold = true;
    cmd_cqn = uint16_t(cqn);
    cmd_cq = cfg;
    for (int i = 0; i < 200 && cmd_hold && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
    ASSERT_FALSE(cmd_hold) << "CQ_WRITE not taken";
  }

  // n distinct hot CQs (the first the highest CQN), each configured once.
  void setup_cqs(int n, int max_log = 4) {
    hot.clear();
    hot.push_back(kCqs - 1);
    while (int(hot.size()) < n) {
      const int q = int(rng.below(kCqs));
      if (std::find(hot.begin(), hot.end(), q) == hot.end()) hot.push_back(q);
    }
    for (int q : hot) configure(q, Cq{rng.next() & ~31ull, int(rng.range(0, uint64_t(max_log))), true, 0, 0});
  }

  void drain() {
    for (int i = 0; i < 200 && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
    EXPECT_FALSE(deciding.has_value());
    EXPECT_TRUE(expect_aw.empty()) << expect_aw.size() << " CQEs never written";
    EXPECT_TRUE(expect_w.empty()) << expect_w.size() << " CQEs never written";
    EXPECT_TRUE(expect_irq.empty()) << expect_irq.size() << " interrupts never raised";
  }

  void print_stats(const char* what) {
    std::printf("[cq_writer] %s: %llu takes, %llu written, %llu dropped (%llu full), %llu cmds, "
                "%llu irqs; decisions needing the forwarded pi %llu, the forwarded doorbell %llu; "
                "AW and W taken in one cycle %llu\n",
                what, (unsigned long long)takes, (unsigned long long)writes, (unsigned long long)drops,
                (unsigned long long)full_drops, (unsigned long long)cmds, (unsigned long long)irqs,
                (unsigned long long)pi_forwarded, (unsigned long long)db_forwarded,
                (unsigned long long)aw_w_same_cycle);
  }

  Rng rng;
  Dut<Vsrnic_cq_writer> dut;
  std::vector<Cq> cqs;
  std::vector<uint16_t> written_pi = std::vector<uint16_t>(kCqs);
  std::vector<int> hot;
  Target target = Target::kRandom;
  unsigned p_db_all = 0;  // percentage of doorbells that consume every CQE written so far
  std::array<bool, 2> req_hold{};
  std::array<CqeReq, 2> req{};
  bool cmd_hold = false;
  uint16_t cmd_cqn = 0;
  Cq cmd_cq;
  std::optional<Doorbell> force_db, last_db;
  uint16_t last_db_old_ci = 0;
  std::optional<CqeReq> deciding;
  int last_write_cqn = -1;
  std::deque<Expected> expect_aw, expect_w;
  std::deque<uint16_t> expect_irq;
  bool held_aw = false, held_w = false, held_irq = false;
  uint64_t aw_was = 0, strb_was = 0;
  std::array<uint8_t, 64> w_was{};
  uint16_t irq_was = 0;
  int last_pick = -1;
  uint64_t ts = 0x0000FFFFFFF00000ull, drops = 0, full_drops = 0, writes = 0, cmds = 0, takes = 0,
           irqs = 0, decided_writes = 0, pi_forwarded = 0, db_forwarded = 0, aw_w_same_cycle = 0;
};

TEST_F(CqWriterBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(6);
  for (int phase = 0; phase < 40 && going(); ++phase) {
    const unsigned pr = unsigned(rng.range(5, 100)), pdb = unsigned(rng.range(0, 40));
    const unsigned pa = unsigned(rng.range(20, 100)), pw = unsigned(rng.range(20, 100));
    for (int i = 0; i < 2000 && going(); ++i) cycle(pr, 1, pdb, pa, pw, 100);
  }
  drain();
  print_stats("random");
  EXPECT_GT(writes, 2000u);
  EXPECT_GT(full_drops, 100u) << "rings never filled";
  EXPECT_GT(cmds, 100u);
}

// Back-to-back CQEs of one CQ and two sources alternating between two CQs, with random
// AW/W/irq back-pressure, doorbells and CQ_WRITEs. Small rings fill and drain all the time,
// so full-ring drops, doorbells arriving in the take cycle and producer indices forwarded
// from the CQE decided just before are all exercised (counted and required below).
TEST_F(CqWriterBench, BackToBackSameAndAlternatingCqs) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(3, 3);
  p_db_all = 50;
  for (int phase = 0; phase < 60 && going(); ++phase) {
    target = phase % 2 ? Target::kSame : Target::kAlternate;
    const unsigned pr = rng.percent(50) ? 100 : unsigned(rng.range(50, 100));
    const unsigned pdb = unsigned(rng.range(5, 60)), pcmd = rng.percent(30) ? 1 : 0;
    const unsigned pa = rng.percent(40) ? 100 : unsigned(rng.range(30, 100));
    const unsigned pw = rng.percent(40) ? 100 : unsigned(rng.range(30, 100));
    const unsigned pi = rng.percent(40) ? 100 : unsigned(rng.range(10, 100));
    for (int i = 0; i < 1500 && going(); ++i) cycle(pr, pcmd, pdb, pa, pw, pi);
  }
  drain();
  print_stats("back-to-back");
  EXPECT_GT(writes, 10000u);
  EXPECT_GT(full_drops, 1000u) << "rings never filled";
  EXPECT_GT(pi_forwarded, 2000u) << "too few back-to-back CQEs of one CQ";
  EXPECT_GT(db_forwarded, 200u) << "too few doorbells in the take cycle of a full ring's CQE";
  EXPECT_GT(aw_w_same_cycle, 2000u);
  EXPECT_GT(cmds, 5u);
}

// A doorbell in the take cycle frees the slot of a CQE for a full ring; the same doorbell
// one cycle later (the decide cycle) comes too late and the CQE is dropped.
TEST_F(CqWriterBench, DoorbellInTakeCycle) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(1);
  const int q = hot[0];
  configure(q, Cq{0x40000, 0, true, 0, 0});  // one entry
  target = Target::kSame;
  for (int late = 0; late < 2; ++late) {
    // empty, then fill the ring
    force_db = Doorbell{uint16_t(q), written_pi[size_t(q)]};
    for (int i = 0; i < 5 && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
    req_hold[0] = true;
    req[0] = random_req(0);
    for (int i = 0; i < 20 && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
    ASSERT_FALSE(req_hold[0]);
    const uint64_t w = writes, d = drops;
    // the next CQE with the host's doorbell in its take cycle (late: in its decide cycle)
    req_hold[0] = true;
    req[0] = random_req(0);
    const Doorbell db{uint16_t(q), written_pi[size_t(q)]};
    if (!late) force_db = db;
    cycle(0, 0, 0, 100, 100, 100);
    ASSERT_FALSE(req_hold[0]) << "CQE not taken at once";
    if (late) force_db = db;
    for (int i = 0; i < 20 && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
    EXPECT_EQ(writes - w, late ? 0u : 1u) << (late ? "late" : "take-cycle") << " doorbell";
    EXPECT_EQ(drops - d, late ? 1u : 0u) << (late ? "late" : "take-cycle") << " doorbell";
  }
  drain();
}

// With AW, W and irq always ready and both sources always valid the writer takes and writes
// one CQE per cycle (measured 1.00 CQE/cycle, for one CQ and for two alternating CQs);
// the requirement is at least one per 2 cycles.
TEST_F(CqWriterBench, ThroughputSameCq) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(2);
  for (int q : hot) configure(q, Cq{uint64_t(q) << 24, 15, true, 0, 0});
  target = Target::kSame;
  for (int i = 0; i < 100 && going(); ++i) cycle(100, 0, 0, 100, 100, 100);  // fill the pipeline
  const uint64_t w0 = writes, t0 = takes, n = 4000;
  for (uint64_t i = 0; i < n && going(); ++i) cycle(100, 0, 0, 100, 100, 100);
  const double rate = double(writes - w0) / double(n);
  std::printf("[cq_writer] one CQ: %.3f CQEs written per cycle, %.3f taken per cycle\n", rate,
              double(takes - t0) / double(n));
  RecordProperty("cqe_per_cycle_same_cq", std::to_string(rate));
  EXPECT_GE(rate, 0.5) << "below one CQE per 2 cycles";
  EXPECT_GE(rate, 0.99) << "the pipeline sustains one CQE per cycle";
  EXPECT_EQ(drops, 0u);
  drain();
}

TEST_F(CqWriterBench, ThroughputAlternatingCqs) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(2);
  for (int q : hot) configure(q, Cq{uint64_t(q) << 24, 15, true, 0, 0});
  target = Target::kAlternate;
  for (int i = 0; i < 100 && going(); ++i) cycle(100, 0, 0, 100, 100, 100);
  const uint64_t w0 = writes, n = 4000;
  for (uint64_t i = 0; i < n && going(); ++i) cycle(100, 0, 0, 100, 100, 100);
  const double rate = double(writes - w0) / double(n);
  std::printf("[cq_writer] two alternating CQs: %.3f CQEs written per cycle\n", rate);
  RecordProperty("cqe_per_cycle_alternating", std::to_string(rate));
  EXPECT_GE(rate, 0.5) << "below one CQE per 2 cycles";
  EXPECT_GE(rate, 0.99) << "the pipeline sustains one CQE per cycle";
  EXPECT_EQ(drops, 0u);
  drain();
}

// Interrupts raised while the interrupt output is stalled are queued, one per CQE, and
// none is lost: once the queue (with the CQEs that may still write) is full, no CQE is
// taken until interrupts are taken again; then every interrupt arrives, in write order
// (checked against the reference in cycle()).
TEST_F(CqWriterBench, InterruptsNotLostWhileStalled) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(2);
  for (int q : hot) configure(q, Cq{uint64_t(q) << 24, 10, true, 0, 0});
  target = Target::kAlternate;
  for (int i = 0; i < 60 && going(); ++i) cycle(100, 0, 0, 100, 100, 0);
  const uint64_t taken = takes;
  EXPECT_GT(taken, 2u) << "interrupts not queued";
  EXPECT_LE(taken, 16u) << "more CQEs taken than interrupts can be held";
  for (int i = 0; i < 50 && going(); ++i) cycle(100, 0, 0, 100, 100, 0);
  EXPECT_EQ(takes, taken) << "CQE taken while its interrupt could not be queued";
  EXPECT_TRUE(req_hold[0] && req_hold[1]);
  EXPECT_EQ(expect_irq.size(), writes) << "every written CQE waits with its interrupt";
  for (int i = 0; i < 200 && going(); ++i) cycle(100, 0, 0, 100, 100, rng.percent(50) ? 100 : 0);
  EXPECT_GT(takes, taken + 20) << "CQEs not taken again after the interrupts";
  drain();
  EXPECT_EQ(irqs, writes) << "one interrupt per CQE";
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
  CqeReq r = random_req(0);
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

}  // namespace
}  // namespace srnic::verif::blocks
