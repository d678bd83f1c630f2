# tests/bench - the benchmark: the core against PyTorch and NumPy, the
# HTTP path against a FastAPI peer and nginx, big requests end to end.
#   make bench              the full run (5 to 10 minutes), prints one table;
#                           ONNX Runtime's fused MHA in the core's table
#   make bench-profile      perf: where a lesson-sized request's time goes
#                           (PROFILE_BODY=n16 for the n=16, d=64 request;
#                           PROFILE_CONNECTIONS=32 saturates the server)
#   make bench-lanes        what handing a request to a worker costs, beside
#                           what requests of growing size cost on the event
#                           thread: the fast lane's thresholds come from it
#   make bench-ort          the core against ONNX Runtime's CPU provider
#                           (fused MultiHeadAttention and plain ops), side
#                           by side, checksums checked (ort_anchor.py)
#   make test-bench-smoke   every part's plumbing at small sizes, one short
#                           round (in `make test`): the harness must not rot
# The table goes to stdout and to $(BUILD)/bench/report.md; modern
# attention's rows (tests/bench/bench_variants.py) to variants.md beside it.

BENCH_DIR  := $(BUILD)/bench
BENCH_CORE := $(BENCH_DIR)/bench_core
BENCH_MINIMAL := $(BENCH_DIR)/mhd_minimal
BENCH_FMA  := $(BENCH_DIR)/fma_peak
BENCH_DEB  := python3-torch python3-fastapi python3-uvicorn python3-uvloop \
              python3-httptools python3-threadpoolctl python3-numpy wrk nginx \
              linux-perf python3-onnx nodejs
BENCH_ARGS ?=
BENCH_RUN  := $(PYTHON) tests/bench/run_bench.py --server $(SERVER_BIN) \
              --bench-core $(BENCH_CORE) --mhd-minimal $(BENCH_MINIMAL) \
              --fma-peak $(BENCH_FMA) --work $(BENCH_DIR) \
              --ort-peer tests/bench/ort_peer.mjs

DEB_TEST    += $(BENCH_DEB)
TEST_SUITES += test-bench-smoke
TEST_BUILD  += $(BENCH_CORE) $(BENCH_MINIMAL) $(BENCH_FMA) ort-modules

.PHONY: bench bench-profile bench-lanes bench-ort test-bench-smoke deps-bench \
        ort-modules

PROFILE_BODY ?= lesson
PROFILE_CONNECTIONS ?= 8

deps-bench:
	$(call apt_install,$(BENCH_DEB))

# linked like the server: the core, its BLAS set-up, OpenBLAS
$(BENCH_CORE): tests/bench/bench_core.c $(CORE_OBJ) $(BUILD)/server/setup/blas_setup.o \
               $(BUILD)/server/setup/alloc_setup.o $(BUILD)/server/setup/build_info.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# one core's FMA peak: plain flags, its AVX-512 and AVX2 functions carry
# their own target attributes and run only on a CPU that has them
$(BENCH_FMA): tests/bench/fma_peak.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@

# the HTTP stack's ceiling: libmicrohttpd answering a constant
$(BENCH_MINIMAL): tests/bench/mhd_minimal.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -lmicrohttpd -o $@

bench: deps-bench $(SERVER_BIN) $(BENCH_CORE) $(BENCH_MINIMAL) $(BENCH_FMA)
	$(MAKE) --no-print-directory ort-modules
	$(BENCH_RUN) --out $(BENCH_DIR)/report.md \
	  --command "make bench$(if $(BENCH_ARGS), BENCH_ARGS='$(BENCH_ARGS)')" \
	  $(BENCH_ARGS)
	$(PYTHON) tests/bench/bench_variants.py --bench-core $(BENCH_CORE) \
	  --blas-kernels $(BENCH_DIR)/blas_kernels.json \
	  --out $(BENCH_DIR)/variants.md
	$(ORT_ANCHOR) --rounds 5

# ONNX Runtime from npm (pinned by tests/bench/ort/package-lock.json;
# node_modules is git-ignored), without its install script, which fetches
# extra providers from a host these machines cannot reach: the CPU library
# ships in the package.
ORT_DIR := tests/bench/ort
ORT_ANCHOR := $(PYTHON) tests/bench/ort_anchor.py --bench-core $(BENCH_CORE) \
              --work $(BENCH_DIR)
# (installed again only when the lock changes; test-build installs it
# beside the compilers)
ORT_NODE := $(ORT_DIR)/node_modules/.package-lock.json
ort-modules: $(ORT_NODE)
$(ORT_NODE): $(ORT_DIR)/package-lock.json
	cd $(ORT_DIR) && npm ci --ignore-scripts --no-audit --no-fund \
	  --loglevel=error

bench-ort: deps-bench ort-modules $(BENCH_CORE)
	$(ORT_ANCHOR) --rounds 5 $(BENCH_ARGS)

bench-profile: deps-bench $(SERVER_BIN)
	$(PYTHON) tests/bench/profile_server.py --server $(SERVER_BIN) \
	  --work $(BENCH_DIR) --body $(PROFILE_BODY) --seconds 5 \
	  --connections $(PROFILE_CONNECTIONS)

bench-lanes: deps-bench $(SERVER_BIN)
	$(PYTHON) tests/bench/lane_cost.py --server $(SERVER_BIN) --work $(BENCH_DIR)

test-bench-smoke: $(SERVER_BIN) $(BENCH_CORE) $(BENCH_MINIMAL) $(BENCH_FMA) \
                  ort-modules
	@echo "== fma_peak on an emulated CPU without AVX-512 measures AVX2"
	qemu-x86_64 -cpu Haswell $(BENCH_FMA) 0.01 2>/dev/null \
	  | grep -q '"isa32":"avx2","isa64":"avx2"'
	$(BENCH_RUN) --quick --out $(BENCH_DIR)/smoke.md
	@echo "== the harness fails on a refused request (a server of 1 KiB bodies)"
	! $(BENCH_RUN) --quick --parts 4 --server-args "--max-body 1024" \
	  2>$(BENCH_DIR)/refused.log
	grep -q "bench FAILED: the batch answered 413" $(BENCH_DIR)/refused.log
	$(PYTHON) tests/bench/profile_server.py --server $(SERVER_BIN) \
	  --work $(BENCH_DIR) --seconds 1
	$(PYTHON) tests/bench/bench_variants.py --bench-core $(BENCH_CORE) --quick \
	  --blas-kernels $(BENCH_DIR)/blas_kernels.json
	$(PYTHON) tests/bench/lane_cost.py --server $(SERVER_BIN) \
	  --work $(BENCH_DIR) --quick
	$(ORT_ANCHOR) --size 256,256,4 --rounds 1 --calls 1

# what looking for JSON's -Infinity in every body would cost, beside the
# fast parse (docs/api.md, "−∞ in JSON")
BENCH_INF := $(BENCH_DIR)/bench_minus_infinity

.PHONY: bench-infinity

$(BENCH_INF): tests/bench/bench_minus_infinity.c $(CORE_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

bench-infinity: $(BENCH_INF)
	$(BENCH_INF)
