rtl/lint.vlt
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/srnic_wqe_cache.sv
