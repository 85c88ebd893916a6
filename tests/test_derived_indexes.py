"""A derived snapshot's pod indexes (adjusted from its parent's, helper/spread.py) equal a rebuild.

Remedies' what-if replays derive thousands of snapshots; rebuilding the pods-by-namespace and label
indexes for each was most of their cost at 5,000 nodes. These tests compare the adjusted index with one
built from scratch on the same derived snapshot, for every kind of change derive() and with_bound make.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.remedies.whatif import with_bound
from kdiagnose.scheduler.plugins.helper.spread import _label_index, pods_by_namespace
from kdiagnose.versions import dialect_for
from tests.golden_harness import FIXTURES

CASE = FIXTURES / "golden" / "cluster-eks-large-mixed.yaml"


def _base() -> Snapshot:
    res = load_paths([str(CASE)])
    snap = build_snapshot(res.objects, dialect_for("v1.34.1"), list_kinds=res.list_kinds)
    pods_by_namespace(snap)
    for ns in {p.namespace for p in snap.pods}:
        _label_index(snap, ns)
    return snap


def _shape(idx: dict[str, list[tuple[object, object]]]) -> dict[str, list[tuple[int, int]]]:
    return {ns: [(id(p), id(ni)) for p, ni in items] for ns, items in idx.items() if items}


def _fresh(snap: Snapshot) -> Snapshot:
    copy = Snapshot.__new__(Snapshot)
    copy.__dict__.update(snap.__dict__)
    copy.parent = None
    copy.cache = {}
    return copy


def _remove_two(s: Snapshot) -> Snapshot:
    bound = [p for p in s.pods if p.node_name]
    return s.derive(remove_pods=bound[:1] + bound[-1:])


def _relabel(s: Snapshot) -> Snapshot:
    ni = next(ni for ni in s.node_infos if ni.pods)
    raw = {"metadata": {"name": ni.name, "labels": {**ni.node.labels, "extra": "x"}}, "status": {}}
    return s.derive(node_changes={ni.name: Node(raw)})


def _extra_node(s: Snapshot) -> Snapshot:
    donor = next(ni for ni in s.node_infos if ni.pods)
    clone = donor.pods[0].__class__.__new__(donor.pods[0].__class__)
    for slot in donor.pods[0].__slots__:
        if hasattr(donor.pods[0], slot):
            setattr(clone, slot, getattr(donor.pods[0], slot))
    node = Node({"metadata": {"name": "zz-simulated", "labels": dict(donor.node.labels)}, "status": {}})
    clone.node_name = "zz-simulated"
    return s.derive(extra_nodes=[(node, [clone])])


def _bind_pending(s: Snapshot) -> Snapshot:
    target = next(ni for ni in s.node_infos if ni.pods)
    return with_bound(s, [(s.pending[0], target.name)])


@pytest.mark.parametrize(
    "change",
    [_remove_two, _relabel, _extra_node, _bind_pending],
    ids=["pods removed", "node relabelled", "simulated node added", "pending pod bound"],
)
def test_derived_index_equals_rebuild(change: Callable[[Snapshot], Snapshot]) -> None:
    base = _base()
    derived = change(base)
    want = pods_by_namespace(_fresh(derived))
    got = pods_by_namespace(derived)
    assert _shape(got) == _shape(want)
    for ns in want:
        fresh_labels = _label_index(_fresh(derived), ns)
        got_labels = _label_index(derived, ns)
        assert {k: [(id(p), id(n)) for p, n in v] for k, v in got_labels.items()} == {
            k: [(id(p), id(n)) for p, n in v] for k, v in fresh_labels.items()
        }
    # The parent's own index is untouched.
    assert _shape(pods_by_namespace(base)) == _shape(pods_by_namespace(_fresh(base)))


def test_binding_into_a_derived_snapshot_leaves_the_parent_index_alone() -> None:
    base = _base()
    before = _shape(pods_by_namespace(base))
    derived = base.fork()
    derived.bind(derived.pending[0], derived.node_infos[0].name)
    child = base.derive()
    pods_by_namespace(child)
    child.bind(child.pending[0], child.node_infos[0].name)
    assert _shape(pods_by_namespace(base)) == before


ANTI_CASE = FIXTURES / "golden" / "cluster-gke-large-mixed.yaml"


@pytest.mark.parametrize(
    "change",
    [_remove_two, _relabel, _extra_node, _bind_pending],
    ids=["pods removed", "node relabelled", "simulated node added", "pending pod bound"],
)
def test_derived_existing_anti_affinity_matches_equal_recomputation(
    change: Callable[[Snapshot], Snapshot],
) -> None:
    from kdiagnose.scheduler.plugins.interpodaffinity import filtering

    res = load_paths([str(ANTI_CASE)])
    base = build_snapshot(res.objects, dialect_for("v1.34.1"), list_kinds=res.list_kinds)
    total = 0
    for pod in base.pending:
        filtering.existing_anti_matches(base, pod, base.namespace_labels(pod.namespace))
    derived = change(base)
    for pod in base.pending:
        labels = base.namespace_labels(pod.namespace)
        got = filtering.existing_anti_matches(derived, pod, labels)
        want = filtering.existing_anti_matches(_fresh(derived), pod, labels)
        assert [(id(n), id(p), t.describe()) for n, p, t in got] == [
            (id(n), id(p), t.describe()) for n, p, t in want
        ]
        total += len(got)
    assert total > 0  # the case has existing pods whose anti-affinity matches pending pods


@pytest.mark.parametrize(
    "change",
    [_remove_two, _relabel, _extra_node, _bind_pending, lambda s: s.derive()],
    ids=["pods removed", "node relabelled", "simulated node added", "pending pod bound", "plain copy"],
)
def test_derived_node_lists_and_classes_equal_a_rebuild(change: Callable[[Snapshot], Snapshot]) -> None:
    """derive() copies the parent's node list and name index as they are when no NodeInfo is replaced,
    and PodTopologySpread's node classes of a snapshot with nodes added are the parent's extended: the
    same NodeInfos in the same order, the same name index (iteration order too) and the same classes as
    building them over the derived snapshot's nodes."""
    from kdiagnose.scheduler.plugins.podtopologyspread.filtering import _node_classes, _NodeClasses

    base = _base()
    keys = (("topology.kubernetes.io/zone",), ("kubernetes.io/arch",), True)
    _node_classes(base, *keys)  # the parent's, for the derived snapshot to extend
    derived = change(base)
    assert list(derived.node_info_by_name.items()) == [(ni.name, ni) for ni in derived.node_infos]
    if derived.node_cache is base.node_cache or derived.node_base is not None:  # no node replaced
        first = derived.node_infos[: len(base.node_infos)]
        assert [id(ni.node) for ni in first] == [id(ni.node) for ni in base.node_infos]
    got = _node_classes(derived, *keys)
    want = _NodeClasses(derived.node_infos, *keys)
    for attr in ("class_of", "names", "values", "index"):
        assert getattr(got, attr) == getattr(want, attr), attr
    # A class's representative is read for its node only (a NodeInfo cloned since is the same node).
    assert [id(ni.node) for ni in got.reps] == [id(ni.node) for ni in want.reps]
    if derived.node_base is not None:  # extended, not built: the parent's classes are left as they were
        parent = _node_classes(base, *keys)
        assert len(parent.names) == len(base.node_infos) < len(got.names)
    # The parent's own lists are untouched.
    assert list(base.node_info_by_name) == [ni.name for ni in base.node_infos]


