# cxla front door. `make run` and `make test` do everything on a fresh Debian 12 machine:
# install missing packages, configure, build, then run the example or the tests.
BUILD     ?= build
ASAN      ?= build-asan
FUZZBUILD ?= build-fuzz
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 30
CMAKE_FLAGS ?=
PREFIX    ?= /usr/local

# Sub-makes (cmake --build drives make) would say "Entering directory" around every step.
MAKEFLAGS += --no-print-directory

.PHONY: all deps bench-deps configure build run install test asan-test fuzz bench format \
	format-check clean

all: build

deps:
	@bash scripts/install-deps.sh

# The benchmarks' optional peers (PyTorch); `make test` never needs them.
bench-deps:
	@BENCH=1 bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(if $(CI),-DCXLA_WERROR=ON) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

# The default example: examples/train_mlp.hlo trains a small neural network (2 layers,
# fitting sin(x)) by gradient descent in a while loop; cxla run prints the loss before each
# of its 300 steps, shown here every 25 steps.
run: build
	@echo "./$(BUILD)/cxla run examples/train_mlp.hlo  # a 2-layer MLP learning sin(x)"
	@./$(BUILD)/cxla run examples/train_mlp.hlo > $(BUILD)/train_mlp.out
	@tr -d '{},' < $(BUILD)/train_mlp.out | awk '{ for (i = 2; i <= NF; i++) \
	  if ((i - 2) % 25 == 0 || i == NF) printf "step %3d  loss %.6f\n", i - 2, $$i }'

# Installs the libraries, headers, the cxla tool, the CMake package and cxla.pc under
# PREFIX (default /usr/local); DESTDIR=dir stages the files under dir instead.
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

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

# Benchmarks next to NumPy (Debian's python3-numpy) and, when installed (make bench-deps),
# PyTorch; then the programs of ../shared/models on cxla. Ratios printed: bench/README.md.
bench: build
	/usr/bin/python3 bench/ops_bench.py --cxla $(BUILD)/cxla
	/usr/bin/python3 bench/interp_bench.py --bin $(BUILD)/bench_linalg
	/usr/bin/python3 bench/parse_bench.py --cxla $(BUILD)/cxla

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.def')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h' '*.def')

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZBUILD)
