// srnic_csr bench: an AXI4-Lite master with random handshake timing (AW/W order, B/R
// back-pressure) checks every register (reset values, read/write, read-only, clamps,
// unmapped addresses), doorbell events, the free-running timestamp, the event counters and
// the command interface: QP_MODIFY / MR_WRITE / CQ_WRITE payloads built from the ABI
// structs (srnic/abi.hpp) must arrive decoded field by field (the QP context's retry_cnt,
// rnr_retry, timeout and min_rnr_timer included, every value), CMD_STATUS.busy must hold
// until every consumer has taken the command, bad opcodes and indices set the error bit,
// and the QP_MODIFY transition flags must follow each QP's previous state. Commands written
// back to back wait for the one executing (the write is held) and run in order; CMD_STATUS
// counts the accepted commands since its last read (checked on every read) and keeps the first
// refusal, after which commands are skipped until it is read.
// The bench also plays the fetch engine and the completion engine for host-driven ERR: a
// QP_MODIFY moving a QP from INIT/RTR/RTS to ERR must raise herr (with the QP number, held
// until herr_ready, random here) after every consumer took the command and keep the
// command busy until herr_done (given after a random delay); no other transition raises
// it. A QP_MODIFY must not be issued while qerr_busy is high.
// NIC_STATUS (decision 108): 0 after reset; the first DMA error response latches FATAL with
// its channel and code (and AXI ID for a read) until reset, later errors of either channel
// change nothing, a read and a write error in the same cycle latch the read; `fatal` equals
// bit 0 in every cycle (high from the cycle after the error); error inputs are random while
// their valid is low and must be ignored; the PCIE_RD_ERR and PCIE_WR_ERR counters count.
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "Vsrnic_csr.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"
#include "srnic/abi.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
constexpr int kMrs = BENCH_NUM_MRS;
constexpr int kCqs = BENCH_NUM_CQS;
constexpr int kCons = BENCH_N_QPC_CONSUMERS;
constexpr int kCounters = abi::NUM_COUNTERS;
constexpr uint32_t kSchedBurstDefault = 65536;  // docs/interfaces.md §1, SCHED_BURST

constexpr int ilog2(int v) { return v <= 1 ? 0 : 1 + ilog2(v / 2); }

// qp_cmd_t, mr_entry_t and cq_cmd_t: pkg_layouts.hpp

struct DbEvent {
  int kind;  // 0 SQ, 1 RQ, 2 CQ, 3 bad
  uint16_t index, value;
};

class CsrBench : public ::testing::Test {
 public:
  CsrBench() : rng(test_seed()), dut(rng.next()) {}

  // ---------------------------------------------------------------- per-cycle environment
  // Applies the consumer and counter inputs, checks the monitors, clocks.
  void cycle() {
    uint32_t ready = 0;
    for (int i = 0; i < kCons; ++i)
      if (rng.percent(qp_ready_pct[size_t(i)])) ready |= 1u << i;
    dut->qp_cmd_ready = ready;
    dut->cq_cmd_ready = rng.percent(cq_ready_pct);
    uint64_t inc = 0;
    if (count_events)
      for (int i = 0; i < kCounters; ++i)
        if (rng.percent(30)) inc |= 1ull << i;
    dut->cnt_inc = inc;
    // DMA error responses: a pulse the test asked for, or background ones at dma_err_pct;
    // the ID and code are random while their valid is low
    DmaErr e = dma_err;
    dma_err = DmaErr{};
    if (!e.rd && rng.percent(dma_err_pct)) {
      e.rd = true;
      e.rd_id = int(rng.below(16));
      e.rd_resp = int(rng.range(1, 3));
    }
    if (!e.wr && rng.percent(dma_err_pct)) {
      e.wr = true;
      e.wr_resp = int(rng.range(1, 3));
    }
    dut->dma_rd_err = e.rd;
    dut->dma_rd_err_id = e.rd ? e.rd_id : int(rng.below(16));
    dut->dma_rd_err_resp = e.rd ? e.rd_resp : int(rng.below(4));
    dut->dma_wr_err = e.wr;
    dut->dma_wr_err_resp = e.wr ? e.wr_resp : int(rng.below(4));
    dut->db_sq_room = sq_room;
    dut->herr_ready = rng.percent(herr_ready_pct);
    dut->herr_done = herr_wait == 1;
    dut->qerr_busy = qerr_busy;
    dut->cqw_drain_busy = cqw_busy;
    if (dut->gen_bump_valid) ++gen_bumps;
    dut.eval();
    const uint64_t c = dut.cycle();

    EXPECT_EQ(bool(dut->fatal), bool(nic_status & abi::NIC_ST_FATAL))
        << "cycle " << c << ": fatal, NIC_STATUS reference 0x" << std::hex << nic_status;

    // host-driven ERR
    if (herr_was_stalled) {
      EXPECT_TRUE(dut->herr_valid) << "cycle " << c << ": herr_valid dropped before herr_ready";
      EXPECT_EQ(uint32_t(dut->herr_qpn), herr_stalled_qpn) << "cycle " << c << ": herr_qpn changed";
    }
    herr_was_stalled = dut->herr_valid && !dut->herr_ready;
    herr_stalled_qpn = dut->herr_qpn;
    if (dut->herr_valid) {
      if (!herr_seen_valid) {
        // the send side is stopped only after every consumer has the new state
        for (int i = 0; i < kCons; ++i)
          EXPECT_GT(qp_takes[size_t(i)], 0) << "cycle " << c << ": herr before consumer " << i << " took the command";
      }
      herr_seen_valid = true;
    }
    if (dut->herr_valid && dut->herr_ready) {
      herr_qpns.push_back(uint32_t(dut->herr_qpn));
      EXPECT_EQ(herr_wait, 0) << "cycle " << c << ": second herr before herr_done";
      herr_wait = int(rng.range(2, herr_done_max + 1));  // herr_done pulses when it reaches 1
    }
    if (dut->herr_done) ++herr_dones;
    if (herr_wait > 0) --herr_wait;
    // a QP_MODIFY is issued only while no QP failure waits for the RX engine
    if (dut->qp_cmd_valid && !qp_valid_prev) {
      EXPECT_FALSE(qerr_busy_prev) << "cycle " << c << ": QP command issued while qerr_busy";
      ++qp_issues;
    }
    qp_valid_prev = dut->qp_cmd_valid != 0;
    qerr_busy_prev = qerr_busy;

    EXPECT_EQ(uint64_t(dut->timestamp), ts) << "cycle " << c;
    // AXI: responses stay up, with stable data, until taken.
    if (b_was_stalled) {
      EXPECT_TRUE(dut->s_axil_bvalid) << "cycle " << c << ": bvalid dropped";
    }
    if (r_was_stalled) {
      EXPECT_TRUE(dut->s_axil_rvalid) << "cycle " << c << ": rvalid dropped";
      EXPECT_EQ(uint32_t(dut->s_axil_rdata), r_stalled_data) << "cycle " << c << ": rdata changed";
    }
    b_was_stalled = dut->s_axil_bvalid && !dut->s_axil_bready;
    r_was_stalled = dut->s_axil_rvalid && !dut->s_axil_rready;
    r_stalled_data = dut->s_axil_rdata;
    EXPECT_EQ(int(dut->s_axil_bresp), 0);
    EXPECT_EQ(int(dut->s_axil_rresp), 0);

    // Doorbells: one-cycle events.
    const int n_db = dut->db_sq_valid + dut->db_rq_valid + dut->db_cq_valid + dut->db_bad;
    EXPECT_LE(n_db, 1) << "cycle " << c;
    if (n_db) {
      const int kind = dut->db_sq_valid ? 0 : dut->db_rq_valid ? 1 : dut->db_cq_valid ? 2 : 3;
      dbs.push_back({kind, uint16_t(dut->db_index), uint16_t(dut->db_value)});
    }
    // Commands.
    if (dut->s_axil_arvalid && dut->s_axil_arready) {
      ar_all_taken = true;
      for (int t : qp_takes) ar_all_taken = ar_all_taken && t > 0;
      ar_herr_dones = herr_dones - (dut->herr_done ? 1 : 0);   // before this cycle's herr_done
    }
    // qp_cmd_valid is per consumer: a handshake is valid[i] && ready[i].
    if (dut->qp_cmd_valid) {
      ++qp_valid_cycles;
      for (int i = 0; i < kCons; ++i)
        if ((ready >> i) & (dut->qp_cmd_valid >> i) & 1) ++qp_takes[size_t(i)];
      if (!saw_qp_cmd) first_qp_cmd = dut->qp_cmd;
      saw_qp_cmd = true;
      EXPECT_TRUE(std::memcmp(&first_qp_cmd, &dut->qp_cmd, sizeof first_qp_cmd) == 0)
          << "cycle " << c << ": qp_cmd changed while valid";
    }
    if (dut->mr_cmd_valid) {
      ++mr_valids;
      mr_cmd = dut->mr_cmd;
      mr_index = dut->mr_cmd_index;
    }
    if (dut->cq_cmd_valid && dut->cq_cmd_ready) {
      ++cq_takes;
      cq_cmd = dut->cq_cmd;
      cq_log.push_back({get_bits(cq_cmd, kCqCmd.at(kCcCqn).lsb, kCqCmd.at(kCcCqn).width),
                        get_bits(cq_cmd, kCqCmd.at(kCcBase).lsb, kCqCmd.at(kCcBase).width)});
    }
    // Counters: the value a read returns is sampled before this cycle's increments.
    if (dut->s_axil_arvalid && dut->s_axil_arready) {
      ar_ts = ts;
      ar_counters = counters;
      ar_nic_status = nic_status;
    }
    dut.tick();
    ++ts;
    for (int i = 0; i < kCounters; ++i) counters[size_t(i)] += (inc >> i) & 1;
    // NIC_STATUS reference: the first error latches; a read error wins a tie
    if (!(nic_status & abi::NIC_ST_FATAL)) {
      if (e.rd)
        nic_status = expect_rd_status(e.rd_id, e.rd_resp);
      else if (e.wr)
        nic_status = expect_wr_status(e.wr_resp);
    }
  }
  static uint32_t expect_rd_status(int id, int resp) {
    return uint32_t(id) << 4 | uint32_t(resp) << 2 | abi::NIC_ST_FATAL;
  }
  static uint32_t expect_wr_status(int resp) {
    return uint32_t(resp) << 2 | abi::NIC_ST_WRITE | abi::NIC_ST_FATAL;
  }

