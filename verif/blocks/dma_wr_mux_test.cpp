// srnic_dma_wr_mux bench: two clients issue random write bursts (AW held until ready, W
// beats with random gaps) against a slave with random AWREADY/WREADY. The master W stream
// must be the granted bursts back to back in AW order (never interleaved), each beat's data
// and strobe from its own client, WLAST exactly on the burst's last beat; AW must stay
// stable until taken, with ID 0, 64-byte INCR bursts; a waiting client is passed over at
// most once; bresp_err flags a non-OKAY write response and bresp_code carries BRESP.
// AWVALID, WVALID, c_aw_ready and c_w_ready are checked every cycle against a reference of
// the W channel's owner (an AW is offered whenever the channel is free and a client asks).
// Fatal (decision 108), raised at a random cycle and kept high: from its first cycle no AW is
// offered on m_axi except one offered before and still waiting, which stays valid and stable
// until taken; every burst granted while fatal is taken from its client (c_aw_ready, then
// c_w_ready for each beat, whatever WREADY) and never appears on m_axi; a burst whose AW was
// issued still gets every W beat, with no byte enabled on each beat first offered while fatal
// (a beat offered before and held by WREADY low keeps its payload, as AXI requires); no
// client hangs.
#include <array>
#include <deque>
#include <vector>

#include "Vsrnic_dma_wr_mux.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

struct Burst {
  uint64_t addr;
  int len;        // beats - 1
  uint32_t tag;   // client << 28 | burst number << 8
  bool sink;      // granted while fatal: taken from the client, never on m_axi
};

class DmaWrMuxBench : public ::testing::Test {
 public:
  DmaWrMuxBench() : rng(test_seed()), dut(rng.next()) {}

  void reset() {
    dut->c_aw_valid = 0;
    dut->c_w_valid = 0;
    dut->m_axi_awready = 0;
    dut->m_axi_wready = 0;
    dut->m_axi_bvalid = 0;
    dut->fatal = 0;
    dut.reset();
    for (auto& c : cl) c = Client{};
    order.clear();
    w_beat = 0;
    aw_stalled = w_stalled = fatal = false;
  }

  // a client's strobe, never 0 (0 is what a beat sent while fatal carries)
  static uint64_t strb_of(uint32_t tag, int beat) {
    const uint64_t v = ((uint64_t(tag) + 1) * 0x9E3779B97F4A7C15ull) ^ uint64_t(beat);
    return v ? v : 1;
  }
  static int client_of(const Burst& b) { return int(b.tag >> 28); }

