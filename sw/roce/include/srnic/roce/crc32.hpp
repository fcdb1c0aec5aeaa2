// CRC-32 (IEEE 802.3 / zlib): reflected polynomial 0xEDB88320, table driven.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace srnic::roce {

// The 256-entry lookup table for the reflected polynomial 0xEDB88320.
const std::array<uint32_t, 256>& crc32_table();

// Advances a raw CRC register over `len` bytes: no initial value, no final XOR.
uint32_t crc32_update(uint32_t reg, const uint8_t* data, size_t len);

// Standard CRC-32: register starts at 0xFFFFFFFF, result is XORed with 0xFFFFFFFF.
// crc32("123456789") == 0xCBF43926.
uint32_t crc32(const uint8_t* data, size_t len);

}  // namespace srnic::roce
