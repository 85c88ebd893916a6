"""Live mode end to end: the real `kubernetes` client against tests/fake_apiserver.py over HTTP on 127.0.0.1."""

from __future__ import annotations

import copy
import json
import os
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args
from kdiagnose.commands.live import parse_timeout
from kdiagnose.errors import ClusterError, UsageError
from kdiagnose.load.cluster import choose_dialect, kubeconfig_paths, resolve_target
from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.objects import Pod
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.recorded import build_recorded, reason_counts, triage_pod
from kdiagnose.report.json import report_document
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.versions import dialect_for
from tests.fake_apiserver import FakeAPIServer, field_selector_matches, label_selector_matches

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "fixtures" / "golden" / "seed-hello-web.yaml"
SEED_GOLDEN = json.loads((ROOT / "fixtures" / "golden" / "seed-hello-web.json").read_text())["pods"][0]
PV_CASE = ROOT / "fixtures" / "golden" / "volumes-pv-node-affinity-conflict.yaml"
SEED_MESSAGE = SEED_GOLDEN["message"]

Obj = dict[str, Any]


def _objects(path: Path) -> list[Obj]:
    return [copy.deepcopy(r.obj) for r in load_paths([str(path)]).objects]


def _event(
    message: str,
    *,
    count: int = 3,
    age: float = 30.0,
    name: str = "hello-web-new",
    source: str = "default-scheduler",
) -> Obj:
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - age))
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.17a", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": name},
        "reason": "FailedScheduling",
        "type": "Warning",
        "count": count,
        "firstTimestamp": when,
        "lastTimestamp": when,
        "source": {"component": source},
        "message": message,
    }


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # No real kubeconfig or in-cluster account may leak into a test.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def seed_server() -> Iterator[FakeAPIServer]:
    with FakeAPIServer(_objects(SEED)) as srv:
        yield srv


def run(*args: str) -> Any:
    return CliRunner().invoke(app, dispatch_args(list(args)))


def live_json(srv: FakeAPIServer, tmp_path: Path, *args: str) -> tuple[int, Obj]:
    kc = srv.kubeconfig(tmp_path / "kubeconfig")
    res = run(*args, "--kubeconfig", str(kc), "-o", "json")
    assert res.exit_code in (0, 1), res.stderr + res.stdout
    return res.exit_code, json.loads(res.stdout)


def offline_doc(path: Path, pod: str) -> Obj:
    loaded = load_paths([str(path)])
    snap = build_snapshot(loaded.objects, dialect_for("v1.34.1"), list_kinds=loaded.list_kinds)
    doc: Obj = report_document(diagnose_snapshot(snap, pods=[pod]))
    return doc


def verdicts(doc: Obj, pod: str) -> dict[str, tuple[str, Any, list[str]]]:
    (p,) = [x for x in doc["pods"] if x["pod"] == pod]
    return {n: (v["verdict"], v["plugin"], v["reasons"]) for n, v in p["nodes"].items()}


def pod_doc(doc: Obj, pod: str) -> Obj:
    (p,) = [x for x in doc["pods"] if x["pod"] == pod]
    return p


# ---------------------------------------------------------------------------------------------- parity


def test_live_diagnosis_equals_offline_and_the_real_scheduler(
    seed_server: FakeAPIServer, tmp_path: Path
) -> None:
    code, doc = live_json(seed_server, tmp_path, "pod", "hello-web-new", "-n", "default")
    offline = offline_doc(SEED, "default/hello-web-new")
    assert code == 1
    live_pod = pod_doc(doc, "default/hello-web-new")
    assert live_pod["message"] == SEED_MESSAGE  # the real kube-scheduler v1.34.1's text
    assert live_pod["message"] == pod_doc(offline, "default/hello-web-new")["message"]
    assert verdicts(doc, "default/hello-web-new") == verdicts(offline, "default/hello-web-new")
    assert verdicts(doc, "default/hello-web-new")["node-b"] == (
        "UnschedulableAndUnresolvable",
        "TaintToleration",
        ["node(s) had untolerated taint {dedicated: batch}"],
    )
    assert doc["kubernetesVersion"] == "v1.34.1"
    assert doc["summary"]["nodes"] == 5
    assert "context fake" in doc["source"]


def test_recorded_event_agrees_and_shows_in_the_human_report(tmp_path: Path) -> None:
    objs = [*_objects(SEED), _event(SEED_MESSAGE, count=4, age=90)]
    with FakeAPIServer(objs) as srv:
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default")
        rec = pod_doc(doc, "default/hello-web-new")["recorded"]
        assert rec["message"] == SEED_MESSAGE
        assert rec["count"] == 4
        assert 60 < rec["ageSeconds"] < 600
        assert rec["agrees"] is True
        res = run("pod", "hello-web-new", "--kubeconfig", str(tmp_path / "kubeconfig"))
    assert res.exit_code == 1
    assert "FailedScheduling event (" in res.stdout and "ago, 4 time(s))" in res.stdout
    assert "Replay agrees: the replay reproduces the recorded message" in res.stdout
    assert SEED_MESSAGE.split(". ")[0] in " ".join(res.stdout.split())  # word-wrapped, never cut in a word


def test_stale_event_with_other_node_count_is_explained(tmp_path: Path) -> None:
    old = SEED_MESSAGE.replace("0/5 nodes", "0/4 nodes", 1).replace(
        "2 Insufficient cpu", "1 Insufficient cpu"
    )
    with FakeAPIServer([*_objects(SEED), _event(old, age=3600)]) as srv:
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default")
    rec = pod_doc(doc, "default/hello-web-new")["recorded"]
    assert rec["agrees"] is False
    assert "the scheduler saw 4 node(s), the cluster has 5 now" in rec["explanation"]


