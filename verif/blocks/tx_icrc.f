// srnic_tx_icrc bench
rtl/srnic_abi_pkg.sv
rtl/srnic_pkg.sv
rtl/lib/crc32_d512_pkg.sv
rtl/lib/crc32_d512.sv
rtl/lib/sync_fifo.sv
rtl/srnic_icrc_calc.sv
rtl/srnic_tx_icrc.sv