  void reset() {
    // Inputs start random (x-initial unique): idle the AXI channels before leaving reset.
    dut->s_axil_awvalid = dut->s_axil_wvalid = dut->s_axil_arvalid = 0;
    dut->s_axil_bready = dut->s_axil_rready = 0;
    dut->cnt_inc = 0;
    dut->herr_ready = dut->herr_done = dut->qerr_busy = 0;
    dut->dma_rd_err = dut->dma_wr_err = 0;
    dut.reset();
    nic_status = ar_nic_status = 0;
    dma_err = DmaErr{};
    herr_wait = 0;
    herr_was_stalled = qp_valid_prev = qerr_busy_prev = false;
    ts = 0;
    counters.fill(0);
    b_was_stalled = r_was_stalled = false;
  }

  // ---------------------------------------------------------------- AXI4-Lite master
  void axi_write(uint16_t addr, uint32_t data) {
    const int aw_delay = int(rng.below(3)), w_delay = int(rng.below(3));
    bool aw_done = false, w_done = false, b_done = false;
    for (int t = 0; !b_done; ++t) {
      ASSERT_LT(t, 3000) << "write to 0x" << std::hex << addr << " never completed";
      dut->s_axil_awvalid = !aw_done && t >= aw_delay;
      dut->s_axil_awaddr = addr;
      dut->s_axil_wvalid = !w_done && t >= w_delay;
      dut->s_axil_wdata = data;
      dut->s_axil_wstrb = 0xF;
      dut->s_axil_bready = rng.percent(60);
      dut.eval();
      const bool aw = dut->s_axil_awvalid && dut->s_axil_awready;
      const bool w = dut->s_axil_wvalid && dut->s_axil_wready;
      const bool b = dut->s_axil_bvalid && dut->s_axil_bready;
      EXPECT_FALSE(b && !(aw_done && w_done)) << "write response before address and data";
      cycle();
      aw_done |= aw;
      w_done |= w;
      b_done = b;
    }
    dut->s_axil_awvalid = dut->s_axil_wvalid = dut->s_axil_bready = 0;
  }
  uint32_t axi_read(uint16_t addr) {
    const int ar_delay = int(rng.below(3));
    bool ar_done = false;
    for (int t = 0; t < 100; ++t) {
      dut->s_axil_arvalid = !ar_done && t >= ar_delay;
      dut->s_axil_araddr = addr;
      dut->s_axil_rready = rng.percent(60);
      dut.eval();
      const bool ar = dut->s_axil_arvalid && dut->s_axil_arready;
      const bool r = dut->s_axil_rvalid && dut->s_axil_rready;
      const uint32_t data = dut->s_axil_rdata;
      EXPECT_FALSE(r && !ar_done) << "read data before the address";
      cycle();
      ar_done |= ar;
      if (r) {
        dut->s_axil_arvalid = dut->s_axil_rready = 0;
        if (addr != abi::REG_CMD_STATUS) return data;
        // CMD_STATUS: the accepted count is summed here and checked by execute() and the
        // tests; the callers see bits 15:0
        acc_seen += data >> 16;
        return data & 0xFFFF;
      }
    }
    ADD_FAILURE() << "read of 0x" << std::hex << addr << " never completed";
    return 0;
  }
  void idle(int n) {
    for (int i = 0; i < n; ++i) cycle();
  }

  // ---------------------------------------------------------------- commands
  void stage(const void* payload) {
    uint32_t w[16];
    std::memcpy(w, payload, 64);
    for (int i = 0; i < 16; ++i) axi_write(abi::reg_cmd_data(i), w[i]);
  }
  void clear_cmd_monitors() {
    qp_takes.fill(0);
    qp_valid_cycles = mr_valids = cq_takes = 0;
    saw_qp_cmd = false;
    herr_qpns.clear();
    herr_dones = qp_issues = 0;
    herr_seen_valid = false;
    cq_log.clear();
  }
  // The reference of host-driven ERR: INIT/RTR/RTS -> ERR (-1 if the QP's previous state is
  // not known to the bench).
  int expect_herr(uint32_t qpn, int next) const {
    const int prev = prev_state[qpn];
    if (next != abi::QPS_ERR) return 0;
    if (prev < 0) return -1;
    return prev == abi::QPS_INIT || prev == abi::QPS_RTR || prev == abi::QPS_RTS;
  }
  // Checks the herr handshakes of the last command against the reference.
  void check_herr(uint32_t qpn, int next, const char* what) {
    const int e = expect_herr(qpn, next);
    if (e < 0) return;
    ASSERT_EQ(herr_qpns.size(), size_t(e)) << what << ": herr for " << prev_state[qpn] << " -> " << next;
    if (e) {
      EXPECT_EQ(herr_qpns[0], qpn) << what;
      EXPECT_EQ(herr_dones, 1u) << what << ": command ended before herr_done";
    }
  }
  // Writes CMD and polls CMD_STATUS until not busy; returns the final status (bits 15:0),
  // after checking that the reads counted the command accepted exactly when it had no error.
  uint32_t execute(uint8_t op, uint32_t index) {
    clear_cmd_monitors();
    axi_write(abi::REG_CMD, uint32_t(op) << 24 | (index & 0xFFFFFF));
    const uint64_t acc0 = acc_seen;
    for (int i = 0; i < 200; ++i) {
      const uint32_t st = axi_read(abi::REG_CMD_STATUS);
      if (!(st & 1)) {
        EXPECT_EQ(acc_seen - acc0, (st & 2) ? 0u : 1u) << "CMD_STATUS accepted count, status " << st;
        return st;
      }
    }
    ADD_FAILURE() << "command " << int(op) << " stuck busy";
    return ~0u;
  }
  uint32_t qp_modify(uint32_t qpn, const abi::QpContext& ctx) {
    stage(&ctx);
    const uint32_t st = execute(abi::CMD_QP_MODIFY, qpn);
    if (st == 0) {
      check_herr(qpn, ctx.state & 7, "qp_modify");
      prev_state[qpn] = ctx.state & 7;
    }
    return st;
  }
  uint64_t qp_field(int f) const { return get_bits(first_qp_cmd, kQpCmd.at(size_t(f)).lsb, kQpCmd.at(size_t(f)).width); }

