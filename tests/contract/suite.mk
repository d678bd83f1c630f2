# tests/contract - openapi.yaml and docs/api.md describe exactly what the
# server does: its request fields, its error codes (the table of
# server/base/error_codes.c) and its routes; docs/api.md's table of fields
# names exactly the schema table's fields (check_docs_fields.py);
# openapi.yaml's request schemas, docs/api.md's table of fields and
# docs/reliability.md's table of limits are, as committed, what
# tools/gen_contract.c writes from the schema table and the table of
# options (check_generated.py); --help fits 100 columns, shows every flag's
# placeholder and variable, and names the routes the API key guards
# (check_help.py); /metrics reads as Prometheus's own parser reads it, in
# its naming conventions (check_metrics.py).
#   make test-contract
TEST_SUITES += test-contract
DEB_TEST    += python3-yaml python3-prometheus-client

.PHONY: test-contract

# the server's request schema, stages and error codes, printed as JSON for
# this suite and tests/oip
PRINT_SCHEMA := $(BUILD)/tests/print_schema
$(PRINT_SCHEMA): $(BUILD)/tests/contract/print_schema.o \
                 $(BUILD)/server/request/schema.o \
                 $(BUILD)/server/request/schema_lookup.o \
                 $(BUILD)/server/request/request.o \
                 $(BUILD)/server/request/codec_error.o \
                 $(BUILD)/server/request/number_words.o \
                 $(BUILD)/server/base/error_codes.o \
                 $(BUILD)/server/base/buf.o \
                 $(BUILD)/server/base/block_cache.o $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@
TEST_BUILD += $(PRINT_SCHEMA)

test-contract: $(SERVER_BIN) $(PRINT_SCHEMA) $(GEN_CONTRACT)
	$(PYTHON) tests/contract/check_generated.py --gen $(GEN_CONTRACT) \
	  openapi.yaml docs/api.md docs/reliability.md
	$(PYTHON) tests/contract/check_openapi.py --server $(SERVER_BIN) \
	  --print-schema $(PRINT_SCHEMA)
	$(PYTHON) tests/contract/check_docs_fields.py --print-schema $(PRINT_SCHEMA)
	$(PYTHON) tests/contract/check_help.py $(SERVER_BIN)
	$(PYTHON) tests/contract/check_metrics.py $(SERVER_BIN)
