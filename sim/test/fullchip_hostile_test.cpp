// Full-chip hostile-peer tests: frames with a valid ICRC, built with the packet library, that a
// misbehaving or malicious peer could send: ACKs, NAKs and READ responses for PSNs the NIC
// never sent, requests ahead of the expected PSN, duplicates carrying other data, MIDDLE
// without FIRST, a LAST that overruns the RETH length, a 2 GiB READ, opcodes the NIC does not
// implement, a QPN that does not exist. Each case checks the standard outcome (NAK, counted
// drop, QP state), that no byte outside the permitted range changes, and that another QP
// keeps moving data.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim_backend.hpp"
#include "two_hosts.hpp"
#include "srnic/abi.hpp"
#include "srnic/roce/aeth.hpp"
#include "srnic/roce/icrc.hpp"
#include "srnic/roce/packet.hpp"
#include "srnic/sim/world.hpp"
#include "srnic/verbs.hpp"

namespace srnic::sim {
namespace {

constexpr uint64_t kMac[2] = {0x020000000011ull, 0x020000000012ull};
constexpr uint32_t kIp[2] = {0x0A000011u, 0x0A000012u};
constexpr uint32_t kMtu = 1024;
constexpr uint32_t kPsn0 = 100;   // QP q starts at PSN kPsn0 + q in both directions

uint8_t init_byte(int h, uint64_t off) { return uint8_t(off * 5 + uint64_t(h) * 29 + 3); }

class Hostile : public TwoHosts {
 public:
  Hostile() : TwoHosts({{kMac[0], kMac[1]}, {kIp[0], kIp[1]}, 12, &init_byte}) {}

  // A frame as host `from` would send it to the other host's QP q.
  roce::Packet packet(int from, int q, uint8_t opcode, uint32_t psn) {
    roce::Packet p;
    for (int i = 0; i < 6; ++i) {
      p.eth.dst[size_t(i)] = uint8_t(kMac[1 - from] >> (8 * (5 - i)));
      p.eth.src[size_t(i)] = uint8_t(kMac[from] >> (8 * (5 - i)));
    }
    p.ip4.src = kIp[from];
    p.ip4.dst = kIp[1 - from];
    p.udp.sport = 0xC011;
    p.bth.opcode = opcode;
    p.bth.dest_qp = host[1 - from].qps[size_t(q)]->qp_num();
    p.bth.psn = psn & 0xFFFFFF;
    return p;
  }
  // A request from host 0 to host 1's QP q with a RETH into host 1's buffer.
  roce::Packet request(int q, uint8_t opcode, uint32_t psn, uint64_t roff, uint32_t dma_len, uint32_t pay,
                       uint8_t fill) {
    roce::Packet p = packet(0, q, opcode, psn);
    p.bth.ack_req = true;
    p.reth.va = host[1].buf + roff;
    p.reth.rkey = host[1].mr->rkey();
    p.reth.dma_len = dma_len;
    p.payload.assign(pay, fill);
    return p;
  }
  // A response from host 1 to host 0's QP q.
  roce::Packet response(int q, uint8_t opcode, uint32_t psn, uint8_t syndrome, uint32_t pay) {
    roce::Packet p = packet(1, q, opcode, psn);
    p.aeth.syndrome = syndrome;
    p.aeth.msn = 0;
    p.payload.assign(pay, 0xEE);
    return p;
  }
  void forge(int from, const roce::Packet& p) {
    Frame fr;
    fr.bytes = p.build();
    fr.t_sent_ns = world->now_ns();
    world->link(0).send(from, std::move(fr));
    run(1500);
  }

  void write(int q, uint64_t wr_id, uint64_t loff, uint32_t len, uint64_t roff) {
    post(0, q, sw::WrOpcode::RdmaWrite, wr_id, loff, len, roff);
  }
  void read(int q, uint64_t wr_id, uint64_t loff, uint32_t len, uint64_t roff) {
    post(0, q, sw::WrOpcode::RdmaRead, wr_id, loff, len, roff);
  }
  // Waits for host 0's next send completion; false after `cycles` without one.
  bool completion(sw::WorkCompletion& wc, int cycles = 100000) {
    for (int i = 0; i < cycles; ++i) {
      if (host[0].scq->poll_cq(1, &wc) == 1) return true;
      world->step();
    }
    return false;
  }
  void run(int cycles) {
    for (int i = 0; i < cycles; ++i) world->step();
  }
  uint32_t counter(int h, int idx) { return host[h].dev->read_counter(idx); }

