// srnic_wqe_fetch bench (with srnic_qpc_ram): the bench is the scheduler, a host memory
// holding each QP's SQ ring of random WQEs (WRITE/WRITE_IMM/SEND/SEND_IMM/READ, lengths
// 0..3*MTU) behind an in-order AXI read slave with random latency, the MR table (2-cycle
// answers, translated address = va + key * 4096), the READ context table, the TX queue, the
// completion engine's rewinds (go-back-N), the RNR timers and the RX engine, all with random
// back-pressure. Two references, one per build:
// - TURNS_PER_QP 1 (block_wqe_fetch, block_wqe_fetch_full): a reference of each turn. The
//   bench's scheduler hands a QP out (s_ready: the issue stage reads the producer index) and
//   sees it active until its turn end for the scheduler (done), which comes when the turn is
//   issued (its WQE read, or its done for a turn without work). The reference plans the turn
//   in the cycle the DUT decides it (the WQE read handshake, or the done of a turn without
//   work; not at hand-out: whether the QP's previous turn is still in flight then decides it),
//   from its send state and the producer index read at hand-out, by the turn rules (up to
//   SCHED_WQES WQEs, never across the ring end or a 4 KiB boundary, whole packets until
//   SCHED_BURST bytes are spent, a READ or a segment under 64 bytes costing 64; a parked QP
//   does nothing). A hand-out while a turn of the QP is in flight (from its WQE read to its
//   turn_end) must end without work and report more work (done_more). Checked: the WQE read
//   address and length; done_more (a turn that reads WQEs: WQEs beyond the ones read; else:
//   waiting for a fence or for the turn in flight); the turn's end in the plan stage
//   (turn_end, in ring order) and its kick (exactly when it ended early, i.e. not at the end
//   of the WQEs it read or at a fence, and has work left: consumer index != producer index
//   read, or inside a WQE; fed to the bench's scheduler like a doorbell; a stop in front of a
//   READ for want of a context: see Context waits below); and the packet jobs the turn plans.
//   No turn is ever doomed (turn_drop).
// - TURNS_PER_QP 4 (block_wqe_fetch_t4, WqeFetchTurnsBench): a reference of each QP's stream
//   of packets that does not depend on turn boundaries (see there). The turn reference's
//   tests are skipped in that build.
// Per QP the jobs must
// be exactly the planned segments cut into MTU packets: opcodes FIRST/MIDDLE/LAST/ONLY (+IMM;
// a segment starting inside a message continues with MIDDLE/LAST, so no RETH), PSNs
// (consecutive, a READ advancing by its response count), payload addresses and lengths,
// RETH, ImmDt, AckReq on last packets and every 64th PSN, SE, the resend mark (a PSN below
// the highest one planned before: the reference counts PSNs without wrapping); each READ
// leaves with its context insert (first and last PSN, pa, MTU, last response length; a READ
// resumed at a byte offset asks for the rest only: address, length, PSN and pa advanced). No
// job may leave before the turn that plans it started, and once all is quiet every planned
// packet must have left. WQEs fetched but not reached are read again by the next turn (the
// read address check sees it).
// The bench also plays srnic_rd_ctx: each READ context insert is kept in a table until a
// random delay has passed, and the fence query ports (rdc_qa/qb_busy) answer from it. The
// reference applies the fence rule (a fenced WQE not yet started waits while a READ of its
// QP is planned or in the table: the turn stops in front of it, later turns end without a
// WQE read while the READs are outstanding) and every fenced WQE's first packet must leave
// while no READ of its QP is outstanding. The plan stage looks at a fence after the turn's
// WQE read, when the reference has already decided it: while a turn of a QP is in flight,
// the bench frees none of the QP's READ contexts that would leave it without READs
// outstanding. Host stops (hstop) must report CEV_HERR (next PSN, producer index) and end the
// QP's work; later turns of the stopped QP only report newly posted WQEs for flushing
// (CEV_LERR, from a turn pushed without a WQE read that ends in the plan stage too).
// Rewinds (rw_*), as the completion engine sends them: one at a time per QP, to a position
// already planned and not acknowledged (WQE ci, an MTU multiple as byte offset, the PSN it
// had), never past the QP's first outstanding READ (inside it: a partial re-read), now and
// then apply 0 or RNR (with a timer code). The reference applies a rewind when its state
// read is taken (rw_ready) to a QP in RTS and not stopped: the QP's send state moves back,
// and the turns after it plan from there. Then, all in one cycle, once every job of the QP
// planned before has left: note (always, once), kick (applied, not RNR), rnr with the code
// (applied RNR: the QP is parked; its turns end without work until an unpark, which kicks
// it), rdc_rw_flush (applied: the bench drops the QP's READ contexts). Ring slots are
// freed only when the bench acknowledges WQEs (never at or after a pending rewind's WQE).
// The kick port carries rewind kicks, plan kicks and context wake-ups: a kick of the turn's QP
// in a turn_end cycle is the plan stage's if the turn kicks (a rewind ends only in a cycle
// without a plan turn end offered: RewindBesideTurnEndNotesOnce, UnparkBesideTurnEndKicksOnce),
// a kick in a note cycle the rewind's if it kicks; any other is a wake-up. The random tests with
// rewinds have no host stops.
// READ contexts (decision 120: srnic_rd_ctx's n_free, qb_cnt and n_freed; the plan stage's
// reservation and each QP's share): the bench's table has rd_cap entries (64 as in srnic_core; a
// few tests ask for 2..10); rdc_ready only while an entry is free, rdc_free the free count of
// the previous cycle, rdc_qb_cnt the entries of rdc_qb_qpn (the plan stage's QP) in this cycle,
// rdc_freed the entries that left the table at the last edge (frees, rewind flushes, QP resets).
// A WQE the plan stage starts asks the MR table (mr_req), so the MR requests belong, in order,
// to the turn at the plan stage's head (turns in ring order) and name its WQEs (key, address,
// length, rights checked). The reference plans each turn at its WQE read, keeping the send state
// before each WQE it starts; when the turn ends (turn_end) after fewer MR requests than the
// reference starts, the first WQE left out must be a READ (the DUT stopped in front of it for
// want of a context) and the reference rolls the turn back to the state before it (send state,
// planned segments, READs outstanding, fence stop). The two rules, on the values of the cycle:
// global room: rdc_free >= (READs whose MR request was seen and whose context insert was not) + 2;
// the QP's room: its entries + its READs started and not inserted < 16 (RD_SHARE, the contexts a
// QP is always granted), or rdc_free >= those READs + 2 + 16 (RD_RESERVE: beyond its share a QP
// borrows only while 16 more stay free). Checked: every READ's MR request comes with both (and
// in the cycle of the request); each stop in front of a READ had a cycle, after the turn's
// previous MR request, the READ's WQE beat and the plan stage's previous turn end, without one
// of them (no needless stop); no READ request waits for a context (rdc_valid never with the
// table full); every READ is sent in the end (settle).
// Context waits (turn reference): the bench keeps a copy of the DUT's wait list, cycle by cycle:
// 64 entries (kCwDepth), each a QPN and a live bit, in a ring (head, tail, count, dead entries
// included), the wake-up credits and the poll flag. A turn that stopped in front of a READ for
// want of a context ends unkicked and its QP joins the list at the tail if, in the cycle of its
// turn_end, there is still no room for it (both rules), the list is not full and the QP is not on
// it (a live entry); it is kicked if the room is back or the list is full (the QP not on it); a QP
// on the list neither joins nor is kicked. While a QP is on the list its scheduler turns end in
// the issue stage without a WQE read and with done_more 0 (the list wakes it): a WQE read of a QP
// on the list fails. An entry dies in place when a rewind is applied to its QP (rdc_rw_flush) or
// the QP is reset (qp_reset_valid: the bench pulses it in the cycle after each QP_MODIFY it makes
// and after each incarnation move, as srnic_core does after the command); a dead head is dropped,
// one per cycle, without a kick. Credits: + rdc_freed each cycle, - 1 per wake-up that uses one,
// at most 64, cleared in a cycle with the list empty and nobody joining. Poll: an 8-bit tick from
// reset; at tick 255 with global room and the list not empty the poll flag is set; a wake-up
// without a credit uses it; it is cleared with the list empty. A wake-up is the head's kick when
// the head is live and a credit or the poll flag is held; it is the kick port's lowest priority.
// Checked to the cycle, both ways: in every cycle a wake-up is due and the port is free for it
// (kick_ready, no plan stage kick, no rewind kick) the head is kicked (liveness: a waiter owed a
// wake-up is woken), and every kick that is neither the plan stage's nor a rewind's is that
// wake-up (a credit used if one is held, else the poll). Nobody waits at the end (settle). The
// stream reference cannot tell a stop in front of a READ from a turn that ends before one: there
// a wake-up must be of a QP whose turn ended unkicked without room and in front of a posted READ
// and that was not woken since, and settle also waits until no wake-up has come for a poll
// period and more with global room (the wait list drained).
// In-flight cap (tx_window, WqeFetchWindowBench, all three builds, stream reference): the bench
// plays the acknowledgements (ack port) and checks every job against its own oldest
// unacknowledged PSN (PSN - una < W, a READ by its first PSN), AckReq (the packet at una + W - 1,
// every (psn & m) == m, m + 1 the largest power of two <= W/4 in 1..64), win_wait (after a turn
// ended without a WQE read and without more work) and srnic_tx_window's kicks (of such QPs;
// fed to the scheduler like doorbells; a kick of another QP that is neither the plan stage's
// nor a rewind's must be a READ context wake-up). Without a window win_wait never pulses and
// such kicks never come.
// Incarnations (srnic_qp_gen, decision 109): the bench holds every QP's incarnation (random at
// the start) and answers the four read ports (gen_a..gen_d for gen_a_qpn..gen_d_qpn)
// combinationally each cycle. Every job must carry the incarnation its segment was planned in,
// every CEV_LERR/CEV_HERR the QP's. Rewinds and stop requests carry the QP's incarnation, except
// late ones of an earlier incarnation (random contents, offered now and then by the random
// tests): these must be dropped in the cycle they arrive (stale_drop) and change nothing
// (StaleRewindsAndStopsHaveNoEffect). A QP reset while segments of it wait for the cutter (the
// bench moves its incarnation on while no turn of it is in flight: StaleSegmentsDroppedWhole)
// must have each of them dropped whole at the cutter's head, in order (stale_drop with
// gen_b_qpn naming the QP, no job, no READ context), before any job of the QP; other QPs'
// segments are not touched. Stop requests that act (StopRequestReportsForFlushing) are taken
// like host stops once no turn of the QP is in flight, stop the QP for good and report CEV_LERR
// (next PSN, producer index, WR_FLUSH_ERR) if the QP was not stopped yet or WQEs were posted
// since its last report. A packet job offered and not taken when its QP is reset stays offered
// (a_job_hold) and may go, with the old incarnation (the TX ICRC stage drops its frame); the
// rest of its segment is dropped; a READ request is dropped at once (ResetWhileAJobIsOffered).
// A QP_MODIFY to RESET (a test's, offer_reset; configure() never sends one) is taken only once no
// turn of its QP is in flight or in the issue stage, checked in every cycle it waits (decision
// 125: ResetWaitsForTheTurnInFlight): a turn planned after the incarnation moved would stamp the
// jobs of WQEs posted before the reset with the new incarnation.
#include <algorithm>
#include <cstring>
#include <deque>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "Vsrnic_wqe_fetch.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

// Cycles a QP_MODIFY may wait: the context RAMs' reset sweep (one entry per cycle) plus slack.
constexpr int kCmdWait = BENCH_NUM_QPS + 20;

constexpr int kQps = BENCH_NUM_QPS;
constexpr int kTpq = BENCH_TURNS_PER_QP;  // turns of one QP in flight

constexpr uint8_t kWrite = 0, kWriteImm = 1, kSend = 2, kSendImm = 3, kRead = 4;
constexpr uint32_t kPsnMask = 0xFFFFFF;

constexpr uint8_t kFence = 1;  // WQE_FLAG_FENCE
constexpr uint8_t kCevLerr = 6, kCevHerr = 7, kWcLocQpOpErr = 2;
constexpr uint8_t kOpReadReq = 0x0C;
constexpr uint8_t kQpsReset = 0, kQpsInit = 1, kQpsRts = 3;  // srnic_abi_pkg::QPS_*
// READ contexts (srnic_wqe_fetch's RD_SHARE, RD_RESERVE and CW_DEPTH, as srnic_core has them):
// the contexts a QP is always granted, the contexts a QP beyond its share leaves free, the entries
// of the wait list, the poll period (cycles) while QPs wait and contexts are free
constexpr unsigned kRdShare = 16, kRdReserve = 16, kCwDepth = 64, kPoll = 256;
constexpr unsigned kCwCredMax = 64;  // wake-up credits kept at most
// settle (stream reference): the wait list is drained once no wake-up has come for this many
// cycles with global room (a waiter would have been polled)
constexpr uint64_t kCwCalm = kPoll + 64;

struct Wqe {
  uint8_t op, flags;
  uint32_t imm, len, lkey, rkey;
  uint64_t wr_id, laddr, raddr;
  bool planned = false;  // its first packet was planned once: first_u is its PSN
  uint64_t first_u = 0;  // first PSN, not wrapped
  bool done = false;     // left whole once (a READ: its context freed, not dropped): acknowledgeable
};
struct Job {
  uint8_t opcode;
  uint64_t psn_u;  // PSN, not wrapped
  uint32_t len, npk;
  uint64_t pay_addr, pa;
  bool ackreq, se, reth, imm, read, wqe_end;
  bool first;      // the WQE's first packet
  bool resend;
  uint16_t idx;    // WQE index
  uint64_t reth_va;
  uint32_t reth_len, rkey, immdt, last_len;
  uint8_t flags;
  uint8_t gen;     // the QP's incarnation the segment was planned in
};
// a planned segment of a WQE (its jobs are made one by one as they leave): bytes [off, end)
// of a SEND/WRITE, or the rest of a READ from off; e is the next packet's offset
struct Seg {
  uint16_t idx;
  Wqe w;
  uint32_t off, end, e;
  uint64_t psn_u;  // the next packet's PSN, not wrapped
  uint64_t hi_u;   // the highest next PSN planned before it
  uint8_t gen = 0;  // the QP's incarnation when it was planned
  bool offered = false;  // stale: its next packet was offered (not taken) when the QP was reset
};
struct Ev {
  uint8_t kind;
  uint32_t q, psn, psn2;
  uint8_t status = 5;  // WC_WR_FLUSH_ERR
  uint8_t gen = 0;     // the QP's incarnation
};
// an entry of the bench's READ context table (srnic_rd_ctx)
struct RdEntry {
  uint32_t q;
  uint64_t free_at;
  bool real;         // inserted by a READ job (not injected by a directed test) ...
  uint16_t idx = 0;  // ... of this WQE
};
// a rewind (srnic_pkg::rewind_t) the bench offers, with what the reference knows of it
struct Rewind {
  uint32_t q;
  bool apply, rnr;
  uint16_t ci;
  uint32_t off;
  uint64_t psn_u;
  uint8_t code;
  bool up = false;  // the answer to an RNR wait's end or a reused-slot report: unparks
  bool stale = false;  // made for an earlier incarnation of the QP (dropped as it arrives) ...
  uint8_t gen = 0;     // ... the incarnation it carries (set when it is driven)
};
// a stop request (a fatal NAK's, from the completion engine)
struct Stop {
  uint32_t q;
  bool stale = false;  // made for an earlier incarnation of the QP
  uint8_t gen = 0;     // the incarnation it carries (set when it is driven)
};
// a rewind whose state read was taken: what its end must show
struct Pending {
  bool active = false;
  bool up = false;
  uint32_t q = 0;
  bool note = false, kick = false, rnr = false, flush = false;
  uint8_t code = 0;
  uint64_t taken = 0;
  uint16_t ci = 0;  // the WQE the send state moved to
  bool move = false;
  uint64_t psn_u = 0;  // where it moved to: every PSN before it is done (the window's una)
  uint8_t gen = 0;     // the rewind's incarnation (note_gen)
};
// a WQE the reference started in a turn, with the send state before it (what the turn rolls
// back to when the DUT ends the turn in front of it)
struct Step {
  uint16_t idx;        // its index, the consumer index before it
  bool read;
  bool fresh;          // its first packet was planned here (Wqe::planned set by this turn)
  bool fence_ignored;  // a fence on it was passed over (WQE in progress)
  uint32_t off;
  uint64_t psn_u, hi_u, planned;
};
// the reference of a QP's turn in flight, as planned at its WQE read and as observed since
struct TurnRec {
  bool work = false;             // a WQE read: the turn goes through the plan stage
  uint16_t ci0 = 0, pi = 0;      // the first WQE read, the producer index read at hand-out
  int n = 0;                     // WQEs read
  bool fence_stop = false;       // the plan ends in front of a fenced WQE
  bool stale = false;            // the plan ends in front of a reused slot: the QP parks
  std::vector<Step> steps;       // the WQEs the plan starts, in order
  std::vector<uint64_t> beat_at; // the cycle each WQE beat was delivered
  bool bad = false;              // the plan ends at a WQE the DUT refuses: the QP stops
  size_t mr = 0;                 // MR requests seen: the DUT started steps[0 .. mr)
  uint64_t last_mr = 0;          // cycle of the last of them
};
struct Qp {
  uint64_t base = 0;
  int log_sq = 0, mtu = 1;
  bool rts = true;
  uint32_t pd = 0;
  // reference send state and producer index (RAM contents)
  uint16_t ci = 0, pi = 0;
  uint32_t off = 0;
  uint64_t psn_u = 0;  // next PSN, not wrapped
  uint64_t hi_u = 0;   // highest next PSN planned so far: PSNs below it are resends
  bool park = false;
  // the SQ ring as host memory holds it: each slot's WQE and the running index written in it
  // (slots not yet written hold index ~0 of no posted WQE); posted and not acknowledged:
  // indices ci_base .. posted - 1
  std::vector<Wqe> ring;
  std::vector<uint16_t> ring_idx;
  uint16_t ci_base = 0;  // the oldest WQE not acknowledged
  uint64_t acked_u = 0;  // its first PSN (the completion engine's), not wrapped
  uint16_t posted = 0;
  std::deque<Seg> segs;  // planned, not yet all emitted, in order
  std::deque<Seg> stale_segs;  // planned before the QP's last reset, not yet dropped by the DUT
  uint64_t planned = 0, emitted = 0;  // jobs
  // bench scheduler: queued, active (handed out, its done not yet seen), a doorbell or kick
  // while active
  bool queued = false, active = false, pending = false;
  uint16_t pi_seen = 0;  // the producer index read by the QP's last hand-out
  // turns in flight: pushed into the DUT's turn ring (a WQE read, a flush or host stop) and
  // not yet out of its plan stage (turn_end/turn_drop); `fly`: a work turn among them
  int fly_n = 0;
  bool fly = false;
  // ring slots a turn may still read (turn reference): from a hand-out until its turn ends
  // (without work: at done; with a WQE read: at turn_end), conservatively [prot_lo, prot_hi)
  int open = 0;
  uint16_t prot_lo = 0, prot_hi = 0;
  // fence: READs planned or in the table (incl. injected entries), frees allowed while a
  // work turn is in flight (the outstanding count must not reach 0 under a turn)
  int rd_busy = 0, free_ok = 0;
  bool fwait = false;
  // READ contexts: READs started (MR request) and not yet in the table (the DUT's reservations
  // of the QP), the last cycle the plan stage's QP was this one and it had no room by its share
  // (its entries + those READs >= RD_SHARE, and not RD_RESERVE contexts spare); stream
  // reference: turns that may have left the QP waiting for a context and were not matched by a
  // wake-up yet
  unsigned rd_resv = 0;
  uint64_t share_short = 0;
  int cw_cands = 0;
  uint64_t reads = 0;  // WQE reads of the QP
  // stopped (host stop, or a refused WQE): no more work, new WQEs reported for flushing
  bool err = false;
  bool refd = false;  // stopped at a refused WQE: a rewind to a WQE before it clears err
  uint16_t fl_pi = 0;
  bool rw_open = false;  // a rewind offered or taken and not yet noted
  uint64_t resent = 0;   // jobs marked resend
  TurnRec rec;           // the turn in flight
  // stream reference (WqeFetchTurnsBench): the next packet of the QP (WQE, byte offset, PSN
  // not wrapped), the WQE of the last MR request, WQE reads whose last beat is not yet in
  uint16_t jc_idx = 0;
  uint32_t jc_off = 0;
  uint64_t jc_psn = 0;
  bool mr_any = false;
  uint16_t mr_last = 0;
  int reads_out = 0;
  // in-flight cap (window tests): the oldest PSN the bench has not acknowledged (taken by the
  // ack port), not wrapped, and every value it has had (the starting PSN first, increasing):
  // the DUT plans from one of them
  uint64_t una_u = 0;
  std::vector<uint64_t> una_hist;
  bool armed = false;    // a turn of the QP ended without a WQE read or more work (a wait may follow)
  uint64_t end_at = 0;   // the cycle a turn of the QP last left the plan stage (turn_end, turn_drop)
};

uint64_t translate(uint32_t key, uint64_t va) { return va + uint64_t(key) * 4096; }

class WqeFetchBench : public ::testing::Test {
 public:
  WqeFetchBench() : rng(test_seed()), dut(rng.next()), qps(kQps), gen_tab(kQps) {
    for (uint8_t& g : gen_tab) g = uint8_t(rng.below(16));  // the incarnations before the test: any
  }
  // The turn reference plans one turn of a QP at a time: its tests need TURNS_PER_QP 1.
  void SetUp() override {
    if (kTpq != 1) GTEST_SKIP() << "the turn reference needs TURNS_PER_QP 1 (this build: " << kTpq << ")";
  }

  // ------------------------------------------------------------ setup
  void reset() {
    dut->s_valid = dut->done_ready = dut->qp_cmd_valid = dut->db_valid = 0;
    dut->ar_ready = dut->r_valid = dut->mr_rsp = dut->rdc_ready = dut->job_ready = 0;
    dut->lerr_ready = 1;
    dut->stop_valid = 0;
    stop_q.clear();
    stop_driven = false;
    dut->hstop_valid = 0;
    dut->rw_valid = dut->stale_ready = 0;
    dut->note_ready = dut->kick_ready = dut->rnr_ready = 0;
    dut->rdc_qa_busy = dut->rdc_qb_busy = 0;
    dut->rdc_free = 0;
    dut->tx_window = 0;   // no in-flight cap, no acknowledgements (the window tests set them)
    dut->ack_valid = 0;
    ack_q.clear();
    ack_driven = false;
    rdc_free_next = 0;  // srnic_rd_ctx shows 0 free in the cycle after reset
    dut->rdc_qb_cnt = dut->rdc_freed = 0;
    rd_gone = 0;
    dut->qp_reset_valid = 0;
    dut->qp_reset_qpn = 0;
    qp_reset_q.clear();
    cmd_on = false;
    watch_q = -1;
    r_hold = 0;
    // the wait list, its credits and the poll flag start empty
    cw_buf.assign(kCwDepth, CwEntry{});
    cw_hp = cw_tp = cw_n = 0;
    cw_cred = 0;
    cw_poll = false;
    cw_push_now = cw_pop_now = cw_cred_pop = plan_kick_now = false;
    room_run = 0;
    seg_pend = SegPend{};
    seg_fifo = seg_pops = 0;
    seg_push_now = false;
    dut->sched_burst = burst;
    dut->sched_wqes = wqes_per_turn;
    dut.reset();
    reset_c = dut.cycle();
  }

  void configure(uint32_t q, int mtu, int log_sq, bool rts, int64_t psn = -1) {
    Qp& s = qps[q];
    s = Qp{};
    // a QP reset frees the QP's READ contexts (srnic_rd_ctx flush)
    const size_t held0 = rd_table.size();
    rd_table.erase(std::remove_if(rd_table.begin(), rd_table.end(), [&](const RdEntry& e) { return e.q == q; }),
                   rd_table.end());
    rd_gone += unsigned(held0 - rd_table.size());
    s.mtu = mtu;
    s.log_sq = log_sq;
    s.rts = rts;
    s.base = (rng.next() & 0x0000FFFFFFFFF000ull) + (rng.below(64) << 6);  // any 64-byte slot of a page
    s.pd = rng.u32();
    const uint32_t p24 = psn >= 0                ? uint32_t(psn) & kPsnMask
                         : rng.percent(40) ? kPsnMask - uint32_t(rng.below(50))
                                           : rng.u32() & kPsnMask;
    s.psn_u = s.hi_u = s.acked_u = (uint64_t(1) << 32) + p24;  // unwrapped, far from 0 both ways
    s.jc_psn = s.psn_u;
    s.una_u = s.psn_u;
    s.una_hist.assign(1, s.psn_u);
    s.ring.assign(size_t(1) << log_sq, Wqe{});
    s.ring_idx.assign(size_t(1) << log_sq, uint16_t(0xFFFF));
    for (size_t i = 0; i < 24; ++i) set_bits(dut->qp_cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, rng.next());
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->qp_cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
    put(kCQpn, q);
    put(kCState, rts ? kQpsRts : kQpsInit);  // (never RESET, whatever the random fields: only offer_reset)
    put(kCMtu, uint64_t(mtu));
    put(kCLogSq, uint64_t(log_sq));
    put(kCPd, s.pd);
    put(kCSqPsn, p24);
    put(kCSqBase, s.base);
    put(kCInitIdx, 1);
    put(kCInitSqPsn, 1);
    dut->qp_cmd_valid = 1;
    dut->kick_ready = 0;  // (no kick may go unseen meanwhile: the context waits' model)
    int i = 0;
    for (; i < kCmdWait; ++i) {  // the context RAMs clear themselves after reset
      drive_rdc_free();
      drive_qp_reset();
      dut.eval();
      answer_gens();
      drive_rdc_queries();
      dut.eval();
      const bool rdy = dut->qp_cmd_ready;
      if (dut->turn_end) ADD_FAILURE() << "bench: a turn ended while QP " << q << " was configured";
      cw_cycle_end(dut.cycle());
      dut.tick();
      if (rdy) break;
    }
    dut->qp_cmd_valid = 0;
    ASSERT_LT(i, kCmdWait) << "QP_MODIFY not taken";
    // the QP was reset (and set up again): srnic_core tells srnic_wqe_fetch once every block has
    // taken the command (the incarnation bump): the QP leaves the READ context wait list
    qp_reset_q.push_back(q);
    if (std::find(hot.begin(), hot.end(), q) == hot.end()) hot.push_back(q);
  }
  // One QP reset announced per cycle (qp_reset_valid, qp_reset_qpn), in the order they were made.
  void drive_qp_reset() {
    dut->qp_reset_valid = !qp_reset_q.empty();
    dut->qp_reset_qpn = qp_reset_q.empty() ? 0 : qp_reset_q.front();
    if (qp_reset_q.empty()) return;
    qp_reset_q.pop_front();
    ++qp_resets;
  }

  // ------------------------------------------------------------ incarnations (srnic_qp_gen)
  // The array's four read ports, answered combinationally (after an eval has settled the QPNs,
  // which come from registers and inputs only).
  void answer_gens() {
    dut->gen_a = gen_tab[size_t(dut->gen_a_qpn)];
    dut->gen_b = gen_tab[size_t(dut->gen_b_qpn)];
    dut->gen_c = gen_tab[size_t(dut->gen_c_qpn)];
    dut->gen_d = gen_tab[size_t(dut->gen_d_qpn)];
  }
  // q's incarnation, or (stale) one of the 15 others
  uint8_t other_gen(uint32_t q, bool stale) {
    return uint8_t((gen_tab[q] + (stale ? rng.range(1, 15) : 0)) & 15);
  }
  // q is reset (its incarnation moves on) while no turn of it is in flight: every segment of it
  // still to be cut was planned for the old incarnation and must be dropped whole when it
  // reaches the cutter (stale_drop, no job, no READ context), in order, and the QP leaves the
  // READ context wait list (qp_reset_valid in the next cycle). The bench's send state stays
  // where the DUT's is (the block keeps its state; a real reset also re-creates the QP).
  void reset_incarnation(uint32_t q) {
    Qp& s = qps[q];
    ASSERT_EQ(s.fly_n, 0) << "bench: QP " << q << " reset with a turn in flight";
    gen_tab[q] = other_gen(q, true);
    qp_reset_q.push_back(q);  // (srnic_core's incarnation bump: the QP leaves the wait list)
    const uint32_t m = mtu_b(s);
    for (const Seg& g : s.segs) {
      // its packets (a READ: one request) are never sent
      s.planned -= g.w.op == kRead ? 1 : std::max<uint64_t>(1, (g.end - g.e + m - 1) / m);
      s.stale_segs.push_back(g);
      ++stale_segs_n;
    }
    s.segs.clear();
    // the cutter's head segment is the QP's oldest: a packet of it offered in the last cycle and
    // not taken stays offered
    if (held_last && held_q == q && !s.stale_segs.empty()) s.stale_segs.front().offered = true;
  }
  // The cutter dropped the segment at its head (gen_b_qpn's), planned for an earlier incarnation.
  void stale_segment(uint64_t c) {
    const uint32_t q = dut->gen_b_qpn;
    Qp& s = qps[q];
    ASSERT_FALSE(s.stale_segs.empty()) << "cycle " << c << ": stale_drop with no stale rewind, stop or segment (the "
                                       << "cutter's QP " << q << " has " << s.segs.size() << " segments, none stale)";
    const Seg g = s.stale_segs.front();
    s.stale_segs.pop_front();
    --stale_segs_n;
    ++seg_pops;
    EXPECT_NE(g.gen, gen_tab[q]) << "cycle " << c << " QP " << q << ": segment of the current incarnation dropped";
    if (g.w.op == kRead) {  // its context was reserved at its MR request, and it held back fences
      EXPECT_GT(rd_resv, 0u) << "cycle " << c;
      EXPECT_GT(s.rd_resv, 0u) << "cycle " << c << " QP " << q;
      if (rd_resv > 0) --rd_resv;
      if (s.rd_resv > 0) --s.rd_resv;
      --s.rd_busy;
    }
    ++seg_drops;
  }
  // Offers a QP_MODIFY to RESET of q on the command port (state RESET, no init flags, the other
  // fields random); cycle() keeps it there until it is taken (cmd_taken: that cycle). The DUT
  // writes the configuration (state RESET) at once, so no later turn reads WQEs (the reference:
  // q not in RTS), and the send state once no turn of q is in flight (decision 125).
  void offer_reset(uint32_t q) {
    fill_reset_cmd(dut->qp_cmd, rng, q);
    cmd_on = true;
    cmd_q = q;
    cmd_offered = dut.cycle();
    cmd_taken = cmd_busy_c = cmd_early = 0;
    qps[q].rts = false;
  }
  // In every cycle (its values settled): the QP_MODIFY offered during traffic must not be taken
  // while a turn of its QP is in flight (from its WQE read to its end in the plan stage) or in the
  // issue stage; each job of the watched QP offered must carry incarnation watch_gen.
  void watch_cmd_and_jobs(uint64_t c) {
    if (cmd_on) {
      const Qp& s = qps[cmd_q];
      const bool busy = s.fly_n > 0 || (iss_on && iss_q == cmd_q);
      if (busy) ++cmd_busy_c;
      if (dut->qp_cmd_ready) {
        if (busy) {
          ++cmd_early;
          ADD_FAILURE() << "cycle " << c << ": QP_MODIFY to RESET of QP " << cmd_q << " taken " << c - cmd_offered
                        << " cycles after it was offered, while "
                        << (s.fly_n > 0 ? std::to_string(s.fly_n) + " turn(s) of the QP are in flight (" +
                                              std::to_string(s.reads_out) + " WQE read(s) of it outstanding)"
                                        : std::string("a turn of the QP is in the issue stage"))
                        << ": it must wait until they ended (a turn planned after the reset's incarnation move "
                        << "stamps the jobs of WQEs posted before the reset with the new incarnation)";
        }
        cmd_taken = c;
        cmd_on = false;
      }
    }
    if (watch_q >= 0 && dut->job_valid && uint32_t(kJob.get(dut->job, kQpn)) == uint32_t(watch_q)) {
      const unsigned g = unsigned(kJob.get(dut->job, kJobGen));
      if (g == watch_gen && dut->job_ready) ++watch_taken;
      if (g != watch_gen && watch_bad++ == 0)
        ADD_FAILURE() << "cycle " << c << ": job of QP " << watch_q << " (opcode 0x" << std::hex
                      << kJob.get(dut->job, kOpcode) << ", PSN 0x" << kJob.get(dut->job, kPsn) << std::dec
                      << ") offered with incarnation " << g << ", not " << unsigned(watch_gen)
                      << (watch_moved ? ", the one of the WQEs posted before the reset (it moved to " +
                                            std::to_string(gen_tab[size_t(watch_q)]) + " at cycle " +
                                            std::to_string(watch_moved) + "): a request posted before the "
                                            "reset is sent after it"
                                      : std::string(", the QP's"));
    }
  }
  // A rewind or stop of q made for an earlier incarnation (late work of a reset QP: random
  // contents), offered alone on its port; it must be dropped as it arrives. Not while segments
  // are stale (one stale_drop bit for all of them).
  void offer_stale_rewind(uint32_t q) {
    Rewind r{q, rng.percent(80), rng.percent(30), uint16_t(rng.u32()), uint32_t(rng.below(64)) * 256,
             rng.next() & kPsnMask, uint8_t(rng.below(32)), rng.percent(30), true};
    rw_q.push_back(r);
  }
  void offer_stop(uint32_t q, bool stale) { stop_q.push_back({q, stale}); }

  uint32_t mtu_b(const Qp& s) const { return 128u << s.mtu; }
  static uint32_t npk_of(uint32_t len, uint32_t m) { return len == 0 ? 1 : (len + m - 1) / m; }

