// Scoreboard: completion matching (exact or relaxed per queue) and byte-by-byte memory compare.
#include "srnic/verif/scoreboard.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace srnic::verif {

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string queue_name(uint32_t host, uint32_t qpn, QueueKind kind) {
  return "host " + std::to_string(host) + " qp " + hex(qpn) + (kind == QueueKind::Send ? " send queue" : " recv queue");
}

std::string describe(const Completion& c) {
  std::string s = "{wr_id " + hex(c.wr_id) + ", " + to_string(c.status);
  if (c.status == WcStatus::Success) {
    s += std::string(", ") + to_string(c.opcode) + ", byte_len " + std::to_string(c.byte_len) + ", flags " +
         std::to_string(c.wc_flags);
    if (c.wc_flags & kWcWithImm) s += ", imm " + hex(c.imm);
  }
  return s + ", qpn " + hex(c.qpn) + "}";
}

// Empty when `got` matches `want` in every field that is valid for want's status.
std::string diff(const Completion& want, const Completion& got) {
  if (got.wr_id != want.wr_id) return "wr_id";
  if (got.status != want.status) return "status";
  if (got.qpn != want.qpn) return "qpn";
  if (want.status != WcStatus::Success) return "";
  if (got.opcode != want.opcode) return "opcode";
  if (got.byte_len != want.byte_len) return "byte_len";
  if (got.wc_flags != want.wc_flags) return "wc_flags";
  if ((want.wc_flags & kWcWithImm) && got.imm != want.imm) return "imm";
  return "";
}

std::string statuses(const std::vector<WcStatus>& v) {
  if (v.empty()) return "none";
  std::string s;
  for (WcStatus st : v) s += (s.empty() ? "" : ", ") + std::string(to_string(st));
  return s;
}

std::string wr_name(const ExpectedQueue& e, size_t i) {
  return "WR #" + std::to_string(i) + " (wr_id " + hex(e.candidates[i].on_success.wr_id) + ")";
}

}  // namespace

Scoreboard::Scoreboard(const Prediction& prediction) : p_(prediction) {
  for (const ExpectedQueue& q : p_.queues) {
    QueueState& st = queues_[{q.host, q.qpn, q.kind}];
    st.expected = &q;
    // unsignaled WRs that may succeed, at the end of what must complete, may stay silent
    st.required = std::min(q.must_complete, q.candidates.size());
    while (st.required > 0 && !q.candidates[st.required - 1].signaled && q.candidates[st.required - 1].can_succeed)
      --st.required;
  }
}

bool Scoreboard::settled(uint32_t host, uint32_t qpn, QueueKind kind) const {
  const auto it = queues_.find({host, qpn, kind});
  if (it == queues_.end()) return true;
  const QueueState& q = it->second;
  const ExpectedQueue& e = *q.expected;
  if (q.broken) return true;
  if (!e.relaxed) return q.next >= e.completions.size();
  return q.next >= (q.first_error != SIZE_MAX ? e.must_complete : q.required);
}

bool Scoreboard::fail(const std::string& msg) {
  ++mismatches_;
  if (first_.empty()) first_ = msg;
  last_ = msg;
  return false;
}

bool Scoreboard::match_exact(QueueState& q, const Completion& c, std::string& why) {
  const auto& list = q.expected->completions;
  if (q.next >= list.size()) {
    why = "unexpected completion " + describe(c) + " after all " + std::to_string(list.size()) + " expected ones";
    return false;
  }
  const Completion& want = list[q.next];
  const std::string field = diff(want, c);
  if (!field.empty()) {
    why = "completion #" + std::to_string(q.next) + " (" + to_string(want.opcode) + " wr_id " + hex(want.wr_id) +
          "): " + field + " differs; expected " + describe(want) + ", got " + describe(c);
    return false;
  }
  ++q.next;
  return true;
}

