// weir_test.cpp: Weir's parts on their own (EWMA, alpha/beta, AIAD steps, credit clock,
// slicing, active-QP bitmap) and the layer on a MemoryBackend device: no doorbell before the
// credit time, forced signaling, slices over one buffer, CQE aggregation and hiding, errors.
#include <gtest/gtest.h>

#include <cerrno>

#include "memory_backend.hpp"
#include "qp_fixture.hpp"
#include "srnic/weir.hpp"

namespace srnic::sw {
namespace {

using test::MemoryBackend;

TEST(WeirParts, EwmaFirstSampleThenWeighted) {
  weir::Ewma e(0.875);
  EXPECT_TRUE(e.empty());
  e.add(800);
  EXPECT_DOUBLE_EQ(e.value(), 800);
  e.add(1600);
  EXPECT_DOUBLE_EQ(e.value(), 0.875 * 800 + 0.125 * 1600);
}

TEST(WeirParts, ThresholdsGrowEveryNActiveQps) {
  weir::RateParams p;
  p.init_alpha = 1.0;
  p.init_beta = 0.5;
  p.qps_per_step = 64;
  EXPECT_DOUBLE_EQ(weir::thresholds(p, 0).alpha, 1.0);
  EXPECT_DOUBLE_EQ(weir::thresholds(p, 64).alpha, 1.0);
  EXPECT_DOUBLE_EQ(weir::thresholds(p, 65).alpha, 2.0);
  EXPECT_DOUBLE_EQ(weir::thresholds(p, 200).alpha, 4.0);
  EXPECT_DOUBLE_EQ(weir::thresholds(p, 200).beta, 4.5);
}

TEST(WeirParts, AiadIncreasesBelowAlphaHoldsBetweenDecreasesAboveBeta) {
  weir::RateParams p;
  p.line_rate = 40;
  p.min_rate = 10;
  p.inc = p.dec = 4;
  p.init_alpha = 1.0;
  p.init_beta = 0.5;  // alpha 1, beta 1.5 with few QPs
  p.qps_per_step = 64;
  weir::RateControl rc(p);
  EXPECT_DOUBLE_EQ(rc.rate(), 40) << "starts at the line rate";
  EXPECT_EQ(rc.update(260, 100, 1), weir::RateControl::Step::Decrease);  // ratio 1.6 >= 1.5
  EXPECT_DOUBLE_EQ(rc.rate(), 36);
  EXPECT_EQ(rc.update(220, 100, 1), weir::RateControl::Step::Hold);      // 1.2
  EXPECT_DOUBLE_EQ(rc.rate(), 36);
  EXPECT_EQ(rc.update(200, 100, 1), weir::RateControl::Step::Increase);  // 1.0 <= alpha
  EXPECT_DOUBLE_EQ(rc.rate(), 40);
  EXPECT_EQ(rc.update(100, 100, 1), weir::RateControl::Step::Increase);
  EXPECT_DOUBLE_EQ(rc.rate(), 40) << "capped at the line rate";
  for (int i = 0; i < 20; ++i) rc.update(1000, 100, 1);
  EXPECT_DOUBLE_EQ(rc.rate(), 10) << "floored at the minimum";
  // The same delay with 100 active QPs (alpha 2) is no longer too long.
  EXPECT_EQ(rc.update(260, 100, 100), weir::RateControl::Step::Increase);
}

TEST(WeirParts, CreditTimeIsSizeOverRateWithBoundedSaving) {
  weir::CreditClock c(50);
  EXPECT_TRUE(c.ready(0));
  c.spend(0, 400, 4);  // 100 cycles
  EXPECT_DOUBLE_EQ(c.next(), 100);
  EXPECT_FALSE(c.ready(99));
  EXPECT_TRUE(c.ready(100));
  c.spend(100, 400, 8);
  EXPECT_DOUBLE_EQ(c.next(), 150);
  // Idle until 1000: at most 50 cycles of credit saved up.
  c.spend(1000, 400, 4);
  EXPECT_DOUBLE_EQ(c.next(), 1050);
}

TEST(WeirParts, SlicesCutWriteAndReadNotSend) {
  auto s = weir::slice(WrOpcode::RdmaWrite, 10000, 4096);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].offset, 0u);
  EXPECT_EQ(s[1].offset, 4096u);
  EXPECT_EQ(s[2].offset, 8192u);
  EXPECT_EQ(s[2].length, 10000u - 8192u);
  EXPECT_FALSE(s[1].last);
  EXPECT_TRUE(s[2].last);
  EXPECT_EQ(weir::slice(WrOpcode::RdmaRead, 8192, 4096).size(), 2u);
  EXPECT_EQ(weir::slice(WrOpcode::RdmaWrite, 4096, 4096).size(), 1u);
  EXPECT_EQ(weir::slice(WrOpcode::Send, 10000, 4096).size(), 1u);
  EXPECT_EQ(weir::slice(WrOpcode::RdmaWrite, 10000, 0).size(), 1u);
}

