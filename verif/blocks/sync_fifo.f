// sync_fifo bench
rtl/lib/sync_fifo.sv
