"""The events cluster components write about a pending pod, read as data: who wrote it, when, and what the
autoscalers said.

- kube-scheduler: FailedScheduling (pkg/scheduler/schedule_one.go).
- cluster-autoscaler (processors/status/eventing_scale_up_processor.go): NotTriggerScaleUp
  "pod didn't trigger scale-up: <n reason>, ..." (ReasonsMessage: per reason the number of node groups that
  gave it; the skipped-group reasons of core/scaleup/orchestrator/skippedreasons.go, or the scheduler
  predicate's reason for a group whose template node does not fit, or "max total nodes in cluster
  reached"), and TriggeredScaleUp "pod triggered scale-up: [{<group> <current>-><new> (max: <max>)}]"
  (nodegroupset.ScaleUpInfo.String). Failed scale-ups are recorded on the status ConfigMap instead
  (ScaleUpFailed, ScaleUpTimedOut, FailedToScaleUpGroup: clusterstate.go, executor.go).
- Karpenter (pkg/controllers/provisioning/scheduling/events.go): FailedScheduling "Failed to schedule pod,
  <errors joined by "; ">", one `incompatible with nodepool "P", ...` per NodePool; Nominated "Pod should
  schedule on: nodeclaim/<name>[, node/<name>]".

Pure: raw Event dicts (core/v1 or events.k8s.io/v1) in, `PodEvent`s out, ages against a given time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# One age logic for every report (the scheduler's events, the autoscalers', the dump's time): recorded.py.
from kdiagnose.recorded import event_view, format_age, parse_time

__all__ = [
    "CA_BACKOFF",
    "CA_MAX_REACHED",
    "CA_MAX_TOTAL",
    "CA_NOT_READY",
    "KARPENTER_FAILED_PREFIX",
    "PodEvent",
    "ScaleUpInfo",
    "event_view",
    "format_age",
    "parse_karpenter_failure",
    "parse_not_triggered",
    "parse_time",
    "parse_triggered",
    "pod_events",
    "snapshot_time",
]

Obj = dict[str, Any]

# core/scaleup/orchestrator/skippedreasons.go and eventing_scale_up_processor.go ReasonsMessage.
CA_BACKOFF = "in backoff after failed scale-up"
CA_MAX_REACHED = "max node group size reached"
CA_NOT_READY = "not ready for scale-up"
CA_MAX_TOTAL = "max total nodes in cluster reached"
CA_NOT_TRIGGERED_PREFIX = "pod didn't trigger scale-up: "
CA_TRIGGERED_PREFIX = "pod triggered scale-up: "
KARPENTER_FAILED_PREFIX = "Failed to schedule pod, "
KARPENTER_NOMINATED_PREFIX = "Pod should schedule on: "


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


@dataclass(slots=True)
class ScaleUpInfo:
    """One `{group current->new (max: m)}` of a TriggeredScaleUp event."""

    group: str
    current: int
    new: int
    max: int


@dataclass(slots=True)
class PodEvent:
    """One event about a pod, as a report shows it."""

    reason: str
    message: str
    component: (
        str  # source.component / reportingController ("default-scheduler", "cluster-autoscaler", "karpenter")
    )
    who: str  # "scheduler" | "cluster-autoscaler" | "karpenter" | the component
    type: str = "Normal"
    count: int = 1
    when: float | None = None  # last seen (epoch seconds)
    first: float | None = None
    age_seconds: float | None = None  # against the snapshot time
    ca_reasons: dict[str, int] = field(default_factory=dict)  # NotTriggerScaleUp: reason -> node groups
    scale_ups: list[ScaleUpInfo] = field(default_factory=list)  # TriggeredScaleUp
    karpenter: dict[str, str] = field(default_factory=dict)  # FailedScheduling by karpenter: NodePool -> why
    nominated: list[str] = field(default_factory=list)  # Nominated: ["nodeclaim/x", "node/y"]


_COUNT_RE = re.compile(r", (?=\d+ )")


def parse_not_triggered(message: str) -> dict[str, int]:
    """NotTriggerScaleUp's reasons -> number of node groups ({} when the message is not CA's)."""
    if not message.startswith(CA_NOT_TRIGGERED_PREFIX):
        return {}
    body = message[len(CA_NOT_TRIGGERED_PREFIX) :].strip()
    if body == CA_MAX_TOTAL:
        return {CA_MAX_TOTAL: 0}
    out: dict[str, int] = {}
    for part in _COUNT_RE.split(body):
        m = re.match(r"^(\d+) (.+)$", part.strip())
        if m:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out


_SCALE_UP_RE = re.compile(r"\{(\S+) (\d+)->(\d+) \(max: (\d+)\)\}")


def parse_triggered(message: str) -> list[ScaleUpInfo]:
    if not message.startswith(CA_TRIGGERED_PREFIX):
        return []
    return [
        ScaleUpInfo(m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)))
        for m in _SCALE_UP_RE.finditer(message)
    ]


_NODEPOOL_RE = re.compile(r'(?:incompatible with|exceed limits for) nodepool "([^"]+)"')


def parse_karpenter_failure(message: str) -> dict[str, str]:
    """Karpenter's FailedScheduling: NodePool -> its error text (multierr joins them with "; ")."""
    if not message.startswith(KARPENTER_FAILED_PREFIX):
        return {}
    body = message[len(KARPENTER_FAILED_PREFIX) :]
    out: dict[str, str] = {}
    # Split before each NodePool's error; a taint/requirement error of one NodePool may itself hold "; ".
    parts = re.split(
        r"; (?=incompatible with nodepool|all available instance types exceed limits for nodepool)", body
    )
    for part in parts:
        m = _NODEPOOL_RE.search(part)
        if m:
            out[m.group(1)] = part.strip()
    return out


