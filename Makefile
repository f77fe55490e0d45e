# The two commands of the README: `make demo` and `make test`. Everything else is a step of them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The pinned agent CLIs live outside the repository and are reused when present.
AGENT_CLIS ?= $(HOME)/.cache/hz/agent-clis
# The official JSON-Schema-Test-Suite, from the sdist of the installed jsonschema; reused too.
JSON_SCHEMA_SUITE ?= $(HOME)/.cache/hz/json-schema-suite
# The sdist of heinzel 0.7.19, whose contracts tests/integration/test_heinzel_contracts.py
# migrates and runs; reused too.
HEINZEL ?= $(HOME)/.cache/hz/heinzel

.PHONY: demo test setup checks lint typecheck pytest agent-clis json-schema-suite heinzel bench bench-workers clean

# A venv made before the distribution was renamed holds hz as `hz` too: two distributions of
# one package, each announcing the runner plugins. Only `hz-contracts` stays. The old editable
# install's metadata in the checkout (hz.egg-info) goes too: run from the checkout, Python finds
# it before the venv's and would name the plugins' distribution `hz`.
FORGET_OLD_NAME = $(BIN)/pip uninstall -q -y --disable-pip-version-check hz 2>/dev/null || true; \
	rm -rf hz.egg-info

$(BIN)/hz: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(FORGET_OLD_NAME)
	$(BIN)/pip install -q --disable-pip-version-check -e .
	@touch $@

# One pip run for hz and its test tools: a second run would build hz's editable wheel again.
$(VENV)/.test-deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(FORGET_OLD_NAME)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[test]'
	@touch $(BIN)/hz $@

# The main job, end to end on the example contracts: validate, compile (and check the
# artifacts are fresh), render a packet from example inputs, show what the configured runner
# would start, run it with the built-in echo runner (no agent needed), verify the receipts.
# A second `make demo` runs it again: a run without --request-key is a new run. Its runs are
# recorded in a state directory of its own (build/state: its run ledger), not in the user's.
demo: $(BIN)/hz
	$(BIN)/hz validate contracts/
	$(BIN)/hz compile contracts --out build/jobs
	$(BIN)/hz compile contracts --out build/jobs --check
	$(BIN)/hz render build/jobs/weekly-digest.job.json \
	  --inputs contracts/inputs/weekly-digest.json -o build/weekly-digest.packet.json
	$(BIN)/hz run build/weekly-digest.packet.json --dry-run
	HZ_STATE_DIR=build/state HZ_RUNNER=echo $(BIN)/hz run build/weekly-digest.packet.json \
	  --receipt-dir build/receipts
	$(BIN)/hz receipts verify build/receipts

agent-clis:
	.ci/install-agent-clis "$(AGENT_CLIS)"

# Needs only jsonschema, which hz itself installs; after the test tools, so that `make test`
# sets up one venv with one pip run.
json-schema-suite: $(VENV)/.test-deps
	.ci/fetch-json-schema-suite $(BIN)/python "$(JSON_SCHEMA_SUITE)"

heinzel: $(VENV)/.test-deps
	.ci/fetch-heinzel $(BIN)/python "$(HEINZEL)"

lint: $(VENV)/.test-deps
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: $(VENV)/.test-deps
	$(BIN)/mypy

# Two lanes, one coverage: the bulk on three workers (pytest-xdist; on two cores a third
# overlaps the tests that wait on an agent or a server), then the timing-sensitive tests (marked
# `serial`: signals, cancels, timeouts, kill grace, fleet chaos) alone on the quiet machine. The
# second lane appends to the first's data, so the floor is checked over both. worksteal: a
# worker that runs out of tests takes some of another's, so no long test ends the lane alone.
PYTEST_ENV = HZ_AGENT_CLIS="$(AGENT_CLIS)" HZ_JSON_SCHEMA_SUITE="$(JSON_SCHEMA_SUITE)" \
	HZ_HEINZEL="$(HEINZEL)"
# Every hz the tests start reads the product's bytecode compiled once here: an environment with
# PYTHONDONTWRITEBYTECODE would otherwise compile hz from source in each of hundreds of
# processes. compileall skips what is fresh; the files are gitignored.
# The serial lane collects only the files that mark a test `serial` (collecting all ~3,800
# tests to keep ~100 costs seconds); with no such file it collects everything, as before.
SERIAL_FILES = $(shell grep -rl 'mark\.serial' tests --include='test_*.py' | sort)
pytest: $(VENV)/.test-deps json-schema-suite heinzel
	$(BIN)/python -m compileall -q hz compiler runtime
	.ci/timed "pytest, parallel lane (-n 3)" env $(PYTEST_ENV) \
	  $(BIN)/pytest -n 3 --dist worksteal -m "not serial" --cov --cov-report= --cov-fail-under=0
	.ci/timed "pytest, serial lane" env $(PYTEST_ENV) $(BIN)/pytest -m serial --cov --cov-append \
	  $(SERIAL_FILES)

# The downloads do not depend on each other (pip, npm, the suite's sdist): in parallel.
setup: $(VENV)/.test-deps agent-clis json-schema-suite heinzel

# lint and typecheck are two single-threaded programs: side by side on the two cores.
checks: lint typecheck

# pytest runs alone: its signal and timeout tests measure time (and its serial lane runs them
# alone in turn).
test:
	@rm -f build/times
	.ci/timed "setup (venv, agent CLIs, suite)" $(MAKE) -j3 --output-sync=target setup
	.ci/timed "checks (ruff, mypy, import-linter)" $(MAKE) -j2 --output-sync=target checks
	$(MAKE) pytest
	@echo "make test: every step's time"; cat build/times

bench: $(VENV)/.test-deps
	$(BIN)/python benchmarks/issue29.py
	$(BIN)/python benchmarks/validate.py
	$(BIN)/python benchmarks/compile.py
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/plan.py

# hz worker fleets on a throwaway PostgreSQL (its server binaries: .ci/install-debian);
# a few minutes.
bench-workers: $(VENV)/.test-deps
	$(BIN)/python benchmarks/workers.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
