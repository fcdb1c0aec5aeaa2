// 24-bit packet sequence number arithmetic (serial-number compare as in the IBTA/rxe rules).
#pragma once

#include <cstdint>

namespace srnic::roce {

constexpr uint32_t kPsnMask = 0xFFFFFF;
constexpr uint32_t kPsnHalf = 0x800000;  // at most 2^23 PSNs may be outstanding

constexpr uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & kPsnMask; }

// Signed distance a - b in [-2^23, 2^23).
constexpr int32_t psn_diff(uint32_t a, uint32_t b) {
  return static_cast<int32_t>((a - b) << 8) / 256;
}
// -1, 0 or +1 as a is before, equal to or after b.
constexpr int psn_compare(uint32_t a, uint32_t b) {
  const int32_t d = psn_diff(a, b);
  return d < 0 ? -1 : (d > 0 ? 1 : 0);
}
constexpr bool psn_lt(uint32_t a, uint32_t b) { return psn_diff(a, b) < 0; }
constexpr bool psn_le(uint32_t a, uint32_t b) { return psn_diff(a, b) <= 0; }
constexpr bool psn_gt(uint32_t a, uint32_t b) { return psn_diff(a, b) > 0; }
constexpr bool psn_ge(uint32_t a, uint32_t b) { return psn_diff(a, b) >= 0; }

// PSNs consumed by an RDMA READ of `len` bytes: max(1, ceil(len / mtu)).
constexpr uint32_t read_psn_count(uint64_t len, uint32_t mtu) {
  return len == 0 ? 1u : static_cast<uint32_t>((len + mtu - 1) / mtu);
}

}  // namespace srnic::roce
