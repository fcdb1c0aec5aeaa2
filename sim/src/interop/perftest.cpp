// perftest peer (ib_write_bw / ib_read_bw as the client against a guest server), speaking
// the TCP exchange of perftest 4.5-0.17 (Debian 12) as captured between two instances of it:
//
//   client -> server, then server -> client, for each of:
//     16 B   version string ("6.06", NUL padded)
//      4 B   cycle buffer (big-endian 4096)        4 B  cache line size (big-endian 64)
//      2 B   path MTU as the ibv_mtu digit and NUL ("3" = 1024, "5" = 4096)
//    108 B   "%04x:%04x:%06x:%06x:%08x:%016llx:" LID, outstanding READs, QPN, PSN, rkey,
//            buffer address, then 16 x "%02x:" GID bytes, "%08x:" SRQ number, NUL
//   The 108-byte message is exchanged five times: QP information, after RTR, before the
//   traffic, after the traffic (the server waits there until the client is done), and at the
//   close; between the last two, five 8-byte bandwidth-report fields go each way; at the end
//   each side sends "done" with its NUL.
//
// Traffic: iters RDMA WRITEs or READs of size bytes at the start of the server's buffer, at
// most tx_depth (READ: also at most the server's outstanding-READ limit) outstanding. perftest
// fills its buffer with rand() bytes and checks no payload; its QP grants only the access of
// its own test (a READ-back after WRITEs is refused with a remote invalid request NAK). So
// WRITE runs check completions and rxe's ACKs only, and READ runs check that every READ
// returns, byte for byte, what the first one returned.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "endpoint.hpp"
#include "peer_tools.hpp"