  abi::QpContext random_ctx(uint8_t state) {
    abi::QpContext c;
    uint8_t raw[64];
    for (auto& b : raw) b = rng.u8();
    std::memcpy(&c, raw, 64);
    c.state = state;
    // what the NIC accepts: a path MTU code 1..5, ring sizes up to 2^15, aligned rings
    c.mtu = uint8_t(1 + rng.below(5));
    c.log_sq_size = uint8_t(rng.below(16));
    c.log_rq_size = uint8_t(rng.below(16));
    c.sq_base &= ~uint64_t(63);
    c.rq_base &= ~uint64_t(63);
    return c;
  }

  // Checks the decoded QP command against the payload it came from.
  void check_qp_decode(uint32_t qpn, const abi::QpContext& c) {
    ASSERT_TRUE(saw_qp_cmd);
    EXPECT_EQ(qp_field(kCQpn), qpn);
    EXPECT_EQ(qp_field(kCState), c.state & 7u);
    EXPECT_EQ(qp_field(kCMtu), c.mtu & 7u);
    EXPECT_EQ(qp_field(kCAccess), c.access & 0xFu);
    EXPECT_EQ(qp_field(kCLogSq), c.log_sq_size & 0xFu);
    EXPECT_EQ(qp_field(kCLogRq), c.log_rq_size & 0xFu);
    EXPECT_EQ(qp_field(kCSport), uint64_t(c.udp_sport));
    EXPECT_EQ(qp_field(kCDqpn), c.dest_qpn & 0xFFFFFFu);
    EXPECT_EQ(qp_field(kCPd), uint64_t(c.pd));
    EXPECT_EQ(qp_field(kCSqPsn), c.sq_psn & 0xFFFFFFu);
    EXPECT_EQ(qp_field(kCRqPsn), c.rq_psn & 0xFFFFFFu);
    EXPECT_EQ(qp_field(kCSendCqn), uint64_t(c.send_cqn));
    EXPECT_EQ(qp_field(kCRecvCqn), uint64_t(c.recv_cqn));
    EXPECT_EQ(qp_field(kCDip), uint64_t(c.dest_ip));
    EXPECT_EQ(qp_field(kCDmac), uint64_t(c.dest_mac) & 0xFFFFFFFFFFFFull);
    EXPECT_EQ(qp_field(kCSqBase), uint64_t(c.sq_base));
    EXPECT_EQ(qp_field(kCRqBase), uint64_t(c.rq_base));
    // QP context byte 56: [2:0] retry_cnt, [5:3] rnr_retry; 57: [4:0] timeout; 58: [4:0] min_rnr_timer
    EXPECT_EQ(qp_field(kCRetryCnt), c.retry & 7u) << "retry byte 0x" << std::hex << int(c.retry);
    EXPECT_EQ(qp_field(kCRnrRetry), (c.retry >> 3) & 7u) << "retry byte 0x" << std::hex << int(c.retry);
    EXPECT_EQ(qp_field(kCTimeout), c.timeout & 0x1Fu) << "timeout byte 0x" << std::hex << int(c.timeout);
    EXPECT_EQ(qp_field(kCMinRnr), c.min_rnr_timer & 0x1Fu) << "min_rnr_timer byte 0x" << std::hex
                                                            << int(c.min_rnr_timer);
  }
  void expect_flags(int prev, int next, const char* what) {
    const bool idx = prev == abi::QPS_RESET && next == abi::QPS_INIT;
    const bool rq = prev == abi::QPS_INIT && next == abi::QPS_RTR;
    const bool sq = prev == abi::QPS_RTR && next == abi::QPS_RTS;
    EXPECT_EQ(qp_field(kCInitIdx), uint64_t(idx)) << what << ": init_idx for " << prev << " -> " << next;
    EXPECT_EQ(qp_field(kCInitRqPsn), uint64_t(rq)) << what << ": init_rq_psn for " << prev << " -> " << next;
    EXPECT_EQ(qp_field(kCInitSqPsn), uint64_t(sq)) << what << ": init_sq_psn for " << prev << " -> " << next;
  }

  Rng rng;
  Dut<Vsrnic_csr> dut;
  uint64_t ts = 0;
  std::array<uint32_t, kCounters> counters{}, ar_counters{};
  uint64_t ar_ts = 0;
  // DMA error inputs: dma_err is presented in the next cycle() only
  struct DmaErr {
    bool rd = false;
    int rd_id = 0, rd_resp = 0;
    bool wr = false;
    int wr_resp = 0;
  };
  DmaErr dma_err;
  unsigned dma_err_pct = 0;
  uint32_t nic_status = 0, ar_nic_status = 0;  // reference of NIC_STATUS, and at the last read's AR
  uint64_t acc_seen = 0;  // sum of CMD_STATUS bits 31:16 over every read
  bool ar_all_taken = false;
  bool count_events = false;
  std::array<unsigned, kCons> qp_ready_pct = [] {
    std::array<unsigned, kCons> a{};
    a.fill(100);
    return a;
  }();
  unsigned cq_ready_pct = 100;
  bool b_was_stalled = false, r_was_stalled = false;
  bool sq_room = true;   // the scheduler has room for an SQ doorbell
  uint32_t r_stalled_data = 0;
  std::vector<DbEvent> dbs;
  std::array<int, kCons> qp_takes{};
  int qp_valid_cycles = 0, mr_valids = 0, cq_takes = 0;
  bool saw_qp_cmd = false;
  std::remove_reference_t<decltype(Vsrnic_csr::qp_cmd)> first_qp_cmd{};
  std::remove_reference_t<decltype(Vsrnic_csr::mr_cmd)> mr_cmd{};
  std::remove_reference_t<decltype(Vsrnic_csr::cq_cmd)> cq_cmd{};
  struct CqTaken {
    uint64_t cqn, base;
  };
  std::vector<CqTaken> cq_log;  // every CQ command taken since clear_cmd_monitors()
  uint32_t mr_index = 0;
  std::vector<int> prev_state = std::vector<int>(kQps, -1);
  // host-driven ERR environment
  unsigned herr_ready_pct = 100;
  int herr_done_max = 20;     // herr_done 1..herr_done_max cycles after the handshake
  int herr_wait = 0;
  bool qerr_busy = false, qerr_busy_prev = false, qp_valid_prev = false;
  bool cqw_busy = false;   // the CQ writer drains after a QP reset (cqw_drain_busy)
  unsigned gen_bumps = 0;  // incarnation advances (gen_bump_valid cycles)
  bool herr_was_stalled = false, herr_seen_valid = false;
  uint32_t herr_stalled_qpn = 0;
  std::vector<uint32_t> herr_qpns;
  unsigned herr_dones = 0, ar_herr_dones = 0, qp_issues = 0;
};

