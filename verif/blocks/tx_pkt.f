// srnic_tx_pkt bench (connection table in srnic_qpc_ram; payload reads by srnic_tx_payload,
// joined in the bench top tx_pkt_tb)
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/qpc/srnic_qpc_ram.sv
rtl/dma/srnic_tx_payload.sv
rtl/nic/srnic_tx_pkt.sv
verif/blocks/tx_pkt_tb.sv
