// fatal_test.cpp: a NIC that went fatal (NIC_STATUS, decision 108): decoding the register,
// learning it only through Device::query_fatal, the software flush of every outstanding WR by
// poll_cq after the CQEs the NIC wrote, posting refused, modify and destroy still working.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "cqe_writer.hpp"
#include "memory_backend.hpp"
#include "qp_fixture.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sw {
namespace {

using test::CqeWriter;

// NIC_STATUS of a read answered with SLVERR on AXI ID 1 (TX payload)
constexpr uint32_t kTxPayloadSlverr = abi::NIC_ST_FATAL | 2u << 2 | 1u << 4;

TEST(NicStatus, DecodesFieldsAndNamesTheError) {
  NicStatus s = NicStatus::decode(kTxPayloadSlverr);
  EXPECT_EQ(s.raw, 0x19u);
  EXPECT_TRUE(s.fatal);
  EXPECT_FALSE(s.is_write);
  EXPECT_EQ(s.code, 2);
  EXPECT_EQ(s.axi_id, 1);
  EXPECT_EQ(to_string(s), "PCIe read error (SLVERR) on AXI ID 1 (TX payload)");

  s = NicStatus::decode(abi::NIC_ST_FATAL | abi::NIC_ST_WRITE | 3u << 2);
  EXPECT_TRUE(s.fatal);
  EXPECT_TRUE(s.is_write);
  EXPECT_EQ(s.code, 3);
  EXPECT_EQ(s.axi_id, 0);
  EXPECT_EQ(to_string(s), "PCIe write error (DECERR)");

  EXPECT_EQ(to_string(NicStatus::decode(0x01 | 3u << 2 | 0u << 4)), "PCIe read error (DECERR) on AXI ID 0 (send WQE)");
  EXPECT_EQ(to_string(NicStatus::decode(0x01 | 2u << 2 | 2u << 4)), "PCIe read error (SLVERR) on AXI ID 2 (receive WQE)");
  EXPECT_EQ(to_string(NicStatus::decode(0x01 | 3u << 2 | 3u << 4)), "PCIe read error (DECERR) on AXI ID 3 (completion WQE)");
  EXPECT_EQ(to_string(NicStatus::decode(0x01 | 2u << 2 | 9u << 4)), "PCIe read error (SLVERR) on AXI ID 9");
  EXPECT_EQ(to_string(NicStatus::decode(0x03 | 2u << 2 | 5u << 4)), "PCIe write error (SLVERR) on AXI ID 5");

  // without FATAL the other bits mean nothing
  s = NicStatus::decode(0xFEu);
  EXPECT_FALSE(s.fatal);
  EXPECT_EQ(to_string(s), "no fatal error");
  EXPECT_EQ(to_string(NicStatus{}), "no fatal error");

  // what a read of a device that is gone returns: fatal, and said so
  s = NicStatus::decode(0xFFFFFFFFu);
  EXPECT_TRUE(s.fatal);
  EXPECT_EQ(to_string(s), "NIC_STATUS reads 0xFFFFFFFF: the NIC does not answer");
}

class FatalTest : public test::QpFixture {
 protected:
  Sge sge{0x100000000ull, 64, 1};