TEST_F(CsrBench, ResetValuesAndReadOnly) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t caps = uint32_t(ilog2(kCqs)) << 16 | uint32_t(ilog2(kMrs)) << 8 | uint32_t(ilog2(kQps));
  EXPECT_EQ(axi_read(abi::REG_ID), abi::ID_VALUE);
  EXPECT_EQ(axi_read(abi::REG_VERSION), abi::VERSION_VALUE);
  EXPECT_EQ(axi_read(abi::REG_CAPS), caps);
  EXPECT_EQ(axi_read(abi::REG_MAC_LO), 0u);
  EXPECT_EQ(axi_read(abi::REG_MAC_HI), 0u);
  EXPECT_EQ(axi_read(abi::REG_IPV4), 0u);
  EXPECT_EQ(axi_read(abi::REG_SCHED_BURST), kSchedBurstDefault);
  EXPECT_EQ(axi_read(abi::REG_SCHED_WQES), 8u);
  EXPECT_EQ(axi_read(abi::REG_TX_WINDOW), 128u);
  EXPECT_EQ(uint32_t(dut->tx_window), 128u);
  EXPECT_EQ(axi_read(abi::REG_CMD_STATUS), 0u);
  EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), 0u);
  EXPECT_FALSE(dut->fatal);
  EXPECT_EQ(uint32_t(dut->sched_burst), kSchedBurstDefault);
  EXPECT_EQ(int(dut->sched_wqes), 8);
  for (int i = 0; i < kCounters; ++i) EXPECT_EQ(axi_read(abi::reg_counter(i)), 0u) << "counter " << i;
  // Writes to read-only registers change nothing; write-only registers read as 0.
  for (uint16_t a : {abi::REG_ID, abi::REG_VERSION, abi::REG_CAPS, abi::REG_NIC_STATUS, abi::REG_TS_HI,
                     abi::REG_CMD_STATUS, abi::reg_counter(0), abi::reg_counter(kCounters - 1)})
    axi_write(a, 0xFFFFFFFF);
  EXPECT_EQ(axi_read(abi::REG_ID), abi::ID_VALUE);
  EXPECT_EQ(axi_read(abi::REG_VERSION), abi::VERSION_VALUE);
  EXPECT_EQ(axi_read(abi::REG_CAPS), caps);
  EXPECT_EQ(axi_read(abi::REG_CMD_STATUS), 0u);
  EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), 0u);
  EXPECT_FALSE(dut->fatal);
  EXPECT_EQ(axi_read(abi::reg_counter(0)), 0u);
  for (uint16_t a : {abi::REG_DB_SQ, abi::REG_DB_RQ, abi::REG_DB_CQ, abi::REG_CMD})
    EXPECT_EQ(axi_read(a), 0u) << std::hex << a;
  // Unmapped addresses read as 0 and ignore writes.
  for (uint16_t a : {uint16_t(0x0010), uint16_t(0x004C), uint16_t(0x0300),
                     uint16_t(abi::reg_counter(kCounters)), uint16_t(0x1000), uint16_t(0xFFFC)}) {
    axi_write(a, 0x12345678);
    EXPECT_EQ(axi_read(a), 0u) << std::hex << a;
  }
  EXPECT_TRUE(dbs.empty());
  EXPECT_EQ(qp_valid_cycles + mr_valids + cq_takes, 0);
}

TEST_F(CsrBench, ReadWriteRegisters) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int rep = 0; rep < 20; ++rep) {
    const uint32_t lo = rng.u32(), hi = rng.u32(), ip = rng.u32();
    axi_write(abi::REG_MAC_LO, lo);
    axi_write(abi::REG_MAC_HI, hi);
    axi_write(abi::REG_IPV4, ip);
    EXPECT_EQ(axi_read(abi::REG_MAC_LO), lo);
    EXPECT_EQ(axi_read(abi::REG_MAC_HI), hi & 0xFFFF);
    EXPECT_EQ(axi_read(abi::REG_IPV4), ip);
    EXPECT_EQ(uint64_t(dut->local_mac), uint64_t(hi & 0xFFFF) << 32 | lo);
    EXPECT_EQ(uint32_t(dut->local_ip), ip);
    const uint32_t burst = rep < 3 ? uint32_t(rep * 31) : rng.u32();
    axi_write(abi::REG_SCHED_BURST, burst);
    const uint32_t exp_burst = burst < 64 ? 64 : burst;
    EXPECT_EQ(axi_read(abi::REG_SCHED_BURST), exp_burst);
    EXPECT_EQ(uint32_t(dut->sched_burst), exp_burst);
    const uint32_t wqes = rep < 10 ? uint32_t(rep) : rng.u32() % 20;
    axi_write(abi::REG_SCHED_WQES, wqes);
    const uint32_t exp_wqes = (wqes == 0 || wqes > 8) ? 8 : wqes;
    EXPECT_EQ(axi_read(abi::REG_SCHED_WQES), exp_wqes) << "wrote " << wqes;
    EXPECT_EQ(uint32_t(dut->sched_wqes), exp_wqes);
    const uint32_t win = rep < 3 ? uint32_t(rep) : rep < 6 ? (1u << 22) - 1 + uint32_t(rep - 3) : rng.u32() >> (rep % 32);
    axi_write(abi::REG_TX_WINDOW, win);
    const uint32_t exp_win = std::min<uint32_t>(win, 1u << 22);
    EXPECT_EQ(axi_read(abi::REG_TX_WINDOW), exp_win) << "wrote " << win;
    EXPECT_EQ(uint32_t(dut->tx_window), exp_win);
  }
  std::array<uint32_t, 16> data;
  for (int i = 0; i < 16; ++i) axi_write(abi::reg_cmd_data(i), data[size_t(i)] = rng.u32());
  for (int i = 15; i >= 0; --i) EXPECT_EQ(axi_read(abi::reg_cmd_data(i)), data[size_t(i)]) << "CMD_DATA" << i;
  EXPECT_TRUE(dbs.empty());
}

TEST_F(CsrBench, TimestampAndCounters) {
  SRNIC_BENCH_TRACE();
  reset();
  count_events = true;
  for (int rep = 0; rep < 5; ++rep) {
    idle(int(rng.below(50)));
    const uint32_t lo = axi_read(abi::REG_TS_LO);
    EXPECT_EQ(lo, uint32_t(ar_ts)) << "TS_LO";
    EXPECT_EQ(axi_read(abi::REG_TS_HI), uint32_t(ar_ts >> 32)) << "TS_HI";
    for (int i = 0; i < kCounters; ++i) {
      const uint32_t v = axi_read(abi::reg_counter(i));
      EXPECT_EQ(v, ar_counters[size_t(i)]) << "counter " << i;
    }
  }
  EXPECT_GT(counters[0], 50u);
  EXPECT_GT(counters[abi::CNT_PCIE_RD_ERR], 50u);
  EXPECT_GT(counters[abi::CNT_PCIE_WR_ERR], 50u);
  // Reset clears the counters and the timestamp.
  count_events = false;
  reset();
  for (int i = 0; i < kCounters; ++i) EXPECT_EQ(axi_read(abi::reg_counter(i)), 0u) << "counter " << i;
}

