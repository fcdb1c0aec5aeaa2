// Full-chip responder tests: the responder's answers never stop the receive path (decision 116),
// and READ responses of different QPs share the link (decision 117). Host 1 asks host 0's
// transmitter to pause (Link::set_pause) while it sends requests, so host 0's answers queue in
// its responder; the receive path must keep taking frames meanwhile, and once the pause ends
// the answers of every QP must leave.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
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

constexpr uint64_t kMac[2] = {0x020000000011ull, 0x020000000012ull};
constexpr uint32_t kIp[2] = {0x0A000011u, 0x0A000012u};
uint8_t init_byte(int h, uint64_t off) { return uint8_t(off * 7 + uint64_t(h) * 53 + 11); }

constexpr uint8_t kReadRespFirst = 0x0D, kReadRespOnly = 0x10;

class Responder : public TwoHosts {
 public:
  Responder() : TwoHosts({{kMac[0], kMac[1]}, {kIp[0], kIp[1]}, 47, &init_byte}) {}

  void SetUp() override {
    TwoHosts::SetUp();
    wire.watch(*world, 0);   // every RoCE frame host 0's NIC hands to its MAC
  }


  // Polls host h's send CQ until n completions came (or a bound of simulated time passes).
  std::vector<sw::WorkCompletion> wait_n(int h, size_t n, double max_us) {
    std::vector<sw::WorkCompletion> out;
    const double end = world->now_ns() + max_us * 1000;
    while (out.size() < n && world->now_ns() < end) {
      sw::WorkCompletion wc{};
      while (host[h].scq->poll_cq(1, &wc) == 1) out.push_back(wc);
      world->step();
    }
    return out;
  }

  std::vector<uint8_t> mem(int h, uint64_t off, size_t n) {
    std::vector<uint8_t> v(n);
    host[h].be->mem_read(host[h].buf + off, v.data(), n);
    return v;
  }

  TxFrameLog wire;
};

// While host 0's transmitter is paused, host 1 posts 10 WRITEs and then one READ of 64 bytes on
// each of 64 QPs (704 request frames, about 2,050 beats: twice host 0's RX buffer). Host 0's
// 640 ACKs fill its MAC's TX FIFO (about 300 frames), its packetizer's queues and its ACK queue
// (32); READ tasks arrive behind them. The RX path must take every frame meanwhile: host 0 never
// asks host 1 to pause, and drops nothing.
// Before decision 116 the first READ behind a plain ACK staged for the full ACK queue waited
// in the responder's stage; the RX engine stopped behind it, the RX buffer filled and host 0
// paused host 1 (with both directions busy, the two NICs then paused each other for ever:
// cr_bidir_small --seed 1433062461). Once the pause ends, every WR completes with the right
// data.
TEST_F(Responder, APausedTransmitterNeverStopsTheReceivePath) {
  constexpr int kQps = 64, kPerQp = 10;
  std::vector<int> qs;
  for (int i = 0; i < kQps; ++i) qs.push_back(i < 2 ? i : add_qp_pair(2 * kPerQp));
  pause_host0(true);
  for (int i = 0; i < kQps; ++i) {
    // WRITE r: host 1 [off] to host 0 [off]; the READ: host 0 [0xA000 + 64 i] to host 1 [0xC000 + 64 i]
    for (int r = 0; r < kPerQp; ++r) {
      const uint64_t off = uint64_t(i) * 640 + uint64_t(r) * 64;
      post(1, qs[size_t(i)], sw::WrOpcode::RdmaWrite, 0x1000 + uint64_t(i) * 16 + uint64_t(r), off, 64, off, 0u);
      ASSERT_FALSE(HasFatalFailure());
    }
    const uint64_t off0 = uint64_t(i) * 64;
    post(1, qs[size_t(i)], sw::WrOpcode::RdmaRead, 0x8000 + uint64_t(i), 0xC000 + off0, 64, 0xA000 + off0);
    ASSERT_FALSE(HasFatalFailure());
  }
  run_us(150);   // every request reaches host 0 (about 30 us of wire), then some
  const uint64_t pauses = world->link(0).pause_requests(0);
  const uint64_t rx = host[0].dev->read_counter(abi::CNT_RX_FRAMES);
  const uint64_t tx = host[1].dev->read_counter(abi::CNT_TX_FRAMES);
  EXPECT_EQ(pauses, 0u) << "host 0 asked host 1 to pause while its own transmitter was paused: its receive path "
                           "stopped behind its responder (" << rx << " frames received)";
  // (a READ needs one of host 1's READ contexts, of which 63 can be held: a READ or two may wait)
  EXPECT_GE(tx, uint64_t(kQps * kPerQp + kQps - 2)) << "host 1 sent fewer requests than the test means";
  EXPECT_EQ(rx, tx) << "host 0 did not receive every frame host 1 sent";
  EXPECT_GT(host[0].dev->read_counter(abi::CNT_ACK_DEFERRED), 0u) << "no answer found its queues full";
  pause_host0(false);
  const auto wcs = wait_n(1, kQps, 2000);
  ASSERT_EQ(wcs.size(), size_t(kQps)) << "not every QP completed after the pause";
  for (const auto& wc : wcs) EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  for (int i = 0; i < kQps; ++i) {
    for (int r = 0; r < kPerQp; ++r) {
      const uint64_t off = uint64_t(i) * 640 + uint64_t(r) * 64;
      EXPECT_EQ(mem(0, off, 64), mem(1, off, 64)) << "QP " << i << " WRITE " << r;
    }
    const uint64_t off0 = uint64_t(i) * 64;
    EXPECT_EQ(mem(1, 0xC000 + off0, 64), mem(0, 0xA000 + off0, 64)) << "QP " << i << " READ";
  }
  EXPECT_EQ(host[0].dev->read_counter(abi::CNT_RX_DROP_OVERFLOW), 0u);
  EXPECT_EQ(host[0].dev->read_counter(abi::CNT_RESP_NO_ROOM), 0u);
  EXPECT_EQ(host[1].dev->read_counter(abi::CNT_REWIND), 0u) << "a request was resent on a lossless link";
}

