// PcieHost / PcieBfm: the host as seen from the NIC's PCIe attachment. An AXI4 slave on the
// NIC's m_axi_* (DMA to host memory through a Gen3 x16 link model with TLP overhead, read round
// trip, out-of-order completions and posted-write ordering), the host CPU's MMIO master on
// s_axil_*, and the MSI-X sink on irq_*. PcieHost is the bus-independent model; PcieBfm<Top>
// binds it to a Verilated top (or any struct with the same member names).
//
// Cycle protocol (one call each per core cycle, single-threaded):
//   drive(top, 0); eval
//   loop: sample(top, c)   all NIC outputs settled for cycle c; records the handshakes of the
//                          rising edge that ends cycle c (stamped at clock.ns(c + 1))
//         apply the rising edge (clk=1, eval, clk=0)
//         drive(top, c + 1) sets this model's inputs to the NIC for cycle c + 1 (now =
//                          clock.ns(c + 1)); then eval before the next sample
// Host-side calls (mmio_*, memory access) are made between cycles; they take effect at the time
// of the last drive().
//
// Error injection (PcieConfig::errors): chosen DMA bursts are answered with an AXI error
// response, as a root complex answers a request it cannot complete (unsupported request,
// completer abort, an IOMMU fault).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "srnic/sim/common.hpp"
#include "srnic/sim/host_memory.hpp"

namespace srnic::sim {

// One error-injection rule: which DMA bursts of one channel get an error response, with which code.
// A read burst in error returns every beat with RRESP = resp and RDATA all 0xFF bytes (what a
// root complex returns for an unsupported read), never host memory; a write burst in error is
// not applied to host memory (none of its beats, and the write observer sees none) and its B
// response carries BRESP = resp. Link traffic and timing are those of the same burst without
// the error, so a rule changes what the NIC receives, never when.
struct PcieErrorRule {
  enum class Channel { Read, Write };
  static constexpr uint8_t kSlvErr = 2, kDecErr = 3;

  Channel channel = Channel::Read;
  // Conditions: a burst is selected when every condition that is set holds (none set: every
  // burst of the channel).
  uint64_t lo = 0, hi = 0;  // set when lo < hi: the burst's bytes overlap [lo, hi)
  double rate = 0;          // set when > 0: with this probability (<= 1), drawn per burst
  uint64_t nth = 0;         // set when > 0: the nth burst of the channel (1-based, by AR / AW handshake)
  uint8_t resp = kSlvErr;   // the response code: kSlvErr or kDecErr

  // Text form: CHANNEL[:ITEM]... with CHANNEL read or write and the items, each at most once,
  //   addr=LO-HI   bursts overlapping [LO, HI) (LO < HI; decimal or 0x hex)
  //   rate=P       each burst with probability P, 0 < P <= 1
  //   nth=N        the N-th burst of the channel, N >= 1
  //   slverr | decerr   the response code (default slverr)
  // and at least one of addr, rate, nth. E.g. "read:nth=120", "write:addr=0x1000-0x2000:decerr",
  // "read:rate=0.001:slverr". False with a one-line reason in *why on bad text.
  static bool parse(const std::string& text, PcieErrorRule& out, std::string* why = nullptr);
  std::string to_string() const;  // canonical text form (parses back to the same rule)
};

// The error rules of one PCIe host model. A burst gets an error when any rule of its channel
// selects it; the first such rule (in order) gives the code. Each rule with a rate draws from
// its own stream (a child of PcieConfig::seed and the rule's index), once per burst of its
// channel whether its other conditions hold or not: its draw for the nth burst depends on n and
// the seed only, and no rule changes the jitter or reordering draws.
struct PcieErrorInjection {
  std::vector<PcieErrorRule> rules;
  bool empty() const { return rules.empty(); }
};

struct PcieConfig {
  double gtps_per_lane = 8.0;          // Gen3
  unsigned lanes = 16;
  double encoding = 128.0 / 130.0;
  double dllp_overhead = 0.02;         // fraction of link time taken by DLLPs (ACK, flow control)
  unsigned tlp_overhead = 24;          // bytes per TLP: framing, sequence, header, LCRC
  unsigned max_payload = 256;          // MWr and CplD payload limit (multiple of 64)
  unsigned max_read_request = 512;     // MRd size limit (multiple of 64)
  double read_latency_ns = 1100;       // MRd leaves the device -> its first CplD has arrived
  double read_jitter_min_ns = 0;       // per-MRd extra latency, uniform in [min, max]
  double read_jitter_max_ns = 50;
  double write_latency_ns = 400;       // MWr leaves the device -> applied to host memory
  unsigned max_outstanding_reads = 64; // AXI read bursts open at once (arready low beyond)
  unsigned max_posted_bytes = 16384;   // wready low while more payload waits for the link
  unsigned aw_queue_depth = 16;        // accepted AWs whose data is not complete
  double mmio_write_latency_ns = 200;  // host store -> write presented on s_axil
  double mmio_read_latency_ns = 900;   // host load round trip (half each way) + NIC response
  uint64_t seed = 1;                   // jitter, reordering and error-injection streams
  double latency_bucket_ns = 10;       // read-latency histogram resolution
  // Posted-write reordering, as a root complex may do: each MWr reaches memory after an extra
  // delay uniform in [0, write_reorder_ns]. AcrossIds keeps the writes of one AXI ID in order
  // (AXI and PCIe ordering for one stream); All lets any write pass any other (PCIe relaxed
  // ordering on every write: a stress mode, not a legal platform for a NIC that needs order).
  // A read and an MSI-X write still wait for every earlier write.
  enum class WriteOrder { InOrder, AcrossIds, All };
  WriteOrder write_order = WriteOrder::InOrder;
  double write_reorder_ns = 500;
  // DMA bursts answered with SLVERR or DECERR (none by default).
  PcieErrorInjection errors;

