// Workload description of the srnic-sim runner: the run options, the per-message plan (sizes,
// buffer slots, in-flight limit) and the reference-model workload built from them. Independent
// of Verilator, so it is unit-tested on its own.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "srnic/sim/eth_mac.hpp"
#include "srnic/sim/pcie_bfm.hpp"
#include "srnic/verif/ref_model.hpp"

namespace srnic::sim {

enum class Op { Write, Read, Send };
enum class WireMode { Std, Ext };

// QPs a run can use on each NIC: srnic_core's NUM_QPS (16384) minus QPN 0 and 1, which IB
// reserves for its special QPs (sw::DeviceCaps::first_qpn).
constexpr uint32_t kUsableQps = 16384 - 2;

const char* to_string(Op op);
const char* to_string(WireMode m);

// Every option of srnic-sim (see workload_cli.hpp for the command line).
struct RunConfig {
  Op op = Op::Write;
  uint64_t size = 65536;   // message size in bytes (0 .. 1 GiB)
  uint32_t qps = 1;        // connected QP pairs (1 .. kUsableQps)
  uint64_t iters = 100;    // messages per QP (per host with bidir; the planned bound with duration)
  uint32_t mtu = 4096;     // path MTU in payload bytes
  WireMode mode = WireMode::Std;
  double loss = 0;         // link frame loss probability, both directions
  // Link impairments of the frames host 0 ([0]) and host 1 ([1]) send: --loss H:P, --burst-loss,
  // --reorder, --reorder-delay, --dup, --dup-gap, --jitter, --corrupt (see Impairments). A
  // direction's own loss replaces `loss` for it.
  std::array<Impairments, 2> impair;
  std::vector<DropRule> drop;  // --drop: directed drops (DropRule text form)
  uint64_t seed = 1;
  bool latency = false;    // ping-pong latency instead of bandwidth
  bool mixed = false;      // random sizes per message
  std::string pcap;        // pcap of both directions
  std::string trace;       // FST waveform (debug build only)
  double trace_from_us = 0; // first simulated time the waveform holds
  bool json = false;
  double clock_mhz = 300;
  double pcie_latency_ns = 1100;
  uint32_t pcie_tags = 64;     // PCIe reads in flight at once (tags): 64 UltraScale, 256 UltraScale+ (Alveo)
  double link_delay_ns = 100;
  uint32_t timeout = 8;        // QP local ACK timeout attribute: 4.096 us * 2^timeout (0: none)
  uint32_t retry_cnt = 7;      // QP retry_cnt (7: no limit)
  int64_t window = -1;         // in-flight cap per QP in packets, REG_TX_WINDOW (-1: the NIC's default)
  uint64_t max_cycles = 0;     // 0: no limit
  uint32_t tx_depth = 128;     // outstanding WRs per QP
  uint32_t signal_every = 1;   // every Nth WR (and the last) is signaled
  uint32_t post_batch = 1;     // refill a QP's send queue once this many slots are free
  double watchdog_us = 0;      // 0: automatic (grows with the message size)
  uint64_t mem_mib = 64;       // data-buffer budget per host
  double max_ram_gib = 16;     // refuse a run whose estimated memory use is above this
  // perftest's modes: -b both hosts post requests on every QP (bidirectional); -D post for this
  // much simulated time instead of a number of messages (iters is then the planned bound, see
  // duration_iters); -l post the WRs in lists of this many, one doorbell each (0: refill a QP
  // in one list, see post_batch); --report_gbits Gb/s instead of MB/s (2^20 bytes/s); -a every
  // size of perftest_sizes() (handled by srnic-sim's main, one run per size).
  bool bidir = false;
  double duration_us = 0;
  uint32_t post_list = 0;
  bool report_gbits = false;
  bool all_sizes = false;
  // More of perftest's options: --write_with_imm / --send_with_imm (the WRs carry a 32-bit
  // immediate, each message its own, checked at the receive completion); -o READs in flight per
  // QP (0: no limit but tx_depth and the NIC's READ contexts); -N no BW peak; --report_both
  // (with -b) a row per direction too; --output only one number per row; --run_infinitely
  // (with -D) `periods` rows of period_us each: duration_us is then periods x period_us.
  bool imm = false;
  uint32_t outs = 0;
  bool no_peak = false;
  bool report_both = false;
  enum class Output { Full, Bandwidth, MessageRate, Latency };
  Output output = Output::Full;
  double period_us = 0;
  uint32_t periods = 1;
  bool yes = false;  // --yes: run even when the wall-time estimate is above kMaxWallS
  uint32_t poll_cycles = 4;    // host software runs every N core cycles
  bool protocol_check = true;  // live RoCE protocol checker on the wire
  bool weir = false;           // host 0 posts and polls its sends through sw::Weir (doorbell pacing)
  // PCIe root complex: let posted writes of different AXI IDs (Ids) or any posted writes (All)
  // pass each other on the way to host memory.
  enum class WriteReorder { Off, Ids, All };
  WriteReorder pcie_reorder = WriteReorder::Off;
  // --pcie-error: DMA bursts the PCIe model of host pcie_error_host answers with SLVERR or
  // DECERR (PcieErrorRule text form); the NIC treats any of them as fatal.
  std::vector<PcieErrorRule> pcie_errors;
  uint32_t pcie_error_host = 0;
  // Test option: a harness-level fault on message inject_at of QP 0, to show the data checks
  // catch it. Corrupt: one destination byte flipped after placement; Lost: the destination
  // restored to its earlier contents before the check (as if never placed); Misplace: the
  // message posted with its destination 64 bytes off; Imm: the message posted with an immediate
  // other than its own (--write_with_imm, --send_with_imm).
  enum class Fault { None, Corrupt, Lost, Misplace, Imm };
  Fault fault = Fault::None;
  uint64_t inject_at = 0;