TEST(WeirParts, ActiveQpsCountsQpsWithWqesAtTheNic) {
  weir::ActiveQps a;
  EXPECT_EQ(a.add(5, 3), 1u);
  EXPECT_EQ(a.add(70, 1), 2u);
  EXPECT_EQ(a.add(5, 2), 2u);
  EXPECT_TRUE(a.active(70));
  EXPECT_EQ(a.add(70, -1), 1u);
  EXPECT_FALSE(a.active(70));
  EXPECT_EQ(a.add(5, -4), 1u);
  EXPECT_EQ(a.outstanding(5), 1u);
  EXPECT_EQ(a.add(5, -1), 0u);
  EXPECT_FALSE(a.active(5));
}

// Weir on the fake device. The NIC timestamp is whatever the test stores in TS_LO.
class WeirTest : public test::QpFixture {
 protected:
  void SetUp() override { to_rts(); }
  WeirConfig cfg() {
    WeirConfig c;
    c.clock_mhz = 300;
    c.line_rate_gbps = 100;  // 41.67 bytes per cycle
    c.sync_every = 0;        // read the timestamp on every call
    c.burst_bytes = 0;       // no saved-up credit: doorbells exactly size / rate apart
    c.ring_group = 1;        // one WQE per credit
    return c;
  }
  void set_time(uint32_t cycles) { be.mmio_write32(abi::REG_TS_LO, cycles); }
  size_t doorbells() const { return be.writes_to(abi::REG_DB_SQ).size(); }
  abi::SqWqe wqe(uint32_t i) { return be.load<abi::SqWqe>(qp->sq_base() + uint64_t(i) * 64); }
  void cqe(uint16_t idx, uint8_t opcode, uint64_t wr_id, uint32_t byte_len, uint64_t ts, uint8_t status = 0) {
    abi::Cqe c{};
    c.qpn = qp->qp_num();
    c.wqe_idx = idx;
    c.opcode = opcode;
    c.wr_id = wr_id;
    c.byte_len = byte_len;
    c.status = status;
    abi::set_cqe_timestamp(c, ts);
    c.owner = uint8_t(((cqe_pi_ >> scq->log_size()) & 1) ^ 1);
    be.store(scq->base() + uint64_t(cqe_pi_ & (scq->size() - 1)) * sizeof c, c);
    ++cqe_pi_;
  }
  SendWr wr(uint64_t id, WrOpcode op, uint32_t len, unsigned flags) {
    sge_ = Sge{0x100000000ull, len, 7};
    SendWr w;
    w.wr_id = id;
    w.opcode = op;
    w.sg_list = &sge_;
    w.num_sge = 1;
    w.send_flags = flags;
    w.remote_addr = 0x2000000;
    w.rkey = 9;
    return w;
  }
  uint32_t cqe_pi_ = 0;
  Sge sge_;
};

