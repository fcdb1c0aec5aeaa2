// srnic_tx_window bench
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sync_fifo.sv
rtl/transport/srnic_tx_window.sv
