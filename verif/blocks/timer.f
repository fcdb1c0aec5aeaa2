// srnic_timer bench
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/srnic_timer.sv
