// Reference transport model: a control pass decides every WR's outcome from the static
// configuration, then a data pass moves the bytes and marks bytes whose value depends on timing.
#include "srnic/verif/ref_model.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <optional>
#include <stdexcept>

namespace srnic::verif {

void WriterMap::set(size_t lo, size_t hi, int32_t v) {
  if (lo >= hi) return;
  const bool tail = hi < n_;
  const int32_t after = tail ? (*this)[hi] : 0;
  runs_.erase(runs_.lower_bound(lo), runs_.lower_bound(hi));
  runs_[lo] = v;
  if (tail) runs_[hi] = after;
}

const char* to_string(WrOpcode op) {
  switch (op) {
    case WrOpcode::Write: return "RDMA_WRITE";
    case WrOpcode::WriteImm: return "RDMA_WRITE_WITH_IMM";
    case WrOpcode::Send: return "SEND";
    case WrOpcode::SendImm: return "SEND_WITH_IMM";
    case WrOpcode::Read: return "RDMA_READ";
  }
  return "?";
}

const char* to_string(WcOpcode op) {
  switch (op) {
    case WcOpcode::Send: return "SEND";
    case WcOpcode::RdmaWrite: return "RDMA_WRITE";
    case WcOpcode::RdmaRead: return "RDMA_READ";
    case WcOpcode::Recv: return "RECV";
    case WcOpcode::RecvRdmaWithImm: return "RECV_RDMA_WITH_IMM";
  }
  return "?";
}

const char* to_string(WcStatus s) {
  switch (s) {
    case WcStatus::Success: return "SUCCESS";
    case WcStatus::LocLenErr: return "LOC_LEN_ERR";
    case WcStatus::LocQpOpErr: return "LOC_QP_OP_ERR";
    case WcStatus::LocProtErr: return "LOC_PROT_ERR";
    case WcStatus::WrFlushErr: return "WR_FLUSH_ERR";
    case WcStatus::BadRespErr: return "BAD_RESP_ERR";
    case WcStatus::LocAccessErr: return "LOC_ACCESS_ERR";
    case WcStatus::RemInvReqErr: return "REM_INV_REQ_ERR";
    case WcStatus::RemAccessErr: return "REM_ACCESS_ERR";
    case WcStatus::RemOpErr: return "REM_OP_ERR";
    case WcStatus::RetryExcErr: return "RETRY_EXC_ERR";
    case WcStatus::RnrRetryExcErr: return "RNR_RETRY_EXC_ERR";
    case WcStatus::FatalErr: return "FATAL_ERR";
    case WcStatus::GeneralErr: return "GENERAL_ERR";
  }
  return "UNKNOWN_STATUS";
}

const ExpectedQueue* Prediction::queue(uint32_t host, uint32_t qpn, QueueKind kind) const {
  for (const ExpectedQueue& q : queues)
    if (q.host == host && q.qpn == qpn && q.kind == kind) return &q;
  return nullptr;
}

const BufferImage* Prediction::buffer(uint32_t host, size_t index) const {
  // predict() lists the buffers by host, then by index
  const auto it = std::lower_bound(buffers.begin(), buffers.end(), std::make_pair(host, index),
                                   [](const BufferImage& b, const std::pair<uint32_t, size_t>& k) {
                                     return std::make_pair(b.host, b.index) < k;
                                   });
  return it != buffers.end() && it->host == host && it->index == index ? &*it : nullptr;
}

std::string Prediction::describe_op(int32_t op) const {
  if (op < 0 || size_t(op) >= ops.size()) return "initial contents (never written)";
  const OpRef& o = ops[size_t(op)];
  char b[200];
  std::snprintf(b, sizeof b, "%shost %u qp 0x%x wr_id 0x%llx %s (WR #%zu)", o.host_store ? "host store before " : "",
                o.host, o.qpn, static_cast<unsigned long long>(o.wr_id), to_string(o.opcode), o.wr_index);
  return b;
}

namespace {

struct Range {
  uint32_t host = 0;
  uint64_t pa = 0;
  uint64_t len = 0;
};

enum class KeyCheck { Ok, BadKey, BadPd, BadAccess, BadRange };

// Outcome of one send WR, decided from the configuration alone.
struct OpPlan {
  WcStatus status = WcStatus::Success;
  bool executed = false;            // data moves (the WR succeeded)
  Range src, dst;                   // len 0 when nothing moves
  std::vector<Range> partial;       // bytes a failing WR may or may not have written
  int recv_index = -1;              // peer receive WR consumed
  WcStatus recv_status = WcStatus::Success;
  bool nak = false;                 // failing WR: the responder reports the error (a NAK)
  bool conditional = false;         // executed WR whose dst is checked only once it succeeded
};

struct StreamPlan {
  uint32_t host = 0, qpn = 0, peer_host = 0, peer_qpn = 0;
  const QpSpec* qp = nullptr;
  const QpSpec* peer = nullptr;
  std::vector<OpPlan> ops;          // WRs up to and including the error or stall point
  int error_index = -1;
  bool peer_err = false;            // the responder QP moves to ERR
  int stall_index = -1;             // RNR with rnr_retry 7: this WR and later ones never finish
  size_t recv_consumed = 0;
  bool relaxed = false;
  bool lossy_err = false;           // lossy link and a failing WR: the send queue is relaxed
  int first_rwqe = -1;              // first WR sent that needs a peer receive WR
  // Lossy link and rnr_retry below 7: after a dropped packet the responder may RNR-NAK a
  // request whose receive is posted (a stale receive-WQE fetch, decision 89), so any WR that
  // needs a receive may fail RNR_RETRY_EXC_ERR: the send queue and the receive queue it feeds
  // are relaxed, and the QP may reach ERR.
  bool lossy_rnr = false;
};

class Model {
 public:
  explicit Model(const Workload& w) : w_(w) {}
  Prediction run();

