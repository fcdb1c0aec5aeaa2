// Full-chip bad-input tests: two simulated srnic hosts, driven through the host library.
// Each case feeds the NIC something wrong (a bad R_Key, a bad local key, a malformed WQE,
// corrupted or foreign frames, a doorbell for a QP that does not exist) and checks that the
// NIC reports it the standard way (NAK / error completion / counted drop) while another QP
// keeps moving data correctly.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "sim_backend.hpp"
#include "two_hosts.hpp"
#include "srnic/abi.hpp"
#include "srnic/roce/packet.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim {
namespace {

constexpr uint64_t kMac[2] = {0x020000000001ull, 0x020000000002ull};
constexpr uint32_t kIp[2] = {0x0A000001u, 0x0A000002u};

roce::MacAddr mac_of(uint64_t v) {
  roce::MacAddr m{};
  for (int i = 0; i < 6; ++i) m[size_t(i)] = uint8_t(v >> (8 * (5 - i)));
  return m;
}

// A packet from host `from` to the other host: Ethernet, IPv4 and UDP headers filled in.
roce::Packet packet_from(int from) {
  roce::Packet p;
  p.eth.dst = mac_of(kMac[1 - from]);
  p.eth.src = mac_of(kMac[from]);
  p.ip4.src = kIp[from];
  p.ip4.dst = kIp[1 - from];
  p.udp.sport = 0xC001;
  return p;
}

uint8_t init_byte(int h, uint64_t off) { return uint8_t(off * 7 + uint64_t(h) * 13 + 1); }

class BadInput : public TwoHosts {
 public:
  BadInput() : TwoHosts({{kMac[0], kMac[1]}, {kIp[0], kIp[1]}, 11, &init_byte}) {}

  // Posts one signaled WRITE on host 0's QP q.
  void write(int q, uint64_t wr_id, uint64_t loff, uint32_t len, uint64_t roff, uint32_t lkey, uint32_t rkey) {
    post(0, q, sw::WrOpcode::RdmaWrite, wr_id, loff, len, roff, sw::SendFlags::Signaled, lkey, rkey);
  }

  // Runs until host 0's send CQ yields a completion (or a bounded time passes).
  sw::WorkCompletion wait_send_completion() {
    sw::WorkCompletion wc{};
    // long enough for a local ACK timeout (timeout 8: 1.05 ms, 315,000 cycles) and the
    // timer's sweep
    for (int i = 0; i < 1000000; ++i) {
      if (host[0].scq->poll_cq(1, &wc) == 1) return wc;
      world->step();
    }
    ADD_FAILURE() << "no send completion after 1000000 cycles";
    return wc;
  }

  void run(int cycles) {
    for (int i = 0; i < cycles; ++i) world->step();
  }

  uint32_t counter(int h, int idx) { return host[h].dev->read_counter(idx); }

  // Host 0 QP 1 writes 4 KiB; the data must land at host 1.
  void expect_other_qp_works(uint64_t wr_id) {
    write(1, wr_id, 0x4000, 4096, 0x8000, host[0].mr->lkey(), host[1].mr->rkey());
    const sw::WorkCompletion wc = wait_send_completion();
    EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
    EXPECT_EQ(wc.wr_id, wr_id);
    std::vector<uint8_t> got(4096), want(4096);
    host[1].be->mem_read(host[1].buf + 0x8000, got.data(), got.size());
    host[0].be->mem_read(host[0].buf + 0x4000, want.data(), want.size());
    EXPECT_EQ(got, want) << "QP 1's WRITE did not land";
  }

};

TEST_F(BadInput, BadRkeyIsNakedAsRemoteAccessError) {
  write(0, 1, 0, 2048, 0, host[0].mr->lkey(), host[1].mr->rkey() ^ 0x55);
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 1u);
  EXPECT_EQ(wc.status, sw::WcStatus::RemAccessErr) << sw::to_string(wc.status);
  EXPECT_EQ(counter(1, abi::CNT_RX_ACCESS_ERR), 1u);
  EXPECT_EQ(counter(1, abi::CNT_TX_NAK), 1u);
  EXPECT_EQ(counter(0, abi::CNT_RX_NAK), 1u);
  std::vector<uint8_t> got(2048), orig(2048);
  host[1].be->mem_read(host[1].buf, got.data(), got.size());
  for (uint32_t i = 0; i < 2048; ++i) orig[i] = uint8_t(i * 7 + 13 + 1);
  EXPECT_EQ(got, orig) << "a refused WRITE changed target memory";
  expect_other_qp_works(2);
}

TEST_F(BadInput, WqesAfterARemoteErrorAreFlushed) {
  // A refused remote key, then two more WRITEs in the same post and one posted later: the
  // first fails with REM_ACCESS_ERR, the others are flushed, none of them lands.
  write(0, 40, 0, 1024, 0, host[0].mr->lkey(), host[1].mr->rkey() ^ 0x55);
  write(0, 41, 0, 1024, 1024, host[0].mr->lkey(), host[1].mr->rkey());
  write(0, 42, 0, 1024, 2048, host[0].mr->lkey(), host[1].mr->rkey());
  const sw::WcStatus want[] = {sw::WcStatus::RemAccessErr, sw::WcStatus::WrFlushErr, sw::WcStatus::WrFlushErr};
  for (uint64_t i = 0; i < 3; ++i) {
    const sw::WorkCompletion wc = wait_send_completion();
    EXPECT_EQ(wc.wr_id, 40 + i);
    EXPECT_EQ(wc.status, want[i]) << "wr " << 40 + i << ": " << sw::to_string(wc.status);
  }
  write(0, 43, 0, 1024, 3072, host[0].mr->lkey(), host[1].mr->rkey());
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 43u);
  EXPECT_EQ(wc.status, sw::WcStatus::WrFlushErr) << sw::to_string(wc.status);
  std::vector<uint8_t> got(4096), orig(4096);
  host[1].be->mem_read(host[1].buf, got.data(), got.size());
  for (uint32_t i = 0; i < 4096; ++i) orig[i] = uint8_t(i * 7 + 13 + 1);
  EXPECT_EQ(got, orig) << "a WRITE after the error changed target memory";
  expect_other_qp_works(44);
}

