// perftest peer: ib_write_bw / ib_read_bw / ib_send_bw as client (guest server) or server
// (guest client), ib_write_lat as client, speaking the TCP exchange of perftest 4.5-0.17
// (Debian 12) as captured between two instances of it. The client writes each item first, the
// server answers with its own:
//     16 B   version string ("6.06", NUL padded)
//      4 B   cycle buffer (big-endian 4096)        4 B  cache line size (big-endian 64)
//      2 B   path MTU as the ibv_mtu digit and NUL ("3" = 1024, "5" = 4096)
//    108 B   "%04x:%04x:%06x:%06x:%08x:%016llx:" LID, outstanding READs, QPN, PSN, rkey,
//            buffer address, then 16 x "%02x:" GID bytes, "%08x:" SRQ number, NUL
// The 108-byte message then goes each way several times. write_bw / read_bw: QP information,
// after RTR, before the traffic, after the traffic (the server waits there until the client
// is done), five 8-byte bandwidth-report fields each way, at the close. send_bw: QP
// information and three more before the traffic, one after it, no report. write_lat: QP
// information and three more before the traffic, nothing after it. At the end the client sends
// "done" with its NUL (the bw servers answer alike).
//
// srnic as client: iters RDMA WRITEs / READs / SENDs of size bytes at the start of the
// server's buffer, at most tx_depth outstanding (READ: also at most the server's
// outstanding-READ limit). perftest fills its buffer with rand() bytes and checks no payload;
// its QP grants only the access of its own test. So WRITE and SEND runs check completions and
// rxe's ACKs, READ runs check that every READ returns what the first one returned.
// srnic as server: the guest's requests are followed on the wire (WireCheck): WRITE payloads
// are compared with srnic's memory afterwards, SEND payloads with the receive buffers, srnic's
// READ responses with its memory (a seeded pattern) as they leave.
// write_lat (srnic client): the guest (server) writes first; each side writes size bytes whose
// last byte is the round-trip count and waits for the other's count before its next WRITE.
// The guest's first WRITE shows where it writes relative to the address we announced; we
// write at the same offset from the address it announced. The simulated time per round trip
// (from our previous WRITE's completion to the next one's, idle-detection windows included) is
// reported.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "endpoint.hpp"
#include "peer_tools.hpp"
#include "wire_check.hpp"

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

namespace {

// Reads the peer's "done" if it sends one; a close instead is fine (the exchange is over).
void finish(Node& node, TcpConn& c, const PeerConfig& cfg, bool server) {
  std::string done;
  if (server) done = oob_read(node, c, 5, cfg.timeout_s, "\"done\" from the perftest client");
  try {
    c.write_all("done", 5);
  } catch (const std::runtime_error&) {
    if (!server) throw;
  }
  if (!server) node.run_until([&] { return c.try_read(5, done) || c.closed(); }, cfg.timeout_s, "\"done\"");
  if (!done.empty() && std::memcmp(done.data(), "done", 5) != 0)
    throw std::runtime_error("perftest peer did not end with \"done\"");
}

}  // namespace

