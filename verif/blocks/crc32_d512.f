// crc32_d512 bench
rtl/lib/crc32_d512_pkg.sv
rtl/lib/crc32_d512.sv
