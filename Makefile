# Thin wrapper over CMake (as neovim's Makefile is).
#   make demo   build and run the main job
#   make test   install missing packages, build, run every test (ctest)
#   make sanitize  the same tests in an ASan+UBSan build
#   make bench  benchmark programs (results go into NOTES by hand)
#   make bench-vm  bench-classic's GET_USAGE (floor, procd, CONDOR_PROCD when given) in pure-v2
#               and pure-v1 qemu guests, and REGISTER with favordynmods off/on in v2
#               (tests/vm/bench; VM_BENCH_MODES="v2" for one)
#   make install   cmake --install (DESTDIR honoured; prefix /usr/local unless configured
#               with cmake -DCMAKE_INSTALL_PREFIX=...)
#   make deb    Debian packages with debhelper into $(BUILD_DIR)/deb
#   make test-vm  the integration tests and the demo in pure-v2, pure-v1 and hybrid qemu guests
#               (tests/vm/lanes; VM_MODES="v2" for one lane)
#   make test-vm-ci  what CI runs: the mode-dependent tests (ctest label `lane`, scale cases
#               small) and the demo in the same three guests, sharing PROCD_VM_BUDGET s (3000)
#   make test-deb-live  make deb, then install, start, use and purge the packages on a fresh
#               Debian 12 with systemd as PID 1 (a qemu guest: tests/install/deb-live.sh)
#   make model-test CONDOR_SRC=/path/to/htcondor [MODEL_INPUTS=20] [CONDOR_PROCD=/path]
#               HTCondor's own model-based procd test inputs (its procd_test_input and
#               MODEL_INPUTS inputs from its generator) against procd with family cgroups
#               off and on, and against CONDOR_PROCD when given (tests/procd/classic/model-test.sh)
BUILD_DIR ?= build
SAN_DIR   ?= build-asan
JOBS      ?= $(shell nproc)
CTEST_ARGS ?=
VM_MODES  ?= v2 v1 hybrid
VM_BENCH_MODES ?= v2 v1
CONDOR_SRC ?=
CONDOR_PROCD ?=
MODEL_INPUTS ?= 20

.PHONY: all deps build test test-vm test-vm-ci test-deb-live model-test demo sanitize bench bench-vm install deb clean

all: build

deps:
	@cmake/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure $(CTEST_ARGS)

test-vm: build
	tests/vm/lanes $(BUILD_DIR) $(VM_MODES)

test-vm-ci: build
	tests/vm/lanes --ci $(BUILD_DIR) $(VM_MODES)

model-test: build
	tests/procd/classic/model-test.sh $(BUILD_DIR) "$(CONDOR_SRC)" $(MODEL_INPUTS) "$(CONDOR_PROCD)"

demo: build
	tests/demo/demo.sh $(BUILD_DIR)

sanitize: deps
	cmake -S . -B $(SAN_DIR) -DPROCD_SANITIZE=ON
	cmake --build $(SAN_DIR) -j $(JOBS)
	cd $(SAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure $(CTEST_ARGS)

# Every benchmark program, one after the other, each under a header with the time and the
# load average (tests/bench/run-bench.sh; it goes on past a failure and exits 1 at the end):
# issue 20's bench-classic at 10, 100 and 1,000 families with 5,000 background processes
# (classic-floor, procd, and condor_procd when CONDOR_PROCD=<path> is given), bench-fds
# (10,000 families under a 20,000-fd limit), bench-starter, bench-node (HTCondor-shaped
# node, 220 s per daemon; condor_procd too with CONDOR_PROCD); then bench-trackers,
# bench-usage-files, bench-procd --short, bench-restart and bench-boundary.  15 to 20
# minutes on a 2-core machine.  Times from a loaded machine are not figures: each
# program prints the load average beside its figures and warns above 2.  BENCH_QUICK=1:
# the short modes, a check that every program runs (a few minutes; not figures).
BENCH = $(BUILD_DIR)/tests/bench
BENCH_QUICK ?=
bench: build
	CONDOR_PROCD='$(CONDOR_PROCD)' BENCH_QUICK='$(BENCH_QUICK)' BENCH_ROUNDS='$(BENCH_ROUNDS)' tests/bench/run-bench.sh $(BENCH)

# The same GET_USAGE comparison in the cgroup modes this host is not in (qemu guests, one
# after the other; not part of make test)
bench-vm: build
	CONDOR_PROCD='$(CONDOR_PROCD)' tests/vm/bench $(BUILD_DIR) $(VM_BENCH_MODES)

install: build
	cmake --install $(BUILD_DIR)

deb: deps
	cmake/make-deb.sh $(BUILD_DIR)/deb

test-deb-live: deb
	tests/install/deb-live.sh $(BUILD_DIR)/deb

clean:
	rm -rf $(BUILD_DIR) $(SAN_DIR)
