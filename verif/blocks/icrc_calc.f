// srnic_icrc_calc bench
rtl/lib/crc32_d512_pkg.sv
rtl/lib/crc32_d512.sv
rtl/nic/srnic_icrc_calc.sv
