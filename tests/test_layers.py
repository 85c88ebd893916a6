"""The pipeline's arrows run one way: load -> Snapshot -> replay -> Diagnosis -> remedies -> results -> gate -> report.

A module may import only from its own layer or from layers before it; this reads every import statement
(top-level and lazy ones inside functions) with ast, so a late `from kdiagnose.report... import` in a
remedy fails here.
"""

from __future__ import annotations

import ast
import sys
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
        "kdiagnose.results",
        "kdiagnose.recorded",
        "kdiagnose.remedies",
        "kdiagnose.report",
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    "recorded.py": (
        "kdiagnose.report",
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    # The gate's formats live in gate/formats and may use report/'s helpers (gate -> report is forward);
    # report/ renders only the diagnose Report and knows nothing of the gate.
    "gate": ("kdiagnose.commands", "kdiagnose.cli"),
    "report": (
        "kdiagnose.gate",
        "kdiagnose.pipeline",
        "kdiagnose.commands",
        "kdiagnose.cli",
    ),
    "commands": ("kdiagnose.cli",),
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


def _runtime_imports(path: Path) -> list[str]:
    """The imports that run: those under `if TYPE_CHECKING:` are for the type checker only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                walk(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return out


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _cycles(package: str) -> list[list[str]]:
    """Every import cycle among the modules of `package` (lazy imports included, type-checking-only ones
    not): Tarjan's strongly connected components of more than one module."""
    files = _files(package.removeprefix("kdiagnose.").replace(".", "/"))
    graph: dict[str, set[str]] = {}
    for path in files:
        name = _module_name(path)
        graph[name] = {m for m in _runtime_imports(path) if m.startswith(package + ".") and m != name}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "kdiagnose" / "fake"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text("from kdiagnose.fake.b import x\n")
    (pkg / "b.py").write_text("def f():\n    from kdiagnose.fake.a import y\n")
    (pkg / "c.py").write_text("from kdiagnose.fake.a import z\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kdiagnose.fake.e import t\n"
    )
    (pkg / "e.py").write_text("from kdiagnose.fake.d import u\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "kdiagnose")
    assert _cycles("kdiagnose.fake") == [["kdiagnose.fake.a", "kdiagnose.fake.b"]]


@pytest.mark.parametrize(
    "package", ["kdiagnose.load", "kdiagnose.gate", "kdiagnose.commands", "kdiagnose.report"]
)
def test_no_import_cycle_inside(package: str) -> None:
    """The readers import the shared types (load/raw.py) and the decoders (load/parse.py), never each other
    in a circle; load_snapshot (load/dump.py) sits above them all."""
    assert _cycles(package) == []


def test_load_snapshot_sits_above_the_readers() -> None:
    readers = ["files", "fast", "parse", "raw", "stream_json", "stream_yaml", "snapshot", "manifests"]
    for name in readers:
        imported = _imports(PACKAGE / "load" / f"{name}.py")
        assert "kdiagnose.load.dump" not in imported, name
