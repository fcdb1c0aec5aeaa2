// srnic_comp bench: QPs are programmed through qp_cmd (random SQ base at any 64-byte slot,
// ring sizes 2..64, MTU 256..4096, start PSNs near the 24-bit wrap too); each SQ ring of
// random WQEs (WRITE/WRITE_IMM/SEND/SEND_IMM/READ, lengths 0..3*MTU and some up to 16 MiB,
// random signaled flag; now and then a bad one: unknown opcode, length > 2^31, or a refused
// local key) lives in a C++ host memory behind an in-order AXI read slave with
// random latency; slots beyond the producer hold stale WQEs. A peer model answers the
// posted WQEs in PSN order and the bench sends what the RX side would: coalesced CEV_ACKS
// (newest ACK PSN, partial ACKs inside multi-packet messages, READ-done PSNs, duplicates,
// now and then an ACK beyond a READ whose responses were lost), fatal CEV_NAKs (any status,
// at any PSN of the next unanswered WQE); and what the send path would: CEV_LERR for a bad
// WQE it stopped at (before or after the WQEs ahead of it are acknowledged) and, once
// stopped (bad WQE, or a stop request taken from stop_valid/stop_qpn), further CEV_LERRs
// with its producer index as WQEs are still posted.
// A reference of the header's rules (PSN ranges from length and MTU, SEND/WRITE covered by
// the later of the two PSNs, READs only by the READ-done PSN, the walk stopping at the
// first uncovered WQE, NAK, implied NAK, local-error and flush handling) gives, per event,
// the WQE reads (address, length: up to 8, never across the ring end or 4 KiB, another
// batch while whole batches complete) and the CQEs (cqn, wr_id, byte_len, qpn, wqe_idx,
// opcode, status; only signaled or failed WQEs), which must come out exactly, under random
// CQE back-pressure.
// QP failures: the first error CQE of a QP (the bad WQE's LERR status, a fatal NAK's status,
// RETRY_EXC_ERR for lost READ responses; not the WR_FLUSH_ERR ones after it) must push its
// QPN into the qerr FIFO in the cycle that CQE is taken, a NAK or implied NAK also into the
// stop FIFO. Both FIFOs are modelled: qerr_valid/stop_valid and the QPN are checked every
// cycle, a failing CQE must not be offered while its FIFO holds 16 requests, and nothing
// may be outstanding at a drain. qerr_ready is random per cycle and held low for long
// stretches (across drains); QerrFullStallsCompletions fills the FIFO on purpose.
// QPs that failed are reset through qp_cmd and reused; a configuration-only QP_MODIFY
// keeps the completion state. OverlongWqeAckedBeforeItsLocalError pins one ordering the
// random test avoids (see its comment); FatalNakJustBeforeARefusedWqeFailsOnce pins a
// fatal NAK right before a refused WQE: one qerr request, the refused WQE flushed.
// Host-driven ERR (CEV_HERR with the producer index): every WQE not yet completed (sent and
// unacknowledged ones, a refused one waiting) completes with WR_FLUSH_ERR in order; a qerr
// request is pushed unless the QP was already flushing, in the cycle herr_done pulses (once
// per HERR, not while the qerr FIFO is full, before any of its flush CQEs); later ACKs
// complete nothing. The random tests send HERR now and then (knob herr).
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "Vsrnic_comp.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

// Cycles a QP_MODIFY may wait: the context RAMs' reset sweep (one entry per cycle) plus slack.
constexpr int kCmdWait = BENCH_NUM_QPS + 20;

constexpr uint32_t kQps = BENCH_NUM_QPS;
constexpr unsigned kMaxRun = 16;  // srnic_comp MAX_RUN (default)
constexpr uint32_t kPsnMask = 0xFFFFFF;

enum EvF { kEKind, kEQpn, kEPsn, kEStatus, kEPsn2, kEHasAck, kEHasRd };
constexpr Layout<7> kEv{{3, 16, 24, 8, 24, 1, 1}};
enum CqeF { kQCqn, kQWrId, kQByteLen, kQImm, kQQpn, kQWqeIdx, kQOpcode, kQStatus, kQWithImm };
constexpr Layout<9> kCqe{{16, 64, 32, 32, 16, 16, 8, 8, 1}};

constexpr uint8_t kAcks = 5, kNak = 3, kLerr = 6, kHerr = 7;
constexpr uint8_t kWrWrite = 0, kWrWriteImm = 1, kWrSend = 2, kWrSendImm = 3, kWrRead = 4;
constexpr uint8_t kWcSend = 0, kWcWrite = 1, kWcRead = 2;
constexpr uint8_t kWcFlushErr = 5, kWcRetryExcErr = 12;
constexpr uint8_t kNakStatus[] = {9, 10, 11, 13};
constexpr uint8_t kLerrStatus[] = {2, 4};
constexpr size_t kReqDepth = 16;  // qerr and stop FIFOs

bool psn_ge(uint32_t a, uint32_t b) { return ((a - b) & kPsnMask) < 0x800000; }

struct Wqe {
  uint8_t op = 0, flags = 0;
  uint32_t imm = 0, len = 0, lkey = 0, rkey = 0;
  uint64_t wr_id = 0, laddr = 0, raddr = 0;
  uint8_t fill[20] = {};
};
struct Posted {
  uint32_t first, last;
  bool read, bad;
};
struct Cqe {
  uint32_t cqn, qpn;
  uint64_t wr_id;
  uint32_t byte_len;
  uint16_t idx;
  uint8_t opcode, status;
  bool qerr = false, stop = false;  // the first offer of this CQE pushes a qerr / stop request
  bool offered = false;
  uint32_t gen = 0;                 // incarnation of the QP (configure count)
  uint64_t herr_seq = 0;            // herr_done pulses that must have come before it
};
// an accepted HERR event, waiting for its herr_done
struct HerrX {
  uint32_t qpn, gen;
  bool qerr;  // herr_done also pushes a qerr request
};
struct Ar {
  uint64_t addr;
  unsigned n;
  uint32_t q;
};
struct RBeat {
  uint64_t at;
  uint32_t data[16];
};

// The bench's copy of one of the engine's request FIFOs (qerr or stop): a request enters in
// the cycle the CQE of its walk step is taken and is visible (first word falls through)
// from the next cycle on.
struct ReqFifo {
  struct Req {
    uint32_t qpn, gen;
  };
  struct Taken {
    uint32_t qpn;
    uint64_t cycle;
  };
  const char* name;
  std::deque<Req> in;
  std::vector<Taken> taken;  // handshakes, in order
};

struct Qp {
  bool live = false;  // programmed and usable by the generator
  uint32_t gen = 0;   // configure count
  uint64_t base = 0;
  int log_sq = 1, mtu = 1;
  uint16_t cqn = 0;
  std::vector<Wqe> ring;
  // reference completion state (what the RTL keeps)
  uint16_t ci = 0;
  uint32_t psn = 0;
  bool err_valid = false;
  uint32_t err_psn = 0;
  uint8_t err_status = 0;
  bool flushing = false;  // WQEs before fl_pi complete with WR_FLUSH_ERR
  uint16_t fl_pi = 0;
  bool in_err = false;    // a failure was predicted: the QP is in the error state
  // generator: posted WQEs, index posted_base + i; the send path's and peer's progress
  std::deque<Posted> posted;
  uint16_t posted_base = 0, pi = 0, freed = 0;
  uint32_t next_psn = 0;
  int bad = -1;  // index (from posted_base) of the bad WQE, while posted and not completed
  bool has_bad = false;
  uint32_t bad_psn = 0;
  bool lerr_sent = false, failed = false, overlong = false;
  bool stopped = false;    // the send side stopped (at the bad WQE, or on a stop request)
  uint16_t reported_pi = 0;
  bool herr = false;       // the host moved the QP to ERR (CEV_HERR sent)
  bool lost = false;       // the responses of one READ were lost: no more READs answered
  uint32_t lost_last = 0;
  uint16_t resp = 0;  // next WQE the peer has not fully answered (absolute index)
  uint32_t ack = 0, rd = 0;
  bool ack_new = false, rd_new = false, rd_any = false;
};

