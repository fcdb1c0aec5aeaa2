// Scoreboard tests: exact and relaxed completion matching, memory comparison and its report.
#include <gtest/gtest.h>

#include <cstring>

#include "fixture.hpp"
#include "srnic/verif/scoreboard.hpp"

namespace srnic::verif {
namespace {

using namespace test;

// host 0 QP 0x11: WRITE (signaled), SEND_WITH_IMM (signaled), WRITE (unsignaled), READ.
Workload basic() {
  Workload w = two_hosts();
  w.hosts[1].qps[0].recv = {rwr(100, kRbuf, 16, kRbufKey)};
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Write, kSrc, 8, kSrcKey, kDst, kDstKey),
                            wr(2, WrOpcode::SendImm, kSrc + 8, 6, kSrcKey, 0, 0, 0xABCD),
                            wr(3, WrOpcode::Write, kSrc + 16, 4, kSrcKey, kDst + 20, kDstKey, 0, false),
                            wr(4, WrOpcode::Read, kLoc, 4, kLocKey, kDst + 20, kDstKey)};
  return w;
}

Completion cqe(uint64_t id, WcStatus st, WcOpcode op, uint32_t len, uint32_t qpn, uint32_t imm = 0, uint32_t flags = 0) {
  return Completion{id, st, op, len, imm, flags, qpn};
}

// Host memory after a correct run: the prediction's bytes.
struct FakeMemory {
  const Prediction& p;
  std::map<std::pair<uint32_t, uint64_t>, uint8_t> overrides;
  void read(uint32_t host, uint64_t pa, uint8_t* dst, size_t len) const {
    for (const BufferImage& b : p.buffers)
      if (b.host == host && b.pa == pa) std::memcpy(dst, b.bytes.data(), len);
    for (const auto& [k, v] : overrides)
      if (k.first == host && k.second >= pa && k.second < pa + len) dst[k.second - pa] = v;
  }
};

TEST(Scoreboard, CorrectRunMatches) {
  const Prediction p = predict(basic());
  Scoreboard sb(p);
  EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 8, 0x11)));
  EXPECT_TRUE(sb.on_completion(1, QueueKind::Recv, cqe(100, WcStatus::Success, WcOpcode::Recv, 6, 0x22, 0xABCD, kWcWithImm)));
  EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, cqe(2, WcStatus::Success, WcOpcode::Send, 6, 0x11)));
  EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, cqe(4, WcStatus::Success, WcOpcode::RdmaRead, 4, 0x11)));
  FakeMemory m{p, {}};
  EXPECT_TRUE(sb.check_memory([&](uint32_t h, uint64_t pa, uint8_t* d, size_t n) { m.read(h, pa, d, n); }));
  EXPECT_TRUE(sb.finish());
  EXPECT_TRUE(sb.ok()) << sb.first_mismatch();
  EXPECT_EQ(sb.completion_matches(), 4u);
  EXPECT_EQ(sb.byte_matches(), 64u * 5);
  EXPECT_EQ(sb.bytes_skipped(), 0u);
  // The READ saw WR 3's bytes: loc[0..4) = src[16..20).
  EXPECT_EQ(p.buffer(0, 1)->bytes[0], 16);
}

TEST(Scoreboard, ReportsFirstCompletionMismatchWithContext) {
  const Prediction p = predict(basic());
  Scoreboard sb(p);
  EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 8, 0x11)));
  EXPECT_FALSE(sb.on_completion(0, QueueKind::Send, cqe(2, WcStatus::Success, WcOpcode::Send, 7, 0x11)));
  EXPECT_FALSE(sb.on_completion(0, QueueKind::Send, cqe(9, WcStatus::Success, WcOpcode::Send, 6, 0x11)));
  EXPECT_FALSE(sb.ok());
  EXPECT_EQ(sb.mismatches(), 2u);
  const std::string& m = sb.first_mismatch();
  EXPECT_NE(m.find("host 0 qp 0x11 send queue"), std::string::npos) << m;
  EXPECT_NE(m.find("SEND wr_id 0x2"), std::string::npos) << m;
  EXPECT_NE(m.find("byte_len differs"), std::string::npos) << m;
}

