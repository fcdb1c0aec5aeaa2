// srnic_dma_rd_mux bench
rtl/dma/srnic_dma_rd_mux.sv
