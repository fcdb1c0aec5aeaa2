// Full-chip PCIe error tests (decision 108): host 0's PCIe model answers chosen DMA bursts with
// SLVERR or DECERR (PcieHost::set_errors, armed after the connections are up). Each case checks
// the whole outcome: NIC_STATUS names the failed access (channel, code, AXI ID: which client),
// the PCIE_* counter counts it, no byte of the error response (all 0xFF) reaches the peer's
// memory, host 0's memory is never written again (not even by the peer's WRITEs arriving later),
// and once the host has seen the fatal state every WR posted completes exactly once: those the
// NIC had completed with their CQEs, the rest with WR_FLUSH_ERR from the host library.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "sim_backend.hpp"
#include "two_hosts.hpp"
#include "srnic/abi.hpp"
#include "srnic/sim/pcie_bfm.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim {
namespace {

constexpr uint64_t kMac[2] = {0x020000000001ull, 0x020000000002ull};
constexpr uint32_t kIp[2] = {0x0A000001u, 0x0A000002u};

// Never 0xFF, so any 0xFF byte in a buffer came from an error response.
uint8_t init_byte(int h, uint64_t off) { return uint8_t((off * 7 + uint64_t(h) * 13 + 1) % 251); }

class PcieError : public TwoHosts {
 public:
  PcieError() : TwoHosts({{kMac[0], kMac[1]}, {kIp[0], kIp[1]}, 23, &init_byte}) {}

  void arm(const PcieErrorRule& r) {
    PcieErrorInjection inj;
    inj.rules.push_back(r);
    world->pcie(0).set_errors(inj);
  }
  // The next read (or write) burst host 0's NIC makes.
  uint64_t next_read() { return world->pcie(0).stats().read_bursts + 1; }

  void run_us(double us) {
    const double end = world->pcie(0).now_ns() + us * 1000;
    while (world->pcie(0).now_ns() < end) world->step();
  }
  uint32_t counter(int h, int idx) { return host[h].dev->read_counter(idx); }

  std::vector<uint8_t> memory(int h, uint64_t addr, size_t n) {
    std::vector<uint8_t> v(n);
    host[h].be->mem_read(addr, v.data(), n);
    return v;
  }
  std::vector<uint8_t> buffer(int h) { return memory(h, host[h].buf, kBuf); }

  // Runs until host 0 reports the fatal state (polling NIC_STATUS every 5 us) and returns it.
  sw::NicStatus wait_fatal(double max_us = 500) {
    for (double t = 0; t < max_us; t += 5) {
      if (auto st = host[0].dev->query_fatal()) return *st;
      run_us(5);
    }
    ADD_FAILURE() << "host 0 never became fatal";
    return {};
  }

  // Polls host 0's send CQ until `n` completions came (after the fatal state is known, the
  // library's flush must deliver the rest at once); wr_id -> status.
  std::map<uint64_t, sw::WcStatus> drain_send_cq(size_t n) {
    std::map<uint64_t, sw::WcStatus> got;
    sw::WorkCompletion wc[4];
    for (int i = 0; i < 1000 && got.size() < n; ++i) {
      const int k = host[0].scq->poll_cq(4, wc);
      for (int j = 0; j < k; ++j) {
        EXPECT_TRUE(got.emplace(wc[j].wr_id, wc[j].status).second) << "wr_id " << wc[j].wr_id << " completed twice";
      }
      if (k == 0) world->step();
    }
    sw::WorkCompletion extra;
    EXPECT_EQ(host[0].scq->poll_cq(1, &extra), 0) << "a completion beyond the WRs posted";
    return got;
  }

  // After the fatal state: the peer writes into host 0's buffer; nothing of it may land, and
  // host 0's rings and buffer stay as they were.
  void expect_host0_sealed() {
    const std::vector<uint8_t> before = buffer(0);
    const std::vector<uint8_t> cq_before = memory(0, host[0].scq->base(), size_t(host[0].scq->size()) * 32);
    const std::vector<uint8_t> rcq_before = memory(0, host[0].rcq->base(), size_t(host[0].rcq->size()) * 32);
    post(1, 1, sw::WrOpcode::RdmaWrite, 900, 0x2000, 8192, 0x6000);
    run_us(60);
    EXPECT_EQ(buffer(0), before) << "host 0's memory was written after it became fatal";
    EXPECT_EQ(memory(0, host[0].scq->base(), size_t(host[0].scq->size()) * 32), cq_before);
    EXPECT_EQ(memory(0, host[0].rcq->base(), size_t(host[0].rcq->size()) * 32), rcq_before);
  }

