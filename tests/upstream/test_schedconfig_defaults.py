"""Ported from pkg/scheduler/apis/config/v1/default_plugins_test.go and defaults_test.go (v1.34).

TestApplyFeatureGates (getDefaultPlugins per release), TestMergePlugins (mergePlugins/mergePluginSet),
TestSchedulerDefaults (SetDefaults_KubeSchedulerConfiguration: profile names, merged plugins, the
pluginConfig list: explicit entries first, then defaulted args of every enabled in-tree plugin in name
order) and TestPluginArgsDefaults (SetDefaults_<Name>Args), against kdiagnose.schedconfig.defaults.

Skipped: feature-gate variants whose gate is off in every release kdiagnose knows (StorageCapacityScoring's
default VolumeBinding shape, DRADeviceBindingConditions' bindingTimeout, NodeDeclaredFeatures), the
runtime.Unknown args case (a file's args for an in-tree plugin are always decoded into its Args type) and
the fields kdiagnose does not keep (clientConnection, debugging, leader-election defaults).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.schedconfig import _default_profiles
from kdiagnose.schedconfig.decode import decode_config
from kdiagnose.schedconfig.defaults import (
    POINTS,
    PluginRef,
    Plugins,
    PluginSet,
    default_args,
    default_plugins,
    merge_plugins,
)
from kdiagnose.versions import dialect_for

V131 = dialect_for("v1.31.8")
V133 = dialect_for("v1.33.3")
V134 = dialect_for("v1.34.1")
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def ps(*enabled: str | tuple[str, int], disabled: tuple[str, ...] = ()) -> PluginSet:
    """A PluginSet from names or (name, weight) pairs; an unset weight is 0 (nil)."""
    refs = [PluginRef(e) if isinstance(e, str) else PluginRef(e[0], e[1]) for e in enabled]
    return PluginSet(enabled=refs, disabled=list(disabled))


def plugins(**points: PluginSet) -> Plugins:
    out: Plugins = {p: PluginSet() for p in POINTS}
    out.update(points)
    return out


# ---------------------------------------------------------------- TestApplyFeatureGates

_BASE = [
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
]


def _with_dra(weight: int) -> list[tuple[str, int]]:
    i = [n for n, _ in _BASE].index("DefaultPreemption")
    return [*_BASE[:i], ("DynamicResources", weight), *_BASE[i:]]


@pytest.mark.parametrize(
    ("version", "want"),
    [
        pytest.param(
            "v1.31.8", _BASE, id="Feature gates disabled (v1.31: DynamicResourceAllocation beta, off)"
        ),
        pytest.param(
            "v1.33.3", _BASE, id="Feature gates disabled (v1.33: DynamicResourceAllocation beta, off)"
        ),
        pytest.param(
            "v1.34.1",
            _with_dra(0),
            id="Feature gate DynamicResourceAllocation enabled (v1.34 GA): before DefaultPreemption, no weight",
        ),
        pytest.param(
            "v1.35.4", _with_dra(2), id="DynamicResourceAllocation enabled (v1.35): DynamicResources weight 2"
        ),
    ],
)
def test_apply_feature_gates(version: str, want: list[tuple[str, int]]) -> None:
    got = default_plugins(dialect_for(version))
    assert [(p.name, p.weight) for p in got["multiPoint"].enabled] == want
    assert got["multiPoint"].disabled == []
    assert all(got[p] == PluginSet() for p in POINTS if p != "multiPoint")


# ---------------------------------------------------------------- TestMergePlugins

MERGE_CASES = [
    pytest.param(
        plugins(filter=ps("CustomPlugin")),
        plugins(filter=ps("DefaultPlugin1", "DefaultPlugin2")),
        plugins(filter=ps("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")),
        id="AppendCustomPlugin",
    ),
    pytest.param(
        plugins(filter=ps("CustomPlugin", "DefaultPlugin2", disabled=("DefaultPlugin2",))),
        plugins(filter=ps("DefaultPlugin1", "DefaultPlugin2")),
        plugins(filter=ps("DefaultPlugin1", "CustomPlugin", "DefaultPlugin2", disabled=("DefaultPlugin2",))),
        id="InsertAfterDefaultPlugins2",
    ),
    pytest.param(
        plugins(filter=ps("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2", disabled=("*",))),
        plugins(filter=ps("DefaultPlugin1", "DefaultPlugin2")),
        plugins(filter=ps("CustomPlugin", "DefaultPlugin1", "DefaultPlugin2", disabled=("*",))),
        id="InsertBeforeAllPlugins",
    ),
    pytest.param(
        plugins(filter=ps("DefaultPlugin2", "DefaultPlugin1", disabled=("*",))),
        plugins(filter=ps("DefaultPlugin1", "DefaultPlugin2")),
        plugins(filter=ps("DefaultPlugin2", "DefaultPlugin1", disabled=("*",))),
        id="ReorderDefaultPlugins",
    ),
    pytest.param(
        None,
        plugins(filter=ps("DefaultPlugin1", "DefaultPlugin2")),
        plugins(filter=ps("DefaultPlugin1", "DefaultPlugin2")),
        id="ApplyNilCustomPlugin",
    ),
    pytest.param(
        plugins(filter=ps(("Plugin1", 2), ("Plugin3", 3))),
        plugins(filter=ps("Plugin1", "Plugin2", "Plugin3")),
        plugins(filter=ps(("Plugin1", 2), "Plugin2", ("Plugin3", 3))),
        id="CustomPluginOverrideDefaultPlugin",
    ),
    pytest.param(
        plugins(filter=ps(("Plugin2", 2), ("Plugin1", 1))),
        plugins(filter=ps("Plugin1", "Plugin2", "Plugin3")),
        plugins(filter=ps(("Plugin1", 1), ("Plugin2", 2), "Plugin3")),
        id="OrderPreserveAfterOverride",
    ),
    pytest.param(
        plugins(filter=ps("Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4))),
        plugins(filter=ps("Plugin1", "Plugin2", "Plugin3")),
        # The last repetition replaces the default in place; the earlier one is appended.
        plugins(filter=ps("Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2))),
        id="RepeatedCustomPlugin",
    ),
    pytest.param(
        plugins(multiPoint=ps("CustomPlugin")),
        plugins(multiPoint=ps("DefaultPlugin1", "DefaultPlugin2")),
        plugins(multiPoint=ps("DefaultPlugin1", "DefaultPlugin2", "CustomPlugin")),
        id="Append custom MultiPoint plugin",
    ),
    pytest.param(
        plugins(
            multiPoint=ps("CustomPlugin", "CustomPlugin2", disabled=("DefaultPlugin2",)),
            score=ps(disabled=("CustomPlugin2",)),
        ),
        plugins(multiPoint=ps("DefaultPlugin1", "DefaultPlugin2")),
        plugins(
            multiPoint=ps("DefaultPlugin1", "CustomPlugin", "CustomPlugin2", disabled=("DefaultPlugin2",)),
            score=ps(disabled=("CustomPlugin2",)),
        ),
        id="Append disabled Multipoint plugins",
    ),
    pytest.param(
        plugins(multiPoint=ps(("DefaultPlugin", 5))),
        plugins(multiPoint=ps("DefaultPlugin")),
        plugins(multiPoint=ps(("DefaultPlugin", 5))),
        id="override default MultiPoint plugins with custom value",
    ),
    pytest.param(
        plugins(multiPoint=ps("CustomPlugin")),
        plugins(multiPoint=ps("DefaultPlugin", disabled=("DefaultPlugin2",))),
        plugins(multiPoint=ps("DefaultPlugin", "CustomPlugin", disabled=("DefaultPlugin2",))),
        id="disabled MultiPoint plugin in default set",
    ),
    pytest.param(
        plugins(multiPoint=ps("CustomPlugin")),
        plugins(multiPoint=ps("DefaultPlugin"), score=ps(disabled=("DefaultPlugin2",))),
        plugins(multiPoint=ps("DefaultPlugin", "CustomPlugin"), score=ps(disabled=("DefaultPlugin2",))),
        id="disabled MultiPoint plugin in default set for specific extension point",
    ),
    pytest.param(
        plugins(multiPoint=ps(disabled=("DefaultPlugin",))),
        plugins(multiPoint=ps("DefaultPlugin")),
        plugins(multiPoint=ps(disabled=("DefaultPlugin",))),
        id="multipoint with only disabled gets merged",
    ),
]


@pytest.mark.parametrize(("custom", "default", "want"), MERGE_CASES)
def test_merge_plugins(custom: Plugins | None, default: Plugins, want: Plugins) -> None:
    assert merge_plugins(default, custom) == want


# ---------------------------------------------------------------- TestSchedulerDefaults


def _resources() -> list[dict[str, Any]]:
    return [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def _default_configs(dra: bool) -> list[dict[str, Any]]:
    """defaults_test.go `pluginConfigs`: one entry per enabled plugin with an Args kind, by name."""
    out: list[dict[str, Any]] = [
        {
            "name": "DefaultPreemption",
            "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        }
    ]
    if dra:
        out.append({"name": "DynamicResources", "args": {"filterTimeout": "10s"}})
    out += [
        {
            "name": "InterPodAffinity",
            "args": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
        },
        {"name": "NodeAffinity", "args": {}},
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": _resources()}},
        {
            "name": "NodeResourcesFit",
            "args": {"scoringStrategy": {"type": "LeastAllocated", "resources": _resources()}},
        },
        {"name": "PodTopologySpread", "args": {"defaultingType": "System"}},
        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 600}},
    ]
    return out


def _defaulted(body: dict[str, Any], version: str = "v1.34.1") -> list[dict[str, Any]]:
    return _default_profiles(decode_config({**HEADER, **body}), dialect_for(version))


def _configs(prof: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": c["name"], "args": c["args"]} for c in prof["pluginConfig"]]


@pytest.mark.parametrize(
    ("body", "version", "dra"),
    [
        pytest.param({}, "v1.34.1", True, id="empty config"),
        pytest.param({"profiles": [{}]}, "v1.34.1", True, id="no scheduler name"),
        pytest.param({"parallelism": 16}, "v1.34.1", True, id="Prallelism with no port"),
        pytest.param({"parallelism": 8}, "v1.34.1", True, id="set non default parallelism"),
        pytest.param(
            {"delayCacheUntilActive": True}, "v1.34.1", True, id="set non default delayCacheUntilActive"
        ),
        pytest.param({}, "v1.35.4", True, id="default DynamicResources (v1.35: filterTimeout only)"),
        pytest.param({}, "v1.33.3", False, id="v1.33: no DynamicResources args (plugin not enabled)"),
        pytest.param({}, "v1.31.8", False, id="v1.31: no DynamicResources args (plugin not enabled)"),
    ],
)
def test_scheduler_defaults_single_profile(body: dict[str, Any], version: str, dra: bool) -> None:
    (prof,) = _defaulted(body, version)
    assert prof["schedulerName"] == "default-scheduler"
    assert prof["percentageOfNodesToScore"] is None
    assert prof["plugins"] == default_plugins(dialect_for(version))
    assert _configs(prof) == _default_configs(dra)


def test_scheduler_defaults_two_profiles() -> None:
    # "two profiles": only a single profile gets the default name; explicit configs come first.
    first, second = _defaulted(
        {
            "parallelism": 16,
            "profiles": [
                {"pluginConfig": [{"name": "FooPlugin"}]},
                {
                    "schedulerName": "custom-scheduler",
                    "plugins": {
                        "bind": {"enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}
                    },
                },
            ],
        }
    )
    assert first["schedulerName"] == ""
    assert first["plugins"] == default_plugins(V134)
    assert _configs(first) == [{"name": "FooPlugin", "args": None}, *_default_configs(True)]
    assert second["schedulerName"] == "custom-scheduler"
    assert second["plugins"] == {
        **default_plugins(V134),
        "bind": ps("BarPlugin", disabled=("DefaultBinder",)),
    }
    assert _configs(second) == _default_configs(True)


@pytest.mark.parametrize(
    ("body", "global_pct", "profile_pct"),
    [
        pytest.param(
            {"percentageOfNodesToScore": 50}, 50, None, id="set non default global percentageOfNodesToScore"
        ),
        pytest.param(
            {"profiles": [{"percentageOfNodesToScore": 50}]},
            None,
            50,
            id="set non default profile percentageOfNodesToScore",
        ),
        pytest.param(
            {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
            10,
            50,
            id="set non default global and profile percentageOfNodesToScore",
        ),
    ],
)
def test_scheduler_defaults_percentage(
    body: dict[str, Any], global_pct: int | None, profile_pct: int | None
) -> None:
    cfg = decode_config({**HEADER, **body})
    # kdiagnose keeps "unset" (None) for the global value instead of upstream's 0 (adaptive).
    assert cfg.get("percentageOfNodesToScore") == global_pct
    (prof,) = _default_profiles(cfg, V134)
    assert prof["percentageOfNodesToScore"] == profile_pct
    assert _configs(prof) == _default_configs(True)


def test_explicit_args_keep_their_place_and_only_missing_plugins_get_defaults() -> None:
    # setDefaults_KubeSchedulerProfile: existing entries are defaulted in place, the rest appended by name.
    (prof,) = _defaulted(
        {
            "profiles": [
                {
                    "pluginConfig": [
                        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}},
                        {"name": "InterPodAffinity", "args": {}},
                    ]
                }
            ]
        }
    )
    names = [c["name"] for c in prof["pluginConfig"]]
    assert names == [
        "VolumeBinding",
        "InterPodAffinity",
        "DefaultPreemption",
        "DynamicResources",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
    ]
    assert prof["pluginConfig"][0]["args"] == {"bindTimeoutSeconds": 30}
    assert prof["pluginConfig"][1]["args"] == {
        "hardPodAffinityWeight": 1,
        "ignorePreferredTermsOfExistingPods": False,
    }


def test_disabled_plugins_get_no_default_args() -> None:
    # pluginsNames only lists enabled plugins: a plugin disabled in multiPoint gets no args entry.
    (prof,) = _defaulted(
        {
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {"disabled": [{"name": "VolumeBinding"}, {"name": "DynamicResources"}]}
                    }
                }
            ]
        }
    )
    names = [c["name"] for c in prof["pluginConfig"]]
    assert "VolumeBinding" not in names
    assert "DynamicResources" not in names
    assert "NodeResourcesFit" in names


# ---------------------------------------------------------------- TestPluginArgsDefaults

ARGS_CASES = [
    pytest.param(
        "DefaultPreemption",
        {},
        {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        id="DefaultPreemptionArgs empty",
    ),
    pytest.param(
        "DefaultPreemption",
        {"minCandidateNodesPercentage": 50},
        {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100},
        id="DefaultPreemptionArgs with value",
    ),
    pytest.param(
        "InterPodAffinity",
        {},
        {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
        id="InterPodAffinityArgs empty",
    ),
    pytest.param(
        "InterPodAffinity",
        {"hardPodAffinityWeight": 0},
        {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False},
        id="InterPodAffinityArgs explicit 0",
    ),
    pytest.param(
        "InterPodAffinity",
        {"hardPodAffinityWeight": 5},
        {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": False},
        id="InterPodAffinityArgs with value",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {},
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
        id="NodeResourcesBalancedAllocationArgs resources empty",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
        {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
        id="NodeResourcesBalancedAllocationArgs with scalar resource",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
        id="NodeResourcesBalancedAllocationArgs with mixed resources",
    ),
    pytest.param(
        "NodeResourcesBalancedAllocation",
        {
            "resources": [
                {"name": "cpu"},
                {"name": "scalar.io/scalar0"},
                {"name": "scalar.io/scalar1", "weight": 1},
            ]
        },
        {
            "resources": [
                {"name": "cpu", "weight": 1},
                {"name": "scalar.io/scalar0", "weight": 1},
                {"name": "scalar.io/scalar1", "weight": 1},
            ]
        },
        id="NodeResourcesBalancedAllocationArgs have resource no weight",
    ),
    pytest.param(
        "PodTopologySpread", {}, {"defaultingType": "System"}, id="PodTopologySpreadArgs resources empty"
    ),
    pytest.param(
        "PodTopologySpread",
        {
            "defaultConstraints": [
                {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
            ]
        },
        {
            "defaultConstraints": [
                {"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}
            ],
            "defaultingType": "System",
        },
        id="PodTopologySpreadArgs resources with value",
    ),
    pytest.param(
        "NodeResourcesFit",
        {},
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            }
        },
        id="NodeResourcesFitArgs not set",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "MostAllocated"}},
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            }
        },
        id="NodeResourcesFitArgs Resources empty",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}},
        id="NodeResourcesFitArgs resource weight 0 becomes 1 (SetDefaults_NodeResourcesFitArgs)",
    ),
    pytest.param(
        "NodeResourcesFit",
        {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 3}]}},
        # A strategy without a type is not given one: NewFit rejects it later.
        {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 3}]}},
        id="NodeResourcesFitArgs strategy without type stays without type",
    ),
    pytest.param(
        "VolumeBinding",
        {},
        {"bindTimeoutSeconds": 600},
        id="VolumeBindingArgs empty, StorageCapacityScoring disabled",
    ),
    pytest.param(
        "VolumeBinding",
        {"bindTimeoutSeconds": 0},
        {"bindTimeoutSeconds": 0},
        id="VolumeBindingArgs explicit zero timeout is kept",
    ),
    pytest.param("NodeAffinity", {}, {}, id="NodeAffinityArgs have no defaults"),
]


@pytest.mark.parametrize(("name", "args", "want"), ARGS_CASES)
def test_plugin_args_defaults(name: str, args: dict[str, Any], want: dict[str, Any]) -> None:
    assert default_args(name, args, V134) == want


@pytest.mark.parametrize(
    ("version", "want"),
    [
        pytest.param(
            "v1.34.1",
            {"filterTimeout": "10s"},
            id="DynamicResourcesArgs v1.34: DRASchedulerFilterTimeout beta on",
        ),
        pytest.param(
            "v1.35.4",
            {"filterTimeout": "10s"},
            id="DynamicResourcesArgs v1.35: no bindingTimeout (DRADeviceBindingConditions alpha, off)",
        ),
    ],
)
def test_dynamic_resources_args_defaults(version: str, want: dict[str, Any]) -> None:
    assert default_args("DynamicResources", {}, dialect_for(version)) == want


def test_args_defaulting_does_not_modify_its_input() -> None:
    args: dict[str, Any] = {"scoringStrategy": {"type": "MostAllocated"}}
    default_args("NodeResourcesFit", args, V134)
    assert args == {"scoringStrategy": {"type": "MostAllocated"}}


def test_v131_and_v133_defaults_match_v134_without_dynamic_resources() -> None:
    for dialect in (V131, V133):
        (prof,) = _default_profiles(decode_config(dict(HEADER)), dialect)
        assert _configs(prof) == _default_configs(False)
