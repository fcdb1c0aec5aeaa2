// Node: the simulated srnic host, its frame pump to the guest and the stop/cont time scheme.
#include "node.hpp"

#include <poll.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace srnic::sim::interop {

namespace {
constexpr size_t kMinFrame = 60;          // Ethernet minimum without FCS
constexpr unsigned kBurstCycles = 64;     // cycles stepped between socket checks
constexpr int kWaitMs = 5;                // socket wait while the guest runs
constexpr size_t kWireOverhead = 24;      // FCS, preamble and inter-frame gap
constexpr double kLineGbps = 100;         // the guest's frames enter at 100GE line rate

uint64_t mac_at(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 6; ++i) v = (v << 8) | p[i];
  return v;
}
void put_mac(uint8_t* p, uint64_t m) {
  for (int i = 5; i >= 0; --i, m >>= 8) p[i] = uint8_t(m);
}
uint32_t be32_at(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
void put_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}
}  // namespace

// SimBackend whose blocking register reads (which step the World) first stop the guest.
class Node::HeldBackend : public SimBackend {
 public:
  HeldBackend(Node& n, World& w) : SimBackend(w, 0), node_(n) {}
  uint32_t mmio_read32(uint32_t off) override {
    node_.hold();
    return SimBackend::mmio_read32(off);
  }

 private:
  Node& node_;
};

Node::Node(const NodeConfig& cfg) : cfg_(cfg), t0_(wall_s()) {
  WorldConfig wc;
  wc.hosts = 1;
  wc.external_peer = true;
  wc.clock_mhz = cfg.clock_mhz;
  wc.seed = cfg.seed;
  wc.pcap = cfg.pcap;
  if (cfg.loss > 0 || cfg.reorder > 0 || cfg.dup > 0) {
    Impairments im;
    im.loss = cfg.loss;
    im.reorder = cfg.reorder;
    im.reorder_delay_ns = cfg.reorder_delay_ns;
    im.dup = cfg.dup;
    wc.link.impair_both(im);
    // The pcap shows what each side sent, lost frames included; the side file
    // (<pcap>.impair.csv) says what the wire did to them.
    wc.link.pcap_lost = true;
  }
  world_ = std::make_unique<World>(wc);
  sock_ = std::make_unique<FrameSocket>(cfg.sock);
  if (!cfg.qmp.empty()) qmp_ = std::make_unique<Qmp>(cfg.qmp, 30, sock_->fd(), [this] { drain_socket(); });
  be_ = std::make_unique<HeldBackend>(*this, *world_);
  dev_ = std::make_unique<sw::Device>(*be_);
  dev_->set_mac(cfg.mac);
  dev_->set_ipv4(cfg.ip);
}

Node::~Node() = default;

void Node::log(const std::string& msg) const {
  if (cfg_.verbose) std::fprintf(stderr, "[%8.3f s | sim %10.3f us] %s\n", wall_s() - t0_,
                                 world_->now_ns() / 1000.0, msg.c_str());
}

void Node::hold() {
  if (!qmp_ || !qmp_->running()) return;
  // Nothing of ours may sit in qemu's queue when the VM stops (qemu would drop it): let the
  // guest run until qemu has put every frame into its receive ring.
  const double deadline = wall_s() + 60;
  while (!sock_->delivered()) {
    drain_socket();
    if (wall_s() > deadline) throw std::runtime_error("qemu took no frame from us for 60 s");
    wait_socket();
  }
  qmp_->stop();
}

void Node::wait_socket() {
  // While frames wait for qemu to read their predecessor, poll finely (qemu gives no event
  // when it has read them); otherwise sleep until a frame arrives.
  pollfd pf{sock_->fd(), POLLIN, 0};
  const bool busy = sock_->backlog() || !sock_->delivered();
  const timespec t{0, busy ? 50000L : long(kWaitMs) * 1000000L};
  ppoll(&pf, 1, &t, nullptr);
}

void Node::handle_arp(const std::vector<uint8_t>& f) {
  // Ethernet(14) + ARP: htype 1, ptype 0x0800, hlen 6, plen 4, oper, sha, spa, tha, tpa
  if (f.size() < 42 || f[14] != 0 || f[15] != 1 || f[16] != 8 || f[17] != 0 || f[18] != 6 || f[19] != 4) {
    ++st_.dropped;
    return;
  }
  const unsigned oper = unsigned(f[20]) << 8 | f[21];
  if (oper != 1 || be32_at(&f[38]) != cfg_.ip) {
    ++st_.dropped;
    return;
  }
  std::vector<uint8_t> r(kMinFrame, 0);
  std::memcpy(&r[0], &f[22], 6);             // to the requester
  put_mac(&r[6], cfg_.mac);
  r[12] = 0x08;
  r[13] = 0x06;
  std::memcpy(&r[14], &f[14], 6);            // htype, ptype, hlen, plen
  r[20] = 0;
  r[21] = 2;                                  // reply
  put_mac(&r[22], cfg_.mac);
  put_be32(&r[28], cfg_.ip);
  std::memcpy(&r[32], &f[22], 10);           // target = requester's MAC and IPv4
  sock_->send(r.data(), r.size());
  ++st_.arp_replies;
  if (mac_at(&f[22]) != cfg_.guest_mac) log("ARP request from an unexpected MAC");
  log("ARP: answered who-has for our address");
}

