// World: construction, reset and the per-cycle loop over all hosts (no allocations per cycle).
#include "srnic/sim/world.hpp"

#include <limits>
#include <stdexcept>

#include "verilated.h"
#ifndef SRNIC_SIM_TOP_HEADER
#define SRNIC_SIM_TOP_HEADER "Vsrnic_core.h"
#endif
#include SRNIC_SIM_TOP_HEADER
#ifdef SRNIC_SIM_TRACE
#include "verilated_fst_c.h"
#endif

namespace srnic::sim {

#define SRNIC_STR2(x) #x
#define SRNIC_STR(x) SRNIC_STR2(x)

bool World::trace_supported() {
#ifdef SRNIC_SIM_TRACE
  return true;
#else
  return false;
#endif
}

const char* World::model_name() { return SRNIC_STR(SRNIC_SIM_TOP); }

World::Host::Host(uint64_t alloc_base) : mem(alloc_base) {}
World::Host::~Host() = default;

World::World(const WorldConfig& cfg) : cfg_(cfg) {
  if (cfg.external_peer ? cfg.hosts < 1 : (cfg.hosts < 2 || cfg.hosts % 2))
    throw std::invalid_argument(cfg.external_peer ? "World: host count must be >= 1"
                                                  : "World: host count must be even and >= 2");
  if (!cfg.trace.empty() && !trace_supported())
    throw std::invalid_argument(std::string("World: FST tracing needs the debug build; ") +
                                model_name() + " is the fast build");
  clock_.mhz = cfg.clock_mhz;
  ctx_ = std::make_unique<VerilatedContext>();
  ctx_->randReset(2);
  ctx_->randSeed(static_cast<int>(SplitMix64::child(cfg.seed, 1) & 0x7fffffff));
  ctx_->timeunit(-12);
  ctx_->timeprecision(-12);
  if (cfg.count_rtl_errors) {
    ctx_->fatalOnError(false);
    ctx_->errorLimit(std::numeric_limits<int>::max());
  }
#ifdef SRNIC_SIM_TRACE
  if (!cfg.trace.empty()) ctx_->traceEverOn(true);
#endif
  if (!cfg.pcap.empty()) pcap_ = std::make_unique<PcapWriter>(cfg.pcap);
  const unsigned per_link = cfg.external_peer ? 1 : 2;
  for (unsigned i = 0; i < cfg.hosts / per_link; ++i) {
    LinkConfig lc = cfg.link;
    lc.seed = SplitMix64::child(cfg.seed, 0x20 + i);
    links_.push_back(std::make_unique<Link>(lc, pcap_.get()));
  }
  for (unsigned h = 0; h < cfg.hosts; ++h) {
    auto host = std::make_unique<Host>(HostMemory::kDefaultAllocBase + (uint64_t(h) << 40));
    const std::string name = "nic" + std::to_string(h);
    host->top = std::make_unique<Top>(ctx_.get(), name.c_str());
    PcieConfig pc = cfg.pcie;
    pc.seed = SplitMix64::child(cfg.seed, 0x10 + h);
    if (h != cfg.pcie_error_host) pc.errors = {};
    host->pcie = std::make_unique<PcieBfm<Top>>(host->mem, pc, clock_);
    host->eth = std::make_unique<EthMac<Top>>(*links_[h / per_link], int(h % per_link), cfg.eth, clock_);
    hosts_.push_back(std::move(host));
  }
#ifdef SRNIC_SIM_TRACE
  if (!cfg.trace.empty()) {
    tfp_.reset(new VerilatedFstC);
    for (auto& h : hosts_) h->top->trace(tfp_.get(), 99);
    tfp_->open(cfg.trace.c_str());
  }
#endif
  for (auto& h : hosts_) {
    h->top->clk = 0;
    h->top->rst = 1;
    h->pcie->drive(*h->top, 0);
    h->eth->drive(*h->top, 0);
    h->top->eval();
  }
  dump(0);
  // Reset: the NIC outputs are undefined until the first edges under rst, so the models only
  // drive (idle) during reset and start sampling afterwards.
  for (unsigned c = 0; c < cfg.reset_cycles; ++c) {
    for (auto& h : hosts_) {
      h->top->clk = 1;
      h->top->eval();
    }
    ++cycle_;
    dump(clock_.ns(cycle_));
    for (auto& h : hosts_) {
      h->top->clk = 0;
      h->pcie->drive(*h->top, cycle_);
      h->eth->drive(*h->top, cycle_);
      h->top->eval();
    }
    dump(clock_.ns(cycle_) + clock_.period_ns() / 2);
  }
  for (auto& h : hosts_) {
    h->top->rst = 0;
    h->top->eval();
  }
}

void World::FstDeleter::operator()(VerilatedFstC* p) const {
#ifdef SRNIC_SIM_TRACE
  delete p;
#else
  (void)p;
#endif
}

World::~World() {
  for (auto& h : hosts_) h->top->final();
#ifdef SRNIC_SIM_TRACE
  if (tfp_) tfp_->close();
#endif
  for (auto& l : links_) l->flush_pcap();
}

void World::dump(double t_ns) {
#ifdef SRNIC_SIM_TRACE
  if (tfp_) {
    ctx_->time(static_cast<uint64_t>(t_ns * 1000.0));
    if (t_ns >= cfg_.trace_from_ns && t_ns <= cfg_.trace_to_ns) tfp_->dump(ctx_->time());
  }
#else
  (void)t_ns;
#endif
}

void World::step() {
  const uint64_t c = cycle_;
  if (observer_) observer_(c);
  if (cfg_.external_peer)
    for (auto& l : links_) l->advance(1, clock_.ns(c));
  for (auto& h : hosts_) {
    h->pcie->sample(*h->top, c);
    h->eth->sample(*h->top, c);
  }
  // the time assertion reports print (ps); the trace dump sets it itself
  if (!tfp_) ctx_->time(static_cast<uint64_t>(clock_.ns(cycle_ + 1) * 1000.0));
  for (auto& h : hosts_) {
    h->top->clk = 1;
    h->top->eval();
  }
  ++cycle_;
  if (tfp_) dump(clock_.ns(cycle_));
  // The falling edge carries no logic, so it is applied together with the new inputs.
  for (auto& h : hosts_) {
    h->top->clk = 0;
    h->pcie->drive(*h->top, cycle_);
    h->eth->drive(*h->top, cycle_);
    h->top->eval();
  }
  if (tfp_) dump(clock_.ns(cycle_) + clock_.period_ns() / 2);
}

int World::rtl_errors() const { return ctx_->errorCount(); }

bool World::idle() const {
  for (const auto& h : hosts_)
    if (!h->pcie->idle() || !h->eth->idle()) return false;
  for (const auto& l : links_)
    if (l->in_flight(0) || l->in_flight(1)) return false;
  return true;
}

uint64_t World::violations() const {
  uint64_t n = 0;
  for (const auto& h : hosts_) n += h->pcie->violations() + h->eth->violations();
  return n;
}

}  // namespace srnic::sim