  // Posts a random WQE (if the ring has room).
  bool post(uint32_t q, unsigned p_big, int op = -1, int flags = -1, int64_t len = -1) {
    Qp& s = qps[q];
    const uint32_t size = 1u << s.log_sq;
    if (unacked(s) >= size) return false;
    // a slot a turn of the QP may still read is not written (turn reference): the reference
    // plans the turn from the slots at its WQE read and checks its MR requests against them
    // until its end
    if (s.open > 0 && uint16_t(s.posted - size - s.prot_lo) < uint16_t(s.prot_hi - s.prot_lo)) return false;
    Wqe w{};
    w.op = op >= 0         ? uint8_t(op)
           : read_pct < 0  ? uint8_t(rng.below(5))
           : rng.percent(unsigned(read_pct)) ? kRead
                                             : uint8_t(rng.below(4));
    w.flags = flags >= 0 ? uint8_t(flags) : uint8_t((rng.u8() & ~kFence) | (rng.percent(fence_pct) ? kFence : 0));
    w.imm = rng.u32();
    const uint32_t m = mtu_b(s);
    if (len >= 0) w.len = uint32_t(len);
    else switch (rng.below(6)) {
      case 0: w.len = rng.percent(50) ? 0 : uint32_t(rng.range(1, 63)); break;
      case 1: w.len = m * uint32_t(rng.range(1, 3)); break;
      case 2: w.len = uint32_t(rng.range(1, m)); break;
      default: w.len = uint32_t(rng.range(0, rng.percent(p_big) ? 3 * m : m)); break;
    }
    w.lkey = rng.u32() & 0xFFFFF;
    key_ops[w.lkey] |= w.op == kRead ? 1 : 2;  // which kinds of WQE use this local key
    w.rkey = rng.u32();
    w.wr_id = rng.next();
    w.laddr = rng.next() >> 8;
    w.raddr = rng.next();
    const size_t slot = s.posted & (size - 1);
    s.ring[slot] = w;
    s.ring_idx[slot] = s.posted;
    ++s.posted;
    return true;
  }

  static uint16_t unacked(const Qp& s) { return uint16_t(s.posted - s.ci_base); }
  // the send state lies behind the oldest WQE not acknowledged (after a rewind that
  // acknowledgements overtook)
  static bool behind(const Qp& s) { return uint16_t(s.ci - s.ci_base) > unacked(s); }
  // WQE idx as its slot holds it (posted, or acknowledged and its slot not yet reused)
  Wqe& wqe_at(Qp& s, uint16_t idx) {
    const size_t slot = idx & (s.ring.size() - 1);
    if (s.ring_idx.at(slot) != idx)
      ADD_FAILURE() << "bench: WQE " << idx << " is no longer in its slot (" << s.ring_idx[slot] << ")";
    return s.ring[slot];
  }
  bool posted_idx(const Qp& s, uint16_t idx) const { return uint16_t(idx - s.ci_base) < unacked(s); }
  // marks WQE idx acknowledgeable, if its slot still holds it (a resent WQE may have been
  // acknowledged, from its first transmission, and its slot reused while its jobs leave)
  static void mark_done(Qp& s, uint16_t idx) {
    const size_t slot = idx & (s.ring.size() - 1);
    if (s.ring_idx[slot] == idx) s.ring[slot].done = true;
  }

  // One planned segment of WQE idx: [off, off + seg) of a SEND/WRITE, or the rest of a READ
  // from off (one request).
  void plan_segment(Qp& s, uint16_t idx, uint32_t off, uint32_t seg) {
    Wqe& w = wqe_at(s, idx);
    const uint32_t m = mtu_b(s);
    if (off == 0 && !w.planned) {
      w.planned = true;
      w.first_u = s.psn_u;
    }
    EXPECT_EQ(s.psn_u, w.first_u + off / m) << "bench: WQE " << idx << " planned again at another PSN";
    const bool rd = w.op == kRead;
    const uint32_t bytes = rd ? w.len - off : seg;
    const uint32_t np = npk_of(bytes, m);
    s.segs.push_back({idx, w, off, off + seg, off, s.psn_u, s.hi_u, gen_tab[size_t(&s - qps.data())]});
    s.psn_u += np;
    s.planned += rd ? 1 : np;
    s.hi_u = std::max(s.hi_u, s.psn_u);
  }

  // The job the front segment of q makes next.
  Job next_job(Qp& s) { return make_job(s, s.segs.front()); }
  // The job segment g of q makes next.
  Job make_job(const Qp& s, const Seg& g) const {
    const Wqe& w = g.w;
    const uint32_t m = mtu_b(s);
    const uint64_t pa = translate(w.lkey, w.laddr);
    Job j{};
    j.gen = g.gen;
    j.idx = g.idx;
    j.flags = w.flags;
    j.rkey = w.rkey;
    j.immdt = w.imm;
    j.psn_u = g.psn_u;
    j.resend = g.psn_u < g.hi_u;
    if (w.op == kRead) {
      const uint32_t rlen = w.len - g.off;
      j.opcode = kOpReadReq;
      j.npk = npk_of(rlen, m);
      j.pa = pa + g.off;
      j.ackreq = j.reth = j.read = j.wqe_end = true;
      j.first = g.off == 0;
      j.reth_va = w.raddr + g.off;
      j.reth_len = rlen;
      j.last_len = rlen - (j.npk - 1) * m;
      return j;
    }
    const bool send = w.op == kSend || w.op == kSendImm, imm = w.op == kSendImm || w.op == kWriteImm;
    const uint32_t remain = w.len - g.e;
    const bool last = remain <= m, first = g.e == 0;
    const uint32_t plen = last ? remain : m;
    uint8_t op;
    if (send) op = first && last ? (imm ? 0x05 : 0x04) : first ? 0x00 : last ? (imm ? 0x03 : 0x02) : 0x01;
    else op = first && last ? (imm ? 0x0B : 0x0A) : first ? 0x06 : last ? (imm ? 0x09 : 0x08) : 0x07;
    j.opcode = op;
    j.len = plen;
    j.npk = 1;
    j.pay_addr = pa + g.e;
    j.ackreq = last || (g.psn_u & ack_m) == ack_m;  // (every 64th PSN, or W/4-th under a window)
    j.se = last && (w.flags & 4);
    j.reth = !send && first;
    j.reth_va = w.raddr;
    j.reth_len = w.len;
    j.imm = imm && last;
    j.wqe_end = last;
    j.first = first;
    return j;
  }
  // The front segment of q made its next job.
  void pop_job(Qp& s, const Job& j) {
    Seg& g = s.segs.front();
    if (j.read) {
      s.segs.pop_front();
      ++seg_pops;
      return;
    }
    g.e += j.len;
    ++g.psn_u;
    if (g.e >= g.end) {
      s.segs.pop_front();
      ++seg_pops;
    }
  }

  // ------------------------------------------------------------ the turn reference
  struct Turn {
    uint32_t q;
    uint16_t ci0;  // first WQE read
    bool work;
    uint64_t addr;
    int n;
    bool more = false;   // done_more
    bool flush = false;  // a stopped QP's turn that reports new WQEs for flushing (pushed, no WQE read)
  };
  // Plans a turn of q from the reference state and the producer index pi read at hand-out, in
  // the cycle the DUT decides it (no turn of q in flight): its WQE read, the jobs of every
  // segment it plans, done_more.
  // una: the QP's oldest unacknowledged PSN the DUT's turn plans with (ar_una): a resend passes
  // over the packets of a SEND or WRITE before it, never the WQE's last packet.
  Turn plan(uint32_t q, uint16_t pi, uint32_t una) {
    Qp& s = qps[q];
    Turn t{q, s.ci, false, 0, 0};
    const uint16_t avail = uint16_t(pi - s.ci);
    if (s.err) {
      // stopped: no WQE read; WQEs posted since the last report are reported for flushing
      if (pi != s.fl_pi) {
        ev_expect.push_back({kCevLerr, q, uint32_t(s.psn_u) & kPsnMask, pi, 5, gen_tab[q]});
        s.fl_pi = pi;
        t.flush = true;
      }
      ++idle_turns;
      return t;
    }
    if (!s.rts || avail == 0 || s.park) {
      ++idle_turns;
      if (s.park) ++parked_turns;
      return t;
    }
    if (s.fwait && s.rd_busy > 0) {
      // waiting at a fenced WQE: the turn ends without a WQE read, the QP is requeued
      t.more = true;
      ++fence_idle;
      return t;
    }
    s.rec = TurnRec{};
    s.free_ok = s.rd_busy > 0 ? s.rd_busy - 1 : 0;
    s.fwait = false;
    const uint16_t size = uint16_t(1u << s.log_sq);
    const uint16_t slot = uint16_t(s.ci & (size - 1));
    t.addr = s.base + (uint64_t(slot) << 6);
    int n = std::min<int>(avail, wqes_per_turn);
    n = std::min<int>(n, size - slot);
    n = std::min<int>(n, 64 - int((t.addr >> 6) & 63));
    t.work = true;
    t.n = n;
    t.more = uint16_t(t.ci0 + n) != pi;  // WQEs beyond the ones read
    s.rec.work = true;
    s.rec.ci0 = t.ci0;
    s.rec.n = n;
    s.rec.pi = pi;
    s.rec.beat_at.assign(size_t(n), 0);
    const uint32_t m = mtu_b(s);
    uint32_t budget = burst;
    int started = 0;
    uint64_t bytes = 0;
    for (int k = 0; k < n; ++k) {
      const uint16_t held = s.ring_idx[s.ci & (size - 1)];
      if (held != s.ci) {
        const uint16_t ahead = uint16_t(held - s.ci);
        if ((ahead & (size - 1)) == 0 && !(ahead & 0x8000)) {
          // a newer WQE in the slot (the one read for was acknowledged): stop in front of it,
          // park, report
          s.park = true;
          s.rec.stale = true;
        } else {
          // a wrong index: refused like a malformed WQE, the QP stops
          ev_expect.push_back({kCevLerr, q, uint32_t(s.psn_u) & kPsnMask, pi, kWcLocQpOpErr, gen_tab[q]});
          s.err = true;
          s.refd = true;
          s.rec.bad = true;
          s.fl_pi = pi;
        }
        break;
      }
      const Wqe& w = wqe_at(s, s.ci);
      if ((w.flags & kFence) && s.off == 0 && s.rd_busy > 0) {
        s.fwait = true;  // stop in front of it
        s.rec.fence_stop = true;
        ++fence_stops;
        break;
      }
      const bool ignored = (w.flags & kFence) && s.off != 0 && s.rd_busy > 0;
      if (ignored) ++fence_ignored;
      ++started;
      const bool rd = w.op == kRead;
      s.rec.steps.push_back({s.ci, rd, s.off == 0 && !w.planned, ignored, s.off, s.psn_u, s.hi_u, s.planned});
      if (rd) ++s.rd_busy;
      const uint32_t behind = (una - uint32_t(s.psn_u)) & kPsnMask;
      const uint32_t left = npk_of(w.len - s.off, m);
      if (!rd && s.hi_u > s.psn_u && behind != 0 && behind < 0x800000u && left > 1) {  // (resending only)
        const uint32_t n = std::min(behind, left - 1);  // never the last packet
        s.off += n * m;
        s.psn_u += n;
        if (behind >= left) ++skipped_wqes;  // all of it before una: its last packet alone
        else ++skipped_inside;
      }
      const uint32_t remain = w.len - s.off;
      const uint32_t bud_pk = uint32_t((uint64_t(budget) + m - 1) / m * m);
      const uint32_t seg = rd ? remain : std::min(remain, bud_pk);
      const bool done = rd || seg == remain;
      const uint32_t cost = (rd || seg < 64) ? 64 : seg;
      const bool out = cost >= budget;
      bytes += rd ? 0 : seg;
      plan_segment(s, s.ci, s.off, seg);
      budget = out ? 0 : budget - cost;
      if (done) {
        ++s.ci;
        s.off = 0;
      } else {
        s.off += seg;
      }
      if (!done || out) break;
    }
    EXPECT_LE(started, int(wqes_per_turn));
    EXPECT_LE(bytes, uint64_t(burst) + m);
    ++work_turns;
    return t;
  }

  // ------------------------------------------------------------ READ context reservation
  // srnic_rd_ctx's n_free: the free entries of the table as it stood in the previous cycle
  // (frees of this cycle are applied before, inserts and flushes after the call); n_freed: the
  // entries that left it at the last edge (this cycle's frees, the last cycle's flushes and QP
  // resets).
  void drive_rdc_free() {
    dut->rdc_free = uint8_t(rdc_free_next);
    rdc_free_next = unsigned(rd_cap - rd_table.size());
    freed_now = rd_gone;
    dut->rdc_freed = uint8_t(freed_now);
    rd_gone = 0;
  }
  unsigned held_by(uint32_t q) const {
    unsigned n = 0;
    for (const RdEntry& e : rd_table) n += e.q == q;
    return n;
  }
  // srnic_rd_ctx's combinational answers for the query QPNs (registers, settled by an eval):
  // READs outstanding (fence), the entries of the plan stage's QP (its share). Also what the
  // DUT decides on in this cycle, as it begins: global room (rdc_free covers the READs started
  // and not in the table + 2), the plan stage's QP with its entries and its READs started and
  // not in the table, contexts spare (rdc_free covers those READs + 2 + RD_RESERVE); the last
  // cycles without room.
  void drive_rdc_queries() {
    const uint64_t c = dut.cycle();
    dut->rdc_qa_busy = rd_has(dut->rdc_qa_qpn);
    dut->rdc_qb_busy = rd_has(dut->rdc_qb_qpn);
    pq0 = uint32_t(dut->rdc_qb_qpn);
    p_held0 = held_by(pq0);
    dut->rdc_qb_cnt = uint8_t(p_held0);
    p_resv0 = qps[pq0].rd_resv;
    resv0 = rd_resv;
    room0 = unsigned(dut->rdc_free) >= resv0 + 2;
    spare0 = unsigned(dut->rdc_free) >= resv0 + 2 + kRdReserve;
    if (!room0) last_short = c;
    if (!share_room0()) qps[pq0].share_short = c;
    // turn reference: the DUT's own reservations (the READs in its segment FIFO) and global room
    // by them, in every cycle (the poll looks at it whatever the plan stage does)
    seg_push_now = seg_pend.on && c >= seg_pend.ready && seg_fifo < kSegFifo;
    room_dut0 = unsigned(dut->rdc_free) >= resv0 - (seg_pend.on && seg_pend.read ? 1u : 0u) + 2;
  }
  // the plan stage's QP has room by its share in this cycle: under RD_SHARE (its entries and its
  // READs started and not in the table), or contexts spare (it borrows)
  bool share_room0() const { return p_held0 + p_resv0 < kRdShare || spare0; }
  // the plan stage's QP q has room for a READ in this cycle: both rules
  bool room_for(uint32_t q) const { return room0 && q == pq0 && share_room0(); }

  // The plan stage's segment FIFO (turn reference): a WQE started (its MR request) is planned into
  // it in the cycle after the MR table's answer (two cycles after the request) or, while it is
  // full, once it is not; a segment leaves with its last packet (a READ: its request) or dropped
  // stale. The DUT's reservations (rd_resv) are the READs in it: the bench's (READs started and
  // not in the table) but for a READ started and not yet in the FIFO. The plan stage decides on
  // a READ only once the WQE before it is in the FIFO (there both counts agree); the poll looks at
  // global room in any cycle.
  void seg_fifo_cycle_end() {
    if (seg_push_now) {
      ++seg_fifo;
      seg_pend.on = false;
    }
    if (seg_pops > seg_fifo) ADD_FAILURE() << "bench: more segments left the segment FIFO than were planned";
    seg_fifo -= std::min(seg_pops, seg_fifo);
    seg_pops = 0;
    seg_push_now = false;
  }

  // A READ of q started (its MR request): a context must be there for it (global room):
  // rdc_free, a cycle late, must cover the READs started and not yet in the table, this one, and
  // one inserted in the previous cycle (not yet counted); and q must have room by its share: the
  // entries q holds and q's READs started and not yet in the table fewer than RD_SHARE, or else
  // RD_RESERVE contexts left free beyond that (the cycle's values as it began, before this
  // cycle's inserts and drops).
  void read_started(uint32_t q, const std::string& at) {
    EXPECT_GE(unsigned(dut->rdc_free), resv0 + 2)
        << at << ": READ started with " << resv0 << " READs started and not in the table and "
        << unsigned(dut->rdc_free) << " contexts free (a cycle ago)";
    EXPECT_EQ(pq0, q) << at << ": rdc_qb_qpn is not the plan stage's QP";
    EXPECT_TRUE(share_room0()) << at << ": READ started with the QP holding " << p_held0 << " contexts and "
                               << p_resv0 << " READs started and not in the table (its share: " << kRdShare
                               << ") and " << unsigned(dut->rdc_free) << " contexts free (a cycle ago) for "
                               << resv0 << " READs started (to borrow: " << resv0 + 2 + kRdReserve << ")";
    Qp& s = qps[q];
    if (p_held0 + p_resv0 >= kRdShare) ++borrows;
    ++rd_resv;
    ++s.rd_resv;
    max_share = std::max(max_share, held_by(q) + s.rd_resv);
    ++ctx_checks;
  }

