// srnic-interop: one simulated srnic host against a qemu guest running Linux soft-RoCE
// (rdma_rxe) and an unmodified rdma-core / perftest tool. The guest's virtio NIC is a qemu
// "-netdev stream" unix socket; the guest is stopped over QMP while the NIC model works.
// Prints one JSON object with the result on stdout. Exit status: 0 pass, 1 run failure
// (protocol, completion, data or timeout), 2 bad command line.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include "node.hpp"
#include "peer_tools.hpp"

using namespace srnic::sim::interop;

namespace {

uint64_t parse_mac(const std::string& s) {
  unsigned b[6];
  char tail;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
    throw CLI::ValidationError("bad MAC address " + s);
  uint64_t v = 0;
  for (unsigned x : b) {
    if (x > 255) throw CLI::ValidationError("bad MAC address " + s);
    v = v << 8 | x;
  }
  return v;
}

uint32_t parse_ip(const std::string& s) {
  unsigned b[4];
  char tail;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &b[0], &b[1], &b[2], &b[3], &tail) != 4 || b[0] > 255 || b[1] > 255 ||
      b[2] > 255 || b[3] > 255)
    throw CLI::ValidationError("bad IPv4 address " + s);
  return b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"srnic-interop: a simulated srnic host against a qemu guest running rdma_rxe"};
  NodeConfig nc;
  PeerConfig pc;
  std::string mac = "52:54:00:00:00:02", guest_mac = "52:54:00:00:00:01";
  std::string ip = "192.0.2.2", guest_ip = "192.0.2.1";
  app.add_option("--sock", nc.sock, "qemu's -netdev stream unix socket (server=on, addr.path)")->required();
  app.add_option("--qmp", nc.qmp, "qemu QMP unix socket; the guest is stopped while the NIC model works");
  app.add_option("--tool", pc.tool, "peer tool")
      ->required()
      ->check(CLI::IsMember({"pingpong", "write_bw", "read_bw", "send_bw", "write_lat"}));
  app.add_flag("--server", pc.server, "srnic listens for the guest tool (default: connect to it)");
  app.add_option("--host", pc.host, "address of the guest tool's TCP port (client)")->capture_default_str();
  app.add_option("--port", pc.port, "TCP port of the setup exchange")->capture_default_str();
  app.add_option("--size", pc.size, "message size in bytes")->check(CLI::Range(1u, 1u << 24))->capture_default_str();
  app.add_option("--iters", pc.iters, "messages (round trips for pingpong / write_lat)")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  app.add_option("--mtu", pc.mtu, "path MTU")->check(CLI::IsMember({256u, 512u, 1024u, 2048u, 4096u}))->capture_default_str();
  app.add_option("--tx-depth", pc.tx_depth, "perftest tx depth (-t of the guest tool)")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--seed", pc.seed, "seed of PSNs and payload patterns")->capture_default_str();
  app.add_option("--timeout", pc.timeout_s, "guest seconds (time the guest ran) allowed for each wait")
      ->check(CLI::PositiveNumber)->capture_default_str();
  double sim_timeout_ms = nc.sim_timeout_ns / 1e6;
  app.add_option("--sim-timeout", sim_timeout_ms, "simulated milliseconds allowed for each wait")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--ready-file", pc.ready_file,
                 "write this file once the guest tool may start (server: srnic listens)");
  std::string done_file;
  app.add_option("--guest-done-file", done_file,
                 "after srnic's side is done, keep the NIC running (answering the guest's resends) until this "
                 "file exists (the runner writes it when the guest tool has exited), at most --timeout guest s");
  app.add_option("--mac", mac, "srnic MAC")->capture_default_str();
  app.add_option("--ip", ip, "srnic IPv4 address")->capture_default_str();
  app.add_option("--guest-mac", guest_mac, "guest NIC MAC")->capture_default_str();
  app.add_option("--guest-ip", guest_ip, "guest IPv4 address")->capture_default_str();
  app.add_option("--pcap", nc.pcap, "write the frames of the simulated wire to this pcap");
  const auto prob = CLI::Range(0.0, 0.5);
  app.add_option("--loss", nc.loss, "probability that the wire loses a frame, each direction (0..0.5)")
      ->check(prob)->capture_default_str();
  app.add_option("--reorder", nc.reorder, "probability that the wire holds a frame back (reordering), each direction")
      ->check(prob)->capture_default_str();
  app.add_option("--dup", nc.dup, "probability that the wire delivers a frame twice, each direction")
      ->check(prob)->capture_default_str();
  app.add_option("--qp-timeout", nc.qp_timeout, "srnic QPs' local ACK timeout attribute, 4.096 us x 2^T")
      ->check(CLI::Range(1, 31))->capture_default_str();
  app.add_option("--quiet-ns", nc.quiet_ns, "simulated ns without bus or wire activity before the guest runs again")
      ->capture_default_str();
  app.add_flag("-v,--verbose", nc.verbose, "log progress to stderr");
  try {
    app.parse(argc, argv);
    nc.mac = parse_mac(mac);
    nc.guest_mac = parse_mac(guest_mac);
    nc.ip = parse_ip(ip);
    nc.sim_timeout_ns = sim_timeout_ms * 1e6;
    nc.guest_ip = parse_ip(guest_ip);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) ? 2 : 0;
  }
  nc.seed = pc.seed;

  std::fprintf(stderr, "srnic-interop: seed %llu\n", static_cast<unsigned long long>(pc.seed));
  const double t0 = wall_s();
  PeerReport rep;
  std::string error;
  NodeStats st;
  try {
    Node node(nc);
    try {
      rep = pc.tool == "pingpong" ? run_pingpong(node, pc) : run_perftest(node, pc);
    } catch (const std::exception& e) {
      error = e.what();
    }
    // A real host keeps its NIC running after its own tool is done: the guest may still resend
    // (its last ACK, READ response or NAK from srnic was lost) and must be answered.
    if (!done_file.empty()) {
      try {
        node.run_until([&] { return access(done_file.c_str(), F_OK) == 0; }, pc.timeout_s,
                       "the guest tool to exit");
      } catch (const std::exception& e) {
        rep.detail += std::string(rep.detail.empty() ? "" : "; ") + "after srnic's side: " + e.what();
      }
    }
    st = node.stats();
  } catch (const std::exception& e) {
    error = e.what();
  }
  const double wall = wall_s() - t0;
  const nlohmann::json result{{"tool", pc.tool},
                               {"role", pc.server ? "server" : "client"},
                               {"size", pc.size},
                               {"iters", pc.iters},
                               {"mtu", pc.mtu},
                               {"ok", error.empty()},
                               {"error", error},
                               {"detail", rep.detail},
                               {"messages", rep.messages},
                               {"bytes", rep.bytes},
                               {"checked", rep.checked},
                               {"sim_rtt_us", rep.sim_rtt_us},
                               {"frames_to_nic", st.to_nic},
                               {"frames_from_nic", st.from_nic},
                               {"arp_replies", st.arp_replies},
                               {"dropped", st.dropped},
                               {"impairments", {{"loss", nc.loss}, {"reorder", nc.reorder}, {"dup", nc.dup},
                                                {"lost_to_nic", st.lost[0]}, {"lost_to_guest", st.lost[1]},
                                                {"reordered", st.reordered[0] + st.reordered[1]},
                                                {"duplicated", st.duplicated[0] + st.duplicated[1]}}},
                               {"qmp_stops", st.stops},
                               {"idle_rounds", st.idle_rounds},
                               {"guest_run_s", st.guest_run_s},
                               {"sim_us", st.sim_us},
                               {"sim_cycles", st.cycles},
                               {"step_wall_s", st.step_wall_s},
                               {"wall_s", wall}};
  // Invalid UTF-8 in a message becomes U+FFFD instead of an exception.
  std::cout << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  if (!error.empty()) {
    std::fprintf(stderr, "srnic-interop: FAIL: %s\n", error.c_str());
    return 1;
  }
  std::fprintf(stderr, "srnic-interop: PASS: %s %s, %s\n", pc.tool.c_str(), pc.server ? "server" : "client",
               rep.detail.c_str());
  return 0;
}
