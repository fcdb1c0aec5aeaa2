// srnic_rx_rqfetch bench: random parser records (all opcodes, dropped ones, QPNs beyond
// NUM_QPS), RQ doorbells, QP_MODIFY commands and engine resyncs, against a model of each
// QP's RQ base/size, producer index and fetch index. Records must leave in order and
// unchanged except rq_fetched/rq_idx; only SEND FIRST/ONLY(+IMM) and WRITE LAST/ONLY with
// IMM that are not dropped read a WQE, and only when the fetch index differs from the
// producer index; the read goes to rq_base + (index mod ring) * 64 and advances the index.
// A C++ AXI read slave answers in order with random latency; the WQEs must reach the WQE
// FIFO in record order with the data of their address, and never more than WDEPTH reads
// may be outstanding or buffered. A QP_MODIFY with init_idx zeroes both indices; a resync
// sets the fetch index when it is taken (resync_valid && resync_ready).
// Flush: a resync marked err puts its QP in error: its records fetch nothing from then on,
// and every WQE from the handed-over index to the producer index (also WQEs posted later)
// must come out once, in index order, as a flush record (rq_flush, rq_fetched, rq_idx) with
// its WQE read at its ring address.
#include <deque>
#include <vector>

#include "Vsrnic_rx_rqfetch.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
constexpr int kWDepth = BENCH_WDEPTH;

// rx_meta_t (kRxMeta) and qp_cmd_t (kQpCmd): pkg_layouts.hpp. A record holds the fields the
// parser fills: all but rq_flush, the last.
constexpr int kMetaN = kRmRqFlush;

bool consumes(uint64_t op) { return op == 0x00 || op == 0x04 || op == 0x05 || op == 0x09 || op == 0x0B; }

// 64-byte host memory content at an address: a fixed hash, so any read can be checked.
uint32_t mem_word(uint64_t addr, int w) {
  uint64_t s = addr * 0x9E3779B97F4A7C15ull + uint64_t(w);
  return uint32_t(splitmix64(s));
}

struct Rec {
  uint64_t f[kMetaN];
};
struct Qp {
  uint64_t base = 0;
  int log_rq = 0;
  uint16_t pi = 0, fci = 0;
  bool err = false;
  uint16_t fl_ar = 0, fl_out = 0;  // in error: next index whose flush read / flush record is due
  uint64_t addr(uint16_t i) const { return base + (uint64_t(i & uint16_t((1u << log_rq) - 1)) << 6); }
};
struct Pending {
  uint64_t addr;
  uint64_t at;  // cycle the R beat may come
};

class RqFetchBench : public ::testing::Test {
 public:
  RqFetchBench() : rng(test_seed()), dut(rng.next()), qps(kQps) {}

  void reset() {
    dut->qp_cmd_valid = dut->db_valid = dut->s_valid = dut->m_ready = dut->wqe_pop = 0;
    dut->resync_valid = dut->resync_err = dut->ar_ready = dut->r_valid = 0;
    dut.reset();
    for (int i = 0; i < kQps + 2; ++i) dut.tick();   // the per-QP flush bits clear after reset
    for (auto& q : qps) q = Qp{};  // the bench configures every QP it uses before traffic
    out.clear();
    out_addr.clear();
    ar_expect.clear();
    rq.clear();
    owed.clear();
    hold_rec = hold_cmd = hold_rs = false;
  }

  Rec random_rec() {
    Rec r;
    for (int i = 0; i < kMetaN; ++i) r.f[i] = rng.next() & ((kRxMeta.at(size_t(i)).width >= 64) ? ~0ull : ((1ull << kRxMeta.at(size_t(i)).width) - 1));
    r.f[kRmDrop] = rng.percent(10);
    static const uint8_t ops[] = {0x00, 0x04, 0x05, 0x09, 0x0B, 0x00, 0x04, 0x05, 0x09, 0x0B, 0x01, 0x02,
                                  0x03, 0x06, 0x07, 0x08, 0x0A, 0x0C, 0x0D, 0x10, 0x11, 0x15};
    r.f[kRmOpcode] = ops[rng.below(sizeof ops)];
    r.f[kRmDqpn] = rng.percent(3) ? kQps + rng.below(0x1000000 - kQps) : hot[rng.below(hot.size())];
    return r;
  }