TEST_F(WeirTest, PostWritesNothingAndCreditSpacesDoorbells) {
  Weir w(dev, cfg());
  be.clear_log();
  SendWr a = wr(1, WrOpcode::Send, 4096, 0), b = wr(2, WrOpcode::Send, 4096, 0);
  a.next = &b;
  ASSERT_EQ(w.post_send(*qp, &a), 0);
  EXPECT_EQ(doorbells(), 0u) << "posting must not ring";
  EXPECT_EQ(qp->sq_outstanding(), 0u) << "nor write the WQE to the ring";
  EXPECT_EQ(w.waiting(), 2u);
  set_time(1000);
  w.progress();
  EXPECT_EQ(doorbells(), 1u) << "the first WQE's credit is there at once";
  EXPECT_EQ(qp->sq_outstanding(), 1u);
  // 4096 bytes at 41.67 bytes per cycle: the next credit 98.3 cycles later.
  set_time(1098);
  w.progress();
  EXPECT_EQ(doorbells(), 1u) << "rung before its credit time";
  set_time(1099);
  w.progress();
  EXPECT_EQ(doorbells(), 2u);
  EXPECT_EQ(w.stats().deferred, 1u);
  EXPECT_EQ(wqe(1).wr_id, 2u);
  EXPECT_TRUE(wqe(0).flags & abi::WQE_FLAG_SIGNALED) << "every WQE is signaled";
}

TEST_F(WeirTest, OneCreditRingsOnToTheEndOfTheRingGroup) {
  WeirConfig c = cfg();
  c.ring_group = 4;
  Weir w(dev, c);
  be.clear_log();
  SendWr l[6];
  for (int i = 0; i < 6; ++i) {
    l[i] = wr(10 + i, WrOpcode::Send, 4096, 0);
    l[i].next = i < 5 ? &l[i + 1] : nullptr;
  }
  ASSERT_EQ(w.post_send(*qp, l), 0);
  set_time(1000);
  w.progress();
  EXPECT_EQ(doorbells(), 1u);
  EXPECT_EQ(qp->sq_outstanding(), 4u) << "SQ indices 0..3 in one doorbell";
  // Their credit was taken in advance: 4 x 98.3 cycles.
  set_time(1000 + 393);
  w.progress();
  EXPECT_EQ(qp->sq_outstanding(), 4u);
  set_time(1000 + 394);
  w.progress();
  EXPECT_EQ(qp->sq_outstanding(), 6u);
  EXPECT_EQ(doorbells(), 2u);
}

TEST_F(WeirTest, WithoutPacingEverythingRingsAtOnce) {
  WeirConfig c = cfg();
  c.pacing = false;
  Weir w(dev, c);
  be.clear_log();
  SendWr a = wr(1, WrOpcode::Send, 4096, 0), b = wr(2, WrOpcode::Send, 4096, 0);
  a.next = &b;
  ASSERT_EQ(w.post_send(*qp, &a), 0);
  set_time(10);
  w.progress();
  EXPECT_EQ(doorbells(), 1u) << "one list, one doorbell";
  EXPECT_EQ(qp->sq_outstanding(), 2u);
  EXPECT_EQ(w.stats().deferred, 0u);
}

