"""Issue #17, mass-pending per-pod CPU: the fast paths of this round against the plain ones, on varied
generated clusters in three releases (see tests/varied.py), with pending pods given required pod affinity
and anti-affinity terms on zone and hostname keys so that every branch is met.

- InterPodAffinity's `filter_nodes` judges a domain's rejection once (`_Judge`): equal to `filter_node`
  per node, and the whole report equal with the memo off.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report.json import report_document
from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import CycleState
from kdiagnose.scheduler.plugins.interpodaffinity import filtering
from kdiagnose.scheduler.profiles import default_profile
from kdiagnose.scheduler.runner import _SKIP_KEY, Framework
from kdiagnose.versions import dialect_for
from tests.varied import RawObject, varied_items

VERSIONS = ("v1.31.8", "v1.34.1", "v1.37.2")
SEEDS = (1, 2)
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _term(key: str, app: str) -> dict[str, Any]:
    return {"topologyKey": key, "labelSelector": {"matchLabels": {"app": app}}}


def _items(seed: int) -> list[dict[str, Any]]:
    items = varied_items(40, 30, 60, seed)
    apps = sorted(
        {o["metadata"].get("labels", {}).get("app", "") for o in items if o.get("kind") == "Pod"} - {""}
    )
    pending = [o for o in items if o.get("kind") == "Pod" and not o["spec"].get("nodeName")]
    for j, pod in enumerate(pending):
        app = apps[j % len(apps)]
        aff = pod["spec"].setdefault("affinity", {})
        if j % 4 == 0:
            # Required affinity: on the zone (pods of the app everywhere), on no match at all, and on the
            # zone and the hostname for a rarer label (13 pods: only some nodes of a zone host one).
            if j % 24 == 0:
                terms = [_term(ZONE, "nothing-matches")]
            elif j % 8 == 0:
                rare = {"matchLabels": {"pod-template-hash": f"{j % 16:05x}"}}
                terms = [{"topologyKey": key, "labelSelector": rare} for key in (ZONE, HOST)]
            else:
                terms = [_term(ZONE, app)]
            aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": terms}
        if j % 3 == 1:
            # Required anti-affinity on the zone: every node of a zone with a matching pod, one domain.
            anti = aff.setdefault("podAntiAffinity", {}).setdefault(
                "requiredDuringSchedulingIgnoredDuringExecution", []
            )
            anti.append(_term(ZONE, app))
    return items


def _snapshot(seed: int, version: str) -> Snapshot:
    return build_snapshot([RawObject(o, "varied.json") for o in _items(seed)], dialect_for(version))


def _copies(snap: Snapshot) -> list[NodeInfo]:
    """What-if style node copies (new Node objects, one relabelled into another zone)."""
    out: list[NodeInfo] = []
    for i, ni in enumerate(snap.node_infos[::3]):
        c = ni.clone()
        c.node = copy.copy(ni.node)
        if i % 2:
            c.node.labels = {**ni.node.labels, ZONE: "elsewhere-1z"}
        out.append(c)
    return out


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_inter_pod_affinity_judged_per_domain_equals_filter_node(seed: int, version: str) -> None:
    snap = _snapshot(seed, version)
    fw = Framework(snap, default_profile(snap.dialect))
    pl = fw.plugins[names.INTER_POD_AFFINITY]
    copies = _copies(snap)
    seen = {"affinity": 0, "anti": 0, "shared": 0, "passed": 0}
    for pod in snap.pending:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        for nodes in (snap.node_infos, copies, snap.node_infos[1::2] + copies[::2]):
            want = [pl.filter(state, pod, ni) for ni in nodes]
            got = pl.filter_many(state, pod, nodes)
            assert got == want, pod.key
            reasons = [s.reasons for s in want if not s.ok]
            seen["affinity"] += sum(
                1 for r in reasons if r == (filtering.ERR_REASON_AFFINITY_RULES_NOT_MATCH,)
            )
            seen["anti"] += sum(
                1 for r in reasons if r == (filtering.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,)
            )
            seen["passed"] += sum(1 for s in want if s.ok)
            rejected = [s for s in got if not s.ok]
            seen["shared"] += len(rejected) - len({id(s) for s in rejected})
    # Both memoized branches ran, shared a Status between nodes, and nodes passed too.
    assert all(v > 20 for v in seen.values()), seen


def _document(seed: int, version: str) -> dict[str, Any]:
    return report_document(diagnose_snapshot(_snapshot(seed, version), source="varied.json"))


@pytest.mark.parametrize("version", VERSIONS)
def test_report_with_the_domain_memo_equals_the_plain_report(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _document(1, version)
    assert any(n["plugin"] == names.INTER_POD_AFFINITY for p in fast["pods"] for n in p["nodes"].values()), (
        "InterPodAffinity rejected some node"
    )
    monkeypatch.setattr(filtering, "MEMO_FILTER", False)
    assert _document(1, version) == fast


def _swapped(snap: Snapshot, old: Any) -> tuple[list[int], list[int]]:
    repl = copy.copy(old)
    new = snap.derive(replace_pod=(old, repl))
    want_pods = [p for p in snap.pods if p is not old] + [repl]
    want_pending = [p for p in snap.pending if p is not old] + [repl]
    assert [id(p) for p in new.pods] == [id(p) for p in want_pods]
    assert [id(p) for p in new.pending] == [id(p) for p in want_pending]
    return [id(p) for p in new.pods], [id(p) for p in new.pending]


def test_derived_pod_lists_with_the_position_index_equal_a_plain_filter() -> None:
    """derive(replace_pod=...) takes the pod's position from an index from the second swap on: the pod
    lists equal the plain identity filter, also after the list changed (bind, remove_pods), for a pod the
    list does not hold, and for a list that holds a pod twice (every occurrence goes, as before)."""
    snap = _snapshot(1, "v1.34.1")
    pending = list(snap.pending)
    for old in pending[:6]:
        _swapped(snap, old)
    assert snap._pod_pos is not None and snap._pod_pos[2] is not None  # the index was built and used
    # The list changes under the index: a bind appends (length changes), remove_pods replaces the list.
    snap.bind(pending[6], snap.node_infos[0].name)
    for old in pending[7:10]:
        _swapped(snap, old)
    snap.remove_pods([p for p in snap.pods if p.node_name][:5])
    for old in pending[10:13]:
        _swapped(snap, old)
    # A pod the snapshot does not hold (the list is copied whole) and a pod listed twice.
    stranger = copy.copy(pending[13])
    _swapped(snap, stranger)
    snap.pods.append(pending[14])
    for _ in range(3):
        new = snap.derive(replace_pod=(pending[14], copy.copy(pending[14])))
        assert sum(1 for p in new.pods if p is pending[14]) == 0
        assert len(new.pods) == len(snap.pods) - 2 + 1
    # A derived snapshot swaps on its own index.
    child = snap.derive(replace_pod=(pending[15], copy.copy(pending[15])))
    for old in pending[16:19]:
        _swapped(child, old)


def _spread_items(seed: int) -> list[dict[str, Any]]:
    """_items, with zone and hostname spread constraints on more pending pods, both inclusion policies
    honoured or ignored, and taints on some nodes (so nodeTaintsPolicy: Honor leaves nodes out)."""
    items = _items(seed)
    nodes = [o for o in items if o.get("kind") == "Node"]
    for i, node in enumerate(nodes):
        if i % 6 == 2:
            node.setdefault("spec", {}).setdefault("taints", []).append(
                {"key": "spread-test", "value": "x", "effect": "NoSchedule"}
            )
    pending = [o for o in items if o.get("kind") == "Pod" and not o["spec"].get("nodeName")]
    for j, pod in enumerate(pending):
        if j % 2:
            continue
        app = pod["metadata"].get("labels", {}).get("app", "web")
        c: dict[str, Any] = {
            "maxSkew": 1 + j % 3,
            "topologyKey": (ZONE, HOST)[j % 4 // 2],
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": app}},
        }
        if j % 3 == 0:
            c["nodeTaintsPolicy"] = "Honor"
        if j % 5 == 0:
            c["nodeAffinityPolicy"] = "Ignore"
        pod["spec"]["topologySpreadConstraints"] = [c] + ([{**c, "topologyKey": HOST}] if j % 8 == 4 else [])
        if j % 12 == 0:
            pod["spec"].setdefault("tolerations", []).append({"key": "spread-test", "operator": "Exists"})
    return items


def _what_ifs(snap: Snapshot) -> list[Snapshot]:
    """Derived copies that share the parent's node_cache (a pod swapped, pods removed) and that do not
    (a node relabelled, a node added)."""
    from kdiagnose.model.objects import Node

    pend = snap.pending[0]
    ni = snap.node_infos[3]
    raw = {"metadata": {"name": ni.name, "labels": {**ni.node.labels, ZONE: "moved-1z"}}, "status": {}}
    donor = snap.node_infos[5]
    extra = copy.copy(donor.node)
    extra.name = "extra-node"
    extra.labels = {**donor.node.labels, HOST: "extra-node"}
    return [
        snap.derive(replace_pod=(pend, copy.copy(pend))),
        snap.derive(remove_pods=[p for p in snap.pods if p.node_name][::5]),
        snap.derive(node_changes={ni.name: Node(raw)}),
        snap.derive(extra_nodes=[(extra, [])]),
    ]


def _spread_state(fw: Framework, pod: Any) -> Any:
    from kdiagnose.scheduler.plugins.podtopologyspread import filtering as spread

    state = CycleState()
    fw.run_pre_filter(state, pod)
    s = state.read(spread.PRE_FILTER_STATE_KEY)
    if s is None:
        return None
    return [list(c.items()) for c in s.counts], [c.paths for c in s.critical_paths]


def _spread_states_both_ways(
    seed: int, version: str, monkeypatch: pytest.MonkeyPatch, flag: str, times: int
) -> tuple[Snapshot, list[Snapshot], list[Any]]:
    """Every pending pod's PreFilter state (`times` PreFilters each) on a spread cluster and its what-if
    copies, with the filtering module's `flag` on, then off; asserts the two agree and returns them."""
    from kdiagnose.scheduler.plugins.podtopologyspread import filtering as spread

    snap = build_snapshot([RawObject(o, "varied.json") for o in _spread_items(seed)], dialect_for(version))
    snaps = [snap, *_what_ifs(snap)]
    states: list[list[Any]] = []
    for on in (True, False):
        monkeypatch.setattr(spread, flag, on)
        got: list[Any] = []
        for s in snaps:
            fw = Framework(s, default_profile(s.dialect))
            got += [_spread_state(fw, pod) for pod in s.pending for _ in range(times)]
        states.append(got)
    assert states[0] == states[1]
    counted = [x for x in states[0] if x is not None]
    # Zero-count domains were met (as were domains left out by each policy: the clusters' taints, both
    # inclusion policies honoured and ignored, hostname and zone keys).
    assert len(counted) > 20 * times and any(0 in dict(c).values() for st in counted for c in st[0])
    return snap, snaps, counted


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_spread_node_domains_remembered_per_node_set_equal_a_fresh_pass(
    seed: int, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kdiagnose.scheduler.plugins.podtopologyspread import filtering as spread

    # Twice: the second PreFilter of each pod reads the remembered domains.
    snap, snaps, _ = _spread_states_both_ways(seed, version, monkeypatch, "MEMO_DOMAINS", 2)
    assert snap.node_cache[spread._DOMAINS_KEY] is snaps[1].node_cache[spread._DOMAINS_KEY]
    assert spread._DOMAINS_KEY not in snaps[3].node_cache or snaps[3].node_cache is not snap.node_cache


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_spread_node_domains_decided_per_node_class_equal_the_per_node_pass(
    seed: int, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kdiagnose.scheduler.plugins.podtopologyspread import filtering as spread

    monkeypatch.setattr(spread, "MEMO_DOMAINS", False)  # every PreFilter computes the domains
    _spread_states_both_ways(seed, version, monkeypatch, "CLASS_DOMAINS", 1)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("seed", SEEDS)
def test_spread_batch_filter_equals_filter_per_node(seed: int, version: str) -> None:
    from kdiagnose.scheduler.plugins.podtopologyspread import filtering as spread_filtering

    snap = build_snapshot([RawObject(o, "varied.json") for o in _spread_items(seed)], dialect_for(version))
    fw = Framework(snap, default_profile(snap.dialect))
    pl = fw.plugins[names.POD_TOPOLOGY_SPREAD]
    copies = _copies(snap)
    for i, c in enumerate(copies[::4]):  # nodes without a constraint's key (the other key at every 2nd)
        c.node.labels = {k: v for k, v in c.node.labels.items() if k != (ZONE, HOST)[i % 2]}
    seen: dict[str, int] = {}
    for pod in snap.pending:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        if pl.name in state.read(_SKIP_KEY):
            continue  # no hard constraint: the runner skips its Filter
        for nodes in (snap.node_infos, copies, snap.node_infos[1::2] + copies[::2]):
            want = [pl.filter(state, pod, ni) for ni in nodes]
            assert pl.filter_many(state, pod, nodes) == want, pod.key
            for st in want:
                why = st.reasons[0] if st.reasons else "passed"
                seen[why] = seen.get(why, 0) + 1
    # Nodes passed, rejected for skew and, where a node lacks the key, for the missing label.
    assert set(seen) == {
        "passed",
        spread_filtering.ERR_REASON_CONSTRAINTS_NOT_MATCH,
        spread_filtering.ERR_REASON_NODE_LABEL_NOT_MATCH,
    }, seen


@pytest.mark.parametrize("version", VERSIONS)
def test_report_with_remembered_spread_domains_equals_the_plain_report(
    version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kdiagnose.scheduler.plugins.podtopologyspread import filtering as spread

    def doc() -> dict[str, Any]:
        snap = build_snapshot([RawObject(o, "varied.json") for o in _spread_items(2)], dialect_for(version))
        return report_document(diagnose_snapshot(snap, source="varied.json"))

    fast = doc()
    assert any(n["plugin"] == names.POD_TOPOLOGY_SPREAD for p in fast["pods"] for n in p["nodes"].values())
    monkeypatch.setattr(spread, "MEMO_DOMAINS", False)
    assert doc() == fast


def test_per_pod_collection_finds_each_pods_cycles_and_restores_the_collector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc
    import weakref

    from kdiagnose.load import gcpause

    monkeypatch.setattr(gcpause, "LITTLE_GARBAGE", 0)  # collecting every item throughout (no freeze mode)

    class Node:
        def __init__(self) -> None:
            self.me = self

    was = gc.isenabled()
    gc.enable()
    try:
        per = gcpause.PerItemGC()
        refs = []
        for _ in range(3):
            with per:
                assert not gc.isenabled()  # no collection inside a pod
                cyc = Node()
                refs.append(weakref.ref(cyc))
                del cyc
                assert refs[-1]() is not None  # only the collector frees a cycle
            assert gc.isenabled()
            assert refs[-1]() is None  # found by the collection after the pod
        # An older cycle (promoted past the young generations) is found by the periodic full collection.
        old = Node()
        ref = weakref.ref(old)
        gc.collect(1)  # old now sits in the oldest generation
        del old
        kept = Node()  # alive through the full collection: long-lived, so frozen after it
        for _ in range(gcpause.FULL_COLLECTION_EVERY):
            with per:
                pass
        assert ref() is None
        assert any(o is kept for o in gc.get_objects()) is False  # frozen objects are in no generation
        gc.unfreeze()
        assert any(o is kept for o in gc.get_objects())
        # Nested (a pod's text written inside its item): the outermost item collects and restores.
        with per:
            with per:
                pass
            assert not gc.isenabled()
        assert gc.isenabled()
        # With the collector off before (the load's pause), it stays off and nothing is collected.
        gc.disable()
        with per:
            pass
        assert not gc.isenabled()
        # A loop of one item (collect=False): off inside, back on after, its cycle left to a later collection.
        gc.enable()
        single = gcpause.PerItemGC(collect=False)
        with single:
            assert not gc.isenabled()
            cyc = Node()
            left = weakref.ref(cyc)
            del cyc
        assert gc.isenabled()
        assert left() is not None
        gc.collect()
        assert left() is None
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


def test_pipeline_diagnoses_each_pod_under_the_per_pod_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """diagnose_snapshot runs each pod inside PerItemGC (one entry per pod); the report is the one a run
    with the collector running on its thresholds gives."""
    import gc

    from kdiagnose import pipeline
    from kdiagnose.load import gcpause

    snap = _snapshot(2, "v1.34.1")
    entered: list[bool] = []
    real_enter = gcpause.PerItemGC.__enter__

    def enter(self: Any) -> None:
        real_enter(self)
        entered.append(gc.isenabled())

    monkeypatch.setattr(gcpause.PerItemGC, "__enter__", enter)
    fast = report_document(pipeline.diagnose_snapshot(snap, source="varied.json"))
    assert len(entered) == len(snap.pending) and not any(entered)  # one item per pod, diagnosed and written
    monkeypatch.setattr(gcpause.PerItemGC, "__enter__", lambda self: None)
    monkeypatch.setattr(gcpause.PerItemGC, "__exit__", lambda self, *exc: None)
    assert report_document(pipeline.diagnose_snapshot(_snapshot(2, "v1.34.1"), source="varied.json")) == fast


def test_a_loop_without_cycles_freezes_its_items_and_a_sample_with_cycles_ends_that() -> None:
    import gc
    import weakref

    from kdiagnose.load import gcpause

    class Node:
        def __init__(self) -> None:
            self.me = self

    def tracked(o: object) -> bool:
        return any(x is o for x in gc.get_objects())  # frozen objects are in no generation

    was = gc.isenabled()
    gc.enable()
    try:
        per = gcpause.PerItemGC()
        for _ in range(gcpause.WARMUP_ITEMS):
            assert not per.freezing
            with per:
                pass
        assert per.freezing  # the warm-up found no garbage
        kept: list[object] = []
        n = gcpause.WARMUP_ITEMS
        while (n + 1) % gcpause.SAMPLE_EVERY:  # items up to the next sample are frozen, not collected
            with per:
                cyc = Node()
                left = weakref.ref(cyc)
                del cyc
                kept.append([])
            n += 1
            assert gc.isenabled() and per.freezing
            assert left() is not None  # a frozen item's cycle is not found (the price, documented)
            assert not tracked(kept[-1])
        # The sample item finds its cycles: LITTLE_GARBAGE of them put the loop back to collecting.
        with per:
            cycles = [Node() for _ in range(gcpause.LITTLE_GARBAGE)]
            refs = [weakref.ref(c) for c in cycles]
            del cycles
        assert not per.freezing
        assert all(r() is None for r in refs)
        with per:
            cyc = Node()
            left = weakref.ref(cyc)
            del cyc
        assert left() is None  # collected after each item again
        # A warm-up that finds garbage never freezes.
        busy = gcpause.PerItemGC()
        for _ in range(gcpause.WARMUP_ITEMS + 2 * gcpause.SAMPLE_EVERY):
            with busy:
                for _ in range(gcpause.LITTLE_GARBAGE // gcpause.WARMUP_ITEMS + 1):
                    Node()
            assert not busy.freezing
        # collect=False: neither collected nor frozen.
        single = gcpause.PerItemGC(collect=False)
        with single:
            fresh: list[object] = []
        assert tracked(fresh) and not single.freezing
    finally:
        gc.unfreeze()
        if was:
            gc.enable()
        else:
            gc.disable()
