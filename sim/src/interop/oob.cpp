// Out-of-band TCP helpers of the peer tools: reads, connect-with-retry and accept, all of
// which keep the simulation and the guest running while they wait.
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "peer_tools.hpp"

namespace srnic::sim::interop {

std::string oob_read(Node& node, TcpConn& c, size_t n, double timeout_s, const std::string& what) {
  std::string out;
  node.run_until([&] { return c.try_read(n, out) || c.closed(); }, timeout_s, what);
  if (out.size() != n) throw std::runtime_error("the guest tool closed its TCP connection before sending " + what);
  return out;
}

TcpConn oob_connect(Node& node, const PeerConfig& cfg, const std::string& hello, size_t reply_len,
                    std::string& reply) {
  announce_ready(cfg);
  const double deadline = node.guest_s() + cfg.timeout_s;   // guest time: the guest tool starts
  for (unsigned attempt = 1;; ++attempt) {
    TcpConn c;
    if (TcpConn::connect_to(cfg.host, cfg.port, c)) {
      if (!hello.empty()) c.write_all(hello.data(), hello.size());
      reply.clear();
      node.run_until([&] { return c.try_read(reply_len, reply) || c.closed(); },
                     std::max(1.0, deadline - node.guest_s()),
                     "the guest tool's answer on " + cfg.host + ":" + std::to_string(cfg.port));
      if (reply.size() == reply_len) {
        node.log("out-of-band connection up after " + std::to_string(attempt) + " attempt(s)");
        return c;
      }
    }
    if (node.guest_s() > deadline)
      throw std::runtime_error("no guest tool answered on " + cfg.host + ":" + std::to_string(cfg.port) + " within " +
                               std::to_string(int(cfg.timeout_s)) + " s of guest time");
    const double until = node.guest_s() + 0.5;
    node.run_until([&] { return node.guest_s() > until; }, 5, "the retry delay");
  }
}

std::unique_ptr<TcpListener> oob_listen(const PeerConfig& cfg) {
  auto l = std::make_unique<TcpListener>(cfg.port);
  announce_ready(cfg);
  return l;
}

void announce_ready(const PeerConfig& cfg) {
  if (cfg.ready_file.empty()) return;
  const std::string tmp = cfg.ready_file + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f || std::fprintf(f, "%s\n", cfg.server ? "listening" : "connecting") < 0 || std::fclose(f) != 0 ||
      std::rename(tmp.c_str(), cfg.ready_file.c_str()) != 0)
    throw std::runtime_error("cannot write the ready file " + cfg.ready_file);
}

TcpConn oob_accept(Node& node, TcpListener& l, double timeout_s) {
  TcpConn c;
  node.run_until([&] { return l.try_accept(c); }, timeout_s,
                 "the guest tool to connect to 127.0.0.1:" + std::to_string(l.port()));
  return c;
}

}  // namespace srnic::sim::interop
