"""Scale the matching node pool: templates, packing of an owner's pending pods, per-pool "why not"."""

from __future__ import annotations

import pytest

from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.pools import load_pools, parse_pools
from kdiagnose.remedies.whatif import daemon_pods_for
from kdiagnose.versions import dialect_for
from tests.remedies.helpers import FIXTURES, by_kind, remedies_for


def test_seed_scales_the_web_shape_pool_by_one() -> None:
    remedies, notes = remedies_for("golden/seed-hello-web.yaml", "default/hello-web-new")
    (scale,) = by_kind(remedies, "scale-pool")
    assert scale.summary.startswith("scale node pool workload=web by 1")
    assert scale.details["template"] in ("node-a", "node-c")
    assert (
        "pool workload=batch: no scale-up: the pool's labels do not match the pod's node affinity/selector (workload In [web])"
        in notes
    )
    assert (
        "pool workload=web,dedicated=batch:NoSchedule: no scale-up: the pool's taint dedicated=batch:NoSchedule is not tolerated by the pod"
        in notes
    )
    assert "pool control-plane: no scale-up: control-plane nodes are not autoscaled" in notes


def test_no_pool_helps_says_why_per_pool() -> None:
    remedies, notes = remedies_for("remedies/no-pool-fits.yaml", "default/big")
    assert by_kind(remedies, "scale-pool") == []
    assert (
        "pool general: no scale-up: a new node is too small: Insufficient cpu: needs 12 CPU, 4 free of 4 allocatable"
        in notes
    )
    assert (
        "pool gpu: no scale-up: the pool's taint nvidia.com/gpu=true:NoSchedule is not tolerated by the pod"
        in notes
    )


def test_replicas_with_hostname_anti_affinity_need_one_node_each() -> None:
    remedies, _ = remedies_for("remedies/anti-affinity-replicas.yaml", "default/web-7d9f-p1")
    (scale,) = by_kind(remedies, "scale-pool")
    assert scale.details["count"] == 3
    assert scale.unblocks == ["web-pool-simulated-1", "web-pool-simulated-2", "web-pool-simulated-3"]
    assert "Deployment default/web" in scale.summary


def test_pool_max_size_caps_the_scale_up() -> None:
    pools = load_pools(str(FIXTURES / "remedies/pools.yaml"))
    remedies, _ = remedies_for("remedies/anti-affinity-replicas.yaml", "default/web-7d9f-p1", pools)
    (scale,) = by_kind(remedies, "scale-pool")
    assert scale.details["count"] == 2
    assert "fits 2 of the 3 pending pods" in scale.summary
    assert "max size (3)" in scale.risk


