// srnic_comp bench (configuration and state in srnic_qpc_ram)
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/lib/owed_fifo.sv
rtl/srnic_qpc_ram.sv
rtl/srnic_comp.sv
