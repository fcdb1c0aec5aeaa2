// The scheduler-invariant checker on synthetic transactions (no Verilator): a clean sequence
// passes and counts what it checked; a lost doorbell, a wait beyond the bound, a WQE executed
// twice, a skipped WQE, a message for a WQE never read and a WQE never sent are reported; go-back-N
// resends, second reads of a WQE, RNR waits, fences, messages that leave before the read of their
// WQE is published and WQEs completed in error are accepted.
#include "srnic/env/sched_checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "srnic/abi.hpp"
#include "srnic/roce/aeth.hpp"
#include "srnic/roce/packet.hpp"
#include "srnic/roce/psn.hpp"

namespace srnic::verif::env {
namespace {

namespace op = roce::op;

constexpr uint32_t kQpn = 0x11, kPeer = 0x22, kMtu = 1024;
constexpr uint64_t kSq = 0x10000, kScq = 0x20000, kRcq = 0x30000;
constexpr uint32_t kPsn = 0x100;
constexpr uint32_t kRkey = 0x4400;

struct Wqe {
  uint8_t op = abi::WR_WRITE;
  uint32_t len = 0;
  uint64_t raddr = 0;
  uint8_t flags = abi::WQE_FLAG_SIGNALED;
  uint32_t imm = 0;  // the wire bytes as read big-endian
};

// One QP of host 0 in RTS towards kPeer, SQ of `entries` WQEs at kSq, send CQ 1 and receive CQ 2.
class Bench {
 public:
  explicit Bench(uint32_t entries = 16, uint32_t psn = kPsn, SchedCheckConfig cfg = {})
      : top_(ctx_, "top"), chk(top_, "sched", cfg), entries_(entries) {
    cq_write(1, kScq);
    cq_write(2, kRcq);
    modify(abi::QPS_INIT, psn);
    modify(abi::QPS_RTR, psn);
    modify(abi::QPS_RTS, psn);
  }

  uint64_t errors(const char* id) const { return ctx_.reports().count_id(id); }
  uint64_t failures() const { return ctx_.reports().failures(); }
  std::string log() const { return out_.str(); }

  void csr_write(uint32_t addr, uint32_t data, uint64_t cycle = 0) {
    agents::AxiLiteTxn t;
    t.write = true;
    t.addr = addr;
    t.data = data;
    t.strb = 0xF;
    t.cycle_req = t.cycle_rsp = cycle;
    chk.csr(0).write(t);
  }
  void command(uint8_t opc, uint32_t index, const void* payload) {
    uint8_t p[64] = {};
    std::memcpy(p, payload, 64);
    for (int i = 0; i < 16; ++i) {
      uint32_t w;
      std::memcpy(&w, p + 4 * i, 4);
      csr_write(abi::reg_cmd_data(i), w);
    }
    csr_write(abi::REG_CMD, abi::cmd_word(opc, index));
    agents::AxiLiteTxn st;
    st.addr = abi::REG_CMD_STATUS;
    st.data = 1u << 16;  // done, one command accepted, no refusal
    chk.csr(0).write(st);
  }
  void cq_write(uint32_t cqn, uint64_t base) {
    abi::CqContext c{};
    c.base = base;
    c.log_size = 4;
    c.flags = 1;
    command(abi::CMD_CQ_WRITE, cqn, &c);
  }
  void modify(uint8_t state, uint32_t psn) {
    abi::QpContext c{};
    c.state = state;
    c.mtu = 3;  // 1024
    c.log_sq_size = uint8_t(__builtin_ctz(entries_));
    c.log_rq_size = 4;
    c.dest_qpn = kPeer;
    c.sq_psn = psn;
    c.send_cqn = 1;
    c.recv_cqn = 2;
    c.sq_base = kSq;
    c.rq_base = 0x40000;
    command(abi::CMD_QP_MODIFY, kQpn, &c);
  }
  void doorbell(uint16_t pi, uint64_t cycle) { csr_write(abi::REG_DB_SQ, uint32_t(pi) << 16 | kQpn, cycle); }

