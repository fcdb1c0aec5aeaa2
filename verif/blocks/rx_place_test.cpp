// srnic_rx_place bench: the bench plays the classification stage (jobs, pushed only while
// job_ready, with random idle cycles), the RX buffer (the frames of the jobs, back to back in
// job order, with random gaps on d_valid and garbage while d_valid is low), the write path
// (random aw_ready/w_ready) and the consumers of tasks, CQEs and events (random readiness),
// and asks rdq_busy every cycle.
//
// A reference of the stage predicts, per job, every AW burst (64-byte aligned, split at
// 4 KiB) and W beat (strobes, last, the payload bytes under the strobes: frame bytes
// [pay_off, pay_off + pay_len) at dst); AW/W of job k are offered only while job k is the
// first job not yet placed, a W beat only after its burst's AW, and a frame beat goes only
// to that job, so each job takes exactly its nbeats beats, no more and no fewer. The
// job is placed in the cycle of the later of its last W and its last frame beat (a job
// without payload: its last beat, or without beats one cycle after the previous job was
// placed and not before its push: a job pushed while no job waits to be placed starts in its
// push cycle). From the cycle after that, once every earlier job has left,
// its task, CQE and event (those it has) are offered exactly, field by field as pushed, and
// it leaves the ring in the cycle the last of them is taken (a job without outputs: in the
// first cycle it could offer them). From that the reference knows the ring's occupancy:
// job_ready is low exactly when JOBS jobs are in it, idle exactly when none. rdq_busy must
// equal "a pushed job with rd and place of that QP is not placed yet" every cycle (so it
// clears the cycle after the READ response's last W beat, or after its frame's last beat
// when the frame goes on after the payload); rdq_qpn
// is mostly a QP of a job in the ring (placing READ responses, READ responses already
// placed but held by the emitter, and READ jobs that place nothing).
//
// Jobs: payloads of 1..4096 bytes at random host addresses (64-byte aligned, just before a
// 4 KiB line so the payload crosses it, at the start of a page, anywhere), the payload at
// frame offset 54..74 (the parser's range) or anywhere in 0..127, frames of
// pay_off + pay_len + 4 (ICRC) bytes; some frames carry 1..3 beats more than that (the stage
// drops whatever the frame has after the payload); jobs that only drop a frame, and jobs
// without a frame (nbeats 0); has_task/has_cqe/has_cev and the outputs' fields random.
// Now and then a payload job is announced (pre_valid, pre_job) in the cycle before its push, as
// the classification stage does; an idle mover starts on it then, so its writes may come in
// its push cycle (the reference admits it to the ring when it is announced).
// Directed tests pin a job without payload and beats, an emitter blocked for a long time
// (placement goes on until the ring is full), back-pressure on W alone, 4 KiB crossings
// against bursts written out by hand, when rdq_busy clears, and the assertion on a push into
// a full ring.
#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "Vsrnic_rx_place.h"
#include "bench.hpp"
#include "payload_writes.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

// rx_job_t (kRxJob) with resp_task_t (kRespTask), cqe_req_t (kCqeReq) and comp_ev_t
// (kCompEv) inside: pkg_layouts.hpp

constexpr size_t kJobs = BENCH_JOBS;
constexpr uint32_t kQps = BENCH_NUM_QPS;
constexpr unsigned kMtu = 4096;
constexpr unsigned kIcrc = 4;
constexpr int64_t kNever = -1;
constexpr int kJobBits = kRxJob.at(kRjPlace).lsb + kRxJob.at(kRjPlace).width;
constexpr int kJobWords = (kJobBits + 31) / 32;
constexpr uint32_t kJobTopMask = kJobBits % 32 ? (1u << (kJobBits % 32)) - 1 : ~0u;

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

unsigned frame_beats(unsigned pay_off, unsigned pay_len) { return (pay_off + pay_len + kIcrc + 63) / 64; }

// One job: what is pushed, and how far it got (cycles, kNever while not yet).
struct Job {
  bool place = false, rd = false, has_task = false, has_cqe = false, has_cev = false;
  uint64_t dst = 0;
  unsigned pay_off = 0, pay_len = 0, nbeats = 0;
  uint32_t qpn = 0;
  std::array<uint64_t, 8> task{};
  std::array<uint64_t, 9> cqe{};
  std::array<uint64_t, 11> cev{};
  std::vector<uint8_t> frame;   // nbeats * 64 bytes
  // set by the bench
  uint64_t id = 0;
  size_t n_aw = 0, n_w = 0, w_taken = 0;
  unsigned d_taken = 0;
  int64_t pushed = kNever, moved = kNever, freed = kNever, last_w = kNever, last_d = kNever;
  int64_t task_at = kNever, cqe_at = kNever, cev_at = kNever;
  bool outputs_taken() const {
    return (!has_task || task_at != kNever) && (!has_cqe || cqe_at != kNever) && (!has_cev || cev_at != kNever);
  }
};

std::string describe(const Job& j) {
  return "job " + std::to_string(j.id) + " (QP " + std::to_string(j.qpn) + (j.rd ? " rd" : "") +
         (j.place ? ", place " + std::to_string(j.pay_len) + " bytes at " + hex(j.dst) + " from frame offset " +
                        std::to_string(j.pay_off)
                  : ", no payload") +
         ", " + std::to_string(j.nbeats) + " beats)";
}

