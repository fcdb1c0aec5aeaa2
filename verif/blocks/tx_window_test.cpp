// srnic_tx_window bench: the per-QP acknowledged-PSN table (una) and wait-for-credit bit
// (wwait) behind the send path's in-flight cap, against a cycle-exact C++ model of the block
// (table, ack FIFO, the one-request-at-a-time read-modify-write of port B, the kick state),
// compared every cycle: init_ready, wait_ready, ack_ready, kick_valid, kick_qpn, st_wait, and
// port A's rd_una (a registered read of the RAM: the una of the QP read the cycle before,
// held while rd_en is low; a read in the cycle of a port-B write of the same entry returns
// the old value). The RAM starts random (it is not cleared after reset), so the model only
// knows entries the bench initialised; requests other than init go to initialised QPs.
//
// Directed tests pin each rule: port A latency and read-during-write; init sets una and
// clears the wait bit; ack moves una forward only (24-bit serial comparison, across the wrap,
// older and duplicate acks and the half-window edge change nothing); an advancing ack of a
// waiting QP kicks it once (2 cycles after the pop), a wait with the current una sets the
// bit (st_wait) without a kick, a wait with a stale una kicks at once and leaves the bit
// clear; a kick is held stable until taken and the block serves nothing meanwhile; init
// before wait before ack; the ack FIFO takes ACK_DEPTH acks and keeps their order; every
// interleaving of a read, an ack and a wait of one QP gives exactly one kick (or none for a
// duplicate ack, whose waiting QP the next advancing ack wakes); reset keeps the table and
// drops the FIFO and a pending kick.
//
// The random tests add a model of the send path per QP, checked on the RTL outputs alone:
// a QP reads una on port A, after a random delay (acks arriving meanwhile) asks to wait with
// that una (possibly stale), and stops until kicked (or restarted by init). A kick for a QP
// that is not stopped fails (no kick without a wait, never two for one wait); whenever the
// traffic drains, every stopped QP must still see the una it waited with on port A (else an
// acknowledgement was lost: a lost wakeup). Random kick_ready back-pressure throughout.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <sstream>
#include <string>
#include <vector>

#include "Vsrnic_tx_window.h"
#include "bench.hpp"

namespace srnic::verif::blocks {
namespace {

constexpr int kQps = BENCH_NUM_QPS;
#ifdef BENCH_ACK_DEPTH
constexpr int kAckDepth = BENCH_ACK_DEPTH;
#else
constexpr int kAckDepth = 8;  // the RTL default
#endif
constexpr uint32_t kPsnMask = 0xFFFFFF;
constexpr uint32_t kHalf = 0x800000;

uint32_t psn_add(uint32_t a, int64_t d) { return uint32_t(int64_t(a) + d) & kPsnMask; }
// srnic_pkg::psn_gt: a is after b, less than half the PSN space ahead
bool psn_gt(uint32_t a, uint32_t b) { return a != b && ((a - b) & kPsnMask) < kHalf; }

// Inputs of one cycle (the tests hold a request's fields until it is taken).
struct In {
  bool rst = false;
  bool rd_en = false;
  uint32_t rd_qpn = 0;
  bool init_valid = false;
  uint32_t init_qpn = 0, init_psn = 0;
  bool ack_valid = false;
  uint32_t ack_qpn = 0, ack_psn = 0;
  bool wait_valid = false;
  uint32_t wait_qpn = 0, wait_una = 0;
  bool kick_ready = true;
};

// Outputs of one cycle, after the inputs settled.
struct Out {
  bool init_ready = false, wait_ready = false, ack_ready = false, kick_valid = false, st_wait = false;
  uint32_t kick_qpn = 0, rd_una = 0;
};

enum class Kind : uint8_t { Init, Wait, Ack };
const char* kind_name(Kind k) { return k == Kind::Init ? "init" : k == Kind::Wait ? "wait" : "ack"; }

// One table entry; known once the bench initialised it (the RAM starts random).
struct Entry {
  uint32_t una = 0;
  bool wait = false;
  bool known = false;
};

// A port-B request whose read-modify-write finished at an edge.
struct Served {
  Kind kind = Kind::Init;
  uint32_t qpn = 0, psn = 0;
  Entry before, after;
  bool kick = false;
  uint64_t cycle = 0;
};

// Cycle-exact model of srnic_tx_window.
struct Model {
  enum class St : uint8_t { Idle, Rmw, Kick };
  struct Rmw {
    Entry e;
    bool write = false, kick = false;
  };

  std::vector<Entry> mem = std::vector<Entry>(size_t(kQps));
  std::deque<std::pair<uint32_t, uint32_t>> aq;  // the ack FIFO: {qpn, psn}
  St st = St::Idle;
  Kind kind = Kind::Init;
  uint32_t r_qpn = 0, r_psn = 0;
  Entry b;  // port B read data (the entry of the request in its RMW cycle)
  bool rd_known = false;
  uint32_t rd_una = 0;
  std::string error;  // bench misuse: a wait or ack served on an entry never initialised

  bool idle() const { return st == St::Idle; }
  bool init_ready() const { return idle(); }
  bool wait_ready(const In& in) const { return idle() && !in.init_valid; }
  bool ack_ready() const { return aq.size() < size_t(kAckDepth); }
  bool kick_valid() const { return st == St::Kick; }

  // what the request in its RMW cycle makes of the entry
  Rmw rmw() const {
    Rmw r;
    r.e = b;
    switch (kind) {
      case Kind::Init:
        r.e = {r_psn, false, true};
        r.write = true;
        break;
      case Kind::Wait:
        if (b.una == r_psn) {  // nothing acknowledged since the send path read una: wait
          r.e.wait = true;
          r.write = true;
        } else {  // una moved meanwhile: kick at once, the bit stays (or becomes) clear
          r.e.wait = false;
          r.write = b.wait;
          r.kick = true;
        }
        break;
      case Kind::Ack: {
        const uint32_t nu = psn_add(r_psn, 1);
        if (psn_gt(nu, b.una)) {
          r.e.una = nu;
          r.e.wait = false;
          r.write = true;
          r.kick = b.wait;
        }
        break;
      }
    }
    return r;
  }
  bool st_wait() const {
    if (st != St::Rmw || kind != Kind::Wait) return false;
    const Rmw r = rmw();
    return r.write && r.e.wait;
  }
  // the port-B write at the coming edge
  bool writing(uint32_t& q, Entry& e) const {
    if (st != St::Rmw) return false;
    const Rmw r = rmw();
    q = r_qpn;
    e = r.e;
    return r.write;
  }