  // Posts WQE `idx` (the host writes the ring; the checker only sees what the NIC reads).
  void post(uint64_t idx, const Wqe& w) { ring_[idx] = w; }
  // n 100-byte WRITEs (one packet each) posted from index 0 and rung at cycle 1000
  void post_writes(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) post(i, Wqe{abi::WR_WRITE, 100, 0x1000 * (i + 1)});
    doorbell(uint16_t(n), 1000);
  }
  // The NIC reads WQEs [first, first + n) with the AR at `cycle`.
  void read(uint64_t first, uint32_t n, uint64_t cycle) {
    agents::Axi4ReadTxn t;
    t.id = 0;
    t.addr = kSq + (first % entries_) * 64;
    t.len = uint8_t(n - 1);
    t.data.assign(size_t(n) * 64, 0);
    for (uint32_t k = 0; k < n; ++k) {
      const Wqe& w = ring_.at(first + k);
      abi::SqWqe s{};
      s.opcode = w.op;
      s.flags = w.flags;
      s.idx = uint16_t(first + k);
      for (int b = 0; b < 4; ++b) s.imm[b] = uint8_t(w.imm >> (24 - 8 * b));
      s.wr_id = first + k;
      s.laddr = 0x80000;
      s.length = w.len;
      s.lkey = 0x100;
      s.raddr = w.raddr;
      s.rkey = kRkey;
      std::memcpy(t.data.data() + k * 64, &s, 64);
    }
    t.cycle_addr = cycle;
    t.cycle_first = t.cycle_last = cycle + 330;  // a PCIe round trip later
    chk.dma_read(0).write(t);
  }

  static std::vector<uint8_t> frame(uint8_t opcode, uint32_t dest, uint32_t psn, uint32_t payload,
                                    const roce::Reth* reth = nullptr, uint32_t imm = 0, uint8_t syndrome = 0) {
    roce::Packet p;
    p.ip4.src = 0x0A000001;
    p.ip4.dst = 0x0A000002;
    p.bth.opcode = opcode;
    p.bth.dest_qp = dest;
    p.bth.psn = psn;
    if (reth) p.reth = *reth;
    p.immdt.imm = imm;
    p.aeth.syndrome = syndrome;
    p.payload.assign(payload, 0x5A);
    return p.build();
  }
  void tx(std::vector<uint8_t> bytes, uint64_t cycle) {
    agents::AxisFrame f;
    f.bytes = std::move(bytes);
    f.cycle_first = f.cycle_last = cycle;
    chk.tx(0).write(f);
  }
  void rx(std::vector<uint8_t> bytes, uint64_t cycle) {
    agents::AxisFrame f;
    f.bytes = std::move(bytes);
    f.cycle_first = f.cycle_last = cycle;
    chk.rx(0).write(f);
  }
  // The NIC sends WQE idx as a request message from PSN psn (every packet); returns the next PSN.
  uint32_t send(uint64_t idx, uint32_t psn, uint64_t cycle) {
    const Wqe& w = ring_.at(idx);
    roce::Reth reth;
    reth.va = w.raddr;
    reth.rkey = kRkey;
    reth.dma_len = w.len;
    if (w.op == abi::WR_READ) {
      tx(frame(op::kRcReadRequest, kPeer, psn, 0, &reth), cycle);
      return roce::psn_add(psn, roce::read_psn_count(w.len, kMtu));
    }
    const bool write = w.op == abi::WR_WRITE || w.op == abi::WR_WRITE_IMM;
    const bool imm = w.op == abi::WR_WRITE_IMM || w.op == abi::WR_SEND_IMM;
    const uint32_t n = roce::read_psn_count(w.len, kMtu);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t bytes = k + 1 < n ? kMtu : w.len - (n - 1) * kMtu;
      uint8_t opc;
      if (n == 1)
        opc = write ? (imm ? op::kRcWriteOnlyImm : op::kRcWriteOnly) : (imm ? op::kRcSendOnlyImm : op::kRcSendOnly);
      else if (k == 0) opc = write ? op::kRcWriteFirst : op::kRcSendFirst;
      else if (k + 1 < n) opc = write ? op::kRcWriteMiddle : op::kRcSendMiddle;
      else opc = write ? (imm ? op::kRcWriteLastImm : op::kRcWriteLast) : (imm ? op::kRcSendLastImm : op::kRcSendLast);
      tx(frame(opc, kPeer, roce::psn_add(psn, k), bytes, write && k == 0 ? &reth : nullptr, w.imm), cycle + k);
    }
    return roce::psn_add(psn, n);
  }
  void ack(uint32_t psn, uint64_t cycle, uint8_t syndrome = roce::make_ack_syndrome(roce::kCreditInvalid)) {
    rx(frame(op::kRcAck, kQpn, psn, 0, nullptr, 0, syndrome), cycle);
  }
  // The NIC wrote a CQE for WQE idx in the send CQ, slot `slot`.
  void cqe(uint16_t idx, uint8_t status, uint32_t slot, uint64_t cycle) {
    abi::Cqe c{};
    c.qpn = kQpn;
    c.wqe_idx = idx;
    c.opcode = abi::WC_RDMA_WRITE;
    c.status = status;
    c.owner = 1;
    agents::Axi4WriteTxn t;
    t.addr = kScq + slot * 32;
    t.data.assign(agents::kAxiDataBytes, 0);
    t.strb.assign(agents::kAxiDataBytes, 0);
    const size_t off = t.addr % agents::kAxiDataBytes;
    std::memcpy(t.data.data() + off, &c, 32);
    std::fill(t.strb.begin() + long(off), t.strb.begin() + long(off) + 32, 1);
    t.cycle_addr = cycle;
    chk.dma_write(0).write(t);
  }

