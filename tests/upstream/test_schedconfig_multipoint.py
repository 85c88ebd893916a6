"""Ported from pkg/scheduler/framework/runtime/framework_test.go (v1.34): TestNewFrameworkMultiPointExpansion,
TestNewFrameworkErrors and TestInitFrameworkWithScorePlugins, against kdiagnose.schedconfig.build.

The upstream tables use a test registry (testPlugin implements every extension point but PreEnqueue,
scorePlugin1/2 PreScore+Score, scoreWithNormalizePlugin1 Score, queueSortPlugin, bindPlugin); the same
registry is installed here in place of the in-tree one, and the points kdiagnose replays (preFilter,
filter, postFilter, preScore, score with weights) are compared with upstream's ListPlugins(). The second
half runs the same rules with in-tree plugins through a configuration file.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kdiagnose.errors import ConfigError
from kdiagnose.schedconfig import build, parse_scheduler_config
from kdiagnose.schedconfig.build import BuildError, build_profile
from kdiagnose.schedconfig.defaults import POINTS, PluginRef, Plugins, PluginSet
from kdiagnose.scheduler.profiles import Profile
from kdiagnose.versions import Dialect, dialect_for

V134 = dialect_for("v1.34.1")
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

TEST = "test-plugin"
SP1 = "score-plugin-1"
SP2 = "score-plugin-2"
SWN1 = "score-with-normalize-plugin-1"
QSP = "queue-sort-plugin"
BP = "bind-plugin"
NOT_SCORE = "plugin-not-implementing-score"
DUP = "duplicate-plugin"

_ALL_BUT_PRE_ENQUEUE = {
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
}
REGISTRY: dict[str, set[str]] = {
    TEST: _ALL_BUT_PRE_ENQUEUE,
    SP1: {"preScore", "score"},
    SP2: {"preScore", "score"},
    SWN1: {"score"},
    QSP: {"queueSort"},
    BP: {"bind"},
    NOT_SCORE: {"filter"},
    DUP: {"preFilter", "filter"},
}


@pytest.fixture
def test_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """framework_test.go's registry instead of the in-tree plugins."""

    def implements(dialect: Dialect) -> dict[str, set[str]]:
        return {k: set(v) for k, v in REGISTRY.items()}

    monkeypatch.setattr(build, "IN_TREE", dict.fromkeys(REGISTRY, ""))
    monkeypatch.setattr(build, "implements", implements)


def ps(*enabled: str | tuple[str, int], disabled: tuple[str, ...] = ()) -> PluginSet:
    refs = [PluginRef(e) if isinstance(e, str) else PluginRef(e[0], e[1]) for e in enabled]
    return PluginSet(enabled=refs, disabled=list(disabled))


def plugins(**points: PluginSet) -> Plugins:
    out: Plugins = {p: PluginSet() for p in POINTS}
    out.update(points)
    return out


def _build(p: Plugins) -> Profile:
    return build_profile(
        {"schedulerName": "", "percentageOfNodesToScore": None, "plugins": p, "pluginConfig": []},
        V134,
        strict=True,
    ).profile


def _replayed(prof: Profile) -> dict[str, Any]:
    return {
        "preFilter": prof.pre_filter,
        "filter": prof.filter,
        "postFilter": prof.post_filter,
        "preScore": prof.pre_score,
        "score": prof.score,
    }


