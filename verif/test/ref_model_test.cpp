// Reference model tests; every expectation below is computed by hand from the fixture layout.
#include <gtest/gtest.h>

#include "fixture.hpp"
#include "srnic/verif/ref_model.hpp"

namespace srnic::verif {
namespace {

using namespace test;

QpSpec& qp0(Workload& w) { return w.hosts[0].qps[0]; }
QpSpec& qp1(Workload& w) { return w.hosts[1].qps[0]; }

const std::vector<uint8_t>& bytes(const Prediction& p, uint32_t host, size_t idx) { return p.buffer(host, idx)->bytes; }
const std::vector<Completion>& sq(const Prediction& p, uint32_t host, uint32_t qpn) {
  return p.queue(host, qpn, QueueKind::Send)->completions;
}
const std::vector<Completion>& rq(const Prediction& p, uint32_t host, uint32_t qpn) {
  return p.queue(host, qpn, QueueKind::Recv)->completions;
}

TEST(RefModel, WriteMovesBytesAndCompletes) {
  Workload w = two_hosts();
  qp0(w).send = {wr(7, WrOpcode::Write, kSrc + 4, 8, kSrcKey, kDst + 8, kDstKey)};
  const Prediction p = predict(w);
  const auto& dst = bytes(p, 1, 0);
  for (size_t i = 0; i < 64; ++i) {
    const uint8_t want = (i >= 8 && i < 16) ? uint8_t(i - 4) : uint8_t(0x80 + i);
    EXPECT_EQ(dst[i], want) << i;
  }
  ASSERT_EQ(sq(p, 0, 0x11).size(), 1u);
  const Completion& c = sq(p, 0, 0x11)[0];
  EXPECT_EQ(c.wr_id, 7u);
  EXPECT_EQ(c.status, WcStatus::Success);
  EXPECT_EQ(c.opcode, WcOpcode::RdmaWrite);
  EXPECT_EQ(c.byte_len, 8u);
  EXPECT_EQ(c.qpn, 0x11u);
  EXPECT_TRUE(rq(p, 1, 0x22).empty());
  EXPECT_TRUE(sq(p, 1, 0x22).empty());
  EXPECT_EQ(p.describe_op(p.buffer(1, 0)->writer[8]), "host 0 qp 0x11 wr_id 0x7 RDMA_WRITE (WR #0)");
  EXPECT_EQ(p.buffer(1, 0)->writer[7], -1);
}

TEST(RefModel, OverlappingWritesApplyInOrderAndUnsignaledAreSilent) {
  Workload w = two_hosts();
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc + 0, 16, kSrcKey, kDst + 0, kDstKey, 0, false),
                 wr(2, WrOpcode::Write, kSrc + 40, 8, kSrcKey, kDst + 4, kDstKey)};
  const Prediction p = predict(w);
  const auto& dst = bytes(p, 1, 0);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(dst[i], i);
  for (size_t i = 4; i < 12; ++i) EXPECT_EQ(dst[i], 40 + i - 4);
  for (size_t i = 12; i < 16; ++i) EXPECT_EQ(dst[i], i);
  EXPECT_EQ(dst[16], 0x90);
  ASSERT_EQ(sq(p, 0, 0x11).size(), 1u);
  EXPECT_EQ(sq(p, 0, 0x11)[0].wr_id, 2u);
  EXPECT_EQ(p.describe_op(p.buffer(1, 0)->writer[3]), "host 0 qp 0x11 wr_id 0x1 RDMA_WRITE (WR #0)");
  EXPECT_EQ(p.describe_op(p.buffer(1, 0)->writer[4]), "host 0 qp 0x11 wr_id 0x2 RDMA_WRITE (WR #1)");
}

TEST(RefModel, ReadFetchesRemoteBytesAfterEarlierWritesOfTheSameQp) {
  Workload w = two_hosts();
  qp0(w).send = {wr(1, WrOpcode::Read, kLoc + 20, 10, kLocKey, kDst + 3, kDstKey),
                 wr(2, WrOpcode::Write, kSrc + 0, 4, kSrcKey, kDst + 60, kDstKey),
                 wr(3, WrOpcode::Read, kLoc + 0, 6, kLocKey, kDst + 58, kDstKey)};
  const Prediction p = predict(w);
  const auto& loc = bytes(p, 0, 1);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(loc[20 + i], 0x83 + i);
  // WR 3 reads dst[58..64) = 0xba 0xbb then WR 2's bytes 0 1 2 3.
  const uint8_t want[6] = {0xBA, 0xBB, 0, 1, 2, 3};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(loc[i], want[i]);
  EXPECT_EQ(loc[6], 0xAA);
  ASSERT_EQ(sq(p, 0, 0x11).size(), 3u);
  EXPECT_EQ(sq(p, 0, 0x11)[0].opcode, WcOpcode::RdmaRead);
  EXPECT_EQ(sq(p, 0, 0x11)[0].byte_len, 10u);
  for (size_t i = 0; i < 64; ++i) EXPECT_TRUE(p.buffer(0, 1)->determined[i]);
}

