// srnic_rd_ctx bench
rtl/srnic_pkg.sv
rtl/srnic_rd_ctx.sv
