// The send scheduler's invariants, judged on the NICs' interfaces. See sched_checker.hpp.
#include "srnic/env/sched_checker.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "srnic/abi.hpp"
#include "srnic/roce/aeth.hpp"
#include "srnic/roce/psn.hpp"

namespace srnic::verif::env {

namespace {

uint64_t le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// The running index of a WQE (or a CQE's wqe_idx) near producer index pi; ~0 if it would be
// negative.
uint64_t extend(uint64_t pi, uint16_t idx) {
  const int64_t d = int16_t(uint16_t(idx - uint16_t(pi)));
  return d < 0 && uint64_t(-d) > pi ? ~0ull : pi + uint64_t(d);
}

const char* wr_name(uint8_t op) {
  static const char* const kNames[] = {"WRITE", "WRITE_WITH_IMM", "SEND", "SEND_WITH_IMM", "READ"};
  return op <= abi::WR_READ ? kNames[op] : "bad opcode";
}

}  // namespace

// Ethernet + IPv4 (no options, no VLAN: the env's NICs) + UDP to 4791 + BTH of an RC opcode.
bool SchedChecker::decode(const agents::AxisFrame& f, Msg& m) {
  const std::vector<uint8_t>& b = f.bytes;
  constexpr size_t kBth = 14 + 20 + 8;
  if (b.size() < kBth + roce::Bth::kSize + 4 || b[12] != 0x08 || b[13] != 0x00 || b[14] != 0x45 || b[23] != 17 ||
      b[36] != 0x12 || b[37] != 0xB7)
    return false;
  const size_t ip_total = size_t(b[16]) << 8 | b[17];
  if (ip_total + 14 > b.size() || ip_total < 20 + 8 + roce::Bth::kSize + 4) return false;
  const roce::Bth bth = roce::Bth::decode(b.data() + kBth);
  m.info = roce::opcode_info(bth.opcode);
  if (!m.info || m.info->transport != roce::Transport::RC) return false;
  const size_t hdr_end = kBth + roce::Bth::kSize + m.info->header_len;
  const size_t icrc = 14 + ip_total - 4;
  if (hdr_end + bth.pad_cnt > icrc) return false;
  m.opcode = bth.opcode;
  m.dest_qp = bth.dest_qp;
  m.psn = bth.psn;
  m.payload = uint32_t(icrc - hdr_end - bth.pad_cnt);
  size_t off = kBth + roce::Bth::kSize;
  m.has_reth = (m.info->headers & roce::kHdrReth) != 0;
  if (m.has_reth) {
    m.reth = roce::Reth::decode(b.data() + off);
    off += roce::Reth::kSize;
  }
  m.has_imm = (m.info->headers & roce::kHdrImmDt) != 0;
  if (m.has_imm) {
    m.imm = roce::ImmDt::decode(b.data() + off).imm;
    off += roce::ImmDt::kSize;
  }
  m.has_aeth = (m.info->headers & roce::kHdrAeth) != 0;
  if (m.has_aeth) m.syndrome = roce::Aeth::decode(b.data() + off).syndrome;
  m.cycle = f.cycle_last;
  return true;
}

// Does the request message starting with m execute WQE w (at the QP's path MTU)? Opcode (class,
// position, immediate or not), RETH and ONLY payload length; not the immediate's value (srnic
// sends the WQE's 4 immediate bytes in reverse order and the receiving srnic reverses them back
// into its CQE; the data's matter, not the scheduler's).
bool SchedChecker::matches(const Wqe& w, const Msg& m, uint32_t mtu) {
  namespace o = roce::op;
  const bool single = w.op == abi::WR_READ || w.len <= mtu;
  uint8_t want = 0;
  switch (w.op) {
    case abi::WR_WRITE: want = single ? o::kRcWriteOnly : o::kRcWriteFirst; break;
    case abi::WR_WRITE_IMM: want = single ? o::kRcWriteOnlyImm : o::kRcWriteFirst; break;
    case abi::WR_SEND: want = single ? o::kRcSendOnly : o::kRcSendFirst; break;
    case abi::WR_SEND_IMM: want = single ? o::kRcSendOnlyImm : o::kRcSendFirst; break;
    case abi::WR_READ: want = o::kRcReadRequest; break;
    default: return false;  // never executed (LOC_QP_OP_ERR)
  }
  if (m.opcode != want) return false;
  if (m.has_reth && (m.reth.va != w.raddr || m.reth.rkey != w.rkey || m.reth.dma_len != w.len)) return false;
  return !single || w.op == abi::WR_READ || m.payload == w.len;
}

SchedChecker::SchedChecker(uvm::Component& parent, std::string name, const SchedCheckConfig& cfg)
    : ChipTaps(parent, std::move(name)), cfg_(cfg) {}

uint64_t SchedChecker::wait_bound(uint32_t h, uint32_t n) const {
  const double burst = host_[h].burst ? host_[h].burst : cfg_.sched_burst;
  const double ns = cfg_.wait_base_ns + double(n) * burst * 8 / cfg_.turn_gbps;
  return static_cast<uint64_t>(ns * cfg_.clock_mhz / 1000.0);
}

std::string SchedChecker::us(uint64_t cycles) const {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f us", double(cycles) / cfg_.clock_mhz);
  return b;
}

void SchedChecker::violation(uint32_t h, uint32_t qpn, Qp& q, const char* id, const std::string& text) {
  ++st_.violations;
  if (++q.errors > cfg_.errors_per_qp) return;
  error(id, "host " + std::to_string(h) + " QP " + hex(qpn) + ": " + text +
                (q.errors == cfg_.errors_per_qp ? " (further violations of this QP are counted, not printed)" : ""));
}

// ---------------------------------------------------------------------------------------------
// Wait clock: cycles since the later of the oldest unread rung WQE's doorbell and the QP's last
// turn, less the time the QP was stalled on its peer (an RNR wait, a fence).

uint64_t SchedChecker::paused_at(const Qp& q, uint64_t t) {
  if (!q.stall_open) return q.paused;
  // a fence or a full window lasts until an event closes it; an RNR wait ends on its own
  const uint64_t end = (q.fenced || q.win_full) ? t : std::min(t, std::max(q.rnr_until, q.stall_since));
  return q.paused + (end > q.stall_since ? end - q.stall_since : 0);
}

// Closes an RNR stall whose time ran out before t.
void SchedChecker::settle(Qp& q, uint64_t t) {
  if (!q.stall_open || q.fenced || q.win_full || q.rnr_until > t) return;
  q.paused += std::max(q.rnr_until, q.stall_since) - q.stall_since;
  q.stall_open = false;
}

uint32_t SchedChecker::window(const Host& hs) const {
  return hs.window >= 0 ? static_cast<uint32_t>(std::min<int64_t>(hs.window, 1 << 22)) : cfg_.tx_window;
}

void SchedChecker::restart_clock(Host& hs, Qp& q, uint64_t t) {
  t = std::max(t, q.last_t);
  q.last_t = t;
  settle(q, t);
  q.clock_start = t;
  q.clock_snap = paused_at(q, t);
  q.n_max = hs.busy;
}

void SchedChecker::update_stall(Qp& q, uint64_t t, uint64_t rnr_until) {
  t = std::max(t, q.last_t);
  q.last_t = t;
  settle(q, t);
  q.rnr_until = std::max(q.rnr_until, rnr_until);
  const bool fence = fenced_wqe(q) != ~0ull;
  if (fence && !q.fenced) ++st_.fence_stalls;
  q.fenced = fence;
  // the window is full on the wire: the NIC gives the QP no turn until an answer moves it
  const bool wfull = q.win && q.psn_valid && roce::psn_diff(q.psn_hi, q.acked_win) >= int32_t(q.win);
  if (wfull && !q.win_full) ++st_.window_stalls;
  q.win_full = wfull;
  const bool stalled = fence || wfull || t < q.rnr_until;
  if (stalled && !q.stall_open) {
    q.stall_open = true;
    q.stall_since = t;
  } else if (!stalled && q.stall_open) {
    q.paused += t - q.stall_since;
    q.stall_open = false;
  }
}

// The first fenced WQE read and not started behind a READ not answered yet (on the wire or still
// to leave), ~0 if none: the NIC gives the QP no turn until the READs are done.
// read_wqe (optional): the oldest of those READs.
uint64_t SchedChecker::fenced_wqe(const Qp& q, uint64_t* read_wqe) {
  uint64_t rd = q.reads.empty() ? ~0ull : q.reads.front().second;
  for (auto it = q.wqes.lower_bound(q.exec_next); it != q.wqes.end() && it->first < q.next_fetch; ++it) {
    if ((it->second.flags & abi::WQE_FLAG_FENCE) && rd != ~0ull) {
      if (read_wqe) *read_wqe = rd;
      return it->first;
    }
    if (it->second.op == abi::WR_READ && rd == ~0ull) rd = it->first;
  }
  return ~0ull;
}

uint64_t SchedChecker::elapsed(const Qp& q, uint64_t now) {
  const uint64_t span = now > q.clock_start ? now - q.clock_start : 0;
  const uint64_t paused = paused_at(q, std::max(now, q.clock_start)) - q.clock_snap;
  return span > paused ? span - paused : 0;
}

void SchedChecker::refresh_busy(Host& hs, Qp& q) {
  const bool busy = q.state == abi::QPS_RTS && !q.failed &&
                    (q.exec_next < q.rung || (q.psn_valid && roce::psn_lt(q.acked, q.psn_hi)));
  if (busy && !q.busy) ++hs.busy;
  if (!busy && q.busy) --hs.busy;
  q.busy = busy;
}

std::vector<std::pair<uint32_t, uint32_t>> SchedChecker::unanswered(uint32_t h) const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& [qpn, q] : host_[h & 1].qps)
    if (q.state == abi::QPS_RTS && !q.failed && q.psn_valid && roce::psn_lt(q.acked, q.psn_hi))
      out.emplace_back(qpn, q.acked);
  return out;
}