// Host stores before WRs: each WRITE copies what the host stored into its source just before
// posting it; a READ sees the store into the remote source made before it; a store made before a
// WR after the error point still lands.
TEST(RefModel, HostStoresRefreshSourcesBeforeEachWr) {
  Workload w = two_hosts();
  w.fill = [](const HostStore& s, uint64_t off, uint8_t* dst, size_t n) {
    for (size_t k = 0; k < n; ++k) dst[k] = uint8_t(s.tag + off + k);
  };
  auto stored = [](SendWr x, uint32_t host, uint64_t pa, uint64_t len, uint64_t tag) {
    x.store = HostStore{host, pa, len, tag};
    return x;
  };
  qp0(w).send = {stored(wr(1, WrOpcode::Write, kSrc + 0, 8, kSrcKey, kDst + 0, kDstKey), 0, 0x10000, 8, 0x10),
                 stored(wr(2, WrOpcode::Write, kSrc + 0, 8, kSrcKey, kDst + 8, kDstKey), 0, 0x10000, 8, 0x40),
                 stored(wr(3, WrOpcode::Read, kLoc + 0, 4, kLocKey, kDst + 32, kDstKey), 1, 0x30020, 4, 0x70),
                 wr(4, WrOpcode::Write, kSrc, 4, 0x999, kDst, kDstKey),
                 stored(wr(5, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey), 0, 0x10010, 2, 0xE0)};
  const Prediction p = predict(w);
  const auto& dst = bytes(p, 1, 0);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(dst[i], 0x10 + i) << i;
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(dst[8 + i], 0x40 + i) << i;
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(dst[32 + i], 0x70 + i) << i;
  EXPECT_EQ(dst[36], 0x80 + 36);
  const auto& loc = bytes(p, 0, 1);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(loc[i], 0x70 + i) << i;
  const auto& src = bytes(p, 0, 0);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(src[i], 0x40 + i) << i;
  EXPECT_EQ(src[0x10], 0xE0);
  EXPECT_EQ(src[0x11], 0xE1);
  EXPECT_EQ(src[0x12], 0x12);
  EXPECT_EQ(p.describe_op(p.buffer(0, 0)->writer[0]), "host store before host 0 qp 0x11 wr_id 0x2 RDMA_WRITE (WR #1)");
  EXPECT_EQ(p.describe_op(p.buffer(1, 0)->writer[0]), "host 0 qp 0x11 wr_id 0x1 RDMA_WRITE (WR #0)");
  ASSERT_EQ(sq(p, 0, 0x11).size(), 5u);
  EXPECT_EQ(sq(p, 0, 0x11)[3].status, WcStatus::LocProtErr);
  EXPECT_EQ(sq(p, 0, 0x11)[4].status, WcStatus::WrFlushErr);

  Workload no_fill = w;
  no_fill.fill = nullptr;
  EXPECT_THROW(predict(no_fill), std::invalid_argument);
}

TEST(RefModel, SendsConsumeReceiveWrsInOrder) {
  Workload w = two_hosts();
  w.hosts[1].mrs[1].access = kAccessLocalWrite;
  qp1(w).recv = {rwr(100, kRbuf + 0, 16, kRbufKey), rwr(101, kRbuf + 16, 32, kRbufKey), rwr(102, kRbuf + 48, 16, kRbufKey)};
  qp0(w).send = {wr(1, WrOpcode::Send, kSrc + 10, 5, kSrcKey),
                 wr(2, WrOpcode::SendImm, kSrc + 30, 20, kSrcKey, 0, 0, 0x12345678)};
  const Prediction p = predict(w);
  const auto& rb = bytes(p, 1, 1);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(rb[i], 10 + i);
  for (size_t i = 5; i < 16; ++i) EXPECT_EQ(rb[i], 0xEE);
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(rb[16 + i], 30 + i);
  EXPECT_EQ(rb[36], 0xEE);
  const auto& r = rq(p, 1, 0x22);
  ASSERT_EQ(r.size(), 2u);  // WR 102 is still posted: no completion
  EXPECT_EQ(r[0].wr_id, 100u);
  EXPECT_EQ(r[0].opcode, WcOpcode::Recv);
  EXPECT_EQ(r[0].byte_len, 5u);
  EXPECT_EQ(r[0].wc_flags, 0u);
  EXPECT_EQ(r[0].qpn, 0x22u);
  EXPECT_EQ(r[1].wr_id, 101u);
  EXPECT_EQ(r[1].byte_len, 20u);
  EXPECT_EQ(r[1].wc_flags, kWcWithImm);
  EXPECT_EQ(r[1].imm, 0x12345678u);
  ASSERT_EQ(sq(p, 0, 0x11).size(), 2u);
  EXPECT_EQ(sq(p, 0, 0x11)[1].opcode, WcOpcode::Send);
  EXPECT_EQ(sq(p, 0, 0x11)[1].byte_len, 20u);
  EXPECT_EQ(sq(p, 0, 0x11)[1].wc_flags, 0u);
}

TEST(RefModel, WriteWithImmConsumesAReceiveWrButNotItsBuffer) {
  Workload w = two_hosts();
  qp1(w).recv = {rwr(100, kRbuf, 4, kRbufKey)};
  qp0(w).send = {wr(1, WrOpcode::WriteImm, kSrc, 12, kSrcKey, kDst, kDstKey, 0xCAFE0001)};
  const Prediction p = predict(w);
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(bytes(p, 1, 0)[i], i);
  for (uint8_t b : bytes(p, 1, 1)) EXPECT_EQ(b, 0xEE);
  const auto& r = rq(p, 1, 0x22);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].opcode, WcOpcode::RecvRdmaWithImm);
  EXPECT_EQ(r[0].byte_len, 12u);  // the DMA length, even though the receive WR holds 4 bytes
  EXPECT_EQ(r[0].imm, 0xCAFE0001u);
  EXPECT_EQ(r[0].wc_flags, kWcWithImm);
  EXPECT_EQ(sq(p, 0, 0x11)[0].opcode, WcOpcode::RdmaWrite);
}

