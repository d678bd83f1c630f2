# Attention service — build, run and test.
#   make run     install what is missing, build, serve on 127.0.0.1:8080
#   make test    install what the tests need, run every test
#   make check   the fast tier: format, layout, unit, HTTP, lessons, contract
#   make hooks   git checks commit messages (tools/hooks/commit-msg)
# Everything the project needs is installed from here (Debian packages).

# DEB_ARCH: the Debian architecture to build for, this machine's unless set
# (`make DEB_ARCH=arm64`: a cross build, below).
HOST_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB_ARCH  ?= $(HOST_ARCH)
CROSS     := $(filter-out $(HOST_ARCH),$(DEB_ARCH))
BUILD   ?= build$(if $(CROSS),/$(DEB_ARCH))
CC      ?= cc
OPT     ?= -O2 -g
SAN     ?=
CXX     ?= c++
# build-time tools run here, whatever the build is for
HOST_CC := $(CC)
STRIP   := strip
# Every include is written from the repository root ("core/attention.h").
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) $(SAN) -Wall -Wextra -Werror -Wshadow \
           -pthread -MMD -MP -I.
# C++ only behind C interfaces: server/json/parse_fast.cpp (simdjson) and
# server/json/parse_rows.cpp (std::from_chars).
CXXFLAGS := -std=c++17 $(OPT) $(SAN) -Wall -Wextra -Werror -pthread -MMD -MP -I.
LDLIBS  := -lmicrohttpd -ljansson -lsimdjson -lopenblas -lz -lm -pthread -lstdc++
PYTHON  := /usr/bin/python3
LISTEN  ?= 127.0.0.1:8080

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# the libraries the server is built against (their -dev packages)
DEB_BUILD_LIBS := libc6-dev libmicrohttpd-dev libjansson-dev libsimdjson-dev \
                  libopenblas-dev zlib1g-dev
DEB_BUILD := gcc g++ make $(DEB_BUILD_LIBS)

# Cross builds, for the Docker image's other platform: Debian's cross
# toolchain, build/$(DEB_ARCH), and the -dev packages of DEB_ARCH, installed
# beside this machine's own (multiarch: `make deps DEB_ARCH=arm64` adds the
# architecture to dpkg and installs them) or unpacked in a root given as
# SYSROOT (tests/arch makes one: this machine's amd64 libsimdjson-dev cannot
# be installed beside the arm64 one).  Only the server is meant to be built
# so; the tests run it under qemu (tests/arch).
TRIPLET_amd64 := x86_64-linux-gnu
TRIPLET_arm64 := aarch64-linux-gnu
ifneq ($(CROSS),)
TRIPLET   := $(or $(TRIPLET_$(DEB_ARCH)),$(error no cross toolchain known \
               for DEB_ARCH=$(DEB_ARCH)))
CC        := $(TRIPLET)-gcc$(if $(SYSROOT), --sysroot=$(SYSROOT))
CXX       := $(TRIPLET)-g++$(if $(SYSROOT), --sysroot=$(SYSROOT))
STRIP     := $(TRIPLET)-strip
# (and gcc and jansson for this machine: tools/embed.c and
# tools/gen_web_fields.c run during the build)
DEB_BUILD := make gcc libc6-dev libjansson-dev gcc-$(TRIPLET) g++-$(TRIPLET) \
             $(DEB_BUILD_LIBS:%=%:$(DEB_ARCH))
endif
DEB_TEST  := $(DEB_BUILD) python3-numpy \
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

CORE_SRC   := core/pool.c core/attention.c core/attn_stop.c core/softmax_rows.c core/arch.c \
              core/attend_kernels.c core/stages.c
# server/, one folder a room; a room includes only rooms below it
# (make test-layout).  The rooms and their order: server/rooms.mk (through
# $(wildcard): the image copies the Makefile alone to run `make deps`).
include $(wildcard server/rooms.mk)
SERVER_BASE := server/base/buf.c server/base/buf_chain.c server/base/reply.c \
               server/base/error_codes.c server/base/problem.c \
               server/base/budget.c server/base/parse_budget.c \
               server/base/block_cache.c
SERVER_REQUEST := server/request/codec_error.c server/request/schema.c \
                  server/request/schema_lookup.c \
                  server/request/number_words.c server/request/request.c \
                  server/request/heads.c server/request/batch_first.c \
                  server/request/bind.c server/request/validate.c \
                  server/request/sizes.c server/request/weights.c \
                  server/request/positions.c server/request/torch_masks.c \
                  server/request/masks.c server/request/module_options.c
