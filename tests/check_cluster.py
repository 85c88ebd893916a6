"""What the tests of `kdiagnose check` share: fixtures/check/, the message its two-node cluster gives the
anti-affinity workload, and the low-priority pods that leave room only by preemption."""

from __future__ import annotations

from pathlib import Path

__all__ = ["ANTI_AFFINITY_MSG", "FIX", "low_priority_hogs"]

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "check"

# v1.34.1's text for web-anti-affinity.manifests.yaml on cluster-two-nodes.yaml.
ANTI_AFFINITY_MSG = (
    "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, "
    "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
)


def low_priority_hogs(cpu: str) -> str:
    """YAML documents to append to cluster-two-nodes.yaml: PriorityClass `high` (1000), and a priority-0 pod
    requesting `cpu` on each node (hog on node-a, hog2 on node-b)."""
    docs = ["apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"]
    for name, node in (("hog", "node-a"), ("hog2", "node-b")):
        docs.append(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\nspec:\n"
            f"  nodeName: {node}\n  containers:\n"
            f'  - {{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}\n'
            "status: {phase: Running}\n"
        )
    return "".join(f"\n---\n{d}" for d in docs)