// Relaxed queue: WRs complete in posting order, each once; before the first error completion
// only successes (unsignaled successes silent), the first error with a status its WR lists,
// after it WR_FLUSH_ERR for every WR, unsignaled ones included.
bool Scoreboard::match_relaxed(QueueState& q, const Completion& c, std::string& why) {
  const ExpectedQueue& e = *q.expected;
  const auto& cand = e.candidates;
  const bool in_error = q.first_error != SIZE_MAX;
  size_t i = q.next;
  // Before the first error, unsignaled WRs that may succeed may have done so silently.
  if (!in_error)
    while (i < cand.size() && cand[i].on_success.wr_id != c.wr_id && !cand[i].signaled && cand[i].can_succeed) ++i;
  if (i >= cand.size() || cand[i].on_success.wr_id != c.wr_id) {
    size_t k = 0;
    while (k < cand.size() && cand[k].on_success.wr_id != c.wr_id) ++k;
    const std::string next = q.next < cand.size() ? wr_name(e, q.next) : std::string("none, all are done");
    if (k >= cand.size())
      why = "completion " + describe(c) + " names no WR of this queue";
    else if (k < q.next)
      why = "completion " + describe(c) + " for " + wr_name(e, k) + ", which already completed or was passed " +
            "(completions come once each, in posting order; next outstanding: " + next + ")";
    else
      why = "completion " + describe(c) + " for " + wr_name(e, k) + " out of order: " + wr_name(e, i < cand.size() ? i : q.next) +
            " posted before it must complete first" + (in_error ? " (flushed after the queue's first error)" : "");
    return false;
  }
  const ExpectedQueue::Candidate& w = cand[i];
  if (c.status == WcStatus::Success) {
    if (in_error) {
      why = "successful completion " + describe(c) + " for " + wr_name(e, i) + " after the queue's first error (" +
            wr_name(e, q.first_error) + ": " + to_string(q.first_status) + ")";
      return false;
    }
    if (!w.can_succeed) {
      why = "successful completion " + describe(c) + " for " + wr_name(e, i) +
            ", which cannot succeed (it may report: " + statuses(w.errors) + ")";
      return false;
    }
    const std::string field = diff(w.on_success, c);
    if (!field.empty()) {
      why = "completion for " + wr_name(e, i) + ": " + field + " differs; expected " + describe(w.on_success) +
            ", got " + describe(c);
      return false;
    }
    q.succeeded = i + 1;
  } else if (in_error) {
    if (c.status != WcStatus::WrFlushErr) {
      why = "completion " + describe(c) + " for " + wr_name(e, i) + ": after the queue's first error (" +
            wr_name(e, q.first_error) + ": " + to_string(q.first_status) + ") every WR must complete WR_FLUSH_ERR";
      return false;
    }
  } else {
    if (std::find(w.errors.begin(), w.errors.end(), c.status) == w.errors.end()) {
      std::string allowed = w.errors.empty() ? std::string() : statuses(w.errors);
      if (w.can_succeed) allowed += allowed.empty() ? "SUCCESS only" : ", or SUCCESS";
      why = "completion " + describe(c) + " for " + wr_name(e, i) + ": " + to_string(c.status) +
            " is not a status this WR may report as the queue's first error (allowed: " +
            (allowed.empty() ? std::string("none") : allowed) + ")";
      return false;
    }
    q.first_error = i;
    q.first_status = c.status;
    q.succeeded = i;  // the WRs passed silently succeeded
  }
  q.next = i + 1;
  return true;
}

bool Scoreboard::on_completion(uint32_t host, QueueKind kind, const Completion& c) {
  auto it = queues_.find({host, c.qpn, kind});
  if (it == queues_.end()) return fail(queue_name(host, c.qpn, kind) + ": completion " + describe(c) + " for an unknown QP");
  QueueState& q = it->second;
  ++q.observed;
  std::string why;
  const bool ok = q.expected->relaxed ? match_relaxed(q, c, why) : match_exact(q, c, why);
  if (!ok) {
    q.broken = true;
    return fail(queue_name(host, c.qpn, kind) + ": " + why);
  }
  ++completion_matches_;
  return true;
}

bool Scoreboard::proven(int32_t op) const {
  if (op < 0 || size_t(op) >= p_.ops.size()) return false;
  const OpRef& o = p_.ops[size_t(op)];
  const auto sq = queues_.find({o.host, o.qpn, QueueKind::Send});
  if (sq != queues_.end() && sq->second.expected->relaxed && sq->second.succeeded > o.wr_index) return true;
  if (o.recv_index < 0) return false;
  const auto rq = queues_.find({o.peer_host, o.peer_qpn, QueueKind::Recv});
  return rq != queues_.end() && rq->second.expected->relaxed && rq->second.succeeded > size_t(o.recv_index);
}