uint32_t mtu_bytes(int code) { return 128u << code; }
uint32_t npkts(uint32_t len, int mtu) {
  const uint32_t m = mtu_bytes(mtu);
  return len == 0 ? 1 : uint32_t(((uint64_t(len) + m - 1) / m) & kPsnMask);
}

class CompBench : public ::testing::Test {
 public:
  CompBench() : rng(test_seed()), dut(rng.next()), qps(kQps) {}

  struct Knobs {
    unsigned post = 30, ev = 30, ar = 80, lat = 20, cqe = 80;
    unsigned nak = 2, bad = 2, sig = 50, partial = 30, dup = 10, lost = 0;
    unsigned qerr = 50, stop = 50;  // per-cycle chance of qerr_ready / stop_ready
    unsigned qhold = 0;             // per-cycle chance of holding qerr_ready low ...
    unsigned qhold_len = 0;         // ... for qhold_len/2 .. qhold_len cycles
    unsigned herr = 0;              // per-mille chance that an event is a host-driven ERR
    unsigned rdbusy = 0;            // per-cycle chance that the RX engine reports a READ
                                    // response of a (mostly busy) QP in flight (rx_rd_busy)
  };

  void reset() {
    dut->qp_cmd_valid = dut->ev_valid = dut->ar_ready = dut->r_valid = dut->cqe_ready = 0;
    dut->stop_ready = dut->qerr_ready = dut->rx_rd_busy = 0;
    dut.reset();
  }

  void qp_modify(uint32_t q, bool init) {
    Qp& s = qps[q];
    for (size_t i = 0; i < 20; ++i) set_bits(dut->qp_cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, rng.next());
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->qp_cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
    put(kCQpn, q);
    put(kCMtu, uint64_t(s.mtu));
    put(kCLogSq, uint64_t(s.log_sq));
    put(kCSqBase, s.base);
    put(kCSendCqn, s.cqn);
    put(kCSqPsn, s.psn);
    const int mode = init ? int(rng.below(3)) : 3;  // which init bit(s) ask for the state reset
    put(kCInitIdx, mode == 0 || mode == 1);
    put(kCInitSqPsn, mode == 0 || mode == 2);
    dut->ev_valid = dut->ar_ready = dut->r_valid = dut->cqe_ready = 0;  // only the command moves
    dut->qerr_ready = dut->stop_ready = 0;
    dut->qp_cmd_valid = 1;
    int i = 0;
    for (; i < kCmdWait; ++i) {  // the context RAMs clear themselves after reset
      dut.eval();
      const bool rdy = dut->qp_cmd_ready;
      dut.tick();
      if (rdy) break;
    }
    dut->qp_cmd_valid = 0;
    ASSERT_LT(i, kCmdWait) << "QP_MODIFY not taken";
  }

  // (Re)creates q: new ring location/size/MTU/PSN, completion state reset. The ring
  // memory keeps stale WQEs from before if the location is reused.
  void configure(uint32_t q) {
    Qp& s = qps[q];
    const bool had = !s.ring.empty();
    std::vector<Wqe> old = std::move(s.ring);
    const int log_sq = had && rng.percent(50) ? s.log_sq : int(rng.range(1, 6));
    const uint64_t base = had && rng.percent(50) && log_sq == s.log_sq
                              ? s.base
                              : (rng.next() & 0x0000FFFFFFFFF000ull) + (rng.below(64) << 6);
    const uint32_t gen = s.gen + 1;
    s = Qp{};
    s.gen = gen;
    s.log_sq = log_sq;
    s.base = base;
    s.mtu = int(rng.range(1, 5));
    s.cqn = uint16_t(rng.u32());
    s.psn = s.next_psn = rng.percent(40) ? kPsnMask - uint32_t(rng.below(40)) : rng.u32() & kPsnMask;
    s.ack = s.rd = (s.psn - 1) & kPsnMask;
    s.ring.resize(size_t(1) << log_sq);
    if (old.size() == s.ring.size()) {
      s.ring = old;  // stale WQEs stay, except over-long ones (see StaleOverlongWqe)
      for (auto& w : s.ring)
        if (w.len > 0x80000000u && sanitize) w = random_wqe(s, 50, true);
    } else
      for (auto& w : s.ring) w = random_wqe(s, 50, true);
    qp_modify(q, true);
    s.live = true;
    if (std::find(hot.begin(), hot.end(), q) == hot.end()) hot.push_back(q);
  }

  Wqe random_wqe(const Qp& s, unsigned sig, bool stale) {
    Wqe w;
    w.op = uint8_t(rng.below(5));
    w.flags = uint8_t(rng.u8() & ~2u) | (rng.percent(sig) ? 2 : 0);
    const uint32_t m = mtu_bytes(s.mtu);
    switch (rng.below(stale ? 4 : 5)) {
      case 0: w.len = rng.percent(50) ? 0 : uint32_t(rng.range(1, 63)); break;
      case 1: w.len = m * uint32_t(rng.range(1, 3)); break;
      case 2: w.len = uint32_t(rng.range(1, 3 * m)); break;
      case 3: w.len = uint32_t(rng.range(1, m)); break;
      default: w.len = uint32_t(rng.range(1, 1u << 24)); break;  // large (PSN spans stay far below 2^23)
    }
    w.imm = rng.u32();
    w.wr_id = rng.next();
    w.laddr = rng.next();
    w.lkey = rng.u32();
    w.raddr = rng.next();
    w.rkey = rng.u32();
    for (auto& b : w.fill) b = rng.u8();
    return w;
  }

  // Writes w into q's next ring slot and records its PSN range (a bad WQE uses none).
  void post_wqe(uint32_t q, const Wqe& w, bool bad) {
    Qp& s = qps[q];
    const uint16_t size = uint16_t(1u << s.log_sq);
    s.ring[s.pi & (size - 1)] = w;
    Posted p{s.next_psn, 0, w.op == kWrRead, bad};
    p.last = (s.next_psn + npkts(w.len, s.mtu) - 1) & kPsnMask;
    if (bad) {
      s.bad = int(s.posted.size());
      s.has_bad = true;
      s.bad_psn = s.next_psn;
    } else {
      s.next_psn = (p.last + 1) & kPsnMask;
    }
    s.posted.push_back(p);
    ++s.pi;
  }

  // Posts a WQE on q if the ring has a free slot. After a bad WQE or a failure the host
  // may go on posting: those WQEs are flushed.
  void post(uint32_t q, const Knobs& k) {
    Qp& s = qps[q];
    const uint16_t size = uint16_t(1u << s.log_sq);
    if (!s.live || uint16_t(s.pi - s.freed) >= size) return;
    if ((s.failed || s.stopped) && !rng.percent(15)) return;  // fewer: they are only flushed
    Wqe w = random_wqe(s, k.sig, false);
    const bool bad = !s.has_bad && !s.failed && rng.percent(k.bad);
    if (bad) {
      switch (rng.below(3)) {
        case 0: w.op = uint8_t(rng.range(5, 255)); break;                        // unknown opcode
        case 1:  // too long; only where no walk in progress can reach it before its LERR
          if (events.empty() && !holding && ar_expect.empty() && (s.resp != s.pi || s.ci == s.pi)) {
            w.len = uint32_t(rng.range(0x80000001ull, 0xFFFFFFFFull));
            s.overlong = true;
          } else {
            w.op = 5;
          }
          break;
        default: break;                                                          // local key refused
      }
    }
    post_wqe(q, w, bad);
  }

  const Posted& posted_at(const Qp& s, uint16_t idx) const { return s.posted[uint16_t(idx - s.posted_base)]; }

