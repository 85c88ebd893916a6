"""RBAC and Events against a real kube-apiserver and kube-scheduler (e2e/): the RBAC snippet kdiagnose
prints for a namespace-scoped user is enough for a full replay; a user who may read core/v1 Events but not
events.k8s.io still gets the recorded message; and retries as the real scheduler records them (a new
Event per message, a series per repeat) is read and counted.

One cluster per release line (a scenario with one unschedulable pod); the tests run in file order (the
developer's denials are compared with the fake API server's before it is granted the RBAC) and change the
cluster (RBAC, a node) only through the admin's client, never through kdiagnose.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import LINES, ROOT, Cluster, kdiagnose, start_cluster
from tests.e2e.test_real_apiserver import meaningful, run_json

SCENARIO = ROOT / "fixtures" / "golden" / "resources-too-many-pods.yaml"
NS, POD = "default", "webhook-relay-57c8d9b6f4-t9wzn"  # its one pending pod (Insufficient memory)
Obj = dict[str, Any]


@pytest.fixture(scope="module", params=LINES, ids=lambda v: f"v{v}")
def cl(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    line: str = request.param
    c = start_cluster(
        line, tmp_path_factory.mktemp(f"rbac-v{line}"), SCENARIO, scheduler=True, developer_ns=NS
    )
    yield c
    assert c.stop() == 0, c.log_tail()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def _admin(cl: Cluster) -> Any:
    from kubernetes import config

    return config.new_client_from_config(str(cl.kubeconfig), context="admin")


def kc(cl: Cluster, context: str = "admin", path: Path | None = None) -> list[str]:
    return ["--kubeconfig", str(path or cl.kubeconfig), "--context", context]


def _recorded(cl: Cluster) -> tuple[list[Obj], Obj]:
    """The pod's FailedScheduling events (events.k8s.io/v1) and its PodScheduled condition, as the
    admin reads them."""
    from kubernetes import client

    api = _admin(cl)
    try:
        evs = client.EventsV1Api(api).list_namespaced_event(
            NS, field_selector=f"regarding.name={POD},reason=FailedScheduling"
        )
        pod = client.CoreV1Api(api).read_namespaced_pod(POD, NS)
        (cond,) = [c for c in pod.status.conditions or [] if c.type == "PodScheduled"]
        return [api.sanitize_for_serialization(e) for e in evs.items], api.sanitize_for_serialization(cond)
    finally:
        api.close()


def _wait(what: str, cond: Any, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _get(cl: Cluster, context: str, path: str) -> tuple[int, Obj]:
    """One GET through the real client, as kdiagnose's ApiReader sends it: (status, JSON body)."""
    from kdiagnose.load.apireader import ApiReader, ApiStatusError
    from kdiagnose.load.kubeconfig import resolve_target

    reader = ApiReader(resolve_target(str(cl.kubeconfig), context), 30.0)
    try:
        return 200, reader.get_json(path)
    except ApiStatusError as e:
        return e.status, {"reason": e.reason, "message": e.message}
    finally:
        reader.close()


@pytest.mark.parametrize(
    ("context", "path"),
    [
        pytest.param("developer", "/api/v1/nodes", id="403 list nodes"),
        pytest.param("developer", "/api/v1/namespaces/kube-system/pods/x", id="403 get a pod elsewhere"),
        pytest.param("developer", "/apis/storage.k8s.io/v1/storageclasses", id="403 list, named group"),
        pytest.param("admin", "/api/v1/namespaces/default/pods/nope", id="404 a missing pod"),
        pytest.param("admin", "/apis/karpenter.sh/v1/nodepools", id="404 a group not served"),
        pytest.param("admin", "/apis/resource.k8s.io/v1/nosuchthings", id="404 a resource not served"),
    ],
)
def test_the_fake_api_server_answers_as_the_real_one(cl: Cluster, context: str, path: str) -> None:
    """tests/fake_apiserver.py (the unit tests' server) gives the same status, reason and message."""
    from tests.fake_apiserver import FakeAPIServer

    real = _get(cl, context, path)
    fake = FakeAPIServer([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}])
    fake.not_served_groups = {"karpenter.sh"}  # as this cluster: no Karpenter CRDs
    if context == "developer":
        fake.only_namespaces = {NS}
        fake.user = "e2e-developer"
    with fake:
        fake_kc = fake.kubeconfig(cl.out / f"fake-{context}.kubeconfig", context=context)
        from kdiagnose.load.apireader import ApiReader, ApiStatusError
        from kdiagnose.load.kubeconfig import resolve_target

        reader = ApiReader(resolve_target(str(fake_kc), context), 30.0)
        try:
            got: tuple[int, Obj] = (200, reader.get_json(path))
        except ApiStatusError as e:
            got = (e.status, {"reason": e.reason, "message": e.message})
        finally:
            reader.close()
    assert got == real


