// srnic_comp bench (configuration and state in srnic_qpc_ram)
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/lib/owed_fifo.sv
rtl/qpc/srnic_qpc_ram.sv
rtl/transport/srnic_comp.sv