bool SchedChecker::waiting(const Qp& q) {
  return q.state == abi::QPS_RTS && !q.failed && q.next_fetch < q.rung;
}

void SchedChecker::judge_wait(uint32_t h, uint32_t qpn, Qp& q, uint64_t t, bool fetched) {
  const uint64_t w = q.next_fetch;
  const uint64_t e = elapsed(q, t);
  const uint64_t bound = wait_bound(h, q.n_max);
  if (fetched) ++st_.waits;
  if (e > st_.max_wait) {
    st_.max_wait = e;
    st_.max_wait_bound = bound;
  }
  if (e <= bound || q.wait_reported == w) return;
  q.wait_reported = w;
  uint64_t db = 0;
  for (const Doorbell& d : q.dbs)
    if (d.end > w) {
      db = d.cycle;
      break;
    }
  violation(h, qpn, q, "SCHED_WAIT",
            "WQE " + std::to_string(w) + " (rung by the doorbell at cycle " + std::to_string(db) + ") " +
                (fetched ? "was read at cycle " + std::to_string(t) : "is still unread at cycle " + std::to_string(t)) +
                ", " + us(e) + " (clock stops excluded) after the later of its doorbell and the QP's last turn " +
                "(cycle " + std::to_string(q.clock_start) + "); the bound is " + us(bound) + " with " +
                std::to_string(q.n_max) + " QPs busy");
}

