// roce-pcap-check: checks every frame of a classic pcap against the RoCEv2 rules (decode,
// ICRC, PadCnt, per-flow PSN order, opcode sequences and payload lengths against the MTU).
// Prints a summary and exits 1 on any violation, 2 on a usage or file error.
#include <CLI/CLI.hpp>

#include <iostream>

#include "srnic/roce/checker.hpp"
#include "srnic/roce/pcap.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Check RoCEv2 frames in a pcap file"};
  std::string path;
  srnic::roce::CheckerConfig cfg;
  size_t listed = 10;
  app.add_option("pcap", path, "classic pcap file (Ethernet link type)")->required();
  app.add_option("--mtu", cfg.mtu, "path MTU in payload bytes")
      ->check(CLI::IsMember({256u, 512u, 1024u, 2048u, 4096u}))
      ->capture_default_str();
  app.add_flag("--allow-retransmit", cfg.allow_retransmit,
               "accept PSN rewinds (go-back-N retransmissions) and count them");
  app.add_option("--max-listed", listed, "violations to print")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    srnic::roce::PcapReader reader(path);
    if (reader.linktype() != srnic::roce::kLinkTypeEthernet) {
      std::cerr << path << ": link type " << reader.linktype() << " is not Ethernet\n";
      return 2;
    }
    cfg.keep_violations = listed;
    srnic::roce::ProtocolChecker checker(cfg);
    srnic::roce::PcapRecord rec;
    while (reader.next(rec)) checker.on_frame(rec.data.data(), rec.data.size());
    checker.print_summary(std::cout, listed);
    std::cout << (checker.violation_count() ? "FAIL" : "PASS") << "\n";
    return checker.violation_count() ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