  // An MR request: the next WQE of the turn in the plan stage (turns reach the plan stage in
  // ring order; each WQE a turn starts asks once). A READ must have a context for it and room
  // in its QP's share (read_started).
  void mr_request(uint64_t c) {
    ASSERT_TRUE(!flight.empty() && flight.front().kind == kFlWork)
        << "cycle " << c << ": MR request without a turn with a WQE read in the plan stage";
    const uint32_t q = flight.front().q;
    EXPECT_EQ(unsigned(dut->turn_qpn), q) << "cycle " << c << ": turn_qpn of the plan stage's turn";
    Qp& s = qps[q];
    TurnRec& r = s.rec;
    ASSERT_LT(r.mr, r.steps.size()) << "cycle " << c << " QP " << q << ": MR request beyond the " << r.steps.size()
                                    << " WQEs the turn starts";
    const Step& st = r.steps[r.mr];
    const Wqe& w = wqe_at(s, st.idx);
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) + " WQE " + std::to_string(st.idx);
    EXPECT_EQ(uint32_t(dut->mr_key), w.lkey) << at << ": MR request";
    EXPECT_EQ(uint64_t(dut->mr_va), w.laddr) << at << ": MR request";
    EXPECT_EQ(uint32_t(dut->mr_len), w.len) << at << ": MR request";
    EXPECT_EQ(unsigned(dut->mr_access), st.read ? 1u : 0u) << at << ": MR request rights";
    if (st.read) read_started(q, at);
    ++r.mr;
    r.last_mr = c;
    // its segment enters the segment FIFO once the MR table has answered (two cycles)
    EXPECT_FALSE(seg_pend.on) << at << ": MR request before the last WQE's segment was planned";
    seg_pend = SegPend{true, st.read, c + 3};
  }

  // ------------------------------------------------------------ the stream reference
  // A WQE read of q's turn (n beats): the slots read hold WQEs posted, not yet sent whole and
  // acknowledged, and below the producer index the turn read at hand-out (indices
  // [ci_base, pi_seen); the slot names the index, as at most a ring of WQEs is posted and not
  // acknowledged), inside the ring. Returns the first index.
  uint16_t stream_read(uint64_t c, uint32_t q, int n) {
    Qp& s = qps[q];
    const uint64_t size = s.ring.size(), a = dut->ar_addr;
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) + ": WQE read";
    EXPECT_LE(n, int(ar_wqes)) << at << " of " << n << " WQEs (sched_wqes " << ar_wqes << " when it was offered)";
    EXPECT_TRUE(a >= s.base && ((a - s.base) & 63) == 0 && ((a - s.base) >> 6) + uint64_t(n) <= size)
        << at << " at 0x" << std::hex << a << " outside the ring at 0x" << s.base;
    const uint16_t slot = uint16_t((a - s.base) >> 6);
    const uint16_t idx = uint16_t(s.ci_base + (uint16_t(slot - s.ci_base) & (size - 1)));
    EXPECT_LE(uint16_t(idx + n - s.ci_base), uint16_t(s.pi_seen - s.ci_base))
        << at << " of WQEs " << idx << ".." << idx + n - 1 << ": posted, not acknowledged and below the producer "
        << "index read are " << s.ci_base << ".." << s.pi_seen - 1;
    return idx;
  }

  // An MR request (stream reference): the plan stage's turn (turn_qpn) starts a WQE of its QP:
  // the QP's first, or the one of its last MR request (continued after a turn ended inside
  // it, or read again after a stop in front of a READ), or the next; one posted and not yet
  // sent whole. Key, address, length and rights are the WQE's; a READ has a context reserved
  // and room in its QP's share (as in mr_request).
  void mr_request_stream(uint64_t c) {
    const uint32_t q = dut->turn_qpn;
    ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
    Qp& s = qps[q];
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) + ": MR request";
    auto fits = [&](uint16_t i) {
      if (uint16_t(i - s.jc_idx) >= uint16_t(s.pi - s.jc_idx)) return false;
      const Wqe& w = wqe_at(s, i);
      return uint32_t(dut->mr_key) == w.lkey && uint64_t(dut->mr_va) == w.laddr && uint32_t(dut->mr_len) == w.len;
    };
    uint16_t idx = s.jc_idx;
    if (s.mr_any) {
      idx = uint16_t(s.mr_last + 1);
      if (!fits(idx)) idx = s.mr_last;
    }
    ASSERT_TRUE(fits(idx)) << at << " (key 0x" << std::hex << unsigned(dut->mr_key) << " va 0x" << uint64_t(dut->mr_va)
                           << std::dec << " length " << unsigned(dut->mr_len) << ") is not for WQE " << idx
                           << (s.mr_any ? " or the one before (the last MR request's)" : " (the QP's first)")
                           << "; next packet: WQE " << s.jc_idx << ", posted up to " << s.pi;
    const bool rd = wqe_at(s, idx).op == kRead;
    EXPECT_EQ(unsigned(dut->mr_access), rd ? 1u : 0u) << at << " rights";
    if (rd) read_started(q, at);
    s.mr_any = true;
    s.mr_last = idx;
  }

  // The end of q's work turn in the plan stage (turn_end; `from`: the cycle after the plan
  // stage's previous turn end). If the DUT started fewer WQEs than the reference, it must have
  // stopped in front of a READ for want of a context: the reference rolls back to the state
  // before that READ, and cstop is set. The stop must have been needed: in some cycle since
  // the DUT could have looked at the READ (after the turn's previous MR request, the READ's WQE
  // beat, and the plan stage's previous turn end) rdc_free was below the READs started and not
  // in the table + 2, or q had no room by its share (q the plan stage's QP, its entries and its
  // READs started and not in the table at least RD_SHARE, and rdc_free below those READs + 2 +
  // RD_RESERVE).
  void end_turn(uint32_t q, uint64_t c, uint64_t from, bool& cstop) {
    Qp& s = qps[q];
    TurnRec& r = s.rec;
    cstop = false;
    if (r.mr == r.steps.size()) return;
    const Step& st = r.steps[r.mr];
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) + ": turn ended after " +
                           std::to_string(r.mr) + " of the " + std::to_string(r.steps.size()) +
                           " WQEs the reference starts, in front of WQE " + std::to_string(st.idx);
    ASSERT_TRUE(st.read) << at << " (not a READ)";
    from = std::max(from, r.beat_at.at(r.mr) + 1);
    if (r.mr > 0) from = std::max(from, r.last_mr + 1);
    const bool global = last_short >= from, share = s.share_short >= from;
    if (!global && !share)
      ADD_FAILURE() << at << " (a READ) although rdc_free covered the READs started and not in the table + 2 and "
                    << "the QP had room by its share in every cycle since " << from;
    rollback(s, r.mr);
    ++ctx_stops;
    if (share) ++share_stops;
    if (!share) ++global_stops;
    cstop = true;
  }

  // The reference state of q's turn as it was before it started steps[k].
  void rollback(Qp& s, size_t k) {
    TurnRec& r = s.rec;
    const size_t drop = r.steps.size() - k;
    ASSERT_GE(s.segs.size(), drop) << "jobs sent of WQEs the DUT did not start";
    for (size_t j = k; j < r.steps.size(); ++j) {
      const Step& st = r.steps[j];
      EXPECT_EQ(s.segs[s.segs.size() - drop + (j - k)].idx, st.idx) << "bench: segment order";
      if (st.read) --s.rd_busy;
      if (st.fresh) wqe_at(s, st.idx).planned = false;
      if (st.fence_ignored) --fence_ignored;
    }
    s.segs.resize(s.segs.size() - drop);
    const Step& st = r.steps[k];
    s.ci = st.idx;
    s.off = st.off;
    s.psn_u = st.psn_u;
    s.hi_u = st.hi_u;
    s.planned = st.planned;
    if (r.fence_stop) {  // the fence stop came later in the plan
      --fence_stops;
      s.fwait = false;
      r.fence_stop = false;
    }
    if (r.stale) {  // so did the reused slot (a turn with work starts unparked)
      s.park = false;
      r.stale = false;
    }
    r.steps.resize(k);
  }

  // ------------------------------------------------------------ per cycle
  struct Knobs {
    unsigned post = 20, hand = 60, done = 80, ar = 70, lat = 20, rdc = 80, job = 80;
    unsigned lat_min = 0;       // WQE read latency: lat_min..lat cycles
    unsigned rw = 0;            // per-cycle chance of a random rewind (0: none)
    unsigned rw_zero = 10;      // % of random rewinds with apply 0
    unsigned rw_rnr = 30;       // % of random rewinds that park the QP (RNR)
    unsigned note = 70, kick = 70, rnr = 70;  // readiness of the RX engine, scheduler, timers
    unsigned up_stray = 0;      // per-cycle chance of an unparking answer for a QP that is not parked
    unsigned ack = 0;           // per-cycle chance of acknowledging WQEs of a QP
    bool reuse = false;         // acknowledgements may overtake rewinds (slots reused behind the send state)
    unsigned stale = 70;        // readiness of the RX engine for reused-slot reports
    unsigned up_zero = 0;       // % of unparking answers with apply 0
    // acknowledgements to the in-flight cap (window tests): per-cycle chance of one, % of them
    // acknowledging everything sent (else a random prefix), % stale (older than una), readiness
    // of the bench to present the next one (ack_valid)
    unsigned wack = 0, wack_all = 0, wack_stale = 0, wack_v = 100;
    // per-cycle chance of a rewind / stop request made for an earlier incarnation of a QP
    unsigned rw_stale = 0, stop_stale = 0;
    // per-cycle chance of a QP reset (its incarnation moves on: turn reference, a QP without a
    // turn in flight or a segment to cut)
    unsigned qreset = 0;
  };

  // The bench's READ context table: frees due entries (turn reference: not below one
  // outstanding READ of a QP whose work turn is in flight, so the reference knows what the
  // turn's fence checks see).
  void free_reads(uint64_t c) {
    for (size_t i = 0; i < rd_table.size();) {
      RdEntry& e = rd_table[i];
      Qp& s = qps[e.q];
      if (e.free_at <= c && (!s.fly || s.free_ok > 0)) {
        if (s.fly) --s.free_ok;
        if (e.real) mark_done(s, e.idx);  // its responses are in
        --s.rd_busy;
        ++rd_frees;
        ++rd_gone;
        last_free_cycle = c;
        rd_table.erase(rd_table.begin() + long(i));
      } else {
        ++i;
      }
    }
  }
  bool rd_has(uint32_t q) const {
    for (const RdEntry& e : rd_table)
      if (e.q == q) return true;
    return false;
  }
  // A READ of q outstanding for `hold` cycles that no job inserted (srnic_rd_ctx busy for q).
  void inject_read(uint32_t q, uint64_t hold) {
    rd_table.push_back({q, dut.cycle() + hold, false});
    ++qps[q].rd_busy;
  }

  // A random rewind of q as the completion engine would send it: to a packet already
  // planned and not acknowledged, not past the first READ still outstanding (inside one in
  // srnic_rd_ctx: a partial re-read). False if q has none to offer now.
  bool pick_rewind(uint32_t q, const Knobs& k, Rewind& r) {
    Qp& s = qps[q];
    if (s.rw_open || (s.err && !s.refd) || !s.rts || behind(s)) return false;
    const uint32_t m = mtu_b(s);
    auto pos = [&](uint16_t i) { return uint16_t(i - s.ci_base); };
    // the last WQE that may be resent, and how many of its packets (from its start)
    uint16_t lim = s.ci;
    uint32_t lim_pk = s.off / m;
    for (const Seg& g : s.segs)
      // a READ planned and not sent: from its start only (not one acknowledged meanwhile: its
      // resend is queued behind a rewind, its first transmission's ACK arrived)
      if (g.w.op == kRead && posted_idx(s, g.idx)) {
        if (pos(g.idx) < pos(lim)) {
          lim = g.idx;
          lim_pk = 1;
        }
        break;
      }
    for (const RdEntry& e : rd_table)
      if (e.q == q && e.real && posted_idx(s, e.idx) && pos(e.idx) < pos(lim)) {
        lim = e.idx;
        lim_pk = npk_of(wqe_at(s, e.idx).len, m);
      }
    const uint16_t n = uint16_t(pos(lim) + (lim_pk > 0 ? 1 : 0));
    if (n == 0) return false;
    const uint16_t i = uint16_t(s.ci_base + rng.below(n));
    const Wqe& w = wqe_at(s, i);
    if (!w.planned) {
      ADD_FAILURE() << "bench: QP " << q << " WQE " << i << " passed but never planned";
      return false;
    }
    const uint32_t npk = i == lim ? lim_pk : npk_of(w.len, m);
    const uint32_t kp = rng.percent(40) ? 0 : uint32_t(rng.below(npk));
    r.q = q;
    r.apply = !rng.percent(k.rw_zero);
    r.rnr = rng.percent(k.rw_rnr);
    r.ci = i;
    r.off = kp * m;
    r.psn_u = w.first_u + kp;
    r.code = uint8_t(rng.below(32));
    return true;
  }

  void offer_rewind(const Rewind& r) {
    rw_q.push_back(r);
    qps[r.q].rw_open = true;
  }

  void drive_rw(Rewind& r) {
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->rw, kRewind.at(f).lsb, kRewind.at(f).width, v); };
    for (size_t f = 0; f < kRewind.widths.size(); ++f) put(f, rng.next());  // fields apply 0 does not use
    r.gen = other_gen(r.q, r.stale);
    put(kRwGen, r.gen);
    put(kRwQpn, r.q);
    put(kRwApply, r.apply);
    put(kRwUp, r.up);
    if (r.apply) {
      put(kRwCi, r.ci);
      put(kRwOff, r.off);
      put(kRwPsn, r.psn_u & kPsnMask);
      put(kRwRnr, r.rnr);
      put(kRwCode, r.code);
    }
  }

  // The completion engine acknowledges WQEs that left whole (a READ: its responses are in), in
  // order; their ring slots are free. Without `reuse` never at or after the send state nor
  // while a rewind of the QP is open; with it also beyond (what was sent before a rewind).
  void ack_some(uint32_t q, bool reuse) {
    Qp& s = qps[q];
    if (s.rw_open && !reuse) return;
    // (the reference's send state has moved past the turn in flight, which may still end in
    // front of a READ: without reuse only what lies before the QP's open turns)
    const uint16_t at = s.open > 0 ? s.prot_lo : s.ci;
    const uint16_t lim = reuse ? unacked(s) : uint16_t(at - s.ci_base) > unacked(s) ? uint16_t(0) : uint16_t(at - s.ci_base);
    uint16_t n = 0;
    while (n < lim && wqe_at(s, uint16_t(s.ci_base + n)).done) ++n;
    if (n == 0) return;
    for (uint16_t k = uint16_t(rng.range(1, n)); k > 0; --k) ack_one(s);
  }
  void ack_one(Qp& s) {
    const Wqe& w = wqe_at(s, s.ci_base);
    EXPECT_TRUE(w.planned && w.first_u == s.acked_u) << "bench: WQE " << s.ci_base << " acknowledged, first PSN "
                                                     << w.first_u << " != " << s.acked_u;
    s.acked_u = w.first_u + npk_of(w.len, mtu_b(s));
    ++s.ci_base;
    ++acked;
  }
  // The completion engine's answer to an RNR wait's end or a reused-slot report: the oldest
  // WQE not acknowledged, from its start (apply 0 now and then: a QP being flushed).
  Rewind up_answer(uint32_t q, const Knobs& k) {
    const Qp& s = qps[q];
    return Rewind{q, !rng.percent(k.up_zero), false, s.ci_base, 0, s.acked_u, uint8_t(rng.below(32)), true};
  }

  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    free_reads(c);
    drive_rdc_free();
    // a QP reset (nothing of it in flight, nothing of the bench's on its way to it), half of them
    // of a waiting QP; the bench keeps the QP's WQEs and rings its doorbell (a reset QP is set up
    // again and posts anew: the reset itself gives it no turn, and takes it off the wait list)
    if (k.qreset && !stream && !hot.empty() && rw_q.empty() && stop_q.empty() && !pend.active &&
        stale_segs_n == 0 && ring < 0 && rng.percent(k.qreset)) {
      const std::vector<uint32_t> w = cw_waiters();
      const uint32_t q = !w.empty() && rng.percent(50) ? w[rng.below(w.size())] : hot[rng.below(hot.size())];
      if (qps[q].fly_n == 0 && qps[q].segs.empty()) {
        reset_incarnation(q);
        ring = int(q);
      }
    }
    drive_qp_reset();
    // host: posts WQEs and rings the doorbell of one QP
    bool db = false;
    uint32_t db_q = 0;
    if (!hot.empty() && rng.percent(k.post)) {
      db_q = hot[rng.below(hot.size())];
      int n = int(rng.range(1, 4));
      bool any = false;
      while (n-- > 0 && post(db_q, big)) any = true;
      db = any || rng.percent(10);  // sometimes a doorbell with nothing new
    }
    if (ring >= 0) {
      db = true;
      db_q = uint32_t(ring);
      ring = -1;
    }
    dut->db_valid = db;
    dut->db_qpn = db_q;
    dut->db_pi = qps[db_q].posted;
    // completion engine: acknowledgements and rewinds; timers: RNR waits
    if (k.ack && !hot.empty() && rng.percent(k.ack)) ack_some(hot[rng.below(hot.size())], k.reuse);
    // RNR waits that ended and reused slots reported: answered once no rewind of the QP is open
    if (rw_q.empty() && !hold_unparks) {
      for (auto it = up_q.begin(); it != up_q.end(); ++it)
        if (it->second <= c && !qps[it->first].rw_open) {
          offer_rewind(up_answer(it->first, k));
          up_q.erase(it);
          break;
        }
    }
    if (rw_q.empty() && k.up_stray && !hot.empty() && rng.percent(k.up_stray)) {
      const uint32_t q = hot[rng.below(hot.size())];
      if (!qps[q].rw_open) offer_rewind(up_answer(q, k));
    }
    if (k.rw && rw_q.empty() && !hot.empty() && rng.percent(k.rw)) {
      Rewind r{};
      if (pick_rewind(hot[rng.below(hot.size())], k, r)) offer_rewind(r);
    }
    // late rewinds and stop requests of a QP's earlier incarnation
    if (k.rw_stale && rw_q.empty() && stale_segs_n == 0 && !hot.empty() && rng.percent(k.rw_stale))
      offer_stale_rewind(hot[rng.below(hot.size())]);
    if (k.stop_stale && stop_q.empty() && stale_segs_n == 0 && !hot.empty() && rng.percent(k.stop_stale))
      offer_stop(hot[rng.below(hot.size())], true);
    dut->rw_valid = !rw_q.empty();
    if (!rw_q.empty() && !rw_driven) {
      drive_rw(rw_q.front());
      rw_driven = true;
    }
    dut->stop_valid = !stop_q.empty();
    if (!stop_q.empty()) {
      Stop& st = stop_q.front();
      if (!stop_driven) st.gen = other_gen(st.q, st.stale);
      stop_driven = true;
      dut->stop_qpn = st.q;
      dut->stop_gen = st.gen;
    }
    dut->stale_ready = rng.percent(k.stale);
    dut->note_ready = rng.percent(k.note);
    dut->kick_ready = rng.percent(k.kick);
    dut->rnr_ready = rng.percent(k.rnr);
    // scheduler
    if (!handing && !ready_q.empty() && rng.percent(k.hand)) {
      handing = true;
      hand_q = ready_q.front();
    }
    dut->s_valid = handing;
    dut->s_qpn = hand_q;
    dut->done_ready = rng.percent(k.done);
    dut->sched_burst = burst;  // the stream tests change the turn limits as they go
    dut->sched_wqes = wqes_per_turn;
    // AXI read slave
    dut->ar_ready = rng.percent(k.ar);
    const bool r = !rbeats.empty() && rbeats.front().at <= c && c >= r_hold;
    dut->r_valid = r;
    if (r)
      for (int w = 0; w < 16; ++w) dut->r_data[size_t(w)] = rbeats.front().data[w];
    // MR table: answers two cycles after the request
    dut->mr_rsp = mr_pipe[1].valid;
    dut->mr_ok = 1;
    dut->mr_pa = mr_pipe[1].pa;
    const bool rdc_room = rng.percent(k.rdc);
    dut->rdc_ready = rdc_room && rd_table.size() < rd_cap;  // an insert needs a free entry
    dut->job_ready = rng.percent(k.job);
    dut->hstop_valid = !hstop_q.empty();
    dut->hstop_qpn = hstop_q.empty() ? 0 : hstop_q.front();
    dut->qp_cmd_valid = cmd_on;  // (a QP_MODIFY offered during traffic: offer_reset)
    if (win_mode) drive_window(k);
    dut.eval();
    // READ context queries (combinational in srnic_rd_ctx; the query QPNs are registers),
    // incarnations
    drive_rdc_queries();
    answer_gens();
    dut.eval();
    watch_cmd_and_jobs(c);

    // work made for an earlier incarnation: a rewind or stop request is dropped as it arrives;
    // any other stale_drop is the cutter's head segment (the bench never offers both at once)
    const bool rw_old = dut->rw_valid && rw_q.front().gen != gen_tab[rw_q.front().q];
    const bool stop_old = dut->stop_valid && stop_q.front().gen != gen_tab[stop_q.front().q];
    if (rw_old) {
      ASSERT_TRUE(dut->rw_ready) << "cycle " << c << ": rewind of QP " << rw_q.front().q << " for incarnation "
                                 << unsigned(rw_q.front().gen) << " (the QP's: " << unsigned(gen_tab[rw_q.front().q])
                                 << ") not dropped as it arrives";
    }
    if (stop_old) {
      ASSERT_TRUE(dut->stop_ready) << "cycle " << c << ": stop request of QP " << stop_q.front().q
                                   << " for incarnation " << unsigned(stop_q.front().gen) << " (the QP's: "
                                   << unsigned(gen_tab[stop_q.front().q]) << ") not dropped as it arrives";
    }
    if (rw_old || stop_old) {
      ASSERT_TRUE(dut->stale_drop) << "cycle " << c << ": stale " << (rw_old ? "rewind" : "stop")
                                   << " dropped without stale_drop";
      ASSERT_EQ(stale_segs_n, 0u) << "bench: stale segments beside a stale rewind or stop";
    } else if (dut->stale_drop) {
      stale_segment(c);
      if (HasFatalFailure()) return;
    }

    if (!allow_bad) {
      ASSERT_FALSE(dut->bad_wqe) << "cycle " << c;
    }
    // a wait for credit is set in the cycle after the issue stage ended the QP's turn without
    // a WQE read and without more work
    if (dut->win_wait) {
      ASSERT_TRUE(win_mode && win != 0) << "cycle " << c << ": win_wait without a window";
      ASSERT_EQ(idle_done_c + 1, c) << "cycle " << c << ": win_wait not in the cycle after a turn ended without a "
                                    << "WQE read (QP " << idle_done_q << ", at cycle " << idle_done_c << ")";
      ASSERT_FALSE(idle_done_more) << "cycle " << c << " QP " << idle_done_q << ": waits for credit, its turn "
                                   << "reported more work (done_more)";
      ++win_waits;
    }
    // a WQE read once offered stays, unchanged, until taken (AXI); the turn limit it obeys is
    // the one of the cycle it was offered in
    if (ar_wait) {
      EXPECT_TRUE(dut->ar_valid && uint64_t(dut->ar_addr) == ar_addr0 && unsigned(dut->ar_len) == ar_len0)
          << "cycle " << c << ": WQE read withdrawn or changed before it was taken";
    } else if (dut->ar_valid) {
      ar_wait = true;
      ar_addr0 = dut->ar_addr;
      ar_len0 = dut->ar_len;
      ar_wqes = wqes_per_turn;
    }
    if (dut->ar_valid && dut->ar_ready) ar_wait = false;
    // a READ at the emit stage's head never waits for a context: every READ started has one
    if (dut->rdc_valid && rd_table.size() >= rd_cap) {
      ADD_FAILURE() << "cycle " << c << ": a READ request waits for a context (" << rd_table.size() << " of "
                    << rd_cap << " in use)";
    }
    if (dut->lerr_valid && dut->lerr_ready && stream) {
      // stream reference: the events are kept for the test to check (a refused WQE stops
      // the QP's stream there)
      const uint32_t q = uint32_t(kCompEv.get(dut->lerr, kCeQpn));
      ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
      Ev e{uint8_t(kCompEv.get(dut->lerr, kCeKind)), q, uint32_t(kCompEv.get(dut->lerr, kCePsn)),
           uint32_t(kCompEv.get(dut->lerr, kCePsn2)), uint8_t(kCompEv.get(dut->lerr, kCeStatus))};
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeGen), gen_tab[q]) << "cycle " << c << " QP " << q << ": event incarnation";
      if (e.status == kWcLocQpOpErr) qps[q].err = true;
      qps[q].fl_pi = uint16_t(e.psn2);  // reported for flushing up to here
      ev_seen.push_back(e);
      ++events;
    } else if (dut->lerr_valid && dut->lerr_ready) {
      ASSERT_FALSE(ev_expect.empty()) << "cycle " << c << ": completion event (kind "
                                      << kCompEv.get(dut->lerr, kCeKind) << ") without a bad WQE or stop";
      const Ev e = ev_expect.front();
      ev_expect.pop_front();
      const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(e.q) + ": event";
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeKind), e.kind) << at;
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeQpn), e.q) << at;
      EXPECT_EQ(kCompEv.get(dut->lerr, kCePsn), e.psn) << at << " PSN";
      EXPECT_EQ(kCompEv.get(dut->lerr, kCePsn2), e.psn2) << at << " producer index";
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeStatus), e.status) << at << " status";
      EXPECT_EQ(kCompEv.get(dut->lerr, kCeGen), e.gen) << at << " incarnation";
      ++events;
    }
    // WQE reads: the issue stage's scheduler turn is decided and pushed into the turn ring;
    // its done goes out now (or, if the scheduler is not ready, later from the DUT's done
    // register: done_exp)
    if (dut->ar_valid && dut->ar_ready) {
      ASSERT_TRUE(iss_on) << "cycle " << c << ": WQE read without a scheduler turn in the issue stage";
      const uint32_t q = iss_q;
      iss_on = false;
      Qp& s = qps[q];
      const int n = int(dut->ar_len) + 1;
      uint16_t ci0 = 0;
      if (stream) {
        ci0 = stream_read(c, q, n);
        if (HasFatalFailure()) return;
        if (s.fly_n > 0) ++spec_reads;
        EXPECT_LT(s.fly_n, kTpq) << "cycle " << c << " QP " << q << ": WQE read with " << s.fly_n
                                 << " turns of the QP in flight";
      } else {
        ASSERT_EQ(s.fly_n, 0) << "cycle " << c << " QP " << q
                              << ": WQE read while a turn of the QP is in flight (TURNS_PER_QP 1)";
        // (with one turn of a QP in flight at a time every turn reads from the send state)
        ASSERT_FALSE(cw_member(q)) << "cycle " << c << " QP " << q << ": WQE read while the QP waits for a READ "
                                   << "context (on the wait list since cycle " << cw_member_at(q) << ")";
        const Turn t = plan(q, s.pi_seen, uint32_t(dut->ar_una));
        ASSERT_TRUE(t.work) << "cycle " << c << " QP " << q << ": WQE read for a turn without work (ci " << t.ci0
                            << ", producer index read " << s.pi_seen << ")";
        ASSERT_EQ(uint64_t(dut->ar_addr), t.addr) << "cycle " << c << " QP " << q << ": WQE read address";
        ASSERT_EQ(n, t.n) << "cycle " << c << " QP " << q << ": WQE read length";
        ci0 = t.ci0;
        s.fly = true;
        flight.push_back({q, kFlWork});
      }
      ++s.fly_n;
      ++s.reads_out;
      max_reads_out = std::max(max_reads_out, s.reads_out);
      done_exp.push_back({q, uint16_t(ci0 + n) != s.pi_seen});
      ++s.reads;
      const uint64_t lat = k.lat_min + rng.below(k.lat - std::min(k.lat, k.lat_min) + 1);
      for (int i = 0; i < n; ++i) {
        Beat b;
        b.at = c + 1 + lat + uint64_t(i);
        b.q = q;
        b.k = size_t(i);
        b.last = i == n - 1;
        const size_t slot = uint16_t(ci0 + i) & (s.ring.size() - 1);  // as the slot holds it
        encode(s.ring[slot], s.ring_idx[slot], b.data);
        rbeats.push_back(b);
      }
      ++reads;
    }
    if (r) {
      const Beat& b = rbeats.front();
      std::vector<uint64_t>& at = qps[b.q].rec.beat_at;
      if (!stream && b.k < at.size()) at[b.k] = c;
      if (b.last) --qps[b.q].reads_out;
      rbeats.pop_front();
    }
    // MR lookups
    Mr nm{};
    if (dut->mr_req) {
      // the local buffer of a READ is written by the NIC: it needs LOCAL_WRITE; the others
      // are only read (keys shared by both kinds of WQE are not checked)
      const auto ko = key_ops.find(uint32_t(dut->mr_key));
      if (ko != key_ops.end() && ko->second != 3) {
        EXPECT_EQ(unsigned(dut->mr_access), ko->second == 1 ? 1u : 0u)
            << "cycle " << c << ": rights asked for local key 0x" << std::hex << unsigned(dut->mr_key) << " of a "
            << (ko->second == 1 ? "READ" : "SEND/WRITE");
        ++access_checks;
      }
      nm.valid = true;
      nm.pa = translate(uint32_t(dut->mr_key), uint64_t(dut->mr_va));
      ++mr_reqs;
      if (stream) mr_request_stream(c);
      else mr_request(c);
      if (HasFatalFailure()) return;
    }
    // jobs
    const bool fire = dut->job_valid && dut->job_ready;
    uint16_t job_idx = 0;
    if (fire) take_job(c, job_idx);
    if (HasFatalFailure()) return;
    if (dut->rdc_valid && dut->rdc_ready && !fire) ADD_FAILURE() << "cycle " << c << ": READ context without its job";
    if (dut->rdc_valid && dut->rdc_ready) {
      const uint32_t jq = uint32_t(kJob.get(dut->job, kQpn));
      EXPECT_GT(rd_resv, 0u) << "cycle " << c << ": READ context without a READ started";
      if (rd_resv > 0) --rd_resv;
      if (jq < uint32_t(kQps)) {
        EXPECT_GT(qps[jq].rd_resv, 0u) << "cycle " << c << ": READ context of QP " << jq
                                       << " without a READ of it started";
        if (qps[jq].rd_resv > 0) --qps[jq].rd_resv;
      }
      rd_table.push_back({jq, c + rng.range(1, rd_hold), true, job_idx});
    }
    // host stop: the reference stops the QP with the state as of now (no turn of it is in
    // flight: the stop waits at the input until then); the stop is pushed into the turn ring
    // and ends in the plan stage with its CEV_HERR
    if (dut->hstop_valid && dut->hstop_ready) {
      const uint32_t q = hstop_q.front();
      hstop_q.pop_front();
      Qp& s = qps[q];
      EXPECT_EQ(s.fly_n, 0) << "cycle " << c << " QP " << q << ": host stop taken while a turn of the QP is in flight";
      ev_expect.push_back({kCevHerr, q, uint32_t(s.psn_u) & kPsnMask, s.pi, 5, gen_tab[q]});
      s.err = true;
      s.refd = false;  // a host stop is final
      s.fl_pi = s.pi;
      ++s.fly_n;
      flight.push_back({q, kFlStop});
      ++hstops;
    }
    // a stop request: dropped if made for an earlier incarnation; else, like a host stop, it
    // stops the QP with the state as of now and reports for flushing (CEV_LERR) the WQEs up to
    // the producer index, if it was not stopped yet or WQEs were posted since its last report
    if (dut->stop_valid && dut->stop_ready) {
      const Stop st = stop_q.front();
      stop_q.pop_front();
      stop_driven = false;
      if (stop_old) {
        ++stale_stops;
      } else {
        ASSERT_FALSE(stream) << "bench: stop requests that act need the turn reference";
        Qp& s = qps[st.q];
        EXPECT_EQ(s.fly_n, 0) << "cycle " << c << " QP " << st.q << ": stop request taken while a turn of the QP is "
                              << "in flight";
        if (!s.err || s.pi != s.fl_pi) {
          ev_expect.push_back({kCevLerr, st.q, uint32_t(s.psn_u) & kPsnMask, s.pi, 5, gen_tab[st.q]});
          s.err = true;
          s.refd = false;  // a stop request makes the stop final
          s.fl_pi = s.pi;
          ++s.fly_n;
          flight.push_back({st.q, kFlStop});
        }
        ++stops;
      }
    }
    // a rewind's state read: the reference applies it to a QP in RTS that is not stopped (or
    // stopped at a refused WQE: the rewind goes back before it, the stop is left). An RNR
    // answer parks the QP without moving its send state; an answer marked up unparks it.
    if (dut->rw_valid && dut->rw_ready && rw_old) {
      rw_q.pop_front();
      rw_driven = false;
      ++stale_rws;
    } else if (dut->rw_valid && dut->rw_ready) {
      ASSERT_FALSE(pend.active) << "cycle " << c << ": rewind taken while the last one has not ended";
      const Rewind rw = rw_q.front();
      rw_q.pop_front();
      rw_driven = false;
      Qp& s = qps[rw.q];
      EXPECT_EQ(s.fly_n, 0) << "cycle " << c << " QP " << rw.q << ": rewind taken while a turn of the QP is in flight";
      const bool applies = rw.apply && s.rts && (!s.err || s.refd);
      const bool move = applies && !rw.rnr, park0 = s.park;
      if (move) {
        s.ci = rw.ci;
        s.off = rw.off;
        s.psn_u = rw.psn_u;
        s.fwait = false;
        if (s.err) ++rw_unrefused;
        s.err = s.refd = false;
      }
      if (applies && rw.rnr) s.park = true;
      if (rw.up) {
        s.park = false;
        ++(park0 ? unparks : stray_unparks);
      }
      const bool kick = !s.park && (move || (rw.up && park0));
      pend = Pending{true, rw.up, rw.q, true, kick, applies && rw.rnr, applies, rw.code, c, rw.ci, move, rw.psn_u};
      pend.gen = rw.gen;
      if (applies) ++rw_applied;
      ++rw_taken;
    }
    // turn ends for the scheduler (done): a turn pushed with its WQE read (in order), else the
    // issue stage's scheduler turn, without work: decided now
    if (dut->done_valid && dut->done_ready) {
      const uint32_t q = dut->done_qpn;
      ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
      Qp& s = qps[q];
      bool more = false;
      if (!done_exp.empty()) {
        const DoneExp e = done_exp.front();
        done_exp.pop_front();
        ASSERT_EQ(q, e.q) << "cycle " << c << ": done of QP " << q << ", the turn pushed first is QP " << e.q << "'s";
        ASSERT_EQ(bool(dut->done_more), e.more)
            << "cycle " << c << " QP " << q << ": done_more of a turn with a WQE read (WQEs beyond the ones read, "
            << "producer index read " << s.pi_seen << ")";
        more = e.more;
      } else {
        ASSERT_TRUE(iss_on && iss_q == q) << "cycle " << c << ": done of QP " << q
                                          << " without its scheduler turn in the issue stage";
        iss_on = false;
        if (stream) {
          more = dut->done_more;
          idle_done_c = c;
          idle_done_q = q;
          idle_done_more = more;
          if (!more) s.armed = true;
          // a stopped QP (its refused WQE reported; every event of the QP is out once no turn
          // of it is in flight) with WQEs posted since its last report: the turn is pushed to
          // report them (a CEV_LERR from the plan stage, then turn_end)
          if (s.err && s.fly_n == 0 && s.pi_seen != s.fl_pi) {
            ++s.fly_n;
            EXPECT_FALSE(more) << "cycle " << c << " QP " << q << ": done_more of a flush report";
          }
        } else {
          more = idle_turn(q, c);
          if (HasFatalFailure()) return;
          ASSERT_EQ(bool(dut->done_more), more)
              << "cycle " << c << " QP " << q << ": done_more of a turn without a WQE read (ci " << s.ci
              << ", producer index read " << s.pi_seen << ", turns in flight " << s.fly_n << ")";
          --s.open;
        }
      }
      ASSERT_TRUE(s.active) << "cycle " << c << ": done for QP " << q << " that is not handed out";
      s.active = false;
      if (more || s.pending) enqueue(q);
      s.pending = false;
      ++turns_done;
    }
    // this cycle's kick: srnic_tx_window's (credit came back), a context wake-up, or (below) a
    // rewind's or the plan stage's
    kick_port(c);
    if (HasFatalFailure()) return;
    // the end of a rewind: note, kick, rnr and flush together, as expected
    end_of_pending(c);
    if (HasFatalFailure()) return;
    // turns leaving the plan stage (after the decisions above: a turn is in flight in the
    // cycle of its turn_end), with their plan kicks and reused-slot reports
    end_of_plan(c);
    if (HasFatalFailure()) return;
    // a turn handed out: the issue stage reads the producer index now
    if (handing && dut->s_ready) {
      Qp& s = qps[hand_q];
      ASSERT_FALSE(s.active) << "cycle " << c << ": QP " << hand_q << " handed out while active";
      ASSERT_FALSE(iss_on) << "cycle " << c << ": hand-out while the issue stage holds a scheduler turn";
      ready_q.pop_front();
      s.queued = false;
      s.active = true;
      s.pi_seen = s.pi;
      iss_on = true;
      iss_q = hand_q;
      last_hand_c = c;
      ++handouts;
      if (!stream) {
        if (s.open++ == 0) s.prot_lo = s.ci;
        s.prot_hi = s.pi_seen;
      }
      handing = false;
    }
    if (stream) {
      for (uint32_t q : hot) {
        const Qp& s = qps[q];
        max_fly = std::max(max_fly, s.fly_n);
        if (s.fly_n >= 2) {
          ++overlap_cycles;
          break;
        }
      }
    }
    if (db) doorbell(db_q);
    // an acknowledgement taken: una moves at this edge (the jobs of this cycle were checked
    // against the one before)
    if (win_mode && dut->ack_valid && dut->ack_ready) {
      const auto a = ack_q.front();
      ack_q.pop_front();
      ack_driven = false;
      ack_taken(a.first, a.second);
      last_ack_c = c;
    }
    mr_pipe[1] = mr_pipe[0];
    mr_pipe[0] = nm;
    held_last = dut->job_valid && !dut->job_ready && kJob.get(dut->job, kOpcode) != kOpReadReq;
    held_q = uint32_t(kJob.get(dut->job, kQpn));
    cw_cycle_end(c);
    dut.tick();
  }

  // ------------------------------------------------------------ in-flight cap (window tests)
  // AckReq interval mask for tx_window w: every PSN with (psn & m) == m, m + 1 the largest power
  // of two <= w/4, at most 64, at least 1; every 64th PSN without a window (w = 0)
  static uint32_t ackreq_mask(uint64_t w) {
    if (w == 0) return 63;
    uint64_t n = 1;
    while (n < 64 && n * 2 <= w / 4) n *= 2;
    return uint32_t(n - 1);
  }
  // Drives tx_window and the acknowledgement port: new acknowledgements (a random prefix of
  // what q sent, all of it, or a stale one: at or before una - 1), each held on the port from
  // the cycle it is presented until taken.
  void drive_window(const Knobs& k) {
    dut->tx_window = win;
    ack_m = ackreq_mask(win);
    if (k.wack && !hot.empty() && ack_q.size() < 6 && rng.percent(k.wack)) gen_ack(hot[rng.below(hot.size())], k);
    if (!ack_driven && !ack_q.empty() && rng.percent(k.wack_v)) ack_driven = true;
    dut->ack_valid = ack_driven;
    if (ack_driven) {
      dut->ack_qpn = ack_q.front().first;
      dut->ack_psn = ack_q.front().second;
    } else if (rng.percent(50)) {  // (what the port shows without valid is not looked at)
      dut->ack_qpn = uint32_t(rng.below(kQps));
      dut->ack_psn = rng.u32() & kPsnMask;
    }
  }
  void gen_ack(uint32_t q, const Knobs& k) {
    const Qp& s = qps[q];
    if (s.err) return;
    const uint64_t out = s.jc_psn - s.una_u;  // sent, not acknowledged
    const bool stale = rng.percent(k.wack_stale);
    if (out == 0 && !stale) return;
    if (stale) {
      // stale: the last acknowledgement again, or an older one
      const uint64_t back = rng.percent(30) ? 0 : rng.range(1, 300);
      ack_q.push_back({q, uint32_t(s.una_u - 1 - back) & kPsnMask});
      return;
    }
    const uint64_t to = rng.percent(k.wack_all) ? s.jc_psn - 1 : s.una_u + rng.below(out);
    ack_q.push_back({q, uint32_t(to) & kPsnMask});
  }
  // Every PSN up to psn (24 bits) of q acknowledged: una moves forward only.
  void ack_taken(uint32_t q, uint32_t psn) {
    ASSERT_LT(q, uint32_t(kQps));
    Qp& s = qps[q];
    int32_t d = int32_t((psn + 1 - uint32_t(s.una_u)) & kPsnMask);
    if (d & 0x800000) d -= 0x1000000;  // 24-bit serial difference
    ++acks_taken;
    if (d <= 0) {
      ++acks_stale;
      return;
    }
    s.una_u += uint64_t(d);
    EXPECT_LE(s.una_u, s.jc_psn) << "bench: acknowledged a PSN not sent";
    s.una_hist.push_back(s.una_u);
  }
  // The in-flight cap on job e of q (before it counts as sent): its (first) PSN lies less than
  // W past una (the bench's: the DUT may lag, never lead). AckReq: on the packet that fills the
  // window (PSN una + W - 1: the DUT planned it with this una, as an older one has no room for
  // it), and, besides the last packets and every (m+1)-th PSN, only on a packet that filled the
  // window of an una the DUT may have planned with (una + W - 1 for an una the QP had).
  void check_window(uint64_t c, uint32_t q, Qp& s, Job& e, bool dut_ackreq) {
    if (win == 0) return;
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) + " PSN 0x" +
                           hex24(e.psn_u) + " (WQE " + std::to_string(e.idx) + ")";
    ASSERT_GE(e.psn_u, s.una_u) << at << ": sent, though acknowledged (una 0x" << hex24(s.una_u) << ")";
    const uint64_t d = e.psn_u - s.una_u;
    ASSERT_LT(d, uint64_t(win)) << at << ": " << d << " packets past una 0x" << hex24(s.una_u) << ", window "
                                << win;
    max_win_d = std::max(max_win_d, d);
    if (d + 1 == win) {
      ASSERT_TRUE(dut_ackreq) << at << ": the packet that fills the window (una 0x" << hex24(s.una_u) << ", window "
                              << win << ") without AckReq";
      e.ackreq = true;
      ++fill_jobs;
    } else if (dut_ackreq && !e.ackreq &&
               std::binary_search(s.una_hist.begin(), s.una_hist.end(), e.psn_u + 1 - uint64_t(win))) {
      e.ackreq = true;  // it filled the window of an older una (acknowledged since)
      ++fill_jobs_old;
    }
  }
  static std::string hex24(uint64_t psn) {
    char b[16];
    std::snprintf(b, sizeof b, "%06x", unsigned(psn & kPsnMask));
    return b;
  }
  // This cycle's kick (kick_valid and kick_ready) by its cause, in the DUT's order of priority:
  // a kick of the ending turn's QP in a turn_end cycle is the plan stage's (end_of_plan; turn
  // reference: unless the turn does not kick, then it is a wake-up of that QP); in a note cycle
  // (never beside a turn end) the rewind's if it kicks; srnic_tx_window's for a QP waiting for
  // credit (window tests: its last turn ended without a WQE read or more work, or it was kicked
  // at once: an acknowledgement came after its state read); any other kick is a context
  // wake-up (wake).
  void kick_port(uint64_t c) {
    kick_by = kNoKick;
    if (!(dut->kick_valid && dut->kick_ready)) return;
    const uint32_t q = dut->kick_qpn;
    ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
    if (dut->turn_end && q == uint32_t(dut->turn_qpn)) {
      kick_by = kByTurn;
      return;
    }
    if (!dut->turn_end && dut->note_valid && dut->note_ready && pend.active && pend.kick) {
      kick_by = kByRewind;
      return;
    }
    Qp& s = qps[q];
    if (win_mode && s.armed) {
      s.armed = false;
      kick_by = kByWindow;
      ++win_kicks;
      doorbell_kick(q);
      return;
    }
    kick_by = kByWake;
    wake(c, q);
  }

  // ------------------------------------------------------------ READ context waits
  // The bench's copy of the DUT's wait list (turn reference) as it stands in this cycle (it moves
  // at the edge, in cw_cycle_end): q has a live entry; where (the cycle it joined).
  bool cw_member(uint32_t q) const {
    for (unsigned i = 0; i < cw_n; ++i) {
      const CwEntry& e = cw_buf[(cw_hp + i) % kCwDepth];
      if (e.live && e.q == q) return true;
    }
    return false;
  }
  uint64_t cw_member_at(uint32_t q) const {
    for (unsigned i = 0; i < cw_n; ++i) {
      const CwEntry& e = cw_buf[(cw_hp + i) % kCwDepth];
      if (e.live && e.q == q) return e.at;
    }
    return 0;
  }
  unsigned cw_live() const {
    unsigned n = 0;
    for (unsigned i = 0; i < cw_n; ++i) n += cw_buf[(cw_hp + i) % kCwDepth].live;
    return n;
  }
  // the live entries, oldest first
  std::vector<uint32_t> cw_waiters() const {
    std::vector<uint32_t> v;
    for (unsigned i = 0; i < cw_n; ++i)
      if (cw_buf[(cw_hp + i) % kCwDepth].live) v.push_back(cw_buf[(cw_hp + i) % kCwDepth].q);
    return v;
  }
  bool cw_head_live() const { return cw_n > 0 && cw_buf[cw_hp].live; }
  // a wake-up is due in this cycle: the head is live and a credit or the poll flag is held
  bool cw_due() const { return cw_head_live() && (cw_cred > 0 || cw_poll); }
  // the poll's tick in cycle c (8 bits, from reset)
  unsigned cw_tick(uint64_t c) const { return unsigned((c - reset_c) % kPoll); }

  // A wake-up of q (a kick that is neither the plan stage's nor a rewind's, nor srnic_tx_window's).
  // Turn reference: a wake-up is due and q is the head of the wait list; it uses a credit if one
  // is held, else the poll flag. Stream reference: a turn of q may have left it waiting
  // (cw_cands). Either way q is queued like at a doorbell.
  void wake(uint64_t c, uint32_t q) {
    Qp& s = qps[q];
    const std::string at = "cycle " + std::to_string(c) + ": kick of QP " + std::to_string(q);
    last_wake_c = c;
    last_wake_q = q;
    ++cw_wakes;
    if (stream) {
      ASSERT_GT(s.cw_cands, 0) << at << ", neither a turn end's, a rewind's" << (win_mode ? ", a window's" : "")
                               << " nor a READ context wake-up's (no turn of the QP ended unkicked in front of a "
                               << "READ without room since its last wake-up)";
      --s.cw_cands;
    } else {
      ASSERT_TRUE(cw_head_live()) << at << ", neither a turn end's nor a rewind's, and no QP waits for a READ "
                                  << "context at the head of the wait list (" << cw_n << " entries, " << cw_live()
                                  << " live)";
      const CwEntry& w = cw_buf[cw_hp];
      ASSERT_EQ(q, w.q) << at << ": a READ context wake-up, but the head of the wait list is QP " << w.q
                        << " (waiting since cycle " << w.at << ")";
      ASSERT_TRUE(cw_due()) << at << ": a READ context wake-up of the head of the wait list without a credit (no "
                            << "context freed since the last was used) and without the poll flag";
      ASSERT_FALSE(cw_pop_now) << at << ": two wake-ups in one cycle";
      cw_pop_now = true;
      max_cw_wait = std::max(max_cw_wait, c - w.at);
      if (cw_cred > 0) {
        cw_cred_pop = true;
        ++cw_wakes_cred;
      } else {
        ++cw_wakes_poll;
      }
    }
    doorbell_kick(q);
  }
  // q's turn stopped in front of a READ for want of a context and ends now without a kick, with
  // no room, the list not full and q not on it: q joins the list at the tail.
  void cw_join(uint64_t c, uint32_t q) {
    ASSERT_LT(cw_n, kCwDepth) << "bench: a waiter joined a full wait list";
    ASSERT_FALSE(cw_member(q)) << "bench: a waiter joined the wait list twice";
    cw_push_now = true;
    cw_push_q = q;
    cw_push_c = c;
    ++cw_joins;
  }
  // The end of a cycle for the context waits (turn reference). First the liveness check: a
  // wake-up due (the head live, a credit or the poll flag held) must have been made if the kick
  // port was free for it (kick_ready, neither a plan stage kick nor a rewind kick in this
  // cycle: both come first); wake() checked that every wake-up made was due. Then the list moves
  // as the DUT's does at the edge: the entries of a QP whose rewind was applied (rdc_rw_flush) and
  // of a QP reset (qp_reset_valid) die; the head leaves (woken, or dropped if dead); a joining QP
  // is put at the tail; the credits gain the contexts freed at the last edge (rdc_freed) and lose
  // the one used (at most 64; none kept with the list empty and nobody joining); the poll flag is
  // set at tick 255 with global room (the list not empty), cleared when used or the list is
  // empty. For both references: the run of cycles with global room.
  void cw_cycle_end(uint64_t c) {
    if (!stream) {
      const bool due = cw_due();
      const bool port_free = dut->kick_ready && !plan_kick_now && kick_by != kByRewind;
      if (due && port_free && !cw_pop_now && !HasFatalFailure())
        FAIL() << "cycle " << c << ": QP " << cw_buf[cw_hp].q << " waits for a READ context (since cycle "
               << cw_buf[cw_hp].at << ", at the head of the wait list, " << cw_live() << " waiting) and is not "
               << "woken though " << (cw_cred > 0 ? std::to_string(cw_cred) + " credits (contexts freed) are held"
                                                  : std::string("the poll flag is set"))
               << " and the kick port is free";
      const bool any = cw_n > 0;
      const bool head_dead = any && !cw_buf[cw_hp].live;  // (as the cycle began: dropped now)
      // entries die (they stay in place)
      const bool rw_kill = dut->rdc_rw_flush, rs_kill = dut->qp_reset_valid;
      const uint32_t rw_q_ = dut->rdc_rw_flush_qpn, rs_q = dut->qp_reset_qpn;
      for (unsigned i = 0; i < cw_n; ++i) {
        CwEntry& e = cw_buf[(cw_hp + i) % kCwDepth];
        if (!e.live) continue;
        if (rw_kill && e.q == rw_q_) {
          e.live = false;
          ++cw_kills_rw;
        } else if (rs_kill && e.q == rs_q) {
          e.live = false;
          ++cw_kills_reset;
        }
      }
      // the head leaves: woken, or dropped dead
      if (cw_pop_now || head_dead) {
        if (head_dead) ++cw_dead_drops;
        cw_buf[cw_hp].live = false;
        cw_hp = (cw_hp + 1) % kCwDepth;
        --cw_n;
      }
      if (cw_push_now) {
        cw_buf[cw_tp] = CwEntry{cw_push_q, true, cw_push_c};
        cw_tp = (cw_tp + 1) % kCwDepth;
        ++cw_n;
        max_cw = std::max(max_cw, size_t(cw_n));
        max_cw_live = std::max(max_cw_live, size_t(cw_live()));
      }
      cw_poll = any && (cw_poll || (cw_tick(c) == kPoll - 1 && room_dut0)) && !(cw_pop_now && !cw_cred_pop);
      if (!any && !cw_push_now) cw_cred = 0;
      else cw_cred = std::min(kCwCredMax, cw_cred + freed_now - (cw_cred_pop ? 1u : 0u));
      seg_fifo_cycle_end();
    }
    room_run = room0 ? room_run + 1 : 0;
    cw_push_now = cw_pop_now = cw_cred_pop = plan_kick_now = false;
  }

  // The issue stage ends q's scheduler turn without a WQE read (turn reference): decided now.
  // With a turn of q in flight (TURNS_PER_QP 1) the QP waits and is requeued. A QP with work
  // that waits for a READ context (on the wait list, not at a fence) is not requeued: the list
  // wakes it. Else the turn rules: nothing to do, a fence wait (requeued), or a stopped QP's
  // flush report (pushed into the turn ring: its CEV_LERR comes from the plan stage). Returns
  // the expected done_more.
  bool idle_turn(uint32_t q, uint64_t c) {
    Qp& s = qps[q];
    if (s.fly_n > 0) {
      ++held_turns;
      return true;
    }
    const bool work = !s.err && s.rts && s.pi_seen != s.ci && !s.park && !(s.fwait && s.rd_busy > 0);
    if (work && cw_member(q)) {
      ++cw_idle;
      return false;
    }
    const Turn t = plan(q, s.pi_seen, uint32_t(s.psn_u) & kPsnMask);  // (no WQE read: no resend to pass over)
    if (t.work)
      ADD_FAILURE() << "cycle " << c << " QP " << q << ": a turn with work (" << t.n << " WQEs from " << t.ci0
                    << ") ended without a WQE read";
    if (t.flush) {
      flight.push_back({q, kFlFlush});
      ++s.fly_n;
    }
    return t.more;
  }

  // stream reference: q's next WQE to plan (after the one of its last MR request, or its first)
  // is posted and a READ
  bool next_is_read(Qp& s) {
    const uint16_t i = s.mr_any ? uint16_t(s.mr_last + 1) : s.jc_idx;
    if (uint16_t(i - s.jc_idx) >= uint16_t(s.pi - s.jc_idx)) return false;
    return wqe_at(s, i).op == kRead;
  }

  // turn_end (a turn left the plan stage, its send state written back: the cycle of its kick
  // and its reused-slot report) and turn_drop (a doomed turn's last WQE beat dropped unread).
  // The turn reference checks the ring order, the READ-context rollback and the kick rule: a
  // turn that stopped in front of a READ for want of a context is kicked only if the room is
  // back in this cycle (both rules) or the wait list is full (and the QP not on it), else its QP
  // waits (joins the list, unless it is on it); a kick of the QP beside a turn end that does not
  // kick is a wake-up (of an earlier wait).
  void end_of_plan(uint64_t c) {
    const bool t_end = dut->turn_end, t_drop = dut->turn_drop;
    const bool kick = kick_by == kByTurn;  // (of the ending turn's QP)
    const bool stale = dut->stale_valid && dut->stale_ready;
    if (stale && !t_end) ADD_FAILURE() << "cycle " << c << ": reused-slot report without its turn end";
    if (!t_end && !t_drop) return;
    ASSERT_FALSE(t_end && t_drop) << "cycle " << c << ": turn_end and turn_drop together";
    const uint32_t q = dut->turn_qpn;
    ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
    Qp& s = qps[q];
    ASSERT_GT(s.fly_n, 0) << "cycle " << c << ": turn of QP " << q << " left the plan stage, none in flight";
    --s.fly_n;
    s.end_at = c;
    const uint64_t from = plan_from;
    plan_from = c + 1;
    if (t_end) ++turn_ends;
    if (t_drop) ++turn_drops;
    bool plan_kick = kick;
    if (!stream) {
      EXPECT_FALSE(t_drop) << "cycle " << c << " QP " << q << ": a doomed turn dropped (TURNS_PER_QP 1)";
      ASSERT_TRUE(!flight.empty() && flight.front().q == q)
          << "cycle " << c << ": turn of QP " << q << " left the plan stage out of ring order";
      const Flight f = flight.front();
      flight.pop_front();
      if (f.kind == kFlWork) {
        bool cstop = false;
        end_turn(q, c, from, cstop);
        if (HasFatalFailure()) return;
        const TurnRec& r = s.rec;
        // ended early: not every WQE read was planned to its end (budget, READ context), a fence
        // stop, a refused WQE or a reused slot; then the QP is kicked if work is left (after a
        // refused WQE: WQEs to report for flushing), unless parked at a reused slot (the
        // answer to the report kicks it) or waiting for a READ context
        const bool early = s.ci != uint16_t(r.ci0 + r.n) || s.off != 0 || r.fence_stop || r.bad || r.stale;
        bool want = early && !r.stale && (s.ci != r.pi || s.off != 0);
        // a stop in front of a READ: the QP waits (joins the list, or is on it already) unless the
        // room is back by now, or the list is full and the QP not on it
        const bool room = room_for(q), full = cw_n >= kCwDepth, member = cw_member(q);
        const bool waits = cstop && !room && (!full || member);
        if (cstop) want = !waits;
        const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) +
                               ": plan kick at the turn end (WQEs " + std::to_string(r.ci0) + ".." +
                               std::to_string(r.ci0 + r.n - 1) + " read, producer index read " +
                               std::to_string(r.pi) + ", now at WQE " + std::to_string(s.ci) + " offset " +
                               std::to_string(s.off) + (r.fence_stop ? ", fence stop" : "") +
                               (r.stale ? ", reused slot" : "") +
                               (cstop ? std::string(", stopped in front of a READ for want of a context; room now: ") +
                                            (room ? "yes" : "no") + ", wait list: " + std::to_string(cw_n) +
                                            " entries, " + std::to_string(cw_live()) + " live" +
                                            (member ? ", the QP on it" : "")
                                      : std::string()) + ")";
        if (want) {
          EXPECT_TRUE(kick) << at;
        } else if (kick) {
          plan_kick = false;
          wake(c, q);  // (the turn does not kick: an earlier wait of the QP ends)
          if (HasFatalFailure()) return;
        }
        if (waits && !member) cw_join(c, q);
        if (waits && member) ++cw_rewaits;
        if (cstop && want) ++(room ? cw_room_kicks : cw_full_kicks);
        if (HasFatalFailure()) return;
        EXPECT_EQ(stale, r.stale) << "cycle " << c << " QP " << q << ": reused-slot report";
        if (stale) {
          EXPECT_EQ(unsigned(dut->stale_qpn), q) << "cycle " << c << ": reused-slot report QPN";
          ++stale_reports;
          up_q.push_back({q, c + rng.range(0, up_delay)});
        }
        s.fly = false;
        --s.open;
      } else {
        EXPECT_TRUE(t_end) << "cycle " << c << " QP " << q;
        EXPECT_FALSE(stale) << "cycle " << c << " QP " << q;
        if (kick) {  // (a host stop or flush report does not kick: a wake-up of the QP)
          plan_kick = false;
          wake(c, q);
          if (HasFatalFailure()) return;
        }
      }
    } else {
      EXPECT_FALSE(stale) << "cycle " << c << ": reused-slot report without reused slots";
      // a turn that ends unkicked in front of a posted READ without room may leave the QP waiting
      if (t_end && !kick && !room_for(q) && next_is_read(s)) ++s.cw_cands;
    }
    if (plan_kick) {
      ++plan_kicks;
      plan_kick_now = true;
      doorbell_kick(q);
    }
  }

  // Checks note, kick, rnr and rdc_rw_flush this cycle against the rewind taken.
  void end_of_pending(uint64_t c) {
    // (a kick in a turn_end cycle is the plan stage's)
    const bool note = dut->note_valid && dut->note_ready,
               kick = kick_by == kByRewind;
    const bool rnr = dut->rnr_valid && dut->rnr_ready, flush = dut->rdc_rw_flush;
    if (!note && !kick && !rnr && !flush) return;
    ASSERT_TRUE(pend.active) << "cycle " << c << ": note " << note << " kick " << kick << " rnr " << rnr << " flush "
                             << flush << " (QP " << unsigned(note ? dut->note_qpn : dut->kick_qpn)
                             << ") without a rewind (the last one, of QP " << last_end_q << ", ended at cycle "
                             << last_end << ")";
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(pend.q) +
                           (pend.up ? ": unparking answer" : ": rewind") + " taken at cycle " +
                           std::to_string(pend.taken);
    ASSERT_TRUE(note) << at << ": kick/rnr/flush without its note";
    EXPECT_EQ(unsigned(dut->note_qpn), pend.q) << at << ": note QPN";
    EXPECT_EQ(unsigned(dut->note_gen), unsigned(pend.gen)) << at << ": note incarnation";
    EXPECT_EQ(kick, pend.kick) << at << ": kick";
    EXPECT_EQ(rnr, pend.rnr) << at << ": rnr";
    EXPECT_EQ(flush, pend.flush) << at << ": rdc_rw_flush";
    if (kick) {
      EXPECT_EQ(unsigned(dut->kick_qpn), pend.q) << at << ": kick QPN";
    }
    if (rnr) {
      EXPECT_EQ(unsigned(dut->rnr_qpn), pend.q) << at << ": rnr QPN";
      EXPECT_EQ(unsigned(dut->rnr_code), pend.code) << at << ": rnr code";
    }
    if (flush) {
      EXPECT_EQ(unsigned(dut->rdc_rw_flush_qpn), pend.q) << at << ": rdc_rw_flush QPN";
    }
    if (flush) ++flushes;
    last_end = c;
    last_end_q = pend.q;
    Qp& s = qps[pend.q];
    if (pend.flush) {
      // applied only once every job of the QP planned before has left
      EXPECT_TRUE(s.segs.empty()) << at << ": applied with " << s.planned - s.emitted << " planned jobs not sent";
      // srnic_rd_ctx drops the QP's READ contexts
      for (size_t i = 0; i < rd_table.size();) {
        if (rd_table[i].q == pend.q) {
          --s.rd_busy;
          ++rd_flushed;
          ++rd_gone;
          rd_table.erase(rd_table.begin() + long(i));
        } else {
          ++i;
        }
      }
    }
    if (rnr) up_q.push_back({pend.q, c + rng.range(0, up_delay)});
    if (kick) {
      ++kicks;
      doorbell_kick(pend.q);
    }
    // the send state moved to a PSN: everything before it is done, the window's una follows
    // (the DUT tells srnic_tx_window after the note: it may lag, never lead)
    if (pend.move && pend.psn_u > s.una_u) {
      s.una_u = pend.psn_u;
      s.una_hist.push_back(s.una_u);
    }
    s.rw_open = false;
    ++notes;
    note_cycles.push_back(c);
    pend.active = false;
  }

  void doorbell(uint32_t q) {
    Qp& s = qps[q];
    s.pi = s.posted;
    doorbell_kick(q);
  }
  void doorbell_kick(uint32_t q) {
    Qp& s = qps[q];
    if (s.active) s.pending = true;
    else enqueue(q);
  }

  void enqueue(uint32_t q) {
    Qp& s = qps[q];
    if (s.queued || s.active) return;
    s.queued = true;
    ready_q.push_back(q);
  }

  void take_job(uint64_t c, uint16_t& idx) {
    const auto& j = dut->job;
    const uint32_t q = uint32_t(kJob.get(j, kQpn));
    ASSERT_LT(q, uint32_t(kQps)) << "cycle " << c;
    Qp& s = qps[q];
    Job e;
    if (stream) {
      // the QP's next packet: of WQE jc_idx (posted and rung), from byte jc_off, PSN jc_psn
      ASSERT_NE(s.jc_idx, s.pi) << "cycle " << c << ": job for QP " << q << " (PSN 0x" << std::hex
                                << kJob.get(j, kPsn) << std::dec << ") beyond the " << s.pi << " WQEs posted";
      Wqe& w = wqe_at(s, s.jc_idx);
      if (s.jc_off == 0) {
        w.planned = true;
        w.first_u = s.jc_psn;
      }
      e = make_job(s, Seg{s.jc_idx, w, s.jc_off, w.len, s.jc_off, s.jc_psn, s.jc_psn});
      s.jc_psn += e.npk;
      s.jc_off += e.len;
      if (e.wqe_end) {
        ++s.jc_idx;
        s.jc_off = 0;
      }
    } else {
      if (!s.stale_segs.empty()) {
        // only the packet offered when the QP was reset may still go; the rest of its segment,
        // and the QP's later stale segments, are dropped
        Seg& g = s.stale_segs.front();
        ASSERT_TRUE(g.offered) << "cycle " << c << ": job for QP " << q << " (PSN 0x" << std::hex << kJob.get(j, kPsn)
                               << std::dec << ") while " << s.stale_segs.size()
                               << " segments of its earlier incarnation are still to be dropped";
        e = make_job(s, g);
        g.offered = false;
        g.e += e.len;
        ++g.psn_u;
        if (g.e >= g.end) {
          s.stale_segs.pop_front();
          --stale_segs_n;
          ++seg_pops;
        }
        ++s.planned;  // (reset_incarnation counted it as never sent)
        ++held_stale_jobs;
      } else {
        ASSERT_FALSE(s.segs.empty()) << "cycle " << c << ": job for QP " << q << " (PSN 0x" << std::hex
                                     << kJob.get(j, kPsn) << ") beyond what the started turns plan";
        e = next_job(s);
        pop_job(s, e);
      }
    }
    idx = e.idx;
    const uint32_t psn = uint32_t(e.psn_u) & kPsnMask;
    const std::string at = "cycle " + std::to_string(c) + " QP " + std::to_string(q) + " job " +
                           std::to_string(s.emitted) + " (WQE " + std::to_string(e.idx) + ")";
    if (e.first && (e.flags & kFence)) {
      // IBA fence: every READ posted before it has completed (its context freed)
      EXPECT_FALSE(rd_has(q)) << at << ": fenced WQE started with READs outstanding";
      ++fenced_started;
      last_fenced_cycle = c;
    }
    ASSERT_EQ(kJob.get(j, kOpcode), e.opcode) << at;
    EXPECT_EQ(kJob.get(j, kJobGen), uint64_t(stream ? gen_tab[q] : e.gen)) << at << ": incarnation";
    EXPECT_EQ(kJob.get(j, kPsn), psn) << at;
    if (win_mode) check_window(c, q, s, e, kJob.get(j, kAckreq) != 0);
    if (HasFatalFailure()) return;
    EXPECT_EQ(kJob.get(j, kAckreq), uint64_t(e.ackreq)) << at;
    EXPECT_EQ(kJob.get(j, kSe), uint64_t(e.se)) << at;
    EXPECT_EQ(kJob.get(j, kResend), uint64_t(e.resend)) << at << ": resend mark";
    if (e.reth) {
      EXPECT_EQ(kJob.get(j, kRethVa), e.reth_va) << at;
      EXPECT_EQ(kJob.get(j, kRethRkey), e.rkey) << at;
      EXPECT_EQ(kJob.get(j, kRethLen), e.reth_len) << at;
    }
    if (e.imm) {
      EXPECT_EQ(kJob.get(j, kImm), e.immdt) << at;
    }
    EXPECT_EQ(kJob.get(j, kPayLen), uint64_t(e.len)) << at;
    if (!e.read) {
      EXPECT_EQ(kJob.get(j, kPayAddr), e.pay_addr) << at;
    }
    if (e.read) {
      EXPECT_TRUE(dut->rdc_valid) << at << ": READ request without its context insert";
      EXPECT_EQ(uint32_t(dut->rdc_first), psn) << at;
      EXPECT_EQ(uint32_t(dut->rdc_last), (psn + e.npk - 1) & kPsnMask) << at;
      EXPECT_EQ(uint64_t(dut->rdc_pa), e.pa) << at;
      EXPECT_EQ(int(dut->rdc_mtu), qps[q].mtu) << at << ": READ context path MTU";
      EXPECT_EQ(uint32_t(dut->rdc_last_len), e.last_len) << at << ": READ last response length";
      ++read_jobs;
      if (!e.first) ++partial_reads;
    }
    if (e.resend) {
      ++s.resent;
      ++resent;
    }
    if (e.resend && !e.first && !e.read) ++resumed_mid;
    if (log_jobs) job_log.push_back({q, e, c});
    ++s.emitted;
    ++jobs;
    if (e.wqe_end) {
      if (!e.read) mark_done(s, e.idx);
      if (auto_free) {  // without rewinds: the ring slot is free once the WQE left
        EXPECT_EQ(e.idx, s.ci_base) << at << ": WQEs leave in order";
        ack_one(s);
      }
    }
  }

  static void encode(const Wqe& w, uint16_t idx, uint32_t* d) {
    encode_sq_wqe(w.op, w.flags, w.imm, w.wr_id, w.laddr, w.len, w.lkey, w.raddr, w.rkey, d, nullptr, idx);
  }

  // Runs idle until every turn has ended (for the scheduler and in the plan stage), every
  // planned job has left (stream reference: every posted WQE) and every rewind and RNR wait is
  // over.
  void settle(int max_cycles = 20000) {
    if (HasFatalFailure()) return;
    Knobs k;
    k.post = 0;
    k.done = k.ar = k.rdc = k.job = 100;
    k.hand = 100;
    k.note = k.kick = k.rnr = k.stale = 100;
    if (win_mode) k.wack = k.wack_all = 100;  // the window tests: everything sent is acknowledged
    for (int i = 0; i < max_cycles && !HasFatalFailure(); ++i) {
      cycle(k);
      bool quiet = ready_q.empty() && !handing && hstop_q.empty() && stop_q.empty() && stale_segs_n == 0 &&
                   rw_q.empty() && !pend.active &&
                   (up_q.empty() || hold_unparks) && !iss_on && done_exp.empty() && flight.empty() && ack_q.empty() &&
                   cw_n == 0 && (!stream || (room_run > kCwCalm && dut.cycle() - last_wake_c > kCwCalm));
      for (uint32_t q : hot) {
        const Qp& s = qps[q];
        quiet = quiet && !s.active && s.fly_n == 0 && s.segs.empty() && (!stream || s.err || s.jc_idx == s.pi) &&
                (!win_mode || s.err || s.una_u == s.jc_psn);
      }
      if (quiet) break;
    }
    for (uint32_t q : hot) {
      const Qp& s = qps[q];
      EXPECT_FALSE(s.active) << "QP " << q << ": turn never ended for the scheduler";
      EXPECT_EQ(s.fly_n, 0) << "QP " << q << ": turn never left the plan stage";
      if (stream) {
        if (s.err) continue;  // stopped at a refused WQE: the test checks its events
        EXPECT_EQ(s.jc_idx, s.pi) << "QP " << q << ": posted WQEs never sent (next packet: WQE " << s.jc_idx
                                  << " offset " << s.jc_off << ")";
        continue;
      }
      EXPECT_EQ(s.emitted, s.planned) << "QP " << q << ": planned packets not sent";
      if (s.rts && !s.err && !s.park) {
        EXPECT_EQ(s.ci, s.pi) << "QP " << q << ": posted WQEs never planned (queued " << s.queued << ", on the "
                              << "wait list " << cw_member(q) << ", fence wait " << s.fwait << ", READs outstanding "
                              << s.rd_busy << ", READ contexts held " << held_by(q) << " of " << rd_table.size()
                              << ")";
      }
    }
    if (cw_live() > 0)
      ADD_FAILURE() << cw_live() << " QPs still wait for a READ context (the oldest QP " << cw_waiters().front()
                    << " since cycle " << cw_member_at(cw_waiters().front()) << ")";
    if (stream && !(room_run > kCwCalm && dut.cycle() - last_wake_c > kCwCalm))
      ADD_FAILURE() << "READ context wake-ups still come (the last at cycle " << last_wake_c << "; contexts free for "
                    << room_run << " cycles)";
    EXPECT_TRUE(rw_q.empty()) << rw_q.size() << " rewinds never taken";
    EXPECT_TRUE(stop_q.empty()) << stop_q.size() << " stop requests never taken";
    EXPECT_EQ(stale_segs_n, 0u) << "segments of an earlier incarnation never dropped";
    EXPECT_FALSE(pend.active) << "the rewind or unpark of QP " << pend.q << " never ended";
  }

  // `phases` phases of 4000 cycles, each with random readiness everywhere (and random rewinds,
  // acknowledgements, RNR waits and stray unparks if `rewinds`).
  void random_phases(int phases, bool rewinds, bool reuse = false) {
    for (int phase = 0; phase < phases && !HasFatalFailure(); ++phase) {
      Knobs k;
      k.post = unsigned(rng.range(2, 40));
      k.hand = unsigned(rng.range(10, 100));
      k.done = unsigned(rng.range(20, 100));
      k.ar = unsigned(rng.range(20, 100));
      k.lat = unsigned(rng.range(0, 60));
      k.rdc = unsigned(rng.range(20, 100));
      k.job = unsigned(rng.range(20, 100));
      k.rw_stale = rng.percent(60) ? 1 : 0;
      k.stop_stale = rng.percent(60) ? 1 : 0;
      k.qreset = rng.percent(50) ? unsigned(rng.range(1, 3)) : 0;
      if (rewinds) {
        k.rw = unsigned(rng.range(1, 5));
        k.rw_rnr = unsigned(rng.range(0, 50));
        k.note = unsigned(rng.range(10, 100));
        k.kick = unsigned(rng.range(10, 100));
        k.rnr = unsigned(rng.range(10, 100));
        k.ack = unsigned(rng.range(1, 20));
        k.up_stray = rng.percent(30) ? 1 : 0;
        k.up_zero = unsigned(rng.range(0, 15));
        k.stale = unsigned(rng.range(10, 100));
        k.reuse = reuse;
        up_delay = rng.range(0, 600);
      }
      for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) cycle(k);
    }
  }
  // Random traffic with a small READ context table (2..10 entries, 2..6 with rewinds: their
  // flushes keep the table emptier) and mostly READs on six QPs.
  void run_few_contexts(bool rewinds) {
    burst = uint32_t(rng.range(256, 6000));
    wqes_per_turn = uint8_t(rng.range(2, 8));
    fence_pct = unsigned(rng.range(0, 20));
    rd_hold = rng.range(20, 400);
    rd_cap = size_t(rng.range(2, rewinds ? 6 : 10));
    read_pct = int(rng.range(40, 80));
    auto_free = !rewinds;
    reset();
    for (int i = 0; i < std::min(kQps, 6) && !HasFatalFailure(); ++i)
      configure(uint32_t(rng.below(kQps)), int(rng.range(1, 3)), int(rng.range(2, 5)), true);
    random_phases(60, rewinds);
    settle(60000);
    std::printf("[bench] READ contexts: %zu, %llu READs started (each checked against rdc_free), %llu turns stopped "
                "in front of a READ, %llu READ jobs, %llu fence stops\n",
                rd_cap, (unsigned long long)ctx_checks, (unsigned long long)ctx_stops, (unsigned long long)read_jobs,
                (unsigned long long)fence_stops);
    print_wait_stats();
    EXPECT_GT(ctx_stops, 50u);
    EXPECT_GT(ctx_checks, 800u);
    EXPECT_GT(cw_joins, 50u);
    EXPECT_GT(cw_wakes_cred, 50u);
    EXPECT_GT(cw_wakes_poll, 0u);
    EXPECT_GT(cw_idle, 50u) << "too few turns of waiting QPs ended without a WQE read";
    if (rewinds) {
      EXPECT_GT(cw_kills_rw, 20u) << "too few rewinds applied to waiting QPs";
    } else {
      EXPECT_GT(cw_kills_reset, 5u) << "too few QPs reset while they wait";
    }
    EXPECT_EQ(read_jobs, ctx_checks) << "READs sent != READs started";
    EXPECT_FALSE(dut.rtl_error());
  }
  void print_wait_stats() const {
    if (stream) {
      std::printf("[bench] READ contexts: %llu wake-ups, at most %u contexts of a QP held or reserved, %llu READs "
                  "started beyond the QP's share\n",
                  (unsigned long long)cw_wakes, max_share, (unsigned long long)borrows);
      return;
    }
    std::printf("[bench] READ context waits: %llu stops in front of a READ (%llu for the QP's share, %llu for want of "
                "a free context), %llu joined the wait list, %llu stops kicked (%llu with room back at the turn end, "
                "%llu with the list full), %llu of a QP on the list already, %llu turns ended waiting (no WQE read), "
                "%llu wake-ups (%llu by freed contexts, %llu polls), entries killed by %llu rewinds and %llu of "
                "%llu QP resets, %llu dead entries dropped, at most %zu entries (%zu live), the longest wait %llu "
                "cycles; at most %u contexts of a QP held or reserved, %llu READs started beyond the QP's share\n",
                (unsigned long long)ctx_stops, (unsigned long long)share_stops, (unsigned long long)global_stops,
                (unsigned long long)cw_joins, (unsigned long long)(cw_room_kicks + cw_full_kicks),
                (unsigned long long)cw_room_kicks, (unsigned long long)cw_full_kicks, (unsigned long long)cw_rewaits,
                (unsigned long long)cw_idle, (unsigned long long)cw_wakes, (unsigned long long)cw_wakes_cred,
                (unsigned long long)cw_wakes_poll, (unsigned long long)cw_kills_rw, (unsigned long long)cw_kills_reset,
                (unsigned long long)qp_resets, (unsigned long long)cw_dead_drops, max_cw, max_cw_live,
                (unsigned long long)max_cw_wait, max_share, (unsigned long long)borrows);
  }

  // ------------------------------------------------------------ READ context share and waits
  // Directed tests for both references (WqeFetchBench: the turn reference, which also keeps the
  // wait list; WqeFetchTurnsBench: the stream reference with several turns of a QP in flight).
  static Knobs ready_knobs() {
    Knobs k;
    k.post = 0;
    k.hand = k.done = k.ar = k.rdc = k.job = k.kick = 100;
    k.note = k.rnr = k.stale = 100;
    return k;
  }
  void run(int n, const Knobs& k) {
    for (int i = 0; i < n && !HasFatalFailure(); ++i) cycle(k);
  }
  // runs until the poll's tick (cycles from reset, modulo the poll period) is t
  void run_to_tick(unsigned t, const Knobs& k) {
    while (!HasFatalFailure() && cw_tick(dut.cycle()) != t) cycle(k);
  }
  // every READ context of q (all of them if q < 0) freed in the next cycle
  void free_contexts(int64_t q) {
    for (RdEntry& e : rd_table)
      if (q < 0 || e.q == uint32_t(q)) e.free_at = dut.cycle();
  }
  static constexpr uint64_t kNever = uint64_t(1) << 40;  // a READ whose responses never come
  // q configured (MTU 256, RTS) with a ring of 2^log_sq <= 64 slots that no 4 KiB boundary cuts:
  // a WQE read ends only at the ring end or at sched_wqes, so these tests know when a turn's
  // done reports more work
  void configure_in_page(uint32_t q, int log_sq) {
    do configure(q, 1, log_sq, true);
    while (!HasFatalFailure() && ((qps[q].base >> 6) & 63) + (uint64_t(1) << log_sq) > 64);
  }

  // A QP's share and what it borrows beyond it. QP h holds 34 of the 64 contexts (READs whose
  // responses never come), so 30 are free. (a) QP a posts 24 READs whose responses never come and
  // gets exactly its share, 16: then 14 are free, fewer than RD_RESERVE + 2, nothing to borrow;
  // a waits. (b) QP b, under its share, gets a context for each of its 10 READs meanwhile, while
  // a, holding its 16, waits on; a is woken by the poll while contexts are free (every 256
  // cycles) and each wake-up reads its WQEs again (one turn, and the turns read ahead with it),
  // never more often. (c) Then h's contexts are freed: a is woken (by their credits) and, with
  // contexts spare, goes beyond its share: its other 8 READs. (d) a posts 30 more: alone it takes
  // contexts until fewer than RD_RESERVE + 2 beyond the reserved ones are free (16 or 17 stay
  // free: the free count is a cycle late) and waits again. Once a's and b's contexts are freed,
  // the rest goes.
  void read_share_limits_one_qp() {
    rd_hold = kNever;
    reset();
    const uint32_t a = uint32_t(rng.below(kQps)), b = (a + 1) % kQps, h = (a + 2) % kQps;
    configure_in_page(a, 5);
    configure_in_page(b, 5);
    for (int i = 0; i < 34; ++i) inject_read(h, kNever);
    const Knobs k = ready_knobs();
    run(10, k);
    // (a)
    for (int i = 0; i < 24; ++i) ASSERT_TRUE(post(a, 0, kRead, 0, int64_t(rng.range(1, 3 * 256))));
    ring = int(a);
    run(1000, k);
    run_to_tick(kPoll / 2, k);  // (between polls: a waits)
    EXPECT_EQ(held_by(a), kRdShare) << "QP a's READs in the table with " << rd_cap - 34
                                    << " contexts free at first (its share: " << kRdShare << ")";
    EXPECT_EQ(read_jobs, uint64_t(kRdShare));
    if (!stream) {
      EXPECT_TRUE(cw_member(a)) << "QP a, holding its share with no contexts spare, does not wait";
    }
    // (b)
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(post(b, 0, kRead, 0, int64_t(rng.range(1, 3 * 256))));
    ring = int(b);
    run(500, k);
    EXPECT_EQ(held_by(b), 10u) << "QP b, under its share, did not get a context for each READ (" << rd_table.size()
                               << " of " << rd_cap << " in use)";
    EXPECT_EQ(held_by(a), kRdShare) << "QP a took more than its share with contexts scarce";
    const uint64_t reads0 = qps[a].reads, polls0 = cw_wakes_poll, stops0 = share_stops, polls = 20;
    run(int(polls * kPoll), k);
    const uint64_t n = qps[a].reads - reads0;
    EXPECT_GE(n, polls - 2) << "QP a, waiting for its share with contexts free, was not woken every " << kPoll
                            << " cycles";
    EXPECT_LE(n, (polls + 2) * uint64_t(kTpq)) << "QP a's WQEs were read more often than once per poll";
    if (!stream) {
      EXPECT_GE(cw_wakes_poll - polls0, polls - 2);
      EXPECT_GE(share_stops - stops0, polls - 2);
    }
    EXPECT_EQ(held_by(a), kRdShare);
    EXPECT_EQ(read_jobs, uint64_t(kRdShare) + 10);
    // (c)
    const uint64_t cred0 = cw_wakes_cred;
    free_contexts(h);
    run(600, k);
    EXPECT_EQ(held_by(a), 24u) << "QP a did not go beyond its share with contexts spare";
    EXPECT_EQ(read_jobs, uint64_t(kRdShare) + 10 + 8);
    if (!stream) {
      EXPECT_EQ(cw_wakes_cred - cred0, 1u) << "QP a was not woken once by the freed contexts";
      EXPECT_EQ(cw_live(), 0u);
    }
    // (d)
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(post(a, 0, kRead, 0, int64_t(rng.range(1, 3 * 256))));
    ring = int(a);
    run(1000, k);
    run_to_tick(kPoll / 2, k);
    const size_t left = rd_cap - rd_table.size();
    const unsigned held_a = held_by(a);
    EXPECT_GE(left, size_t(kRdReserve)) << "QP a, beyond its share, left fewer than RD_RESERVE contexts free";
    EXPECT_LE(left, size_t(kRdReserve) + 1) << "QP a, beyond its share, stopped with contexts spare";
    EXPECT_GT(held_a, 24u);
    EXPECT_EQ(read_jobs, uint64_t(rd_table.size()));
    if (!stream) {
      EXPECT_TRUE(cw_member(a)) << "QP a does not wait for a context";
    }
    free_contexts(-1);
    rd_hold = 20;
    settle();
    std::printf("[bench] QP a: %llu WQE reads in %llu cycles waiting for its share; alone beyond it: %u contexts "
                "held, %zu left free\n",
                (unsigned long long)n, (unsigned long long)(polls * kPoll), held_a, left);
    print_wait_stats();
    EXPECT_FALSE(dut.rtl_error());
  }

  // Every context held: four QPs post 17 READs each whose responses never come, one after the
  // other: the first two get all 17 (contexts spare: they borrow beyond their share), the third
  // its share of 16 (14 free then, fewer than RD_RESERVE + 2), the fourth 13 or 14 of the rest
  // (63 or 64 held: the margin of the late free count); the last two wait. A fifth QP's nv READs
  // then find none: its turn stops in front of the first and it waits too. Over a long idle time
  // nothing is freed, so there is no wake-up (no credit, and no poll while no context is free):
  // no QP is turned and no WQE is read again (before decision 120 each of these QPs was requeued
  // at every turn end and read its WQEs again, turn after turn). Then the first QP's contexts are
  // freed: the waiters are woken, in order, and the fifth QP's first READs get contexts within
  // 300 cycles. With nv 2 every stopped turn read all of its QP's WQEs from the READ on; with nv
  // 40 the fifth QP has more posted than its turns read (more than TURNS_PER_QP x 8; each turn's
  // done reports more work when it is issued, before the plan stage finds no context): it must
  // wait all the same, its later turns ending in the issue stage without a WQE read (turn
  // reference: done_more 0, the QP on the wait list), not be turned again and again.
  void context_wait_does_not_reread_wqes(int nv) {
    rd_hold = kNever;
    reset();
    const uint32_t base = uint32_t(rng.below(kQps));
    uint32_t qs[5];
    for (int i = 0; i < 5; ++i) {
      qs[i] = (base + uint32_t(i)) % kQps;
      if (i < 4 || nv <= 8) configure_in_page(qs[i], 5);
      else configure(qs[i], 1, 6, true);
    }
    const Knobs k = ready_knobs();
    for (int i = 0; i < 4 && !HasFatalFailure(); ++i) {
      for (int j = 0; j < 17; ++j) ASSERT_TRUE(post(qs[i], 0, kRead, 0, 100));
      ring = int(qs[i]);
      run(300, k);
      if (i < 2) {
        EXPECT_EQ(held_by(qs[i]), 17u) << "QP " << i << " did not borrow beyond its share with contexts spare";
      } else if (i == 2) {
        EXPECT_EQ(held_by(qs[i]), kRdShare) << "QP 2 with fewer than RD_RESERVE + 2 contexts free";
      }
    }
    EXPECT_GE(rd_table.size(), rd_cap - 1) << "READ contexts held";
    if (!stream) {
      EXPECT_TRUE(cw_member(qs[2]) && cw_member(qs[3])) << "QPs 2 and 3 do not wait";
    }
    const uint32_t v = qs[4];
    for (int j = 0; j < nv; ++j) ASSERT_TRUE(post(v, 0, kRead, 0, 100));
    ring = int(v);
    run(300, k);
    EXPECT_EQ(held_by(v), 0u) << "the fifth QP's READ got a context";
    EXPECT_GE(qps[v].reads, 1u) << "the fifth QP's WQEs were never read";
    if (!stream) {
      EXPECT_TRUE(cw_member(v)) << "the fifth QP does not wait";
      if (nv > 8) {
        EXPECT_GE(cw_idle, 1u) << "no turn of the fifth QP ended for its wait (done_more 0, no WQE read)";
      }
    }
    const uint64_t v0 = qps[v].reads, reads0 = reads, turns0 = turns_done, mr0 = mr_reqs, wakes0 = cw_wakes;
    run(4000, k);
    EXPECT_EQ(cw_wakes - wakes0, 0u) << "a wake-up with nothing freed and no context free";
    EXPECT_EQ(qps[v].reads - v0, 0u) << "the fifth QP's WQEs were read again while it waits and no context is freed";
    EXPECT_EQ(reads - reads0, 0u) << "WQEs read while every context is held";
    EXPECT_EQ(turns_done - turns0, 0u) << "turns handed out while every context is held";
    EXPECT_EQ(mr_reqs - mr0, 0u);
    const uint64_t f = dut.cycle();
    free_contexts(qs[0]);
    uint64_t got = 0;
    for (int i = 0; i < 2000 && !HasFatalFailure() && !got; ++i) {
      cycle(k);
      if (held_by(v) >= std::min(unsigned(nv), 2u)) got = dut.cycle();
    }
    ASSERT_NE(got, 0u) << "the fifth QP's READs never got a context";
    EXPECT_LE(got - f, 300u) << "the fifth QP was woken late";
    free_contexts(-1);
    rd_hold = 20;
    settle();
    std::printf("[bench] %zu contexts held by four QPs; the fifth QP's READs in the table %llu cycles after the free\n",
                rd_cap, (unsigned long long)(got - f));
    print_wait_stats();
    EXPECT_FALSE(dut.rtl_error());
  }

  // Eight contexts, seven held by a QP that posts nothing (READs of it in the table, their
  // responses never come); four QPs post seven READs each (one turn reads them all: its done
  // reports no more work) and wait. Then the oldest context is freed about every 300 cycles, 24
  // times, early in a poll period: each free wakes exactly one waiter, the oldest, at once (1..2
  // cycles later), which plans its next READ in the freed context and waits again at the tail.
  // So the READs go on, one per freed context, round robin (turn reference: the wake-ups name the
  // oldest waiter and each uses the freed context's credit), and nobody starves: each QP gets 6
  // of the 24 contexts.
  void wake_up_per_freed_context() {
    rd_cap = 8;
    rd_hold = kNever;
    reset();
    const uint32_t base = uint32_t(rng.below(kQps));
    const uint32_t h = (base + 4) % kQps;
    uint32_t qs[4];
    for (int i = 0; i < 4; ++i) {
      qs[i] = (base + uint32_t(i)) % kQps;
      configure_in_page(qs[i], 5);
    }
    configure(h, 1, 5, true);
    for (size_t i = 0; i + 1 < rd_cap; ++i) inject_read(h, kNever);
    const Knobs k = ready_knobs();
    run(10, k);
    for (int i = 0; i < 4 && !HasFatalFailure(); ++i) {
      for (int j = 0; j < 7; ++j) ASSERT_TRUE(post(qs[i], 0, kRead, 0, 100));
      ring = int(qs[i]);
      run(100, k);
    }
    run(300, k);
    ASSERT_EQ(read_jobs, 0u) << "a READ planned without a context";
    if (!stream) {
      ASSERT_EQ(cw_live(), 4u) << "not every QP waits for a context";
    }
    const uint64_t turns0 = turns_done;
    run(300, k);
    EXPECT_EQ(turns_done, turns0) << "a waiting QP was turned again without a context freed";
    std::string seq;
    uint32_t order[4] = {};
    for (int n = 0; n < 24 && !HasFatalFailure(); ++n) {
      // freed early in a poll period (its counter runs from reset): the woken waiter takes the
      // context before the period ends, so no poll wakes another one while it is free
      run_to_tick(8, k);
      ASSERT_FALSE(rd_table.empty());
      rd_table.front().free_at = dut.cycle();  // the oldest
      const uint64_t f = dut.cycle(), w0 = cw_wakes, c0 = cw_wakes_cred, r0 = read_jobs;
      uint64_t first = 0, w1 = w0;
      uint32_t first_q = 0;
      std::string woken;
      for (int i = 0; i < 300 && !HasFatalFailure(); ++i) {
        cycle(k);
        if (!first && cw_wakes > w0) {
          first = last_wake_c;
          first_q = last_wake_q;
        }
        if (cw_wakes > w1) {
          woken += " " + std::to_string(last_wake_q) + "@" + std::to_string(last_wake_c - f);
          w1 = cw_wakes;
        }
      }
      const std::string at = "free " + std::to_string(n) + " at cycle " + std::to_string(f);
      ASSERT_NE(first, 0u) << at << ": the freed context woke nobody";
      EXPECT_LE(first - f, 2u) << at << ": the wake-up came " << first - f << " cycles after the free";
      EXPECT_EQ(cw_wakes - w0, 1u) << at << ": wake-ups (" << woken << " )";
      if (!stream) {
        EXPECT_EQ(cw_wakes_cred - c0, 1u) << at << ": wake-ups by the freed context";
      }
      EXPECT_EQ(read_jobs - r0, 1u) << at << ": READs planned in the freed context";
      // round robin: the first four wake-ups name the four QPs, then the same order again
      if (n < 4) {
        for (int i = 0; i < n; ++i)
          EXPECT_NE(order[i], first_q) << at << ": QP " << first_q << " woken twice in the first round";
        order[n] = first_q;
      } else {
        EXPECT_EQ(first_q, order[n % 4]) << at << ": not round robin";
      }
      seq += " " + std::to_string(first_q) + ":" + std::to_string(read_jobs - r0);
    }
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(qps[qs[i]].emitted, 6u) << "QP " << qs[i] << ": READs in the 24 freed contexts";  // (READs only)
    std::printf("[bench] 24 contexts freed one by one: (woken QP:READs planned)%s\n", seq.c_str());
    free_contexts(-1);
    rd_hold = 20;
    settle();
    print_wait_stats();
    EXPECT_FALSE(dut.rtl_error());
  }

  // A QP reset takes the QP off the wait list. Every context held (READs of QP h, injected, never
  // freed): QP v's READ stops and v waits; nothing is ever freed, so v is never woken (no credit,
  // and no poll without a context free), and a doorbell's turn reads nothing. v is reset and set
  // up again (a QP_MODIFY, then qp_reset_valid) and posts a WRITE: the turn its doorbell gives
  // reads it and the WRITE goes at once, though no READ context is freed (were v still on the list
  // its turns would end without a WQE read).
  void reset_leaves_wait_list() {
    rd_cap = 4;
    rd_hold = kNever;
    reset();
    const uint32_t v = uint32_t(rng.below(kQps)), h = (v + 1) % kQps;
    configure(v, 1, 3, true);
    for (size_t i = 0; i < rd_cap; ++i) inject_read(h, kNever);
    const Knobs k = ready_knobs();
    ASSERT_TRUE(post(v, 0, kRead, 0, 100));
    ASSERT_TRUE(post(v, 0, kWrite, 0, 100));
    ring = int(v);
    run(200, k);
    EXPECT_EQ(qps[v].emitted, 0u) << "v's READ, or the WRITE behind it, went without a context";
    ASSERT_GE(qps[v].reads, 1u);
    if (!stream) {
      ASSERT_TRUE(cw_member(v)) << "v does not wait for a context";
    }
    const uint64_t reads0 = qps[v].reads, turns0 = turns_done;
    ring = int(v);
    run(200, k);
    EXPECT_GT(turns_done, turns0) << "the doorbell gave v no turn";
    EXPECT_EQ(qps[v].reads, reads0) << "v's WQEs were read again while it waits";
    configure(v, 1, 3, true);
    ASSERT_TRUE(post(v, 0, kWrite, 0, 300));
    ring = int(v);
    const uint64_t c0 = dut.cycle();
    uint64_t sent = 0;
    for (int i = 0; i < 300 && !HasFatalFailure() && !sent; ++i) {
      cycle(k);
      if (qps[v].emitted == 2) sent = dut.cycle();
    }
    ASSERT_NE(sent, 0u) << "v's WRITE was not sent after the reset (v still waits for a READ context?)";
    EXPECT_LE(sent - c0, 60u) << "v's WRITE was sent late after the reset";
    EXPECT_EQ(rd_frees + rd_flushed, 0u) << "a READ context was freed";
    if (!stream) {
      EXPECT_FALSE(cw_member(v));
      EXPECT_EQ(cw_n, 0u) << "the dead entry was not dropped";
      EXPECT_EQ(cw_kills_reset, 1u);
      EXPECT_EQ(cw_wakes, 0u);
    }
    std::printf("[bench] QP v reset while it waits for a READ context: its WRITE sent %llu cycles after the "
                "doorbell\n",
                (unsigned long long)(sent - c0));
    free_contexts(-1);
    rd_hold = 20;
    settle();
    print_wait_stats();
    EXPECT_FALSE(dut.rtl_error());
  }

  // After a reset test: q set up again, one one-packet WQE of op posted leaves with the new
  // incarnation and nothing with another.
  void new_incarnation_sends(uint32_t q, uint8_t op) {
    configure_in_page(q, 4);
    watch_q = int(q);
    watch_gen = gen_tab[q];
    watch_taken = watch_bad = watch_moved = 0;
    ASSERT_TRUE(post(q, 0, op, 0, 100));
    ring = int(q);
    settle();
    EXPECT_EQ(watch_taken, 1u) << "the " << (op == kSend ? "SEND" : "WRITE")
                               << " posted after the reset did not leave with the new incarnation";
    EXPECT_EQ(watch_bad, 0u);
  }

  // A QP_MODIFY to RESET of q (set up in RTS, nothing posted, its ring in one page) waits for the
  // turns of q in flight (decision 125). WQEs are posted and rung (turn reference: a 3-packet WRITE
  // and a SEND, read by one turn; stream reference: 2 x TURNS_PER_QP one-packet WRITEs, two per
  // turn: TURNS_PER_QP turns in flight) and their WQE beats held back; with the turns in flight the
  // RESET is offered (offer_reset). It must not be taken while a turn of q is in flight or in the
  // issue stage (checked in every cycle: the 200 cycles the beats are held, and after their release
  // until the last turn of q has left the plan stage). Then the bench moves q's incarnation on, as
  // srnic_core does once every block took the command (the stream reference, which cannot follow
  // segments dropped stale, once every packet of q has left: the core may, other blocks take the
  // command later; at once if the command was taken with a turn in flight), and every job of q
  // offered, before and after that, must carry the old incarnation. tx_held (turn reference): the
  // TX queue takes nothing until the incarnation moved (the turn's segments wait at the cutter
  // across the reset and are dropped stale, but for a packet offered, which may still go); else it
  // is always ready. Then a doorbell of q, in RESET, reads nothing.
  void reset_waits_for_turn(uint32_t q, bool tx_held) {
    Qp& s = qps[q];
    Knobs k = ready_knobs();
    k.job = tx_held ? 0 : 100;
    const uint8_t old = gen_tab[q];
    watch_q = int(q);
    watch_gen = old;
    watch_taken = watch_bad = watch_moved = 0;
    const uint64_t drops0 = seg_drops, stale0 = held_stale_jobs;
    const int turns = stream ? kTpq : 1, npk = stream ? 2 * kTpq : 4;
    if (stream) {
      wqes_per_turn = 2;
      for (int i = 0; i < 2 * kTpq; ++i) ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
    } else {
      ASSERT_TRUE(post(q, 0, kWrite, 0, 3 * 256));
      ASSERT_TRUE(post(q, 0, kSend, 0, 100));
    }
    r_hold = kNever;
    ring = int(q);
    for (int i = 0; i < 300 && !HasFatalFailure() && s.fly_n < turns; ++i) cycle(k);
    ASSERT_EQ(s.fly_n, turns) << "QP " << q << ": the turns reading its WQEs are not in flight";
    ASSERT_EQ(s.reads_out, turns) << "QP " << q << ": WQE reads outstanding";
    offer_reset(q);
    const uint64_t release = dut.cycle() + 200;
    bool moved = false;
    for (int i = 0; i < 3000 && !HasFatalFailure() && !(moved && dut.cycle() > release); ++i) {
      if (dut.cycle() == release) r_hold = 0;  // the WQE beats go
      cycle(k);
      if (cmd_taken && !moved && (!stream || s.fly_n > 0 || s.jc_idx == s.pi)) {
        if (s.fly_n == 0) {
          reset_incarnation(q);
        } else {  // (taken with a turn in flight, reported: the incarnation moves on under the turn)
          gen_tab[q] = other_gen(q, true);
          qp_reset_q.push_back(q);
        }
        watch_moved = dut.cycle();
        moved = true;
        k.job = 100;
      }
    }
    ASSERT_TRUE(moved) << "QP " << q << ": the QP_MODIFY to RESET offered at cycle " << cmd_offered
                       << (cmd_taken ? " was taken, but not every packet left" : " was never taken");
    settle();
    EXPECT_EQ(cmd_early, 0u) << "QP " << q << ": the QP_MODIFY to RESET was taken with a turn of the QP in flight";
    EXPECT_GT(cmd_taken, s.end_at) << "QP " << q << ": the QP_MODIFY to RESET was taken at cycle " << cmd_taken
                                   << ", before the QP's last turn left the plan stage (cycle " << s.end_at << ")";
    EXPECT_GT(cmd_taken, release) << "QP " << q << ": the QP_MODIFY to RESET was taken while the WQE beats were "
                                  << "held back";
    EXPECT_LE(cmd_taken, s.end_at + uint64_t(kCmdWait)) << "QP " << q << ": the QP_MODIFY to RESET was taken late";
    EXPECT_GE(cmd_busy_c, 200u) << "QP " << q << ": the QP_MODIFY to RESET did not wait with the turns in flight";
    EXPECT_EQ(watch_bad, 0u) << "QP " << q << ": cycles a job of the QP was offered with an incarnation other than "
                             << unsigned(old) << " (the WQEs posted before the reset), the new one is "
                             << unsigned(gen_tab[q]);
    EXPECT_NE(gen_tab[q], old);
    if (stream) {
      EXPECT_EQ(watch_taken, uint64_t(npk))
          << "QP " << q << ": packets of the WQEs posted before the reset sent with the old incarnation";
    } else if (tx_held) {
      EXPECT_LE(watch_taken, 1u) << "QP " << q << ": more than the packet offered at the reset left";
      EXPECT_EQ(held_stale_jobs - stale0, watch_taken);
      EXPECT_EQ(seg_drops - drops0, 2u) << "QP " << q << ": segments of the WQEs posted before the reset dropped";
    } else {
      EXPECT_GE(watch_taken, 1u) << "QP " << q << ": no packet sent with the old incarnation (the TX queue was ready)";
    }
    std::printf("[bench] QP %u: QP_MODIFY to RESET offered at cycle %llu with %d turn(s) in flight, WQE beats "
                "released at %llu, the last turn ended at %llu, the command taken at %llu (%llu cycles waiting "
                "for turns); %llu of %d packets sent with the old incarnation %u, %llu segments dropped stale\n",
                q, (unsigned long long)cmd_offered, turns, (unsigned long long)release, (unsigned long long)s.end_at,
                (unsigned long long)cmd_taken, (unsigned long long)cmd_busy_c, (unsigned long long)watch_taken, npk,
                unsigned(old), (unsigned long long)(seg_drops - drops0));
    // in RESET a doorbell's turn reads nothing (and sends nothing: watched)
    const uint64_t reads0 = s.reads, turns0 = turns_done, bad0 = watch_bad;
    ring = int(q);
    run(100, ready_knobs());
    EXPECT_GT(turns_done, turns0) << "QP " << q << ": the doorbell gave the QP no turn";
    EXPECT_EQ(s.reads, reads0) << "QP " << q << ": a turn of the QP in RESET read WQEs";
    EXPECT_EQ(watch_bad, bad0) << "QP " << q << ": a job of the QP in RESET offered";
    watch_q = -1;
  }

  // Random traffic with contexts as srnic_core has them (64) but held long (1000..4000 cycles)
  // and mostly READs on six QPs (the first one starts alone with 40 READs and borrows beyond its
  // share): QPs borrow beyond their share (16) while contexts are spare,
  // reach it when they are not, and together take the whole pool (6 x 16 > 64), so turns stop in
  // front of READs for both reasons, QPs wait, are woken by freed contexts and by polls, and
  // doorbells of waiting QPs end in the issue stage. Every READ is checked against both rules,
  // every stop for being needed, the wait list cycle by cycle (turn reference).
  void run_read_share() {
    burst = uint32_t(rng.range(256, 6000));
    wqes_per_turn = uint8_t(rng.range(2, 8));
    fence_pct = rng.percent(50) ? 0 : 2;  // (a fence behind a READ waits for its responses: long here)
    const uint64_t hold = rng.range(1000, 4000);
    rd_hold = kNever;  // (until the start is over)
    rd_cap = 64;
    read_pct = int(rng.range(70, 95));
    reset();
    const uint32_t base = uint32_t(rng.below(kQps));
    for (int i = 0; i < std::min(kQps, 6) && !HasFatalFailure(); ++i)  // 16+ slots (the first QP 64)
      configure((base + uint32_t(i)) % kQps, int(rng.range(1, 3)), i == 0 ? 6 : int(rng.range(4, 5)), true);
    // (a start with 40 READs posted on the first QP alone, which borrows beyond its share, then 16
    // on each of the others: together more than the pool)
    for (int j = 0; j < 40; ++j) post(hot[0], 0, kRead, 0);
    ring = int(hot[0]);
    run(800, ready_knobs());
    EXPECT_EQ(held_by(hot[0]), 40u) << "the first QP alone did not borrow beyond its share";
    for (RdEntry& e : rd_table) e.free_at = dut.cycle() + rng.range(1, hold);
    rd_hold = hold;
    for (size_t i = 1; i < hot.size(); ++i) {
      for (int j = 0; j < 16; ++j) post(hot[i], 0, kRead);
      ring = int(hot[i]);
      cycle(ready_knobs());
    }
    random_phases(40, false);
    settle(100000);
    print_wait_stats();
    std::printf("[bench] %llu READ jobs, %llu jobs\n", (unsigned long long)read_jobs, (unsigned long long)jobs);
    EXPECT_EQ(read_jobs, ctx_checks) << "READs sent != READs started";
    EXPECT_GT(read_jobs, 1000u);
    if (!stream) {
      EXPECT_GT(share_stops, 50u);
      EXPECT_GT(global_stops, 20u);
      EXPECT_GT(cw_joins, 100u);
      EXPECT_GT(cw_wakes_cred, 100u);
      EXPECT_GT(cw_wakes_poll, 20u);
      EXPECT_GT(cw_idle, 100u) << "too few turns of waiting QPs ended without a WQE read";
    }
    EXPECT_FALSE(dut.rtl_error());
  }
  // Random knobs for the go-back-N random tests (fences in fence_lo..fence_hi percent, the
  // configure() size argument in size_lo..size_hi), the bench reset and up to 5 QPs configured
  // for rewinds.
  void start_rewind_traffic(unsigned fence_lo, unsigned fence_hi, int size_lo, int size_hi) {
    burst = uint32_t(rng.range(256, 6000));
    wqes_per_turn = uint8_t(rng.range(2, 8));
    fence_pct = unsigned(rng.range(fence_lo, fence_hi));
    rd_hold = rng.range(20, 400);
    auto_free = false;
    reset();
    const int nq = std::min(kQps, 5);
    for (int i = 0; i < nq && !HasFatalFailure(); ++i)
      configure(uint32_t(rng.below(kQps)), int(rng.range(1, 3)), int(rng.range(size_lo, size_hi)), true);
  }
  void print_rewind_stats() const {
    std::printf("[bench] %llu rewinds and %llu stop requests of an earlier incarnation dropped\n",
                (unsigned long long)stale_rws, (unsigned long long)stale_stops);
    std::printf("[bench] %llu rewinds (%llu applied), %llu notes, %llu kicks, %llu unparks (%llu stray), %llu READ "
                "contexts dropped, %llu jobs (%llu resent, %llu inside a message, %llu partial re-reads), %llu parked "
                "turns, %llu WQEs acknowledged, %llu reused slots reported, %llu resends of a WQE's last packet alone (the "
                "rest acknowledged), %llu resends begun at una inside a WQE\n",
                (unsigned long long)rw_taken, (unsigned long long)rw_applied, (unsigned long long)notes,
                (unsigned long long)kicks, (unsigned long long)unparks, (unsigned long long)stray_unparks,
                (unsigned long long)rd_flushed, (unsigned long long)jobs, (unsigned long long)resent,
                (unsigned long long)resumed_mid, (unsigned long long)partial_reads, (unsigned long long)parked_turns,
                (unsigned long long)acked, (unsigned long long)stale_reports, (unsigned long long)skipped_wqes,
                (unsigned long long)skipped_inside);
  }

  struct Beat {
    uint64_t at;
    uint32_t data[16];
    uint32_t q;  // the turn's QP ...
    size_t k;    // ... and which of its WQEs
    bool last;   // the read's last beat
  };
  // a turn in the DUT's turn ring or plan stage (turn reference), in ring order
  enum FlKind : uint8_t { kFlWork, kFlFlush, kFlStop };
  struct Flight {
    uint32_t q;
    FlKind kind;  // a WQE read; a stopped QP's flush report; a host stop
  };
  // the done of a turn pushed with its WQE read, not yet seen
  struct DoneExp {
    uint32_t q;
    bool more;
  };
  struct Mr {
    bool valid;
    uint64_t pa;
  };
  struct Taken {
    uint32_t q;
    Job j;
    uint64_t cycle;
  };

  Rng rng;
  Dut<Vsrnic_wqe_fetch> dut;
  std::vector<Qp> qps;
  std::vector<uint32_t> hot;
  std::deque<uint32_t> ready_q;
  bool iss_on = false;       // the issue stage holds a scheduler turn (handed out, not yet decided) ...
  uint32_t iss_q = 0;        // ... of this QP
  std::deque<DoneExp> done_exp;
  bool ar_wait = false;      // a WQE read is offered: its address, length, sched_wqes then
  uint64_t ar_addr0 = 0;
  unsigned ar_len0 = 0, ar_wqes = 0;
  std::deque<Flight> flight;
  bool stream = false;       // the stream reference (WqeFetchTurnsBench) instead of the turn reference
  // in-flight cap (WqeFetchWindowBench): tx_window, the acknowledgements to present (QP, PSN)
  bool win_mode = false;
  uint32_t win = 0;
  uint32_t ack_m = 63;       // AckReq interval mask (ackreq_mask(win))
  std::deque<std::pair<uint32_t, uint32_t>> ack_q;
  bool ack_driven = false;   // ack_q.front() is on the port
  // this cycle's kick by its cause (kick_port)
  enum KickBy : uint8_t { kNoKick, kByTurn, kByRewind, kByWindow, kByWake };
  KickBy kick_by = kNoKick;
  bool plan_kick_now = false;  // ... it is the plan stage's
  uint64_t idle_done_c = ~uint64_t(0) - 1;  // the last turn that ended without a WQE read (stream): cycle, QP, more
  uint32_t idle_done_q = 0;
  bool idle_done_more = false;
  uint64_t last_hand_c = 0, last_ack_c = 0;  // the last hand-out, the last acknowledgement taken
  uint64_t handouts = 0;
  uint64_t win_waits = 0, win_kicks = 0, acks_taken = 0, acks_stale = 0, fill_jobs = 0, fill_jobs_old = 0;
  uint64_t max_win_d = 0;
  std::deque<Beat> rbeats;
  std::deque<Ev> ev_expect;
  std::vector<Ev> ev_seen;  // stream reference: the events as they came
  std::deque<uint32_t> hstop_q;
  std::deque<Stop> stop_q;                           // stop requests to offer, in order
  bool stop_driven = false;                          // stop_q.front() is on the port
  std::vector<uint8_t> gen_tab;                      // srnic_qp_gen: each QP's incarnation
  size_t stale_segs_n = 0;                           // segments of every QP still to be dropped
  // segments, rewinds and stop requests of an earlier incarnation dropped; stop requests taken
  uint64_t seg_drops = 0, stale_rws = 0, stale_stops = 0, stops = 0;
  bool held_last = false;        // last cycle a packet job (not a READ) was offered and not taken ...
  uint32_t held_q = 0;           // ... of this QP
  uint64_t held_stale_jobs = 0;  // such jobs of a QP reset since, taken
  std::vector<RdEntry> rd_table;
  std::deque<Rewind> rw_q;                           // rewinds to offer, in order
  bool rw_driven = false;                            // rw_q.front() is on the port
  std::deque<std::pair<uint32_t, uint64_t>> up_q;    // RNR waits and reused slots: QP, answer cycle
  bool hold_unparks = false;                         // a test holds the RNR waits
  uint64_t up_delay = 300;
  Pending pend;
  std::vector<Taken> job_log;
  std::vector<uint64_t> note_cycles;
  bool allow_bad = false;  // a directed test writes a WQE the DUT refuses
  bool log_jobs = false;   // keep every job taken in job_log
  bool auto_free = true;   // ring slots freed when the WQE left (no rewinds)
  unsigned fence_pct = 25;
  int ring = -1;  // a directed doorbell for this QP in the next cycle
  uint64_t rd_hold = 200;  // READ contexts live 1..rd_hold cycles
  size_t rd_cap = 64;      // entries of the READ context table
  unsigned rdc_free_next = 0;
  unsigned rd_resv = 0;       // READs started (MR request) and not yet in the table
  uint64_t last_short = 0;    // the last cycle rdc_free was below rd_resv + 2
  unsigned rd_gone = 0;       // table entries removed since rdc_freed was last driven ...
  unsigned freed_now = 0;     // ... and the rdc_freed of this cycle
  // what the DUT decides on in this cycle, as it began (drive_rdc_queries); room_dut0: global
  // room by the DUT's reservations (turn reference)
  unsigned resv0 = 0, p_held0 = 0, p_resv0 = 0;
  uint32_t pq0 = 0;
  bool room0 = false, spare0 = false, room_dut0 = false;
  // the plan stage's segment FIFO (turn reference): the WQE started and not yet in it (a READ?
  // from which cycle on it may enter), the segments in it, those leaving and entering this cycle
  struct SegPend {
    bool on = false, read = false;
    uint64_t ready = 0;
  };
  static constexpr unsigned kSegFifo = 16;
  SegPend seg_pend;
  unsigned seg_fifo = 0, seg_pops = 0;
  bool seg_push_now = false;
  // the DUT's READ context wait list (turn reference): a ring of entries (head cw_hp, tail cw_tp,
  // cw_n of them, dead ones included), the wake-up credits, the poll flag; this cycle's wake-up
  // (cw_pop_now: with a credit, cw_cred_pop) and join
  struct CwEntry {
    uint32_t q = 0;
    bool live = false;
    uint64_t at = 0;  // joined at this cycle
  };
  std::vector<CwEntry> cw_buf = std::vector<CwEntry>(kCwDepth);
  unsigned cw_hp = 0, cw_tp = 0, cw_n = 0, cw_cred = 0;
  bool cw_poll = false;
  bool cw_push_now = false, cw_pop_now = false, cw_cred_pop = false;
  uint32_t cw_push_q = 0;
  uint64_t cw_push_c = 0;
  std::deque<uint32_t> qp_reset_q;      // QP resets to announce (qp_reset_valid), one per cycle
  // a QP_MODIFY offered during traffic (offer_reset): on the port while cmd_on; its QP, the cycle
  // it was offered and the one it was taken (0: not yet); the cycles it waited with a turn of its
  // QP in flight or in the issue stage, and the cycles it was taken in such a cycle
  bool cmd_on = false;
  uint32_t cmd_q = 0;
  uint64_t cmd_offered = 0, cmd_taken = 0, cmd_busy_c = 0, cmd_early = 0;
  // a QP each job of which, offered, must carry incarnation watch_gen (-1: none); its jobs taken
  // with it, the cycles one was offered with another, the cycle the bench moved its incarnation on
  int watch_q = -1;
  uint8_t watch_gen = 0;
  uint64_t watch_taken = 0, watch_bad = 0, watch_moved = 0;
  uint64_t r_hold = 0;  // the AXI read slave delivers no WQE beat before this cycle (kNever: held back)
  uint64_t qp_resets = 0;               // QP resets announced
  uint64_t room_run = 0;                // cycles with global room in a row, up to the last one
  uint64_t last_wake_c = 0, reset_c = 0;
  uint32_t last_wake_q = 0;
  uint64_t cw_joins = 0, cw_wakes = 0, cw_wakes_cred = 0, cw_wakes_poll = 0, cw_room_kicks = 0, cw_full_kicks = 0;
  uint64_t cw_rewaits = 0, cw_idle = 0, cw_kills_rw = 0, cw_kills_reset = 0, cw_dead_drops = 0;
  uint64_t share_stops = 0, global_stops = 0, max_cw_wait = 0, borrows = 0;
  size_t max_cw = 0, max_cw_live = 0;
  unsigned max_share = 0;     // the most contexts a QP held and had reserved
  uint64_t plan_from = 0;     // the plan stage's front turn entered it at this cycle or later
  uint64_t ctx_stops = 0, ctx_checks = 0;
  int read_pct = -1;          // % of random WQEs that are READs (-1: one in five)
  uint64_t rw_unrefused = 0;  // rewinds that left a refused WQE's stop
  uint64_t fence_stops = 0, fence_idle = 0, fence_ignored = 0, fenced_started = 0, rd_frees = 0, events = 0, hstops = 0;
  uint64_t last_free_cycle = 0, last_fenced_cycle = 0;
  uint64_t rw_taken = 0, rw_applied = 0, notes = 0, kicks = 0, unparks = 0, rd_flushed = 0, acked = 0;
  uint64_t resent = 0, partial_reads = 0, resumed_mid = 0, parked_turns = 0, stray_unparks = 0, flushes = 0;
  uint64_t skipped_wqes = 0, skipped_inside = 0;  // resends of a WQE's last packet alone (the rest acknowledged), or begun at una inside one
  uint64_t stale_reports = 0;
  uint64_t last_end = 0;
  uint32_t last_end_q = 0;
  Mr mr_pipe[2] = {};
  std::unordered_map<uint32_t, unsigned> key_ops;  // local key -> 1 READ, 2 other, 3 both
  uint64_t access_checks = 0;
  bool handing = false;
  uint32_t hand_q = 0;
  uint32_t burst = 65536;
  uint8_t wqes_per_turn = 8;
  unsigned big = 30;
  uint64_t reads = 0, jobs = 0, read_jobs = 0, mr_reqs = 0, turns_done = 0, idle_turns = 0, work_turns = 0;
  uint64_t turn_ends = 0, turn_drops = 0, plan_kicks = 0, held_turns = 0, spec_reads = 0, overlap_cycles = 0;
  int max_fly = 0, max_reads_out = 0;
};

