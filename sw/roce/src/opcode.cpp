// The opcode table for RC, UC, UD and CNP packets.
#include "srnic/roce/opcode.hpp"

#include <array>
#include <cstdio>

namespace srnic::roce {

namespace {

using P = Position;
using K = OpKind;

struct Row {
  uint8_t code;
  const char* name;
  K kind;
  P pos;
  uint16_t headers;
  bool payload;
  bool consumes;
  bool completes;
};

// RC rows; UC rows are derived from the SEND/WRITE rows (0x00..0x0B).
constexpr Row kRc[] = {
    {0x00, "SEND_FIRST", K::Send, P::First, 0, true, true, false},
    {0x01, "SEND_MIDDLE", K::Send, P::Middle, 0, true, false, false},
    {0x02, "SEND_LAST", K::Send, P::Last, 0, true, false, true},
    {0x03, "SEND_LAST_WITH_IMMEDIATE", K::Send, P::Last, kHdrImmDt, true, false, true},
    {0x04, "SEND_ONLY", K::Send, P::Only, 0, true, true, true},
    {0x05, "SEND_ONLY_WITH_IMMEDIATE", K::Send, P::Only, kHdrImmDt, true, true, true},
    {0x06, "RDMA_WRITE_FIRST", K::Write, P::First, kHdrReth, true, false, false},
    {0x07, "RDMA_WRITE_MIDDLE", K::Write, P::Middle, 0, true, false, false},
    {0x08, "RDMA_WRITE_LAST", K::Write, P::Last, 0, true, false, false},
    {0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", K::Write, P::Last, kHdrImmDt, true, true, true},
    {0x0A, "RDMA_WRITE_ONLY", K::Write, P::Only, kHdrReth, true, false, false},
    {0x0B, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", K::Write, P::Only, kHdrReth | kHdrImmDt, true, true, true},
    {0x0C, "RDMA_READ_REQUEST", K::ReadRequest, P::Only, kHdrReth, false, false, false},
    {0x0D, "RDMA_READ_RESPONSE_FIRST", K::ReadResponse, P::First, kHdrAeth, true, false, false},
    {0x0E, "RDMA_READ_RESPONSE_MIDDLE", K::ReadResponse, P::Middle, 0, true, false, false},
    {0x0F, "RDMA_READ_RESPONSE_LAST", K::ReadResponse, P::Last, kHdrAeth, true, false, false},
    {0x10, "RDMA_READ_RESPONSE_ONLY", K::ReadResponse, P::Only, kHdrAeth, true, false, false},
    {0x11, "ACKNOWLEDGE", K::Ack, P::Only, kHdrAeth, false, false, false},
    {0x12, "ATOMIC_ACKNOWLEDGE", K::AtomicAck, P::Only, kHdrAeth | kHdrAtomicAckEth, false, false, false},
    {0x13, "COMPARE_SWAP", K::Atomic, P::Only, kHdrAtomicEth, false, false, false},
    {0x14, "FETCH_ADD", K::Atomic, P::Only, kHdrAtomicEth, false, false, false},
    {0x16, "SEND_LAST_WITH_INVALIDATE", K::Send, P::Last, kHdrIeth, true, false, true},
    {0x17, "SEND_ONLY_WITH_INVALIDATE", K::Send, P::Only, kHdrIeth, true, true, true},
    {0x1C, "FLUSH", K::Flush, P::Only, kHdrFeth | kHdrReth, false, false, false},
    {0x1D, "ATOMIC_WRITE", K::AtomicWrite, P::Only, kHdrReth, true, false, false},
};

struct Table {
  std::array<OpcodeInfo, 256> info{};
  std::array<bool, 256> valid{};
  std::array<std::array<char, 40>, 256> names{};

  void add(uint8_t code, const char* prefix, const Row& r, Transport t) {
    std::snprintf(names[code].data(), names[code].size(), "%s_%s", prefix, r.name);
    const bool response = r.kind == K::ReadResponse || r.kind == K::Ack || r.kind == K::AtomicAck;
    info[code] = OpcodeInfo{code,          names[code].data(), t,         r.kind,
                            r.pos,         r.headers,          uint16_t(header_len(r.headers)),
                            r.payload,     !response,          response,  r.consumes,
                            r.completes};
    valid[code] = true;
  }

  Table() {
    for (int i = 0; i < 256; ++i) std::snprintf(names[i].data(), names[i].size(), "UNKNOWN_0x%02X", i);
    for (const Row& r : kRc) {
      add(r.code, "RC", r, Transport::RC);
      if (r.code <= 0x0B) add(uint8_t(op::kUcBase | r.code), "UC", r, Transport::UC);
    }
    add(op::kUdSendOnly, "UD", Row{0, "SEND_ONLY", K::Send, P::Only, kHdrDeth, true, true, true},
        Transport::UD);
    add(op::kUdSendOnlyImm, "UD",
        Row{0, "SEND_ONLY_WITH_IMMEDIATE", K::Send, P::Only, kHdrDeth | kHdrImmDt, true, true, true},
        Transport::UD);
    std::snprintf(names[op::kCnp].data(), names[op::kCnp].size(), "CNP");
    info[op::kCnp] = OpcodeInfo{op::kCnp, names[op::kCnp].data(), Transport::CNP, K::Cnp,
                                P::None,  kHdrCnpPad, uint16_t(header_len(kHdrCnpPad)),
                                false,    false,      false, false, false};
    valid[op::kCnp] = true;
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

size_t header_len(uint16_t h) {
  size_t n = 0;
  if (h & kHdrFeth) n += 4;
  if (h & kHdrDeth) n += 8;
  if (h & kHdrReth) n += 16;
  if (h & kHdrAtomicEth) n += 28;
  if (h & kHdrImmDt) n += 4;
  if (h & kHdrIeth) n += 4;
  if (h & kHdrAeth) n += 4;
  if (h & kHdrAtomicAckEth) n += 8;
  if (h & kHdrCnpPad) n += 16;
  return n;
}

const OpcodeInfo* opcode_info(uint8_t code) {
  const Table& t = table();
  return t.valid[code] ? &t.info[code] : nullptr;
}

const char* opcode_name(uint8_t code) { return table().names[code].data(); }

}  // namespace srnic::roce
