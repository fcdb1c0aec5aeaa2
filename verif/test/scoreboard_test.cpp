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
  // the first mismatch is kept, the last one is what a later check added
  EXPECT_FALSE(q.finish());
  EXPECT_NE(q.first_mismatch().find("unknown QP"), std::string::npos);
  EXPECT_NE(q.last_mismatch().find("missing completion #0"), std::string::npos) << q.last_mismatch();
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

// host 0's WRITE fails at host 1 (bad rkey): both QPs end in ERR, and host 1's sends (10 SEND,
// 11 unsignaled WRITE, 12 SEND into host 0's receives 200 and 201) may be flushed or, with
// limited retries, find no answer at any point.
Prediction relaxed_prediction(uint8_t retry_cnt = 3) {
  Workload w = two_hosts();
  w.hosts[1].qps[0].retry_cnt = retry_cnt;
  w.hosts[0].qps[0].recv = {rwr(200, kRcv0, 8, kRcv0Key), rwr(201, kRcv0 + 8, 8, kRcv0Key)};
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, 0x777)};
  w.hosts[1].qps[0].send = {wr(10, WrOpcode::Send, kDst, 4, kDstKey), wr(11, WrOpcode::Write, kDst, 4, kDstKey, kLoc, kLocKey, 0, false),
                            wr(12, WrOpcode::Send, kDst + 4, 4, kDstKey)};
  return predict(w);
}

const Completion ok10 = cqe(10, WcStatus::Success, WcOpcode::Send, 4, 0x22);
const Completion ok12 = cqe(12, WcStatus::Success, WcOpcode::Send, 4, 0x22);
const Completion fl10 = cqe(10, WcStatus::WrFlushErr, WcOpcode::Send, 0, 0x22);
const Completion fl11 = cqe(11, WcStatus::WrFlushErr, WcOpcode::RdmaWrite, 0, 0x22);
const Completion fl12 = cqe(12, WcStatus::WrFlushErr, WcOpcode::Send, 0, 0x22);
const Completion rx10 = cqe(10, WcStatus::RetryExcErr, WcOpcode::Send, 0, 0x22);
const Completion rx11 = cqe(11, WcStatus::RetryExcErr, WcOpcode::RdmaWrite, 0, 0x22);
const Completion ok200 = cqe(200, WcStatus::Success, WcOpcode::Recv, 4, 0x11);
const Completion ok201 = cqe(201, WcStatus::Success, WcOpcode::Recv, 4, 0x11);
const Completion fl200 = cqe(200, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 0x11);
const Completion fl201 = cqe(201, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 0x11);

// Feeds host 1's send completions, host 0's receive completions and host 0's failing WRITE,
// then finish(); returns the first mismatch ("" when all is accepted).
std::string relaxed_run(const Prediction& p, const std::vector<Completion>& sends, const std::vector<Completion>& recvs) {
  Scoreboard sb(p);
  for (const Completion& c : sends) sb.on_completion(1, QueueKind::Send, c);
  for (const Completion& c : recvs) sb.on_completion(0, QueueKind::Recv, c);
  sb.on_completion(0, QueueKind::Send, cqe(1, WcStatus::RemAccessErr, WcOpcode::RdmaWrite, 0, 0x11));
  sb.finish();
  return sb.first_mismatch();
}

TEST(Scoreboard, RelaxedQueueAcceptsEveryLegalCutPoint) {
  const Prediction p = relaxed_prediction();
  struct Case {
    std::vector<Completion> sends, recvs;
  };
  const std::vector<Case> accepted = {
      {{ok10, ok12}, {ok200, ok201}},       // WR 11 succeeded silently
      {{ok10, fl11, fl12}, {ok200, fl201}},
      {{ok10, fl12}, {ok200, fl201}},       // WR 11 succeeded silently, then the QP failed
      {{ok10, rx11, fl12}, {ok200, fl201}}, // host 0 in ERR dropped WR 11
      {{rx10, fl11, fl12}, {fl200, fl201}},
      {{fl10, fl11, fl12}, {fl200, fl201}}};
  for (const Case& c : accepted) EXPECT_EQ(relaxed_run(p, c.sends, c.recvs), "");
  // Unlimited retries never run out.
  EXPECT_NE(relaxed_run(relaxed_prediction(7), {rx10, fl11, fl12}, {fl200, fl201})
                .find("RETRY_EXC_ERR is not a status this WR may report as the queue's first error (allowed: "
                      "WR_FLUSH_ERR, or SUCCESS)"),
            std::string::npos);
}