  // Raw link rate per direction in GB/s (= bytes/ns): 15.754 for Gen3 x16.
  double raw_gbytes_per_s() const { return gtps_per_lane * lanes * encoding / 8.0; }
  // Rate left for TLPs after DLLP overhead.
  double tlp_gbytes_per_s() const { return raw_gbytes_per_s() * (1.0 - dllp_overhead); }
};

// Upstream = device to host (MRd, MWr, MSI-X, MMIO read completions); downstream = host to
// device (CplD, MMIO writes and read requests). Wire bytes include the TLP overhead.
struct PcieStats {
  uint64_t up_tlps = 0, up_wire_bytes = 0, up_payload_bytes = 0;
  uint64_t down_tlps = 0, down_wire_bytes = 0, down_payload_bytes = 0;
  double up_busy_ns = 0, down_busy_ns = 0;
  uint64_t mrd_tlps = 0, mwr_tlps = 0, cpl_tlps = 0, msi_tlps = 0;
  // AXI bursts / bytes returned on R; bursts acknowledged on B / strobed bytes on W. Bursts in
  // error are included (their bytes crossed the link too).
  uint64_t read_bursts = 0, read_bytes = 0;
  uint64_t write_bursts = 0, write_bytes = 0;
  // Error injection: bursts selected for an error response (at their AR / AW handshake), and R
  // beats returned with an error.
  uint64_t rd_err_bursts = 0, wr_err_bursts = 0, rd_err_beats = 0;
  uint64_t mmio_writes = 0, mmio_reads = 0, irqs = 0;
  uint64_t w_backpressure_cycles = 0;          // cycles wready was low for posted credit
};

// NIC outputs seen by the host side.
struct PcieFromNic {
  uint8_t awid = 0, awlen = 0, awsize = 0, awburst = 0;
  uint64_t awaddr = 0;
  bool awvalid = false;
  uint8_t wdata[64] = {};
  uint64_t wstrb = 0;
  bool wlast = false, wvalid = false;
  bool bready = false;
  uint8_t arid = 0, arlen = 0, arsize = 0, arburst = 0;
  uint64_t araddr = 0;
  bool arvalid = false;
  bool rready = false;
  bool axil_awready = false, axil_wready = false;
  uint8_t axil_bresp = 0;
  bool axil_bvalid = false;
  bool axil_arready = false;
  uint32_t axil_rdata = 0;
  uint8_t axil_rresp = 0;
  bool axil_rvalid = false;
  bool irq_valid = false;
  uint16_t irq_vector = 0;
};

// Host-side outputs into the NIC.
struct PcieToNic {
  bool awready = false, wready = false;
  uint8_t bid = 0, bresp = 0;
  bool bvalid = false;
  bool arready = false;
  uint8_t rid = 0, rresp = 0;
  uint8_t rdata[64] = {};
  bool rlast = false, rvalid = false;
  uint16_t axil_awaddr = 0;
  bool axil_awvalid = false;
  uint32_t axil_wdata = 0;
  uint8_t axil_wstrb = 0;
  bool axil_wvalid = false, axil_bready = true;
  uint16_t axil_araddr = 0;
  bool axil_arvalid = false, axil_rready = true;
  bool irq_ready = true;
};

class PcieHost {
 public:
  using IrqHandler = std::function<void(uint16_t vector, double t_ns)>;
  // Sees every DMA write beat as it is applied to host memory (after the bytes are in place):
  // beat address (64-byte aligned), the 64 data bytes, the strobe, the time (ns).
  using WriteObserver = std::function<void(uint64_t addr, const uint8_t* data, uint64_t strb, double t_ns)>;