  // Watchdog in simulated ns: the configured value, or 200 us plus the message time at 10 Gb/s
  // (plus four local ACK timeouts when the link is impaired).
  double watchdog_ns() const;
};

// The run's link: delay, loss, impairments and drop rules (World replaces the seed per link).
LinkConfig link_config(const RunConfig& cfg);
// True when the run's link may lose, corrupt, reorder, duplicate or delay a frame.
bool impairs(const RunConfig& cfg);

const char* to_string(RunConfig::Fault f);
const char* to_string(RunConfig::WriteReorder r);

// True when both hosts post requests: ping-pong latency (WRITE, SEND) and bidirectional runs.
inline bool both_send(const RunConfig& cfg) { return cfg.bidir || (cfg.latency && cfg.op != Op::Read); }
// True when every message consumes a receive WR at its responder: SEND, SEND and WRITE with
// immediate.
inline bool has_recv(const RunConfig& cfg) { return cfg.op == Op::Send || (cfg.op == Op::Write && cfg.imm); }
// The NIC's outstanding READ contexts (srnic_rd_ctx ENTRIES), shared by all QPs: the most -o can ask for.
constexpr uint32_t kMaxOutstandingReads = 64;

// perftest's -a sizes: 2, 4, ..., 2^23 bytes.
std::vector<uint64_t> perftest_sizes();

// Messages per QP a -D run plans for: what one direction of the 100GE link could carry in the
// duration (the smallest possible message of the run, back to back) plus a full send queue.
// The run stops posting after the duration, so it never uses more.
uint64_t duration_iters(const RunConfig& cfg);

// What a run will hold in memory, estimated before anything is allocated.
struct MemoryEstimate {
  uint64_t regions_per_host = 0;  // data regions on each host (QPs x 1, or x 2 when both send)
  uint64_t min_slots = 1;         // slots a region needs at least (ping-pong: 2)
  uint64_t slot_bytes = 0;        // the largest message the run can post
  uint64_t buffer_bytes = 0;      // data buffers per host (regions x slots x slot + guards)
  uint64_t messages = 0;          // work requests planned (sends and receives, both hosts)
  double ram_bytes = 0;           // the whole process, about
};
MemoryEstimate estimate_memory(const RunConfig& cfg);
// Empty when the run fits --mem-mib and --max-ram-gib, else a one-line reason with the option
// to change.
std::string check_memory(const RunConfig& cfg);

// How long a run will take, estimated before it starts: simulated time (set-up plus traffic)
// at the simulator's typical speed. The traffic is the duration with -D; with -n a lower bound
// (the 100GE line rate and the NIC's message rates); with -a the sum over the sizes.
constexpr double kTypicalCyclesPerS = 200e3;  // bench.md: 200-260K core cycles/s on an idle machine
constexpr double kMaxWallS = 600;             // above this the run needs --yes
struct WallEstimate {
  double sim_us = 0;      // simulated time, set-up included
  double wall_s = 0;      // sim_us at kTypicalCyclesPerS
  bool lower_bound = false;  // -n bandwidth runs: at least this long
};
WallEstimate estimate_wall(const RunConfig& cfg);
// Empty when the estimate is within kMaxWallS or --yes was given, else the one-line refusal.
std::string check_wall(const RunConfig& cfg);
// "2.1 h", "3.4 min", "12 s", "1.5 s", "350 ms", "80 us".
std::string human_seconds(double s);

// Message sizes, buffer slots and limits derived from a RunConfig.
struct Plan {
  std::vector<std::vector<uint32_t>> sizes;  // [qp][message] payload bytes
  uint64_t max_size = 0;    // largest message
  uint64_t stride = 0;      // distance between the slots of a region (= max_size)
  uint32_t slots = 1;       // message i of a QP uses slot i % slots
  uint64_t region = 0;      // registered bytes per QP region (slots * stride, at least 64)
  uint64_t guard = 4096;    // unregistered bytes after each region that must stay unchanged
  uint32_t inflight = 1;    // outstanding WRs per QP (<= tx_depth, <= slots)
  uint32_t sq_entries = 2;  // SQ/RQ ring size (power of two >= inflight)
  uint64_t total_bytes = 0; // payload bytes of all messages
  uint64_t messages = 0;
  uint64_t expected_completions = 0;