def test_completion_and_the_all_namespaces_hint_on_the_real_server(cl: Cluster, home: Path) -> None:
    """Before the developer is granted anything: its completion lists its namespace's pods, and stays
    silent for namespaces it may not list; the admin's `pods -n kube-system` points at -A."""
    import subprocess
    import sys

    code = "from kdiagnose.cli import kubectl_complete_main; kubectl_complete_main()"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}

    def complete(*args: str) -> list[str]:
        res = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60
        )
        assert res.returncode == 0 and res.stderr == "", res.stderr
        return res.stdout.splitlines()

    assert complete("pod", *kc(cl, "developer"), "webhook") == [f"{POD}\tPending", ":4"]
    assert complete("pod", *kc(cl, "developer"), "-n", "") == [":0"]  # list namespaces: forbidden
    assert "default" in [c.split("\t")[0] for c in complete("pod", *kc(cl), "-n", "")]
    doc = run_json("pods", "-n", "kube-system", *kc(cl), home=home)
    assert doc["pods"] == []
    assert doc["scopeHint"].startswith("Nothing Pending in namespace kube-system, but 1 Pending pod in 1 ")
    assert doc["scopeCommand"].startswith("kdiagnose pods -A ")


def test_the_printed_rbac_lets_the_developer_replay(cl: Cluster, home: Path) -> None:
    events, cond = _wait("the scheduler's event", lambda: _recorded(cl)[0] and _recorded(cl))
    dev = run_json("pod", POD, "-n", NS, *kc(cl, "developer"), home=home, codes=(1,))
    (p,) = dev["pods"]
    assert p["notReplayed"] and dev["replayDenied"]
    assert p["recorded"]["message"] == events[-1]["note"]
    assert p["recorded"]["conditionMessage"] == cond["message"]
    # An admin applies exactly what kdiagnose printed (the YAML of the human report is the same text).
    human = kdiagnose("pod", POD, "-n", NS, *kc(cl, "developer"), home=home)
    assert human.returncode == 1, human.stderr
    assert dev["rbac"] in human.stdout
    from kubernetes import client

    api = _admin(cl)
    try:
        rbac = client.RbacAuthorizationV1Api(api)
        role, binding = yaml.safe_load_all(dev["rbac"])
        rbac.create_cluster_role(role)
        rbac.create_cluster_role_binding(binding)
    finally:
        api.close()
    admin = run_json("pod", POD, "-n", NS, *kc(cl), home=home)

    def replayed() -> Obj | None:
        doc = run_json("pod", POD, "-n", NS, *kc(cl, "developer"), home=home)
        return doc if not doc["replayDenied"] else None  # RBAC's cache takes a moment

    doc = _wait("the developer's replay", replayed, 30.0)
    assert doc["warnings"] == admin["warnings"]
    assert meaningful(doc) == meaningful(admin)
    assert doc["pods"][0]["recorded"]["agrees"] is True
    # The same for `pods -A` (cluster-wide lists, the autoscalers' reads).
    everyone = run_json("pods", "-A", *kc(cl, "developer"), home=home)
    assert everyone["warnings"] == run_json("pods", "-A", *kc(cl), home=home)["warnings"]


