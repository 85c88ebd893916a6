"""kdiagnose's fast paths agree with the plain ones on varied generated clusters (tests/varied.py).

Each fast path (a memo shared by pods with the same terms, an index adjusted from a what-if's parent, ...)
is compared with the computation it replaces, and the whole `-o json` document with remedies is compared
with the one the plain paths give.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.model.objects import Node
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.remedies import scale_pool, whatif
from kdiagnose.remedies.whatif import with_bound
from kdiagnose.report.json import report_document
from kdiagnose.scheduler.plugins.interpodaffinity import filtering
from kdiagnose.scheduler.plugins.interpodaffinity.terms import merge_namespaces, pod_terms
from tests.varied import varied_snapshot

SEEDS = (1, 2, 3)


def _fresh(snap: Snapshot) -> Snapshot:
    """The same snapshot without its parent or caches: every index rebuilt from its own nodes."""
    copy = Snapshot.__new__(Snapshot)
    copy.__dict__.update(snap.__dict__)
    copy.parent = None
    copy.cache = {}
    return copy


def _terms(snap: Snapshot, pod: Any) -> tuple[Any, Any]:
    t = pod_terms(pod)
    return (
        tuple(merge_namespaces(snap, x) for x in t.required_affinity),
        tuple(merge_namespaces(snap, x) for x in t.required_anti_affinity),
    )


def _remove_some(s: Snapshot) -> Snapshot:
    bound = [p for p in s.pods if p.node_name]
    return s.derive(remove_pods=bound[::7])


def _relabel(s: Snapshot) -> Snapshot:
    ni = s.node_infos[3]
    raw = {"metadata": {"name": ni.name, "labels": {**ni.node.labels, "app": "x"}}, "status": {}}
    return s.derive(node_changes={ni.name: Node(raw)})


def _extra_node(s: Snapshot) -> Snapshot:
    import copy

    donor = s.node_infos[5]
    clones = []
    for p in donor.pods[:4]:
        c = copy.copy(p)
        c.node_name = "zz-simulated"
        clones.append(c)
    node = Node({"metadata": {"name": "zz-simulated", "labels": dict(donor.node.labels)}, "status": {}})
    node.labels["kubernetes.io/hostname"] = "zz-simulated"
    return s.derive(extra_nodes=[(node, clones)])


def _bind_pending(s: Snapshot) -> Snapshot:
    return with_bound(s, [(s.pending[0], s.node_infos[1].name), (s.pending[3], s.node_infos[9].name)])


CHANGES: list[Callable[[Snapshot], Snapshot]] = [_remove_some, _relabel, _extra_node, _bind_pending]


def _shape(matches: list[filtering.OwnMatch]) -> list[tuple[int, int, bool, tuple[int, ...]]]:
    return [(id(p), id(ni), a, hits) for p, ni, a, hits in matches]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("change", CHANGES, ids=["pods removed", "relabelled", "extra node", "bound"])
def test_own_term_matches_of_a_what_if_equal_a_fresh_scan(
    seed: int, change: Callable[[Snapshot], Snapshot]
) -> None:
    base = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    with_terms = [p for p in base.pending if any(_terms(base, p))]
    assert len(with_terms) >= 15
    for pod in with_terms:
        filtering.own_term_matches(base, *_terms(base, pod))
    derived = change(base)
    total = 0
    for pod in with_terms:
        aff, anti = _terms(base, pod)
        got = filtering.own_term_matches(derived, aff, anti)
        want = filtering._scan_own(_fresh(derived), aff, anti)
        assert _shape(got) == _shape(want)
        total += len(got)
        # The parent's memo is a scan of the parent.
        assert _shape(filtering.own_term_matches(base, aff, anti)) == _shape(
            filtering._scan_own(_fresh(base), aff, anti)
        )
    assert total > 0


def _plain_counts(snap: Snapshot, aff: Any, anti: Any) -> tuple[filtering.Counts, filtering.Counts]:
    """The counts a fresh PreFilter builds: one update per match, the example pods recorded as it goes."""
    a, b = filtering.Counts(), filtering.Counts()
    filtering._count(filtering._scan_own(snap, aff, anti), aff, anti, a, b, 1, True)
    return a, b


def _counted(c: filtering.Counts) -> tuple[dict[Any, int], dict[Any, list[str]]]:
    ws = c.witnesses
    return dict(c.counts), dict(ws if isinstance(ws, dict) else ws.materialize())


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("change", CHANGES, ids=["pods removed", "relabelled", "extra node", "bound"])
def test_own_term_counts_of_a_what_if_equal_fresh_counts(
    seed: int, change: Callable[[Snapshot], Snapshot]
) -> None:
    base = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    with_terms = [p for p in base.pending if any(_terms(base, p))]
    for pod in with_terms:
        filtering.own_term_counts(base, *_terms(base, pod))
    derived = change(base)
    pairs = read = 0
    for pod in with_terms:
        aff, anti = _terms(base, pod)
        got = filtering.own_term_counts(derived, aff, anti)
        want = _plain_counts(_fresh(derived), aff, anti)
        # Read pair by pair first, as the Filter reads them (before anything builds the whole map): the
        # pairs no changed node has come from the parent's examples.
        for g, w in zip(got, want, strict=True):
            ws = w.witnesses
            assert isinstance(ws, dict)
            for pair in {*ws, *g.counts, *w.counts, ("kubernetes.io/hostname", "no-such-node")}:
                assert g.witnesses.get(pair, []) == ws.get(pair, [])
                read += 1
        assert [_counted(c) for c in got] == [_counted(c) for c in want]
        pairs += len(got[0]) + len(got[1])
    assert pairs > 0 and read > 0


def _document(seed: int, version: str = "v1.34.1") -> dict[str, Any]:
    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed, version=version)
    doc = report_document(diagnose_snapshot(snap, source="varied.json"))
    assert doc["summary"]["unschedulable"] >= 5 and any(p["remedies"] for p in doc["pods"])
    return doc


@pytest.mark.parametrize("seed", SEEDS)
def test_report_with_fast_paths_equals_the_plain_paths(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _document(seed)
    # Plain: every PreFilter scans for the pod's own terms, nothing is shared between pods or what-ifs.
    monkeypatch.setattr(filtering, "own_term_matches", lambda s, a, b: filtering._scan_own(s, a, b))
    monkeypatch.setattr(filtering, "own_term_counts", _plain_counts)
    _plain_batches(monkeypatch)
    assert _document(seed) == fast


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_filters_equal_filter_per_node(seed: int) -> None:
    from kdiagnose.scheduler.framework import CycleState, Plugin
    from kdiagnose.scheduler.profiles import default_profile
    from kdiagnose.scheduler.runner import Framework

    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    fw = Framework(snap, default_profile(snap.dialect))
    batched = [pl for pl in fw.filter_plugins if type(pl).filter_many is not Plugin.filter_many]
    assert {pl.name for pl in batched} >= {
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "InterPodAffinity",
        "PodTopologySpread",
    }
    rejected = 0
    for pod in snap.pending:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        for pl in batched:
            want = [pl.filter(state, pod, ni) for ni in snap.node_infos]
            assert pl.filter_many(state, pod, snap.node_infos) == want
            rejected += sum(1 for s in want if not s.ok)
    assert rejected > 100


def _plain_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from kdiagnose.scheduler.framework import Plugin
    from kdiagnose.scheduler.plugins.imagelocality.image_locality import ImageLocality
    from kdiagnose.scheduler.plugins.interpodaffinity.plugin import InterPodAffinity
    from kdiagnose.scheduler.plugins.nodeaffinity.node_affinity import NodeAffinity
    from kdiagnose.scheduler.plugins.nodename.node_name import NodeName
    from kdiagnose.scheduler.plugins.noderesources.balanced_allocation import BalancedAllocation
    from kdiagnose.scheduler.plugins.noderesources.fit import Fit
    from kdiagnose.scheduler.plugins.nodeunschedulable.node_unschedulable import NodeUnschedulable
    from kdiagnose.scheduler.plugins.podtopologyspread.plugin import PodTopologySpread
    from kdiagnose.scheduler.plugins.tainttoleration.taint_toleration import TaintToleration

    batch_filters = (NodeAffinity, TaintToleration, Fit, InterPodAffinity, NodeName, NodeUnschedulable)
    for cls in (*batch_filters, PodTopologySpread):
        monkeypatch.setattr(cls, "filter_many", Plugin.filter_many)
    for scorer in (Fit, BalancedAllocation, ImageLocality, TaintToleration):
        monkeypatch.setattr(scorer, "score_many", Plugin.score_many)
    # What-if replays node by node (run_filters_with_nominated per node) instead of plugin-major.
    monkeypatch.setattr(whatif, "BATCH_FILTERS", False)
    # Relaxation what-ifs filter every node again (no verdict kept from the diagnosis).
    monkeypatch.setattr(whatif, "FAST_WHATIFS", False)
    # Every scale-up builds its own copy with the pool's first simulated node (no copy kept per pool).
    monkeypatch.setattr(scale_pool, "_first_node", _fresh_first_node)


def _fresh_first_node(ctx: Any, pool: Any, tpl: Any, key: Any) -> tuple[Any, Snapshot]:
    first = tpl.node(1)
    return first, scale_pool._derive(ctx, tpl, [first])


@pytest.mark.parametrize("seed", SEEDS)
def test_top_remedies_are_the_first_of_every_remedy(seed: int) -> None:
    from dataclasses import asdict

    from kdiagnose.remedies.engine import compute_remedies, compute_top_remedies
    from kdiagnose.scheduler.engine import Scheduler

    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    sched = Scheduler(snap)
    stopped = 0
    for pod in snap.pending:
        d = sched.diagnose(pod)
        if d.scheduled:
            continue
        every, notes = compute_remedies(snap, sched, d)
        for limit in (1, 3):
            top, top_notes, not_tried = compute_top_remedies(snap, sched, d, limit=limit)
            if not_tried:
                stopped += 1
                assert [asdict(r) for r in top] == [asdict(r) for r in every[:limit]]
                assert set(top_notes) <= set(notes)
            else:
                assert [asdict(r) for r in top] == [asdict(r) for r in every]
                assert top_notes == notes
    assert stopped >= 5  # the search did stop early for some pods


def test_the_cli_searches_the_top_remedies_and_says_so(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from kdiagnose.cli import app
    from tests.varied import varied_items

    dump = tmp_path / "varied.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": varied_items(40, 30, 60, 2)}))

    def run(*args: str) -> str:
        result = CliRunner().invoke(app, ["diagnose", str(dump), *args])
        assert result.exit_code == 1, result.stderr
        return result.stdout

    top = {p["pod"]: p for p in json.loads(run("-o", "json"))["pods"]}
    every = {p["pod"]: p for p in json.loads(run("-o", "json", "--all-remedies"))["pods"]}
    assert top.keys() == every.keys()
    cut = [k for k, p in top.items() if p["remediesTruncated"]]
    assert cut
    for key, p in top.items():
        assert every[key]["remediesTruncated"] is None
        if key in cut:
            assert p["remedies"] == every[key]["remedies"][:3]
            assert p["remediesTruncated"]["shown"] == 3
            assert p["remediesTruncated"]["all"] == "rerun with --all-remedies to try every kind"
            assert len(every[key]["remedies"]) >= 3
        else:
            assert p == every[key]
    text = run("--pod", cut[0], "--no-color")
    kinds = ", ".join(top[cut[0]]["remediesTruncated"]["kindsNotTried"])
    assert f"… more may exist: not tried: {kinds} (--all-remedies)" in " ".join(text.split())
    assert "more may exist" not in run("--pod", cut[0], "--no-color", "--all-remedies")


def _plain_json(report: Any) -> bytes:
    import orjson

    from kdiagnose.report import json as json_report

    data: bytes = orjson.dumps(
        json_report.report_document(report),
        default=json_report._default,
        option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2,
    )
    return data + b"\n"


def _streamed(report: Any) -> bytes:
    import io

    from kdiagnose.report import json as json_report

    buf = io.BytesIO()
    json_report.write(report, buf)
    return buf.getvalue()


def _written_while_diagnosed(snap: Snapshot, profiles: Any = None, source: str = "") -> tuple[bytes, bool]:
    """`kdiagnose -o json`'s way: each pod written as the pipeline finishes it (report.json.PodStream);
    the bytes, and whether the pods were streamed (no owner with two pending pods)."""
    import io

    from kdiagnose.report.json import PodStream

    buf = io.BytesIO()
    stream = PodStream(buf)
    report = diagnose_snapshot(snap, profiles, source=source, sink=stream)
    stream.finish(report)
    return buf.getvalue(), stream.started


@pytest.mark.parametrize("version", ["v1.31.8", "v1.34.1", "v1.37.2"])
@pytest.mark.parametrize("seed", SEEDS)
def test_streamed_json_is_the_plain_document_byte_for_byte(seed: int, version: str) -> None:
    from kdiagnose.report.json import _node_entries

    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed, version=version)
    report = diagnose_snapshot(snap, source="varied.json")
    # The text path is taken (not the plain fallback) for every pod here.
    assert all(_node_entries(pr, report.node_pools) is not None for pr in report.pods)
    plain = _plain_json(report)
    assert _streamed(report) == plain
    # Written while diagnosed (every pending pod its own owner here): the same bytes.
    written, streamed = _written_while_diagnosed(snap, source="varied.json")
    assert streamed and written == plain


def test_pods_of_one_owner_are_not_streamed_and_the_document_is_the_same() -> None:
    """Replicas of one owner are also placed one after another ("owners", before "pods" in the
    document): the pipeline then keeps every pod's report and the document is written at the end."""
    import copy

    from kdiagnose.load.files import RawObject
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.versions import dialect_for
    from tests.varied import varied_items

    items = varied_items(40, 30, 20, 1)
    pending = [o for o in items if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    # Two pending pods of the first one's ReplicaSet.
    twin = copy.deepcopy(pending[0])
    twin["metadata"]["name"] += "-twin"
    objs = [RawObject(o, "varied.json") for o in [*items, twin]]
    snap = build_snapshot(objs, dialect_for("v1.34.1"))
    report = diagnose_snapshot(snap, source="varied.json")
    assert report.sequential
    written, streamed = _written_while_diagnosed(snap, source="varied.json")
    assert not streamed and written == _plain_json(report)


def _golden_reports() -> list[Any]:
    import json

    from tests.golden_harness import all_cases

    return [c for c in all_cases() if not json.loads(c.read_text()).get("error")]


def test_streamed_json_of_every_golden_case_is_the_plain_document() -> None:
    import json

    from kdiagnose.load.files import LoadResult, _load_bytes
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.schedconfig import load_scheduler_config
    from kdiagnose.versions import dialect_for
    from tests.golden_harness import scenario_for

    cases = _golden_reports()
    assert len(cases) > 500
    pod_by_pod = 0
    for golden_json in cases:
        golden = json.loads(golden_json.read_text())
        scenario = scenario_for(golden_json)
        result = LoadResult()
        _load_bytes(scenario.read_bytes(), scenario.name, result, explicit=True)
        dialect = dialect_for(golden.get("k8s_version"))
        snap = build_snapshot(result.objects, dialect, list_kinds=result.list_kinds)
        config = golden_json.with_name(golden_json.stem + ".config.yaml")
        profiles = (
            list(load_scheduler_config(str(config), dialect, strict=True).profiles)
            if config.exists()
            else None
        )
        report = diagnose_snapshot(snap, profiles, source=scenario.name)
        plain = _plain_json(report)
        assert _streamed(report) == plain, golden_json
        written, streamed = _written_while_diagnosed(snap, profiles, source=scenario.name)
        assert written == plain, golden_json
        pod_by_pod += streamed
    assert pod_by_pod > 200  # most golden cases have pods of distinct owners: streamed pod by pod


@pytest.mark.parametrize(
    ("seed", "version", "strategy"),
    [
        (1, "v1.34.1", None),
        (2, "v1.36.5", None),
        (3, "v1.34.1", "MostAllocated"),
        (1, "v1.37.2", "RequestedToCapacityRatio"),
    ],
)
def test_batch_scores_equal_score_per_node(seed: int, version: str, strategy: str | None) -> None:
    """`score_many` (NodeResourcesFit, BalancedAllocation, ImageLocality inline their per-node loops) gives
    the values `score` gives node by node, for every pending pod over every node (v1.36+ scores
    BalancedAllocation's improvement; MostAllocated and RequestedToCapacityRatio configurations)."""
    import dataclasses

    from kdiagnose.scheduler import names
    from kdiagnose.scheduler.framework import CycleState, Plugin
    from kdiagnose.scheduler.profiles import default_profile
    from kdiagnose.scheduler.runner import Framework

    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed, version=version)
    profile = default_profile(snap.dialect)
    if strategy is not None:
        args: dict[str, Any] = {"type": strategy}
        if strategy == "RequestedToCapacityRatio":
            args["requestedToCapacityRatio"] = {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
            }
        profile = dataclasses.replace(
            profile, plugin_args={**profile.plugin_args, names.NODE_RESOURCES_FIT: {"scoringStrategy": args}}
        )
    fw = Framework(snap, profile)
    batched = [pl for pl, _ in fw.score_plugins if type(pl).score_many is not Plugin.score_many]
    assert {pl.name for pl in batched} >= {
        names.NODE_RESOURCES_FIT,
        names.NODE_RESOURCES_BALANCED_ALLOCATION,
        names.IMAGE_LOCALITY,
    }
    distinct: set[int] = set()
    for pod in snap.pending:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        for pl in fw.pre_score_plugins:
            pl.pre_score(state, pod, snap.node_infos)
        for pl in batched:
            want = [pl.score(state, pod, ni) for ni in snap.node_infos]
            values, error = pl.score_many(state, pod, snap.node_infos)
            assert values == [v for v, _ in want], pl.name
            assert error is None and all(st.ok for _, st in want)
            distinct.update(values)
    assert len(distinct) > 20  # the scores vary: the comparison is not between constants


