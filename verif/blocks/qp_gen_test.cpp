// srnic_qp_gen bench: the incarnation array against a C++ model of it. The array is not reset
// (the model starts with random contents), so every test first reads each QP's value through
// the read ports, before any bump, and checks everything after against those first values:
// - a bump (bump_valid, bump_qpn) advances that QP's incarnation by one modulo 16 (GEN_W
//   bits), seen on the read ports from the next cycle: a port naming the QP in the bump
//   cycle still reads the old value; no other QP changes; bump_qpn without bump_valid changes
//   nothing; back-to-back bumps of one QP add one a cycle and 16 of them return it to its
//   first value; QPs 0 and NUM_QPS-1 as well;
// - every read port is combinational (a new rd_qpn is answered without a clock edge, several
//   times in one cycle) and answers for its own QPN only: ports naming distinct QPs that hold
//   distinct values, the same QP, neighbouring QPs, the QP being bumped;
// - random bumps (a few hot QPs, the edges, any QP; bursts on one QP) and reads against the
//   model, then every QP compared.
#include <algorithm>
#include <string>
#include <vector>

#include "Vsrnic_qp_gen.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr uint32_t kQps = BENCH_NUM_QPS;
constexpr int kPorts = BENCH_NPORTS;
constexpr int kGenW = 4;   // srnic_pkg::GEN_W
constexpr int clog2(uint32_t n) { return n <= 1 ? 0 : 1 + clog2((n + 1) / 2); }
constexpr int kAw = clog2(kQps);
static_assert((1u << kAw) == kQps, "the bench names every QP with kAw bits");
static_assert(kQps >= 16, "the bench gives 16 QPs distinct incarnations");

class QpGenBench : public ::testing::Test {
 public:
  QpGenBench() : rng(test_seed()), dut(rng.next()), model(kQps, 0), port_q(kPorts, 0) {
    dut->bump_valid = 0;
    dut->bump_qpn = 0;
    for (int p = 0; p < kPorts; ++p) name(p, 0);
    dut.eval();
  }

  void name(int p, uint32_t q) {
    set_bits(dut->rd_qpn, p * kAw, kAw, q);
    port_q[size_t(p)] = q;
  }
  unsigned read(int p) { return unsigned(get_bits(dut->rd_gen, p * kGenW, kGenW)); }

  // The first value of every QP: each read through two different ports, which must agree.
  void learn() {
    for (int round = 0; round < 2; ++round)
      for (uint32_t base = 0; base < kQps; base += kPorts) {
        for (int p = 0; p < kPorts; ++p) name(p, (base + uint32_t((p + round) % kPorts)) % kQps);
        dut.eval();
        for (int p = 0; p < kPorts; ++p) {
          const uint32_t q = port_q[size_t(p)];
          if (round == 0) model[q] = uint8_t(read(p));
          else
            ASSERT_EQ(read(p), unsigned(model[q])) << "QP " << q << " reads differently on port " << p;
        }
      }
    first = model;
  }

  // Every port against the model (bumps of this cycle not applied yet).
  void check(const std::string& what) {
    dut.eval();
    for (int p = 0; p < kPorts; ++p) {
      const uint32_t q = port_q[size_t(p)];
      ASSERT_EQ(read(p), unsigned(model[q]))
          << "cycle " << dut.cycle() << ", " << what << ": port " << p << " names QP " << q << " (first value "
          << unsigned(first[q]) << ", bumped " << bumped[q] << " times)";
      ++reads;
    }
  }
  // Every QP against the model, through the ports (no clock edge).
  void sweep(const std::string& what) {
    const std::vector<uint32_t> keep = port_q;
    for (uint32_t base = 0; base < kQps && !HasFatalFailure(); base += kPorts) {
      for (int p = 0; p < kPorts; ++p) name(p, (base + uint32_t(p)) % kQps);
      check(what + " (sweep)");
    }
    for (int p = 0; p < kPorts; ++p) name(p, keep[size_t(p)]);
    dut.eval();
  }

