// PcapWriter implementation.
#include "srnic/sim/pcap_writer.hpp"

#include <cmath>
#include <stdexcept>

namespace srnic::sim {

namespace {
void put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}
void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
}  // namespace

PcapWriter::PcapWriter(const std::string& path, uint32_t snaplen) {
  if (!open(path, snaplen)) throw std::runtime_error("pcap: cannot create " + path);
}

bool PcapWriter::open(const std::string& path, uint32_t snaplen) {
  close();
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) return false;
  path_ = path;
  snaplen_ = snaplen;
  records_ = 0;
  uint8_t h[24];
  put32(h + 0, kMagicNs);
  put16(h + 4, 2);  // version 2.4
  put16(h + 6, 4);
  put32(h + 8, 0);   // thiszone
  put32(h + 12, 0);  // sigfigs
  put32(h + 16, snaplen_);
  put32(h + 20, kLinkTypeEthernet);
  std::fwrite(h, 1, sizeof h, f_);
  return true;
}

void PcapWriter::write(double t_ns, const uint8_t* data, size_t len) {
  if (!f_) return;
  const uint64_t ns = t_ns > 0 ? static_cast<uint64_t>(std::llround(t_ns)) : 0;
  const uint32_t incl = static_cast<uint32_t>(len < snaplen_ ? len : snaplen_);
  uint8_t h[16];
  put32(h + 0, static_cast<uint32_t>(ns / 1000000000ULL));
  put32(h + 4, static_cast<uint32_t>(ns % 1000000000ULL));
  put32(h + 8, incl);
  put32(h + 12, static_cast<uint32_t>(len));
  std::fwrite(h, 1, sizeof h, f_);
  std::fwrite(data, 1, incl, f_);
  ++records_;
}

bool PcapWriter::open_notes(const char* suffix, const char* header) {
  if (notes_) return true;
  if (!f_) return false;
  notes_path_ = path_ + suffix;
  notes_ = std::fopen(notes_path_.c_str(), "w");
  if (!notes_) return false;
  note(header);
  return true;
}

void PcapWriter::note(const char* line) {
  if (!notes_) return;
  std::fputs(line, notes_);
  std::fputc('\n', notes_);
}

void PcapWriter::flush() {
  if (f_) std::fflush(f_);
  if (notes_) std::fflush(notes_);
}

void PcapWriter::close() {
  if (f_) {
    std::fclose(f_);
    f_ = nullptr;
  }
  if (notes_) {
    std::fclose(notes_);
    notes_ = nullptr;
  }
}

}  // namespace srnic::sim