TEST_F(CsrBench, Doorbells) {
  SRNIC_BENCH_TRACE();
  reset();
  struct Db {
    uint16_t reg;
    int kind, limit;
  };
  const Db regs[] = {{abi::REG_DB_SQ, 0, kQps}, {abi::REG_DB_RQ, 1, kQps}, {abi::REG_DB_CQ, 2, kCqs}};
  for (int rep = 0; rep < 60; ++rep) {
    const Db& d = regs[rng.below(3)];
    uint16_t idx;
    switch (rng.below(4)) {
      case 0: idx = uint16_t(d.limit - 1); break;
      case 1: idx = uint16_t(d.limit < 65536 ? d.limit : 0); break;
      case 2: idx = uint16_t(rng.below(65536)); break;
      default: idx = uint16_t(rng.below(uint64_t(d.limit))); break;
    }
    const uint16_t val = uint16_t(rng.below(65536));
    dbs.clear();
    axi_write(d.reg, uint32_t(val) << 16 | idx);
    idle(2);
    ASSERT_EQ(dbs.size(), 1u) << "doorbell events for one write";
    const bool ok = idx < d.limit;
    EXPECT_EQ(dbs[0].kind, ok ? d.kind : 3) << "register 0x" << std::hex << d.reg << " index " << std::dec << idx;
    if (ok) {
      EXPECT_EQ(dbs[0].index, idx);
      EXPECT_EQ(dbs[0].value, val);
    }
  }
  // Back-to-back doorbells are all delivered, in order.
  dbs.clear();
  for (int i = 0; i < 10; ++i) axi_write(abi::REG_DB_SQ, uint32_t(i) << 16 | uint32_t(i % kQps));
  idle(2);
  ASSERT_EQ(dbs.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(dbs[size_t(i)].value, i);
}

// The scheduler's doorbell queue is full: an SQ doorbell write is held (no write response,
// no event) until there is room, then delivered once; other registers are not held.
TEST_F(CsrBench, SqDoorbellWaitsForRoom) {
  SRNIC_BENCH_TRACE();
  reset();
  sq_room = false;
  axi_write(abi::REG_DB_RQ, 5u << 16 | 3u);   // RQ doorbells do not wait
  idle(2);
  ASSERT_EQ(dbs.size(), 1u);
  dbs.clear();
  dut->s_axil_awvalid = dut->s_axil_wvalid = 1;
  dut->s_axil_awaddr = abi::REG_DB_SQ;
  dut->s_axil_wdata = 7u << 16 | 2u;
  dut->s_axil_wstrb = 0xF;
  dut->s_axil_bready = 1;
  bool b = false, aw_taken = false, w_taken = false;
  for (int t = 0; t < 200 && !HasFatalFailure(); ++t) {
    dut.eval();
    b = b || (dut->s_axil_bvalid && dut->s_axil_bready);
    const bool aw = dut->s_axil_awvalid && dut->s_axil_awready, w = dut->s_axil_wvalid && dut->s_axil_wready;
    cycle();
    if (aw) { dut->s_axil_awvalid = 0; aw_taken = true; }
    if (w) { dut->s_axil_wvalid = 0; w_taken = true; }
  }
  EXPECT_TRUE(aw_taken && w_taken) << "address and data are taken; only the response waits";
  EXPECT_FALSE(b) << "the doorbell write completed without room";
  EXPECT_TRUE(dbs.empty()) << "a doorbell event without room";
  sq_room = true;
  for (int t = 0; t < 10 && !b; ++t) {
    dut.eval();
    b = dut->s_axil_bvalid && dut->s_axil_bready;
    cycle();
  }
  dut->s_axil_bready = 0;
  EXPECT_TRUE(b) << "the held doorbell write never completed";
  idle(2);
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].kind, 0);
  EXPECT_EQ(dbs[0].index, 2u);
  EXPECT_EQ(dbs[0].value, 7u);
}

TEST_F(CsrBench, QpModifyDecodeAndBusy) {
  SRNIC_BENCH_TRACE();
  reset();
  // a few QPs, reset first so the bench knows their previous state (herr reference)
  const uint32_t qps[] = {uint32_t(kQps - 1), 0, uint32_t(1 % kQps), uint32_t(rng.below(kQps))};
  for (uint32_t q : qps) ASSERT_EQ(qp_modify(q, random_ctx(abi::QPS_RESET)), 0u);
  for (int rep = 0; rep < 40; ++rep) {
    for (auto& p : qp_ready_pct) p = unsigned(rng.range(5, 100));
    herr_ready_pct = unsigned(rng.range(5, 100));
    herr_done_max = int(rng.range(1, 60));
    const uint32_t qpn = qps[rng.below(4)];
    static const uint8_t kStates[] = {abi::QPS_RESET, abi::QPS_INIT, abi::QPS_RTR, abi::QPS_RTS, abi::QPS_ERR};
    const uint8_t next = rng.percent(40) ? abi::QPS_ERR : kStates[rng.below(5)];
    const abi::QpContext c = random_ctx(next);
    const int exp_herr = expect_herr(qpn, next);
    stage(&c);
    clear_cmd_monitors();
    axi_write(abi::REG_CMD, uint32_t(abi::CMD_QP_MODIFY) << 24 | qpn);
    // Busy exactly until every consumer has seen a handshake and, for INIT/RTR/RTS -> ERR,
    // herr_done came (as of the read's address cycle).
    uint32_t st = 1;
    for (int i = 0; i < 500 && (st & 1); ++i) {
      st = axi_read(abi::REG_CMD_STATUS);
      const bool done = ar_all_taken && (exp_herr == 0 || ar_herr_dones > 0);
      EXPECT_EQ(st & 1, done ? 0u : 1u) << "busy bit vs consumers that took the command (herr expected "
                                        << exp_herr << ", herr_done " << ar_herr_dones << ")";
    }
    EXPECT_EQ(st, 0u) << "error bit on a good command";
    idle(3);
    EXPECT_EQ(int(dut->qp_cmd_valid), 0) << "qp_cmd_valid after completion";
    EXPECT_FALSE(dut->herr_valid) << "herr_valid after completion";
    check_qp_decode(qpn, c);
    check_herr(qpn, next, "decode and busy");
    prev_state[qpn] = next;
    EXPECT_EQ(mr_valids + cq_takes, 0);
  }
  // The payload is read back unchanged.
  const abi::QpContext c = random_ctx(1);
  stage(&c);
  uint32_t w[16];
  std::memcpy(w, &c, 64);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(axi_read(abi::reg_cmd_data(i)), w[i]);
}

// Host-driven ERR on every (previous, next) pair: herr exactly for INIT/RTR/RTS -> ERR, with
// the QP number, held until herr_ready; busy until herr_done, however late it comes.
TEST_F(CsrBench, HostErrHandshake) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint8_t states[] = {abi::QPS_RESET, abi::QPS_INIT, abi::QPS_RTR, abi::QPS_RTS, abi::QPS_ERR};
  int herrs = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const uint32_t qpn = rep == 0 ? uint32_t(kQps - 1) : uint32_t(rng.below(kQps));
    ASSERT_EQ(qp_modify(qpn, random_ctx(abi::QPS_RESET)), 0u);
    for (uint8_t a : states)
      for (uint8_t b : states) {
        herr_ready_pct = unsigned(rng.range(3, 100));
        herr_done_max = int(rng.range(1, 150));
        ASSERT_EQ(qp_modify(qpn, random_ctx(a)), 0u);
        ASSERT_EQ(qp_modify(qpn, random_ctx(b)), 0u);
        herrs += int(herr_qpns.size());
      }
  }
  EXPECT_GE(herrs, 3 * 3);
  // herr_done held back: the command stays busy, a new command is refused meanwhile
  const uint32_t q = 2 % kQps;
  ASSERT_EQ(qp_modify(q, random_ctx(abi::QPS_RTS)), 0u);
  herr_ready_pct = 100;
  const abi::QpContext to_err = random_ctx(abi::QPS_ERR);
  stage(&to_err);
  clear_cmd_monitors();
  herr_done_max = 100000;
  axi_write(abi::REG_CMD, uint32_t(abi::CMD_QP_MODIFY) << 24 | q);
  idle(300);
  ASSERT_EQ(herr_qpns.size(), 1u);
  EXPECT_EQ(herr_qpns[0], q);
  EXPECT_EQ(axi_read(abi::REG_CMD_STATUS), 1u) << "not busy before herr_done";
  // the next command's payload, written during the herr wait, waits for herr_done
  herr_wait = 40;   // herr_done in 39 cycles
  const uint64_t t0 = ts;
  abi::CqContext cqc{};
  cqc.base = 0x4000;
  cqc.log_size = 4;
  cqc.flags = 1;
  stage(&cqc);
  EXPECT_EQ(herr_dones, 1u) << "a payload write completed before herr_done";
  EXPECT_GE(ts - t0, 39u);
  EXPECT_EQ(axi_read(abi::REG_CMD_STATUS), 0u) << "still busy after herr_done";
  EXPECT_EQ(cq_takes, 0);
  EXPECT_EQ(execute(abi::CMD_CQ_WRITE, 0), 0u);
  EXPECT_EQ(cq_takes, 1);
}

