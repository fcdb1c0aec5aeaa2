// srnic_rx_parse bench: frames from srnic_roce's Packet builder, good and deliberately
// broken (bad ICRC, bad IP checksum, wrong UDP port / IP / MAC / EtherType, truncated, IP
// options or fragments, bad UDP length, TVer, P_Key, unknown opcode, oversized payload, MAC
// error), stream in with random gaps. Every stored frame's record must say drop or not as
// the reference classification says, good records must carry the decoded header fields,
// payload offset and length, and the frame's beats must follow in the RX buffer unchanged.
// The drop counters must count each class. A stalled consumer makes later frames overflow;
// those must be counted as overflow and never delivered corrupted.
#include <algorithm>
#include <deque>
#include <vector>

#include "Vsrnic_rx_parse.h"
#include "frames.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr roce::MacAddr kLocalMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr uint64_t kLocalMacValue = 0x020000000001ull;
constexpr uint32_t kLocalIp = 0x0A000001;

// rx_meta_t: kRxMeta in pkg_layouts.hpp

enum class Cls { Good, Icrc, Malformed };

// Idle cycles after each frame where the consumer must keep up (it spends a cycle per
// record and sees a frame only after its last beat).
constexpr int kIfg = 4;

struct Frame {
  std::vector<uint8_t> bytes;
  bool user = false;
  Cls cls = Cls::Good;
  const char* what = "good";
  roce::Packet pkt;
};

void fix_ip_checksum(std::vector<uint8_t>& f) {
  f[24] = f[25] = 0;
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += uint32_t(f[size_t(14 + i)]) << 8 | f[size_t(15 + i)];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  f[24] = uint8_t(~sum >> 8);
  f[25] = uint8_t(~sum);
}

class RxParseBench : public ::testing::Test {
 public:
  RxParseBench() : rng(test_seed()), dut(rng.next()) {}

  void reset() {
    dut->s_tvalid = 0;
    dut->meta_ready = 0;
    dut->d_ready = 0;
    dut->local_mac = kLocalMacValue;
    dut->local_ip = kLocalIp;
    dut.reset();
  }

  roce::Packet good_packet() { return random_packet(rng, 4096, kLocalMac, kLocalIp); }

  // A frame of the given kind (0 = good; see the switch).
  Frame make(int kind) {
    Frame fr;
    roce::Packet p = good_packet();
    auto bad = [&](Cls c, const char* w) {
      fr.cls = c;
      fr.what = w;
    };
    switch (kind) {
      case 1: bad(Cls::Icrc, "bad ICRC"); break;
      case 2: bad(Cls::Icrc, "covered byte flipped"); break;
      case 3: bad(Cls::Malformed, "bad IP checksum"); break;
      case 4: p.udp.dport = 4792; bad(Cls::Malformed, "wrong UDP port"); break;
      case 5: p.ip4.dst = kLocalIp + 1; bad(Cls::Malformed, "not our IP"); break;
      case 6: p.eth.dst[5] ^= 0x10; bad(Cls::Malformed, "not our MAC"); break;
      case 7: bad(Cls::Malformed, "truncated"); break;
      case 8: p.ip4.flags_frag = 0x2000; bad(Cls::Malformed, "IP fragment"); break;
      case 9: p.bth.tver = 1; bad(Cls::Malformed, "TVer 1"); break;
      case 10: p.bth.pkey = 0x1234; bad(Cls::Malformed, "P_Key"); break;
      case 11: p.bth.opcode = roce::op::kRcFetchAdd; p.payload.clear(); bad(Cls::Malformed, "unknown opcode"); break;
      case 12: bad(Cls::Malformed, "MAC error"); fr.user = true; break;
      case 13: bad(Cls::Malformed, "EtherType"); break;
      case 14: bad(Cls::Malformed, "UDP length"); break;
      case 15: bad(Cls::Malformed, "IHL 6"); break;
      case 16: p.bth.opcode = roce::op::kRcSendOnly; p.payload.resize(4100); bad(Cls::Malformed, "payload > 4096"); break;
      case 17: bad(Cls::Malformed, "not UDP"); break;
      case 18: fr.what = "good, Ethernet padding after the ICRC"; break;
      case 19: fr.what = "good, pkey 0x7FFF"; p.bth.pkey = 0x7FFF; break;
      default: break;
    }
    fr.bytes = p.build();
    auto& f = fr.bytes;
    switch (kind) {
      case 1: f[f.size() - 1 - rng.below(4)] ^= uint8_t(1u << rng.below(8)); break;
      case 2:  // a covered byte no header check looks at: BTH QPN/AckReq/PSN, extension
               // headers, payload, pad
        f[rng.range(47, f.size() - 5)] ^= uint8_t(1u << rng.below(8));
        break;
      case 3: f[24] ^= 0x01; break;
      case 7: f.resize(f.size() - rng.range(1, std::min<size_t>(f.size() - 34, 100))); break;
      case 13: f[12] = 0x08; f[13] = 0x06; break;
      case 14: f[39] ^= 0x04; break;
      case 15: f[14] = 0x46; fix_ip_checksum(f); break;
      case 17: f[23] = 6; fix_ip_checksum(f); break;
      case 18: f.resize(f.size() + rng.range(1, 70), 0); break;
      default: break;
    }
    fr.pkt = p;
    return fr;
  }

