// AETH syndrome tables: ACK credit counts and RNR NAK timer values.
#include "srnic/roce/aeth.hpp"

namespace srnic::roce {

namespace {
constexpr uint16_t kCredits[31] = {0,   1,   2,    3,    4,    6,    8,    12,   16,   24,   32,
                                   48,  64,  96,   128,  192,  256,  384,  512,  768,  1024, 1536,
                                   2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768};
// Microseconds per RNR timer code; code 0 is the longest (655.36 ms).
constexpr uint32_t kRnrUs[32] = {655360, 10,    20,    30,    40,    60,    80,    120,
                                 160,    240,   320,   480,   640,   960,   1280,  1920,
                                 2560,   3840,  5120,  7680,  10240, 15360, 20480, 30720,
                                 40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520};
}  // namespace

int32_t credit_count(uint8_t code) {
  code &= 0x1F;
  return code == kCreditInvalid ? -1 : kCredits[code];
}

uint8_t credit_code_for(uint32_t available) {
  uint8_t code = 0;
  for (uint8_t c = 0; c < 31; ++c)
    if (kCredits[c] <= available) code = c;
  return code;
}

uint32_t rnr_timer_us(uint8_t code) { return kRnrUs[code & 0x1F]; }

uint8_t rnr_code_for_us(uint32_t us) {
  for (uint8_t c = 1; c < 32; ++c)
    if (kRnrUs[c] >= us) return c;
  return 0;
}

uint64_t ack_timeout_ns(uint8_t timeout) {
  timeout &= 0x1F;
  return timeout == 0 ? 0 : 4096ull << timeout;
}

const char* nak_code_name(uint8_t code) {
  switch (code) {
    case 0: return "PSN_SEQUENCE_ERROR";
    case 1: return "INVALID_REQUEST";
    case 2: return "REMOTE_ACCESS_ERROR";
    case 3: return "REMOTE_OPERATIONAL_ERROR";
    case 4: return "INVALID_RD_REQUEST";
    default: return "RESERVED";
  }
}

}  // namespace srnic::roce
