// srnic_wqe_fetch bench (with srnic_qpc_ram): the bench is the scheduler, a host memory
// holding each QP's SQ ring of random WQEs (WRITE/WRITE_IMM/SEND/SEND_IMM/READ, lengths
// 0..3*MTU) behind an in-order AXI read slave with random latency, the MR table (2-cycle
// answers, translated address = va + key * 4096), the READ context table and the TX
// queue, all with random back-pressure. Per QP the packet jobs must be exactly the WQEs cut
// into MTU packets: opcodes FIRST/MIDDLE/LAST/ONLY (+IMM), consecutive PSNs (a READ
// advancing by its response count), payload addresses and lengths, RETH, ImmDt, AckReq on
// last packets and every 64th PSN, SE; each READ leaves with its context insert (first and
// last PSN, pa). Each turn is planned by a reference of the turn rules (up to SCHED_WQES
// WQEs, never across the ring end or a 4 KiB boundary, whole packets until SCHED_BURST
// bytes are spent, a READ or a segment under 64 bytes costing 64): the WQE read address and
// length, and the turn-end report (more work iff consumer != producer seen at turn start)
// must match it, no job may leave before the turn that plans it started, and once all is
// quiet every planned packet must have left. WQEs fetched but not reached are read again
// by the next turn (the read address check sees it).
#include <algorithm>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "Vsrnic_wqe_fetch.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

// Cycles a QP_MODIFY may wait: the context RAMs' reset sweep (one entry per cycle) plus slack.
constexpr int kCmdWait = BENCH_NUM_QPS + 20;

constexpr int kQps = BENCH_NUM_QPS;


constexpr uint8_t kWrite = 0, kWriteImm = 1, kSend = 2, kSendImm = 3, kRead = 4;
constexpr uint32_t kPsnMask = 0xFFFFFF;

struct Wqe {
  uint8_t op, flags;
  uint32_t imm, len, lkey, rkey;
  uint64_t wr_id, laddr, raddr;
};
struct Job {
  uint8_t opcode;
  uint32_t psn, len, npk;
  uint64_t pay_addr, pa;
  bool ackreq, se, reth, imm, read, wqe_end;
  const Wqe* w;
};
struct Qp {
  uint64_t base = 0;
  int log_sq = 0, mtu = 1;
  bool rts = true;
  uint32_t pd = 0;
  // reference send state and producer index (RAM contents)
  uint16_t ci = 0, pi = 0;
  uint32_t off = 0, psn = 0, gen_psn = 0;
  std::deque<Wqe> wqes;  // posted, index ci_base + i
  uint16_t ci_base = 0;  // index of wqes.front()
  uint16_t posted = 0, freed = 0;
  std::deque<Job> jobs;  // expected, in order
  uint64_t planned = 0, emitted = 0;
  // bench scheduler
  bool queued = false, busy = false, pending = false, exp_more = false;
  uint16_t pi_seen = 0;
};

uint64_t translate(uint32_t key, uint64_t va) { return va + uint64_t(key) * 4096; }

class WqeFetchBench : public ::testing::Test {
 public:
  WqeFetchBench() : rng(test_seed()), dut(rng.next()), qps(kQps) {}

  // ------------------------------------------------------------ setup
  void reset() {
    dut->s_valid = dut->done_ready = dut->qp_cmd_valid = dut->db_valid = 0;
    dut->ar_ready = dut->r_valid = dut->mr_rsp = dut->rdc_ready = dut->job_ready = 0;
    dut->lerr_ready = 1;
    dut->stop_valid = 0;  // no stop requests in this bench
    dut->sched_burst = burst;
    dut->sched_wqes = wqes_per_turn;
    dut.reset();
  }

  void configure(uint32_t q, int mtu, int log_sq, bool rts) {
    Qp& s = qps[q];
    s = Qp{};
    s.mtu = mtu;
    s.log_sq = log_sq;
    s.rts = rts;
    s.base = (rng.next() & 0x0000FFFFFFFFF000ull) + (rng.below(64) << 6);  // any 64-byte slot of a page
    s.pd = rng.u32();
    s.psn = s.gen_psn = rng.percent(40) ? kPsnMask - uint32_t(rng.below(50)) : rng.u32() & kPsnMask;
    for (size_t i = 0; i < 20; ++i) set_bits(dut->qp_cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, rng.next());
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->qp_cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
    put(kCQpn, q);
    put(kCState, rts ? 3 : 1);
    put(kCMtu, uint64_t(mtu));
    put(kCLogSq, uint64_t(log_sq));
    put(kCPd, s.pd);
    put(kCSqPsn, s.psn);
    put(kCSqBase, s.base);
    put(kCInitIdx, 1);
    put(kCInitSqPsn, 1);
    dut->qp_cmd_valid = 1;
    int i = 0;
    for (; i < kCmdWait; ++i) {  // the context RAMs clear themselves after reset
      dut.eval();
      const bool rdy = dut->qp_cmd_ready;
      dut.tick();
      if (rdy) break;
    }
    dut->qp_cmd_valid = 0;
    ASSERT_LT(i, kCmdWait) << "QP_MODIFY not taken";
    if (std::find(hot.begin(), hot.end(), q) == hot.end()) hot.push_back(q);
  }

