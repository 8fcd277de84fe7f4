# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo event test test-fast lint typecheck system-deps clean venue-check

# The suite runs on every core (pytest-xdist); each worker has its own brokers, ports and
# data dirs; an idle worker takes tests queued for a busy one (worksteal). XDIST=0 runs it
# in one process. The 30 slowest tests are listed at the end (where the time goes).
XDIST ?= auto

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (found %s)" % sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

# TypeScript (pinned in package.json) type-checks the pages' JS: nothing is built.
NODE_STAMP := node_modules/.installed

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

system-deps:
	@bash .ci/system-deps

# The demo listens on this machine only (HOST=127.0.0.1). At an event, phones on the same
# network join by the QR codes: `make event` (the same as `make demo HOST=0.0.0.0`).
# DEMO_ARGS passes further options, e.g. DEMO_ARGS="--players 2 --lang fr".
HOST      ?= 127.0.0.1
DEMO_ARGS ?=

demo: $(STAMP)
	$(VENV)/bin/cauldron demo --host $(HOST) $(DEMO_ARGS)

event: $(STAMP)
	$(VENV)/bin/cauldron demo --host 0.0.0.0 $(DEMO_ARGS)

lint: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy --strict engine hub dashboard tests
	for conftest in $$(find tests -mindepth 2 -name conftest.py | sort); do \
		$(VENV)/bin/mypy --strict $$conftest || exit 1; done
	$(PY) -m dashboard.jsdoc --check
	node_modules/.bin/tsc -p dashboard/tsconfig.json

test: $(STAMP) system-deps lint
	$(VENV)/bin/pytest -n $(XDIST) --dist worksteal --durations=30 $(PYTEST_ARGS)

# While working: no end-to-end or browser test (make test runs them all).
test-fast: $(STAMP)
	$(VENV)/bin/pytest -n $(XDIST) --dist worksteal -m "not e2e and not browser" $(PYTEST_ARGS)

# A venue in miniature with faults (tests/venue_check.py): 3 engines on a throw-away
# PostgreSQL, 6 tables playing, engines SIGKILLed and SIGSTOPped; failover, loss, replays.
venue-check: $(STAMP) system-deps
	$(PY) tests/venue_check.py $(VENUE_ARGS)

clean:
	rm -rf $(VENV) node_modules .pytest_cache .mypy_cache .ruff_cache .hypothesis
