"""Ported from pkg/scheduler/framework/runtime/framework_test.go (v1.34): TestRunPreFilterPlugins,
TestRunPreFilterExtensionRemovePod/AddPod, TestFilterPlugins, TestPostFilterPlugins,
TestFilterPluginsWithNominatedPods and TestRunScorePlugins, against kdiagnose's runner.

Skipped on purpose: metrics, informers, queueing hints, PreBind/Permit/Bind (not replayed), the
`SkipAllPostFilterPlugins` case (newer than v1.35), and the Score "returns an error / out of range" cases
(in-tree plugins never do that; kdiagnose clamps to [0, 100]).
"""

from __future__ import annotations

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.runner import _SKIP_KEY
from tests.upstream.builders import make_node, make_pod, new_snapshot
from tests.upstream.fakes import INJECT_REASON, Inject, fake, framework_with

U, UU, ERR, SKIP = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR, Code.SKIP


def _snap(*names: str):  # type: ignore[no-untyped-def]
    return new_snapshot([], [make_node().name(n).obj() for n in names])


POD = make_pod().name("pod").obj()

# ---------------------------------------------------------------- TestRunPreFilterPlugins


@pytest.mark.parametrize(
    ("plugins", "want_code", "want_skipped", "want_result"),
    [
        pytest.param(
            [("success1", None, None), ("success2", None, None)],
            Code.SUCCESS,
            set(),
            None,
            id="all PreFilter returned success",
        ),
        pytest.param(
            [("success", None, None), ("error", ERR, None)],
            ERR,
            set(),
            None,
            id="one PreFilter plugin returned success, but another PreFilter plugin returned non-success",
        ),
        pytest.param(
            [("skip", SKIP, None), ("error", ERR, None)],
            ERR,
            {"skip"},
            None,
            id="one PreFilter plugin returned skip, but another PreFilter plugin returned non-success",
        ),
        pytest.param(
            [("skip1", SKIP, None), ("skip2", SKIP, None), ("skip3", SKIP, None)],
            Code.SUCCESS,
            {"skip1", "skip2", "skip3"},
            None,
            id="all PreFilter plugins returned skip",
        ),
        pytest.param(
            [
                ("skip1", SKIP, None),
                ("success1", None, None),
                ("skip2", SKIP, None),
                ("success2", None, None),
            ],
            Code.SUCCESS,
            {"skip1", "skip2"},
            None,
            id="some PreFilter plugins returned skip",
        ),
        pytest.param(
            [("unschedulable", U, None), ("skip", SKIP, None)],
            U,
            {"skip"},
            None,
            id="one PreFilter plugin returned Unschedulable, but another PreFilter plugin should be executed",
        ),
        pytest.param(
            [("unresolvable", UU, None), ("skip", SKIP, None)],
            UU,
            set(),
            None,
            id="one PreFilter plugin returned UnschedulableAndUnresolvable, and all other plugins aren't executed",
        ),
        pytest.param(
            [("reject-all-nodes", None, frozenset()), ("skip", SKIP, None)],
            UU,
            set(),
            frozenset(),
            id="all nodes are filtered out by prefilter result, but other plugins aren't executed",
        ),
    ],
)
def test_run_pre_filter_plugins(
    plugins: list[tuple[str, Code | None, frozenset[str] | None]],
    want_code: Code,
    want_skipped: set[str],
    want_result: frozenset[str] | None,
) -> None:
    snap = _snap("node1")
    pls = [fake(name, snap, Inject(pre_filter=code, pre_filter_result=res)) for name, code, res in plugins]
    fw = framework_with(snap, pre_filter=pls)
    state = CycleState()
    result, status, _ = fw.run_pre_filter(state, POD)
    assert status.code == want_code
    assert state.read(_SKIP_KEY) == want_skipped
    if want_code != UU or want_result is not None:
        assert result.node_names == want_result


def test_run_pre_filter_error_is_wrapped_with_the_plugin_name() -> None:
    # findNodesThatFitPod returns s.AsError(): `running PreFilter plugin "FakePreFilter": <reason>`.
    snap = _snap("node1")
    pl = fake("FakePreFilter", snap, Inject(pre_filter=ERR))
    _, status, _ = framework_with(snap, pre_filter=[pl]).run_pre_filter(CycleState(), POD)
    assert status.message == f'running PreFilter plugin "FakePreFilter": {INJECT_REASON}'


