// srnic_rx_engine bench: the bench plays every neighbour of the engine. Parser records
// (rx_meta_t) go in with their frame beats (payload at the opcode's offset, random header
// and ICRC bytes, random gaps on d_valid); a C++ stand-in for srnic_rx_rqfetch sets
// rq_fetched/rq_idx from a per-QP fetch and producer index, queues the fetched receive WQE
// (random latency) and honours resyncs; the MR table answers each request from a fixed
// set of regions (key, PD, access, bounds); the READ-context table (64 entries) answers
// lookups by QP and PSN range, and the implied-NAK query combinationally (bq_hit: a valid
// entry of rdc_bq_qpn whose last PSN is strictly before rdc_bq_psn in 24-bit serial
// arithmetic; bq_any: any valid entry of that QP), from its own copy of the table, which
// follows the engine's frees and flushes as srnic_rd_ctx would; the send path reports each
// request on snd_* (the QP's next send PSN), and the timers report local ACK timeouts and
// the ends of RNR waits (tmo_*, tmo_rnr; random while no expiry is offered); the send path
// ends retry episodes (note_*, after a go-back-N rewind that drops the READ contexts it made
// during the episode); aw/w/task/cev/cqe/resync/tk see random back-pressure.
// A reference of the engine's rules (responder PSN/duplicate/gap, opcode sequence,
// access, lengths, R_Key, receive WQE and RNR (with the QP's min_rnr), error stop, MSN,
// duplicate READs executed again; requester ACK/NAK events, READ responses in PSN order
// with one context lookup per READ, READ_DONE, stale responses, retry episodes)
// predicts, per record, the MR requests, context lookups and frees,
// WQE pops and resyncs, every AW burst (64-byte aligned, never across 4 KiB) and W beat
// (strobes, last, the payload bytes under the strobes), ACK/NAK/READ tasks, completion
// events, receive CQEs, timer kicks and the counter pulses; all must come out exactly and
// in order, and no task/CQE/event/kick may leave before the packet's payload is written.
// The directed tests check their cases against values written out by hand as well;
// QpModifyDuringPacketKeepsNewState checks that a QP_MODIFY racing with a packet of its QP
// is not undone by the packet's write-back; ResetWaitsForThePacketInProcess that a QP_MODIFY
// to RESET is taken only once no packet of its QP is in process (offer_reset: the bench
// advances the QP's incarnation when the engine takes it).
// Error state: a packet that moves a QP's receive side to error (class C), or a qerr event
// from the completion engine, hands the consumer index over (a resync marked err); the
// stand-in then stops fetching for that QP and sends every posted WQE back as a flush record,
// which must complete with WR_FLUSH_ERR and the WQE's wr_id; WQEs fetched for packets that
// reach a QP already in error are dropped without a resync.
// Go-back-N: a NAK PSN sequence error (RT_SEQ), an RNR NAK (RT_RNR, its timer code), a gap
// in a READ's responses, a READ's first response missing, a response of a later READ (also
// beyond a READ without any response: from the response's PSN), or an ACK/NAK beyond a READ
// that is not complete (RT_IMPLIED; an ACK inside a READ's range is none), and a local ACK
// timeout (RT_TIMEOUT, the next send PSN) each start a retry episode: one CEV_RETRY (rt_kind,
// rt_psn, rt_code; the QP's READ contexts stay until the rewind's note), then,
// until note_*, the QP's READ responses are dropped, NAKs only acknowledge (CEV_ACK up to the
// NAK's PSN - 1) and timeouts are ignored (as they are for a QP in error or not in RTS). The
// end of an RNR wait (tmo_rnr) opens an RT_TIMEOUT episode marked RTC_RNR_END from the next
// send PSN; during an episode it is kept (rxp) and the note opens it at once (from the next
// send PSN read then), unless the QP failed or left RTS meanwhile; a QP in error or not in
// RTS ignores it. After
// a note the QP resends (rcv) until in-order progress (an ACK beyond no unfinished READ, once
// the QP holds a READ context again if its episode freed any (rrd), or a READ response
// placed): meanwhile an ACK beyond a READ and a sequence NAK only acknowledge, and a
// READ response beyond a READ without responses, or of a READ whose first response is
// missing, is dropped; RNR NAKs and timeouts open episodes as before. Timer kicks: one per
// accepted ACK/NAK of a live QP and per placed READ response, tk_stop exactly when
// everything sent is acknowledged (the next send PSN follows the PSN, no READ in progress
// and no READ context of the QP for an ACK, the READ's last response for a READ response)
// and no request of the QP left the send path from the cycle before the take until the
// decision (the snd_* race); nothing is taken while a kick waits.
// QP incarnations (decision 109): the bench plays srnic_qp_gen, a per-QP table (random
// values at the start) answering gen_a/gen_b for gen_a_qpn/gen_b_qpn combinationally; tests
// advance a QP's entry (a reset) between cycles, the random test now and then, also while
// answers, events and CQEs of the QP wait in the placement stage, never while a packet or
// event of the QP is being classified. Every task, completion event and receive CQE carries
// the incarnation its QP had when the packet or event was taken. A qerr carries the incarnation it was made for: one
// for an earlier incarnation (stale when offered, or made stale by a reset while it waited) is
// taken with stale_drop high in that cycle and does nothing else (no resync, flush, CQE or
// READ-context flush; the QP keeps receiving); stale_drop is low in every other cycle, also
// for a qerr beyond NUM_QPS.
#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "Vsrnic_rx_engine.h"
#include "bench.hpp"
#include "payload_writes.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr uint32_t kQps = BENCH_NUM_QPS;
constexpr uint32_t kMask = 0xFFFFFF;
constexpr int kCmdWait = BENCH_NUM_QPS + 20;  // context RAMs clear themselves after reset
constexpr int kRdEntries = 64;

// BTH opcodes (RC)
constexpr uint8_t kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02, kSendLastImm = 0x03,
                  kSendOnly = 0x04, kSendOnlyImm = 0x05, kWriteFirst = 0x06, kWriteMiddle = 0x07,
                  kWriteLast = 0x08, kWriteLastImm = 0x09, kWriteOnly = 0x0A, kWriteOnlyImm = 0x0B,
                  kReadReq = 0x0C, kRespFirst = 0x0D, kRespMiddle = 0x0E, kRespLast = 0x0F, kRespOnly = 0x10,
                  kAck = 0x11;
// AETH syndromes, event kinds, retry kinds, QP states, access bits, work completion codes
constexpr uint8_t kSynAck = 0x1F, kSynRnr = 0x2E, kSynPsn = 0x60, kSynInv = 0x61, kSynAcc = 0x62, kSynOp = 0x63;
constexpr uint8_t kCevAck = 0, kCevReadDone = 1, kCevRetry = 2, kCevNak = 3;
constexpr uint8_t kRtSeq = 0, kRtImplied = 1, kRtRnr = 2, kRtTimeout = 3;
constexpr uint8_t kRtcRnrEnd = 1;  // srnic_pkg::RTC_RNR_END: with RT_TIMEOUT, an RNR wait's end
constexpr uint8_t kQpsReset = 0, kQpsInit = 1, kQpsRtr = 2, kQpsRts = 3, kQpsErr = 6;
constexpr uint8_t kAccLocalWrite = 1, kAccRemoteWrite = 2, kAccRemoteRead = 4;
constexpr uint8_t kWcRecv = 128, kWcRecvImm = 129;
constexpr uint8_t kWcLocQpOpErr = 2, kWcWrFlushErr = 5, kWcRemInvReqErr = 9, kWcRemAccessErr = 10, kWcRemOpErr = 11,
                  kWcBadRespErr = 7;
constexpr uint8_t kDefMinRnr = 0x0E;  // min_rnr of the directed tests' QPs (RNR NAK 0x2E)

bool op_resp(uint8_t op) { return op >= kRespFirst; }
bool op_send(uint8_t op) { return op <= kSendOnlyImm; }
constexpr uint64_t kMaxMsgBytes = 1ull << 31;   // IBA's largest message
bool op_write(uint8_t op) { return op >= kWriteFirst && op <= kWriteOnlyImm; }
bool op_imm(uint8_t op) {
  return op == kSendLastImm || op == kSendOnlyImm || op == kWriteLastImm || op == kWriteOnlyImm;
}
bool op_first(uint8_t op) {
  return op == kSendFirst || op == kSendOnly || op == kSendOnlyImm || op == kWriteFirst || op == kWriteOnly ||
         op == kWriteOnlyImm;
}
bool op_last(uint8_t op) {
  return op == kSendLast || op == kSendLastImm || op == kSendOnly || op == kSendOnlyImm || op == kWriteLast ||
         op == kWriteLastImm || op == kWriteOnly || op == kWriteOnlyImm;
}
bool op_reth(uint8_t op) { return op == kWriteFirst || op == kWriteOnly || op == kWriteOnlyImm || op == kReadReq; }
bool op_aeth(uint8_t op) { return op == kRespFirst || op == kRespLast || op == kRespOnly || op == kAck; }
// srnic_rx_rqfetch reads a receive WQE for these
bool op_consumes(uint8_t op) {
  return op == kSendFirst || op == kSendOnly || op == kSendOnlyImm || op == kWriteLastImm || op == kWriteOnlyImm;
}
uint32_t ext_len(uint8_t op) { return (op_reth(op) ? 16 : 0) + (op_imm(op) ? 4 : 0) + (op_aeth(op) ? 4 : 0); }
uint32_t mtu_bytes(int code) { return 128u << code; }
int mtu_log2(int code) { return 7 + code; }
bool psn_ge(uint32_t a, uint32_t b) { return ((a - b) & kMask) < 0x800000; }
// a after b (24-bit serial arithmetic, half window)
bool psn_gt(uint32_t a, uint32_t b) { return ((a - b) & kMask) != 0 && ((a - b) & kMask) < 0x800000; }
uint32_t npkts(uint32_t len, int mtu) {
  return len == 0 ? 1 : uint32_t(((uint64_t(len) + mtu_bytes(mtu) - 1) >> mtu_log2(mtu)) & kMask);
}

struct RWqe {
  uint64_t wr_id = 0, addr = 0;
  uint32_t len = 0, lkey = 0;
};
// What the send path reports (snd_*) before a record is offered.
enum SndMode { kSndDefault, kSndNone, kSndAuto, kSndCurrent, kSndValue };
struct Pkt {
  uint64_t f[kRmN] = {};
  // kSndAuto: the response's PSN + 0x1000 (sent long ago; directed tests of other rules),
  // kSndCurrent: the QP's next send PSN as the bench's send path has it then, kSndValue: snd_val,
  // kSndNone: nothing; kSndDefault becomes kSndAuto for responses (auto_snd) and kSndNone else.
  SndMode snd_mode = kSndDefault;
  uint32_t snd_val = 0;
  unsigned snd_gap = 3;    // cycles from that report to the first offer (2 and more: the engine reads it)
  bool snd_sent = false;
  uint64_t snd_at = 0;
  uint64_t offer_at = 0;   // not offered before this cycle
  std::vector<uint8_t> pay;
  uint64_t serial = 0;     // queued order (the beats of a packet carry it); flush records too
  bool fetched = false;
  RWqe wqe;
};
struct Mr {
  uint32_t key, pd;
  uint8_t acc;
  uint64_t va;
  uint32_t len;
  uint64_t pa;
};
struct RdCtx {
  bool valid = false;
  uint32_t qpn = 0, first = 0, last = 0;
  uint64_t pa = 0;
  int mtu = 0;
  uint32_t llen = 0;  // payload bytes of the READ's last response
};
struct Cfg {
  uint8_t state = 0, access = 0, min_rnr = 0;
  int mtu = 0;
  uint32_t pd = 0;
  uint16_t cqn = 0;
};
// the engine's per-QP receive state (zero after reset, as the context RAM)
struct St {
  uint32_t epsn = 0, msn = 0;
  uint16_t rq_ci = 0;
  int in_msg = 0;  // 0 none, 1 SEND, 2 WRITE
  bool nak_sent = false, err = false;
  uint64_t wr_pa = 0;
  uint32_t wr_resid = 0, wr_len = 0;
  uint64_t rcv_wrid = 0, rcv_pa = 0;
  uint32_t rcv_len = 0, rcv_done = 0;
  uint16_t rcv_idx = 0;
  bool rd_valid = false;
  uint64_t rd_pa = 0;
  uint32_t rd_first = 0, rd_last = 0, rd_next = 0;
  uint8_t rd_idx = 0;
  int rd_mtu = 0;
  uint32_t rd_llen = 0;
  bool rwp = false;  // a retry episode is open
  bool rcv = false;  // resending after an episode: no in-order progress seen yet
  bool rrd = false;  // an episode freed READ contexts: ACKs end rcv only once q holds one again
  bool rxp = false;  // an RNR wait ended during the episode: its episode opens at the note
};

struct MrX {
  uint32_t key, pd;
  uint8_t acc;
  uint64_t va;
  uint32_t len;
  bool ok;
  uint64_t pa;
};
struct LkX {
  uint32_t qpn, psn;
  bool hit;
  uint8_t idx;
  uint64_t pa;
  uint32_t first, last;
  int mtu;
  uint32_t llen;
};
// Expected outputs carry the number of the take that predicted them (seq), so that an output
// of one packet can be checked against the payload writes of the same and earlier packets
// only (the placement stage writes one packet while later ones are classified), and the
// payload writes carry the QP of a READ response (rdq, -1 for other packets) for rdq_busy.
constexpr uint64_t kNoSeq = ~uint64_t(0);
struct AwX {
  uint64_t addr;
  unsigned len;  // AXI len (beats - 1)
  uint64_t seq = kNoSeq;
  int64_t rdq = -1;
  bool operator==(const AwX& o) const { return addr == o.addr && len == o.len; }
};
struct WX {
  uint64_t strb;
  bool last;
  uint8_t data[64];
  uint64_t seq = kNoSeq;
  int64_t rdq = -1;
};
struct TaskX {
  bool rd;
  uint32_t qpn, psn;
  uint8_t syn;
  uint32_t msn;
  uint64_t addr;
  uint32_t len;
  int mtu;
  uint64_t seq = kNoSeq;
  uint8_t gen = 0;   // the QP's incarnation at the take
};
struct CqeX {
  uint16_t cqn;
  uint64_t wr_id;
  uint32_t byte_len, imm, qpn;
  uint16_t idx;
  uint8_t opcode, status;
  bool with_imm;
  uint64_t seq = kNoSeq;
  uint8_t gen = 0;   // the QP's incarnation at the take
};
struct CevX {
  uint8_t kind;
  uint32_t qpn, psn;
  uint8_t status;
  uint8_t rt_kind = 0;   // CEV_RETRY only
  uint32_t rt_psn = 0;
  uint8_t rt_code = 0;
  uint64_t seq = kNoSeq;
  bool has_rd = false;   // CEV_NAK: a READ before it without all its responses (from psn2 on)
  uint32_t psn2 = 0;
  uint8_t gen = 0;       // the QP's incarnation at the take
};
struct RsX {
  uint32_t qpn;
  uint16_t ci;
  bool err;  // hand-over: the QP's receive side entered the error state
};
// A timer kick: predicted at the take (QP, the STOP rule without the send race); the race
// (a send of the QP from the cycle before the take to the decision, the cycle before tk_valid
// rises) is applied when the kick shows.
struct TkX {
  uint32_t q;
  bool base;
  uint64_t take;
  bool rose = false;
  uint64_t rise = 0;
  bool stop = false;
};
struct TkLog {
  uint32_t q;
  bool stop, base;
};
// a write of the engine's next-send-PSN RAM: a send (snd_valid in cycle cyc) or a QP_MODIFY
// (init_sq_psn, taken in cycle cyc + 1)
struct SndRec {
  uint64_t cyc;
  uint32_t val;
  bool send;
};
enum TakeKind { kTakePkt, kTakeQerr, kTakeNote, kTakeTmo, kTakeRack };
struct TakeX {
  TakeKind kind;
  uint32_t q;
  uint64_t cyc;
};
struct Counts {
  uint64_t drop_qp = 0, dup = 0, psn_err = 0, access_err = 0, rx_nak = 0, no_room = 0;
};
struct Stats {
  uint64_t retries[4] = {}, kicks = 0, stops = 0, race_clears = 0, anyctx_clears = 0, rwp_drops = 0,
           rwp_naks = 0, stale = 0, dup_rd = 0, dup_rd_drop = 0, tmo_ignored = 0, notes = 0, kick_holds = 0,
           bq_implied = 0, ack_inside = 0, ghosts = 0, rd_kicks = 0, rd_stops = 0, racks = 0, rack_ignored = 0,
           rack_naks = 0, resv_takes = 0, resv_rels = 0, resv_tasks = 0,
           owed_holds = 0;  // cycles a record waited for a qerr owed in the completion engine
  // episodes that kept READ contexts (none frees them); rcv: ACKs beyond a READ and sequence NAKs that
  // only acknowledge, READ responses dropped, in-order progress clearing it; implied NAKs for
  // a READ response beyond a READ that got none of its responses
  uint64_t rt_kept = 0, rcv_acks = 0, rcv_naks = 0, rcv_drops = 0, rcv_clears = 0, bq_rsp_implied = 0;
  uint64_t rrd_holds = 0;  // ACKs beyond no READ that did not end rcv: READs dropped by the rewind
  uint64_t nak_unfinished_read = 0;  // fatal NAKs beyond a READ without all its responses
  // RNR waits' ends (tmo_rnr): episodes opened at once, kept during an episode (rxp), opened at
  // that episode's note, dropped at the note (the QP failed or left RTS meanwhile), ignored
  // (not RTS, failed)
  uint64_t rnr_ends = 0, rxp_kept = 0, rxp_opened = 0, rxp_dropped = 0, rnr_end_ignored = 0;
};
struct WqeSlot {
  RWqe w;
  uint64_t at;  // cycle it reaches the engine
};

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

// Ready/valid probabilities (percent) and response latencies (cycles).
struct Knobs {
  unsigned meta = 80, d = 80, aw = 80, w = 80, task = 80, cev = 80, cqe = 80, rs = 70, lat = 6;
  unsigned tk = 80;      // tk_ready
  unsigned qerr = 0;     // per-mille chance per cycle that the completion engine reports a QP in error
  unsigned note = 0;     // per mille: the send path ends a QP's retry episode
  unsigned tmo = 0;      // per mille: a QP's local ACK timer expires
  unsigned rack = 0;     // per mille: the responder's queues offer a re-ACK event (a deferred ACK)
  unsigned rnr = 0;      // percent of those that are the end of an RNR wait (tmo_rnr)
  unsigned snd = 0;      // percent: a request of some QP (often the one in the engine) leaves the send path
  unsigned lat_min = 0;  // MR answers take at least this many cycles more
  unsigned bump = 0;     // per mille: some QP's incarnation advances (the host reset it)
  unsigned stale = 0;    // percent of qerr events made for an earlier incarnation of their QP
  unsigned owed = 0;     // per mille: a qerr is owed in the completion engine for 1..40 cycles (qerr_owed)
  unsigned room = 100;   // percent: srnic_resp_tx has a free slot for a request packet (resv_room)
};

class RxEngBench : public ::testing::Test {
 public:
  RxEngBench()
      : rng(test_seed()), dut(rng.next()), cfg(kQps), st(kQps), fi(kQps), pi(kQps), ring(kQps), snd_hist(kQps),
        sq_next(kQps, 0), gen_tab(kQps) {
    for (auto& r : ring) r.resize(256);
    for (auto& g : gen_tab) g = uint8_t(rng.below(16));   // srnic_qp_gen is not reset
  }

  void reset() {
    dut->meta_valid = dut->d_valid = dut->qp_cmd_valid = dut->mr_rsp = dut->wqe_valid = 0;
    dut->resync_ready = dut->aw_ready = dut->w_ready = dut->task_ready = dut->cev_ready = 0;
    dut->rdc_lk_rsp = dut->cqe_ready = dut->qerr_valid = dut->snd_valid = 0;
    dut->note_valid = dut->tmo_valid = dut->tmo_rnr = dut->tk_ready = dut->rdc_bq_hit = dut->rdc_bq_any = 0;
    dut->rack_valid = dut->qerr_owed = dut->note_owed = dut->note_gen = 0;
    owed_until = nowed_until = 0;
    dut->qerr_gen = dut->gen_a = dut->gen_b = 0;
    dut.reset();
  }

  // ------------------------------------------------------------ srnic_qp_gen's read ports
  // Answers gen_a/gen_b from the table for the QPNs the engine names now (both registered or
  // inputs: one settle suffices).
  void answer_gen() {
    const uint32_t a = uint32_t(dut->gen_a_qpn), b = uint32_t(dut->gen_b_qpn);
    dut->gen_a = gen_tab[a % kQps];
    dut->gen_b = gen_tab[b % kQps];
    dut.eval();
    ASSERT_EQ(uint32_t(dut->gen_a_qpn), a) << "gen_a_qpn depends on gen_a or gen_b";
    ASSERT_EQ(uint32_t(dut->gen_b_qpn), b) << "gen_b_qpn depends on gen_a or gen_b";
  }
  // q is reset: its incarnation advances (srnic_qp_gen's bump, seen from the next cycle).
  void bump_gen(uint32_t q) {
    gen_tab[q] = uint8_t((gen_tab[q] + 1) & 15);
    ++bumps;
  }
  // The completion engine reports q in error, for q's current incarnation or (stale) an
  // earlier one; a QPN beyond NUM_QPS carries a random one.
  void raise_qerr(uint32_t q, bool stale = false) {
    hold_qerr = true;
    qerr_q = q;
    qerr_g = q < kQps ? gen_tab[q] : uint8_t(rng.below(16));
    if (stale) qerr_g = uint8_t((qerr_g + 1 + rng.below(15)) & 15);
  }

  // ------------------------------------------------------------ configuration
  // QP_MODIFY with the given fields (the others random, all 24 of qp_cmd_t); the engine must
  // be idle. sq_psn >= 0 sets the next send PSN (init_sq_psn); otherwise init_sq_psn is
  // random, and followed.
  void qp_modify(uint32_t q, uint8_t state, int mtu, uint8_t access, uint32_t pd, uint16_t cqn, uint32_t rq_psn,
                 bool init_idx, bool init_rq_psn, uint8_t min_rnr = kDefMinRnr, int64_t sq_psn = -1) {
    for (size_t i = 0; i < kQpCmd.widths.size(); ++i)
      set_bits(dut->qp_cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, rng.next());
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->qp_cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
    put(kCQpn, q);
    put(kCState, state);
    put(kCMtu, uint64_t(mtu));
    put(kCAccess, access);
    put(kCPd, pd);
    put(kCRecvCqn, cqn);
    put(kCRqPsn, rq_psn);
    put(kCInitIdx, init_idx);
    put(kCInitRqPsn, init_rq_psn);
    put(kCMinRnr, min_rnr);
    const bool init_sq = sq_psn >= 0 || rng.percent(20);
    const uint32_t sqv = sq_psn >= 0 ? uint32_t(sq_psn) & kMask : rng.u32() & kMask;
    put(kCInitSqPsn, init_sq);
    put(kCSqPsn, sqv);
    // nothing else is offered meanwhile (held events are offered again afterwards)
    dut->meta_valid = dut->d_valid = dut->mr_rsp = dut->wqe_valid = dut->rdc_lk_rsp = dut->qerr_valid = 0;
    dut->snd_valid = dut->note_valid = dut->tmo_valid = dut->tmo_rnr = dut->tk_ready = 0;
    dut->rack_valid = dut->qerr_owed = dut->note_owed = 0;
    dut->qp_cmd_valid = 1;
    int i = 0;
    for (; i < kCmdWait; ++i) {
      dut.eval();
      answer_gen();
      const bool rdy = dut->qp_cmd_ready;
      EXPECT_FALSE(dut->tk_valid) << "QP " << q << ": timer kick during a QP_MODIFY";
      // re-initialising the QP or moving it to RESET frees its READ contexts
      EXPECT_EQ(bool(dut->rdc_flush_valid), rdy && (init_idx || state == kQpsReset)) << "QP " << q
                                                                                     << ": READ-context flush";
      if (rdy && dut->rdc_flush_valid) {
        ++ctx_flushes;
        for (auto& e : rdc_hw)
          if (e.qpn == q) e.valid = false;
      }
      if (rdy && init_sq) snd_write(q, dut.cycle() - 1, sqv, false);
      dut.tick();
      if (rdy) break;
    }
    dut->qp_cmd_valid = 0;
    ASSERT_LT(i, kCmdWait) << "QP_MODIFY of QP " << q << " not taken";
    Cfg& c = cfg[q];
    c.state = state;
    c.mtu = mtu;
    c.access = access;
    c.pd = pd;
    c.cqn = cqn;
    c.min_rnr = min_rnr;
    if (init_sq) sq_next[q] = sqv;
    if (init_idx || init_rq_psn) {
      st[q] = St{};
      st[q].epsn = rq_psn & kMask;
    }
    if (init_idx) {
      fi[q] = pi[q] = 0;
      fl_err[q] = false;
    }
    if (init_idx || state == kQpsReset)
      for (auto& e : rdc)
        if (e.valid && e.qpn == q) e.valid = false;
  }
  // A QP_MODIFY to RESET offered while traffic runs (qp_modify() needs an idle engine):
  // cycle() keeps it offered until the engine takes it (the other fields random, none
  // re-initialising: init_idx, init_rq_psn and init_sq_psn low, as a reset from RTS). In the
  // cycle it is taken the reference's QP enters RESET (a record of the QP taken in that same
  // cycle reads the new configuration: the context read forwards the write) and loses its
  // READ contexts; from the next cycle on the QP's incarnation has advanced, as srnic_qp_gen's
  // does once every block took the command.
  void offer_reset(uint32_t q) {
    fill_reset_cmd(dut->qp_cmd, rng, q);
    dut->qp_cmd_valid = 1;
    rst_on = true;
    rst_q = q;
  }
  // RESET -> INIT -> RTR (-> RTS), as the driver does it; RTR->RTS sets the next send PSN.
  void bring_up(uint32_t q, uint8_t state, int mtu, uint8_t access, uint32_t pd, uint16_t cqn, uint32_t epsn,
                uint8_t min_rnr = kDefMinRnr, int64_t sq_psn = -1) {
    qp_modify(q, kQpsInit, mtu, access, pd, cqn, 0, true, false, min_rnr);
    if (state >= kQpsRtr) qp_modify(q, kQpsRtr, mtu, access, pd, cqn, epsn, false, true, min_rnr);
    if (state >= kQpsRts)
      qp_modify(q, kQpsRts, mtu, access, pd, cqn, epsn, false, false, min_rnr,
                sq_psn >= 0 ? sq_psn : int64_t(rng.u32() & kMask));
  }

  void add_mr(const Mr& m) { mrs.push_back(m); }
  // The MR table's answer (the same rules as srnic_mr_table: key, PD, access, bounds).
  std::pair<bool, uint64_t> mr_answer(uint32_t key, uint32_t pd, uint8_t acc, uint64_t va, uint32_t len) const {
    for (const Mr& m : mrs)
      if (m.key == key) {
        const bool ok = m.pd == pd && (m.acc & acc) == acc && va >= m.va &&
                        (unsigned __int128)va + len <= (unsigned __int128)m.va + m.len;
        return {ok, ok ? m.pa + (va - m.va) : 0xBAD0000000000000ull | key};
      }
    return {false, 0xBAD1000000000000ull | key};
  }
  // A READ [first, last] of QP q (at q's path MTU) whose last response carries llen bytes:
  // the send path inserts it into the table (the lowest slot free in the engine's view too).
  int rdc_alloc(uint32_t q, uint32_t first, uint32_t last, uint64_t pa, uint32_t llen) {
    for (int i = 0; i < kRdEntries; ++i)
      if (!rdc[size_t(i)].valid && !rdc_hw[size_t(i)].valid) {
        rdc[size_t(i)] = RdCtx{true, q, first & kMask, last & kMask, pa, cfg[q].mtu, llen};
        rdc_hw[size_t(i)] = rdc[size_t(i)];
        return i;
      }
    return -1;
  }
  // A go-back-N rewind of q's send side drops its READ contexts (srnic_rd_ctx rw_flush).
  void rdc_rewind(uint32_t q) {
    for (auto* t : {&rdc, &rdc_hw})
      for (auto& e : *t)
        if (e.qpn == q) e.valid = false;
  }
  // the model's table: does q have a READ context, one that ends before psn
  bool ctx_any(uint32_t q) const {
    for (const RdCtx& e : rdc)
      if (e.valid && e.qpn == q) return true;
    return false;
  }
  bool ctx_before(uint32_t q, uint32_t psn) const {
    for (const RdCtx& e : rdc)
      if (e.valid && e.qpn == q && psn_gt(psn, e.last)) return true;
    return false;
  }
  void post_rwqe(uint32_t q, const RWqe& w) {
    ring[q][pi[q] & 255] = w;
    ++pi[q];
  }

  // ------------------------------------------------------------ the send path's reports
  void snd_write(uint32_t q, uint64_t cyc, uint32_t val, bool send) {
    auto& h = snd_hist[q];
    h.push_back({cyc, val & kMask, send});
    if (h.size() > 256) h.erase(h.begin(), h.begin() + 128);
  }
  // The next send PSN the engine reads for q in cycle t (a write lands the cycle after snd_valid).
  bool snd_value(uint32_t q, uint64_t t, uint32_t& v) const {
    const auto& h = snd_hist[q];
    for (size_t i = h.size(); i-- > 0;)
      if (h[i].cyc + 2 <= t) {
        v = h[i].val;
        return true;
      }
    return false;
  }
  // A request of q left the send path in [from, to].
  bool snd_race(uint32_t q, uint64_t from, uint64_t to) const {
    for (const SndRec& r : snd_hist[q])
      if (r.send && r.cyc >= from && r.cyc <= to) return true;
    return false;
  }
  void emit_snd(uint32_t q, uint32_t next) {
    dut->snd_valid = 1;
    dut->snd_qpn = q;
    dut->snd_next = next & kMask;
    snd_write(q, dut.cycle(), next, true);
    ++n_snd;
  }

