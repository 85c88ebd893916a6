"""Ported from pkg/scheduler/apis/config/validation/validation_test.go TestValidateKubeSchedulerConfigurationV1
(v1.34), against kdiagnose.schedconfig.

Upstream validates an internal, undefaulted configuration and compares Type and Field; here each case is
a configuration file body that goes through decoding and defaulting first (as `kube-scheduler --config`
does), the (type, field) pairs are compared like upstream, and the full one-line message is checked
against the text ValidateKubeSchedulerConfiguration's field errors print (validation.go,
apimachinery field/errors.go). Plugin-args validation is in test_schedconfig_validation.py.

Cases that cannot come from a file: "invalid-plugin-args" (an args object of another plugin's type; a
file's args are decoded by plugin name), "bad-resource-name-not-set" / "bad-resource-namespace-not-set"
(defaulting fills empty names in; ported as "accepted after defaulting").
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from kdiagnose.errors import ConfigError
from kdiagnose.schedconfig import _default_profiles, parse_scheduler_config
from kdiagnose.schedconfig.decode import decode_config
from kdiagnose.schedconfig.fielderr import DUPLICATE, INVALID, REQUIRED
from kdiagnose.schedconfig.validation import validate_configuration
from kdiagnose.versions import dialect_for

V134 = dialect_for("v1.34.1")
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

Body = dict[str, Any]


def valid_config() -> Body:
    """validConfig of the upstream test, as a file."""
    return {
        "parallelism": 8,
        "clientConnection": {
            "acceptContentTypes": "application/json",
            "contentType": "application/json",
            "qps": 10,
            "burst": 10,
        },
        "leaderElection": {
            "resourceLock": "leases",
            "leaderElect": True,
            "leaseDuration": "30s",
            "renewDeadline": "15s",
            "retryPeriod": "5s",
            "resourceNamespace": "name",
            "resourceName": "name",
        },
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 1,
        "profiles": [
            {
                "schedulerName": "me",
                "percentageOfNodesToScore": 35,
                "plugins": {
                    "queueSort": {"enabled": [{"name": "CustomSort"}]},
                    "score": {"disabled": [{"name": "*"}]},
                },
                "pluginConfig": [
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
                    }
                ],
            },
            {
                "schedulerName": "other",
                "percentageOfNodesToScore": 35,
                "plugins": {
                    "queueSort": {"enabled": [{"name": "CustomSort"}]},
                    "bind": {"enabled": [{"name": "CustomBind"}]},
                },
            },
        ],
        "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
    }


def mutate(change: Callable[[Body], None]) -> Body:
    body = copy.deepcopy(valid_config())
    change(body)
    return body


def _set(path: str, value: Any) -> Callable[[Body], None]:
    """A change that sets a dotted path (list indexes as numbers) to value."""

    def change(body: Body) -> None:
        keys = path.split(".")
        node: Any = body
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = keys[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


def _drop_profile0_plugins(body: Body) -> None:
    del body["profiles"][0]["plugins"]


def _mismatch_queue_sort(body: Body) -> None:
    body["profiles"] = [
        {
            "schedulerName": "me",
            "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
            "pluginConfig": [{"name": "PrioritySort"}],
        },
        {
            "schedulerName": "other",
            "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
            "pluginConfig": [{"name": "CustomSort"}],
        },
    ]


def _duplicate_bind(body: Body) -> None:
    body["extenders"][0]["bindVerb"] = "foo"
    body["extenders"].append({"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1})


def _valid_plugins(body: Body) -> None:
    body["profiles"][0]["plugins"]["score"]["enabled"] = [{"name": "PodTopologySpread", "weight": 2}]


QS = '{"Enabled":[{"Name":"%s","Weight":0}],"Disabled":null}'

CASES = [
    pytest.param(valid_config(), [], "", id="good"),
    pytest.param(
        mutate(_set("parallelism", 0)),
        [(INVALID, "parallelism")],
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
        id="bad-parallelism-invalid-value",
    ),
    pytest.param(
        mutate(_set("leaderElection.resourceName", "")),
        [],
        "",
        id="bad-resource-name-not-set: accepted after defaulting (SetDefaults fills kube-scheduler)",
    ),
    pytest.param(
        mutate(_set("leaderElection.resourceNamespace", "")),
        [],
        "",
        id="bad-resource-namespace-not-set: accepted after defaulting (SetDefaults fills kube-system)",
    ),
    pytest.param(
        mutate(_set("leaderElection.resourceLock", "configmap")),
        [(INVALID, "leaderElection.resourceLock")],
        'leaderElection.resourceLock: Invalid value: "configmap": resourceLock value must be "leases"',
        id="bad-resource-lock-not-leases",
    ),
    pytest.param(
        mutate(_set("percentageOfNodesToScore", 101)),
        [(INVALID, "percentageOfNodesToScore")],
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        id="bad-percentage-of-nodes-to-score",
    ),
    pytest.param(
        mutate(_set("percentageOfNodesToScore", -1)),
        [(INVALID, "percentageOfNodesToScore")],
        "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        id="negative-percentage-of-nodes-to-score",
    ),
    pytest.param(
        mutate(_set("profiles.1.schedulerName", "")),
        [(REQUIRED, "profiles[1].schedulerName")],
        "profiles[1].schedulerName: Required value",
        id="scheduler-name-not-set",
    ),
    pytest.param(
        mutate(_set("profiles.0.schedulerName", "other")),
        [(DUPLICATE, "profiles[1].schedulerName")],
        # The bad value is a *field.Path: json.Marshal of its unexported fields.
        "profiles[1].schedulerName: Duplicate value: {}",
        id="repeated-scheduler-name",
    ),
    pytest.param(
        mutate(_set("profiles.1.percentageOfNodesToScore", 101)),
        [(INVALID, "profiles[1].percentageOfNodesToScore")],
        "profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        id="greater-than-100-profile-percentage-of-nodes-to-score",
    ),
    pytest.param(
        mutate(_set("profiles.1.percentageOfNodesToScore", -1)),
        [(INVALID, "profiles[1].percentageOfNodesToScore")],
        "profiles[1].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        id="negative-profile-percentage-of-nodes-to-score",
    ),
    pytest.param(
        mutate(_set("profiles.1.plugins.queueSort.enabled", [{"name": "AnotherSort"}])),
        [(INVALID, "profiles[1].plugins.queueSort")],
        f"profiles[1].plugins.queueSort: Invalid value: {QS % 'AnotherSort'}: must be the same for all profiles",
        id="different-queue-sort",
    ),
    pytest.param(
        mutate(_drop_profile0_plugins),
        [(INVALID, "profiles[1].plugins.queueSort")],
        f"profiles[1].plugins.queueSort: Invalid value: {QS % 'CustomSort'}: must be the same for all profiles",
        id="one-empty-queue-sort",
    ),
    pytest.param(
        mutate(_set("extenders.0.weight", -1)),
        [(INVALID, "extenders[0].weight")],
        "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it",
        id="extender-negative-weight",
    ),
    pytest.param(
        mutate(
            _set(
                "extenders.0.managedResources",
                [
                    {"name": "example.com/foo", "ignoredByScheduler": False},
                    {"name": "example.com/foo", "ignoredByScheduler": False},
                ],
            )
        ),
        [(INVALID, "extenders[0].managedResources[1].name")],
        'extenders[0].managedResources[1].name: Invalid value: "example.com/foo": duplicate extender managed '
        "resource name",
        id="extender-duplicate-managed-resources",
    ),
    pytest.param(
        mutate(_duplicate_bind),
        [(INVALID, "extenders")],
        'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind',
        id="extender-duplicate-bind",
    ),
    pytest.param(
        mutate(
            _set(
                "profiles.0.pluginConfig",
                [
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100},
                    }
                ],
            )
        ),
        [(INVALID, "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage")],
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: not in valid range [0, 100]",
        id="invalid-node-percentage",
    ),
    pytest.param(
        mutate(_set("profiles.0.pluginConfig", [{"name": "config"}, {"name": "config"}])),
        [(DUPLICATE, "profiles[0].pluginConfig[1]")],
        'profiles[0].pluginConfig[1]: Duplicate value: "config"',
        id="duplicated-plugin-config",
    ),
    pytest.param(
        mutate(_mismatch_queue_sort),
        [(INVALID, "profiles[1].plugins.queueSort")],
        f"profiles[1].plugins.queueSort: Invalid value: {QS % 'CustomSort'}: must be the same for all profiles",
        id="mismatch-queue-sort",
    ),
    pytest.param(mutate(_valid_plugins), [], "", id="valid-plugins"),
]


def _errors(body: Body) -> list[tuple[str, str]]:
    cfg = decode_config({**HEADER, **body})
    errs = validate_configuration(cfg, _default_profiles(cfg, V134), V134)
    return [(e.type, e.field) for e in errs]


@pytest.mark.parametrize(("body", "want", "message"), CASES)
def test_validate_kube_scheduler_configuration_v1(
    body: Body, want: list[tuple[str, str]], message: str
) -> None:
    assert _errors(body) == want
    if message:
        with pytest.raises(ConfigError) as info:
            parse_scheduler_config(yaml.safe_dump({**HEADER, **body}), "s.yaml", V134, False)
        assert str(info.value) == f"scheduler configuration s.yaml rejected (validate): {message}"


# ---------------------------------------------------------------- beyond the upstream table (validation.go)


def _two_profiles(first: Body, second: Body) -> Body:
    return {"profiles": [{"schedulerName": "a", **first}, {"schedulerName": "b", **second}]}


MORE = [
    pytest.param(
        {"parallelism": 0, "percentageOfNodesToScore": 101},
        "[parallelism: Invalid value: 0: should be an integer value greater than zero, "
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]]",
        id="two errors aggregate as [a, b] in validation order",
    ),
    pytest.param(
        {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}, {"schedulerName": "a"}]},
        "[profiles[1].schedulerName: Duplicate value: {}, profiles[2].schedulerName: Duplicate value: {}]",
        id="three profiles with one name: a duplicate error for each repeat",
    ),
    pytest.param(
        {"profiles": [{}, {"schedulerName": "b"}]},
        "profiles[0].schedulerName: Required value",
        id="a second profile means the first gets no default name",
    ),
    pytest.param(
        _two_profiles(
            {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}},
            {
                "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                "pluginConfig": [{"name": "PrioritySort", "args": {"a": 1}}],
            },
        ),
        'profiles[1].pluginConfig.args: Invalid value: {"a":1}: queueSort must be the same for all profiles',
        id="queue sort args must be the same for all profiles",
    ),
    pytest.param(
        _two_profiles(
            {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "Other"}]}}},
            {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "Other"}]}}},
        ),
        "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled",
        id="two queue sort plugins in the first profile",
    ),
    pytest.param(
        _two_profiles({}, {"plugins": {"queueSort": {"disabled": [{"name": "PrioritySort"}]}}}),
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":[{"Name":"PrioritySort",'
        '"Weight":0}]}: must be the same for all profiles',
        id="a queue sort disabled in one profile only differs too",
    ),
    pytest.param(
        {"podInitialBackoffSeconds": 0},
        "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
        id="podInitialBackoffSeconds zero",
    ),
    pytest.param(
        {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
        "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
        id="podMaxBackoffSeconds below podInitialBackoffSeconds",
    ),
    pytest.param(
        {"clientConnection": {"burst": -1}},
        "clientConnection.burst: Invalid value: -1: must be non-negative",
        id="negative clientConnection burst",
    ),
    pytest.param(
        {"extenders": [{"urlPrefix": "http://x", "managedResources": [{"name": "kubernetes.io/foo"}]}]},
        'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an invalid extended '
        "resource name",
        id="extender managed resource in the kubernetes.io domain",
    ),
    pytest.param(
        {
            "profiles": [
                {
                    "schedulerName": "a",
                    "plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}},
                }
            ]
        },
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        id="a removed in-tree volume limits plugin at an extension point",
    ),
    pytest.param(
        {"profiles": [{"schedulerName": "a", "pluginConfig": [{"name": "AzureDiskLimits"}]}]},
        'profiles[0].pluginConfig[0]: Invalid value: "AzureDiskLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        id="a removed in-tree volume limits plugin in pluginConfig",
    ),
]


@pytest.mark.parametrize(("body", "message"), MORE)
def test_validation_texts(body: Body, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_scheduler_config(yaml.safe_dump({**HEADER, **body}), "s.yaml", V134, False)
    assert str(info.value) == f"scheduler configuration s.yaml rejected (validate): {message}"


def test_queue_sort_args_equal_in_both_profiles_are_accepted() -> None:
    body = _two_profiles(
        {
            "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
            "pluginConfig": [{"name": "PrioritySort", "args": {"a": 1}}],
        },
        {
            "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
            "pluginConfig": [{"name": "PrioritySort", "args": {"a": 1}}],
        },
    )
    assert _errors(body) == []
