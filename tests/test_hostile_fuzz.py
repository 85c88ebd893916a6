"""Property-based fuzzing (hypothesis) of every entry point that reads hostile input.

The property is the contract of tests/test_hostile.py: any input gives a verdict, a documented degraded
result, or exactly one `kdiagnose: error:` line with its exit code; never a traceback, hang or internal error.
Entry points: the file loaders (mutated dumps, raw text), quantities, the scheduler configuration, `--pools`,
`check -f` manifests, and DRA CEL selectors (generated with depth, size and cost dimensions).

The normal suite runs a few examples each. A campaign: KDIAGNOSE_FUZZ_SECONDS=600 runs each test for that
long (nice -n 19 pytest tests/test_hostile_fuzz.py -k NAME), writing its example count to stderr.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kdiagnose.cli import app
from kdiagnose.errors import KdiagnoseError
from kdiagnose.load.parse import parse_bytes
from kdiagnose.model.pools import parse_pools
from kdiagnose.model.quantity import QuantityError, parse_quantity
from kdiagnose.schedconfig import parse_scheduler_config
from kdiagnose.scheduler.plugins.dynamicresources.cel import (
    CelCompileError,
    CelRuntimeError,
    CelUnsupported,
    compile_expression,
    device_env,
)
from kdiagnose.versions import dialect_for

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = 8  # per test in the normal suite: `make test` stays fast
CAMPAIGN = float(os.environ.get("KDIAGNOSE_FUZZ_SECONDS") or 0)
FUZZ = settings(
    max_examples=EXAMPLES if not CAMPAIGN else 200,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    derandomize=not CAMPAIGN,
)
Obj = dict[str, Any]


def campaign(test: Callable[[], None]) -> None:
    """Run a @given test once (normal suite) or repeatedly for KDIAGNOSE_FUZZ_SECONDS (a campaign)."""
    if not CAMPAIGN:
        test()
        return
    end = time.monotonic() + CAMPAIGN
    runs = 0
    while time.monotonic() < end:
        test()
        runs += 1
    print(f"campaign {test.__name__}: {runs} runs of {FUZZ.max_examples} examples", file=sys.stderr)


def invoke(args: list[str]) -> Any:
    result = CliRunner().invoke(app, args)
    if "internal error" in result.stderr:
        # The traceback's last frames, for the report of the failing example.
        debug = CliRunner().invoke(app, args, env={"KDIAGNOSE_DEBUG": "1"})
        result.debug = "\n".join(debug.stderr.splitlines()[-8:])
    return result


def check_cli(result: Any, what: str, codes: tuple[int, ...] = (0, 1, 3)) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        what,
        repr(result.exception),
    )
    err = result.stderr
    assert "internal error" not in err and "Traceback" not in err, (what, err, getattr(result, "debug", ""))
    assert result.exit_code in codes, (what, result.exit_code, err)
    if result.exit_code not in (0, 1):
        lines = err.splitlines()
        assert len(lines) >= 1 and lines[0].startswith("kdiagnose: error:"), (what, err)
        assert all(x.startswith("kdiagnose: ") for x in lines), (what, err)


# ---------------------------------------------------------------------------------------------- values

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**31 - 1, 2**31, -1, 0, 2**63, 10**999]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["1e400", "1Ki", "-1", "9" * 40, "0.1m", "", "In", "Exists", "NoSchedule", "a/b", "*"]),
)
FIELDS = st.sampled_from(
    [
        "name", "namespace", "labels", "key", "values", "operator", "effect", "requests", "limits", "cpu",
        "memory", "nodeSelector", "affinity", "tolerations", "volumes", "claimName", "selector", "matchLabels",
        "devices", "requests", "exactly", "count", "allocation", "nodeSelectorTerms", "matchExpressions",
        "replicas", "template", "spec", "metadata", "status", "items", "kind", "apiVersion",
    ]
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(FIELDS | st.text(max_size=4), c, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, docs: list[Obj], max_mutations: int = 4) -> list[Obj]:
    """The documents with up to N fields set to hostile values, deleted, or wrapped in a list."""
    docs = copy.deepcopy(docs)
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = _paths(docs)
        path = paths[draw(st.integers(0, len(paths) - 1))]
        parent: Any = docs
        for p in path[:-1]:
            parent = parent[p]
        op = draw(st.sampled_from(["set", "set", "delete", "wrap", "dup"]))
        last = path[-1]
        if op == "delete" and isinstance(parent, dict):
            del parent[last]
        elif op == "wrap":
            parent[last] = [parent[last]]
        elif op == "dup" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        else:
            parent[last] = draw(VALUES)
    return docs


def _docs(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


BASES = {
    name: _docs(ROOT / "fixtures" / "golden" / f"{name}.yaml")
    for name in (
        "dra-first-available-fallback",
        "volumezone-pv-zone-mismatch" if (ROOT / "fixtures/golden/volumezone-pv-zone-mismatch.yaml").exists() else "dra-no-devices-left",
    )
}  # fmt: skip
SMALL_GOLDEN = sorted(p for p in (ROOT / "fixtures" / "golden").glob("*.yaml") if p.stat().st_size < 40_000)


# ---------------------------------------------------------------------------------------------- loaders


@pytest.mark.parametrize("base", [p.stem for p in SMALL_GOLDEN[:: max(1, len(SMALL_GOLDEN) // 6)]])
def test_fuzz_mutated_dumps(tmp_path: Path, base: str) -> None:
    docs = _docs(ROOT / "fixtures" / "golden" / f"{base}.yaml")

    @FUZZ
    @given(mutated(docs), st.sampled_from(["yaml", "json"]))
    def run(variant: list[Obj], fmt: str) -> None:
        f = tmp_path / f"x.{fmt}"
        if fmt == "json":
            f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": variant}, default=str))
        else:
            f.write_text(yaml.safe_dump_all(variant))
        check_cli(invoke(["diagnose", str(f), "-o", "json"]), f.name)

    run.__name__ = f"mutated_dumps[{base}]"
    campaign(run)


TEXT_PIECES = st.sampled_from(
    [
        "- ", "---\n", "kind: Pod\n", "kind: List\nitems:\n", "  ", "\n", "{", "}", "[", "]", "&a ", "*a ",
        "<<: *a\n", "? ", ": ", "'", '"', "metadata: {name: x}\n", "9" * 30, "!!binary ", "%YAML 1.2\n",
        "...\n", "\t", "#", "spec:\n", "  containers:\n  - name: c\n",
    ]
)  # fmt: skip


def test_fuzz_raw_text() -> None:
    @FUZZ
    @given(st.lists(TEXT_PIECES | st.text(max_size=6), max_size=40), st.sampled_from(["x.yaml", "x.json"]))
    def run(pieces: list[str], name: str) -> None:
        with contextlib.suppress(KdiagnoseError):
            parse_bytes("".join(pieces).encode(), name)

    campaign(run)


# ---------------------------------------------------------------------------------------------- quantities


def test_fuzz_quantities() -> None:
    texts = st.from_regex(
        r"\A[+-]?[0-9]{0,30}(\.[0-9]{0,30})?([eE][+-]?[0-9]{0,12}|[KMGTPE]i?|[numkMGTPE])?\Z"
    )

    @FUZZ
    @given(texts | st.text(max_size=30) | SCALARS)
    def run(raw: Any) -> None:
        start = time.process_time()
        with contextlib.suppress(QuantityError):
            parse_quantity(raw)
        assert time.process_time() - start < 2, raw

    campaign(run)


# ---------------------------------------------------------------------------------------------- scheduler config

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}},
            ],
        }
    ],
    "percentageOfNodesToScore": 50,
}


def test_fuzz_scheduler_config() -> None:
    dialect = dialect_for("v1.34.1")

    @FUZZ
    @given(mutated([CONFIG], 3))
    def run(docs: list[Obj]) -> None:
        try:
            parse_scheduler_config(yaml.safe_dump(docs[0]), "c.yaml", dialect)
        except KdiagnoseError as e:
            assert e.exit_code == 2 and "\n" not in str(e).strip(), str(e)

    campaign(run)


# ---------------------------------------------------------------------------------------------- pools

POOLS = [
    {
        "name": "gpu",
        "labels": {"pool": "gpu"},
        "taints": [{"key": "gpu", "effect": "NoSchedule"}],
        "allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
        "min": 0,
        "max": 5,
        "current": 1,
    }
]


def test_fuzz_pools() -> None:
    @FUZZ
    @given(mutated([{"pools": POOLS}], 3))
    def run(docs: list[Obj]) -> None:
        with contextlib.suppress(KdiagnoseError):
            parse_pools(docs[0], "pools.yaml")

    campaign(run)


# ---------------------------------------------------------------------------------------------- check -f

MANIFESTS = _docs(ROOT / "fixtures" / "check" / "kinds.manifests.yaml")


def test_fuzz_check_manifests(tmp_path: Path) -> None:
    cluster = str(ROOT / "fixtures" / "check" / "cluster-two-nodes.yaml")

    @FUZZ
    @given(mutated(MANIFESTS, 4))
    def run(docs: list[Obj]) -> None:
        f = tmp_path / "m.yaml"
        f.write_text(yaml.safe_dump_all(docs))
        res = invoke(
            ["check", "--no-config", "--no-remedies", "-f", str(f), "--snapshot", cluster, "-o", "json"]
        )
        check_cli(res, "check", codes=(0, 1, 2, 3))

    campaign(run)


# ---------------------------------------------------------------------------------------------- CEL

IDENTS = st.sampled_from(["device", "x", "y"])
LEAVES = st.one_of(
    st.integers(-(2**64), 2**64).map(str),
    st.sampled_from(["1.5", "1e400", "true", "null", '"a"', "'b'", '"(a+)+$"', '"gpu.example.com"', "[]", "9" * 30]),
    st.sampled_from(
        [
            "device.driver",
            'device.attributes["gpu.example.com"]',
            'device.attributes["gpu.example.com"].model',
            'device.attributes["gpu.example.com"].index',
            'device.capacity["gpu.example.com"].memory',
            "device.attributes",
        ]
    ),
)  # fmt: skip


def _cel(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(
        children, st.sampled_from(["+", "-", "*", "/", "%", "==", "<", "&&", "||", "in"]), children
    )
    return st.one_of(
        binary.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["!", "-"]), children).map(lambda t: f"{t[0]}{t[1]}"),
        st.tuples(children, st.sampled_from(["size", "lowerAscii", "asInteger", "asApproximateFloat", "major"])).map(
            lambda t: f"{t[0]}.{t[1]}()"
        ),
        st.tuples(children, st.sampled_from(["matches", "startsWith", "contains", "compareTo", "add"]), children).map(
            lambda t: f"{t[0]}.{t[1]}({t[2]})"
        ),
        st.tuples(st.sampled_from(["quantity", "semver", "size", "int", "string", "isQuantity"]), children).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
        st.tuples(st.lists(children, max_size=10), st.sampled_from(["all", "exists", "exists_one"]), IDENTS, children).map(
            lambda t: f"[{', '.join(t[0])}].{t[1]}({t[2]}, {t[3]})"
        ),
        st.tuples(children, children).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
        st.integers(1, 300).map(lambda n: "(" * n + "true" + ")" * n),
        st.integers(1, 300).map(lambda n: "!" * n + "true"),
    )  # fmt: skip


CEL = st.recursive(LEAVES, _cel, max_leaves=24)
ATTRS = st.dictionaries(
    st.sampled_from(["model", "index", "gpu.example.com/x", "v"]),
    st.one_of(st.text(max_size=40), st.integers(-(2**63), 2**63 - 1), st.booleans()),
    max_size=3,
)


def test_fuzz_cel() -> None:
    @FUZZ
    @given(CEL, ATTRS)
    def run(expression: str, attrs: dict[str, Any]) -> None:
        start = time.process_time()  # CPU time: a campaign on a shared machine may wait for the CPU
        try:
            program = compile_expression(expression)
            program.evaluate(device_env("gpu.example.com", attrs, {"memory": _q("80Gi")}))
        except (CelCompileError, CelRuntimeError, CelUnsupported):
            pass
        assert time.process_time() - start < 5, expression

    campaign(run)


def _q(text: str) -> Any:
    from kdiagnose.scheduler.plugins.dynamicresources.cel import Quantity

    return Quantity(parse_quantity(text))