  // One cycle: the ports are checked with the bump (if any) offered, then the edge applies it.
  void step(bool bump, uint32_t q, const std::string& what) {
    dut->bump_valid = bump;
    dut->bump_qpn = q;
    check(what);
    dut.tick();
    if (bump) {
      model[q] = uint8_t((model[q] + 1) & 15);
      ++bumped[q];
    }
    dut->bump_valid = 0;
    dut->bump_qpn = uint32_t(rng.below(kQps));   // no bump: any QPN
    dut.eval();
  }
  // Bumps q until it holds v.
  void bump_to(uint32_t q, uint8_t v) {
    while (model[q] != v && !HasFatalFailure()) step(true, q, "bumping QP " + std::to_string(q));
  }

  Rng rng;
  Dut<Vsrnic_qp_gen> dut;
  std::vector<uint8_t> model, first;
  std::vector<uint64_t> bumped = std::vector<uint64_t>(kQps, 0);
  std::vector<uint32_t> port_q;
  uint64_t reads = 0;
};

// Without bumps nothing changes, whatever bump_qpn says.
TEST_F(QpGenBench, NoBumpNoChange) {
  SRNIC_BENCH_TRACE();
  learn();
  ASSERT_FALSE(HasFatalFailure());
  for (int i = 0; i < 200 && !HasFatalFailure(); ++i) {
    for (int p = 0; p < kPorts; ++p) name(p, uint32_t(rng.below(kQps)));
    step(false, uint32_t(rng.below(kQps)), "no bump");
  }
  sweep("after 200 cycles without a bump");
}

// A bump is seen from the next cycle, on every port naming the QP, and only for that QP; back
// to back bumps add one a cycle, 16 bring the QP back to its first value.
TEST_F(QpGenBench, BumpAdvancesByOneFromTheNextCycle) {
  SRNIC_BENCH_TRACE();
  learn();
  ASSERT_FALSE(HasFatalFailure());
  for (uint32_t q : {uint32_t(0), kQps - 1, uint32_t(rng.range(1, kQps - 2))}) {
    for (int p = 0; p < kPorts; ++p) name(p, p % 2 ? q : (q + uint32_t(p)) % kQps);
    const uint8_t before = model[q];
    step(true, q, "bump cycle of QP " + std::to_string(q));   // still the old value
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_EQ(unsigned(model[q]), unsigned((before + 1) & 15));
    check("the cycle after a bump of QP " + std::to_string(q));
    sweep("after one bump of QP " + std::to_string(q));
    // 16 back to back: +1 a cycle, back where it was (plus the one above)
    for (int i = 0; i < 16 && !HasFatalFailure(); ++i) step(true, q, "back-to-back bumps of QP " + std::to_string(q));
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(unsigned(model[q]), unsigned((before + 1) & 15));
    check("after 16 more bumps of QP " + std::to_string(q));
    step(false, q, "after the bumps");
    sweep("after 17 bumps of QP " + std::to_string(q));
  }
  // bumps of two QPs in alternate cycles, read on all ports
  const uint32_t a = uint32_t(rng.below(kQps)), b = (a + 1) % kQps;
  for (int p = 0; p < kPorts; ++p) name(p, p % 2 ? a : b);
  for (int i = 0; i < 40 && !HasFatalFailure(); ++i) step(true, i % 2 ? a : b, "alternate bumps");
  step(false, a, "after alternate bumps");
  EXPECT_EQ(model[a], uint8_t((first[a] + bumped[a]) & 15));
  sweep("after alternate bumps");
}

