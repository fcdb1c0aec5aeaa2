// srnic_wqe_cache bench: a C++ host with per-QP SQ rings (2..512 slots at 64-byte aligned
// bases, so rings cross 4 KiB boundaries), a driver that writes WQEs of random contents into
// free slots and rings doorbells (several WQEs per doorbell, sometimes rung later than
// written, indices running past the 16-bit wrap), a requester that reads the way
// srnic_wqe_fetch does (a QP's consecutive windows of 1..8 WQEs from its cursor, never across
// the ring end or 4 KiB, only posted WQEs, sometimes rewinding to older ones, up to 8 requests
// in flight) and completes WQEs (only below its cursor and outside requests in flight; their
// slots are then reposted with new contents), QPs recreated with init_idx (over the same ring
// or a moved one, with or without a RESET command first), and a slave that answers host reads
// in order after a random latency with random ARREADY.
// Checks: every request returns exactly the host contents of its slots when it was taken, in
// order, one beat per WQE, nothing more; every host read has 1..8 beats, stays inside one QP's
// ring and 4 KiB, and reads only posted, uncompleted slots (the one read offered on d_ar when a
// command restarted its QP excepted: AXI keeps it offered); reads without st_pf (demand) lie
// inside a request in flight; at most MISS_SLOTS demand and PF_SLOTS prefetch reads in flight;
// st_hit or st_miss once per request, st_pf only with a read; a recreated QP never sees old
// data; one QP runs past the index wrap. Behaviour: hit rate after warm-up with few QPs, hit
// latency, thrashing and blocking with many QPs round-robin, a hit behind a miss waits for it
// (MISS_SLOTS 1) or not, prefetch on doorbell, small rings bypass the cache.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <vector>

#include "Vsrnic_wqe_cache.h"
#include "bench.hpp"
#include "pkg_layouts.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kNumQps = BENCH_NUM_QPS;
constexpr int kLines = BENCH_LINES;
constexpr int kWays = BENCH_WAYS;
constexpr int kMissSlots = BENCH_MISS_SLOTS;
constexpr int kPfSlots = 4;  // RTL defaults
constexpr int kLineWqes = 8;

using Wqe = std::array<uint32_t, 16>;

uint16_t u16(uint32_t v) { return uint16_t(v & 0xFFFF); }
// a in [lo, hi) on the 16-bit index circle
bool in_window(uint16_t a, uint16_t lo, uint16_t hi) { return u16(a - lo) < u16(hi - lo); }

struct Qp {
  int qpn = 0;
  enum State { kLive, kQuiesce, kRestart } st = kRestart;  // restart: waiting for its INIT
  uint64_t base = 0;
  int log_sq = 0;
  uint32_t size() const { return 1u << log_sq; }
  uint32_t slot_of(uint16_t i) const { return i & (size() - 1); }
  uint64_t addr(uint16_t i) const { return base + (uint64_t(slot_of(i)) << 6); }
  std::vector<Wqe> slot;
  std::vector<uint16_t> slot_idx;  // absolute index of the WQE last written into the slot
  std::vector<int> slot_epoch;
  int epoch = 0;
  uint16_t ci = 0;     // oldest WQE not completed
  uint16_t pi_w = 0;   // WQEs written
  uint16_t pi_db = 0;  // WQEs posted (doorbell rung)
  uint16_t pi_req = 0; // producer index the requester knows (pi_db some cycles later)
  uint16_t cur = 0;    // the requester's next WQE
  std::vector<uint64_t> out;           // requests in flight (ids)
  std::deque<std::pair<uint64_t, uint16_t>> seen;  // (cycle, pi) for pi_req
  uint64_t last_kill = 0;              // cycle of the last command that restarted or reset it
  bool killed = false;
  uint64_t posted_total = 0;
};

struct Req {
  uint64_t id = 0;
  int q = 0;
  uint16_t idx = 0;
  int n = 0;
  uint64_t addr = 0;
  uint16_t pi = 0;
  uint64_t offered = 0, accepted = 0, first_beat = 0, last_beat = 0;
  int left = 0;
  int hit = -1;
};

struct Beat {
  uint64_t req;
  Wqe data;
};

struct SRead {
  uint64_t due = 0;
  int q = -1;
  uint64_t addr = 0;
  int beats = 0;
  std::vector<Wqe> data;
  int sent = 0;
  int cls = -1;  // 1 prefetch, 0 demand, -1 not yet known
};

struct Cmd {
  int q;
  int state;
  bool init_idx;
};

struct Doorbell {
  int q;
  uint16_t pi;
  int epoch;
  uint64_t due;
};

struct Knobs {
  unsigned p_post = 20;       // % of cycles with a posting
  int post_min = 1, post_max = 10;  // WQEs per posting
  bool post_whole = false;    // post only when the whole batch fits (else whatever fits)
  unsigned p_db_late = 20;    // % of postings rung later (1..30 cycles)
  unsigned p_req = 70;        // % of cycles the requester offers a request when it can
  unsigned p_rewind = 5;      // % of a QP's requests that rewind first
  unsigned p_complete = 30;   // % of cycles with completions
  int lat_min = 2, lat_max = 60;
  unsigned p_dready = 70;
  int max_reqs = 8, max_beats = 64, max_reqs_qp = 4;
  int n_min = 1, n_max = 8;
  int req_delay = 8;          // doorbell to requester (the scheduler's path)
  unsigned p_reset = 0;       // per 10,000 cycles: a QP is recreated
  bool round_robin = false;
  int wqe_gap = 0;            // the requester's pace: n * wqe_gap cycles after a request of n
};

class WqeCacheBench : public ::testing::Test {
 public:
  WqeCacheBench() : rng(test_seed()), dut(rng.next()) {}

