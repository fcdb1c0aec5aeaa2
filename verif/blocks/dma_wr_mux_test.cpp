// srnic_dma_wr_mux bench: two clients issue random write bursts (AW held until ready, W
// beats with random gaps) against a slave with random AWREADY/WREADY. The master W stream
// must be the granted bursts back to back in AW order (never interleaved), each beat's data
// and strobe from its own client, WLAST exactly on the burst's last beat; AW must stay
// stable until taken, with ID 0, 64-byte INCR bursts; a waiting client is passed over at
// most once; bresp_err flags a non-OKAY write response.
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
    dut.reset();
  }

  static uint64_t strb_of(uint32_t tag, int beat) { return (uint64_t(tag) * 0x9E3779B97F4A7C15ull) ^ uint64_t(beat); }

  void cycle(unsigned p_new, unsigned p_w, unsigned p_awr, unsigned p_wr) {
    for (int k = 0; k < 2; ++k) {
      auto& c = cl[size_t(k)];
      if (c.todo.size() < 3 && rng.percent(p_new)) {
        c.todo.push_back({rng.next() & ~63ull, int(rng.below(rng.percent(20) ? 64 : 4)),
                          uint32_t(k) << 28 | (c.made++ & 0xFFFFF) << 8});
      }
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
    EXPECT_TRUE(dut->m_axi_bready);
    EXPECT_EQ(int(dut->m_axi_awid), 0);
    EXPECT_EQ(int(dut->m_axi_awsize), 6);
    EXPECT_EQ(int(dut->m_axi_awburst), 1);
    if (aw_stalled) {
      EXPECT_TRUE(dut->m_axi_awvalid) << "cycle " << c << ": AWVALID dropped before AWREADY";
      EXPECT_EQ(uint64_t(dut->m_axi_awaddr), stalled_addr) << "cycle " << c << ": AWADDR changed while stalled";
      EXPECT_EQ(int(dut->m_axi_awlen), stalled_len) << "cycle " << c;
    }
    aw_stalled = dut->m_axi_awvalid && !dut->m_axi_awready;
    stalled_addr = dut->m_axi_awaddr;
    stalled_len = dut->m_axi_awlen;

    const uint32_t awr = dut->c_aw_ready;
    EXPECT_NE(awr, 3u) << "cycle " << c;
    EXPECT_EQ(awr != 0, dut->m_axi_awvalid && dut->m_axi_awready) << "cycle " << c;
    if (awr) {
      const int k = awr == 2;
      auto& cc = cl[size_t(k)];
      ASSERT_LT(cc.aw_idx, cc.todo.size()) << "cycle " << c << ": AW grant to client " << k << " without a request";
      const Burst& b = cc.todo[cc.aw_idx];
      EXPECT_EQ(uint64_t(dut->m_axi_awaddr), b.addr) << "cycle " << c << " client " << k;
      EXPECT_EQ(int(dut->m_axi_awlen), b.len) << "cycle " << c << " client " << k;
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
    // W channel
    const uint32_t wr = dut->c_w_ready;
    EXPECT_NE(wr, 3u);
    if (dut->m_axi_wvalid && dut->m_axi_wready) {
      ASSERT_FALSE(order.empty()) << "cycle " << c << ": write data before any AW";
      const Burst& b = order.front();
      const uint32_t d0 = dut->m_axi_wdata[0];
      EXPECT_EQ(d0 & 0xF0FFFF00u, b.tag) << "cycle " << c << ": beat of another burst (interleaving?)";
      EXPECT_EQ(int(d0 & 0xFF), w_beat) << "cycle " << c << ": beat number";
      EXPECT_EQ(uint64_t(dut->m_axi_wstrb), strb_of(b.tag, w_beat)) << "cycle " << c;
      EXPECT_EQ(bool(dut->m_axi_wlast), w_beat == b.len) << "cycle " << c;
      EXPECT_NE(wr, 0u);
      ++beats;
      if (w_beat == b.len) {
        order.pop_front();
        w_beat = 0;
        ++bursts;
      } else {
        ++w_beat;
      }
    }
    for (int k = 0; k < 2; ++k) {
      auto& cc = cl[size_t(k)];
      if (cc.w_hold && ((wr >> k) & 1) && dut->m_axi_wready) {
        cc.w_hold = false;
        if (cc.beat == cc.todo.front().len) {
          cc.todo.pop_front();
          --cc.aw_idx;
          cc.beat = 0;
        } else {
          ++cc.beat;
        }
      }
    }
    dut.tick();
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
  std::deque<Burst> order;
  int w_beat = 0;
  bool aw_stalled = false;
  uint64_t stalled_addr = 0;
  int stalled_len = 0;
  uint64_t beats = 0, bursts = 0;
};

TEST_F(DmaWrMuxBench, RandomBursts) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int phase = 0; phase < 50 && !HasFatalFailure(); ++phase) {
    const unsigned pn = unsigned(rng.range(5, 100)), pw = unsigned(rng.range(30, 100));
    const unsigned pa = unsigned(rng.range(10, 100)), pwr = unsigned(rng.range(20, 100));
    for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) cycle(pn, pw, pa, pwr);
  }
  for (int i = 0; i < 2000 && !HasFatalFailure(); ++i) cycle(0, 100, 100, 100);
  EXPECT_TRUE(order.empty());
  for (int k = 0; k < 2; ++k) EXPECT_TRUE(cl[size_t(k)].todo.empty()) << "client " << k << " bursts left";
  EXPECT_GT(bursts, 2000u);
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