// Each invariant a relaxed queue keeps, broken once; the scoreboard names the rule.
TEST(Scoreboard, RelaxedQueueRejectsWhatNoTimingExplains) {
  const Prediction p = relaxed_prediction();
  const std::vector<Completion> rq = {fl200, fl201};
  const Completion bad_status = cqe(10, WcStatus::RemAccessErr, WcOpcode::Send, 0, 0x22);
  const struct {
    std::vector<Completion> sends;
    const char* message;
  } rejected[] = {
      // a status no failure of this connection produces at this WR
      {{bad_status}, "REM_ACCESS_ERR is not a status this WR may report as the queue's first error "
                     "(allowed: RETRY_EXC_ERR, WR_FLUSH_ERR, or SUCCESS)"},
      // a success once the queue has failed
      {{fl10, fl11, ok12}, "successful completion {wr_id 0xc, SUCCESS, SEND, byte_len 4, flags 0, qpn 0x22} for "
                           "WR #2 (wr_id 0xc) after the queue's first error (WR #0 (wr_id 0xa): WR_FLUSH_ERR)"},
      // after the first error every WR is flushed
      {{fl10, rx11, fl12}, "after the queue's first error (WR #0 (wr_id 0xa): WR_FLUSH_ERR) every WR must "
                           "complete WR_FLUSH_ERR"},
      // posting order
      {{ok12, ok10}, "for WR #2 (wr_id 0xc) out of order: WR #0 (wr_id 0xa) posted before it must complete first"},
      {{ok10, fl12, fl11}, "for WR #1 (wr_id 0xb), which already completed or was passed"},
      // at most once
      {{ok10, ok10}, "for WR #0 (wr_id 0xa), which already completed or was passed"},
      {{cqe(99, WcStatus::WrFlushErr, WcOpcode::Send, 0, 0x22)}, "names no WR of this queue"},
      // the QP ends in ERR (host 0 failed it), so every WR completes: none may be missing
      // (WR 11 is unsignaled: it may have succeeded silently; WR 12 may not)
      {{ok10}, "host 1 qp 0x22 send queue (relaxed): missing completion for WR #2 (wr_id 0xc) (1 of the queue's 3 "
               "WRs from it on have none); the peer's send WR #0 fails at this QP, so every WR must complete"},
      {{}, "missing completion for WR #0 (wr_id 0xa) (3 of the queue's 3 WRs from it on have none)"},
  };
  for (const auto& r : rejected) {
    const std::string m = relaxed_run(p, r.sends, rq);
    EXPECT_NE(m.find(r.message), std::string::npos) << "got: " << m << "\nwant: " << r.message;
    EXPECT_NE(m.find("host 1 qp 0x22 send queue"), std::string::npos) << m;
  }
  // The receive queue of host 0 keeps the same rules.
  EXPECT_NE(relaxed_run(p, {fl10, fl11, fl12}, {fl200, ok201}).find("after the queue's first error"), std::string::npos);
  EXPECT_NE(relaxed_run(p, {fl10, fl11, fl12}, {fl200}).find("host 0 qp 0x11 recv queue (relaxed): missing completion "
                                                             "for WR #1 (wr_id 0xc9)"),
            std::string::npos);
  EXPECT_NE(relaxed_run(p, {fl10, fl11, fl12}, {fl200, fl201, fl201}).find("already completed or was passed"),
            std::string::npos);
  EXPECT_NE(relaxed_run(p, {fl10, fl11, fl12}, {cqe(200, WcStatus::RemAccessErr, WcOpcode::Recv, 0, 0x11), fl201})
                .find("REM_ACCESS_ERR is not a status this WR may report as the queue's first error (allowed: "
                      "WR_FLUSH_ERR, or SUCCESS)"),
            std::string::npos);
}

// host 0: READ 1, then SEND 2, too long for host 1's receive (NAK), on a lossy link.
Prediction lossy_prediction() {
  Workload w = two_hosts();
  w.lossy = true;
  w.hosts[1].qps[0].recv = {rwr(100, kRbuf, 8, kRbufKey)};
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Read, kLoc, 8, kLocKey, kDst, kDstKey),
                            wr(2, WrOpcode::Send, kSrc, 9, kSrcKey)};
  return predict(w);
}

