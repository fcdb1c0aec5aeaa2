// Functional coverage sampled on the NICs' interfaces. See dut_coverage.hpp.
#include "srnic/env/dut_coverage.hpp"

#include <cstdio>
#include <cstring>
#include <sstream>

#include "srnic/abi.hpp"
#include "srnic/roce/aeth.hpp"
#include "srnic/roce/headers.hpp"
#include "srnic/roce/opcode.hpp"
#include "srnic/roce/psn.hpp"

namespace srnic::verif::env {

namespace {

// cg_wire
enum WireDir : int64_t { kSent = 0, kReceived = 1 };
enum Syndrome : int64_t { kSynAck, kSynRnr, kSynPsnSeq, kSynInvReq, kSynRemAccess, kSynRemOp };
enum PsnWrap : int64_t { kWrapReqStart, kWrapReqInside, kWrapReadResp, kWrapAck };
// a frame the NIC sent at a PSN not beyond the last of its stream (go-back-N)
enum Resend : int64_t { kResendRequest, kResendReadResponse, kResendAck };
// cg_recovery: NIC counters of the recovery machinery, and how far each got in a run
struct RecoveryCounter {
  int index;
  const char* name;
};
constexpr RecoveryCounter kRecoveryCounters[] = {
    {abi::CNT_TX_RETRANSMIT, "tx_retransmit"}, {abi::CNT_REWIND, "rewind"},      {abi::CNT_ACK_TIMEOUT, "ack_timeout"},
    {abi::CNT_RX_DUP, "rx_dup"},               {abi::CNT_RX_PSN_ERR, "rx_psn_err"}, {abi::CNT_TX_NAK, "tx_nak"},
    {abi::CNT_RX_NAK, "rx_nak"},               {abi::CNT_RNR_WAIT, "rnr_wait"},      {abi::CNT_STALE_WQE, "stale_wqe"}};
// cg_dma
enum DmaKind : int64_t { kWqeFetch, kRqWqeFetch, kPayloadRead, kPayloadWrite, kCqeWrite, kCompRefetch };
enum Align : int64_t { kAlign64, kAlign4, kAlignOdd };
enum Strobe : int64_t { kStrbFull, kStrbHead, kStrbTail, kStrbHeadTail };
enum RingWrap : int64_t { kWrapSq, kWrapRq, kWrapCq, kWrapSqBatch };
// cg_err
enum BatchPos : int64_t { kPosFirst, kPosMiddle, kPosLast, kPosOnly };

constexpr int64_t kNa = -1;  // no bin: the coverpoint does not apply to this sample

uint64_t le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

int64_t align_class(uint64_t a) { return a % 64 == 0 ? kAlign64 : a % 4 == 0 ? kAlign4 : kAlignOdd; }

bool crosses_4k(uint64_t start, uint64_t len) { return len > 0 && start / 4096 != (start + len - 1) / 4096; }

int64_t position(const roce::OpcodeInfo* oi) {
  switch (oi->position) {
    case roce::Position::First: return kPosFirst;
    case roce::Position::Middle: return kPosMiddle;
    case roce::Position::Last: return kPosLast;
    case roce::Position::Only: return kPosOnly;
    default: return kNa;
  }
}

}  // namespace

DutCoverage::DutCoverage(uvm::Component& parent, std::string name)
    : ChipTaps(parent, std::move(name)),
      cg_wire("cg_wire", this),
      cg_dma("cg_dma", this),
      cg_err("cg_err", this),
      cg_recovery("cg_recovery", this) {
  // ---- cg_wire: {dir, opcode, state, position, syndrome, psn_wrap}
  auto& dir = cg_wire.coverpoint("dir");
  dir.bin("sent", kSent).bin("received", kReceived);
  auto& op = cg_wire.coverpoint("opcode");
  op.bin("send_first", 0x00).bin("send_middle", 0x01).bin("send_last", 0x02).bin("send_last_imm", 0x03)
      .bin("send_only", 0x04).bin("send_only_imm", 0x05).bin("write_first", 0x06).bin("write_middle", 0x07)
      .bin("write_last", 0x08).bin("write_last_imm", 0x09).bin("write_only", 0x0A).bin("write_only_imm", 0x0B)
      .bin("read_request", 0x0C).bin("read_resp_first", 0x0D).bin("read_resp_middle", 0x0E)
      .bin("read_resp_last", 0x0F).bin("read_resp_only", 0x10).bin("ack", 0x11).default_bin("other");
  auto& st = cg_wire.coverpoint("qp_state");
  st.bin("rts", abi::QPS_RTS).bin("err", abi::QPS_ERR).default_bin("other");
  auto& pos = cg_wire.coverpoint("position");
  pos.bin("first", kPosFirst).bin("middle", kPosMiddle).bin("last", kPosLast).bin("only", kPosOnly);
  auto& syn = cg_wire.coverpoint("syndrome");
  syn.bin("ack", kSynAck).bin("rnr_nak", kSynRnr).bin("nak_psn_seq_err", kSynPsnSeq).bin("nak_inv_req", kSynInvReq)
      .bin("nak_rem_access", kSynRemAccess).bin("nak_rem_op", kSynRemOp);
  auto& wrap = cg_wire.coverpoint("psn_wrap");
  wrap.bin("request_at_message_start", kWrapReqStart).bin("request_inside_message", kWrapReqInside)
      .bin("read_response", kWrapReadResp).bin("ack", kWrapAck);
  cg_wire.cross("dir_x_opcode_x_state", {&dir, &op, &st}).ignore_if([](const std::vector<std::string>& b) {
    // A QP in ERR sends no requests, READ responses or ACKs (srnic drops what reaches it,
    // decision 19); the random traffic keeps requests off failing QPs, so a QP in ERR
    // receives only what was already in flight towards its requester side: ACKs and READ
    // responses of WQEs behind the failure.
    if (b[2] != "err") return false;
    return b[0] == "sent" || (b[1].rfind("read_resp", 0) != 0 && b[1] != "ack");
  });
  auto& resend = cg_wire.coverpoint("resent");
  resend.bin("request", kResendRequest).bin("read_response", kResendReadResponse).bin("ack", kResendAck);
  cg_wire.cross("dir_x_syndrome", {&dir, &syn});
  cg_wire.cross("resent_x_opcode", {&resend, &op}).ignore_if([](const std::vector<std::string>& b) {
    // requests are resent as requests, READs answered again with READ responses, duplicates
    // acknowledged again with ACKs
    const bool req = b[1].rfind("send", 0) == 0 || b[1].rfind("write", 0) == 0 || b[1] == "read_request";
    if (b[0] == "request") return !req;
    if (b[0] == "read_response") return b[1].rfind("read_resp", 0) != 0;
    return b[1] != "ack";
  });
  cg_wire.cross("dir_x_psn_wrap", {&dir, &wrap});

  // ---- cg_dma: {kind, align, cross_4k, wstrb, ring_wrap, phase_flip}
  auto& kind = cg_dma.coverpoint("kind");
  kind.bin("wqe_fetch", kWqeFetch).bin("rq_wqe_fetch", kRqWqeFetch).bin("payload_read", kPayloadRead)
      .bin("payload_write", kPayloadWrite).bin("cqe_write", kCqeWrite).bin("completion_refetch", kCompRefetch);
  auto& al = cg_dma.coverpoint("align");
  al.bin("64B", kAlign64).bin("4B", kAlign4).bin("odd", kAlignOdd);
  auto& c4k = cg_dma.coverpoint("cross_4k");
  c4k.bin("no", 0).bin("yes", 1);
  auto& strb = cg_dma.coverpoint("wstrb");
  strb.bin("full", kStrbFull).bin("partial_head", kStrbHead).bin("partial_tail", kStrbTail)
      .bin("partial_head_tail", kStrbHeadTail);
  auto& rw = cg_dma.coverpoint("ring_wrap");
  rw.bin("sq_wqe_fetch", kWrapSq).bin("rq_wqe_fetch", kWrapRq).bin("cqe_write", kWrapCq)
      .bin("sq_doorbell_across_end", kWrapSqBatch);  // one doorbell's WQEs run past the ring end
  auto& ph = cg_dma.coverpoint("cq_phase_flip");
  ph.bin("to_0", 0).bin("to_1", 1);
  cg_dma.cross("kind_x_align_x_cross_4k", {&kind, &al, &c4k}).ignore_if([](const std::vector<std::string>& b) {
    return b[0] != "payload_read" && b[0] != "payload_write";  // rings are entry-aligned
  });

  // ---- cg_err: {queue, status, batch_pos, packets}
  auto& q = cg_err.coverpoint("queue");
  q.bin("send", 0).bin("recv", 1);
  auto& es = cg_err.coverpoint("status");
  es.bin("loc_qp_op_err", abi::WC_LOC_QP_OP_ERR).bin("loc_prot_err", abi::WC_LOC_PROT_ERR)
      .bin("wr_flush_err", abi::WC_WR_FLUSH_ERR).bin("bad_resp_err", abi::WC_BAD_RESP_ERR)
      .bin("rem_inv_req_err", abi::WC_REM_INV_REQ_ERR).bin("rem_access_err", abi::WC_REM_ACCESS_ERR)
      .bin("rem_op_err", abi::WC_REM_OP_ERR).bin("retry_exc_err", abi::WC_RETRY_EXC_ERR)
      .bin("rnr_retry_exc_err", abi::WC_RNR_RETRY_EXC_ERR).default_bin("other");
  auto& bp = cg_err.coverpoint("batch_pos");
  bp.bin("first", kPosFirst).bin("middle", kPosMiddle).bin("last", kPosLast).bin("only", kPosOnly);
  auto& pk = cg_err.coverpoint("packets");
  pk.bin("single", 0).bin("multi", 1);
  cg_err.cross("queue_x_status", {&q, &es}).ignore_if([](const std::vector<std::string>& b) {
    // requester-only statuses; a receive completes with SUCCESS, WR_FLUSH_ERR, REM_INV_REQ_ERR,
    // REM_ACCESS_ERR or LOC_QP_OP_ERR (receive buffer key)
    return b[0] == "recv" && (b[1] == "loc_prot_err" || b[1] == "rnr_retry_exc_err" || b[1] == "bad_resp_err" ||
                              b[1] == "retry_exc_err" || b[1] == "rem_op_err");
  });
  // ---- cg_recovery: {counter, amount} per NIC at the end of a run
  auto& rc = cg_recovery.coverpoint("counter");
  for (const RecoveryCounter& c : kRecoveryCounters) rc.bin(c.name, c.index);
  auto& ra = cg_recovery.coverpoint("amount");
  ra.range("1-15", 1, 15).range("16+", 16, int64_t(1) << 32);
  cg_recovery.cross("counter_x_amount", {&rc, &ra}).ignore_if([](const std::vector<std::string>& b) {
    // the traffic posts every receive before the send that consumes it: RNR waits are few;
    // a reused WQE slot needs a rewind that acknowledgements overtake: a few per run at most
    return (b[0] == "rnr_wait" || b[0] == "stale_wqe") && b[1] == "16+";
  });

  cg_err.cross("status_x_batch_pos_x_packets", {&es, &bp, &pk}).ignore_if([](const std::vector<std::string>& b) {
    // the failing WQE's own status (flushed ones are not failing); statuses the random
    // traffic cannot provoke (malformed WQEs, lost or forged responses, receive buffers without
    // local write) are covered by the directed full-chip tests and stay in the status bins
    return b[0] == "wr_flush_err" || b[0] == "loc_qp_op_err" || b[0] == "bad_resp_err" || b[0] == "retry_exc_err" ||
           b[0] == "rem_op_err";
  });
}

uint8_t DutCoverage::qp_state(uint32_t host, uint32_t qpn) const {
  auto it = host_[host].qps.find(qpn);
  return it == host_[host].qps.end() ? 0 : it->second.state;
}

// ---------------------------------------------------------------------------------------------
// Wire

void DutCoverage::on_frame(uint32_t h, bool received, const agents::AxisFrame& f) {
  const std::vector<uint8_t>& b = f.bytes;
  // Ethernet + IPv4 + UDP to 4791 + BTH (the env's NICs use IPv4 without VLAN)
  if (b.size() < 14 + 20 + 8 + 12 + 4 || b[12] != 0x08 || b[13] != 0x00 || (b[14] & 0x0F) != 5 || b[23] != 17 ||
      b[36] != 0x12 || b[37] != 0xB7)
    return;
  const roce::Bth bth = roce::Bth::decode(b.data() + 42);
  const roce::OpcodeInfo* oi = roce::opcode_info(bth.opcode);
  if (!oi || oi->transport != roce::Transport::RC) return;
  Host& hs = host_[h];
  uint32_t local = bth.dest_qp;
  if (!received) {
    auto it = hs.by_dest.find(bth.dest_qp);
    local = it == hs.by_dest.end() ? ~0u : it->second;
  }
  auto qit = hs.qps.find(local);
  const int64_t state = qit == hs.qps.end() ? 0 : qit->second.state;

  int64_t syn = kNa;
  if (bth.opcode == roce::op::kRcAck && b.size() >= 42 + 12 + 4 + 4) {
    const roce::Aeth aeth = roce::Aeth::decode(b.data() + 54);
    switch (roce::aeth_type(aeth.syndrome)) {
      case roce::AckType::Ack: syn = kSynAck; break;
      case roce::AckType::RnrNak: syn = kSynRnr; break;
      case roce::AckType::Nak:
        switch (roce::NakCode(roce::aeth_value(aeth.syndrome))) {
          case roce::NakCode::PsnSequenceError: syn = kSynPsnSeq; break;
          case roce::NakCode::InvalidRequest: syn = kSynInvReq; break;
          case roce::NakCode::RemoteAccessError: syn = kSynRemAccess; break;
          case roce::NakCode::RemoteOperationalError: syn = kSynRemOp; break;
          default: break;
        }
        break;
      default: break;
    }
  }

  // PSN wraps: a QP's PSN going from near 2^24 - 1 back past 0 (forward in serial order).
  int64_t wrap = kNa;
  const bool request = oi->is_request;
  Stream& s = hs.streams[(uint64_t(received) << 40) | (uint64_t(request) << 32) | bth.dest_qp];
  if (s.seen && bth.psn < s.last && roce::psn_gt(bth.psn, s.last)) {
    ++psn_wraps_;
    if (request)
      wrap = oi->position == roce::Position::First || oi->position == roce::Position::Only ? kWrapReqStart
                                                                                           : kWrapReqInside;
    else
      wrap = bth.opcode == roce::op::kRcAck ? kWrapAck : kWrapReadResp;
  }
  // go-back-N on the NIC's own output: a request sent again, a READ answered again, an ACK
  // repeated for a duplicate request
  int64_t resent = kNa;
  if (!received && s.seen && !roce::psn_gt(bth.psn, s.last)) {
    if (request) resent = kResendRequest;
    else if (bth.opcode != roce::op::kRcAck) resent = kResendReadResponse;
    else if (syn == kSynAck) resent = kResendAck;
  }
  if (!s.seen || roce::psn_gt(bth.psn, s.last)) s.last = bth.psn;
  s.seen = true;

  cg_wire.sample({received ? kReceived : kSent, int64_t(bth.opcode), state, position(oi), syn, wrap, resent});

  // A READ request received: the NIC reads the named range of its memory for the responses.
  if (received && bth.opcode == roce::op::kRcReadRequest && b.size() >= 54 + roce::Reth::kSize) {
    const roce::Reth reth = roce::Reth::decode(b.data() + 54);
    payload_range(kPayloadRead, reth.va, reth.dma_len);
  }
  // A fatal NAK the NIC sent: its responder QP is in ERR from now on.
  if (!received && (syn == kSynInvReq || syn == kSynRemAccess || syn == kSynRemOp) && qit != hs.qps.end())
    qit->second.state = abi::QPS_ERR;
}

// ---------------------------------------------------------------------------------------------
// DMA

DutCoverage::Ring* DutCoverage::find_ring(uint32_t h, uint64_t addr) {
  auto& rings = host_[h].rings;
  auto it = rings.upper_bound(addr);
  if (it == rings.begin()) return nullptr;
  --it;
  return addr < it->second.base + it->second.bytes ? &it->second : nullptr;
}

void DutCoverage::set_ring(uint32_t h, RingKind kind, uint32_t owner, uint64_t base, uint64_t bytes, uint32_t entry) {
  auto& rings = host_[h].rings;
  for (auto it = rings.begin(); it != rings.end();) {
    const bool same = it->second.kind == kind && it->second.owner == owner;
    if (same && it->second.base == base && it->second.bytes == bytes) return;  // unchanged: keep its history
    it = same ? rings.erase(it) : std::next(it);
  }
  if (!base || !bytes) return;
  Ring r;
  r.base = base;
  r.bytes = bytes;
  r.owner = owner;
  r.kind = kind;
  r.entry = entry;
  rings[base] = r;
}

// A wrap is an access to slot 0 after one that reached the ring's last slot.
void DutCoverage::ring_access(Ring& r, uint64_t first_slot, uint64_t slots) {
  const int64_t n = int64_t(r.bytes / r.entry);
  if (first_slot == 0 && r.last_slot == n - 1) {
    ++ring_wraps_;
    cg_dma.sample({kNa, kNa, kNa, kNa, r.kind == kSq ? kWrapSq : r.kind == kRq ? kWrapRq : kWrapCq, kNa});
  }
  r.last_slot = int64_t(first_slot + slots - 1);
}

void DutCoverage::payload_range(int kind, uint64_t start, uint64_t len) {
  if (!len) return;
  cg_dma.sample({kind, align_class(start), crosses_4k(start, len) ? 1 : 0, kNa, kNa, kNa});
}

void DutCoverage::on_read(uint32_t h, const agents::Axi4ReadTxn& t) {
  // AXI read IDs per client (decision 11): 0 SQ WQE, 1 payload, 2 RQ WQE, 3 completion re-fetch
  static constexpr int64_t kKind[4] = {kWqeFetch, kPayloadRead, kRqWqeFetch, kCompRefetch};
  if (t.id > 3) return;
  cg_dma.sample({kKind[t.id], kNa, kNa, kNa, kNa, kNa});
  if (t.id != 0 && t.id != 2) return;
  Ring* r = find_ring(h, t.addr);
  if (!r || r->kind != (t.id == 0 ? kSq : kRq)) return;
  const uint64_t slot0 = (t.addr - r->base) / r->entry;
  const uint64_t slots = t.data.size() / r->entry;
  ring_access(*r, slot0, slots);
  if (t.id != 0) return;
  auto qit = host_[h].qps.find(r->owner);
  for (uint64_t k = 0; k < slots && slot0 + k < r->bytes / r->entry; ++k) {
    const uint8_t* w = t.data.data() + k * r->entry;
    const uint8_t opc = w[0];
    const uint32_t len = uint32_t(le(w + 24, 4));
    if (qit != host_[h].qps.end()) qit->second.sq_wqes[uint32_t(slot0 + k)] = {opc, len};
    // WRITE / WRITE_WITH_IMM / SEND / SEND_WITH_IMM: the NIC reads [laddr, laddr + length)
    if (opc <= abi::WR_SEND_IMM) payload_range(kPayloadRead, le(w + 16, 8), len);
  }
}

void DutCoverage::close_run(const Run& r) { payload_range(kPayloadWrite, r.start, r.end - r.start); }

void DutCoverage::on_write(uint32_t h, const agents::Axi4WriteTxn& t) {
  Host& hs = host_[h];
  const uint64_t base = t.addr & ~uint64_t(agents::kAxiDataBytes - 1);
  Ring* cq = find_ring(h, t.addr);
  if (cq && cq->kind == kCq) {
    cg_dma.sample({kCqeWrite, kNa, kNa, kNa, kNa, kNa});
    for (size_t off = 0; off + 32 <= t.data.size(); off += 32) {
      bool all = true;
      for (size_t i = 0; i < 32; ++i) all = all && t.strb[off + i];
      const uint64_t a = base + off;
      if (!all || a < cq->base || a >= cq->base + cq->bytes) continue;
      on_cqe(h, *cq, (a - cq->base) / 32, t.data.data() + off);
    }
    return;
  }
  // Payload bytes: the strobed range of the burst.
  size_t first = t.strb.size(), last = 0;
  for (size_t i = 0; i < t.strb.size(); ++i)
    if (t.strb[i]) {
      first = std::min(first, i);
      last = i;
    }
  if (first == t.strb.size()) return;
  const bool head = first % agents::kAxiDataBytes != 0 || first >= agents::kAxiDataBytes;
  const bool tail = last % agents::kAxiDataBytes != agents::kAxiDataBytes - 1 || last + agents::kAxiDataBytes < t.strb.size();
  cg_dma.sample({kPayloadWrite, kNa, kNa, head ? (tail ? kStrbHeadTail : kStrbHead) : tail ? kStrbTail : kStrbFull,
                 kNa, kNa});
  // Contiguous writes (the packets of one message) make one range; slots are separated by
  // unwritten gaps, so ranges of different messages do not merge.
  const uint64_t start = base + first, end = base + last + 1;
  Run run{start, end};
  auto it = hs.runs.find(start);
  if (it != hs.runs.end()) {
    run.start = it->second.start;
    hs.runs.erase(it);
  }
  hs.runs[end] = run;
  if (hs.runs.size() > 4096) {  // messages interleaved beyond this are closed early
    close_run(hs.runs.begin()->second);
    hs.runs.erase(hs.runs.begin());
  }
}

void DutCoverage::on_cqe(uint32_t h, Ring& cq, uint64_t slot, const uint8_t* c) {
  Host& hs = host_[h];
  ring_access(cq, slot, 1);
  const int phase = c[31] & 1;
  if (cq.last_phase >= 0 && phase != cq.last_phase) {
    ++phase_flips_;
    cg_dma.sample({kNa, kNa, kNa, kNa, kNa, phase});
  }
  cq.last_phase = phase;
  const uint8_t status = c[23];
  if (status == abi::WC_SUCCESS) return;
  const uint32_t qpn = uint32_t(le(c + 16, 4)) & 0xFFFFFF;
  const uint16_t idx = uint16_t(le(c + 20, 2));
  auto qit = hs.qps.find(qpn);
  bool send = c[22] < abi::WC_RECV;
  if (qit != hs.qps.end()) {
    Qp& qp = qit->second;
    qp.state = abi::QPS_ERR;
    if (qp.send_cqn != qp.recv_cqn) send = cq.owner == qp.send_cqn;
  }
  int64_t pos = kNa, pkts = kNa;
  if (send && status != abi::WC_WR_FLUSH_ERR && qit != hs.qps.end()) {
    Qp& qp = qit->second;
    for (auto it = qp.sq_batches.rbegin(); it != qp.sq_batches.rend(); ++it) {
      const uint16_t n = uint16_t(it->second - it->first), k = uint16_t(idx - it->first);
      if (k >= n) continue;
      pos = n == 1 ? kPosOnly : k == 0 ? kPosFirst : k + 1 == n ? kPosLast : kPosMiddle;
      break;
    }
    Ring* sq = nullptr;
    for (auto& [b, r] : hs.rings)
      if (r.kind == kSq && r.owner == qpn) sq = &r;
    if (sq) {
      auto w = qp.sq_wqes.find(uint32_t(idx % (sq->bytes / sq->entry)));
      if (w != qp.sq_wqes.end()) pkts = roce::read_psn_count(w->second.second, qp.mtu) > 1 ? 1 : 0;
    }
  }
  cg_err.sample({send ? 0 : 1, int64_t(status), pos, pkts});
}

// ---------------------------------------------------------------------------------------------
// CSR: commands the NIC accepted, doorbells

void DutCoverage::on_csr(uint32_t h, const agents::AxiLiteTxn& t) {
  Host& hs = host_[h];
  const uint32_t a = t.addr & 0xFFFF;
  if (t.write) {
    if (hs.cmd.on_write(a, t.data, t.strb)) return;
    if (a == abi::REG_DB_SQ || a == abi::REG_DB_RQ) {
      auto it = hs.qps.find(t.data & 0xFFFF);
      if (it == hs.qps.end()) return;
      Qp& qp = it->second;
      const uint16_t pi = uint16_t(t.data >> 16);
      if (a == abi::REG_DB_RQ) {
        qp.rq_pi = pi;
      } else if (pi != qp.sq_pi) {
        for (const auto& [base, r] : hs.rings) {
          const uint16_t size = uint16_t(r.bytes / r.entry);
          if (r.kind != kSq || r.owner != it->first || !size) continue;
          if ((qp.sq_pi & (size - 1)) + uint16_t(pi - qp.sq_pi) > size) {
            ++sq_batches_across_end_;
            cg_dma.sample({kNa, kNa, kNa, kNa, kWrapSqBatch, kNa});
          }
        }
        qp.sq_batches.emplace_back(qp.sq_pi, pi);
        if (qp.sq_batches.size() > 256) qp.sq_batches.pop_front();
        qp.sq_pi = pi;
      }
    }
    return;
  }
  for (const CsrCommand::Cmd& c : hs.cmd.on_read(a, t.data)) apply_command(h, c);
}

void DutCoverage::apply_command(uint32_t h, const CsrCommand::Cmd& c) {
  Host& hs = host_[h];
  const uint8_t* p = c.payload;
  if (c.op == abi::CMD_QP_MODIFY) {
    Qp& qp = hs.qps[c.index];
    const uint8_t state = p[0];
    if (state == abi::QPS_RESET) {
      qp = Qp{};
    }
    qp.state = state;
    if (p[1] >= 1 && p[1] <= 5) qp.mtu = 128u << p[1];
    if (qp.dest_qpn && hs.by_dest.count(qp.dest_qpn) && hs.by_dest[qp.dest_qpn] == c.index)
      hs.by_dest.erase(qp.dest_qpn);
    qp.dest_qpn = uint32_t(le(p + 8, 4)) & 0xFFFFFF;
    if (state == abi::QPS_RTR || state == abi::QPS_RTS) hs.by_dest[qp.dest_qpn] = c.index;
    qp.send_cqn = uint16_t(le(p + 24, 2));
    qp.recv_cqn = uint16_t(le(p + 26, 2));
    const unsigned lsq = p[3], lrq = p[4];
    set_ring(h, kSq, c.index, le(p + 40, 8), lsq && lsq <= 15 ? (64ull << lsq) : 0, 64);
    set_ring(h, kRq, c.index, le(p + 48, 8), lrq && lrq <= 15 ? (64ull << lrq) : 0, 64);
  } else if (c.op == abi::CMD_CQ_WRITE) {
    const unsigned lsz = p[8];
    set_ring(h, kCq, c.index, le(p, 8), (p[9] & 1) && lsz <= 15 ? (32ull << lsz) : 0, 32);
  }
}

void DutCoverage::sample_counters(const std::vector<uint32_t>& counters) {
  for (const RecoveryCounter& c : kRecoveryCounters)
    if (size_t(c.index) < counters.size() && counters[size_t(c.index)])
      cg_recovery.sample({c.index, int64_t(counters[size_t(c.index)])});
}

void DutCoverage::end_of_run() {
  for (Host& hs : host_) {
    for (const auto& [end, r] : hs.runs) close_run(r);
    hs.runs.clear();
  }
}

void DutCoverage::report() {
  for (uvm::Covergroup* g : {&cg_wire, &cg_dma, &cg_err, &cg_recovery}) {
    char b[160];
    std::snprintf(b, sizeof b, "%s: %.1f%% (%llu samples)", g->name().c_str(), g->coverage(),
                  static_cast<unsigned long long>(g->samples()));
    info("COVERAGE", b, uvm::verbosity::kLow);
    if (reports().enabled(path(), uvm::verbosity::kHigh)) {  // every bin with --verbosity HIGH
      std::ostringstream os;
      g->print(os);
      info("COVERAGE_BINS", os.str(), uvm::verbosity::kHigh);
    }
  }
  char b[160];
  std::snprintf(b, sizeof b,
                "seen on the interfaces: %llu PSN wraps, %llu ring wraps, %llu CQ phase flips, %llu SQ doorbells "
                "across the ring end",
                static_cast<unsigned long long>(psn_wraps_), static_cast<unsigned long long>(ring_wraps_),
                static_cast<unsigned long long>(phase_flips_), static_cast<unsigned long long>(sq_batches_across_end_));
  info("COVERAGE", b, uvm::verbosity::kLow);
}

}  // namespace srnic::verif::env
