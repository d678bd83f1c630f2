# tests/oracle - random problems against a NumPy reference of every stage
# (the lessons' forms, then biases and PyTorch's layout and state_dict
# names, then RoPE, the sinusoidal encoding and a KV cache),
# torch.nn.MultiheadAttention itself as a second oracle, and decoding token
# by token with the cache against one causal request.
#   make test-oracle
#   $(PYTHON) tests/oracle/run_oracle.py --case 517   one request alone
TEST_SUITES += test-oracle
DEB_TEST    += python3-numpy python3-torch

# the whole oracle: 240 of the lessons' forms, 240 with PyTorch's, 200 with
# modern attention (tests/arch runs it too, on other CPUs)
ORACLE_REQUESTS := 680
# requests in flight at once (run_oracle.py --jobs): the server computes one
# while the oracle checks another, on every core (tests/arch runs it under
# qemu, which emulates one guest thread per core)
ORACLE_JOBS := $(shell nproc)
ORACLE_RUN  := $(PYTHON) tests/oracle/run_oracle.py --jobs $(ORACLE_JOBS)

.PHONY: test-oracle

test-oracle: $(SERVER_BIN)
	$(ORACLE_RUN) --server $(SERVER_BIN) --requests $(ORACLE_REQUESTS)
	$(PYTHON) tests/oracle/torch_parity.py --server $(SERVER_BIN) --cases 80
	$(PYTHON) tests/oracle/decode_steps.py --server $(SERVER_BIN) --cases 24