  // ------------------------------------------------------------ packets
  Pkt make(uint32_t q, uint8_t op, uint32_t psn, uint32_t len, bool ackreq = false) {
    Pkt p;
    for (size_t i = 0; i < kRmN; ++i) {
      const int w = kRxMeta.at(i).width;
      p.f[i] = rng.next() & (w >= 64 ? ~0ull : (1ull << w) - 1);
    }
    p.f[kRmDrop] = 0;
    p.f[kRmRqFlush] = 0;
    p.f[kRmOpcode] = op;
    p.f[kRmDqpn] = q;
    p.f[kRmPsn] = psn & kMask;
    p.f[kRmAckreq] = ackreq;
    p.f[kRmPayOff] = 54 + ext_len(op);
    p.f[kRmPayLen] = len;
    p.pay.resize(len);
    for (auto& b : p.pay) b = rng.u8();
    return p;
  }
  Pkt make_reth(uint32_t q, uint8_t op, uint32_t psn, uint32_t len, uint64_t va, uint32_t rkey, uint32_t dlen,
                bool ackreq = false) {
    Pkt p = make(q, op, psn, len, ackreq);
    p.f[kRmRethVa] = va;
    p.f[kRmRethRkey] = rkey;
    p.f[kRmRethLen] = dlen;
    return p;
  }
  Pkt make_ack(uint32_t q, uint32_t psn, uint8_t syn) {
    Pkt p = make(q, kAck, psn, 0);
    p.f[kRmAethSyn] = syn;
    return p;
  }

  // Queues a record: the rqfetch stand-in fetches its WQE, the frame beats go to the buffer.
  void queue(Pkt p) {
    const uint8_t op = uint8_t(p.f[kRmOpcode]);
    const uint64_t q = p.f[kRmDqpn];
    if (p.snd_mode == kSndDefault)
      p.snd_mode = (op_resp(op) && auto_snd && !p.f[kRmDrop] && !p.f[kRmRqFlush]) ? kSndAuto : kSndNone;
    if (q >= kQps || p.f[kRmDrop] || p.f[kRmRqFlush]) p.snd_mode = kSndNone;
    p.f[kRmRqFetched] = 0;
    if (!p.f[kRmDrop] && q < kQps && op_consumes(op) && !p.f[kRmRqFlush] && !fl_err[q]) {
      p.f[kRmRqIdx] = fi[q];
      if (fi[q] != pi[q]) {
        p.fetched = true;
        p.f[kRmRqFetched] = 1;
        p.wqe = ring[q][fi[q] & 255];
        ++fi[q];
        wqe_fifo.push_back({p.wqe, dut.cycle() + rng.below(cur_wlat + 1)});
      }
    }
    uint32_t flen = uint32_t(p.f[kRmPayOff] + p.pay.size());
    flen += (4 - flen % 4) % 4 + 4;  // pad and ICRC
    if (p.f[kRmDrop]) flen = uint32_t(rng.range(60, 600));
    const uint32_t nb = p.f[kRmRqFlush] ? 0 : (flen + 63) / 64;
    p.f[kRmNbeats] = nb;
    p.serial = ++serials;
    const uint64_t opc = p.f[kRmOpcode];
    const int64_t rdq = (!p.f[kRmDrop] && opc >= 0x0D && opc <= 0x10) ? int64_t(p.f[kRmDqpn] & (kQps - 1)) : -1;
    for (uint32_t b = 0; b < nb; ++b) {
      beat_tag.push_back({p.serial, rdq});
      std::array<uint8_t, 64> beat;
      for (uint32_t i = 0; i < 64; ++i) {
        const uint32_t off = b * 64 + i;
        const uint32_t po = off - uint32_t(p.f[kRmPayOff]);
        beat[i] = (!p.f[kRmDrop] && off >= p.f[kRmPayOff] && po < p.pay.size()) ? p.pay[po] : rng.u8();
      }
      beats.push_back(beat);
    }
    pending.push_back(std::move(p));
  }
  // The stand-in's flush walk: every WQE posted on a QP in error goes back as a flush record.
  void queue_flushes(uint32_t q) {
    while (fl_err[q] && fi[q] != pi[q]) {
      Pkt p = make(q, kSendOnly, rng.u32(), 0);
      p.f[kRmRqFlush] = 1;
      p.f[kRmRqFetched] = 1;
      p.f[kRmRqIdx] = fi[q];
      p.f[kRmNbeats] = 0;
      p.fetched = true;
      p.snd_mode = kSndNone;
      p.wqe = ring[q][fi[q] & 255];
      // queued order too (it has no beats): its take must not make the beats of the packets
      // taken before it look untaken (rd_beats_due)
      p.serial = ++serials;
      ++fi[q];
      wqe_fifo.push_back({p.wqe, dut.cycle() + rng.below(cur_wlat + 1)});
      pending.push_back(std::move(p));
    }
  }

  // ------------------------------------------------------------ the reference
  void place(uint64_t dst, const std::vector<uint8_t>& pay) {
    payload_writes(
        dst, pay.data(), pay.size(), [&](uint64_t addr, uint64_t n) { aw_x.push_back({addr, unsigned(n - 1)}); },
        [&](uint64_t, uint64_t, uint64_t strb, bool last, const std::array<uint8_t, 64>& data) {
          WX w{};
          w.strb = strb;
          w.last = last;
          std::copy(data.begin(), data.end(), w.data);
          w_x.push_back(w);
        });
  }
  void task(bool rd, uint32_t q, uint32_t psn, uint8_t syn, uint64_t addr = 0, uint32_t len = 0) {
    TaskX t{rd, q, psn & kMask, syn, st[q].msn, addr, len, cfg[q].mtu};
    t.gen = gen_tab[q];
    task_x.push_back(t);
  }
  void cev(uint8_t kind, uint32_t q, uint32_t psn, uint8_t status) {
    CevX e{kind, q, psn & kMask, status};
    e.gen = gen_tab[q];
    cev_x.push_back(e);
  }
  // The engine frees every READ context of q (rdc_qerr_flush, the cycle after the decision).
  void ctx_flush(uint32_t q) {
    qflush_x.push_back(q);
    for (RdCtx& e : rdc)
      if (e.valid && e.qpn == q) e.valid = false;
  }
  // A retry episode starts: one CEV_RETRY; the READ in progress is forgotten; the QP's READ
  // contexts stay (its responses are dropped until the rewind drops them and requests the READs
  // again; decision 47).
  void retry(uint32_t q, uint8_t kind, uint32_t psn, uint8_t code) {
    st[q].rwp = true;
    st[q].rd_valid = false;
    stats.rt_kept += ctx_any(q);
    if (ctx_any(q)) st[q].rrd = true;
    CevX e{kCevRetry, q, 0, 0};
    e.rt_kind = kind;
    e.rt_psn = psn & kMask;
    e.rt_code = code;
    e.gen = gen_tab[q];
    cev_x.push_back(e);
    ++stats.retries[kind];
  }
  void kick(uint32_t q, bool base) {
    tk_x.push_back({q, base, now});
    ++stats.kicks;
  }
  void mr(uint32_t key, uint32_t pd, uint8_t acc, uint64_t va, uint32_t len, bool& ok, uint64_t& pa) {
    const auto a = mr_answer(key, pd, acc, va, len);
    ok = a.first;
    pa = a.second;
    mr_x.push_back({key, pd, acc, va, len, ok, pa});
  }
  uint8_t rnr_syn(uint32_t q) const { return uint8_t(0x20 | (cfg[q].min_rnr & 31)); }

  // Predicts everything the engine does for the record taken now.
  void predict(const Pkt& p, bool no_room) {
    ++records;
    if (p.f[kRmDrop]) return;
    const uint32_t q = uint32_t(p.f[kRmDqpn]);
    if (q >= kQps) {
      ++exp_cnt.drop_qp;
      return;
    }
    if (p.f[kRmRqFlush]) {
      flush(p, q);
      return;
    }
    bool owed = p.fetched;
    const bool err0 = st[q].err;
    respond(p, q, owed, no_room);
    if (st[q].err && !err0) rs_x.push_back({q, st[q].rq_ci, true});  // hand-over to the flush
    else if (owed && !st[q].err) rs_x.push_back({q, st[q].rq_ci, false});  // WQE dropped, fetch index back
  }

  // A flush record: its WQE completes with WR_FLUSH_ERR (dropped if the QP was reset since).
  void flush(const Pkt& p, uint32_t q) {
    St& s = st[q];
    s.rcv_wrid = p.wqe.wr_id;
    s.rcv_idx = uint16_t(p.f[kRmRqIdx]);
    // a QP that exists (INIT, RTR, RTS or ERR, not RESET) completes it
    if (cfg[q].state != kQpsReset && s.err) cqe_x.push_back(recv_cqe(p, q, kWcWrFlushErr));
  }

  // The completion engine reports QP q in error.
  void predict_qerr(uint32_t q) {
    if (q >= kQps) return;
    St& s = st[q];
    ctx_flush(q);   // its READ contexts are freed whatever its state
    s.rd_valid = false;
    // any QP not in RESET (INIT, RTR, RTS, or ERR as the host moved it there) fails
    if (cfg[q].state == kQpsReset || s.err) return;
    s.err = true;
    if (s.in_msg == 1) cqe_x.push_back(flush_cqe(q));
    rs_x.push_back({q, s.rq_ci, true});
  }
  // The send path applied q's retry answer (after rewinding, which drops its READ contexts):
  // responses to what was sent before the rewind may follow (rcv; also after a note that ends
  // no episode). An RNR wait that ended during the episode (rxp) opens its episode now, from
  // the next send PSN read for the note, if the QP can still send.
  void predict_note(uint32_t q, bool rewind) {
    ++stats.notes;
    St& s = st[q];
    s.rwp = false;
    s.rcv = true;
    if (rewind) rdc_rewind(q);
    if (!s.rxp) return;
    s.rxp = false;
    if (cfg[q].state != kQpsRts || s.err) {
      ++stats.rxp_dropped;
      return;
    }
    ++stats.rxp_opened;
    rnr_end_retry(q);
  }
  // q's local ACK timer expired (rnr: its RNR wait ended): an episode from the next send PSN
  // (marked RTC_RNR_END for an RNR wait's end), unless the QP cannot send (not RTS, or failed)
  // or one is open: then a timeout is dropped and an RNR wait's end kept for the note (rxp).
  void predict_tmo(uint32_t q, bool rnr) {
    St& s = st[q];
    if (cfg[q].state != kQpsRts || s.err || (s.rwp && !rnr)) {
      ++stats.tmo_ignored;
      stats.rnr_end_ignored += rnr;
      return;
    }
    if (s.rwp) {
      s.rxp = true;
      ++stats.rxp_kept;
      return;
    }
    if (rnr) {
      ++stats.rnr_ends;
      rnr_end_retry(q);
      return;
    }
    uint32_t nxt = 0;
    ASSERT_TRUE(snd_value(q, now, nxt)) << "bench: QP " << q << " in RTS without a next send PSN";
    retry(q, kRtTimeout, nxt, 0);
  }
  // A re-ACK event (an answer srnic_resp_tx deferred): what the responder's state says now, a
  // NAK PSN sequence error of ePSN while one is outstanding (nak_sent), else a plain ACK of
  // ePSN - 1 and the MSN, for a QP receiving (RTR, RTS) and not in error; else nothing.
  void predict_rack(uint32_t q) {
    if ((cfg[q].state != kQpsRtr && cfg[q].state != kQpsRts) || st[q].err) {
      ++stats.rack_ignored;
      return;
    }
    ++stats.racks;
    if (st[q].nak_sent) {
      ++stats.rack_naks;
      task(false, q, st[q].epsn, kSynPsn);
    } else {
      task(false, q, st[q].epsn - 1, kSynAck);
    }
  }
  void rnr_end_retry(uint32_t q) {
    uint32_t nxt = 0;
    ASSERT_TRUE(snd_value(q, now, nxt)) << "bench: QP " << q << " in RTS without a next send PSN";
    retry(q, kRtTimeout, nxt, kRtcRnrEnd);
  }

  void respond(const Pkt& p, uint32_t q, bool& owed, bool no_room) {
    const Cfg& c = cfg[q];
    St& s = st[q];
    const uint8_t op = uint8_t(p.f[kRmOpcode]);
    const uint32_t psn = uint32_t(p.f[kRmPsn]);
    const uint32_t plen = uint32_t(p.f[kRmPayLen]);
    const uint32_t mtu = mtu_bytes(c.mtu);
    if (op_resp(op)) {
      requester(p, q);
      return;
    }
    // ---------------- responder
    if (c.state != kQpsRtr && c.state != kQpsRts) {
      ++exp_cnt.drop_qp;
      return;
    }
    if (s.err) return;
    if (no_room) {
      // taken without a responder queue slot (resv_room 0): dropped unexecuted, counted
      ++exp_cnt.no_room;
      return;
    }
    const bool rreq = op == kReadReq, wr = op_write(op), sd = op_send(op);
    const bool first = op_first(op), last = op_last(op), imm = op_imm(op);
    const uint32_t d = (psn - s.epsn) & kMask;
    if (d & 0x800000) {
      ++exp_cnt.dup;
      if (rreq) dup_read(p, q);
      else task(false, q, s.epsn - 1, kSynAck);
      return;
    }
    if (d != 0) {
      ++exp_cnt.psn_err;
      if (!s.nak_sent) {
        s.nak_sent = true;
        task(false, q, s.epsn, kSynPsn);
      }
      return;
    }
    const bool seq_ok = (rreq || first) ? s.in_msg == 0 : sd ? s.in_msg == 1 : s.in_msg == 2;
    const bool acc_ok = wr ? (c.access & kAccRemoteWrite) : rreq ? (c.access & kAccRemoteRead) : true;
    const uint64_t rlen = p.f[kRmRethLen];
    bool len_ok;
    if (sd) len_ok = (last || plen == mtu) && plen <= mtu;
    else if (wr && first) len_ok = last ? plen == rlen : (plen == mtu && rlen > mtu);
    else if (wr) len_ok = last ? plen == s.wr_resid : (plen == mtu && s.wr_resid > mtu);
    else len_ok = plen == 0;
    if ((rreq || (wr && first)) && rlen > kMaxMsgBytes) len_ok = false;   // IBA's largest message
    if (!seq_ok || !acc_ok || !len_ok) {
      s.err = true;
      if (s.in_msg == 1) cqe_x.push_back(recv_cqe(p, q, kWcRemInvReqErr));  // the receive in use
      task(false, q, psn, kSynInv);
      return;
    }
    auto rq_ok = [&] { return p.f[kRmRqFetched] && uint16_t(p.f[kRmRqIdx]) == s.rq_ci; };
    if (rreq || (wr && first)) {
      uint64_t pa = 0;
      if (rlen == 0) {
        if (wr) s.wr_pa = s.wr_resid = s.wr_len = 0;
      } else {
        // WRITE ONLY with immediate: the receive WQE first (RNR), then the R_Key
        if (wr && imm && last && !rq_ok()) return task(false, q, psn, rnr_syn(q));
        bool ok;
        mr(uint32_t(p.f[kRmRethRkey]), c.pd, rreq ? kAccRemoteRead : kAccRemoteWrite, p.f[kRmRethVa], uint32_t(rlen),
           ok, pa);
        if (!ok) {
          ++exp_cnt.access_err;
          s.err = true;
          task(false, q, psn, kSynAcc);
          if (wr && imm && last) {  // it consumes its receive WQE, which completes in error
            take_rwqe(p, q, owed);
            cqe_x.push_back(recv_cqe(p, q, kWcRemAccessErr));
          }
          return;
        }
        if (wr) {
          s.wr_pa = pa;
          s.wr_resid = s.wr_len = uint32_t(rlen);
        }
      }
      if (rreq) {
        s.nak_sent = false;
        s.epsn = (s.epsn + npkts(uint32_t(rlen), c.mtu)) & kMask;
        s.msn = (s.msn + 1) & kMask;
        task(true, q, psn, kSynAck, rlen == 0 ? 0 : pa, uint32_t(rlen));
        return;
      }
      if (imm && last) {
        if (!rq_ok()) return task(false, q, psn, rnr_syn(q));
        use_rwqe(p, q, owed);
        return;
      }
      if (plen) place(s.wr_pa, p.pay);
      finish(p, q);
      return;
    }
    if ((sd && first) || (wr && imm && last)) {
      if (!rq_ok()) return task(false, q, psn, rnr_syn(q));
      use_rwqe(p, q, owed);
      return;
    }
    if (sd && uint64_t(plen) + s.rcv_done > s.rcv_len) {
      s.err = true;
      cqe_x.push_back(recv_cqe(p, q, kWcRemInvReqErr));
      task(false, q, psn, kSynInv);
      return;
    }
    if (plen) place(sd ? s.rcv_pa + s.rcv_done : s.wr_pa, p.pay);
    finish(p, q);
  }

  // A duplicate READ request: executed again from its own PSN, address and length after the
  // access, length and R_Key checks (refused: dropped silently); no responder state changes.
  void dup_read(const Pkt& p, uint32_t q) {
    const uint64_t rlen = p.f[kRmRethLen];
    if (!(cfg[q].access & kAccRemoteRead) || p.f[kRmPayLen] != 0 || rlen > kMaxMsgBytes) {
      ++stats.dup_rd_drop;
      return;
    }
    uint64_t pa = 0;
    if (rlen != 0) {
      bool ok;
      mr(uint32_t(p.f[kRmRethRkey]), cfg[q].pd, kAccRemoteRead, p.f[kRmRethVa], uint32_t(rlen), ok, pa);
      if (!ok) {
        ++exp_cnt.access_err;
        ++stats.dup_rd_drop;
        return;
      }
    }
    ++stats.dup_rd;
    task(true, q, uint32_t(p.f[kRmPsn]), kSynAck, pa, uint32_t(rlen));
  }

  // ---------------- requester: ACK/NAK and READ responses
  void requester(const Pkt& p, uint32_t q) {
    const Cfg& c = cfg[q];
    St& s = st[q];
    const uint8_t op = uint8_t(p.f[kRmOpcode]);
    const uint32_t psn = uint32_t(p.f[kRmPsn]);
    const uint32_t plen = uint32_t(p.f[kRmPayLen]);
    const uint8_t syn = uint8_t(p.f[kRmAethSyn]);
    if (c.state != kQpsRts) {
      ++exp_cnt.drop_qp;
      return;
    }
    uint32_t nxt = 0;
    ASSERT_TRUE(snd_value(q, now, nxt)) << "bench: QP " << q << " in RTS without a next send PSN";
    // a response for a PSN never sent (a PSN-sequence NAK may name the next PSN itself)
    if (psn_ge(psn, nxt) && !(op == kAck && syn == kSynPsn && psn == nxt)) {
      ++exp_cnt.psn_err;
      ++stats.ghosts;
      return;
    }
    if ((s.err || s.rwp) && op != kAck) {  // READ data for a failed QP, or during an episode
      stats.rwp_drops += !s.err;
      return;
    }
    if (op == kAck) {
      const int cls = (syn >> 5) & 3;
      if (cls != 0) ++exp_cnt.rx_nak;
      const bool cur_beyond = s.rd_valid && psn_gt(psn, s.rd_last);
      const bool bq_hit = ctx_before(q, psn), bq_any = ctx_any(q);
      if (!s.err) {
        const bool all = cls == 0 && ((psn + 1) & kMask) == nxt;
        kick(q, all && !s.rd_valid && !bq_any);
        stats.anyctx_clears += all && !s.rd_valid && bq_any;
      }
      const bool beyond = cur_beyond || bq_hit;
      if (cls == 0) {
        // while resending (rcv) an ACK beyond a READ may answer what was sent before the
        // rewind: it only acknowledges; an ACK beyond no READ is in-order progress
        if (!s.rwp && !s.rcv && !s.err && beyond) {
          stats.bq_implied += !cur_beyond;
          retry(q, kRtImplied, cur_beyond ? s.rd_next : psn + 1, 0);
        } else {
          stats.ack_inside += bq_any && !bq_hit;
          stats.rcv_acks += !s.rwp && s.rcv && !s.err && beyond;
          // (after an episode that freed READ contexts, only once the resend requested a READ
          // again: until then an ACK beyond a READ requested again looks like none)
          const bool progress = !beyond && (!s.rrd || bq_any);
          stats.rcv_clears += s.rcv && progress;
          stats.rrd_holds += s.rcv && !beyond && !progress;
          if (progress) {
            s.rcv = false;
            if (!s.rwp) s.rrd = false;
          }
          cev(kCevAck, q, psn, 0);
        }
      } else if (cls == 1 || syn == kSynPsn) {
        // while resending a sequence NAK may be for what was sent before the rewind (an RNR NAK
        // is not): it only acknowledges, as every NAK during an episode
        if (!s.rwp && !s.err && (cls == 1 || !s.rcv)) {
          retry(q, cls == 1 ? kRtRnr : kRtSeq, cur_beyond ? s.rd_next : psn, uint8_t(syn & 31));
        } else {
          stats.rwp_naks += s.rwp || s.err;
          stats.rcv_naks += !s.rwp && !s.err;
          cev(kCevAck, q, psn - 1, 0);
        }
      } else {
        cev(kCevNak, q, psn, syn == kSynInv ? kWcRemInvReqErr : syn == kSynAcc ? kWcRemAccessErr : kWcRemOpErr);
        // a READ before it without all its responses will get none: the event says from which
        // PSN on (the READ in progress: its first; else any READ, the NAK's PSN less 2^22)
        if (cur_beyond || bq_hit || (s.rcv && s.rrd && !bq_any)) {
          stats.nak_unfinished_read += 1;
          cev_x.back().has_rd = true;
          cev_x.back().psn2 = (cur_beyond ? s.rd_first : psn - 0x400000) & kMask;
        }
      }
      return;
    }
    // READ response: in PSN order within the READ's context
    if (s.rd_valid && psn_ge(psn, s.rd_first) && psn_ge(s.rd_last, psn)) {
      if (psn == s.rd_next && resp_fits(op, psn, s.rd_first, s.rd_last, s.rd_mtu, s.rd_llen, plen)) {
        place_resp(p, q, s.rd_pa + (uint64_t((psn - s.rd_first) & kMask) << mtu_log2(s.rd_mtu)), nxt);
      } else if (psn == s.rd_next && !op_fits(op, psn, s.rd_first, s.rd_last)) {
        ++stats.stale;  // a response to another request for this PSN
      } else if (psn == s.rd_next) {
        read_fails(q, s.rd_first, s.rd_idx, kWcBadRespErr);
      } else if (psn_ge(psn, s.rd_next)) {
        retry(q, kRtImplied, s.rd_next, 0);  // responses lost in between
      }
      return;
    }
    if (s.rd_valid && psn_ge(psn, s.rd_last)) {
      retry(q, kRtImplied, s.rd_next, 0);  // a later READ's response: this one lost its last ones
      return;
    }
    // A READ of this QP that ends before this response got none of its responses (they
    // were all lost): an implied NAK from the response's PSN (the completion engine rewinds to
    // that READ), like an ACK beyond it; while resending (rcv) a response to a request sent
    // before the rewind, dropped.
    if (!s.rd_valid && ctx_before(q, psn)) {
      stats.bq_rsp_implied += !s.rcv;
      if (rcv_drop(q)) return;
      retry(q, kRtImplied, psn, 0);
      return;
    }
    LkX l{q, psn, false, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < kRdEntries; ++i) {
      const RdCtx& e = rdc[size_t(i)];
      if (e.valid && e.qpn == q && psn_ge(psn, e.first) && psn_ge(e.last, psn)) {
        l = {q, psn, true, uint8_t(i), e.pa, e.first, e.last, e.mtu, e.llen};
        break;
      }
    }
    lk_x.push_back(l);
    if (!l.hit) {
      ++exp_cnt.psn_err;   // no READ owns the PSN: dropped and counted
      return;
    }
    if (psn != l.first) {
      // the READ's first responses are missing (while resending: a response to the READ sent
      // before the rewind, dropped)
      if (rcv_drop(q)) return;
      retry(q, kRtImplied, l.first, 0);
      return;
    }
    if (!op_fits(op, psn, l.first, l.last)) {
      ++stats.stale;
      return;
    }
    if (!resp_fits(op, psn, l.first, l.last, l.mtu, l.llen, plen)) {
      read_fails(q, l.first, l.idx, kWcBadRespErr);
      return;
    }
    s.rd_valid = true;
    s.rd_pa = l.pa;
    s.rd_first = l.first;
    s.rd_last = l.last;
    s.rd_idx = l.idx;
    s.rd_mtu = l.mtu;
    s.rd_llen = l.llen;
    place_resp(p, q, l.pa, nxt);
  }

  // The packet's receive WQE becomes the QP's current one (its lkey checked); returns that check.
  bool take_rwqe(const Pkt& p, uint32_t q, bool& owed) {
    St& s = st[q];
    owed = false;
    bool ok;
    uint64_t pa;
    mr(p.wqe.lkey, cfg[q].pd, kAccLocalWrite, p.wqe.addr, p.wqe.len, ok, pa);
    s.rcv_wrid = p.wqe.wr_id;
    s.rcv_idx = s.rq_ci;
    s.rq_ci = uint16_t(s.rq_ci + 1);
    s.rcv_pa = pa;
    s.rcv_len = p.wqe.len;
    s.rcv_done = 0;
    return ok;
  }

  void use_rwqe(const Pkt& p, uint32_t q, bool& owed) {
    St& s = st[q];
    const uint32_t plen = uint32_t(p.f[kRmPayLen]);
    const bool ok = take_rwqe(p, q, owed);
    const uint64_t pa = s.rcv_pa;
    const uint8_t op = uint8_t(p.f[kRmOpcode]);
    if (op_write(op)) {  // WRITE with immediate: the WQE supplies wr_id only
      if (plen) place(s.wr_pa, p.pay);
      finish(p, q);
      return;
    }
    if (!ok && plen) {
      s.err = true;
      cqe_x.push_back(recv_cqe(p, q, kWcLocQpOpErr));
      task(false, q, uint32_t(p.f[kRmPsn]), kSynOp);
      return;
    }
    if (plen > p.wqe.len) {
      s.err = true;
      cqe_x.push_back(recv_cqe(p, q, kWcRemInvReqErr));
      task(false, q, uint32_t(p.f[kRmPsn]), kSynInv);
      return;
    }
    if (plen) place(pa, p.pay);
    finish(p, q);
  }

  // WR_FLUSH_ERR for the receive a SEND in progress holds (the QP fails)
  CqeX flush_cqe(uint32_t q) const {
    const St& s = st[q];
    CqeX e{cfg[q].cqn, s.rcv_wrid, 0, 0, q, s.rcv_idx, kWcRecv, kWcWrFlushErr, false};
    e.gen = gen_tab[q];
    return e;
  }
  CqeX recv_cqe(const Pkt& p, uint32_t q, uint8_t status) {
    const St& s = st[q];
    const uint8_t op = uint8_t(p.f[kRmOpcode]);
    CqeX e{cfg[q].cqn, s.rcv_wrid, 0, uint32_t(p.f[kRmImm]), q, s.rcv_idx,
           op_write(op) ? kWcRecvImm : kWcRecv, status, op_imm(op)};
    e.gen = gen_tab[q];
    return e;
  }

  // SEND/WRITE packet executed: state update, ACK, receive completion.
  void finish(const Pkt& p, uint32_t q) {
    St& s = st[q];
    const uint8_t op = uint8_t(p.f[kRmOpcode]);
    const uint32_t plen = uint32_t(p.f[kRmPayLen]);
    const bool wr = op_write(op), last = op_last(op);
    s.nak_sent = false;
    s.epsn = (s.epsn + 1) & kMask;
    uint32_t total;
    if (wr) {
      s.wr_pa += plen;
      s.wr_resid -= plen;
      total = s.wr_len;
    } else {
      s.rcv_done += plen;
      total = s.rcv_done;
    }
    s.in_msg = last ? 0 : wr ? 2 : 1;
    if (last) s.msn = (s.msn + 1) & kMask;
    if (p.f[kRmAckreq]) task(false, q, uint32_t(p.f[kRmPsn]), kSynAck);
    if (last && (!wr || op_imm(op))) {
      CqeX e = recv_cqe(p, q, 0);
      e.byte_len = total;
      cqe_x.push_back(e);
    }
  }

  // The opcode a READ response at psn must carry (first, middle..., last; only), and with it
  // the exact payload length.
  // A READ's first PSN may be answered as the start of a READ (FIRST/ONLY) or as the
  // continuation of an earlier READ that covered it (MIDDLE/LAST: a responder replaying the
  // original READ for a partial re-read, as Linux rxe does).
  static bool op_fits(uint8_t op, uint32_t psn, uint32_t first, uint32_t last) {
    const bool f = psn == first, l = psn == last;
    if (f && l) return op == kRespOnly || op == kRespLast;
    if (f) return op == kRespFirst || op == kRespMiddle;
    if (l) return op == kRespLast;
    return op == kRespMiddle;
  }
  static bool resp_fits(uint8_t op, uint32_t psn, uint32_t first, uint32_t last, int mtu, uint32_t llen,
                        uint32_t plen) {
    if (!op_fits(op, psn, first, last)) return false;
    return plen == (psn == last ? llen : mtu_bytes(mtu));
  }
  // The READ at first fails (nothing placed): its context is freed and the QP enters the
  // error state at once (a SEND in progress flushes its receive WQE; predict() hands the
  // fetch index over for the receive-queue flush).
  void read_fails(uint32_t q, uint32_t first, uint8_t idx, uint8_t status) {
    St& s = st[q];
    s.rd_valid = false;
    cev(kCevNak, q, first, status);
    free_x.push_back({idx, q});
    rdc[idx].valid = false;
    if (!s.err) {
      s.err = true;
      if (s.in_msg == 1) cqe_x.push_back(flush_cqe(q));
    }
  }

  // A READ response that would start an implied NAK while q is resending (rcv) is dropped.
  bool rcv_drop(uint32_t q) {
    stats.rcv_drops += st[q].rcv;
    return st[q].rcv;
  }

  // READ response in order: placed (in-order progress: rcv clears), a timer kick (STOP after
  // the READ's last when it is the last PSN sent), READ_DONE and context free after the last.
  void place_resp(const Pkt& p, uint32_t q, uint64_t dst, uint32_t nxt) {
    St& s = st[q];
    const uint32_t psn = uint32_t(p.f[kRmPsn]);
    if (p.f[kRmPayLen]) place(dst, p.pay);
    s.rd_next = (psn + 1) & kMask;
    stats.rcv_clears += s.rcv;
    s.rcv = false;
    s.rrd = false;
    kick(q, psn == s.rd_last && ((psn + 1) & kMask) == nxt);
    ++stats.rd_kicks;
    if (psn == s.rd_last) {
      s.rd_valid = false;
      cev(kCevReadDone, q, psn, 0);
      free_x.push_back({s.rd_idx, q});
      rdc[s.rd_idx].valid = false;
    }
  }