 private:
  std::ostringstream out_;
  uvm::Context ctx_{1, out_};
  uvm::Component top_;

 public:
  SchedChecker chk;

 private:
  uint32_t entries_;
  std::map<uint64_t, Wqe> ring_;
};

Wqe write(uint32_t len, uint64_t raddr) { return Wqe{abi::WR_WRITE, len, raddr}; }

TEST(SchedChecker, CleanSequencePassesAndCountsWhatItChecked) {
  Bench b;
  b.post(0, write(100, 0x1000));
  b.post(1, Wqe{abi::WR_SEND_IMM, 3000, 0, abi::WQE_FLAG_SIGNALED, 0xA1B2C3D4});
  b.post(2, Wqe{abi::WR_READ, 5000, 0x9000});
  b.doorbell(3, 1000);
  b.read(0, 3, 1100);
  uint32_t psn = b.send(0, kPsn, 1500);
  psn = b.send(1, psn, 1600);
  EXPECT_EQ(psn, kPsn + 4);
  const uint32_t end = b.send(2, psn, 1700);
  b.ack(kPsn + 3, 2500);
  b.rx(Bench::frame(op::kRcReadResponseFirst, kQpn, psn, kMtu), 3000);
  b.rx(Bench::frame(op::kRcReadResponseLast, kQpn, end - 1, 5000 - 4 * kMtu), 3100);
  b.chk.poll(5000);
  b.chk.check();
  EXPECT_EQ(b.failures(), 0u) << b.log();
  const SchedChecker::Stats& s = b.chk.stats();
  EXPECT_EQ(s.doorbells, 1u);
  EXPECT_EQ(s.wqes_rung, 3u);
  EXPECT_EQ(s.turns, 1u);
  EXPECT_EQ(s.wqes_fetched, 3u);
  EXPECT_EQ(s.waits, 1u);
  EXPECT_EQ(s.messages, 3u);
  EXPECT_EQ(s.resent, 0u);
  EXPECT_EQ(s.qps_checked, 1u);
  EXPECT_EQ(s.max_wait, 100u);  // doorbell at 1000, read at 1100
}

TEST(SchedChecker, BoundIsBasePlusOneBurstPerBusyQp) {
  Bench b;
  // the default config: 100 us + n * SCHED_BURST at 15 Gb/s (65536 B: 34.95 us), in 300 MHz cycles
  const auto cycles = [](double burst, int n) { return uint64_t((100000 + n * burst * 8 / 15) * 0.3); };
  EXPECT_EQ(b.chk.wait_bound(0, 0), 30000u);
  EXPECT_EQ(b.chk.wait_bound(0, 2), cycles(65536, 2));
  EXPECT_EQ(cycles(65536, 2), 50971u);
  b.csr_write(abi::REG_SCHED_BURST, 16384);  // the host shortens the turns of host 0
  EXPECT_EQ(b.chk.wait_bound(0, 2), cycles(16384, 2));
  EXPECT_EQ(b.chk.wait_bound(1, 2), cycles(65536, 2));
}

TEST(SchedChecker, LostDoorbellIsReportedAtTheEnd) {
  Bench b;
  b.post(0, write(64, 0x1000));
  b.post(1, write(64, 0x2000));
  b.doorbell(1, 1000);
  b.read(0, 1, 1100);
  b.send(0, kPsn, 1500);
  b.doorbell(2, 2000);  // the NIC never reads WQE 1
  b.chk.check();
  EXPECT_EQ(b.errors("SCHED_LOST_DOORBELL"), 1u) << b.log();
  EXPECT_NE(b.log().find("WQEs 1..1 were rung (the first by the doorbell at cycle 2000)"), std::string::npos)
      << b.log();
}

