# tests/lessons - the three NumPy lessons' own numbers, through the server.
#   make test-lessons
TEST_SUITES += test-lessons
DEB_TEST    += python3-numpy

.PHONY: test-lessons

test-lessons: $(SERVER_BIN)
	$(PYTHON) tests/lessons/run_lessons.py --server $(SERVER_BIN)
