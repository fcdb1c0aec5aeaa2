// memory_backend.hpp: in-process Backend for tests: flat host memory plus a stand-in for the
// NIC register file (ID/VERSION/CAPS/NIC_STATUS, RW registers, command staging and status),
// recording every register access and every executed command.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "srnic/abi.hpp"
#include "srnic/backend.hpp"

namespace srnic::sw::test {

class MemoryBackend : public Backend {
 public:
  struct Write {
    uint32_t off, value;
  };
  struct Command {
    uint8_t opcode;
    uint32_t index;
    std::array<uint8_t, 64> payload;
  };

  static constexpr uint64_t kMemBase = 0x100000000ull;  // above 4 GiB to catch 32-bit truncation
  // caps = REG_CAPS value: [7:0] log2 QPs, [15:8] log2 MRs, [23:16] log2 CQs.
  explicit MemoryBackend(uint32_t caps = 0x00040804, size_t mem_bytes = 16u << 20);

  void mmio_write32(uint32_t off, uint32_t v) override;
  uint32_t mmio_read32(uint32_t off) override;
  uint64_t dma_alloc(size_t bytes, size_t align) override;
  void mem_write(uint64_t addr, const void* src, size_t n) override;
  void mem_read(uint64_t addr, void* dst, size_t n) override;
  uint64_t now_ns() override { return time_ns_; }

  // Register file contents the NIC would present.
  uint32_t id = abi::ID_VALUE;
  uint32_t version = abi::VERSION_VALUE;
  uint32_t caps;
  uint32_t nic_status = 0;  // NIC_STATUS (set FATAL to play a NIC that hit a PCIe error)
  // Command behaviour: busy for this many CMD_STATUS reads after CMD; fail the next N commands.
  uint32_t cmd_busy_reads = 0;
  uint32_t fail_commands = 0;
  uint32_t status_reads = 0;  // CMD_STATUS reads so far

  std::vector<Write> writes;      // every mmio_write32, in order
  std::vector<uint32_t> reads;    // the offset of every mmio_read32, in order
  std::vector<Command> commands;  // every CMD write with its staged payload
  uint32_t reg(uint32_t off) const { return regs_[off / 4]; }
  // Values written to one register, in order.
  std::vector<uint32_t> writes_to(uint32_t off) const;
  void clear_log() {
    writes.clear();
    reads.clear();
    commands.clear();
  }

  uint8_t* host(uint64_t addr, size_t n);  // direct view of host memory
  template <class T>
  T load(uint64_t addr) {
    T v;
    std::memcpy(&v, host(addr, sizeof v), sizeof v);
    return v;
  }
  template <class T>
  void store(uint64_t addr, const T& v) {
    std::memcpy(host(addr, sizeof v), &v, sizeof v);
  }

 private:
  std::vector<uint32_t> regs_;
  std::vector<uint8_t> mem_;
  uint64_t brk_ = 0;
  uint64_t time_ns_ = 0;
  uint32_t busy_left_ = 0;
  uint32_t accepted_ = 0, status_err_ = 0;  // CMD_STATUS bits 31:16 and 11:1
};

}  // namespace srnic::sw::test
