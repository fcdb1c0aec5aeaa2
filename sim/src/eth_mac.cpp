// Link and EthPort implementation.
//
// TX: beats accepted on m_axis_tx are assembled into whole frames (store-and-forward). A frame
// starts on the wire at max(wire free, frame complete); its last bit leaves after preamble/SFD
// (8 B), the frame padded to 60 B, and FCS (4 B); the wire is free again after a further 12 B
// IFG. The frame is handed to the Link at the cycle its last bit has left.
// RX: a frame that has fully arrived is driven on s_axis_rx, 64 bytes per cycle, back to back.
#include "srnic/sim/eth_mac.hpp"

#include <cmath>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace srnic::sim {

namespace {
constexpr size_t kMinFrame = 60;            // without FCS
constexpr unsigned kWireOverhead = 4 + 8 + 12;  // FCS, preamble/SFD, IFG
constexpr size_t kMaxHeldPcap = 4096;
constexpr size_t kMaxPool = 256;
}  // namespace

// ------------------------------------------------------------------------------------ Link

Link::Link(const LinkConfig& cfg, PcapWriter* pcap)
    : cfg_(cfg), pcap_(pcap), rng_(SplitMix64::child(cfg.seed, 0x11E7)), q_{Ring<Frame>(64), Ring<Frame>(64)} {
  if (cfg_.pause_storm_period_ns > 0) {
    SplitMix64 ph(SplitMix64::child(cfg.seed, 0x5707));
    for (double& p : storm_phase_ns_) p = ph.uniform() * cfg_.pause_storm_period_ns;
  }
}

Link::~Link() { flush_pcap(); }

void Link::send(int from_side, Frame&& f) {
  const int from = from_side & 1;
  LinkStats& st = stats_[from];
  ++st.frames;
  st.bytes += f.bytes.size();
  const bool lost = (cfg_.loss > 0 && rng_.uniform() < cfg_.loss) || (drop_filter_ && drop_filter_(from, f));
  if (pcap_ && (!lost || cfg_.pcap_lost)) {
    Held h{f.t_sent_ns, held_order_++, take_buffer()};
    h.bytes.assign(f.bytes.begin(), f.bytes.end());
    auto pos = std::upper_bound(held_.begin(), held_.end(), h, [](const Held& a, const Held& b) {
      return a.t != b.t ? a.t < b.t : a.order < b.order;
    });
    held_.insert(pos, std::move(h));
    write_ready_pcap();
  }
  if (lost) {
    ++st.lost;
    recycle(std::move(f.bytes));
    return;
  }
  q_[from ^ 1].push() = std::move(f);
}

bool Link::receive(int side, double now_ns, Frame& out) {
  const int s = side & 1;
  advance(s, now_ns);
  Ring<Frame>& q = q_[s];
  if (q.empty() || q.front().t_sent_ns + cfg_.delay_ns > now_ns) return false;
  if (out.bytes.capacity()) recycle(std::move(out.bytes));
  out = std::move(q.front());
  q.front().bytes = std::vector<uint8_t>();
  q.pop_front();
  return true;
}

void Link::set_pause(int side, bool on, double now_ns) {
  const int s = side & 1;
  if (pause_last_[s] == on) return;
  pause_last_[s] = on;
  if (on) ++pause_reqs_[s];
  pause_q_[s].push_back(PauseEv{now_ns + cfg_.delay_ns, on});
}

bool Link::tx_paused(int side, double now_ns) {
  const int far = (side & 1) ^ 1;
  Ring<PauseEv>& q = pause_q_[far];
  while (!q.empty() && q.front().t <= now_ns) {
    paused_by_[far] = q.front().on;
    q.pop_front();
  }
  if (cfg_.pause_storm_period_ns > 0 && cfg_.pause_storm_duty > 0) {
    const double per = cfg_.pause_storm_period_ns;
    if (std::fmod(now_ns + storm_phase_ns_[side & 1], per) < cfg_.pause_storm_duty * per) return true;
  }
  return paused_by_[far];
}

void Link::advance(int side, double now_ns) {
  double& n = now_[side & 1];
  if (now_ns > n) {
    n = now_ns;
    if (!held_.empty()) write_ready_pcap();
  }
}

void Link::write_ready_pcap() {
  const double horizon = std::min(now_[0], now_[1]);
  size_t n = 0;
  while (n < held_.size() && (held_[n].t <= horizon || held_.size() - n > kMaxHeldPcap)) {
    pcap_->write(held_[n].t, held_[n].bytes.data(), held_[n].bytes.size());
    recycle(std::move(held_[n].bytes));
    ++n;
  }
  if (n) held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(n));
}

void Link::flush_pcap() {
  if (!pcap_) return;
  for (Held& h : held_) pcap_->write(h.t, h.bytes.data(), h.bytes.size());
  held_.clear();
  pcap_->flush();
}

std::vector<uint8_t> Link::take_buffer() {
  if (pool_.empty()) {
    std::vector<uint8_t> v;
    v.reserve(2048);
    return v;
  }
  std::vector<uint8_t> v = std::move(pool_.back());
  pool_.pop_back();
  v.clear();
  return v;
}

void Link::recycle(std::vector<uint8_t>&& buf) {
  if (pool_.size() < kMaxPool && buf.capacity()) pool_.push_back(std::move(buf));
}

// ------------------------------------------------------------------------------------ EthPort

EthPort::EthPort(Link& link, int side, const EthConfig& cfg, Clock clock)
    : link_(link), side_(side & 1), cfg_(cfg), clock_(clock), ns_per_byte_(8.0 / cfg.rate_gbps), txq_(16) {}