TEST(SchedChecker, UnreadWqeBeyondTheBoundIsReportedOnce) {
  Bench b;
  b.post(0, write(64, 0x1000));
  b.doorbell(1, 1000);
  const uint64_t bound = b.chk.wait_bound(0, 1);  // this QP is the one busy QP
  b.chk.poll(1000 + bound);
  EXPECT_EQ(b.errors("SCHED_WAIT"), 0u) << b.log();
  b.chk.poll(1000 + bound + 1);
  b.chk.poll(1000 + 3 * bound);
  EXPECT_EQ(b.errors("SCHED_WAIT"), 1u) << b.log();
  EXPECT_NE(b.log().find("WQE 0 (rung by the doorbell at cycle 1000) is still unread"), std::string::npos) << b.log();
}

TEST(SchedChecker, ReadBeyondTheBoundIsReported) {
  Bench b;
  b.post(0, write(64, 0x1000));
  b.doorbell(1, 1000);
  b.read(0, 1, 1000 + b.chk.wait_bound(0, 1) + 1);  // this QP is the one busy QP
  EXPECT_EQ(b.errors("SCHED_WAIT"), 1u) << b.log();
  EXPECT_NE(b.log().find("WQE 0 (rung by the doorbell at cycle 1000) was read at cycle"), std::string::npos) << b.log();
  Bench ok;
  ok.post(0, write(64, 0x1000));
  ok.doorbell(1, 1000);
  ok.read(0, 1, 1000 + ok.chk.wait_bound(0, 1));
  EXPECT_EQ(ok.failures(), 0u) << ok.log();
}

TEST(SchedChecker, WaitCountsFromTheQpsLastTurn) {
  Bench b;
  for (uint64_t i = 0; i < 16; ++i) b.post(i, write(60000, 0x1000 + i * 0x10000));
  b.doorbell(16, 1000);
  const uint64_t bound = b.chk.wait_bound(0, 0);
  // each turn reads 8 WQEs from the send cursor; WQE 8 comes only after many turns of WQE 0..7,
  // each within the bound of the one before
  uint64_t t = 1000;
  for (int turn = 0; turn < 6; ++turn) {
    t += bound - 10;
    b.read(0, 8, t);
  }
  b.read(8, 8, t + bound - 10);
  EXPECT_EQ(b.failures(), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().refetches, 40u);
}

TEST(SchedChecker, WaitStartsNoEarlierThanTheWqesDoorbell) {
  Bench b;
  for (uint64_t i = 0; i < 3; ++i) b.post(i, write(64, 0x1000 * (i + 1)));
  b.doorbell(2, 1000);
  b.doorbell(3, 1200);  // WQE 2 waits from here, not from the turn at 1100,
  b.read(0, 2, 1100);   // whose read is published after this doorbell (at its last beat, 1430)
  b.read(2, 1, 1200 + b.chk.wait_bound(0, 1));
  EXPECT_EQ(b.failures(), 0u) << b.log();
}

TEST(SchedChecker, RnrWaitStopsTheClock) {
  for (const bool rnr : {false, true}) {
    Bench b;
    b.post(0, Wqe{abi::WR_SEND, 64, 0});
    b.post(1, Wqe{abi::WR_SEND, 64, 0});
    b.doorbell(2, 1000);
    b.read(0, 1, 1100);  // WQE 1 waits from this turn on
    b.send(0, kPsn, 1200);
    if (rnr) b.ack(kPsn, 1300, roce::make_rnr_syndrome(1));  // 10 us + one timer sweep (109 us)
    b.read(1, 1, 1100 + b.chk.wait_bound(0, 1) + 20000);
    EXPECT_EQ(b.errors("SCHED_WAIT"), rnr ? 0u : 1u) << b.log();
    EXPECT_EQ(b.chk.stats().rnr_naks, rnr ? 1u : 0u);
  }
}

TEST(SchedChecker, FenceBehindAnUnansweredReadStopsTheClock) {
  Bench b;
  b.post(0, Wqe{abi::WR_READ, 4096, 0x9000});
  b.post(1, Wqe{abi::WR_SEND, 64, 0, abi::WQE_FLAG_SIGNALED | abi::WQE_FLAG_FENCE});
  b.post(2, Wqe{abi::WR_SEND, 64, 0});
  b.doorbell(3, 1000);
  b.read(0, 2, 1100);  // WQE 2 waits; the fenced WQE 1 waits for the READ
  const uint32_t next = b.send(0, kPsn, 1200);
  const uint64_t late = 1200 + 3 * b.chk.wait_bound(0, 1);
  b.rx(Bench::frame(op::kRcReadResponseLast, kQpn, next - 1, kMtu), late);
  b.read(1, 2, late + 100);
  b.send(1, next, late + 200);
  b.send(2, next + 1, late + 210);
  b.chk.check();
  EXPECT_EQ(b.failures(), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().fence_stalls, 1u);
}

