// srnic_wqe_fetch bench
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/srnic_qpc_ram.sv
rtl/srnic_tx_window.sv
rtl/srnic_wqe_fetch.sv
