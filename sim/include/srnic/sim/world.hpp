// World: N simulated hosts, each a Verilated srnic_core with its PCIe host model, 100G MAC and
// host memory, paired back to back through Links (host 2k <-> host 2k+1), clocked together from
// one VerilatedContext in the BFMs' sample / edge / drive order.
//
// The model class is SRNIC_SIM_TOP (default Vsrnic_core; the debug build sets Vsrnic_core_dbg
// and SRNIC_SIM_TRACE for FST waveforms).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "srnic/sim/eth_mac.hpp"
#include "srnic/sim/host_memory.hpp"
#include "srnic/sim/pcap_writer.hpp"
#include "srnic/sim/pcie_bfm.hpp"

#ifndef SRNIC_SIM_TOP
#define SRNIC_SIM_TOP Vsrnic_core
#endif

class VerilatedContext;
class VerilatedFstC;
class SRNIC_SIM_TOP;

namespace srnic::sim {

using Top = ::SRNIC_SIM_TOP;

struct WorldConfig {
  unsigned hosts = 2;          // even, >= 2 (>= 1 with external_peer)
  bool external_peer = false;  // link h side 1 is driven by the caller instead of host h ^ 1
  double clock_mhz = 300;
  PcieConfig pcie;             // seed is replaced per host from `seed`
  unsigned pcie_error_host = 0;  // the one host whose PCIe model applies pcie.errors
  EthConfig eth;
  LinkConfig link;             // seed is replaced per link from `seed`
  uint64_t seed = 1;           // Verilator randSeed, PCIe jitter and link loss streams
  std::string pcap;            // all links' frames, if set
  std::string trace;           // FST file (only when trace_supported())
  double trace_from_ns = 0;    // dump only from this simulated time on
  double trace_to_ns = 1e300;  // ... up to this one
  unsigned reset_cycles = 16;
  // RTL $error and failed assertions (debug build: --assert) are counted instead of
  // aborting at the first one (Verilator's default); rtl_errors() tells the caller.
  bool count_rtl_errors = false;
};

class World {
 public:
  struct Host {
    explicit Host(uint64_t alloc_base);
    ~Host();
    HostMemory mem;
    std::unique_ptr<Top> top;
    std::unique_ptr<PcieBfm<Top>> pcie;
    std::unique_ptr<EthMac<Top>> eth;
  };

  // Builds the models and applies reset (rst high for reset_cycles cycles).
  explicit World(const WorldConfig& cfg);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Advances every host by one core cycle. With external_peer it also declares side 1 of every
  // link advanced to the start of the cycle (pcap order), so frames the caller sends between
  // steps must carry t_sent_ns >= now_ns().
  void step();
  // Called at the start of every step(), when all inputs and outputs of every model have
  // settled for the coming rising edge (what the edge will capture): the place for passive
  // monitors. `cycle` is cycle() before the edge.
  using Observer = std::function<void(uint64_t cycle)>;
  void set_observer(Observer fn) { observer_ = std::move(fn); }
  // The Verilated model of host h (read-only use: monitors; drive only through the BFMs).
  Top& top(size_t h) { return *hosts_[h]->top; }
  // The models' Verilator context (coverage database, time).
  VerilatedContext& context() { return *ctx_; }
  uint64_t cycle() const { return cycle_; }
  double now_ns() const { return clock_.ns(cycle_); }
  // RTL $error and failed assertions so far (meaningful with count_rtl_errors).
  int rtl_errors() const;
  const Clock& clock() const { return clock_; }

  size_t num_hosts() const { return hosts_.size(); }
  HostMemory& memory(size_t h) { return hosts_[h]->mem; }
  PcieHost& pcie(size_t h) { return *hosts_[h]->pcie; }
  EthPort& eth(size_t h) { return *hosts_[h]->eth; }
  Link& link(size_t i) { return *links_[i]; }
  size_t num_links() const { return links_.size(); }

  // No DMA, MMIO or frame in flight anywhere (the NICs themselves may still be busy).
  bool idle() const;
  // PCIe and Ethernet bus-rule violations reported by the models.
  uint64_t violations() const;
  // True in the debug build (FST tracing compiled in).
  static bool trace_supported();
  static const char* model_name();

 private:
  void dump(double t_ns);

  WorldConfig cfg_;
  Clock clock_;
  uint64_t cycle_ = 0;
  Observer observer_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<PcapWriter> pcap_;  // before links_: links write to it until destroyed
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<Host>> hosts_;
  struct FstDeleter {
    void operator()(VerilatedFstC* p) const;
  };
  std::unique_ptr<VerilatedFstC, FstDeleter> tfp_;
};

}  // namespace srnic::sim
