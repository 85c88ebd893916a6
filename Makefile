# Two commands on a fresh machine with python3 (3.11+) and the package index: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit golden bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The demo pod is unschedulable, so kdiagnose exits 1 by design; only 2 (usage) or 3 (error) fail the target.
demo: $(STAMP)
	@$(BIN)/python -m kdiagnose.cli fixtures/demo/cluster.yaml; rc=$$?; \
	  if [ $$rc -gt 1 ]; then echo "kdiagnose failed with exit code $$rc" >&2; exit $$rc; fi

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

golden: $(STAMP)
	$(BIN)/python -m tests.golden_harness -q

# Not part of `make test`: generates 500/1,000/5,000-node dumps (up to 1.4 GB) and takes minutes.
BENCH_SIZES ?= 500,1000,5000
bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --sizes $(BENCH_SIZES) --pending 20

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
