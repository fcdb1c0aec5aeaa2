// Two simulated srnic hosts on one link, set up through the host library, for the full-chip
// GoogleTests: per host a PD, send and receive CQs, a 64 KiB buffer with a known pattern
// registered as one MR (local write, remote write and read), and two QPs connected in pairs
// (QP q of host 0 with QP q of host 1) at path MTU 1024.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim_backend.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim {

constexpr uint32_t kBuf = 1 << 16;  // each host's registered buffer

struct HostSide {
  std::unique_ptr<SimBackend> be;
  std::unique_ptr<sw::Device> dev;
  std::unique_ptr<sw::ProtectionDomain> pd;
  std::unique_ptr<sw::CompletionQueue> scq, rcq;
  std::unique_ptr<sw::MemoryRegion> mr;
  std::vector<std::unique_ptr<sw::QueuePair>> qps;
  uint64_t buf = 0;
};

struct TwoHostConfig {
  uint64_t mac[2];
  uint32_t ip[2];
  uint64_t seed;
  uint8_t (*init)(int h, uint64_t off);  // initial byte of host h's buffer at offset off
};

class TwoHosts : public ::testing::Test {
 public:
  explicit TwoHosts(const TwoHostConfig& c) : cfg_(c) {}

  void SetUp() override {
    WorldConfig wc;
    wc.seed = cfg_.seed;
    world = std::make_unique<World>(wc);
    for (int h = 0; h < 2; ++h) {
      HostSide& s = host[h];
      s.be = std::make_unique<SimBackend>(*world, size_t(h));
      s.dev = std::make_unique<sw::Device>(*s.be);
      s.dev->set_mac(cfg_.mac[h]);
      s.dev->set_ipv4(cfg_.ip[h]);
      s.pd = s.dev->alloc_pd();
      s.scq = s.dev->create_cq(64);
      s.rcq = s.dev->create_cq(64);
      s.buf = s.be->dma_alloc(kBuf, 4096);
      std::vector<uint8_t> init(kBuf);
      for (uint32_t i = 0; i < kBuf; ++i) init[i] = cfg_.init(h, i);
      s.be->mem_write(s.buf, init.data(), init.size());
      s.mr = s.dev->reg_mr(*s.pd, s.buf, kBuf,
                           sw::Access::LocalWrite | sw::Access::RemoteWrite | sw::Access::RemoteRead);
      for (int q = 0; q < 2; ++q) {
        sw::QpInitAttr ia;
        ia.send_cq = s.scq.get();
        ia.recv_cq = s.rcq.get();
        ia.cap.max_send_wr = 16;
        ia.cap.max_recv_wr = 16;
        s.qps.push_back(s.dev->create_qp(*s.pd, ia));
      }
    }
    for (int h = 0; h < 2; ++h)
      for (int q = 0; q < 2; ++q) connect(h, q);
  }

  // One more QP on each host (send and receive rings of `depth`), connected to each other;
  // returns its index.
  int add_qp_pair(uint32_t depth) {
    for (int h = 0; h < 2; ++h) {
      sw::QpInitAttr ia;
      ia.send_cq = host[h].scq.get();
      ia.recv_cq = host[h].rcq.get();
      ia.cap.max_send_wr = depth;
      ia.cap.max_recv_wr = depth;
      host[h].qps.push_back(host[h].dev->create_qp(*host[h].pd, ia));
    }
    const int q = int(host[0].qps.size()) - 1;
    for (int h = 0; h < 2; ++h) connect(h, q);
    return q;
  }

  // Retry attributes connect() gives a QP (a test may change them before reconnecting one).
  struct RetryAttrs {
    uint8_t timeout = 8;    // 4.096 us * 2^8 = 1.05 ms
    uint8_t retry_cnt = 7;  // 7: no limit
    uint8_t rnr_retry = 7;  // 7: no limit
    uint8_t min_rnr_timer = 1;
  } retry;

  // RESET -> INIT -> RTR -> RTS of host h's QP q towards the peer's QP q; QP q's PSNs start at
  // psn0 + q in both directions.
  void connect(int h, int q, uint32_t psn0 = 100) {
    sw::QueuePair& qp = *host[h].qps[size_t(q)];
    sw::QpAttr a;
    a.qp_state = sw::QpState::Init;
    a.qp_access_flags = sw::Access::RemoteWrite | sw::Access::RemoteRead;
    qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::PkeyIndex | sw::QpAttrMask::Port |
                     sw::QpAttrMask::AccessFlags);
    a.qp_state = sw::QpState::Rtr;
    a.path_mtu = sw::Mtu::Mtu1024;
    a.dest_qp_num = host[1 - h].qps[size_t(q)]->qp_num();
    a.rq_psn = psn0 + uint32_t(q);
    a.ah_attr.dmac = cfg_.mac[1 - h];
    a.ah_attr.dip = cfg_.ip[1 - h];
    a.min_rnr_timer = retry.min_rnr_timer;
    a.max_dest_rd_atomic = 16;
    qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Av | sw::QpAttrMask::PathMtu |
                     sw::QpAttrMask::DestQpn | sw::QpAttrMask::RqPsn | sw::QpAttrMask::MaxDestRdAtomic |
                     sw::QpAttrMask::MinRnrTimer);
    a.qp_state = sw::QpState::Rts;
    a.sq_psn = psn0 + uint32_t(q);
    a.timeout = retry.timeout;
    a.retry_cnt = retry.retry_cnt;
    a.rnr_retry = retry.rnr_retry;
    a.max_rd_atomic = 16;
    qp.modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Timeout | sw::QpAttrMask::RetryCnt |
                     sw::QpAttrMask::RnrRetry | sw::QpAttrMask::SqPsn | sw::QpAttrMask::MaxQpRdAtomic);
  }

  // Posts one WR on host h's QP q: local bytes [loff, loff + len) of its buffer, remote offset
  // roff in the peer's buffer (WRITE, READ); keys default to the two hosts' MRs.
  void post(int h, int q, sw::WrOpcode op, uint64_t wr_id, uint64_t loff, uint32_t len, uint64_t roff = 0,
            unsigned flags = sw::SendFlags::Signaled, std::optional<uint32_t> lkey = {},
            std::optional<uint32_t> rkey = {}) {
    sw::Sge sge{host[h].buf + loff, len, lkey.value_or(host[h].mr->lkey())};
    sw::SendWr wr;
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = flags;
    wr.remote_addr = host[1 - h].buf + roff;
    wr.rkey = rkey.value_or(host[1 - h].mr->rkey());
    ASSERT_EQ(host[h].qps[size_t(q)]->post_send(&wr), 0);
  }

  // Steps the world for us microseconds of simulated time.
  void run_us(double us) {
    const double end = world->now_ns() + us * 1000;
    while (world->now_ns() < end) world->step();
  }
  // Host 1 asks host 0's transmitter to stop (on) or resume (the link partner's flow control).
  void pause_host0(bool on) { world->link(0).set_pause(1, on, world->now_ns()); }

  // Posts one receive on host h's QP q: bytes [loff, loff + len) of its buffer.
  void post_recv(int h, int q, uint64_t wr_id, uint64_t loff, uint32_t len) {
    sw::Sge sge{host[h].buf + loff, len, host[h].mr->lkey()};
    sw::RecvWr wr;
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ASSERT_EQ(host[h].qps[size_t(q)]->post_recv(&wr), 0);
  }

  std::unique_ptr<World> world;
  HostSide host[2];

 protected:
  TwoHostConfig cfg_;
};

}  // namespace srnic::sim