  // Offers one record of QP q with opcode op (other fields random) from the next cycle.
  void offer_rec(uint32_t q, uint8_t op) {
    Rec r = random_rec();
    r.f[kRmDrop] = 0;
    r.f[kRmOpcode] = op;
    r.f[kRmDqpn] = q;
    cur_rec = r;
    hold_rec = true;
  }

  void put_rec(const Rec& r) {
    for (size_t i = 0; i < kMetaN; ++i) set_bits(dut->s_meta, kRxMeta.at(i).lsb, kRxMeta.at(i).width, r.f[i]);
    set_bits(dut->s_meta, kRxMeta.at(kRmRqFlush).lsb, 1, 0);  // the parser never sends flush records
  }

  void put_cmd(uint32_t qpn, uint64_t base, int log_rq, bool init) {
    for (size_t i = 0; i < kQpCmd.widths.size(); ++i) set_bits(dut->qp_cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, rng.next());
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->qp_cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
    put(kCQpn, qpn);
    put(kCRqBase, base);
    put(kCLogRq, uint64_t(log_rq));
    put(kCInitIdx, init);
  }

  struct Knobs {
    unsigned rec = 50, db = 20, cmd = 0, rs = 0, ar = 70, lat = 20, out = 70, pop = 70;
    unsigned rs_err = 0;      // percent of resyncs that hand a QP over in error
    bool rs_no_pop = false;   // the engine pops no WQE while it waits for its resync (as the RTL's)
    bool free_resync = true;  // resync raised at any time (else only while no record is in flight)
  };

  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    // --- inputs
    if (!hold_rec && rng.percent(k.rec)) {
      cur_rec = random_rec();
      hold_rec = true;
    }
    dut->s_valid = hold_rec;
    if (hold_rec) put_rec(cur_rec);
    bool db = rng.percent(k.db);
    uint32_t db_q = hot[rng.below(hot.size())];
    uint16_t db_pi = uint16_t(qps[db_q].pi + (rng.percent(80) ? 1 : rng.below(4)));
    // the host never posts more than a ring's worth beyond what was flushed
    if (qps[db_q].err && uint16_t(db_pi - qps[db_q].fl_out) > 64) db = false;
    if (force_db >= 0) {
      db = true;
      db_q = uint32_t(force_db);
      db_pi = force_pi;
      force_db = -1;
    }
    dut->db_valid = db;
    dut->db_qpn = db_q;
    dut->db_pi = db_pi;
    if (!hold_cmd && rng.percent(k.cmd)) {
      // often the QP of the record on offer: a command and a record may meet
      cmd_qpn = hold_rec && cur_rec.f[kRmDqpn] < uint64_t(kQps) && rng.percent(50) ? uint32_t(cur_rec.f[kRmDqpn])
                                                                                 : hot[rng.below(hot.size())];
      hold_cmd = true;
      cmd_base = rng.next() << 6;
      cmd_log = int(rng.below(7));
      cmd_init = rng.percent(60);
      put_cmd(cmd_qpn, cmd_base, cmd_log, cmd_init);
    }
    dut->qp_cmd_valid = hold_cmd;
    const bool quiet = ar_expect.empty() && c > last_accept + 4;
    if (!hold_rs && rng.percent(k.rs) && (k.free_resync || quiet)) {
      hold_rs = true;
      rs_qpn = hot[rng.below(hot.size())];
      rs_ci = uint16_t(qps[rs_qpn].fci - rng.below(3));
      rs_err = !qps[rs_qpn].err && rng.percent(k.rs_err);
      if (qps[rs_qpn].err) hold_rs = false;   // the engine hands a QP over once, then no resyncs
    }
    dut->resync_valid = hold_rs;
    dut->resync_err = hold_rs && rs_err;
    dut->resync_qpn = rs_qpn;
    dut->resync_ci = rs_ci;
    // --- AXI read slave: in order, one beat per read, random latency
    dut->ar_ready = rng.percent(k.ar);
    const bool r = !rq.empty() && rq.front().at <= c;
    dut->r_valid = r;
    if (r)
      for (int w = 0; w < 16; ++w) dut->r_data[size_t(w)] = mem_word(rq.front().addr, w);
    // --- engine
    dut->m_ready = rng.percent(k.out);
    dut->wqe_pop = 0;
    dut.eval();
    dut->wqe_pop = dut->wqe_valid && !owed.empty() && rng.percent(k.pop) &&  // the engine pops what has come
                   !(k.rs_no_pop && hold_rs);
    dut.eval();

