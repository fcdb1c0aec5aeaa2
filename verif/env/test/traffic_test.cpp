// Traffic plans: determinism, the memory-layout invariants the live scoreboard relies on (one
// writer per destination byte, gaps, sources never written), receive accounting, corner sizes,
// 4 KB crossings, and that the reference model accepts every plan and predicts the bad WRs.
#include "srnic/env/traffic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

namespace srnic::verif::env {
namespace {

struct Range {
  uint64_t lo, hi;
};

bool consumes(WrOpcode op) { return op == WrOpcode::Send || op == WrOpcode::SendImm || op == WrOpcode::WriteImm; }

// Every destination range (writable by some NIC) of host h.
std::vector<Range> dst_ranges(const TrafficPlan& p, uint32_t h) {
  std::vector<Range> r;
  for (const QpPlan& q : p.qps) {
    for (const WrPlan& w : q.side[h].send)
      if (w.op == WrOpcode::Read && w.bad == BadKind::None) r.push_back({w.local_off, w.local_off + w.len});
    for (const WrPlan& w : q.side[1 - h].send)
      if ((w.op == WrOpcode::Write || w.op == WrOpcode::WriteImm) && w.bad == BadKind::None)
        r.push_back({w.remote_off, w.remote_off + w.len});
    for (const RecvPlan& rv : q.side[h].recv) r.push_back({rv.off, rv.off + rv.len});
  }
  return r;
}

TrafficPlan draw(const Knobs& k, uint64_t seed) {
  uvm::Rng r(seed);
  return make_traffic_plan(k, r);
}

TEST(Traffic, SameSeedSamePlan) {
  Knobs k;
  const TrafficPlan a = draw(k, 42), b = draw(k, 42), c = draw(k, 43);
  EXPECT_EQ(a.summary(), b.summary());
  ASSERT_EQ(a.qps.size(), b.qps.size());
  for (size_t q = 0; q < a.qps.size(); ++q)
    for (uint32_t h = 0; h < 2; ++h) {
      ASSERT_EQ(a.qps[q].side[h].send.size(), b.qps[q].side[h].send.size());
      for (size_t i = 0; i < a.qps[q].side[h].send.size(); ++i) {
        EXPECT_EQ(a.qps[q].side[h].send[i].len, b.qps[q].side[h].send[i].len);
        EXPECT_EQ(a.qps[q].side[h].send[i].remote_off, b.qps[q].side[h].send[i].remote_off);
      }
    }
  EXPECT_NE(a.summary() + std::to_string(a.qps[0].side[0].send[0].local_off),
            c.summary() + std::to_string(c.qps[0].side[0].send[0].local_off));
}

TEST(Traffic, DestinationSlotsAreDisjointAndInsideTheArea) {
  Knobs k;
  k.max_qps = 16;
  k.max_wrs = 20;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const TrafficPlan p = draw(k, seed);
    for (uint32_t h = 0; h < 2; ++h) {
      std::vector<Range> r = dst_ranges(p, h);
      std::sort(r.begin(), r.end(), [](const Range& a, const Range& b) { return a.lo < b.lo; });
      for (size_t i = 0; i < r.size(); ++i) {
        EXPECT_GE(r[i].lo, p.src_bytes[h] + 4096) << "seed " << seed << ": a slot overlaps the sources";
        EXPECT_LE(r[i].hi, p.area_bytes[h]) << "seed " << seed;
        if (i) { EXPECT_LT(r[i - 1].hi, r[i].lo) << "seed " << seed << ": slots touch or overlap"; }
      }
      // Sources lie in the source part.
      for (const QpPlan& q : p.qps) {
        for (const WrPlan& w : q.side[h].send)
          if (w.op != WrOpcode::Read && w.bad == BadKind::None) { EXPECT_LE(w.local_off + w.len, p.src_bytes[h]); }
        for (const WrPlan& w : q.side[1 - h].send)
          if (w.op == WrOpcode::Read && w.bad == BadKind::None) { EXPECT_LE(w.remote_off + w.len, p.src_bytes[h]); }
      }
    }
  }
}

TEST(Traffic, ReceivesMatchTheMessagesThatConsumeThem) {
  Knobs k;
  k.op_weight = {1, 2, 3, 2, 1};
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const TrafficPlan p = draw(k, seed);
    for (const QpPlan& q : p.qps)
      for (uint32_t h = 0; h < 2; ++h) {
        size_t users = 0;
        for (const WrPlan& w : q.side[h].send) users += consumes(w.op);
        // Every consumer has a receive (plus up to two spares), none missing without rnr_exhaust.
        EXPECT_GE(q.side[1 - h].recv.size(), users) << "seed " << seed;
        EXPECT_LE(q.side[1 - h].recv.size(), users + 2) << "seed " << seed;
        size_t r = 0;
        for (const WrPlan& w : q.side[h].send) {
          if (!consumes(w.op)) continue;
          if (w.op != WrOpcode::WriteImm) { EXPECT_GE(q.side[1 - h].recv[r].len, w.len) << "seed " << seed; }
          ++r;
        }
        EXPECT_EQ(q.rnr_retry, 7);
      }
  }
}