def _who(component: str, reason: str, message: str) -> str:
    low = component.lower()
    if "autoscaler" in low or reason in ("NotTriggerScaleUp", "TriggeredScaleUp"):
        return "cluster-autoscaler"
    if "karpenter" in low or message.startswith((KARPENTER_FAILED_PREFIX, KARPENTER_NOMINATED_PREFIX)):
        return "karpenter"
    if reason == "FailedScheduling" or low.endswith("scheduler"):
        return "scheduler"
    return component or "unknown"


def pod_events(events: Iterable[Obj], now: float | None) -> list[PodEvent]:
    """Every event given, parsed, newest first (ties by reason, then message)."""
    out: list[PodEvent] = []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        reason, message, count, when, first, component, typ = event_view(ev)
        pe = PodEvent(reason, message, component, _who(component, reason, message), typ, count, when, first)
        if now is not None and when is not None:
            pe.age_seconds = max(0.0, now - when)
        if reason == "NotTriggerScaleUp":
            pe.ca_reasons = parse_not_triggered(message)
        elif reason == "TriggeredScaleUp":
            pe.scale_ups = parse_triggered(message)
        elif pe.who == "karpenter" and reason == "FailedScheduling":
            pe.karpenter = parse_karpenter_failure(message)
        elif reason == "Nominated" and message.startswith(KARPENTER_NOMINATED_PREFIX):
            pe.nominated = [
                x.strip() for x in message[len(KARPENTER_NOMINATED_PREFIX) :].split(",") if x.strip()
            ]
        out.append(pe)
    out.sort(key=lambda e: (-(e.when or 0.0), e.reason, e.message))
    return out


def snapshot_time(
    events: Iterable[Obj], nodes: Iterable[Obj] = (), extra: Iterable[Any] = ()
) -> float | None:
    """When an offline snapshot was taken, from its own timestamps: the newest event time, node heartbeat
    (status.conditions[].lastHeartbeatTime) or `extra` time string (the autoscaler's status time)."""
    best: float | None = None
    for ev in events:
        if isinstance(ev, dict):
            t = event_view(ev)[3]
            if t is not None and (best is None or t > best):
                best = t
    for n in nodes:
        for c in _d(n.get("status")).get("conditions") or ():
            t = parse_time(_d(c).get("lastHeartbeatTime"))
            if t is not None and (best is None or t > best):
                best = t
    for x in extra:
        t = parse_time(x)
        if t is not None and (best is None or t > best):
            best = t
    return best
