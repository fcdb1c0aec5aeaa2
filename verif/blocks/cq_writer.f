// srnic_cq_writer bench
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/srnic_cq_writer.sv
