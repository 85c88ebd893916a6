"""End to end: a KubeSchedulerConfiguration changes the replay the way kube-scheduler v1.34 does.

Each case is a small cluster and a configuration; the expected verdicts, scores and messages follow from
upstream code (the plugin formulas, framework.go's RunFilterPlugins / RunScorePlugins / RunPostFilterPlugins
wrapping, types.go FitError.Error) and are worked out by hand in the comments. What is already in
fixtures/golden-config (weights, MostAllocated, RequestedToCapacityRatio, ignored resources, two profiles,
hardPodAffinityWeight, spread default constraints, a disabled filter) is not repeated.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.schedconfig import parse_scheduler_config
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.scheduler.framework import Code
from kdiagnose.versions import dialect_for

V134 = dialect_for("v1.34.1")
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def node(
    name: str, cpu: str = "4", labels: dict[str, str] | None = None, taints: list[Any] | None = None
) -> dict[str, Any]:
    res = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {"allocatable": res, "capacity": res},
    }


def pod(
    name: str, on: str = "", cpu: str = "1", labels: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
        ],
        **spec,
    }
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": s,
    }
    if on:
        s["nodeName"] = on
        out["status"] = {"phase": "Running"}
    return out


def replay(profile: dict[str, Any], objs: list[dict[str, Any]]) -> Diagnosis:
    """The one pending pod's diagnosis under a single default-scheduler profile."""
    body = {**HEADER, "profiles": [{"schedulerName": "default-scheduler", **profile}]}
    cfg = parse_scheduler_config(yaml.safe_dump(body), "t.yaml", V134, True)
    snap = build_snapshot([RawObject(o, "test") for o in objs], V134)
    (p,) = snap.pending
    return Scheduler(snap, cfg.profiles).diagnose(p)


def scores(d: Diagnosis, plugin: str) -> dict[str, tuple[int, int]]:
    """node -> (normalized score, weight) of one plugin."""
    return {
        n: (b.plugins[plugin].score, b.plugins[plugin].weight)
        for n, b in d.scores.items()
        if plugin in b.plugins
    }


def scored_plugins(d: Diagnosis) -> set[str]:
    return {p for b in d.scores.values() for p in b.plugins}


PREFER_ZONE_A = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 3,
                "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            }
        ]
    }
}
SOFT_TAINT = [{"key": "dedicated", "value": "x", "effect": "PreferNoSchedule"}]


def test_score_weights_flip_the_choice() -> None:
    # n1: preferred zone (NodeAffinity 100) but an untolerated PreferNoSchedule taint (TaintToleration 0);
    # n2: the reverse. Defaults 3/2: n2 wins by 100; with TaintToleration 1 and NodeAffinity 5 n1 wins.
    objs = [node("n1", labels={"zone": "a"}, taints=SOFT_TAINT), node("n2"), pod("p", affinity=PREFER_ZONE_A)]
    default = replay({}, objs)
    assert default.chosen == "n2"
    assert scores(default, "TaintToleration") == {"n1": (0, 3), "n2": (100, 3)}
    weighted = replay(
        {
            "plugins": {
                "score": {
                    "enabled": [
                        {"name": "TaintToleration", "weight": 1},
                        {"name": "NodeAffinity", "weight": 5},
                    ]
                }
            }
        },
        objs,
    )
    assert weighted.chosen == "n1"
    assert scores(weighted, "TaintToleration") == {"n1": (0, 1), "n2": (100, 1)}
    assert scores(weighted, "NodeAffinity") == {"n1": (100, 5), "n2": (0, 5)}