TEST(RefModel, ZeroLengthOperationsSkipKeyChecks) {
  Workload w = two_hosts();
  qp1(w).recv = {rwr(100, 0, 0, 0xDEAD00)};
  qp0(w).send = {wr(1, WrOpcode::Write, 0, 0, 0xBAD00, 0x1, 0xBAD00),
                 wr(2, WrOpcode::Read, 0, 0, 0xBAD00, 0x1, 0xBAD00),
                 wr(3, WrOpcode::Send, 0, 0, 0xBAD00)};
  const Prediction p = predict(w);
  ASSERT_EQ(sq(p, 0, 0x11).size(), 3u);
  for (const Completion& c : sq(p, 0, 0x11)) EXPECT_EQ(c.status, WcStatus::Success);
  ASSERT_EQ(rq(p, 1, 0x22).size(), 1u);
  EXPECT_EQ(rq(p, 1, 0x22)[0].status, WcStatus::Success);
  EXPECT_EQ(rq(p, 1, 0x22)[0].byte_len, 0u);
}

// After the failing WR every later WR of the queue is flushed, signaled or not; the responder
// QP is in ERR too, so its posted receive WRs are flushed.
TEST(RefModel, BadRkeyFailsAndFlushes) {
  Workload w = two_hosts();
  qp1(w).recv = {rwr(100, kRbuf, 8, kRbufKey), rwr(101, kRbuf + 8, 8, kRbufKey)};
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey),
                 wr(2, WrOpcode::Write, kSrc, 4, kSrcKey, kDst + 8, kDstKey + 1, 0, false),
                 wr(3, WrOpcode::Write, kSrc, 4, kSrcKey, kDst + 16, kDstKey, 0, false),
                 wr(4, WrOpcode::Send, kSrc, 4, kSrcKey)};
  const Prediction p = predict(w);
  const auto& s = sq(p, 0, 0x11);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].status, WcStatus::Success);
  EXPECT_EQ(s[1].status, WcStatus::RemAccessErr);  // unsignaled, but errors always complete
  EXPECT_EQ(s[1].wr_id, 2u);
  EXPECT_EQ(s[2].status, WcStatus::WrFlushErr);
  EXPECT_EQ(s[3].status, WcStatus::WrFlushErr);
  const auto& r = rq(p, 1, 0x22);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].status, WcStatus::WrFlushErr);
  EXPECT_EQ(r[1].status, WcStatus::WrFlushErr);
  const auto& dst = bytes(p, 1, 0);
  EXPECT_EQ(dst[0], 0);
  EXPECT_EQ(dst[8], 0x88);   // the failed WRITE wrote nothing
  EXPECT_EQ(dst[16], 0x90);  // the flushed one neither
}

struct ErrorCase {
  const char* name;
  void (*setup)(Workload&);
  WcStatus requester;
  int recv_status;  // -1: no receive completion expected for the first receive WR
};

const ErrorCase kErrors[] = {
    {"read_out_of_bounds", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::Read, kLoc, 8, kLocKey, kDst + 60, kDstKey)}; },
     WcStatus::RemAccessErr, -1},
    {"write_past_end_by_one", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 5, kSrcKey, kDst + 60, kDstKey)}; },
     WcStatus::RemAccessErr, -1},
    {"write_below_iova", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst - 1, kDstKey)}; },
     WcStatus::RemAccessErr, -1},
    {"mr_without_remote_write", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kRbuf, kRbufKey)}; },
     WcStatus::RemAccessErr, -1},
    {"mr_without_remote_read", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::Read, kLoc, 4, kLocKey, kRbuf, kRbufKey)}; },
     WcStatus::RemAccessErr, -1},
    {"rkey_tag_mismatch", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey | 1)}; },
     WcStatus::RemAccessErr, -1},
    {"rkey_other_pd", [](Workload& w) { w.hosts[1].mrs[0].pd = 2; qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey)}; },
     WcStatus::RemAccessErr, -1},
    {"rkey_invalidated", [](Workload& w) { w.hosts[1].mrs[0].valid = false; qp0(w).send = {wr(1, WrOpcode::Read, kLoc, 4, kLocKey, kDst, kDstKey)}; },
     WcStatus::RemAccessErr, -1},
    {"qp_without_remote_read", [](Workload& w) { qp1(w).access = kAccessRemoteWrite; qp0(w).send = {wr(1, WrOpcode::Read, kLoc, 4, kLocKey, kDst, kDstKey)}; },
     WcStatus::RemInvReqErr, -1},
    {"qp_without_remote_write", [](Workload& w) { qp1(w).access = kAccessRemoteRead; qp0(w).send = {wr(1, WrOpcode::WriteImm, kSrc, 4, kSrcKey, kDst, kDstKey)}; },
     WcStatus::RemInvReqErr, -1},
    {"write_imm_bad_rkey", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::WriteImm, kSrc, 4, kSrcKey, kDst, 0x900)}; },
     WcStatus::RemAccessErr, int(WcStatus::RemAccessErr)},
    {"recv_too_small", [](Workload& w) { qp0(w).send = {wr(1, WrOpcode::Send, kSrc, 9, kSrcKey)}; },
     WcStatus::RemInvReqErr, int(WcStatus::RemInvReqErr)},
    {"recv_bad_lkey", [](Workload& w) { qp1(w).recv[0].lkey = 0x999; qp0(w).send = {wr(1, WrOpcode::Send, kSrc, 4, kSrcKey)}; },
     WcStatus::RemOpErr, int(WcStatus::LocQpOpErr)},
    {"recv_mr_without_local_write", [](Workload& w) { w.hosts[1].mrs[1].access = kAccessRemoteRead; qp0(w).send = {wr(1, WrOpcode::Send, kSrc, 4, kSrcKey)}; },
     WcStatus::RemOpErr, int(WcStatus::LocQpOpErr)},
};

