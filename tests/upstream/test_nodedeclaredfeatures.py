"""Ports of NodeDeclaredFeatures' upstream tables.

- pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures_test.go (v1.36.3 / v1.37.2):
  TestPreFilter and TestFilter. Upstream runs them on mock features (FeatureA, FeatureB, ...); the replay
  has the release's real registry only, so the rows use registered names in their place. Skipped: "plugin
  disabled" and the MaxVersion rows (no registered feature has a MaxVersion at these releases), the
  cycle-state error row (the replay's Filter only runs after a PreFilter that wrote it), and the queueing
  hints (TestEnqueueExtensions*), which are Go-only mechanics.
- component-helpers nodedeclaredfeatures/features/*/..._test.go TestInferForScheduling
  (restartallcontainers, usernamespaceshostnetwork at v0.36.3 and v0.37.2; volumebindmountoptions at
  v0.37.2).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.snapshot import NodeInfo
from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.nodedeclaredfeatures.nodedeclaredfeatures import (
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    VOLUME_BIND_MOUNT_OPTIONS,
    NodeDeclaredFeatures,
    infer_for_scheduling,
)
from kdiagnose.versions import dialect_for
from tests.upstream.builders import new_plugin, new_snapshot

Obj = dict[str, Any]
V136, V137 = dialect_for("v1.36.3"), dialect_for("v1.37.2")

# containerWithRestartAllContainersAction (restart_all_containers_test.go).
RESTART_ALL: Obj = {
    "name": "container",
    "image": "image",
    "restartPolicy": "Never",
    "restartPolicyRules": [
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}
    ],
}
PLAIN: Obj = {"name": "name", "image": "image"}


def _pod(spec: Obj) -> Pod:
    return Pod({"metadata": {"name": "test-pod", "namespace": "default"}, "spec": spec})


def _node(features: list[str] | None) -> Node:
    status: Obj = {"allocatable": {}}
    if features is not None:
        status["declaredFeatures"] = features
    return Node({"metadata": {"name": "node-1"}, "status": status})


@pytest.mark.parametrize("dialect", [V136, V137], ids=["v1.36", "v1.37"])
@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            {"initContainers": [RESTART_ALL], "containers": [PLAIN]}, True, id="init container with rules"
        ),
        pytest.param(
            {"initContainers": [PLAIN], "containers": [RESTART_ALL]}, True, id="regular container with rules"
        ),
        pytest.param(
            {"initContainers": [PLAIN], "containers": [{**PLAIN, "name": "name2"}]}, False, id="no rules"
        ),
    ],
)
def test_restart_all_containers_infer_for_scheduling(spec: Obj, want: bool, dialect: Any) -> None:
    assert (RESTART_ALL_CONTAINERS in infer_for_scheduling(_pod(spec), dialect)) is want


@pytest.mark.parametrize("dialect", [V136, V137], ids=["v1.36", "v1.37"])
@pytest.mark.parametrize(
    ("host_network", "host_users", "want"),
    [
        pytest.param(True, False, True, id="HostNetwork true, HostUsers false"),
        pytest.param(True, None, False, id="HostNetwork true, HostUsers nil"),
        pytest.param(True, True, False, id="HostNetwork true, HostUsers true"),
        pytest.param(False, False, False, id="HostNetwork false, HostUsers false"),
    ],
)
def test_user_namespaces_host_network_infer_for_scheduling(
    host_network: bool, host_users: bool | None, want: bool, dialect: Any
) -> None:
    spec: Obj = {"hostNetwork": host_network, "containers": [PLAIN]}
    if host_users is not None:
        spec["hostUsers"] = host_users
    assert (USER_NAMESPACES_HOST_NETWORK in infer_for_scheduling(_pod(spec), dialect)) is want


MOUNT_OPTS: Obj = {**PLAIN, "volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]}


@pytest.mark.parametrize(
    ("spec", "want_v137"),
    [
        pytest.param({"containers": [MOUNT_OPTS]}, True, id="container volumeMount with bindMountOptions"),
        pytest.param(
            {"initContainers": [MOUNT_OPTS], "containers": [PLAIN]}, True, id="init container volumeMount"
        ),
        pytest.param(
            {"containers": [{**PLAIN, "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]},
            False,
            id="volumeMount without bindMountOptions",
        ),
    ],
)
def test_volume_bind_mount_options_infer_for_scheduling(spec: Obj, want_v137: bool) -> None:
    # v1.37's registry (component-helpers v0.37) has the feature; v1.36's does not know it.
    assert (VOLUME_BIND_MOUNT_OPTIONS in infer_for_scheduling(_pod(spec), V137)) is want_v137
    assert VOLUME_BIND_MOUNT_OPTIONS not in infer_for_scheduling(_pod(spec), V136)


@pytest.mark.parametrize(
    ("spec", "want_code"),
    [
        pytest.param({"containers": [RESTART_ALL]}, Code.SUCCESS, id="Pod with feature requirements"),
        pytest.param(
            {"containers": [RESTART_ALL], "hostNetwork": True, "hostUsers": False},
            Code.SUCCESS,
            id="Pod with multiple feature requirements",
        ),
        pytest.param({"containers": [PLAIN]}, Code.SKIP, id="Pod with no requirements"),
    ],
)
def test_pre_filter(spec: Obj, want_code: Code) -> None:
    plugin = new_plugin(NodeDeclaredFeatures, new_snapshot([], [], dialect=V137))
    state = CycleState()
    result, st = plugin.pre_filter(state, _pod(spec))
    assert result is None and st.code == want_code


A, B, C = RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK, VOLUME_BIND_MOUNT_OPTIONS
POD_A: Obj = {"containers": [RESTART_ALL]}
POD_AB: Obj = {"containers": [RESTART_ALL], "hostNetwork": True, "hostUsers": False}
POD_AC: Obj = {"containers": [{**RESTART_ALL, "volumeMounts": MOUNT_OPTS["volumeMounts"]}]}


@pytest.mark.parametrize(
    ("spec", "declared", "want_fail"),
    [
        pytest.param(POD_A, [A, B], False, id="Node matches requirements"),
        pytest.param(POD_A, [B], True, id="Node does not match requirements"),
        pytest.param(POD_AC, [A, B, C], False, id="Node with multiple features, pod requires subset"),
        pytest.param(POD_A, None, True, id="Node has no declared features"),
        pytest.param(POD_AB, [A], True, id="Node with some but not all required features"),
        # Framework.TryMap: names the registry does not know are dropped (v1.36 knows no C).
        pytest.param(POD_A, ["SomethingElse", A], False, id="unknown declared names are ignored"),
    ],
)
def test_filter(spec: Obj, declared: list[str] | None, want_fail: bool) -> None:
    node = _node(declared)
    plugin = new_plugin(NodeDeclaredFeatures, new_snapshot([], [node], dialect=V137))
    state = CycleState()
    pod = _pod(spec)
    _, pre = plugin.pre_filter(state, pod)
    assert pre.code == Code.SUCCESS
    st = plugin.filter(state, pod, NodeInfo(node))
    if want_fail:
        assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert st.reasons == ("node(s) didn't match Pod's required features",)
        assert st.reasons == (ERR_REASON_UNSATISFIED_REQUIREMENTS,)
    else:
        assert st.code == Code.SUCCESS


def test_v136_registry_does_not_satisfy_with_v137_names() -> None:
    # A v1.37 feature declared on a node means nothing to v1.36 (and v1.36 never requires it).
    node = _node([C])
    plugin = new_plugin(NodeDeclaredFeatures, new_snapshot([], [node], dialect=V136))
    state = CycleState()
    _, pre = plugin.pre_filter(state, _pod({"containers": [MOUNT_OPTS]}))
    assert pre.code == Code.SKIP
