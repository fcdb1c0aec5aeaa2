// Test top with srnic_core's Verilated port names and types, and the NIC-side test drivers that
// stand in for the RTL in the BFM tests: an AXI4 master, an AXI-Lite register file, an AXI-Stream
// frame source and sink. Drivers follow the BFM cycle protocol (sample before the edge, drive
// after it) and only ever touch the NIC-output members of the top.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <vector>

#include "srnic/sim/common.hpp"

namespace srnic::sim::test {

using CData = uint8_t;
using SData = uint16_t;
using IData = uint32_t;
using QData = uint64_t;
using Wide = std::array<uint32_t, 16>;

struct TestTop {
  CData clk = 0, rst = 0;
  CData m_axi_awid = 0, m_axi_awlen = 0, m_axi_awsize = 0, m_axi_awburst = 0, m_axi_awvalid = 0,
        m_axi_awready = 0;
  QData m_axi_awaddr = 0;
  Wide m_axi_wdata{};
  QData m_axi_wstrb = 0;
  CData m_axi_wlast = 0, m_axi_wvalid = 0, m_axi_wready = 0;
  CData m_axi_bid = 0, m_axi_bresp = 0, m_axi_bvalid = 0, m_axi_bready = 0;
  CData m_axi_arid = 0, m_axi_arlen = 0, m_axi_arsize = 0, m_axi_arburst = 0, m_axi_arvalid = 0,
        m_axi_arready = 0;
  QData m_axi_araddr = 0;
  CData m_axi_rid = 0, m_axi_rresp = 0, m_axi_rlast = 0, m_axi_rvalid = 0, m_axi_rready = 0;
  Wide m_axi_rdata{};
  SData s_axil_awaddr = 0, s_axil_araddr = 0;
  CData s_axil_awvalid = 0, s_axil_awready = 0, s_axil_wstrb = 0, s_axil_wvalid = 0,
        s_axil_wready = 0, s_axil_bresp = 0, s_axil_bvalid = 0, s_axil_bready = 0,
        s_axil_arvalid = 0, s_axil_arready = 0, s_axil_rresp = 0, s_axil_rvalid = 0,
        s_axil_rready = 0;
  IData s_axil_wdata = 0, s_axil_rdata = 0;
  Wide m_axis_tx_tdata{};
  QData m_axis_tx_tkeep = 0;
  CData m_axis_tx_tlast = 0, m_axis_tx_tuser = 0, m_axis_tx_tvalid = 0, m_axis_tx_tready = 0;
  Wide s_axis_rx_tdata{};
  QData s_axis_rx_tkeep = 0;
  CData s_axis_rx_tlast = 0, s_axis_rx_tuser = 0, s_axis_rx_tvalid = 0, rx_pause = 0;
  CData irq_valid = 0, irq_ready = 0;
  SData irq_vector = 0;
};

// AXI4 master on m_axi_*: issues queued reads and writes in order, always ready for R and B.
class AxiMaster {
 public:
  struct Read {
    uint8_t id = 0;
    uint64_t addr = 0;
    unsigned beats = 0;
    uint8_t size = 6, burst = 1;
    uint64_t seq = 0, ar_cycle = 0, first_cycle = 0, last_cycle = 0;
    std::vector<uint8_t> data;
    std::vector<uint8_t> resp;  // RRESP per beat
  };
  struct Write {
    uint8_t id;
    uint64_t addr;
    std::vector<uint8_t> data;  // beats * 64 bytes
    uint64_t last_strb = ~0ULL; // wstrb of the final beat
    int wlast_beat = -1;        // beat carrying wlast (-1: the last one; >= beats: none)
    uint64_t aw_cycle = 0, w_done_cycle = 0;
  };

  void read(uint8_t id, uint64_t addr, unsigned beats, uint8_t size = 6, uint8_t burst = 1) {
    Read r;
    r.id = id;
    r.addr = addr;
    r.beats = beats;
    r.size = size;
    r.burst = burst;
    r.seq = read_seq_++;
    rq_.push_back(r);
  }
  void write(Write w) { wq_.push_back(std::move(w)); }
  void write(uint8_t id, uint64_t addr, const std::vector<uint8_t>& data) {
    write(Write{id, addr, data});
  }

