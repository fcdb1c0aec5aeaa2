// srnic_sched bench
rtl/lib/sync_fifo.sv
rtl/dma/srnic_sched.sv