  Rng rng;
  Dut<Vsrnic_wqe_cache> dut;
  Knobs k;
  std::vector<Qp> qps;
  uint64_t next_addr = 0x1'0000'0000ull;
  std::map<uint64_t, int> rings;                     // base -> QP (current rings)
  struct Retired { int q; uint64_t end; uint64_t killed_at; };
  std::map<uint64_t, Retired> retired;               // base -> moved-away ring
  std::deque<Cmd> cmds;
  std::deque<Doorbell> dbs;
  std::map<uint64_t, Req> reqs;                      // in flight, by id
  std::deque<Beat> expect;
  bool offering = false;
  Req offer;
  uint64_t next_req_id = 1;
  uint64_t req_next = 0;                             // the requester's pace (wqe_gap)
  std::deque<Req> script;                            // directed requests, offered first
  std::deque<SRead> sreads;
  SRead* unclassified = nullptr;
  int inflight[2] = {0, 0};                          // demand, prefetch (slave's view)
  int max_inflight[2] = {0, 0};
  bool prev_accept = false, prev_ar_fire = false;
  uint64_t ar_offer_start = 0;
  bool prev_ar_valid = false;
  uint64_t serial = 0;
  int rr = 0;
  bool broken = false;  // first scoreboard failure seen: stop checking data (one report)
  // counters
  uint64_t n_hit = 0, n_miss = 0, n_pf = 0, n_pf_drop = 0, n_evict = 0, n_reads = 0;
  std::vector<uint64_t> hit_lat;                     // accept -> first beat of hits
  std::vector<Req> done;                             // requests completed (directed tests)

  uint64_t now() const { return dut.cycle(); }

  // ------------------------------------------------------------------ setup
  void reset() {
    dut->u_ar_valid = 0;
    dut->d_ar_ready = 0;
    dut->d_r_valid = 0;
    dut->db_valid = 0;
    dut->qp_cmd_fire = 0;
    dut.reset();
    // the per-QP table clears itself in the NUM_QPS cycles after reset: no commands meanwhile
    for (int i = 0; i < kNumQps + 4; ++i) dut.tick();
  }

  bool align_rings = false;  // rings at page boundaries (no 4 KiB cuts)
  bool keep_rings = false;   // a recreated QP keeps its ring (else moved or resized at times)
  uint64_t alloc_ring(int log_sq) {
    // 64-byte aligned anywhere in a page: rings cross 4 KiB boundaries
    uint64_t b = (next_addr + 4095) & ~4095ull;
    b += (align_rings || rng.percent(30)) ? 0 : rng.below(64) * 64;
    next_addr = b + (uint64_t(64) << log_sq) + rng.below(4) * 4096 + 64;
    return b;
  }
  Wqe make_wqe(const Qp& qp, uint16_t idx) {
    Wqe w;
    for (auto& x : w) x = rng.u32();
    w[0] = uint32_t(qp.qpn) | uint32_t(qp.epoch) << 16;
    w[1] = idx;
    w[2] = uint32_t(++serial);
    return w;
  }
  void place_ring(Qp& qp, int log_sq, bool move) {
    if (qp.base != 0 && (move || log_sq != qp.log_sq)) {
      retired[qp.base] = {int(&qp - qps.data()), qp.base + (uint64_t(64) << qp.log_sq), now()};
      rings.erase(qp.base);
      qp.base = 0;
    }
    if (qp.base == 0) {
      qp.base = alloc_ring(log_sq);
      rings[qp.base] = int(&qp - qps.data());
    }
    qp.log_sq = log_sq;
    // whatever the memory held before: garbage nobody posted
    qp.slot.assign(qp.size(), Wqe{});
    for (auto& w : qp.slot)
      for (auto& x : w) x = rng.u32();
    qp.slot_idx.assign(qp.size(), 0);
    qp.slot_epoch.assign(qp.size(), -1);
  }
  // Adds a QP with ring 2^log_sq (QPNs spread over [0, NUM_QPS)); commands INIT(init_idx), RTS.
  int add_qp(int log_sq, int qpn = -1) {
    Qp qp;
    if (qpn < 0) {
      for (;;) {
        qpn = int(rng.below(kNumQps));
        bool used = false;
        for (const auto& o : qps) used |= o.qpn == qpn;
        if (!used) break;
      }
    }
    qp.qpn = qpn;
    qp.log_sq = log_sq;
    qps.push_back(qp);
    const int q = int(qps.size()) - 1;
    cmds.push_back({q, 1, true});
    cmds.push_back({q, 3, false});
    return q;
  }
  int random_log_sq() {
    const unsigned r = unsigned(rng.below(100));
    if (r < 20) return int(rng.range(1, 2));   // 2, 4 slots: below a line, bypassed
    if (r < 90) return int(rng.range(3, 6));   // 8..64
    return int(rng.range(7, 9));               // 128..512
  }
  void setup_qps(int n) {
    for (int i = 0; i < n; ++i) add_qp(random_log_sq());
  }
  // Recreates QP q: no new requests or doorbells, then (when nothing of it is in flight)
  // optionally RESET, then INIT with init_idx (same ring, or a moved or resized one), RTS.
  void recreate(int q) {
    Qp& qp = qps[size_t(q)];
    if (qp.st != Qp::kLive) return;
    qp.st = Qp::kQuiesce;
  }
  void start_restart(int q) {
    Qp& qp = qps[size_t(q)];
    qp.st = Qp::kRestart;
    if (rng.percent(50)) cmds.push_back({q, 0, false});
    cmds.push_back({q, 1, true});
    cmds.push_back({q, 3, false});
  }

