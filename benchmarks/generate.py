"""Generate a realistic synthetic cluster dump (`kubectl get nodes,pods -A -o json` shape).

Nodes spread over zones and pools (some tainted), bound pods with the fields real dumps carry (owner
references, env, volumes, probes, status with conditions and container statuses) so file sizes match real
clusters (~6 KB per pod), plus a few pending pods with affinity, spread constraints and tolerations.

    python benchmarks/generate.py --nodes 5000 --pods-per-node 30 --out /tmp/c5k.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from typing import Any

ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]
POOLS = [
    # name, instance type, cpu, memory Gi, taint
    ("general", "m5.2xlarge", 8, 32, None),
    ("compute", "c5.4xlarge", 16, 32, None),
    ("memory", "r5.2xlarge", 8, 64, None),
    ("gpu", "p3.2xlarge", 8, 61, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}),
    ("batch", "m5.4xlarge", 16, 64, {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}),
]
APPS = ["web", "api", "cart", "search", "auth", "payments", "orders", "catalog", "images", "ledger"]
NAMESPACES = ["default", "shop", "platform", "data", "monitoring", "kube-system"]
IMAGES = [f"registry.example.com/team/{a}:1.{i}.0" for a in APPS for i in range(3)]


def node(i: int, rng: random.Random) -> dict[str, Any]:
    pool, itype, cpu, mem, taint = POOLS[i % len(POOLS)] if i % 7 else POOLS[0]
    zone = ZONES[i % len(ZONES)]
    name = f"ip-10-{i // 250}-{i % 250}-{rng.randint(1, 254)}.ec2.internal"
    images = [
        {
            "names": [img, img.split(":")[0] + "@sha256:" + f"{rng.getrandbits(256):064x}"],
            "sizeBytes": rng.randint(20, 900) * 2**20,
        }
        for img in rng.sample(IMAGES, 12)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"{rng.getrandbits(128):032x}",
            "creationTimestamp": "2025-01-10T10:00:00Z",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": "us-east-1",
                "node.kubernetes.io/instance-type": itype,
                "eks.amazonaws.com/nodegroup": pool,
                "eks.amazonaws.com/capacityType": "ON_DEMAND",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "providerID": f"aws:///{zone}/i-{rng.getrandbits(64):016x}",
            **({"taints": [taint]} if taint else {}),
        },
        "status": {
            "capacity": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {
                "cpu": f"{cpu * 1000 - 90}m",
                "memory": f"{mem * 1024 - 1200}Mi",
                "pods": "110",
                "ephemeral-storage": "95Gi",
            },
            "conditions": [
                {
                    "type": t,
                    "status": "False",
                    "reason": f"KubeletHas{t}",
                    "lastHeartbeatTime": "2025-06-18T09:28:41Z",
                    "lastTransitionTime": "2025-01-10T10:00:00Z",
                    "message": "ok",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure")
            ]
            + [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "lastHeartbeatTime": "2025-06-18T09:28:41Z",
                    "lastTransitionTime": "2025-01-10T10:00:00Z",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.{i // 250}.{i % 250}.10"},
                {"type": "Hostname", "address": name},
            ],
            "images": images,
            "nodeInfo": {
                "kubeletVersion": "v1.34.1",
                "containerRuntimeVersion": "containerd://1.7.27",
                "osImage": "Amazon Linux 2023",
                "kernelVersion": "6.1.0",
            },
        },
    }


def pod(node_name: str, pool: str, i: int, rng: random.Random) -> dict[str, Any]:
    app = APPS[i % len(APPS)]
    ns = NAMESPACES[i % len(NAMESPACES)]
    rs = f"{app}-{i % 97:05x}"
    name = f"{rs}-{rng.getrandbits(24):06x}"
    cpu = rng.choice(["50m", "100m", "200m", "250m"])
    mem = rng.choice(["64Mi", "128Mi", "256Mi", "512Mi"])
    tolerations = [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ]
    if pool in ("gpu", "batch"):
        tolerations.append({"operator": "Exists", "effect": "NoSchedule"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"{rng.getrandbits(128):032x}",
            "creationTimestamp": "2025-06-01T10:00:00Z",
            "generateName": rs + "-",
            "labels": {"app": app, "pod-template-hash": f"{i % 97:05x}", "team": f"team-{i % 13}"},
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": "2025-06-01T09:59:00Z",
                "prometheus.io/scrape": "true",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": rs,
                    "uid": f"{rng.getrandbits(128):032x}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "nodeName": node_name,
            "schedulerName": "default-scheduler",
            "priority": 0,
            "serviceAccountName": app,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "securityContext": {"runAsNonRoot": True, "fsGroup": 1000},
            "tolerations": tolerations,
            "volumes": [
                {"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
                {
                    "name": "kube-api-access",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "name": "kube-root-ca.crt",
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                }
                            },
                        ],
                    },
                },
            ],
            "containers": [
                {
                    "name": app,
                    "image": rng.choice(IMAGES),
                    "imagePullPolicy": "IfNotPresent",
                    "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
                    "env": [
                        {"name": f"ENV_{k}", "value": f"value-{k}-{rng.getrandbits(32):08x}"}
                        for k in range(4)
                    ],
                    "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"memory": mem}},
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                        "periodSeconds": 10,
                        "timeoutSeconds": 1,
                        "successThreshold": 1,
                        "failureThreshold": 3,
                    },
                    "readinessProbe": {
                        "httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
                        "periodSeconds": 5,
                        "timeoutSeconds": 1,
                        "successThreshold": 1,
                        "failureThreshold": 3,
                    },
                    "volumeMounts": [
                        {"name": "config", "mountPath": "/etc/app"},
                        {
                            "name": "kube-api-access",
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                            "readOnly": True,
                        },
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": "10.0.0.1",
            "podIP": f"10.100.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            "startTime": "2025-06-01T10:00:05Z",
            "qosClass": "Burstable",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": "2025-06-01T10:00:10Z"}
                for t in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": [
                {
                    "name": app,
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "image": "x",
                    "imageID": f"sha256:{rng.getrandbits(256):064x}",
                    "containerID": f"containerd://{rng.getrandbits(256):064x}",
                    "state": {"running": {"startedAt": "2025-06-01T10:00:08Z"}},
                }
            ],
        },
    }


def pending(i: int, owners: int = 0) -> dict[str, Any]:
    """Pending pod i; with `owners` > 0 they are replicas of that many ReplicaSets (same spec per owner),
    else every pod is distinct (its own owner), the worst case for sharing work across pods."""
    kinds = [
        # too big for any node
        {
            "containers": [
                {
                    "name": "big",
                    "image": "registry.example.com/team/web:1.0.0",
                    "resources": {"requests": {"cpu": "30", "memory": "8Gi"}},
                }
            ]
        },
        # zone affinity + spread
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "topology.kubernetes.io/zone",
                                        "operator": "In",
                                        "values": ["us-east-1a"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ],
            "containers": [
                {
                    "name": "web",
                    "image": "registry.example.com/team/web:1.0.0",
                    "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}},
                }
            ],
        },
        # anti-affinity against a common app + toleration for batch
        {
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
            ],
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": "api"}},
                        }
                    ]
                }
            },
            "containers": [
                {
                    "name": "job",
                    "image": "registry.example.com/team/api:1.1.0",
                    "resources": {"requests": {"cpu": "2", "memory": "4Gi"}},
                }
            ],
        },
    ]
    group = i % owners if owners else i
    spec = dict(kinds[group % len(kinds)])
    owner = f"pending-rs-{group}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{owner}-{i:05d}",
            "namespace": "default",
            "labels": {"app": "web", "pod-template-hash": f"h{group}"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": owner,
                    "uid": f"uid-{group}",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def varied_pending(i: int) -> dict[str, Any]:
    """Pending pod i of a mass-pending incident (issue #17): its own owner, its own requests, labels and
    selectors; every third has required pod anti-affinity, every fifth a zone spread constraint."""
    app = APPS[i % len(APPS)]
    zone = ZONES[i % len(ZONES)]
    cpu = f"{250 * (1 + i % 13)}m" if i % 11 else f"{12 + i % 7}"  # some pods fit no node
    mem = f"{256 * (1 + (i * 7) % 17)}Mi"
    labels = {"app": app, "tier": f"t{i % 4}", "pod-template-hash": f"v{i}", "release": f"r{i % 29}"}
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": app,
                "image": IMAGES[i % len(IMAGES)],
                "resources": {"requests": {"cpu": cpu, "memory": mem}},
            }
        ]
    }
    if i % 2:
        spec["nodeSelector"] = {"eks.amazonaws.com/nodegroup": POOLS[i % 3][0]}
    if i % 3 == 0:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {"matchLabels": {"app": APPS[(i + 1) % len(APPS)]}},
                    }
                ]
            }
        }
    if i % 5 == 0:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    if i % 7 == 0:
        spec["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
        ]
    if i % 4 == 1:
        spec.setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}
                        ]
                    }
                ]
            }
        }
    owner = f"incident-{app}-{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{owner}-x",
            "namespace": NAMESPACES[i % 5],
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": owner,
                    "uid": f"uid-v{i}",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def generate(
    nodes: int, pods_per_node: int, n_pending: int, seed: int = 1, owners: int = 0, varied: bool = False
) -> dict[str, Any]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        n = node(i, rng)
        items.append(n)
    node_items = list(items)
    k = 0
    for n in node_items:
        pool = n["metadata"]["labels"]["eks.amazonaws.com/nodegroup"]
        for _ in range(pods_per_node):
            items.append(pod(n["metadata"]["name"], pool, k, rng))
            k += 1
    items += [varied_pending(i) if varied else pending(i, owners) for i in range(n_pending)]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--pending", type=int, default=3)
    ap.add_argument(
        "--pending-owners",
        type=int,
        default=0,
        help="pending pods are replicas of N owners (0: all distinct)",
    )
    ap.add_argument(
        "--varied",
        action="store_true",
        help="distinct pending pods with varied requests, labels and selectors (a third with required "
        "anti-affinity, a fifth with zone spread): the mass-pending incident of issue #17",
    )
    ap.add_argument("--format", choices=["json", "yaml"], default="json")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    doc = generate(a.nodes, a.pods_per_node, a.pending, a.seed, a.pending_owners, a.varied)
    out = sys.stdout if a.out == "-" else open(a.out, "w")  # noqa: SIM115
    if a.format == "json":
        json.dump(doc, out, indent=4)  # kubectl indents with 4 spaces
    else:
        import yaml

        base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

        class Dumper(base):  # type: ignore[misc,valid-type]
            # kubectl never writes anchors; PyYAML would alias the taint dicts shared between nodes.
            def ignore_aliases(self, data: Any) -> bool:
                return True

        # PyYAML quotes a string only where YAML 1.1 would read another type; kubectl (go-yaml) also
        # quotes what reads as a YAML 1.2 float, such as a hex uid of digits and one "e" (`31415e926...`),
        # which a 1.2 reader (yaml-rs) takes for a number (here: out of range). Quote those too.
        Dumper.add_implicit_resolver(
            "tag:yaml.org,2002:float",
            re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
            list("-+.0123456789"),
        )

        yaml.dump(doc, out, Dumper=Dumper, sort_keys=False)
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