  uint32_t mtu_b(const Qp& s) const { return 128u << s.mtu; }

  // Posts a random WQE (if the ring has room) and appends its packets to the expected jobs.
  bool post(uint32_t q, unsigned p_big) {
    Qp& s = qps[q];
    const uint32_t size = 1u << s.log_sq;
    if (uint16_t(s.posted - s.freed) >= size) return false;
    Wqe w{};
    w.op = uint8_t(rng.below(5));
    w.flags = rng.u8();
    w.imm = rng.u32();
    const uint32_t m = mtu_b(s);
    switch (rng.below(6)) {
      case 0: w.len = rng.percent(50) ? 0 : uint32_t(rng.range(1, 63)); break;
      case 1: w.len = m * uint32_t(rng.range(1, 3)); break;
      case 2: w.len = uint32_t(rng.range(1, m)); break;
      default: w.len = uint32_t(rng.range(0, rng.percent(p_big) ? 3 * m : m)); break;
    }
    w.lkey = rng.u32() & 0xFFFFF;
    w.rkey = rng.u32();
    w.wr_id = rng.next();
    w.laddr = rng.next() >> 8;
    w.raddr = rng.next();
    s.wqes.push_back(w);
    const Wqe* wp = &s.wqes.back();
    const uint64_t pa = translate(w.lkey, w.laddr);
    const uint32_t np = w.len == 0 ? 1 : (w.len + m - 1) / m;
    if (w.op == kRead) {
      s.jobs.push_back({0x0C, s.gen_psn, 0, np, pa, pa, true, false, true, false, true, true, wp});
      s.gen_psn = (s.gen_psn + np) & kPsnMask;
    } else {
      const bool send = w.op == kSend || w.op == kSendImm, imm = w.op == kSendImm || w.op == kWriteImm;
      for (uint32_t i = 0; i < np; ++i) {
        const bool first = i == 0, last = i == np - 1;
        uint8_t op;
        if (send) op = first && last ? (imm ? 0x05 : 0x04) : first ? 0x00 : last ? (imm ? 0x03 : 0x02) : 0x01;
        else op = first && last ? (imm ? 0x0B : 0x0A) : first ? 0x06 : last ? (imm ? 0x09 : 0x08) : 0x07;
        const uint32_t len = w.len == 0 ? 0 : std::min(m, w.len - i * m);
        Job j{op, s.gen_psn, len, 1, pa + uint64_t(i) * m, pa, last || (s.gen_psn & 0x3F) == 0x3F,
              last && (w.flags & 4), !send && first, imm && last, false, last, wp};
        s.jobs.push_back(j);
        s.gen_psn = (s.gen_psn + 1) & kPsnMask;
      }
    }
    // host memory: the ring slot
    ++s.posted;
    return true;
  }

  const Wqe& wqe_at(const Qp& s, uint16_t idx) const { return s.wqes[uint16_t(idx - s.ci_base)]; }

