// srnic_resp_tx bench: random ACK/NAK and READ tasks through the responder's TX queue with
// random input timing and output back-pressure. Tasks must come out in order; an ACK/NAK as
// one ACK job (PSN, syndrome, MSN) counted as sent_ack or sent_nak by its syndrome class; a
// READ of len bytes as ceil(len / MTU) response jobs (ONLY, or FIRST, MIDDLE..., LAST; one
// ONLY job for len 0) with consecutive PSNs (24-bit wrap), payload address and length cut at
// the MTU, and the AETH (ACK syndrome, MSN) on FIRST, LAST and ONLY. No job is marked as a
// resend (tx_job_t.resend) and the fields a responder job does not use are zero.
#include <algorithm>
#include <deque>
#include <vector>

#include "Vsrnic_resp_tx.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

// resp_task_t (kRespTask) and tx_job_t (kJob): pkg_layouts.hpp

constexpr uint8_t kOpReadFirst = 0x0D, kOpReadMiddle = 0x0E, kOpReadLast = 0x0F, kOpReadOnly = 0x10,
                  kOpAck = 0x11, kAethAck = 0x1F;

struct Task {
  bool is_read;
  uint16_t qpn;
  uint32_t psn;
  uint8_t syn;
  uint32_t msn;
  uint64_t addr;
  uint32_t len;
  int mtu;
};
struct Job {
  uint16_t qpn;
  uint8_t opcode;
  uint32_t psn;
  uint8_t syn;
  uint32_t msn;
  uint64_t addr;
  uint32_t len;
  bool aeth;
  bool ack, nak;
};

class RespTxBench : public ::testing::Test {
 public:
  RespTxBench() : rng(test_seed()), dut(rng.next()) {}

  void reset() {
    dut->s_valid = 0;
    dut->job_ready = 0;
    dut.reset();
  }

  Task random_task() {
    Task t{};
    t.is_read = rng.percent(50);
    t.qpn = uint16_t(rng.u32());
    t.psn = rng.percent(10) ? 0xFFFFFF - uint32_t(rng.below(4)) : rng.u32() & 0xFFFFFF;
    static const uint8_t syns[] = {0x1F, 0x00, 0x20, 0x3F, 0x60, 0x61, 0x62, 0x63};
    t.syn = syns[rng.below(8)];
    t.msn = rng.u32() & 0xFFFFFF;
    t.addr = rng.next();
    t.mtu = int(rng.range(1, 5));
    const uint32_t mtu_b = 128u << t.mtu;
    switch (rng.below(5)) {
      case 0: t.len = 0; break;
      case 1: t.len = mtu_b * uint32_t(rng.range(1, 4)); break;  // exact multiple
      case 2: t.len = uint32_t(rng.range(1, mtu_b)); break;
      case 3: t.len = uint32_t(rng.range(1, 20 * mtu_b)); break;
      default: t.len = rng.percent(5) ? uint32_t(rng.range(1u << 20, 1u << 21)) : uint32_t(rng.below(9000)); break;
    }
    return t;
  }

