// The full-chip tests: constrained-random (cr_*) and directed (dir_*). Each is a set of knobs
// for the traffic plan plus, for some, a directed action; the env does the rest. The testplan
// (verif/testplan.toml) maps testpoints to these names.
#include <vector>

#include "srnic/env/chip_env.hpp"
#include "sim_backend.hpp"
#include "srnic/roce/packet.hpp"

namespace srnic::verif::env {
namespace {

using SC = SizeClass;

// Size-class weights in SizeClass order: zero, one, mtu-1, mtu, mtu+1, small, medium, large, huge.
std::array<uint32_t, size_t(SC::kCount)> sizes(uint32_t z, uint32_t o, uint32_t m1, uint32_t m, uint32_t p1,
                                               uint32_t s, uint32_t med, uint32_t l, uint32_t h) {
  return {z, o, m1, m, p1, s, med, l, h};
}

Knobs smoke() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 4;
  k.max_wrs = 8;
  k.size_weight = sizes(1, 1, 1, 1, 1, 4, 2, 0, 0);
  return k;
}

Knobs ops() {
  Knobs k;
  k.min_qps = 2;
  k.max_qps = 8;
  k.min_wrs = 4;
  k.max_wrs = 16;
  k.op_weight = {1, 1, 1, 1, 1};
  k.size_weight = sizes(1, 1, 1, 1, 1, 4, 3, 1, 0);
  k.large_max = 131072;
  return k;
}

Knobs corner_sizes() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 4;
  k.min_wrs = 6;
  k.max_wrs = 16;
  k.size_weight = sizes(3, 3, 3, 3, 3, 1, 1, 0, 0);
  return k;
}

Knobs mtu_multi_packet() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 3;
  k.size_weight = sizes(0, 0, 2, 2, 2, 0, 4, 1, 0);
  k.large_max = 65536;
  return k;
}

Knobs many_qps(uint32_t lo, uint32_t hi) {
  Knobs k;
  k.min_qps = lo;
  k.max_qps = hi;
  k.min_wrs = 1;
  k.max_wrs = 3;
  k.size_weight = sizes(1, 1, 0, 0, 0, 4, 1, 0, 0);
  k.medium_max = 4096;
  k.sq_depths = {2, 4};
  k.rq_depths = {2, 4};
  k.doorbell_weight = {1, 1, 3};
  return k;
}

Knobs large() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 2;
  k.min_wrs = 1;
  k.max_wrs = 3;
  k.size_weight = sizes(0, 0, 0, 0, 0, 1, 0, 1, 4);
  k.huge_min = 1u << 20;
  k.huge_max = 3u << 20;
  k.max_total_bytes = 12ull << 20;
  return k;
}

Knobs rnr() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 4;
  k.min_wrs = 6;
  k.max_wrs = 16;
  k.op_weight = {1, 2, 4, 2, 1};
  k.rq_depths = {2, 4};
  k.size_weight = sizes(1, 1, 1, 1, 1, 4, 1, 0, 0);
  k.rnr_exhaust = 0.3;
  return k;
}

Knobs doorbell() {
  Knobs k;
  k.min_qps = 2;
  k.max_qps = 16;
  k.min_wrs = 8;
  k.max_wrs = 40;
  k.max_batch = 32;
  k.sq_depths = {8, 16, 32, 64};
  k.rq_depths = {16, 32, 64};
  k.size_weight = sizes(1, 1, 0, 0, 0, 4, 1, 0, 0);
  return k;
}

Knobs ack_storm() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 2;
  k.min_wrs = 32;
  k.max_wrs = 64;
  k.bidir = 1.0;
  k.op_weight = {4, 1, 2, 1, 2};
  k.size_weight = sizes(2, 2, 0, 0, 0, 4, 0, 0, 0);
  k.small_max = 64;
  k.sq_depths = {32, 64};
  k.rq_depths = {64};
  k.doorbell_weight = {0, 1, 0};
  k.max_batch = 32;
  k.unsignaled = 0.7;
  return k;
}

Knobs cross4k() {
  Knobs k = ops();
  k.cross4k = 1.0;
  k.size_weight = sizes(0, 0, 1, 1, 1, 4, 3, 0, 0);
  return k;
}

