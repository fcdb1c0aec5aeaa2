// srnic_mr_table bench (srnic_mr_port inside)
rtl/pkg/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/qpc/srnic_mr_port.sv
rtl/qpc/srnic_mr_table.sv