// every WQE posted on q was planned and has left
bool all_sent(const Qp& s) { return s.ci == s.pi && s.off == 0 && s.segs.empty(); }

void run_until_planned(WqeFetchBench& b, uint32_t q, const WqeFetchBench::Knobs& k) {
  const Qp& s = b.qps[q];
  for (int i = 0; i < 2000 && !::testing::Test::HasFatalFailure(); ++i) {
    b.cycle(k);
    if (s.ci == s.pi && s.off == 0 && s.fly_n == 0 && !s.active && !s.queued) return;
  }
  ADD_FAILURE() << "QP " << q << ": posted WQEs not planned (at WQE " << s.ci << " of " << s.pi << ")";
}

TEST_F(WqeFetchBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  burst = uint32_t(rng.range(256, 6000));
  wqes_per_turn = uint8_t(rng.range(2, 8));
  fence_pct = unsigned(rng.range(5, 40));
  rd_hold = rng.range(5, 300);
  reset();
  const int nq = std::min(kQps, 5);
  for (int i = 0; i < nq && !HasFatalFailure(); ++i)
    configure(uint32_t(rng.below(kQps)), int(rng.range(1, 3)), int(rng.range(1, 5)), i != 0 || rng.percent(50));
  random_phases(100, false);
  settle();
  std::printf("[bench] %llu turns with a WQE read, %llu without, %llu of them handed out while the QP's turn was in "
              "flight, %llu plan kicks\n",
              (unsigned long long)work_turns, (unsigned long long)(idle_turns + fence_idle + held_turns),
              (unsigned long long)held_turns, (unsigned long long)plan_kicks);
  EXPECT_GT(held_turns, 1000u);
  EXPECT_GT(plan_kicks, 500u);
  EXPECT_GT(jobs, 15000u);
  EXPECT_GT(read_jobs, 100u);
  EXPECT_GT(work_turns, 500u);
  EXPECT_GT(fence_stops, 10u);
  EXPECT_GT(fence_idle, 10u);
  EXPECT_GT(fenced_started, 100u);
  EXPECT_GT(access_checks, 1000u);
  EXPECT_EQ(resent, 0u) << "jobs marked resend without a rewind";
  EXPECT_GT(stale_rws, 200u);
  EXPECT_GT(stale_stops, 200u);
  EXPECT_FALSE(dut.rtl_error());
}

