"""A pod's status word, its headline and the one-line summary ("3 rejected by taints, 2 by cpu; fix: …").

The summary is shared by the title block of each pod and the overview at the top of a multi-pod report.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from kdiagnose.report.console_layout import plural
from kdiagnose.report.details import describe_details, with_cause

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.results import PodReport, Remedy
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.framework import Status

__all__ = [
    "STATUS_RANK",
    "cause_and_fix",
    "gates_command",
    "glance",
    "pod_headline",
    "pod_status",
    "recorded_cause",
    "rejections",
]

# What a rejection is "by", in the one-line summary.
_BY = {
    "TaintToleration": "taints",
    "NodeAffinity": "node affinity/selector",
    "NodeUnschedulable": "cordon",
    "NodeName": "nodeName",
    "NodePorts": "host ports",
    "InterPodAffinity": "pod affinity",
    "PodTopologySpread": "topology spread",
    "VolumeBinding": "volumes",
    "VolumeZone": "volume zone",
    "VolumeRestrictions": "volumes",
    "NodeVolumeLimits": "volume limits",
    "DynamicResources": "devices (DRA)",
}
# Most actionable first.
# "gated": spec.schedulingGates only; "waiting": held by another PreEnqueue plugin (DRA claims not created).
# "not replayed": live, RBAC denied the lists the replay needs; what the cluster recorded stands in.
STATUS_RANK = {
    "unschedulable": 0,
    "not replayed": 0,
    "waiting": 1,
    "gated": 1,
    "ignored": 2,
    "schedulable": 3,
    "bound": 4,
}


def _by(st: Status) -> list[str]:
    """What one node was rejected by, in short words (one entry per insufficient resource)."""
    if st.plugin == "NodeResourcesFit":
        out = [str(x["resource"]) for x in st.details if isinstance(x, dict) and "resource" in x]
        if not out:
            out = [r.removeprefix("Insufficient ") for r in st.reasons]
        return ["+".join(out)] if out else ["resources"]
    if st.plugin == "InterPodAffinity" and any("anti-affinity" in r for r in st.reasons):
        return ["pod anti-affinity"]
    if st.plugin == "TaintToleration":
        # A node-lifecycle taint (node.kubernetes.io/not-ready, unreachable, disk-pressure, ...) says the node
        # is down or starved, which "taints" hides: name it.
        keys = [
            str(x.get("taint", "")).split(":", 1)[0].split("=", 1)[0]
            for x in st.details
            if isinstance(x, dict)
        ]
        state = [k.removeprefix("node.kubernetes.io/") for k in keys if k.startswith("node.kubernetes.io/")]
        if state and len(state) == len(keys):
            # node.kubernetes.io/unschedulable is the taint a cordon sets.
            return [f"{'cordon' if state[0] == 'unschedulable' else state[0]} taint"]
    return [_BY.get(st.plugin or "", st.plugin or st.code.label)]


def rejections(d: Diagnosis) -> str:
    """`3 rejected by taints, 2 by cpu`: what rejected how many nodes, in short words."""
    # Nodes rejected for the same reason often share one Status object: its words are computed once.
    by_status: Counter[int] = Counter()
    statuses: dict[int, Status] = {}
    for st in d.verdicts.values():
        if not st.ok:
            by_status[id(st)] += 1
            statuses[id(st)] = st
    counts: Counter[str] = Counter()
    for key, n in by_status.items():
        for what in _by(statuses[key]):
            counts[what] += n
    parts = [f"{c} by {what}" for what, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    if parts:
        parts[0] = parts[0].replace(" by ", " rejected by ", 1)
    if d.not_evaluated:
        parts.append(f"{len(d.not_evaluated)} {_not_evaluated_why(d)}")
    return ", ".join(parts)


def _not_evaluated_why(d: Diagnosis) -> str:
    """Why nodes were never filtered, in the plugins' short words: a PreFilterResult left them out
    (`node(s) didn't satisfy plugin(s) [NodeAffinity]`), or the pod's nominated node fits and the scheduler
    looked no further (schedule_one.go evaluateNominatedNode)."""
    if d.nominated_node_used:
        return "not evaluated (the nominated node fits)"
    if d.absent is not None:
        m = re.search(r"\[([^\]]*)\]", " ".join(d.absent.reasons))
        plugins = m.group(1).split() if m else []
        if plugins:
            return "excluded by " + " and ".join(_BY.get(p, p) for p in plugins)
    return "excluded at PreFilter"


def _short_fix(r: Remedy) -> str:
    s = r.summary
    if len(s) > 60 and ": " in s:
        s = s.split(": ", 1)[0]
    return s


def pod_status(pr: PodReport) -> str:
    """One of STATUS_RANK's words."""
    d = pr.diagnosis
    if pr.not_replayed:
        return "not replayed"
    if pr.triage:
        return "bound"
    if not d.handled:
        return "ignored"
    if d.preenqueue is not None:
        return "gated" if d.gated else "waiting"
    return "schedulable" if d.scheduled else "unschedulable"


def gates_command(pod: Pod) -> str:
    """The command that lists a gated pod's remaining schedulingGates."""
    return f"kubectl get pod {pod.name} -n {pod.namespace} -o jsonpath='{{.spec.schedulingGates}}'"


