"""Names of node groups without a pool label: what an on-call engineer would call them."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node
from kdiagnose.model.pools import detect_pools
from kdiagnose.model.snapshot import NodeInfo
from tests.remedies.helpers import by_kind, remedies_for

CP = {
    "node-role.kubernetes.io/control-plane": "",
    "node.kubernetes.io/exclude-from-external-load-balancers": "",
}
CP_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


def node(
    name: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    cpu: str = "8",
    memory: str = "32Gi",
    ready: bool = True,
) -> NodeInfo:
    obj: dict[str, Any] = {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }
    return NodeInfo(Node(obj))


def names(*nodes: NodeInfo) -> dict[str, list[str]]:
    return {p.name: [m.name for m in p.members] for p in detect_pools(list(nodes))}


@pytest.mark.parametrize(
    ("nodes", "want"),
    [
        pytest.param(
            [node("cp-1", CP, [CP_TAINT], cpu="4"), node("worker-1"), node("worker-2")],
            {"control-plane": ["cp-1"], "workers": ["worker-1", "worker-2"]},
            id="workers that differ from the control plane only by allocatable are 'workers'",
        ),
        pytest.param(
            [node("n-1"), node("n-2")],
            {"workers": ["n-1", "n-2"]},
            id="a cluster of one group is 'workers'",
        ),
        pytest.param(
            [node("a-1", {"workload": "web"}), node("b-1", {"workload": "batch"}), node("c-1")],
            {"workload=web": ["a-1"], "workload=batch": ["b-1"], "nodes like c-1": ["c-1"]},
            id="groups are named by their distinguishing label; the plain group after a member",
        ),
        pytest.param(
            [node("a-1", cpu="2"), node("b-1", cpu="16"), node("cp-1", CP)],
            {"nodes like a-1": ["a-1"], "nodes like b-1": ["b-1"], "control-plane": ["cp-1"]},
            id="groups that differ only by allocatable are named after their first member",
        ),
        pytest.param(
            [node("g-1", {"gpu": "true"}, cpu="32"), node("g-2", {"gpu": "true"}, cpu="64"), node("w-1")],
            {"gpu=true like g-1": ["g-1"], "gpu=true like g-2": ["g-2"], "nodes like w-1": ["w-1"]},
            id="a label shared by two groups that differ by allocatable gets the first member",
        ),
        pytest.param(
            [
                node(
                    "gpu-1",
                    {"node-pool": "gpu", "nvidia.com/gpu.product": "A100", "nvidia.com/gpu.count": "8"},
                ),
                node("cpu-1", {"node-pool": "general"}),
            ],
            {"node-pool=gpu": ["gpu-1"], "node-pool=general": ["cpu-1"]},
            id="one pool-like label names the group rather than every distinguishing label",
        ),
        pytest.param(
            [node("t-1", taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]), node("p-1")],
            {"dedicated=ml:NoSchedule": ["t-1"], "nodes like p-1": ["p-1"]},
            id="a group told apart only by a taint is named by it",
        ),
        pytest.param(
            [
                node("w-1", {"topology.topolvm.io/node": "w-1"}),
                node("w-2", {"topology.topolvm.io/node": "w-2"}),
            ],
            {"workers": ["w-1", "w-2"]},
            id="a label whose value is the node's own name does not split the group",
        ),
        pytest.param(
            [node("bad-1", ready=False, cpu="2"), node("good-1", cpu="2"), node("x-1", cpu="4")],
            {"nodes like good-1": ["bad-1", "good-1"], "nodes like x-1": ["x-1"]},
            id="a group is named after a Ready member when it has one",
        ),
        pytest.param(
            [node("k-1", {"eks.amazonaws.com/nodegroup": "workers"}), node("s-1", CP), node("s-2")],
            {"workers": ["k-1"], "control-plane": ["s-1"], "workers like s-2": ["s-2"]},
            id="a shape name taken by a labelled pool is made unique",
        ),
        pytest.param(
            [node("e-1", {"eks.amazonaws.com/nodegroup": "a"}), node("k-1", {"karpenter.sh/nodepool": "a"})],
            {"a": ["e-1"], "karpenter.sh/nodepool=a": ["k-1"]},
            id="the same value under two pool labels is two pools",
        ),
    ],
)
def test_shape_group_names(nodes: list[NodeInfo], want: dict[str, list[str]]) -> None:
    assert names(*nodes) == want


def test_selector_lists_a_group_its_labels_tell_apart() -> None:
    pools = {
        p.name: p
        for p in detect_pools([node("a-1", {"workload": "web"}), node("b-1", {"workload": "batch"})])
    }
    assert pools["workload=web"].selector == "workload=web"
    tainted = [node("a-1", {"w": "x"}), node("a-2", {"w": "x"}, [{"key": "d", "effect": "NoSchedule"}])]
    assert {p.name: p.selector for p in detect_pools(tainted)} == {"nodes like a-1": "", "d:NoSchedule": ""}


def test_worker_pool_reads_well_in_the_remedy_and_simulated_node() -> None:
    remedies, notes = remedies_for(
        "golden/preemption-pdb-violated-when-unavoidable.yaml", "default/payments-0"
    )
    (scale,) = by_kind(remedies, "scale-pool")
    assert scale.summary == "scale node pool workers by 1"
    assert scale.unblocks == ["workers-simulated-1"]
    assert "pool control-plane: no scale-up: control-plane nodes are not autoscaled" in notes