TEST_F(BadInput, OutOfBoundsWriteIsNaked) {
  write(0, 3, 0, 4096, kBuf - 1024, host[0].mr->lkey(), host[1].mr->rkey());
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.status, sw::WcStatus::RemAccessErr) << sw::to_string(wc.status);
  expect_other_qp_works(4);
}

TEST_F(BadInput, BadLocalKeyCompletesWithLocalProtectionError) {
  write(0, 5, 0, 1024, 0, host[0].mr->lkey() + 1, host[1].mr->rkey());
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 5u);
  EXPECT_EQ(wc.status, sw::WcStatus::LocProtErr) << sw::to_string(wc.status);
  EXPECT_EQ(counter(0, abi::CNT_TX_FRAMES), 0u) << "nothing may leave for a refused WQE";
  expect_other_qp_works(6);
}

TEST_F(BadInput, WqesAfterAnErrorAreFlushed) {
  // A good WRITE, a refused one, two more good ones in the same post, then one posted later:
  // the first completes, the refused one fails with LOC_PROT_ERR, the rest are flushed and
  // nothing after the error reaches the wire.
  write(0, 20, 0, 512, 0, host[0].mr->lkey(), host[1].mr->rkey());
  write(0, 21, 0, 512, 512, host[0].mr->lkey() + 1, host[1].mr->rkey());
  write(0, 22, 0, 512, 1024, host[0].mr->lkey(), host[1].mr->rkey());
  write(0, 23, 0, 512, 1536, host[0].mr->lkey(), host[1].mr->rkey());
  const sw::WcStatus want[] = {sw::WcStatus::Success, sw::WcStatus::LocProtErr, sw::WcStatus::WrFlushErr,
                               sw::WcStatus::WrFlushErr};
  for (uint64_t i = 0; i < 4; ++i) {
    const sw::WorkCompletion wc = wait_send_completion();
    EXPECT_EQ(wc.wr_id, 20 + i);
    EXPECT_EQ(wc.status, want[i]) << "wr " << 20 + i << ": " << sw::to_string(wc.status);
  }
  write(0, 24, 0, 512, 2048, host[0].mr->lkey(), host[1].mr->rkey());
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 24u);
  EXPECT_EQ(wc.status, sw::WcStatus::WrFlushErr) << sw::to_string(wc.status);
  std::vector<uint8_t> got(1536), orig(1536);
  host[1].be->mem_read(host[1].buf + 512, got.data(), got.size());
  for (uint32_t i = 0; i < 1536; ++i) orig[i] = uint8_t((512 + i) * 7 + 13 + 1);
  EXPECT_EQ(got, orig) << "a refused or flushed WRITE changed target memory";
  expect_other_qp_works(25);
}

TEST_F(BadInput, MalformedWqeCompletesInError) {
  // A WQE with an opcode the NIC does not know, written straight into the ring.
  sw::QueuePair& qp = *host[0].qps[0];
  abi::SqWqe w{};
  w.opcode = 0x7F;
  w.flags = abi::WQE_FLAG_SIGNALED;
  w.wr_id = 7;
  w.length = 16;
  w.lkey = host[0].mr->lkey();
  host[0].be->mem_write(qp.sq_base(), &w, sizeof(w));
  host[0].be->mmio_write32(abi::REG_DB_SQ, (1u << 16) | qp.qp_num());
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 7u);
  EXPECT_EQ(wc.status, sw::WcStatus::LocQpOpErr) << sw::to_string(wc.status);
  EXPECT_GE(counter(0, abi::CNT_DB_BAD), 1u);
  expect_other_qp_works(8);
}

TEST_F(BadInput, CorruptAndForeignFramesAreDroppedAndCounted) {
  // Frames from "host 0" built with the packet library: a good WRITE_ONLY whose ICRC is then
  // broken, one to the wrong UDP port, one truncated, one to another MAC.
  roce::Packet p = packet_from(0);
  p.bth.opcode = 0x0A;
  p.bth.dest_qp = host[1].qps[0]->qp_num();
  p.bth.psn = 100;
  p.bth.ack_req = true;
  p.reth.va = host[1].buf;
  p.reth.rkey = host[1].mr->rkey();
  p.reth.dma_len = 64;
  p.payload.assign(64, 0xEE);
  const std::vector<uint8_t> good = p.build();
  auto send = [&](std::vector<uint8_t> f) {
    Frame fr;
    fr.bytes = std::move(f);
    fr.t_sent_ns = world->now_ns();
    world->link(0).send(0, std::move(fr));
    run(400);
  };
  std::vector<uint8_t> f = good;
  f[f.size() - 1] ^= 0x01;  // ICRC
  send(f);
  f = good;
  f[37] ^= 0xFF;  // UDP destination port (4791 -> another port)
  send(f);
  f = good;
  f.resize(50);  // truncated inside the BTH
  send(f);
  f = good;
  f[5] ^= 0x40;  // another destination MAC
  send(f);
  EXPECT_EQ(counter(1, abi::CNT_RX_DROP_ICRC), 1u);
  EXPECT_EQ(counter(1, abi::CNT_RX_DROP_MALFORMED), 3u);
  std::vector<uint8_t> got(64);
  host[1].be->mem_read(host[1].buf, got.data(), got.size());
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(got[i], uint8_t(i * 7 + 13 + 1)) << "byte " << i;
  expect_other_qp_works(9);
}