TEST_F(WeirTest, SlicedWriteIsOneCompletionWithTheSummedLength) {
  WeirConfig c = cfg();
  c.pacing = false;
  Weir w(dev, c);
  SendWr a = wr(77, WrOpcode::RdmaWriteWithImm, 10000, SendFlags::Signaled | SendFlags::Fence);
  ASSERT_EQ(w.post_send(*qp, &a), 0);
  EXPECT_EQ(w.stats().slices, 2u);
  set_time(1000);
  w.progress();
  ASSERT_EQ(qp->sq_outstanding(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    const abi::SqWqe q = wqe(i);
    EXPECT_EQ(q.laddr, 0x100000000ull + 4096 * i) << i;
    EXPECT_EQ(q.raddr, 0x2000000u + 4096 * i) << i;
    EXPECT_EQ(q.length, i < 2 ? 4096u : 10000u - 8192u) << i;
    EXPECT_EQ(q.opcode, i < 2 ? abi::WR_WRITE : abi::WR_WRITE_IMM) << i;
    EXPECT_EQ(q.wr_id, i < 2 ? ~uint64_t(0) : 77u) << i;
    EXPECT_EQ(bool(q.flags & abi::WQE_FLAG_FENCE), i == 0) << i;
  }
  WorkCompletion wc[4];
  cqe(0, abi::WC_RDMA_WRITE, ~uint64_t(0), 4096, 1500);
  cqe(1, abi::WC_RDMA_WRITE, ~uint64_t(0), 4096, 1700);
  EXPECT_EQ(w.poll_cq(*scq, 4, wc), 0) << "pieces before the last are hidden";
  cqe(2, abi::WC_RDMA_WRITE, 77, 10000 - 8192, 1900);
  ASSERT_EQ(w.poll_cq(*scq, 4, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 77u);
  EXPECT_EQ(wc[0].byte_len, 10000u);
  EXPECT_EQ(wc[0].status, WcStatus::Success);
  EXPECT_EQ(w.stats().hidden_cqes, 2u);
  EXPECT_EQ(w.active_qps(), 0u);
  EXPECT_EQ(w.send_room(*qp), qp->sq_size());
  // Life cycles 500, 700, 900 cycles (300 MHz): base 500 = 1666.7 ns, EWMA
  // 7/8 (7/8 500 + 1/8 700) + 1/8 900 = 571.875 cycles = 1906.25 ns.
  EXPECT_NEAR(w.base_delay_ns(), 1666.67, 0.1);
  EXPECT_NEAR(w.ewma_delay_ns(), 1906.25, 0.1);
}

TEST_F(WeirTest, UnsignaledCompletionsHiddenErrorsShown) {
  WeirConfig c = cfg();
  c.pacing = false;
  Weir w(dev, c);
  SendWr a = wr(1, WrOpcode::Send, 64, 0), b = wr(2, WrOpcode::Send, 64, SendFlags::Signaled),
         e = wr(3, WrOpcode::Send, 64, 0);
  a.next = &b;
  b.next = &e;
  ASSERT_EQ(w.post_send(*qp, &a), 0);
  set_time(100);
  w.progress();
  ASSERT_EQ(qp->sq_outstanding(), 3u);
  EXPECT_EQ(w.active_qps(), 1u);
  cqe(0, abi::WC_SEND, 1, 64, 400);
  cqe(1, abi::WC_SEND, 2, 64, 500);
  cqe(2, abi::WC_SEND, 3, 0, 600, uint8_t(WcStatus::RemAccessErr));
  WorkCompletion wc[4];
  ASSERT_EQ(w.poll_cq(*scq, 4, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[1].wr_id, 3u);
  EXPECT_EQ(wc[1].status, WcStatus::RemAccessErr);
  EXPECT_EQ(w.stats().hidden_cqes, 1u);
  EXPECT_EQ(w.active_qps(), 0u);
  EXPECT_EQ(qp->sq_outstanding(), 0u);
}

TEST_F(WeirTest, RejectsLikePostSendAndLimitsToTheRing) {
  Weir w(dev, cfg());
  SendWr a = wr(1, WrOpcode::Send, 64, SendFlags::Inline);
  const SendWr* bad = nullptr;
  EXPECT_EQ(w.post_send(*qp, &a, &bad), EINVAL);
  EXPECT_EQ(bad, &a);
  a.send_flags = 0;
  for (uint32_t i = 0; i < qp->sq_size(); ++i) ASSERT_EQ(w.post_send(*qp, &a), 0) << i;
  EXPECT_EQ(w.send_room(*qp), 0u);
  EXPECT_EQ(w.post_send(*qp, &a), ENOMEM);
}

}  // namespace
}  // namespace srnic::sw
