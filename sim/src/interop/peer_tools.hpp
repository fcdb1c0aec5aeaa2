// The srnic side of the interoperability runs: peers of rdma-core's ibv_rc_pingpong and of
// perftest's ib_{write,read,send}_bw and ib_write_lat, speaking each tool's out-of-band TCP setup
// protocol, moving the data through the simulated NIC and checking data and completions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "host_io.hpp"
#include "node.hpp"

namespace srnic::sim::interop {

struct PeerConfig {
  std::string tool;            // pingpong | write_bw | read_bw | send_bw | write_lat
  bool server = false;         // srnic listens (the guest tool is the client)
  std::string host = "127.0.0.1";
  uint16_t port = 18515;       // client: where the guest tool listens; server: where we listen
  uint32_t size = 4096;
  uint32_t iters = 100;
  uint32_t mtu = 1024;
  uint32_t tx_depth = 16;      // perftest -t
  uint64_t seed = 1;
  double timeout_s = 60;       // guest time one wait may take (Node::run_until)
  std::string ready_file;      // written once the guest tool may start (server: we listen)
};

struct PeerReport {
  uint64_t messages = 0;       // messages moved by the run (both directions)
  uint64_t bytes = 0;
  uint64_t checked = 0;        // payloads compared against the expected pattern
  std::string detail;          // tool-specific line
  double sim_rtt_us = 0;       // write_lat: simulated time per round trip
};

// Each throws std::runtime_error on a protocol, completion or data error.
PeerReport run_pingpong(Node& node, const PeerConfig& cfg);
PeerReport run_perftest(Node& node, const PeerConfig& cfg);

// Out-of-band helpers: the Node keeps pumping frames (and the guest keeps running) while
// they wait.
std::string oob_read(Node& node, TcpConn& c, size_t n, double timeout_s, const std::string& what);
// Client side: connects and writes `hello` (may be empty) until the peer answers with
// reply_len bytes; qemu's user network accepts connections even when nothing listens in the
// guest yet and closes them at once, so refused and closed attempts are retried.
TcpConn oob_connect(Node& node, const PeerConfig& cfg, const std::string& hello, size_t reply_len,
                    std::string& reply);
TcpConn oob_accept(Node& node, TcpListener& l, double timeout_s);
// Server side: listens on cfg.port and announces it (announce_ready).
std::unique_ptr<TcpListener> oob_listen(const PeerConfig& cfg);
// Writes cfg.ready_file (if set) atomically: the runner starts the guest tool when it appears.
void announce_ready(const PeerConfig& cfg);

}  // namespace srnic::sim::interop