  uint64_t offset(uint64_t msg) const { return (msg % slots) * stride; }
};

// The mixed-size menu for one message: 0, 1, MTU-1, MTU, MTU+1 or uniform in 0..size.
uint32_t mixed_size(uint64_t random, uint64_t size, uint32_t mtu, uint64_t random2);

Plan make_plan(const RunConfig& cfg);

// Fills dst with the seeded byte stream `stream` of `seed` (splitmix64, 8 bytes per draw).
void fill_random(uint64_t seed, uint64_t stream, uint8_t* dst, size_t n);

// Every message carries its own bytes: a hash of (seed, sending host, QP, iteration, offset),
// written into its source slot by the host just before the message is posted (for READ into
// the responder's source slot). A message that is never placed, or placed into another slot,
// leaves bytes that differ from its own. `host` is the host that posts the WR.
struct MessageRef {
  uint32_t host = 0;
  uint32_t qp = 0;
  uint64_t iter = 0;
};
class MessageBytes {
 public:
  MessageBytes(const RunConfig& cfg, const Plan& plan);
  // Bytes [offset, offset + n) of message m; len is the message length (latency WRITE: its last
  // byte is the ping-pong marker iter % slots + 1, which the receiver polls).
  void fill(const MessageRef& m, uint64_t len, uint64_t offset, uint8_t* dst, size_t n) const;
  // Offset of the first byte of [offset, offset + n) of message m that differs from `got`, or -1.
  int64_t first_difference(const MessageRef& m, uint64_t len, uint64_t offset, const uint8_t* got,
                           size_t n) const;
  // The HostStore tag of a message and back (host: 1 bit, QP: 23 bits, iteration: 40 bits).
  static uint64_t tag(const MessageRef& m) {
    return (uint64_t(m.host) << 63) | (uint64_t(m.qp) << 40) | (m.iter & ((uint64_t(1) << 40) - 1));
  }
  static MessageRef from_tag(uint64_t t) {
    return MessageRef{uint32_t(t >> 63), uint32_t((t >> 40) & 0x7FFFFF), t & ((uint64_t(1) << 40) - 1)};
  }
  // The immediate of message m (--write_with_imm, --send_with_imm): its own 32 bits, as its bytes.
  uint32_t imm(const MessageRef& m) const;

