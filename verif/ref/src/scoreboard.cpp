// Scoreboard: completion matching (exact or relaxed per queue) and byte-by-byte memory compare.
#include "srnic/verif/scoreboard.hpp"

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

}  // namespace

Scoreboard::Scoreboard(const Prediction& prediction) : p_(prediction) {
  for (const ExpectedQueue& q : p_.queues) queues_[{q.host, q.qpn, q.kind}].expected = &q;
}

bool Scoreboard::fail(const std::string& msg) {
  ++mismatches_;
  if (first_.empty()) first_ = msg;
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

bool Scoreboard::match_relaxed(QueueState& q, const Completion& c, std::string& why) {
  const auto& cand = q.expected->candidates;
  if (!q.error_mode && c.status == WcStatus::Success) {
    // Skip unsignaled WRs, which complete silently when they succeed.
    size_t i = q.next;
    while (i < cand.size() && !cand[i].signaled && cand[i].can_succeed) ++i;
    if (i < cand.size() && cand[i].can_succeed && diff(cand[i].on_success, c).empty()) {
      q.next = i + 1;
      return true;
    }
    why = "completion " + describe(c) + " does not match the next WR that may succeed" +
          (i < cand.size() ? " " + describe(cand[i].on_success) : std::string(" (none left)"));
    return false;
  }
  if (c.status == WcStatus::Success) {
    why = "successful completion " + describe(c) + " after the queue was seen in error";
    return false;
  }
  size_t i = q.next;
  if (!q.error_mode) {
    // The first error may follow silent successes of unsignaled WRs.
    while (i < cand.size() && cand[i].on_success.wr_id != c.wr_id && !cand[i].signaled && cand[i].can_succeed) ++i;
  }
  if (i >= cand.size() || cand[i].on_success.wr_id != c.wr_id || c.qpn != cand[i].on_success.qpn) {
    why = "error completion " + describe(c) + " is not for the next outstanding WR" +
          (q.next < cand.size() ? " (wr_id " + hex(cand[q.next].on_success.wr_id) + ")" : std::string());
    return false;
  }
  q.error_mode = true;
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
  if (!ok) return fail(queue_name(host, c.qpn, kind) + ": " + why);
  ++completion_matches_;
  return true;
}

bool Scoreboard::check_buffer(uint32_t host, size_t index, const uint8_t* data, size_t len) {
  const BufferImage* b = p_.buffer(host, index);
  if (!b) return fail("host " + std::to_string(host) + ": no buffer #" + std::to_string(index));
  if (len != b->bytes.size())
    return fail("host " + std::to_string(host) + " buffer '" + b->name + "': observed " + std::to_string(len) +
                " bytes, expected " + std::to_string(b->bytes.size()));
  bool ok = true;
  for (size_t i = 0; i < len; ++i) {
    if (!b->determined[i]) {
      ++bytes_skipped_;
    } else if (data[i] == b->bytes[i]) {
      ++byte_matches_;
    } else if (ok) {
      char m[96];
      std::snprintf(m, sizeof m, " (+0x%zx): expected 0x%02x, actual 0x%02x; ", i, b->bytes[i], data[i]);
      fail("host " + std::to_string(host) + " buffer '" + b->name + "' pa " + hex(b->pa + i) + m +
           "last written by " + p_.describe_op(b->writer[i]));
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

bool Scoreboard::finish() {
  bool ok = true;
  for (auto& [key, q] : queues_) {
    const ExpectedQueue& e = *q.expected;
    if (e.relaxed || q.next >= e.completions.size()) continue;
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
