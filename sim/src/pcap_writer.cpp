// PcapWriter implementation: the records go through libpcap's savefile writer.
#include "srnic/sim/pcap_writer.hpp"

#include <pcap.h>

#include <cmath>
#include <stdexcept>

namespace srnic::sim {

PcapWriter::PcapWriter(const std::string& path, uint32_t snaplen) {
  if (!open(path, snaplen)) throw std::runtime_error("pcap: cannot create " + path);
}

bool PcapWriter::open(const std::string& path, uint32_t snaplen) {
  close();
  pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(snaplen), PCAP_TSTAMP_PRECISION_NANO);
  if (!pcap_) return false;
  dump_ = pcap_dump_open(pcap_, path.c_str());
  if (!dump_) {
    pcap_close(pcap_);
    pcap_ = nullptr;
    return false;
  }
  path_ = path;
  snaplen_ = snaplen;
  records_ = 0;
  return true;
}

void PcapWriter::write(double t_ns, const uint8_t* data, size_t len) {
  if (!dump_) return;
  const uint64_t ns = t_ns > 0 ? static_cast<uint64_t>(std::llround(t_ns)) : 0;
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(ns / 1000000000ULL);
  h.ts.tv_usec = static_cast<suseconds_t>(ns % 1000000000ULL);  // nanoseconds: the dump is nano-precision
  h.caplen = static_cast<uint32_t>(len < snaplen_ ? len : snaplen_);
  h.len = static_cast<uint32_t>(len);
  pcap_dump(reinterpret_cast<u_char*>(dump_), &h, data);
  ++records_;
}

bool PcapWriter::open_notes(const char* suffix, const char* header) {
  if (notes_) return true;
  if (!dump_) return false;
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
  if (dump_) pcap_dump_flush(dump_);
  if (notes_) std::fflush(notes_);
}

void PcapWriter::close() {
  if (dump_) {
    pcap_dump_close(dump_);
    dump_ = nullptr;
  }
  if (pcap_) {
    pcap_close(pcap_);
    pcap_ = nullptr;
  }
  if (notes_) {
    std::fclose(notes_);
    notes_ = nullptr;
  }
}

}  // namespace srnic::sim
