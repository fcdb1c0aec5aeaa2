// srnic_mr_table bench: every port against a C++ reference of the MR check: entry at
// key >> 8 (must be < NUM_MRS), valid, full 32-bit key, PD, access rights, bounds
// [va, va + len) inside [iova, iova + length) computed without 64-bit wrap, and
// pa = entry.pa + (va - iova); zero-length accesses always pass. Responses come exactly two
// cycles after the request; a request sees the table as written before its cycle.
// Directed cases cover the 64-bit edges (regions ending at 2^64, va + len crossing 2^64,
// huge lengths, zero-length regions) and key aliasing above the table size.
#include <array>
#include <vector>

#include "Vsrnic_mr_table.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kMrs = BENCH_NUM_MRS;
constexpr int kPorts = BENCH_NPORTS;
using u128 = unsigned __int128;

struct Entry {
  uint64_t iova = 0, length = 0, pa = 0;
  uint32_t key = 0, pd = 0;
  uint8_t access = 0;
  bool valid = false;
};
struct Req {
  uint32_t key = 0, pd = 0, len = 0;
  uint8_t access = 0;
  uint64_t va = 0;
};
struct Expect {
  bool valid = false, ok = false, check_pa = false;
  uint64_t pa = 0;
  Req req;
};

Expect reference(const std::vector<Entry>& table, const Req& r) {
  Expect e;
  e.valid = true;
  e.req = r;
  if (r.len == 0) {
    e.ok = true;
    return e;
  }
  const uint32_t idx = r.key >> 8;
  if (idx >= uint32_t(kMrs)) return e;
  const Entry& m = table[idx];
  e.ok = m.valid && m.key == r.key && m.pd == r.pd && (r.access & ~m.access & 0xF) == 0 &&
         r.va >= m.iova && u128(r.va) + r.len <= u128(m.iova) + m.length;
  e.check_pa = e.ok;
  e.pa = m.pa + (r.va - m.iova);
  return e;
}

class MrTableBench : public ::testing::Test {
 public:
  MrTableBench() : rng(test_seed()), dut(rng.next()), table(kMrs) {}

  // Inputs start random (x-initial unique): idle them, then reset.
  void reset() {
    dut->wr_valid = 0;
    dut->req_valid = 0;
    dut.reset();
  }

  void drive_write(bool en, int idx, const Entry& m) {
    dut->wr_valid = en;
    dut->wr_index = idx;
    auto put = [&](size_t f, uint64_t v) { set_bits(dut->wr_entry, kMrEntry.at(f).lsb, kMrEntry.at(f).width, v); };
    put(kMrIova, m.iova);
    put(kMrLength, m.length);
    put(kMrPa, m.pa);
    put(kMrKey, m.key);
    put(kMrPd, m.pd);
    put(kMrAccess, m.access);
    put(kMrValid, m.valid);
  }

  // One cycle: optional table write and one optional request per port.
  void cycle(bool wr, int idx, const Entry& m, const std::array<bool, kPorts>& rv,
             const std::array<Req, kPorts>& rq) {
    drive_write(wr, idx, m);
    for (int p = 0; p < kPorts; ++p) {
      set_bits(dut->req_valid, p, 1, rv[p]);
      set_bits(dut->req_key, 32 * p, 32, rq[p].key);
      set_bits(dut->req_pd, 32 * p, 32, rq[p].pd);
      set_bits(dut->req_access, 4 * p, 4, rq[p].access);
      set_bits(dut->req_va, 64 * p, 64, rq[p].va);
      set_bits(dut->req_len, 32 * p, 32, rq[p].len);
    }
    dut.eval();
    for (int p = 0; p < kPorts; ++p) {
      const Expect& e = pipe[1][p];
      const uint64_t c = dut.cycle();
      ASSERT_EQ(bool(get_bits(dut->rsp_valid, p, 1)), e.valid) << "cycle " << c << " port " << p;
      if (!e.valid) continue;
      ++responses;
      oks += e.ok;
      const auto& r = e.req;
      ASSERT_EQ(bool(get_bits(dut->rsp_ok, p, 1)), e.ok)
          << "cycle " << c << " port " << p << std::hex << " key 0x" << r.key << " pd 0x" << r.pd
          << " access 0x" << int(r.access) << " va 0x" << r.va << " len 0x" << r.len;
      if (e.check_pa) {
        ASSERT_EQ(get_bits(dut->rsp_pa, 64 * p, 64), e.pa) << "cycle " << c << " port " << p;
      }
    }
    pipe[1] = pipe[0];
    for (int p = 0; p < kPorts; ++p) pipe[0][p] = rv[p] ? reference(table, rq[p]) : Expect{};
    dut.tick();
    if (wr) table[size_t(idx)] = m;
  }
  void idle() { cycle(false, 0, Entry{}, {}, {}); }
  // Checks one request on every port, alone in the pipeline.
  void check_all_ports(const Req& r) {
    std::array<bool, kPorts> v;
    std::array<Req, kPorts> q;
    v.fill(true);
    q.fill(r);
    cycle(false, 0, Entry{}, v, q);
    idle();
    idle();
  }