  void cycle(unsigned p_new, unsigned p_w, unsigned p_awr, unsigned p_wr) {
    for (int k = 0; k < 2; ++k) {
      auto& c = cl[size_t(k)];
      if (c.todo.size() < 3 && rng.percent(p_new)) add(k, int(rng.below(rng.percent(20) ? 64 : 4)));
      // AW: the oldest burst not yet granted
      const bool awv = c.aw_idx < c.todo.size();
      set_bits(dut->c_aw_valid, k, 1, awv);
      if (awv) {
        set_bits(dut->c_aw_addr, 64 * k, 64, c.todo[c.aw_idx].addr);
        set_bits(dut->c_aw_len, 8 * k, 8, uint64_t(c.todo[c.aw_idx].len));
      }
      // W: beats of the oldest burst, whether or not its AW was taken yet
      if (!c.w_hold && !c.todo.empty() && rng.percent(p_w)) c.w_hold = true;
      set_bits(dut->c_w_valid, k, 1, c.w_hold);
      if (c.w_hold) {
        const Burst& b = c.todo.front();
        for (int w = 0; w < 16; ++w) dut->c_w_data[size_t(16 * k + w)] = b.tag | uint32_t(c.beat) | uint32_t(w) << 24;
        set_bits(dut->c_w_strb, 64 * k, 64, strb_of(b.tag, c.beat));
        set_bits(dut->c_w_last, k, 1, c.beat == b.len);
      }
    }
    dut->fatal = fatal;
    dut->m_axi_awready = rng.percent(p_awr);
    dut->m_axi_wready = rng.percent(p_wr);
    const bool bv = rng.percent(20);
    const int bresp = rng.percent(10) ? int(rng.range(1, 3)) : 0;
    dut->m_axi_bvalid = bv;
    dut->m_axi_bresp = bresp;
    dut->m_axi_bid = 0;
    dut.eval();
    const uint64_t c = dut.cycle();

    EXPECT_EQ(bool(dut->bresp_err), bv && bresp != 0);
    if (bv) EXPECT_EQ(int(dut->bresp_code), bresp) << "cycle " << c;
    EXPECT_TRUE(dut->m_axi_bready);
    EXPECT_EQ(int(dut->m_axi_awid), 0);
    EXPECT_EQ(int(dut->m_axi_awsize), 6);
    EXPECT_EQ(int(dut->m_axi_awburst), 1);

    // AW: offered whenever the W channel is free (no granted burst with beats left) and a
    // client asks; while fatal only the AW offered before and still waiting
    const bool busy = !order.empty();
    const bool any_aw = (dut->c_aw_valid & 3) != 0;
    if (fatal && dut->m_axi_awvalid && !aw_stalled)
      ADD_FAILURE() << "cycle " << c << ": AW offered to host memory while fatal";
    else
      EXPECT_EQ(bool(dut->m_axi_awvalid), !busy && any_aw && (!fatal || aw_stalled)) << "cycle " << c;
    if (aw_stalled) {
      EXPECT_TRUE(dut->m_axi_awvalid) << "cycle " << c << ": AWVALID dropped before AWREADY";
      EXPECT_EQ(uint64_t(dut->m_axi_awaddr), stalled_addr) << "cycle " << c << ": AWADDR changed while stalled";
      EXPECT_EQ(int(dut->m_axi_awlen), stalled_len) << "cycle " << c;
    }
    const bool aw_was_stalled = aw_stalled;
    aw_stalled = dut->m_axi_awvalid && !dut->m_axi_awready;
    stalled_addr = dut->m_axi_awaddr;
    stalled_len = dut->m_axi_awlen;

    // the client side of AW: taken with the slave's AWREADY, or, while fatal and nothing is
    // waiting on m_axi, taken at once and discarded
    const uint32_t awr = dut->c_aw_ready;
    const bool sink_grant = fatal && !aw_was_stalled && !busy && any_aw;
    EXPECT_NE(awr, 3u) << "cycle " << c;
    EXPECT_EQ(awr != 0, (dut->m_axi_awvalid && dut->m_axi_awready) || sink_grant)
        << "cycle " << c << (sink_grant ? ": a burst granted while fatal was not taken from its client" : "");
    if (awr) {
      const int k = awr == 2;
      auto& cc = cl[size_t(k)];
      ASSERT_LT(cc.aw_idx, cc.todo.size()) << "cycle " << c << ": AW grant to client " << k << " without a request";
      Burst& b = cc.todo[cc.aw_idx];
      b.sink = !dut->m_axi_awvalid;
      if (!b.sink) {
        EXPECT_EQ(uint64_t(dut->m_axi_awaddr), b.addr) << "cycle " << c << " client " << k;
        EXPECT_EQ(int(dut->m_axi_awlen), b.len) << "cycle " << c << " client " << k;
        if (fatal) ++aw_issued_fatal;
      }
      ++(b.sink ? bursts_sunk : bursts_issued);
      order.push_back(b);
      ++cc.aw_idx;
      // fairness: the other client, if it was waiting, is passed over at most once in a row
      auto& o = cl[size_t(1 - k)];
      if (o.aw_idx < o.todo.size() && get_bits(dut->c_aw_valid, 1 - k, 1)) {
        ++o.passed;
        EXPECT_LE(o.passed, 1) << "cycle " << c << ": client " << 1 - k << " starved";
      }
      cc.passed = 0;
    }

    // W: the channel belongs to the oldest granted burst (granted in an earlier cycle: a grant
    // needs the channel free); an issued burst's beats go to m_axi with WREADY, a discarded
    // burst's beats are taken from its client every cycle and never reach m_axi
    const uint32_t wr = dut->c_w_ready;
    const Burst* fb = busy ? &order.front() : nullptr;
    const int owner = fb ? client_of(*fb) : -1;
    const bool owner_wv = fb && get_bits(dut->c_w_valid, owner, 1);
    EXPECT_EQ(bool(dut->m_axi_wvalid), fb && !fb->sink && owner_wv)
        << "cycle " << c << (fb && fb->sink ? ": a beat of a discarded burst on m_axi" : "");
    EXPECT_EQ(wr, fb && (fb->sink || dut->m_axi_wready) ? 1u << owner : 0u) << "cycle " << c;
    if (w_stalled) {
      EXPECT_TRUE(dut->m_axi_wvalid) << "cycle " << c << ": WVALID dropped before WREADY";
      EXPECT_EQ(uint32_t(dut->m_axi_wdata[0]), stalled_w0) << "cycle " << c << ": WDATA changed while stalled";
      EXPECT_EQ(uint64_t(dut->m_axi_wstrb), stalled_strb) << "cycle " << c << ": WSTRB changed while stalled"
                                                           << (fatal ? " (fatal rose under a waiting beat)" : "");
      EXPECT_EQ(bool(dut->m_axi_wlast), stalled_last) << "cycle " << c;
    } else if (dut->m_axi_wvalid) {
      w_first_fatal = fatal;   // first offer of this beat
    }
    if (dut->m_axi_wvalid && fb) {
      const uint32_t d0 = dut->m_axi_wdata[0];
      EXPECT_EQ(d0 & 0xF0FFFF00u, fb->tag) << "cycle " << c << ": beat of another burst (interleaving?)";
      EXPECT_EQ(int(d0 & 0xFF), w_beat) << "cycle " << c << ": beat number";
      EXPECT_EQ(bool(dut->m_axi_wlast), w_beat == fb->len) << "cycle " << c;
      if (w_first_fatal) {
        EXPECT_EQ(uint64_t(dut->m_axi_wstrb), 0u) << "cycle " << c << ": bytes enabled in a beat offered while fatal";
      } else if (!w_stalled) {
        EXPECT_EQ(uint64_t(dut->m_axi_wstrb), strb_of(fb->tag, w_beat)) << "cycle " << c;
      }
    }
    w_stalled = dut->m_axi_wvalid && !dut->m_axi_wready;
    stalled_w0 = dut->m_axi_wdata[0];
    stalled_strb = dut->m_axi_wstrb;
    stalled_last = dut->m_axi_wlast;
    if (dut->m_axi_wvalid && dut->m_axi_wready) {
      ++beats;
      if (uint64_t(dut->m_axi_wstrb) == 0) ++beats_zero;
    }
    // a client's beat is taken: the W channel's owner moves on
    for (int k = 0; k < 2; ++k) {
      auto& cc = cl[size_t(k)];
      if (!cc.w_hold || !((wr >> k) & 1)) continue;
      ASSERT_TRUE(fb && owner == k) << "cycle " << c << ": beat taken from client " << k << " not owning W";
      EXPECT_EQ(cc.beat, w_beat) << "cycle " << c;
      if (fb->sink) ++beats_sunk;
      cc.w_hold = false;
      if (cc.beat == cc.todo.front().len) {
        cc.todo.pop_front();
        --cc.aw_idx;
        cc.beat = 0;
        order.pop_front();
        w_beat = 0;
        ++bursts;
      } else {
        ++cc.beat;
        ++w_beat;
      }
    }
    dut.tick();
  }