  // The peer answers 1..3 more WQEs (never the bad one); returns an ACKS event, if any.
  // It may lose a READ's responses and go on answering (not READs) after it: an ACK
  // beyond that READ then fails it (implied NAK).
  bool make_acks(uint32_t q, const Knobs& k, uint64_t ev[7]) {
    Qp& s = qps[q];
    uint16_t limit = s.bad >= 0 ? uint16_t(s.posted_base + s.bad) : s.pi;
    // An over-long bad WQE is reported before the WQE ahead of it is answered (the other
    // order is the bug OverlongWqeAckedBeforeItsLocalError shows).
    if (s.bad >= 0 && !s.lerr_sent && s.overlong && limit != s.resp) --limit;
    for (int n = int(rng.range(1, 3)); n > 0 && s.resp != limit; --n) {
      const Posted& p = posted_at(s, s.resp);
      const uint32_t np = ((p.last - p.first) & kPsnMask) + 1;
      if (p.read && s.lost) break;
      if (!p.read && np > 1 && rng.percent(k.partial)) {  // ACK inside the message
        const uint32_t a = (p.first + uint32_t(rng.below(np - 1))) & kPsnMask;
        if (psn_ge(a, s.ack) && a != s.ack) {
          s.ack = a;
          s.ack_new = true;
        }
        break;
      }
      if (p.read && rng.percent(k.lost)) {
        s.lost = true;
        s.lost_last = p.last;
      } else if (p.read) {
        s.rd = p.last;
        s.rd_new = s.rd_any = true;
      } else {
        s.ack = p.last;
        s.ack_new = true;
      }
      ++s.resp;
    }
    bool has_ack = s.ack_new || rng.percent(k.dup), has_rd = s.rd_new || (s.rd_any && rng.percent(k.dup));
    if (!has_ack && !has_rd) return false;
    ev[kEKind] = kAcks;
    ev[kEQpn] = q;
    ev[kEPsn] = has_ack ? s.ack : rng.u32() & kPsnMask;
    ev[kEStatus] = rng.u8();
    ev[kEPsn2] = has_rd ? s.rd : rng.u32() & kPsnMask;
    ev[kEHasAck] = has_ack;
    ev[kEHasRd] = has_rd;
    s.ack_new = s.rd_new = false;
    if (s.lost && has_ack && psn_ge(s.ack, s.lost_last) && s.ack != s.lost_last)
      s.failed = true;  // the lost READ fails: nothing more but send-path reports
    return true;
  }

  // A CEV_LERR from the send path at psn, reporting its producer index (flush limit).
  void lerr_event(uint32_t q, uint32_t psn, uint64_t ev[7]) {
    Qp& s = qps[q];
    ev[kEKind] = kLerr;
    ev[kEQpn] = q;
    ev[kEPsn] = psn;
    ev[kEStatus] = kLerrStatus[rng.below(2)];
    ev[kEPsn2] = s.pi;
    ev[kEHasAck] = rng.below(2);
    ev[kEHasRd] = rng.below(2);
    s.reported_pi = s.pi;
  }

  // The host moved q to ERR: the send path stopped and reports its producer index.
  void herr_event(uint32_t q, uint64_t ev[7]) {
    Qp& s = qps[q];
    ev[kEKind] = kHerr;
    ev[kEQpn] = q;
    ev[kEPsn] = s.next_psn;
    ev[kEStatus] = kWcFlushErr;
    ev[kEPsn2] = s.pi;
    ev[kEHasAck] = rng.below(2);
    ev[kEHasRd] = rng.below(2);
    s.reported_pi = s.pi;
    s.herr = s.failed = s.stopped = true;
    ++herrs_sent;
  }

  void gen_event(const Knobs& k) {
    if (hot.empty()) return;
    const uint32_t q = hot[rng.below(hot.size())];
    Qp& s = qps[q];
    if (!s.live) return;
    uint64_t ev[7] = {};
    const uint16_t limit = s.bad >= 0 ? uint16_t(s.posted_base + s.bad) : s.pi;
    if (!s.herr && rng.below(1000) < k.herr) {
      herr_event(q, ev);
    } else if (s.herr && rng.percent(20)) {
      // the peer still answers what was sent before the QP was stopped: nothing completes
      // (WQEs the flush completed are no longer tracked: answer from the oldest one left)
      if (uint16_t(s.resp - s.posted_base) > s.posted.size()) s.resp = s.posted_base;
      if (!make_acks(q, k, ev)) return;
    } else if (s.bad >= 0 && !s.lerr_sent && !s.failed && rng.percent(30)) {
      lerr_event(q, s.bad_psn, ev);  // the send path stops at the bad WQE
      s.lerr_sent = s.stopped = true;
    } else if (s.stopped && s.reported_pi != s.pi && rng.percent(30)) {
      // the stopped send path sees a doorbell: it reports the new producer index
      lerr_event(q, s.has_bad ? s.bad_psn : rng.u32() & kPsnMask, ev);
    } else if (s.failed) {
      return;
    } else if (s.resp != limit && !s.lost && rng.percent(k.nak)) {
      const Posted& p = posted_at(s, s.resp);
      const uint32_t np = ((p.last - p.first) & kPsnMask) + 1;
      ev[kEKind] = kNak;
      ev[kEQpn] = q;
      ev[kEPsn] = p.read ? p.first : (p.first + uint32_t(rng.below(std::min<uint32_t>(np, 1000)))) & kPsnMask;
      ev[kEStatus] = kNakStatus[rng.below(4)];
      ev[kEPsn2] = rng.u32() & kPsnMask;
      ev[kEHasAck] = rng.below(2);
      ev[kEHasRd] = rng.below(2);
      s.failed = true;  // the QP is in error: only send-path reports until it is reset
    } else if (!make_acks(q, k, ev)) {
      return;
    }
    push_event(ev);
  }

  void push_event(const uint64_t ev[7]) {
    Ev e;
    for (int i = 0; i < 7; ++i) e.f[i] = ev[i];
    events.push_back(e);
  }