def test_events_fall_back_to_core_v1(tmp_path: Path) -> None:
    with FakeAPIServer([*_objects(SEED), _event(SEED_MESSAGE)], serve_events_v1=False) as srv:
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default")
        paths = srv.paths()
    assert pod_doc(doc, "default/hello-web-new")["recorded"]["agrees"] is True
    assert any(
        p.startswith("/api/v1/namespaces/default/events?") and "involvedObject.name" in p for p in paths
    )


# ---------------------------------------------------------------------------------------------- kubeconfig


def _kc(path: Path, *, current: str | None, contexts: list[tuple[str, str, str]]) -> Path:
    """contexts: (name, server, namespace)."""
    cfg: Obj = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": s}} for n, s, _ in contexts],
        "users": [{"name": n, "user": {"token": "test-token"}} for n, _, _ in contexts],
        "contexts": [
            {"name": n, "context": {"cluster": n, "user": n, "namespace": ns}} for n, _, ns in contexts
        ],
    }
    if current is not None:
        cfg["current-context"] = current
    path.write_text(json.dumps(cfg))
    return path


@pytest.mark.parametrize(
    ("files", "context", "want_context", "want_server", "want_ns"),
    [
        pytest.param(
            [(None, [("a", "http://a:1", "ns-a")]), ("b", [("b", "http://b:1", "ns-b")]), ("a", [])],
            None,
            "b",
            "http://b:1",
            "ns-b",
            id="the first file that sets current-context wins, not the last",
        ),
        pytest.param(
            [("x", [("x", "http://first:1", "one")]), (None, [("x", "http://second:1", "two")])],
            None,
            "x",
            "http://first:1",
            "one",
            id="the first file that defines a context name wins",
        ),
        pytest.param(
            [("a", [("a", "http://a:1", "ns-a")]), (None, [("b", "http://b:1", "ns-b")])],
            "b",
            "b",
            "http://b:1",
            "ns-b",
            id="--context picks a context of a later file and its namespace",
        ),
    ],
)
def test_kubeconfig_merge_like_kubectl(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: list[tuple[str | None, list[tuple[str, str, str]]]],
    context: str | None,
    want_context: str,
    want_server: str,
    want_ns: str,
) -> None:
    paths = [str(_kc(tmp_path / f"kc{i}", current=cur, contexts=ctxs)) for i, (cur, ctxs) in enumerate(files)]
    paths.insert(1, str(tmp_path / "does-not-exist"))  # kubectl skips missing files
    monkeypatch.setenv("KUBECONFIG", ":".join(paths))
    t = resolve_target(None, context)
    assert (t.context, t.configuration.host, t.namespace) == (want_context, want_server, want_ns)


def test_kubeconfig_flag_overrides_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = _kc(tmp_path / "env", current="e", contexts=[("e", "http://env:1", "x")])
    flag_file = _kc(tmp_path / "flag", current="f", contexts=[("f", "http://flag:1", "y")])
    monkeypatch.setenv("KUBECONFIG", str(env_file))
    assert kubeconfig_paths(str(flag_file)) == [str(flag_file)]
    assert resolve_target(str(flag_file)).context == "f"


def test_no_kubeconfig_anywhere_is_one_clear_error() -> None:
    res = run("pod", "x")
    assert res.exit_code == 3
    assert res.stderr.count("\n") == 1
    assert "no kubeconfig" in res.stderr


def test_multi_file_kubeconfig_end_to_end(
    seed_server: FakeAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # File 1 has the users and a stale current-context-less context; file 2 sets current-context.
    first = seed_server.kubeconfig(
        tmp_path / "one", context="fake", namespace="kube-system", current_context=None
    )
    second = _kc(tmp_path / "two", current="fake", contexts=[("fake", "http://127.0.0.1:9", "default")])
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    # The context named in file 2 is defined first in file 1 (namespace kube-system, the live server).
    res = run("pod", "hello-web-new", "-n", "default", "-o", "json")
    assert res.exit_code == 1, res.stderr
    assert pod_doc(json.loads(res.stdout), "default/hello-web-new")["message"] == SEED_MESSAGE
    # Without -n the context's namespace (kube-system) is used: the pod is not there.
    res = run("pod", "hello-web-new")
    assert res.exit_code == 3
    assert 'pod "kube-system/hello-web-new" not found' in res.stderr


# ---------------------------------------------------------------------------------------------- errors


def test_denied_optional_resource_warns_and_still_diagnoses(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(PV_CASE)) as srv:
        srv.forbidden.add("persistentvolumes")
        code, doc = live_json(srv, tmp_path, "pod", "mysql-0", "-n", "default")
    assert code in (0, 1)
    warnings = doc["warnings"]
    (line,) = [w for w in warnings if w.startswith("cannot list persistentvolumes")]
    assert line.startswith("cannot list persistentvolumes: forbidden")
    assert "VolumeBinding" in line and "not verified" in line
    assert doc["missingKinds"] == ["PersistentVolume"]
    assert pod_doc(doc, "default/mysql-0")["nodes"]  # every node still has a verdict


def test_denied_resource_is_not_requested_when_the_pod_does_not_need_it(
    seed_server: FakeAPIServer, tmp_path: Path
) -> None:
    seed_server.forbidden.add("persistentvolumes")
    _, doc = live_json(seed_server, tmp_path, "pod", "hello-web-new", "-n", "default")
    assert not any("persistentvolumes" in p for p in seed_server.paths())
    assert doc["warnings"] == []
    assert doc["missingKinds"] == []


@pytest.mark.parametrize(
    ("forbid", "args", "want"),
    [
        pytest.param(
            set(),
            ["pod", "nope", "-n", "default"],
            'pod "default/nope" not found',
            id="a missing pod exits 3 naming ns/name",
        ),
        pytest.param(
            {"pods"},
            ["pod", "hello-web-new", "-n", "default"],
            'cannot get pod "default/hello-web-new": forbidden',
            id="an unreadable pod exits 3",
        ),
        pytest.param({"pods"}, ["pods", "-A"], "cannot list pods: forbidden", id="unlistable pods exit 3"),
    ],
)
def test_fatal_errors_are_one_line_exit_3(
    seed_server: FakeAPIServer, tmp_path: Path, forbid: set[str], args: list[str], want: str
) -> None:
    seed_server.forbidden |= forbid
    kc = seed_server.kubeconfig(tmp_path / "kc")
    res = run(*args, "--kubeconfig", str(kc))
    assert res.exit_code == 3
    assert want in res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert res.stdout == ""


def test_rejected_token_is_one_line(seed_server: FakeAPIServer, tmp_path: Path) -> None:
    kc = seed_server.kubeconfig(tmp_path / "kc", token="wrong")
    res = run("pod", "hello-web-new", "--kubeconfig", str(kc))
    assert res.exit_code == 3
    assert "rejected the credentials" in res.stderr and res.stderr.count("\n") == 1


def test_timeout_is_one_line_exit_3(seed_server: FakeAPIServer, tmp_path: Path) -> None:
    seed_server.delays["/api/v1/nodes"] = 2.0
    kc = seed_server.kubeconfig(tmp_path / "kc")
    start = time.monotonic()
    res = run("pod", "hello-web-new", "-n", "default", "--kubeconfig", str(kc), "--request-timeout", "300ms")
    assert time.monotonic() - start < 1.8  # one attempt, not retried
    assert res.exit_code == 3
    assert "did not answer GET /api/v1/nodes within 0.3s" in res.stderr
    assert res.stderr.count("\n") == 1


def test_connection_refused_is_one_line_exit_3(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kc = _kc(tmp_path / "kc", current="dead", contexts=[("dead", f"http://127.0.0.1:{port}", "default")])
    res = run("pod", "x", "--kubeconfig", str(kc))
    assert res.exit_code == 3
    assert "connection refused" in res.stderr and res.stderr.count("\n") == 1


# ---------------------------------------------------------------------------------------------- paging, GET only


def _many_pods(n: int) -> list[Obj]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"filler-{i:05d}", "namespace": "load", "labels": {"app": "filler"}},
            "spec": {"nodeName": "retired-node", "containers": [{"name": "c", "image": "pause"}]},
            "status": {"phase": "Running"},
        }
        for i in range(n)
    ]


