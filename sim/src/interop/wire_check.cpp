// WireCheck: guest requests followed on the wire, checked against srnic's memory.
#include "wire_check.hpp"

#include <cstdio>
#include <cstring>

namespace srnic::sim::interop {

namespace {
constexpr size_t kEth = 14, kIp = 20, kUdp = 8, kBth = 12, kReth = 16, kAeth = 4, kIcrc = 4;
constexpr uint8_t kSendFirst = 0x00, kSendOnlyImm = 0x05, kWriteFirst = 0x06, kWriteOnlyImm = 0x0b,
                  kReadReq = 0x0c, kReadRespFirst = 0x0d, kReadRespOnly = 0x10;
uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
uint64_t be64(const uint8_t* p) { return uint64_t(be32(p)) << 32 | be32(p + 4); }
bool psn_before(uint32_t a, uint32_t b) { return ((b - a) & 0xFFFFFF) != 0 && ((b - a) & 0xFFFFFF) < 0x800000; }
}  // namespace

WireCheck::WireCheck(uint64_t base, uint64_t len, uint32_t mtu, uint32_t first_psn,
                     std::function<void(uint64_t, void*, size_t)> read)
    : base_(base), len_(len), mtu_(mtu), epsn_(first_psn & 0xFFFFFF), read_(std::move(read)),
      shadow_(len), written_(len, false) {}

void WireCheck::fail(const std::string& e) {
  if (error_.empty()) error_ = e;
}

void WireCheck::frame(const uint8_t* f, size_t n, bool to_nic) {
  // IPv4 / UDP 4791 only; the payload ends before the ICRC (IP total length bounds it).
  if (n < kEth + kIp + kUdp + kBth + kIcrc || f[12] != 0x08 || f[13] != 0x00 || f[14] != 0x45 || f[23] != 17) return;
  if ((unsigned(f[36]) << 8 | f[37]) != 4791) return;
  const size_t ip_len = unsigned(f[16]) << 8 | f[17];
  if (kEth + ip_len > n || ip_len < kIp + kUdp + kBth + kIcrc) return;
  const uint8_t* bth = f + kEth + kIp + kUdp;
  const uint8_t op = bth[0];
  const unsigned pad = (bth[1] >> 4) & 3;
  const uint32_t psn = be32(bth + 8) & 0xFFFFFF;
  const uint8_t* p = bth + kBth;
  const size_t body = ip_len - kIp - kUdp - kBth - kIcrc;
  if (body < pad) return fail("frame with pad count beyond its payload");
  if (to_nic) request(op, psn, p, body - pad);
  else response(op, psn, p, body - pad);
}

void WireCheck::request(uint8_t op, uint32_t psn, const uint8_t* p, size_t n) {
  if (op > kReadReq) return;  // ACKs and the like
  if (psn_before(psn, epsn_)) {
    ++dups_;
    return;
  }
  if (psn != epsn_) {
    char b[96];
    std::snprintf(b, sizeof b, "guest request PSN 0x%06x, expected 0x%06x: a frame was lost", psn, epsn_);
    return fail(b);
  }
  if (op == kReadReq) {
    if (n < kReth) return fail("short READ request");
    ReadReq r{psn, 1, be64(p), be32(p + 12)};
    r.npkts = r.len ? (r.len + mtu_ - 1) / mtu_ : 1;
    reads_.push_back(r);
    if (reads_.size() > 256) reads_.pop_front();
    epsn_ = (psn + r.npkts) & 0xFFFFFF;
    return;
  }
  epsn_ = (psn + 1) & 0xFFFFFF;
  const bool first = op == kSendFirst || op == 0x04 || op == kSendOnlyImm || op == kWriteFirst || op == 0x0a ||
                     op == kWriteOnlyImm;
  const bool last = op == 0x02 || op == 0x03 || op == 0x04 || op == kSendOnlyImm || op == 0x08 || op == 0x09 ||
                    op == 0x0a || op == kWriteOnlyImm;
  const bool imm = op == 0x03 || op == kSendOnlyImm || op == 0x09 || op == kWriteOnlyImm;
  if (op >= kWriteFirst) {
    if (first) {
      if (n < kReth) return fail("short WRITE first packet");
      wva_ = be64(p);
      if (!first_wva_) first_wva_ = wva_;
      p += kReth;
      n -= kReth;
    } else if (!in_write_) {
      return fail("WRITE middle/last packet without a first");
    }
    if (imm) {
      p += 4;
      n -= 4;
    }
    if (wva_ < base_ || wva_ + n > base_ + len_) return fail("WRITE outside srnic's buffer");
    std::memcpy(&shadow_[wva_ - base_], p, n);
    for (size_t i = 0; i < n; ++i) written_[wva_ - base_ + i] = true;
    wva_ += n;
    write_bytes_ += n;
    in_write_ = !last;
  } else {
    if (first) msg_.clear();
    else if (!in_send_) return fail("SEND middle/last packet without a first");
    if (imm) {
      p += 4;
      n -= 4;
    }
    msg_.insert(msg_.end(), p, p + n);
    in_send_ = !last;
    if (last) msgs_.push_back(std::move(msg_)), msg_.clear();
  }
}

void WireCheck::response(uint8_t op, uint32_t psn, const uint8_t* p, size_t n) {
  if (op < kReadRespFirst || op > kReadRespOnly) return;
  if (op != 0x0e) {  // FIRST, LAST and ONLY carry an AETH
    if (n < kAeth) return fail("READ response without AETH");
    p += kAeth;
    n -= kAeth;
  }
  for (const ReadReq& r : reads_) {
    const uint32_t k = (psn - r.psn) & 0xFFFFFF;
    if (k >= r.npkts) continue;
    const uint64_t off = uint64_t(k) * mtu_;
    const size_t want = r.len > off ? std::min<uint64_t>(mtu_, r.len - off) : 0;
    if (n != want) {
      char b[96];
      std::snprintf(b, sizeof b, "READ response PSN 0x%06x carries %zu bytes, expected %zu", psn, n, want);
      return fail(b);
    }
    std::vector<uint8_t> mem(n);
    read_(r.va + off, mem.data(), n);
    for (size_t i = 0; i < n; ++i)
      if (mem[i] != p[i]) {
        char b[128];
        std::snprintf(b, sizeof b, "READ response PSN 0x%06x byte %zu (address 0x%llx): sent 0x%02x, memory holds 0x%02x",
                      psn, i, static_cast<unsigned long long>(r.va + off + i), p[i], mem[i]);
        return fail(b);
      }
    read_checked_ += n;
    return;
  }
  fail("READ response PSN with no READ request");
}

std::string WireCheck::check_writes() const {
  std::vector<uint8_t> mem(len_);
  read_(base_, mem.data(), len_);
  for (uint64_t i = 0; i < len_; ++i)
    if (written_[i] && mem[i] != shadow_[i]) {
      char b[128];
      std::snprintf(b, sizeof b, "WRITE target byte at 0x%llx: memory 0x%02x, the wire carried 0x%02x",
                    static_cast<unsigned long long>(base_ + i), mem[i], shadow_[i]);
      return b;
    }
  return "";
}

bool WireCheck::next_message(std::vector<uint8_t>& out) {
  if (msgs_.empty()) return false;
  out = std::move(msgs_.front());
  msgs_.pop_front();
  return true;
}

}  // namespace srnic::sim::interop