  void expand(const Task& t) {
    if (!t.is_read) {
      const bool ack = ((t.syn >> 5) & 3) == 0;
      expect.push_back({t.qpn, kOpAck, t.psn, t.syn, t.msn, 0, 0, true, ack, !ack});
      return;
    }
    const uint32_t mtu_b = 128u << t.mtu;
    const uint32_t n = t.len == 0 ? 1 : (t.len + mtu_b - 1) / mtu_b;
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t op = n == 1 ? kOpReadOnly : i == 0 ? kOpReadFirst : i == n - 1 ? kOpReadLast : kOpReadMiddle;
      const uint32_t len = std::min(mtu_b, t.len - i * mtu_b);
      expect.push_back({t.qpn, op, (t.psn + i) & 0xFFFFFF, kAethAck, t.msn, t.addr + uint64_t(i) * mtu_b,
                        t.len == 0 ? 0 : len, op != kOpReadMiddle, false, false});
    }
  }

  void cycle(unsigned p_in, unsigned p_out) {
    if (!hold && rng.percent(p_in)) {
      hold = true;
      cur = random_task();
    }
    dut->s_valid = hold;
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->s_task, kRespTask.at(f).lsb, kRespTask.at(f).width, v); };
    put(kRtIsRead, cur.is_read);
    put(kRtQpn, cur.qpn);
    put(kRtPsn, cur.psn);
    put(kRtSyndrome, cur.syn);
    put(kRtMsn, cur.msn);
    put(kRtAddr, cur.addr);
    put(kRtLen, cur.len);
    put(kRtMtu, uint64_t(cur.mtu));
    dut->job_ready = rng.percent(p_out);
    dut.eval();
    const uint64_t c = dut.cycle();
    const bool fire = dut->job_valid && dut->job_ready;
    EXPECT_EQ(bool(dut->sent_ack), fire && !expect.empty() && expect.front().ack) << "cycle " << c;
    EXPECT_EQ(bool(dut->sent_nak), fire && !expect.empty() && expect.front().nak) << "cycle " << c;
    if (fire) {
      // ACK coalescing: a plain ACK may be replaced by the next task when that is a plain ACK
      // of the same QP (only while the queue is full; the bench accepts it whenever allowed).
      const uint32_t jpsn = uint32_t(kJob.get(dut->job, kPsn)), jmsn = uint32_t(kJob.get(dut->job, kAethMsn));
      while (expect.size() >= 2 && plain_ack(expect[0]) && plain_ack(expect[1]) &&
             expect[1].qpn == expect[0].qpn && kJob.get(dut->job, kOpcode) == kOpAck &&
             (jpsn != expect[0].psn || jmsn != expect[0].msn)) {
        expect.pop_front();
        ++merged;
      }
    }
    if (fire) {
      ASSERT_FALSE(expect.empty()) << "cycle " << c << ": job with no task";
      const Job& e = expect.front();
      const auto& j = dut->job;
      const std::string at = "cycle " + std::to_string(c) + " job " + std::to_string(jobs);
      EXPECT_EQ(kJob.get(j, kQpn), e.qpn) << at;
      ASSERT_EQ(kJob.get(j, kOpcode), e.opcode) << at;
      EXPECT_EQ(kJob.get(j, kPsn), e.psn) << at;
      if (e.aeth) {
        EXPECT_EQ(kJob.get(j, kAethSyn), e.syn) << at;
        EXPECT_EQ(kJob.get(j, kAethMsn), e.msn) << at;
      }
      if (e.opcode != kOpAck) {
        EXPECT_EQ(kJob.get(j, kPayAddr), e.addr) << at;
        EXPECT_EQ(kJob.get(j, kPayLen), e.len) << at;
      } else {
        EXPECT_EQ(kJob.get(j, kPayLen), 0u) << at;
      }
      EXPECT_EQ(kJob.get(j, kAckreq) | kJob.get(j, kSe), 0u) << at;
      // fields a responder job does not use are zero; it is never a resend (go-back-N is the
      // requester's)
      EXPECT_EQ(kJob.get(j, kRethVa) | kJob.get(j, kRethRkey) | kJob.get(j, kRethLen) | kJob.get(j, kImm), 0u) << at;
      EXPECT_EQ(kJob.get(j, kResend), 0u) << at << ": responder job marked as a resend";
      expect.pop_front();
      ++jobs;
    }
    if (hold && dut->s_ready) {
      expand(cur);
      hold = false;
      ++tasks;
    }
    dut.tick();
  }

  static bool plain_ack(const Job& j) { return j.opcode == kOpAck && j.syn == 0x1F; }

  // Offers an ACK/NAK task for one cycle with the output stalled; true if it was taken.
  bool put_stalled(uint16_t qpn, uint32_t psn, uint8_t syn) {
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->s_task, kRespTask.at(f).lsb, kRespTask.at(f).width, v); };
    put(kRtIsRead, 0);
    put(kRtQpn, qpn);
    put(kRtPsn, psn);
    put(kRtSyndrome, syn);
    put(kRtMsn, psn + 1);
    put(kRtAddr, 0);
    put(kRtLen, 0);
    put(kRtMtu, 3);
    dut->s_valid = 1;
    dut->job_ready = 0;
    dut.eval();
    const bool ok = dut->s_ready;
    dut.tick();
    dut->s_valid = 0;
    return ok;
  }

  Rng rng;
  Dut<Vsrnic_resp_tx> dut;
  uint64_t merged = 0;
  std::deque<Job> expect;
  bool hold = false;
  Task cur{};
  uint64_t jobs = 0, tasks = 0;
};

