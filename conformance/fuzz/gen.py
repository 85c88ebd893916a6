"""Random realistic scenarios for the differential fuzzer (kdiagnose vs the real kube-scheduler harness).

`generate(seed, k8s)` returns the scenario's API objects (a list of dicts, in shuffled document order);
the same seed and release always give the same list. What it draws from is what clusters look like and what
the corpus exercises: EKS/GKE/AKS/plain node names (node-9 beside node-10), zones and pools, taints,
status.images, bound pods with priorities and start times, PDBs, PriorityClasses, PVC/PV/StorageClass/
CSINode, topology spread, (anti-)affinity, tolerations, DRA (DeviceClass, ResourceSlice,
ResourceClaimTemplate; resource.k8s.io/v1 from v1.34), and preemption with many equal-priority victims.
"""

from __future__ import annotations

import random
import string
from typing import Any

Obj = dict[str, Any]

ZONES = {
    "eks": ["us-east-1a", "us-east-1b", "us-east-1c"],
    "gke": ["europe-west1-b", "europe-west1-c", "europe-west1-d"],
    "aks": ["westeurope-1", "westeurope-2", "westeurope-3"],
    "plain": ["zone-a", "zone-b", "zone-c"],
}
INSTANCE = {
    "eks": [("m5.large", 2, 8), ("m5.xlarge", 4, 16), ("c5.2xlarge", 8, 16)],
    "gke": [("e2-standard-2", 2, 8), ("e2-standard-4", 4, 16), ("n2-standard-8", 8, 32)],
    "aks": [("Standard_D2s_v5", 2, 8), ("Standard_D4s_v5", 4, 16), ("Standard_D8s_v5", 8, 32)],
    "plain": [("small", 2, 8), ("medium", 4, 16), ("large", 8, 32)],
}
IMAGES = [
    ("docker.io/library/nginx:1.25", 70_000_000),
    ("registry.k8s.io/pause:3.9", 750_000),
    ("ghcr.io/acme/api:2.4.1", 450_000_000),
    ("public.ecr.aws/acme/worker:1.8", 900_000_000),
    ("quay.io/prometheus/node-exporter:v1.7.0", 25_000_000),
    ("gcr.io/acme/ml-train:0.9", 2_500_000_000),
]
APPS = ["web", "api", "worker", "cache", "db"]
NAMESPACES = ["default", "shop", "batch"]
PRIORITIES = {"low": 100, "mid": 1000, "high": 100000}
T0 = "2026-11-01T00:00:00Z"


def _ts(minute: int) -> str:
    h, m = divmod(minute, 60)
    d, h = divmod(h, 24)
    return f"2026-11-{1 + d % 28:02d}T{h:02d}:{m:02d}:00Z"


def _minor(k8s: str) -> int:
    return int(k8s.lstrip("v").split(".")[1])


def _node_names(r: random.Random, flavor: str, n: int) -> list[str]:
    names: set[str] = set()
    pools = ["default", "general", "spot", "gpu"]
    while len(names) < n:
        i = len(names)
        if flavor == "eks":
            names.add(f"ip-10-0-{r.randrange(0, 64)}-{r.randrange(1, 255)}.ec2.internal")
        elif flavor == "gke":
            h = "".join(r.choices("0123456789abcdef", k=8))
            s = "".join(r.choices(string.ascii_lowercase + string.digits, k=4))
            names.add(f"gke-prod-{r.choice(pools)}-pool-{h}-{s}")
        elif flavor == "aks":
            idx = "".join(r.choices("0123456789abcdefghijklmnopqrstuvwxyz", k=1))
            names.add(f"aks-{r.choice(pools)}-{r.randrange(10**7, 10**8)}-vmss00000{idx}")
        else:
            names.add(f"node-{i if r.random() < 0.7 else r.randrange(0, 20)}")
    return sorted(names)


def _quantity_cpu(r: random.Random) -> str:
    return r.choice(["100m", "250m", "500m", "750m", "1", "1500m", "2", "3"])


