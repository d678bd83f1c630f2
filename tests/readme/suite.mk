# The documents tell the truth: every curl example of README.md and docs/*.md
# prints what the page shows, every relative link names a file that exists,
# and openapi.yaml matches the server's fields, codes and routes.
TEST_SUITES += test-readme test-contract
DEB_TEST    += python3-yaml

.PHONY: test-readme test-contract
test-readme: $(SERVER_BIN)
	$(PYTHON) tests/readme/check_readme.py --server $(SERVER_BIN)

# the server's request schema table, printed as JSON for the contract test
PRINT_SCHEMA := $(BUILD)/tests/print_schema
$(PRINT_SCHEMA): $(BUILD)/tests/readme/print_schema.o \
                 $(BUILD)/server/json/schema.o $(BUILD)/server/json/request.o \
                 $(CORE_OBJ)
	$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

test-contract: $(SERVER_BIN) $(PRINT_SCHEMA)
	$(PYTHON) tests/readme/check_openapi.py --server $(SERVER_BIN) \
	  --print-schema $(PRINT_SCHEMA)
