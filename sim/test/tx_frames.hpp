// Records the RoCE frames a host's NIC hands to its MAC, for the full-chip GoogleTests that
// check what left the NIC and when. Include after SRNIC_SIM_TOP_HEADER (it reads the top's
// transmit stream).
#pragma once

#include <cstdint>
#include <vector>

#include "srnic/sim/world.hpp"

namespace srnic::sim {

struct WireFrame {
  double t;        // simulated ns of the frame's first beat
  uint8_t opcode;  // BTH opcode
  uint32_t dqpn, psn;
};

// Frames host h's NIC hands to its MAC (the first beat, when taken); frames the MAC already
// holds are beyond the NIC. Only RoCEv2 frames (IPv4, UDP port 4791) are kept.
struct TxFrameLog {
  std::vector<WireFrame> frames;
  bool in_frame = false;

  // Installs the observer on the world (replacing any other).
  void watch(World& world, int h) {
    world.set_observer([this, &world, h](uint64_t) {
      const Top& t = world.top(size_t(h));
      if (!(t.m_axis_tx_tvalid && t.m_axis_tx_tready)) return;
      if (!in_frame) {
        uint8_t b[64];
        wide_to_bytes(t.m_axis_tx_tdata, b);
        auto be24 = [&](size_t o) { return uint32_t(b[o]) << 16 | uint32_t(b[o + 1]) << 8 | b[o + 2]; };
        if (b[12] == 0x08 && b[13] == 0x00 && b[23] == 17 && (uint32_t(b[36]) << 8 | b[37]) == 4791)
          frames.push_back({world.now_ns(), b[42], be24(47), be24(51)});
      }
      in_frame = !t.m_axis_tx_tlast;
    });
  }
};

}  // namespace srnic::sim
