// srnic_rx_engine bench (configuration and receive state in srnic_qpc_ram)
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/qpc/srnic_qpc_ram.sv
rtl/dma/srnic_rx_place.sv
rtl/transport/srnic_rx_engine.sv
