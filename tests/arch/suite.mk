# tests/arch - the service on the CPUs it is deployed on, proven on this x86-64
# machine (AVX-512):
#   make test-x86-levels   every SIMD level of the core this CPU runs
#       (core/arch.h: AVX-512, AVX2, generic) against libm and the reference
# In `make test`.

ARCH_LEVELS     := $(BUILD)/tests/test_simd_levels

TEST_SUITES += test-x86-levels

.PHONY: test-x86-levels

$(ARCH_LEVELS): $(BUILD)/tests/arch/test_simd_levels.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@

test-x86-levels: $(ARCH_LEVELS)
	$(ARCH_LEVELS)
