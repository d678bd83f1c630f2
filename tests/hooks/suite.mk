# tests/hooks - the commit-msg hook that `make hooks` installs
# (tools/hooks/commit-msg) refuses what the commit rule refuses, as git runs
# it, and lets the rest through.
#   make test-hooks
TEST_SUITES += test-hooks
DEB_TEST    += git

.PHONY: test-hooks

test-hooks:
	$(PYTHON) tests/hooks/test_commit_msg.py
