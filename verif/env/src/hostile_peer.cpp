// Hostile peer sequence and the dir_hostile_peer test (see hostile_peer.hpp).
//
// Host 0 is the requester of every victim QP pair, host 1 its responder. Forged requests go
// into the link toward host 1 as if host 0 sent them, forged responses toward host 0 as if
// host 1 did. Each victim first moves one WRITE (or, for the READ-response attacks, posts one
// READ whose real response the link drops), then meets its attack at a random cycle drawn
// from the test's seed, then (where the QP must survive) moves one more WRITE.
#include "srnic/env/hostile_peer.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>

#include "sim_backend.hpp"
#include "srnic/abi.hpp"
#include "srnic/roce/aeth.hpp"
#include "srnic/roce/icrc.hpp"
#include "srnic/roce/packet.hpp"

namespace srnic::verif::env {
namespace {

constexpr uint64_t kMac0 = 0x020000000001ull;  // the env's hosts: MAC kMac0 + h, IPv4 kIp0 + h
constexpr uint32_t kIp0 = 0x0A000001u;
constexpr uint64_t kRegion = 0x4000;           // per victim in each host's victim buffer
constexpr uint64_t kW2 = 0x1000, kFirst = 0x2000, kRead = 0x2000, kNever = 0x3000;
constexpr uint64_t kTimeout = 150000;          // cycles a victim waits for a completion
constexpr uint32_t kFirstFreeQpn = 0x3F00;     // QPNs from here on are never created

bool g_forging = false;  // frames the peer injects pass the drop filter

roce::MacAddr mac(uint64_t v) {
  roce::MacAddr m{};
  for (int i = 0; i < 6; ++i) m[size_t(i)] = uint8_t(v >> (8 * (5 - i)));
  return m;
}

bool survives(Attack a) {
  return a == Attack::Duplicate || a == Attack::PsnAhead || a == Attack::UnknownOpcode || a == Attack::WrongQpn ||
         a == Attack::GhostAck || a == Attack::GhostNak || a == Attack::GhostReadResponse;
}
bool read_attack(Attack a) { return a == Attack::LongReadResponse || a == Attack::ShortReadResponse; }

}  // namespace

const char* attack_name(Attack a) {
  static const char* const n[] = {"duplicate",        "psn_ahead",          "unknown_opcode", "wrong_qpn",
                                  "ghost_ack",        "ghost_nak",          "ghost_read_response",
                                  "middle_without_first", "last_overrun", "huge_read",
                                  "long_read_response", "short_read_response"};
  return a < Attack::kCount ? n[size_t(a)] : "?";
}

struct HostilePeer::Victim {
  uint32_t index = 0;
  Attack kind = Attack::Duplicate;
  std::unique_ptr<sw::QueuePair> qp[2];
  uint64_t region = 0;        // offset in both hosts' victim buffers
  uint32_t psn0 = 0;          // host 0's first request PSN (host 1's expected PSN)
  uint32_t next_psn = 0;      // host 0's next request PSN
  uint64_t start_at = 0;
  uint64_t wait_until = 0;
  int step = 0;
  bool done = false;
  uint32_t len1 = 0;
  struct Want {
    uint64_t wr_id;
    sw::WcStatus status;
    uint64_t since;
  };
  std::deque<Want> want;      // completions still expected, in order
  std::string name() const { return "victim " + std::to_string(index) + " (" + attack_name(kind) + ")"; }
};

HostilePeer::HostilePeer(uvm::Component& parent, std::string name, ChipEnv& env)
    : Component(parent, std::move(name)), env_(env) {}

HostilePeer::~HostilePeer() = default;

void HostilePeer::release() {
  env_.world().link(0).set_drop_filter({});
  for (auto& v : victims_)
    for (auto& q : v->qp) q.reset();
  for (int h = 0; h < 2; ++h) {
    mr_[h].reset();
    cq_[h].reset();
  }
}

void HostilePeer::setup() {
  std::vector<Attack> kinds;
  for (size_t k = 0; k < size_t(Attack::kCount); ++k) kinds.push_back(Attack(k));
  const uint64_t extra = rng().uniform(0, 4);
  for (uint64_t i = 0; i < extra; ++i) kinds.push_back(Attack(rng().uniform(0, uint64_t(Attack::kCount) - 1)));
  const uint64_t bytes = kRegion * kinds.size();
  for (uint32_t h = 0; h < 2; ++h) {
    HostAgent& a = env_.host(h);
    cq_[h] = a.dev->create_cq(64);
    buf_[h] = a.be->dma_alloc(bytes, 4096);
    init_[h].resize(bytes);
    for (auto& b : init_[h]) b = uint8_t(rng().next_u32());
    a.be->mem_write(buf_[h], init_[h].data(), init_[h].size());
    want_[h] = init_[h];
    mr_[h] = a.dev->reg_mr(*a.pd, buf_[h], bytes,
                           sw::Access::LocalWrite | sw::Access::RemoteWrite | sw::Access::RemoteRead);
    env_.extra_dma[h].push_back({cq_[h]->base(), cq_[h]->base() + uint64_t(cq_[h]->size()) * 32});
  }
  const uint32_t mtu = env_.plan().mtu;
  for (size_t i = 0; i < kinds.size(); ++i) {
    auto v = std::make_unique<Victim>();
    v->index = uint32_t(i);
    v->kind = kinds[i];
    v->region = kRegion * i;
    v->psn0 = uint32_t(rng().uniform(0, 0xFFFFFF));
    v->next_psn = v->psn0;
    for (uint32_t h = 0; h < 2; ++h) {
      sw::QpInitAttr ia;
      ia.send_cq = ia.recv_cq = cq_[h].get();
      ia.cap.max_send_wr = ia.cap.max_recv_wr = 8;
      v->qp[h] = env_.host(h).dev->create_qp(*env_.host(h).pd, ia);
    }
    for (uint32_t h = 0; h < 2; ++h)
      ChipEnv::connect_qp(*v->qp[h], h, v->qp[1 - h]->qp_num(), v->psn0, v->psn0, mtu,
                          sw::Access::RemoteWrite | sw::Access::RemoteRead, 0);
    env_.proto().connect_pair(kIp0, v->qp[0]->qp_num(), kIp0 + 1, v->qp[1]->qp_num());
    // host 1 may be written in this victim's WRITE destinations and the forged FIRST's range;
    // host 0 never (no READ of a victim is allowed to place anything)
    env_.extra_dma[1].push_back({buf_[1] + v->region, buf_[1] + v->region + kNever});
    if (read_attack(v->kind)) read_victim_qpn_.push_back(v->qp[0]->qp_num());
    victims_.push_back(std::move(v));
  }
  // the real responses of the READs whose responses are forged never arrive
  std::vector<uint32_t> drop = read_victim_qpn_;
  env_.world().link(0).set_drop_filter([drop](int from, const sim::Frame& f) {
    if (g_forging || from != 1 || f.bytes.size() < 14 + 20 + 8 + 12) return false;
    const uint8_t* bth = f.bytes.data() + 14 + 20 + 8;
    const uint32_t qpn = (uint32_t(bth[5]) << 16) | (uint32_t(bth[6]) << 8) | bth[7];
    return bth[0] >= 0x0D && bth[0] <= 0x10 && std::find(drop.begin(), drop.end(), qpn) != drop.end();
  });
  // The counters the attacks provoke, exactly (the random traffic provokes none of them).
  for (uint32_t h = 0; h < 2; ++h)
    for (int c : {abi::CNT_RX_DROP_MALFORMED, abi::CNT_RX_DROP_QP, abi::CNT_RX_DUP, abi::CNT_RX_PSN_ERR,
                  abi::CNT_TX_NAK, abi::CNT_RX_NAK, abi::CNT_RX_ACCESS_ERR})
      env_.expected_counters[h][c] = 0;
  // attack times: drawn now that the setup's register accesses are over, within the first
  // 10000 cycles of traffic (the plan's traffic runs longer)
  for (auto& v : victims_) v->start_at = cycle() + rng().uniform(100, 10000);
  raise_objection();
  objecting_ = true;
  std::string list;
  for (const auto& v : victims_)
    list += std::string(list.empty() ? "" : ", ") + attack_name(v->kind) + " @" + std::to_string(v->start_at);
  info("HOSTILE", std::to_string(victims_.size()) + " victim QP pairs: " + list, uvm::verbosity::kLow);
}

void HostilePeer::start_of_run() {}

void HostilePeer::count(uint32_t host, int counter, uint32_t n) { env_.expected_counters[host][counter] += n; }

void HostilePeer::post(Victim& v, bool read, uint64_t wr_id, uint64_t loff, uint64_t roff, uint32_t len) {
  sw::Sge sge{buf_[0] + v.region + loff, len, mr_[0]->lkey()};
  sw::SendWr wr;
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = read ? sw::WrOpcode::RdmaRead : sw::WrOpcode::RdmaWrite;
  wr.send_flags = sw::SendFlags::Signaled;
  wr.remote_addr = buf_[1] + v.region + roff;
  wr.rkey = mr_[1]->rkey();
  if (v.qp[0]->post_send(&wr) != 0) error("HOSTILE", v.name() + ": post_send failed");
  const uint32_t mtu = env_.plan().mtu;
  v.next_psn = (v.next_psn + (len == 0 ? 1 : (len + mtu - 1) / mtu)) & 0xFFFFFF;
}

std::vector<uint8_t> HostilePeer::request(Victim& v, uint8_t opcode, uint32_t psn, uint64_t roff, uint32_t dma_len,
                                          std::vector<uint8_t> payload) {
  roce::Packet p;
  p.eth.dst = mac(kMac0 + 1);
  p.eth.src = mac(kMac0);
  p.ip4.src = kIp0;
  p.ip4.dst = kIp0 + 1;
  p.udp.sport = 0xC001;
  p.bth.opcode = opcode;
  p.bth.dest_qp = v.qp[1]->qp_num();
  p.bth.psn = psn & 0xFFFFFF;
  p.bth.ack_req = true;
  p.reth.va = buf_[1] + v.region + roff;
  p.reth.rkey = mr_[1]->rkey();
  p.reth.dma_len = dma_len;
  p.atomic.va = p.reth.va;
  p.atomic.rkey = p.reth.rkey;
  p.payload = std::move(payload);
  return p.build();
}

std::vector<uint8_t> HostilePeer::response(Victim& v, uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t len) {
  roce::Packet p;
  p.eth.dst = mac(kMac0);
  p.eth.src = mac(kMac0 + 1);
  p.ip4.src = kIp0 + 1;
  p.ip4.dst = kIp0;
  p.udp.sport = 0xC001;
  p.bth.opcode = opcode;
  p.bth.dest_qp = v.qp[0]->qp_num();
  p.bth.psn = psn & 0xFFFFFF;
  p.aeth.syndrome = syndrome;
  p.aeth.msn = uint32_t(rng().uniform(0, 0xFFFFFF));
  p.payload.resize(len);
  for (auto& b : p.payload) b = uint8_t(rng().next_u32());
  return p.build();
}

void HostilePeer::forge(Victim& v, uint32_t to, const std::vector<uint8_t>& frame) {
  env_.proto().note_forged(frame);
  g_forging = true;
  env_.inject_frame(to, frame);
  g_forging = false;
  ++forged_;
  info("FORGE", v.name() + ": " + std::to_string(frame.size()) + "-byte frame to host " + std::to_string(to) +
                    ", opcode " + roce::opcode_name(frame[14 + 20 + 8]),
       uvm::verbosity::kHigh);
}

void HostilePeer::tick() {
  if (!objecting_) return;
  if ((cycle() & 7) == 0) poll();
  for (auto& v : victims_)
    if (!v->done) step(*v);
}

void HostilePeer::poll() {
  sw::WorkCompletion wc[16];
  const int n = cq_[0]->poll_cq(16, wc);
  for (int i = 0; i < n; ++i) {
    const uint64_t idx = wc[i].wr_id >> 16;
    if (idx >= victims_.size()) {
      error("HOSTILE_CQE", "completion with wr_id " + std::to_string(wc[i].wr_id) + " names no victim");
      continue;
    }
    Victim& v = *victims_[idx];
    if (v.want.empty()) {
      error("HOSTILE_CQE", v.name() + ": unexpected completion wr_id " + std::to_string(wc[i].wr_id) + " " +
                               sw::to_string(wc[i].status));
      continue;
    }
    const Victim::Want w = v.want.front();
    v.want.pop_front();
    if (wc[i].wr_id != w.wr_id || wc[i].status != w.status)
      error("HOSTILE_CQE", v.name() + ": completion wr_id " + std::to_string(wc[i].wr_id) + " " +
                               sw::to_string(wc[i].status) + ", expected wr_id " + std::to_string(w.wr_id) + " " +
                               sw::to_string(w.status));
  }
  if (cq_[1]->poll_cq(16, wc) > 0) error("HOSTILE_CQE", "a completion on host 1's victim CQ (nothing posted there)");
}

void HostilePeer::step(Victim& v) {
  const uint64_t now = cycle();
  const uint32_t mtu = env_.plan().mtu;
  const uint64_t id = uint64_t(v.index) << 16;
  if (!v.want.empty()) {
    if (now - v.want.front().since > kTimeout) {
      error("HOSTILE_HANG", v.name() + ": no completion for wr_id " + std::to_string(v.want.front().wr_id) +
                                " after " + std::to_string(kTimeout) + " cycles");
      v.want.clear();
      v.done = true;
    }
    return;
  }
  if (now < v.start_at || now < v.wait_until) return;
  auto finish = [&] {
    v.done = true;
    if (++done_ == victims_.size() && objecting_) {
      objecting_ = false;
      drop_objection();
    }
  };
  auto write = [&](uint64_t wr_id, uint64_t off, uint32_t len) {
    post(v, false, wr_id, off, off, len);
    v.want.push_back({wr_id, sw::WcStatus::Success, now});
    std::copy_n(init_[0].begin() + long(v.region + off), len, want_[1].begin() + long(v.region + off));
  };
  if (read_attack(v.kind)) {
    // a one-packet READ; its real response is dropped on the link, a forged one replaces it
    if (v.step == 0) {
      v.len1 = uint32_t(rng().uniform(2, std::min<uint32_t>(mtu - 16, 2048)));
      post(v, true, id | 1, kRead, 0, v.len1);
      v.wait_until = now + 3000;  // the request is out, its response dropped
      v.step = 1;
    } else if (v.step == 1) {
      const bool long_ = v.kind == Attack::LongReadResponse;
      const uint32_t len = long_ ? v.len1 + uint32_t(rng().uniform(1, 16)) : uint32_t(rng().uniform(0, v.len1 - 1));
      forge(v, 0, response(v, roce::op::kRcReadResponseOnly, v.psn0, roce::kCreditInvalid, len));
      v.want.push_back({id | 1, sw::WcStatus::BadRespErr, now});
      v.step = 2;
    } else {
      finish();
    }
    return;
  }
  switch (v.step) {
    case 0:  // one WRITE of at most one packet, completed before the attack
      v.len1 = uint32_t(rng().uniform(1, mtu));
      write(id | 1, 0, v.len1);
      v.step = 1;
      return;
    case 1:
      break;  // the attack, below
    case 2:
      if (survives(v.kind)) {
        write(id | 2, kW2, uint32_t(rng().uniform(1, std::min<uint64_t>(3 * mtu, kFirst - kW2))));
        v.step = 3;
        return;
      }
      finish();
      return;
    default:
      finish();
      return;
  }
  // ---- the attack: host 0 has sent [psn0, next_psn), host 1 expects next_psn
  const uint32_t next = v.next_psn;
  auto bytes = [&](uint32_t n) {
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = uint8_t(rng().next_u32());
    return b;
  };
  switch (v.kind) {
    case Attack::Duplicate: {
      // the first WRITE again, other data: ACKed (ePSN - 1), not placed
      std::vector<uint8_t> other(init_[0].begin() + long(v.region), init_[0].begin() + long(v.region + v.len1));
      for (auto& b : other) b ^= 0xA5;
      forge(v, 1, request(v, roce::op::kRcWriteOnly, v.psn0, 0, v.len1, other));
      count(1, abi::CNT_RX_DUP);
      break;
    }
    case Attack::PsnAhead:
      forge(v, 1, request(v, roce::op::kRcWriteOnly, next + uint32_t(rng().uniform(1, 1000)), kNever, 64, bytes(64)));
      count(1, abi::CNT_RX_PSN_ERR);
      count(1, abi::CNT_TX_NAK);   // PSN sequence error, naming `next`
      count(0, abi::CNT_RX_NAK);   // host 0 ignores it (no go-back-N yet)
      break;
    case Attack::UnknownOpcode: {
      static const uint8_t ops[] = {0x12, 0x13, 0x14, 0x15, 0x24, 0x64, 0x81};
      const uint8_t opc = ops[rng().uniform(0, sizeof ops - 1)];
      std::vector<uint8_t> f;
      if (opc == 0x15) {
        // reserved: the library does not build it; a WRITE ONLY with the opcode patched
        f = request(v, roce::op::kRcWriteOnly, next, kNever, 8, bytes(8));
        f[14 + 20 + 8] = opc;
        roce::icrc_store(&f[f.size() - 4], roce::icrc_compute(&f[14], f.size() - 18));
      } else {
        f = request(v, opc, next, kNever, 8, (opc == 0x24 || opc == 0x64) ? bytes(8) : std::vector<uint8_t>{});
      }
      forge(v, 1, f);
      count(1, abi::CNT_RX_DROP_MALFORMED);
      break;
    }
    case Attack::WrongQpn: {
      // a valid WRITE ONLY to a QPN that was never created (BTH DestQP patched, ICRC redone)
      std::vector<uint8_t> f = request(v, roce::op::kRcWriteOnly, next, kNever, 64, bytes(64));
      const uint32_t qpn = kFirstFreeQpn + v.index;
      f[14 + 20 + 8 + 5] = uint8_t(qpn >> 16);
      f[14 + 20 + 8 + 6] = uint8_t(qpn >> 8);
      f[14 + 20 + 8 + 7] = uint8_t(qpn);
      roce::icrc_store(&f[f.size() - 4], roce::icrc_compute(&f[14], f.size() - 18));
      forge(v, 1, f);
      count(1, abi::CNT_RX_DROP_QP);
      break;
    }
    case Attack::GhostAck:
      forge(v, 0, response(v, roce::op::kRcAck, next + uint32_t(rng().uniform(0, 1000)), roce::kCreditInvalid, 0));
      count(0, abi::CNT_RX_PSN_ERR);
      break;
    case Attack::GhostNak: {
      static const uint8_t syn[] = {0x61, 0x62, 0x63, 0x2E};
      forge(v, 0, response(v, roce::op::kRcAck, next + uint32_t(rng().uniform(0, 1000)),
                           syn[rng().uniform(0, sizeof syn - 1)], 0));
      count(0, abi::CNT_RX_PSN_ERR);
      break;
    }
    case Attack::GhostReadResponse:
      // a PSN never sent, or the first WRITE's PSN (sent, but no READ owns it)
      forge(v, 0, response(v, roce::op::kRcReadResponseOnly,
                           rng().bernoulli(0.5) ? v.psn0 : next + uint32_t(rng().uniform(0, 1000)),
                           roce::kCreditInvalid, uint32_t(rng().uniform(1, mtu))));
      count(0, abi::CNT_RX_PSN_ERR);
      break;
    case Attack::MiddleWithoutFirst:
      forge(v, 1, request(v, roce::op::kRcWriteMiddle, next, 0, 0, bytes(mtu)));
      count(1, abi::CNT_TX_NAK);      // Invalid Request at `next`
      count(0, abi::CNT_RX_PSN_ERR);  // host 0 never sent `next`: its NAK is dropped
      break;
    case Attack::LastOverrun: {
      std::vector<uint8_t> first = bytes(mtu);
      std::vector<uint8_t> f = request(v, roce::op::kRcWriteFirst, next, kFirst,
                                       mtu + uint32_t(rng().uniform(1, mtu - 1)), first);
      f[14 + 20 + 8 + 8] &= 0x7F;  // no AckReq on the FIRST (BTH byte 8)
      roce::icrc_store(&f[f.size() - 4], roce::icrc_compute(&f[14], f.size() - 18));
      forge(v, 1, f);
      forge(v, 1, request(v, roce::op::kRcWriteLast, next + 1, 0, 0, bytes(mtu)));
      std::copy(first.begin(), first.end(), want_[1].begin() + long(v.region + kFirst));  // inside its R_Key range
      count(1, abi::CNT_TX_NAK);
      count(0, abi::CNT_RX_PSN_ERR);
      break;
    }
    case Attack::HugeRead:
      forge(v, 1, request(v, roce::op::kRcReadRequest, next, 0, 0x80000000u, {}));
      count(1, abi::CNT_RX_ACCESS_ERR);
      count(1, abi::CNT_TX_NAK);
      count(0, abi::CNT_RX_PSN_ERR);
      break;
    default:
      break;
  }
  v.wait_until = now + 3000;
  v.step = 2;
}

void HostilePeer::check() {
  for (const auto& v : victims_)
    if (!v->done) error("HOSTILE_NOT_DONE", v->name() + " did not finish (step " + std::to_string(v->step) + ")");
  for (uint32_t h = 0; h < 2; ++h) {
    std::vector<uint8_t> got(want_[h].size());
    env_.host(h).be->mem_read(buf_[h], got.data(), got.size());
    for (const auto& v : victims_) {
      uint32_t bad = 0;
      uint64_t first = 0;
      for (uint64_t i = v->region; i < v->region + kRegion; ++i)
        if (got[i] != want_[h][i] && bad++ == 0) first = i - v->region;
      if (bad)
        error("HOSTILE_DATA", "host " + std::to_string(h) + " " + v->name() + ": " + std::to_string(bad) +
                                  " bytes differ from what may be written, the first at region offset 0x" +
                                  [](uint64_t x) {
                                    char b[24];
                                    std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(x));
                                    return std::string(b);
                                  }(first));
    }
  }
}

