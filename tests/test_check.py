"""`kdiagnose check`: workload expansion, sequential placement, classification, policy and exit codes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kdiagnose.cli import app
from kdiagnose.gate.placement import run_gate
from kdiagnose.gate.policy import Outcome
from kdiagnose.gate.result import GateOptions, GateResult, WorkloadResult
from kdiagnose.load.files import RawObject, load_paths
from kdiagnose.load.manifests import Workload, expand_workloads
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.results import Remedy
from kdiagnose.versions import dialect_for
from tests.check_cluster import ANTI_AFFINITY_MSG, FIX, low_priority_hogs

# The CLI's default release (v1.37): DynamicResources' PostFilter adds no reason for a pod without claims.
ANTI_AFFINITY_MSG_V137 = ANTI_AFFINITY_MSG.replace("no new claims to deallocate, ", "")


def _snapshot(*paths: str, extra: str = "") -> Snapshot:
    objects = load_paths([str(FIX / p) for p in paths]).objects
    objects += [RawObject(d, "<extra>") for d in yaml.safe_load_all(textwrap.dedent(extra)) if d]
    return build_snapshot(objects, dialect_for("v1.34.1"))


def _workloads(text: str) -> list[Workload]:
    docs = [d for d in yaml.safe_load_all(textwrap.dedent(text)) if d]
    return expand_workloads([RawObject(d, "app.yaml", i, i + 1) for i, d in enumerate(docs)])[0]


def _fixture_workloads(name: str) -> list[Workload]:
    return expand_workloads(load_paths([str(FIX / name)]).objects)[0]


def _gate(snapshot: Snapshot, workloads: list[Workload], **kw: Any) -> GateResult:
    remedy_fn = kw.pop("remedy_fn", None)
    return run_gate(snapshot, workloads, options=GateOptions(**kw), remedy_fn=remedy_fn)


def _one(result: GateResult) -> WorkloadResult:
    assert len(result.results) == 1
    return result.results[0]


def _cli(args: list[str], stdin: bytes | None = None) -> Any:
    return CliRunner().invoke(app, ["check", "--no-config", "--no-remedies", *args], input=stdin)


def _deployment(name: str, replicas: int, cpu: str, extra_spec: str = "", labels: str = "") -> str:
    return f"""
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: {name}{labels}}}
    spec:
      replicas: {replicas}
      selector: {{matchLabels: {{app: {name}}}}}
      template:
        metadata: {{labels: {{app: {name}}}}}
        spec:
          {extra_spec}
          containers:
          - name: c
            image: app:1
            resources: {{requests: {{cpu: {cpu}, memory: 64Mi}}}}
    """


# ---------------------------------------------------------------------------------------------- kinds


@pytest.mark.parametrize(
    ("kind", "pods", "names", "label", "owner_kind"),
    [
        pytest.param("Pod", 1, ["solo"], None, None, id="a Pod is itself the one replica"),
        pytest.param(
            "Deployment",
            2,
            None,
            "pod-template-hash",
            "ReplicaSet",
            id="a Deployment's pods belong to a ReplicaSet",
        ),
        pytest.param("ReplicaSet", 2, None, None, "ReplicaSet", id="a ReplicaSet owns its pods"),
        pytest.param(
            "StatefulSet",
            2,
            ["queue-0", "queue-1"],
            "statefulset.kubernetes.io/pod-name",
            "StatefulSet",
            id="a StatefulSet names its pods by ordinal",
        ),
        pytest.param("Job", 2, None, "job-name", "Job", id="a Job runs min(parallelism, completions) pods"),
        pytest.param(
            "CronJob", 2, None, "job-name", "Job", id="a CronJob runs its jobTemplate's parallelism"
        ),
        pytest.param(
            "ReplicationController",
            1,
            None,
            None,
            "ReplicationController",
            id="a ReplicationController owns its pods",
        ),
    ],
)
def test_each_workload_kind_expands_to_the_controllers_pods(
    kind: str, pods: int, names: list[str] | None, label: str | None, owner_kind: str | None
) -> None:
    workloads = {w.kind: w for w in _fixture_workloads("kinds.manifests.yaml")}
    w = workloads[kind]
    assert len(w.pods) == pods == w.replicas
    if names is not None:
        assert [p["metadata"]["name"] for p in w.pods] == names
    if label is not None:
        assert all(label in p["metadata"]["labels"] for p in w.pods)
    refs = [p["metadata"].get("ownerReferences") for p in w.pods]
    if owner_kind is None:
        assert refs == [None] * pods
    else:
        assert all(r is not None and r[0]["kind"] == owner_kind and r[0]["controller"] for r in refs)
    assert len({p["metadata"]["name"] for p in w.pods}) == pods


def test_other_kinds_are_counted_and_a_daemonset_is_per_node() -> None:
    workloads, other = expand_workloads(load_paths([str(FIX / "kinds.manifests.yaml")]).objects)
    assert other == {"ConfigMap": 1, "Service": 1}
    ds = next(w for w in workloads if w.kind == "DaemonSet")
    assert ds.per_node and ds.pods == []
    assert [w.kind for w in workloads] == [
        "Pod",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
        "ReplicationController",
    ]


def test_every_kind_fits_on_an_empty_cluster_in_input_order() -> None:
    result = _gate(_snapshot("cluster-two-nodes.yaml"), _fixture_workloads("kinds.manifests.yaml"))
    assert [(r.workload.kind, r.outcome, r.fit_now) for r in result.results] == [
        ("Pod", Outcome.FITS, 1),
        ("Deployment", Outcome.FITS, 2),
        ("ReplicaSet", Outcome.FITS, 2),
        ("StatefulSet", Outcome.FITS, 2),
        ("DaemonSet", Outcome.FITS, 2),
        ("Job", Outcome.FITS, 2),
        ("CronJob", Outcome.FITS, 2),
        ("ReplicationController", Outcome.FITS, 1),
    ]
    ds = result.results[4]
    assert sorted(p.node or "" for p in ds.placements) == ["node-a", "node-b"]


def test_unknown_fields_are_tolerated() -> None:
    text = _deployment("odd", 1, "100m", extra_spec="futureField: {x: 1}").replace(
        "spec:\n      replicas", "spec:\n      somethingNew: true\n      replicas"
    )
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml"), _workloads(text)))
    assert r.outcome == Outcome.FITS


# ---------------------------------------------------------------------------------------------- sequential


def test_the_third_anti_affine_replica_fails_on_two_nodes_with_the_schedulers_message() -> None:
    r = _one(
        _gate(_snapshot("cluster-two-nodes.yaml"), _fixture_workloads("web-anti-affinity.manifests.yaml"))
    )
    assert r.outcome == Outcome.UNSCHEDULABLE
    assert (r.fit_now, r.failed_replica, r.total) == (2, 2, 3)
    assert sorted(p.node or "" for p in r.placements) == ["node-a", "node-b"]
    assert r.message == ANTI_AFFINITY_MSG
    assert r.summary == f"2 of 3 fit; replica 3: {ANTI_AFFINITY_MSG}"
    assert r.fails_policy


def test_placed_replicas_use_up_capacity_for_later_workloads() -> None:
    # Two nodes of 4 CPU: 3 replicas of 2 CPU fit (the 4th slot is left), then 2 more of 2 CPU do not both.
    text = _deployment("first", 3, "2") + "---" + _deployment("second", 2, "2")
    result = _gate(_snapshot("cluster-two-nodes.yaml"), _workloads(text))
    first, second = result.results
    assert first.outcome == Outcome.FITS
    assert (second.fit_now, second.failed_replica) == (1, 1)
    assert second.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_ties_go_to_the_lowest_node_name() -> None:
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml"), _workloads(_deployment("one", 1, "100m"))))
    assert r.placements[0].node == "node-a"


# ---------------------------------------------------------------------------------------------- storage


def test_statefulset_on_a_zonal_class_binds_the_zone_a_volume_then_runs_out() -> None:
    snap = _snapshot("cluster-zonal-storage.yaml")
    r = _one(_gate(snap, _fixture_workloads("statefulset-zonal.manifests.yaml")))
    assert r.placements[0].pod == "default/db-0"
    assert r.placements[0].node == "node-a"  # the only PV is in zone-a
    claim = snap.get("PersistentVolumeClaim", "data-db-0", "default")
    assert claim is not None
    assert claim["spec"]["storageClassName"] == "local-zonal"  # DefaultStorageClass admission
    assert claim["spec"]["volumeName"] == "pv-zone-a"
    assert snap.get("PersistentVolumeClaim", "data-db-1", "default") is not None
    assert r.outcome == Outcome.UNSCHEDULABLE
    assert r.message == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind. no new claims "
        "to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_statefulset_claims_on_a_provisioned_zonal_class_pin_replicas_to_the_allowed_zone() -> None:
    extra = """
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata: {name: ssd-zone-b}
    provisioner: ebs.csi.aws.com
    volumeBindingMode: WaitForFirstConsumer
    allowedTopologies:
    - matchLabelExpressions:
      - {key: topology.kubernetes.io/zone, values: [zone-b]}
    """
    sts = yaml.safe_load((FIX / "statefulset-zonal.manifests.yaml").read_text())
    sts["spec"]["replicas"] = 3
    sts["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] = "ssd-zone-b"
    w = expand_workloads([RawObject(sts, "sts.yaml", 0, 1)])[0]
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml", extra=extra), w))
    assert r.outcome == Outcome.FITS
    assert [p.node for p in r.placements] == ["node-b", "node-b", "node-b"]


# ---------------------------------------------------------------------------------------------- DaemonSet

_FULL_NODE_MSG = (
    "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new "
    "claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims found for incoming "
    "pod, 2 Preemption is not helpful for scheduling."
)


def test_a_daemonset_reports_the_full_node_it_cannot_run_on() -> None:
    r = _one(_gate(_snapshot("cluster-full-node.yaml"), _fixture_workloads("daemonset.manifests.yaml")))
    assert r.outcome == Outcome.UNSCHEDULABLE
    assert (r.total, r.fit_now) == (3, 2)
    assert [(f.node, f.report.diagnosis.message) for f in r.node_failures] == [("node-c", _FULL_NODE_MSG)]
    assert r.summary == f"2 of 3 targeted node(s) fit; cannot run on node-c: {_FULL_NODE_MSG}"


def test_a_daemonset_failure_says_plainly_why_other_nodes_were_not_filtered() -> None:
    """The DaemonSet controller pins each node's pod to its node; kube-scheduler's PreFilter then skips the
    others. "node-a, node-b: PreFilter: node(s) didn't satisfy plugin(s) [NodeAffinity]" read as if the
    DaemonSet failed there."""
    from kdiagnose.gate.formats.text import failure_text

    r = _one(_gate(_snapshot("cluster-full-node.yaml"), _fixture_workloads("daemonset.manifests.yaml")))
    lines = failure_text(r).splitlines()
    assert "  node-a, node-b: PreFilter: node(s) didn't satisfy plugin(s) [NodeAffinity]" not in lines
    assert (
        "  node-a, node-b: not this pod's node: the DaemonSet's pod for node-c is pinned to it (node affinity "
        "on metadata.name), so kube-scheduler skips the other nodes; each node's own pod is checked on its own"
    ) in lines


def test_a_daemonset_skips_nodes_its_controller_does_not_target() -> None:
    extra = """
    apiVersion: v1
    kind: Node
    metadata: {name: node-t, labels: {kubernetes.io/hostname: node-t}}
    spec:
      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
    ---
    apiVersion: v1
    kind: Node
    metadata: {name: node-u, labels: {kubernetes.io/hostname: node-u}}
    spec:
      unschedulable: true
      taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
    """
    r = _one(
        _gate(
            _snapshot("cluster-two-nodes.yaml", extra=extra), _fixture_workloads("daemonset.manifests.yaml")
        )
    )
    # The daemon tolerations include node.kubernetes.io/unschedulable, so cordoned nodes still get a pod.
    assert sorted(p.node or "" for p in r.placements) == ["node-a", "node-b", "node-u"]
    assert r.excluded_nodes == {"node-t": "untolerated taint dedicated=gpu:NoSchedule"}
    assert r.outcome == Outcome.FITS


def test_a_daemonset_node_selector_limits_the_targeted_nodes() -> None:
    ds = yaml.safe_load((FIX / "daemonset.manifests.yaml").read_text())
    ds["spec"]["template"]["spec"]["nodeSelector"] = {"topology.kubernetes.io/zone": "zone-b"}
    w = expand_workloads([RawObject(ds, "ds.yaml", 0, 1)])[0]
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml"), w))
    assert [p.node for p in r.placements] == ["node-b"]
    assert list(r.excluded_nodes) == ["node-a"]


# ---------------------------------------------------------------------------------------------- outcomes

_LOW_PRIORITY_HOG = low_priority_hogs("4")


def test_a_high_priority_replica_fits_only_by_preemption_and_evicts_its_victim() -> None:
    snap = _snapshot("cluster-two-nodes.yaml", extra=_LOW_PRIORITY_HOG)
    text = _deployment("vip", 1, "1", extra_spec="priorityClassName: high")
    r = _one(_gate(snap, _workloads(text)))
    assert r.outcome == Outcome.PREEMPTION
    assert r.fit_preemption == 1 and r.failed_replica is None
    (placed,) = r.placements
    assert placed.how == "preemption" and placed.victims == [
        f"default/hog{'' if placed.node == 'node-a' else '2'}"
    ]
    assert not r.fails_policy  # default policy: only "never fits" fails
    assert {p.key for p in snap.pods} >= {"default/hog", "default/hog2"} - set(placed.victims)
    assert not set(placed.victims) & {p.key for p in snap.pods}


@pytest.mark.parametrize(
    ("fail_on", "fails"),
    [
        pytest.param("unschedulable", False, id="unschedulable lets preemption pass"),
        pytest.param("scale-up", False, id="scale-up lets preemption pass"),
        pytest.param("preemption", True, id="preemption fails it"),
    ],
)
def test_fail_on_policy_for_preemption(fail_on: str, fails: bool) -> None:
    snap = _snapshot("cluster-two-nodes.yaml", extra=_LOW_PRIORITY_HOG)
    r = _one(_gate(snap, _workloads(_deployment("vip", 1, "1", "priorityClassName: high")), fail_on=fail_on))
    assert r.fails_policy is fails


def _fake_scale_up(
    snapshot: Snapshot, scheduler: object, diagnosis: object
) -> tuple[list[Remedy], list[str]]:
    # A proven scale-up whose autoscaler evidence (remedies/autoscaler.py) says the node can be added.
    evidence = {"can_add": True, "room": "group general: 2 of 3 → 3", "blocked": ""}
    return [
        Remedy(
            kind="scale-pool",
            summary="scale pool general by 1",
            details={"pool": "general", "autoscaler": evidence},
        )
    ], []


@pytest.mark.parametrize(
    ("fail_on", "fails"),
    [
        pytest.param("unschedulable", False, id="unschedulable lets scale-up pass"),
        pytest.param("scale-up", True, id="scale-up fails it"),
        pytest.param("preemption", True, id="preemption (stricter) fails it too"),
    ],
)
def test_a_scale_pool_remedy_makes_it_fit_only_after_scale_up(fail_on: str, fails: bool) -> None:
    r = _one(
        _gate(
            _snapshot("cluster-two-nodes.yaml"),
            _workloads(_deployment("big", 3, "3")),
            fail_on=fail_on,
            remedy_fn=_fake_scale_up,
        )
    )
    assert r.outcome == Outcome.SCALE_UP
    assert r.failure is not None and r.failure.remedies[0].kind == "scale-pool"
    assert r.fails_policy is fails
    assert "fits after scale-up of group general: 2 of 3 → 3" in r.summary


def test_a_scale_up_without_autoscaler_evidence_fails_even_with_fail_on_unschedulable() -> None:
    def blind(snapshot: Snapshot, scheduler: object, diagnosis: object) -> tuple[list[Remedy], list[str]]:
        why = "no autoscaler evidence for pool general: the input has no cluster-autoscaler status ConfigMap"
        evidence = {"can_add": False, "blocked": why}
        return [
            Remedy(kind="scale-pool", summary="s", details={"pool": "general", "autoscaler": evidence})
        ], []

    r = _one(
        _gate(
            _snapshot("cluster-two-nodes.yaml"),
            _workloads(_deployment("big", 3, "3")),
            fail_on="unschedulable",
            remedy_fn=blind,
        )
    )
    assert r.outcome == Outcome.SCALE_UP
    assert r.fails_policy is True
    assert "which no autoscaler can add now: no autoscaler evidence for pool general" in r.summary


def test_a_missing_priority_class_is_rejected_as_the_api_server_would() -> None:
    extra = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: other}\nvalue: 5\n"
    r = _one(
        _gate(
            _snapshot("cluster-two-nodes.yaml", extra=extra),
            _workloads(_deployment("p", 1, "100m", "priorityClassName: gold")),
        )
    )
    assert r.outcome == Outcome.UNSCHEDULABLE
    assert "is forbidden: no PriorityClass with name gold was found" in r.message


def test_limit_range_defaults_apply_before_simulating() -> None:
    extra = """
    apiVersion: v1
    kind: LimitRange
    metadata: {name: defaults, namespace: default}
    spec:
      limits:
      - type: Container
        defaultRequest: {cpu: "3"}
    """
    text = _deployment("lr", 3, "100m").replace(
        "resources: {requests: {cpu: 100m, memory: 64Mi}}", "image: x"
    )
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml", extra=extra), _workloads(text)))
    assert (r.fit_now, r.failed_replica) == (2, 2)
    assert r.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")


def _no_requests(name: str, replicas: int = 1, extra_spec: str = "") -> str:
    return _deployment(name, replicas, "100m", extra_spec).replace(
        "resources: {requests: {cpu: 100m, memory: 64Mi}}", "resources: {requests: {memory: 64Mi}}"
    )


def test_without_limit_ranges_in_the_snapshot_the_defaulting_is_not_checked() -> None:
    """A container without a cpu request would get a namespace LimitRange's default request, which
    changes where it fits: a snapshot without LimitRanges cannot say, and the workload says so."""
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml"), _workloads(_no_requests("lr", 2))))
    assert r.outcome == Outcome.FITS
    assert r.notes == [
        "LimitRange defaults not checked: the snapshot has no LimitRanges; placed with no request where none "
        "is set: container c (cpu) (add limitranges to the snapshot's kubectl get)"
    ]


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param("apiVersion: v1\nkind: LimitRangeList\nitems: []\n", id="an empty LimitRange list"),
        pytest.param(
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: x, namespace: other}\nspec: {limits: []}\n",
            id="a LimitRange of another namespace",
        ),
    ],
)
def test_a_snapshot_listing_limit_ranges_has_no_such_note(extra: str, tmp_path: Path) -> None:
    (tmp_path / "extra.yaml").write_text(extra)  # read as a dump is: a List is expanded, an empty one counts
    loaded = load_paths([str(FIX / "cluster-two-nodes.yaml"), str(tmp_path / "extra.yaml")])
    snap = build_snapshot(loaded.objects, dialect_for("v1.34.1"), list_kinds=loaded.list_kinds)
    r = _one(_gate(snap, _workloads(_no_requests("lr"))))
    assert r.outcome == Outcome.FITS
    assert not any("LimitRange" in n for n in r.notes)


def test_a_workload_with_every_request_set_needs_no_limit_range_note() -> None:
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml"), _workloads(_deployment("full", 1, "100m"))))
    assert not any("LimitRange" in n for n in r.notes)


def test_a_runtime_class_the_snapshot_cannot_resolve_is_not_checked() -> None:
    r = _one(
        _gate(
            _snapshot("cluster-two-nodes.yaml"),
            _workloads(_deployment("k", 1, "100m", "runtimeClassName: kata")),
        )
    )
    assert r.outcome == Outcome.FITS
    assert r.notes == [
        "runtimeClassName kata not checked: the snapshot has no RuntimeClasses (no overhead or node "
        "scheduling constraints added)"
    ]


def test_a_runtime_class_missing_from_a_listed_set_is_rejected_as_the_api_server_would(
    tmp_path: Path,
) -> None:
    (tmp_path / "extra.yaml").write_text("apiVersion: node.k8s.io/v1\nkind: RuntimeClassList\nitems: []\n")
    loaded = load_paths([str(FIX / "cluster-two-nodes.yaml"), str(tmp_path / "extra.yaml")])
    snap = build_snapshot(loaded.objects, dialect_for("v1.34.1"), list_kinds=loaded.list_kinds)
    r = _one(_gate(snap, _workloads(_deployment("k", 1, "100m", "runtimeClassName: kata"))))
    assert r.outcome == Outcome.UNSCHEDULABLE
    assert 'RuntimeClass "kata" not found' in r.message


@pytest.mark.parametrize("fmt", ["human", "json", "junit", "sarif", "github"])
def test_the_limit_range_note_is_in_every_output_format(fmt: str, tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(textwrap.dedent(_no_requests("lr")))
    res = _cli(
        ["-f", str(tmp_path / "app.yaml"), "--snapshot", str(FIX / "cluster-two-nodes.yaml"), "-o", fmt]
    )
    assert res.exit_code == 0, res.output
    flat = " ".join(res.stdout.replace("%0A", " ").split())
    assert "LimitRange defaults not checked: the snapshot has no LimitRanges" in flat


# ---------------------------------------------------------------------------------------------- replace

_EXISTING_WEB = """
apiVersion: v1
kind: Pod
metadata:
  name: web-old-{n}
  namespace: default
  labels: {{app: web}}
