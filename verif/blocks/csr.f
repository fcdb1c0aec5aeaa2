// srnic_csr bench
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/srnic_csr.sv