  // ------------------------------------------------------------ per cycle
  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    now = c;
    // Send path: scheduled reports (directed tests), the report a response waits for (its
    // request left before it can be answered), and other requests now and then.
    dut->snd_valid = 0;
    bool sv = false;
    if (auto it = snd_sched.find(c); it != snd_sched.end()) {
      emit_snd(it->second.first, it->second.second);
      snd_sched.erase(it);
      sv = true;
    }
    Pkt* head = pending.empty() ? nullptr : &pending.front();
    if (!sv && head && !hold_meta && head->snd_mode != kSndNone && !head->snd_sent) {
      const uint32_t q = uint32_t(head->f[kRmDqpn]);
      const uint32_t v = head->snd_mode == kSndAuto ? uint32_t(head->f[kRmPsn]) + 0x1000
                         : head->snd_mode == kSndCurrent ? sq_next[q]
                                                         : head->snd_val;
      emit_snd(q, v);
      head->snd_sent = true;
      head->snd_at = c;
      sv = true;
    }
    if (!sv && k.snd && rng.percent(k.snd)) {
      const uint64_t r = rng.below(100);
      uint32_t t = uint32_t(rng.below(kQps));
      if (r < 35 && head && head->f[kRmDqpn] < kQps) t = uint32_t(head->f[kRmDqpn]);
      else if (r < 70) t = last_pkt_q;
      sq_next[t] = (sq_next[t] + uint32_t(rng.range(1, 3))) & kMask;
      emit_snd(t, sq_next[t]);
    }
    const bool snd_wait = head && ((head->snd_mode != kSndNone && (!head->snd_sent || c < head->snd_at + head->snd_gap)) ||
                                   c < head->offer_at);
    if (!hold_meta && head && !snd_wait && rng.percent(k.meta)) hold_meta = true;
    dut->meta_valid = hold_meta;
    if (hold_meta)
      for (size_t i = 0; i < kRmN; ++i)
        set_bits(dut->meta, kRxMeta.at(i).lsb, kRxMeta.at(i).width, pending.front().f[i]);
    const bool dv = !beats.empty() && rng.percent(k.d);
    dut->d_valid = dv;
    for (int w = 0; w < 16; ++w) {
      uint32_t v = rng.u32();
      if (dv) {
        const uint8_t* b = beats.front().data() + 4 * w;
        v = uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
      }
      dut->d_data[size_t(w)] = v;
    }
    const bool wv = !wqe_fifo.empty() && wqe_fifo.front().at <= c;
    dut->wqe_valid = wv;
    for (int w = 0; w < 16; ++w) dut->wqe_data[size_t(w)] = rng.u32();
    if (wv) {
      const RWqe& e = wqe_fifo.front().w;
      set_bits(dut->wqe_data, 0, 64, e.wr_id);
      set_bits(dut->wqe_data, 64, 64, e.addr);
      set_bits(dut->wqe_data, 128, 32, e.len);
      set_bits(dut->wqe_data, 160, 32, e.lkey);
    }
    const bool mrr = mr_busy && mr_at <= c;
    dut->mr_rsp = mrr;
    dut->mr_ok = mrr ? mr_cur.ok : rng.below(2);
    dut->mr_pa = mrr ? mr_cur.pa : rng.next();
    const bool lkr = lk_busy && lk_at <= c;
    dut->rdc_lk_rsp = lkr;
    dut->rdc_lk_hit = lkr ? lk_cur.hit : rng.below(2);
    dut->rdc_lk_idx = lkr ? lk_cur.idx : rng.below(64);
    dut->rdc_lk_pa = lkr ? lk_cur.pa : rng.next();
    dut->rdc_lk_first = lkr ? lk_cur.first : rng.u32() & kMask;
    dut->rdc_lk_last = lkr ? lk_cur.last : rng.u32() & kMask;
    dut->rdc_lk_mtu = lkr ? uint8_t(lk_cur.mtu) : uint8_t(rng.below(8));
    dut->rdc_lk_last_len = lkr ? lk_cur.llen : uint32_t(rng.below(8192));
    {  // srnic_rd_ctx's read port: the entry the engine names (garbage in a free one)
      const RdCtx& e = rdc_hw[size_t(dut->rdc_rx_idx) % kRdEntries];
      dut->rdc_rx_valid = e.valid;
      dut->rdc_rx_qpn = e.valid ? e.qpn : uint32_t(rng.below(kQps));
      dut->rdc_rx_pa = e.valid ? e.pa : rng.next();
      dut->rdc_rx_first = e.valid ? e.first : rng.u32() & kMask;
      dut->rdc_rx_last = e.valid ? e.last : rng.u32() & kMask;
      dut->rdc_rx_mtu = e.valid ? uint8_t(e.mtu) : uint8_t(rng.below(8));
      dut->rdc_rx_last_len = e.valid ? e.llen : uint32_t(rng.below(8192));
    }
    dut->aw_ready = rng.percent(k.aw);
    dut->w_ready = rng.percent(k.w);
    dut->task_ready = rng.percent(k.task);
    dut->resv_room = rng.percent(k.room);
    dut->cev_ready = rng.percent(k.cev);
    dut->cqe_ready = rng.percent(k.cqe);
    dut->resync_ready = rng.percent(k.rs);
    dut->tk_ready = rng.percent(k.tk);
    if (!hold_qerr && rng.below(1000) < k.qerr)
      raise_qerr(rng.percent(3) ? uint32_t(kQps + rng.below(0x10000 - kQps)) : uint32_t(rng.below(kQps)),
                 rng.percent(k.stale));
    if (!hold_note && rng.below(1000) < k.note) {
      std::vector<uint32_t> open;
      for (uint32_t q = 0; q < kQps; ++q)
        if (st[q].rwp) open.push_back(q);
      if (!open.empty() && !rng.percent(3)) {
        hold_note = true;
        note_q = open[rng.below(open.size())];
        note_rewind = rng.percent(85);
      } else if (rng.percent(2)) {
        hold_note = true;  // a note for a QP without an episode ends nothing
        note_q = uint32_t(rng.below(kQps));
        note_rewind = false;
      }
      // a note made for an earlier incarnation (it carries the low bit) is dropped
      if (hold_note) note_g = uint8_t((gen_tab[note_q] ^ (rng.percent(k.stale) ? 1u : 0u)) & 1u);
    }
    if (!hold_tmo && rng.below(1000) < k.tmo) {
      hold_tmo = true;
      tmo_rnr = rng.percent(k.rnr);
      tmo_q = uint32_t(rng.below(kQps));
      if (tmo_rnr && rng.percent(85)) {  // mostly during an open episode (kept for its note)
        std::vector<uint32_t> open;
        for (uint32_t q = 0; q < kQps; ++q)
          if (st[q].rwp && !(hold_note && note_q == q)) open.push_back(q);
        if (!open.empty()) tmo_q = open[rng.below(open.size())];
        else hold_tmo = rng.percent(30);
      }
    }
    dut->qerr_valid = hold_qerr;
    // a qerr owed in the completion engine (not yet in its queue) holds records back too
    if (c >= owed_until && rng.below(1000) < k.owed) owed_until = c + rng.range(1, 40);
    const bool owed = c < owed_until;
    dut->qerr_owed = owed;
    // likewise a note owed in the core's note queue
    if (c >= nowed_until && rng.below(1000) < k.owed) nowed_until = c + rng.range(1, 40);
    const bool nowed = c < nowed_until;
    dut->note_owed = nowed;
    dut->qerr_qpn = qerr_q;
    dut->qerr_gen = hold_qerr ? qerr_g : uint8_t(rng.below(16));
    dut->note_valid = hold_note;
    dut->note_qpn = note_q;
    dut->note_gen = hold_note ? note_g : uint8_t(rng.below(2));
    dut->tmo_valid = hold_tmo;
    dut->tmo_qpn = tmo_q;
    dut->tmo_rnr = hold_tmo ? tmo_rnr : rng.below(2);  // random while no expiry is offered
    if (!hold_rack && rng.below(1000) < k.rack) {
      hold_rack = true;
      rack_q = uint32_t(rng.below(kQps));
    }
    dut->rack_valid = hold_rack;
    dut->rack_qpn = hold_rack ? rack_q : uint32_t(rng.below(kQps));
    // the completion engine asks whether a READ response of a QP is in the engine: mostly a QP
    // with a READ payload due, or the QP of the record offered or taken last
    {
      std::vector<uint32_t> due;
      for (const auto& e : w_x)
        if (e.rdq >= 0 && (due.empty() || due.back() != uint32_t(e.rdq))) due.push_back(uint32_t(e.rdq));
      const unsigned r = unsigned(rng.below(10));
      rdq_q = !due.empty() && r < 5 ? due[rng.below(due.size())]
              : r < 7 && hold_meta   ? uint32_t(pending.front().f[kRmDqpn]) & (kQps - 1)
              : r < 8                ? cur_q
                                     : uint32_t(rng.below(kQps));
      dut->rdq_qpn = rdq_q;
    }
    dut.eval();
    // the READ-context table's implied-NAK query answers combinationally
    {
      const uint32_t bq = uint32_t(dut->rdc_bq_qpn), bp = uint32_t(dut->rdc_bq_psn);
      bool hit = false, any = false;
      for (const RdCtx& e : rdc_hw)
        if (e.valid && e.qpn == bq) {
          any = true;
          hit = hit || psn_gt(bp, e.last);
        }
      dut->rdc_bq_hit = hit;
      dut->rdc_bq_any = any;
      dut.eval();
    }
    answer_gen();
    if (HasFatalFailure()) return;

    const std::string at = "cycle " + std::to_string(c) + ": ";
    // a RESET offered by offer_reset(), taken now: the QP is in RESET for a record taken in
    // this cycle too (its incarnation advances at the end of the cycle)
    const bool rst_take = rst_on && dut->qp_cmd_valid && dut->qp_cmd_ready;
    if (rst_take) {
      Cfg& rc = cfg[rst_q];
      rc.state = kQpsReset;
      rc.mtu = int(kQpCmd.get(dut->qp_cmd, kCMtu));
      rc.access = uint8_t(kQpCmd.get(dut->qp_cmd, kCAccess));
      rc.pd = uint32_t(kQpCmd.get(dut->qp_cmd, kCPd));
      rc.cqn = uint16_t(kQpCmd.get(dut->qp_cmd, kCRecvCqn));
      rc.min_rnr = uint8_t(kQpCmd.get(dut->qp_cmd, kCMinRnr));
      for (auto& e : rdc)
        if (e.valid && e.qpn == rst_q) e.valid = false;
      rst_at = c;
      rst_busy = dut->busy_cls;
    }
    // one take at a time, events first (qerr, note, timeout, then records), none while a
    // timer kick waits
    const bool t_meta = dut->meta_ready, t_qerr = dut->qerr_ready, t_note = dut->note_ready, t_tmo = dut->tmo_ready;
    const bool t_rack = dut->rack_ready;
    ASSERT_LE(int(t_meta) + int(t_qerr) + int(t_note) + int(t_tmo) + int(t_rack), 1) << at << "two takes in one cycle";
    ASSERT_TRUE(!t_rack || (hold_rack && !hold_qerr && !hold_note && !hold_tmo)) << at << "re-ACK taken before a qerr, note or timeout";
    ASSERT_TRUE(!t_qerr || hold_qerr) << at << "qerr_ready without qerr_valid";
    ASSERT_TRUE(!t_note || (hold_note && !hold_qerr)) << at << "note taken without note_valid or before a qerr";
    ASSERT_TRUE(!t_tmo || (hold_tmo && !hold_qerr && !hold_note)) << at << "timeout taken before a qerr or note";
    ASSERT_TRUE(!t_meta || (hold_meta && !hold_qerr && !hold_note && !hold_tmo && !hold_rack)) << at << "record taken before an event";
    ASSERT_TRUE(!t_meta || !owed) << at << "record taken while a qerr is owed (qerr_owed)";
    ASSERT_TRUE(!t_meta || !nowed) << at << "record taken while a note is owed (note_owed)";
    stats.owed_holds += hold_meta && owed;
    if (dut->tk_valid) {
      ASSERT_FALSE(t_meta || t_qerr || t_note || t_tmo || t_rack)
          << at << "a " << (t_meta ? "record" : t_qerr ? "qerr" : t_note ? "note" : t_tmo ? "timeout" : "re-ACK")
          << " taken while a timer kick waits";
      stats.kick_holds += hold_meta || hold_qerr || hold_note || hold_tmo || hold_rack;
    }
    if (t_meta || t_qerr || t_note || t_tmo || t_rack) {
      ASSERT_TRUE(tk_x.empty()) << at << "next take, but the timer kick of QP " << tk_x.front().q
                                << " (taken in cycle " << tk_x.front().take << ") never came";
    }
    // rdq_busy(q): from the take of a READ response of q until its payload is written. It must
    // be set while a READ payload of q is due; it may be set only then, at the take, while the
    // record taken last (still being classified) is a READ response of q, or while frame beats
    // of a taken READ response of q are still to be taken (after its payload).
    int64_t take_rdq = -1;
    {
      const bool take = hold_meta && t_meta;
      const uint64_t op = take ? pending.front().f[kRmOpcode] : 0;
      const bool take_rdata = take && op >= 0x0D && op <= 0x10 && !pending.front().f[kRmDrop];
      const uint32_t take_q = take ? uint32_t(pending.front().f[kRmDqpn]) & (kQps - 1) : 0;
      const bool due = rd_payload_due(rdq_q);
      const bool busy = dut->rdq_busy;
      if (take_rdata && take_q == rdq_q) {
        ASSERT_TRUE(busy) << at << "READ response of QP " << take_q << " taken without rdq_busy";
      }
      if (due) {
        ASSERT_TRUE(busy) << at << "a READ payload of QP " << rdq_q << " is still to be written, rdq_busy is low";
        ++rdq_asks;
        if ((dut->aw_valid || dut->w_valid) && !w_x.empty() && w_x.front().rdq == int64_t(rdq_q)) ++rd_busy_writes;
      }
      if (busy) {
        ASSERT_TRUE(due || (take_rdata && take_q == rdq_q) || (cur_rdata && cur_q == rdq_q) || rd_beats_due(rdq_q))
            << at << "rdq_busy for QP " << rdq_q << " with no READ response of it in the engine";
        rdq_hits += due;
      }
      if (take) {
        cur_rdata = take_rdata;
        cur_q = take_q;
        if (take_rdata) take_rdq = int64_t(take_q);
      }
      if (t_qerr || t_note || t_tmo || t_rack) cur_rdata = false;
    }
    // a qerr made for an earlier incarnation of its QP is taken and dropped, nothing else
    const bool qerr_stale = t_qerr && qerr_q < kQps && qerr_g != gen_tab[qerr_q];
    const bool note_stale = t_note && note_g != (gen_tab[note_q] & 1u);
    EXPECT_EQ(bool(dut->stale_drop), qerr_stale || note_stale)
        << at << "stale_drop" << (t_qerr ? " (qerr of QP " + std::to_string(qerr_q) + " for incarnation " +
                                              std::to_string(qerr_g) + ", current " +
                                              std::to_string(qerr_q < kQps ? gen_tab[qerr_q] : 0) + ")"
                                        : std::string(" without a qerr taken"));
    stale_pulses += dut->stale_drop;
    if (t_qerr) {
      if (qerr_stale) ++stale_qerrs;
      else predict_qerr(uint32_t(dut->qerr_qpn));
      stamp(-1);
      take_log.push_back({kTakeQerr, qerr_q, c});
      ++qerrs;
      hold_qerr = false;
    }
    if (t_note) {
      if (note_stale) ++stale_notes;
      else predict_note(note_q, note_rewind);
      stamp(-1);
      take_log.push_back({kTakeNote, note_q, c});
      hold_note = false;
    }
    if (t_tmo) {
      predict_tmo(tmo_q, tmo_rnr);
      stamp(-1);
      take_log.push_back({kTakeTmo, tmo_q, c});
      hold_tmo = false;
    }
    if (t_rack) {
      predict_rack(rack_q);
      stamp(-1);
      take_log.push_back({kTakeRack, rack_q, c});
      hold_rack = false;
    }
    if (HasFatalFailure()) return;
    // a request packet is taken with a responder queue reservation when there is room
    // (resv_take), without one (dropped unexecuted) when there is none
    const bool t_req = hold_meta && t_meta && !pending.front().f[kRmDrop] && pending.front().f[kRmDqpn] < kQps &&
                       !pending.front().f[kRmRqFlush] && !op_resp(uint8_t(pending.front().f[kRmOpcode]));
    ASSERT_EQ(int(dut->resv_take), int(t_req && dut->resv_room)) << at << "resv_take";
    stats.resv_takes += dut->resv_take;
    stats.resv_rels += dut->resv_rel;
    ASSERT_LE(stats.resv_rels + stats.resv_tasks, stats.resv_takes) << at << "a reservation released that was not taken";
    if (hold_meta && t_meta) {
      const Pkt& p = pending.front();
      taken_serial = p.serial;
      take_log.push_back({kTakePkt, uint32_t(p.f[kRmDqpn]), c});
      if (p.f[kRmDqpn] < kQps && !p.f[kRmDrop]) last_pkt_q = uint32_t(p.f[kRmDqpn]);
      predict(p, t_req && !dut->resv_room);
      stamp(take_rdq);
      pending.pop_front();
      hold_meta = false;
      if (HasFatalFailure()) return;
    }
    if (dv && dut->d_ready) {
      beats.pop_front();
      beat_tag.pop_front();
    }
    if (dut->wqe_pop) {
      ASSERT_TRUE(wv) << at << "WQE popped from an empty FIFO";
      wqe_fifo.pop_front();
      ++pops;
    }
    if (dut->mr_req) {
      ASSERT_FALSE(mr_busy) << at << "MR request while one is outstanding";
      ASSERT_FALSE(mr_x.empty()) << at << "MR request (key " << hex(dut->mr_key) << ") the reference does not make";
      mr_cur = mr_x.front();
      mr_x.pop_front();
      EXPECT_EQ(uint32_t(dut->mr_key), mr_cur.key) << at << "MR key";
      EXPECT_EQ(uint32_t(dut->mr_pd), mr_cur.pd) << at << "MR pd";
      EXPECT_EQ(unsigned(dut->mr_access), unsigned(mr_cur.acc)) << at << "MR access";
      EXPECT_EQ(uint64_t(dut->mr_va), mr_cur.va) << at << "MR va";
      EXPECT_EQ(uint32_t(dut->mr_len), mr_cur.len) << at << "MR len";
      mr_busy = true;
      mr_at = c + 1 + k.lat_min + rng.below(k.lat + 1);
      ++n_mr;
    }
    if (dut->rdc_lk_valid) {
      ASSERT_FALSE(lk_busy) << at << "context lookup while one is outstanding";
      ASSERT_FALSE(lk_x.empty()) << at << "context lookup (psn " << hex(dut->rdc_lk_psn)
                                 << ") the reference does not make";
      lk_cur = lk_x.front();
      lk_x.pop_front();
      EXPECT_EQ(uint32_t(dut->rdc_lk_qpn), lk_cur.qpn) << at << "lookup QPN";
      EXPECT_EQ(uint32_t(dut->rdc_lk_psn), lk_cur.psn) << at << "lookup PSN";
      lk_busy = true;
      lk_at = c + 1 + rng.below(k.lat + 1);
      ++n_lk;
    }
    if (dut->rdc_free_valid) {
      ASSERT_FALSE(free_x.empty()) << at << "context " << unsigned(dut->rdc_free_idx) << " freed unexpectedly";
      EXPECT_EQ(unsigned(dut->rdc_free_idx), unsigned(free_x.front().first)) << at << "freed context";
      EXPECT_EQ(uint32_t(dut->rdc_free_qpn), free_x.front().second) << at << "freed context's QPN";
      free_x.pop_front();
      RdCtx& e = rdc_hw[size_t(dut->rdc_free_idx) % kRdEntries];
      if (e.valid && e.qpn == uint32_t(dut->rdc_free_qpn)) e.valid = false;
    }
    {  // a command taken now (one a directed test offers while traffic runs: offer_reset())
       // that moves its QP to RESET or re-initialises it frees the QP's READ contexts
      const bool cmd_flush = dut->qp_cmd_valid && dut->qp_cmd_ready &&
                             (kQpCmd.get(dut->qp_cmd, kCInitIdx) || kQpCmd.get(dut->qp_cmd, kCState) == kQpsReset);
      EXPECT_EQ(bool(dut->rdc_flush_valid), cmd_flush)
          << at << (cmd_flush ? "QP_MODIFY to RESET (or re-initialising) taken without a READ-context flush"
                              : "flush without a command");
      if (cmd_flush && dut->rdc_flush_valid) {
        ++ctx_flushes;
        const uint32_t fq = uint32_t(kQpCmd.get(dut->qp_cmd, kCQpn));
        for (auto& e : rdc_hw)
          if (e.qpn == fq) e.valid = false;
      }
    }
    if (dut->rdc_qerr_flush_valid) {
      ASSERT_FALSE(qflush_x.empty()) << at << "READ contexts of QP " << unsigned(dut->rdc_qerr_flush_qpn)
                                     << " freed without a qerr";
      EXPECT_EQ(uint32_t(dut->rdc_qerr_flush_qpn), qflush_x.front()) << at << "READ-context flush of a QP";
      qflush_x.pop_front();
      for (auto& e : rdc_hw)
        if (e.qpn == uint32_t(dut->rdc_qerr_flush_qpn)) e.valid = false;
    }
    if (dut->aw_valid && dut->aw_ready) {
      ASSERT_FALSE(aw_x.empty()) << at << "AW " << hex(dut->aw_addr) << " the reference does not make";
      const AwX e = aw_x.front();
      aw_x.pop_front();
      const uint64_t a = dut->aw_addr;
      const unsigned len = dut->aw_len;
      EXPECT_EQ(a & 0xFFF, a & 0xFFF & ~63ull) << at << "AW not 64-byte aligned";
      EXPECT_LE((a & 0xFFF) + (uint64_t(len) + 1) * 64, 4096u) << at << "burst crosses 4 KiB: " << hex(a);
      ASSERT_EQ(a, e.addr) << at << "AW address";
      ASSERT_EQ(len, e.len) << at << "AW len at " << hex(a);
      aw_log.push_back({a, len});
    }
    if (dut->w_valid && dut->w_ready) {
      ASSERT_FALSE(w_x.empty()) << at << "W beat the reference does not make";
      const WX e = w_x.front();
      w_x.pop_front();
      ASSERT_EQ(uint64_t(dut->w_strb), e.strb) << at << "W strobes (beat " << n_w << ")";
      ASSERT_EQ(bool(dut->w_last), e.last) << at << "W last";
      for (int b = 0; b < 64; ++b)
        if ((e.strb >> b) & 1) {
          const uint8_t v = uint8_t(dut->w_data[size_t(b / 4)] >> (8 * (b % 4)));
          ASSERT_EQ(unsigned(v), unsigned(e.data[b])) << at << "W byte " << b << " of beat " << n_w;
        }
      ++n_w;
      w_bytes += uint64_t(__builtin_popcountll(e.strb));
    }
    // timer kicks: in order, held (QPN and STOP stable) until taken
    if (dut->tk_valid) {
      ASSERT_FALSE(tk_x.empty()) << at << "timer kick (QP " << unsigned(dut->tk_qpn) << ", stop "
                                 << unsigned(dut->tk_stop) << ") the reference does not make";
      TkX& e = tk_x.front();
      if (!e.rose) {
        e.rose = true;
        e.rise = c;
        e.stop = e.base && !snd_race(e.q, e.take - 1, c - 1);
        stats.race_clears += e.base && !e.stop;
      }
      ASSERT_EQ(uint32_t(dut->tk_qpn), e.q) << at << "timer kick QPN";
      ASSERT_EQ(bool(dut->tk_stop), e.stop)
          << at << "timer kick of QP " << e.q << ": stop (taken in cycle " << e.take << ", shown from cycle "
          << e.rise << "; STOP without the send race: " << e.base << ", a send of the QP in [" << (e.take - 1)
          << ", " << (e.rise - 1) << "]: " << snd_race(e.q, e.take - 1, e.rise - 1) << ")";
      if (dut->tk_ready) {
        tk_log.push_back({e.q, e.stop, e.base});
        stats.stops += e.stop;
        tk_x.pop_front();
      }
    }
    if (dut->task_valid && dut->task_ready) {
      ASSERT_FALSE(task_x.empty()) << at << "task (psn " << hex(kRespTask.get(dut->task_out, kRtPsn)) << " syndrome "
                                   << hex(kRespTask.get(dut->task_out, kRtSyndrome))
                                   << ") the reference does not make";
      const TaskX e = task_x.front();
      ASSERT_TRUE(placed_upto(e.seq)) << at << "task before its packet's payload (or an earlier one) is written";
      task_x.pop_front();
      const auto& t = dut->task_out;
      const std::string w = at + "task " + std::to_string(task_log.size()) + " QP " + std::to_string(e.qpn) + ": ";
      // a READ, RNR NAK or fatal NAK brings its packet's reservation to srnic_resp_tx
      const uint64_t syn = kRespTask.get(t, kRtSyndrome);
      if (kRespTask.get(t, kRtIsRead) || (syn != kSynAck && syn != kSynPsn)) {
        ++stats.resv_tasks;
        ASSERT_LE(stats.resv_rels + stats.resv_tasks, stats.resv_takes) << w << "a READ, RNR or fatal NAK task without a reservation";
      }
      EXPECT_EQ(kRespTask.get(t, kRtIsRead), uint64_t(e.rd)) << w << "is_read";
      EXPECT_EQ(kRespTask.get(t, kRtQpn), e.qpn) << w << "qpn";
      EXPECT_EQ(kRespTask.get(t, kRtPsn), e.psn) << w << "psn";
      EXPECT_EQ(kRespTask.get(t, kRtSyndrome), e.syn) << w << "syndrome";
      EXPECT_EQ(kRespTask.get(t, kRtMsn), e.msn) << w << "msn";
      EXPECT_EQ(kRespTask.get(t, kRtMtu), uint64_t(e.mtu)) << w << "mtu";
      if (e.rd) {
        EXPECT_EQ(kRespTask.get(t, kRtAddr), e.addr) << w << "READ address";
        EXPECT_EQ(kRespTask.get(t, kRtLen), e.len) << w << "READ length";
      }
      EXPECT_EQ(kRespTask.get(t, kRtGen), e.gen) << w << "incarnation (gen)";
      TaskX got = e;
      got.gen = uint8_t(kRespTask.get(t, kRtGen));
      task_log.push_back(got);
    }
    if (dut->cqe_valid && dut->cqe_ready) {
      ASSERT_FALSE(cqe_x.empty()) << at << "CQE (wr_id " << hex(kCqeReq.get(dut->cqe, kCrWrId))
                                  << ") the reference does not make";
      const CqeX e = cqe_x.front();
      ASSERT_TRUE(placed_upto(e.seq)) << at << "CQE before its packet's payload (or an earlier one) is written";
      cqe_x.pop_front();
      const auto& m = dut->cqe;
      const std::string w = at + "CQE " + std::to_string(cqe_log.size()) + " QP " + std::to_string(e.qpn) + ": ";
      EXPECT_EQ(kCqeReq.get(m, kCrCqn), e.cqn) << w << "cqn";
      EXPECT_EQ(kCqeReq.get(m, kCrWrId), e.wr_id) << w << "wr_id";
      if (e.status == 0) {
        EXPECT_EQ(kCqeReq.get(m, kCrByteLen), e.byte_len) << w << "byte_len";
      }
      EXPECT_EQ(kCqeReq.get(m, kCrQpn), e.qpn) << w << "qpn";
      EXPECT_EQ(kCqeReq.get(m, kCrWqeIdx), e.idx) << w << "wqe_idx";
      EXPECT_EQ(kCqeReq.get(m, kCrOpcode), e.opcode) << w << "opcode";
      EXPECT_EQ(kCqeReq.get(m, kCrStatus), e.status) << w << "status";
      EXPECT_EQ(kCqeReq.get(m, kCrWithImm), uint64_t(e.with_imm)) << w << "with_imm";
      if (e.with_imm) {
        EXPECT_EQ(kCqeReq.get(m, kCrImm), e.imm) << w << "imm";
      }
      EXPECT_EQ(kCqeReq.get(m, kCrGen), e.gen) << w << "incarnation (gen)";
      CqeX got = e;
      got.byte_len = uint32_t(kCqeReq.get(m, kCrByteLen));
      got.gen = uint8_t(kCqeReq.get(m, kCrGen));
      cqe_log.push_back(got);
    }
    if (dut->cev_valid && dut->cev_ready) {
      const auto& v = dut->cev;
      auto describe = [&](const CevX& x) {
        std::string d = "kind " + std::to_string(x.kind) + " qpn " + std::to_string(x.qpn);
        if (x.kind == kCevRetry)
          d += " rt_kind " + std::to_string(x.rt_kind) + " rt_psn " + hex(x.rt_psn) + " rt_code " +
               std::to_string(x.rt_code);
        else
          d += " psn " + hex(x.psn) + " status " + std::to_string(x.status);
        return d;
      };
      CevX got{uint8_t(kCompEv.get(v, kCeKind)), uint32_t(kCompEv.get(v, kCeQpn)), uint32_t(kCompEv.get(v, kCePsn)),
               uint8_t(kCompEv.get(v, kCeStatus))};
      got.rt_kind = uint8_t(kCompEv.get(v, kCeRtKind));
      got.rt_psn = uint32_t(kCompEv.get(v, kCeRtPsn));
      got.rt_code = uint8_t(kCompEv.get(v, kCeRtCode));
      ASSERT_FALSE(cev_x.empty()) << at << "event " << describe(got) << " the reference does not make";
      ASSERT_TRUE(placed_upto(cev_x.front().seq))
          << at << "completion event before its packet's payload (or an earlier one) is written (event "
          << describe(got) << "; expected next: " << describe(cev_x.front()) << ", " << aw_x.size() << " AW and "
          << w_x.size() << " W beats still expected)";
      const CevX e = cev_x.front();
      cev_x.pop_front();
      const std::string w = at + "event " + std::to_string(cev_log.size()) + " (" + describe(got) +
                            ", expected " + describe(e) + "): ";
      EXPECT_EQ(got.kind, e.kind) << w << "kind";
      EXPECT_EQ(got.qpn, e.qpn) << w << "qpn";
      EXPECT_EQ(got.psn, e.psn) << w << "psn";
      EXPECT_EQ(got.status, e.status) << w << "status";
      got.has_rd = kCompEv.get(v, kCeHasRd) != 0;
      got.psn2 = uint32_t(kCompEv.get(v, kCePsn2));
      EXPECT_EQ(got.psn2, e.psn2) << w << "psn2";
      EXPECT_EQ(kCompEv.get(v, kCeHasAck), 0u) << w << "has_ack";
      EXPECT_EQ(got.has_rd, e.has_rd) << w << "has_rd";
      got.gen = uint8_t(kCompEv.get(v, kCeGen));
      EXPECT_EQ(got.gen, e.gen) << w << "incarnation (gen)";
      if (e.kind == kCevRetry) {
        EXPECT_EQ(got.rt_kind, e.rt_kind) << w << "rt_kind";
        EXPECT_EQ(got.rt_psn, e.rt_psn) << w << "rt_psn";
        EXPECT_EQ(got.rt_code, e.rt_code) << w << "rt_code";
      } else {
        got.rt_kind = 0;
        got.rt_psn = 0;
        got.rt_code = 0;
      }
      cev_log.push_back(got);
    }
    if (dut->resync_valid && dut->resync_ready) {
      ASSERT_FALSE(rs_x.empty()) << at << "resync the reference does not make";
      const RsX e = rs_x.front();
      rs_x.pop_front();
      EXPECT_EQ(uint32_t(dut->resync_qpn), e.qpn) << at << "resync QPN";
      EXPECT_EQ(uint32_t(dut->resync_ci), e.ci) << at << "resync index";
      EXPECT_EQ(bool(dut->resync_err), e.err) << at << "resync err (hand-over)";
      fi[e.qpn] = e.ci;
      if (e.err) {
        fl_err[e.qpn] = true;
        queue_flushes(e.qpn);
      }
      rs_log.push_back(e);
    }
    const bool cmd_taken = dut->qp_cmd_valid && dut->qp_cmd_ready;
    if (!dut->qp_cmd_valid) {
      EXPECT_FALSE(dut->qp_cmd_ready) << at << "command ready without a command";
    }
    act_cnt.drop_qp += dut->cnt_drop_qp;
    act_cnt.dup += dut->cnt_dup;
    act_cnt.psn_err += dut->cnt_psn_err;
    act_cnt.access_err += dut->cnt_access_err;
    act_cnt.rx_nak += dut->cnt_rx_nak;
    act_cnt.no_room += dut->cnt_no_room;
    // a reset of some QP: never the one of the packet or event taken last (it may not have
    // reached its write-back, where its incarnation is read)
    if (k.bump && rng.below(1000) < k.bump) {
      const uint32_t q = uint32_t(rng.below(kQps));
      if (take_log.empty() || take_log.back().q != q) {
        bool queued = false;
        for (const TaskX& e : task_x) queued = queued || e.qpn == q;
        for (const CevX& e : cev_x) queued = queued || e.qpn == q;
        for (const CqeX& e : cqe_x) queued = queued || e.qpn == q;
        bumps_queued += queued;
        bumps_held_qerr += hold_qerr && qerr_q == q && qerr_g == gen_tab[q];
        bump_gen(q);
      }
    }
    if (rst_take) {  // srnic_qp_gen advances the reset QP's incarnation (seen from the next cycle)
      bump_gen(rst_q);
      rst_on = false;
      ++resets_taken;
    }
    dut.tick();
    if (cmd_taken) dut->qp_cmd_valid = 0;
    if (mrr) mr_busy = false;
    if (lkr) lk_busy = false;
  }

  bool quiet() const {
    return pending.empty() && !hold_meta && !hold_rack && beats.empty() && wqe_fifo.empty() && !mr_busy && !lk_busy &&
           mr_x.empty() && lk_x.empty() && aw_x.empty() && w_x.empty() && task_x.empty() && cqe_x.empty() &&
           cev_x.empty() && rs_x.empty() && free_x.empty() && qflush_x.empty() && tk_x.empty() && snd_sched.empty();
  }

  // Runs until everything queued is processed, then checks the counters and that the
  // stand-in's READ-context table (following the engine's frees) is the reference's.
  void drain(Knobs k = Knobs{}) {
    int idle = 0;
    for (int i = 0; i < 200000 && !HasFatalFailure() && idle < 24; ++i) {
      cycle(k);
      idle = quiet() ? idle + 1 : 0;
    }
    ASSERT_TRUE(quiet()) << pending.size() << " records, " << beats.size() << " beats, " << wqe_fifo.size()
                         << " WQEs left; still expected: " << mr_x.size() << " MR, " << lk_x.size() << " lookups, "
                         << aw_x.size() << " AW, " << w_x.size() << " W, " << task_x.size() << " tasks, "
                         << cqe_x.size() << " CQEs, " << cev_x.size() << " events, " << rs_x.size()
                         << " resyncs" << (rs_x.empty() ? std::string() : " (first QP " + std::to_string(rs_x.front().qpn) + ")")
                         << ", " << free_x.size() << " frees, " << qflush_x.size() << " context flushes, "
                         << tk_x.size() << " timer kicks";
    EXPECT_EQ(act_cnt.drop_qp, exp_cnt.drop_qp) << "cnt_drop_qp";
    EXPECT_EQ(act_cnt.dup, exp_cnt.dup) << "cnt_dup";
    EXPECT_EQ(act_cnt.psn_err, exp_cnt.psn_err) << "cnt_psn_err";
    EXPECT_EQ(act_cnt.access_err, exp_cnt.access_err) << "cnt_access_err";
    EXPECT_EQ(act_cnt.rx_nak, exp_cnt.rx_nak) << "cnt_rx_nak";
    EXPECT_EQ(act_cnt.no_room, exp_cnt.no_room) << "cnt_no_room";
    // every reservation taken went back, at the packet's write-back or with its task
    EXPECT_EQ(stats.resv_rels + stats.resv_tasks, stats.resv_takes) << "responder queue reservations left held";
    for (int i = 0; i < kRdEntries; ++i) {
      const RdCtx &a = rdc[size_t(i)], &b = rdc_hw[size_t(i)];
      EXPECT_EQ(a.valid, b.valid) << "READ context " << i << " (QP " << a.qpn << ") freed by the engine: "
                                  << !b.valid << ", by the reference: " << !a.valid;
    }
    EXPECT_FALSE(dut.rtl_error());
  }

  // ------------------------------------------------------------ directed-test helpers
  // The send path reports q's next send PSN (and the engine has it from the cycle after next).
  void set_snd(uint32_t q, uint32_t next) {
    snd_sched[dut.cycle()] = {q, next & kMask};
    sq_next[q] = next & kMask;
    for (int i = 0; i < 3 && !HasFatalFailure(); ++i) cycle(Knobs{});
  }
  void note(uint32_t q, bool rewind = false) {
    hold_note = true;
    note_q = q;
    note_g = uint8_t(gen_tab[q] & 1u);
    note_rewind = rewind;
    for (int i = 0; i < 200 && hold_note && !HasFatalFailure(); ++i) cycle(Knobs{});
    ASSERT_FALSE(hold_note) << "note for QP " << q << " not taken";
    drain();
  }
  // q's local ACK timer expires (rnr: its RNR wait ends)
  void timeout(uint32_t q, bool rnr = false) {
    hold_tmo = true;
    tmo_q = q;
    tmo_rnr = rnr;
    for (int i = 0; i < 200 && hold_tmo && !HasFatalFailure(); ++i) cycle(Knobs{});
    ASSERT_FALSE(hold_tmo) << "timeout of QP " << q << " not taken";
    drain();
  }
  // QPs 11..15, none of which sends: in RTR, in INIT, never set up (RESET), in RTS failed by a
  // qerr, in RTS moved to ERR by the host
  std::vector<uint32_t> non_senders() {
    const uint32_t r = 11, i = 12, z = 13, e = 14, h = 15;
    bring_up(r, kQpsRtr, 2, 0, 0, 0, 0);
    bring_up(i, kQpsInit, 2, 0, 0, 0, 0);
    bring_up(e, kQpsRts, 2, 0, 0, 0, 0);
    bring_up(h, kQpsRts, 2, 0, 0, 0, 0);
    qp_modify(h, kQpsErr, 2, 0, 0, 0, 0, false, false);
    if (!HasFatalFailure()) report_qerr(e);
    return {r, i, z, e, h};
  }
  void report_qerr(uint32_t q) {
    raise_qerr(q);
    for (int i = 0; i < 200 && hold_qerr && !HasFatalFailure(); ++i) cycle(Knobs{});
    ASSERT_FALSE(hold_qerr) << "qerr for QP " << q << " not taken";
    drain();
  }

  // Directed tests compare the logs of what came out with values written out by hand.
  void expect_task(size_t i, bool rd, uint32_t q, uint32_t psn, uint8_t syn, uint32_t msn) {
    ASSERT_LT(i, task_log.size()) << "task " << i << " missing";
    const TaskX& t = task_log[i];
    EXPECT_EQ(t.rd, rd) << "task " << i;
    EXPECT_EQ(t.qpn, q) << "task " << i;
    EXPECT_EQ(t.psn, psn) << "task " << i;
    EXPECT_EQ(unsigned(t.syn), unsigned(syn)) << "task " << i;
    EXPECT_EQ(t.msn, msn) << "task " << i;
  }
  void expect_cev(size_t i, uint8_t kind, uint32_t q, uint32_t psn, uint8_t status) {
    ASSERT_LT(i, cev_log.size()) << "event " << i << " missing";
    EXPECT_EQ(unsigned(cev_log[i].kind), unsigned(kind)) << "event " << i;
    EXPECT_EQ(cev_log[i].qpn, q) << "event " << i;
    EXPECT_EQ(cev_log[i].psn, psn) << "event " << i;
    EXPECT_EQ(unsigned(cev_log[i].status), unsigned(status)) << "event " << i;
  }
  void expect_retry(size_t i, uint32_t q, uint8_t kind, uint32_t rt_psn, uint8_t code = 0) {
    ASSERT_LT(i, cev_log.size()) << "event " << i << " missing";
    EXPECT_EQ(unsigned(cev_log[i].kind), unsigned(kCevRetry)) << "event " << i << " is no CEV_RETRY";
    EXPECT_EQ(cev_log[i].qpn, q) << "event " << i;
    EXPECT_EQ(unsigned(cev_log[i].rt_kind), unsigned(kind)) << "event " << i << " rt_kind";
    EXPECT_EQ(cev_log[i].rt_psn, rt_psn) << "event " << i << " rt_psn";
    EXPECT_EQ(unsigned(cev_log[i].rt_code), unsigned(code)) << "event " << i << " rt_code";
  }
  void expect_kicks(size_t from, const std::vector<std::pair<uint32_t, bool>>& want) {
    ASSERT_EQ(tk_log.size(), from + want.size()) << "timer kicks";
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(tk_log[from + i].q, want[i].first) << "kick " << from + i;
      EXPECT_EQ(tk_log[from + i].stop, want[i].second) << "kick " << from + i << " stop";
    }
  }

  Rng rng;
  Dut<Vsrnic_rx_engine> dut;
  std::vector<Cfg> cfg;
  std::vector<St> st;
  std::vector<uint16_t> fi, pi;  // rqfetch stand-in: fetch and producer index per QP
  std::vector<std::vector<RWqe>> ring;
  std::vector<std::vector<SndRec>> snd_hist;  // the engine's next-send-PSN RAM, per QP, as written
  std::vector<uint32_t> sq_next;              // the send path's next PSN per QP
  std::map<uint64_t, std::pair<uint32_t, uint32_t>> snd_sched;  // cycle -> (QP, next) reported then
  bool auto_snd = true;  // responses of directed tests: the send path reports psn + 0x1000 first
  uint64_t now = 0;      // the cycle being simulated
  std::vector<Mr> mrs;
  std::array<RdCtx, kRdEntries> rdc{};     // the reference's READ-context table
  std::array<RdCtx, kRdEntries> rdc_hw{};  // the stand-in's (srnic_rd_ctx): follows the engine's frees
  std::deque<Pkt> pending;
  bool hold_meta = false;
  std::deque<std::array<uint8_t, 64>> beats;
  std::deque<std::pair<uint64_t, int64_t>> beat_tag;   // per beat: its packet's serial, READ response QP or -1
  uint64_t serials = 0, taken_serial = 0;              // packets queued; serial of the last one taken
  // beats of a taken READ response of q are still in the RX buffer (its placement ends when
  // they are all taken, also those after the payload)
  bool rd_beats_due(uint32_t q) const {
    for (const auto& t : beat_tag)
      if (t.first <= taken_serial && t.second == int64_t(q)) return true;
    return false;
  }
  std::deque<WqeSlot> wqe_fifo;
  unsigned cur_wlat = 10;
  bool mr_busy = false, lk_busy = false;
  uint64_t mr_at = 0, lk_at = 0;
  MrX mr_cur{};
  LkX lk_cur{};
  std::deque<MrX> mr_x;
  std::deque<LkX> lk_x;
  std::deque<AwX> aw_x;
  std::deque<WX> w_x;
  std::deque<TaskX> task_x;
  std::deque<CqeX> cqe_x;
  std::deque<CevX> cev_x;
  std::deque<RsX> rs_x;
  std::deque<TkX> tk_x;
  std::vector<bool> fl_err = std::vector<bool>(kQps, false);   // stand-in: QP handed over in error
  uint64_t qerrs = 0;
  bool cur_rdata = false;       // the packet last taken is a READ response (of QP cur_q)
  uint32_t cur_q = 0;
  uint32_t rdq_q = 0;           // the QP asked about (rdq_qpn) this cycle
  uint32_t last_pkt_q = 0;      // QP of the record taken last (it may still be in the engine)
  uint64_t rd_busy_writes = 0;  // payload beats and bursts of READ responses seen with rdq_busy
  uint64_t rdq_asks = 0, rdq_hits = 0;   // rdq_busy questions while a READ payload was due, answered busy
  uint64_t takes = 0;           // takes so far (seq of the expectations of the last one)
  // stamp the expectations the last take added with its number (and, for payload writes, the
  // QP of a READ response)
  template <class D>
  static void stamp_q(D& d, uint64_t seq) {
    for (auto it = d.rbegin(); it != d.rend() && it->seq == kNoSeq; ++it) it->seq = seq;
  }
  template <class D>
  static void stamp_w(D& d, uint64_t seq, int64_t rdq) {
    for (auto it = d.rbegin(); it != d.rend() && it->seq == kNoSeq; ++it) {
      it->seq = seq;
      it->rdq = rdq;
    }
  }
  void stamp(int64_t rdq) {
    ++takes;
    stamp_w(aw_x, takes, rdq);
    stamp_w(w_x, takes, rdq);
    stamp_q(task_x, takes);
    stamp_q(cqe_x, takes);
    stamp_q(cev_x, takes);
  }
  // every payload write of the packets up to take seq is done
  bool placed_upto(uint64_t seq) const {
    return (aw_x.empty() || aw_x.front().seq > seq) && (w_x.empty() || w_x.front().seq > seq);
  }
  bool rd_payload_due(uint32_t q) const {
    for (const auto& e : aw_x)
      if (e.rdq == int64_t(q)) return true;
    for (const auto& e : w_x)
      if (e.rdq == int64_t(q)) return true;
    return false;
  }
  uint64_t ctx_flushes = 0;     // READ-context flushes by QP_MODIFY
  bool hold_qerr = false, hold_note = false, hold_tmo = false, note_rewind = false, hold_rack = false;
  bool tmo_rnr = false;  // the expiry offered is an RNR wait's end
  uint64_t owed_until = 0;  // qerr_owed is driven high until this cycle
  uint32_t qerr_q = 0, note_q = 0, tmo_q = 0, rack_q = 0;
  uint8_t qerr_g = 0;                 // the incarnation the qerr offered was made for
  std::vector<uint8_t> gen_tab;       // srnic_qp_gen: each QP's incarnation
  uint64_t bumps = 0, stale_qerrs = 0, stale_pulses = 0, stale_notes = 0;
  uint8_t note_g = 0;            // the low bit of the incarnation the note offered was made for
  uint64_t nowed_until = 0;      // note_owed is driven high until this cycle
  uint64_t bumps_queued = 0;          // resets of a QP with tasks or events still to come out
  uint64_t bumps_held_qerr = 0;       // resets of a QP whose qerr (live until then) was waiting
  bool rst_on = false;                // offer_reset(): a RESET of rst_q is offered, not yet taken
  uint32_t rst_q = 0;
  uint64_t rst_at = 0, resets_taken = 0;   // the cycle the last one was taken; how many were
  bool rst_busy = false;              // busy_cls (a packet or event in the packet FSM) at that take
  std::deque<std::pair<uint8_t, uint32_t>> free_x;   // expected context frees (index, QPN)
  std::deque<uint32_t> qflush_x;   // expected flushes of a QP's READ contexts (qerr)
  Counts exp_cnt, act_cnt;
  Stats stats;
  std::vector<AwX> aw_log;
  std::vector<TaskX> task_log;
  std::vector<CqeX> cqe_log;
  std::vector<CevX> cev_log;
  std::vector<RsX> rs_log;
  std::vector<TkLog> tk_log;
  std::vector<TakeX> take_log;
  uint64_t records = 0, pops = 0, n_mr = 0, n_lk = 0, n_w = 0, w_bytes = 0, n_snd = 0;
};

