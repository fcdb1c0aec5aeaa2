// srnic_rx_place bench
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/srnic_rx_place.sv