// A READ response lost on the wire: the requester re-reads from the first missing response
// (a partial re-read: PSN, remote address and length of what is left), the READ completes
// successfully with every byte right, and the WRITE behind it completes too. `lost` is the
// 1-based index of the dropped response of an 8-response READ. A lost FIRST or MIDDLE shows
// as a gap in the responses; a lost LAST shows when the ACK of the WRITE behind the READ
// arrives (an ACK beyond an unfinished READ, an implied NAK).
void lost_read_response(BadInput& t, int lost) {
  int seen = 0;
  struct ReadReq {
    uint32_t psn;
    uint64_t va;
    uint32_t len;
  };
  std::vector<ReadReq> reqs;
  t.world->link(0).set_drop_filter([&seen, &reqs, lost](int from, const Frame& f) {
    if (f.bytes.size() < 14 + 20 + 8 + 12) return false;
    const uint8_t* b = f.bytes.data() + 14 + 20 + 8;  // BTH
    const uint8_t op = b[0];
    if (from == 0 && op == 0x0C) {  // READ request: BTH PSN, RETH va / length
      auto be = [b](int off, int n) {
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v = v << 8 | b[off + i];
        return v;
      };
      reqs.push_back({uint32_t(be(9, 3)), be(12, 8), uint32_t(be(24, 4))});
    }
    return from == 1 && op >= 0x0D && op <= 0x10 && ++seen == lost;
  });
  const uint64_t dst = t.host[0].buf + 0xA000, src = t.host[1].buf + 0x2000;
  sw::Sge sge{dst, 8 * 1024, t.host[0].mr->lkey()};  // 8 responses at MTU 1024
  sw::SendWr rd;
  rd.wr_id = 0x77;
  rd.sg_list = &sge;
  rd.num_sge = 1;
  rd.opcode = sw::WrOpcode::RdmaRead;
  rd.send_flags = sw::SendFlags::Signaled;
  rd.remote_addr = src;
  rd.rkey = t.host[1].mr->rkey();
  ASSERT_EQ(t.host[0].qps[0]->post_send(&rd), 0);
  t.write(0, 0x78, 0, 64, 0x100, t.host[0].mr->lkey(), t.host[1].mr->rkey());
  sw::WorkCompletion wc = t.wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x77u);
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  wc = t.wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x78u);
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  EXPECT_GE(seen, lost) << "the READ response to drop never came";
  std::vector<uint8_t> got(8192), want(8192);
  t.host[0].be->mem_read(dst, got.data(), got.size());
  t.host[1].be->mem_read(src, want.data(), want.size());
  EXPECT_EQ(got, want) << "the re-read READ's data";
  // the original request, then exactly one re-read of what was missing
  ASSERT_EQ(reqs.size(), 2u) << "READ requests on the wire";
  const uint32_t k = uint32_t(lost - 1);
  EXPECT_EQ(reqs[1].psn, (reqs[0].psn + k) & 0xFFFFFF) << "the re-read starts at the lost response";
  EXPECT_EQ(reqs[1].va, reqs[0].va + 1024u * k) << "the re-read's remote address";
  EXPECT_EQ(reqs[1].len, 8192u - 1024u * k) << "the re-read's length";
  EXPECT_EQ(t.counter(0, abi::CNT_REWIND), 1u);
  EXPECT_EQ(t.counter(0, abi::CNT_ACK_TIMEOUT), 0u) << "recovered by the timer, not at once";
  EXPECT_GE(t.counter(0, abi::CNT_TX_RETRANSMIT), 1u);
  t.world->link(0).set_drop_filter({});
  t.expect_other_qp_works(0x79);
}

TEST_F(BadInput, LostMiddleReadResponseIsReRead) { lost_read_response(*this, 3); }
TEST_F(BadInput, LostFirstReadResponseIsReRead) { lost_read_response(*this, 1); }
TEST_F(BadInput, LostLastReadResponseIsReRead) { lost_read_response(*this, 8); }

// ---------------------------------------------------------------- hostile READ responses
// A peer answers host 0's READs with forged (valid-ICRC) responses; the real responses are
// dropped on the wire. A response that does not fit its READ (length or opcode) must not be
// placed: the READ completes with BAD_RESP_ERR, not one byte outside [buffer, buffer +
// READ length) changes (nor inside: nothing is placed), and another QP keeps working.

constexpr uint64_t kRdOff = 0xA000;   // READ destination offset in host 0's buffer

bool g_forging = false;   // frames sent by the test itself pass every drop filter

bool is_read_response(const Frame& f) {
  if (g_forging || f.bytes.size() < 14 + 20 + 8 + 12) return false;
  const uint8_t op = f.bytes[14 + 20 + 8];
  return op >= 0x0D && op <= 0x10;
}

