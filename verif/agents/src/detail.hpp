// Helpers shared by the monitors: printf-style formatting for error texts (built only when a
// message is issued, never on the per-cycle path) and the 512-bit beat as bytes.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace srnic::verif::agents {

__attribute__((format(printf, 1, 2))) inline std::string strf(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return std::string();
  return std::string(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

// 16 little-endian 32-bit words (word 0 = bits 31:0) -> 64 bytes; zeros for a null pointer.
inline void words_to_bytes(const uint32_t* w, uint8_t* out) {
  if (w == nullptr) {
    std::memset(out, 0, 64);
    return;
  }
  for (unsigned i = 0; i < 16; ++i) {
    out[4 * i + 0] = static_cast<uint8_t>(w[i]);
    out[4 * i + 1] = static_cast<uint8_t>(w[i] >> 8);
    out[4 * i + 2] = static_cast<uint8_t>(w[i] >> 16);
    out[4 * i + 3] = static_cast<uint8_t>(w[i] >> 24);
  }
}

}  // namespace srnic::verif::agents
