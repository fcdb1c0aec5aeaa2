// srnic UVM-lite: the whole framework core in one include (coverage_db.hpp is separate because
// it needs the Verilator runtime).
#pragma once

#include "srnic/uvm/component.hpp"
#include "srnic/uvm/coverage.hpp"
#include "srnic/uvm/monitor.hpp"
#include "srnic/uvm/phaser.hpp"
#include "srnic/uvm/report.hpp"
#include "srnic/uvm/rng.hpp"
#include "srnic/uvm/scoreboard.hpp"
#include "srnic/uvm/sequence.hpp"
#include "srnic/uvm/test.hpp"
#include "srnic/uvm/tlm.hpp"
