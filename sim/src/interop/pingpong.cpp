// ibv_rc_pingpong peer (rdma-core libibverbs/examples/rc_pingpong.c).
//
// Setup over TCP: the client sends "%04x:%06x:%06x:%s" (LID, QPN, PSN, 32 hex digits of the
// GID in network order) with its terminating NUL, 52 bytes; the server answers with its own
// 52 bytes after moving its QP to RTR/RTS; the client ends with "done" and its NUL.
// Traffic: the client sends first; each side sends its next message only when its previous
// send is acknowledged and the peer's message has arrived. rc_pingpong sends and receives in
// one buffer, so it echoes what it received: as client we send pattern i and expect pattern i
// back; as server we receive the client's buffer (0x7b bytes from rc_pingpong's initial fill,
// later our previous message) and answer with pattern i. Either way every byte that crossed
// the guest is compared.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "endpoint.hpp"
#include "peer_tools.hpp"

namespace srnic::sim::interop {

namespace {

constexpr size_t kMsgLen = 52;   // sizeof "0000:000000:000000:00000000000000000000000000000000"
constexpr uint8_t kClientFill = 0x7b;

std::string make_msg(uint32_t qpn, uint32_t psn, uint32_t ip) {
  uint8_t gid[16];
  ipv4_gid(ip, gid);
  char b[kMsgLen + 8];
  int n = std::snprintf(b, sizeof b, "%04x:%06x:%06x:", 0u, qpn, psn);
  for (int i = 0; i < 16; ++i) n += std::snprintf(b + n, sizeof b - n, "%02x", gid[i]);
  std::string s(b, static_cast<size_t>(n));
  s.push_back('\0');
  if (s.size() != kMsgLen) throw std::logic_error("rc_pingpong message is not 52 bytes");
  return s;
}

RemoteQp parse_msg(const std::string& m) {
  unsigned lid = 0, qpn = 0, psn = 0;
  char g[33] = {};
  if (m.size() != kMsgLen || std::sscanf(m.c_str(), "%x:%x:%x:%32s", &lid, &qpn, &psn, g) != 4 ||
      std::strlen(g) != 32)
    throw std::runtime_error("unparsable rc_pingpong message \"" + m.substr(0, kMsgLen - 1) + "\"");
  uint8_t gid[16];
  for (int i = 0; i < 16; ++i) {
    unsigned v = 0;
    std::sscanf(g + 2 * i, "%2x", &v);
    gid[i] = uint8_t(v);
  }
  RemoteQp r;
  r.qpn = qpn & 0xFFFFFF;
  r.psn = psn & 0xFFFFFF;
  if (!gid_ipv4(gid, r.ip)) throw std::runtime_error(std::string("peer GID ") + g + " is not IPv4-mapped");
  return r;
}

}  // namespace

PeerReport run_pingpong(Node& node, const PeerConfig& cfg) {
  const uint32_t size = cfg.size;
  const uint32_t slots = 16;  // receive buffers posted at a time
  const uint64_t stride = (uint64_t(size) + 63) & ~uint64_t(63);
  const uint32_t psn = static_cast<uint32_t>(SplitMix64::child(cfg.seed, 0x50) & 0xFFFFFF);
  Endpoint ep(node, stride * (slots + 1), 4, slots, psn);
  const uint64_t sbuf = ep.buf();
  auto rbuf = [&](uint64_t i) { return ep.buf() + stride * (1 + i % slots); };
  for (uint64_t i = 0; i < slots && i < cfg.iters; ++i) ep.post_recv(i, rbuf(i), size);
  const std::string mine = make_msg(ep.qpn(), ep.psn(), node.config().ip);

  TcpConn c;
  RemoteQp peer;
  std::unique_ptr<TcpListener> lst;
  if (!cfg.server) {
    std::string reply;
    c = oob_connect(node, cfg, mine, kMsgLen, reply);
    peer = parse_msg(reply);
    c.write_all("done", 5);
    ep.connect(peer, cfg.mtu, 1, 1);
  } else {
    lst = oob_listen(cfg);
    c = oob_accept(node, *lst, cfg.timeout_s);
    peer = parse_msg(oob_read(node, c, kMsgLen, cfg.timeout_s, "the rc_pingpong client's QP message"));
    ep.connect(peer, cfg.mtu, 1, 1);
    c.write_all(mine.data(), mine.size());
    const std::string done = oob_read(node, c, 5, cfg.timeout_s, "\"done\" from the rc_pingpong client");
    if (std::memcmp(done.data(), "done", 5) != 0) throw std::runtime_error("rc_pingpong client did not send \"done\"");
  }
  node.log("rc_pingpong peer QPN " + std::to_string(peer.qpn) + " PSN " + std::to_string(peer.psn));

  PeerReport rep;
  std::vector<uint8_t> pat(size);
  std::vector<uint8_t> got(size);
  uint64_t posted_recv = std::min<uint64_t>(slots, cfg.iters);
  for (uint64_t i = 0; i < cfg.iters; ++i) {
    if (!cfg.server) {
      fill_pattern(cfg.seed, i, pat.data(), size);
      ep.write(sbuf, pat.data(), size);
      ep.post_send(sw::WrOpcode::Send, i, sbuf, size);
    }
    node.run_until(
        [&] {
          ep.poll();
          return !ep.recvs.empty() && (cfg.server || !ep.sends.empty());
        },
        cfg.timeout_s, "rc_pingpong message " + std::to_string(i));
    const sw::WorkCompletion rc = ep.recvs.front();
    ep.recvs.erase(ep.recvs.begin());
    if (rc.opcode != sw::WcOpcode::Recv || rc.byte_len != size || rc.wr_id != i)
      throw std::runtime_error("receive completion " + std::to_string(i) + ": opcode " + sw::to_string(rc.opcode) +
                               ", " + std::to_string(rc.byte_len) + " bytes, wr_id " + std::to_string(rc.wr_id));
    // What the guest sent: our own message echoed (client), or the client's buffer (server).
    std::string bad;
    if (!cfg.server || i > 0) {
      bad = ep.check(rbuf(i), size, cfg.seed, cfg.server ? i - 1 : i);
    } else {
      ep.read(rbuf(i), got.data(), size);
      for (uint32_t k = 0; k < size && bad.empty(); ++k)
        if (got[k] != kClientFill) bad = "first message byte " + std::to_string(k) + " is not 0x7b";
    }
    if (!bad.empty()) throw std::runtime_error("rc_pingpong data: " + bad);
    ++rep.checked;
    if (posted_recv < cfg.iters) {
      ep.post_recv(posted_recv, rbuf(posted_recv), size);
      ++posted_recv;
    }
    if (cfg.server) {
      fill_pattern(cfg.seed, i, pat.data(), size);
      ep.write(sbuf, pat.data(), size);
      ep.post_send(sw::WrOpcode::Send, i, sbuf, size);
      node.run_until([&] { ep.poll(); return !ep.sends.empty(); }, cfg.timeout_s,
                     "the ACK of rc_pingpong message " + std::to_string(i));
    }
    const sw::WorkCompletion sc = ep.sends.front();
    ep.sends.erase(ep.sends.begin());
    if (sc.opcode != sw::WcOpcode::Send || sc.wr_id != i)
      throw std::runtime_error("send completion " + std::to_string(i) + ": opcode " + sw::to_string(sc.opcode) +
                               ", wr_id " + std::to_string(sc.wr_id));
    rep.messages += 2;
    rep.bytes += 2ull * size;
  }
  node.settle();
  rep.detail = std::to_string(cfg.iters) + " round trips of " + std::to_string(size) + " B";
  return rep;
}

}  // namespace srnic::sim::interop