struct AwX {
  uint64_t job;
  uint64_t addr;
  unsigned len;   // AXI len (beats - 1)
};
struct WX {
  uint64_t job;
  uint64_t burst;   // global AW number
  uint64_t addr;    // the beat's (aligned) address
  unsigned beat;    // beat number within the job
  uint64_t strb;
  bool last;
  std::array<uint8_t, 64> data;
};
struct Beat {
  uint64_t job;
  std::array<uint32_t, 16> w;
};

// Percent chances per cycle.
struct Knobs {
  unsigned push = 100, d = 100, aw = 100, w = 100, task = 100, cqe = 100, cev = 100;
  unsigned pre = 0;   // a payload job is announced (pre_*) a cycle before its push
};

struct Stats {
  uint64_t jobs = 0, placed = 0, dropped = 0, no_frame = 0, crossing = 0, big = 0, extra_beats = 0;
  uint64_t bytes = 0, beats = 0, aws = 0, tasks = 0, cqes = 0, cevs = 0;
  uint64_t busy_true = 0, busy_false_rd = 0, full_cycles = 0, w_while_emitter_blocked = 0;
  uint64_t announced = 0, announced_idle = 0;   // jobs announced; of them, with no job waiting to be placed
};

class RxPlaceBench : public ::testing::Test {
 public:
  RxPlaceBench() : rng(test_seed()), dut(rng.next()) {}

  void reset() {
    dut->job_valid = 0;
    dut->pre_valid = 0;
    announced = false;
    dut->d_valid = 0;
    dut->aw_ready = dut->w_ready = dut->task_ready = dut->cqe_ready = dut->cev_ready = 0;
    dut->rdq_qpn = 0;
    dut.reset();
  }

  // ------------------------------------------------------------ jobs
  void random_outputs(Job& j) {
    for (size_t f = 0; f < j.task.size(); ++f) j.task[f] = rand_bits(kRespTask.at(f).width);
    for (size_t f = 0; f < j.cqe.size(); ++f) j.cqe[f] = rand_bits(kCqeReq.at(f).width);
    for (size_t f = 0; f < j.cev.size(); ++f) j.cev[f] = rand_bits(kCompEv.at(f).width);
  }
  uint64_t rand_bits(int w) { return w >= 64 ? rng.next() : rng.next() & ((1ull << w) - 1); }

  // A host address for len payload bytes: aligned, crossing the next 4 KiB line, at a page
  // start, or anywhere (the payload never wraps the 64-bit address space).
  uint64_t random_dst(unsigned len) {
    uint64_t a = rng.percent(10) ? rng.next() : rng.next() & ((1ull << 48) - 1);
    if (a > ~0ull - 3 * 4096) a -= 3 * 4096;
    switch (rng.below(4)) {
      case 0: return a & ~63ull;
      case 1: return len >= 2 ? (a & ~0xFFFull) + 4096 - rng.range(1, std::min(len - 1, 4095u)) : a;
      case 2: return (a & ~0xFFFull) | rng.below(64);
      default: return a;
    }
  }

  unsigned random_len() {
    switch (rng.below(6)) {
      case 0: return unsigned(rng.range(1, 64));
      case 1: return unsigned(rng.range(1, 256));
      case 2: return unsigned(rng.range(1, kMtu));
      case 3: return kMtu - unsigned(rng.below(130));   // about one full MTU
      case 4: return 1u << rng.range(8, 12);           // exactly one MTU (256..4096)
      default: return unsigned(rng.range(1, 1024));
    }
  }

  Job random_job() {
    Job j;
    const unsigned kind = unsigned(rng.below(100));
    j.pay_off = rng.percent(90) ? unsigned(rng.range(54, 74)) : unsigned(rng.below(128));
    if (kind < 70) {   // a payload to place
      j.place = true;
      j.pay_len = random_len();
      j.dst = random_dst(j.pay_len);
      j.nbeats = frame_beats(j.pay_off, j.pay_len);
      if (rng.percent(8)) j.nbeats += unsigned(rng.range(1, 3));
    } else if (kind < 85) {   // a frame dropped or not placed: its beats only
      j.pay_len = unsigned(rng.below(kMtu + 1));
      j.dst = rng.next();
      j.nbeats = frame_beats(j.pay_off, j.pay_len);
    } else {   // no frame (events)
      j.dst = rng.next();
      j.nbeats = 0;
    }
    j.rd = rng.percent(rd_pct);
    j.qpn = uint32_t(rng.below(hot_qps ? hot_qps : kQps));
    j.has_task = rng.percent(40);
    j.has_cqe = rng.percent(40);
    j.has_cev = rng.percent(40);
    random_outputs(j);
    return j;
  }

  // A job for the directed tests: payload of len bytes at dst (0: none), frame of
  // pay_off + len + 4 bytes unless nbeats is given.
  Job make_job(bool place, uint64_t dst, unsigned pay_off, unsigned len, int nbeats = -1) {
    Job j;
    j.place = place;
    j.dst = dst;
    j.pay_off = pay_off;
    j.pay_len = len;
    j.nbeats = nbeats >= 0 ? unsigned(nbeats) : frame_beats(pay_off, len);
    j.qpn = uint32_t(rng.below(kQps));
    random_outputs(j);
    return j;
  }

  // Queues a job to push (its frame beats go to the RX buffer now, behind the earlier ones).
  void add(Job j) {
    j.id = next_id++;
    j.frame.resize(size_t(j.nbeats) * 64);
    for (auto& b : j.frame) b = rng.u8();
    for (unsigned b = 0; b < j.nbeats; ++b) {
      Beat bt{j.id, {}};
      std::memcpy(bt.w.data(), &j.frame[size_t(b) * 64], 64);
      beats.push_back(bt);
    }
    script.push_back(std::move(j));
  }

