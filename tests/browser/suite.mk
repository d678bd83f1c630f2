# tests/browser: the visualizer page (server/web/) end to end in
# Debian's headless Chromium, driven by playwright-core (npm, pinned by the
# committed package-lock.json; node_modules is git-ignored).
#   make test-browser        screenshots land in tests/artifacts/; after a
#   failure, or a page that stopped drawing frames, it prints what the page,
#   the server and Chromium were doing (tests/artifacts/<file>-health.txt)
#   make test-browser BROWSER_TEST_FILTER=causal   only the tests whose names
#   match that regular expression (node's --test-name-pattern)
#   READ_LANGS=es READ_WIDTHS=1366 make test-browser BROWSER_TESTS=reading.test.mjs
#   the reading sweep in fewer languages or widths (default: all it lists);
#   its lines "# reading" print what it cost
TEST_SUITES += test-browser
DEB_TEST    += chromium nodejs

BROWSER_DIR := tests/browser
# one file per seam of the page (harness.mjs: what they share), each with its
# own server and Chromium and its own artifacts (tests/artifacts/<file>-*),
# BROWSER_JOBS files at a time: a file spends much of its time waiting on
# Chromium's frames and the server, so three keep two cores busy (two left
# 0.6 of a core idle).
# BROWSER_ALONE: the files whose checks time the page (one edit's page work,
# a new element's first render) run after the others, one at a time.
# `make test-browser BROWSER_TESTS=form.test.mjs` runs one.
# BROWSER_FIRST: the longest files, started first (longest first) so that
# the files at a time end together, not with one long file left alone.
BROWSER_TESTS ?= $(notdir $(wildcard $(BROWSER_DIR)/*.test.mjs))
BROWSER_JOBS  ?= 3
BROWSER_ALONE ?= budget.test.mjs embed-timed.test.mjs
BROWSER_FIRST := reading.test.mjs reading-widths.test.mjs links.test.mjs \
                 options.test.mjs guided.test.mjs layout.test.mjs

# playwright-core, installed again only when the lock changes (test-build
# installs it beside the compilers)
BROWSER_NODE := $(BROWSER_DIR)/node_modules/.package-lock.json
TEST_BUILD   += $(BROWSER_NODE)
$(BROWSER_NODE): $(BROWSER_DIR)/package-lock.json
	cd $(BROWSER_DIR) && npm ci --no-audit --no-fund --loglevel=error

.PHONY: test-browser
BROWSER_RUN = ATTENTION_SERVER=$(abspath $(SERVER_BIN)) PYTHON=$(PYTHON) \
  CHROMIUM=/usr/bin/chromium ARTIFACTS=$(abspath tests/artifacts) \
  timeout 1800 node --test --test-reporter=spec \
  $(if $(BROWSER_TEST_FILTER),--test-name-pattern="$$BROWSER_TEST_FILTER")
# (the pattern reaches node through the environment, never through the
# shell's quoting: a name may hold an apostrophe, "the lesson's numbers")
export BROWSER_TEST_FILTER
BROWSER_SIDE := $(foreach f,$(BROWSER_FIRST),$(filter $(f),$(BROWSER_TESTS))) \
  $(filter-out $(BROWSER_ALONE) $(BROWSER_FIRST),$(BROWSER_TESTS))
BROWSER_SOLO := $(filter $(BROWSER_ALONE),$(BROWSER_TESTS))
# client.js's JSDoc types as a course platform's editor reads them (docs/embed.md)
CLIENT_TYPES = $(BROWSER_DIR)/node_modules/.bin/tsc --noEmit --allowJs --checkJs \
  --target es2022 --module es2022 --moduleResolution bundler --lib es2022,dom \
  $(BROWSER_DIR)/client-types/course.js
test-browser: $(SERVER_BIN) $(BROWSER_NODE)
	$(PYTHON) tools/gen_presets.py --check server/web/presets.js
	$(CLIENT_TYPES) && echo "client.js: its types read by TypeScript as course.js uses them"
	@mkdir -p tests/artifacts && rm -f tests/artifacts/*-health.txt
	cd $(BROWSER_DIR) && status=0; \
	  $(if $(strip $(BROWSER_SIDE)),$(BROWSER_RUN) --test-concurrency=$(BROWSER_JOBS) \
	    $(BROWSER_SIDE) || status=1;) \
	  $(if $(strip $(BROWSER_SOLO)),$(BROWSER_RUN) --test-concurrency=1 \
	    $(BROWSER_SOLO) || status=1;) \
	  for health in $(abspath tests/artifacts)/*-health.txt; do \
	    [ -s "$$health" ] || continue; \
	    echo "== what the page was doing ($$health):"; cat "$$health"; \
	  done; exit $$status