Knobs zero_len() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 4;
  k.min_wrs = 4;
  k.max_wrs = 12;
  k.op_weight = {1, 1, 1, 1, 1};
  k.size_weight = sizes(6, 1, 0, 0, 0, 1, 0, 0, 0);
  return k;
}

Knobs bad(std::array<uint32_t, size_t(BadKind::kCount)> w) {  // weights in BadKind order
  Knobs k = smoke();
  k.min_qps = 2;
  k.max_qps = 6;
  k.bad_wr = 0.6;
  k.bad_weight = w;
  return k;
}

Knobs rnr_exhaust() {
  Knobs k = rnr();
  k.rnr_exhaust = 1.0;
  k.op_weight = {1, 1, 3, 1, 0};
  return k;
}

// Every QP fails (bad WRs of every kind, RNR) while receives are posted on both of its sides:
// the NIC must flush them with WR_FLUSH_ERR (on the failing requester's QP and on a responder
// that found a class C error), complete a receive consumed by the failing message in error,
// and keep the QPs that did not fail running.
Knobs qp_error_rq_flush() {
  Knobs k = smoke();
  k.min_qps = 2;
  k.max_qps = 6;
  k.bidir = 1;
  k.bad_wr = 0.6;
  k.rnr_exhaust = 0.8;
  k.late_recv = 0.7;
  k.op_weight = {1, 3, 2, 1, 1};
  k.bad_weight = {0, 1, 1, 3, 3, 1, 1, 1, 1};  // remote key and bounds most: WRITE_WITH_IMM consumes a receive
  return k;
}

// The hard cases at once: per-QP path MTUs, I/O virtual addresses != physical, sources and
// destinations in separate MRs with different rights, stale keys and MR-rights violations among
// the bad WRs, READ targets sent on by fenced WRs, random PCIe timing and a pause storm.
Knobs hard() {
  Knobs k = ops();
  k.min_qps = 2;
  k.max_qps = 8;
  k.per_qp_mtu = 0.7;
  k.iova_shift = 0.7;
  k.split_mrs = 0.7;
  k.fence_reuse = 0.5;
  k.op_weight = {2, 1, 2, 1, 3};  // READs to send on
  k.bad_wr = 0.3;
  k.bad_weight = {0, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4};
  k.host_err = 0.2;
  return k;
}

// The host moves QPs to ERR while their WRs are in flight (before any is posted, in the middle
// of multi-packet messages and READs, after the last): a prefix of each QP's WRs completes as
// predicted, the rest and every receive complete WR_FLUSH_ERR, nothing lands outside the
// permitted ranges, and the other QPs are unaffected.
Knobs host_err() {
  Knobs k = ops();
  k.min_qps = 2;
  k.max_qps = 8;
  k.op_weight = {2, 1, 2, 1, 2};
  k.size_weight = sizes(1, 1, 1, 1, 1, 3, 3, 2, 0);
  k.host_err = 0.6;
  return k;
}

// Every opcode on many QPs in both directions over a lossy link (loss, reordering and
// duplication drawn per direction, EnvConfig::lossy): go-back-N must deliver every WR exactly
// once, in order, with the completion and bytes of a lossless link. Multi-packet messages
// (sequence NAKs inside a message, READ response gaps) and small ones (tails recovered by the
// local ACK timeout) mixed.
Knobs lossy() {
  Knobs k = ops();  // its WRs per QP and size classes
  k.min_qps = 4;
  k.max_qps = 24;
  k.bidir = 0.5;
  k.op_weight = {2, 1, 2, 1, 2};
  k.large_max = 65536;
  return k;
}

// Both hosts send small messages (0..128 bytes, mostly SENDs and WRITEs) on every QP at once, as
// fast as their rings allow, over 16..256 QPs and a cable drawn up to the longest the RX buffer's
// pause headroom covers: each NIC's receive path runs at its small-message rate, below the
// wire's, so each pauses the other again and again while its own transmitter is paused. The link
// must stay lossless (no RX_DROP_OVERFLOW, the LOSSLESS check) and every WR complete as
// predicted, without a retransmission on a lossless link.
Knobs bidir_small() {
  Knobs k;
  k.min_qps = 16;
  k.max_qps = 256;
  k.min_wrs = 12;
  k.max_wrs = 48;
  k.bidir = 1.0;
  k.op_weight = {4, 1, 4, 1, 1};
  k.size_weight = sizes(1, 1, 0, 0, 0, 8, 0, 0, 0);
  k.small_max = 128;
  k.sq_depths = {16, 32, 64};
  k.rq_depths = {32, 64};
  k.doorbell_weight = {0, 3, 1};
  k.max_batch = 16;
  k.unsignaled = 0.5;
  k.full_rate = true;
  return k;
}

