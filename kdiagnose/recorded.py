"""Findings beside the replay: triage (what "Pending" really means for this pod) and the comparison of
what the cluster recorded (FailedScheduling event, PodScheduled condition) with the replay.

The analysis layer: pure functions over raw API objects and the Diagnosis, producing results.Recorded;
report/recorded.py renders it. `build_recorded` compares a live pod; `recorded_for` a pod of a dump.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kdiagnose.results import Recorded

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.scheduler.diagnosis import Diagnosis

__all__ = [
    "EVENT_LIMIT",
    "Triage",
    "build_recorded",
    "describe_age",
    "dump_time",
    "event_view",
    "format_age",
    "latest_failed_scheduling",
    "parse_time",
    "reason_counts",
    "recorded_for",
    "triage_offline",
    "triage_pod",
]

Obj = dict[str, Any]

EVENT_LIMIT = 1024  # client-go's event recorder caps messages at 1024 bytes (keeps 1020 + " ...")
# No PodScheduled condition this long after creation: no scheduler is looking at the pod.
NO_SCHEDULER_AFTER = 60.0
# kube-scheduler retries an unschedulable pod at least every 5 minutes (podMaxInUnschedulablePodsDuration).
RETRY_PERIOD = 300.0


_API_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def parse_time(text: Any) -> float | None:
    """RFC 3339 (fractions of any length), or Go's time.Time String() ("2006-01-02 15:04:05.999 -0700 MST",
    as cluster-autoscaler writes its status time), to epoch seconds; None when absent or unreadable."""
    if not isinstance(text, str):
        return None
    if _API_TIME.fullmatch(text):
        # The form the API server writes (metav1.Time: seconds, UTC), without the general way's three
        # regular expressions (5,000 nodes' heartbeats date an offline dump): the string it would parse.
        try:
            return datetime.fromisoformat(text[:19] + "+00:00").timestamp()
        except ValueError:
            return None
    return _parse_time_general(text)


def _parse_time_general(text: str) -> float | None:
    """parse_time of any string (tests/test_load_fast_paths.py compares the fast form with it)."""
    if not text.strip():
        return None
    s = text.strip()
    go = re.match(r"^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-]\d{4})", s)
    if go:
        s = f"{go.group(1)}T{go.group(2)}{(go.group(3) or '')[:7]}{go.group(4)[:3]}:{go.group(4)[3:]}"
    else:
        s = s.replace("Z", "+00:00")
        m = re.match(r"^(.*T\d\d:\d\d:\d\d)(\.\d+)?(.*)$", s)
        if m:
            s = m.group(1) + (m.group(2) or "")[:7] + (m.group(3) or "")
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def format_age(seconds: float | None) -> str:
    """kubectl's AGE style: 45s, 3m12s, 2h5m, 4d3h."""
    if seconds is None:
        return "unknown"
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60}s" if s % 60 and s < 600 else f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60}m" if (s % 3600) // 60 else f"{s // 3600}h"
    return f"{s // 86400}d{(s % 86400) // 3600}h" if (s % 86400) // 3600 else f"{s // 86400}d"


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


# ---------------------------------------------------------------------------------------------- triage


def _container_states(pod: Obj) -> list[str]:
    """`name: Reason (message)` of every container not running, init containers first."""
    status = _d(pod.get("status"))
    out = []
    for key, prefix in (("initContainerStatuses", "init "), ("containerStatuses", "")):
        for cs in status.get(key) or ():
            if not isinstance(cs, dict):
                continue
            state = _d(cs.get("state"))
            waiting, term = _d(state.get("waiting")), _d(state.get("terminated"))
            if waiting:
                reason = str(waiting.get("reason") or "Waiting")
                msg = str(waiting.get("message") or "").strip()
                text = f"{prefix}{cs.get('name')}: {reason}"
                if msg:
                    text += f" ({msg.splitlines()[0][:200]})"
                out.append(text)
            elif term and key == "containerStatuses":
                out.append(
                    f"{cs.get('name')}: Terminated {term.get('reason') or ''} exit {term.get('exitCode')}".rstrip()
                )
    return out


def _condition(pod: Obj, kind: str) -> Obj | None:
    for c in _d(pod.get("status")).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


@dataclass(frozen=True, slots=True)
class Triage:
    """What the pod's state says before any replay.

    `replay`: the pod waits for the scheduler, so a replay is meaningful. `notable`: the text says more
    than the replay will (no scheduler looking, an error, gates), so reports should show it."""

    text: str
    replay: bool
    notable: bool = False