// A READ response from host 1 to host 0's QP q, built with the packet library.
void forge_read_response(BadInput& t, int q, uint8_t opcode, uint32_t psn, uint32_t len, uint8_t fill) {
  roce::Packet p = packet_from(1);
  p.bth.opcode = opcode;
  p.bth.dest_qp = t.host[0].qps[size_t(q)]->qp_num();
  p.bth.psn = psn;
  p.aeth.syndrome = 0x1F;
  p.aeth.msn = 1;
  p.payload.assign(len, fill);
  Frame fr;
  fr.bytes = p.build();
  fr.t_sent_ns = t.world->now_ns();
  g_forging = true;
  t.world->link(0).send(1, std::move(fr));
  g_forging = false;
}

// Posts a signaled READ of `len` bytes on host 0's QP q into kRdOff and runs until the READ
// request has left host 0 (its responses are dropped by the filter the caller set).
void post_read(BadInput& t, int q, uint64_t wr_id, uint32_t len, uint64_t loff = kRdOff) {
  t.post(0, q, sw::WrOpcode::RdmaRead, wr_id, loff, len, 0x2000);
}

// A 2048-byte READ on QP 1 (into offset 0xC000) completes successfully and lands.
void expect_read_lands(BadInput& t, uint64_t wr_id, const char* what) {
  post_read(t, 1, wr_id, 2048, 0xC000);
  const sw::WorkCompletion wc = t.wait_send_completion();
  EXPECT_EQ(wc.wr_id, wr_id);
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  std::vector<uint8_t> got(2048), want(2048);
  t.host[0].be->mem_read(t.host[0].buf + 0xC000, got.data(), got.size());
  t.host[1].be->mem_read(t.host[1].buf + 0x2000, want.data(), want.size());
  EXPECT_EQ(got, want) << what << " did not land";
}

// Host 0's buffer must still hold its initial pattern in [off, off + len).
void expect_untouched(BadInput& t, uint64_t off, uint32_t len, const char* what) {
  std::vector<uint8_t> got(len);
  t.host[0].be->mem_read(t.host[0].buf + off, got.data(), got.size());
  uint32_t bad = 0, first_bad = 0;
  for (uint32_t i = 0; i < len; ++i)
    if (got[i] != uint8_t((off + i) * 7 + 1)) {
      if (bad++ == 0) first_bad = i;
    }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " bytes changed, the first at offset 0x" << std::hex
                     << off + first_bad;
}

// One forged response answers a one-packet READ of 100 bytes (PSN 100 on QP 0).
void forged_single_response(BadInput& t, uint8_t opcode, uint32_t len) {
  t.world->link(0).set_drop_filter([](int from, const Frame& f) { return from == 1 && is_read_response(f); });
  post_read(t, 0, 0x90, 100);
  t.run(3000);  // the request is out and the real response dropped
  forge_read_response(t, 0, opcode, 100, len, 0xEE);
  const sw::WorkCompletion wc = t.wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x90u);
  EXPECT_EQ(wc.status, sw::WcStatus::BadRespErr) << sw::to_string(wc.status);
  t.run(2000);
  expect_untouched(t, kRdOff - 4096, 3 * 4096, "host 0's memory around the READ buffer");
  t.world->link(0).set_drop_filter({});
  t.expect_other_qp_works(0x91);
}

TEST_F(BadInput, OversizedReadResponseIsNotPlaced) {
  // 4096 bytes for a 100-byte READ: 3,996 of them would land past the buffer
  forged_single_response(*this, 0x10, 4096);
}
TEST_F(BadInput, ShortReadResponseIsNotPlaced) { forged_single_response(*this, 0x10, 50); }
TEST_F(BadInput, ReadResponseWithTheWrongOpcodeIsNotPlaced) {
  // A FIRST (full MTU) where the one-packet READ calls for ONLY: a response to another
  // request of that PSN (stale), dropped and not placed; the READ stays outstanding and is
  // requested again when the local ACK timer expires, then completes with the real data.
  world->link(0).set_drop_filter([](int from, const Frame& f) { return from == 1 && is_read_response(f); });
  post_read(*this, 0, 0x90, 100);
  run(3000);  // the request is out and the real response dropped
  forge_read_response(*this, 0, 0x0D, 100, 1024, 0xEE);
  run(5000);
  sw::WorkCompletion none{};
  EXPECT_EQ(host[0].scq->poll_cq(1, &none), 0) << "the READ completed on a stale response";
  expect_untouched(*this, kRdOff - 4096, 3 * 4096, "host 0's memory around the READ buffer");
  world->link(0).set_drop_filter({});
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x90u);
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  EXPECT_EQ(counter(0, abi::CNT_ACK_TIMEOUT), 1u);
  std::vector<uint8_t> got(100), want(100);
  host[0].be->mem_read(host[0].buf + kRdOff, got.data(), got.size());
  host[1].be->mem_read(host[1].buf + 0x2000, want.data(), want.size());
  EXPECT_EQ(got, want) << "the READ's data after the timeout";
  expect_untouched(*this, kRdOff + 100, 4096, "host 0's memory after the READ buffer");
  expect_other_qp_works(0x91);
}

TEST_F(BadInput, OverlongLastReadResponseIsNotPlaced) {
  // A 3-packet READ of 2,100 bytes (MTU 1024): the real FIRST and MIDDLE are placed, a forged
  // LAST of a full MTU (the READ has 52 bytes left) is refused.
  int seen = 0;
  world->link(0).set_drop_filter([&seen](int from, const Frame& f) {
    return from == 1 && is_read_response(f) && ++seen == 3;
  });
  post_read(*this, 0, 0x92, 2100);
  run(4000);
  ASSERT_EQ(seen, 3) << "the READ's three responses did not come";
  forge_read_response(*this, 0, 0x0F, 102, 1024, 0xEE);
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x92u);
  EXPECT_EQ(wc.status, sw::WcStatus::BadRespErr) << sw::to_string(wc.status);
  run(2000);
  expect_untouched(*this, kRdOff + 2048, 8192, "host 0's memory after the first two responses");
  world->link(0).set_drop_filter({});
  expect_other_qp_works(0x93);
}

