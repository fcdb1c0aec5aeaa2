// srnic_qp_gen bench
rtl/srnic_pkg.sv
rtl/srnic_qp_gen.sv
