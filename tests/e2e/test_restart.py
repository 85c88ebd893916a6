"""The API server vanishing or compacting in the middle of a paginated list (real kube-apiserver, e2e/)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args
from kdiagnose.load.apireader import ApiReader
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


def after_first_page(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> list[str]:
    """Run `action` once, right after the first page of a pods list that has more pages to come."""
    orig = ApiReader._raw
    fired: list[str] = []

    def raw(self: ApiReader, path: str, query: list[tuple[str, str]], verb: str = "get") -> bytes:
        data = orig(self, path, query, verb)
        last_page = not (orjson.loads(data).get("metadata") or {}).get("continue")
        if not fired and verb == "list" and path == "/api/v1/pods" and not last_page:
            fired.append(path)
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
    assert json.loads(res.stdout)["pods"] == json.loads(whole.stdout)["pods"]
    assert len(_continue_answers(bare, 410)) - before == expired