  // The packed rx_job_t of a job.
  static VlWide<kJobWords> encode(const Job& j) {
    VlWide<kJobWords> v{};
    auto put = [&](size_t f, uint64_t x) { set_bits(v, kRxJob.at(f).lsb, kRxJob.at(f).width, x); };
    put(kRjPlace, j.place);
    put(kRjDst, j.dst);
    put(kRjPayOff, j.pay_off);
    put(kRjPayLen, j.pay_len);
    put(kRjNbeats, j.nbeats);
    put(kRjRd, j.rd);
    put(kRjQpn, j.qpn);
    put(kRjHasTask, j.has_task);
    put(kRjHasCqe, j.has_cqe);
    put(kRjHasCev, j.has_cev);
    for (size_t f = 0; f < j.task.size(); ++f)
      set_bits(v, kRxJob.at(kRjTask).lsb + kRespTask.at(f).lsb, kRespTask.at(f).width, j.task[f]);
    for (size_t f = 0; f < j.cqe.size(); ++f)
      set_bits(v, kRxJob.at(kRjCqe).lsb + kCqeReq.at(f).lsb, kCqeReq.at(f).width, j.cqe[f]);
    for (size_t f = 0; f < j.cev.size(); ++f)
      set_bits(v, kRxJob.at(kRjCev).lsb + kCompEv.at(f).lsb, kCompEv.at(f).width, j.cev[f]);
    return v;
  }

  // ------------------------------------------------------------ the reference
  // The AW bursts and W beats of a job's payload.
  void expect_writes(Job& j) {
    if (!j.place) return;
    uint64_t burst = 0;
    payload_writes(
        j.dst, j.frame.data() + j.pay_off, j.pay_len,
        [&](uint64_t addr, uint64_t n) {
          burst = aw_made++;
          aw_x.push_back({j.id, addr, unsigned(n - 1)});
          ++j.n_aw;
        },
        [&](uint64_t addr, uint64_t beat, uint64_t strb, bool last, const std::array<uint8_t, 64>& data) {
          w_x.push_back(WX{j.id, burst, addr, unsigned(beat), strb, last, data});
          ++j.n_w;
        });
  }

  Job* job_by_id(uint64_t id) {
    if (ring.empty() || id < ring.front().id || id > ring.back().id) return nullptr;
    return &ring[size_t(id - ring.front().id)];
  }

  // a pushed (or announced) job enters the model's ring
  void admit(Job& j) {
    expect_writes(j);
    ++stats.jobs;
    stats.placed += j.place;
    stats.dropped += !j.place && j.nbeats;
    stats.no_frame += !j.place && !j.nbeats;
    stats.crossing += j.n_aw > 1;
    stats.big += j.place && j.pay_len >= kMtu - 130;
    stats.extra_beats += j.place && j.nbeats > frame_beats(j.pay_off, j.pay_len);
    ring.push_back(std::move(j));
  }

  bool model_busy(uint32_t q, int64_t c) const {
    for (const Job& j : ring)
      if (j.place && j.rd && j.qpn == q && j.moved == kNever && j.pushed < c) return true;
    return false;
  }
  // ring entries in use in cycle c (an announced job is in the model's ring a cycle before
  // its push)
  size_t in_ring(int64_t c) const {
    return size_t(std::count_if(ring.begin(), ring.end(), [&](const Job& j) { return j.pushed < c; }));
  }

  // A QP to ask rdq_busy about: mostly one of a job in the ring.
  uint32_t pick_rdq() {
    std::vector<uint32_t> c;
    const unsigned r = unsigned(rng.below(100));
    if (r < 45) {
      for (const Job& j : ring)
        if (j.place && j.rd && j.moved == kNever) c.push_back(j.qpn);
    } else if (r < 75) {
      for (const Job& j : ring)
        if (j.rd) c.push_back(j.qpn);
    } else if (r < 85) {
      for (const Job& j : ring) c.push_back(j.qpn);
    } else if (r < 90 && !script.empty()) {
      c.push_back(script.front().qpn);
    }
    return c.empty() ? uint32_t(rng.below(kQps)) : c[size_t(rng.below(c.size()))];
  }

