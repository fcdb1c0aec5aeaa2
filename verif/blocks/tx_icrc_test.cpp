// srnic_tx_icrc bench: frames built by srnic_roce's Packet builder go in without their ICRC
// (as srnic_tx_pkt produces them) and must come out byte for byte as the builder made them,
// ICRC appended least significant byte first, spilling into an extra beat when the last beat
// is fuller than 60 bytes. Random input gaps and output back-pressure; frame_sent counts
// output frames; output frames decode cleanly with the srnic_roce decoder. AXI-Stream: an
// offered beat stays, unchanged (data, keep, last, user), until taken; TUSER only on a last
// beat.
// Fatal (decision 108), raised at a random cycle and kept high: a frame's ICRC is inverted
// (all 4 bytes, also in a spill beat) and its last beat carries TUSER exactly when fatal is
// high in the cycle after its last input beat entered (when srnic_icrc_calc reports the ICRC
// and it is queued); every other frame leaves intact with TUSER 0. No frame starts on the
// output while fatal (a first beat offered before and held by TREADY low finishes its frame,
// as does a frame under way): the output is a prefix of the input frames that were not
// discarded as stale, and the frames after it are discarded with their input still taken
// (the input drains, also with TREADY low from then on).
// Incarnations (decision 109): every frame carries its QP and the incarnation its job was
// made for on s_tqpn/s_tgen with its first beat (other beats carry random values there).
// The bench plays srnic_qp_gen: a table of every QP's current incarnation (random at the
// start, as the array is not reset) answers gen_cur for gen_qpn in the same cycle, and tests
// advance a QP's entry (a reset of the QP) at chosen or random cycles. Checked every cycle:
// gen_qpn names the QP of the frame at the output head while its data beats are offered and
// when a frame starts or is discarded; a frame starts only if its incarnation equals its
// QP's current one in that cycle (a frame whose QP was reset after its first beat entered,
// or whose job was made before a reset, is never offered); stale_drop pulses once per frame
// discarded that way, in the cycle its first beat is dropped, only for the next frame in
// order whose first beat has entered, whose incarnation differs from its QP's current one,
// with no frame under way on the output and never while fatal (a frame both stale and
// discarded for fatal is not counted). A frame offered (held by TREADY low) or under way when
// its QP is reset finishes whole.
#include <array>
#include <deque>
#include <vector>

#include "Vsrnic_tx_icrc.h"
#include "frames.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr uint64_t kNever = ~0ull;
constexpr unsigned kQpnBits = 16, kGenMask = 15;

struct Frame {
  std::vector<uint8_t> bytes;   // the whole frame as it must leave, ICRC included
  bool decodes = true;          // the srnic_roce decoder accepts it
  uint16_t qpn = 0;
  int gen = -1;                 // s_tgen: given when queued, or drawn when its first beat is first presented
  uint64_t first_in = kNever;   // the cycle its first input beat entered
  uint64_t last_in = kNever;    // the cycle its last input beat entered
  bool reset_in_flight = false;  // its QP was reset after its first beat entered, before a decision
  bool other_reset = false;      // another QP was reset while it was in the block
  enum class Fate { Pending, Sent, Stale } fate = Fate::Pending;
};

struct InBeat {
  Beat b;
  size_t frame;
  bool first;
};

class TxIcrcBench : public ::testing::Test {
 public:
  TxIcrcBench() : rng(test_seed()), dut(rng.next()) {
    for (auto& g : gen_tab) g = uint8_t(rng.below(16));   // srnic_qp_gen is not reset
    qps = {0x0000, 0xFFFF, uint16_t(rng.range(1, 0x7FFF)), uint16_t(rng.range(0x8000, 0xFFFE))};
  }

  void reset() {
    dut->s_tvalid = 0;
    dut->m_tready = 0;
    dut->fatal = 0;
    dut->s_tqpn = 0;
    dut->s_tgen = 0;
    dut->gen_cur = 0;
    dut.reset();
    in.clear();
    frames.clear();
    cur.clear();
    head = n_last_in = 0;
    cur_frame = -1;
    holding = out_stalled = fatal = false;
    quiet_ready = 0;
    fatal_at = kNever;
    frames_sent = frames_checked = stale_drops = 0;
  }

