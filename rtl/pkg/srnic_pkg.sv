// srnic_pkg: packet field definitions, opcodes and the descriptors passed between blocks.
`default_nettype none
package srnic_pkg;
  localparam int DATA_W = 512;
  localparam int KEEP_W = 64;
  localparam int QPN_W  = 16;   // internal QP index width (QPs <= 65536); 24 bits on the wire
  // Incarnation of a QP (srnic_qp_gen, decision 109): advanced each time the host resets the QP;
  // work queued between blocks carries the incarnation it was made for and is dropped where it
  // would act if the QP has been reset since.
  localparam int GEN_W  = 4;
  localparam int PSN_W  = 24;

  // RC opcodes (BTH.OpCode)
  localparam logic [7:0] OP_SEND_FIRST = 8'h00, OP_SEND_MIDDLE = 8'h01, OP_SEND_LAST = 8'h02,
    OP_SEND_LAST_IMM = 8'h03, OP_SEND_ONLY = 8'h04, OP_SEND_ONLY_IMM = 8'h05,
    OP_WRITE_FIRST = 8'h06, OP_WRITE_MIDDLE = 8'h07, OP_WRITE_LAST = 8'h08,
    OP_WRITE_LAST_IMM = 8'h09, OP_WRITE_ONLY = 8'h0A, OP_WRITE_ONLY_IMM = 8'h0B,
    OP_READ_REQ = 8'h0C, OP_READ_RESP_FIRST = 8'h0D, OP_READ_RESP_MIDDLE = 8'h0E,
    OP_READ_RESP_LAST = 8'h0F, OP_READ_RESP_ONLY = 8'h10, OP_ACK = 8'h11;

  // AETH syndromes
  localparam logic [7:0] AETH_ACK = 8'h1F;             // ACK, credits invalid (unlimited)
  localparam logic [7:0] AETH_RNR_BASE = 8'h20;        // | timer code
  localparam logic [7:0] AETH_NAK_PSN = 8'h60, AETH_NAK_INV_REQ = 8'h61,
                         AETH_NAK_REM_ACCESS = 8'h62, AETH_NAK_REM_OP = 8'h63;

  // frame layout (IPv4, no VLAN)
  localparam logic [31:0] MAX_MSG_BYTES = 32'h8000_0000;  // IBA's largest message, 2^31 bytes
  localparam int ETH_HDR = 14, IP_HDR = 20, UDP_HDR = 8, BTH_HDR = 12;
  localparam int BTH_OFF = ETH_HDR + IP_HDR + UDP_HDR;     // 42
  localparam int EXT_OFF = BTH_OFF + BTH_HDR;               // 54
  localparam int RETH_LEN = 16, AETH_LEN = 4, IMM_LEN = 4;
  localparam logic [15:0] ROCE_UDP_PORT = 16'd4791;

  // Ethernet header, in wire order (byte 0 = destination MAC MSB)
  typedef struct packed {
    logic [47:0] dmac;
    logic [47:0] smac;
    logic [15:0] ethertype;
  } eth_hdr_t;

  typedef struct packed {
    logic [3:0]  version;
    logic [3:0]  ihl;
    logic [7:0]  tos;
    logic [15:0] total_len;
    logic [15:0] id;
    logic [15:0] flags_frag;
    logic [7:0]  ttl;
    logic [7:0]  protocol;
    logic [15:0] checksum;
    logic [31:0] src;
    logic [31:0] dst;
  } ipv4_hdr_t;

  typedef struct packed {
    logic [15:0] sport;
    logic [15:0] dport;
    logic [15:0] length;
    logic [15:0] checksum;
  } udp_hdr_t;

  typedef struct packed {
    logic [7:0]  opcode;
    logic        se;
    logic        mig;
    logic [1:0]  padcnt;
    logic [3:0]  tver;
    logic [15:0] pkey;
    logic [7:0]  resv8a;
    logic [23:0] dqpn;
    logic        ackreq;
    logic [6:0]  resv7;
    logic [23:0] psn;
  } bth_t;

  typedef struct packed {
    logic [63:0] va;
    logic [31:0] rkey;
    logic [31:0] dmalen;
  } reth_t;

  typedef struct packed {
    logic [7:0]  syndrome;
    logic [23:0] msn;
  } aeth_t;

  // Header presence per opcode.
  function automatic logic op_has_reth(input logic [7:0] op);
    op_has_reth = (op == OP_WRITE_FIRST) || (op == OP_WRITE_ONLY) || (op == OP_WRITE_ONLY_IMM) || (op == OP_READ_REQ);
  endfunction
  function automatic logic op_has_imm(input logic [7:0] op);
    op_has_imm = (op == OP_SEND_LAST_IMM) || (op == OP_SEND_ONLY_IMM) || (op == OP_WRITE_LAST_IMM) || (op == OP_WRITE_ONLY_IMM);
  endfunction
  function automatic logic op_has_aeth(input logic [7:0] op);
    op_has_aeth = (op == OP_READ_RESP_FIRST) || (op == OP_READ_RESP_LAST) || (op == OP_READ_RESP_ONLY) || (op == OP_ACK);
  endfunction
  function automatic logic op_known(input logic [7:0] op);
    op_known = op <= OP_ACK;
  endfunction
  // Bytes of extension headers after the BTH.
  function automatic logic [4:0] op_ext_len(input logic [7:0] op);
    op_ext_len = (op_has_reth(op) ? 5'd16 : 5'd0) + (op_has_imm(op) ? 5'd4 : 5'd0) + (op_has_aeth(op) ? 5'd4 : 5'd0);
  endfunction

  // A received, well-formed RoCEv2 packet (srnic_rx_parse -> srnic_rx_engine). Its frame
  // beats follow in the RX buffer; the payload starts at pay_off within the frame.
  typedef struct packed {
    logic        drop;       // frame failed a check: discard its beats
    logic [7:0]  opcode;
    logic [23:0] dqpn;
    logic [23:0] psn;
    logic        ackreq;
    logic        se;
    logic [63:0] reth_va;
    logic [31:0] reth_rkey;
    logic [31:0] reth_len;
    logic [7:0]  aeth_syn;
    logic [23:0] aeth_msn;
    logic [31:0] imm;
    logic [31:0] src_ip;
    logic [6:0]  pay_off;
    logic [12:0] pay_len;
    logic [7:0]  nbeats;     // frame beats stored in the RX buffer
    logic        rq_fetched; // a receive WQE was read for this packet (srnic_rx_rqfetch)
    logic [15:0] rq_idx;     // its RQ index
    logic        rq_flush;   // not a packet: flush the receive WQE rq_idx of a QP in error
  } rx_meta_t;

  // Big-endian field of n bytes at byte offset off of a frame held in tdata order.
  function automatic logic [63:0] get_be(input logic [1023:0] f, input int off, input int n);
    logic [63:0] v;
    v = '0;
    for (int i = 0; i < 8; i++) if (i < n) v = {v[55:0], f[(off + i) * 8 +: 8]};
    get_be = v;
  endfunction

  // One packet for the TX pipe to build. The payload (if any) is read from host
  // physical address pay_addr. Connection fields (MACs, IPs, dest QPN, UDP port) are
  // looked up by qpn inside the TX pipe.
  typedef struct packed {
    logic [GEN_W-1:0] gen;       // the QP's incarnation the packet belongs to
    logic [QPN_W-1:0] qpn;
    logic [7:0]  opcode;
    logic [23:0] psn;
    logic        ackreq;
    logic        se;
    logic [63:0] reth_va;
    logic [31:0] reth_rkey;
    logic [31:0] reth_len;
    logic [7:0]  aeth_syn;
    logic [23:0] aeth_msn;
    logic [31:0] imm;
    logic [63:0] pay_addr;
    logic [12:0] pay_len;
    logic        resend;     // requester: a PSN sent before (go-back-N after a rewind)
  } tx_job_t;

  // Work for the responder's TX queue: either one ACK/NAK packet or a whole READ
  // response (segmented into packets by srnic_resp_tx).
  typedef struct packed {
    logic [GEN_W-1:0] gen;       // the QP's incarnation the answer belongs to
    logic             is_read;
    logic [QPN_W-1:0] qpn;
    logic [23:0]      psn;       // ACK/NAK: PSN in the BTH; READ: first response PSN
    logic [7:0]       syndrome;  // ACK/NAK syndrome
    logic [23:0]      msn;
    logic [63:0]      addr;      // READ: host physical address of the data
    logic [31:0]      len;       // READ: bytes
    logic [2:0]       mtu;       // ibv_mtu code 1..5
  } resp_task_t;
  // A responder answer that can be dropped and regenerated later from the responder's state
  // (a plain ACK: ePSN - 1; a NAK PSN sequence error: ePSN while nak_sent). READ responses,
  // RNR NAKs and fatal NAKs cannot: they hold a reservation in srnic_resp_tx (decision 116).
  function automatic logic resp_deferrable(input logic is_read, input logic [7:0] syn);
    resp_deferrable = !is_read && (syn == AETH_ACK || syn == AETH_NAK_PSN);
  endfunction

  // Events for the completion engine.
  typedef enum logic [2:0] {
    CEV_ACK       = 3'd0,  // everything up to psn acknowledged (stops at READs)
    CEV_READ_DONE = 3'd1,  // READ responses up to psn placed
    CEV_RETRY     = 3'd2,  // a retry episode (rt_kind, psn, psn2[4:0] RNR code), merged
    CEV_NAK       = 3'd3,  // fatal NAK for psn with status
    CEV_ACKS      = 3'd5,  // coalesced ACK (psn) and/or READ_DONE (psn2) of one QP
    CEV_LERR      = 3'd6,  // the WQE starting at psn cannot be executed (status)
    CEV_HERR      = 3'd7   // the host moved the QP to ERR: flush every WQE up to psn2 (the
                           // producer index); psn is the send path's next PSN
  } cev_kind_e;

  typedef struct packed {
    logic [GEN_W-1:0] gen;       // the QP's incarnation the event belongs to
    cev_kind_e        kind;
    logic [QPN_W-1:0] qpn;
    logic [23:0]      psn;
    logic [7:0]       status;
    logic [23:0]      psn2;      // CEV_ACKS: READ data placed up to psn2; CEV_NAK: at or
                                 // before the first PSN of a READ without all its responses
    logic             has_ack;   // CEV_ACKS: psn is valid
    logic             has_rd;    // CEV_ACKS, CEV_NAK: psn2 is valid
    logic             has_rt;    // CEV_ACKS: a retry episode (rt_*) follows the ACKs
    logic [1:0]       rt_kind;   // RT_SEQ, RT_IMPLIED, RT_RNR, RT_TIMEOUT
    logic [4:0]       rt_code;   // RT_RNR: the NAK's RNR timer code; RT_TIMEOUT: RTC_RNR_END
                                 // marks the end of an RNR wait (no retry is charged)
    logic [23:0]      rt_psn;    // SEQ/IMPLIED/RNR: resend from here (everything before is
                                 // acknowledged); TIMEOUT: the send path's next PSN
  } comp_ev_t;

  // Retry episodes (go-back-N). One at a time per QP: the RX engine starts one and marks the
  // QP (rewind pending) until the send path has applied the completion engine's answer.
  localparam logic [1:0] RT_SEQ     = 2'd0;  // NAK PSN sequence error
  localparam logic [1:0] RT_IMPLIED = 2'd1;  // READ responses missing (gap, or ACK beyond a READ)
  localparam logic [1:0] RT_RNR     = 2'd2;  // RNR NAK: resend after the RNR timer
  localparam logic [1:0] RT_TIMEOUT = 2'd3;  // local ACK timeout (or, with rt_code RTC_RNR_END,
                                             // the end of an RNR wait)
  localparam logic [4:0] RTC_RNR_END = 5'd1;

  // The completion engine's answer to a retry episode, for the send path: rewind the QP's send
  // state to WQE ci, byte offset off, PSN psn (apply = 0: nothing to resend, or the retries ran
  // out); rnr (with apply): an RNR NAK, the send state does not move, the QP is parked until
  // the RNR timer (code) expires; up: the answer to the end of an RNR wait, the QP is unparked
  // (after the rewind, if any).
  typedef struct packed {
    logic [GEN_W-1:0] gen;       // the QP's incarnation the answer belongs to
    logic [QPN_W-1:0] qpn;
    logic             apply;
    logic [15:0]      ci;
    logic [31:0]      off;
    logic [23:0]      psn;
    logic             rnr;
    logic [4:0]       code;
    logic             up;
  } rewind_t;


  // CQE request to the CQ writer.
  typedef struct packed {
    logic [GEN_W-1:0] gen;       // the QP's incarnation the completion belongs to
    logic [15:0]      cqn;
    logic [63:0]      wr_id;
    logic [31:0]      byte_len;
    logic [31:0]      imm;
    logic [QPN_W-1:0] qpn;
    logic [15:0]      wqe_idx;
    logic [7:0]       opcode;
    logic [7:0]       status;
    logic             with_imm;
  } cqe_req_t;

  // One received packet (or event) as the RX engine's classification stage hands it to its
  // placement stage (srnic_rx_place): the payload to place and the frame beats to take, then
  // what the packet produces once its payload is written, in order.
  typedef struct packed {
    logic             place;     // payload to host memory at dst
    logic [63:0]      dst;
    logic [6:0]       pay_off;   // payload offset in the frame
    logic [12:0]      pay_len;
    logic [7:0]       nbeats;    // frame beats to take from the RX buffer (placed or dropped)
    logic             rd;        // the payload is a READ response's (srnic_comp asks: rdq_busy)
    logic [QPN_W-1:0] qpn;
    logic             has_task;  // an ACK/NAK or READ response task
    resp_task_t       task_;
    logic             has_cqe;   // a receive completion
    cqe_req_t         cqe;
    logic             has_cev;   // a completion engine event
    comp_ev_t         cev;
  } rx_job_t;

  // Decoded QP context from a QP_MODIFY command, with the transitions it implies.
  typedef struct packed {
    logic [QPN_W-1:0] qpn;
    logic [2:0]  state;
    logic [2:0]  mtu;
    logic [3:0]  access;
    logic [3:0]  log_sq;
    logic [3:0]  log_rq;
    logic [15:0] sport;
    logic [23:0] dqpn;
    logic [31:0] pd;
    logic [23:0] sq_psn;
    logic [23:0] rq_psn;
    logic [15:0] send_cqn;
    logic [15:0] recv_cqn;
    logic [31:0] dip;
    logic [47:0] dmac;
    logic [63:0] sq_base;
    logic [63:0] rq_base;
    logic        init_idx;     // RESET -> INIT: queue indices restart at 0
    logic        init_rq_psn;  // -> RTR: responder expected PSN := rq_psn
    logic        init_sq_psn;  // -> RTS: requester next PSN := sq_psn
    logic [2:0]  retry_cnt;    // local ACK timeouts / sequence NAKs before RETRY_EXC_ERR (7 = no limit)
    logic [2:0]  rnr_retry;    // RNR NAKs before RNR_RETRY_EXC_ERR (7 = no limit)
    logic [4:0]  timeout;      // local ACK timeout 4.096 us * 2^timeout (0 = none)
    logic [4:0]  min_rnr;      // RNR timer code this responder puts in its RNR NAKs
  } qp_cmd_t;

  typedef struct packed {
    logic [63:0] iova;
    logic [63:0] length;
    logic [63:0] pa;
    logic [31:0] key;
    logic [31:0] pd;
    logic [3:0]  access;
    logic        valid;
  } mr_entry_t;

  localparam int MR_ENTRY_W = 64 + 64 + 64 + 32 + 32 + 4 + 1;

  typedef struct packed {
    logic [15:0] cqn;
    logic [63:0] base;
    logic [3:0]  log_size;
    logic        valid;
  } cq_cmd_t;

  function automatic logic [12:0] mtu_bytes(input logic [2:0] code);
    mtu_bytes = 13'd128 << code;   // 1 -> 256 ... 5 -> 4096
  endfunction
  function automatic logic [3:0] mtu_log2(input logic [2:0] code);
    mtu_log2 = 4'd7 + {1'b0, code};
  endfunction
  // 24-bit PSN "a >= b" within a half window
  function automatic logic psn_ge(input logic [23:0] a, input logic [23:0] b);
    psn_ge = (a - b) < 24'h800000;
  endfunction
  // 24-bit PSN "a > b" within a half window
  function automatic logic psn_gt(input logic [23:0] a, input logic [23:0] b);
    psn_gt = a != b && (a - b) < 24'h800000;
  endfunction
endpackage
`default_nettype wire
