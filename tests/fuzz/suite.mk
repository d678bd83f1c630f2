# tests/fuzz - libFuzzer over decode → validate → forward → encode.
#   make test-fuzz             build, replay the committed corpus, fuzz 60 s
#   make fuzz FUZZ_SECONDS=600 fuzz longer (same checks)
# Findings (crash-*, leak-*, timeout-*) land in $(BUILD)/fuzz/artifacts and
# fail the target.  The harness is compiled from the sources with clang (the
# fuzzer runtime is clang's), independently of $(CC).

FUZZ_CC      := clang
FUZZ_SECONDS ?= 60
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/fuzz_request
FUZZ_SRC     := tests/fuzz/fuzz_request.c $(CORE_SRC) server/buf.c \
                server/numfmt.c server/reply.c server/problem.c \
                server/decode.c server/encode.c server/api_attention.c \
                server/blas_setup.c
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer \
                -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined -Wall -Wextra -Werror -pthread
FUZZ_OPTIONS := -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
                -dict=tests/fuzz/request.dict -print_final_stats=1

DEB_TEST    += clang libclang-rt-14-dev
TEST_SUITES += test-fuzz

.PHONY: test-fuzz fuzz

$(FUZZ_BIN): $(FUZZ_SRC) $(wildcard core/*.h core/*.inc server/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SRC) -ljansson -lopenblas -lm -o $@

# The committed corpus is replayed first (a regression check that needs no
# luck), then new inputs are searched for; what the fuzzer finds goes to a
# scratch corpus under $(BUILD), never into the committed one.
test-fuzz fuzz: $(FUZZ_BIN)
	@rm -rf $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	@echo "== replaying tests/fuzz/corpus ($$(ls tests/fuzz/corpus | wc -l) seeds)"
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 OPENBLAS_NUM_THREADS=1 \
	  $(FUZZ_BIN) -runs=0 $(FUZZ_OPTIONS) tests/fuzz/corpus
	@echo "== fuzzing for $(FUZZ_SECONDS) s"
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 OPENBLAS_NUM_THREADS=1 \
	  $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_OPTIONS) \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/ $(FUZZ_DIR)/corpus tests/fuzz/corpus
	@if [ -n "$$(ls $(FUZZ_DIR)/artifacts)" ]; then \
	  echo "fuzz findings:"; ls -l $(FUZZ_DIR)/artifacts; exit 1; fi
	@echo "test-fuzz: zero findings in $(FUZZ_SECONDS) s"
