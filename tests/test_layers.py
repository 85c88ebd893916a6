"""The pipeline's arrows run one way: load -> Snapshot -> replay -> Diagnosis -> remedies -> results -> gate -> report.

A module may import only from its own layer or from layers before it; this reads every import statement
(top-level and lazy ones inside functions) with ast, so a late `from kdiagnose.report... import` in a
remedy fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kdiagnose"

# What each layer must never import (the layers after it in the pipeline).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "model": (
        "kdiagnose.scheduler",
        "kdiagnose.remedies",
        "kdiagnose.results",
        "kdiagnose.report",
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    "scheduler": (
        "kdiagnose.remedies",
        "kdiagnose.results",
        "kdiagnose.report",
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    "remedies": (
        "kdiagnose.report",
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    "results.py": (
        "kdiagnose.remedies",
        "kdiagnose.report",
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    "load": (
        "kdiagnose.remedies",
        "kdiagnose.report",
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    # The gate's formatters (junit, sarif, github, gate_*) read gate.GateResult: gate -> report is forward.
    "report": ("kdiagnose.pipeline", "kdiagnose.commands", "kdiagnose.cli"),
}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
    return out


def _files(layer: str) -> list[Path]:
    target = PACKAGE / layer
    return [target] if target.is_file() else sorted(target.rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_import_runs_back_up_the_pipeline(layer: str) -> None:
    files = _files(layer)
    assert files, layer
    bad = [
        f"{path.relative_to(PACKAGE.parent)} imports {module}"
        for path in files
        for module in _imports(path)
        if any(module == f or module.startswith(f + ".") for f in FORBIDDEN[layer])
    ]
    assert bad == []


def test_the_result_types_are_owned_by_the_analysis() -> None:
    from kdiagnose import results
    from kdiagnose.report import interface

    assert results.Remedy.__module__ == "kdiagnose.results"
    assert results.Report.__module__ == "kdiagnose.results"
    assert interface.Remedy is results.Remedy
