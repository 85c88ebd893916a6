"""The pending pods of one owner placed one after another, each bound where the scheduler would put it.

Each pod's own diagnosis (pipeline.py) is what kube-scheduler says now, against the bound pods only: that
is what its FailedScheduling event says and what the parity tests compare. It does not say how many of an
owner's 60 pending replicas fit together. This does, as `kdiagnose check` does for manifests
(gate/placement.py): on a fork of the snapshot, the pods are taken in the scheduling queue's order
(priority, then creation time: PrioritySort, queuesort/priority_sort.go) and each one that fits is bound to
the node the replay chooses, so the next one sees it. A pod that fits only by preemption is not placed
(preemption needs the victims gone first). Once a pod does not fit, pods with its scheduling signature are
not replayed again: they share its spec and the cluster only got fuller, so they fail alike.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from kdiagnose.results import Sequential
from kdiagnose.scheduler.engine import Scheduler, scheduling_signature

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.results import Remedy
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.profiles import Profile

RemedyFn = Callable[["Snapshot", Scheduler, "Diagnosis"], "tuple[list[Remedy], list[str]]"]

__all__ = ["MAX_PLACEMENTS", "place_one_after_another"]

# Each placement is a replay on a changed snapshot (no memo): enough for any real owner's backlog.
MAX_PLACEMENTS = 500


def _queue_order(pod: Pod) -> tuple[int, str, str]:
    return (-pod.priority, pod.creation_timestamp, pod.key)


def place_one_after_another(
    snapshot: Snapshot,
    profiles: list[Profile],
    pods: list[Pod],
    *,
    nominated: bool = False,
    remedy_fn: RemedyFn | None = None,
) -> Sequential:
    """How many of `pods` (pending, of one owner) fit if scheduled one after another; `snapshot` untouched.

    `remedy_fn` (remedies.engine.compute_remedies) names the first fix for the first pod that does not
    fit, proven on the cluster as the pods before it left it."""
    fork = snapshot.fork()
    scheduler = Scheduler(fork, profiles, nominated=nominated)
    out = Sequential(total=len(pods))
    by_node: Counter[str] = Counter()
    failed: set[bytes] = set()
    replays = 0
    for pod in sorted(pods, key=_queue_order):
        sig = scheduling_signature(pod)
        if sig is not None and sig in failed:
            continue
        if replays >= MAX_PLACEMENTS:
            out.capped = True
            break
        replays += 1
        d = scheduler.diagnose(pod)
        if d.scheduled and d.chosen:
            placed = copy.copy(pod)  # bind() sets node_name: the original stays pending for the report
            fork.remove_pods([pod])
            fork.bind(placed, d.chosen, new=True)
            scheduler.invalidate()
            out.fit += 1
            by_node[d.chosen] += 1
            continue
        if not out.rest:
            out.rest = d.message or d.not_handled_reason or "not scheduled"
            out.first_failing = pod.key
            out.rest_diagnosis = d
            if remedy_fn is not None and out.fit and d.handled:
                fixes = [r for r in remedy_fn(fork, scheduler, d)[0] if r.kind != "preemption"]
                out.rest_fix = fixes[0].summary if fixes else ""
        if sig is not None:
            failed.add(sig)
    out.by_node = dict(sorted(by_node.items(), key=lambda kv: (-kv[1], kv[0])))
    return out