  // Queues one packet of QP q (a random one of qps by default) made for incarnation gen (by
  // default the QP's current one when its first beat is presented): input = frame without
  // ICRC; expected output = the whole frame.
  void add(const roce::Packet& p, int q = -1, int gen = -1) { add_frame(p.build(), true, q, gen); }
  // Queues a whole frame (ICRC included) that the decoder may not accept (decodes = false).
  void add_frame(std::vector<uint8_t> f, bool decodes, int q = -1, int gen = -1) {
    Frame fr;
    fr.bytes = f;
    fr.decodes = decodes;
    fr.qpn = q < 0 ? qps[rng.below(qps.size())] : uint16_t(q);
    fr.gen = gen;
    frames.push_back(fr);
    f.resize(f.size() - roce::kIcrcSize);
    bool first = true;
    for (const auto& b : to_beats(f)) {
      in.push_back({b, frames.size() - 1, first});
      first = false;
    }
  }
  // Fatal from this cycle on.
  void raise_fatal() {
    fatal = true;
    fatal_at = dut.cycle();
  }
  // Fatal high and no frame under way on the output: nothing may be offered any more.
  bool quiet() const { return fatal && cur_frame < 0; }
  // Frames not yet sent whole or discarded as stale.
  bool undecided() const { return head < frames.size() || cur_frame >= 0; }

  // QP q is reset: its incarnation advances, seen by gen_cur from this cycle on.
  void reset_qp(uint16_t q) {
    gen_tab[q] = uint8_t((gen_tab[q] + 1) & kGenMask);
    ++stats.resets;
    if (cur_frame >= 0 && frames[size_t(cur_frame)].qpn == q) {
      if (cur.empty() && out_stalled) ++stats.reset_first_beat_held;
      else ++stats.reset_under_way;
    }
    for (size_t i = head; i < frames.size() && frames[i].first_in != kNever; ++i)
      (frames[i].qpn == q ? frames[i].reset_in_flight : frames[i].other_reset) = true;
  }
  // The QP a random reset hits: any of qps, the frame under way's or the next frame's.
  uint16_t reset_target() {
    const uint64_t r = rng.below(4);
    if (r == 2 && cur_frame >= 0) return frames[size_t(cur_frame)].qpn;
    if (r == 3 && head < frames.size()) return frames[head].qpn;
    return qps[rng.below(qps.size())];
  }

  // Answers gen_cur for the QP the block names now (gen_qpn comes from registers).
  void answer_gen() {
    const uint16_t q = uint16_t(dut->gen_qpn);
    dut->gen_cur = gen_tab[q];
    dut.eval();
    ASSERT_EQ(uint16_t(dut->gen_qpn), q) << "cycle " << dut.cycle() << ": gen_qpn depends on gen_cur";
  }

  void present(unsigned p_valid) {
    if (!holding && !in.empty() && rng.percent(p_valid)) {
      holding = true;
      Frame& f = frames[in.front().frame];
      if (in.front().first && f.gen < 0) {   // the job's incarnation: current, or one from before a reset
        f.gen = gen_tab[f.qpn];
        if (rng.percent(p_old)) {
          f.gen = int((unsigned(f.gen) + 1 + rng.below(15)) & kGenMask);
          ++stats.made_stale;
        }
      }
    }
    dut->s_tvalid = holding;
    if (holding) {
      const Beat& b = in.front().b;
      for (int w = 0; w < 16; ++w) std::memcpy(&dut->s_tdata[size_t(w)], b.data + 4 * w, 4);
      dut->s_tkeep = b.keep;
      dut->s_tlast = b.last;
    }
    if (holding && in.front().first) {
      const Frame& f = frames[in.front().frame];
      dut->s_tqpn = f.qpn;
      dut->s_tgen = uint8_t(f.gen);
    } else {   // sampled on a frame's first beat only
      dut->s_tqpn = uint16_t(rng.below(1u << kQpnBits));
      dut->s_tgen = uint8_t(rng.below(16));
    }
  }