const Completion lo_read_ok = cqe(1, WcStatus::Success, WcOpcode::RdmaRead, 8, 0x11);
const Completion lo_read_nak = cqe(1, WcStatus::RemInvReqErr, WcOpcode::RdmaRead, 0, 0x11);
const Completion lo_send_nak = cqe(2, WcStatus::RemInvReqErr, WcOpcode::Send, 0, 0x11);
const Completion lo_send_fl = cqe(2, WcStatus::WrFlushErr, WcOpcode::Send, 0, 0x11);
const Completion lo_recv_err = cqe(100, WcStatus::RemInvReqErr, WcOpcode::Recv, 0, 0x22);

// On a lossy link a failing stream's queue is relaxed, but only this QP's own WR fails it:
// nothing may be flushed before that failure.
TEST(Scoreboard, LossyFailingStreamIsRelaxedOnlyWhereLossExplainsIt) {
  const Prediction p = lossy_prediction();
  auto run = [&](const std::vector<Completion>& sq) {
    Scoreboard sb(p);
    for (const Completion& c : sq) sb.on_completion(0, QueueKind::Send, c);
    sb.on_completion(1, QueueKind::Recv, lo_recv_err);
    sb.finish();
    return sb.first_mismatch();
  };
  EXPECT_EQ(run({lo_read_ok, lo_send_nak}), "");
  EXPECT_EQ(run({lo_read_nak, lo_send_fl}), "") << "the READ lost responses: the NAK beyond it fails it";
  EXPECT_NE(run({cqe(1, WcStatus::WrFlushErr, WcOpcode::RdmaRead, 0, 0x11), lo_send_fl})
                .find("WR_FLUSH_ERR is not a status this WR may report as the queue's first error (allowed: "
                      "REM_INV_REQ_ERR, or SUCCESS)"),
            std::string::npos);
  EXPECT_NE(run({lo_read_ok, cqe(2, WcStatus::RemAccessErr, WcOpcode::Send, 0, 0x11)}).find("(allowed: REM_INV_REQ_ERR)"),
            std::string::npos);
  EXPECT_NE(run({lo_read_ok, cqe(2, WcStatus::Success, WcOpcode::Send, 9, 0x11)}).find("which cannot succeed"),
            std::string::npos);
  EXPECT_NE(run({lo_send_nak}).find("out of order"), std::string::npos);
  EXPECT_NE(run({lo_read_ok}).find("missing completion for WR #1 (wr_id 0x2)"), std::string::npos);
}

// On a lossy link with rnr_retry 0 a SEND whose receive is posted may still fail
// RNR_RETRY_EXC_ERR (a stale receive fetch, decision 89); a WRITE may not.
TEST(Scoreboard, LossyLinkAllowsAnRnrFailureOnlyWhereAReceiveIsNeeded) {
  Workload w = two_hosts();
  w.lossy = true;
  w.hosts[0].qps[0].rnr_retry = 0;
  w.hosts[1].qps[0].recv = {rwr(100, kRbuf, 8, kRbufKey)};
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey),
                            wr(2, WrOpcode::Send, kSrc, 4, kSrcKey)};
  const Prediction p = predict(w);
  const Completion ok1 = cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 4, 0x11);
  const Completion rnr2 = cqe(2, WcStatus::RnrRetryExcErr, WcOpcode::Send, 0, 0x11);
  {
    Scoreboard sb(p);
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, ok1));
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, rnr2)) << sb.first_mismatch();
    EXPECT_TRUE(sb.finish()) << "host 1's receive stays posted: " << sb.first_mismatch();
  }
  {
    Scoreboard sb(p);
    EXPECT_FALSE(sb.on_completion(0, QueueKind::Send, cqe(1, WcStatus::RnrRetryExcErr, WcOpcode::RdmaWrite, 0, 0x11)));
    EXPECT_NE(sb.first_mismatch().find("RNR_RETRY_EXC_ERR is not a status this WR may report as the queue's first "
                                       "error (allowed: SUCCESS only)"),
              std::string::npos)
        << sb.first_mismatch();
  }
  {
    Scoreboard sb(p);
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, ok1));
    EXPECT_FALSE(sb.finish()) << "the SEND must complete, in success or in error";
  }
  // rnr_retry 7 waits out any RNR NAK: the queues are exact again
  w.hosts[0].qps[0].rnr_retry = 7;
  const Prediction p7 = predict(w);
  Scoreboard sb(p7);
  EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, ok1));
  EXPECT_FALSE(sb.on_completion(0, QueueKind::Send, rnr2));
  EXPECT_NE(sb.first_mismatch().find("status differs"), std::string::npos) << sb.first_mismatch();
}

