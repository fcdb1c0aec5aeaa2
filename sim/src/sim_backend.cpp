// SimBackend: host library backend over the World's PCIe model and host memory.
#include "sim_backend.hpp"

#include <cstdio>
#include <string>

namespace srnic::sim {

void SimBackend::mmio_write32(uint32_t off, uint32_t v) { w_.pcie(h_).mmio_write(off, v); }

uint32_t SimBackend::mmio_read32(uint32_t off) {
  PcieHost& p = w_.pcie(h_);
  const uint64_t token = p.mmio_read_issue(off);
  const uint64_t start = w_.cycle();
  uint32_t v = 0;
  while (!p.mmio_read_done(token, v)) {
    if (w_.cycle() - start > read_timeout_) {
      char b[160];
      std::snprintf(b, sizeof b, "host %zu: MMIO read of register 0x%04x got no completion within %llu cycles",
                    h_, off, static_cast<unsigned long long>(read_timeout_));
      throw MmioTimeout(b);
    }
    w_.step();
  }
  return v;
}

uint64_t SimBackend::dma_alloc(size_t bytes, size_t align) {
  return w_.memory(h_).alloc(bytes, align ? align : 64);
}

void SimBackend::mem_write(uint64_t addr, const void* src, size_t n) { w_.memory(h_).write(addr, src, n); }

void SimBackend::mem_read(uint64_t addr, void* dst, size_t n) { w_.memory(h_).read(addr, dst, n); }

uint64_t SimBackend::now_ns() { return static_cast<uint64_t>(w_.now_ns()); }

}  // namespace srnic::sim
