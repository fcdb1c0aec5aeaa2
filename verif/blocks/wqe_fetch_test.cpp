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
// The bench also plays srnic_rd_ctx: each READ context insert is kept in a table until a
// random delay has passed, and the fence query ports (rdc_qa/qb_busy) answer from it. The
// reference applies the fence rule (a fenced WQE not yet started waits while a READ of its
// QP is planned or in the table: the turn stops in front of it, later turns end without a
// WQE read while the READs are outstanding) and every fenced WQE's first packet must leave
// after all READs posted before it on its QP were freed. Host stops (hstop) must report
// CEV_HERR (next PSN, producer index) and end the QP's work; later turns of the stopped QP
// only report newly posted WQEs for flushing (CEV_LERR).
#include <algorithm>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_map>
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

constexpr uint8_t kFence = 1;  // WQE_FLAG_FENCE
constexpr uint8_t kCevLerr = 6, kCevHerr = 7, kWcFlushErr = 5;

struct Wqe {
  uint8_t op, flags;
  uint32_t imm, len, lkey, rkey;
  uint64_t wr_id, laddr, raddr;
  uint32_t reads_before = 0;  // READs posted before it on its QP
};
struct Job {
  uint8_t opcode;
  uint32_t psn, len, npk;
  uint64_t pay_addr, pa;
  bool ackreq, se, reth, imm, read, wqe_end;
  const Wqe* w;
  bool first = false;  // the WQE's first packet
};
struct Ev {
  uint8_t kind;
  uint32_t q, psn, psn2;
};
// an entry of the bench's READ context table (srnic_rd_ctx)
struct RdEntry {
  uint32_t q;
  uint64_t free_at;
  bool real;  // inserted by a READ job (not injected by a directed test)
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
  // fence: READs planned or in the table (incl. injected entries), frees allowed while a
  // turn is in flight (the outstanding count must not reach 0 under a turn)
  int rd_busy = 0, free_ok = 0;
  uint32_t reads_posted = 0, reads_freed = 0;
  bool fwait = false;
  uint64_t reads = 0;  // WQE reads of the QP
  // stopped (host stop): no more work, new WQEs reported for flushing
  bool err = false;
  uint16_t fl_pi = 0;
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
    dut->hstop_valid = 0;
    dut->rdc_qa_busy = dut->rdc_qb_busy = 0;
    dut->sched_burst = burst;
    dut->sched_wqes = wqes_per_turn;
    dut.reset();
  }

  void configure(uint32_t q, int mtu, int log_sq, bool rts) {
    Qp& s = qps[q];
    s = Qp{};
    // a QP reset frees the QP's READ contexts (srnic_rd_ctx flush)
    rd_table.erase(std::remove_if(rd_table.begin(), rd_table.end(), [&](const RdEntry& e) { return e.q == q; }),
                   rd_table.end());
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
  bool post(uint32_t q, unsigned p_big, int op = -1, int flags = -1, int64_t len = -1) {
    Qp& s = qps[q];
    const uint32_t size = 1u << s.log_sq;
    if (uint16_t(s.posted - s.freed) >= size) return false;
    Wqe w{};
    w.op = op >= 0 ? uint8_t(op) : uint8_t(rng.below(5));
    w.flags = flags >= 0 ? uint8_t(flags) : uint8_t((rng.u8() & ~kFence) | (rng.percent(fence_pct) ? kFence : 0));
    w.imm = rng.u32();
    w.reads_before = s.reads_posted;
    if (w.op == kRead) ++s.reads_posted;
    const uint32_t m = mtu_b(s);
    if (len >= 0) w.len = uint32_t(len);
    else switch (rng.below(6)) {
      case 0: w.len = rng.percent(50) ? 0 : uint32_t(rng.range(1, 63)); break;
      case 1: w.len = m * uint32_t(rng.range(1, 3)); break;
      case 2: w.len = uint32_t(rng.range(1, m)); break;
      default: w.len = uint32_t(rng.range(0, rng.percent(p_big) ? 3 * m : m)); break;
    }
    w.lkey = rng.u32() & 0xFFFFF;
    key_ops[w.lkey] |= w.op == kRead ? 1 : 2;  // which kinds of WQE use this local key
    w.rkey = rng.u32();
    w.wr_id = rng.next();
    w.laddr = rng.next() >> 8;
    w.raddr = rng.next();
    s.wqes.push_back(w);
    const Wqe* wp = &s.wqes.back();
    const uint64_t pa = translate(w.lkey, w.laddr);
    const uint32_t np = w.len == 0 ? 1 : (w.len + m - 1) / m;
    if (w.op == kRead) {
      s.jobs.push_back({0x0C, s.gen_psn, 0, np, pa, pa, true, false, true, false, true, true, wp, true});
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
              last && (w.flags & 4), !send && first, imm && last, false, last, wp, first};
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
    s.free_ok = s.rd_busy > 0 ? s.rd_busy - 1 : 0;
    if (s.err) {
      // stopped: no WQE read; WQEs posted since the last report are reported for flushing
      s.exp_more = false;
      if (s.pi != s.fl_pi) {
        ev_expect.push_back({kCevLerr, q, s.psn, s.pi});
        s.fl_pi = s.pi;
      }
      ++idle_turns;
      return t;
    }
    if (!s.rts || avail == 0) {
      s.exp_more = false;
      ++idle_turns;
      return t;
    }
    if (s.fwait && s.rd_busy > 0) {
      // waiting at a fenced WQE: the turn ends without a WQE read, the QP is requeued
      s.exp_more = true;
      ++fence_idle;
      return t;
    }
    s.fwait = false;
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
      if ((w.flags & kFence) && s.off == 0 && s.rd_busy > 0) {
        s.fwait = true;  // stop in front of it
        ++fence_stops;
        break;
      }
      if ((w.flags & kFence) && s.off != 0 && s.rd_busy > 0) ++fence_ignored;
      ++started;
      const bool rd = w.op == kRead;
      if (rd) ++s.rd_busy;
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

  // The bench's READ context table: frees due entries (not below one outstanding READ of a
  // QP whose turn is in flight, so the reference knows what the turn sees).
  void free_reads(uint64_t c) {
    for (size_t i = 0; i < rd_table.size();) {
      RdEntry& e = rd_table[i];
      Qp& s = qps[e.q];
      if (e.free_at <= c && (!s.busy || s.free_ok > 0)) {
        if (s.busy) --s.free_ok;
        --s.rd_busy;
        if (e.real) ++s.reads_freed;
        ++rd_frees;
        last_free_cycle = c;
        rd_table.erase(rd_table.begin() + long(i));
      } else {
        ++i;
      }
    }
  }
  bool rd_has(uint32_t q) const {
    for (const RdEntry& e : rd_table)
      if (e.q == q) return true;
    return false;
  }
  // A READ of q outstanding for `hold` cycles that no job inserted (srnic_rd_ctx busy for q).
  void inject_read(uint32_t q, uint64_t hold) {
    rd_table.push_back({q, dut.cycle() + hold, false});
    ++qps[q].rd_busy;
  }

  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    free_reads(c);
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
    if (ring >= 0) {
      db = true;
      db_q = uint32_t(ring);
      ring = -1;
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
    dut->hstop_valid = !hstop_q.empty();
    dut->hstop_qpn = hstop_q.empty() ? 0 : hstop_q.front();
    dut.eval();
    // fence queries (combinational in srnic_rd_ctx; the query QPNs are registers)
    dut->rdc_qa_busy = rd_has(dut->rdc_qa_qpn);
    dut->rdc_qb_busy = rd_has(dut->rdc_qb_qpn);
    dut.eval();

    ASSERT_FALSE(dut->bad_wqe) << "cycle " << c;
    if (dut->lerr_valid && dut->lerr_ready) {
      ASSERT_FALSE(ev_expect.empty()) << "cycle " << c << ": completion event (kind "
                                      << kCompEv.get(dut->lerr, kCeKind) << ") without a bad WQE or stop";
      const Ev e = ev_expect.front();
      ev_expect.pop_front();
      const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(e.q) + ": event";
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeKind), e.kind) << at;
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeQpn), e.q) << at;
      EXPECT_EQ(kCompEv.get(dut->lerr, kCePsn), e.psn) << at << " PSN";
      EXPECT_EQ(kCompEv.get(dut->lerr, kCePsn2), e.psn2) << at << " producer index";
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeStatus), kWcFlushErr) << at << " status";
      ++events;
    }
    // WQE reads
    if (dut->ar_valid && dut->ar_ready) {
      ASSERT_FALSE(ar_expect.empty()) << "cycle " << c << ": WQE read without a turn";
      const Turn t = ar_expect.front();
      ar_expect.pop_front();
      ASSERT_EQ(uint64_t(dut->ar_addr), t.addr) << "cycle " << c << " QP " << t.q << ": WQE read address";
      ASSERT_EQ(int(dut->ar_len) + 1, t.n) << "cycle " << c << " QP " << t.q << ": WQE read length";
      Qp& s = qps[t.q];
      ++s.reads;
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
      // the local buffer of a READ is written by the NIC: it needs LOCAL_WRITE; the others
      // are only read (keys shared by both kinds of WQE are not checked)
      const auto ko = key_ops.find(uint32_t(dut->mr_key));
      if (ko != key_ops.end() && ko->second != 3) {
        EXPECT_EQ(unsigned(dut->mr_access), ko->second == 1 ? 1u : 0u)
            << "cycle " << c << ": rights asked for local key 0x" << std::hex << unsigned(dut->mr_key) << " of a "
            << (ko->second == 1 ? "READ" : "SEND/WRITE");
        ++access_checks;
      }
      nm.valid = true;
      nm.pa = translate(uint32_t(dut->mr_key), uint64_t(dut->mr_va));
      ++mr_reqs;
    }
    // jobs
    const bool fire = dut->job_valid && dut->job_ready;
    if (fire) take_job(c);
    if (HasFatalFailure()) return;
    if (dut->rdc_valid && dut->rdc_ready && !fire) ADD_FAILURE() << "cycle " << c << ": READ context without its job";
    if (dut->rdc_valid && dut->rdc_ready)
      rd_table.push_back({uint32_t(kJob.get(dut->job, kQpn)), c + rng.range(1, rd_hold), true});
    // host stop: the reference stops the QP with the state as of now
    if (dut->hstop_valid && dut->hstop_ready) {
      const uint32_t q = hstop_q.front();
      hstop_q.pop_front();
      Qp& s = qps[q];
      ev_expect.push_back({kCevHerr, q, s.psn, s.pi});
      s.err = true;
      s.fl_pi = s.pi;
      ++hstops;
    }
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
    if (e.first && (e.w->flags & kFence)) {
      // IBA fence: every READ posted before it has completed (its context freed)
      EXPECT_GE(s.reads_freed, e.w->reads_before) << at << ": fenced WQE started with READs outstanding";
      ++fenced_started;
      last_fenced_cycle = c;
    }
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
      bool quiet = ready_q.empty() && !handing && hstop_q.empty();
      for (uint32_t q : hot) quiet = quiet && !qps[q].busy && qps[q].emitted == qps[q].planned;
      if (quiet) break;
    }
    for (uint32_t q : hot) {
      const Qp& s = qps[q];
      EXPECT_FALSE(s.busy) << "QP " << q << " turn never ended";
      EXPECT_EQ(s.emitted, s.planned) << "QP " << q << ": planned packets not sent";
      if (s.rts && !s.err) {
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
  std::deque<Ev> ev_expect;
  std::deque<uint32_t> hstop_q;
  std::vector<RdEntry> rd_table;
  unsigned fence_pct = 25;
  int ring = -1;  // a directed doorbell for this QP in the next cycle
  uint64_t rd_hold = 200;  // READ contexts live 1..rd_hold cycles
  uint64_t fence_stops = 0, fence_idle = 0, fence_ignored = 0, fenced_started = 0, rd_frees = 0, events = 0, hstops = 0;
  uint64_t last_free_cycle = 0, last_fenced_cycle = 0;
  Mr mr_pipe[2] = {};
  std::unordered_map<uint32_t, unsigned> key_ops;  // local key -> 1 READ, 2 other, 3 both
  uint64_t access_checks = 0;
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
  fence_pct = unsigned(rng.range(5, 40));
  rd_hold = rng.range(5, 300);
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
  EXPECT_GT(fence_stops, 10u);
  EXPECT_GT(fence_idle, 10u);
  EXPECT_GT(fenced_started, 100u);
  EXPECT_GT(access_checks, 1000u);
  EXPECT_FALSE(dut.rtl_error());
}

// Fence: a fenced WRITE behind a READ of its QP is not started until the READ's context is
// freed; meanwhile the QP is requeued and its turns end without a WQE read. Then it goes.
TEST_F(WqeFetchBench, FenceWaitsForReadOfSameQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = uint32_t(rng.below(kQps));
  configure(q, 1, 4, true);
  rd_hold = 1;  // freed at once unless held below
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = 100;
  for (int rep = 0; rep < 4 && !HasFatalFailure(); ++rep) {
    const uint64_t hold = 300 + rng.below(200);
    ASSERT_TRUE(post(q, 0, kRead, 0, 2000));
    if (rep & 1) ASSERT_TRUE(post(q, 0, kWrite, 0, 100));   // an unfenced WQE between
    ASSERT_TRUE(post(q, 0, rep & 2 ? kSend : kWrite, kFence, 300));
    // ring the doorbell; the READ's context is held `hold` cycles
    const uint64_t idle0 = fence_idle, stops0 = fence_stops;
    ring = int(q);
    uint64_t insert_cycle = 0, fenced_cycle = 0;
    const uint64_t started0 = fenced_started;
    for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) {
      const size_t n0 = rd_table.size();
      cycle(k);
      if (rd_table.size() > n0) {
        insert_cycle = dut.cycle() - 1;
        rd_table.back().free_at = insert_cycle + hold;
      }
      if (fenced_started > started0 && !fenced_cycle) fenced_cycle = last_fenced_cycle;
      if (fenced_cycle && qps[q].jobs.empty()) break;
    }
    ASSERT_NE(insert_cycle, 0u) << "the READ never left";
    ASSERT_NE(fenced_cycle, 0u) << "the fenced WQE never started";
    EXPECT_GE(last_free_cycle, insert_cycle + hold);
    EXPECT_GT(fenced_cycle, last_free_cycle) << "the fenced WQE started before the READ completed";
    EXPECT_LE(fenced_cycle, last_free_cycle + 40) << "the fenced WQE started late after the READ completed";
    EXPECT_EQ(fence_stops, stops0 + 1);
    EXPECT_GT(fence_idle, idle0 + 3) << "the waiting QP was not requeued";
    settle();
  }
  EXPECT_FALSE(dut.rtl_error());
}