    // --- checks on the outputs
    if (dut->ar_valid && dut->ar_ready) {
      const uint64_t a = uint64_t(dut->ar_addr);
      // a flush read of a QP in error, or the next read of a record
      Qp* fq = nullptr;
      for (uint32_t q : hot)
        if (qps[q].err && qps[q].fl_ar != qps[q].pi && qps[q].addr(qps[q].fl_ar) == a) fq = &qps[q];
      if (fq && (ar_expect.empty() || ar_expect.front() != a)) {
        fq->fl_ar = uint16_t(fq->fl_ar + 1);
        ++flush_reads;
      } else {
        ASSERT_FALSE(ar_expect.empty()) << "cycle " << c << ": WQE read 0x" << std::hex << a << " for no record";
        ASSERT_EQ(a, ar_expect.front()) << "cycle " << c << ": WQE read at 0x" << std::hex << a
                                        << ", expected 0x" << ar_expect.front();
        ar_expect.pop_front();
      }
      rq.push_back({uint64_t(dut->ar_addr), c + 1 + rng.below(k.lat + 1)});
      ++outstanding;
      ++reads;
      ASSERT_LE(outstanding, kWDepth) << "cycle " << c << ": more than WDEPTH WQEs read ahead";
    }
    if (r) rq.pop_front();
    if (dut->m_valid && dut->m_ready && kRxMeta.get(dut->m_meta, kRmRqFlush)) {
      const uint64_t q = kRxMeta.get(dut->m_meta, kRmDqpn), idx = kRxMeta.get(dut->m_meta, kRmRqIdx);
      ASSERT_LT(q, uint64_t(kQps)) << "cycle " << c << ": flush record for QP 0x" << std::hex << q;
      Qp& s = qps[q];
      ASSERT_TRUE(s.err) << "cycle " << c << ": flush record for QP " << q << ", which is not in error";
      ASSERT_EQ(idx, s.fl_out) << "cycle " << c << ": QP " << q << " flush record out of order";
      ASSERT_NE(s.fl_out, s.fl_ar) << "cycle " << c << ": QP " << q << " flush record before its WQE read";
      ASSERT_EQ(kRxMeta.get(dut->m_meta, kRmRqFetched), 1u);
      ASSERT_EQ(kRxMeta.get(dut->m_meta, kRmNbeats), 0u) << "a flush record has no frame beats";
      ASSERT_EQ(kRxMeta.get(dut->m_meta, kRmDrop), 0u);
      owed.push_back(s.addr(s.fl_out));
      s.fl_out = uint16_t(s.fl_out + 1);
      ++flushed;
    } else if (dut->m_valid && dut->m_ready) {
      ASSERT_FALSE(out.empty()) << "cycle " << c << ": record out of nowhere";
      const Rec& e = out.front();
      for (size_t i = 0; i < kMetaN; ++i)
        ASSERT_EQ(kRxMeta.get(dut->m_meta, i), e.f[i]) << "cycle " << c << " record " << records << " field " << i
                                                     << " (opcode 0x" << std::hex << e.f[kRmOpcode] << " qpn 0x"
                                                     << e.f[kRmDqpn] << ")";
      if (e.f[kRmRqFetched]) owed.push_back(out_addr.front());
      if (e.f[kRmRqFetched]) out_addr.pop_front();
      out.pop_front();
      ++records;
    }
    if (dut->wqe_valid && dut->wqe_pop) {
      const uint64_t a = owed.front();
      for (int w = 0; w < 16; ++w)
        ASSERT_EQ(uint32_t(dut->wqe_data[size_t(w)]), mem_word(a, w))
            << "cycle " << c << ": WQE word " << w << " is not the data of 0x" << std::hex << a;
      owed.pop_front();
      --outstanding;
      ++wqes;
    }

