# Attention service — build, run and test.
#   make run     install what is missing, build, serve on 127.0.0.1:8080
#   make test    install what the tests need, run every test
# Everything the project needs is installed from here (Debian packages).

BUILD   ?= build
CC      ?= cc
OPT     ?= -O2 -g
SAN     ?=
CXX     ?= c++
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) -Wall -Wextra -Werror -Wshadow \
           -pthread -MMD -MP
# C++ only behind C interfaces: parse_fast.cpp (simdjson) with parse_rows.cpp
# (std::from_chars).
CXXFLAGS := -std=c++17 $(OPT) $(SAN) -Wall -Wextra -Werror -pthread -MMD -MP
LDLIBS  := -lmicrohttpd -ljansson -lsimdjson -lopenblas -lm -pthread -lstdc++
PYTHON  := /usr/bin/python3
LISTEN  ?= 127.0.0.1:8080

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEB_BUILD := gcc g++ make libc6-dev libmicrohttpd-dev libjansson-dev \
             libsimdjson-dev libopenblas-dev
DEB_TEST  := $(DEB_BUILD) libcmocka-dev libcurl4-openssl-dev python3-numpy \
             curl clang clang-format libclang-rt-14-dev valgrind

# apt-get install only the packages that are missing (one `apt-get update`),
# waiting for another apt that holds the lock instead of failing at once.
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) apt-get -o DPkg::Lock::Timeout=300 update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    -o DPkg::Lock::Timeout=300 --no-install-recommends $$missing; \
	fi
endef

CORE_SRC   := core/pool.c core/attention.c core/softmax_rows.c \
              core/attend_kernels.c
SERVER_LIB := server/buf.c server/numfmt.c server/reply.c server/problem.c \
              server/buf_chain.c server/raw_request.c server/parse_json.c \
              server/parse_fast.cpp \
              server/parse_rows.cpp server/base64.c \
              server/decode.c server/encode.c server/api_attention.c \
              server/access_log.c server/config.c server/blas_setup.c \
              server/alloc_setup.c \
              server/budget.c server/metrics.c server/conn_deadline.c \
              server/http.c
SERVER_SRC := $(SERVER_LIB) server/main.c
ASSETS     := openapi.yaml server/web/index.html

CORE_OBJ   := $(CORE_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ    := $(patsubst %.cpp,$(BUILD)/%.o,$(SERVER_LIB:%.c=$(BUILD)/%.o)) \
              $(BUILD)/gen/assets.o
SERVER_BIN := $(BUILD)/attention-server

.PHONY: all run deps deps-test test test-format test-unit test-http test-oracle \
        test-lessons clean format

all: $(SERVER_BIN)

deps:
	$(call apt_install,$(DEB_BUILD))

deps-test:
	$(call apt_install,$(DEB_TEST))

run: deps
	$(MAKE) all
	$(SERVER_BIN) --listen $(LISTEN)

# The softmax loops are written to be vectorised; -O2's "very cheap" cost
# model refuses loops whose length is not a multiple of the vector width.
# -ffp-contract=fast lets the AVX2 and AVX-512 builds of exp's polynomial use
# fused multiply-adds (ISO C mode forbids it by default): 35 % faster in
# float64, 25 % in float32, and still within 2 ulp of libm (unit test).
$(BUILD)/core/softmax_rows.o: CFLAGS += -O3 -fvect-cost-model=dynamic \
                                        -ffp-contract=fast
# The attention kernels' a · b + c are meant as fused multiply-adds.
$(BUILD)/core/attend_kernels.o: CFLAGS += -O3 -ffp-contract=fast

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/embed: server/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 $< -o $@

$(BUILD)/gen/assets.c: $(BUILD)/embed $(ASSETS)
	@mkdir -p $(dir $@)
	$(BUILD)/embed $@ asset_openapi_yaml openapi.yaml \
	  asset_index_html server/web/index.html

$(BUILD)/gen/assets.o: $(BUILD)/gen/assets.c
	$(CC) $(CFLAGS) -Wno-overlength-strings -c $< -o $@

$(SERVER_BIN): $(CORE_OBJ) $(LIB_OBJ) $(BUILD)/server/main.o
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# ---- tests ----------------------------------------------------------------
UNIT_TESTS := $(BUILD)/tests/test_pool $(BUILD)/tests/test_attention \
              $(BUILD)/tests/test_attend_kernels \
              $(BUILD)/tests/test_server_units $(BUILD)/tests/test_parse_rows
HTTP_TEST  := $(BUILD)/tests/test_http

$(BUILD)/tests/test_pool: $(BUILD)/tests/unit/test_pool.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_attention: $(BUILD)/tests/unit/test_attention.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_attend_kernels: $(BUILD)/tests/unit/test_attend_kernels.o \
                                    $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_server_units: $(BUILD)/tests/unit/test_server_units.o \
                                  $(CORE_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(BUILD)/tests/test_parse_rows: $(BUILD)/tests/unit/test_parse_rows.o \
                                $(CORE_OBJ) $(LIB_OBJ)
	$(CXX) $(CXXFLAGS) $^ -lcmocka $(LDLIBS) -o $@
$(HTTP_TEST): $(BUILD)/tests/http/test_http.o
	$(CC) $(CFLAGS) $^ -lcmocka -lcurl -ljansson -lm -pthread -o $@

# Suites included below append their target names to TEST_SUITES and their
# Debian packages to DEB_TEST.
TEST_SUITES :=

test: deps-test
	$(MAKE) test-format test-unit test-http test-oracle test-lessons \
	  $(TEST_SUITES)
	@echo "all test suites passed"

test-unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do echo "== $$t"; $$t || exit 1; done

test-http: $(HTTP_TEST) $(SERVER_BIN)
	ATTENTION_SERVER=$(SERVER_BIN) $(HTTP_TEST)

test-oracle: $(SERVER_BIN)
	$(PYTHON) tests/oracle/run_oracle.py --server $(SERVER_BIN) --requests 240

test-lessons: $(SERVER_BIN)
	$(PYTHON) tests/lessons/run_lessons.py --server $(SERVER_BIN)

FORMATTED := $(wildcard core/*.[ch] server/*.[ch] server/*.cpp tests/*/*.[ch] \
                          tests/*/*.cpp)

# the tree is clang-formatted (.clang-format); `make format` fixes it.
# The *_impl.inc templates are not: clang-format misreads their SFX(name)(...)
# calls and does not reach a fixed point on them.
test-format:
	clang-format --dry-run --Werror $(FORMATTED)
	@echo "clang-format: $(words $(FORMATTED)) files clean"

format:
	clang-format -i $(FORMATTED)

clean:
	rm -rf $(BUILD)

# Further suites, each in the folder it tests (they add to TEST_SUITES).
include $(wildcard tests/*/suite.mk docker/suite.mk)

# dependency files of this build only (other builds live under build/ too)
-include $(shell find $(BUILD)/core $(BUILD)/server $(BUILD)/tests \
             -maxdepth 2 -name '*.d' 2>/dev/null)
