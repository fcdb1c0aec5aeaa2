// srnic_dma_rd_mux bench: N clients issue random read requests (valid held until ready,
// as AXI requires) against a slave with random ARREADY. Every request must reach the AXI
// master port exactly once, in order per client, with ARID = client, its address and
// length, size 64 bytes and INCR bursts; ARVALID and the request must stay stable until
// taken; while a client waits, at most N-1 other requests are granted (round-robin).
// Read data is routed by RID to exactly that client with data and last passed through.
// Error responses (decision 108): err_valid exactly on the R beats whose RRESP is not OKAY
// (random codes on random beats), with that beat's RID and RRESP on err_id/err_resp; the
// beat itself is still delivered to its client like any other.
#include <array>
#include <deque>
#include <vector>

#include "Vsrnic_dma_rd_mux.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kN = BENCH_N;

struct Req {
  uint64_t addr;
  uint8_t len;
};

class DmaRdMuxBench : public ::testing::Test {
 public:
  DmaRdMuxBench() : rng(test_seed()), dut(rng.next()) {}

  void reset() {
    dut->c_ar_valid = 0;
    dut->m_axi_arready = 0;
    dut->m_axi_rvalid = 0;
    dut.reset();
  }

  void cycle(unsigned p_req, unsigned p_ready, unsigned p_r, unsigned p_err = 0) {
    for (int k = 0; k < kN; ++k) {
      if (!pending[size_t(k)] && rng.percent(p_req)) {
        pending[size_t(k)] = true;
        cur[size_t(k)] = {rng.next() & ~63ull, uint8_t(rng.below(64))};
        waited[size_t(k)] = 0;
      }
      set_bits(dut->c_ar_valid, k, 1, pending[size_t(k)]);
      set_bits(dut->c_ar_addr, 64 * k, 64, cur[size_t(k)].addr);
      set_bits(dut->c_ar_len, 8 * k, 8, cur[size_t(k)].len);
    }
    dut->m_axi_arready = rng.percent(p_ready);
    const bool rv = rng.percent(p_r);
    const int rid = int(rng.below(16));
    const bool rlast = rng.percent(30);
    const uint64_t word = rng.next();
    // RRESP: OKAY, or EXOKAY / SLVERR / DECERR on a random share of the cycles (also idle ones)
    const int rresp = rng.percent(p_err) ? int(rng.range(1, 3)) : 0;
    dut->m_axi_rvalid = rv;
    dut->m_axi_rid = rid;
    dut->m_axi_rlast = rlast;
    dut->m_axi_rresp = rresp;
    for (int w = 0; w < 16; ++w) dut->m_axi_rdata[size_t(w)] = uint32_t(word >> (w % 2 * 32)) ^ uint32_t(w);
    dut.eval();
    const uint64_t c = dut.cycle();

    // R routing
    const uint32_t exp_rv = rv && rid < kN ? 1u << rid : 0u;
    EXPECT_EQ(uint32_t(dut->c_r_valid), exp_rv) << "cycle " << c << " rid " << rid;
    EXPECT_TRUE(dut->m_axi_rready);
    EXPECT_EQ(bool(dut->c_r_last), rlast);
    EXPECT_EQ(uint32_t(dut->c_r_data[3]), uint32_t(word >> 32) ^ 3u);

    // error report: one pulse per R beat answered with an error, its RID and RRESP
    EXPECT_EQ(bool(dut->err_valid), rv && rresp != 0) << "cycle " << c << " rvalid " << rv << " rresp " << rresp;
    if (rv && rresp != 0) {
      EXPECT_EQ(int(dut->err_id), rid) << "cycle " << c;
      EXPECT_EQ(int(dut->err_resp), rresp) << "cycle " << c;
      ++err_beats[size_t(rresp)];
      if (rid < kN) ++err_delivered;
    }

    // AR master side
    EXPECT_EQ(int(dut->m_axi_arsize), 6);
    EXPECT_EQ(int(dut->m_axi_arburst), 1);
    if (ar_stalled) {
      EXPECT_TRUE(dut->m_axi_arvalid) << "cycle " << c << ": ARVALID dropped before ARREADY";
      EXPECT_EQ(uint64_t(dut->m_axi_araddr), stalled.addr) << "cycle " << c << ": ARADDR changed while stalled";
      EXPECT_EQ(int(dut->m_axi_arid), stalled_id);
    }
    if (dut->m_axi_arvalid && dut->m_axi_arready) {
      const int id = dut->m_axi_arid;
      EXPECT_LT(id, kN);
      auto& q = granted[size_t(id % kN)];
      if (q.empty()) {
        ADD_FAILURE() << "cycle " << c << ": request on ARID " << id << " that the client never made";
      } else {
        EXPECT_EQ(uint64_t(dut->m_axi_araddr), q.front().addr) << "cycle " << c << " ARID " << id;
        EXPECT_EQ(int(dut->m_axi_arlen), int(q.front().len)) << "cycle " << c << " ARID " << id;
        q.pop_front();
      }
      ++issued;
    }
    ar_stalled = dut->m_axi_arvalid && !dut->m_axi_arready;
    stalled = {uint64_t(dut->m_axi_araddr), uint8_t(dut->m_axi_arlen)};
    stalled_id = dut->m_axi_arid;

    // client side: at most one ready, only to a valid client
    const uint32_t rdy = dut->c_ar_ready;
    EXPECT_EQ(rdy & (rdy - 1), 0u) << "cycle " << c << ": two clients granted";
    for (int k = 0; k < kN; ++k) {
      if (!((rdy >> k) & 1)) continue;
      EXPECT_TRUE(pending[size_t(k)]) << "cycle " << c << ": ready to an idle client " << k;
      granted[size_t(k)].push_back(cur[size_t(k)]);
      pending[size_t(k)] = false;
      for (int j = 0; j < kN; ++j)
        if (j != k && pending[size_t(j)]) {
          ++waited[size_t(j)];
          EXPECT_LE(waited[size_t(j)], kN - 1) << "cycle " << c << ": client " << j << " passed over too often";
        }
    }
    dut.tick();
  }

