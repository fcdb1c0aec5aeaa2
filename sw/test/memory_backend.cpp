// memory_backend.cpp: register-file stand-in and flat host memory for the host library tests.
#include "memory_backend.hpp"

#include <stdexcept>
#include <string>

namespace srnic::sw::test {

MemoryBackend::MemoryBackend(uint32_t caps_value, size_t mem_bytes)
    : caps(caps_value), regs_(0x10000 / 4, 0), mem_(mem_bytes, 0) {}

void MemoryBackend::mmio_write32(uint32_t off, uint32_t v) {
  if (off % 4 || off >= 0x10000) throw std::out_of_range("mmio_write32: bad offset " + std::to_string(off));
  writes.push_back({off, v});
  time_ns_ += 4;
  regs_[off / 4] = v;
  if (off != abi::REG_CMD) return;
  // Like the NIC: a command written after an unread refusal is skipped.
  if (status_err_) return;
  Command c{uint8_t(v >> 24), v & 0xFFFFFF, {}};
  for (int i = 0; i < abi::CMD_DATA_WORDS; ++i) {
    const uint32_t w = regs_[abi::reg_cmd_data(i) / 4];
    std::memcpy(c.payload.data() + 4 * i, &w, 4);
  }
  commands.push_back(c);
  // Like the NIC: refused for an unknown opcode or an index outside the table from CAPS.
  unsigned log = 0;
  switch (c.opcode) {
    case abi::CMD_QP_MODIFY: log = caps & 0xFF; break;
    case abi::CMD_MR_WRITE: log = (caps >> 8) & 0xFF; break;
    case abi::CMD_CQ_WRITE: log = (caps >> 16) & 0xFF; break;
    default: log = 0; break;
  }
  bool error = (c.opcode < 1 || c.opcode > 3) || c.index >= (1u << log);
  if (fail_commands) {
    --fail_commands;
    error = true;
  }
  if (error) {
    status_err_ = 0x102;  // error, reason 1
  } else {
    busy_left_ = cmd_busy_reads;
    if (accepted_ < 0xFFFF) ++accepted_;
  }
}

uint32_t MemoryBackend::mmio_read32(uint32_t off) {
  if (off % 4 || off >= 0x10000) throw std::out_of_range("mmio_read32: bad offset " + std::to_string(off));
  reads.push_back(off);
  time_ns_ += 100;
  switch (off) {
    case abi::REG_ID: return id;
    case abi::REG_VERSION: return version;
    case abi::REG_CAPS: return caps;
    case abi::REG_NIC_STATUS: return nic_status;
    case abi::REG_CMD_STATUS: {
      // busy, the first refusal and the accepted count; a read clears all but busy
      uint32_t st = accepted_ << 16 | status_err_;
      if (busy_left_) {
        --busy_left_;
        st |= 1u;
      }
      accepted_ = 0;
      status_err_ = 0;
      ++status_reads;
      return st;
    }
    default: return regs_[off / 4];
  }
}

uint64_t MemoryBackend::dma_alloc(size_t bytes, size_t align) {
  if (align == 0 || (align & (align - 1))) throw std::invalid_argument("dma_alloc: alignment not a power of two");
  const uint64_t start = (kMemBase + brk_ + align - 1) & ~uint64_t(align - 1);
  if (start + bytes > kMemBase + mem_.size()) throw std::bad_alloc();
  brk_ = start + bytes - kMemBase;
  return start;
}

uint8_t* MemoryBackend::host(uint64_t addr, size_t n) {
  if (addr < kMemBase || addr - kMemBase > mem_.size() || n > mem_.size() - (addr - kMemBase))
    throw std::out_of_range("host memory access out of range");
  return mem_.data() + (addr - kMemBase);
}

void MemoryBackend::mem_write(uint64_t addr, const void* src, size_t n) { std::memcpy(host(addr, n), src, n); }

void MemoryBackend::mem_read(uint64_t addr, void* dst, size_t n) { std::memcpy(dst, host(addr, n), n); }

std::vector<uint32_t> MemoryBackend::writes_to(uint32_t off) const {
  std::vector<uint32_t> v;
  for (const Write& w : writes)
    if (w.off == off) v.push_back(w.value);
  return v;
}

}  // namespace srnic::sw::test
