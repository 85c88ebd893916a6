"""Patches change only what the workload's template has; kubectl commands that work for each owner kind."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest
import yaml

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.remedies.whatif import Context, template_from_pod
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for
from tests.remedies.helpers import by_kind, remedies_for

SCENARIO = "remedies/runtimeclass-limitrange.yaml"
SANDBOX = "apps/sandbox-7f8d9c6b5-x2x9q"
ADMISSION_WORDS = (
    "priority",
    "preemptionPolicy",
    "schedulerName",
    "overhead",
    "tolerationSeconds",
    "runtime",
)


def body(patch: str) -> Any:
    return yaml.safe_load(patch)


def test_toleration_patch_keeps_the_templates_tolerations_only() -> None:
    remedies, _ = remedies_for(SCENARIO, SANDBOX)
    (tol,) = by_kind(remedies, "toleration")
    tols = body(tol.patch)["spec"]["template"]["spec"]["tolerations"]
    # The pod's own toleration and the new one; not RuntimeClass kata's runtime=kata, nor the 300s
    # not-ready/unreachable ones DefaultTolerationSeconds added.
    assert [(t["key"], t.get("value")) for t in tols] == [("team", "a"), ("dedicated", "sandbox")]
    assert not any(w in tol.patch for w in ADMISSION_WORDS)


def test_owned_pod_is_patched_through_its_owner_with_a_working_command() -> None:
    remedies, _ = remedies_for(SCENARIO, SANDBOX)
    (tol,) = by_kind(remedies, "toleration")
    assert tol.target == "Deployment apps/sandbox"
    (cmd,) = tol.commands
    words = shlex.split(cmd)
    assert words[:7] == ["kubectl", "patch", "deployment/sandbox", "-n", "apps", "--type", "strategic"]
    assert json.loads(words[8]) == body(tol.patch) == tol.patch_document
    assert tol.rollback == "kubectl rollout undo deployment/sandbox -n apps"
    assert tol.apply_note == "a new ReplicaSet replaces the pending pod"


def test_right_size_below_a_limit_range_min_is_not_suggested() -> None:
    remedies, notes = remedies_for(SCENARIO, SANDBOX)
    assert by_kind(remedies, "right-size") == []
    assert any("below the min 400m of LimitRange apps/defaults" in n for n in notes)


def test_runtime_class_node_selector_is_not_relaxed_in_the_workload() -> None:
    remedies, notes = remedies_for(SCENARIO, SANDBOX)
    assert by_kind(remedies, "relax-affinity") == []
    assert any("comes from RuntimeClass kata (scheduling.nodeSelector)" in n for n in notes)


def test_bare_pod_right_size_patch_has_only_the_lowered_request() -> None:
    remedies, _ = remedies_for(SCENARIO, "default/tools")
    (rs,) = by_kind(remedies, "right-size")
    assert body(rs.patch) == {
        "spec": {"containers": [{"name": "agent", "resources": {"requests": {"cpu": "350m"}}}]}
    }
    assert "250m cpu of RuntimeClass overhead" in rs.summary
    assert rs.commands == ["kubectl replace --force -f pod.yaml"]  # a live pod's requests cannot be patched
    assert "re-create the pod" in rs.apply_note


def test_bare_pod_gets_tolerations_added_live_with_a_json_patch() -> None:
    remedies, _ = remedies_for(SCENARIO, "default/tools")
    (tol,) = by_kind(remedies, "toleration")
    assert body(tol.patch) == {
        "spec": {
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "sandbox", "effect": "NoSchedule"}
            ]
        }
    }
    (cmd,) = tol.commands
    words = shlex.split(cmd)
    assert words[:7] == ["kubectl", "patch", "pod/tools", "-n", "default", "--type", "json"]
    assert json.loads(words[8]) == [
        {
            "op": "add",
            "path": "/spec/tolerations/-",
            "value": {"key": "dedicated", "operator": "Equal", "value": "sandbox", "effect": "NoSchedule"},
        }
    ]


# ---------------------------------------------------------------------------------------------- template


def snapshot_of(*objs: dict[str, Any]) -> Snapshot:
    return build_snapshot([RawObject(o, "test") for o in objs], dialect_for(None), keep_raw=True)


RC = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "gvisor"},
    "handler": "runsc",
    "overhead": {"podFixed": {"memory": "64Mi"}},
    "scheduling": {
        "nodeSelector": {"sandbox": "gvisor"},
        "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}],
    },
}
LR = {
    "kind": "LimitRange",
    "metadata": {"name": "lr", "namespace": "default"},
    "spec": {
        "limits": [
            {"type": "Container", "defaultRequest": {"memory": "100Mi"}, "default": {"memory": "200Mi"}}
        ]
    },
}


def admitted(
    spec: dict[str, Any], *extra: dict[str, Any], labels: dict[str, str] | None = None
) -> dict[str, Any]:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "labels": labels or {}},
        "spec": spec,
    }
    snap = snapshot_of(*extra, pod)
    (p,) = snap.pending
    assert p.raw is not None
    return template_from_pod(snap, p.raw)


def c(**fields: Any) -> dict[str, Any]:
    return {"name": "app", "image": "app:1", **fields}


@pytest.mark.parametrize(
    ("spec", "extra", "labels", "want"),
    [
        pytest.param(
            {"containers": [c()]},
            (),
            None,
            {"containers": [c()]},
            id="defaulted schedulerName, priority, preemptionPolicy and 300s tolerations are dropped",
        ),
        pytest.param(
            {"runtimeClassName": "gvisor", "nodeSelector": {"disk": "ssd"}, "containers": [c()]},
            (RC,),
            None,
            {"runtimeClassName": "gvisor", "nodeSelector": {"disk": "ssd"}, "containers": [c()]},
            id="a RuntimeClass's nodeSelector, tolerations and overhead are dropped, the pod's own kept",
        ),
        pytest.param(
            {"containers": [c(resources={"limits": {"cpu": "1"}})]},
            (LR,),
            None,
            {"containers": [c(resources={"limits": {"cpu": "1"}})]},
            id="LimitRanger defaults and requests copied from limits are dropped",
        ),
        pytest.param(
            {"hostNetwork": True, "containers": [c(ports=[{"containerPort": 80}])]},
            (),
            None,
            {"hostNetwork": True, "containers": [c(ports=[{"containerPort": 80}])]},
            id="hostPort defaulted from containerPort and protocol TCP are dropped",
        ),
    ],
)
def test_template_from_pod(
    spec: dict[str, Any],
    extra: tuple[dict[str, Any], ...],
    labels: dict[str, str] | None,
    want: dict[str, Any],
) -> None:
    assert admitted(spec, *extra, labels=labels) == want


def test_template_from_pod_undoes_a_live_matchlabelkeys_merge() -> None:
    # As a live pod carries it: the API server added `pod-template-hash In [abc]` to the selector.
    constraint = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["abc"]}],
        },
        "matchLabelKeys": ["pod-template-hash"],
    }
    got = admitted(
        {"containers": [c()], "topologySpreadConstraints": [constraint]},
        labels={"app": "web", "pod-template-hash": "abc"},
    )
    assert got["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": {"app": "web"}}


# ---------------------------------------------------------------------------------------------- owners


def owned_pod(kind: str, name: str, *owners: dict[str, Any]) -> Context:
    pod = {
        "kind": "Pod",
        "metadata": {
            "name": "p-1",
            "namespace": "ns",
            "labels": {"app": "x", "controller-revision-hash": "h1"},
            "ownerReferences": [{"kind": kind, "name": name, "controller": True}],
        },
        "spec": {"containers": [c()]},
    }
    snap = snapshot_of(*owners, pod)
    (p,) = snap.pending
    return Context(snap, Scheduler(snap), Diagnosis(p))


CRONJOB = {"kind": "CronJob", "metadata": {"name": "nightly", "namespace": "ns"}, "spec": {"jobTemplate": {}}}
JOB = {
    "kind": "Job",
    "metadata": {
        "name": "nightly-123",
        "namespace": "ns",
        "ownerReferences": [{"kind": "CronJob", "name": "nightly", "controller": True}],
    },
    "spec": {"template": {"spec": {"containers": [c()]}}},
}


@pytest.mark.parametrize(
    ("ctx_args", "command", "also"),
    [
        pytest.param(
            ("StatefulSet", "db"),
            "kubectl patch statefulset/db -n ns --type strategic -p",
            "kubectl delete pod/p-1 -n ns",
            id="a StatefulSet is patched, and its Pending pod re-created by hand",
        ),
        pytest.param(
            ("DaemonSet", "agent"),
            "kubectl patch daemonset/agent -n ns --type strategic -p",
            "kubectl rollout undo daemonset/agent -n ns",
            id="a DaemonSet is patched and rolled back with rollout undo",
        ),
        pytest.param(
            ("Job", "nightly-123", CRONJOB, JOB),
            "kubectl patch cronjob/nightly -n ns --type strategic -p",
            "from the next schedule",
            id="a CronJob's pod is fixed in the CronJob's jobTemplate",
        ),
    ],
)
def test_apply_hint_per_owner_kind(ctx_args: tuple[Any, ...], command: str, also: str) -> None:
    ctx = owned_pod(*ctx_args)
    hint = ctx.apply_hint({"tolerations": []})
    assert hint.startswith(command)
    assert also in hint
    # The revision label differs on the re-created pod: the selector must not use it.
    assert "controller-revision-hash" not in ctx.verify_hint(["n1"])


def test_cronjob_patch_targets_the_job_template() -> None:
    ctx = owned_pod("Job", "nightly-123", CRONJOB, JOB)
    assert str(ctx.owner) == "CronJob ns/nightly"
    assert body(ctx.patch({"tolerations": []})) == {
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"tolerations": []}}}}}
    }


def test_job_template_is_immutable() -> None:
    ctx = owned_pod("Job", "once")
    hint = ctx.apply_hint({"tolerations": []})
    assert "immutable" in hint
    assert "kubectl patch" not in hint


def test_spread_patch_names_only_the_merge_key_and_the_changed_field() -> None:
    # topologySpreadConstraints merge on topologyKey: restating the selector would pin the template to
    # the pod's (possibly API-server-merged) labelSelector.
    remedies, _ = remedies_for("remedies/spread-zones.yaml", "default/api-new")
    (relax,) = by_kind(remedies, "relax-affinity")
    constraints = body(relax.patch)["spec"]["topologySpreadConstraints"]
    assert constraints == [
        {"topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}
    ]
