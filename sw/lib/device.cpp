// device.cpp: Device (open, registers, commands, resource numbering) and memory registration.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "srnic/verbs.hpp"

namespace srnic::sw {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the ABI structs are written to host memory as-is and must be little-endian");

Backend::~Backend() = default;

namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08" PRIX32, v);
  return buf;
}

const char* cmd_name(uint8_t op) {
  switch (op) {
    case abi::CMD_QP_MODIFY: return "QP_MODIFY";
    case abi::CMD_MR_WRITE: return "MR_WRITE";
    case abi::CMD_CQ_WRITE: return "CQ_WRITE";
    default: return "unknown";
  }
}

}  // namespace

Device::Device(Backend& backend) : be_(backend) {
  const uint32_t id = be_.mmio_read32(abi::REG_ID);
  if (id != abi::ID_VALUE)
    throw Error(ENODEV, "srnic: register ID reads " + hex32(id) + ", expected " +
                            hex32(abi::ID_VALUE) + " (\"SRNC\"): not an srnic register window");
  const uint32_t version = be_.mmio_read32(abi::REG_VERSION);
  if ((version >> 16) != (abi::VERSION_VALUE >> 16))
    throw Error(ENODEV, "srnic: ABI version " + hex32(version) + " is incompatible with " +
                            hex32(abi::VERSION_VALUE) + " (major versions differ)");
  const uint32_t caps = be_.mmio_read32(abi::REG_CAPS);
  caps_.version = version;
  caps_.log_qps = caps & 0xFF;
  caps_.log_mrs = (caps >> 8) & 0xFF;
  caps_.log_cqs = (caps >> 16) & 0xFF;
  // Doorbells carry 16-bit QPN/CQN fields; keys carry a 24-bit MR index.
  if (caps_.log_qps > 16 || caps_.log_cqs > 16 || caps_.log_mrs > 24)
    throw Error(ENODEV, "srnic: CAPS " + hex32(caps) + " exceeds the ABI limits (QPs/CQs 2^16, MRs 2^24)");
  caps_.max_qp = 1u << caps_.log_qps;
  caps_.max_mr = 1u << caps_.log_mrs;
  caps_.max_cq = 1u << caps_.log_cqs;
  mr_used_.assign(caps_.max_mr, 0);
  mr_last_tag_.assign(caps_.max_mr, 0);
  cq_used_.assign(caps_.max_cq, 0);
  qp_used_.assign(caps_.max_qp, 0);
  qps_.assign(caps_.max_qp, nullptr);
  mac_ = uint64_t(be_.mmio_read32(abi::REG_MAC_HI) & 0xFFFF) << 32 | be_.mmio_read32(abi::REG_MAC_LO);
  // a refusal or an accepted count left by an earlier user of the NIC would be taken for ours
  be_.mmio_read32(abi::REG_CMD_STATUS);
  ipv4_ = be_.mmio_read32(abi::REG_IPV4);
  // Memory regions an earlier user left registered would accept our keys: PD handles and key
  // tags start again from the same numbers. Invalidate every entry before handing out any.
  {
    CommandBatch scrub(*this);
    const abi::MrEntry none{};  // valid = 0
    for (uint32_t i = 0; i < caps_.max_mr; ++i) execute(abi::CMD_MR_WRITE, i, &none, sizeof none);
    scrub.finish();
  }
}

Device::~Device() = default;

void Device::set_mac(uint64_t mac) {
  if (mac >> 48) throw Error(EINVAL, "srnic: MAC value wider than 48 bits");
  be_.mmio_write32(abi::REG_MAC_LO, uint32_t(mac));
  be_.mmio_write32(abi::REG_MAC_HI, uint32_t(mac >> 32));
  mac_ = mac;
}

void Device::set_ipv4(uint32_t ip) {
  be_.mmio_write32(abi::REG_IPV4, ip);
  ipv4_ = ip;
}

void Device::set_sched_burst(uint32_t bytes) {
  if (bytes == 0) throw Error(EINVAL, "srnic: scheduler burst must be nonzero");
  be_.mmio_write32(abi::REG_SCHED_BURST, bytes);
}

void Device::set_tx_window(uint32_t packets) {
  if (packets > (1u << 22)) throw Error(EINVAL, "srnic: TX_WINDOW must be at most 2^22 packets");
  be_.mmio_write32(abi::REG_TX_WINDOW, packets);
}

void Device::set_sched_wqes(uint32_t n) {
  if (n < 1 || n > 8) throw Error(EINVAL, "srnic: SCHED_WQES must be 1..8");
  be_.mmio_write32(abi::REG_SCHED_WQES, n);
}

