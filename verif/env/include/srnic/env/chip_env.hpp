// Full-chip UVM-lite environment: two Verilated srnic_core hosts (sim::World) with their PCIe
// and 100GE models; per host an agent that owns the host-library objects, a sequencer + driver
// that post work requests (the doorbell patterns), a CQ poller, and passive monitors on every
// interface of the core (AXI4 DMA, AXI4-Lite CSR, AXI-Stream TX/RX); a protocol monitor on the
// wire; a scoreboard that checks completions and every DMA write against the reference model
// while the test runs, and all memory at the end; the scheduler-invariant checker; functional
// coverage.
//
// Time: the phaser's edge hook steps the World; monitors sample through World's observer (so
// they also see the cycles that host-library calls spend inside MMIO reads during setup).
#pragma once

#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "srnic/agents/axi4.hpp"
#include "srnic/agents/axil.hpp"
#include "srnic/agents/axis.hpp"
#include "srnic/env/dut_coverage.hpp"
#include "srnic/env/sched_checker.hpp"
#include "srnic/env/traffic.hpp"
#include "srnic/roce/checker.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/uvm/uvm.hpp"
#include "srnic/verbs.hpp"
#include "srnic/verif/scoreboard.hpp"

namespace srnic::sim {
class SimBackend;
}

namespace srnic::verif::env {

// One doorbell's worth of posting: n WRs to one queue of one QP.
struct PostItem {
  uint32_t q = 0;
  uint32_t n = 0;
  bool recv = false;
};

struct CompletionItem {
  uint32_t host = 0;
  QueueKind kind = QueueKind::Send;
  sw::WorkCompletion wc;
};

struct EnvConfig {
  double pcie_latency_ns = 1100;
  double link_delay_ns = 100;
  // Cable length drawn from the test's seed (+cable_random): one-way delay 0..lossless_cable_ns()
  // of the plan's largest MTU, the longest cable the RX buffer's pause headroom covers.
  bool cable_random = false;
  uint32_t poll_cycles = 4;        // host software polls its CQs every N core cycles
  uint64_t quiet_cycles = 30000;   // relaxed queues: end after this long without completions
  bool expect_clean_rx = true;     // every RX drop/NAK counter must stay 0 at the end
  // impairments (drawn from the test's seed when on; +pcie_random / +pause_storm turn them on)
  bool pcie_random = false;        // PCIe read latency 0.5..3 us, jitter up to 1 us, write latency,
                                   // posted-write credit 2..16 KiB, 4..64 read tags, MMIO latency
  bool pause_storm = false;        // the link pauses each NIC's transmitter 20..60% of every 1..8 us
  double pause_period_ns = -1, pause_duty = -1;   // the storm's period and duty (< 0: drawn)
  // Lossy link (+lossy, or any of +loss=P +reorder=P +dup=P): per direction, random loss (drawn
  // 0.1..3%), reordering (0..1%, held back 0.2..3 us) and duplication (0..1%); an explicit
  // value applies to both directions and replaces the draw. Every QP gets a short local ACK
  // timeout (qp_timeout) and retry_cnt 7 (no limit). Fatal NAKs (invalid request, remote
  // access, remote operational error) are never lost: their responder QP is in ERR afterwards
  // and drops the resent request, so with unlimited retries the requester would retry forever.
  bool lossy = false;
  double loss = -1, reorder = -1, dup = -1;  // explicit probabilities; < 0: drawn
  // A lossy run must lose a request and resend it: host 0's third request frame is lost on
  // purpose besides the drawn losses, and TX_RETRANSMIT of host 0 must not stay 0 (cr_lossy)
  bool require_resend = false;
  uint8_t qp_timeout = 8;          // QP timeout attribute, 4.096 us * 2^T (lossy: 4 = 65.5 us)
  // In-flight cap per QP (TX_WINDOW, packets; 0 = no cap): < 0 leaves the NIC's default (128)
  // unless window_random draws one (lossy and impaired runs do; +tx_window=N sets it)
  int64_t tx_window = -1;
  bool window_random = false;
  SchedCheckConfig sched;          // scheduler invariants: the wait bound (+sched_wait_base_us=,
                                   // +sched_turn_gbps=)
};

class ChipEnv;

class PostDriver : public uvm::Driver<PostItem> {
 public:
  PostDriver(uvm::Component& parent, std::string name, ChipEnv& env, uint32_t host)
      : Driver(parent, std::move(name)), env_(env), h_(host) {}

 protected:
  bool drive(PostItem& item) override;

