// Full-chip test: a burst of fatal NAKs over many QPs. Host 0 posts, on each of N QPs, a WRITE
// with an R_Key host 1 does not know, followed by more WRs; host 1 answers each QP's first
// WRITE with a NAK (remote access error) at once, so host 0's RX engine turns N fatal NAKs into
// completion events within a few microseconds, while its completion engine (WQE reads over
// PCIe), the qerr requests to the RX engine and the stop requests to the send path all fill up.
// Every WR must still complete: the first of each QP with REM_ACCESS_ERR, the rest with
// WR_FLUSH_ERR, and another QP must keep working afterwards. When completions stop, both NICs'
// counters are printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "sim_backend.hpp"
#include "two_hosts.hpp"
#include "srnic/abi.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim {
namespace {

constexpr uint64_t kMac[2] = {0x020000000001ull, 0x020000000002ull};
constexpr uint32_t kIp[2] = {0x0A000001u, 0x0A000002u};
uint8_t init_byte(int h, uint64_t off) { return uint8_t(off * 3 + uint64_t(h) * 17 + 5); }

class NakStorm : public TwoHosts {
 public:
  NakStorm() : TwoHosts({{kMac[0], kMac[1]}, {kIp[0], kIp[1]}, 41, &init_byte}) {}

  // n more QP pairs whose send completions go to one large CQ per host
  void add_storm_qps(int n) {
    for (int h = 0; h < 2; ++h) big_cq[h] = host[h].dev->create_cq(4096);
    for (int i = 0; i < n; ++i) {
      for (int h = 0; h < 2; ++h) {
        sw::QpInitAttr ia;
        ia.send_cq = big_cq[h].get();
        ia.recv_cq = host[h].rcq.get();
        ia.cap.max_send_wr = 8;
        ia.cap.max_recv_wr = 8;
        host[h].qps.push_back(host[h].dev->create_qp(*host[h].pd, ia));
      }
      const int q = int(host[0].qps.size()) - 1;
      for (int h = 0; h < 2; ++h) connect(h, q, 1000 + uint32_t(q) * 16);
      storm.push_back(q);
    }
  }