# ---------------------------------------------------------------- TestRunPreFilterExtensionRemovePod / AddPod


@pytest.mark.parametrize("point", ["add_pod", "remove_pod"])
@pytest.mark.parametrize(
    ("plugins", "skipped", "want_code"),
    [
        pytest.param(
            [("success1", None), ("success2", None)],
            set(),
            Code.SUCCESS,
            id="no plugins are skipped and all return success",
        ),
        pytest.param([("success1", None), ("error1", ERR)], set(), ERR, id="one returned error"),
        pytest.param([("success1", None), ("skipped", ERR)], {"skipped"}, Code.SUCCESS, id="one is skipped"),
    ],
)
def test_run_pre_filter_extensions(
    point: str, plugins: list[tuple[str, Code | None]], skipped: set[str], want_code: Code
) -> None:
    snap = _snap("node1")
    pls = [fake(name, snap, Inject(**{point: code})) for name, code in plugins]  # type: ignore[arg-type]
    fw = framework_with(snap, pre_filter=pls)
    state = CycleState()
    state.write(_SKIP_KEY, skipped)
    ni = snap.node_infos[0]
    other = make_pod().name("other").obj()
    run = fw.run_add_pod if point == "add_pod" else fw.run_remove_pod
    s = run(state, POD, other, ni)
    assert s.code == want_code
    if want_code == ERR:
        verb = "AddPod" if point == "add_pod" else "RemovePod"
        assert s.message == f'running {verb} on PreFilter plugin "error1": {INJECT_REASON}'


# ---------------------------------------------------------------- TestFilterPlugins


def _err(plugin: str) -> tuple[Code, str, str]:
    return ERR, f'running "{plugin}" filter plugin: {INJECT_REASON}', plugin