TEST(Traffic, RnrExhaustDropsTheLastReceiveAndDisablesRnrRetry) {
  Knobs k;
  k.op_weight = {0, 0, 1, 0, 0};
  k.bidir = 0;
  k.rnr_exhaust = 1;
  const TrafficPlan p = draw(k, 7);
  for (const QpPlan& q : p.qps) {
    const size_t n = q.side[0].send.size();  // all SENDs: each consumes a receive
    EXPECT_GE(q.side[1].recv.size(), n - 1);   // the last one finds none ...
    EXPECT_LE(q.side[1].recv.size(), n + 1);   // ... plus up to two spares
    EXPECT_EQ(q.rnr_retry, 0);
  }
}

TEST(Traffic, QpsEndingInErrorCarryOneDirectionAndMayHaveReceivesPosted) {
  Knobs k;
  k.bad_wr = 0.5;
  k.rnr_exhaust = 0.5;
  k.bidir = 1;
  k.max_qps = 8;
  size_t err_qps = 0, with_spares = 0, bidir_ok_qps = 0, imm_remote = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const TrafficPlan p = draw(k, seed);
    for (const QpPlan& q : p.qps) {
      if (!q.bad_side0 && !q.exhaust_side0) {
        bidir_ok_qps += !q.side[1].send.empty();
        continue;
      }
      ++err_qps;
      EXPECT_TRUE(q.side[1].send.empty()) << "seed " << seed;
      with_spares += !q.side[0].recv.empty();
      size_t users = 0;
      for (const WrPlan& w : q.side[0].send) {
        users += consumes(w.op);
        imm_remote += w.op == WrOpcode::WriteImm && (w.bad == BadKind::RemoteKey || w.bad == BadKind::RemoteBounds);
      }
      if (q.exhaust_side0) EXPECT_EQ(q.side[1].recv.size(), users - 1) << "seed " << seed;
      else EXPECT_GE(q.side[1].recv.size(), users) << "seed " << seed;
    }
  }
  EXPECT_GT(err_qps, 0u);
  EXPECT_GT(with_spares, 0u);
  EXPECT_GT(bidir_ok_qps, 0u);
  EXPECT_GT(imm_remote, 0u);
}

TEST(Traffic, CornerSizesFollowTheMtu) {
  Knobs k;
  uvm::Rng r(1);
  for (uint32_t mtu : {256u, 1024u, 4096u}) {
    EXPECT_EQ(draw_size(SizeClass::MtuMinus1, mtu, k, r), mtu - 1);
    EXPECT_EQ(draw_size(SizeClass::Mtu, mtu, k, r), mtu);
    EXPECT_EQ(draw_size(SizeClass::MtuPlus1, mtu, k, r), mtu + 1);
    EXPECT_EQ(classify_size(mtu + 1, mtu, k), SizeClass::MtuPlus1);
  }
  EXPECT_EQ(draw_size(SizeClass::Zero, 256, k, r), 0u);
  for (int i = 0; i < 100; ++i) {
    const uint32_t h = draw_size(SizeClass::Huge, 1024, k, r);
    EXPECT_GE(h, k.huge_min);
    EXPECT_LE(h, k.huge_max);
  }
}

TEST(Traffic, Cross4kPlacesSlotsAcrossPageBoundaries) {
  Knobs k;
  k.cross4k = 1;
  k.size_weight = {0, 0, 0, 0, 0, 1, 0, 0, 0};
  const TrafficPlan p = draw(k, 3);
  size_t n = 0;
  for (uint32_t h = 0; h < 2; ++h)
    for (const Range& r : dst_ranges(p, h)) {
      if (r.hi - r.lo < 2) continue;
      EXPECT_NE(r.lo / 4096, (r.hi - 1) / 4096) << "slot " << r.lo << ".." << r.hi;
      ++n;
    }
  EXPECT_GT(n, 0u);
}