TEST(SchedChecker, FenceBehindAReadNotYetSentStopsTheClock) {
  Bench b;
  b.post(0, Wqe{abi::WR_READ, 4096, 0x9000});
  b.post(1, Wqe{abi::WR_SEND, 64, 0, abi::WQE_FLAG_SIGNALED | abi::WQE_FLAG_FENCE});
  b.post(2, Wqe{abi::WR_SEND, 64, 0});
  b.doorbell(3, 1000);
  b.read(0, 2, 1100);  // the READ is planned, its request waits behind other QPs' packets
  const uint64_t late = 1100 + 3 * b.chk.wait_bound(0, 1);
  const uint32_t next = b.send(0, kPsn, late);
  b.rx(Bench::frame(op::kRcReadResponseLast, kQpn, next - 1, kMtu), late + 1000);
  b.read(1, 2, late + 1100);
  b.chk.check();
  EXPECT_EQ(b.errors("SCHED_WAIT"), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().fence_stalls, 1u);
}

TEST(SchedChecker, MessageMayLeaveBeforeTheReadOfItsWqeIsPublished) {
  Bench b;
  b.post(0, Wqe{abi::WR_SEND, 0, 0});
  b.post(1, write(3000, 0x2000));
  b.doorbell(2, 1000);
  // a zero-length SEND leaves from the first beat of an 8-WQE burst whose last beat comes later
  uint32_t psn = b.send(0, kPsn, 1200);
  b.read(0, 2, 1000);  // published at its last beat, cycle 1330
  psn = b.send(1, psn, 1400);
  b.chk.check();
  EXPECT_EQ(b.failures(), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().held, 1u);
  EXPECT_EQ(b.chk.stats().messages, 2u);
}

TEST(SchedChecker, WqeExecutedTwiceIsReported) {
  Bench b;
  b.post(0, write(100, 0x1000));
  b.post(1, write(200, 0x2000));
  b.doorbell(2, 1000);
  b.read(0, 2, 1100);
  const uint32_t psn = b.send(0, kPsn, 1200);
  b.send(0, psn, 1300);  // WQE 0 again, under a new PSN
  EXPECT_EQ(b.errors("SCHED_TWICE"), 1u) << b.log();
  EXPECT_NE(b.log().find("WQE 0 (WRITE, 100 bytes, raddr 0x1000, rkey 0x4400) executed twice"), std::string::npos)
      << b.log();
}

TEST(SchedChecker, SkippedWqeIsReported) {
  Bench b;
  b.post(0, write(100, 0x1000));
  b.post(1, write(200, 0x2000));
  b.post(2, write(300, 0x3000));
  b.doorbell(3, 1000);
  b.read(0, 3, 1100);
  const uint32_t psn = b.send(0, kPsn, 1200);
  b.send(2, psn, 1300);  // WQE 1 never leaves
  b.chk.check();
  EXPECT_EQ(b.errors("SCHED_SKIPPED"), 1u) << b.log();
  EXPECT_EQ(b.failures(), 1u) << b.log();
  EXPECT_NE(b.log().find("WQE 1 (WRITE, 200 bytes, raddr 0x2000, rkey 0x4400) skipped"), std::string::npos)
      << b.log();
}

TEST(SchedChecker, MessageForAWqeNeverReadIsReported) {
  Bench b;
  b.post(0, write(100, 0x1000));
  b.doorbell(1, 1000);
  b.send(0, kPsn, 1200);
  b.chk.poll(1200 + 6000);  // the read of WQE 0 might still be on the bus: 20 us of grace
  EXPECT_EQ(b.errors("SCHED_MISMATCH"), 0u) << b.log();
  b.chk.poll(1200 + 6001);
  EXPECT_EQ(b.errors("SCHED_MISMATCH"), 1u) << b.log();
  EXPECT_NE(b.log().find("the next WQE to start is WQE 0, never read"), std::string::npos) << b.log();
}

