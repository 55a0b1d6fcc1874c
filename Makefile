# cclmesh: the two quick-start commands are `make demo` and `make test`.
# Every target that builds first installs what is missing (scripts/install_deps.sh).

BUILD_DIR      ?= build
ASAN_BUILD_DIR ?= build-asan
FUZZ_BUILD_DIR ?= build-fuzz
JOBS           ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS    ?=
CTEST_FLAGS    ?= --output-on-failure -j $(JOBS)
CCLMESH        := $(BUILD_DIR)/tools/cclmesh/cclmesh

.PHONY: all deps configure build demo test test-all test-asan bench clean

all: build

deps:
	@bash scripts/install_deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCCLMESH_WERROR=ON $(CMAKE_FLAGS)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The main job. Until `cclmesh run` lands: describe the simulated T3K.
demo: build
	$(CCLMESH) topo --system t3k

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

bench: build
	@for b in $(BUILD_DIR)/tools/bench/bench_*; do echo "== $$b"; $$b; done

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR) $(FUZZ_BUILD_DIR)