// ---------------------------------------------------------------- directed cases

// WRITE ONLY (one 4 KiB crossing) and a WRITE FIRST/MIDDLE/LAST in RTR with the expected
// PSN: bursts split at 4 KiB, ePSN advances, ACKs only where AckReq is set.
TEST_F(RxEngBench, WriteInRtrPlacedAndAcked) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 3, e = 0x123456;
  bring_up(q, kQpsRtr, 1, kAccRemoteWrite, 7, 0x55, e);  // MTU 256
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0xAB01, 7, kAccRemoteWrite, 0x7000'0000'0000ull, 0x10000, 0x12345FF0ull - 0x100});
  queue(make_reth(q, kWriteOnly, e, 200, 0x7000'0000'0100ull, 0xAB01, 200, true));
  // 0x30 + 200 bytes from 0x12345FC0: 1 beat up to the 4 KiB line, then 3
  queue(make_reth(q, kWriteFirst, e + 1, 256, 0x7000'0000'0400ull, 0xAB01, 600, false));
  queue(make(q, kWriteMiddle, e + 2, 256));
  queue(make(q, kWriteLast, e + 3, 88, true));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  const std::vector<AwX> aws = {{0x12345FC0, 0}, {0x12346000, 2}, {0x123462C0, 4}, {0x123463C0, 4}, {0x123464C0, 2}};
  EXPECT_EQ(aw_log.size(), 5u);
  for (size_t i = 0; i < std::min(aw_log.size(), aws.size()); ++i) {
    EXPECT_EQ(aw_log[i].addr, aws[i].addr) << "AW " << i;
    EXPECT_EQ(aw_log[i].len, aws[i].len) << "AW " << i;
  }
  EXPECT_EQ(w_bytes, 800u);
  ASSERT_EQ(task_log.size(), 2u);
  expect_task(0, false, q, e, kSynAck, 1);
  expect_task(1, false, q, e + 3, kSynAck, 2);
  EXPECT_TRUE(cqe_log.empty());
  EXPECT_EQ(st[q].epsn, e + 4);
  // the next PSN is taken: ePSN advanced by four
  queue(make_reth(q, kWriteOnly, e + 4, 0, 0, 0, 0, true));
  drain();
  ASSERT_EQ(task_log.size(), 3u);
  expect_task(2, false, q, e + 4, kSynAck, 3);
  EXPECT_EQ(act_cnt.dup + act_cnt.psn_err, 0u);
}

// SEND FIRST/MIDDLE/LAST into the fetched receive WQE, then SEND ONLY with immediate into
// the next: data at the WQE's buffer, CQEs after the data.
TEST_F(RxEngBench, SendIntoReceiveWqe) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 5, e = 0xFFFFFE;  // PSNs wrap
  bring_up(q, kQpsRts, 1, 0, 9, 0x321, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x4401, 9, kAccLocalWrite, 0x1000, 0x4000, 0x8000'0000'0013ull});
  post_rwqe(q, {0xDEADBEEF00000001ull, 0x1100, 1000, 0x4401});
  post_rwqe(q, {0xDEADBEEF00000002ull, 0x2000, 64, 0x4401});
  queue(make(q, kSendFirst, e, 256));
  queue(make(q, kSendMiddle, e + 1, 256));
  queue(make(q, kSendLast, e + 2, 100, true));
  Pkt imm = make(q, kSendOnlyImm, e + 3, 40);
  imm.f[kRmImm] = 0xCAFEF00D;
  queue(imm);
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(pops, 2u);
  EXPECT_EQ(n_mr, 2u);
  EXPECT_EQ(w_bytes, 652u);
  ASSERT_FALSE(aw_log.empty());
  EXPECT_EQ(aw_log[0].addr, 0x8000'0000'0100ull);  // 0x...0113 aligned down
  ASSERT_EQ(cqe_log.size(), 2u);
  EXPECT_EQ(cqe_log[0].wr_id, 0xDEADBEEF00000001ull);
  EXPECT_EQ(cqe_log[0].byte_len, 612u);
  EXPECT_EQ(cqe_log[0].opcode, kWcRecv);
  EXPECT_EQ(cqe_log[0].status, 0);
  EXPECT_EQ(cqe_log[0].idx, 0);
  EXPECT_EQ(cqe_log[0].cqn, 0x321);
  EXPECT_EQ(cqe_log[1].wr_id, 0xDEADBEEF00000002ull);
  EXPECT_EQ(cqe_log[1].byte_len, 40u);
  EXPECT_EQ(cqe_log[1].idx, 1);
  EXPECT_TRUE(cqe_log[1].with_imm);
  EXPECT_EQ(cqe_log[1].imm, 0xCAFEF00Du);
  ASSERT_EQ(task_log.size(), 1u);
  expect_task(0, false, q, 0x000000, kSynAck, 1);
  EXPECT_EQ(st[q].epsn, 0x000002u);
}

// Duplicate: ACK again with ePSN-1, nothing placed, a fetched WQE is handed back. Gap: one
// NAK PSN-sequence-error until the expected PSN comes.
TEST_F(RxEngBench, DuplicateAndGap) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 2, e = 0x400;
  bring_up(q, kQpsRtr, 2, kAccRemoteWrite, 1, 1, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x10, 1, kAccRemoteWrite | kAccLocalWrite, 0x0, 0x100000, 0x40000});
  for (int i = 0; i < 3; ++i) post_rwqe(q, {uint64_t(100 + i), 0x8000, 4096, 0x10});
  queue(make(q, kSendOnly, e, 100, false));   // WQE 0, executed
  queue(make(q, kSendOnly, e, 100, true));    // duplicate: WQE 1 fetched and handed back
  queue(make_reth(q, kWriteOnly, e - 5, 64, 0x100, 0x10, 64, false));  // older duplicate
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(w_bytes, 100u);
  ASSERT_EQ(task_log.size(), 2u);
  expect_task(0, false, q, e, kSynAck, 1);
  expect_task(1, false, q, e, kSynAck, 1);
  EXPECT_EQ(act_cnt.dup, 2u);
  ASSERT_EQ(rs_log.size(), 1u);
  EXPECT_EQ(rs_log[0].ci, 1);
  EXPECT_EQ(fi[q], 1);
  // gap: e+3 and e+4 are ahead of ePSN e+1
  queue(make_reth(q, kWriteOnly, e + 3, 64, 0x100, 0x10, 64, true));
  queue(make_reth(q, kWriteOnly, e + 4, 64, 0x100, 0x10, 64, true));
  drain();
  ASSERT_EQ(task_log.size(), 3u);
  expect_task(2, false, q, e + 1, kSynPsn, 1);
  EXPECT_EQ(act_cnt.psn_err, 2u);
  EXPECT_EQ(w_bytes, 100u);
  // the expected PSN ends the gap; a later gap is NAKed again
  queue(make(q, kSendOnly, e + 1, 10, true));
  queue(make_reth(q, kWriteOnly, e + 9, 64, 0x100, 0x10, 64, true));
  drain();
  ASSERT_EQ(task_log.size(), 5u);
  expect_task(3, false, q, e + 1, kSynAck, 2);
  expect_task(4, false, q, e + 2, kSynPsn, 2);
  EXPECT_EQ(w_bytes, 110u);
  ASSERT_EQ(cqe_log.size(), 2u);
  EXPECT_EQ(cqe_log[1].wr_id, 101u);  // the handed-back WQE is used by the next SEND
}

// Duplicates across the 24-bit PSN wrap: with ePSN 0x000000 (wrapped), 0xFFFFFF and 0xFFFFFE
// are behind it, ACKed again with ePSN-1 = 0xFFFFFF, not NAKed as sequence errors.
TEST_F(RxEngBench, DuplicateAcrossPsnWrap) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 3, e = 0xFFFFFE;
  bring_up(q, kQpsRtr, 2, kAccRemoteWrite, 1, 1, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x10, 1, kAccRemoteWrite | kAccLocalWrite, 0x0, 0x100000, 0x40000});
  queue(make_reth(q, kWriteOnly, e, 64, 0x100, 0x10, 64, true));      // ePSN -> 0xFFFFFF
  queue(make_reth(q, kWriteOnly, e + 1, 64, 0x200, 0x10, 64, true));  // ePSN -> 0x000000
  queue(make_reth(q, kWriteOnly, e + 1, 64, 0x200, 0x10, 64, true));  // duplicate
  queue(make_reth(q, kWriteOnly, e, 64, 0x100, 0x10, 64, true));      // older duplicate
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(w_bytes, 128u);
  ASSERT_EQ(task_log.size(), 4u);
  expect_task(0, false, q, e, kSynAck, 1);
  expect_task(1, false, q, 0xFFFFFF, kSynAck, 2);
  expect_task(2, false, q, 0xFFFFFF, kSynAck, 2);
  expect_task(3, false, q, 0xFFFFFF, kSynAck, 2);
  EXPECT_EQ(act_cnt.dup, 2u);
  EXPECT_EQ(act_cnt.psn_err, 0u);
}

// A READ whose responses cross the 24-bit PSN wrap (0xFFFFFE..0x000001): each response is
// placed at its offset in the buffer.
TEST_F(RxEngBench, ReadResponsesAcrossPsnWrap) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 4;
  const uint64_t pa = 0x5000;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0);  // MTU 512
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(rdc_alloc(q, 0xFFFFFE, 0x000001, pa, 36), 0);
  queue(make(q, kRespFirst, 0xFFFFFE, 512));
  queue(make(q, kRespMiddle, 0xFFFFFF, 512));
  queue(make(q, kRespMiddle, 0x000000, 512));
  queue(make(q, kRespLast, 0x000001, 36));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(w_bytes, 3u * 512u + 36u);
  std::set<uint64_t> starts;
  for (const AwX& a : aw_log) {
    EXPECT_GE(a.addr, pa);
    EXPECT_LT(a.addr, pa + 3 * 512 + 36);
    starts.insert(a.addr);
  }
  for (uint64_t off : {0u, 512u, 1024u, 1536u}) EXPECT_EQ(starts.count(pa + off), 1u) << "response at +" << off;
  ASSERT_EQ(cev_log.size(), 1u);
  expect_cev(0, kCevReadDone, q, 0x000001, 0);
  EXPECT_FALSE(rdc[0].valid);
}

// WRITE ONLY with immediate and a bad R_Key: the receive WQE is consumed and completes with
// REM_ACCESS_ERR, the consumer index is handed over, and the other posted WQEs (also one
// posted later) come back as flush records completing with WR_FLUSH_ERR; a later request
// is dropped. With no receive posted the same packet gets an RNR NAK (checked first).
TEST_F(RxEngBench, WriteImmBadRkeyConsumesReceiveAndFlushes) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 9, r = 10, e = 0x40;
  bring_up(q, kQpsRts, 2, kAccRemoteWrite, 3, 0x55, e);
  bring_up(r, kQpsRts, 2, kAccRemoteWrite, 3, 0x56, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x31, 3, kAccLocalWrite | kAccRemoteWrite, 0x1000, 0x1000, 0x7000});
  // QP r has nothing posted: RNR, not a remote access error, and the QP stays up
  queue(make_reth(r, kWriteOnlyImm, e, 16, 0x1000, 0xBAD, 16, true));
  drain();
  ASSERT_EQ(task_log.size(), 1u);
  expect_task(0, false, r, e, kSynRnr, 0);
  EXPECT_FALSE(st[r].err);
  EXPECT_EQ(act_cnt.access_err, 0u);
  for (uint64_t i = 0; i < 3; ++i) post_rwqe(q, {0xF100 + i, 0x1000, 64, 0x31});
  queue(make_reth(q, kWriteOnlyImm, e, 16, 0x1000, 0xBAD, 16, true));
  queue(make(q, kSendOnly, e + 1, 8, true));  // reaches a QP in error: dropped
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 2u);
  expect_task(1, false, q, e, kSynAcc, 0);
  ASSERT_EQ(rs_log.size(), 1u);
  EXPECT_TRUE(rs_log[0].err);
  EXPECT_EQ(rs_log[0].ci, 1);
  ASSERT_EQ(cqe_log.size(), 3u);
  EXPECT_EQ(cqe_log[0].wr_id, 0xF100u);
  EXPECT_EQ(cqe_log[0].status, kWcRemAccessErr);
  EXPECT_EQ(cqe_log[0].cqn, 0x55);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(cqe_log[i].wr_id, 0xF100u + i);
    EXPECT_EQ(cqe_log[i].status, kWcWrFlushErr);
    EXPECT_EQ(cqe_log[i].idx, i);
    EXPECT_EQ(cqe_log[i].opcode, kWcRecv);
    EXPECT_EQ(cqe_log[i].byte_len, 0u);
  }
  EXPECT_EQ(w_bytes, 0u);
  post_rwqe(q, {0xF200, 0x1000, 64, 0x31});
  queue_flushes(q);
  drain();
  ASSERT_EQ(cqe_log.size(), 4u);
  EXPECT_EQ(cqe_log[3].wr_id, 0xF200u);
  EXPECT_EQ(cqe_log[3].status, kWcWrFlushErr);
  EXPECT_EQ(task_log.size(), 2u);
}

