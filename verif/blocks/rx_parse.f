// srnic_rx_parse bench
rtl/pkg/srnic_pkg.sv
rtl/lib/crc32_d512_pkg.sv
rtl/lib/crc32_d512.sv
rtl/lib/sync_fifo.sv
rtl/nic/srnic_icrc_calc.sv
rtl/nic/srnic_rx_parse.sv