  void cycle(unsigned p_valid, unsigned p_ready) {
    const uint64_t c = dut.cycle();
    if (p_reset != 0 && rng.below(1000) < p_reset) reset_qp(reset_target());
    present(p_valid);
    dut->fatal = fatal;
    // once quiet, TREADY follows quiet_ready (0: discarded frames must drain without it)
    const bool q = quiet();
    dut->m_tready = rng.percent(q ? quiet_ready : p_ready);
    dut.eval();
    answer_gen();
    if (HasFatalFailure()) return;
    const bool in_fire = dut->s_tvalid && dut->s_tready;
    // AXI-Stream: an offered beat stays, unchanged, until taken.
    if (out_stalled) {
      EXPECT_TRUE(dut->m_tvalid) << "cycle " << c << ": m_tvalid dropped" << (fatal ? " (fatal)" : "");
      bool same = dut->m_tkeep == st_keep && bool(dut->m_tlast) == st_last && bool(dut->m_tuser) == st_user;
      for (int w = 0; w < 16; ++w) same = same && dut->m_tdata[size_t(w)] == st_data[size_t(w)];
      EXPECT_TRUE(same) << "cycle " << c << ": beat changed before TREADY" << (fatal ? " (fatal)" : "");
    }
    if (dut->stale_drop) take_stale(c);
    if (HasFatalFailure()) return;
    if (dut->m_tvalid) {
      if (!dut->m_tlast) EXPECT_FALSE(dut->m_tuser) << "cycle " << c << ": TUSER on a beat that is not last";
      if (q) ADD_FAILURE() << "cycle " << c << ": a frame offered while fatal (frame " << head << ")";
      if (cur_frame < 0) start(c);
      if (HasFatalFailure()) return;
      // a data beat (not the spill beat): the frame's QP is still at the head of the tag queue
      const Frame& f = frames[size_t(cur_frame)];
      if (cur.size() + roce::kIcrcSize < f.bytes.size()) {
        EXPECT_EQ(uint16_t(dut->gen_qpn), f.qpn) << "cycle " << c << ": gen_qpn while frame " << cur_frame
                                                 << " is offered";
      }
    }
    if (dut->m_tvalid && dut->m_tready) collect();
    EXPECT_EQ(bool(dut->frame_sent), dut->m_tvalid && dut->m_tready && dut->m_tlast) << "cycle " << dut.cycle();
    frames_sent += dut->frame_sent;
    out_stalled = dut->m_tvalid && !dut->m_tready;
    for (int w = 0; w < 16; ++w) st_data[size_t(w)] = dut->m_tdata[size_t(w)];
    st_keep = dut->m_tkeep;
    st_last = dut->m_tlast;
    st_user = dut->m_tuser;
    dut.tick();
    if (in_fire) {
      const InBeat& b = in.front();
      if (b.first) frames[b.frame].first_in = c;
      if (b.b.last) {
        frames[b.frame].last_in = c;
        ++n_last_in;
      }
      in.pop_front();
      holding = false;
    }
  }

  // stale_drop: the next frame is discarded because its QP was reset since its job was made.
  void take_stale(uint64_t c) {
    ASSERT_LT(head, frames.size()) << "cycle " << c << ": stale_drop with no frame left";
    Frame& f = frames[head];
    const std::string at = "cycle " + std::to_string(c) + ": stale_drop for frame " + std::to_string(head) +
                           " (QP " + std::to_string(f.qpn) + ", incarnation " + std::to_string(f.gen) + ")";
    EXPECT_FALSE(fatal) << at << " while fatal";
    EXPECT_LT(cur_frame, 0) << at << " with frame " << cur_frame << " under way on the output";
    EXPECT_FALSE(dut->m_tvalid) << at << " with a beat offered";
    ASSERT_NE(f.first_in, kNever) << at << ": its first beat has not entered (one pulse per frame)";
    EXPECT_EQ(uint16_t(dut->gen_qpn), f.qpn) << at << ": gen_qpn";
    EXPECT_NE(int(gen_tab[f.qpn]), f.gen) << at << ": its QP is at that incarnation";
    f.fate = Frame::Fate::Stale;
    ++head;
    ++stale_drops;
    ++(f.reset_in_flight ? stats.stale_reset_in_flight : stats.stale_at_entry);
  }

  // The first beat of the next frame is offered.
  void start(uint64_t c) {
    ASSERT_LT(head, frames.size()) << "cycle " << c << ": output frame with none expected";
    const Frame& f = frames[head];
    const std::string at = "cycle " + std::to_string(c) + ": frame " + std::to_string(head) + " (QP " +
                           std::to_string(f.qpn) + ", incarnation " + std::to_string(f.gen) + ")";
    ASSERT_NE(f.first_in, kNever) << at << " starts before its first beat entered";
    EXPECT_EQ(uint16_t(dut->gen_qpn), f.qpn) << at << " starts: gen_qpn";
    EXPECT_EQ(int(gen_tab[f.qpn]), f.gen) << at << " starts while its QP is at incarnation " << int(gen_tab[f.qpn])
                                     << (f.reset_in_flight ? " (reset after its first beat entered)" : "");
    if (f.other_reset) ++stats.sent_other_reset;
    cur_frame = int64_t(head++);
  }