def _pod_list_requests(srv: FakeAPIServer) -> list[str]:
    return [p for p in srv.paths() if p.startswith("/api/v1/pods?")]


def test_pagination_over_many_pages(tmp_path: Path) -> None:
    terminal = {
        **_many_pods(1)[0],
        "metadata": {"name": "done", "namespace": "load"},
        "status": {"phase": "Succeeded"},
    }
    with FakeAPIServer([*_objects(SEED), *_many_pods(1200), terminal]) as srv:
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default")
        lists = _pod_list_requests(srv)
    assert doc["summary"]["podsInInput"] == 9 + 1200  # the Succeeded pod is filtered by the server
    assert len(lists) == 3  # 500 + 500 + 209
    assert all("limit=500" in p for p in lists)
    assert sum("continue=" in p for p in lists) == 2
    assert all("status.phase%21%3DSucceeded" in p for p in lists)
    assert pod_doc(doc, "default/hello-web-new")["message"] == SEED_MESSAGE


@pytest.mark.parametrize(
    ("chunk", "want"),
    [
        pytest.param("100", ["limit=100"] * 13, id="--chunk-size 100: 13 pages of 1209 pods"),
        pytest.param("0", [""], id="--chunk-size 0: one unpaginated request, as kubectl"),
    ],
)
def test_chunk_size_sets_the_page_size(tmp_path: Path, chunk: str, want: list[str]) -> None:
    with FakeAPIServer([*_objects(SEED), *_many_pods(1200)]) as srv:
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default", "--chunk-size", chunk)
        lists = _pod_list_requests(srv)
    assert doc["summary"]["podsInInput"] == 9 + 1200
    assert ["limit=" + p.split("limit=")[1].split("&")[0] if "limit=" in p else "" for p in lists] == want
    assert pod_doc(doc, "default/hello-web-new")["message"] == SEED_MESSAGE


def test_expired_continue_restarts_the_list_once(tmp_path: Path) -> None:
    with FakeAPIServer([*_objects(SEED), *_many_pods(1200)]) as srv:
        srv.expire_once.add("pods")
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default")
        lists = _pod_list_requests(srv)
    assert doc["summary"]["podsInInput"] == 9 + 1200
    # page 1, 410 on page 2, then page 1..3 again
    assert len(lists) == 5
    assert sum("continue=" not in p for p in lists) == 2


def test_only_get_requests_are_sent(seed_server: FakeAPIServer, tmp_path: Path) -> None:
    # The log sees writes (control: a POST is recorded and refused)...
    req = urllib.request.Request(
        f"{seed_server.url}/api/v1/namespaces/default/pods", data=b"{}", method="POST"
    )
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(req, timeout=5)
    assert ("POST", "/api/v1/namespaces/default/pods") in seed_server.requests
    seed_server.requests.clear()
    # ...and kdiagnose never sends one, whatever it does.
    kc = seed_server.kubeconfig(tmp_path / "kc")
    for args in (
        ["pod", "hello-web-new", "-n", "default", "--save-snapshot", str(tmp_path / "s.yaml")],
        ["pods", "-A"],
        ["pods", "-n", "default", "-l", "app=hello-web", "-o", "yaml"],
        ["pod", "nope"],
    ):
        run(*args, "--kubeconfig", str(kc))
    assert seed_server.requests
    assert seed_server.methods() == {"GET"}


# ---------------------------------------------------------------------------------------------- pods, triage