void SchedChecker::poll(uint64_t now) {
  const uint64_t grace = static_cast<uint64_t>(cfg_.read_grace_ns * cfg_.clock_mhz / 1000.0);
  for (uint32_t h = 0; h < 2; ++h) {
    Host& hs = host_[h];
    for (auto& [qpn, q] : hs.qps) {
      if (!q.held.empty() && now > q.held.front().cycle + grace) release(h, qpn, q, true);
      if (!waiting(q)) continue;
      q.n_max = std::max(q.n_max, hs.busy);
      judge_wait(h, qpn, q, std::max(now, q.last_t), false);
    }
  }
}

void SchedChecker::tick() {
  if (cycle() % cfg_.poll_cycles == 0) poll(cycle());
}

// ---------------------------------------------------------------------------------------------
// Wire

void SchedChecker::on_frame(uint32_t h, bool received, const agents::AxisFrame& f) {
  Msg m;
  if (!decode(f, m)) return;
  Host& hs = host_[h];
  if (!received) {  // requests of h's requester QPs, responses of its responder QPs
    auto d = hs.by_dest.find(m.dest_qp);
    if (d == hs.by_dest.end()) return;
    auto it = hs.qps.find(d->second);
    if (it == hs.qps.end()) return;
    Qp& q = it->second;
    if (m.info->is_request) {
      on_request_sent(h, it->first, q, m);
    } else if (m.has_aeth && roce::aeth_type(m.syndrome) == roce::AckType::Nak &&
               roce::aeth_value(m.syndrome) != uint8_t(roce::NakCode::PsnSequenceError)) {
      q.failed = true;  // a fatal NAK sent: the responder QP is in ERR
      refresh_busy(hs, q);
    }
    return;
  }
  if (m.info->is_request) return;  // h's responder side
  auto it = hs.qps.find(m.dest_qp);
  if (it != hs.qps.end()) on_response(hs, it->second, m);
}

void SchedChecker::on_request_sent(uint32_t h, uint32_t qpn, Qp& q, const Msg& m) {
  if (!q.psn_valid) return;
  const uint32_t w = window(host_[h]);
  const int32_t ahead = roce::psn_diff(m.psn, q.acked);
  if (ahead >= 0) {
    st_.max_in_flight = std::max<uint64_t>(st_.max_in_flight, static_cast<uint64_t>(ahead));
    if (w && static_cast<uint32_t>(ahead) >= w)
      violation(h, qpn, q, "SCHED_WINDOW",
                std::string(m.info->name) + " at PSN " + hex(m.psn) + " (cycle " + std::to_string(m.cycle) +
                    ") starts " + std::to_string(ahead) + " packets beyond the oldest PSN not answered, " +
                    hex(q.acked) + "; TX_WINDOW is " + std::to_string(w));
  }
  if (!roce::psn_ge(m.psn, q.psn_hi)) {  // go-back-N or an RNR retry: sent before
    ++st_.resent;
    ++st_.resent_by[h & 1];
    return;
  }
  uint32_t end = roce::psn_add(m.psn, 1);
  if (m.opcode == roce::op::kRcReadRequest && m.has_reth)
    end = roce::psn_add(m.psn, roce::read_psn_count(m.reth.dma_len, q.mtu));
  if (roce::psn_gt(end, q.psn_hi)) q.psn_hi = end;
  q.held.push_back(m);
  release(h, qpn, q, false);
  if (!q.held.empty()) ++st_.held;
  refresh_busy(host_[h], q);
  update_stall(q, m.cycle);
}

