# README examples: every curl command prints what the README shows.
TEST_SUITES += test-readme

.PHONY: test-readme
test-readme: $(SERVER_BIN)
	$(PYTHON) tests/readme/check_readme.py --server $(SERVER_BIN)