TEST_F(BadInput, ReadResponsesOfAFailedQpAreNotPlaced) {
  // Two 2-packet READs on QP 0 (PSNs 100-101 and 102-103), every real response dropped. A
  // forged FIRST of the wrong length fails the first READ (BAD_RESP_ERR) and the QP; the
  // second READ's responses, forged right behind with the right opcodes and lengths, must
  // not be placed (that READ completes WR_FLUSH_ERR).
  int seen = 0;
  world->link(0).set_drop_filter([&seen](int from, const Frame& f) {
    return from == 1 && is_read_response(f) && ++seen > 0;
  });
  post_read(*this, 0, 0x94, 2048, kRdOff);
  post_read(*this, 0, 0x95, 2048, kRdOff + 0x1000);
  run(3000);
  forge_read_response(*this, 0, 0x0D, 100, 100, 0xEE);
  forge_read_response(*this, 0, 0x0D, 102, 1024, 0xEE);
  forge_read_response(*this, 0, 0x0F, 103, 1024, 0xEE);
  sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x94u);
  EXPECT_EQ(wc.status, sw::WcStatus::BadRespErr) << sw::to_string(wc.status);
  wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x95u);
  EXPECT_EQ(wc.status, sw::WcStatus::WrFlushErr) << sw::to_string(wc.status);
  run(3000);
  EXPECT_EQ(seen, 4) << "all four responses should have been sent";
  expect_untouched(*this, kRdOff, 0x1000 + 2048, "the failed QP's READ buffers");
  world->link(0).set_drop_filter({});
  expect_other_qp_works(0x96);
}

TEST_F(BadInput, FailedReadsFreeTheirContexts) {
  // 64 QPs (as many as there are READ contexts) each get a FIRST response of the wrong
  // length for a 2-packet READ (the real ones are dropped), so each READ fails (BAD_RESP_ERR)
  // and its QP stays in error. A READ on another QP must still go out and complete: failed
  // READs give their contexts back.
  constexpr int kQps = 64;
  for (int i = 0; i < kQps; ++i) add_qp_pair(4);   // QPs 2 .. 2 + kQps - 1
  world->link(0).set_drop_filter([](int from, const Frame& f) { return from == 1 && is_read_response(f); });
  for (int i = 0; i < kQps; ++i) {
    const int q = 2 + i;
    post_read(*this, q, 0x1000 + uint64_t(i), 2048);
    run(3000);
    forge_read_response(*this, q, 0x0D, 100 + uint32_t(q), 100, 0xEE);   // its first PSN: 100 + q
    const sw::WorkCompletion wc = wait_send_completion();
    ASSERT_EQ(wc.wr_id, 0x1000u + uint64_t(i));
    ASSERT_EQ(wc.status, sw::WcStatus::BadRespErr) << "READ " << i << ": " << sw::to_string(wc.status);
  }
  world->link(0).set_drop_filter({});
  expect_read_lands(*this, 0x97, "the READ after 64 failed ones");
}

TEST_F(BadInput, ResetFreesOutstandingReadContexts) {
  // 64 QPs (as many as there are READ contexts) each have a READ outstanding whose responses
  // are lost, and the host resets each QP straight from RTS (no ERR on the way, so no error
  // flush frees anything). The reset must give the READ contexts back: a READ on another QP
  // must then go out and complete.
  constexpr int kQps = 64;
  for (int i = 0; i < kQps; ++i) add_qp_pair(4);   // QPs 2 .. 2 + kQps - 1
  world->link(0).set_drop_filter([](int from, const Frame& f) { return from == 1 && is_read_response(f); });
  for (int i = 0; i < kQps; ++i) post_read(*this, 2 + i, 0x2000 + uint64_t(i), 2048);
  run(20000);  // every READ request has left; every response was dropped
  sw::WorkCompletion none{};
  ASSERT_EQ(host[0].scq->poll_cq(1, &none), 0) << "a READ completed although its responses were dropped";
  for (int i = 0; i < kQps; ++i) {
    sw::QpAttr r;
    r.qp_state = sw::QpState::Reset;
    host[0].qps[size_t(2 + i)]->modify(r, sw::QpAttrMask::State);
  }
  world->link(0).set_drop_filter({});
  expect_read_lands(*this, 0x98, "the READ after 64 QPs were reset with READs outstanding");
}

TEST_F(BadInput, DoorbellForMissingQpIsCountedAndHarmless) {
  host[0].be->mmio_write32(abi::REG_DB_SQ, (3u << 16) | 0xFFFFu);
  run(2000);
  EXPECT_EQ(counter(0, abi::CNT_DB_BAD), 1u);
  expect_other_qp_works(10);
}