  void add(int k, int len) {
    auto& c = cl[size_t(k)];
    c.todo.push_back({rng.next() & ~63ull, len, uint32_t(k) << 28 | (c.made++ & 0xFFFFF) << 8, false});
  }
  // Drains: no new bursts, slave always ready; every burst must complete.
  void drain() {
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) cycle(0, 100, 100, 100);
    EXPECT_TRUE(order.empty()) << "granted bursts left";
    for (int k = 0; k < 2; ++k) EXPECT_TRUE(cl[size_t(k)].todo.empty()) << "client " << k << " bursts left";
  }

  struct Client {
    std::deque<Burst> todo;
    size_t aw_idx = 0;  // bursts before this index had their AW taken
    int beat = 0;
    bool w_hold = false;
    uint32_t made = 0;
    int passed = 0;
  };

  Rng rng;
  Dut<Vsrnic_dma_wr_mux> dut;
  std::array<Client, 2> cl;
  std::deque<Burst> order;   // granted bursts with beats left, in grant order
  int w_beat = 0;            // next beat of order.front()
  bool fatal = false;        // driven on the fatal input
  bool aw_stalled = false, w_stalled = false, w_first_fatal = false, stalled_last = false;
  uint64_t stalled_addr = 0, stalled_strb = 0;
  uint32_t stalled_w0 = 0;
  int stalled_len = 0;
  uint64_t beats = 0, bursts = 0, beats_zero = 0, beats_sunk = 0;
  uint64_t bursts_issued = 0, bursts_sunk = 0, aw_issued_fatal = 0;
};