// The completion engine reports a QP in error while a SEND holds a receive WQE: that WQE and
// the posted ones complete with WR_FLUSH_ERR, in order; the rest of the SEND is dropped. A
// second report for the same QP, one for a QP in RESET and one beyond NUM_QPS do nothing;
// one for a QP in INIT moves it to error too (hand-over resync; no receive in progress).
TEST_F(RxEngBench, QerrFlushesReceiveInProgress) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 4, idle = 6, e = 0x100;
  bring_up(q, kQpsRts, 1, 0, 2, 0x77, e);
  bring_up(idle, kQpsInit, 1, 0, 2, 0x78, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x41, 2, kAccLocalWrite, 0x2000, 0x1000, 0xA000});
  for (uint64_t i = 0; i < 3; ++i) post_rwqe(q, {0xE100 + i, 0x2000, 1024, 0x41});
  queue(make(q, kSendFirst, e, 256));
  drain();
  ASSERT_EQ(st[q].in_msg, 1);
  auto report = [&](uint32_t qpn) {
    Knobs k;
    raise_qerr(qpn);
    for (int i = 0; i < 50 && hold_qerr && !HasFatalFailure(); ++i) cycle(k);
    ASSERT_FALSE(hold_qerr) << "qerr for QP " << qpn << " not taken";
    drain();
  };
  report(q);
  queue(make(q, kSendLast, e + 1, 10, true));  // dropped
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cqe_log.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cqe_log[i].wr_id, 0xE100u + i);
    EXPECT_EQ(cqe_log[i].status, kWcWrFlushErr);
    EXPECT_EQ(cqe_log[i].idx, i);
  }
  ASSERT_EQ(rs_log.size(), 1u);
  EXPECT_TRUE(rs_log[0].err);
  EXPECT_EQ(rs_log[0].ci, 1);
  report(q);
  report(9);             // never brought up: RESET
  report(kQps + 3);
  EXPECT_EQ(rs_log.size(), 1u);
  post_rwqe(idle, {0xE300, 0x2000, 1024, 0x41});
  report(idle);          // INIT: in error, its receive WQE flushed (by the flush walk)
  ASSERT_EQ(rs_log.size(), 2u);
  EXPECT_EQ(rs_log[1].qpn, idle);
  EXPECT_TRUE(rs_log[1].err);
  EXPECT_EQ(rs_log[1].ci, 0);
  ASSERT_EQ(cqe_log.size(), 4u);
  EXPECT_EQ(cqe_log[3].wr_id, 0xE300u);
  EXPECT_EQ(cqe_log[3].status, kWcWrFlushErr);
  report(idle);          // the second report does nothing
  EXPECT_EQ(rs_log.size(), 2u);
  EXPECT_EQ(cqe_log.size(), 4u);
  // a flush record left over for a QP reset and brought up again: its WQE is dropped
  bring_up(q, kQpsRts, 1, 0, 2, 0x77, e);
  post_rwqe(q, {0xE200, 0x2000, 1024, 0x41});
  fl_err[q] = true;
  queue_flushes(q);
  fl_err[q] = false;
  drain();
  EXPECT_EQ(pops, 5u);  // SEND FIRST, two flushes, the dropped one, the INIT QP's flush
  EXPECT_EQ(cqe_log.size(), 4u);
  EXPECT_EQ(rs_log.size(), 2u);
  EXPECT_TRUE(task_log.empty());
  EXPECT_EQ(act_cnt.drop_qp, 0u);
}

// The host moves a QP to ERR while a SEND holds a receive WQE: packets of the QP are dropped,
// then the completion engine's qerr (host-driven ERR) fails the receive side: the WQE in
// progress and every posted one complete with WR_FLUSH_ERR, in order. The same for a QP the
// host moves to ERR from INIT with WQEs posted and none in progress.
TEST_F(RxEngBench, QerrOnQpInErrState) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 5, q2 = 2, e = 0x300;
  bring_up(q, kQpsRts, 2, 0, 3, 0x11, e);
  bring_up(q2, kQpsInit, 2, 0, 3, 0x12, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x42, 3, kAccLocalWrite, 0x4000, 0x2000, 0xB000});
  for (uint64_t i = 0; i < 4; ++i) post_rwqe(q, {0xA100 + i, 0x4000, 2048, 0x42});
  for (uint64_t i = 0; i < 2; ++i) post_rwqe(q2, {0xB100 + i, 0x4000, 2048, 0x42});
  queue(make(q, kSendFirst, e, 512));
  drain();
  ASSERT_EQ(st[q].in_msg, 1);
  qp_modify(q, kQpsErr, 2, 0, 3, 0x11, e, false, false);
  qp_modify(q2, kQpsErr, 2, 0, 3, 0x12, e, false, false);
  queue(make(q, kSendMiddle, e + 1, 512));   // dropped: the QP is not ready to receive
  drain();
  EXPECT_EQ(act_cnt.drop_qp, 1u);
  EXPECT_TRUE(cqe_log.empty());
  auto report = [&](uint32_t qpn) {
    raise_qerr(qpn);
    for (int i = 0; i < 50 && hold_qerr && !HasFatalFailure(); ++i) cycle(Knobs{});
    ASSERT_FALSE(hold_qerr) << "qerr for QP " << qpn << " not taken";
    drain();
  };
  report(q);   // the receive in progress, then (flush walk) the posted ones
  ASSERT_EQ(cqe_log.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(cqe_log[i].wr_id, 0xA100u + i);
    EXPECT_EQ(cqe_log[i].status, kWcWrFlushErr);
    EXPECT_EQ(cqe_log[i].idx, i);
  }
  ASSERT_EQ(rs_log.size(), 1u);
  EXPECT_EQ(rs_log[0].qpn, q);
  EXPECT_TRUE(rs_log[0].err);
  EXPECT_EQ(rs_log[0].ci, 1);
  report(q2);
  ASSERT_EQ(rs_log.size(), 2u);
  EXPECT_EQ(rs_log[1].qpn, q2);
  EXPECT_TRUE(rs_log[1].err);
  EXPECT_EQ(rs_log[1].ci, 0);
  ASSERT_EQ(cqe_log.size(), 6u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(cqe_log[4 + i].wr_id, 0xB100u + i);
    EXPECT_EQ(cqe_log[4 + i].status, kWcWrFlushErr);
  }
  EXPECT_TRUE(task_log.empty());
}

// R_Key refused: NAK remote access error, the responder side stops.
TEST_F(RxEngBench, RkeyRefusedStopsResponder) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 7, e = 0x10;
  bring_up(q, kQpsRts, 3, kAccRemoteWrite | kAccRemoteRead, 4, 2, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x77, 4, kAccRemoteRead, 0x5000, 0x1000, 0x9000});  // no remote write
  queue(make_reth(q, kWriteOnly, e, 32, 0x5000, 0x77, 32, true));
  queue(make_reth(q, kWriteOnly, e, 32, 0x5000, 0x77, 32, true));   // dropped: responder stopped
  queue(make_reth(q, kReadReq, e + 1, 0, 0x5000, 0x77, 16, true));  // dropped
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 1u);
  expect_task(0, false, q, e, kSynAcc, 0);
  EXPECT_EQ(act_cnt.access_err, 1u);
  EXPECT_EQ(n_mr, 1u);
  EXPECT_EQ(w_bytes, 0u);
  EXPECT_TRUE(st[q].err);
  // the requester side still works
  Pkt ack = make(q, kAck, 0x999, 0);
  ack.f[kRmAethSyn] = kSynAck;
  queue(ack);
  drain();
  ASSERT_EQ(cev_log.size(), 1u);
  expect_cev(0, kCevAck, q, 0x999, 0);
}

// READ request: READ response task with the MR's address, ePSN advanced by the packet count.
TEST_F(RxEngBench, ReadRequest) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 1, e = 0x800;
  bring_up(q, kQpsRtr, 1, kAccRemoteRead, 3, 0, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x31, 3, kAccRemoteRead, 0xA000, 0x2000, 0x1234'5678'9ABCull});
  queue(make_reth(q, kReadReq, e, 0, 0xA010, 0x31, 3000, false));  // 12 packets of 256
  queue(make_reth(q, kReadReq, e + 12, 0, 0, 0, 0, false));        // zero length: one packet
  queue(make_reth(q, kWriteOnly, e + 13, 0, 0, 0, 0, true));       // no write access: NAK
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 3u);
  expect_task(0, true, q, e, kSynAck, 1);
  EXPECT_EQ(task_log[0].addr, 0x1234'5678'9ACCull);
  EXPECT_EQ(task_log[0].len, 3000u);
  EXPECT_EQ(task_log[0].mtu, 1);
  expect_task(1, true, q, e + 12, kSynAck, 2);
  EXPECT_EQ(task_log[1].len, 0u);
  expect_task(2, false, q, e + 13, kSynInv, 2);
  EXPECT_EQ(w_bytes, 0u);
}

// IBA's largest message is 2^31 bytes. A READ of exactly 2^31 is answered (2^23 packets at MTU
// 256: the ePSN moves by that much); one byte more is an invalid request, and so is a length near
// 2^32, whose packet count used to wrap 32 bits (the ePSN moved by 0 and the READ was answered);
// a WRITE FIRST asking for more than 2^31 is refused the same way.
TEST_F(RxEngBench, MessagesLongerThanTwoGigabytesRefused) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t e = 0x100;
  for (uint32_t q : {2u, 3u, 4u}) {
    bring_up(q, kQpsRts, 1, kAccRemoteRead | kAccRemoteWrite, 3, 0, e);
    ASSERT_FALSE(HasFatalFailure());
  }
  add_mr({0x41, 3, kAccRemoteRead | kAccRemoteWrite, 0, 0xFFFF'FFFFu, 0x10'0000'0000ull});
  queue(make_reth(2, kReadReq, e, 0, 0, 0x41, 0x8000'0000u, false));           // 2^23 packets
  queue(make_reth(2, kReadReq, e + 0x80'0000, 0, 0x40, 0x41, 0x10, false));    // the next PSN
  queue(make_reth(2, kReadReq, e + 0x80'0001, 0, 0, 0x41, 0x8000'0001u, false));
  queue(make_reth(3, kReadReq, e, 0, 0, 0x41, 0xFFFF'FF01u, false));
  queue(make_reth(4, kWriteFirst, e, 256, 0, 0x41, 0x8000'0001u, false));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 5u);
  expect_task(0, true, 2, e, kSynAck, 1);
  EXPECT_EQ(task_log[0].len, 0x8000'0000u);
  expect_task(1, true, 2, e + 0x80'0000, kSynAck, 2);
  expect_task(2, false, 2, e + 0x80'0001, kSynInv, 2);
  expect_task(3, false, 3, e, kSynInv, 0);
  expect_task(4, false, 4, e, kSynInv, 0);
  EXPECT_TRUE(st[2].err);
  EXPECT_TRUE(st[3].err);
  EXPECT_TRUE(st[4].err);
  EXPECT_EQ(w_bytes, 0u);
  EXPECT_EQ(n_mr, 2u);   // the two READs that were answered
}

// Re-ACK events (decision 106): the engine answers a QP owed a deferred plain ACK with a plain
// ACK of what its responder has now: ePSN - 1 and the MSN after the WRITEs placed; nothing for a
// QP in RESET or INIT, or whose responder is in error; the events take their turn after qerr,
// note and timeout events and before packets.
TEST_F(RxEngBench, ReAckAnswersWithTheResponderState) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 3, e = 0x500, bad = 5, idle = 6;
  bring_up(q, kQpsRts, 2, kAccRemoteWrite, 4, 0, e);
  bring_up(bad, kQpsRts, 2, kAccRemoteWrite, 4, 0, e);
  bring_up(idle, kQpsInit, 2, kAccRemoteWrite, 4, 0, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x51, 4, kAccRemoteWrite, 0x8000, 0x1000, 0x4'0000ull});
  queue(make_reth(q, kWriteOnly, e, 16, 0x8000, 0x51, 16, true));
  queue(make_reth(q, kWriteOnly, e + 1, 16, 0x8010, 0x51, 16, true));
  queue(make_reth(bad, kWriteOnly, e, 16, 0x8000, 0x99, 16, true));   // bad R_Key: responder in error
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 3u);   // two ACKs and the NAK
  for (uint32_t rq : {q, bad, idle, q}) {
    hold_rack = true;
    rack_q = rq;
    drain();
    ASSERT_FALSE(HasFatalFailure());
  }
  ASSERT_EQ(task_log.size(), 5u) << "a re-ACK for a QP in error or not receiving was answered";
  expect_task(3, false, q, e + 1, kSynAck, 2);
  expect_task(4, false, q, e + 1, kSynAck, 2);
  EXPECT_EQ(stats.racks, 2u);
  EXPECT_EQ(stats.rack_ignored, 2u);
}

// A re-ACK event for a QP whose NAK PSN sequence error is outstanding (decision 116: NAKs of
// that kind are deferrable too) is answered with that NAK again, of the ePSN, not with an ACK
// that would leave the requester waiting for its timer; once the missing PSN arrives, with a
// plain ACK again.
TEST_F(RxEngBench, ReAckRepeatsAnOutstandingSequenceNak) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 3, e = 0x700;
  bring_up(q, kQpsRts, 2, kAccRemoteWrite, 4, 0, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x51, 4, kAccRemoteWrite, 0x8000, 0x1000, 0x4'0000ull});
  queue(make_reth(q, kWriteOnly, e + 2, 16, 0x8000, 0x51, 16, true));   // a gap: NAK of e
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 1u);
  expect_task(0, false, q, e, kSynPsn, 0);
  hold_rack = true;
  rack_q = q;
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 2u);
  expect_task(1, false, q, e, kSynPsn, 0);
  queue(make_reth(q, kWriteOnly, e, 16, 0x8000, 0x51, 16, true));
  drain();
  hold_rack = true;
  rack_q = q;
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 4u);
  expect_task(2, false, q, e, kSynAck, 1);
  expect_task(3, false, q, e, kSynAck, 1);
  EXPECT_EQ(stats.rack_naks, 1u);
}

// Responder queue reservations (decision 116): a request packet taken while srnic_resp_tx has
// no free slot (resv_room 0) is dropped unexecuted and counted (cnt_no_room): no MR check, no
// payload, no answer, its receive WQE given back, the ePSN unchanged, so the same request
// executes when it comes again with room; every packet taken with room holds a reservation
// (resv_take) that goes back at its write-back (resv_rel) unless its answer is a READ, RNR or
// fatal NAK, which brings it to srnic_resp_tx.
TEST_F(RxEngBench, RequestWithoutRoomDroppedUnexecuted) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 2, e = 0x300;
  bring_up(q, kQpsRts, 1, kAccRemoteRead | kAccRemoteWrite, 3, 0, e);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x41, 3, kAccRemoteRead | kAccRemoteWrite, 0, 0x10000, 0x10'0000ull});
  Knobs none;
  none.room = 0;
  queue(make_reth(q, kReadReq, e, 0, 0x40, 0x41, 0x100, false));
  queue(make_reth(q, kWriteOnly, e, 16, 0x80, 0x41, 16, true));
  drain(none);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(task_log.size(), 0u) << "a request taken without room was answered";
  EXPECT_EQ(n_mr, 0u);
  EXPECT_EQ(w_bytes, 0u);
  EXPECT_EQ(act_cnt.no_room, 2u);
  EXPECT_EQ(stats.resv_takes, 0u);
  EXPECT_EQ(st[q].epsn, e);
  queue(make_reth(q, kReadReq, e, 0, 0x40, 0x41, 0x100, false));            // READ: holds its slot
  queue(make_reth(q, kWriteOnly, e + 1, 16, 0x80, 0x41, 16, true));         // ACK: gives it back
  queue(make_reth(q, kWriteOnly, e + 2, 16, 0x80, 0x99, 16, true));         // bad R_Key: fatal NAK
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 3u);
  expect_task(0, true, q, e, kSynAck, 1);
  expect_task(1, false, q, e + 1, kSynAck, 2);
  expect_task(2, false, q, e + 2, kSynAcc, 2);
  EXPECT_EQ(stats.resv_takes, 3u);
  EXPECT_EQ(stats.resv_rels, 1u);
  EXPECT_EQ(stats.resv_tasks, 2u);
  EXPECT_EQ(act_cnt.no_room, 2u);
}

// Requester: responses for PSNs the QP never sent (at or after the next send PSN the send
// path reported) are dropped and counted, and start nothing; a PSN-sequence NAK may name the
// next PSN itself (a retry episode from there).
TEST_F(RxEngBench, ResponsesForPsnsNeverSentAreDropped) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 5;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0);  // MTU 512
  ASSERT_FALSE(HasFatalFailure());
  queue(make_ack(q, 0x100, kSynAck));   // sent: the stand-in sets the next send PSN to 0x1100
  drain();
  ASSERT_FALSE(HasFatalFailure());
  auto unsent = [&](uint8_t op, uint32_t psn, uint8_t syn, uint32_t len) {
    Pkt p = make(q, op, psn, len);
    p.f[kRmAethSyn] = syn;
    p.snd_mode = kSndNone;               // the send path reports nothing more
    queue(p);
  };
  unsent(kAck, 0x1100, kSynAck, 0);
  unsent(kAck, 0x1300, kSynInv, 0);
  unsent(kAck, 0x1200, 0x20 | 3, 0);     // RNR
  unsent(kRespOnly, 0x1180, kSynAck, 64);
  unsent(kAck, 0x1100, kSynPsn, 0);      // the expected PSN: a valid sequence NAK
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 2u);         // the first ACK and the sequence NAK's episode
  expect_cev(0, kCevAck, q, 0x100, 0);
  expect_retry(1, q, kRtSeq, 0x1100);
  EXPECT_EQ(act_cnt.psn_err, 4u);
  EXPECT_EQ(act_cnt.rx_nak, 1u);
  EXPECT_EQ(w_bytes, 0u);
  EXPECT_EQ(n_lk, 0u);
  expect_kicks(0, {{q, false}, {q, false}});  // ghosts restart no timer
}

// Requester: ACK/NAK events (an RNR NAK and a sequence NAK start a retry episode, in which
// a NAK only acknowledges); READ responses placed through one context lookup, READ_DONE and
// the context freed after the last; a lost response starts an episode (implied NAK) that
// keeps the QP's READ contexts until the rewind drops them (decision 47: a fence waits for
// them; the rewind requests the READs again); responses that do not fit their READ fail it.
TEST_F(RxEngBench, RequesterAckAndReadResponses) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 4;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0);  // MTU 512
  ASSERT_FALSE(HasFatalFailure());
  queue(make_ack(q, 0x100, kSynAck));
  queue(make_ack(q, 0x101, kSynInv));
  queue(make_ack(q, 0x102, 0x20 | 5));  // RNR: an episode
  queue(make_ack(q, 0x103, kSynPsn));   // in the episode: acknowledges 0x102
  queue(make_ack(q, 0x104, kSynAcc));   // fatal NAKs are not held back
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 5u);
  expect_cev(0, kCevAck, q, 0x100, 0);
  expect_cev(1, kCevNak, q, 0x101, kWcRemInvReqErr);
  expect_retry(2, q, kRtRnr, 0x102, 5);
  expect_cev(3, kCevAck, q, 0x102, 0);
  expect_cev(4, kCevNak, q, 0x104, kWcRemAccessErr);
  EXPECT_EQ(act_cnt.rx_nak, 4u);
  note(q);
  // READ 0x200..0x202 (1124 bytes) into 0x3FFF_FE08
  ASSERT_EQ(rdc_alloc(q, 0x200, 0x202, 0x3FFFFE08ull, 100), 0);
  queue(make(q, kRespFirst, 0x200, 512));
  queue(make(q, kRespFirst, 0x200, 512));  // duplicate: dropped
  queue(make(q, kRespMiddle, 0x201, 512));
  queue(make(q, kRespLast, 0x202, 100));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(n_lk, 1u);
  EXPECT_EQ(w_bytes, 1124u);
  EXPECT_EQ(aw_log.front().addr, 0x3FFFFE00ull);
  EXPECT_GE(rd_busy_writes, 4u) << "the READ responses' writes were not checked against rdq_busy";
  EXPECT_GE(rdq_hits, 4u) << "rdq_busy was never asked about a READ payload still to be written";
  ASSERT_EQ(cev_log.size(), 6u);
  expect_cev(5, kCevReadDone, q, 0x202, 0);
  EXPECT_FALSE(rdc[0].valid);
  const uint32_t q2 = 5, q3 = 6, q4 = 7, q5 = 8;
  for (uint32_t x : {q2, q3, q4, q5}) bring_up(x, kQpsRts, 2, 0, 0, 0, 0);
  ASSERT_FALSE(HasFatalFailure());
  // READ 0x300..0x303 loses its second response: an episode from 0x301; the rest is dropped
  ASSERT_EQ(rdc_alloc(q2, 0x300, 0x303, 0x10000, 7), 0);
  queue(make(q2, kRespFirst, 0x300, 512));
  queue(make(q2, kRespMiddle, 0x302, 512));
  queue(make(q2, kRespLast, 0x303, 7));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(w_bytes, 1124u + 512u);
  ASSERT_EQ(cev_log.size(), 7u);
  expect_retry(6, q2, kRtImplied, 0x301);
  EXPECT_TRUE(rdc[0].valid && rdc_hw[0].valid) << "the episode keeps the READ's context until the rewind";
  EXPECT_TRUE(st[q2].rwp);
  EXPECT_FALSE(st[q2].err);
  note(q2, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_FALSE(rdc[0].valid || rdc_hw[0].valid) << "the rewind drops the READ's context (it reads it again)";
  // READ 0x400 whose first response is lost, then the next READ's response: an episode from
  // 0x400 that keeps both contexts until the rewind; the next READ's data is not placed (episode)
  ASSERT_EQ(rdc_alloc(q3, 0x400, 0x401, 0x20000, 512), 0);
  ASSERT_EQ(rdc_alloc(q3, 0x402, 0x402, 0x30000, 20), 1);
  queue(make(q3, kRespMiddle, 0x401, 512));  // first response of 0x400.. missing
  queue(make(q3, kRespOnly, 0x402, 20));
  queue(make(q3, kRespOnly, 0x777, 20));     // no READ owns it: dropped (episode)
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(w_bytes, 1124u + 512u);
  EXPECT_EQ(n_lk, 3u);                       // q's and q2's first responses, q3's 0x401
  ASSERT_EQ(cev_log.size(), 8u);
  expect_retry(7, q3, kRtImplied, 0x400);
  EXPECT_TRUE(rdc[0].valid && rdc[1].valid && rdc_hw[0].valid && rdc_hw[1].valid)
      << "the episode keeps both contexts until the rewind";
  note(q3, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_FALSE(rdc[0].valid || rdc[1].valid || rdc_hw[0].valid || rdc_hw[1].valid) << "the rewind drops both";
  // a READ q3 sends after its rewind holds a context again
  ASSERT_EQ(rdc_alloc(q3, 0x403, 0x403, 0x30000, 20), 0);
  // Responses that do not fit their READ: not placed, BAD_RESP_ERR, context freed.
  // q4: a 100-byte READ answered with a full-MTU ONLY (412 bytes would land past the buffer)
  ASSERT_EQ(rdc_alloc(q4, 0x500, 0x500, 0x40000, 100), 1);
  queue(make(q4, kRespOnly, 0x500, 512));
  // q5: a 3-response READ whose LAST is one byte long where 40 are due
  ASSERT_EQ(rdc_alloc(q5, 0x600, 0x602, 0x50000, 40), 2);
  queue(make(q5, kRespFirst, 0x600, 512));
  queue(make(q5, kRespMiddle, 0x601, 512));
  queue(make(q5, kRespLast, 0x602, 1));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(w_bytes, 1124u + 512u + 1024u) << "only q5's FIRST and MIDDLE are placed";
  ASSERT_EQ(cev_log.size(), 10u);
  expect_cev(8, kCevNak, q4, 0x500, kWcBadRespErr);
  expect_cev(9, kCevNak, q5, 0x600, kWcBadRespErr);
  EXPECT_FALSE(rdc[1].valid);
  EXPECT_FALSE(rdc[2].valid);
  EXPECT_TRUE(rdc[0].valid && rdc_hw[0].valid);
  // the completion engine reports q3 in error: its remaining context is freed
  report_qerr(q3);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_FALSE(rdc[0].valid);
  EXPECT_FALSE(rdc_hw[0].valid);
}

// Moving a QP to RESET (from RTS, without re-initialising it) frees its READ contexts, as
// re-initialising does; other QP_MODIFYs (RTS->ERR) do not.
TEST_F(RxEngBench, ResetFreesReadContexts) {
  SRNIC_BENCH_TRACE();
  reset();
  bring_up(1, kQpsRts, 1, kAccRemoteWrite, 0, 0, 0x20);
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t before = ctx_flushes;
  qp_modify(1, kQpsErr, 1, kAccRemoteWrite, 0, 0, 0x20, false, false);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(ctx_flushes, before) << "RTS->ERR flushed the READ contexts (qerr does that, in order)";
  qp_modify(1, kQpsReset, 1, kAccRemoteWrite, 0, 0, 0x20, false, false);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(ctx_flushes, before + 1) << "QP->RESET did not free the READ contexts";
}

// Packets for QPs not in RTR/RTS (or beyond NUM_QPS) are dropped and counted; records
// marked drop are discarded silently.
TEST_F(RxEngBench, QpNotReadyDropped) {
  SRNIC_BENCH_TRACE();
  reset();
  bring_up(1, kQpsInit, 1, kAccRemoteWrite, 0, 0, 0);
  bring_up(2, kQpsRtr, 1, kAccRemoteWrite, 0, 0, 0x50);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x1, 0, kAccRemoteWrite, 0, 0x10000, 0x1000});
  queue(make_reth(1, kWriteOnly, 0, 64, 0, 1, 64, true));   // INIT
  queue(make_reth(9, kWriteOnly, 0, 64, 0, 1, 64, true));   // never configured (RESET)
  Pkt a = make(2, kAck, 0x50, 0);                            // RTR: responses need RTS
  a.f[kRmAethSyn] = kSynAck;
  queue(a);
  queue(make_reth(kQps + 3, kWriteOnly, 0, 64, 0, 1, 64, true));  // no such QP
  Pkt d = make_reth(2, kWriteOnly, 0x50, 64, 0, 1, 64, true);
  d.f[kRmDrop] = 1;
  queue(d);
  queue(make_reth(2, kWriteOnly, 0x50, 64, 0, 1, 64, true));  // the one that counts
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(act_cnt.drop_qp, 4u);
  EXPECT_EQ(w_bytes, 64u);
  ASSERT_EQ(task_log.size(), 1u);
  expect_task(0, false, 2, 0x50, kSynAck, 1);
  EXPECT_TRUE(cev_log.empty());
}

