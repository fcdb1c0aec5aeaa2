// strings.cpp: names for verbs enums and masks, NIC_STATUS text, MTU sizes, RoCEv2 UDP
// source-port derivation.
#include "srnic/verbs.hpp"

namespace srnic::sw {

const char* to_string(WcStatus s) {
  switch (s) {
    case WcStatus::Success: return "success";
    case WcStatus::LocLenErr: return "local length error";
    case WcStatus::LocQpOpErr: return "local QP operation error";
    case WcStatus::LocEecOpErr: return "local EE context operation error";
    case WcStatus::LocProtErr: return "local protection error";
    case WcStatus::WrFlushErr: return "Work Request Flushed Error";
    case WcStatus::MwBindErr: return "memory bind operation error";
    case WcStatus::BadRespErr: return "bad response error";
    case WcStatus::LocAccessErr: return "local access error";
    case WcStatus::RemInvReqErr: return "remote invalid request error";
    case WcStatus::RemAccessErr: return "remote access error";
    case WcStatus::RemOpErr: return "remote operation error";
    case WcStatus::RetryExcErr: return "transport retry counter exceeded";
    case WcStatus::RnrRetryExcErr: return "RNR retry counter exceeded";
    case WcStatus::LocRddViolErr: return "local RDD violation error";
    case WcStatus::RemInvRdReqErr: return "remote invalid RD request";
    case WcStatus::RemAbortErr: return "aborted error";
    case WcStatus::InvEecnErr: return "invalid EE context number";
    case WcStatus::InvEecStateErr: return "invalid EE context state";
    case WcStatus::FatalErr: return "fatal error";
    case WcStatus::RespTimeoutErr: return "response timeout error";
    case WcStatus::GeneralErr: return "general error";
  }
  return "unknown";
}

const char* to_string(WcOpcode op) {
  switch (op) {
    case WcOpcode::Send: return "SEND";
    case WcOpcode::RdmaWrite: return "RDMA_WRITE";
    case WcOpcode::RdmaRead: return "RDMA_READ";
    case WcOpcode::Recv: return "RECV";
    case WcOpcode::RecvRdmaWithImm: return "RECV_RDMA_WITH_IMM";
  }
  return "unknown";
}

const char* to_string(WrOpcode op) {
  switch (op) {
    case WrOpcode::RdmaWrite: return "RDMA_WRITE";
    case WrOpcode::RdmaWriteWithImm: return "RDMA_WRITE_WITH_IMM";
    case WrOpcode::Send: return "SEND";
    case WrOpcode::SendWithImm: return "SEND_WITH_IMM";
    case WrOpcode::RdmaRead: return "RDMA_READ";
  }
  return "unknown";
}

const char* to_string(QpState s) {
  switch (s) {
    case QpState::Reset: return "RESET";
    case QpState::Init: return "INIT";
    case QpState::Rtr: return "RTR";
    case QpState::Rts: return "RTS";
    case QpState::Sqd: return "SQD";
    case QpState::Sqe: return "SQE";
    case QpState::Err: return "ERR";
  }
  return "unknown";
}

std::string attr_mask_string(uint32_t mask) {
  static const char* const names[26] = {
      "STATE", "CUR_STATE", "EN_SQD_ASYNC_NOTIFY", "ACCESS_FLAGS", "PKEY_INDEX", "PORT", "QKEY",
      "AV", "PATH_MTU", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "RQ_PSN", "MAX_QP_RD_ATOMIC",
      "ALT_PATH", "MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE", "CAP",
      "DEST_QPN", "BIT21", "BIT22", "BIT23", "BIT24", "RATE_LIMIT"};
  std::string s;
  for (int b = 0; b < 32; ++b) {
    if (!(mask >> b & 1)) continue;
    if (!s.empty()) s += ',';
    s += b < 26 ? names[b] : "BIT" + std::to_string(b);
  }
  return s;
}

std::string to_string(const NicStatus& s) {
  // what a PCIe read of a device that no longer answers returns (surprise removal, link down)
  if (s.raw == 0xFFFFFFFFu) return "NIC_STATUS reads 0xFFFFFFFF: the NIC does not answer";
  if (!s.fatal) return "no fatal error";
  static const char* const codes[4] = {"OKAY", "EXOKAY", "SLVERR", "DECERR"};
  static const char* const readers[4] = {"send WQE", "TX payload", "receive WQE", "completion WQE"};
  std::string r = std::string("PCIe ") + (s.is_write ? "write" : "read") + " error (" + codes[s.code & 3] + ")";
  // every write carries AXI ID 0, so the ID names no writer
  if (!s.is_write || s.axi_id) r += " on AXI ID " + std::to_string(s.axi_id);
  if (!s.is_write && s.axi_id < 4) r += std::string(" (") + readers[s.axi_id] + ")";
  return r;
}

uint32_t mtu_bytes(Mtu mtu) {
  const unsigned v = unsigned(mtu);
  return v >= 1 && v <= 5 ? 128u << v : 0;
}

uint32_t calc_flow_label(uint32_t local_qpn, uint32_t remote_qpn) {
  uint64_t v = uint64_t(local_qpn) * remote_qpn;
  v ^= v >> 20;
  v ^= v >> 40;
  return uint32_t(v & 0xFFFFF);
}

uint16_t flow_label_to_udp_sport(uint32_t fl) {
  return uint16_t(((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000);
}

}  // namespace srnic::sw
