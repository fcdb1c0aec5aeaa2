// srnic_rx_place: the placement stage of the RX engine. The classification stage
// (srnic_rx_engine) decides what a packet does and hands it over as a job (rx_job_t);
// this stage takes the packet's frame beats from the RX buffer, writes its payload to host
// memory, and then emits what the packet produces (responder task, receive completion,
// completion engine event), so the classification of the next packets overlaps the
// placement of this one.
//
// Jobs wait in a ring of JOBS entries with three pointers: written (wr), placed up to
// (mv) and emitted up to (em). The mover works on the entry at mv: it realigns frame bytes
// (payload at frame offset pay_off) to the destination address at one beat per cycle,
// with write strobes on partial beats and bursts split at 4 KiB boundaries, then drops
// the frame's remaining beats; a job without payload only drops its beats. The emitter
// works on the entry at em once it is placed: its task, CQE and event are offered
// together and the entry is freed when every one it has was taken. Outputs therefore
// leave in job order, and each after its own payload and every earlier payload is
// written.
//
// The mover never waits for the emitter (a placed entry stays in the ring until
// emitted), so a payload is written whatever the consumers of tasks, completions and
// events do; srnic_comp relies on it: it holds a failed READ's completion while rdq_busy
// says a READ response of that QP is not yet placed (asked by QPN, combinationally).
// The classification stage pushes a job only when job_ready (the ring has a free entry);
// it checks for the free entry before it takes a packet, so it never waits here.
`default_nettype none
module srnic_rx_place #(
  parameter int NUM_QPS = 16384,
  parameter int JOBS    = 4        // ring entries (a power of two)
) (
  input  wire logic         clk,
  input  wire logic         rst,
  // jobs from the classification stage
  input  wire logic         job_valid,
  input  var srnic_pkg::rx_job_t job_in,
  output logic              job_ready,
  // the placement part of the job the classification stage pushes in the next cycle (its
  // outputs are not decided yet): a mover without work starts on it at once
  input  wire logic         pre_valid,
  input  var srnic_pkg::rx_job_t pre_job,
  // frame beats (RX buffer)
  input  wire logic         d_valid,
  input  wire logic [511:0] d_data,
  output logic              d_ready,
  // payload writes
  output logic              aw_valid,
  output logic [63:0]       aw_addr,
  output logic [7:0]        aw_len,
  input  wire logic         aw_ready,
  output logic              w_valid,
  output logic [511:0]      w_data,
  output logic [63:0]       w_strb,
  output logic              w_last,
  input  wire logic         w_ready,
  // outputs of placed jobs
  output logic              task_valid,
  output srnic_pkg::resp_task_t task_out,
  input  wire logic         task_ready,
  output logic              cqe_valid,
  output srnic_pkg::cqe_req_t cqe,
  input  wire logic         cqe_ready,
  output logic              cev_valid,
  output srnic_pkg::comp_ev_t cev,
  input  wire logic         cev_ready,
  // is a READ response of rdq_qpn in the ring and not yet placed (combinational)
  input  wire logic [$clog2(NUM_QPS)-1:0] rdq_qpn,
  output logic              rdq_busy,
  output logic              idle,     // no job in the ring
  output logic              mv_busy   // the mover works on a job (performance counter)
);
  localparam int AW = $clog2(NUM_QPS);
  localparam int PW = $clog2(JOBS);

  // ---------------------------------------------------------------- ring
  srnic_pkg::rx_job_t ring [JOBS];
  logic [PW:0] wr_ptr, mv_ptr, em_ptr;
  assign job_ready = (wr_ptr - em_ptr) != (PW + 1)'(JOBS);
  assign idle      = wr_ptr == em_ptr;
  wire   job_push  = job_valid && job_ready;
  // per entry, for rdq_busy: a READ response's payload to place, and its QP
  logic [JOBS-1:0]   rd_pl;
  logic [AW-1:0]     rd_qpn [JOBS];
  always_ff @(posedge clk) if (job_push) begin
    ring[wr_ptr[PW-1:0]]   <= job_in;
    rd_pl[wr_ptr[PW-1:0]]  <= job_in.rd && job_in.place;
    rd_qpn[wr_ptr[PW-1:0]] <= job_in.qpn[AW-1:0];
  end

  // a READ response's payload in the ring, not yet placed: entries [mv, wr)
  wire [PW:0] n_unplaced = wr_ptr - mv_ptr;
  always_comb begin
    rdq_busy = 1'b0;
    for (int i = 0; i < JOBS; i++) begin
      // entry i is unplaced when (i - mv) mod JOBS < wr - mv
      if ((PW + 1)'(PW'(PW'(i) - mv_ptr[PW-1:0])) < n_unplaced && rd_pl[i] && rd_qpn[i] == rdq_qpn)
        rdq_busy = 1'b1;
    end
  end

  // ---------------------------------------------------------------- mover
  typedef enum logic [1:0] {P_IDLE, P_MOVE, P_DRAIN} pstate_e;
  pstate_e ps;
  assign mv_busy = ps != P_IDLE;
  // The job at mv; when the ring holds no unplaced job, the one pushed in this cycle starts at
  // once (it is written to the ring at the same edge, at mv), and without a push, a payload
  // announced for the next cycle (pre_*) starts now: it is pushed, at mv, while it is moved.
  srnic_pkg::rx_job_t mj;
  wire   mv_has = mv_ptr != wr_ptr;
  wire   mv_pre = !mv_has && !job_push && pre_valid && pre_job.place;
  assign mj = mv_has ? ring[mv_ptr[PW-1:0]] : job_push ? job_in : pre_job;
  wire   mv_any = mv_has || job_push || mv_pre;
  logic [7:0]   beats_left;                // frame beats of the job at mv still in the RX buffer

  // Output beat j carries frame bytes [64j + delta, 64j + delta + 64) where
  // delta = pay_off - dst[5:0]; it is built from a two-beat window (lo, hi).
  logic         mv_active, mv_aw_pend;
  logic [511:0] win_lo, win_hi;
  logic [5:0]   mv_r;              // delta mod 64
  logic [7:0]   mv_out_left;       // output beats to send
  logic [7:0]   mv_burst_left;     // beats left in the current burst
  logic [63:0]  mv_addr;           // next burst address (aligned)
  logic [7:0]   mv_aw_left;        // beats not yet covered by an AW
  logic         mv_first;
  logic [6:0]   mv_last_bytes;     // valid bytes in the last output beat (1..64)
  logic [5:0]   mv_d0;
  logic         mv_need_fill;      // the window needs another frame beat before output
  logic         skip_first, fill_lo;

  wire [7:0]    burst_len = ({1'b0, 7'd64 - {1'b0, mv_addr[11:6]}} < mv_aw_left) ?
                            {1'b0, 7'd64 - {1'b0, mv_addr[11:6]}} : mv_aw_left;
  assign aw_valid = mv_active && mv_aw_pend;
  assign aw_addr  = mv_addr;
  assign aw_len   = burst_len - 8'd1;
  wire [1023:0] win = {win_hi, win_lo};
  assign w_data   = 512'(win >> {mv_r, 3'd0});
  logic [63:0] strb_first, strb_last;
  always_comb begin
    strb_first = {64{1'b1}} << mv_d0;
    strb_last  = (mv_last_bytes == 7'd64) ? {64{1'b1}} : ~({64{1'b1}} << mv_last_bytes[5:0]);
    w_strb = {64{1'b1}};
    if (mv_first) w_strb = w_strb & strb_first;
    if (mv_out_left == 8'd1) w_strb = w_strb & strb_last;
  end
  assign w_valid = mv_active && !mv_aw_pend && !mv_need_fill && mv_burst_left != 8'd0;
  assign w_last  = mv_burst_left == 8'd1;
  wire   w_fire  = w_valid && w_ready;
  wire   w_end   = w_fire && mv_out_left == 8'd1;     // the job's last payload beat
  // frame beats feed the window while moving, and are dropped after it
  wire   mv_fill = mv_active && mv_need_fill && d_valid && beats_left != 8'd0;
  assign d_ready = mv_fill || (ps == P_DRAIN && beats_left != 8'd0) ||
                   (mv_active && !mv_need_fill && w_fire && beats_left != 8'd0 && mv_out_left != 8'd1);
  // the job at mv is placed (and its beats taken) in this cycle
  wire   mv_done = (ps == P_IDLE && mv_any && !mj.place && mj.nbeats == 8'd0) ||
                   (ps == P_MOVE && w_end && beats_left == 8'd0) ||
                   (ps == P_DRAIN && (beats_left == 8'd0 || (beats_left == 8'd1 && d_valid)));

  wire [7:0]  st_delta = {1'b0, mj.pay_off} - {2'b0, mj.dst[5:0]};   // -63..74 in two's complement
  wire [13:0] st_span  = {8'd0, mj.dst[5:0]} + {1'b0, mj.pay_len} + 14'd63;

  always_ff @(posedge clk) begin
    if (rst) begin
      ps <= P_IDLE; mv_active <= 1'b0; beats_left <= '0; skip_first <= 1'b0; fill_lo <= 1'b0;
      mv_ptr <= '0;
    end else begin
      if (mv_done) mv_ptr <= mv_ptr + 1'b1;
      // ---------------- window
      if (mv_fill) begin
        beats_left <= beats_left - 8'd1;
        if (skip_first) skip_first <= 1'b0;
        else if (fill_lo) begin win_lo <= d_data; fill_lo <= 1'b0; end
        else begin win_hi <= d_data; mv_need_fill <= 1'b0; end
      end else if (mv_active && mv_need_fill && beats_left == 8'd0) begin
        // the frame has no more beats: the rest of the window is zero
        if (fill_lo) begin win_lo <= '0; fill_lo <= 1'b0; end
        else begin win_hi <= '0; mv_need_fill <= 1'b0; end
      end
      if (aw_valid && aw_ready) begin
        mv_aw_pend    <= 1'b0;
        mv_burst_left <= burst_len;
        mv_addr       <= mv_addr + {50'd0, burst_len, 6'd0};
        mv_aw_left    <= mv_aw_left - burst_len;
      end
      if (w_fire) begin
        mv_first      <= 1'b0;
        mv_out_left   <= mv_out_left - 8'd1;
        mv_burst_left <= mv_burst_left - 8'd1;
        if (w_last && mv_aw_left != 8'd0) mv_aw_pend <= 1'b1;
        if (mv_out_left == 8'd1) mv_active <= 1'b0;
        else begin
          // slide the window
          win_lo <= win_hi;
          if (beats_left != 8'd0 && d_valid) begin
            win_hi <= d_data; beats_left <= beats_left - 8'd1;
          end else if (beats_left != 8'd0) begin
            mv_need_fill <= 1'b1;     // hi comes with the next beat
          end else begin
            win_hi <= '0;
          end
        end
      end
      // ---------------- job sequencing
      case (ps)
        P_IDLE: if (mv_any && !mv_done) begin
          beats_left <= mj.nbeats;
          if (mj.place) begin
            mv_active     <= 1'b1;
            mv_aw_pend    <= 1'b1;
            mv_addr       <= {mj.dst[63:6], 6'd0};
            mv_out_left   <= 8'(st_span >> 6);
            mv_aw_left    <= 8'(st_span >> 6);
            mv_burst_left <= 8'd0;
            mv_first      <= 1'b1;
            mv_d0         <= mj.dst[5:0];
            mv_last_bytes <= 7'(({8'd0, mj.dst[5:0]} + {1'b0, mj.pay_len} - 14'd1) & 14'h3F) + 7'd1;
            mv_r          <= st_delta[5:0];
            mv_need_fill  <= 1'b1;
            // window start: frame beat floor(delta/64) in lo
            if (st_delta[7]) begin               // delta < 0: lo is the zeros before the frame
              win_lo <= '0; skip_first <= 1'b0; fill_lo <= 1'b0;
            end else if (st_delta[6]) begin      // delta >= 64: beat 0 holds no payload
              skip_first <= 1'b1; fill_lo <= 1'b1;
            end else begin
              skip_first <= 1'b0; fill_lo <= 1'b1;
            end
            ps <= P_MOVE;
          end else ps <= P_DRAIN;
        end
        P_MOVE: if (w_end) ps <= mv_done ? P_IDLE : P_DRAIN;
        P_DRAIN: begin
          if (d_valid && beats_left != 8'd0) beats_left <= beats_left - 8'd1;
          if (mv_done) ps <= P_IDLE;
        end
        default: ps <= P_IDLE;
      endcase
    end
  end

  // ---------------------------------------------------------------- emitter
  srnic_pkg::rx_job_t ej;                  // the job at em
  assign ej = ring[em_ptr[PW-1:0]];
  wire   em_has = em_ptr != mv_ptr;        // placed
  logic  task_sent, cqe_sent, cev_sent;
  assign task_valid = em_has && ej.has_task && !task_sent;
  assign cqe_valid  = em_has && ej.has_cqe && !cqe_sent;
  assign cev_valid  = em_has && ej.has_cev && !cev_sent;
  assign task_out   = ej.task_;
  assign cqe        = ej.cqe;
  assign cev        = ej.cev;
  wire   em_done    = em_has && (!task_valid || task_ready) && (!cqe_valid || cqe_ready) &&
                      (!cev_valid || cev_ready);
  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr <= '0; em_ptr <= '0; task_sent <= 1'b0; cqe_sent <= 1'b0; cev_sent <= 1'b0;
    end else begin
      if (job_push) wr_ptr <= wr_ptr + 1'b1;
      if (em_done) begin
        em_ptr <= em_ptr + 1'b1;
        task_sent <= 1'b0; cqe_sent <= 1'b0; cev_sent <= 1'b0;
      end else begin
        if (task_valid && task_ready) task_sent <= 1'b1;
        if (cqe_valid && cqe_ready) cqe_sent <= 1'b1;
        if (cev_valid && cev_ready) cev_sent <= 1'b1;
      end
    end
  end

  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = ^{mj, ej};   // each side reads its own fields of the entry
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): the classification stage pushes only into a free entry;
  // AXI AW/W rules; outputs held until taken; no beat taken beyond the frame.
  a_push_room: assert property (@(posedge clk) disable iff (rst)
    job_valid |-> job_ready)
    else $error("srnic_rx_place: job pushed into a full ring");
  a_ptr_order: assert property (@(posedge clk) disable iff (rst)
    (PW + 1)'(mv_ptr - em_ptr) <= (PW + 1)'(wr_ptr - em_ptr) && (PW + 1)'(wr_ptr - em_ptr) <= (PW + 1)'(JOBS))
    else $error("srnic_rx_place: ring pointers out of order");
  a_aw_hold: assert property (@(posedge clk) disable iff (rst)
    aw_valid && !aw_ready |=> aw_valid && $stable(aw_addr) && $stable(aw_len))
    else $error("srnic_rx_place: AW withdrawn or changed before it was taken");
  a_aw_no_4k_cross: assert property (@(posedge clk) disable iff (rst)
    aw_valid |-> {7'd0, aw_addr[11:6]} + {5'd0, aw_len} < 13'd64)
    else $error("srnic_rx_place: write burst crosses a 4 KiB boundary");
  a_w_hold: assert property (@(posedge clk) disable iff (rst)
    w_valid && !w_ready |=> w_valid && $stable(w_data) && $stable(w_strb) && $stable(w_last))
    else $error("srnic_rx_place: W beat withdrawn or changed before it was taken");
  a_w_strb_nonzero: assert property (@(posedge clk) disable iff (rst)
    w_valid |-> w_strb != '0)
    else $error("srnic_rx_place: W beat without a byte to write");
  a_task_hold: assert property (@(posedge clk) disable iff (rst)
    task_valid && !task_ready |=> task_valid && $stable(task_out))
    else $error("srnic_rx_place: responder task withdrawn or changed before it was taken");
  a_cqe_hold: assert property (@(posedge clk) disable iff (rst)
    cqe_valid && !cqe_ready |=> cqe_valid && $stable(cqe))
    else $error("srnic_rx_place: receive CQE withdrawn or changed before it was taken");
  a_cev_hold: assert property (@(posedge clk) disable iff (rst)
    cev_valid && !cev_ready |=> cev_valid && $stable(cev))
    else $error("srnic_rx_place: completion event withdrawn or changed before it was taken");
  a_d_only_valid: assert property (@(posedge clk) disable iff (rst)
    d_ready |-> beats_left != 8'd0)
    else $error("srnic_rx_place: frame beat taken beyond the frame");
  a_move_only_moving: assert property (@(posedge clk) disable iff (rst)
    mv_active |-> ps == P_MOVE)
    else $error("srnic_rx_place: mover active outside P_MOVE");
`endif
endmodule
`default_nettype wire