  // ------------------------------------------------------------ the reference
  // Applies an accepted event: expected WQE reads and CQEs (with the requests their walk
  // steps push).
  void apply(const uint64_t* ev) {
    const uint32_t q = uint32_t(ev[kEQpn]);
    Qp& s = qps[q];
    const uint8_t kind = uint8_t(ev[kEKind]);
    const uint32_t epsn = uint32_t(ev[kEPsn]), psn2 = uint32_t(ev[kEPsn2]);
    const bool has_ack = ev[kEHasAck], has_rd = ev[kEHasRd];
    const bool nak = kind == kNak, lerr = kind == kLerr, herr = kind == kHerr;
    const uint32_t ack_lim = !has_ack ? psn2 : !has_rd ? epsn : psn_ge(psn2, epsn) ? psn2 : epsn;
    const uint32_t lim = nak ? epsn : ack_lim;
    if (herr) {
      // every WQE not completed is flushed, a refused one waiting too; a qerr request unless
      // the QP was failed already (flushing)
      herr_x.push_back({q, s.gen, !s.flushing});
      ++herr_seq_expect;
      s.err_valid = false;
      s.flushing = true;
      s.fl_pi = uint16_t(psn2);
      s.in_err = true;
      if (s.ci == s.fl_pi) return;  // nothing to flush: no WQE read
    } else if (lerr) {
      if (!s.err_valid && !s.flushing) {  // the first report names the bad WQE
        s.err_valid = true;
        s.err_psn = epsn;
        s.err_status = uint8_t(ev[kEStatus]);
      }
      s.fl_pi = uint16_t(psn2);
      if (!s.flushing && s.psn != epsn) return;
    } else if (!psn_ge(lim, s.psn)) {
      return;
    }
    const uint16_t size = uint16_t(1u << s.log_sq);
    unsigned held = kMaxRun;  // beats the event holds: a continuation reads at most that many
    for (;;) {
      // the run: the WQEs the event can reach (each uses at least one PSN; a flush walk the
      // WQEs up to its limit), at most the beats held, never across the ring end
      const uint16_t slot = uint16_t(s.ci & (size - 1));
      const bool fl = s.flushing || (s.err_valid && s.psn == s.err_psn);
      const uint32_t need = fl ? (s.fl_pi == s.ci ? 1u : uint32_t(uint16_t(s.fl_pi - s.ci)))
                               : psn_ge(lim, s.psn) ? ((lim - s.psn + 1) & kPsnMask) : 1u;
      const unsigned n = unsigned(std::min<uint64_t>({uint64_t(held), uint64_t(need), uint64_t(size - slot)}));
      held = n;
      for (unsigned i = 0; i < n;) {  // bursts of at most 8 beats, never across 4 KiB
        const uint64_t addr = s.base + (uint64_t(uint16_t(s.ci + i) & (size - 1)) << 6);
        const unsigned b = std::min<unsigned>({8u, n - i, unsigned(64 - ((addr >> 6) & 63))});
        ar_expect.push_back({addr, b, q});
        i += b;
      }
      bool was_fl = false;
      for (unsigned t = 0; t < n; ++t) {
        const Wqe& w = s.ring[s.ci & (size - 1)];
        const uint32_t last = (s.psn + npkts(w.len, s.mtu) - 1) & kPsnMask;
        const bool rd = w.op == kWrRead;
        const bool w_bad = w.op > kWrRead || w.len > 0x80000000u;
        const bool at_bad = s.err_valid && s.psn == s.err_psn && !s.flushing;  // not after a fatal NAK
        const bool flush = s.flushing && s.ci != s.fl_pi;
        const bool fl_stop = s.flushing && s.ci == s.fl_pi;
        const bool implied = !nak && !lerr && !herr && rd && has_ack && psn_ge(epsn, last) && epsn != last &&
                             !(has_rd && psn_ge(psn2, last));
        bool complete = false, error = false;
        if (at_bad || flush) {
          complete = error = true;
        } else if (lerr || herr || w_bad || fl_stop) {
        } else if (nak) {
          if (psn_ge(epsn, last) && epsn != last) complete = true;
          else if (psn_ge(epsn, s.psn)) complete = error = true;
        } else if (implied) {
          complete = error = true;
        } else {
          complete = (!rd && psn_ge(ack_lim, last)) || (rd && has_rd && psn_ge(psn2, last));
        }
        if (!complete) return;
        if (uint16_t(s.ci - s.posted_base) >= s.posted.size()) {
          ADD_FAILURE() << "QP " << q << ": the rules complete ring slot " << (s.ci & (size - 1)) << " (index "
                        << s.ci << ", length " << w.len << "), beyond the producer index " << s.pi;
          return;
        }
        const bool fatal = error && (nak || implied) && !at_bad && !flush;  // fails on the wire
        const bool first_failure = error && !flush && !s.in_err;
        {
          Cqe c;
          c.cqn = s.cqn;
          c.qpn = q;
          c.wr_id = w.wr_id;
          c.byte_len = w.len;
          c.idx = s.ci;
          c.opcode = rd ? kWcRead : (w.op == kWrSend || w.op == kWrSendImm) ? kWcSend : kWcWrite;
          c.status = at_bad ? s.err_status : flush ? kWcFlushErr : implied ? kWcRetryExcErr
                     : error ? uint8_t(ev[kEStatus]) : 0;
          c.qerr = first_failure;
          c.stop = fatal;
          c.gen = s.gen;
          c.herr_seq = herr_seq_expect;
          if ((w.flags & 2) || error) cqe_expect.push_back(c);  // failed WQEs always give one
        }
        ++s.ci;
        if (!at_bad && !flush) s.psn = (last + 1) & kPsnMask;  // refused or flushed: no PSNs
        if (at_bad) {
          s.err_valid = false;
          s.flushing = true;
        }
        if (fatal) {  // later WQEs flush once the send path reports its producer index
          s.flushing = true;
          s.fl_pi = s.ci;
        }
        if (error && !flush) s.in_err = s.failed = true;
        if (fatal || ((at_bad || flush) && s.ci == s.fl_pi)) return;
        was_fl = at_bad || flush;
      }
      // the whole run completed: the event goes on if it may cover more
      if (!(was_fl || psn_ge(lim, s.psn) || (s.err_valid && s.psn == s.err_psn))) return;
    }
  }

  // ------------------------------------------------------------ per cycle
  bool qerr_ready_now(uint64_t c, const Knobs& k) {
    if (qerr_low || c < qhold_until) return false;
    if (k.qhold && rng.percent(k.qhold)) {
      qhold_until = c + rng.range(k.qhold_len / 2, k.qhold_len);
      ++qholds;
      return false;
    }
    return rng.percent(k.qerr);
  }

  // Checks a request port against its model (valid and QPN every cycle) and takes a handshake.
  void req_port(ReqFifo& f, bool valid, uint32_t qpn, bool ready, uint64_t c) {
    ASSERT_FALSE(valid && f.in.empty()) << "cycle " << c << ": " << f.name << " request for QP " << qpn
                                        << " the reference does not expect";
    ASSERT_EQ(valid, !f.in.empty()) << "cycle " << c << ": " << f.name << "_valid low with " << f.in.size()
                                    << " requests pushed (next for QP " << f.in.front().qpn << ")";
    if (!valid) return;
    ASSERT_EQ(qpn, f.in.front().qpn) << "cycle " << c << ": " << f.name << "_qpn (request "
                                     << f.taken.size() << ")";
    if (!ready) return;
    f.taken.push_back({qpn, c});
    if (&f == &stop_f && qps[qpn].gen == f.in.front().gen) qps[qpn].stopped = true;  // the send side stops
    f.in.pop_front();
  }

  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    if (auto_events && !hot.empty() && rng.percent(k.post)) {
      const uint32_t q = hot[rng.below(hot.size())];
      for (int n = int(rng.range(1, 3)); n > 0; --n) post(q, k);
    }
    if (!holding && !events.empty() && rng.percent(k.ev)) holding = true;
    if (auto_events && !holding && events.empty() && rng.percent(k.ev)) gen_event(k);
    dut->ev_valid = holding;
    if (holding)
      for (size_t i = 0; i < 7; ++i)
        set_bits(dut->ev_in, kEv.at(i).lsb, kEv.at(i).width, events.front().f[i]);
    dut->ar_ready = rng.percent(k.ar);
    const bool r = !rbeats.empty() && rbeats.front().at <= c;
    dut->r_valid = r;
    for (int w = 0; w < 16; ++w) dut->r_data[size_t(w)] = r ? rbeats.front().data[w] : rng.u32();
    dut->cqe_ready = rng.percent(k.cqe);
    dut->stop_ready = rng.percent(k.stop);   // the send path takes stop requests at its own pace
    dut->qerr_ready = qerr_ready_now(c, k);  // so does the RX engine with QP errors
    const uint32_t bq = hot.empty() || rng.percent(10) ? uint32_t(rng.below(kQps)) : hot[rng.below(hot.size())];
    dut->busy_qpn = bq;
    // the RX engine has a READ response in flight, most often of a QP with a CQE due
    const bool rb = k.rdbusy && rng.percent(k.rdbusy);
    dut->rx_rd_busy = rb;
    dut->rx_rd_qpn = !cqe_expect.empty() && rng.percent(70) ? cqe_expect[rng.below(cqe_expect.size())].qpn
                                                              : uint32_t(rng.below(kQps));
    dut.eval();
    // the expected CQE the offered one belongs to (nullptr: none, take_cqe reports it)
    Cqe* offer = nullptr;
    if (dut->cqe_valid) {
      const auto it = find_cqe(uint32_t(kCqe.get(dut->cqe, kQQpn)));
      if (it != cqe_expect.end()) offer = &*it;
    }
    // a failed or flushed READ must not complete while a response of its QP is in the RX
    // engine (it could still be placing: its bytes would land after the CQE)
    // (checked when the CQE is first offered; once offered it stays until taken)
    if (offer && !offer->offered) {
      const bool failed_read = kCqe.get(dut->cqe, kQOpcode) == kWcRead && kCqe.get(dut->cqe, kQStatus) != 0;
      ASSERT_FALSE(failed_read && rb && kCqe.get(dut->cqe, kQQpn) == dut->rx_rd_qpn)
          << "cycle " << c << ": failed READ CQE of QP " << unsigned(dut->rx_rd_qpn) << " offered while a READ"
          << " response of that QP is in the RX engine";
    }
    if (rb) {
      const auto due = find_cqe(dut->rx_rd_qpn);
      if (due != cqe_expect.end() && due->opcode == kWcRead && due->status != 0) ++rd_holds;
    }
    // busy set: a QP whose reads or CQEs are still due has its event in the pipeline
    if (!manual && !dut->busy) {
      ASSERT_TRUE(std::none_of(ar_expect.begin(), ar_expect.end(), [&](const Ar& a) { return a.q == bq; }) &&
                  find_cqe(bq) == cqe_expect.end())
          << "cycle " << c << ": QP " << bq << " has WQE reads or CQEs due but is not reported busy";
    }