void HostilePeer::report() {
  info("HOSTILE", std::to_string(forged_) + " frames forged at " + std::to_string(victims_.size()) +
                      " victims, " + std::to_string(done_) + " finished",
       uvm::verbosity::kLow);
}

// ---------------------------------------------------------------- the test

// Live random traffic on the plan's QPs (a smoke-sized plan, no bad WRs) while the hostile peer
// forges frames at victim QP pairs of their own: the env checks the plan's QPs as always, the
// peer checks each victim's outcome, its buffers and the exact NIC counters.
class DirHostilePeer : public ChipTest {
 public:
  explicit DirHostilePeer(uvm::Context& ctx) : ChipTest(ctx, knobs()) {
    peer_ = &env().create<HostilePeer>("hostile", env());
    env().before_traffic = [this](ChipEnv&) { peer_->setup(); };
  }
  ~DirHostilePeer() override { peer_->release(); }

 private:
  static Knobs knobs() {
    Knobs k;
    k.min_qps = 2;
    k.max_qps = 4;
    k.min_wrs = 8;
    k.max_wrs = 20;
    k.size_weight = {1, 1, 1, 1, 1, 4, 2, 0, 0};
    return k;
  }
  HostilePeer* peer_ = nullptr;
};
SRNIC_UVM_TEST(DirHostilePeer, "dir_hostile_peer");

}  // namespace srnic::verif::env