// Host input the NIC refuses: a CQ ring that is not 32-byte aligned (its CQEs would land
// below the ring), a ring size the indices cannot hold, a QP ring that is not 64-byte aligned.
// Each command fails with a specific error the host library reports; the NIC keeps working.
TEST_F(BadInput, ImpossibleHostInputIsRefused) {
  auto refused = [&](uint8_t op, uint32_t idx, const void* p, size_t len, const char* what) {
    try {
      host[0].dev->execute(op, idx, p, len);
      ADD_FAILURE() << what << ": accepted";
    } catch (const sw::Error& e) {
      EXPECT_NE(std::string(e.what()).find("payload refused"), std::string::npos) << what << ": " << e.what();
    }
  };
  abi::CqContext cq{};
  cq.base = host[0].buf + 16;
  cq.log_size = 4;
  cq.flags = 1;
  refused(abi::CMD_CQ_WRITE, 40, &cq, sizeof cq, "CQ base +16");
  cq.base = host[0].buf;
  cq.log_size = 16;
  refused(abi::CMD_CQ_WRITE, 40, &cq, sizeof cq, "CQ of 2^16 entries");
  abi::QpContext qc{};
  qc.state = abi::QPS_INIT;
  qc.sq_base = host[0].buf + 8;
  refused(abi::CMD_QP_MODIFY, 40, &qc, sizeof qc, "SQ base +8");
  expect_other_qp_works(0xA0);
}

// A doorbell storm right after reset, while the scheduler still clears its per-QP state and
// takes no doorbells: the SQ doorbell writes wait on the register bus instead of being
// dropped (none counted as bad), and the NIC then works normally.
TEST(DoorbellStorm, NoDoorbellIsDropped) {
  WorldConfig wc;
  wc.seed = 12;
  World world(wc);
  SimBackend be(world, 0);
  for (uint32_t i = 0; i < 200; ++i) be.mmio_write32(abi::REG_DB_SQ, (i << 16) | (i % 64));
  for (int i = 0; i < 20000; ++i) world.step();
  sw::Device dev(be);
  EXPECT_EQ(dev.read_counter(abi::CNT_DB_BAD), 0u) << "SQ doorbells were dropped";
}

// ---------------------------------------------------------------- QP control: fence, host ERR
// Not bad input, but the same two-host fixture: IBA fence semantics and a QP the host moves to
// ERR in the middle of its traffic, then resets and connects again.
using QpControl = BadInput;

sw::WorkCompletion wait_cq(BadInput& t, sw::CompletionQueue& cq, const char* what) {
  sw::WorkCompletion wc{};
  for (int i = 0; i < 400000; ++i) {
    if (cq.poll_cq(1, &wc) == 1) return wc;
    t.world->step();
  }
  ADD_FAILURE() << "no completion on " << what << " after 400000 cycles";
  wc.status = sw::WcStatus::GeneralErr;
  return wc;
}

std::vector<uint8_t> mem(BadInput& t, int h, uint64_t off, uint32_t len) {
  std::vector<uint8_t> v(len);
  t.host[h].be->mem_read(t.host[h].buf + off, v.data(), v.size());
  return v;
}

// READ 16 KiB from host 1 into host 0's buffer at 0x2000, then SEND those 16 KiB back to
// host 1 (receive at 0x8000). Returns how many bytes host 1 received differ from what the
// READ fetched.
uint32_t read_then_send(BadInput& t, unsigned send_flags) {
  constexpr uint32_t kLen = 16384;
  t.post_recv(1, 0, 0x300, 0x8000, kLen);
  t.post(0, 0, sw::WrOpcode::RdmaRead, 0x301, 0x2000, kLen, 0x0, sw::SendFlags::Signaled);
  t.post(0, 0, sw::WrOpcode::Send, 0x302, 0x2000, kLen, 0, send_flags | sw::SendFlags::Signaled);
  for (uint64_t id = 0x301; id <= 0x302; ++id) {
    const sw::WorkCompletion wc = wait_cq(t, *t.host[0].scq, "host 0's send CQ");
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  }
  const sw::WorkCompletion rc = wait_cq(t, *t.host[1].rcq, "host 1's receive CQ");
  EXPECT_EQ(rc.status, sw::WcStatus::Success) << sw::to_string(rc.status);
  const std::vector<uint8_t> want = mem(t, 1, 0x0, kLen), got = mem(t, 1, 0x8000, kLen);
  EXPECT_EQ(mem(t, 0, 0x2000, kLen), want) << "the READ did not land";
  uint32_t diff = 0;
  for (uint32_t i = 0; i < kLen; ++i) diff += got[i] != want[i];
  return diff;
}

TEST_F(QpControl, FencedSendWaitsForTheReadBeforeIt) {
  const uint32_t diff = read_then_send(*this, sw::SendFlags::Fence);
  EXPECT_EQ(diff, 0u) << "the fenced SEND carried " << diff << " bytes read before the READ's data landed";
  expect_other_qp_works(0x303);
}

// The race the fence closes is real: without the fence the SEND's payload is read while the
// READ's responses are still arriving (so the fenced test above can fail).
TEST_F(QpControl, UnfencedSendRacesTheReadBeforeIt) {
  EXPECT_GT(read_then_send(*this, 0), 0u) << "without the fence the SEND still waited for the READ";
}

// A fence waits for READs only: a fenced WRITE behind a WRITE is not held back, and a fenced
// WQE behind READs of another QP is not held back either.
TEST_F(QpControl, FenceIgnoresReadsOfOtherQps) {
  // a long READ on QP 1 whose responses are dropped: it never completes
  world->link(0).set_drop_filter([](int from, const Frame& f) { return from == 1 && is_read_response(f); });
  post_read(*this, 1, 0x310, 8192);
  run(3000);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x311, 0x0, 4096, 0x9000, sw::SendFlags::Signaled);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x312, 0x1000, 4096, 0xA000,
           sw::SendFlags::Signaled | sw::SendFlags::Fence);
  for (uint64_t id = 0x311; id <= 0x312; ++id) {
    const sw::WorkCompletion wc = wait_cq(*this, *host[0].scq, "host 0's send CQ");
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  }
  EXPECT_EQ(mem(*this, 1, 0x9000, 8192), mem(*this, 0, 0x0, 8192));
  world->link(0).set_drop_filter({});
}