def _want(
    pre_filter: list[str] | None = None,
    filter_: list[str] | None = None,
    post_filter: list[str] | None = None,
    pre_score: list[str] | None = None,
    score: dict[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "preFilter": pre_filter or [],
        "filter": filter_ or [],
        "postFilter": post_filter or [],
        "preScore": pre_score or [],
        "score": score or {},
    }


EXPANSION = [
    pytest.param(
        plugins(multiPoint=ps((TEST, 5))),
        _want([TEST], [TEST], [TEST], [TEST], {TEST: 5}),
        id="plugin expansion",
    ),
    pytest.param(
        plugins(multiPoint=ps(TEST), preScore=ps(disabled=(TEST,)), score=ps(disabled=(TEST,))),
        _want([TEST], [TEST], [TEST]),
        id="disable MultiPoint plugin at some extension points",
    ),
    pytest.param(
        plugins(multiPoint=ps(TEST, SP1)),
        _want([TEST], [TEST], [TEST], [TEST, SP1], {TEST: 1, SP1: 1}),
        id="Multiple MultiPoint plugins",
    ),
    pytest.param(
        plugins(multiPoint=ps(TEST, SP1), preScore=ps(disabled=("*",))),
        _want([TEST], [TEST], [TEST], [], {TEST: 1, SP1: 1}),
        id="disable MultiPoint extension",
    ),
    pytest.param(
        plugins(multiPoint=ps(SWN1, TEST, SP1), score=ps(SP1, TEST)),
        _want([TEST], [TEST], [TEST], [TEST, SP1], {SP1: 1, TEST: 1, SWN1: 1}),
        id="Reorder MultiPoint plugins (specified extension takes precedence)",
    ),
    pytest.param(
        plugins(multiPoint=ps(TEST, SP1), score=ps(SWN1, SP1, TEST)),
        _want([TEST], [TEST], [TEST], [TEST, SP1], {SP1: 1, TEST: 1, SWN1: 1}),
        id="Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)",
    ),
    pytest.param(
        plugins(multiPoint=ps(TEST, SP1), score=ps((SP1, 5), (TEST, 3))),
        _want([TEST], [TEST], [TEST], [TEST, SP1], {SP1: 5, TEST: 3}),
        id="Override MultiPoint plugins weights",
    ),
    pytest.param(
        plugins(multiPoint=ps(QSP, BP, SP1, disabled=("*",))),
        _want(pre_score=[SP1], score={SP1: 1}),
        id="disable and enable MultiPoint plugins with '*'",
    ),
    pytest.param(
        plugins(multiPoint=ps(BP, QSP, SP1, disabled=(SP1,))),
        _want(pre_score=[SP1], score={SP1: 1}),
        id="disable and enable MultiPoint plugin by name",
    ),
    pytest.param(
        plugins(multiPoint=ps(TEST, SP1), score=ps((SP1, 5), (SP2, 5), (TEST, 3))),
        _want([TEST], [TEST], [TEST], [TEST, SP1], {SP1: 5, TEST: 3, SP2: 5}),
        id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
    ),
]


@pytest.mark.usefixtures("test_registry")
@pytest.mark.parametrize(("config", "want"), EXPANSION)
def test_new_framework_multi_point_expansion(config: Plugins, want: dict[str, Any]) -> None:
    got = _replayed(_build(config))
    assert got == want
    assert list(got["score"]) == list(want["score"])  # run order, not just the weights


def _with_sort_and_bind(p: Plugins) -> Plugins:
    """newFrameworkWithQueueSortAndBind."""
    if not p["queueSort"].enabled:
        p["queueSort"] = ps(QSP)
    if not p["bind"].enabled:
        p["bind"] = ps(BP)
    return p


ERRORS = [
    pytest.param(
        plugins(multiPoint=ps(TEST, TEST)),
        'plugin "test-plugin" already registered as "PreFilterPlugin"',
        id="Expect 'already registered' error",
    ),
    pytest.param(
        _with_sort_and_bind(plugins(preFilter=ps((DUP, 1), (DUP, 1)))),
        'plugin "duplicate-plugin" already registered as "PreFilterPlugin"',
        id="TestNewFrameworkErrors: duplicate plugin name",
    ),
    pytest.param(
        _with_sort_and_bind(plugins(score=ps(("notExist", 1)))),
        'ScorePlugin "notExist" does not exist',
        id="TestInitFrameworkWithScorePlugins: enabled Score plugin doesn't exist in registry",
    ),
    pytest.param(
        _with_sort_and_bind(plugins(score=ps((NOT_SCORE, 1)))),
        'plugin "plugin-not-implementing-score" does not extend ScorePlugin plugin',
        id="TestInitFrameworkWithScorePlugins: enabled Score plugin doesn't extend the ScorePlugin interface",
    ),
    pytest.param(
        plugins(score=ps((SP1, 1)), bind=ps(BP)),
        'only one queue sort plugin required for profile with scheduler name "", but got 0',
        id="no queue sort plugin",
    ),
    pytest.param(
        plugins(queueSort=ps(QSP), multiPoint=ps(TEST)),
        'only one queue sort plugin required for profile with scheduler name "", but got 2',
        id="a queue sort at its point and another through MultiPoint",
    ),
    pytest.param(
        plugins(queueSort=ps(QSP)),
        'at least one bind plugin is needed for profile with scheduler name ""',
        id="no bind plugin",
    ),
]


@pytest.mark.usefixtures("test_registry")
@pytest.mark.parametrize(("config", "message"), ERRORS)
def test_new_framework_errors(config: Plugins, message: str) -> None:
    with pytest.raises(BuildError) as info:
        _build(config)
    assert str(info.value) == message


@pytest.mark.usefixtures("test_registry")
@pytest.mark.parametrize(
    "config",
    [
        pytest.param(_with_sort_and_bind(plugins()), id="Score plugins are nil"),
        pytest.param(_with_sort_and_bind(plugins(score=ps())), id="enabled Score plugin list is empty"),
        pytest.param(
            _with_sort_and_bind(plugins(score=ps((SP1, 1)))),
            id="enabled plugin only implements ScorePlugin interface",
        ),
        pytest.param(
            _with_sort_and_bind(plugins(score=ps((SWN1, 1)))),
            id="enabled plugin implements ScoreWithNormalizePlugin interface",
        ),
    ],
)
def test_init_framework_with_score_plugins(config: Plugins) -> None:
    assert isinstance(_build(config), Profile)


# ---------------------------------------------------------------- the same rules with in-tree plugins


def parse(profile: dict[str, Any], version: str = "v1.34.1") -> Profile:
    body = {**HEADER, "profiles": [{"schedulerName": "default-scheduler", **profile}]}
    (p,) = parse_scheduler_config(yaml.safe_dump(body), "s.yaml", dialect_for(version), True).profiles
    return p


def build_error(profile: dict[str, Any]) -> str:
    body = {**HEADER, "profiles": [{"schedulerName": "default-scheduler", **profile}]}
    with pytest.raises(ConfigError) as info:
        parse_scheduler_config(yaml.safe_dump(body), "s.yaml", V134, True)
    return str(info.value)


_BUILD = "scheduler configuration s.yaml rejected (build): initializing profiles: creating profile for scheduler name default-scheduler: "


def test_score_point_order_wins_over_multipoint_for_default_plugins() -> None:
    # Part 1 (plugins set at the point, in that order), part 2 (the other multiPoint plugins), part 3.
    p = parse(
        {
            "plugins": {
                "score": {"enabled": [{"name": "ImageLocality", "weight": 5}, {"name": "TaintToleration"}]}
            }
        }
    )
    assert list(p.score.items()) == [
        ("ImageLocality", 5),
        ("TaintToleration", 1),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("NodeResourcesBalancedAllocation", 1),
    ]


def test_filter_point_with_star_disabled_runs_only_its_own_plugins() -> None:
    p = parse(
        {
            "plugins": {
                "filter": {
                    "enabled": [{"name": "NodeResourcesFit"}, {"name": "NodeName"}],
                    "disabled": [{"name": "*"}],
                }
            }
        }
    )
    assert p.filter == ["NodeResourcesFit", "NodeName"]
    # PreFilter still comes from multiPoint.
    assert "NodeResourcesFit" in p.pre_filter and "NodeAffinity" in p.pre_filter


def test_multipoint_disabled_by_name_then_re_enabled_at_one_point() -> None:
    p = parse(
        {
            "plugins": {
                "multiPoint": {"disabled": [{"name": "TaintToleration"}]},
                "filter": {"enabled": [{"name": "TaintToleration"}]},
            }
        }
    )
    assert p.filter[-1] == "TaintToleration"
    assert "TaintToleration" not in p.score
    assert "TaintToleration" not in p.pre_score


def test_custom_multipoint_weight_replaces_the_default_in_place() -> None:
    p = parse({"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 7}]}}})
    assert list(p.score)[-1] == "ImageLocality"
    assert p.score["ImageLocality"] == 7


def test_a_plugin_repeated_at_a_point_is_already_registered() -> None:
    # mergePluginSet appends the repeated custom plugin; NewFramework rejects it.
    msg = build_error({"plugins": {"filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeName"}]}}})
    assert msg == _BUILD + 'plugin "NodeName" already registered as "FilterPlugin"'


