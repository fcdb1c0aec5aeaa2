// srnic_tx_pkt: the TX packetizer. Takes packet jobs from the requester (port 0) and the
// responder (port 1), round-robin at job granularity (each port's order is kept), looks
// up the connection (peer MAC/IP, peer QPN, UDP source port), asks srnic_tx_payload
// (rtl/dma) for the job's payload beats and assembles the frame:
//   Ethernet | IPv4 | UDP | BTH | [RETH] [AETH] [ImmDt] | payload | pad
// The ICRC is appended downstream (srnic_tx_icrc); lengths here already count it.
//
// Stage 1 sends one read command per job (its first beat address and beat count) in the
// cycle it queues the job's meta record, and takes the next job once the reader has issued
// the job's reads (rd_busy low), so read commands, meta records and payload beats keep one
// order. Payload beats arrive aligned to host addresses; a byte accumulator (up to 127
// bytes) shifts them behind the header at one beat per cycle, so a frame streams without
// bubbles once its data is there.
`default_nettype none
module srnic_tx_pkt #(
  parameter int NUM_QPS = 16384,
  parameter int MDEPTH  = 64       // packets in flight between read issue and packetizer
) (
  input  wire logic        clk,
  input  wire logic        rst,
  input  wire logic [47:0] local_mac,
  input  wire logic [31:0] local_ip,
  input  wire logic        qp_cmd_valid,
  input  var srnic_pkg::qp_cmd_t qp_cmd,
  output logic             qp_cmd_ready,
  // jobs
  input  wire logic        req_valid,
  input  var srnic_pkg::tx_job_t req_job,
  output logic             req_ready,
  input  wire logic        rsp_valid,
  input  var srnic_pkg::tx_job_t rsp_job,
  output logic             rsp_ready,
  // payload read commands to srnic_tx_payload, and its beats in command order
  output logic             rd_cmd_valid,
  output logic [63:0]      rd_cmd_addr,
  output logic [7:0]       rd_cmd_nbeats,
  input  wire logic        rd_cmd_ready,
  input  wire logic        rd_busy,
  input  wire logic [511:0] pb_data,
  input  wire logic        pb_valid,
  output logic             pb_pop,
  // frame out (no ICRC yet)
  output logic [511:0]     m_tdata,
  output logic [63:0]      m_tkeep,
  output logic             m_tlast,
  output logic             m_tvalid,
  input  wire logic        m_tready,
  // the frame's QP and the incarnation its job was made for (held for the whole frame), so
  // srnic_tx_icrc can drop a frame of a QP reset since (decision 109)
  output logic [srnic_pkg::QPN_W-1:0] m_tqpn,
  output logic [srnic_pkg::GEN_W-1:0] m_tgen,
  output logic             busy        // a frame is being assembled or sent (performance counter)
);
  localparam int AW = $clog2(NUM_QPS);

  // ------------------------------------------------------------ connection table
  typedef struct packed {
    logic [47:0] dmac;
    logic [31:0] dip;
    logic [23:0] dqpn;
    logic [15:0] sport;
  } conn_t;
  conn_t cmd_conn;
  localparam int CONN_W = $bits(cmd_conn);
  always_comb begin
    cmd_conn.dmac = qp_cmd.dmac; cmd_conn.dip = qp_cmd.dip;
    cmd_conn.dqpn = qp_cmd.dqpn; cmd_conn.sport = qp_cmd.sport;
  end
  logic conn_rd, conn_rsp_v, conn_rd_ready;
  logic [CONN_W-1:0] conn_rsp;
  // A QP_MODIFY to RESET leaves the connection as it is: jobs of the old incarnation may still
  // come until every block has taken the reset and its incarnation advances (srnic_qp_gen),
  // and they are built as the old connection's frames (srnic_tx_icrc drops those that reach
  // it after the advance); the next connection is written by the commands that follow.
  wire  cmd_rst = qp_cmd.state == 3'(srnic_abi_pkg::QPS_RESET);
  logic conn_ext_ready;
  assign qp_cmd_ready = qp_cmd_valid && (cmd_rst || conn_ext_ready);
  srnic_qpc_ram #(.WIDTH(CONN_W), .NUM_QPS(NUM_QPS)) u_conn (
    .clk, .rst, .req_valid(conn_rd), .req_ready(conn_rd_ready), .req_qpn(sel_job.qpn[AW-1:0]), .req_lock(1'b0),
    .rsp_valid(conn_rsp_v), .rsp_data(conn_rsp),
    .wr_valid(1'b0), .wr_qpn('0), .wr_data('0), .wr_unlock(1'b0),
    .ext_valid(qp_cmd_valid && !cmd_rst), .ext_ready(conn_ext_ready), .ext_qpn(qp_cmd.qpn[AW-1:0]),
    .ext_data(cmd_conn));

  // ------------------------------------------------------------ stage 1: select, look up, read

  typedef enum logic [1:0] {S_IDLE, S_LOOKUP, S_READ} s1_e;
  s1_e     s1;
  logic    rr;                 // 1: responder port has priority
  srnic_pkg::tx_job_t sel_job, j;
  conn_t   jconn;
  logic    pick_rsp;
  always_comb begin
    pick_rsp = rsp_valid && (!req_valid || rr);
    sel_job  = pick_rsp ? rsp_job : req_job;
  end
  assign conn_rd   = s1 == S_IDLE && (req_valid || rsp_valid) && conn_rd_ready;
  assign req_ready = conn_rd && !pick_rsp;
  assign rsp_ready = conn_rd && pick_rsp;

  // payload span
  wire [5:0]  j_off    = j.pay_addr[5:0];
  wire [13:0] j_span   = {8'd0, j_off} + {1'b0, j.pay_len} + 14'd63;
  wire [7:0]  j_nbeats = (j.pay_len == 13'd0) ? 8'd0 : j_span[13:6];
  // the job's read command goes with its meta record (the reader takes it only with room for
  // all of its beats)
  logic meta_ready, meta_push, conn_rsp_v_q;
  assign rd_cmd_addr   = {j.pay_addr[63:6], 6'd0};
  assign rd_cmd_nbeats = j_nbeats;
  assign rd_cmd_valid  = s1 == S_LOOKUP && conn_rsp_v_q && meta_ready;
  assign meta_push     = rd_cmd_valid && rd_cmd_ready;

  // meta record: {job, connection}
  localparam int JOB_W  = $bits(j);
  localparam int META_W = JOB_W + CONN_W;
  logic [META_W-1:0] meta_in, meta;
  assign meta_in = {j, jconn};
  logic meta_valid, meta_pop;
  sync_fifo #(.WIDTH($bits(meta_in)), .DEPTH(MDEPTH)) u_meta (
    .clk, .rst, .s_data(meta_in), .s_valid(meta_push), .s_ready(meta_ready),
    .m_data(meta), .m_valid(meta_valid), .m_ready(meta_pop), .count());

  always_ff @(posedge clk) begin
    if (rst) begin
      s1 <= S_IDLE; rr <= 1'b0; conn_rsp_v_q <= 1'b0;
    end else begin
      case (s1)
        S_IDLE: if (conn_rd) begin
          j  <= sel_job;
          rr <= !pick_rsp;
          s1 <= S_LOOKUP;
          conn_rsp_v_q <= 1'b0;
        end
        S_LOOKUP: begin
          if (conn_rsp_v) begin jconn <= conn_rsp; conn_rsp_v_q <= 1'b1; end
          if (meta_push) s1 <= S_READ;
        end
        // the reader issues the job's bursts
        S_READ: if (!rd_busy) s1 <= S_IDLE;
        default: s1 <= S_IDLE;
      endcase
    end
  end

  // ------------------------------------------------------------ stage 2: packetizer
  // header, built in wire order (first byte in the MSBs), then byte-reversed into tdata order
  srnic_pkg::tx_job_t mj;
  conn_t   mc;
  assign mj = meta[META_W-1 -: JOB_W];
  assign mc = meta[0 +: CONN_W];
  wire [4:0]  ext_len = srnic_pkg::op_ext_len(mj.opcode);
  wire [6:0]  hdr_len = 7'(srnic_pkg::EXT_OFF) + {2'd0, ext_len};
  wire [1:0]  padcnt  = 2'(-mj.pay_len[1:0]);
  wire [15:0] ip_len  = 16'(srnic_pkg::IP_HDR + srnic_pkg::UDP_HDR + srnic_pkg::BTH_HDR) + {11'd0, ext_len} + {3'd0, mj.pay_len} + {14'd0, padcnt} + 16'd4;

  srnic_pkg::ipv4_hdr_t ip;
  srnic_pkg::udp_hdr_t  udp;
  srnic_pkg::bth_t      bth;
  srnic_pkg::eth_hdr_t  eth;
  srnic_pkg::reth_t     reth;
  srnic_pkg::aeth_t     aeth;
  logic [159:0] ext;    // up to 20 bytes of extension headers, left-aligned
  always_comb begin
    eth.dmac = mc.dmac; eth.smac = local_mac; eth.ethertype = 16'h0800;
    ip.version = 4'd4; ip.ihl = 4'd5; ip.tos = 8'h02; ip.total_len = ip_len; ip.id = 16'd0;
    ip.flags_frag = 16'h4000; ip.ttl = 8'd64; ip.protocol = 8'd17; ip.checksum = 16'd0;
    ip.src = local_ip; ip.dst = mc.dip;
    ip.checksum = ip_checksum(ip);
    udp.sport = mc.sport; udp.dport = srnic_pkg::ROCE_UDP_PORT; udp.length = ip_len - 16'(srnic_pkg::IP_HDR); udp.checksum = 16'd0;
    bth.opcode = mj.opcode; bth.se = mj.se; bth.mig = 1'b0; bth.padcnt = padcnt; bth.tver = 4'd0;
    bth.pkey = 16'hFFFF; bth.resv8a = 8'd0; bth.dqpn = mc.dqpn; bth.ackreq = mj.ackreq; bth.resv7 = 7'd0;
    bth.psn = mj.psn;
    reth.va = mj.reth_va; reth.rkey = mj.reth_rkey; reth.dmalen = mj.reth_len;
    aeth.syndrome = mj.aeth_syn; aeth.msn = mj.aeth_msn;
    ext = '0;
    if (srnic_pkg::op_has_reth(mj.opcode)) ext = srnic_pkg::op_has_imm(mj.opcode) ? {reth, mj.imm} : {reth, 32'd0};
    else if (srnic_pkg::op_has_aeth(mj.opcode)) ext = {aeth, 128'd0};
    else if (srnic_pkg::op_has_imm(mj.opcode)) ext = {mj.imm, 128'd0};
  end
  function automatic logic [15:0] ip_checksum(input srnic_pkg::ipv4_hdr_t h);
    logic [159:0] v;
    logic [19:0]  sum;
    v = h;
    sum = '0;
    for (int i = 0; i < 10; i++) sum = sum + {4'd0, v[i*16 +: 16]};
    sum = {4'd0, sum[15:0]} + {16'd0, sum[19:16]};
    sum = {4'd0, sum[15:0]} + {16'd0, sum[19:16]};
    ip_checksum = ~sum[15:0];
  endfunction
  localparam int HB = 74;   // largest header
  wire [HB*8-1:0] hdr_be = {eth, ip, udp, bth, ext};
  // byte i of the frame is lane i of the accumulator; a generate loop, so that every simulator
  // sees constant slices (a procedural loop of 74 bytes is beyond Verilator's unroll limit and
  // would rebuild hdr_be once per byte, every cycle)
  wire [1023:0] hdr_le;
  for (genvar gi = 0; gi < HB; gi++) begin : g_hdr_le
    assign hdr_le[gi*8 +: 8] = hdr_be[(HB-1-gi)*8 +: 8];
  end
  assign hdr_le[1023:HB*8] = '0;

  // accumulator
  typedef enum logic [1:0] {P_IDLE, P_DATA} p_e;
  p_e            pst;
  assign busy = pst == P_DATA;
  logic [1023:0] acc;
  logic [7:0]    acc_cnt;        // valid bytes in acc (0..130; above 128 only zero pad bytes)
  logic [12:0]   bytes_left;     // payload bytes still to take from the buffer
  logic [5:0]    in_off;         // byte offset of the payload in the next buffer beat
  logic [1:0]    pad_q;
  wire           in_done = bytes_left == 13'd0;

  wire [6:0]  in_avail = 7'd64 - {1'b0, in_off};
  wire [6:0]  in_cnt   = (bytes_left < {6'd0, in_avail}) ? bytes_left[6:0] : in_avail;
  wire        in_last  = bytes_left <= {6'd0, in_avail};
  assign m_tvalid = pst == P_DATA && (acc_cnt >= 8'd64 || (in_done && acc_cnt != 8'd0));
  wire        out_fire = m_tvalid && m_tready;
  wire [7:0]  cnt_after_out = out_fire ? ((acc_cnt >= 8'd64) ? acc_cnt - 8'd64 : 8'd0) : acc_cnt;
  assign pb_pop = pst == P_DATA && !in_done && pb_valid && cnt_after_out < 8'd64;
  assign m_tdata = acc[511:0];
  assign m_tlast = in_done && acc_cnt <= 8'd64;
  assign m_tkeep = (acc_cnt >= 8'd64) ? {64{1'b1}} : ~({64{1'b1}} << acc_cnt[5:0]);
  assign meta_pop = pst == P_IDLE && meta_valid;

  // new payload bytes, moved to the accumulator's fill position and masked to in_cnt
  wire [511:0]  in_shift = pb_data >> {in_off, 3'd0};
  wire [511:0]  in_mask  = (in_cnt == 7'd64) ? {512{1'b1}} : ~({512{1'b1}} << {in_cnt[5:0], 3'd0});
  wire [1023:0] in_bytes = {512'd0, in_shift & in_mask} << {cnt_after_out[6:0], 3'd0};

  always_ff @(posedge clk) begin
    if (rst) begin
      pst <= P_IDLE; acc_cnt <= '0; bytes_left <= '0;
    end else begin
      case (pst)
        P_IDLE: if (meta_valid) begin
          m_tqpn     <= mj.qpn;
          m_tgen     <= mj.gen;
          acc        <= hdr_le;
          acc_cnt    <= {1'b0, hdr_len};
          bytes_left <= mj.pay_len;
          in_off     <= mj.pay_addr[5:0];
          pad_q      <= padcnt;
          pst        <= P_DATA;
          if (mj.pay_len == 13'd0) acc_cnt <= {1'b0, hdr_len} + {6'd0, padcnt};
        end
        P_DATA: begin
          logic [1023:0] a;
          logic [7:0]    c;
          a = out_fire ? (acc >> 512) : acc;
          c = cnt_after_out;
          if (pb_pop) begin
            a = a | in_bytes;
            c = c + {1'b0, in_cnt} + (in_last ? {6'd0, pad_q} : 8'd0);
            bytes_left <= bytes_left - {6'd0, in_cnt};
            in_off <= '0;
          end
          acc <= a;
          acc_cnt <= c;
          if (out_fire && m_tlast) pst <= P_IDLE;
        end
        default: pst <= P_IDLE;
      endcase
    end
  end
  /* verilator lint_off UNUSEDSIGNAL */
  // qp_cmd: only the connection fields and the state are this block's; mj.resend: a resent
  // packet is built as its original (go-back-N needs no mark on the wire); j_span[5:0]: the
  // byte offset within the last beat
  wire unused_ok = ^{qp_cmd, mj.resend, j_span[5:0]};
  /* verilator lint_on UNUSEDSIGNAL */

`ifndef SYNTHESIS
  // Assertions (verilator --assert): AXI-Stream rules, the read command contract, legal
  // states.
  a_tx_hold: assert property (@(posedge clk) disable iff (rst)
    m_tvalid && !m_tready |=> m_tvalid && $stable(m_tdata) && $stable(m_tkeep) && $stable(m_tlast))
    else $error("srnic_tx_pkt: TVALID dropped or beat changed before TREADY");
  a_tx_keep_contig: assert property (@(posedge clk) disable iff (rst)
    m_tvalid |-> m_tkeep != '0 && (m_tlast || m_tkeep == '1))
    else $error("srnic_tx_pkt: empty beat, or a partial beat that is not the last of its frame");
  a_rd_cmd_hold: assert property (@(posedge clk) disable iff (rst)
    rd_cmd_valid && !rd_cmd_ready |=> rd_cmd_valid && $stable(rd_cmd_addr) && $stable(rd_cmd_nbeats))
    else $error("srnic_tx_pkt: payload read command withdrawn or changed before it was taken");
  a_pop_valid: assert property (@(posedge clk) disable iff (rst)
    pb_pop |-> pb_valid)
    else $error("srnic_tx_pkt: payload beat taken that the reader did not offer");
  a_state_legal: assert property (@(posedge clk) disable iff (rst)
    s1 != 2'd3 && pst inside {P_IDLE, P_DATA})
    else $error("srnic_tx_pkt: illegal state (s1 %0d, pst %0d)", s1, pst);
  // at most 63 bytes left after a beat, 64 taken from the buffer and 3 pad bytes; bytes
  // beyond the 128-byte window can only be pad bytes, which are zero
  a_acc_bound: assert property (@(posedge clk) disable iff (rst)
    acc_cnt <= 8'd130)
    else $error("srnic_tx_pkt: frame assembly window over 130 bytes (%0d)", acc_cnt);
  a_ports_onehot: assert property (@(posedge clk) disable iff (rst)
    !(req_ready && rsp_ready))
    else $error("srnic_tx_pkt: both job ports taken in one cycle");
`endif
endmodule
`default_nettype wire
