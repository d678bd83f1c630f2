# tests/http - the real server binary driven over loopback with libcurl (and
# raw sockets for what libcurl will not send).
#   make test-http
HTTP_TEST := $(BUILD)/tests/test_http

TEST_SUITES += test-http
DEB_TEST    += libcmocka-dev libcurl4-openssl-dev

.PHONY: test-http

$(HTTP_TEST): $(BUILD)/tests/http/test_http.o
	$(CC) $(CFLAGS) $^ -lcmocka -lcurl -ljansson -lm -pthread -o $@

test-http: $(HTTP_TEST) $(SERVER_BIN)
	ATTENTION_SERVER=$(SERVER_BIN) $(HTTP_TEST)
