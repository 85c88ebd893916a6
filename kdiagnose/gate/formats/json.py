"""`kdiagnose check -o json`: the versioned kdiagnose/v1 CheckReport (sorted keys; workloads in input order).

Each workload carries its outcome, placements and, when a replica does not fit now, that replica's full
diagnosis as the `-o json` Diagnosis document has it (report/json.py pod_document).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from kdiagnose.report.json import API_VERSION, pod_document, to_plain

if TYPE_CHECKING:
    from kdiagnose.gate.locate import Location
    from kdiagnose.gate.result import GateResult, WorkloadResult

__all__ = ["KIND", "check_document", "render"]

KIND = "CheckReport"


def _place(loc: Location | None) -> dict[str, Any] | None:
    if loc is None:
        return None
    out: dict[str, Any] = {"file": loc.file or None, "line": loc.line or None, "column": loc.column or None}
    if loc.field:
        out["field"] = loc.field
    if loc.note:
        out["why"] = loc.note
    return out


def _workload(r: WorkloadResult, pools: dict[str, str]) -> dict[str, Any]:
    w = r.workload
    h = r.headroom
    loc = r.location
    return {
        "kind": w.kind,
        "namespace": w.namespace,
        "name": w.name,
        # Relative to the path base (gate/locate.py); the object's apiVersion line. Helm output: the
        # template file, with the rendered input's place in renderedFrom.
        "file": (loc.file or w.source) if loc is not None else w.source,
        "line": (loc.line or None) if loc is not None else (w.line or None),
        "column": (loc.column or None) if loc is not None else None,
        "renderedFrom": _place(r.rendered_from),
        "fields": [_place(f) for f in r.fields],
        "document": w.doc_index,
        "outcome": r.outcome.value,
        "failsPolicy": r.fails_policy,
        "summary": r.summary,
        # Fits only after scale-up: whether an autoscaler in the snapshot can add the node, and the room.
        "scaleUp": {"canAdd": r.scale_up_ok, "text": r.scale_up} if r.scale_up else None,
        "message": r.message or None,
        "replicas": r.total,
        "fitNow": r.fit_now,
        "fitByPreemption": r.fit_preemption,
        "failedReplica": None if r.failed_replica is None else r.failed_replica + 1,  # 1-based, as printed
        "placements": [dataclasses.asdict(p) for p in r.placements],
        "diagnosis": pod_document(r.failure, pools) if r.failure is not None else None,
        "nodeFailures": [
            {"node": f.node, "outcome": f.outcome.value, "message": f.report.diagnosis.message}
            for f in r.node_failures
        ],
        "excludedNodes": dict(sorted(r.excluded_nodes.items())),
        "headroom": None if h is None else {"more": h.more, "capped": h.capped, "reason": h.reason},
        "ignoreReason": r.ignore_reason or None,
        "notes": list(r.notes),
    }


def check_document(result: GateResult, pools: dict[str, str] | None = None) -> dict[str, Any]:
    from kdiagnose.gate.where import locate

    locate(result)
    counts: dict[str, int] = {}
    for r in result.results:
        counts[r.outcome.value] = counts.get(r.outcome.value, 0) + 1
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "kubernetesVersion": result.k8s_version,
        "snapshot": result.snapshot_source,
        "failOn": result.fail_on,
        "passed": not result.failing and not result.errors,
        "summary": {
            "nodes": result.num_nodes,
            "podsInSnapshot": result.num_pods,
            "workloads": len(result.results),
            "failing": len(result.failing),
            "outcomes": dict(sorted(counts.items())),
        },
        "headroomCap": result.headroom_cap,
        "ignoredKinds": dict(sorted(result.ignored_kinds.items())),
        "warnings": list(result.warnings),
        # Input that could not be read: nothing was checked (exit code 3).
        "errors": [
            {"message": e.message, "workload": e.workload or None, "location": _place(e.location)}
            for e in result.errors
        ],
        "workloads": [_workload(r, pools or {}) for r in result.results],
    }


def render(result: GateResult, pools: dict[str, str] | None = None) -> str:
    import orjson

    doc = to_plain(check_document(result, pools))
    data: bytes = orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    return data.decode() + "\n"