// A READ of that stream that succeeded has its target checked; one that failed does not.
TEST(Scoreboard, LossyReadIsCheckedWhenItSucceeds) {
  const Prediction p = lossy_prediction();
  FakeMemory m{p, {{{0, 0x20000 + 3}, 0x5A}}};  // one wrong byte in the READ's target
  const auto reader = [&](uint32_t h, uint64_t pa, uint8_t* d, size_t n) { m.read(h, pa, d, n); };
  {
    Scoreboard sb(p);
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, lo_read_ok));
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, lo_send_nak));
    EXPECT_TRUE(sb.on_completion(1, QueueKind::Recv, lo_recv_err));
    EXPECT_TRUE(sb.finish()) << sb.first_mismatch();
    EXPECT_FALSE(sb.check_memory(reader)) << "the READ succeeded: its target is checked";
    EXPECT_NE(sb.first_mismatch().find("host 0 buffer 'loc' pa 0x20003 (+0x3): expected 0x83, actual 0x5a; last "
                                       "written by host 0 qp 0x11 wr_id 0x1 RDMA_READ (WR #0), which completed "
                                       "successfully"),
              std::string::npos)
        << sb.first_mismatch();
  }
  {
    Scoreboard sb(p);
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, lo_read_nak));
    EXPECT_TRUE(sb.on_completion(0, QueueKind::Send, lo_send_fl));
    EXPECT_TRUE(sb.on_completion(1, QueueKind::Recv, lo_recv_err));
    EXPECT_TRUE(sb.finish()) << sb.first_mismatch();
    EXPECT_TRUE(sb.check_memory(reader)) << "the READ failed: its target may hold anything " << sb.first_mismatch();
    EXPECT_EQ(sb.bytes_skipped(), 8u + 8u) << "the READ's target and the receive the too long SEND failed in";
  }
}

// The host moves QP 0x11 to ERR at a time the model cannot know. Its WRITE (1), SEND (2) and
// READ (3) may each succeed or be flushed; host 1's QP stays up.
Prediction host_err_prediction() {
  Workload w = two_hosts();
  w.hosts[0].qps[0].host_err = true;
  w.hosts[0].qps[0].recv = {rwr(200, kRcv0, 8, kRcv0Key)};
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey),
                            wr(2, WrOpcode::Send, kSrc + 8, 4, kSrcKey),
                            wr(3, WrOpcode::Read, kLoc, 4, kLocKey, kDst + 16, kDstKey)};
  w.hosts[1].qps[0].recv = {rwr(300, kRbuf, 8, kRbufKey)};
  return predict(w);
}

const Completion he_ok1 = cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 4, 0x11);
const Completion he_ok2 = cqe(2, WcStatus::Success, WcOpcode::Send, 4, 0x11);
const Completion he_fl1 = cqe(1, WcStatus::WrFlushErr, WcOpcode::RdmaWrite, 0, 0x11);
const Completion he_fl2 = cqe(2, WcStatus::WrFlushErr, WcOpcode::Send, 0, 0x11);
const Completion he_fl3 = cqe(3, WcStatus::WrFlushErr, WcOpcode::RdmaRead, 0, 0x11);
const Completion he_ok300 = cqe(300, WcStatus::Success, WcOpcode::Recv, 4, 0x22);

// Feeds host 0's send completions, its flushed receive and host 1's receive completions into
// `sb`, then finish(); returns the first mismatch ("" when all is accepted).
std::string host_err_run(Scoreboard& sb, const std::vector<Completion>& sq, const std::vector<Completion>& rq1) {
  for (const Completion& c : sq) sb.on_completion(0, QueueKind::Send, c);
  sb.on_completion(0, QueueKind::Recv, cqe(200, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 0x11));
  for (const Completion& c : rq1) sb.on_completion(1, QueueKind::Recv, c);
  sb.finish();
  return sb.first_mismatch();
}

