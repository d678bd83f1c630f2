# The documents tell the truth: every curl example of README.md and docs/*.md
# prints what the page shows and every relative link names a file that
# exists; docs' Python cells run and print what is shown (with PyTorch).
TEST_SUITES += test-readme
DEB_TEST    += python3-numpy python3-torch

.PHONY: test-readme
test-readme: $(SERVER_BIN)
	$(PYTHON) tests/readme/check_readme.py --server $(SERVER_BIN)
