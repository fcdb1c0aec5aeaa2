// srnic_cq_writer bench: two request ports (round-robin), CQ_WRITE commands and CQ doorbells
// from a host model that consumes CQEs, against a reference of each CQ's base, size,
// producer and consumer index. Every CQE write must go to base + (pi mod size) * 32 as one
// 64-byte beat with the right half strobed, carry the request's fields, the timestamp and
// the owner (phase) bit the ABI defines (docs/interfaces.md §4, parsed with srnic/abi.hpp);
// a full ring, an unconfigured CQ or a CQN out of range drops the CQE and pulses
// cnt_overflow; every written CQE raises an interrupt for its CQ.
// QP incarnations (decision 109): the bench plays srnic_qp_gen with a table of every QP's
// incarnation (random at start, as the array is not reset) that answers gen_cur for gen_qpn in
// the same cycle, and a QP reset advances its entry. gen_qpn must name the QP of the request the
// round-robin offers; a request whose incarnation is not its QP's current one when it is taken
// is dropped: stale_drop in that cycle, no CQE, no producer-index advance, no interrupt. A stale
// request the round-robin offers is taken at once, even while the output waits for the bus, and
// takes its round-robin turn like any other.
#include <algorithm>
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
  uint8_t gen;
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
struct Written {  // a CQE as the DUT wrote it (wr_id, QPN) and the reference placed it
  uint64_t wr_id;
  uint16_t qpn, cqn;
  uint64_t addr;
};
struct Expected {
  bool write;
  CqeReq req;
  uint64_t addr;
  bool owner;
};

class CqWriterBench : public ::testing::Test {
 public:
  CqWriterBench() : rng(test_seed()), dut(rng.next()), cqs(kCqs), irq_owed(kCqs) {
    Rng g(test_seed() ^ 0x6E6A5F67656E0000ull);  // own stream: the other tests draw as before
    for (auto& v : gen_tab) v = uint8_t(g.below(16));
  }

  void reset() {
    dut->a_valid = dut->b_valid = dut->cq_cmd_valid = dut->db_valid = 0;
    dut->aw_ready = dut->w_ready = dut->irq_ready = 0;
    dut.reset();
  }

  template <class T>
  void drive_req(T& sig, const CqeReq& r) {
    auto put = [&](size_t f, uint64_t v) { set_bits(sig, kCqeReq.at(f).lsb, kCqeReq.at(f).width, v); };
    put(kCrGen, r.gen);
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
    r.qpn = qp_pool.empty() ? uint16_t(rng.u32()) : qp_pool[rng.below(qp_pool.size())];
    r.gen = gen_tab[r.qpn];
    if (p_old && rng.percent(p_old)) r.gen = uint8_t((r.gen + 1 + rng.below(15)) & 15);  // made before a reset
    r.wqe_idx = uint16_t(rng.u32());
    r.opcode = rng.u8();
    r.status = rng.u8();
    r.with_imm = rng.percent(50);
    return r;
  }

  // A request of QP qpn for CQ cqn, of its current incarnation.
  CqeReq req_for(uint16_t qpn, uint16_t cqn) {
    CqeReq r = random_req();
    r.qpn = qpn;
    r.cqn = cqn;
    r.gen = gen_tab[qpn];
    return r;
  }

  // The host resets QP q: its incarnation advances, seen by gen_cur from the next settle on.
  // A QP reset: its incarnation advances, and in the next cycle drain_req asks the writer to
  // write what it took (decision 115).
  void reset_qp(uint16_t q) {
    gen_tab[q] = uint8_t((gen_tab[q] + 1) & 15);
    ++resets;
    drain_pending = true;
  }
  // drain (decision 115): drain_req goes with the cycle after reset_qp; from then on no current
  // request is taken until drain_busy falls, drain_busy stays up while a CQE taken before is
  // still to be written or dropped, and falls one cycle after the last of them
  bool drain_pending = false, drain_on = false;
  int drain_empty = 0;
  uint64_t drains = 0, drain_cycles = 0;

  // Settles the model's outputs, answering gen_cur for gen_qpn in the same cycle.
  void settle() {
    dut.eval();
    const uint16_t q = uint16_t(dut->gen_qpn);
    dut->gen_cur = gen_tab[q];
    dut.eval();
    ASSERT_EQ(uint16_t(dut->gen_qpn), q) << "cycle " << dut.cycle() << ": gen_qpn depends on gen_cur";
  }

