// Constrained-random traffic for the full-chip environment: knobs (the constraints a test sets),
// the plan drawn from them (every work request of every QP, buffer slots, queue depths, doorbell
// pattern), and the reference-model workload built from a plan once the NICs are set up.
//
// Memory layout per host: one data area registered as one MR, [src | gap | dst]. Sources are
// read only (by local WRITE/SEND and by the peer's READ); every byte the NICs may write lies in
// a destination slot that belongs to exactly one WR or receive, with unwritten gaps between
// slots, so each placed byte has one predicted value and a stray write is caught at once.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "srnic/uvm/rng.hpp"
#include "srnic/verif/ref_model.hpp"

namespace srnic::verif::env {

// Message-size classes: the corner values around the MTU and random ranges.
enum class SizeClass : uint8_t { Zero, One, MtuMinus1, Mtu, MtuPlus1, Small, Medium, Large, Huge, kCount };
const char* to_string(SizeClass c);

// How the host posts: one WR per doorbell, several WRs per doorbell, or a burst over many QPs.
enum class Doorbell : uint8_t { OneAtATime, Batched, ManyQps, kCount };
const char* to_string(Doorbell d);

// Deliberately bad work requests (each is a class the NIC must handle without side effects).
enum class BadKind : uint8_t {
  None,
  LocalKey,     // lkey names no MR -> LOC_PROT_ERR
  LocalBounds,  // local range past the MR end -> LOC_PROT_ERR
  RemoteKey,    // rkey names no MR -> NAK, REM_ACCESS_ERR
  RemoteBounds, // remote range past the MR end -> NAK, REM_ACCESS_ERR
  RecvTooSmall, // SEND longer than the receive buffer -> REM_INV_REQ_ERR on both sides
  QpAccess,     // the responder QP lacks the remote right (WRITE / READ) -> NAK, REM_INV_REQ_ERR
  ForeignPdLocal,   // lkey of an MR in another protection domain -> LOC_PROT_ERR
  ForeignPdRemote,  // rkey of an MR in another protection domain -> NAK, REM_ACCESS_ERR
  MrRights,     // WRITE into the peer's source MR, which lacks REMOTE_WRITE -> NAK, REM_ACCESS_ERR
  StaleKey,     // rkey of an MR that was deregistered (same index, old tag) -> NAK, REM_ACCESS_ERR
  kCount
};
const char* to_string(BadKind b);

// How a host resets its end of a connection (Knobs::qp_reset), as a user of the host library
// can: QP_MODIFY to RESET (the same QP and QPN go on), or destroy the QP and create another,
// destroyed first (Recreate: the new QP gets the freed QPN back) or created first (Replace: a
// new QPN).
enum class ResetHow : uint8_t { Modify, Recreate, Replace, kCount };
const char* to_string(ResetHow r);

struct Knobs {
  uint32_t min_qps = 1, max_qps = 4;
  std::vector<uint32_t> mtus = {256, 512, 1024, 2048, 4096};
  // verif::WrOpcode order: Write, WriteImm, Send, SendImm, Read.
  std::array<uint32_t, 5> op_weight = {3, 1, 2, 1, 2};
  std::array<uint32_t, size_t(SizeClass::kCount)> size_weight = {1, 1, 1, 1, 1, 4, 3, 1, 0};
  uint32_t small_max = 512;       // Small: 2 .. small_max
  uint32_t medium_max = 16384;    // Medium: small_max .. medium_max
  uint32_t large_max = 262144;    // Large: medium_max .. large_max
  uint32_t huge_min = 1u << 20, huge_max = 4u << 20;  // Huge: multi-MB
  uint32_t min_wrs = 1, max_wrs = 12;    // send WRs per QP and side
  double bidir = 0.5;                    // probability that host 1 also sends on a QP
  std::vector<uint32_t> sq_depths = {4, 8, 16, 32};   // ring entries (powers of two)
  std::vector<uint32_t> rq_depths = {4, 8, 16, 32};
  double cross4k = 0.3;          // probability a slot is placed across a 4 KB boundary
  double unsignaled = 0.2;       // probability a send WR (not the last) is unsignaled
  std::array<uint32_t, size_t(Doorbell::kCount)> doorbell_weight = {1, 1, 1};
  uint32_t max_batch = 8;        // WRs per doorbell when batched
  bool full_rate = false;        // no gaps between doorbells: each host posts as fast as its rings allow
  double bad_wr = 0;             // probability that a QP side ends with one bad WR
  std::array<uint32_t, size_t(BadKind::kCount)> bad_weight = {0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  double tight_end = 0.3;        // probability that a host's MR ends exactly where its last slot ends
  double rnr_exhaust = 0;        // probability that a QP's last SEND (side 0) finds no receive
  double late_recv = 0.5;        // probability that a failing QP side's last spare receive is posted late
  uint64_t max_total_bytes = 48ull << 20;  // cap on payload bytes of a plan
  // Hard cases, each off by default (all on in cr_hard and in the nightly regression):
  double per_qp_mtu = 0;     // probability that a QP draws its own path MTU from `mtus`
  double iova_shift = 0;     // probability that a host's MRs use I/O virtual addresses != physical
  double split_mrs = 0;      // probability that a host registers sources and destinations as two
                             // MRs with different access rights
  double fence_reuse = 0;    // probability that a READ's target is sent on by a later fenced
                             // WRITE or SEND of the same QP (needs IBA fence semantics)
  // (PCIe and link impairments are EnvConfig knobs: pcie_random, pause_storm)
  // Wraps, drawn per plan from their own random stream (plans without them are unchanged):
  double psn_wrap = 0.1;   // probability that every QP starts its PSNs (both directions) so close
                           // below 2^24 that they wrap during its traffic, often inside a message
  double ring_wrap = 0.1;  // probability that every QP gets 2- or 4-entry SQ and RQ rings, so ring
                           // indices wrap many times (the CQs, sized by the rings, wrap too)
  // Host-driven ERR, drawn from its own random stream: the probability that host 0 moves a QP
  // (one that fails for no other reason) to ERR while its WRs are in flight. Such a QP carries
  // host 0's traffic only: host 1's requests to a QP in ERR are dropped and, until the
  // retransmission timer exists, would never complete.
  double host_err = 0;
  // QP resets, drawn from their own random stream: the probability that both hosts reset a
  // connection (one that fails for no other reason) while its WRs are in flight, then connect it
  // again with new PSNs and go on with new WRs; after each reset the connection is reset once
  // more with probability qp_reset_again, up to max_qp_resets times.
  double qp_reset = 0;
  double qp_reset_again = 0.3;
  uint32_t max_qp_resets = 3;
  std::array<uint32_t, size_t(ResetHow::kCount)> reset_how_weight = {2, 1, 1};
};

struct WrPlan {
  WrOpcode op = WrOpcode::Write;
  uint32_t len = 0;
  SizeClass cls = SizeClass::Small;
  uint64_t local_off = 0;   // offset in this host's data area
  uint64_t remote_off = 0;  // offset in the peer's data area (WRITE, READ)
  uint32_t imm = 0;
  bool signaled = true;
  bool fence = false;       // WQE_FLAG_FENCE
  int32_t reuse = -1;       // >= 0: the source is the target of this QP side's READ #reuse
  BadKind bad = BadKind::None;
};

struct RecvPlan {
  uint64_t off = 0;  // offset in this host's data area
  uint32_t len = 0;
  bool late = false;  // posted once the QP's side 0 has posted everything (and failed)
};

struct SidePlan {
  std::vector<WrPlan> send;
  std::vector<RecvPlan> recv;
};

struct QpPlan {
  SidePlan side[2];
  uint32_t sq_depth = 8, rq_depth = 8;
  uint8_t rnr_retry = 7;  // 0 when a side may exhaust the peer's receives (no RNR retry yet)
  uint8_t access[2] = {kAccessRemoteWrite | kAccessRemoteRead, kAccessRemoteWrite | kAccessRemoteRead};  // QP access flags per host
  bool bad_side0 = false;      // side 0's last WR is bad
  bool exhaust_side0 = false;  // side 0's last receive-consuming message finds no receive
  uint32_t mtu = 1024;         // path MTU of this QP (both ends)
  bool host_err = false;       // host 0 moves the QP to ERR during its traffic (Knobs::host_err):
  uint32_t host_err_after = 0; // once it has posted this many of its send WRs,
  uint32_t host_err_delay = 0; // and this many cycles more
  bool psn_set = false;        // psn[] chosen by the plan (psn_wrap), else random at setup
  uint32_t psn[2] = {0, 0};    // first request PSN of each side (the peer's expected PSN)
  // Knobs::qp_reset. A connection's incarnations are plan QPs of their own (their own WRs,
  // receives, destination slots and PSNs): `next` carries the connection once both hosts have
  // reset this one and connected it again; `prev` is the one this QP follows (-1: a QP set up
  // before the traffic).
  int32_t next = -1, prev = -1;
  uint32_t incarnation = 0;         // resets of the connection before this QP
  uint32_t reset_after[2] = {0, 0}; // the reset comes once each side has posted this many of its
  uint32_t reset_delay = 0;         // send WRs, and this many cycles more;
  uint8_t reset_first = 0;          // this host resets its end first,
  uint32_t reset_gap = 0;           // the other this many cycles later (0: both commands at once)
  ResetHow reset_how[2] = {ResetHow::Modify, ResetHow::Modify};  // how each host resets its end
};

struct TrafficPlan {
  uint32_t mtu = 1024;
  Doorbell doorbell = Doorbell::Batched;
  uint32_t max_batch = 8;
  bool whole_batches = false;  // ring_wrap: a batch is posted only when the ring has room for all
  bool full_rate = false;      // Knobs::full_rate
                               // of it, so batches run past the ring end
  std::vector<QpPlan> qps;
  uint64_t src_bytes[2] = {0, 0};   // source part of each host's data area
  uint64_t area_bytes[2] = {0, 0};  // whole data area (src + gap + dst)
  uint64_t total_payload = 0;
  bool split[2] = {false, false};       // sources and destinations are separate MRs
  unsigned src_access[2] = {0, 0};      // their access rights (split only)
  unsigned dst_access[2] = {0, 0};
  uint64_t iova_delta[2] = {0, 0};      // I/O virtual address = physical + delta (mod 2^64)
  uint64_t send_wrs = 0, recv_wrs = 0;
  std::string summary() const;      // one line: QPs, MTU, WRs, bytes, doorbell pattern
};

// Draws a plan. Deterministic for a given rng state and knobs.
TrafficPlan make_traffic_plan(const Knobs& k, uvm::Rng& rng);

// Message length for a size class at this MTU (drawn where the class is a range).
uint32_t draw_size(SizeClass c, uint32_t mtu, const Knobs& k, uvm::Rng& rng);
// Size class of a length (for coverage of lengths not drawn by class).
SizeClass classify_size(uint64_t len, uint32_t mtu, const Knobs& k);

// What the NIC setup produced for one host: data area address, MR key, PD, QPNs.
struct HostLayout {
  uint64_t area = 0;   // physical address of the data area
  uint64_t iova = 0;   // its I/O virtual address (what WRs carry; area + the plan's delta)
  uint32_t key = 0;    // MR over the whole area (lkey = rkey), or over the sources when split
  uint32_t dst_key = 0;  // MR over the destinations (gap and slots); = key unless split
  uint32_t stale_key = 0;  // key of an MR that was deregistered before `key` was registered
  uint32_t pd = 0;
  uint64_t alien = 0;      // a small region registered in another protection domain
  uint32_t alien_key = 0;  // its MR (never usable by the QPs)
  uint32_t alien_pd = 0;
  // Per plan QP, the QPN the model and the scoreboard know it by: the NIC's for the QPs set up
  // before the traffic; for a later incarnation of a reset connection (QpPlan::prev), one no NIC
  // QP has, incarnation_qpn() (its NIC QPN is known once it is connected, HostAgent::nic_qpn).
  std::vector<uint32_t> qpn;
};

// The QPN the model knows incarnation n > 0 of a connection by, from its first incarnation's
// NIC QPN (24 bits): "QP 0x5 after its second reset" is 0x2000005.
constexpr uint32_t incarnation_qpn(uint32_t first_qpn, uint32_t n) { return (n << 24) | (first_qpn & 0xFFFFFF); }

// An invalid key for bad-WR classes (a key the MR table never hands out for this host).
constexpr uint32_t kBogusKeyXor = 0x5A5A5A00u;
// Size of the other-PD region, and the longest WR that uses it.
constexpr uint64_t kAlienBytes = 4096;

// Send WR `i` of QP q posted by host h, as both the host library and the model see it.
SendWr make_send_wr(const TrafficPlan& p, const HostLayout (&hl)[2], uint32_t h, uint32_t q, size_t i);
RecvWr make_recv_wr(const TrafficPlan& p, const HostLayout (&hl)[2], uint32_t h, uint32_t q, size_t i);
uint64_t send_wr_id(uint32_t q, size_t i);
uint64_t recv_wr_id(uint32_t q, size_t i);

// The reference-model workload: both hosts' data areas (buffer 0) and other-PD regions
// (buffer 1) with their initial contents.
Workload make_workload(const TrafficPlan& p, const HostLayout (&hl)[2], const std::vector<uint8_t> (&init)[2],
                       const std::vector<uint8_t> (&alien_init)[2]);

}  // namespace srnic::verif::env
