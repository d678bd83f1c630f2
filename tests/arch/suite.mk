# tests/arch - the service on the CPUs it is deployed on, proven on this x86-64
# machine (AVX-512):
#   make test-x86-levels   every SIMD level of the core this CPU runs
#       (core/arch.h: AVX-512, AVX2, generic) against libm and the reference
#       (unit test); the whole oracle with the level capped at AVX2
#       (ATTENTION_KERNELS=avx2: what a CPU without AVX-512 runs)
# Each run first checks, by --version and /metrics, that the server took the
# path it is there to test (check_build_info.py).  In `make test`.

ARCH_LEVELS     := $(BUILD)/tests/test_simd_levels
ARCH_CHECK      := $(PYTHON) tests/arch/check_build_info.py
ARCH_ORACLE     := $(PYTHON) tests/oracle/run_oracle.py

TEST_SUITES += test-x86-levels

.PHONY: test-x86-levels

$(ARCH_LEVELS): $(BUILD)/tests/arch/test_simd_levels.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@

test-x86-levels: $(SERVER_BIN) $(ARCH_LEVELS)
	$(ARCH_LEVELS)
	@echo "== capped at AVX2 (ATTENTION_KERNELS=avx2), OpenBLAS's Haswell kernels"
	ATTENTION_KERNELS=avx2 $(ARCH_CHECK) --server $(SERVER_BIN) \
	  --expect simd=avx2 --expect products=openblas
	ATTENTION_KERNELS=avx2 OPENBLAS_CORETYPE=Haswell $(ARCH_ORACLE) \
	  --server $(SERVER_BIN) --requests $(ORACLE_REQUESTS)
