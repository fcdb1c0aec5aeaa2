// AxisMonitor. Each cycle: stability against the previous cycle (with tready only), mid-frame
// gap and stall counting, then the beat if tvalid (and tready) is high. Frames are assembled from
// the kept bytes of each beat and published at tlast.
#include "srnic/agents/axis.hpp"

#include <climits>
#include <cstring>

#include "detail.hpp"

namespace srnic::verif::agents {

namespace {

using ull = unsigned long long;

}  // namespace

AxisMonitor::AxisMonitor(uvm::Component& parent, std::string name, const AxisConfig& cfg)
    : Monitor(parent, std::move(name)), cfg_(cfg), cg_("cg_axis", this) {
  cg_.coverpoint("len")
      .range("<64", 0, 63)
      .range("64-127", 64, 127)
      .range("128-511", 128, 511)
      .range("512-1023", 512, 1023)
      .range("1024-1517", 1024, 1517)
      .range("1518-4095", 1518, 4095)
      .range("4096+", 4096, INT64_MAX);
  cg_.coverpoint("beats")
      .bin("1", 1)
      .bin("2", 2)
      .range("3-16", 3, 16)
      .range("17-64", 17, 64)
      .range("65+", 65, INT64_MAX);
  auto& stall = cg_.coverpoint("stall").bin("no", 0);
  if (cfg_.cover_stalls)
    stall.bin("yes", 1);
  else
    stall.ignore("yes", 1, 1);
}

void AxisMonitor::sample() {
  if (src_ != nullptr) sample(*src_);
}

void AxisMonitor::check_stable(const AxisSignals& s) {
  if (!wait_) return;
  if (!s.tvalid) {
    error("AXIS_STABLE", strf("tvalid dropped before tready (beat %u of the frame, tkeep 0x%016llx "
                              "tlast %d)",
                              cur_.beats + 1, (ull)prev_.tkeep, prev_.tlast));
    return;
  }
  int lane = -1;
  if (s.tdata != nullptr) {
    uint8_t a[kAxisDataBytes], b[kAxisDataBytes];
    words_to_bytes(prev_data_, a);
    words_to_bytes(s.tdata, b);
    for (unsigned i = 0; i < kAxisDataBytes && lane < 0; ++i)
      if (a[i] != b[i]) lane = static_cast<int>(i);
  }
  if (lane >= 0 || s.tkeep != prev_.tkeep || s.tlast != prev_.tlast || s.tuser != prev_.tuser)
    error("AXIS_STABLE",
          strf("payload changed while waiting for tready (beat %u of the frame): tkeep "
               "0x%016llx->0x%016llx tlast %d->%d tuser %d->%d, first changed data byte lane %d",
               cur_.beats + 1, (ull)prev_.tkeep, (ull)s.tkeep, prev_.tlast, s.tlast, prev_.tuser,
               s.tuser, lane));
}

void AxisMonitor::sample(const AxisSignals& s) {
  if (s.has_tready) check_stable(s);
  const bool ready = !s.has_tready || s.tready;
  if (!s.tvalid) {
    if (in_transaction()) {
      ++gap_;
      ++cur_.gap_cycles;
      if (cfg_.max_gap_cycles != 0 && gap_ == cfg_.max_gap_cycles + 1) {
        ++stats_.gap_warnings;
        warning("AXIS_GAP", strf("tvalid low for more than %u cycles inside a frame (after beat "
                                 "%u, frame started at cycle %llu)",
                                 cfg_.max_gap_cycles, cur_.beats, (ull)cur_.cycle_first));
      }
    }
  } else {
    gap_ = 0;
    if (ready) {
      accept(s);
    } else {
      ++cur_.stall_cycles;
      ++stats_.stall_cycles;
    }
  }
  wait_ = s.has_tready && s.tvalid && !s.tready;
  prev_ = s;
  prev_.tdata = nullptr;
  if (wait_) {
    if (s.tdata != nullptr)
      std::memcpy(prev_data_, s.tdata, sizeof prev_data_);
    else
      std::memset(prev_data_, 0, sizeof prev_data_);
  }
}

void AxisMonitor::accept(const AxisSignals& s) {
  if (!in_transaction()) {
    begin_transaction();
    cur_.bytes.clear();
    cur_.beats = 0;
    cur_.gap_cycles = 0;
    cur_.cycle_first = cycle();
  }
  const uint32_t beat = ++cur_.beats;
  ++stats_.beats;
  if (!s.tlast && s.tkeep != ~0ull)
    error("AXIS_TKEEP", strf("beat %u without tlast has tkeep 0x%016llx, not all ones (frame "
                             "started at cycle %llu)",
                             beat, (ull)s.tkeep, (ull)cur_.cycle_first));
  if (s.tlast && (s.tkeep == 0 || (s.tkeep & (s.tkeep + 1)) != 0))
    error("AXIS_TKEEP", strf("last beat %u has tkeep 0x%016llx, not a non-empty run from byte 0 "
                             "(frame started at cycle %llu)",
                             beat, (ull)s.tkeep, (ull)cur_.cycle_first));
  if (s.tuser && !s.tlast && cfg_.tuser_last_only)
    error("AXIS_TUSER", strf("tuser on beat %u, which has no tlast (frame started at cycle %llu)",
                             beat, (ull)cur_.cycle_first));

  uint8_t b[kAxisDataBytes];
  words_to_bytes(s.tdata, b);
  if (s.tkeep == ~0ull) {
    cur_.bytes.insert(cur_.bytes.end(), b, b + kAxisDataBytes);
  } else {
    for (unsigned i = 0; i < kAxisDataBytes; ++i)
      if ((s.tkeep >> i) & 1) cur_.bytes.push_back(b[i]);
  }
  if (!s.tlast) return;

  cur_.tuser_on_last = s.tuser;
  cur_.cycle_last = cycle();
  const size_t len = cur_.bytes.size();
  if (len > cfg_.max_len)
    error("AXIS_LEN", strf("frame of %zu bytes (%u beats, cycles %llu..%llu) is longer than %u",
                           len, cur_.beats, (ull)cur_.cycle_first, (ull)cur_.cycle_last,
                           cfg_.max_len));
  if (len < cfg_.min_len) {
    ++stats_.short_frames;
    if (!cfg_.allow_short)
      error("AXIS_LEN", strf("frame of %zu bytes (cycles %llu..%llu) is shorter than %u", len,
                             (ull)cur_.cycle_first, (ull)cur_.cycle_last, cfg_.min_len));
  }
  ++stats_.frames;
  stats_.bytes += len;
  if (s.tuser) ++stats_.tuser_frames;
  if (len > stats_.max_frame_len) stats_.max_frame_len = len;
  cg_.sample({static_cast<int64_t>(len), cur_.beats, cur_.stall_cycles != 0 ? 1 : 0});
  publish(cur_);
  cur_.stall_cycles = 0;
  gap_ = 0;
}

void AxisMonitor::check() {
  if (!in_transaction() || cfg_.allow_open_at_end) return;
  error("MON_PARTIAL", strf("frame without tlast at the end: %u beats, %zu bytes, first beat at "
                            "cycle %llu",
                            cur_.beats, cur_.bytes.size(), (ull)cur_.cycle_first));
}

}  // namespace srnic::verif::agents
