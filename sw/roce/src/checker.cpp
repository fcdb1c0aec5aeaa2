// Protocol checker: per-frame validation plus per-flow PSN and opcode-sequence rules.
#include "srnic/roce/checker.hpp"

#include <cstdio>
#include <cstring>
#include <tuple>

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
  }
  return frame_ok_;
}

uint32_t ProtocolChecker::mtu_of(const DecodedPacket& p) const {
  if (cfg_.flow_mtu.empty() || p.ipv6) return cfg_.mtu;
  const auto it = cfg_.flow_mtu.find(flow_mtu_key(p.ip4.dst, p.bth.dest_qp));
  return it == cfg_.flow_mtu.end() ? cfg_.mtu : it->second;
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
    } else {
      report("psn_order", who + ": expected " + hex24(f.psn));
    }
  }
  f.started = true;
  const uint32_t n = oi.kind == OpKind::ReadRequest ? read_psn_count(p.reth.dma_len, mtu_of(p)) : 1;
  f.psn = psn_add(p.bth.psn, n);
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
      if (cfg_.allow_retransmit && d <= 0 && !continues) {
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
  os << "frames: " << frames_ << "  violations: " << violations_ << "  retransmits: " << retransmits_ << "\n";
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