def cause_and_fix(pr: PodReport) -> tuple[str, str, str]:
    """(cause, label, fix) in one line each: what keeps the pod Pending and the first thing to do about it.

    The label is "Fix" when a change is needed ("Risky fix" when the first is risky: nothing safe was
    found), "Next" when the scheduler itself will act (the pod fits, or preemption makes room)."""
    d = pr.diagnosis
    status = pod_status(pr)
    if status == "bound":
        # What `kubectl describe pod` shows first: the container that is not running, and why.
        waiting = [(n, r, m) for n, r, m in d.pod.container_waiting if r]
        if waiting:
            name, reason, message = waiting[0]
            cause = f"container {name} is waiting: {reason}" + (f" ({message})" if message else "")
        else:
            cause = pr.triage
        fix = f"not a scheduling problem: kubectl describe pod {d.pod.name} -n {d.pod.namespace}"
        return cause, "Fix", fix
    if status == "not replayed":
        return recorded_cause(pr), "Next", "to replay it, an admin grants the read-only RBAC printed below"
    if status == "ignored":
        return (
            d.not_handled_reason,
            "Fix",
            (
                f"--scheduler-name {d.pod.scheduler_name} replays it with the default profile"
                if d.pod.scheduler_name
                else "none: kdiagnose does not replay it"
            ),
        )
    if status == "gated":
        gates = ", ".join(d.pod.scheduling_gates) or "its gates"
        return (
            f"held by scheduling gates ({gates}): kube-scheduler does not try it until they are removed",
            "Fix",
            # The command that lists them is in the pod's section (gates_command): a line cut at the width
            # would lose it, and without the pod's name it printed nothing.
            "whoever added the gates removes them",
        )
    if status == "waiting" and d.preenqueue is not None:
        found = next((r for r in pr.remedies if r.kind in ("fix-reference", "create-object")), None)
        return (
            f"held at PreEnqueue by {d.preenqueue.plugin}: kube-scheduler waits for {d.preenqueue_wait}",
            "Fix",
            _short_fix(found) if found is not None else "none found by the what-if replay",
        )
    if status == "schedulable":
        if len(d.feasible) == d.num_all_nodes:
            cause = f"every node fits ({d.num_all_nodes}); the scores pick the node"
        else:
            rej = rejections(d)
            cause = f"{len(d.feasible)} of {plural(d.num_all_nodes, 'node')} fit" + (
                f"; {rej}" if rej else ""
            )
        nxt = f"kube-scheduler would bind it to {d.chosen}"
        if pr.why_pending:
            # It fits, so what keeps it Pending is not a node: say that first.
            return f"it fits, yet is still Pending: {pr.why_pending}", "Next", f"{nxt} ({cause})"
        return cause, "Next", nxt
    if d.prefilter is not None:
        cause = f"rejected at PreFilter by {d.prefilter.plugin or 'a plugin'} before any node was checked"
        cause = with_cause(cause, describe_details(d.prefilter.details))
    elif d.num_all_nodes == 0:
        return (
            "the input has no nodes",
            "Fix",
            "add nodes (or check the dump includes them: kubectl get nodes -o yaml)",
        )
    else:
        cause = rejections(d) or "no node fits"
    fixes = [r for r in pr.remedies if r.kind != "preemption"]
    if d.preemption is not None:
        preempt = (
            f"kube-scheduler will preempt {plural(len(d.preemption.victims), 'pod')} "
            f"on {d.preemption.nominated_node} and retry there"
        )
        if not fixes:
            return cause, "Next", preempt
        cause += f"; {preempt}"
    if fixes:
        more = len(fixes) - 1
        # Only when nothing safe exists is a risky change the headline fix, and then it says so.
        return (
            cause,
            "Risky fix" if fixes[0].safety == "risky" else "Fix",
            _short_fix(fixes[0])
            + (f" (or {more} other fix{'es' if more > 1 else ''} below)" if more else ""),
        )
    return cause, "Fix", "none found by the what-if replay" + (" (see Ruled out)" if pr.remedy_notes else "")


def recorded_cause(pr: PodReport) -> str:
    """What the cluster recorded, for a pod that could not be replayed: the FailedScheduling histogram in
    short ("recorded: 3 Insufficient cpu, 1 node(s) had untolerated taint ..."), else the condition, else
    what the pod's state says."""
    from kdiagnose.recorded import reason_counts

    rec = pr.recorded
    text = (rec.message or rec.condition_message or "") if rec is not None else ""
    if not text:
        return pr.diagnosis.not_handled_reason or "nothing recorded: no FailedScheduling event or condition"
    total, reasons = reason_counts(text)
    if total is not None and reasons:
        parts = ", ".join(f"{c} {r}" for r, c in sorted(reasons.items(), key=lambda rc: -rc[1]))
        return f"recorded: {parts} (of {plural(total, 'node')})"
    return f"recorded: {text}"


def glance(pr: PodReport) -> str:
    """The one-line summary of a pod: what rejected how many nodes, and the first fix."""
    status = pod_status(pr)
    if status in ("bound", "ignored"):
        return ""
    if status == "not replayed":
        return recorded_cause(pr)
    cause, label, fix = cause_and_fix(pr)
    if status == "gated":
        return cause
    if status == "waiting":
        return cause + (f"; fix: {fix}" if not fix.startswith("none found") else "")
    if status == "schedulable":
        return cause
    return f"{cause}; {label.lower()}: {fix}"


def pod_headline(pr: PodReport) -> tuple[str, str, str]:
    """(status word, style, headline text). The headline is the scheduler's message verbatim when it has one."""
    d = pr.diagnosis
    word = pod_status(pr)
    if word == "bound":
        return word, "green", pr.triage + ": not a scheduling problem"
    if word == "ignored":
        return word, "yellow", d.not_handled_reason
    if word == "not replayed":
        return word, "yellow", pr.not_replayed
    if word in ("gated", "waiting") and d.preenqueue is not None:
        return word, "yellow", d.preenqueue.message
    if word == "schedulable":
        return word, "green", f"kube-scheduler would bind it to {d.chosen}"
    return word, "red", d.message or d.full_message or "not scheduled"