def _quantity_mem(r: random.Random) -> str:
    return r.choice(["128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "6Gi"])


class _Gen:
    def __init__(self, seed: int, k8s: str, nodes: int | None = None, pending: int | None = None) -> None:
        self.r = random.Random(seed)
        self.seed = seed
        self.minor = _minor(k8s)
        self.n_nodes = nodes
        self.n_pending = pending
        self.objs: list[Obj] = []
        self.uid = 0

    def _uid(self) -> str:
        self.uid += 1
        return f"00000000-0000-4000-8000-{self.seed % 10**6:06d}{self.uid:06d}"

    def meta(self, name: str, ns: str | None = None, **extra: Any) -> Obj:
        m: Obj = {"name": name, "uid": self._uid(), "creationTimestamp": T0}
        if ns is not None:
            m["namespace"] = ns
        m.update(extra)
        return m

    # --- cluster -----------------------------------------------------------------------------------
    def nodes(self) -> None:
        r = self.r
        self.flavor = r.choice(["eks", "gke", "aks", "plain"])
        n = r.choice([3, 4, 5, 6, 8, 10, 12])
        if self.n_nodes is not None:
            n = self.n_nodes
        self.node_names = _node_names(r, self.flavor, n)
        self.node_zone: dict[str, str] = {}
        self.node_pool: dict[str, str] = {}
        self.node_cpu: dict[str, int] = {}
        self.gpu_nodes: list[str] = []
        zones = ZONES[self.flavor][: r.choice([1, 2, 3])]
        for name in self.node_names:
            itype, cpu, mem = r.choice(INSTANCE[self.flavor])
            zone = r.choice(zones)
            pool = r.choice(["general", "general", "spot", "gpu"])
            self.node_zone[name], self.node_pool[name], self.node_cpu[name] = zone, pool, cpu
            arch = "arm64" if r.random() < 0.15 else "amd64"
            labels = {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": arch,
                "node.kubernetes.io/instance-type": itype,
                "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": zone.rsplit("-", 1)[0],
                "pool": pool,
            }
            taints: list[Obj] = []
            if pool == "gpu":
                self.gpu_nodes.append(name)
                taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
            if pool == "spot" and r.random() < 0.5:
                taints.append(
                    {"key": "spot", "value": "true", "effect": r.choice(["NoSchedule", "PreferNoSchedule"])}
                )
            if r.random() < 0.08:
                taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
            pods = r.choice(["110", "110", "58", "8"])
            alloc = {
                "cpu": f"{cpu * 1000 - r.choice([0, 70, 190])}m",
                "memory": f"{mem * 1024 - r.choice([0, 600, 1200])}Mi",
                "pods": pods,
                "ephemeral-storage": "95Gi",
            }
            if pool == "gpu":
                alloc["nvidia.com/gpu"] = str(r.choice([1, 4]))
            images = [
                {"names": [img, img.split("/")[-1]] if r.random() < 0.3 else [img], "sizeBytes": size}
                for img, size in IMAGES
                if r.random() < 0.35
            ]
            spec: Obj = {"taints": taints} if taints else {}
            if r.random() < 0.05:
                spec["unschedulable"] = True
            status: Obj = {
                "capacity": dict(alloc),
                "allocatable": alloc,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "lastHeartbeatTime": T0,
                        "lastTransitionTime": T0,
                    }
                ],
                "nodeInfo": {
                    "kubeletVersion": f"v1.{self.minor}.0",
                    "architecture": arch,
                    "operatingSystem": "linux",
                },
            }
            if images:
                status["images"] = images
            self.objs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": self.meta(name, labels=labels),
                    "spec": spec,
                    "status": status,
                }
            )

    def namespaces(self) -> None:
        for ns in NAMESPACES:
            self.objs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": self.meta(ns, labels={"kubernetes.io/metadata.name": ns}),
                }
            )

    def priority_classes(self) -> None:
        for name, value in PRIORITIES.items():
            pc: Obj = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": self.meta(name),
                "value": value,
            }
            if name == "high" and self.r.random() < 0.2:
                pc["preemptionPolicy"] = "Never"
            self.objs.append(pc)

    # --- pods --------------------------------------------------------------------------------------
    def container(self, name: str, big: bool = False) -> Obj:
        r = self.r
        req: Obj = {}
        if r.random() < 0.9:
            req["cpu"] = r.choice(["1500m", "2", "3", "4", "6"]) if big else _quantity_cpu(r)
        if r.random() < 0.8:
            req["memory"] = r.choice(["2Gi", "4Gi", "8Gi", "12Gi"]) if big else _quantity_mem(r)
        c: Obj = {"name": name, "image": r.choice(IMAGES)[0]}
        if req:
            c["resources"] = {"requests": req}
            if r.random() < 0.3:
                c["resources"]["limits"] = dict(req)
        if r.random() < 0.05:
            c["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
        return c

    def bound_pods(self) -> None:
        r = self.r
        self.bound: list[Obj] = []
        # One priority shared by many victims on purpose (equal-priority tie-breaks in preemption).
        shared = r.choice(list(PRIORITIES))
        minute = 0
        for node in self.node_names:
            for _ in range(r.choice([0, 1, 2, 3, 4, 6])):
                app = r.choice(APPS)
                ns = r.choice(NAMESPACES)
                pc = shared if r.random() < 0.6 else r.choice(list(PRIORITIES))
                idx = len(self.bound)
                name = f"{app}-{r.randrange(16**5):05x}-{idx}"
                minute += r.choice([0, 0, 1, 7, 60])  # equal start times happen
                spec: Obj = {
                    "nodeName": node,
                    "schedulerName": "default-scheduler",
                    "priorityClassName": pc,
                    "priority": PRIORITIES[pc],
                    "containers": [self.container("main")],
                }
                if node in self.gpu_nodes:
                    spec["tolerations"] = [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                    ]
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": self.meta(name, ns, labels={"app": app, "tier": r.choice(["fe", "be"])}),
                    "spec": spec,
                    "status": {
                        "phase": "Running",
                        "startTime": _ts(minute),
                        "conditions": [{"type": "PodScheduled", "status": "True"}],
                    },
                }
                self.bound.append(pod)
                self.objs.append(pod)

    def pdbs(self) -> None:
        r = self.r
        for ns in NAMESPACES:
            for app in APPS:
                if r.random() < 0.15:
                    matching = [
                        p
                        for p in self.bound
                        if p["metadata"]["namespace"] == ns and p["metadata"]["labels"]["app"] == app
                    ]
                    allowed = r.choice([0, 0, 1, 2])
                    spec: Obj = {"selector": {"matchLabels": {"app": app}}}
                    if r.random() < 0.5:
                        spec["maxUnavailable"] = allowed
                    else:
                        spec["minAvailable"] = max(0, len(matching) - allowed)
                    self.objs.append(
                        {
                            "apiVersion": "policy/v1",
                            "kind": "PodDisruptionBudget",
                            "metadata": self.meta(f"{app}-pdb", ns),
                            "spec": spec,
                            "status": {
                                "currentHealthy": len(matching),
                                "desiredHealthy": max(0, len(matching) - allowed),
                                "disruptionsAllowed": min(allowed, len(matching)),
                                "expectedPods": len(matching),
                                "observedGeneration": 1,
                            },
                        }
                    )

    def selector_term(self) -> Obj:
        r = self.r
        choice = r.random()
        if choice < 0.4:
            return {
                "key": "topology.kubernetes.io/zone",
                "operator": "In",
                "values": r.sample(ZONES[self.flavor], r.choice([1, 2])),
            }
        if choice < 0.7:
            return {
                "key": "pool",
                "operator": r.choice(["In", "NotIn"]),
                "values": [r.choice(["general", "spot", "gpu"])],
            }
        if choice < 0.85:
            return {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
        return {"key": "node.kubernetes.io/instance-type", "operator": "Exists"}

    def pending_pod(self, i: int) -> None:
        r = self.r
        app = r.choice(APPS)
        ns = r.choice(NAMESPACES)
        big = r.random() < 0.5
        pc = r.choice([*list(PRIORITIES), "high", "high"])
        labels = {"app": app, "tier": r.choice(["fe", "be"])}
        spec: Obj = {
            "schedulerName": "default-scheduler",
            "priorityClassName": pc,
            "priority": PRIORITIES[pc],
            "containers": [self.container("main", big)],
        }
        if r.random() < 0.2:
            spec["containers"].append(self.container("sidecar"))
        if r.random() < 0.1:
            spec["initContainers"] = [self.container("init", r.random() < 0.3)]
        if r.random() < 0.3:
            spec["nodeSelector"] = (
                {"kubernetes.io/os": "linux"} if r.random() < 0.5 else {"pool": r.choice(["general", "spot"])}
            )
        aff: Obj = {}
        if r.random() < 0.3:
            aff["nodeAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [self.selector_term()]}]
                }
            }
        if r.random() < 0.3:
            aff.setdefault("nodeAffinity", {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "weight": r.choice([1, 10, 50, 100]),
                    "preference": {"matchExpressions": [self.selector_term()]},
                }
            ]
        if r.random() < 0.25:
            term = {
                "labelSelector": {"matchLabels": {"app": r.choice(APPS)}},
                "topologyKey": r.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]),
            }
            kind = r.choice(["podAntiAffinity", "podAffinity"])
            if r.random() < 0.5:
                aff[kind] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            else:
                aff[kind] = {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": r.choice([1, 50, 100]), "podAffinityTerm": term}
                    ]
                }
        if aff:
            spec["affinity"] = aff
        if r.random() < 0.3:
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": r.choice([1, 1, 2]),
                    "topologyKey": r.choice(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]),
                    "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"]),
                    "labelSelector": {"matchLabels": {"app": app}},
                }
            ]
            tsc = spec["topologySpreadConstraints"][0]
            if tsc["whenUnsatisfiable"] == "DoNotSchedule" and r.random() < 0.2:
                tsc["minDomains"] = 3  # the API server allows minDomains only with DoNotSchedule
        tol: list[Obj] = []
        if r.random() < 0.3:
            tol.append({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
        if r.random() < 0.3:
            tol.append({"key": "spot", "operator": "Equal", "value": "true"})
        if tol:
            spec["tolerations"] = tol
        if r.random() < 0.1 and self.gpu_nodes:
            spec["containers"][0].setdefault("resources", {}).setdefault("limits", {})["nvidia.com/gpu"] = "1"
        if r.random() < 0.2:
            self.volumes(spec, ns, f"{app}-p{i}")
        if r.random() < 0.2:
            self.dra(spec, ns, f"{app}-p{i}")
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.meta(f"{app}-pending-{i}", ns, labels=labels),
            "spec": spec,
            "status": {"phase": "Pending"},
        }
        self.objs.append(pod)

    # --- volumes -------------------------------------------------------------------------------------
    def volumes(self, spec: Obj, ns: str, base: str) -> None:
        r = self.r
        driver = {"eks": "ebs.csi.aws.com", "gke": "pd.csi.storage.gke.io", "aks": "disk.csi.azure.com"}.get(
            self.flavor, "csi.example.com"
        )
        if not getattr(self, "_storage", False):
            self._storage = True
            for sc, mode in (("gp3", "WaitForFirstConsumer"), ("fast-immediate", "Immediate")):
                self.objs.append(
                    {
                        "apiVersion": "storage.k8s.io/v1",
                        "kind": "StorageClass",
                        "metadata": self.meta(sc),
                        "provisioner": driver,
                        "volumeBindingMode": mode,
                        "reclaimPolicy": "Delete",
                    }
                )
            for node in self.node_names:
                if r.random() < 0.8:
                    d: Obj = {"name": driver, "nodeID": node, "topologyKeys": ["topology.kubernetes.io/zone"]}
                    if r.random() < 0.5:
                        d["allocatable"] = {"count": r.choice([1, 2, 25])}
                    self.objs.append(
                        {
                            "apiVersion": "storage.k8s.io/v1",
                            "kind": "CSINode",
                            "metadata": self.meta(node),
                            "spec": {"drivers": [d]},
                        }
                    )
        claim = f"{base}-data"
        kind = r.choice(["bound", "wffc", "immediate-unbound", "missing"])
        if kind != "missing":
            pvc: Obj = {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": self.meta(claim, ns),
                "spec": {
                    "accessModes": [r.choice(["ReadWriteOnce", "ReadWriteOncePod"])],
                    "resources": {"requests": {"storage": "10Gi"}},
                    "storageClassName": "fast-immediate" if kind == "immediate-unbound" else "gp3",
                },
                "status": {"phase": "Pending"},
            }
            if kind == "bound":
                pv = f"pvc-{self._uid()}"
                zone = r.choice(ZONES[self.flavor])
                pvc["spec"]["volumeName"] = pv
                pvc["status"] = {
                    "phase": "Bound",
                    "accessModes": pvc["spec"]["accessModes"],
                    "capacity": {"storage": "10Gi"},
                }
                self.objs.append(
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolume",
                        "metadata": self.meta(pv),
                        "spec": {
                            "capacity": {"storage": "10Gi"},
                            "accessModes": pvc["spec"]["accessModes"],
                            "persistentVolumeReclaimPolicy": "Delete",
                            "storageClassName": "gp3",
                            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim},
                            "csi": {"driver": driver, "volumeHandle": f"vol-{pv[-8:]}"},
                            "nodeAffinity": {
                                "required": {
                                    "nodeSelectorTerms": [
                                        {
                                            "matchExpressions": [
                                                {
                                                    "key": "topology.kubernetes.io/zone",
                                                    "operator": "In",
                                                    "values": [zone],
                                                }
                                            ]
                                        }
                                    ]
                                }
                            },
                        },
                        "status": {"phase": "Bound"},
                    }
                )
            self.objs.append(pvc)
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]

    # --- DRA -----------------------------------------------------------------------------------------
    def dra(self, spec: Obj, ns: str, base: str) -> None:
        if self.minor < 34:
            return
        r = self.r
        if not getattr(self, "_dra", False):
            self._dra = True
            self.objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceClass",
                    "metadata": self.meta("gpu.example.com"),
                    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
                }
            )
            for node in self.node_names:
                if r.random() < 0.4:
                    devs = [
                        {
                            "name": f"gpu-{k}",
                            "attributes": {
                                "model": {"string": r.choice(["a100", "l4"])},
                                "index": {"int": k},
                            },
                            "capacity": {"memory": {"value": r.choice(["24Gi", "40Gi", "80Gi"])}},
                        }
                        for k in range(r.choice([1, 2, 4]))
                    ]
                    self.objs.append(
                        {
                            "apiVersion": "resource.k8s.io/v1",
                            "kind": "ResourceSlice",
                            "metadata": self.meta(f"{node}-gpu.example.com-{r.randrange(16**5):05x}"),
                            "spec": {
                                "driver": "gpu.example.com",
                                "nodeName": node,
                                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                                "devices": devs,
                            },
                        }
                    )
        req: Obj = {
            "name": "gpu",
            "exactly": {"deviceClassName": "gpu.example.com", "count": r.choice([1, 1, 2])},
        }
        if r.random() < 0.4:
            req["exactly"]["selectors"] = [
                {
                    "cel": {
                        "expression": f'device.attributes["gpu.example.com"].model == "{r.choice(["a100", "l4"])}"'
                    }
                }
            ]
        tmpl = f"{base}-gpu"
        self.objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": self.meta(tmpl, ns),
                "spec": {"spec": {"devices": {"requests": [req]}}},
            }
        )
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": tmpl}]
        spec["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu"}]

    def run(self) -> list[Obj]:
        self.namespaces()
        self.priority_classes()
        self.nodes()
        self.bound_pods()
        self.pdbs()
        pending = self.r.choice([1, 1, 2, 3])
        for i in range(pending if self.n_pending is None else self.n_pending):
            self.pending_pod(i)
        self.r.shuffle(self.objs)
        return self.objs


def generate(
    seed: int, k8s: str = "v1.34.1", nodes: int | None = None, pending: int | None = None
) -> list[Obj]:
    """The scenario for `seed` under release `k8s` (deterministic; shuffled document order); `nodes` and
    `pending` fix the cluster size and the number of pending pods (the large corpus scenarios)."""
    return _Gen(seed, k8s, nodes, pending).run()
