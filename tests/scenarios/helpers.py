"""Run a YAML scenario through the replay as the golden harness does (API-server defaulting, one cycle per pod)."""

from __future__ import annotations

from typing import Any

from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for

__all__ = ["diagnose", "diagnose_all", "node", "pod", "scenario", "snapshot_of"]


def diagnose_all(
    tmp_path: object, text: str, version: str = "v1.34.1", config: str | None = None
) -> dict[str, Diagnosis]:
    """Every pending pod's Diagnosis, by `namespace/name`."""
    from pathlib import Path

    base = Path(str(tmp_path))
    scenario = base / "scenario.yaml"
    scenario.write_text(text)
    loaded = load_paths([str(scenario)])
    dialect = dialect_for(version)
    snap = build_snapshot(loaded.objects, dialect, list_kinds=loaded.list_kinds)
    profiles = None
    if config is not None:
        from kdiagnose.schedconfig import parse_scheduler_config

        profiles = parse_scheduler_config(config, "config.yaml", dialect, strict=True).profiles
    sched = Scheduler(snap, profiles)
    return {p.key: sched.diagnose(p) for p in snap.pending}


def snapshot_of(*objs: dict[str, Any], version: str = "v1.34.1") -> Snapshot:
    """A Snapshot straight from object dicts (API-server defaulting applied)."""
    from kdiagnose.load.files import RawObject

    return build_snapshot([RawObject(dict(o), "test") for o in objs], dialect_for(version))


def diagnose(
    tmp_path: object, text: str, pod: str, version: str = "v1.34.1", config: str | None = None
) -> Diagnosis:
    return diagnose_all(tmp_path, text, version, config)[pod]


def node(
    name: str,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    extra: dict[str, str] | None = None,
    images: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Ready node; allocatable = capacity."""
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "100Gi", **(extra or {})}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {
        "capacity": dict(alloc),
        "allocatable": dict(alloc),
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    if images:
        status["images"] = images
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": status,
    }


def pod(
    name: str,
    namespace: str = "default",
    node_name: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    priority: int | None = None,
    labels: dict[str, str] | None = None,
    start: str | None = None,
    extra_requests: dict[str, str] | None = None,
    **spec: object,
) -> dict[str, Any]:
    """A pod with one container `c`; bound (Running) when `node_name` is given."""
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extra_requests or {})
    container: dict[str, Any] = {"name": "c", "image": "registry.k8s.io/pause:3.9"}
    if requests:
        # Extended resources and hugepages cannot be overcommitted: the API server wants limits == requests.
        limits = {k: v for k, v in requests.items() if k not in ("cpu", "memory", "ephemeral-storage")}
        container["resources"] = {"requests": requests, **({"limits": limits} if limits else {})}
    body: dict[str, Any] = {"containers": [container]}
    if priority is not None:
        body["priority"] = priority
    if node_name is not None:
        body["nodeName"] = node_name
    body.update(spec)
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{namespace}-{name}",
            "labels": labels or {},
        },
        "spec": body,
    }
    if node_name is not None:
        obj["status"] = {"phase": "Running", **({"startTime": start} if start else {})}
    return obj


def scenario(*objs: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump_all(list(objs), sort_keys=False)