  // ------------------------------------------------------------------ host side effects
  void on_cmd(const Cmd& c) {
    Qp& qp = qps[size_t(c.q)];
    if (c.state == 0 || c.init_idx) {
      qp.last_kill = now();
      qp.killed = true;
    }
    if (c.init_idx) {
      const bool first = qp.base == 0;
      int log_sq = qp.log_sq;
      bool move = false;
      if (!first && !keep_rings && rng.percent(30)) move = true;
      if (!first && !keep_rings && rng.percent(15)) log_sq = random_log_sq();
      place_ring(qp, log_sq, move);
      qp.epoch++;
      qp.ci = qp.pi_w = qp.pi_db = qp.pi_req = qp.cur = 0;
      qp.seen.clear();
      qp.st = Qp::kLive;
    }
  }
  void drive_cmd(bool& init_now) {
    dut->qp_cmd_fire = 0;
    init_now = false;
    if (cmds.empty()) return;
    const Cmd c = cmds.front();
    const Qp& qp = qps[size_t(c.q)];
    cmds.pop_front();
    init_now = c.init_idx;
    dut->qp_cmd_fire = 1;
    for (size_t i = 0; i < sizeof(dut->qp_cmd) / sizeof(dut->qp_cmd[0]); ++i) dut->qp_cmd[i] = 0;
    set_bits(dut->qp_cmd, kQpCmd.at(kCQpn).lsb, 16, uint64_t(qp.qpn));
    set_bits(dut->qp_cmd, kQpCmd.at(kCState).lsb, 3, uint64_t(c.state));
    set_bits(dut->qp_cmd, kQpCmd.at(kCInitIdx).lsb, 1, c.init_idx ? 1 : 0);
    on_cmd(c);  // an INIT moves or resizes the ring first: the command carries the new one
    set_bits(dut->qp_cmd, kQpCmd.at(kCLogSq).lsb, 4, uint64_t(qps[size_t(c.q)].log_sq));
    set_bits(dut->qp_cmd, kQpCmd.at(kCSqBase).lsb, 64, qps[size_t(c.q)].base);
    set_bits(dut->qp_cmd, kQpCmd.at(kCSqPsn).lsb, 24, rng.below(1u << 24));
  }

  // Writes up to n WQEs into free slots of q; rings the doorbell now or later.
  int post(int q, int n, bool late = false) {
    Qp& qp = qps[size_t(q)];
    if (qp.st != Qp::kLive) return 0;
    const int room = int(qp.size()) - int(u16(qp.pi_w - qp.ci));
    n = std::min(n, room);
    if (n <= 0) return 0;
    for (int i = 0; i < n; ++i) {
      const uint32_t s = qp.slot_of(qp.pi_w);
      qp.slot[s] = make_wqe(qp, qp.pi_w);
      qp.slot_idx[s] = qp.pi_w;
      qp.slot_epoch[s] = qp.epoch;
      qp.pi_w++;
    }
    qp.posted_total += uint64_t(n);
    dbs.push_back({q, qp.pi_w, qp.epoch, now() + (late ? rng.range(1, 30) : 0)});
    return n;
  }
  void drive_doorbell(bool init_now) {
    dut->db_valid = 0;
    while (!dbs.empty()) {
      const Doorbell& d = dbs.front();
      const Qp& qp = qps[size_t(d.q)];
      if (qp.st != Qp::kLive || qp.epoch != d.epoch) { dbs.pop_front(); continue; }  // dropped
      break;
    }
    if (dbs.empty() || init_now || dbs.front().due > now()) return;
    const Doorbell d = dbs.front();
    dbs.pop_front();
    Qp& qp = qps[size_t(d.q)];
    dut->db_valid = 1;
    dut->db_qpn = uint16_t(qp.qpn);
    dut->db_pi = d.pi;
    qp.pi_db = d.pi;
    qp.seen.push_back({now() + uint64_t(k.req_delay), d.pi});
  }
  void complete(int q, int max_n) {
    Qp& qp = qps[size_t(q)];
    for (int i = 0; i < max_n && qp.ci != qp.cur; ++i) {
      bool covered = false;
      for (uint64_t id : qp.out) {
        const Req& r = reqs.at(id);
        covered |= in_window(qp.ci, r.idx, u16(r.idx + r.n));
      }
      if (covered) break;
      qp.ci++;
    }
  }