// Both hosts reset connections while their WRs are in flight (WRs outstanding on both ends,
// frames on the wire, multi-packet messages and READs half done), by QP_MODIFY to RESET or by
// destroying the QP and creating another, both ends at once or the second up to 100 us later;
// then connect them again with new PSNs (the same QPN or a new one) and go on with new WRs into
// fresh destination slots, some connections several times. The new incarnations' WRs complete
// exactly as predicted, no WR posted before a reset completes after it (RESET_CQE), no frame of
// the old connection leaves a NIC after its end's reset (STALE_TX), nothing is written outside
// what the model permits, the other QPs are unaffected.
Knobs qp_reset() {
  Knobs k;
  k.min_qps = 2;
  k.max_qps = 6;
  k.min_wrs = 4;
  k.max_wrs = 16;
  k.bidir = 0.7;
  k.op_weight = {3, 1, 2, 1, 2};
  k.size_weight = sizes(1, 1, 1, 1, 1, 4, 3, 1, 0);
  k.large_max = 65536;
  k.qp_reset = 0.6;
  return k;
}

EnvConfig long_cable() {
  EnvConfig c;
  c.cable_random = true;
  return c;
}

EnvConfig lossy_link() {
  EnvConfig c;
  c.lossy = true;
  c.window_random = true;
  c.require_resend = true;
  return c;
}

EnvConfig long_cable_lossy() {
  EnvConfig c = lossy_link();
  c.cable_random = true;
  return c;
}

EnvConfig impaired() {
  EnvConfig c;
  c.pcie_random = true;
  c.pause_storm = true;
  c.window_random = true;
  return c;
}

// PSNs of every QP start just below 2^24 and wrap during its traffic (at message starts and
// inside multi-packet messages, READ responses and ACKs too, both directions); 2- and 4-entry
// SQ and RQ rings with many WRs wrap their indices many times, and the small CQs flip their
// phase bit on every pass.
Knobs wraps() {
  Knobs k;
  k.min_qps = 1;
  k.max_qps = 3;
  k.min_wrs = 12;
  k.max_wrs = 40;
  k.bidir = 1.0;
  k.op_weight = {3, 1, 2, 1, 3};
  k.size_weight = sizes(1, 1, 1, 1, 1, 3, 3, 0, 0);
  k.medium_max = 8192;
  k.doorbell_weight = {1, 4, 1};  // batches that run past the ring end
  k.max_batch = 4;
  k.psn_wrap = 1.0;
  k.ring_wrap = 1.0;
  return k;
}

#define SRNIC_CHIP_TEST_CFG(CLASS, NAME, KNOBS, CFG)                         \
  class CLASS : public ChipTest {                                            \
   public:                                                                   \
    explicit CLASS(uvm::Context& ctx) : ChipTest(ctx, KNOBS, CFG) {}         \
  };                                                                         \
  SRNIC_UVM_TEST(CLASS, NAME)
#define SRNIC_CHIP_TEST(CLASS, NAME, KNOBS) SRNIC_CHIP_TEST_CFG(CLASS, NAME, KNOBS, EnvConfig{})

