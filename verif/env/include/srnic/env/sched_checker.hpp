// The send scheduler's invariants, judged per NIC and per QP from the NIC's interfaces only (the
// same monitors DutCoverage reads: AXI4-Lite CSR accesses, AXI4 DMA reads and writes of host
// memory, AXI-Stream TX and RX frames):
//
//   a doorbell is never lost   every WQE rung by an SQ doorbell while the QP is in RTS is read by
//                              the NIC (AXI read ID 0 of the QP's SQ ring, the WQE's running
//                              index in bytes 2..3); at the end of the run every WQE rung on a
//                              QP still in RTS was read and started on the wire
//   no QP waits beyond a bound the oldest rung WQE not yet read is read within the wait bound of
//                              the later of its doorbell and the QP's last scheduling turn (each
//                              turn reads the QP's WQEs from its send cursor, fetch-and-drop), so
//                              "from the moment the WQEs before it were read"; see below
//   no WQE executed twice      per QP, the request messages sent for the first time (a FIRST,
//   or skipped                 ONLY or READ request at a PSN beyond every PSN the QP sent
//                              before) start one per WQE, in WQE order, at the PSN the WQEs
//                              before them left, each as its WQE says: opcode class and
//                              position (ONLY iff the length fits the QP's path MTU), with or
//                              without immediate, RETH address, key and length, ONLY payload
//                              length (the immediate's value is not compared). Resends
//                              (PSNs not beyond the highest sent, go-back-N and RNR retries) and
//                              second reads of a WQE (fetch-and-drop) are legal; a WQE may be
//                              passed over only if the NIC wrote an error CQE for it (bad
//                              opcode, local protection error: never sent)
//   in-flight cap              every request packet (new or resent) starts less than TX_WINDOW
//                              packets (128 unless the host writes the register; 0: no cap)
//                              beyond the QP's oldest PSN not answered on the wire (an ACK or
//                              NAK for it or a later PSN, a READ response): the NIC counts only
//                              ACKs and a READ's last response it has taken, never earlier than
//                              they arrive, so its own count is at least this one
//
// Wait bound (docs/decisions.md 90): B(n) = wait_base + n * T_turn, n the most QPs of the NIC
// with work (WQEs rung and not started, or PSNs sent and not answered) seen while the QP waited:
// under round robin each may take one turn first. T_turn is one SCHED_BURST (65536 unless the
// host writes the register) at turn_gbps, the slowest rate a turn's burst leaves the NIC at; the
// env sets it from what it drew (ChipEnv: the link's share beside the responder, pause storm and
// headers at the smallest path MTU, or the payload reads, one per packet, through the read tags
// at the read latency, whichever is slower). wait_base (100 us) covers what delays a turn
// besides the round robin: WQE reads queued behind payload reads, a retry episode's drain of
// the QP's planned segments and the completion engine's answer. The clock stops while the QP
// waits on its peer, which only the wire shows: an RNR wait (from an RNR NAK received, for the
// NAK's timer plus one sweep of srnic_timer, rnr_sweep), a fence (a fenced WQE read and not
// started behind a READ of the QP not answered yet) and a full window (TX_WINDOW packets or
// more sent beyond the oldest PSN not answered on the wire, a READ counting as unanswered
// until its last response, as the NIC's window counts it). Loss recovery needs no other
// exemption: a QP with WQEs to read and room in its window is not waiting for a timeout. The wait is judged when the
// WQE is read and every poll_cycles while it is not.
//
// A message may leave before the AXI read of its WQE is complete on the bus (the NIC uses each
// beat as it arrives; the monitor publishes a burst at its last beat): new request packets wait
// up to read_grace for the WQEs they need and are judged in order once those are read.
//
// Not checked here: that a QP is never queued twice inside the scheduler. It is internal to
// srnic_sched and stated there as the assertion a_queue_once, which runs in the assertion build
// of the env (srnic-uvm-debug, model Vsrnic_core_dbg, Verilator --assert); the fast model of
// srnic-uvm is built without --assert.
//
// QP state and rings come from the commands the NIC accepted (as in DutCoverage): QP_MODIFY
// gives state, path MTU, destination QPN, CQNs, SQ ring and first PSN; CQ_WRITE the CQ rings.
// A QP counts as failed from the first error CQE the NIC wrote for it, a fatal NAK it sent or
// received for a PSN it had sent, or a QP_MODIFY to ERR: it is then exempt from the wait and
// end-of-run checks, its messages are still checked for order.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "srnic/agents/axi4.hpp"
#include "srnic/agents/axil.hpp"
#include "srnic/env/chip_taps.hpp"
#include "srnic/env/csr_command.hpp"
#include "srnic/agents/axis.hpp"
#include "srnic/roce/headers.hpp"
#include "srnic/roce/opcode.hpp"
#include "srnic/uvm/uvm.hpp"

