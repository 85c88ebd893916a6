"""A namespace-scoped user (no `list nodes`, pods only in its namespace): live mode falls back to what the
cluster recorded, names the denied permissions and prints the read-only RBAC that would allow the replay.
And that RBAC snippet grants exactly the requests kdiagnose sends (checked against every request of real
runs through the kubernetes client, tests/fake_apiserver.py)."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from tests.fake_apiserver import FakeAPIServer
from tests.test_live import SEED, SEED_MESSAGE, _event, _isolated_env, _objects, run

__all__ = ["_isolated_env"]

ROOT = Path(__file__).resolve().parent.parent
Obj = dict[str, Any]
CONDITION_MESSAGE = SEED_MESSAGE  # as the scheduler writes it: the condition has the whole message


def _seed_with_records() -> list[Obj]:
    objs = _objects(SEED)
    for o in objs:
        if o.get("kind") == "Pod" and o["metadata"]["name"] == "hello-web-new":
            o.setdefault("status", {})["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": CONDITION_MESSAGE,
                    "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60)),
                }
            ]
    return [*objs, _event(SEED_MESSAGE, count=4)]


def _developer(user: str = "dev") -> FakeAPIServer:
    srv = FakeAPIServer(_seed_with_records())
    srv.only_namespaces = {"default"}
    srv.user = user
    return srv


def _denied(user: str) -> list[str]:
    return [
        f'cannot list nodes: forbidden: user "{user}" needs RBAC list on nodes at the cluster scope',
        f'cannot list pods: forbidden: user "{user}" needs RBAC list on pods at the cluster scope',
    ]


@pytest.mark.parametrize("args", [["pod", "hello-web-new"], ["pods"]], ids=["pod", "pods"])
def test_namespace_scoped_user_gets_the_recorded_message_and_the_rbac_it_lacks(
    tmp_path: Path, args: list[str]
) -> None:
    with _developer() as srv:
        kc = str(srv.kubeconfig(tmp_path / "kc"))
        res = run(*args, "--kubeconfig", kc, "-o", "json")
        human = run(*args, "--kubeconfig", kc)
        assert srv.methods() == {"GET"}
    # Not a failure: exit 1 (the pod is unschedulable, as the cluster recorded), the JSON document.
    assert res.exit_code == 1, res.stderr
    doc = json.loads(res.stdout)
    assert doc["replayDenied"] == _denied("dev")
    (p,) = doc["pods"]
    assert p["pod"] == "default/hello-web-new"
    assert p["notReplayed"].startswith("not replayed: this context may not list nodes or pods cluster-wide")
    assert p["nodes"] == {} and p["message"] is None and p["remedies"] == []
    rec = p["recorded"]
    assert (rec["message"], rec["count"]) == (SEED_MESSAGE, 4)
    assert (rec["conditionReason"], rec["conditionMessage"]) == ("Unschedulable", CONDITION_MESSAGE)
    assert rec["agrees"] is None  # nothing was replayed to compare with
    role, binding = list(yaml.safe_load_all(doc["rbac"]))
    assert role["kind"] == "ClusterRole" and binding["kind"] == "ClusterRoleBinding"
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "dev"}]

    assert human.exit_code == 1, human.stderr
    lines = human.stdout.splitlines()
    # The answer first: verdict, the recorded cause, what to do.
    assert lines[0] == "Pod default/hello-web-new: NOT REPLAYED  (nodes not readable)"
    assert lines[1].startswith("Cause: recorded: 2 Insufficient cpu, 1 node(s) ")
    # The cause is wrapped whole (continuation lines hang by two), then the next step.
    after = next(line for line in lines[2:] if not line.startswith("  "))
    assert after == "Next: to replay it, an admin grants the read-only RBAC printed below"
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    flat = " ".join(human.stdout.split())
    assert SEED_MESSAGE in flat  # the recorded message, word-wrapped
    assert "PodScheduled=False Unschedulable" in flat
    for line in _denied("dev"):
        assert line in flat
    # The snippet is printed verbatim (never re-wrapped): it parses back to the JSON's.
    start = human.stdout.index("# Read-only access for kdiagnose")
    end = human.stdout.index("\n\n", start)
    assert list(yaml.safe_load_all(human.stdout[start:end])) == [role, binding]


def test_a_service_account_gets_a_service_account_binding(tmp_path: Path) -> None:
    with _developer("system:serviceaccount:ci:kdiagnose") as srv:
        res = run("pod", "hello-web-new", "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")), "-o", "json")
    assert res.exit_code == 1, res.stderr
    _, binding = yaml.safe_load_all(json.loads(res.stdout)["rbac"])
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kdiagnose", "namespace": "ci"}]


def test_another_namespace_and_every_namespace_stay_one_line_errors(tmp_path: Path) -> None:
    with _developer() as srv:
        kc = str(srv.kubeconfig(tmp_path / "kc"))
        other = run("pod", "x", "-n", "kube-system", "--kubeconfig", kc)
        every = run("pods", "-A", "--kubeconfig", kc)
    assert other.exit_code == 3 and other.stdout == ""
    assert other.stderr == (
        'kdiagnose: error: cannot get pod "kube-system/x": forbidden: user "dev" needs RBAC get on pods '
        'in namespace "kube-system"\n'
    )
    assert every.exit_code == 3 and every.stdout == ""
    assert every.stderr == (
        'kdiagnose: error: cannot list pods: forbidden: user "dev" needs RBAC list on pods at the cluster scope\n'
    )


def test_a_denied_optional_kind_is_still_a_warning_not_a_fallback(tmp_path: Path) -> None:
    # Only the lists the replay cannot do without (nodes, pods) turn it off; others stay "not verified".
    with FakeAPIServer(_seed_with_records()) as srv:
        srv.forbidden.add("services")
        res = run("pod", "hello-web-new", "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")), "-o", "json")
    doc = json.loads(res.stdout)
    assert doc["replayDenied"] == [] and doc["rbac"] is None
    assert doc["pods"][0]["notReplayed"] is None and doc["pods"][0]["nodes"]
    assert any(w.startswith("cannot list services: forbidden") for w in doc["warnings"])


# ---------------------------------------------------------------------------------------------- the snippet


def _request(path: str) -> tuple[str, str, str, str] | None:
    """(apiGroup, resource, verb, name) an RBAC authorizer sees for a GET of `path`; None for non-resource
    URLs (/version, discovery), which every authenticated user may read."""
    segs = [s for s in urlsplit(path).path.split("/") if s]
    if segs[:1] == ["api"] and len(segs) >= 3:
        group, rest = "", segs[2:]
    elif segs[:1] == ["apis"] and len(segs) >= 4:
        group, rest = segs[1], segs[3:]
    else:
        return None
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    name = rest[1] if len(rest) > 1 else ""
    return group, rest[0], "get" if name else "list", name


def _allowed(rules: list[Obj], req: tuple[str, str, str, str]) -> bool:
    group, resource, verb, name = req
    return any(
        group in r["apiGroups"]
        and resource in r["resources"]
        and verb in r["verbs"]
        and (not r.get("resourceNames") or name in r["resourceNames"])
        for r in rules
    )


def _granted(rules: list[Obj]) -> set[tuple[str, str, str, str]]:
    return {
        (g, res, v, n)
        for r in rules
        for g in r["apiGroups"]
        for res in r["resources"]
        for v in r["verbs"]
        for n in (r.get("resourceNames") or [""])
    }


def test_the_snippet_grants_exactly_the_requests_kdiagnose_sends(tmp_path: Path) -> None:
    """Every request of `check --context` (which lists every kind the release reads), `pod`, and `pods`
    against a server without events.k8s.io (core/v1 Events) is allowed by the snippet, and every grant is
    used."""
    from kdiagnose.load.rbac import rbac_snippet

    role, _ = yaml.safe_load_all(rbac_snippet(("User", "u", "")))
    rules: list[Obj] = role["rules"]
    seen: set[tuple[str, str, str, str]] = set()
    manifests = ROOT / "fixtures" / "check" / "web-anti-affinity.manifests.yaml"
    # check --context at v1.37 (DeviceTaintRules are read from v1.37 on) and at v1.34.
    runs: list[tuple[str, bool, list[str]]] = [
        (
            "v1.37.2",
            True,
            ["check", "-f", str(manifests), "--context", "fake", "--no-remedies", "-o", "json"],
        ),
        (
            "v1.34.1",
            True,
            ["check", "-f", str(manifests), "--context", "fake", "--no-remedies", "-o", "json"],
        ),
        ("v1.34.1", True, ["pod", "hello-web-new"]),
        ("v1.34.1", False, ["pods", "-A"]),
    ]
    for version, events_v1, args in runs:
        objs = copy.deepcopy(_seed_with_records())
        with FakeAPIServer(objs, git_version=version, serve_events_v1=events_v1) as srv:
            res = run(*args, "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")))
            assert res.exit_code in (0, 1), res.stderr
            for method, path in srv.requests:
                assert method == "GET"
                req = _request(path)
                if req is None:
                    continue
                # The authorizer checks a selector-less `get` by name and `list` alike; queries don't matter.
                assert parse_qs(urlsplit(path).query).get("watch") is None
                assert _allowed(rules, req), (path, req)
                seen.add(req if req[3] in ("", "cluster-autoscaler-status") else (*req[:3], ""))
    granted = _granted(rules)
    # `get pods` is granted for `kdiagnose pod NAME` (the name varies).
    seen_any_name = {(g, r, v, "" if (r == "pods" and v == "get") else n) for g, r, v, n in seen}
    assert granted == seen_any_name, (sorted(granted - seen_any_name), sorted(seen_any_name - granted))


def test_nodes_failing_otherwise_than_forbidden_is_still_fatal(tmp_path: Path) -> None:
    # Only an RBAC denial means "this user may not": a server error is an error (exit 3, one line).
    with FakeAPIServer(_seed_with_records()) as srv:
        srv.faults["/api/v1/nodes"] = "status-500"
        res = run("pod", "hello-web-new", "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")))
    assert res.exit_code == 3 and res.stdout == ""
    assert res.stderr == "kdiagnose: error: cannot list nodes: 500 InternalError: injected fault\n"


# ---------------------------------------------------------------------------------------------- -A hint


def _pending(name: str, namespace: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name.split("-")[0]}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": "Pending"},
    }


@pytest.mark.parametrize(
    ("args", "hint", "command"),
    [
        pytest.param(
            ["pods", "-n", "quiet"],
            "Nothing Pending in namespace quiet, but 3 Pending pods in 2 other namespaces: shop (2), "
            "default (1). All namespaces:",
            "kdiagnose pods -A",
            id="count and namespaces",
        ),
        pytest.param(
            ["pods", "-n", "quiet", "-l", "app=web"],
            "Nothing Pending in namespace quiet, but 1 Pending pod in 1 other namespace: shop (1). "
            "All namespaces:",
            "kdiagnose pods -A -l app=web",
            id="the same selector",
        ),
    ],
)
def test_nothing_pending_here_but_elsewhere_suggests_all_namespaces(
    tmp_path: Path, args: list[str], hint: str, command: str
) -> None:
    objs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {}},
        _pending("web-1", "shop"),
        _pending("db-1", "shop"),
        _pending("job-1", "default"),
    ]
    with FakeAPIServer(objs) as srv:
        kc = str(srv.kubeconfig(tmp_path / "kc"))
        res = run(*args, "--kubeconfig", kc, "-o", "json")
        human = run(*args, "--kubeconfig", kc)
        assert srv.methods() == {"GET"}
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["pods"] == []
    assert doc["scopeHint"] == hint
    assert doc["scopeCommand"] == f"{command} --kubeconfig {kc}"
    lines = human.stdout.splitlines()
    assert lines[0] == "No pending pods to diagnose."
    assert " ".join(" ".join(lines[1:3]).split()) == hint
    assert lines[3] == f"  {command} --kubeconfig {kc}"  # whole, never wrapped


def test_no_hint_when_nothing_is_pending_anywhere_or_other_pods_are_unlistable(tmp_path: Path) -> None:
    objs = [_pending("web-1", "shop")]
    with FakeAPIServer(objs) as srv:
        kc = str(srv.kubeconfig(tmp_path / "kc"))
        assert (
            json.loads(run("pods", "-n", "shop", "-l", "app=db", "--kubeconfig", kc, "-o", "json").stdout)[
                "scopeHint"
            ]
            is None
        )
    with FakeAPIServer(objs) as srv:
        srv.only_namespaces = {"quiet"}
        res = run("pods", "-n", "quiet", "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")))
    assert (res.exit_code, res.stderr) == (0, "")
    assert res.stdout.splitlines()[0] == "No pending pods to diagnose."
    assert "Pending" not in res.stdout.split("\n", 1)[1]


# ---------------------------------------------------------------------------------------------- dropped connections


def test_a_connection_dropped_under_a_get_is_tried_once_more(tmp_path: Path) -> None:
    # As client-go retries a GET on "connection reset"/EOF: the page is asked again on a new connection.
    with FakeAPIServer(_seed_with_records()) as srv:
        srv.faults["/api/v1/nodes"] = "drop-once"
        res = run("pods", "-A", "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")), "-o", "json")
        nodes = [p for p in srv.paths() if p.startswith("/api/v1/nodes")]
    assert res.exit_code == 1, res.stderr
    assert len(nodes) == 2 and nodes[0] == nodes[1]
    assert json.loads(res.stdout)["summary"]["nodes"] == 5


def test_a_connection_dropped_twice_is_one_clean_error(tmp_path: Path) -> None:
    with FakeAPIServer(_seed_with_records()) as srv:
        srv.faults["/api/v1/nodes"] = "drop"
        res = run("pods", "-A", "--kubeconfig", str(srv.kubeconfig(tmp_path / "kc")))
        nodes = [p for p in srv.paths() if p.startswith("/api/v1/nodes")]
        url = srv.url
    assert res.exit_code == 3 and res.stdout == ""
    assert len(nodes) == 2  # once more, not forever
    assert res.stderr == (
        f"kdiagnose: error: cannot reach the API server {url} (context fake): "
        "the connection was closed before the answer was complete\n"
    )


def test_a_group_the_server_does_not_serve_is_not_served_not_not_found(tmp_path: Path) -> None:
    # The real kube-apiserver answers a group it does not serve with a plain-text "404 page not found"
    # (tests/e2e/test_rbac_events.py compares the fake with it): that is a missing API, not a missing object.
    with FakeAPIServer(_seed_with_records()) as srv:
        srv.not_served_groups.add("storage.k8s.io")
        res = run(
            "check",
            "-f",
            str(ROOT / "fixtures" / "check" / "web-anti-affinity.manifests.yaml"),
            "--context",
            "fake",
            "--kubeconfig",
            str(srv.kubeconfig(tmp_path / "kc")),
            "-o",
            "json",
            "--no-remedies",
        )
    doc = json.loads(res.stdout)
    lines = [w for w in doc["warnings"] if w.startswith("cannot list storageclasses")]
    assert lines and lines[0].startswith("cannot list storageclasses: not served by this API server"), lines
