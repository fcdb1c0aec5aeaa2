// Loader for the hex test vectors in test/vectors/ and shared frame helpers for the tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "srnic/roce/packet.hpp"

namespace srnic::roce::test {

struct Vector {
  std::string name;
  std::vector<uint8_t> frame;
  uint32_t icrc = 0;  // expected CRC-32 value (wire bytes are its little-endian form)
};

// Reads test/vectors/<name>.hex: '#' comments, one "icrc 0x..." line, the rest hex bytes.
Vector load_vector(const std::string& name);

// The RC WRITE_ONLY and ACK vectors as builder fields (10.0.0.1 -> 10.0.0.2, TOS 2, sport 0xC000).
Packet vector_base();
Packet rc_write_only_fields();
Packet rc_ack_fields();

}  // namespace srnic::roce::test