@pytest.mark.parametrize("version", ["v1.35.4", "v1.36.5"])
def test_batch_scores_follow_pods_added_and_removed_after_a_score(version: str) -> None:
    """The cpu/memory columns the batch scorers keep on each NodeInfo (fit.cpu_memory) are dropped when a
    pod is added to or removed from the node: scores computed after the change equal `score` node by node,
    and differ from those before it."""
    from kdiagnose.scheduler import names
    from kdiagnose.scheduler.framework import CycleState
    from kdiagnose.scheduler.profiles import default_profile
    from kdiagnose.scheduler.runner import Framework

    snap = varied_snapshot(nodes=20, pods_per_node=10, pending=4, seed=SEEDS[0], version=version)
    fw = Framework(snap, default_profile(snap.dialect))
    scorers = [
        pl
        for pl, _ in fw.score_plugins
        if pl.name in (names.NODE_RESOURCES_FIT, names.NODE_RESOURCES_BALANCED_ALLOCATION)
    ]
    assert len(scorers) == 2
    pod, heavy = snap.pending[0], snap.pending[1]
    nodes = snap.node_infos

    def scores() -> dict[str, list[int]]:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        for pre in fw.pre_score_plugins:
            pre.pre_score(state, pod, nodes)
        out: dict[str, list[int]] = {}
        for pl in scorers:
            values, error = pl.score_many(state, pod, nodes)
            assert error is None
            assert values == [pl.score(state, pod, ni)[0] for ni in nodes], pl.name
            out[pl.name] = values
        return out

    before = scores()
    for ni in nodes:
        ni.add_pod(heavy)
    added = scores()
    assert added != before
    for ni in nodes:
        ni.remove_pod(heavy)
    assert scores() == before