def test_daemonset_pods_are_copied_onto_the_template() -> None:
    loaded = load_paths([str(FIXTURES / "remedies/anti-affinity-replicas.yaml")])
    snap = build_snapshot(loaded.objects, dialect_for(None))
    (copy,) = daemon_pods_for(snap.node_info_by_name["web-1"], "web-pool-simulated-1")
    assert (copy.namespace, copy.name, copy.node_name) == (
        "kube-system",
        "logger-abc-web-pool-simulated-1",
        "web-pool-simulated-1",
    )
    assert copy.requests == {"cpu": 7000}


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        pytest.param([{"labels": {}}], "needs a name", id="a pool without a name is rejected"),
        pytest.param([{"name": "x", "max": "3"}], "expected an integer", id="a non-integer max is rejected"),
        pytest.param({"name": "x"}, "expected a list", id="a mapping without a pools list is rejected"),
    ],
)
def test_parse_pools_rejects_bad_input(doc: object, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_pools(doc)


def test_parse_pools_reads_taints_and_quantities() -> None:
    (p,) = parse_pools(
        {
            "pools": [
                {
                    "name": "g",
                    "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
                    "allocatable": {"cpu": "2", "memory": "1Gi"},
                    "max": 5,
                }
            ]
        }
    )
    assert str(p.taints[0]) == "k=v:NoSchedule"
    assert p.allocatable == {"cpu": 2000, "memory": 2**30}
    assert p.max == 5
    assert p.current is None


def test_dra_pool_scale_up_simulates_the_new_nodes_devices() -> None:
    # Every GPU of the gpu-a10g nodes is allocated; a new node of that pool publishes the same device
    # slices (copied from a member, nothing allocated), so one more node fits the claim.
    remedies, notes = remedies_for("golden/dra-no-devices-left.yaml", "inference/llama-guard-7d9f8c6b5-m2x8k")
    scale = by_kind(remedies, "scale-pool")
    assert [r.summary for r in scale] == ["scale node pool gpu-a10g by 1"]
    assert scale[0].unblocks == ["gpu-a10g-simulated-1"]
    assert any(
        n.startswith("pool general: no scale-up: a new node would offer only the DRA devices") for n in notes
    )


def test_a_daemonset_holding_the_port_is_named_once_per_pool() -> None:
    # Every new node of general runs node-exporter (a DaemonSet on 9100/TCP): the note names the DaemonSet,
    # once, not each template's copy of its pod ("node-exporter-djpkw-general-simulated-1", ...).
    _, notes = remedies_for(
        "golden/cluster-eks-large-mixed.yaml", "monitoring/node-problem-exporter-7d8c9b6f5-t2x4k"
    )
    (line,) = [x for x in notes if x.startswith("pool general: no scale-up")]
    assert line == (
        "pool general: no scale-up: a new node would fail NodePorts: DaemonSet monitoring/node-exporter holds "
        "host port 0.0.0.0:9100/TCP on every node of the pool"
    )


def test_notes_give_the_cause_in_words_not_detail_keys() -> None:
    _, notes = remedies_for("golden/cluster-eks-large-mixed.yaml", "ml/gpu-batch-scoring-5x7pq")
    (line,) = [x for x in notes if x.startswith("toleration: tolerating workload=memory-optimized")]
    assert "nodeSelector role=gpu (node has 'memory')" in line
    assert "nodeValue=" not in line and "nodeSelector=" not in line


def test_gke_resize_says_the_count_is_per_zone_in_a_whole_sentence() -> None:
    # `gcloud ... resize --num-nodes` counts per zone; the advice used to lose its opening parenthesis
    # ("then: per zone for a multi-zonal pool; 4 nodes in all), or raise ...").
    remedies, _ = remedies_for("golden/volumes-pv-node-affinity-conflict.yaml", "default/mysql-0")
    (scale,) = by_kind(remedies, "scale-pool")
    assert scale.commands == [
        "gcloud container clusters resize <cluster> --node-pool apps-pool --num-nodes <n>",
        "# or, when the pool autoscales, raise its max (--max-nodes is per zone):",
        "gcloud container node-pools update apps-pool --cluster <cluster> --enable-autoscaling --max-nodes <max>",
    ]
    assert scale.apply_note.startswith(
        "<n> is per zone and the pool spans 3 zones (4 nodes in all are needed); "
    )


def test_eks_alternatives_are_whole_commands_not_prose() -> None:
    """The AWS CLI alternative to eksctl is a line to copy, after a comment saying what it is; the advice
    (the max) names no command to assemble by hand."""
    remedies, _ = remedies_for(
        "golden/cluster-eks-three-nodegroups.yaml", "default/search-ranker-5f9c7d8b6-c2kxm"
    )
    scale = next(r for r in remedies if r.kind == "scale-pool")
    name = str(scale.details["pool"]).split("=", 1)[-1]
    size = scale.commands[0].rsplit(" ", 1)[-1]
    assert scale.commands == [
        f"eksctl scale nodegroup --cluster <cluster> --name {name} --nodes {size}",
        "# or, for a managed node group, with the AWS CLI:",
        f"aws eks update-nodegroup-config --cluster-name <cluster> --nodegroup-name {name} "
        f"--scaling-config desiredSize={size}",
    ]
    assert "aws eks " not in scale.apply_note and "eksctl scale" not in scale.apply_note
    assert scale.apply_note.startswith(
        f"if the group's max is below {size}, add --nodes-max {size} (eksctl) "
    )


@pytest.mark.parametrize(
    ("scenario", "pod"),
    [
        ("golden/volumes-pv-node-affinity-conflict.yaml", "default/mysql-0"),
        ("remedies/arch-gpu.yaml", "finance/billing-7f9c4d8b6-x2x9z"),
        ("golden/preemption-pdb-violated-when-unavoidable.yaml", "default/payments-0"),
    ],
)
def test_scale_up_advice_has_balanced_parentheses(scenario: str, pod: str) -> None:
    remedies, _ = remedies_for(scenario, pod)
    for r in by_kind(remedies, "scale-pool"):
        for text in (r.summary, r.risk, r.apply_note):
            assert text.count("(") == text.count(")"), text


def test_scaling_a_pool_whose_nodes_are_all_not_ready_says_so_first() -> None:
    # The simulated node is Ready by construction; every real member is NotReady or unreachable.
    remedies, _ = remedies_for("golden/edge-all-nodes-notready.yaml", "default/api-6c7d9b8f5-kq4zm")
    (scale,) = by_kind(remedies, "scale-pool")
    assert scale.risk.startswith(
        "none of the pool's 3 node(s) is Ready: what keeps them NotReady may keep a new node NotReady too: "
        "look first (kubectl describe node worker-1); adds 1 node(s)"
    )
    # A pool with Ready members does not get the warning.
    remedies, _ = remedies_for("remedies/arch-gpu.yaml", "finance/billing-7f9c4d8b6-x2x9z")
    assert all("is Ready" not in r.risk for r in by_kind(remedies, "scale-pool"))