TEST_F(DmaWrMuxBench, RandomBursts) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int phase = 0; phase < 50 && !HasFatalFailure(); ++phase) {
    const unsigned pn = unsigned(rng.range(5, 100)), pw = unsigned(rng.range(30, 100));
    const unsigned pa = unsigned(rng.range(10, 100)), pwr = unsigned(rng.range(20, 100));
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) cycle(pn, pw, pa, pwr);
  }
  drain();
  EXPECT_GT(bursts, 2000u);
  EXPECT_EQ(bursts_sunk + beats_zero, 0u);
}

// Fatal rises at a random cycle of random traffic and stays high; the traffic goes on (every
// later burst is discarded), then drains. Episodes pin the rise to an AW held by AWREADY low,
// a W beat held by WREADY low, a burst whose W beats are half sent, or any cycle.
TEST_F(DmaWrMuxBench, FatalAtRandomCycle) {
  SRNIC_BENCH_TRACE();
  const char* kWhere[] = {"AW held", "W beat held", "burst half sent", "any cycle"};
  std::array<int, 4> pinned{};
  uint64_t issued_fatal = 0, sunk = 0;
  for (int ep = 0; ep < 60 && !HasFatalFailure(); ++ep) {
    reset();
    const int where = ep % 4;
    const unsigned pn = unsigned(rng.range(20, 100)), pw = unsigned(rng.range(30, 100));
    const unsigned pa = unsigned(rng.range(10, 90)), pwr = unsigned(rng.range(20, 90));
    const int before = int(rng.range(0, 1500));
    int i = 0;
    for (; i < before + 3000 && !HasFatalFailure(); ++i) {
      if (i >= before) {
        // the cycle about to run: the held AW / W beat of the last cycle is still offered
        const bool half = !order.empty() && w_beat > 0 && w_beat <= order.front().len && !order.front().sink;
        const bool hit = where == 0 ? aw_stalled : where == 1 ? w_stalled : where == 2 ? half && !w_stalled : true;
        if (hit) break;
      }
      cycle(pn, pw, pa, pwr);
    }
    if (i >= before + 3000) continue;   // the case did not come up in this episode
    ++pinned[size_t(where)];
    fatal = true;
    const uint64_t issued0 = bursts_issued, sunk0 = bursts_sunk;
    for (int j = 0; j < int(rng.range(200, 2000)) && !HasFatalFailure(); ++j) cycle(pn, pw, pa, pwr);
    drain();
    issued_fatal += bursts_issued - issued0;
    sunk += bursts_sunk - sunk0;
    EXPECT_LE(bursts_issued - issued0, 1u) << "episode " << ep << ": more than the held AW issued while fatal";
    EXPECT_GT(bursts_sunk - sunk0, 0u) << "episode " << ep;
  }
  for (int w = 0; w < 4; ++w) EXPECT_GT(pinned[size_t(w)], 5) << "fatal rising under: " << kWhere[w];
  EXPECT_GT(issued_fatal, 5u) << "held AWs issued while fatal";
  EXPECT_GT(sunk, 500u);
  EXPECT_GT(beats_zero, 100u) << "beats sent with no byte enabled";
}