void Node::drain_socket() {
  std::vector<uint8_t> f;
  while (sock_->receive(f)) {
    inq_.push_back(std::move(f));
    f = std::vector<uint8_t>();
  }
}

void Node::pump_guest() {
  drain_socket();
  Link& link = world_->link(0);
  const double now = world_->now_ns();
  for (; !inq_.empty(); inq_.pop_front()) {
    std::vector<uint8_t>& in = inq_.front();
    if (in.size() < 14) {
      ++st_.dropped;
      continue;
    }
    const unsigned type = unsigned(in[12]) << 8 | in[13];
    if (type == 0x0806) {
      handle_arp(in);
      continue;
    }
    if (type != 0x0800 || mac_at(&in[0]) != cfg_.mac) {
      ++st_.dropped;
      continue;
    }
    // Like a 100GE port: one frame at a time at line rate, none while the NIC pauses us.
    if (now < tx_free_ns_ || link.tx_paused(1, now)) {
      active_ = true;
      quiet_since_ns_ = now;
      return;
    }
    if (tap) tap(in.data(), in.size(), true);
    Frame f;
    f.bytes = link.take_buffer();
    f.bytes.assign(in.begin(), in.end());
    if (f.bytes.size() < kMinFrame) f.bytes.resize(kMinFrame, 0);
    tx_free_ns_ = now + double(f.bytes.size() + kWireOverhead) * 8.0 / kLineGbps;
    f.t_sent_ns = tx_free_ns_;
    link.send(1, std::move(f));
    ++st_.to_nic;
    active_ = true;
    quiet_since_ns_ = now;
  }
}

void Node::pump_nic() {
  Link& link = world_->link(0);
  while (link.receive(1, world_->now_ns(), nic_frame_)) {
    if (tap) tap(nic_frame_.bytes.data(), nic_frame_.bytes.size(), false);
    sock_->send(nic_frame_.bytes.data(), nic_frame_.bytes.size());
    ++st_.from_nic;
  }
}

void Node::step_burst() {
  hold();
  const double t = wall_s();
  for (unsigned k = 0; k < kBurstCycles; ++k) {
    world_->step();
    if (!world_->idle()) quiet_since_ns_ = world_->now_ns();
  }
  st_.step_wall_s += wall_s() - t;
  pump_nic();
  active_ = world_->now_ns() - quiet_since_ns_ < cfg_.quiet_ns;
}

double Node::guest_s() const { return qmp_ ? qmp_->run_s() : wall_s() - t0_; }

// The NIC's timers run only while the World steps: give it idle_slice_ns of simulated time
// (the guest stopped), returning early when it starts to work (a resend leaves).
void Node::idle_round() {
  ++st_.idle_rounds;
  const double until = world_->now_ns() + cfg_.idle_slice_ns;
  while (world_->now_ns() < until && world_->idle() && inq_.empty()) step_burst();
}

void Node::run_until(const std::function<bool()>& done, double timeout_s, const std::string& what) {
  const double g0 = guest_s(), s0 = world_->now_ns();
  for (;;) {
    pump_guest();
    pump_nic();
    sock_->flush();
    if (done()) return;
    const double g = guest_s() - g0, s = world_->now_ns() - s0;
    if (g > timeout_s || s > cfg_.sim_timeout_ns) {
      char b[160];
      std::snprintf(b, sizeof b, "timeout after %.1f s of guest time and %.3f ms of simulated time waiting for ", g,
                    s / 1e6);
      throw std::runtime_error(b + what);
    }
    if (active_ || !world_->idle() || world_->now_ns() - quiet_since_ns_ < cfg_.quiet_ns) {
      step_burst();
      continue;
    }
    // The NIC is done with everything it got: the guest's turn.
    if (qmp_) qmp_->cont();
    const uint64_t before = sock_->frames_in();
    wait_socket();
    drain_socket();
    if (outstanding_ > 0 && sock_->frames_in() == before && inq_.empty()) idle_round();
  }
}

void Node::settle(double timeout_s) {
  run_until([&] { return !active_ && inq_.empty() && world_->idle() && !sock_->backlog() &&
                         world_->now_ns() - quiet_since_ns_ >= cfg_.quiet_ns; },
            timeout_s, "the simulation to settle");
  if (qmp_) qmp_->cont();
}

NodeStats Node::stats() const {
  NodeStats s = st_;
  if (qmp_) {
    s.stops = qmp_->stops();
    s.guest_run_s = qmp_->run_s();
  }
  for (int d = 0; d < 2; ++d) {  // side 1 is the guest's port: its frames go to the NIC
    const LinkStats& ls = world_->link(0).stats(d == 0 ? 1 : 0);
    s.lost[d] = ls.lost;
    s.reordered[d] = ls.reordered;
    s.duplicated[d] = ls.duplicated;
  }
  s.sim_us = world_->now_ns() / 1000.0;
  s.cycles = world_->cycle();
  return s;
}

}  // namespace srnic::sim::interop