TEST(Traffic, PayloadCapHolds) {
  Knobs k;
  k.size_weight = {0, 0, 0, 0, 0, 0, 0, 0, 1};
  k.max_total_bytes = 8u << 20;
  k.max_wrs = 20;
  const TrafficPlan p = draw(k, 5);
  EXPECT_LE(p.total_payload, (8u << 20) + 20 * 2 * 16 * k.small_max);
}

TEST(Traffic, ModelAcceptsPlansAndPredictsBadWrs) {
  Knobs k;
  k.bad_wr = 1;
  k.max_qps = 6;
  size_t errors = 0, successes = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const TrafficPlan p = draw(k, seed);
    HostLayout hl[2];
    std::vector<uint8_t> init[2];
    for (uint32_t h = 0; h < 2; ++h) {
      hl[h].area = hl[h].iova = 0x100000000ull * (h + 1) + 0x40;
      hl[h].key = hl[h].dst_key = 0x100 + h * 0x100;
      hl[h].stale_key = 0x101 + h * 0x100;
      hl[h].pd = 1;
      for (uint32_t q = 0; q < p.qps.size(); ++q) hl[h].qpn.push_back(2 + q);
      init[h].assign(p.area_bytes[h], uint8_t(h + 1));
    }
    std::vector<uint8_t> alien[2];
    for (uint32_t h = 0; h < 2; ++h) {
      hl[h].alien = 0x900000000ull * (h + 1);
      hl[h].alien_key = 0x900 + h;
      hl[h].alien_pd = 2;
      alien[h].assign(kAlienBytes, 0x5A);
    }
    const Prediction pred = predict(make_workload(p, hl, init, alien));
    for (const ExpectedQueue& q : pred.queues)
      for (const Completion& c : q.completions) (c.status == WcStatus::Success ? successes : errors)++;
    // Each erring QP has exactly one bad WR, signaled; remote kinds end the queue.
    for (const QpPlan& q : p.qps) {
      size_t nbad = 0;
      for (size_t i = 0; i < q.side[0].send.size(); ++i) {
        const WrPlan& w = q.side[0].send[i];
        if (w.bad == BadKind::None) continue;
        ++nbad;
        EXPECT_TRUE(w.signaled);
        const bool local = w.bad == BadKind::LocalKey || w.bad == BadKind::LocalBounds || w.bad == BadKind::ForeignPdLocal;
        if (!local) { EXPECT_EQ(i + 1, q.side[0].send.size()) << to_string(w.bad); }
      }
      EXPECT_EQ(nbad, q.bad_side0 ? 1u : 0u);
    }
  }
  EXPECT_GT(errors, 0u);
  EXPECT_GT(successes, 0u);
}