TEST(RefModel, ResponderSideErrors) {
  for (const ErrorCase& e : kErrors) {
    Workload w = two_hosts();
    qp1(w).recv = {rwr(100, kRbuf, 8, kRbufKey), rwr(101, kRbuf + 8, 8, kRbufKey)};
    e.setup(w);
    const Prediction p = predict(w);
    ASSERT_EQ(sq(p, 0, 0x11).size(), 1u) << e.name;
    EXPECT_EQ(sq(p, 0, 0x11)[0].status, e.requester) << e.name;
    // The responder QP is in ERR: the receive WRs complete, the first with the error if it was consumed.
    const auto& r = rq(p, 1, 0x22);
    ASSERT_EQ(r.size(), 2u) << e.name;
    EXPECT_EQ(int(r[0].status), e.recv_status < 0 ? int(WcStatus::WrFlushErr) : e.recv_status) << e.name;
    EXPECT_EQ(r[1].status, WcStatus::WrFlushErr) << e.name;
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ(bytes(p, 1, 0)[i], 0x80 + i) << e.name;
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ(bytes(p, 0, 1)[i], 0xAA) << e.name;
  }
}

// On a lossy link a READ before a failing WR may never get its lost responses (the responder's
// QP is in ERR after its NAK): the send queue is relaxed, the READ may fail with the NAK's
// status and its target is checked only if it succeeds; on a clean link the READ completes and
// its bytes are always checked.
TEST(RefModel, LossyLinkRelaxesAFailingStreamAndItsReads) {
  for (const bool lossy : {false, true}) {
    Workload w = two_hosts();
    w.lossy = lossy;
    qp0(w).retry_cnt = 3;
    qp1(w).recv = {rwr(100, kRbuf, 8, kRbufKey)};
    qp0(w).send = {wr(1, WrOpcode::Read, kLoc, 8, kLocKey, kDst, kDstKey),
                   wr(2, WrOpcode::Send, kSrc, 9, kSrcKey)};  // too big for the receive: NAK
    const Prediction p = predict(w);
    const ExpectedQueue& q = *p.queue(0, 0x11, QueueKind::Send);
    EXPECT_EQ(q.relaxed, lossy);
    if (lossy) {
      ASSERT_EQ(q.candidates.size(), 2u);
      EXPECT_TRUE(q.candidates[0].can_succeed);
      EXPECT_FALSE(q.candidates[1].can_succeed);
      // the NAK's status, or a lost NAK whose retries the responder in ERR drops
      const std::vector<WcStatus> both = {WcStatus::RemInvReqErr, WcStatus::RetryExcErr};
      EXPECT_EQ(q.candidates[0].errors, both);
      EXPECT_EQ(q.candidates[1].errors, both);
      EXPECT_EQ(q.must_complete, 2u) << "the QP ends in ERR: nothing may be missing";
      // with unlimited retries the requester never gives up (fatal NAKs must not be lost then)
      qp0(w).retry_cnt = 7;
      const Prediction p7 = predict(w);
      for (const auto& c : p7.queue(0, 0x11, QueueKind::Send)->candidates)
        EXPECT_EQ(c.errors, std::vector<WcStatus>{WcStatus::RemInvReqErr});
    } else {
      ASSERT_EQ(q.completions.size(), 2u);
      EXPECT_EQ(q.completions[0].status, WcStatus::Success);
      EXPECT_EQ(q.completions[1].status, WcStatus::RemInvReqErr);
    }
    const BufferImage& loc = *p.buffer(0, 1);
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(loc.determined[i], lossy ? kByteIfWriterSucceeded : kByteDetermined) << i;
    EXPECT_EQ(p.ops[size_t(loc.writer[0])].wr_id, 1u);
    EXPECT_EQ(loc.bytes[0], 0x80);  // the READ's source bytes, when they are checked
    // the responder side is the same either way: the receive completes with the error
    ASSERT_EQ(rq(p, 1, 0x22).size(), 1u);
    EXPECT_EQ(rq(p, 1, 0x22)[0].status, WcStatus::RemInvReqErr);
  }
}