  Entry random_entry(int idx) {
    Entry m;
    switch (rng.below(6)) {
      case 0: m.length = rng.below(8192); m.iova = rng.next(); break;
      case 1: m.length = rng.range(1, 1ull << 40); m.iova = 0ull - m.length; break;  // ends at 2^64
      case 2: m.length = ~0ull; m.iova = rng.below(4096); break;
      case 3: m.length = 0; m.iova = rng.next(); break;
      case 4: m.length = 1ull << 63; m.iova = rng.next(); break;  // may extend past 2^64
      default: m.length = rng.range(1, 1 << 20); m.iova = rng.next() & ~0xFFFull; break;
    }
    m.pa = rng.next();
    m.key = uint32_t(idx) << 8 | rng.u8();
    if (rng.percent(10)) m.key += uint32_t(kMrs) << 8 << rng.below(4);  // aliases above the table
    m.pd = rng.percent(50) ? uint32_t(rng.below(4)) : rng.u32();
    m.access = uint8_t(rng.below(16));
    m.valid = !rng.percent(10);
    return m;
  }

  // A request aimed at an entry, then possibly perturbed in one field.
  Req random_req() {
    Req r;
    const Entry& m = table[rng.below(kMrs)];
    r.key = m.key;
    r.pd = m.pd;
    r.access = m.access & uint8_t(rng.below(16));
    const u128 end = u128(m.iova) + m.length;
    r.va = m.length ? m.iova + rng.below(m.length) : m.iova;
    const u128 room = end - r.va;
    const uint64_t max_len = room > 0xFFFFFFFFu ? 0xFFFFFFFFu : uint64_t(room);
    r.len = uint32_t(rng.percent(30) ? max_len : rng.range(0, max_len));
    switch (rng.below(12)) {
      case 0: r.key ^= 1u << rng.below(8); break;
      case 1: r.key ^= 1u << rng.range(8, 31); break;
      case 2: r.pd ^= 1u << rng.below(32); break;
      case 3: r.access |= uint8_t(1u << rng.below(4)); break;
      case 4: r.va -= rng.range(1, 4); break;
      case 5: r.len += uint32_t(rng.range(1, 4)); break;
      case 6: r.len = 0; r.key = rng.u32(); break;
      case 7: r.va = rng.next(); break;
      default: break;
    }
    return r;
  }

  Rng rng;
  Dut<Vsrnic_mr_table> dut;
  std::vector<Entry> table;
  std::array<std::array<Expect, kPorts>, 2> pipe{};
  uint64_t responses = 0, oks = 0;
};