 private:
  ChipEnv& env_;
  uint32_t h_;
  std::vector<sw::SendWr> wr_;
  std::vector<sw::RecvWr> rwr_;
  std::vector<sw::Sge> sge_;
};

// Posting sequence of one host: receives first (as ring room allows), sends when the ring has
// room and the peer has posted the receive a SEND / WRITE_WITH_IMM will consume, in the plan's
// doorbell pattern with random gaps.
class TrafficSequence : public uvm::Sequence<PostItem> {
 public:
  TrafficSequence(ChipEnv& env, uint32_t host);
  uvm::Next next(PostItem& item) override;

 private:
  bool send_ready(uint32_t q) const;
  uint32_t send_run(uint32_t q, uint32_t max_n) const;
  ChipEnv& env_;
  uint32_t h_;
  uint64_t wait_until_ = 0;
  uint32_t burst_left_ = 0;
  uint32_t cursor_ = 0;
  uint32_t want_ = 0, want_q_ = 0;  // whole_batches: the batch waiting for room, and its QP
  uint64_t want_since_ = 0;
  std::vector<uint32_t> ready_;
  std::vector<std::vector<uint32_t>> consumers_before_;  // [qp][i]: receive consumers before send i
};

class HostAgent : public uvm::Component {
 public:
  HostAgent(uvm::Component& parent, std::string name, ChipEnv& env, uint32_t host);
  ~HostAgent() override;

  uvm::Sequencer<PostItem> seqr;
  PostDriver drv;
  agents::Axi4Monitor axi;
  agents::AxiLiteMonitor axil;
  agents::AxisMonitor tx, rx;
  uvm::AnalysisPort<CompletionItem> completions;

  // Host-library objects (after ChipEnv::setup_nics()).
  std::unique_ptr<sim::SimBackend> be;
  std::unique_ptr<sw::Device> dev;
  std::unique_ptr<sw::ProtectionDomain> pd;
  std::unique_ptr<sw::MemoryRegion> dst_mr;  // the destinations' MR when the plan splits them
  std::unique_ptr<sw::MemoryRegion> mr;
  std::unique_ptr<sw::ProtectionDomain> alien_pd;  // second PD with one MR (bad-PD WRs)
  std::unique_ptr<sw::MemoryRegion> alien_mr;
  std::unique_ptr<sw::CompletionQueue> scq, rcq;
  // Per plan QP: this host's end of its connection, while it is (null for a later incarnation of
  // a reset connection until its predecessor is reset, and after its own reset).
  std::vector<std::unique_ptr<sw::QueuePair>> qps;
  // Per plan QP, where this host's end stands (Knobs::qp_reset): Waiting, a later incarnation not
  // connected yet; Live, connected (the sequence posts to it); Reset, reset by the host (the rest
  // of its WRs is never posted).
  enum class End : uint8_t { Waiting, Live, Reset };
  std::vector<End> end;
  std::vector<uint32_t> nic_qpn;   // per plan QP: the NIC's QPN of this host's end (0 before it exists)
  std::vector<uint64_t> reset_at;  // per plan QP: cycle this host's reset of it returned (0: never reset)
  std::vector<size_t> next_send, next_recv;  // per QP: WRs posted so far
  // per QP: receive WRs the NIC knows of (their doorbell write acknowledged), and the posts
  // whose doorbell is still on its way: {receive WRs posted after it, its MMIO write number}
  std::vector<size_t> recv_visible;
  std::vector<std::deque<std::pair<size_t, uint64_t>>> recv_db;
  // Moves receive posts whose doorbell write the NIC acknowledged into recv_visible.
  void update_recv_visible(uint64_t acked);
  uint64_t recv_acked_seen = 0;
  std::vector<uint64_t> sends_done_at;       // per QP: cycle its last send WR was posted
  std::vector<uint32_t> sq_psn;
  uint64_t completions_seen = 0;
  std::vector<uint32_t> counters;           // NIC counters read at the end

  void connect() override;
  void tick() override;
  void check() override;