  // Host h's buffer in [off, off + len) must hold `want(offset)`.
  template <typename F>
  void expect_bytes(int h, uint64_t off, uint32_t len, F want, const char* what) {
    std::vector<uint8_t> got(len);
    host[h].be->mem_read(host[h].buf + off, got.data(), got.size());
    uint32_t bad = 0;
    uint64_t first = 0;
    for (uint32_t i = 0; i < len; ++i)
      if (got[i] != want(off + i) && bad++ == 0) first = off + i;
    EXPECT_EQ(bad, 0u) << what << ": " << bad << " bytes differ, the first at offset 0x" << std::hex << first;
  }
  void expect_untouched(int h, uint64_t off, uint32_t len, const char* what) {
    expect_bytes(h, off, len, [h](uint64_t o) { return init_byte(h, o); }, what);
  }
  // Host 0's QP q WRITEs 2 KiB from offset loff to host 1 at roff: completes and lands.
  void expect_write_works(int q, uint64_t wr_id, uint64_t loff, uint64_t roff) {
    write(q, wr_id, loff, 2048, roff);
    sw::WorkCompletion wc{};
    ASSERT_TRUE(completion(wc)) << "QP " << q << ": the WRITE never completed";
    EXPECT_EQ(wc.wr_id, wr_id);
    EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
    expect_bytes(1, roff, 2048, [loff, roff](uint64_t o) { return init_byte(0, o - roff + loff); },
                 "the WRITE's destination");
  }
  // The RX counters of host h that a test did not provoke stay 0.
  void expect_counters(int h, std::vector<std::pair<int, uint32_t>> want) {
    for (int idx : {abi::CNT_RX_DROP_ICRC, abi::CNT_RX_DROP_MALFORMED, abi::CNT_RX_DROP_QP, abi::CNT_RX_DROP_OVERFLOW,
                    abi::CNT_TX_NAK, abi::CNT_RX_NAK, abi::CNT_RX_DUP, abi::CNT_RX_PSN_ERR, abi::CNT_RX_ACCESS_ERR}) {
      uint32_t v = 0;
      for (const auto& [i, n] : want)
        if (i == idx) v = n;
      EXPECT_EQ(counter(h, idx), v) << "host " << h << " counter " << idx;
    }
  }

};

// ---------------------------------------------------------------- at the requester (host 0)

TEST_F(Hostile, AckForAPsnNeverSentCompletesNothing) {
  // Nothing was sent on QP 0; an ACK 40 PSNs ahead must not complete anything (the completion
  // engine would otherwise walk the empty send ring past its producer index).
  forge(1, response(0, 0x11, kPsn0 + 40, roce::kCreditInvalid, 0));
  sw::WorkCompletion wc{};
  EXPECT_FALSE(completion(wc, 2000)) << "a completion (wr_id " << wc.wr_id << ") for nothing posted";
  expect_write_works(0, 1, 0, 0x1000);
  expect_write_works(1, 2, 0x2000, 0x3000);
  expect_counters(0, {{abi::CNT_RX_PSN_ERR, 1}});
  expect_counters(1, {});
}

TEST_F(Hostile, AckBeyondTheWritesSentCompletesOnlyThoseSent) {
  // A WRITE completes; then an ACK 20 PSNs past it: a WRITE posted afterwards must complete
  // only once its own ACK came (its data in place), not through the forged one.
  expect_write_works(0, 1, 0, 0x1000);
  forge(1, response(0, 0x11, kPsn0 + 20, roce::kCreditInvalid, 0));
  expect_write_works(0, 2, 0x800, 0x4000);
  expect_counters(0, {{abi::CNT_RX_PSN_ERR, 1}});
}

// A copy of an old ACK (one the link duplicated, or one the ACK of everything overtook)
// arriving after everything sent is acknowledged acknowledges nothing: it must leave the QP's
// local ACK timer stopped. Before the timer's RENEW kick every accepted ACK restarted the timer,
// so the copy armed it for a QP with nothing outstanding and it expired a timeout later
// (cr_bidir_small_lossy --seed 2551318084: a held-back ACK arrived after the ACK of the QP's
// last WRITE, and a timeout episode read its WQEs ~100 us later; a WR posted meanwhile would
// have been resent and charged a retry). The timer must still catch a real loss afterwards,
// also when stale ACKs arrive while it runs.
TEST_F(Hostile, AStaleAckNeverArmsTheTimer) {
  retry.timeout = 1;  // 8.2 us
  for (int h = 0; h < 2; ++h) {
    sw::QpAttr r;
    r.qp_state = sw::QpState::Reset;
    host[h].qps[0]->modify(r, sw::QpAttrMask::State);
  }
  for (int h = 0; h < 2; ++h) connect(h, 0);
  expect_write_works(0, 1, 0, 0x1000);        // PSNs kPsn0, +1 (2 KiB at MTU 1024)
  expect_write_works(0, 2, 0x800, 0x1800);    // PSNs +2, +3: their ACK stops the timer
  const uint32_t tmo = counter(0, abi::CNT_ACK_TIMEOUT), resent = counter(0, abi::CNT_TX_RETRANSMIT);
  forge(1, response(0, 0x11, kPsn0 + 1, roce::kCreditInvalid, 0));  // the first WRITE's ACK again
  forge(1, response(0, 0x11, kPsn0 + 3, roce::kCreditInvalid, 0));  // and the last one's
  forge(1, response(0, 0x11, kPsn0 + 1, roce::kCreditInvalid, 0));
  // a timeout (8.2 us) plus three sweeps of every QP's timer (2 x 16384 cycles each)
  run(3 * 2 * 16384 + 4000);
  EXPECT_EQ(counter(0, abi::CNT_ACK_TIMEOUT), tmo) << "a stale ACK started a timeout with nothing outstanding";
  EXPECT_EQ(counter(0, abi::CNT_TX_RETRANSMIT), resent) << "a request was resent with nothing lost";
  // The ACK of the next WRITE is lost once; stale ACKs arrive while its timer runs: the timeout
  // still resends it, and it completes.
  srnic::sim::DropRule lose;
  lose.dir = 1;
  lose.op_lo = lose.op_hi = 0x11;
  lose.psn_lo = lose.psn_hi = kPsn0 + 5;
  lose.nth = 1;
  world->link(0).set_drop_rules({lose});
  write(0, 3, 0x1000, 2048, 0x2000);          // PSNs +4, +5
  run(1500);
  forge(1, response(0, 0x11, kPsn0 + 1, roce::kCreditInvalid, 0));
  sw::WorkCompletion wc{};
  ASSERT_TRUE(completion(wc)) << "the WRITE whose ACK was lost never completed";
  EXPECT_EQ(wc.wr_id, 3u);
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  EXPECT_EQ(counter(0, abi::CNT_ACK_TIMEOUT), tmo + 1) << "the lost ACK was not recovered by one timeout";
  EXPECT_GE(counter(0, abi::CNT_TX_RETRANSMIT), resent + 1);
}

TEST_F(Hostile, NakForAPsnNeverSentIsIgnored) {
  forge(1, response(0, 0x11, kPsn0 + 40, roce::make_nak_syndrome(roce::NakCode::RemoteAccessError), 0));
  sw::WorkCompletion wc{};
  EXPECT_FALSE(completion(wc, 2000)) << "a completion (status " << sw::to_string(wc.status) << ") for nothing posted";
  expect_write_works(0, 1, 0, 0x1000);
  expect_counters(0, {{abi::CNT_RX_PSN_ERR, 1}});
}

TEST_F(Hostile, ReadResponseForNoReadIsNotPlaced) {
  // No READ outstanding: a READ RESPONSE ONLY of 512 bytes at a PSN never sent, and one at
  // the PSN of a WRITE that was sent (no READ owns it), must not be placed anywhere, and a
  // later READ works.
  expect_write_works(0, 6, 0x3000, 0x5000);  // PSN 100
  forge(1, response(0, 0x10, kPsn0 + 3, roce::kCreditInvalid, 512));
  forge(1, response(0, 0x10, kPsn0, roce::kCreditInvalid, 512));
  expect_untouched(0, 0, kBuf, "host 0's buffer");
  read(0, 7, 0x6000, 3000, 0x200);
  sw::WorkCompletion wc{};
  ASSERT_TRUE(completion(wc)) << "the READ never completed";
  EXPECT_EQ(wc.status, sw::WcStatus::Success) << sw::to_string(wc.status);
  expect_bytes(0, 0x6000, 3000, [](uint64_t o) { return init_byte(1, o - 0x6000 + 0x200); }, "the READ's data");
  expect_counters(0, {{abi::CNT_RX_PSN_ERR, 2}});
}

// A READ fails at the requester while a response of it is on its way: a NAK (remote access
// error) for the READ's PSN arrives while none of the READ's responses did (REM_ACCESS_ERR),
// and a forged first response of the READ follows it d cycles later, for d across
// the whole time the NIC takes to write the failed READ's completion. Whatever d, no byte of
// the READ's buffer may be written after its completion is visible: a response taken before
// the failure reaches the RX engine is placed first, one taken after is dropped.
TEST_F(Hostile, FailedReadGetsNoByteAfterItsCompletion) {
  bool forging = false;
  world->link(0).set_drop_filter([&forging](int from, const Frame&) { return from == 1 && !forging; });
  const uint64_t rd_lo = host[0].buf + 0x8000, rd_hi = rd_lo + 4096;
  double t_data = -1;  // time of the last write into the READ's buffer in this trial
  world->pcie(0).set_write_observer([&](uint64_t addr, const uint8_t*, uint64_t strb, double t) {
    if (strb != 0 && addr + 64 > rd_lo && addr < rd_hi) t_data = t;
  });
  auto send = [&](const roce::Packet& p) {
    Frame fr;
    fr.bytes = p.build();
    fr.t_sent_ns = world->now_ns();
    forging = true;
    world->link(0).send(1, std::move(fr));
    forging = false;
  };
  int placed = 0, dropped = 0, trial = 0, first_dropped = -1;
  auto one_trial = [&](int d) {
    const uint32_t p0 = 1000 + 64 * uint32_t(trial++);
    for (int h = 0; h < 2; ++h) {  // a fresh connection each trial
      sw::QpAttr r;
      r.qp_state = sw::QpState::Reset;
      host[h].qps[0]->modify(r, sw::QpAttrMask::State);
    }
    sw::WorkCompletion drain{};
    while (host[0].scq->poll_cq(1, &drain) == 1) {
    }
    for (int h = 0; h < 2; ++h) connect(h, 0, p0);
    host[0].be->mem_write(rd_lo, std::vector<uint8_t>(4096, 0x11).data(), 4096);
    t_data = -1;
    read(0, 0x500, 0x8000, 4096, 0x100);     // PSNs p0 .. p0+3 (MTU 1024)
    write(0, 0x501, 0x0, 64, 0x2000);        // PSN p0+4
    run(1500);                               // both requests out, the real answers dropped
    send(response(0, 0x11, p0, roce::make_nak_syndrome(roce::NakCode::RemoteAccessError), 0));
    run(d);
    roce::Packet first = response(0, 0x0D, p0, roce::kCreditInvalid, 1024);
    first.payload.assign(1024, 0xEE);
    send(first);
    sw::WorkCompletion wc{};
    double t_cqe = -1;
    for (int i = 0; i < 20000 && t_cqe < 0; ++i) {
      world->step();
      if (host[0].scq->poll_cq(1, &wc) == 1) t_cqe = world->now_ns();
    }
    ASSERT_GE(t_cqe, 0) << "d " << d << ": the READ never completed";
    EXPECT_EQ(wc.wr_id, 0x500u) << "d " << d;
    EXPECT_EQ(wc.status, sw::WcStatus::RemAccessErr) << "d " << d << ": " << sw::to_string(wc.status);
    run(3000);
    ASSERT_EQ(host[0].scq->poll_cq(1, &wc), 1) << "d " << d << ": the WRITE behind the READ never completed";
    EXPECT_EQ(wc.wr_id, 0x501u) << "d " << d;
    EXPECT_EQ(wc.status, sw::WcStatus::WrFlushErr) << "d " << d << ": " << sw::to_string(wc.status);
    ASSERT_LE(t_data, t_cqe) << "d " << d << ": READ data landed " << (t_data - t_cqe)
                             << " ns after the failed READ's completion was visible";
    ++(t_data >= 0 ? placed : dropped);
    if (t_data < 0 && first_dropped < 0) first_dropped = d;
  };
  // every 8 cycles over the whole completion time, then every cycle where responses stop
  // being placed (the race is there: taken just before the failure, placed after it)
  for (int d = 0; d <= 1200 && !HasFatalFailure(); d += 8) one_trial(d);
  ASSERT_GE(first_dropped, 8) << "no response was ever dropped, or all were";
  for (int d = first_dropped - 8; d < first_dropped + 8 && !HasFatalFailure(); ++d) one_trial(d);
  ASSERT_FALSE(HasFatalFailure());
  // the sweep covers both sides of the failure: responses placed before it, dropped after
  EXPECT_GT(placed, 0) << "no forged response was ever placed: the sweep starts too late";
  EXPECT_GT(dropped, 0) << "every forged response was placed: the sweep ends too early";
  std::printf("[hostile] %d trials: response placed before the completion in %d, dropped in %d\n",
              placed + dropped, placed, dropped);
  world->link(0).set_drop_filter({});
  world->pcie(0).set_write_observer({});
  expect_write_works(1, 0x510, 0x2000, 0x3000);
}

// ---------------------------------------------------------------- at the responder (host 1)

TEST_F(Hostile, RequestsAheadOfTheExpectedPsnAreNakedOnce) {
  forge(0, request(0, 0x0A, kPsn0 + 5, 0x1000, 256, 256, 0xEE));
  forge(0, request(0, 0x0A, kPsn0 + 6, 0x1100, 256, 256, 0xEE));
  expect_untouched(1, 0, kBuf, "host 1's buffer");
  // the NAK (PSN sequence error, PSN 100) reaches host 0, which has nothing outstanding to
  // resend; the real request with PSN 100 then executes
  expect_write_works(0, 1, 0, 0x1000);
  expect_counters(1, {{abi::CNT_RX_PSN_ERR, 2}, {abi::CNT_TX_NAK, 1}});
  expect_counters(0, {{abi::CNT_RX_NAK, 1}});
}

TEST_F(Hostile, DuplicateIsAckedButNotPlacedAgain) {
  expect_write_works(0, 1, 0, 0x1000);  // PSN 100
  forge(0, request(0, 0x0A, kPsn0, 0x1000, 2048, 1024, 0xEE));
  forge(0, request(0, 0x0A, kPsn0 - 50, 0x1000, 1024, 1024, 0xEE));
  expect_bytes(1, 0x1000, 2048, [](uint64_t o) { return init_byte(0, o - 0x1000); }, "the first WRITE's data");
  expect_write_works(0, 2, 0x800, 0x3000);
  expect_counters(1, {{abi::CNT_RX_DUP, 2}});
  expect_counters(0, {});
}

// A forged request at the PSN host 1 expects next fails there with a class C error: NAK,
// host 1's QP 0 in error (later requests dropped unplaced); host 0 never sent that PSN, so it
// drops the NAK (counted); QP 1 goes on.
void expect_responder_failed(Hostile& t, int nak_counter, uint32_t nak_count) {
  t.write(0, 9, 0, 2048, 0x8000);     // reaches the QP in error: dropped, never ACKed
  sw::WorkCompletion wc{};
  EXPECT_FALSE(t.completion(wc, 20000)) << "the WRITE to the failed QP completed ("
                                        << sw::to_string(wc.status) << ")";
  t.expect_untouched(1, 0x8000, 2048, "the WRITE to the failed QP");
  t.expect_write_works(1, 10, 0x2000, 0x3000);
  std::vector<std::pair<int, uint32_t>> want = {{abi::CNT_TX_NAK, 1}};
  if (nak_counter >= 0) want.push_back({nak_counter, nak_count});
  t.expect_counters(1, want);
  t.expect_counters(0, {{abi::CNT_RX_PSN_ERR, 1}});
}

TEST_F(Hostile, MiddleWithoutFirstIsInvalidRequest) {
  forge(0, request(0, 0x07, kPsn0, 0, 0, kMtu, 0xEE));
  expect_untouched(1, 0, kBuf, "host 1's buffer");
  expect_responder_failed(*this, -1, 0);
}

TEST_F(Hostile, LastOverrunningTheRethLengthIsInvalidRequest) {
  // FIRST of a 1124-byte WRITE (placed: inside the range the R_Key allowed), then a LAST
  // with 1024 bytes where 100 remain
  roce::Packet first = request(0, 0x06, kPsn0, 0x1000, kMtu + 100, kMtu, 0xEE);
  first.bth.ack_req = false;   // (an ACK for it would be a second PSN host 0 never sent)
  forge(0, first);
  forge(0, request(0, 0x08, kPsn0 + 1, 0, 0, kMtu, 0xEF));
  expect_bytes(1, 0x1000, kMtu, [](uint64_t) { return uint8_t(0xEE); }, "the FIRST's payload");
  expect_untouched(1, 0x1000 + kMtu, kBuf - 0x1000 - kMtu, "host 1's buffer after the FIRST");
  expect_untouched(1, 0, 0x1000, "host 1's buffer before the FIRST");
  // host 0 sees a NAK for PSN 101, never sent
  expect_responder_failed(*this, -1, 0);
}

TEST_F(Hostile, TwoGigabyteReadIsRemoteAccessError) {
  forge(0, request(0, 0x0C, kPsn0, 0, 0x80000000u, 0, 0));
  EXPECT_EQ(counter(1, abi::CNT_TX_FRAMES), 1u) << "host 1 sent READ responses (or more than the NAK)";
  expect_responder_failed(*this, abi::CNT_RX_ACCESS_ERR, 1);
}

TEST_F(Hostile, UnknownOpcodesAndQpnsAreDroppedAndCounted) {
  // opcodes srnic does not implement (atomics, reserved, UC and UD SEND ONLY), then a valid
  // WRITE to a QPN that does not exist
  for (uint8_t opc : {uint8_t(0x13), uint8_t(0x14), uint8_t(0x24), uint8_t(0x64)}) {
    roce::Packet p = request(0, opc, kPsn0, 0x1000, 8, (opc == 0x13 || opc == 0x14) ? 0 : 8, 0xEE);
    p.atomic.va = host[1].buf + 0x1000;
    p.atomic.rkey = host[1].mr->rkey();
    forge(0, p);
  }
  {
    // reserved opcode 0x15: the library does not build it; patch a WRITE ONLY and its ICRC
    std::vector<uint8_t> f = request(0, 0x0A, kPsn0, 0x1000, 8, 8, 0xEE).build();
    f[14 + 20 + 8] = 0x15;
    roce::icrc_store(&f[f.size() - 4], roce::icrc_compute(&f[14], f.size() - 18));
    Frame fr;
    fr.bytes = std::move(f);
    fr.t_sent_ns = world->now_ns();
    world->link(0).send(0, std::move(fr));
    run(1500);
  }
  roce::Packet p = request(0, 0x0A, kPsn0, 0x1000, 64, 64, 0xEE);
  p.bth.dest_qp = 0x3F00;
  forge(0, p);
  expect_untouched(1, 0, kBuf, "host 1's buffer");
  expect_write_works(0, 1, 0, 0x1000);
  expect_counters(1, {{abi::CNT_RX_DROP_MALFORMED, 5}, {abi::CNT_RX_DROP_QP, 1}});
}

}  // namespace
}  // namespace srnic::sim
