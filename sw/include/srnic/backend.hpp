// srnic/backend.hpp: the only path from the host library to a NIC (registers and host memory).
#pragma once

#include <cstddef>
#include <cstdint>

namespace srnic::sw {

// A Backend connects the library to one NIC instance: a real card behind PCIe/VFIO, the
// Verilator simulation, or a plain register-file stand-in for tests.
//
// Ordering contract: every mem_write issued before an mmio_write32 is visible to the NIC
// before that register write takes effect (a real backend issues a store fence before the
// doorbell), and a mem_read observes memory at least as new as every earlier mem_read.
class Backend {
 public:
  virtual ~Backend();

  // Posted 32-bit register write at byte offset `off` of the 64 KiB register window.
  virtual void mmio_write32(uint32_t off, uint32_t v) = 0;
  // Blocking 32-bit register read (a simulation advances time inside).
  virtual uint32_t mmio_read32(uint32_t off) = 0;
  // Zeroed, device-visible host memory; returns its host-physical address.
  virtual uint64_t dma_alloc(size_t bytes, size_t align) = 0;
  virtual void mem_write(uint64_t addr, const void* src, size_t n) = 0;
  virtual void mem_read(uint64_t addr, void* dst, size_t n) = 0;
  // Monotonic time in nanoseconds (simulated time in a simulation).
  virtual uint64_t now_ns() = 0;
};

}  // namespace srnic::sw