  // ------------------------------------------------------------ one cycle
  // Drives the inputs (a random job of the generator if auto_jobs), checks every output
  // against the reference, applies the handshakes to it, then the clock edge.
  void step() {
    const int64_t c = int64_t(dut.cycle());
    if (auto_jobs && script.empty()) add(random_job());
    dut->aw_ready = rng.percent(k.aw);
    dut->w_ready = rng.percent(k.w);
    dut->task_ready = rng.percent(k.task);
    dut->cqe_ready = rng.percent(k.cqe);
    dut->cev_ready = rng.percent(k.cev);
    const bool dv = !beats.empty() && rng.percent(k.d);
    dut->d_valid = dv;
    for (size_t i = 0; i < 16; ++i) dut->d_data[i] = dv ? beats.front().w[i] : rng.u32();
    const uint32_t q = fixed_rdq >= 0 ? uint32_t(fixed_rdq) : pick_rdq();
    dut->rdq_qpn = uint8_t(q);
    if (!script.empty()) {
      dut->job_in = encode(script.front());
    } else {
      for (size_t i = 0; i < kJobWords; ++i) dut->job_in[i] = rng.u32();
      dut->job_in[kJobWords - 1] &= kJobTopMask;
    }
    // A job announced in the previous cycle (pre_*) is pushed now; it is already in the
    // model's ring (with this cycle as its push), since its payload may be moving.
    dut->pre_valid = 0;
    for (size_t i = 0; i < kJobWords; ++i) dut->pre_job[i] = rng.u32();
    dut->pre_job[kJobWords - 1] &= kJobTopMask;
    if (announced) dut->job_in = encode(ring.back());
    dut->job_valid = 0;
    dut.eval();
    const bool push = announced || (!script.empty() && dut->job_ready && rng.percent(k.push));
    // announce the next job (a payload) instead of pushing it, now and then: the classification
    // stage does so in the cycle before the write-back that pushes it
    const bool announce = !push && !script.empty() && dut->job_ready && script.front().place && rng.percent(k.pre);
    if (announce) {
      dut->pre_valid = 1;
      dut->pre_job = encode(script.front());
    }
    if (push) {
      ASSERT_TRUE(dut->job_ready) << "cycle " << c << ": the announced job cannot be pushed";
    }
    dut->job_valid = push;
    dut.eval();
    check(c, q, dv, push && !announced);
    if (HasFatalFailure()) return;
    if (announced) {
      announced = false;
      ++stats.announced;
    }
    if (announce) {
      stats.announced_idle += job_by_id(mv_id) == nullptr;
      Job j = std::move(script.front());
      script.pop_front();
      j.pushed = c + 1;
      admit(j);
      announced = true;
    }
    dut.tick();
  }

  void check(int64_t c, uint32_t q, bool dv, bool push) {
    const std::string at = "cycle " + std::to_string(c) + ": ";
    // ring occupancy: jobs pushed before this cycle and not yet left
    const size_t used = in_ring(c);
    ASSERT_EQ(bool(dut->job_ready), used != kJobs)
        << at << "job_ready with " << used << " of " << kJobs << " ring entries in use";
    ASSERT_EQ(bool(dut->idle), used == 0) << at << "idle with " << used << " jobs in the ring";
    stats.full_cycles += used == kJobs;

    // rdq_busy
    const bool busy = model_busy(q, c);
    if (!busy)
      for (const Job& j : ring) {
        if (!j.rd || j.qpn != q) continue;
        ASSERT_FALSE(dut->rdq_busy) << at << "rdq_busy for QP " << q << ": " << describe(j) << " is "
                                    << (j.place ? "placed (cycle " + std::to_string(j.moved) + ")"
                                                : "a READ job without payload");
      }
    ASSERT_EQ(bool(dut->rdq_busy), busy) << at << "rdq_busy for QP " << q;
    stats.busy_true += busy;
    if (fixed_rdq >= 0 && busy) busy_log.push_back(c);
    if (!busy)
      for (const Job& j : ring)
        if (j.rd && j.qpn == q) {
          ++stats.busy_false_rd;
          break;
        }

    // emitter: the oldest job in the ring, placed before this cycle
    Job* h = ring.empty() ? nullptr : &ring.front();
    const bool em = h && h->moved != kNever && h->moved < c;
    check_outputs(at, h, em);
    if (HasFatalFailure()) return;

    // payload writes and frame beats: only for the first job not yet placed
    Job* m = job_by_id(mv_id);
    if (dut->w_valid) {
      ASSERT_FALSE(w_x.empty()) << at << "W beat the reference does not make (strobes " << hex(dut->w_strb) << ")";
      const WX& e = w_x.front();
      ASSERT_TRUE(m && e.job == mv_id) << at << "W beat of job " << e.job << " while "
                                       << (m ? describe(*m) : "job " + std::to_string(mv_id)) << " is not placed yet";
      ASSERT_LT(e.burst, aw_taken) << at << "W beat of " << describe(*m) << " before its burst's AW";
      const std::string w = at + "W beat " + std::to_string(e.beat) + " (" + hex(e.addr) + ") of " + describe(*m) + ": ";
      ASSERT_EQ(uint64_t(dut->w_strb), e.strb) << w << "strobes";
      ASSERT_EQ(bool(dut->w_last), e.last) << w << "last";
      for (int b = 0; b < 64; ++b)
        if ((e.strb >> b) & 1) {
          const uint8_t v = uint8_t(dut->w_data[size_t(b / 4)] >> (8 * (b % 4)));
          ASSERT_EQ(unsigned(v), unsigned(e.data[size_t(b)]))
              << w << "first differing byte at " << hex(e.addr + uint64_t(b)) << " (payload byte "
              << (int64_t(e.beat) * 64 + b - int64_t(m->dst & 63)) << ")";
        }
    }
    if (dut->aw_valid) {
      ASSERT_FALSE(aw_x.empty()) << at << "AW " << hex(dut->aw_addr) << " the reference does not make";
      const AwX& e = aw_x.front();
      ASSERT_TRUE(m && e.job == mv_id) << at << "AW of job " << e.job << " while "
                                       << (m ? describe(*m) : "job " + std::to_string(mv_id)) << " is not placed yet";
      ASSERT_EQ(uint64_t(dut->aw_addr), e.addr) << at << "AW address of " << describe(*m);
      ASSERT_EQ(unsigned(dut->aw_len), e.len) << at << "AW len at " << hex(e.addr) << " of " << describe(*m);
    }
    const bool d_take = dv && dut->d_ready;
    if (d_take) {
      const uint64_t bj = beats.front().job;
      ASSERT_TRUE(m && bj == mv_id) << at << "frame beat of job " << bj << " taken while "
                                    << (m ? describe(*m) + " is not placed yet" : "no job is in the ring to place");
      ASSERT_LT(m->d_taken, m->nbeats) << at << describe(*m) << ": beat beyond its frame";
    }
    if (dut->w_valid && dut->w_ready) {
      const WX& e = w_x.front();
      stats.bytes += uint64_t(__builtin_popcountll(e.strb));
      w_log.emplace_back(e.strb, e.last);
      ++m->w_taken;
      m->last_w = c;
      w_x.pop_front();
      if (em && ((dut->task_valid && !dut->task_ready) || (dut->cqe_valid && !dut->cqe_ready) ||
                 (dut->cev_valid && !dut->cev_ready)))
        ++stats.w_while_emitter_blocked;
    }
    if (dut->aw_valid && dut->aw_ready) {
      aw_x.pop_front();
      ++aw_taken;
      ++stats.aws;
      aw_log.push_back({mv_id, uint64_t(dut->aw_addr), unsigned(dut->aw_len)});
    }
    if (d_take) {
      ++m->d_taken;
      m->last_d = c;
      ++stats.beats;
      beats.pop_front();
    }
    if (em) {
      if (dut->task_valid && dut->task_ready) {
        h->task_at = c;
        ++stats.tasks;
      }
      if (dut->cqe_valid && dut->cqe_ready) {
        h->cqe_at = c;
        ++stats.cqes;
      }
      if (dut->cev_valid && dut->cev_ready) {
        h->cev_at = c;
        ++stats.cevs;
      }
    }
    if (push) {
      Job j = std::move(script.front());
      script.pop_front();
      j.pushed = c;
      admit(j);
    }
    // placed in this cycle: the first job not yet placed, once its payload is written and its
    // frame taken; a job without frame one cycle after the previous one
    // (a job pushed into a ring without unplaced jobs starts in its push cycle: without payload
    // and frame it is placed then)
    if (Job* p = job_by_id(mv_id); p && p->pushed <= c) {
      const bool done = p->place ? p->w_taken == p->n_w && p->d_taken == p->nbeats
                                 : p->nbeats ? p->d_taken == p->nbeats : last_moved < c;
      if (done) {
        p->moved = c;
        last_moved = c;
        ++mv_id;
      }
    }
    // leaves the ring in this cycle: the emitter's job, once every output it has was taken
    if (em && h->outputs_taken()) {
      h->freed = c;
      h->frame.clear();
      h->frame.shrink_to_fit();
      done_log.push_back(std::move(*h));
      ring.pop_front();
      ++em_id;
    }
  }

