# cclmesh: the two quick-start commands are `make demo` and `make test`.
# Every target that builds first installs what is missing (scripts/install_deps.sh).

BUILD_DIR      ?= build
ASAN_BUILD_DIR ?= build-asan
FUZZ_BUILD_DIR ?= build-fuzz
FAST_BUILD_DIR ?= build-fast
PREFIX         ?= /usr/local
JOBS           ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS    ?=
CTEST_FLAGS    ?= --output-on-failure -j $(JOBS)
CCLMESH        := $(BUILD_DIR)/tools/cclmesh/cclmesh

FUZZ_SECONDS   ?= 30
FUZZERS        := fuzz_command_decoder fuzz_cluster_descriptor fuzz_topology_yaml fuzz_cli_size \
                  fuzz_cli_fault_spec fuzz_command_interpreter fuzz_remote_protocol fuzz_remote_replies

.PHONY: all deps deps-fuzz configure build demo test test-all test-asan bench fast bench-fast fuzz install clean

all: build

deps:
	@bash scripts/install_deps.sh

deps-fuzz:
	@bash scripts/install_deps.sh fuzz

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCCLMESH_WERROR=ON $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job: an all-gather on the simulated T3K, one nccl-tests-style row, data verified.
demo: build
	$(CCLMESH) run --system t3k --op all_gather --size 16MiB

# Fast subset: everything not labelled slow.
test: build
	ctest --test-dir $(BUILD_DIR) -LE slow $(CTEST_FLAGS)

test-all: build
	ctest --test-dir $(BUILD_DIR) $(CTEST_FLAGS)

test-asan: deps
	cmake -S . -B $(ASAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCCLMESH_WERROR=ON -DCCLMESH_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD_DIR) -LE slow $(CTEST_FLAGS)

# Each libFuzzer target for FUZZ_SECONDS, seeded from tests/data/fuzz and the real descriptors.
# A crash leaves crash-* in build-fuzz/; keep it under tests/data/fuzz/<target>/ with the fix.
fuzz: deps-fuzz
	CXX=clang++ cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCLMESH_SANITIZE=ON \
	  -DCCLMESH_FUZZ=ON -DCCLMESH_BUILD_TESTS=OFF -DCCLMESH_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target $(FUZZERS)
	@set -e; for f in $(FUZZERS); do \
	  seeds=tests/data/fuzz/$${f#fuzz_}; corpus=$(FUZZ_BUILD_DIR)/corpus/$$f; mkdir -p $$corpus; \
	  extra=; [ $$f = fuzz_cluster_descriptor ] && [ -d ../shared/ecosystem/cluster_descriptors ] && extra=../shared/ecosystem/cluster_descriptors; \
	  [ $$f = fuzz_topology_yaml ] && extra=topologies/systems; \
	  echo "== $$f ($(FUZZ_SECONDS) s)"; \
	  (cd $(FUZZ_BUILD_DIR) && ./tests/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    corpus/$$f $(CURDIR)/$$seeds $${extra:+$(CURDIR)/$$extra}); \
	done

bench: build
	@for b in $(BUILD_DIR)/tools/bench/bench_*; do echo "== $$b"; $$b; done

# The simulator built for speed (LTO + PGO, scripts/build_fast.sh): same results, less host time.
# CXX=clang++ selects clang's PGO and ThinLTO with lld (needs clang, lld, llvm; measured slower,
# docs/performance.md "The fast build with clang"); unset, GCC.
fast: deps
	JOBS=$(JOBS) bash scripts/build_fast.sh $(FAST_BUILD_DIR)

# Issue #6's simulation-speed figures, from the fast build.
bench-fast: fast
	$(FAST_BUILD_DIR)/tools/bench/bench_sim_speed

# The CLI, the libraries, headers, data files and the CMake package (docs/library.md) under
# PREFIX; DESTDIR stages them for a package. An installed cclmesh finds its data files beside
# itself (<prefix>/share/cclmesh), wherever PREFIX is.
install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(FUZZ_BUILD_DIR) $(FAST_BUILD_DIR)