// The hard-case knobs: per-QP MTUs, split MRs with their rights, I/O virtual addresses, fenced
// WRs that send a READ's target on, stale keys and MR-rights violations. The model accepts
// every plan, predicts REM_ACCESS_ERR for the two new bad kinds, and the fenced WRs read
// inside the READ target they reuse.
TEST(Traffic, HardCaseKnobs) {
  Knobs k;
  k.max_qps = 8;
  k.min_wrs = 4;
  k.max_wrs = 16;
  k.op_weight = {2, 1, 2, 1, 3};
  k.per_qp_mtu = 0.7;
  k.iova_shift = 0.7;
  k.split_mrs = 0.7;
  k.fence_reuse = 0.5;
  k.bad_wr = 0.5;
  k.bad_weight = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1};
  size_t own_mtu = 0, fenced = 0, split = 0, shifted = 0, new_bad = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const TrafficPlan p = draw(k, seed);
    HostLayout hl[2];
    std::vector<uint8_t> init[2], alien[2];
    for (uint32_t h = 0; h < 2; ++h) {
      hl[h].area = 0x100000000ull * (h + 1) + 0x40;
      hl[h].iova = hl[h].area + p.iova_delta[h];
      hl[h].key = 0x100 + h * 0x100;
      hl[h].dst_key = p.split[h] ? 0x200 + h * 0x100 : hl[h].key;
      hl[h].stale_key = 0x1FF + h * 0x100;
      hl[h].pd = 1;
      for (uint32_t q = 0; q < p.qps.size(); ++q) hl[h].qpn.push_back(2 + q);
      init[h].assign(p.area_bytes[h], uint8_t(h + 1));
      hl[h].alien = 0x900000000ull * (h + 1);
      hl[h].alien_key = 0x900 + h;
      hl[h].alien_pd = 2;
      alien[h].assign(kAlienBytes, 0x5A);
      split += p.split[h];
      shifted += p.iova_delta[h] != 0;
    }
    const Prediction pred = predict(make_workload(p, hl, init, alien));
    for (uint32_t q = 0; q < p.qps.size(); ++q) {
      const QpPlan& qp = p.qps[q];
      own_mtu += qp.mtu != p.mtu;
      for (uint32_t h = 0; h < 2; ++h)
        for (size_t i = 0; i < qp.side[h].send.size(); ++i) {
          const WrPlan& w = qp.side[h].send[i];
          const SendWr s = make_send_wr(p, hl, h, q, i);
          if (w.reuse >= 0) {
            ++fenced;
            const WrPlan& r = qp.side[h].send[size_t(w.reuse)];
            EXPECT_EQ(r.op, WrOpcode::Read);
            EXPECT_TRUE(w.fence && s.fence);
            EXPECT_GE(w.local_off, r.local_off);
            EXPECT_LE(w.local_off + w.len, r.local_off + r.len);
            EXPECT_EQ(s.lkey, hl[h].dst_key) << "a READ target lies in the destinations' MR";
          }
          if (w.bad != BadKind::MrRights && w.bad != BadKind::StaleKey) continue;
          ++new_bad;
          ASSERT_EQ(h, 0u);
          if (w.bad == BadKind::MrRights) {
            EXPECT_TRUE(p.split[1]);
            EXPECT_LE(w.remote_off + w.len, p.src_bytes[1]);
            EXPECT_EQ(s.rkey, hl[1].key);
          } else {
            EXPECT_EQ(s.rkey, hl[1].stale_key);
          }
          bool found = false;
          for (const ExpectedQueue& eq : pred.queues)
            if (eq.host == 0 && eq.kind == QueueKind::Send && eq.qpn == hl[0].qpn[q])
              for (const Completion& c : eq.completions)
                if (c.wr_id == s.wr_id) {
                  found = true;
                  EXPECT_EQ(c.status, WcStatus::RemAccessErr) << to_string(w.bad);
                }
          EXPECT_TRUE(found) << "no predicted completion for the " << to_string(w.bad) << " WR";
        }
    }
  }
  EXPECT_GT(own_mtu, 0u);
  EXPECT_GT(fenced, 0u);
  EXPECT_GT(split, 0u);
  EXPECT_GT(shifted, 0u);
  EXPECT_GT(new_bad, 0u);
}

}  // namespace
// Wrap knobs: PSNs start 1..(packets of the side) below 2^24; 2- and 4-entry rings keep the
// signaling rule (every (depth/2)-th WR signaled); with both knobs off nothing else changes.
TEST(Traffic, WrapKnobs) {
  Knobs k;
  k.min_qps = 2;
  k.max_qps = 6;
  k.min_wrs = 8;
  k.max_wrs = 20;
  k.bidir = 1.0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Knobs on = k, off = k;
    on.psn_wrap = on.ring_wrap = 1.0;
    off.psn_wrap = off.ring_wrap = 0.0;
    const TrafficPlan a = draw(on, seed), b = draw(off, seed);
    ASSERT_EQ(a.qps.size(), b.qps.size());
    EXPECT_TRUE(a.whole_batches);
    EXPECT_FALSE(b.whole_batches);
    for (size_t q = 0; q < a.qps.size(); ++q) {
      const QpPlan& qa = a.qps[q];
      EXPECT_FALSE(b.qps[q].psn_set);
      EXPECT_TRUE(qa.psn_set);
      EXPECT_TRUE(qa.sq_depth == 2 || qa.sq_depth == 4);
      for (uint32_t h = 0; h < 2; ++h) {
        uint64_t n = 0;
        for (const WrPlan& w : qa.side[h].send) n += w.len == 0 ? 1 : (w.len + a.mtu - 1) / a.mtu;
        EXPECT_GE(qa.psn[h], (1u << 24) - std::max<uint64_t>(1, n));
        EXPECT_LT(qa.psn[h], 1u << 24);
        ASSERT_EQ(qa.side[h].send.size(), b.qps[q].side[h].send.size());
        const uint32_t every = std::max<uint32_t>(1, qa.sq_depth / 2);
        for (size_t i = 0; i < qa.side[h].send.size(); ++i) {
          EXPECT_EQ(qa.side[h].send[i].len, b.qps[q].side[h].send[i].len);
          EXPECT_EQ(qa.side[h].send[i].local_off, b.qps[q].side[h].send[i].local_off);
          if ((i + 1) % every == 0) {
            EXPECT_TRUE(qa.side[h].send[i].signaled);
          }
        }
      }
    }
  }
}

