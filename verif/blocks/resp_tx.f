// srnic_resp_tx bench
rtl/srnic_pkg.sv
rtl/lib/sync_fifo.sv
rtl/srnic_resp_tx.sv
