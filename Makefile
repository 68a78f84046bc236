# cxla front door. `make run` and `make test` do everything on a fresh Debian 12 machine:
# install missing packages, configure, build, then run the example or the tests.
BUILD     ?= build
ASAN      ?= build-asan
FUZZBUILD ?= build-fuzz
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 30
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test asan-test fuzz bench format format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(if $(CI),-DCXLA_WERROR=ON) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

# The default example: a small MLP built with the builder API and trained on the
# interpreter (examples/mlp.c); the loss falls.
run: build
	./$(BUILD)/examples/mlp

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (all but the
# real-model runs, which take minutes unoptimized and are run by `make test`).
asan-test: deps
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DCXLA_SANITIZE=ON -DCXLA_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(ASAN) -j $(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS) -LE models

# Each libFuzzer target for FUZZ_SECONDS on its seed corpus (tests/fuzz/corpus/NAME).
fuzz: deps
	CC=clang cmake -S . -B $(FUZZBUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCXLA_FUZZ=ON $(CMAKE_FLAGS)
	cmake --build $(FUZZBUILD) -j $(JOBS)
	bash scripts/run-fuzzers.sh $(FUZZBUILD) $(FUZZ_SECONDS)

# Benchmarks next to NumPy (Debian's python3-numpy), ratios printed. See bench/README.md.
bench: build
	/usr/bin/python3 bench/ops_bench.py --cxla $(BUILD)/cxla
	/usr/bin/python3 bench/interp_bench.py --bin $(BUILD)/bench_linalg

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.def')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h' '*.def')

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZBUILD)
