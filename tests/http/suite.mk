# tests/http - the real server binary driven over loopback with libcurl (and
# raw sockets for what libcurl will not send): one program per behaviour,
# tests/http/test_*.c, each linked with the shared harness (harness.h).
#   make test-http                              every program, every lane
#   HTTP_TEST_FILTER='*chunked*' make test-http  only the tests matching
#   HTTP_TEST_VERBOSE=1 make test-http          the server's access log too
#   HTTP_LANES=off make test-http               one --fast-lane only
# Every program runs once per --fast-lane value: auto (small requests on the
# event thread, big ones on the workers), off (every request on the
# workers) and all (every request on the event thread).
HTTP_TESTS   := $(patsubst tests/http/%.c,$(BUILD)/tests/http/%, \
                  $(wildcard tests/http/test_*.c))
# the programs whose expectations hold only on a real CPU's time (a load,
# a full queue, a drain, a computation stopped within its deadline, a log
# line within a second, a hang-up while a reply is encoded or compressed,
# an event thread kept busy computing while another accepts):
# the arm64 run under qemu leaves them out, and so does the recorded
# contract traffic (a relay adds its own time)
HTTP_TIMED   := $(addprefix $(BUILD)/tests/http/,test_load test_overload \
                  test_lanes test_drain test_stop test_access_log \
                  test_coding_stop test_encode_stop \
                  test_event_thread_pinning)
# the harness (harness.h), one file a job: harness.c the server process,
# harness_http.c libcurl, harness_expect.c assertions, harness_raw.c raw
# sockets, harness_log.c the access log, harness_coding.c coded replies
HTTP_HARNESS := $(patsubst tests/http/%.c,$(BUILD)/tests/http/%.o, \
                  $(wildcard tests/http/harness*.c))
HTTP_LANES   ?= auto off all

TEST_SUITES += test-http-untimed test-http-timed
TEST_BUILD  += $(HTTP_TESTS)
DEB_TEST    += libcmocka-dev libcurl4-openssl-dev

.PHONY: test-http

$(HTTP_TESTS): $(BUILD)/tests/http/%: $(BUILD)/tests/http/%.o $(HTTP_HARNESS)
	$(CC) $(CFLAGS) $^ -lcmocka -lcurl -ljansson -lz -lm -pthread -o $@

# The programs that time nothing run HTTP_JOBS at a time (their waits are
# the server's and the sockets', not a core's: most of the suite's wall
# clock), each program's output printed whole when it ends; then those of
# HTTP_TIMED one at a time, alone.  A run is a target of its own,
# http-run/LANE/PROGRAM.  `make test` runs the two halves as suites of their
# own: test-http-untimed beside other suites, test-http-timed alone
# (TEST_BESIDE and TEST_ALONE in the Makefile).
HTTP_JOBS    ?= 2
HTTP_UNTIMED  = $(filter-out $(HTTP_TIMED),$(HTTP_TESTS))
http_runs     = $(foreach l,$(HTTP_LANES),$(addprefix http-run/$(l)/,$(1)))
HTTP_RUN_UNTIMED = @$(MAKE) --no-print-directory -j$(HTTP_JOBS) \
  --output-sync=target $(call http_runs,$(HTTP_UNTIMED))
HTTP_RUN_TIMED   = @$(MAKE) --no-print-directory -j1 \
  $(call http_runs,$(HTTP_TIMED))
.PHONY: test-http-untimed test-http-timed
test-http: $(HTTP_TESTS) $(SERVER_BIN)
	$(HTTP_RUN_UNTIMED)
	$(HTTP_RUN_TIMED)
test-http-untimed: $(HTTP_TESTS) $(SERVER_BIN)
	$(HTTP_RUN_UNTIMED)
test-http-timed: $(HTTP_TESTS) $(SERVER_BIN)
	$(HTTP_RUN_TIMED)

http-run/%:
	@lane=$(firstword $(subst /, ,$*)); t=$(patsubst $(firstword $(subst /, ,$*))/%,%,$*); \
	  echo "== $$t (--fast-lane $$lane)"; \
	  HTTP_TEST_LANE=$$lane ATTENTION_SERVER=$(SERVER_BIN) $$t
