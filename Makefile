# The two commands of the README: `make demo` and `make test`. Everything else is a step of them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The pinned agent CLIs live outside the repository and are reused when present.
AGENT_CLIS ?= $(HOME)/.cache/hz/agent-clis

.PHONY: demo test lint typecheck unit agent-clis bench clean

$(BIN)/hz: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e .
	@touch $@

$(VENV)/.test-deps: pyproject.toml $(BIN)/hz
	$(BIN)/pip install -q --disable-pip-version-check -e '.[test]'
	@touch $@

demo: $(BIN)/hz
	$(BIN)/hz validate contracts/

agent-clis:
	.ci/install-agent-clis "$(AGENT_CLIS)"

lint: $(VENV)/.test-deps
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(VENV)/.test-deps
	$(BIN)/mypy

unit: $(VENV)/.test-deps
	HZ_AGENT_CLIS="$(AGENT_CLIS)" $(BIN)/pytest

test: $(VENV)/.test-deps agent-clis lint typecheck unit

bench: $(VENV)/.test-deps
	$(BIN)/python benchmarks/validate.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
