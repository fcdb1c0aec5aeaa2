// pcap I/O, the protocol checker and the two command-line checkers run on generated captures.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <pcap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srnic/roce/aeth.hpp"
#include "srnic/roce/checker.hpp"
#include "srnic/roce/icrc.hpp"
#include "srnic/roce/pcap.hpp"
#include "srnic/roce/psn.hpp"
#include "vectors.hpp"

namespace srnic::roce {
namespace {

constexpr uint32_t kMtu = 256;

// Builds request/response frames of one RC connection 10.0.0.1:qp 0x11 <-> 10.0.0.2:qp 0x22.
struct Conv {
  uint32_t psn = 0xFFFFFE;  // wraps during the test
  uint32_t msn = 0;         // request messages the responder completed (carried in AETH)
  std::vector<std::vector<uint8_t>> frames;

  Packet req(uint8_t opc, size_t len) {
    Packet p = test::vector_base();
    p.bth.opcode = opc;
    p.bth.dest_qp = 0x22;
    p.bth.psn = psn;
    for (size_t i = 0; i < len; ++i) p.payload.push_back(uint8_t(i));
    return p;
  }
  Packet resp(uint8_t opc, uint32_t at, size_t len) {
    Packet p = test::vector_base();
    std::swap(p.ip4.src, p.ip4.dst);
    std::swap(p.eth.src, p.eth.dst);
    p.bth.opcode = opc;
    p.bth.dest_qp = 0x11;
    p.bth.psn = at;
    p.aeth.msn = msn;
    p.payload.assign(len, 0x77);
    return p;
  }
  void push(const Packet& p) { frames.push_back(p.build()); }
  // A WRITE of `len` bytes split at the MTU.
  void write(uint32_t len) {
    const uint32_t n = len == 0 ? 1 : (len + kMtu - 1) / kMtu;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t chunk = i + 1 < n ? kMtu : len - i * kMtu;
      uint8_t opc = n == 1 ? op::kRcWriteOnly : i == 0 ? op::kRcWriteFirst : i + 1 < n ? op::kRcWriteMiddle : op::kRcWriteLast;
      Packet p = req(opc, chunk);
      p.reth.dma_len = len;
      p.bth.ack_req = i + 1 == n;
      push(p);
      psn = (psn + 1) & 0xFFFFFF;
    }
    ++msn;
    push(resp(op::kRcAck, (psn - 1) & 0xFFFFFF, 0));
  }
  void read(uint32_t len) {
    Packet p = req(op::kRcReadRequest, 0);
    p.reth.dma_len = len;
    push(p);
    ++msn;
    const uint32_t n = len == 0 ? 1 : (len + kMtu - 1) / kMtu;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t chunk = i + 1 < n ? kMtu : len - i * kMtu;
      uint8_t opc = n == 1 ? op::kRcReadResponseOnly
                           : i == 0 ? op::kRcReadResponseFirst
                                    : i + 1 < n ? op::kRcReadResponseMiddle : op::kRcReadResponseLast;
      push(resp(opc, (psn + i) & 0xFFFFFF, chunk));
    }
    psn = (psn + n) & 0xFFFFFF;
  }
};

Conv good_conversation() {
  Conv c;
  c.write(600);   // FIRST MIDDLE LAST across the PSN wrap
  c.read(700);    // 3 responses
  c.write(0);     // zero-length ONLY
  c.write(256);   // exactly one MTU
  c.read(0);
  Packet s = c.req(op::kRcSendOnlyImm, 5);
  c.push(s);
  c.psn = (c.psn + 1) & 0xFFFFFF;
  c.frames.push_back(test::load_vector("cx4_cnp").frame);
  return c;
}

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("srnic_roce_" + std::to_string(::getpid()) + "_" + name)).string();
}

// Written by libpcap, so the checker's own reader is tested against an independent writer.
void write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames, bool nsec) {
  pcap_t* p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
                                                   nsec ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  ASSERT_NE(p, nullptr);
  pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
  ASSERT_NE(d, nullptr) << pcap_geterr(p);
  uint64_t t = 1'700'000'000'123'456'789ull;
  for (const auto& f : frames) {
    t += 1500;
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(t / 1000000000ull);
    h.ts.tv_usec = static_cast<suseconds_t>(nsec ? t % 1000000000ull : t % 1000000000ull / 1000);
    h.caplen = h.len = static_cast<uint32_t>(f.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, f.data());
  }
  pcap_dump_close(d);
  pcap_close(p);
}

