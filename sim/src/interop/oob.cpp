// Out-of-band TCP helpers of the peer tools: reads, connect-with-retry and accept, all of
// which keep the simulation and the guest running while they wait.
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
  const double deadline = wall_s() + cfg.timeout_s;
  for (unsigned attempt = 1;; ++attempt) {
    TcpConn c;
    if (TcpConn::connect_to(cfg.host, cfg.port, c)) {
      if (!hello.empty()) c.write_all(hello.data(), hello.size());
      reply.clear();
      node.run_until([&] { return c.try_read(reply_len, reply) || c.closed(); },
                     std::max(1.0, deadline - wall_s()),
                     "the guest tool's answer on " + cfg.host + ":" + std::to_string(cfg.port));
      if (reply.size() == reply_len) {
        node.log("out-of-band connection up after " + std::to_string(attempt) + " attempt(s)");
        return c;
      }
    }
    if (wall_s() > deadline)
      throw std::runtime_error("no guest tool answered on " + cfg.host + ":" + std::to_string(cfg.port) + " within " +
                               std::to_string(int(cfg.timeout_s)) + " s");
    const double until = wall_s() + 0.5;
    node.run_until([&] { return wall_s() > until; }, 5, "the retry delay");
  }
}

TcpConn oob_accept(Node& node, TcpListener& l, double timeout_s) {
  TcpConn c;
  node.run_until([&] { return l.try_accept(c); }, timeout_s,
                 "the guest tool to connect to 127.0.0.1:" + std::to_string(l.port()));
  return c;
}

}  // namespace srnic::sim::interop
