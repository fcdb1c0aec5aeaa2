// A two-host workload used by the reference-model and scoreboard tests.
//
// host 0: buffer "src"  pa 0x10000, 64 bytes = 0x00..0x3f, MR key 0x100 iova 0x70000000 (LW|RW|RR)
//         buffer "loc"  pa 0x20000, 64 bytes = 0xAA,       MR key 0x200 iova 0x80000000 (LW|RW|RR)
//         buffer "rcv0" pa 0x28000, 64 bytes = 0xCC,       MR key 0x500 iova 0x88000000 (LW)
// host 1: buffer "dst"  pa 0x30000, 64 bytes = 0x80..0xbf, MR key 0x300 iova 0x90000000 (LW|RW|RR)
//         buffer "rbuf" pa 0x40000, 64 bytes = 0xEE,       MR key 0x400 iova 0xA0000000 (LW only)
// QP 0x11 on host 0 <-> QP 0x22 on host 1, both PD 1.
#pragma once

#include "srnic/verif/ref_model.hpp"

namespace srnic::verif::test {

constexpr uint64_t kSrc = 0x70000000, kLoc = 0x80000000, kRcv0 = 0x88000000, kDst = 0x90000000, kRbuf = 0xA0000000;
constexpr uint32_t kSrcKey = 0x100, kLocKey = 0x200, kRcv0Key = 0x500, kDstKey = 0x300, kRbufKey = 0x400;
constexpr uint8_t kAll = kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead;

inline Buffer make_buffer(const char* name, uint64_t pa, size_t n, int first, int step) {
  Buffer b{name, pa, std::vector<uint8_t>(n)};
  for (size_t i = 0; i < n; ++i) b.init[i] = uint8_t(first + step * int(i));
  return b;
}

inline Workload two_hosts() {
  Workload w;
  w.hosts.resize(2);
  HostSpec& h0 = w.hosts[0];
  h0.buffers = {make_buffer("src", 0x10000, 64, 0, 1), make_buffer("loc", 0x20000, 64, 0xAA, 0),
                make_buffer("rcv0", 0x28000, 64, 0xCC, 0)};
  h0.mrs = {{kSrcKey, kSrc, 64, 0x10000, 1, kAll, true},
            {kLocKey, kLoc, 64, 0x20000, 1, kAll, true},
            {kRcv0Key, kRcv0, 64, 0x28000, 1, kAccessLocalWrite, true}};
  HostSpec& h1 = w.hosts[1];
  h1.buffers = {make_buffer("dst", 0x30000, 64, 0x80, 1), make_buffer("rbuf", 0x40000, 64, 0xEE, 0)};
  h1.mrs = {{kDstKey, kDst, 64, 0x30000, 1, kAll, true},
            {kRbufKey, kRbuf, 64, 0x40000, 1, kAccessLocalWrite, true}};
  QpSpec a;
  a.qpn = 0x11;
  a.pd = 1;
  a.peer_host = 1;
  a.peer_qpn = 0x22;
  QpSpec b;
  b.qpn = 0x22;
  b.pd = 1;
  b.peer_host = 0;
  b.peer_qpn = 0x11;
  h0.qps = {a};
  h1.qps = {b};
  return w;
}

inline SendWr wr(uint64_t id, WrOpcode op, uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr = 0,
                 uint32_t rkey = 0, uint32_t imm = 0, bool signaled = true) {
  SendWr s;
  s.wr_id = id;
  s.opcode = op;
  s.laddr = laddr;
  s.length = len;
  s.lkey = lkey;
  s.raddr = raddr;
  s.rkey = rkey;
  s.imm = imm;
  s.signaled = signaled;
  return s;
}

inline RecvWr rwr(uint64_t id, uint64_t addr, uint32_t len, uint32_t lkey) { return RecvWr{id, addr, len, lkey}; }

}  // namespace srnic::verif::test
