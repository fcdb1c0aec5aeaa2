// srnic_tx_pkt bench (connection table in srnic_qpc_ram)
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/qpc/srnic_qpc_ram.sv
rtl/nic/srnic_tx_pkt.sv
