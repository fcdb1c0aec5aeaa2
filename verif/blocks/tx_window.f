// srnic_tx_window bench
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sync_fifo.sv
rtl/srnic_tx_window.sv