// Judges the QP's new request packets in order, as far as the WQEs they execute were read. A
// message may leave before the read of its WQE is complete on the bus (the NIC uses each beat
// as it arrives, the monitor publishes a burst at its last beat): it waits for that read, at
// most read_grace; `final` judges whatever waits.
void SchedChecker::release(uint32_t h, uint32_t qpn, Qp& q, bool final) {
  size_t i = 0;
  for (; i < q.held.size(); ++i) {
    const Msg& m = q.held[i];
    if (m.info->position == roce::Position::First || m.info->position == roce::Position::Only) {
      if (!start_message(h, qpn, q, m, final)) break;
    } else if (roce::psn_ge(m.psn, q.next_psn)) {
      violation(h, qpn, q, "SCHED_PSN",
                std::string(m.info->name) + " at PSN " + hex(m.psn) + " (cycle " + std::to_string(m.cycle) +
                    ") is sent for the first time but lies beyond the message it belongs to (the next message "
                    "starts at PSN " + hex(q.next_psn) + ")");
    }
  }
  q.held.erase(q.held.begin(), q.held.begin() + long(i));
}

std::string SchedChecker::describe(uint64_t idx, const Wqe& w) {
  char b[200];
  const int n = std::snprintf(b, sizeof b, "WQE %llu (%s, %u bytes", static_cast<unsigned long long>(idx),
                              wr_name(w.op), w.len);
  if (w.op == abi::WR_WRITE || w.op == abi::WR_WRITE_IMM || w.op == abi::WR_READ)
    std::snprintf(b + n, sizeof b - size_t(n), ", raddr 0x%llx, rkey 0x%x", static_cast<unsigned long long>(w.raddr),
                  w.rkey);
  std::string s = b;
  if (w.op == abi::WR_WRITE_IMM || w.op == abi::WR_SEND_IMM) s += ", immediate " + hex(w.imm);
  return s + ")";
}

std::string SchedChecker::describe(const Msg& m) {
  char b[200];
  if (m.has_reth)
    std::snprintf(b, sizeof b, "%s at PSN 0x%x (va 0x%llx, rkey 0x%x, length %u)", m.info->name, m.psn,
                  static_cast<unsigned long long>(m.reth.va), m.reth.rkey, m.reth.dma_len);
  else
    std::snprintf(b, sizeof b, "%s at PSN 0x%x (%u payload bytes)", m.info->name, m.psn, m.payload);
  return m.has_imm ? std::string(b) + " immediate " + hex(m.imm) : std::string(b);
}

