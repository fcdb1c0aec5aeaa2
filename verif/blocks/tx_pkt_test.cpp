// srnic_tx_pkt bench (with srnic_qpc_ram, and srnic_tx_payload for the payload reads: bench top
// tx_pkt_tb): the connection table is programmed through the
// qp_cmd port (one qp_cmd_t per QP, random peer MAC/IP/QPN/UDP port and random values in
// every other field), random tx_job_t jobs (every RC opcode, random values in fields the
// opcode does not use, the resend mark random, payloads 0..4096 at any byte address) are
// fed on both ports with random valid gaps, and payload reads are answered from a C++ host
// memory (each byte a hash of its address) by an in-order AXI read slave with random AR
// back-pressure and latency. Checked: each AR is the next 64-byte-aligned piece of the accepted jobs' payload
// spans, as long as possible without crossing 4 KiB; the port arbitration (never both,
// strict alternation while both wait, each port in order); AXI-Stream rules on the output
// under random back-pressure (stable while stalled, tkeep contiguous, full beats before
// tlast); and every frame byte for byte against srnic_roce's builder for the same fields
// without its ICRC: MACs/IPs from the table and local_mac/local_ip, IPv4 length/checksum,
// UDP port/length, BTH (opcode, SE, PadCnt, dest QP, AckReq, PSN), RETH/AETH/ImmDt, the
// payload from host memory and the zero pad. A resent job (tx_job_t.resend, go-back-N) gives
// the same frame as its original, byte for byte. Every job carries a random incarnation
// (tx_job_t.gen); m_tqpn/m_tgen name the job's QP and incarnation on every beat of its frame,
// offered or held (decision 109: srnic_tx_icrc drops the frames of QPs reset since).
#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "Vtx_pkt_tb.h"
#include "frames.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

// Cycles a QP_MODIFY may wait: the context RAMs' reset sweep (one entry per cycle) plus slack.
constexpr int kCmdWait = BENCH_NUM_QPS + 20;

constexpr uint32_t kQps = BENCH_NUM_QPS;


constexpr uint64_t kLocalMac = 0x02AB00000001ull;
constexpr uint32_t kLocalIp = 0x0A000001;

// Host memory: every byte is a hash of its address.
inline uint8_t mem_byte(uint64_t a) {
  uint64_t s = (a >> 3) ^ 0x5DEECE66Dull;
  return uint8_t(splitmix64(s) >> (8 * (a & 7)));
}

struct Conn {
  uint64_t dmac = 0;
  uint32_t dip = 0, dqpn = 0;
  uint16_t sport = 0;
};
struct Job {
  uint32_t qpn, psn, reth_rkey, reth_len, aeth_msn, imm;
  uint8_t opcode, aeth_syn, gen;
  bool ackreq, se, resend;
  uint64_t reth_va, pay_addr;
  uint32_t pay_len;
  uint64_t id;  // per port sequence number
};
struct Expected {
  std::vector<uint8_t> frame;
  int port;
  uint64_t id;
  uint32_t qpn;
  uint8_t gen;
};
struct Span {
  uint64_t addr;
  uint32_t beats;
};
struct RBeat {
  uint64_t at, addr;
};

roce::MacAddr mac_of(uint64_t v) {
  roce::MacAddr m;
  for (int i = 0; i < 6; ++i) m[size_t(i)] = uint8_t(v >> (40 - 8 * i));
  return m;
}

class TxPktBench : public ::testing::Test {
 public:
  TxPktBench() : rng(test_seed()), dut(rng.next()), conns(kQps) {}

  struct Knobs {
    unsigned req = 50, rsp = 50, ar = 80, out = 80, lat = 30;
    unsigned zero = 10, big = 30;
  };

  void reset() {
    dut->qp_cmd_valid = 0;
    dut->req_valid = dut->rsp_valid = 0;
    dut->ar_ready = dut->r_valid = dut->m_tready = 0;
    dut->local_mac = kLocalMac;
    dut->local_ip = kLocalIp;
    dut.reset();
  }

