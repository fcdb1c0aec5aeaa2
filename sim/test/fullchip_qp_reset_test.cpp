// Full-chip QP reset tests: work queued in the NIC for a QP before the host reset it must never
// act for the QP's next incarnation (decision 109). Host 0's transmitter is held paused (the link partner's flow
// control, Link::set_pause) while the NIC queues a QP's requests or READ responses; both ends
// then reset the QP and connect it again with new PSNs, and the pause ends. No frame of the old
// incarnation may leave the NIC after the reset (every request or response of the QP the NIC
// hands to its MAC from then on carries a PSN of the new connection; frames the paused MAC
// already held have left the NIC), no completion of an old WR may reach the new incarnation's
// CQ, and the new connection must work.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include SRNIC_SIM_TOP_HEADER
#include "sim_backend.hpp"
#include "tx_frames.hpp"
#include "two_hosts.hpp"
#include "srnic/abi.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim {
namespace {

constexpr uint64_t kMac[2] = {0x020000000001ull, 0x020000000002ull};
constexpr uint32_t kIp[2] = {0x0A000001u, 0x0A000002u};
uint8_t init_byte(int h, uint64_t off) { return uint8_t(off * 5 + uint64_t(h) * 29 + 3); }

class QpReset : public TwoHosts {
 public:
  QpReset() : TwoHosts({{kMac[0], kMac[1]}, {kIp[0], kIp[1]}, 31, &init_byte}) {}

  void SetUp() override {
    TwoHosts::SetUp();
    wire.watch(*world, 0);   // every RoCE frame host 0's NIC hands to its MAC
  }


  void reset_and_reconnect(int q, uint32_t psn0) {
    for (int h = 0; h < 2; ++h) {
      sw::QpAttr r;
      r.qp_state = sw::QpState::Reset;
      host[h].qps[size_t(q)]->modify(r, sw::QpAttrMask::State);
    }
    for (int h = 0; h < 2; ++h) connect(h, q, psn0);
  }

  sw::WorkCompletion wait_cq(sw::CompletionQueue& cq, const char* what) {
    sw::WorkCompletion wc{};
    for (int i = 0; i < 400000; ++i) {
      if (cq.poll_cq(1, &wc) == 1) return wc;
      world->step();
    }
    ADD_FAILURE() << "no completion on " << what;
    return wc;
  }

  std::vector<uint8_t> mem(int h, uint64_t off, size_t n) {
    std::vector<uint8_t> v(n);
    host[h].be->mem_read(host[h].buf + off, v.data(), n);
    return v;
  }

  // Frames host 0 sent to QPN dqpn from time t on whose PSN lies outside [lo, lo + n).
  std::vector<WireFrame> stale_since(double t, uint32_t dqpn, uint32_t lo, uint32_t n) const {
    std::vector<WireFrame> out;
    for (const WireFrame& f : wire.frames)
      if (f.t >= t && f.dqpn == dqpn && ((f.psn - lo) & 0xFFFFFF) >= n) out.push_back(f);
    return out;
  }

  TxFrameLog wire;
};

std::string describe(const std::vector<WireFrame>& v) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < 4; ++i) {
    char b[96];
    std::snprintf(b, sizeof b, "%sopcode 0x%02x PSN %u at %.1f ns", i ? "; " : "", v[i].opcode, v[i].psn, v[i].t);
    s += b;
  }
  return std::to_string(v.size()) + " frames: " + s;
}

// Requests queued behind a pause (segments in the send path, packets waiting for payload)
// when the requester's QP is reset never leave.
TEST_F(QpReset, QueuedRequestsOfAResetQpNeverLeave) {
  pause_host0(true);
  for (int i = 0; i < 4; ++i)
    post(0, 0, sw::WrOpcode::RdmaWrite, 0x10 + uint64_t(i), 0x4000 * uint64_t(i), 16384, 0x4000 * uint64_t(i));
  run_us(40);
  const size_t before = wire.frames.size();
  reset_and_reconnect(0, 0x5000);
  const double t_reset = world->now_ns();
  pause_host0(false);
  const std::vector<uint8_t> peer_before = mem(1, 0x1000, 1024);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x99, 0x8000, 1024, 0x1000);
  const sw::WorkCompletion wc = wait_cq(*host[0].scq, "host 0's send CQ");
  EXPECT_EQ(wc.wr_id, 0x99u) << "a WR of the old incarnation completed on the new one";
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  run_us(60);
  sw::WorkCompletion extra;
  EXPECT_EQ(host[0].scq->poll_cq(1, &extra), 0) << "wr_id " << extra.wr_id << " completed after the reset";
  EXPECT_EQ(mem(1, 0x1000, 1024), mem(0, 0x8000, 1024)) << "the new connection's WRITE did not land";
  const uint32_t dqpn = host[1].qps[0]->qp_num();
  const auto stale = stale_since(t_reset, dqpn, 0x5000, 1);
  EXPECT_TRUE(stale.empty()) << "old-incarnation requests left after the reset: " << describe(stale);
  EXPECT_LT(before, 64u) << "every request left before the reset: the test does not test";
  EXPECT_GT(host[0].dev->read_counter(abi::CNT_STALE_DROP), 0u) << "nothing was dropped as stale";
  EXPECT_EQ(mem(1, 0x1000, 1024), mem(0, 0x8000, 1024));
  (void)peer_before;
}