// The host moves QP 0 to ERR while a WRITE, a READ, a SEND and another WRITE are in flight:
// every send WR completes, in order, a prefix with SUCCESS and the rest WR_FLUSH_ERR; every
// posted receive of the QP completes WR_FLUSH_ERR; a WR posted in ERR is flushed without
// touching memory; the other QP keeps working. Then both ends reset QP 0 and connect it
// again with new PSNs while stale responses of the old connection may still arrive: new
// traffic works and nothing stale lands.
TEST_F(QpControl, HostDrivenErrFlushesAndTheQpReconnects) {
  for (int i = 0; i < 2; ++i) post_recv(1, 0, 0x400 + uint64_t(i), 0x8000 + uint64_t(i) * 0x800, 0x800);
  for (int i = 0; i < 3; ++i) post_recv(0, 0, 0x410 + uint64_t(i), 0xC000 + uint64_t(i) * 0x400, 0x400);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x420, 0x0, 16384, 0x0, sw::SendFlags::Signaled);
  post(0, 0, sw::WrOpcode::RdmaRead, 0x421, 0x4000, 16384, 0x4000, sw::SendFlags::Signaled);
  post(0, 0, sw::WrOpcode::Send, 0x422, 0x0, 2048, 0, sw::SendFlags::Signaled);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x423, 0x0, 16384, 0xA000, sw::SendFlags::Signaled);
  run(1500);
  sw::QpAttr a;
  a.qp_state = sw::QpState::Err;
  host[0].qps[0]->modify(a, sw::QpAttrMask::State);
  bool flushed = false;
  int n_flushed = 0;
  for (uint64_t id = 0x420; id <= 0x423; ++id) {
    const sw::WorkCompletion wc = wait_cq(*this, *host[0].scq, "host 0's send CQ");
    EXPECT_EQ(wc.wr_id, id);
    if (wc.status == sw::WcStatus::WrFlushErr) {
      flushed = true;
      ++n_flushed;
    } else {
      EXPECT_EQ(wc.status, sw::WcStatus::Success) << "wr " << id << ": " << sw::to_string(wc.status);
      EXPECT_FALSE(flushed) << "wr " << id << " completed SUCCESS after an earlier WR was flushed";
    }
  }
  EXPECT_GE(n_flushed, 1) << "ERR came too late to flush anything: the test does not test";
  for (uint64_t id = 0x410; id < 0x413; ++id) {
    const sw::WorkCompletion wc = wait_cq(*this, *host[0].rcq, "host 0's receive CQ");
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, sw::WcStatus::WrFlushErr) << sw::to_string(wc.status);
  }
  // posted in ERR: flushed, nothing written
  const std::vector<uint8_t> before = mem(*this, 1, 0xE000, 1024);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x430, 0x0, 1024, 0xE000, sw::SendFlags::Signaled);
  const sw::WorkCompletion late = wait_cq(*this, *host[0].scq, "host 0's send CQ");
  EXPECT_EQ(late.wr_id, 0x430u);
  EXPECT_EQ(late.status, sw::WcStatus::WrFlushErr) << sw::to_string(late.status);
  run(5000);
  EXPECT_EQ(mem(*this, 1, 0xE000, 1024), before) << "a WR posted in ERR wrote remote memory";
  expect_other_qp_works(0x431);

  // reset both ends and connect again with new PSNs; old responses may still be on the wire
  for (int h = 0; h < 2; ++h) {
    sw::QpAttr r;
    r.qp_state = sw::QpState::Reset;
    host[h].qps[0]->modify(r, sw::QpAttrMask::State);
  }
  sw::WorkCompletion drain{};
  while (host[1].rcq->poll_cq(1, &drain) == 1) {
  }
  for (int h = 0; h < 2; ++h) connect(h, 0, 0xFFFFF8);   // PSNs wrap during the new traffic
  const std::vector<uint8_t> old_read_target = mem(*this, 0, 0x4000, 16384);
  post_recv(1, 0, 0x440, 0x8000, 0x2000);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x441, 0x8000, 3072, 0xB000, sw::SendFlags::Signaled);
  post(0, 0, sw::WrOpcode::RdmaRead, 0x442, 0x9000, 8192, 0x6000, sw::SendFlags::Signaled);
  post(0, 0, sw::WrOpcode::Send, 0x443, 0x0, 0x2000, 0, sw::SendFlags::Signaled);
  for (uint64_t id = 0x441; id <= 0x443; ++id) {
    const sw::WorkCompletion wc = wait_cq(*this, *host[0].scq, "host 0's send CQ after reconnecting");
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, sw::WcStatus::Success) << "wr " << id << ": " << sw::to_string(wc.status);
  }
  const sw::WorkCompletion rc = wait_cq(*this, *host[1].rcq, "host 1's receive CQ after reconnecting");
  EXPECT_EQ(rc.wr_id, 0x440u);
  EXPECT_EQ(rc.status, sw::WcStatus::Success) << sw::to_string(rc.status);
  EXPECT_EQ(mem(*this, 1, 0xB000, 3072), mem(*this, 0, 0x8000, 3072)) << "WRITE after reconnecting";
  EXPECT_EQ(mem(*this, 0, 0x9000, 8192), mem(*this, 1, 0x6000, 8192)) << "READ after reconnecting";
  EXPECT_EQ(mem(*this, 1, 0x8000, 0x2000), mem(*this, 0, 0x0, 0x2000)) << "SEND after reconnecting";
  run(20000);
  EXPECT_EQ(mem(*this, 0, 0x4000, 16384), old_read_target) << "a stale READ response of the old connection landed";
}

