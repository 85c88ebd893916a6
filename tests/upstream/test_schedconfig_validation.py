"""Ported from pkg/scheduler/apis/config/validation/validation_pluginargs_test.go (v1.34) and
component-base ValidateLeaderElectionConfiguration, against kdiagnose.schedconfig.

Upstream compares field.Error Type and Field (ignoring BadValue/Detail) with a nil path; the table does the
same through `_fields`. A few cases also pin the full kube-scheduler text as `kdiagnose` prints it, with the
`profiles[0].pluginConfig[0].args` path of ValidateKubeSchedulerConfiguration. Feature-gate variants of
VolumeBinding `shape` with StorageCapacityScoring on are skipped (the gate is off in v1.31-v1.35).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kdiagnose.errors import ConfigError
from kdiagnose.schedconfig import parse_scheduler_config
from kdiagnose.schedconfig.fielderr import DUPLICATE, FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED
from kdiagnose.schedconfig.validation import ARGS_VALIDATORS, validate_fit_args
from kdiagnose.versions import dialect_for

V134 = dialect_for("v1.34.1")
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _fields(plugin: str, args: dict[str, Any]) -> list[tuple[str, str]]:
    if plugin == "NodeResourcesFit":
        errs = validate_fit_args("", args, V134)
    else:
        errs = ARGS_VALIDATORS[plugin]("", args, V134)
    return [(e.type, e.field) for e in errs]


def _dnc(key: str, skew: int = 1, when: str = "DoNotSchedule", **kw: Any) -> dict[str, Any]:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, **kw}


CASES = [
    # TestValidateDefaultPreemptionArgs
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        [],
        id="DefaultPreemption: valid args (default)",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
        [(INVALID, "minCandidateNodesPercentage")],
        id="DefaultPreemption: negative minCandidateNodesPercentage",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
        [(INVALID, "minCandidateNodesPercentage")],
        id="DefaultPreemption: minCandidateNodesPercentage over 100",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
        [(INVALID, "minCandidateNodesAbsolute")],
        id="DefaultPreemption: negative minCandidateNodesAbsolute",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
        [(INVALID, "minCandidateNodesPercentage"), (INVALID, "minCandidateNodesAbsolute")],
        id="DefaultPreemption: all zero",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
        [(INVALID, "minCandidateNodesPercentage"), (INVALID, "minCandidateNodesAbsolute")],
        id="DefaultPreemption: both negative",
    ),
    # TestValidateInterPodAffinityArgs
    pytest.param("InterPodAffinity", {"hardPodAffinityWeight": 10}, [], id="InterPodAffinity: valid args"),
    pytest.param(
        "InterPodAffinity",
        {"hardPodAffinityWeight": -1},
        [(INVALID, "hardPodAffinityWeight")],
        id="InterPodAffinity: hardPodAffinityWeight less than min",
    ),
    pytest.param(
        "InterPodAffinity",
        {"hardPodAffinityWeight": 101},
        [(INVALID, "hardPodAffinityWeight")],
        id="InterPodAffinity: hardPodAffinityWeight more than max",
    ),
    # TestValidatePodTopologySpreadArgs
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List", "defaultConstraints": [_dnc("node"), _dnc("zone", 2, "ScheduleAnyway")]},
        [],
        id="PodTopologySpread: valid config",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List", "defaultConstraints": [_dnc("node", -1)]},
        [(INVALID, "defaultConstraints[0].maxSkew")],
        id="PodTopologySpread: maxSkew less than zero",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List", "defaultConstraints": [_dnc("")]},
        [(REQUIRED, "defaultConstraints[0].topologyKey")],
        id="PodTopologySpread: empty topology key",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List", "defaultConstraints": [_dnc("node", when="")]},
        [(REQUIRED, "defaultConstraints[0].whenUnsatisfiable")],
        id="PodTopologySpread: whenUnsatisfiable is empty",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List", "defaultConstraints": [_dnc("node", when="unknown action")]},
        [(NOT_SUPPORTED, "defaultConstraints[0].whenUnsatisfiable")],
        id="PodTopologySpread: whenUnsatisfiable contains unsupported action",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List", "defaultConstraints": [_dnc("node"), _dnc("node", 2)]},
        [(DUPLICATE, "defaultConstraints[1]")],
        id="PodTopologySpread: duplicated constraints",
    ),
    pytest.param(
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [_dnc("key", labelSelector={"matchLabels": {"a": "b"}})],
        },
        [(FORBIDDEN, "defaultConstraints[0].labelSelector")],
        id="PodTopologySpread: label selector present",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "List"},
        [],
        id="PodTopologySpread: list default constraints, no constraints",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "System"},
        [],
        id="PodTopologySpread: system default constraints",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "unknown"},
        [(NOT_SUPPORTED, "defaultingType")],
        id="PodTopologySpread: wrong constraints",
    ),
    pytest.param(
        "PodTopologySpread",
        {"defaultingType": "System", "defaultConstraints": [_dnc("key")]},
        [(INVALID, "defaultingType")],
        id="PodTopologySpread: system default constraints, but has constraints",
    ),
    # TestValidateNodeResourcesBalancedAllocationArgs
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
        [],
        id="BalancedAllocation: valid config",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
        [(INVALID, "resources[0].weight")],
        id="BalancedAllocation: invalid config",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
        [(DUPLICATE, "resources[1].name")],
        id="BalancedAllocation: repeated resources",
    ),
    # TestValidateNodeAffinityArgs
    pytest.param("NodeAffinity", {}, [], id="NodeAffinity: empty"),
    pytest.param(
        "NodeAffinity",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "label-1", "operator": "In", "values": ["label-1-val"]}
                            ]
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]
                        },
                    }
                ],
            }
        },
        [],
        id="NodeAffinity: valid added affinity",
    ),
    pytest.param(
        "NodeAffinity",
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "invalid/label/key", "operator": "In", "values": ["label-1-val"]}
                            ]
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}
                            ]
                        },
                    }
                ],
            }
        },
        [
            (
                INVALID,
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                ".matchExpressions[0].key",
            ),
            (
                INVALID,
                "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values",
            ),
        ],
        id="NodeAffinity: invalid added affinity",
    ),
    # TestValidateVolumeBindingArgs (StorageCapacityScoring off)
    pytest.param("VolumeBinding", {"bindTimeoutSeconds": 0}, [], id="VolumeBinding: zero is a valid config"),
    pytest.param(
        "VolumeBinding", {"bindTimeoutSeconds": 10}, [], id="VolumeBinding: positive value is valid config"
    ),
    pytest.param(
        "VolumeBinding",
        {"bindTimeoutSeconds": -10},
        [(INVALID, "bindTimeoutSeconds")],
        id="VolumeBinding: negative value is invalid config",
    ),
    pytest.param(
        "VolumeBinding",
        {"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]},
        [(INVALID, "shape")],
        id="VolumeBinding: error if the shape is not nil when the feature is off",
    ),
    # TestValidateLeastAllocated / MostAllocated / RequestedToCapacityRatio ScoringStrategy (v1.34 paths)
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 10}],
            }
        },
        [],
        id="Fit LeastAllocated: multi valid resources",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
        [(INVALID, "scoringStrategy.resources[0].weight")],
        id="Fit LeastAllocated: weight less than min",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
        [(INVALID, "scoringStrategy.resources[0].weight")],
        id="Fit MostAllocated: weight greater than max",
    ),
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": 101}],
            }
        },
        [(INVALID, "scoringStrategy.resources[0].weight"), (INVALID, "scoringStrategy.resources[1].weight")],
        id="Fit MostAllocated: multi invalid resources",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}},
        [(REQUIRED, "scoringStrategy.shape")],
        id="Fit RequestedToCapacityRatio: no shapes",
    ),
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 10, "score": 3}, {"utilization": 10, "score": 3}]
                },
            }
        },
        [(INVALID, "scoringStrategy.shape[1].utilization")],
        id="Fit RequestedToCapacityRatio: duplicated utilization values",
    ),
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [
                        {"utilization": 10, "score": 3},
                        {"utilization": 20, "score": 3},
                        {"utilization": 15, "score": 3},
                    ]
                },
            }
        },
        [(INVALID, "scoringStrategy.shape[2].utilization")],
        id="Fit RequestedToCapacityRatio: non-increasing utilization values",
    ),
    pytest.param(
        "NodeResourcesFit",
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 11}]},
            }
        },
        [(INVALID, "scoringStrategy.shape[0].utilization"), (INVALID, "scoringStrategy.shape[0].score")],
        id="Fit RequestedToCapacityRatio: utilization and score greater than max",
    ),
]


@pytest.mark.parametrize(("plugin", "args", "want"), CASES)
def test_plugin_args_validation(plugin: str, args: dict[str, Any], want: list[tuple[str, str]]) -> None:
    assert _fields(plugin, args) == want


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        pytest.param(
            {"ignoredResources": ["longvalue" + "a" * 64]},
            "name part must be no more than 63 characters",
            id="IgnoredResources: too long value",
        ),
        pytest.param(
            {"ignoredResources": ["example.com/"]},
            "name part must be non-empty",
            id="IgnoredResources: name is empty",
        ),
        pytest.param(
            {"ignoredResources": ["example.com/aaa/bbb"]},
            "a qualified name must consist of alphanumeric characters",
            id="IgnoredResources: name has too many slash",
        ),
        pytest.param({"ignoredResources": ["example.com"]}, "", id="IgnoredResources: valid args"),
        pytest.param({"ignoredResourceGroups": ["example.com"]}, "", id="IgnoredResourceGroups: valid args"),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/"]},
            "name part must be non-empty",
            id="IgnoredResourceGroups: illegal args",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["a" * 64]},
            "name part must be no more than 63 characters",
            id="IgnoredResourceGroups: name is too long",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/aa"]},
            "resource group name can't contain '/'",
            id="IgnoredResourceGroups: name cannot be contain slash",
        ),
    ],
)
def test_validate_fit_args(args: dict[str, Any], expect: str) -> None:
    errs = validate_fit_args("", args, V134)
    text = ", ".join(str(e) for e in errs)
    if expect:
        assert expect in text
    else:
        assert errs == []


# ---------------------------------------------------------------- full texts (kube-scheduler's format)


def _rejected(body: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_scheduler_config(yaml.safe_dump({**HEADER, **body}), "s.yaml", V134, False)
    return str(info.value)


def _affinity(aff: dict[str, Any]) -> dict[str, Any]:
    return {
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": aff}}],
            }
        ]
    }


ARGS = "profiles[0].pluginConfig[0].args.addedAffinity"
QNAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            _affinity(
                {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["node-1", "node-2"]}
                                ]
                            },
                        }
                    ]
                }
            ),
            f"{ARGS}.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid value: "
            '["node-1","node-2"]: must have one element',
            id="matchFields with two values: nodeSelectorRequirementsAsFieldSelector text, no .preference in the path",
        ),
        pytest.param(
            _affinity(
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.labels", "operator": "Exists"}]}
                        ]
                    }
                }
            ),
            f"{ARGS}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].operator: "
            'Unsupported value: "Exists": supported values: "In", "NotIn"',
            id="matchFields with Exists: the operator is rejected, the key is not checked",
        ),
        pytest.param(
            _affinity(
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "a/b/c", "operator": "In", "values": ["x"]}]}
                        ]
                    }
                }
            ),
            f"{ARGS}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: "
            "Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
            "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
            "subdomain prefix and '/' (e.g. 'example.com/MyName')",
            id="label key with two slashes",
        ),
        pytest.param(
            _affinity(
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]
                    }
                }
            ),
            f"{ARGS}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: "
            "Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
            id="In without values: labels.NewRequirement text",
        ),
        pytest.param(
            _affinity(
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["a"]}]}
                        ]
                    }
                }
            ),
            f"{ARGS}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: "
            'Invalid value: ["a"]: values set must be empty for exists and does not exist',
            id="Exists with values",
        ),
        pytest.param(
            _affinity(
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["many"]}]}
                        ]
                    }
                }
            ),
            f"{ARGS}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
            ".values[0]: Invalid value: \"many\": for 'Gt', 'Lt' operators, the value must be an integer",
            id="Gt with a non-integer",
        ),
        pytest.param(
            _affinity(
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a b"]}]}
                        ]
                    }
                }
            ),
            f"{ARGS}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
            '.values[0][zone]: Invalid value: "a b": a valid label must be an empty string or consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            id="invalid label value: path values[i][key]",
        ),
        pytest.param(
            _affinity(
                {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "Equals", "values": ["a"]}]}
                        ]
                    }
                }
            ),
            f"{ARGS}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: "
            'Unsupported value: "Equals": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
            id="unknown operator",
        ),
        pytest.param(
            {"leaderElection": {"leaseDuration": "5s"}},
            'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
            id="leaseDuration not above the default renewDeadline (the bad value printed is RenewDeadline)",
        ),
        pytest.param(
            {"leaderElection": {"retryPeriod": "-1s"}},
            'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero',
            id="negative retryPeriod",
        ),
        pytest.param(
            {"profiles": [{"schedulerName": "default-scheduler", "percentageOfNodesToScore": -1}]},
            "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
            id="profile percentageOfNodesToScore below 0",
        ),
    ],
)
def test_rejected_configuration_texts(body: dict[str, Any], message: str) -> None:
    assert _rejected(body).endswith(f"(validate): {message}")


def test_leader_election_off_skips_the_duration_checks() -> None:
    cfg = parse_scheduler_config(
        yaml.safe_dump({**HEADER, "leaderElection": {"leaderElect": False, "leaseDuration": "1s"}}),
        "s.yaml",
        V134,
        False,
    )
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]


def test_zero_weight_preferred_terms_are_not_validated() -> None:
    # NewPreferredSchedulingTerms skips terms of weight 0 before parsing them.
    cfg = parse_scheduler_config(
        yaml.safe_dump(
            {
                **HEADER,
                **_affinity(
                    {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 0,
                                "preference": {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}
                                    ]
                                },
                            }
                        ]
                    }
                ),
            }
        ),
        "s.yaml",
        V134,
        False,
    )
    assert cfg.profiles
