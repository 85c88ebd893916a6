"""KubeSchedulerConfiguration → Profiles: defaulting, multiPoint expansion, validation (kdiagnose.schedconfig)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kdiagnose.errors import ConfigError, InputError
from kdiagnose.exitcodes import ExitCode
from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.schedconfig import SchedulerConfig, load_scheduler_config, parse_scheduler_config
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.scheduler.profiles import default_profile
from kdiagnose.versions import dialect_for

V134 = dialect_for("v1.34.1")
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def parse(body: dict[str, Any], *, strict: bool = False, version: str = "v1.34.1") -> SchedulerConfig:
    return parse_scheduler_config(
        yaml.safe_dump({**HEADER, **body}), "sched.yaml", dialect_for(version), strict
    )


def rejected(body: dict[str, Any], *, strict: bool = True) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse(body, strict=strict)
    assert info.value.exit_code == ExitCode.USAGE
    assert int(info.value.exit_code) == 2
    assert "\n" not in str(info.value)
    assert "sched.yaml" in str(info.value)
    return info.value


def profile_of(
    plugins: dict[str, Any] | None = None, config: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    prof: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if plugins is not None:
        prof["plugins"] = plugins
    if config is not None:
        prof["pluginConfig"] = config
    return {"profiles": [prof]}


# ---------------------------------------------------------------- defaults


@pytest.mark.parametrize(
    "version",
    [
        pytest.param(
            "v1.31.8", id="v1.31: an empty configuration is the default profile (no DynamicResources)"
        ),
        pytest.param("v1.33.3", id="v1.33: an empty configuration is the default profile"),
        pytest.param(
            "v1.34.1", id="v1.34: an empty configuration is the default profile (DynamicResources on)"
        ),
        pytest.param(
            "v1.35.4", id="v1.35: an empty configuration is the default profile (DynamicResources scores)"
        ),
    ],
)
def test_empty_configuration_is_the_default_profile(version: str) -> None:
    cfg = parse({}, version=version)
    assert cfg.profiles == [default_profile(dialect_for(version))]
    assert cfg.profiles[0].is_default
    assert cfg.notes == []
    assert cfg.profiles[0].describe() == "profile default-scheduler: default plugins and weights"


def test_a_single_unnamed_profile_is_the_default_scheduler() -> None:
    cfg = parse(
        {"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1}}]}]}
    )
    (p,) = cfg.profiles
    assert p.scheduler_name == "default-scheduler"
    # Spelling out a default value is still the default profile.
    assert p.is_default


# ---------------------------------------------------------------- plugins: enabled / disabled / multiPoint


@pytest.mark.parametrize(
    ("plugins", "point", "want"),
    [
        pytest.param(
            {"filter": {"disabled": [{"name": "TaintToleration"}]}},
            "filter",
            [
                "NodeUnschedulable",
                "NodeName",
                "NodeAffinity",
                "NodePorts",
                "NodeResourcesFit",
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                "PodTopologySpread",
                "InterPodAffinity",
                "DynamicResources",
            ],
            id="TaintToleration disabled in filter leaves the other filters in order",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "TaintToleration"}]}},
            "score",
            [
                "TaintToleration",
                "NodeAffinity",
                "NodeResourcesFit",
                "VolumeBinding",
                "PodTopologySpread",
                "InterPodAffinity",
                "NodeResourcesBalancedAllocation",
                "ImageLocality",
            ],
            id="TaintToleration disabled in filter still scores",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "TaintToleration"}]}},
            "pre_score",
            [
                "NodeAffinity",
                "NodeResourcesFit",
                "VolumeBinding",
                "PodTopologySpread",
                "InterPodAffinity",
                "NodeResourcesBalancedAllocation",
            ],
            id="disabled in multiPoint removes the plugin from every point",
        ),
        pytest.param(
            {
                "filter": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "NodeResourcesFit"}, {"name": "NodeName"}],
                }
            },
            "filter",
            ["NodeResourcesFit", "NodeName"],
            id="disabled star keeps only the point's own plugins, in the order given",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "NodeAffinity"}]}},
            "filter",
            [
                "NodeAffinity",
                "NodeUnschedulable",
                "NodeName",
                "TaintToleration",
                "NodePorts",
                "NodeResourcesFit",
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                "PodTopologySpread",
                "InterPodAffinity",
                "DynamicResources",
            ],
            id="a multiPoint plugin re-enabled at a point moves to the front of that point",
        ),
        pytest.param(
            {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
            "post_filter",
            ["DynamicResources"],
            id="preemption disabled",
        ),
    ],
)
def test_extension_point_lists(plugins: dict[str, Any], point: str, want: list[str]) -> None:
    (p,) = parse(profile_of(plugins)).profiles
    got = list(p.score) if point == "score" else getattr(p, point)
    assert got == want
    assert not p.is_default


@pytest.mark.parametrize(
    ("plugins", "want"),
    [
        pytest.param(
            {
                "score": {
                    "enabled": [
                        {"name": "TaintToleration", "weight": 1},
                        {"name": "NodeAffinity", "weight": 10},
                    ]
                }
            },
            {
                "TaintToleration": 1,
                "NodeAffinity": 10,
                "NodeResourcesFit": 1,
                "VolumeBinding": 1,
                "PodTopologySpread": 2,
                "InterPodAffinity": 2,
                "NodeResourcesBalancedAllocation": 1,
                "ImageLocality": 1,
            },
            id="score weights given at the score point win over multiPoint and run first",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "TaintToleration"}]}},
            {
                "TaintToleration": 1,
                "NodeAffinity": 2,
                "NodeResourcesFit": 1,
                "VolumeBinding": 1,
                "PodTopologySpread": 2,
                "InterPodAffinity": 2,
                "NodeResourcesBalancedAllocation": 1,
                "ImageLocality": 1,
            },
            id="a score plugin re-enabled without a weight gets 1, not its default 3",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 5}]}},
            {
                "TaintToleration": 3,
                "NodeAffinity": 2,
                "NodeResourcesFit": 1,
                "VolumeBinding": 1,
                "PodTopologySpread": 2,
                "InterPodAffinity": 2,
                "NodeResourcesBalancedAllocation": 1,
                "ImageLocality": 5,
            },
            id="a multiPoint weight replaces the default in place",
        ),
        pytest.param(
            {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 4}]}},
            {"NodeResourcesFit": 4},
            id="only the configured score plugin",
        ),
    ],
)
def test_score_weights(plugins: dict[str, Any], want: dict[str, int]) -> None:
    (p,) = parse(profile_of(plugins)).profiles
    assert list(p.score.items()) == list(want.items())


# ---------------------------------------------------------------- plugin args defaulting


@pytest.mark.parametrize(
    ("name", "args", "want"),
    [
        pytest.param(
            "NodeResourcesFit",
            {"scoringStrategy": {"type": "MostAllocated"}},
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                }
            },
            id="MostAllocated without resources gets cpu and memory weight 1",
        ),
        pytest.param(
            "NodeResourcesFit",
            {"ignoredResources": ["example.com/seat"]},
            {
                "ignoredResources": ["example.com/seat"],
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                },
            },
            id="no scoring strategy means LeastAllocated cpu and memory",
        ),
        pytest.param(
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu"}, {"name": "intel.com/foo", "weight": 3}],
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                }
            },
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu", "weight": 1}, {"name": "intel.com/foo", "weight": 3}],
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                }
            },
            id="a resource weight left out means 1 and the shape is kept as given",
        ),
        pytest.param(
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "cpu"}, {"name": "nvidia.com/gpu", "weight": 0}]},
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]},
            id="BalancedAllocation weights 0 become 1",
        ),
        pytest.param(
            "PodTopologySpread",
            {},
            {"defaultingType": "System"},
            id="PodTopologySpread defaults to System defaulting",
        ),
        pytest.param(
            "InterPodAffinity",
            {"ignorePreferredTermsOfExistingPods": True},
            {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": True},
            id="hardPodAffinityWeight defaults to 1",
        ),
        pytest.param(
            "DefaultPreemption",
            {"minCandidateNodesAbsolute": 0},
            {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 0},
            id="an explicit zero is kept, the other field defaults",
        ),
        pytest.param(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            },
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                }
            },
            id="addedAffinity passes through",
        ),
    ],
)
def test_plugin_args_are_defaulted(name: str, args: dict[str, Any], want: dict[str, Any]) -> None:
    (p,) = parse(profile_of(config=[{"name": name, "args": args}])).profiles
    assert p.plugin_args == {name: want}


def test_describe_names_strategy_and_disabled_filter() -> None:
    cfg = parse(
        {
            "profiles": [
                {
                    "schedulerName": "bin-packing-scheduler",
                    "plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}},
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                    ],
                }
            ]
        }
    )
    assert cfg.profiles[0].describe() == (
        "profile bin-packing-scheduler: NodeResourcesFit MostAllocated (cpu:1, memory:1); TaintToleration filter disabled"
    )


# ---------------------------------------------------------------- several profiles


def test_two_profiles_keep_file_order_and_their_own_args() -> None:
    cfg = parse(
        {
            "profiles": [
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "bin-packing-scheduler",
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                    ],
                },
            ]
        }
    )
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "bin-packing-scheduler"]
    assert cfg.profiles[0].is_default
    assert not cfg.profiles[1].is_default
    assert cfg.profiles[1].plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    assert cfg.profile("bin-packing-scheduler") is cfg.profiles[1]


def _node(name: str, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _pod(name: str, scheduler: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]
    }
    if scheduler:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def test_replay_uses_each_pods_profile_and_a_disabled_taint_filter() -> None:
    cfg = parse(
        {
            "profiles": [
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "no-taints",
                    "plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}},
                },
            ]
        }
    )
    taint = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    objs = [_node("tainted", taint), _pod("a"), _pod("b", "no-taints"), _pod("c", "other-scheduler")]
    snap = build_snapshot([RawObject(o, "test") for o in objs], V134)
    sched = Scheduler(snap, cfg.profiles)
    by_name = {p.name: sched.diagnose(p) for p in snap.pending}
    assert not by_name["a"].scheduled
    assert by_name["b"].scheduled and by_name["b"].chosen == "tainted"
    assert by_name["c"].handled is False


# ---------------------------------------------------------------- out-of-tree plugins and extenders

COSCHEDULING = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            },
            "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 60}}],
        }
    ]
}


def test_unknown_plugin_is_reported_as_not_replayed() -> None:
    cfg = parse(COSCHEDULING)
    (p,) = cfg.profiles
    assert p.not_replayed == ["Coscheduling"]
    assert not p.is_default
    assert "Coscheduling" not in p.plugins()
    assert p.filter == default_profile(V134).filter
    assert len(cfg.notes) == 1
    assert "Coscheduling" in cfg.notes[0] and "Permit" in cfg.notes[0] and "15 minutes" in cfg.notes[0]


def test_unknown_plugin_is_rejected_like_kube_scheduler_when_strict() -> None:
    err = rejected(COSCHEDULING)
    assert str(err).endswith(
        "initializing profiles: creating profile for scheduler name default-scheduler: "
        'QueueSortPlugin "Coscheduling" does not exist'
    )


def test_unknown_plugin_in_multipoint_only_when_strict() -> None:
    err = rejected(profile_of({"multiPoint": {"enabled": [{"name": "Gang"}]}}))
    assert str(err).endswith('PreFilterPlugin "Gang" does not exist')


def test_extenders_are_noted_not_simulated() -> None:
    cfg = parse(
        {
            "extenders": [
                {
                    "urlPrefix": "http://ext:8888",
                    "filterVerb": "filter",
                    "prioritizeVerb": "prio",
                    "weight": 2,
                }
            ]
        }
    )
    assert cfg.extenders == ["http://ext:8888"]
    assert cfg.profiles[0].not_replayed == ["extender http://ext:8888"]
    assert any("http://ext:8888" in note and "not simulated" in note for note in cfg.notes)


def test_percentage_of_nodes_to_score_is_reported() -> None:
    cfg = parse({"percentageOfNodesToScore": 50})
    assert cfg.percentage_of_nodes_to_score == 50
    assert cfg.profiles[0].percentage_of_nodes_to_score == 50
    assert any(note.startswith("percentageOfNodesToScore 50") for note in cfg.notes)


# ---------------------------------------------------------------- rejected configurations


@pytest.mark.parametrize(
    ("body", "stage", "message"),
    [
        pytest.param(
            profile_of(
                config=[
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 101}],
                            }
                        },
                    }
                ]
            ),
            "build",
            'initializing plugin "NodeResourcesFit": scoringStrategy.resources[0].weight: Invalid value: 101: '
            "resource weight of cpu not in valid range (0, 100]",
            id="a resource weight above 100",
        ),
        pytest.param(
            profile_of(
                config=[
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 11}]},
                            }
                        },
                    }
                ]
            ),
            "build",
            'initializing plugin "NodeResourcesFit": scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]',
            id="a shape score above 10",
        ),
        pytest.param(
            profile_of(
                config=[
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {
                                    "shape": [
                                        {"utilization": 50, "score": 1},
                                        {"utilization": 50, "score": 2},
                                    ]
                                },
                            }
                        },
                    }
                ]
            ),
            "build",
            "scoringStrategy.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
            id="shape utilizations not increasing",
        ),
        pytest.param(
            profile_of(
                config=[{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Random"}}}]
            ),
            "build",
            'scoringStrategy.type: Unsupported value: "Random": supported values: "LeastAllocated", "MostAllocated", '
            '"RequestedToCapacityRatio"',
            id="an unknown scoring strategy",
        ),
        pytest.param(
            profile_of(config=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}]),
            "validate",
            "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
            id="hardPodAffinityWeight above 100",
        ),
        pytest.param(
            profile_of(
                config=[
                    {
                        "name": "NodeResourcesBalancedAllocation",
                        "args": {"resources": [{"name": "cpu", "weight": 2}]},
                    }
                ]
            ),
            "validate",
            "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1",
            id="BalancedAllocation weights must be 1",
        ),
        pytest.param(
            profile_of(
                config=[
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                    }
                ]
            ),
            "validate",
            "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same "
            "time as minCandidateNodesAbsolute, profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid "
            "value: 0: cannot be zero at the same time as minCandidateNodesPercentage]",
            id="both preemption minimums zero",
        ),
        pytest.param(
            profile_of(
                config=[
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultConstraints": [
                                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                            ]
                        },
                    }
                ]
            ),
            "validate",
            'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
            id="default constraints need defaultingType List",
        ),
        pytest.param(
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "validate",
            "profiles[1].schedulerName: Duplicate value: {}",
            id="two profiles with one name",
        ),
        pytest.param(
            {"profiles": [{"schedulerName": "a"}, {}]},
            "validate",
            "profiles[1].schedulerName: Required value",
            id="a second profile without a name",
        ),
        pytest.param(
            {"percentageOfNodesToScore": 101},
            "validate",
            "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
            id="percentageOfNodesToScore above 100",
        ),
        pytest.param(
            profile_of({"filter": {"enabled": [{"name": "ImageLocality"}]}}),
            "build",
            'plugin "ImageLocality" does not extend FilterPlugin plugin',
            id="a score-only plugin enabled as a filter",
        ),
        pytest.param(
            profile_of({"bind": {"disabled": [{"name": "*"}]}}),
            "build",
            'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
            id="no bind plugin",
        ),
        pytest.param(
            profile_of({"scroe": {}}),
            "load",
            'strict decoding error: unknown field "profiles[0].plugins.scroe"',
            id="an unknown field",
        ),
        pytest.param(
            profile_of(config=[{"name": "InterPodAffinity", "args": {"hardPodAffinityWieght": 2}}]),
            "load",
            'decoding args for plugin InterPodAffinity: strict decoding error: unknown field "hardPodAffinityWieght"',
            id="an unknown field in plugin args",
        ),
        pytest.param(
            profile_of({"score": {"enabled": [{"name": "NodeAffinity", "weight": "high"}]}}),
            "load",
            "json: cannot unmarshal string into Go struct field profiles[0].plugins.score.enabled[0].weight of type int32",
            id="a weight that is not a number",
        ),
        pytest.param(
            {"extenders": [{"urlPrefix": "http://x", "prioritizeVerb": "prioritize"}]},
            "validate",
            "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
            id="a prioritizing extender without weight",
        ),
    ],
)
def test_invalid_configurations_exit_2(body: dict[str, Any], stage: str, message: str) -> None:
    err = rejected(body, strict=False)
    assert f"({stage})" in str(err)
    assert str(err).endswith(message)


def test_nodes_resources_fit_args_of_a_disabled_plugin_are_not_checked() -> None:
    # Upstream validates NodeResourcesFit's args only when the plugin is built.
    body = profile_of(
        {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
        [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Random"}}}],
    )
    (p,) = parse(body).profiles
    assert "NodeResourcesFit" not in p.filter


def test_wrong_api_version_is_rejected() -> None:
    with pytest.raises(ConfigError, match='no kind "KubeSchedulerConfiguration" is registered for version'):
        parse_scheduler_config(
            "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
            "x.yaml",
            V134,
        )


def test_load_from_file_and_missing_file(tmp_path: Path) -> None:
    f = tmp_path / "sched.yaml"
    f.write_text(yaml.safe_dump({**HEADER, "profiles": [{"schedulerName": "custom"}]}))
    cfg = load_scheduler_config(str(f), V134)
    assert [p.scheduler_name for p in cfg.profiles] == ["custom"]
    with pytest.raises(InputError):
        load_scheduler_config(str(tmp_path / "absent.yaml"), V134)
