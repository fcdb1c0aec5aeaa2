// RoCEv2 ICRC: masked IP/UDP/BTH headers plus the rest of the packet, seeded past 8 x 0xFF.
#include "srnic/roce/icrc.hpp"

#include <cstring>
#include <stdexcept>

#include "srnic/roce/crc32.hpp"

namespace srnic::roce {

void icrc_mask_headers(uint8_t* hdr, bool ipv6) {
  size_t udp;
  if (ipv6) {
    hdr[0] |= 0x0F;                     // traffic class high nibble
    hdr[1] = 0xFF;                      // traffic class low nibble + flow label
    hdr[2] = 0xFF;
    hdr[3] = 0xFF;
    hdr[7] = 0xFF;                      // hop limit
    udp = 40;
  } else {
    hdr[1] = 0xFF;                      // TOS
    hdr[8] = 0xFF;                      // TTL
    hdr[10] = 0xFF;                     // header checksum
    hdr[11] = 0xFF;
    udp = 20;
  }
  hdr[udp + 6] = 0xFF;                  // UDP checksum
  hdr[udp + 7] = 0xFF;
  hdr[udp + 8 + 4] = 0xFF;              // BTH resv8a (FECN, BECN, reserved)
}

uint32_t icrc_compute(const uint8_t* l3, size_t len) {
  const bool ipv6 = (l3[0] >> 4) == 6;
  const size_t hlen = ipv6 ? kIcrcMaskedIpv6Len : kIcrcMaskedIpv4Len;
  if (len < hlen) throw std::invalid_argument("icrc_compute: packet shorter than IP+UDP+BTH");
  uint8_t hdr[kIcrcMaskedIpv6Len];
  std::memcpy(hdr, l3, hlen);
  icrc_mask_headers(hdr, ipv6);
  uint32_t reg = crc32_update(kIcrcSeed, hdr, hlen);
  reg = crc32_update(reg, l3 + hlen, len - hlen);
  return reg ^ 0xFFFFFFFFu;
}

}  // namespace srnic::roce
