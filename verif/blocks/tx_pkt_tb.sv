// Bench top of block_tx_pkt: srnic_tx_pkt with the payload reader it is wired to in
// srnic_core (srnic_tx_payload), so the bench drives and checks the AXI payload reads and
// the frames together. srnic_tx_payload has its own bench (block_tx_payload).
`default_nettype none
module tx_pkt_tb #(
  parameter int NUM_QPS = 16384,
  parameter int PBUF    = 512,
  parameter int MDEPTH  = 64
) (
  input  wire logic        clk,
  input  wire logic        rst,
  input  wire logic [47:0] local_mac,
  input  wire logic [31:0] local_ip,
  input  wire logic        qp_cmd_valid,
  input  var srnic_pkg::qp_cmd_t qp_cmd,
  output logic             qp_cmd_ready,
  input  wire logic        req_valid,
  input  var srnic_pkg::tx_job_t req_job,
  output logic             req_ready,
  input  wire logic        rsp_valid,
  input  var srnic_pkg::tx_job_t rsp_job,
  output logic             rsp_ready,
  output logic             ar_valid,
  output logic [63:0]      ar_addr,
  output logic [7:0]       ar_len,
  input  wire logic        ar_ready,
  input  wire logic        r_valid,
  input  wire logic [511:0] r_data,
  output logic [511:0]     m_tdata,
  output logic [63:0]      m_tkeep,
  output logic             m_tlast,
  output logic             m_tvalid,
  input  wire logic        m_tready,
  output logic [srnic_pkg::QPN_W-1:0] m_tqpn,
  output logic [srnic_pkg::GEN_W-1:0] m_tgen,
  output logic             busy
);
  logic         cmd_valid, cmd_ready, rd_busy, pb_valid, pb_pop;
  logic [63:0]  cmd_addr;
  logic [7:0]   cmd_nbeats;
  logic [511:0] pb_data;
  srnic_tx_pkt #(.NUM_QPS(NUM_QPS), .MDEPTH(MDEPTH)) u_pkt (
    .clk, .rst, .local_mac, .local_ip, .qp_cmd_valid, .qp_cmd, .qp_cmd_ready,
    .req_valid, .req_job, .req_ready, .rsp_valid, .rsp_job, .rsp_ready,
    .rd_cmd_valid(cmd_valid), .rd_cmd_addr(cmd_addr), .rd_cmd_nbeats(cmd_nbeats),
    .rd_cmd_ready(cmd_ready), .rd_busy, .pb_data, .pb_valid, .pb_pop,
    .m_tdata, .m_tkeep, .m_tlast, .m_tvalid, .m_tready, .m_tqpn, .m_tgen, .busy);
  srnic_tx_payload #(.PBUF(PBUF)) u_pay (
    .clk, .rst, .cmd_valid, .cmd_addr, .cmd_nbeats, .cmd_ready, .rd_busy,
    .ar_valid, .ar_addr, .ar_len, .ar_ready, .r_valid, .r_data, .pb_data, .pb_valid, .pb_pop);
endmodule
`default_nettype wire
