// The host's register commands as the NIC took them, seen on the AXI-Lite bus: the payload
// written to CMD_DATA0.., the command word written to CMD, and its outcome read back from
// CMD_STATUS. Shared by the monitors that track QP and CQ state from the interfaces only.
#pragma once

#include <cstdint>
#include <cstring>

#include "srnic/abi.hpp"

namespace srnic::verif::env {

struct CsrCommand {
  uint8_t data[64] = {};     // CMD_DATA registers as written so far
  bool pending = false;      // a command was written and its status not yet read as done
  uint8_t op = 0;            // the pending (or last) command
  uint32_t index = 0;
  uint8_t payload[64] = {};  // its payload, as it was when the command was written

  // A register write at offset a: true when it was CMD_DATA or CMD (taken here).
  bool on_write(uint32_t a, uint32_t value, uint32_t strb) {
    if (a >= abi::REG_CMD_DATA0 && a < abi::REG_CMD_DATA0 + 64) {
      for (uint32_t i = 0; i < 4; ++i)
        if (strb >> i & 1) data[(a - abi::REG_CMD_DATA0) + i] = uint8_t(value >> (8 * i));
      return true;
    }
    if (a == abi::REG_CMD) {
      pending = true;
      op = uint8_t(value >> 24);
      index = value & 0xFFFFFF;
      std::memcpy(payload, data, sizeof payload);
      return true;
    }
    return false;
  }
  // A register read at offset a: true when it shows the pending command done without error
  // (the caller applies it now).
  bool on_read(uint32_t a, uint32_t value) {
    if (a != abi::REG_CMD_STATUS || !pending || (value & 1)) return false;
    pending = false;
    return !(value & 2);
  }
};

}  // namespace srnic::verif::env
