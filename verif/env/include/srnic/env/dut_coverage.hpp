// Functional coverage sampled from what the NICs did, seen only on their interfaces: the frames
// each NIC sent and received (AXI-Stream TX/RX, decoded with the packet library), the NIC's DMA
// reads and writes of host memory (AXI4: WQE fetches, payload, CQEs as written), and the host's
// CSR accesses the NIC accepted (AXI4-Lite: QP and CQ commands, doorbells). Nothing here reads
// the traffic plan: the plan-sampled group cg_wr (EnvCoverage) is the stimulus, these groups are
// the DUT's behaviour.
//
//   cg_wire  per frame and NIC: direction x opcode x QP state (as the NIC has it, see below),
//            message position, AETH syndromes of ACK frames, PSN wraps of a QP's stream
//   cg_dma   per NIC DMA access: kind; payload ranges: source/destination alignment x 4 KB
//            crossing; WSTRB patterns of payload writes; ring wraps (SQ and RQ WQE fetch, CQE
//            writes, SQ doorbells whose WQEs run past the ring end) and CQ phase flips in the
//            CQEs written
//   cg_wire  also go-back-N on each NIC's output: a request sent again (PSN not beyond the last
//            one sent on the QP), a READ answered again, an ACK repeated for a duplicate, x opcode
//   cg_err   per error CQE the NIC wrote: queue x status; for the failing send WQE: status x
//            position in its doorbell batch x single/multi-packet message
//   cg_recovery per NIC at the end of a run, from its counters (abi.hpp CNT_*): the recovery
//            events it counted (resent packets, rewinds, local ACK timeouts, duplicate and
//            out-of-sequence requests, NAKs sent and received, RNR waits) x how many (1-15, 16+)
//
// QP state: tracked from the NIC's interfaces, not from the RTL's context RAM: the state of an
// accepted QP_MODIFY command (CMD_STATUS read back without error), then ERR from the first NIC
// output that shows the QP failed: an error CQE the NIC wrote for it, or a fatal NAK (invalid
// request, remote access, remote operational error) it sent for it. docs/decisions.md.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "srnic/agents/axi4.hpp"
#include "srnic/agents/axil.hpp"
#include "srnic/env/chip_taps.hpp"
#include "srnic/env/csr_command.hpp"
#include "srnic/agents/axis.hpp"
#include "srnic/uvm/uvm.hpp"

namespace srnic::verif::env {

class DutCoverage : public ChipTaps {
 public:
  DutCoverage(uvm::Component& parent, std::string name);

  uvm::Covergroup cg_wire, cg_dma, cg_err, cg_recovery;


  // QP state as observed (abi QPS_* values; 0 for a QP never commanded).
  uint8_t qp_state(uint32_t host, uint32_t qpn) const;
  uint64_t psn_wraps() const { return psn_wraps_; }
  uint64_t ring_wraps() const { return ring_wraps_; }
  uint64_t phase_flips() const { return phase_flips_; }

  // The NIC's counters (abi::NUM_COUNTERS, read at the end of the run): cg_recovery.
  void sample_counters(const std::vector<uint32_t>& counters);
  void end_of_run() override;  // closes the open payload-write ranges
  void report() override;

 private:
  enum RingKind : uint8_t { kSq, kRq, kCq };
  struct Ring {
    uint64_t base = 0, bytes = 0;
    uint32_t owner = 0;  // QPN (SQ, RQ) or CQN
    RingKind kind = kSq;
    uint32_t entry = 64;
    int64_t last_slot = -1;  // slot of the last entry read / written
    int last_phase = -1;     // CQ: owner bit of the last CQE written
  };
  struct Qp {
    uint8_t state = 0;
    uint32_t mtu = 1024;
    uint32_t dest_qpn = 0;
    uint16_t send_cqn = 0, recv_cqn = 0;
    uint16_t sq_pi = 0, rq_pi = 0;
    std::deque<std::pair<uint16_t, uint16_t>> sq_batches;  // doorbells: [first, end) WQE index
    std::map<uint32_t, std::pair<uint8_t, uint32_t>> sq_wqes;  // SQ slot -> (opcode, length) as fetched
  };
  struct Stream {  // PSNs of one direction of one QP as one NIC saw them
    uint32_t last = 0;
    bool seen = false;
  };
  struct Run {  // contiguous payload bytes written
    uint64_t start = 0, end = 0;
  };
  struct Host {
    CsrCommand cmd;  // register commands and their outcome
    std::map<uint32_t, Qp> qps;
    std::map<uint32_t, uint32_t> by_dest;  // dest QPN -> local QPN
    std::map<uint64_t, Ring> rings;        // base -> ring
    std::map<uint64_t, Stream> streams;    // (dir << 40 | is_request << 32 | dest QPN)
    std::map<uint64_t, Run> runs;          // open payload-write runs by end address
  };

  void on_frame(uint32_t h, bool received, const agents::AxisFrame& f) override;
  void on_read(uint32_t h, const agents::Axi4ReadTxn& t) override;
  void on_write(uint32_t h, const agents::Axi4WriteTxn& t) override;
  void on_csr(uint32_t h, const agents::AxiLiteTxn& t) override;
  void apply_command(uint32_t h, const CsrCommand::Cmd& c);
  void on_cqe(uint32_t h, Ring& cq, uint64_t slot, const uint8_t* cqe);
  void payload_range(int kind, uint64_t start, uint64_t len);
  void close_run(const Run& r);
  void ring_access(Ring& r, uint64_t first_slot, uint64_t slots);
  Ring* find_ring(uint32_t h, uint64_t addr);
  void set_ring(uint32_t h, RingKind kind, uint32_t owner, uint64_t base, uint64_t bytes, uint32_t entry);

  Host host_[2];
  uint64_t psn_wraps_ = 0, ring_wraps_ = 0, phase_flips_ = 0, sq_batches_across_end_ = 0;
};

}  // namespace srnic::verif::env