spec:
  nodeName: node-{n}
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {{matchLabels: {{app: web}}}}
        topologyKey: kubernetes.io/hostname
  containers: [{{name: web, image: nginx}}]
status: {{phase: Running}}
"""


@pytest.mark.parametrize(
    ("replace", "fit_now"),
    [
        pytest.param(False, 0, id="without --replace the old pods block every node"),
        pytest.param(True, 2, id="--replace removes the old pods first"),
    ],
)
def test_replace_removes_the_workloads_existing_pods(replace: bool, fit_now: int) -> None:
    extra = _EXISTING_WEB.format(n="a") + "---" + _EXISTING_WEB.format(n="b")
    snap = _snapshot("cluster-two-nodes.yaml", extra=extra)
    r = _one(_gate(snap, _fixture_workloads("web-anti-affinity.manifests.yaml"), replace=replace))
    assert r.fit_now == fit_now
    assert ("default/web-old-a" in {p.key for p in snap.pods}) is not replace


# ---------------------------------------------------------------------------------------------- headroom


@pytest.mark.parametrize(
    ("cap", "more", "capped"),
    [
        pytest.param(1000, 7, False, id="eight 1-CPU replicas fit on two 4-CPU nodes: one asked, seven more"),
        pytest.param(3, 3, True, id="the cap stops the count and says so"),
    ],
)
def test_headroom_counts_more_replicas_with_the_limiting_reason(cap: int, more: int, capped: bool) -> None:
    snap = _snapshot("cluster-two-nodes.yaml")
    r = _one(_gate(snap, _workloads(_deployment("h", 1, "1")), headroom=True, headroom_cap=cap))
    assert r.headroom is not None
    assert (r.headroom.more, r.headroom.capped) == (more, capped)
    if capped:
        assert r.headroom.reason.startswith(f"stopped at the cap of {cap}")
    else:
        assert r.headroom.reason.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert len(snap.pods) == 1  # headroom replicas are placed on a copy


# ---------------------------------------------------------------------------------------------- ignores


def test_the_ignore_annotation_skips_a_workload() -> None:
    text = _deployment("skip", 50, "4", labels=', annotations: {"kdiagnose.io/ignore": "true"}')
    r = _one(_gate(_snapshot("cluster-two-nodes.yaml"), _workloads(text)))
    assert r.outcome == Outcome.IGNORED and not r.fails_policy


# ---------------------------------------------------------------------------------------------- CLI


def test_multi_document_stdin_input() -> None:
    data = (FIX / "kinds.manifests.yaml").read_bytes()
    res = _cli(["-f", "-", "--snapshot", str(FIX / "cluster-two-nodes.yaml"), "-o", "json"], stdin=data)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [w["kind"] for w in doc["workloads"]][:2] == ["Pod", "Deployment"]
    assert len(doc["workloads"]) == 8
    assert {w["file"] for w in doc["workloads"]} == {"<stdin>"}
    assert doc["ignoredKinds"] == {"ConfigMap": 1, "Service": 1}
    # The second document's object: its apiVersion line, not the `---` on line 11 before it.
    assert (doc["workloads"][1]["line"], doc["workloads"][1]["column"]) == (12, 1)


def test_a_directory_is_read_recursively(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "web.yaml").write_text((FIX / "web-anti-affinity.manifests.yaml").read_text())
    (tmp_path / "a" / "notes.txt").write_text("not yaml")
    # ANTI_AFFINITY_MSG is v1.34.1's text (v1.37 drops DynamicResources' "no new claims to deallocate, ").
    res = _cli(
        ["-f", str(tmp_path), "--snapshot", str(FIX / "cluster-two-nodes.yaml"), "--k8s-version", "v1.34.1"]
    )
    assert res.exit_code == 1
    assert ANTI_AFFINITY_MSG in " ".join(res.stdout.split())  # word-wrapped


@pytest.mark.parametrize(
    ("args", "code"),
    [
        pytest.param(
            ["-f", "kinds.manifests.yaml", "--snapshot", "cluster-two-nodes.yaml"], 0, id="0 when all fit"
        ),
        pytest.param(
            ["-f", "web-anti-affinity.manifests.yaml", "--snapshot", "cluster-two-nodes.yaml"],
            1,
            id="1 when a workload never fits",
        ),
        pytest.param(
            ["-f", "kinds.manifests.yaml", "--snapshot", "cluster-two-nodes.yaml", "--fail-on", "sometimes"],
            2,
            id="2 for an unknown --fail-on",
        ),
        pytest.param(["-f", "kinds.manifests.yaml"], 2, id="2 without a snapshot"),
        pytest.param(
            ["-f", "kinds.manifests.yaml", "--snapshot", "cluster-two-nodes.yaml", "-o", "xml"],
            2,
            id="2 for an unknown output format",
        ),
        pytest.param(
            ["-f", "kinds.manifests.yaml", "--snapshot", "cluster-two-nodes.yaml", "--context", "prod"],
            2,
            id="2 for --context (live clusters not available yet)",
        ),
        pytest.param(
            ["-f", "missing.yaml", "--snapshot", "cluster-two-nodes.yaml"], 3, id="3 for a missing manifest"
        ),
        pytest.param(
            ["-f", "kinds.manifests.yaml", "--snapshot", "README.md"], 3, id="3 for an unreadable snapshot"
        ),
    ],
)
def test_exit_codes(args: list[str], code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIX)
    res = _cli(args)
    assert res.exit_code == code, res.output


def test_config_is_discovered_upward_and_flags_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "clusters").mkdir()
    (tmp_path / "clusters" / "prod.yaml").write_text((FIX / "cluster-two-nodes.yaml").read_text())
    (tmp_path / "app" / "deep").mkdir(parents=True)
    (tmp_path / "app" / "web.yaml").write_text((FIX / "web-anti-affinity.manifests.yaml").read_text())
    (tmp_path / ".kdiagnose.yaml").write_text(
        "snapshot: clusters/prod.yaml\nfailOn: unschedulable\nignore:\n  - Deployment/web\n"
    )
    monkeypatch.chdir(tmp_path / "app" / "deep")
    runner = CliRunner()
    res = runner.invoke(app, ["check", "--no-remedies", "-f", "../web.yaml"])
    assert res.exit_code == 0, res.output  # the config's snapshot is found, and the failing workload ignored
    assert "SKIP Deployment default/web" in res.stdout
    (tmp_path / ".kdiagnose.yaml").write_text("snapshot: clusters/prod.yaml\n")
    assert runner.invoke(app, ["check", "--no-remedies", "-f", "../web.yaml"]).exit_code == 1
    (tmp_path / ".kdiagnose.yaml").write_text("snapshot: clusters/prod.yaml\nfailOnn: scale-up\n")
    res = runner.invoke(app, ["check", "--no-remedies", "-f", "../web.yaml"])
    assert res.exit_code == 2
    assert "unknown key(s) failOnn" in res.output


def test_output_file_gets_the_format_and_stdout_the_summary(tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    res = _cli(
        [
            "-f",
            str(FIX / "web-anti-affinity.manifests.yaml"),
            "--snapshot",
            str(FIX / "cluster-two-nodes.yaml"),
            "-o",
            "junit",
            "--output-file",
            str(out),
        ]
    )
    assert res.exit_code == 1
    assert out.read_text().startswith("<?xml")
    assert "FAIL Deployment default/web" in res.stdout


def test_no_workload_in_the_manifests_passes_with_a_warning(tmp_path: Path) -> None:
    manifests = tmp_path / "cm.yaml"
    manifests.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
    from typer.testing import CliRunner

    from kdiagnose.cli import app

    res = CliRunner().invoke(
        app, ["check", "-f", str(manifests), "--snapshot", str(FIX / "cluster-two-nodes.yaml"), "-o", "json"]
    )
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["workloads"] == []
    assert any(w.startswith("no workload in the manifests") and "ConfigMap (1)" in w for w in doc["warnings"])


def test_pools_file_feeds_the_scale_up_remedies() -> None:
    from typer.testing import CliRunner

    from kdiagnose.cli import app

    res = CliRunner().invoke(
        app,
        [
            "check",
            "-f",
            str(FIX / "web-anti-affinity.manifests.yaml"),
            "--snapshot",
            str(FIX / "cluster-two-nodes.yaml"),
            "--pools",
            str(FIX.parent / "remedies" / "pools.yaml"),
            "-o",
            "json",
        ],
    )
    assert res.exit_code == 0, res.stderr  # fits only after scale-up: passes the default policy
    assert "scale node pool web-pool by 1" in res.stdout


_WINDOWS_SNAPSHOT = """
apiVersion: v1
kind: Node
metadata:
  name: linux-1
  labels: {kubernetes.io/hostname: linux-1, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Node
metadata:
  name: win-1
  labels: {kubernetes.io/hostname: win-1, kubernetes.io/os: windows, kubernetes.io/arch: amd64}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: api-old, namespace: default}
spec:
  nodeName: linux-1
  containers:
  - {name: c, image: "app:1", resources: {requests: {cpu: 3500m}}}
status: {phase: Running}
"""


def test_a_replica_that_fits_only_a_node_of_another_platform_gets_a_note() -> None:
    # linux-1 is full; without an OS selector the replica fits the untainted Windows node. The gate still
    # passes (labels and taints allow it) but says its containers will fail to start there.
    snap = build_snapshot(
        [RawObject(d, "cluster.yaml") for d in yaml.safe_load_all(_WINDOWS_SNAPSHOT)], dialect_for("v1.34.1")
    )
    r = _one(_gate(snap, _workloads(_deployment("api", 1, "1"))))
    assert r.outcome == Outcome.FITS
    (note,) = [n for n in r.notes if "platform:" in n]
    assert note.startswith("replica 1: platform: kube-scheduler would bind it to win-1, a windows/amd64 node")
    assert note.endswith("pin it with nodeSelector kubernetes.io/os=linux")
