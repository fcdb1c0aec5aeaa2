// HostMemory: sparse, byte-addressed 64-bit host memory (4 KiB pages allocated on first write,
// untouched memory reads as zero) with a bump allocator for DMA buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace srnic::sim {

class HostMemory {
 public:
  static constexpr uint64_t kPageBits = 12;
  static constexpr uint64_t kPageSize = 1ULL << kPageBits;
  static constexpr uint64_t kDefaultAllocBase = 0x100000000000ULL;

  explicit HostMemory(uint64_t alloc_base = kDefaultAllocBase);

  void write(uint64_t addr, const void* src, uint64_t len);
  void read(uint64_t addr, void* dst, uint64_t len) const;
  void fill(uint64_t addr, uint8_t value, uint64_t len);
  // Writes byte i of src[0..len) (len <= 64) only where bit i of mask is set (AXI wstrb).
  void write_masked(uint64_t addr, const uint8_t* src, uint64_t mask, unsigned len = 64);

  // Little-endian scalars.
  uint8_t read_u8(uint64_t addr) const;
  uint16_t read_u16(uint64_t addr) const;
  uint32_t read_u32(uint64_t addr) const;
  uint64_t read_u64(uint64_t addr) const;
  void write_u8(uint64_t addr, uint8_t v);
  void write_u16(uint64_t addr, uint16_t v);
  void write_u32(uint64_t addr, uint32_t v);
  void write_u64(uint64_t addr, uint64_t v);

  // Offset of the first byte where memory at addr differs from expected[0..len), or -1.
  int64_t first_difference(uint64_t addr, const void* expected, uint64_t len) const;
  // Offset of the first differing byte between a[a_addr..] and b[b_addr..] over len, or -1.
  static int64_t first_difference(const HostMemory& a, uint64_t a_addr, const HostMemory& b,
                                  uint64_t b_addr, uint64_t len);

  // Base addresses of all pages ever written, ascending.
  std::vector<uint64_t> touched_pages() const;
  // The 4 KiB of a touched page (page_addr page-aligned), or nullptr if never written.
  const uint8_t* page(uint64_t page_addr) const;
  // Calls f(page_addr, const uint8_t* data) for every touched page, ascending.
  template <class F>
  void for_each_page(F&& f) const {
    for (uint64_t p : touched_pages()) f(p, page(p));
  }
  size_t page_count() const { return pages_.size(); }

  // Bump allocator: returns an address aligned to `align` (a power of two), never reused.
  uint64_t alloc(uint64_t size, uint64_t align = 64);
  uint64_t alloc_base() const { return alloc_base_; }
  uint64_t alloc_next() const { return alloc_next_; }
  void reset_alloc() { alloc_next_ = alloc_base_; }

 private:
  uint8_t* page_rw(uint64_t pn);
  const uint8_t* page_ro(uint64_t pn) const;  // nullptr if absent

  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
  mutable uint64_t last_pn_ = ~0ULL;
  mutable uint8_t* last_page_ = nullptr;
  uint64_t alloc_base_, alloc_next_;
};

}  // namespace srnic::sim