  void collect() {
    const uint64_t keep = dut->m_tkeep;
    const bool last = dut->m_tlast;
    ASSERT_EQ(keep & (keep + 1), 0u) << "tkeep not contiguous from byte 0: " << std::hex << keep;
    if (!last) {
      ASSERT_EQ(keep, ~0ull) << "partial beat before tlast";
    }
    ASSERT_NE(keep, 0u);
    uint8_t bytes[64];
    for (int w = 0; w < 16; ++w) std::memcpy(bytes + 4 * w, &dut->m_tdata[size_t(w)], 4);
    for (int i = 0; i < 64 && ((keep >> i) & 1); ++i) cur.push_back(bytes[i]);
    if (!last) return;
    Frame& f = frames[size_t(cur_frame)];
    ASSERT_NE(f.last_in, kNever) << "frame " << cur_frame << " left before its last input beat";
    // the ICRC is queued the cycle after the frame's last input beat, inverted if fatal then
    const bool bad = f.last_in + 1 >= fatal_at;
    std::vector<uint8_t> exp = f.bytes;
    if (bad)
      for (size_t i = exp.size() - roce::kIcrcSize; i < exp.size(); ++i) exp[i] = uint8_t(~exp[i]);
    size_t diff = 0;
    while (diff < exp.size() && diff < cur.size() && exp[diff] == cur[diff]) ++diff;
    EXPECT_EQ(cur.size(), exp.size()) << "frame " << cur_frame << " length";
    if (diff < exp.size() && diff < cur.size()) {
      ADD_FAILURE() << "frame " << cur_frame << " (" << exp.size() << " bytes" << (bad ? ", ICRC inverted" : "")
                    << "): first difference at byte " << diff << ": got 0x" << std::hex << int(cur[diff])
                    << " expected 0x" << int(exp[diff]) << (diff + 4 >= exp.size() ? " (in the ICRC)" : "");
    }
    EXPECT_EQ(bool(dut->m_tuser), bad) << "frame " << cur_frame << ": TUSER on its last beat";
    roce::DecodedPacket d;
    if (f.decodes && !bad) {
      EXPECT_EQ(roce::decode(cur, d), roce::DecodeError::Ok) << "frame " << cur_frame;
    }
    const bool spilled = (exp.size() - roce::kIcrcSize + 63) % 64 >= 60;   // last beat > 60 bytes
    if (bad) ++(spilled ? stats.bad_spill : stats.bad);
    else if (fatal) ++stats.intact_after_fatal;
    if (f.last_in + 1 == fatal_at) ++stats.edge_bad;
    if (f.last_in + 2 == fatal_at) ++stats.edge_intact;
    if (int(gen_tab[f.qpn]) != f.gen) ++stats.sent_reset_since_start;
    f.fate = Frame::Fate::Sent;
    cur.clear();
    cur_frame = -1;
    ++frames_checked;
  }

  void run_until_done(unsigned p_valid, unsigned p_ready) {
    for (int i = 0; i < 200000 && (!in.empty() || undecided()); ++i) {
      cycle(p_valid, p_ready);
      if (HasFatalFailure()) return;
    }
    EXPECT_TRUE(in.empty() && !undecided()) << "frames stuck: " << frames.size() - head;
    EXPECT_EQ(frames_checked + stale_drops, frames.size());
  }

  Rng rng;
  Dut<Vsrnic_tx_icrc> dut;
  std::array<uint8_t, 1u << kQpnBits> gen_tab{};   // every QP's current incarnation
  std::vector<uint16_t> qps;                       // the QPs frames are drawn from
  std::deque<InBeat> in;
  std::vector<Frame> frames;
  std::vector<uint8_t> cur;
  size_t head = 0;           // the next frame to start or be discarded on the output
  int64_t cur_frame = -1;    // the frame under way on the output (started, not yet whole)
  size_t n_last_in = 0;      // frames whose last beat entered
  bool holding = false, out_stalled = false;
  bool fatal = false;              // driven on the fatal input
  unsigned quiet_ready = 0;        // TREADY percentage once quiet()
  unsigned p_reset = 0;            // per mille of cycles that reset a QP (reset_target)
  unsigned p_old = 0;              // percentage of frames made for an earlier incarnation
  uint64_t fatal_at = kNever;      // first cycle of fatal
  std::array<uint32_t, 16> st_data{};
  uint64_t st_keep = 0;
  bool st_last = false, st_user = false;
  uint64_t frames_sent = 0, frames_checked = 0, stale_drops = 0;
  struct {
    uint64_t bad = 0, bad_spill = 0, intact_after_fatal = 0, dropped = 0;
    uint64_t edge_bad = 0, edge_intact = 0;   // ICRC queued in fatal's first cycle / the cycle before
    uint64_t resets = 0, made_stale = 0;
    uint64_t stale_at_entry = 0, stale_reset_in_flight = 0;    // discarded as stale
    uint64_t reset_first_beat_held = 0, reset_under_way = 0;   // resets of the QP of the frame on the output
    uint64_t sent_reset_since_start = 0, sent_other_reset = 0;
  } stats;
};

const roce::MacAddr kPeerMac = {0x02, 0, 0, 0, 0, 0x01};

TEST_F(TxIcrcBench, EveryLastBeatFill) {
  SRNIC_BENCH_TRACE();
  reset();
  // SEND_ONLY with payload 0..255 walks the frame length through every residue mod 64
  // (frames without ICRC are 2 mod 4 bytes long, so last beats hold 2, 6, ..., 62 bytes).
  for (size_t len = 0; len < 256; ++len) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcSendOnly;
    p.payload.resize(len);
    add(p);
  }
  run_until_done(100, 100);
  EXPECT_EQ(frames_checked, 256u);
  EXPECT_EQ(frames_sent, 256u);
}

