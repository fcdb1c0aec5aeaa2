// qp_fixture.hpp: test fixture with a device on a MemoryBackend, a PD, two CQs and one RC QP
// (SQ 8, RQ 4 entries), plus the attribute sets for RESET -> INIT -> RTR -> RTS.
#pragma once

#include <gtest/gtest.h>

#include "memory_backend.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sw::test {

class QpFixture : public ::testing::Test {
 protected:
  static constexpr uint32_t kInitMask =
      QpAttrMask::State | QpAttrMask::PkeyIndex | QpAttrMask::Port | QpAttrMask::AccessFlags;
  static constexpr uint32_t kRtrMask = QpAttrMask::State | QpAttrMask::Av | QpAttrMask::PathMtu |
                                       QpAttrMask::DestQpn | QpAttrMask::RqPsn |
                                       QpAttrMask::MaxDestRdAtomic | QpAttrMask::MinRnrTimer;
  static constexpr uint32_t kRtsMask = QpAttrMask::State | QpAttrMask::Timeout | QpAttrMask::RetryCnt |
                                       QpAttrMask::RnrRetry | QpAttrMask::SqPsn | QpAttrMask::MaxQpRdAtomic;

  MemoryBackend be;
  Device dev{be};
  std::unique_ptr<ProtectionDomain> pd = dev.alloc_pd();
  std::unique_ptr<CompletionQueue> scq = dev.create_cq(16);
  std::unique_ptr<CompletionQueue> rcq = dev.create_cq(16);
  std::unique_ptr<QueuePair> qp = make_qp(5, 3, scq.get(), rcq.get());

  std::unique_ptr<QueuePair> make_qp(uint32_t send_wr, uint32_t recv_wr, CompletionQueue* s,
                                     CompletionQueue* r) {
    QpInitAttr init;
    init.send_cq = s;
    init.recv_cq = r;
    init.cap.max_send_wr = send_wr;
    init.cap.max_recv_wr = recv_wr;
    return dev.create_qp(*pd, init);
  }
  static QpAttr init_attr(unsigned access) {
    QpAttr a;
    a.qp_state = QpState::Init;
    a.qp_access_flags = access;
    return a;
  }
  static QpAttr rtr_attr(uint32_t dest_qpn, uint32_t rq_psn) {
    QpAttr a;
    a.qp_state = QpState::Rtr;
    a.path_mtu = Mtu::Mtu2048;
    a.dest_qp_num = dest_qpn;
    a.rq_psn = rq_psn;
    a.ah_attr.dmac = 0x02000000000Bull;
    a.ah_attr.dip = 0x0A000002;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 12;
    return a;
  }
  static QpAttr rts_attr(uint32_t sq_psn) {
    QpAttr a;
    a.qp_state = QpState::Rts;
    a.sq_psn = sq_psn;
    a.timeout = 14;
    a.retry_cnt = 5;
    a.rnr_retry = 6;
    a.max_rd_atomic = 4;
    return a;
  }
  static void to_rts(QueuePair& q) {
    q.modify(init_attr(Access::RemoteWrite | Access::RemoteRead), kInitMask);
    q.modify(rtr_attr(3, 0), kRtrMask);
    q.modify(rts_attr(0), kRtsMask);
  }
  void to_rts() { to_rts(*qp); }
};

}  // namespace srnic::sw::test