@pytest.mark.parametrize(
    ("plugins", "skipped", "want"),
    [
        pytest.param([("TestPlugin", Code.SUCCESS)], set(), None, id="SuccessFilter"),
        pytest.param([("TestPlugin", ERR)], set(), _err("TestPlugin"), id="ErrorFilter"),
        pytest.param([("TestPlugin", U)], set(), (U, INJECT_REASON, "TestPlugin"), id="UnschedulableFilter"),
        pytest.param(
            [("TestPlugin", UU)],
            set(),
            (UU, INJECT_REASON, "TestPlugin"),
            id="UnschedulableAndUnresolvableFilter",
        ),
        pytest.param(
            [("TestPlugin1", ERR), ("TestPlugin2", ERR)],
            set(),
            _err("TestPlugin1"),
            id="ErrorAndErrorFilters",
        ),
        pytest.param(
            [("TestPlugin1", U), ("TestPlugin2", U)],
            set(),
            (U, INJECT_REASON, "TestPlugin1"),
            id="UnschedulableAndUnschedulableFilters",
        ),
        pytest.param(
            [("TestPlugin1", UU), ("TestPlugin2", U)],
            set(),
            (UU, INJECT_REASON, "TestPlugin1"),
            id="UnschedulableAndUnschedulableAndUnresolvableFilters",
        ),
        pytest.param(
            [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", Code.SUCCESS)],
            set(),
            None,
            id="SuccessAndSuccessFilters",
        ),
        pytest.param(
            [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", ERR)],
            {"TestPlugin2"},
            None,
            id="SuccessAndSkipFilters",
        ),
        pytest.param(
            [("TestPlugin1", ERR), ("TestPlugin2", Code.SUCCESS)],
            set(),
            _err("TestPlugin1"),
            id="ErrorAndSuccessFilters",
        ),
        pytest.param(
            [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", ERR)],
            set(),
            _err("TestPlugin2"),
            id="SuccessAndErrorFilters",
        ),
        pytest.param(
            [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", U)],
            set(),
            (U, INJECT_REASON, "TestPlugin2"),
            id="SuccessAndUnschedulableFilters",
        ),
    ],
)
def test_filter_plugins(
    plugins: list[tuple[str, Code]], skipped: set[str], want: tuple[Code, str, str] | None
) -> None:
    snap = _snap("node1")
    pls = [fake(name, snap, Inject(filter=code)) for name, code in plugins]
    fw = framework_with(snap, filter=pls)
    state = CycleState()
    state.write(_SKIP_KEY, skipped)
    s = fw.run_filters(state, POD, snap.node_infos[0])
    if want is None:
        assert s.ok
    else:
        assert (s.code, s.message, s.plugin) == want


# ---------------------------------------------------------------- TestPostFilterPlugins


@pytest.mark.parametrize(
    ("codes", "want_code", "want_reasons", "want_plugin"),
    [
        pytest.param([Code.SUCCESS], Code.SUCCESS, None, None, id="a single plugin makes a Pod schedulable"),
        pytest.param(
            [U, Code.SUCCESS],
            Code.SUCCESS,
            None,
            None,
            id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable",
        ),
        pytest.param(
            [Code.SUCCESS, U],
            Code.SUCCESS,
            None,
            None,
            id="plugin1 makes a Pod schedulable, followed by plugin2 which cannot make the Pod schedulable",
        ),
        pytest.param(
            [ERR, Code.SUCCESS],
            ERR,
            (INJECT_REASON,),
            "TestPlugin1",
            id="plugin1 returns an error, plugin2 is not run",
        ),
        pytest.param(
            [U, UU],
            UU,
            (INJECT_REASON,),
            "TestPlugin2",
            id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod unresolvable",
        ),
        pytest.param(
            [U, U],
            U,
            (INJECT_REASON, INJECT_REASON),
            "TestPlugin1",
            id="both plugins failed to make a Pod schedulable",
        ),
    ],
)
def test_post_filter_plugins(
    codes: list[Code], want_code: Code, want_reasons: tuple[str, ...] | None, want_plugin: str | None
) -> None:
    from kdiagnose.scheduler.diagnosis import Diagnosis

    snap = _snap("node1")
    pls = [fake(f"TestPlugin{i + 1}", snap, Inject(post_filter=c)) for i, c in enumerate(codes)]
    fw = framework_with(snap, post_filter=pls)
    d = Diagnosis(pod=POD)
    fw._post_filter(CycleState(), POD, d)
    assert d.postfilter is not None
    assert d.postfilter.code == want_code
    if want_reasons is not None:
        assert d.postfilter.reasons == want_reasons
        assert d.postfilter.plugin == want_plugin


# ---------------------------------------------------------------- TestFilterPluginsWithNominatedPods

LOW = make_pod().name("low").priority(0).obj()
HIGH = make_pod().name("high").priority(1000).obj()


@pytest.mark.parametrize(
    ("add_code", "filter_code", "pod", "nominated", "want"),
    [
        pytest.param(None, None, LOW, None, None, id="node has no nominated pod"),
        pytest.param(
            Code.SUCCESS,
            Code.SUCCESS,
            LOW,
            HIGH,
            None,
            id="node has a high-priority nominated pod and all filters succeed",
        ),
        pytest.param(
            ERR,
            None,
            LOW,
            HIGH,
            (ERR, f'running AddPod on PreFilter plugin "TestPlugin1": {INJECT_REASON}'),
            id="node has a high-priority nominated pod and pre filters fail",
        ),
        pytest.param(
            Code.SUCCESS,
            ERR,
            LOW,
            HIGH,
            (ERR, f'running "TestPlugin2" filter plugin: {INJECT_REASON}'),
            id="node has a high-priority nominated pod and filters fail",
        ),
        pytest.param(
            U,
            Code.SUCCESS,
            HIGH,
            LOW,
            None,
            id="node has a low-priority nominated pod and pre filters return unschedulable",
        ),
    ],
)
def test_filter_plugins_with_nominated_pods(
    add_code: Code | None,
    filter_code: Code | None,
    pod: object,
    nominated: object,
    want: tuple[Code, str] | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kdiagnose.model.objects import Pod

    assert isinstance(pod, Pod)
    snap = _snap("node1")
    pre = [fake("TestPlugin1", snap, Inject(add_pod=add_code))] if add_code is not None else []
    flt = [fake("TestPlugin2", snap, Inject(filter=filter_code))] if filter_code is not None else []
    fw = framework_with(snap, pre_filter=pre, filter=flt)

    def nominated_for(p: Pod, node: str) -> list[Pod]:
        # addGENominatedPods: only pods of priority >= the incoming pod's.
        if isinstance(nominated, Pod) and nominated.priority >= p.priority:
            return [nominated]
        return []

    monkeypatch.setattr(fw, "nominated_pods_for", nominated_for)
    state = CycleState()
    state.write(_SKIP_KEY, set())
    s = fw.run_filters_with_nominated(state, pod, snap.node_infos[0])
    if want is None:
        assert s.ok
    else:
        assert (s.code, s.message) == want


# ---------------------------------------------------------------- TestRunScorePlugins


@pytest.mark.parametrize(
    ("plugins", "skipped", "want_totals", "want_per_plugin"),
    [
        pytest.param([], set(), {"node1": 0, "node2": 0}, {}, id="no Score plugins"),
        pytest.param(
            [("scorePlugin1", 1, 1, None)],
            set(),
            {"node1": 1, "node2": 1},
            {"scorePlugin1": 1},
            id="single Score plugin",
        ),
        pytest.param(
            [("scoreWithNormalizePlugin1", 1, 10, 5)],
            set(),
            {"node1": 5, "node2": 5},
            {"scoreWithNormalizePlugin1": 5},
            id="single ScoreWithNormalize plugin",
        ),
        pytest.param(
            [
                ("scorePlugin1", 1, 1, None),
                ("scoreWithNormalizePlugin1", 1, 3, 4),
                ("scoreWithNormalizePlugin2", 2, 4, 5),
            ],
            set(),
            {"node1": 15, "node2": 15},
            {"scorePlugin1": 1, "scoreWithNormalizePlugin1": 4, "scoreWithNormalizePlugin2": 10},
            id="3 Score plugins, 2 NormalizeScore plugins",
        ),
        pytest.param(
            [("scorePlugin1", 3, 1, None)],
            set(),
            {"node1": 3, "node2": 3},
            {"scorePlugin1": 3},
            id="single Score plugin with MultiPointExpansion (score weight 3 wins)",
        ),
        pytest.param(
            [("scorePlugin1", 1, 1, None), ("scoreWithNormalizePlugin1", 1, 7, None)],
            {"scoreWithNormalizePlugin1"},
            {"node1": 1, "node2": 1},
            {"scorePlugin1": 1},
            id="one success plugin, one skip plugin",
        ),
        pytest.param(
            [("scorePlugin1", 1, 1, None)],
            {"scorePlugin1"},
            {"node1": 0, "node2": 0},
            {},
            id="all plugins are skipped in prescore",
        ),
    ],
)
def test_run_score_plugins(
    plugins: list[tuple[str, int, int, int | None]],
    skipped: set[str],
    want_totals: dict[str, int],
    want_per_plugin: dict[str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.framework import SUCCESS, Status

    snap = _snap("node1", "node2")
    pls = []
    for name, weight, raw, normalized in plugins:
        pl = fake(
            name,
            snap,
            Inject(pre_score=SKIP if name in skipped else None, score={"node1": raw, "node2": raw}),
        )
        if normalized is not None:
            value = normalized

            def norm(state: CycleState, pod: object, scores: dict[str, int], value: int = value) -> Status:
                for k in scores:
                    scores[k] = value
                return SUCCESS

            monkeypatch.setattr(pl, "normalize_score", norm)
        pls.append((pl, weight))
    fw = framework_with(snap, pre_score=[p for p, _ in pls], score=pls)
    d = Diagnosis(pod=POD)
    fw._score(CycleState(), POD, d, list(snap.node_infos))
    assert {k: b.total for k, b in d.scores.items()} == want_totals
    for name, weighted in want_per_plugin.items():
        assert {b.plugins[name].weighted for b in d.scores.values()} == {weighted}
    for name in skipped:
        assert all(name not in b.plugins for b in d.scores.values())