def triage_pod(pod: Obj, now: float, events: Iterable[Obj] = ()) -> Triage:
    """Classify a pod: bound (not a scheduling problem), finished, deleting, gated, never picked up, unschedulable.

    `events` are the pod's events: a FailedScheduling event proves a scheduler tried even when the
    PodScheduled condition is missing (as in objects written by hand or trimmed dumps)."""
    meta, spec, status = _d(pod.get("metadata")), _d(pod.get("spec")), _d(pod.get("status"))
    phase = str(status.get("phase") or "Pending")
    node = str(spec.get("nodeName") or "")
    if phase in ("Succeeded", "Failed"):
        return Triage(f"the pod has finished (phase {phase}), nothing to schedule", False, True)
    if meta.get("deletionTimestamp"):
        return Triage(
            f"the pod is being deleted (since {meta['deletionTimestamp']}), the scheduler skips it",
            False,
            True,
        )
    if node:
        details = [f"phase {phase}", *_container_states(pod)]
        if phase == "Pending" and len(details) == 1:
            details.append("no container status reported yet: image pull or volume setup in progress?")
        return Triage(f"bound to node {node} ({'; '.join(details)})", False, True)
    gates = [str(_d(g).get("name")) for g in spec.get("schedulingGates") or () if _d(g).get("name")]
    if gates:
        return Triage(
            f"scheduling gated by {', '.join(gates)}: the scheduler does not try until whoever added "
            "the gate(s) removes them",
            True,
        )
    scheduler = str(spec.get("schedulerName") or "default-scheduler")
    cond = _condition(pod, "PodScheduled")
    if cond is None:
        latest = latest_failed_scheduling(events)
        if latest is not None:
            by = latest[3] or scheduler
            return Triage(
                f"unschedulable according to {by} (FailedScheduling event, no PodScheduled condition)", True
            )
        created = parse_time(meta.get("creationTimestamp"))
        age = None if created is None else now - created
        if age is not None and age < NO_SCHEDULER_AFTER:
            return Triage(f"created {format_age(age)} ago: no scheduler has tried it yet", True, True)
        after = f" after {format_age(age)}" if age is not None else ""
        return Triage(
            f'no scheduler has picked it up: no PodScheduled condition{after}; is a scheduler named "{scheduler}" running?',
            True,
            True,
        )
    reason = str(cond.get("reason") or "")
    if cond.get("status") == "True":
        return Triage(
            "scheduled but not yet bound (binding in progress, or a Permit/PreBind plugin is waiting)",
            True,
            True,
        )
    since = parse_time(cond.get("lastTransitionTime"))
    when = f" for {format_age(now - since)}" if since is not None else ""
    if reason == "SchedulerError":
        msg = str(cond.get("message") or "").strip()
        return Triage(f"{scheduler} failed with an error{when}" + (f": {msg}" if msg else ""), True, True)
    if reason == "Unschedulable":
        return Triage(f"unschedulable{when} according to {scheduler}", True)
    return Triage(f"PodScheduled=False ({reason or 'no reason'}){when}", True, True)


# ---------------------------------------------------------------------------------------------- events


def event_view(ev: Obj) -> tuple[str, str, int, float | None, float | None, str, str]:
    """(reason, message, count, last seen, first seen, component, type) of a core/v1 or events.k8s.io/v1
    Event: lastTimestamp, then series.lastObservedTime, then eventTime, then firstTimestamp."""
    if "regarding" in ev or str(ev.get("apiVersion", "")).startswith("events.k8s.io"):
        series = _d(ev.get("series"))
        count = series.get("count") or ev.get("deprecatedCount") or 1
        when = series.get("lastObservedTime") or ev.get("deprecatedLastTimestamp") or ev.get("eventTime")
        first = ev.get("deprecatedFirstTimestamp") or ev.get("eventTime")
        source = ev.get("reportingController") or _d(ev.get("deprecatedSource")).get("component") or ""
        message = ev.get("note") or ""
    else:
        series = _d(ev.get("series"))
        count = ev.get("count") or series.get("count") or 1
        when = (
            ev.get("lastTimestamp")
            or series.get("lastObservedTime")
            or ev.get("eventTime")
            or ev.get("firstTimestamp")
        )
        first = ev.get("firstTimestamp") or ev.get("eventTime")
        source = _d(ev.get("source")).get("component") or ev.get("reportingComponent") or ""
        message = ev.get("message") or ""
    when = when or _d(ev.get("metadata")).get("creationTimestamp")
    try:
        n = int(count)
    except (TypeError, ValueError):
        n = 1
    return (
        str(ev.get("reason") or ""),
        str(message),
        n,
        parse_time(when),
        parse_time(first),
        str(source),
        str(ev.get("type") or "Normal"),
    )


