// srnic_resp_tx bench
rtl/pkg/srnic_pkg.sv
rtl/lib/sync_fifo.sv
rtl/transport/srnic_resp_tx.sv
