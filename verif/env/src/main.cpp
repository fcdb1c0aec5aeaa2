// srnic-uvm: runs one full-chip test by name (see --list); the test registry prints the seed
// first and the reproduce command last, and the exit code is the verdict.
#include "srnic/uvm/test.hpp"

int main(int argc, char** argv) { return srnic::verif::uvm::TestRegistry::global().main(argc, argv); }
