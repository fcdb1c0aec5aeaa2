// srnic_rx_engine bench (configuration and receive state in srnic_qpc_ram)
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/srnic_qpc_ram.sv
rtl/srnic_rx_place.sv
rtl/srnic_rx_engine.sv