  bool is_stale(const CqeReq& r) const { return r.gen != gen_tab[r.qpn]; }

  void cycle(unsigned p_req, unsigned p_cmd, unsigned p_db, unsigned p_aw, unsigned p_w, unsigned p_irq) {
    // QP resets: half of them hit the QP of a random port's waiting request, if it has one
    if (p_reset && rng.percent(p_reset)) {
      const size_t k = rng.below(2);
      reset_qp(req_hold[k] && rng.percent(50) ? req[k].qpn : qp_pool[rng.below(qp_pool.size())]);
    }
    // requesters: hold until taken; a port's feed first, then random requests
    for (int k = 0; k < 2; ++k)
      if (!req_hold[size_t(k)]) {
        if (!feed[size_t(k)].empty()) {
          req_hold[size_t(k)] = true;
          req[size_t(k)] = feed[size_t(k)].front();
          feed[size_t(k)].pop_front();
        } else if (rng.percent(p_req)) {
          req_hold[size_t(k)] = true;
          req[size_t(k)] = random_req();
        }
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
    dut->drain_req = drain_pending;
    settle();
    if (HasFatalFailure()) return;
    const uint64_t c = dut.cycle();
    if (drain_on) {
      ++drain_cycles;
      drain_empty = expect.empty() ? drain_empty + 1 : 0;
      if (!expect.empty())
        EXPECT_TRUE(dut->drain_busy) << "cycle " << c << ": drain_busy fell with " << expect.size()
                                     << " CQEs taken before the QP reset still to be written";
      // (nothing taken since the reset: every CQE expected was taken before it)
      if (drain_empty >= 2) EXPECT_FALSE(dut->drain_busy) << "cycle " << c << ": drain_busy stays up, nothing left";
      if (!dut->drain_busy) drain_on = false;
    }
    const bool draining = drain_on || drain_pending;

    // the request the round-robin offers: b when a is idle or a was taken last
    const bool any = req_hold[0] || req_hold[1];
    const int pick = req_hold[1] && (!req_hold[0] || last_pick == 0) ? 1 : 0;
    if (any) {
      EXPECT_EQ(uint16_t(dut->gen_qpn), req[size_t(pick)].qpn)
          << "cycle " << c << ": gen_qpn is not the QP of the request on port " << "ab"[pick];
    }
    // a request taken: decide its fate from the CQ state before this cycle's updates
    const bool ta = dut->a_valid && dut->a_ready, tb = dut->b_valid && dut->b_ready;
    EXPECT_FALSE(ta && tb) << "cycle " << c;
    const bool stale_offered = any && is_stale(req[size_t(pick)]);
    if (stale_offered && !cmd_hold) {
      EXPECT_TRUE(ta || tb) << "cycle " << c << ": stale request of QP " << req[size_t(pick)].qpn << " on port "
                            << "ab"[pick] << " not taken at once";
    }
    EXPECT_EQ(bool(dut->stale_drop), (ta || tb) && is_stale(req[tb ? 1 : 0]))
        << "cycle " << c << ": stale_drop " << int(dut->stale_drop) << " with "
        << (ta || tb ? is_stale(req[tb ? 1 : 0]) ? "a stale request taken" : "a current request taken"
                     : "nothing taken");
    if (ta || tb) {
      EXPECT_EQ(int(tb), pick) << "cycle " << c << ": port " << "ab"[int(tb)] << " taken, the round-robin offers "
                               << "ab"[pick];
      const CqeReq& r = req[tb ? 1 : 0];
      last_pick = tb;
      ++taken[tb ? 1 : 0];
      req_hold[tb ? 1 : 0] = false;
      if (is_stale(r)) {  // dropped: no CQE, the CQ's state unchanged
        stale_ids.push_back(r.wr_id);
        ++stale_drops;
      } else {
        EXPECT_FALSE(cmd_hold) << "cycle " << c << ": request taken while a CQ_WRITE waits";
        EXPECT_FALSE(draining) << "cycle " << c << ": request taken while a QP reset drains the writer";
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
      }
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
        ++irqs[size_t(v)];
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
    if (drain_pending) {
      drain_pending = false;
      drain_on = true;
      drain_empty = 0;
      ++drains;
    }
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
    ring_log.push_back({uint64_t(q.wr_id), uint16_t(q.qpn), r.cqn, e.addr});
  }

  void setup_cqs(int n) {
    hot.clear();
    for (int i = 0; i < n; ++i) hot.push_back(i == 0 ? kCqs - 1 : int(rng.below(kCqs)));
    // configure each hot CQ once through the command port
    for (int q : hot) {
      cmd_hold = true;
      cmd_cqn = uint16_t(q);
      cmd_cq = Cq{rng.next() & ~31ull, int(rng.range(0, 4)), true, 0, 0};
      while (cmd_hold && going()) cycle(0, 0, 0, 100, 100, 100);
    }
  }

  // Configures CQ q (ring of 2^log_size CQEs at base) through the command port.
  void set_cq(int q, uint64_t base, int log_size) {
    cmd_hold = true;
    cmd_cqn = uint16_t(q);
    cmd_cq = Cq{base, log_size, true, 0, 0};
    while (cmd_hold && going()) cycle(0, 0, 0, 100, 100, 100);
  }
  // n distinct QPNs
  std::vector<uint16_t> distinct_qps(size_t n) {
    std::vector<uint16_t> v;
    while (v.size() < n) {
      const uint16_t q = uint16_t(rng.u32());
      if (std::find(v.begin(), v.end(), q) == v.end()) v.push_back(q);
    }
    return v;
  }
  // After the first mismatch the reference has usually lost step with the writer and every
  // later cycle would fail too: the loops stop at the first failure or RTL assertion.
  bool going() const { return !HasFailure() && !dut.rtl_error(); }
  bool idle() const { return !req_hold[0] && !req_hold[1] && feed[0].empty() && feed[1].empty() && expect.empty(); }
  // Runs with the bus ready until every request is taken and every CQE written, then a little more.
  void drain() {
    for (int i = 0; i < 2000 && !idle() && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
    ASSERT_TRUE(idle()) << "requests or CQEs left: held a " << req_hold[0] << " b " << req_hold[1] << ", fed "
                        << feed[0].size() << "+" << feed[1].size() << ", CQEs expected " << expect.size();
    for (int i = 0; i < 20 && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
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
  // incarnations: srnic_qp_gen's array as the bench plays it
  std::array<uint8_t, 1u << 16> gen_tab{};
  std::vector<uint16_t> qp_pool;        // QPs of random requests (any QP when empty)
  unsigned p_reset = 0, p_old = 0;      // per cycle: a QP reset; per request: made before a reset
  std::array<std::deque<CqeReq>, 2> feed;  // requests each port offers before random ones
  std::array<uint64_t, 2> taken{};
  std::vector<uint64_t> stale_ids;      // wr_ids of the requests dropped as stale, in take order
  std::vector<Written> ring_log;        // every CQE written, in order
  std::vector<int> irqs = std::vector<int>(kCqs);
  uint64_t stale_drops = 0, resets = 0;
};

TEST_F(CqWriterBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(6);
  for (int phase = 0; phase < 40 && going(); ++phase) {
    const unsigned pr = unsigned(rng.range(5, 100)), pdb = unsigned(rng.range(0, 40));
    const unsigned pa = unsigned(rng.range(20, 100)), pw = unsigned(rng.range(20, 100));
    const unsigned pi = phase % 3 == 0 ? unsigned(rng.range(10, 100)) : 100;
    for (int i = 0; i < 2000 && going(); ++i) cycle(pr, 1, pdb, pa, pw, pi);
  }
  for (int i = 0; i < 100 && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
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
  settle();
  dut.tick();
  dut->db_valid = 0;
  CqeReq r = random_req();
  r.cqn = uint16_t(q);
  drive_req(dut->a_req, r);
  dut->a_valid = 1;
  dut->aw_ready = dut->w_ready = dut->irq_ready = 1;
  settle();
  for (int i = 0; i < 20 && !dut->a_ready; ++i) {
    dut.tick();
    settle();
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
    while (cmd_hold && going()) cycle(0, 0, 0, 100, 100, 100);
  }
  for (int same = 1; same >= 0 && going(); --same) {
    const uint64_t w0 = writes;
    for (int i = 0; i < 400 && going(); ++i) {
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

// QP x is reset while its CQE requests wait on both ports behind a stalled bus (CQs of
// other QPs share the ports and the CQs): the ones taken before the reset are written, every
// later one is dropped (stale_drop once each, even before the bus moves), the other QPs'
// requests are written in their port's order, the CQ only x used gets no CQE and no
// interrupt, and the next CQEs of x's new incarnation land in the slots the drops left.
TEST_F(CqWriterBench, ResetDropsTheQpsWaitingRequests) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(3);
  while (hot[1] == hot[0] || hot[2] == hot[0] || hot[2] == hot[1]) hot[size_t(rng.range(1, 2))] = int(rng.below(kCqs));
  for (size_t i = 0; i < 3; ++i) set_cq(hot[i], 0x100000ull * (i + 1), 4);  // rings of 16: none fills
  const std::vector<uint16_t> qp = distinct_qps(3);
  const uint16_t x = qp[0], y = qp[1], z = qp[2];
  const uint16_t c0 = uint16_t(hot[0]), c1 = uint16_t(hot[1]), c2 = uint16_t(hot[2]);
  // a: Y X Y X X Y; b: X Z X Z Z X (X to c2 only, and to c0 beside Z)
  const std::array<std::vector<std::pair<uint16_t, uint16_t>>, 2> plan{{
      {{y, c1}, {x, c2}, {y, c1}, {x, c2}, {x, c0}, {y, c1}},
      {{x, c0}, {z, c0}, {x, c0}, {z, c0}, {z, c1}, {x, c2}},
  }};
  std::array<std::vector<CqeReq>, 2> sent;
  for (size_t k = 0; k < 2; ++k)
    for (auto [q, cq] : plan[k]) {
      sent[k].push_back(req_for(q, cq));
      feed[k].push_back(sent[k].back());
    }
  // the bus stalls: the first CQEs fill the pipeline and the output, the rest wait
  for (int i = 0; i < 20 && going(); ++i) cycle(0, 0, 0, 0, 0, 100);
  ASSERT_EQ(taken[0] + taken[1], 2u) << "expected two CQEs taken before the output is full";
  ASSERT_EQ(taken[1], 1u) << "x's first request (port b) not taken before the reset";
  // x's requests not taken yet are the ones to drop
  std::vector<uint64_t> to_drop;
  for (size_t k = 0; k < 2; ++k)
    for (size_t i = taken[k]; i < sent[k].size(); ++i)
      if (sent[k][i].qpn == x) to_drop.push_back(sent[k][i].wr_id);
  ASSERT_EQ(to_drop.size(), 5u);
  reset_qp(x);
  for (int i = 0; i < 10 && going(); ++i) cycle(0, 0, 0, 0, 0, 100);
  EXPECT_GE(stale_drops, 1u) << "a stale request waited for the stalled bus";
  EXPECT_EQ(writes, 0u);
  drain();
  if (!going()) return;
  EXPECT_EQ(stale_drops, 5u);
  std::vector<uint64_t> dropped = stale_ids;
  std::sort(dropped.begin(), dropped.end());
  std::sort(to_drop.begin(), to_drop.end());
  EXPECT_EQ(dropped, to_drop) << "not the requests of x made before its reset";
  // every other request written, each port's in its order, none of the dropped ones
  for (const Written& w : ring_log)
    EXPECT_TRUE(std::find(to_drop.begin(), to_drop.end(), w.wr_id) == to_drop.end())
        << "CQE of QP " << w.qpn << " (wr_id " << w.wr_id << ") made before its QP's reset written to CQ " << w.cqn;
  for (size_t k = 0; k < 2; ++k) {
    std::vector<uint64_t> want, got;
    for (const CqeReq& r : sent[k])
      if (std::find(to_drop.begin(), to_drop.end(), r.wr_id) == to_drop.end()) want.push_back(r.wr_id);
    for (const Written& w : ring_log)
      for (const CqeReq& r : sent[k])
        if (r.wr_id == w.wr_id) got.push_back(w.wr_id);
    EXPECT_EQ(got, want) << "port " << "ab"[k] << ": CQEs written";
  }
  // rings: c0 holds X0 Z Z, c1 Y Y Y Z, c2 nothing (and had no interrupt)
  auto slots = [&](uint16_t cq) {
    std::vector<uint64_t> v;
    for (const Written& w : ring_log)
      if (w.cqn == cq) v.push_back(w.addr);
    return v;
  };
  const uint64_t b0 = 0x100000, b1 = 0x200000, b2 = 0x300000;
  EXPECT_EQ(slots(c0), (std::vector<uint64_t>{b0, b0 + 32, b0 + 64}));
  EXPECT_EQ(slots(c1), (std::vector<uint64_t>{b1, b1 + 32, b1 + 64, b1 + 96}));
  EXPECT_TRUE(slots(c2).empty());
  EXPECT_EQ(irqs[c2], 0) << "interrupt for a CQ that only got dropped requests";
  EXPECT_GE(irqs[c0], 1);
  EXPECT_GE(irqs[c1], 1);
  // x's new incarnation: written, into the slots after the last CQEs written
  feed[1].push_back(req_for(x, c2));
  feed[0].push_back(req_for(x, c0));
  drain();
  if (!going()) return;
  EXPECT_EQ(stale_drops, 5u);
  EXPECT_EQ(slots(c2), (std::vector<uint64_t>{b2}));
  EXPECT_EQ(slots(c0), (std::vector<uint64_t>{b0, b0 + 32, b0 + 64, b0 + 96}));
  EXPECT_EQ(irqs[c2], 1);
  EXPECT_EQ(ring_log.size(), 9u);
}

// Stale requests on both ports are dropped one per cycle, alternating, while the output is
// full and the bus stalls (a drop needs no room); a current request the round-robin offers
// then waits for the bus, and the stale one on the other port waits for its turn.
TEST_F(CqWriterBench, StaleRequestsDrainWhileTheBusStalls) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(1);
  set_cq(hot[0], 0x40000, 10);
  const std::vector<uint16_t> qp = distinct_qps(2);
  const uint16_t x = qp[0], y = qp[1], cq = uint16_t(hot[0]);
  for (int i = 0; i < 2; ++i) feed[0].push_back(req_for(y, cq));
  for (int i = 0; i < 20 && going(); ++i) cycle(0, 0, 0, 0, 0, 100);
  ASSERT_EQ(taken[0], 2u);
  ASSERT_EQ(writes, 0u);
  // x is reset after its requests were made
  for (int i = 0; i < 8; ++i) {
    feed[0].push_back(req_for(x, cq));
    feed[1].push_back(req_for(x, cq));
  }
  reset_qp(x);
  const uint64_t c0 = dut.cycle();
  while (stale_drops < 16 && dut.cycle() - c0 < 40 && going()) cycle(0, 0, 0, 0, 0, 100);
  EXPECT_EQ(stale_drops, 16u);
  EXPECT_EQ(dut.cycle() - c0, 16u) << "stale requests not dropped one per cycle";
  EXPECT_EQ(taken[0], 10u);
  EXPECT_EQ(taken[1], 8u);
  EXPECT_EQ(writes, 0u);
  // b's turn: a current request there waits for room, a's stale one for its turn
  ASSERT_EQ(last_pick, 0);
  feed[1].push_back(req_for(y, cq));
  feed[0].push_back(req_for(x, cq));
  reset_qp(x);
  for (int i = 0; i < 10 && going(); ++i) cycle(0, 0, 0, 0, 0, 100);
  EXPECT_EQ(stale_drops, 16u);
  EXPECT_TRUE(req_hold[0] && req_hold[1]);
  drain();
  if (!going()) return;
  EXPECT_EQ(writes, 3u);
  EXPECT_EQ(stale_drops, 17u);
  EXPECT_EQ(ring_log.back().qpn, y);
  EXPECT_EQ(ring_log.back().addr, 0x40000u + 2 * 32) << "the drops moved the producer index";
}

// A QP reset with the writer full and the write channel stalled (two CQEs taken, a third
// waiting on the same port): drain_busy rises, no current request is taken while it is up (the
// third, and one on the other port), the two are written once the bus moves, drain_busy falls
// the cycle after the last write, and then the waiting requests are taken.
TEST_F(CqWriterBench, ResetDrainsWhatWasTakenFirst) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(1);
  set_cq(hot[0], 0x60000, 10);
  const std::vector<uint16_t> qp = distinct_qps(2);
  const uint16_t x = qp[0], y = qp[1], cq = uint16_t(hot[0]);
  for (int i = 0; i < 2; ++i) feed[0].push_back(req_for(x, cq));
  feed[0].push_back(req_for(y, cq));
  for (int i = 0; i < 20 && going(); ++i) cycle(0, 0, 0, 0, 0, 100);
  ASSERT_EQ(taken[0], 2u);
  ASSERT_EQ(writes, 0u);
  feed[1].push_back(req_for(y, cq));
  reset_qp(x);
  for (int i = 0; i < 50 && going(); ++i) cycle(0, 0, 0, 0, 0, 100);
  EXPECT_TRUE(dut->drain_busy) << "drain_busy is not up while the two CQEs wait for the bus";
  EXPECT_EQ(taken[0], 2u) << "a request was taken while the writer drains";
  EXPECT_EQ(taken[1], 0u) << "a request was taken while the writer drains";
  const uint64_t c0 = dut.cycle();
  uint64_t fell = 0;
  uint64_t w_at_fall = 0;
  while (going() && dut.cycle() - c0 < 100 && (drain_on || taken[0] + taken[1] < 4)) {
    cycle(0, 0, 0, 100, 100, 100);
    if (!fell && !drain_on) {
      fell = dut.cycle();
      w_at_fall = writes;
    }
  }
  EXPECT_EQ(w_at_fall, 2u) << "drain_busy fell before the CQEs taken before the reset were written";
  EXPECT_EQ(taken[0] + taken[1], 4u) << "the waiting requests were not taken after the drain";
  EXPECT_EQ(drains, 1u);
  drain();
}

// A port whose requests are all stale keeps its round-robin turns, and the other port's
// current requests still get every other take and one CQE per two cycles (each port in turn).
TEST_F(CqWriterBench, StaleRequestsTakeTheirRoundRobinTurn) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(1);
  set_cq(hot[0], 0x800000, 10);
  const std::vector<uint16_t> qp = distinct_qps(2);
  const uint16_t x = qp[0], y = qp[1], cq = uint16_t(hot[0]);
  for (size_t stale_port = 0; stale_port < 2 && going(); ++stale_port) {
    const std::array<uint64_t, 2> t0 = taken;
    const uint64_t w0 = writes, s0 = stale_drops;
    for (int i = 0; i < 400 && going(); ++i) {
      for (size_t k = 0; k < 2; ++k)
        if (!req_hold[k] && feed[k].empty()) {
          CqeReq r = req_for(k == stale_port ? x : y, cq);
          if (k == stale_port) r.gen = uint8_t((r.gen + 1 + rng.below(15)) & 15);  // an earlier incarnation
          feed[k].push_back(r);
        }
      cycle(0, 0, 0, 100, 100, 100);
    }
    const uint64_t ts = taken[stale_port] - t0[stale_port], tc = taken[1 - stale_port] - t0[1 - stale_port];
    EXPECT_LE(ts > tc ? ts - tc : tc - ts, 1u) << "stale on port " << "ab"[stale_port] << ": " << ts
                                               << " stale takes, " << tc << " current";
    EXPECT_EQ(stale_drops - s0, ts);
    EXPECT_GE(writes - w0, 190u) << "stale on port " << "ab"[stale_port] << ": fewer than one CQE per two cycles";
    drain();  // (a ring of 1024: both rounds fit)
  }
  EXPECT_EQ(drops, 0u);
}

// Random traffic as in RandomTraffic on a few QPs (0 and 65535 among them), with QP resets at
// random cycles (some hitting a waiting request's QP) and requests made before a reset of their
// QP (any other incarnation): every take decided against the current incarnations, the rest
// against the CQ reference.
TEST_F(CqWriterBench, RandomTrafficWithResets) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_cqs(6);
  qp_pool = distinct_qps(6);
  qp_pool[0] = 0;
  if (std::find(qp_pool.begin(), qp_pool.end(), 0xFFFF) == qp_pool.end()) qp_pool[1] = 0xFFFF;
  for (int phase = 0; phase < 30 && going(); ++phase) {
    const unsigned pr = unsigned(rng.range(5, 100)), pdb = unsigned(rng.range(0, 40));
    const unsigned pa = unsigned(rng.range(20, 100)), pw = unsigned(rng.range(20, 100));
    const unsigned pi = phase % 3 == 0 ? unsigned(rng.range(10, 100)) : 100;
    p_reset = unsigned(rng.range(0, 15));
    p_old = unsigned(rng.range(0, 20));
    for (int i = 0; i < 2000 && going(); ++i) cycle(pr, 1, pdb, pa, pw, pi);
  }
  p_reset = 0;
  for (int i = 0; i < 100 && going(); ++i) cycle(0, 0, 0, 100, 100, 100);
  EXPECT_TRUE(expect.empty());
  EXPECT_GT(writes, 2000u);
  EXPECT_GT(stale_drops, 500u);
  EXPECT_GT(drops, 50u) << "rings never filled";
  for (int q : hot) EXPECT_EQ(irq_owed[size_t(q)], 0) << "CQ " << q << ": CQE written, no interrupt";
}

}  // namespace
}  // namespace srnic::verif::blocks