// Go-back-N under random traffic: rewinds of random QPs to random packets already planned
// (apply 0 now and then, RNR with random waits), acknowledgements freeing ring slots, stray
// unparks, random readiness of the RX engine, scheduler and timers.
TEST_F(WqeFetchBench, RandomTrafficWithRewinds) {
  SRNIC_BENCH_TRACE();
  start_rewind_traffic(5, 30, 2, 5);
  random_phases(80, true);
  settle(60000);
  print_rewind_stats();
  EXPECT_EQ(notes, rw_taken);
  EXPECT_GT(rw_applied, 300u);
  EXPECT_GT(unparks, 30u);
  EXPECT_GT(resent, 3000u);
  EXPECT_GT(resumed_mid, 100u);
  EXPECT_GT(partial_reads, 10u);
  EXPECT_GT(rd_flushed, 20u);
  EXPECT_GT(parked_turns, 10u);
  EXPECT_GT(fenced_started, 50u);
  EXPECT_GT(acked, 2000u);
  EXPECT_GT(stale_rws, 200u);
  EXPECT_GT(stale_stops, 200u);
  EXPECT_FALSE(dut.rtl_error());
}

// The same with acknowledgements that overtake rewinds (what was sent before a rewind is
// acknowledged meanwhile, and the host reuses the slots): resends that find a newer WQE in a
// slot park the QP and report it; the answer moves the send state forward to the oldest WQE
// not acknowledged. Small rings so that slots are reused soon.
TEST_F(WqeFetchBench, RandomTrafficWithRewindsAndReusedSlots) {
  SRNIC_BENCH_TRACE();
  start_rewind_traffic(0, 20, 1, 3);
  random_phases(80, true, true);
  settle(60000);
  print_rewind_stats();
  EXPECT_EQ(notes, rw_taken);
  EXPECT_GT(stale_reports, 20u);
  EXPECT_GT(rw_applied, 300u);
  EXPECT_GT(resent, 1000u);
  EXPECT_GT(acked, 2000u);
  EXPECT_FALSE(dut.rtl_error());
}