// A QP_MODIFY is not issued while a QP failure waits for the RX engine (qerr_busy).
TEST_F(CsrBench, QpModifyWaitsForQerr) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int rep = 0; rep < 10; ++rep) {
    const uint32_t qpn = uint32_t(rng.below(kQps));
    const abi::QpContext c = random_ctx(rep & 1 ? abi::QPS_RESET : abi::QPS_INIT);
    stage(&c);
    clear_cmd_monitors();
    qerr_busy = true;
    axi_write(abi::REG_CMD, uint32_t(abi::CMD_QP_MODIFY) << 24 | qpn);
    const int hold = int(rng.range(1, 80));
    idle(hold);
    EXPECT_EQ(qp_valid_cycles, 0) << "QP command issued while qerr_busy";
    EXPECT_EQ(axi_read(abi::REG_CMD_STATUS), 1u);
    // qerr_busy toggling: the command goes in a cycle after it was low
    for (int i = 0; i < 200 && qp_issues == 0; ++i) {
      qerr_busy = rng.percent(70);
      cycle();
    }
    qerr_busy = false;
    uint32_t st = 1;
    for (int i = 0; i < 50 && (st & 1); ++i) st = axi_read(abi::REG_CMD_STATUS);
    EXPECT_EQ(st, 0u);
    EXPECT_EQ(qp_issues, 1u);
    check_qp_decode(qpn, c);
    prev_state[qpn] = c.state;
  }
}

// A QP_MODIFY to RESET advances the QP's incarnation and then stays busy while the CQ writer
// drains (cqw_drain_busy, decision 115), however long; a QP_MODIFY to another state does not
// wait for it.
TEST_F(CsrBench, QpResetWaitsForTheCqWriterDrain) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int rep = 0; rep < 10; ++rep) {
    const uint32_t qpn = uint32_t(rng.below(kQps));
    const bool to_reset = rep % 2 == 0;
    const abi::QpContext c = random_ctx(to_reset ? abi::QPS_RESET : abi::QPS_INIT);
    stage(&c);
    clear_cmd_monitors();
    const unsigned bumps0 = gen_bumps;
    cqw_busy = true;
    axi_write(abi::REG_CMD, uint32_t(abi::CMD_QP_MODIFY) << 24 | qpn);
    const int hold = int(rng.range(20, 300));
    for (int i = 0; i < hold; ++i) cycle();
    EXPECT_EQ(qp_issues, 1u) << "rep " << rep;
    EXPECT_EQ(gen_bumps - bumps0, to_reset ? 1u : 0u) << "rep " << rep;
    EXPECT_EQ(axi_read(abi::REG_CMD_STATUS), to_reset ? 1u : 0u)
        << "rep " << rep << (to_reset ? ": a QP reset completed while the CQ writer drains"
                                      : ": a QP_MODIFY to INIT waited for the CQ writer");
    cqw_busy = false;
    uint32_t st = 1;
    for (int i = 0; i < 50 && (st & 1); ++i) st = axi_read(abi::REG_CMD_STATUS);
    EXPECT_EQ(st, 0u) << "rep " << rep << ": still busy after the drain";
    prev_state[qpn] = c.state;
  }
}

// The go-back-N attributes of the QP context (byte 56: [2:0] retry_cnt, [5:3] rnr_retry;
// byte 57: [4:0] timeout; byte 58: [4:0] min_rnr_timer) reach qp_cmd exactly: every value of
// every field, each field drawn from its own shuffled sequence (so a field read from a
// neighbour's bits cannot match by correlation), the unused high bits of the three bytes and
// every other byte of the context random.
TEST_F(CsrBench, QpModifyRetryAttributes) {
  SRNIC_BENCH_TRACE();
  reset();
  constexpr int kN = 64;
  auto shuffled = [&](int range) {
    std::vector<uint8_t> v(kN);
    for (int i = 0; i < kN; ++i) v[size_t(i)] = uint8_t(i % range);
    for (int i = kN - 1; i > 0; --i) std::swap(v[size_t(i)], v[rng.below(uint64_t(i) + 1)]);
    return v;
  };
  const auto retry = shuffled(8), rnr = shuffled(8), tmo = shuffled(32), min_rnr = shuffled(32);
  const uint8_t states[] = {abi::QPS_RESET, abi::QPS_INIT, abi::QPS_RTR, abi::QPS_RTS};
  uint64_t seen[4] = {0, 0, 0, 0};
  for (int i = 0; i < kN && !HasFatalFailure(); ++i) {
    const uint32_t qpn = i == 0 ? uint32_t(kQps - 1) : uint32_t(rng.below(kQps));
    abi::QpContext c = random_ctx(states[rng.below(4)]);
    c.retry = uint8_t(retry[size_t(i)] | rnr[size_t(i)] << 3 | (rng.u8() & 0xC0));
    c.timeout = uint8_t(tmo[size_t(i)] | (rng.u8() & 0xE0));
    c.min_rnr_timer = uint8_t(min_rnr[size_t(i)] | (rng.u8() & 0xE0));
    ASSERT_EQ(qp_modify(qpn, c), 0u);
    SCOPED_TRACE("command " + std::to_string(i));
    check_qp_decode(qpn, c);
    seen[0] |= 1ull << qp_field(kCRetryCnt);
    seen[1] |= 1ull << qp_field(kCRnrRetry);
    seen[2] |= 1ull << qp_field(kCTimeout);
    seen[3] |= 1ull << qp_field(kCMinRnr);
  }
  EXPECT_EQ(seen[0], 0xFFull) << "retry_cnt values";
  EXPECT_EQ(seen[1], 0xFFull) << "rnr_retry values";
  EXPECT_EQ(seen[2], 0xFFFFFFFFull) << "timeout values";
  EXPECT_EQ(seen[3], 0xFFFFFFFFull) << "min_rnr values";
}

