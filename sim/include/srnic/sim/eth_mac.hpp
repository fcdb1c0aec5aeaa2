// Ethernet model: Link (a full-duplex cable with propagation delay, seeded network impairments
// and an optional pcap tap) and EthPort/EthMac<Top> (a store-and-forward 100G MAC on the NIC's
// m_axis_tx_* / s_axis_rx_* streams).
//
// Two NICs back to back share one Link: EthMac on side 0 for NIC A, side 1 for NIC B. A frame
// sent from side s is delivered to side 1 - s. Software endpoints may use Link::send/receive
// directly on a side instead of an EthMac.
//
// Impairments (Impairments, per direction: what happens to the frames one side sends): random
// and Gilbert-Elliott burst loss, reordering, duplication, delay jitter, bit corruption, and
// directed drop rules on RoCEv2 BTH fields (DropRule). Every decision comes from the link seed,
// each impairment from its own stream per direction, drawn once per frame whether the frame
// survives or not: the decisions about the n-th frame of a direction depend on n and the seed
// only, and enabling one impairment does not change another's.
//
// Cycle protocol: as PcieBfm (see pcie_bfm.hpp): sample(top, c) before the rising edge that ends
// cycle c, drive(top, c + 1) after it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "srnic/sim/common.hpp"
#include "srnic/sim/pcap_writer.hpp"

namespace srnic::sim {

struct Frame {
  std::vector<uint8_t> bytes;  // destination MAC first; no preamble, no FCS
  double t_sent_ns = 0;        // time the last bit left the sender
  bool bad_fcs = false;        // delivered with tuser = 1 on the last beat
};

// Gilbert-Elliott burst loss: a two-state Markov chain (good, bad) stepped once per frame of its
// direction. A frame is lost with probability loss_good in the good state and loss_bad in the
// bad state; after it the chain moves good -> bad with p_good_bad and bad -> good with
// p_bad_good. The chain starts good. Off while p_good_bad and loss_good are 0.
//
// From a mean loss rate r and a mean burst length b (frames lost in a row), the simple Gilbert
// model (loss_good 0, loss_bad 1, what from_rate_burst builds): every bad-state frame is lost, a
// stay in the bad state lasts 1 / p_bad_good frames on average, and the chain is bad a fraction
// p_good_bad / (p_good_bad + p_bad_good) of the frames, so
//   p_bad_good = 1 / b,   p_good_bad = r / (b (1 - r)),
// which needs b >= 1, 0 <= r < 1 and r <= b (1 - r) (p_good_bad <= 1).
struct BurstLoss {
  double p_good_bad = 0;
  double p_bad_good = 1;
  double loss_good = 0;
  double loss_bad = 1;
  bool enabled() const { return p_good_bad > 0 || loss_good > 0; }
  // Stationary loss rate of the chain.
  double mean_loss() const;
  // Mean number of frames lost in a row (a run of losses), from the stationary chain.
  double mean_burst() const;
  // The simple Gilbert model for mean loss rate `rate` and mean burst `burst` frames; false
  // (why set, out unchanged) when the pair is out of range.
  static bool from_rate_burst(double rate, double burst, BurstLoss& out, std::string* why = nullptr);
};

// What the link does to the frames of one direction (the frames one side sends). The same
// frame may be hit by several impairments: a lost frame is lost (it is not also reordered,
// duplicated or corrupted); a surviving frame may be corrupted, delayed by jitter, held back
// and duplicated (both copies carry the same bytes).
struct Impairments {
  double loss = 0;               // random loss: each frame lost with this probability
  BurstLoss burst;               // Gilbert-Elliott burst loss
  // Reordering: a frame is held back with probability `reorder` and arrives reorder_delay_ns
  // later than it would have, so frames sent within that time overtake it. Frames not held
  // back keep their order among themselves.
  double reorder = 0;
  double reorder_delay_ns = 1000;
  double dup = 0;                // probability that a frame arrives twice
  double dup_gap_ns = 0;         // the copy arrives this long after the original
  // Extra delay per frame, uniform in [0, jitter_ns). Jitter alone never reorders: a frame
  // arrives no earlier than the frame sent before it (not held back) in its direction.
  double jitter_ns = 0;
  // Corruption: with this probability one random bit of the frame after the Ethernet header
  // (within the IPv4 packet when the frame carries one, so the ICRC covers it) is flipped. The
  // frame is delivered with a good FCS (Frame::bad_fcs stays false): the model is a corruption
  // the Ethernet FCS does not catch (e.g. inside a switch, which recomputes the FCS), caught only
  // by the receiver's ICRC check. A frame with a bad FCS would be dropped by the first switch.
  double corrupt = 0;
  bool any() const {
    return loss > 0 || burst.enabled() || reorder > 0 || dup > 0 || jitter_ns > 0 || corrupt > 0;
  }
};

// BTH fields of a RoCEv2 frame: Ethernet II (no VLAN tag), IPv4 (any IHL) carrying UDP to port
// 4791, BTH (opcode byte 0, destination QP bytes 5..7, PSN bytes 9..11, big endian).
struct RoceFields {
  bool ok = false;  // false: not a RoCEv2 frame (or too short)
  uint8_t opcode = 0;
  uint32_t qpn = 0;
  uint32_t psn = 0;
};
RoceFields parse_roce(const uint8_t* frame, size_t len);
// Name of an RC BTH opcode ("READ_RESPONSE_MIDDLE"), or nullptr.
const char* roce_opcode_name(uint8_t opcode);

// Directed drop rule (tests): loses the RoCEv2 frames that match every given field. Non-RoCE
// frames never match. A rule counts its matches per direction; with nth it drops only the nth
// match, with every each every-th match (every, 2 every, ...), with neither every match.
// Retransmitted frames match again: psn=P,nth=1 loses only the first transmission of PSN P.
struct DropRule {
  int dir = -1;                 // sending side 0 or 1; -1: both, each counted on its own
  int op_lo = 0, op_hi = 255;   // BTH opcode range (inclusive)
  int64_t qpn = -1;             // destination QP; -1: any
  uint32_t psn_lo = 0, psn_hi = 0xFFFFFF;  // PSN range (inclusive)
  uint64_t nth = 0;
  uint64_t every = 0;
  bool matches(int from_side, const RoceFields& r) const {
    return r.ok && (dir < 0 || dir == from_side) && r.opcode >= op_lo && r.opcode <= op_hi &&
           (qpn < 0 || r.qpn == uint64_t(qpn)) && r.psn >= psn_lo && r.psn <= psn_hi;
  }
  // Whether the k-th match (1-based) is dropped.
  bool drops(uint64_t k) const { return nth ? k == nth : every ? k % every == 0 : true; }

