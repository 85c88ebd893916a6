"""Small clusters for the report-layout tests, written out as a kubectl dump would have them.

One 16-CPU node pool of two nodes (plus a tainted control plane) and pending pods of Deployments (via
ReplicaSets, as the Deployment controller creates them), a StatefulSet, a Job and a DaemonSet.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
# What kube-scheduler v1.34 records for a pod no node has room for here (the wording and order of the
# golden fixtures recorded from the real scheduler, e.g. fixtures/golden/nodeaffinity-in-operator.json).
TOO_BIG = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: "
    "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
)


def node(
    name: str, cpu: str = "16", memory: str = "64Gi", taints: list[Obj] | None = None, **labels: str
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "creationTimestamp": "2026-11-01T00:00:00Z",
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **labels},
        },
        "spec": {"taints": taints or []},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def owner(kind: str, name: str, namespace: str = "shop", **extra: Any) -> Obj:
    return {
        "apiVersion": "apps/v1" if kind != "Job" else "batch/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{kind}-{name}", **extra},
        "spec": {"selector": {"matchLabels": {"app": name}}},
    }


def replicaset(deployment: str, namespace: str = "shop", hash_: str = "7d9f8c6b5") -> Obj:
    rs = owner("ReplicaSet", f"{deployment}-{hash_}", namespace)
    rs["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": deployment,
            "controller": True,
            "uid": f"uid-Deployment-{deployment}",
        }
    ]
    return rs


def pod(
    name: str,
    *,
    namespace: str = "shop",
    cpu: str = "500m",
    controller: tuple[str, str] | None = None,
    node_name: str = "",
    created: str = "2026-11-30T09:50:00Z",
    event: str | None = None,
    waiting: tuple[str, str, str] | None = None,
    app: str = "",
) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "creationTimestamp": created}
    if app:
        meta["labels"] = {"app": app}
    if controller:
        kind, cname = controller
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": kind,
                "name": cname,
                "controller": True,
                "uid": f"uid-{kind}-{cname}",
            }
        ]
    spec: Obj = {
        "containers": [
            {
                "name": "app",
                "image": "registry.example/app:1",
                "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}},
            }
        ]
    }
    status: Obj = {"phase": "Pending"}
    if node_name:
        spec["nodeName"] = node_name
        status["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": created}]
        if waiting:
            cname, reason, message = waiting
            status["containerStatuses"] = [
                {
                    "name": cname,
                    "ready": False,
                    "restartCount": 4,
                    "state": {"waiting": {"reason": reason, "message": message}},
                }
            ]
        else:
            status["phase"] = "Running"
    elif event is not None:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": event,
                "lastTransitionTime": created,
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def failed_scheduling(
    pod_name: str, message: str, namespace: str = "shop", count: int = 7, last: str = "2026-11-30T09:56:00Z"
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod_name}.1", "namespace": namespace},
        "involvedObject": {"kind": "Pod", "name": pod_name, "namespace": namespace, "uid": f"uid-{pod_name}"},
        "reason": "FailedScheduling",
        "message": message,
        "count": count,
        "firstTimestamp": "2026-11-30T09:50:00Z",
        "lastTimestamp": last,
        "source": {"component": "default-scheduler"},
        "type": "Warning",
    }


def base(namespaces: tuple[str, ...] = ("kube-system", "shop")) -> list[Obj]:
    cp_taint = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in namespaces] + [
        node("control-plane", cpu="4", taints=cp_taint, **{"node-role.kubernetes.io/control-plane": ""}),
        node("ip-10-64-76-63", **{"eks.amazonaws.com/nodegroup": "general"}),
        node("ip-10-64-80-12", **{"eks.amazonaws.com/nodegroup": "general"}),
        # Already running: 12 CPU of each general node taken, 4 free on each.
        pod("db-0", cpu="12", node_name="ip-10-64-76-63", created="2026-11-20T00:00:00Z"),
        pod("cache-0", cpu="12", node_name="ip-10-64-80-12", created="2026-11-20T00:00:00Z"),
        pod(
            "coredns-0",
            namespace="kube-system",
            cpu="100m",
            node_name="control-plane",
            created="2026-11-01T00:00:00Z",
        ),
        # The newest timestamp in the dump: it was taken just after 10:00.
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "db-0.2", "namespace": "shop"},
            "involvedObject": {"kind": "Pod", "name": "db-0", "namespace": "shop"},
            "reason": "Pulled",
            "message": "Container image already present on machine",
            "lastTimestamp": "2026-11-30T10:00:00Z",
            "type": "Normal",
        },
    ]


def one_pod() -> list[Obj]:
    """One pending pod that fits nowhere (20 CPU), with its recorded event."""
    msg = TOO_BIG
    return [
        *base(),
        owner("Deployment", "report"),
        replicaset("report"),
        pod(
            "report-7d9f8c6b5-x2x9z",
            cpu="6",
            controller=("ReplicaSet", "report-7d9f8c6b5"),
            event=msg,
            app="report",
        ),
        failed_scheduling("report-7d9f8c6b5-x2x9z", msg),
    ]


def one_owner(replicas: int = 60) -> list[Obj]:
    """`replicas` pending replicas of one Deployment, 500m each: every one fits alone, 16 one after another
    (4 CPU free on each of two nodes)."""
    objs = [*base(), owner("Deployment", "web"), replicaset("web")]
    for i in range(replicas):
        objs.append(pod(f"web-7d9f8c6b5-{i:05d}", controller=("ReplicaSet", "web-7d9f8c6b5"), app="web"))
    return objs


def many_owners() -> list[Obj]:
    """Pending pods of a Deployment (too big for any node), a StatefulSet, a Job and a DaemonSet's pod
    stuck on a bound node, and a pod of nothing."""
    big = TOO_BIG
    objs = [
        *base(("kube-system", "shop", "batch", "default")),
        owner("Deployment", "api"),
        replicaset("api", hash_="5c4b3a291"),
    ]
    for i in range(5):
        name = f"api-5c4b3a291-{i:05d}"
        objs += [
            pod(name, cpu="6", controller=("ReplicaSet", "api-5c4b3a291"), app="api", event=big),
            failed_scheduling(name, big),
        ]
    objs.append(owner("StatefulSet", "queue"))
    objs += [pod(f"queue-{i}", cpu="3", controller=("StatefulSet", "queue"), app="queue") for i in range(3)]
    objs.append(owner("Job", "nightly", namespace="batch"))
    objs += [
        pod(f"nightly-{s}", namespace="batch", cpu="1", controller=("Job", "nightly"), app="nightly")
        for s in ("4kq2x", "9zt7m")
    ]
    objs.append(owner("DaemonSet", "agent", namespace="kube-system"))
    objs.append(
        pod(
            "agent-8k2lp",
            namespace="kube-system",
            cpu="100m",
            controller=("DaemonSet", "agent"),
            node_name="ip-10-64-76-63",
            waiting=("agent", "ImagePullBackOff", 'Back-off pulling image "registry.example/agent:9.9"'),
        )
    )
    objs.append(pod("debug-shell", namespace="default", cpu="100m"))
    return objs
