// AXI4 passive monitor for srnic_core's m_axi_* host-memory port (the NIC is the master, the
// host model the slave). Fed one signal snapshot per clock cycle, it checks the AXI4 handshake,
// burst and response-ordering rules (no write interleaving) and publishes whole read bursts when
// their last R beat is accepted and whole write bursts when their B is accepted.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "srnic/uvm/component.hpp"
#include "srnic/uvm/coverage.hpp"
#include "srnic/uvm/tlm.hpp"

namespace srnic::verif::agents {

constexpr unsigned kAxiDataBytes = 64;  // 512-bit data bus
constexpr unsigned kAxiDataWords = 16;  // 32-bit words of a data beat
constexpr unsigned kAxiIds = 16;        // 4-bit AxID

enum AxiBurst : uint8_t { kBurstFixed = 0, kBurstIncr = 1, kBurstWrap = 2 };
enum AxiResp : uint8_t { kRespOkay = 0, kRespExOkay = 1, kRespSlvErr = 2, kRespDecErr = 3 };

// The m_axi_* values that the coming rising edge captures. wdata / rdata point to 16
// little-endian 32-bit words (word 0 = bits 31:0, Verilator's VlWide layout) that stay valid
// during the sample() call; they may be null while the channel's VALID is low.
struct Axi4Signals {
  // write address (master -> slave)
  uint8_t awid = 0;
  uint64_t awaddr = 0;
  uint8_t awlen = 0, awsize = 0, awburst = 0;
  bool awvalid = false, awready = false;
  // write data (master -> slave)
  const uint32_t* wdata = nullptr;
  uint64_t wstrb = 0;
  bool wlast = false, wvalid = false, wready = false;
  // write response (slave -> master)
  uint8_t bid = 0, bresp = 0;
  bool bvalid = false, bready = false;
  // read address (master -> slave)
  uint8_t arid = 0;
  uint64_t araddr = 0;
  uint8_t arlen = 0, arsize = 0, arburst = 0;
  bool arvalid = false, arready = false;
  // read data (slave -> master)
  uint8_t rid = 0;
  const uint32_t* rdata = nullptr;
  uint8_t rresp = 0;
  bool rlast = false, rvalid = false, rready = false;
};

// A read burst. data holds every beat's 64 byte lanes as on the bus (beat k at data[64 k]); for
// a full-width INCR burst data[i] is the byte at (addr & ~63) + i.
struct Axi4ReadTxn {
  uint8_t id = 0;
  uint64_t addr = 0;
  uint8_t len = 0, size = 0, burst = 0;
  std::vector<uint8_t> data;
  uint8_t resp = kRespOkay;  // worst RRESP of the burst (highest code)
  uint64_t cycle_addr = 0;   // AR accepted
  uint64_t cycle_first = 0;  // first R beat accepted
  uint64_t cycle_last = 0;   // last R beat accepted
  unsigned beats() const { return len + 1u; }
};

// A write burst; data as in Axi4ReadTxn, strb[i] = 1 where WSTRB enabled byte lane i % 64 of
// beat i / 64.
struct Axi4WriteTxn {
  uint8_t id = 0;
  uint64_t addr = 0;
  uint8_t len = 0, size = 0, burst = 0;
  std::vector<uint8_t> data;
  std::vector<uint8_t> strb;
  uint8_t resp = kRespOkay;
  uint64_t cycle_addr = 0;        // AW accepted
  uint64_t cycle_first_data = 0;  // first W beat accepted (may precede cycle_addr)
  uint64_t cycle_last_data = 0;   // last W beat accepted
  uint64_t cycle_resp = 0;        // B accepted
  unsigned beats() const { return len + 1u; }
  size_t strobed_bytes() const;
};

struct Axi4Config {
  uint8_t allowed_sizes = 1u << 6;              // bit s: AxSIZE s allowed (default 64-byte beats)
  uint8_t allowed_bursts = 1u << kBurstIncr;    // bit b: AxBURST b allowed (default INCR)
  unsigned max_beats = 256;                     // AXI4 INCR limit (FIXED / WRAP: 16)
  bool require_aligned = false;                 // start address aligned to the beat size
  bool allow_outstanding_at_end = false;        // open bursts at check are not an error
  // ids that cg_axi expects per direction (id bins 0..n-1; the dir x id cross ignores the
  // other direction's extra ids). Read by the constructor.
  unsigned cover_read_ids = kAxiIds, cover_write_ids = kAxiIds;
};

struct Axi4Stats {
  uint64_t reads = 0, writes = 0;               // completed bursts
  uint64_t read_beats = 0, write_beats = 0;     // accepted R / W beats
  uint64_t read_bytes = 0;                      // bytes on the active lanes of read beats
  uint64_t write_bytes = 0;                     // strobed bytes of write beats
  uint64_t max_outstanding_reads = 0;           // ARs accepted whose last R is not yet accepted
  uint64_t max_outstanding_writes = 0;          // AWs accepted whose B is not yet accepted
  uint64_t read_slverr = 0, read_decerr = 0;    // completed bursts by worst response
  uint64_t write_slverr = 0, write_decerr = 0;
};

// Error ids: AXI_STABLE (VALID dropped or payload changed before READY), AXI_SIZE, AXI_BURST,
// AXI_LEN, AXI_WRAP, AXI_ALIGN, AXI_4K (address-phase rules), AXI_WLAST, AXI_WSTRB (write data),
// AXI_BID (B without a write of that id whose AW and W beats were all accepted earlier),
// AXI_RID (R without an earlier AR of that id), AXI_RLAST, MON_PARTIAL (open bursts at check).
class Axi4Monitor : public uvm::Component {
 public:
  Axi4Monitor(uvm::Component& parent, std::string name, const Axi4Config& cfg = {});