SERVER_JSON := server/json/numfmt.c server/json/base64.c \
               server/json/raw_request.c server/json/parse_json.c \
               server/json/number_literal.cpp server/json/state_dict.c \
               server/json/literal_walk.c server/json/whole_literals.c \
               server/json/parse_fast.cpp server/json/parse_rows.cpp \
               server/json/dom_jansson.cpp \
               server/json/decode.c server/json/encode_tensor.c \
               server/json/encode.c server/json/half.c
SERVER_OIP  := server/oip/oip_decode.c server/oip/oip_inputs.c \
               server/oip/oip_binary.c server/oip/oip_pointer.c \
               server/oip/oip_encode.c server/oip/oip_fast.cpp
SERVER_OBS  := server/obs/access_log.c server/obs/metrics.c \
               server/obs/process_metrics.c
SERVER_SETUP := server/setup/config.c server/setup/blas_setup.c \
                server/setup/alloc_setup.c server/setup/build_info.c \
                server/setup/cpu_pin.c
SERVER_API  := server/api/attention.c server/api/health.c \
               server/api/metrics_page.c server/api/static.c server/api/oip.c \
               server/api/oip_extensions.c
SERVER_HTTP := server/http/conn_deadline.c server/http/framing.c \
               server/http/guards.c server/http/routes.c \
               server/http/response.c server/http/daemon.c \
               server/http/answer.c server/http/upload.c \
               server/http/content_coding.c server/http/reply_coding.c \
               server/http/lanes.c server/http/reply_queue.c \
               server/http/completion.c \
               server/http/inflight.c server/http/static_coding.c \
               server/http/target.c server/http/trace.c
# each room's sources, in the rooms' order (SERVER_<ROOM> for server/<room>)
room_var = SERVER_$(shell echo $(notdir $(1)) | tr a-z A-Z)
SERVER_LIB := $(foreach r,$(filter server/%,$(filter-out server/main.c,\
                $(ROOMS))),$($(call room_var,$(r))))