  // QP_MODIFY with a random connection for q (all other command fields random too; the state
  // any but RESET, which leaves the connection as it is: ResetKeepsTheConnection).
  void program(uint32_t q) {
    Conn c;
    c.dmac = rng.next() >> 16;
    c.dip = rng.u32();
    c.dqpn = rng.u32() & 0xFFFFFF;
    c.sport = uint16_t(rng.u32());
    for (size_t i = 0; i < kQpCmd.widths.size(); ++i) set_bits(dut->qp_cmd, kQpCmd.at(i).lsb, kQpCmd.at(i).width, rng.next());
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->qp_cmd, kQpCmd.at(f).lsb, kQpCmd.at(f).width, v); };
    put(kCQpn, q);
    put(kCDmac, c.dmac);
    put(kCDip, c.dip);
    put(kCDqpn, c.dqpn);
    put(kCSport, c.sport);
    put(kCState, 1 + rng.below(7));
    command();
    conns[q] = c;
    if (std::find(hot.begin(), hot.end(), q) == hot.end()) hot.push_back(q);
  }

  // QP_MODIFY to RESET for q, every other field random: taken at once, the connection kept.
  void reset_qp(uint32_t q) {
    fill_reset_cmd(dut->qp_cmd, rng, q);
    dut->req_valid = dut->rsp_valid = dut->ar_ready = dut->r_valid = dut->m_tready = 0;
    dut->qp_cmd_valid = 1;
    dut.eval();
    EXPECT_TRUE(dut->qp_cmd_ready) << "QP_MODIFY to RESET of QP " << q << " not taken at once";
    dut.tick();
    dut->qp_cmd_valid = 0;
  }

  void command() {
    dut->req_valid = dut->rsp_valid = dut->ar_ready = dut->r_valid = dut->m_tready = 0;  // only the command moves
    dut->qp_cmd_valid = 1;
    int i = 0;
    for (; i < kCmdWait; ++i) {  // the context RAMs clear themselves after reset
      dut.eval();
      const bool rdy = dut->qp_cmd_ready;
      dut.tick();
      if (rdy) break;
    }
    dut->qp_cmd_valid = 0;
    ASSERT_LT(i, kCmdWait) << "QP_MODIFY not taken";
  }

  Job random_job(int port, const Knobs& k) {
    Job j{};
    j.qpn = hot[rng.below(hot.size())];
    j.gen = uint8_t(rng.below(16));
    j.opcode = port == 0 ? uint8_t(rng.below(13)) : uint8_t(rng.range(0x0D, 0x11));
    if (rng.percent(10)) j.opcode = uint8_t(rng.below(0x12));  // either port may carry any
    j.psn = rng.u32() & 0xFFFFFF;
    j.ackreq = rng.percent(50);
    j.se = rng.percent(50);
    j.resend = rng.percent(50);  // not on the wire: the frame is the same either way
    j.reth_va = rng.next();
    j.reth_rkey = rng.u32();
    j.reth_len = rng.u32();
    j.aeth_syn = rng.u8();
    j.aeth_msn = rng.u32() & 0xFFFFFF;
    j.imm = rng.u32();
    j.pay_addr = rng.next() >> 2;
    if (rng.percent(20)) j.pay_addr = (j.pay_addr | 0xFFF) - rng.below(64);  // near a 4 KiB end
    const bool pay = roce::opcode_info(j.opcode)->has_payload;
    if (!pay || rng.percent(k.zero)) j.pay_len = 0;
    else if (rng.percent(k.big)) j.pay_len = uint32_t(rng.range(3500, 4096));
    else j.pay_len = uint32_t(rng.range(1, rng.percent(50) ? 200 : 4096));
    j.id = next_id[port]++;
    return j;
  }

  void drive(int port, const Job& j) {
    auto& sig = port == 0 ? dut->req_job : dut->rsp_job;
    auto put = [&](size_t f, uint64_t v) { set_bits(sig, kJob.at(f).lsb, kJob.at(f).width, v); };
    put(kJobGen, j.gen);
    put(kQpn, j.qpn);
    put(kOpcode, j.opcode);
    put(kPsn, j.psn);
    put(kAckreq, j.ackreq);
    put(kSe, j.se);
    put(kRethVa, j.reth_va);
    put(kRethRkey, j.reth_rkey);
    put(kRethLen, j.reth_len);
    put(kAethSyn, j.aeth_syn);
    put(kAethMsn, j.aeth_msn);
    put(kImm, j.imm);
    put(kPayAddr, j.pay_addr);
    put(kPayLen, j.pay_len);
    put(kResend, j.resend);
  }

  // The builder's frame for a job, without the ICRC.
  std::vector<uint8_t> expected_frame(const Job& j) const {
    const Conn& c = conns[j.qpn];
    roce::Packet p;
    p.eth.dst = mac_of(c.dmac);
    p.eth.src = mac_of(kLocalMac);
    p.ip4.tos = 0x02;
    p.ip4.ttl = 64;
    p.ip4.id = 0;
    p.ip4.flags_frag = 0x4000;
    p.ip4.src = kLocalIp;
    p.ip4.dst = c.dip;
    p.udp.sport = c.sport;
    p.udp.checksum = 0;
    p.bth.opcode = j.opcode;
    p.bth.se = j.se;
    p.bth.dest_qp = c.dqpn;
    p.bth.ack_req = j.ackreq;
    p.bth.psn = j.psn;
    p.reth.va = j.reth_va;
    p.reth.rkey = j.reth_rkey;
    p.reth.dma_len = j.reth_len;
    p.aeth.syndrome = j.aeth_syn;
    p.aeth.msn = j.aeth_msn;
    p.immdt.imm = j.imm;
    p.payload.resize(j.pay_len);
    for (uint32_t i = 0; i < j.pay_len; ++i) p.payload[i] = mem_byte(j.pay_addr + i);
    auto f = p.build();
    f.resize(f.size() - roce::kIcrcSize);
    return f;
  }

  void accept(int port, const Job& j) {
    expected.push_back({expected_frame(j), port, j.id, j.qpn, j.gen});
    if (j.pay_len != 0) {
      const uint64_t a0 = j.pay_addr & ~63ull;
      const uint64_t a1 = (j.pay_addr + j.pay_len + 63) & ~63ull;
      spans.push_back({a0, uint32_t((a1 - a0) / 64)});
    }
    ++accepted[port];
  }

  // ------------------------------------------------------------ per cycle
  void cycle(const Knobs& k) {
    const uint64_t c = dut.cycle();
    for (int p = 0; p < 2; ++p) {
      if (!holding[p] && !pending[p].empty() && rng.percent(p == 0 ? k.req : k.rsp)) {
        holding[p] = true;
        drive(p, pending[p].front());
      }
    }
    dut->req_valid = holding[0];
    dut->rsp_valid = holding[1];
    dut->ar_ready = rng.percent(k.ar);
    const bool r = !rbeats.empty() && rbeats.front().at <= c;
    dut->r_valid = r;
    if (r) {
      uint8_t b[64];
      for (int i = 0; i < 64; ++i) b[i] = mem_byte(rbeats.front().addr + uint64_t(i));
      for (int w = 0; w < 16; ++w) std::memcpy(&dut->r_data[size_t(w)], b + 4 * w, 4);
    } else {
      for (int w = 0; w < 16; ++w) dut->r_data[size_t(w)] = rng.u32();
    }
    dut->m_tready = rng.percent(k.out);
    dut.eval();

    // arbitration
    const bool fr = dut->req_valid && dut->req_ready, fs = dut->rsp_valid && dut->rsp_ready;
    ASSERT_FALSE(dut->req_ready && dut->rsp_ready) << "cycle " << c << ": both ports taken";
    if (fr || fs) {
      const int port = fr ? 0 : 1;
      if (holding[0] && holding[1]) {
        EXPECT_EQ(port, last_port ^ 1) << "cycle " << c << ": round-robin broken (both ports waiting)";
        ++contended;
      }
      last_port = port;
      accept(port, pending[port].front());
    }
    // payload reads
    if (ar_stalled) {
      ASSERT_TRUE(dut->ar_valid) << "cycle " << c << ": ar_valid dropped before ar_ready";
      ASSERT_EQ(uint64_t(dut->ar_addr), ar_hold_addr) << "cycle " << c << ": ar_addr changed while stalled";
      ASSERT_EQ(unsigned(dut->ar_len), ar_hold_len) << "cycle " << c << ": ar_len changed while stalled";
    }
    ar_stalled = dut->ar_valid && !dut->ar_ready;
    ar_hold_addr = dut->ar_addr;
    ar_hold_len = dut->ar_len;
    if (dut->ar_valid && dut->ar_ready) take_ar(c, k);
    if (HasFatalFailure()) return;
    // output
    if (out_stalled) {
      ASSERT_TRUE(dut->m_tvalid) << "cycle " << c << ": m_tvalid dropped";
      bool same = dut->m_tkeep == out_hold.keep && bool(dut->m_tlast) == out_hold.last;
      for (int w = 0; w < 16; ++w) same = same && dut->m_tdata[size_t(w)] == out_hold.data[w];
      ASSERT_TRUE(same) << "cycle " << c << ": output beat changed while stalled";
    }
    out_stalled = dut->m_tvalid && !dut->m_tready;
    out_hold.keep = dut->m_tkeep;
    out_hold.last = dut->m_tlast;
    for (int w = 0; w < 16; ++w) out_hold.data[w] = dut->m_tdata[size_t(w)];
    if (dut->m_tvalid) check_tag(c);
    if (dut->m_tvalid && dut->m_tready) take_beat(c);
    if (HasFatalFailure()) return;
    if (dut->m_tvalid) ++out_valid_cycles;
    dut.tick();
    if (r) rbeats.pop_front();
    if (fr || fs) {
      const int port = fr ? 0 : 1;
      pending[port].pop_front();
      holding[port] = false;
    }
  }

  void take_ar(uint64_t c, const Knobs& k) {
    const uint64_t a = dut->ar_addr;
    const unsigned n = unsigned(dut->ar_len) + 1;
    ASSERT_FALSE(spans.empty()) << "cycle " << c << ": payload read 0x" << std::hex << a << " not asked for";
    Span& s = spans.front();
    ASSERT_EQ(a, s.addr) << "cycle " << c << ": payload read address";
    const unsigned to4k = unsigned(4096 - (a & 4095)) / 64;
    ASSERT_EQ(n, std::min(s.beats, to4k)) << "cycle " << c << ": burst length at 0x" << std::hex << a
                                         << " (span beats left " << std::dec << s.beats << ")";
    ASSERT_LE((a & 4095) + uint64_t(n) * 64, 4096u) << "cycle " << c << ": burst crosses 4 KiB";
    s.addr += uint64_t(n) * 64;
    s.beats -= n;
    if (s.beats == 0) spans.pop_front();
    uint64_t at = std::max(c + 1 + rng.below(k.lat + 1), last_r_at + 1);
    for (unsigned i = 0; i < n; ++i) {
      rbeats.push_back({at + i, a + 64ull * i});
    }
    last_r_at = at + n - 1;
    ++ars;
    ar_beats += n;
  }

  // The frame on the output names its job's QP and incarnation, on every beat.
  void check_tag(uint64_t c) {
    ASSERT_FALSE(expected.empty()) << "cycle " << c << ": beat offered with no job taken";
    const Expected& e = expected.front();
    EXPECT_EQ(uint32_t(dut->m_tqpn), e.qpn) << "cycle " << c << ": m_tqpn of frame " << frames << " (port " << e.port
                                            << " job " << e.id << ")";
    EXPECT_EQ(unsigned(dut->m_tgen), unsigned(e.gen)) << "cycle " << c << ": m_tgen of frame " << frames << " (port "
                                                      << e.port << " job " << e.id << ")";
    ++tagged_beats;
  }

  void take_beat(uint64_t c) {
    const uint64_t keep = dut->m_tkeep;
    const bool last = dut->m_tlast;
    ASSERT_EQ(keep & (keep + 1), 0u) << "cycle " << c << ": tkeep not contiguous: " << std::hex << keep;
    ASSERT_NE(keep, 0u) << "cycle " << c;
    if (!last) {
      ASSERT_EQ(keep, ~0ull) << "cycle " << c << ": partial beat before tlast";
    }
    uint8_t b[64];
    for (int w = 0; w < 16; ++w) std::memcpy(b + 4 * w, &dut->m_tdata[size_t(w)], 4);
    for (int i = 0; i < 64 && ((keep >> i) & 1); ++i) cur.push_back(b[i]);
    ++out_beats;
    if (!last) return;
    ASSERT_FALSE(expected.empty()) << "cycle " << c << ": frame out with no job taken";
    const Expected& e = expected.front();
    const std::string at = "cycle " + std::to_string(c) + ": frame " + std::to_string(frames) + " (port " +
                           std::to_string(e.port) + " job " + std::to_string(e.id) + ", " +
                           roce::opcode_name(e.frame[42]) + ")";
    EXPECT_EQ(e.id, checked_id[e.port]) << at << ": port order";
    if (keep_frames) got[e.port].push_back(cur);
    checked_id[e.port] = e.id + 1;
    EXPECT_EQ(cur.size(), e.frame.size()) << at << ": length";
    size_t d = 0;
    while (d < cur.size() && d < e.frame.size() && cur[d] == e.frame[d]) ++d;
    if (d < cur.size() && d < e.frame.size())
      ADD_FAILURE() << at << ": first difference at byte " << d << ": got 0x" << std::hex << int(cur[d])
                    << " expected 0x" << int(e.frame[d]);
    expected.pop_front();
    cur.clear();
    ++frames;
  }

  void queue_jobs(int n, const Knobs& k) {
    for (int i = 0; i < n; ++i) {
      const int port = int(rng.below(2));
      pending[port].push_back(random_job(port, k));
    }
  }

  void run(const Knobs& k, int max_cycles = 400000) {
    for (int i = 0; i < max_cycles && !HasFatalFailure(); ++i) {
      if (pending[0].empty() && pending[1].empty() && expected.empty() && rbeats.empty()) break;
      cycle(k);
    }
  }

  void drain() {
    Knobs k;
    k.req = k.rsp = k.ar = k.out = 100;
    k.lat = 0;
    run(k, 200000);
    EXPECT_TRUE(pending[0].empty() && pending[1].empty()) << "jobs never taken";
    EXPECT_TRUE(expected.empty()) << expected.size() << " frames never sent";
    EXPECT_TRUE(spans.empty()) << "payload never read";
    for (int i = 0; i < 10 && !HasFatalFailure(); ++i) cycle(k);
    EXPECT_FALSE(dut->m_tvalid);
    EXPECT_FALSE(dut->ar_valid);
    EXPECT_FALSE(dut.rtl_error());
  }

  // Rate runs: four QPs programmed and every port, AR and the output always ready, with
  // read latency `lat`; timed_run runs the queued jobs and returns the cycles they took.
  Knobs full_rate(unsigned lat, unsigned big) {
    for (int i = 0; i < 4 && !HasFatalFailure(); ++i) program(uint32_t(rng.below(kQps)));
    Knobs k;
    k.req = k.rsp = k.ar = k.out = 100;
    k.lat = lat;
    k.zero = 0;
    k.big = big;
    return k;
  }
  uint64_t timed_run(const Knobs& k, uint64_t jobs) {
    const uint64_t c0 = dut.cycle();
    run(k);
    const uint64_t cycles = dut.cycle() - c0;
    drain();
    EXPECT_EQ(frames, jobs);
    return cycles;
  }

  struct Hold {
    uint64_t keep = 0;
    bool last = false;
    uint32_t data[16] = {};
  };

  Rng rng;
  Dut<Vtx_pkt_tb> dut;
  std::vector<Conn> conns;
  std::vector<uint32_t> hot;
  std::deque<Job> pending[2];
  bool holding[2] = {false, false};
  int last_port = 1;  // after reset the requester port goes first
  uint64_t next_id[2] = {0, 0}, checked_id[2] = {0, 0}, accepted[2] = {0, 0};
  std::deque<Expected> expected;
  std::deque<Span> spans;
  std::deque<RBeat> rbeats;
  uint64_t last_r_at = 0;
  bool ar_stalled = false, out_stalled = false;
  uint64_t ar_hold_addr = 0;
  unsigned ar_hold_len = 0;
  Hold out_hold;
  std::vector<uint8_t> cur;
  bool keep_frames = false;            // keep every frame sent, per port in job order
  std::vector<std::vector<uint8_t>> got[2];
  uint64_t frames = 0, ars = 0, ar_beats = 0, out_beats = 0, out_valid_cycles = 0, contended = 0;
  uint64_t tagged_beats = 0;
};