// Each port answers for its own QPN, combinationally: QPs given distinct values, named in
// random combinations (several per cycle, no clock edge in between), the same QP on every
// port, neighbours, and the QP being bumped in this cycle.
TEST_F(QpGenBench, PortsAnswerTheirOwnQpCombinationally) {
  SRNIC_BENCH_TRACE();
  learn();
  ASSERT_FALSE(HasFatalFailure());
  // 16 QPs with the values 0..15 (in a random order): the first and the last eight
  std::vector<uint32_t> set;
  for (uint32_t i = 0; i < 8; ++i) set.push_back(i);
  for (uint32_t i = 0; i < 8; ++i) set.push_back(kQps - 8 + i);
  const uint8_t base = uint8_t(rng.below(16));
  for (size_t i = 0; i < set.size() && !HasFatalFailure(); ++i) bump_to(set[i], uint8_t((base + i) & 15));
  ASSERT_FALSE(HasFatalFailure());
  for (int cyc = 0; cyc < 300 && !HasFatalFailure(); ++cyc) {
    const int probes = int(rng.range(1, 4));
    for (int k = 0; k < probes && !HasFatalFailure(); ++k) {
      const unsigned mode = unsigned(rng.below(4));
      const uint32_t one = set[rng.below(set.size())];
      for (int p = 0; p < kPorts; ++p) {
        uint32_t q = set[rng.below(set.size())];
        if (mode == 1) q = one;                                   // every port the same QP
        if (mode == 2) q = (one + uint32_t(p)) % kQps;            // neighbours
        if (mode == 3) q = uint32_t(rng.below(kQps));
        name(p, q);
      }
      check("probe " + std::to_string(k) + " (mode " + std::to_string(mode) + ")");
    }
    // a bump now of a QP some port names: still the old value in this cycle
    const uint32_t bq = port_q[rng.below(kPorts)];
    step(rng.percent(30), bq, "ports naming a QP bumped in this cycle");
  }
  sweep("at the end");
  EXPECT_GT(reads, 300u * kPorts);
}

// Random bumps and reads against the model.
TEST_F(QpGenBench, RandomBumpsAgainstModel) {
  SRNIC_BENCH_TRACE();
  learn();
  ASSERT_FALSE(HasFatalFailure());
  std::vector<uint32_t> hot;
  for (int i = 0; i < 4; ++i) hot.push_back(uint32_t(rng.below(kQps)));
  uint64_t nbumps = 0, same_cycle = 0;
  uint32_t burst_q = 0;
  int burst = 0;
  for (int cyc = 0; cyc < 40000 && !HasFatalFailure(); ++cyc) {
    bool bump = rng.percent(45);
    uint32_t bq;
    if (burst > 0) {
      bump = true;
      bq = burst_q;
      --burst;
    } else {
      const unsigned r = unsigned(rng.below(100));
      bq = r < 55 ? hot[rng.below(hot.size())] : r < 65 ? (rng.percent(50) ? 0 : kQps - 1) : uint32_t(rng.below(kQps));
      if (bump && rng.percent(2)) {
        burst_q = bq;
        burst = int(rng.range(2, 20));
      }
    }
    dut->bump_valid = bump;   // offered while the ports are probed
    dut->bump_qpn = bq;
    const int probes = int(rng.range(1, 3));
    for (int k = 0; k < probes && !HasFatalFailure(); ++k) {
      for (int p = 0; p < kPorts; ++p) {
        const unsigned r = unsigned(rng.below(100));
        name(p, r < 20 ? bq : r < 60 ? hot[rng.below(hot.size())] : uint32_t(rng.below(kQps)));
        same_cycle += bump && port_q[size_t(p)] == bq;
      }
      if (k + 1 < probes) check("random probe");
    }
    step(bump, bq, "random");
    nbumps += bump;
    if (cyc % 10000 == 9999) sweep("random, cycle " + std::to_string(cyc));
  }
  sweep("at the end");
  std::printf("[bench] %llu bumps, %llu port reads, %llu of a QP in its bump cycle\n", (unsigned long long)nbumps,
              (unsigned long long)reads, (unsigned long long)same_cycle);
  EXPECT_GT(nbumps, 15000u);
  EXPECT_GT(same_cycle, 5000u);
}

}  // namespace
}  // namespace srnic::verif::blocks
