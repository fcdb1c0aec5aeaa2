// Classic pcap file reading.
#include "srnic/roce/pcap.hpp"

#include <stdexcept>

namespace srnic::roce {

namespace {
uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
}  // namespace

PcapReader::PcapReader(const std::string& path) : in_(path, std::ios::binary) {
  if (!in_) throw std::runtime_error("cannot open " + path);
  uint8_t g[24];
  if (!in_.read(reinterpret_cast<char*>(g), sizeof g)) throw std::runtime_error(path + ": no pcap header");
  const uint32_t m = le32(g);
  const uint32_t ms = __builtin_bswap32(m);
  if (m == kPcapMagicUsec || m == kPcapMagicNsec) {
    nsec_ = m == kPcapMagicNsec;
  } else if (ms == kPcapMagicUsec || ms == kPcapMagicNsec) {
    swap_ = true;
    nsec_ = ms == kPcapMagicNsec;
  } else {
    throw std::runtime_error(path + ": not a classic pcap file (pcapng is not supported)");
  }
  linktype_ = u32(g + 20) & 0x0FFFFFFF;
}

uint32_t PcapReader::u32(const uint8_t* p) const {
  const uint32_t v = le32(p);
  return swap_ ? __builtin_bswap32(v) : v;
}

bool PcapReader::next(PcapRecord& rec) {
  uint8_t h[16];
  in_.read(reinterpret_cast<char*>(h), sizeof h);
  if (in_.gcount() == 0) return false;
  if (in_.gcount() != sizeof h) throw std::runtime_error("pcap: truncated record header");
  const uint64_t sec = u32(h), frac = u32(h + 4);
  const uint32_t incl = u32(h + 8);
  if (incl > (256u << 20)) throw std::runtime_error("pcap: implausible record length");
  rec.ts_ns = sec * 1000000000ull + (nsec_ ? frac : frac * 1000ull);
  rec.orig_len = u32(h + 12);
  rec.data.resize(incl);
  if (incl && !in_.read(reinterpret_cast<char*>(rec.data.data()), incl))
    throw std::runtime_error("pcap: truncated record data");
  return true;
}

}  // namespace srnic::roce