  // ------------------------------------------------------------------ requester
  int out_beats() const {
    int b = 0;
    for (const auto& [id, r] : reqs) b += r.left;
    return b;
  }
  bool make_request(int q, Req& r, bool rewind_ok) {
    Qp& qp = qps[size_t(q)];
    if (rewind_ok && qp.out.empty() && qp.cur != qp.ci && rng.percent(k.p_rewind))
      qp.cur = u16(qp.ci + uint32_t(rng.below(u16(qp.cur - qp.ci) + 1u)));
    const int avail = u16(qp.pi_req - qp.cur);
    if (avail == 0) return false;
    int n = int(rng.range(uint64_t(k.n_min), uint64_t(k.n_max)));
    n = std::min(n, avail);
    n = std::min(n, int(qp.size() - qp.slot_of(qp.cur)));
    n = std::min(n, int(64 - ((qp.addr(qp.cur) >> 6) & 63)));
    r = Req{};
    r.q = q;
    r.idx = qp.cur;
    r.n = n;
    r.addr = qp.addr(qp.cur);
    r.pi = qp.pi_req;
    return true;
  }
  void drive_request() {
    if (!offering) {
      if (!script.empty()) {
        offer = script.front();
        script.pop_front();
        offering = true;
      } else if (k.p_req && now() >= req_next && rng.percent(k.p_req) && int(reqs.size()) < k.max_reqs) {
        const int nq = int(qps.size());
        for (int t = 0; t < nq && !offering; ++t) {
          const int q = k.round_robin ? (rr + t) % nq : int(rng.below(uint64_t(nq)));
          Qp& qp = qps[size_t(q)];
          if (qp.st != Qp::kLive || int(qp.out.size()) >= k.max_reqs_qp) continue;
          Req r;
          if (!make_request(q, r, true)) continue;
          if (out_beats() + r.n > k.max_beats) break;
          offer = r;
          offering = true;
          rr = (q + 1) % nq;
        }
      }
      if (offering) offer.offered = now();
    }
    dut->u_ar_valid = offering;
    if (offering) {
      const Qp& qp = qps[size_t(offer.q)];
      dut->u_ar_addr = offer.addr;
      dut->u_ar_len = uint8_t(offer.n - 1);
      dut->u_ar_qpn = uint16_t(qp.qpn);
      dut->u_ar_idx = offer.idx;
      dut->u_ar_pi = offer.pi;
      dut->u_ar_log_sq = uint8_t(qp.log_sq);
    }
  }
  // WQEs a request from idx may ask for: up to want, the ring end, 4 KiB, the posted ones.
  int fit(int q, uint16_t idx, int want) const {
    const Qp& qp = qps[size_t(q)];
    return std::min<int>({want, int(u16(qp.pi_db - idx)), int(qp.size() - qp.slot_of(idx)),
                          int(64 - ((qp.addr(idx) >> 6) & 63))});
  }
  // Directed: queue a request of QP q for [idx, idx + n) (posted WQEs).
  void request(int q, uint16_t idx, int n) {
    Qp& qp = qps[size_t(q)];
    Req r;
    r.q = q;
    r.idx = idx;
    r.n = n;
    r.addr = qp.addr(idx);
    r.pi = qp.pi_db;
    script.push_back(r);
  }
  void on_accept() {
    Req r = offer;
    offering = false;
    Qp& qp = qps[size_t(r.q)];
    r.id = next_req_id++;
    r.accepted = now();
    req_next = now() + uint64_t(r.n) * uint64_t(k.wqe_gap);
    r.left = r.n;
    for (int i = 0; i < r.n; ++i) {
      const uint16_t idx = u16(r.idx + uint32_t(i));
      const uint32_t s = qp.slot_of(idx);
      if (qp.slot_idx[s] != idx || qp.slot_epoch[s] != qp.epoch || !in_window(idx, qp.ci, qp.pi_db)) {
        ADD_FAILURE() << "bench: request of QP " << qp.qpn << " for WQE " << idx << " that is not posted";
        broken = true;
      }
      expect.push_back({r.id, qp.slot[s]});
    }
    qp.out.push_back(r.id);
    qp.cur = u16(r.idx + uint32_t(r.n));
    reqs[r.id] = r;
  }
  void on_beat() {
    const uint64_t c = now();
    if (expect.empty()) {
      ADD_FAILURE() << "cycle " << c << ": read data beat with no request waiting for one";
      broken = true;
      return;
    }
    const Beat b = expect.front();
    expect.pop_front();
    Req& r = reqs.at(b.req);
    const Qp& qp = qps[size_t(r.q)];
    const int i = r.n - r.left;
    if (!broken) {
      for (int w = 0; w < 16; ++w) {
        const uint32_t got = dut->u_r_data[size_t(w)];
        if (got != b.data[size_t(w)]) {
          ADD_FAILURE() << "cycle " << c << ": QP " << qp.qpn << " WQE " << u16(r.idx + uint32_t(i)) << " (request of "
                        << r.n << " from " << r.idx << ", taken at cycle " << r.accepted << "): word " << w
                        << " is 0x" << std::hex << got << ", expected 0x" << b.data[size_t(w)] << std::dec
                        << " (words 0..2 of what came: qpn|epoch 0x" << std::hex << dut->u_r_data[0] << std::dec
                        << ", index " << dut->u_r_data[1] << ", serial " << dut->u_r_data[2] << ")";
          broken = true;
          break;
        }
      }
    }
    if (r.left == r.n) r.first_beat = c;
    if (--r.left == 0) {
      r.last_beat = c;
      Qp& q = qps[size_t(r.q)];
      q.out.erase(std::find(q.out.begin(), q.out.end(), r.id));
      if (r.hit == 1) hit_lat.push_back(r.first_beat - r.accepted);
      done.push_back(r);
      reqs.erase(b.req);
    }
  }