// A request message sent for the first time: it must execute the next WQE (or the first after
// WQEs that completed in error without being sent). False (nothing done) while a WQE it may
// execute is not read yet, unless `final`.
bool SchedChecker::start_message(uint32_t h, uint32_t qpn, Qp& q, const Msg& m, bool final) {
  const auto is = [&](const Wqe& w) { return matches(w, m, q.mtu); };
  // the next WQE, past WQEs that completed in error unsent
  uint64_t hit = ~0ull;
  for (uint64_t j = q.exec_next;; ++j) {
    auto it = q.wqes.find(j);
    if (it == q.wqes.end()) {
      if (!final) return false;
      break;
    }
    if (is(it->second)) {
      hit = j;
      break;
    }
    if (it->second.err < 0) break;
  }
  // a later WQE (the ones before it skipped), unless a read still to come may hold the match
  uint64_t later = ~0ull;
  if (hit == ~0ull)
    for (uint64_t k = q.exec_next + 1; k < q.exec_next + 64; ++k) {
      auto it = q.wqes.find(k);
      if (it == q.wqes.end()) {
        if (!final && k < q.rung) return false;
        break;
      }
      if (is(it->second)) {
        later = k;
        break;
      }
    }
  const std::string when = " (cycle " + std::to_string(m.cycle) + ")";
  if (m.psn != q.next_psn)
    violation(h, qpn, q, "SCHED_PSN",
              "message " + describe(m) + when + " starts at another PSN than the one the messages before it left, " +
                  hex(q.next_psn));
  const auto take = [&](uint64_t idx, Wqe& w) {
    w.executed = true;
    w.exec_psn = m.psn;
    w.exec_cycle = m.cycle;
    q.exec_next = std::max(q.exec_next, idx + 1);
    q.next_psn = roce::psn_add(m.psn, roce::read_psn_count(w.len, q.mtu));
    const uint32_t last = roce::psn_add(q.next_psn, roce::kPsnMask);
    if (w.op == abi::WR_READ && !(q.rd_seen && roce::psn_le(last, q.rd_last))) q.reads.emplace_back(last, idx);
    ++st_.messages;
  };
  if (hit != ~0ull) {
    st_.unsent_in_error += hit - q.exec_next;
    take(hit, q.wqes[hit]);
    return true;
  }
  // a WQE already executed, started again under new PSNs
  for (uint64_t k = q.exec_next; k > 0 && k + 64 > q.exec_next;) {
    auto it = q.wqes.find(--k);
    if (it == q.wqes.end() || !it->second.executed || !is(it->second)) continue;
    violation(h, qpn, q, "SCHED_TWICE",
              describe(k, it->second) + " executed twice: first as the message at PSN " + hex(it->second.exec_psn) +
                  " (cycle " + std::to_string(it->second.exec_cycle) + "), again as the new message " + describe(m) +
                  when);
    q.next_psn = roce::psn_add(m.psn, roce::read_psn_count(it->second.len, q.mtu));
    return true;
  }
  auto first = q.wqes.find(q.exec_next);
  if (later != ~0ull) {
    violation(h, qpn, q, "SCHED_SKIPPED",
              (first == q.wqes.end() ? "WQE " + std::to_string(q.exec_next) + " (never read)"
                                     : describe(q.exec_next, first->second)) +
                  (later > q.exec_next + 1 ? " (and the WQEs up to " + std::to_string(later - 1) + ")" : "") +
                  " skipped: never sent, no error completion, and " + describe(later, q.wqes[later]) +
                  " started after it as " + describe(m) + when);
    take(later, q.wqes[later]);
    return true;
  }
  violation(h, qpn, q, "SCHED_MISMATCH",
            "the new message " + describe(m) + when + " executes no WQE the NIC read: the next WQE to start is " +
                (first == q.wqes.end() ? "WQE " + std::to_string(q.exec_next) + ", never read"
                                       : describe(q.exec_next, first->second)));
  if (first != q.wqes.end()) take(q.exec_next, first->second);
  else q.next_psn = roce::psn_add(m.psn, 1);
  return true;
}

// A response received for one of h's requester QPs. Two bounds on the NIC's oldest
// unacknowledged PSN (una): `acked`, at or beyond it (every answer counted, in or out of order),
// judges the in-flight cap, so that a packet the NIC may send is never a violation; `acked_win`,
// at or before it (ACKs not past a READ still open, a READ's last response in PSN order: the
// NIC's window counts a READ done only at its last response, not at the ones before it),
// judges a full window, so that the clock stops whenever the NIC may be waiting for credit.
// `acked_lo` is where READ responses count as in order (every in-order response moves it). The
// NIC takes READ responses in order only (one beyond a gap is dropped and a re-read requested)
// and an ACK during a retry episode may move una past a READ being re-read; neither bound has
// to follow the episodes.
void SchedChecker::on_response(Host& hs, Qp& q, const Msg& m) {
  if (!q.psn_valid || !roce::psn_lt(m.psn, q.psn_hi)) return;  // the NIC drops responses to PSNs never sent
  const auto ack = [&q](uint32_t next, bool lo, bool win) {
    if (roce::psn_gt(next, q.acked)) q.acked = next;
    if (lo && roce::psn_gt(next, q.acked_lo)) q.acked_lo = next;
    if (win && roce::psn_gt(next, q.acked_win)) q.acked_win = next;
  };
  // the first PSN of the oldest READ not answered in order in full
  uint32_t rd_first = 0;
  bool rd_open = false;
  if (!q.reads.empty()) {
    auto w = q.wqes.find(q.reads.front().second);
    if (w != q.wqes.end() && w->second.executed) {
      rd_first = w->second.exec_psn;
      rd_open = true;
    }
  }
  uint64_t rnr_until = 0;
  if (m.opcode == roce::op::kRcAck && m.has_aeth) {
    switch (roce::aeth_type(m.syndrome)) {
      case roce::AckType::Ack: {
        // an ACK beyond a READ still open is an implied NAK for it, or, during an episode,
        // only an acknowledgement: acked_lo stops at the READ (or at its in-order responses)
        const uint32_t next = roce::psn_add(m.psn, 1);
        const bool past_read = rd_open && roce::psn_gt(next, rd_first);
        ack(past_read ? rd_first : next, true, true);
        ack(next, false, false);
        break;
      }
      case roce::AckType::RnrNak: {
        ++st_.rnr_naks;
        ack(m.psn, true, true);
        const double ns = 1000.0 * roce::rnr_timer_us(roce::aeth_value(m.syndrome)) + cfg_.rnr_sweep_ns;
        rnr_until = m.cycle + static_cast<uint64_t>(ns * cfg_.clock_mhz / 1000.0);
        break;
      }
      case roce::AckType::Nak:
        ack(m.psn, true, true);
        if (roce::aeth_value(m.syndrome) != uint8_t(roce::NakCode::PsnSequenceError)) q.failed = true;
        break;
      default: break;
    }
  } else if (m.info->kind == roce::OpKind::ReadResponse) {
    // in order: at the oldest PSN not answered, or at the first PSN of the oldest open READ (a
    // READ response also answers the requests before it, whose ACK may have been lost)
    const bool in_order = roce::psn_le(m.psn, q.acked_lo) || (rd_open && m.psn == rd_first);
    const bool last = m.info->position == roce::Position::Last || m.info->position == roce::Position::Only;
    ack(roce::psn_add(m.psn, 1), in_order, in_order && last);
    if (!in_order) {
      ++st_.responses_out_of_order;
    } else {
      if (m.info->position == roce::Position::Last || m.info->position == roce::Position::Only) {
        while (!q.reads.empty() && roce::psn_le(q.reads.front().first, m.psn)) q.reads.pop_front();
        if (!q.rd_seen || roce::psn_gt(m.psn, q.rd_last)) q.rd_last = m.psn;
        q.rd_seen = true;
      }
    }
  }
  refresh_busy(hs, q);
  update_stall(q, m.cycle, rnr_until);
}