def test_pods_command_lists_pending_pods_in_scope(tmp_path: Path) -> None:
    extra = _objects(SEED)
    other = copy.deepcopy(next(o for o in extra if (o.get("metadata") or {}).get("name") == "hello-web-new"))
    other["metadata"] = {"name": "elsewhere", "namespace": "team", "labels": {"app": "other"}}
    with FakeAPIServer([*extra, other]) as srv:
        code, doc = live_json(srv, tmp_path, "pods", "-A")
        assert code == 1
        assert [p["pod"] for p in doc["pods"]] == ["default/hello-web-new", "team/elsewhere"]
        _, doc = live_json(srv, tmp_path, "pods", "-A", "-l", "app=other")
        assert [p["pod"] for p in doc["pods"]] == ["team/elsewhere"]
        _, doc = live_json(srv, tmp_path, "pods")  # the context's namespace: default
        assert [p["pod"] for p in doc["pods"]] == ["default/hello-web-new"]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("output", ["json", "human"])
def test_pods_written_as_diagnosed_are_the_whole_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: list[int], jobs: int, output: str
) -> None:
    """`kdiagnose pods -A` writes each pod as it is diagnosed (in forked workers with --jobs 2), as the
    offline command does: the same bytes as the whole report, with the targets that are not replayed (a
    Pending pod already bound, one being deleted) in their place among the replayed ones by key."""
    import io

    from kdiagnose.commands import live
    from kdiagnose.report.console import render
    from kdiagnose.report.emit import human_options
    from kdiagnose.report.json import render as render_json

    objs = _objects(SEED)
    base = next(o for o in objs if o["metadata"]["name"] == "hello-web-new")
    extra = []
    for i, name in enumerate(["a-first", "c-bound", "m-middle", "p-deleting", "z-last"]):
        p = copy.deepcopy(base)
        p["metadata"] = {**base["metadata"], "name": name, "uid": f"uid-{i}", "labels": {"app": name}}
        p["metadata"].pop("ownerReferences", None)
        p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": f"{100 * (i + 1)}m", "memory": "64Mi"}}
        if name == "c-bound":
            p["spec"]["nodeName"] = "node-a"
        if name == "p-deleting":
            p["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        extra.append(p)
    streamed: list[str] = []
    real_emit, real_pod = live._WithOthers.emit, live._WithOthers.pod

    def emitted(self: Any, report: Any, pod: Any, encoded: Any) -> Any:
        streamed.append(pod.key)
        return real_emit(self, report, pod, encoded)

    def written(self: Any, report: Any, pr: Any) -> Any:
        streamed.append(pr.diagnosis.pod.key)
        return real_pod(self, report, pr)

    monkeypatch.setattr(live._WithOthers, "emit", emitted)
    monkeypatch.setattr(live._WithOthers, "pod", written)
    monkeypatch.setenv("KDIAGNOSE_JOBS", str(jobs))
    with FakeAPIServer([*objs, *extra]) as srv:
        kc = str(srv.kubeconfig(tmp_path / "kubeconfig"))
        res = run("pods", "-A", "--kubeconfig", kc, *(["-o", "json"] if output == "json" else []))
        assert res.exit_code == 1, res.stderr
        # The four replayed pods went through the sink (the two others are written among them).
        assert len(streamed) == 4 and forks == ([2] if jobs == 2 else [])
        report, code = live.run_live(live.LiveOptions(all_namespaces=True, kubeconfig=kc, output=output))
    assert code == 1
    if output == "json":
        whole = render_json(report)
        keys = [p["pod"] for p in json.loads(res.stdout)["pods"]]
        assert keys == sorted(
            f"default/{n}" for n in ["hello-web-new", *(p["metadata"]["name"] for p in extra)]
        )
    else:
        buf = io.StringIO()
        render(report, buf, human_options(True, 5, False, False, False, True))
        whole = buf.getvalue()
        assert "default/c-bound" in whole and "default/p-deleting" in whole
    assert res.stdout == whole


def test_pods_summary_is_one_entry_per_pod(tmp_path: Path, seed_server: FakeAPIServer) -> None:
    # At 3 a.m. over a whole cluster: `kdiagnose pods -A --summary`, as `kdiagnose FILE --summary` offline.
    kc = seed_server.kubeconfig(tmp_path / "kubeconfig")
    res = run("pods", "-A", "--summary", "--kubeconfig", str(kc))
    assert res.exit_code == 1, res.stderr
    assert "UNSCHEDULABLE  Pod default/hello-web-new:" in res.stdout
    assert "Scheduler message:" not in res.stdout  # no per-pod sections


def test_bound_pod_is_not_a_scheduling_problem(tmp_path: Path) -> None:
    objs = _objects(SEED)
    for o in objs:
        if o["metadata"]["name"] == "web-api-1":
            o["status"] = {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "app",
                        "state": {
                            "waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}
                        },
                    }
                ],
            }
    with FakeAPIServer(objs) as srv:
        code, doc = live_json(srv, tmp_path, "pod", "web-api-1", "-n", "default")
        assert not any("/nodes" in p for p in srv.paths())  # nothing to replay: no lists at all
    p = pod_doc(doc, "default/web-api-1")
    assert code == 0
    assert (
        p["triage"] == "bound to node node-a (phase Pending; app: ImagePullBackOff (Back-off pulling image))"
    )


NOW = 1_700_000_000.0


def _ts(offset: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW + offset))


