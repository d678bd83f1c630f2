# tests/browser: the visualizer page (server/web/) end to end in
# Debian's headless Chromium, driven by playwright-core (npm, pinned by the
# committed package-lock.json; node_modules is git-ignored).
#   make test-browser        screenshots land in tests/artifacts/; after a
#   failure, or a page that stopped drawing frames, it prints what the page,
#   the server and Chromium were doing (tests/artifacts/browser-health.txt)
#   make test-browser BROWSER_TEST_FILTER=causal   only the tests whose names
#   match that regular expression (node's --test-name-pattern)
#   READ_LANGS=es READ_WIDTHS=1366 make test-browser BROWSER_TESTS=reading.test.mjs
#   the reading sweep in fewer languages or widths (default: all it lists);
#   its lines "# reading" print what it cost
TEST_SUITES += test-browser
DEB_TEST    += chromium nodejs

BROWSER_DIR := tests/browser
# one file per seam of the page (harness.mjs: what they share), run one at a
# time (each opens its own server and Chromium); `make test-browser
# BROWSER_TESTS=form.test.mjs` runs one
BROWSER_TESTS ?= $(notdir $(wildcard $(BROWSER_DIR)/*.test.mjs))

# playwright-core, installed again only when the lock changes (test-build
# installs it beside the compilers)
BROWSER_NODE := $(BROWSER_DIR)/node_modules/.package-lock.json
TEST_BUILD   += $(BROWSER_NODE)
$(BROWSER_NODE): $(BROWSER_DIR)/package-lock.json
	cd $(BROWSER_DIR) && npm ci --no-audit --no-fund --loglevel=error

.PHONY: test-browser
test-browser: $(SERVER_BIN) $(BROWSER_NODE)
	$(PYTHON) tools/gen_presets.py --check server/web/presets.js
	@mkdir -p tests/artifacts && : > tests/artifacts/browser-health.txt
	cd $(BROWSER_DIR) && ATTENTION_SERVER=$(abspath $(SERVER_BIN)) \
	  PYTHON=$(PYTHON) CHROMIUM=/usr/bin/chromium \
	  ARTIFACTS=$(abspath tests/artifacts) \
	  timeout 1800 node --test --test-concurrency=1 --test-reporter=spec \
	  $(if $(BROWSER_TEST_FILTER),--test-name-pattern='$(BROWSER_TEST_FILTER)') \
	  $(BROWSER_TESTS); \
	  status=$$?; health=$(abspath tests/artifacts)/browser-health.txt; \
	  if [ -s $$health ]; then echo "== what the page was doing:"; cat $$health; fi; \
	  exit $$status