 private:
  ChipEnv& env_;
  uint32_t h_;
  sw::WorkCompletion wc_[32];
};

// Wire checker: every frame each host transmits, through roce::ProtocolChecker (ICRC, header
// fields, opcode sequences, per-QP PSN order, lengths, PadCnt).
class ProtocolMonitor : public uvm::Component {
 public:
  // allow_retransmit: go-back-N resends are expected (lossy link)
  ProtocolMonitor(uvm::Component& parent, std::string name, uint32_t mtu, bool allow_retransmit);
  uvm::SubscriberFn<agents::AxisFrame> from_host0, from_host1;
  uint64_t frames() const { return checker_.frames(); }
  const roce::ProtocolChecker& checker() const { return checker_; }
  void set_flow_mtu(uint64_t key, uint32_t mtu) { checker_.set_flow_mtu(key, mtu); }
  // An RC connection host 0 (ip_a, qpn_a) <-> host 1 (ip_b, qpn_b): responses are tied to requests.
  void connect_pair(uint32_t ip_a, uint32_t qpn_a, uint32_t ip_b, uint32_t qpn_b) {
    checker_.connect_ipv4(ip_a, qpn_a, ip_b, qpn_b);
  }
  // Forgets that connection (both QPs were reset): frames to them start afresh.
  void disconnect_pair(uint32_t ip_a, uint32_t qpn_a, uint32_t ip_b, uint32_t qpn_b);
  // A frame a test injects (stimulus, not checked; responses to it are accepted).
  void note_forged(const std::vector<uint8_t>& f) { checker_.note_forged(f.data(), f.size()); }
  void report() override;

 private:
  void on_frame(uint32_t host, const agents::AxisFrame& f);
  roce::ProtocolChecker checker_;
  size_t reported_ = 0;
  struct AckReqRun {
    uint32_t n = 0;      // request packets since the last AckReq
    uint32_t last = 0;   // PSN of the last request packet
    bool seen = false;
  };
  std::map<uint64_t, AckReqRun> since_ackreq_;  // (host << 32 | dest QPN)
};

// Live and final comparison against the reference model.
class TrafficScoreboard : public uvm::Component {
 public:
  TrafficScoreboard(uvm::Component& parent, std::string name, ChipEnv& env);
  void set_prediction(std::unique_ptr<Prediction> p);
  const Prediction* prediction() const { return pred_.get(); }

  void on_completion(const CompletionItem& c);
  void on_dma_write(uint32_t host, const agents::Axi4WriteTxn& t);
  // Every exact queue complete, and every relaxed queue whose QP ends in ERR (the model's
  // must_complete); the other relaxed queues are judged by quiet time.
  bool exact_done() const { return exact_pending_ == 0 && relaxed_pending_ == 0; }
  bool has_relaxed() const { return relaxed_queues_ > 0; }
  uint64_t last_completion_cycle() const { return last_cycle_; }
  uint64_t dma_bytes_checked() const { return dma_checked_; }

  void check() override;
  void report() override;

 private:
  ChipEnv& env_;
  std::unique_ptr<Prediction> pred_;
  std::unique_ptr<Scoreboard> sb_;
  std::map<std::tuple<uint32_t, uint32_t, QueueKind>, std::pair<uint64_t, uint64_t>> exact_;  // seen, want
  uint64_t exact_pending_ = 0;
  uint64_t relaxed_queues_ = 0;
  std::map<std::tuple<uint32_t, uint32_t, QueueKind>, bool> must_complete_;  // relaxed: settled
  uint64_t relaxed_pending_ = 0;  // must_complete_ entries not settled
  uint64_t last_cycle_ = 0;
  uint64_t dma_checked_ = 0;
  uint64_t data_errors_ = 0;
  uint64_t reset_cqes_ = 0;  // completions of WRs a reset discarded (RESET_CQE)
};

class EnvCoverage : public uvm::Component {
 public:
  EnvCoverage(uvm::Component& parent, std::string name);
  uvm::Covergroup cg_wr, cg_cqe, cg_rx, cg_doorbell;
  void sample_wr(const WrPlan& w, uint32_t mtu, size_t qps);
  void sample_cqe(const CompletionItem& c);
  void sample_rx(const std::vector<uint32_t>& counters);
  void sample_doorbell(bool recv, uint32_t n, Doorbell pattern, uint32_t posts_this_cycle);
  void report() override;
};

class ChipEnv : public uvm::Component {
 public:
  ChipEnv(uvm::Component& parent, std::string name, const TrafficPlan& plan, const EnvConfig& cfg);
  ~ChipEnv() override;

  const TrafficPlan& plan() const { return plan_; }
  const EnvConfig& config() const { return cfg_; }
  sim::World& world() { return *world_; }
  HostAgent& host(uint32_t h) { return *hosts_[h]; }
  TrafficScoreboard& scoreboard() { return sb_; }
  ProtocolMonitor& proto() { return proto_; }
  EnvCoverage& coverage() { return cov_; }
  DutCoverage& dut_coverage() { return dut_cov_; }
  SchedChecker& sched_checker() { return sched_; }
  const HostLayout (&layout() const)[2] { return layout_; }