SRNIC_CHIP_TEST(CrSmoke, "cr_smoke", smoke());
SRNIC_CHIP_TEST(CrOps, "cr_ops", ops());
SRNIC_CHIP_TEST(CrSizes, "cr_sizes", corner_sizes());
SRNIC_CHIP_TEST(CrMtu, "cr_mtu", mtu_multi_packet());
SRNIC_CHIP_TEST(CrManyQps, "cr_many_qps", many_qps(16, 256));
SRNIC_CHIP_TEST(CrThousandsQps, "cr_thousands_qps", many_qps(1000, 2500));
SRNIC_CHIP_TEST(CrLarge, "cr_large", large());
SRNIC_CHIP_TEST(CrRnr, "cr_rnr", rnr());
SRNIC_CHIP_TEST(CrDoorbell, "cr_doorbell", doorbell());
SRNIC_CHIP_TEST(CrAckStorm, "cr_ack_storm", ack_storm());
SRNIC_CHIP_TEST(Cr4kCross, "cr_4k_cross", cross4k());
SRNIC_CHIP_TEST(DirZeroLen, "dir_zero_len", zero_len());
SRNIC_CHIP_TEST(DirBadWqe, "dir_bad_wqe", bad({0, 1, 1, 0, 0, 0, 0, 1, 0}));
SRNIC_CHIP_TEST(DirBadRemote, "dir_bad_remote", bad({0, 0, 0, 1, 1, 1, 1, 0, 1}));
SRNIC_CHIP_TEST(DirRnrExhaust, "dir_rnr_exhaust", rnr_exhaust());
SRNIC_CHIP_TEST(DirQpErrorRqFlush, "dir_qp_error_rq_flush", qp_error_rq_flush());
SRNIC_CHIP_TEST(CrWraps, "cr_wraps", wraps());
SRNIC_CHIP_TEST(CrHostErr, "cr_host_err", host_err());
SRNIC_CHIP_TEST(CrQpReset, "cr_qp_reset", qp_reset());

SRNIC_CHIP_TEST_CFG(CrHard, "cr_hard", hard(), impaired());
SRNIC_CHIP_TEST_CFG(CrLossy, "cr_lossy", lossy(), lossy_link());
SRNIC_CHIP_TEST_CFG(CrBidirSmall, "cr_bidir_small", bidir_small(), long_cable());
SRNIC_CHIP_TEST_CFG(CrBidirSmallLossy, "cr_bidir_small_lossy", bidir_small(), long_cable_lossy());
SRNIC_CHIP_TEST_CFG(CrQpResetLossy, "cr_qp_reset_lossy", qp_reset(), lossy_link());

// Malformed and foreign frames arrive at both NICs before the traffic starts: each is dropped
// and counted under its reason, and the random traffic that follows must still pass.
class DirBadFrames : public ChipTest {
 public:
  explicit DirBadFrames(uvm::Context& ctx) : ChipTest(ctx, smoke()) {
    env().before_traffic = [this](ChipEnv& e) { inject(e); };
  }

 private:
  static roce::MacAddr mac(uint64_t v) {
    roce::MacAddr m{};
    for (int i = 0; i < 6; ++i) m[size_t(i)] = uint8_t(v >> (8 * (5 - i)));
    return m;
  }

  void inject(ChipEnv& e) {
    for (uint32_t to = 0; to < 2; ++to) {
      const uint32_t from = 1 - to;
      roce::Packet p;
      p.eth.dst = mac(0x020000000001ull + to);
      p.eth.src = mac(0x020000000001ull + from);
      p.ip4.src = 0x0A000001u + from;
      p.ip4.dst = 0x0A000001u + to;
      p.udp.sport = 0xC001;
      p.bth.opcode = 0x0A;  // RDMA WRITE Only
      p.bth.dest_qp = e.layout()[to].qpn[0];
      p.bth.psn = rng().uniform(0, 0xFFFFFF);
      p.bth.ack_req = true;
      p.reth.va = e.layout()[to].area;
      p.reth.rkey = e.layout()[to].key;
      p.reth.dma_len = 64;
      p.payload.assign(64, 0xEE);
      const std::vector<uint8_t> good = p.build();
      uint32_t icrc = 0, malformed = 0, qp = 0;
      const uint32_t n = static_cast<uint32_t>(rng().uniform(4, 12));
      for (uint32_t i = 0; i < n; ++i) {
        std::vector<uint8_t> f = good;
        switch (rng().uniform(0, 4)) {
          case 0:  // one flipped bit in the payload or ICRC
            f[rng().uniform(14 + 20 + 8 + 12 + 16, f.size() - 1)] ^= uint8_t(1u << rng().uniform(0, 7));
            ++icrc;
            break;
          case 1:  // another UDP destination port
            f[37] ^= 0xFF;
            ++malformed;
            break;
          case 2:  // truncated inside the headers
            f.resize(rng().uniform(20, 14 + 20 + 8 + 11));
            ++malformed;
            break;
          case 3:  // another destination MAC
            f[5] ^= 0x40;
            ++malformed;
            break;
          default: {  // a QP that does not exist (good ICRC)
            roce::Packet q = p;
            q.bth.dest_qp = 0xFFFFF0;
            f = q.build();
            ++qp;
            break;
          }
        }
        e.inject_frame(to, std::move(f));
        e.run_cycles(300);
      }
      e.expected_counters[to][abi::CNT_RX_DROP_ICRC] = icrc;
      e.expected_counters[to][abi::CNT_RX_DROP_MALFORMED] = malformed;
      e.expected_counters[to][abi::CNT_RX_DROP_QP] = qp;
      info("INJECT", "host " + std::to_string(to) + ": " + std::to_string(n) + " bad frames (" +
                         std::to_string(icrc) + " ICRC, " + std::to_string(malformed) + " malformed, " +
                         std::to_string(qp) + " unknown QP)", uvm::verbosity::kLow);
    }
  }
};
SRNIC_UVM_TEST(DirBadFrames, "dir_bad_frames");