// An AW waits for AWREADY when fatal rises: it stays offered, unchanged, until taken; its
// beats then go out with no byte enabled; the other client's burst, granted while fatal, is
// taken and discarded.
TEST_F(DmaWrMuxBench, FatalWhileAwHeld) {
  SRNIC_BENCH_TRACE();
  reset();
  add(0, 3);
  add(1, 5);
  for (int i = 0; i < 5; ++i) cycle(0, 100, 0, 100);
  ASSERT_TRUE(aw_stalled);
  fatal = true;
  for (int i = 0; i < 5; ++i) cycle(0, 100, 0, 100);   // the checks: AW still offered and stable
  EXPECT_TRUE(aw_stalled);
  EXPECT_EQ(bursts_issued + bursts_sunk, 0u);
  drain();
  EXPECT_EQ(bursts_issued, 1u);
  EXPECT_EQ(aw_issued_fatal, 1u);
  EXPECT_EQ(bursts_sunk, 1u);
  EXPECT_EQ(beats, 4u) << "the held AW's beats on m_axi";
  EXPECT_EQ(beats_zero, 4u);
  EXPECT_EQ(beats_sunk, 6u);
}

// Fatal rises while a 16-beat burst is half sent (no beat waiting): the rest of its beats
// still go out, each with no byte enabled, WLAST on the 16th; a later burst is discarded.
TEST_F(DmaWrMuxBench, FatalWhileBurstHalfSent) {
  SRNIC_BENCH_TRACE();
  reset();
  add(0, 15);
  add(1, 2);
  while (!HasFatalFailure() && dut.cycle() < 200 && !(w_beat >= 8 && !w_stalled)) cycle(0, 100, 100, 50);
  ASSERT_GE(w_beat, 8);
  const uint64_t sent = beats;
  EXPECT_EQ(beats_zero, 0u);
  fatal = true;
  for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle(0, 100, 100, 50);
  EXPECT_EQ(beats, 16u);
  EXPECT_EQ(beats_zero, 16u - sent);
  EXPECT_EQ(bursts_issued, 1u);
  EXPECT_EQ(bursts_sunk, 1u);
  EXPECT_EQ(beats_sunk, 3u);
  drain();
}

// Fatal rises while a W beat waits for WREADY: AXI keeps that beat's payload (strobe
// included) until it is taken; the burst's later beats go out with no byte enabled.
TEST_F(DmaWrMuxBench, FatalWhileWBeatHeld) {
  SRNIC_BENCH_TRACE();
  reset();
  add(0, 3);
  for (int i = 0; i < 4; ++i) cycle(0, 100, 100, 0);
  ASSERT_TRUE(w_stalled);
  fatal = true;
  for (int i = 0; i < 3; ++i) cycle(0, 100, 100, 0);   // the beat stays, unchanged
  drain();
  EXPECT_EQ(beats, 4u);
  EXPECT_EQ(beats_zero, 3u) << "the beat offered before fatal keeps its strobe";
}

// The RTL assertions are on in every bench: a client that withdraws its AW before the
// slave took it breaks AXI on the master port, and a_aw_hold reports it.
TEST_F(DmaWrMuxBench, AssertionReportsWithdrawnAw) {
  SRNIC_BENCH_TRACE();
  reset();
  dut->c_aw_valid = 1;
  set_bits(dut->c_aw_addr, 0, 64, 0x1000);
  set_bits(dut->c_aw_len, 0, 8, 0);
  dut.eval();
  ASSERT_TRUE(dut->m_axi_awvalid);
  dut.tick();                 // offered, AWREADY low
  dut->c_aw_valid = 0;        // withdrawn
  dut.eval();
  dut.tick();
  dut.tick();
  EXPECT_GE(dut.take_rtl_errors(), 1) << "a_aw_hold did not report the withdrawn AW";
}

}  // namespace
}  // namespace srnic::verif::blocks
