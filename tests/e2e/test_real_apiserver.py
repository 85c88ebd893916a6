"""kdiagnose live mode, through the real `kubernetes` Python client, against a real kube-apiserver and
kube-scheduler (e2e/, one binary per release line): live equals offline, the real scheduler's recorded
message equals the replay, snapshots replay, RBAC-limited users degrade as documented, pagination and
a vanishing API server behave, and the audit log shows kdiagnose sent nothing but get/list."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import LINES, ROOT, Cluster, kdiagnose, start_cluster

GOLDEN = ROOT / "fixtures" / "golden"
# Every pending pod of these is unschedulable without preemption victims (fixtures/golden/*.json), so the
# real scheduler running beside them records events and conditions but changes nothing kdiagnose reads.
SAMPLE = [
    "hostports-same-port-conflict",  # NodePorts + NodeResourcesFit, 4 namespaces
    "cluster-statefulset-zonal-pv-wrong-zone",  # StorageClass, PV, PVC (status subresources), VolumeZone
    "preemption-no-eligible-victims",  # PriorityClasses, three pending pods, preemption tail
    "taints-unschedulable-cordoned",  # taints restored after TaintNodesByCondition, unschedulable node
]
CHECK_MANIFEST = ROOT / "tests" / "e2e" / "workload.yaml"

Obj = dict[str, Any]


def _docs(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def pending_pods(path: Path) -> list[tuple[str, str]]:
    return [
        ((d.get("metadata") or {}).get("namespace") or "default", d["metadata"]["name"])
        for d in _docs(path)
        if d.get("kind") == "Pod" and not (d.get("spec") or {}).get("nodeName")
    ]


def meaningful(doc: Obj) -> dict[str, Obj]:
    """The scheduling decision per pod: what the real scheduler would do and why, node by node."""
    out: dict[str, Obj] = {}
    for p in doc["pods"]:
        out[p["pod"]] = {
            "scheduled": p["scheduled"],
            "message": p["message"],
            "fullMessage": p["fullMessage"],
            "node": p["node"],
            "topNodes": p["topNodes"],
            "feasibleNodes": p["feasibleNodes"],
            "prefilter": p["prefilter"],
            "postfilter": p["postfilter"],
            "preemption": p["preemption"],
            "nodes": {
                name: (n["verdict"], n["plugin"], n["reasons"], n["totalScore"])
                for name, n in p["nodes"].items()
            },
            "remedies": [r.get("title") or r.get("summary") for r in p.get("remedies") or []],
        }
    return out


def run_json(*args: str, home: Path, codes: tuple[int, ...] = (0, 1)) -> Obj:
    res = kdiagnose(*args, "-o", "json", home=home)
    assert res.returncode in codes, f"kdiagnose {' '.join(args)} exited {res.returncode}: {res.stderr}"
    doc: Obj = json.loads(res.stdout)
    return doc


@pytest.fixture(
    scope="module", params=[(v, s) for v in LINES for s in SAMPLE], ids=lambda p: f"v{p[0]}-{p[1]}"
)
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    line, name = request.param
    scenario = GOLDEN / f"{name}.yaml"
    dev_ns = pending_pods(scenario)[0][0]
    cl = start_cluster(
        line, tmp_path_factory.mktemp(f"v{line}-{name}"), scenario, scheduler=True, developer_ns=dev_ns
    )
    yield cl
    port = int(cl.info["server"].rsplit(":", 1)[1])
    assert cl.stop() == 0, cl.log_tail()
    # Clean shutdown: nothing listens on the port any more.
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def kc(cl: Cluster, context: str = "admin") -> list[str]:
    return ["--kubeconfig", str(cl.kubeconfig), "--context", context]


def offline(cl: Cluster, version: str, home: Path, *extra: str) -> Obj:
    assert cl.scenario is not None
    return run_json(str(cl.scenario), "--k8s-version", version, *extra, home=home)


def test_server_is_the_release_built(live: Cluster, home: Path) -> None:
    assert live.info["git_version"].startswith(f"v{live.line}.")
    doc = run_json("pods", "-A", *kc(live), home=home)
    # kdiagnose replays an unknown newer minor as the nearest release it knows, and says so.
    assert doc["kubernetesVersion"].startswith("v1.")


def test_pods_all_namespaces_equals_offline(live: Cluster, home: Path) -> None:
    doc = run_json("pods", "-A", *kc(live), home=home)
    assert live.scenario is not None
    assert sorted(doc_pods(doc)) == sorted(f"{ns}/{n}" for ns, n in pending_pods(live.scenario))
    assert meaningful(doc) == meaningful(offline(live, doc["kubernetesVersion"], home))


def doc_pods(doc: Obj) -> list[str]:
    return [p["pod"] for p in doc["pods"]]


def test_pod_command_equals_offline(live: Cluster, home: Path) -> None:
    assert live.scenario is not None
    for ns, name in pending_pods(live.scenario):
        doc = run_json("pod", name, "-n", ns, *kc(live), home=home)
        want = offline(live, doc["kubernetesVersion"], home, "--pod", f"{ns}/{name}")
        assert meaningful(doc) == meaningful(want), f"{ns}/{name}"


def _wait_for_events(cl: Cluster, pods: list[tuple[str, str]], timeout: float = 60.0) -> dict[str, Obj]:
    """The real scheduler's FailedScheduling events (events.k8s.io/v1), read with the admin's client."""
    from kubernetes import client, config

    api = config.new_client_from_config(str(cl.kubeconfig), context="admin")
    try:
        events = client.EventsV1Api(api)
        deadline = time.monotonic() + timeout
        found: dict[str, Obj] = {}
        while time.monotonic() < deadline:
            for ns, name in pods:
                lst = events.list_namespaced_event(
                    ns, field_selector=f"regarding.name={name},reason=FailedScheduling"
                )
                if lst.items:
                    found[f"{ns}/{name}"] = api.sanitize_for_serialization(lst.items[-1])
            if len(found) == len(pods):
                return found
            time.sleep(0.5)
        raise AssertionError(f"no FailedScheduling event for {sorted(set(pods) - set(found))}")
    finally:
        api.close()


def _conditions(cl: Cluster, pods: list[tuple[str, str]]) -> dict[str, Obj]:
    from kubernetes import client, config

    api = config.new_client_from_config(str(cl.kubeconfig), context="admin")
    try:
        core = client.CoreV1Api(api)
        out = {}
        for ns, name in pods:
            pod = core.read_namespaced_pod(name, ns)
            (cond,) = [c for c in pod.status.conditions or [] if c.type == "PodScheduled"]
            out[f"{ns}/{name}"] = {"status": cond.status, "reason": cond.reason, "message": cond.message}
        return out
    finally:
        api.close()


def test_real_scheduler_records_what_kdiagnose_replays(live: Cluster, home: Path) -> None:
    assert live.scenario is not None
    pods = pending_pods(live.scenario)
    events = _wait_for_events(live, pods)
    conditions = _conditions(live, pods)
    res = kdiagnose("pods", "-A", *kc(live), home=home)
    assert res.returncode == 1, res.stderr
    doc = run_json("pods", "-A", *kc(live), home=home)
    for p in doc["pods"]:
        key = p["pod"]
        ev, cond, rec = events[key], conditions[key], p["recorded"]
        # kdiagnose reads what the real kube-scheduler wrote: the event (events.k8s.io/v1, its note
        # truncated at 1024 bytes) and the PodScheduled condition (the whole message).
        assert ev["reportingController"] == "default-scheduler"
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        assert rec["message"] == ev["note"], key
        assert rec["conditionReason"] == "Unschedulable"
        assert rec["conditionMessage"] == cond["message"]
        assert ev["note"] == cond["message"][:1024] or ev["note"].endswith("...")
    unknown = [w for w in doc["warnings"] if "is not a version kdiagnose knows" in w]
    if unknown:
        # The replay is in an older release's dialect; what differs is then a version difference to add
        # to kdiagnose/versions.py, not a live-mode bug. The comparison below runs once the release is known.
        diffs = {
            p["pod"]: (p["message"], conditions[p["pod"]]["message"])
            for p in doc["pods"]
            if not p["recorded"]["agrees"]
        }
        pytest.xfail(f"{unknown[0]}; replayed vs recorded: {diffs}")
    for p in doc["pods"]:
        key = p["pod"]
        assert events[key]["note"] == p["message"], key
        assert conditions[key]["message"] == p["fullMessage"], key
        assert p["recorded"]["agrees"] is True, (key, p["recorded"])
    assert res.stdout.count("Replay agrees") == len(pods)


def test_save_snapshot_replays_offline_to_the_same_result(live: Cluster, home: Path) -> None:
    snap = home / "snap.yaml"
    doc = run_json("pods", "-A", *kc(live), "--save-snapshot", str(snap), home=home)
    again = run_json(str(snap), "--k8s-version", doc["kubernetesVersion"], home=home)
    assert meaningful(again) == meaningful(doc)


def test_check_context_equals_check_snapshot(live: Cluster, home: Path) -> None:
    assert live.scenario is not None
    res = kdiagnose("check", "-f", str(CHECK_MANIFEST), *kc(live), "-o", "json", "--no-config", home=home)
    assert res.returncode in (0, 1), res.stderr
    got = json.loads(res.stdout)
    args = ["check", "-f", str(CHECK_MANIFEST), "--snapshot", str(live.scenario), "-o", "json", "--no-config"]
    off = kdiagnose(*args, "--k8s-version", got["kubernetesVersion"], home=home)
    assert off.returncode == res.returncode, off.stderr
    want = json.loads(off.stdout)
    assert _workloads(got) == _workloads(want)


def _workloads(doc: Obj) -> list[Obj]:
    keys = ("kind", "namespace", "name", "outcome", "fitNow", "fitByPreemption", "message", "placements")
    return [{k: w[k] for k in keys} for w in doc["workloads"]]


def test_viewer_sees_what_admin_sees(live: Cluster, home: Path) -> None:
    admin = run_json("pods", "-A", *kc(live), home=home)
    viewer = run_json("pods", "-A", *kc(live, "viewer"), home=home)
    assert viewer["warnings"] == admin["warnings"]
    assert meaningful(viewer) == meaningful(admin)


def _one_line_error(res: Any) -> str:
    assert res.returncode == 3, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    line: str = res.stderr.strip()
    return line


def test_developer_gets_the_recorded_message_and_the_permissions_it_lacks(live: Cluster, home: Path) -> None:
    assert live.scenario is not None
    ns, name = pending_pods(live.scenario)[0]
    event = _wait_for_events(live, [(ns, name)])[f"{ns}/{name}"]
    denied = [
        f'cannot list {r}: forbidden: user "e2e-developer" needs RBAC list on {r} at the cluster scope'
        for r in ("nodes", "pods")
    ]
    # Its own namespace: the pod, its events and its condition are readable, the nodes and the other
    # namespaces' pods are not: no replay, what the real scheduler recorded, the RBAC that would allow it.
    for args in (["pod", name, "-n", ns], ["pods"]):
        doc = run_json(*args, *kc(live, "developer"), home=home, codes=(1,))
        assert doc["replayDenied"] == denied
        (p,) = [p for p in doc["pods"] if p["pod"] == f"{ns}/{name}"]
        assert p["notReplayed"] and p["nodes"] == {}
        assert p["recorded"]["message"] == event["note"]
        assert p["recorded"]["conditionReason"] == "Unschedulable"
        assert "name: e2e-developer" in doc["rbac"]
    # Every namespace: listing pods cluster-wide is what is denied.
    line = _one_line_error(kdiagnose("pods", "-A", *kc(live, "developer"), home=home))
    assert line.endswith(
        'cannot list pods: forbidden: user "e2e-developer" needs RBAC list on pods at the cluster scope'
    ), line
    # Another namespace's pod.
    line = _one_line_error(kdiagnose("pod", "x", "-n", "kube-system", *kc(live, "developer"), home=home))
    assert line.endswith(
        'cannot get pod "kube-system/x": forbidden: user "e2e-developer" needs RBAC get on pods in namespace "kube-system"'
    ), line


def test_small_chunk_size_pages_and_gives_the_same_result(live: Cluster, home: Path) -> None:
    whole = run_json("pods", "-A", *kc(live), "--chunk-size", "0", home=home)
    paged = run_json("pods", "-A", *kc(live), "--chunk-size", "1", home=home)
    assert meaningful(paged) == meaningful(whole)
    uris = [
        e["requestURI"] for e in live.audit() if e.get("userAgent") == "kdiagnose" and e["verb"] == "list"
    ]
    assert live.scenario is not None
    if sum(d.get("kind") == "Pod" for d in _docs(live.scenario)) > 1:
        assert any("/api/v1/pods?" in u and "limit=1" in u and "continue=" in u for u in uris)
    assert any(u.startswith("/api/v1/nodes?") and "continue=" in u for u in uris)
    assert any(u.startswith("/api/v1/pods?") and "limit" not in u for u in uris)


def test_audit_log_shows_only_get_and_list_from_kdiagnose(live: Cluster) -> None:
    """Last in the module: covers every kdiagnose run against this cluster (all three users)."""
    events = live.audit()
    ours = [e for e in events if e.get("userAgent") == "kdiagnose"]
    assert len(ours) > 20
    users = {e["user"]["username"] for e in ours}
    assert users == {"e2e-admin", "e2e-viewer", "e2e-developer"}
    assert {e["verb"] for e in ours} <= {"get", "list"}, sorted({(e["verb"], e["requestURI"]) for e in ours})
    # The viewer and the developer are used by kdiagnose alone: nothing else may have come from them.
    theirs = [e for e in events if e["user"]["username"] in ("e2e-viewer", "e2e-developer")]
    assert {e["verb"] for e in theirs} <= {"get", "list"}
    # ... while the loader's writes are in the same log (it is the log of every request).
    assert any(e["verb"] == "create" and e["user"]["username"] == "e2e-admin" for e in events)
