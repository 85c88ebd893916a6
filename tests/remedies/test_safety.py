"""Safety classes on realistic clusters: what an on-call engineer can apply, what is risky, what is never
a remedy. Every expected value is written from the scenario's meaning (see each fixture's header)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app
from tests.remedies.helpers import FIXTURES, by_kind, remedies_for

ARCH_GPU = "remedies/arch-gpu.yaml"
BILLING = "finance/billing-7f9c4d8b6-x2x9z"
GPU_NODE = "ip-10-0-1-41.eu-west-1.compute.internal"
POOL = "remedies/pool-selector.yaml"
API = "shop/api-58d4f9b7c-7tqzp"
CORDONED = "remedies/cordoned-local-pv.yaml"


def test_an_amd64_only_deployment_is_never_told_to_drop_its_arch() -> None:
    remedies, notes = remedies_for(ARCH_GPU, BILLING)
    assert by_kind(remedies, "relax-affinity") == []
    assert not any("kubernetes.io/arch" in r.summary or "arm64" in r.summary for r in remedies)
    assert (
        "affinity: never a remedy: relaxing nodeSelector kubernetes.io/arch=amd64: kubernetes.io/arch is the "
        "node's identity: the workload's binaries are built for it, other nodes cannot run them"
    ) in notes


def test_a_cpu_app_is_never_told_to_tolerate_the_gpu_taint() -> None:
    remedies, notes = remedies_for(ARCH_GPU, BILLING)
    assert not any("nvidia.com/gpu" in r.summary for r in remedies)
    assert GPU_NODE not in [u for r in remedies for u in r.unblocks]
    assert (
        f"toleration: never a remedy: tolerating nvidia.com/gpu=present:NoSchedule on node {GPU_NODE}: it "
        "reserves accelerator nodes for pods that request the hardware, and this pod requests none"
    ) in notes


def test_safe_fixes_first_then_the_risky_toleration() -> None:
    remedies, _ = remedies_for(ARCH_GPU, BILLING)
    assert [(r.rank, r.safety, r.kind) for r in remedies] == [
        (1, "safe", "scale-pool"),  # one more general node: every requirement kept
        (2, "safe", "right-size"),  # 1100m -> 1000m
        (3, "risky", "toleration"),  # workload=batch reserves the batch node for batch jobs
    ]
    rs = remedies[1]
    # 1100m -> 1000m is 100m of 1100m: 9.1%, rounded to 9%; memory 2Gi is not touched.
    assert rs.summary.endswith("(now cpu 1100m): a cut of cpu by 9%; its other requests (memory 2Gi) stay")
    tol = remedies[2]
    assert "workload reserves these nodes for other workloads" in tol.risk


def test_a_small_right_size_outranks_a_risky_pool_relaxation() -> None:
    remedies, _ = remedies_for(POOL, API)
    kinds = [(r.safety, r.kind) for r in remedies]
    assert kinds == [("safe", "scale-pool"), ("safe", "right-size"), ("risky", "relax-affinity")]
    relax = remedies[2]
    assert relax.unblocks == ["spare-a"]
    assert relax.risk.startswith("relaxing eks.amazonaws.com/nodegroup moves the workload off the pool")


def test_a_claim_pinned_to_a_cordoned_node_yields_uncordon() -> None:
    remedies, _ = remedies_for(CORDONED, "data/db-0")
    (first,) = remedies
    assert (first.kind, first.safety, first.unblocks) == ("uncordon", "safe", ["db-1"])
    assert first.commands == ["kubectl uncordon db-1"]
    assert first.rollback == "kubectl cordon db-1"
    assert first.verify == "kubectl get pod/db-0 -n data -o wide  # NODE: db-1"
    # Only node-exporter (a DaemonSet) is left on db-1: it was drained.
    assert "only DaemonSet pods are left on it: it looks drained" in first.risk


def _cli(args: list[str], env: dict[str, str] | None = None) -> str:
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


@pytest.mark.parametrize(
    "scenario",
    [ARCH_GPU, POOL, CORDONED, "remedies/host-port-held.yaml", "remedies/terminating-holders.yaml"],
)
def test_every_remedy_has_commands_and_a_patch_document_in_json(scenario: str) -> None:
    doc = json.loads(_cli(["diagnose", str(FIXTURES / scenario), "-o", "json", "--all-remedies"]))
    remedies = [r for p in doc["pods"] for r in p["remedies"]]
    assert remedies
    for r in remedies:
        assert r["safety"] in ("safe", "risky", "automatic")
        assert isinstance(r["commands"], list) and r["commands"], r["kind"]
        assert all(isinstance(c, str) and "\n" not in c for c in r["commands"])
        assert r["verify"] and r["rollback"]
        if r["kind"] in ("toleration", "relax-affinity", "right-size"):
            assert isinstance(r["patch"], dict) and r["patch"]["spec"]


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("scenario", [ARCH_GPU, POOL, CORDONED])
def test_each_command_is_printed_whole_on_one_line(scenario: str, columns: int) -> None:
    path = str(FIXTURES / scenario)
    doc = json.loads(_cli(["diagnose", path, "-o", "json", "--all-remedies"]))
    env = {"COLUMNS": str(columns), "NO_COLOR": "1"}
    lines = [ln.strip() for ln in _cli(["diagnose", path, "--all-remedies"], env).splitlines()]
    # Comment lines (a step no command does, a verify line's "  # NODE: ..." remark) wrap like prose,
    # each wrapped line starting with "# "; the command itself is one whole line at any width.
    comments = " ".join(ln.removeprefix("#").strip() for ln in lines if ln.startswith("#"))
    for p in doc["pods"]:
        for r in p["remedies"]:
            for cmd in [*r["commands"], r["verify"], r["rollback"]]:
                command, _, remark = cmd.partition("  # ") if not cmd.startswith("#") else ("", "", cmd[1:])
                if cmd in lines:
                    continue
                assert command == "" or command in lines, (columns, cmd)
                assert " ".join(remark.split()) in comments, (columns, cmd)


def test_the_fixtures_are_realistic_dumps() -> None:
    # Each scenario says what it models in its header (read by a person, not by the code).
    for name in (ARCH_GPU, POOL, CORDONED):
        assert Path(FIXTURES / name).read_text().startswith("# ")


TERMINATING = "remedies/terminating-holders.yaml"


def test_a_terminating_pod_holding_a_readwriteoncepod_claim_is_force_deleted() -> None:
    remedies, _ = remedies_for(TERMINATING, "apps/uploader-7c9d-new")
    (first,) = remedies
    assert (first.kind, first.safety) == ("free-claim", "safe")
    assert first.commands == ["kubectl delete pod/uploader-7c9d-old -n apps --grace-period=0 --force"]
    assert "make sure the container stopped on its node" in first.risk


def test_a_terminating_pod_holding_a_host_port_is_force_deleted() -> None:
    remedies, _ = remedies_for(TERMINATING, "ingress/edge-proxy-new")
    (port,) = by_kind(remedies, "free-port")
    assert port.unblocks == ["worker-2"]
    assert port.summary.endswith("force-delete the stuck Terminating pod")
    assert port.commands == ["kubectl delete pod/edge-proxy-old -n ingress --grace-period=0 --force"]


def test_a_risky_fix_is_the_headline_only_when_nothing_safe_exists_and_says_so() -> None:
    from kdiagnose.load.files import load_paths
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.report.console_summary import glance
    from kdiagnose.results import PodReport
    from kdiagnose.scheduler.engine import Scheduler
    from kdiagnose.versions import dialect_for

    remedies, _ = remedies_for(POOL, API)
    loaded = load_paths([str(FIXTURES / POOL)])
    snap = build_snapshot(loaded.objects, dialect_for(None), list_kinds=loaded.list_kinds)
    d = Scheduler(snap).diagnose(next(p for p in snap.pending if p.key == API))
    assert "; fix: scale node pool general by 1" in glance(PodReport(diagnosis=d, remedies=remedies))
    risky_only = [r for r in remedies if r.safety == "risky"]
    assert "; risky fix: replace nodeSelector" in glance(PodReport(diagnosis=d, remedies=risky_only))


def _platform_cluster(pending_image: str) -> list[dict[str, Any]]:
    def node(name: str, os_: str) -> dict[str, Any]:
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": os_, "kubernetes.io/arch": "amd64"}
        alloc = {"cpu": "4", "memory": "16Gi", "pods": "110"}
        return {
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": alloc, "conditions": [{"type": "Ready", "status": "True"}]},
        }

    def pod(name: str, cpu: str, image: str, node_name: str = "") -> dict[str, Any]:
        spec: dict[str, Any] = {
            "containers": [{"name": "main", "image": image, "resources": {"requests": {"cpu": cpu}}}]
        }
        if node_name:
            spec["nodeName"] = node_name
        return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}

    return [
        node("linux-1", "linux"),
        node("win-1", "windows"),
        pod("api-1", "3500m", "registry.example.com/api:1.0", "linux-1"),
        pod("api-2", "3", pending_image),
    ]


@pytest.mark.parametrize(
    ("image", "warned"),
    [
        pytest.param("registry.example.com/api:1.0", True, id="same images run only on linux"),
        pytest.param("registry.example.com/other:2", False, id="no evidence of the images' platform"),
    ],
)
def test_a_pod_bound_to_a_node_of_another_platform_is_warned(image: str, warned: bool) -> None:
    # linux-1 is full, so kube-scheduler binds the pod (no OS selector) to the Windows node.
    from kdiagnose.load.files import RawObject
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.versions import dialect_for

    objs = [RawObject(o, "dump.yaml") for o in _platform_cluster(image)]
    report = diagnose_snapshot(build_snapshot(objs, dialect_for("v1.34.1"), admit=True), source="dump.yaml")
    (pr,) = [p for p in report.pods if p.diagnosis.pod.name == "api-2"]
    assert pr.diagnosis.chosen == "win-1"
    found = [n for n in pr.diagnosis.notes if n.startswith("platform:")]
    if not warned:
        assert found == []
        return
    assert found == [
        "platform: kube-scheduler would bind it to win-1, a windows/amd64 node, but pods with the same images "
        "run only on linux/amd64 nodes: unless they are built for windows/amd64, its containers will fail to "
        "start there; pin it with nodeSelector kubernetes.io/os=linux"
    ]


@pytest.mark.parametrize(
    "taint",
    [
        "maintenance=scheduled:NoExecute",
        "aws-node-termination-handler/spot-itn=true:NoSchedule",
        "cloud.google.com/impending-node-termination=true:NoSchedule",
        "weave.works/kured-node-reboot=true:NoSchedule",
        "drain=true:NoSchedule",
    ],
)
def test_tolerating_a_taint_that_announces_the_node_going_away_is_never_a_remedy(taint: str) -> None:
    from kdiagnose.model.objects import Pod, Taint
    from kdiagnose.remedies import safety

    key_value, effect = taint.rsplit(":", 1)
    key, _, value = key_value.partition("=")
    pod = Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}]}})
    assert safety.classify_taint(Taint(key, value, effect), pod).safety == safety.NEVER


def test_the_gpu_pods_tolerations_name_the_hardware_they_are_for() -> None:
    # taints-multiple-on-one-node: gpu-2 also carries maintenance=scheduled:NoExecute (was a [risky]
    # "reserves these nodes for other workloads"); gpu-1's dedicated=gpu taint is what the GPU pod admits.
    remedies, notes = remedies_for(
        "golden/taints-multiple-on-one-node.yaml", "default/triton-inference-7f6d8c9b5-2kqzx"
    )
    tolerations = by_kind(remedies, "toleration")
    assert [r.unblocks for r in tolerations] == [["gpu-1"]]
    assert tolerations[0].safety == "safe"
    assert "this pod requests nvidia.com/gpu" in tolerations[0].risk
    assert any(
        n.startswith("toleration: never a remedy: tolerating maintenance=scheduled:NoExecute") for n in notes
    )


def test_an_application_is_never_moved_onto_the_aks_system_pool() -> None:
    """CriticalAddonsOnly=true:NoSchedule keeps application pods off the nodes running cluster DNS and the
    CNI: a toleration for an ordinary Deployment is ruled out; a system-cluster-critical pod may tolerate it."""
    from kdiagnose.model.objects import Pod, Taint
    from kdiagnose.remedies import safety

    taint = Taint("CriticalAddonsOnly", "true", "NoSchedule")
    app = Pod({"metadata": {"name": "p", "namespace": "shop"}, "spec": {"containers": [{"name": "c"}]}})
    c = safety.classify_taint(taint, app)
    assert c.safety == safety.NEVER and "cluster DNS (CoreDNS)" in c.why
    addon = Pod(
        {
            "metadata": {"name": "dns", "namespace": "kube-system"},
            "spec": {"priorityClassName": "system-cluster-critical", "containers": [{"name": "c"}]},
        }
    )
    assert safety.classify_taint(taint, addon).safety == safety.RISKY


def test_the_aks_worker_gets_no_toleration_for_the_system_pool() -> None:
    remedies, notes = remedies_for("autoscaler/ca-room-text.yaml", "shop/worker-6c7d8e9f0-w2")
    assert by_kind(remedies, "toleration") == []
    assert any(
        n.startswith("toleration: never a remedy: tolerating CriticalAddonsOnly=true:NoSchedule")
        for n in notes
    )
