"""The per-pod replay's class and batch fast paths (issue #17, mass-pending) against the plain node-by-node
plugin calls: TaintToleration's filter and score per snapshot taint class, NodeUnschedulable and NodeName
in one pass, the runner's all-pass shortcut, and ScoreTable's column sums. Varied clusters in three
releases, with cordoned nodes, PreferNoSchedule/NoExecute taints and tolerating pods added to the
generated dump and pods naming a node, so every fast path meets both of its branches."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.objects import Taint
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.scheduler import names
from kdiagnose.scheduler.diagnosis import MAX_NODE_SCORE, ScoreTable
from kdiagnose.scheduler.framework import SUCCESS, CycleState, Plugin, Status
from kdiagnose.scheduler.profiles import default_profile
from kdiagnose.scheduler.runner import Framework
from kdiagnose.versions import dialect_for
from tests.varied import RawObject, varied_items

VERSIONS = ("v1.31.8", "v1.34.1", "v1.37.2")
SEEDS = (1, 2)


def _items(seed: int) -> list[dict[str, Any]]:
    items = varied_items(40, 30, 60, seed)
    nodes = [o for o in items if o.get("kind") == "Node"]
    pending = [o for o in items if o.get("kind") == "Pod" and not o["spec"].get("nodeName")]
    for i, node in enumerate(nodes):
        spec = node.setdefault("spec", {})
        taints = spec.setdefault("taints", [])
        if i % 7 == 3:
            spec["unschedulable"] = True
        if i % 5 == 1:
            taints.append({"key": "prefer", "value": f"v{i % 3}", "effect": "PreferNoSchedule"})
        if i % 4 == 2:
            taints.append({"key": "other", "value": "", "effect": "PreferNoSchedule"})
        if i % 11 == 5:
            taints.append({"key": "evict", "value": "now", "effect": "NoExecute"})
    for j, pod in enumerate(pending):
        tol = pod["spec"].setdefault("tolerations", [])
        if j % 6 == 0:
            tol.append(
                {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
            )
        if j % 4 == 1:
            tol.append({"key": "prefer", "operator": "Equal", "value": "v1"})
        if j % 9 == 2:
            tol.append({"key": "evict", "operator": "Exists"})
    return items


def _snapshot(seed: int, version: str) -> Snapshot:
    snap = build_snapshot([RawObject(o, "varied.json") for o in _items(seed)], dialect_for(version))
    assert any(ni.node.unschedulable for ni in snap.node_infos)
    return snap


def _copies(snap: Snapshot) -> list[NodeInfo]:
    """What-if style copies: new Node objects (one with its taints reassigned), unknown to the classes
    the plugins computed from the snapshot."""
    out: list[NodeInfo] = []
    for i, ni in enumerate(snap.node_infos[::3]):
        c = ni.clone()
        c.node = copy.copy(ni.node)
        if i % 2:
            c.node.taints = [*ni.node.taints, Taint("prefer", "v2", "PreferNoSchedule")]
        out.append(c)
    return out


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_class_and_batch_filters_equal_filter_per_node(seed: int, version: str) -> None:
    snap = _snapshot(seed, version)
    fw = Framework(snap, default_profile(snap.dialect))
    by_name = {pl.name: pl for pl in fw.filter_plugins}
    plugins = [
        by_name[x]
        for x in (names.NODE_UNSCHEDULABLE, names.NODE_NAME, names.TAINT_TOLERATION, names.NODE_AFFINITY)
    ]
    for pl in plugins:
        assert type(pl).filter_many is not Plugin.filter_many
    copies = _copies(snap)
    rejected: dict[str, int] = dict.fromkeys(by_name, 0)
    passed_all = 0
    for j, pending in enumerate(snap.pending):
        pod = pending
        if j % 10 == 7:
            # spec.nodeName on the pod being scheduled (a pod carrying it is bound in a dump, so the
            # cycle is given a copy): NodeName's per-node branch.
            pod = copy.copy(pending)
            pod.node_name = snap.node_infos[j % snap.num_nodes].name
        state = CycleState()
        fw.run_pre_filter(state, pod)
        for nodes in (snap.node_infos, copies, snap.node_infos[1::2] + copies[::2]):
            for pl in plugins:
                want = [pl.filter(state, pod, ni) for ni in nodes]
                assert pl.filter_many(state, pod, nodes) == want, pl.name
                rejected[pl.name] += sum(1 for s in want if not s.ok)
        # The runner's plugin-major pass (with its all-pass shortcut) against every filter node by node.
        got = fw._filter_nodes(state, pod, snap.node_infos)
        want_all = {ni.name: fw.run_filters(state, pod, ni) for ni in snap.node_infos}
        assert got == want_all
        assert list(got) == [ni.name for ni in snap.node_infos]
        passed_all += all(s is SUCCESS for s in got.values())
    for pl in plugins:
        assert rejected[pl.name] > 20, pl.name  # both branches of each fast path ran
    assert passed_all < len(snap.pending)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_taint_class_scores_equal_score_per_node(seed: int, version: str) -> None:
    snap = _snapshot(seed, version)
    fw = Framework(snap, default_profile(snap.dialect))
    pl = fw.plugins[names.TAINT_TOLERATION]
    assert type(pl).score_many is not Plugin.score_many
    copies = _copies(snap)
    distinct: set[int] = set()
    for pod in snap.pending:
        state = CycleState()
        # Before PreScore: the plain path's error, node by node.
        values, error = pl.score_many(state, pod, snap.node_infos)
        assert error is not None and error == pl.score(state, pod, snap.node_infos[0])[1]
        pl.pre_score(state, pod, snap.node_infos)
        for nodes in (snap.node_infos, copies):
            want = [pl.score(state, pod, ni) for ni in nodes]
            values, error = pl.score_many(state, pod, nodes)
            assert values == [v for v, _ in want]
            assert error is None and all(st.ok for _, st in want)
            distinct.update(values)
    assert distinct >= {0, 1, 2}


def _plain_totals(nodes: list[str], columns: list[tuple[int, dict[str, int]]]) -> dict[str, int]:
    totals = dict.fromkeys(nodes, 0)
    for weight, col in columns:
        for n, v in col.items():
            totals[n] += max(0, min(MAX_NODE_SCORE, v)) * weight
    return totals


def test_score_table_sums_equal_a_plain_sum() -> None:
    nodes = [f"n{i}" for i in range(7)]
    in_order = {n: i * 17 for i, n in enumerate(nodes)}
    shuffled = {n: 3 * i for i, n in reversed(list(enumerate(nodes)))}
    subset = {"n5": 40, "n1": 2}
    out_of_range = {n: (i - 3) * 60 for i, n in enumerate(nodes)}  # clamped to [0, 100]
    table = ScoreTable(nodes)
    columns = [(2, in_order), (1, shuffled), (3, subset), (5, out_of_range)]
    for i, (weight, col) in enumerate(columns):
        table.add(f"p{i}", weight, dict(col), dict(col))
        assert table.totals == _plain_totals(nodes, columns[: i + 1])
    assert list(table.totals) == nodes
    assert table["n6"].total == table.totals["n6"] == 2 * 100 + 18 + 5 * 100  # 102 and 180 clamped to 100
    assert table["n0"].plugins["p3"].score == 0
    with pytest.raises(KeyError):
        table.add("p9", 1, {"nope": 1}, {"nope": 1})
    empty = ScoreTable([])
    empty.add("p", 1, {}, {})
    assert empty.totals == {}


def test_shared_rejections_are_statuses_equal_to_the_plain_ones() -> None:
    """NodeUnschedulable shares one rejection between cordoned nodes; its content is the plain one."""
    snap = _snapshot(1, "v1.34.1")
    fw = Framework(snap, default_profile(snap.dialect))
    pl = fw.plugins[names.NODE_UNSCHEDULABLE]
    pod = next(
        p for p in snap.pending if not any(t.key == "node.kubernetes.io/unschedulable" for t in p.tolerations)
    )
    state = CycleState()
    out = pl.filter_many(state, pod, snap.node_infos)
    cordoned = [s for s, ni in zip(out, snap.node_infos, strict=True) if ni.node.unschedulable]
    want = Status.unresolvable("node(s) were unschedulable", details=({"unschedulable": True},))
    assert len(cordoned) > 1 and all(s == want for s in cordoned)