  void check_outputs(const std::string& at, Job* h, bool em) {
    const bool task = em && h->has_task && h->task_at == kNever;
    const bool cqe = em && h->has_cqe && h->cqe_at == kNever;
    const bool cev = em && h->has_cev && h->cev_at == kNever;
    auto who = [&]() {
      if (!h) return std::string("no job in the ring");
      std::string s = describe(*h);
      if (h->moved == kNever) s += ", not placed yet (" + std::to_string(h->w_taken) + " of " + std::to_string(h->n_w) +
                                   " W beats and " + std::to_string(h->d_taken) + " frame beats taken)";
      return s;
    };
    ASSERT_EQ(bool(dut->task_valid), task) << at << "task_valid; emitter's job: " << who();
    ASSERT_EQ(bool(dut->cqe_valid), cqe) << at << "cqe_valid; emitter's job: " << who();
    ASSERT_EQ(bool(dut->cev_valid), cev) << at << "cev_valid; emitter's job: " << who();
    // the rule itself, apart from the timing above: an output of job k only once every W
    // beat of jobs <= k was taken (in an earlier cycle)
    if (task || cqe || cev) {
      ASSERT_TRUE(w_x.empty() || w_x.front().job > h->id)
          << at << "output of " << describe(*h) << " offered while W beats of job " << w_x.front().job
          << " are not written yet";
    }
    static const char* const kTaskF[] = {"is_read", "qpn", "psn", "syndrome", "msn", "addr", "len", "mtu"};
    static const char* const kCqeF[] = {"cqn", "wr_id", "byte_len", "imm", "qpn", "wqe_idx", "opcode", "status",
                                        "with_imm"};
    static const char* const kCevF[] = {"kind",   "qpn",    "psn",    "status",  "psn2",  "has_ack",
                                        "has_rd", "has_rt", "rt_kind", "rt_code", "rt_psn"};
    for (size_t f = 0; task && f < h->task.size(); ++f) {
      ASSERT_EQ(kRespTask.get(dut->task_out, f), h->task[f]) << at << "task field " << kTaskF[f] << " of " << who();
    }
    for (size_t f = 0; cqe && f < h->cqe.size(); ++f) {
      ASSERT_EQ(kCqeReq.get(dut->cqe, f), h->cqe[f]) << at << "CQE field " << kCqeF[f] << " of " << who();
    }
    for (size_t f = 0; cev && f < h->cev.size(); ++f) {
      ASSERT_EQ(kCompEv.get(dut->cev, f), h->cev[f]) << at << "event field " << kCevF[f] << " of " << who();
    }
  }

