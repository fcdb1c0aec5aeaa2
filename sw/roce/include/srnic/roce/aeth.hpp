// AETH syndrome helpers: ACK credit codes, RNR NAK timer codes, NAK codes, local ACK timeout.
#pragma once

#include <cstdint>

namespace srnic::roce {

enum class AckType : uint8_t { Ack = 0, RnrNak = 1, Reserved = 2, Nak = 3 };

enum class NakCode : uint8_t {
  PsnSequenceError = 0,
  InvalidRequest = 1,
  RemoteAccessError = 2,
  RemoteOperationalError = 3,
  InvalidRdRequest = 4,
};

// Credit code meaning "credit field invalid / unlimited" (what rxe always sends).
constexpr uint8_t kCreditInvalid = 0x1F;

constexpr AckType aeth_type(uint8_t syndrome) { return AckType((syndrome >> 5) & 3); }
constexpr uint8_t aeth_value(uint8_t syndrome) { return syndrome & 0x1F; }

constexpr uint8_t make_ack_syndrome(uint8_t credit_code) { return credit_code & 0x1F; }
constexpr uint8_t make_rnr_syndrome(uint8_t timer_code) { return 0x20 | (timer_code & 0x1F); }
constexpr uint8_t make_nak_syndrome(NakCode code) { return 0x60 | (uint8_t(code) & 0x1F); }

// Receive WQEs granted by an ACK credit code 0..0x1E; -1 for 0x1F (unlimited/invalid).
int32_t credit_count(uint8_t code);
// Largest credit code whose count does not exceed `available` (0..0x1E).
uint8_t credit_code_for(uint32_t available);

// RNR NAK timer code 0..31 in microseconds (code 0 = 655360 us, the longest).
uint32_t rnr_timer_us(uint8_t code);
// Smallest timer code whose delay is at least `us` (code 0 if none is long enough).
uint8_t rnr_code_for_us(uint32_t us);

// Local ACK timeout 4.096 us * 2^timeout in nanoseconds; 0 for timeout 0 (timer disabled).
uint64_t ack_timeout_ns(uint8_t timeout);

// "PSN_SEQUENCE_ERROR", ... or "RESERVED".
const char* nak_code_name(uint8_t code);

}  // namespace srnic::roce