// Register-file robustness before traffic: writes to read-only registers (identification,
// capabilities, timestamp, counters) change nothing, reads of write-only doorbells answer
// without side effects, and the random traffic that follows still passes.
class DirCsrAccess : public ChipTest {
 public:
  explicit DirCsrAccess(uvm::Context& ctx) : ChipTest(ctx, smoke()) {
    env().before_traffic = [this](ChipEnv& e) { poke(e); };
  }

 private:
  void poke(ChipEnv& e) {
    for (uint32_t h = 0; h < 2; ++h) {
      sw::Backend& be = *e.host(h).be;
      const std::vector<uint32_t> ro = {abi::REG_ID, abi::REG_VERSION, abi::REG_CAPS,
                                        abi::REG_CNT_BASE + 4 * abi::CNT_TX_FRAMES,
                                        abi::REG_CNT_BASE + 4 * abi::CNT_RX_DROP_ICRC};
      std::vector<uint32_t> before;
      for (uint32_t off : ro) before.push_back(be.mmio_read32(off));
      for (uint32_t off : ro) be.mmio_write32(off, static_cast<uint32_t>(rng().next_u64()));
      for (size_t i = 0; i < ro.size(); ++i) {
        const uint32_t after = be.mmio_read32(ro[i]);
        if (after != before[i])
          error("CSR_RO", "host " + std::to_string(h) + " register 0x" + std::to_string(ro[i]) +
                              " changed from " + std::to_string(before[i]) + " to " + std::to_string(after) +
                              " by a write to a read-only register");
      }
      // Reads of the write-only doorbells: answered, no doorbell taken (DB_BAD stays 0).
      for (uint32_t off : {abi::REG_DB_SQ, abi::REG_DB_RQ, abi::REG_DB_CQ, abi::REG_CMD}) be.mmio_read32(off);
      if (be.mmio_read32(abi::REG_ID) != before[0]) error("CSR_RO", "ID register changed");
      // Doorbells for a QP number past the table (counted as bad) and for a QP that was never
      // created (a RESET QP: ignored); neither may disturb the traffic that follows.
      be.mmio_write32(abi::REG_DB_SQ, (uint32_t(5) << 16) | 0xFFFFu);
      be.mmio_write32(abi::REG_DB_SQ, (uint32_t(5) << 16) | 0x3FF0u);
      be.mmio_write32(abi::REG_DB_RQ, (uint32_t(3) << 16) | 0x3FF1u);
      e.expected_counters[h][abi::CNT_DB_BAD] = 1;
    }
    e.run_cycles(2000);
    info("CSR", "read-only and write-only registers poked on both hosts", uvm::verbosity::kLow);
  }
};
SRNIC_UVM_TEST(DirCsrAccess, "dir_csr_access");

// A completion queue that software does not poll: the NIC writes as many CQEs as the ring
// holds, drops the rest and counts them (CQ_OVERFLOW), the CQEs it wrote stay intact, and the
// random traffic on the other QPs is unaffected. Runs on an extra QP pair with a 4-entry CQ.
class DirCqOverflow : public ChipTest {
 public:
  explicit DirCqOverflow(uvm::Context& ctx) : ChipTest(ctx, smoke()) {
    env().before_traffic = [this](ChipEnv& e) { overflow(e); };
  }
  ~DirCqOverflow() override {
    for (int h = 0; h < 2; ++h) {
      qp_[h].reset();
      cq_[h].reset();
      mr_[h].reset();
    }
  }

