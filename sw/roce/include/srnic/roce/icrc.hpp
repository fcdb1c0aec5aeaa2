// RoCEv2 invariant CRC (ICRC): CRC-32 over 8 bytes of 0xFF, the IP/UDP/BTH headers with the
// variant fields forced to all-ones, the extension headers, payload and pad.
#pragma once

#include <cstddef>
#include <cstdint>

namespace srnic::roce {

// Raw CRC register after 0xFFFFFFFF has absorbed 8 bytes of 0xFF (the pseudo-LRH).
constexpr uint32_t kIcrcSeed = 0xDEBB20E3;

// Bytes of the IPv4 (20), IPv6 (40), UDP (8) and BTH (12) headers, as seen by the ICRC.
constexpr size_t kIcrcMaskedIpv4Len = 20 + 8 + 12;
constexpr size_t kIcrcMaskedIpv6Len = 40 + 8 + 12;

// Forces the variant fields of IP+UDP+BTH (starting at the IP header) to all-ones, in place.
// `hdr` must hold kIcrcMaskedIpv4Len or kIcrcMaskedIpv6Len bytes.
void icrc_mask_headers(uint8_t* hdr, bool ipv6);

// ICRC of a RoCEv2 packet. `l3` points at the IP header (IPv4 without options, or IPv6;
// the version nibble selects which), `len` covers IP header through the pad bytes
// (the ICRC itself excluded). The value goes on the wire least-significant byte first.
uint32_t icrc_compute(const uint8_t* l3, size_t len);

// Writes/reads the ICRC in wire order (little-endian).
inline void icrc_store(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v >> 16);
  p[3] = uint8_t(v >> 24);
}
inline uint32_t icrc_load(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace srnic::roce