TEST_F(TxPktBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < 8 && !HasFatalFailure(); ++i) program(uint32_t(rng.below(kQps)));
  for (int phase = 0; phase < 30 && !HasFatalFailure(); ++phase) {
    Knobs k;
    k.req = unsigned(rng.range(10, 100));
    k.rsp = unsigned(rng.range(10, 100));
    k.ar = unsigned(rng.range(10, 100));
    k.out = unsigned(rng.range(10, 100));
    k.lat = unsigned(rng.range(0, 200));
    queue_jobs(150, k);
    run(k);
  }
  drain();
  EXPECT_EQ(frames, 4500u);
  EXPECT_GT(contended, 100u);
  EXPECT_GT(ars, 1000u);
  EXPECT_GT(tagged_beats, out_beats) << "m_tqpn/m_tgen checked on held beats too";
}

// Connections rewritten between bursts of traffic: frames use the newest table entry.
TEST_F(TxPktBench, Reprogram) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int round = 0; round < 10 && !HasFatalFailure(); ++round) {
    for (int i = 0; i < 4 && !HasFatalFailure(); ++i) program(uint32_t(rng.below(kQps)));
    Knobs k;
    k.zero = 30;
    queue_jobs(60, k);
    run(k);
    drain();
  }
  EXPECT_EQ(frames, 600u);
}