  // Posts one send WR per opcode given, wr_ids first_id, first_id + 1, ...; flags per WR.
  void post_sends(QueuePair& q, uint64_t first_id, const std::vector<WrOpcode>& ops,
                  const std::vector<unsigned>& flags) {
    std::vector<SendWr> w(ops.size());
    for (size_t i = 0; i < w.size(); ++i) {
      w[i].wr_id = first_id + i;
      w[i].sg_list = &sge;
      w[i].num_sge = 1;
      w[i].opcode = ops[i];
      w[i].send_flags = flags[i];
      w[i].next = i + 1 < w.size() ? &w[i + 1] : nullptr;
    }
    ASSERT_EQ(q.post_send(w.data()), 0);
  }
  void post_sends(QueuePair& q, uint64_t first_id, int n) {
    post_sends(q, first_id, std::vector<WrOpcode>(n, WrOpcode::Send), std::vector<unsigned>(n, 0u));
  }
  void post_recvs(QueuePair& q, uint64_t first_id, int n) {
    for (int i = 0; i < n; ++i) {
      RecvWr r;
      r.wr_id = first_id + i;
      r.sg_list = &sge;
      r.num_sge = 1;
      ASSERT_EQ(q.post_recv(&r), 0);
    }
  }
  void go_fatal() {
    be.nic_status = kTxPayloadSlverr;
    ASSERT_TRUE(dev.query_fatal().has_value());
  }
  // Polls `cq` with batches of `batch` until it is empty; checks no call returns more than asked.
  static std::vector<WorkCompletion> drain(CompletionQueue& cq, int batch) {
    std::vector<WorkCompletion> all;
    std::vector<WorkCompletion> wc(batch + 1);
    for (int calls = 0; calls < 1000; ++calls) {
      const int n = cq.poll_cq(batch, wc.data());
      EXPECT_LE(n, batch);
      if (n <= 0) break;
      all.insert(all.end(), wc.begin(), wc.begin() + n);
    }
    return all;
  }
  static std::vector<uint64_t> ids(const std::vector<WorkCompletion>& wc) {
    std::vector<uint64_t> v;
    for (const WorkCompletion& w : wc) v.push_back(w.wr_id);
    return v;
  }
};

TEST_F(FatalTest, SeenOnlyThroughQueryFatal) {
  to_rts();
  post_sends(*qp, 10, 3);
  be.clear_log();
  EXPECT_FALSE(dev.query_fatal().has_value());
  EXPECT_FALSE(dev.query_fatal().has_value());
  EXPECT_EQ(be.reads, (std::vector<uint32_t>{abi::REG_NIC_STATUS, abi::REG_NIC_STATUS}))
      << "a healthy device reads NIC_STATUS on every query";

  be.nic_status = kTxPayloadSlverr;  // the NIC went fatal; the host has not looked yet
  be.clear_log();
  WorkCompletion wc[8];
  EXPECT_EQ(scq->poll_cq(8, wc), 0);
  EXPECT_TRUE(be.reads.empty()) << "poll_cq must not read registers";
  EXPECT_FALSE(dev.fatal().has_value());
  EXPECT_EQ(qp->sq_outstanding(), 3u);
  post_sends(*qp, 13, 1);  // not known fatal yet: posted as usual
  EXPECT_EQ(qp->sq_outstanding(), 4u);

  be.clear_log();
  const std::optional<NicStatus> f = dev.query_fatal();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->raw, kTxPayloadSlverr);
  ASSERT_TRUE(dev.fatal().has_value());
  EXPECT_EQ(dev.fatal()->raw, kTxPayloadSlverr);
  EXPECT_EQ(be.reads, std::vector<uint32_t>{abi::REG_NIC_STATUS});
  be.nic_status = 0;  // sticky: once seen, it is not read again
  EXPECT_EQ(dev.query_fatal()->raw, kTxPayloadSlverr);
  EXPECT_EQ(be.reads.size(), 1u);

  be.clear_log();
  ASSERT_EQ(scq->poll_cq(8, wc), 4);
  EXPECT_TRUE(be.reads.empty()) << "the flush reads no register either";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(wc[i].wr_id, 10u + i);
}