uint64_t Device::read_timestamp() {
  const uint32_t lo = be_.mmio_read32(abi::REG_TS_LO);
  const uint32_t hi = be_.mmio_read32(abi::REG_TS_HI);
  return uint64_t(hi) << 32 | lo;
}

NicStatus NicStatus::decode(uint32_t raw) {
  NicStatus s;
  s.raw = raw;
  s.fatal = raw & abi::NIC_ST_FATAL;
  s.is_write = raw & abi::NIC_ST_WRITE;
  s.code = uint8_t((raw >> 2) & 3);
  s.axi_id = uint8_t((raw >> 4) & 0xF);
  return s;
}

std::optional<NicStatus> Device::query_fatal() {
  // A register read returns only after the NIC's earlier writes to host memory have landed
  // (PCIe ordering), so every CQE written before FATAL is in its ring by now.
  if (!fatal_) {
    const NicStatus s = NicStatus::decode(be_.mmio_read32(abi::REG_NIC_STATUS));
    if (s.fatal) fatal_ = s;
  }
  return fatal_;
}

uint32_t Device::read_counter(int idx) {
  if (idx < 0 || idx >= abi::NUM_COUNTERS) throw Error(EINVAL, "srnic: no counter " + std::to_string(idx));
  return be_.mmio_read32(abi::reg_counter(idx));
}

void Device::execute(uint8_t opcode, uint32_t index, const void* payload, size_t len) {
  if (len > size_t(abi::CMD_BYTES)) throw Error(EINVAL, "srnic: command payload over 64 bytes");
  if (index > 0xFFFFFF) throw Error(EINVAL, "srnic: command index over 24 bits");
  uint8_t buf[abi::CMD_BYTES] = {};
  if (len) std::memcpy(buf, payload, len);
  for (int i = 0; i < abi::CMD_DATA_WORDS; ++i) {
    uint32_t w;
    std::memcpy(&w, buf + 4 * i, 4);
    if ((cmd_data_valid_ >> i & 1) && cmd_data_[i] == w) {
      ++cmd_words_saved_;
      continue;
    }
    be_.mmio_write32(abi::reg_cmd_data(i), w);
    cmd_data_[i] = w;
    cmd_data_valid_ |= 1u << i;
  }
  const uint32_t word = abi::cmd_word(opcode, index);
  be_.mmio_write32(abi::REG_CMD, word);
  cmd_unread_.push_back(word);
  ++cmds_written_;
  // CMD_STATUS counts accepted commands in 16 bits: read it before that could wrap.
  if (!batch_depth_ || cmd_unread_.size() >= 0x8000) wait_commands();
}

void Device::end_commands() {
  if (!batch_depth_) throw Error(EINVAL, "srnic: end_commands without begin_commands");
  if (--batch_depth_) return;
  wait_commands();
}

// Waits until CMD_STATUS shows no command busy and checks that every command written since the
// last read was accepted.
void Device::wait_commands() {
  if (cmd_unread_.empty()) return;
  // a command's register writes take well under a microsecond even on a slow bus
  const uint64_t deadline = be_.now_ns() + cmd_timeout_ns_ + 1000 * uint64_t(cmd_unread_.size());
  uint64_t accepted = 0;
  uint32_t status;
  for (uint32_t polls = 0;; ++polls) {
    status = be_.mmio_read32(abi::REG_CMD_STATUS);
    accepted += status >> 16;
    if (!(status & 1) || (status & 2)) break;
    if (be_.now_ns() > deadline || polls >= (1u << 20)) {
      const uint32_t w = cmd_unread_[std::min<size_t>(accepted ? accepted - 1 : 0, cmd_unread_.size() - 1)];
      cmd_unread_.clear();
      discards_.clear();
      throw Error(ETIMEDOUT, std::string("srnic: command ") + cmd_name(uint8_t(w >> 24)) + " index " +
                                 std::to_string(w & 0xFFFFFF) + " still busy after timeout");
    }
  }
  std::vector<uint32_t> cmds;
  cmds.swap(cmd_unread_);
  if (status & 2 || accepted != cmds.size()) discards_.clear();  // (the objects must be reset again)
  if (status & 2) {
    // the NIC refused command number `accepted` and skipped every one written after it
    static const char* const kPayload =
        "payload refused: ring not aligned to its entry size, log2 ring size above 15, path MTU code "
        "outside 1..5 in RTR/RTS or unknown QP state";
    static const char* const why[] = {"", "unknown opcode or index out of range", "", kPayload};
    const uint32_t r = (status >> 8) & 0xF;
    const uint32_t w = cmds[std::min<size_t>(accepted, cmds.size() - 1)];
    const size_t skipped = cmds.size() - std::min<size_t>(accepted + 1, cmds.size());
    throw Error(EIO, std::string("srnic: command ") + cmd_name(uint8_t(w >> 24)) + " index " +
                         std::to_string(w & 0xFFFFFF) + " failed: " + (r < 4 && why[r][0] ? why[r] : "unknown reason") +
                         " (CMD_STATUS " + hex32(status) + ")" +
                         (skipped ? "; the " + std::to_string(skipped) + " commands written after it were skipped"
                                  : std::string()));
  }
  if (accepted != cmds.size())
    throw Error(EIO, "srnic: " + std::to_string(cmds.size()) + " commands written, CMD_STATUS counted " +
                         std::to_string(accepted) + " accepted and no refusal");
  // every command written is done: the resets among them have written their QPs' last CQEs
  std::vector<std::pair<CompletionQueue*, uint32_t>> d;
  d.swap(discards_);
  for (const auto& [cq, qpn] : d) cq->discard_qp(qpn);
}