def test_all_score_plugins_disabled_but_one() -> None:
    d = replay(
        {
            "plugins": {
                "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality", "weight": 3}]}
            }
        },
        [node("n1"), node("n2"), pod("p")],
    )
    assert scored_plugins(d) == {"ImageLocality"}
    assert scores(d, "ImageLocality") == {"n1": (0, 3), "n2": (0, 3)}
    assert d.top_nodes == ["n1", "n2"]


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        pytest.param(
            {},
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are "
            "available: 1 Preemption is not helpful for scheduling.",
            id="default: both PostFilter plugins speak",
        ),
        pytest.param(
            {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate",
            id="DefaultPreemption disabled: only DynamicResources' PostFilter reason is appended",
        ),
        pytest.param(
            {"postFilter": {"disabled": [{"name": "*"}]}},
            "0/1 nodes are available: 1 Insufficient cpu.",
            id="no PostFilter plugins: no preemption and nothing appended",
        ),
    ],
)
def test_post_filter_plugins_shape_the_message(plugins: dict[str, Any], message: str) -> None:
    d = replay({"plugins": plugins} if plugins else {}, [node("n1", cpu="1"), pod("p", cpu="2")])
    assert not d.scheduled
    assert d.message == message
    assert d.preemption is None


def test_added_affinity_filters_with_the_enforced_reason() -> None:
    added = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]
        }
    }
    d = replay(
        {"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": added}}]},
        [node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"}), pod("p")],
    )
    assert d.chosen == "n2"
    st = d.verdicts["n1"]
    assert st.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ("node(s) didn't match scheduler-enforced node affinity",)
    assert st.plugin == "NodeAffinity"


@pytest.mark.parametrize(
    "plugins",
    [
        pytest.param({}, id="added preferred term scores like a pod's own"),
        pytest.param(
            {"preScore": {"disabled": [{"name": "NodeAffinity"}]}},
            id="NodeAffinity's Score falls back when its PreScore is disabled",
        ),
    ],
)
def test_added_affinity_preferred_terms_score(plugins: dict[str, Any]) -> None:
    added = {
        "preferredDuringSchedulingIgnoredDuringExecution": PREFER_ZONE_A["nodeAffinity"][
            "preferredDuringSchedulingIgnoredDuringExecution"
        ]
    }
    profile: dict[str, Any] = {"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": added}}]}
    if plugins:
        profile["plugins"] = plugins
    d = replay(profile, [node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b"}), pod("p")])
    assert scores(d, "NodeAffinity") == {"n1": (100, 2), "n2": (0, 2)}
    assert d.chosen == "n1"


def test_ignore_preferred_terms_of_existing_pods() -> None:
    # An existing pod on n1 prefers pods labelled app=x: symmetric scoring gives n1 100 for an app=x pod,
    # unless ignorePreferredTermsOfExistingPods, where PreScore skips a pod without terms of its own.
    aff = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 5,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "x"}},
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }
            ]
        }
    }
    objs = [
        node("n1"),
        node("n2"),
        pod("e", on="n1", cpu="100m", affinity=aff),
        pod("p", cpu="100m", labels={"app": "x"}),
    ]
    d = replay({}, objs)
    assert scores(d, "InterPodAffinity") == {"n1": (100, 2), "n2": (0, 2)}
    d = replay(
        {
            "pluginConfig": [
                {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": True}}
            ]
        },
        objs,
    )
    assert "InterPodAffinity" not in scored_plugins(d)


def test_balanced_allocation_on_one_resource_is_always_balanced() -> None:
    # balanced_allocation.go: a single fraction has no deviation, so every node scores MaxNodeScore.
    d = replay(
        {
            "pluginConfig": [
                {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu"}]}}
            ]
        },
        [node("n1"), node("n2"), pod("e", on="n2", cpu="2"), pod("p")],
    )
    assert scores(d, "NodeResourcesBalancedAllocation") == {"n1": (100, 1), "n2": (100, 1)}


def test_spread_list_defaulting_without_constraints_turns_system_spreading_off() -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    }
    objs = [
        node("n1"),
        node("n2"),
        svc,
        pod("e", on="n1", cpu="100m", labels={"app": "web"}),
        pod("p", cpu="100m", labels={"app": "web"}),
    ]
    # System defaulting: the Service's pods get the hostname/zone ScheduleAnyway constraints.
    assert "PodTopologySpread" in scored_plugins(replay({}, objs))
    listed = replay(
        {"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}, objs
    )
    assert "PodTopologySpread" not in scored_plugins(listed)


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        pytest.param(
            "NodeResourcesFit",
            'running "NodeResourcesFit" filter plugin: error reading "PreFilterNodeResourcesFit" from cycleState: '
            "not found",
            id="NodeResourcesFit: Filter has no fallback",
        ),
        pytest.param(
            "VolumeRestrictions",
            'running "VolumeRestrictions" filter plugin: cannot read "PreFilterVolumeRestrictions" from cycleState',
            id="VolumeRestrictions: Filter has no fallback",
        ),
        pytest.param(
            "NodePorts",
            'running "NodePorts" filter plugin: reading "PreFilterNodePorts" from cycleState: not found',
            id="NodePorts: Filter has no fallback",
        ),
        pytest.param(
            "InterPodAffinity",
            'running "InterPodAffinity" filter plugin: error reading "PreFilterInterPodAffinity" from cycleState: '
            "not found",
            id="InterPodAffinity: Filter has no fallback",
        ),
    ],
)
def test_pre_filter_disabled_alone_makes_filter_fail_with_an_error(plugin: str, message: str) -> None:
    d = replay(
        {"plugins": {"preFilter": {"disabled": [{"name": plugin}]}}}, [node("n1"), node("n2"), pod("p")]
    )
    assert not d.scheduled
    assert d.message == message
    assert d.verdicts["n1"].code is Code.ERROR