def _pod_copy(pod: Pod, name: str) -> Pod:
    clone = pod.__class__.__new__(pod.__class__)
    for slot in pod.__slots__:
        if hasattr(pod, slot):
            setattr(clone, slot, getattr(pod, slot))
    clone.name = name
    return clone


def test_a_swapped_copys_pod_list_is_its_parents_at_derive_time() -> None:
    """derive(replace_pod=...) makes the copy's pod list when it is first read: it is still the parent's
    list as it was when the copy was made (without the swapped pod, then the new one and the pods of added
    nodes), whatever the parent binds or replaces afterwards, also for a copy of a copy."""
    snap = _base()
    old, repl = snap.pending[0], _pod_copy(snap.pending[0], "whatif")
    donor = next(ni for ni in snap.node_infos if ni.pods)
    daemon = _pod_copy(donor.pods[0], "daemon")
    daemon.node_name = "zz-simulated"
    node = Node({"metadata": {"name": "zz-simulated", "labels": dict(donor.node.labels)}, "status": {}})
    want = [p for p in snap.pods if p is not old] + [repl, daemon]
    child = snap.derive(replace_pod=(old, repl), extra_nodes=[(node, [daemon])])
    grandchild = child.derive(replace_pod=(repl, old))
    late = snap.derive(replace_pod=(old, repl))
    # The parent changes after the copies were made: a new pod bound into it (appended in place), read
    # by one copy; then a pod removed (its list replaced), read by the others.
    snap.bind(_pod_copy(old, "late"), donor.name, new=True)
    assert [id(p) for p in late.pods] == [id(p) for p in want[:-1]]
    snap.remove_pods([p for p in snap.pods if p.node_name][:1])
    assert [id(p) for p in child.pods] == [id(p) for p in want]
    assert child.pending.count(repl) == 1 and old not in child.pending
    assert [id(p) for p in grandchild.pods] == [id(p) for p in want if p is not repl] + [id(old)]
    # A second swap on the same parent (its position index) gives its own list.
    again = snap.derive(replace_pod=(old, repl))
    assert [id(p) for p in again.pods] == [id(p) for p in snap.pods if p is not old] + [id(repl)]
