// srnic_mr_table bench (srnic_mr_port inside)
rtl/srnic_pkg.sv
rtl/lib/sdp_ram.sv
rtl/srnic_mr_port.sv
rtl/srnic_mr_table.sv
