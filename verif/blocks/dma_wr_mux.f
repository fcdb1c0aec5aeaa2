// srnic_dma_wr_mux bench
rtl/dma/srnic_dma_wr_mux.sv
