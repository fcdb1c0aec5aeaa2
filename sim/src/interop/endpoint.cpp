// Endpoint: RC QP setup through the host library, posting, checked polling, data pattern.
#include "endpoint.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace srnic::sim::interop {

void fill_pattern(uint64_t seed, uint64_t msg, uint8_t* dst, size_t len) {
  SplitMix64 g(SplitMix64::child(seed, 0x1000 + msg));
  for (size_t i = 0; i < len; i += 8) {
    uint64_t v = g.next();
    for (size_t k = 0; k < 8 && i + k < len; ++k, v >>= 8) dst[i + k] = uint8_t(v);
  }
}

void ipv4_gid(uint32_t ip, uint8_t gid[16]) {
  std::memset(gid, 0, 16);
  gid[10] = gid[11] = 0xFF;
  for (int i = 0; i < 4; ++i) gid[12 + i] = uint8_t(ip >> (24 - 8 * i));
}

bool gid_ipv4(const uint8_t gid[16], uint32_t& ip) {
  for (int i = 0; i < 10; ++i)
    if (gid[i]) return false;
  if (gid[10] != 0xFF || gid[11] != 0xFF) return false;
  ip = uint32_t(gid[12]) << 24 | uint32_t(gid[13]) << 16 | uint32_t(gid[14]) << 8 | gid[15];
  return true;
}

std::string ipv4_str(uint32_t ip) {
  char b[20];
  std::snprintf(b, sizeof b, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
  return b;
}

namespace {
sw::Mtu mtu_enum(uint32_t mtu) {
  switch (mtu) {
    case 256: return sw::Mtu::Mtu256;
    case 512: return sw::Mtu::Mtu512;
    case 1024: return sw::Mtu::Mtu1024;
    case 2048: return sw::Mtu::Mtu2048;
    case 4096: return sw::Mtu::Mtu4096;
    default: throw std::invalid_argument("path MTU must be 256, 512, 1024, 2048 or 4096");
  }
}
}  // namespace

Endpoint::Endpoint(Node& node, uint64_t buf_bytes, uint32_t sq, uint32_t rq, uint32_t psn)
    : node_(node), psn_(psn & 0xFFFFFF) {
  node.hold();
  sw::Device& dev = node.device();
  pd_ = dev.alloc_pd();
  scq_ = dev.create_cq(sq * 2);
  rcq_ = dev.create_cq(rq * 2);
  buf_bytes = (buf_bytes + 4095) & ~uint64_t(4095);
  buf_ = node.world().memory(0).alloc(buf_bytes, 4096);
  mr_ = dev.reg_mr(*pd_, buf_, buf_bytes,
                   sw::Access::LocalWrite | sw::Access::RemoteWrite | sw::Access::RemoteRead);
  sw::QpInitAttr ia;
  ia.send_cq = scq_.get();
  ia.recv_cq = rcq_.get();
  ia.cap.max_send_wr = sq;
  ia.cap.max_recv_wr = rq;
  ia.sq_sig_all = true;
  qp_ = dev.create_qp(*pd_, ia);
  sw::QpAttr a;
  a.qp_state = sw::QpState::Init;
  a.qp_access_flags = sw::Access::RemoteWrite | sw::Access::RemoteRead;
  qp_->modify(a, sw::QpAttrMask::State | sw::QpAttrMask::PkeyIndex | sw::QpAttrMask::Port |
                     sw::QpAttrMask::AccessFlags);
}

// The NIC objects are not torn down: their destructors would issue commands through a
// simulation that is ending.
Endpoint::~Endpoint() {
  (void)qp_.release();
  (void)mr_.release();
  (void)scq_.release();
  (void)rcq_.release();
  (void)pd_.release();
}

void Endpoint::connect(const RemoteQp& r, uint32_t mtu, uint8_t dest_rd_atomic, uint8_t rd_atomic) {
  node_.hold();
  const NodeConfig& c = node_.config();
  if (r.ip != c.guest_ip)
    throw std::runtime_error("the peer announced GID ::ffff:" + ipv4_str(r.ip) + ", the guest is at " +
                             ipv4_str(c.guest_ip));
  sw::QpAttr a;
  a.qp_state = sw::QpState::Rtr;
  a.path_mtu = mtu_enum(mtu);
  a.dest_qp_num = r.qpn;
  a.rq_psn = r.psn;
  a.ah_attr.dmac = c.guest_mac;
  a.ah_attr.dip = r.ip;
  a.min_rnr_timer = 12;
  a.max_dest_rd_atomic = dest_rd_atomic;
  qp_->modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Av | sw::QpAttrMask::PathMtu |
                     sw::QpAttrMask::DestQpn | sw::QpAttrMask::RqPsn | sw::QpAttrMask::MaxDestRdAtomic |
                     sw::QpAttrMask::MinRnrTimer);
  a.qp_state = sw::QpState::Rts;
  a.sq_psn = psn_;
  a.timeout = uint8_t(node_.config().qp_timeout);
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = rd_atomic;
  qp_->modify(a, sw::QpAttrMask::State | sw::QpAttrMask::Timeout | sw::QpAttrMask::RetryCnt |
                     sw::QpAttrMask::RnrRetry | sw::QpAttrMask::SqPsn | sw::QpAttrMask::MaxQpRdAtomic);
}

