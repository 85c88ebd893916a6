"""Whole inputs: files -> Snapshot, `kubectl cluster-info dump` layouts, and the events a dump recorded.

`kubectl cluster-info dump --output-directory DIR` writes `DIR/nodes.json` (a NodeList) and, per namespace,
`DIR/<ns>/{pods,events,services,deployments,replicasets,daemonsets,replication-controllers}.json` plus
`DIR/<ns>/<pod>/logs.txt` (ignored). Without `-A` it dumps only the current namespace and kube-system,
which silently hides most of the cluster's pods: the snapshot warns about that.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from kdiagnose.errors import InputError
from kdiagnose.load.files import CLUSTER_INFO_NAMESPACE_FILES, find_cluster_info_dumps, load_paths
from kdiagnose.load.raw import LoadResult
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.versions import infer_from_kubelets, kubelet_version

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.versions import Dialect

__all__ = [
    "CLUSTER_INFO_NAMESPACE_FILES",
    "failed_scheduling_events",
    "find_cluster_info_dumps",
    "input_warnings",
    "load_snapshot",
    "require_known_kinds",
]

Obj = dict[str, Any]

# A dump taken with -A has at least default, kube-system, kube-public and kube-node-lease.
_MIN_ALL_NAMESPACES = 3


def input_warnings(result: LoadResult) -> list[str]:
    """Warnings only the file layout can tell: a cluster-info dump without -A, nodes without any pods, a file
    that looks cut off."""
    out: list[str] = list(result.warnings)
    for root, namespaces in result.cluster_info_dumps.items():
        if len(namespaces) < _MIN_ALL_NAMESPACES:
            out.append(
                f"{root} is a `kubectl cluster-info dump` of only namespace(s) {', '.join(namespaces)}: "
                "it was taken without --all-namespaces (-A), so pods of other namespaces are missing and "
                "node usage, affinity and spread checks see less than the cluster has"
            )
    kinds = {r.kind for r in result.objects}
    if "Node" in kinds and "Pod" not in kinds and "Pod" not in result.list_kinds:
        out.append(
            "the input has nodes but no pods: every node looks empty (dumped with `kubectl get nodes` only?)"
        )
    return out


def _kubelets(result: LoadResult) -> Iterator[tuple[str, str]]:
    for o in result.objects:
        if o.kind == "Node":
            meta = o.obj.get("metadata")
            yield str(meta.get("name") or "") if isinstance(meta, dict) else "", kubelet_version(o.obj)


def load_snapshot(
    paths: list[str], dialect: Dialect | None, *, stdin: BinaryIO | None = None, keep_raw: bool = False
) -> tuple[Snapshot, LoadResult]:
    """Read every path and build the Snapshot, with the layout warnings added. Without a dialect (no
    --k8s-version), the release is inferred from the nodes' kubelet versions (versions.infer_from_kubelets)."""
    # Millions of long-lived dicts: the cyclic GC would rescan them over and over while they are created
    # (half the load time of a 150,000-pod dump). Collect nothing meanwhile, then freeze them out of its way.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = load_paths(paths, stdin)
        version_warnings: list[str] = []
        if dialect is None:
            dialect, version_warnings = infer_from_kubelets(_kubelets(result))
        snap = build_snapshot(result.objects, dialect, list_kinds=result.list_kinds, keep_raw=keep_raw)
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()
    for w in version_warnings + input_warnings(result):
        if w not in snap.warnings:
            snap.warnings.append(w)
    return snap, result


def require_known_kinds(snap: Snapshot, result: LoadResult, paths: list[str]) -> None:
    """Objects only of kinds the replay never reads: an empty report would pass for "nothing is pending"."""
    if result.objects and not snap.node_infos and not snap.pods and snap.present <= {"Node", "Pod"}:
        skipped = ", ".join(f"{n} {k}" for k, n in sorted(snap.skipped.items()))
        hint = ""
        if "KubeSchedulerConfiguration" in snap.skipped:
            hint = " (a KubeSchedulerConfiguration goes to --scheduler-config)"
        raise InputError(
            f"{', '.join(paths) or '<stdin>'}: no objects of a kind kdiagnose reads (Nodes, Pods, ...); "
            f"skipped {skipped}{hint}"
        )


# ---------------------------------------------------------------------------------------------- events

_EVENTS_KEY = "kdiagnose/failed-scheduling-events"


def _event_fields(ev: Obj) -> tuple[Obj, str, str, int, str]:
    """(regarding, reason, message, count, time) of a core/v1 or events.k8s.io/v1 Event."""
    if isinstance(ev.get("regarding"), dict) or str(ev.get("apiVersion", "")).startswith("events.k8s.io"):
        series: Obj = ev["series"] if isinstance(ev.get("series"), dict) else {}
        count = series.get("count") or ev.get("deprecatedCount") or 1
        when = (
            series.get("lastObservedTime") or ev.get("eventTime") or ev.get("deprecatedLastTimestamp") or ""
        )
        return (
            ev.get("regarding") or {},
            str(ev.get("reason") or ""),
            str(ev.get("note") or ""),
            int(count),
            str(when),
        )
    count = ev.get("count") or (ev.get("series") or {}).get("count") or 1
    # The order of recorded.py's event view: lastTimestamp, series.lastObservedTime, eventTime, firstTimestamp.
    series_time = ev["series"].get("lastObservedTime") if isinstance(ev.get("series"), dict) else None
    when = ev.get("lastTimestamp") or series_time or ev.get("eventTime") or ev.get("firstTimestamp") or ""
    return (
        ev.get("involvedObject") or {},
        str(ev.get("reason") or ""),
        str(ev.get("message") or ""),
        int(count),
        str(when),
    )


def _by_karpenter(ev: Obj) -> bool:
    """Karpenter writes FailedScheduling too ("Failed to schedule pod, ..."): not the scheduler's message."""
    from kdiagnose.autoscaler.events import KARPENTER_FAILED_PREFIX

    source = ev.get("source")
    by = source.get("component") if isinstance(source, dict) else None
    component = str(by or ev.get("reportingController") or ev.get("reportingComponent") or "")
    text = str(ev.get("message") or ev.get("note") or "")
    return "karpenter" in component.lower() or text.startswith(KARPENTER_FAILED_PREFIX)


def _failed_scheduling_index(snap: Snapshot) -> dict[str, list[tuple[str, int, str, str]]]:
    idx: dict[str, list[tuple[str, int, str, str]]] | None = snap.cache.get(_EVENTS_KEY)
    if idx is None:
        idx = {}
        for ev in snap.kind("Event"):
            try:
                regarding, reason, message, count, when = _event_fields(ev)
            except (TypeError, ValueError, AttributeError):
                continue
            if reason != "FailedScheduling" or regarding.get("kind", "Pod") != "Pod" or _by_karpenter(ev):
                continue
            ns = regarding.get("namespace") or (ev.get("metadata") or {}).get("namespace") or "default"
            key = f"{ns}/{regarding.get('name')}"
            idx.setdefault(key, []).append((when, count, message, str(regarding.get("uid") or "")))
        snap.cache[_EVENTS_KEY] = idx
    return idx


def failed_scheduling_events(snap: Snapshot, pod: Pod) -> list[tuple[str, int, str]]:
    """The input's FailedScheduling events for the pod (this pod's uid when both have one): (time, count, message)."""
    return [
        (when, count, message)
        for when, count, message, uid in _failed_scheduling_index(snap).get(pod.key, [])
        if not uid or not pod.uid or uid == pod.uid
    ]