def latest_failed_scheduling(events: Iterable[Obj]) -> tuple[str, int, float | None, str] | None:
    """(message, count, last seen, reporting component) of the newest FailedScheduling event; the count
    adds up every event of that component with that message.

    kube-scheduler's recorder (client-go tools/events) keys a series by the pod's ObjectReference, whose
    resourceVersion changes with every status update: the same message after one starts a new Event
    object instead of counting on in the old one's `series` (seen against the real scheduler, e2e/)."""
    seen: list[tuple[str, int, float | None, str]] = []
    for ev in events:
        reason, message, count, when, _, source, _ = event_view(ev)
        # Karpenter's FailedScheduling ("Failed to schedule pod, ...") is not the scheduler's message.
        if (
            reason != "FailedScheduling"
            or "karpenter" in source.lower()
            or message.startswith("Failed to schedule pod, ")
        ):
            continue
        seen.append((message, count, when, source))
    best: tuple[str, int, float | None, str] | None = None
    for e in seen:
        if best is None or (e[2] or 0.0) >= (best[2] or 0.0):
            best = e
    if best is None:
        return None
    total = sum(c for m, c, _, src in seen if m == best[0] and src == best[3])
    return best[0], total, best[2], best[3]


_HEAD_RE = re.compile(r"^(\d+)/(\d+) nodes are available: ")


def reason_counts(message: str) -> tuple[int | None, dict[str, int]]:
    """The node count and `reason -> count` histogram of the filter part of a FailedScheduling message."""
    m = _HEAD_RE.match(message)
    if not m:
        return None, {}
    rest = message[m.end() :]
    # The histogram ends at the first ". " (the PostFilter part follows) or the final ".".
    end = rest.find(". ")
    body = rest[:end] if end >= 0 else rest.rstrip(".").rstrip(" .")
    out: dict[str, int] = {}
    for part in re.split(r", (?=\d+ )", body):
        pm = re.match(r"^(\d+) (.+)$", part.strip())
        if pm:
            out[pm.group(2)] = out.get(pm.group(2), 0) + int(pm.group(1))
    return int(m.group(2)), out


def _changes_since(when: float, nodes: Iterable[Obj], pods: Iterable[Pod]) -> list[str]:
    new_nodes = sum(
        1 for n in nodes if (parse_time(_d(n.get("metadata")).get("creationTimestamp")) or 0) > when
    )
    cond_changes = 0
    for n in nodes:
        for c in _d(n.get("status")).get("conditions") or ():
            if isinstance(c, dict) and (parse_time(c.get("lastTransitionTime")) or 0) > when:
                cond_changes += 1
                break
    new_pods = sum(1 for p in pods if p.node_name and (parse_time(p.creation_timestamp) or 0) > when)
    out = []
    if new_nodes:
        out.append(f"{new_nodes} node(s) joined")
    if cond_changes:
        out.append(f"{cond_changes} node(s) changed condition")
    if new_pods:
        out.append(f"{new_pods} bound pod(s) were created")
    return out