// A QP_MODIFY to RESET does not touch the connection table: jobs of the old incarnation still
// on their way are built for the old connection (srnic_tx_icrc drops those that arrive after
// the incarnation advanced), never from a cleared entry (a frame to IPv4 0.0.0.0, QPN 0); the
// next incarnation's connection comes with the commands after the reset.
TEST_F(TxPktBench, ResetKeepsTheConnection) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < 6 && !HasFatalFailure(); ++i) program(uint32_t(rng.below(kQps)));
  for (int round = 0; round < 6 && !HasFatalFailure(); ++round) {
    for (uint32_t q : hot) reset_qp(q);   // every QP jobs go to (conns[] unchanged)
    Knobs k;
    k.zero = 30;
    queue_jobs(40, k);
    run(k);
    drain();
    program(hot[rng.below(hot.size())]);  // a new connection for one of them
  }
  EXPECT_EQ(frames, 240u);
}

// go-back-N resends: jobs sent once, then sent again with resend set (later, with other
// traffic in between, both ports): each resent frame equals its original byte for byte (and
// both equal the builder's frame for the job's fields).
TEST_F(TxPktBench, ResendSameFrame) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < 6 && !HasFatalFailure(); ++i) program(uint32_t(rng.below(kQps)));
  keep_frames = true;
  Knobs k;
  std::vector<std::pair<uint64_t, uint64_t>> pairs[2];  // (original id, resend id) per port
  for (int round = 0; round < 4 && !HasFatalFailure(); ++round) {
    k.req = unsigned(rng.range(20, 100));
    k.rsp = unsigned(rng.range(20, 100));
    k.ar = unsigned(rng.range(20, 100));
    k.out = unsigned(rng.range(20, 100));
    k.lat = unsigned(rng.range(0, 60));
    std::vector<Job> orig[2];
    for (int i = 0; i < 60; ++i) {
      const int port = rng.percent(75) ? 0 : 1;
      Job j = random_job(port, k);
      j.resend = false;
      if (i < 18) j.opcode = uint8_t(i);  // every RC opcode in each round
      if (!roce::opcode_info(j.opcode)->has_payload) j.pay_len = 0;
      pending[port].push_back(j);
      orig[port].push_back(j);
    }
    queue_jobs(20, k);  // other traffic in between
    for (int port = 0; port < 2; ++port)
      for (const Job& o : orig[port]) {
        Job r = o;
        r.resend = true;
        r.id = next_id[port]++;
        pending[port].push_back(r);
        pairs[port].emplace_back(o.id, r.id);
      }
    run(k);
  }
  drain();
  size_t compared = 0;
  for (int port = 0; port < 2; ++port)
    for (const auto& [o, r] : pairs[port]) {
      ASSERT_LT(r, got[port].size()) << "port " << port << " job " << r << " never sent";
      EXPECT_TRUE(got[port][o] == got[port][r])
          << "port " << port << ": resend (job " << r << ") differs from its original (job " << o << ", "
          << roce::opcode_name(got[port][o][42]) << ")";
      ++compared;
    }
  EXPECT_EQ(compared, 240u);
}