    // FIFO occupancy this cycle (a push is refused when full, whatever is popped)
    const size_t qerr_n = qerr_f.in.size(), stop_n = stop_f.in.size();
    req_port(qerr_f, dut->qerr_valid, dut->qerr_qpn, dut->qerr_ready, c);
    req_port(stop_f, dut->stop_valid, dut->stop_qpn, dut->stop_ready, c);
    if (HasFatalFailure()) return;

    if (dut->ar_valid && dut->ar_ready && manual) ar_expect.push_back({dut->ar_addr, unsigned(dut->ar_len) + 1, manual_q});
    if (dut->ar_valid && dut->ar_ready) {
      // events of different QPs are in flight together: reads are in order per QP
      auto it = std::find_if(ar_expect.begin(), ar_expect.end(), [&](const Ar& e) { return in_ring(e.q, dut->ar_addr); });
      ASSERT_FALSE(it == ar_expect.end()) << "cycle " << c << ": WQE read 0x" << std::hex << dut->ar_addr
                                          << " the reference does not make";
      const Ar a = *it;
      ar_expect.erase(it);
      ASSERT_EQ(uint64_t(dut->ar_addr), a.addr) << "cycle " << c << " QP " << a.q << ": WQE read address";
      ASSERT_EQ(unsigned(dut->ar_len) + 1, a.n) << "cycle " << c << " QP " << a.q << ": WQE read length";
      const Qp& s = qps[a.q];
      const uint16_t size = uint16_t(1u << s.log_sq);
      uint64_t at = std::max(c + 1 + rng.below(k.lat + 1), last_r_at + 1);
      for (unsigned i = 0; i < a.n; ++i) {
        RBeat b;
        b.at = at + i;
        encode(s.ring[uint16_t(((a.addr - s.base) >> 6) + i) & (size - 1)], b.data);
        rbeats.push_back(b);
      }
      last_r_at = at + a.n - 1;
      ++reads;
    }
    if (dut->herr_done) {
      ASSERT_FALSE(herr_x.empty()) << "cycle " << c << ": herr_done without a HERR event";
      const HerrX h = herr_x.front();
      herr_x.pop_front();
      ASSERT_FALSE(h.qerr && qerr_n >= kReqDepth) << "cycle " << c << ": herr_done (qerr for QP " << h.qpn
                                                  << ") while the qerr FIFO is full";
      if (h.qerr) qerr_f.in.push_back({h.qpn, h.gen});
      ++herr_dones;
    }
    if (!cqe_expect.empty() && cqe_expect.front().qerr && qerr_n >= kReqDepth) ++qerr_full_waits;
    if (offer) {
      // a CQE's first offer pushes its requests: not while their FIFO is full
      const Cqe& e = *offer;
      const bool qerr_full = !e.offered && e.qerr && qerr_n >= kReqDepth;
      const bool stop_full = !e.offered && e.stop && stop_n >= kReqDepth;
      ASSERT_FALSE(dut->cqe_valid && (qerr_full || stop_full))
          << "cycle " << c << ": CQE of QP " << e.qpn << " wqe " << e.idx << " (a failure) offered while the "
          << (qerr_full ? "qerr" : "stop") << " FIFO is full";
    }
    if (offer) {
      // the failure a CQE reports is pushed when it is first offered (it then stays offered)
      Cqe& e = *offer;
      if (!e.offered) {
        e.offered = true;
        if (e.qerr) {
          qerr_f.in.push_back({e.qpn, e.gen});
          qerr_cqe_cycles.push_back(c);
        }
        if (e.stop) stop_f.in.push_back({e.qpn, e.gen});
      }
    }
    if (dut->cqe_valid && dut->cqe_ready) take_cqe(c);
    if (HasFatalFailure()) return;
    const bool ev_fire = dut->ev_valid && dut->ev_ready;
    dut.tick();
    if (r) rbeats.pop_front();
    if (ev_fire) {
      if (!manual) apply(events.front().f);
      events.pop_front();
      holding = false;
      ++n_events;
    }
    free_slots();
  }

  // Slots of completed WQEs may be reused once no read of them is still due.
  void free_slots() {
    if (!ar_expect.empty() || !rbeats.empty()) return;
    for (uint32_t q : hot) {
      Qp& s = qps[q];
      while (s.posted_base != s.ci && !s.posted.empty()) {
        s.posted.pop_front();
        ++s.posted_base;
        if (s.bad >= 0) --s.bad;
      }
      s.freed = s.ci;
    }
  }

  void take_cqe(uint64_t c) {
    const auto& m = dut->cqe;
    // events of different QPs are in flight together: CQEs are in order per QP
    const auto it = find_cqe(uint32_t(kCqe.get(m, kQQpn)));
    ASSERT_FALSE(it == cqe_expect.end()) << "cycle " << c << ": CQE for QP " << kCqe.get(m, kQQpn) << " wqe_idx "
                                         << kCqe.get(m, kQWqeIdx) << " status " << kCqe.get(m, kQStatus)
                                         << " the reference does not make";
    const Cqe e = *it;
    cqe_expect.erase(it);
    EXPECT_GE(herr_dones, e.herr_seq) << "cycle " << c << ": CQE of QP " << e.qpn << " wqe " << e.idx
                                      << " before the herr_done of the HERR before it";
    const std::string at = "cycle " + std::to_string(c) + " CQE " + std::to_string(cqes) + " QP " +
                           std::to_string(e.qpn) + " wqe " + std::to_string(e.idx);
    ASSERT_EQ(kCqe.get(m, kQQpn), e.qpn) << at;
    ASSERT_EQ(kCqe.get(m, kQWqeIdx), e.idx) << at;
    EXPECT_EQ(kCqe.get(m, kQCqn), e.cqn) << at;
    EXPECT_EQ(kCqe.get(m, kQWrId), e.wr_id) << at;
    EXPECT_EQ(kCqe.get(m, kQByteLen), e.byte_len) << at;
    EXPECT_EQ(kCqe.get(m, kQOpcode), e.opcode) << at;
    EXPECT_EQ(kCqe.get(m, kQStatus), e.status) << at;
    EXPECT_EQ(kCqe.get(m, kQWithImm), 0u) << at;
    ++cqes;
    cqe_log.push_back(e);
    if (e.status != 0) ++failed_cqes;
    if (e.status == kWcFlushErr) ++flush_cqes;
    if (e.status == kWcRetryExcErr) ++implied_cqes;
  }

  std::deque<Cqe>::iterator find_cqe(uint32_t qpn) {
    return std::find_if(cqe_expect.begin(), cqe_expect.end(), [&](const Cqe& e) { return e.qpn == qpn; });
  }
  bool in_ring(uint32_t q, uint64_t addr) const {
    const Qp& s = qps[q];
    return addr >= s.base && addr < s.base + (uint64_t(1) << (s.log_sq + 6));
  }

  static void encode(const Wqe& w, uint32_t* d) {
    encode_sq_wqe(w.op, w.flags, w.imm, w.wr_id, w.laddr, w.len, w.lkey, w.raddr, w.rkey, d, w.fill);
  }

  // Runs with the generator off until every event is processed, every CQE out and every
  // request taken. A qerr_ready hold runs out; only a non-final drain may end during one,
  // leaving its qerr requests queued (the FIFO then fills across phases).
  void drain(bool final = false) {
    Knobs k;
    k.post = 0;
    k.ar = k.cqe = 100;
    k.ev = 100;
    bool held = false;
    int quiet = 0;  // cycles with nothing due: a stray request would show on its port meanwhile
    for (int i = 0; i < 100000 && !HasFatalFailure(); ++i) {
      held = !final && dut.cycle() < qhold_until;
      const bool idle = events.empty() && !holding && ar_expect.empty() && rbeats.empty() && cqe_expect.empty() &&
                        herr_x.empty() &&
                        stop_f.in.empty() && (qerr_f.in.empty() || held);
      quiet = idle ? quiet + 1 : 0;
      if (quiet > 20) break;
      if (events.empty()) k.ev = 0;
      cycle(k);
    }
    EXPECT_TRUE(events.empty());
    EXPECT_TRUE(herr_x.empty()) << herr_x.size() << " herr_done never came";
    EXPECT_TRUE(ar_expect.empty()) << ar_expect.size() << " WQE reads never made";
    EXPECT_TRUE(cqe_expect.empty()) << cqe_expect.size() << " CQEs never made";
    EXPECT_TRUE(stop_f.in.empty()) << stop_f.in.size() << " stop requests never taken";
    EXPECT_TRUE(qerr_f.in.empty() || held) << qerr_f.in.size() << " qerr requests never taken (next for QP "
                                           << qerr_f.in.front().qpn << ")";
    EXPECT_FALSE(dut.rtl_error());
  }

  // After a drain: failed QPs (NAK, lost READ, or the bad WQE completed) are reset; some
  // others get a configuration-only QP_MODIFY (new send CQ), which keeps the completion state.
  void maintain() {
    for (uint32_t q : hot) {
      if (HasFatalFailure()) return;
      Qp& s = qps[q];
      if (s.failed || s.lost) {
        configure(q);
      } else if (rng.percent(20)) {
        s.cqn = uint16_t(rng.u32());
        qp_modify(q, false);
      }
    }
  }

  // Random phases of traffic on `nqps` QPs, each followed by a drain and maintenance.
  void random_traffic(uint32_t nqps, int phases, const Knobs& base, unsigned hold_pct, unsigned hold_max) {
    reset();
    for (uint32_t i = 0; i < nqps && !HasFatalFailure(); ++i) configure(uint32_t(rng.below(kQps)));
    for (int phase = 0; phase < phases && !HasFatalFailure(); ++phase) {
      Knobs k = base;
      k.post = unsigned(rng.range(5, 60));
      k.ev = unsigned(rng.range(10, 100));
      k.ar = unsigned(rng.range(20, 100));
      k.lat = unsigned(rng.range(0, 40));
      k.cqe = unsigned(rng.range(20, 100));
      k.sig = unsigned(rng.range(0, 100));
      k.qerr = unsigned(rng.range(5, 100));
      if (rng.percent(hold_pct)) {  // long stretches of qerr_ready low
        k.qhold = unsigned(rng.range(1, 3));
        k.qhold_len = unsigned(rng.range(hold_max / 4, hold_max));
      }
      for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(k);
      drain(phase + 1 == phases);
      maintain();
    }
    std::printf("[bench] %llu HERR events\n", (unsigned long long)herrs_sent);
    std::printf("[bench] %llu events, %llu WQE reads, %llu CQEs (%llu failed: %llu flushed, %llu implied NAK), "
                "%zu qerr and %zu stop requests, %llu qerr holds, %llu cycles a failure waited on a full qerr FIFO\n",
                (unsigned long long)n_events, (unsigned long long)reads, (unsigned long long)cqes,
                (unsigned long long)failed_cqes, (unsigned long long)flush_cqes, (unsigned long long)implied_cqes,
                qerr_f.taken.size(), stop_f.taken.size(), (unsigned long long)qholds,
                (unsigned long long)qerr_full_waits);
  }

  struct Ev {
    uint64_t f[7];
  };

  Rng rng;
  Dut<Vsrnic_comp> dut;
  std::vector<Qp> qps;
  std::vector<uint32_t> hot;
  std::deque<Ev> events;
  bool holding = false;
  std::deque<Ar> ar_expect;
  std::deque<RBeat> rbeats;
  std::deque<Cqe> cqe_expect;
  ReqFifo qerr_f{"qerr", {}, {}}, stop_f{"stop", {}, {}};
  std::vector<uint64_t> qerr_cqe_cycles;  // cycles the CQEs that push qerr requests were first offered
  uint64_t last_r_at = 0;
  bool sanitize = true;
  bool manual = false;  // expected CQEs set by the test, WQE reads not checked
  uint32_t manual_q = 0;
  bool auto_events = true;  // the generator posts WQEs and makes events
  bool qerr_low = false;    // qerr_ready held low by the test
  uint64_t qhold_until = 0;
  uint64_t reads = 0, cqes = 0, failed_cqes = 0, flush_cqes = 0, implied_cqes = 0, n_events = 0;
  uint64_t qholds = 0, qerr_full_waits = 0;
  std::vector<Cqe> cqe_log;  // CQEs taken (equal to the reference's)
  std::deque<HerrX> herr_x;  // accepted HERR events waiting for herr_done
  uint64_t herr_seq_expect = 0, herr_dones = 0, herrs_sent = 0;
  uint64_t rd_holds = 0;     // cycles a failed READ's CQE was due while its QP was reported busy in RX
};

