# Two commands on a fresh machine with python3 (3.11+) and the package index: `make demo`, `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit golden bench e2e e2e-build clean conformance conformance-sample ci-real goldens harness fuzz-parity

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml requirements/ci.lock
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements/ci.lock -e '.[dev]'
	@# The editable install leaves kdiagnose uncompiled, and with PYTHONDONTWRITEBYTECODE set (as on CI
	@# machines) every run would compile its ~170 modules again (0.3-2 s a run): write the bytecode once.
	$(BIN)/python -m compileall -q kdiagnose
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
# Decoding workers to compare (issue #17), each run pinned to that many cores (taskset).
BENCH_JOBS ?= 1,2
# The mass-pending incident of issue #17: N distinct pending pods, `kdiagnose DUMP -o json`, per phase.
BENCH_MASS_NODES ?= 5000
BENCH_MASS_PENDING ?= 1000
# `kubectl get -o yaml` dumps (generating one takes ~2 min of CPU and ~2.7 GB per 1,000 nodes).
BENCH_YAML_SIZES ?= 1000
bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --sizes $(BENCH_SIZES) --pending 20 --varied --jobs $(BENCH_JOBS) --pin
	$(BIN)/python benchmarks/mass_pending.py --nodes $(BENCH_MASS_NODES) --pending $(BENCH_MASS_PENDING) --cli
	$(BIN)/python benchmarks/run.py --sizes $(BENCH_YAML_SIZES) --format yaml --pending 1 --jobs $(BENCH_JOBS) --pin

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

# --- The real kube-scheduler as the test oracle (conformance/README.md). Needs Go and the module proxy;
# the first build of a release takes minutes. Not part of `make test`.
# Every corpus and the exact release that recorded it (DIR:VERSION). A new release is one more entry
# (sh conformance/mkmod.sh vX.Y.Z, then `make goldens K8S=vX.Y.Z DIR=fixtures/golden-vXY`).
CONFORMANCE_CORPORA ?= fixtures/golden:v1.34.1 fixtures/golden-config:v1.34.1 fixtures/golden-v135:v1.35.4 fixtures/golden-v134-latest:v1.34.12 fixtures/golden-v135-latest:v1.35.8 fixtures/golden-v136:v1.36.5 fixtures/golden-v137:v1.37.2 fixtures/golden-v133:v1.33.3 fixtures/golden-v132:v1.32.2 fixtures/golden-v131:v1.31.8
PYTHON3 ?= python3
HARNESS_OUT ?= conformance/out
K8S ?= v1.34.1
DIR ?=

conformance/bin/harness-%: conformance/mod/%.mod conformance/mod/%.sum conformance/*.go
	mkdir -p conformance/bin && cd conformance && $(GO) build -modfile=mod/$*.mod -tags "$$(sh tags.sh $*)" -o bin/harness-$* .

harness: conformance/bin/harness-$(K8S)

# Regenerate one corpus with one release: make goldens K8S=v1.37.2 DIR=fixtures/golden-v137
goldens: conformance/bin/harness-$(K8S)
	@test -n "$(DIR)" || { echo "usage: make goldens K8S=vX.Y.Z DIR=fixtures/golden-vXY" >&2; exit 2; }
	sh conformance/run-corpus.sh $(DIR) $(K8S) $(DIR)

# Every recorded corpus re-run with the release that recorded it, compared field by field.
conformance:
	@set -e; for entry in $(CONFORMANCE_CORPORA); do \
	  dir=$${entry%%:*}; v=$${entry##*:}; out=$(HARNESS_OUT)/$$v/$$dir; \
	  $(MAKE) --no-print-directory conformance/bin/harness-$$v; \
	  echo "== $$dir with kube-scheduler $$v"; rm -rf $$out; \
	  sh conformance/run-corpus.sh $$dir $$v $$out; \
	  $(PYTHON3) conformance/compare.py $$dir $$out; \
	done

# One release, a sample of cases (CI): the harness must reproduce them, and kdiagnose must match them.
SAMPLE_K8S ?= v1.37.2
SAMPLE_DIR ?= fixtures/golden-v137
SAMPLE_CASES ?= seed-hello-web,preemption-daemonset-node-critical,volumes-wffc-local-pv,dra-allocation-mode-all,nodeaffinity-matchfields-node-name,gates-scheduling-gates,edge-zero-nodes,random/rand-1-0008,features/preemption-success-message,features/dra-consumable-capacity-shared-nics,features/ndf-restart-all-containers,features/csi-driver-not-installed
conformance-sample: conformance/bin/harness-$(SAMPLE_K8S)
	rm -rf $(HARNESS_OUT)/sample
	ONLY=$(SAMPLE_CASES) sh conformance/run-corpus.sh $(SAMPLE_DIR) $(SAMPLE_K8S) $(HARNESS_OUT)/sample
	$(PYTHON3) conformance/compare.py $(SAMPLE_DIR) $(HARNESS_OUT)/sample --cases=$(SAMPLE_CASES)

# What .ci/run adds after `make test` when Go is on the machine (README, Development): the real
# kube-apiserver + kube-scheduler of the newest release line (e2e, all of tests/e2e) and the conformance
# sample. The e2e binary is built first: the harness of the same release then reuses its build cache.
ci-real: $(STAMP)
	$(MAKE) --no-print-directory e2e E2E_K8S=$(word 1,$(E2E_K8S))
	$(MAKE) --no-print-directory conformance-sample PYTHON3=$(BIN)/python

# Differential fuzzer (issue #14): random realistic scenarios, the real kube-scheduler (conformance harness,
# `make harness K8S=...`) vs kdiagnose, field by field; minimal failing cases go to FUZZ_OUT.
#   make fuzz-parity K8S=v1.35.4 MINUTES=10 [HARNESS=path/to/harness] [SEED=1]
MINUTES ?= 10
SEED ?= 1
HARNESS ?= conformance/bin/harness-$(K8S)
FUZZ_OUT ?= fuzz-out/$(K8S)
fuzz-parity: $(STAMP)
	@test -x "$(HARNESS)" || $(MAKE) harness K8S=$(K8S)
	nice -n 10 $(BIN)/python -m conformance.fuzz.run --k8s $(K8S) --minutes $(MINUTES) --seed $(SEED) \
	  --harness $(HARNESS) --out $(FUZZ_OUT)