    // --- model update at the edge (inputs accepted this cycle)
    if (hold_rec && dut->s_ready) {
      Rec e = cur_rec;
      e.f[kRmRqFetched] = 0;
      e.f[kRmRqIdx] = 0;
      const uint64_t q = e.f[kRmDqpn];
      if (!e.f[kRmDrop] && q < uint64_t(kQps) && consumes(e.f[kRmOpcode]) && !qps[q].err) {
        Qp& s = qps[q];
        e.f[kRmRqIdx] = s.fci;
        if (s.fci != s.pi) {
          e.f[kRmRqFetched] = 1;
          const uint16_t mask = uint16_t((1u << s.log_rq) - 1);
          const uint64_t a = s.base + (uint64_t(s.fci & mask) << 6);
          ar_expect.push_back(a);
          out_addr.push_back(a);
          issue_q = uint32_t(q);
          s.fci = uint16_t(s.fci + 1);
          ++fetched;
        } else {
          ++unposted;
        }
      }
      out.push_back(e);
      hold_rec = false;
      last_accept = c;
    }
    if (hold_cmd && dut->qp_cmd_ready) {
      Qp& s = qps[cmd_qpn];
      s.base = cmd_base;
      s.log_rq = cmd_log;
      if (cmd_init) s.pi = s.fci = 0;
      hold_cmd = false;
      ++cmds;
    }
    if (db) qps[db_q].pi = db_pi;  // a doorbell wins over the command (which then waits)
    if (hold_rs && dut->resync_ready) {
      // taken while a fetch of the same QP waits for room: that record goes out without a WQE
      if (!ar_expect.empty() && issue_q == rs_qpn && !(dut->ar_valid && dut->ar_ready)) {
        ar_expect.pop_back();
        out_addr.pop_back();
        out.back().f[kRmRqFetched] = 0;
        --fetched;
        ++aborted;
      }
      qps[rs_qpn].fci = rs_ci;
      if (rs_err) {
        Qp& s = qps[rs_qpn];
        s.err = true;
        s.fl_ar = s.fl_out = rs_ci;
        ++handovers;
      }
      hold_rs = false;
      ++resyncs;
    }
    dut.tick();
  }

  // Configures every hot QP (base, size, indices zero).
  void configure() {
    Knobs k;
    k.rec = k.db = 0;
    for (uint32_t q : hot) {
      cmd_qpn = q;
      cmd_base = rng.next() << 6;
      cmd_log = int(rng.range(0, 6));
      cmd_init = true;
      put_cmd(cmd_qpn, cmd_base, cmd_log, true);
      hold_cmd = true;
      for (int i = 0; i < 10 && hold_cmd && !HasFatalFailure(); ++i) cycle(k);
      ASSERT_FALSE(hold_cmd) << "QP_MODIFY not taken";
    }
  }

  void drain(int cycles = 5000) {
    if (HasFatalFailure()) return;
    Knobs k;
    k.rec = k.db = k.cmd = k.rs = 0;
    k.ar = k.out = k.pop = 100;
    for (int i = 0; i < cycles && !HasFatalFailure(); ++i) cycle(k);
    EXPECT_FALSE(hold_rec);
    EXPECT_TRUE(out.empty()) << out.size() << " records not delivered";
    EXPECT_TRUE(owed.empty()) << owed.size() << " WQEs not delivered (reads in flight " << rq.size()
                              << ", WQE FIFO " << (dut->wqe_valid ? "not empty" : "empty") << ", next at "
                              << (rq.empty() ? 0 : rq.front().at) << ", now " << dut.cycle() << ")";
    EXPECT_TRUE(ar_expect.empty()) << ar_expect.size() << " WQE reads not issued";
    EXPECT_FALSE(dut->wqe_valid) << "WQE in the FIFO that no record owns";
    EXPECT_EQ(reads, wqes);
    for (uint32_t q : hot)
      if (qps[q].err) {
        EXPECT_EQ(qps[q].fl_out, qps[q].pi) << "QP " << q << ": posted WQEs left unflushed";
      }
  }

  void pick_hot(size_t n) {
    hot.clear();
    for (size_t i = 0; i < n; ++i) hot.push_back(n >= size_t(kQps) ? uint32_t(i) : uint32_t(rng.below(kQps)));
  }

  Rng rng;
  Dut<Vsrnic_rx_rqfetch> dut;
  std::vector<Qp> qps;
  std::vector<uint32_t> hot;
  std::deque<Rec> out;                    // records expected out, in order
  std::deque<uint64_t> ar_expect;         // WQE reads expected, in order
  std::deque<uint64_t> out_addr, owed;    // WQE addresses of fetching records: not yet taken; taken, WQE not popped
  std::deque<Pending> rq;                 // reads accepted by the slave, in order
  Rec cur_rec{};
  bool hold_rec = false, hold_cmd = false, hold_rs = false, cmd_init = false, rs_err = false;
  uint32_t cmd_qpn = 0, rs_qpn = 0;
  uint64_t cmd_base = 0;
  int cmd_log = 0;
  uint16_t rs_ci = 0;
  int outstanding = 0;
  int force_db = -1;  // a doorbell the next cycle must carry
  uint16_t force_pi = 0;
  uint64_t last_accept = 0, records = 0, reads = 0, wqes = 0, fetched = 0, unposted = 0, cmds = 0, resyncs = 0;
  uint64_t handovers = 0, flush_reads = 0, flushed = 0, aborted = 0;
  uint32_t issue_q = 0;  // QP of the record whose WQE read is still to be issued
};