// On a lossy link a stale receive-WQE fetch may draw an RNR NAK although the receive is posted
// (decision 89): with rnr_retry below 7 any WR that needs a receive may then fail, and a READ
// before it with it. The peer keeps running: receives after that point may stay posted.
TEST(RefModel, LossyLinkWithLimitedRnrRetryRelaxesReceiveConsumers) {
  Workload w = two_hosts();
  w.lossy = true;
  qp0(w).rnr_retry = 0;
  qp1(w).recv = {rwr(100, kRbuf, 8, kRbufKey), rwr(101, kRbuf + 8, 8, kRbufKey)};
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey),
                 wr(2, WrOpcode::Read, kLoc, 4, kLocKey, kDst + 8, kDstKey),
                 wr(3, WrOpcode::Send, kSrc, 4, kSrcKey),
                 wr(4, WrOpcode::Write, kSrc, 4, kSrcKey, kDst + 16, kDstKey),
                 wr(5, WrOpcode::WriteImm, kSrc, 4, kSrcKey, kDst + 24, kDstKey, 9)};
  const Prediction p = predict(w);
  const ExpectedQueue& q = *p.queue(0, 0x11, QueueKind::Send);
  ASSERT_TRUE(q.relaxed);
  ASSERT_EQ(q.candidates.size(), 5u);
  const std::vector<WcStatus> rnr = {WcStatus::RnrRetryExcErr};
  EXPECT_TRUE(q.candidates[0].errors.empty()) << "the WRITE before any receive consumer is ACKed";
  EXPECT_EQ(q.candidates[1].errors, rnr) << "a READ before a receive consumer";
  EXPECT_EQ(q.candidates[2].errors, rnr);
  EXPECT_TRUE(q.candidates[3].errors.empty()) << "a plain WRITE is never RNR-NAKed itself";
  EXPECT_EQ(q.candidates[4].errors, rnr);
  EXPECT_EQ(q.must_complete, 5u) << "the QP completes its WRs or fails and flushes them";
  const ExpectedQueue& r = *p.queue(1, 0x22, QueueKind::Recv);
  ASSERT_TRUE(r.relaxed);
  EXPECT_EQ(r.must_complete, 0u) << "host 1 stays up: receives after an RNR failure stay posted";
  EXPECT_TRUE(r.candidates[0].errors.empty());
  EXPECT_EQ(r.candidates[1].consumer, 4);
  // bytes: the first WRITE is certain; from the SEND on only once seen to succeed
  EXPECT_EQ(p.buffer(1, 0)->determined[0], kByteDetermined);
  EXPECT_EQ(p.buffer(1, 0)->determined[16], kByteIfWriterSucceeded);
  EXPECT_EQ(p.buffer(1, 1)->determined[0], kByteIfWriterSucceeded);
  // with rnr_retry 7 an RNR NAK only costs a wait: nothing is relaxed
  qp0(w).rnr_retry = 7;
  const Prediction p7 = predict(w);
  EXPECT_FALSE(p7.queue(0, 0x11, QueueKind::Send)->relaxed);
  EXPECT_FALSE(p7.queue(1, 0x22, QueueKind::Recv)->relaxed);
}

TEST(RefModel, TooSmallReceiveBufferIsUndetermined) {
  Workload w = two_hosts();
  qp1(w).recv = {rwr(100, kRbuf + 4, 8, kRbufKey)};
  qp0(w).send = {wr(1, WrOpcode::Send, kSrc, 20, kSrcKey)};
  const Prediction p = predict(w);
  const BufferImage& rb = *p.buffer(1, 1);
  for (size_t i = 0; i < 64; ++i) EXPECT_EQ(rb.determined[i], (i >= 4 && i < 12) ? 0 : 1) << i;
}

TEST(RefModel, LocalProtectionErrorLeavesThePeerUp) {
  Workload w = two_hosts();
  qp1(w).recv = {rwr(100, kRbuf, 8, kRbufKey)};
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey),
                 wr(2, WrOpcode::Send, kSrc + 60, 8, kSrcKey),  // beyond the local MR
                 wr(3, WrOpcode::Write, kSrc, 4, kSrcKey, kDst + 8, kDstKey)};
  const Prediction p = predict(w);
  const auto& s = sq(p, 0, 0x11);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].status, WcStatus::Success);
  EXPECT_EQ(s[1].status, WcStatus::LocProtErr);
  EXPECT_EQ(s[2].status, WcStatus::WrFlushErr);
  EXPECT_TRUE(rq(p, 1, 0x22).empty());  // host 1's QP is not in ERR; its receive WR stays posted
  EXPECT_EQ(bytes(p, 1, 0)[0], 0);
  EXPECT_EQ(bytes(p, 1, 0)[8], 0x88);
}

TEST(RefModel, ReadIntoBufferWithoutLocalWriteIsLocalProtectionError) {
  Workload w = two_hosts();
  qp0(w).send = {wr(1, WrOpcode::Read, kRcv0, 4, kRcv0Key, kDst, kDstKey)};
  w.hosts[0].mrs[2].access = kAccessRemoteRead;  // no LOCAL_WRITE
  const Prediction p = predict(w);
  ASSERT_EQ(sq(p, 0, 0x11).size(), 1u);
  EXPECT_EQ(sq(p, 0, 0x11)[0].status, WcStatus::LocProtErr);
  EXPECT_EQ(bytes(p, 0, 2)[0], 0xCC);
  EXPECT_TRUE(p.buffer(0, 2)->determined[0]);
}