SERVER_SRC := $(SERVER_LIB) server/main.c
# the page (GET /) and what it loads from web/: its stylesheet, its modules
# and the module of request fields generated from the schema table
WEB_ASSETS := $(sort $(wildcard server/web/*.js server/web/*.css)) \
              $(BUILD)/gen/web/fields.js
ASSETS     := openapi.yaml server/web/index.html server/web/embed.html \
              $(WEB_ASSETS)

CORE_OBJ   := $(CORE_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ    := $(patsubst %.cpp,$(BUILD)/%.o,$(SERVER_LIB:%.c=$(BUILD)/%.o)) \
              $(BUILD)/gen/assets.o
SERVER_BIN := $(BUILD)/attention-server

.PHONY: all run deps deps-test test check hooks test-format test-layout \
        clean format

all: $(SERVER_BIN)

deps:
ifneq ($(CROSS),)
	@dpkg --print-foreign-architectures | grep -qx '$(DEB_ARCH)' || \
	  $(SUDO) dpkg --add-architecture $(DEB_ARCH)
endif
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
# -fno-trapping-math turns exp's clamps into selects, without which only the
# AVX-512 build (masked stores) vectorises the exponential loop.
# -fno-tree-loop-distribute-patterns keeps the few-element loops of a row's
# last vector inline: as memcpy calls, every vector register live across them
# went to the stack and back.
# (The cost model and the loop distribution are gcc's flags: clang, which
# builds the ASan tree, has its own vectoriser and goes without them.)
GCC_ONLY = $(if $(findstring clang,$(CC)),,$(1))
$(BUILD)/core/softmax_rows.o: CFLAGS += -O3 \
                  $(call GCC_ONLY,-fvect-cost-model=dynamic) \
                  -ffp-contract=fast -fno-trapping-math \
                  $(call GCC_ONLY,-fno-tree-loop-distribute-patterns)
# The attention kernels' a · b + c are meant as fused multiply-adds.
$(BUILD)/core/attend_kernels.o: CFLAGS += -O3 -ffp-contract=fast

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(BUILD)/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(HOST_CC) -std=c11 -O1 $< -o $@

$(BUILD)/gen/assets.c: $(BUILD)/embed $(ASSETS)
	@mkdir -p $(dir $@)
	$(BUILD)/embed $@ asset_openapi_yaml openapi.yaml \
	  asset_index_html server/web/index.html \
	  asset_embed_html server/web/embed.html -- $(WEB_ASSETS)

# The page's request fields, printed from api_schema[] by a tool built for
# this machine: a cross build makes it in a native build of its own,
# $(BUILD)/host (not build/, which the image's cross stage uses as BUILD).
GEN_WEB_FIELDS := $(BUILD)/tools/gen_web_fields
# It links the core's stage names and softmax checks only, and jansson: what
# a cross build's machine has of its own (deps).
GEN_WEB_FIELDS_OBJ := $(BUILD)/tools/gen_web_fields.o \
                   $(BUILD)/server/request/schema.o \
                   $(BUILD)/server/request/schema_lookup.o \
                   $(BUILD)/server/request/request.o \
                   $(BUILD)/server/request/codec_error.o \
                   $(BUILD)/server/request/number_words.o \
                   $(BUILD)/server/base/error_codes.o $(BUILD)/core/stages.o \
                   $(BUILD)/core/softmax_rows.o $(BUILD)/core/arch.o
$(GEN_WEB_FIELDS): $(GEN_WEB_FIELDS_OBJ)
	$(CC) $(CFLAGS) $^ -ljansson -lm -o $@

ifeq ($(CROSS),)
$(BUILD)/gen/web/fields.js: $(GEN_WEB_FIELDS)
	@mkdir -p $(dir $@)
	$(GEN_WEB_FIELDS) > $@.tmp && mv $@.tmp $@
else
$(BUILD)/gen/web/fields.js: server/request/schema.c core/stages.c
	$(MAKE) DEB_ARCH=$(HOST_ARCH) BUILD=$(BUILD)/host SYSROOT= \
	  $(BUILD)/host/gen/web/fields.js
	@mkdir -p $(dir $@)
	cp $(BUILD)/host/gen/web/fields.js $@
endif

# openapi.yaml's AttentionRequest and InferenceParameters' fields,
# docs/api.md's table of fields and docs/reliability.md's table of limits,
# written from api_schema[] and the table of options by a tool built
# for this machine (tools/gen_contract.c, between its marker lines): `make`
# writes a file over when the tool's output differs, and make test-contract
# fails when a committed file is not what the tool writes.  A cross build
# leaves them as committed.
GEN_CONTRACT  := $(BUILD)/tools/gen_contract
CONTRACT_DOCS := $(wildcard openapi.yaml docs/api.md docs/reliability.md)
# (and the table of options, for docs/reliability.md's limits)
$(GEN_CONTRACT): $(BUILD)/tools/gen_contract.o \
                 $(filter-out $(BUILD)/tools/gen_web_fields.o,\
                   $(GEN_WEB_FIELDS_OBJ)) \
                 $(BUILD)/server/setup/config.o \
                 $(BUILD)/server/setup/build_info.o \
                 $(BUILD)/server/setup/blas_setup.o \
                 $(BUILD)/core/attend_kernels.o
	$(CC) $(CFLAGS) $^ -lopenblas -ljansson -lm -o $@

ifeq ($(CROSS),)
$(BUILD)/gen/contract.stamp: $(GEN_CONTRACT) $(CONTRACT_DOCS)
	@mkdir -p $(dir $@)
	@for f in $(CONTRACT_DOCS); do \
	  $(GEN_CONTRACT) < $$f > $@.tmp || exit 1; \
	  cmp -s $@.tmp $$f || { echo "gen_contract: wrote $$f"; \
	                         cp $@.tmp $$f; }; \
	done; rm -f $@.tmp; touch $@
$(BUILD)/gen/assets.c: $(BUILD)/gen/contract.stamp
endif

$(BUILD)/gen/assets.o: $(BUILD)/gen/assets.c
	$(CC) $(CFLAGS) -Wno-overlength-strings -c $< -o $@

$(SERVER_BIN): $(CORE_OBJ) $(LIB_OBJ) $(BUILD)/server/main.o
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# the server without its symbols, as the image ships it
$(SERVER_BIN).stripped: $(SERVER_BIN)
	$(STRIP) --strip-unneeded -o $@ $<

# Suites included below append their target names to TEST_SUITES and their
# Debian packages to DEB_TEST.
TEST_SUITES :=

# `make test`: test-build first, then every suite, each a make of its own
# (tests/run_suites.py), and a table of what each took, in wall-clock and
# CPU seconds (also in $(BUILD)/suites/times.txt; docs/development.md
# keeps its figures).  `make -k test` runs every suite whatever fails; the
# status is a failure if any did.
# TEST_BESIDE: suites that time nothing, run in a second lane beside the
# others (their output printed whole when each ends): the image builds, the
# x86-64 levels' emulated runs, the soak, the HTTP programs that time
# nothing and the oracle, about as long as the first lane's suites that
# time nothing either (arm64, fuzz, the ASan build's untimed half, the
# contract traffic's recording, ...), so the two lanes keep both cores
# busy and end together (docs/development.md has the figures).
# TEST_ALONE: the suites whose checks time something (a deadline, a drain,
# CPU seconds, a page drawing its frames) never run beside another suite.
# A suite with both kinds of checks is two suites, -untimed and -timed (or
# as named in its suite.mk), and `make SUITE` still runs the whole.
TEST_LOGS   := $(BUILD)/suites
TEST_BESIDE := test-x86-levels test-arm64-image docker-test \
               test-robust-soak test-http-untimed test-oracle
TEST_ALONE  := test-unit-timed test-http-timed test-bench-smoke test-browser \
               test-contract-traffic-judge test-framing test-python \
               test-asan-timed test-tsan test-valgrind test-robust-timed \
               test-lb
test: deps-test
	$(PYTHON) tests/run_suites.py --make "$(MAKE)" --log-dir $(TEST_LOGS) \
	  $(if $(findstring k,$(firstword -$(MAKEFLAGS))),--keep-going) \
	  $(addprefix --beside ,$(TEST_BESIDE)) \
	  $(addprefix --alone ,$(TEST_ALONE)) \
	  test-build test-format test-layout $(TEST_SUITES)
	@echo "all test suites passed"

# What the suites build, built at once on every core (the suites themselves
# run after it, in the lanes tests/run_suites.py gives them, and find it
# made): each suite.mk adds its programs and its other builds (sanitizers,
# other CPUs) to TEST_BUILD.
TEST_JOBS  ?= $(shell nproc)
TEST_BUILD := all
.PHONY: test-build test-programs
test-build:
	$(MAKE) -j$(TEST_JOBS) --output-sync=target test-programs

# The fast tier, run before landing a change: the suites that take seconds,
# HTTP in one --fast-lane (auto) instead of three.  The build may run in
# parallel (make -j2 check); the suites run one at a time, as the HTTP
# suite's timings expect.  It prints its own time; docs/development.md says
# what it and `make test` take.
CHECK_SUITES := test-format test-layout test-hooks test-unit test-http \
                test-lessons test-contract
check: deps-test
	@start=$$(date +%s); \
	$(MAKE) all $(UNIT_TESTS) $(HTTP_TESTS) && \
	  $(MAKE) -j1 $(CHECK_SUITES) HTTP_LANES=auto; status=$$?; \
	echo "make check: $$([ $$status = 0 ] && echo passed || echo FAILED)" \
	  "in $$(( $$(date +%s) - start )) s"; \
	exit $$status

# Git runs the hooks of tools/hooks from now on, in every worktree of this
# clone: commit-msg refuses a subject over 72 characters or without a blank
# line after it (the why and the figures go in the body).
hooks:
	git config core.hooksPath tools/hooks
	@echo "git now runs tools/hooks/commit-msg on every commit message"

FORMATTED := $(wildcard core/*.[ch] server/*.[ch] server/*/*.[ch] \
                          server/*/*.cpp tools/*.c tests/*/*.[ch] tests/*/*.cpp)

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

# the rooms of server/ include only rooms below them, no file is longer than
# its folder allows, no two files call each other round a circle (read from
# the objects with nm, so they are built first), and the page's modules
# import in one direction (tools/check_layout.py; tests/layout checks those
# checks on small trees); every word of the page is in its catalogs, in every
# language (tools/check_words.py)
test-layout: $(CORE_OBJ) $(LIB_OBJ) $(BUILD)/server/main.o
	$(PYTHON) tools/check_layout.py --build $(BUILD)
	$(PYTHON) tools/long_functions.py core server
	$(PYTHON) tools/check_words.py
	$(PYTHON) tests/layout/test_check_layout.py

# Every suite lives in the folder it tests, with a suite.mk that adds its
# target to TEST_SUITES and its Debian packages to DEB_TEST; the order here is
# the order `make test` runs them in.  Through $(wildcard): the image's build
# stage copies the Makefile alone to run `make deps`.
FIRST_SUITES := tests/unit/suite.mk tests/http/suite.mk \
                tests/oracle/suite.mk tests/lessons/suite.mk
include $(wildcard $(FIRST_SUITES))
include $(filter-out $(FIRST_SUITES),$(wildcard tests/*/suite.mk)) \
        $(wildcard docker/suite.mk)
test-programs: $(TEST_BUILD)

# dependency files of this build only (other builds live under build/ too)
-include $(shell find $(BUILD)/core $(BUILD)/server $(BUILD)/tests $(BUILD)/tools \
             -maxdepth 3 -name '*.d' 2>/dev/null)
