// srnic_tx_pkt bench (connection table in srnic_qpc_ram)
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/srnic_qpc_ram.sv
rtl/srnic_tx_pkt.sv