TEST(RefModel, RnrWithInfiniteRetryStalls) {
  Workload w = two_hosts();
  qp1(w).recv = {rwr(100, kRbuf, 8, kRbufKey)};
  qp0(w).send = {wr(1, WrOpcode::Send, kSrc, 4, kSrcKey), wr(2, WrOpcode::Send, kSrc, 4, kSrcKey),
                 wr(3, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey)};
  const Prediction p = predict(w);
  ASSERT_EQ(sq(p, 0, 0x11).size(), 1u);
  EXPECT_EQ(sq(p, 0, 0x11)[0].wr_id, 1u);
  EXPECT_EQ(rq(p, 1, 0x22).size(), 1u);
  EXPECT_EQ(bytes(p, 1, 0)[0], 0x80);  // WR 3 never executes
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("RNR"), std::string::npos);
}

TEST(RefModel, RnrRetryExhausted) {
  Workload w = two_hosts();
  qp0(w).rnr_retry = 3;
  qp0(w).send = {wr(1, WrOpcode::SendImm, kSrc, 4, kSrcKey, 0, 0, 5, false), wr(2, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey)};
  const Prediction p = predict(w);
  const auto& s = sq(p, 0, 0x11);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].status, WcStatus::RnrRetryExcErr);
  EXPECT_EQ(s[1].status, WcStatus::WrFlushErr);
}

// An RNR-NAKed WRITE_WITH_IMM may already have placed its FIRST/MIDDLE packets: its target
// bytes are undetermined, the bytes around them stay as they were.
TEST(RefModel, RnrWriteWithImmLeavesItsTargetUndetermined) {
  Workload w = two_hosts();
  qp0(w).rnr_retry = 0;
  qp0(w).send = {wr(1, WrOpcode::WriteImm, kSrc, 16, kSrcKey, kDst + 8, kDstKey, 7)};
  const Prediction p = predict(w);
  const auto& s = sq(p, 0, 0x11);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, WcStatus::RnrRetryExcErr);
  const BufferImage* dst = p.buffer(1, 0);
  for (size_t i = 0; i < 64; ++i)
    EXPECT_EQ(bool(dst->determined[i]), i < 8 || i >= 24) << "byte " << i;
  EXPECT_EQ(dst->bytes[7], 0x87);
  EXPECT_EQ(dst->bytes[24], 0x98);
}

// An error in one direction makes the other direction's completions timing dependent.
TEST(RefModel, OppositeDirectionBecomesRelaxed) {
  Workload w = two_hosts();
  qp0(w).recv = {rwr(200, kRcv0, 8, kRcv0Key), rwr(201, kRcv0 + 8, 8, kRcv0Key)};
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, 0x777)};
  qp1(w).send = {wr(10, WrOpcode::Send, kDst, 4, kDstKey), wr(11, WrOpcode::Write, kDst, 4, kDstKey, kLoc, kLocKey, 0, false),
                 wr(12, WrOpcode::Send, kDst + 4, 4, kDstKey)};
  const Prediction p = predict(w);
  EXPECT_FALSE(p.queue(0, 0x11, QueueKind::Send)->relaxed);
  EXPECT_FALSE(p.queue(1, 0x22, QueueKind::Recv)->relaxed);
  const ExpectedQueue& s1 = *p.queue(1, 0x22, QueueKind::Send);
  ASSERT_TRUE(s1.relaxed);
  ASSERT_EQ(s1.candidates.size(), 3u);
  EXPECT_FALSE(s1.candidates[1].signaled);
  EXPECT_EQ(s1.candidates[2].on_success.byte_len, 4u);
  // host 0 fails host 1's QP (bad rkey), and is in ERR itself: host 1's WRs may be flushed;
  // every one completes, as host 1's QP ends in ERR
  for (const auto& c : s1.candidates) EXPECT_EQ(c.errors, std::vector<WcStatus>{WcStatus::WrFlushErr});
  EXPECT_EQ(s1.must_complete, 3u);
  // with limited retries host 0 in ERR may also leave a request unanswered until they run out
  qp1(w).retry_cnt = 3;
  const std::vector<WcStatus> cut = {WcStatus::RetryExcErr, WcStatus::WrFlushErr};
  const Prediction p3 = predict(w);
  for (const auto& c : p3.queue(1, 0x22, QueueKind::Send)->candidates) EXPECT_EQ(c.errors, cut);
  const ExpectedQueue& r0 = *p.queue(0, 0x11, QueueKind::Recv);
  ASSERT_TRUE(r0.relaxed);
  ASSERT_EQ(r0.candidates.size(), 2u);
  EXPECT_EQ(r0.candidates[1].on_success.byte_len, 4u);
  EXPECT_EQ(r0.candidates[0].consumer, 0);
  EXPECT_EQ(r0.candidates[1].consumer, 2);
  EXPECT_EQ(r0.candidates[1].errors, std::vector<WcStatus>{WcStatus::WrFlushErr});
  EXPECT_EQ(r0.must_complete, 2u);
  // Bytes the relaxed stream writes are checked only where their writer is seen to succeed.
  EXPECT_EQ(p.buffer(0, 1)->determined[0], kByteIfWriterSucceeded);
  EXPECT_EQ(p.buffer(0, 1)->bytes[0], 0x80);
  EXPECT_EQ(p.buffer(0, 2)->determined[0], kByteIfWriterSucceeded);
  EXPECT_EQ(p.buffer(0, 2)->bytes[0], 0x80);
  EXPECT_EQ(p.buffer(0, 2)->determined[4], kByteDetermined);
}

