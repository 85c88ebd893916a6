"""What the autoscalers recorded about a pod, beside what the replay says (as the scheduler's own
FailedScheduling event is compared in report/recorded.py).

Inputs are data the pipeline already has: the pod's parsed events (events.py), its remedies (whose
`details["autoscaler"]` carry the evidence, remedies/autoscaler.py) and the autoscaler view (view.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdiagnose.autoscaler.events import (
    CA_BACKOFF,
    CA_MAX_REACHED,
    CA_MAX_TOTAL,
    CA_NOT_READY,
    PodEvent,
    format_age,
)
from kdiagnose.autoscaler.karpenter import judge

if TYPE_CHECKING:
    from kdiagnose.autoscaler.view import AutoscalerView
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.results import Recorded, Remedy

__all__ = ["attach_recorded", "compare", "event_rows"]

Obj = dict[str, Any]
_SCALE_UP = ("scale-pool", "raise-max", "raise-limit")
_SKIPPED = (CA_MAX_REACHED, CA_BACKOFF, CA_NOT_READY, CA_MAX_TOTAL)


def event_rows(events: list[PodEvent]) -> list[Obj]:
    """The events as report rows, newest first."""
    return [
        {
            "who": e.who,
            "component": e.component,
            "reason": e.reason,
            "type": e.type,
            "count": e.count,
            "ageSeconds": e.age_seconds,
            "message": e.message,
        }
        for e in events
    ]


def _row(e: PodEvent, replayed: str, agrees: bool | None, explanation: str) -> Obj:
    return {
        "who": e.who,
        "reason": e.reason,
        "ageSeconds": e.age_seconds,
        "recorded": e.message,
        "replayed": replayed,
        "agrees": agrees,
        "explanation": explanation,
    }


def _scale_ups(remedies: list[Remedy]) -> list[Remedy]:
    return [r for r in remedies if r.kind in _SCALE_UP and isinstance(r.details.get("autoscaler"), dict)]


def _replay_text(ups: list[Remedy]) -> str:
    if not ups:
        return "the replay finds no node pool whose new node would fit the pod"
    parts = []
    for r in ups:
        a = r.details["autoscaler"]
        state = "can be added now" if a.get("can_add") else f"cannot be added now: {a.get('blocked')}"
        parts.append(
            f"a new node of pool {r.details.get('pool')} fits ({a.get('room') or a.get('group')}; {state})"
        )
    return "; ".join(parts)


def _not_triggered(e: PodEvent, ups: list[Remedy]) -> Obj:
    reasons = e.ca_reasons
    replayed = _replay_text(ups)
    age = f" (the event is {format_age(e.age_seconds)} old)" if e.age_seconds is not None else ""
    skipped = {k: v for k, v in reasons.items() if k in _SKIPPED}
    if not ups:
        return _row(e, replayed, True, "neither finds a node group whose new node fits the pod")
    can = [r for r in ups if r.details["autoscaler"].get("can_add")]
    if CA_MAX_TOTAL in reasons:
        return _row(
            e,
            replayed,
            not can,
            "cluster-autoscaler stopped at its --max-nodes-total: no group grows until that is raised"
            + ("" if not can else "; the replay's evidence does not see that cluster-wide cap"),
        )
    if skipped and not can:
        kinds = {str(r.details["autoscaler"].get("kind")) for r in ups}
        same = (CA_MAX_REACHED in skipped and "max" in kinds) or (
            CA_BACKOFF in skipped and "backoff" in kinds
        )
        return _row(
            e,
            replayed,
            True if same else None,
            "both say the group that would fit cannot grow now"
            if same
            else "cluster-autoscaler skipped group(s): " + ", ".join(f"{n} {k}" for k, n in skipped.items()),
        )
    if skipped and can:
        return _row(
            e,
            replayed,
            False,
            "cluster-autoscaler skipped the group ("
            + ", ".join(skipped)
            + f"), the status now shows room{age}: the max was raised, nodes were removed or the backoff ended "
            "since; the next scale-up loop should act",
        )
    return _row(
        e,
        replayed,
        False,
        "cluster-autoscaler judged that no group's template node fits the pod, the replay's copy of a member "
        "does: CA builds its template from the cloud provider's instance type or a sanitized node (labels, "
        "taints, allocatable and DaemonSet pods may differ), or the cluster changed" + age,
    )


def _triggered(e: PodEvent, ups: list[Remedy]) -> Obj:
    groups = ", ".join(f"{s.group} {s.current}->{s.new} (max: {s.max})" for s in e.scale_ups) or "?"
    replayed = _replay_text(ups)
    named = {s.group for s in e.scale_ups}
    ours = {str(r.details["autoscaler"].get("group")) for r in ups}
    if named & ours:
        return _row(
            e, replayed, True, f"cluster-autoscaler is adding {groups}: wait for the node to register"
        )
    if not ups:
        return _row(
            e,
            replayed,
            False,
            f"cluster-autoscaler is adding {groups}, the replay finds no pool whose new node fits: the new node "
            "may not take the pod either (check its labels, taints and size once it registers)",
        )
    return _row(e, replayed, None, f"cluster-autoscaler chose {groups}; the replay names other pools")


def _karpenter(e: PodEvent, pod: Pod, view: AutoscalerView) -> list[Obj]:
    out = []
    for name, text in sorted(e.karpenter.items()):
        np = view.nodepool(name)
        if np is None:
            out.append(
                _row(e, f"NodePool {name} is not in the input", None, f"recorded for NodePool {name}: {text}")
            )
            continue
        j = judge(np, pod)
        replayed = f"NodePool {name}: " + (
            "admits the pod (requirements, taints, limits)" if j.admits else j.message
        )
        key = {"limit": "limit", "taint": "did not tolerate", "requirement": "incompatible requirements"}.get(
            j.kind, ""
        )
        agrees = (bool(key) and key in text) if not j.admits else False
        why = (
            "the same reason"
            if agrees
            else "Karpenter checks instance types and offerings the snapshot does not have"
            if j.admits
            else "the NodePool or the pod changed since the event, or Karpenter found another reason first"
        )
        row = _row(e, replayed, agrees, why)
        row["recorded"] = text
        out.append(row)
    return out


def _nominated(e: PodEvent, view: AutoscalerView) -> Obj:
    claims = [x.split("/", 1)[1] for x in e.nominated if x.startswith("nodeclaim/")]
    parts = []
    for name in claims:
        nc = next((c for c in view.nodeclaims if c.name == name), None)
        if nc is None:
            parts.append(
                f"nodeclaim {name} is not in the input (it registered and was renamed, or was deleted)"
            )
        else:
            parts.append(nc.describe())
    text = "; ".join(parts) or "no NodeClaim named"
    launching = any(
        c.name in claims and c.state in ("launching", "registering", "initializing") for c in view.nodeclaims
    )
    explanation = (
        "Karpenter is already launching a node for this pod: wait for it to become Ready"
        if launching
        else "the nominated NodeClaim is not launching (ready, disrupted or gone): if the pod still waits, "
        "the node did not take it"
    )
    return _row(e, text, None, explanation)


def compare(events: list[PodEvent], remedies: list[Remedy], view: AutoscalerView, pod: Pod) -> list[Obj]:
    """One row per autoscaler event kind (the newest of each), newest first."""
    ups = _scale_ups(remedies)
    seen: set[tuple[str, str]] = set()
    out: list[Obj] = []
    for e in events:
        key = (e.who, e.reason)
        if key in seen:
            continue
        if e.reason == "NotTriggerScaleUp" and e.ca_reasons:
            out.append(_not_triggered(e, ups))
        elif e.reason == "TriggeredScaleUp" and e.scale_ups:
            out.append(_triggered(e, ups))
        elif e.who == "karpenter" and e.karpenter:
            out.extend(_karpenter(e, pod, view))
        elif e.reason == "Nominated" and e.nominated:
            out.append(_nominated(e, view))
        else:
            continue
        seen.add(key)
    return out


def attach_recorded(
    rec: Recorded | None,
    snapshot: Snapshot,
    pod: Pod,
    remedies: list[Remedy],
    events: list[Obj] | None = None,
    now: float | None = None,
) -> Recorded | None:
    """Every event about the pod (newest first, aged against `now`, else the snapshot's own time) and the
    autoscaler comparison, added to `rec` (created when the scheduler recorded nothing)."""
    from kdiagnose.autoscaler.events import pod_events
    from kdiagnose.autoscaler.view import pod_event_objects, snapshot_now, view_for
    from kdiagnose.results import Recorded

    objs = pod_event_objects(snapshot, pod) if events is None else events
    if not objs:
        return rec
    when = now if now is not None else snapshot_now(snapshot)
    parsed = pod_events(objs, when)
    if rec is None:
        rec = Recorded()
    rec.events = event_rows(parsed)
    rec.autoscaler = compare(parsed, remedies, view_for(snapshot), pod)
    if rec.message is not None and rec.age_seconds is None:
        newest = next((e for e in parsed if e.reason == "FailedScheduling" and e.who == "scheduler"), None)
        if newest is not None:
            rec.age_seconds = newest.age_seconds
    return rec