  // Throws std::invalid_argument on an error rule with lo > hi, a rate outside [0, 1] or a code
  // other than SLVERR and DECERR.
  explicit PcieHost(HostMemory& mem, const PcieConfig& cfg = {}, Clock clock = {});

  void sample_pins(const PcieFromNic& in, uint64_t cycle);
  const PcieToNic& drive_pins(uint64_t cycle);

  // Host CPU MMIO to the NIC's registers, kept in issue order. Writes are posted.
  void mmio_write(uint32_t addr, uint32_t data, uint8_t strb = 0xF);
  uint64_t mmio_read_issue(uint32_t addr);
  // True (and value set) once the read's completion has reached the host; a completed token is
  // consumed by the call that returns true.
  bool mmio_read_done(uint64_t token, uint32_t& value);
  size_t mmio_pending() const { return mmio_q_.size() + axil_b_pending_; }
  // MMIO writes the host made so far, and how many of them the NIC acknowledged (B response):
  // a write numbered n (its mmio_writes_posted() right after the call) has taken effect in the
  // NIC once mmio_writes_acked() >= n.
  uint64_t mmio_writes_posted() const { return mmio_writes_posted_; }
  uint64_t mmio_writes_acked() const { return mmio_writes_acked_; }

  // MSI-X: the handler runs when the interrupt write reaches the host, i.e. after every DMA
  // write the NIC issued before it.
  void set_irq_handler(IrqHandler h) { irq_handler_ = std::move(h); }
  void set_write_observer(WriteObserver w) { write_observer_ = std::move(w); }
  uint64_t irq_count(uint16_t vector) const;
  const std::map<uint16_t, uint64_t>& irq_counts() const { return irq_counts_; }

  // Replaces the error rules (PcieConfig::errors) from the next burst on, e.g. to arm them after
  // a set-up phase. Burst numbers (nth) still count from the start of the simulation; rate
  // streams restart. Throws std::invalid_argument on a bad rule, as the constructor does.
  void set_errors(const PcieErrorInjection& errors);
  void set_violation_handler(ViolationHandler h) { viol_.set_handler(std::move(h)); }
  uint64_t violations() const { return viol_.count(); }
  // Write-credit starvation (a host bridge that stops granting posted credit): while held,
  // AWREADY and WREADY stay low; the NIC's writes wait, reads and MMIO go on.
  void hold_writes(bool on) { hold_writes_ = on; }

  const PcieStats& stats() const { return stats_; }
  // AR handshake to first R handshake, ns.
  const Histogram& read_latency() const { return rd_lat_; }
  const PcieConfig& config() const { return cfg_; }
  const Clock& clock() const { return clock_; }
  HostMemory& memory() { return mem_; }
  double now_ns() const { return now_; }
  // No DMA or MMIO transaction in flight anywhere in the model.
  bool idle() const;

