# The documents tell the truth: every curl example of README.md prints what
# the README shows, and openapi.yaml matches the server's fields, codes and
# routes.
TEST_SUITES += test-readme test-contract
DEB_TEST    += python3-yaml

.PHONY: test-readme test-contract
test-readme: $(SERVER_BIN)
	$(PYTHON) tests/readme/check_readme.py --server $(SERVER_BIN)

test-contract: $(SERVER_BIN)
	$(PYTHON) tests/readme/check_openapi.py --server $(SERVER_BIN)
