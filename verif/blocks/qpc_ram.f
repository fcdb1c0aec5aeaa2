// srnic_qpc_ram bench
rtl/lib/sdp_ram.sv
rtl/srnic_qpc_ram.sv
