"""Hostile DRA CEL selectors: linear-time regexes, a cost budget, and no crash on odd expressions.

Through the CLI: a node with one device (a 31-character `model` attribute), a DeviceClass whose selector is
the hostile expression, and a pending pod claiming one device of that class. Every case ends within
seconds, as a verdict with a "not evaluated: ..." note or as cel-go's own compile/runtime error.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kdiagnose.cli import app
from kdiagnose.scheduler.plugins.dynamicresources.cel import (
    COST_BUDGET,
    CelCompileError,
    CelOverBudget,
    CelRuntimeError,
    compile_expression,
    device_env,
)

MODEL = "a" * 31
NESTED_ALL = "true"
for _v in "abcdefgh":
    NESTED_ALL = f"[0,1,2,3,4,5,6,7,8,9].all({_v}, {NESTED_ALL})"


def _docs(expression: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-gpu"},
            "spec": {
                "driver": "gpu.example.com",
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "attributes": {"model": {"string": MODEL}}}],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": expression}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "g"}]}}],
                "resourceClaims": [{"name": "g", "resourceClaimName": "c"}],
            },
        },
    ]


def diagnose(tmp_path: Path, expression: str) -> tuple[int, dict[str, Any], str, float]:
    f = tmp_path / "dra.yaml"
    f.write_text(yaml.safe_dump_all(_docs(expression)))
    # CPU seconds of this process (the CLI runs in it), not wall time: the bound is on the work done, which a
    # loaded CI machine does not inflate the way it stretches the wall clock (4.8 s idle here took >10 s
    # wall under a parallel test run). What the bounds catch is unbounded work: minutes to hours.
    start = time.process_time()
    result = CliRunner().invoke(app, ["diagnose", str(f), "-o", "json"])
    secs = time.process_time() - start
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "internal error" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout), result.stderr, secs


def _text(doc: dict[str, Any]) -> str:
    return json.dumps(doc)


def test_sanity_a_matching_selector_schedules(tmp_path: Path) -> None:
    code, doc, _, _ = diagnose(tmp_path, f'device.attributes["gpu.example.com"].model == "{MODEL}"')
    assert code == 0, doc


def test_catastrophic_backtracking_regex_is_linear(tmp_path: Path) -> None:
    # Python's re takes hours on this; RE2 (what cel-go uses) answers at once: no match, then unschedulable.
    code, _, _, secs = diagnose(tmp_path, 'device.attributes["gpu.example.com"].model.matches("^(a+)+b$")')
    assert code == 1 and secs < 10
    code, _, _, secs = diagnose(tmp_path, 'device.attributes["gpu.example.com"].model.matches("^(a+)+$")')
    assert code == 0 and secs < 10


def test_re2_syntax_errors_are_cel_runtime_errors() -> None:
    env = device_env("d", {"m": "x"}, {})
    with pytest.raises(CelRuntimeError, match="invalid regular expression"):
        compile_expression('device.attributes["d"].m.matches("(")').evaluate(env)
    # A backreference is Python syntax, not RE2's: cel-go rejects it too.
    with pytest.raises(CelRuntimeError, match="invalid regular expression"):
        compile_expression(r'device.attributes["d"].m.matches("(a)\\1")').evaluate(env)


def test_nested_comprehensions_hit_the_cost_budget(tmp_path: Path) -> None:
    code, doc, _, secs = diagnose(tmp_path, NESTED_ALL)
    assert secs < 30  # 10^8 evaluations without the budget
    assert code == 1
    assert f"exceeds the cost budget of {COST_BUDGET:,}" in _text(doc) and "not evaluated" in _text(doc)


@pytest.mark.parametrize(
    ("expression", "needle"),
    [
        pytest.param("!" * 1000 + "true", "is nested more than 48 levels deep", id="1000 nested !"),
        pytest.param("(" * 1000 + "true" + ")" * 1000, "is nested more than 48 levels deep", id="1000 ("),
        pytest.param(
            " + ".join(["1"] * 2000) + " > 0", "is nested more than 200 levels deep", id="long chain"
        ),
        pytest.param("true || " * 2000 + "true", "is longer than 10240 characters", id="over 10 KiB"),
    ],
)
def test_expressions_over_a_limit_are_not_evaluated(tmp_path: Path, expression: str, needle: str) -> None:
    code, doc, _, secs = diagnose(tmp_path, expression)
    assert secs < 10 and code == 1
    assert needle in _text(doc) and "not evaluated" in _text(doc)


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("9" * 5000 + " > 0", id="a 5000-digit int literal"),
        pytest.param("1e400 > 0.0", id="a double literal past float64"),
        pytest.param("18446744073709551616u > 0u", id="uint64 overflow"),
    ],
)
def test_literals_out_of_range_are_compile_errors(tmp_path: Path, expression: str) -> None:
    with pytest.raises(CelCompileError, match=r"invalid (int|double) literal"):
        compile_expression(expression)
    code, doc, _, _ = diagnose(tmp_path, expression)
    assert code == 1 and "CEL compile error" in _text(doc)


def test_quantity_past_float64_is_infinite_not_overflow() -> None:
    env = device_env("d", {}, {})
    assert compile_expression('quantity("1e400").asApproximateFloat() > 1.0').evaluate(env) is True


def test_a_map_as_a_map_key_is_a_runtime_error(tmp_path: Path) -> None:
    env = device_env("d", {"m": "x"}, {})
    with pytest.raises(CelRuntimeError, match="no such overload"):
        compile_expression("device.attributes[device.attributes] == 1").evaluate(env)
    with pytest.raises(CelRuntimeError):
        compile_expression("device.attributes in device.attributes").evaluate(env)
    code, doc, _, _ = diagnose(tmp_path, "device.attributes[device.attributes] == 1")
    assert code == 1 and "CEL runtime error" in _text(doc)


def test_budget_is_per_evaluation() -> None:
    program = compile_expression(NESTED_ALL)
    for _ in range(2):
        with pytest.raises(CelOverBudget):
            program.evaluate(device_env("d", {}, {}))
    assert compile_expression("[1, 2, 3].all(x, x > 0)").evaluate(device_env("d", {}, {})) is True
