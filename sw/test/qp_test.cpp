// qp_test.cpp: QP creation, state transitions and QP_MODIFY bytes, posting WQEs and doorbells.
#include <gtest/gtest.h>

#include <cerrno>

#include "memory_backend.hpp"
#include "qp_fixture.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sw {
namespace {

using test::MemoryBackend;
using test::QpFixture;

uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }
uint64_t le64(const uint8_t* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

class QpTest : public QpFixture {};

TEST_F(QpTest, CreateRoundsCapsAndWritesResetContext) {
  be.clear_log();
  QpInitAttr init;
  init.send_cq = scq.get();
  init.recv_cq = rcq.get();
  init.cap.max_send_wr = 100;
  init.cap.max_recv_wr = 0;
  auto q = dev.create_qp(*pd, init);
  EXPECT_EQ(q->qp_num(), qp->qp_num() + 1);
  EXPECT_EQ(q->cap().max_send_wr, 128u);
  EXPECT_EQ(q->cap().max_recv_wr, 2u);
  EXPECT_EQ(q->sq_size(), 128u);
  EXPECT_EQ(q->sq_base() % 4096, 0u);
  EXPECT_EQ(q->rq_base() % 4096, 0u);
  EXPECT_EQ(q->state(), QpState::Reset);
  ASSERT_EQ(be.commands.size(), 1u);
  const auto& c = be.commands[0];
  EXPECT_EQ(c.opcode, abi::CMD_QP_MODIFY);
  EXPECT_EQ(c.index, q->qp_num());
  const uint8_t* p = c.payload.data();
  EXPECT_EQ(p[0], abi::QPS_RESET);
  EXPECT_EQ(p[3], 7);  // log_sq_size
  EXPECT_EQ(p[4], 1);  // log_rq_size
  EXPECT_EQ(le32(p + 12), pd->handle());
  EXPECT_EQ(le16(p + 24), scq->cqn());
  EXPECT_EQ(le16(p + 26), rcq->cqn());
  EXPECT_EQ(le64(p + 40), q->sq_base());
  EXPECT_EQ(le64(p + 48), q->rq_base());
  // Rings must not overlap.
  EXPECT_GE(q->rq_base(), q->sq_base() + 128 * 64);
}

TEST_F(QpTest, FirstQpnSkipsSpecialQps) { EXPECT_EQ(qp->qp_num(), 2u); }

TEST_F(QpTest, CreateRejectsUnsupportedCaps) {
  QpInitAttr init;
  init.send_cq = scq.get();
  init.recv_cq = rcq.get();
  init.cap.max_send_sge = 2;
  EXPECT_THROW(dev.create_qp(*pd, init), Error);
  init.cap.max_send_sge = 1;
  init.cap.max_inline_data = 64;
  EXPECT_THROW(dev.create_qp(*pd, init), Error);
  init.cap.max_inline_data = 0;
  init.cap.max_send_wr = 32769;
  EXPECT_THROW(dev.create_qp(*pd, init), Error);
  init.cap.max_send_wr = 32768;
  EXPECT_NO_THROW(dev.create_qp(*pd, init));
  init.recv_cq = nullptr;
  EXPECT_THROW(dev.create_qp(*pd, init), Error);
}

TEST_F(QpTest, QpnTableExhaustionAndReuse) {
  std::vector<std::unique_ptr<QueuePair>> qps;
  QpInitAttr init;
  init.send_cq = scq.get();
  init.recv_cq = rcq.get();
  while (qps.size() + 1 < dev.caps().max_qp - dev.caps().first_qpn) qps.push_back(dev.create_qp(*pd, init));
  EXPECT_THROW(dev.create_qp(*pd, init), Error);
  const uint32_t n = qps[3]->qp_num();
  be.clear_log();
  qps[3].reset();
  ASSERT_EQ(be.commands.size(), 1u);  // destroy puts the NIC entry back to RESET
  EXPECT_EQ(be.commands[0].index, n);
  EXPECT_EQ(be.commands[0].payload[0], abi::QPS_RESET);
  EXPECT_EQ(dev.find_qp(n), nullptr);
  auto q = dev.create_qp(*pd, init);
  EXPECT_EQ(q->qp_num(), n);
  EXPECT_EQ(dev.find_qp(n), q.get());
}

TEST_F(QpTest, TransitionsWriteContextBytes) {
  be.clear_log();
  qp->modify(init_attr(Access::RemoteWrite | Access::RemoteRead | Access::LocalWrite), kInitMask);
  ASSERT_EQ(be.commands.size(), 1u);
  const uint8_t* p = be.commands[0].payload.data();
  EXPECT_EQ(p[0], abi::QPS_INIT);
  EXPECT_EQ(p[2], 0x6);  // REMOTE_WRITE | REMOTE_READ; LOCAL_WRITE is not a QP bit
  EXPECT_EQ(qp->state(), QpState::Init);

  QpAttr a = rtr_attr(0xABCDEF, 0x123456);
  qp->modify(a, kRtrMask);
  ASSERT_EQ(be.commands.size(), 2u);
  p = be.commands[1].payload.data();
  EXPECT_EQ(p[0], abi::QPS_RTR);
  EXPECT_EQ(p[1], 4);                  // Mtu2048
  EXPECT_EQ(p[2], 0x6);                // access kept
  EXPECT_EQ(le16(p + 6), 0xDBD5);      // flow label of (2, 0xABCDEF) folded into 0xC000..0xFFFF
  EXPECT_EQ(le32(p + 8), 0xABCDEFu);   // dest_qpn
  EXPECT_EQ(le32(p + 20), 0x123456u);  // rq_psn
  EXPECT_EQ(le32(p + 28), 0x0A000002u);
  EXPECT_EQ(le64(p + 32), 0x02000000000Bull);
  EXPECT_EQ(p[58], 12);  // min_rnr_timer
  EXPECT_EQ(qp->udp_sport(), 0xDBD5);

  qp->modify(rts_attr(0x654321), kRtsMask);
  ASSERT_EQ(be.commands.size(), 3u);
  p = be.commands[2].payload.data();
  EXPECT_EQ(p[0], abi::QPS_RTS);
  EXPECT_EQ(le32(p + 16), 0x654321u);  // sq_psn
  EXPECT_EQ(le32(p + 20), 0x123456u);  // rq_psn kept
  EXPECT_EQ(p[56], 5 | 6 << 3);        // retry_cnt 5, rnr_retry 6
  EXPECT_EQ(p[57], 14);                // timeout
  EXPECT_EQ(le16(p + 6), 0xDBD5);
  EXPECT_EQ(p[3], 3);
  EXPECT_EQ(p[4], 2);
  EXPECT_EQ(le64(p + 40), qp->sq_base());
  EXPECT_EQ(le64(p + 48), qp->rq_base());
  for (int i = 59; i < 64; ++i) EXPECT_EQ(p[i], 0) << i;
  EXPECT_EQ(qp->state(), QpState::Rts);
  EXPECT_EQ(qp->attr().dest_qp_num, 0xABCDEFu);

  // RTS -> RTS may change access flags only among the optional attributes.
  QpAttr b;
  b.qp_access_flags = Access::RemoteRead;
  qp->modify(b, QpAttrMask::AccessFlags);
  EXPECT_EQ(be.commands.back().payload[2], 0x4);
  EXPECT_EQ(be.commands.back().payload[0], abi::QPS_RTS);
}

TEST_F(QpTest, FlowLabelFromAddressVectorOverridesQpnHash) {
  qp->modify(init_attr(0), kInitMask);
  QpAttr a = rtr_attr(3, 0);
  a.ah_attr.flow_label = 0xABCDE;
  qp->modify(a, kRtrMask);
  EXPECT_EQ(qp->udp_sport(), 0xFCF4);
}

TEST_F(QpTest, UdpSportFollowsQpnPair) {
  qp->modify(init_attr(0), kInitMask);
  qp->modify(rtr_attr(3, 0), kRtrMask);
  EXPECT_EQ(qp->udp_sport(), 0xC006);  // 2 * 3 = 6
  EXPECT_EQ(flow_label_to_udp_sport(calc_flow_label(2, 0xFFFFFF)), 0xFFDE);
}

// Expects modify() to fail with EINVAL mentioning `needle`, leaving the QP and the NIC untouched.
#define EXPECT_MODIFY_REJECTED(attr, mask, needle)                                     \
  do {                                                                                 \
    const QpState before = qp->state();                                                \
    const size_t cmds = be.commands.size();                                            \
    try {                                                                              \
      qp->modify(attr, mask);                                                          \
      ADD_FAILURE() << "accepted: " << needle;                                         \
    } catch (const Error& e) {                                                         \
      EXPECT_EQ(e.code(), EINVAL);                                                     \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();    \
    }                                                                                  \
    EXPECT_EQ(qp->state(), before);                                                    \
    EXPECT_EQ(be.commands.size(), cmds);                                               \
  } while (0)

TEST_F(QpTest, InvalidTransitionsRejected) {
  EXPECT_MODIFY_REJECTED(rtr_attr(3, 0), kRtrMask, "RESET -> RTR");
  EXPECT_MODIFY_REJECTED(rts_attr(0), kRtsMask, "RESET -> RTS");
  QpAttr err;
  err.qp_state = QpState::Err;
  EXPECT_MODIFY_REJECTED(err, QpAttrMask::State, "RESET -> ERR");
  QpAttr sqd;
  sqd.qp_state = QpState::Sqd;
  EXPECT_MODIFY_REJECTED(sqd, QpAttrMask::State, "not supported");
  qp->modify(init_attr(0), kInitMask);
  EXPECT_MODIFY_REJECTED(rts_attr(0), kRtsMask, "INIT -> RTS");
  qp->modify(rtr_attr(3, 0), kRtrMask);
  EXPECT_MODIFY_REJECTED(init_attr(0), kInitMask, "RTR -> INIT");
  QpAttr none;
  EXPECT_MODIFY_REJECTED(none, QpAttrMask::PathMtu, "RTR -> RTR");
}

TEST_F(QpTest, MissingAndExtraAttributesRejected) {
  EXPECT_MODIFY_REJECTED(init_attr(0), kInitMask & ~QpAttrMask::Port, "requires PORT");
  EXPECT_MODIFY_REJECTED(init_attr(0), kInitMask | QpAttrMask::SqPsn, "does not accept SQ_PSN");
  qp->modify(init_attr(0), kInitMask);
  EXPECT_MODIFY_REJECTED(rtr_attr(3, 0), kRtrMask & ~(QpAttrMask::DestQpn | QpAttrMask::RqPsn),
                         "requires RQ_PSN,DEST_QPN");
  EXPECT_MODIFY_REJECTED(rtr_attr(3, 0), kRtrMask & ~QpAttrMask::Av, "requires AV");
  EXPECT_MODIFY_REJECTED(rtr_attr(3, 0), kRtrMask | QpAttrMask::Timeout, "does not accept TIMEOUT");
  qp->modify(rtr_attr(3, 0), kRtrMask);
  EXPECT_MODIFY_REJECTED(rts_attr(0), kRtsMask & ~QpAttrMask::SqPsn, "requires SQ_PSN");
  QpAttr cur = rts_attr(0);
  cur.cur_qp_state = QpState::Init;
  EXPECT_MODIFY_REJECTED(cur, kRtsMask | QpAttrMask::CurState, "cur_qp_state");
  cur.cur_qp_state = QpState::Rtr;
  qp->modify(cur, kRtsMask | QpAttrMask::CurState);
  EXPECT_EQ(qp->state(), QpState::Rts);
}

TEST_F(QpTest, AttributeRangesRejected) {
  QpAttr a = init_attr(0);
  a.port_num = 2;
  EXPECT_MODIFY_REJECTED(a, kInitMask, "port_num");
  a = init_attr(0);
  a.pkey_index = 1;
  EXPECT_MODIFY_REJECTED(a, kInitMask, "pkey_index");
  a = init_attr(0x20);
  EXPECT_MODIFY_REJECTED(a, kInitMask, "qp_access_flags");
  qp->modify(init_attr(0), kInitMask);
  a = rtr_attr(3, 0);
  a.path_mtu = Mtu(6);
  EXPECT_MODIFY_REJECTED(a, kRtrMask, "path_mtu");
  a = rtr_attr(1u << 24, 0);
  EXPECT_MODIFY_REJECTED(a, kRtrMask, "dest_qp_num");
  a = rtr_attr(3, 1u << 24);
  EXPECT_MODIFY_REJECTED(a, kRtrMask, "rq_psn");
  a = rtr_attr(3, 0);
  a.ah_attr.dmac = 0x010000000001ull;  // group bit of the first wire byte
  EXPECT_MODIFY_REJECTED(a, kRtrMask, "unicast");
  a = rtr_attr(3, 0);
  a.min_rnr_timer = 32;
  EXPECT_MODIFY_REJECTED(a, kRtrMask, "min_rnr_timer");
  qp->modify(rtr_attr(3, 0), kRtrMask);
  a = rts_attr(0);
  a.retry_cnt = 8;
  EXPECT_MODIFY_REJECTED(a, kRtsMask, "retry_cnt");
  a = rts_attr(0);
  a.timeout = 32;
  EXPECT_MODIFY_REJECTED(a, kRtsMask, "timeout");
}

TEST_F(QpTest, ErrAndResetAlwaysReachable) {
  to_rts();
  QpAttr a;
  a.qp_state = QpState::Err;
  qp->modify(a, QpAttrMask::State);
  EXPECT_EQ(be.commands.back().payload[0], abi::QPS_ERR);
  EXPECT_EQ(le32(be.commands.back().payload.data() + 8), 3u) << "ERR must keep the context";
  EXPECT_MODIFY_REJECTED(a, QpAttrMask::State | QpAttrMask::SqPsn, "does not accept SQ_PSN");
  a.qp_state = QpState::Reset;
  qp->modify(a, QpAttrMask::State);
  const uint8_t* p = be.commands.back().payload.data();
  EXPECT_EQ(p[0], abi::QPS_RESET);
  EXPECT_EQ(le32(p + 8), 0u) << "RESET clears connection attributes";
  EXPECT_EQ(le64(p + 40), qp->sq_base()) << "RESET keeps the rings";
  EXPECT_EQ(qp->sq_pi(), 0u);
  to_rts();
  EXPECT_EQ(qp->state(), QpState::Rts);
}

TEST_F(QpTest, FailedCommandLeavesQpUnchanged) {
  qp->modify(init_attr(0), kInitMask);
  const abi::QpContext before = qp->context();
  be.fail_commands = 1;
  try {
    qp->modify(rtr_attr(3, 7), kRtrMask);
    FAIL() << "NIC error ignored";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
  }
  EXPECT_EQ(qp->state(), QpState::Init);
  EXPECT_EQ(0, std::memcmp(&before, &qp->context(), sizeof before));
  qp->modify(rtr_attr(3, 7), kRtrMask);
  EXPECT_EQ(qp->state(), QpState::Rtr);
}

TEST_F(QpTest, PostSendWritesWqeBytesAndOneDoorbell) {
  to_rts();
  be.clear_log();
  Sge s0{0x100001000ull, 4096, 0x0105};
  Sge s1{0x100002000ull, 0x80000000u, 0x0207};
  SendWr w1;
  w1.wr_id = 0x1111222233334444ull;
  w1.sg_list = &s1;
  w1.num_sge = 1;
  w1.opcode = WrOpcode::RdmaRead;
  w1.send_flags = SendFlags::Signaled | SendFlags::Fence;
  w1.remote_addr = 0xDEAD0000BEEFull;
  w1.rkey = 0x3301;
  SendWr w0;
  w0.wr_id = 7;
  w0.next = &w1;
  w0.sg_list = &s0;
  w0.num_sge = 1;
  w0.opcode = WrOpcode::RdmaWriteWithImm;
  w0.send_flags = SendFlags::Solicited;
  const uint8_t imm[4] = {0x11, 0x22, 0x33, 0x44};
  std::memcpy(&w0.imm_data, imm, 4);
  w0.remote_addr = 0x2000;
  w0.rkey = 0x4402;
  const SendWr* bad = &w0;
  ASSERT_EQ(qp->post_send(&w0, &bad), 0);
  EXPECT_EQ(bad, nullptr);

  const uint8_t* p = be.host(qp->sq_base(), 64);
  EXPECT_EQ(p[0], abi::WR_WRITE_IMM);
  EXPECT_EQ(p[1], 0x4);
  EXPECT_EQ(p[2] | p[3] << 8, 0) << "running WQE index (idx)";
  EXPECT_EQ(0, std::memcmp(p + 4, imm, 4));
  EXPECT_EQ(le64(p + 8), 7u);
  EXPECT_EQ(le64(p + 16), 0x100001000ull);
  EXPECT_EQ(le32(p + 24), 4096u);
  EXPECT_EQ(le32(p + 28), 0x0105u);
  EXPECT_EQ(le64(p + 32), 0x2000u);
  EXPECT_EQ(le32(p + 40), 0x4402u);
  p = be.host(qp->sq_base() + 64, 64);
  EXPECT_EQ(p[0], abi::WR_READ);
  EXPECT_EQ(p[1], 0x3);
  EXPECT_EQ(le64(p + 8), 0x1111222233334444ull);
  EXPECT_EQ(le32(p + 24), 0x80000000u);  // 2^31 is the largest valid length
  EXPECT_EQ(le64(p + 32), 0xDEAD0000BEEFull);
  EXPECT_EQ(le32(p + 40), 0x3301u);
  for (int i = 44; i < 64; ++i) EXPECT_EQ(p[i], 0) << i;
  EXPECT_EQ(p[2] | p[3] << 8, 1) << "running WQE index (idx)";

  ASSERT_EQ(be.writes.size(), 1u) << "exactly one doorbell and nothing else per post";
  EXPECT_EQ(be.writes[0].off, abi::REG_DB_SQ);
  EXPECT_EQ(be.writes[0].value, 2u << 16 | qp->qp_num());
  EXPECT_EQ(qp->sq_outstanding(), 2u);
}

TEST_F(QpTest, SqSigAllSetsSignaled) {
  QpInitAttr init;
  init.send_cq = scq.get();
  init.recv_cq = rcq.get();
  init.cap.max_send_wr = 2;
  init.sq_sig_all = true;
  auto q = dev.create_qp(*pd, init);
  to_rts(*q);
  Sge s{0x100000000ull, 8, 1};
  SendWr w;
  w.sg_list = &s;
  w.num_sge = 1;
  ASSERT_EQ(q->post_send(&w), 0);
  EXPECT_EQ(be.host(q->sq_base(), 64)[1], abi::WQE_FLAG_SIGNALED);
}

TEST_F(QpTest, InvalidWrPostsNothing) {
  to_rts();
  Sge s{0x100000000ull, 64, 1};
  Sge two[2] = {s, s};
  Sge big{0x100000000ull, 0x80000001u, 1};
  auto chain = [&](SendWr (&w)[3]) {
    for (auto& x : w) {
      x.sg_list = &s;
      x.num_sge = 1;
    }
    w[0].next = &w[1];
    w[1].next = &w[2];
  };
  for (int variant = 0; variant < 6; ++variant) {
    SendWr w[3];
    chain(w);
    switch (variant) {
      case 0: w[2].num_sge = 2; w[2].sg_list = two; break;
      case 1: w[2].num_sge = 0; break;
      case 2: w[2].opcode = WrOpcode(5); break;
      case 3: w[2].sg_list = &big; break;
      case 4: w[2].send_flags = SendFlags::Inline; break;
      case 5: w[2].sg_list = nullptr; break;
    }
    be.clear_log();
    const SendWr* bad = nullptr;
    EXPECT_EQ(qp->post_send(w, &bad), EINVAL) << variant;
    EXPECT_EQ(bad, &w[2]) << variant;
    EXPECT_TRUE(be.writes.empty()) << variant;
    EXPECT_EQ(qp->sq_pi(), 0u);
    for (uint32_t i = 0; i < 64 * qp->sq_size(); ++i) ASSERT_EQ(be.host(qp->sq_base(), 1)[i], 0) << i;
  }
}

TEST_F(QpTest, RingFullPostsNothingPartial) {
  to_rts();
  Sge s{0x100000000ull, 64, 1};
  SendWr w[8];
  for (int i = 0; i < 8; ++i) {
    w[i].wr_id = uint64_t(i);
    w[i].sg_list = &s;
    w[i].num_sge = 1;
    w[i].next = i < 7 ? &w[i + 1] : nullptr;
  }
  w[5].next = nullptr;
  ASSERT_EQ(qp->post_send(w), 0);  // 6 of 8
  w[5].next = &w[6];
  be.clear_log();
  const SendWr* bad = nullptr;
  EXPECT_EQ(qp->post_send(&w[5], &bad), ENOMEM);  // 3 more do not fit
  EXPECT_EQ(bad, &w[7]);
  EXPECT_TRUE(be.writes.empty());
  EXPECT_EQ(le64(be.host(qp->sq_base() + 6 * 64 + 8, 8)), 0u) << "slot 6 written by a failed post";
  EXPECT_EQ(qp->post_send(&w[6]), 0);  // exactly fills the ring
  EXPECT_EQ(qp->sq_outstanding(), 8u);
  EXPECT_EQ(be.writes_to(abi::REG_DB_SQ), std::vector<uint32_t>{8u << 16 | qp->qp_num()});
  w[0].next = nullptr;
  EXPECT_EQ(qp->post_send(&w[0]), ENOMEM);
}

TEST_F(QpTest, PostRequiresState) {
  Sge s{0x100000000ull, 64, 1};
  SendWr sw;
  sw.sg_list = &s;
  sw.num_sge = 1;
  RecvWr rw;
  rw.sg_list = &s;
  rw.num_sge = 1;
  EXPECT_EQ(qp->post_recv(&rw), EINVAL);  // RESET
  qp->modify(init_attr(0), kInitMask);
  EXPECT_EQ(qp->post_send(&sw), EINVAL);  // INIT
  EXPECT_EQ(qp->post_recv(&rw), 0);       // receives may be posted from INIT on
  qp->modify(rtr_attr(3, 0), kRtrMask);
  EXPECT_EQ(qp->post_send(&sw), EINVAL);  // RTR
  qp->modify(rts_attr(0), kRtsMask);
  EXPECT_EQ(qp->post_send(&sw), 0);
  QpAttr a;
  a.qp_state = QpState::Err;
  qp->modify(a, QpAttrMask::State);
  EXPECT_EQ(qp->post_send(&sw), 0);  // the NIC flushes it
  EXPECT_EQ(qp->post_send(nullptr), 0);
}

TEST_F(QpTest, PostRecvWritesWqeBytes) {
  qp->modify(init_attr(0), kInitMask);
  be.clear_log();
  Sge s[5] = {};
  RecvWr w[5];
  for (int i = 0; i < 5; ++i) {
    s[i] = Sge{0x100010000ull + 0x1000u * i, 100u + i, 0x700u + i};
    w[i].wr_id = 0xA0 + i;
    w[i].sg_list = &s[i];
    w[i].num_sge = 1;
    w[i].next = i < 4 ? &w[i + 1] : nullptr;
  }
  const RecvWr* bad = nullptr;
  EXPECT_EQ(qp->post_recv(w, &bad), ENOMEM);  // RQ holds 4
  EXPECT_EQ(bad, &w[4]);
  w[3].next = nullptr;
  ASSERT_EQ(qp->post_recv(w), 0);
  for (int i = 0; i < 4; ++i) {
    const uint8_t* p = be.host(qp->rq_base() + 64 * i, 64);
    EXPECT_EQ(le64(p), 0xA0u + i);
    EXPECT_EQ(le64(p + 8), 0x100010000ull + 0x1000u * i);
    EXPECT_EQ(le32(p + 16), 100u + i);
    EXPECT_EQ(le32(p + 20), 0x700u + i);
    for (int j = 24; j < 64; ++j) EXPECT_EQ(p[j], 0);
  }
  EXPECT_EQ(be.writes_to(abi::REG_DB_RQ), std::vector<uint32_t>{4u << 16 | qp->qp_num()});
  EXPECT_TRUE(be.writes_to(abi::REG_DB_SQ).empty());
  RecvWr two;
  Sge pair[2] = {s[0], s[1]};
  two.sg_list = pair;
  two.num_sge = 2;
  EXPECT_EQ(qp->post_recv(&two), EINVAL);
}

}  // namespace
}  // namespace srnic::sw
