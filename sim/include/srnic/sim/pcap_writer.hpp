// PcapWriter: classic pcap file with nanosecond timestamps (magic 0xa1b23c4d), Ethernet link
// type, written by libpcap (pcap_dump; host byte order).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

struct pcap;
struct pcap_dumper;

namespace srnic::sim {

class PcapWriter {
 public:
  static constexpr uint32_t kMagicNs = 0xa1b23c4d;
  static constexpr uint32_t kLinkTypeEthernet = 1;

  PcapWriter() = default;
  // Opens path (throws std::runtime_error if it cannot be created).
  explicit PcapWriter(const std::string& path, uint32_t snaplen = 65535);
  ~PcapWriter() { close(); }
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  bool open(const std::string& path, uint32_t snaplen = 65535);
  bool is_open() const { return dump_ != nullptr; }
  // One frame (no FCS) captured at t_ns of simulated time; truncated to snaplen.
  void write(double t_ns, const uint8_t* data, size_t len);
  void flush();
  void close();
  uint64_t records() const { return records_; }
  const std::string& path() const { return path_; }

  // Side file of notes about the records (the Link's impairment log): path() + suffix, created
  // by the first open_notes with `header` as its first line; later calls keep that file. Shared
  // by every user of the writer, like the pcap. False if it cannot be created.
  bool open_notes(const char* suffix, const char* header);
  bool notes_open() const { return notes_ != nullptr; }
  std::string notes_path() const { return notes_ ? notes_path_ : std::string(); }
  // One line (the newline is added); ignored while no side file is open.
  void note(const char* line);

 private:
  pcap* pcap_ = nullptr;
  pcap_dumper* dump_ = nullptr;
  std::FILE* notes_ = nullptr;
  std::string path_, notes_path_;
  uint32_t snaplen_ = 65535;
  uint64_t records_ = 0;
};

}  // namespace srnic::sim
