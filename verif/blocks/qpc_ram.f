// srnic_qpc_ram bench
rtl/lib/sdp_ram.sv
rtl/qpc/srnic_qpc_ram.sv
