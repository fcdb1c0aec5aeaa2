// srnic_tx_payload bench
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sync_fifo.sv
rtl/dma/srnic_tx_payload.sv