// ---------------------------------------------------------------------------------------------
// DMA

SchedChecker::Ring* SchedChecker::find_ring(uint32_t h, uint64_t addr) {
  auto& rings = host_[h].rings;
  auto it = rings.upper_bound(addr);
  if (it == rings.begin()) return nullptr;
  --it;
  return addr < it->second.base + it->second.bytes ? &it->second : nullptr;
}

void SchedChecker::set_ring(uint32_t h, bool cq, uint32_t owner, uint64_t base, uint64_t bytes) {
  auto& rings = host_[h].rings;
  for (auto it = rings.begin(); it != rings.end();)
    it = it->second.cq == cq && it->second.owner == owner ? rings.erase(it) : std::next(it);
  if (!base || !bytes) return;
  Ring r;
  r.base = base;
  r.bytes = bytes;
  r.owner = owner;
  r.cq = cq;
  rings[base] = r;
}

// SQ WQE reads (AXI ID 0, decision 11): one per scheduling turn, from the QP's send cursor.
void SchedChecker::on_read(uint32_t h, const agents::Axi4ReadTxn& t) {
  if (t.id != 0) return;
  Host& hs = host_[h];
  Ring* r = find_ring(h, t.addr);
  if (!r || r->cq) return;
  auto qit = hs.qps.find(r->owner);
  if (qit == hs.qps.end() || !qit->second.sq_entries) return;
  const uint32_t qpn = qit->first;
  Qp& q = qit->second;
  const uint64_t slot0 = (t.addr - r->base) / 64;
  const uint64_t before = q.next_fetch;
  const bool was_waiting = waiting(q);
  bool turn = false;
  ++st_.turns;
  for (size_t k = 0; (k + 1) * 64 <= t.data.size(); ++k) {
    const uint8_t* w = t.data.data() + k * 64;
    const uint64_t ext = extend(q.pi, uint16_t(le(w + 2, 2)));
    // a slot the host has not written again holds an older WQE; one never written, no index
    if (ext == ~0ull || ext % q.sq_entries != (slot0 + k) % q.sq_entries) continue;
    if (ext < q.exec_next && !q.wqes.count(ext)) continue;  // long executed and forgotten
    auto [it, fresh] = q.wqes.try_emplace(ext);
    Wqe& x = it->second;
    if (fresh) {
      x.op = w[0];
      x.flags = w[1];
      x.imm = uint32_t(w[4]) << 24 | uint32_t(w[5]) << 16 | uint32_t(w[6]) << 8 | w[7];  // (for messages)
      x.len = uint32_t(le(w + 24, 4));
      x.raddr = le(w + 32, 8);
      x.rkey = uint32_t(le(w + 40, 4));
      x.first_fetch = t.cycle_addr;
      ++st_.wqes_fetched;
    } else {
      ++st_.refetches;
    }
    ++x.fetches;
    turn = turn || ext <= before;
  }
  if (was_waiting && q.wqes.count(q.next_fetch)) judge_wait(h, qpn, q, std::max(t.cycle_addr, q.last_t), true);
  while (q.wqes.count(q.next_fetch)) ++q.next_fetch;
  while (!q.dbs.empty() && q.dbs.front().end <= q.next_fetch) q.dbs.pop_front();
  // the next wait starts at the later of this turn and the doorbell of the WQE it is for
  if (turn) restart_clock(hs, q, std::max(t.cycle_addr, q.dbs.empty() ? 0 : q.dbs.front().cycle));
  if (!q.held.empty()) release(h, qpn, q, false);
  // forget what can no longer be matched
  const uint64_t keep = std::min(q.exec_next, q.next_fetch);
  while (!q.wqes.empty() && q.wqes.begin()->first + 64 < keep) q.wqes.erase(q.wqes.begin());
  update_stall(q, t.cycle_addr);
}

