// srnic_timer bench
rtl/lib/sdp_ram.sv
rtl/lib/sync_fifo.sv
rtl/transport/srnic_timer.sv