TEST_F(CompBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  Knobs k;
  k.lost = 3;
  k.herr = 4;
  k.rdbusy = 30;
  random_traffic(std::min<uint32_t>(kQps, 6), 120, k, 25, 3000);
  EXPECT_GT(herr_dones, 10u);
  EXPECT_GT(rd_holds, 20u) << "no failed READ completion ever had to wait for the RX engine";
  EXPECT_GT(cqes, 5000u);
  EXPECT_GT(failed_cqes, 50u);
  EXPECT_GT(reads, 5000u);
  EXPECT_GT(flush_cqes, 20u);
  EXPECT_GT(implied_cqes, 5u);
  EXPECT_GT(qerr_f.taken.size(), 50u);
  EXPECT_GT(qholds, 20u);
}

// Many QPs fail while qerr_ready is low for thousands of cycles at a time (holds outlast
// drains): the FIFO fills and failures wait for it, other completions behind them too.
TEST_F(CompBench, RandomTrafficQerrHeldLow) {
  SRNIC_BENCH_TRACE();
  Knobs k;
  k.nak = 20;
  k.bad = 15;
  k.lost = 15;
  k.herr = 15;
  random_traffic(std::min<uint32_t>(kQps, 16), 20, k, 100, 12000);
  EXPECT_GT(herr_dones, 5u);
  EXPECT_GT(qerr_f.taken.size(), 40u);
  EXPECT_GT(qerr_full_waits, 0u) << "the qerr FIFO never filled";
}