  Rng rng;
  Dut<Vsrnic_dma_rd_mux> dut;
  std::array<bool, kN> pending{};
  std::array<Req, kN> cur{};
  std::array<int, kN> waited{};
  std::array<std::deque<Req>, kN> granted;
  bool ar_stalled = false;
  Req stalled{};
  int stalled_id = 0;
  uint64_t issued = 0;
  std::array<uint64_t, 4> err_beats{};  // error beats by RRESP
  uint64_t err_delivered = 0;           // error beats on a client's ID (delivered to it)
};

TEST_F(DmaRdMuxBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  uint64_t made = 0;
  for (int phase = 0; phase < 50 && !HasFailure(); ++phase) {
    const unsigned pq = unsigned(rng.range(5, 100)), pr = unsigned(rng.range(10, 100));
    for (int i = 0; i < 2000 && !HasFailure(); ++i) cycle(pq, pr, 50, phase % 5 == 0 ? 20 : 0);
  }
  // drain: no new requests, slave always ready
  for (int i = 0; i < 4 * kN + 4; ++i) cycle(0, 100, 0);
  for (int k = 0; k < kN; ++k) {
    EXPECT_FALSE(pending[size_t(k)]) << "client " << k << " never granted";
    EXPECT_TRUE(granted[size_t(k)].empty()) << "client " << k << ": granted request never issued";
  }
  for (auto& g : granted) made += g.size();
  EXPECT_GT(issued, 20000u);
  EXPECT_EQ(made, 0u);
}

TEST_F(DmaRdMuxBench, AllClientsBusyRotate) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < 2000 && !HasFailure(); ++i) cycle(100, 100, 0);
  EXPECT_GT(issued, 1900u) << "one request per cycle expected with a ready slave";
}

// Error responses on random beats of random IDs, beside ordinary traffic: each reported once,
// with its ID and code, and delivered to its client all the same (the checks are in cycle()).
TEST_F(DmaRdMuxBench, ErrorResponsesReported) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int phase = 0; phase < 10 && !HasFailure(); ++phase) {
    const unsigned pe = unsigned(rng.range(5, 60)), pv = unsigned(rng.range(30, 100));
    for (int i = 0; i < 1000 && !HasFailure(); ++i) cycle(50, 70, pv, pe);
  }
  for (int r = 1; r <= 3; ++r) EXPECT_GT(err_beats[size_t(r)], 100u) << "RRESP " << r;
  EXPECT_GT(err_delivered, 100u);
  EXPECT_GT(issued, 3000u);
}

}  // namespace
}  // namespace srnic::verif::blocks
