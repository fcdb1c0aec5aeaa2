// AXI4-Lite passive monitor for srnic_core's s_axil_* register port (the host is the master, the
// NIC the slave). Fed one signal snapshot per clock cycle, it checks handshake and payload
// stability on the five channels, that each response follows its request, the outstanding
// limit and the response codes, and publishes one AxiLiteTxn per accepted response.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "srnic/uvm/coverage.hpp"
#include "srnic/uvm/monitor.hpp"

namespace srnic::verif::agents {

// The s_axil_* values that the coming rising edge captures.
struct AxiLiteSignals {
  uint32_t awaddr = 0;
  bool awvalid = false, awready = false;
  uint32_t wdata = 0;
  uint8_t wstrb = 0;
  bool wvalid = false, wready = false;
  uint8_t bresp = 0;
  bool bvalid = false, bready = false;
  uint32_t araddr = 0;
  bool arvalid = false, arready = false;
  uint32_t rdata = 0;
  uint8_t rresp = 0;
  bool rvalid = false, rready = false;
};

struct AxiLiteTxn {
  bool write = false;
  uint32_t addr = 0;
  uint32_t data = 0;   // WDATA of a write, RDATA of a read
  uint8_t strb = 0;    // WSTRB of a write, 0 for a read
  uint8_t resp = 0;
  uint64_t cycle_req = 0;  // request complete: AR accepted, or the later of AW and W accepted
  uint64_t cycle_rsp = 0;  // B / R accepted
};

// A named address range [lo, hi] for the coverage bins.
struct AxiLiteRegion {
  std::string name;
  uint32_t lo = 0, hi = 0;
};

struct AxiLiteConfig {
  unsigned max_outstanding = 0;          // per direction; 0 = unlimited
  bool allow_outstanding_at_end = false; // requests without a response at check are no error
  // Coverage bins of cg_axil's "region" point; read by the constructor. Empty: one bin per
  // 4 KB page of the 64 KB space, page[0]..page[15].
  std::vector<AxiLiteRegion> regions;
  // SLVERR / DECERR bins of the "resp" point are goals (else ignore bins: srnic_csr answers
  // OKAY only). Read by the constructor.
  bool cover_error_resp = false;
};

struct AxiLiteStats {
  uint64_t reads = 0, writes = 0;  // completed (response accepted)
  uint64_t slverr = 0, decerr = 0;
  uint64_t max_outstanding_reads = 0, max_outstanding_writes = 0;
};

// Error ids: AXIL_STABLE (VALID dropped or payload changed before READY), AXIL_B (B presented
// before both the AW and the W of a write were accepted, or with no write outstanding), AXIL_R
// (R presented with no read outstanding), AXIL_OUTSTANDING (more than max_outstanding),
// AXIL_RESP (EXOKAY, which AXI4-Lite does not have), MON_PARTIAL (requests open at check).
class AxiLiteMonitor : public uvm::Monitor<AxiLiteTxn> {
 public:
  AxiLiteMonitor(uvm::Component& parent, std::string name, const AxiLiteConfig& cfg = {});

  // One call per clock cycle with the values the coming rising edge captures.
  void sample(const AxiLiteSignals& s);
  // With a source set, the phase hook sample() samples *s.
  void set_source(const AxiLiteSignals* s) { src_ = s; }

  AxiLiteConfig& config() { return cfg_; }
  const AxiLiteStats& stats() const { return stats_; }
  size_t outstanding_reads() const { return reads_.size(); }
  size_t outstanding_writes() const { return writes_.size() + std::max(aws_.size(), ws_.size()); }
  // cg_axil, sampled on each response: dir, region, resp; crosses dir x region, dir x resp.
  uvm::Covergroup& coverage() { return cg_; }

 protected:
  void sample() override;
  void check() override;

 private:
  struct Addr {
    uint32_t addr;
    uint64_t cycle;
  };
  struct Data {
    uint32_t data;
    uint8_t strb;
    uint64_t cycle;
  };

  void check_stable(const AxiLiteSignals& s);
  void respond(AxiLiteTxn& t, uint8_t resp);
  void pair_writes();

  AxiLiteConfig cfg_;
  const AxiLiteSignals* src_ = nullptr;
  AxiLiteStats stats_;
  uvm::Covergroup cg_;

  bool aw_wait_ = false, w_wait_ = false, b_wait_ = false, ar_wait_ = false, r_wait_ = false;
  AxiLiteSignals prev_;

  std::deque<Addr> aws_;          // AW accepted, W not yet
  std::deque<Data> ws_;           // W accepted, AW not yet
  std::deque<AxiLiteTxn> writes_; // AW and W accepted, waiting for B
  std::deque<AxiLiteTxn> reads_;  // AR accepted, waiting for R
};

}  // namespace srnic::verif::agents