TEST_F(MrTableBench, EdgeCases) {
  SRNIC_BENCH_TRACE();
  reset();
  const int i = kMrs - 1;
  const uint32_t key = uint32_t(i) << 8 | 0x5A;
  auto install = [&](uint64_t iova, uint64_t length, uint8_t acc = 0xF) {
    Entry m{iova, length, 0x1000'0000'0000ull, key, 7, acc, true};
    cycle(true, i, m, {}, {});
  };
  auto ok = [&](uint64_t va, uint32_t len, uint32_t k = 0, uint32_t pd = 7, uint8_t acc = 2) {
    check_all_ports(Req{k ? k : key, pd, len, acc, va});
  };
  // Region [2^64 - 4096, 2^64): its end does not fit in 64 bits.
  install(0ull - 4096, 4096);
  ok(0ull - 4096, 4096);  // whole region
  ok(0ull - 1, 1);        // last byte
  ok(0ull - 1, 2);        // crosses 2^64: must fail, not wrap
  ok(0ull - 4097, 1);     // below the region
  ok(0, 1);               // wrapped address
  // Region extending past 2^64 (iova + length > 2^64): in-range requests pass.
  install(0ull - 16, 1ull << 63);
  ok(0ull - 8, 8);
  ok(0ull - 8, 9);        // va + len > 2^64 but inside iova + length
  ok(5, 4);               // wrapped: below iova
  // Huge region from 0.
  install(0, ~0ull);
  ok(0, 0xFFFFFFFF);
  ok(0ull - 2, 1);
  ok(0ull - 1, 1);        // [2^64-1, 2^64) not inside [0, 2^64-1)
  // Zero-length region: nothing passes except zero-length accesses.
  install(0x1000, 0);
  ok(0x1000, 1);
  ok(0x1000, 0);
  ok(0x1000, 0, 0xDEADBEEF, 99, 0xF);  // zero length: no key, PD or access check
  // Exact bounds and access rights.
  install(0x10000, 0x100, 0x6);
  ok(0x10000, 0x100);
  ok(0x10000, 0x101);
  ok(0xFFFF, 1);
  ok(0x100FF, 1, 0, 7, 0x6);
  ok(0x100FF, 1, 0, 7, 0x1);  // LOCAL_WRITE not granted
  ok(0x100FF, 1, 0, 8);       // wrong PD
  ok(0x100FF, 1, key ^ 0x80); // wrong key variant
  // Key aliasing: index bits above the table must fail even though the low bits select i.
  Entry alias{0x10000, 0x100, 0x2000, key + (uint32_t(kMrs) << 8), 7, 0xF, true};
  cycle(true, i, alias, {}, {});
  ok(0x10000, 4, alias.key);
  ok(0x10000, 4, key);
  // Invalid entry.
  alias.key = key;
  alias.valid = false;
  cycle(true, i, alias, {}, {});
  ok(0x10000, 4);
  EXPECT_GT(oks, 0u);
}

TEST_F(MrTableBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < kMrs; ++i) cycle(true, i, random_entry(i), {}, {});
  for (int n = 0; n < 200000 && !HasFatalFailure(); ++n) {
    std::array<bool, kPorts> v;
    std::array<Req, kPorts> q;
    for (int p = 0; p < kPorts; ++p) {
      v[p] = rng.percent(70);
      q[p] = random_req();
    }
    const bool wr = rng.percent(3);
    const int idx = int(rng.below(kMrs));
    cycle(wr, idx, random_entry(idx), v, q);
  }
  EXPECT_GT(oks, responses / 5);
  EXPECT_LT(oks, responses * 9 / 10);
}

// A reset invalidates every entry: the RAM keeps what an earlier user of the NIC wrote, and a
// new user, whose PDs and key tags start again from the same numbers, must not be granted
// access through it. Entries written after the reset work again.
TEST_F(MrTableBench, ResetInvalidatesEveryEntry) {
  SRNIC_BENCH_TRACE();
  reset();
  std::vector<Req> reqs;
  for (int i = 0; i < kMrs; i += std::max(1, kMrs / 8)) {
    const Entry m{0x1000, 0x2000, 0x5000'0000ull + uint64_t(i) * 0x10000, uint32_t(i) << 8 | 1, 1, 0xF, true};
    cycle(true, i, m, {}, {});
    reqs.push_back(Req{m.key, 1, 64, 2, 0x1800});
  }
  for (const Req& r : reqs) check_all_ports(r);   // granted (the reference says so)
  ASSERT_FALSE(HasFailure());
  reset();
  table.assign(kMrs, Entry{});
  for (const Req& r : reqs) check_all_ports(r);   // refused: nothing is valid after the reset
  const Entry m{0x1000, 0x2000, 0x7000'0000ull, 1, 1, 0xF, true};
  cycle(true, 0, m, {}, {});
  check_all_ports(Req{1, 1, 64, 2, 0x1800});
}

TEST_F(MrTableBench, ResetDropsRequestsInFlight) {
  SRNIC_BENCH_TRACE();
  reset();
  std::array<bool, kPorts> v;
  v.fill(true);
  cycle(false, 0, Entry{}, v, {});
  dut->rst = 1;
  dut->req_valid = 0;
  dut.tick();
  dut.tick();
  dut->rst = 0;
  dut.eval();
  EXPECT_EQ(int(dut->rsp_valid), 0);
  dut.tick();
  dut.eval();
  EXPECT_EQ(int(dut->rsp_valid), 0);
}

}  // namespace
}  // namespace srnic::verif::blocks