// CQEs (DMA writes into a CQ ring): an error CQE marks its QP failed and its WQE as completed
// in error.
void SchedChecker::on_write(uint32_t h, const agents::Axi4WriteTxn& t) {
  Host& hs = host_[h];
  Ring* cq = find_ring(h, t.addr);
  if (!cq || !cq->cq) return;
  const uint64_t base = t.addr & ~uint64_t(agents::kAxiDataBytes - 1);
  for (size_t off = 0; off + 32 <= t.data.size(); off += 32) {
    bool all = true;
    for (size_t i = 0; i < 32; ++i) all = all && t.strb[off + i];
    const uint64_t a = base + off;
    if (!all || a < cq->base || a >= cq->base + cq->bytes) continue;
    const uint8_t* c = t.data.data() + off;
    const uint8_t status = c[23];
    if (status == abi::WC_SUCCESS) continue;
    auto qit = hs.qps.find(uint32_t(le(c + 16, 4)) & 0xFFFFFF);
    if (qit == hs.qps.end()) continue;
    Qp& q = qit->second;
    q.failed = true;
    bool send = c[22] < abi::WC_RECV;
    if (q.send_cqn != q.recv_cqn) send = cq->owner == q.send_cqn;
    if (send) {
      auto w = q.wqes.find(extend(q.pi, uint16_t(le(c + 20, 2))));
      if (w != q.wqes.end()) w->second.err = status;
    }
    refresh_busy(hs, q);
  }
}

// ---------------------------------------------------------------------------------------------
// CSR: commands the NIC accepted, doorbells, the scheduler burst

void SchedChecker::on_csr(uint32_t h, const agents::AxiLiteTxn& t) {
  Host& hs = host_[h];
  const uint32_t a = t.addr & 0xFFFF;
  if (t.write) {
    if (hs.cmd.on_write(a, t.data, t.strb)) return;
    if (a == abi::REG_DB_SQ) {
      on_doorbell(h, t.data & 0xFFFF, uint16_t(t.data >> 16), t.cycle_req);
    } else if (a == abi::REG_SCHED_BURST && t.strb == 0xF) {
      hs.burst = std::max<uint32_t>(t.data, 64);
    } else if (a == abi::REG_TX_WINDOW && t.strb == 0xF) {
      hs.window = t.data;
    }
    return;
  }
  for (const CsrCommand::Cmd& c : hs.cmd.on_read(a, t.data)) apply_command(h, c, t.cycle_rsp);
}

void SchedChecker::on_doorbell(uint32_t h, uint32_t qpn, uint16_t pi, uint64_t t) {
  Host& hs = host_[h];
  auto it = hs.qps.find(qpn);
  if (it == hs.qps.end()) return;
  Qp& q = it->second;
  const uint16_t step = uint16_t(pi - uint16_t(q.pi));
  if (step >= 0x8000) return;  // not forward: the host's mistake, not the NIC's
  q.pi += step;
  if (q.state != abi::QPS_RTS || q.failed) return;
  ++st_.doorbells;
  if (q.pi <= q.rung) return;
  st_.wqes_rung += q.pi - q.rung;
  const bool was_waiting = waiting(q);
  q.rung = q.pi;
  q.dbs.push_back({q.pi, t});
  refresh_busy(hs, q);
  if (!was_waiting) restart_clock(hs, q, t);  // a wait starts at this doorbell
}

