// SimBackend: the host library's Backend for one host of a World. Register writes are posted
// through the PCIe model; a register read advances the whole World until its completion
// reaches the host; DMA memory comes from the host's HostMemory; time is simulated time.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "srnic/backend.hpp"
#include "srnic/sim/world.hpp"

namespace srnic::sim {

// Thrown when an MMIO read gets no completion within the read timeout.
class MmioTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SimBackend : public sw::Backend {
 public:
  SimBackend(World& world, size_t host, uint64_t read_timeout_cycles = 1000000)
      : w_(world), h_(host), read_timeout_(read_timeout_cycles) {}

  void mmio_write32(uint32_t off, uint32_t v) override;
  uint32_t mmio_read32(uint32_t off) override;
  uint64_t dma_alloc(size_t bytes, size_t align) override;
  void mem_write(uint64_t addr, const void* src, size_t n) override;
  void mem_read(uint64_t addr, void* dst, size_t n) override;
  uint64_t now_ns() override;

  size_t host() const { return h_; }

 private:
  World& w_;
  size_t h_;
  uint64_t read_timeout_;
};

}  // namespace srnic::sim
