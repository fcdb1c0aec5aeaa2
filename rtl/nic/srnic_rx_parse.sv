// srnic_rx_parse: receive front end. Frames from the MAC (no back-pressure possible) are
// written into the RX buffer while their headers are checked and their ICRC computed.
// Every stored frame gets a meta record; it is marked good only if everything holds:
//   no MAC error (tuser), EtherType IPv4, version 4 / IHL 5 / no fragment, valid header
//   checksum, UDP, destination IP and MAC ours, UDP port 4791, UDP length = IP length - 20,
//   frame at least as long as the IP length says, BTH TVer 0, P_Key 0xFFFF-class, known
//   RC opcode, headers and pad fitting the length, payload <= 4096, the frame no longer
//   than MAX_BEATS beats (the longest legal RoCEv2 frame is 66 beats; beats beyond
//   MAX_BEATS are not stored, so a giant frame cannot wrap the beat counters) and the ICRC.
// Otherwise the record says drop: the RX engine discards the frame's beats unread, and
// the frame is counted as bad ICRC, malformed or overflow. A frame that finds the buffer
// or the record queue full at its first beat is not stored at all (overflow); one that
// fills the buffer midway is stored in part and dropped.
//
// Flow control: rx_pause asks the link partner to stop sending (802.3x/PFC XOFF, what a
// lossless RoCE fabric relies on) while the buffer holds more than PAUSE_ON beats or the
// record queue is half full, and releases it (XON) below PAUSE_OFF and a quarter. PAUSE_ON
// leaves room for what is already on the way when the partner reacts: this side's frame in
// progress and its pause frame, two cable delays, the partner's frame in progress. The record
// queue must not be the tighter of the two: every frame takes at least one beat, so with
// MDEPTH = DEPTH records run out no sooner than beats (with 256 records for 1024 beats, a run
// of one-beat ACKs and SENDs overflowed the records with half the beats free).
// docs/architecture.md derives the longest cable this headroom covers.
`default_nettype none
module srnic_rx_parse #(
  parameter int DEPTH = 1024,     // RX buffer in 64-byte beats
  parameter int MDEPTH = DEPTH,   // records (one per frame)
  parameter int PAUSE_ON  = DEPTH / 2,
  parameter int PAUSE_OFF = DEPTH / 4,
  parameter int MAX_BEATS = 128   // longer frames are dropped as malformed (at most 255)
) (
  input  wire logic         clk,
  input  wire logic         rst,
  input  wire logic [47:0]  local_mac,
  input  wire logic [31:0]  local_ip,
  input  wire logic [511:0] s_tdata,
  input  wire logic [63:0]  s_tkeep,
  input  wire logic         s_tlast,
  input  wire logic         s_tuser,
  input  wire logic         s_tvalid,
  // parsed packets
  output logic              meta_valid,
  output srnic_pkg::rx_meta_t meta,
  input  wire logic         meta_ready,
  // frame beats
  output logic              d_valid,
  output logic [511:0]      d_data,
  input  wire logic         d_ready,
  // counters
  output logic              cnt_rx_frame,
  output logic              cnt_drop_icrc,
  output logic              cnt_drop_malformed,
  output logic              cnt_drop_overflow,
  output logic              rx_pause
);
  localparam int AW = $clog2(DEPTH);

  // ---------------------------------------------------------------- RX buffer
  logic [511:0] mem [DEPTH];
  logic [AW:0]  wr_ptr, wr_spec, rd_ptr;
  wire          full = (wr_spec - rd_ptr) == DEPTH[AW:0];

  // ---------------------------------------------------------------- frame state
  logic         in_frame;     // beats after the first
  logic [7:0]   nbeats;
  logic [1023:0] hdr;         // first two beats
  logic         err_user, ovf;
  logic         acc;          // this frame is being stored
  logic [7:0]   stored;       // beats stored (at most MAX_BEATS)
  logic         too_long;     // the frame has more than MAX_BEATS beats
  logic [$clog2(MDEPTH):0] meta_count;
  // a new frame is stored only if its record is sure to find room (at most two frames
  // are between their first beat and their record)
  wire          acc_new = !full && meta_count < MDEPTH[$clog2(MDEPTH):0] - 2;
  wire          acc_cur = sof ? acc_new : acc;
  wire          long_cur = !sof && (too_long || nbeats >= 8'(MAX_BEATS));
  wire          wr_beat = s_tvalid && acc_cur && !full && !long_cur;
  logic [16:0]  e_end;        // covered end offset
  logic [31:0]  icrc_rx;
  logic [13:0]  flen;         // frame bytes (saturating at 16383)
  wire          sof = !in_frame;
  wire [6:0]    nb_keep = 7'($countones(s_tkeep));
  wire [15:0]   ip_len0 = {s_tdata[16*8 +: 8], s_tdata[17*8 +: 8]};
  wire [16:0]   e_cur = sof ? (17'd14 + {1'b0, ip_len0} - 17'd4) : e_end;
  wire [7:0]    bidx = sof ? 8'd0 : nbeats;

  logic         crc_v;
  logic [31:0]  crc;
  srnic_icrc_calc u_calc (.clk, .rst, .in_valid(s_tvalid), .in_sof(sof), .in_data(s_tdata),
                          .crc_valid(crc_v), .crc);

  // capture the received ICRC bytes at [E, E+4)
  logic [31:0] icrc_next;
  always_comb begin
    icrc_next = sof ? 32'd0 : icrc_rx;
    for (int i = 0; i < 4; i++) begin
      logic [16:0] pos;
      pos = e_cur + 17'(i);
      if (pos[16:6] == {3'd0, bidx}) icrc_next[i*8 +: 8] = s_tdata[pos[5:0]*8 +: 8];
    end
  end

  // verdict pipeline: the frame's end is registered, the ICRC result follows by <= 1 cycle
  logic         v_pend;       // a finished frame waits for its verdict
  logic         v_crc_seen;
  logic [31:0]  v_crc;
  logic [1023:0] v_hdr;
  logic         v_user, v_ovf;
  logic [16:0]  v_e;
  logic [31:0]  v_icrc;
  logic [13:0]  v_flen;
  logic [7:0]   v_nbeats;
  logic         v_acc;

  always_ff @(posedge clk) begin
    if (rst) begin
      in_frame <= 1'b0; wr_spec <= '0; v_pend <= 1'b0; v_crc_seen <= 1'b0;
    end else begin
      // verdict slot: freed by a decision, refilled by the next frame's end
      if (v_decide) begin v_pend <= 1'b0; v_crc_seen <= 1'b0; end
      else if (crc_v) begin v_crc <= crc; v_crc_seen <= 1'b1; end
      if (s_tvalid) begin
        if (wr_beat) begin
          mem[wr_spec[AW-1:0]] <= s_tdata;
          wr_spec <= wr_spec + 1'b1;
        end
        in_frame <= !s_tlast;
        acc      <= acc_cur;
        stored   <= (sof ? 8'd0 : stored) + (wr_beat ? 8'd1 : 8'd0);
        nbeats   <= (bidx == 8'hFF) ? bidx : bidx + 8'd1;    // saturates: no wrap onto beat 1
        too_long <= long_cur;
        icrc_rx  <= icrc_next;
        if (sof) begin
          hdr[511:0] <= s_tdata;
          err_user <= s_tuser;
          ovf      <= 1'b0;
          e_end    <= e_cur;
          flen     <= {7'd0, nb_keep};
        end else begin
          if (nbeats == 8'd1) hdr[1023:512] <= s_tdata;
          err_user <= err_user | s_tuser;
          ovf      <= ovf | (acc && full);
          flen     <= (flen > 14'd16000) ? flen : flen + {7'd0, nb_keep};
        end
        if (s_tlast) begin
          v_pend    <= 1'b1;
          v_hdr     <= sof ? {512'd0, s_tdata} : (nbeats == 8'd1 ? {s_tdata, hdr[511:0]} : hdr);
          v_user    <= sof ? s_tuser : (err_user | s_tuser | long_cur);
          v_ovf     <= sof ? 1'b0 : (ovf | (acc && full));
          v_acc     <= acc_cur;
          v_e       <= e_cur;
          v_icrc    <= icrc_next;
          v_flen    <= sof ? {7'd0, nb_keep} : ((flen > 14'd16000) ? flen : flen + {7'd0, nb_keep});
          v_nbeats  <= (sof ? 8'd0 : stored) + (wr_beat ? 8'd1 : 8'd0);
        end
      end
    end
  end

  // The verdict is taken when the ICRC result is in (or cannot come: short frame, MAC
  // error, not stored), at most one cycle after the frame's last beat, so it is always
  // taken before the next frame ends and one verdict slot suffices. An ICRC result that
  // arrives before the frame's last beat (trailing bytes) is held in v_crc.
  wire        crc_now   = crc_v || v_crc_seen;
  wire [31:0] crc_val   = crc_v ? crc : v_crc;
  wire        short_fr  = {3'd0, v_flen} < v_e + 17'd4;
  wire        v_decide  = v_pend && (crc_now || short_fr || v_user || v_ovf || !v_acc);

  // header checks on the registered first two beats
  wire [15:0] ethertype = 16'(srnic_pkg::get_be(v_hdr, 12, 2));
  wire [7:0]  ver_ihl   = v_hdr[14*8 +: 8];
  wire [15:0] ip_len    = 16'(srnic_pkg::get_be(v_hdr, 16, 2));
  wire [15:0] frag      = 16'(srnic_pkg::get_be(v_hdr, 20, 2));
  wire [7:0]  proto     = v_hdr[23*8 +: 8];
  wire [31:0] dip       = 32'(srnic_pkg::get_be(v_hdr, 30, 4));
  wire [31:0] sip       = 32'(srnic_pkg::get_be(v_hdr, 26, 4));
  wire [47:0] dmac      = 48'(srnic_pkg::get_be(v_hdr, 0, 6));
  wire [15:0] dport     = 16'(srnic_pkg::get_be(v_hdr, 36, 2));
  wire [15:0] ulen      = 16'(srnic_pkg::get_be(v_hdr, 38, 2));
  wire [7:0]  opcode    = v_hdr[srnic_pkg::BTH_OFF*8 +: 8];
  wire [7:0]  bth1      = v_hdr[(srnic_pkg::BTH_OFF+1)*8 +: 8];
  wire [14:0] pkey      = 15'(srnic_pkg::get_be(v_hdr, srnic_pkg::BTH_OFF + 2, 2));
  wire [1:0]  padcnt    = bth1[5:4];   // bth1[6] (MigReq) is ignored
  wire [4:0]  ext_len   = srnic_pkg::op_ext_len(opcode);
  logic [19:0] csum;
  always_comb begin
    csum = '0;
    for (int i = 0; i < 10; i++) csum = csum + 20'(16'(srnic_pkg::get_be(v_hdr, 14 + 2*i, 2)));
    csum = {4'd0, csum[15:0]} + {16'd0, csum[19:16]};
    csum = {4'd0, csum[15:0]} + {16'd0, csum[19:16]};
  end
  wire [16:0] min_ip = 17'(srnic_pkg::IP_HDR + srnic_pkg::UDP_HDR + srnic_pkg::BTH_HDR + 4) + {12'd0, ext_len} + {15'd0, padcnt};
  wire [16:0] pay17  = {1'b0, ip_len} - min_ip;
  wire hdr_ok = ethertype == 16'h0800 && ver_ihl == 8'h45 && (frag & 16'h3FFF) == 16'd0 &&
                csum[15:0] == 16'hFFFF && proto == 8'd17 && dip == local_ip && dmac == local_mac &&
                dport == srnic_pkg::ROCE_UDP_PORT && ulen == ip_len - 16'd20 &&
                bth1[3:0] == 4'd0 && pkey == 15'h7FFF && srnic_pkg::op_known(opcode) &&
                {1'b0, ip_len} >= min_ip && pay17 <= 17'd4096 && !short_fr;
  wire icrc_ok = crc_now && crc_val == v_icrc;
  wire v_good  = v_acc && !v_user && !v_ovf && hdr_ok && icrc_ok;

  // meta record
  srnic_pkg::rx_meta_t m_in;
  always_comb begin
    m_in = '0;
    m_in.opcode   = opcode;
    m_in.dqpn     = 24'(srnic_pkg::get_be(v_hdr, srnic_pkg::BTH_OFF + 5, 3));
    m_in.psn      = 24'(srnic_pkg::get_be(v_hdr, srnic_pkg::BTH_OFF + 9, 3));
    m_in.ackreq   = v_hdr[(srnic_pkg::BTH_OFF+8)*8 + 7];
    m_in.se       = bth1[7];
    m_in.src_ip   = sip;
    m_in.pay_off  = 7'(srnic_pkg::EXT_OFF) + {2'd0, ext_len};
    m_in.pay_len  = pay17[12:0];
    m_in.nbeats   = v_nbeats;
    m_in.drop     = !v_good;
    if (srnic_pkg::op_has_reth(opcode)) begin
      m_in.reth_va   = srnic_pkg::get_be(v_hdr, srnic_pkg::EXT_OFF, 8);
      m_in.reth_rkey = 32'(srnic_pkg::get_be(v_hdr, srnic_pkg::EXT_OFF + 8, 4));
      m_in.reth_len  = 32'(srnic_pkg::get_be(v_hdr, srnic_pkg::EXT_OFF + 12, 4));
      if (srnic_pkg::op_has_imm(opcode)) m_in.imm = 32'(srnic_pkg::get_be(v_hdr, srnic_pkg::EXT_OFF + 16, 4));
    end else if (srnic_pkg::op_has_aeth(opcode)) begin
      m_in.aeth_syn = v_hdr[srnic_pkg::EXT_OFF*8 +: 8];
      m_in.aeth_msn = 24'(srnic_pkg::get_be(v_hdr, srnic_pkg::EXT_OFF + 1, 3));
    end else if (srnic_pkg::op_has_imm(opcode)) begin
      m_in.imm = 32'(srnic_pkg::get_be(v_hdr, srnic_pkg::EXT_OFF, 4));
    end
  end

  // every stored frame gets its record; room was reserved at its first beat
  wire record = v_decide && v_acc;
  sync_fifo #(.WIDTH($bits(m_in)), .DEPTH(MDEPTH)) u_meta (
    .clk, .rst, .s_data(m_in), .s_valid(record), .s_ready(),
    .m_data(meta), .m_valid(meta_valid), .m_ready(meta_ready), .count(meta_count));

  // committed pointer and reads
  assign d_valid = wr_ptr != rd_ptr;
  assign d_data  = mem[rd_ptr[AW-1:0]];
  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr <= '0; rd_ptr <= '0;
    end else begin
      if (record) wr_ptr <= wr_ptr + (AW+1)'(v_nbeats);
      if (d_valid && d_ready) rd_ptr <= rd_ptr + 1'b1;
    end
  end

  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_ok = bth1[6];
  /* verilator lint_on UNUSEDSIGNAL */
  wire [AW:0] used = wr_spec - rd_ptr;
  always_ff @(posedge clk) begin
    if (rst) rx_pause <= 1'b0;
    else if ({{(31-AW){1'b0}}, used} > PAUSE_ON || 32'(meta_count) > MDEPTH / 2) rx_pause <= 1'b1;
    else if ({{(31-AW){1'b0}}, used} < PAUSE_OFF && 32'(meta_count) < MDEPTH / 4) rx_pause <= 1'b0;
  end

  assign cnt_rx_frame       = s_tvalid && s_tlast;
  assign cnt_drop_icrc      = v_decide && v_acc && !v_user && !v_ovf && hdr_ok && !icrc_ok;
  assign cnt_drop_malformed = v_decide && v_acc && !v_ovf && (v_user || !hdr_ok);
  assign cnt_drop_overflow  = v_decide && (v_ovf || !v_acc);

`ifndef SYNTHESIS
  // Assertions (verilator --assert): RX buffer pointers, beat counters, record queue.
  wire [AW:0] sva_used = wr_spec - rd_ptr;
  wire [AW:0] sva_committed = wr_ptr - rd_ptr;
  a_buf_bound: assert property (@(posedge clk) disable iff (rst)
    32'(sva_used) <= DEPTH && sva_committed <= sva_used)
    else $error("srnic_rx_parse: RX buffer pointers inconsistent (fill above DEPTH or committed beyond written)");
  a_stored_bound: assert property (@(posedge clk) disable iff (rst)
    (!in_frame || 32'(stored) <= MAX_BEATS) && (!v_pend || 32'(v_nbeats) <= MAX_BEATS))
    else $error("srnic_rx_parse: more than MAX_BEATS beats stored for one frame");
  a_meta_no_overflow: assert property (@(posedge clk) disable iff (rst)
    record |-> u_meta.s_ready)
    else $error("srnic_rx_parse: record queue overflow (a stored frame without its record)");
  a_one_verdict_slot: assert property (@(posedge clk) disable iff (rst)
    s_tvalid && s_tlast |-> !v_pend || v_decide)
    else $error("srnic_rx_parse: a frame ended while the previous verdict was still pending");
  a_d_hold: assert property (@(posedge clk) disable iff (rst)
    d_valid && !d_ready |=> d_valid && $stable(d_data))
    else $error("srnic_rx_parse: frame beat withdrawn or changed before it was taken");
  a_drop_exclusive: assert property (@(posedge clk) disable iff (rst)
    $onehot0({cnt_drop_icrc, cnt_drop_malformed, cnt_drop_overflow}))
    else $error("srnic_rx_parse: one frame counted under two drop reasons");
`endif
endmodule
`default_nettype wire
