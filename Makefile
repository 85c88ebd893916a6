# Two commands on a fresh machine with python3 (3.11+) and the package index: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit golden bench e2e e2e-build clean

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

# Not part of `make test`: live mode against a real kube-apiserver + kube-scheduler (tests/e2e/, e2e/README.md).
# Needs Go and the module proxy; the first build of each release line compiles k8s.io/kubernetes (long),
# later runs reuse e2e/bin/. E2E_K8S picks the release lines (one go.mod each: e2e/mod/v<line>.mod).
E2E_K8S ?= 1.37 1.36
E2E_BINS := $(foreach v,$(E2E_K8S),e2e/bin/e2e-cluster-v$(v))
GO ?= go

e2e/bin/e2e-cluster-v%: e2e/*.go e2e/go.mod e2e/mod/v%.mod e2e/mod/v%.sum
	cd e2e && k8s=$$(awk '$$1 == "k8s.io/kubernetes" { print $$2 }' mod/v$*.mod) && \
	  $(GO) build -modfile=mod/v$*.mod -o bin/e2e-cluster-v$* \
	    -ldflags "-X k8s.io/component-base/version.gitVersion=$$k8s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$*))" .

e2e-build: $(E2E_BINS)

e2e: $(STAMP) $(E2E_BINS)
	KDIAGNOSE_E2E=1 KDIAGNOSE_E2E_K8S="$(E2E_K8S)" $(BIN)/pytest tests/e2e

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