  void expect_no_ff(int h) {
    const std::vector<uint8_t> b = buffer(h);
    for (size_t i = 0; i < b.size(); ++i)
      if (b[i] == 0xFF) {
        ADD_FAILURE() << "host " << h << " buffer offset " << i << " holds 0xFF: error-response data was placed";
        return;
      }
  }
};

// A payload read of a WRITE fails: the frame that may carry it leaves with a bad ICRC or not at
// all, the peer places nothing of it, and every WR completes exactly once.
TEST_F(PcieError, TxPayloadReadErrorIsFatalAndNothingOfItLeaves) {
  PcieErrorRule r;
  r.channel = PcieErrorRule::Channel::Read;
  r.lo = host[0].buf + 0x4000;
  r.hi = host[0].buf + 0x5000;
  arm(r);
  post(0, 0, sw::WrOpcode::RdmaWrite, 1, 0x0000, 4096, 0x0000);
  post(0, 0, sw::WrOpcode::RdmaWrite, 2, 0x4000, 4096, 0x4000);  // reads the failing range
  post(0, 0, sw::WrOpcode::RdmaWrite, 3, 0x8000, 4096, 0x8000);
  post(0, 1, sw::WrOpcode::RdmaWrite, 4, 0xC000, 4096, 0xC000, 0);  // unsignaled, other QP
  const sw::NicStatus st = wait_fatal();
  EXPECT_TRUE(st.fatal);
  EXPECT_FALSE(st.is_write);
  EXPECT_EQ(st.code, PcieErrorRule::kSlvErr);
  EXPECT_EQ(st.axi_id, 1) << "TX payload reads use AXI ID 1";
  EXPECT_GE(counter(0, abi::CNT_PCIE_RD_ERR), 1u);
  EXPECT_EQ(counter(0, abi::CNT_PCIE_WR_ERR), 0u);
  EXPECT_GE(world->pcie(0).stats().rd_err_beats, 1u);
  run_us(20);
  expect_no_ff(1);
  // the failed WRITE's target holds host 1's own bytes or host 0's source bytes, nothing else
  const std::vector<uint8_t> dst = memory(1, host[1].buf + 0x4000, 4096);
  for (size_t i = 0; i < dst.size(); ++i) {
    const uint8_t own = init_byte(1, 0x4000 + i), src = init_byte(0, 0x4000 + i);
    if (dst[i] != own && dst[i] != src) {
      ADD_FAILURE() << "host 1 offset " << 0x4000 + i << " holds " << int(dst[i]);
      break;
    }
  }
  const auto got = drain_send_cq(4);
  ASSERT_EQ(got.size(), 4u);
  for (uint64_t id = 2; id <= 4; ++id)
    EXPECT_EQ(got.at(id), sw::WcStatus::WrFlushErr) << "wr_id " << id << ": " << sw::to_string(got.at(id));
  EXPECT_TRUE(got.at(1) == sw::WcStatus::Success || got.at(1) == sw::WcStatus::WrFlushErr)
      << sw::to_string(got.at(1));
  if (got.at(1) == sw::WcStatus::Success)
    EXPECT_EQ(memory(1, host[1].buf, 4096), memory(0, host[0].buf, 4096)) << "WR 1 succeeded but its bytes differ";
  expect_host0_sealed();
  // posting on a fatal device is refused
  sw::Sge sge{host[0].buf, 64, host[0].mr->lkey()};
  sw::SendWr wr;
  wr.wr_id = 5;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = sw::WrOpcode::RdmaWrite;
  wr.remote_addr = host[1].buf;
  wr.rkey = host[1].mr->rkey();
  EXPECT_THROW(host[0].qps[0]->post_send(&wr), sw::Error);
}

// A send WQE read fails with DECERR: NIC_STATUS names AXI ID 0; the WR never runs.
TEST_F(PcieError, SendWqeReadDecerrIsFatal) {
  const std::vector<uint8_t> peer_before = buffer(1);
  PcieErrorRule r;
  r.channel = PcieErrorRule::Channel::Read;
  r.nth = next_read();  // the WQE read of the WRITE below
  r.resp = PcieErrorRule::kDecErr;
  arm(r);
  post(0, 0, sw::WrOpcode::RdmaWrite, 7, 0x0000, 2048, 0x0000);
  const sw::NicStatus st = wait_fatal();
  EXPECT_FALSE(st.is_write);
  EXPECT_EQ(st.code, PcieErrorRule::kDecErr);
  EXPECT_EQ(st.axi_id, 0) << "send WQE reads use AXI ID 0";
  run_us(20);
  EXPECT_EQ(buffer(1), peer_before) << "a WR whose WQE read failed moved data";
  const auto got = drain_send_cq(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at(7), sw::WcStatus::WrFlushErr);
  expect_host0_sealed();
}

// A receive WQE read fails: the SEND is not placed anywhere on host 0.
TEST_F(PcieError, ReceiveWqeReadErrorPlacesNothing) {
  const std::vector<uint8_t> before = buffer(0);
  PcieErrorRule r;
  r.channel = PcieErrorRule::Channel::Read;
  r.nth = next_read();  // the receive WQE's read (a prefetch, or when the SEND arrives)
  arm(r);
  post_recv(0, 0, 11, 0x1000, 4096);
  post(1, 0, sw::WrOpcode::Send, 12, 0x3000, 1024);
  const sw::NicStatus st = wait_fatal();
  EXPECT_EQ(st.axi_id, 2) << "receive WQE reads use AXI ID 2";
  run_us(20);
  EXPECT_EQ(buffer(0), before) << "the SEND was placed although its receive WQE read failed";
  sw::WorkCompletion wc[2];
  int n = 0;
  for (int i = 0; i < 100 && n == 0; ++i) {
    n = host[0].rcq->poll_cq(2, wc);
    if (n == 0) world->step();
  }
  ASSERT_EQ(n, 1);
  EXPECT_EQ(wc[0].wr_id, 11u);
  EXPECT_EQ(wc[0].status, sw::WcStatus::WrFlushErr);
  expect_host0_sealed();
}

// The completion engine's WQE read fails (after the WRITE went out and before its ACK came
// back): NIC_STATUS names AXI ID 3, and the WR, whose data did land, is flushed: the host can
// no longer tell from the NIC whether it completed.
TEST_F(PcieError, CompletionWqeReadErrorIsFatal) {
  post(0, 0, sw::WrOpcode::RdmaWrite, 51, 0x0000, 1024, 0x0000);
  // the send path's WQE read and the payload read were issued: from now on the ring fails
  const uint64_t reads0 = world->pcie(0).stats().read_bursts;
  for (int i = 0; i < 20000 && world->pcie(0).stats().read_bursts < reads0 + 2; ++i) world->step();
  ASSERT_GE(world->pcie(0).stats().read_bursts, reads0 + 2);
  PcieErrorRule r;
  r.channel = PcieErrorRule::Channel::Read;
  r.lo = host[0].qps[0]->sq_base();
  r.hi = r.lo + uint64_t(host[0].qps[0]->cap().max_send_wr) * 64;
  arm(r);
  const sw::NicStatus st = wait_fatal();
  EXPECT_EQ(st.axi_id, 3) << "completion WQE reads use AXI ID 3";
  EXPECT_EQ(memory(1, host[1].buf, 1024), memory(0, host[0].buf, 1024)) << "the WRITE itself went out before";
  const auto got = drain_send_cq(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at(51), sw::WcStatus::WrFlushErr);
  expect_host0_sealed();
}

// A CQE write fails: the CQE is not in the ring, NIC_STATUS says write, and the host library
// flushes the WR whose CQE was lost.
TEST_F(PcieError, CqeWriteErrorIsFatal) {
  PcieErrorRule r;
  r.channel = PcieErrorRule::Channel::Write;
  r.lo = host[0].scq->base();
  r.hi = host[0].scq->base() + uint64_t(host[0].scq->size()) * 32;
  arm(r);
  post(0, 0, sw::WrOpcode::RdmaWrite, 21, 0x0000, 1024, 0x0000);
  const sw::NicStatus st = wait_fatal();
  EXPECT_TRUE(st.is_write);
  EXPECT_EQ(st.code, PcieErrorRule::kSlvErr);
  EXPECT_EQ(counter(0, abi::CNT_PCIE_WR_ERR), 1u);
  EXPECT_EQ(counter(0, abi::CNT_PCIE_RD_ERR), 0u);
  const std::vector<uint8_t> ring = memory(0, host[0].scq->base(), size_t(host[0].scq->size()) * 32);
  for (uint8_t b : ring) ASSERT_EQ(b, 0) << "the failed CQE write reached the ring";
  const auto got = drain_send_cq(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got.at(21), sw::WcStatus::WrFlushErr);
  expect_host0_sealed();
}

// The peer is not paused for good by a fatal NIC: host 1's traffic to a third party would
// stall if host 0 held XOFF; here host 1 keeps sending to host 0 for a while and host 0's RX
// buffer keeps draining (no RX_DROP_OVERFLOW, the pause ends).
TEST_F(PcieError, FatalNicKeepsDrainingItsRxBuffer) {
  PcieErrorRule r;
  r.channel = PcieErrorRule::Channel::Read;
  r.nth = next_read();
  arm(r);
  post(0, 0, sw::WrOpcode::RdmaWrite, 31, 0x0000, 1024, 0x0000);
  wait_fatal();
  for (int i = 0; i < 8; ++i) post(1, 1, sw::WrOpcode::RdmaWrite, 40 + uint64_t(i), 0x1000 * uint64_t(i), 4096, 0x8000);
  const uint32_t rx0 = counter(0, abi::CNT_RX_FRAMES);
  run_us(100);
  EXPECT_GT(counter(0, abi::CNT_RX_FRAMES), rx0 + 8) << "host 0 stopped taking frames";
  EXPECT_EQ(counter(0, abi::CNT_RX_DROP_OVERFLOW), 0u);
  EXPECT_EQ(counter(0, abi::CNT_PCIE_RD_ERR), 1u);
}

}  // namespace
}  // namespace srnic::sim