 private:
  const MemoryRegion* find_mr(uint32_t host, uint32_t key) const;
  KeyCheck check_key(uint32_t host, uint32_t key, uint32_t pd, uint64_t va, uint64_t len, uint8_t need,
                     Range* out) const;
  std::optional<Range> writable_part(uint32_t host, uint32_t key, uint32_t pd, uint64_t va, uint64_t len) const;
  StreamPlan plan_stream(uint32_t host, const QpSpec& qp) const;
  void validate() const;
  void build_queues(Prediction& p) const;
  void move_data(Prediction& p);

  // Calls f(image, offset, count) for each buffer piece of a range; throws if uncovered.
  template <class F>
  void for_range(Prediction& p, const Range& r, F&& f);

  const Workload& w_;
  std::vector<StreamPlan> streams_;
  std::map<std::pair<uint32_t, uint32_t>, size_t> stream_of_;  // (host, qpn) -> stream index
  std::vector<std::vector<std::pair<uint64_t, size_t>>> by_pa_;  // per host: (pa, buffer) sorted
  mutable std::vector<std::map<uint32_t, const QpSpec*>> qpn_index_;  // per host: qpn -> QP (validate)
};

const MemoryRegion* Model::find_mr(uint32_t host, uint32_t key) const {
  // The NIC indexes its MR table by key >> 8 and then compares the full key.
  for (const MemoryRegion& m : w_.hosts[host].mrs)
    if ((m.key >> 8) == (key >> 8)) return m.key == key ? &m : nullptr;
  return nullptr;
}

KeyCheck Model::check_key(uint32_t host, uint32_t key, uint32_t pd, uint64_t va, uint64_t len, uint8_t need,
                          Range* out) const {
  const MemoryRegion* m = find_mr(host, key);
  if (!m || !m->valid) return KeyCheck::BadKey;
  if (m->pd != pd) return KeyCheck::BadPd;
  if ((m->access & need) != need) return KeyCheck::BadAccess;
  if (va < m->iova || len > m->length || va - m->iova > m->length - len) return KeyCheck::BadRange;
  if (out) *out = Range{host, m->pa + (va - m->iova), len};
  return KeyCheck::Ok;
}

// The part of [va, va+len) a NIC could write through `key` before noticing the range error.
std::optional<Range> Model::writable_part(uint32_t host, uint32_t key, uint32_t pd, uint64_t va,
                                          uint64_t len) const {
  const MemoryRegion* m = find_mr(host, key);
  if (!m || !m->valid || m->pd != pd || !(m->access & kAccessLocalWrite)) return std::nullopt;
  const uint64_t lo = std::max(va, m->iova), hi = std::min(va + len, m->iova + m->length);
  if (lo >= hi) return std::nullopt;
  return Range{host, m->pa + (lo - m->iova), hi - lo};
}

StreamPlan Model::plan_stream(uint32_t host, const QpSpec& qp) const {
  StreamPlan s;
  s.host = host;
  s.qpn = qp.qpn;
  s.peer_host = qp.peer_host;
  s.peer_qpn = qp.peer_qpn;
  s.qp = &qp;
  for (const QpSpec& q : w_.hosts[qp.peer_host].qps)
    if (q.qpn == qp.peer_qpn) s.peer = &q;
  const QpSpec& peer = *s.peer;
  size_t rq = 0;
  for (size_t i = 0; i < qp.send.size(); ++i) {
    const SendWr& wr = qp.send[i];
    const bool is_write = wr.opcode == WrOpcode::Write || wr.opcode == WrOpcode::WriteImm;
    const bool is_send = wr.opcode == WrOpcode::Send || wr.opcode == WrOpcode::SendImm;
    const bool is_read = wr.opcode == WrOpcode::Read;
    const bool uses_rwqe = is_send || wr.opcode == WrOpcode::WriteImm;
    const uint64_t len = wr.length;
    OpPlan op;
    auto fail = [&](WcStatus st, bool peer_err, bool nak) {
      op.status = st;
      op.nak = nak;
      s.ops.push_back(op);
      s.error_index = int(i);
      s.peer_err = peer_err;
      s.recv_consumed = rq;
    };
    // 1. Requester fetches the payload through the lkey.
    if ((is_write || is_send) && len > 0 &&
        check_key(host, wr.lkey, qp.pd, wr.laddr, len, 0, &op.src) != KeyCheck::Ok) {
      fail(WcStatus::LocProtErr, false, false);
      return s;
    }
    // 2. Responder QP access flags (NAK Invalid Request).
    if ((is_write && !(peer.access & kAccessRemoteWrite)) || (is_read && !(peer.access & kAccessRemoteRead))) {
      fail(WcStatus::RemInvReqErr, true, true);
      return s;
    }
    // R_Key (NAK Remote Access Error); zero-length WRITE/READ skip it. A multi-packet
    // WRITE_WITH_IMM meets it with its first packet, before its last one looks for a
    // receive; the other requests after the receive check (step 5).
    auto remote_ok = [&]() {
      if (!(is_write || is_read) || len == 0) return true;
      const uint8_t need = is_write ? kAccessRemoteWrite : kAccessRemoteRead;
      Range& remote = is_write ? op.dst : op.src;
      return check_key(s.peer_host, wr.rkey, peer.pd, wr.raddr, len, need, &remote) == KeyCheck::Ok;
    };
    const bool multi_packet_imm = wr.opcode == WrOpcode::WriteImm && len > qp.mtu;
    if (multi_packet_imm && !remote_ok()) {
      fail(WcStatus::RemAccessErr, true, true);
      return s;
    }
    // 3. Receive WR (RNR when there is none).
    const RecvWr* rwr = nullptr;
    if (uses_rwqe) {
      if (rq >= peer.recv.size()) {
        if (qp.rnr_retry == 7) {
          s.stall_index = int(i);
          s.recv_consumed = rq;
          return s;
        }
        // A multi-packet WRITE_WITH_IMM places its FIRST/MIDDLE packets before the LAST one
        // (the one that needs the receive) is NAKed: its target range is left undetermined.
        Range target;
        if (is_write && len > 0 &&
            check_key(s.peer_host, wr.rkey, peer.pd, wr.raddr, len, kAccessRemoteWrite, &target) == KeyCheck::Ok)
          op.partial.push_back(target);
        fail(WcStatus::RnrRetryExcErr, false, true);
        return s;
      }
      op.recv_index = int(rq);
      rwr = &peer.recv[rq++];
    }
    // 4. Receive buffer too small (NAK Invalid Request, both sides REM_INV_REQ_ERR).
    if (is_send && len > rwr->length) {
      op.recv_status = WcStatus::RemInvReqErr;
      if (auto part = writable_part(s.peer_host, rwr->lkey, peer.pd, rwr->addr, rwr->length)) op.partial.push_back(*part);
      fail(WcStatus::RemInvReqErr, true, true);
      return s;
    }
    // 5. R_Key. A (single-packet) WRITE_WITH_IMM has consumed its receive, which completes
    // in error too.
    if (!multi_packet_imm && !remote_ok()) {
      op.recv_status = WcStatus::RemAccessErr;
      fail(WcStatus::RemAccessErr, true, true);
      return s;
    }
    // 6. Placement into the receive buffer (malformed WQE: NAK Remote Operational Error).
    if (is_send && len > 0 &&
        check_key(s.peer_host, rwr->lkey, peer.pd, rwr->addr, len, kAccessLocalWrite, &op.dst) != KeyCheck::Ok) {
      op.recv_status = WcStatus::LocQpOpErr;
      if (auto part = writable_part(s.peer_host, rwr->lkey, peer.pd, rwr->addr, len)) op.partial.push_back(*part);
      fail(WcStatus::RemOpErr, true, true);
      return s;
    }
    // 7. READ response data lands through the local lkey.
    if (is_read && len > 0 &&
        check_key(host, wr.lkey, qp.pd, wr.laddr, len, kAccessLocalWrite, &op.dst) != KeyCheck::Ok) {
      if (auto part = writable_part(host, wr.lkey, qp.pd, wr.laddr, len)) op.partial.push_back(*part);
      fail(WcStatus::LocProtErr, false, false);
      return s;
    }
    op.executed = true;
    s.ops.push_back(op);
  }
  s.recv_consumed = rq;
  return s;
}

void Model::validate() const {
  qpn_index_.assign(w_.hosts.size(), {});
  for (uint32_t h = 0; h < w_.hosts.size(); ++h) {
    const HostSpec& hs = w_.hosts[h];
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (const Buffer& b : hs.buffers) spans.emplace_back(b.pa, b.pa + b.init.size());
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
      if (spans[i].first < spans[i - 1].second)
        throw std::invalid_argument("host " + std::to_string(h) + ": overlapping buffers");
    std::set<uint32_t> mr_index;
    for (const MemoryRegion& m : hs.mrs)
      if (!mr_index.insert(m.key >> 8).second)
        throw std::invalid_argument("host " + std::to_string(h) + ": two MRs share a table index");
    for (const QpSpec& q : hs.qps)
      if (!qpn_index_[h].emplace(q.qpn, &q).second)
        throw std::invalid_argument("host " + std::to_string(h) + ": duplicate QPN");
  }
  for (uint32_t h = 0; h < w_.hosts.size(); ++h) {
    for (const QpSpec& q : w_.hosts[h].qps) {
      if (q.peer_host >= w_.hosts.size()) throw std::invalid_argument("QP peer host does not exist");
      const auto it = qpn_index_[q.peer_host].find(q.peer_qpn);
      const QpSpec* peer = it == qpn_index_[q.peer_host].end() ? nullptr : it->second;
      if (!peer || peer->peer_host != h || peer->peer_qpn != q.qpn)
        throw std::invalid_argument("host " + std::to_string(h) + " qp " + std::to_string(q.qpn) +
                                    ": peer missing or not connected back");
    }
  }
}

template <class F>
void Model::for_range(Prediction& p, const Range& r, F&& f) {
  uint64_t pa = r.pa, left = r.len;
  while (left > 0) {
    // the host's non-empty buffers by address (they do not overlap): the last one starting at
    // or below pa holds it, if any does
    BufferImage* b = nullptr;
    if (r.host < by_pa_.size()) {
      const std::vector<std::pair<uint64_t, size_t>>& idx = by_pa_[r.host];
      const auto it = std::upper_bound(idx.begin(), idx.end(), std::make_pair(pa, ~size_t(0)));
      if (it != idx.begin()) {
        BufferImage& c = p.buffers[std::prev(it)->second];
        if (pa < c.pa + c.bytes.size()) b = &c;
      }
    }
    if (!b) {
      char m[128];
      std::snprintf(m, sizeof m, "host %u: MR maps pa 0x%llx, which is outside every buffer", r.host,
                    static_cast<unsigned long long>(pa));
      throw std::invalid_argument(m);
    }
    const size_t off = size_t(pa - b->pa);
    const size_t n = size_t(std::min<uint64_t>(left, b->bytes.size() - off));
    f(*b, off, n);
    pa += n;
    left -= n;
  }
}

bool uses_receive(WrOpcode op) { return op == WrOpcode::Send || op == WrOpcode::SendImm || op == WrOpcode::WriteImm; }

Completion send_completion(const StreamPlan& s, const SendWr& wr, WcStatus st) {
  Completion c;
  c.wr_id = wr.wr_id;
  c.status = st;
  c.opcode = wr.opcode == WrOpcode::Read ? WcOpcode::RdmaRead
             : (wr.opcode == WrOpcode::Send || wr.opcode == WrOpcode::SendImm) ? WcOpcode::Send
                                                                                : WcOpcode::RdmaWrite;
  c.byte_len = st == WcStatus::Success ? wr.length : 0;
  c.qpn = s.qpn;
  return c;
}

// Receive completion of `rwr` consumed by `wr` of stream `s` (arriving on s.peer).
Completion recv_completion(const StreamPlan& s, const RecvWr& rwr, const SendWr* wr, WcStatus st) {
  Completion c;
  c.wr_id = rwr.wr_id;
  c.status = st;
  c.opcode = WcOpcode::Recv;
  c.qpn = s.peer_qpn;
  if (wr && st == WcStatus::Success) {
    c.byte_len = wr->length;
    if (wr->opcode == WrOpcode::WriteImm) c.opcode = WcOpcode::RecvRdmaWithImm;
    if (wr->opcode == WrOpcode::WriteImm || wr->opcode == WrOpcode::SendImm) {
      c.imm = wr->imm;
      c.wc_flags = kWcWithImm;
    }
  }
  return c;
}

void Model::build_queues(Prediction& p) const {
  for (const StreamPlan& s : streams_) {
    const StreamPlan& in = streams_[stream_of_.at({s.peer_host, s.peer_qpn})];
    const QpSpec& qp = *s.qp;
    const QpSpec& peer = *s.peer;
    // This QP ends in ERR if its own stream failed or a failure of the peer's stream at this
    // QP (a responder error) moved it there.
    const bool qp_err = s.error_index >= 0 || (in.error_index >= 0 && in.peer_err);

    // What relaxed queues may show depends on how each end of the connection can reach ERR.
    // Something other than this QP's own send WRs moves it to ERR (the host, or a responder
    // error in the peer's requests): its WRs may be flushed before any of them fails.
    const bool moved_err = qp.host_err || (in.error_index >= 0 && in.peer_err);
    // The peer may be in ERR while this QP still sends (the host moved it there, or its own
    // send WR failed): it drops the requests, whose retries end in RETRY_EXC_ERR, or, with
    // unlimited retries, never end.
    const bool peer_dead = peer.host_err || in.error_index >= 0 || in.lossy_rnr;
    const bool retries_end = qp.retry_cnt != 7;
    // This QP reaches ERR whatever the timing (then every WR of its queues completes, flushed
    // if nothing else): the host moves it there, or a failure no error elsewhere can cut short
    // (its own stream's, or a responder error in the peer's stream).
    std::string err_why;
    if (qp.host_err)
      err_why = "the host moves the QP to ERR";
    else if (s.error_index >= 0 && !s.relaxed)
      err_why = "its send WR #" + std::to_string(s.error_index) + " fails";
    else if (in.error_index >= 0 && in.peer_err && !in.relaxed && !in.lossy_rnr)
      err_why = "the peer's send WR #" + std::to_string(in.error_index) + " fails at this QP";
    const bool certain_err = !err_why.empty();
    // This QP may reach ERR at all (its receive queue may then be flushed).
    const bool may_err =
        moved_err || s.error_index >= 0 || s.lossy_rnr || (peer_dead && retries_end && !qp.send.empty());

    ExpectedQueue sq;
    sq.host = s.host;
    sq.qpn = s.qpn;
    sq.kind = QueueKind::Send;
    sq.peer_host = s.peer_host;
    sq.peer_qpn = s.peer_qpn;
    sq.relaxed = s.relaxed || s.lossy_err || s.lossy_rnr;
    // the last WR that can be a first error: the failing one or the one that stalls
    const int last_first = s.error_index >= 0 ? s.error_index : s.stall_index >= 0 ? s.stall_index : int(qp.send.size());
    // the last WR sent that needs a receive (lossy_rnr: the last one an RNR NAK may be for)
    int last_rwqe = -1;
    for (size_t i = 0; i < s.ops.size(); ++i)
      if (uses_receive(qp.send[i].opcode)) last_rwqe = int(i);
    for (size_t i = 0; i < qp.send.size(); ++i) {
      const SendWr& wr = qp.send[i];
      if (sq.relaxed) {
        ExpectedQueue::Candidate c;
        c.on_success = send_completion(s, wr, WcStatus::Success);
        c.signaled = wr.signaled;
        c.can_succeed = i < s.ops.size() && s.ops[i].status == WcStatus::Success && int(i) != s.stall_index;
        auto allow = [&c](WcStatus st) {
          if (std::find(c.errors.begin(), c.errors.end(), st) == c.errors.end()) c.errors.push_back(st);
        };
        if (int(i) <= last_first) {
          if (int(i) == s.error_index) allow(s.ops[i].status);
          // lossy link: a READ that lost responses fails with the status of the NAK beyond it
          if (w_.lossy && s.error_index >= 0 && s.ops[size_t(s.error_index)].nak && int(i) < s.error_index &&
              wr.opcode == WrOpcode::Read)
            allow(s.ops[size_t(s.error_index)].status);
          // the responder stops answering: the peer is in ERR for another reason, or (lossy
          // link) the fatal NAK of this stream's failing WR was lost and its retry is dropped
          if (retries_end && (peer_dead || (w_.lossy && s.error_index >= 0 && s.peer_err)))
            allow(WcStatus::RetryExcErr);
          if (moved_err) allow(WcStatus::WrFlushErr);
          // an RNR NAK although the receive is posted (lossy_rnr): the WR that needs it, or a
          // READ before it that lost responses, fails with RNR_RETRY_EXC_ERR
          if (s.lossy_rnr && int(i) < int(s.ops.size()) &&
              (uses_receive(wr.opcode) || (wr.opcode == WrOpcode::Read && int(i) < last_rwqe)))
            allow(WcStatus::RnrRetryExcErr);
        }
        sq.candidates.push_back(std::move(c));
        continue;
      }
      if (s.stall_index >= 0 && int(i) >= s.stall_index) break;
      if (i < s.ops.size()) {
        const OpPlan& op = s.ops[i];
        if (op.status != WcStatus::Success || wr.signaled) sq.completions.push_back(send_completion(s, wr, op.status));
      } else if (qp_err) {
        sq.completions.push_back(send_completion(s, wr, WcStatus::WrFlushErr));
      }
    }
    if (sq.relaxed && (certain_err || !s.relaxed)) {
      // (not relaxed by the peer: only this stream's own failure, if any, ends it, and the ERR
      // that follows flushes the rest)
      sq.must_complete = sq.candidates.size();
      sq.must_complete_why = certain_err ? err_why : "the QP either completes its WRs or fails and flushes them";
    }
    // a reset discards whatever has not completed, flushes included
    if (qp.reset) {
      sq.must_complete = 0;
      sq.must_complete_why.clear();
      sq.reset = true;
    }
    p.queues.push_back(std::move(sq));

    // Receive queue of this QP, consumed by the peer's stream `in`.
    ExpectedQueue rq;
    rq.host = s.host;
    rq.qpn = s.qpn;
    rq.kind = QueueKind::Recv;
    rq.peer_host = s.peer_host;
    rq.peer_qpn = s.peer_qpn;
    // (a QP the host moves to ERR completes its receives at a moment the model cannot know)
    rq.relaxed = in.relaxed || in.lossy_rnr || qp.host_err || qp.reset;
    std::vector<const SendWr*> consumer(qp.recv.size(), nullptr);
    std::vector<int32_t> consumer_index(qp.recv.size(), -1);
    std::vector<WcStatus> status(qp.recv.size(), WcStatus::WrFlushErr);
    for (size_t i = 0; i < in.ops.size(); ++i)
      if (in.ops[i].recv_index >= 0) {
        consumer[size_t(in.ops[i].recv_index)] = &in.qp->send[i];
        consumer_index[size_t(in.ops[i].recv_index)] = int32_t(i);
        status[size_t(in.ops[i].recv_index)] = in.ops[i].recv_status;
      }
    for (size_t j = 0; j < qp.recv.size(); ++j) {
      const RecvWr& r = qp.recv[j];
      if (rq.relaxed) {
        ExpectedQueue::Candidate c;
        c.on_success = recv_completion(in, r, consumer[j], WcStatus::Success);
        c.can_succeed = j < in.recv_consumed && status[j] == WcStatus::Success;
        c.consumer = consumer_index[j];
        // consumed by the peer's failing WR: the error that WR reports at this end
        if (j < in.recv_consumed && status[j] != WcStatus::Success) c.errors.push_back(status[j]);
        if (may_err) c.errors.push_back(WcStatus::WrFlushErr);
        rq.candidates.push_back(std::move(c));
      } else if (j < in.recv_consumed) {
        rq.completions.push_back(recv_completion(in, r, consumer[j], status[j]));
      } else if (qp_err) {
        rq.completions.push_back(recv_completion(in, r, nullptr, WcStatus::WrFlushErr));
      }
    }
    if (rq.relaxed && certain_err && !qp.reset) {
      rq.must_complete = rq.candidates.size();
      rq.must_complete_why = err_why;
    }
    rq.reset = qp.reset;
    p.queues.push_back(std::move(rq));
  }
}

// Claimed parts of one buffer: sorted, disjoint segments with the stream that may write them
// (or kMany) and whether their final value is timing-dependent anyway.
struct OwnSeg {
  size_t lo, hi;
  int32_t owner;
  bool undet;
};
constexpr int32_t kManyOwners = -2;  // an owner index otherwise

// Walks a buffer's segments for byte offsets that never decrease.
class OwnCursor {
 public:
  OwnCursor(const std::vector<OwnSeg>& s, size_t from) : s_(s) {
    i_ = size_t(std::partition_point(s.begin(), s.end(), [&](const OwnSeg& g) { return g.hi <= from; }) - s.begin());
  }
  const OwnSeg* at(size_t k) {
    while (i_ < s_.size() && s_[i_].hi <= k) ++i_;
    return (i_ < s_.size() && s_[i_].lo <= k) ? &s_[i_] : nullptr;
  }

