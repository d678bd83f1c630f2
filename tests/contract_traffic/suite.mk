# tests/contract_traffic - openapi.yaml judged by tools the project did not
# write (npm packages pinned by the committed package-lock.json;
# node_modules is git-ignored and installed again only when the lock
# changes).  make test-contract-traffic (about a minute and a half):
#   1. Redocly's recommended and Spectral's oas rulesets: no error, and no
#      warning but those docs/api.md keeps (lint.mjs; about 10 s)
#   2. real traffic: the HTTP tests of results and refusals (one lane), the
#      lessons, every curl example of the docs, the /v2 suite and a sample
#      of the oracle's forms (every 11th of its requests) run against the
#      server behind record_server.mjs, which writes down every byte both
#      ways, and so are corpus.jsonl's requests (send_corpus.mjs: a
#      refusal for every problem code the suites leave out, requests with
#      every optional field, HEAD of every GET route, each with the answer
#      it must get), and send_pressure.mjs's servers under pressure (a
#      held memory budget: overloaded; SIGTERM mid-computation: draining;
#      an address-space limit: out_of_memory); check_traffic.mjs then
#      validates every request and reply (inflated when compressed) against
#      openapi.yaml with Ajv, the binary extension's bytes against its
#      rules, and first that replies broken on purpose are caught (a
#      problem without its code; a /v1 result with a member no reply has:
#      AttentionResponse names every member, make test-contract checks it
#      against the core's stages).  A violation fails and names the
#      request; so does a problem code that no reply carries, or a run
#      with no /v1 result to judge.
TEST_SUITES += test-contract-traffic-record test-contract-traffic-judge
DEB_TEST    += nodejs util-linux

CONTRACT_DIR    := tests/contract_traffic
CONTRACT_NODE   := $(CONTRACT_DIR)/node_modules/.package-lock.json
CONTRACT_RECORD := $(BUILD)/contract_traffic
# the HTTP tests whose traffic is recorded: every one but those of timing
# (tests/http/suite.mk's HTTP_TIMED), of the listening port, which a relay
# would change, and of the visualizer's files, plain and coded
# (x-prefix-routes in openapi.yaml: a prefix, no operation to check them
# against)
CONTRACT_HTTP    = $(filter-out $(HTTP_TIMED) \
                     $(addprefix $(BUILD)/tests/http/, \
                       test_one_server_per_port test_web_assets \
                       test_static_coding), \
                     $(HTTP_TESTS))
CONTRACT_WRAP   := $(abspath $(CONTRACT_DIR)/record_server.mjs)
CONTRACT_RUN     = CONTRACT_SERVER=$(abspath $(SERVER_BIN)) \
                   CONTRACT_RECORD=$(abspath $(CONTRACT_RECORD))

TEST_BUILD      += $(CONTRACT_NODE)

.PHONY: test-contract-traffic test-contract-traffic-record \
        test-contract-traffic-judge

$(CONTRACT_NODE): $(CONTRACT_DIR)/package-lock.json
	cd $(CONTRACT_DIR) && npm ci --no-audit --no-fund --loglevel=error

# Two halves, one after the other: -record lints and records the traffic
# that times nothing (`make test` runs it beside other suites); -judge
# records send_pressure.mjs's (a request computing while SIGTERM's grace
# ends: alone) and then judges all of it.
test-contract-traffic:
	@$(MAKE) --no-print-directory test-contract-traffic-record
	@$(MAKE) --no-print-directory test-contract-traffic-judge

test-contract-traffic-record: $(CONTRACT_NODE) $(SERVER_BIN) $(CONTRACT_HTTP) \
                              $(BUILD)/tests/print_schema
	node $(CONTRACT_DIR)/lint.mjs openapi.yaml docs/api.md
	rm -rf $(CONTRACT_RECORD) && mkdir -p $(CONTRACT_RECORD)
	@for t in $(CONTRACT_HTTP); do echo "== $$t, recorded"; \
	  $(CONTRACT_RUN) CONTRACT_LABEL=$$(basename $$t) HTTP_TEST_LANE=auto \
	  ATTENTION_SERVER=$(CONTRACT_WRAP) $$t > $(CONTRACT_RECORD).log 2>&1 \
	  || { cat $(CONTRACT_RECORD).log; exit 1; }; done
	$(CONTRACT_RUN) CONTRACT_LABEL=lessons $(PYTHON) \
	  tests/lessons/run_lessons.py --server $(CONTRACT_WRAP)
	$(CONTRACT_RUN) CONTRACT_LABEL=docs $(PYTHON) \
	  tests/readme/check_readme.py --server $(CONTRACT_WRAP)
	$(CONTRACT_RUN) CONTRACT_LABEL=oip $(PYTHON) tests/oip/run_oip.py \
	  --server $(CONTRACT_WRAP) --print-schema $(BUILD)/tests/print_schema
	$(CONTRACT_RUN) CONTRACT_LABEL=oracle $(PYTHON) \
	  tests/oracle/run_oracle.py --server $(CONTRACT_WRAP) \
	  --requests $(ORACLE_REQUESTS) --stride 11
	$(CONTRACT_RUN) node $(CONTRACT_DIR)/send_corpus.mjs \
	  $(CONTRACT_DIR)/corpus.jsonl

test-contract-traffic-judge: $(CONTRACT_NODE) $(SERVER_BIN)
	@ls $(CONTRACT_RECORD)/* >/dev/null 2>&1 || { echo "no traffic in" \
	  "$(CONTRACT_RECORD): make test-contract-traffic-record first"; exit 1; }
	$(CONTRACT_RUN) node $(CONTRACT_DIR)/send_pressure.mjs
	node $(CONTRACT_DIR)/check_traffic.mjs openapi.yaml $(CONTRACT_RECORD) \
	  --self-test