// A QP_MODIFY that re-initialises the receive state (here INIT->RTR with a new rq_psn)
// while a packet of that QP is being processed: the command waits until the packet has
// written its state back, so the packet cannot undo it.
// (srnic_qpc_ram's command port waits for the QP's lock, so the command lands after the
// write-back; before that the QP kept ePSN 0x101 instead of 0x500.)
TEST_F(RxEngBench, QpModifyDuringPacketKeepsNewState) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 6;
  bring_up(q, kQpsRtr, 1, kAccRemoteWrite, 2, 3, 0x100);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x60, 2, kAccLocalWrite | kAccRemoteWrite, 0x0, 0x10000, 0x80000});
  post_rwqe(q, {0x42, 0x100, 256, 0x60});
  queue(make(q, kSendOnly, 0x100, 50, false));
  Knobs k;
  k.lat = 60;  // the WQE's MR check answers late: the packet is in flight meanwhile
  k.lat_min = 10;
  for (int i = 0; i < 200 && n_mr == 0 && !HasFatalFailure(); ++i) cycle(k);
  ASSERT_EQ(n_mr, 1u);
  for (size_t i = 0; i < kQpCmd.widths.size(); ++i) set_bits(dut->qp_cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, 0);
  auto put = [&](size_t f, uint64_t v) { set_bits(dut->qp_cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
  put(kCQpn, q);
  put(kCState, kQpsRtr);
  put(kCMtu, 1);
  put(kCAccess, kAccRemoteWrite);
  put(kCPd, 2);
  put(kCRecvCqn, 3);
  put(kCRqPsn, 0x500);
  put(kCInitRqPsn, 1);
  put(kCMinRnr, kDefMinRnr);
  dut->qp_cmd_valid = 1;
  int waited = 0;
  for (; waited < 20 && mr_busy && !HasFatalFailure(); ++waited) {
    cycle(k);
    ASSERT_TRUE(dut->qp_cmd_valid) << "QP_MODIFY taken while a packet of its QP is in flight";
  }
  EXPECT_GT(waited, 5) << "the packet was not in flight long enough to race with the command";
  drain(k);  // the packet finishes and writes its state back; then the command lands
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(dut->qp_cmd_valid) << "QP_MODIFY never taken";
  ASSERT_EQ(cqe_log.size(), 1u);  // the packet itself completes
  st[q] = St{};
  st[q].epsn = 0x500;  // what the command set
  queue(make_reth(q, kWriteOnly, 0x500, 0, 0, 0, 0, true));  // zero length: nothing to place
  drain();
  ASSERT_EQ(task_log.size(), 1u);
  expect_task(0, false, q, 0x500, kSynAck, 1);
}

// A QP_MODIFY to RESET waits while a packet of its QP is in the packet FSM (decision 125):
// the work a packet makes is stamped with its QP's incarnation at the write-back, so the
// command is taken only once the packet has been written back. A SEND ONLY with immediate
// (AckReq) is held in the engine by the rqfetch stand-in withholding its receive WQE, then
// by a slow MR answer for the WQE's L_Key; the RESET offered meanwhile is not taken in any
// cycle while the packet is in the FSM, and is taken in the first cycles after; the bench
// advances the QP's incarnation at the take, and the packet's ACK and receive CQE (held in
// the placement stage until then) carry the incarnation from before the reset. A packet of
// another QP held the same way does not delay a RESET; packets of the reset QPs that arrive
// after their resets are dropped (cnt_drop_qp); the QP brought up again completes with its
// new incarnation. (Before, the RESET was taken at once and the CQE and ACK of the SEND
// that arrived before it carried the new incarnation.)
TEST_F(RxEngBench, ResetWaitsForThePacketInProcess) {
  SRNIC_BENCH_TRACE();
  reset();
  // q: reset while its SEND is held; o: a SEND held while a (no packet) is reset
  const uint32_t q = 4, o = 7, a = 10;
  bring_up(q, kQpsRts, 1, kAccRemoteWrite, 3, 0x44, 0x200);
  bring_up(o, kQpsRts, 1, kAccRemoteWrite, 3, 0x77, 0x700);
  bring_up(a, kQpsRtr, 1, kAccRemoteWrite, 3, 0xAA, 0xA00);
  ASSERT_FALSE(HasFatalFailure());
  gen_tab[q] = 15;  // the reset wraps it to 0
  gen_tab[o] = 6;
  gen_tab[a] = 9;
  add_mr({0x4C, 3, kAccLocalWrite | kAccRemoteWrite, 0x0, 0x10000, 0x9'0000});
  post_rwqe(q, {0x5E4D'0000'0004ull, 0x100, 256, 0x4C});
  post_rwqe(o, {0x5E4D'0000'0007ull, 0x800, 256, 0x4C});
  // the packet's ACK and CQE stay in the placement stage until the reset is taken
  Knobs hold;
  hold.task = hold.cqe = 0;
  // queues p (it consumes a receive WQE, which the stand-in withholds) and runs until the
  // engine has taken it and waits for that WQE
  auto queue_held = [&](Pkt p) {
    const uint64_t pops0 = pops;
    queue(std::move(p));
    ASSERT_EQ(wqe_fifo.size(), 1u) << "the stand-in fetched no receive WQE for the SEND";
    wqe_fifo.back().at = ~0ull;
    for (int i = 0; i < 100 && !pending.empty() && !HasFatalFailure(); ++i) cycle(hold);
    ASSERT_TRUE(pending.empty()) << "the SEND was not taken";
    for (int i = 0; i < 6 && !HasFatalFailure(); ++i) cycle(hold);
    ASSERT_TRUE(dut->busy_cls) << "the SEND is not held in the engine";
    ASSERT_EQ(pops, pops0) << "the withheld receive WQE was popped";
  };

  // ---- the reset QP's own packet: the RESET waits for its write-back
  Pkt sq = make(q, kSendOnlyImm, 0x200, 100, true);
  sq.f[kRmImm] = 0x0BAD'CAFE;
  queue_held(sq);
  ASSERT_FALSE(HasFatalFailure());
  const uint8_t g0 = gen_tab[q];
  offer_reset(q);
  bool early = false;  // taken while the packet waits for its WQE
  for (int i = 0; i < 40 && !HasFatalFailure(); ++i) {
    cycle(hold);
    if (resets_taken) {
      early = true;
      ADD_FAILURE() << "cycle " << rst_at << ": QP_MODIFY to RESET of QP " << q
                    << " taken while its SEND ONLY waits in the engine for its receive WQE ("
                    << i + 1 << " cycles after it was offered; busy_cls " << rst_busy << ")";
      break;
    }
  }
  ASSERT_FALSE(HasFatalFailure());
  wqe_fifo.front().at = 0;  // the WQE comes; its L_Key check answers late
  hold.lat_min = 20;
  int idle_before = 0;      // cycles with the packet FSM idle and the RESET still not taken
  for (int i = 0; i < 300 && rst_on && !HasFatalFailure(); ++i) {
    const bool busy = dut->busy_cls;
    const uint64_t n = resets_taken;
    cycle(hold);
    if (resets_taken == n && !busy) ++idle_before;
  }
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(rst_on) << "QP_MODIFY to RESET of QP " << q << " never taken";
  if (!early) {
    EXPECT_EQ(pops, 1u);
    EXPECT_EQ(n_mr, 1u);
    EXPECT_FALSE(rst_busy) << "cycle " << rst_at << ": RESET of QP " << q
                           << " taken while its SEND is still in the packet FSM";
    EXPECT_LE(idle_before, 2) << "the RESET of QP " << q << " waited " << idle_before
                              << " cycles after the packet's write-back";
    EXPECT_TRUE(task_log.empty() && cqe_log.empty()) << "the SEND's ACK or CQE came out before the reset";
  }
  EXPECT_EQ(unsigned(gen_tab[q]), unsigned((g0 + 1) & 15)) << "the bench did not advance the incarnation";
  drain();  // the ACK and the CQE come out after the reset, with the old incarnation
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cqe_log.size(), 1u);
  ASSERT_EQ(task_log.size(), 1u);
  EXPECT_EQ(cqe_log[0].wr_id, 0x5E4D'0000'0004ull);
  EXPECT_EQ(cqe_log[0].status, 0);
  EXPECT_EQ(cqe_log[0].byte_len, 100u);
  EXPECT_EQ(cqe_log[0].imm, 0x0BAD'CAFEu);
  EXPECT_EQ(unsigned(cqe_log[0].gen), unsigned(g0))
      << "the receive CQE of a SEND that arrived before the reset carries the new incarnation";
  expect_task(0, false, q, 0x200, kSynAck, 1);
  EXPECT_EQ(unsigned(task_log[0].gen), unsigned(g0))
      << "the ACK of a SEND that arrived before the reset carries the new incarnation";
  EXPECT_EQ(w_bytes, 100u);

  // ---- another QP's packet does not delay a RESET
  hold.lat_min = 0;
  queue_held(make(o, kSendOnly, 0x700, 64, true));
  ASSERT_FALSE(HasFatalFailure());
  const uint8_t go = gen_tab[o], ga = gen_tab[a];
  offer_reset(a);
  int waited = 0;
  for (; waited < 4 && rst_on && !HasFatalFailure(); ++waited) cycle(hold);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_FALSE(rst_on) << "QP_MODIFY to RESET of QP " << a << " not taken within 4 cycles while a packet of QP "
                       << o << " waits in the engine";
  EXPECT_TRUE(rst_busy) << "the packet of QP " << o << " was no longer in the engine when the RESET was taken";
  EXPECT_EQ(unsigned(gen_tab[a]), unsigned((ga + 1) & 15));
  wqe_fifo.front().at = 0;
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cqe_log.size(), 2u);
  EXPECT_EQ(cqe_log[1].qpn, o);
  EXPECT_EQ(cqe_log[1].wr_id, 0x5E4D'0000'0007ull);
  EXPECT_EQ(unsigned(cqe_log[1].gen), unsigned(go)) << "QP " << o << "'s incarnation changed";
  ASSERT_EQ(task_log.size(), 2u);
  expect_task(1, false, o, 0x700, kSynAck, 1);

  // ---- packets of the reset QPs after their resets: dropped as packets of QPs in RESET
  const uint64_t drops = act_cnt.drop_qp;
  queue(make(q, kSendOnly, 0x201, 32, true));   // the PSN the old incarnation expected next
  queue(make_reth(a, kWriteOnly, 0xA00, 64, 0x100, 0x4C, 64, true));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(act_cnt.drop_qp - drops, 2u) << "packets of QPs in RESET not dropped";
  EXPECT_EQ(cqe_log.size(), 2u);
  EXPECT_EQ(task_log.size(), 2u);
  EXPECT_EQ(w_bytes, 164u);
  EXPECT_EQ(pops, 2u);

  // ---- q brought up again: its next SEND completes with the new incarnation
  bring_up(q, kQpsRts, 1, kAccRemoteWrite, 3, 0x44, 0x300);
  ASSERT_FALSE(HasFatalFailure());
  post_rwqe(q, {0x5E4D'0000'0104ull, 0x200, 256, 0x4C});
  queue(make(q, kSendOnly, 0x300, 16, true));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cqe_log.size(), 3u);
  EXPECT_EQ(cqe_log[2].wr_id, 0x5E4D'0000'0104ull);
  EXPECT_EQ(cqe_log[2].idx, 0);
  EXPECT_EQ(unsigned(cqe_log[2].gen), unsigned((g0 + 1) & 15));
  ASSERT_EQ(task_log.size(), 3u);
  expect_task(2, false, q, 0x300, kSynAck, 1);
  EXPECT_EQ(resets_taken, 2u);
  EXPECT_EQ(stale_pulses, 0u);
}

// ---------------------------------------------------------------- go-back-N, directed

// A NAK PSN sequence error starts an episode (RT_SEQ at the NAK's PSN). Until the send path's
// note: the QP's READ responses are dropped (no lookup, nothing placed), a sequence or RNR
// NAK only acknowledges what is before its PSN, ACKs and fatal NAKs act as usual, timeouts
// are ignored; another QP's episode is its own. After the note an RNR NAK (RT_RNR with its
// timer code) and a timeout (RT_TIMEOUT at the next send PSN) start the next ones. An ACK
// beyond a READ without responses (one sent during the episode) acknowledges only. After the
// note a sequence NAK starts an episode once an ACK showed in-order progress.
TEST_F(RxEngBench, RetryEpisodeOneAtATime) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 3, o = 4;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);  // MTU 512, next send PSN 0x1000
  bring_up(o, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);
  ASSERT_FALSE(HasFatalFailure());
  queue(make_ack(q, 0xE00, kSynAck));
  queue(make_ack(q, 0xE10, kSynPsn));      // the episode
  drain();
  ASSERT_EQ(rdc_alloc(q, 0xF00, 0xF01, 0x8000, 100), 0);  // a READ sent before the rewind is applied
  queue(make(q, kRespFirst, 0xF00, 512));  // dropped
  queue(make_ack(q, 0xE20, kSynPsn));      // acknowledges up to 0xE1F
  queue(make_ack(q, 0xE21, 0x20 | 7));     // acknowledges up to 0xE20
  queue(make_ack(q, 0xE22, kSynAck));
  queue(make_ack(q, 0xF02, kSynAck));      // beyond the READ: no second episode
  queue(make_ack(o, 0xE30, 0x20 | 9));     // o's own episode
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(n_lk, 0u);
  EXPECT_EQ(w_bytes, 0u);
  timeout(q);  // ignored: an episode is open
  timeout(o);
  note(q);     // q's episode is over (no rewind: the READ keeps its context), o's is not
  timeout(o);
  ASSERT_EQ(cev_log.size(), 7u);
  queue(make(q, kRespFirst, 0xF00, 512));
  queue(make(q, kRespLast, 0xF01, 100));
  queue(make_ack(q, 0xF05, 0x20 | 0x11));
  drain();
  timeout(q);  // ignored
  note(q);
  timeout(q);  // from the next send PSN
  queue(make_ack(q, 0xF06, kSynPsn));      // acknowledges up to 0xF05
  queue(make(q, kRespOnly, 0xF06, 10));    // dropped without a lookup
  drain();
  note(q);
  note(o);
  queue(make_ack(q, 0xFFF, kSynAck));      // everything sent is acknowledged: the timer stops
  queue(make_ack(o, 0xE3F, kSynAck));      // o's in-order progress after its rewind
  queue(make_ack(o, 0xE40, kSynPsn));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 14u);
  expect_cev(0, kCevAck, q, 0xE00, 0);
  expect_retry(1, q, kRtSeq, 0xE10);
  expect_cev(2, kCevAck, q, 0xE1F, 0);
  expect_cev(3, kCevAck, q, 0xE20, 0);
  expect_cev(4, kCevAck, q, 0xE22, 0);
  expect_cev(5, kCevAck, q, 0xF02, 0);
  expect_retry(6, o, kRtRnr, 0xE30, 9);
  expect_cev(7, kCevReadDone, q, 0xF01, 0);
  expect_retry(8, q, kRtRnr, 0xF05, 0x11);
  expect_retry(9, q, kRtTimeout, 0x1000);
  expect_cev(10, kCevAck, q, 0xF05, 0);
  expect_cev(11, kCevAck, q, 0xFFF, 0);
  expect_cev(12, kCevAck, o, 0xE3F, 0);
  expect_retry(13, o, kRtSeq, 0xE40);
  EXPECT_EQ(n_lk, 1u);
  EXPECT_EQ(w_bytes, 612u);
  EXPECT_EQ(stats.tmo_ignored, 4u);
  EXPECT_EQ(act_cnt.rx_nak, 7u);
  EXPECT_EQ(act_cnt.psn_err, 0u);
  expect_kicks(0, {{q, false}, {q, false}, {q, false}, {q, false}, {q, false}, {q, false}, {o, false},
                   {q, false}, {q, false}, {q, false}, {q, false}, {q, true}, {o, false}, {o, false}});
}

// An RNR NAK's episode carries the NAK's timer code (AETH bits 4..0, bit 7 ignored) and its PSN.
TEST_F(RxEngBench, RnrNakCodeInRetry) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 2;
  bring_up(q, kQpsRts, 1, 0, 0, 0, 0, kDefMinRnr, 0x500);
  ASSERT_FALSE(HasFatalFailure());
  const uint8_t codes[] = {0, 1, 0x0E, 0x10, 0x1F, uint8_t(rng.below(32))};
  for (size_t i = 0; i < 6; ++i) {
    queue(make_ack(q, 0x400 + uint32_t(i), uint8_t(0x20 | codes[i])));
    drain();
    note(q);
  }
  queue(make_ack(q, 0x410, 0xB3));  // bit 7 set: RNR, code 0x13
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 7u);
  for (size_t i = 0; i < 6; ++i) expect_retry(i, q, kRtRnr, 0x400 + uint32_t(i), codes[i]);
  expect_retry(6, q, kRtRnr, 0x410, 0x13);
}

// Implied NAK: an ACK beyond a READ that is not complete starts an episode (from the READ's
// first missing response when it is in progress, else after the ACK's PSN: the READ is found
// through the implied-NAK query); an ACK inside a READ's range or at its last PSN is none,
// nor is an ACK 2^23 after its last PSN (before it in serial arithmetic). A sequence or RNR
// NAK beyond a partly placed READ resends from its first missing response; a NAK inside it,
// or beyond a READ without any response, from the NAK's PSN.
TEST_F(RxEngBench, ImpliedNakAndNaksBeyondReads) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 6;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x2000);
  ASSERT_FALSE(HasFatalFailure());
  // a READ in progress
  ASSERT_EQ(rdc_alloc(q, 0x100, 0x103, 0x10000, 10), 0);
  queue(make(q, kRespFirst, 0x100, 512));
  queue(make(q, kRespMiddle, 0x101, 512));
  queue(make_ack(q, 0x101, kSynAck));  // inside
  queue(make_ack(q, 0x103, kSynAck));  // at its last PSN
  queue(make_ack(q, 0x104, kSynAck));  // beyond: resend from 0x102
  drain();
  note(q, true);
  // a READ without any response
  ASSERT_EQ(rdc_alloc(q, 0x200, 0x201, 0x20000, 10), 0);
  queue(make_ack(q, 0x200, kSynAck));
  queue(make_ack(q, 0x201, kSynAck));
  queue(make_ack(q, 0x202, kSynAck));  // beyond: everything up to 0x202 acknowledged but the READ
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(rdc[0].valid && rdc_hw[0].valid) << "the episode keeps the READ's context until the rewind";
  note(q, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_FALSE(rdc[0].valid || rdc_hw[0].valid) << "the rewind drops the READ's context";
  // the rewind requests the READ again
  ASSERT_EQ(rdc_alloc(q, 0x200, 0x201, 0x20000, 10), 0);
  queue(make_ack(q, 0x1FF, kSynAck));  // in-order progress after the rewind
  queue(make_ack(q, 0x205, kSynPsn));  // beyond it: from the NAK's PSN
  drain();
  note(q, true);
  // partly placed, then a sequence NAK beyond it
  ASSERT_EQ(rdc_alloc(q, 0x300, 0x303, 0x30000, 10), 0);
  queue(make(q, kRespFirst, 0x300, 512));
  queue(make_ack(q, 0x306, kSynPsn));
  drain();
  note(q, true);
  // partly placed, an RNR NAK inside it; another, an RNR NAK beyond it
  ASSERT_EQ(rdc_alloc(q, 0x400, 0x403, 0x40000, 10), 0);
  queue(make(q, kRespFirst, 0x400, 512));
  queue(make(q, kRespMiddle, 0x401, 512));
  queue(make_ack(q, 0x402, 0x20 | 3));
  drain();
  note(q, true);
  ASSERT_EQ(rdc_alloc(q, 0x500, 0x501, 0x50000, 10), 0);
  queue(make(q, kRespFirst, 0x500, 512));
  queue(make_ack(q, 0x510, 0x20 | 4));
  drain();
  note(q, true);
  // the half window: 0x800601 is 2^23 after 0x601, so not after it; 0x800600 is
  ASSERT_EQ(rdc_alloc(q, 0x600, 0x601, 0x60000, 10), 0);
  set_snd(q, 0x800602);
  queue(make_ack(q, 0x800601, kSynAck));
  queue(make_ack(q, 0x800600, kSynAck));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 13u);
  expect_cev(0, kCevAck, q, 0x101, 0);
  expect_cev(1, kCevAck, q, 0x103, 0);
  expect_retry(2, q, kRtImplied, 0x102);
  expect_cev(3, kCevAck, q, 0x200, 0);
  expect_cev(4, kCevAck, q, 0x201, 0);
  expect_retry(5, q, kRtImplied, 0x203);
  expect_cev(6, kCevAck, q, 0x1FF, 0);
  expect_retry(7, q, kRtSeq, 0x205);
  expect_retry(8, q, kRtSeq, 0x301);
  expect_retry(9, q, kRtRnr, 0x402, 3);
  expect_retry(10, q, kRtRnr, 0x501, 4);
  expect_cev(11, kCevAck, q, 0x800601, 0);
  expect_retry(12, q, kRtImplied, 0x800601);
  EXPECT_EQ(w_bytes, 1024u + 512u + 1024u + 512u);
  EXPECT_EQ(stats.bq_implied, 2u);
}

// A fatal NAK beyond a READ without all its responses (the responder's QP is in ERR: the READ
// will never get them): the event marks it, from the READ's first PSN when it is the READ in
// progress, else from the NAK's PSN less 2^22 (any READ at the head); beyond READs that are
// complete it carries nothing. Decision 87.
TEST_F(RxEngBench, FatalNakBeyondAnUnfinishedRead) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  // the last event: the NAK of QP q at psn, marked (from psn2 on) or not
  const auto expect_nak = [&](uint32_t q, uint32_t psn, uint8_t status, bool marked, uint32_t psn2) {
    ASSERT_FALSE(cev_log.empty());
    const size_t i = cev_log.size() - 1;
    expect_cev(i, kCevNak, q, psn, status);
    EXPECT_EQ(cev_log[i].has_rd, marked) << "event " << i;
    if (marked) EXPECT_EQ(cev_log[i].psn2, psn2 & kMask) << "event " << i;
  };
  // QP 6: a partly placed READ, then a fatal NAK beyond it
  bring_up(6, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x2000);
  ASSERT_EQ(rdc_alloc(6, 0x100, 0x103, 0x10000, 10), 0);
  queue(make(6, kRespFirst, 0x100, 512));
  queue(make_ack(6, 0x105, kSynInv));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 1u);
  expect_nak(6, 0x105, kWcRemInvReqErr, true, 0x100);
  // QP 7: a READ without responses, then a fatal NAK beyond it
  bring_up(7, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x3000);
  ASSERT_GE(rdc_alloc(7, 0x200, 0x201, 0x20000, 10), 0);
  queue(make_ack(7, 0x203, kSynAcc));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 2u);
  expect_nak(7, 0x203, kWcRemAccessErr, true, 0x203u - 0x400000u);
  // QP 8: its READ complete, then a fatal NAK: nothing marked
  bring_up(8, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x4000);
  ASSERT_GE(rdc_alloc(8, 0x300, 0x300, 0x30000, 10), 0);
  queue(make(8, kRespOnly, 0x300, 10));
  queue(make_ack(8, 0x302, kSynOp));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  expect_nak(8, 0x302, kWcRemOpErr, false, 0);
}

// READ responses: a gap starts an episode from the first missing response (the rest is
// dropped); a partial re-read (a new READ context from that PSN) takes the old READ's MIDDLE
// at its first PSN (the same bytes; a responder replaying the original READ answers so), then
// drops the re-read's own FIRST there as a duplicate, drops a response whose opcode fits no
// READ's position as stale, and fails with BAD_RESP_ERR on the right opcode with a wrong length. A READ's first response missing
// (its lookup finds the READ, not at its first PSN): an episode from its first PSN; a later
// READ's response while one is unfinished: from the unfinished one's first missing PSN.
TEST_F(RxEngBench, ReadResponseEpisodesAndStaleResponses) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 7, q2 = 8, q3 = 9;
  for (uint32_t x : {q, q2, q3}) bring_up(x, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(rdc_alloc(q, 0x100, 0x104, 0x10000, 40), 0);
  queue(make(q, kRespFirst, 0x100, 512));
  queue(make(q, kRespMiddle, 0x101, 512));
  queue(make(q, kRespMiddle, 0x103, 512));  // 0x102 lost
  queue(make(q, kRespLast, 0x104, 40));     // dropped
  drain();
  note(q, true);
  ASSERT_EQ(rdc_alloc(q, 0x102, 0x104, 0x10400, 40), 0);  // the re-read of the rest
  queue(make(q, kRespMiddle, 0x102, 512));  // the old READ's: placed at 0x10400
  queue(make(q, kRespFirst, 0x102, 512));   // the re-read's own: a duplicate now, dropped
  queue(make(q, kRespOnly, 0x103, 512));    // another request's opcode: stale
  queue(make(q, kRespMiddle, 0x103, 100));  // MIDDLE with 100 bytes: the READ fails
  queue(make(q, kRespLast, 0x104, 40));     // dropped: the QP failed
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(w_bytes, 1536u);
  EXPECT_EQ(n_lk, 2u);
  EXPECT_EQ(stats.stale, 1u);
  EXPECT_TRUE(st[q].err);
  EXPECT_FALSE(rdc[0].valid);
  ASSERT_EQ(rdc_alloc(q2, 0x200, 0x202, 0x20000, 10), 0);
  ASSERT_EQ(rdc_alloc(q2, 0x203, 0x203, 0x30000, 10), 1);
  queue(make(q2, kRespMiddle, 0x201, 512));  // the READ's first response missing
  drain();
  note(q2, true);
  ASSERT_EQ(rdc_alloc(q2, 0x210, 0x212, 0x20000, 30), 0);
  ASSERT_EQ(rdc_alloc(q2, 0x213, 0x213, 0x30000, 10), 1);
  queue(make(q2, kRespFirst, 0x210, 512));
  queue(make(q2, kRespOnly, 0x213, 10));     // the next READ's: 0x211 and 0x212 lost
  drain();
  note(q2, true);
  ASSERT_EQ(rdc_alloc(q3, 0x300, 0x301, 0x40000, 60), 0);
  queue(make(q3, kRespLast, 0x300, 60));     // stale at the lookup (LAST at the READ's first PSN)
  queue(make(q3, kRespFirst, 0x300, 100));   // FIRST, but not the path MTU long: fails
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 5u);
  expect_retry(0, q, kRtImplied, 0x102);
  expect_cev(1, kCevNak, q, 0x102, kWcBadRespErr);
  expect_retry(2, q2, kRtImplied, 0x200);
  expect_retry(3, q2, kRtImplied, 0x211);
  expect_cev(4, kCevNak, q3, 0x300, kWcBadRespErr);
  EXPECT_EQ(w_bytes, 1536u + 512u);
  EXPECT_EQ(stats.stale, 2u);
  EXPECT_FALSE(rdc[0].valid) << "the failed READ's context is freed";
  EXPECT_EQ(act_cnt.psn_err, 0u);
}

// A partial re-read answered the way Linux rxe answers it: the responder replays the original
// READ from the requested PSN, so the re-read's responses are MIDDLE ... LAST (LAST alone for a
// re-read of the last response). Every byte lands at its offset and the READ completes; the
// same re-read answered as a new READ (FIRST ... LAST, srnic's responder) does too.
TEST_F(RxEngBench, PartialReReadAnsweredAsContinuation) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 7, q2 = 8;
  for (uint32_t x : {q, q2}) bring_up(x, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);
  ASSERT_FALSE(HasFatalFailure());
  for (const bool replay : {true, false}) {
    const uint32_t x = replay ? q : q2;
    const uint64_t pa = replay ? 0x10000 : 0x50000;
    ASSERT_EQ(rdc_alloc(x, 0x100, 0x104, pa, 40), 0);
    queue(make(x, kRespFirst, 0x100, 512));
    queue(make(x, kRespMiddle, 0x101, 512));
    queue(make(x, kRespMiddle, 0x103, 512));  // 0x102 lost: an episode from 0x102
    drain();
    note(x, true);
    ASSERT_EQ(rdc_alloc(x, 0x102, 0x104, pa + 1024, 40), 0);  // the re-read of the rest
    queue(make(x, replay ? kRespMiddle : kRespFirst, 0x102, 512));
    queue(make(x, kRespMiddle, 0x103, 512));
    queue(make(x, kRespLast, 0x104, 40));
    drain();
    ASSERT_FALSE(HasFatalFailure());
  }
  // a one-response re-read (only the last response lost) answered with LAST
  ASSERT_EQ(rdc_alloc(q, 0x105, 0x106, 0x20000, 7), 0);
  ASSERT_EQ(rdc_alloc(q, 0x107, 0x107, 0x30000, 10), 1);
  queue(make(q, kRespFirst, 0x105, 512));
  queue(make(q, kRespOnly, 0x107, 10));  // the next READ's: 0x106 lost, an episode from 0x106
  drain();
  note(q, true);
  ASSERT_EQ(rdc_alloc(q, 0x106, 0x106, 0x20200, 7), 0);
  ASSERT_EQ(rdc_alloc(q, 0x107, 0x107, 0x30000, 10), 1);
  queue(make(q, kRespLast, 0x106, 7));
  queue(make(q, kRespOnly, 0x107, 10));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(stats.stale, 0u);
  EXPECT_EQ(w_bytes, 2u * (4u * 512u + 40u) + 512u + 7u + 10u);
  EXPECT_FALSE(st[q].err);
  EXPECT_FALSE(st[q2].err);
  size_t done = 0;
  for (size_t i = 0; i < cev_log.size(); ++i) done += cev_log[i].kind == kCevReadDone;
  EXPECT_EQ(done, 4u) << "every READ completes";
}

// Local ACK timeouts: an episode from the next send PSN (a READ in progress is forgotten; its
// context stays until the rewind drops it, then its next response finds no READ, dropped and
// counted); none
// during an episode, nor for a QP in RTR, INIT, RESET, failed (qerr) or moved to ERR. The next
// send PSN is the one the engine reads at the take: a send reported one cycle before the
// take is not in it yet, one two cycles before is.
TEST_F(RxEngBench, TimeoutEpisodes) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 10;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x777);
  ASSERT_FALSE(HasFatalFailure());
  timeout(q);
  timeout(q);  // ignored
  note(q);
  ASSERT_EQ(rdc_alloc(q, 0x700, 0x702, 0x70000, 50), 0);
  queue(make(q, kRespFirst, 0x700, 512));
  drain();
  timeout(q);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(rdc[0].valid && rdc_hw[0].valid) << "the episode keeps the READ's context until the rewind";
  note(q, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_FALSE(rdc[0].valid || rdc_hw[0].valid) << "the rewind drops the READ's context";
  queue(make(q, kRespMiddle, 0x701, 512));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(n_lk, 2u);
  EXPECT_EQ(act_cnt.psn_err, 1u);
  ASSERT_EQ(cev_log.size(), 2u);
  expect_retry(0, q, kRtTimeout, 0x777);
  expect_retry(1, q, kRtTimeout, 0x777);
  EXPECT_EQ(stats.tmo_ignored, 1u);
  const std::vector<uint32_t> idle = non_senders();
  ASSERT_FALSE(HasFatalFailure());
  for (uint32_t x : idle) timeout(x);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(cev_log.size(), 2u);
  EXPECT_EQ(stats.tmo_ignored, 6u);
  // the send race of the next send PSN
  auto tmo_at = [&](uint64_t x) {
    while (dut.cycle() < x && !HasFatalFailure()) cycle(Knobs{});
    hold_tmo = true;
    tmo_q = q;
    cycle(Knobs{});
    ASSERT_FALSE(hold_tmo);
    EXPECT_EQ(take_log.back().cyc, x) << "the timeout was not taken when offered";
    drain();
  };
  uint64_t x = dut.cycle() + 10;
  snd_sched[x - 1] = {q, 0x900};
  tmo_at(x);
  note(q);
  x = dut.cycle() + 10;
  snd_sched[x - 2] = {q, 0x901};
  tmo_at(x);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 4u);
  expect_retry(2, q, kRtTimeout, 0x777);
  expect_retry(3, q, kRtTimeout, 0x901);
}