  uvm::AnalysisPort<Axi4ReadTxn> read_ap;
  uvm::AnalysisPort<Axi4WriteTxn> write_ap;

  // One call per clock cycle with the values the coming rising edge captures.
  void sample(const Axi4Signals& s);
  // With a source set, the phase hook sample() samples *s (filled e.g. in the settle hook).
  void set_source(const Axi4Signals* s) { src_ = s; }

  Axi4Config& config() { return cfg_; }
  const Axi4Stats& stats() const { return stats_; }
  size_t outstanding_reads() const { return n_reads_; }
  size_t outstanding_writes() const { return n_writes_; }
  // cg_axi, sampled on every accepted AR / AW: dir, id (0..max(cover_*_ids)-1), beats (1, 2-7,
  // 8, 9-63, 64+), same-direction outstanding depth after the accept (1, 2-3, 4-7, 8-15, 16-31,
  // 32+), crosses dir x id and dir x beats.
  uvm::Covergroup& coverage() { return cg_; }

 protected:
  void sample() override;
  void check() override;

 private:
  struct Read {
    Axi4ReadTxn txn;
    unsigned beat = 0;  // R beats accepted so far
  };
  struct Write {
    Axi4WriteTxn txn;
    unsigned beat = 0;  // W beats assigned so far
  };
  struct LeadBeat {
    uint8_t data[kAxiDataBytes];
    uint64_t strb;
    bool last;
    uint64_t cycle;
  };

  void check_stable(const Axi4Signals& s);
  void check_addr(const char* ch, uint8_t id, uint64_t addr, uint8_t len, uint8_t size,
                  uint8_t burst);
  void on_b(const Axi4Signals& s);
  void on_r(const Axi4Signals& s);
  void on_aw(const Axi4Signals& s);
  void on_w(const Axi4Signals& s);
  void on_ar(const Axi4Signals& s);
  // Adds one W beat to the oldest write short of data; moves it to the B queue when complete.
  void add_w_beat(const uint8_t* data, uint64_t strb, bool last, uint64_t cycle);
  void cover(int dir, uint8_t id, uint8_t len, uint64_t depth);

  Axi4Config cfg_;
  const Axi4Signals* src_ = nullptr;
  Axi4Stats stats_;
  uvm::Covergroup cg_;

  // Handshake state of the previous cycle (VALID && !READY) and the payload then.
  bool aw_wait_ = false, w_wait_ = false, b_wait_ = false, ar_wait_ = false, r_wait_ = false;
  Axi4Signals prev_;
  uint32_t prev_wdata_[kAxiDataWords] = {};
  uint32_t prev_rdata_[kAxiDataWords] = {};

  std::deque<Read> reads_[kAxiIds];     // per id, in AR order
  std::deque<Write> wdata_;             // AW accepted, W beats incomplete, in AW order
  std::deque<Write> bwait_[kAxiIds];    // AW and all W accepted, per id in AW order
  std::deque<LeadBeat> lead_;           // W beats accepted before their AW
  size_t n_reads_ = 0, n_writes_ = 0;
};

}  // namespace srnic::verif::agents