// RoCE frames are 4-byte padded, but the block takes any length: frames cut to every length
// mod 64 (last beats of 1 to 64 bytes, odd ones too), IP length rewritten, ICRC recomputed by
// the packet library.
TEST_F(TxIcrcBench, AnyFrameLength) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int s = 0; s < 64 * 3; ++s) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcSendOnly;
    p.payload.resize(rng.range(100, 1500));
    add_frame(cut_to_length_mod64(p.build(), size_t(s)), false);   // length without ICRC = s mod 64
  }
  run_until_done(80, 60);
  EXPECT_EQ(frames_checked, 192u);
  EXPECT_EQ(frames_sent, 192u);
}

void random_run(TxIcrcBench& b, size_t min_frame) {
  for (int n = 0; n < 300;) {
    const roce::Packet p = random_packet(b.rng, b.rng.percent(50) ? 4096 : 1024, kPeerMac, 0x0A000001);
    if (p.frame_size() < min_frame) continue;
    b.add(p);
    ++n;
  }
  const size_t total = b.frames.size();
  for (int phase = 0; phase < 20 && !b.HasFatalFailure(); ++phase) {
    const unsigned pv = unsigned(b.rng.range(30, 100)), pr = unsigned(b.rng.range(20, 100));
    for (int i = 0; i < 2000 && !b.HasFatalFailure(); ++i) b.cycle(pv, pr);
  }
  b.run_until_done(100, 100);
  EXPECT_EQ(b.frames_checked, total);
  EXPECT_EQ(b.frames_sent, total);
}

// Frames of at least 4 beats: at most 4 frames can have their last beat in the beat FIFO.
TEST_F(TxIcrcBench, RandomLongFramesWithBackPressure) {
  SRNIC_BENCH_TRACE();
  reset();
  random_run(*this, 3 * 64 + 1);
}

// Any frame sizes, including runs of one-beat frames behind a stalled output.
TEST_F(TxIcrcBench, RandomFramesWithBackPressure) {
  SRNIC_BENCH_TRACE();
  reset();
  random_run(*this, 0);
}

// One-beat frames pile up behind a stalled output: every one must still get its ICRC.
TEST_F(TxIcrcBench, ManyShortFramesBehindStalledOutput) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int n = 0; n < 6; ++n) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcAck;
    p.payload.clear();
    add(p);
  }
  for (int i = 0; i < 20; ++i) cycle(100, 0);  // all six frames enter, nothing leaves
  run_until_done(100, 100);
  EXPECT_EQ(frames_checked, 6u) << "frames stuck behind a lost ICRC";
}

TEST_F(TxIcrcBench, ShortestFrames) {
  SRNIC_BENCH_TRACE();
  reset();
  // ACKs and READ requests: one-beat frames, back to back with no gaps.
  for (int n = 0; n < 100; ++n) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = n & 1 ? roce::op::kRcAck : roce::op::kRcReadRequest;
    p.payload.clear();
    add(p);
  }
  run_until_done(100, 100);
  EXPECT_EQ(frames_checked, 100u);
}

// Frames for the fatal runs: builder frames, and frames cut so that their last beat holds 61
// to 64 bytes (the ICRC spills into an extra beat) or any number of bytes.
void add_mixed_frames(TxIcrcBench& b, int n) {
  for (int i = 0; i < n; ++i) {
    roce::Packet p = random_packet(b.rng, b.rng.percent(50) ? 1024 : 256, kPeerMac, 0x0A000001);
    const int kind = int(b.rng.below(4));
    if (kind == 0) {
      b.add(p);
      continue;
    }
    p.bth.opcode = roce::op::kRcSendOnly;
    p.payload.resize(kind == 3 ? b.rng.range(80, 600) : b.rng.range(10, kind == 1 ? 80 : 600));
    const size_t mod64 = kind == 3 ? b.rng.below(64) : (61 + b.rng.below(4)) % 64;
    b.add_frame(cut_to_length_mod64(p.build(), mod64), false);
  }
}

// Where fatal rises, in the cycle about to run.
enum class Rise { FirstBeatHeld, SpillBeatHeld, MidFrame, IcrcNow, IcrcLastCycle, Any };
constexpr int kRises = 6;
const char* const kRiseName[kRises] = {"first beat held",
                                       "spill beat held",
                                       "mid frame before its last input beat",
                                       "ICRC of the frame under way queued now",
                                       "ICRC queued the cycle before",
                                       "any cycle"};