 private:
  const std::vector<OwnSeg>& s_;
  size_t i_ = 0;
};

void Model::move_data(Prediction& p) {
  // Which stream may write each byte (one stream, none, or several), as segments per buffer.
  struct Claim {
    size_t lo, hi;
    int32_t stream;
    bool undet;
  };
  std::vector<std::vector<Claim>> claims(p.buffers.size());
  auto index_of = [&](const BufferImage& img) { return size_t(&img - p.buffers.data()); };
  auto claim = [&](const Range& r, int32_t stream, bool undetermined) {
    for_range(p, r, [&](BufferImage& img, size_t off, size_t n) {
      claims[index_of(img)].push_back({off, off + n, stream, undetermined});
    });
  };
  for (size_t si = 0; si < streams_.size(); ++si) {
    const StreamPlan& s = streams_[si];
    for (const OpPlan& op : s.ops) {
      if (op.executed && op.dst.len) claim(op.dst, int32_t(si), false);
      for (const Range& r : op.partial) claim(r, int32_t(si), true);
    }
  }
  std::vector<std::vector<OwnSeg>> segs(p.buffers.size());
  for (size_t b = 0; b < claims.size(); ++b) {
    // sweep over claim starts and ends
    std::vector<std::pair<size_t, int>> ev;  // (offset, claim index + 1 for a start, -(index + 1) for an end)
    for (size_t c = 0; c < claims[b].size(); ++c) {
      ev.push_back({claims[b][c].lo, int(c) + 1});
      ev.push_back({claims[b][c].hi, -int(c) - 1});
    }
    std::sort(ev.begin(), ev.end());
    std::map<int32_t, size_t> active;  // stream -> open claims
    size_t undet_open = 0;
    for (size_t e = 0; e < ev.size();) {
      const size_t at = ev[e].first;
      for (; e < ev.size() && ev[e].first == at; ++e) {
        const int id = ev[e].second;
        const Claim& c = claims[b][size_t(id > 0 ? id - 1 : -id - 1)];
        if (id > 0) {
          ++active[c.stream];
          undet_open += c.undet;
        } else {
          if (--active[c.stream] == 0) active.erase(c.stream);
          undet_open -= c.undet;
        }
      }
      if (active.empty() || e == ev.size()) continue;
      const OwnSeg g{at, ev[e].first, active.size() == 1 ? active.begin()->first : kManyOwners, undet_open > 0};
      std::vector<OwnSeg>& v = segs[b];
      if (!v.empty() && v.back().hi == g.lo && v.back().owner == g.owner && v.back().undet == g.undet)
        v.back().hi = g.hi;
      else
        v.push_back(g);
    }
  }

  std::vector<uint8_t> data;
  std::vector<uint8_t> det;
  // A host store before WR i: its bytes replace the buffer contents (every WR of the stream
  // posted after it sees them). A store to bytes that a failing WR, several streams or a
  // relaxed stream may write stays undetermined: such a WR may still be placing after its
  // completion (a flushed WRITE's packets in flight) or be placed in either order.
  auto host_store = [&](const StreamPlan& s, size_t i) {
    const SendWr& wr = s.qp->send[i];
    const HostStore& st = wr.store;
    if (st.len == 0) return;
    if (!w_.fill) throw std::invalid_argument("a WR has a host store but Workload::fill is not set");
    const int32_t op_id = int32_t(p.ops.size());
    p.ops.push_back(OpRef{s.host, s.qpn, i, wr.wr_id, wr.opcode, true});
    uint64_t done = 0;
    for_range(p, Range{st.host, st.pa, st.len}, [&](BufferImage& img, size_t off, size_t n) {
      OwnCursor own(segs[index_of(img)], off);
      w_.fill(st, done, img.bytes.data() + off, n);
      for (size_t k = off; k < off + n; ++k) {
        const OwnSeg* g = own.at(k);
        const bool timing = g && (g->undet || g->owner == kManyOwners || streams_[size_t(g->owner)].relaxed);
        img.determined[k] = timing ? kByteUndetermined : kByteDetermined;
      }
      img.writer.set(off, off + n, op_id);
      done += n;
    });
  };
  // A relaxed stream's WRs are predicted as if they all executed, but the bytes they place are
  // checked only where their last writer is seen to succeed (kByteIfWriterSucceeded): one
  // flushed while its data was in flight may have placed any part of it. Since a queue's
  // successes are a prefix, a WR seen to succeed had every earlier WR of its stream succeed.
  for (size_t si = 0; si < streams_.size(); ++si) {
    const StreamPlan& s = streams_[si];
    std::vector<Range> pending_reads;  // READ targets of this stream not yet fenced
    for (size_t i = 0; i < s.ops.size(); ++i) {
      const OpPlan& op = s.ops[i];
      const SendWr& wr = s.qp->send[i];
      host_store(s, i);
      if (wr.fence) pending_reads.clear();
      if (!op.executed || op.dst.len == 0) continue;
      const int32_t op_id = int32_t(p.ops.size());
      p.ops.push_back(OpRef{s.host, s.qpn, i, wr.wr_id, wr.opcode, false, op.recv_index, s.peer_host, s.peer_qpn});
      const bool conditional = s.relaxed || op.conditional;
      // Gather the source bytes with their determinacy (kByte*).
      data.clear();
      det.clear();
      for_range(p, op.src, [&](BufferImage& img, size_t off, size_t n) {
        OwnCursor own(segs[index_of(img)], off);
        const uint64_t base = img.pa + off;
        for (size_t k = off; k < off + n; ++k) {
          const OwnSeg* g = own.at(k);
          uint8_t d = (g && (g->undet || g->owner != int32_t(si))) ? kByteUndetermined : img.determined[k];
          const uint64_t pa = base + (k - off);
          for (const Range& r : pending_reads)
            if (r.host == img.host && pa >= r.pa && pa < r.pa + r.len) d = kByteUndetermined;
          data.push_back(img.bytes[k]);
          det.push_back(d);
        }
      });
      size_t pos = 0;
      for_range(p, op.dst, [&](BufferImage& img, size_t off, size_t n) {
        OwnCursor own(segs[index_of(img)], off);
        for (size_t k = off; k < off + n; ++k, ++pos) {
          const OwnSeg* g = own.at(k);
          img.bytes[k] = data[pos];
          // a source byte known only if an earlier WR of this stream succeeded is known here
          // when this WR succeeds (which implies the earlier one did)
          if (det[pos] == kByteUndetermined || (g && (g->undet || g->owner == kManyOwners)))
            img.determined[k] = kByteUndetermined;
          else
            img.determined[k] = conditional || det[pos] == kByteIfWriterSucceeded ? kByteIfWriterSucceeded : kByteDetermined;
        }
        img.writer.set(off, off + n, op_id);
      });
      if (wr.opcode == WrOpcode::Read) pending_reads.push_back(op.dst);
    }
    // WRs after the error or stall point are still posted, with their stores.
    for (size_t i = s.ops.size(); i < s.qp->send.size(); ++i) host_store(s, i);
  }
  // Bytes that only relaxed streams or failing WRs may have touched.
  for (size_t b = 0; b < p.buffers.size(); ++b)
    for (const OwnSeg& g : segs[b])
      if (g.undet || g.owner == kManyOwners)
        std::fill(p.buffers[b].determined.begin() + ptrdiff_t(g.lo), p.buffers[b].determined.begin() + ptrdiff_t(g.hi),
                  kByteUndetermined);
}

Prediction Model::run() {
  validate();
  Prediction p;
  for (uint32_t h = 0; h < w_.hosts.size(); ++h)
    for (size_t i = 0; i < w_.hosts[h].buffers.size(); ++i) {
      const Buffer& b = w_.hosts[h].buffers[i];
      BufferImage img;
      img.host = h;
      img.index = i;
      img.name = b.name;
      img.pa = b.pa;
      img.bytes = b.init;
      img.determined.assign(b.init.size(), kByteDetermined);
      img.writer.assign(b.init.size(), -1);
      p.buffers.push_back(std::move(img));
    }
  by_pa_.assign(w_.hosts.size(), {});
  for (size_t k = 0; k < p.buffers.size(); ++k)
    if (!p.buffers[k].bytes.empty()) by_pa_[p.buffers[k].host].emplace_back(p.buffers[k].pa, k);
  for (auto& v : by_pa_) std::sort(v.begin(), v.end());
  for (uint32_t h = 0; h < w_.hosts.size(); ++h)
    for (const QpSpec& q : w_.hosts[h].qps) {
      stream_of_[{h, q.qpn}] = streams_.size();
      streams_.push_back(plan_stream(h, q));
    }
  for (StreamPlan& s : streams_) {
    for (size_t i = 0; i < s.ops.size() && s.first_rwqe < 0; ++i)
      if (uses_receive(s.qp->send[i].opcode)) s.first_rwqe = int(i);
    s.lossy_rnr = w_.lossy && s.qp->rnr_retry != 7 && s.first_rwqe >= 0;
  }
  // A stream becomes relaxed when the opposite direction of its connection failed (or may fail):
  // that failure moves one or both QPs to ERR at a moment unrelated to this stream's progress.
  for (StreamPlan& s : streams_) {
    const StreamPlan& in = streams_[stream_of_.at({s.peer_host, s.peer_qpn})];
    s.relaxed = (in.error_index >= 0 || in.lossy_rnr || s.qp->host_err || in.qp->host_err || s.qp->reset ||
                 in.qp->reset) &&
                !s.qp->send.empty();
    s.lossy_err = w_.lossy && s.error_index >= 0;
    if (s.lossy_err)
      for (int i = 0; i < s.error_index; ++i) {
        OpPlan& op = s.ops[size_t(i)];
        if (s.qp->send[size_t(i)].opcode == WrOpcode::Read && op.dst.len) op.conditional = true;
      }
    // from the first WR that needs a receive on, a WR may be RNR-NAKed and never executed
    if (s.lossy_rnr)
      for (size_t i = size_t(s.first_rwqe); i < s.ops.size(); ++i) s.ops[i].conditional = true;
  }
  for (const StreamPlan& s : streams_) {
    char m[200];
    if (s.stall_index >= 0) {
      std::snprintf(m, sizeof m, "host %u qp 0x%x: WR #%d finds no receive WR at the peer (RNR, rnr_retry 7); "
                    "it and later WRs never complete", s.host, s.qpn, s.stall_index);
      p.notes.push_back(m);
    }
    if (s.lossy_err && !s.relaxed) {
      std::snprintf(m, sizeof m, "host %u qp 0x%x: send queue relaxed (WR #%d fails on a lossy link)", s.host,
                    s.qpn, s.error_index);
      p.notes.push_back(m);
    }
    if (s.lossy_rnr && !s.relaxed) {
      std::snprintf(m, sizeof m, "host %u qp 0x%x: send queue and peer receive queue relaxed (lossy link, "
                    "rnr_retry %u: WR #%d on may fail RNR_RETRY_EXC_ERR)", s.host, s.qpn, unsigned(s.qp->rnr_retry),
                    s.first_rwqe);
      p.notes.push_back(m);
    }
    if (s.relaxed) {
      std::snprintf(m, sizeof m, "host %u qp 0x%x: send queue and peer receive queue are relaxed "
                    "(%s)", s.host, s.qpn,
                    s.qp->reset || s.peer->reset         ? "the hosts reset the connection"
                    : s.qp->host_err || s.peer->host_err ? "the host moves the connection to ERR"
                                                         : "the opposite direction failed");
      p.notes.push_back(m);
    }
  }
  build_queues(p);
  move_data(p);
  size_t undet = 0, cond = 0;
  for (const BufferImage& b : p.buffers) {
    undet += size_t(std::count(b.determined.begin(), b.determined.end(), kByteUndetermined));
    cond += size_t(std::count(b.determined.begin(), b.determined.end(), kByteIfWriterSucceeded));
  }
  if (undet) p.notes.push_back(std::to_string(undet) + " bytes have a timing-dependent final value and are not checked");
  if (cond)
    p.notes.push_back(std::to_string(cond) + " bytes are checked only if the WR that writes them last completes "
                      "successfully");
  return p;
}

}  // namespace

Prediction predict(const Workload& w) { return Model(w).run(); }

}  // namespace srnic::verif
