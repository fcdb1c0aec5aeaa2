// chip_taps.hpp: a component that watches both NICs' interfaces: for each host h, the frames
// it sends and receives (AxisMonitor), its DMA reads and writes (Axi4Monitor) and its register
// accesses (AxiLiteMonitor) arrive at on_frame/on_read/on_write/on_csr. Shared by the monitors
// that judge the NICs from their interfaces only (DutCoverage, SchedChecker).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "srnic/agents/axi4.hpp"
#include "srnic/agents/axil.hpp"
#include "srnic/agents/axis.hpp"
#include "srnic/uvm/uvm.hpp"

namespace srnic::verif::env {

class ChipTaps : public uvm::Component {
 public:
  // Connect: host h's tx/rx AxisMonitor, Axi4Monitor read/write ports, AxiLiteMonitor.
  uvm::Subscriber<agents::AxisFrame>& tx(uint32_t h) { return *tx_[h]; }
  uvm::Subscriber<agents::AxisFrame>& rx(uint32_t h) { return *rx_[h]; }
  uvm::Subscriber<agents::Axi4ReadTxn>& dma_read(uint32_t h) { return *rd_[h]; }
  uvm::Subscriber<agents::Axi4WriteTxn>& dma_write(uint32_t h) { return *wr_[h]; }
  uvm::Subscriber<agents::AxiLiteTxn>& csr(uint32_t h) { return *csr_[h]; }

 protected:
  ChipTaps(uvm::Component& parent, std::string name) : Component(parent, std::move(name)) {
    for (uint32_t h = 0; h < 2; ++h) {
      tx_[h] = std::make_unique<uvm::SubscriberFn<agents::AxisFrame>>(
          [this, h](const agents::AxisFrame& f) { on_frame(h, false, f); });
      rx_[h] = std::make_unique<uvm::SubscriberFn<agents::AxisFrame>>(
          [this, h](const agents::AxisFrame& f) { on_frame(h, true, f); });
      rd_[h] = std::make_unique<uvm::SubscriberFn<agents::Axi4ReadTxn>>(
          [this, h](const agents::Axi4ReadTxn& t) { on_read(h, t); });
      wr_[h] = std::make_unique<uvm::SubscriberFn<agents::Axi4WriteTxn>>(
          [this, h](const agents::Axi4WriteTxn& t) { on_write(h, t); });
      csr_[h] = std::make_unique<uvm::SubscriberFn<agents::AxiLiteTxn>>(
          [this, h](const agents::AxiLiteTxn& t) { on_csr(h, t); });
    }
  }

  virtual void on_frame(uint32_t h, bool received, const agents::AxisFrame& f) = 0;
  virtual void on_read(uint32_t h, const agents::Axi4ReadTxn& t) = 0;
  virtual void on_write(uint32_t h, const agents::Axi4WriteTxn& t) = 0;
  virtual void on_csr(uint32_t h, const agents::AxiLiteTxn& t) = 0;

 private:
  std::unique_ptr<uvm::Subscriber<agents::AxisFrame>> tx_[2], rx_[2];
  std::unique_ptr<uvm::Subscriber<agents::Axi4ReadTxn>> rd_[2];
  std::unique_ptr<uvm::Subscriber<agents::Axi4WriteTxn>> wr_[2];
  std::unique_ptr<uvm::Subscriber<agents::AxiLiteTxn>> csr_[2];
};

}  // namespace srnic::verif::env