void Endpoint::post_send(sw::WrOpcode op, uint64_t wr_id, uint64_t laddr, uint32_t len, uint64_t raddr,
                         uint32_t rkey, uint32_t imm) {
  node_.hold();
  sw::Sge s;
  s.addr = laddr;
  s.length = len;
  s.lkey = mr_->lkey();
  sw::SendWr w;
  w.wr_id = wr_id;
  w.sg_list = &s;
  w.num_sge = 1;
  w.opcode = op;
  w.send_flags = sw::SendFlags::Signaled;
  w.remote_addr = raddr;
  w.rkey = rkey;
  w.imm_data = imm;
  if (int e = qp_->post_send(&w))
    throw std::runtime_error("post_send " + std::string(sw::to_string(op)) + " failed, errno " + std::to_string(e));
  node_.add_outstanding(1);
}

void Endpoint::post_recv(uint64_t wr_id, uint64_t laddr, uint32_t len) {
  node_.hold();
  sw::Sge s;
  s.addr = laddr;
  s.length = len;
  s.lkey = mr_->lkey();
  sw::RecvWr w;
  w.wr_id = wr_id;
  w.sg_list = &s;
  w.num_sge = 1;
  if (int e = qp_->post_recv(&w)) throw std::runtime_error("post_recv failed, errno " + std::to_string(e));
}

void Endpoint::poll() {
  sw::WorkCompletion wc[16];
  for (auto* cq : {scq_.get(), rcq_.get()}) {
    int n;
    while ((n = cq->poll_cq(16, wc)) > 0) {
      for (int k = 0; k < n; ++k) {
        const sw::WorkCompletion& c = wc[k];
        if (c.status != sw::WcStatus::Success)
          throw std::runtime_error(std::string("completion wr_id ") + std::to_string(c.wr_id) + " (" +
                                   sw::to_string(c.opcode) + ") failed: " + sw::to_string(c.status));
        if (c.qp_num != qp_->qp_num())
          throw std::runtime_error("completion for QPN " + std::to_string(c.qp_num) + ", expected " +
                                   std::to_string(qp_->qp_num()));
        if (cq == scq_.get()) node_.add_outstanding(-1);
        (cq == scq_.get() ? sends : recvs).push_back(c);
      }
    }
  }
}

void Endpoint::write(uint64_t addr, const void* src, size_t n) { node_.world().memory(0).write(addr, src, n); }

void Endpoint::read(uint64_t addr, void* dst, size_t n) { node_.world().memory(0).read(addr, dst, n); }

std::string Endpoint::check(uint64_t addr, size_t n, uint64_t seed, uint64_t msg) {
  std::vector<uint8_t> want(n), got(n);
  fill_pattern(seed, msg, want.data(), n);
  read(addr, got.data(), n);
  for (size_t i = 0; i < n; ++i)
    if (want[i] != got[i]) {
      char b[160];
      std::snprintf(b, sizeof b, "message %llu byte %zu (address 0x%llx): got 0x%02x, expected 0x%02x",
                    static_cast<unsigned long long>(msg), i, static_cast<unsigned long long>(addr + i), got[i],
                    want[i]);
      return b;
    }
  return "";
}

}  // namespace srnic::sim::interop