  // Every covergroup of the env and its monitors.
  std::vector<uvm::Covergroup*> covergroups();
  // Steps the World one cycle (the phaser's edge hook).
  void step();
  // Called in the env's start_of_run before traffic starts (e.g. to inject frames); may step.
  std::function<void(ChipEnv&)> before_traffic;
  // Sends a frame into the link towards host `to` now (the far side must be quiet).
  void inject_frame(uint32_t to, std::vector<uint8_t> bytes);
  // Takes QP `qp` of host h through INIT/RTR/RTS towards peer_qpn on the other host (the
  // attributes every env QP uses; directed tests use it for their extra QPs).
  static void connect_qp(sw::QueuePair& qp, uint32_t h, uint32_t peer_qpn, uint32_t sq_psn, uint32_t rq_psn,
                         uint32_t mtu, unsigned access, uint8_t rnr_retry, uint8_t timeout = 8);
  // Runs the World for n cycles outside the run phase's tick (monitors still sample).
  void run_cycles(uint64_t n);
  // Expected final values of NIC counters that a test provokes on purpose (index -> value).
  std::map<int, uint32_t> expected_counters[2];
  // Host memory ranges [lo, hi) outside the plan that a directed test lets the NIC write.
  std::vector<std::pair<uint64_t, uint64_t>> extra_dma[2];
  // Counts doorbells rung within 16 cycles of each other (a burst); returns this one's rank.
  uint32_t note_post();

  void build() override;
  void connect() override;
  void start_of_run() override;
  void tick() override;
  void end_of_run() override;
  void check() override;
  void report() override;

 private:
  void setup_nics();
  void dump_plan() const;
  void connect_qps();
  void observe(uint64_t cycle);
  void check_rtl_errors();
  // Host-driven ERR (Knobs::host_err): moves each such QP of host 0 to ERR when its moment
  // comes; false while one is still to come.
  bool host_errs();
  // QP resets (Knobs::qp_reset): one per plan QP with a next incarnation, from the moment it is
  // due to the moment the next incarnation is connected.
  struct QpReset {
    uint32_t q = 0;                      // the plan QP reset; plan_.qps[q].next carries on
    uint64_t due = 0;                    // cycle the next end's reset comes (0: not known yet)
    uint32_t ends = 0;                   // ends reset so far
    uint64_t start[2] = {0, 0}, done[2] = {0, 0};  // cycles each host's reset began and returned
    uint32_t old_qpn[2] = {0, 0};        // each end's QPN before the reset
    uint32_t outstanding[2] = {0, 0};    // send WRs each end had outstanding when the first reset began
    uint64_t tx_mark[2] = {0, 0};        // frames each NIC had handed its MAC once both ends were reset
    uint64_t marked = 0, on_wire = 0;    // cycles tx_mark was taken and every such frame had left its MAC
    uint64_t late_frames = 0;            // frames of the old connection that reached an end being reset or reset
    bool connected = false;
  };
  // Resets every connection whose moment has come, connects their next incarnations once no
  // frame of the old ones can still arrive; false while one is still to come.
  bool qp_resets();
  void reset_end(QpReset& r, uint32_t h);  // host h resets its end of r.q (the library calls)
  void reset_done(QpReset& r, uint32_t h);  // ... and the calls have returned
  void reconnect(QpReset& r);
  bool drained(const QpReset& r) const;
  std::unique_ptr<sw::QueuePair> create_end(uint32_t h, uint32_t q);
  // Frames of reset QPs on the wire: host h's TX may start none towards its peer's old QPN after
  // its own end was reset (STALE_TX); frames reaching a reset QP of host h bound its RX_DROP_QP.
  void on_tx_frame(uint32_t h, const agents::AxisFrame& f);
  void on_rx_frame(uint32_t h, const agents::AxisFrame& f);
  // Lossy link (EnvConfig::lossy): draws the impairments into link, then loses frames.
  void draw_lossy(sim::LinkConfig& link);
  bool lose(int from, const sim::Frame& f);

