// sdp_ram bench
rtl/lib/sdp_ram.sv
