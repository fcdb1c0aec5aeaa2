// srnic_dma_wr_mux bench
rtl/srnic_dma_wr_mux.sv