  // ------------------------------------------------------------------ slave
  // The QP whose current (or retired) ring holds addr, -1 if none; sets ring end and retired.
  int owner(uint64_t addr, uint64_t& end, const Retired*& ret) {
    ret = nullptr;
    auto it = rings.upper_bound(addr);
    if (it != rings.begin()) {
      --it;
      const Qp& qp = qps[size_t(it->second)];
      end = it->first + (uint64_t(64) << qp.log_sq);
      if (addr < end) return it->second;
    }
    auto jt = retired.upper_bound(addr);
    if (jt != retired.begin()) {
      --jt;
      if (addr < jt->second.end) {
        end = jt->second.end;
        ret = &jt->second;
        return jt->second.q;
      }
    }
    return -1;
  }
  void on_ar() {
    const uint64_t c = now();
    const uint64_t addr = dut->d_ar_addr;
    const int beats = int(dut->d_ar_len) + 1;
    ++n_reads;
    SRead sr;
    sr.addr = addr;
    sr.beats = beats;
    uint64_t end = 0;
    const Retired* ret = nullptr;
    const int q = owner(addr, end, ret);
    sr.q = q;
    if ((addr & 63) != 0 || beats > kLineWqes || ((addr >> 6) & 63) + uint64_t(beats) > 64) {
      ADD_FAILURE() << "cycle " << c << ": host read at 0x" << std::hex << addr << std::dec << " of " << beats
                    << " beats (unaligned, above " << kLineWqes << " beats or across 4 KiB)";
      broken = true;
    }
    if (q < 0 || addr + uint64_t(beats) * 64 > end) {
      ADD_FAILURE() << "cycle " << c << ": host read at 0x" << std::hex << addr << std::dec << " of " << beats
                    << " beats outside every SQ ring (or across its end)";
      broken = true;
    } else if (ret != nullptr) {
      if (ar_offer_start > ret->killed_at) {
        ADD_FAILURE() << "cycle " << c << ": host read of QP " << qps[size_t(q)].qpn
                      << "'s old ring, moved away at cycle " << ret->killed_at << ", offered from cycle "
                      << ar_offer_start;
        broken = true;
      }
    } else {
      const Qp& qp = qps[size_t(q)];
      const bool exempt = qp.killed && ar_offer_start <= qp.last_kill;
      for (int i = 0; i < beats; ++i) {
        const uint32_t s = uint32_t((addr - qp.base) >> 6) + uint32_t(i);
        const bool posted = qp.slot_epoch[s] == qp.epoch && in_window(qp.slot_idx[s], qp.ci, qp.pi_db);
        if (!posted && !exempt && !broken) {
          ADD_FAILURE() << "cycle " << c << ": host read of QP " << qp.qpn << " slot " << s << " (WQE "
                        << qp.slot_idx[s] << (qp.slot_epoch[s] == qp.epoch ? "" : " of an earlier epoch or never written")
                        << "), not posted or completed: completed below " << qp.ci << ", posted below "
                        << qp.pi_db;
          broken = true;
        }
        sr.data.push_back(qp.slot[s]);
      }
    }
    sr.data.resize(size_t(beats));
    uint64_t due = c + rng.range(uint64_t(k.lat_min), uint64_t(k.lat_max));
    if (!sreads.empty()) due = std::max(due, sreads.back().due);
    sr.due = due;
    sreads.push_back(sr);
    unclassified = &sreads.back();
  }
  // A cycle after the read: st_pf tells its kind.
  void classify(bool pf) {
    SRead& sr = *unclassified;
    unclassified = nullptr;
    sr.cls = pf ? 1 : 0;
    inflight[sr.cls]++;
    max_inflight[sr.cls] = std::max(max_inflight[sr.cls], inflight[sr.cls]);
    if (inflight[0] > kMissSlots)
      ADD_FAILURE() << "cycle " << now() << ": " << inflight[0] << " demand reads in flight, MISS_SLOTS " << kMissSlots;
    if (inflight[1] > kPfSlots)
      ADD_FAILURE() << "cycle " << now() << ": " << inflight[1] << " prefetch reads in flight, PF_SLOTS " << kPfSlots;
    if (!pf && sr.q >= 0) {
      // a demand read lies inside a request of its QP in flight
      bool inside = false;
      for (uint64_t id : qps[size_t(sr.q)].out) {
        const Req& r = reqs.at(id);
        inside |= sr.addr >= r.addr && sr.addr + uint64_t(sr.beats) * 64 <= r.addr + uint64_t(r.n) * 64;
      }
      if (!inside) {
        ADD_FAILURE() << "cycle " << now() << ": demand read (no st_pf) at 0x" << std::hex << sr.addr << std::dec
                      << " of " << sr.beats << " beats for QP " << qps[size_t(sr.q)].qpn
                      << " outside its requests in flight";
        broken = true;
      }
    }
  }
  void drive_slave() {
    dut->d_ar_ready = rng.percent(k.p_dready);
    dut->d_r_valid = 0;
    if (!sreads.empty() && sreads.front().due <= now()) {
      const SRead& sr = sreads.front();
      dut->d_r_valid = 1;
      for (int w = 0; w < 16; ++w) dut->d_r_data[size_t(w)] = sr.data[size_t(sr.sent)][size_t(w)];
    } else {
      for (int w = 0; w < 16; ++w) dut->d_r_data[size_t(w)] = rng.u32();
    }
  }