  // The rising edge with inputs `in`; returns true (and s) when a request's RMW finished.
  bool edge(const In& in, uint64_t cycle, Served& s) {
    const bool served = st == St::Rmw;
    const Rmw r = rmw();
    if (served) {
      s = {kind, r_qpn, r_psn, b, r.write ? r.e : b, r.kick, cycle};
      if (kind != Kind::Init && !b.known)
        error = std::string(kind_name(kind)) + " of QP " + std::to_string(r_qpn) + " before its init";
    }
    const bool take = idle() && (in.init_valid || in.wait_valid || !aq.empty());
    const bool pop = idle() && !in.init_valid && !in.wait_valid && !aq.empty();
    const bool push = in.ack_valid && ack_ready();
    const auto head = aq.empty() ? std::pair<uint32_t, uint32_t>{0, 0} : aq.front();
    // port A: registered read; a port-B write at this edge is not seen
    if (in.rd_en) {
      rd_known = mem[in.rd_qpn].known;
      rd_una = mem[in.rd_qpn].una;
    }
    // port B: read when a request is taken, write in the RMW cycle
    if (take) b = mem[in.init_valid ? in.init_qpn : in.wait_valid ? in.wait_qpn : head.first];
    else if (served && r.write) mem[r_qpn] = r.e;
    if (in.rst) {  // the FIFO empties (a push this cycle is lost), a pending kick is dropped
      aq.clear();
      st = St::Idle;
      return served;
    }
    if (pop) aq.pop_front();
    if (push) aq.emplace_back(in.ack_qpn, in.ack_psn);
    switch (st) {
      case St::Idle:
        if (take) {
          st = St::Rmw;
          if (in.init_valid) {
            kind = Kind::Init;
            r_qpn = in.init_qpn;
            r_psn = in.init_psn;
          } else if (in.wait_valid) {
            kind = Kind::Wait;
            r_qpn = in.wait_qpn;
            r_psn = in.wait_una;
          } else {
            kind = Kind::Ack;
            r_qpn = head.first;
            r_psn = head.second;
          }
        }
        break;
      case St::Rmw:
        st = r.kick ? St::Kick : St::Idle;
        break;
      case St::Kick:
        if (in.kick_ready) st = St::Idle;
        break;
    }
    return served;
  }
};

// The send path's view of one QP (random tests).
struct Agent {
  enum S : uint8_t { Run, Reading, Have, Offered, Stopped };
  S s = Run;
  uint32_t u = 0;     // una as read on port A, the wait's una
  uint64_t at = 0;    // Have: offer the wait from this cycle; Stopped: accepted at
  bool rewait = false;  // a second wait offered while stopped (no new read until it is taken)
};
const char* agent_state(Agent::S s) {
  static const char* n[] = {"running", "reading una", "holding una", "offering a wait", "waiting"};
  return n[s];
}

// One random traffic mix.
struct Mix {
  unsigned p_init = 0, p_ack = 40, p_read = 40, p_rand_read = 20, p_kr = 100, p_give_up = 10, p_rewait = 0;
  uint64_t max_delay = 8;
};

class TxWindowBench : public ::testing::Test {
 public:
  TxWindowBench() : rng(test_seed()), dut(rng.next()), agents(size_t(kQps)), acked(size_t(kQps)) {}

  // ------------------------------------------------------------------ one cycle
  Out step() {
    drive();
    dut.eval();
    const Out o = sample();
    const uint64_t c = dut.cycle();
    if (synced) compare(o, c);
    if (!in.rst) {
      if (o.kick_valid && in.kick_ready) {
        kicks.push_back(o.kick_qpn);
        kick_cycles.push_back(c);
        if (agents_on) agent_kick(o.kick_qpn, c);
      }
      st_waits += o.st_wait;
      n_kick_stall += o.kick_valid && !in.kick_ready;
      n_ack_full += in.ack_valid && !o.ack_ready;
      if (m.idle()) {
        n_prio_iw += in.init_valid && in.wait_valid;
        n_prio_wa += in.wait_valid && !m.aq.empty();
        n_prio_ia += in.init_valid && !m.aq.empty();
      }
      uint32_t wq;
      Entry we;
      if (in.rd_en && m.writing(wq, we) && wq == in.rd_qpn && m.mem[wq].known && we.una != m.mem[wq].una)
        ++n_rd_collide;
    }
    Served s;
    const bool srv = m.edge(in, c, s);
    if (!m.error.empty()) {
      ADD_FAILURE() << "bench error at cycle " << c << ": " << m.error;
      m.error.clear();
    }
    if (srv && !in.rst) count(s);
    dut.tick();
    if (in.rst) synced = true;
    return o;
  }

  void drive() {
    dut->rst = in.rst;
    dut->rd_en = in.rd_en;
    dut->rd_qpn = in.rd_qpn;
    dut->init_valid = in.init_valid;
    dut->init_qpn = in.init_qpn;
    dut->init_psn = in.init_psn;
    dut->ack_valid = in.ack_valid;
    dut->ack_qpn = in.ack_qpn;
    dut->ack_psn = in.ack_psn;
    dut->wait_valid = in.wait_valid;
    dut->wait_qpn = in.wait_qpn;
    dut->wait_una = in.wait_una;
    dut->kick_ready = in.kick_ready;
  }

  Out sample() {
    Out o;
    o.init_ready = dut->init_ready;
    o.wait_ready = dut->wait_ready;
    o.ack_ready = dut->ack_ready;
    o.kick_valid = dut->kick_valid;
    o.kick_qpn = dut->kick_qpn;
    o.st_wait = dut->st_wait;
    o.rd_una = dut->rd_una;
    return o;
  }

  std::string state() const {
    std::ostringstream s;
    s << std::hex << "model state: " << (m.st == Model::St::Idle ? "idle" : m.st == Model::St::Rmw ? "rmw" : "kick")
      << ", request " << kind_name(m.kind) << " qp 0x" << m.r_qpn << " psn 0x" << m.r_psn << ", entry read una 0x"
      << m.b.una << " wait " << m.b.wait << ", ack FIFO [";
    for (const auto& a : m.aq) s << " qp 0x" << a.first << "/0x" << a.second;
    s << " ]; inputs:";
    if (in.rd_en) s << " rd qp 0x" << in.rd_qpn;
    if (in.init_valid) s << " init qp 0x" << in.init_qpn << " psn 0x" << in.init_psn;
    if (in.wait_valid) s << " wait qp 0x" << in.wait_qpn << " una 0x" << in.wait_una;
    if (in.ack_valid) s << " ack qp 0x" << in.ack_qpn << " psn 0x" << in.ack_psn;
    s << " kick_ready " << in.kick_ready;
    return s.str();
  }

  void compare(const Out& o, uint64_t c) {
    auto check = [&](const char* what, uint64_t got, uint64_t want) {
      if (got == want || ++mismatches > 10) return;
      ADD_FAILURE() << "cycle " << c << ": " << what << " = 0x" << std::hex << got << ", model 0x" << want
                    << std::dec << "; " << state() << (mismatches == 10 ? " (further mismatches not reported)" : "");
    };
    check("init_ready", o.init_ready, m.init_ready());
    check("wait_ready", o.wait_ready, m.wait_ready(in));
    check("ack_ready", o.ack_ready, m.ack_ready());
    check("kick_valid", o.kick_valid, m.kick_valid());
    if (m.kick_valid()) check("kick_qpn", o.kick_qpn, m.r_qpn);
    check("st_wait", o.st_wait, m.st_wait());
    if (m.rd_known) check("rd_una (port A, read the cycle before)", o.rd_una, m.rd_una);
  }

