// Classic pcap file reading and writing.
#include "srnic/roce/pcap.hpp"

#include <stdexcept>

namespace srnic::roce {

namespace {
uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
void put_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
void put_le16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
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

PcapWriter::PcapWriter(const std::string& path, bool nanosecond, uint32_t snaplen)
    : out_(path, std::ios::binary | std::ios::trunc), nsec_(nanosecond), snaplen_(snaplen) {
  if (!out_) throw std::runtime_error("cannot create " + path);
  uint8_t g[24] = {};
  put_le32(g, nsec_ ? kPcapMagicNsec : kPcapMagicUsec);
  put_le16(g + 4, 2);
  put_le16(g + 6, 4);
  put_le32(g + 16, snaplen_);
  put_le32(g + 20, kLinkTypeEthernet);
  out_.write(reinterpret_cast<const char*>(g), sizeof g);
}

void PcapWriter::write(uint64_t ts_ns, const uint8_t* data, size_t len) {
  const uint32_t incl = uint32_t(len < snaplen_ ? len : snaplen_);
  uint8_t h[16];
  put_le32(h, uint32_t(ts_ns / 1000000000ull));
  const uint64_t frac = ts_ns % 1000000000ull;
  put_le32(h + 4, uint32_t(nsec_ ? frac : frac / 1000));
  put_le32(h + 8, incl);
  put_le32(h + 12, uint32_t(len));
  out_.write(reinterpret_cast<const char*>(h), sizeof h);
  out_.write(reinterpret_cast<const char*>(data), incl);
}

}  // namespace srnic::roce