TEST(SchedChecker, WqeNeverSentIsReportedAtTheEnd) {
  Bench b;
  b.post(0, write(100, 0x1000));
  b.post(1, write(100, 0x2000));
  b.doorbell(2, 1000);
  b.read(0, 2, 1100);
  b.send(0, kPsn, 1200);
  b.chk.check();
  EXPECT_EQ(b.errors("SCHED_NOT_EXECUTED"), 1u) << b.log();
}

TEST(SchedChecker, GoBackNResendIsAllowed) {
  Bench b;
  b.post(0, write(100, 0x1000));
  b.post(1, write(2000, 0x2000));  // 2 packets
  b.post(2, write(300, 0x3000));
  b.doorbell(3, 1000);
  b.read(0, 3, 1100);
  uint32_t psn = b.send(0, kPsn, 1200);
  b.send(1, psn, 1300);
  b.ack(kPsn, 1400, roce::make_nak_syndrome(roce::NakCode::PsnSequenceError));  // lost: resend from kPsn
  b.read(0, 3, 1500);
  psn = b.send(0, kPsn, 1600);
  psn = b.send(1, psn, 1700);
  psn = b.send(2, psn, 1800);
  b.ack(psn - 1, 2000);
  b.chk.check();
  EXPECT_EQ(b.failures(), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().resent, 3u);
  EXPECT_EQ(b.chk.stats().messages, 3u);
}

// The in-flight cap: a request packet TX_WINDOW or more packets beyond the oldest PSN not
// answered on the wire is reported; an answer opens the window again; a CSR write changes it.
TEST(SchedChecker, PacketBeyondTheWindowIsReported) {
  SchedCheckConfig cfg;
  cfg.tx_window = 2;
  for (int answered : {0, 1}) {
    Bench b(16, kPsn, cfg);
    b.post_writes(3);
    b.read(0, 3, 1100);
    uint32_t psn = b.send(0, kPsn, 1200);
    psn = b.send(1, psn, 1300);
    if (answered) b.ack(kPsn, 1350);  // the oldest PSN is answered: room for one more
    b.send(2, psn, 1400);
    b.ack(psn, 1500);
    b.chk.check();
    EXPECT_EQ(b.errors("SCHED_WINDOW"), answered ? 0u : 1u) << b.log();
    EXPECT_EQ(b.chk.stats().max_in_flight, answered ? 1u : 2u);
  }
}

TEST(SchedChecker, WindowFollowsTheCsrAndZeroMeansNoCap) {
  for (uint32_t w : {0u, 4u}) {
    Bench b;  // 128 after reset; the host writes TX_WINDOW before the QP enters RTS again
    b.csr_write(abi::REG_TX_WINDOW, w);
    b.modify(abi::QPS_RESET, kPsn);
    b.modify(abi::QPS_INIT, kPsn);
    b.modify(abi::QPS_RTR, kPsn);
    b.modify(abi::QPS_RTS, kPsn);
    b.post_writes(6);
    b.read(0, 6, 1100);
    uint32_t psn = kPsn;
    for (uint64_t i = 0; i < 6; ++i) psn = b.send(i, psn, 1200 + 10 * i);
    b.ack(psn - 1, 2000);
    b.chk.check();
    EXPECT_EQ(b.errors("SCHED_WINDOW"), w ? 2u : 0u) << b.log();  // packets 4 and 5 beyond a window of 4
  }
}

// A QP whose window is full waits for its peer: the wait of its next WQE does not count that
// time (here longer than the wait bound); without a cap the same sequence is a late read.
TEST(SchedChecker, FullWindowStopsTheClock) {
  for (uint32_t w : {2u, 0u}) {
    SchedCheckConfig cfg;
    cfg.tx_window = w;
    Bench b(16, kPsn, cfg);
    b.post_writes(3);
    b.read(0, 2, 1100);
    uint32_t psn = b.send(0, kPsn, 1200);
    psn = b.send(1, psn, 1300);
    b.ack(psn - 1, 60000);  // far beyond the bound (about 40,500 cycles with one busy QP)
    b.read(2, 1, 60100);
    b.send(2, psn, 60200);
    b.ack(psn, 60300);
    b.chk.check();
    EXPECT_EQ(b.errors("SCHED_WAIT"), w ? 0u : 1u) << b.log();
    EXPECT_EQ(b.chk.stats().window_stalls, w ? 1u : 0u);
  }
}