  void count(const Served& s) {
    switch (s.kind) {
      case Kind::Init:
        ++n_init;
        break;
      case Kind::Wait:
        if (s.after.wait) ++(s.before.wait ? n_wait_again : n_wait_set);
        if (s.kick) ++(s.before.wait ? n_wait_stale_set : n_wait_stale);
        break;
      case Kind::Ack: {
        const uint32_t nu = psn_add(s.psn, 1);
        if (s.after.una != s.before.una) {
          ++n_ack_adv;
          n_wrap += s.after.una < s.before.una;
          n_ack_kick += s.kick;
        } else if (nu == s.before.una) {
          ++n_ack_dup;
        } else {
          ++n_ack_old;
          n_ack_old_wait += s.before.wait;
        }
        break;
      }
    }
  }

  // ------------------------------------------------------------------ directed helpers
  // Reset for n cycles (inputs low); the first reset brings the model in step.
  void reset(int n = 2) {
    const bool kr = in.kick_ready;
    in = In{};
    in.kick_ready = kr;
    in.rst = true;
    for (int i = 0; i < n; ++i) step();
    in.rst = false;
  }

  bool quiet() const { return !in.init_valid && !in.ack_valid && !in.wait_valid && m.idle() && m.aq.empty(); }

  // Offers one request, held until taken; returns the cycle it was taken in.
  uint64_t offer(Kind k, uint32_t q, uint32_t psn) {
    bool& v = k == Kind::Init ? in.init_valid : k == Kind::Wait ? in.wait_valid : in.ack_valid;
    (k == Kind::Init ? in.init_qpn : k == Kind::Wait ? in.wait_qpn : in.ack_qpn) = q;
    (k == Kind::Init ? in.init_psn : k == Kind::Wait ? in.wait_una : in.ack_psn) = psn;
    v = true;
    for (int i = 0; i < 2000; ++i) {
      const uint64_t c = dut.cycle();
      const Out o = step();
      if (k == Kind::Init ? o.init_ready : k == Kind::Wait ? o.wait_ready : o.ack_ready) {
        v = false;
        return c;
      }
    }
    v = false;
    ADD_FAILURE() << kind_name(k) << " of QP " << q << " never taken";
    return 0;
  }
  // Runs until the block is idle with nothing queued (kick_ready as set).
  void settle() {
    for (int i = 0; i < 5000; ++i) {
      if (quiet()) return;
      step();
    }
    if (!quiet()) ADD_FAILURE() << "block never idle; " << state();
  }
  void init(uint32_t q, uint32_t psn) {
    acked[q] = psn_add(psn, -1);
    offer(Kind::Init, q, psn);
    settle();
  }
  void ack(uint32_t q, uint32_t psn) {
    offer(Kind::Ack, q, psn);
    settle();
  }
  void wait(uint32_t q, uint32_t u) {
    offer(Kind::Wait, q, u);
    settle();
  }
  // una of q through port A (2 cycles)
  uint32_t una(uint32_t q) {
    in.rd_en = true;
    in.rd_qpn = q;
    step();
    in.rd_en = false;
    return step().rd_una;
  }
  void clear_obs() {
    kicks.clear();
    kick_cycles.clear();
    st_waits = 0;
  }
  // n distinct random QPs
  std::vector<uint32_t> qps(size_t n) {
    std::vector<uint32_t> v;
    while (v.size() < n) {
      const uint32_t q = uint32_t(rng.below(kQps));
      if (std::find(v.begin(), v.end(), q) == v.end()) v.push_back(q);
    }
    return v;
  }
  uint32_t rand_psn() { return rng.percent(50) ? kPsnMask - uint32_t(rng.below(40)) : rng.u32() & kPsnMask; }

  // ------------------------------------------------------------------ random traffic
  void agent_kick(uint32_t q, uint64_t c) {
    if (q >= uint32_t(kQps)) {
      ADD_FAILURE() << "cycle " << c << ": kick of QP " << q << " out of range";
      return;
    }
    Agent& a = agents[q];
    if (a.s != Agent::Stopped) {
      ADD_FAILURE() << "cycle " << c << ": kick for QP " << q << ", which is not waiting for credit (it is "
                    << agent_state(a.s) << "): a kick without a wait, or a second kick for one wait";
      return;
    }
    ++n_agent_kicks;
    a.s = Agent::Run;
  }

  // ack PSNs of QP q: mostly forward from the newest acknowledged, duplicates, older
  // (reordered) ones, half a PSN space away (the serial comparison's edge), random
  uint32_t gen_ack(uint32_t q) {
    uint32_t& a = acked[q];
    const unsigned r = unsigned(rng.below(100));
    if (r < 50) return a = psn_add(a, int64_t(rng.range(1, 4)));
    if (r < 65) return a;
    if (r < 85) return psn_add(a, -int64_t(rng.range(1, 40)));
    uint32_t p;
    if (r < 91) p = psn_add(a, int64_t(kHalf) + int64_t(rng.range(0, 4)) - 2);
    else if (r < 94) p = rng.u32() & kPsnMask;
    else p = psn_add(a, int64_t(rng.range(5, 3000)));
    if (psn_gt(p, a)) a = p;
    return p;
  }