// The end of an RNR wait (tmo_rnr): with no episode open it opens one at once, a timeout
// episode marked RTC_RNR_END from the next send PSN (rwp: the QP's READ responses are then
// dropped). During an episode it is kept (rxp; no event, two ends are one), a plain timeout
// is dropped, and the note opens the kept one at once (a CEV_RETRY right after the note, from
// the next send PSN read for the note, not the one at the expiry) and clears rxp (the next
// note opens nothing). A QP that does not send (RTR, INIT, RESET, failed by qerr, moved to
// ERR) ignores it, and a kept one is dropped at the note when the QP failed or left RTS
// meanwhile. tmo_rnr is random whenever no expiry is offered.
TEST_F(RxEngBench, RnrWaitEndEpisodes) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 5;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1234);
  ASSERT_FALSE(HasFatalFailure());
  timeout(q, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(st[q].rwp);
  note(q, true);
  timeout(q);                          // a plain timeout: its own episode (code 0)
  timeout(q, true);                    // kept
  timeout(q, true);                    // kept (the same)
  timeout(q);                          // dropped
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(st[q].rxp);
  ASSERT_EQ(cev_log.size(), 2u);
  set_snd(q, 0x1300);                  // the send path moved on meanwhile
  note(q, true);                       // opens the kept RNR end
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 3u);
  EXPECT_TRUE(st[q].rwp);
  EXPECT_FALSE(st[q].rxp);
  EXPECT_EQ(take_log.back().kind, kTakeNote) << "the episode must come from the note";
  ASSERT_EQ(rdc_alloc(q, 0x1300, 0x1300, 0x9000, 10), 0);
  queue(make(q, kRespOnly, 0x1300, 10));  // dropped: the episode the note opened is open
  drain();
  EXPECT_EQ(n_lk, 0u);
  EXPECT_EQ(w_bytes, 0u);
  note(q, true);                       // ends it: nothing kept, nothing opened
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(cev_log.size(), 3u);
  timeout(q);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 4u);
  expect_retry(0, q, kRtTimeout, 0x1234, kRtcRnrEnd);
  expect_retry(1, q, kRtTimeout, 0x1234);
  expect_retry(2, q, kRtTimeout, 0x1300, kRtcRnrEnd);
  expect_retry(3, q, kRtTimeout, 0x1300);
  EXPECT_EQ(stats.rnr_ends, 1u);
  EXPECT_EQ(stats.rxp_kept, 2u);
  EXPECT_EQ(stats.rxp_opened, 1u);
  EXPECT_EQ(stats.tmo_ignored, 1u);
  const std::vector<uint32_t> idle = non_senders();
  ASSERT_FALSE(HasFatalFailure());
  for (uint32_t x : idle) timeout(x, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(cev_log.size(), 4u);
  EXPECT_EQ(stats.rnr_end_ignored, 5u);
  for (uint32_t x : idle) EXPECT_FALSE(st[x].rxp || st[x].rwp) << "QP " << x;
  // a kept end dropped at the note: the QP failed (qerr), or the host moved it to ERR
  const uint32_t f = 6, g = 7;
  bring_up(f, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x500);
  bring_up(g, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x600);
  ASSERT_FALSE(HasFatalFailure());
  queue(make_ack(f, 0x4FF, 0x20 | 3));  // RNR NAK: an episode
  queue(make_ack(g, 0x5FF, kSynPsn));   // sequence NAK: an episode
  drain();
  timeout(f, true);
  timeout(g, true);
  report_qerr(f);
  qp_modify(g, kQpsErr, 2, 0, 0, 0, 0, false, false);
  note(f);
  note(g);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 6u);
  expect_retry(4, f, kRtRnr, 0x4FF, 3);
  expect_retry(5, g, kRtSeq, 0x5FF);
  EXPECT_EQ(stats.rxp_kept, 4u);
  EXPECT_EQ(stats.rxp_dropped, 2u);
  for (uint32_t x : {f, g}) EXPECT_FALSE(st[x].rxp || st[x].rwp) << "QP " << x;
}

// A duplicate READ request is executed again from its own PSN, address and length (the
// R_Key checked again), at the current MSN; it changes nothing: the expected PSN, the MSN
// and the sequence NAK state stay, so the next new request is processed as before. A
// duplicate READ refused by the R_Key, the bounds, the QP's access or with a payload is
// dropped silently (no NAK, the responder does not fail).
TEST_F(RxEngBench, DuplicateReadExecutedAgain) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 1, q2 = 2, e = 0x800;
  bring_up(q, kQpsRtr, 1, kAccRemoteRead | kAccRemoteWrite, 3, 0, e);  // MTU 256
  bring_up(q2, kQpsRtr, 1, kAccRemoteWrite, 3, 0, e);
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t pa = 0x1234'5678'9ABCull;
  add_mr({0x31, 3, kAccRemoteRead | kAccRemoteWrite, 0xA000, 0x2000, pa});
  queue(make_reth(q, kReadReq, e, 0, 0xA010, 0x31, 3000));            // 12 packets
  queue(make_reth(q, kWriteOnly, e + 12, 0, 0, 0, 0, true));
  queue(make_reth(q, kWriteOnly, e + 20, 0, 0, 0, 0, true));          // gap: NAK
  queue(make_reth(q, kReadReq, e, 0, 0xA010, 0x31, 3000));            // duplicate: again
  queue(make_reth(q, kReadReq, e + 5, 0, 0xA510, 0x31, 1720));        // a re-read of the rest
  queue(make_reth(q, kReadReq, e + 1, 0, 0, 0, 0));                   // zero length
  queue(make_reth(q, kReadReq, e + 2, 0, 0xA010, 0x99, 100));         // bad R_Key: dropped
  queue(make_reth(q, kReadReq, e + 3, 0, 0xBF00, 0x31, 0x200));       // out of bounds: dropped
  queue(make_reth(q, kReadReq, e + 4, 8, 0xA010, 0x31, 16));          // with a payload: dropped
  queue(make_reth(q, kWriteOnly, e + 21, 0, 0, 0, 0, true));          // gap: no second NAK
  queue(make_reth(q, kWriteOnly, e + 13, 0, 0, 0, 0, true));          // the next new request
  queue(make_reth(q2, kWriteOnly, e, 0, 0, 0, 0, true));
  queue(make_reth(q2, kReadReq, e - 1, 0, 0xA010, 0x31, 16));         // no remote-read right: dropped
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 8u);
  expect_task(0, true, q, e, kSynAck, 1);
  EXPECT_EQ(task_log[0].addr, pa + 0x10);
  EXPECT_EQ(task_log[0].len, 3000u);
  expect_task(1, false, q, e + 12, kSynAck, 2);
  expect_task(2, false, q, e + 13, kSynPsn, 2);
  expect_task(3, true, q, e, kSynAck, 2);
  EXPECT_EQ(task_log[3].addr, pa + 0x10);
  EXPECT_EQ(task_log[3].len, 3000u);
  expect_task(4, true, q, e + 5, kSynAck, 2);
  EXPECT_EQ(task_log[4].addr, pa + 0x510);
  EXPECT_EQ(task_log[4].len, 1720u);
  EXPECT_EQ(task_log[4].mtu, 1);
  expect_task(5, true, q, e + 1, kSynAck, 2);
  EXPECT_EQ(task_log[5].addr, 0u);
  EXPECT_EQ(task_log[5].len, 0u);
  expect_task(6, false, q, e + 13, kSynAck, 3);
  expect_task(7, false, q2, e, kSynAck, 1);
  EXPECT_EQ(n_mr, 5u);
  EXPECT_EQ(act_cnt.dup, 7u);
  EXPECT_EQ(act_cnt.psn_err, 2u);
  EXPECT_EQ(act_cnt.access_err, 2u);
  EXPECT_EQ(stats.dup_rd, 3u);
  EXPECT_EQ(stats.dup_rd_drop, 4u);
  EXPECT_EQ(st[q].epsn, e + 14);
  EXPECT_FALSE(st[q].err || st[q2].err);
  EXPECT_EQ(w_bytes, 0u);
}

// RNR NAKs carry the QP's min_rnr timer code (qp_cmd.min_rnr, taken with every QP_MODIFY):
// SEND ONLY, WRITE ONLY with immediate (with and without data) and WRITE LAST with immediate
// finding no receive WQE.
TEST_F(RxEngBench, RnrNakCarriesMinRnr) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint8_t mins[] = {0, 1, 0x12, 0x1F};
  const uint32_t e = 0x40;
  add_mr({0x10, 1, kAccRemoteWrite, 0x0, 0x100000, 0x40000});
  for (uint32_t i = 0; i < 4; ++i) bring_up(3 + i, kQpsRtr, 1, kAccRemoteWrite, 1, 0, e, mins[i]);
  ASSERT_FALSE(HasFatalFailure());
  for (uint32_t i = 0; i < 4; ++i) {
    const uint32_t q = 3 + i;
    queue(make(q, kSendOnly, e, 16, true));
    queue(make_reth(q, kWriteOnlyImm, e, 8, 0x100, 0x10, 8, true));
    queue(make_reth(q, kWriteOnlyImm, e, 0, 0, 0, 0, true));
    queue(make_reth(q, kWriteFirst, e, 256, 0x100, 0x10, 512));
    queue(make(q, kWriteLastImm, e + 1, 256, true));
  }
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 16u);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(unsigned(task_log[i].syn), 0x20u | mins[i / 4]) << "task " << i;
    EXPECT_EQ(task_log[i].psn, e + (i % 4 == 3)) << "task " << i;
  }
  // a later QP_MODIFY (RTR->RTS) brings a new code
  qp_modify(4, kQpsRts, 1, kAccRemoteWrite, 1, 0, e, false, false, 0x07, 0x100);
  queue(make(4, kWriteLastImm, e + 1, 256, true));
  drain();
  ASSERT_EQ(task_log.size(), 17u);
  expect_task(16, false, 4, e + 1, 0x27, 0);
}

// Timer kicks: one per accepted ACK/NAK of a live QP and per placed READ response, STOP when
// everything sent is acknowledged: an ACK (not a NAK) of the PSN before the next send PSN
// with no READ in progress and no READ context of the QP (an ACK at a READ's last PSN before
// its responses keeps the timer running), a READ's last response when it is the last PSN
// sent. Also in an episode (an ACK); none for responses never sent, dropped in an episode,
// or of a failed QP or one not in RTS.
TEST_F(RxEngBench, TimerKickStopRule) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 5, o = 6, r = 7;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x100);
  bring_up(o, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x50);
  bring_up(r, kQpsRtr, 2, 0, 0, 0, 0);
  ASSERT_FALSE(HasFatalFailure());
  queue(make_ack(q, 0xFF, kSynAck));
  queue(make_ack(q, 0xFE, kSynAck));
  queue(make_ack(q, 0xFF, 0x00));            // an ACK with no credits
  drain();
  set_snd(q, 0x110);
  ASSERT_EQ(rdc_alloc(q, 0x10C, 0x10F, 0x8000, 16), 0);
  queue(make_ack(q, 0x10F, kSynAck));        // at the READ's last PSN: its context keeps the timer
  queue(make(q, kRespFirst, 0x10C, 512));
  queue(make(q, kRespMiddle, 0x10D, 512));
  queue(make(q, kRespMiddle, 0x10E, 512));
  queue(make(q, kRespLast, 0x10F, 16));      // the last PSN sent: stop
  queue(make_ack(q, 0x10F, kSynAck));        // stop
  drain();
  set_snd(q, 0x114);
  ASSERT_EQ(rdc_alloc(q, 0x110, 0x111, 0x9000, 8), 0);
  queue(make(q, kRespFirst, 0x110, 512));
  queue(make(q, kRespLast, 0x111, 8));       // more was sent after it
  queue(make_ack(q, 0x113, kSynAck));
  drain();
  set_snd(q, 0x116);
  ASSERT_EQ(rdc_alloc(q, 0x114, 0x115, 0xA000, 8), 0);
  queue(make(q, kRespFirst, 0x114, 512));
  queue(make_ack(q, 0x115, kSynAck));        // a READ in progress
  queue(make(q, kRespLast, 0x115, 8));
  queue(make_ack(q, 0x116, kSynAck));        // never sent: no kick
  queue(make_ack(q, 0x116, kSynPsn));        // an episode
  queue(make_ack(q, 0x115, kSynAck));        // in the episode: stop
  queue(make_ack(q, 0x115, 0x20 | 1));
  queue(make(q, kRespOnly, 0x115, 8));       // dropped
  queue(make_ack(q, 0x115, kSynInv));        // a fatal NAK
  queue(make_ack(o, 0x4F, kSynAck));
  drain();
  note(q);
  // a READ whose later PSNs are not in the next send PSN yet (reported inside it): a middle
  // response followed by the next send PSN is not the READ's last and stops nothing
  set_snd(q, 0x122);
  ASSERT_EQ(rdc_alloc(q, 0x120, 0x123, 0xB000, 8), 0);
  queue(make(q, kRespFirst, 0x120, 512));
  queue(make(q, kRespMiddle, 0x121, 512));
  drain();
  set_snd(q, 0x124);
  queue(make(q, kRespMiddle, 0x122, 512));
  queue(make(q, kRespLast, 0x123, 8));       // stop
  drain();
  report_qerr(q);
  queue(make_ack(q, 0x115, kSynAck));        // a failed QP: no kick
  queue(make_ack(r, 0x10, kSynAck));         // not in RTS: no kick
  drain();
  ASSERT_FALSE(HasFatalFailure());
  expect_kicks(0, {{q, true},  {q, false}, {q, true},  {q, false}, {q, false}, {q, false}, {q, false},
                   {q, true},  {q, true},  {q, false}, {q, false}, {q, true},  {q, false}, {q, false},
                   {q, true},  {q, false}, {q, true},  {q, false}, {q, false}, {o, true},
                   {q, false}, {q, false}, {q, false}, {q, true}});
  EXPECT_EQ(stats.anyctx_clears, 1u);
  EXPECT_EQ(act_cnt.drop_qp, 1u);
  EXPECT_EQ(act_cnt.psn_err, 1u);
}

// The send race: an ACK of the last PSN sent, taken in cycle X (decided in X + 2), while a
// request of the same QP leaves the send path in X + off. The engine read the next send PSN
// in X; a send in X - 1 .. X + 2 may be missing from it, so the timer is not stopped; a send
// of another QP, or of this one after the decision, does not matter. A send reporting a new
// next PSN two or more cycles before X is in what the engine read. The same for a READ's last
// response (a send at its take keeps the timer; one long after does not).
TEST_F(RxEngBench, TimerKickSendRace) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 2, o = 3;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x400);
  bring_up(o, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x800);
  ASSERT_FALSE(HasFatalFailure());
  Knobs fast;
  fast.meta = fast.d = fast.aw = fast.w = fast.task = fast.cev = fast.cqe = fast.rs = fast.tk = 100;
  auto run = [&](Pkt p, uint32_t sq, uint32_t sval, int off) {
    const uint64_t x = dut.cycle() + 8;
    p.snd_mode = kSndNone;
    p.offer_at = x;
    queue(std::move(p));
    snd_sched[uint64_t(int64_t(x) + off)] = {sq, sval};
    const size_t takes = take_log.size();
    drain(fast);
    EXPECT_EQ(take_log.size(), takes + 1);
    EXPECT_EQ(take_log.back().cyc, x) << "record not taken when offered";
  };
  std::vector<bool> want;
  for (int off = -4; off <= 6; ++off) {  // the same next PSN reported again
    run(make_ack(q, 0x3FF, kSynAck), q, 0x400, off);
    want.push_back(off < -1 || off > 2);
  }
  for (int off : {-3, -2, -1, 0, 2, 3, 5}) {  // a new request: next PSN 0x401
    run(make_ack(q, 0x3FF, kSynAck), q, 0x401, off);
    want.push_back(off > 2);
    set_snd(q, 0x400);
    drain(fast);
  }
  run(make_ack(q, 0x3FF, kSynAck), o, 0x801, 0);  // another QP's request
  want.push_back(true);
  ASSERT_EQ(rdc_alloc(q, 0x3FE, 0x3FF, 0x5000, 30), 0);
  run(make(q, kRespFirst, 0x3FE, 512), o, 0x802, 40);
  want.push_back(false);
  run(make(q, kRespLast, 0x3FF, 30), q, 0x400, 0);   // a request at the take
  want.push_back(false);
  ASSERT_EQ(rdc_alloc(q, 0x3FE, 0x3FF, 0x6000, 30), 0);
  run(make(q, kRespFirst, 0x3FE, 512), o, 0x803, 40);
  want.push_back(false);
  run(make(q, kRespLast, 0x3FF, 30), q, 0x400, 60);  // long after
  want.push_back(true);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(tk_log.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(tk_log[i].q, q) << "kick " << i;
    EXPECT_EQ(tk_log[i].stop, bool(want[i])) << "kick " << i;
  }
  EXPECT_GE(stats.race_clears, 6u);
}

// A timer kick waiting for tk_ready holds everything: no record, qerr, note or timeout is
// taken meanwhile, however long; then they go in their order (qerr, note, timeout, records).
TEST_F(RxEngBench, NothingTakenWhileKickWaits) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 4, o = 5;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x100);
  bring_up(o, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x100);
  ASSERT_FALSE(HasFatalFailure());
  Knobs stall;
  stall.tk = 0;
  queue(make_ack(q, 0xFF, kSynAck));
  queue(make_ack(q, 0xFE, kSynAck));
  for (int i = 0; i < 60 && !dut->tk_valid && !HasFatalFailure(); ++i) cycle(stall);
  ASSERT_TRUE(dut->tk_valid) << "no timer kick";
  raise_qerr(o);
  hold_note = true;
  note_q = q;
  note_g = uint8_t(gen_tab[q] & 1u);
  note_rewind = false;
  hold_tmo = true;
  tmo_q = o;
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(stall);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(hold_qerr && hold_note && hold_tmo);
  EXPECT_EQ(pending.size(), 1u);
  EXPECT_TRUE(tk_log.empty());
  EXPECT_GE(stats.kick_holds, 300u);
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(take_log.size(), 5u);
  const TakeKind order[] = {kTakePkt, kTakeQerr, kTakeNote, kTakeTmo, kTakePkt};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(take_log[i].kind, order[i]) << "take " << i;
  expect_kicks(0, {{q, true}, {q, false}});
  EXPECT_EQ(stats.tmo_ignored, 1u);  // o failed first
}

// A READ response beyond a READ of the QP that got none of its responses: READ 0x10 lost its
// only response, READ 0x11..0x12 (sent after it) gets both of its. The first is an implied NAK
// from its own PSN (found through the implied-NAK query, no lookup; the completion engine
// rewinds to READ 0x10, the first incomplete WQE) and keeps both READ contexts until the
// rewind drops them; nothing is placed, no READ_DONE for 0x12 (srnic_comp would complete READ 0x10 with it, its data never
// written) and no timer kick; the second response is dropped (episode). After the rewind
// (both READs requested again) a late response of READ 0x11..0x12 as first sent is beyond
// READ 0x10 again but answers a request from before the rewind: dropped, no episode; the
// resent READs' responses are placed.
TEST_F(RxEngBench, ReadResponsesBeyondAWhollyLostRead) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 7;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x13);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(rdc_alloc(q, 0x10, 0x10, 0x1000, 100), 0);
  ASSERT_EQ(rdc_alloc(q, 0x11, 0x12, 0x2000, 50), 1);
  queue(make(q, kRespFirst, 0x11, 512));
  queue(make(q, kRespLast, 0x12, 50));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 1u);
  expect_retry(0, q, kRtImplied, 0x11);
  EXPECT_EQ(w_bytes, 0u);
  EXPECT_EQ(n_lk, 0u);
  EXPECT_TRUE(tk_log.empty());
  EXPECT_EQ(stats.bq_rsp_implied, 1u);
  EXPECT_EQ(stats.rwp_drops, 1u);
  EXPECT_TRUE(rdc_hw[0].valid && rdc_hw[1].valid) << "the episode keeps the QP's READ contexts until the rewind";
  note(q, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_FALSE(rdc_hw[0].valid || rdc_hw[1].valid) << "the rewind drops the QP's READ contexts";
  ASSERT_EQ(rdc_alloc(q, 0x10, 0x10, 0x1000, 100), 0);
  ASSERT_EQ(rdc_alloc(q, 0x11, 0x12, 0x2000, 50), 1);
  queue(make(q, kRespFirst, 0x11, 512));  // from before the rewind: dropped
  queue(make(q, kRespOnly, 0x10, 100));
  queue(make(q, kRespFirst, 0x11, 512));
  queue(make(q, kRespLast, 0x12, 50));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 3u);
  expect_cev(1, kCevReadDone, q, 0x10, 0);
  expect_cev(2, kCevReadDone, q, 0x12, 0);
  EXPECT_EQ(w_bytes, 662u);
  EXPECT_EQ(n_lk, 2u);
  EXPECT_EQ(stats.bq_rsp_implied, 1u);
  EXPECT_EQ(stats.rcv_drops, 1u);
  expect_kicks(0, {{q, false}, {q, false}, {q, true}});
  EXPECT_EQ(act_cnt.psn_err, 0u);
}

// An episode keeps its QP's READ contexts (decision 47): the engine frees none when it starts,
// whatever its kind, so a fence behind an unfinished READ keeps waiting; the send path drops
// them when it applies the rewind (note with rewind). q's READs fill the context table but for
// two of o's; a timeout with a READ of q in progress keeps q's 62 (its responses are dropped
// until the note); a note without rewind keeps them, the rewind's note drops them. A sequence
// NAK of o and a gap in r's READ keep theirs too.
TEST_F(RxEngBench, EpisodeKeepsReadContexts) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 5, o = 6, r = 7;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);  // MTU 512
  bring_up(o, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);
  bring_up(r, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);
  ASSERT_FALSE(HasFatalFailure());
  auto held = [&](uint32_t x) {
    int n = 0;
    for (int i = 0; i < kRdEntries; ++i) n += rdc_hw[size_t(i)].valid && rdc_hw[size_t(i)].qpn == x;
    return n;
  };
  ASSERT_EQ(rdc_alloc(q, 0x100, 0x101, 0x10000, 8), 0);
  for (uint32_t i = 0; i < 61; ++i) ASSERT_GE(rdc_alloc(q, 0x102 + i, 0x102 + i, 0x20000 + 0x100 * i, 8), 0);
  ASSERT_GE(rdc_alloc(o, 0x300, 0x300, 0x30000, 8), 0);
  ASSERT_GE(rdc_alloc(o, 0x301, 0x301, 0x30100, 8), 0);
  ASSERT_EQ(rdc_alloc(r, 0x400, 0x400, 0x40000, 8), -1) << "the table is full";
  queue(make(q, kRespFirst, 0x100, 512));
  drain();
  timeout(q);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(held(q), 62);
  EXPECT_EQ(held(o), 2);
  EXPECT_FALSE(st[q].rd_valid);
  queue(make(q, kRespLast, 0x101, 8));  // dropped during the episode
  queue(make_ack(q, 0x17F, kSynPsn));   // acknowledges only
  drain();
  timeout(q);                           // ignored
  note(q);                              // no rewind: the contexts stay
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(held(q), 62);
  note(q, true);                        // the rewind drops them
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(held(q), 0);
  queue(make_ack(o, 0x2FF, kSynPsn));   // o's episode
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(held(o), 2);
  ASSERT_EQ(rdc_alloc(r, 0x400, 0x402, 0x40000, 8), 0);
  queue(make(r, kRespFirst, 0x400, 512));
  queue(make(r, kRespLast, 0x402, 8));  // 0x401 lost
  drain();
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(held(r), 1);
  ASSERT_EQ(cev_log.size(), 4u);
  expect_retry(0, q, kRtTimeout, 0x1000);
  expect_cev(1, kCevAck, q, 0x17E, 0);
  expect_retry(2, o, kRtSeq, 0x2FF);
  expect_retry(3, r, kRtImplied, 0x401);
  EXPECT_EQ(stats.tmo_ignored, 1u);
}

// After a rewind the QP resends (rcv) until in-order progress: READ 0x100..0x102 loses its
// middle response (an episode from 0x101); READ 0x103 and a WRITE at 0x104 follow. After the
// note the rewind has requested 0x101..0x102 (a partial re-read) and 0x103 again, and answers
// to what was sent before it arrive: READ 0x103's response (beyond the re-read without
// responses) is dropped, the WRITE's ACK (beyond it) and a sequence NAK only acknowledge, READ
// 0x100..0x102's last response (its re-read's first response missing) is dropped. The
// re-read's first response is in-order progress: an ACK beyond READ 0x103 then opens an
// episode again. Another QP: an RNR NAK and a timeout open episodes while it resends, a
// sequence NAK does not; an ACK beyond no READ is in-order progress.
TEST_F(RxEngBench, ResendingAfterARewindOpensNoEpisodeForEarlierRequests) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  const uint32_t q = 3, o = 4;
  bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);  // MTU 512
  bring_up(o, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, 0x1000);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(rdc_alloc(q, 0x100, 0x102, 0x10000, 40), 0);
  ASSERT_EQ(rdc_alloc(q, 0x103, 0x103, 0x20000, 30), 1);
  queue(make(q, kRespFirst, 0x100, 512));
  queue(make(q, kRespLast, 0x102, 40));  // 0x101 lost: an episode from 0x101
  queue(make(q, kRespOnly, 0x103, 30));  // dropped (episode)
  drain();
  note(q, true);
  ASSERT_EQ(rdc_alloc(q, 0x101, 0x102, 0x10200, 40), 0);
  ASSERT_EQ(rdc_alloc(q, 0x103, 0x103, 0x20000, 30), 1);
  queue(make(q, kRespOnly, 0x103, 30));   // sent before the rewind: dropped
  queue(make_ack(q, 0x104, kSynAck));     // the WRITE's ACK: acknowledges only
  queue(make_ack(q, 0x104, kSynPsn));     // acknowledges up to 0x103 only
  queue(make(q, kRespLast, 0x102, 40));   // READ 0x100..0x102's: dropped after its lookup
  queue(make(q, kRespFirst, 0x101, 512));  // the re-read: in-order progress
  queue(make(q, kRespLast, 0x102, 40));
  queue(make_ack(q, 0x104, kSynAck));     // beyond READ 0x103: an episode again
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 5u);
  expect_retry(0, q, kRtImplied, 0x101);
  expect_cev(1, kCevAck, q, 0x104, 0);
  expect_cev(2, kCevAck, q, 0x103, 0);
  expect_cev(3, kCevReadDone, q, 0x102, 0);
  expect_retry(4, q, kRtImplied, 0x105);
  EXPECT_EQ(w_bytes, 512u + 512u + 40u);
  EXPECT_EQ(n_lk, 3u);
  EXPECT_EQ(stats.rcv_drops, 2u);
  EXPECT_EQ(stats.rcv_acks, 1u);
  EXPECT_EQ(stats.rcv_naks, 1u);
  EXPECT_EQ(stats.rcv_clears, 1u);
  EXPECT_FALSE(st[q].rcv);
  note(q, true);
  queue(make_ack(o, 0x50, kSynPsn));      // an episode
  drain();
  note(o);
  queue(make_ack(o, 0x51, 0x20 | 2));     // RNR: an episode while resending
  drain();
  note(o);
  timeout(o);                             // an episode while resending
  note(o);
  queue(make_ack(o, 0x52, kSynPsn));      // acknowledges up to 0x51 only
  queue(make_ack(o, 0x52, kSynAck));      // in-order progress
  queue(make_ack(o, 0x53, kSynPsn));      // an episode
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cev_log.size(), 11u);
  expect_retry(5, o, kRtSeq, 0x50);
  expect_retry(6, o, kRtRnr, 0x51, 2);
  expect_retry(7, o, kRtTimeout, 0x1000);
  expect_cev(8, kCevAck, o, 0x51, 0);
  expect_cev(9, kCevAck, o, 0x52, 0);
  expect_retry(10, o, kRtSeq, 0x53);
  EXPECT_EQ(stats.rcv_naks, 2u);
  EXPECT_EQ(stats.rcv_clears, 2u);
  EXPECT_EQ(act_cnt.psn_err, 0u);
}

// A READ's only response is lost; the requests after it up to `top` are acknowledged. An ACK
// beyond the READ opens an episode, which frees the READ's context; the rewind requests the
// READ and everything after it again. Duplicate ACKs of `top` (the responder acknowledging
// requests it had, sent before the rewind) arrive before the READ has left again, when no
// context says the ACK is beyond an unfinished READ, and after it: neither is in-order
// progress (rcv stays until the re-read's response is placed), so neither opens another
// episode, and the re-read's response completes the READ. Once below and once across the
// 24-bit PSN wrap (READ at 0xFFFFD6, `top` 0x000016).
TEST_F(RxEngBench, AckBeyondAReadNotYetRequestedAgainIsNoProgress) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_snd = false;
  uint32_t q = 2;
  for (const uint32_t rd : {0x000100u, 0xFFFFD6u}) {
    const uint32_t top = (rd + 0x40) & kMask;
    bring_up(q, kQpsRts, 2, 0, 0, 0, 0, kDefMinRnr, (top + 1) & kMask);  // MTU 512
    ASSERT_FALSE(HasFatalFailure());
    const size_t c0 = cev_log.size();
    const uint64_t w0 = w_bytes;
    ASSERT_GE(rdc_alloc(q, rd, rd, 0x10000, 446), 0);
    queue(make_ack(q, rd + 6, kSynAck));  // beyond the READ: an episode
    drain();
    note(q, true);                        // the READ's context is dropped
    queue(make_ack(q, top, kSynAck));     // the READ not yet sent again: acknowledges only
    drain();
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_TRUE(st[q].rcv);
    ASSERT_GE(rdc_alloc(q, rd, rd, 0x10000, 446), 0);  // the re-read leaves
    queue(make_ack(q, top, kSynAck));     // beyond it while resending: acknowledges only
    queue(make(q, kRespOnly, rd, 446));   // the re-read's response: placed
    queue(make_ack(q, top, kSynAck));
    drain();
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_EQ(cev_log.size(), c0 + 5u);
    expect_retry(c0, q, kRtImplied, (rd + 7) & kMask);
    expect_cev(c0 + 1, kCevAck, q, top, 0);
    expect_cev(c0 + 2, kCevAck, q, top, 0);
    expect_cev(c0 + 3, kCevReadDone, q, rd, 0);
    expect_cev(c0 + 4, kCevAck, q, top, 0);
    EXPECT_EQ(w_bytes - w0, 446u);
    EXPECT_FALSE(st[q].rcv);
    EXPECT_FALSE(st[q].rrd);
    ++q;
  }
  EXPECT_EQ(stats.rrd_holds, 2u);
  EXPECT_EQ(stats.rcv_acks, 2u);
  EXPECT_EQ(act_cnt.psn_err, 0u);
  for (int i = 0; i < kRdEntries; ++i) EXPECT_FALSE(rdc[size_t(i)].valid) << "READ context " << i;
}

