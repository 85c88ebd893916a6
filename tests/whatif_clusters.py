"""Small clusters where a remedy's what-if meets every Filter plugin of the default profile: zones, disk and
tier labels, a dedicated taint and cordons, host ports, full nodes, existing pods with required
anti-affinity; pending pods with node selectors, required node affinity (In, NotIn, Exists, two terms),
pod affinity and anti-affinity, zone or host spread (nodeAffinityPolicy Ignore, nodeTaintsPolicy Honor,
minDomains) and tolerations. tests/test_fast_paths.py compares the what-ifs that keep the diagnosis's
verdicts (whatif._refilter) with filtering every node again on them: a rejected node's first failing
plugin moves between the plugins a change touches and those it does not."""

from __future__ import annotations

import random
from typing import Any

ZONES = ("a", "b", "c")
APPS = ("web", "db", "cache")


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    name = f"n{i:02d}"
    spec: dict[str, Any] = {}
    if rng.random() < 0.2:
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    if rng.random() < 0.08:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"node-{i}",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": ZONES[i % 3] if i % 5 else ZONES[rng.randrange(3)],
                "disk": rng.choice(("ssd", "hdd")),
                **({"tier": rng.choice(("gold", "silver"))} if rng.random() < 0.7 else {}),
            },
        },
        "spec": spec,
        "status": {
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        },
    }


def _pod(name: str, node: str, rng: random.Random, pending: bool) -> dict[str, Any]:
    app = rng.choice(APPS)
    cpu = rng.choice(("250m", "500m", "1", "1500m", "2", "3"))
    container: dict[str, Any] = {
        "name": "c",
        "image": "registry.example/app:1",
        "resources": {"requests": {"cpu": cpu, "memory": rng.choice(("256Mi", "1Gi", "4Gi"))}},
    }
    spec: dict[str, Any] = {"containers": [container], "schedulerName": "default-scheduler"}
    if rng.random() < 0.25:
        container["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    affinity: dict[str, Any] = {}
    if rng.random() < (0.4 if pending else 0.15):
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": app}},
                    "topologyKey": rng.choice(("kubernetes.io/hostname", "topology.kubernetes.io/zone")),
                }
            ]
        }
    if pending:
        if rng.random() < 0.4:
            spec["nodeSelector"] = {"disk": "ssd"}
        r = rng.random()
        if r < 0.2:
            expr = [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}]
            if rng.random() < 0.5:
                expr.append({"key": "tier", "operator": rng.choice(("In", "NotIn")), "values": ["gold"]})
            affinity["nodeAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": expr}]
                }
            }
        elif r < 0.35:
            affinity["nodeAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                        {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
                    ]
                }
            }
        if rng.random() < 0.3:
            affinity["podAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "db"}},
                        "topologyKey": "topology.kubernetes.io/zone",
                    }
                ]
            }
        if rng.random() < 0.5:
            c: dict[str, Any] = {
                "maxSkew": 1,
                "topologyKey": rng.choice(("topology.kubernetes.io/zone", "kubernetes.io/hostname")),
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}},
            }
            if rng.random() < 0.3:
                c["nodeAffinityPolicy"] = "Ignore"
            if rng.random() < 0.3:
                c["nodeTaintsPolicy"] = "Honor"
            if rng.random() < 0.2:
                c["minDomains"] = 3
            spec["topologySpreadConstraints"] = [c]
        if rng.random() < 0.3:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    if affinity:
        spec["affinity"] = affinity
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": {"app": app},
            "creationTimestamp": "2025-06-01T10:00:00Z",
        },
        "spec": spec,
        "status": {"phase": "Pending" if pending else "Running"},
    }


def whatif_items(seed: int, nodes: int = 12, pending: int = 30) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items = [_node(i, rng) for i in range(nodes)]
    k = 0
    for i in range(nodes):
        for _ in range(rng.randrange(4)):
            items.append(_pod(f"run-{k}", f"n{i:02d}", rng, False))
            k += 1
    items += [_pod(f"pend-{j}", "", rng, True) for j in range(pending)]
    return items