TEST(Scoreboard, ComparesImmOnlyWhenFlagged) {
  const Prediction p = predict(basic());
  Scoreboard a(p);
  EXPECT_FALSE(a.on_completion(1, QueueKind::Recv, cqe(100, WcStatus::Success, WcOpcode::Recv, 6, 0x22, 0xABCE, kWcWithImm)));
  EXPECT_NE(a.first_mismatch().find("imm differs"), std::string::npos) << a.first_mismatch();
  Scoreboard b(p);
  EXPECT_FALSE(b.on_completion(1, QueueKind::Recv, cqe(100, WcStatus::Success, WcOpcode::Recv, 6, 0x22, 0xABCD, 0)));
  EXPECT_NE(b.first_mismatch().find("wc_flags differs"), std::string::npos);
  // A send completion's imm field is not compared (no WITH_IMM flag expected).
  Scoreboard c(p);
  EXPECT_TRUE(c.on_completion(0, QueueKind::Send, cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 8, 0x11, 0x5555)));
}

TEST(Scoreboard, MissingUnexpectedAndUnknown) {
  const Prediction p = predict(basic());
  Scoreboard sb(p);
  EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 8, 0x11)));
  EXPECT_FALSE(sb.finish());
  EXPECT_NE(sb.first_mismatch().find("missing completion #1"), std::string::npos) << sb.first_mismatch();
  EXPECT_NE(sb.first_mismatch().find("wr_id 0x2"), std::string::npos);

  Scoreboard u(p);
  EXPECT_FALSE(u.on_completion(1, QueueKind::Send, cqe(5, WcStatus::Success, WcOpcode::Send, 0, 0x22)));
  EXPECT_NE(u.first_mismatch().find("unexpected completion"), std::string::npos) << u.first_mismatch();
  Scoreboard q(p);
  EXPECT_FALSE(q.on_completion(0, QueueKind::Send, cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 8, 0x77)));
  EXPECT_NE(q.first_mismatch().find("unknown QP"), std::string::npos);
}

TEST(Scoreboard, MemoryMismatchNamesAddressValuesAndWriter) {
  const Prediction p = predict(basic());
  Scoreboard sb(p);
  FakeMemory m{p, {{{1, 0x30000 + 21}, 0x99}, {{1, 0x30000 + 40}, 0x00}}};
  EXPECT_FALSE(sb.check_memory([&](uint32_t h, uint64_t pa, uint8_t* d, size_t n) { m.read(h, pa, d, n); }));
  const std::string& s = sb.first_mismatch();
  EXPECT_NE(s.find("host 1 buffer 'dst' pa 0x30015"), std::string::npos) << s;
  EXPECT_NE(s.find("expected 0x11, actual 0x99"), std::string::npos) << s;
  EXPECT_NE(s.find("wr_id 0x3 RDMA_WRITE"), std::string::npos) << s;
  EXPECT_EQ(sb.mismatches(), 1u);  // both differences are in "dst": one mismatch per buffer
  Scoreboard sb2(p);
  std::vector<uint8_t> dst = p.buffer(1, 0)->bytes;
  dst[40] ^= 1;
  EXPECT_FALSE(sb2.check_buffer(1, 0, dst.data(), dst.size()));
  EXPECT_NE(sb2.first_mismatch().find("initial contents (never written)"), std::string::npos) << sb2.first_mismatch();
  EXPECT_FALSE(sb2.check_buffer(1, 0, dst.data(), 10));
}

