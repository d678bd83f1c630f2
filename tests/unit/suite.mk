# tests/unit - cmocka tests of the core (pool, attention, kernels) and of the
# server's codec and buffers, linked against the objects the server is built
# from.
#   make test-unit
#   CMOCKA_TEST_FILTER='*softmax*' make test-unit   only the tests matching
# and check_vector_code.py: each SIMD level's build of the softmax row loops
# and of the products is that level's vector code (objdump; a tenth of a
# second).
# the server's modules, one program each (tests/unit/test_MODULE.c)
UNIT_SERVER := numfmt buf buf_chain reply decode encode parse_fast base64 \
               block_cache parse_budget whole_numbers whole_literals \
               torch_fields half cpu_pin
UNIT_SERVER_TESTS := $(UNIT_SERVER:%=$(BUILD)/tests/test_%)
UNIT_TESTS := $(BUILD)/tests/test_pool $(BUILD)/tests/test_attention \
              $(BUILD)/tests/test_attention_masks \
              $(BUILD)/tests/test_attention_groups \
              $(BUILD)/tests/test_attention_overflow \
              $(BUILD)/tests/test_attention_stop \
              $(BUILD)/tests/test_attention_packing \
              $(BUILD)/tests/test_softmax_rows \
              $(BUILD)/tests/test_attend_kernels \
              $(UNIT_SERVER_TESTS) $(BUILD)/tests/test_parse_rows \
              $(BUILD)/tests/test_problem
# the tests whose problems are sized for seconds of a real CPU's work (the
# stop test's passes must outlast a cancel): under an emulator they take
# minutes, past tests/arch's per-program timeout; and their CPU-time bounds
# are the release build's: a sanitizer build runs them in `make test-unit`
# only (docs/reliability.md, `make test-asan`, says why)
UNIT_TIMED := $(BUILD)/tests/test_attention_stop

# the programs whose checks wait on the machine's cores (the stop test's
# CPU-time bounds; the pool's helper, which must get a CPU of its own within
# HELPER_WAIT_MS): `make test` runs them in test-unit-timed, alone, and the
# others (and check_vector_code) in test-unit-untimed, beside other suites;
# `make test-unit` runs all
UNIT_WAITS := $(UNIT_TIMED) $(BUILD)/tests/test_pool

TEST_SUITES += test-unit-untimed test-unit-timed
DEB_TEST    += libcmocka-dev

.PHONY: test-unit test-unit-untimed test-unit-timed

# every program also links filter.o, which applies CMOCKA_TEST_FILTER
$(UNIT_TESTS): $(BUILD)/tests/unit/filter.o

$(BUILD)/tests/test_pool: $(BUILD)/tests/unit/test_pool.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_attention: $(BUILD)/tests/unit/test_attention.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_attention_masks: \
    $(BUILD)/tests/unit/test_attention_masks.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_attention_groups: \
    $(BUILD)/tests/unit/test_attention_groups.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_attention_overflow: \
    $(BUILD)/tests/unit/test_attention_overflow.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_softmax_rows: $(BUILD)/tests/unit/test_softmax_rows.o \
                                  $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
# malloc, free and attn_stop_check wrapped: the test counts the blocks a
# stopped pass holds, and fires the stop at a chosen reading
$(BUILD)/tests/test_attention_stop: $(BUILD)/tests/unit/test_attention_stop.o \
                                    $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -Wl,--wrap=malloc,--wrap=free,--wrap=attn_stop_check \
	  -lcmocka $(LDLIBS) -o $@
# the product kernel's packing wrapped: the test counts the copies of W
$(BUILD)/tests/test_attention_packing: \
    $(BUILD)/tests/unit/test_attention_packing.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -Wl,--wrap=attend_pack_product_f32 \
	  -Wl,--wrap=attend_pack_product_f64 -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_attend_kernels: $(BUILD)/tests/unit/test_attend_kernels.o \
                                    $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(UNIT_SERVER_TESTS): $(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o \
                                         $(CORE_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_parse_rows: $(BUILD)/tests/unit/test_parse_rows.o \
                                $(CORE_OBJ) $(LIB_OBJ)
	$(CXX) $(CXXFLAGS) $^ -lcmocka $(LDLIBS) -o $@

# block_alloc wrapped: the test takes a buffer's memory away
$(BUILD)/tests/test_problem: $(BUILD)/tests/unit/test_problem.o \
                             $(CORE_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) $^ -Wl,--wrap=block_alloc -lcmocka $(LDLIBS) -o $@

# the objects whose disassembly check_vector_code.py reads
VECTOR_CODE_OBJ := $(BUILD)/core/softmax_rows.o $(BUILD)/core/attend_kernels.o
VECTOR_CODE_CHECK := $(PYTHON) tests/unit/check_vector_code.py
TEST_BUILD += $(UNIT_TESTS) $(VECTOR_CODE_OBJ)

# it reads the code that ships: a sanitizer build (-O1 and instrumented) is
# not that code, and keeps scalar compares the release build has not
unit_run = @for t in $(1); do echo "== $$t"; $$t || exit 1; done
test-unit: $(UNIT_TESTS) $(VECTOR_CODE_OBJ)
	$(if $(SAN),@echo "check_vector_code: not read in a sanitizer build ($(SAN))",$(VECTOR_CODE_CHECK) $(VECTOR_CODE_OBJ))
	$(if $(SAN),@echo "not run in a sanitizer build ($(SAN)): $(UNIT_TIMED)")
	$(call unit_run,$(if $(SAN),$(filter-out $(UNIT_TIMED),$(UNIT_TESTS)),$(UNIT_TESTS)))
test-unit-untimed: $(UNIT_TESTS) $(VECTOR_CODE_OBJ)
	$(if $(SAN),@echo "check_vector_code: not read in a sanitizer build ($(SAN))",$(VECTOR_CODE_CHECK) $(VECTOR_CODE_OBJ))
	$(call unit_run,$(filter-out $(UNIT_WAITS),$(UNIT_TESTS)))
test-unit-timed: $(UNIT_WAITS)
	$(if $(SAN),@echo "not run in a sanitizer build ($(SAN)): $(UNIT_TIMED)")
	$(call unit_run,$(if $(SAN),$(filter-out $(UNIT_TIMED),$(UNIT_WAITS)),$(UNIT_WAITS)))
