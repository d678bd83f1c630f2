# tests/suites - `make test`'s runner (tests/run_suites.py) stops every
# process a suite started (under `timeout`, in a session of its own, left in
# the background) after a signal, after a failure in the other lane, and
# when the suite ends; about 6 s.
#   make test-suites
TEST_SUITES += test-suites

.PHONY: test-suites

test-suites:
	$(PYTHON) tests/suites/test_run_suites.py
