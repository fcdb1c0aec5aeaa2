// Bit layouts of the srnic_pkg structs that cross block ports (rtl/pkg/srnic_pkg.sv), shared by
// the block benches: fields in declaration order, most significant first.
#pragma once
#include "bench.hpp"

namespace srnic::verif::blocks {

// srnic_pkg::qp_cmd_t (QPN_W = 16)
enum CmdF { kCQpn, kCState, kCMtu, kCAccess, kCLogSq, kCLogRq, kCSport, kCDqpn, kCPd, kCSqPsn, kCRqPsn,
            kCSendCqn, kCRecvCqn, kCDip, kCDmac, kCSqBase, kCRqBase, kCInitIdx, kCInitRqPsn, kCInitSqPsn,
            kCRetryCnt, kCRnrRetry, kCTimeout, kCMinRnr };
constexpr Layout<24> kQpCmd{{16, 3, 3, 4, 4, 4, 16, 24, 32, 24, 24, 16, 16, 32, 48, 64, 64, 1, 1, 1, 3, 3, 5, 5}};

// A QP_MODIFY to RESET of QP q into a qp_cmd_t signal: state RESET, the init flags 0 (a reset
// is no state transition the blocks initialise anything on), every other field random.
template <typename Sig, typename R>
void fill_reset_cmd(Sig& cmd, R& rng, uint32_t q) {
  for (size_t i = 0; i < kQpCmd.widths.size(); ++i) set_bits(cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, rng.next());
  auto put = [&](size_t f, uint64_t v) { set_bits(cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
  put(kCQpn, q);
  put(kCState, 0);  // QPS_RESET
  put(kCInitIdx, 0);
  put(kCInitRqPsn, 0);
  put(kCInitSqPsn, 0);
}

// srnic_pkg::tx_job_t
enum JobF { kJobGen, kQpn, kOpcode, kPsn, kAckreq, kSe, kRethVa, kRethRkey, kRethLen, kAethSyn, kAethMsn, kImm,
            kPayAddr, kPayLen, kResend };
constexpr Layout<15> kJob{{4, 16, 8, 24, 1, 1, 64, 32, 32, 8, 24, 32, 64, 13, 1}};

// srnic_pkg::rx_meta_t
enum RxMetaF { kRmDrop, kRmOpcode, kRmDqpn, kRmPsn, kRmAckreq, kRmSe, kRmRethVa, kRmRethRkey, kRmRethLen,
               kRmAethSyn, kRmAethMsn, kRmImm, kRmSrcIp, kRmPayOff, kRmPayLen, kRmNbeats, kRmRqFetched,
               kRmRqIdx, kRmRqFlush, kRmN };
constexpr Layout<19> kRxMeta{{1, 8, 24, 24, 1, 1, 64, 32, 32, 8, 24, 32, 32, 7, 13, 8, 1, 16, 1}};

// srnic_pkg::resp_task_t
enum RespTaskF { kRtGen, kRtIsRead, kRtQpn, kRtPsn, kRtSyndrome, kRtMsn, kRtAddr, kRtLen, kRtMtu };
constexpr Layout<9> kRespTask{{4, 1, 16, 24, 8, 24, 64, 32, 3}};

// srnic_pkg::comp_ev_t
enum CompEvF { kCeGen, kCeKind, kCeQpn, kCePsn, kCeStatus, kCePsn2, kCeHasAck, kCeHasRd, kCeHasRt, kCeRtKind,
               kCeRtCode, kCeRtPsn };
constexpr Layout<12> kCompEv{{4, 3, 16, 24, 8, 24, 1, 1, 1, 2, 5, 24}};

// srnic_pkg::rewind_t
enum RewindF { kRwGen, kRwQpn, kRwApply, kRwCi, kRwOff, kRwPsn, kRwRnr, kRwCode, kRwUp };
constexpr Layout<9> kRewind{{4, 16, 1, 16, 32, 24, 1, 5, 1}};

// srnic_pkg::mr_entry_t
enum MrEntryF { kMrIova, kMrLength, kMrPa, kMrKey, kMrPd, kMrAccess, kMrValid };
constexpr Layout<7> kMrEntry{{64, 64, 64, 32, 32, 4, 1}};

// srnic_pkg::cq_cmd_t
enum CqCmdF { kCcCqn, kCcBase, kCcLogSize, kCcValid };
constexpr Layout<4> kCqCmd{{16, 64, 4, 1}};

// srnic_pkg::cqe_req_t
enum CqeReqF { kCrGen, kCrCqn, kCrWrId, kCrByteLen, kCrImm, kCrQpn, kCrWqeIdx, kCrOpcode, kCrStatus, kCrWithImm };
constexpr Layout<10> kCqeReq{{4, 16, 64, 32, 32, 16, 16, 8, 8, 1}};

// srnic_pkg::rx_job_t (QPN_W = 16); task_, cqe and cev hold a resp_task_t, cqe_req_t and
// comp_ev_t (kRespTask, kCqeReq, kCompEv at the field's lsb)
enum RxJobF { kRjPlace, kRjDst, kRjPayOff, kRjPayLen, kRjNbeats, kRjRd, kRjQpn, kRjHasTask, kRjTask, kRjHasCqe,
              kRjCqe, kRjHasCev, kRjCev };
constexpr Layout<13> kRxJob{{1, 64, 7, 13, 8, 1, 16, 1, 176, 1, 197, 1, 113}};

}  // namespace srnic::verif::blocks
