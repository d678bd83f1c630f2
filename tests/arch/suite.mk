# tests/arch - the service on the CPUs it is deployed on, proven on this x86-64
# machine (AVX-512) with qemu in user mode, called directly (no binfmt_misc):
#   make test-x86-levels   x86-64 without AVX-512 and without AVX: every SIMD
#       level of the core (core/arch.h) against libm and the reference (unit
#       test); the whole oracle with the level capped at AVX2 (ATTENTION_KERNELS
#       =avx2: what a CPU without AVX-512 runs), on an emulated AVX2 CPU
#       (qemu-x86_64 -cpu Haswell: the server must choose AVX2 itself), and
#       built for -march=x86-64-v2 on an emulated CPU without AVX (-cpu
#       Nehalem, where any AVX instruction is SIGILL), the lessons too
#   make test-arm64        the server and the unit tests cross-compiled with
#       Debian's aarch64 toolchain against Debian's arm64 libraries (a root
#       unpacked by debian_root.py), run under qemu-aarch64: the unit tests
#       (ATTN_TEST_EMULATED=1: test_attention_groups runs the cases of its
#       list that end blocks, the whole list here on x86-64), the lessons,
#       the HTTP error tests and the whole oracle
#   make test-arm64-image  the Dockerfile's build stage for linux/arm64
#       (buildah; it cross-compiles): its binary loads exactly the runtime
#       packages it lists, from a root of only those, and serves the lessons
#       under qemu (image_arm64.sh)
# Each run first checks, by --version and /metrics, that the server took the
# path it is there to test (check_build_info.py).  All three are in `make test`.

ARCH_DIR        := $(BUILD)/arch
ARCH_DEB_CACHE  := $(abspath $(ARCH_DIR)/debs)
ARCH_LEVELS     := $(BUILD)/tests/test_simd_levels
ARCH_CHECK      := $(PYTHON) tests/arch/check_build_info.py
ARCH_ORACLE     := $(ORACLE_RUN)
ARCH_LESSONS    := $(PYTHON) tests/lessons/run_lessons.py
# Seconds any one emulated step may take (a unit test program, the oracle):
# the slowest, the oracle under qemu-aarch64, took about 40 s here; a step
# that hangs fails instead of stalling `make test`.
ARCH_STEP_TIMEOUT := 300
ARCH_TIMEOUT    := timeout --kill-after=10 $(ARCH_STEP_TIMEOUT)

# x86-64-v2 is SSE4.2 without AVX: Nehalem's instruction set (qemu's model)
X86_V2_BUILD    := $(BUILD)/x86-64-v2
X86_V2_CPU      := Nehalem
# an AVX2 CPU without AVX-512
X86_V3_CPU      := Haswell
# The server under qemu-x86_64, OpenBLAS choosing its kernels by the emulated
# CPU (this machine's environment may name Haswell's).
X86_V3_SERVER   := $(ARCH_DIR)/server-$(X86_V3_CPU)
X86_V2_SERVER   := $(ARCH_DIR)/server-x86-64-v2-$(X86_V2_CPU)

ARM64_BUILD     := $(BUILD)/arm64
ARM64_ROOT      := $(ARCH_DIR)/arm64-root
# what the server is built against, and cmocka for the unit tests
ARM64_PACKAGES  := $(DEB_BUILD_LIBS) libcmocka-dev
ARM64_SERVER    := $(ARCH_DIR)/server-arm64
# every unit test but those sized for a real CPU (tests/unit/suite.mk's
# UNIT_TIMED)
ARM64_UNITS     := $(patsubst $(BUILD)/%,$(ARM64_BUILD)/%, \
                     $(filter-out $(UNIT_TIMED),$(UNIT_TESTS)) $(ARCH_LEVELS))
# every HTTP test but those whose timings assume a CPU, not an emulator
# (tests/http/suite.mk's HTTP_TIMED)
ARM64_HTTP      = $(filter-out $(HTTP_TIMED),$(HTTP_TESTS))

DEB_TEST    += qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu \
               debootstrap
TEST_SUITES += test-x86-levels test-arm64 test-arm64-image
# the builds for other CPUs, made by test-build beside the others (the arm64
# root's download overlapping the compilers)
TEST_BUILD  += $(ARCH_LEVELS) x86-v2-build arm64-build

.PHONY: test-x86-levels test-arm64 test-arm64-image x86-v2-build arm64-build

# Both builds run only under qemu, where no debugger reads them: built
# without -g, which costs a sixth of their compilers' time.
ARCH_OPT        := $(filter-out -g,$(OPT))

x86-v2-build:
	$(MAKE) --no-print-directory BUILD=$(X86_V2_BUILD) \
	  OPT="$(ARCH_OPT) -march=x86-64-v2" $(X86_V2_BUILD)/attention-server \
	  $(X86_V2_BUILD)/tests/test_simd_levels

arm64-build:
	$(PYTHON) tests/arch/debian_root.py --arch arm64 --root $(ARM64_ROOT) \
	  --cache $(ARCH_DEB_CACHE) $(ARM64_PACKAGES)
	$(MAKE) --no-print-directory DEB_ARCH=arm64 BUILD=$(ARM64_BUILD) \
	  SYSROOT=$(abspath $(ARM64_ROOT)) OPT="$(ARCH_OPT)" \
	  $(ARM64_BUILD)/attention-server \
	  $(ARM64_UNITS)

