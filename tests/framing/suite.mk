# tests/framing - HTTP framing (RFC 9112) over raw sockets: smuggling
# attempts, malformed lengths and codings, Host rules, paths, requests
# refused from their headers, and what libmicrohttpd answers itself.
#   make test-framing                     against $(SERVER_BIN)
#   FRAMING_ARGS='-k Host' make test-framing  only the cases naming Host
# test-asan runs it again against the ASan build (tests/robust/suite.mk).
TEST_SUITES += test-framing

.PHONY: test-framing

test-framing: $(SERVER_BIN)
	$(PYTHON) tests/framing/test_framing.py $(SERVER_BIN) $(FRAMING_ARGS)
