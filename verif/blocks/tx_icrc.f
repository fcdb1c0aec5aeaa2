// srnic_tx_icrc bench
rtl/pkg/srnic_abi_pkg.sv
rtl/pkg/srnic_pkg.sv
rtl/lib/crc32_d512_pkg.sv
rtl/lib/crc32_d512.sv
rtl/lib/sync_fifo.sv
rtl/nic/srnic_icrc_calc.sv
rtl/nic/srnic_tx_icrc.sv