TEST(Pcap, RoundTripBothMagics) {
  const Conv c = good_conversation();
  for (bool nsec : {false, true}) {
    const std::string path = tmp_path(nsec ? "n.pcap" : "u.pcap");
    write_pcap(path, c.frames, nsec);
    PcapReader r(path);
    EXPECT_EQ(r.nanosecond(), nsec);
    EXPECT_EQ(r.linktype(), kLinkTypeEthernet);
    PcapRecord rec;
    size_t i = 0;
    uint64_t t = 1'700'000'000'123'456'789ull;
    while (r.next(rec)) {
      ASSERT_LT(i, c.frames.size());
      EXPECT_EQ(rec.data, c.frames[i]);
      t += 1500;
      EXPECT_EQ(rec.ts_ns, nsec ? t : t / 1000 * 1000);
      ++i;
    }
    EXPECT_EQ(i, c.frames.size());
    std::remove(path.c_str());
  }
}

TEST(Pcap, ReadsByteSwappedHeader) {
  const std::string path = tmp_path("be.pcap");
  {
    std::ofstream o(path, std::ios::binary);
    const uint8_t g[24] = {0xA1, 0xB2, 0x3C, 0x4D, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 1};
    const uint8_t h[16] = {0, 0, 0, 2, 0, 0, 0, 7, 0, 0, 0, 3, 0, 0, 0, 3};
    const uint8_t d[3] = {9, 8, 7};
    o.write(reinterpret_cast<const char*>(g), 24);
    o.write(reinterpret_cast<const char*>(h), 16);
    o.write(reinterpret_cast<const char*>(d), 3);
  }
  PcapReader r(path);
  EXPECT_TRUE(r.nanosecond());
  EXPECT_EQ(r.linktype(), 1u);
  PcapRecord rec;
  ASSERT_TRUE(r.next(rec));
  EXPECT_EQ(rec.ts_ns, 2'000'000'007ull);
  EXPECT_EQ(rec.data, (std::vector<uint8_t>{9, 8, 7}));
  EXPECT_FALSE(r.next(rec));
  std::remove(path.c_str());
}

TEST(Pcap, RejectsOtherFiles) {
  const std::string path = tmp_path("bad.pcap");
  { std::ofstream(path) << "this is not a capture file at all"; }
  EXPECT_THROW(PcapReader{path}, std::runtime_error);
  std::remove(path.c_str());
  EXPECT_THROW(PcapReader{path}, std::runtime_error);
}

ProtocolChecker run(const std::vector<std::vector<uint8_t>>& frames, bool allow_retx = false) {
  CheckerConfig cfg;
  cfg.mtu = kMtu;
  cfg.allow_retransmit = allow_retx;
  ProtocolChecker ch(cfg);
  for (const auto& f : frames) ch.on_frame(f.data(), f.size());
  return ch;
}

TEST(Checker, CleanConversationPasses) {
  const Conv c = good_conversation();
  const ProtocolChecker ch = run(c.frames);
  std::ostringstream os;
  ch.print_summary(os);
  EXPECT_EQ(ch.violation_count(), 0u) << os.str();
  EXPECT_EQ(ch.frames(), c.frames.size());
  EXPECT_EQ(ch.opcode_counts()[op::kRcWriteFirst], 1u);
  EXPECT_EQ(ch.opcode_counts()[op::kRcReadResponseMiddle], 1u);
  EXPECT_EQ(ch.opcode_counts()[op::kRcAck], 3u);
  EXPECT_EQ(ch.opcode_counts()[op::kCnp], 1u);
  EXPECT_NE(os.str().find("RC_RDMA_READ_REQUEST: 2"), std::string::npos) << os.str();
}

// Expects exactly one violation of `kind` at 1-based frame `frame`.
void expect_one(const ProtocolChecker& ch, const std::string& kind, uint64_t frame) {
  std::ostringstream os;
  ch.print_summary(os);
  ASSERT_EQ(ch.violation_count(), 1u) << os.str();
  EXPECT_EQ(ch.violations()[0].kind, kind) << os.str();
  EXPECT_EQ(ch.violations()[0].frame, frame) << os.str();
}

TEST(Checker, DetectsPsnGap) {
  Conv c;
  c.write(10);
  c.psn = (c.psn + 1) & 0xFFFFFF;  // skip a PSN
  c.write(10);
  expect_one(run(c.frames), "psn_order", 3);
}

TEST(Checker, ReadRequestAdvancesByResponseCount) {
  Conv c;
  c.read(3 * kMtu);
  c.psn = (c.psn - 2) & 0xFFFFFF;  // next request reuses response PSNs
  Packet w = c.req(op::kRcWriteOnly, 4);
  w.reth.dma_len = 4;
  c.push(w);
  expect_one(run(c.frames), "psn_order", 5);
}

TEST(Checker, DetectsMissingLast) {
  Conv c;
  c.write(600);
  c.frames.erase(c.frames.begin() + 2);  // drop WRITE_LAST (and its PSN)
  c.write(4);
  const ProtocolChecker ch = run(c.frames);
  // The ONLY after an unfinished message breaks both PSN order and the opcode sequence.
  EXPECT_EQ(ch.violation_counts().at("psn_order"), 1u);
  EXPECT_EQ(ch.violation_counts().at("opcode_sequence"), 1u);
  EXPECT_EQ(ch.violations()[0].frame, 4u);
}

TEST(Checker, DetectsMiddleWithoutFirstAndBadLengths) {
  Conv c;
  Packet m = c.req(op::kRcSendMiddle, kMtu);
  c.push(m);
  expect_one(run(c.frames), "opcode_sequence", 1);

  Conv d;
  Packet f = d.req(op::kRcSendFirst, kMtu - 4);
  d.push(f);
  expect_one(run(d.frames), "payload_length", 1);

  Conv e;
  e.write(600);
  Packet last = e.req(op::kRcWriteLast, 10);  // fix the frame so that DMA length disagrees
  e.frames[2] = [&] { Packet p = last; p.bth.psn = psn_add(0xFFFFFE, 2); return p.build(); }();
  expect_one(run(e.frames), "write_length", 3);

  Conv g;
  Packet o = g.req(op::kRcWriteOnly, kMtu + 4);
  o.reth.dma_len = kMtu + 4;
  g.push(o);
  expect_one(run(g.frames), "payload_length", 1);
}

TEST(Checker, DetectsResponseOrderAndNonZeroPad) {
  Conv c;
  c.read(3 * kMtu);
  std::swap(c.frames[2], c.frames[3]);  // MIDDLE and LAST swapped
  const ProtocolChecker ch = run(c.frames);
  EXPECT_GE(ch.violation_count(), 1u);
  EXPECT_EQ(ch.violations()[0].frame, 3u);
  EXPECT_EQ(ch.violations()[0].kind, "psn_order");

  Conv d;
  Packet s = d.req(op::kRcSendOnly, 5);
  auto f = s.build();
  f[14 + 20 + 8 + 12 + 5] = 0xEE;  // first pad byte
  icrc_store(&f[f.size() - 4], icrc_compute(&f[14], f.size() - 18));
  d.frames.push_back(f);
  expect_one(run(d.frames), "pad_nonzero", 1);
}

TEST(Checker, DecodeErrorsAreCountedByName) {
  Conv c;
  c.write(4);
  c.frames[0][c.frames[0].size() - 1] ^= 1;
  const ProtocolChecker ch = run(c.frames);
  EXPECT_EQ(ch.violation_counts().at("bad_icrc"), 1u);
}

TEST(Checker, RetransmissionNeedsPermission) {
  Conv c;
  c.write(600);
  const uint32_t start = 0xFFFFFE;
  // Go-back-N: resend MIDDLE and LAST after the ACK was lost.
  c.frames.push_back(c.frames[1]);
  c.frames.push_back(c.frames[2]);
  c.psn = psn_add(start, 3);
  c.write(8);
  EXPECT_GE(run(c.frames).violation_count(), 1u);
  const ProtocolChecker ok = run(c.frames, true);
  std::ostringstream os;
  ok.print_summary(os);
  EXPECT_EQ(ok.violation_count(), 0u) << os.str();
  EXPECT_EQ(ok.retransmits(), 1u);
  EXPECT_EQ(ok.resent_requests(), 2u);   // MIDDLE and LAST again: one step back, two frames
  EXPECT_EQ(run(c.frames, true).resent_requests(), 2u);
}

// A resend cut short: the requester goes back to the WRITE's FIRST, an ACK covering the whole
// WRITE arrives, and it goes on with the next message at the PSN after the WRITE (sent before).
// Going past the furthest PSN ever sent stays a gap, resends or not.
TEST(Checker, ResendCutShortByAnAcknowledgement) {
  Conv c;
  c.write(3 * kMtu);  // FIRST, MIDDLE, LAST
  c.frames.push_back(c.frames[0]);  // resent from FIRST ...
  c.frames.push_back(c.frames[1]);  // ... and MIDDLE, then the next message
  c.write(8);
  EXPECT_GE(run(c.frames).violation_count(), 1u);
  const ProtocolChecker ok = run(c.frames, true);
  std::ostringstream os;
  ok.print_summary(os);
  EXPECT_EQ(ok.violation_count(), 0u) << os.str();
  EXPECT_EQ(ok.retransmits(), 1u);
  EXPECT_EQ(ok.resend_skips(), 1u);
  EXPECT_EQ(ok.resent_requests(), 2u);   // FIRST and MIDDLE again; the next message is new

  Conv d;
  d.write(3 * kMtu);
  d.frames.push_back(d.frames[0]);
  d.psn = psn_add(d.psn, 1);  // one PSN past the furthest sent
  d.write(8);
  const ProtocolChecker bad = run(d.frames, true);
  EXPECT_EQ(bad.violation_counts().count("psn_order") ? bad.violation_counts().at("psn_order") : 0u, 1u);
  EXPECT_EQ(bad.resend_skips(), 0u);
}

// A READ re-requested from its third response and answered as the original READ's
// continuation (MIDDLE, LAST from that PSN, as Linux rxe replays it): a retransmission with
// permission; without permission a PSN order violation.
TEST(Checker, ReadReplayedFromTheMiddle) {
  Conv c;
  c.read(4 * kMtu);  // READ request, FIRST, MIDDLE, MIDDLE, LAST
  const size_t n = c.frames.size();
  c.frames.push_back(c.frames[n - 2]);  // the second MIDDLE again ...
  c.frames.push_back(c.frames[n - 1]);  // ... and the LAST
  EXPECT_GE(run(c.frames).violation_count(), 1u);
  const ProtocolChecker ok = run(c.frames, true);
  std::ostringstream os;
  ok.print_summary(os);
  EXPECT_EQ(ok.violation_count(), 0u) << os.str();
  EXPECT_EQ(ok.retransmits(), 1u);
}

// --- responses tied to requests (connections registered with connect) ---

ProtocolChecker run_paired(const std::vector<std::vector<uint8_t>>& frames,
                           const std::vector<std::vector<uint8_t>>& forged = {}, bool allow_retx = false) {
  CheckerConfig cfg;
  cfg.mtu = kMtu;
  cfg.allow_retransmit = allow_retx;
  ProtocolChecker ch(cfg);
  const Packet b = test::vector_base();
  ch.connect_ipv4(b.ip4.src, 0x11, b.ip4.dst, 0x22);
  for (const auto& f : forged) ch.note_forged(f.data(), f.size());
  for (const auto& f : frames) ch.on_frame(f.data(), f.size());
  return ch;
}

TEST(CheckerPaired, CleanConversationPasses) {
  const Conv c = good_conversation();
  const ProtocolChecker ch = run_paired(c.frames);
  std::ostringstream os;
  ch.print_summary(os);
  EXPECT_EQ(ch.violation_count(), 0u) << os.str();
}

TEST(CheckerPaired, AckForAPsnNeverSent) {
  Conv c;
  c.write(10);
  c.push(c.resp(op::kRcAck, psn_add(c.psn, 4), 0));  // four PSNs beyond the last one sent
  expect_one(run_paired(c.frames), "ack_unsent", 3);

  Conv d;  // an ACK before any request
  d.push(d.resp(op::kRcAck, d.psn, 0));
  expect_one(run_paired(d.frames), "ack_unsent", 1);

  Conv e;  // a fatal NAK for the PSN that would come next
  e.write(10);
  Packet nak = e.resp(op::kRcAck, e.psn, 0);
  nak.aeth.syndrome = make_nak_syndrome(NakCode::InvalidRequest);
  e.push(nak);
  expect_one(run_paired(e.frames), "ack_unsent", 3);
}

TEST(CheckerPaired, PsnSequenceNakNamesTheNextPsn) {
  Conv c;
  c.write(10);
  Packet nak = c.resp(op::kRcAck, c.psn, 0);  // the expected PSN: not sent yet, allowed
  nak.aeth.syndrome = make_nak_syndrome(NakCode::PsnSequenceError);
  c.push(nak);
  EXPECT_EQ(run_paired(c.frames).violation_count(), 0u);
  nak.bth.psn = psn_add(c.psn, 1);  // one further: never
  c.push(nak);
  expect_one(run_paired(c.frames), "ack_unsent", 4);
}

TEST(CheckerPaired, ForgedRequestsAreExcludedButTheirNaksAccepted) {
  Conv c;
  c.write(10);
  Packet forged = c.req(op::kRcWriteMiddle, kMtu);  // MIDDLE without FIRST at the next PSN
  Packet nak = c.resp(op::kRcAck, c.psn, 0);
  nak.aeth.syndrome = make_nak_syndrome(NakCode::InvalidRequest);
  c.push(nak);
  // without being told, the NAK names a PSN nobody sent
  expect_one(run_paired(c.frames), "ack_unsent", 3);
  // told: the forged frame is not checked (it breaks the opcode sequence) and the NAK matches it;
  // the forged frame is noted after the real requests it follows
  CheckerConfig cfg;
  cfg.mtu = kMtu;
  ProtocolChecker ch(cfg);
  const Packet b = test::vector_base();
  ch.connect_ipv4(b.ip4.src, 0x11, b.ip4.dst, 0x22);
  for (size_t i = 0; i < 2; ++i) ch.on_frame(c.frames[i].data(), c.frames[i].size());
  const auto f = forged.build();
  ch.note_forged(f.data(), f.size());
  ch.on_frame(c.frames[2].data(), c.frames[2].size());
  std::ostringstream os;
  ch.print_summary(os);
  EXPECT_EQ(ch.violation_count(), 0u) << os.str();
  EXPECT_EQ(ch.forged(), 1u);
  EXPECT_NE(os.str().find("forged (not checked): 1"), std::string::npos) << os.str();
}

// Both QPs are reset and connected again with new PSNs: the new connection starts afresh once
// the old one is forgotten (without that its first request is a PSN gap, its first ACK names
// a PSN the old connection never sent either).
TEST(CheckerPaired, AConnectionForgottenStartsAfresh) {
  Conv old_conn;
  old_conn.write(10);
  old_conn.read(10);
  Conv next;
  next.psn = 0x123456;
  next.write(3 * kMtu);
  next.read(10);
  CheckerConfig cfg;
  cfg.mtu = kMtu;
  const Packet b = test::vector_base();
  auto run = [&](bool forget) {
    ProtocolChecker ch(cfg);
    ch.connect_ipv4(b.ip4.src, 0x11, b.ip4.dst, 0x22);
    for (const auto& f : old_conn.frames) ch.on_frame(f.data(), f.size());
    if (forget) {
      ch.disconnect_ipv4(b.ip4.dst, 0x22, b.ip4.src, 0x11);
      ch.connect_ipv4(b.ip4.src, 0x11, b.ip4.dst, 0x22);
    }
    for (const auto& f : next.frames) ch.on_frame(f.data(), f.size());
    return ch;
  };
  const ProtocolChecker ok = run(true);
  std::ostringstream os;
  ok.print_summary(os);
  EXPECT_EQ(ok.violation_count(), 0u) << os.str();
  EXPECT_GE(run(false).violation_count(), 1u);
}

TEST(CheckerPaired, ReadResponseForNoRead) {
  Conv c;
  c.write(10);
  c.push(c.resp(op::kRcReadResponseOnly, psn_add(c.psn, 0), 8));  // the next PSN: no READ there
  expect_one(run_paired(c.frames), "read_resp_unrequested", 3);

  Conv d;  // a response after the READ's last one, at a PSN inside no READ
  d.read(2 * kMtu);
  d.push(d.resp(op::kRcReadResponseOnly, d.psn, 8));
  const ProtocolChecker ch = run_paired(d.frames);
  EXPECT_EQ(ch.violation_counts().count("read_resp_unrequested"), 1u);
}

TEST(CheckerPaired, ReadResponseLengths) {
  for (int delta : {+16, -16}) {
    Conv c;
    c.read(300);  // FIRST 256, LAST 44
    Packet last = c.resp(op::kRcReadResponseLast, psn_add(0xFFFFFE, 1), size_t(44 + delta));
    c.frames[2] = last.build();
    expect_one(run_paired(c.frames), "read_resp_length", 3);
  }
  Conv d;  // a one-packet READ of 100 bytes answered with 120
  d.read(100);
  d.frames[1] = d.resp(op::kRcReadResponseOnly, 0xFFFFFE, 120).build();
  expect_one(run_paired(d.frames), "read_resp_length", 2);
}

TEST(CheckerPaired, ReadResponseOpcodeAndOrder) {
  Conv c;
  c.read(100);  // ONLY expected, FIRST-sized LAST answer
  c.frames[1] = c.resp(op::kRcReadResponseLast, 0xFFFFFE, 100).build();
  const ProtocolChecker ch = run_paired(c.frames);
  EXPECT_EQ(ch.violation_counts().count("read_resp_opcode"), 1u);

  Conv d;  // 3 responses, the MIDDLE missing: the LAST comes early
  d.read(3 * kMtu);
  d.frames.erase(d.frames.begin() + 2);
  const ProtocolChecker ch2 = run_paired(d.frames);
  EXPECT_EQ(ch2.violation_counts().count("read_resp_psn"), 1u);
}

TEST(CheckerPaired, MsnCountsCompletedMessages) {
  Conv c;
  c.write(600);  // one message of 3 packets: MSN 1 in its ACK
  c.write(4);
  Packet ack = c.resp(op::kRcAck, (c.psn - 1) & 0xFFFFFF, 0);
  ack.aeth.msn = 3;  // two messages were completed, not three
  c.push(ack);
  expect_one(run_paired(c.frames), "msn", 7);

  Conv d;  // the READ counts when its request is accepted: its responses carry MSN 2
  d.write(4);
  d.msn = 0;  // responses of the READ claim nothing was completed
  d.read(300);
  const ProtocolChecker ch = run_paired(d.frames);
  EXPECT_EQ(ch.violation_counts().at("msn"), 2u);  // FIRST and LAST of the READ
  EXPECT_EQ(ch.violation_count(), 2u);
}

// With retransmissions a READ the requester sent once may be answered again from its first
// response (a duplicated request re-executed after later messages), with the responder's MSN at
// that time: no more than the messages sent, no less than those up to the READ.
TEST(CheckerPaired, ReadAnsweredAgainWithRetransmissions) {
  Conv c;
  c.read(2 * kMtu);  // PSNs 0xFFFFFE, 0xFFFFFF: MSN 1
  c.write(4);        // MSN 2
  const size_t again = c.frames.size();
  for (size_t i = 1; i <= 2; ++i) c.frames.push_back(c.frames[i]);  // both responses again (MSN 1)
  Packet first = c.resp(op::kRcReadResponseFirst, 0xFFFFFE, kMtu);  // answered again with MSN 2
  c.push(first);
  c.frames.push_back(c.frames[2]);
  EXPECT_EQ(run_paired(c.frames, {}, true).violation_count(), 0u);
  // without retransmissions: a response no outstanding READ covers
  EXPECT_EQ(run_paired(c.frames).violation_counts().at("read_resp_unrequested"), 4u);
  // an MSN beyond the messages sent is still wrong
  first.aeth.msn = 3;
  c.frames[again + 2] = first.build();
  expect_one(run_paired(c.frames, {}, true), "msn", again + 3);
}

// A READ resent from its first missing response lies inside the original READ: its responses
// start over (FIRST at its own PSN), it is not a new message, and the original's responses may
// still come (re-executed from a duplicate of the original request).
TEST(CheckerPaired, ReadResentFromAMissingResponse) {
  Conv c;
  const uint32_t p0 = c.psn;
  c.read(3 * kMtu);  // MSN 1: FIRST MIDDLE LAST at p0..p0+2 (MIDDLE and LAST lost further on)
  c.psn = psn_add(p0, 1);
  Packet rr = c.req(op::kRcReadRequest, 0);  // resent from p0+1 for the last two MTUs
  rr.reth.dma_len = 2 * kMtu;
  c.push(rr);
  c.push(c.resp(op::kRcReadResponseFirst, psn_add(p0, 1), kMtu));
  c.push(c.resp(op::kRcReadResponseLast, psn_add(p0, 2), kMtu));
  for (uint32_t i = 0; i < 3; ++i)  // the original answered again
    c.push(c.resp(i == 0 ? op::kRcReadResponseFirst : i == 1 ? op::kRcReadResponseMiddle : op::kRcReadResponseLast,
                  psn_add(p0, i), kMtu));
  c.psn = psn_add(p0, 3);
  c.write(4);  // MSN 2
  const ProtocolChecker ch = run_paired(c.frames, {}, true);
  std::ostringstream os;
  ch.print_summary(os);
  EXPECT_EQ(ch.violation_count(), 0u) << os.str();
}

TEST(CheckerPaired, AcksNeverGoBack) {
  Conv c;
  c.write(4);
  c.write(4);
  Packet old = c.resp(op::kRcAck, 0xFFFFFE, 0);
  old.aeth.msn = 1;
  c.push(old);  // an ACK for the first WRITE after the second one's
  expect_one(run_paired(c.frames), "psn_order", 5);
}

// --- the command-line tools on real files ---

int run_cmd(const std::string& cmd) {
  const int rc = std::system((cmd + " > /dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(Tools, RocePcapCheckExitCodes) {
  const std::string good = tmp_path("good.pcap"), bad = tmp_path("bad.pcap");
  const Conv c = good_conversation();
  write_pcap(good, c.frames, false);
  auto frames = c.frames;
  frames[3][frames[3].size() - 2] ^= 0x10;
  write_pcap(bad, frames, true);
  const std::string tool = ROCE_PCAP_CHECK;
  EXPECT_EQ(run_cmd(tool + " --mtu 256 " + good), 0);
  EXPECT_NE(run_cmd(tool + " --mtu 256 " + bad), 0);
  EXPECT_NE(run_cmd(tool + " --mtu 1024 " + good), 0);  // FIRST/MIDDLE are not full 1024-byte packets
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST(Tools, ScapyIcrcCheck) {
  if (run_cmd("/usr/bin/python3 -c 'import scapy.contrib.roce'") != 0) GTEST_SKIP() << "scapy not installed";
  const std::string good = tmp_path("sgood.pcap"), bad = tmp_path("sbad.pcap");
  Conv c = good_conversation();
  c.frames.push_back(test::load_vector("scapy_uc_send_only").frame);
  c.frames.push_back(test::load_vector("rc_send_only_ipv6").frame);
  write_pcap(good, c.frames, false);
  c.frames[1][c.frames[1].size() - 4] ^= 1;
  write_pcap(bad, c.frames, false);
  const std::string script = std::string("/usr/bin/python3 ") + ROCE_SCAPY_CHECK;
  EXPECT_EQ(run_cmd(script + " " + good), 0);
  EXPECT_EQ(run_cmd(script + " " + bad), 1);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

// Per-flow path MTUs: a 512-byte WRITE ONLY breaks a 256-byte MTU, but not the 1024-byte MTU
// configured for its flow (destination IPv4 and QPN); other flows keep the default.
TEST(CheckerFlowMtu, PerFlowMtuOverridesTheDefault) {
  Packet p = test::vector_base();
  p.bth.opcode = op::kRcWriteOnly;
  p.bth.dest_qp = 0x22;
  p.bth.psn = 5;
  p.reth.dma_len = 512;
  p.payload.assign(512, 0x11);
  const std::vector<uint8_t> f = p.build();
  CheckerConfig c;
  c.mtu = 256;
  ProtocolChecker plain(c);
  EXPECT_FALSE(plain.on_frame(f.data(), f.size()));
  EXPECT_EQ(plain.violation_counts().count("payload_length"), 1u);
  ProtocolChecker per_flow(c);
  per_flow.set_flow_mtu(flow_mtu_key(p.ip4.dst, 0x22), 1024);
  EXPECT_TRUE(per_flow.on_frame(f.data(), f.size()));
  Packet q = p;
  q.bth.dest_qp = 0x23;  // another flow: default MTU
  const std::vector<uint8_t> g = q.build();
  EXPECT_FALSE(per_flow.on_frame(g.data(), g.size()));
}

}  // namespace
}  // namespace srnic::roce