void SchedChecker::apply_command(uint32_t h, const CsrCommand::Cmd& c, uint64_t t) {
  Host& hs = host_[h];
  const uint8_t* p = c.payload;
  if (c.op == abi::CMD_QP_MODIFY) {
    Qp& q = hs.qps[c.index];
    const uint8_t state = p[0];
    if (q.dest_qpn && hs.by_dest.count(q.dest_qpn) && hs.by_dest[q.dest_qpn] == c.index)
      hs.by_dest.erase(q.dest_qpn);
    if (state == abi::QPS_RESET) {
      if (q.busy) --hs.busy;
      q = Qp{};
    }
    if (p[1] >= 1 && p[1] <= 5) q.mtu = 128u << p[1];
    q.dest_qpn = uint32_t(le(p + 8, 4)) & 0xFFFFFF;
    if (state == abi::QPS_RTR || state == abi::QPS_RTS) hs.by_dest[q.dest_qpn] = c.index;
    q.send_cqn = uint16_t(le(p + 24, 2));
    q.recv_cqn = uint16_t(le(p + 26, 2));
    const unsigned lsq = p[3];
    q.sq_entries = lsq && lsq <= 15 ? 1u << lsq : 0;
    set_ring(h, false, c.index, le(p + 40, 8), uint64_t(q.sq_entries) * 64);
    if (state == abi::QPS_RTS && q.state != abi::QPS_RTS) {
      q.psn_valid = true;
      q.next_psn = q.psn_hi = q.acked = q.acked_lo = q.acked_win = uint32_t(le(p + 16, 4)) & roce::kPsnMask;
      q.win = window(hs);
      restart_clock(hs, q, t);
    }
    if (state == abi::QPS_ERR) q.failed = true;
    q.state = state;
    refresh_busy(hs, q);
  } else if (c.op == abi::CMD_CQ_WRITE) {
    const unsigned lsz = p[8];
    set_ring(h, true, c.index, le(p, 8), (p[9] & 1) && lsz <= 15 ? (32ull << lsz) : 0);
  }
}

// ---------------------------------------------------------------------------------------------
// End of run: every WQE rung on a QP still in RTS was read and started on the wire.

void SchedChecker::check() {
  for (uint32_t h = 0; h < 2; ++h)
    for (auto& [qpn, q] : host_[h].qps) {
      if (!q.held.empty()) release(h, qpn, q, true);
      if (q.state != abi::QPS_RTS || q.failed || !q.psn_valid) continue;
      ++st_.qps_checked;
      if (q.next_fetch < q.rung) {
        uint64_t db = 0;
        for (const Doorbell& d : q.dbs)
          if (d.end > q.next_fetch) {
            db = d.cycle;
            break;
          }
        uint64_t rd = ~0ull;
        const uint64_t f = fenced_wqe(q, &rd);
        std::string why;
        if (f != ~0ull)
          why = ", its WQE " + std::to_string(f) + " fenced behind READ WQE " + std::to_string(rd) +
                (rd < q.exec_next ? ", sent and never answered" : ", never started on the wire");
        violation(h, qpn, q, "SCHED_LOST_DOORBELL",
                  "WQEs " + std::to_string(q.next_fetch) + ".." + std::to_string(q.rung - 1) +
                      " were rung (the first by the doorbell at cycle " + std::to_string(db) +
                      ") and never read by the NIC; the QP is still in RTS" + why);
      } else if (q.exec_next < q.rung) {
        auto it = q.wqes.find(q.exec_next);
        violation(h, qpn, q, "SCHED_NOT_EXECUTED",
                  (it == q.wqes.end() ? "WQE " + std::to_string(q.exec_next)
                                      : describe(q.exec_next, it->second) + ", first read at cycle " +
                                            std::to_string(it->second.first_fetch) + ",") +
                      " and " + std::to_string(q.rung - q.exec_next - 1) +
                      " rung WQEs after it never started on the wire, and none completed in error; the QP is still "
                      "in RTS");
      }
    }
}

void SchedChecker::report() {
  char b[768];
  std::snprintf(b, sizeof b,
                "%llu SQ doorbells rang %llu WQEs; %llu turns read %llu WQEs (%llu reads again); %llu waits measured, "
                "longest %s against its bound %s; %llu messages started in WQE order, %llu request packets resent, "
                "%llu WQEs passed over with an error CQE, %llu new packets waited for their WQE's read; clock "
                "stopped for %llu RNR NAKs, %llu fence waits and %llu full windows (%llu READ responses beyond a gap answered nothing); %llu QPs judged at the end; a request packet at most %llu packets beyond the oldest unanswered PSN; "
                "%llu violations",
                static_cast<unsigned long long>(st_.doorbells), static_cast<unsigned long long>(st_.wqes_rung),
                static_cast<unsigned long long>(st_.turns), static_cast<unsigned long long>(st_.wqes_fetched),
                static_cast<unsigned long long>(st_.refetches), static_cast<unsigned long long>(st_.waits),
                us(st_.max_wait).c_str(), us(st_.max_wait_bound).c_str(),
                static_cast<unsigned long long>(st_.messages), static_cast<unsigned long long>(st_.resent),
                static_cast<unsigned long long>(st_.unsent_in_error), static_cast<unsigned long long>(st_.held),
                static_cast<unsigned long long>(st_.rnr_naks),
                static_cast<unsigned long long>(st_.fence_stalls), static_cast<unsigned long long>(st_.window_stalls),
                static_cast<unsigned long long>(st_.responses_out_of_order),
                static_cast<unsigned long long>(st_.qps_checked),
                static_cast<unsigned long long>(st_.max_in_flight), static_cast<unsigned long long>(st_.violations));
  info("SCHED_SUMMARY", b, uvm::verbosity::kLow);
}

}  // namespace srnic::verif::env
