"""A hostile or broken API server, through the real kubernetes client against tests/fake_apiserver.py.

Bodies that are not what the API serves (truncated, HTML, wrong shapes) are errors for pods and nodes and
"not verified: ..." for optional kinds, as a 500 is; --request-timeout is a deadline per request even for a
server trickling bytes; a repeated continue token ends the listing; an unreadable /version is said; an exec
credential plugin that fails or hangs is one error line before any request.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args
from tests.fake_apiserver import FakeAPIServer
from tests.test_live import PV_CASE, SEED, _isolated_env, _objects  # noqa: F401  (the autouse fixture)

Obj = dict[str, Any]


def run(*args: str) -> Any:
    return CliRunner().invoke(app, dispatch_args(list(args)))


def one_error(res: Any, *needles: str) -> None:
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 3, res.stderr + res.stdout
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kdiagnose: error:"), res.stderr
    assert "internal error" not in res.stderr
    for n in needles:
        assert n in res.stderr, res.stderr


FAULTS = ["truncated", "html", "array", "items-not-list"]


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_body_for_an_optional_kind_degrades_to_not_verified(tmp_path: Path, fault: str) -> None:
    with FakeAPIServer(_objects(PV_CASE)) as srv:
        srv.faults["/api/v1/persistentvolumes"] = fault
        kc = srv.kubeconfig(tmp_path / "kc")
        res = run("pod", "mysql-0", "-n", "default", "--kubeconfig", str(kc), "-o", "json")
    assert res.exit_code in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    (line,) = [w for w in doc["warnings"] if w.startswith("cannot list persistentvolumes")]
    assert "malformed answer" in line and "not verified" in line, line
    assert doc["missingKinds"] == ["PersistentVolume"]


@pytest.mark.parametrize("fault", [*FAULTS, "status-500"])
def test_a_broken_body_for_nodes_is_one_error_line(tmp_path: Path, fault: str) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        srv.faults["/api/v1/nodes"] = fault
        kc = srv.kubeconfig(tmp_path / "kc")
        res = run("pods", "--kubeconfig", str(kc), "-o", "json")
    one_error(res, "nodes")


def test_html_for_the_pod_itself(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        srv.faults["/pods/hello-web-new"] = "html"
        kc = srv.kubeconfig(tmp_path / "kc")
        res = run("pod", "hello-web-new", "-n", "default", "--kubeconfig", str(kc))
    one_error(res, "an HTML page")


def test_request_timeout_is_a_deadline_for_a_trickling_server(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        srv.faults["/api/v1/nodes"] = "trickle"  # a byte every 0.2 s: each read is quick, the body is not
        kc = srv.kubeconfig(tmp_path / "kc")
        start = time.monotonic()
        res = run("pods", "--kubeconfig", str(kc), "--request-timeout", "1s")
        elapsed = time.monotonic() - start
    one_error(res, "did not answer GET /api/v1/nodes within 1s")
    assert elapsed < 6


def test_a_repeated_continue_token_ends_the_listing(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        srv.faults["/api/v1/nodes"] = "repeat-continue"
        kc = srv.kubeconfig(tmp_path / "kc")
        res = run("pods", "--kubeconfig", str(kc))
        node_requests = [p for p in srv.paths() if p.startswith("/api/v1/nodes")]
    one_error(res, "repeated a continue token")
    assert len(node_requests) == 2  # the first page and the first repeat


@pytest.mark.parametrize("fault", ["status-403", "status-500", "html"])
def test_unreadable_version_is_said(tmp_path: Path, fault: str) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        srv.faults["/version"] = fault
        kc = srv.kubeconfig(tmp_path / "kc")
        res = run("pod", "hello-web-new", "-n", "default", "--kubeconfig", str(kc), "-o", "json")
    assert res.exit_code in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    assert any(w.startswith("GET /version failed") and "replaying as" in w for w in doc["warnings"]), doc[
        "warnings"
    ]


# ---------------------------------------------------------------------------------------------- exec plugins


def _exec_kubeconfig(srv: FakeAPIServer, path: Path, command: list[str]) -> Path:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": srv.url}}],
        "users": [
            {
                "name": "fake",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": command[0],
                        "args": command[1:],
                        "interactiveMode": "Never",
                    }
                },
            }
        ],
        "contexts": [
            {"name": "fake", "context": {"cluster": "fake", "user": "fake", "namespace": "default"}}
        ],
        "current-context": "fake",
    }
    path.write_text(json.dumps(cfg))
    return path


def _plugin(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "plugin.py"
    script.write_text(body)
    return [sys.executable, str(script)]


def _credential(token: str) -> str:
    doc = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": token},
    }
    return f"import json\nprint(json.dumps({doc!r}))\n"


def test_a_working_exec_plugin_authenticates(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        kc = _exec_kubeconfig(srv, tmp_path / "kc", _plugin(tmp_path, _credential(srv.token)))
        res = run("pod", "hello-web-new", "-n", "default", "--kubeconfig", str(kc), "-o", "json")
    assert res.exit_code in (0, 1), res.stderr


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        pytest.param("import sys\nsys.stderr.write('login expired\\n')\nsys.exit(1)\n", "exited with code 1: login expired", id="fails"),
        pytest.param("print('hello, not json')\n", "its output is not JSON", id="prints garbage"),
        pytest.param("print('{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\", \"status\": {}}')\n", "returned no credential", id="no token"),
        pytest.param("import time\ntime.sleep(60)\n", "did not finish within 1s", id="hangs"),
    ],
)  # fmt: skip
def test_a_failing_exec_plugin_is_one_line_before_any_request(tmp_path: Path, body: str, needle: str) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        kc = _exec_kubeconfig(srv, tmp_path / "kc", _plugin(tmp_path, body))
        start = time.monotonic()
        res = run("pod", "hello-web-new", "-n", "default", "--kubeconfig", str(kc), "--request-timeout", "1s")
        elapsed = time.monotonic() - start
        assert srv.paths() == []  # nothing was sent, with or without credentials
    one_error(res, "exec credential plugin", needle)
    assert elapsed < 10


def test_a_missing_exec_plugin_binary(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        kc = _exec_kubeconfig(srv, tmp_path / "kc", [str(tmp_path / "no-such-plugin")])
        res = run("pods", "--kubeconfig", str(kc))
        assert srv.paths() == []
    one_error(res, "exec credential plugin", "command not found")
