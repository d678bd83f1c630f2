# tests/numfmt - server/json/numfmt.c (Schubfach) against std::to_chars, byte for
# byte, and its power-of-ten table against its generator.
#   make test-numfmt             the CI set: ~50 million values (a few s)
#   make test-numfmt-exhaustive  all 2^32 floats (minutes; not in `make test`)
#   make bench-numfmt            ns per number, std::to_chars vs numfmt.c
NUMFMT_DIR   := $(BUILD)/numfmt
NUMFMT_TEST  := $(NUMFMT_DIR)/test_numfmt
NUMFMT_BENCH := $(NUMFMT_DIR)/bench_numfmt

TEST_SUITES += test-numfmt
TEST_BUILD  += $(NUMFMT_TEST)

.PHONY: test-numfmt test-numfmt-exhaustive bench-numfmt

$(NUMFMT_DIR)/%: tests/numfmt/%.cpp $(BUILD)/server/json/numfmt.o
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $^ -o $@

test-numfmt: $(NUMFMT_TEST)
	$(PYTHON) tools/gen_numfmt_table.py --check server/json/numfmt_table.h
	$(NUMFMT_TEST)

test-numfmt-exhaustive: $(NUMFMT_TEST)
	nice -n 19 $(NUMFMT_TEST) --exhaustive-float

bench-numfmt: $(NUMFMT_BENCH)
	$(NUMFMT_BENCH)
