"""Regression tests for error reporting found while using kdiagnose as an on-call engineer would.

- Click/Typer usage errors (missing option, bad value, unknown option) went out as Click's three-line block;
  the README promises one `kdiagnose: error:` line and exit 2.
- `kdiagnose pods -l 'bad in ('` exited 0 with "No pending pods" instead of a usage error.
- A GET of a missing object (a --scheduler-config-from ConfigMap) said "not served by this API server".
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args, main
from kdiagnose.load.apireader import ApiStatusError, describe_status
from kdiagnose.model.objects import Pod
from kdiagnose.recorded import build_recorded
from kdiagnose.report.recorded import render_recorded
from kdiagnose.scheduler.diagnosis import Diagnosis
from tests.fake_apiserver import FakeAPIServer

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        pytest.param(
            [DEMO, "--top", "0"],
            "kdiagnose: error: Invalid value for '--top': Input should be greater than or equal to 1 "
            "(see 'kdiagnose diagnose -h')",
            id="an out-of-range --top is one error line",
        ),
        pytest.param(
            ["check", "--snapshot", DEMO],
            "kdiagnose: error: Missing option '-f' / '--filename' (see 'kdiagnose check -h')",
            id="a missing required option is one error line",
        ),
        pytest.param(
            [DEMO, "--frobnicate"],
            "kdiagnose: error: No such option: --frobnicate (see 'kdiagnose diagnose -h')",
            id="an unknown option is one error line",
        ),
        pytest.param(
            ["pod"],
            "kdiagnose: error: Missing argument 'name' (see 'kdiagnose pod -h')",
            id="a missing argument is one error line",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    argv: list[str], want: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err == want + "\n"


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        pytest.param([DEMO, "--no-color"], 1, id="an unschedulable pod still exits 1"),
        pytest.param([DEMO, "--pod", "default/hello-web-small"], 0, id="a schedulable pod still exits 0"),
        pytest.param(["--version"], 0, id="--version still exits 0"),
        pytest.param(["/nonexistent/dump.yaml"], 3, id="an unreadable file still exits 3"),
    ],
)
def test_main_keeps_the_exit_codes(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == code
    capsys.readouterr()


@pytest.mark.parametrize(
    ("status", "message", "want"),
    [
        pytest.param(404, 'configmaps "sched" not found', "not found", id="a missing object is not found"),
        pytest.param(
            404,
            "the server could not find the requested resource",
            "not served by this API server",
            id="a missing resource type is not served",
        ),
    ],
)
def test_describe_status(status: int, message: str, want: str) -> None:
    assert describe_status(ApiStatusError(status, "NotFound", message, "/x")) == want


# The messages are the real kube-apiserver's (v1.36/v1.37, RBAC authorizer), as tests/e2e/ records them.
@pytest.mark.parametrize(
    ("verb", "path", "message", "want"),
    [
        pytest.param(
            "list",
            "/api/v1/nodes",
            'nodes is forbidden: User "e2e-developer" cannot list resource "nodes" in API group "" at the cluster scope',
            'forbidden: user "e2e-developer" needs RBAC list on nodes at the cluster scope',
            id="a cluster-scoped list",
        ),
        pytest.param(
            "get",
            "/api/v1/namespaces/kube-system/pods/x",
            'pods "x" is forbidden: User "e2e-developer" cannot get resource "pods" in API group "" in the namespace "kube-system"',
            'forbidden: user "e2e-developer" needs RBAC get on pods in namespace "kube-system"',
            id="a namespaced get",
        ),
        pytest.param(
            "list",
            "/apis/storage.k8s.io/v1/storageclasses",
            "nope",
            "forbidden: this context's user needs RBAC list on storageclasses.storage.k8s.io at the cluster scope",
            id="a group's resource, a message without the user",
        ),
    ],
)
def test_forbidden_names_the_permission(verb: str, path: str, message: str, want: str) -> None:
    assert describe_status(ApiStatusError(403, "Forbidden", message, path, verb)) == want


def test_a_missing_scheduler_configmap_is_reported_as_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    with FakeAPIServer([]) as srv:
        kc = srv.kubeconfig(tmp_path / "kubeconfig")
        res = CliRunner().invoke(
            app,
            dispatch_args(
                ["pods", "--kubeconfig", str(kc), "--scheduler-config-from", "configmap/kube-system/sched"]
            ),
        )
    assert res.exit_code == 3
    assert res.stderr.strip() == 'kdiagnose: error: cannot get configmap "kube-system/sched": not found'


def test_an_invalid_live_selector_is_a_usage_error_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    with FakeAPIServer([]) as srv:
        kc = srv.kubeconfig(tmp_path / "kubeconfig")
        res = CliRunner().invoke(
            app, dispatch_args(["pods", "-A", "-l", "app in (", "--kubeconfig", str(kc)])
        )
        sent = list(srv.requests)
    assert res.exit_code == 2, res.stdout
    assert (
        res.stderr.strip() == "kdiagnose: error: invalid label selector 'app in (': cannot parse 'app in ('"
    )
    assert sent == []


# ---------------------------------------------------------------------------------------------- recorded events

_NOW = 1_700_000_000.0
_REPLAYED = (
    "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector. "
    "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
)


def _event(message: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "reason": "FailedScheduling",
        "note": message,
        "series": {
            "count": 2,
            "lastObservedTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_NOW - 30)),
        },
        "reportingController": "default-scheduler",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
    }


@pytest.mark.parametrize(
    ("recorded", "want"),
    [
        pytest.param(
            "0/5 nodes are available: 5 Insufficient cpu. "
            "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
            [
                "the replay finds reasons the recorded message does not have "
                "(\"node(s) didn't match Pod's node affinity/selector\"): "
                "nodes, taints, labels or pods changed since the attempt"
            ],
            id="a reason only the replay finds is named, not called 'the same reasons'",
        ),
        pytest.param(
            "0/5 nodes are available: 1 Insufficient cpu, 4 node(s) didn't match Pod's node affinity/selector. "
            "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
            ["the same reasons, with different node counts: pods or nodes changed since the attempt"],
            id="the same reasons with other counts",
        ),
        pytest.param(
            "0/5 nodes are available: 1 Insufficient cpu, 1 TooManyWidgets, 1 Whatsits, "
            "2 node(s) didn't match Pod's node affinity/selector. "
            "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
            [
                "the recorded message has reasons the replay does not produce ('TooManyWidgets', 'Whatsits'): "
                "a scheduler extender or an out-of-tree plugin?"
            ],
            id="several unknown reasons stay one cause when rendered",
        ),
    ],
)
def test_replay_differences_are_explained(recorded: str, want: list[str]) -> None:
    d = Diagnosis(pod=Pod({"metadata": {"name": "p", "namespace": "default"}}), profile="default-scheduler")
    d.message = d.full_message = _REPLAYED
    rec = build_recorded({"metadata": {"name": "p"}}, [_event(recorded)], d, now=_NOW)
    assert rec is not None and rec.agrees is False
    lines = render_recorded(rec, _REPLAYED)
    assert [line.strip()[2:] for line in lines if line.strip().startswith("- ")] == want


def test_check_without_a_cluster_names_both_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .kdiagnose.yaml upward of an empty temporary directory
    manifests = ROOT / "fixtures" / "check" / "daemonset.manifests.yaml"
    res = CliRunner().invoke(app, ["check", "-f", str(manifests), "--no-config"])
    assert res.exit_code == 2
    assert res.stderr.strip() == (
        "kdiagnose: error: no cluster: pass --snapshot SNAPSHOT or --context CONTEXT "
        "(or set snapshot: in .kdiagnose.yaml)"
    )