  // ------------------------------------------------------------ the turn reference
  struct Turn {
    uint32_t q;
    uint16_t ci0;  // first WQE read
    bool work;
    uint64_t addr;
    int n;
  };
  // Plans a turn of q from the reference state (pi as read at turn start).
  Turn plan(uint32_t q) {
    Qp& s = qps[q];
    Turn t{q, s.ci, false, 0, 0};
    const uint16_t avail = uint16_t(s.pi - s.ci);
    if (!s.rts || avail == 0) {
      s.exp_more = false;
      ++idle_turns;
      return t;
    }
    const uint16_t size = uint16_t(1u << s.log_sq);
    const uint16_t slot = uint16_t(s.ci & (size - 1));
    t.addr = s.base + (uint64_t(slot) << 6);
    int n = std::min<int>(avail, wqes_per_turn);
    n = std::min<int>(n, size - slot);
    n = std::min<int>(n, 64 - int((t.addr >> 6) & 63));
    t.work = true;
    t.n = n;
    const uint32_t m = mtu_b(s);
    uint32_t budget = burst;
    int started = 0;
    uint64_t pk = 0;
    uint64_t bytes = 0;
    for (int k = 0; k < n; ++k) {
      const Wqe& w = wqe_at(s, s.ci);
      ++started;
      const bool rd = w.op == kRead;
      const uint32_t remain = w.len - s.off;
      const uint32_t bud_pk = (budget + m - 1) / m * m;
      const uint32_t seg = rd ? w.len : std::min(remain, bud_pk);
      const bool done = rd || seg == remain;
      const uint32_t cost = (rd || seg < 64) ? 64 : seg;
      const bool out = cost >= budget;
      const uint32_t np = seg == 0 ? 1 : (seg + m - 1) / m;
      pk += rd ? 1 : np;
      bytes += rd ? 0 : seg;
      s.psn = (s.psn + np) & kPsnMask;
      budget = out ? 0 : budget - cost;
      if (done) {
        ++s.ci;
        s.off = 0;
      } else {
        s.off += seg;
      }
      if (!done || out) break;
    }
    EXPECT_LE(started, int(wqes_per_turn));
    EXPECT_LE(bytes, uint64_t(burst) + m);
    s.planned += pk;
    s.exp_more = s.ci != s.pi;
    ++work_turns;
    return t;
  }

  // ------------------------------------------------------------ per cycle
  struct Knobs {
    unsigned post = 20, hand = 60, done = 80, ar = 70, lat = 20, rdc = 80, job = 80;
  };

  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    // host: posts WQEs and rings the doorbell of one QP
    bool db = false;
    uint32_t db_q = 0;
    if (!hot.empty() && rng.percent(k.post)) {
      db_q = hot[rng.below(hot.size())];
      int n = int(rng.range(1, 4));
      bool any = false;
      while (n-- > 0 && post(db_q, big)) any = true;
      db = any || rng.percent(10);  // sometimes a doorbell with nothing new
    }
    dut->db_valid = db;
    dut->db_qpn = db_q;
    dut->db_pi = qps[db_q].posted;
    // scheduler
    if (!handing && !ready_q.empty() && rng.percent(k.hand)) {
      handing = true;
      hand_q = ready_q.front();
    }
    dut->s_valid = handing;
    dut->s_qpn = hand_q;
    dut->done_ready = rng.percent(k.done);
    // AXI read slave
    dut->ar_ready = rng.percent(k.ar);
    const bool r = !rbeats.empty() && rbeats.front().at <= c;
    dut->r_valid = r;
    if (r)
      for (int w = 0; w < 16; ++w) dut->r_data[size_t(w)] = rbeats.front().data[w];
    // MR table: answers two cycles after the request
    dut->mr_rsp = mr_pipe[1].valid;
    dut->mr_ok = 1;
    dut->mr_pa = mr_pipe[1].pa;
    dut->rdc_ready = rng.percent(k.rdc);
    dut->job_ready = rng.percent(k.job);
    dut.eval();

