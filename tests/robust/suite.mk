# tests/robust - the service never falls over: sanitizers, valgrind, slow
# clients, faults and a soak.
#   make test-asan       unit, HTTP and framing tests, a client load and the
#                        memory test's phases, ASan+UBSan build
#   make test-tsan       pool unit test + server under a concurrent load, TSan
#   make test-valgrind   the server under memcheck through a client load
#   make test-robust     slow clients, disconnects, signals, bounded memory,
#                        60 s wrk soak
#   make parse-cost      prints what jansson's tree costs per body byte, for
#                        the patterns a body can repeat (docs/reliability.md)
# Sanitizer builds go to their own $(BUILD)/clang-asan, $(BUILD)/tsan trees
# (the top-level Makefile puts every object under $(BUILD)).  Sanitizer reports
# are written to log files (log_path) and any report fails the target, so a
# report from a server process that a test harness started and ignored still
# counts.

ROBUST_DIR   := tests/robust
ROBUST_PY    := $(PYTHON) $(ROBUST_DIR)
ASAN_BUILD   := $(BUILD)/clang-asan
TSAN_BUILD   := $(BUILD)/tsan
SAN_LOGS      = $(abspath $(1))/sanitizer-logs
# Unit/HTTP targets of the top-level Makefile, run under sanitizers when
# their sources exist (they are written alongside this suite): those that
# time nothing (test-asan-untimed) and those that time something
# (test-asan-timed: the pool's helper, the HTTP programs of HTTP_TIMED,
# framing's answers "at once"); `make test` runs the first beside other
# suites, the second alone (TEST_BESIDE, TEST_ALONE in the Makefile).
SAN_UNTIMED  := $(if $(wildcard tests/unit/test_*.c),test-unit-untimed) \
                $(if $(wildcard tests/http/suite.mk),test-http-untimed)
SAN_TIMED    := $(if $(wildcard tests/unit/test_*.c),test-unit-timed) \
                $(if $(wildcard tests/http/suite.mk),test-http-timed) \
                $(if $(wildcard tests/framing/suite.mk),test-framing)

# One ASan+UBSan build, clang's, serves these suites and the fuzzer
# (tests/fuzz/suite.mk): its objects also carry libFuzzer's coverage
# (-fsanitize=fuzzer-no-link), whose counters and comparison hooks a program
# without libFuzzer runs as no-ops.
ASAN_CC      := clang
ASAN_CXX     := clang++
ASAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer \
                -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link
# (in the ASan build's own make) UBSan's runtime for C++ (the vptr checks in
# the simdjson parsers), which clang links only when told to: its C driver
# links the programs
ifneq ($(filter -fsanitize=fuzzer-no-link,$(SAN)),)
LDLIBS       += -fsanitize-link-c++-runtime
endif
ASAN_ENV      = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:log_path=$(call SAN_LOGS,$(ASAN_BUILD))/asan \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(call SAN_LOGS,$(ASAN_BUILD))/ubsan
# OpenBLAS's own threads are not instrumented; one BLAS thread per caller is
# what the server asks for anyway, set before the library loads so that
# OpenBLAS never starts its pool (no uninstrumented thread to confuse TSan).
TSAN_ENV      = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(ROBUST_DIR)/tsan.supp:log_path=$(call SAN_LOGS,$(TSAN_BUILD))/tsan \
                OPENBLAS_NUM_THREADS=1
# Valgrind: OPENBLAS_CORETYPE is set so that the server does not re-exec
# itself through /proc/self/exe (under valgrind that is valgrind's tool, not
# the server); the generic kernels are slow but exact.
VALGRIND     := valgrind --quiet --error-exitcode=97 --leak-check=full \
                --errors-for-leak-kinds=definite,indirect \
                --show-leak-kinds=definite,indirect \
                --suppressions=$(ROBUST_DIR)/valgrind.supp

DEB_TEST    += valgrind slowhttptest wrk
TEST_SUITES += test-asan-untimed test-asan-timed test-tsan test-valgrind \
               test-robust-timed test-robust-soak
TEST_BUILD  += asan-build tsan-build $(BUILD)/robust/failmalloc.so

.PHONY: test-asan test-tsan test-valgrind test-robust asan-build tsan-build \
        test-asan-untimed test-asan-timed test-robust-timed test-robust-soak \
        robust-slow \
        robust-faults robust-alloc robust-memory robust-parse-memory \
        robust-soak parse-cost