// The same while the window is still full: the periodic poll judges the unread WQE with the
// stall open (a lost packet waiting for the ACK timer), and the open stall must count as
// stopped time up to the poll, not only once an answer closes it.
TEST(SchedChecker, FullWindowStopsTheClockWhileItLasts) {
  for (uint32_t w : {2u, 0u}) {
    SchedCheckConfig cfg;
    cfg.tx_window = w;
    Bench b(16, kPsn, cfg);
    b.post_writes(3);
    b.read(0, 2, 1100);
    uint32_t psn = b.send(0, kPsn, 1200);
    psn = b.send(1, psn, 1300);
    const uint64_t bound = b.chk.wait_bound(0, 1);
    b.chk.poll(1100 + 3 * bound);  // no answer yet: the window is full all this time
    EXPECT_EQ(b.errors("SCHED_WAIT"), w ? 0u : 1u) << b.log();
    b.ack(psn - 1, 1100 + 3 * bound + 100);
    b.chk.poll(1100 + 3 * bound + 100 + bound / 2);  // open again: the clock runs, within the bound
    b.read(2, 1, 1100 + 3 * bound + 100 + bound / 2 + 10);
    b.send(2, psn, 1100 + 3 * bound + 100 + bound / 2 + 20);
    b.ack(psn, 1100 + 3 * bound + 100 + bound / 2 + 30);
    b.chk.check();
    EXPECT_EQ(b.errors("SCHED_WAIT"), w ? 0u : 1u) << b.log();
  }
}

// A READ of 4 responses (WQE 0) sent at 1500, a WRITE (WQE 1) rung with it and not read yet.
// Returns the PSN after the READ.
uint32_t read_sent_write_behind(Bench& b) {
  b.post(0, Wqe{abi::WR_READ, 4 * kMtu, 0x9000});
  b.post(1, write(100, 0x1000));
  b.doorbell(2, 1000);
  b.read(0, 1, 1100);
  return b.send(0, kPsn, 1500);
}

// The requester drops READ responses beyond a gap (the first response lost) and waits for its
// timer with the window still full: those responses answer nothing and the clock stays stopped
// until the re-read's responses come in order. With every response in order the window opens
// at once and the same late read is a violation.
TEST(SchedChecker, ReadResponsesBeyondAGapKeepTheWindowShut) {
  for (const bool gap : {true, false}) {
    SchedCheckConfig cfg;
    cfg.tx_window = 2;
    Bench b(16, kPsn, cfg);
    const uint32_t next = read_sent_write_behind(b);  // 4 responses: the window (2) is full
    if (!gap) b.rx(Bench::frame(op::kRcReadResponseFirst, kQpn, kPsn, kMtu), 1600);
    b.rx(Bench::frame(op::kRcReadResponseMiddle, kQpn, kPsn + 1, kMtu), 1610);
    b.rx(Bench::frame(op::kRcReadResponseMiddle, kQpn, kPsn + 2, kMtu), 1620);
    b.rx(Bench::frame(op::kRcReadResponseLast, kQpn, next - 1, kMtu), 1630);
    const uint64_t late = 1500 + 3 * b.chk.wait_bound(0, 1);
    b.chk.poll(late);
    if (gap) {  // the timer fires: a re-read from the first missing PSN, answered in order
      b.send(0, kPsn, late + 10);
      for (uint32_t k = 0; k < 4; ++k)
        b.rx(Bench::frame(k == 0 ? op::kRcReadResponseFirst : k == 3 ? op::kRcReadResponseLast
                                                                     : op::kRcReadResponseMiddle,
                          kQpn, kPsn + k, kMtu),
             late + 100 + k);
    }
    b.read(1, 1, late + 200);
    b.send(1, next, late + 300);
    b.ack(next, late + 400);
    b.chk.check();
    EXPECT_EQ(b.errors("SCHED_WAIT"), gap ? 0u : 1u) << b.log();
    EXPECT_EQ(b.chk.stats().responses_out_of_order, gap ? 3u : 0u);
  }
}