TEST(Scoreboard, UndeterminedBytesAreSkipped) {
  Workload w = two_hosts();
  w.hosts[1].qps[0].recv = {rwr(100, kRbuf, 4, kRbufKey)};
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Send, kSrc, 10, kSrcKey)};  // too big: REM_INV_REQ_ERR
  const Prediction p = predict(w);
  Scoreboard sb(p);
  std::vector<uint8_t> rbuf(64, 0xEE);
  rbuf[0] = rbuf[3] = 0x42;  // partially written before the length error was noticed
  EXPECT_TRUE(sb.check_buffer(1, 1, rbuf.data(), rbuf.size())) << sb.first_mismatch();
  EXPECT_EQ(sb.bytes_skipped(), 4u);
  EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, cqe(1, WcStatus::RemInvReqErr, WcOpcode::Send, 0, 0x11)));
  // Opcode and byte_len are not valid for an error completion and are not compared.
  EXPECT_TRUE(sb.on_completion(1, QueueKind::Recv, cqe(100, WcStatus::RemInvReqErr, WcOpcode::RdmaRead, 77, 0x22)));
  EXPECT_TRUE(sb.finish());
  rbuf[4] = 0;
  EXPECT_FALSE(sb.check_buffer(1, 1, rbuf.data(), rbuf.size()));
}

// host 0's WRITE fails, so host 1's sends may be cut short at any point.
Prediction relaxed_prediction() {
  Workload w = two_hosts();
  w.hosts[0].qps[0].recv = {rwr(200, kRcv0, 8, kRcv0Key), rwr(201, kRcv0 + 8, 8, kRcv0Key)};
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, 0x777)};
  w.hosts[1].qps[0].send = {wr(10, WrOpcode::Send, kDst, 4, kDstKey), wr(11, WrOpcode::Write, kDst, 4, kDstKey, kLoc, kLocKey, 0, false),
                            wr(12, WrOpcode::Send, kDst + 4, 4, kDstKey)};
  return predict(w);
}

TEST(Scoreboard, RelaxedQueueAcceptsAnyCutPoint) {
  const Prediction p = relaxed_prediction();
  const Completion ok10 = cqe(10, WcStatus::Success, WcOpcode::Send, 4, 0x22);
  const Completion ok12 = cqe(12, WcStatus::Success, WcOpcode::Send, 4, 0x22);
  const Completion fl11 = cqe(11, WcStatus::WrFlushErr, WcOpcode::RdmaWrite, 0, 0x22);
  const Completion fl12 = cqe(12, WcStatus::WrFlushErr, WcOpcode::Send, 0, 0x22);
  const Completion fl10 = cqe(10, WcStatus::RetryExcErr, WcOpcode::Send, 0, 0x22);
  const std::vector<std::vector<Completion>> accepted = {
      {ok10, ok12}, {ok10, fl11, fl12}, {ok10, fl12}, {fl10, fl11, fl12}, {ok10}, {}};
  for (const auto& seq : accepted) {
    Scoreboard sb(p);
    for (const Completion& c : seq) EXPECT_TRUE(sb.on_completion(1, QueueKind::Send, c)) << sb.first_mismatch();
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, cqe(1, WcStatus::RemAccessErr, WcOpcode::RdmaWrite, 0, 0x11)));
    EXPECT_TRUE(sb.finish()) << sb.first_mismatch();
  }
  const std::vector<std::vector<Completion>> rejected = {
      {ok12},               // skips a signaled WR
      {fl11, ok12},         // success after the error
      {ok10, fl12, fl11},   // flushes out of order
      {ok10, ok10},
      {fl12, fl11}};
  for (const auto& seq : rejected) {
    Scoreboard sb(p);
    bool all = true;
    for (const Completion& c : seq) all = sb.on_completion(1, QueueKind::Send, c) && all;
    EXPECT_FALSE(all);
  }
  // The receive queue of host 0 is relaxed in the same way.
  Scoreboard r(p);
  EXPECT_TRUE(r.on_completion(0, QueueKind::Recv, cqe(200, WcStatus::Success, WcOpcode::Recv, 4, 0x11)));
  EXPECT_TRUE(r.on_completion(0, QueueKind::Recv, cqe(201, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 0x11)));
  EXPECT_FALSE(r.on_completion(0, QueueKind::Recv, cqe(201, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 0x11)));
}

}  // namespace
}  // namespace srnic::verif