$(ARCH_LEVELS): $(BUILD)/tests/arch/test_simd_levels.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@

# $(call qemu_wrapper,FILE,COMMAND): FILE runs COMMAND with its arguments
define qemu_wrapper
	@mkdir -p $(dir $(1))
	@printf '#!/bin/sh\n# written by tests/arch/suite.mk\nexec %s "$$@"\n' \
	  '$(2)' > $(1) && chmod +x $(1)
endef

test-x86-levels: $(SERVER_BIN) $(ARCH_LEVELS) x86-v2-build
	$(ARCH_LEVELS)
	@echo "== capped at AVX2 (ATTENTION_KERNELS=avx2), our AVX2 kernels"
	ATTENTION_KERNELS=avx2 $(ARCH_CHECK) --server $(SERVER_BIN) \
	  --expect simd=avx2 --expect products=avx2
	ATTENTION_KERNELS=avx2 OPENBLAS_CORETYPE=Haswell $(ARCH_ORACLE) \
	  --server $(SERVER_BIN) --requests $(ORACLE_REQUESTS)
	@echo "== on an emulated AVX2 CPU (qemu-x86_64 -cpu $(X86_V3_CPU))"
	$(call qemu_wrapper,$(X86_V3_SERVER),env -u OPENBLAS_CORETYPE \
	  qemu-x86_64 -cpu $(X86_V3_CPU) $(abspath $(SERVER_BIN)))
	$(ARCH_CHECK) --server $(X86_V3_SERVER) --expect cpu=avx2 \
	  --expect simd=avx2 --expect products=avx2
	$(ARCH_TIMEOUT) $(ARCH_ORACLE) --server $(X86_V3_SERVER) \
	  --requests $(ORACLE_REQUESTS)
	@echo "== -march=x86-64-v2 on an emulated CPU without AVX (qemu-x86_64 -cpu $(X86_V2_CPU))"
	$(ARCH_TIMEOUT) env -u OPENBLAS_CORETYPE qemu-x86_64 -cpu $(X86_V2_CPU) \
	  $(X86_V2_BUILD)/tests/test_simd_levels
	$(VECTOR_CODE_CHECK) $(VECTOR_CODE_OBJ:$(BUILD)/%=$(X86_V2_BUILD)/%)
	$(call qemu_wrapper,$(X86_V2_SERVER),env -u OPENBLAS_CORETYPE \
	  qemu-x86_64 -cpu $(X86_V2_CPU) $(abspath $(X86_V2_BUILD))/attention-server)
	$(ARCH_CHECK) --server $(X86_V2_SERVER) --expect arch=x86_64 \
	  --expect cpu=generic --expect simd=generic --expect products=openblas
	$(ARCH_LESSONS) --server $(X86_V2_SERVER)
	$(ARCH_TIMEOUT) $(ARCH_ORACLE) --server $(X86_V2_SERVER) \
	  --requests $(ORACLE_REQUESTS)

test-arm64: $(ARM64_HTTP) arm64-build
	$(VECTOR_CODE_CHECK) --objdump $(TRIPLET_arm64)-objdump \
	  $(VECTOR_CODE_OBJ:$(BUILD)/%=$(ARM64_BUILD)/%)
	@for t in $(ARM64_UNITS); do echo "== qemu-aarch64 $$t"; \
	  $(ARCH_TIMEOUT) qemu-aarch64 -L $(ARM64_ROOT) -U OPENBLAS_CORETYPE \
	  -E ATTN_TEST_EMULATED=1 $$t \
	  || exit 1; done
	$(call qemu_wrapper,$(ARM64_SERVER),qemu-aarch64 -L \
	  $(abspath $(ARM64_ROOT)) -U OPENBLAS_CORETYPE \
	  $(abspath $(ARM64_BUILD))/attention-server)
	$(ARCH_CHECK) --server $(ARM64_SERVER) --expect arch=aarch64 \
	  --expect simd=generic --expect products=openblas
	$(ARCH_LESSONS) --server $(ARM64_SERVER)
	@for t in $(ARM64_HTTP); do echo "== $$t against the arm64 server"; \
	  ATTENTION_SERVER=$(ARM64_SERVER) $$t || exit 1; done
	$(ARCH_TIMEOUT) $(ARCH_ORACLE) --server $(ARM64_SERVER) \
	  --requests $(ORACLE_REQUESTS)

test-arm64-image: deps-docker
	@mkdir -p $(ARCH_DIR)/image
	DOCKER_ROOT=$(DOCKER_ROOT) DOCKER_RUNROOT=$(DOCKER_RUNROOT) \
	  BASE_TAR=$(DOCKER_BASE_TAR) PYTHON=$(PYTHON) OUT=$(ARCH_DIR)/image \
	  DEB_CACHE=$(ARCH_DEB_CACHE) \
	  timeout --kill-after=10 $(DOCKER_TEST_TIMEOUT) tests/arch/image_arm64.sh