TEST_F(CsrBench, MrAndCqWrite) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int rep = 0; rep < 10; ++rep) {
    abi::MrEntry m{};
    m.iova = rng.next();
    m.length = rng.next();
    m.pa = rng.next();
    m.key = rng.u32();
    m.pd = rng.u32();
    m.access = rng.u8();
    m.valid = uint8_t(rep % 3 == 0 ? 0 : rep % 3 == 1 ? 1 : 0x80);  // nonzero = valid
    const uint32_t idx = rep == 0 ? uint32_t(kMrs - 1) : uint32_t(rng.below(kMrs));
    stage(&m);
    ASSERT_EQ(execute(abi::CMD_MR_WRITE, idx), 0u);
    ASSERT_EQ(mr_valids, 1) << "mr_cmd_valid cycles for one MR_WRITE";
    EXPECT_EQ(mr_index, idx);
    auto mf = [&](int f) { return get_bits(mr_cmd, kMrEntry.at(size_t(f)).lsb, kMrEntry.at(size_t(f)).width); };
    EXPECT_EQ(mf(kMrIova), uint64_t(m.iova));
    EXPECT_EQ(mf(kMrLength), uint64_t(m.length));
    EXPECT_EQ(mf(kMrPa), uint64_t(m.pa));
    EXPECT_EQ(mf(kMrKey), uint64_t(m.key));
    EXPECT_EQ(mf(kMrPd), uint64_t(m.pd));
    EXPECT_EQ(mf(kMrAccess), m.access & 0xFu);
    EXPECT_EQ(mf(kMrValid), uint64_t(m.valid != 0));
    EXPECT_EQ(qp_valid_cycles + cq_takes, 0);
  }
  for (int rep = 0; rep < 10; ++rep) {
    cq_ready_pct = unsigned(rng.range(5, 100));
    abi::CqContext q{};
    q.flags = rng.u8();
    // a valid CQ must be 32-byte aligned with at most 2^15 entries; an invalid one may hold anything
    q.base = (q.flags & 1) ? rng.next() & ~uint64_t(31) : rng.next();
    q.log_size = (q.flags & 1) ? uint8_t(rng.below(16)) : rng.u8();
    const uint32_t cqn = rep == 0 ? uint32_t(kCqs - 1) : uint32_t(rng.below(kCqs));
    stage(&q);
    ASSERT_EQ(execute(abi::CMD_CQ_WRITE, cqn), 0u);
    ASSERT_EQ(cq_takes, 1) << "cq_cmd handshakes for one CQ_WRITE";
    auto cf = [&](int f) { return get_bits(cq_cmd, kCqCmd.at(size_t(f)).lsb, kCqCmd.at(size_t(f)).width); };
    EXPECT_EQ(cf(kCcCqn), cqn);
    EXPECT_EQ(cf(kCcBase), uint64_t(q.base));
    EXPECT_EQ(cf(kCcLogSize), q.log_size & 0xFu);
    EXPECT_EQ(cf(kCcValid), q.flags & 1u);
    EXPECT_EQ(qp_valid_cycles + mr_valids, 0);
  }
}

TEST_F(CsrBench, BadCommandsSetError) {
  SRNIC_BENCH_TRACE();
  reset();
  const struct {
    uint8_t op;
    uint32_t idx;
  } bad[] = {{0, 0}, {4, 0}, {0xFF, 1}, {abi::CMD_QP_MODIFY, uint32_t(kQps)}, {abi::CMD_QP_MODIFY, 0xFFFFFF},
             {abi::CMD_MR_WRITE, uint32_t(kMrs)}, {abi::CMD_CQ_WRITE, uint32_t(kCqs)}};
  for (const auto& b : bad) {
    EXPECT_EQ(execute(b.op, b.idx), 0x102u) << "opcode " << int(b.op) << " index " << b.idx;
    idle(3);
    EXPECT_EQ(qp_valid_cycles + mr_valids + cq_takes, 0) << "bad command executed";
    // A good command clears the error bit.
    abi::CqContext q{};
    stage(&q);
    EXPECT_EQ(execute(abi::CMD_CQ_WRITE, 0), 0u);
  }
  // Staging writes while a command executes wait for it: they must not change the payload
  // being issued.
  for (auto& p : qp_ready_pct) p = 2;
  const abi::QpContext c = random_ctx(abi::QPS_RESET);
  stage(&c);
  clear_cmd_monitors();
  axi_write(abi::REG_CMD, uint32_t(abi::CMD_QP_MODIFY) << 24 | 1);
  EXPECT_EQ(axi_read(abi::REG_CMD_STATUS), 1u);
  abi::MrEntry other{};
  other.iova = 0x1000;
  other.length = 0x2000;
  other.valid = 1;
  stage(&other);
  for (int i = 0; i < kCons; ++i) EXPECT_GT(qp_takes[size_t(i)], 0) << "payload written before consumer " << i << " took the command";
  check_qp_decode(1, c);
  for (auto& p : qp_ready_pct) p = 100;
  EXPECT_EQ(execute(abi::CMD_MR_WRITE, 0), 0u);
  EXPECT_EQ(mr_valids, 1);
  EXPECT_EQ(get_bits(mr_cmd, kMrEntry.at(kMrIova).lsb, kMrEntry.at(kMrIova).width), 0x1000u);
}

// Commands written back to back (no CMD_STATUS read between them) wait for each other and run
// in the order written, each with its own payload; one CMD_STATUS read counts them. After a
// refusal the following commands are skipped until CMD_STATUS is read.
TEST_F(CsrBench, BackToBackCommandsRunInOrder) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int rep = 0; rep < 20; ++rep) {
    for (auto& p : qp_ready_pct) p = unsigned(rng.range(5, 100));
    cq_ready_pct = unsigned(rng.range(5, 100));
    clear_cmd_monitors();
    std::vector<abi::CqContext> sent;
    const int n = int(rng.range(2, 12));
    const int bad = rng.percent(40) ? int(rng.below(uint64_t(n))) : -1;   // refused by index
    for (int i = 0; i < n; ++i) {
      abi::CqContext q{};
      q.base = uint64_t(rng.u32() & ~31u) + (uint64_t(i) << 40);
      q.log_size = uint8_t(rng.below(16));
      q.flags = 1;
      stage(&q);
      axi_write(abi::REG_CMD, uint32_t(abi::CMD_CQ_WRITE) << 24 | uint32_t(i == bad ? kCqs : i % kCqs));
      sent.push_back(q);
    }
    uint32_t st = 1;
    const uint64_t acc0 = acc_seen;
    for (int i = 0; i < 500 && (st & 1); ++i) st = axi_read(abi::REG_CMD_STATUS);
    const int ran = bad < 0 ? n : bad;
    EXPECT_EQ(st, bad < 0 ? 0u : 0x102u) << "n " << n << " bad " << bad;
    EXPECT_EQ(acc_seen - acc0, uint64_t(ran)) << "accepted count, n " << n << " bad " << bad;
    ASSERT_EQ(cq_log.size(), size_t(ran)) << "commands run, n " << n << " bad " << bad;
    for (int i = 0; i < ran; ++i) {
      EXPECT_EQ(cq_log[size_t(i)].cqn, uint64_t(i % kCqs)) << "order";
      EXPECT_EQ(cq_log[size_t(i)].base, sent[size_t(i)].base) << "payload of command " << i;
    }
    // the read cleared the refusal: the next command runs
    abi::CqContext q{};
    stage(&q);
    EXPECT_EQ(execute(abi::CMD_CQ_WRITE, 0), 0u);
    EXPECT_EQ(cq_takes, 1);
  }
}

// Payloads the NIC refuses: the command fails with reason 3 and nothing is issued; the
// same command with the field repaired is accepted.
TEST_F(CsrBench, ImpossiblePayloadsRefused) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int kind = 0; kind < 9; ++kind) {
    abi::QpContext c = random_ctx(abi::QPS_RTR);
    abi::CqContext q{};
    q.base = 0x10000;
    q.log_size = 6;
    q.flags = 1;
    bool cq = false;
    switch (kind) {
      case 0: c.sq_base |= 8; break;                 // SQ ring not 64-byte aligned
      case 1: c.rq_base |= 32; break;                // RQ ring not 64-byte aligned
      case 2: c.log_sq_size = 16; break;              // beyond the 16-bit indices
      case 3: c.log_rq_size = 200; break;
      case 4: c.mtu = 0; break;                       // no path MTU in RTR
      case 5: c.mtu = 6; break;
      case 6: c.state = 4; break;                     // unknown state
      case 7: cq = true; q.base |= 16; break;        // CQ ring not 32-byte aligned
      default: cq = true; q.log_size = 16; break;
    }
    if (cq) stage(&q);
    else stage(&c);
    EXPECT_EQ(execute(cq ? abi::CMD_CQ_WRITE : abi::CMD_QP_MODIFY, 3), 0x302u) << "case " << kind;
    idle(3);
    EXPECT_EQ(qp_valid_cycles + mr_valids + cq_takes, 0) << "case " << kind << ": refused command executed";
  }
  // an MTU code of 0 is fine before the QP has a path
  abi::QpContext c = random_ctx(abi::QPS_INIT);
  c.mtu = 0;
  stage(&c);
  EXPECT_EQ(execute(abi::CMD_QP_MODIFY, 3), 0u);
}

