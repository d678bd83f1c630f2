# tests/fuzz - libFuzzer, two targets:
#   fuzz_request  decode → validate → forward → encode, over request bodies
#   fuzz_framing  the HTTP layer: raw bytes into the real daemon on a
#                 loopback socket (tests/fuzz/fuzz_framing.c)
#   make test-fuzz             build both, replay their committed corpora,
#                              fuzz FUZZ_SECONDS and FUZZ_FRAMING_SECONDS
#   make fuzz FUZZ_SECONDS=600 fuzz longer (same checks)
# Findings (crash-*, leak-*, timeout-*) land in $(FUZZ_DIR)/artifacts and
# fail the target.  The targets are linked in the ASan build's own make
# (asan-build, tests/robust/suite.mk), whose objects clang compiles with
# libFuzzer's coverage (-fsanitize=fuzzer-no-link) beside ASan and UBSan: one
# instrumented build of the server serves the fuzzer and the ASan suites.
# Each target links the code under test from an archive, so that it links
# only what it reaches: everything of $(CORE_SRC) and $(SERVER_LIB) and the
# embedded assets.

FUZZ_SECONDS ?= 60
# The framing target costs a connection per input (about a thousand a
# second here), so its search is shorter; its corpus is replayed whole.
FUZZ_FRAMING_SECONDS ?= 30
# the scratch corpora and the findings
FUZZ_DIR     := $(BUILD)/fuzz
# the targets, in the ASan build ($(ASAN_BUILD): tests/robust/suite.mk)
FUZZ_BIN      = $(ASAN_BUILD)/fuzz/fuzz_request
FUZZ_FRAMING_BIN = $(ASAN_BUILD)/fuzz/fuzz_framing
# A fixed seed makes the search repeatable: a run that was clean here stays
# clean in CI, where the same sequence of inputs is tried (fewer of them on a
# busier machine).  `make fuzz FUZZ_SEED=0` searches with a random seed.
FUZZ_SEED    ?= 20261129
FUZZ_OPTIONS := -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
                -dict=tests/fuzz/request.dict -print_final_stats=1 \
                -seed=$(FUZZ_SEED)
# The framing target's search stays within a few header blocks and bodies;
# its replay takes the corpus whole (the biggest seed is a 200 KB chunk
# extension; fuzz_framing.c sends at most FZ_MAX_INPUT).
FUZZ_FRAMING_OPTIONS := -timeout=30 -rss_limit_mb=2048 \
                        -dict=tests/fuzz/framing.dict -print_final_stats=1 \
                        -seed=$(FUZZ_SEED)
FUZZ_FRAMING_CORPUS := tests/fuzz/corpus_framing
FUZZ_ENV     := UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                OPENBLAS_NUM_THREADS=1

DEB_TEST    += clang libclang-rt-14-dev
TEST_SUITES += test-fuzz

.PHONY: test-fuzz fuzz

# (in the ASan build's own make, BUILD its tree: san-programs makes them)
ifneq ($(filter -fsanitize=fuzzer-no-link,$(SAN)),)
FUZZ_TARGETS := $(BUILD)/fuzz/fuzz_request $(BUILD)/fuzz/fuzz_framing
$(BUILD)/tests/fuzz/%.o: CFLAGS += -fsanitize=fuzzer
$(BUILD)/fuzz/libunder_test.a: $(CORE_OBJ) $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(FUZZ_TARGETS): $(BUILD)/fuzz/%: $(BUILD)/tests/fuzz/%.o \
                                  $(BUILD)/fuzz/libunder_test.a
	$(CXX) $(OPT) $(SAN) -fsanitize=fuzzer -pthread $^ $(LDLIBS) -o $@
endif

# The committed corpus is replayed first (a regression check that needs no
# luck; the framing corpus must be what its generator writes from
# tests/framing's cases today), then new inputs are searched for; what the fuzzer finds goes to a
# scratch corpus under $(BUILD), never into the committed one.
test-fuzz fuzz: asan-build
	@rm -rf $(FUZZ_DIR)/corpus $(FUZZ_DIR)/corpus_framing \
	  $(FUZZ_DIR)/artifacts
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/corpus_framing \
	  $(FUZZ_DIR)/artifacts
	@echo "== replaying tests/fuzz/corpus ($$(ls tests/fuzz/corpus | wc -l) seeds)"
	$(FUZZ_ENV) $(FUZZ_BIN) -runs=0 $(FUZZ_OPTIONS) \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/ tests/fuzz/corpus
	@echo "== fuzzing for $(FUZZ_SECONDS) s"
	$(FUZZ_ENV) $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_OPTIONS) \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/ $(FUZZ_DIR)/corpus tests/fuzz/corpus
	@echo "== $(FUZZ_FRAMING_CORPUS) is what make_framing_corpus.py writes"
	@rm -rf $(FUZZ_DIR)/corpus_framing_written
	$(PYTHON) tests/fuzz/make_framing_corpus.py $(FUZZ_DIR)/corpus_framing_written
	diff -r $(FUZZ_FRAMING_CORPUS) $(FUZZ_DIR)/corpus_framing_written
	@echo "== replaying $(FUZZ_FRAMING_CORPUS) ($$(ls $(FUZZ_FRAMING_CORPUS) | wc -l) seeds)"
	$(FUZZ_ENV) $(FUZZ_FRAMING_BIN) -runs=0 -max_len=262144 \
	  $(FUZZ_FRAMING_OPTIONS) -artifact_prefix=$(FUZZ_DIR)/artifacts/ \
	  $(FUZZ_FRAMING_CORPUS)
	@echo "== fuzzing the HTTP framing for $(FUZZ_FRAMING_SECONDS) s"
	$(FUZZ_ENV) $(FUZZ_FRAMING_BIN) -max_total_time=$(FUZZ_FRAMING_SECONDS) \
	  -max_len=16384 $(FUZZ_FRAMING_OPTIONS) \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/ $(FUZZ_DIR)/corpus_framing \
	  $(FUZZ_FRAMING_CORPUS)
	@if [ -n "$$(ls $(FUZZ_DIR)/artifacts)" ]; then \
	  echo "fuzz findings:"; ls -l $(FUZZ_DIR)/artifacts; exit 1; fi
	@echo "test-fuzz: zero findings in $(FUZZ_SECONDS) s + $(FUZZ_FRAMING_SECONDS) s"