// The NIC's window counts a READ done only at its last response: a READ of 4 responses with a
// window of 2 whose last response is lost keeps the window full until the timer's re-read is
// answered, although its first three responses came in order, so the clock of the next WQE
// stays stopped meanwhile. With the last response there the window opens at once and the same
// late read is a violation.
TEST(SchedChecker, ReadWithoutItsLastResponseKeepsTheWindowShut) {
  for (const bool lost : {true, false}) {
    SchedCheckConfig cfg;
    cfg.tx_window = 2;
    Bench b(16, kPsn, cfg);
    const uint32_t next = read_sent_write_behind(b);
    b.rx(Bench::frame(op::kRcReadResponseFirst, kQpn, kPsn, kMtu), 1600);
    b.rx(Bench::frame(op::kRcReadResponseMiddle, kQpn, kPsn + 1, kMtu), 1610);
    b.rx(Bench::frame(op::kRcReadResponseMiddle, kQpn, kPsn + 2, kMtu), 1620);
    if (!lost) b.rx(Bench::frame(op::kRcReadResponseLast, kQpn, next - 1, kMtu), 1630);
    const uint64_t late = 1500 + 3 * b.chk.wait_bound(0, 1);
    b.chk.poll(late);
    if (lost) {  // the timer fires: a re-read from the last response, answered
      b.send(0, kPsn, late + 10);
      b.rx(Bench::frame(op::kRcReadResponseLast, kQpn, next - 1, kMtu), late + 100);
    }
    b.read(1, 1, late + 200);
    b.send(1, next, late + 300);
    b.ack(next, late + 400);
    b.chk.check();
    EXPECT_EQ(b.errors("SCHED_WAIT"), lost ? 0u : 1u) << b.log();
  }
}

TEST(SchedChecker, WqeReadTwiceIsAllowed) {
  Bench b;
  for (uint64_t i = 0; i < 4; ++i) b.post(i, write(100 + uint32_t(i), 0x1000 * (i + 1)));
  b.doorbell(4, 1000);
  b.read(0, 4, 1100);  // fetch-and-drop: the turn reaches WQE 0 only
  uint32_t psn = b.send(0, kPsn, 1200);
  b.read(1, 3, 1300);
  psn = b.send(1, psn, 1400);
  b.read(2, 2, 1500);
  psn = b.send(2, psn, 1600);
  b.send(3, psn, 1610);
  b.chk.check();
  EXPECT_EQ(b.failures(), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().wqes_fetched, 4u);
  EXPECT_EQ(b.chk.stats().refetches, 5u);
}

TEST(SchedChecker, WqeMayBeMissingOnlyWithAnErrorCompletion) {
  for (const bool cqe : {false, true}) {
    Bench b;
    b.post(0, write(100, 0x1000));
    b.post(1, Wqe{7, 100, 0x2000});  // malformed: LOC_QP_OP_ERR, never sent
    b.post(2, write(300, 0x3000));
    b.doorbell(3, 1000);
    b.read(0, 3, 1100);
    const uint32_t psn = b.send(0, kPsn, 1200);
    if (cqe) b.cqe(1, abi::WC_LOC_QP_OP_ERR, 0, 1300);
    b.send(2, psn, 1400);
    EXPECT_EQ(b.errors("SCHED_SKIPPED"), cqe ? 0u : 1u) << b.log();
    EXPECT_EQ(b.chk.stats().unsent_in_error, cqe ? 1u : 0u);
  }
}

TEST(SchedChecker, FailedQpIsNotJudgedAtTheEnd) {
  Bench b;
  b.post(0, write(100, 0x1000));
  b.post(1, Wqe{abi::WR_WRITE, 100, 0x2000});
  b.post(2, write(300, 0x3000));
  b.doorbell(3, 1000);
  b.read(0, 3, 1100);
  b.send(0, kPsn, 1200);
  b.cqe(1, abi::WC_LOC_PROT_ERR, 0, 1300);  // bad lkey: not sent, the QP stops
  b.cqe(2, abi::WC_WR_FLUSH_ERR, 1, 1310);
  b.chk.poll(1000000);
  b.chk.check();
  EXPECT_EQ(b.failures(), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().qps_checked, 0u);
}

TEST(SchedChecker, PsnAndRingWraps) {
  Bench b(2, 0xFFFFFE);  // 2-entry ring, PSNs wrap inside the third message
  uint32_t psn = 0xFFFFFE;
  for (uint64_t i = 0; i < 6; ++i) {
    b.post(i, write(i == 2 ? 3000 : 100, 0x1000 * (i + 1)));
    b.doorbell(uint16_t(i + 1), 1000 + 1000 * i);
    b.read(i, 1, 1100 + 1000 * i);
    psn = b.send(i, psn, 1200 + 1000 * i);
    b.ack(roce::psn_add(psn, roce::kPsnMask), 1300 + 1000 * i);
  }
  EXPECT_EQ(psn, 0x000006u);
  b.chk.check();
  EXPECT_EQ(b.failures(), 0u) << b.log();
  EXPECT_EQ(b.chk.stats().messages, 6u);
}

}  // namespace
}  // namespace srnic::verif::env