  // ------------------------------------------------------------------ one cycle
  void random_host() {
    const int nq = int(qps.size());
    if (nq == 0) return;
    if (k.p_post && rng.percent(k.p_post)) {
      const int q = int(rng.below(uint64_t(nq)));
      const int n = int(rng.range(uint64_t(k.post_min), uint64_t(k.post_max)));
      const Qp& qp = qps[size_t(q)];
      if (!k.post_whole || int(qp.size()) - int(u16(qp.pi_w - qp.ci)) >= n) post(q, n, rng.percent(k.p_db_late));
    }
    if (k.p_complete && rng.percent(k.p_complete)) complete(int(rng.below(uint64_t(nq))), int(rng.range(1, 8)));
    if (k.p_reset && rng.below(10000) < k.p_reset) recreate(int(rng.below(uint64_t(nq))));
  }
  void cycle() {
    // the requester learns of doorbells some cycles late; quiesced QPs restart when idle
    for (int q = 0; q < int(qps.size()); ++q) {
      Qp& qp = qps[size_t(q)];
      while (!qp.seen.empty() && qp.seen.front().first <= now()) {
        qp.pi_req = qp.seen.front().second;
        qp.seen.pop_front();
      }
      if (qp.st == Qp::kQuiesce && qp.out.empty() && !(offering && offer.q == q)) start_restart(q);
    }
    random_host();
    bool init_now = false;
    drive_cmd(init_now);
    drive_doorbell(init_now);
    drive_request();
    drive_slave();
    dut.eval();

    // sample
    const bool accept = dut->u_ar_valid && dut->u_ar_ready;
    const bool ar_fire = dut->d_ar_valid && dut->d_ar_ready;
    if (dut->d_ar_valid && (!prev_ar_valid || prev_ar_fire)) ar_offer_start = now();
    if (prev_accept) {
      auto& r = reqs.rbegin()->second;   // the request taken last cycle (highest id)
      if (dut->st_hit == dut->st_miss)
        ADD_FAILURE() << "cycle " << now() << ": st_hit " << int(dut->st_hit) << " st_miss " << int(dut->st_miss)
                      << " after a request";
      r.hit = dut->st_hit;
    } else if (dut->st_hit || dut->st_miss) {
      ADD_FAILURE() << "cycle " << now() << ": st_hit/st_miss without a request";
    }
    n_hit += dut->st_hit;
    n_miss += dut->st_miss;
    if (prev_ar_fire) classify(dut->st_pf);
    else if (dut->st_pf) ADD_FAILURE() << "cycle " << now() << ": st_pf without a host read";
    n_pf += dut->st_pf;
    n_pf_drop += dut->st_pf_drop;
    n_evict += dut->st_evict;
    if (dut->u_r_valid) on_beat();
    if (accept) on_accept();
    if (ar_fire) on_ar();
    if (dut->d_r_valid) {
      SRead& sr = sreads.front();
      if (++sr.sent == sr.beats) {
        if (sr.cls >= 0) inflight[sr.cls]--;
        sreads.pop_front();
      }
    }
    prev_accept = accept;
    prev_ar_fire = ar_fire;
    prev_ar_valid = dut->d_ar_valid;
    dut.tick();
  }
  void run(uint64_t n) {
    for (uint64_t i = 0; i < n && !HasFailure(); ++i) cycle();
  }
  bool idle() const {
    return !offering && script.empty() && reqs.empty() && sreads.empty() && cmds.empty() && dbs.empty();
  }
  // No new requests or postings; run until everything in flight is done, plus settle cycles.
  void drain(uint64_t limit = 200000) {
    const Knobs saved = k;
    k.p_post = 0;
    k.p_req = 0;
    k.p_reset = 0;
    uint64_t i = 0;
    while (!idle() && i < limit && !HasFailure()) { cycle(); ++i; }
    EXPECT_TRUE(idle()) << "not idle after " << limit << " cycles: " << reqs.size() << " requests in flight, "
                        << expect.size() << " beats owed, " << sreads.size() << " host reads";
    run(40);
    k = saved;
  }
  void wait_requests() {
    uint64_t i = 0;
    while ((offering || !script.empty() || !reqs.empty()) && i < 100000 && !HasFailure()) { cycle(); ++i; }
    EXPECT_TRUE(reqs.empty() && script.empty() && !offering);
  }
  void quiet_knobs() {
    k.p_post = 0;
    k.p_req = 0;
    k.p_complete = 0;
    k.p_reset = 0;
    k.p_dready = 100;
  }
  void print_counts(const char* what) {
    std::printf("[wqe_cache] %s: %llu requests, %llu hits, %llu misses (%.1f%% hits), %llu host reads (%llu "
                "prefetch), %llu prefetches dropped, %llu evictions; most in flight: %d demand, %d prefetch\n",
                what, (unsigned long long)(n_hit + n_miss), (unsigned long long)n_hit, (unsigned long long)n_miss,
                n_hit + n_miss ? 100.0 * double(n_hit) / double(n_hit + n_miss) : 0.0, (unsigned long long)n_reads,
                (unsigned long long)n_pf, (unsigned long long)n_pf_drop, (unsigned long long)n_evict,
                max_inflight[0], max_inflight[1]);
  }
  void zero_counts() { n_hit = n_miss = n_pf = n_pf_drop = n_evict = n_reads = 0; hit_lat.clear(); done.clear(); }
};

// ------------------------------------------------------------------------------- tests

// Random posting, requests (rewinds), completions, QP recreation, host latency and ARREADY.
TEST_F(WqeCacheBench, RandomTraffic) {
  SRNIC_BENCH_TRACE();
  reset();
  setup_qps(std::min(kNumQps, kNumQps >= 64 ? 40 : 12));
  run(100);
  for (int phase = 0; phase < 8 && !HasFailure(); ++phase) {
    k.p_post = unsigned(rng.range(5, 40));
    k.post_max = int(rng.range(1, 16));
    k.p_req = unsigned(rng.range(20, 100));
    k.p_rewind = unsigned(rng.range(0, 20));
    k.p_complete = unsigned(rng.range(10, 60));
    k.lat_min = int(rng.range(2, 20));
    k.lat_max = k.lat_min + int(rng.range(0, 150));
    k.p_dready = unsigned(rng.range(20, 100));
    k.req_delay = int(rng.range(0, 20));
    k.p_reset = unsigned(rng.range(0, 30));
    k.max_reqs_qp = int(rng.range(1, 4));
    run(25000);
  }
  drain();
  print_counts("random traffic");
  EXPECT_GT(n_hit + n_miss, 2000u);
  EXPECT_GT(n_hit, 0u);
  EXPECT_GT(n_pf, 0u);
  EXPECT_GT(n_pf_drop, 0u);
  EXPECT_GT(n_evict, 0u);
  EXPECT_GT(max_inflight[1], 1);
  if (kMissSlots == 1) EXPECT_EQ(max_inflight[0], 1);
  else EXPECT_GT(max_inflight[0], 1);
}

// QPs recreated (RESET then INIT with init_idx, or INIT with init_idx alone; the same ring
// or a moved one) right after their WQEs were read and cached and with prefetches pending:
// the same absolute indices then hold new contents and must never be served old ones.
TEST_F(WqeCacheBench, QpRecreatedNeverSeesOldData) {
  SRNIC_BENCH_TRACE();
  reset();
  quiet_knobs();
  k.lat_min = 2;
  k.lat_max = 40;
  std::vector<int> qs;
  for (int i = 0; i < 3; ++i) qs.push_back(add_qp(i == 0 ? 3 : int(rng.range(3, 5))));
  run(10);
  int recreated = 0;
  uint64_t hits_after = 0;
  for (int it = 0; it < 150 && !HasFailure(); ++it) {
    // post and read everything, then read part of it again (hits from cached lines)
    for (int q : qs) post(q, int(rng.range(1, 16)));
    run(20);
    for (int q : qs) {
      Qp& qp = qps[size_t(q)];
      for (uint16_t i = qp.cur; i != qp.pi_db;) {
        const int n = fit(q, i, int(rng.range(1, 8)));
        request(q, i, n);
        i = u16(i + uint32_t(n));
      }
    }
    wait_requests();
    for (int q : qs) {
      const Qp& qp = qps[size_t(q)];
      if (qp.pi_db != qp.ci) request(q, qp.ci, fit(q, qp.ci, 8));
    }
    wait_requests();
    // new WQEs posted (their prefetch on its way), then one QP recreated at once
    const int victim = qs[size_t(rng.below(qs.size()))];
    for (int q : qs) if (rng.percent(70)) post(q, int(rng.range(1, 8)));
    run(rng.below(6));
    recreate(victim);
    run(rng.below(60) + 10);
    ++recreated;
    // complete what the other QPs read
    for (int q : qs) complete(q, 64);
    // the recreated QP: new contents at the indices it had before; read them
    post(victim, int(rng.range(1, 16)));
    run(rng.below(30));
    zero_counts();
    {
      Qp& qp = qps[size_t(victim)];
      for (uint16_t i = qp.cur; i != qp.pi_db;) {
        const int n = fit(victim, i, int(rng.range(1, 8)));
        request(victim, i, n);
        i = u16(i + uint32_t(n));
      }
    }
    wait_requests();
    hits_after += n_hit;
    for (int q : qs) complete(q, 64);
  }
  drain();
  std::printf("[wqe_cache] %d QP recreations; %llu hits among the reads right after them\n", recreated,
              (unsigned long long)hits_after);
  EXPECT_EQ(recreated, 150);
  EXPECT_GT(hits_after, 0u) << "prefetches after the restart never hit: the test lost its point";
}