def test_a_plugin_enabled_at_a_point_it_does_not_extend() -> None:
    msg = build_error({"plugins": {"score": {"enabled": [{"name": "NodePorts"}]}}})
    assert msg == _BUILD + 'plugin "NodePorts" does not extend ScorePlugin plugin'


def test_two_queue_sort_plugins_are_caught_by_validation_before_the_build() -> None:
    # validateCommonQueueSort checks profiles[0] even when it is the only profile.
    msg = build_error(
        {"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "PrioritySort"}]}}}
    )
    assert msg == (
        "scheduler configuration s.yaml rejected (validate): profiles[0].plugins.queueSort.Enabled: "
        "Invalid value: 2: only one queue sort plugin can be enabled"
    )


def test_no_bind_plugin_when_default_binder_is_disabled_everywhere() -> None:
    msg = build_error({"plugins": {"multiPoint": {"disabled": [{"name": "DefaultBinder"}]}}})
    assert (
        msg
        == _BUILD + 'at least one bind plugin is needed for profile with scheduler name "default-scheduler"'
    )


def test_unknown_multipoint_plugin_is_reported_at_the_first_point() -> None:
    msg = build_error({"plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}})
    assert msg == _BUILD + 'PreFilterPlugin "Coscheduling" does not exist'


def test_unknown_multipoint_plugin_after_a_star_disabled_point() -> None:
    # expandMultiPointPlugins skips a point whose disabled list has "*" before looking the plugins up.
    msg = build_error(
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                "preFilter": {"disabled": [{"name": "*"}]},
            }
        }
    )
    assert msg == _BUILD + 'FilterPlugin "Coscheduling" does not exist'