// The host moves QP 0x11 to ERR at a time the model cannot know: its send queue, its receive
// queue and the peer receive queue its SENDs consume are relaxed, the bytes it would write are
// not predicted, and the other direction (no sends) expects nothing.
TEST(RefModel, HostErrRelaxesTheConnection) {
  Workload w = two_hosts();
  qp0(w).host_err = true;
  qp0(w).recv = {rwr(200, kRcv0, 8, kRcv0Key)};
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey), wr(2, WrOpcode::Send, kSrc + 8, 4, kSrcKey),
                 wr(3, WrOpcode::Read, kLoc, 4, kLocKey, kDst + 16, kDstKey)};
  qp1(w).recv = {rwr(300, kRbuf, 8, kRbufKey)};
  const Prediction p = predict(w);
  const ExpectedQueue& s0 = *p.queue(0, 0x11, QueueKind::Send);
  ASSERT_TRUE(s0.relaxed);
  ASSERT_EQ(s0.candidates.size(), 3u);
  EXPECT_TRUE(s0.candidates[0].can_succeed);
  // the peer stays up: no RETRY_EXC_ERR, only flushes, and every WR completes
  for (const auto& c : s0.candidates) EXPECT_EQ(c.errors, std::vector<WcStatus>{WcStatus::WrFlushErr});
  EXPECT_EQ(s0.must_complete, 3u);
  const ExpectedQueue& r0 = *p.queue(0, 0x11, QueueKind::Recv);
  ASSERT_TRUE(r0.relaxed) << "the QP's own receives complete (flushed) when the host says";
  ASSERT_EQ(r0.candidates.size(), 1u);
  EXPECT_FALSE(r0.candidates[0].can_succeed) << "nothing consumes it: it can only be flushed";
  EXPECT_EQ(r0.candidates[0].errors, std::vector<WcStatus>{WcStatus::WrFlushErr});
  EXPECT_EQ(r0.must_complete, 1u);
  const ExpectedQueue& r1 = *p.queue(1, 0x22, QueueKind::Recv);
  ASSERT_TRUE(r1.relaxed);
  ASSERT_EQ(r1.candidates.size(), 1u);
  EXPECT_TRUE(r1.candidates[0].can_succeed);
  EXPECT_TRUE(r1.candidates[0].errors.empty()) << "host 1's QP never fails: its receives only succeed";
  EXPECT_EQ(r1.candidates[0].consumer, 1);
  EXPECT_EQ(r1.must_complete, 0u) << "a receive the SEND never reached stays posted";
  EXPECT_TRUE(p.queue(1, 0x22, QueueKind::Send)->candidates.empty());
  EXPECT_TRUE(p.queue(1, 0x22, QueueKind::Send)->completions.empty());
  // the bytes the connection's WRs place are checked where those WRs are seen to succeed
  EXPECT_EQ(p.buffer(1, 0)->determined[0], kByteIfWriterSucceeded) << "the WRITE's";
  EXPECT_EQ(p.buffer(1, 0)->bytes[0], 0);
  EXPECT_EQ(p.buffer(1, 1)->determined[0], kByteIfWriterSucceeded) << "the SEND's";
  EXPECT_EQ(p.buffer(1, 1)->bytes[0], 8);
  EXPECT_EQ(p.buffer(0, 1)->determined[0], kByteIfWriterSucceeded) << "the READ's";
  EXPECT_EQ(p.buffer(0, 1)->bytes[0], 0x90);
  EXPECT_EQ(p.buffer(1, 0)->determined[8], kByteDetermined) << "bytes no WR touches stay predicted";
  const OpRef& send = p.ops[size_t(p.buffer(1, 1)->writer[0])];
  EXPECT_EQ(send.wr_id, 2u);
  EXPECT_EQ(send.recv_index, 0) << "its receive's completion proves it too";
}

// The hosts reset the connection at a time the model cannot know: every queue of both QPs is
// relaxed, no WR may fail for it, nothing must complete, and the bytes its WRs place are checked
// only where their writer is seen to succeed.
TEST(RefModel, ResetRelaxesTheConnectionAndRequiresNothing) {
  Workload w = two_hosts();
  qp0(w).reset = qp1(w).reset = true;
  qp0(w).recv = {rwr(200, kRcv0, 8, kRcv0Key)};
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey), wr(2, WrOpcode::Send, kSrc + 8, 4, kSrcKey)};
  qp1(w).recv = {rwr(300, kRbuf, 8, kRbufKey)};
  qp1(w).send = {wr(10, WrOpcode::Send, kDst + 32, 4, kDstKey)};
  const Prediction p = predict(w);
  for (uint32_t h = 0; h < 2; ++h)
    for (QueueKind k : {QueueKind::Send, QueueKind::Recv}) {
      const ExpectedQueue& q = *p.queue(h, h ? 0x22 : 0x11, k);
      EXPECT_TRUE(q.relaxed);
      EXPECT_TRUE(q.reset);
      EXPECT_EQ(q.must_complete, 0u) << "a reset may come before anything completes";
      for (const auto& c : q.candidates) {
        EXPECT_TRUE(c.can_succeed);
        EXPECT_TRUE(c.errors.empty()) << "a reset completes nothing in error";
      }
    }
  EXPECT_EQ(p.queue(1, 0x22, QueueKind::Recv)->candidates[0].consumer, 1);
  EXPECT_EQ(p.queue(0, 0x11, QueueKind::Recv)->candidates[0].consumer, 0);
  EXPECT_EQ(p.buffer(1, 0)->determined[0], kByteIfWriterSucceeded) << "the WRITE's";
  EXPECT_EQ(p.buffer(1, 1)->determined[0], kByteIfWriterSucceeded) << "the SEND's";
  EXPECT_EQ(p.buffer(0, 2)->determined[0], kByteIfWriterSucceeded) << "host 1's SEND's";
  EXPECT_EQ(p.buffer(1, 0)->determined[8], kByteDetermined) << "bytes no WR touches stay predicted";
}