    ASSERT_FALSE(dut->bad_wqe) << "cycle " << c;
    ASSERT_FALSE(dut->lerr_valid) << "cycle " << c << ": local error without a bad WQE";
    // WQE reads
    if (dut->ar_valid && dut->ar_ready) {
      ASSERT_FALSE(ar_expect.empty()) << "cycle " << c << ": WQE read without a turn";
      const Turn t = ar_expect.front();
      ar_expect.pop_front();
      ASSERT_EQ(uint64_t(dut->ar_addr), t.addr) << "cycle " << c << " QP " << t.q << ": WQE read address";
      ASSERT_EQ(int(dut->ar_len) + 1, t.n) << "cycle " << c << " QP " << t.q << ": WQE read length";
      const Qp& s = qps[t.q];
      const uint64_t lat = rng.below(k.lat + 1);
      for (int i = 0; i < t.n; ++i) {
        Beat b;
        b.at = c + 1 + lat + uint64_t(i);
        const Wqe& w = wqe_at(s, uint16_t(t.ci0 + i));
        encode(w, b.data);
        rbeats.push_back(b);
      }
      ++reads;
    }
    if (r) rbeats.pop_front();
    // MR lookups
    Mr nm{};
    if (dut->mr_req) {
      nm.valid = true;
      nm.pa = translate(uint32_t(dut->mr_key), uint64_t(dut->mr_va));
      ++mr_reqs;
    }
    // jobs
    const bool fire = dut->job_valid && dut->job_ready;
    if (fire) take_job(c);
    if (HasFatalFailure()) return;
    if (dut->rdc_valid && dut->rdc_ready && !fire) ADD_FAILURE() << "cycle " << c << ": READ context without its job";
    // turn ends
    if (dut->done_valid && dut->done_ready) {
      const uint32_t q = dut->done_qpn;
      ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
      Qp& s = qps[q];
      ASSERT_TRUE(s.busy) << "cycle " << c << ": turn end for QP " << q << " without a turn";
      ASSERT_EQ(bool(dut->done_more), s.exp_more) << "cycle " << c << " QP " << q << ": turn-end report (ci "
                                                   << s.ci << ", pi at turn start " << s.pi_seen << ")";
      s.busy = false;
      if (s.exp_more || s.pending) enqueue(q);
      s.pending = false;
      ++turns_done;
    }
    // a turn handed out: the reference plans it with the producer index read now
    if (handing && dut->s_ready) {
      Qp& s = qps[hand_q];
      ASSERT_FALSE(s.busy);
      ready_q.pop_front();
      s.queued = false;
      s.busy = true;
      s.pi_seen = s.pi;
      const Turn t = plan(hand_q);
      if (t.work) ar_expect.push_back(t);
      handing = false;
    }
    if (db) {
      Qp& s = qps[db_q];
      s.pi = s.posted;
      if (s.busy) s.pending = true;
      else enqueue(db_q);
    }
    mr_pipe[1] = mr_pipe[0];
    mr_pipe[0] = nm;
    dut.tick();
  }

  void enqueue(uint32_t q) {
    Qp& s = qps[q];
    if (s.queued || s.busy) return;
    s.queued = true;
    ready_q.push_back(q);
  }

  void take_job(uint64_t c) {
    const auto& j = dut->job;
    const uint32_t q = uint32_t(kJob.get(j, kQpn));
    ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
    Qp& s = qps[q];
    ASSERT_FALSE(s.jobs.empty()) << "cycle " << c << ": job for QP " << q << " with nothing posted";
    ASSERT_LT(s.emitted, s.planned) << "cycle " << c << " QP " << q << ": job beyond what the started turns plan";
    const Job& e = s.jobs.front();
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) + " job " +
                           std::to_string(s.emitted);
    ASSERT_EQ(kJob.get(j, kOpcode), e.opcode) << at;
    EXPECT_EQ(kJob.get(j, kPsn), e.psn) << at;
    EXPECT_EQ(kJob.get(j, kAckreq), uint64_t(e.ackreq)) << at;
    EXPECT_EQ(kJob.get(j, kSe), uint64_t(e.se)) << at;
    if (e.reth) {
      EXPECT_EQ(kJob.get(j, kRethVa), e.w->raddr) << at;
      EXPECT_EQ(kJob.get(j, kRethRkey), e.w->rkey) << at;
      EXPECT_EQ(kJob.get(j, kRethLen), e.w->len) << at;
    }
    if (e.imm) {
      EXPECT_EQ(kJob.get(j, kImm), e.w->imm) << at;
    }
    EXPECT_EQ(kJob.get(j, kPayLen), uint64_t(e.len)) << at;
    if (!e.read) {
      EXPECT_EQ(kJob.get(j, kPayAddr), e.pay_addr) << at;
    }
    if (e.read) {
      EXPECT_TRUE(dut->rdc_valid) << at << ": READ request without its context insert";
      EXPECT_EQ(uint32_t(dut->rdc_first), e.psn) << at;
      EXPECT_EQ(uint32_t(dut->rdc_last), (e.psn + e.npk - 1) & kPsnMask) << at;
      EXPECT_EQ(uint64_t(dut->rdc_pa), e.pa) << at;
      EXPECT_EQ(int(dut->rdc_mtu), qps[q].mtu) << at << ": READ context path MTU";
      const uint32_t m = 128u << qps[q].mtu;
      EXPECT_EQ(uint32_t(dut->rdc_last_len), e.w->len - (e.npk - 1) * m) << at << ": READ last response length";
      ++read_jobs;
    }
    ++s.emitted;
    ++jobs;
    if (e.wqe_end) {
      ++s.freed;  // its ring slot may be reused
      s.wqes.pop_front();
      ++s.ci_base;
    }
    s.jobs.pop_front();
  }

  static void encode(const Wqe& w, uint32_t* d) {
    encode_sq_wqe(w.op, w.flags, w.imm, w.wr_id, w.laddr, w.len, w.lkey, w.raddr, w.rkey, d);
  }

  // Runs idle until every turn has ended and every planned job has left.
  void settle(int max_cycles = 20000) {
    if (HasFatalFailure()) return;
    Knobs k;
    k.post = 0;
    k.done = k.ar = k.rdc = k.job = 100;
    k.hand = 100;
    for (int i = 0; i < max_cycles && !HasFatalFailure(); ++i) {
      cycle(k);
      bool quiet = ready_q.empty() && !handing;
      for (uint32_t q : hot) quiet = quiet && !qps[q].busy && qps[q].emitted == qps[q].planned;
      if (quiet) break;
    }
    for (uint32_t q : hot) {
      const Qp& s = qps[q];
      EXPECT_FALSE(s.busy) << "QP " << q << " turn never ended";
      EXPECT_EQ(s.emitted, s.planned) << "QP " << q << ": planned packets not sent";
      if (s.rts) {
        EXPECT_TRUE(s.jobs.empty()) << "QP " << q << ": " << s.jobs.size() << " packets never sent";
        EXPECT_EQ(s.ci, s.pi);
      }
    }
  }

  struct Beat {
    uint64_t at;
    uint32_t data[16];
  };
  struct Mr {
    bool valid;
    uint64_t pa;
  };

  Rng rng;
  Dut<Vsrnic_wqe_fetch> dut;
  std::vector<Qp> qps;
  std::vector<uint32_t> hot;
  std::deque<uint32_t> ready_q;
  std::deque<Turn> ar_expect;
  std::deque<Beat> rbeats;
  Mr mr_pipe[2] = {};
  bool handing = false;
  uint32_t hand_q = 0;
  uint32_t burst = 65536;
  uint8_t wqes_per_turn = 8;
  unsigned big = 30;
  uint64_t reads = 0, jobs = 0, read_jobs = 0, mr_reqs = 0, turns_done = 0, idle_turns = 0, work_turns = 0;
};