  void run(int n) {
    for (int i = 0; i < n && !HasFatalFailure(); ++i) step();
  }
  // Runs with everything ready until every queued job has left; false if that takes too long.
  bool drain(int max = 200000) {
    k = Knobs{};
    for (int i = 0; i < max && !HasFatalFailure(); ++i) {
      if (script.empty() && ring.empty()) break;
      step();
    }
    if (HasFatalFailure()) return false;
    EXPECT_TRUE(script.empty()) << script.size() << " jobs never pushed";
    EXPECT_TRUE(ring.empty()) << ring.size() << " jobs never left the ring"
                              << (ring.empty() ? "" : ", the first: " + describe(ring.front()));
    EXPECT_TRUE(aw_x.empty()) << aw_x.size() << " AW bursts never made";
    EXPECT_TRUE(w_x.empty()) << w_x.size() << " W beats never made";
    EXPECT_TRUE(beats.empty()) << beats.size() << " frame beats never taken";
    return script.empty() && ring.empty();
  }

  const Job& done_job(uint64_t id) {
    for (const Job& j : done_log)
      if (j.id == id) return j;
    static const Job none;
    ADD_FAILURE() << "job " << id << " has not left the ring";
    return none;
  }

  Rng rng;
  Dut<Vsrnic_rx_place> dut;
  Knobs k;
  Stats stats;
  bool auto_jobs = false;
  int64_t fixed_rdq = -1;   // rdq_qpn held at this QP (>= 0) instead of picked per cycle
  unsigned rd_pct = 35, hot_qps = 0;
  std::deque<Job> script;   // jobs not yet pushed, in order
  std::deque<Job> ring;     // pushed (or announced) and not yet left, oldest first
  bool announced = false;   // ring.back() was announced last cycle: it is pushed now
  std::vector<Job> done_log;
  std::deque<Beat> beats;   // the RX buffer: frames of the queued and pushed jobs, in order
  std::deque<AwX> aw_x;
  std::deque<WX> w_x;
  std::vector<AwX> aw_log;                          // AW bursts taken
  std::vector<std::pair<uint64_t, bool>> w_log;     // strobes and last of each W beat taken
  std::vector<int64_t> busy_log;                    // cycles with rdq_busy (with fixed_rdq)
  uint64_t next_id = 0, mv_id = 0, em_id = 0, aw_made = 0, aw_taken = 0;
  int64_t last_moved = kNever;
};

// Random jobs, host addresses and payloads, random readiness everywhere; phases vary the
// rates, from everything ready to long stalls of one consumer, and the QP mix (few QPs with
// many READ responses, or all QPs).
TEST_F(RxPlaceBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  auto_jobs = true;
  static const unsigned kRates[] = {100, 100, 95, 80, 50, 25, 10, 3};
  auto rate = [&]() { return kRates[rng.below(8)]; };
  for (int phase = 0; phase < 120 && !HasFatalFailure(); ++phase) {
    k.push = rng.percent(10) ? 0 : rate();
    k.d = rate();
    k.aw = rate();
    k.w = rate();
    k.task = rng.percent(10) ? 0 : rate();
    k.cqe = rate();
    k.cev = rate();
    k.pre = rng.percent(30) ? 0 : unsigned(rng.range(10, 60));
    hot_qps = rng.percent(50) ? unsigned(rng.range(1, 3)) : 0;
    rd_pct = unsigned(rng.range(10, 70));
    run(5000);
  }
  auto_jobs = false;
  if (HasFatalFailure()) return;
  drain();
  std::printf("[bench] %llu jobs (%llu placed, %llu 4 KiB crossings, %llu near a full MTU, %llu with extra beats, "
              "%llu dropped frames, %llu without frame), %llu payload bytes, %llu AW, %llu frame beats; "
              "%llu/%llu/%llu tasks/CQEs/events; rdq_busy true %llu, false for a READ job's QP %llu; ring full "
              "%llu cycles; %llu W beats while the emitter waited; %llu announced (%llu to an idle mover)\n",
              (unsigned long long)stats.jobs, (unsigned long long)stats.placed, (unsigned long long)stats.crossing,
              (unsigned long long)stats.big, (unsigned long long)stats.extra_beats, (unsigned long long)stats.dropped,
              (unsigned long long)stats.no_frame, (unsigned long long)stats.bytes, (unsigned long long)stats.aws,
              (unsigned long long)stats.beats, (unsigned long long)stats.tasks, (unsigned long long)stats.cqes,
              (unsigned long long)stats.cevs, (unsigned long long)stats.busy_true,
              (unsigned long long)stats.busy_false_rd, (unsigned long long)stats.full_cycles,
              (unsigned long long)stats.w_while_emitter_blocked, (unsigned long long)stats.announced,
              (unsigned long long)stats.announced_idle);
  EXPECT_GE(stats.announced, 300u);
  EXPECT_GE(stats.announced_idle, 20u) << "announced payloads rarely found the mover idle";
  EXPECT_GE(stats.jobs, 3000u);
  EXPECT_GE(stats.placed, 1500u);
  EXPECT_GE(stats.crossing, 200u);
  EXPECT_GE(stats.big, 100u);
  EXPECT_GE(stats.extra_beats, 50u);
  EXPECT_GE(stats.dropped, 200u);
  EXPECT_GE(stats.no_frame, 200u);
  EXPECT_GE(stats.bytes, 2000000u);
  EXPECT_GE(stats.tasks, 500u);
  EXPECT_GE(stats.cqes, 500u);
  EXPECT_GE(stats.cevs, 500u);
  EXPECT_GE(stats.busy_true, 5000u);
  EXPECT_GE(stats.busy_false_rd, 5000u);
  EXPECT_GE(stats.full_cycles, 5000u);
  EXPECT_GE(stats.w_while_emitter_blocked, 1000u);
}