@pytest.mark.parametrize(
    ("pod", "events", "text", "replay"),
    [
        pytest.param(
            {
                "spec": {"nodeName": "n1"},
                "status": {
                    "phase": "Pending",
                    "containerStatuses": [
                        {"name": "c", "state": {"waiting": {"reason": "ContainerCreating"}}}
                    ],
                },
            },
            [],
            "bound to node n1 (phase Pending; c: ContainerCreating)",
            False,
            id="bound and creating containers is not a scheduling problem",
        ),
        pytest.param(
            {"spec": {"schedulingGates": [{"name": "example.com/quota"}, {"name": "b"}]}},
            [],
            "scheduling gated by example.com/quota, b: the scheduler does not try until whoever added the gate(s) removes them",
            True,
            id="gated pods list their gates",
        ),
        pytest.param(
            {"metadata": {"creationTimestamp": _ts(-600)}, "spec": {"schedulerName": "volcano"}},
            [],
            'no scheduler has picked it up: no PodScheduled condition after 10m; is a scheduler named "volcano" running?',
            True,
            id="no PodScheduled condition for long names the schedulerName",
        ),
        pytest.param(
            {"metadata": {"creationTimestamp": _ts(-5)}},
            [],
            "created 5s ago: no scheduler has tried it yet",
            True,
            id="a brand new pod has not been tried yet",
        ),
        pytest.param(
            {
                "status": {
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": "Unschedulable",
                            "lastTransitionTime": _ts(-125),
                        }
                    ]
                }
            },
            [],
            "unschedulable for 2m5s according to default-scheduler",
            True,
            id="Unschedulable is replayed",
        ),
        pytest.param(
            {"status": {"phase": "Failed"}},
            [],
            "the pod has finished (phase Failed), nothing to schedule",
            False,
            id="finished pods are not replayed",
        ),
    ],
)
def test_triage(pod: Obj, events: list[Obj], text: str, replay: bool) -> None:
    t = triage_pod({"metadata": {"name": "p"}, **pod}, NOW, events)
    assert (t.text, t.replay) == (text, replay)


# ---------------------------------------------------------------------------------------------- recorded


def _diag(message: str | None, *, chosen: str | None = None, profile: str = "default-scheduler") -> Diagnosis:
    d = Diagnosis(pod=Pod({"metadata": {"name": "p", "namespace": "default"}}), profile=profile)
    d.message = d.full_message = message
    d.chosen = chosen
    return d


M5 = "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."


def _ev(message: str, age: float, source: str = "default-scheduler") -> Obj:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "reason": "FailedScheduling",
        "note": message,
        "series": {"count": 7, "lastObservedTime": _ts(-age)},
        "reportingController": source,
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
    }


@pytest.mark.parametrize(
    ("events", "diagnosis", "agrees", "explains"),
    [
        pytest.param(
            [_ev(M5, 30)],
            _diag(M5),
            True,
            "the replay reproduces the recorded message (last seen 30s ago)",
            id="same message agrees",
        ),
        pytest.param(
            [
                _ev(
                    M5.replace("2 Insufficient cpu", "2 Insufficient cpu, 1 TooManyWidgets").replace(
                        "0/5", "0/6", 1
                    ),
                    30,
                )
            ],
            _diag(M5),
            False,
            "reasons the replay does not produce ('TooManyWidgets')",
            id="an unknown reason points at an extender or out-of-tree plugin",
        ),
        pytest.param(
            [_ev(M5, 30, source="batch-scheduler")],
            _diag(M5.replace("2 Insufficient", "1 Insufficient").replace("3 node(s)", "4 node(s)")),
            False,
            'recorded by "batch-scheduler", the replay used the profile "default-scheduler"',
            id="another scheduler recorded it",
        ),
        pytest.param(
            [_ev(M5, 30)],
            _diag(None, chosen="n2"),
            False,
            "the replay places the pod on n2 now",
            id="the pod fits now",
        ),
        pytest.param(
            [_ev(("0/5 nodes are available: 5 " + "x" * 1100)[:1020] + " ...", 30)],
            _diag(None),
            True,
            "truncated at 1024 bytes; its prefix matches",
            id="a truncated event is compared by its prefix",
        ),
    ],
)
def test_build_recorded(events: list[Obj], diagnosis: Diagnosis, agrees: bool, explains: str) -> None:
    if diagnosis.message is None and diagnosis.chosen is None:
        full = "0/5 nodes are available: 5 " + "x" * 1100 + "."
        diagnosis.full_message = full
        diagnosis.message = full[:1020] + " .!"  # a different truncation: only the prefix can match
    rec = build_recorded({"metadata": {"name": "p"}}, events, diagnosis, now=NOW)
    assert rec is not None
    assert rec.count == 7
    assert rec.agrees is agrees
    assert explains in rec.explanation


def test_reason_counts_parses_the_histogram() -> None:
    assert reason_counts(M5) == (
        5,
        {"Insufficient cpu": 2, "node(s) didn't match Pod's node affinity/selector": 3},
    )


# ---------------------------------------------------------------------------------------------- snapshot export


def test_save_snapshot_round_trip_and_stripping(tmp_path: Path) -> None:
    objs = [*_objects(SEED), _event(SEED_MESSAGE)]
    for o in objs:
        if o["metadata"]["name"] == "web-api-1":
            o["metadata"]["annotations"] = {
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
                "team/secret": "s3cr3t",
            }
            o["metadata"]["managedFields"] = [{"manager": "kubectl"}]
            o["spec"]["containers"][0]["env"] = [{"name": "PASSWORD", "value": "hunter2"}]
            o["spec"]["containers"][0]["args"] = ["--token=abc"]
    with FakeAPIServer(objs) as srv:
        kc = srv.kubeconfig(tmp_path / "kc")
        live = run(
            "pod",
            "hello-web-new",
            "-n",
            "default",
            "--kubeconfig",
            str(kc),
            "-o",
            "json",
            "--save-snapshot",
            str(tmp_path / "snap.yaml"),
        )
        full = run(
            "pod",
            "hello-web-new",
            "-n",
            "default",
            "--kubeconfig",
            str(kc),
            "--save-snapshot",
            str(tmp_path / "full.yaml"),
            "--full",
        )
    assert live.exit_code == 1 and full.exit_code == 1
    text = (tmp_path / "snap.yaml").read_text()
    for secret in ("hunter2", "PASSWORD", "--token=abc", "s3cr3t", "manager: kubectl", "last-applied"):
        assert secret not in text
    assert "hunter2" in (tmp_path / "full.yaml").read_text()
    # As the snapshot's header says: the fake server's nodes carry no kubelet version to infer it from.
    assert "--k8s-version v1.34.1" in text
    offline = run(str(tmp_path / "snap.yaml"), "-o", "json", "--k8s-version", "v1.34.1")
    assert offline.exit_code == 1, offline.stderr
    live_doc, off_doc = json.loads(live.stdout), json.loads(offline.stdout)
    assert pod_doc(off_doc, "default/hello-web-new")["message"] == SEED_MESSAGE
    assert verdicts(off_doc, "default/hello-web-new") == verdicts(live_doc, "default/hello-web-new")
    assert pod_doc(off_doc, "default/hello-web-new")["recorded"]["message"] == SEED_MESSAGE