TEST_F(WqeFetchBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  burst = uint32_t(rng.range(256, 6000));
  wqes_per_turn = uint8_t(rng.range(2, 8));
  reset();
  const int nq = std::min(kQps, 5);
  for (int i = 0; i < nq && !HasFatalFailure(); ++i)
    configure(uint32_t(rng.below(kQps)), int(rng.range(1, 3)), int(rng.range(1, 5)), i != 0 || rng.percent(50));
  for (int phase = 0; phase < 60 && !HasFatalFailure(); ++phase) {
    Knobs k;
    k.post = unsigned(rng.range(2, 40));
    k.hand = unsigned(rng.range(10, 100));
    k.done = unsigned(rng.range(20, 100));
    k.ar = unsigned(rng.range(20, 100));
    k.lat = unsigned(rng.range(0, 60));
    k.rdc = unsigned(rng.range(20, 100));
    k.job = unsigned(rng.range(20, 100));
    for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) cycle(k);
  }
  settle();
  EXPECT_GT(jobs, 15000u);
  EXPECT_GT(read_jobs, 100u);
  EXPECT_GT(work_turns, 500u);
  EXPECT_FALSE(dut.rtl_error());
}

// One packet's budget and one WQE per turn: every message is sent a packet per turn and
// the WQE is fetched again for each of them.
TEST_F(WqeFetchBench, TinyBudgetOneWqePerTurn) {
  SRNIC_BENCH_TRACE();
  burst = 1;
  wqes_per_turn = 1;
  reset();
  for (int i = 0; i < std::min(kQps, 3) && !HasFatalFailure(); ++i)
    configure(uint32_t(i * (kQps / 3)), int(rng.range(1, 2)), 3, true);
  Knobs k;
  k.post = 10;
  for (int i = 0; i < 15000 && !HasFatalFailure(); ++i) cycle(k);
  settle();
  EXPECT_GT(reads, jobs / 2);
  EXPECT_GT(jobs, 1000u);
}

// Default turn limits (64 KiB, 8 WQEs), MTU 4096, large SQs, many QPs: WQE reads stop at
// the ring end and at 4 KiB boundaries.
TEST_F(WqeFetchBench, DefaultLimitsManyQps) {
  SRNIC_BENCH_TRACE();
  burst = 65536;
  wqes_per_turn = 8;
  big = 60;
  reset();
  for (int i = 0; i < std::min(kQps, 12) && !HasFatalFailure(); ++i)
    configure(uint32_t(rng.below(kQps)), int(rng.range(3, 5)), int(rng.range(2, 7)), true);
  Knobs k;
  k.post = 40;
  k.hand = 90;
  k.lat = 40;
  for (int i = 0; i < 100000 && !HasFatalFailure(); ++i) cycle(k);
  settle(60000);
  EXPECT_GT(jobs, 20000u);
  EXPECT_FALSE(dut.rtl_error());
}

}  // namespace
}  // namespace srnic::verif::blocks
