// srnic_wqe_fetch bench
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/qpc/srnic_qpc_ram.sv
rtl/transport/srnic_tx_window.sv
rtl/dma/srnic_wqe_fetch.sv
