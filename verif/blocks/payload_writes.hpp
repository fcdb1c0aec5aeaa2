// The AXI writes a payload placement makes (srnic_rx_place, and through it srnic_rx_engine), as
// the block benches expect them: len bytes to host address dst in 64-byte aligned beats, write
// strobes on the partial first and last beats, bursts split at 4 KiB boundaries.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>

namespace srnic::verif::blocks {

// on_burst(addr, beats) once per AW; then on_beat(addr, beat, strb, last, data) for each of its
// beats (beat: number within the payload; data holds the payload bytes under strb, 0 elsewhere).
template <class OnBurst, class OnBeat>
void payload_writes(uint64_t dst, const uint8_t* bytes, uint64_t len, OnBurst&& on_burst, OnBeat&& on_beat) {
  const uint64_t d0 = dst & 63;
  uint64_t addr = dst & ~63ull, left = (d0 + len + 63) / 64, beat = 0;
  while (left) {
    const uint64_t n = std::min<uint64_t>(64 - ((addr >> 6) & 63), left);
    on_burst(addr, n);
    for (uint64_t k = 0; k < n; ++k, ++beat) {
      uint64_t strb = 0;
      std::array<uint8_t, 64> data{};
      for (int b = 0; b < 64; ++b) {
        const int64_t idx = int64_t(beat * 64 + uint64_t(b)) - int64_t(d0);
        if (idx >= 0 && idx < int64_t(len)) {
          strb |= 1ull << b;
          data[size_t(b)] = bytes[size_t(idx)];
        }
      }
      on_beat(addr + k * 64, beat, strb, k == n - 1, data);
    }
    addr += n * 64;
    left -= n;
  }
}

}  // namespace srnic::verif::blocks