// A READ of another QP does not hold a fenced WQE back.
TEST_F(WqeFetchBench, FenceIgnoresReadOfOtherQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t a = 1 % kQps, b = 2 % kQps;
  configure(a, 2, 3, true);
  configure(b, 2, 3, true);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = 100;
  rd_hold = 5000;
  ASSERT_TRUE(post(a, 0, kRead, 0, 4096));
  ring = int(a);
  for (int i = 0; i < 200 && !HasFatalFailure() && rd_table.empty(); ++i) cycle(k);
  ASSERT_EQ(rd_table.size(), 1u) << "QP a's READ never left";
  rd_table[0].free_at = ~uint64_t(0);  // held until released below
  ASSERT_TRUE(post(b, 0, kWrite, kFence, 1000));
  ring = int(b);
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_TRUE(qps[b].jobs.empty()) << "QP b's fenced WRITE waited for QP a's READ";
  EXPECT_EQ(fenced_started, 1u);
  EXPECT_EQ(rd_table.size(), 1u);
  EXPECT_EQ(fence_stops, 0u);
  rd_table[0].free_at = 0;
  settle();
}

// A fence on a WQE already in progress has no effect; the next fenced WQE waits.
TEST_F(WqeFetchBench, FenceOnWqeInProgressIgnored) {
  SRNIC_BENCH_TRACE();
  burst = 1;  // one packet per turn
  wqes_per_turn = 1;
  reset();
  const uint32_t q = 3 % kQps;
  configure(q, 1, 3, true);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = 100;
  ASSERT_TRUE(post(q, 0, kWrite, kFence, 8 * 256));   // 8 packets of 256 bytes
  ASSERT_TRUE(post(q, 0, kSend, kFence, 100));
  ring = int(q);
  // after the first packet, srnic_rd_ctx holds a READ of q (not inserted by this engine)
  for (int i = 0; i < 300 && !HasFatalFailure() && qps[q].emitted == 0; ++i) cycle(k);
  ASSERT_EQ(qps[q].emitted, 1u);
  inject_read(q, 1500);
  for (int i = 0; i < 1000 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(qps[q].emitted, 8u) << "the WRITE in progress stopped at its fence";
  EXPECT_EQ(qps[q].jobs.size(), 1u) << "the fenced SEND did not wait";
  EXPECT_GT(fence_ignored, 3u);
  EXPECT_EQ(fence_stops, 1u);
  settle();
  EXPECT_TRUE(qps[q].jobs.empty());
  EXPECT_GE(last_fenced_cycle, last_free_cycle);
}

// Host stop: a CEV_HERR event with the next PSN and the producer index; no more WQE reads
// or jobs for the QP; WQEs posted later are reported for flushing (CEV_LERR).
TEST_F(WqeFetchBench, HostStopReportsHerr) {
  SRNIC_BENCH_TRACE();
  burst = uint32_t(rng.range(256, 3000));
  wqes_per_turn = uint8_t(rng.range(1, 8));
  reset();
  for (int rep = 0; rep < 6 && !HasFatalFailure(); ++rep) {
    const int nq = std::min(kQps, 3);
    std::vector<uint32_t> qs;
    for (int i = 0; i < nq && !HasFatalFailure(); ++i) {
      const uint32_t q = uint32_t((rep * nq + i) % kQps);
      configure(q, int(rng.range(1, 3)), int(rng.range(2, 5)), true);
      qs.push_back(q);
    }
    Knobs k;
    k.post = 30;
    const uint32_t victim = qs[rng.below(qs.size())];
    const int stop_at = int(rng.range(50, 1500));
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) {
      if (i == stop_at) hstop_q.push_back(victim);
      cycle(k);
    }
    ASSERT_EQ(hstops, uint64_t(rep + 1));
    const uint64_t reads0 = qps[victim].reads;
    const uint64_t jobs_planned = qps[victim].planned;
    // more WQEs on the stopped QP: reported for flushing, never read nor sent
    for (int i = 0; i < 3; ++i) post(victim, 0);
    ring = int(victim);
    k.post = 0;
    cycle(k);
    settle();
    EXPECT_EQ(qps[victim].planned, jobs_planned) << "work planned after the host stop";
    EXPECT_EQ(qps[victim].reads, reads0) << "WQE read after the host stop";
    EXPECT_TRUE(ev_expect.empty()) << ev_expect.size() << " events missing";
    EXPECT_TRUE(qps[victim].err);
  }
  EXPECT_GE(events, 6u);
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
