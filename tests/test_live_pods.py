"""The live Pod list decoded as compact records (load/live_pods.py) builds the same snapshot and the same
report as the per-object reader (every page decoded whole, each pod trimmed and modelled from its dict),
against the fake API server over real HTTP, with pages small enough that every list spans many of them;
with the pages decoded in worker processes (KDIAGNOSE_JOBS=2) and in this process alone (1)."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.commands.live import build_live_report, export_objects
from kdiagnose.errors import ClusterError
from kdiagnose.load.cluster import Fetched, fetch_for_pods, resolve_target
from kdiagnose.load.parallel import JOBS_ENV
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.report.json import report_document
from kdiagnose.versions import Dialect
from tests.fake_apiserver import FakeAPIServer
from tests.test_compact_pods import _admitted
from tests.test_fast_loaders import cluster_items, snapshot_view
from tests.varied import varied_items

Obj = dict[str, Any]


@pytest.fixture(autouse=True, params=["2", "1"], ids=["workers", "one-process"])
def _isolated_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv(JOBS_ENV, request.param)


def _fetch(srv: FakeAPIServer, tmp_path: Path, release: str, *, compact: bool) -> tuple[Fetched, Dialect]:
    kc = srv.kubeconfig(tmp_path / "kubeconfig")
    return fetch_for_pods(
        resolve_target(str(kc), None), None, k8s_version=release, chunk_size=7, compact=compact
    )


def _snapshot(fetched: Fetched, dialect: Dialect) -> Any:
    return build_snapshot(fetched.raw_objects(), dialect, list_kinds=fetched.listed_kinds, admit=True)


def _bound(items: list[Obj]) -> int:
    return sum(1 for o in items if o.get("kind") == "Pod" and (o.get("spec") or {}).get("nodeName"))


def _assert_same(items: list[Obj], tmp_path: Path, release: str) -> None:
    with FakeAPIServer(items, git_version=release) as srv:
        fast, dialect = _fetch(srv, tmp_path, release, compact=True)
        slow, _ = _fetch(srv, tmp_path, release, compact=False)
    assert not slow.records
    assert len(fast.records) == _bound(items)  # every bound pod of these clusters is a compact record
    assert fast.count() == slow.count()
    # Pages past the first come from the workers, whose records arrive with their Pod built (rec.pre).
    from_workers = sum(1 for r in fast.records if r.compact is not None and r.compact.pre is not None)  # type: ignore[attr-defined]
    assert (from_workers > 0) == (os.environ[JOBS_ENV] == "2")
    a, b = _snapshot(fast, dialect), _snapshot(slow, dialect)
    assert snapshot_view(a) == snapshot_view(b)
    assert a.warnings == b.warnings
    for x, y in zip(a.node_infos, b.node_infos, strict=True):
        assert [p.key for p in x.pods] == [p.key for p in y.pods]
        assert [p.key for p in x.pods_with_affinity] == [p.key for p in y.pods_with_affinity]
        assert x.pvc_ref_counts == y.pvc_ref_counts
    # The whole report: verdicts, messages, scores, remedies (each proven by a what-if replay).
    fast_doc = report_document(build_live_report(fast, dialect))
    slow_doc = report_document(build_live_report(slow, dialect))
    assert fast_doc == slow_doc
    assert fast_doc["pods"]


@pytest.mark.parametrize("release", ["v1.31.8", "v1.34.1", "v1.37.2"])
@pytest.mark.parametrize("seed", [1, 2])
def test_varied_cluster(tmp_path: Path, release: str, seed: int) -> None:
    # As a live API server returns them: admission set spec.priority on every pod.
    _assert_same(_admitted(varied_items(24, 4, 6, seed)), tmp_path, release)


def test_hand_made_cluster(tmp_path: Path) -> None:
    # Taints, priority classes, volumes, init containers, statuses of several shapes (test_fast_loaders).
    _assert_same(_admitted(cluster_items()), tmp_path, "v1.34.1")


def test_pods_of_unusual_shapes(tmp_path: Path) -> None:
    items = _admitted(varied_items(6, 3, 2, 3))
    bound = [o for o in items if o.get("kind") == "Pod" and o["spec"].get("nodeName")]
    odd = copy.deepcopy(bound[0])
    odd["metadata"]["name"] += "-odd"
    odd["metadata"]["labels"] = {"tier": 7}  # a number where a string belongs: the general way to a record
    no_prio = copy.deepcopy(bound[1])
    no_prio["metadata"]["name"] += "-noprio"
    del no_prio["spec"]["priority"]  # not admitted: the per-object path admits it as the server would
    with FakeAPIServer([*items, odd, no_prio], git_version="v1.34.1") as srv:
        fast, dialect = _fetch(srv, tmp_path, "v1.34.1", compact=True)
        slow, _ = _fetch(srv, tmp_path, "v1.34.1", compact=False)
    compact_keys = {r.compact.key for r in fast.records if r.compact is not None}
    assert "default/" + odd["metadata"]["name"] in compact_keys
    assert "default/" + no_prio["metadata"]["name"] not in compact_keys  # a dict, trimmed
    assert len(compact_keys) == len(bound) + 1
    assert snapshot_view(_snapshot(fast, dialect)) == snapshot_view(_snapshot(slow, dialect))


def test_a_pod_sent_twice_is_a_broken_answer(tmp_path: Path) -> None:
    items = _admitted(varied_items(4, 2, 1, 1))
    again = next(o for o in items if o.get("kind") == "Pod" and o["spec"].get("nodeName"))
    with FakeAPIServer(items, git_version="v1.34.1") as srv:
        srv.add(again)
        with pytest.raises(ClusterError) as e:
            _fetch(srv, tmp_path, "v1.34.1", compact=True)
    ns, name = again["metadata"].get("namespace", "default"), again["metadata"]["name"]
    assert (
        str(e.value)
        == f"cannot list pods: malformed answer: LIST /api/v1/pods: the server sent pod {ns}/{name} twice"
    )


def test_a_snapshot_file_is_made_of_objects_not_records(tmp_path: Path) -> None:
    """--save-snapshot fetches with compact=False (commands/live.py run_live): records keep no bytes to write
    back, so exporting a compact fetch is refused rather than saving a cluster without its bound pods."""
    items = _admitted(varied_items(4, 2, 3, 1))
    with FakeAPIServer(items, git_version="v1.34.1") as srv:
        fast, _ = _fetch(srv, tmp_path, "v1.34.1", compact=True)
        slow, _ = _fetch(srv, tmp_path, "v1.34.1", compact=False)
    assert fast.records
    with pytest.raises(ValueError, match="compact records"):
        export_objects(fast, full=False)
    saved = {
        (o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in export_objects(slow, full=False)
        if o.get("kind") == "Pod"
    }
    pods = {
        (o["metadata"].get("namespace", "default"), o["metadata"]["name"])
        for o in items
        if o.get("kind") == "Pod"
    }
    assert saved == pods


def test_the_page_pool_is_gone_once_closed() -> None:
    """PagePool.close waits for its workers: nothing of it is left for the interpreter's exit hook, which
    raced an executor still shutting down and printed a traceback after a failed read's one-line error."""
    import multiprocessing

    from kdiagnose.load.live_pods import start_pool

    pool = start_pool()
    if os.environ[JOBS_ENV] == "1":
        assert pool is None  # one core: no worker processes
        return
    assert pool is not None
    workers = set(pool.pool._processes.values())  # type: ignore[union-attr]
    assert workers
    pool.close()
    assert not any(p.is_alive() for p in workers)
    assert not workers & set(multiprocessing.active_children())
