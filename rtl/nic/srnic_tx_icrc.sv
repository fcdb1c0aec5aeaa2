// srnic_tx_icrc: appends the ICRC to each frame from srnic_tx_pkt. Frames pass through
// a short FIFO while srnic_icrc_calc runs over them; a frame's last beat leaves only when
// its ICRC is known. The 4 ICRC bytes (least significant first) extend the last beat, or
// spill into one extra beat when the last beat holds more than 60 bytes.
// Fatal (decision 108): an ICRC computed while `fatal` is high is queued inverted and its
// frame's last beat leaves with TUSER set (a MAC sends it with a bad FCS), so no peer accepts
// a frame that may hold data read after a failed DMA read: such data reaches this stage at the
// earliest one cycle after the error, and its ICRC one cycle after that, when `fatal` is high.
// A frame that would start while `fatal` is high is discarded whole (never offered).
// A frame of a QP reset since its packet job was made (its incarnation, s_tgen, differs from
// the QP's current one, gen_cur: decision 109) is discarded the same way, when it would start
// on the output: nothing queued for a QP's earlier incarnation leaves after the reset.
`default_nettype none
module srnic_tx_icrc #(
  parameter int DEPTH = 16
) (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic         fatal,    // the NIC's fatal latch (registered)
  input  wire logic [511:0] s_tdata,
  input  wire logic [63:0]  s_tkeep,
  input  wire logic         s_tlast,
  input  wire logic         s_tvalid,
  input  wire logic [srnic_pkg::QPN_W-1:0] s_tqpn,   // the frame's QP and incarnation (first beat)
  input  wire logic [srnic_pkg::GEN_W-1:0] s_tgen,
  output logic              s_tready,
  output logic [511:0]      m_tdata,
  output logic [63:0]       m_tkeep,
  output logic              m_tlast,
  output logic              m_tvalid,
  output logic              m_tuser,  // on a last beat: the frame is bad (its ICRC inverted)
  input  wire logic         m_tready,
  output logic              frame_sent,
  output logic [srnic_pkg::QPN_W-1:0] gen_qpn,        // the QP of the frame at the output
  input  wire logic [srnic_pkg::GEN_W-1:0] gen_cur,   // its current incarnation
  output logic              stale_drop              // a frame discarded as stale
);
  logic in_sof;   // next input beat starts a frame
  wire  in_fire = s_tvalid && s_tready;
  always_ff @(posedge clk) begin
    if (rst) in_sof <= 1'b1;
    else if (in_fire) in_sof <= s_tlast;
  end

  logic        crc_v;
  logic [31:0] crc;
  srnic_icrc_calc u_calc (.clk, .rst, .in_valid(in_fire), .in_sof(in_sof), .in_data(s_tdata),
                          .crc_valid(crc_v), .crc);

  logic [31:0] cq_crc;
  logic        cq_bad;   // inverted: computed while fatal
  logic        cq_valid, cq_pop;
  // one ICRC per frame whose last beat can be in the beat FIFO
  sync_fifo #(.WIDTH(33), .DEPTH(DEPTH)) u_crcq (
    .clk, .rst, .s_data({fatal, fatal ? ~crc : crc}), .s_valid(crc_v), .s_ready(),
    .m_data({cq_bad, cq_crc}), .m_valid(cq_valid), .m_ready(cq_pop), .count());

  // one QP and incarnation per frame that can be in the beat FIFO
  logic [srnic_pkg::GEN_W-1:0] fq_gen;
  logic        fq_valid;
  logic        fq_pop;
  sync_fifo #(.WIDTH(srnic_pkg::QPN_W + srnic_pkg::GEN_W), .DEPTH(DEPTH)) u_frq (
    .clk, .rst, .s_data({s_tqpn, s_tgen}), .s_valid(in_fire && in_sof), .s_ready(),
    .m_data({gen_qpn, fq_gen}), .m_valid(fq_valid), .m_ready(fq_pop), .count());

  logic [511:0] f_data;
  logic [63:0]  f_keep;
  logic         f_last, f_valid, f_pop;
  sync_fifo #(.WIDTH(512 + 64 + 1), .DEPTH(DEPTH)) u_beats (
    .clk, .rst, .s_data({s_tdata, s_tkeep, s_tlast}), .s_valid(s_tvalid), .s_ready(s_tready),
    .m_data({f_data, f_keep, f_last}), .m_valid(f_valid), .m_ready(f_pop), .count());

  // bytes in the last beat (tkeep is contiguous from byte 0)
  wire [6:0] nbytes = 7'($countones(f_keep));
  wire       spill  = nbytes > 7'd60;
  logic      extra;          // sending the spill beat
  logic      spill_bad;
  logic [31:0] spill_crc;
  // output framing: the next beat starts a frame; the frame being passed on is discarded; the
  // beat offered last cycle was not taken (a frame offered is finished, fatal or not)
  logic      o_sof, o_mute, o_held;
  wire       stale_now = fq_valid && fq_gen != gen_cur;
  wire       mute_now = o_sof ? ((fatal || stale_now) && !o_held) : o_mute;
  assign     fq_pop = f_pop && f_last;
  assign     stale_drop = o_sof && f_pop && mute_now && stale_now && !fatal;
  logic [2:0]  spill_n;      // ICRC bytes left for the spill beat (1..4)

  logic [511:0] ins_data;
  logic [63:0]  ins_keep;
  always_comb begin
    ins_data = f_data;
    ins_keep = f_keep;
    for (int i = 0; i < 4; i++) begin
      if (nbytes + 7'(i) < 7'd64) begin
        ins_data[(nbytes + 7'(i)) * 8 +: 8] = cq_crc[i*8 +: 8];
        ins_keep[6'(nbytes + 7'(i))] = 1'b1;
      end
    end
  end

  always_comb begin
    m_tdata = f_data; m_tkeep = f_keep; m_tlast = 1'b0; m_tvalid = 1'b0; m_tuser = 1'b0;
    f_pop = 1'b0; cq_pop = 1'b0;
    if (extra) begin
      m_tvalid = 1'b1;
      m_tdata  = {480'd0, spill_crc >> {3'd4 - spill_n, 3'd0}};
      m_tkeep  = ~(64'hFFFF_FFFF_FFFF_FFFF << {3'd0, spill_n});
      m_tlast  = 1'b1;
      m_tuser  = spill_bad;
    end else if (mute_now) begin
      // discarded: its beats (and at the end its ICRC) are dropped, nothing is offered
      f_pop  = f_valid && (!f_last || cq_valid);
      cq_pop = f_valid && f_last && cq_valid;
    end else if (f_valid && !f_last) begin
      m_tvalid = 1'b1;
      f_pop    = m_tready;
    end else if (f_valid && f_last && cq_valid) begin
      m_tvalid = 1'b1;
      m_tdata  = ins_data;
      m_tkeep  = ins_keep;
      m_tlast  = !spill;
      m_tuser  = !spill && cq_bad;
      f_pop    = m_tready;
      cq_pop   = m_tready;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      extra <= 1'b0;
    end else if (extra) begin
      if (m_tready) extra <= 1'b0;
    end else if (f_valid && f_last && cq_valid && m_tready && spill && !mute_now) begin
      extra     <= 1'b1;
      spill_crc <= cq_crc;
      spill_bad <= cq_bad;
      spill_n   <= 3'(nbytes - 7'd60);
    end
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      o_sof <= 1'b1; o_mute <= 1'b0; o_held <= 1'b0;
    end else begin
      o_held <= m_tvalid && !m_tready;
      if (f_pop) begin o_sof <= f_last; o_mute <= mute_now; end
    end
  end
  assign frame_sent = m_tvalid && m_tready && m_tlast;

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AXI-Stream output rules, ICRC queue bound.
  a_tx_hold: assert property (@(posedge clk) disable iff (rst)
    m_tvalid && !m_tready |=> m_tvalid && $stable(m_tdata) && $stable(m_tkeep) && $stable(m_tlast))
    else $error("srnic_tx_icrc: TVALID dropped or beat changed before TREADY");
  a_tx_keep_nonzero: assert property (@(posedge clk) disable iff (rst)
    m_tvalid |-> m_tkeep != '0 && (m_tlast || m_tkeep == '1))
    else $error("srnic_tx_icrc: empty beat, or a partial beat that is not the last of its frame");
  a_crcq_no_overflow: assert property (@(posedge clk) disable iff (rst)
    crc_v |-> u_crcq.s_ready)
    else $error("srnic_tx_icrc: ICRC queue overflow (an ICRC lost)");
  a_fatal_no_new_frame: assert property (@(posedge clk) disable iff (rst)
    m_tvalid && o_sof && !extra && fatal |-> o_held)
    else $error("srnic_tx_icrc: a frame started while fatal");
  a_frame_tagged: assert property (@(posedge clk) disable iff (rst)
    f_valid |-> fq_valid)
    else $error("srnic_tx_icrc: a frame without its QP and incarnation");
  a_frq_no_overflow: assert property (@(posedge clk) disable iff (rst)
    in_fire && in_sof |-> u_frq.s_ready)
    else $error("srnic_tx_icrc: frame tag queue overflow");
  a_spill_bytes: assert property (@(posedge clk) disable iff (rst)
    extra |-> spill_n >= 3'd1 && spill_n <= 3'd4)
    else $error("srnic_tx_icrc: spill beat with %0d ICRC bytes", spill_n);
`endif
endmodule
`default_nettype wire