// A malformed WQE (length > 2^31, MTU 256) whose predecessor's ACK is processed before its
// CEV_LERR (the header allows either order): the ACK walk must stop at it, as nothing of
// it was sent, and the LERR must then complete it with its status. Expected CQEs are
// written out here rather than taken from the reference, which follows the RTL's rules.
TEST_F(CompBench, OverlongWqeAckedBeforeItsLocalError) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 1;
  configure(q);
  ASSERT_FALSE(HasFatalFailure());
  Qp& s = qps[q];
  // Re-create q with MTU 256 and a known ring.
  s.mtu = 1;
  s.log_sq = 3;
  s.ring.assign(8, Wqe{});
  s.psn = 0x100000;
  qp_modify(q, true);
  ASSERT_FALSE(HasFatalFailure());
  Wqe w0 = random_wqe(s, 100, false);
  w0.op = kWrWrite;
  w0.len = 100;
  Wqe w1 = w0;
  w1.wr_id = w0.wr_id + 1;
  w1.len = 0xC0000000u;  // 3 GiB: LOC_QP_OP_ERR, nothing sent
  s.ring[0] = w0;
  s.ring[1] = w1;
  manual = true;
  manual_q = q;
  auto ev = [&](uint8_t kind, uint32_t psn, uint8_t st) {
    Ev e{};
    e.f[kEKind] = kind;
    e.f[kEQpn] = q;
    e.f[kEPsn] = psn;
    e.f[kEStatus] = st;
    e.f[kEHasAck] = kind == kAcks;
    if (kind == kLerr) e.f[kEPsn2] = 2;  // producer index: WQEs 0 and 1 posted
    events.push_back(e);
  };
  ev(kAcks, 0x100000, 0);  // WQE 0 (one packet, PSN 0x100000) acknowledged
  ev(kLerr, 0x100001, 2);  // then the send path reports WQE 1
  cqe_expect.push_back({s.cqn, q, w0.wr_id, w0.len, 0, kWcWrite, 0});
  Cqe c1{s.cqn, q, w1.wr_id, w1.len, 1, kWcWrite, 2};
  c1.qerr = true;  // the QP enters the error state: its receive side is told
  c1.gen = s.gen;
  cqe_expect.push_back(c1);
  Knobs k;
  k.post = 0;
  k.ev = k.ar = k.cqe = k.qerr = 100;
  k.lat = 5;
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_TRUE(cqe_expect.empty()) << cqe_expect.size() << " expected CQEs missing";
  EXPECT_EQ(cqes, 2u);
  ASSERT_EQ(qerr_f.taken.size(), 1u);
  EXPECT_EQ(qerr_f.taken[0].qpn, q);
  EXPECT_TRUE(stop_f.taken.empty()) << "a refused WQE sent nothing: no stop request";
}

// qerr_ready stays low while 16 QPs fail (fatal NAK, refused WQE, lost READ responses in
// turn): their CQEs come out and fill the qerr FIFO. A 17th failure (on a QP reset and
// reused where the bench has only 16) must then wait with its failing CQE. The event behind
// it (an ACK of another QP) is taken and its WQEs read (the issue stage does not wait for
// the walk), but its completion waits behind the stalled walk (walks are in read order);
// once qerr_ready rises every request comes out in failure order and the stalled
// completions follow.
TEST_F(CompBench, QerrFullStallsCompletions) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_events = false;
  qerr_low = true;
  std::vector<uint32_t> pool;  // distinct QPNs: 18 where there are that many
  while (pool.size() < std::min<uint32_t>(kQps, 18)) {
    const uint32_t q = uint32_t(rng.below(kQps));
    if (std::find(pool.begin(), pool.end(), q) == pool.end()) pool.push_back(q);
  }
  Knobs k;
  k.post = 0;
  k.ev = 100;
  k.cqe = 70;
  k.lat = 10;
  auto ev = [&](uint8_t kind, uint32_t q, uint32_t psn, uint8_t st, uint32_t psn2, bool ack, bool rd) {
    const uint64_t e[7] = {kind, q, psn, st, psn2, ack, rd};
    push_event(e);
  };
  auto good = [&](uint32_t q, uint8_t op) {
    Wqe w = random_wqe(qps[q], 50, false);
    w.op = op;
    post_wqe(q, w, false);
    return qps[q].posted.back();
  };
  // One failure of q, after 0..2 WQEs that complete normally.
  auto fail = [&](uint32_t q, int kind) {
    do configure(q);
    while (qps[q].log_sq < 2 && !HasFatalFailure());  // room for the 4 WQEs posted here
    const int before = int(rng.range(0, 2));
    Posted p{};
    for (int i = 0; i < before; ++i) p = good(q, uint8_t(rng.below(2) ? kWrSend : kWrWrite));
    switch (kind) {
      case 0: {  // fatal NAK inside the next WQE: the ones before complete with it
        const Posted n = good(q, uint8_t(rng.below(5)));
        ev(kNak, q, n.first, kNakStatus[rng.below(4)], 0, false, false);
        break;
      }
      case 1: {  // refused WQE: reported first, completed once the WQEs ahead are acknowledged
        Wqe w = random_wqe(qps[q], 50, false);
        w.op = uint8_t(rng.range(5, 255));
        post_wqe(q, w, true);
        ev(kLerr, q, qps[q].bad_psn, kLerrStatus[rng.below(2)], qps[q].pi, false, false);
        if (before) ev(kAcks, q, p.last, 0, 0, true, false);
        break;
      }
      default: {  // a READ whose responses were lost, then an ACK beyond it
        good(q, kWrRead);
        const Posted w = good(q, kWrWrite);
        ev(kAcks, q, w.last, 0, 0, true, false);
        break;
      }
    }
  };
  auto run_until_idle = [&](int limit) {
    for (int i = 0; i < limit && !HasFatalFailure(); ++i) {
      if (events.empty() && !holding && ar_expect.empty() && rbeats.empty() && cqe_expect.empty()) return;
      cycle(k);
    }
  };
  std::vector<uint32_t> order;  // the failing QPs, in failure order
  for (int i = 0; i < 16 && !HasFatalFailure(); ++i) {
    fail(pool[size_t(i)], i % 3);
    order.push_back(pool[size_t(i)]);
    run_until_idle(2000);
    ASSERT_TRUE(cqe_expect.empty()) << "failure " << i << " on QP " << order.back() << ": CQEs missing";
  }
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(qerr_f.in.size(), 16u);
  ASSERT_EQ(qerr_cqe_cycles.size(), 16u);
  EXPECT_TRUE(qerr_f.taken.empty());

  const uint32_t q17 = pool.size() > 16 ? pool[16] : pool[0];
  const uint32_t other = pool.size() > 17 ? pool[17] : pool[1];
  fail(q17, 0);
  order.push_back(q17);
  configure(other);  // a ring of 2 or more: one WQE
  Wqe w = random_wqe(qps[other], 100, false);
  w.op = kWrWrite;
  post_wqe(other, w, false);
  ev(kAcks, other, qps[other].posted.back().last, 0, 0, true, false);
  ASSERT_FALSE(HasFatalFailure());
  k.cqe = 100;
  for (int i = 0; i < 600 && !HasFatalFailure(); ++i) cycle(k);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(cqe_expect.empty());
  EXPECT_EQ(cqe_expect.front().qpn, q17);
  EXPECT_TRUE(cqe_expect.front().qerr) << "the 17th failing CQE came out while the qerr FIFO was full";
  EXPECT_EQ(qerr_cqe_cycles.size(), 16u);
  EXPECT_TRUE(events.empty()) << "the ACK behind the stalled failure was not taken: the issue stage waits for the walk";
  EXPECT_TRUE(std::none_of(ar_expect.begin(), ar_expect.end(), [&](const Ar& a) { return a.q == other; }))
      << "the WQE read of the ACK behind the stalled failure was not made";
  EXPECT_FALSE(find_cqe(other) == cqe_expect.end()) << "the ACK's CQE overtook the stalled failure";
  EXPECT_GT(qerr_full_waits, 500u);

  qerr_low = false;  // the RX engine takes requests again, at random
  drain(true);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(qerr_f.taken.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(qerr_f.taken[i].qpn, order[i]) << "qerr request " << i;
  ASSERT_EQ(qerr_cqe_cycles.size(), 17u);
  EXPECT_GT(qerr_cqe_cycles[16], qerr_f.taken[0].cycle) << "the 17th failure completed before the FIFO had room";
  EXPECT_EQ(qps[other].ci, 1u) << "the ACK behind it never completed its WQE";
}