# Fails when a sanitizer wrote any report into the log directory $(1).
define san_logs_clean
	@if ls $(1)/* >/dev/null 2>&1; then \
	  echo "sanitizer reports:"; for f in $(1)/*; do echo "== $$f"; \
	  head -60 $$f; done; exit 1; fi; echo "no sanitizer reports in $(1)"
endef

ASAN_MAKE     = $(MAKE) BUILD=$(ASAN_BUILD) CC=$(ASAN_CC) CXX=$(ASAN_CXX) \
                SAN="$(ASAN_FLAGS)" OPT="-O1 -g"
TSAN_MAKE     = $(MAKE) BUILD=$(TSAN_BUILD) SAN="-fsanitize=thread" OPT="-O1 -g"
TSAN_POOL    := $(if $(wildcard tests/unit/test_pool.c),$(TSAN_BUILD)/tests/test_pool)

# the server, the programs of $(SAN_UNTIMED) and $(SAN_TIMED) and the fuzz
# targets, built with ASan+UBSan
# (test-build makes it beside the other builds; `+`: ASAN_MAKE hides
# $(MAKE) from make, which would run the sub-make without its job slots,
# one compiler at a time)
asan-build:
	+$(ASAN_MAKE) san-programs

# (in the sanitizer build's own make, BUILD its tree)
.PHONY: san-programs
san-programs: $(SERVER_BIN) $(UNIT_TESTS) $(HTTP_TESTS) $(FUZZ_TARGETS)

tsan-build:
	+$(TSAN_MAKE) $(TSAN_BUILD)/attention-server $(TSAN_POOL)

# each half starts with an empty log directory and fails on any report in
# it: the halves run one after the other, never at once
test-asan: asan-build
	@$(MAKE) --no-print-directory test-asan-untimed
	@$(MAKE) --no-print-directory test-asan-timed

test-asan-untimed: asan-build
	@rm -rf $(call SAN_LOGS,$(ASAN_BUILD)); mkdir -p $(call SAN_LOGS,$(ASAN_BUILD))
	$(ASAN_ENV) $(ASAN_MAKE) $(SAN_UNTIMED)
	$(ASAN_ENV) $(ROBUST_PY)/load.py $(ASAN_BUILD)/attention-server \
	  --threads 4 --requests 60
	$(call san_logs_clean,$(call SAN_LOGS,$(ASAN_BUILD)))

test-asan-timed: asan-build
	@rm -rf $(call SAN_LOGS,$(ASAN_BUILD)); mkdir -p $(call SAN_LOGS,$(ASAN_BUILD))
	$(ASAN_ENV) $(ASAN_MAKE) $(SAN_TIMED)
	$(ASAN_ENV) $(ROBUST_PY)/test_memory.py $(ASAN_BUILD)/attention-server \
	  --sanitized
	$(call san_logs_clean,$(call SAN_LOGS,$(ASAN_BUILD)))

test-tsan: tsan-build
	@rm -rf $(call SAN_LOGS,$(TSAN_BUILD)); mkdir -p $(call SAN_LOGS,$(TSAN_BUILD))
	$(if $(TSAN_POOL),$(TSAN_ENV) $(TSAN_POOL))
	$(TSAN_ENV) $(ROBUST_PY)/load.py $(TSAN_BUILD)/attention-server \
	  --threads 6 --requests 40 --server-threads 3 --tsan --term-timeout 10
	$(call san_logs_clean,$(call SAN_LOGS,$(TSAN_BUILD)))

test-valgrind: $(SERVER_BIN)
	OPENBLAS_CORETYPE=Prescott OPENBLAS_NUM_THREADS=1 \
	  $(ROBUST_PY)/load.py $(SERVER_BIN) --wrapper "$(VALGRIND)" \
	  --threads 4 --requests 40 --timeout 120

# test-robust-timed: the checks that time something (deadlines, a drain
# within its grace, RSS sampled every 10 ms); test-robust-soak: the soak,
# whose checks are counts, statuses and its RSS once a second, not times
# (`make test` runs it beside other suites)
test-robust: test-robust-timed test-robust-soak
test-robust-timed: robust-slow robust-faults robust-alloc robust-memory \
                   robust-parse-memory
test-robust-soak: robust-soak

$(BUILD)/robust/parse_cost: tests/robust/parse_cost.c $(CORE_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

parse-cost: $(BUILD)/robust/parse_cost
	$(BUILD)/robust/parse_cost

# a malloc() that fails from a size on, preloaded into the real server
$(BUILD)/robust/failmalloc.so: tests/robust/failmalloc.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -shared -fPIC -Wall -Wextra -Werror $< -o $@

robust-alloc: $(SERVER_BIN) $(BUILD)/robust/failmalloc.so
	$(ROBUST_PY)/test_alloc_failure.py $(SERVER_BIN) $(BUILD)/robust/failmalloc.so

robust-slow: $(SERVER_BIN)
	$(ROBUST_PY)/test_slow.py $(SERVER_BIN)

robust-faults: $(SERVER_BIN)
	$(ROBUST_PY)/test_faults.py $(SERVER_BIN)

robust-memory: $(SERVER_BIN)
	$(ROBUST_PY)/test_memory.py $(SERVER_BIN)

robust-parse-memory: $(SERVER_BIN)
	$(ROBUST_PY)/test_parse_memory.py $(SERVER_BIN)

robust-soak: $(SERVER_BIN)
	$(ROBUST_PY)/test_soak.py $(SERVER_BIN) --seconds 90