void Device::discard_after_reset(CompletionQueue& cq, uint32_t qpn) {
  if (cmd_unread_.empty())
    cq.discard_qp(qpn);
  else
    discards_.emplace_back(&cq, qpn);
}

CommandBatch::~CommandBatch() {
  if (!dev_) return;
  try {
    dev_->end_commands();
  } catch (const Error&) {
  }
}

void CommandBatch::finish() {
  Device* d = dev_;
  dev_ = nullptr;
  if (d) d->end_commands();
}

uint32_t Device::alloc_index(std::vector<uint8_t>& used, uint32_t first, const char* what) {
  for (uint32_t i = first; i < used.size(); ++i)
    if (!used[i]) {
      used[i] = 1;
      return i;
    }
  throw Error(ENOMEM, std::string("srnic: no free ") + what + " (table of " +
                          std::to_string(used.size()) + ")");
}

std::unique_ptr<ProtectionDomain> Device::alloc_pd() {
  return std::make_unique<ProtectionDomain>(*this, next_pd_++);
}

std::unique_ptr<MemoryRegion> Device::reg_mr(const ProtectionDomain& pd, uint64_t addr,
                                             uint64_t length, unsigned access) {
  return reg_mr_phys(pd, addr, addr, length, access);
}

std::unique_ptr<MemoryRegion> Device::reg_mr_phys(const ProtectionDomain& pd, uint64_t iova,
                                                  uint64_t pa, uint64_t length, unsigned access) {
  const unsigned known = Access::LocalWrite | Access::RemoteWrite | Access::RemoteRead | Access::RemoteAtomic;
  if (&pd.device() != this) throw Error(EINVAL, "reg_mr: PD belongs to another device");
  if (access & ~known) throw Error(EINVAL, "reg_mr: unsupported access flags " + hex32(access));
  if ((access & (Access::RemoteWrite | Access::RemoteAtomic)) && !(access & Access::LocalWrite))
    throw Error(EINVAL, "reg_mr: REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE");
  if (length == 0) throw Error(EINVAL, "reg_mr: zero length");
  if (iova + length < iova || pa + length < pa) throw Error(EINVAL, "reg_mr: range wraps the address space");

  const uint32_t idx = alloc_index(mr_used_, 0, "MR entries");
  // Key tag: 1..255, cycling per registration and always different from the entry's last tag.
  do tag_seq_ = uint8_t(tag_seq_ % 255 + 1);
  while (tag_seq_ == mr_last_tag_[idx]);
  const uint32_t key = idx << 8 | tag_seq_;

  abi::MrEntry e{};
  e.iova = iova;
  e.length = length;
  e.pa = pa;
  e.key = key;
  e.pd = pd.handle();
  e.access = uint8_t(access);
  e.valid = 1;
  try {
    execute(abi::CMD_MR_WRITE, idx, &e, sizeof e);
  } catch (...) {
    mr_used_[idx] = 0;
    throw;
  }
  mr_last_tag_[idx] = tag_seq_;
  return std::unique_ptr<MemoryRegion>(new MemoryRegion(*this, pd, key, iova, pa, length, access));
}

MemoryRegion::MemoryRegion(Device& dev, const ProtectionDomain& pd, uint32_t key, uint64_t iova,
                           uint64_t pa, uint64_t length, unsigned access)
    : dev_(dev), pd_(pd), key_(key), iova_(iova), pa_(pa), length_(length), access_(access) {}

MemoryRegion::~MemoryRegion() {
  abi::MrEntry e{};  // valid = 0
  try {
    dev_.execute(abi::CMD_MR_WRITE, index(), &e, sizeof e);
  } catch (const Error&) {
    // Nothing sensible to do in a destructor; the entry is still released for reuse.
  }
  dev_.mr_used_[index()] = 0;
}

}  // namespace srnic::sw
