// Classic libpcap file reader (microsecond and nanosecond magics, either byte order). Written by
// hand so the protocol checker shares no code with the simulator's writer (libpcap).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace srnic::roce {

constexpr uint32_t kPcapMagicUsec = 0xA1B2C3D4;
constexpr uint32_t kPcapMagicNsec = 0xA1B23C4D;
constexpr uint32_t kLinkTypeEthernet = 1;

struct PcapRecord {
  uint64_t ts_ns = 0;
  uint32_t orig_len = 0;       // length on the wire (data may be shorter if the capture was cut)
  std::vector<uint8_t> data;
};

class PcapReader {
 public:
  // Opens the file and reads the global header; throws std::runtime_error on failure.
  explicit PcapReader(const std::string& path);
  // Reads the next record; false at end of file. Throws on a truncated record.
  bool next(PcapRecord& rec);
  bool nanosecond() const { return nsec_; }
  uint32_t linktype() const { return linktype_; }

 private:
  uint32_t u32(const uint8_t* p) const;
  std::ifstream in_;
  bool swap_ = false;
  bool nsec_ = false;
  uint32_t linktype_ = 0;
};

}  // namespace srnic::roce