bool Scoreboard::check_buffer(uint32_t host, size_t index, const uint8_t* data, size_t len) {
  const BufferImage* b = p_.buffer(host, index);
  if (!b) return fail("host " + std::to_string(host) + ": no buffer #" + std::to_string(index));
  if (len != b->bytes.size())
    return fail("host " + std::to_string(host) + " buffer '" + b->name + "': observed " + std::to_string(len) +
                " bytes, expected " + std::to_string(b->bytes.size()));
  bool ok = true;
  int32_t cached_op = -1;  // kByteIfWriterSucceeded: runs of one writer share the lookup
  bool cached_proven = false;
  for (size_t i = 0; i < len; ++i) {
    bool checked = b->determined[i] == kByteDetermined;
    if (b->determined[i] == kByteIfWriterSucceeded) {
      const int32_t op = b->writer[i];
      if (op != cached_op) {
        cached_op = op;
        cached_proven = proven(op);
      }
      checked = cached_proven;
    }
    if (!checked) {
      ++bytes_skipped_;
    } else if (data[i] == b->bytes[i]) {
      ++byte_matches_;
    } else if (ok) {
      char m[96];
      std::snprintf(m, sizeof m, " (+0x%zx): expected 0x%02x, actual 0x%02x; ", i, b->bytes[i], data[i]);
      fail("host " + std::to_string(host) + " buffer '" + b->name + "' pa " + hex(b->pa + i) + m +
           "last written by " + p_.describe_op(b->writer[i]) +
           (b->determined[i] == kByteIfWriterSucceeded ? ", which completed successfully" : ""));
      ok = false;
    }
  }
  return ok;
}

bool Scoreboard::check_memory(const MemoryReader& read) {
  bool ok = true;
  std::vector<uint8_t> buf;
  for (const BufferImage& b : p_.buffers) {
    buf.assign(b.bytes.size(), 0);
    if (!buf.empty()) read(b.host, b.pa, buf.data(), buf.size());
    ok = check_buffer(b.host, b.index, buf.data(), buf.size()) && ok;
  }
  return ok;
}

// A relaxed queue at the end of the test: nothing below must_complete may be missing (WRs left
// after the last completion may only be unsignaled ones that succeeded silently, before any
// error), and a receive WR whose consumer was seen to succeed must have completed (unless the
// hosts reset the QP).
bool Scoreboard::finish_relaxed(const QueueState& q) {
  const ExpectedQueue& e = *q.expected;
  const auto& cand = e.candidates;
  const std::string name = queue_name(e.host, e.qpn, e.kind) + " (relaxed): ";
  if (q.next < e.must_complete) {
    size_t i = q.next;
    if (q.first_error == SIZE_MAX)
      while (i < e.must_complete && !cand[i].signaled && cand[i].can_succeed) ++i;
    if (i < e.must_complete)
      return fail(name + "missing completion for " + wr_name(e, i) + " (" + std::to_string(e.must_complete - i) +
                  " of the queue's " + std::to_string(cand.size()) + " WRs from it on have none); " +
                  e.must_complete_why + ", so every WR must complete, flushed if nothing else");
  }
  // (a reset discards a receive's completion the host had not polled yet, whatever its consumer did)
  if (e.kind != QueueKind::Recv || e.reset) return true;
  const auto peer = queues_.find({e.peer_host, e.peer_qpn, QueueKind::Send});
  if (peer == queues_.end() || !peer->second.expected->relaxed) return true;
  for (size_t j = q.next; j < cand.size(); ++j) {
    const int32_t c = cand[j].consumer;
    if (c >= 0 && peer->second.succeeded > size_t(c))
      return fail(name + "missing completion for " + wr_name(e, j) + ": it was consumed by host " +
                  std::to_string(e.peer_host) + " qp " + hex(e.peer_qpn) + " " +
                  wr_name(*peer->second.expected, size_t(c)) + ", which completed successfully");
  }
  return true;
}

bool Scoreboard::finish() {
  bool ok = true;
  for (auto& [key, q] : queues_) {
    const ExpectedQueue& e = *q.expected;
    if (e.relaxed) {
      ok = finish_relaxed(q) && ok;
      continue;
    }
    if (q.next >= e.completions.size()) continue;
    const Completion& want = e.completions[q.next];
    ok = fail(queue_name(e.host, e.qpn, e.kind) + ": missing completion #" + std::to_string(q.next) + " " +
              describe(want) + " (" + std::to_string(e.completions.size() - q.next) + " missing)") && ok;
  }
  return ok;
}

std::string Scoreboard::summary() const {
  return "completions matched " + std::to_string(completion_matches_) + ", bytes matched " +
         std::to_string(byte_matches_) + ", bytes skipped " + std::to_string(bytes_skipped_) + ", mismatches " +
         std::to_string(mismatches_);
}

}  // namespace srnic::verif