// Transition flags on one QP at a time: every (previous, next) pair of states.
TEST_F(CsrBench, QpModifyTransitionsSameQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint8_t states[] = {abi::QPS_RESET, abi::QPS_INIT, abi::QPS_RTR, abi::QPS_RTS, abi::QPS_ERR};
  const uint32_t qpn = uint32_t(rng.below(kQps));
  ASSERT_EQ(qp_modify(qpn, random_ctx(abi::QPS_RESET)), 0u);
  for (uint8_t a : states)
    for (uint8_t b : states) {
      ASSERT_EQ(qp_modify(qpn, random_ctx(a)), 0u);
      ASSERT_EQ(qp_modify(qpn, random_ctx(b)), 0u);
      expect_flags(a, b, "same QP");
    }
}

// The previous state must be the one of the QP being modified, not of the last command's QP.
TEST_F(CsrBench, QpModifyTransitionsInterleavedQps) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t a = 1, b = 2;
  ASSERT_EQ(qp_modify(a, random_ctx(abi::QPS_RESET)), 0u);
  ASSERT_EQ(qp_modify(a, random_ctx(abi::QPS_INIT)), 0u);
  ASSERT_EQ(qp_modify(a, random_ctx(abi::QPS_RTR)), 0u);
  ASSERT_EQ(qp_modify(b, random_ctx(abi::QPS_RESET)), 0u);
  ASSERT_EQ(qp_modify(a, random_ctx(abi::QPS_RTS)), 0u);  // QP a: RTR -> RTS
  expect_flags(abi::QPS_RTR, abi::QPS_RTS, "QP 1 after a command on QP 2");
  ASSERT_EQ(qp_modify(b, random_ctx(abi::QPS_INIT)), 0u);  // QP b: RESET -> INIT
  expect_flags(abi::QPS_RESET, abi::QPS_INIT, "QP 2 after a command on QP 1");
  // Random interleaving over a few QPs, all first reset (as the driver does on create).
  for (uint32_t q = 0; q < 4; ++q) ASSERT_EQ(qp_modify(q, random_ctx(abi::QPS_RESET)), 0u);
  const uint8_t states[] = {abi::QPS_RESET, abi::QPS_INIT, abi::QPS_RTR, abi::QPS_RTS, abi::QPS_ERR};
  for (int rep = 0; rep < 40; ++rep) {
    const uint32_t q = uint32_t(rng.below(4));
    const int before = prev_state[q];
    const uint8_t next = states[rng.below(5)];
    ASSERT_EQ(qp_modify(q, random_ctx(next)), 0u);
    expect_flags(before, next, "random interleaving");
  }
}

// Each consumer must take a QP command exactly once, whatever the timing of the readies.
TEST_F(CsrBench, QpCommandTakenOncePerConsumer) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int rep = 0; rep < 10; ++rep) {
    for (auto& p : qp_ready_pct) p = unsigned(rng.range(10, 100));
    ASSERT_EQ(qp_modify(uint32_t(rng.below(kQps)), random_ctx(abi::QPS_RTS)), 0u);
    for (int i = 0; i < kCons; ++i)
      EXPECT_EQ(qp_takes[size_t(i)], 1) << "consumer " << i << " handshakes for one command (repetition " << rep << ")";
  }
}

// NIC_STATUS: after reset 0 (also with random error IDs and codes while no error is valid);
// the first error, a read, a write or both in one cycle, latches {ID, code, write, FATAL} and
// raises `fatal` the next cycle (checked in cycle()); later errors of both channels, writes
// to the register and commands change nothing; reset clears it and the next error latches.
TEST_F(CsrBench, NicStatusLatchesFirstDmaError) {
  SRNIC_BENCH_TRACE();
  int kinds[3] = {};
  for (int rep = 0; rep < 30 && !HasFatalFailure(); ++rep) {
    reset();
    EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), 0u) << "rep " << rep;
    idle(int(rng.below(20)));
    EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), 0u) << "rep " << rep << ": latched without an error";
    const int kind = int(rng.below(3));   // 0 read, 1 write, 2 both in one cycle
    ++kinds[kind];
    const int id = int(rng.below(16)), rresp = int(rng.range(1, 3)), bresp = int(rng.range(1, 3));
    dma_err.rd = kind != 1;
    dma_err.rd_id = id;
    dma_err.rd_resp = rresp;
    dma_err.wr = kind != 0;
    dma_err.wr_resp = bresp;
    const uint32_t want = kind == 1 ? expect_wr_status(bresp) : expect_rd_status(id, rresp);
    EXPECT_FALSE(dut->fatal);
    cycle();                                   // the error's cycle
    dut.eval();
    EXPECT_TRUE(dut->fatal) << "rep " << rep << ": fatal not high the cycle after the error";
    EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), want) << "rep " << rep << " kind " << kind;
    // later errors, of both channels, with other IDs and codes
    dma_err_pct = unsigned(rng.range(5, 60));
    for (int i = 0; i < 5; ++i) {
      idle(int(rng.below(10)));
      EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), want) << "rep " << rep << ": overwritten by a later error";
    }
    axi_write(abi::REG_NIC_STATUS, 0);
    EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), want) << "rep " << rep << ": cleared by a write";
    abi::CqContext cqc{};
    cqc.base = 0x4000;
    cqc.log_size = 4;
    stage(&cqc);
    EXPECT_EQ(execute(abi::CMD_CQ_WRITE, 0), 0u);
    EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), want) << "rep " << rep << ": changed by a command";
    EXPECT_TRUE(dut->fatal);
    dma_err_pct = 0;
  }
  for (int k = 0; k < 3; ++k) EXPECT_GT(kinds[k], 0) << "kind " << k;
  reset();
  EXPECT_FALSE(dut->fatal);
  EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), 0u) << "not cleared by reset";
}

// Errors arrive in the background while the host polls NIC_STATUS: every read returns the
// value latched before its address was taken (0 until the first error), then the first error.
TEST_F(CsrBench, NicStatusPolledWhileErrorsArrive) {
  SRNIC_BENCH_TRACE();
  for (int rep = 0; rep < 20 && !HasFatalFailure(); ++rep) {
    reset();
    dma_err_pct = unsigned(rng.range(1, 10));
    int reads_before = 0;
    for (int i = 0; i < 200 && !HasFatalFailure(); ++i) {
      const uint32_t v = axi_read(abi::REG_NIC_STATUS);
      EXPECT_EQ(v, ar_nic_status) << "rep " << rep << " read " << i;
      if (v & abi::NIC_ST_FATAL) break;
      ++reads_before;
    }
    EXPECT_TRUE(nic_status & abi::NIC_ST_FATAL) << "rep " << rep << ": no error in 200 reads";
    for (int i = 0; i < 3; ++i) EXPECT_EQ(axi_read(abi::REG_NIC_STATUS), nic_status) << "rep " << rep;
    dma_err_pct = 0;
  }
}

}  // namespace
}  // namespace srnic::verif::blocks
