// srnic_qp_gen bench
rtl/pkg/srnic_pkg.sv
rtl/qpc/srnic_qp_gen.sv