double EthPort::wire_ns(size_t len) const {
  return static_cast<double>(std::max(len, kMinFrame) + kWireOverhead) * ns_per_byte_;
}

void EthPort::drop_assembly() {
  fifo_bytes_ -= std::min<uint64_t>(fifo_bytes_, asm_.size());
  link_.recycle(std::move(asm_));
  asm_ = std::vector<uint8_t>();
  asm_active_ = false;
}

void EthPort::sample_pins(const EthFromNic& in, uint64_t cycle) {
  const double t = clock_.ns(cycle + 1);
  link_.set_pause(side_, in.rx_pause, t);
  if (t_stall_) {
    if (!in.tvalid)
      viol_.report(cycle, "eth.tx", "tvalid dropped before tready");
    else if (in.tkeep != prev_.tkeep || in.tlast != prev_.tlast || in.tuser != prev_.tuser ||
             std::memcmp(in.tdata, prev_.tdata, 64) != 0)
      viol_.report(cycle, "eth.tx", "payload changed while tvalid waited for tready");
  }
  t_stall_ = in.tvalid && !drv_.tready;
  prev_ = in;
  if (!(in.tvalid && drv_.tready)) return;

  if (!in.tlast && in.tkeep != ~0ULL)
    viol_.report(cycle, "eth.tx", "tkeep not all ones on a beat without tlast");
  else if (in.tkeep == 0 || (in.tkeep & (in.tkeep + 1)) != 0)
    viol_.report(cycle, "eth.tx", "tkeep on the last beat is not a non-empty run from byte 0");

  if (!asm_active_) {
    asm_ = link_.take_buffer();
    asm_active_ = true;
    asm_abort_ = false;
    asm_len_ = 0;
  }
  const unsigned n = static_cast<unsigned>(__builtin_popcountll(in.tkeep));
  asm_len_ += n;
  asm_abort_ |= in.tuser;
  if (asm_len_ <= cfg_.max_frame) {
    if (in.tkeep == keep_mask(n)) {
      asm_.insert(asm_.end(), in.tdata, in.tdata + n);
    } else {
      for (unsigned i = 0; i < 64; ++i)
        if ((in.tkeep >> i) & 1) asm_.push_back(in.tdata[i]);
    }
    fifo_bytes_ += n;
  }
  if (!in.tlast) return;

  if (asm_abort_) {
    ++stats_.tx_aborted;
    drop_assembly();
  } else if (asm_len_ > cfg_.max_frame) {
    ++stats_.tx_oversize;
    drop_assembly();
  } else {
    if (cfg_.pad_short && asm_.size() < kMinFrame) {
      fifo_bytes_ += kMinFrame - asm_.size();
      asm_.resize(kMinFrame, 0);
    }
    TxItem& it = txq_.push();
    it.frame.bytes = std::move(asm_);
    it.frame.t_sent_ns = 0;
    it.frame.bad_fcs = false;
    it.t_ready = t;
    asm_ = std::vector<uint8_t>();
    asm_active_ = false;
  }
}

const EthToNic& EthPort::drive_pins(uint64_t cycle) {
  now_ = clock_.ns(cycle);

  // TX wire.
  for (;;) {
    if (wire_busy_ && onwire_.t_sent_ns <= now_) {
      if (tx_mon_) tx_mon_(onwire_);
      link_.send(side_, std::move(onwire_));
      onwire_ = Frame();
      wire_busy_ = false;
    }
    if (wire_busy_ || txq_.empty()) break;
    const double start = std::max(wire_free_, txq_.front().t_ready);
    if (start > now_) break;
    if (link_.tx_paused(side_, now_)) break;   // flow control: the far end asked to pause
    TxItem& it = txq_.front();
    const size_t len = it.frame.bytes.size();
    const size_t wire_len = std::max(len, kMinFrame);
    onwire_ = std::move(it.frame);
    it.frame = Frame();
    txq_.pop_front();
    onwire_.t_sent_ns = start + static_cast<double>(8 + wire_len + 4) * ns_per_byte_;
    const double dur = wire_ns(len);
    wire_free_ = start + dur;
    wire_busy_ = true;
    fifo_bytes_ -= std::min<uint64_t>(fifo_bytes_, len);
    ++stats_.tx_frames;
    stats_.tx_bytes += len;
    stats_.tx_wire_bytes += wire_len + kWireOverhead;
    stats_.tx_busy_ns += dur;
  }
  drv_.tready = fifo_bytes_ <= cfg_.tx_fifo_bytes;

  // RX stream.
  link_.advance(side_, now_);
  while (!rx_active_ && link_.receive(side_, now_, rx_)) {
    if (rx_.bytes.empty()) continue;
    rx_active_ = true;
    rx_off_ = 0;
    if (rx_mon_) rx_mon_(rx_);
  }
  drv_.rx_tvalid = rx_active_;
  drv_.rx_tlast = drv_.rx_tuser = false;
  drv_.rx_tkeep = 0;
  if (rx_active_) {
    const size_t len = rx_.bytes.size();
    const unsigned n = static_cast<unsigned>(std::min<size_t>(64, len - rx_off_));
    std::memcpy(drv_.rx_tdata, rx_.bytes.data() + rx_off_, n);
    if (n < 64) std::memset(drv_.rx_tdata + n, 0, 64 - n);
    drv_.rx_tkeep = keep_mask(n);
    rx_off_ += n;
    if (rx_off_ >= len) {
      drv_.rx_tlast = true;
      drv_.rx_tuser = rx_.bad_fcs;
      rx_active_ = false;
      ++stats_.rx_frames;
      stats_.rx_bytes += len;
    }
  }
  return drv_;
}

}  // namespace srnic::sim
