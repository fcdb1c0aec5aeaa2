// owed_fifo bench
rtl/lib/sync_fifo.sv
rtl/lib/owed_fifo.sv
