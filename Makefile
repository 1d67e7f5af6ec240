# Thin wrapper around CMake. The README's two commands:
#   make demo    install missing Debian packages when possible, build, run a prediction
#   make check   build and run the whole test suite with ctest
# Warnings are errors when CI is set (CI=true in the CI environment) or with WERROR=ON.

BUILD    ?= build
ASAN_BUILD ?= build-asan
WERROR   ?= $(if $(CI),ON,OFF)
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# gnuplot-nox draws `llmstep plot` (run as a program; its tests need it too).
# The Python package (python/) and its tests: NumPy, pytest, and setuptools/wheel/venv for an
# offline `pip install ./python`.
DEB_PKGS := cmake make gcc pkg-config libcjson-dev libgsl-dev zlib1g-dev gnuplot-nox \
            python3-numpy python3-pytest python3-setuptools python3-wheel python3-venv \
            libmicrohttpd-dev
# `llmstep web`'s browser test: Debian's Chromium, its driver and Selenium (ctest skips it
# without them outside CI).
WEB_TEST_PKGS := chromium chromium-driver python3-selenium
# clang (libFuzzer runtime in libclang-rt-14-dev) and valgrind for the CI jobs of issue 10.
CI_PKGS  := clang libclang-rt-14-dev valgrind

CLANG_BUILD ?= build-clang
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 10

.PHONY: all deps web-test-deps build demo check asan tsan clang-check fuzz fuzz-smoke memcheck bench format format-check clean

all: build

# Installs what is missing when we are root with apt-get; otherwise says what to run.
deps:
	@missing=""; \
	for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing Debian packages:$$missing"; \
	    echo "run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# The browser test's packages, for `make check` only (the demo does not need a browser); when
# they cannot be installed the test says it is skipped.
web-test-deps:
	@missing=""; \
	for p in $(WEB_TEST_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || \
	      echo "could not install$$missing: the browser test will be skipped"; \
	  else \
	    echo "not installed:$$missing (the browser test will be skipped; sudo apt-get install -y$$missing)"; \
	  fi; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DSIM_WERROR=$(WERROR) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== Llama-3.1-8B on H100 SXM, TP 1: prefill of one 2048-token prompt"
	./$(BUILD)/llmstep predict --model llama-3.1-8b --hw h100-sxm --tp 1 --prefill 1x2048
	@echo
	@echo "== Llama-3.1-8B on H100 SXM, TP 2: decode step of 64 sequences at context 2048"
	./$(BUILD)/llmstep predict --model llama-3.1-8b --hw h100-sxm --tp 2 --decode 64x2048
	@echo
	@echo "== The same decode step as vLLM V0 would take it, with the shipped H100 calibration"
	./$(BUILD)/llmstep predict --model llama-3.1-8b --hw h100-sxm --tp 2 --decode 64x2048 \
	    --calibration calibrations/h100-sxm.json | head -n 6

check: build web-test-deps
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSIM_SANITIZE=ON -DSIM_WERROR=$(WERROR) >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# ThreadSanitizer: the thread test (tests/test_threads.c) and a serving sweep on two threads.
TSAN_BUILD ?= build-tsan
tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSIM_TSAN=ON -DSIM_WERROR=$(WERROR) >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_threads llmstep
	TSAN_OPTIONS=halt_on_error=1 ./$(TSAN_BUILD)/tests/test_threads
	TSAN_OPTIONS=halt_on_error=1 ./$(TSAN_BUILD)/llmstep sweep --kind serving --model qwen3-32b \
	    --hw h100-sxm --tp 2,4,8 --concurrency 1,4,16,64 --prompt-tokens 1024 --output-tokens 128 \
	    --jobs 2 --format csv >/dev/null

# A clang build with warnings as errors, and its tests (gcc and clang warn differently).
clang-check: deps
	cmake -S . -B $(CLANG_BUILD) -DCMAKE_C_COMPILER=clang -DSIM_WERROR=$(WERROR) >/dev/null
	cmake --build $(CLANG_BUILD) -j $(JOBS)
	cd $(CLANG_BUILD) && ctest --output-on-failure -j $(JOBS)

# libFuzzer targets (tests/fuzz), and a bounded run of each on seeds from the project's files.
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DSIM_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_model fuzz_hw fuzz_engine fuzz_calib \
	    fuzz_meas fuzz_trace fuzz_stream fuzz_nccl fuzz_gemm fuzz_cli fuzz_kernels fuzz_api fuzz_bench fuzz_web
fuzz-smoke: fuzz
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The golden CLI tests under valgrind memcheck: a memory error or a definite leak fails a case.
memcheck: build
	LLMSTEP_BIN=$(CURDIR)/$(BUILD)/llmstep tests/cli/run_golden.sh \
	    $(CURDIR)/tests/valgrind_llmstep.sh $(CURDIR)/tests/cli

bench: build
	./$(BUILD)/llmstep bench

SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(SOURCES)
format-check:
	clang-format --dry-run -Werror $(SOURCES)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(CLANG_BUILD) $(FUZZ_BUILD)
