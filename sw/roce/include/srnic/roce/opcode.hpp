// BTH opcode table: name, extension headers, payload rules, message position and role.
#pragma once

#include <cstddef>
#include <cstdint>

namespace srnic::roce {

namespace op {
// RC
constexpr uint8_t kRcSendFirst = 0x00, kRcSendMiddle = 0x01, kRcSendLast = 0x02,
                  kRcSendLastImm = 0x03, kRcSendOnly = 0x04, kRcSendOnlyImm = 0x05,
                  kRcWriteFirst = 0x06, kRcWriteMiddle = 0x07, kRcWriteLast = 0x08,
                  kRcWriteLastImm = 0x09, kRcWriteOnly = 0x0A, kRcWriteOnlyImm = 0x0B,
                  kRcReadRequest = 0x0C, kRcReadResponseFirst = 0x0D,
                  kRcReadResponseMiddle = 0x0E, kRcReadResponseLast = 0x0F,
                  kRcReadResponseOnly = 0x10, kRcAck = 0x11, kRcAtomicAck = 0x12,
                  kRcCompareSwap = 0x13, kRcFetchAdd = 0x14, kRcSendLastInv = 0x16,
                  kRcSendOnlyInv = 0x17, kRcFlush = 0x1C, kRcAtomicWrite = 0x1D;
// UC = RC | 0x20 for SEND/WRITE opcodes 0x00..0x0B
constexpr uint8_t kUcBase = 0x20;
// UD
constexpr uint8_t kUdSendOnly = 0x64, kUdSendOnlyImm = 0x65;
// Congestion notification packet
constexpr uint8_t kCnp = 0x81;
}  // namespace op

// Extension header presence bits; headers follow the BTH in the order of the bits.
enum HdrBit : uint16_t {
  kHdrFeth = 1 << 0,
  kHdrDeth = 1 << 1,
  kHdrReth = 1 << 2,
  kHdrAtomicEth = 1 << 3,
  kHdrImmDt = 1 << 4,
  kHdrIeth = 1 << 5,
  kHdrAeth = 1 << 6,
  kHdrAtomicAckEth = 1 << 7,
  kHdrCnpPad = 1 << 8,
};

enum class Transport : uint8_t { RC, UC, RD, UD, CNP };
enum class Position : uint8_t { None, First, Middle, Last, Only };
enum class OpKind : uint8_t {
  Send, Write, ReadRequest, ReadResponse, Ack, AtomicAck, Atomic, Flush, AtomicWrite, Cnp
};

struct OpcodeInfo {
  uint8_t code;
  const char* name;        // "RC_RDMA_WRITE_ONLY"
  Transport transport;
  OpKind kind;
  Position position;
  uint16_t headers;        // HdrBit mask
  uint16_t header_len;     // bytes of extension headers after the BTH
  bool has_payload;        // may carry data (ONLY may still carry 0 bytes)
  bool is_request;
  bool is_response;
  bool consumes_rwqe;      // responder consumes a receive WQE on this packet
  bool completes_rwqe;     // responder writes a receive completion on this packet
};

// Table entry for `code`, or nullptr if the opcode is not supported (RD, reserved, vendor).
const OpcodeInfo* opcode_info(uint8_t code);
// Name of the opcode, "UNKNOWN_0xNN" style for unsupported codes (static storage).
const char* opcode_name(uint8_t code);
// Byte size of the extension headers selected by a HdrBit mask.
size_t header_len(uint16_t headers);

}  // namespace srnic::roce
