"""A reason and its concrete cause (scheduler/describe.py) are joined as `reason: cause` by every consumer,
never `reason (cause)`: the cause texts have parentheses of their own ("(label missing)",
"(status.declaredFeatures)", "(none in the cluster)", spread counts, "(provisioner ... cannot create one)"),
so wrapping them again printed "...(label missing))" and parentheses three deep. The consumers: the remedies'
notes and summaries (remedies/whatif.py describe_status and its callers), `check` with its JUnit, SARIF and
GitHub formats (gate/formats/text.py node_causes) and the report's PreFilter cause (report/console_summary.py).
The scheduler's own texts (reasons, the FailedScheduling message) are untouched."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kdiagnose.cli import app
from kdiagnose.gate.formats.text import node_causes
from kdiagnose.gate.placement import load_workloads, run_gate
from kdiagnose.load.files import RawObject, load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.remedies.whatif import describe_status
from kdiagnose.report.console import RenderOptions, render_text
from kdiagnose.scheduler.describe import describe_details, with_cause
from kdiagnose.scheduler.framework import Status
from kdiagnose.versions import dialect_for
from tests.remedies.helpers import FIXTURES, remedies_for

CHECK = FIXTURES / "check"


def depth(text: str) -> int:
    """How deep parentheses nest in one line; the "(s)" of "node(s)" (the scheduler's own words) is not a
    parenthesis a reader has to match."""
    most = cur = 0
    for ch in text.replace("(s)", ""):
        if ch == "(":
            cur += 1
            most = max(most, cur)
        elif ch == ")":
            cur = max(0, cur - 1)
    return most


def assert_flat(lines: list[str]) -> None:
    bad = [x for x in lines if depth(x) > 1 or "))" in x.replace("(s)", "")]
    assert bad == []


def test_with_cause_joins_with_a_colon() -> None:
    assert with_cause("Insufficient cpu", "needs 12 CPU, 4 free") == "Insufficient cpu: needs 12 CPU, 4 free"
    assert with_cause("Insufficient cpu", "") == "Insufficient cpu"


AFFINITY = "node(s) didn't match Pod's node affinity/selector"
FEATURES = "node(s) didn't match Pod's required features"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
SPREAD = "node(s) didn't match pod topology spread constraints"


@pytest.mark.parametrize(
    ("reason", "details", "cause"),
    [
        pytest.param(
            AFFINITY, {"nodeSelector": "pool=gpu"}, "nodeSelector pool=gpu (label missing)", id="label"
        ),
        pytest.param(
            AFFINITY,
            {"nodeSelector": "pool=gpu", "nodeValue": "general"},
            "nodeSelector pool=gpu (node has 'general')",
            id="label-value",
        ),
        pytest.param(
            FEATURES,
            {"missing_features": ["UserNamespacesHostNetworkSupport"]},
            "node does not declare UserNamespacesHostNetworkSupport (status.declaredFeatures)",
            id="declared-features",
        ),
        pytest.param(
            POD_AFFINITY,
            {"term": "topologyKey=zone", "domain": "zone=a", "matchingPods": 0, "matchingPodsInCluster": 0},
            "affinity term topologyKey=zone: no matching pod in zone=a (none in the cluster)",
            id="none-in-cluster",
        ),
        pytest.param(
            SPREAD,
            {
                "skew": 2,
                "maxSkew": 1,
                "topologyKey": "zone",
                "domain": "a",
                "matchingPods": 2,
                "globalMinimum": 1,
            },
            "skew would be 2 > maxSkew 1 in zone=a (2 matching pod(s) there, minimum 1)",
            id="spread-counts",
        ),
    ],
)
def test_remedy_notes_join_reason_and_cause(reason: str, details: dict[str, Any], cause: str) -> None:
    st = Status.unschedulable(reason, details=(details,))
    assert describe_details(st.details) == cause  # the cause's own words are unchanged
    assert describe_status(st) == f"{reason}: {cause}"
    assert depth(describe_status(st)) == 1


def test_scale_up_note_names_the_missing_feature_once_parenthesized() -> None:
    _, notes = remedies_for("remedies/node-declared-features.yaml", "default/netns-agent")
    assert (
        "pool workers-v135: no scale-up: a new node would fail NodeDeclaredFeatures: "
        f"{FEATURES}: node does not declare UserNamespacesHostNetworkSupport (status.declaredFeatures)"
    ) in notes
    assert_flat(notes)


def test_volume_note_lists_blocked_nodes_flat() -> None:
    # Was "db-1 (node(s) were unschedulable (node is cordoned (spec.unschedulable)))".
    _, notes = remedies_for("remedies/cordoned-local-pv.yaml", "data/db-0")
    assert (
        "volume: PV local-pv-db-1 restricts the pod to its node affinity: 1 node(s) satisfy it, blocked there "
        "by: db-1: node(s) were unschedulable: node is cordoned (spec.unschedulable)"
    ) in notes
    assert_flat(notes)


def test_toleration_note_on_a_node_still_blocked() -> None:
    _, notes = remedies_for("golden/random/rand-1-0024.yaml", "default/db-pending")
    assert (
        "toleration: tolerating spot:NoSchedule would not help: node-4 would still fail NodeAffinity: "
        f"{AFFINITY}: nodeSelector pool=highmem (node has 'gpu')"
    ) in notes
    assert_flat(notes)


TAINTED = """
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1, pool: a}}
spec: {taints: [{key: dedicated, value: batch, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2, pool: b}}
spec: {taints: [{key: dedicated, value: batch, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: job, namespace: default}
spec:
  nodeSelector: {pool: a}
  containers: [{name: c, image: c:1, resources: {requests: {cpu: 100m}}}]
status: {phase: Pending}
"""


def test_toleration_summary_names_a_node_still_blocked_flat() -> None:
    # node-1 and node-2 carry the taint; tolerating it lets the pod onto node-1, node-2 still fails its
    # nodeSelector. Was "(e.g. node-2: node(s) didn't match ... (nodeSelector pool=a (node has 'b')))".
    objs = [RawObject(d, "dump.yaml", i, i + 1) for i, d in enumerate(yaml.safe_load_all(TAINTED)) if d]
    snap = build_snapshot(objs, dialect_for("v1.34.1"))
    report = diagnose_snapshot(snap, source="dump.yaml")
    (pr,) = report.pods
    (rem,) = [r for r in pr.remedies if r.kind == "toleration"]
    assert rem.summary == (
        "add a toleration for dedicated=batch:NoSchedule to Pod default/job; 1 other tainted node(s) would "
        f"still be blocked, e.g. node-2: {AFFINITY}: nodeSelector pool=a (node has 'b')"
    )


def test_affinity_note_on_nodes_still_blocked() -> None:
    _, notes = remedies_for("golden/order/order-mixed-32-nodes.yaml", "web/big-2")
    assert (
        "affinity: to replace nodeSelector kubernetes.io/hostname=n21 by a preferred node affinity would not "
        "help: nodes stay blocked by NodeResourcesFit: Insufficient cpu: needs 7 CPU, 4.7 free of 8 allocatable"
    ) in notes


def test_report_prefilter_cause_is_joined_by_a_colon() -> None:
    snap = build_snapshot(
        load_paths([str(FIXTURES / "remedies" / "misspelled-references.yaml")]).objects, dialect_for(None)
    )
    out = render_text(diagnose_snapshot(snap, source="x.yaml"), RenderOptions(color=False, width=400))
    assert (
        "Cause: rejected at PreFilter by VolumeRestrictions before any node was checked: claim notebok-home\n"
    ) in out


def _check_causes(cluster: str, manifests: str) -> list[str]:
    snap = build_snapshot(load_paths([str(CHECK / cluster)]).objects, dialect_for("v1.34.1"))
    workloads, _ = load_workloads([str(CHECK / manifests)])
    (r,) = [r for r in run_gate(snap, workloads).results if r.failure is not None]
    assert r.failure is not None
    return node_causes(r.failure)


def test_check_lists_each_nodes_cause_after_the_reason() -> None:
    causes = _check_causes("cluster-zonal-storage.yaml", "statefulset-zonal.manifests.yaml")
    cause = "claim default/data-db-1: no PersistentVolume matches (provisioner kubernetes.io/no-provisioner cannot create one)"
    assert (
        "node-a, node-b: VolumeBinding: node(s) didn't find available persistent volumes to bind: "
        f"node-a: {cause}; node-b: {cause}"
    ) in causes
    assert_flat(causes)


def test_check_names_a_single_node_once() -> None:
    causes = _check_causes("cluster-full-node.yaml", "daemonset.manifests.yaml")
    assert "node-c: NodeResourcesFit: Insufficient cpu: needs 0.5 CPU, 0.1 free of 4 allocatable" in causes


@pytest.mark.parametrize("fmt", ["human", "junit", "sarif", "github"])
@pytest.mark.parametrize(
    ("cluster", "manifests"),
    [
        ("cluster-zonal-storage.yaml", "statefulset-zonal.manifests.yaml"),
        ("cluster-two-nodes.yaml", "web-anti-affinity.manifests.yaml"),
    ],
)
def test_check_formats_never_nest_parentheses(fmt: str, cluster: str, manifests: str) -> None:
    # Remedies on: their notes (describe_status) are in every format's text too.
    args = ["check", "--no-config", "--no-color", "-o", fmt, "--snapshot", str(CHECK / cluster)]
    res = CliRunner().invoke(app, [*args, "-f", str(CHECK / manifests)], env={"COLUMNS": "1000"})
    assert res.exit_code == 1, res.output
    assert ": node-a: " in res.stdout  # the per-node causes are there, after the reason
    assert_flat(res.stdout.splitlines())