def build_recorded(
    pod: Obj,
    events: Iterable[Obj],
    diagnosis: Diagnosis | None,
    *,
    now: float,
    nodes: Iterable[Obj] = (),
    pods: Iterable[Pod] = (),
    num_nodes: int | None = None,
    configured_profiles: bool = False,
    extenders: Iterable[str] = (),
) -> Recorded | None:
    """What the cluster recorded for the pod, whether the replay agrees, and the likely cause when not."""
    latest = latest_failed_scheduling(events)
    cond = _condition(pod, "PodScheduled")
    if cond is not None and cond.get("status") != "False":
        cond = None
    if latest is None and cond is None:
        return None
    rec = Recorded()
    event_source = ""
    event_time: float | None = None
    if latest is not None:
        rec.message, rec.count, event_time, event_source = latest
        rec.age_seconds = None if event_time is None else max(0.0, now - event_time)
    if cond is not None:
        rec.condition_reason = str(cond.get("reason") or "")
        rec.condition_message = str(cond.get("message") or "")
    if diagnosis is None or not diagnosis.handled or rec.condition_reason == "SchedulingGated":
        return rec
    replayed, replayed_full = diagnosis.message, diagnosis.full_message or diagnosis.message
    recorded = rec.message or rec.condition_message
    if not recorded:
        return rec
    if diagnosis.scheduled:
        rec.agrees = False
        causes = [
            f"the replay places the pod on {diagnosis.chosen} now: the cluster changed since the last attempt"
        ]
        if rec.age_seconds is not None and rec.age_seconds < RETRY_PERIOD:
            causes.append("the scheduler retries on the next relevant cluster event or within 5 minutes")
        elif rec.age_seconds is not None:
            causes.append(
                f"the event is {format_age(rec.age_seconds)} old, longer than the scheduler's 5-minute retry: "
                "is the scheduler still processing this pod?"
            )
        rec.explanation = "; ".join(causes)
        return rec
    if replayed is None:
        return rec
    # The event text is capped at 1024 bytes; the condition message is not.
    if rec.message is not None:
        agrees = rec.message == replayed
        truncated = len(rec.message.encode()) >= EVENT_LIMIT - 4 and rec.message.endswith("...")
        if not agrees and truncated:
            prefix = rec.message[: -len(" ...")] if rec.message.endswith(" ...") else rec.message[:-3]
            agrees = (replayed_full or "").startswith(prefix)
    else:
        agrees = rec.condition_message == replayed_full
        truncated = False
    rec.agrees = agrees
    if agrees:
        rec.explanation = "the replay reproduces the recorded message"
        if rec.age_seconds is not None:
            rec.explanation += f" (last seen {format_age(rec.age_seconds)} ago)"
        if truncated:
            rec.explanation += " (the event is truncated at 1024 bytes; its prefix matches)"
        return rec
    rec.explanation = "; ".join(
        _explain(
            rec,
            recorded,
            replayed_full or replayed,
            diagnosis,
            event_time,
            event_source,
            nodes,
            pods,
            num_nodes,
            configured_profiles,
            list(extenders),
        )
    )
    return rec


def _explain(
    rec: Recorded,
    recorded: str,
    replayed: str,
    d: Diagnosis,
    event_time: float | None,
    event_source: str,
    nodes: Iterable[Obj],
    pods: Iterable[Pod],
    num_nodes: int | None,
    configured_profiles: bool,
    extenders: list[str],
) -> list[str]:
    causes: list[str] = []
    if len(recorded.encode()) >= EVENT_LIMIT - 4 and recorded.endswith("..."):
        causes.append("the event is truncated at 1024 bytes and even its prefix differs")
    rec_n, rec_reasons = reason_counts(recorded)
    rep_n, rep_reasons = reason_counts(replayed)
    if rec_n is not None and rep_n is not None and rec_n != rep_n:
        causes.append(f"the scheduler saw {rec_n} node(s), the cluster has {rep_n} now")
    if event_time is not None:
        changes = _changes_since(event_time, nodes, pods)
        if changes:
            causes.append(
                f"the event is {format_age(rec.age_seconds)} old and since then " + ", ".join(changes)
            )
        elif rec.age_seconds is not None and rec.age_seconds > RETRY_PERIOD:
            causes.append(
                f"the event is {format_age(rec.age_seconds)} old (the scheduler retries within 5 minutes): "
                "the cluster may have changed in ways a snapshot cannot show (deleted pods or nodes)"
            )
    if event_source and event_source != d.profile:
        causes.append(
            f'the event was recorded by "{event_source}", the replay used the profile "{d.profile}"'
        )
    elif d.profile != "default-scheduler" and not configured_profiles:
        causes.append(
            f'the pod\'s scheduler "{d.profile}" may run a non-default configuration: pass its --scheduler-config'
        )
    if extenders:
        causes.append(f"the scheduler calls extender(s) the replay cannot run ({', '.join(extenders)})")
    unknown = sorted(set(rec_reasons) - set(rep_reasons))
    if unknown:
        causes.append(
            "the recorded message has reasons the replay does not produce ("
            + ", ".join(repr(r) for r in unknown[:3])
            + "): a scheduler extender or an out-of-tree plugin?"
        )
    elif rec_reasons and rep_reasons and set(rep_reasons) - set(rec_reasons):
        extra = sorted(set(rep_reasons) - set(rec_reasons))
        causes.append(
            "the replay finds reasons the recorded message does not have ("
            + ", ".join(repr(r) for r in extra[:3])
            + "): nodes, taints, labels or pods changed since the attempt"
        )
    elif rec_reasons and rep_reasons and rec_reasons != rep_reasons:
        causes.append("the same reasons, with different node counts: pods or nodes changed since the attempt")
    if not causes:
        causes.append(
            "no cause visible in the snapshot: the cluster may have changed since the attempt, "
            "or the scheduler runs a configuration the replay does not know"
        )
    return causes