// One QP (64-slot ring across a 4 KiB boundary) runs through more than 65,536 WQEs: indices
// wrap, lines of older wraps must never hit.
TEST_F(WqeCacheBench, IndexWrapOfOneQp) {
  SRNIC_BENCH_TRACE();
  reset();
  const int q = add_qp(6);
  add_qp(3);  // a small ring beside it, wrapping often
  run(10);
  k.p_post = 60;
  k.post_max = 16;
  k.p_req = 100;
  k.p_rewind = 3;
  k.p_complete = 80;
  k.lat_min = 2;
  k.lat_max = 40;
  k.p_dready = 90;
  k.req_delay = 4;
  uint64_t cycles = 0;
  while (qps[size_t(q)].posted_total < 65536 + 64 && cycles < 600000 && !HasFailure()) {
    run(1000);
    cycles += 1000;
  }
  // past the wrap: the cache is still used (hits), and still right
  zero_counts();
  run(20000);
  drain();
  print_counts("index wrap, after it");
  EXPECT_GE(qps[size_t(q)].posted_total, 65536u + 64u);
  EXPECT_GT(n_hit * 5, n_hit + n_miss) << "after the wrap, hits should be common";
}

// Few QPs, a working set that fits: rings of 16 slots (2 lines each, LINES / 8 QPs: a
// quarter of the lines, QPNs spread over the sets), doorbells of 4..8 WQEs whenever they fit, a requester paced at one
// WQE per 20 cycles (its link), round-robin, host latency 100..200 cycles. After warm-up more
// than 90% of requests hit (prefetch on doorbell and on use); a hit with nothing before it
// leaves its first beat within 3 cycles, then one beat per cycle.
TEST_F(WqeCacheBench, FewQpsMostlyHit) {
  SRNIC_BENCH_TRACE();
  reset();
  const int nq = std::max(2, kLines / 8);
  align_rings = true;  // (a ring across 4 KiB has one prefetch cut per wrap)
  constexpr int kSets = kLines / kWays;
  for (int i = 0; i < nq; ++i)  // QPNs spread over the sets (set = QPN + line number)
    add_qp(4, i * std::max(1, kSets / nq) + kSets * int(rng.below(uint64_t(kNumQps / kSets))));
  run(10);
  k.p_post = 10;
  k.post_min = 4;
  k.post_max = 8;
  k.post_whole = true;
  k.p_db_late = 0;
  k.p_req = 100;
  k.p_rewind = 0;
  k.p_complete = 50;
  k.lat_min = 100;
  k.lat_max = 200;
  k.p_dready = 100;
  k.req_delay = 10;
  k.wqe_gap = 20;
  k.round_robin = true;
  run(20000);
  zero_counts();
  run(100000);
  print_counts("few QPs, working set fits");
  const double rate = double(n_hit) / double(std::max<uint64_t>(1, n_hit + n_miss));
  EXPECT_GT(n_hit + n_miss, 1000u);
  EXPECT_GT(rate, 0.90);
  drain();
  // hit latency: a WQE read before and still cached, read again with nothing queued (its
  // prefetches long done)
  quiet_knobs();
  Qp& qp = qps[0];
  complete(0, 64);
  post(0, 8);
  run(k.lat_max + 50);
  const uint16_t i0 = qp.cur;
  const int n = fit(0, i0, 8);
  ASSERT_GT(n, 0);
  request(0, i0, n);
  wait_requests();
  run(k.lat_max + 50);
  zero_counts();
  request(0, i0, n);  // again (a rewind)
  wait_requests();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].hit, 1);
  const uint64_t lat = done[0].first_beat - done[0].accepted;
  std::printf("[wqe_cache] hit latency with nothing queued: %llu cycles (request taken to first beat); %d beats "
              "in %llu cycles\n", (unsigned long long)lat, n,
              (unsigned long long)(done[0].last_beat - done[0].first_beat + 1));
  EXPECT_LE(lat, 3u);
  EXPECT_EQ(done[0].last_beat - done[0].first_beat + 1, uint64_t(n)) << "one beat per cycle on hits";
  for (uint64_t l : hit_lat) EXPECT_LE(l, 3u);
}

