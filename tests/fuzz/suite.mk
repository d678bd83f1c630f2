# tests/fuzz - libFuzzer, two targets:
#   fuzz_request  decode → validate → forward → encode, over request bodies
#   fuzz_framing  the HTTP layer: raw bytes into the real daemon on a
#                 loopback socket (tests/fuzz/fuzz_framing.c)
#   make test-fuzz             build both, replay their committed corpora,
#                              fuzz FUZZ_SECONDS and FUZZ_FRAMING_SECONDS
#   make fuzz FUZZ_SECONDS=600 fuzz longer (same checks)
# Findings (crash-*, leak-*, timeout-*) land in $(BUILD)/fuzz/artifacts and
# fail the target.  The code under test is compiled with clang (the fuzzer
# runtime is clang's) into an archive, so that each harness links only what
# it reaches: everything of $(CORE_SRC) and $(SERVER_LIB) and the embedded
# assets.

FUZZ_CC      := clang
FUZZ_CXX     := clang++
FUZZ_SECONDS ?= 60
# The framing target costs a connection per input (about a thousand a
# second here), so its search is shorter; its corpus is replayed whole.
FUZZ_FRAMING_SECONDS ?= 30
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/fuzz_request
FUZZ_FRAMING_BIN := $(FUZZ_DIR)/fuzz_framing
FUZZ_LIBSRC  := $(CORE_SRC) $(SERVER_LIB)
FUZZ_OBJ     := $(patsubst %,$(FUZZ_DIR)/obj/%.o,$(FUZZ_LIBSRC)) \
                $(FUZZ_DIR)/obj/gen/assets.c.o
FUZZ_SANFL   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
                -fno-sanitize-recover=undefined -pthread
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. $(FUZZ_SANFL)
FUZZ_CXXFL   := -std=c++17 -Wall -Wextra -Werror -I. $(FUZZ_SANFL)
FUZZ_LIBS    := -lmicrohttpd -ljansson -lsimdjson -lopenblas -lz -lm -pthread
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
TEST_BUILD  += $(FUZZ_BIN) $(FUZZ_FRAMING_BIN)

.PHONY: test-fuzz fuzz

$(FUZZ_DIR)/obj/%.c.o: %.c $(wildcard core/*.h core/*.inc server/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_DIR)/obj/%.cpp.o: %.cpp $(wildcard server/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFL) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ_DIR)/obj/gen/assets.c.o: $(BUILD)/gen/assets.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wno-overlength-strings -c $< -o $@
$(FUZZ_DIR)/libunder_test.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^
$(FUZZ_BIN): tests/fuzz/fuzz_request.c $(FUZZ_DIR)/libunder_test.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -c $< -o $@.o
	$(FUZZ_CXX) $(FUZZ_SANFL) -fsanitize=fuzzer $@.o \
	  $(FUZZ_DIR)/libunder_test.a $(FUZZ_LIBS) -o $@
$(FUZZ_FRAMING_BIN): tests/fuzz/fuzz_framing.c $(FUZZ_DIR)/libunder_test.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -c $< -o $@.o
	$(FUZZ_CXX) $(FUZZ_SANFL) -fsanitize=fuzzer $@.o \
	  $(FUZZ_DIR)/libunder_test.a $(FUZZ_LIBS) -o $@

# The committed corpus is replayed first (a regression check that needs no
# luck; the framing corpus must be what its generator writes from
# tests/framing's cases today), then new inputs are searched for; what the fuzzer finds goes to a
# scratch corpus under $(BUILD), never into the committed one.
test-fuzz fuzz: $(FUZZ_BIN) $(FUZZ_FRAMING_BIN)
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