TEST_F(RespTxBench, RandomTasks) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int phase = 0; phase < 40 && !HasFatalFailure(); ++phase) {
    const unsigned pi = unsigned(rng.range(5, 100)), po = unsigned(rng.range(20, 100));
    for (int i = 0; i < 5000 && !HasFatalFailure(); ++i) cycle(pi, po);
  }
  for (int i = 0; i < 2000000 && !expect.empty() && !HasFatalFailure(); ++i) cycle(0, 100);
  EXPECT_TRUE(expect.empty()) << expect.size() << " jobs never sent";
  EXPECT_GT(tasks, 1000u);
}

// With the output stalled (a paused link), a storm of plain ACKs for one QP never blocks the
// input: the queue fills, then each new ACK replaces the staged one. When the output resumes,
// the queued ACKs leave in order, then only the newest one.
TEST_F(RespTxBench, AckStormCoalescesWhileStalled) {
  SRNIC_BENCH_TRACE();
  reset();
  auto put_ack = [&](uint16_t qpn, uint32_t psn, uint8_t syn) { return put_stalled(qpn, psn, syn); };
  const int depth = BENCH_DEPTH;
  for (int i = 0; i < depth + 1; ++i) EXPECT_TRUE(put_ack(7, 100 + i, 0x1F)) << "ACK " << i;  // queue + stage
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(put_ack(7, 200 + i, 0x1F)) << "ACK storm " << i << " blocked";
  EXPECT_FALSE(put_ack(8, 300, 0x1F)) << "an ACK of another QP cannot merge";
  EXPECT_FALSE(put_ack(7, 301, 0x60)) << "a NAK never merges";
  std::vector<uint32_t> psns;
  for (int i = 0; i < 4 * depth + 20; ++i) {
    dut->job_ready = 1;
    dut.eval();
    if (dut->job_valid) psns.push_back(uint32_t(kJob.get(dut->job, kPsn)));
    dut.tick();
  }
  ASSERT_EQ(psns.size(), size_t(depth + 1));
  for (int i = 0; i < depth; ++i) EXPECT_EQ(psns[size_t(i)], uint32_t(100 + i));
  EXPECT_EQ(psns.back(), 249u) << "the newest ACK of the storm";
  EXPECT_FALSE(dut.rtl_error());
}

// While the queue is full, a plain ACK merges only into a staged plain ACK of its QP: a staged
// NAK is never replaced (the requester would not learn of the error), the ACK waits instead.
TEST_F(RespTxBench, StagedNakIsNeverReplaced) {
  SRNIC_BENCH_TRACE();
  reset();
  const int depth = BENCH_DEPTH;
  for (int i = 0; i < depth; ++i) EXPECT_TRUE(put_stalled(9, 100 + uint32_t(i), 0x1F)) << "ACK " << i;
  EXPECT_TRUE(put_stalled(7, 400, 0x60)) << "the NAK was not staged";
  EXPECT_FALSE(put_stalled(7, 401, 0x1F)) << "an ACK of the same QP replaced the staged NAK";
  std::vector<std::pair<uint32_t, uint32_t>> out;  // (qpn, syndrome) in order
  for (int i = 0; i < 4 * depth + 20; ++i) {
    dut->job_ready = 1;
    dut.eval();
    if (dut->job_valid) out.emplace_back(uint32_t(kJob.get(dut->job, kQpn)), uint32_t(kJob.get(dut->job, kAethSyn)));
    dut.tick();
  }
  ASSERT_EQ(out.size(), size_t(depth + 1));
  EXPECT_EQ(out.back().first, 7u);
  EXPECT_EQ(out.back().second, 0x60u) << "the NAK was lost";
}

}  // namespace
}  // namespace srnic::verif::blocks
