// Bit layouts of the srnic_pkg structs that cross block ports (rtl/srnic_pkg.sv), shared by
// the block benches: fields in declaration order, most significant first.
#pragma once
#include "bench.hpp"

namespace srnic::verif::blocks {

// srnic_pkg::qp_cmd_t (QPN_W = 16)
enum CmdF { kCQpn, kCState, kCMtu, kCAccess, kCLogSq, kCLogRq, kCSport, kCDqpn, kCPd, kCSqPsn, kCRqPsn,
            kCSendCqn, kCRecvCqn, kCDip, kCDmac, kCSqBase, kCRqBase, kCInitIdx, kCInitRqPsn, kCInitSqPsn };
constexpr Layout<20> kQpCmd{{16, 3, 3, 4, 4, 4, 16, 24, 32, 24, 24, 16, 16, 32, 48, 64, 64, 1, 1, 1}};

// srnic_pkg::tx_job_t
enum JobF { kQpn, kOpcode, kPsn, kAckreq, kSe, kRethVa, kRethRkey, kRethLen, kAethSyn, kAethMsn, kImm,
            kPayAddr, kPayLen };
constexpr Layout<13> kJob{{16, 8, 24, 1, 1, 64, 32, 32, 8, 24, 32, 64, 13}};

// srnic_pkg::rx_meta_t
enum RxMetaF { kRmDrop, kRmOpcode, kRmDqpn, kRmPsn, kRmAckreq, kRmSe, kRmRethVa, kRmRethRkey, kRmRethLen,
               kRmAethSyn, kRmAethMsn, kRmImm, kRmSrcIp, kRmPayOff, kRmPayLen, kRmNbeats, kRmRqFetched,
               kRmRqIdx, kRmRqFlush, kRmN };
constexpr Layout<19> kRxMeta{{1, 8, 24, 24, 1, 1, 64, 32, 32, 8, 24, 32, 32, 7, 13, 8, 1, 16, 1}};

// srnic_pkg::resp_task_t
enum RespTaskF { kRtIsRead, kRtQpn, kRtPsn, kRtSyndrome, kRtMsn, kRtAddr, kRtLen, kRtMtu };
constexpr Layout<8> kRespTask{{1, 16, 24, 8, 24, 64, 32, 3}};

// srnic_pkg::comp_ev_t
enum CompEvF { kCeKind, kCeQpn, kCePsn, kCeStatus, kCePsn2, kCeHasAck, kCeHasRd };
constexpr Layout<7> kCompEv{{3, 16, 24, 8, 24, 1, 1}};

// srnic_pkg::cqe_req_t
enum CqeReqF { kCrCqn, kCrWrId, kCrByteLen, kCrImm, kCrQpn, kCrWqeIdx, kCrOpcode, kCrStatus, kCrWithImm };
constexpr Layout<9> kCqeReq{{16, 64, 32, 32, 16, 16, 8, 8, 1}};

}  // namespace srnic::verif::blocks