  void random_cycle(const Mix& x) {
    const uint64_t c = dut.cycle();
    in.rd_en = false;
    int agent_read = -1;
    if (!draining && rng.percent(x.p_read)) {
      const uint32_t q = hot[rng.below(hot.size())];
      if (agents[q].s == Agent::Run && !agents[q].rewait) {
        in.rd_en = true;
        in.rd_qpn = q;
        agents[q].s = Agent::Reading;
        agent_read = int(q);
      }
    }
    if (!in.rd_en && rng.percent(x.p_rand_read)) {  // any QP, initialised or not
      in.rd_en = true;
      in.rd_qpn = rng.percent(70) ? hot[rng.below(hot.size())] : uint32_t(rng.below(kQps));
    }
    if (!in.wait_valid) {
      const uint32_t q = hot[rng.below(hot.size())];
      Agent& a = agents[q];
      if (a.s == Agent::Have && (draining || a.at <= c)) {
        if (!draining && rng.percent(x.p_give_up)) {
          a.s = Agent::Run;  // the window was not full after all
        } else {
          in.wait_valid = true;
          in.wait_qpn = q;
          in.wait_una = a.u;
          a.s = Agent::Offered;
        }
      } else if (a.s == Agent::Stopped && !draining && rng.percent(x.p_rewait)) {
        // another turn of the stopped QP found the window full too: a second wait, with the
        // una it waits with or an older one
        in.wait_valid = true;
        in.wait_qpn = q;
        in.wait_una = rng.percent(50) ? a.u : psn_add(a.u, -int64_t(rng.range(1, 3)));
        a.rewait = true;
      }
    }
    if (!draining && !in.ack_valid && rng.percent(x.p_ack)) {
      const uint32_t q = hot[rng.below(hot.size())];
      in.ack_valid = true;
      in.ack_qpn = q;
      in.ack_psn = gen_ack(q);
    }
    if (!draining && !in.init_valid && rng.percent(x.p_init)) {
      const uint32_t q = hot[rng.below(hot.size())];
      in.init_valid = true;
      in.init_qpn = q;
      in.init_psn = rand_psn();
    }
    in.kick_ready = force_kick_ready || rng.percent(x.p_kr);
    const Out o = step();
    if (read_q >= 0) {  // the una the send path read last cycle
      Agent& a = agents[size_t(read_q)];
      a.u = o.rd_una;
      a.s = Agent::Have;
      a.at = c + rng.below(x.max_delay + 1);
    }
    read_q = agent_read;
    if (in.wait_valid && o.wait_ready) {
      Agent& a = agents[in.wait_qpn];
      a.s = Agent::Stopped;
      a.u = in.wait_una;
      a.at = c;
      a.rewait = false;
      // an advancing ack of the QP already queued: the wait goes first, the ack must wake it
      for (const auto& e : m.aq)
        if (e.first == in.wait_qpn && psn_gt(psn_add(e.second, 1), m.mem[in.wait_qpn].una)) {
          ++n_race_queued;
          break;
        }
      in.wait_valid = false;
    }
    if (in.init_valid && o.init_ready) {
      Agent& a = agents[in.init_qpn];
      if (a.s == Agent::Stopped) a.s = Agent::Run;  // restarted
      acked[in.init_qpn] = psn_add(in.init_psn, -1);
      in.init_valid = false;
    }
    if (in.ack_valid && o.ack_ready) in.ack_valid = false;
  }

  // Stops new traffic, lets every offered request and started wait through, then checks that
  // no waiting QP has credit (its una on port A differs from the una it waited with).
  void drain(const Mix& x) {
    draining = true;
    int i = 0;
    for (; i < 20000 && !HasFailure(); ++i) {
      force_kick_ready = i > 300;
      bool busy = read_q >= 0;
      for (uint32_t q : hot) busy |= agents[q].s != Agent::Run && agents[q].s != Agent::Stopped;
      if (!busy && quiet()) break;
      random_cycle(x);
    }
    draining = force_kick_ready = false;
    if (HasFailure()) return;
    ASSERT_TRUE(quiet()) << "traffic never drained; " << state();
    // a few idle cycles more: the checks below do not rely on the model's idea of idle
    in.rd_en = false;
    in.kick_ready = true;
    for (int k = 0; k < 2 * kAckDepth + 8; ++k) step();
    for (uint32_t q : hot) {
      if (agents[q].s != Agent::Stopped) continue;
      const uint32_t now = una(q);
      ++n_checked_waiting;
      EXPECT_EQ(now, agents[q].u) << "QP " << q << " waits for credit since cycle " << agents[q].at
                                  << " with una 0x" << std::hex << agents[q].u << ", but una is 0x" << now
                                  << std::dec << " and no kick came (lost wakeup)";
      if (HasFailure()) return;
    }
  }

  Mix random_mix() {
    Mix x;
    x.p_init = rng.percent(50) ? 0 : unsigned(rng.range(1, 4));
    x.p_ack = unsigned(rng.range(5, 90));
    x.p_read = unsigned(rng.range(10, 90));
    x.p_rand_read = unsigned(rng.range(0, 60));
    x.p_kr = rng.percent(40) ? 100 : unsigned(rng.range(5, 95));
    x.p_give_up = unsigned(rng.range(0, 30));
    x.max_delay = rng.percent(30) ? rng.range(10, 60) : rng.range(0, 6);
    x.p_rewait = rng.percent(50) ? 0 : unsigned(rng.range(1, 5));
    return x;
  }

  void start_agents() {
    agents_on = true;
    for (uint32_t q : hot) init(q, rand_psn());
    for (auto& a : agents) a = Agent{};
  }

  void report(const char* what) const {
    std::printf(
        "[bench] %s: %llu cycles; inits %llu; waits set %llu (again %llu), stale %llu (bit set %llu); acks "
        "advancing %llu (kick %llu, across the wrap %llu), duplicate %llu, older %llu (of waiting QPs %llu); waits "
        "ahead of a queued ack %llu; kicks taken %llu (agents %llu), held %llu cycles; ack FIFO full %llu; "
        "same-cycle init+wait %llu, wait+ack %llu, init+ack %llu; port A read of the entry written %llu; waiting "
        "QPs checked at drains %llu\n",
        what, (unsigned long long)dut.cycle(), (unsigned long long)n_init, (unsigned long long)n_wait_set,
        (unsigned long long)n_wait_again, (unsigned long long)n_wait_stale, (unsigned long long)n_wait_stale_set,
        (unsigned long long)n_ack_adv, (unsigned long long)n_ack_kick, (unsigned long long)n_wrap,
        (unsigned long long)n_ack_dup, (unsigned long long)n_ack_old, (unsigned long long)n_ack_old_wait,
        (unsigned long long)n_race_queued, (unsigned long long)kicks.size(), (unsigned long long)n_agent_kicks,
        (unsigned long long)n_kick_stall, (unsigned long long)n_ack_full, (unsigned long long)n_prio_iw,
        (unsigned long long)n_prio_wa, (unsigned long long)n_prio_ia, (unsigned long long)n_rd_collide,
        (unsigned long long)n_checked_waiting);
  }

  // every initialised entry through port A against the model
  void check_table() {
    for (int q = 0; q < kQps && !HasFailure(); ++q)
      if (m.mem[size_t(q)].known) una(uint32_t(q));  // compared by step()
  }