namespace srnic::sim::interop {

namespace {

constexpr size_t kKeyMsgLen = 108;
constexpr const char* kVersion = "6.06";
constexpr unsigned kOutReads = 16;   // READs srnic accepts outstanding as responder

std::string be_bytes(uint64_t v, int n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (int i = n - 1; i >= 0; --i, v >>= 8) s[static_cast<size_t>(i)] = char(v & 0xFF);
  return s;
}

char mtu_digit(uint32_t mtu) {
  switch (mtu) {
    case 256: return '1';
    case 512: return '2';
    case 1024: return '3';
    case 2048: return '4';
    default: return '5';
  }
}

std::string key_msg(uint32_t qpn, uint32_t psn, uint32_t rkey, uint64_t vaddr, unsigned out_reads, uint32_t ip) {
  uint8_t gid[16];
  ipv4_gid(ip, gid);
  char b[kKeyMsgLen + 16];
  int n = std::snprintf(b, sizeof b, "%04x:%04x:%06x:%06x:%08x:%016llx:", 0u, out_reads, qpn, psn, rkey,
                        static_cast<unsigned long long>(vaddr));
  for (int i = 0; i < 16; ++i) n += std::snprintf(b + n, sizeof b - n, "%02x:", gid[i]);
  n += std::snprintf(b + n, sizeof b - n, "%08x:", 0u);
  std::string s(b, static_cast<size_t>(n));
  s.push_back('\0');
  if (s.size() != kKeyMsgLen) throw std::logic_error("perftest key message is not 108 bytes");
  return s;
}

struct Keys {
  RemoteQp qp;
  unsigned out_reads = 0;
};

Keys parse_keys(const std::string& m) {
  std::vector<unsigned long long> f;
  size_t pos = 0;
  while (pos < m.size() && m[pos] != '\0') {
    const size_t colon = m.find(':', pos);
    if (colon == std::string::npos) break;
    f.push_back(std::strtoull(m.substr(pos, colon - pos).c_str(), nullptr, 16));
    pos = colon + 1;
  }
  if (f.size() != 23) throw std::runtime_error("unparsable perftest key message (" + std::to_string(f.size()) + " fields)");
  Keys k;
  k.out_reads = unsigned(f[1]);
  k.qp.qpn = uint32_t(f[2]) & 0xFFFFFF;
  k.qp.psn = uint32_t(f[3]) & 0xFFFFFF;
  k.qp.rkey = uint32_t(f[4]);
  k.qp.vaddr = f[5];
  uint8_t gid[16];
  for (int i = 0; i < 16; ++i) gid[i] = uint8_t(f[6 + static_cast<size_t>(i)]);
  if (!gid_ipv4(gid, k.qp.ip)) throw std::runtime_error("perftest peer GID is not IPv4-mapped");
  return k;
}

// One client-side exchange step: write ours, read theirs.
std::string swap(Node& node, TcpConn& c, const std::string& mine, size_t theirs, const PeerConfig& cfg,
                 const std::string& what) {
  c.write_all(mine.data(), mine.size());
  return oob_read(node, c, theirs, cfg.timeout_s, what);
}

}  // namespace

PeerReport run_perftest(Node& node, const PeerConfig& cfg) {
  const bool write = cfg.tool == "write_bw";
  if (cfg.server || (cfg.tool != "write_bw" && cfg.tool != "read_bw"))
    throw std::runtime_error("perftest peer: only the client side of write_bw and read_bw is implemented");
  const uint32_t size = cfg.size;
  const uint32_t depth = cfg.tx_depth;
  const uint64_t stride = (uint64_t(size) + 63) & ~uint64_t(63);
  const uint32_t psn = static_cast<uint32_t>(SplitMix64::child(cfg.seed, 0x51) & 0xFFFFFF);
  // Slot 0: the pattern we write; slots 1..depth: READ targets.
  Endpoint ep(node, stride * (depth + 1), depth * 2 + 4, 2, psn);
  const std::string mine = key_msg(ep.qpn(), ep.psn(), ep.key(), ep.buf(), kOutReads, node.config().ip);

  // Preamble (the version is also the connection probe: qemu's forwarder accepts while
  // nothing listens in the guest yet).
  std::string reply;
  std::string ver(16, '\0');
  std::memcpy(&ver[0], kVersion, std::strlen(kVersion));
  TcpConn c = oob_connect(node, cfg, ver, 16, reply);
  if (reply.compare(0, 4, "6.06") != 0 && reply.compare(0, 1, "5") != 0 && reply.compare(0, 1, "6") != 0)
    throw std::runtime_error("perftest peer reports version \"" + std::string(reply.c_str()) + "\"");
  swap(node, c, be_bytes(4096, 4), 4, cfg, "the cycle buffer size");
  swap(node, c, be_bytes(64, 4), 4, cfg, "the cache line size");
  const std::string mtu = swap(node, c, std::string{mtu_digit(cfg.mtu), '\0'}, 2, cfg, "the MTU");
  if (mtu[0] != mtu_digit(cfg.mtu))
    throw std::runtime_error(std::string("perftest peer uses MTU code ") + mtu[0] + ", we use " + mtu_digit(cfg.mtu));

  const Keys peer = parse_keys(swap(node, c, mine, kKeyMsgLen, cfg, "the QP information"));
  const unsigned rd = std::max(1u, std::min(kOutReads, peer.out_reads));
  ep.connect(peer.qp, cfg.mtu, kOutReads, uint8_t(rd));
  node.log("perftest peer QPN " + std::to_string(peer.qp.qpn) + " rkey " + std::to_string(peer.qp.rkey));
  swap(node, c, mine, kKeyMsgLen, cfg, "the handshake after RTR");
  swap(node, c, mine, kKeyMsgLen, cfg, "the handshake before the traffic");

  PeerReport rep;
  std::vector<uint8_t> pat(size), first_read, expect_read;
  auto run_ops = [&](sw::WrOpcode op, uint64_t n, uint64_t laddr_fn_base, bool per_slot, const std::string& what) {
    uint64_t posted = 0, done = 0;
    const uint32_t window = op == sw::WrOpcode::RdmaRead ? std::min(depth, rd) : depth;
    while (done < n) {
      while (posted < n && posted - done < window) {
        const uint64_t laddr = per_slot ? ep.buf() + stride * (1 + posted % depth) : laddr_fn_base;
        ep.post_send(op, posted, laddr, size, peer.qp.vaddr, peer.qp.rkey);
        ++posted;
      }
      node.run_until([&] { ep.poll(); return !ep.sends.empty(); }, cfg.timeout_s,
                     what + " " + std::to_string(done));
      for (const sw::WorkCompletion& wc : ep.sends) {
        const sw::WcOpcode want = op == sw::WrOpcode::RdmaRead ? sw::WcOpcode::RdmaRead : sw::WcOpcode::RdmaWrite;
        if (wc.opcode != want || wc.wr_id != done)
          throw std::runtime_error(what + " completion " + std::to_string(done) + ": opcode " +
                                   sw::to_string(wc.opcode) + ", wr_id " + std::to_string(wc.wr_id));
        if (op == sw::WrOpcode::RdmaRead) {
          std::vector<uint8_t> got(size);
          ep.read(ep.buf() + stride * (1 + done % depth), got.data(), size);
          if (first_read.empty()) {
            first_read = got;
            char b[64];
            std::snprintf(b, sizeof b, "first READ returned %02x %02x %02x %02x ... %02x", got[0],
                          got[std::min<uint32_t>(1, size - 1)], got[std::min<uint32_t>(2, size - 1)],
                          got[std::min<uint32_t>(3, size - 1)], got[size - 1]);
            node.log(b);
            expect_read = got;
          }
          for (uint32_t i = 0; i < size; ++i)
            if (got[i] != expect_read[i])
              throw std::runtime_error("RDMA READ " + std::to_string(done) + " byte " + std::to_string(i) + ": got " +
                                       std::to_string(got[i]) + ", expected " + std::to_string(expect_read[i]));
          ++rep.checked;
        }
        ++done;
        ++rep.messages;
        rep.bytes += size;
      }
      ep.sends.clear();
    }
  };

  if (write) {
    fill_pattern(cfg.seed, 0, pat.data(), size);
    ep.write(ep.buf(), pat.data(), size);
    run_ops(sw::WrOpcode::RdmaWrite, cfg.iters, ep.buf(), false, "RDMA WRITE");
  } else {
    run_ops(sw::WrOpcode::RdmaRead, cfg.iters, 0, true, "RDMA READ");
  }
  node.settle();

  swap(node, c, mine, kKeyMsgLen, cfg, "the handshake after the traffic");
  // Bandwidth report: message size, iterations, then three doubles (perftest's average
  // bandwidth, message rate and peak bandwidth); we report zeros for the measured values.
  swap(node, c, be_bytes(size, 8), 8, cfg, "the report's size field");
  swap(node, c, be_bytes(cfg.iters, 8), 8, cfg, "the report's iteration field");
  for (int k = 0; k < 3; ++k) swap(node, c, be_bytes(0, 8), 8, cfg, "a report field");
  swap(node, c, mine, kKeyMsgLen, cfg, "the closing handshake");
  const std::string done = swap(node, c, std::string("done", 5), 5, cfg, "\"done\"");
  if (std::memcmp(done.data(), "done", 5) != 0) throw std::runtime_error("perftest server did not end with \"done\"");
  node.settle();
  rep.detail = std::to_string(cfg.iters) + (write ? " RDMA WRITEs" : " RDMA READs") + " of " + std::to_string(size) +
               " B, data read back and compared";
  return rep;
}

}  // namespace srnic::sim::interop
