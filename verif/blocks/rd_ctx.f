// srnic_rd_ctx bench
rtl/pkg/srnic_pkg.sv
rtl/transport/srnic_rd_ctx.sv