 private:
  uint64_t key(const MessageRef& m) const;
  uint8_t marker(const MessageRef& m) const { return marker_slots_ ? uint8_t(m.iter % marker_slots_ + 1) : 0; }
  uint64_t seed_;
  uint32_t marker_slots_;  // latency WRITE: slots of the marker cycle; 0: no marker
};

// Offset of message i's destination inside its QP's destination region (ping-pong latency
// runs place every message at offset 0, where the receiver polls).
inline uint64_t dst_offset(const RunConfig& cfg, const Plan& plan, uint64_t i) {
  return cfg.latency && cfg.op != Op::Read ? 0 : plan.offset(i);
}
// Destination slots per region.
inline uint32_t dst_slots(const RunConfig& cfg, const Plan& plan) {
  return cfg.latency && cfg.op != Op::Read ? 1 : plan.slots;
}

// Addresses and keys of one side of one QP, as set up on the NIC.
struct QpSide {
  uint32_t qpn = 0;
  uint32_t pd = 0;
  uint64_t src = 0, dst = 0;          // region addresses (0 if this side has none)
  uint32_t src_key = 0, dst_key = 0;  // MR keys of those regions
};

struct RegionRef {
  uint32_t host;
  uint32_t qp;
  bool src;  // source (true) or destination region
};
// The regions a run uses, in a fixed order: per QP, host 0 then host 1, src then dst.
std::vector<RegionRef> regions(const RunConfig& cfg);

// Builds the reference-model workload: per QP q, host 0 side a[q] and host 1 side b[q]. Buffer
// contents come from `init` (one vector per region, in regions() order; a buffer may extend past
// the region, e.g. a guard). Regions sharing a key form one MR spanning their buffers, so such
// buffers must be contiguous. Send WRs are signaled as signaled() says; each carries the host
// store of its message's bytes into its source slot (MessageBytes). `posted`, if given, limits
// the send WRs of host h's QP q to the first posted[h][q] (a -D run that stopped posting; the
// peer's receives follow); else every QP posts cfg.iters.
verif::Workload make_verif_workload(const RunConfig& cfg, const Plan& plan,
                                    const std::vector<QpSide>& a, const std::vector<QpSide>& b,
                                    const std::vector<std::vector<uint8_t>>& init,
                                    const std::array<std::vector<uint64_t>, 2>* posted = nullptr);

// Send WR i of QP q as the reference model sees it (host `host`, side `me`, towards `peer`),
// with the store of its bytes into its source slot; the runner makes the same store and posts
// the same WR through the host library.
verif::SendWr make_send(const RunConfig& cfg, const Plan& plan, uint32_t host, const QpSide& me,
                        const QpSide& peer, uint32_t q, uint64_t i);

// Whether message i of a QP is posted signaled (every signal_every-th and the last one).
inline bool signaled(const RunConfig& cfg, uint64_t i) {
  return (i + 1) % cfg.signal_every == 0 || i + 1 == cfg.iters;
}
// Signaled WRs among the first n of a QP (n <= iters).
inline uint64_t signaled_count(const RunConfig& cfg, uint64_t n) {
  return n / cfg.signal_every + (n == cfg.iters && n % cfg.signal_every ? 1 : 0);
}

// wr_id of message i of QP q (requester side) and of receive i.
inline uint64_t send_wr_id(uint32_t q, uint64_t i) { return (uint64_t(q) << 40) | i; }
inline uint64_t recv_wr_id(uint32_t q, uint64_t i) { return (uint64_t(1) << 63) | (uint64_t(q) << 40) | i; }

// 100GE goodput limit in Gb/s for messages of `size` bytes at path MTU `mtu`: payload over
// payload plus per-packet Ethernet/IPv4/UDP/BTH (+RETH on the first packet of a WRITE or the
// READ request), ICRC, FCS, preamble and IFG.
double goodput_limit_gbps(Op op, uint64_t size, uint32_t mtu);
// Bytes on the 100GE wire (framing included) of the data frames of one message.
uint64_t wire_bytes(Op op, uint64_t size, uint32_t mtu);
// The longest one-way cable delay in ns the NIC's RX buffer keeps lossless (pause headroom,
// srnic::sim::lossless_cable_ns) for frames of c.mtu payload bytes at c.clock_mhz.
double max_lossless_cable_ns(const RunConfig& c);

}  // namespace srnic::sim