# ---------------------------------------------------------------------------------------------- small parts


@pytest.mark.parametrize(
    ("server", "override", "want", "warned"),
    [
        pytest.param(
            "v1.33.3-eks-1234", None, "v1.33.3", False, id="the server's version selects the dialect"
        ),
        pytest.param("v1.37.1", None, "v1.37.1", False, id="the exact patch, even one kdiagnose never saw"),
        pytest.param("v1.36.3+k3s1", None, "v1.36.3", False, id="a distribution suffix is dropped"),
        pytest.param(
            "v1.38.0", None, "v1.37.2", True, id="a newer minor uses the newest known, with a warning"
        ),
        pytest.param("not-a-version", None, "v1.37.2", True, id="an unreadable version uses the newest"),
        pytest.param("v1.29.4", "v1.31", "v1.31.8", False, id="--k8s-version replays an old server"),
        pytest.param("v1.33.3", "v1.35.4", "v1.35.4", False, id="--k8s-version overrides the server"),
    ],
)
def test_choose_dialect(server: str, override: str | None, want: str, warned: bool) -> None:
    d, warnings = choose_dialect(server, override)
    assert d.name == want
    assert bool(warnings) is warned
    if warned:
        assert server in warnings[0] and want in warnings[0]
    if override:
        assert d.reason == f"--k8s-version {override}"
    else:
        assert server in d.reason or "unknown" in d.reason


def test_server_older_than_v131_is_refused() -> None:
    with pytest.raises(UsageError, match=r"v1\.29\.4, older than v1\.31.*--k8s-version"):
        choose_dialect("v1.29.4", None)


def test_unknown_server_version_warns_in_report(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED), git_version="v1.40.1") as srv:
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default")
    assert doc["kubernetesVersion"] == "v1.37.2"
    assert any("v1.40.1" in w and "v1.37.2" in w for w in doc["warnings"])
    assert "v1.40.1" in doc["kubernetesVersionReason"]


def test_live_replays_the_servers_exact_version(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED), git_version="v1.36.1") as srv:
        _, doc = live_json(srv, tmp_path, "pod", "hello-web-new", "-n", "default")
    assert doc["kubernetesVersion"] == "v1.36.1"
    assert doc["kubernetesVersionReason"] == "the server's version v1.36.1"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("30s", 30.0, id="seconds"),
        pytest.param("1m30s", 90.0, id="minutes and seconds"),
        pytest.param("500ms", 0.5, id="milliseconds"),
        pytest.param("15", 15.0, id="a bare number is seconds"),
        pytest.param("0", 0.0, id="zero means no timeout"),
    ],
)
def test_parse_timeout(text: str, seconds: float) -> None:
    assert parse_timeout(text) == seconds


def test_bad_timeout_is_a_usage_error(seed_server: FakeAPIServer, tmp_path: Path) -> None:
    res = run(
        "pod", "x", "--request-timeout", "soon", "--kubeconfig", str(seed_server.kubeconfig(tmp_path / "kc"))
    )
    assert res.exit_code == 2 and "--request-timeout" in res.stderr


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param("app=web,tier!=db", {"app": "web", "tier": "fe"}, True, id="equality and inequality"),
        pytest.param("app in (a,b),!canary", {"app": "b"}, True, id="set and not-exists"),
        pytest.param("app notin (a,b)", {"app": "b"}, False, id="notin"),
    ],
)
def test_fake_server_label_selectors(selector: str, labels: dict[str, str], want: bool) -> None:
    assert label_selector_matches(selector, labels) is want


def test_fake_server_field_selectors() -> None:
    pod = {"metadata": {"name": "a", "namespace": "n"}, "status": {"phase": "Running"}}
    assert field_selector_matches("status.phase!=Succeeded,status.phase!=Failed,metadata.namespace=n", pod)
    assert not field_selector_matches("metadata.name=b", pod)


def test_resolve_target_unknown_context_is_cluster_error(tmp_path: Path) -> None:
    kc = _kc(tmp_path / "kc", current="a", contexts=[("a", "http://a:1", "x")])
    with pytest.raises(ClusterError, match=r"context \"nope\" not found in kubeconfig"):
        resolve_target(str(kc), "nope")


# ---------------------------------------------------------------------------------------------- benchmark


