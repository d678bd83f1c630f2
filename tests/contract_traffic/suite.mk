# tests/contract_traffic - openapi.yaml judged by tools the project did not
# write (npm packages pinned by the committed package-lock.json;
# node_modules is git-ignored and installed again only when the lock
# changes):
#   make test-contract-traffic   Redocly's recommended and Spectral's oas
#       rulesets: no error, and no warning but those docs/api.md keeps
#       (lint.mjs; about 10 s)
TEST_SUITES += test-contract-traffic
DEB_TEST    += nodejs

CONTRACT_DIR  := tests/contract_traffic
CONTRACT_NODE := $(CONTRACT_DIR)/node_modules/.package-lock.json

.PHONY: test-contract-traffic

$(CONTRACT_NODE): $(CONTRACT_DIR)/package-lock.json
	cd $(CONTRACT_DIR) && npm ci --no-audit --no-fund --loglevel=error

test-contract-traffic: $(CONTRACT_NODE)
	node $(CONTRACT_DIR)/lint.mjs openapi.yaml docs/api.md