// A job without payload and without frame beats produces only its outputs: placed in its push
// cycle (the ring holds no unplaced job), offered the cycle after that; one without outputs just passes; a job that
// drops a frame takes exactly its beats (the next job's payload is the next frame's).
TEST_F(RxPlaceBench, NoPayloadNoBeats) {
  SRNIC_BENCH_TRACE();
  reset();
  Job a = make_job(false, 0, 54, 0, 0);
  a.has_task = a.has_cqe = a.has_cev = true;
  a.rd = true;
  add(a);
  Job b = make_job(false, 0, 54, 0, 0);
  add(b);
  Job c = make_job(false, 0, 58, 300);   // a dropped frame: 6 beats
  c.has_cqe = true;
  add(c);
  Job d = make_job(true, 0x10000 + 7, 62, 100);
  d.has_cev = true;
  add(d);
  for (int i = 0; i < 200 && !HasFatalFailure() && !(script.empty() && ring.empty()); ++i) step();
  ASSERT_TRUE(script.empty() && ring.empty());
  const Job &ja = done_job(0), &jb = done_job(1), &jc = done_job(2), &jd = done_job(3);
  EXPECT_EQ(ja.moved, ja.pushed) << "no payload, no beats, nothing unplaced before it: placed in the push cycle";
  EXPECT_EQ(ja.task_at, ja.pushed + 1) << "its outputs offered the cycle after";
  EXPECT_EQ(ja.cqe_at, ja.pushed + 1);
  EXPECT_EQ(ja.cev_at, ja.pushed + 1);
  EXPECT_EQ(jb.freed, std::max(jb.moved, ja.freed) + 1) << "a job without outputs leaves at once";
  EXPECT_EQ(jc.d_taken, 6u);
  EXPECT_EQ(jc.n_w, 0u);
  ASSERT_EQ(aw_log.size(), 1u) << "only job 3 writes";
  EXPECT_EQ(aw_log[0].addr, 0x10000u);
  EXPECT_EQ(aw_log[0].len, 1u) << "7 + 100 bytes: two beats";
  EXPECT_GT(jd.cev_at, jd.last_w);
  EXPECT_EQ(stats.beats, 6u + frame_beats(62, 100));
}