@pytest.mark.skipif(
    not os.environ.get("KDIAGNOSE_BENCH"), reason="benchmark (150,000 pods): set KDIAGNOSE_BENCH=1"
)
def test_benchmark_listing_150k_pods_is_dominated_by_transfer(tmp_path: Path) -> None:
    import gc

    import orjson

    from kdiagnose.load.cluster import KINDS, POD_PHASE_SELECTOR, ApiReader, no_gc
    from kdiagnose.load.trim import trim_pod

    container = {
        "name": "app",
        "image": "nginx:1.27",
        "resources": {"requests": {"cpu": "10m", "memory": "20Mi"}},
        "env": [{"name": f"E{i}", "value": "x" * 40} for i in range(20)],
    }
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"p-{i}",
                "namespace": f"ns-{i % 50}",
                "managedFields": [{"manager": "kcm"}],
            },
            "spec": {"nodeName": "node-a", "containers": [container]},
            "status": {"phase": "Running"},
        }
        for i in range(150_000)
    ]
    with FakeAPIServer(pods) as srv:
        reader = ApiReader(resolve_target(str(srv.kubeconfig(tmp_path / "kc"))), 120)
        gc.disable()
        try:
            start, wire, token = time.monotonic(), 0, ""
            while True:
                query = [("limit", "500"), ("fieldSelector", POD_PHASE_SELECTOR)] + (
                    [("continue", token)] if token else []
                )
                data = reader._raw("/api/v1/pods", query)
                wire += len(data)
                token = (orjson.loads(data).get("metadata") or {}).get("continue") or ""
                if not token:
                    break
            transfer = time.monotonic() - start
        finally:
            gc.enable()
        with no_gc():
            start = time.monotonic()
            items = reader.list(KINDS["Pod"], field_selector=POD_PHASE_SELECTOR, transform=trim_pod)
            listed = time.monotonic() - start
    assert len(items) == 150_000
    assert listed < 1.5 * transfer + 1.0, (listed, transfer)
    # What stays in memory is the trimmed objects: a fraction of what crossed the wire.
    assert len(orjson.dumps(items)) < 0.5 * wire


def test_scheduler_config_extender_explains_a_disagreement(tmp_path: Path) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "extenders:\n"
        "- urlPrefix: http://gpu-extender:8888\n"
        "  filterVerb: filter\n"
    )
    recorded = SEED_MESSAGE.replace("2 Insufficient cpu", "2 GPU extender says no")
    with FakeAPIServer([*_objects(SEED), _event(recorded)]) as srv:
        _, doc = live_json(
            srv, tmp_path, "pod", "hello-web-new", "-n", "default", "--scheduler-config", str(cfg)
        )
    rec = pod_doc(doc, "default/hello-web-new")["recorded"]
    assert rec["agrees"] is False
    assert "extender(s) the replay cannot run (http://gpu-extender:8888)" in rec["explanation"]
    assert "'GPU extender says no'" in rec["explanation"]


def test_scheduler_config_from_configmap_replays_the_clusters_profile(tmp_path: Path) -> None:
    # TaintToleration's filter disabled in the cluster's own profile: node-b (dedicated=batch) fits.
    config = (
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  plugins:\n"
        "    filter:\n"
        "      disabled:\n"
        "      - name: TaintToleration\n"
    )
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "scheduler-config", "namespace": "kube-system"},
        "data": {"notes.txt": "unrelated", "kube-scheduler-config.yaml": config},
    }
    with FakeAPIServer([*_objects(SEED), cm]) as srv:
        code, doc = live_json(
            srv,
            tmp_path,
            "pod",
            "hello-web-new",
            "-n",
            "default",
            "--scheduler-config-from",
            "configmap/kube-system/scheduler-config",
        )
        assert all(method == "GET" for method, _ in srv.requests)
    assert code == 0
    assert pod_doc(doc, "default/hello-web-new")["node"] == "node-b"


def test_scheduler_config_from_missing_configmap_is_one_line(
    seed_server: FakeAPIServer, tmp_path: Path
) -> None:
    kc = seed_server.kubeconfig(tmp_path / "kubeconfig")
    res = run(
        "pod",
        "hello-web-new",
        "--kubeconfig",
        str(kc),
        "--scheduler-config-from",
        "configmap/kube-system/nope",
    )
    assert res.exit_code == 3
    assert res.stderr.strip().count("\n") == 0
    assert 'cannot get configmap "kube-system/nope"' in res.stderr


def test_check_against_a_live_cluster_with_context(tmp_path: Path) -> None:
    # The CI gate reads the whole cluster through the real client (GET only) instead of a snapshot file.
    cluster = ROOT / "fixtures" / "check" / "cluster-two-nodes.yaml"
    manifests = ROOT / "fixtures" / "check" / "web-anti-affinity.manifests.yaml"
    with FakeAPIServer(_objects(cluster)) as srv:
        kc = srv.kubeconfig(tmp_path / "kubeconfig")
        res = run(
            "check",
            "-f",
            str(manifests),
            "--context",
            "fake",
            "--kubeconfig",
            str(kc),
            "-o",
            "json",
            "--no-remedies",
        )
        assert {m for m, _ in srv.requests} == {"GET"}
    assert res.exit_code == 1, res.stderr
    doc = json.loads(res.stdout)
    text = json.dumps(doc)
    assert "2 node(s) didn't match pod anti-affinity rules" in text
    assert "context fake" in text


def test_pod_held_at_permit_by_an_out_of_tree_plugin_is_explained(tmp_path: Path) -> None:
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  plugins:\n"
        "    multiPoint:\n"
        "      enabled:\n"
        "      - name: Coscheduling\n"
    )
    with FakeAPIServer(_objects(SEED)) as srv:  # no FailedScheduling event recorded
        _, doc = live_json(
            srv, tmp_path, "pod", "hello-web-new", "-n", "default", "--scheduler-config", str(cfg)
        )
    notes = pod_doc(doc, "default/hello-web-new")["notes"]
    assert any("Coscheduling" in n and "Permit" in n and "15 minutes" in n for n in notes), notes


def test_permit_note_is_not_given_when_the_pod_has_a_failed_scheduling_event() -> None:
    from kdiagnose.commands.live import permit_wait_note

    oot = {"default-scheduler": {"Coscheduling": ["multiPoint"]}}
    assert permit_wait_note("default-scheduler", oot, [{"reason": "FailedScheduling"}]) == ""
    assert permit_wait_note("other", oot, []) == ""
    assert "Coscheduling" in permit_wait_note("default-scheduler", oot, [])


def test_live_commands_take_the_report_display_options(seed_server: FakeAPIServer, tmp_path: Path) -> None:
    kc = seed_server.kubeconfig(tmp_path / "kubeconfig")
    res = run("pod", "hello-web-new", "--kubeconfig", str(kc), "--all-nodes", "--all-remedies", "--top", "2")
    assert res.exit_code == 1, res.stderr
    assert "What would make it schedulable" in res.stdout
    assert "--all-remedies" not in res.stdout  # every remedy shown: no "... N more (--all-remedies)" hint
    for node in ("control-plane", "node-a", "node-b", "node-c", "node-d"):
        assert node in res.stdout


