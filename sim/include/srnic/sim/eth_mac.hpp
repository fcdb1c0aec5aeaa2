// Ethernet model: Link (a full-duplex cable with propagation delay, seeded random loss and an
// optional pcap tap) and EthPort/EthMac<Top> (a store-and-forward 100G MAC on the NIC's
// m_axis_tx_* / s_axis_rx_* streams).
//
// Two NICs back to back share one Link: EthMac on side 0 for NIC A, side 1 for NIC B. A frame
// sent from side s is delivered to side 1 - s. Software endpoints may use Link::send/receive
// directly on a side instead of an EthMac.
//
// Cycle protocol: as PcieBfm (see pcie_bfm.hpp): sample(top, c) before the rising edge that ends
// cycle c, drive(top, c + 1) after it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "srnic/sim/common.hpp"
#include "srnic/sim/pcap_writer.hpp"

namespace srnic::sim {

struct Frame {
  std::vector<uint8_t> bytes;  // destination MAC first; no preamble, no FCS
  double t_sent_ns = 0;        // time the last bit left the sender
  bool bad_fcs = false;        // delivered with tuser = 1 on the last beat
};

struct LinkConfig {
  double delay_ns = 100;    // propagation delay, each direction
  double loss = 0;          // probability that a frame is dropped (0..1)
  uint64_t seed = 1;        // loss stream
  bool pcap_lost = false;   // also write dropped frames to the pcap
  // Pause storm: besides the pause the NICs request, the far end (a switch under congestion)
  // holds each side's transmitter paused for pause_storm_duty of every pause_storm_period_ns,
  // each side at its own phase drawn from seed. 0 = off.
  double pause_storm_period_ns = 0;
  double pause_storm_duty = 0;
};

struct LinkStats {
  uint64_t frames = 0, bytes = 0;  // handed to the link (including lost ones)
  uint64_t lost = 0;
};

class Link {
 public:
  // pcap (optional) must outlive the Link; records are written in timestamp order.
  explicit Link(const LinkConfig& cfg = {}, PcapWriter* pcap = nullptr);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Frame leaving side from_side (0 or 1); f.t_sent_ns = time its last bit left. Arrives at
  // the other side at f.t_sent_ns + delay_ns unless lost. Senders must send in t_sent order.
  void send(int from_side, Frame&& f);
  // Moves the next frame that has fully arrived at `side` by now_ns into out (recycling out's
  // old buffer); false if none. Also calls advance(side, now_ns).
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
  // request takes effect delay_ns later at the far end. A frame already on the wire ends.
  void set_pause(int side, bool on, double now_ns);
  // True while `side` must not start a frame because the far end paused it.
  bool tx_paused(int side, double now_ns);
  uint64_t pause_requests(int side) const { return pause_reqs_[side & 1]; }
  // Directed loss: frames for which `f(from_side, frame)` returns true are lost (as if by
  // cfg.loss, counted and pcap'ed the same way). Empty function: none.
  void set_drop_filter(std::function<bool(int, const Frame&)> f) { drop_filter_ = std::move(f); }

  const LinkStats& stats(int from_side) const { return stats_[from_side & 1]; }
  const LinkConfig& config() const { return cfg_; }
  size_t in_flight(int to_side) const { return q_[to_side & 1].size(); }

 private:
  struct Held {
    double t;
    uint64_t order;
    std::vector<uint8_t> bytes;
  };
  void write_ready_pcap();
  std::function<bool(int, const Frame&)> drop_filter_;

  LinkConfig cfg_;
  PcapWriter* pcap_;
  SplitMix64 rng_;
  Ring<Frame> q_[2];  // indexed by receiving side
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