TEST_F(RqFetchBench, FetchOnlyForConsumersAtRingAddresses) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 4));
  reset();
  configure();
  Knobs k;
  k.rs = k.cmd = 0;
  k.db = 10;
  for (int i = 0; i < 100000 && !HasFatalFailure(); ++i) cycle(k);
  drain();
  EXPECT_GT(fetched, 1000u);
  EXPECT_GT(unposted, 100u) << "no record found its RQ empty";
}

TEST_F(RqFetchBench, SlowHostLimitsReadAhead) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 3));
  reset();
  configure();
  Knobs k;
  k.rec = 90;
  k.db = 60;
  k.lat = 200;
  k.pop = 20;
  int max_out = 0;
  for (int i = 0; i < 20000 && !HasFatalFailure(); ++i) {
    cycle(k);
    max_out = std::max(max_out, outstanding);
  }
  drain();
  EXPECT_EQ(max_out, kWDepth) << "the read-ahead limit was never reached";
}

TEST_F(RqFetchBench, CommandsAndResyncBetweenRecords) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 6));
  reset();
  configure();
  Knobs k;
  k.cmd = 2;
  k.rs = 3;
  k.free_resync = false;
  for (int phase = 0; phase < 20 && !HasFatalFailure(); ++phase) {
    k.rec = unsigned(rng.range(10, 100));
    k.db = unsigned(rng.range(5, 60));
    k.ar = unsigned(rng.range(20, 100));
    k.out = unsigned(rng.range(20, 100));
    k.pop = unsigned(rng.range(20, 100));
    k.lat = unsigned(rng.range(1, 60));
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) cycle(k);
  }
  drain();
  EXPECT_GT(cmds, 200u);
  EXPECT_GT(resyncs, 50u);
  EXPECT_GT(fetched, 3000u);
}