  // Text form: comma-separated KEY=VALUE, at least one of them:
  //   dir=0|1           frames sent by side (host) 0 or 1 (default: both)
  //   op=NAME|N|N-M     BTH opcode: a name (roce_opcode_name, case-insensitive, optional RDMA_
  //                     prefix; groups SEND, WRITE, READ_RESPONSE), a number or a range
  //   qpn=N             destination QP
  //   psn=N|N-M         PSN or PSN range
  //   nth=N             drop only the N-th match (N >= 1)
  //   every=N           drop every N-th match (N >= 1)
  // Numbers are decimal or 0x hex. E.g. "dir=1,op=READ_RESPONSE_MIDDLE,qpn=5,nth=3".
  // False with a one-line reason in *why on bad text.
  static bool parse(const std::string& text, DropRule& out, std::string* why = nullptr);
  std::string to_string() const;  // canonical text form (parses back to the same rule)
};

struct LinkConfig {
  double delay_ns = 100;    // propagation delay, each direction
  double loss = 0;          // random loss probability (0..1), both directions
  uint64_t seed = 1;        // every impairment stream
  bool pcap_lost = false;   // also write dropped frames to the pcap
  // Pause storm: besides the pause the NICs request, the far end (a switch under congestion)
  // holds each side's transmitter paused for pause_storm_duty of every pause_storm_period_ns,
  // each side at its own phase drawn from seed. 0 = off.
  double pause_storm_period_ns = 0;
  double pause_storm_duty = 0;
  // Impairments of the frames sent by side 0 ([0]) and side 1 ([1]). A direction's loss, when
  // nonzero, replaces `loss` above for that direction (see direction()).
  std::array<Impairments, 2> impair;
  std::vector<DropRule> drop_rules;  // directed drops (Link::set_drop_rules)