TEST(Scoreboard, HostErrQueuesShowOnlyWhatTheErrExplains) {
  const Prediction p = host_err_prediction();
  auto run = [&](const std::vector<Completion>& sq, const std::vector<Completion>& rq1) {
    Scoreboard sb(p);
    return host_err_run(sb, sq, rq1);
  };
  EXPECT_EQ(run({he_ok1, he_fl2, he_fl3}, {}), "");
  EXPECT_EQ(run({he_ok1, he_ok2, he_fl3}, {he_ok300}), "");
  EXPECT_EQ(run({he_fl1, he_fl2, he_fl3}, {he_ok300}), "") << "the SEND landed, its ACK came after the ERR";
  // A SEND that succeeded consumed host 1's receive, which must complete.
  EXPECT_NE(run({he_ok1, he_ok2, he_fl3}, {}).find("host 1 qp 0x22 recv queue (relaxed): missing completion for WR #0 "
                                                   "(wr_id 0x12c): it was consumed by host 0 qp 0x11 WR #1 (wr_id "
                                                   "0x2), which completed successfully"),
            std::string::npos);
  // Host 1's QP never fails: its receive cannot be flushed.
  EXPECT_NE(run({he_fl1, he_fl2, he_fl3}, {cqe(300, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 0x22)})
                .find("WR_FLUSH_ERR is not a status this WR may report as the queue's first error (allowed: SUCCESS "
                      "only)"),
            std::string::npos);
  // Host 1 stays up and answers: no RETRY_EXC_ERR; and host 0's QP ends in ERR: no WR missing.
  EXPECT_NE(run({cqe(1, WcStatus::RetryExcErr, WcOpcode::RdmaWrite, 0, 0x11), he_fl2, he_fl3}, {})
                .find("RETRY_EXC_ERR is not a status this WR may report as the queue's first error (allowed: "
                      "WR_FLUSH_ERR, or SUCCESS)"),
            std::string::npos);
  EXPECT_NE(run({he_ok1, he_fl2}, {}).find("host 0 qp 0x11 send queue (relaxed): missing completion for WR #2 (wr_id "
                                           "0x3) (1 of the queue's 3 WRs from it on have none); the host moves the QP "
                                           "to ERR, so every WR must complete"),
            std::string::npos);
}

TEST(Scoreboard, HostErrChecksTheBytesOfWhatSucceeded) {
  const Prediction p = host_err_prediction();
  // host 1's dst[1] (the WRITE's) and rbuf[2] (the SEND's) hold wrong bytes
  FakeMemory m{p, {{{1, 0x30001}, 0x55}, {{1, 0x40002}, 0x66}}};
  const auto reader = [&](uint32_t h, uint64_t pa, uint8_t* d, size_t n) { m.read(h, pa, d, n); };
  // the first memory mismatch after accepted completions
  auto memory = [&](const std::vector<Completion>& sq, const std::vector<Completion>& rq1) {
    Scoreboard sb(p);
    EXPECT_EQ(host_err_run(sb, sq, rq1), "");
    sb.check_memory(reader);
    return sb.first_mismatch();
  };
  // The WRITE succeeded before the ERR: its bytes must be right.
  std::string m1 = memory({he_ok1, he_fl2, he_fl3}, {});
  EXPECT_NE(m1.find("host 1 buffer 'dst' pa 0x30001 (+0x1): expected 0x01, actual 0x55; last written by host 0 qp 0x11 "
                    "wr_id 0x1 RDMA_WRITE (WR #0), which completed successfully"),
            std::string::npos)
      << m1;
  // Flushed, it may have placed any part of its data: not checked.
  EXPECT_EQ(memory({he_fl1, he_fl2, he_fl3}, {}), "");
  // The SEND's bytes are proven by its receive's completion, even with the SEND itself flushed
  // (host 0 went to ERR before the ACK came).
  std::string m2 = memory({he_fl1, he_fl2, he_fl3}, {he_ok300});
  EXPECT_NE(m2.find("host 1 buffer 'rbuf' pa 0x40002 (+0x2): expected 0x0a, actual 0x66; last written by host 0 qp "
                    "0x11 wr_id 0x2 SEND (WR #1), which completed successfully"),
            std::string::npos)
      << m2;
}