def _service_account(cl: Cluster, name: str, rules: list[Obj], home: Path) -> Path:
    """A ServiceAccount bound to a ClusterRole of `rules`, and a kubeconfig with its token (TokenRequest)."""
    from kubernetes import client

    api = _admin(cl)
    try:
        core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
        core.create_namespaced_service_account(NS, {"metadata": {"name": name}})
        rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
        rbac.create_cluster_role_binding(
            {
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NS}],
            }
        )
        tr = core.create_namespaced_service_account_token(name, NS, {"spec": {"expirationSeconds": 3600}})
        token = tr.status.token
    finally:
        api.close()
    cfg = yaml.safe_load(cl.kubeconfig.read_text())
    cfg["users"] = [{"name": name, "user": {"token": token}}]
    cfg["contexts"] = [{"name": name, "context": {"cluster": "e2e", "user": name, "namespace": NS}}]
    cfg["current-context"] = name
    path = home / f"{name}.kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    return path


_AGE_RE = re.compile(r"\b\d+[smhd](\d+[smh])?\b")


def _ageless(v: Any) -> Any:
    """Ages are measured at each run's own fetch time."""
    if isinstance(v, dict):
        return {k: _ageless(x) for k, x in v.items() if k != "ageSeconds"}
    if isinstance(v, list):
        return [_ageless(x) for x in v]
    return v


def test_core_v1_events_when_events_k8s_io_is_not_readable(cl: Cluster, home: Path) -> None:
    from kdiagnose.load.rbac import rbac_snippet

    role, _ = yaml.safe_load_all(rbac_snippet(("User", "x", "")))
    rules = [r for r in role["rules"] if r["apiGroups"] != ["events.k8s.io"]]
    path = _service_account(cl, "kdiagnose-core-events", rules, home)
    admin = run_json("pods", "-A", *kc(cl), home=home)

    def ready() -> Obj | None:
        doc = run_json("pods", "-A", *kc(cl, "kdiagnose-core-events", path), home=home)
        return doc if doc["pods"] and not doc["replayDenied"] else None

    doc = _wait("the service account's replay", ready, 30.0)
    # The same recorded message, read from core/v1 (involvedObject.* selectors) after a 403 on
    # events.k8s.io; nothing about events is reported missing.
    got, want = (_ageless(p["recorded"]) for p in (doc["pods"][0], admin["pods"][0]))
    for r in (got, want):
        r["explanation"] = _AGE_RE.sub("<age>", r["explanation"] or "")
    assert got == want, {
        k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)
    }
    assert doc["pods"][0]["recorded"]["message"]
    assert doc["warnings"] == admin["warnings"]
    user = f"system:serviceaccount:{NS}:kdiagnose-core-events"
    theirs = [e for e in cl.audit() if e["user"]["username"] == user and e.get("userAgent") == "kdiagnose"]
    v1 = [e for e in theirs if e["requestURI"].startswith("/apis/events.k8s.io/v1/")]
    core = [e for e in theirs if "/api/v1/" in e["requestURI"] and "/events?" in e["requestURI"]]
    assert v1 and all(e["responseStatus"]["code"] == 403 for e in v1)
    assert core and all(e["responseStatus"]["code"] == 200 for e in core)
    assert all("involvedObject" in e["requestURI"] or "reason%3D" in e["requestURI"] for e in core)