  TrafficPlan plan_;
  EnvConfig cfg_;
  std::unique_ptr<sim::World> world_;
  std::vector<HostAgent*> hosts_;
  ProtocolMonitor& proto_;
  TrafficScoreboard sb_;
  EnvCoverage cov_;
  DutCoverage dut_cov_;
  SchedChecker sched_;
  std::unique_ptr<TrafficSequence> seq_[2];
  HostLayout layout_[2];
  uvm::SubscriberFn<CompletionItem> completion_sub_;
  uvm::SubscriberFn<agents::Axi4WriteTxn> dma_sub0_, dma_sub1_;
  std::vector<uint8_t> init0_, init1_, alien0_, alien1_;
  bool traffic_done_ = false;
  bool in_edge_ = false;
  int rtl_errors_ = 0;   // RTL assertion failures reported so far
  uint64_t last_post_cycle_ = 0;
  static constexpr uint64_t kWireQuietCycles = 3000;  // end of traffic: no frame sent for 10 us
  uint64_t tx_frames_seen_ = 0, last_tx_cycle_ = 0;   // frames both NICs sent, the cycle of the last
  uint32_t burst_posts_ = 0;
  std::vector<uint64_t> herr_due_;   // per plan QP: cycle of its host-driven ERR (0: not yet known)
  std::vector<bool> herr_done_;
  uint32_t host_err_qps_ = 0;
  std::vector<QpReset> resets_;
  uvm::SubscriberFn<agents::AxisFrame> tx_sub0_, tx_sub1_, rx_sub0_, rx_sub1_;
  struct ResetWatch {
    // peer QPN -> cycle from which host h's NIC may start no frame to it (its end was reset),
    // until a QP of host h is connected to that QPN again
    std::map<uint32_t, uint64_t> stale_dest;
    std::map<uint32_t, int> live_dest;  // peer QPN -> host h's connected QPs not reset that talk to it
    // QPN of a QP of host h being reset or reset -> cycle its reset returned (~0 until then) and
    // the reset (resets_), until a QP with that QPN is connected again: frames reaching it are dropped
    struct Dead {
      uint64_t done = ~0ull;
      size_t reset = 0;
    };
    std::map<uint32_t, Dead> dead;
    std::deque<std::pair<uint64_t, uint32_t>> recent;  // RoCE frames received lately: cycle, QPN
    uint64_t drops_lo = 0, drops_hi = 0;  // RX_DROP_QP the reset QPs account for: at least, at most
    uint64_t stale_tx = 0;                // STALE_TX reports
  } watch_[2];
  std::set<uint32_t> reset_qpns_[2];  // QPNs of every QP each host reset
  uint32_t forced_qpn_ = 0;           // EnvConfig::require_resend: where the frame lost on purpose went
  uint64_t stale_cycles_ = 0;      // a frame of a reset connection may arrive this long after leaving its MAC
  uint64_t rx_window_cycles_ = 0;  // ... and wait this long in the RX buffer (kRxBufferNs)
  uint32_t resets_busy_ = 0, resets_late_ = 0;  // resets with WRs outstanding on both ends; with
                                                // frames arriving after the first end's reset
  std::unique_ptr<uvm::Rng> loss_rng_;  // lossy link: loss draws, per frame sent
  double loss_[2] = {0, 0};             // loss probability per sending host
  bool plan_fails_qp() const;           // some QP of the plan fails on purpose
  // QPs the NIC still owes a retry (see tick()); first_only: stop at the first
  std::vector<std::string> unanswered_qps(bool first_only = false) const;
  double lossless_cable_ns_ = 0;        // the cable the RX buffer's pause headroom covers (build())
  bool forced_lost_ = false;            // EnvConfig::require_resend: the frame lost on purpose
  uint64_t requests_seen_ = 0;          // host 0's request frames so far (require_resend)
  uint64_t lost_[2] = {0, 0};
  agents::Axi4Signals axi_sig_;
  agents::AxiLiteSignals axil_sig_;
  agents::AxisSignals tx_sig_, rx_sig_;
};

// Base of the full-chip tests: draws the plan from `knobs` with the test's seed, builds the
// env, steps the World from the edge hook, sets the watchdog from the plan's size, and (in the
// coverage build, +cov_out=FILE) writes RTL and functional coverage at the end.
class ChipTest : public uvm::Test {
 public:
  ChipTest(uvm::Context& ctx, const Knobs& knobs, const EnvConfig& cfg = {});
  ChipEnv& env() { return *env_; }
  const TrafficPlan& plan() const { return plan_; }

 protected:
  void configure(uvm::Phaser& ph) override;
  void build() override;
  void start_of_run() override;
  void report() override;

  Knobs knobs_;
  EnvConfig cfg_;
  TrafficPlan plan_;
  ChipEnv* env_ = nullptr;
};

}  // namespace srnic::verif::env
