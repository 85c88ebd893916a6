"""The API server vanishing or compacting in the middle of a paginated list (real kube-apiserver, e2e/)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args
from kdiagnose.load.apireader import ApiReader
from kdiagnose.load.cluster import POD_PHASE_SELECTOR
from tests.e2e.conftest import LINES, ROOT, Cluster, start_cluster

SCENARIO = (
    ROOT / "fixtures" / "golden" / "resources-too-many-pods.yaml"
)  # 12 pods: 12 pages at --chunk-size 1


@pytest.fixture(scope="module", params=LINES, ids=lambda v: f"v{v}")
def bare(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    line: str = request.param
    cl = start_cluster(line, tmp_path_factory.mktemp(f"restart-v{line}"), SCENARIO)
    yield cl
    assert cl.stop() == 0, cl.log_tail()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


class _Gate:
    """A readers-writer lock around every request: requests run concurrently (readers); the restart
    (writer) waits until none is in flight and holds new ones back until it is done. So the API server
    goes away *between* requests, never under one: the test is about what the next request meets (a
    refused port, a new instance honouring or expiring the continue token), the same on every run."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False

    def read(self, fn: Callable[[], bytes]) -> bytes:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing)
            self._readers += 1
        try:
            return fn()
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    def write(self, fn: Callable[[], None]) -> None:
        with self._cond:
            self._cond.wait_for(lambda: not self._writing and self._readers == 0)
            self._writing = True
        try:
            fn()
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


def after_first_page(
    monkeypatch: pytest.MonkeyPatch, action: Callable[[], None], *, gated: bool = True
) -> list[str]:
    """Run `action` once, right after the first page of the cluster-wide pods list (12 pages at
    --chunk-size 1; the Pending-pods list has one). Gated: with no request in flight (_Gate)."""
    orig = ApiReader._raw
    gate = _Gate()
    fired: list[str] = []
    lock = threading.Lock()

    def raw(self: ApiReader, path: str, query: list[tuple[str, str]], verb: str = "get") -> bytes:
        data = gate.read(lambda: orig(self, path, query, verb)) if gated else orig(self, path, query, verb)
        page = dict(query)
        first = "continue" not in page and page.get("fieldSelector") == POD_PHASE_SELECTOR
        if verb == "list" and path == "/api/v1/pods" and first:
            assert (orjson.loads(data).get("metadata") or {}).get("continue"), (
                "one page: nothing to interrupt"
            )
            with lock:
                if fired:
                    return data
                fired.append(path)
            if gated:
                gate.write(action)
            else:
                action()
        return data

    monkeypatch.setattr(ApiReader, "_raw", raw)
    return fired


def live(cl: Cluster, *args: str) -> Any:
    return CliRunner().invoke(
        app,
        dispatch_args(["pods", "-A", "--kubeconfig", str(cl.kubeconfig), "--context", "admin", *args]),
    )


def test_api_server_gone_mid_list_is_one_clean_error(bare: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    fired = after_first_page(monkeypatch, lambda: bare.command("stop-apiserver"))
    try:
        res = live(bare, "--chunk-size", "1", "-o", "json")
    finally:
        bare.command("start-apiserver")
    assert fired
    assert res.exit_code == 3, (res.exit_code, res.stdout, res.stderr)
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert res.stderr == (
        f"kdiagnose: error: cannot reach the API server {bare.info['server']} (context admin): connection refused\n"
    )
    # The restarted server (same etcd, port and certificate) answers again.
    monkeypatch.undo()
    assert live(bare, "--chunk-size", "1", "-o", "json").exit_code == 1


def _restart(cl: Cluster, compact: bool) -> None:
    if compact:
        cl.command("compact")
    cl.command("stop-apiserver")
    cl.command("start-apiserver")


def _continue_answers(cl: Cluster, code: int) -> list[dict[str, Any]]:
    return [
        e
        for e in cl.audit()
        if e.get("userAgent") == "kdiagnose"
        and e["requestURI"].startswith("/api/v1/pods?")
        and "continue=" in e["requestURI"]
        and (e.get("responseStatus") or {}).get("code") == code
    ]


_AGE_RE = re.compile(r"\b\d+[smhd](\d+[smh])?\b")


def snapshot_result(stdout: str) -> Any:
    """What a list result decides: every pod's diagnosis, the node and pod counts and the warnings. Ages
    ("created 3s ago", "after 1m5s") are masked: the two runs are seconds apart."""
    doc = json.loads(stdout)
    doc.pop("source", None)

    def mask(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: mask(x) for k, x in v.items() if k != "ageSeconds"}
        if isinstance(v, list):
            return [mask(x) for x in v]
        return _AGE_RE.sub("<age>", v) if isinstance(v, str) else v

    return mask({k: doc[k] for k in ("summary", "warnings", "missingKinds", "pods")})


@pytest.mark.parametrize(
    ("compact", "expired"),
    [
        # A new instance on the same etcd honours the old instance's continue token.
        pytest.param(False, 0, id="restart: the list goes on"),
        # Its watch cache starts after the compaction, etcd has compacted the token's revision: the real
        # server answers 410 Expired ("The provided continue parameter is too old ..."), kdiagnose lists again.
        pytest.param(True, 1, id="restart after compaction: 410, listed again"),
    ],
)
def test_restarted_api_server_mid_list(
    bare: Cluster, monkeypatch: pytest.MonkeyPatch, compact: bool, expired: int
) -> None:
    whole = live(bare, "-o", "json")
    assert whole.exit_code == 1, whole.stderr
    before = len(_continue_answers(bare, 410))
    fired = after_first_page(monkeypatch, lambda: _restart(bare, compact))
    res = live(bare, "--chunk-size", "1", "-o", "json")
    assert fired
    assert res.exit_code == 1, (res.stdout, res.stderr)
    # The complete list: the same pods, nodes, warnings and diagnoses as the unpaginated run.
    assert snapshot_result(res.stdout) == snapshot_result(whole.stdout)
    assert len(_continue_answers(bare, 410)) - before == expired


def test_restart_under_concurrent_requests_is_a_clean_error_or_the_complete_result(
    bare: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ungated, as a user meets it: other lists run while the server restarts. Either outcome is allowed,
    each exactly: one error line (exit 3, nothing on stdout), or the complete result - never a partial one."""
    whole = live(bare, "-o", "json")
    fired = after_first_page(monkeypatch, lambda: _restart(bare, False), gated=False)
    res = live(bare, "--chunk-size", "1", "-o", "json")
    assert fired
    if res.exit_code == 3:
        assert res.stdout == ""
        assert re.fullmatch(
            rf"kdiagnose: error: cannot reach the API server {re.escape(bare.info['server'])} \(context admin\): "
            r"connection refused\n",
            res.stderr,
        ), res.stderr
    else:
        assert res.exit_code == 1, (res.stdout, res.stderr)
        assert snapshot_result(res.stdout) == snapshot_result(whole.stdout)