// READ responses queued behind a pause when the responder's QP is reset never leave.
TEST_F(QpReset, QueuedReadResponsesOfAResetQpNeverLeave) {
  pause_host0(true);
  post(1, 0, sw::WrOpcode::RdmaRead, 0x20, 0x0, 32768, 0x0);
  run_us(40);
  reset_and_reconnect(0, 0x7000);
  const double t_reset = world->now_ns();
  pause_host0(false);
  // host 1's old READ was discarded with its QP; the new connection works
  post(1, 0, sw::WrOpcode::RdmaRead, 0x21, 0x9000, 2048, 0x9000);
  const sw::WorkCompletion wc = wait_cq(*host[1].scq, "host 1's send CQ");
  EXPECT_EQ(wc.wr_id, 0x21u);
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  EXPECT_EQ(mem(1, 0x9000, 2048), mem(0, 0x9000, 2048));
  run_us(60);
  const uint32_t dqpn = host[1].qps[0]->qp_num();
  const auto stale = stale_since(t_reset, dqpn, 0x7000, 2);
  EXPECT_TRUE(stale.empty()) << "old-incarnation READ responses left after the reset: " << describe(stale);
  EXPECT_GT(host[0].dev->read_counter(abi::CNT_STALE_DROP), 0u) << "nothing was dropped as stale";
}

// A CQE the CQ writer has already taken when the host resets its QP is written before the reset
// command returns (decision 115): the host library then discards it with the QP's other old
// CQEs, and the QP's next life never polls a completion of its old one. Host 1 receives a SEND;
// from the cycle its NIC offers the receive CQE's write (AW into the receive CQ's ring) the
// host bridge grants no write credit for 20 us (PcieHost::hold_writes), and host 1 resets the
// QP meanwhile.
TEST_F(QpReset, CqeTakenBeforeAResetIsWrittenBeforeTheResetReturns) {
  const uint64_t ring = host[1].rcq->base();
  double held_at = -1, release_at = 0;
  world->set_observer([&](uint64_t) {
    const Top& t = world->top(1);
    if (held_at < 0 && t.m_axi_awvalid && t.m_axi_awaddr >= ring && t.m_axi_awaddr < ring + 64 * 32) {
      held_at = world->now_ns();
      release_at = held_at + 20000;
      world->pcie(1).hold_writes(true);
    }
    if (held_at >= 0 && release_at > 0 && world->now_ns() >= release_at) {
      world->pcie(1).hold_writes(false);
      release_at = 0;
    }
  });
  post_recv(1, 0, 0x51, 0x2000, 4096);
  post(0, 0, sw::WrOpcode::Send, 0x50, 0x0, 256);
  for (int i = 0; i < 200000 && held_at < 0; ++i) world->step();
  ASSERT_GE(held_at, 0) << "host 1 never wrote its receive CQE";
  sw::QpAttr r;
  r.qp_state = sw::QpState::Reset;
  host[1].qps[0]->modify(r, sw::QpAttrMask::State);
  const double returned = world->now_ns();
  run_us(40);  // the hold is over, everything written
  EXPECT_EQ(release_at, 0) << "the hold never ended";
  sw::WorkCompletion wc{};
  const int n = host[1].rcq->poll_cq(1, &wc);
  EXPECT_EQ(n, 0) << "after its reset the QP polled wr_id 0x" << std::hex << wc.wr_id << std::dec
                  << ", a receive of its old life (the reset returned " << (returned - held_at) / 1000
                  << " us after the CQE's write was held, the hold lasted 20 us)";
  EXPECT_GE(returned - held_at, 20000.0) << "the reset returned while the CQE's write was held";
}

}  // namespace
}  // namespace srnic::sim
