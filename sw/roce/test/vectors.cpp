// Loader for the hex test vectors and the field-level descriptions of the generated ones.
#include "vectors.hpp"

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace srnic::roce::test {

Vector load_vector(const std::string& name) {
  const std::string path = std::string(ROCE_VECTOR_DIR) + "/" + name + ".hex";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  Vector v;
  v.name = name;
  std::string line;
  bool have_icrc = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("icrc", 0) == 0) {
      v.icrc = uint32_t(std::stoul(line.substr(4), nullptr, 16));
      have_icrc = true;
      continue;
    }
    std::string hex;
    for (char c : line)
      if (!std::isspace(static_cast<unsigned char>(c))) hex += c;
    if (hex.size() % 2) throw std::runtime_error(path + ": odd number of hex digits");
    for (size_t i = 0; i < hex.size(); i += 2) v.frame.push_back(uint8_t(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  if (!have_icrc) throw std::runtime_error(path + ": no icrc line");
  return v;
}

Packet vector_base() {
  Packet p;
  p.eth.dst = {0x02, 0, 0, 0, 0, 0x02};
  p.eth.src = {0x02, 0, 0, 0, 0, 0x01};
  p.ip4.tos = 0x02;
  p.ip4.id = 0;
  p.ip4.ttl = 64;
  p.ip4.src = 0x0A000001;
  p.ip4.dst = 0x0A000002;
  p.udp.sport = 0xC000;
  p.udp.checksum = 0;
  return p;
}

Packet rc_write_only_fields() {
  Packet p = vector_base();
  p.bth.opcode = op::kRcWriteOnly;
  p.bth.dest_qp = 0x12;
  p.bth.ack_req = true;
  p.bth.psn = 0x101;
  p.reth.va = 0x00007f0000001000ull;
  p.reth.rkey = 0x1234;
  p.reth.dma_len = 8;
  p.payload = {'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'};
  return p;
}

Packet rc_ack_fields() {
  Packet p = vector_base();
  p.bth.opcode = op::kRcAck;
  p.bth.dest_qp = 0x34;
  p.bth.psn = 0x100;
  p.aeth.syndrome = 0x1F;
  p.aeth.msn = 1;
  return p;
}

}  // namespace srnic::roce::test
