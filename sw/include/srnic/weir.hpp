// srnic/weir.hpp: Weir, host middleware that paces send doorbells so that a NIC which caches
// WQEs keeps its cache at a steady occupancy (the `cached` build's srnic_wqe_cache). The
// application posts and polls through a Weir object instead of QueuePair::post_send and
// CompletionQueue::poll_cq; Weir holds the WRs in software and rings a WR's doorbell only when
// its credit time has come, at a rate set from the WQEs' life cycles.
//
// Parts (the paper's names): the life-cycle monitor (weir::Ewma over CQE time minus doorbell
// time), the active-QP monitor (weir::ActiveQps), rate control (weir::RateControl, AIAD with
// thresholds alpha/beta set from the active-QP count), credits (weir::CreditClock) and WQE
// slicing with CQE aggregation (weir::slice). The pure parts are public so that they can be
// tested on their own; Weir ties them to a Device. Decisions and their reasons: weir.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "srnic/verbs.hpp"

namespace srnic::sw {

namespace weir {

// Exponentially weighted moving average: value = w * value + (1 - w) * sample; the first
// sample sets the value.
class Ewma {
 public:
  explicit Ewma(double w) : w_(w) {}
  void add(double sample);
  double value() const { return value_; }
  bool empty() const { return empty_; }

 private:
  double w_;
  double value_ = 0;
  bool empty_ = true;
};

// QPs with WQEs rung and not yet completed, one bit per QPN.
class ActiveQps {
 public:
  // Records that QP qpn has n more WQEs at the NIC (n > 0) or n fewer (n < 0); returns the
  // active count afterwards.
  uint32_t add(uint32_t qpn, int64_t n);
  bool active(uint32_t qpn) const;
  uint32_t outstanding(uint32_t qpn) const { return qpn < outstanding_.size() ? outstanding_[qpn] : 0; }
  uint32_t count() const { return count_; }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> outstanding_;
  uint32_t count_ = 0;
};

struct RateParams {
  double line_rate = 0;    // bytes per NIC cycle: the initial rate and the ceiling
  double min_rate = 0;     // floor, bytes per cycle
  double inc = 0, dec = 0; // additive steps, bytes per cycle
  double init_alpha = 0, init_beta = 0;
  uint32_t qps_per_step = 0;  // N of Eq. 3: alpha grows by init_alpha every N active QPs
};

// alpha = ceil(active / N) * init_alpha (at least init_alpha); beta = alpha + init_alpha - init_beta.
struct Thresholds {
  double alpha, beta;
};
Thresholds thresholds(const RateParams& p, uint32_t active);

// Algorithm 1 "On Poll CQE": compares delay / base_delay - 1 with alpha and beta.
class RateControl {
 public:
  enum class Step { Increase, Hold, Decrease };
  explicit RateControl(const RateParams& p) : p_(p), rate_(p.line_rate) {}
  Step update(double delay, double base_delay, uint32_t active);
  double rate() const { return rate_; }
  const RateParams& params() const { return p_; }

 private:
  RateParams p_;
  double rate_;
};

// Credit: the next doorbell may ring at time next(); ringing a WQE of `bytes` moves it to
// max(next, now - burst) + bytes / rate, so idle time earns at most `burst` cycles of credit.
class CreditClock {
 public:
  explicit CreditClock(double burst_cycles) : burst_(burst_cycles) {}
  bool ready(uint64_t now) const { return double(now) >= next_; }
  void spend(uint64_t now, uint64_t bytes, double rate);
  double next() const { return next_; }