bool rise_here(const TxIcrcBench& b, Rise r) {
  const uint64_t c = b.dut.cycle();
  const bool under_way = b.cur_frame >= 0;
  // the output's frame is the newest one whose last beat entered, `ago` cycles ago
  auto last_entered = [&](uint64_t ago) {
    return under_way && b.n_last_in == size_t(b.cur_frame) + 1 && b.frames[size_t(b.cur_frame)].last_in + ago == c;
  };
  switch (r) {
    case Rise::FirstBeatHeld: return b.out_stalled && b.cur.empty();
    case Rise::SpillBeatHeld:   // a last beat of at most 4 bytes after a full one
      return b.out_stalled && b.st_last && !b.cur.empty() && __builtin_popcountll(b.st_keep) <= 4;
    case Rise::MidFrame: return !b.cur.empty() && b.frames[size_t(b.cur_frame)].last_in == kNever;
    case Rise::IcrcNow: return last_entered(1);
    case Rise::IcrcLastCycle: return last_entered(2);
    default: return true;
  }
}

// Fatal rises at a random cycle (pinned to one of the Rise cases when it comes up) of random
// traffic with back-pressure; the run goes on until the input is consumed and the output
// quiet, then 50 cycles more with nothing offered; in every other pair of runs TREADY stays
// low once the output is quiet. The frame checks are in cycle/collect.
TEST_F(TxIcrcBench, FatalAtRandomCycle) {
  SRNIC_BENCH_TRACE();
  std::array<int, kRises> pinned{};
  uint64_t sent = 0;
  for (int ep = 0; ep < 300 && !HasFatalFailure(); ++ep) {
    reset();
    add_mixed_frames(*this, int(rng.range(10, 40)));
    const size_t total = frames.size();
    const unsigned pv = unsigned(rng.range(30, 100)), pr = unsigned(rng.range(20, 100));
    const Rise where = Rise(ep % kRises);
    const unsigned qr = (ep / kRises) % 2 ? 0 : unsigned(rng.range(20, 100));
    const int before = int(rng.range(0, 400));
    for (int i = 0; !in.empty() || undecided(); ++i) {
      ASSERT_LT(i, 100000) << "episode " << ep << ": frames stuck before fatal";
      if (i >= before && rise_here(*this, where)) {
        raise_fatal();
        quiet_ready = qr;
        ++pinned[size_t(where)];
        break;
      }
      cycle(pv, pr);
    }
    for (int i = 0; fatal && !(in.empty() && quiet()); ++i) {
      ASSERT_LT(i, 100000) << "episode " << ep << ": input not consumed or frame not finished while fatal";
      cycle(pv, pr);
    }
    for (int i = 0; i < 50; ++i) cycle(pv, pr);
    EXPECT_EQ(frames_sent, frames_checked) << "episode " << ep;
    EXPECT_EQ(stale_drops, 0u) << "episode " << ep;
    if (!fatal) EXPECT_EQ(frames_checked, total) << "episode " << ep;
    stats.dropped += total - frames_checked;
    sent += frames_checked;
  }
  for (int r = 0; r < kRises; ++r) EXPECT_GT(pinned[size_t(r)], 3) << "fatal rising with: " << kRiseName[r];
  EXPECT_GT(stats.bad, 10u) << "frames with their ICRC inverted";
  EXPECT_GT(stats.bad_spill, 3u) << "frames with their ICRC inverted, spilling into an extra beat";
  EXPECT_GT(stats.intact_after_fatal, 10u) << "frames with an ICRC from before fatal, finishing after it";
  EXPECT_GT(stats.edge_bad, 3u);
  EXPECT_GT(stats.edge_intact, 3u);
  EXPECT_GT(stats.dropped, 300u);
  EXPECT_GT(sent, 300u);
}

// The first beat of a frame is offered and held by TREADY low when fatal rises: the frame
// still leaves whole; its ICRC was known before (a one-beat frame: offered with it), so it is
// intact. The frame behind it is discarded, its input taken without TREADY.
TEST_F(TxIcrcBench, FatalWithFirstBeatHeld) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int n = 0; n < 2; ++n) {
    roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
    p.bth.opcode = roce::op::kRcAck;
    p.payload.clear();
    add(p);
  }
  for (int i = 0; i < 10; ++i) cycle(100, 0);   // both enter; the first is offered and held
  ASSERT_TRUE(out_stalled);
  ASSERT_TRUE(in.empty());
  raise_fatal();
  for (int i = 0; i < 5; ++i) cycle(100, 0);    // still offered, unchanged
  for (int i = 0; i < 50 && !quiet(); ++i) cycle(100, 100);
  for (int i = 0; i < 20; ++i) cycle(100, 100);
  EXPECT_EQ(frames_checked, 1u);
  EXPECT_EQ(stats.intact_after_fatal, 1u);
  EXPECT_EQ(frames_sent, 1u);
}

// ------------------------------------------------------------ incarnations (decision 109)

// A one-beat ACK frame.
roce::Packet ack_packet(Rng& rng) {
  roce::Packet p = random_packet(rng, 256, kPeerMac, 0x0A000001);
  p.bth.opcode = roce::op::kRcAck;
  p.payload.clear();
  return p;
}

