"""Sequential placement (kdiagnose/sequential.py) and the CI gate bind pods one after another on a fork of
the snapshot: Snapshot.remove_pods keeps the bound pods' indexes when it removes only pending pods, and finds
a few pods by identity instead of testing every pod. Both are compared here with the plain removal (every
cache cleared, every pod tested), on generated clusters whose pending pods are replicas of a few owners,
through the whole `-o json` document (the owners' one-after-another counts and fixes included)."""

from __future__ import annotations

import io
import json
import random
from typing import Any

import pytest

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.objects import Pod
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report.json import write
from kdiagnose.versions import dialect_for
from tests.varied import _generator


def _plain_remove_pods(self: Snapshot, pods: Any) -> None:
    """Snapshot.remove_pods as it was: every pod tested, every derived index dropped."""
    self.generation += 1
    gone = {id(p) for p in pods}
    for p in [p for p in self.pods if id(p) in gone]:
        ni = self.own_node_info(p.node_name) if p.node_name else None
        if ni is not None:
            ni.remove_pod(p)
    self.pods = [p for p in self.pods if id(p) not in gone]
    self.pending = [p for p in self.pending if id(p) not in gone]
    self.cache.clear()


def _document(items: list[dict[str, Any]], version: str, jobs: int = 1) -> bytes:
    snap = build_snapshot([RawObject(o, "owners.json") for o in items], dialect_for(version))
    buf = io.BytesIO()
    write(diagnose_snapshot(snap, None, source="owners.json", jobs=jobs), buf)
    return buf.getvalue()


@pytest.mark.parametrize(("seed", "version"), [(1, "v1.34.1"), (2, "v1.37.2"), (3, "v1.31.8")])
def test_placements_one_after_another_match_the_plain_removal(
    seed: int, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three ReplicaSets of 30 replicas: one too big for any node, one spread over hostnames (each placed
    # replica counts for the next: some fit, not all), one with anti-affinity to another app.
    items: list[dict[str, Any]] = _generator().generate(40, 20, 90, seed, 3, False)["items"]
    fast = _document(items, version)
    owners = json.loads(fast)["owners"]
    assert len(owners) == 3 and any(0 < o["fitOneAfterAnother"] < 30 for o in owners)
    with monkeypatch.context() as m:
        m.setattr(Snapshot, "remove_pods", _plain_remove_pods)
        assert _document(items, version) == fast
    random.Random(seed).shuffle(items)
    assert _document(items, version) == fast


def test_remove_pods_keeps_the_bound_indexes_only_for_pending_pods() -> None:
    from kdiagnose.scheduler.plugins.helper.spread import _label_index, pods_by_namespace

    items: list[dict[str, Any]] = _generator().generate(10, 5, 6, 1, 2, True)["items"]
    snap = build_snapshot([RawObject(o, "owners.json") for o in items], dialect_for("v1.34.1"))
    ns = snap.pending[0].namespace
    by_ns = pods_by_namespace(snap)
    _label_index(snap, ns)
    snap.remove_pods([snap.pending[0]])
    assert pods_by_namespace(snap) is by_ns  # kept: no NodeInfo changed
    bound = next(p for p in snap.pods if p.node_name)
    snap.remove_pods([bound])
    again = pods_by_namespace(snap)
    assert again is not by_ns  # rebuilt: a node lost a pod
    assert all(p is not bound for items_ in again.values() for p, _ in items_)
    assert bound not in snap.pods


def test_remove_pods_few_and_many_leave_the_same_snapshot() -> None:
    items: list[dict[str, Any]] = _generator().generate(10, 5, 12, 4, 2, True)["items"]

    def state(snap: Snapshot) -> tuple[list[str], list[str], list[list[str]]]:
        return (
            [p.key for p in snap.pods],
            [p.key for p in snap.pending],
            [[p.key for p in ni.pods] for ni in snap.node_infos],
        )

    a = build_snapshot([RawObject(o, "x.json") for o in items], dialect_for("v1.34.1"))
    b = build_snapshot([RawObject(o, "x.json") for o in items], dialect_for("v1.34.1"))
    pick = [a.pods[3], a.pending[1], a.pods[-2], a.pods[3]]  # a bound pod twice, a pending one
    a.remove_pods(pick)
    keys = {p.key for p in pick}
    _plain_remove_pods(b, [p for p in b.pods if p.key in keys])
    assert state(a) == state(b)
    assert isinstance(pick[0], Pod)


def test_owners_placed_in_workers_give_the_same_document(forks: list[int]) -> None:
    """Each owner's placements on its own fork, one worker task per owner: the serial document."""
    items: list[dict[str, Any]] = _generator().generate(40, 20, 90, 5, 3, False)["items"]
    serial = _document(items, "v1.34.1")
    assert not forks
    assert _document(items, "v1.34.1", jobs=2) == serial
    assert forks == [2]
    owners = json.loads(serial)["owners"]
    assert len(owners) == 3 and any(o["fitOneAfterAnother"] for o in owners)


def test_replicas_share_one_node_map_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """-o json: replicas diagnosed once share their node map's text (report/json.py _node_entries), the
    text each would get alone."""
    from kdiagnose.report import json as report_json

    items: list[dict[str, Any]] = _generator().generate(40, 20, 90, 6, 3, False)["items"]
    made: list[int] = []
    real = report_json._node_map

    def counted(*a: Any) -> Any:
        made.append(1)
        return real(*a)

    monkeypatch.setattr(report_json, "_node_map", counted)
    shared = _document(items, "v1.34.1")
    assert 0 < len(made) < 20  # 90 pods of 3 owners (and the bound pods' owners): a few maps
    monkeypatch.setattr(report_json, "_node_entries", lambda pr, pools, names=None: real(pr, pools, names))
    assert _document(items, "v1.34.1") == shared