  // ---------------------------------------------------------------- per-cycle
  void cycle(unsigned p_gap, unsigned p_meta, unsigned p_d) {
    // input: frames back to back, random idle cycles (also inside a frame)
    bool v = false, idle = false;
    if (!in.empty() && in.front().keep == 0) {
      idle = true;  // inter-frame gap
    } else if (!in.empty() && !rng.percent(p_gap)) {
      v = true;
      const Beat& b = in.front();
      for (int w = 0; w < 16; ++w) std::memcpy(&dut->s_tdata[size_t(w)], b.data + 4 * w, 4);
      dut->s_tkeep = b.keep;
      dut->s_tlast = b.last;
      dut->s_tuser = b.user;
    }
    dut->s_tvalid = v;
    // consumer: a record, then its beats
    dut->meta_ready = beats_left == 0 && rng.percent(p_meta);
    dut->d_ready = beats_left > 0 && rng.percent(p_d);
    dut.eval();
    cnt.frames += dut->cnt_rx_frame;
    cnt.icrc += dut->cnt_drop_icrc;
    cnt.malformed += dut->cnt_drop_malformed;
    cnt.overflow += dut->cnt_drop_overflow;
    if (dut->meta_valid && dut->meta_ready) take_meta();
    if (dut->d_valid && dut->d_ready) take_beat();
    if (beats_left > 0 && !dut->d_valid) {
      // beats of a recorded frame are committed with its record
      ADD_FAILURE() << "cycle " << dut.cycle() << ": record taken but its beats are not readable";
      beats_left = 0;
    }
    dut.tick();
    if (v || idle) in.pop_front();
  }