  // Impairments in effect for the frames sent by from_side.
  Impairments direction(int from_side) const {
    Impairments im = impair[from_side & 1];
    if (im.loss == 0) im.loss = loss;
    return im;
  }
  // Sets both directions.
  void impair_both(const Impairments& im) { impair[0] = impair[1] = im; }
};

// Per direction: what the link did to the frames one side sent. Each lost frame is counted
// under one cause: random before burst before filter (when several fire on the same frame).
struct LinkStats {
  uint64_t frames = 0, bytes = 0;  // handed to the link (including lost ones)
  uint64_t lost = 0;               // lost_random + lost_burst + lost_filter
  uint64_t lost_random = 0;        // Impairments::loss
  uint64_t lost_burst = 0;         // Impairments::burst
  uint64_t lost_filter = 0;        // drop rules and the drop filter function
  uint64_t reordered = 0;          // held back by reorder_delay_ns
  uint64_t duplicated = 0;         // delivered twice
  uint64_t corrupted = 0;          // one bit flipped
  uint64_t jittered = 0;           // arrived later than delay_ns because of jitter
};

// One frame the link impaired, as decided when it was sent (Link::set_impair_monitor; one line
// of the pcap side file).
struct ImpairEvent {
  enum Action : uint32_t {
    kLostRandom = 1 << 0,
    kLostBurst = 1 << 1,
    kLostFilter = 1 << 2,
    kReordered = 1 << 3,   // held back by reorder_delay_ns
    kDuplicated = 1 << 4,  // the original of a frame delivered twice
    kCopy = 1 << 5,        // the second delivery of a duplicated frame
    kCorrupted = 1 << 6,
    kJittered = 1 << 7,
  };
  static constexpr uint32_t kLost = kLostRandom | kLostBurst | kLostFilter;
  static const char* action_name(uint32_t one_action);  // "lost_random", ..., "jitter"

  int from = 0;            // sending side
  uint64_t index = 0;      // the frame's place among the frames `from` sent (0-based)
  uint32_t actions = 0;    // Action bits
  double t_sent_ns = 0;    // its pcap time stamp: last bit left the sender (the copy: + dup_gap_ns)
  double t_arrive_ns = -1; // fully arrived at the receiver; -1 when lost
  int64_t bit = -1;        // kCorrupted: flipped bit, byte * 8 + bit (bit 0 = least significant)
  int rule = -1;           // kLostFilter: index of the drop rule; -1: the drop filter function
  double jitter_ns = 0;    // kJittered: extra delay drawn for this frame
  RoceFields roce;
};

class Link {
 public:
  // pcap (optional) must outlive the Link; records are written in timestamp order. With
  // impairments configured and a pcap, the Link also writes the side file <pcap>.impair.csv
  // (kNotesSuffix): a header line, then one line per impaired frame, in pcap order:
  //   frame,sent,dir,t_sent_ns,t_arrive_ns,action,detail,opcode,qpn,psn
  // frame: pcap record number (1-based, Wireshark's frame.number), empty when the frame is not
  // in the pcap (lost without pcap_lost); sent: ImpairEvent::index; dir: "0>1" or "1>0";
  // t_arrive_ns: empty when lost; action: '+'-joined ImpairEvent::action_name()s; detail:
  // space-separated bit=B rule=R jitter_ns=J; opcode (hex), qpn, psn: empty for non-RoCE frames.
  static constexpr const char* kNotesSuffix = ".impair.csv";
  explicit Link(const LinkConfig& cfg = {}, PcapWriter* pcap = nullptr);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Frame leaving side from_side (0 or 1); f.t_sent_ns = time its last bit left. Arrives at
  // the other side at f.t_sent_ns + delay_ns unless lost or delayed by an impairment. Senders
  // must send in t_sent order.
  void send(int from_side, Frame&& f);
  // Moves the next frame that has fully arrived at `side` by now_ns into out (recycling out's
  // old buffer); false if none. Frames come in arrival order, frames arriving at the same time
  // in the order they were sent. Also calls advance(side, now_ns).
  bool receive(int side, double now_ns, Frame& out);
  // Declares that `side` has sent every frame with t_sent_ns <= now_ns (lets the pcap tap write
  // records in timestamp order). EthPort calls it every cycle.
  void advance(int side, double now_ns);
  // Empty buffer with spare capacity from the frame pool.
  std::vector<uint8_t> take_buffer();
  void recycle(std::vector<uint8_t>&& buf);
  // Writes every held-back pcap record (also done by the destructor).
  void flush_pcap();
  // Link-level flow control (IEEE 802.3x / 802.1Qbb style, what a lossless RoCE fabric
  // runs on): `side` asks the far end to stop (on) or resume (off) starting frames; the
  // request, sent at now_ns (EthPort: when its own wire has sent the pause frame), takes effect
  // delay_ns later at the far end. A frame already on the wire ends.
  void set_pause(int side, bool on, double now_ns);
  // True while `side` must not start a frame because the far end paused it.
  bool tx_paused(int side, double now_ns);
  uint64_t pause_requests(int side) const { return pause_reqs_[side & 1]; }
  // Directed loss: frames for which `f(from_side, frame)` returns true are lost (counted as
  // lost_filter, pcap'ed like any lost frame). Called for every frame sent. Empty function: none.
  void set_drop_filter(std::function<bool(int, const Frame&)> f) { drop_filter_ = std::move(f); }
  // Declarative directed loss (replaces cfg.drop_rules; match counts start again from 0).
  void set_drop_rules(std::vector<DropRule> rules);
  // Called with every frame the link impairs (and every duplicate copy) when it is sent.
  void set_impair_monitor(std::function<void(const ImpairEvent&)> m) { impair_mon_ = std::move(m); }

