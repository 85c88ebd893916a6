"""Karpenter's per-NodePool verdicts, as pkg/controllers/provisioning/scheduling (v1.0-v1.5 wording)."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.autoscaler.karpenter import judge, parse_nodeclaim, parse_nodepool
from kdiagnose.model.objects import Pod
from kdiagnose.model.requests import finish_pod
from kdiagnose.versions import dialect_for


def _pod(spec: dict[str, Any] | None = None, cpu: str = "1") -> Pod:
    body = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
        **(spec or {}),
    }
    pod = Pod({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": body})
    finish_pod(pod, dialect_for("v1.34.1"))
    return pod


def _np(
    spec: dict[str, Any], status: dict[str, Any] | None = None, labels: dict[str, str] | None = None
) -> Any:
    tpl: dict[str, Any] = {"spec": {"requirements": [], **spec.pop("template", {})}}
    if labels:
        tpl["metadata"] = {"labels": labels}
    return parse_nodepool(
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "np"},
            "spec": {"template": tpl, **spec},
            "status": status or {},
        }
    )


ON_DEMAND = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}


@pytest.mark.parametrize(
    ("nodepool", "pod", "kind", "message"),
    [
        pytest.param(
            _np(
                {"template": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]}}
            ),
            _pod(),
            "taint",
            "did not tolerate nvidia.com/gpu=true:NoSchedule",
            id="an untolerated template taint rejects the pod",
        ),
        pytest.param(
            _np({"template": {"taints": [{"key": "team", "value": "a", "effect": "PreferNoSchedule"}]}}),
            _pod(),
            "taint",
            "did not tolerate team=a:PreferNoSchedule",
            id="Karpenter checks PreferNoSchedule taints too (Taints.Tolerates checks every taint)",
        ),
        pytest.param(
            _np(
                {
                    "template": {
                        "startupTaints": [{"key": "ebs.csi.aws.com/agent-not-ready", "effect": "NoExecute"}]
                    }
                }
            ),
            _pod(),
            "",
            "",
            id="startup taints are not checked (they are removed before pods land)",
        ),
        pytest.param(
            _np({"template": {"requirements": [ON_DEMAND]}}),
            _pod({"nodeSelector": {"karpenter.sh/capacity-type": "spot"}}),
            "requirement",
            "incompatible requirements, key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [spot] "
            "not in karpenter.sh/capacity-type In [on-demand]",
            id="a well-known label both define must intersect",
        ),
        pytest.param(
            _np({}),
            _pod({"nodeSelector": {"team": "data"}}),
            "requirement",
            'incompatible requirements, label "team" does not have known values',
            id="a custom label the NodePool does not define is denied",
        ),
        pytest.param(
            _np({}, labels={"team": "data"}),
            _pod({"nodeSelector": {"team": "data"}}),
            "",
            "",
            id="a template label defines the custom label",
        ),
        pytest.param(
            _np({}),
            _pod(
                {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchExpressions": [
                                            {"key": "team", "operator": "NotIn", "values": ["x"]}
                                        ]
                                    }
                                ]
                            }
                        }
                    }
                }
            ),
            "",
            "",
            id="NotIn on an undefined custom label is allowed",
        ),
        pytest.param(
            _np({}),
            _pod({"nodeSelector": {"topology.kubernetes.io/zone": "us-west-2a"}}),
            "",
            "",
            id="a well-known label the NodePool leaves open is left to the instance types",
        ),
        pytest.param(
            _np(
                {
                    "template": {
                        "requirements": [
                            {
                                "key": "karpenter.k8s.aws/instance-generation",
                                "operator": "Gt",
                                "values": ["5"],
                            }
                        ]
                    }
                }
            ),
            _pod({"nodeSelector": {"karpenter.k8s.aws/instance-generation": "4"}}),
            "requirement",
            "incompatible requirements, key karpenter.k8s.aws/instance-generation, karpenter.k8s.aws/instance-generation "
            "In [4] not in karpenter.k8s.aws/instance-generation Gt [5]",
            id="Gt bounds are checked against In values",
        ),
        pytest.param(
            _np({"limits": {"cpu": "40"}}, {"resources": {"cpu": "36"}}),
            _pod(cpu="6"),
            "limit",
            'all available instance types exceed limits for nodepool "np"',
            id="a pod bigger than the limit's room is blocked by the limit",
        ),
        pytest.param(
            _np({"limits": {"cpu": "40"}}, {"resources": {"cpu": "36"}}),
            _pod(cpu="2"),
            "",
            "",
            id="a pod within the room is admitted (a smaller instance type may fit)",
        ),
    ],
)
def test_judge(nodepool: Any, pod: Pod, kind: str, message: str) -> None:
    j = judge(nodepool, pod)
    assert (j.kind, j.message) == (kind, message)


def test_limit_names_resource_usage_and_the_limit_that_admits_one_more_node() -> None:
    np = _np({"limits": {"cpu": "40", "memory": "160Gi"}}, {"resources": {"cpu": "36", "memory": "60Gi"}})
    j = judge(np, _pod(cpu="6"), node_size={"cpu": 15890})
    assert (j.resource, j.limit, j.usage, j.needed) == ("cpu", 40000, 36000, 51890)


def test_second_required_term_is_tried_when_the_first_is_incompatible() -> None:
    np = _np({"template": {"requirements": [ON_DEMAND]}})
    terms = [
        {"matchExpressions": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]},
        {
            "matchExpressions": [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}
            ]
        },
    ]
    pod = _pod(
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
                }
            }
        }
    )
    assert judge(np, pod).admits


@pytest.mark.parametrize(
    ("conditions", "deleting", "state"),
    [
        pytest.param({}, False, "launching", id="no Launched condition yet"),
        pytest.param({"Launched": "True", "Registered": "Unknown"}, False, "registering", id="launched"),
        pytest.param(
            {"Launched": "True", "Registered": "True", "Initialized": "False"},
            False,
            "initializing",
            id="registered",
        ),
        pytest.param(
            {"Launched": "True", "Registered": "True", "Initialized": "True"},
            False,
            "ready",
            id="initialized",
        ),
        pytest.param({"Launched": "True", "Drifted": "True"}, False, "disrupted (Drifted)", id="drifted"),
        pytest.param({"Launched": "True"}, True, "disrupted (being deleted)", id="deleting"),
    ],
)
def test_nodeclaim_state(conditions: dict[str, str], deleting: bool, state: str) -> None:
    meta: dict[str, Any] = {"name": "c", "labels": {"karpenter.sh/nodepool": "default"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T00:00:00Z"
    nc = parse_nodeclaim(
        {
            "metadata": meta,
            "status": {"conditions": [{"type": t, "status": s} for t, s in conditions.items()]},
        }
    )
    assert nc.state == state and nc.nodepool == "default"