  void take_meta() {
    const auto& m = dut->meta;
    const bool drop = kRxMeta.get(m, kRmDrop);
    const int nb = int(kRxMeta.get(m, kRmNbeats));
    ASSERT_FALSE(sent.empty()) << "record with no frame sent";
    // Frames that got no record at all can only be overflow drops.
    while (overflow_ok && !sent.empty() && drop == false &&
           kRxMeta.get(m, kRmPsn) != sent.front().pkt.bth.psn) {
      sent.pop_front();
      ++skipped;
    }
    ASSERT_FALSE(sent.empty());
    const Frame& f = sent.front();
    cur = f;
    const size_t frame_beats = (f.bytes.size() + 63) / 64;
    ++records;
    if (!drop) {
      ++good_records;
      EXPECT_EQ(f.cls, Cls::Good) << "record " << records << ": " << f.what << " frame accepted";
      EXPECT_EQ(size_t(nb), frame_beats) << "record " << records << " nbeats";
      const auto& p = f.pkt;
      const auto* oi = roce::opcode_info(p.bth.opcode);
      EXPECT_EQ(kRxMeta.get(m, kRmOpcode), p.bth.opcode);
      EXPECT_EQ(kRxMeta.get(m, kRmDqpn), p.bth.dest_qp);
      EXPECT_EQ(kRxMeta.get(m, kRmPsn), p.bth.psn);
      EXPECT_EQ(kRxMeta.get(m, kRmAckreq), uint64_t(p.bth.ack_req));
      EXPECT_EQ(kRxMeta.get(m, kRmSe), uint64_t(p.bth.se));
      EXPECT_EQ(kRxMeta.get(m, kRmSrcIp), p.ip4.src);
      EXPECT_EQ(kRxMeta.get(m, kRmPayOff), 54u + oi->header_len) << roce::opcode_name(p.bth.opcode);
      EXPECT_EQ(kRxMeta.get(m, kRmPayLen), p.payload.size()) << roce::opcode_name(p.bth.opcode);
      if (oi->headers & roce::kHdrReth) {
        EXPECT_EQ(kRxMeta.get(m, kRmRethVa), p.reth.va);
        EXPECT_EQ(kRxMeta.get(m, kRmRethRkey), p.reth.rkey);
        EXPECT_EQ(kRxMeta.get(m, kRmRethLen), p.reth.dma_len);
      }
      if (oi->headers & roce::kHdrImmDt) {
        EXPECT_EQ(kRxMeta.get(m, kRmImm), p.immdt.imm);
      }
      if (oi->headers & roce::kHdrAeth) {
        EXPECT_EQ(kRxMeta.get(m, kRmAethSyn), p.aeth.syndrome);
        EXPECT_EQ(kRxMeta.get(m, kRmAethMsn), p.aeth.msn);
      }
    } else {
      EXPECT_TRUE(f.cls != Cls::Good || overflow_ok) << "record " << records << ": good frame dropped ("
                                                     << f.what << ", " << f.bytes.size() << " bytes)";
      EXPECT_LE(size_t(nb), frame_beats);
    }
    cur_good = !drop;
    beat_idx = 0;
    beats_left = nb;
    sent.pop_front();
  }

  void take_beat() {
    if (cur_good) {
      uint8_t got[64];
      for (int w = 0; w < 16; ++w) std::memcpy(got + 4 * w, &dut->d_data[size_t(w)], 4);
      const size_t off = size_t(beat_idx) * 64;
      const size_t n = std::min<size_t>(64, cur.bytes.size() - off);
      for (size_t i = 0; i < n; ++i)
        if (got[i] != cur.bytes[off + i]) {
          ADD_FAILURE() << "record " << records << ": frame byte " << off + i << " got 0x" << std::hex
                        << int(got[i]) << " expected 0x" << int(cur.bytes[off + i]);
          break;
        }
    }
    ++beat_idx;
    --beats_left;
  }

  // Queues a frame followed by `ifg` idle cycles.
  void send(const Frame& f, int ifg = 0) {
    for (auto b : to_beats(f.bytes)) {
      b.user = f.user && b.last;
      in.push_back(b);
    }
    for (int i = 0; i < ifg; ++i) in.push_back(Beat{});
    sent.push_back(f);
    ++n_sent;
    exp_icrc += f.cls == Cls::Icrc;
    exp_malformed += f.cls == Cls::Malformed;
  }

  void drain(unsigned p_meta = 100, unsigned p_d = 100) {
    for (int i = 0; i < 100000 && (!in.empty() || !sent.empty() || beats_left); ++i) {
      cycle(0, p_meta, p_d);
      if (HasFatalFailure()) return;
    }
    EXPECT_TRUE(in.empty());
    if (!overflow_ok) {
      EXPECT_TRUE(sent.empty()) << sent.size() << " frames without a record";
    }
    for (int i = 0; i < 10; ++i) cycle(0, 100, 100);
    EXPECT_FALSE(dut->meta_valid);
    EXPECT_FALSE(dut->d_valid);
  }