  const LinkStats& stats(int from_side) const { return stats_[from_side & 1]; }
  const LinkConfig& config() const { return cfg_; }
  size_t in_flight(int to_side) const { return q_[to_side & 1].size() + late_[to_side & 1].size(); }

 private:
  struct Held {
    double t;
    uint64_t order;
    std::vector<uint8_t> bytes;
    bool in_pcap;        // false: only a side-file line (a lost frame without pcap_lost)
    bool noted;          // ev is a side-file line
    ImpairEvent ev;
  };
  // A frame on its way to the receiving side, due at t; seq orders frames due at the same time.
  struct Arrival {
    Frame frame;
    double t = 0;
    uint64_t seq = 0;
  };
  // Impairment state of one direction (frames sent by one side).
  struct Dir {
    Impairments im;
    SplitMix64 loss, burst, reorder, dup, jitter, corrupt;  // one stream each
    bool bad = false;             // Gilbert-Elliott state
    double floor_ns = 0;          // arrival of the latest frame not held back
    std::vector<uint64_t> hits;   // matches per drop rule
  };
  void record(const Frame& f, bool in_pcap, const ImpairEvent* ev);
  void write_held(Held& h);
  void write_note(const Held& h);
  void open_notes();
  void write_ready_pcap();
  void deliver(int to, Frame&& f, double t, bool in_order);
  std::function<bool(int, const Frame&)> drop_filter_;
  std::function<void(const ImpairEvent&)> impair_mon_;

  LinkConfig cfg_;
  PcapWriter* pcap_;
  Dir dir_[2];                    // indexed by sending side
  Ring<Arrival> q_[2];            // indexed by receiving side: frames not held back, in order
  std::vector<Arrival> late_[2];  // held-back frames and duplicate copies, latest first
  uint64_t seq_[2] = {0, 0};
  LinkStats stats_[2];
  double now_[2] = {0, 0};
  std::vector<Held> held_;  // pcap records not yet known to be in order, sorted
  uint64_t held_order_ = 0;
  std::vector<std::vector<uint8_t>> pool_;
  struct PauseEv {
    double t;
    bool on;
  };
  Ring<PauseEv> pause_q_[2];   // requests issued by side i, in time order
  bool paused_by_[2] = {false, false};
  bool pause_last_[2] = {false, false};
  double storm_phase_ns_[2] = {0, 0};
  uint64_t pause_reqs_[2] = {0, 0};
};

// The longest one-way cable delay in ns for which a receiver whose buffer holds buf_beats
// 64-byte beats and asks its partner to pause above xoff_beats never runs out of buffer,
// whatever the traffic in either direction, when the longest frame is max_frame bytes (without
// FCS), the line runs at gbps and the NIC's clock period is clock_ns. What can still arrive
// once the threshold is crossed: the rest of the frame then arriving, frames for as long as this
// side's frame in progress, its pause frame and two cable delays take, and the partner's frame
// in progress. Worst-case buffer use per wire byte: 65-byte frames (two beats for 89 bytes on
// the wire with FCS, preamble and gap). 0 when even a zero-length cable is not covered.
double lossless_cable_ns(unsigned buf_beats, unsigned xoff_beats, unsigned max_frame, double gbps,
                         double clock_ns);

struct EthConfig {
  double rate_gbps = 100.0;
  unsigned max_frame = 9600;          // longest accepted frame, headers included, no FCS
  unsigned tx_fifo_bytes = 2 * 9600;  // tready low while the TX FIFO holds more than this
  bool pad_short = true;              // pad frames shorter than 60 bytes with zeros
};

struct EthStats {
  uint64_t tx_frames = 0, tx_bytes = 0, tx_wire_bytes = 0;  // sent on the wire
  uint64_t tx_oversize = 0, tx_aborted = 0;                  // dropped at the MAC
  double tx_busy_ns = 0;
  uint64_t rx_frames = 0, rx_bytes = 0;                      // delivered to the NIC
};

struct EthFromNic {
  bool tvalid = false, tlast = false, tuser = false;
  bool rx_pause = false;  // the NIC's RX buffer asks the far end to pause
  uint64_t tkeep = 0;
  uint8_t tdata[64] = {};
};

struct EthToNic {
  bool tready = true;
  bool rx_tvalid = false, rx_tlast = false, rx_tuser = false;
  uint64_t rx_tkeep = 0;
  uint8_t rx_tdata[64] = {};
};

class EthPort {
 public:
  using FrameMonitor = std::function<void(const Frame&)>;