  void drive(TestTop& t, uint64_t) {
    if (!ar_busy_ && !rq_.empty()) {
      ar_ = rq_.front();
      rq_.pop_front();
      ar_busy_ = true;
    }
    t.m_axi_arvalid = ar_busy_;
    t.m_axi_arid = ar_.id;
    t.m_axi_araddr = ar_.addr;
    t.m_axi_arlen = static_cast<CData>(ar_.beats - 1);
    t.m_axi_arsize = ar_.size;
    t.m_axi_arburst = ar_.burst;
    t.m_axi_rready = 1;

    if (!w_busy_ && !wq_.empty()) {
      w_ = wq_.front();
      wq_.pop_front();
      w_busy_ = true;
      aw_done_ = false;
      beat_ = 0;
    }
    t.m_axi_awvalid = w_busy_ && !aw_done_;
    t.m_axi_awid = w_.id;
    t.m_axi_awaddr = w_.addr;
    const unsigned beats = static_cast<unsigned>(w_.data.size() / 64);
    t.m_axi_awlen = static_cast<CData>(beats ? beats - 1 : 0);
    t.m_axi_awsize = 6;
    t.m_axi_awburst = 1;
    t.m_axi_wvalid = w_busy_ && beat_ < beats;
    if (t.m_axi_wvalid) {
      bytes_to_wide(&w_.data[beat_ * 64ULL], t.m_axi_wdata);
      const unsigned lb = w_.wlast_beat < 0 ? beats - 1 : static_cast<unsigned>(w_.wlast_beat);
      t.m_axi_wlast = beat_ == lb;
      t.m_axi_wstrb = beat_ + 1 == beats ? w_.last_strb : ~0ULL;
    }
    t.m_axi_bready = 1;
  }

  void sample(const TestTop& t, uint64_t cycle) {
    if (t.m_axi_arvalid && t.m_axi_arready) {
      ar_.ar_cycle = cycle;
      open_[ar_.id].push_back(ar_);
      ++open_count_;
      ar_busy_ = false;
    }
    if (t.m_axi_rvalid && t.m_axi_rready) {
      auto& q = open_[t.m_axi_rid];
      if (q.empty()) {
        ++errors;
      } else {
        if (in_burst_ && cur_id_ != t.m_axi_rid) ++interleaves;
        Read& r = q.front();
        if (r.data.empty()) r.first_cycle = cycle;
        uint8_t b[64];
        wide_to_bytes(t.m_axi_rdata, b);
        r.data.insert(r.data.end(), b, b + 64);
        r.resp.push_back(t.m_axi_rresp);
        const bool last = r.data.size() == r.beats * 64ULL;
        if (last != static_cast<bool>(t.m_axi_rlast)) ++errors;
        in_burst_ = !last;
        cur_id_ = t.m_axi_rid;
        if (last) {
          r.last_cycle = cycle;
          done.push_back(std::move(r));
          q.pop_front();
          --open_count_;
        }
      }
    }
    if (t.m_axi_awvalid && t.m_axi_awready) {
      aw_done_ = true;
      w_.aw_cycle = cycle;
    }
    if (t.m_axi_wvalid && t.m_axi_wready) {
      ++w_beats;
      if (++beat_ == w_.data.size() / 64) w_.w_done_cycle = cycle;
    }
    if (w_busy_ && aw_done_ && beat_ == w_.data.size() / 64) {
      writes_done.push_back(w_);
      w_busy_ = false;
    }
    if (t.m_axi_bvalid && t.m_axi_bready) {
      ++b_count;
      b_log.push_back(BResp{t.m_axi_bid, t.m_axi_bresp});
    }
  }

  bool idle() const { return !ar_busy_ && rq_.empty() && open_count_ == 0 && !w_busy_ && wq_.empty(); }
  size_t reads_queued() const { return rq_.size() + (ar_busy_ ? 1 : 0); }

  std::vector<Read> done;           // completed reads in completion order
  std::vector<Write> writes_done;   // in issue order
  struct BResp {
    uint8_t id, resp;
  };
  std::vector<BResp> b_log;         // every B response, in order
  uint64_t b_count = 0, errors = 0, interleaves = 0, w_beats = 0;

 private:
  std::deque<Read> rq_;
  std::deque<Write> wq_;
  Read ar_{};
  bool ar_busy_ = false;
  Write w_{};
  bool w_busy_ = false, aw_done_ = false;
  unsigned beat_ = 0;
  std::map<uint8_t, std::deque<Read>> open_;
  size_t open_count_ = 0;
  bool in_burst_ = false;
  uint8_t cur_id_ = 0;
  uint64_t read_seq_ = 0;
};

// AXI-Lite register file on s_axil_*: always ready, responds the cycle after a handshake.
class AxilRegs {
 public:
  struct Access {
    bool write;
    uint16_t addr;
    uint32_t data;
    uint64_t cycle;
  };