// Everything ready, short read latency, long payloads: the output keeps close to one beat
// per cycle and reads run ahead (several bursts outstanding).
TEST_F(TxPktBench, FullRate) {
  SRNIC_BENCH_TRACE();
  reset();
  const Knobs k = full_rate(40, 100);
  for (int i = 0; i < 300; ++i) {
    Job j = random_job(0, k);
    j.opcode = roce::op::kRcWriteMiddle;
    j.pay_len = uint32_t(rng.range(3500, 4096));
    pending[0].push_back(j);
  }
  const uint64_t cycles = timed_run(k, 300);
  EXPECT_GT(double(out_beats) / double(cycles), 0.9) << out_beats << " beats in " << cycles << " cycles";
}

// Small frames (64-byte WRITE ONLY with RETH, 3 beats): with everything ready and a read
// latency the meta FIFO covers (MDEPTH jobs in flight), the packetizer takes a job and sends
// its frame every 4 cycles (job select, connection lookup, payload read; the frame's 3 beats
// and a cycle to load the next header overlap with them). 64-byte WRITEs at 100GE need a
// frame every 3.9 cycles at 300 MHz.
TEST_F(TxPktBench, SmallFrameRate) {
  SRNIC_BENCH_TRACE();
  reset();
  const Knobs k = full_rate(8, 0);
  for (int i = 0; i < 600; ++i) {
    Job j = random_job(0, k);
    j.opcode = roce::op::kRcWriteOnly;
    j.pay_len = 64;
    j.pay_addr &= ~63ull;
    pending[0].push_back(j);
  }
  const uint64_t cycles = timed_run(k, 600);
  std::printf("[bench] 600 64-byte WRITE frames in %llu cycles (%.2f per frame)\n",
              (unsigned long long)cycles, double(cycles) / 600.0);
  EXPECT_LE(double(cycles) / 600.0, 4.2);
}

}  // namespace
}  // namespace srnic::verif::blocks