# ------------------------------------------------------------------------------ DRA: DeviceTaintRules

DRA_CASE = ROOT / "fixtures" / "golden" / "dra-template-gpus-on-some-nodes.yaml"
# Taints every device of gpu-a100-1's pool (the only node with free A100s for ml/llm-finetune-0).
TAINT_RULE: Obj = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "a100-maintenance"},
    "spec": {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "gpu-a100-1"},
        "taint": {"key": "maintenance", "value": "firmware", "effect": "NoSchedule"},
    },
}
_MISSING_RULES_NOTE = "not checked: missing DeviceTaintRules"


def test_live_v137_reads_device_taint_rules_and_applies_them(tmp_path: Path) -> None:
    with FakeAPIServer([*_objects(DRA_CASE), TAINT_RULE], git_version="v1.37.2") as srv:
        _, doc = live_json(srv, tmp_path, "pod", "llm-finetune-0", "-n", "ml")
        paths = srv.paths()
    assert any("/apis/resource.k8s.io/v1/devicetaintrules" in p for p in paths)
    p = pod_doc(doc, "ml/llm-finetune-0")
    assert not any(_MISSING_RULES_NOTE in n for n in p["notes"]), p["notes"]
    # The rule's NoSchedule taint keeps the two free A100s from the claim: no node fits.
    assert verdicts(doc, "ml/llm-finetune-0")["gpu-a100-1"][2] == ["cannot allocate all claims"]
    assert doc["missingKinds"] == []


def test_live_v137_without_the_rule_the_pod_fits_and_nothing_is_noted(tmp_path: Path) -> None:
    with FakeAPIServer(_objects(DRA_CASE), git_version="v1.37.2") as srv:
        _, doc = live_json(srv, tmp_path, "pod", "llm-finetune-0", "-n", "ml")
    p = pod_doc(doc, "ml/llm-finetune-0")
    assert not any(_MISSING_RULES_NOTE in n for n in p["notes"]), p["notes"]
    assert verdicts(doc, "ml/llm-finetune-0")["gpu-a100-1"][0] == "Feasible"


@pytest.mark.parametrize(
    "deny",
    [
        pytest.param("forbidden", id="no permission to list devicetaintrules"),
        pytest.param("not-served", id="the resource.k8s.io API is not served"),
    ],
)
def test_live_v137_unreadable_device_taint_rules_are_not_checked(tmp_path: Path, deny: str) -> None:
    with FakeAPIServer([*_objects(DRA_CASE), TAINT_RULE], git_version="v1.37.2") as srv:
        if deny == "forbidden":
            srv.forbidden.add("devicetaintrules")
        else:
            # Only the rules' resource is missing: the other DRA kinds are still served.
            srv.resources = [r for r in srv.resources if r.plural != "devicetaintrules"]
        _, doc = live_json(srv, tmp_path, "pod", "llm-finetune-0", "-n", "ml")
    assert doc["missingKinds"] == ["DeviceTaintRule"]
    (line,) = [w for w in doc["warnings"] if w.startswith("cannot list devicetaintrules")]
    assert "DeviceTaintRules" in line
    p = pod_doc(doc, "ml/llm-finetune-0")
    assert any(n.startswith(_MISSING_RULES_NOTE) for n in p["notes"]), p["notes"]
    # Unknown rules do not reject: the pod is replayed as fitting, with the note saying what was not seen.
    assert verdicts(doc, "ml/llm-finetune-0")["gpu-a100-1"][0] == "Feasible"


def test_live_v136_does_not_read_device_taint_rules(tmp_path: Path) -> None:
    # DRADeviceTaintRules is beta/off in v1.36: rules do nothing there, so they are not listed at all.
    with FakeAPIServer([*_objects(DRA_CASE), TAINT_RULE], git_version="v1.36.5") as srv:
        _, doc = live_json(srv, tmp_path, "pod", "llm-finetune-0", "-n", "ml")
        paths = srv.paths()
    assert not any("devicetaintrules" in p for p in paths)
    assert verdicts(doc, "ml/llm-finetune-0")["gpu-a100-1"][0] == "Feasible"
    assert not any(_MISSING_RULES_NOTE in n for n in pod_doc(doc, "ml/llm-finetune-0")["notes"])


def test_a_server_that_remembers_its_answers_gives_the_same_report(tmp_path: Path) -> None:
    """benchmarks/live.py --remote: the fake server sends the bytes it encoded before for the same request
    and credentials (its encoding then costs a benchmark's cores nothing), the report is the same, and a
    request with other credentials is still refused."""
    objects = [*_objects(SEED), *_many_pods(1200)]
    with FakeAPIServer(objects) as srv:
        _, fresh = live_json(srv, tmp_path, "pods", "-A")
    with FakeAPIServer(objects) as srv:
        srv.remember_answers = True
        calls: list[str] = []
        real = srv.handle

        def handle(method: str, raw_path: str, headers: dict[str, str]) -> tuple[int, Obj]:
            calls.append(raw_path)
            return real(method, raw_path, headers)

        srv.handle = handle  # type: ignore[method-assign]
        _, first = live_json(srv, tmp_path, "pods", "-A")
        answered = len(calls)
        _, again = live_json(srv, tmp_path, "pods", "-A")
        assert answered and len(calls) == answered  # the second read encoded nothing
        req = urllib.request.Request(
            f"{srv.url}/api/v1/pods?limit=500", headers={"Authorization": "Bearer someone-else"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=5)
        assert refused.value.code == 401
    assert first == again
    assert {**first, "source": ""} == {**fresh, "source": ""}  # the port in "source" is another server's