// The engine holds resync_valid until resync_ready (it may raise it while a later record
// is being fetched); the fetch index must change only when the resync is taken.
TEST_F(RqFetchBench, ResyncWaitsWhileFetching) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 6));
  reset();
  configure();
  Knobs k;
  k.rs = 3;
  k.free_resync = true;
  for (int i = 0; i < 20000 && !HasFatalFailure(); ++i) cycle(k);
  drain();
  EXPECT_GT(resyncs, 100u);
}

// Directed form of the above: QP A's record waits in the issue state (AR not ready) while
// the engine raises a resync for QP B; the read for A must still advance A's fetch index,
// so A's next record gets the next WQE.
TEST_F(RqFetchBench, ResyncOfOtherQpDuringIssueKeepsFetchIndex) {
  SRNIC_BENCH_TRACE();
  const uint32_t a = 1, b = 2;
  hot = {a, b};
  reset();
  configure();
  Knobs k;
  k.rec = k.db = k.cmd = k.rs = 0;
  k.ar = 0;
  force_db = int(a);
  force_pi = 2;  // two WQEs posted on A
  cycle(k);
  offer_rec(a, 0x04);  // SEND ONLY
  for (int i = 0; i < 4; ++i) cycle(k);
  dut.eval();
  ASSERT_TRUE(dut->ar_valid) << "record for A not at the WQE read";
  hold_rs = true;  // engine: resync B to its consumer index (0, its fetch index already)
  rs_qpn = b;
  rs_ci = 0;
  for (int i = 0; i < 3; ++i) cycle(k);
  EXPECT_TRUE(hold_rs) << "resync taken while a WQE read was pending";
  k.ar = 100;
  for (int i = 0; i < 6; ++i) cycle(k);
  EXPECT_FALSE(hold_rs);
  // A's next packet must read WQE 1 (expected address base + 64), not WQE 0 again
  offer_rec(a, 0x04);  // SEND ONLY again
  for (int i = 0; i < 10 && !HasFatalFailure(); ++i) cycle(k);
  if (HasFatalFailure()) return;
  drain();
  EXPECT_EQ(reads, 2u);
}

// A QP_MODIFY(init_idx) offered in the cycle a record of that QP is taken: the record
// uses the old indices, and afterwards both indices are zero (no WQE claimed that was
// never posted).
TEST_F(RqFetchBench, InitIdxMeetsRecord) {
  SRNIC_BENCH_TRACE();
  const uint32_t a = 3;
  hot = {a};
  reset();
  configure();
  Knobs k;
  k.rec = k.db = k.cmd = k.rs = 0;
  force_db = int(a);
  force_pi = 5;
  cycle(k);
  offer_rec(a, 0x00);  // SEND FIRST
  cmd_qpn = a;
  cmd_base = rng.next() << 6;
  cmd_log = 3;
  cmd_init = true;
  put_cmd(a, cmd_base, cmd_log, true);
  hold_cmd = true;
  for (int i = 0; i < 10; ++i) cycle(k);
  EXPECT_FALSE(hold_cmd);
  EXPECT_EQ(fetched, 1u);
  // nothing posted since the reset of the indices: the next packet finds no WQE
  offer_rec(a, 0x00);  // SEND FIRST again
  for (int i = 0; i < 10 && !HasFatalFailure(); ++i) cycle(k);
  drain();
  EXPECT_EQ(reads, 1u);
  EXPECT_EQ(unposted, 1u);
}