// ---------------------------------------------------------------- recovery limits
// Reconnects QP 0 on both hosts with the given retry attributes (fresh PSNs p0).
void reconnect_qp0(BadInput& t, uint8_t timeout, uint8_t retry_cnt, uint8_t rnr_retry, uint32_t p0) {
  for (int h = 0; h < 2; ++h) {
    sw::QpAttr r;
    r.qp_state = sw::QpState::Reset;
    t.host[h].qps[0]->modify(r, sw::QpAttrMask::State);
  }
  t.retry.timeout = timeout;
  t.retry.retry_cnt = retry_cnt;
  t.retry.rnr_retry = rnr_retry;
  for (int h = 0; h < 2; ++h) t.connect(h, 0, p0);
  t.retry = {};
}

// The link from host 0 is cut: the first outstanding WR completes RETRY_EXC_ERR after
// retry_cnt + 1 local ACK timeouts (each resending it from its start), and the rest of the
// QP's queue is flushed. Timeout 4: 4.096 us * 16 = 65.5 us.
TEST_F(BadInput, LinkCutFailsAfterRetryCntTimeouts) {
  reconnect_qp0(*this, 4, 2, 7, 500);
  int cut = 0;
  world->link(0).set_drop_filter([&cut](int from, const Frame&) { return from == 0 && ++cut > 0; });
  const double t0 = world->now_ns();
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x600, 0x0, 8192, 0x1000);
  post(0, 0, sw::WrOpcode::RdmaRead, 0x601, 0x4000, 4096, 0x2000);
  post(0, 0, sw::WrOpcode::RdmaWrite, 0x602, 0x6000, 64, 0x3000);
  sw::WorkCompletion wc = wait_send_completion();
  const double t_fail = world->now_ns();
  EXPECT_EQ(wc.wr_id, 0x600u);
  EXPECT_EQ(wc.status, sw::WcStatus::RetryExcErr) << sw::to_string(wc.status);
  for (uint64_t id : {0x601u, 0x602u}) {
    wc = wait_send_completion();
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, sw::WcStatus::WrFlushErr) << sw::to_string(wc.status);
  }
  EXPECT_EQ(counter(0, abi::CNT_ACK_TIMEOUT), 3u) << "retry_cnt 2: two timeouts resend, the third fails";
  EXPECT_EQ(counter(0, abi::CNT_REWIND), 2u);
  EXPECT_GE(t_fail - t0, 3 * 65536.0) << "failed before three timeouts of 65.5 us";
  // every frame host 0 sent went into the cut: the first sending of the three WRs (8 + 1 + 1
  // packets) and two resends of everything from the head WQE
  EXPECT_EQ(counter(0, abi::CNT_TX_RETRANSMIT), 2u * 10u);
  EXPECT_EQ(cut, 30) << "frames host 0 sent into the cut link";
  world->link(0).set_drop_filter({});
  expect_other_qp_works(0x603);
}

// Receiver not ready, rnr_retry = 7 (no limit): the SEND is resent after each RNR wait, never
// before the RNR timer the NAK carries (min_rnr_timer 1: 0.01 ms), until the receive is
// posted; then it completes, and so does the receive.
TEST_F(BadInput, RnrRetryForeverWaitsForTheReceive) {
  std::vector<double> nak_t;
  world->link(0).set_drop_filter([&nak_t](int from, const Frame& f) {
    if (from == 1 && f.bytes.size() >= 14 + 20 + 8 + 12 + 4 && f.bytes[14 + 20 + 8] == 0x11 &&
        (f.bytes[14 + 20 + 8 + 12] & 0x60) == 0x20)
      nak_t.push_back(f.t_sent_ns);
    return false;
  });
  post(0, 0, sw::WrOpcode::Send, 0x610, 0x0, 1024, 0);
  for (int i = 0; i < 400000 && nak_t.size() < 4; ++i) world->step();
  ASSERT_GE(nak_t.size(), 4u) << "fewer than 4 RNR NAKs while no receive was posted";
  sw::WorkCompletion none{};
  EXPECT_EQ(host[0].scq->poll_cq(1, &none), 0) << "the SEND completed without a receive";
  for (size_t i = 1; i < nak_t.size(); ++i)
    EXPECT_GE(nak_t[i] - nak_t[i - 1], 10240.0) << "RNR retry " << i << " came before the RNR timer (10.24 us)";
  EXPECT_GE(counter(0, abi::CNT_RNR_WAIT), 3u);
  EXPECT_EQ(counter(0, abi::CNT_ACK_TIMEOUT), 0u);
  post_recv(1, 0, 0x611, 0x8000, 1024);
  const sw::WorkCompletion wc = wait_send_completion();
  EXPECT_EQ(wc.wr_id, 0x610u);
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  const sw::WorkCompletion rc = wait_cq(*this, *host[1].rcq, "host 1's receive CQ");
  EXPECT_EQ(rc.wr_id, 0x611u);
  EXPECT_EQ(rc.status, sw::WcStatus::Success) << sw::to_string(rc.status);
  EXPECT_EQ(mem(*this, 1, 0x8000, 1024), mem(*this, 0, 0x0, 1024)) << "the SEND's data";
  world->link(0).set_drop_filter({});
  expect_other_qp_works(0x612);
}

}  // namespace
}  // namespace srnic::sim