 private:
  void overflow(ChipEnv& e) {
    constexpr uint32_t kCqe = 4, kWrs = 8, kLen = 256;
    for (uint32_t h = 0; h < 2; ++h) {
      HostAgent& a = e.host(h);
      cq_[h] = a.dev->create_cq(kCqe);
      buf_[h] = a.be->dma_alloc(kWrs * kLen, 4096);
      std::vector<uint8_t> init(kWrs * kLen);
      for (auto& b : init) b = uint8_t(rng().next_u32());
      a.be->mem_write(buf_[h], init.data(), init.size());
      mr_[h] = a.dev->reg_mr(*a.pd, buf_[h], kWrs * kLen, sw::Access::LocalWrite | sw::Access::RemoteWrite);
      sw::QpInitAttr ia;
      ia.send_cq = ia.recv_cq = cq_[h].get();
      ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
      qp_[h] = a.dev->create_qp(*a.pd, ia);
      e.extra_dma[h].push_back({cq_[h]->base(), cq_[h]->base() + uint64_t(cq_[h]->size()) * 32});
      e.extra_dma[h].push_back({buf_[h], buf_[h] + kWrs * kLen});
    }
    for (uint32_t h = 0; h < 2; ++h)
      ChipEnv::connect_qp(*qp_[h], h, qp_[1 - h]->qp_num(), 0x100, 0x100, 1024, sw::Access::RemoteWrite, 7);
    // Eight signaled WRITEs from host 0 to host 1, one doorbell; nobody polls the CQ.
    std::vector<sw::SendWr> wrs(kWrs);
    std::vector<sw::Sge> sges(kWrs);
    for (uint32_t i = 0; i < kWrs; ++i) {
      sges[i] = sw::Sge{buf_[0] + i * kLen, kLen, mr_[0]->lkey()};
      wrs[i].wr_id = 0xC0 + i;
      wrs[i].sg_list = &sges[i];
      wrs[i].num_sge = 1;
      wrs[i].opcode = sw::WrOpcode::RdmaWrite;
      wrs[i].send_flags = sw::SendFlags::Signaled;
      wrs[i].remote_addr = buf_[1] + i * kLen;
      wrs[i].rkey = mr_[1]->rkey();
      wrs[i].next = i + 1 < kWrs ? &wrs[i + 1] : nullptr;
    }
    if (qp_[0]->post_send(wrs.data()) != 0) error("CQ_OVERFLOW", "post_send failed");
    e.run_cycles(20000);
    e.expected_counters[0][abi::CNT_CQ_OVERFLOW] = kWrs - kCqe;
    // The ring holds the first four completions, in order and intact.
    sw::WorkCompletion wc[kWrs];
    const int n = cq_[0]->poll_cq(int(kWrs), wc);
    if (n != int(kCqe)) error("CQ_OVERFLOW", "polled " + std::to_string(n) + " completions, expected " + std::to_string(kCqe));
    for (int i = 0; i < n; ++i)
      if (wc[i].wr_id != 0xC0u + uint32_t(i) || wc[i].status != sw::WcStatus::Success)
        error("CQ_OVERFLOW", "completion " + std::to_string(i) + ": wr_id " + std::to_string(wc[i].wr_id) +
                                 " status " + sw::to_string(wc[i].status));
    // The data itself landed.
    std::vector<uint8_t> src(kWrs * kLen), dst(kWrs * kLen);
    e.host(0).be->mem_read(buf_[0], src.data(), src.size());
    e.host(1).be->mem_read(buf_[1], dst.data(), dst.size());
    if (src != dst) error("CQ_OVERFLOW", "the WRITEs' data did not land");
    info("CQ_OVERFLOW", "8 completions into a 4-entry CQ: 4 written, 4 dropped and counted", uvm::verbosity::kLow);
  }

  std::unique_ptr<sw::CompletionQueue> cq_[2];
  std::unique_ptr<sw::MemoryRegion> mr_[2];
  std::unique_ptr<sw::QueuePair> qp_[2];
  uint64_t buf_[2] = {0, 0};
};
SRNIC_UVM_TEST(DirCqOverflow, "dir_cq_overflow");

}  // namespace
}  // namespace srnic::verif::env
