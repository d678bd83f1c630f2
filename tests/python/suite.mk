# tests/python - the Python client (clients/python) as a user installs it:
# into a fresh venv (Debian's python3-venv, the system's NumPy and PyTorch)
# with pip, offline, then against the server and Debian's PyTorch 1.13 in
# float64 to 1e-12: nn.MultiheadAttention in every form and mask,
# scaled_dot_product_attention's definition, errors, tracing a model, the
# notebook view and its link.
#   make test-python
TEST_SUITES += test-python
DEB_TEST    += python3-venv python3-pip python3-numpy python3-torch \
               python3-setuptools

.PHONY: test-python

test-python: $(SERVER_BIN)
	$(PYTHON) tests/python/run_python.py --server $(SERVER_BIN)
