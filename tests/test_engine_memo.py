"""Replicas share one replay (by scheduling signature); anything that can change the answer splits them."""

from __future__ import annotations

import copy
from typing import Any

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.scheduler.engine import Scheduler, scheduling_signature
from kdiagnose.versions import dialect_for


def _node(name: str, cpu: str) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def _pod(name: str, labels: dict[str, str], cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": labels,
            "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "uid": "u1", "controller": True}],
        },
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}
        ]
    }
}


def _scheduler(objs: list[dict[str, Any]]) -> Scheduler:
    snap = build_snapshot([RawObject(copy.deepcopy(o), "test") for o in objs], dialect_for("v1.34.1"))
    return Scheduler(snap)


def test_a_note_added_to_one_replicas_diagnosis_does_not_reach_the_next() -> None:
    # The pipeline adds a pod's own notes to its diagnosis (the platform warning; live mode its triage):
    # the first replica's must not be in the memoized answer the next replica's diagnosis is copied from.
    sched = _scheduler(
        [_node("n1", "4"), _pod("web-a", {"app": "web"}, "8"), _pod("web-b", {"app": "web"}, "8")]
    )
    a, b = sorted(sched.snapshot.pending, key=lambda p: p.name)
    da = sched.diagnose(a)
    da.notes.insert(0, "web-a has been Pending for 3h")
    db = sched.diagnose(b)
    assert "web-a has been Pending for 3h" not in db.notes
    assert db.verdicts is da.verdicts  # still one replay shared by both


def test_replicas_with_the_same_spec_share_one_diagnosis_but_keep_their_own_pod() -> None:
    sched = _scheduler(
        [_node("n1", "4"), _pod("web-a", {"app": "web"}, "8"), _pod("web-b", {"app": "web"}, "8")]
    )
    a, b = sorted(sched.snapshot.pending, key=lambda p: p.name)
    assert scheduling_signature(a) == scheduling_signature(b)
    da, db = sched.diagnose(a), sched.diagnose(b)
    assert da.pod is a and db.pod is b
    assert (
        da.message
        == db.message
        == (
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        )
    )


def test_different_labels_give_different_signatures() -> None:
    sched = _scheduler([_node("n1", "4"), _pod("web-a", {"app": "web"}), _pod("api-a", {"app": "api"})])
    a, b = sched.snapshot.pending
    assert scheduling_signature(a) != scheduling_signature(b)


def test_generic_ephemeral_volumes_keep_the_pod_name_in_the_signature() -> None:
    vol = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {}}}}}]
    sched = _scheduler(
        [
            _node("n1", "4"),
            _pod("web-a", {"app": "web"}, volumes=vol),
            _pod("web-b", {"app": "web"}, volumes=vol),
        ]
    )
    a, b = sched.snapshot.pending
    assert scheduling_signature(a) != scheduling_signature(b)


def test_a_bind_in_between_invalidates_shared_answers() -> None:
    # Replica 1 fits; once it is bound, replica 2 of the same signature is blocked by anti-affinity.
    objs = [
        _node("n1", "4"),
        _pod("web-a", {"app": "web"}, affinity=ANTI),
        _pod("web-b", {"app": "web"}, affinity=ANTI),
    ]
    sched = _scheduler(objs)
    a, b = sorted(sched.snapshot.pending, key=lambda p: p.name)
    first = sched.diagnose(a)
    assert first.scheduled
    sched.snapshot.bind(a, "n1")
    second = sched.diagnose(b)
    assert not second.scheduled
    assert second.message is not None
    assert "1 node(s) didn't match pod anti-affinity rules" in second.message


def _prio_pod(name: str, cpu: str, priority: int, nominated: str = "") -> dict[str, Any]:
    obj = _pod(name, {"app": name}, cpu)
    obj["spec"]["priority"] = priority
    if nominated:
        obj["status"] = {"phase": "Pending", "nominatedNodeName": nominated}
    return obj


def test_nominated_pods_hold_their_node_for_equal_or_lower_priority_pods_when_enabled() -> None:
    # n1 has 4 CPU, 2 used; `held` (priority 100, 2 CPU) was nominated to n1 by an earlier preemption.
    bound = _pod("busy", {"app": "busy"}, "2")
    bound["spec"]["nodeName"] = "n1"
    objs = [
        _node("n1", "4"),
        bound,
        _prio_pod("held", "2", 100, nominated="n1"),
        _prio_pod("low", "1", 0),
        _prio_pod("high", "1", 1000),
    ]
    pods = {p.name: p for p in _scheduler(objs).snapshot.pending}
    off = _scheduler(objs)
    assert off.diagnose(next(p for p in off.snapshot.pending if p.name == "low")).scheduled
    on = Scheduler(_scheduler(objs).snapshot, nominated=True)
    by_name = {p.name: p for p in on.snapshot.pending}
    low = on.diagnose(by_name["low"])
    assert not low.scheduled
    assert low.verdicts["n1"].reasons == ("Insufficient cpu",)
    # A higher-priority pod does not see the lower-priority nomination (addGENominatedPods: >= only).
    assert on.diagnose(by_name["high"]).scheduled
    # The nominated pod itself is not counted against itself.
    assert on.diagnose(by_name["held"]).scheduled
    assert set(pods) == {"held", "low", "high"}


def test_num_feasible_nodes_to_find_follows_schedule_one() -> None:
    from kdiagnose.scheduler.runner import num_feasible_nodes_to_find

    # Values worked out from schedule_one.go numFeasibleNodesToFind (min 100 nodes, adaptive 50% - N/125, min 5%).
    assert num_feasible_nodes_to_find(None, 50) == 50
    assert num_feasible_nodes_to_find(None, 100) == 100  # 49% of 100 = 49 -> at least 100
    assert num_feasible_nodes_to_find(None, 1000) == 420  # 50 - 8 = 42%
    assert num_feasible_nodes_to_find(None, 5000) == 500  # 50 - 40 = 10%
    assert num_feasible_nodes_to_find(None, 10000) == 500  # 50 - 80 -> 5%
    assert num_feasible_nodes_to_find(30, 1000) == 300
    assert num_feasible_nodes_to_find(100, 5000) == 5000
    assert num_feasible_nodes_to_find(None, 5000, has_score_plugins=False) == 1