@pytest.mark.parametrize("seed", SEEDS)
def test_taint_and_cordon_batches_equal_the_per_node_verdicts_on_nodes_of_any_snapshot(seed: int) -> None:
    """TaintToleration's and NodeUnschedulable's batch calls (taint classes computed once per snapshot) on
    nodes the plugin's snapshot does not hold (what-if and simulated nodes, with taint lists equal to a
    snapshot node's and new ones) give the verdicts and scores `filter` and `score` give node by node, in
    any order."""
    import random

    from kdiagnose.model.objects import Taint
    from kdiagnose.model.snapshot import NodeInfo
    from kdiagnose.remedies.whatif import simulated_node
    from kdiagnose.scheduler import names
    from kdiagnose.scheduler.framework import CycleState
    from kdiagnose.scheduler.profiles import default_profile
    from kdiagnose.scheduler.runner import Framework

    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    other = varied_snapshot(nodes=12, pods_per_node=2, pending=0, seed=seed + 10)
    tainted = next(ni for ni in snap.node_infos if ni.node.taints)
    extra = [
        NodeInfo(simulated_node("sim-same", tainted.node.labels, tainted.node.taints, {"cpu": 4000})),
        NodeInfo(simulated_node("sim-new", {}, [Taint("k", "v", "NoSchedule")], {"cpu": 4000})),
        NodeInfo(simulated_node("sim-soft", {}, [Taint("soft", "", "PreferNoSchedule")], {"cpu": 4000})),
        NodeInfo(simulated_node("sim-none", {}, [], {"cpu": 4000})),
    ]
    cordoned = NodeInfo(simulated_node("sim-cordoned", {}, [], {"cpu": 4000}))
    cordoned.node.unschedulable = True
    nodes = [*snap.node_infos, *other.node_infos, *extra, cordoned]
    random.Random(seed).shuffle(nodes)
    fw = Framework(snap, default_profile(snap.dialect))
    plugins = {pl.name: pl for pl in fw.filter_plugins}
    taint, cordon = plugins[names.TAINT_TOLERATION], plugins[names.NODE_UNSCHEDULABLE]
    scorer = next(pl for pl, _ in fw.score_plugins if pl.name == names.TAINT_TOLERATION)
    rejected = {names.TAINT_TOLERATION: 0, names.NODE_UNSCHEDULABLE: 0}
    scored = 0
    for pod in snap.pending:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        for pl in (taint, cordon):
            want = [pl.filter(state, pod, ni) for ni in nodes]
            assert pl.filter_many(state, pod, nodes) == want, pl.name
            rejected[pl.name] += sum(1 for st in want if not st.ok)
        scorer.pre_score(state, pod, nodes)
        values, error = scorer.score_many(state, pod, nodes)
        assert error is None and values == [scorer.score(state, pod, ni)[0] for ni in nodes]
        scored += sum(values)
    assert all(rejected.values()) and scored > 0  # rejections and soft-taint counts were compared