TEST(RefModel, WritesFromTwoQpsToTheSameBytesAreUndetermined) {
  Workload w = two_hosts();
  QpSpec a2 = qp0(w), b2 = qp1(w);
  a2.qpn = 0x12;
  a2.peer_qpn = 0x23;
  b2.qpn = 0x23;
  b2.peer_qpn = 0x12;
  w.hosts[0].qps.push_back(a2);
  w.hosts[1].qps.push_back(b2);
  qp0(w).send = {wr(1, WrOpcode::Write, kSrc, 8, kSrcKey, kDst, kDstKey)};
  w.hosts[0].qps[1].send = {wr(2, WrOpcode::Write, kSrc + 32, 8, kSrcKey, kDst + 4, kDstKey)};
  const Prediction p = predict(w);
  const BufferImage& d = *p.buffer(1, 0);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(d.determined[i]) << i;
  for (size_t i = 4; i < 8; ++i) EXPECT_FALSE(d.determined[i]) << i;
  for (size_t i = 8; i < 12; ++i) EXPECT_TRUE(d.determined[i]) << i;
  EXPECT_EQ(d.bytes[0], 0);
  EXPECT_EQ(d.bytes[11], 32 + 7);
}

TEST(RefModel, ReadTargetReusedWithoutFenceIsUndetermined) {
  for (bool fence : {false, true}) {
    Workload w = two_hosts();
    qp1(w).recv = {rwr(100, kRbuf, 16, kRbufKey)};
    SendWr send = wr(2, WrOpcode::Send, kLoc, 8, kLocKey);
    send.fence = fence;
    qp0(w).send = {wr(1, WrOpcode::Read, kLoc + 4, 4, kLocKey, kDst, kDstKey), send};
    const Prediction p = predict(w);
    const BufferImage& rb = *p.buffer(1, 1);
    for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(rb.determined[i]);
    for (size_t i = 4; i < 8; ++i) {
      EXPECT_EQ(bool(rb.determined[i]), fence) << i;
      if (fence) {
        EXPECT_EQ(rb.bytes[i], 0x80 + i - 4);
      }
    }
  }
}

TEST(RefModel, ReadOfBytesAnotherQpWritesIsUndetermined) {
  Workload w = two_hosts();
  qp1(w).send = {wr(1, WrOpcode::Write, kDst, 4, kDstKey, kSrc + 8, kSrcKey)};   // host 1 -> host 0 src[8..12)
  qp0(w).send = {wr(2, WrOpcode::Write, kSrc + 6, 8, kSrcKey, kDst + 32, kDstKey)};  // host 0 sends src[6..14)
  const Prediction p = predict(w);
  const BufferImage& d = *p.buffer(1, 0);
  EXPECT_TRUE(d.determined[32]);
  EXPECT_TRUE(d.determined[33]);
  for (size_t i = 34; i < 38; ++i) EXPECT_FALSE(d.determined[i]) << i;
  EXPECT_TRUE(d.determined[38]);
  EXPECT_EQ(d.bytes[39], 13);
  EXPECT_TRUE(p.buffer(0, 0)->determined[8]);  // the write into src itself is certain
  EXPECT_EQ(p.buffer(0, 0)->bytes[8], 0x80);
}

TEST(RefModel, LoopbackQpOnOneHost) {
  Workload w = two_hosts();
  QpSpec a = qp0(w);
  a.qpn = 0x31;
  a.peer_host = 0;
  a.peer_qpn = 0x32;
  QpSpec b = a;
  b.qpn = 0x32;
  b.peer_qpn = 0x31;
  a.send = {wr(5, WrOpcode::Write, kSrc, 3, kSrcKey, kLoc + 1, kLocKey)};
  w.hosts[0].qps = {a, b};
  w.hosts[1].qps.clear();
  const Prediction p = predict(w);
  EXPECT_EQ(bytes(p, 0, 1)[0], 0xAA);
  EXPECT_EQ(bytes(p, 0, 1)[1], 0);
  EXPECT_EQ(bytes(p, 0, 1)[3], 2);
  EXPECT_EQ(sq(p, 0, 0x31).size(), 1u);
}

TEST(RefModel, InconsistentWorkloadsThrow) {
  Workload w = two_hosts();
  qp1(w).peer_qpn = 0x99;
  EXPECT_THROW(predict(w), std::invalid_argument);

  Workload o = two_hosts();
  o.hosts[0].buffers[1].pa = 0x10020;  // overlaps "src"
  EXPECT_THROW(predict(o), std::invalid_argument);

  Workload m = two_hosts();
  m.hosts[1].mrs[0].pa = 0x50000;  // MR over unbacked memory
  qp0(m).send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey)};
  EXPECT_THROW(predict(m), std::invalid_argument);

  Workload k = two_hosts();
  k.hosts[1].mrs[1].key = kDstKey | 5;  // same table index as "dst"
  EXPECT_THROW(predict(k), std::invalid_argument);
}

}  // namespace
}  // namespace srnic::verif