// The task consumer stops for a long time: the first job's task waits, but the mover goes on
// placing the next jobs' payloads (every W beat of every pushed job is taken) until the ring
// holds JOBS jobs; job_ready stays low, nothing else is pushed; once the task is taken the
// rest follows in order.
TEST_F(RxPlaceBench, BlockedEmitterDoesNotStopPlacement) {
  SRNIC_BENCH_TRACE();
  reset();
  Job first = make_job(true, 0x4000'0000 + 13, 66, 1500);
  first.has_task = true;
  first.rd = true;
  first.qpn = 3;
  add(first);
  for (int i = 0; i < 3 * int(kJobs); ++i) {
    Job j = make_job(true, 0x5000'0000 + uint64_t(i) * 0x3000 + uint64_t(rng.below(4096)), 54 + 2 * unsigned(i % 10),
                     unsigned(rng.range(1, kMtu)));
    j.has_task = i % 2;
    j.has_cqe = true;
    j.rd = true;
    j.qpn = 3;
    add(j);
  }
  k.task = 0;
  k.d = 70;
  run(4000);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(ring.size(), kJobs) << "the ring is full";
  EXPECT_EQ(stats.jobs, kJobs) << "nothing pushed into the full ring";
  EXPECT_FALSE(dut->job_ready);
  EXPECT_GE(stats.full_cycles, 2000u);
  for (const Job& j : ring) {
    EXPECT_NE(j.moved, kNever) << describe(j) << " not placed while the emitter waits";
    EXPECT_EQ(j.w_taken, j.n_w) << describe(j);
  }
  EXPECT_TRUE(w_x.empty());
  EXPECT_EQ(ring.front().id, 0u);
  EXPECT_EQ(ring.front().task_at, kNever);
  EXPECT_FALSE(model_busy(3, int64_t(dut.cycle()))) << "every READ response in the ring is placed";
  k.task = 100;
  drain();
  EXPECT_EQ(stats.jobs, 3 * kJobs + 1);
}

// Back-pressure on W alone: first W stops for a while (the mover holds the first job, no
// output leaves, later frames stay in the RX buffer, the ring fills), then W is ready one
// cycle in eight, then always.
TEST_F(RxPlaceBench, WriteBackpressureOnly) {
  SRNIC_BENCH_TRACE();
  reset();
  for (int i = 0; i < 40; ++i) {
    const unsigned len = random_len();
    Job j = make_job(true, random_dst(len), unsigned(rng.range(54, 74)), len);
    j.has_task = rng.percent(50);
    j.has_cqe = rng.percent(50);
    j.has_cev = rng.percent(50);
    j.rd = rng.percent(50);
    add(j);
  }
  k.w = 0;
  run(500);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(ring.size(), kJobs);
  EXPECT_EQ(stats.tasks + stats.cqes + stats.cevs, 0u) << "an output before its payload was written";
  EXPECT_EQ(mv_id, 0u);
  k.w = 12;
  run(20000);
  ASSERT_FALSE(HasFatalFailure());
  drain();
  EXPECT_EQ(stats.jobs, 40u);
  EXPECT_GE(stats.full_cycles, 1000u);
}

// Payloads across a 4 KiB line: the bursts written out by hand.
TEST_F(RxPlaceBench, Crossing4K) {
  SRNIC_BENCH_TRACE();
  reset();
  // 0x30 + 200 bytes from 0x12345FC0: one beat up to the line, then three
  add(make_job(true, 0x12345FF0, 58, 200));
  // 0x20 + 4096 bytes from 0x700000F80: two beats, then 63
  add(make_job(true, 0x700000FA0, 74, 4096));
  // 1 + 4096 bytes from a page start: the whole page, then one beat with one byte
  add(make_job(true, 0x900000001, 55, 4096));
  // 4096 bytes at a page start: one burst of 64 beats
  add(make_job(true, 0xA00000000, 54, 4096));
  k.aw = 60;
  k.w = 70;
  k.d = 80;
  for (int i = 0; i < 3000 && !HasFatalFailure() && !(script.empty() && ring.empty()); ++i) step();
  const auto& ws = w_log;
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(script.empty() && ring.empty());
  const std::vector<AwX> want = {{0, 0x12345FC0, 0},   {0, 0x12346000, 2},  {1, 0x700000F80, 1},
                                 {1, 0x700001000, 62}, {2, 0x900000000, 63}, {2, 0x900001000, 0},
                                 {3, 0xA00000000, 63}};
  ASSERT_EQ(aw_log.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(aw_log[i].job, want[i].job) << "AW " << i;
    EXPECT_EQ(aw_log[i].addr, want[i].addr) << "AW " << i;
    EXPECT_EQ(aw_log[i].len, want[i].len) << "AW " << i;
  }
  ASSERT_EQ(ws.size(), 4u + 65 + 65 + 64);
  const uint64_t all = ~uint64_t(0);
  auto beat = [&](size_t i, uint64_t strb, bool last) {
    EXPECT_EQ(ws[i].first, strb) << "W beat " << i << " strobes";
    EXPECT_EQ(ws[i].second, last) << "W beat " << i << " last";
  };
  beat(0, all << 48, true);
  beat(1, all, false);
  beat(3, (1ull << 56) - 1, true);
  beat(4, all << 32, false);
  beat(5, all, true);
  beat(4 + 64, (1ull << 32) - 1, true);
  beat(69, all << 1, false);
  beat(69 + 63, all, true);
  beat(69 + 64, 1, true);
  beat(134 + 63, all, true);
}

// rdq_busy for a READ response's QP: true from the cycle after its push until the cycle of
// its last W beat, false the cycle after (its frame has no beat left then); with beats after
// the payload, true until the cycle of the last of them. Other QPs: false throughout.
TEST_F(RxPlaceBench, RdqBusyClearsAfterPlacement) {
  SRNIC_BENCH_TRACE();
  reset();
  Job a = make_job(true, 0x2000'0000 + 9, 60, 700);
  a.rd = true;
  a.qpn = 5;
  add(a);
  Job b = make_job(true, 0x3000'0000 + 40, 70, 300, int(frame_beats(70, 300)) + 2);
  b.rd = true;
  b.qpn = 5;
  add(b);
  Job other = make_job(true, 0x3000'8000, 54, 200);
  other.rd = true;
  other.qpn = 6;
  add(other);
  fixed_rdq = 5;
  k.w = 40;
  k.d = 60;
  for (int i = 0; i < 3000 && !HasFatalFailure() && !(script.empty() && ring.empty()); ++i) step();
  const auto& busy_at = busy_log;
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(script.empty() && ring.empty());
  const Job &ja = done_job(0), &jb = done_job(1);
  ASSERT_FALSE(busy_at.empty());
  EXPECT_EQ(busy_at.front(), ja.pushed + 1);
  EXPECT_EQ(ja.moved, ja.last_w) << "the frame's last beat was taken before the last W beat";
  EXPECT_GE(ja.last_w, ja.last_d);
  EXPECT_GT(jb.last_d, jb.last_w) << "two beats after the payload";
  EXPECT_EQ(jb.moved, jb.last_d);
  // busy in every cycle from a's push + 1 to b's placement, except between the two if b
  // was pushed only after a was placed
  EXPECT_EQ(busy_at.back(), jb.moved) << "rdq_busy clears the cycle after the last beat of the last READ job";
  for (int64_t t : busy_at)
    EXPECT_TRUE((t > ja.pushed && t <= ja.moved) || (t > jb.pushed && t <= jb.moved)) << "busy in cycle " << t;
}

// A push into a full ring is refused (job_ready low) and reported by a_push_room; the ring
// goes on as before.
TEST_F(RxPlaceBench, AssertionPushIntoFullRing) {
  SRNIC_BENCH_TRACE();
  reset();
  for (size_t i = 0; i < kJobs; ++i) {
    Job j = make_job(false, 0, 54, 0, 0);
    j.has_task = true;
    add(j);
  }
  Job extra = make_job(true, 0x8000, 54, 100);
  add(extra);
  k.task = 0;
  run(20);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(ring.size(), kJobs);
  ASSERT_FALSE(dut->job_ready);
  dut->job_in = encode(script.front());
  dut->job_valid = 1;
  dut.eval();
  EXPECT_FALSE(dut->job_ready);
  dut.tick();
  dut->job_valid = 0;
  dut.eval();
  dut.tick();
  EXPECT_GE(dut.take_rtl_errors(), 1) << "a_push_room did not report the push into a full ring";
  EXPECT_EQ(ring.size(), kJobs);
  drain();
  EXPECT_EQ(stats.jobs, kJobs + 1);
}

}  // namespace
}  // namespace srnic::verif::blocks
