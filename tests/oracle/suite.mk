# tests/oracle - random problems against a NumPy reference of every stage
# (the lessons' forms, then biases and PyTorch's layout and state_dict
# names), and torch.nn.MultiheadAttention itself as a second oracle.
#   make test-oracle
TEST_SUITES += test-oracle
DEB_TEST    += python3-numpy python3-torch

.PHONY: test-oracle

test-oracle: $(SERVER_BIN)
	$(PYTHON) tests/oracle/run_oracle.py --server $(SERVER_BIN) --requests 480
	$(PYTHON) tests/oracle/torch_parity.py --server $(SERVER_BIN) --cases 80