// The hosts reset the connection of QPs 0x11 and 0x22: host 0's WRITE (1) and SEND (2), host
// 1's receive (300) the SEND consumes. Each queue completes a prefix of its WRs, successfully.
TEST(Scoreboard, ResetQueuesCompleteAPrefixAndNothingElse) {
  Workload w = two_hosts();
  w.hosts[0].qps[0].reset = w.hosts[1].qps[0].reset = true;
  w.hosts[0].qps[0].send = {wr(1, WrOpcode::Write, kSrc, 4, kSrcKey, kDst, kDstKey),
                            wr(2, WrOpcode::Send, kSrc + 8, 4, kSrcKey)};
  w.hosts[1].qps[0].recv = {rwr(300, kRbuf, 8, kRbufKey)};
  const Prediction p = predict(w);
  const Completion ok1 = cqe(1, WcStatus::Success, WcOpcode::RdmaWrite, 4, 0x11);
  const Completion ok2 = cqe(2, WcStatus::Success, WcOpcode::Send, 4, 0x11);
  const Completion ok300 = cqe(300, WcStatus::Success, WcOpcode::Recv, 4, 0x22);
  auto run = [&](const std::vector<Completion>& sq, const std::vector<Completion>& rq1) {
    Scoreboard sb(p);
    for (const Completion& c : sq) sb.on_completion(0, QueueKind::Send, c);
    for (const Completion& c : rq1) sb.on_completion(1, QueueKind::Recv, c);
    sb.finish();
    return sb.first_mismatch();
  };
  EXPECT_EQ(run({}, {}), "") << "reset before anything completed";
  EXPECT_EQ(run({ok1}, {}), "");
  EXPECT_EQ(run({ok1, ok2}, {}), "") << "the receive's completion was discarded by the reset";
  EXPECT_EQ(run({}, {ok300}), "") << "the SEND's ACK was still on its way";
  EXPECT_NE(run({ok2, ok1}, {}).find("out of order"), std::string::npos);
  EXPECT_NE(run({cqe(1, WcStatus::WrFlushErr, WcOpcode::RdmaWrite, 0, 0x11)}, {})
                .find("WR_FLUSH_ERR is not a status this WR may report as the queue's first error (allowed: SUCCESS "
                      "only)"),
            std::string::npos)
      << "a reset discards WRs without completions";
  // what a WR seen to succeed placed must be right
  FakeMemory m{p, {{{1, 0x30001}, 0x55}}};
  const auto reader = [&](uint32_t h, uint64_t pa, uint8_t* d, size_t n) { m.read(h, pa, d, n); };
  Scoreboard a(p);
  a.on_completion(0, QueueKind::Send, ok1);
  a.check_memory(reader);
  EXPECT_NE(a.first_mismatch().find("pa 0x30001 (+0x1): expected 0x01, actual 0x55"), std::string::npos)
      << a.first_mismatch();
  Scoreboard b(p);
  b.check_memory(reader);
  EXPECT_TRUE(b.ok()) << "the WRITE may have been cut by the reset: " << b.first_mismatch();
}

// A test waits for a relaxed queue until it has what finish() requires of it.
TEST(Scoreboard, RelaxedQueueSettlesWhenFinishWouldAccept) {
  const Prediction p = relaxed_prediction();
  Scoreboard a(p);
  EXPECT_FALSE(a.settled(1, 0x22, QueueKind::Send)) << "host 1's QP ends in ERR: all its WRs complete";
  EXPECT_TRUE(a.on_completion(1, QueueKind::Send, ok10));
  EXPECT_FALSE(a.settled(1, 0x22, QueueKind::Send));
  EXPECT_TRUE(a.on_completion(1, QueueKind::Send, ok12));  // WR 11 succeeded silently
  EXPECT_TRUE(a.settled(1, 0x22, QueueKind::Send));
  Scoreboard b(p);
  EXPECT_TRUE(b.on_completion(1, QueueKind::Send, ok10));
  EXPECT_TRUE(b.on_completion(1, QueueKind::Send, fl11));
  EXPECT_FALSE(b.settled(1, 0x22, QueueKind::Send));
  EXPECT_TRUE(b.on_completion(1, QueueKind::Send, fl12));
  EXPECT_TRUE(b.settled(1, 0x22, QueueKind::Send));
  Scoreboard c(p);
  EXPECT_FALSE(c.on_completion(1, QueueKind::Send, ok12));
  EXPECT_TRUE(c.settled(1, 0x22, QueueKind::Send)) << "a queue that already failed is not waited for";
  // Host 1's receives of a QP the host moved to ERR may stay posted: nothing to wait for.
  const Prediction h = host_err_prediction();
  Scoreboard d(h);
  EXPECT_TRUE(d.settled(1, 0x22, QueueKind::Recv));
  EXPECT_FALSE(d.settled(0, 0x11, QueueKind::Recv));
  EXPECT_TRUE(d.on_completion(0, QueueKind::Recv, cqe(200, WcStatus::WrFlushErr, WcOpcode::Recv, 0, 0x11)));
  EXPECT_TRUE(d.settled(0, 0x11, QueueKind::Recv));
}

}  // namespace
}  // namespace srnic::verif