 private:
  double burst_;
  double next_ = 0;
};

// One piece of a WR: [offset, offset + length) of its buffer (and of the remote buffer).
struct Slice {
  uint64_t offset = 0;
  uint32_t length = 0;
  bool last = false;
};
// WRITE and READ WRs longer than slice_bytes are cut into slice_bytes pieces (the last one
// shorter); every other WR is one slice. slice_bytes 0: no slicing.
std::vector<Slice> slice(WrOpcode op, uint32_t length, uint32_t slice_bytes);

}  // namespace weir

struct WeirConfig {
  double clock_mhz = 300;       // NIC core clock: converts between host ns and NIC cycles
  double line_rate_gbps = 100;  // initial and highest doorbell rate
  double ewma_weight = 0.875;   // W of Eq. 2
  double init_alpha = 1.0, init_beta = 0.5;
  uint32_t qps_per_step = 64;
  double step_fraction = 1.0 / 256;   // inc = dec = line rate * this
  double min_fraction = 1.0 / 64;     // lowest rate = line rate * this
  uint32_t burst_bytes = 4096;        // credit an idle Weir may save up
  uint32_t slice_bytes = 4096;        // 0: no slicing
  uint32_t sync_every = 1000;         // WQEs rung between two reads of the NIC timestamp (0: every call)
  uint32_t max_list = 32;             // WQEs rung with one doorbell at most
  uint32_t ring_group = 8;            // a doorbell rings on to the next multiple of this SQ index (1: off)
  bool pacing = true;                 // false: ring at once (monitors still run)
};

struct WeirStats {
  uint64_t posted = 0;         // application WRs accepted
  uint64_t wqes_rung = 0;      // WQEs written and rung (slices count one each)
  uint64_t doorbells = 0;      // doorbell writes
  uint64_t deferred = 0;       // WQEs whose doorbell waited for their credit (not for ring room)
  uint64_t slices = 0;         // extra WQEs made by slicing
  uint64_t hidden_cqes = 0;    // CQEs not handed to the application
  uint64_t completions = 0;    // completions handed to the application
  uint64_t timestamp_syncs = 0;
  uint64_t increases = 0, holds = 0, decreases = 0;
  uint32_t max_active = 0;     // most QPs active at once
};

class Weir {
 public:
  Weir(Device& dev, const WeirConfig& cfg = WeirConfig{});
  ~Weir();
  Weir(const Weir&) = delete;
  Weir& operator=(const Weir&) = delete;

  // Queues a list of WRs (linked by next) for QP qp; nothing reaches the NIC until progress()
  // finds their credit. Checks as QueuePair::post_send does; ENOMEM when the QP would have more
  // than sq_size() WRs queued or at the NIC. The WRs are copied; their buffers must stay.
  int post_send(QueuePair& qp, const SendWr* wr, const SendWr** bad_wr = nullptr);
  // Runs progress(), then polls cq: returns the application's completions (signaled WRs, one
  // per WR however sliced, and every error); the other CQEs only feed the monitors.
  int poll_cq(CompletionQueue& cq, int num_entries, WorkCompletion* wc);
  // Rings the doorbells whose credit has come.
  void progress();

  // WRs the application may still post on qp.
  uint32_t send_room(const QueuePair& qp) const;
  // WRs queued in Weir, not yet rung (all QPs).
  size_t waiting() const { return queue_.size(); }

  double rate_gbps() const;         // current doorbell rate
  double ewma_delay_ns() const;     // life-cycle delay, filtered
  double base_delay_ns() const;
  uint32_t active_qps() const { return active_.count(); }
  const WeirStats& stats() const { return stats_; }
  const WeirConfig& config() const { return cfg_; }

 private:
  struct AppWr;
  struct Rung;
  struct QpQueue;
  // A WQE waiting for its credit.
  struct Pending {
    QpQueue* qs;
    uint64_t seq;  // its application WR, numbered per QP
    weir::Slice piece;
    bool waited;     // found its credit not yet come at least once
  };
  uint64_t now();
  QpQueue& queue_of(uint32_t qpn);
  void on_cqe(const WorkCompletion& c, WorkCompletion* out, int& n);

  Device& dev_;
  WeirConfig cfg_;
  weir::Ewma ewma_;
  weir::ActiveQps active_;
  weir::RateControl rc_;
  weir::CreditClock credit_;
  WeirStats stats_;
  double base_delay_ = 0;  // cycles; 0 until the first CQE
  // NIC time: the last timestamp read and the host time it was read at.
  uint64_t ts_sync_ = 0, ns_sync_ = 0;
  bool synced_ = false;
  uint32_t since_sync_ = 0;
  std::deque<Pending> queue_;       // WQEs not rung, in post order
  std::vector<QpQueue*> qps_;       // by QPN
  std::vector<std::unique_ptr<QpQueue>> qp_store_;
  std::vector<SendWr> list_;
  std::vector<Sge> sges_;
};

}  // namespace srnic::sw
