// The host's register commands as the NIC took them, seen on the AXI-Lite bus: the payload
// written to CMD_DATA0.., the command word written to CMD, and its outcome read back from
// CMD_STATUS. A host may write several commands before it reads CMD_STATUS (the NIC holds the
// writes of one while the previous executes); a read reports how many were accepted since the
// last read and whether one was refused (the NIC skips every command written after a refusal).
// Shared by the monitors that track QP and CQ state from the interfaces only.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "srnic/abi.hpp"

namespace srnic::verif::env {

struct CsrCommand {
  struct Cmd {
    uint8_t op = 0;
    uint32_t index = 0;
    uint8_t payload[64] = {};  // CMD_DATA as it was when the command was written
  };
  uint8_t data[64] = {};   // CMD_DATA registers as written so far
  std::deque<Cmd> unread;  // written, outcome not yet read
  std::deque<Cmd> taken;   // accepted, not yet seen done (CMD_STATUS busy)

  // A register write at offset a: true when it was CMD_DATA or CMD (taken here).
  bool on_write(uint32_t a, uint32_t value, uint32_t strb) {
    if (a >= abi::REG_CMD_DATA0 && a < abi::REG_CMD_DATA0 + 64) {
      for (uint32_t i = 0; i < 4; ++i)
        if (strb >> i & 1) data[(a - abi::REG_CMD_DATA0) + i] = uint8_t(value >> (8 * i));
      return true;
    }
    if (a == abi::REG_CMD) {
      Cmd c;
      c.op = uint8_t(value >> 24);
      c.index = value & 0xFFFFFF;
      std::memcpy(c.payload, data, sizeof c.payload);
      unread.push_back(c);
      return true;
    }
    return false;
  }
  // A register read at offset a: the commands it shows done and accepted, in the order written
  // (the caller applies them now).
  std::vector<Cmd> on_read(uint32_t a, uint32_t value) {
    std::vector<Cmd> done;
    if (a != abi::REG_CMD_STATUS) return done;
    for (uint32_t n = value >> 16; n && !unread.empty(); --n) {
      taken.push_back(unread.front());
      unread.pop_front();
    }
    if (value & 2) unread.clear();  // the refused command and the ones skipped after it
    if (!(value & 1)) {
      done.assign(taken.begin(), taken.end());
      taken.clear();
    }
    return done;
  }
};

}  // namespace srnic::verif::env
