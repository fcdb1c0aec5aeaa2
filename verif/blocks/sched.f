// srnic_sched bench
rtl/lib/sync_fifo.sv
rtl/srnic_sched.sv