_DUMP_TIME_KEY = "kdiagnose/dump-time"


def dump_time(snap: Snapshot) -> float | None:
    """When the dump was taken, as far as it says: its newest timestamp (an event's last sighting, a pod's
    creation or condition change). Offline ages are measured from here."""
    from kdiagnose.autoscaler.view import snapshot_now

    # The events' times, the nodes' heartbeats and the autoscaler's status time (autoscaler/events.py
    # snapshot_time); the pods' own timestamps only when the dump has none of those.
    newest = snapshot_now(snap)
    if newest is not None:
        return newest
    if _DUMP_TIME_KEY in snap.cache:
        cached: float | None = snap.cache[_DUMP_TIME_KEY]
        return cached

    def see(t: float | None) -> None:
        nonlocal newest
        if t is not None and (newest is None or t > newest):
            newest = t

    for p in snap.pods:
        see(parse_time(p.creation_timestamp))
        for c in p.conditions:
            see(parse_time(c.get("lastTransitionTime")))
    snap.cache[_DUMP_TIME_KEY] = newest
    return newest


def describe_age(rec: Recorded) -> str:
    """`3m ago` (live), `3m before the dump` (offline), the event's own time, or that it has none: one
    wording for every report (and never "unknown ago")."""
    if rec.age_seconds is not None:
        if rec.age_reference == "now":
            return f"{format_age(rec.age_seconds)} ago"
        if rec.age_seconds < 1:
            return f"last seen {rec.last_seen}, the newest time in {rec.age_reference}"
        return f"last seen {format_age(rec.age_seconds)} before {rec.age_reference} was taken"
    return f"at {rec.last_seen}" if rec.last_seen else "time not recorded"


def triage_offline(snap: Snapshot, pod: Pod) -> Triage:
    """triage_pod for a pod of a dump: its state as the dump recorded it, ages from the dump's time."""
    from kdiagnose.load.dump import failed_scheduling_events

    obj: Obj = {
        "metadata": {
            "creationTimestamp": pod.creation_timestamp or None,
            "deletionTimestamp": pod.deletion_timestamp or None,
        },
        "spec": {
            "nodeName": pod.node_name,
            "schedulerName": pod.scheduler_name,
            "schedulingGates": [{"name": g} for g in pod.scheduling_gates],
        },
        "status": {
            "phase": pod.phase,
            "conditions": list(pod.conditions),
            "containerStatuses": [
                {"name": name, "state": {"waiting": {"reason": reason, "message": message}}}
                for name, reason, message in pod.container_waiting
            ],
        },
    }
    events = [
        {"reason": "FailedScheduling", "message": message, "count": count, "lastTimestamp": when}
        for when, count, message in failed_scheduling_events(snap, pod)
    ]
    now = dump_time(snap)
    if now is None:
        now = parse_time(pod.creation_timestamp) or 0.0
    return triage_pod(obj, now, events)


def recorded_for(snap: Snapshot, pod: Pod, replayed_message: str | None) -> Recorded | None:
    """The latest FailedScheduling event and PodScheduled condition the input recorded for the pod."""
    from kdiagnose.load.dump import failed_scheduling_events

    events = failed_scheduling_events(snap, pod)
    cond = next(
        (c for c in pod.conditions if c.get("type") == "PodScheduled" and c.get("status") == "False"), None
    )
    if not events and cond is None:
        return None
    rec = Recorded(age_reference="the dump")
    if events:
        when, _, message = max(events, key=lambda e: (parse_time(e[0]) or 0.0, e[0]))
        # Every event with that message (a series restarts in a new Event: latest_failed_scheduling).
        count = sum(c for _, c, m in events if m == message)
        rec.message, rec.count, rec.last_seen = message, count, when
        seen, ref = parse_time(when), dump_time(snap)
        if seen is not None and ref is not None:
            rec.age_seconds = max(0.0, ref - seen)
    if cond is not None:
        rec.condition_reason = str(cond.get("reason") or "")
        rec.condition_message = str(cond.get("message") or "")
    recorded = rec.message or rec.condition_message or None
    if recorded and replayed_message is not None and rec.condition_reason != "SchedulingGated":
        rec.agrees = recorded == replayed_message
        rec.explanation = (
            "the replay reproduces the recorded message exactly"
            if rec.agrees
            else "the recorded message differs from the replay: the cluster changed since it was recorded, "
            "or the input lacks objects the scheduler saw"
        )
    return rec