namespace srnic::verif::env {

struct SchedCheckConfig {
  double clock_mhz = 300;         // core clock (cycles <-> time)
  double wait_base_ns = 100000;   // wait bound: the part every wait gets (+sched_wait_base_us=)
  double turn_gbps = 15;          // wait bound: rate of one turn's burst; the env sets it from
                                  // the link and PCIe it drew (+sched_turn_gbps= overrides)
  uint32_t sched_burst = 65536;   // SCHED_BURST after reset (a CSR write to it is followed)
  uint32_t tx_window = 128;       // TX_WINDOW after reset (a CSR write to it is followed)
  double rnr_sweep_ns = 109227;   // srnic_timer: one sweep of 16384 QPs, 2 cycles each
  double read_grace_ns = 20000;   // a new message waits this long for the read of its WQE
  uint64_t poll_cycles = 1024;    // waits still open are judged this often
  uint32_t errors_per_qp = 4;     // violations reported per QP (the rest are counted)
};

class SchedChecker : public ChipTaps {
 public:
  SchedChecker(uvm::Component& parent, std::string name, const SchedCheckConfig& cfg = {});


  const SchedCheckConfig& config() const { return cfg_; }
  void set_config(const SchedCheckConfig& cfg) { cfg_ = cfg; }

  // Judges the waits still open at cycle `now` (tick() calls it every poll_cycles).
  void poll(uint64_t now);
  // The wait bound of host h's QPs with n QPs busy, in cycles.
  uint64_t wait_bound(uint32_t h, uint32_t n) const;
  // Host h's QPs in RTS and not failed that sent a PSN no answer on the wire has covered yet
  // (the NIC still owes them an ACK timeout or a retry): QPN and the oldest such PSN (`acked`).
  // The environment does not end a run while one is left: the NIC is still at work.
  std::vector<std::pair<uint32_t, uint32_t>> unanswered(uint32_t h) const;

  struct Stats {
    uint64_t doorbells = 0;        // SQ doorbells to QPs in RTS
    uint64_t wqes_rung = 0;        // WQEs they rang
    uint64_t turns = 0;            // SQ WQE reads (one per scheduling turn)
    uint64_t wqes_fetched = 0;     // WQEs read for the first time
    uint64_t refetches = 0;        // WQEs read again (fetch-and-drop)
    uint64_t waits = 0;            // waits measured (a rung WQE read)
    uint64_t messages = 0;         // request messages started for the first time, matched to WQEs
    uint64_t resent = 0;           // request packets sent again (PSN not beyond the highest)
    uint64_t resent_by[2] = {0, 0};  // the same, by sending host (TX_RETRANSMIT counts these)
    uint64_t unsent_in_error = 0;  // WQEs passed over with an error CQE
    uint64_t held = 0;             // new request packets that left before the read of their WQE
                                   // was complete on the bus (judged once it was)
    uint64_t rnr_naks = 0;         // RNR NAKs received (clock stopped)
    uint64_t fence_stalls = 0;     // fence waits seen (clock stopped)
    uint64_t window_stalls = 0;    // full windows seen (clock stopped)
    uint64_t responses_out_of_order = 0;  // READ responses beyond a gap: they answer nothing
    uint64_t qps_checked = 0;      // QPs judged at the end of the run (RTS, not failed)
    uint64_t violations = 0;
    uint64_t max_wait = 0;         // longest wait measured, cycles (clock stops excluded)
    uint64_t max_wait_bound = 0;   // its bound
    uint64_t max_in_flight = 0;    // most packets a request packet started beyond the oldest
                                   // unanswered PSN (in-flight cap: below TX_WINDOW)
  };
  const Stats& stats() const { return st_; }

  void tick() override;
  void check() override;
  void report() override;

