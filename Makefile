# srnic top-level Makefile: a thin wrapper over CMake + Ninja in build/.
# Verilator and the C++ build run under the shared machine lock (cmake/locked.sh).

BUILD    ?= build
JOBS     ?= 2
CMAKE    ?= cmake
LOCKED   := cmake/locked.sh
SIM      := $(BUILD)/sim/srnic-sim
RUN_ARGS ?= --op write --size 65536 --qps 1 --iters 200 --mtu 4096
# Benchmarks write into $(BUILD)/bench/; DOCS=1 refreshes the tracked results in docs/.
BENCH_OUT := $(if $(DOCS),docs,$(BUILD)/bench)

.PHONY: all build build-sim configure test run bench bench-scale bench-loss lint regress regress-slurm-test mutate interop synth-estimate formal clean help

all: build

configure:
	@$(LOCKED) $(CMAKE) -S . -B $(BUILD) -G Ninja

CONFIGURE_IF_NEEDED = if [ ! -f $(BUILD)/build.ninja ]; then $(LOCKED) $(CMAKE) -S . -B $(BUILD) -G Ninja || exit 1; fi

build:
	@$(CONFIGURE_IF_NEEDED)
	@$(LOCKED) $(CMAKE) --build $(BUILD) -j $(JOBS)

# the demo program and what it links, not the whole tree (block benches, coverage and debug models)
build-sim:
	@$(CONFIGURE_IF_NEEDED)
	@$(LOCKED) $(CMAKE) --build $(BUILD) -j $(JOBS) --target srnic-sim

test: build
	@cd $(BUILD) && n=$$(ctest -N -L ci | sed -n 's/^Total Tests: //p'); \
	if [ "$${n:-0}" -eq 0 ]; then echo "make test: FAILED: no tests carry the CTest label ci"; exit 1; fi; \
	if ctest --output-on-failure -L ci; then \
	  echo "make test: PASSED ($$n tests labelled ci)"; \
	else \
	  echo "make test: FAILED (failing tests listed above; rerun one with: ctest --test-dir $(BUILD) -R <name> --output-on-failure)"; exit 1; \
	fi

run: build-sim
	@if [ ! -x $(SIM) ]; then echo "make run: $(SIM) does not exist (the sim/ target srnic-sim is not built yet)"; exit 1; fi
	$(SIM) $(RUN_ARGS)

# make bench [DOCS=1] [BENCH_ARGS="--quick"]: sizes, QP counts, fairness, latency (bench.md + plots)
bench:
	@if [ ! -x tools/bench ]; then echo "make bench: tools/bench does not exist yet"; exit 1; fi
	@$(MAKE) --no-print-directory build
	tools/bench $(if $(DOCS),--docs,--out $(BENCH_OUT)) $(BENCH_ARGS)

# make bench-scale [DOCS=1] [SCALE_ARGS="--qps 128,1024"]: SRNIC Figure 9 (scale.md, scale.png)
bench-scale:
	@$(MAKE) --no-print-directory build
	tools/bench_scale --out $(BENCH_OUT) $(SCALE_ARGS)

# make bench-loss [DOCS=1] [LOSS_ARGS="--quick"]: goodput under random loss, go-back-N (loss.md, loss.png)
bench-loss:
	@$(MAKE) --no-print-directory build
	tools/bench_loss --out $(BENCH_OUT) $(LOSS_ARGS)

lint:
	@tools/lint

# make regress [REGRESSION=smoke|coverage|nightly] [BACKEND=local|slurm] [REGRESS_ARGS="--seed 1 ..."]
REGRESSION ?= smoke
BACKEND    ?= local
regress:
	@tools/regress -r $(REGRESSION) --build-dir $(BUILD) --backend $(BACKEND) $(if $(filter local,$(BACKEND)),--jobs $(JOBS)) $(REGRESS_ARGS)

# the Slurm backend against a real one-node Slurm started in a temporary directory (tools/setup --slurm)
regress-slurm-test:
	@tools/slurm_selftest --build-dir $(BUILD)

mutate:
	@tools/mutate --jobs $(JOBS) $(MUTATE_ARGS)

# make formal [FORMAL_ARGS="-p sync_fifo ..."]: formal proofs with yosys-smtbmc (formal/README.md)
formal:
	@tools/formal $(FORMAL_ARGS)

synth-estimate:
	@if [ -x tools/$@ ]; then tools/$@; else echo "make $@: not implemented yet (tools/$@ does not exist)"; exit 1; fi

interop:
	@tools/setup --interop
	@BUILD=$(BUILD) JOBS=$(JOBS) tools/interop/run

clean:
	rm -rf $(BUILD)

help:
	@echo "make [all]        configure (CMake + Ninja in $(BUILD)/) and build, -j$(JOBS)"
	@echo "make test         build, then run the CTest tests labelled ci"
	@echo "make run          build srnic-sim only, then run the two-host demo: $(SIM) $(RUN_ARGS)"
	@echo "make bench        build, then tools/bench into $(BUILD)/bench/ (DOCS=1: docs/)"
	@echo "make bench-scale  build, then tools/bench_scale (SRNIC Figure 9: scale.md, scale.png; DOCS=1: docs/)"
	@echo "make bench-loss   build, then tools/bench_loss (goodput under loss, go-back-N: loss.md, loss.png; DOCS=1: docs/)"
	@echo "make lint         tools/lint (Verilator -Wall, Yosys parse, ABI generator check)"
	@echo "make regress      tools/regress -r REGRESSION (default smoke; REGRESSION=nightly for the nightly one; BACKEND=slurm: a Slurm job array)"
	@echo "make regress-slurm-test   tools/slurm_selftest: the Slurm backend against a real Slurm on localhost (as root)"
	@echo "make mutate       tools/mutate: RTL mutants against every test of their file (blocks, chip, smoke)"
	@echo "make interop      tools/setup --interop, then tools/interop/run (srnic against Linux rxe)"
	@echo "make formal       tools/formal: formal proofs with Yosys + yosys-smtbmc (FORMAL_ARGS=\"-p NAME\")"
	@echo "make synth-estimate   tools/synth-estimate"
	@echo "make clean        remove $(BUILD)/"
