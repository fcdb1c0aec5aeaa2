// Protocol checker: per-frame validation plus per-flow PSN and opcode-sequence rules.
#include "srnic/roce/checker.hpp"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <tuple>

#include "srnic/roce/aeth.hpp"
#include "srnic/roce/psn.hpp"

namespace srnic::roce {

namespace {
std::string hex24(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%06x", v);
  return b;
}
std::string flow_name(const DecodedPacket& p) {
  char b[96];
  if (p.ipv6) {
    std::string s = "dst ";
    for (int i = 0; i < 16; i += 2) {
      std::snprintf(b, sizeof b, "%s%x", i ? ":" : "", get_be16(&p.ip6.dst[i]));
      s += b;
    }
    return s + " qp " + hex24(p.bth.dest_qp);
  }
  const uint32_t a = p.ip4.dst;
  std::snprintf(b, sizeof b, "dst %u.%u.%u.%u qp %s", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
                a & 255, hex24(p.bth.dest_qp).c_str());
  return b;
}
const char* kind_name(OpKind k) { return k == OpKind::Write ? "WRITE" : k == OpKind::Send ? "SEND" : "READ_RESPONSE"; }
}  // namespace

bool ProtocolChecker::FlowKey::operator<(const FlowKey& o) const {
  return std::tie(addr, qpn, response) < std::tie(o.addr, o.qpn, o.response);
}

ProtocolChecker::ProtocolChecker(CheckerConfig cfg) : cfg_(cfg) {}

void ProtocolChecker::report(const std::string& kind, const std::string& detail) {
  frame_ok_ = false;
  ++violations_;
  ++by_kind_[kind];
  if (kept_.size() < cfg_.keep_violations) kept_.push_back({frames_, kind, detail});
}

bool ProtocolChecker::on_frame(const uint8_t* data, size_t len) {
  ++frames_;
  frame_ok_ = true;
  DecodedPacket p;
  const DecodeError e = decode(data, len, p);
  if (e != DecodeError::Ok) {
    std::string d = std::string("frame of ") + std::to_string(len) + " bytes";
    if (p.info) d += std::string(", ") + p.info->name;
    report(decode_error_name(e), d);
    return false;
  }
  ++opcode_counts_[p.bth.opcode];
  const OpcodeInfo& oi = *p.info;
  const std::string who = flow_name(p) + " " + oi.name + " psn " + hex24(p.bth.psn);
  for (uint32_t i = 0; i < p.bth.pad_cnt; ++i)
    if (p.payload[p.payload_len + i] != 0) {
      report("pad_nonzero", who);
      break;
    }
  check_length(p, who);
  if (oi.transport == Transport::RC || oi.transport == Transport::UC) {
    FlowKey k{};
    if (p.ipv6) {
      k.addr = p.ip6.dst;
    } else {
      k.addr[10] = k.addr[11] = 0xFF;  // IPv4-mapped IPv6
      put_be32(&k.addr[12], p.ip4.dst);
    }
    k.qpn = p.bth.dest_qp;
    k.response = oi.is_response;
    Flow& f = flows_[k];
    if (oi.is_response)
      check_response(f, p, who);
    else
      check_request(f, p, who);
    if (oi.is_response) {
      const auto r = response_to_.find(k);
      if (r != response_to_.end()) track_response(tracks_[r->second], p, who);
    } else {
      const auto t = tracks_.find(k);
      if (t != tracks_.end()) track_request(t->second, p);
    }
  }
  return frame_ok_;
}

uint32_t ProtocolChecker::mtu_of(const DecodedPacket& p) const {
  if (cfg_.flow_mtu.empty() || p.ipv6) return cfg_.mtu;
  const auto it = cfg_.flow_mtu.find(flow_mtu_key(p.ip4.dst, p.bth.dest_qp));
  return it == cfg_.flow_mtu.end() ? cfg_.mtu : it->second;
}

ProtocolChecker::FlowKey ProtocolChecker::key_of(const DecodedPacket& p) {
  FlowKey k{};
  if (p.ipv6) {
    k.addr = p.ip6.dst;
  } else {
    k.addr[10] = k.addr[11] = 0xFF;  // IPv4-mapped IPv6
    put_be32(&k.addr[12], p.ip4.dst);
  }
  k.qpn = p.bth.dest_qp;
  k.response = p.info && p.info->is_response;
  return k;
}

void ProtocolChecker::connect(const std::array<uint8_t, 16>& a, uint32_t qpn_a, const std::array<uint8_t, 16>& b,
                              uint32_t qpn_b) {
  const FlowKey req_to_b{b, qpn_b & kPsnMask, false}, resp_to_a{a, qpn_a & kPsnMask, true};
  const FlowKey req_to_a{a, qpn_a & kPsnMask, false}, resp_to_b{b, qpn_b & kPsnMask, true};
  tracks_[req_to_b];
  tracks_[req_to_a];
  response_to_[resp_to_a] = req_to_b;
  response_to_[resp_to_b] = req_to_a;
}

void ProtocolChecker::connect_ipv4(uint32_t ip_a, uint32_t qpn_a, uint32_t ip_b, uint32_t qpn_b) {
  std::array<uint8_t, 16> a{}, b{};
  a[10] = a[11] = b[10] = b[11] = 0xFF;
  put_be32(&a[12], ip_a);
  put_be32(&b[12], ip_b);
  connect(a, qpn_a, b, qpn_b);
}

void ProtocolChecker::disconnect(const std::array<uint8_t, 16>& a, uint32_t qpn_a, const std::array<uint8_t, 16>& b,
                                 uint32_t qpn_b) {
  for (const auto& [addr, qpn] : {std::make_pair(a, qpn_a), std::make_pair(b, qpn_b)})
    for (bool response : {false, true}) {
      const FlowKey k{addr, qpn & kPsnMask, response};
      flows_.erase(k);
      tracks_.erase(k);
      response_to_.erase(k);
    }
}

void ProtocolChecker::disconnect_ipv4(uint32_t ip_a, uint32_t qpn_a, uint32_t ip_b, uint32_t qpn_b) {
  std::array<uint8_t, 16> a{}, b{};
  a[10] = a[11] = b[10] = b[11] = 0xFF;
  put_be32(&a[12], ip_a);
  put_be32(&b[12], ip_b);
  disconnect(a, qpn_a, b, qpn_b);
}

void ProtocolChecker::note_forged(const uint8_t* data, size_t len) {
  ++forged_;
  DecodedPacket p;
  if (decode(data, len, p) != DecodeError::Ok || p.info->is_response) return;
  const auto t = tracks_.find(key_of(p));
  if (t != tracks_.end() && t->second.started) t->second.forged.insert(t->second.unwrap(p.bth.psn));
}

uint64_t ProtocolChecker::ReqTrack::unwrap(uint32_t psn) const {
  return uint64_t(int64_t(next) + psn_diff(psn, uint32_t(next) & kPsnMask));
}

template <class Pred>
std::map<uint64_t, ProtocolChecker::ReqTrack::Read>::iterator ProtocolChecker::ReqTrack::read_covering(uint64_t u,
                                                                                                   Pred pred) {
  // the latest READs starting at or before u (overlapping ones are a resent READ inside its original)
  auto it = reads.upper_bound(u);
  for (int k = 0; k < 1024 && it != reads.begin(); ++k) {
    --it;
    if (u < it->first + it->second.npkts && pred(it->first, it->second)) return it;
  }
  return reads.end();
}

uint32_t ProtocolChecker::ReqTrack::msn_through(uint64_t u) const {
  auto it = msn_at.upper_bound(u);
  return it == msn_at.begin() ? 0 : std::prev(it)->second;
}

// A request of a registered connection: the PSNs it uses, the message it completes, the READ
// it opens.
void ProtocolChecker::track_request(ReqTrack& t, const DecodedPacket& p) {
  const OpcodeInfo& oi = *p.info;
  if (!t.started) {
    t.started = true;
    t.first = t.next = (uint64_t(1) << 32) + p.bth.psn;
  }
  const uint64_t u = t.unwrap(p.bth.psn);
  const bool read = oi.kind == OpKind::ReadRequest;
  const uint32_t mtu = mtu_of(p);
  const uint64_t n = read ? read_psn_count(p.reth.dma_len, mtu) : 1;
  if (u + n > t.next) t.next = u + n;
  const bool ends = read || ((oi.kind == OpKind::Send || oi.kind == OpKind::Write) &&
                             (oi.position == Position::Last || oi.position == Position::Only));
  // a retransmission counts once; so does a READ resent from a later response (inside the READ)
  const bool reread = read && cfg_.allow_retransmit && t.read_covering(u, [u](uint64_t first, const ReqTrack::Read&) {
    return first < u;
  }) != t.reads.end();
  if (ends && !reread && !t.msn_at.count(u)) t.msn_at[u] = ++t.messages;
  if (!read) return;
  // a READ sent again at the same PSN keeps its response state (its responses may be under way)
  const auto [it, fresh] = t.reads.try_emplace(u, ReqTrack::Read{p.reth.dma_len, n, u, mtu});
  if (!fresh) it->second = ReqTrack::Read{p.reth.dma_len, n, it->second.expect, mtu};
}

// A response of a registered connection: ACK/NAK PSN sent by the peer, READ response matching
// an outstanding READ, MSN.
void ProtocolChecker::track_response(ReqTrack& t, const DecodedPacket& p, const std::string& who) {
  const OpcodeInfo& oi = *p.info;
  const uint64_t u = t.started ? t.unwrap(p.bth.psn) : 0;
  const std::string sent = t.started ? "sent " + hex24(uint32_t(t.first) & kPsnMask) + ".." +
                                           hex24(uint32_t(t.next - 1) & kPsnMask)
                                     : "nothing sent";
  auto check_msn = [&](uint32_t want) {
    if ((p.aeth.msn & kPsnMask) != (want & kPsnMask))
      report("msn", who + ": MSN " + std::to_string(p.aeth.msn) + ", the responder completed " +
                        std::to_string(want) + " request messages up to here");
  };
  // With retransmissions a READ may be answered again (a resent or duplicated request) after
  // the responder completed later messages: its responses carry the responder's MSN at that
  // time, from the messages up to the READ to the messages sent so far.
  auto check_msn_at_least = [&](uint32_t lo) {
    const uint32_t got = p.aeth.msn & kPsnMask;
    if (uint32_t(got - lo) & 0x800000 || uint32_t(got - lo) > uint32_t(t.messages - lo))
      report("msn", who + ": MSN " + std::to_string(p.aeth.msn) + ", the responder completed " +
                        std::to_string(lo) + " request messages up to here and " + std::to_string(t.messages) +
                        " have been sent");
  };
  if (oi.kind == OpKind::Ack) {
    const AckType ty = aeth_type(p.aeth.syndrome);
    const bool seq = ty == AckType::Nak && aeth_value(p.aeth.syndrome) == uint8_t(NakCode::PsnSequenceError);
    // A PSN-sequence NAK names the PSN the responder expects, which may be the next to come.
    const bool in_range = t.started && u >= t.first && (seq ? u <= t.next : u < t.next);
    if (!in_range && !(t.started && t.forged.count(u))) {
      report("ack_unsent", who + ": " + (ty == AckType::Ack ? "ACK" : "NAK") + " for a PSN the peer never sent (" +
                               sent + ")");
      return;
    }
    check_msn(ty == AckType::Ack ? t.msn_through(u) : t.msn_through(u - 1));
    return;
  }
  if (oi.kind != OpKind::ReadResponse) return;
  const bool starts = oi.position == Position::First || oi.position == Position::Only;
  auto it = !t.started ? t.reads.end()
            : !cfg_.allow_retransmit
                ? t.read_covering(u, [](uint64_t, const ReqTrack::Read&) { return true; })
                // With retransmissions READs overlap (one resent from a later response lies
                // inside the original): the one this response starts or continues, else the latest.
                : t.read_covering(u, [u, starts](uint64_t first, const ReqTrack::Read& r) {
                    return starts ? u == first : u == r.expect && u != first;
                  });
  if (it == t.reads.end() && t.started && cfg_.allow_retransmit)
    it = t.read_covering(u, [](uint64_t, const ReqTrack::Read&) { return true; });
  if (it == t.reads.end()) {
    report("read_resp_unrequested", who + ": no outstanding READ request covers this PSN (" + sent + ")");
    return;
  }
  ReqTrack::Read& r = it->second;
  const uint64_t idx = u - it->first;
  const std::string rd = "READ at " + hex24(uint32_t(it->first) & kPsnMask) + " of " + std::to_string(r.len) +
                         " bytes (" + std::to_string(r.npkts) + " responses)";
  // a READ answered again from its first response (retransmissions)
  if (cfg_.allow_retransmit && u == it->first) r.expect = u;
  if (u != r.expect)
    report("read_resp_psn", who + ": response " + std::to_string(idx + 1) + " of " + rd + ", expected response " +
                                std::to_string(r.expect - it->first + 1));
  const uint8_t want_op = r.npkts == 1 ? op::kRcReadResponseOnly
                          : idx == 0 ? op::kRcReadResponseFirst
                          : idx + 1 == r.npkts ? op::kRcReadResponseLast
                                               : op::kRcReadResponseMiddle;
  if (p.bth.opcode != want_op)
    report("read_resp_opcode", who + ": response " + std::to_string(idx + 1) + " of " + rd + " must be " +
                                   opcode_name(want_op));
  const uint64_t want_len = idx + 1 < r.npkts ? r.mtu : r.len - (r.npkts - 1) * r.mtu;
  if (p.payload_len != want_len)
    report("read_resp_length", who + ": " + std::to_string(p.payload_len) + " bytes in response " +
                                   std::to_string(idx + 1) + " of " + rd + ", expected " + std::to_string(want_len));
  if (p.info->headers & kHdrAeth) {
    if (cfg_.allow_retransmit)
      check_msn_at_least(t.msn_through(it->first));
    else
      check_msn(t.msn_through(it->first));
  }
  r.expect = u + 1;
  // (with retransmissions a READ stays known: it may be answered again)
  if (idx + 1 >= r.npkts && !cfg_.allow_retransmit) t.reads.erase(it);
}

void ProtocolChecker::check_length(const DecodedPacket& p, const std::string& who) {
  const OpcodeInfo& oi = *p.info;
  if (!oi.has_payload) return;
  const uint32_t n = p.payload_len, mtu = mtu_of(p);
  bool ok = true;
  switch (oi.position) {
    case Position::First:
    case Position::Middle: ok = n == mtu; break;
    case Position::Last: ok = n >= 1 && n <= mtu; break;
    case Position::Only: ok = n <= mtu; break;
    case Position::None: break;
  }
  if (!ok) report("payload_length", who + ": " + std::to_string(n) + " bytes with MTU " + std::to_string(mtu));
}

void ProtocolChecker::check_request(Flow& f, const DecodedPacket& p, const std::string& who) {
  const OpcodeInfo& oi = *p.info;
  bool rewound = false;
  if (f.started && p.bth.psn != f.psn) {
    if (cfg_.allow_retransmit && psn_lt(p.bth.psn, f.psn)) {
      ++retransmits_;
      rewound = true;
    } else if (cfg_.allow_retransmit && !psn_gt(p.bth.psn, f.hi)) {
      // a resend cut short: an acknowledgement covered the rest of what was being sent again,
      // so the requester goes on from a PSN it has sent before (never past the furthest one)
      ++resend_skips_;
      rewound = true;
    } else {
      report("psn_order", who + ": expected " + hex24(f.psn));
    }
  }
  if (f.started && psn_lt(p.bth.psn, f.hi)) ++resent_requests_;
  const uint32_t n = oi.kind == OpKind::ReadRequest ? read_psn_count(p.reth.dma_len, mtu_of(p)) : 1;
  const uint32_t next = psn_add(p.bth.psn, n);
  if (!f.started || psn_gt(next, f.hi)) f.hi = next;
  f.started = true;
  f.psn = next;
  check_sequence(f, p, who, rewound);
}

void ProtocolChecker::check_response(Flow& f, const DecodedPacket& p, const std::string& who) {
  const OpcodeInfo& oi = *p.info;
  const bool continues = oi.position == Position::Middle || oi.position == Position::Last;
  bool rewound = false;
  if (f.started) {
    const int32_t d = psn_diff(p.bth.psn, f.psn);
    const bool ok = continues ? d == 1 : (oi.kind == OpKind::Ack ? d >= 0 : d > 0);
    if (!ok) {
      // a READ re-requested from a PSN inside it may be answered from there as the original
      // READ's continuation (MIDDLE/LAST: Linux rxe replays its saved READ)
      if (cfg_.allow_retransmit && d <= 0 && (!continues || oi.kind == OpKind::ReadResponse)) {
        ++retransmits_;
        rewound = true;
      } else {
        report("psn_order", who + ": previous response psn " + hex24(f.psn));
      }
    }
  }
  f.started = true;
  f.psn = p.bth.psn;
  if (oi.kind == OpKind::ReadResponse) {
    check_sequence(f, p, who, rewound);
  } else if (f.in_progress != OpKind::Cnp) {
    report("opcode_sequence", who + ": READ response in progress");
    f.in_progress = OpKind::Cnp;
  }
}

// FIRST/MIDDLE/LAST/ONLY rules per flow; WRITE payload bytes must add up to RETH.DMA Length.
void ProtocolChecker::check_sequence(Flow& f, const DecodedPacket& p, const std::string& who, bool rewound) {
  const OpcodeInfo& oi = *p.info;
  const bool multi = oi.kind == OpKind::Send || oi.kind == OpKind::Write || oi.kind == OpKind::ReadResponse;
  if (rewound) {
    // A go-back-N restart may resume in the middle of a message with MIDDLE/LAST packets.
    if (oi.position == Position::Middle || oi.position == Position::Last) {
      f.in_progress = oi.kind;
      f.resid_known = false;
    } else {
      f.in_progress = OpKind::Cnp;
    }
  }
  const uint32_t n = p.payload_len;
  switch (multi ? oi.position : Position::None) {
    case Position::First:
      if (f.in_progress != OpKind::Cnp)
        report("opcode_sequence", who + ": " + kind_name(f.in_progress) + " message not finished");
      f.in_progress = oi.kind;
      f.resid_known = oi.kind == OpKind::Write && p.reth.dma_len >= n;
      f.resid = f.resid_known ? p.reth.dma_len - n : 0;
      if (oi.kind == OpKind::Write && p.reth.dma_len <= n)
        report("write_length", who + ": FIRST carries all of DMA length " + std::to_string(p.reth.dma_len));
      break;
    case Position::Middle:
    case Position::Last: {
      if (f.in_progress != oi.kind) {
        report("opcode_sequence", who + ": no " + kind_name(oi.kind) + " message in progress");
        f.resid_known = false;
      } else if (f.resid_known) {
        const bool last = oi.position == Position::Last;
        if (last ? f.resid != n : f.resid <= n) {
          report("write_length", who + ": " + std::to_string(f.resid) + " bytes of DMA length remained");
          f.resid_known = false;
        } else {
          f.resid -= n;
        }
      }
      f.in_progress = oi.position == Position::Last ? OpKind::Cnp : oi.kind;
      break;
    }
    case Position::Only:
    case Position::None:
      if (f.in_progress != OpKind::Cnp && !(rewound && oi.position == Position::Only))
        report("opcode_sequence", who + ": " + kind_name(f.in_progress) + " message not finished");
      f.in_progress = OpKind::Cnp;
      if (oi.kind == OpKind::Write && p.reth.dma_len != n)
        report("write_length", who + ": payload " + std::to_string(n) + " != DMA length " +
                                   std::to_string(p.reth.dma_len));
      break;
  }
}

void ProtocolChecker::print_summary(std::ostream& os, size_t max_listed) const {
  os << "frames: " << frames_ << "  violations: " << violations_ << "  retransmits: " << retransmits_;
  if (resend_skips_) os << "  resends cut short: " << resend_skips_;
  if (forged_) os << "  forged (not checked): " << forged_;
  os << "\n";
  os << "opcodes:\n";
  for (int c = 0; c < 256; ++c)
    if (opcode_counts_[c]) os << "  " << opcode_name(uint8_t(c)) << ": " << opcode_counts_[c] << "\n";
  if (!by_kind_.empty()) {
    os << "violations by kind:\n";
    for (const auto& [k, n] : by_kind_) os << "  " << k << ": " << n << "\n";
    os << "first violations:\n";
    for (size_t i = 0; i < kept_.size() && i < max_listed; ++i)
      os << "  frame " << kept_[i].frame << ": " << kept_[i].kind << ": " << kept_[i].detail << "\n";
  }
}

}  // namespace srnic::roce