// QP resets: every reset connection's incarnations are plan QPs of their own, chained by
// prev/next after the QPs set up first; they neither fail nor carry one direction only, a reset
// by QP_MODIFY keeps the rings, a reset comes at most once every WR of a side is posted. The model
// accepts the plans (each incarnation under its own QPN): the queues of a reset incarnation are
// relaxed and require nothing, the last incarnation's are exact.
TEST(Traffic, QpResetKnob) {
  Knobs k;
  k.min_qps = 2;
  k.max_qps = 6;
  k.bad_wr = 0.5;
  k.host_err = 0.5;
  k.qp_reset = 1.0;
  size_t resets = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const TrafficPlan p = draw(k, seed);
    size_t first = 0;
    while (first < p.qps.size() && p.qps[first].prev < 0) ++first;
    for (size_t q = 0; q < p.qps.size(); ++q) {
      const QpPlan& qp = p.qps[q];
      EXPECT_EQ(qp.prev >= 0, q >= first) << "later incarnations follow the QPs set up first";
      if (qp.prev >= 0) {
        ASSERT_LT(size_t(qp.prev), q);
        EXPECT_EQ(p.qps[size_t(qp.prev)].next, int32_t(q));
        EXPECT_EQ(qp.incarnation, p.qps[size_t(qp.prev)].incarnation + 1);
      }
      if (qp.next < 0 && qp.prev < 0) continue;
      EXPECT_FALSE(qp.bad_side0 || qp.exhaust_side0 || qp.host_err);
      EXPECT_FALSE(qp.side[0].send.empty() || qp.side[1].send.empty());
      if (qp.next < 0) continue;
      ++resets;
      const QpPlan& nx = p.qps[size_t(qp.next)];
      if (qp.reset_how[0] == ResetHow::Modify || qp.reset_how[1] == ResetHow::Modify) {
        EXPECT_EQ(nx.sq_depth, qp.sq_depth);
        EXPECT_EQ(nx.rq_depth, qp.rq_depth);
      }
      for (uint32_t h = 0; h < 2; ++h) EXPECT_LE(qp.reset_after[h], qp.side[h].send.size());
    }
    HostLayout hl[2];
    std::vector<uint8_t> init[2], alien[2];
    for (uint32_t h = 0; h < 2; ++h) {
      hl[h].area = hl[h].iova = 0x100000000ull * (h + 1) + 0x40;
      hl[h].key = hl[h].dst_key = 0x100 + h * 0x100;
      hl[h].stale_key = 0x101 + h * 0x100;
      hl[h].pd = 1;
      for (uint32_t q = 0; q < p.qps.size(); ++q) {
        uint32_t f = q;
        while (p.qps[f].prev >= 0) f = uint32_t(p.qps[f].prev);
        hl[h].qpn.push_back(incarnation_qpn(2 + f, p.qps[q].incarnation));
      }
      init[h].assign(p.area_bytes[h], uint8_t(h + 1));
      hl[h].alien = 0x900000000ull * (h + 1);
      hl[h].alien_key = 0x900 + h;
      hl[h].alien_pd = 2;
      alien[h].assign(kAlienBytes, 0x5A);
    }
    const Prediction pred = predict(make_workload(p, hl, init, alien));
    for (uint32_t q = 0; q < p.qps.size(); ++q) {
      const QpPlan& qp = p.qps[q];
      if (qp.next < 0 && qp.prev < 0) continue;
      for (uint32_t h = 0; h < 2; ++h)
        for (QueueKind kind : {QueueKind::Send, QueueKind::Recv}) {
          const ExpectedQueue* e = pred.queue(h, hl[h].qpn[q], kind);
          ASSERT_NE(e, nullptr);
          EXPECT_EQ(e->relaxed, qp.next >= 0);
          EXPECT_EQ(e->reset, qp.next >= 0);
          if (qp.next >= 0) {
            EXPECT_EQ(e->must_complete, 0u);
          }
        }
    }
  }
  EXPECT_GT(resets, 20u);
}

}  // namespace srnic::verif::env