  void drive(TestTop& t, uint64_t) {
    t.s_axil_awready = !b_pending_;
    t.s_axil_wready = !b_pending_;
    t.s_axil_bvalid = b_pending_;
    t.s_axil_bresp = 0;
    t.s_axil_arready = !r_pending_;
    t.s_axil_rvalid = r_pending_;
    t.s_axil_rdata = r_data_;
    t.s_axil_rresp = 0;
  }
  void sample(const TestTop& t, uint64_t cycle) {
    if (t.s_axil_bvalid && t.s_axil_bready) b_pending_ = false;
    if (t.s_axil_rvalid && t.s_axil_rready) r_pending_ = false;
    // This slave takes address and data in the same cycle only.
    if (t.s_axil_awvalid && t.s_axil_awready && t.s_axil_wvalid && t.s_axil_wready) {
      regs[t.s_axil_awaddr] = t.s_axil_wdata;
      log.push_back(Access{true, t.s_axil_awaddr, t.s_axil_wdata, cycle});
      b_pending_ = true;
    }
    if (t.s_axil_arvalid && t.s_axil_arready) {
      r_data_ = regs[t.s_axil_araddr];
      log.push_back(Access{false, t.s_axil_araddr, r_data_, cycle});
      r_pending_ = true;
    }
  }

  std::map<uint16_t, uint32_t> regs;
  std::vector<Access> log;

 private:
  bool b_pending_ = false, r_pending_ = false;
  uint32_t r_data_ = 0;
};

// AXI-Stream frame source on m_axis_tx_*.
class AxisSource {
 public:
  void send(std::vector<uint8_t> frame, bool abort = false) { q_.push_back({std::move(frame), abort}); }
  void drive(TestTop& t, uint64_t) {
    t.m_axis_tx_tvalid = !q_.empty();
    if (q_.empty()) return;
    const auto& f = q_.front();
    const size_t n = std::min<size_t>(64, f.bytes.size() - off_);
    uint8_t b[64] = {};
    std::memcpy(b, f.bytes.data() + off_, n);
    bytes_to_wide(b, t.m_axis_tx_tdata);
    t.m_axis_tx_tkeep = keep_mask(static_cast<unsigned>(n));
    t.m_axis_tx_tlast = off_ + n == f.bytes.size();
    t.m_axis_tx_tuser = f.abort && t.m_axis_tx_tlast;
  }
  void sample(const TestTop& t, uint64_t) {
    if (!(t.m_axis_tx_tvalid && t.m_axis_tx_tready)) {
      if (t.m_axis_tx_tvalid) ++stall_cycles;
      return;
    }
    const size_t n = std::min<size_t>(64, q_.front().bytes.size() - off_);
    off_ += n;
    if (off_ == q_.front().bytes.size()) {
      q_.pop_front();
      off_ = 0;
      ++frames_sent;
    }
  }
  bool idle() const { return q_.empty(); }
  uint64_t frames_sent = 0, stall_cycles = 0;

 private:
  struct F {
    std::vector<uint8_t> bytes;
    bool abort;
  };
  std::deque<F> q_;
  size_t off_ = 0;
};

// AXI-Stream sink on s_axis_rx_* (no tready): collects frames with their first-beat cycle.
class AxisSink {
 public:
  struct Rx {
    std::vector<uint8_t> bytes;
    uint64_t first_cycle, last_cycle;
    bool tuser;
  };
  void sample(const TestTop& t, uint64_t cycle) {
    if (!t.s_axis_rx_tvalid) return;
    if (!in_frame_) {
      cur_ = Rx{{}, cycle, 0, false};
      in_frame_ = true;
    }
    uint8_t b[64];
    wide_to_bytes(t.s_axis_rx_tdata, b);
    const uint64_t k = t.s_axis_rx_tkeep;
    if (!t.s_axis_rx_tlast && k != ~0ULL) ++errors;
    for (unsigned i = 0; i < 64; ++i)
      if ((k >> i) & 1) cur_.bytes.push_back(b[i]);
    if (t.s_axis_rx_tlast) {
      cur_.last_cycle = cycle;
      cur_.tuser = t.s_axis_rx_tuser;
      frames.push_back(std::move(cur_));
      in_frame_ = false;
    }
  }
  std::vector<Rx> frames;
  uint64_t errors = 0;

 private:
  Rx cur_{};
  bool in_frame_ = false;
};

}  // namespace srnic::sim::test
