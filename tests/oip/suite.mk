# tests/oip - the Open Inference Protocol (/v2) through a client that frames
# requests as tritonclient.http does: health and metadata, the lessons and
# oracle requests giving /v1's very bytes, binary framing both ways, every
# error in the protocol's shape.
#   make test-oip
TEST_SUITES += test-oip
DEB_TEST    += python3-numpy

.PHONY: test-oip

# print_schema's rule is tests/contract/suite.mk's: the model's metadata must
# list the schema table's tensors
test-oip: $(SERVER_BIN) $(BUILD)/tests/print_schema
	$(PYTHON) tests/oip/run_oip.py --server $(SERVER_BIN) \
	  --print-schema $(BUILD)/tests/print_schema