  struct Counts {
    uint64_t frames = 0, icrc = 0, malformed = 0, overflow = 0;
  };

  Rng rng;
  Dut<Vsrnic_rx_parse> dut;
  std::deque<Beat> in;
  std::deque<Frame> sent;
  Frame cur;
  bool cur_good = false, overflow_ok = false;
  int beats_left = 0, beat_idx = 0;
  uint64_t records = 0, good_records = 0, skipped = 0, n_sent = 0, exp_icrc = 0, exp_malformed = 0;
  Counts cnt;
};

TEST_F(RxParseBench, EveryCheck) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int rep = 0; rep < 6; ++rep)
    for (int kind = 0; kind <= 19; ++kind) send(make(kind), kIfg);
  drain();
  EXPECT_EQ(cnt.frames, n_sent);
  EXPECT_EQ(cnt.icrc, exp_icrc);
  EXPECT_EQ(cnt.malformed, exp_malformed);
  EXPECT_EQ(cnt.overflow, 0u);
  EXPECT_EQ(good_records, n_sent - exp_icrc - exp_malformed);
}

TEST_F(RxParseBench, RandomMixWithGaps) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int n = 0; n < 400; ++n) send(make(rng.percent(60) ? 0 : int(rng.range(1, 19))), kIfg);
  while (!in.empty() && !HasFatalFailure()) cycle(unsigned(rng.below(30)), 90, 95);
  drain();
  EXPECT_EQ(cnt.frames, n_sent);
  EXPECT_EQ(cnt.icrc, exp_icrc);
  EXPECT_EQ(cnt.malformed, exp_malformed);
  EXPECT_EQ(cnt.overflow, 0u);
  EXPECT_EQ(records, n_sent);
}

// Frames longer than any legal RoCEv2 frame (here 129, 256, 257 and 300 beats, with
// valid headers and trailing bytes) are dropped as malformed; the beat counters do not
// wrap, so every frame around them is delivered intact.
TEST_F(RxParseBench, GiantFramesDroppedWithoutDesync) {
  SRNIC_BENCH_TRACE();
  reset();
  for (const size_t beats : {129u, 256u, 257u, 300u, 128u}) {
    send(make(0), kIfg);
    Frame g = make(0);
    const size_t n = beats * 64;
    if (beats == 128) {
      g.bytes.resize(n, 0x5A);   // 128 beats of a good frame's trailing bytes: still accepted
    } else {
      g.bytes.resize(n, 0x5A);
      g.cls = Cls::Malformed;
      g.what = "giant frame";
    }
    send(g, kIfg);
    send(make(0), kIfg);
  }
  drain();
  EXPECT_EQ(cnt.frames, n_sent);
  EXPECT_EQ(cnt.malformed, 4u);
  EXPECT_EQ(good_records, n_sent - 4);
}

TEST_F(RxParseBench, StalledConsumerOverflows) {
  SRNIC_BENCH_TRACE();
  reset();
  overflow_ok = true;
  // Consumer stalled: the buffer fills and later frames are dropped as overflow.
  for (int n = 0; n < 300; ++n) send(make(0));
  while (!in.empty() && !HasFatalFailure()) cycle(0, 0, 0);
  drain();
  EXPECT_EQ(cnt.frames, 300u);
  EXPECT_GT(cnt.overflow, 0u) << "the buffer never filled";
  EXPECT_EQ(good_records + cnt.overflow, 300u) << "every frame is delivered or counted as overflow";
  EXPECT_EQ(cnt.icrc + cnt.malformed, 0u);
  // Afterwards everything flows again.
  overflow_ok = false;
  sent.clear();
  const uint64_t before = good_records;
  for (int n = 0; n < 50; ++n) send(make(0));
  drain();
  EXPECT_EQ(good_records - before, 50u);
}

}  // namespace
}  // namespace srnic::verif::blocks
