// srnic_rx_rqfetch bench
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/dma/srnic_rx_rqfetch.sv
