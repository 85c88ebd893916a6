"""`-o json`: the versioned kdiagnose/v1 document (sorted keys and nodes; fields are added, never renamed)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kdiagnose.results import PodReport, Recorded, Remedy, Report
    from kdiagnose.scheduler.framework import Status

__all__ = ["API_VERSION", "pod_document", "render", "report_document", "status_document"]

API_VERSION = "kdiagnose/v1"

FEASIBLE = "Feasible"
NOT_EVALUATED = "NotEvaluated"


def status_document(st: Status | None) -> dict[str, Any] | None:
    if st is None:
        return None
    return {
        "plugin": st.plugin or None,
        "code": st.code.label,
        "reasons": list(st.reasons),
        "details": [dict(d) for d in st.details],
    }


def _recorded(rec: Recorded | None) -> dict[str, Any] | None:
    if rec is None:
        return None
    return {
        "message": rec.message,
        "count": rec.count,
        "ageSeconds": rec.age_seconds,
        "ageFrom": rec.age_reference,  # "now" (live) or "the dump" (its newest timestamp)
        "lastSeen": rec.last_seen or None,
        "conditionReason": rec.condition_reason or None,
        "conditionMessage": rec.condition_message or None,
        "agrees": rec.agrees,
        "explanation": rec.explanation or None,
        "events": [dict(e) for e in rec.events],
        "autoscaler": [dict(a) for a in rec.autoscaler],
    }


def pod_document(pr: PodReport, pools: dict[str, str]) -> dict[str, Any]:
    d = pr.diagnosis
    nodes: dict[str, Any] = {}
    for name, st in d.verdicts.items():
        b = d.scores.get(name)
        nodes[name] = {
            "verdict": FEASIBLE if st.ok else st.code.label,
            "plugin": st.plugin or None,
            "reasons": list(st.reasons),
            "details": [dict(x) for x in st.details],
            "pool": pools.get(name),
            "scores": {p: s.score for p, s in b.plugins.items()} if b is not None else {},
            "weightedScores": {p: s.weighted for p, s in b.plugins.items()} if b is not None else {},
            "totalScore": b.total if b is not None else None,
        }
    # v1.32+: nodes outside a PreFilterResult are UnschedulableAndUnresolvable with no plugin (the absent
    # status of findNodesThatFitPod); v1.31, and nodes skipped because the nominated node fit: NotEvaluated.
    counted = d.absent if d.absent_counted else None
    for name in d.not_evaluated:
        nodes[name] = {
            "verdict": counted.code.label if counted is not None else NOT_EVALUATED,
            "plugin": None,
            "reasons": list(counted.reasons) if counted is not None else [],
            "details": [],
            "pool": pools.get(name),
            "scores": {},
            "weightedScores": {},
            "totalScore": None,
        }
    skipped = sorted({p for b in d.scores.values() for p in b.skipped})
    pre = None
    if d.preemption is not None:
        pre = {
            "nominatedNode": d.preemption.nominated_node,
            "victims": sorted(v.key for v in d.preemption.victims),
            "pdbViolations": d.preemption.pdb_violations,
        }
    return {
        "pod": d.pod.key,
        "scheduled": d.scheduled,
        "handled": d.handled,
        "notHandledReason": d.not_handled_reason or None,
        "attempted": d.attempted,
        "message": d.message,
        "fullMessage": d.full_message,
        "profile": d.profile,
        "owner": pr.owner or None,
        "triage": pr.triage or None,
        "numNodes": d.num_all_nodes,
        "nodes": dict(sorted(nodes.items())),
        "feasibleNodes": sorted(d.feasible),
        "topNodes": list(d.top_nodes),
        "node": d.chosen,
        "scoredByScheduler": d.scored_by_scheduler,
        "feasibleNodesToFind": d.feasible_to_find or None,
        "nominatedNodeUsed": d.nominated_node_used,
        "preemption": pre,
        "gates": list(d.pod.scheduling_gates) if d.gated else [],
        "preenqueueWaitsFor": d.preenqueue_wait or None,
        "preenqueue": status_document(d.preenqueue),
        "prefilter": status_document(d.prefilter),
        "prefilterNodeNames": d.prefilter_node_names,
        "postfilter": status_document(d.postfilter),
        "notes": list(d.notes),
        "remedies": [_remedy(r) for r in pr.remedies],
        "remedyNotes": list(pr.remedy_notes),
        # The search stopped once the top remedies were known: later kinds (and their notes) not tried.
        "remediesTruncated": {
            "kindsNotTried": list(pr.remedies_not_tried),
            "shown": len(pr.remedies),
            "all": "rerun with --all-remedies to try every kind",
        }
        if pr.remedies_not_tried
        else None,
        "skippedScores": skipped,
        "recorded": _recorded(pr.recorded),
        "whyPending": pr.why_pending or None,
        "notReplayed": pr.not_replayed or None,
    }


def _remedy(r: Remedy) -> dict[str, Any]:
    """A remedy as data: `patch` is the patch document itself (`patchText` the YAML the report prints)."""
    doc = dataclasses.asdict(r)
    doc["patchText"] = doc.pop("patch")
    doc["patch"] = doc.pop("patch_document")
    return doc


def report_document(report: Report) -> dict[str, Any]:
    """The whole report as plain data (shared by the JSON and YAML formats)."""
    pods = [
        pod_document(pr, report.node_pools) for pr in sorted(report.pods, key=lambda p: p.diagnosis.pod.key)
    ]
    scheduled = sum(1 for p in pods if p["scheduled"])
    return {
        "apiVersion": API_VERSION,
        "kind": "Diagnosis",
        "kubernetesVersion": report.k8s_version,
        "kubernetesVersionReason": report.k8s_version_reason,
        "source": report.source,
        "summary": {
            "nodes": report.num_nodes,
            "podsInInput": report.num_pods,
            "diagnosed": len(pods),
            "schedulable": scheduled,
            "unschedulable": len(pods) - scheduled,
        },
        "warnings": list(report.warnings),
        "profileNotes": list(report.profile_notes),
        "profiles": dict(sorted(report.profiles.items())),
        "skippedKinds": dict(sorted(report.skipped_kinds.items())),
        "missingKinds": list(report.missing_kinds),
        "replayDenied": list(report.replay_denied),
        "rbac": report.rbac or None,
        "scopeHint": report.scope_hint or None,
        "scopeCommand": report.scope_command or None,
        "nodePools": dict(sorted(report.node_pools.items())),
        "pods": pods,
        # Pending pods of one owner placed one after another (each pod's own entry above is unchanged).
        "owners": [
            {
                "owner": owner,
                "pods": sorted(p.diagnosis.pod.key for p in report.pods if p.owner == owner),
                "total": seq.total,
                "fitOneAfterAnother": seq.fit,
                "byNode": dict(seq.by_node),
                "capped": seq.capped,
                "firstNotFitting": seq.first_failing or None,
                "rest": seq.rest or None,
                "restFix": seq.rest_fix or None,
            }
            for owner, seq in sorted(report.sequential.items())
        ],
    }


def _default(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


def to_plain(doc: Any) -> Any:
    """Details are chosen by plugin authors and may hold sets or objects: make them JSON values."""
    import orjson

    return orjson.loads(orjson.dumps(doc, default=_default))


def render(report: Report) -> str:
    import orjson

    data: bytes = orjson.dumps(
        report_document(report), default=_default, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
    )
    return data.decode() + "\n"
