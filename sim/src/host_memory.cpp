// HostMemory implementation: page table with a one-entry cache of the last page touched.
#include "srnic/sim/host_memory.hpp"

#include <algorithm>
#include <cstring>

namespace srnic::sim {

namespace {
constexpr uint64_t kOffMask = HostMemory::kPageSize - 1;
}

HostMemory::HostMemory(uint64_t alloc_base) : alloc_base_(alloc_base), alloc_next_(alloc_base) {}

uint8_t* HostMemory::page_rw(uint64_t pn) {
  if (pn == last_pn_) return last_page_;
  auto& slot = pages_[pn];
  if (!slot) slot.reset(new uint8_t[kPageSize]());
  last_pn_ = pn;
  last_page_ = slot.get();
  return last_page_;
}

const uint8_t* HostMemory::page_ro(uint64_t pn) const {
  if (pn == last_pn_) return last_page_;
  auto it = pages_.find(pn);
  if (it == pages_.end()) return nullptr;
  last_pn_ = pn;
  last_page_ = it->second.get();
  return last_page_;
}

void HostMemory::write(uint64_t addr, const void* src, uint64_t len) {
  const auto* s = static_cast<const uint8_t*>(src);
  while (len) {
    const uint64_t off = addr & kOffMask;
    const uint64_t n = std::min(len, kPageSize - off);
    std::memcpy(page_rw(addr >> kPageBits) + off, s, n);
    addr += n;
    s += n;
    len -= n;
  }
}

void HostMemory::read(uint64_t addr, void* dst, uint64_t len) const {
  auto* d = static_cast<uint8_t*>(dst);
  while (len) {
    const uint64_t off = addr & kOffMask;
    const uint64_t n = std::min(len, kPageSize - off);
    const uint8_t* p = page_ro(addr >> kPageBits);
    if (p)
      std::memcpy(d, p + off, n);
    else
      std::memset(d, 0, n);
    addr += n;
    d += n;
    len -= n;
  }
}

void HostMemory::fill(uint64_t addr, uint8_t value, uint64_t len) {
  while (len) {
    const uint64_t off = addr & kOffMask;
    const uint64_t n = std::min(len, kPageSize - off);
    std::memset(page_rw(addr >> kPageBits) + off, value, n);
    addr += n;
    len -= n;
  }
}

void HostMemory::write_masked(uint64_t addr, const uint8_t* src, uint64_t mask, unsigned len) {
  if (len > 64) len = 64;
  mask &= len >= 64 ? ~0ULL : ((1ULL << len) - 1);
  if (mask == 0) return;
  const bool full = len == 64 ? mask == ~0ULL : mask == ((1ULL << len) - 1);
  if (full && ((addr & kOffMask) + len <= kPageSize)) {
    std::memcpy(page_rw(addr >> kPageBits) + (addr & kOffMask), src, len);
    return;
  }
  for (unsigned i = 0; i < len; ++i) {
    if (!((mask >> i) & 1)) continue;
    const uint64_t a = addr + i;
    page_rw(a >> kPageBits)[a & kOffMask] = src[i];
  }
}

uint8_t HostMemory::read_u8(uint64_t addr) const {
  uint8_t v;
  read(addr, &v, 1);
  return v;
}
uint16_t HostMemory::read_u16(uint64_t addr) const {
  uint8_t b[2];
  read(addr, b, 2);
  return static_cast<uint16_t>(b[0] | b[1] << 8);
}
uint32_t HostMemory::read_u32(uint64_t addr) const {
  uint8_t b[4];
  read(addr, b, 4);
  return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
         static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
}
uint64_t HostMemory::read_u64(uint64_t addr) const {
  return static_cast<uint64_t>(read_u32(addr)) | static_cast<uint64_t>(read_u32(addr + 4)) << 32;
}
void HostMemory::write_u8(uint64_t addr, uint8_t v) { write(addr, &v, 1); }
void HostMemory::write_u16(uint64_t addr, uint16_t v) {
  const uint8_t b[2] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8)};
  write(addr, b, 2);
}
void HostMemory::write_u32(uint64_t addr, uint32_t v) {
  const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                        static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
  write(addr, b, 4);
}
void HostMemory::write_u64(uint64_t addr, uint64_t v) {
  write_u32(addr, static_cast<uint32_t>(v));
  write_u32(addr + 4, static_cast<uint32_t>(v >> 32));
}

int64_t HostMemory::first_difference(uint64_t addr, const void* expected, uint64_t len) const {
  const auto* e = static_cast<const uint8_t*>(expected);
  static const uint8_t kZero[kPageSize] = {};
  uint64_t done = 0;
  while (done < len) {
    const uint64_t a = addr + done;
    const uint64_t off = a & kOffMask;
    const uint64_t n = std::min(len - done, kPageSize - off);
    const uint8_t* p = page_ro(a >> kPageBits);
    const uint8_t* m = p ? p + off : kZero;
    if (std::memcmp(m, e + done, n) != 0) {
      for (uint64_t i = 0; i < n; ++i)
        if (m[i] != e[done + i]) return static_cast<int64_t>(done + i);
    }
    done += n;
  }
  return -1;
}

int64_t HostMemory::first_difference(const HostMemory& a, uint64_t a_addr, const HostMemory& b,
                                     uint64_t b_addr, uint64_t len) {
  uint8_t buf[kPageSize];
  uint64_t done = 0;
  while (done < len) {
    // Chunk so that the a-side stays within one page; b is read into buf.
    const uint64_t n = std::min(len - done, kPageSize - ((a_addr + done) & kOffMask));
    b.read(b_addr + done, buf, n);
    const int64_t d = a.first_difference(a_addr + done, buf, n);
    if (d >= 0) return static_cast<int64_t>(done) + d;
    done += n;
  }
  return -1;
}

std::vector<uint64_t> HostMemory::touched_pages() const {
  std::vector<uint64_t> v;
  v.reserve(pages_.size());
  for (const auto& kv : pages_) v.push_back(kv.first << kPageBits);
  std::sort(v.begin(), v.end());
  return v;
}

const uint8_t* HostMemory::page(uint64_t page_addr) const { return page_ro(page_addr >> kPageBits); }

uint64_t HostMemory::alloc(uint64_t size, uint64_t align) {
  if (align == 0) align = 1;
  const uint64_t a = (alloc_next_ + align - 1) & ~(align - 1);
  alloc_next_ = a + size;
  return a;
}

}  // namespace srnic::sim