// Tasks and completion events carry the incarnation their QP had when the packet was taken
// (the answer on gen_a): two QPs with different incarnations interleaved, each advanced
// between packets (15 wraps to 0); tasks, an event and a receive CQE held in the placement
// stage while their QP is reset twice keep the incarnation they were made with, the next
// packet has the new one.
TEST_F(RxEngBench, AnswersAndEventsCarryTheIncarnation) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 3, o = 9, e = 0x500;
  bring_up(q, kQpsRts, 1, kAccRemoteWrite, 0, 0, e);
  bring_up(o, kQpsRts, 1, kAccRemoteWrite, 0, 0, e);
  ASSERT_FALSE(HasFatalFailure());
  gen_tab[q] = 14;
  gen_tab[o] = 5;
  auto both = [&](uint32_t n) {   // a zero-length WRITE ONLY with AckReq and an ACK, on q then o
    for (uint32_t x : {q, o}) {
      queue(make_reth(x, kWriteOnly, e + n, 0, 0, 0, 0, true));
      queue(make_ack(x, 0x100 + n, kSynAck));
    }
    drain();
  };
  both(0);
  bump_gen(q);             // 15
  bump_gen(o);
  bump_gen(o);             // 7
  both(1);
  bump_gen(q);             // 0
  queue(make_reth(q, kWriteOnly, e + 2, 0, 0, 0, 0, true));
  queue(make_ack(q, 0x102, kSynAck));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  const uint8_t want[] = {14, 5, 15, 7, 0};
  ASSERT_EQ(task_log.size(), 5u);
  ASSERT_EQ(cev_log.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    expect_task(i, false, i == 4 || i % 2 == 0 ? q : o, e + uint32_t(i / 2), kSynAck, uint32_t(i / 2 + 1));
    expect_cev(i, kCevAck, i == 4 || i % 2 == 0 ? q : o, 0x100 + uint32_t(i / 2), 0);
    EXPECT_EQ(unsigned(task_log[i].gen), unsigned(want[i])) << "task " << i;
    EXPECT_EQ(unsigned(cev_log[i].gen), unsigned(want[i])) << "event " << i;
  }
  // held: the outputs of a WRITE, an ACK and a SEND wait in the placement stage (tasks and
  // events stalled, the event and the SEND's CQE behind the task) while q is reset twice, all
  // three packets taken and written back well before
  add_mr({0x51, 0, kAccLocalWrite, 0x1000, 0x1000, 0x5000});
  post_rwqe(q, {0xC0DE, 0x1000, 256, 0x51});
  Knobs stall;
  stall.task = stall.cev = 0;
  queue(make_reth(q, kWriteOnly, e + 3, 0, 0, 0, 0, true));
  queue(make_ack(q, 0x103, kSynAck));
  queue(make(q, kSendOnly, e + 4, 32, true));
  for (int i = 0; i < 300 && !(pending.empty() && w_x.empty() && dut->task_valid) && !HasFatalFailure(); ++i)
    cycle(stall);
  ASSERT_TRUE(pending.empty() && w_x.empty() && dut->task_valid) << "the SEND is not placed or the task not held";
  for (int i = 0; i < 30 && !HasFatalFailure(); ++i) cycle(stall);
  ASSERT_EQ(task_log.size(), 5u);
  ASSERT_EQ(cev_log.size(), 5u);
  ASSERT_TRUE(cqe_log.empty());
  bump_gen(q);
  cycle(stall);
  bump_gen(q);             // 2
  for (int i = 0; i < 10 && !HasFatalFailure(); ++i) cycle(stall);
  drain();
  queue(make_reth(q, kWriteOnly, e + 5, 0, 0, 0, 0, true));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(task_log.size(), 8u);
  ASSERT_EQ(cev_log.size(), 6u);
  ASSERT_EQ(cqe_log.size(), 1u);
  expect_task(5, false, q, e + 3, kSynAck, 4);
  expect_cev(5, kCevAck, q, 0x103, 0);
  expect_task(6, false, q, e + 4, kSynAck, 5);
  EXPECT_EQ(cqe_log[0].wr_id, 0xC0DEu);
  EXPECT_EQ(cqe_log[0].status, 0);
  EXPECT_EQ(unsigned(task_log[5].gen), 0u) << "a held task took its QP's new incarnation";
  EXPECT_EQ(unsigned(cev_log[5].gen), 0u) << "a held event took its QP's new incarnation";
  EXPECT_EQ(unsigned(task_log[6].gen), 0u) << "a held task took its QP's new incarnation";
  EXPECT_EQ(unsigned(cqe_log[0].gen), 0u) << "a held CQE took its QP's new incarnation";
  expect_task(7, false, q, e + 5, kSynAck, 6);
  EXPECT_EQ(unsigned(task_log[7].gen), 2u);
  EXPECT_EQ(stale_pulses, 0u);
}

// A qerr made for an earlier incarnation of its QP (the QP was reset after the completion
// engine queued it) is taken with stale_drop high and does nothing else: no resync, flush CQE
// or READ-context flush; the SEND in progress goes on into its receive WQE and the QP's READ
// context stays. The same for a qerr that was live when offered and made stale by a reset
// while a timer kick held it. A qerr beyond NUM_QPS whose incarnation differs from the entry
// its low bits name is no stale drop. A qerr of the current incarnation then fails the QP.
TEST_F(RxEngBench, StaleQerrDropped) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = 4, e = 0x100;
  bring_up(q, kQpsRts, 1, 0, 2, 0x77, e, kDefMinRnr, 0x400);
  ASSERT_FALSE(HasFatalFailure());
  add_mr({0x41, 2, kAccLocalWrite, 0x2000, 0x1000, 0xA000});
  for (uint64_t i = 0; i < 3; ++i) post_rwqe(q, {0xE100 + i, 0x2000, 1024, 0x41});
  queue(make(q, kSendFirst, e, 256));
  drain();
  ASSERT_EQ(st[q].in_msg, 1);
  ASSERT_EQ(rdc_alloc(q, 0x300, 0x301, 0x9000, 64), 0);   // a READ of q outstanding
  gen_tab[q] = 3;
  auto take = [&](const Knobs& k) {
    for (int i = 0; i < 50 && hold_qerr && !HasFatalFailure(); ++i) cycle(k);
    ASSERT_FALSE(hold_qerr) << "qerr not taken";
    drain();
  };
  raise_qerr(q);
  qerr_g = 2;              // one reset ago
  take(Knobs{});
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(stale_qerrs, 1u);
  EXPECT_EQ(stale_pulses, 1u);
  // live when offered, held behind a timer kick while the QP is reset
  Knobs stall;
  stall.tk = 0;
  queue(make_ack(q, 0x2FF, kSynAck));
  for (int i = 0; i < 60 && !dut->tk_valid && !HasFatalFailure(); ++i) cycle(stall);
  ASSERT_TRUE(dut->tk_valid) << "no timer kick";
  raise_qerr(q);
  for (int i = 0; i < 20 && !HasFatalFailure(); ++i) cycle(stall);
  EXPECT_TRUE(hold_qerr);
  bump_gen(q);             // 4
  take(Knobs{});
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(stale_qerrs, 2u);
  EXPECT_EQ(stale_pulses, 2u);
  // beyond NUM_QPS
  raise_qerr(kQps + 3);
  qerr_g = uint8_t((gen_tab[3] + 1) & 15);
  take(Knobs{});
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(stale_pulses, 2u);
  EXPECT_FALSE(st[q].err);
  EXPECT_TRUE(rs_log.empty());
  EXPECT_TRUE(cqe_log.empty());
  EXPECT_TRUE(ctx_any(q));
  EXPECT_TRUE(rdc_hw[0].valid && rdc_hw[0].qpn == q) << "the READ context of QP " << q << " was freed";
  // the receive side works on
  queue(make(q, kSendLast, e + 1, 100, true));
  drain();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(cqe_log.size(), 1u);
  EXPECT_EQ(cqe_log[0].wr_id, 0xE100u);
  EXPECT_EQ(cqe_log[0].status, 0);
  EXPECT_EQ(cqe_log[0].byte_len, 356u);
  EXPECT_EQ(unsigned(cqe_log[0].gen), 4u);
  ASSERT_EQ(task_log.size(), 1u);
  expect_task(0, false, q, e + 1, kSynAck, 1);
  EXPECT_EQ(unsigned(task_log[0].gen), 4u);
  ASSERT_EQ(cev_log.size(), 1u);
  EXPECT_EQ(unsigned(cev_log[0].gen), 3u);   // the ACK, taken before the reset
  // a qerr of the current incarnation fails the QP: hand-over, the posted WQEs flushed, the
  // READ context freed
  report_qerr(q);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(st[q].err);
  ASSERT_EQ(rs_log.size(), 1u);
  EXPECT_TRUE(rs_log[0].err);
  EXPECT_EQ(rs_log[0].ci, 1);
  ASSERT_EQ(cqe_log.size(), 3u);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(cqe_log[i].wr_id, 0xE100u + i);
    EXPECT_EQ(cqe_log[i].status, kWcWrFlushErr);
    EXPECT_EQ(unsigned(cqe_log[i].gen), 4u);
  }
  EXPECT_FALSE(rdc_hw[0].valid);
  EXPECT_EQ(stale_pulses, 2u);
}

// ---------------------------------------------------------------- random traffic

class RxEngRandom : public RxEngBench {
 public:
  void setup() {
    reset();
    for (uint32_t i = 0; i < 12; ++i) {
      Mr m;
      m.key = 0x100 + i;
      m.pd = uint32_t(rng.below(3));
      m.acc = uint8_t(rng.below(16) | (rng.percent(70) ? 7 : 0));
      m.va = rng.next() & 0x0000FFFFFFFF0000ull;
      m.len = uint32_t(rng.range(1, 4)) << 16;
      m.pa = rng.next() & 0x000FFFFFFFFFFFFFull;
      add_mr(m);
    }
    auto_snd = false;
    for (uint32_t q = 0; q < kQps; ++q) configure(q);
  }

  void configure(uint32_t q) {
    const uint32_t r = uint32_t(rng.below(100));
    const uint8_t state = r < 6 ? kQpsInit : r < 30 ? kQpsRtr : kQpsRts;
    const uint8_t acc = uint8_t(rng.percent(85) ? 7 : rng.below(8));
    const uint32_t epsn = rng.percent(30) ? kMask - uint32_t(rng.below(30)) : rng.u32() & kMask;
    bring_up(q, state, int(rng.range(1, 5)), acc, uint32_t(rng.below(3)), uint16_t(rng.u32()), epsn,
             uint8_t(rng.below(32)), rng.percent(20) ? kMask - rng.below(20) : rng.u32() & kMask);
  }

  // An MR of q's PD with the access, holding len bytes (or any MR, now and then).
  const Mr* pick_mr(uint32_t q, uint8_t acc) {
    std::vector<const Mr*> c;
    for (const Mr& m : mrs)
      if (m.pd == cfg[q].pd && (m.acc & acc) == acc) c.push_back(&m);
    if (c.empty() || rng.percent(2)) return &mrs[rng.below(mrs.size())];
    return c[rng.below(c.size())];
  }
  uint64_t va_in(const Mr* m, uint32_t len) {
    if (rng.percent(2)) return m->va + m->len - len / 2;  // out of bounds
    return m->va + rng.below(m->len - std::min(len, m->len) + 1);
  }

  uint32_t msg_len(int mtu) {
    const uint32_t m = mtu_bytes(mtu);
    switch (rng.below(4)) {
      case 0: return uint32_t(rng.below(64));
      case 1: return m * uint32_t(rng.range(1, 3));
      default: return uint32_t(rng.range(1, 3 * m));
    }
  }

  // Packets of one message (or its rest) on q, from the reference's view of q.
  void gen_msg(uint32_t q, std::vector<Pkt>& out) {
    const Cfg& c = cfg[q];
    const St& s = st[q];
    const uint32_t mtu = mtu_bytes(c.mtu);
    // requester traffic on RTS QPs. The send path reports the QP's next PSN before the
    // first response (sent before it could be answered; now and then only just before).
    auto sent = [&](Pkt& p) {
      p.snd_mode = kSndCurrent;
      p.snd_gap = rng.percent(short_gap) ? unsigned(rng.below(3)) : unsigned(rng.range(3, 6));
    };
    if (c.state == kQpsRts && rng.percent(35)) {
      // a READ when none of the QP is in progress, now and then behind READs whose responses
      // all went missing; its context is in the table before its responses
      const bool has_ctx = ctx_any(q);
      if (!s.rd_valid && !s.err && (!has_ctx || rng.percent(60)) && rng.percent(60)) {
        const uint32_t len = msg_len(c.mtu);
        const uint32_t n = npkts(len, c.mtu), first = sq_next[q];
        const uint64_t pa = rng.next() & 0x0000FFFFFFFFFFFFull;
        if (rdc_alloc(q, first, first + n - 1, pa, len - (n - 1) * mtu) < 0) return;
        sq_next[q] = (first + n + uint32_t(rng.below(3))) & kMask;
        std::vector<Pkt> r;
        for (uint32_t i = 0; i < n; ++i) {
          const uint8_t op = n == 1 ? kRespOnly : i == 0 ? kRespFirst : i == n - 1 ? kRespLast : kRespMiddle;
          r.push_back(make(q, op, first + i, i == n - 1 ? len - i * mtu : mtu));
        }
        if (r.size() > 1 && rng.percent(10)) r.erase(r.begin() + long(rng.below(r.size())));  // lost
        if (rng.percent(8)) r.clear();  // all lost
        if (!r.empty() && rng.percent(6)) {  // a hostile peer (or a stale response): wrong length or opcode
          Pkt& b = r[rng.below(r.size())];
          uint8_t bop = uint8_t(b.f[kRmOpcode]);
          uint32_t blen = uint32_t(b.pay.size());
          if (rng.percent(50)) blen = (blen + 1 + uint32_t(rng.below(mtu))) % (mtu + 1);
          else bop = uint8_t(kRespFirst + (bop - kRespFirst + 1 + rng.below(3)) % 4);
          b = make(q, bop, uint32_t(b.f[kRmPsn]), blen);
        }
        if (!r.empty() && rng.percent(8)) r.insert(r.begin() + long(rng.below(r.size() + 1)), r[rng.below(r.size())]);
        if (rng.percent(20)) {  // an ACK among the responses: before, inside, at the end or beyond the READ
          const uint32_t k = uint32_t(rng.below(4));
          const uint32_t apsn = k == 0 ? first - 1 : k == 1 ? first + uint32_t(rng.below(n)) : k == 2 ? first + n - 1
                                                                                               : sq_next[q] - 1;
          r.insert(r.begin() + long(rng.below(r.size() + 1)), make_ack(q, apsn, kSynAck));
        }
        if (rng.percent(25)) r.push_back(make_ack(q, sq_next[q] - 1, kSynAck));  // all acknowledged
        if (r.empty()) return;
        sent(r.front());
        for (auto& p : r) out.push_back(std::move(p));
      } else {
        if (rng.percent(40)) sq_next[q] = (sq_next[q] + uint32_t(rng.range(1, 3))) & kMask;  // a new request
        const uint32_t sq = sq_next[q];
        uint32_t psn;
        const uint32_t r = uint32_t(rng.below(100));
        std::vector<const RdCtx*> mine;
        for (const RdCtx& e : rdc)
          if (e.valid && e.qpn == q) mine.push_back(&e);
        if (!mine.empty() && r < 30) {  // around an outstanding READ: inside, its last PSN, beyond
          const RdCtx& e = *mine[rng.below(mine.size())];
          const uint32_t k = uint32_t(rng.below(4));
          psn = k == 0 ? e.first + uint32_t(rng.below(((e.last - e.first) & kMask) + 1)) : e.last + k - 1;
        } else if (r < 65) {
          psn = sq - 1;                          // everything sent
        } else if (r < 97) {
          psn = sq - 2 - uint32_t(rng.below(8));
        } else {
          psn = sq + uint32_t(rng.below(3));     // never sent (a sequence NAK may name sq)
        }
        Pkt p = make_ack(q, psn & kMask, kSynAck);
        static const uint8_t syns[] = {kSynAck, kSynAck, kSynAck, kSynAck, kSynAck, 0x00, 0x9F, 0x20,
                                       0x3F, 0x2E, 0xA5, kSynPsn, kSynPsn, kSynInv, kSynAcc, kSynOp, 0x7F};
        p.f[kRmAethSyn] = syns[rng.below(sizeof syns)];
        if (rng.percent(5) && !has_ctx) p.f[kRmOpcode] = kRespMiddle;  // a stray response
        sent(p);
        out.push_back(std::move(p));
      }
      return;
    }
    uint32_t psn = s.epsn;
    if (rng.percent(4)) psn = (psn - 1 - uint32_t(rng.below(4))) & kMask;  // duplicate
    else if (rng.percent(4)) psn = (psn + 1 + uint32_t(rng.below(4))) & kMask;  // gap
    const bool ack_all = rng.percent(30);
    auto ackreq = [&](bool last) { return ack_all || (last && rng.percent(60)); };
    auto post = [&](bool big) {
      if (uint16_t(pi[q] - s.rq_ci) > 200 || uint16_t(pi[q] - fi[q]) > 8) return;
      const Mr* m = pick_mr(q, kAccLocalWrite);
      RWqe w;
      w.wr_id = rng.next();
      w.len = big ? uint32_t(rng.range(3 * mtu, 3 * mtu + 1000)) : uint32_t(rng.below(3 * mtu));
      w.addr = va_in(m, w.len);
      w.lkey = rng.percent(2) ? rng.u32() : m->key;
      post_rwqe(q, w);
    };
    if (s.in_msg != 0) {
      // the rest of the message in progress
      const bool sd = s.in_msg == 1;
      uint32_t resid = sd ? uint32_t(rng.range(1, 3 * mtu)) : s.wr_resid;
      if (rng.percent(3)) resid = uint32_t(rng.range(1, 2 * mtu));  // length error now and then
      while (resid > mtu && !rng.percent(5)) {
        out.push_back(make(q, sd ? kSendMiddle : kWriteMiddle, psn++, mtu, ackreq(false)));
        resid -= mtu;
      }
      const bool imm = rng.percent(30);
      if (imm && !sd && rng.percent(85)) post(true);
      Pkt p = make(q, sd ? (imm ? kSendLastImm : kSendLast) : (imm ? kWriteLastImm : kWriteLast), psn,
                   std::min(resid, mtu), ackreq(true));
      out.push_back(std::move(p));
      return;
    }
    const uint32_t kind = uint32_t(rng.below(5));
    const uint32_t len = msg_len(c.mtu);
    const uint32_t n = len == 0 ? 1 : (len + mtu - 1) / mtu;
    if (kind == 4) {  // READ request
      const Mr* m = pick_mr(q, kAccRemoteRead);
      out.push_back(make_reth(q, kReadReq, psn, 0, va_in(m, len), rng.percent(2) ? rng.u32() : m->key, len,
                              rng.percent(50)));
      return;
    }
    const bool sd = kind < 2, imm = kind == 1 || kind == 3;
    const Mr* m = pick_mr(q, kAccRemoteWrite);
    const uint64_t va = va_in(m, len);
    const uint32_t key = rng.percent(2) ? rng.u32() : m->key;
    if ((sd || imm) && rng.percent(90)) post(!rng.percent(3));
    const uint32_t stop = rng.percent(8) ? uint32_t(rng.below(n)) + 1 : n;  // message cut short
    for (uint32_t i = 0; i < stop; ++i) {
      const bool f = i == 0, l = i == n - 1;
      uint8_t op;
      if (sd)
        op = n == 1 ? (imm ? kSendOnlyImm : kSendOnly)
             : f    ? kSendFirst
             : l    ? (imm ? kSendLastImm : kSendLast)
                    : kSendMiddle;
      else
        op = n == 1 ? (imm ? kWriteOnlyImm : kWriteOnly)
             : f    ? kWriteFirst
             : l    ? (imm ? kWriteLastImm : kWriteLast)
                    : kWriteMiddle;
      uint32_t plen = l ? len - i * mtu : mtu;
      if (rng.percent(1)) plen = uint32_t(rng.below(mtu + 1));  // length error
      Pkt p = f && !sd ? make_reth(q, op, psn + i, plen, va, key, len, ackreq(l))
                       : make(q, op, psn + i, plen, ackreq(l));
      if (rng.percent(2)) p.f[kRmOpcode] = rng.below(2) ? kWriteMiddle : kSendMiddle;  // out of sequence
      out.push_back(std::move(p));
    }
  }

  // A batch of messages on distinct QPs, interleaved in per-QP order; the reference is
  // current for each of them (nothing is queued).
  void refill() {
    std::vector<std::vector<Pkt>> msgs;
    // the QP of the record or event taken last may still be in the engine (its READ-context
    // query answered from the table as it is, or an episode about to free its READ contexts):
    // no new READ context for it now
    std::vector<uint32_t> used = {last_pkt_q};
    if (!take_log.empty() && take_log.back().q < kQps) used.push_back(take_log.back().q);
    for (int n = int(rng.range(1, 3)); n > 0; --n) {
      const uint32_t r = uint32_t(rng.below(100));
      if (r < 3) {  // a record for no QP, or one marked drop
        Pkt p = make(uint32_t(kQps + rng.below(0x1000000 - kQps)), uint8_t(rng.below(18)), rng.u32(), 64);
        if (rng.percent(50)) {
          p.f[kRmDqpn] = rng.below(kQps);
          p.f[kRmDrop] = 1;
        }
        msgs.push_back({p});
        continue;
      }
      const uint32_t q = uint32_t(rng.below(kQps));
      if (std::find(used.begin(), used.end(), q) != used.end()) continue;
      used.push_back(q);
      std::vector<Pkt> m;
      gen_msg(q, m);
      if (!m.empty()) msgs.push_back(std::move(m));
    }
    std::vector<size_t> next(msgs.size(), 0);
    for (;;) {
      std::vector<size_t> open;
      for (size_t i = 0; i < msgs.size(); ++i)
        if (next[i] < msgs[i].size()) open.push_back(i);
      if (open.empty()) break;
      const size_t i = open[rng.below(open.size())];
      queue(msgs[i][next[i]++]);
    }
    // receives posted on QPs in error come back as flush records
    for (uint32_t q : used) queue_flushes(q);
  }

  unsigned short_gap = 5;  // percent of responses whose request was reported only just before
};

TEST_F(RxEngRandom, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  setup();
  ASSERT_FALSE(HasFatalFailure());
  for (int phase = 0; phase < 300 && !HasFatalFailure(); ++phase) {
    Knobs k;
    k.meta = unsigned(rng.range(30, 100));
    k.d = unsigned(rng.range(40, 100));
    k.aw = unsigned(rng.range(20, 100));
    k.w = unsigned(rng.range(30, 100));
    k.task = unsigned(rng.range(20, 100));
    k.cev = unsigned(rng.range(20, 100));
    k.cqe = unsigned(rng.range(20, 100));
    k.rs = unsigned(rng.range(20, 100));
    k.tk = rng.percent(15) ? unsigned(rng.range(3, 20)) : unsigned(rng.range(30, 100));
    k.lat = unsigned(rng.range(0, 8));
    k.qerr = unsigned(rng.range(0, 3));
    k.stale = unsigned(rng.range(0, 40));
    k.bump = unsigned(rng.range(0, 6));
    // now and then the send path is slow to end episodes: RNR waits end while they are open
    k.note = rng.percent(30) ? unsigned(rng.range(1, 4)) : unsigned(rng.range(5, 60));
    k.tmo = unsigned(rng.range(0, 3));
    k.rack = unsigned(rng.range(0, 3));
    // now and then srnic_resp_tx has no slot for some request packets (dropped unexecuted)
    k.room = rng.percent(70) ? 100 : unsigned(rng.range(60, 99));
    k.rnr = unsigned(rng.range(0, 60));
    k.snd = rng.percent(30) ? 0 : unsigned(rng.range(1, 25));
    k.owed = rng.percent(50) ? 0 : unsigned(rng.range(1, 8));
    short_gap = unsigned(rng.range(0, 15));
    cur_wlat = unsigned(rng.range(0, 30));
    for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) {
      if (pending.empty() && !hold_meta) refill();
      cycle(k);
    }
    drain(k);
    // QPs whose responder stopped, and a few others, are set up again (READ contexts flushed)
    // (and QPs holding the context of a failed READ, which only a reset flushes)
    for (uint32_t q = 0; q < kQps && !HasFatalFailure(); ++q) {
      bool held = false;
      for (const RdCtx& e : rdc) held = held || (e.valid && e.qpn == q);
      if (st[q].err || held || rng.percent(10)) configure(q);
    }
  }
  size_t handovers = 0, flushed = 0;
  for (const RsX& e : rs_log) handovers += e.err;
  for (const CqeX& e : cqe_log) flushed += e.status == kWcWrFlushErr;
  std::printf("[bench] %llu qerr events, %zu hand-overs, %zu flush CQEs\n", (unsigned long long)qerrs, handovers,
              flushed);
  EXPECT_GT(qerrs, 20u);
  std::printf("[bench] incarnations: %llu resets (%llu with answers, events or CQEs of the QP still to come out, %llu "
              "of a QP whose qerr waited), %llu stale qerrs dropped\n",
              (unsigned long long)bumps, (unsigned long long)bumps_queued, (unsigned long long)bumps_held_qerr,
              (unsigned long long)stale_qerrs);
  EXPECT_EQ(stale_pulses, stale_qerrs + stale_notes);
  std::printf("[bench] %llu stale notes dropped\n", (unsigned long long)stale_notes);
  std::printf("[bench] responder queue: %llu reservations taken, %llu given back at the write-back, %llu brought by "
              "READ/RNR/fatal NAK tasks; %llu requests dropped without room; %llu re-ACKs answered with a sequence NAK\n",
              (unsigned long long)stats.resv_takes, (unsigned long long)stats.resv_rels,
              (unsigned long long)stats.resv_tasks, (unsigned long long)act_cnt.no_room, (unsigned long long)stats.rack_naks);
  EXPECT_GT(stale_notes, 0u);
  EXPECT_GT(bumps_queued, 100u);
  EXPECT_GT(stale_qerrs, 50u);
  EXPECT_GT(handovers, 50u);
  EXPECT_GT(flushed, 50u);
  std::printf("[bench] %llu cycles, %llu records, %llu W beats (%llu bytes), %zu tasks, %zu CQEs, %zu events, %zu resyncs, "
              "%llu MR checks, %llu lookups; dup %llu psn_err %llu access_err %llu drop_qp %llu rx_nak %llu\n",
              (unsigned long long)dut.cycle(), (unsigned long long)records, (unsigned long long)n_w, (unsigned long long)w_bytes, task_log.size(),
              cqe_log.size(), cev_log.size(), rs_log.size(), (unsigned long long)n_mr, (unsigned long long)n_lk,
              (unsigned long long)act_cnt.dup, (unsigned long long)act_cnt.psn_err,
              (unsigned long long)act_cnt.access_err, (unsigned long long)act_cnt.drop_qp,
              (unsigned long long)act_cnt.rx_nak);
  const auto u = [](uint64_t v) { return (unsigned long long)v; };
  std::printf("[bench] episodes: seq %llu implied %llu (ACK beyond a READ without responses %llu) rnr %llu "
              "timeout %llu; %llu notes, %llu timeouts ignored, %llu READ responses in episodes, %llu NAKs in "
              "episodes or on failed QPs, "
              "%llu stale responses, %llu ACKs inside a READ, %llu ghosts; duplicate READs %llu executed %llu "
              "dropped\n",
              u(stats.retries[kRtSeq]), u(stats.retries[kRtImplied]), u(stats.bq_implied), u(stats.retries[kRtRnr]),
              u(stats.retries[kRtTimeout]), u(stats.notes), u(stats.tmo_ignored), u(stats.rwp_drops),
              u(stats.rwp_naks), u(stats.stale), u(stats.ack_inside), u(stats.ghosts), u(stats.dup_rd),
              u(stats.dup_rd_drop));
  std::printf("[bench] episodes keeping READ contexts %llu; implied NAKs for a READ response beyond a READ without "
              "responses %llu; resending after a rewind: %llu ACKs beyond a READ and %llu sequence NAKs only "
              "acknowledged, %llu READ responses dropped, %llu cleared by in-order progress, %llu ACKs beyond no "
              "READ held while READs dropped by a rewind wait\n",
              u(stats.rt_kept), u(stats.bq_rsp_implied), u(stats.rcv_acks), u(stats.rcv_naks), u(stats.rcv_drops),
              u(stats.rcv_clears), u(stats.rrd_holds));
  std::printf("[bench] fatal NAKs beyond a READ without all its responses: %llu\n", u(stats.nak_unfinished_read));
  std::printf("[bench] RNR waits' ends: %llu episodes opened at once, %llu kept during an episode, %llu opened at its "
              "note, %llu dropped at the note, %llu ignored\n",
              u(stats.rnr_ends), u(stats.rxp_kept), u(stats.rxp_opened), u(stats.rxp_dropped),
              u(stats.rnr_end_ignored));
  std::printf("[bench] timer kicks %llu (%llu READ responses), %llu STOP; STOP withheld for a send race %llu, for a "
              "READ context %llu; %llu cycles with a take held by a kick; %llu sends reported\n",
              u(stats.kicks), u(stats.rd_kicks), u(stats.stops), u(stats.race_clears), u(stats.anyctx_clears),
              u(stats.kick_holds), u(n_snd));
  EXPECT_GT(records, 5000u);
  EXPECT_GT(cqe_log.size(), 300u);
  EXPECT_GT(rs_log.size(), 10u);
  EXPECT_GT(n_lk, 100u);
  EXPECT_GT(act_cnt.dup, 50u);
  EXPECT_GT(act_cnt.psn_err, 50u);
  EXPECT_GT(act_cnt.access_err, 5u);
  for (int kind = 0; kind < 4; ++kind) EXPECT_GT(stats.retries[kind], 50u) << "episodes of kind " << kind;
  EXPECT_GT(stats.bq_implied, 10u);
  EXPECT_GT(stats.nak_unfinished_read, 0u);
  EXPECT_GT(stats.notes, 200u);
  EXPECT_GT(stats.tmo_ignored, 50u);
  EXPECT_GT(stats.rnr_ends, 30u);
  EXPECT_GT(stats.rxp_kept, 20u);
  EXPECT_GT(stats.rxp_opened, 15u);
  EXPECT_GT(stats.rnr_end_ignored, 20u);
  EXPECT_GT(stats.rwp_drops, 25u);
  EXPECT_GT(stats.rwp_naks, 20u);
  EXPECT_GT(stats.rt_kept, 50u);
  EXPECT_GT(stats.bq_rsp_implied, 3u);
  EXPECT_GT(stats.rcv_acks, 5u);
  EXPECT_GT(stats.rcv_naks, 10u);
  EXPECT_GT(stats.rcv_drops, 5u);
  EXPECT_GT(stats.rcv_clears, 100u);
  EXPECT_GT(stats.stale, 10u);
  EXPECT_GT(stats.ack_inside, 20u);
  EXPECT_GT(stats.dup_rd, 20u);
  EXPECT_GT(stats.kicks, 2000u);
  EXPECT_GT(stats.rd_kicks, 500u);
  EXPECT_GT(stats.stops, 200u);
  EXPECT_GT(stats.race_clears, 20u);
  EXPECT_GT(stats.anyctx_clears, 10u);
  EXPECT_GT(stats.kick_holds, 1000u);
  std::printf("[bench] %llu cycles a record waited for an owed qerr\n", u(stats.owed_holds));
  EXPECT_GT(stats.owed_holds, 100u);
}

}  // namespace
}  // namespace srnic::verif::blocks