// A SEND ONLY frame of `beats` input beats (2..).
roce::Packet send_packet(Rng& rng, size_t beats) {
  roce::Packet p = random_packet(rng, 4096, kPeerMac, 0x0A000001);
  p.bth.opcode = roce::op::kRcSendOnly;
  p.payload.resize(64 * beats - 58 - 20);   // 58 header bytes: the last beat holds 20 bytes
  return p;
}

// Random traffic of four QPs (0, 65535 and two others) with back-pressure; QPs are reset at
// random cycles (any of them, the QP of the frame on the output, the QP of the next frame),
// and some frames are made for an incarnation from before a reset. The checks are in cycle,
// start and take_stale; here: every frame either leaves whole or is discarded as stale, and
// every case came up (a frame discarded for a reset before it entered and for one after its
// first beat entered, a reset of the QP of a frame whose first beat is held or which is under
// way, and frames that left although another QP was reset while they were in the block).
TEST_F(TxIcrcBench, QpResetsAtRandomCycles) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int phase = 0; phase < 30 && !HasFatalFailure(); ++phase) {
    add_mixed_frames(*this, 40);
    p_reset = unsigned(rng.range(5, 80));
    p_old = unsigned(rng.range(0, 20));
    const unsigned pv = unsigned(rng.range(30, 100)), pr = unsigned(rng.range(20, 100));
    for (int i = 0; i < 3000 && !in.empty() && !HasFatalFailure(); ++i) cycle(pv, pr);
  }
  p_reset = 0;
  run_until_done(100, 100);
  EXPECT_EQ(frames_sent, frames_checked);
  EXPECT_GT(frames_checked, 300u);
  EXPECT_GT(stats.stale_at_entry, 20u) << "frames made for an earlier incarnation, discarded";
  EXPECT_GT(stats.stale_reset_in_flight, 20u) << "frames whose QP was reset after their first beat entered, discarded";
  EXPECT_GT(stats.reset_first_beat_held, 5u) << "resets of the QP of a frame whose first beat is held";
  EXPECT_GT(stats.reset_under_way, 10u) << "resets of the QP of a frame under way";
  EXPECT_GT(stats.sent_reset_since_start, 10u) << "frames finished after their QP's reset";
  EXPECT_GT(stats.sent_other_reset, 50u) << "frames sent after another QP's reset while they were in the block";
}

// Every frame is made for an earlier incarnation and TREADY stays low: nothing is offered,
// the input drains (s_tready keeps flowing), stale_drop pulses once per frame. A frame of the
// current incarnation behind them leaves.
TEST_F(TxIcrcBench, StaleFramesDrainWithoutTready) {
  SRNIC_BENCH_TRACE();
  reset();
  p_old = 100;
  add_mixed_frames(*this, 40);
  const size_t beats = in.size();
  int i = 0;
  for (; i < 2000 && !in.empty() && !HasFatalFailure(); ++i) cycle(100, 0);
  EXPECT_TRUE(in.empty()) << "input stalled behind stale frames with TREADY low";
  EXPECT_LE(size_t(i), 2 * beats + 20) << "cycles to drain " << beats << " beats";
  for (int k = 0; k < 20; ++k) cycle(100, 0);
  EXPECT_EQ(stale_drops, 40u);
  EXPECT_EQ(frames_checked, 0u);
  p_old = 0;
  add(ack_packet(rng));
  run_until_done(100, 100);
  EXPECT_EQ(frames_checked, 1u);
}

// The first beat of a frame of QP A is offered and held by TREADY low when A is reset: the
// frame leaves whole (unchanged while held); the frames of A behind it are discarded, the one
// of QP B between them leaves.
TEST_F(TxIcrcBench, QpResetWithFirstBeatHeld) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint16_t a = qps[2], b = qps[3];
  const int ga = gen_tab[a], gb = gen_tab[b];   // all four made before the reset
  add(ack_packet(rng), a, ga);
  add(send_packet(rng, 3), a, ga);
  add(ack_packet(rng), b, gb);
  add(ack_packet(rng), a, ga);
  for (int i = 0; i < 10; ++i) cycle(100, 0);
  ASSERT_TRUE(out_stalled);
  ASSERT_EQ(cur_frame, 0);
  reset_qp(a);
  for (int i = 0; i < 5; ++i) cycle(100, 0);    // still offered, unchanged
  run_until_done(100, 100);
  EXPECT_EQ(frames[0].fate, Frame::Fate::Sent);
  EXPECT_EQ(frames[1].fate, Frame::Fate::Stale);
  EXPECT_EQ(frames[2].fate, Frame::Fate::Sent);
  EXPECT_EQ(frames[3].fate, Frame::Fate::Stale);
  EXPECT_EQ(stale_drops, 2u);
  EXPECT_EQ(stats.reset_first_beat_held, 1u);
  EXPECT_EQ(stats.sent_reset_since_start, 1u);
}

