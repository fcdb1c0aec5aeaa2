// cq_test.cpp: CQ creation, CQE polling with the owner phase over many ring passes, DB_CQ
// cadence, and SQ/RQ retirement from completions (including unsignaled WQEs).
#include <gtest/gtest.h>

#include <cerrno>

#include "cqe_writer.hpp"
#include "memory_backend.hpp"
#include "qp_fixture.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sw {
namespace {

using test::CqeWriter;
using test::MemoryBackend;

class CqTest : public test::QpFixture {};

TEST_F(CqTest, CreateWritesContextAndDestroyInvalidates) {
  be.clear_log();
  auto cq = dev.create_cq(5);
  EXPECT_EQ(cq->size(), 8u);
  EXPECT_EQ(cq->base() % 4096, 0u);
  ASSERT_EQ(be.commands.size(), 1u);
  const auto& c = be.commands[0];
  EXPECT_EQ(c.opcode, abi::CMD_CQ_WRITE);
  EXPECT_EQ(c.index, cq->cqn());
  uint64_t base;
  std::memcpy(&base, c.payload.data(), 8);
  EXPECT_EQ(base, cq->base());
  EXPECT_EQ(c.payload[8], 3);
  EXPECT_EQ(c.payload[9], 1);
  const uint32_t cqn = cq->cqn();
  cq.reset();
  ASSERT_EQ(be.commands.size(), 2u);
  EXPECT_EQ(be.commands[1].index, cqn);
  EXPECT_EQ(be.commands[1].payload[9], 0);
  EXPECT_EQ(dev.create_cq(1)->size(), 2u);
  EXPECT_EQ(dev.create_cq(32768)->size(), 32768u);
  EXPECT_THROW(dev.create_cq(0), Error);
  EXPECT_THROW(dev.create_cq(32769), Error);
}

TEST_F(CqTest, EmptyPollReadsNothingAndRingsNothing) {
  be.clear_log();
  WorkCompletion wc[4];
  EXPECT_EQ(scq->poll_cq(4, wc), 0);
  EXPECT_TRUE(be.writes.empty());
  EXPECT_EQ(scq->ci(), 0u);
}

TEST_F(CqTest, CopiesEveryField) {
  CqeWriter w(be, *rcq);
  abi::Cqe c{};
  c.wr_id = 0xFEDCBA9876543210ull;
  c.byte_len = 0x12345;
  c.imm[0] = 0xDE;
  c.imm[1] = 0xAD;
  c.imm[2] = 0xBE;
  c.imm[3] = 0xEF;
  c.qpn = 0xFF000000u | qp->qp_num();  // upper byte is not part of the 24-bit QPN
  c.wqe_idx = 0;
  c.opcode = abi::WC_RECV_RDMA_WITH_IMM;
  c.status = abi::WC_REM_ACCESS_ERR;
  abi::set_cqe_timestamp(c, 0xA1B2C3D4E5F6ull);
  c.flags = abi::CQE_FLAG_WITH_IMM;
  w.push(c);
  WorkCompletion wc[2];
  ASSERT_EQ(rcq->poll_cq(2, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 0xFEDCBA9876543210ull);
  EXPECT_EQ(wc[0].byte_len, 0x12345u);
  const uint8_t imm[4] = {0xDE, 0xAD, 0xBE, 0xEF};
  EXPECT_EQ(0, std::memcmp(&wc[0].imm_data, imm, 4));  // network order, as ibv_wc
  EXPECT_EQ(wc[0].qp_num, qp->qp_num());
  EXPECT_EQ(wc[0].opcode, WcOpcode::RecvRdmaWithImm);
  EXPECT_EQ(wc[0].status, WcStatus::RemAccessErr);
  EXPECT_EQ(wc[0].timestamp, 0xA1B2C3D4E5F6ull);
  EXPECT_EQ(wc[0].wc_flags, unsigned(WcFlags::WithImm));

  c.flags = 0;
  w.push(c);
  ASSERT_EQ(rcq->poll_cq(2, wc), 1);
  EXPECT_EQ(wc[0].wc_flags, 0u);
}

TEST_F(CqTest, PhaseRuleOverManyPasses) {
  auto cq = dev.create_cq(4);
  CqeWriter w(be, *cq);
  uint64_t next_id = 0, expect_id = 0;
  WorkCompletion wc[8];
  // Irregular batch sizes so producer and consumer cross the ring edge at varying points.
  const int batches[] = {1, 3, 4, 2, 4, 1, 1, 4, 3, 2, 4, 4, 1, 3};
  for (int round = 0; round < 8; ++round) {
    for (int k : batches) {
      for (int i = 0; i < k; ++i) w.push(qp->qp_num(), 0, abi::WC_SEND, next_id++);
      // Ask for more than available: the stale entries of the last pass must not be taken.
      const int got = cq->poll_cq(8, wc);
      ASSERT_EQ(got, k) << "round " << round << " ci " << cq->ci();
      for (int i = 0; i < got; ++i) EXPECT_EQ(wc[i].wr_id, expect_id++);
      EXPECT_EQ(cq->poll_cq(8, wc), 0);
    }
  }
  EXPECT_GT(cq->ci(), 100u * cq->size() / 4);
  EXPECT_EQ(cq->ci(), w.pi());
}

TEST_F(CqTest, WrongPhaseEntryIsNotConsumed) {
  auto cq = dev.create_cq(4);
  CqeWriter w(be, *cq);
  for (int i = 0; i < 4; ++i) w.push(qp->qp_num(), 0, abi::WC_SEND, uint64_t(i));
  WorkCompletion wc[4];
  ASSERT_EQ(cq->poll_cq(4, wc), 4);
  // Slot 0 still holds a first-pass CQE (owner 1); on the second pass valid means owner 0.
  EXPECT_EQ(cq->poll_cq(4, wc), 0);
  abi::Cqe stale = be.load<abi::Cqe>(cq->base());
  stale.wr_id = 99;
  be.store(cq->base(), stale);  // rewritten, but with the first-pass phase
  EXPECT_EQ(cq->poll_cq(4, wc), 0);
  w.push(qp->qp_num(), 0, abi::WC_SEND, 4);  // second-pass phase
  ASSERT_EQ(cq->poll_cq(4, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 4u);
}

TEST_F(CqTest, ConsumerDoorbellCadence) {
  auto cq = dev.create_cq(8);
  CqeWriter w(be, *cq);
  const uint32_t cqn = cq->cqn();
  WorkCompletion wc[16];
  be.clear_log();
  // Default: report at the end of every non-empty poll.
  w.push(qp->qp_num(), 0, abi::WC_SEND, 0);
  ASSERT_EQ(cq->poll_cq(16, wc), 1);
  EXPECT_EQ(be.writes_to(abi::REG_DB_CQ), std::vector<uint32_t>{1u << 16 | cqn});

  // Batched: within one long poll, at least every half ring (4 entries).
  cq->set_ci_batch(100);  // clamped to size/2
  be.clear_log();
  for (int i = 0; i < 8; ++i) w.push(qp->qp_num(), 0, abi::WC_SEND, 0);
  ASSERT_EQ(cq->poll_cq(3, wc), 3);
  EXPECT_TRUE(be.writes_to(abi::REG_DB_CQ).empty());
  ASSERT_EQ(cq->poll_cq(16, wc), 5);
  EXPECT_EQ(be.writes_to(abi::REG_DB_CQ), (std::vector<uint32_t>{5u << 16 | cqn, 9u << 16 | cqn}));
  be.clear_log();
  w.push(qp->qp_num(), 0, abi::WC_SEND, 0);
  ASSERT_EQ(cq->poll_cq(16, wc), 1);
  EXPECT_TRUE(be.writes.empty());
  cq->update_ci();
  EXPECT_EQ(be.writes_to(abi::REG_DB_CQ), std::vector<uint32_t>{10u << 16 | cqn});
  cq->update_ci();  // unchanged: no second write
  EXPECT_EQ(be.writes.size(), 1u);
}

TEST_F(CqTest, ConsumerIndexWrapsAt16Bits) {
  auto cq = dev.create_cq(2);
  CqeWriter w(be, *cq);
  WorkCompletion wc[2];
  for (uint32_t i = 0; i < 70000; ++i) {
    w.push(qp->qp_num(), 0, abi::WC_SEND, i);
    ASSERT_EQ(cq->poll_cq(2, wc), 1);
    ASSERT_EQ(wc[0].wr_id, i);
  }
  const auto db = be.writes_to(abi::REG_DB_CQ);
  EXPECT_EQ(db.back(), (70000u & 0xFFFF) << 16 | cq->cqn());
}

TEST_F(CqTest, SignaledCompletionRetiresEarlierUnsignaledWqes) {
  to_rts();
  Sge s{0x100000000ull, 64, 1};
  SendWr w[9];
  for (int i = 0; i < 9; ++i) {
    w[i].wr_id = 100u + i;
    w[i].sg_list = &s;
    w[i].num_sge = 1;
    w[i].next = nullptr;
  }
  for (int i = 0; i < 6; ++i) w[i].next = &w[i + 1];
  w[6].send_flags = SendFlags::Signaled;  // 0..5 unsignaled, 6 signaled
  ASSERT_EQ(qp->post_send(w), 0);
  ASSERT_EQ(qp->post_send(&w[7]), 0);
  EXPECT_EQ(qp->sq_outstanding(), 8u);
  EXPECT_EQ(qp->post_send(&w[8]), ENOMEM);

  CqeWriter cw(be, *scq);
  cw.push(qp->qp_num(), 6, abi::WC_RDMA_WRITE, 106);
  WorkCompletion wc[4];
  ASSERT_EQ(scq->poll_cq(4, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 106u);
  EXPECT_EQ(qp->sq_outstanding(), 1u) << "WQEs 0..6 retired, 7 still outstanding";
  for (int i = 0; i < 7; ++i) {
    w[8].wr_id = 200u + i;
    ASSERT_EQ(qp->post_send(&w[8]), 0) << i;
  }
  EXPECT_EQ(qp->post_send(&w[8]), ENOMEM);
  // The new WQEs wrapped to slots 0..6 of the ring.
  EXPECT_EQ(be.load<uint64_t>(qp->sq_base() + 8), 200u);
  EXPECT_EQ(be.load<uint64_t>(qp->sq_base() + 6 * 64 + 8), 206u);
  EXPECT_EQ(be.writes_to(abi::REG_DB_SQ).back(), 15u << 16 | qp->qp_num());
  EXPECT_EQ(qp->stale_completions(), 0u);
}

TEST_F(CqTest, ReceiveCompletionsRetireInOrder) {
  qp->modify(init_attr(0), kInitMask);
  Sge s{0x100000000ull, 64, 1};
  RecvWr r;
  r.sg_list = &s;
  r.num_sge = 1;
  for (int i = 0; i < 4; ++i) ASSERT_EQ(qp->post_recv(&r), 0);
  EXPECT_EQ(qp->post_recv(&r), ENOMEM);
  CqeWriter cw(be, *rcq);
  cw.push(qp->qp_num(), 0, abi::WC_RECV, 1);
  cw.push(qp->qp_num(), 1, abi::WC_RECV, 2);
  WorkCompletion wc[4];
  ASSERT_EQ(rcq->poll_cq(1, wc), 1);
  EXPECT_EQ(qp->rq_outstanding(), 3u);
  ASSERT_EQ(rcq->poll_cq(4, wc), 1);
  EXPECT_EQ(qp->rq_outstanding(), 2u);
  EXPECT_EQ(qp->post_recv(&r), 0);
  EXPECT_EQ(qp->sq_outstanding(), 0u);
}

TEST_F(CqTest, SharedCqSeparatesSendAndReceiveByOpcode) {
  auto cq = dev.create_cq(16);
  auto q = make_qp(4, 4, cq.get(), cq.get());
  to_rts(*q);
  Sge s{0x100000000ull, 64, 1};
  SendWr sw;
  sw.sg_list = &s;
  sw.num_sge = 1;
  RecvWr rw;
  rw.sg_list = &s;
  rw.num_sge = 1;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(q->post_send(&sw), 0);
    ASSERT_EQ(q->post_recv(&rw), 0);
  }
  CqeWriter cw(be, *cq);
  cw.push(q->qp_num(), 1, abi::WC_RECV, 0);
  cw.push(q->qp_num(), 0, abi::WC_SEND, 0);
  WorkCompletion wc[4];
  ASSERT_EQ(cq->poll_cq(4, wc), 2);
  EXPECT_EQ(q->rq_outstanding(), 1u);
  EXPECT_EQ(q->sq_outstanding(), 2u);
}

TEST_F(CqTest, CompletionNamingNoOutstandingWqeIsIgnored) {
  to_rts();
  Sge s{0x100000000ull, 64, 1};
  SendWr sw;
  sw.sg_list = &s;
  sw.num_sge = 1;
  ASSERT_EQ(qp->post_send(&sw), 0);
  ASSERT_EQ(qp->post_send(&sw), 0);
  CqeWriter cw(be, *scq);
  cw.push(qp->qp_num(), 5, abi::WC_SEND, 0);        // slot 5 was never posted
  cw.push(qp->qp_num() + 1, 0, abi::WC_SEND, 0);    // no such QP
  WorkCompletion wc[4];
  ASSERT_EQ(scq->poll_cq(4, wc), 2);  // still reported to the caller
  EXPECT_EQ(qp->sq_outstanding(), 2u);
  EXPECT_EQ(qp->stale_completions(), 1u);
}

// Long run through a small SQ: producer index crosses 2^16 in the doorbell; the NIC's wqe_idx
// is accepted both as a ring slot and as the 16-bit index.
TEST_F(CqTest, ProducerIndexWrapsAt16Bits) {
  to_rts();
  Sge s{0x100000000ull, 64, 1};
  SendWr w[8];
  for (int i = 0; i < 8; ++i) {
    w[i].sg_list = &s;
    w[i].num_sge = 1;
    w[i].next = i < 7 ? &w[i + 1] : nullptr;
  }
  w[7].send_flags = SendFlags::Signaled;
  CqeWriter cw(be, *scq);
  WorkCompletion wc[1];
  for (uint32_t round = 0; round < 9000; ++round) {
    for (int i = 0; i < 8; ++i) w[i].wr_id = round * 8 + i;
    ASSERT_EQ(qp->post_send(w), 0) << round;
    const uint32_t last = qp->sq_pi() - 1;
    const uint16_t idx = uint16_t(round % 2 ? (last & 7) : (last & 0xFFFF));
    cw.push(qp->qp_num(), idx, abi::WC_SEND, round * 8 + 7);
    ASSERT_EQ(scq->poll_cq(1, wc), 1);
    ASSERT_EQ(qp->sq_outstanding(), 0u) << round;
  }
  EXPECT_EQ(qp->sq_pi(), 72000u);
  EXPECT_EQ(be.writes_to(abi::REG_DB_SQ).back(), (72000u & 0xFFFF) << 16 | qp->qp_num());
  EXPECT_EQ(be.load<uint64_t>(qp->sq_base() + 7 * 64 + 8), 8999u * 8 + 7);
  EXPECT_EQ(qp->stale_completions(), 0u);
}

// CQEs of a QP's earlier life still in the ring when the host resets the QP are consumed
// without being returned; CQEs of other QPs keep their order, and the new life's CQEs (written
// after the reset) are returned and retire the new WQEs.
TEST_F(CqTest, ResetDiscardsTheQpsCqesOfItsEarlierLife) {
  auto other = make_qp(4, 2, scq.get(), rcq.get());
  to_rts();
  to_rts(*other);
  Sge s{0x100000000ull, 64, 1};
  SendWr w;
  w.sg_list = &s;
  w.num_sge = 1;
  w.send_flags = SendFlags::Signaled;
  for (uint64_t i = 0; i < 3; ++i) {
    w.wr_id = 10 + i;
    ASSERT_EQ(qp->post_send(&w), 0);
  }
  w.wr_id = 50;
  ASSERT_EQ(other->post_send(&w), 0);
  CqeWriter cw(be, *scq);
  cw.push(qp->qp_num(), 0, abi::WC_RDMA_WRITE, 10);
  cw.push(other->qp_num(), 0, abi::WC_RDMA_WRITE, 50);
  cw.push(qp->qp_num(), 1, abi::WC_RDMA_WRITE, 11);
  QpAttr r;
  r.qp_state = QpState::Reset;
  qp->modify(r, QpAttrMask::State);
  to_rts();
  w.wr_id = 70;
  ASSERT_EQ(qp->post_send(&w), 0);
  cw.push(qp->qp_num(), 0, abi::WC_RDMA_WRITE, 70);
  WorkCompletion wc[8];
  ASSERT_EQ(scq->poll_cq(8, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 50u) << "the other QP's CQE, in place";
  EXPECT_EQ(wc[1].wr_id, 70u) << "the new life's CQE";
  EXPECT_EQ(qp->sq_outstanding(), 0u);
  EXPECT_EQ(qp->stale_completions(), 0u);
  EXPECT_EQ(scq->ci(), 4u) << "the discarded CQEs were consumed";
}

// Two QPs reset one after the other before the CQ is polled, their old CQEs interleaved in the
// ring: neither QP's are returned (the second reset's marks go before the first one's).
TEST_F(CqTest, ResetsOfTwoQpsBeforeAPollDiscardBothQpsCqes) {
  auto other = make_qp(4, 2, scq.get(), rcq.get());
  to_rts();
  to_rts(*other);
  Sge s{0x100000000ull, 64, 1};
  SendWr w;
  w.sg_list = &s;
  w.num_sge = 1;
  w.send_flags = SendFlags::Signaled;
  for (uint64_t i = 0; i < 2; ++i) {
    w.wr_id = 10 + i;
    ASSERT_EQ(qp->post_send(&w), 0);
    w.wr_id = 50 + i;
    ASSERT_EQ(other->post_send(&w), 0);
  }
  CqeWriter cw(be, *scq);
  cw.push(qp->qp_num(), 0, abi::WC_RDMA_WRITE, 10);
  cw.push(other->qp_num(), 0, abi::WC_RDMA_WRITE, 50);
  cw.push(qp->qp_num(), 1, abi::WC_RDMA_WRITE, 11);
  cw.push(other->qp_num(), 1, abi::WC_RDMA_WRITE, 51);
  QpAttr r;
  r.qp_state = QpState::Reset;
  other->modify(r, QpAttrMask::State);
  qp->modify(r, QpAttrMask::State);
  WorkCompletion wc[8];
  EXPECT_EQ(scq->poll_cq(8, wc), 0) << "wr_id " << wc[0].wr_id << " of a reset QP was returned";
  EXPECT_EQ(scq->ci(), 4u);
  EXPECT_EQ(qp->stale_completions() + other->stale_completions(), 0u);
}

// In a command batch the reset is done only when the batch ends: a CQE of the QP's earlier life
// the NIC writes meanwhile (decision 115: it writes those it took before the reset, then the
// command completes) is discarded too.
TEST_F(CqTest, ResetInABatchDiscardsTheCqesWrittenBeforeTheBatchEnds) {
  to_rts();
  Sge s{0x100000000ull, 64, 1};
  SendWr w;
  w.sg_list = &s;
  w.num_sge = 1;
  w.send_flags = SendFlags::Signaled;
  for (uint64_t i = 0; i < 2; ++i) {
    w.wr_id = 10 + i;
    ASSERT_EQ(qp->post_send(&w), 0);
  }
  CqeWriter cw(be, *scq);
  cw.push(qp->qp_num(), 0, abi::WC_RDMA_WRITE, 10);
  {
    CommandBatch batch(dev);
    QpAttr r;
    r.qp_state = QpState::Reset;
    qp->modify(r, QpAttrMask::State);
    cw.push(qp->qp_num(), 1, abi::WC_RDMA_WRITE, 11);  // before the NIC reports the command done
    batch.finish();
  }
  to_rts();
  w.wr_id = 70;
  ASSERT_EQ(qp->post_send(&w), 0);
  cw.push(qp->qp_num(), 0, abi::WC_RDMA_WRITE, 70);
  WorkCompletion wc[8];
  ASSERT_EQ(scq->poll_cq(8, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 70u) << "only the new life's CQE";
  EXPECT_EQ(qp->stale_completions(), 0u);
  EXPECT_EQ(scq->ci(), 3u);
}

// A destroyed QP's CQEs still in its CQs are never returned, also when a QP created afterwards
// gets the same QPN (they would retire nothing of it).
TEST_F(CqTest, DestroyDiscardsTheQpsCqes) {
  to_rts();
  Sge s{0x100000000ull, 64, 1};
  SendWr w;
  w.sg_list = &s;
  w.num_sge = 1;
  w.send_flags = SendFlags::Signaled;
  w.wr_id = 10;
  ASSERT_EQ(qp->post_send(&w), 0);
  const uint32_t qpn = qp->qp_num();
  CqeWriter cw(be, *scq);
  cw.push(qpn, 0, abi::WC_RDMA_WRITE, 10);
  qp.reset();
  qp = make_qp(5, 3, scq.get(), rcq.get());
  ASSERT_EQ(qp->qp_num(), qpn);
  WorkCompletion wc[4];
  EXPECT_EQ(scq->poll_cq(4, wc), 0) << "wr_id " << wc[0].wr_id << " of the destroyed QP was returned";
  EXPECT_EQ(qp->stale_completions(), 0u);
  EXPECT_EQ(scq->ci(), 1u);
}

}  // namespace
}  // namespace srnic::sw
