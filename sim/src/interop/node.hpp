// Node: one simulated srnic host (World with an external peer) joined to a qemu guest.
//
// Frames: the guest's frames come from the FrameSocket; ARP requests for the node's IPv4
// address are answered here (the host's network stack would do it on a real machine); IPv4
// frames addressed to the node's MAC are padded to the 60-byte Ethernet minimum and sent into
// the Link towards the NIC one after the other at 100GE line rate, honouring the NIC's pause
// requests (its RX buffer is lossless only if the far end obeys them); everything else (IPv6 neighbour discovery, multicast) is counted
// and dropped. The NIC's frames are sent to the guest as they leave the simulated wire.
//
// Time: the guest runs only while the simulation waits for it. Before the simulation steps,
// the guest is stopped over QMP (its vCPUs and virtual clock stand still, so rxe's timers do
// not run while the NIC model computes); once the World has been quiet for quiet_ns of
// simulated time and every NIC frame has been handed to qemu, the guest is resumed and the
// node blocks on the socket. Simulated time advances only while the NIC works, guest time only
// while the guest works: each side sees the other answer without delay of its own clock.
// One exception keeps srnic's own timers alive: while srnic has send work outstanding (its
// local ACK and RNR timers may be armed; an idle bus says nothing about them) and the guest
// gave no frame during a wait slice, the NIC also gets idle_slice_ns of simulated time. Without
// it a lost frame whose recovery is srnic's timer would leave both sides waiting forever. In
// those idle rounds the guest gets kWaitMs of its time per idle_slice_ns of the NIC's.
//
// Waits (run_until) are bounded in the two clocks of the run, never in wall time: a wait fails
// after timeout_s of guest time (the time the guest ran while the wait lasted; wall time when
// there is no QMP) or sim_timeout_ns of simulated time, so a loaded machine slows a run down
// but does not fail it.
//
// No frame loss: qemu's -netdev stream is a unix stream socket, whose writer waits instead of
// dropping, but qemu drops ("purges") the frames it still holds for the guest's NIC when the
// VM stops (frames it read while the NIC had no free receive buffer). So the guest is stopped
// only once qemu has taken every frame and a sentinel behind them (FrameSocket::delivered());
// towards us, the socket is drained right before each QMP command and while it is in flight,
// so qemu never holds a guest frame back at a stop. A frame lost all the same would show up as
// a NAK (PSN sequence error) from either side, which the runner counts as a failure.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host_io.hpp"
#include "sim_backend.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim::interop {

struct NodeConfig {
  std::string sock;          // qemu's -netdev stream unix socket (server=on)
  std::string qmp;           // QMP socket; empty: the guest is never stopped
  uint64_t mac = 0x525400000002ull;
  uint32_t ip = 0xC0000202u;         // 192.0.2.2
  uint64_t guest_mac = 0x525400000001ull;
  uint32_t guest_ip = 0xC0000201u;   // 192.0.2.1
  std::string pcap;          // frames on the simulated wire
  uint64_t seed = 1;
  double clock_mhz = 300;
  double quiet_ns = 10000;   // World idle this long => the NIC is done with what it got
  // Impairments of the simulated wire between the guest's port and the NIC, the same in both
  // directions (Link: seeded from `seed`): random loss, reordering (a frame held back
  // reorder_delay_ns), duplication. ARP is answered before the wire and never impaired.
  double loss = 0, reorder = 0, dup = 0;
  double reorder_delay_ns = 2000;
  // srnic QPs' local ACK timeout attribute (4.096 us x 2^T of simulated time). perftest's 14
  // (67 ms) is about 20M cycles, minutes of wall time here: an impaired wire needs less.
  unsigned qp_timeout = 14;
  double sim_timeout_ns = 50e6;    // simulated time one wait may take
  double idle_slice_ns = 20000;    // simulated time per idle round while sends are outstanding
  bool verbose = false;
};

struct NodeStats {
  uint64_t to_nic = 0, from_nic = 0;   // frames into / out of the NIC
  uint64_t arp_replies = 0, dropped = 0;
  // what the impaired wire did: [0] to the NIC (frames the guest sent), [1] to the guest
  uint64_t lost[2] = {0, 0}, reordered[2] = {0, 0}, duplicated[2] = {0, 0};
  uint64_t stops = 0;                   // QMP stop commands
  uint64_t idle_rounds = 0;             // idle slices given to the NIC for its timers
  double guest_run_s = 0;               // guest time: wall time the guest ran while connected
  double sim_us = 0;                    // simulated time
  uint64_t cycles = 0;
  double step_wall_s = 0;               // wall time spent stepping the World
};

class Node {
 public:
  explicit Node(const NodeConfig& cfg);
  ~Node();

  World& world() { return *world_; }
  sw::Device& device() { return *dev_; }
  const NodeConfig& config() const { return cfg_; }

  // Runs the NIC and the guest until done() returns true; throws std::runtime_error naming
  // `what` after timeout_s of guest time or the configured simulated time (see Time above).
  void run_until(const std::function<bool()>& done, double timeout_s, const std::string& what);
  // Guest time so far (seconds the guest ran; wall seconds without QMP).
  double guest_s() const;
  // Send work requests posted to srnic and not completed yet (kept by Endpoint).
  void add_outstanding(int delta) { outstanding_ += delta; }
  // Runs until the World is quiet and every NIC frame has reached qemu, then resumes the guest.
  void settle(double timeout_s = 60);
  // Stops the guest (before control-path work that steps the simulation).
  void hold();
  NodeStats stats() const;
  void log(const std::string& msg) const;
  // Sees every RoCE-bound frame: those from the guest before padding (to_nic) and the NIC's.
  std::function<void(const uint8_t*, size_t, bool to_nic)> tap;

 private:
  class HeldBackend;
  void drain_socket();
  void wait_socket();
  void pump_guest();
  void pump_nic();
  void handle_arp(const std::vector<uint8_t>& f);
  void step_burst();
  void idle_round();

  NodeConfig cfg_;
  std::unique_ptr<World> world_;
  std::unique_ptr<FrameSocket> sock_;
  std::unique_ptr<Qmp> qmp_;
  std::unique_ptr<SimBackend> be_;
  std::unique_ptr<sw::Device> dev_;
  std::deque<std::vector<uint8_t>> inq_;  // guest frames read, not yet handled
  Frame nic_frame_;
  double quiet_since_ns_ = 0;
  double tx_free_ns_ = 0;  // when the guest-side port may start its next frame
  bool active_ = false;  // frames or bus traffic since the last quiet point
  long outstanding_ = 0;
  NodeStats st_;
  double t0_ = 0;
};

}  // namespace srnic::sim::interop