@pytest.mark.parametrize("seed", SEEDS)
def test_taint_and_cordon_columns_of_the_snapshot_list_follow_its_changes(seed: int) -> None:
    """On the snapshot's own node list TaintToleration and NodeUnschedulable answer from a column made
    once per snapshot (each node's taint class, the cordoned positions): the verdicts are filter's node by
    node, one Status per taint class, and a list grown since (a node appended) or another list is judged
    afresh."""
    from kdiagnose.model.objects import Taint
    from kdiagnose.model.snapshot import NodeInfo
    from kdiagnose.remedies.whatif import simulated_node
    from kdiagnose.scheduler import names
    from kdiagnose.scheduler.framework import CycleState
    from kdiagnose.scheduler.profiles import default_profile
    from kdiagnose.scheduler.runner import Framework

    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    snap.node_infos[3].node.unschedulable = True
    snap.node_infos[17].node.unschedulable = True
    fw = Framework(snap, default_profile(snap.dialect))
    plugins = {pl.name: pl for pl in fw.filter_plugins}
    taint, cordon = plugins[names.TAINT_TOLERATION], plugins[names.NODE_UNSCHEDULABLE]
    rejected = {names.TAINT_TOLERATION: 0, names.NODE_UNSCHEDULABLE: 0}

    def check(nodes: list[NodeInfo]) -> None:
        for pod in snap.pending:
            state = CycleState()
            fw.run_pre_filter(state, pod)
            for pl in (taint, cordon):
                got = pl.filter_many(state, pod, nodes)
                assert got == [pl.filter(state, pod, ni) for ni in nodes], pl.name
                rejected[pl.name] += sum(1 for st in got if not st.ok)
            # One Status per distinct taint list (what the reports group by), none shared across two.
            by_taints: dict[tuple[Taint, ...], set[int]] = {}
            for ni, st in zip(nodes, taint.filter_many(state, pod, nodes), strict=True):
                if not st.ok:
                    by_taints.setdefault(tuple(ni.node.taints), set()).add(id(st))
            assert all(len(ids) == 1 for ids in by_taints.values())
            assert len({i for ids in by_taints.values() for i in ids}) == len(by_taints)

    check(snap.node_infos)
    assert all(rejected.values())
    # The same list object, one node longer (a taint list no class was made for, and a cordoned node).
    snap.node_infos.append(
        NodeInfo(simulated_node("late", {}, [Taint("late", "x", "NoExecute")], {"cpu": 4000}))
    )
    late = NodeInfo(simulated_node("late-cordoned", {}, [], {"cpu": 4000}))
    late.node.unschedulable = True
    snap.node_infos.append(late)
    before = dict(rejected)
    check(snap.node_infos)
    assert rejected[names.NODE_UNSCHEDULABLE] > 2 * before[names.NODE_UNSCHEDULABLE]
    check(snap.node_infos[5:])  # another list: the per-node path


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_what_if_replay_equals_the_node_by_node_replay(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`filter_replay` filters plugin-major (the runner's `_filter_nodes`): the same verdict per node, in
    the order asked, as running every filter node by node; on the snapshot and on a what-if copy."""
    from kdiagnose.scheduler.engine import Scheduler

    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    sched = Scheduler(snap)
    some = [ni.name for ni in snap.node_infos[::-3]] + ["no-such-node"]
    rejected = 0
    for s in (snap, _remove_some(snap)):
        for pod in s.pending:
            for nodes in (None, some):
                monkeypatch.setattr(whatif, "BATCH_FILTERS", True)
                fast = whatif.filter_replay(s, sched, pod, nodes)
                monkeypatch.setattr(whatif, "BATCH_FILTERS", False)
                plain = whatif.filter_replay(s, sched, pod, nodes)
                assert list(fast.verdicts.items()) == list(plain.verdicts.items())
                assert fast.feasible == plain.feasible and fast.prefilter == plain.prefilter
                rejected += sum(1 for v in plain.verdicts.values() if not v.ok)
    assert rejected > 1000


def _same_replay(a: Any, b: Any) -> bool:
    """The same verdicts in the same node order, the same feasible nodes and PreFilter status."""
    return (
        list(a.verdicts.items()) == list(b.verdicts.items())
        and a.feasible == b.feasible
        and a.prefilter == b.prefilter
    )


@pytest.mark.parametrize("seed", (*SEEDS, 4, 5))
def test_what_ifs_on_the_diagnosis_verdicts_equal_the_full_replay(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every what-if that names the plugins its change can affect (relax-affinity, right-size; whatif._refilter:
    only those plugins re-run on the diagnosis's verdicts) gives the verdicts, in node order, that filtering
    every node again gives."""
    from kdiagnose.remedies.engine import compute_remedies
    from kdiagnose.scheduler.engine import Scheduler
    from kdiagnose.scheduler.framework import Code
    from kdiagnose.scheduler.profiles import default_profile

    plain = whatif.filter_replay
    calls = {"fast": 0, "changed": 0, "feasible": 0}
    # Collected, not asserted in the wrapper: the remedy engine turns a kind's exception into a note.
    wrong: list[str] = []

    def both(snapshot: Any, scheduler: Any, pod: Any, nodes: Any = None, since: Any = None) -> Any:
        got = plain(snapshot, scheduler, pod, nodes, since)
        if since is not None:
            monkeypatch.setattr(whatif, "FAST_WHATIFS", False)
            want = plain(snapshot, scheduler, pod, nodes)
            monkeypatch.setattr(whatif, "FAST_WHATIFS", True)
            if not _same_replay(got, want):
                wrong.append(pod.key)
            calls["fast"] += 1
            base = since[0].verdicts
            calls["changed"] += sum(1 for k, v in want.verdicts.items() if base.get(k) != v)
            calls["feasible"] += len(want.feasible)
        return got

    monkeypatch.setattr(whatif, "filter_replay", both)
    snap = varied_snapshot(nodes=40, pods_per_node=30, pending=60, seed=seed)
    scheduler = Scheduler(snap, [default_profile(snap.dialect)])
    for pod in snap.pending:
        d = scheduler.diagnose(pod)
        if d.feasible or pod.raw is None or not d.verdicts:
            continue
        assert all(s.code is not Code.SUCCESS for s in d.verdicts.values())
        compute_remedies(snap, scheduler, d)
    assert wrong == []
    # The what-ifs ran, and relaxed verdicts differ from the diagnosis's (the test is not vacuous).
    assert calls["fast"] >= 3 and calls["changed"] > 0


@pytest.mark.parametrize("version", ["v1.31.8", "v1.34.1", "v1.37.2"])
@pytest.mark.parametrize("order", ["default", "shuffled"])
def test_kept_verdicts_equal_the_full_replay_where_the_first_failing_plugin_moves(
    version: str, order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """whatif._refilter keeps the verdicts of the Filter plugins a change does not touch and re-runs the
    others: on clusters where relaxing a rule or cutting requests moves a node's first failing plugin to
    one the change does not touch (InterPodAffinity, NodePorts, Fit after a relaxed NodeAffinity) or to one
    it does (PodTopologySpread counting the nodes a relaxed selector lets in), in three releases and in a
    configured Filter order, the verdicts are those of filtering every node again."""
    import copy
    import random

    from kdiagnose.load.files import RawObject
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.remedies.engine import compute_remedies
    from kdiagnose.scheduler.engine import Scheduler
    from kdiagnose.scheduler.profiles import default_profile
    from kdiagnose.versions import dialect_for
    from tests.whatif_clusters import whatif_items

    plain, refilter = whatif.filter_replay, whatif._refilter
    calls = {"kept": 0, "changed": 0}
    wrong: list[str] = []  # collected: the remedy engine turns a kind's exception into a note

    def counted(*args: Any) -> Any:
        got = refilter(*args)
        calls["kept"] += got is not None
        return got

    def both(snapshot: Any, scheduler: Any, pod: Any, nodes: Any = None, since: Any = None) -> Any:
        got = plain(snapshot, scheduler, pod, nodes, since)
        if since is not None:
            monkeypatch.setattr(whatif, "FAST_WHATIFS", False)
            want = plain(snapshot, scheduler, pod, nodes)
            monkeypatch.setattr(whatif, "FAST_WHATIFS", True)
            if not _same_replay(got, want):
                wrong.append(pod.key)
            calls["changed"] += sum(1 for k, v in want.verdicts.items() if since[0].verdicts.get(k) != v)
        return got

    monkeypatch.setattr(whatif, "filter_replay", both)
    monkeypatch.setattr(whatif, "_refilter", counted)
    for seed in range(6):
        items = whatif_items(seed)
        snap = build_snapshot([RawObject(o, "whatif.json") for o in items], dialect_for(version))
        profile = copy.deepcopy(default_profile(snap.dialect))
        if order == "shuffled":
            random.Random(seed).shuffle(profile.filter)
        scheduler = Scheduler(snap, [profile])
        for pod in snap.pending:
            d = scheduler.diagnose(pod)
            if not d.scheduled and d.handled:
                compute_remedies(snap, scheduler, d)
    assert wrong == []
    # The kept-verdict path served the what-ifs, and their verdicts differ from the diagnosis's.
    assert calls["kept"] >= 50 and calls["changed"] > 100
