// Scoreboard: compares observed completions (in arrival order per queue) and final memory
// against a Prediction; remembers the first mismatch with host, QP, operation and wr_id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "srnic/verif/ref_model.hpp"

namespace srnic::verif {

class Scoreboard {
 public:
  explicit Scoreboard(const Prediction& prediction);

  // One observed completion of the given queue; c.qpn names the QP. Returns false on a mismatch.
  bool on_completion(uint32_t host, QueueKind kind, const Completion& c);
  // Compares the observed bytes of one buffer (HostSpec::buffers[index]) with the prediction.
  // Call it after the last completion: bytes of relaxed streams are compared only where the
  // completions seen so far show that their last writer succeeded.
  bool check_buffer(uint32_t host, size_t index, const uint8_t* data, size_t len);
  // Reads every predicted buffer through `read` and compares it.
  using MemoryReader = std::function<void(uint32_t host, uint64_t pa, uint8_t* dst, size_t len)>;
  bool check_memory(const MemoryReader& read);
  // End of test: every exact queue must have produced all its completions; a relaxed queue
  // every WR below its must_complete, and every receive WR whose consumer succeeded.
  bool finish();
  // The queue has every completion finish() will require of it (a relaxed queue: up to its
  // must_complete, not counting unsignaled WRs that may succeed silently at its end), or has
  // already mismatched: a test need not wait for it any longer.
  bool settled(uint32_t host, uint32_t qpn, QueueKind kind) const;

  bool ok() const { return first_.empty(); }
  const std::string& first_mismatch() const { return first_; }
  const std::string& last_mismatch() const { return last_; }
  uint64_t mismatches() const { return mismatches_; }
  uint64_t completion_matches() const { return completion_matches_; }
  uint64_t byte_matches() const { return byte_matches_; }
  uint64_t bytes_skipped() const { return bytes_skipped_; }  // undetermined bytes not compared
  // "completions matched N, bytes matched N, bytes skipped N, mismatches N"
  std::string summary() const;

 private:
  struct QueueState {
    const ExpectedQueue* expected = nullptr;
    size_t next = 0;           // exact: next completion; relaxed: next candidate
    size_t first_error = SIZE_MAX;  // relaxed: candidate of the queue's first error completion
    WcStatus first_status = WcStatus::Success;
    size_t succeeded = 0;      // relaxed: candidates [0, succeeded) are known to have succeeded
    size_t required = 0;       // relaxed, before an error: candidates finish() needs reported
    bool broken = false;       // a completion of this queue mismatched
    uint64_t observed = 0;
  };
  bool fail(const std::string& msg);
  bool match_exact(QueueState& q, const Completion& c, std::string& why);
  bool match_relaxed(QueueState& q, const Completion& c, std::string& why);
  // A relaxed stream's WR (Prediction::ops[op]) is known to have completed successfully.
  bool proven(int32_t op) const;
  bool finish_relaxed(const QueueState& q);

  const Prediction& p_;
  std::map<std::tuple<uint32_t, uint32_t, QueueKind>, QueueState> queues_;
  std::string first_;
  std::string last_;
  uint64_t mismatches_ = 0;
  uint64_t completion_matches_ = 0;
  uint64_t byte_matches_ = 0;
  uint64_t bytes_skipped_ = 0;
};

}  // namespace srnic::verif