// A READ context table of 2..10 entries and mostly READs: turns often end in front of a READ
// for want of a context (the QP waits for one, or is kicked if the room is back at the turn
// end), and the reference rolls such a turn back to the state before that READ; QPs are reset
// now and then (their wait list entries die). Checked besides: every READ started had a context
// reserved (rdc_free, a cycle late, covered the READs started and not yet in the table + 2),
// every stop was needed (rdc_free was short in some cycle the DUT could have looked at the
// READ), the wait list cycle by cycle (joins, turns of waiting QPs without a WQE read, every
// wake-up due made and no other), no READ request waits for a context, and in the end every
// READ is sent and nobody waits.
TEST_F(WqeFetchBench, RandomTrafficFewReadContexts) {
  SRNIC_BENCH_TRACE();
  run_few_contexts(false);
}

// The same with go-back-N rewinds (and 2..6 contexts): a rewind drops the QP's READ contexts
// (rdc_rw_flush) and its READs are requested again, each with a context reserved anew; a rewind
// applied to a waiting QP takes it off the wait list.
TEST_F(WqeFetchBench, RandomTrafficWithRewindsFewReadContexts) {
  SRNIC_BENCH_TRACE();
  run_few_contexts(true);
  print_rewind_stats();
  EXPECT_GT(rd_flushed, 20u);
  EXPECT_GT(partial_reads, 3u);
}

// Fence: a fenced WRITE behind a READ of its QP is not started until the READ's context is
// freed; meanwhile the QP is requeued and its turns end without a WQE read. Then it goes.
TEST_F(WqeFetchBench, FenceWaitsForReadOfSameQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = uint32_t(rng.below(kQps));
  configure(q, 1, 4, true);
  rd_hold = 1;  // freed at once unless held below
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = 100;
  for (int rep = 0; rep < 4 && !HasFatalFailure(); ++rep) {
    const uint64_t hold = 300 + rng.below(200);
    ASSERT_TRUE(post(q, 0, kRead, 0, 2000));
    if (rep & 1) {
      ASSERT_TRUE(post(q, 0, kWrite, 0, 100));  // an unfenced WQE between
    }
    ASSERT_TRUE(post(q, 0, rep & 2 ? kSend : kWrite, kFence, 300));
    // ring the doorbell; the READ's context is held `hold` cycles
    const uint64_t idle0 = fence_idle, stops0 = fence_stops;
    ring = int(q);
    uint64_t insert_cycle = 0, fenced_cycle = 0;
    const uint64_t started0 = fenced_started;
    for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) {
      const size_t n0 = rd_table.size();
      cycle(k);
      if (rd_table.size() > n0) {
        insert_cycle = dut.cycle() - 1;
        rd_table.back().free_at = insert_cycle + hold;
      }
      if (fenced_started > started0 && !fenced_cycle) fenced_cycle = last_fenced_cycle;
      if (fenced_cycle && all_sent(qps[q])) break;
    }
    ASSERT_NE(insert_cycle, 0u) << "the READ never left";
    ASSERT_NE(fenced_cycle, 0u) << "the fenced WQE never started";
    EXPECT_GE(last_free_cycle, insert_cycle + hold);
    EXPECT_GT(fenced_cycle, last_free_cycle) << "the fenced WQE started before the READ completed";
    EXPECT_LE(fenced_cycle, last_free_cycle + 40) << "the fenced WQE started late after the READ completed";
    EXPECT_EQ(fence_stops, stops0 + 1);
    EXPECT_GT(fence_idle, idle0 + 3) << "the waiting QP was not requeued";
    settle();
  }
  EXPECT_FALSE(dut.rtl_error());
}

// A READ of another QP does not hold a fenced WQE back.
TEST_F(WqeFetchBench, FenceIgnoresReadOfOtherQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t a = 1 % kQps, b = 2 % kQps;
  configure(a, 2, 3, true);
  configure(b, 2, 3, true);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = 100;
  rd_hold = 5000;
  ASSERT_TRUE(post(a, 0, kRead, 0, 4096));
  ring = int(a);
  for (int i = 0; i < 200 && !HasFatalFailure() && rd_table.empty(); ++i) cycle(k);
  ASSERT_EQ(rd_table.size(), 1u) << "QP a's READ never left";
  rd_table[0].free_at = ~uint64_t(0);  // held until released below
  ASSERT_TRUE(post(b, 0, kWrite, kFence, 1000));
  ring = int(b);
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_TRUE(all_sent(qps[b])) << "QP b's fenced WRITE waited for QP a's READ";
  EXPECT_EQ(fenced_started, 1u);
  EXPECT_EQ(rd_table.size(), 1u);
  EXPECT_EQ(fence_stops, 0u);
  rd_table[0].free_at = 0;
  settle();
}

// A fence on a WQE already in progress has no effect; the next fenced WQE waits.
TEST_F(WqeFetchBench, FenceOnWqeInProgressIgnored) {
  SRNIC_BENCH_TRACE();
  burst = 1;  // one packet per turn
  wqes_per_turn = 1;
  reset();
  const uint32_t q = 3 % kQps;
  configure(q, 1, 3, true);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = 100;
  ASSERT_TRUE(post(q, 0, kWrite, kFence, 8 * 256));   // 8 packets of 256 bytes
  ASSERT_TRUE(post(q, 0, kSend, kFence, 100));
  ring = int(q);
  // after the first packet, srnic_rd_ctx holds a READ of q (not inserted by this engine)
  for (int i = 0; i < 300 && !HasFatalFailure() && qps[q].emitted == 0; ++i) cycle(k);
  ASSERT_EQ(qps[q].emitted, 1u);
  inject_read(q, 1500);
  for (int i = 0; i < 1000 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(qps[q].emitted, 8u) << "the WRITE in progress stopped at its fence";
  EXPECT_EQ(qps[q].ci, 1u) << "the fenced SEND did not wait";
  EXPECT_GT(fence_ignored, 3u);
  EXPECT_EQ(fence_stops, 1u);
  settle();
  EXPECT_TRUE(all_sent(qps[q]));
  EXPECT_GE(last_fenced_cycle, last_free_cycle);
}

// Host stop: a CEV_HERR event with the next PSN and the producer index; no more WQE reads
// or jobs for the QP; WQEs posted later are reported for flushing (CEV_LERR).
TEST_F(WqeFetchBench, HostStopReportsHerr) {
  SRNIC_BENCH_TRACE();
  burst = uint32_t(rng.range(256, 3000));
  wqes_per_turn = uint8_t(rng.range(1, 8));
  reset();
  for (int rep = 0; rep < 6 && !HasFatalFailure(); ++rep) {
    const int nq = std::min(kQps, 3);
    std::vector<uint32_t> qs;
    for (int i = 0; i < nq && !HasFatalFailure(); ++i) {
      const uint32_t q = uint32_t((rep * nq + i) % kQps);
      configure(q, int(rng.range(1, 3)), int(rng.range(2, 5)), true);
      qs.push_back(q);
    }
    Knobs k;
    k.post = 30;
    const uint32_t victim = qs[rng.below(qs.size())];
    const int stop_at = int(rng.range(50, 1500));
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) {
      if (i == stop_at) hstop_q.push_back(victim);
      cycle(k);
    }
    ASSERT_EQ(hstops, uint64_t(rep + 1));
    const uint64_t reads0 = qps[victim].reads;
    const uint64_t jobs_planned = qps[victim].planned;
    // more WQEs on the stopped QP: reported for flushing, never read nor sent
    for (int i = 0; i < 3; ++i) post(victim, 0);
    ring = int(victim);
    k.post = 0;
    cycle(k);
    settle();
    EXPECT_EQ(qps[victim].planned, jobs_planned) << "work planned after the host stop";
    EXPECT_EQ(qps[victim].reads, reads0) << "WQE read after the host stop";
    EXPECT_TRUE(ev_expect.empty()) << ev_expect.size() << " events missing";
    EXPECT_TRUE(qps[victim].err);
  }
  EXPECT_GE(events, 6u);
  EXPECT_FALSE(dut.rtl_error());
}

// Stop requests (a fatal NAK's): one for a QP in the middle of its traffic, after late ones of
// its earlier incarnation that change nothing: a CEV_LERR with the next PSN, the producer index
// and WR_FLUSH_ERR; no more WQE reads or jobs of the QP. A second stop request with nothing new
// posted reports nothing; WQEs posted later are reported for flushing (by the QP's next turn,
// or by a third stop request).
TEST_F(WqeFetchBench, StopRequestReportsForFlushing) {
  SRNIC_BENCH_TRACE();
  burst = uint32_t(rng.range(256, 3000));
  wqes_per_turn = uint8_t(rng.range(1, 8));
  reset();
  for (int rep = 0; rep < 4 && !HasFatalFailure(); ++rep) {
    const int nq = std::min(kQps, 3);
    std::vector<uint32_t> qs;
    for (int i = 0; i < nq && !HasFatalFailure(); ++i) {
      const uint32_t q = uint32_t((rep * nq + i) % kQps);
      configure(q, int(rng.range(1, 3)), int(rng.range(2, 5)), true);
      qs.push_back(q);
    }
    Knobs k;
    k.post = 30;
    const uint32_t victim = qs[rng.below(qs.size())];
    const int stop_at = int(rng.range(300, 1500));
    const uint64_t stops0 = stops, stale0 = stale_stops;
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) {
      if (i < stop_at && i % 50 == 0) offer_stop(victim, true);
      if (i == stop_at) offer_stop(victim, false);
      cycle(k);
    }
    ASSERT_EQ(stops, stops0 + 1) << "the stop request was not taken";
    EXPECT_GE(stale_stops, stale0 + 6);
    EXPECT_TRUE(qps[victim].err);
    const uint64_t reads0 = qps[victim].reads;
    const uint64_t planned0 = qps[victim].planned;
    k.post = 0;
    settle();
    EXPECT_TRUE(ev_expect.empty()) << ev_expect.size() << " events missing";
    const uint64_t events1 = events;
    offer_stop(victim, false);
    settle();
    EXPECT_EQ(stops, stops0 + 2);
    EXPECT_EQ(events, events1) << "a second stop request with nothing new posted reported";
    qps[victim].ci_base = qps[victim].posted;  // the completion engine flushed them: slots free
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(post(victim, 0));
    ring = int(victim);  // the turn the doorbell gives reports them, or a stop request beside it
    if (rng.percent(50)) offer_stop(victim, false);
    settle();
    EXPECT_EQ(events, events1 + 1) << "the WQEs posted after the stop were not reported once";
    EXPECT_EQ(qps[victim].fl_pi, qps[victim].pi);
    EXPECT_EQ(qps[victim].planned, planned0) << "work planned after the stop request";
    EXPECT_EQ(qps[victim].reads, reads0) << "WQE read after the stop request";
    EXPECT_TRUE(ev_expect.empty()) << ev_expect.size() << " events missing";
  }
  EXPECT_FALSE(dut.rtl_error());
}

// Segments of a QP reset while they wait for the cutter (the TX queue takes nothing): QP b's
// WQEs are planned first, then QP a's (a multi-packet WRITE, a READ, an empty SEND_IMM, a
// WRITE), then more of b's (a WRITE, a READ); then a is reset. When the TX queue takes jobs
// again, each of a's four segments is dropped whole as it reaches the cutter (stale_drop, no
// job, no READ context requested) and every packet of b's leaves, with b's incarnation. WQEs
// posted on a after the reset are planned for its new incarnation and leave with it.
TEST_F(WqeFetchBench, StaleSegmentsDroppedWhole) {
  SRNIC_BENCH_TRACE();
  auto_free = false;
  log_jobs = true;
  reset();
  const uint32_t a = uint32_t(rng.below(kQps)), b = uint32_t(a + 1 + rng.below(kQps - 1)) % kQps;
  configure(a, 1, 4, true);
  configure(b, 1, 4, true);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = 100;
  k.job = 0;
  ASSERT_TRUE(post(b, 0, kWrite, 0, 600));
  ASSERT_TRUE(post(b, 0, kSend, 0, 100));
  ring = int(b);
  run_until_planned(*this, b, k);
  ASSERT_TRUE(post(a, 0, kWrite, 0, 3 * 256 + 1));
  ASSERT_TRUE(post(a, 0, kRead, 0, 1000));
  ASSERT_TRUE(post(a, 0, kSendImm, 0, 0));
  ASSERT_TRUE(post(a, 0, kWrite, 0, 200));
  ring = int(a);
  run_until_planned(*this, a, k);
  ASSERT_TRUE(post(b, 0, kWrite, 0, 256));
  ASSERT_TRUE(post(b, 0, kRead, 0, 300));
  ring = int(b);
  run_until_planned(*this, b, k);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(jobs, 0u);
  ASSERT_EQ(qps[a].segs.size(), 4u);
  reset_incarnation(a);
  settle();
  EXPECT_EQ(seg_drops, 4u);
  size_t of_a = 0, of_b = 0;
  for (const Taken& t : job_log) ++(t.q == a ? of_a : of_b);
  EXPECT_EQ(of_a, 0u) << "a job of a segment planned for the earlier incarnation";
  EXPECT_EQ(of_b, 6u);
  EXPECT_EQ(read_jobs, 1u);
  ASSERT_EQ(rd_table.size() + rd_frees, 1u) << "a READ context for the dropped READ";
  EXPECT_TRUE(qps[b].segs.empty());
  // the new incarnation's work leaves
  ASSERT_TRUE(post(a, 0, kSend, 0, 300));
  ring = int(a);
  k.job = 100;
  settle();
  ASSERT_EQ(job_log.size(), 8u);
  EXPECT_EQ(job_log[6].q, a);
  EXPECT_EQ(job_log[6].j.gen, gen_tab[a]);
  EXPECT_EQ(seg_drops, 4u);
}

// A QP reset while the first packet of its segment (a 3-packet WRITE) is offered to the TX
// queue, which does not take it: the offered job stays, unchanged, until taken (a_job_hold),
// and leaves with the old incarnation (the TX ICRC stage drops its frame); the rest of the
// segment is dropped (stale_drop once), nothing else of the QP leaves. A READ request offered
// when its QP is reset is dropped at once, its context never requested. A reset while a WRITE
// leaves a packet a cycle stops it after the packet taken last.
TEST_F(WqeFetchBench, ResetWhileAJobIsOffered) {
  SRNIC_BENCH_TRACE();
  auto_free = false;
  log_jobs = true;
  reset();
  const uint32_t a = uint32_t(rng.below(kQps));
  configure(a, 1, 4, true);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = 100;
  k.job = 0;
  ASSERT_TRUE(post(a, 0, kWrite, 0, 3 * 256));
  ring = int(a);
  run_until_planned(*this, a, k);
  for (int i = 0; i < 20; ++i) cycle(k);
  dut.eval();
  ASSERT_TRUE(dut->job_valid) << "no job offered";
  const uint64_t psn = kJob.get(dut->job, kPsn);
  const uint8_t old = gen_tab[a];
  reset_incarnation(a);
  for (int i = 0; i < 20 && !HasFatalFailure(); ++i) {
    cycle(k);
    dut.eval();
    ASSERT_TRUE(dut->job_valid && kJob.get(dut->job, kPsn) == psn) << "the offered job was withdrawn or changed";
  }
  k.job = 100;
  settle();
  ASSERT_EQ(job_log.size(), 1u) << "not one job (the one offered) after the reset";
  EXPECT_EQ(job_log[0].j.gen, old);
  EXPECT_EQ(job_log[0].j.opcode, 0x06) << "not the WRITE's first packet";
  EXPECT_EQ(held_stale_jobs, 1u);
  EXPECT_EQ(seg_drops, 1u) << "the rest of the segment was not dropped once";
  // a READ request offered (its context ready, the TX queue not) when its QP is reset
  ASSERT_TRUE(post(a, 0, kRead, 0, 1000));
  ring = int(a);
  k.job = 0;
  run_until_planned(*this, a, k);
  for (int i = 0; i < 20; ++i) cycle(k);
  dut.eval();
  ASSERT_TRUE(dut->job_valid && kJob.get(dut->job, kOpcode) == kOpReadReq) << "no READ request offered";
  reset_incarnation(a);
  k.job = 100;
  settle();
  EXPECT_EQ(job_log.size(), 1u) << "the READ request of the earlier incarnation left";
  EXPECT_EQ(read_jobs, 0u);
  EXPECT_TRUE(rd_table.empty()) << "a READ context for the dropped READ";
  EXPECT_EQ(seg_drops, 2u);
  // reset while an 8-packet WRITE leaves a packet a cycle: nothing after the packet taken last
  ASSERT_TRUE(post(a, 0, kWrite, 0, 8 * 256));
  ring = int(a);
  k.job = 100;
  const size_t n0 = job_log.size();
  for (int i = 0; i < 500 && !HasFatalFailure(); ++i) {
    cycle(k);
    if (qps[a].fly_n == 0 && job_log.size() > n0 && job_log.back().cycle + 1 == dut.cycle() && !qps[a].segs.empty())
      break;
  }
  const size_t sent = job_log.size() - n0;
  ASSERT_TRUE(sent > 0 && sent < 8) << "the WRITE did not leave packet by packet";
  reset_incarnation(a);
  settle();
  EXPECT_EQ(job_log.size(), n0 + sent) << "packets of the WRITE left after the reset";
  EXPECT_EQ(seg_drops, 3u);
  EXPECT_EQ(held_stale_jobs, 1u);
}

// One packet's budget and one WQE per turn: every message is sent a packet per turn and
// the WQE is fetched again for each of them.
TEST_F(WqeFetchBench, TinyBudgetOneWqePerTurn) {
  SRNIC_BENCH_TRACE();
  burst = 1;
  wqes_per_turn = 1;
  reset();
  for (int i = 0; i < std::min(kQps, 3) && !HasFatalFailure(); ++i)
    configure(uint32_t(i * (kQps / 3)), int(rng.range(1, 2)), 3, true);
  Knobs k;
  k.post = 10;
  for (int i = 0; i < 15000 && !HasFatalFailure(); ++i) cycle(k);
  settle();
  EXPECT_GT(reads, jobs / 2);
  EXPECT_GT(jobs, 1000u);
}

// Default turn limits (64 KiB, 8 WQEs), MTU 4096, large SQs, many QPs: WQE reads stop at
// the ring end and at 4 KiB boundaries.
TEST_F(WqeFetchBench, DefaultLimitsManyQps) {
  SRNIC_BENCH_TRACE();
  burst = 65536;
  wqes_per_turn = 8;
  big = 60;
  reset();
  for (int i = 0; i < std::min(kQps, 12) && !HasFatalFailure(); ++i)
    configure(uint32_t(rng.below(kQps)), int(rng.range(3, 5)), int(rng.range(2, 7)), true);
  Knobs k;
  k.post = 40;
  k.hand = 90;
  k.lat = 40;
  for (int i = 0; i < 100000 && !HasFatalFailure(); ++i) cycle(k);
  settle(60000);
  EXPECT_GT(jobs, 15000u);
  EXPECT_FALSE(dut.rtl_error());
}

// Directed tests on one QP (MTU 256, 16-slot ring, ring slots freed only by the test):
// rewinds, READ contexts.
class WqeFetchRewindBench : public WqeFetchBench {
 public:
  uint32_t q = 0;
  Knobs k;
  int log_sq = 4;
  void start(int64_t psn = -1, bool rts = true) {
    auto_free = false;
    log_jobs = true;
    reset();
    q = uint32_t(rng.below(kQps));
    configure(q, 1, log_sq, rts, psn);
    k.post = 0;
    k.hand = k.done = k.ar = k.rdc = k.job = 100;
    k.note = k.kick = k.rnr = 100;
  }
  // posts and sends
  void send(uint8_t op, uint32_t len, uint8_t flags = 0) {
    ASSERT_TRUE(post(q, 0, op, flags, len));
    ring = int(q);
    settle();
  }
  // a rewind to packet kp of WQE ci (its original PSN)
  void rewind(uint16_t ci, uint32_t kp, bool apply = true, bool rnr = false, uint8_t code = 0) {
    const Wqe& w = wqe_at(qps[q], ci);
    ASSERT_TRUE(w.planned);
    offer_rewind(Rewind{q, apply, rnr, ci, kp * 256, w.first_u + kp, code});
  }
  // Four one-packet WRITEs in a ring of four, all sent; then a rewind to WQE 0, applied while
  // the scheduler holds the QP (k.hand stays 0). Returns the first PSN.
  uint64_t four_sent_then_rewind() {
    log_sq = 2;
    start();
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(post(q, 0, kWrite, 0, 100));
    ring = int(q);
    settle();
    EXPECT_EQ(job_log.size(), 4u);
    k.hand = 0;
    rewind(0, 0);
    for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle(k);
    EXPECT_EQ(notes, 1u);
    return wqe_at(qps[q], 0).first_u;
  }
  // After three packets of a WRITE: an RNR answer at packet 1 parks the QP (the wait's end held
  // back); a SEND posted and rung meanwhile sends nothing.
  void park_by_rnr(uint8_t code) {
    send(kWrite, 3 * 256);
    const size_t n0 = job_log.size();
    hold_unparks = true;
    rewind(0, 1, true, true, code);
    settle();
    EXPECT_EQ(kicks, 0u) << "a parked QP was kicked";
    ASSERT_EQ(up_q.size(), 1u) << "no RNR wait started";
    EXPECT_EQ(up_q.front().first, q);
    ASSERT_TRUE(post(q, 0, kSend, 0, 100));
    for (int rep = 0; rep < 5 && !HasFatalFailure(); ++rep) {
      ring = int(q);
      for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle(k);
    }
    EXPECT_EQ(job_log.size(), n0) << "a parked QP sent";
  }
  // Frees every READ context held `after` cycles from now; later ones live 1..after cycles.
  void release_reads(uint64_t after) {
    for (RdEntry& e : rd_table) e.free_at = dut.cycle() + after;
    rd_hold = after;
  }
  // the jobs taken since job_log position n: opcode, PSN (low 24 bits), resend
  void expect_jobs(size_t n, const std::vector<std::tuple<uint8_t, uint32_t, bool>>& want) {
    ASSERT_EQ(job_log.size() - n, want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const Job& j = job_log[n + i].j;
      EXPECT_EQ(j.opcode, std::get<0>(want[i])) << "job " << i;
      EXPECT_EQ(uint32_t(j.psn_u) & kPsnMask, std::get<1>(want[i]) & kPsnMask) << "job " << i;
      EXPECT_EQ(j.resend, std::get<2>(want[i])) << "job " << i;
    }
  }
};

// Four READ contexts, none freed for a while: of ten READs of one QP (all read by the first
// turn) only those with a context reserved are started (three, or four right after an insert:
// the free count is a cycle late), then the turn ends in front of the next READ and the QP
// waits for a context (a turn
// end that finds room shown again by the late count is kicked, and its next turn stops there
// too): while the contexts are held it gets no turn and its WQEs are not read again. Once they
// are freed it is woken and the other READs follow, in order, at their PSNs.
TEST_F(WqeFetchRewindBench, ReadsWaitForContexts) {
  SRNIC_BENCH_TRACE();
  rd_cap = 4;
  rd_hold = 1000000;  // held until released below
  wqes_per_turn = 10;  // one WQE read takes all ten (its done reports no more work) ...
  start();
  while (((qps[q].base >> 6) & 63) > 54 && !HasFatalFailure()) start();  // ... not cut at 4 KiB
  const uint32_t len = 3 * 256 + 10;  // four responses
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(post(q, 0, kRead, 0, len));
  ring = int(q);
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(k);
  const uint64_t sent = read_jobs, stops = ctx_stops, reads0 = qps[q].reads, turns0 = turns_done;
  EXPECT_GE(sent, rd_cap - 1);
  EXPECT_LE(sent, rd_cap);
  EXPECT_EQ(rd_table.size(), sent);
  EXPECT_GE(ctx_stops, 1u) << "the turn did not stop in front of the READ";
  EXPECT_LE(ctx_stops, 3u) << "the QP did not wait for a context";
  ASSERT_EQ(cw_live(), 1u) << "the QP does not wait for a context";
  EXPECT_TRUE(cw_member(q));
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(read_jobs, sent) << "a READ started without a context";
  EXPECT_EQ(ctx_stops, stops) << "the waiting QP was turned again";
  EXPECT_EQ(turns_done, turns0) << "the waiting QP was turned again";
  const uint64_t held_reads = qps[q].reads - reads0;
  EXPECT_EQ(held_reads, 0u) << "the waiting QP's WQEs were read again";
  release_reads(10);
  settle();
  EXPECT_GE(cw_wakes_cred, 1u) << "the freed contexts woke nobody";
  EXPECT_EQ(read_jobs, 10u);
  ASSERT_EQ(job_log.size(), 10u);
  const uint64_t first = wqe_at(qps[q], 0).first_u;
  for (uint16_t i = 0; i < 10; ++i) {
    const Job& j = job_log[i].j;
    EXPECT_TRUE(j.read) << "job " << i;
    EXPECT_EQ(j.idx, i) << "job " << i;
    EXPECT_EQ(j.psn_u, first + 4u * i) << "job " << i;
  }
  std::printf("[bench] %llu of 10 READs sent with 4 contexts held, %llu turns stopped in front of a READ, %llu WQE "
              "reads in 300 cycles held, %llu wake-ups (%llu by credit)\n",
              (unsigned long long)sent, (unsigned long long)ctx_stops, (unsigned long long)held_reads,
              (unsigned long long)cw_wakes, (unsigned long long)cw_wakes_cred);
}

// Two READ contexts held by QP a's READs: QP b's READ waits in its turn (and b's WRITE behind
// it, in order), but QP c's WRITEs are sent meanwhile: no READ waits for a context in front
// of other QPs' packets. a and b wait for a context (no turn, their WQEs read once). Then a's
// contexts are freed and everything is sent.
TEST_F(WqeFetchRewindBench, ReadWithoutContextHoldsOnlyItsQp) {
  SRNIC_BENCH_TRACE();
  rd_cap = 2;
  rd_hold = 1000000;
  start();
  const uint32_t a = q, b = (q + 1) % kQps, c = (q + 2) % kQps;
  configure(b, 1, 3, true);
  configure(c, 1, 3, true);
  ASSERT_TRUE(post(a, 0, kRead, 0, 1000));
  ASSERT_TRUE(post(a, 0, kRead, 0, 1000));
  ring = int(a);
  for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(read_jobs, 1u) << "two contexts: one READ at a time";
  ASSERT_TRUE(post(b, 0, kRead, 0, 100));
  ASSERT_TRUE(post(b, 0, kWrite, 0, 100));
  ring = int(b);
  cycle(k);
  for (int n = 0; n < 4; ++n) ASSERT_TRUE(post(c, 0, kWrite, 0, 2 * 256));
  ring = int(c);
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_TRUE(all_sent(qps[c])) << "QP c's WRITEs waited behind a READ without a context";
  EXPECT_EQ(qps[c].emitted, 8u);
  EXPECT_EQ(qps[b].emitted, 0u) << "QP b's READ or the WRITE behind it went without a context";
  EXPECT_EQ(read_jobs, 1u);
  EXPECT_GE(ctx_stops, 2u);
  EXPECT_EQ(qps[b].reads, 1u) << "QP b's WQEs were read again while it waits for a context";
  EXPECT_EQ(cw_waiters(), (std::vector<uint32_t>{a, b})) << "QPs a and b do not wait for a context, in order";
  release_reads(5);
  settle();
  EXPECT_EQ(read_jobs, 3u);
  EXPECT_TRUE(all_sent(qps[a]) && all_sent(qps[b]));
}

// READ context share and waits (decision 120; see read_share_limits_one_qp and the others).
TEST_F(WqeFetchBench, ReadShareLimitsOneQp) {
  SRNIC_BENCH_TRACE();
  read_share_limits_one_qp();
}
TEST_F(WqeFetchBench, ContextWaitDoesNotRereadWqes) {
  SRNIC_BENCH_TRACE();
  context_wait_does_not_reread_wqes(2);
}
TEST_F(WqeFetchBench, ContextWaitDoesNotRereadWqesManyPosted) {
  SRNIC_BENCH_TRACE();
  context_wait_does_not_reread_wqes(40);
}
TEST_F(WqeFetchBench, WakeUpPerFreedContext) {
  SRNIC_BENCH_TRACE();
  wake_up_per_freed_context();
}
TEST_F(WqeFetchBench, RandomTrafficReadShare) {
  SRNIC_BENCH_TRACE();
  run_read_share();
}

TEST_F(WqeFetchBench, QpResetLeavesTheWaitList) {
  SRNIC_BENCH_TRACE();
  reset_leaves_wait_list();
}

// A QP_MODIFY to RESET is taken only once no turn of its QP is in flight (decision 125). QP a's
// turn has read a's WQEs (a 3-packet WRITE and a SEND), their WQE beats held back on the AXI R
// channel, when the RESET is offered (state RESET, no init flags, the other fields random):
// qp_cmd_ready must stay 0 in every cycle while the turn is in flight (200 cycles with the beats
// held, then until the turn, planned once they are released, has left the plan stage), and the
// command must be taken then. The bench then moves a's incarnation on, as srnic_core does once
// every block took the command: every job of a offered, before and after that, must carry the old
// incarnation (what the turn planned and did not send by then is dropped stale), and a doorbell
// of a, in RESET, reads nothing. Before the fix the command was taken at once, the incarnation
// moved on while the WQE read was outstanding, and the turn's jobs, planned after that, were
// stamped with the new incarnation: requests posted before the reset were sent after it. Twice:
// with the TX queue ready (the turn's packets leave as they are cut), then with it held until the
// incarnation moved (the turn's segments wait at the cutter across the reset: dropped whole, but
// for a packet offered, which may still go); a is set up again before each. Then a WQE posted
// after a third set-up leaves with the new incarnation.
TEST_F(WqeFetchBench, ResetWaitsForTheTurnInFlight) {
  SRNIC_BENCH_TRACE();
  auto_free = false;
  reset();
  const uint32_t a = uint32_t(rng.below(kQps));
  configure_in_page(a, 4);
  reset_waits_for_turn(a, false);
  if (HasFailure()) return;  // (the same failures again in the second round)
  configure_in_page(a, 4);
  reset_waits_for_turn(a, true);
  ASSERT_FALSE(HasFatalFailure());
  new_incarnation_sends(a, kSend);
  EXPECT_FALSE(dut.rtl_error());
}

// The wait list holds 64 entries, dead ones included, and a QP is on it at most once. Two
// contexts, one held by QP a (injected: its responses never come), so there is never room: QP h's
// READ stops and h waits at the head of the list (no credit, no poll: h is never woken); QP b's
// READ stops and b waits behind it. b's doorbell now gives turns that end in the issue stage. Then
// b is reset 62 times (its incarnation moves on): each reset kills b's entry (it stays in place
// behind the live head) and b's next turn, rung, reads its WQEs, stops in front of the READ and
// joins again, until the list is full (h, 62 dead entries, b). After one more reset b is not on
// the full list: its turns are kicked at their end as before decision 120 (b is requeued and reads
// its WQEs again turn after turn). Once a's context is freed, its credit wakes h, whose READ goes;
// the dead entries are dropped at the head one per cycle, b waits again (its READ finds no room
// beside h's) and is woken when h's context is freed; nobody is left waiting.
TEST_F(WqeFetchBench, ContextWaitListFullRequeues) {
  SRNIC_BENCH_TRACE();
  rd_cap = 2;
  rd_hold = kNever;
  reset();
  const uint32_t a = uint32_t(rng.below(kQps)), h = (a + 1) % kQps, b = (a + 2) % kQps;
  configure(h, 1, 3, true);
  configure(b, 1, 3, true);
  inject_read(a, kNever);
  const Knobs k = ready_knobs();
  ASSERT_TRUE(post(h, 0, kRead, 0, 100));
  ring = int(h);
  run(100, k);
  ASSERT_TRUE(post(b, 0, kRead, 0, 100));
  ring = int(b);
  run(100, k);
  ASSERT_EQ(cw_waiters(), (std::vector<uint32_t>{h, b})) << "QPs h and b do not wait, in order";
  uint64_t reads0 = qps[b].reads;
  const uint64_t idle0 = cw_idle;
  ring = int(b);
  run(100, k);
  EXPECT_EQ(qps[b].reads, reads0) << "a doorbell of the waiting QP b read its WQEs";
  EXPECT_EQ(cw_idle, idle0 + 1) << "the turn the doorbell gave b did not end for its wait";
  for (unsigned n = 0; n + 2 < kCwDepth && !HasFatalFailure(); ++n) {
    reset_incarnation(b);
    ring = int(b);
    run(40, k);
    ASSERT_EQ(cw_n, n + 3) << "reset " << n << ": b did not join the list again (" << cw_live() << " live entries)";
  }
  EXPECT_EQ(cw_waiters(), (std::vector<uint32_t>{h, b}));
  EXPECT_EQ(qps[b].reads, reads0 + kCwDepth - 2) << "b's turns after its resets";
  EXPECT_EQ(max_cw, size_t(kCwDepth)) << "the wait list never filled";
  reset_incarnation(b);
  ring = int(b);
  reads0 = qps[b].reads;
  run(500, k);
  EXPECT_GT(cw_full_kicks, 5u) << "no stop kicked with the wait list full";
  EXPECT_GT(qps[b].reads - reads0, 5u) << "with the wait list full the stopped QP is not requeued";
  EXPECT_EQ(cw_waiters(), (std::vector<uint32_t>{h}));
  EXPECT_EQ(held_by(b) + held_by(h), 0u);
  free_contexts(a);
  rd_hold = 20;
  settle();
  EXPECT_EQ(read_jobs, 2u);
  EXPECT_EQ(cw_dead_drops, uint64_t(kCwDepth) - 1) << "dead entries dropped at the head";
  EXPECT_EQ(cw_kills_reset, uint64_t(kCwDepth) - 1);
  print_wait_stats();
  EXPECT_FALSE(dut.rtl_error());
}

