"""At 5,000 nodes remedies work per pool, not per node (timing lives in benchmarks/, not here)."""

from __future__ import annotations

from typing import Any

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.remedies.engine import compute_remedies
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for

NODES = 5000


def _node(i: int) -> dict[str, Any]:
    group = f"ng-{i % 10}"
    spec: dict[str, Any] = (
        {"taints": [{"key": "dedicated", "value": group, "effect": "NoSchedule"}]} if i % 10 >= 8 else {}
    )
    return {
        "kind": "Node",
        "metadata": {
            "name": f"node-{i}",
            "labels": {
                "kubernetes.io/hostname": f"node-{i}",
                "eks.amazonaws.com/nodegroup": group,
                "topology.kubernetes.io/zone": f"z-{i % 3}",
                "workload": "web" if i % 10 < 9 else "batch",
            },
        },
        "spec": spec,
        "status": {
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(name: str, node: str | None, cpu: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]
    }
    if node:
        spec["nodeName"] = node
    else:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "workload", "operator": "In", "values": ["web"]}]}
                    ]
                }
            }
        }
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name.split("-")[0]}},
        "spec": spec,
    }


def test_remedies_at_5000_nodes_are_grouped_by_pool() -> None:
    objs = [_node(i) for i in range(NODES)]
    objs += [_pod(f"busy-{i}-{j}", f"node-{i}", "1") for i in range(NODES) for j in range(3)]
    objs.append(_pod("pending-0", None, "1500m"))
    snap = build_snapshot([RawObject(o, "test") for o in objs], dialect_for(None))
    sched = Scheduler(snap)
    d = sched.diagnose(snap.pending[0])
    assert not d.scheduled
    remedies, notes = compute_remedies(snap, sched, d)
    kinds = [r.kind for r in remedies]
    assert kinds[0] == "scale-pool"
    assert kinds.count("scale-pool") == 8  # ng-8 and ng-9 are tainted
    assert "right-size" in kinds
    assert (
        "pool ng-8: no scale-up: the pool's taint dedicated=ng-8:NoSchedule is not tolerated by the pod"
        in notes
    )
    assert any(n.startswith("toleration: tolerating dedicated=ng-8:NoSchedule would not help") for n in notes)
