"""`kdiagnose check -o sarif`: SARIF 2.1.0 (OASIS), one result per workload failing the --fail-on policy
(level error), and one per workload that passes only by preemption or after scale-up (level warning).

Each result points at the manifest file (a relative URI under %SRCROOT% when the path is relative, as
GitHub code scanning expects) and the line its YAML document starts at. Input read from stdin has no file:
such a result carries only a logical location (the workload).
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kdiagnose import __version__
from kdiagnose.gate.formats.text import failure_text

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult, WorkloadResult

__all__ = ["RULES", "SARIF_SCHEMA", "SARIF_VERSION", "artifact_uri", "render", "sarif_document", "warns"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/kdiagnose/kdiagnose"
SRCROOT = "%SRCROOT%"

# (id, name, short description); one rule per outcome that can fail the policy.
RULES: tuple[tuple[str, str, str], ...] = (
    ("unschedulable", "WorkloadUnschedulable", "A replica of the workload fits on no node of the cluster."),
    ("scale-up", "WorkloadNeedsScaleUp", "A replica fits only on a node a node pool would have to add."),
    ("preemption", "WorkloadNeedsPreemption", "A replica fits only by preempting lower-priority pods."),
)
_RULE_INDEX = {rule[0]: i for i, rule in enumerate(RULES)}


def artifact_uri(source: str) -> tuple[str, str | None] | None:
    """(uri, uriBaseId) for a manifest path; None for stdin. Relative paths stay relative (to %SRCROOT%)."""
    if source.startswith("<") and source.endswith(">"):
        return None
    path = Path(source)
    if path.is_absolute():
        try:
            rel = path.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            return path.as_uri(), None
        return quote(rel.as_posix(), safe="/"), SRCROOT
    return quote(PurePosixPath(*path.parts).as_posix(), safe="/"), SRCROOT


def warns(r: WorkloadResult) -> bool:
    """A non-failing outcome CI should still show: fits only by preemption or only after scale-up."""
    return not r.fails_policy and r.outcome.value in ("preemption", "scale-up")


def _result(r: WorkloadResult) -> dict[str, Any]:
    w = r.workload
    rule = r.outcome.value
    res: dict[str, Any] = {
        "ruleId": rule,
        "ruleIndex": _RULE_INDEX[rule],
        "level": "warning" if warns(r) else "error",
        "message": {"text": failure_text(r)},
        "partialFingerprints": {"kdiagnoseWorkload/v1": hashlib.sha256(w.key.encode()).hexdigest()[:32]},
    }
    logical = {"name": w.name, "fullyQualifiedName": w.key, "kind": "resource"}
    location: dict[str, Any] = {"logicalLocations": [logical]}
    uri = artifact_uri(w.source)
    if uri is not None:
        artifact: dict[str, Any] = {"uri": uri[0]}
        if uri[1]:
            artifact["uriBaseId"] = uri[1]
        physical: dict[str, Any] = {"artifactLocation": artifact}
        if w.line > 0:
            physical["region"] = {"startLine": w.line}
        location["physicalLocation"] = physical
    res["locations"] = [location]
    return res


def sarif_document(result: GateResult) -> dict[str, Any]:
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "kdiagnose",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [
                    {
                        "id": rid,
                        "name": name,
                        "shortDescription": {"text": text},
                        "defaultConfiguration": {"level": "error"},
                    }
                    for rid, name, text in RULES
                ],
            }
        },
        "results": [_result(r) for r in result.results if r.fails_policy or warns(r)],
        "properties": {
            "kubernetesVersion": result.k8s_version,
            "snapshot": result.snapshot_source,
            "failOn": result.fail_on,
        },
    }
    if any((u := artifact_uri(r.workload.source)) is not None and u[1] for r in result.failing):
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path.cwd().resolve().as_uri() + "/"}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render(result: GateResult) -> str:
    import orjson

    data: bytes = orjson.dumps(sarif_document(result), option=orjson.OPT_INDENT_2)
    return data.decode() + "\n"
