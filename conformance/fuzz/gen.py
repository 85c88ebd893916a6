"""Random realistic scenarios for the differential fuzzer (kdiagnose vs the real kube-scheduler harness).

`generate(seed, k8s)` returns the scenario's API objects (a list of dicts, in shuffled document order);
the same seed and release always give the same list (one `random.Random(seed)` drives every choice, and
nothing iterates over a set or hashes a string).

What it draws from is what clusters look like and what the corpus exercises:
- clusters of 3-12 nodes, or (one seed in four) 50-300 nodes in 3-6 node pools over 1-3 zones, named as
  EKS (`ip-10-0-12-34.ec2.internal`, `eks.amazonaws.com/nodegroup`), GKE (`gke-prod-<pool>-<hash>-<id>`,
  `cloud.google.com/gke-nodepool`), AKS (`aks-<pool>-12345678-vmss00000a`,
  `kubernetes.azure.com/agentpool`) or plain clusters (`node-9` beside `node-10`); pools of general,
  spot (tainted NoSchedule or PreferNoSchedule), GPU (tainted, `nvidia.com/gpu`), infra (dedicated
  NoSchedule / NoExecute), arm64 and high-memory nodes; cordons, `status.images`;
- bound pods filling nodes to a random utilisation (so preemption has work), ReplicaSet-style names and
  labels, PriorityClasses (incl. a negative one; many victims share one priority; equal start times),
  host ports, terminating pods, required anti-affinity of existing pods, PVCs counting against CSI
  attach limits, ReadWriteOncePod claims in use, allocated ResourceClaims;
- PDBs (matchLabels / matchExpressions, with their status), pending pods with status.nominatedNodeName;
- pending pods with node selectors, required and preferred node affinity (In/NotIn/Exists/DoesNotExist/
  Gt/Lt, several terms, matchFields metadata.name), pod (anti-)affinity (several terms, matchExpressions,
  namespaces / namespaceSelector, hostname / zone / pool domains), topology spread (several constraints,
  minDomains, nodeAffinityPolicy / nodeTaintsPolicy), tolerations (incl. operator Exists without key and
  tolerationSeconds), host ports (TCP/UDP, hostIP), init containers and sidecars, extended resources;
- volumes: a PVC bound to a zonal CSI PV or a local PV, WaitForFirstConsumer with static local PVs or
  dynamic provisioning (allowedTopologies, CSIStorageCapacity), Immediate unbound, missing claims or
  classes, ReadWriteOncePod held by a running pod, CSINode attach limits, CSIDrivers;
- from v1.34 DRA (resource.k8s.io/v1): DeviceClasses with CEL selectors, per-node ResourceSlices,
  ResourceClaimTemplates (exactly / count / allocationMode All / firstAvailable, capacity selectors) and
  shared ResourceClaims, some already allocated to running pods.
Newer fields (issue #14, second round) are drawn from a second generator seeded from the same seed, so a
seed's scenario keeps every object and choice it had before and gains them (a second, independent focus
raises one family's odds):
- matchLabelKeys / mismatchLabelKeys on pod (anti-)affinity terms (written as stored: the API server
  merged them into the labelSelector) and on spread constraints (merged from v1.34 in stored pods only),
  with pod-template-hash / track labels on the pending pods, and empty `labelSelector: {}` in spread
  constraints;
- DRA fields of the gates that turned on in v1.36/v1.37, on every DRA release (v1.34/v1.35's API server
  strategies drop them, as kdiagnose must): partitionable devices (sharedCounters, consumesCounters),
  consumable capacity (allowMultipleAllocations, capacity requests, requestPolicy), device taints with
  claim tolerations, DeviceTaintRules (v1.37, where resource.k8s.io/v1 serves them), binding conditions,
  a DeviceClass with extendedResourceName and pods asking for its resource (or the implicit
  `deviceclass.resource.kubernetes.io/<class>`), adminAccess in the namespace labelled for it;
- nodes with status.declaredFeatures (v1.35+) and pods whose restartPolicyRules imply one (v1.34+),
  CSIDrivers with preventPodSchedulingIfMissing (v1.36+), more CSIStorageCapacity (and
  maximumVolumeSize) on v1.37 for StorageCapacityScoring, image volumes, scheduling gates, pod-level
  resources (v1.32+), a RuntimeClass with overhead (and a nodeSelector), a LimitRange with container
  defaults (stored pods in its namespace carry them), PDBs with an empty selector.
The documents are shuffled.
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
    "eks": [("m5.large", 2, 8), ("m5.xlarge", 4, 16), ("c5.2xlarge", 8, 16), ("r5.2xlarge", 8, 64)],
    "gke": [
        ("e2-standard-2", 2, 8),
        ("e2-standard-4", 4, 16),
        ("n2-standard-8", 8, 32),
        ("n2-highmem-8", 8, 64),
    ],
    "aks": [
        ("Standard_D2s_v5", 2, 8),
        ("Standard_D4s_v5", 4, 16),
        ("Standard_D8s_v5", 8, 32),
        ("Standard_E8s_v5", 8, 64),
    ],
    "plain": [("small", 2, 8), ("medium", 4, 16), ("large", 8, 32), ("highmem", 8, 64)],
}
POOL_LABEL = {
    "eks": "eks.amazonaws.com/nodegroup",
    "gke": "cloud.google.com/gke-nodepool",
    "aks": "kubernetes.azure.com/agentpool",
    "plain": "pool",
}
DRIVER = {"eks": "ebs.csi.aws.com", "gke": "pd.csi.storage.gke.io", "aks": "disk.csi.azure.com"}
IMAGES = [
    ("docker.io/library/nginx:1.25", 70_000_000),
    ("registry.k8s.io/pause:3.9", 750_000),
    ("ghcr.io/acme/api:2.4.1", 450_000_000),
    ("public.ecr.aws/acme/worker:1.8", 900_000_000),
    ("quay.io/prometheus/node-exporter:v1.7.0", 25_000_000),
    ("gcr.io/acme/ml-train:0.9", 2_500_000_000),
]
APPS = ["web", "api", "worker", "cache", "db"]
MORE_APPS = ["search", "auth", "billing", "ingest", "report"]
NAMESPACES = ["default", "shop", "batch"]
PRIORITIES = {"preemptible": -10, "low": 100, "mid": 1000, "high": 100000}
GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
T0 = "2026-11-01T00:00:00Z"

# Each scenario has a focus that raises the odds of one feature family (the knobs below; every other
# knob keeps its default), so that each is exercised in depth, not only in passing.
DEFAULT_ODDS = {
    "bound_port": 0.05,
    "bound_anti": 0.05,
    "bound_volume": 0.06,
    "bound_claim": 0.04,
    "terminating": 0.03,
    "pdb": 0.15,
    "node_selector": 0.3,
    "required_node_affinity": 0.3,
    "preferred_node_affinity": 0.3,
    "pod_affinity": 0.2,
    "spread": 0.3,
    "tolerate_pools": 0.0,
    "pending_port": 0.08,
    "volumes": 0.25,
    "dra": 0.2,
    "nominated": 0.08,
}
FOCUS = {
    "mixed": {},
    "preemption": {
        "pdb": 0.5,
        "terminating": 0.08,
        "node_selector": 0.1,
        "required_node_affinity": 0.1,
        "pod_affinity": 0.08,
        "spread": 0.15,
        "tolerate_pools": 0.7,
        "volumes": 0.05,
        "dra": 0.05,
        "nominated": 0.25,
    },
    "affinity": {"bound_anti": 0.15, "pod_affinity": 0.7, "spread": 0.8, "tolerate_pools": 0.5},
    "volumes": {"bound_volume": 0.3, "volumes": 0.95, "tolerate_pools": 0.5},
    "ports": {"bound_port": 0.35, "pending_port": 0.9},
    "dra": {"bound_claim": 0.3, "dra": 0.9, "tolerate_pools": 0.5},
}


def _ts(minute: int) -> str:
    h, m = divmod(minute, 60)
    d, h = divmod(h, 24)
    return f"2026-11-{1 + d % 28:02d}T{h:02d}:{m:02d}:00Z"


def _minor(k8s: str) -> int:
    return int(k8s.lstrip("v").split(".")[1])


def _quantity_cpu(r: random.Random) -> str:
    return r.choice(["100m", "250m", "500m", "750m", "1", "1500m", "2", "3"])


def _quantity_mem(r: random.Random) -> str:
    return r.choice(["128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi", "6Gi"])


def _cpu_milli(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(q) * 1000


# What DefaultTolerationSeconds admission added to every stored pod (a pod with spec.priority is one).
DEFAULT_TOLERATIONS = [
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


def _zone_term(key: str, op: str, values: list[str]) -> Obj:
    return {"key": key, "operator": op, "values": values}


class _Pool:
    def __init__(self, name: str, kind: str, itype: tuple[str, int, int], zones: list[str]) -> None:
        self.name, self.kind, self.zones = name, kind, zones
        self.itype, self.cpu, self.mem = itype
        self.nodes: list[str] = []
        self.hash = ""


class _Gen:
    def __init__(self, seed: int, k8s: str, nodes: int | None = None, pending: int | None = None) -> None:
        self.r = random.Random(seed)
        self.seed = seed
        self.minor = _minor(k8s)
        self.n_nodes = nodes
        self.n_pending = pending
        self.objs: list[Obj] = []
        self.uid = 0
        self._storage = False
        self._dra = False
        self._pvc_seq = 0
        self.apps = list(APPS)
        self.focus = self.r.choice(
            ["mixed", "mixed", "preemption", "preemption", "affinity", "volumes", "ports", "dra"]
        )
        self.odds = {**DEFAULT_ODDS, **FOCUS[self.focus]}
        self.held_claims: list[tuple[str, str]] = []  # (namespace, claim) used by running pods
        self.shared_claims: list[tuple[str, str]] = []  # allocated ResourceClaims of running pods
        self.allocated: set[tuple[str, str]] = set()  # (node, device) of those claims
        # The features added for issue #14's second round draw from their own generator, so a seed's
        # original scenario keeps every choice it had (its findings stay reproducible) and gains them.
        self.x = random.Random(seed * 1_000_003 + 7)
        self.xfocus = self.x.choice(
            [
                "none",
                "none",
                "none",
                "labelkeys",
                "dra-gates",
                "dra-gates",
                "node-features",
                "admission",
                "pdb",
            ]
        )
        if self.focus == "dra" and self.x.random() < 0.5:
            self.xfocus = "dra-gates"
        self.hashes: dict[str, str] = {}
        self.lr_namespaces: dict[str, Obj] = {}
        self.runtime_class: Obj | None = None
        self.admin_ns = "batch" if self.minor >= 34 and self.x.random() < 0.5 else None
        self.ext_classes: list[str] = []  # extended resource names DeviceClasses map
        self.device_taints: list[tuple[str, str]] = []  # (key, effect) of tainted devices
        self.shared_nics = False
        self._ns = ""

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
    def _pools(self) -> list[_Pool]:
        r = self.r
        self.large = r.random() < 0.25 or (self.n_nodes or 0) >= 50
        kinds = ["general", "spot", "gpu", "infra", "arm", "highmem"]
        if self.large:
            chosen = ["general", *r.sample(kinds[1:], r.choice([2, 3, 4, 5]))]
        else:
            chosen = ["general", *r.sample(kinds[1:], r.choice([0, 1, 2, 3]))]
        zones = ZONES[self.flavor][: r.choice([1, 2, 3, 3])]
        pools = []
        for kind in chosen:
            if kind == "highmem":
                itype = INSTANCE[self.flavor][3]
            elif kind == "gpu":
                itype = INSTANCE[self.flavor][2]
            else:
                itype = r.choice(INSTANCE[self.flavor][:3])
            name = {"general": r.choice(["general", "default", "apps"])}.get(kind, kind)
            pz = zones if r.random() < 0.7 else r.sample(zones, r.randint(1, len(zones)))
            pools.append(_Pool(name, kind, itype, sorted(pz)))
        return pools

    def _node_name(self, pool: _Pool, taken: set[str], i: int) -> str:
        r = self.r
        while True:
            if self.flavor == "eks":
                name = f"ip-10-{r.randrange(0, 4)}-{r.randrange(0, 64)}-{r.randrange(1, 255)}.ec2.internal"
            elif self.flavor == "gke":
                pool.hash = pool.hash or "".join(r.choices("0123456789abcdef", k=8))
                s = "".join(r.choices(string.ascii_lowercase + string.digits, k=4))
                name = f"gke-prod-{pool.name}-pool-{pool.hash}-{s}"
            elif self.flavor == "aks":
                pool.hash = pool.hash or str(r.randrange(10**7, 10**8))
                k = len(pool.nodes) + r.choice([0, 0, 1])
                digits = "0123456789abcdefghijklmnopqrstuvwxyz"
                idx = digits[k // 36 % 36] + digits[k % 36]
                name = f"aks-{pool.name}-{pool.hash}-vmss0000{idx}"
            else:
                name = f"node-{i if r.random() < 0.8 else r.randrange(0, 20)}"
            if name not in taken:
                return name

    def nodes(self) -> None:
        r = self.r
        self.flavor = r.choice(["eks", "gke", "aks", "plain"])
        self.pool_key = POOL_LABEL[self.flavor]
        self.pools = self._pools()
        n = r.randint(50, 300) if self.large else r.choice([3, 4, 5, 6, 8, 10, 12])
        if self.n_nodes is not None:
            n = self.n_nodes
        self.node_names: list[str] = []
        self.node_zone: dict[str, str] = {}
        self.node_pool: dict[str, _Pool] = {}
        self.node_cpu: dict[str, int] = {}
        self.node_pods: dict[str, int] = {}
        self.node_alloc: dict[str, Obj] = {}
        self.node_taints: dict[str, list[Obj]] = {}
        self.gpu_nodes: list[str] = []
        taken: set[str] = set()
        weights = [4 if p.kind == "general" else 1 for p in self.pools]
        for i in range(n):
            # Every pool has a node; the rest are drawn, general pools four times as likely.
            pool = self.pools[i] if i < len(self.pools) else r.choices(self.pools, weights)[0]
            name = self._node_name(pool, taken, i)
            taken.add(name)
            zone = pool.zones[len(pool.nodes) % len(pool.zones)]
            pool.nodes.append(name)
            self._node(name, pool, zone)
        self.node_names = sorted(taken)

    def _node(self, name: str, pool: _Pool, zone: str) -> None:
        r = self.r
        cpu, mem = pool.cpu, pool.mem
        self.node_zone[name], self.node_pool[name], self.node_cpu[name] = zone, pool, cpu
        arch = "arm64" if pool.kind == "arm" else "amd64"
        labels = {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": arch,
            "node.kubernetes.io/instance-type": pool.itype,
            "topology.kubernetes.io/zone": zone,
            "topology.kubernetes.io/region": zone.rsplit("-", 1)[0],
            self.pool_key: pool.name,
            "acme.io/generation": str(r.choice([3, 4, 5])),
        }
        if self.flavor != "plain":
            labels["pool"] = pool.name
        taints: list[Obj] = []
        if pool.kind == "gpu":
            self.gpu_nodes.append(name)
            taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        if pool.kind == "spot":
            if r.random() < 0.6:
                taints.append(
                    {"key": "spot", "value": "true", "effect": r.choice(["NoSchedule", "PreferNoSchedule"])}
                )
            labels["node.kubernetes.io/lifecycle"] = "spot"
        if pool.kind == "infra":
            taints.append(
                {"key": "dedicated", "value": "infra", "effect": r.choice(["NoSchedule", "NoExecute"])}
            )
        if r.random() < 0.05:
            taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        if r.random() < 0.03:
            taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"})
        pods = r.choice(["110", "110", "110", "58", "8"])
        alloc = {
            "cpu": f"{cpu * 1000 - r.choice([0, 70, 190])}m",
            "memory": f"{mem * 1024 - r.choice([0, 600, 1200])}Mi",
            "pods": pods,
            "ephemeral-storage": "95Gi",
        }
        if pool.kind == "gpu":
            alloc["nvidia.com/gpu"] = str(r.choice([1, 4, 8]))
        images = [
            {"names": [img, img.split("/")[-1]] if r.random() < 0.3 else [img], "sizeBytes": size}
            for img, size in IMAGES
            if r.random() < 0.35
        ]
        spec: Obj = {"taints": taints} if taints else {}
        if r.random() < 0.04:
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
        x = self.x
        if self.minor >= 35 and x.random() < (0.5 if self.xfocus == "node-features" else 0.08):
            # NodeDeclaredFeatures (alpha v1.35, on from v1.36): what the kubelet says it supports.
            status["declaredFeatures"] = x.choice(
                [
                    ["RestartAllContainersOnContainerExits"],
                    ["PodLevelResourcesResize", "RestartAllContainersOnContainerExits"],
                    ["PodLevelResourcesResize"],
                ]
            )
        if self.xfocus == "dra-gates" and x.random() < 0.15:
            # A device plugin's extended resource beside DRA-mapped ones (DRAExtendedResource: a node that
            # advertises the name is left to NodeResourcesFit).
            alloc["example.com/gpu"] = str(x.choice([1, 2]))
            status["capacity"]["example.com/gpu"] = alloc["example.com/gpu"]
        self.node_alloc[name] = alloc
        self.node_taints[name] = taints
        self.node_pods[name] = int(pods)
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
                    "metadata": self.meta(
                        ns, labels={"kubernetes.io/metadata.name": ns, "team": "a" if ns != "batch" else "b"}
                    ),
                }
            )
            if ns == self.admin_ns:
                # DRAAdminAccess: only a namespace with this label may hold adminAccess requests.
                self.objs[-1]["metadata"]["labels"]["resource.kubernetes.io/admin-access"] = "true"

    def priority_classes(self) -> None:
        for name, value in PRIORITIES.items():
            pc: Obj = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": self.meta(name),
                "value": value,
            }
            if name == "high" and self.r.random() < 0.15:
                pc["preemptionPolicy"] = "Never"
            self.objs.append(pc)

    # --- pods --------------------------------------------------------------------------------------
    def container(self, name: str, big: bool = False) -> Obj:
        r = self.r
        req: Obj = {}
        if r.random() < 0.9:
            req["cpu"] = r.choice(["1500m", "2", "3", "4", "6"]) if big else _quantity_cpu(r)
        if r.random() < 0.8:
            req["memory"] = r.choice(["1Gi", "2Gi", "2Gi", "4Gi", "8Gi", "40Gi"]) if big else _quantity_mem(r)
        if r.random() < 0.05:
            req["ephemeral-storage"] = r.choice(["1Gi", "50Gi", "120Gi"])
        c: Obj = {"name": name, "image": r.choice(IMAGES)[0]}
        if req:
            c["resources"] = {"requests": req}
            if r.random() < 0.3:
                c["resources"]["limits"] = dict(req)
        return c

    def host_port(self) -> Obj:
        r = self.r
        p: Obj = {"containerPort": r.choice([8080, 9100]), "hostPort": r.choice([8080, 8080, 9100, 53])}
        p["protocol"] = r.choice(["TCP", "TCP", "UDP"])
        if r.random() < 0.2:
            p["hostIP"] = r.choice(["0.0.0.0", "127.0.0.1", "10.0.0.1"])
        return p

    def _tolerations_for(self, node: str) -> list[Obj]:
        tol = []
        for t in self.node_taints[node]:
            if t["key"].startswith("node.kubernetes.io/"):
                continue
            tol.append({"key": t["key"], "operator": "Exists", "effect": t["effect"]})
        return tol

    def bound_pods(self) -> None:
        r = self.r
        self.bound: list[Obj] = []
        # One priority shared by many victims on purpose (equal-priority tie-breaks in preemption).
        shared = r.choice(["preemptible", "low", "low", "mid", "mid", "high"])
        if self.large:
            self.apps = APPS + MORE_APPS
        hashes = {
            a: "".join(r.choices("bcdfghjklmnpqrstvwxz2456789", k=r.choice([9, 10]))) for a in self.apps
        }
        self.hashes = hashes
        minute = 0
        per_node = [0, 1, 2, 3, 4, 6] if not self.large else [0, 1, 2, 3, 4]
        for node in self.node_names:
            cap = _cpu_milli(self.node_alloc[node]["cpu"])
            # Under pressure (one scenario in three) nodes are nearly full: preemption has work.
            fill = [0.85, 0.95, 1.0, 1.0] if self.pressure else [0.3, 0.6, 0.8, 0.95, 1.0, 1.0]
            target = cap * r.choice(fill)
            used = 0
            count = r.choice(per_node) + (2 if target > cap * 0.9 else 0)
            if self.pressure:
                count = 12  # draws until the node is about full (a request that would overflow is skipped)
            for _ in range(min(count, self.node_pods[node])):
                app = r.choice(self.apps)
                ns = r.choice(NAMESPACES)
                pc = shared if r.random() < 0.6 else r.choice(list(PRIORITIES))
                idx = len(self.bound)
                suffix = "".join(r.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
                name = f"{app}-{hashes[app]}-{suffix}" if r.random() < 0.8 else f"{app}-{idx}"
                minute += r.choice([0, 0, 1, 7, 60])  # equal start times happen
                c = self.container("main")
                cpu = c.get("resources", {}).get("requests", {}).get("cpu")
                if cpu is not None:
                    if used + _cpu_milli(cpu) > target:
                        continue
                    used += _cpu_milli(cpu)
                if r.random() < self.odds["bound_port"]:
                    c["ports"] = [self.host_port()]
                spec: Obj = {
                    "nodeName": node,
                    "schedulerName": "default-scheduler",
                    "priorityClassName": pc,
                    "priority": PRIORITIES[pc],
                    "containers": [c],
                }
                spec["tolerations"] = [*self._tolerations_for(node), *DEFAULT_TOLERATIONS]
                if r.random() < self.odds["bound_anti"]:
                    spec["affinity"] = {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": {"app": r.choice(self.apps)}},
                                    "topologyKey": r.choice(
                                        ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
                                    ),
                                }
                            ]
                        }
                    }
                meta = self.meta(
                    name,
                    ns,
                    labels={"app": app, "tier": r.choice(["fe", "be"]), "pod-template-hash": hashes[app]},
                )
                if r.random() < self.odds["terminating"]:
                    meta["deletionTimestamp"] = _ts(minute + 5)
                    meta["deletionGracePeriodSeconds"] = 30
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": meta,
                    "spec": spec,
                    "status": {
                        "phase": "Running",
                        "startTime": _ts(minute),
                        "conditions": [{"type": "PodScheduled", "status": "True"}],
                    },
                }
                if r.random() < self.odds["bound_volume"]:
                    self.bound_volume(pod, ns, node)
                if r.random() < self.odds["bound_claim"] and self.minor >= 34:
                    self.bound_claim(pod, ns, node)
                self.bound.append(pod)
                self.objs.append(pod)

    def pdbs(self) -> None:
        r = self.r
        for ns in NAMESPACES:
            for app in self.apps:
                if r.random() < self.odds["pdb"]:
                    matching = [
                        p
                        for p in self.bound
                        if p["metadata"]["namespace"] == ns and p["metadata"]["labels"]["app"] == app
                    ]
                    allowed = r.choice([0, 0, 1, 2])
                    if r.random() < 0.7:
                        sel: Obj = {"matchLabels": {"app": app}}
                    else:
                        sel = {
                            "matchExpressions": [
                                {"key": "app", "operator": "In", "values": [app, r.choice(self.apps)]}
                            ]
                        }
                    spec: Obj = {"selector": sel}
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

    def x_pdbs(self) -> None:
        """PDBs with an empty selector `{}` (preemption ignores them up to v1.37; v1.38 #141785 counts them)
        and tight budgets over the running apps, so successful preemptions (v1.37 writes their message) have
        PDBs to weigh."""
        x = self.x
        hot = self.xfocus == "pdb"
        for ns in NAMESPACES:
            if x.random() >= (0.3 if hot else 0.04):
                continue
            pods = [p for p in self.bound if p["metadata"]["namespace"] == ns]
            self.objs.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": self.meta(f"all-{ns}-pdb", ns),
                    "spec": {"selector": {}, "maxUnavailable": 0},
                    "status": {
                        "currentHealthy": len(pods),
                        "desiredHealthy": len(pods),
                        "disruptionsAllowed": 0,
                        "expectedPods": len(pods),
                        "observedGeneration": 1,
                    },
                }
            )

    def x_admission_objects(self) -> None:
        """A LimitRange with container defaults in one namespace and a RuntimeClass with overhead (both run
        by the harness' admission chain, as by kdiagnose for manifests)."""
        x = self.x
        hot = self.xfocus == "admission"
        if x.random() < (0.6 if hot else 0.06):
            ns = x.choice(NAMESPACES)
            item: Obj = {
                "type": "Container",
                "defaultRequest": {
                    "cpu": x.choice(["100m", "250m", "500m"]),
                    "memory": x.choice(["128Mi", "512Mi"]),
                },
                "default": {"cpu": "16", "memory": "128Gi"},
            }
            lr: Obj = {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": self.meta("defaults", ns),
                "spec": {"limits": [item]},
            }
            self.lr_namespaces[ns] = item
            self.objs.append(lr)
        if x.random() < (0.6 if hot else 0.06):
            rc: Obj = {
                "apiVersion": "node.k8s.io/v1",
                "kind": "RuntimeClass",
                "metadata": self.meta("gvisor"),
                "handler": "runsc",
                "overhead": {
                    "podFixed": {"cpu": x.choice(["100m", "250m"]), "memory": x.choice(["64Mi", "128Mi"])}
                },
            }
            if x.random() < 0.5:
                rc["scheduling"] = {"nodeSelector": {"kubernetes.io/arch": "amd64"}}
            self.runtime_class = rc
            self.objs.append(rc)

    def x_limit_range_stored(self) -> None:
        """Stored pods in a LimitRange's namespace were created under it: they carry its defaults (the harness
        re-runs LimitRanger on them, which must then change nothing; kdiagnose takes them as admitted)."""
        for o in self.objs:
            if o["kind"] != "Pod" or "priority" not in o["spec"]:
                continue
            item = self.lr_namespaces.get(o["metadata"]["namespace"])
            if item is None:
                continue
            for c in [*o["spec"].get("containers", []), *o["spec"].get("initContainers", [])]:
                res = c.setdefault("resources", {})
                for k, v in item["default"].items():
                    res.setdefault("limits", {}).setdefault(k, v)
                for k, v in item["defaultRequest"].items():
                    res.setdefault("requests", {}).setdefault(k, v)

    def selector_term(self) -> Obj:
        r = self.r
        choice = r.random()
        if choice < 0.3:
            return _zone_term(
                "topology.kubernetes.io/zone",
                r.choice(["In", "In", "NotIn"]),
                r.sample(ZONES[self.flavor], r.choice([1, 2])),
            )
        if choice < 0.55:
            pools = sorted({p.name for p in self.pools} | {"gpu"})
            return _zone_term(
                self.pool_key,
                r.choice(["In", "NotIn"]),
                r.sample(pools, r.choice([1, 1, 2]) if len(pools) > 1 else 1),
            )
        if choice < 0.65:
            return _zone_term("kubernetes.io/arch", "In", ["amd64"])
        if choice < 0.75:
            return _zone_term("acme.io/generation", r.choice(["Gt", "Lt"]), [str(r.choice([3, 4]))])
        if choice < 0.85:
            return {"key": "node.kubernetes.io/lifecycle", "operator": r.choice(["Exists", "DoesNotExist"])}
        return {"key": "node.kubernetes.io/instance-type", "operator": "Exists"}

    def node_affinity(self) -> Obj:
        r = self.r
        na: Obj = {}
        if r.random() < self.odds["required_node_affinity"]:
            terms = []
            for _ in range(r.choice([1, 1, 2])):
                terms.append({"matchExpressions": [self.selector_term() for _ in range(r.choice([1, 1, 2]))]})
            if r.random() < 0.08:
                # metadata.name takes one value per requirement (API validation): one term per node.
                terms = [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    for node in r.sample(self.node_names, min(r.choice([1, 2]), len(self.node_names)))
                ]
            na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        if r.random() < self.odds["preferred_node_affinity"]:
            na["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "weight": r.choice([1, 10, 50, 100]),
                    "preference": {"matchExpressions": [self.selector_term()]},
                }
                for _ in range(r.choice([1, 1, 2]))
            ]
        return na

    def pod_term(self) -> Obj:
        r = self.r
        if r.random() < 0.7:
            sel: Obj = {"matchLabels": {"app": r.choice(self.apps)}}
        else:
            sel = {
                "matchExpressions": [
                    {"key": "app", "operator": r.choice(["In", "NotIn"]), "values": r.sample(self.apps, 2)},
                    *([{"key": "tier", "operator": "Exists"}] if r.random() < 0.3 else []),
                ]
            }
        keys = ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
        if self.large or r.random() < 0.2:
            keys.append(self.pool_key)
        term: Obj = {"labelSelector": sel, "topologyKey": r.choice(keys)}
        x = r.random()
        if x < 0.15:
            term["namespaces"] = r.sample(NAMESPACES, r.choice([1, 2]))
        elif x < 0.25:
            term["namespaceSelector"] = r.choice([{}, {"matchLabels": {"team": "a"}}])
        return term

    def pod_affinity(self) -> Obj:
        r = self.r
        out: Obj = {}
        for kind in ("podAffinity", "podAntiAffinity"):
            if r.random() >= self.odds["pod_affinity"]:
                continue
            block: Obj = {}
            if r.random() < 0.5:
                block["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    self.pod_term() for _ in range(r.choice([1, 1, 2]))
                ]
            if r.random() < 0.6:
                block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": r.choice([1, 50, 100]), "podAffinityTerm": self.pod_term()}
                    for _ in range(r.choice([1, 2]))
                ]
            if block:
                out[kind] = block
        return out

    def spread(self, app: str) -> list[Obj]:
        r = self.r
        out = []
        keys = ["topology.kubernetes.io/zone", "kubernetes.io/hostname"] + (
            [self.pool_key] if self.large else []
        )
        for key in r.sample(keys, r.choice([1, 1, 2])):
            tsc: Obj = {
                "maxSkew": r.choice([1, 1, 2, 3]),
                "topologyKey": key,
                "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"app": app}}
                if r.random() < 0.8
                else {
                    "matchExpressions": [
                        {"key": "app", "operator": "In", "values": [app, r.choice(self.apps)]}
                    ]
                },
            }
            if tsc["whenUnsatisfiable"] == "DoNotSchedule" and r.random() < 0.2:
                tsc["minDomains"] = r.choice(
                    [2, 3, 5]
                )  # the API server allows minDomains only with DoNotSchedule
            if r.random() < 0.15:
                tsc["nodeAffinityPolicy"] = r.choice(["Honor", "Ignore"])
            if r.random() < 0.15:
                tsc["nodeTaintsPolicy"] = r.choice(["Honor", "Ignore"])
            out.append(tsc)
        return out

    def tolerations(self) -> list[Obj]:
        r = self.r
        tol: list[Obj] = []
        if r.random() < 0.3:
            tol.append({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
        if r.random() < 0.3:
            tol.append({"key": "spot", "operator": "Equal", "value": "true"})
        if r.random() < 0.1:
            tol.append({"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"})
        if r.random() < 0.05:
            tol.append(
                {"key": "dedicated", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )
        if r.random() < 0.03:
            tol.append({"operator": "Exists"})
        return tol

    def pending_pod(self, i: int) -> None:
        r = self.r
        app = r.choice(self.apps)
        ns = r.choice(NAMESPACES)
        big = r.random() < 0.5
        pc = r.choice([*list(PRIORITIES), "high", "high", "mid"])
        main = self.container("main", big)
        if self.pressure:
            # A request sized to one pool's nodes, at a priority above most running pods.
            pc = r.choice(["high", "high", "mid", "low"])
            pool = r.choice(self.pools)
            main.setdefault("resources", {}).setdefault("requests", {})["cpu"] = (
                f"{pool.cpu * r.choice([300, 500, 700, 900])}m"
            )
            main["resources"].pop("limits", None)
        labels = {"app": app, "tier": r.choice(["fe", "be"])}
        spec: Obj = {
            "schedulerName": "default-scheduler",
            "priorityClassName": pc,
            "priority": PRIORITIES[pc],
            "containers": [main],
        }
        if r.random() < 0.2:
            spec["containers"].append(self.container("sidecar"))
        if r.random() < 0.1:
            init = self.container("init", r.random() < 0.3)
            if r.random() < 0.4:
                init["restartPolicy"] = "Always"  # a native sidecar
            spec["initContainers"] = [init]
        if r.random() < self.odds["pending_port"]:
            spec["containers"][0]["ports"] = [self.host_port()]
        if r.random() < self.odds["node_selector"]:
            pools = sorted({p.name for p in self.pools})
            spec["nodeSelector"] = (
                {"kubernetes.io/os": "linux"} if r.random() < 0.5 else {self.pool_key: r.choice(pools)}
            )
        aff: Obj = {}
        na = self.node_affinity()
        if na:
            aff["nodeAffinity"] = na
        aff.update(self.pod_affinity())
        if aff:
            spec["affinity"] = aff
        if r.random() < self.odds["spread"]:
            spec["topologySpreadConstraints"] = self.spread(app)
        tol = self.tolerations()
        if r.random() < self.odds["tolerate_pools"]:
            keys = {t.get("key") for t in tol}
            for t in sorted({(t["key"], t["effect"]) for ts in self.node_taints.values() for t in ts}):
                if t[0] not in keys and not t[0].startswith("node.kubernetes.io/"):
                    tol.append({"key": t[0], "operator": "Exists", "effect": t[1]})
        if r.random() < 0.25:
            # A manifest as created (admission runs: Priority resolves the class, DefaultTolerationSeconds
            # adds its tolerations); otherwise a pod as stored, which carries what admission set.
            del spec["priority"]
        else:
            tol += [t for t in DEFAULT_TOLERATIONS if not any(u.get("key") == t["key"] for u in tol)]
        if tol:
            spec["tolerations"] = tol
        if r.random() < 0.1 and self.gpu_nodes:
            spec["containers"][0].setdefault("resources", {}).setdefault("limits", {})["nvidia.com/gpu"] = (
                str(r.choice([1, 1, 2, 4]))
            )
        if r.random() < self.odds["volumes"]:
            self.volumes(spec, ns, f"{app}-p{i}")
        if r.random() < self.odds["dra"]:
            self.dra(spec, ns, f"{app}-p{i}")
        self.x_pending(spec, labels, ns, app, i)
        status: Obj = {"phase": "Pending"}
        if r.random() < self.odds["nominated"]:
            status["nominatedNodeName"] = r.choice(self.node_names)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.meta(f"{app}-pending-{i}", ns, labels=labels),
            "spec": spec,
            "status": status,
        }
        self.objs.append(pod)

    # --- issue #14, second round: newer fields on pending pods -----------------------------------------
    def _label_keys(self, spec: Obj, labels: dict[str, str]) -> None:
        """matchLabelKeys / mismatchLabelKeys on the pod's affinity terms and spread constraints, and an empty
        `labelSelector: {}` in a spread constraint. Affinity terms are written as stored: the API server
        merged `key in/notin (value)` into the labelSelector at creation (pkg/registry/core/pod/strategy.go
        applyMatchLabelKeysAndMismatchLabelKeys; the harness, like the scheduler, never merges them for
        affinity). Spread constraints are merged by the scheduler itself (podtopologyspread/common.go), and
        by the API server at creation from v1.34 (MatchLabelKeysInPodTopologySpreadSelectorMerge): a stored
        pod of v1.34+ carries the merged requirement, a manifest does not."""
        x = self.x
        hot = self.xfocus == "labelkeys"
        stored = "priority" in spec

        def merged(sel: Obj, keys: list[str], op: str) -> None:
            for k in keys:
                if k in labels:
                    sel.setdefault("matchExpressions", []).append(
                        {"key": k, "operator": op, "values": [labels[k]]}
                    )

        for kind in ("podAffinity", "podAntiAffinity"):
            block = spec.get("affinity", {}).get(kind, {})
            terms = list(block.get("requiredDuringSchedulingIgnoredDuringExecution", []))
            terms += [
                w["podAffinityTerm"] for w in block.get("preferredDuringSchedulingIgnoredDuringExecution", [])
            ]
            for term in terms:
                if x.random() >= (0.6 if hot else 0.12):
                    continue
                key = x.choice(["pod-template-hash", "pod-template-hash", "tier", "track"])
                field = "matchLabelKeys" if x.random() < 0.6 else "mismatchLabelKeys"
                term[field] = [key]
                merged(term["labelSelector"], [key], "In" if field == "matchLabelKeys" else "NotIn")
        for c in spec.get("topologySpreadConstraints", []):
            if x.random() < (0.15 if hot else 0.04):
                c["labelSelector"] = {}  # counts no pod (countPodsMatchSelector: selector.Empty())
            if x.random() < (0.6 if hot else 0.12):
                keys = x.choice(
                    [["pod-template-hash"], ["pod-template-hash"], ["tier"], ["pod-template-hash", "track"]]
                )
                c["matchLabelKeys"] = keys
                if stored and self.minor >= 34:
                    merged(c["labelSelector"], keys, "In")

    def _container_sum(self, spec: Obj) -> tuple[int, int]:
        """Milli-cpu and MiB the pod's containers request (regular and init, summed: an upper bound of the
        effective request, so pod-level requests drawn above it are valid)."""
        cpu = mem = 0
        for c in [*spec.get("containers", []), *spec.get("initContainers", [])]:
            req = c.get("resources", {}).get("requests", {})
            if "cpu" in req:
                cpu += _cpu_milli(req["cpu"])
            if "memory" in req:
                q = req["memory"]
                mem += int(q[:-2]) * (1024 if q.endswith("Gi") else 1)
        return cpu, mem

    def x_pending(self, spec: Obj, labels: dict[str, str], ns: str, app: str, i: int) -> None:
        x = self.x
        if x.random() < (0.8 if self.xfocus == "labelkeys" else 0.4) and app in self.hashes:
            # A Deployment's pod: the current rollout's hash (as its running pods) or a new one.
            labels["pod-template-hash"] = (
                self.hashes[app]
                if x.random() < 0.6
                else "".join(x.choices("bcdfghjklmnpqrstvwxz2456789", k=10))
            )
            if x.random() < 0.3:
                labels["track"] = x.choice(["stable", "canary"])
        self._label_keys(spec, labels)
        main = spec["containers"][0]
        nf = self.xfocus == "node-features"
        if self.minor >= 34 and x.random() < (0.3 if nf else 0.03):
            # ContainerRestartRules: RestartAllContainers implies NodeDeclaredFeatures'
            # RestartAllContainersOnContainerExits (component-helpers nodedeclaredfeatures).
            main["restartPolicy"] = "Never"
            main["restartPolicyRules"] = [
                {
                    "action": x.choice(["RestartAllContainers", "RestartAllContainers", "Restart"]),
                    "exitCodes": {"operator": "In", "values": [42]},
                }
            ]
        if x.random() < (0.25 if nf else 0.05):
            # Image volumes (ImageVolume GA v1.36; ImageLocality counts them from v1.36).
            img = x.choice(IMAGES)[0]
            spec.setdefault("volumes", []).append(
                {"name": "model", "image": {"reference": img, "pullPolicy": "IfNotPresent"}}
            )
        if x.random() < (0.15 if nf else 0.03):
            spec["schedulingGates"] = [{"name": x.choice(["kueue.x-k8s.io/admission", "example.com/quota"])}]
        if self.minor >= 32 and ns not in self.lr_namespaces and x.random() < (0.25 if nf else 0.05):
            # Pod-level resources (beta/on from v1.34): requests at or above the containers' sum.
            cpu, mem = self._container_sum(spec)
            req = {
                "cpu": f"{cpu + x.choice([0, 250, 1000])}m",
                "memory": f"{mem + x.choice([0, 512, 2048])}Mi",
            }
            if cpu == 0:
                req.pop("cpu")
            spec["resources"] = {"requests": req}
            if x.random() < 0.4:
                spec["resources"]["limits"] = dict(req)
        if self.runtime_class is not None and x.random() < 0.5:
            spec["runtimeClassName"] = self.runtime_class["metadata"]["name"]
            if "priority" in spec:
                # As stored: RuntimeClass admission set the overhead and merged the class's scheduling.
                spec["overhead"] = dict(self.runtime_class["overhead"]["podFixed"])
                sched = self.runtime_class.get("scheduling", {})
                if "nodeSelector" in sched:
                    spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **sched["nodeSelector"]}
        if self._dra and self.ext_classes and x.random() < 0.3:
            # DRAExtendedResource: the pod asks for a plain extended resource that a DeviceClass maps.
            name = x.choice(self.ext_classes)
            n = str(x.choice([1, 1, 2]))
            res = main.setdefault("resources", {})
            res.setdefault("requests", {})[name] = n
            res.setdefault("limits", {})[name] = n

    # --- volumes -------------------------------------------------------------------------------------
    def storage(self) -> None:
        """StorageClasses, CSIDriver and CSINodes, once per scenario."""
        if self._storage:
            return
        self._storage = True
        r = self.r
        self.driver = DRIVER.get(self.flavor, "csi.example.com")
        zones = sorted({z for p in self.pools for z in p.zones})
        gp3: Obj = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": self.meta("gp3"),
            "provisioner": self.driver,
            "volumeBindingMode": "WaitForFirstConsumer",
            "reclaimPolicy": "Delete",
        }
        if r.random() < 0.3 and len(zones) > 1:
            gp3["allowedTopologies"] = [
                {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": zones[:-1]}]}
            ]
        self.objs.append(gp3)
        for sc, prov, mode in (
            ("fast-immediate", self.driver, "Immediate"),
            ("local-storage", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
        ):
            self.objs.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": self.meta(sc),
                    "provisioner": prov,
                    "volumeBindingMode": mode,
                    "reclaimPolicy": "Delete",
                }
            )
        x = self.x
        # StorageCapacityScoring (beta/on v1.37) scores by CSIStorageCapacity: more of it from v1.37.
        self.capacity = r.random() < 0.2 or (self.minor >= 37 and x.random() < 0.25)
        # CSIDriver.spec.preventPodSchedulingIfMissing (v1.36 field; VolumeLimitScaling honours it, beta/on
        # v1.37): a new volume of this driver keeps the pod off nodes whose CSINode lacks the driver.
        prevent = self.minor >= 36 and x.random() < (0.4 if self.xfocus == "node-features" else 0.1)
        if r.random() < 0.5 or self.capacity or prevent:
            drv_spec: Obj = {"attachRequired": True, "podInfoOnMount": False}
            if self.capacity:
                drv_spec["storageCapacity"] = True
            if prevent:
                drv_spec["preventPodSchedulingIfMissing"] = True
            self.objs.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSIDriver",
                    "metadata": self.meta(self.driver),
                    "spec": drv_spec,
                }
            )
        if self.capacity:
            for z in zones:
                if r.random() < 0.8:
                    self.objs.append(
                        {
                            "apiVersion": "storage.k8s.io/v1",
                            "kind": "CSIStorageCapacity",
                            "metadata": self.meta(f"csisc-{z}", "kube-system"),
                            "storageClassName": "gp3",
                            "capacity": r.choice(["5Gi", "50Gi", "500Gi"]),
                            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": z}},
                        }
                    )
                    if x.random() < 0.3:
                        self.objs[-1]["maximumVolumeSize"] = x.choice(["10Gi", "50Gi"])
        self.csi_limit: dict[str, int] = {}
        for node in self.node_names:
            if r.random() < 0.85:
                d: Obj = {
                    "name": self.driver,
                    "nodeID": node,
                    "topologyKeys": ["topology.kubernetes.io/zone"],
                }
                if r.random() < 0.5:
                    d["allocatable"] = {"count": r.choice([1, 2, 25])}
                    self.csi_limit[node] = d["allocatable"]["count"]
                self.objs.append(
                    {
                        "apiVersion": "storage.k8s.io/v1",
                        "kind": "CSINode",
                        "metadata": self.meta(node),
                        "spec": {"drivers": [d]},
                    }
                )

    def _pv(
        self,
        claim: str | None,
        ns: str,
        size: str,
        modes: list[str],
        zone: str | None,
        node: str | None,
        sc: str,
    ) -> str:
        pv = f"pvc-{self._uid()}" if claim else f"local-pv-{self._uid()[-6:]}"
        term = (
            _zone_term("kubernetes.io/hostname", "In", [node])
            if node
            else _zone_term("topology.kubernetes.io/zone", "In", [zone or ZONES[self.flavor][0]])
        )
        spec: Obj = {
            "capacity": {"storage": size},
            "accessModes": modes,
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": sc,
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}},
        }
        if node:
            spec["local"] = {"path": "/mnt/disks/ssd0"}
        else:
            spec["csi"] = {"driver": self.driver, "volumeHandle": f"vol-{pv[-8:]}"}
        if claim:
            spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim}
        meta = self.meta(pv)
        if zone and self.r.random() < 0.3:
            meta["labels"] = {"topology.kubernetes.io/zone": zone}
        self.objs.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": meta,
                "spec": spec,
                "status": {"phase": "Bound" if claim else "Available"},
            }
        )
        return pv

    def _pvc(self, name: str, ns: str, sc: str, modes: list[str], size: str, pv: str | None) -> None:
        pvc: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": self.meta(name, ns),
            "spec": {
                "accessModes": modes,
                "resources": {"requests": {"storage": size}},
                "storageClassName": sc,
            },
            "status": {"phase": "Pending"},
        }
        if pv:
            pvc["spec"]["volumeName"] = pv
            pvc["status"] = {"phase": "Bound", "accessModes": modes, "capacity": {"storage": size}}
        self.objs.append(pvc)

    def bound_volume(self, pod: Obj, ns: str, node: str) -> None:
        """A running pod's bound CSI volume in its node's zone (counts against the node's attach limit)."""
        self.storage()
        self._pvc_seq += 1
        claim = f"data-{pod['metadata']['name']}"
        modes = [self.r.choice(["ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"])]
        pv = self._pv(claim, ns, "10Gi", modes, self.node_zone[node], None, "gp3")
        self._pvc(claim, ns, "gp3", modes, "10Gi", pv)
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        self.held_claims.append((ns, claim))

    def volumes(self, spec: Obj, ns: str, base: str) -> None:
        r = self.r
        self.storage()
        claim = f"{base}-data"
        kind = r.choices(
            [
                "bound",
                "local-bound",
                "wffc",
                "wffc-local",
                "immediate-unbound",
                "missing",
                "no-class",
                "held",
            ],
            [6, 3, 4, 4, 1, 1, 1, 3],
        )[0]
        modes = [r.choice(["ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"])]
        size = r.choice(["10Gi", "10Gi", "20Gi", "100Gi"])
        held = [c for c in self.held_claims if c[0] == ns]
        if kind == "held" and held:
            claim = r.choice(held)[1]
        elif kind == "bound":
            zone = r.choice(sorted({z for p in self.pools for z in p.zones}))
            self._pvc(claim, ns, "gp3", modes, size, self._pv(claim, ns, size, modes, zone, None, "gp3"))
        elif kind == "local-bound":
            node = r.choice(self.node_names)
            self._pvc(
                claim,
                ns,
                "local-storage",
                modes,
                size,
                self._pv(claim, ns, size, modes, None, node, "local-storage"),
            )
        elif kind == "wffc-local":
            for node in r.sample(self.node_names, min(len(self.node_names), r.choice([1, 2, 4]))):
                self._pv(
                    None,
                    ns,
                    r.choice(["5Gi", "20Gi", "200Gi"]),
                    ["ReadWriteOnce"],
                    None,
                    node,
                    "local-storage",
                )
            self._pvc(claim, ns, "local-storage", ["ReadWriteOnce"], size, None)
        elif kind == "wffc":
            self._pvc(claim, ns, "gp3", modes, size, None)
        elif kind == "immediate-unbound":
            self._pvc(claim, ns, "fast-immediate", modes, size, None)
        elif kind == "no-class":
            self._pvc(claim, ns, "premium-rwo", modes, size, None)
        # "missing" (and "held" without a held claim in this namespace): the claim does not exist.
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]

    # --- DRA -----------------------------------------------------------------------------------------
    def dra_setup(self) -> None:
        if self._dra:
            return
        self._dra = True
        r = self.r
        self.objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": self.meta(GPU_DRIVER),
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]},
            }
        )
        self.objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": self.meta("a100.gpu.example.com"),
                "spec": {
                    "selectors": [
                        {"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}},
                        {"cel": {"expression": f'device.attributes["{GPU_DRIVER}"].model == "a100"'}},
                    ]
                },
            }
        )
        self.objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": self.meta(NIC_DRIVER),
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{NIC_DRIVER}"'}}]},
            }
        )
        self.devices: dict[str, list[str]] = {}
        dra_nodes = [n for n in self.node_names if n in self.gpu_nodes or r.random() < 0.3]
        if len(dra_nodes) > 40:
            dra_nodes = sorted(r.sample(dra_nodes, 40))
        for node in dra_nodes:
            devs = [
                {
                    "name": f"gpu-{k}",
                    "attributes": {
                        "model": {"string": r.choice(["a100", "l4"])},
                        "index": {"int": k},
                    },
                    "capacity": {"memory": {"value": r.choice(["24Gi", "40Gi", "80Gi"])}},
                }
                for k in range(r.choice([1, 2, 4, 8]))
            ]
            self.devices[node] = [d["name"] for d in devs]
            self.objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": self.meta(f"{node}-{GPU_DRIVER}-{r.randrange(16**5):05x}"),
                    "spec": {
                        "driver": GPU_DRIVER,
                        "nodeName": node,
                        "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                        "devices": devs,
                    },
                }
            )
            if r.random() < 0.3:
                self.objs.append(
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "ResourceSlice",
                        "metadata": self.meta(f"{node}-{NIC_DRIVER}-{r.randrange(16**5):05x}"),
                        "spec": {
                            "driver": NIC_DRIVER,
                            "nodeName": node,
                            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                            "devices": [
                                {
                                    "name": f"vf-{k}",
                                    "attributes": {"pf": {"string": r.choice(["ens1f0", "ens1f1"])}},
                                }
                                for k in range(r.choice([2, 4]))
                            ],
                        },
                    }
                )
        self.x_dra_setup(dra_nodes)

    def _slice(self, node: str, driver: str, pool: str, count: int, spec: Obj, tag: str) -> None:
        self.objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": self.meta(f"{node}-{driver}-{tag}"),
                "spec": {
                    "driver": driver,
                    "nodeName": node,
                    "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                    **spec,
                },
            }
        )

    def x_dra_setup(self, dra_nodes: list[str]) -> None:
        """The DRA fields of newer gates (issue #14), generated on every DRA release: where the gate is off the
        API server's strategies drop them (the harness runs them; kdiagnose/load/dra_strategy.py mirrors it).
        - DRAPartitionableDevices (beta/on v1.36): a pool `<node>-mig` of two slices, one with sharedCounters,
          one with partitions consuming them;
        - DRAConsumableCapacity (beta/on v1.36): a pool `<node>-shared` of NICs with allowMultipleAllocations
          and a bandwidth capacity with a requestPolicy;
        - DRADeviceTaints (beta/on v1.36): taints on GPU devices; DeviceTaintRules where the release serves
          them in resource.k8s.io/v1 (v1.37);
        - DRADeviceBindingConditions (beta/on v1.36): devices with bindingConditions;
        - DRAExtendedResource (beta/on v1.36): a DeviceClass with extendedResourceName, and the implicit
          `deviceclass.resource.kubernetes.io/<class>` name."""
        x = self.x
        hot = self.xfocus == "dra-gates"
        # Each family is in a scenario or not (so most DRA scenarios keep the plain devices only), then on
        # about half of its DRA nodes.
        on = {k: x.random() < (0.7 if hot else 0.12) for k in ("partitions", "shared", "binding", "taints")}
        for node in dra_nodes:
            if on["partitions"] and x.random() < 0.5:
                counters = [f"gpu-{k}" for k in range(x.choice([1, 2]))]
                self._slice(
                    node,
                    GPU_DRIVER,
                    f"{node}-mig",
                    2,
                    {
                        "sharedCounters": [
                            {"name": c, "counters": {"memory": {"value": "80Gi"}, "sms": {"value": "8"}}}
                            for c in counters
                        ]
                    },
                    "counters",
                )
                devs = []
                for c in counters:
                    for prof, mem, sms, n in (
                        ("full", 80, 8, 1),
                        ("half", 40, 4, 2),
                        ("small", 10, 1, x.choice([2, 4])),
                    ):
                        for j in range(n):
                            devs.append(
                                {
                                    "name": f"{c}-{prof}-{j}",
                                    "attributes": {
                                        "model": {"string": "a100"},
                                        "profile": {"string": prof},
                                        "parent": {"string": c},
                                    },
                                    "capacity": {"memory": {"value": f"{mem}Gi"}},
                                    "consumesCounters": [
                                        {
                                            "counterSet": c,
                                            "counters": {
                                                "memory": {"value": f"{mem}Gi"},
                                                "sms": {"value": str(sms)},
                                            },
                                        }
                                    ],
                                }
                            )
                self._slice(node, GPU_DRIVER, f"{node}-mig", 2, {"devices": devs}, "partitions")
            if on["shared"] and x.random() < 0.5:
                self.shared_nics = True
                nics = []
                for k in range(x.choice([1, 2])):
                    d: Obj = {
                        "name": f"nic-{k}",
                        "attributes": {"model": {"string": "cx7"}, "pf": {"string": "ens1f0"}},
                        "capacity": {
                            "bandwidth": {
                                "value": "10G",
                                "requestPolicy": {
                                    "default": "1G",
                                    "validRange": {"min": "1G", "max": "10G", "step": "1G"},
                                },
                            }
                        },
                    }
                    if x.random() < 0.8:
                        d["allowMultipleAllocations"] = True
                    if x.random() < 0.3:
                        d["capacity"]["queues"] = {"value": "8"}
                    nics.append(d)
                self._slice(node, NIC_DRIVER, f"{node}-shared", 1, {"devices": nics}, "shared")
            if on["binding"] and x.random() < 0.5:
                # Devices waiting for the driver before binding (attach to a fabric, say).
                dev: Obj = {
                    "name": "fabric-gpu-0",
                    "attributes": {"model": {"string": "l4"}, "index": {"int": 100}},
                    "capacity": {"memory": {"value": "24Gi"}},
                    "bindingConditions": ["gpu.example.com/attached"],
                    "bindingFailureConditions": ["gpu.example.com/attach-failed"],
                }
                if x.random() < 0.5:
                    dev["bindsToNode"] = True
                self._slice(node, GPU_DRIVER, f"{node}-fabric", 1, {"devices": [dev]}, "fabric")
        # Device taints on the GPUs of the plain slices.
        for o in self.objs:
            if (
                o["kind"] != "ResourceSlice"
                or o["spec"]["driver"] != GPU_DRIVER
                or o["spec"]["pool"]["name"] not in self.devices
            ):
                continue
            for d in o["spec"].get("devices", []):
                if on["taints"] and x.random() < 0.3:
                    key, value = x.choice([("example.com/ecc-errors", "true"), ("example.com/unhealthy", "")])
                    t: Obj = {"key": key, "effect": x.choice(["NoSchedule", "NoExecute"])}
                    if value:
                        t["value"] = value
                    d["taints"] = [t]
                    self.device_taints.append((key, t["effect"]))
        if self.minor >= 37 and x.random() < (0.4 if hot else 0.05) and self.devices:
            node = x.choice(sorted(self.devices))
            sel: Obj = {"driver": GPU_DRIVER, "pool": node}
            if x.random() < 0.5:
                sel["device"] = x.choice(self.devices[node])
            self.objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceTaintRule",
                    "metadata": self.meta(f"drain-{x.randrange(16**5):05x}"),
                    "spec": {
                        "deviceSelector": sel,
                        "taint": {
                            "key": "example.com/drain",
                            "value": "planned",
                            "effect": x.choice(["NoSchedule", "NoExecute"]),
                        },
                    },
                }
            )
            self.device_taints.append(("example.com/drain", "NoSchedule"))
        if x.random() < (0.6 if hot else 0.1):
            self.objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "DeviceClass",
                    "metadata": self.meta("ext.gpu.example.com"),
                    "spec": {
                        "extendedResourceName": "example.com/gpu",
                        "selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}],
                    },
                }
            )
            self.ext_classes = ["example.com/gpu", f"deviceclass.resource.kubernetes.io/{NIC_DRIVER}"]

    def bound_claim(self, pod: Obj, ns: str, node: str) -> None:
        """A running pod holding an allocated GPU claim (its device is in use)."""
        self.dra_setup()
        if node not in self.devices:
            return
        free = [d for d in self.devices[node] if (node, d) not in self.allocated]
        if not free:
            return
        dev = self.r.choice(free)
        self.allocated.add((node, dev))  # a device is allocated to one claim at most
        name = f"{pod['metadata']['name']}-gpu"
        self.objs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": self.meta(name, ns),
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {
                                    "deviceClassName": GPU_DRIVER,
                                    "allocationMode": "ExactCount",
                                    "count": 1,
                                },
                            }
                        ]
                    }
                },
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": node, "device": dev}]
                        },
                        "nodeSelector": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {"key": "metadata.name", "operator": "In", "values": [node]}
                                    ]
                                }
                            ]
                        },
                    },
                    "reservedFor": [
                        {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
                    ],
                },
            }
        )
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": name}]
        pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu"}]
        self.shared_claims.append((ns, name))

    def _request(self, name: str) -> Obj:
        r = self.r
        cls = r.choice([GPU_DRIVER, GPU_DRIVER, "a100.gpu.example.com", NIC_DRIVER])
        ex: Obj = {"deviceClassName": cls}
        if r.random() < 0.1:
            ex["allocationMode"] = "All"
        else:
            ex["allocationMode"] = "ExactCount"
            ex["count"] = r.choice([1, 1, 2, 3])
        if cls != NIC_DRIVER and r.random() < 0.4:
            ex["selectors"] = [
                {
                    "cel": {
                        "expression": r.choice(
                            [
                                f'device.attributes["{GPU_DRIVER}"].model == "{r.choice(["a100", "l4"])}"',
                                f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("{r.choice(["40Gi", "80Gi"])}")) >= 0',
                            ]
                        )
                    }
                }
            ]
        elif cls == NIC_DRIVER and r.random() < 0.4:
            ex["selectors"] = [{"cel": {"expression": f'device.attributes["{NIC_DRIVER}"].pf == "ens1f0"'}}]
        self.x_request(ex, cls)
        if r.random() < 0.15:
            alt = {
                "name": "fallback",
                "deviceClassName": GPU_DRIVER,
                "allocationMode": "ExactCount",
                "count": 1,
            }
            ex.pop("adminAccess", None)  # a DeviceSubRequest has no adminAccess
            return {"name": name, "firstAvailable": [{"name": "first", **ex}, alt]}
        return {"name": name, "exactly": ex}

    def x_request(self, ex: Obj, cls: str) -> None:
        """Claim fields of newer gates on one request: tolerations of device taints, capacity requests on
        shared NICs, adminAccess (only in the namespace labelled for it)."""
        x = self.x
        hot = self.xfocus == "dra-gates"
        if self.device_taints and cls != NIC_DRIVER and x.random() < (0.5 if hot else 0.2):
            key, effect = x.choice(self.device_taints)
            ex["tolerations"] = [
                x.choice(
                    [
                        {"key": key, "operator": "Exists", "effect": effect},
                        {"key": key, "operator": "Exists"},
                        {"operator": "Exists"},
                        {"key": key, "operator": "Equal", "value": "true", "effect": effect},
                    ]
                )
            ]
        if (
            cls == NIC_DRIVER
            and self.shared_nics
            and ex.get("allocationMode") == "ExactCount"
            and x.random() < 0.6
        ):
            ex["capacity"] = {"requests": {"bandwidth": x.choice(["1G", "3G", "5G", "2500M", "12G"])}}
            if x.random() < 0.15:
                ex["capacity"]["requests"]["queues"] = "4"
        if self.admin_ns is not None and self._ns == self.admin_ns and x.random() < (0.3 if hot else 0.1):
            ex["adminAccess"] = True

    def dra(self, spec: Obj, ns: str, base: str) -> None:
        if self.minor < 34:
            return
        r = self.r
        self.dra_setup()
        self._ns = ns
        shared = [c for c in self.shared_claims if c[0] == ns]
        if shared and r.random() < 0.2:
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": r.choice(shared)[1]}]
        else:
            reqs = [self._request("gpu")]
            if r.random() < 0.2:
                reqs.append(self._request("nic"))
            tmpl = f"{base}-gpu"
            self.objs.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaimTemplate",
                    "metadata": self.meta(tmpl, ns),
                    "spec": {"spec": {"devices": {"requests": reqs}}},
                }
            )
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": tmpl}]
        spec["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu"}]

    def run(self) -> list[Obj]:
        self.pressure = self.focus == "preemption" or self.r.random() < 0.2
        self.namespaces()
        self.priority_classes()
        self.nodes()
        self.x_admission_objects()
        self.bound_pods()
        self.pdbs()
        self.x_pdbs()
        pending = self.r.choice([1, 1, 2, 3])
        for i in range(pending if self.n_pending is None else self.n_pending):
            self.pending_pod(i)
        self.x_limit_range_stored()
        self.r.shuffle(self.objs)
        return self.objs


def generate(
    seed: int, k8s: str = "v1.34.1", nodes: int | None = None, pending: int | None = None
) -> list[Obj]:
    """The scenario for `seed` under release `k8s` (deterministic; shuffled document order); `nodes` and
    `pending` fix the cluster size and the number of pending pods (the large corpus scenarios)."""
    return _Gen(seed, k8s, nodes, pending).run()