 private:
  struct Wqe {
    uint8_t op = 0, flags = 0;
    uint32_t len = 0, rkey = 0, imm = 0;
    uint64_t raddr = 0;
    uint64_t first_fetch = 0;  // cycle of its first read (AR)
    uint32_t fetches = 0;
    bool executed = false;
    uint32_t exec_psn = 0;
    uint64_t exec_cycle = 0;
    int err = -1;  // status of the error CQE the NIC wrote for it
  };
  struct Msg {  // an RC frame as far as the checker reads it
    uint8_t opcode = 0;
    const roce::OpcodeInfo* info = nullptr;
    uint32_t dest_qp = 0, psn = 0;
    bool has_reth = false, has_imm = false, has_aeth = false;
    roce::Reth reth;
    uint32_t imm = 0;
    uint8_t syndrome = 0;
    uint32_t payload = 0;  // payload bytes (without pad)
    uint64_t cycle = 0;    // last beat on the stream
  };
  struct Doorbell {
    uint64_t end = 0;    // WQEs before this running index were rung
    uint64_t cycle = 0;
  };
  struct Qp {
    uint8_t state = 0;
    bool failed = false;
    uint32_t mtu = 1024, dest_qpn = 0;
    uint16_t send_cqn = 0, recv_cqn = 0;
    uint32_t sq_entries = 0;
    uint64_t pi = 0;                  // producer index of the last SQ doorbell (running, 64-bit)
    uint64_t rung = 0;                // WQEs before it were rung while in RTS
    std::deque<Doorbell> dbs;         // doorbells whose WQEs are not all read yet
    std::map<uint64_t, Wqe> wqes;     // WQEs read, by running index (old ones pruned)
    uint64_t next_fetch = 0;          // oldest WQE not read yet
    uint64_t exec_next = 0;           // next WQE to start on the wire
    bool psn_valid = false;           // PSNs tracked since the QP entered RTS
    uint32_t next_psn = 0;            // PSN the next new message starts at
    uint32_t psn_hi = 0;              // PSNs before it were sent
    uint32_t acked = 0;               // at or beyond the NIC's una: PSNs before it were answered
    uint32_t acked_lo = 0;            // READ responses up to it arrived in order (see on_response)
    uint32_t acked_win = 0;           // at or before the NIC's una (see on_response)
    std::deque<std::pair<uint32_t, uint64_t>> reads;  // READs sent and not answered: last PSN, WQE
    bool rd_seen = false;             // a READ's last response arrived,
    uint32_t rd_last = 0;             // the latest at this PSN
    std::vector<Msg> held;            // new request packets waiting for their WQE's read
    // wait clock (cycles); stalls stop it
    uint64_t clock_start = 0, clock_snap = 0, last_t = 0;
    bool stall_open = false, fenced = false, win_full = false;
    uint32_t win = 0;                 // TX_WINDOW when the QP entered RTS (0: no cap)
    uint64_t stall_since = 0, paused = 0, rnr_until = 0;
    uint32_t n_max = 0;               // most QPs busy since the clock started
    uint64_t wait_reported = ~0ull;   // WQE whose wait was reported
    bool busy = false;                // WQEs rung and not started, or PSNs not answered
    uint32_t errors = 0;
  };
  struct Ring {
    uint64_t base = 0, bytes = 0;
    uint32_t owner = 0;  // QPN (SQ) or CQN
    bool cq = false;
  };
  struct Host {
    CsrCommand cmd;  // register commands and their outcome
    uint32_t burst = 0;                    // SCHED_BURST written by the host (0: not written)
    int64_t window = -1;                   // TX_WINDOW written by the host (-1: not written)
    uint32_t busy = 0;                     // QPs busy
    std::map<uint32_t, Qp> qps;
    std::map<uint32_t, uint32_t> by_dest;  // dest QPN -> local QPN
    std::map<uint64_t, Ring> rings;        // base -> ring
  };
  uint32_t window(const Host& hs) const;
  static bool decode(const agents::AxisFrame& f, Msg& m);
  static bool matches(const Wqe& w, const Msg& m, uint32_t mtu);
  static std::string describe(uint64_t idx, const Wqe& w);
  static std::string describe(const Msg& m);

  void on_frame(uint32_t h, bool received, const agents::AxisFrame& f) override;
  void on_request_sent(uint32_t h, uint32_t qpn, Qp& q, const Msg& m);
  void on_response(Host& hs, Qp& q, const Msg& m);
  void on_read(uint32_t h, const agents::Axi4ReadTxn& t) override;
  void on_write(uint32_t h, const agents::Axi4WriteTxn& t) override;
  void on_csr(uint32_t h, const agents::AxiLiteTxn& t) override;
  void on_doorbell(uint32_t h, uint32_t qpn, uint16_t pi, uint64_t t);
  void apply_command(uint32_t h, const CsrCommand::Cmd& c, uint64_t t);
  void release(uint32_t h, uint32_t qpn, Qp& q, bool final);
  bool start_message(uint32_t h, uint32_t qpn, Qp& q, const Msg& m, bool final);
  void judge_wait(uint32_t h, uint32_t qpn, Qp& q, uint64_t t, bool fetched);
  void violation(uint32_t h, uint32_t qpn, Qp& q, const char* id, const std::string& text);
  Ring* find_ring(uint32_t h, uint64_t addr);
  void set_ring(uint32_t h, bool cq, uint32_t owner, uint64_t base, uint64_t bytes);
  static void refresh_busy(Host& hs, Qp& q);
  static bool waiting(const Qp& q);
  std::string us(uint64_t cycles) const;

  // wait clock
  static uint64_t paused_at(const Qp& q, uint64_t t);
  static void settle(Qp& q, uint64_t t);
  static void restart_clock(Host& hs, Qp& q, uint64_t t);
  void update_stall(Qp& q, uint64_t t, uint64_t rnr_until = 0);
  static uint64_t elapsed(const Qp& q, uint64_t now);
  static uint64_t fenced_wqe(const Qp& q, uint64_t* read_wqe = nullptr);

  SchedCheckConfig cfg_;
  Host host_[2];
  Stats st_;
};

}  // namespace srnic::verif::env