// A fatal NAK on the WQE right before a refused one whose CEV_LERR came first: the NAK
// fails the QP (one qerr request, one stop request); the flush that follows the send
// path's report reaches the refused WQE with its PSN matching the recorded one. The QP is
// already in error, so that WQE completes with WR_FLUSH_ERR and pushes no second qerr
// request.
TEST_F(CompBench, FatalNakJustBeforeARefusedWqeFailsOnce) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_events = false;
  const uint32_t q = uint32_t(rng.below(kQps));
  configure(q);
  ASSERT_FALSE(HasFatalFailure());
  Wqe a = random_wqe(qps[q], 100, false);
  a.op = kWrWrite;
  post_wqe(q, a, false);
  Wqe b = random_wqe(qps[q], 0, false);
  b.op = 5;
  post_wqe(q, b, true);
  const uint32_t a_psn = qps[q].posted[0].first;
  uint64_t e[7] = {};
  lerr_event(q, qps[q].bad_psn, e);  // the send path stopped at b
  push_event(e);
  const uint64_t nak[7] = {kNak, q, a_psn, 10, 0, 0, 0};
  push_event(nak);
  Knobs k;
  k.post = 0;
  k.ev = k.cqe = k.qerr = k.stop = 100;
  for (int i = 0; i < 400 && !qps[q].stopped && !HasFatalFailure(); ++i) cycle(k);
  ASSERT_TRUE(qps[q].stopped) << "no stop request after the NAK";
  lerr_event(q, rng.u32() & kPsnMask, e);  // the stopped send path reports its producer index
  push_event(e);
  drain(true);
  EXPECT_EQ(qerr_f.taken.size(), 1u);
  EXPECT_EQ(stop_f.taken.size(), 1u);
  EXPECT_EQ(qps[q].ci, 2u) << "the refused WQE never completed";
}

// Host-driven ERR directed cases. post_plain posts a valid WQE (WRITE or SEND, signaled or
// not); herr_run sends the queued events and drains.
class CompHerrBench : public CompBench {
 public:
  uint32_t q = 0;
  void start() {
    reset();
    auto_events = false;
    q = uint32_t(rng.below(kQps));
    do configure(q);  // a ring of 8 or more slots
    while (qps[q].log_sq < 3 && !HasFatalFailure());
  }
  void post_plain(bool signaled, uint8_t op = kWrWrite) {
    Wqe w = random_wqe(qps[q], signaled ? 100 : 0, false);
    w.op = op;
    if (w.len > 3 * mtu_bytes(qps[q].mtu)) w.len = mtu_bytes(qps[q].mtu);
    post_wqe(q, w, false);
  }
  void acks_to(uint32_t psn) {
    const uint64_t ev[7] = {kAcks, q, psn, 0, rng.u32() & kPsnMask, 1, 0};
    push_event(ev);
  }
  void herr() {
    uint64_t ev[7] = {};
    herr_event(q, ev);
    push_event(ev);
  }
  void expect_statuses(const std::vector<std::pair<uint16_t, uint8_t>>& want) {
    ASSERT_EQ(cqe_log.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(cqe_log[i].idx, want[i].first) << "CQE " << i;
      EXPECT_EQ(cqe_log[i].status, want[i].second) << "CQE " << i;
    }
  }
};

// WQEs sent and not acknowledged: the two acknowledged complete, the other four are flushed
// in order at once; one qerr request and one herr_done; ACKs after the HERR complete nothing.
TEST_F(CompHerrBench, FlushesSentAndUnacknowledged) {
  SRNIC_BENCH_TRACE();
  start();
  for (int i = 0; i < 6; ++i) post_plain(i < 2 || rng.percent(50), i & 1 ? kWrSend : kWrWrite);
  acks_to(qps[q].posted[1].last);
  herr();
  drain(true);
  std::vector<std::pair<uint16_t, uint8_t>> want = {{0, 0}, {1, 0}};
  for (uint16_t i = 2; i < 6; ++i) want.push_back({i, kWcFlushErr});
  expect_statuses(want);
  EXPECT_EQ(herr_dones, 1u);
  EXPECT_EQ(qerr_f.taken.size(), 1u);
  EXPECT_EQ(qerr_f.taken.size() ? qerr_f.taken[0].qpn : ~0u, q);
  EXPECT_TRUE(stop_f.taken.empty());
  // the peer acknowledges everything that was sent: nothing completes
  acks_to(qps[q].posted[5].last);
  acks_to(qps[q].posted[3].last);
  drain(true);
  EXPECT_EQ(cqe_log.size(), 6u) << "an ACK after the HERR completed a WQE";
  // WQEs posted after the HERR: the stopped send path reports them (CEV_LERR), flushed
  post_plain(true);
  uint64_t ev[7] = {};
  lerr_event(q, rng.u32() & kPsnMask, ev);
  push_event(ev);
  drain(true);
  ASSERT_EQ(cqe_log.size(), 7u);
  EXPECT_EQ(cqe_log[6].status, kWcFlushErr);
  EXPECT_EQ(qerr_f.taken.size(), 1u);
}

// The QP already failed by a fatal NAK (qerr and stop pushed, flushing up to the NAKed WQE):
// the HERR pushes no second qerr request and raises the flush limit to its producer index.
TEST_F(CompHerrBench, AfterFatalNakNoSecondQerr) {
  SRNIC_BENCH_TRACE();
  start();
  for (int i = 0; i < 5; ++i) post_plain(true);
  const uint64_t nak[7] = {kNak, q, qps[q].posted[1].first, 10, 0, 0, 0};
  push_event(nak);
  drain(true);
  ASSERT_EQ(cqe_log.size(), 2u);
  EXPECT_EQ(qerr_f.taken.size(), 1u);
  EXPECT_EQ(stop_f.taken.size(), 1u);
  herr();
  drain(true);
  expect_statuses({{0, 0}, {1, 10}, {2, kWcFlushErr}, {3, kWcFlushErr}, {4, kWcFlushErr}});
  EXPECT_EQ(herr_dones, 1u);
  EXPECT_EQ(qerr_f.taken.size(), 1u) << "second qerr request for a QP already in error";
}

// A refused WQE reported (CEV_LERR) but not reached yet: the HERR flushes it like the
// others (WR_FLUSH_ERR, not its local error status); one qerr request, from the HERR.
TEST_F(CompHerrBench, RefusedWqePendingIsFlushed) {
  SRNIC_BENCH_TRACE();
  start();
  post_plain(false);
  Wqe b = random_wqe(qps[q], 0, false);
  b.op = 5;
  post_wqe(q, b, true);
  post_plain(false);
  uint64_t ev[7] = {};
  lerr_event(q, qps[q].bad_psn, ev);
  push_event(ev);
  drain(true);
  EXPECT_TRUE(cqe_log.empty()) << "the WQE before the refused one is not acknowledged";
  EXPECT_TRUE(qerr_f.taken.empty());
  herr();
  drain(true);
  expect_statuses({{0, kWcFlushErr}, {1, kWcFlushErr}, {2, kWcFlushErr}});
  EXPECT_EQ(qerr_f.taken.size(), 1u);
  EXPECT_EQ(herr_dones, 1u);
}

// HERR with nothing to flush: herr_done and a qerr request, no WQE read, no CQE; a second
// HERR (the QP is flushing) gives herr_done alone.
TEST_F(CompHerrBench, NothingToFlush) {
  SRNIC_BENCH_TRACE();
  start();
  herr();
  drain(true);
  EXPECT_EQ(reads, 0u);
  EXPECT_TRUE(cqe_log.empty());
  EXPECT_EQ(herr_dones, 1u);
  EXPECT_EQ(qerr_f.taken.size(), 1u);
  qps[q].herr = false;
  herr();
  drain(true);
  EXPECT_EQ(herr_dones, 2u);
  EXPECT_EQ(qerr_f.taken.size(), 1u);
}

}  // namespace
}  // namespace srnic::verif::blocks