@pytest.mark.parametrize(
    "plugin",
    [
        pytest.param("NodeAffinity", id="NodeAffinity: Filter falls back"),
        pytest.param("VolumeZone", id="VolumeZone: Filter falls back"),
        pytest.param("NodeVolumeLimits", id="NodeVolumeLimits: Filter reads no PreFilter state"),
    ],
)
def test_pre_filter_disabled_alone_with_a_fallback(plugin: str) -> None:
    d = replay({"plugins": {"preFilter": {"disabled": [{"name": plugin}]}}}, [node("n1"), pod("p")])
    assert d.chosen == "n1"


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        pytest.param(
            "TaintToleration",
            'running Score plugins: plugin "TaintToleration" failed with: failed to read "PreScoreTaintToleration" '
            "from cycleState: not found",
            id="TaintToleration: Score fails without its PreScore state",
        ),
        pytest.param(
            "PodTopologySpread",
            'running Score plugins: plugin "PodTopologySpread" failed with: error reading "PreScorePodTopologySpread" '
            "from cycleState: not found",
            id="PodTopologySpread: Score runs (no PreScore Skip) and fails",
        ),
        pytest.param(
            "InterPodAffinity",
            'running Score plugins: plugin "InterPodAffinity" failed with: failed to read "PreScoreInterPodAffinity" '
            "from cycleState: not found",
            id="InterPodAffinity: Score runs (no PreScore Skip) and fails",
        ),
    ],
)
def test_pre_score_disabled_alone_makes_scoring_fail(plugin: str, message: str) -> None:
    profile = {"plugins": {"preScore": {"disabled": [{"name": plugin}]}}}
    d = replay(profile, [node("n1"), node("n2"), pod("p")])
    assert not d.scheduled
    assert d.message == message
    # schedulePod takes a single feasible node without scoring.
    assert replay(profile, [node("n1"), pod("p")]).chosen == "n1"


@pytest.mark.parametrize(
    "plugin",
    [
        pytest.param("NodeResourcesFit", id="NodeResourcesFit: Score falls back"),
        pytest.param("NodeResourcesBalancedAllocation", id="BalancedAllocation: Score falls back"),
    ],
)
def test_pre_score_disabled_alone_with_a_fallback(plugin: str) -> None:
    d = replay(
        {"plugins": {"preScore": {"disabled": [{"name": plugin}]}}},
        [node("n1"), node("n2"), pod("e", on="n2", cpu="2"), pod("p")],
    )
    assert d.chosen == "n1"
    assert plugin in scored_plugins(d)
