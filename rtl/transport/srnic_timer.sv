// srnic_timer: per-QP retransmission (local ACK timeout) and RNR timers for NUM_QPS QPs
// without a counter per QP: one RAM word per QP and a sweeper that visits every QP in turn.
//
// Time. `now` counts time units of CYC_PER_UNIT cycles. The unit must be at least the
// 1.024 us of the IB timer encodings: at the 300 MHz core clock 1.024 us is 307.2 cycles,
// so the default 308 rounds up (a unit of 1.0267 us) and every duration is at least its
// nominal value. `now` stops while the sweeper waits for room in the fire FIFO (below).
//
// Durations are powers of two of units, 2^E:
//   ACK (local ACK timeout, attribute t = 1..31): 4.096 us * 2^t = 2^(t+2) units, E = 3..33;
//     t = 0 means no ACK timer.
//   RNR (timer code c of an RNR NAK): the table value rounded UP to a power of two of
//     units, so a retry never comes early (a responder drops it): E = 20 for c = 0
//     (655.36 ms -> 2^20 units = 1073.7 ms), E = 4 + c/2 for c = 1..31 (the table doubles
//     every two codes: 0.01 ms -> 2^4, 0.02/0.03 ms -> 2^5, ... 327.68/491.52 ms -> 2^19).
//     Each is >= the table value and < 1.65x it.
//
// Per QP one 21-bit RAM word:
//   attr  5  the local ACK timeout attribute (written by cfg only)
//   mode  2  OFF, ACK or RNR
//   g     5  stamp granularity exponent: the deadline is kept in steps of 2^g units,
//            g = max(0, E - 8), so a duration spans at most 2^8 steps
//   dl    9  deadline stamp: the deadline step modulo 512
// The timer state is 16 bits (mode, g, dl); with the attribute 21 bits per QP.
//
// Arming (kick written at cycle w, now = s then): g = max(0, E - 8) and
//   dl = floor(s / 2^g) + 2^(E-g) + 1  (mod 512)
// The sweeper, deciding an armed entry with now = n, computes
//   v = floor(n / 2^g) - dl  (mod 512)  and fires iff  v < 255.
// Why it never fires early: until the deadline step, floor(n/2^g) lies in
//   [floor(s/2^g), dl - 1], so v lies in [512 - 2^(E-g) - 1, 511], which is >= 255 because
//   2^(E-g) <= 256. The deadline step begins at (floor(s/2^g) + 2^(E-g) + 1) * 2^g >
//   s + 2^E units, i.e. at now >= s + 2^E + 1; since now advances at most one unit per
//   CYC_PER_UNIT cycles, that is >= 2^E * CYC_PER_UNIT + 1 cycles after the write and
//   >= 2^E * CYC_PER_UNIT + 2 cycles after the cycle the kick was accepted.
// Why an expiry is never missed: every entry is decided once in every 2 * NUM_QPS cycles
//   during which `now` runs (the sweeper decides one entry every 2 cycles and `now` stops
//   while the sweeper waits), i.e. at most P = ceil(2 * NUM_QPS / CYC_PER_UNIT) units apart
//   (107 at the defaults; the same bound holds from the arming write to the first decision).
//   The last decision before the deadline step saw floor(n/2^g) <= dl - 1, so the next one
//   sees v <= ceil(P / 2^g) - 1 <= P - 1 < 255 and fires. Elaboration checks P <= 255.
//   Because `now` stops while the sweeper waits, this holds whatever the backpressure.
//
// Bounds, for a kick accepted at cycle k with duration 2^E units:
//   resolution   2^g units: one unit for E <= 8, else 2^(E-8) units (1/256 of the duration)
//   never early  the expiry is decided at cycle >= k + 2^E * CYC_PER_UNIT + 2
//   late by      at most 2^g units (the step; it also covers the up to one unit the kick
//                came after the start of its unit) + one sweep period (2 * NUM_QPS cycles)
//                + the cycles `now` stood still (the sweeper waited for room for a fire):
//                decided at cycle <= k + (2^E + 2^g) * CYC_PER_UNIT + 2 * NUM_QPS + stopped;
//                the fire then waits in the FIFO behind at most FIRE_DEPTH - 1 fires and
//                for fire_ready.
//   sweep period 2 * NUM_QPS cycles while `now` runs (32768 cycles = 109 us for 16K QPs at
//                300 MHz).
//
// Schedule. One read port, time-shared: even cycles (ph = 0) the sweeper reads its entry;
// odd cycles (ph = 1) the sweeper decides it (and writes mode OFF if it fires) while a cfg
// or kick is accepted and reads its QP's word; the next even cycle the op writes its word.
// So writes come from the sweeper on odd cycles and from ops on even cycles, one write
// port. The read in flight is completed with the write of the cycle it was issued in (the
// RAM returns the old word then): a kick written while the sweeper reads its entry is seen
// by the decision (a kick accepted before the decision wins, the sweeper never fires from
// a stale copy nor overwrites the kick), and an op accepted in the cycle the sweeper
// decides its QP sees the decision's write (the decision comes first: a RESTART on an RNR
// entry that fires in that cycle starts the ACK timer). Kicks: one every 2 cycles; a cfg
// taken takes the slot (kick_ready low then); a cfg waiting for its QP's offered fire
// (below) leaves the slot to the kicks.
//   RESTART: RNR entry unchanged; else attr = 0 -> OFF, else ACK with E = attr + 2.
//   RNR:     RNR with E from the code (replaces an ACK timer).
//   RENEW:   ACK entry restarted (E = attr + 2); OFF and RNR entries unchanged. An accepted
//            response renews: a response arms nothing, so one that acknowledges nothing new (a
//            copy, or one overtaken by the ACK of everything) never starts the timer of a QP
//            with nothing outstanding (every request packet RESTARTs it as it leaves).
//   STOP:    OFF.          STOP_ACK: RNR entry unchanged; else OFF.
//   cfg:     attr = cfg_timeout, OFF; the QP's fires not yet taken are cancelled.
// Fires go through a FIFO of FIRE_DEPTH; the sweeper reads an entry only when the FIFO has
// room for its possible fire (nothing else pushes between the read and the decision),
// otherwise it waits and `now` stands still for that slot: no expiry is skipped, and the
// waiting delays every running timer by the same time instead of letting deadlines pass
// unseen. A cfg also cancels the QP's fires in the FIFO (see the FIFO below).
// After reset the RAM is cleared, one word per cycle (NUM_QPS cycles, cfg and kicks not
// ready meanwhile): every entry OFF with attribute 0, so a QP never configured never fires.
// The signals marked verilator public_flat_rd (phase, sweeper position and decision, fire
// push, clock stand-still) are read by the block bench (verif/blocks/timer_test.cpp).
`default_nettype none
module srnic_timer #(
  parameter int NUM_QPS      = 16384,
  parameter int CYC_PER_UNIT = 308
) (
  input  wire logic                       clk,
  input  wire logic                       rst,
  // configuration (QP_MODIFY): local ACK timeout attribute (0 = no ACK timer); stops the timer
  input  wire logic                       cfg_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] cfg_qpn,
  input  wire logic [4:0]                 cfg_timeout,
  output logic                            cfg_ready,
  // kicks: 0 RESTART, 1 RNR (kick_rnr = RNR timer code), 2 STOP, 3 STOP_ACK (an ACK timer
  // only), 4 RENEW (an ACK timer that runs)
  input  wire logic                       kick_valid,
  input  wire logic [$clog2(NUM_QPS)-1:0] kick_qpn,
  input  wire logic [2:0]                 kick_kind,
  input  wire logic [4:0]                 kick_rnr,
  output logic                            kick_ready,
  // expiries: fire_rnr 1 = an RNR wait ended, 0 = the local ACK timeout expired
  output logic                            fire_valid,
  output logic [$clog2(NUM_QPS)-1:0]      fire_qpn,
  output logic                            fire_rnr,
  input  wire logic                       fire_ready
);
  localparam int AW         = $clog2(NUM_QPS);
  localparam int ST_W       = 9;                          // deadline stamp bits
  localparam int RES_K      = 8;                          // a duration spans <= 2^RES_K steps
  localparam int WIN        = 2**ST_W - 2**RES_K - 1;     // fire iff v < WIN (255)
  localparam int NOW_W      = 33 - RES_K + ST_W;          // largest g (E = 33) plus the stamp
  localparam int PRE_W      = $clog2(CYC_PER_UNIT);
  localparam int SWEEP_UNITS = (2 * NUM_QPS + CYC_PER_UNIT - 1) / CYC_PER_UNIT;
  localparam int FIRE_DEPTH = 4;
  localparam int WORD_W     = 5 + 2 + 5 + ST_W;           // attr, mode, g, dl
  initial begin
    if (NUM_QPS < 4 || (1 << AW) != NUM_QPS) $fatal(1, "srnic_timer: NUM_QPS must be a power of two >= 4");
    if (CYC_PER_UNIT < 2) $fatal(1, "srnic_timer: CYC_PER_UNIT must be >= 2");
    if (SWEEP_UNITS > WIN)
      $fatal(1, "srnic_timer: a sweep (%0d units) exceeds the stamp window (%0d units): raise CYC_PER_UNIT",
             SWEEP_UNITS, WIN);
  end

  localparam logic [2:0] K_RESTART = 3'd0, K_RNR = 3'd1, K_STOP = 3'd2, K_STOP_ACK = 3'd3, K_RENEW = 3'd4;
  localparam logic [1:0] M_OFF = 2'd0, M_ACK = 2'd1, M_RNR = 2'd2;

  typedef struct packed {
    logic [4:0]      attr;
    logic [1:0]      mode;
    logic [4:0]      g;
    logic [ST_W-1:0] dl;
  } word_t;

  // ---- reset clear and slot phase
  logic          init;       // clearing the RAM after reset
  logic [AW-1:0] clr_addr;
  logic          ph /*verilator public_flat_rd*/;  // 0: sweeper reads, 1: sweeper decides, op accepted
  always_ff @(posedge clk) begin
    if (rst) begin
      init     <= 1'b1;
      clr_addr <= '0;
      ph       <= 1'b0;
    end else if (init) begin
      clr_addr <= clr_addr + 1'b1;
      if (clr_addr == AW'(NUM_QPS - 1)) init <= 1'b0;
    end else begin
      ph <= !ph;
    end
  end

  // ---- fire FIFO: FIRE_DEPTH entries in order, the head in entry 0. A cfg of a QP (every
  // QP_MODIFY, a reset included) stops its timer and also cancels its expiries decided and not
  // yet taken, one pushed in the cycle the cfg is taken included: a cancelled entry keeps its
  // place and leaves unseen when it reaches the head. A fire already offered is not withdrawn:
  // a cfg of the head's QP waits until the head is taken (kicks are not held up meanwhile). So
  // every expiry of a QP reaches the RX engine before the QP_MODIFY is done, or never: none of
  // a QP's earlier incarnation acts after the QP was reset (decision 119).
  logic          push /*verilator public_flat_rd*/;      // the sweeper fires this cycle
  logic          push_rnr /*verilator public_flat_rd*/;
  logic          fifo_room;
  logic [AW-1:0] sw_qpn /*verilator public_flat_rd*/;    // entry the sweeper reads / decides
  localparam int FN_W = $clog2(FIRE_DEPTH + 1);
  logic [AW-1:0] fq_qpn  [FIRE_DEPTH];
  logic          fq_rnr  [FIRE_DEPTH];
  logic          fq_live [FIRE_DEPTH];
  logic [FN_W-1:0] fq_n;                                 // entries held (live or cancelled)
  wire           cfg_acc  = cfg_valid && cfg_ready;
  assign fire_valid = fq_n != '0 && fq_live[0];
  assign fire_qpn   = fq_qpn[0];
  assign fire_rnr   = fq_rnr[0];
  assign fifo_room  = fq_n != FN_W'(FIRE_DEPTH);
  wire           fq_pop   = fq_n != '0 && (!fq_live[0] || (fire_valid && fire_ready));
  wire [FN_W-1:0] fq_tail = fq_n - FN_W'(fq_pop);        // where a push goes
  always_ff @(posedge clk) begin
    if (rst) begin
      fq_n <= '0;
      for (int i = 0; i < FIRE_DEPTH; i++) fq_live[i] <= 1'b0;
    end else begin
      for (int i = 0; i < FIRE_DEPTH; i++) begin
        // shift on a pop, then cancel by the cfg, then the push
        if (fq_pop && i + 1 < FIRE_DEPTH) begin
          fq_qpn[i]  <= fq_qpn[i + 1];
          fq_rnr[i]  <= fq_rnr[i + 1];
          fq_live[i] <= fq_live[i + 1] && !(cfg_acc && fq_qpn[i + 1] == cfg_qpn);
        end else begin
          fq_live[i] <= fq_live[i] && !(cfg_acc && fq_qpn[i] == cfg_qpn);
        end
        if (push && FN_W'(i) == fq_tail) begin
          fq_qpn[i]  <= sw_qpn;
          fq_rnr[i]  <= push_rnr;
          fq_live[i] <= !(cfg_acc && cfg_qpn == sw_qpn);
        end
      end
      fq_n <= fq_tail + FN_W'(push);
    end
  end

  // ---- time: `now` advances one unit every CYC_PER_UNIT cycles while the sweeper runs.
  // It stands still for both cycles of a sweeper slot skipped for want of FIFO room.
  logic             sw_rd, sw_dec /*verilator public_flat_rd*/;
  logic             frozen /*verilator public_flat_rd*/;
  logic [PRE_W-1:0] pre;
  logic [NOW_W-1:0] now;
  assign sw_rd  = !init && !ph && fifo_room;
  assign frozen = !init && (ph ? !sw_dec : !fifo_room);
  always_ff @(posedge clk) begin
    if (rst) begin
      pre <= '0;
      now <= '0;
    end else if (!init && !frozen) begin
      if (pre == PRE_W'(CYC_PER_UNIT - 1)) begin
        pre <= '0;
        now <= now + 1'b1;
      end else begin
        pre <= pre + 1'b1;
      end
    end
  end

  // ---- op slot (odd cycles): cfg first (unless it waits for the offered fire of its QP),
  // then a kick
  assign cfg_ready  = !init && ph && !(fire_valid && fire_qpn == cfg_qpn);
  assign kick_ready = !init && ph && !cfg_acc;
  wire          acc      = cfg_acc || (kick_valid && kick_ready);
  wire [AW-1:0] acc_qpn  = cfg_acc ? cfg_qpn : kick_qpn;
  logic          op_v, op_cfg;
  logic [2:0]    op_kind;
  logic [4:0]    op_arg;     // cfg: timeout attribute; kick: RNR code
  logic [AW-1:0] op_qpn;
  always_ff @(posedge clk) begin
    op_v    <= !rst && acc;
    op_cfg  <= cfg_acc;
    op_kind <= kick_kind;
    op_arg  <= cfg_acc ? cfg_timeout : kick_rnr;
    op_qpn  <= acc_qpn;
  end

  // ---- RAM, one read port shared by phase, with forwarding of the write of the read cycle
  logic          we, fwd_q;
  logic [AW-1:0] waddr;
  word_t         wdata, ram_q, fwd_data_q, cur;
  wire           rd_en   = sw_rd || acc;
  wire [AW-1:0]  rd_addr = ph ? acc_qpn : sw_qpn;
  sdp_ram #(.WIDTH(WORD_W), .DEPTH(NUM_QPS)) u_ram (
    .clk, .wr_en(we), .wr_addr(waddr), .wr_data(wdata),
    .rd_en, .rd_addr, .rd_data(ram_q));
  always_ff @(posedge clk) begin
    fwd_q      <= we && waddr == rd_addr;
    fwd_data_q <= wdata;
  end
  // The only write in a data cycle is the reader's own (at its end): the word read is the
  // RAM's, or the write of the read cycle, which the RAM did not return.
  assign cur = fwd_q ? fwd_data_q : ram_q;

  // ---- sweeper decision (odd cycles)
  wire            sw_armed = cur.mode == M_ACK || cur.mode == M_RNR;
  wire [ST_W-1:0] sw_v     = ST_W'(now >> cur.g) - cur.dl;
  assign push     = sw_dec && sw_armed && 32'(sw_v) < WIN;
  assign push_rnr = cur.mode == M_RNR;
  always_ff @(posedge clk) begin
    if (rst) begin
      sw_dec <= 1'b0;
      sw_qpn <= '0;
    end else begin
      sw_dec <= sw_rd;
      if (sw_dec) sw_qpn <= sw_qpn + 1'b1;
    end
  end

  // ---- op write (even cycles)
  // exponent of the new timer: ACK 2^(attr+2) units; RNR from the code (see header)
  logic [5:0]      op_e;
  logic [4:0]      op_g;
  logic [ST_W-1:0] op_dl;
  logic            op_we;
  word_t           op_w;
  always_comb begin
    if (op_kind == K_RNR) op_e = (op_arg == 5'd0) ? 6'd20 : 6'd4 + 6'(op_arg[4:1]);
    else                  op_e = 6'(cur.attr) + 6'd2;
    op_g  = (op_e > 6'(RES_K)) ? 5'(op_e - 6'(RES_K)) : 5'd0;
    op_dl = ST_W'(now >> op_g) + (ST_W'(1) << (op_e - 6'(op_g))) + ST_W'(1);
    op_w      = cur;
    op_w.mode = M_OFF;
    op_w.g    = '0;
    op_w.dl   = '0;
    op_we     = op_v;
    if (op_cfg) begin
      op_w.attr = op_arg;
    end else begin
      case (op_kind)
        K_RESTART: begin
          if (cur.mode == M_RNR) op_we = 1'b0;          // an RNR wait is not touched
          else if (cur.attr != 5'd0) begin
            op_w.mode = M_ACK; op_w.g = op_g; op_w.dl = op_dl;
          end
        end
        K_RNR: begin
          op_w.mode = M_RNR; op_w.g = op_g; op_w.dl = op_dl;
        end
        K_RENEW: begin
          if (cur.mode != M_ACK) op_we = 1'b0;          // OFF stays off, an RNR wait untouched
          op_w.g = op_g; op_w.dl = op_dl; op_w.mode = M_ACK;
        end
        K_STOP: ;
        K_STOP_ACK: if (cur.mode == M_RNR) op_we = 1'b0;  // an RNR wait is not touched
        default: op_we = 1'b0;
      endcase
    end
  end

  // write port: the reset clear, else the sweeper (odd cycles) or the op (even cycles)
  word_t sw_w;
  always_comb begin
    sw_w      = cur;
    sw_w.mode = M_OFF;
    sw_w.g    = '0;
    sw_w.dl   = '0;
  end
  assign we    = init || push || op_we;
  assign waddr = init ? clr_addr : ph ? sw_qpn : op_qpn;
  assign wdata = init ? '0 : ph ? sw_w : op_w;

`ifndef SYNTHESIS
  // Assertions (verilator --assert): schedule, legal words, outputs.
  a_fire_hold: assert property (@(posedge clk) disable iff (rst)
    fire_valid && !fire_ready |=> fire_valid && $stable(fire_qpn) && $stable(fire_rnr))
    else $error("srnic_timer: fire withdrawn or changed before it was taken");
  a_no_cfg_of_offered: assert property (@(posedge clk) disable iff (rst)
    cfg_acc |-> !(fire_valid && fire_qpn == cfg_qpn))
    else $error("srnic_timer: cfg of QP %0d taken while its fire is offered", cfg_qpn);
  a_push_room: assert property (@(posedge clk) disable iff (rst)
    push |-> fifo_room)
    else $error("srnic_timer: fire for QP %0d pushed into a full FIFO", sw_qpn);
  a_no_fire_off: assert property (@(posedge clk) disable iff (rst)
    push |-> cur.mode == M_ACK || cur.mode == M_RNR)
    else $error("srnic_timer: fire for QP %0d whose timer is off", sw_qpn);
  a_mode_legal: assert property (@(posedge clk) disable iff (rst)
    sw_dec || op_v |-> cur.mode != 2'd3)
    else $error("srnic_timer: illegal mode in the word of QP %0d", sw_dec ? sw_qpn : op_qpn);
  a_g_legal: assert property (@(posedge clk) disable iff (rst)
    (sw_dec || op_v) && cur.mode != M_OFF |-> 32'(cur.g) <= 33 - RES_K)
    else $error("srnic_timer: step exponent %0d out of range", cur.g);
  a_slots: assert property (@(posedge clk) disable iff (rst)
    (!sw_dec || ph) && (!op_v || !ph) && !(init && (sw_dec || op_v || acc)))
    else $error("srnic_timer: sweeper/op slot out of phase");
  a_frozen_full: assert property (@(posedge clk) disable iff (rst)
    frozen && !ph |-> !fifo_room)
    else $error("srnic_timer: time stopped while the fire FIFO has room");
  a_fire_clean_init: assert property (@(posedge clk) disable iff (rst)
    init |-> !fire_valid && !push)
    else $error("srnic_timer: fire during the reset clear");
`endif
endmodule
`default_nettype wire