def _add_capacity(cl: Cluster, node: str, memory: str) -> None:
    """Create `node` (TaintNodesByCondition gives it the not-ready taint) or raise its allocatable: a node
        event NodeResourcesFit's queueing hint answers Queue for (the pod fits it, and a resource the pod
    requests - memory - grew), so the scheduler retries the pod."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    api = _admin(cl)
    try:
        core = client.CoreV1Api(api)
        try:
            core.read_node(node)
        except ApiException:
            core.create_node({"metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}}})
        resources = {"cpu": "64", "memory": memory, "pods": "110", "ephemeral-storage": "500Gi"}
        core.patch_node_status(node, {"status": {"capacity": resources, "allocatable": resources}})
    finally:
        api.close()


def test_events_of_retries_as_the_real_scheduler_writes_them(cl: Cluster, home: Path) -> None:
    """client-go's events.k8s.io recorder (what kube-scheduler uses, tools/events) counts a repeat in the
    Event's `series` only while the pod's ObjectReference - resourceVersion included - is unchanged: a new
    message updates the PodScheduled condition (a new resourceVersion), so it starts a new Event object; the
    same message again is a series on that one. kdiagnose reads the newest and counts every attempt with
    its message."""
    first_events, first_cond = _recorded(cl)
    _add_capacity(cl, "big-new-node", "256Gi")

    def newest(events: list[Obj], cond: Obj) -> list[Obj]:
        return [e for e in events if e["note"] == cond["message"][:1024]]

    def retried() -> tuple[list[Obj], Obj] | None:
        # The condition is written first; the event goes through the recorder's queue.
        events, cond = _recorded(cl)
        return (events, cond) if cond["message"] != first_cond["message"] and newest(events, cond) else None

    events, cond = _wait("the scheduler's retry", retried)
    assert cond["message"].startswith("0/4 nodes are available: ")
    assert "untolerated taint" in cond["message"]  # the not-ready taint TaintNodesByCondition added
    (ev,) = newest(events, cond)
    assert ev.get("series") is None  # a new Event object, not a series of the first one
    assert ev["regarding"]["resourceVersion"] != first_events[-1]["regarding"]["resourceVersion"]
    assert {e["note"] for e in first_events} <= {e["note"] for e in events}  # the first is still there
    doc = run_json("pod", POD, "-n", NS, *kc(cl), home=home)
    (p,) = doc["pods"]
    assert p["fullMessage"] == cond["message"]  # the replay sees the new node as the scheduler did
    rec = p["recorded"]
    assert (rec["message"], rec["count"], rec["agrees"]) == (ev["note"], 1, True), rec

    # The same message again (more memory, still not-ready). The last condition update changed the pod's
    # resourceVersion after that attempt: one more new Event, and only then a series on it.
    def repeated(total: int) -> list[Obj] | None:
        events, now = _recorded(cl)
        same = newest(events, now)
        counts = sum((e.get("series") or {}).get("count") or 1 for e in same)
        return same if now["message"] == cond["message"] and counts >= total else None

    _add_capacity(cl, "big-new-node", "257Gi")
    same = _wait("the scheduler's second retry", lambda: repeated(2))
    assert len({e["regarding"]["resourceVersion"] for e in same}) == len(same)
    rec = run_json("pod", POD, "-n", NS, *kc(cl), home=home)["pods"][0]["recorded"]
    assert (rec["message"], rec["count"], rec["agrees"]) == (ev["note"], 2, True), (rec, same)
    _add_capacity(cl, "big-new-node", "258Gi")
    same = _wait("the scheduler's third retry", lambda: repeated(3))
    assert any(e.get("series") for e in same), same  # the pod is unchanged now: a series
    rec = run_json("pod", POD, "-n", NS, *kc(cl), home=home)["pods"][0]["recorded"]
    total = sum((e.get("series") or {}).get("count") or 1 for e in same)
    assert (rec["message"], rec["count"], rec["agrees"]) == (ev["note"], total, True), (rec, same)
    human = kdiagnose("pod", POD, "-n", NS, *kc(cl), home=home)
    assert f" ago, {total} time(s)):" in human.stdout, human.stdout


def test_audit_log_shows_only_get_and_list_from_kdiagnose(cl: Cluster) -> None:
    """Last in the module: every kdiagnose request against this cluster."""
    ours = [e for e in cl.audit() if e.get("userAgent") == "kdiagnose"]
    assert ours and {e["verb"] for e in ours} <= {"get", "list"}, sorted(
        {(e["verb"], e["requestURI"]) for e in ours}
    )
