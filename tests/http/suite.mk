# tests/http - the real server binary driven over loopback with libcurl (and
# raw sockets for what libcurl will not send): one program per behaviour,
# tests/http/test_*.c, each linked with the shared harness (harness.h).
#   make test-http                              every program in turn
#   HTTP_TEST_FILTER='*chunked*' make test-http  only the tests matching
#   HTTP_TEST_VERBOSE=1 make test-http          the server's access log too
HTTP_TESTS   := $(patsubst tests/http/%.c,$(BUILD)/tests/http/%, \
                  $(wildcard tests/http/test_*.c))
HTTP_HARNESS := $(BUILD)/tests/http/harness.o

TEST_SUITES += test-http
DEB_TEST    += libcmocka-dev libcurl4-openssl-dev

.PHONY: test-http

$(HTTP_TESTS): $(BUILD)/tests/http/%: $(BUILD)/tests/http/%.o $(HTTP_HARNESS)
	$(CC) $(CFLAGS) $^ -lcmocka -lcurl -ljansson -lm -pthread -o $@

test-http: $(HTTP_TESTS) $(SERVER_BIN)
	@for t in $(HTTP_TESTS); do echo "== $$t"; \
	  ATTENTION_SERVER=$(SERVER_BIN) $$t || exit 1; done