  EthPort(Link& link, int side, const EthConfig& cfg = {}, Clock clock = {});

  void sample_pins(const EthFromNic& in, uint64_t cycle);
  const EthToNic& drive_pins(uint64_t cycle);

  // Wire time of a frame of len bytes (no FCS): padding, FCS, preamble/SFD and IFG included.
  double wire_ns(size_t len) const;
  // Fraction of elapsed_ns the TX wire was busy.
  double utilisation(double elapsed_ns) const {
    return elapsed_ns > 0 ? stats_.tx_busy_ns / elapsed_ns : 0.0;
  }
  // Called with each frame the MAC puts on the wire (t_sent_ns set), and with each frame as
  // its first beat is driven into the NIC.
  void set_tx_monitor(FrameMonitor m) { tx_mon_ = std::move(m); }
  void set_rx_monitor(FrameMonitor m) { rx_mon_ = std::move(m); }

  void set_violation_handler(ViolationHandler h) { viol_.set_handler(std::move(h)); }
  uint64_t violations() const { return viol_.count(); }
  const EthStats& stats() const { return stats_; }
  const EthConfig& config() const { return cfg_; }
  int side() const { return side_; }
  // Nothing queued or in transmission on TX and nothing being delivered on RX.
  bool idle() const { return !asm_active_ && txq_.empty() && !wire_busy_ && !rx_active_; }

 private:
  struct TxItem {
    Frame frame;
    double t_ready;
  };
  void drop_assembly();

  Link& link_;
  int side_;
  EthConfig cfg_;
  Clock clock_;
  double ns_per_byte_;
  ViolationSink viol_;
  EthStats stats_;
  double now_ = 0;
  EthToNic drv_;
  EthFromNic prev_;
  bool t_stall_ = false;

  // TX
  std::vector<uint8_t> asm_;
  bool asm_active_ = false, asm_abort_ = false;
  size_t asm_len_ = 0;
  uint64_t fifo_bytes_ = 0;
  Ring<TxItem> txq_;
  Frame onwire_;
  bool wire_busy_ = false;
  double wire_free_ = 0;
  bool pause_sent_ = false;   // the last pause state the NIC asked of the far end

  // RX
  Frame rx_;
  bool rx_active_ = false;
  size_t rx_off_ = 0;

  FrameMonitor tx_mon_, rx_mon_;
};

// EthPort bound to a top with Verilated port names: m_axis_tx_{tdata,tkeep,tlast,tuser,tvalid,
// tready}, s_axis_rx_{tdata,tkeep,tlast,tuser,tvalid} and rx_pause.
template <class Top>
class EthMac : public EthPort {
 public:
  using EthPort::EthPort;

  void sample(const Top& t, uint64_t cycle) {
    in_.tvalid = t.m_axis_tx_tvalid;
    if (in_.tvalid) wide_to_bytes(t.m_axis_tx_tdata, in_.tdata);
    in_.tkeep = t.m_axis_tx_tkeep;
    in_.tlast = t.m_axis_tx_tlast;
    in_.tuser = t.m_axis_tx_tuser;
    in_.rx_pause = t.rx_pause;
    sample_pins(in_, cycle);
  }

  void drive(Top& t, uint64_t cycle) {
    const EthToNic& d = drive_pins(cycle);
    t.m_axis_tx_tready = d.tready;
    t.s_axis_rx_tvalid = d.rx_tvalid;
    if (d.rx_tvalid) bytes_to_wide(d.rx_tdata, t.s_axis_rx_tdata);
    t.s_axis_rx_tkeep = d.rx_tkeep;
    t.s_axis_rx_tlast = d.rx_tlast;
    t.s_axis_rx_tuser = d.rx_tuser;
  }

 private:
  EthFromNic in_;
};

}  // namespace srnic::sim