PeerReport run_perftest(Node& node, const PeerConfig& cfg) {
  const std::string& tool = cfg.tool;
  const bool write = tool == "write_bw", read = tool == "read_bw", send = tool == "send_bw", lat = tool == "write_lat";
  if (!write && !read && !send && !lat) throw std::runtime_error("perftest peer: unknown tool " + tool);
  if (lat && cfg.server) throw std::runtime_error("perftest peer: write_lat is implemented as client only");
  const bool server = cfg.server;
  const uint32_t size = cfg.size;
  const uint32_t depth = cfg.tx_depth;
  const uint64_t stride = (uint64_t(size) + 63) & ~uint64_t(63);
  const uint64_t half = (std::max<uint64_t>(size, 4096) + 4095) & ~uint64_t(4095);  // perftest's BUFF_SIZE
  const uint32_t psn = static_cast<uint32_t>(SplitMix64::child(cfg.seed, 0x51) & 0xFFFFFF);
  // Client: slot 0 the pattern we send, slots 1..depth READ targets; write_lat: two halves.
  // Server: two halves of perftest's size (its cycle-buffer addressing stays inside them),
  // SEND: one receive slot per message.
  const uint64_t bytes = lat ? 2 * half : !server ? stride * (depth + 1) : send ? stride * cfg.iters : 2 * half;
  const uint32_t rq = server && send ? cfg.iters : 2;
  Endpoint ep(node, bytes, depth * 2 + 4, rq, psn);
  const uint64_t my_va = lat ? ep.buf() + half : ep.buf();
  const std::string mine = key_msg(ep.qpn(), ep.psn(), ep.key(), my_va, kOutReads, node.config().ip);
  if (server && send)
    for (uint32_t i = 0; i < cfg.iters; ++i) ep.post_recv(i, ep.buf() + stride * i, size);
  std::vector<uint8_t> pat(bytes);
  fill_pattern(cfg.seed, 0, pat.data(), bytes);
  ep.write(ep.buf(), pat.data(), bytes);   // what a guest READ must return; a WRITE's source

  // Preamble. The client's version is also the connection probe: qemu's forwarder accepts
  // while nothing listens in the guest yet.
  std::string ver(16, '\0');
  std::memcpy(&ver[0], kVersion, std::strlen(kVersion));
  TcpConn c;
  std::unique_ptr<TcpListener> lst;
  // One exchange step in the order of our role.
  auto step = [&](const std::string& ours, size_t theirs, const std::string& what) {
    if (server) {
      std::string r = oob_read(node, c, theirs, cfg.timeout_s, what);
      c.write_all(ours.data(), ours.size());
      return r;
    }
    return swap(node, c, ours, theirs, cfg, what);
  };
  std::string reply;
  if (server) {
    lst = oob_listen(cfg);
    c = oob_accept(node, *lst, cfg.timeout_s);
    reply = step(ver, 16, "the version");
  } else {
    c = oob_connect(node, cfg, ver, 16, reply);
  }
  if (reply.compare(0, 1, "5") != 0 && reply.compare(0, 1, "6") != 0)
    throw std::runtime_error("perftest peer reports version \"" + std::string(reply.c_str()) + "\"");
  step(be_bytes(4096, 4), 4, "the cycle buffer size");
  step(be_bytes(64, 4), 4, "the cache line size");
  const std::string mtu = step(std::string{mtu_digit(cfg.mtu), '\0'}, 2, "the MTU");
  if (mtu[0] != mtu_digit(cfg.mtu))
    throw std::runtime_error(std::string("perftest peer uses MTU code ") + mtu[0] + ", we use " + mtu_digit(cfg.mtu));

  Keys peer;
  if (server) {
    peer = parse_keys(oob_read(node, c, kKeyMsgLen, cfg.timeout_s, "the QP information"));
  } else {
    peer = parse_keys(swap(node, c, mine, kKeyMsgLen, cfg, "the QP information"));
  }
  const unsigned rd = std::max(1u, std::min(kOutReads, peer.out_reads));
  ep.connect(peer.qp, cfg.mtu, kOutReads, uint8_t(rd));
  if (server) c.write_all(mine.data(), mine.size());
  node.log("perftest peer QPN " + std::to_string(peer.qp.qpn) + " rkey " + std::to_string(peer.qp.rkey));
  std::unique_ptr<WireCheck> wire;
  if (server || lat) {
    wire = std::make_unique<WireCheck>(ep.buf(), bytes, cfg.mtu, peer.qp.psn,
                                       [&ep](uint64_t a, void* d, size_t n) { ep.read(a, d, n); });
    node.tap = [&wire](const uint8_t* f, size_t n, bool to_nic) { wire->frame(f, n, to_nic); };
  }
  step(mine, kKeyMsgLen, "the handshake after RTR");
  step(mine, kKeyMsgLen, "the handshake before the traffic");
  if (send || lat) step(mine, kKeyMsgLen, "the third handshake before the traffic");

  PeerReport rep;
  std::vector<uint8_t> first_read;
  auto run_ops = [&](sw::WrOpcode op, const std::string& what) {
    uint64_t posted = 0, done = 0;
    const uint32_t window = op == sw::WrOpcode::RdmaRead ? std::min(depth, rd) : depth;
    const sw::WcOpcode want = op == sw::WrOpcode::RdmaRead ? sw::WcOpcode::RdmaRead
                              : op == sw::WrOpcode::Send   ? sw::WcOpcode::Send
                                                           : sw::WcOpcode::RdmaWrite;
    while (done < cfg.iters) {
      while (posted < cfg.iters && posted - done < window) {
        const uint64_t laddr = op == sw::WrOpcode::RdmaRead ? ep.buf() + stride * (1 + posted % depth) : ep.buf();
        ep.post_send(op, posted, laddr, size, peer.qp.vaddr, peer.qp.rkey);
        ++posted;
      }
      node.run_until([&] { ep.poll(); return !ep.sends.empty(); }, cfg.timeout_s, what + " " + std::to_string(done));
      for (const sw::WorkCompletion& wc : ep.sends) {
        if (wc.opcode != want || wc.wr_id != done)
          throw std::runtime_error(what + " completion " + std::to_string(done) + ": opcode " +
                                   sw::to_string(wc.opcode) + ", wr_id " + std::to_string(wc.wr_id));
        if (op == sw::WrOpcode::RdmaRead) {
          std::vector<uint8_t> got(size);
          ep.read(ep.buf() + stride * (1 + done % depth), got.data(), size);
          if (first_read.empty()) first_read = got;
          for (uint32_t i = 0; i < size; ++i)
            if (got[i] != first_read[i])
              throw std::runtime_error("RDMA READ " + std::to_string(done) + " byte " + std::to_string(i) + ": got " +
                                       std::to_string(got[i]) + ", the first READ got " + std::to_string(first_read[i]));
          ++rep.checked;
        }
        ++done;
        ++rep.messages;
        rep.bytes += size;
      }
      ep.sends.clear();
    }
  };

  if (lat) {
    // Ping-pong. perftest's server writes first: its first WRITE shows where in our buffer
    // it writes relative to the address we announced, and we write at the same offset from
    // the address it announced. Our count goes into the last byte we send.
    double sim_ns = 0;
    uint8_t got = 0;
    node.run_until([&] { return wire->first_write_va() != 0; }, cfg.timeout_s, "the guest's first write_lat WRITE");
    const uint64_t in_va = wire->first_write_va();
    if (in_va < ep.buf() || in_va + size > ep.buf() + bytes)
      throw std::runtime_error("the guest's write_lat WRITE misses our buffer");
    const uint64_t out_va = peer.qp.vaddr + (in_va - my_va);
    node.log("write_lat: the guest writes at announced + " + std::to_string(int64_t(in_va - my_va)));
    for (uint32_t i = 1; i <= cfg.iters; ++i) {
      const uint8_t cnt = uint8_t(i);
      const double t0 = node.world().now_ns();
      node.run_until(
          [&] {
            ep.read(in_va + size - 1, &got, 1);
            return got == cnt;
          },
          cfg.timeout_s, "write_lat count " + std::to_string(i) + " from the guest");
      ep.write(ep.buf() + size - 1, &cnt, 1);
      ep.post_send(sw::WrOpcode::RdmaWrite, i, ep.buf(), size, out_va, peer.qp.rkey);
      node.run_until([&] { ep.poll(); return !ep.sends.empty(); }, cfg.timeout_s,
                     "write_lat WRITE " + std::to_string(i));
      sim_ns += node.world().now_ns() - t0;
      const sw::WorkCompletion wc = ep.sends.front();
      ep.sends.clear();
      if (wc.opcode != sw::WcOpcode::RdmaWrite || wc.wr_id != i)
        throw std::runtime_error("write_lat completion " + std::to_string(i) + ": opcode " + sw::to_string(wc.opcode) +
                                 ", wr_id " + std::to_string(wc.wr_id));
      rep.messages += 2;
      rep.bytes += 2ull * size;
    }
    node.settle();
    if (!wire->error().empty()) throw std::runtime_error("wire: " + wire->error());
    const std::string bad = wire->check_writes();
    if (!bad.empty()) throw std::runtime_error(bad);
    rep.checked = cfg.iters;
    char b[160];
    std::snprintf(b, sizeof b, "%u WRITE round trips of %u B, simulated %.3f us per round trip, guest WRITEs match memory",
                  cfg.iters, size, sim_ns / 1000.0 / cfg.iters);
    rep.detail = b;
    rep.sim_rtt_us = sim_ns / 1000.0 / cfg.iters;
    node.tap = nullptr;
    return rep;
  }

  if (!server) {
    run_ops(write ? sw::WrOpcode::RdmaWrite : read ? sw::WrOpcode::RdmaRead : sw::WrOpcode::Send,
            write ? "RDMA WRITE" : read ? "RDMA READ" : "SEND");
    node.settle();
    swap(node, c, mine, kKeyMsgLen, cfg, "the handshake after the traffic");
  } else {
    // The guest client works; we wait for its handshake after the traffic.
    std::string r;
    node.run_until([&] { ep.poll(); return c.try_read(kKeyMsgLen, r) || c.closed(); }, cfg.timeout_s,
                   "the perftest client's traffic and handshake");
    if (r.size() != kKeyMsgLen) throw std::runtime_error("the perftest client closed its connection during the traffic");
    node.settle();
    ep.poll();
    c.write_all(mine.data(), mine.size());
  }
  if (!send) {
    // Bandwidth report: size, iterations, then three doubles; we report zeros for ours.
    step(be_bytes(size, 8), 8, "the report's size field");
    step(be_bytes(cfg.iters, 8), 8, "the report's iteration field");
    for (int k = 0; k < 3; ++k) step(be_bytes(0, 8), 8, "a report field");
    step(mine, kKeyMsgLen, "the closing handshake");
  }
  finish(node, c, cfg, server);
  node.settle();
  node.tap = nullptr;

  if (server) {
    if (!wire->error().empty()) throw std::runtime_error("wire: " + wire->error());
    if (write) {
      const std::string bad = wire->check_writes();
      if (bad.empty() && wire->write_bytes() < uint64_t(size) * cfg.iters)
        throw std::runtime_error("the wire carried " + std::to_string(wire->write_bytes()) + " WRITE bytes, expected " +
                                 std::to_string(uint64_t(size) * cfg.iters));
      if (!bad.empty()) throw std::runtime_error(bad);
      rep.checked = cfg.iters;
    } else if (read) {
      if (wire->read_bytes_checked() < uint64_t(size) * cfg.iters)
        throw std::runtime_error("READ responses checked: " + std::to_string(wire->read_bytes_checked()) +
                                 " bytes, expected " + std::to_string(uint64_t(size) * cfg.iters));
      rep.checked = cfg.iters;
    } else {
      for (const sw::WorkCompletion& wc : ep.recvs) {
        if (wc.opcode != sw::WcOpcode::Recv || wc.byte_len != size || wc.wr_id != rep.checked)
          throw std::runtime_error("receive completion " + std::to_string(rep.checked) + ": opcode " +
                                   sw::to_string(wc.opcode) + ", " + std::to_string(wc.byte_len) + " bytes, wr_id " +
                                   std::to_string(wc.wr_id));
        std::vector<uint8_t> msg, got(size);
        if (!wire->next_message(msg)) throw std::runtime_error("a receive completion without a SEND on the wire");
        ep.read(ep.buf() + stride * wc.wr_id, got.data(), size);
        if (msg != got) throw std::runtime_error("received message " + std::to_string(wc.wr_id) + " differs from the wire");
        ++rep.checked;
      }
      if (rep.checked != cfg.iters)
        throw std::runtime_error(std::to_string(rep.checked) + " of " + std::to_string(cfg.iters) + " SENDs received");
    }
    rep.messages = cfg.iters;
    rep.bytes = uint64_t(size) * cfg.iters;
  }
  rep.detail = std::to_string(cfg.iters) + (write ? " RDMA WRITEs" : read ? " RDMA READs" : " SENDs") + " of " +
               std::to_string(size) + " B by " + (server ? "the guest, checked on the wire and in memory" : "srnic");
  return rep;
}

}  // namespace srnic::sim::interop