// Host 1 READs 48 KiB on QP 0, then 1 KiB on QP 1, while host 0's transmitter is paused. QP 1's
// response must not wait for all 48 responses of QP 0: the responder serves the QPs' READs a
// packet at a time in turn (decision 117). Before, one ordered queue sent a READ's responses to the end before the next task of
// any QP, so a 2 GiB READ held every other QP's READ responses for 170 ms.
TEST_F(Responder, ReadsOfTwoQpsShareTheLink) {
  pause_host0(true);
  post(1, 0, sw::WrOpcode::RdmaRead, 0x70, 0x0, 48 * 1024, 0x4000);
  ASSERT_FALSE(HasFatalFailure());
  post(1, 1, sw::WrOpcode::RdmaRead, 0x71, 0xC000, 1024, 0x1000);
  ASSERT_FALSE(HasFatalFailure());
  run_us(20);
  pause_host0(false);
  const auto wcs = wait_n(1, 2, 500);
  ASSERT_EQ(wcs.size(), 2u);
  for (const auto& wc : wcs) EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  EXPECT_EQ(mem(1, 0x0, 48 * 1024), mem(0, 0x4000, 48 * 1024));
  EXPECT_EQ(mem(1, 0xC000, 1024), mem(0, 0x1000, 1024));
  const uint32_t q0 = host[1].qps[0]->qp_num(), q1 = host[1].qps[1]->qp_num();
  std::vector<uint32_t> order;   // destination QPs of host 0's READ responses, in wire order
  for (const WireFrame& f : wire.frames)
    if (f.opcode >= kReadRespFirst && f.opcode <= kReadRespOnly && (f.dqpn == q0 || f.dqpn == q1))
      order.push_back(f.dqpn);
  ASSERT_EQ(order.size(), 49u) << "48 responses of QP 0 and one of QP 1";
  size_t at = 0;
  while (at < order.size() && order[at] != q1) ++at;
  std::string seq;
  for (size_t i = 0; i < order.size() && i < 12; ++i) seq += order[i] == q1 ? '1' : '0';
  // (host 0's MAC takes frames into its TX FIFO while paused, so QP 0's first responses leave
  // the NIC before QP 1's READ request has arrived; from then on the two share the link)
  EXPECT_LE(at, 8u) << "QP 1's READ response left as response " << at << " of 49, after QP 0's (first 12: " << seq
                    << ")";
}

}  // namespace
}  // namespace srnic::sim