 private:
  struct ReadBurst {
    uint8_t id = 0;
    uint64_t base = 0;     // 64-byte aligned
    unsigned beats = 0, next = 0;
    double t_ar = 0;
    uint8_t resp = 0;           // RRESP of every beat (nonzero: an injected error, data all 0xFF)
    std::vector<double> ready;  // per beat: time its data has arrived (inf until then)
    std::vector<uint8_t> data;
  };
  struct MRd {
    double host_ready;  // when the host starts returning completions
    uint64_t order;
    uint64_t useq;      // upstream TLP sequence (for posted-write ordering)
    uint16_t slot;
    uint32_t offset, len;  // bytes within the burst
  };
  struct AwEntry {
    uint8_t id;
    uint64_t base;
    unsigned beats, assigned;
    uint8_t resp;  // BRESP (nonzero: an injected error, the burst is not applied)
  };
  struct WBeat {
    uint64_t addr;
    uint64_t strb;
    bool last;
    uint8_t data[64];
  };
  struct Posted {
    double dep, arrive;
    uint64_t useq;
    uint64_t first_beat;  // sequence number of its first beat in wbeats_
    unsigned nbeats, payload;
    bool msi;
    uint16_t vector;
    bool applied;
    bool discard;  // part of a write burst in error: reaches the host, changes nothing
  };
  struct Due {  // reordering: a posted entry and its arrival time
    double arrive;
    uint64_t seq;  // posted sequence number
  };
  struct BResp {
    uint8_t id, resp;
  };
  struct ErrorRule {
    PcieErrorRule rule;
    SplitMix64 rng;  // its rate draws
  };
  struct MmioOp {
    bool read;
    uint16_t addr;
    uint32_t data;
    uint8_t strb;
    double due;
    uint64_t token;
  };
  struct MmioResult {
    uint32_t value;
    double done;
  };

  double up_send(unsigned payload, double t);  // returns departure (end of serialisation)
  double down_send(unsigned payload, double t);
  void accept_ar(const PcieFromNic& in, uint64_t cycle, double t);
  void accept_aw(const PcieFromNic& in, uint64_t cycle);
  void assign_w_beats(uint64_t cycle, double t);
  void close_wr_tlp(double t, uint8_t id, bool discard);
  // Response code for the nth burst of a channel covering [lo, hi) (0: no error).
  static uint8_t injected_error(std::vector<ErrorRule>& rules, uint64_t n, uint64_t lo, uint64_t hi);
  double posted_arrival(double dep, int id);  // id < 0: MSI-X
  void push_posted(const Posted& p);
  void apply_posted(size_t idx);
  void retire_applied();
  void apply_due();
  void serve_completions();
  void select_r_burst();
  void check_addr(uint64_t cycle, const char* ch, uint64_t addr, unsigned len, unsigned size,
                  unsigned burst);

  HostMemory& mem_;
  PcieConfig cfg_;
  Clock clock_;
  double ns_per_byte_;
  SplitMix64 rng_;
  ViolationSink viol_;
  PcieStats stats_;
  Histogram rd_lat_;
  double now_ = 0;
  uint64_t cycle_ = 0;

  PcieToNic drv_;
  PcieFromNic prev_;
  bool ar_stall_ = false, aw_stall_ = false, w_stall_ = false;
  bool hold_writes_ = false;

  double up_free_ = 0, down_free_ = 0;
  uint64_t useq_ = 0;

  // reads
  std::vector<ReadBurst> slots_;
  std::vector<uint16_t> free_slots_;
  std::vector<uint16_t> order_;  // open bursts in AR order
  std::vector<MRd> heap_;        // min-heap on (host_ready, order)
  uint64_t mrd_order_ = 0;
  int r_active_ = -1;
  double r_scan_at_ = 0;  // no R burst can start before this time

  // writes
  Ring<AwEntry> aw_;
  Ring<WBeat> wbeats_;
  size_t w_unassigned_ = 0;  // beats at the tail of wbeats_ still waiting for their AW
  unsigned tlp_beats_ = 0;   // assigned beats of the TLP being formed
  uint64_t tlp_lo_ = ~0ULL, tlp_hi_ = 0;
  uint64_t beat_head_seq_ = 0;   // sequence number of wbeats_.front()
  uint64_t posted_beat_seq_ = 0; // sequence number of the first beat of the next posted TLP
  Ring<Posted> posted_;
  uint64_t posted_head_seq_ = 0; // sequence number of posted_.front()
  std::vector<Due> due_;         // reordering: min-heap of unapplied entries by arrival
  double id_arrive_[256] = {};   // reordering: last arrival per AXI ID
  double max_arrive_ = 0;
  size_t posted_departed_ = 0;  // entries at the head of posted_ already on the wire
  uint64_t posted_waiting_ = 0; // payload bytes not yet departed
  double last_posted_arrive_ = 0;
  Ring<BResp> bq_;

