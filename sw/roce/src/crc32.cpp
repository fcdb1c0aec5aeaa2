// CRC-32 (reflected 0xEDB88320), one table lookup per byte.
#include "srnic/roce/crc32.hpp"

namespace srnic::roce {

namespace {
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : (c >> 1);
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kTable = make_table();
}  // namespace

const std::array<uint32_t, 256>& crc32_table() { return kTable; }

uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t len) {
  for (size_t i = 0; i < len; ++i) reg = kTable[(reg ^ data[i]) & 0xFF] ^ (reg >> 8);
  return reg;
}

uint32_t crc32(const uint8_t* data, size_t len) {
  return crc32_update(0xFFFFFFFFu, data, len) ^ 0xFFFFFFFFu;
}

}  // namespace srnic::roce