// Many more QPs than lines, read round-robin: most requests miss, and with MISS_SLOTS 1 each
// request waits for the one before it (the host latency per request); with more slots the
// misses overlap.
TEST_F(WqeCacheBench, ManyQpsThrashAndBlock) {
  SRNIC_BENCH_TRACE();
  reset();
  const int nq = std::min(kNumQps, std::max(16, kLines * 4));
  for (int i = 0; i < nq; ++i) add_qp(4);
  run(10);
  constexpr int kLat = 100;
  k.p_post = 30;
  k.post_max = 8;
  k.p_db_late = 0;
  k.p_req = 100;
  k.p_rewind = 0;
  k.p_complete = 100;
  k.lat_min = kLat;
  k.lat_max = kLat;
  k.p_dready = 100;
  k.req_delay = 10;
  k.n_min = 8;
  k.round_robin = true;
  run(20000);
  zero_counts();
  const uint64_t t0 = now();
  run(40000);
  const uint64_t reqs_taken = n_hit + n_miss;
  print_counts("many QPs round-robin");
  const double miss = double(n_miss) / double(std::max<uint64_t>(1, reqs_taken));
  const double per_req = double(now() - t0) / double(std::max<uint64_t>(1, reqs_taken));
  std::printf("[wqe_cache] %d QPs, %d lines: %.1f%% misses, %.1f cycles per request (host latency %d, "
              "MISS_SLOTS %d)\n", nq, kLines, 100.0 * miss, per_req, kLat, kMissSlots);
  EXPECT_GT(miss, 0.75);
  EXPECT_GT(n_evict, n_miss / 2) << "misses replace lines";
  if (kMissSlots == 1)
    EXPECT_GT(per_req, 0.75 * kLat) << "a blocking cache takes about one miss per host latency";
  else
    EXPECT_LT(per_req, 0.75 * kLat / 2) << "misses should overlap with MISS_SLOTS " << kMissSlots;
  drain();
}

// A hit behind a miss: with MISS_SLOTS 1 it is not even taken until the miss's data is back.
TEST_F(WqeCacheBench, HitBehindMissWaits) {
  SRNIC_BENCH_TRACE();
  reset();
  quiet_knobs();
  constexpr int kLat = 200;
  k.lat_min = kLat;
  k.lat_max = kLat;
  align_rings = true;
  const int a = add_qp(4);
  const int b = add_qp(5);
  run(10);
  post(a, 8);
  post(b, 16);   // one doorbell: prefetch covers [0, 8) only
  run(kLat + 50);
  request(a, 0, 8);  // a hit (prefetched)
  wait_requests();
  run(50);
  zero_counts();
  request(b, 8, 8);  // a miss
  request(a, 0, 8);  // a hit, again
  wait_requests();
  ASSERT_EQ(done.size(), 2u);
  const Req& rb = done[0];
  const Req& ra = done[1];
  EXPECT_EQ(rb.hit, 0);
  EXPECT_EQ(ra.hit, 1);
  const uint64_t wait = ra.accepted - rb.accepted;
  std::printf("[wqe_cache] hit behind a miss (host latency %d, MISS_SLOTS %d): taken %llu cycles after the "
              "miss, first beat %llu cycles after the miss's last\n", kLat, kMissSlots, (unsigned long long)wait,
              (unsigned long long)(ra.first_beat - rb.last_beat));
  if (kMissSlots == 1)
    EXPECT_GE(wait, uint64_t(kLat)) << "a blocking cache takes nothing while its miss is in flight";
  else
    EXPECT_LE(wait, 3u);
  EXPECT_GT(ra.first_beat, rb.last_beat) << "data in request order";
}

// Prefetch on doorbell: the first read after a doorbell hits when the cache has room, also
// after the QPs were recreated (their producer indices restarted at 0).
TEST_F(WqeCacheBench, DoorbellPrefetchHits) {
  SRNIC_BENCH_TRACE();
  reset();
  quiet_knobs();
  k.lat_min = k.lat_max = 60;
  const int nq = std::min(4, kLines / 2);
  align_rings = true;
  keep_rings = true;
  for (int i = 0; i < nq; ++i) add_qp(4, i);  // QPNs 0..: one line each per set
  run(10);
  int hits = 0, reqs_n = 0;
  for (int round = 0; round < 8; ++round) {
    if (round == 4) {  // QPs recreated: producer indices restart at 0, prefetch as before
      for (int q = 0; q < nq; ++q) recreate(q);
      run(20);
    }
    zero_counts();
    for (int q = 0; q < nq; ++q) post(q, 8);
    run(200);
    EXPECT_EQ(n_pf, uint64_t(nq)) << "one prefetch read per doorbell (round " << round << ")";
    for (int q = 0; q < nq; ++q) {
      Qp& qp = qps[size_t(q)];
      request(q, qp.cur, 8);
      qp.cur = u16(qp.cur + 8);
    }
    wait_requests();
    uint64_t prev_last = 0;
    for (const Req& r : done) {
      ++reqs_n;
      hits += r.hit == 1;
      EXPECT_LE(r.first_beat - std::max(r.accepted, prev_last), 3u) << "the prefetched data was already there";
      prev_last = r.last_beat;
    }
    for (int q = 0; q < nq; ++q) complete(q, 8);
  }
  std::printf("[wqe_cache] first reads after a doorbell: %d of %d hit\n", hits, reqs_n);
  EXPECT_EQ(hits, reqs_n);
}

// Rings below LINE_WQES slots bypass the cache: every request misses, no prefetch.
TEST_F(WqeCacheBench, SmallRingsBypass) {
  SRNIC_BENCH_TRACE();
  reset();
  add_qp(1);
  add_qp(2);
  run(10);
  k.p_post = 30;
  k.post_max = 4;
  k.p_req = 100;
  k.p_rewind = 10;
  k.p_complete = 50;
  k.lat_min = 2;
  k.lat_max = 30;
  run(20000);
  drain();
  print_counts("rings of 2 and 4 slots");
  EXPECT_GT(n_miss, 1000u);
  EXPECT_EQ(n_hit, 0u);
  EXPECT_EQ(n_pf, 0u);
  EXPECT_EQ(n_evict, 0u) << "nothing is stored for small rings";
}

}  // namespace
}  // namespace srnic::verif::blocks