  // error injection
  std::vector<ErrorRule> rd_rules_, wr_rules_;
  uint64_t ar_count_ = 0, aw_count_ = 0;  // AR / AW handshakes so far

  // MMIO
  Ring<MmioOp> mmio_q_;
  bool mmio_busy_ = false, mmio_aw_done_ = false, mmio_w_done_ = false, mmio_ar_done_ = false;
  unsigned axil_b_pending_ = 0;
  double mmio_last_due_ = 0;
  uint64_t mmio_token_ = 0;
  uint64_t mmio_writes_posted_ = 0, mmio_writes_acked_ = 0;
  std::unordered_map<uint64_t, MmioResult> mmio_results_;

  IrqHandler irq_handler_;
  WriteObserver write_observer_;
  std::map<uint16_t, uint64_t> irq_counts_;
};

// PcieHost bound to a top with Verilated port names. Top members used: m_axi_* (aw, w, b, ar, r
// channels), s_axil_*, irq_valid, irq_vector, irq_ready; wide buses indexable as 16 words.
template <class Top>
class PcieBfm : public PcieHost {
 public:
  using PcieHost::PcieHost;

  void sample(const Top& t, uint64_t cycle) {
    PcieFromNic& s = in_;
    s.awid = t.m_axi_awid;
    s.awaddr = t.m_axi_awaddr;
    s.awlen = t.m_axi_awlen;
    s.awsize = t.m_axi_awsize;
    s.awburst = t.m_axi_awburst;
    s.awvalid = t.m_axi_awvalid;
    s.wvalid = t.m_axi_wvalid;
    if (s.wvalid) wide_to_bytes(t.m_axi_wdata, s.wdata);
    s.wstrb = t.m_axi_wstrb;
    s.wlast = t.m_axi_wlast;
    s.bready = t.m_axi_bready;
    s.arid = t.m_axi_arid;
    s.araddr = t.m_axi_araddr;
    s.arlen = t.m_axi_arlen;
    s.arsize = t.m_axi_arsize;
    s.arburst = t.m_axi_arburst;
    s.arvalid = t.m_axi_arvalid;
    s.rready = t.m_axi_rready;
    s.axil_awready = t.s_axil_awready;
    s.axil_wready = t.s_axil_wready;
    s.axil_bresp = t.s_axil_bresp;
    s.axil_bvalid = t.s_axil_bvalid;
    s.axil_arready = t.s_axil_arready;
    s.axil_rdata = t.s_axil_rdata;
    s.axil_rresp = t.s_axil_rresp;
    s.axil_rvalid = t.s_axil_rvalid;
    s.irq_valid = t.irq_valid;
    s.irq_vector = t.irq_vector;
    sample_pins(s, cycle);
  }

  void drive(Top& t, uint64_t cycle) {
    const PcieToNic& d = drive_pins(cycle);
    t.m_axi_awready = d.awready;
    t.m_axi_wready = d.wready;
    t.m_axi_bid = d.bid;
    t.m_axi_bresp = d.bresp;
    t.m_axi_bvalid = d.bvalid;
    t.m_axi_arready = d.arready;
    t.m_axi_rid = d.rid;
    if (d.rvalid) bytes_to_wide(d.rdata, t.m_axi_rdata);
    t.m_axi_rresp = d.rresp;
    t.m_axi_rlast = d.rlast;
    t.m_axi_rvalid = d.rvalid;
    t.s_axil_awaddr = d.axil_awaddr;
    t.s_axil_awvalid = d.axil_awvalid;
    t.s_axil_wdata = d.axil_wdata;
    t.s_axil_wstrb = d.axil_wstrb;
    t.s_axil_wvalid = d.axil_wvalid;
    t.s_axil_bready = d.axil_bready;
    t.s_axil_araddr = d.axil_araddr;
    t.s_axil_arvalid = d.axil_arvalid;
    t.s_axil_rready = d.axil_rready;
    t.irq_ready = d.irq_ready;
  }

 private:
  PcieFromNic in_;
};

}  // namespace srnic::sim