// The CQEs the NIC wrote before FATAL retire their WRs (and the unsignaled ones before them) as
// always; the rest complete once each, flushed in posted order, also across several polls.
TEST_F(FatalTest, FlushFollowsTheNicsCqesExactlyOnce) {
  to_rts();
  using O = WrOpcode;
  const unsigned S = SendFlags::Signaled;
  // 0 unsignaled, 1 signaled, 2 unsignaled, 3 signaled, 4 and 5 unsignaled, 6 signaled
  post_sends(*qp, 100, {O::RdmaWrite, O::Send, O::RdmaRead, O::RdmaWriteWithImm, O::SendWithImm, O::Send, O::RdmaRead},
             {0, S, 0, S, 0, 0, S});
  CqeWriter cw(be, *scq);
  cw.push(qp->qp_num(), 1, abi::WC_SEND, 101);
  WorkCompletion wc[8];
  ASSERT_EQ(scq->poll_cq(8, wc), 1);
  EXPECT_EQ(qp->sq_outstanding(), 5u);
  abi::Cqe c{};
  c.qpn = qp->qp_num();
  c.wqe_idx = 3;
  c.opcode = abi::WC_RDMA_WRITE;
  c.wr_id = 103;
  c.byte_len = 64;
  abi::set_cqe_timestamp(c, 777);
  cw.push(c);  // written before FATAL, not yet polled
  go_fatal();

  ASSERT_EQ(scq->poll_cq(2, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 103u) << "the NIC's CQE comes first, unchanged";
  EXPECT_EQ(wc[0].status, WcStatus::Success);
  EXPECT_EQ(wc[0].byte_len, 64u);
  EXPECT_EQ(wc[0].timestamp, 777u);
  EXPECT_EQ(wc[1].wr_id, 104u) << "WR 2 was retired by the CQE of WR 3, WR 4 is flushed next";
  EXPECT_EQ(wc[1].status, WcStatus::WrFlushErr);
  EXPECT_EQ(wc[1].opcode, WcOpcode::Send);
  EXPECT_EQ(wc[1].qp_num, qp->qp_num());
  EXPECT_EQ(wc[1].byte_len, 0u);
  EXPECT_EQ(wc[1].wc_flags, 0u);
  EXPECT_EQ(wc[1].timestamp, 0u);
  EXPECT_EQ(qp->sq_outstanding(), 2u);

  ASSERT_EQ(scq->poll_cq(1, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 105u);
  EXPECT_EQ(wc[0].status, WcStatus::WrFlushErr);
  ASSERT_EQ(scq->poll_cq(8, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 106u);
  EXPECT_EQ(wc[0].opcode, WcOpcode::RdmaRead);
  EXPECT_EQ(qp->sq_outstanding(), 0u);
  EXPECT_EQ(scq->poll_cq(8, wc), 0);
  EXPECT_EQ(rcq->poll_cq(8, wc), 0);
  EXPECT_EQ(qp->stale_completions(), 0u);
  EXPECT_EQ(scq->ci(), 2u) << "flushed completions take no ring entry";
}

TEST_F(FatalTest, UnsignaledSendsFlushWithTheirOpcodes) {
  to_rts();
  using O = WrOpcode;
  post_sends(*qp, 0xAB00000000ull, {O::RdmaWrite, O::RdmaWriteWithImm, O::Send, O::SendWithImm, O::RdmaRead},
             std::vector<unsigned>(5, 0u));
  go_fatal();
  WorkCompletion wc[8];
  ASSERT_EQ(scq->poll_cq(8, wc), 5);
  const WcOpcode expect[5] = {WcOpcode::RdmaWrite, WcOpcode::RdmaWrite, WcOpcode::Send, WcOpcode::Send,
                              WcOpcode::RdmaRead};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(wc[i].wr_id, 0xAB00000000ull + i);
    EXPECT_EQ(wc[i].status, WcStatus::WrFlushErr);
    EXPECT_EQ(wc[i].opcode, expect[i]) << i;
    EXPECT_EQ(wc[i].qp_num, qp->qp_num());
  }
  EXPECT_EQ(qp->sq_outstanding(), 0u);
}

// The WRs come from the ring the library wrote: after wrapping it, the flushed wr_ids are the
// current ones, not those of earlier passes.
TEST_F(FatalTest, FlushReadsTheCurrentPassOfTheRing) {
  qp->modify(init_attr(0), kInitMask);
  CqeWriter cw(be, *rcq);
  WorkCompletion wc[8];
  post_recvs(*qp, 0, 4);
  for (uint16_t i = 0; i < 3; ++i) cw.push(qp->qp_num(), i, abi::WC_RECV, i);
  ASSERT_EQ(rcq->poll_cq(8, wc), 3);
  post_recvs(*qp, 4, 3);  // slots 0..2 again
  go_fatal();
  ASSERT_EQ(rcq->poll_cq(8, wc), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(wc[i].wr_id, 3u + i);
    EXPECT_EQ(wc[i].opcode, WcOpcode::Recv);
    EXPECT_EQ(wc[i].status, WcStatus::WrFlushErr);
  }
  EXPECT_EQ(qp->rq_outstanding(), 0u);
}

TEST_F(FatalTest, SeparateCqsFlushOnlyTheirQueue) {
  to_rts();
  post_sends(*qp, 10, 2);
  post_recvs(*qp, 20, 3);
  go_fatal();
  const auto s = drain(*scq, 8);
  const auto r = drain(*rcq, 8);
  EXPECT_EQ(ids(s), (std::vector<uint64_t>{10, 11}));
  EXPECT_EQ(ids(r), (std::vector<uint64_t>{20, 21, 22}));
  for (const auto& w : s) EXPECT_EQ(w.opcode, WcOpcode::Send);
  for (const auto& w : r) {
    EXPECT_EQ(w.opcode, WcOpcode::Recv);
    EXPECT_EQ(w.qp_num, qp->qp_num());
  }
}

// One CQ shared by QP a's two queues and QP b's SQ (b's RQ on another CQ), polled two at a time
// while the NIC's CQEs are still in the ring.
TEST_F(FatalTest, SharedCqFlushesEveryAttachedQueueInPostedOrder) {
  auto cq = dev.create_cq(16);
  auto a = make_qp(8, 8, cq.get(), cq.get());
  auto b = make_qp(8, 8, cq.get(), rcq.get());
  to_rts();
  to_rts(*a);
  to_rts(*b);
  post_sends(*a, 100, 4);
  post_recvs(*a, 200, 3);
  post_sends(*b, 300, 3);
  post_recvs(*b, 400, 2);
  post_sends(*qp, 500, 2);  // on scq: not this CQ's
  CqeWriter cw(be, *cq);
  cw.push(b->qp_num(), 0, abi::WC_SEND, 300);
  cw.push(a->qp_num(), 0, abi::WC_RECV, 200);
  cw.push(a->qp_num(), 1, abi::WC_SEND, 101);  // also retires the unsignaled WR 100
  go_fatal();

  const auto all = drain(*cq, 2);
  EXPECT_EQ(ids(all), (std::vector<uint64_t>{300, 200, 101, 102, 103, 201, 202, 301, 302}));
  ASSERT_EQ(all.size(), 9u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(all[i].status, WcStatus::Success) << i;
  for (size_t i = 3; i < all.size(); ++i) {
    EXPECT_EQ(all[i].status, WcStatus::WrFlushErr) << i;
    EXPECT_EQ(all[i].qp_num, i < 7 ? a->qp_num() : b->qp_num()) << i;
    EXPECT_EQ(all[i].opcode, i == 5 || i == 6 ? WcOpcode::Recv : WcOpcode::Send) << i;
  }
  EXPECT_EQ(a->sq_outstanding() + a->rq_outstanding() + b->sq_outstanding(), 0u);
  EXPECT_EQ(b->rq_outstanding(), 2u) << "b's RQ belongs to the other CQ";
  EXPECT_EQ(qp->sq_outstanding(), 2u);
  EXPECT_EQ(ids(drain(*rcq, 1)), (std::vector<uint64_t>{400, 401}));
  EXPECT_EQ(ids(drain(*scq, 1)), (std::vector<uint64_t>{500, 501}));
  EXPECT_EQ(a->stale_completions() + b->stale_completions(), 0u);

  WorkCompletion wc[4];
  EXPECT_EQ(cq->poll_cq(0, wc), 0);
  EXPECT_EQ(cq->poll_cq(4, wc), 0);
}

TEST_F(FatalTest, ZeroEntriesFlushesNothing) {
  to_rts();
  post_sends(*qp, 1, 2);
  go_fatal();
  WorkCompletion wc[1];
  EXPECT_EQ(scq->poll_cq(0, wc), 0);
  EXPECT_EQ(qp->sq_outstanding(), 2u);
}

TEST_F(FatalTest, PostingThrowsEioNamingTheCause) {
  to_rts();
  post_sends(*qp, 1, 1);
  go_fatal();
  be.clear_log();
  SendWr sw;
  sw.sg_list = &sge;
  sw.num_sge = 1;
  const SendWr* bad_s = nullptr;
  try {
    qp->post_send(&sw, &bad_s);
    ADD_FAILURE() << "post_send on a fatal device accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
    EXPECT_EQ(std::string(e.what()),
              "srnic: post_send on QP 2 refused: the NIC is fatal until reset after a PCIe read error "
              "(SLVERR) on AXI ID 1 (TX payload)");
  }
  EXPECT_EQ(bad_s, &sw);
  RecvWr rw;
  rw.sg_list = &sge;
  rw.num_sge = 1;
  const RecvWr* bad_r = nullptr;
  try {
    qp->post_recv(&rw, &bad_r);
    ADD_FAILURE() << "post_recv on a fatal device accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), EIO);
    EXPECT_NE(std::string(e.what()).find("post_recv on QP 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("SLVERR"), std::string::npos) << e.what();
  }
  EXPECT_EQ(bad_r, &rw);
  EXPECT_TRUE(be.writes.empty()) << "nothing written, no doorbell";
  EXPECT_EQ(qp->sq_pi(), 1u);
  EXPECT_EQ(qp->rq_pi(), 0u);
  EXPECT_EQ(qp->sq_outstanding(), 1u);
  EXPECT_EQ(qp->post_send(nullptr), 0) << "an empty list posts nothing and is no error";
}

// The command interface outlives FATAL: ERR keeps the WRs to be flushed, RESET discards them
// (as verbs do), and QPs and CQs can still be destroyed.
TEST_F(FatalTest, ModifyAndDestroyStillWork) {
  auto q = make_qp(4, 4, scq.get(), rcq.get());
  to_rts();
  to_rts(*q);
  post_sends(*qp, 10, 3);
  post_sends(*q, 20, 2);
  post_recvs(*q, 30, 2);
  go_fatal();
  be.clear_log();
  QpAttr a;
  a.qp_state = QpState::Err;
  qp->modify(a, QpAttrMask::State);
  EXPECT_EQ(qp->state(), QpState::Err);
  ASSERT_EQ(be.commands.size(), 1u);
  EXPECT_EQ(be.commands[0].payload[0], abi::QPS_ERR);
  a.qp_state = QpState::Reset;
  q->modify(a, QpAttrMask::State);
  EXPECT_EQ(q->state(), QpState::Reset);
  EXPECT_EQ(ids(drain(*scq, 8)), (std::vector<uint64_t>{10, 11, 12})) << "q's WRs went with its RESET";
  EXPECT_EQ(ids(drain(*rcq, 8)), std::vector<uint64_t>{});

  const uint32_t qpn = qp->qp_num();
  be.clear_log();
  qp.reset();
  q.reset();
  scq.reset();
  ASSERT_EQ(be.commands.size(), 3u);
  EXPECT_EQ(be.commands[0].index, qpn);
  EXPECT_EQ(be.commands[0].payload[0], abi::QPS_RESET);
  EXPECT_EQ(be.commands[2].opcode, abi::CMD_CQ_WRITE);
  EXPECT_EQ(dev.find_qp(qpn), nullptr);
}

// A destroyed QP's WRs are gone with it; the CQ it used flushes only the QPs still attached.
TEST_F(FatalTest, DestroyedQpIsNotFlushed) {
  auto q = make_qp(4, 4, scq.get(), rcq.get());
  to_rts();
  to_rts(*q);
  post_sends(*q, 20, 2);
  post_sends(*qp, 10, 1);
  go_fatal();
  q.reset();
  EXPECT_EQ(ids(drain(*scq, 8)), std::vector<uint64_t>{10});
}

}  // namespace
}  // namespace srnic::sw