// A rewind applied to a waiting QP takes it off the wait list (the rewind kicks it). Every
// context held (READs of QP h, injected, never freed): q's WRITE is sent, the READ behind it
// stops and q waits; a doorbell's turn reads nothing. Then a rewind to the WRITE: applied (note,
// kick, q's READ contexts dropped: none), and q's turn reads its WQEs at once: the WRITE is sent
// again (marked resend, at its PSN), the READ stops again and q joins the list anew. No context
// is freed meanwhile.
TEST_F(WqeFetchRewindBench, RewindTakesAWaitingQpOffTheList) {
  SRNIC_BENCH_TRACE();
  rd_cap = 4;
  rd_hold = kNever;
  start();
  const uint32_t h = (q + 1) % kQps;
  send(kWrite, 100);
  ASSERT_EQ(job_log.size(), 1u);
  for (size_t i = 0; i < rd_cap; ++i) inject_read(h, kNever);
  ASSERT_TRUE(post(q, 0, kRead, 0, 100));
  ring = int(q);
  run(200, k);
  ASSERT_TRUE(cw_member(q)) << "q does not wait for a context";
  const uint64_t joined = cw_member_at(q), reads0 = qps[q].reads, idle0 = cw_idle;
  ring = int(q);
  run(100, k);
  EXPECT_EQ(qps[q].reads, reads0) << "a doorbell of the waiting QP read its WQEs";
  EXPECT_EQ(cw_idle, idle0 + 1);
  rewind(0, 0);
  run(200, k);
  ASSERT_EQ(notes, 1u);
  EXPECT_EQ(kicks, 1u);
  EXPECT_EQ(cw_kills_rw, 1u) << "the rewind did not kill q's entry";
  EXPECT_GT(qps[q].reads, reads0) << "after the rewind q's turn did not read its WQEs";
  ASSERT_EQ(job_log.size(), 2u) << "the WRITE was not sent again";
  EXPECT_EQ(job_log[1].j.opcode, 0x0A);
  EXPECT_TRUE(job_log[1].j.resend);
  EXPECT_EQ(job_log[1].j.psn_u, job_log[0].j.psn_u);
  ASSERT_EQ(note_cycles.size(), 1u);
  EXPECT_LE(job_log[1].cycle - note_cycles[0], 40u) << "the WRITE was sent late after the rewind";
  ASSERT_TRUE(cw_member(q)) << "q, stopped in front of its READ again, does not wait";
  EXPECT_GT(cw_member_at(q), joined) << "q did not join the list anew";
  EXPECT_EQ(cw_live(), 1u);
  EXPECT_EQ(rd_frees + rd_flushed, 0u) << "a READ context was freed";
  free_contexts(-1);
  rd_hold = 20;
  settle();
  EXPECT_EQ(read_jobs, 1u);
  print_wait_stats();
  EXPECT_FALSE(dut.rtl_error());
}

// A SEND and a WRITE sent whole, then rewound into the SEND's third packet: the SEND goes on
// with MIDDLE/LAST at the PSNs it had, the WRITE starts again with FIRST (RETH), all marked
// resend; a WQE posted after them is not. Then a rewind into the WRITE: MIDDLE/LAST, no RETH.
// The PSNs cross the 24-bit wrap.
TEST_F(WqeFetchRewindBench, ResendContinuesMessagesAtTheirPsns) {
  SRNIC_BENCH_TRACE();
  start(0xFFFFFD);
  send(kSend, 5 * 256);      // PSNs FFFFFD .. 000001
  send(kWrite, 3 * 256 - 10);  // 000002 .. 000004
  const size_t n0 = job_log.size();
  ASSERT_EQ(n0, 8u);
  EXPECT_EQ(resent, 0u);
  rewind(0, 2);
  settle();
  ASSERT_EQ(notes, 1u);
  EXPECT_EQ(kicks, 1u);
  expect_jobs(n0, {{0x01, 0xFFFFFF, true}, {0x01, 0x000000, true}, {0x02, 0x000001, true},
                   {0x06, 0x000002, true}, {0x07, 0x000003, true}, {0x08, 0x000004, true}});
  EXPECT_EQ(job_log[n0].j.pay_addr, translate(wqe_at(qps[q], 0).lkey, wqe_at(qps[q], 0).laddr) + 512);
  const size_t n1 = job_log.size();
  send(kWriteImm, 100);
  expect_jobs(n1, {{0x0B, 0x000005, false}});
  const size_t n2 = job_log.size();
  rewind(1, 1);
  settle();
  ASSERT_EQ(notes, 2u);
  expect_jobs(n2, {{0x07, 0x000003, true}, {0x08, 0x000004, true}, {0x0B, 0x000005, true}});
  const size_t n3 = job_log.size();
  send(kWrite, 1);
  expect_jobs(n3, {{0x0A, 0x000006, false}});
}

// A timeout rewinds to the start of the oldest incomplete WQE, however much of it is
// acknowledged; the resend passes over what is, but never a WQE's last packet. A SEND of 6
// packets, a WRITE of 3 and a READ of 2 responses sent whole; a rewind into the SEND's fifth
// packet (a NAK there: everything before it acknowledged), then one to the SEND's start: both
// resend from the fifth packet (MIDDLE, payload 1 KiB in), then the WRITE whole and the READ.
// A rewind into the WRITE's last packet, then one to the SEND's start again: the SEND's last
// packet alone, the WRITE's LAST, the READ requested again whole (a READ is re-requested where
// the rewind says). A WQE posted after them is not marked resend.
TEST_F(WqeFetchRewindBench, ResendPassesOverWhatIsAcknowledged) {
  SRNIC_BENCH_TRACE();
  rd_hold = 100000;  // the READ's responses never arrive
  start();
  send(kSend, 6 * 256);
  send(kWrite, 3 * 256);
  send(kRead, 2 * 256);
  const uint64_t f = wqe_at(qps[q], 0).first_u;
  const Wqe& w0 = wqe_at(qps[q], 0);
  const std::vector<std::tuple<uint8_t, uint32_t, bool>> from_fifth = {
      {0x01, uint32_t(f + 4), true}, {0x02, uint32_t(f + 5), true}, {0x06, uint32_t(f + 6), true},
      {0x07, uint32_t(f + 7), true}, {0x08, uint32_t(f + 8), true}, {kOpReadReq, uint32_t(f + 9), true}};
  ASSERT_EQ(job_log.size(), 10u);
  size_t n = job_log.size();
  rewind(0, 4);
  settle();
  expect_jobs(n, from_fifth);
  n = job_log.size();
  rewind(0, 0);
  settle();
  ASSERT_EQ(notes, 2u);
  expect_jobs(n, from_fifth);
  EXPECT_EQ(job_log[n].j.pay_addr, translate(w0.lkey, w0.laddr) + 1024);
  EXPECT_EQ(skipped_inside, 1u);
  rewind(1, 2);
  settle();
  n = job_log.size();
  rewind(0, 0);
  settle();
  ASSERT_EQ(notes, 4u);
  expect_jobs(n, {{0x02, uint32_t(f + 5), true}, {0x08, uint32_t(f + 8), true}, {kOpReadReq, uint32_t(f + 9), true}});
  EXPECT_EQ(job_log[n].j.pay_addr, translate(w0.lkey, w0.laddr) + 5 * 256);
  EXPECT_EQ(skipped_wqes, 1u);
  EXPECT_EQ(skipped_inside, 2u);  // the first rewind's SEND, the WRITE here
  n = job_log.size();
  send(kWrite, 10);
  expect_jobs(n, {{0x0A, uint32_t(f + 11), false}});
}

// A READ of 5 responses rewound to its fourth response: the request asks for the rest only
// (PSN, remote address and length, local address, response count and last length advanced),
// marked resend; its old context is dropped first. The WRITE after it is resent too.
TEST_F(WqeFetchRewindBench, ReadPartialReRead) {
  SRNIC_BENCH_TRACE();
  rd_hold = 100000;  // responses never arrive
  start();
  send(kRead, 5 * 256 - 7);
  send(kWrite, 200);
  ASSERT_EQ(rd_table.size(), 1u);
  const Wqe& r = wqe_at(qps[q], 0);
  const uint64_t first = r.first_u;
  const size_t n0 = job_log.size();
  rewind(0, 3);
  settle();
  ASSERT_EQ(notes, 1u);
  EXPECT_EQ(rd_flushed, 1u) << "the READ's old context was not dropped";
  expect_jobs(n0, {{kOpReadReq, uint32_t(first + 3), true}, {0x0A, uint32_t(first + 5), true}});
  ASSERT_EQ(job_log.size(), n0 + 2);
  const Job& j = job_log[n0].j;
  EXPECT_EQ(j.reth_va, r.raddr + 768);
  EXPECT_EQ(j.reth_len, 5u * 256 - 7 - 768);
  EXPECT_EQ(j.npk, 2u);
  EXPECT_EQ(j.last_len, 5u * 256 - 7 - 768 - 256);
  EXPECT_EQ(j.pa, translate(r.lkey, r.laddr) + 768);
  EXPECT_EQ(rd_table.size(), 1u) << "the re-read has one context";
}