  std::unique_ptr<sw::CompletionQueue> big_cq[2];
  std::vector<int> storm;
};

void nak_storm(NakStorm& t, int qps, int wrs_per_qp, bool hold_naks) {
  t.add_storm_qps(qps);
  // host 0 asks host 1 to stop: host 1's NAKs queue up and leave in one burst when it resumes
  if (hold_naks) t.world->link(0).set_pause(0, true, t.world->now_ns());
  const uint32_t bad_rkey = t.host[1].mr->rkey() ^ 0x80u;
  size_t posted = 0;
  for (int q : t.storm) {
    for (int i = 0; i < wrs_per_qp; ++i) {
      const uint64_t id = uint64_t(q) << 8 | uint64_t(i);
      t.post(0, q, sw::WrOpcode::RdmaWrite, id, 0x100 * uint64_t(i), 256, 0, sw::SendFlags::Signaled, {},
             i == 0 ? std::optional<uint32_t>(bad_rkey) : std::nullopt);
      ++posted;
    }
  }
  if (hold_naks) {
    for (int i = 0; i < 60000; ++i) t.world->step();   // 200 us: every WRITE reached host 1
    t.world->link(0).set_pause(0, false, t.world->now_ns());
  }
  std::map<uint64_t, sw::WcStatus> got;
  sw::WorkCompletion wc[16];
  uint64_t idle = 0;
  for (uint64_t c = 0; c < 3000000 && got.size() < posted && idle < 600000; ++c) {
    const int n = t.big_cq[0]->poll_cq(16, wc);
    for (int k = 0; k < n; ++k) got[wc[k].wr_id] = wc[k].status;
    idle = n ? 0 : idle + 1;
    t.world->step();
  }
  if (got.size() < posted)
    for (int h = 0; h < 2; ++h) {
      std::string line = "host " + std::to_string(h) + ":";
      for (int c = 0; c < abi::NUM_COUNTERS; ++c)
        if (const uint32_t v = t.host[h].dev->read_counter(c))
          line += std::string(" ") + abi::counter_name(c) + "=" + std::to_string(v);
      ADD_FAILURE() << line;
    }
  ASSERT_EQ(got.size(), posted) << "completions stopped: " << got.size() << " of " << posted
                                << " after " << idle << " idle cycles (NIC-wide deadlock?)";
  for (const auto& [id, st] : got) {
    const bool first = (id & 0xFF) == 0;
    EXPECT_EQ(st, first ? sw::WcStatus::RemAccessErr : sw::WcStatus::WrFlushErr)
        << "wr_id 0x" << std::hex << id << ": " << sw::to_string(st);
  }
  // another QP still works
  t.post(0, 0, sw::WrOpcode::RdmaWrite, 0x77, 0x2000, 4096, 0x2000);
  sw::WorkCompletion one{};
  bool done = false;
  for (int i = 0; i < 400000 && !done; ++i) {
    done = t.host[0].scq->poll_cq(1, &one) == 1;
    if (!done) t.world->step();
  }
  ASSERT_TRUE(done) << "QP 0 made no progress after the storm";
  EXPECT_EQ(one.status, sw::WcStatus::Success) << sw::to_string(one.status);
}

TEST_F(NakStorm, FatalNaksOnManyQpsAllComplete) { nak_storm(*this, 192, 4, false); }
// The NAKs of all QPs arrive back to back (host 1 held them behind a pause). This deadlocked
// host 0 (44 of 768 completions, RX_NAK 102 of 192 frames received) while the completion
// engine waited for room in its qerr and stop FIFOs: the RX engine, which drains qerrs, and
// the send path, which drains stops and then reports the QP's WQEs for flushing, both waited
// for room in the coalescer's direct-event FIFO, which only the completion engine drains. The
// completion engine no longer waits for them (decision 110, owed_fifo).
TEST_F(NakStorm, ABurstOfFatalNaksAllComplete) { nak_storm(*this, 192, 4, true); }

// Retry episodes and fatal NAKs in one burst: on the even storm QPs host 0's first WRITE has a
// bad R_Key (a fatal NAK), on the odd ones host 0 sends SENDs that host 1 has posted no receives
// for (RNR NAKs: each starts a retry episode, whose answer the send path applies and passes on
// to the RX engine as a note). Host 1's answers are held behind a pause and leave in one burst;
// host 1 posts the receives 300 us later. Every WR must complete: the even QPs as in the fatal
// storm, every SEND with success (rnr_retry 7). It passes with 192 and with 600 QPs; it does not
// show the rewind-answer cycle docs/architecture.md describes under "Errors and bad input",
// which needs several episodes in the completion engine's pipeline at the moment the
// coalescer's direct FIFO is full.
TEST_F(NakStorm, RetryEpisodesAndFatalNaksInOneBurstAllComplete) {
  constexpr int kQps = 192, kWrs = 4;
  add_storm_qps(kQps);
  world->link(0).set_pause(0, true, world->now_ns());
  const uint32_t bad_rkey = host[1].mr->rkey() ^ 0x80u;
  size_t posted = 0;
  for (size_t k = 0; k < storm.size(); ++k) {
    const int q = storm[k];
    for (int i = 0; i < kWrs; ++i) {
      const uint64_t id = uint64_t(q) << 8 | uint64_t(i);
      if (k % 2 == 0)
        post(0, q, sw::WrOpcode::RdmaWrite, id, 0x100 * uint64_t(i), 256, 0, sw::SendFlags::Signaled, {},
             i == 0 ? std::optional<uint32_t>(bad_rkey) : std::nullopt);
      else
        post(0, q, sw::WrOpcode::Send, id, 0x100 * uint64_t(i), 256);
      ++posted;
    }
  }
  for (int i = 0; i < 60000; ++i) world->step();  // 200 us: every request reached host 1
  world->link(0).set_pause(0, false, world->now_ns());
  std::map<uint64_t, sw::WcStatus> got;
  sw::WorkCompletion wc[16];
  uint64_t idle = 0;
  bool recv_posted = false;
  const uint64_t t_recv = world->now_ns() + 300000;
  for (uint64_t c = 0; c < 6000000 && got.size() < posted && idle < 900000; ++c) {
    if (!recv_posted && world->now_ns() >= t_recv) {
      for (size_t k = 1; k < storm.size(); k += 2)
        for (int i = 0; i < kWrs; ++i) {
          sw::Sge sge{host[1].buf + 0x1000 + 0x100 * uint64_t(i), 256, host[1].mr->lkey()};
          sw::RecvWr wr;
          wr.wr_id = uint64_t(storm[k]) << 8 | uint64_t(i);
          wr.sg_list = &sge;
          wr.num_sge = 1;
          ASSERT_EQ(host[1].qps[size_t(storm[k])]->post_recv(&wr), 0);
        }
      recv_posted = true;
    }
    const int n = big_cq[0]->poll_cq(16, wc);
    for (int j = 0; j < n; ++j) got[wc[j].wr_id] = wc[j].status;
    idle = n ? 0 : idle + 1;
    world->step();
  }
  if (got.size() < posted)
    for (int h = 0; h < 2; ++h) {
      std::string line = "host " + std::to_string(h) + ":";
      for (int c = 0; c < abi::NUM_COUNTERS; ++c)
        if (const uint32_t v = host[h].dev->read_counter(c))
          line += std::string(" ") + abi::counter_name(c) + "=" + std::to_string(v);
      ADD_FAILURE() << line;
    }
  ASSERT_EQ(got.size(), posted) << "completions stopped: " << got.size() << " of " << posted << " after " << idle
                                << " idle cycles (NIC-wide deadlock?)";
  for (const auto& [id, st] : got) {
    const int q = int(id >> 8);
    const bool fatal_qp = (std::find(storm.begin(), storm.end(), q) - storm.begin()) % 2 == 0;
    const sw::WcStatus want = !fatal_qp ? sw::WcStatus::Success
                              : (id & 0xFF) == 0 ? sw::WcStatus::RemAccessErr : sw::WcStatus::WrFlushErr;
    EXPECT_EQ(st, want) << "wr_id 0x" << std::hex << id << ": " << sw::to_string(st);
  }
  // the burst did hold both kinds: a fatal NAK per even QP, RNR waits on the odd ones
  EXPECT_GE(host[0].dev->read_counter(abi::CNT_RNR_WAIT), uint32_t(kQps / 2));
  EXPECT_GE(host[0].dev->read_counter(abi::CNT_RX_NAK), uint32_t(kQps));
}

}  // namespace
}  // namespace srnic::sim
