# tests/oracle - random problems against a NumPy reference of every stage.
#   make test-oracle
TEST_SUITES += test-oracle
DEB_TEST    += python3-numpy

.PHONY: test-oracle

test-oracle: $(SERVER_BIN)
	$(PYTHON) tests/oracle/run_oracle.py --server $(SERVER_BIN) --requests 240
