// Registers covergroup bins in a Verilator coverage database (VerilatedCovContext), so that
// contextp->coveragep()->write() stores them next to the RTL line/toggle points and one
// `verilator_coverage --write merged.dat *.dat` merges both. Part of target srnic_uvm_vlcov,
// which needs the Verilator runtime of a --coverage model (or verilated.cpp + verilated_cov.cpp)
// in the same executable.
//
// Each normal bin becomes one point with
//   page     "v_user/<covergroup>"
//   comment  "<coverpoint or cross>:<bin>"
//   hier     the covergroup's hierarchy (owner path + "." + name)
//   filename "uvm_cov/<covergroup>", lineno = 1-based ordinal of the bin in the group
//   thresh   the item's at_least
// so `verilator_coverage --write-info` lists each bin as one line of a per-group pseudo-file.
// Points with the same name under different hierarchies are summed (SV type coverage) unless
// the database is written with forcePerInstance(true).
#pragma once

#include "srnic/uvm/coverage.hpp"

class VerilatedCovContext;

namespace srnic::verif::uvm {

// Freezes `cg` and inserts its normal bins into `cov`. The counters stay valid for the rest of
// the process even if `cg` is destroyed first. Returns the number of points inserted.
size_t register_coverage(VerilatedCovContext& cov, Covergroup& cg);

}  // namespace srnic::verif::uvm
