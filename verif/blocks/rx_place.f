// srnic_rx_place bench
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/dma/srnic_rx_place.sv
