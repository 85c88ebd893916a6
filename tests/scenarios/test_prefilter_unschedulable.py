"""A PreFilter plugin returning Unschedulable (not UU), alone or before one returning UU, and preemption after it.

Derived from framework/runtime/framework.go RunPreFilterPlugins (v1.34.1): UU returns at once; U is kept
(the last one wins) and the loop goes on, so a later UU replaces it. schedule_one.go findNodesThatFitPod then
gives every node the PreFilter status (SetAbsentNodesStatus; v1.31: an explicit entry per node) and FitError
prints only `PreFilterMsg`. No in-tree PreFilter returns plain U in v1.31-v1.35 (their rejections are UU), so
the U plugin is a fake, as upstream's framework tests use.
"""

from __future__ import annotations

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.scheduler.framework import Code, CycleState, Handle, Plugin, PreFilterResult, Status
from kdiagnose.scheduler.plugins.defaultpreemption.default_preemption import DefaultPreemption
from kdiagnose.scheduler.plugins.noderesources.fit import Fit
from tests.scenarios.helpers import node, pod, snapshot_of
from tests.upstream.fakes import Inject, fake, framework_with

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _pre(name: str, code: Code, reason: str, snap: Snapshot) -> Plugin:
    """A PreFilter-only plugin answering `code` with `reason`; records that it ran."""

    def pre_filter(self: Plugin, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        state.write(f"ran/{name}", True)
        return None, Status(code, (reason,))

    cls = type(name, (Plugin,), {"name": name, "pre_filter": pre_filter})
    plugin: Plugin = cls(Handle(snap, snap.dialect, {}))
    return plugin


def _cluster(version: str) -> Snapshot:
    return snapshot_of(
        node("n1", cpu="2"),
        node("n2", cpu="2"),
        pod("low", node_name="n1", cpu="1500m", priority=0),
        pod("p", cpu="1", priority=100),
        version=version,
    )


@pytest.mark.parametrize(
    ("plugins", "want_code", "want_msg"),
    [
        pytest.param(
            [("A", U, "a says U"), ("B", UU, "b says UU")],
            UU,
            "b says UU",
            id="U then UU: the later UU status is returned and printed",
        ),
        pytest.param(
            [("A", UU, "a says UU"), ("B", U, "b says U")],
            UU,
            "a says UU",
            id="UU first stops PreFilter before the U plugin runs",
        ),
        pytest.param(
            [("A", U, "a says U"), ("B", U, "b says U")],
            U,
            "b says U",
            id="two U statuses: the last one wins",
        ),
    ],
)
def test_prefilter_status_precedence(
    plugins: list[tuple[str, Code, str]], want_code: Code, want_msg: str
) -> None:
    snap = _cluster("v1.34.1")
    pls = [_pre(n, c, r, snap) for n, c, r in plugins]
    fit = Fit(Handle(snap, snap.dialect, {}))
    preemption = DefaultPreemption(Handle(snap, snap.dialect, {}))
    fw = framework_with(snap, pre_filter=[*pls, fit], filter=[fit], post_filter=[preemption])
    d = fw.schedule(next(p for p in snap.pending if p.name == "p"))
    assert d.prefilter is not None
    assert (d.prefilter.code, d.prefilter.plugin, d.prefilter.message) == (
        want_code,
        next(n for n, _, r in plugins if r == want_msg),
        want_msg,
    )
    if want_code == UU:
        # Every node UU: no preemption candidate.
        tail = "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        assert d.message == f"0/2 nodes are available: {want_msg}. {tail}"
    else:
        # Every node U: n1 fits once `low` is evicted (Fit re-run in the dry run); success prints no
        # PostFilter part.
        assert d.message == f"0/2 nodes are available: {want_msg}."
        assert d.preemption is not None and d.preemption.nominated_node == "n1"


@pytest.mark.parametrize(
    "version",
    [
        pytest.param("v1.31.8", id="v1.31: explicit U entries on every node make all of them candidates"),
        pytest.param("v1.34.1", id="v1.34: the absent-nodes status is U, so every node is a candidate"),
    ],
)
def test_prefilter_u_makes_every_node_a_candidate(version: str) -> None:
    """PreFilter U: NodesForStatusCode(U) returns all nodes. The dry run re-runs only Filter (the fake's
    Filter passes), so n2 (empty) has no victims and n1 fits once `low` is gone. Preemption succeeds on n1
    even though PreFilter rejected the pod; the message then has no PostFilter part."""
    snap = _cluster(version)
    inj = Inject(pre_filter=U)
    pl = fake("Gate", snap, inj)
    fit = Fit(Handle(snap, snap.dialect, {}))
    preemption = DefaultPreemption(Handle(snap, snap.dialect, {}))
    fw = framework_with(snap, pre_filter=[pl, fit], filter=[pl, fit], post_filter=[preemption])
    d = fw.schedule(next(p for p in snap.pending if p.name == "p"))
    assert d.prefilter is not None and d.prefilter.code == U
    assert all(st.code == U for st in d.verdicts.values())
    assert d.preemption is not None
    assert d.preemption.nominated_node == "n1"
    assert [v.name for v in d.preemption.victims] == ["low"]
    assert d.message == "0/2 nodes are available: injected status."


def test_prefilter_u_without_victims_reports_each_node() -> None:
    """Same PreFilter U, but the pod has priority 0: both nodes are dry-run and neither has a lower-priority
    pod, so the nested FitError counts them as `No preemption victims found for incoming pod`."""
    snap = snapshot_of(
        node("n1", cpu="2"),
        node("n2", cpu="2"),
        pod("low", node_name="n1", cpu="1500m", priority=0),
        pod("p", cpu="1", priority=0),
    )
    pl = fake("Gate", snap, Inject(pre_filter=U))
    preemption = DefaultPreemption(Handle(snap, snap.dialect, {}))
    fw = framework_with(snap, pre_filter=[pl], filter=[pl], post_filter=[preemption])
    d = fw.schedule(next(p for p in snap.pending if p.name == "p"))
    assert d.message == (
        "0/2 nodes are available: injected status. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_prefilter_u_without_any_filter_gives_the_no_victim_error() -> None:
    """PreFilter U and no Filter plugin at all: on n1 the dry run removes `low`, the (empty) filters pass, and
    reprieving `low` passes too, so SelectVictimsOnNode succeeds with no victim. DryRunPreemption turns that
    into the error `expected at least one victim pod on node "n1"`; with no candidate, Preempt returns it as an
    Error, DefaultPreemption prefixes `preemption: ` and RunPostFilterPlugins stops there."""
    snap = _cluster("v1.34.1")
    pl = _pre("Gate", U, "gate says U", snap)
    preemption = DefaultPreemption(Handle(snap, snap.dialect, {}))
    fw = framework_with(snap, pre_filter=[pl], filter=[], post_filter=[preemption])
    d = fw.schedule(next(p for p in snap.pending if p.name == "p"))
    assert d.postfilter is not None and d.postfilter.code == Code.ERROR
    assert d.message == (
        '0/2 nodes are available: gate says U. preemption: expected at least one victim pod on node "n1"'
    )