  Rng rng;
  Dut<Vsrnic_tx_window> dut;
  Model m;
  In in;
  bool synced = false;
  int mismatches = 0;  // RTL outputs that differed from the model (the first 10 reported)
  std::vector<uint32_t> kicks;
  std::vector<uint64_t> kick_cycles;
  uint64_t st_waits = 0;
  // random traffic
  std::vector<uint32_t> hot;
  std::vector<Agent> agents;
  std::vector<uint32_t> acked;  // per QP: the newest PSN the generator acknowledged
  bool agents_on = false, draining = false, force_kick_ready = false;
  int read_q = -1;
  // coverage
  uint64_t n_init = 0, n_wait_set = 0, n_wait_again = 0, n_wait_stale = 0, n_wait_stale_set = 0, n_ack_adv = 0,
           n_ack_kick = 0, n_wrap = 0, n_ack_dup = 0, n_ack_old = 0, n_ack_old_wait = 0, n_race_queued = 0,
           n_agent_kicks = 0, n_kick_stall = 0, n_ack_full = 0, n_prio_iw = 0, n_prio_wa = 0, n_prio_ia = 0,
           n_rd_collide = 0, n_checked_waiting = 0;
};

// Port A: una one cycle after rd_en, held while rd_en is low, back-to-back reads; a read in
// the cycle of a port-B write of the same entry returns the old una, the next read the new.
TEST_F(TxWindowBench, PortAReadsOneCycleLater) {
  SRNIC_BENCH_TRACE();
  reset();
  const auto q = qps(4);
  uint32_t p[4];
  for (int i = 0; i < 4; ++i) init(q[size_t(i)], p[i] = rng.u32() & kPsnMask);
  for (int i = 0; i < 4; ++i) {
    in.rd_en = true;
    in.rd_qpn = q[size_t(i)];
    const Out o = step();
    if (i > 0) {
      EXPECT_EQ(o.rd_una, p[i - 1]) << "back-to-back read " << i;
    }
  }
  in.rd_en = false;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(step().rd_una, p[3]) << "rd_una not held " << i << " cycles after the read";

  // init: taken in cycle 0, written at the end of cycle 1; reads in cycles 0..3
  const uint32_t x = psn_add(p[0], 1000);
  in.init_valid = true;
  in.init_qpn = q[0];
  in.init_psn = x;
  in.rd_en = true;
  in.rd_qpn = q[0];
  ASSERT_TRUE(step().init_ready);
  in.init_valid = false;
  EXPECT_EQ(step().rd_una, p[0]) << "read in the cycle init was taken";
  EXPECT_EQ(step().rd_una, p[0]) << "read in the cycle of the write: the old una";
  EXPECT_EQ(step().rd_una, x) << "read after the write";
  in.rd_en = false;
  step();
  // ack: pushed in cycle 0, popped in 1, written at the end of 2
  in.ack_valid = true;
  in.ack_qpn = q[0];
  in.ack_psn = psn_add(x, 9);
  in.rd_en = true;
  ASSERT_TRUE(step().ack_ready);
  in.ack_valid = false;
  EXPECT_EQ(step().rd_una, x);
  EXPECT_EQ(step().rd_una, x);
  EXPECT_EQ(step().rd_una, x) << "read in the cycle of the ack's write: the old una";
  EXPECT_EQ(step().rd_una, psn_add(x, 10)) << "read after the ack's write";
  // another QP's write in the cycle of the read does not disturb it
  in.rd_qpn = q[1];
  in.init_valid = true;
  in.init_qpn = q[2];
  in.init_psn = 77;
  ASSERT_TRUE(step().init_ready);
  in.init_valid = false;
  EXPECT_EQ(step().rd_una, p[1]);
  EXPECT_EQ(step().rd_una, p[1]);
  in.rd_qpn = q[2];
  step();
  EXPECT_EQ(step().rd_una, 77u);
  in.rd_en = false;
  EXPECT_TRUE(kicks.empty());
  EXPECT_EQ(st_waits, 0u);
}

// init: una = psn and the wait bit clear (a waiting QP restarted is not kicked by the next
// ack); every psn value, also over a QP that waits.
TEST_F(TxWindowBench, InitSetsUnaAndClearsWait) {
  SRNIC_BENCH_TRACE();
  reset();
  const auto q = qps(2);
  for (uint32_t p : {0u, 1u, kPsnMask, kHalf, kHalf - 1, rng.u32() & kPsnMask}) {
    init(q[0], p);
    EXPECT_EQ(una(q[0]), p);
  }
  const uint32_t p = rng.u32() & kPsnMask;
  init(q[0], p);
  init(q[1], psn_add(p, 5));
  clear_obs();
  wait(q[0], p);
  EXPECT_EQ(st_waits, 1u) << "a wait with the current una sets the bit";
  EXPECT_TRUE(kicks.empty());
  // restart at another PSN: the bit clears, the next advancing ack kicks nothing
  const uint32_t p2 = psn_add(p, 300);
  init(q[0], p2);
  EXPECT_EQ(una(q[0]), p2);
  EXPECT_EQ(una(q[1]), psn_add(p, 5)) << "init of one QP changed another";
  ack(q[0], psn_add(p2, 3));
  EXPECT_EQ(una(q[0]), psn_add(p2, 4));
  EXPECT_TRUE(kicks.empty()) << "kick after init cleared the wait bit";
  // restart at the same PSN it waits at
  wait(q[0], psn_add(p2, 4));
  EXPECT_EQ(st_waits, 2u);
  init(q[0], psn_add(p2, 4));
  ack(q[0], psn_add(p2, 4));
  EXPECT_EQ(una(q[0]), psn_add(p2, 5));
  EXPECT_TRUE(kicks.empty()) << "kick after init (same PSN) cleared the wait bit";
  EXPECT_EQ(st_waits, 2u) << "st_wait on init or ack";
}

// ack: una = psn + 1 when that is after una (serial, 24 bits), else nothing; across the wrap,
// duplicates, older acks across the wrap, the half-window edge.
TEST_F(TxWindowBench, AckMovesForwardOnlyAcrossWrap) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = uint32_t(rng.below(kQps)), other = (q + 1) % uint32_t(kQps);
  init(other, 0x123456);
  init(q, 0xFFFFFA);
  struct Step {
    uint32_t psn, una;
  };
  const Step steps[] = {
      {0xFFFFFB, 0xFFFFFC},  // forward
      {0xFFFFFB, 0xFFFFFC},  // duplicate
      {0xFFFFF0, 0xFFFFFC},  // older
      {0xFFFFFE, 0xFFFFFF},  // forward to the last PSN
      {0xFFFFFF, 0x000000},  // forward, una wraps to 0
      {0xFFFFFE, 0x000000},  // older, across the wrap
      {0xFFFFFF, 0x000000},  // duplicate across the wrap
      {0x000004, 0x000005},  // forward
      {0xFFFFF0, 0x000005},  // older across the wrap
      {0x000003, 0x000005},  // older
      {0x800003, 0x800004},  // ack_una - una = 2^23 - 1: forward
      {0x000003, 0x800004},  // ack_una - una = 2^23: not after (half the space away)
      {0x000004, 0x800004},  // 2^23 + 1: older
      {0x000002, 0x000003},  // 2^23 - 1: forward, across the wrap
      {0x800002, 0x000003},  // 2^23: not after
      {0x800001, 0x800002},  // 2^23 - 1: forward
  };
  for (const Step& s : steps) {
    ack(q, s.psn);
    EXPECT_EQ(una(q), s.una) << std::hex << "after ack 0x" << s.psn;
  }
  EXPECT_EQ(una(other), 0x123456u) << "acks of one QP changed another";
  EXPECT_TRUE(kicks.empty()) << "kick without a wait";
  EXPECT_EQ(n_ack_adv, 7u);
  EXPECT_EQ(n_wrap, 2u);
  EXPECT_EQ(st_waits, 0u);
}

// An advancing ack of a waiting QP kicks it exactly once, two cycles after the ack is
// popped; duplicate and older acks leave it waiting; later acks do not kick again.
TEST_F(TxWindowBench, AckWakesWaitingQpOnce) {
  SRNIC_BENCH_TRACE();
  reset();
  const auto q = qps(2);
  const uint32_t p = rand_psn();
  init(q[0], p);
  init(q[1], p);
  clear_obs();
  wait(q[0], p);
  EXPECT_EQ(st_waits, 1u);
  EXPECT_TRUE(kicks.empty()) << "a wait with the current una kicked";
  ack(q[0], psn_add(p, -1));  // duplicate
  ack(q[0], psn_add(p, -7));  // older
  ack(q[0], psn_add(p, int64_t(kHalf)));  // half a space away: older
  ack(q[1], psn_add(p, 3));   // another QP's
  EXPECT_TRUE(kicks.empty()) << "kicked by an ack that does not move una, or by another QP's";
  EXPECT_EQ(una(q[0]), p);
  // the ack that moves una: taken in cycle c, popped in c + 1, RMW c + 2, kick_valid c + 3
  const uint64_t c = offer(Kind::Ack, q[0], psn_add(p, 2));
  settle();
  ASSERT_EQ(kicks.size(), 1u);
  EXPECT_EQ(kicks[0], q[0]);
  EXPECT_EQ(kick_cycles[0], c + 3) << "kick latency";
  EXPECT_EQ(una(q[0]), psn_add(p, 3));
  ack(q[0], psn_add(p, 5));
  ack(q[0], psn_add(p, 9));
  EXPECT_EQ(kicks.size(), 1u) << "second kick for one wait";
  EXPECT_EQ(una(q[0]), psn_add(p, 10));
  EXPECT_EQ(st_waits, 1u);
  // the same across the wrap
  init(q[0], 0xFFFFFE);
  wait(q[0], 0xFFFFFE);
  ack(q[0], 0xFFFFFD);
  EXPECT_EQ(kicks.size(), 1u);
  ack(q[0], 0x000001);
  ASSERT_EQ(kicks.size(), 2u) << "an ack across the wrap did not wake the waiting QP";
  EXPECT_EQ(kicks[1], q[0]);
  EXPECT_EQ(una(q[0]), 2u);
}

// wait with the current una: the bit is set (st_wait, one cycle, no kick); with another una
// (an ack came between the read and the wait): a kick two cycles after the wait was taken,
// no st_wait, the bit clear (also when it was set by an earlier wait).
TEST_F(TxWindowBench, WaitSetsBitOrKicksAtOnce) {
  SRNIC_BENCH_TRACE();
  reset();
  const uint32_t q = uint32_t(rng.below(kQps));
  const uint32_t p = rand_psn();
  init(q, p);
  clear_obs();
  // current una
  uint64_t c = offer(Kind::Wait, q, p);
  EXPECT_TRUE(step().st_wait) << "no st_wait in the cycle after the take (the read-modify-write)";
  EXPECT_EQ(dut.cycle(), c + 2);
  settle();
  EXPECT_EQ(st_waits, 1u);
  EXPECT_TRUE(kicks.empty());
  // the same again while waiting: set again, no kick
  wait(q, p);
  EXPECT_EQ(st_waits, 2u);
  EXPECT_TRUE(kicks.empty());
  // a stale una while the bit is set (another turn's late request): kick at once, bit clear
  c = offer(Kind::Wait, q, psn_add(p, -3));
  settle();
  ASSERT_EQ(kicks.size(), 1u);
  EXPECT_EQ(kicks[0], q);
  EXPECT_EQ(kick_cycles[0], c + 2) << "stale wait: kick latency";
  EXPECT_EQ(st_waits, 2u);
  ack(q, p);
  EXPECT_EQ(kicks.size(), 1u) << "kick by an ack after a stale wait cleared the bit";
  EXPECT_EQ(una(q), psn_add(p, 1));
  // stale una with the bit clear: kick, no bit
  wait(q, p);
  ASSERT_EQ(kicks.size(), 2u);
  EXPECT_EQ(st_waits, 2u);
  ack(q, psn_add(p, 4));
  EXPECT_EQ(kicks.size(), 2u) << "kick by an ack after a stale wait";
  EXPECT_EQ(una(q), psn_add(p, 5));
  // a una "ahead" of the table is just as stale
  wait(q, psn_add(p, 9));
  EXPECT_EQ(kicks.size(), 3u);
  EXPECT_EQ(st_waits, 2u);
  EXPECT_EQ(una(q), psn_add(p, 5)) << "a wait changed una";
}

// kick_ready low: kick_valid held with a stable QPN, no request served (init_ready and
// wait_ready low), acks queue until the FIFO is full; all served in order once it is taken.
TEST_F(TxWindowBench, KickHeldUnderBackPressure) {
  SRNIC_BENCH_TRACE();
  reset();
  const auto q = qps(3);
  const uint32_t p = rand_psn();
  for (uint32_t x : q) init(x, p);
  wait(q[1], p);  // q1 waits
  clear_obs();
  in.kick_ready = false;
  offer(Kind::Wait, q[0], psn_add(p, 1));  // stale: kick
  step();
  Out o = step();
  ASSERT_TRUE(o.kick_valid);
  ASSERT_EQ(o.kick_qpn, q[0]);
  // offers on every port; acks fill the FIFO
  in.init_valid = true;
  in.init_qpn = q[2];
  in.init_psn = psn_add(p, 50);
  in.wait_valid = true;
  in.wait_qpn = q[2];
  in.wait_una = p;
  int acks_in = 0;
  for (int i = 0; i < 40; ++i) {
    in.ack_valid = true;
    in.ack_qpn = q[1];
    in.ack_psn = psn_add(p, acks_in);
    o = step();
    EXPECT_TRUE(o.kick_valid) << "kick withdrawn before it was taken";
    EXPECT_EQ(o.kick_qpn, q[0]) << "kick_qpn changed while held";
    EXPECT_FALSE(o.init_ready);
    EXPECT_FALSE(o.wait_ready);
    EXPECT_EQ(o.ack_ready, acks_in < kAckDepth) << "ack_ready with " << acks_in << " acks queued";
    acks_in += o.ack_ready;
  }
  EXPECT_EQ(acks_in, kAckDepth);
  EXPECT_EQ(una(q[1]), p) << "an ack was served while the kick was held";
  in.ack_valid = false;
  in.kick_ready = true;
  o = step();
  EXPECT_TRUE(o.kick_valid);
  // then init (q2 restarts at p + 50), the wait (with p: stale, kicked at once), the acks
  o = step();
  EXPECT_TRUE(o.init_ready);
  EXPECT_FALSE(o.wait_ready) << "wait taken beside init";
  in.init_valid = false;
  for (int i = 0; i < 10 && in.wait_valid; ++i)
    if (step().wait_ready) in.wait_valid = false;
  EXPECT_FALSE(in.wait_valid) << "wait not taken";
  settle();
  ASSERT_EQ(kicks.size(), 3u);
  EXPECT_EQ(kicks[0], q[0]);
  EXPECT_EQ(kicks[1], q[2]) << "the wait was not served after the init, before the acks";
  EXPECT_EQ(kicks[2], q[1]) << "the first queued ack woke q1";
  EXPECT_EQ(una(q[1]), psn_add(p, kAckDepth));
  EXPECT_EQ(una(q[2]), psn_add(p, 50));
}

// Requests offered together: init first, then wait, then ack. All three for one QP: init
// (una = P), wait with P sets the bit (st_wait), the ack moves una and kicks. Any other order
// gives another outcome (a kick without st_wait).
TEST_F(TxWindowBench, PrioritiesInitWaitAck) {
  SRNIC_BENCH_TRACE();
  reset();
  const auto q = qps(2);
  const uint32_t p0 = rand_psn(), p = psn_add(p0, 100);
  init(q[0], p0);
  init(q[1], p0);
  clear_obs();
  // hold the port: a stale wait of q1, its kick not taken
  in.kick_ready = false;
  offer(Kind::Wait, q[1], psn_add(p0, 1));
  in.ack_valid = true;
  in.ack_qpn = q[0];
  in.ack_psn = psn_add(p, 4);
  ASSERT_TRUE(step().ack_ready);
  in.ack_valid = false;
  in.init_valid = true;
  in.init_qpn = q[0];
  in.init_psn = p;
  in.wait_valid = true;
  in.wait_qpn = q[0];
  in.wait_una = p;
  for (int i = 0; i < 5; ++i) {
    const Out o = step();
    EXPECT_FALSE(o.init_ready || o.wait_ready) << "request taken while the kick is held";
  }
  in.kick_ready = true;
  // the kick is taken; then init (wait_ready low beside it), then the wait
  std::string order;
  for (int i = 0; i < 30 && (in.init_valid || in.wait_valid); ++i) {
    const Out o = step();
    if (in.init_valid && o.init_ready) {
      EXPECT_FALSE(o.wait_ready) << "wait_ready beside init";
      in.init_valid = false;
      order += 'i';
    } else if (in.wait_valid && o.wait_ready) {
      in.wait_valid = false;
      order += 'w';
    }
  }
  settle();
  EXPECT_EQ(order, "iw");
  EXPECT_EQ(st_waits, 1u) << "the wait did not see the init's una (served before init or after the ack)";
  ASSERT_EQ(kicks.size(), 2u);
  EXPECT_EQ(kicks[0], q[1]);
  EXPECT_EQ(kicks[1], q[0]) << "the ack did not wake the QP that waited";
  EXPECT_EQ(una(q[0]), psn_add(p, 5));
  // wait before ack: an ack queued one cycle earlier waits behind a wait of its own QP
  clear_obs();
  in.ack_valid = true;
  in.ack_qpn = q[0];
  in.ack_psn = psn_add(p, 20);
  ASSERT_TRUE(step().ack_ready);
  in.ack_valid = false;
  in.wait_valid = true;
  in.wait_qpn = q[0];
  in.wait_una = psn_add(p, 5);  // current: the bit is set, then the ack wakes it
  ASSERT_TRUE(step().wait_ready) << "wait not taken ahead of the queued ack";
  in.wait_valid = false;
  settle();
  EXPECT_EQ(st_waits, 1u);
  ASSERT_EQ(kicks.size(), 1u);
  EXPECT_EQ(kicks[0], q[0]);
  EXPECT_EQ(una(q[0]), psn_add(p, 21));
}

// The ack FIFO holds ACK_DEPTH acks (ack_ready low when full, high again after a pop) and
// serves them in order: each wakes its own waiting QP, the kicks come in ack order.
TEST_F(TxWindowBench, AckFifoFullAndOrder) {
  SRNIC_BENCH_TRACE();
  reset();
  const auto q = qps(size_t(std::min(kQps, kAckDepth + 2)));
  const size_t n = q.size() - 1;  // q[n] holds the port with its kick
  const uint32_t p = rand_psn();
  for (uint32_t x : q) init(x, p);
  for (size_t i = 0; i < n; ++i) wait(q[i], p);
  clear_obs();
  in.kick_ready = false;
  offer(Kind::Wait, q[n], psn_add(p, 3));
  std::vector<uint32_t> sent;
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = i;
  for (size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
  size_t k = 0;
  int full_cycles = 0;
  for (int i = 0; i < 3 * kAckDepth + 10; ++i) {
    in.ack_valid = k < n;
    if (k < n) {
      in.ack_qpn = q[perm[k]];
      in.ack_psn = psn_add(p, int64_t(k));  // each advances its QP
    }
    const Out o = step();
    EXPECT_EQ(o.ack_ready, sent.size() < size_t(kAckDepth)) << sent.size() << " acks queued";
    if (in.ack_valid && o.ack_ready) sent.push_back(q[perm[k++]]);
    full_cycles += in.ack_valid && !o.ack_ready;
  }
  EXPECT_EQ(sent.size(), std::min(n, size_t(kAckDepth))) << "acks taken while the port is held";
  if (n > size_t(kAckDepth)) {
    EXPECT_GT(full_cycles, 0);
  }
  in.kick_ready = true;
  for (int i = 0; i < 100 && k < n; ++i) {  // the rest go in as the FIFO drains
    in.ack_valid = true;
    in.ack_qpn = q[perm[k]];
    in.ack_psn = psn_add(p, int64_t(k));
    if (step().ack_ready) sent.push_back(q[perm[k++]]);
  }
  in.ack_valid = false;
  settle();
  ASSERT_EQ(kicks.size(), n + 1);
  EXPECT_EQ(kicks[0], q[n]);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(kicks[i + 1], sent[i]) << "kick " << i + 1 << ": acks reordered or lost";
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(una(sent[i]), psn_add(p, int64_t(i) + 1));
}

// Every interleaving of a read of una (cycle 0), an ack of the QP offered in cycle a and a
// wait with the read una offered in cycle w >= 1: an advancing ack gives exactly one kick of
// the QP, whichever was served first, and leaves the bit clear; a duplicate ack none, the
// QP then waits and the next advancing ack kicks it once.
TEST_F(TxWindowBench, LostWakeupRaceSweep) {
  SRNIC_BENCH_TRACE();
  reset();
  const auto qs = qps(2);
  const uint32_t q = qs[0], bystander = qs[1];
  init(bystander, 5);
  int wait_first = 0, ack_first = 0;
  for (int adv = 0; adv < 2; ++adv)
    for (int a = 0; a <= 8; ++a)
      for (int w = 1; w <= 8 && !HasFailure(); ++w) {
        const uint32_t p = rand_psn();
        init(q, p);
        clear_obs();
        const uint32_t apsn = adv ? psn_add(p, int64_t(rng.range(0, 5))) : psn_add(p, -1);
        uint32_t u = 0;
        bool ack_done = false, wait_done = false;
        uint64_t wait_cycle = 0;
        for (int t = 0; t < 40 && !(ack_done && wait_done); ++t) {
          if (t == 1) u = dut->rd_una;  // a register: the send path may use it at once
          in.rd_en = t == 0;
          in.rd_qpn = q;
          if (t == a) {
            in.ack_valid = true;
            in.ack_qpn = q;
            in.ack_psn = apsn;
          }
          if (t == w) {
            in.wait_valid = true;
            in.wait_qpn = q;
            in.wait_una = u;
          }
          const uint64_t c = dut.cycle();
          const Out o = step();
          if (t == 1) {
            EXPECT_EQ(o.rd_una, u);
          }
          if (in.ack_valid && o.ack_ready) {
            in.ack_valid = false;
            ack_done = true;
          }
          if (in.wait_valid && o.wait_ready) {
            in.wait_valid = false;
            wait_done = true;
            wait_cycle = c;
          }
        }
        in.rd_en = false;
        settle();
        ASSERT_TRUE(ack_done && wait_done);
        EXPECT_EQ(u, p) << "read in cycle 0 saw the ack";
        if (adv) {
          ASSERT_EQ(kicks.size(), 1u) << "ack in cycle " << a << ", wait in cycle " << w << ": " << kicks.size()
                                      << " kicks (one expected)";
          EXPECT_EQ(kicks[0], q);
          (st_waits ? wait_first : ack_first) += 1;
          EXPECT_LE(st_waits, 1u);
          ack(q, psn_add(apsn, 1));  // the bit is clear: no second kick
          EXPECT_EQ(kicks.size(), 1u) << "ack in cycle " << a << ", wait in cycle " << w
                                      << ": a later ack kicked again";
        } else {
          EXPECT_TRUE(kicks.empty()) << "ack in cycle " << a << ", wait in cycle " << w << ": duplicate ack kicked";
          EXPECT_EQ(st_waits, 1u);
          ack(q, p);
          ASSERT_EQ(kicks.size(), 1u) << "ack in cycle " << a << ", wait (cycle " << wait_cycle
                                      << ") in cycle " << w << ": the waiting QP not woken";
          EXPECT_EQ(kicks[0], q);
        }
      }
  // both sides of the race were exercised: the wait set the bit and the ack woke it, and the
  // ack came first and the wait was kicked at once
  EXPECT_GT(wait_first, 5);
  EXPECT_GT(ack_first, 5);
  EXPECT_EQ(una(bystander), 5u);
}

// Reset in the middle of traffic: the FIFO is emptied and a pending kick dropped, the table
// keeps its contents (the model knows which write finished before).
TEST_F(TxWindowBench, ResetKeepsTable) {
  SRNIC_BENCH_TRACE();
  reset();
  hot = qps(size_t(std::min(kQps, 6)));
  start_agents();
  Mix x;
  x.p_ack = 80;
  x.p_kr = 30;
  for (int r = 0; r < 20 && !HasFailure(); ++r) {
    for (int i = 0; i < int(rng.range(1, 400)) && !HasFailure(); ++i) random_cycle(x);
    const size_t before = kicks.size();
    reset(int(rng.range(1, 3)));
    read_q = -1;
    for (auto& a : agents) a = Agent{};  // the send path restarts as well
    Out o = step();
    EXPECT_FALSE(o.kick_valid) << "kick after reset";
    EXPECT_TRUE(o.ack_ready) << "ack FIFO not empty after reset";
    for (int i = 0; i < 5; ++i) step();
    EXPECT_EQ(kicks.size(), before) << "something served after reset";
    check_table();
    for (uint32_t q : hot) init(q, rand_psn());  // the bits kept: restart every QP
  }
  drain(x);
}

// Long random traffic on a few QPs: collisions of reads, acks, waits and inits of one QP.
TEST_F(TxWindowBench, RandomFewQps) {
  SRNIC_BENCH_TRACE();
  reset();
  hot = qps(size_t(rng.range(2, 4)));
  start_agents();
  while (dut.cycle() < 200000 && !HasFailure()) {
    const Mix x = random_mix();
    const int n = int(rng.range(300, 3000));
    for (int i = 0; i < n && !HasFailure(); ++i) random_cycle(x);
    if (!HasFailure()) drain(x);
  }
  check_table();
  report("few QPs");
  EXPECT_GT(n_wait_set, 2000u);
  EXPECT_GT(n_wait_stale, 2000u);
  EXPECT_GT(n_wait_again, 100u);
  EXPECT_GT(n_wait_stale_set, 100u);
  EXPECT_GT(n_ack_kick, 2000u);
  EXPECT_GT(n_ack_dup, 2000u);
  EXPECT_GT(n_ack_old, 2000u);
  EXPECT_GT(n_ack_old_wait, 200u);
  EXPECT_GT(n_wrap, 20u);
  EXPECT_GT(n_race_queued, 200u);
  EXPECT_GT(n_kick_stall, 2000u);
  EXPECT_GT(n_ack_full, 2000u);
  EXPECT_GT(n_prio_iw, 10u);
  EXPECT_GT(n_prio_wa, 2000u);
  EXPECT_GT(n_prio_ia, 10u);
  EXPECT_GT(n_rd_collide, 1000u);
  EXPECT_GT(n_checked_waiting, 15u);
  EXPECT_EQ(n_agent_kicks, kicks.size());
}

// Random traffic over many QPs (the full table at the default size: random QPNs), the hot
// set changing between phases.
TEST_F(TxWindowBench, RandomManyQps) {
  SRNIC_BENCH_TRACE();
  reset();
  hot = qps(size_t(std::min(kQps, 48)));
  start_agents();
  for (int phase = 0; phase < 12 && !HasFailure(); ++phase) {
    if (phase > 0 && rng.percent(60)) {  // some QPs leave, new ones (initialised) join
      for (int i = 0; i < 16; ++i) {
        const size_t k = rng.below(hot.size());
        const uint32_t nq = uint32_t(rng.below(kQps));
        if (std::find(hot.begin(), hot.end(), nq) != hot.end() || agents[hot[k]].s != Agent::Run) continue;
        hot[k] = nq;
        if (!m.mem[nq].known || rng.percent(50)) init(nq, rand_psn());
        agents[nq] = Agent{};
      }
    }
    const Mix x = random_mix();
    for (int i = 0; i < 5000 && !HasFailure(); ++i) random_cycle(x);
    if (!HasFailure()) drain(x);
  }
  check_table();
  report("many QPs");
  EXPECT_GT(n_wait_set, 500u);
  EXPECT_GT(n_wait_stale, 100u);
  EXPECT_GT(n_ack_kick, 500u);
  EXPECT_EQ(n_agent_kicks, kicks.size());
}

}  // namespace
}  // namespace srnic::verif::blocks
