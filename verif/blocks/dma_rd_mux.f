// srnic_dma_rd_mux bench
rtl/srnic_dma_rd_mux.sv
