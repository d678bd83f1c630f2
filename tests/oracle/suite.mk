# tests/oracle - random problems against a NumPy reference of every stage
# (the lessons' forms, then biases and PyTorch's layout and state_dict
# names), and torch.nn.MultiheadAttention itself as a second oracle.
#   make test-oracle
TEST_SUITES += test-oracle
DEB_TEST    += python3-numpy python3-torch

# the whole oracle: the lessons' forms, then as many with PyTorch's (tests/arch
# runs it too, on other CPUs)
ORACLE_REQUESTS := 480

.PHONY: test-oracle

test-oracle: $(SERVER_BIN)
	$(PYTHON) tests/oracle/run_oracle.py --server $(SERVER_BIN) \
	  --requests $(ORACLE_REQUESTS)
	$(PYTHON) tests/oracle/torch_parity.py --server $(SERVER_BIN) --cases 80
