// AXI4-Stream passive monitor for srnic_core's 512-bit Ethernet ports: m_axis_tx_* (with
// tready) and s_axis_rx_* (no tready: every tvalid cycle is a beat). Fed one signal snapshot per
// clock cycle, it checks the handshake, tkeep, tuser and frame-length rules and publishes one
// AxisFrame per tlast beat.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "srnic/uvm/coverage.hpp"
#include "srnic/uvm/monitor.hpp"

namespace srnic::verif::agents {

constexpr unsigned kAxisDataBytes = 64;
constexpr unsigned kAxisDataWords = 16;

// The stream's values that the coming rising edge captures. tdata points to 16 little-endian
// 32-bit words (word 0 = bits 31:0 = bytes 0..3) valid during the sample() call; it may be null
// while tvalid is low. Without tready (has_tready = false) the tready field is ignored.
struct AxisSignals {
  const uint32_t* tdata = nullptr;
  uint64_t tkeep = 0;
  bool tlast = false, tuser = false, tvalid = false;
  bool tready = true;
  bool has_tready = true;
};

struct AxisFrame {
  std::vector<uint8_t> bytes;  // kept bytes of every beat, in order (Ethernet: no FCS)
  bool tuser_on_last = false;  // tuser of the tlast beat (MAC: abort / bad FCS)
  uint64_t cycle_first = 0;    // first beat accepted
  uint64_t cycle_last = 0;     // tlast beat accepted
  uint32_t beats = 0;
  uint32_t stall_cycles = 0;   // tvalid && !tready cycles of this frame's beats
  uint32_t gap_cycles = 0;     // tvalid low between the first and the last beat
};

struct AxisConfig {
  // Frame length bounds in bytes, Ethernet without FCS (sim EthConfig: max_frame 9600, frames
  // below 60 B padded by the MAC when pad_short).
  unsigned min_len = 60;
  unsigned max_len = 9600;
  bool allow_short = true;         // frames below min_len are counted, not errors (MAC pads)
  bool tuser_last_only = true;     // tuser on a beat without tlast is an error
  unsigned max_gap_cycles = 0;     // > 0: a mid-frame gap longer than this is a WARNING
  bool allow_open_at_end = false;  // a frame without tlast at check is no error
  bool cover_stalls = true;        // "stall" point has a "yes" goal (off for a stream without tready)
};

struct AxisStats {
  uint64_t frames = 0, bytes = 0, beats = 0;
  uint64_t short_frames = 0;     // below min_len (allowed with allow_short)
  uint64_t tuser_frames = 0;     // tuser on the last beat
  uint64_t stall_cycles = 0;     // tvalid && !tready
  uint64_t gap_warnings = 0;     // AXIS_GAP warnings
  uint64_t max_frame_len = 0;
};

// Error ids: AXIS_STABLE (tvalid dropped or tdata/tkeep/tlast/tuser changed before tready),
// AXIS_TKEEP (not all ones without tlast; with tlast zero or not contiguous from byte 0),
// AXIS_LEN (frame longer than max_len, or shorter than min_len without allow_short), AXIS_TUSER
// (tuser without tlast), MON_PARTIAL (frame open at check). Warning id: AXIS_GAP.
class AxisMonitor : public uvm::Monitor<AxisFrame> {
 public:
  AxisMonitor(uvm::Component& parent, std::string name, const AxisConfig& cfg = {});

  // One call per clock cycle with the values the coming rising edge captures.
  void sample(const AxisSignals& s);
  // With a source set, the phase hook sample() samples *s.
  void set_source(const AxisSignals* s) { src_ = s; }

  AxisConfig& config() { return cfg_; }
  const AxisStats& stats() const { return stats_; }
  // cg_axis, sampled per frame: len (<64, 64-127, 128-511, 512-1023, 1024-1517, 1518-4095,
  // 4096+), beats (1, 2, 3-16, 17-64, 65+), stall (no, yes).
  uvm::Covergroup& coverage() { return cg_; }

 protected:
  void sample() override;
  void check() override;

 private:
  void check_stable(const AxisSignals& s);
  void accept(const AxisSignals& s);

  AxisConfig cfg_;
  const AxisSignals* src_ = nullptr;
  AxisStats stats_;
  uvm::Covergroup cg_;

  bool wait_ = false;  // previous cycle: tvalid && !tready
  AxisSignals prev_;
  uint32_t prev_data_[kAxisDataWords] = {};
  AxisFrame cur_;      // frame being assembled (bytes keep their capacity between frames)
  uint32_t gap_ = 0;   // current mid-frame gap length
};

}  // namespace srnic::verif::agents
