# The documents tell the truth: every curl example of README.md and docs/*.md
# prints what the page shows and every relative link names a file that
# exists.
TEST_SUITES += test-readme

.PHONY: test-readme
test-readme: $(SERVER_BIN)
	$(PYTHON) tests/readme/check_readme.py --server $(SERVER_BIN)