// QP A is reset while its 4-beat frame is half sent: the frame finishes whole; A's next frame
// is discarded, B's leaves.
TEST_F(TxIcrcBench, QpResetUnderWay) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint16_t a = qps[0], b = qps[1];
  const int ga = gen_tab[a], gb = gen_tab[b];
  add(send_packet(rng, 4), a, ga);
  add(ack_packet(rng), a, ga);
  add(ack_packet(rng), b, gb);
  for (int i = 0; i < 30 && cur.size() < 128; ++i) cycle(100, 100);
  ASSERT_EQ(cur.size(), 128u);
  reset_qp(a);
  for (int i = 0; i < 5; ++i) cycle(100, 0);
  run_until_done(100, 100);
  EXPECT_EQ(frames[0].fate, Frame::Fate::Sent);
  EXPECT_EQ(frames[1].fate, Frame::Fate::Stale);
  EXPECT_EQ(frames[2].fate, Frame::Fate::Sent);
  EXPECT_EQ(stats.reset_under_way, 1u);
}

// Fatal and resets at once: random traffic with resets and frames made for earlier
// incarnations, fatal rising at a random cycle, pinned to a held first beat whose QP is reset
// in the same cycle (the frame finishes), to the next frame's QP reset in that cycle while
// nothing is under way (discarded for fatal, without stale_drop), or any cycle. Resets go on
// while fatal: no stale_drop then, nothing starts. Before fatal, stale frames are discarded
// with stale_drop as usual.
TEST_F(TxIcrcBench, FatalAndQpResets) {
  SRNIC_BENCH_TRACE();
  enum Pin { kHeld, kNext, kAny, kPins };
  std::array<int, kPins> pinned{};
  uint64_t stale_then_fatal = 0, held_sent = 0, all_stale = 0;
  for (int ep = 0; ep < 240 && !HasFatalFailure(); ++ep) {
    reset();
    add_mixed_frames(*this, int(rng.range(10, 40)));
    const size_t total = frames.size();
    p_reset = unsigned(rng.range(10, 80));
    p_old = unsigned(rng.range(0, 30));
    const unsigned pv = unsigned(rng.range(30, 100)), pr = unsigned(rng.range(20, 100));
    const Pin where = Pin(ep % kPins);
    const unsigned qr = (ep / kPins) % 2 ? 0 : unsigned(rng.range(20, 100));
    const int before = int(rng.range(0, 400));
    int64_t held = -1;
    for (int i = 0; !in.empty() || undecided(); ++i) {
      ASSERT_LT(i, 100000) << "episode " << ep << ": frames stuck before fatal";
      bool rise = false;
      if (i >= before) {
        if (where == kHeld && out_stalled && cur.empty()) {
          held = cur_frame;
          reset_qp(frames[size_t(cur_frame)].qpn);
          rise = true;
        } else if (where == kNext && cur_frame < 0 && head < frames.size() && frames[head].first_in != kNever &&
                   int(gen_tab[frames[head].qpn]) == frames[head].gen) {
          reset_qp(frames[head].qpn);
          rise = true;
        } else if (where == kAny) {
          rise = true;
        }
      }
      if (rise) {
        raise_fatal();
        quiet_ready = qr;
        ++pinned[size_t(where)];
        break;
      }
      cycle(pv, pr);
    }
    for (int i = 0; fatal && !(in.empty() && quiet()); ++i) {
      ASSERT_LT(i, 100000) << "episode " << ep << ": input not consumed or frame not finished while fatal";
      cycle(pv, pr);
    }
    for (int i = 0; i < 50; ++i) cycle(pv, pr);
    EXPECT_EQ(frames_sent, frames_checked) << "episode " << ep;
    if (!fatal) EXPECT_EQ(frames_checked + stale_drops, total) << "episode " << ep;
    if (held >= 0) {
      EXPECT_EQ(frames[size_t(held)].fate, Frame::Fate::Sent) << "episode " << ep << ": the held frame";
      held_sent += frames[size_t(held)].fate == Frame::Fate::Sent;
    }
    for (const Frame& f : frames)
      if (f.fate == Frame::Fate::Pending && f.gen >= 0 && int(gen_tab[f.qpn]) != f.gen) ++stale_then_fatal;
    all_stale += stale_drops;
  }
  for (int p = 0; p < kPins; ++p) EXPECT_GT(pinned[size_t(p)], 20) << "pin " << p;
  EXPECT_GT(held_sent, 20u) << "held first beats of a QP reset as fatal rose, finished";
  EXPECT_GT(stale_then_fatal, 50u) << "stale frames discarded while fatal";
  EXPECT_GT(all_stale, 100u) << "stale frames discarded before fatal";
}

}  // namespace
}  // namespace srnic::verif::blocks