// A rewind while the QP's planned jobs wait for the TX queue: nothing happens until they
// have all left (with their PSNs, not resend); then note, flush and kick in one cycle, then
// the resent jobs.
TEST_F(WqeFetchRewindBench, WaitsForPlannedJobs) {
  SRNIC_BENCH_TRACE();
  start();
  send(kWrite, 2 * 256);
  ASSERT_TRUE(post(q, 0, kSend, 0, 6 * 256));
  ring = int(q);
  k.job = 0;  // the TX queue takes nothing
  for (int i = 0; i < 200 && !HasFatalFailure(); ++i) cycle(k);
  ASSERT_EQ(qps[q].planned - qps[q].emitted, 6u) << "the SEND was not planned";
  rewind(0, 1);
  for (int i = 0; i < 300 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(notes, 0u) << "rewind applied with planned jobs not sent";
  EXPECT_EQ(rw_taken, 1u) << "the rewind's state read was not taken";
  const size_t n0 = job_log.size();
  k.job = 100;
  settle();
  ASSERT_EQ(notes, 1u);
  const uint64_t first = wqe_at(qps[q], 0).first_u;
  expect_jobs(n0, {{0x00, uint32_t(first + 2), false}, {0x01, uint32_t(first + 3), false},
                   {0x01, uint32_t(first + 4), false}, {0x01, uint32_t(first + 5), false},
                   {0x01, uint32_t(first + 6), false}, {0x02, uint32_t(first + 7), false},
                   {0x08, uint32_t(first + 1), true}, {0x00, uint32_t(first + 2), true},
                   {0x01, uint32_t(first + 3), true}, {0x01, uint32_t(first + 4), true},
                   {0x01, uint32_t(first + 5), true}, {0x01, uint32_t(first + 6), true},
                   {0x02, uint32_t(first + 7), true}});
  ASSERT_EQ(note_cycles.size(), 1u);
  EXPECT_GT(note_cycles[0], job_log[n0 + 5].cycle) << "noted before the last planned job left";
  EXPECT_LT(note_cycles[0], job_log[n0 + 6].cycle);
}

// RNR answer (at packet 1 of WQE 0): rnr with the code, no kick, the send state stays; the QP
// is parked: doorbells give turns without work, nothing is sent. An unparking answer with
// apply 0 for a QP that is not parked gives a note alone. The RNR wait's end is answered
// from the oldest WQE not acknowledged (WQE 0, from its start): the QP is kicked, resends it
// whole, then the new WQE.
TEST_F(WqeFetchRewindBench, RnrParksUntilAnswered) {
  SRNIC_BENCH_TRACE();
  start();
  const size_t n0 = job_log.size() + 3;
  park_by_rnr(0x15);
  ASSERT_EQ(notes, 1u);
  EXPECT_GE(parked_turns, 5u);
  const uint32_t other = (q + 1) % kQps;
  configure(other, 1, 2, true);
  offer_rewind(Rewind{other, false, false, 0, 0, 0, 0, true});
  for (int i = 0; i < 50 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(stray_unparks, 1u);
  EXPECT_EQ(notes, 2u);
  EXPECT_EQ(kicks, 0u);
  hold_unparks = false;
  settle();
  EXPECT_EQ(unparks, 1u);
  EXPECT_EQ(kicks, 1u);
  const uint64_t first = wqe_at(qps[q], 0).first_u;
  expect_jobs(n0, {{0x06, uint32_t(first), true}, {0x07, uint32_t(first + 1), true},
                   {0x08, uint32_t(first + 2), true}, {0x04, uint32_t(first + 3), false}});
}

// An RNR answer leaves the send state where it was: when the wait's end is answered with
// apply 0 (the completion engine had nothing to resend from) the QP goes on after the last
// packet it had planned, not from the RNR NAK's packet.
TEST_F(WqeFetchRewindBench, RnrAnswerKeepsTheSendState) {
  SRNIC_BENCH_TRACE();
  start();
  const size_t n0 = job_log.size() + 3;
  park_by_rnr(2);
  up_q.clear();
  offer_rewind(Rewind{q, false, false, 0, 0, 0, 0, true});
  hold_unparks = false;
  settle();
  EXPECT_EQ(unparks, 1u);
  EXPECT_EQ(kicks, 1u);
  const uint64_t first = wqe_at(qps[q], 0).first_u;
  expect_jobs(n0, {{0x04, uint32_t(first + 3), false}});
}

// Reused slots (decision 49). Four one-packet WRITEs in a ring of four; a rewind to WQE 0 is
// applied while the scheduler holds the QP; then all four are acknowledged (answers to what
// was sent before the rewind) and the host posts WQEs 4 and 5 into slots 0 and 1. The resend's
// read finds WQE 4 in the slot of WQE 0: no job, the QP parks and the slot is reported with
// the turn end (no more work reported). Answered from the oldest WQE not acknowledged (WQE
// 4, at the PSN after WQE 3), the QP is kicked and sends WQEs 4 and 5 as new packets.
TEST_F(WqeFetchRewindBench, ReusedSlotParksUntilAnswered) {
  SRNIC_BENCH_TRACE();
  const uint64_t first = four_sent_then_rewind();
  const size_t n0 = job_log.size();
  ASSERT_FALSE(HasFailure());
  for (int i = 0; i < 4; ++i) ack_one(qps[q]);
  ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  ring = int(q);
  hold_unparks = true;
  k.hand = 100;
  for (int i = 0; i < 200 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(stale_reports, 1u);
  EXPECT_EQ(job_log.size(), n0) << "a reused slot was sent";
  EXPECT_TRUE(qps[q].park);
  ASSERT_EQ(up_q.size(), 1u);
  hold_unparks = false;
  settle();
  EXPECT_EQ(unparks, 1u);
  expect_jobs(n0, {{0x0A, uint32_t(first + 4), false}, {0x0A, uint32_t(first + 5), false}});
}

// Acknowledged but not reused: the slot still holds the WQE read for, which is sent again
// (the responder answers it as a duplicate); no report.
TEST_F(WqeFetchRewindBench, AcknowledgedSlotNotReusedIsSentAgain) {
  SRNIC_BENCH_TRACE();
  const uint64_t first = four_sent_then_rewind();
  const size_t n0 = job_log.size();
  ASSERT_FALSE(HasFailure());
  for (int i = 0; i < 2; ++i) ack_one(qps[q]);
  k.hand = 100;
  settle();
  EXPECT_EQ(stale_reports, 0u);
  expect_jobs(n0, {{0x0A, uint32_t(first), true}, {0x0A, uint32_t(first + 1), true},
                   {0x0A, uint32_t(first + 2), true}, {0x0A, uint32_t(first + 3), true}});
}

// A WQE whose index is neither its own nor a newer one of its slot is refused like a malformed
// one: LOC_QP_OP_ERR at its PSN, the QP stops (its later WQEs reported for flushing).
TEST_F(WqeFetchRewindBench, WrongIndexIsRefused) {
  SRNIC_BENCH_TRACE();
  allow_bad = true;
  start();
  send(kWrite, 100);
  const size_t n0 = job_log.size();
  ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  Qp& s = qps[q];
  s.ring_idx[1] = uint16_t(1 + 3);  // not a multiple of the ring size ahead
  ring = int(q);
  settle();
  EXPECT_EQ(events, 1u);
  EXPECT_TRUE(ev_expect.empty());
  EXPECT_EQ(job_log.size(), n0);
  EXPECT_TRUE(s.err);
  // an index behind (the host wrote the slot of an older WQE)
  configure(q, 1, 2, true);
  ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  qps[q].ring_idx[0] = uint16_t(0 - 4);
  ring = int(q);
  settle();
  EXPECT_EQ(events, 2u);
  EXPECT_TRUE(qps[q].err);
}

// A rewind to a WQE before a refused one leaves the stop: the WQEs from the rewind on are sent
// again (marked resend, same PSNs) and the refused WQE is refused again (a second report).
TEST_F(WqeFetchRewindBench, RewindBeforeARefusedWqeResendsAndRefusesAgain) {
  SRNIC_BENCH_TRACE();
  allow_bad = true;
  start();
  send(kWrite, 2 * 256);
  const size_t n0 = job_log.size();
  const uint64_t first = wqe_at(qps[q], 0).first_u;
  ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  Qp& s = qps[q];
  s.ring_idx[1] = uint16_t(1 + 3);  // a wrong index: refused
  ring = int(q);
  settle();
  EXPECT_EQ(events, 1u);
  EXPECT_EQ(job_log.size(), n0);
  ASSERT_TRUE(s.err);
  rewind(0, 1);
  settle();
  EXPECT_EQ(rw_applied, 1u);
  EXPECT_EQ(rw_unrefused, 1u);
  EXPECT_EQ(kicks, 1u);
  expect_jobs(n0, {{0x08, uint32_t(first + 1), true}});
  EXPECT_EQ(events, 2u) << "the refused WQE was not refused again";
  EXPECT_TRUE(ev_expect.empty());
  EXPECT_TRUE(s.err);
  // a host stop is final: a rewind after it is not applied
  hstop_q.push_back(q);
  settle();
  rewind(0, 0);
  settle();
  EXPECT_EQ(rw_applied, 1u);
  EXPECT_TRUE(s.err);
}

// Rewinds that do not apply give a note alone and leave the send state: apply 0; a QP not in
// RTS; a QP stopped by the host.
// Rewinds and stop requests made for an earlier incarnation of the QP are dropped as they
// arrive, whatever they say (a rewind to WQE 0, an RNR answer, an answer that unparks; a stop):
// no note, kick, RNR wait or READ-context flush, nothing resent, no event, the QP neither parked
// nor stopped: the next WQE goes at the next PSN. Live ones still act: a rewind to packet 1 of
// WQE 0 resends from there; a stop request stops the QP (its CEV_LERR, nothing more sent).
TEST_F(WqeFetchRewindBench, StaleRewindsAndStopsHaveNoEffect) {
  SRNIC_BENCH_TRACE();
  start();
  send(kWrite, 3 * 256);
  send(kSend, 100);
  ASSERT_EQ(job_log.size(), 4u);
  const uint64_t first = wqe_at(qps[q], 0).first_u;
  Rewind r{q, true, false, 0, 256, first + 1, 0};
  r.stale = true;
  rw_q.push_back(r);
  r.rnr = true;
  r.code = 9;
  rw_q.push_back(r);
  r.rnr = false;
  r.apply = false;
  r.up = true;
  rw_q.push_back(r);
  offer_stop(q, true);
  settle();
  EXPECT_EQ(stale_rws, 3u);
  EXPECT_EQ(stale_stops, 1u);
  EXPECT_EQ(rw_taken, 0u);
  EXPECT_EQ(notes, 0u);
  EXPECT_EQ(kicks, 0u);
  EXPECT_TRUE(up_q.empty()) << "a stale RNR answer started an RNR wait";
  EXPECT_EQ(events, 0u) << "a stale stop request reported";
  EXPECT_EQ(job_log.size(), 4u) << "a stale rewind resent";
  EXPECT_FALSE(qps[q].park || qps[q].err);
  send(kWrite, 10);
  expect_jobs(4, {{0x0A, uint32_t(first + 4), false}});
  // live ones
  rewind(0, 1);
  settle();
  EXPECT_EQ(notes, 1u);
  EXPECT_EQ(kicks, 1u);
  expect_jobs(5, {{0x07, uint32_t(first + 1), true},
                  {0x08, uint32_t(first + 2), true},
                  {0x04, uint32_t(first + 3), true},
                  {0x0A, uint32_t(first + 4), true}});
  offer_stop(q, false);
  settle();
  EXPECT_EQ(stops, 1u);
  EXPECT_EQ(events, 1u) << "a stop request without its report";
  EXPECT_TRUE(qps[q].err);
  const size_t n0 = job_log.size();
  ASSERT_TRUE(post(q, 0, kWrite, 0, 10));
  ring = int(q);
  settle();
  EXPECT_EQ(job_log.size(), n0) << "a stopped QP sent";
  EXPECT_EQ(events, 2u) << "the WQE posted after the stop was not reported";
}

TEST_F(WqeFetchRewindBench, NotAppliedOnlyNotes) {
  SRNIC_BENCH_TRACE();
  start();
  send(kWrite, 2 * 256);
  rewind(0, 1, false);
  settle();
  EXPECT_EQ(notes, 1u);
  EXPECT_EQ(kicks, 0u);
  EXPECT_EQ(rw_applied, 0u);
  const size_t n0 = job_log.size();
  const uint64_t first = wqe_at(qps[q], 0).first_u;
  send(kWrite, 10);
  expect_jobs(n0, {{0x0A, uint32_t(first + 2), false}});
  // host stop, then a rewind
  hstop_q.push_back(q);
  settle();
  ASSERT_TRUE(qps[q].err);
  const uint64_t notes0 = notes;
  rewind(0, 0);
  settle();
  EXPECT_EQ(notes, notes0 + 1);
  EXPECT_EQ(kicks, 0u);
  EXPECT_EQ(rd_flushed, 0u);
  // a QP in INIT
  const uint32_t other = (q + 1) % kQps;
  configure(other, 1, 3, false);
  ASSERT_TRUE(post(other, 0, kWrite, 0, 10));
  offer_rewind(Rewind{other, true, false, 0, 0, qps[other].psn_u, 0});
  settle();
  EXPECT_EQ(notes, notes0 + 2);
  EXPECT_EQ(kicks, 0u);
  EXPECT_EQ(rw_applied, 0u);
}

// A rewind whose end comes while the plan stage offers a turn end (p_done: pst == P_END, here
// held by kick_ready low: QP b's turn ends inside its 3-packet WRITE, one packet's budget, and
// kicks b): note, kick and rdc_rw_flush go out once, after the plan stage's turn end (its kick
// and its send-state write have the ports first), in the cycle the state write-back that ends
// the rewind is made. Ended beside the turn end, the rewind's kick would be lost (the port
// carries the plan kick) or its write-back; repeated, the RX engine would be told more than
// once that the episode is over (a second note can end a later episode), the scheduler kicked
// and the READ contexts flushed again, and CNT_REWIND / CNT_RNR_WAIT would count each cycle.
class WqeFetchBesideTurnEndBench : public WqeFetchRewindBench {
 public:
  uint32_t b = 0;
  uint64_t end_cycle = 0;  // the cycle b's held turn end went out
  // QP b's turn end offered and held (kick_ready low); returns once it is
  void hold_turn_end_of_b() {
    b = (q + 1) % kQps;
    configure(b, 1, 3, true);
    ASSERT_TRUE(post(b, 0, kWrite, 0, 3 * 256));
    ring = int(b);
    k.kick = 0;
    bool at_end = false;
    for (int i = 0; i < 200 && !HasFatalFailure() && !at_end; ++i) {
      cycle(k);
      at_end = dut->kick_valid && dut->kick_qpn == b && dut->turn_qpn == b;
    }
    ASSERT_TRUE(at_end) << "b's turn end never offered";
  }
  // lets the kick go; the cycle of b's turn end is end_cycle
  void release_turn_end_of_b() {
    k.kick = 100;
    const uint64_t kicks0 = plan_kicks;
    for (int i = 0; i < 10 && !HasFatalFailure() && plan_kicks == kicks0; ++i) cycle(k);
    ASSERT_EQ(plan_kicks, kicks0 + 1) << "b's turn end never went out";
    end_cycle = dut.cycle() - 1;
    settle();
  }
};

TEST_F(WqeFetchBesideTurnEndBench, RewindBesideTurnEndNotesOnce) {
  SRNIC_BENCH_TRACE();
  burst = 256;  // one packet per turn
  start();
  send(kWrite, 2 * 256);
  hold_turn_end_of_b();
  rewind(0, 1);
  for (int i = 0; i < 40 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(rw_taken, 1u) << "the rewind's state read was not taken";
  EXPECT_EQ(notes, 0u) << "the rewind ended while the plan stage offered a turn end";
  release_turn_end_of_b();
  EXPECT_EQ(notes, 1u);
  EXPECT_EQ(kicks, 1u);
  EXPECT_EQ(flushes, 1u);
  ASSERT_EQ(note_cycles.size(), 1u);
  EXPECT_GT(note_cycles[0], end_cycle);
  EXPECT_TRUE(all_sent(qps[q]) && all_sent(qps[b]));
}

// The same for an unparking answer: an RNR wait's end answered for a parked QP while the plan
// stage offers a turn end kicks the scheduler once, with its write-back.
TEST_F(WqeFetchBesideTurnEndBench, UnparkBesideTurnEndKicksOnce) {
  SRNIC_BENCH_TRACE();
  burst = 256;
  start();
  send(kWrite, 2 * 256);
  hold_unparks = true;
  rewind(0, 0, true, true, 3);
  settle();
  ASSERT_EQ(notes, 1u);
  ASSERT_EQ(up_q.size(), 1u);
  hold_turn_end_of_b();
  hold_unparks = false;
  up_q.front().second = dut.cycle();  // the RNR wait ends now
  for (int i = 0; i < 40 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_EQ(notes, 1u) << "the unparking answer ended while the plan stage offered a turn end";
  release_turn_end_of_b();
  EXPECT_EQ(unparks, 1u);
  EXPECT_EQ(notes, 2u);
  EXPECT_EQ(kicks, 1u);
  ASSERT_EQ(note_cycles.size(), 2u);
  EXPECT_GT(note_cycles[1], end_cycle);
  EXPECT_TRUE(all_sent(qps[q]) && all_sent(qps[b]));
}

// The resend mark compares the PSN with psn_hi in 24-bit half-window arithmetic, so psn_hi
// must follow the send state while it is not resending: were it left at sq_psn, once a QP had
// sent more than 2^23 PSNs without a rewind every new job would be marked resend (srnic_core
// would no longer report its PSN to the RX engine, and TX_RETRANSMIT would count packets sent
// once). Here a 2 GiB WRITE at MTU 256 (2^23 packets), then a one-packet WRITE and a
// three-packet one, no rewind: no job may be marked resend, and none left out (with nothing
// acknowledged una is 2^23 behind: only a resend may pass over packets before it).
TEST_F(WqeFetchRewindBench, ResendMarkAfterHalfTheWindow) {
  SRNIC_BENCH_TRACE();
  burst = 0x80000000u;  // the whole WQE in one segment
  log_jobs = false;
  start();
  log_jobs = false;
  ASSERT_TRUE(post(q, 0, kWrite, 0, 0x80000000u));
  ASSERT_TRUE(post(q, 0, kWrite, 0, 10));
  ASSERT_TRUE(post(q, 0, kWrite, 0, 3 * 256));
  ring = int(q);
  // until the big WRITE's jobs flow, then a tight loop for most of them
  for (int i = 0; i < 500 && !HasFatalFailure() && qps[q].emitted == 0; ++i) cycle(k);
  ASSERT_GT(qps[q].emitted, 0u);
  Qp& s = qps[q];
  const uint64_t bulk = (uint64_t(1) << 23) - 100;
  uint64_t marked = 0;
  // only jobs move meanwhile (every other handshake waits for cycle())
  dut->job_ready = 1;
  dut->db_valid = dut->s_valid = dut->rw_valid = dut->hstop_valid = dut->stop_valid = 0;
  dut->ar_ready = dut->r_valid = dut->mr_rsp = dut->done_ready = dut->rdc_ready = 0;
  dut->note_ready = dut->kick_ready = dut->rnr_ready = 0;
  dut->rdc_freed = 0;  // (nothing leaves the READ context table meanwhile)
  while (s.emitted < bulk && !HasFatalFailure()) {
    dut.eval();
    if (dut->job_valid) {
      const Job e = next_job(s);
      if (kJob.get(dut->job, kResend)) ++marked;
      if (kJob.get(dut->job, kPsn) != (uint32_t(e.psn_u) & kPsnMask)) {
        ADD_FAILURE() << "job " << s.emitted << ": PSN 0x" << std::hex << kJob.get(dut->job, kPsn);
        break;
      }
      pop_job(s, e);
      ++s.emitted;
      ++jobs;
    }
    dut.tick();
  }
  settle(5000);
  EXPECT_EQ(marked, 0u) << "jobs of the big WRITE marked resend";
  EXPECT_EQ(s.emitted, (uint64_t(1) << 23) + 4);
  std::printf("[bench] %llu jobs of one QP without a rewind\n", (unsigned long long)s.emitted);
}

// ------------------------------------------------------------ several turns of a QP in flight
// TURNS_PER_QP > 1 (block_wqe_fetch_t4): a QP is queued again as soon as its turn is issued,
// and its next turn reads the WQEs after the youngest of its turns in flight while those are
// still in the ring or the plan stage; a turn that ends early dooms the younger ones (dropped
// unread) and kicks the QP. Where the turns of a QP begin and end then depends on the timing of
// everything around, so the reference here is the stream of each QP's packets, which does not:
// the jobs of a QP must be exactly the packets of its posted WQEs, in order (opcode, PSNs
// consecutive from the QP's first, payload address and length, RETH, ImmDt, AckReq, SE, never
// marked resend; a READ one request with its context insert), each packet once, none for a
// WQE not posted; fenced WQEs start with no READ of their QP outstanding. Also checked: every
// WQE read is of slots holding WQEs posted, not acknowledged and below the producer index the
// turn read; MR requests name the WQE the QP's plan is at (the last one asked for or the next);
// each READ started has a context reserved and room in its QP's share; at most TURNS_PER_QP
// turns of a QP are in flight (WQE reads minus turn_end/turn_drop of the QP) and a kick comes
// only with a turn end or as a READ context wake-up of a QP that may wait (see Context waits in
// the header); done
// of a turn with a WQE read reports WQEs beyond the ones read; in the end every posted WQE is
// sent (no doorbell or kick lost, no QP stuck) and the DUT is idle.
class WqeFetchTurnsBench : public WqeFetchBench {
 public:
  void SetUp() override {
    if (kTpq < 2) GTEST_SKIP() << "several turns of a QP in flight need TURNS_PER_QP > 1 (this build: 1)";
    stream = true;
  }
  // Everything ready and nothing posted for n cycles: the DUT reads, plans and sends nothing.
  void expect_idle(int n) {
    if (HasFatalFailure()) return;
    Knobs k;
    k.post = 0;
    k.hand = k.done = k.ar = k.rdc = k.job = k.kick = 100;
    const uint64_t reads0 = reads, mr0 = mr_reqs, jobs0 = jobs, done0 = turns_done, kicks0 = plan_kicks;
    for (int i = 0; i < n && !HasFatalFailure(); ++i) cycle(k);
    dut.eval();
    EXPECT_EQ(reads, reads0) << "WQE reads once every posted WQE was sent";
    EXPECT_EQ(mr_reqs, mr0);
    EXPECT_EQ(jobs, jobs0);
    EXPECT_EQ(turns_done, done0);
    EXPECT_EQ(plan_kicks, kicks0);
    EXPECT_FALSE(dut->ar_valid || dut->job_valid || dut->done_valid || dut->kick_valid || dut->mr_req ||
                 dut->lerr_valid || dut->stale_valid || dut->turn_end || dut->turn_drop)
        << "the DUT is not idle";
  }
  void print_turn_stats() const {
    std::printf("[bench] %llu WQE reads (%llu behind turns of the QP in flight), at most %d turns of a QP in flight, "
                "%llu cycles with 2+, at most %d WQE reads of a QP outstanding; %llu turns ended in the plan stage, "
                "%llu doomed turns dropped, %llu plan kicks; %llu jobs (%llu READs), %llu MR requests, %llu fenced "
                "WQEs started\n",
                (unsigned long long)reads, (unsigned long long)spec_reads, max_fly, (unsigned long long)overlap_cycles,
                max_reads_out, (unsigned long long)turn_ends, (unsigned long long)turn_drops,
                (unsigned long long)plan_kicks, (unsigned long long)jobs, (unsigned long long)read_jobs,
                (unsigned long long)mr_reqs, (unsigned long long)fenced_started);
  }
};

// Random traffic on six QPs with several turns each in flight: random posting and doorbells,
// random readiness of the scheduler (hand-out, done_ready, kick_ready), the WQE reads (ar_ready,
// latency 0..200 cycles), the TX queue and the READ context table (2..10 entries, READs held
// 20..300 cycles: turns end in front of READs), fences, and turn limits changed every phase
// (sched_burst 64..20000 bytes: turns end inside messages and doom the turns read ahead;
// sched_wqes 1..8). The stream reference checks every packet; the test must have seen QPs with
// 2+ turns in flight, doomed turns dropped and plan kicks.
TEST_F(WqeFetchTurnsBench, RandomTrafficSeveralTurnsPerQp) {
  SRNIC_BENCH_TRACE();
  fence_pct = unsigned(rng.range(5, 20));
  rd_hold = rng.range(20, 300);
  rd_cap = size_t(rng.range(2, 10));
  read_pct = int(rng.range(15, 40));
  reset();
  const int nq = std::min(kQps, 6);
  for (int i = 0; i < nq && !HasFatalFailure(); ++i)
    configure(uint32_t(rng.below(kQps)), int(rng.range(1, 3)), int(rng.range(2, 6)), true);
  for (int phase = 0; phase < 100 && !HasFatalFailure(); ++phase) {
    burst = uint32_t(rng.percent(60) ? rng.range(64, 1500) : rng.range(1500, 20000));
    wqes_per_turn = uint8_t(rng.range(1, 8));
    Knobs k;
    k.post = unsigned(rng.percent(40) ? rng.range(1, 5) : rng.range(5, 40));  // QPs drain now and then
    k.hand = unsigned(rng.range(30, 100));
    k.done = unsigned(rng.range(20, 100));
    k.ar = unsigned(rng.range(20, 100));
    k.lat = unsigned(rng.range(0, 200));
    k.rdc = unsigned(rng.range(20, 100));
    k.job = unsigned(rng.range(20, 100));
    k.kick = unsigned(rng.range(10, 100));
    k.rw_stale = rng.percent(60) ? 1 : 0;
    k.stop_stale = rng.percent(60) ? 1 : 0;
    for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) cycle(k);
  }
  settle(100000);
  expect_idle(300);
  print_turn_stats();
  std::printf("[bench] READ contexts: %zu, %llu READs started (each checked against rdc_free)\n", rd_cap,
              (unsigned long long)ctx_checks);
  EXPECT_GE(max_fly, 2) << "no QP had two turns in flight";
  EXPECT_GT(overlap_cycles, 50000u);
  EXPECT_GT(spec_reads, 5000u);
  EXPECT_GT(turn_drops, 1000u) << "too few doomed turns dropped";
  EXPECT_GT(plan_kicks, 1000u);
  EXPECT_GT(jobs, 5000u);
  EXPECT_GT(read_jobs, 1000u);
  EXPECT_EQ(read_jobs, ctx_checks) << "READs sent != READs started";
  EXPECT_GT(fenced_started, 200u);
  EXPECT_EQ(resent, 0u) << "jobs marked resend without a rewind";
  EXPECT_GT(stale_rws, 200u);
  EXPECT_GT(stale_stops, 200u);
  EXPECT_FALSE(dut.rtl_error());
}

// One QP, 64 small WQEs (one packet each) posted at once, 8 WQEs per turn, every WQE read
// answered after 300 cycles, everything else always ready: the QP is queued again as soon as
// its turn is issued and its next turns read ahead, so several WQE reads of the QP are
// outstanding at once and the latency is paid about once per TURNS_PER_QP turns. With one turn
// at a time each of the 8+ turns waits 300 cycles for its WQEs (at least 2400 cycles).
TEST_F(WqeFetchTurnsBench, ReadAheadHidesWqeReadLatency) {
  SRNIC_BENCH_TRACE();
  burst = 65536;
  wqes_per_turn = 8;
  reset();
  const uint32_t q = 5 % kQps;
  configure(q, 1, 6, true);
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(post(q, 0, kWrite, 0, int64_t(rng.range(1, 256))));
  ring = int(q);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = k.kick = 100;
  k.lat = k.lat_min = 300;
  const uint64_t c0 = dut.cycle();
  uint64_t took = 0;
  for (int i = 0; i < 20000 && !HasFatalFailure() && !took; ++i) {
    cycle(k);
    if (qps[q].jc_idx == 64) took = dut.cycle() - c0;
  }
  ASSERT_NE(took, 0u) << "the 64 WQEs were not sent";
  print_turn_stats();
  std::printf("[bench] 64 one-packet WQEs, 8 per turn, WQE read latency 300: sent in %llu cycles (bound %d)\n",
              (unsigned long long)took, 2 * 300 * 64 / 8);
  EXPECT_GE(max_reads_out, 2) << "never two WQE reads of the QP outstanding";
  EXPECT_LT(took, uint64_t(2 * 300 * 64 / 8));
  EXPECT_LT(took, uint64_t(300 * 64 / 8)) << "no faster than one turn at a time";
  EXPECT_EQ(jobs, 64u);
  settle();
  expect_idle(100);
  EXPECT_FALSE(dut.rtl_error());
}

// A turn that ends at a refused WQE (bad opcode) stops the QP: LOC_QP_OP_ERR for it, and the
// WQEs after it up to the producer index that turn read are flushed by the completion engine.
// Here a second turn of the QP reads WQEs posted after the first turn's producer index read
// while the first is still waiting for its WQEs (latency 300): the second turn is doomed when
// the first ends at the refused WQE and is dropped unread, so the QP must be turned again (a
// kick) to report those later WQEs for flushing; nothing else would: their doorbell was used
// up by the second turn's hand-out, and its done reported no more work.
TEST_F(WqeFetchTurnsBench, RefusedWqeWithTurnsInFlightFlushesAll) {
  SRNIC_BENCH_TRACE();
  allow_bad = true;
  burst = 65536;
  wqes_per_turn = 8;
  reset();
  const uint32_t q = 6 % kQps;
  configure(q, 1, 5, true);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(post(q, 0, i == 5 ? 7 : kWrite, 0, 100));  // WQE 5: opcode 7
  ring = int(q);
  Knobs k;
  k.post = 0;
  k.hand = k.done = k.ar = k.rdc = k.job = k.kick = 100;
  k.lat = k.lat_min = 300;
  // (the first 8 WQEs take two reads when they cross a 4 KiB boundary: the ring's place in
  // its page is random)
  for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle(k);
  const uint64_t reads0 = reads;
  ASSERT_GE(reads0, 1u) << "the first turn's WQE read";
  EXPECT_EQ(events, 0u);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  ring = int(q);
  for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle(k);
  EXPECT_GT(reads, reads0) << "no turn read the later WQEs ahead";
  EXPECT_EQ(events, 0u) << "the refused WQE was reached before the later WQEs were read";
  settle();
  print_turn_stats();
  const Qp& s = qps[q];
  EXPECT_TRUE(s.err) << "the refused WQE was not reported";
  EXPECT_EQ(s.jc_idx, 5u) << "sent up to WQE " << s.jc_idx << ", the refused one is 5";
  ASSERT_FALSE(ev_seen.empty());
  EXPECT_EQ(ev_seen[0].status, kWcLocQpOpErr);
  EXPECT_EQ(ev_seen[0].psn, uint32_t(wqe_at(qps[q], 4).first_u + 1) & kPsnMask) << "the refused WQE's PSN";
  uint32_t flushed_to = 0;
  for (const Ev& e : ev_seen) {
    EXPECT_EQ(e.q, q);
    EXPECT_EQ(e.kind, kCevLerr);
    flushed_to = std::max(flushed_to, e.psn2);
  }
  EXPECT_EQ(flushed_to, 16u) << "WQEs reported for flushing up to " << flushed_to << " of the 16 posted";
  EXPECT_GE(turn_drops, 1u) << "the second turn was not doomed";
  expect_idle(100);
}

// ResetWaitsForTheTurnInFlight with TURNS_PER_QP turns of the QP in flight (the stream
// reference): 2 x TURNS_PER_QP one-packet WRITEs, two per turn, their WQE beats held back when the
// RESET is offered: the command waits until the last of the turns has left the plan stage; every
// packet leaves with the old incarnation, none with the new one (the bench moves it on once they
// have left), and a doorbell of the QP in RESET reads nothing. Then a WQE posted after a new
// set-up leaves with the new incarnation.
TEST_F(WqeFetchTurnsBench, ResetWaitsForTheTurnsInFlight) {
  SRNIC_BENCH_TRACE();
  auto_free = false;
  reset();
  const uint32_t a = uint32_t(rng.below(kQps));
  configure_in_page(a, 4);
  reset_waits_for_turn(a, false);
  if (HasFailure()) return;
  new_incarnation_sends(a, kWrite);
  expect_idle(300);
  EXPECT_FALSE(dut.rtl_error());
}

// READ context share and waits with several turns of a QP in flight (the stream reference).
TEST_F(WqeFetchTurnsBench, ReadShareLimitsOneQp) {
  SRNIC_BENCH_TRACE();
  read_share_limits_one_qp();
  expect_idle(300);
}
TEST_F(WqeFetchTurnsBench, ContextWaitDoesNotRereadWqes) {
  SRNIC_BENCH_TRACE();
  context_wait_does_not_reread_wqes(2);
  expect_idle(300);
}
TEST_F(WqeFetchTurnsBench, ContextWaitDoesNotRereadWqesManyPosted) {
  SRNIC_BENCH_TRACE();
  context_wait_does_not_reread_wqes(40);
  expect_idle(300);
}
TEST_F(WqeFetchTurnsBench, WakeUpPerFreedContext) {
  SRNIC_BENCH_TRACE();
  wake_up_per_freed_context();
  expect_idle(300);
}
TEST_F(WqeFetchTurnsBench, QpResetLeavesTheWaitList) {
  SRNIC_BENCH_TRACE();
  reset_leaves_wait_list();
  expect_idle(300);
}
TEST_F(WqeFetchTurnsBench, RandomTrafficReadShare) {
  SRNIC_BENCH_TRACE();
  run_read_share();
  expect_idle(300);
}

// ------------------------------------------------------------ in-flight cap (IRN's BDP-FC)
// tx_window W: a QP sends at most W packets beyond its oldest unacknowledged PSN (una); a READ
// request goes whole if its first PSN is in the window. The bench plays the acknowledgements
// (ack port: every PSN up to ack_psn, held until taken) and checks every job against its own
// una (the acknowledgements taken: the DUT may lag, never lead): PSN - una < W; AckReq on the
// packet at una + W - 1 (the one that fills the window), on every PSN with (psn & m) == m (m + 1
// the largest power of two <= W/4, 1..64; 64 without a window), on last packets and READs, and
// nowhere else but at the window's end of an older una. Also: win_wait comes in the cycle after
// a turn ended without a WQE read and without more work (done_more 0: the QP is idle in the
// scheduler, not polling); srnic_tx_window's kicks (a kick that is neither the plan stage's nor
// a rewind's, of such a QP; any other is a READ context wake-up) queue the QP like a doorbell.
// The stream reference of
// WqeFetchTurnsBench checks every packet (it does not depend on turn boundaries, so these tests
// run in all three builds), and in the end every posted WQE must have been sent (no QP left
// waiting for credit it got).
class WqeFetchWindowBench : public WqeFetchTurnsBench {
 public:
  void SetUp() override {
    stream = true;
    win_mode = true;
  }
  uint32_t q = 0;
  Knobs k;
  uint64_t first = 0;  // q's first PSN (not wrapped)
  // a reset and one QP (MTU 256) with tx_window w; everything ready, no acknowledgements but the
  // test's
  void start(uint32_t w, int log_sq = 7, int64_t psn = -1) {
    win = w;
    reset();
    q = uint32_t(rng.below(kQps));
    configure(q, 1, log_sq, true, psn);
    first = qps[q].psn_u;
    k = Knobs{};
    k.post = 0;
    k.hand = k.done = k.ar = k.rdc = k.job = k.kick = 100;
    log_jobs = true;
  }
  // every PSN of q up to psn_u acknowledged (queued for the port)
  void ack(uint64_t psn_u) { ack_q.push_back({q, uint32_t(psn_u) & kPsnMask}); }
  // Runs until nothing moves for `calm` cycles in a row: no turn queued, handed out or in
  // flight, no WQE beat or acknowledgement waiting.
  void run_quiet(int calm = 150, int max_cycles = 30000) {
    int still = 0;
    for (int i = 0; i < max_cycles && still < calm && !HasFatalFailure(); ++i) {
      cycle(k);
      bool quiet = ready_q.empty() && !handing && !iss_on && done_exp.empty() && ack_q.empty() && rbeats.empty();
      for (uint32_t h : hot) quiet = quiet && !qps[h].active && qps[h].fly_n == 0;
      still = quiet ? still + 1 : 0;
    }
    ASSERT_GE(still, calm) << "the DUT never went quiet";
  }
  struct Snap {
    uint64_t jobs, reads, turns, kicks, waits, mr;
  };
  Snap snap() const { return {jobs, reads, turns_done, win_kicks, win_waits, mr_reqs}; }
  void expect_still(const Snap& a, const std::string& what) {
    EXPECT_EQ(jobs, a.jobs) << what << ": packets sent";
    EXPECT_EQ(reads, a.reads) << what << ": WQE reads";
    EXPECT_EQ(mr_reqs, a.mr) << what << ": MR requests";
    EXPECT_EQ(turns_done, a.turns) << what << ": turns handed out";
    EXPECT_EQ(win_kicks, a.kicks) << what << ": window kicks";
    EXPECT_EQ(win_waits, a.waits) << what << ": waits for credit";
  }
  // the last packet sent fills the window (una + W - 1) and carries AckReq
  void expect_filled(const std::string& what) {
    ASSERT_FALSE(job_log.empty()) << what;
    const Job& j = job_log.back().j;
    EXPECT_EQ(j.psn_u, qps[q].una_u + win - 1) << what << ": the last packet is not at una + W - 1";
    EXPECT_TRUE(j.ackreq) << what << ": the packet that fills the window without AckReq";
  }

  // One QP, WRITEs and SENDs of several packets and small ones (at least 3W + 5 packets), all
  // posted at once, random turn limits: the first W packets go (the W-th with AckReq), the QP
  // waits for credit (win_wait, once per hand-out that finds the window full) and then nothing
  // moves (no WQE read, no hand-out) however long the bench waits. Each acknowledgement of n packets (1, then random up to W) kicks the QP
  // once and lets exactly the next n packets go (the window full again: one more wait); the
  // same acknowledgement again and older ones change nothing (no kick, no turn). Then
  // everything sent is acknowledged, round by round, and the rest goes W packets at a time.
  void stop_and_go(uint32_t w) {
    burst = rng.percent(50) ? 65536u : uint32_t(rng.range(256, 3000));
    wqes_per_turn = uint8_t(rng.range(1, 8));
    start(w);
    uint64_t total = 0;
    while (total < 3 * uint64_t(w) + 5) {
      static constexpr uint8_t kOps[] = {kWrite, kWriteImm, kSend, kSendImm};
      uint32_t len = 0;
      switch (rng.below(3)) {
        case 0: len = rng.percent(40) ? 0 : uint32_t(rng.range(1, 255)); break;
        case 1: len = 256 * uint32_t(rng.range(1, 6)); break;
        default: len = uint32_t(rng.range(257, 8 * 256)); break;
      }
      ASSERT_TRUE(post(q, 0, kOps[rng.below(4)], rng.percent(20) ? 4 : 0, len));  // (4: solicited event)
      total += npk_of(len, 256);
    }
    Qp& s = qps[q];
    const uint64_t end = first + total;
    const std::string at = "window " + std::to_string(w) + ", " + std::to_string(total) + " packets, burst " +
                           std::to_string(burst) + ", " + std::to_string(wqes_per_turn) + " WQEs per turn";
    ring = int(q);
    run_quiet();
    ASSERT_EQ(s.jc_psn, first + w) << at << ": packets sent before any acknowledgement";
    expect_filled(at);
    // (a wait per hand-out that finds the window full: the QP may have been queued twice, by its
    // done reporting more WQEs and by the plan stage's kick at the cut)
    EXPECT_GE(win_waits, 1u) << at << ": waits for credit";
    EXPECT_LE(win_waits, 3u) << at << ": waits for credit";
    EXPECT_EQ(win_kicks, 0u) << at;
    const Snap s0 = snap();
    for (int i = 0; i < 3000 && !HasFatalFailure(); ++i) cycle(k);
    expect_still(s0, at + ", window full, nothing acknowledged");
    EXPECT_FALSE(s.queued || s.active) << at << ": the QP waiting for credit is queued (polling)";
    for (int step = 0; step < 6 && s.jc_psn < end && !HasFatalFailure(); ++step) {
      const uint64_t n = step == 0 ? 1 : rng.range(1, w);
      const std::string st = at + ", acknowledgement " + std::to_string(step) + " of " + std::to_string(n) +
                             " packets";
      const Snap a0 = snap();
      ack(s.una_u + n - 1);
      run_quiet();
      const uint64_t lim = std::min(end, s.una_u + w);
      ASSERT_EQ(s.jc_psn, lim) << st << ": sent up to (una 0x" << hex24(s.una_u) << ")";
      EXPECT_EQ(jobs - a0.jobs, lim - (s.una_u - n + w)) << st << ": packets sent";
      EXPECT_EQ(win_kicks - a0.kicks, 1u) << st << ": kicks of the waiting QP";
      if (lim < end) {
        expect_filled(st);
        EXPECT_GE(win_waits - a0.waits, 1u) << st << ": waits for credit";
        EXPECT_LE(win_waits - a0.waits, 3u) << st << ": waits for credit";
      }
      // the same acknowledgement again, and older ones
      const Snap b0 = snap();
      ack(s.una_u - 1);
      for (int r = int(rng.range(1, 3)); r > 0; --r) ack(s.una_u - 1 - rng.range(1, std::min<uint64_t>(s.una_u - first, 300)));
      ack(s.una_u - 1);
      run_quiet();
      expect_still(b0, st + ", then stale acknowledgements");
      EXPECT_EQ(s.jc_psn, lim) << st << ", then stale acknowledgements";
    }
    // everything sent acknowledged, round by round
    while (s.jc_psn < end && !HasFatalFailure()) {
      ack(s.jc_psn - 1);
      run_quiet();
      ASSERT_EQ(s.jc_psn, std::min(end, s.una_u + w)) << at << ": everything acknowledged";
    }
    settle();
    expect_idle(200);
    EXPECT_EQ(s.jc_psn, end) << at;
    EXPECT_EQ(s.jc_idx, s.pi) << at << ": messages not completed";
    EXPECT_EQ(s.emitted, total);
    std::printf("[bench] %s: %llu waits, %llu window kicks, %llu packets filled a window\n", at.c_str(),
                (unsigned long long)win_waits, (unsigned long long)win_kicks, (unsigned long long)fill_jobs);
    EXPECT_FALSE(dut.rtl_error());
  }
};

TEST_F(WqeFetchWindowBench, WindowStopsAndGoesW1) {
  SRNIC_BENCH_TRACE();
  stop_and_go(1);
}
TEST_F(WqeFetchWindowBench, WindowStopsAndGoesW3) {
  SRNIC_BENCH_TRACE();
  stop_and_go(3);
}
TEST_F(WqeFetchWindowBench, WindowStopsAndGoesW8) {
  SRNIC_BENCH_TRACE();
  stop_and_go(8);
}
TEST_F(WqeFetchWindowBench, WindowStopsAndGoesW64) {
  SRNIC_BENCH_TRACE();
  stop_and_go(64);
}

// A READ of 8 responses with W = 3 and una at its first PSN: the request goes whole (its
// responses count once requested); the WRITE behind it (PSN +8) waits until una is past +5: an
// acknowledgement up to +4 kicks the QP, which finds its window still full and waits again; one
// up to +5 lets the WRITE go.
TEST_F(WqeFetchWindowBench, WindowReadLargerThanWindowGoesWhole) {
  SRNIC_BENCH_TRACE();
  start(3);
  Qp& s = qps[q];
  ASSERT_TRUE(post(q, 0, kRead, 0, 8 * 256 - 3));
  ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  ring = int(q);
  run_quiet();
  ASSERT_EQ(job_log.size(), 1u) << "the READ alone";
  EXPECT_TRUE(job_log[0].j.read);
  EXPECT_EQ(job_log[0].j.npk, 8u);
  EXPECT_EQ(job_log[0].j.psn_u, first);
  EXPECT_EQ(s.jc_psn, first + 8);
  EXPECT_EQ(win_waits, 1u);
  ack(first + 4);
  run_quiet();
  EXPECT_EQ(s.jc_psn, first + 8) << "the WRITE went 3 packets past una";
  EXPECT_EQ(win_kicks, 1u);
  EXPECT_EQ(win_waits, 2u) << "kicked, the QP must wait again";
  ack(first + 5);
  run_quiet();
  EXPECT_EQ(s.jc_psn, first + 9);
  expect_filled("the WRITE");
  EXPECT_EQ(win_kicks, 2u);
  settle();
  expect_idle(100);
  EXPECT_EQ(s.jc_idx, s.pi);
  EXPECT_FALSE(dut.rtl_error());
}

// W = 2: a 2-packet WRITE fills the window and the READ (10 responses) behind it waits; one
// packet of credit and the READ goes whole (only its first PSN needs room); the WRITE behind it
// (PSN +12) waits until una is past +10 (an acknowledgement up to +9 gives no room: kick, wait
// again); then it goes, filling the window; the 0-length WRITE behind it needs one more.
TEST_F(WqeFetchWindowBench, WindowReadNeedsRoomForItsFirstPsnOnly) {
  SRNIC_BENCH_TRACE();
  // the four WQEs in one read: a ring at slot 61..63 of its page splits it at 4 KiB, and each
  // read's hand-out then waits for credit once more
  start(2);
  while (((qps[q].base >> 6) & 63) > 60 && !HasFatalFailure()) start(2);
  Qp& s = qps[q];
  ASSERT_TRUE(post(q, 0, kWrite, 0, 2 * 256));
  ASSERT_TRUE(post(q, 0, kRead, 0, 10 * 256 - 5));
  ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  ASSERT_TRUE(post(q, 0, kWrite, 0, 0));
  ring = int(q);
  run_quiet();
  EXPECT_EQ(s.jc_psn, first + 2);
  EXPECT_EQ(read_jobs, 0u) << "the READ went without room";
  EXPECT_EQ(win_waits, 1u);
  expect_filled("the WRITE");
  ack(first);
  run_quiet();
  EXPECT_EQ(read_jobs, 1u) << "the READ did not go with one packet of room";
  EXPECT_EQ(s.jc_psn, first + 12);
  ASSERT_EQ(job_log.size(), 3u);
  EXPECT_EQ(job_log[2].j.npk, 10u);
  EXPECT_EQ(job_log[2].j.psn_u, first + 2);
  EXPECT_EQ(win_kicks, 1u);
  EXPECT_EQ(win_waits, 2u);
  ack(first + 9);
  run_quiet();
  EXPECT_EQ(s.jc_psn, first + 12) << "the WRITE went 2 packets past una";
  EXPECT_EQ(win_kicks, 2u);
  EXPECT_EQ(win_waits, 3u);
  ack(first + 10);
  run_quiet();
  EXPECT_EQ(s.jc_psn, first + 13);
  expect_filled("the WRITE after the READ");
  EXPECT_EQ(win_waits, 4u);
  ack(first + 11);
  run_quiet();
  EXPECT_EQ(s.jc_psn, first + 14) << "the 0-length WRITE";
  EXPECT_EQ(win_kicks, 4u);
  settle();
  expect_idle(100);
  EXPECT_EQ(s.jc_idx, s.pi);
  EXPECT_FALSE(dut.rtl_error());
}

// The race between an acknowledgement and the issue stage's decision to wait: W = 4, four
// one-packet WRITEs sent (the window full, the QP idle: its turn ended at its last WQE, no wait
// set). Then, again and again, one more WRITE is posted and rung, and the acknowledgement of
// one packet is presented at an offset of -4..12 cycles from the hand-out that reads the QP's
// state and una (the done held back 0, 2 or 5 cycles after it, which moves the wait decision
// later). Whatever the offset, the WRITE must go (the QP never hangs): the state read saw the
// acknowledgement (no wait, no kick), or the wait saw una moved (kicked at once, no win_wait),
// or the acknowledgement saw the wait (win_wait, then a kick). Each must have happened.
TEST_F(WqeFetchWindowBench, WindowAckRacesTheWaitDecision) {
  SRNIC_BENCH_TRACE();
  burst = 65536;
  wqes_per_turn = 8;
  const uint32_t w = 4;
  start(w, 5);
  Qp& s = qps[q];
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
  ring = int(q);
  run_quiet();
  ASSERT_EQ(s.jc_psn, first + 4);
  ASSERT_EQ(win_waits, 0u) << "a turn that filled the window at its last WQE waited";
  int seen[3] = {0, 0, 0};  // read saw it; kicked at once; waited, then kicked
  std::string table;
  for (int hold : {0, 2, 5}) {
    table += "\n  done held " + std::to_string(hold) + ":";
    for (int d = -4; d <= 12 && !HasFatalFailure(); ++d) {
      const uint64_t una0 = s.una_u, next0 = s.jc_psn;
      ASSERT_EQ(next0, una0 + w);
      const Snap a0 = snap();
      const uint64_t h0 = handouts;
      ASSERT_TRUE(post(q, 0, kWrite, 0, 100));
      uint64_t hand_c = 0;
      for (int i = 0; i < 400 && !HasFatalFailure(); ++i) {
        if (i == 4) ring = int(q);          // doorbell in cycle 4, hand-out in cycle 5
        if (i == 5 + d) ack(una0);
        k.done = (i >= 5 && i < 5 + hold) ? 0 : 100;
        cycle(k);
        if (!hand_c && handouts > h0) hand_c = last_hand_c;
        if (i > 40 && s.jc_psn == next0 + 1) break;
      }
      k.done = 100;
      run_quiet();
      const std::string at = "done held " + std::to_string(hold) + ", acknowledgement at " + std::to_string(d) +
                             " cycles from the hand-out";
      ASSERT_EQ(s.jc_psn, next0 + 1) << at << ": the WRITE was never sent (the QP hangs)";
      ASSERT_NE(hand_c, 0u) << at;
      const int off = int(int64_t(last_ack_c) - int64_t(hand_c));
      EXPECT_EQ(off, d) << at << ": the acknowledgement was taken at " << off << " cycles from the hand-out";
      const uint64_t waited = win_waits - a0.waits, kicked = win_kicks - a0.kicks;
      EXPECT_LE(waited, kicked) << at << ": a wait without a kick";
      EXPECT_LE(kicked, 1u) << at;
      const int kind = kicked == 0 ? 0 : waited == 0 ? 1 : 2;
      ++seen[kind];
      table += " " + std::to_string(d) + ":" + "-KW"[kind];
    }
  }
  std::printf("[bench] acknowledgement vs wait decision (-: the state read saw it, K: kicked at once, W: waited "
              "then kicked):%s\n",
              table.c_str());
  EXPECT_GT(seen[0], 0) << "no acknowledgement before the state read";
  EXPECT_GT(seen[1], 0) << "no acknowledgement between the state read and the wait";
  EXPECT_GT(seen[2], 0) << "no acknowledgement after the wait";
  settle();
  expect_idle(100);
  EXPECT_FALSE(dut.rtl_error());
}

// AckReq interval: for W from 0 (no cap: every 64th PSN) to 2^32 - 1 (capped at 2^22), every
// packet of a 150-packet WRITE, a 71-packet SEND and small WRITEs is checked (in take_job)
// against (psn & m) == m with m + 1 the interval below, the last packets, and the packets that
// fill the window, while the bench acknowledges everything sent as fast as it can.
TEST_F(WqeFetchWindowBench, WindowAckReqInterval) {
  SRNIC_BENCH_TRACE();
  // W, the AckReq interval: the largest power of two <= W/4, 1..64
  const std::vector<std::pair<uint32_t, uint32_t>> cases = {
      {0, 64},   {1, 1},     {2, 1},     {3, 1},     {4, 1},     {7, 1},        {8, 2},        {9, 2},
      {15, 2},   {16, 4},    {17, 4},    {31, 4},    {32, 8},    {63, 8},       {64, 16},      {65, 16},
      {100, 16}, {127, 16},  {128, 32},  {255, 32},  {256, 64},  {257, 64},     {300, 64},     {4096, 64},
      {0x3FFFFF, 64}, {0x400000, 64}, {0x400001, 64}, {0xFFFFFFFFu, 64}};
  for (const auto& [w, iv] : cases) {
    if (HasFatalFailure()) break;
    ASSERT_EQ(ackreq_mask(w) + 1, iv) << "bench: interval of W " << w;
    burst = 65536;
    wqes_per_turn = 8;
    start(w, 5);
    const size_t n0 = job_log.size();
    ASSERT_TRUE(post(q, 0, kWrite, 0, 150 * 256));
    ASSERT_TRUE(post(q, 0, kSend, 0, 70 * 256 + 1));
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(post(q, 0, kWrite, 0, 10));
    ring = int(q);
    settle(100000);
    const Qp& s = qps[q];
    EXPECT_EQ(s.jc_idx, s.pi) << "W " << w;
    uint64_t on_iv = 0, fills = 0;
    for (size_t i = n0; i < job_log.size(); ++i) {
      const Job& j = job_log[i].j;
      if (j.wqe_end || !j.ackreq) continue;
      if ((j.psn_u & (iv - 1)) == iv - 1) ++on_iv;
      else ++fills;
    }
    std::printf("[bench] W %u: interval %u, %llu AckReqs on the interval, %llu more that filled a window\n", w, iv,
                (unsigned long long)on_iv, (unsigned long long)fills);
    EXPECT_GE(on_iv, 149u / iv + 70u / iv) << "W " << w;  // (149 and 70 packets before the last ones)
    if (w == 0) {
      EXPECT_EQ(fills, 0u) << "AckReq at a window's end without a window";
    }
  }
  EXPECT_FALSE(dut.rtl_error());
}

// Random traffic under the cap: six QPs (MTU 256..1024), random WQEs (READs, fences), random
// readiness everywhere and random turn limits as in RandomTrafficSeveralTurnsPerQp, and random
// acknowledgements: a random prefix of what a QP sent, all of it, or stale ones (the last again
// or older), presented with random ack_valid delays, and phases with hardly any (the windows
// fill, QPs wait, then are kicked). Eight rounds, each with its own W (0, 1..8, 9..64, 65..300),
// the bench acknowledging everything at its end: every job within the window of the bench's
// una, AckReq exact, every posted WQE sent (no QP left waiting).
TEST_F(WqeFetchWindowBench, RandomTrafficWithWindow) {
  SRNIC_BENCH_TRACE();
  fence_pct = unsigned(rng.range(0, 15));
  rd_hold = rng.range(20, 300);
  rd_cap = size_t(rng.range(4, 64));
  read_pct = int(rng.range(10, 35));
  reset();
  const int nq = std::min(kQps, 6);
  for (int i = 0; i < nq && !HasFatalFailure(); ++i)
    configure(uint32_t(rng.below(kQps)), int(rng.range(1, 3)), int(rng.range(2, 6)), true);
  std::string wins;
  for (int round = 0; round < 8 && !HasFatalFailure(); ++round) {
    const unsigned r = unsigned(rng.below(100));
    win = round == 0 ? uint32_t(rng.range(1, 8))
          : round == 1 ? 0u
          : r < 15 ? 0u
          : r < 50 ? uint32_t(rng.range(1, 8))
          : r < 75 ? uint32_t(rng.range(9, 64))
                   : uint32_t(rng.range(65, 300));
    wins += " " + std::to_string(win);
    for (int phase = 0; phase < 12 && !HasFatalFailure(); ++phase) {
      burst = uint32_t(rng.percent(60) ? rng.range(64, 1500) : rng.range(1500, 20000));
      wqes_per_turn = uint8_t(rng.range(1, 8));
      Knobs kk;
      kk.post = unsigned(rng.percent(40) ? rng.range(1, 5) : rng.range(5, 40));
      kk.hand = unsigned(rng.range(30, 100));
      kk.done = unsigned(rng.range(20, 100));
      kk.ar = unsigned(rng.range(20, 100));
      kk.lat = unsigned(rng.range(0, 100));
      kk.rdc = unsigned(rng.range(20, 100));
      kk.job = unsigned(rng.range(20, 100));
      kk.kick = unsigned(rng.range(10, 100));
      kk.wack = unsigned(rng.percent(25) ? rng.range(0, 1) : rng.range(1, 30));
      kk.wack_all = unsigned(rng.range(0, 40));
      kk.wack_stale = unsigned(rng.range(0, 30));
      kk.wack_v = unsigned(rng.range(10, 100));
      for (int i = 0; i < 4000 && !HasFatalFailure(); ++i) cycle(kk);
    }
    settle(200000);  // (acknowledges everything sent: no QP may be left waiting)
  }
  expect_idle(300);
  print_turn_stats();
  std::printf("[bench] windows%s: %llu waits for credit, %llu window kicks, %llu acknowledgements (%llu stale), %llu "
              "packets filled the window (%llu an older una's), at most %llu packets past una\n",
              wins.c_str(), (unsigned long long)win_waits, (unsigned long long)win_kicks,
              (unsigned long long)acks_taken, (unsigned long long)acks_stale, (unsigned long long)fill_jobs,
              (unsigned long long)fill_jobs_old, (unsigned long long)max_win_d);
  EXPECT_GT(win_waits, 300u);
  EXPECT_GT(win_kicks, 100u);
  EXPECT_GT(fill_jobs, 150u);
  EXPECT_GT(acks_stale, 200u);
  EXPECT_GT(jobs, 5000u);
  EXPECT_GT(read_jobs, 200u);
  EXPECT_EQ(resent, 0u);
  EXPECT_FALSE(dut.rtl_error());
}

}  // namespace
}  // namespace srnic::verif::blocks