// QPs go to error (resyncs marked err) while records, doorbells and resyncs of the other
// QPs go on: every WQE posted on a QP in error, before or after the hand-over, comes out
// once as a flush record in index order, and records of those QPs fetch nothing.
TEST_F(RqFetchBench, FlushWalksEveryPostedWqeOfQpsInError) {
  SRNIC_BENCH_TRACE();
  uint64_t total_handovers = 0, total_flushed = 0;
  for (int round = 0; round < 6 && !HasFatalFailure(); ++round) {
    pick_hot(std::min(kQps, 6));
    reset();
    configure();
    for (uint32_t q : hot) qps[q].err = false;
    Knobs k;
    k.rs = 2;
    k.rs_err = 40;
    k.free_resync = false;
    handovers = flushed = 0;
    for (int phase = 0; phase < 6 && !HasFatalFailure(); ++phase) {
      k.rec = unsigned(rng.range(10, 100));
      k.db = unsigned(rng.range(5, 60));
      k.ar = unsigned(rng.range(20, 100));
      k.out = unsigned(rng.range(20, 100));
      k.pop = unsigned(rng.range(20, 100));
      k.lat = unsigned(rng.range(1, 60));
      for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) cycle(k);
    }
    drain(40000);   // flush reads of up to a ring per QP, WDEPTH at a time
    total_handovers += handovers;
    total_flushed += flushed;
  }
  EXPECT_GT(total_handovers, 10u);
  EXPECT_GT(total_flushed, 100u);
  EXPECT_GE(flush_reads, total_flushed);
}

// The engine waits for a resync without popping WQEs while the fetch of a later record waits
// for room in the full WQE FIFO: the resync must be taken anyway (no deadlock); if the
// waiting fetch is for the resynchronised QP, that record goes out without a WQE.
TEST_F(RqFetchBench, ResyncTakenWhileFetchWaitsForRoom) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 3));
  reset();
  configure();
  Knobs k;
  k.rec = 90;
  k.db = 60;
  k.rs = 4;
  k.free_resync = true;
  k.rs_no_pop = true;
  k.pop = 15;
  k.lat = 2;
  for (int i = 0; i < 30000 && !HasFatalFailure(); ++i) cycle(k);
  drain();
  EXPECT_GT(resyncs, 200u);
  EXPECT_GT(aborted, 5u) << "no resync met a waiting fetch of its own QP";
}

// A QP reset (QP_MODIFY init_idx) ends its error state: its records fetch again.
TEST_F(RqFetchBench, InitIdxEndsErrorState) {
  SRNIC_BENCH_TRACE();
  const uint32_t a = 5 % kQps;
  hot = {a};
  reset();
  configure();
  Knobs k;
  k.rec = k.db = k.cmd = k.rs = 0;
  force_db = int(a);
  force_pi = 3;
  cycle(k);
  hold_rs = true;  // hand over in error at consumer index 0: WQEs 0..2 are flushed
  rs_qpn = a;
  rs_ci = 0;
  rs_err = true;
  for (int i = 0; i < 40 && !HasFatalFailure(); ++i) cycle(k);
  drain();
  EXPECT_EQ(flushed, 3u);
  cmd_qpn = a;
  cmd_base = rng.next() << 6;
  cmd_log = 3;
  cmd_init = true;
  put_cmd(a, cmd_base, cmd_log, true);
  hold_cmd = true;
  for (int i = 0; i < 10; ++i) cycle(k);
  ASSERT_FALSE(hold_cmd);
  qps[a].err = false;
  force_db = int(a);
  force_pi = 1;
  cycle(k);
  offer_rec(a, 0x04);  // SEND ONLY
  for (int i = 0; i < 20 && !HasFatalFailure(); ++i) cycle(k);
  drain();
  EXPECT_EQ(fetched, 1u) << "a record of the reset QP did not fetch";
  EXPECT_EQ(flushed, 3u) << "the reset QP was flushed again";
}

TEST_F(RqFetchBench, ResetDropsEverything) {
  SRNIC_BENCH_TRACE();
  pick_hot(std::min(kQps, 4));
  reset();
  configure();
  Knobs k;
  k.ar = 30;
  k.lat = 50;
  for (int i = 0; i < 500 && !HasFatalFailure(); ++i) cycle(k);
  reset();
  dut.eval();
  EXPECT_FALSE(dut->m_valid);
  EXPECT_FALSE(dut->wqe_valid);
  EXPECT_FALSE(dut->ar_valid);
  outstanding = 0;
  reads = wqes = 0;
  configure();
  for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(k);
  drain();
}

}  // namespace
}  // namespace srnic::verif::blocks
