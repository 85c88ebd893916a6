"""Safety classes: does the workload still *work* after a change that a what-if replay proved *schedules* it?

Every candidate change is classified before it is ranked (README "How remedies are ranked"):
- never a remedy: it changes the node's identity under the workload (kubernetes.io/arch, kubernetes.io/os,
  node.kubernetes.io/windows-build, the OS/arch the pod's images run on), or tolerates a taint that marks
  dedicated hardware or a node's special state for a pod that does not request that hardware (GPUs and other
  extended resources, `*/dedicated`, the control plane, node-lifecycle taints, Karpenter disruption). Such a
  change is not a Remedy: it goes to the pod's notes ("Ruled out") with the reason (`ruled_out`).
- risky (results.RISKY): the workload runs where or how it was not meant to: a relaxed pool or instance-type
  selector, a tolerated workload-dedication taint, spot capacity, anti-affinity or spread made a preference,
  a workload that requests no accelerator placed on accelerator nodes by any route, a large right-size.
  The remedy's `risk` says which, in one specific sentence.
- safe (results.SAFE): everything else the remedies propose (more nodes of a matching pool, uncordon, a small
  right-size, a stale nomination or a held host port removed).
The checks read only the snapshot: labels, taints, allocatable and the pod's own requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kdiagnose.model.pools import CONTROL_PLANE_LABELS, POOL_LABELS
from kdiagnose.results import RISKY, SAFE

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node, Pod, Taint
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.scheduler.diagnosis import Diagnosis

__all__ = [
    "ARCH_LABELS",
    "IDENTITY_LABELS",
    "NEVER",
    "OS_LABELS",
    "POOL_SELECTOR_LABELS",
    "SMALL_CUT",
    "SPOT_LABELS",
    "TaintClass",
    "accelerators_of",
    "classify_label",
    "classify_taint",
    "implied_platform",
    "platform_of",
    "platform_warning",
    "requests_accelerator",
    "ruled_out",
]

NEVER = "never"

ARCH_LABELS = ("kubernetes.io/arch", "beta.kubernetes.io/arch")
OS_LABELS = ("kubernetes.io/os", "beta.kubernetes.io/os")
# The node's identity: a binary built for amd64/linux does not run elsewhere, whatever the scheduler allows.
IDENTITY_LABELS = frozenset({*ARCH_LABELS, *OS_LABELS, "node.kubernetes.io/windows-build"})
# Labels that pin a workload to a pool or a machine type: relaxing them moves it to other hardware.
POOL_SELECTOR_LABELS = frozenset(
    {
        *POOL_LABELS,
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/instance-category",
        "karpenter.k8s.aws/instance-generation",
        "karpenter.k8s.aws/instance-size",
        "cloud.google.com/machine-family",
        "cloud.google.com/gke-accelerator",
        "node-pool",
        "nodepool",
        "node.kubernetes.io/pool",
    }
)
# Labels and taints that mark capacity the provider may reclaim at short notice.
SPOT_LABELS = frozenset(
    {
        "karpenter.sh/capacity-type",
        "eks.amazonaws.com/capacityType",
        "cloud.google.com/gke-spot",
        "cloud.google.com/gke-preemptible",
        "kubernetes.azure.com/scalesetpriority",
        "node.kubernetes.io/lifecycle",
    }
)
# A right-size cutting more than this fraction of a request is risky (the workload asked for much more).
SMALL_CUT = 0.20

# Taint keys naming accelerators (the device plugins' and clouds' conventions).
_ACCELERATOR_TAINTS = frozenset(
    {
        "nvidia.com/gpu",
        "amd.com/gpu",
        "gpu",
        "sku",  # AKS GPU pools: sku=gpu:NoSchedule
        "google.com/tpu",
        "aws.amazon.com/neuron",
        "habana.ai/gaudi",
        "intel.com/gpu",
    }
)
_ACCELERATOR_WORDS = ("gpu", "tpu", "neuron", "fpga", "gaudi", "accelerator")
# Node labels that say "this node has accelerators" even when allocatable is not in the input.
_ACCELERATOR_LABELS = (
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.count",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "karpenter.k8s.aws/instance-gpu-count",
)
_LIFECYCLE_WORDS = {
    "node.kubernetes.io/not-ready": "the node is not Ready",
    "node.kubernetes.io/unreachable": "the node controller cannot reach the node",
    "node.kubernetes.io/disk-pressure": "the node is short of disk",
    "node.kubernetes.io/memory-pressure": "the node is short of memory",
    "node.kubernetes.io/pid-pressure": "the node is short of process ids",
    "node.kubernetes.io/network-unavailable": "the node's network is not configured",
    "node.kubernetes.io/unschedulable": "the node is cordoned (uncordon it instead, if that is safe)",
    "node.kubernetes.io/out-of-service": "the node was declared out of service",
    "node.cloudprovider.kubernetes.io/uninitialized": "the cloud provider has not initialized the node yet",
    "node.cloudprovider.kubernetes.io/shutdown": "the node's machine is shut down",
    "ToBeDeletedByClusterAutoscaler": "cluster-autoscaler is deleting the node",
    "DeletionCandidateOfClusterAutoscaler": "cluster-autoscaler is about to remove the node",
    "karpenter.sh/disrupted": "Karpenter is disrupting (draining and deleting) the node",
    "karpenter.sh/disruption": "Karpenter is disrupting (draining and deleting) the node",
    "karpenter.sh/unregistered": "the node has not registered with Karpenter yet",
    # Termination handlers and reboot daemons taint a node before they drain it.
    "cloud.google.com/impending-node-termination": "GKE is about to terminate the node",
    "aws-node-termination-handler/spot-itn": "AWS reclaims this spot instance within minutes",
    "aws-node-termination-handler/scheduled-maintenance": "an AWS maintenance event stops or retires the instance",
    "aws-node-termination-handler/asg-lifecycle-termination": "the Auto Scaling group is terminating the instance",
    "aws-node-termination-handler/rebalance-recommendation": "AWS recommends replacing this spot instance",
    "weave.works/kured-node-reboot": "kured is draining the node to reboot it",
}
# A taint whose key or value says the node is about to go (maintenance=scheduled:NoExecute, drain=true):
# tolerating it puts the pod on a node that is being emptied.
_GOING_WORDS = ("maintenance", "drain", "decommission", "terminat", "reboot", "shutdown", "retir", "evacuat")


@dataclass(frozen=True, slots=True)
class TaintClass:
    """`safety`: NEVER, RISKY or SAFE; `why`: the reason (NEVER) or the risk sentence (RISKY)."""

    safety: str
    why: str


def accelerators_of(node: Node) -> list[str]:
    """Extended resources the node offers (vendor-domain names such as nvidia.com/gpu), or the accelerator
    labels it carries: what makes it special hardware."""
    found = sorted(
        r
        for r, v in node.allocatable.items()
        if v > 0 and "/" in r and not r.startswith(("kubernetes.io/", "requests."))
    )
    if not found:
        found = [k for k in _ACCELERATOR_LABELS if node.labels.get(k) not in (None, "", "false", "0")]
    return found


def requests_accelerator(pod: Pod) -> bool:
    """The pod asks for special hardware: an extended resource request, or DRA claims (devices)."""
    extended = any(v > 0 and "/" in r and not r.startswith("kubernetes.io/") for r, v in pod.requests.items())
    return extended or bool(pod.resource_claims)


def _is_accelerator_taint(t: Taint, node: Node | None) -> bool:
    if t.key in _ACCELERATOR_TAINTS and (t.key != "sku" or t.value.lower() == "gpu"):
        return True
    if node is not None and t.key in node.allocatable:
        return True  # a taint named after a resource the node offers (the device plugins' convention)
    text = f"{t.key}={t.value}".lower()
    return any(w in text for w in _ACCELERATOR_WORDS)


def classify_taint(t: Taint, pod: Pod, node: Node | None = None) -> TaintClass:
    """Whether tolerating `t` is never a remedy, risky (with why) or safe for `pod`."""
    word = _LIFECYCLE_WORDS.get(t.key)
    if word is not None or t.key.startswith(("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")):
        return TaintClass(
            NEVER,
            f"it marks the node's state ({word or 'a node-lifecycle condition'}): tolerating it hides that",
        )
    if t.key.startswith("karpenter.sh/"):
        return TaintClass(NEVER, "Karpenter set it to take the node out of service: tolerating it hides that")
    if t.key in CONTROL_PLANE_LABELS:
        return TaintClass(NEVER, "it keeps workloads off the control plane")
    if any(w in f"{t.key}={t.value}".lower() for w in _GOING_WORDS):
        return TaintClass(
            NEVER,
            "it marks the node as going out of service (maintenance, drain or termination): a pod that "
            "tolerates it lands on a node that is being emptied",
        )
    if _is_accelerator_taint(t, node):
        if requests_accelerator(pod):
            wants = sorted(
                r
                for r, v in pod.requests.items()
                if v > 0 and "/" in r and not r.startswith("kubernetes.io/")
            )
            return TaintClass(
                SAFE,
                f"the taint {t.key} keeps pods that do not use the node's accelerators off it; this pod "
                f"requests {', '.join(wants) if wants else 'devices (DRA claims)'}, which is what it admits",
            )
        return TaintClass(
            NEVER,
            "it reserves accelerator nodes for pods that request the hardware, and this pod requests none",
        )
    if t.key.endswith("/dedicated"):
        return TaintClass(NEVER, "it dedicates the nodes to another workload or team")
    if t.key == "CriticalAddonsOnly":
        # AKS taints its system node pools so (and GKE/EKS add-ons tolerate it): application pods are
        # kept off the nodes that run CoreDNS, metrics-server and the CNI's pods.
        if pod.priority_class_name in ("system-cluster-critical", "system-node-critical"):
            return TaintClass(
                RISKY,
                "the taint CriticalAddonsOnly keeps the system node pool for critical add-ons; this pod is "
                f"{pod.priority_class_name}, which is what it admits",
            )
        return TaintClass(
            NEVER,
            "it keeps application pods off the system node pool, which runs cluster DNS (CoreDNS), "
            "metrics-server and the network plugin: an application there competes with them for CPU and memory",
        )
    if t.key in SPOT_LABELS or t.value.lower() in ("spot", "preemptible"):
        return TaintClass(
            RISKY,
            "moves the workload to spot capacity: the provider can reclaim those nodes at a few minutes' "
            "notice, so plan for replicas evicted together",
        )
    return TaintClass(
        RISKY,
        f"the taint {t.key} reserves these nodes for other workloads: tolerating it lets the pod run beside "
        "them, and the owner of the taint may object",
    )


def classify_label(key: str) -> TaintClass:
    """Whether relaxing a node selector / required node affinity on `key` is never, risky or safe."""
    if key in IDENTITY_LABELS:
        return TaintClass(
            NEVER,
            f"{key} is the node's identity: the workload's binaries are built for it, other nodes cannot run them",
        )
    if key in SPOT_LABELS:
        return TaintClass(
            RISKY,
            f"relaxing {key} moves the workload to other capacity (spot nodes can be reclaimed at a few minutes' "
            "notice; on-demand costs more)",
        )
    if key in POOL_SELECTOR_LABELS:
        return TaintClass(
            RISKY,
            f"relaxing {key} moves the workload off the pool or machine type it was pinned to: other "
            "instance types, cost, and hardware it may not have been tested on",
        )
    return TaintClass(
        RISKY,
        "changes where the workload is allowed to run: it may land on nodes the rule was written to avoid",
    )


def platform_of(node: Node) -> tuple[str, str]:
    """(os, arch) from the well-known labels ("" when the node does not say)."""
    labels = node.labels
    os_ = next((labels[k] for k in OS_LABELS if labels.get(k)), "")
    arch = next((labels[k] for k in ARCH_LABELS if labels.get(k)), "")
    return os_, arch


_IMAGES_KEY = "remedies/platforms-by-images"


def _platforms_by_images(snapshot: Snapshot) -> dict[tuple[str, ...], set[tuple[str, str]]]:
    cached: dict[tuple[str, ...], set[tuple[str, str]]] | None = snapshot.cache.get(_IMAGES_KEY)
    if cached is None:
        cached = {}
        # images() reads the containers only, and the replicas of a spec share their container lists
        # (load/snapshot.py _Compacts): each platform's distinct specs first, then each spec's image set
        # once, not for 150,000 pods. The lists live as long as the pods: their ids are not reused here.
        specs: dict[tuple[str, str], dict[tuple[int, int], Pod]] = {}
        for ni in snapshot.node_infos:
            plat = platform_of(ni.node)
            if plat != ("", ""):
                seen = specs.get(plat)
                if seen is None:
                    seen = specs[plat] = {}
                seen.update({(id(p.containers), id(p.init_containers)): p for p in ni.pods})
        images: dict[tuple[int, int], tuple[str, ...]] = {}
        for plat, seen in specs.items():
            for key, p in seen.items():
                imgs = images.get(key)
                if imgs is None:
                    imgs = images[key] = tuple(sorted(set(p.images())))
                if imgs:
                    cached.setdefault(imgs, set()).add(plat)
        snapshot.cache[_IMAGES_KEY] = cached
    return cached


def _required_values(pod: Pod, keys: tuple[str, ...]) -> set[str] | None:
    """The values the pod requires for one of `keys` (nodeSelector, or `In` in every required term)."""
    for k in keys:
        if k in pod.node_selector:
            return {pod.node_selector[k]}
    req = (pod.affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = req.get("nodeSelectorTerms") if isinstance(req, dict) else None
    if not isinstance(terms, list) or not terms:
        return None
    values: set[str] = set()
    for term in terms:
        found = [
            e
            for e in (term or {}).get("matchExpressions") or []
            if isinstance(e, dict) and e.get("key") in keys and e.get("operator") == "In"
        ]
        if not found:
            return None  # one term without it allows any value
        values.update(str(v) for v in found[0].get("values") or [])
    return values or None


def implied_platform(snapshot: Snapshot, pod: Pod) -> tuple[dict[str, set[str]], str]:
    """({"os": {...}, "arch": {...}}, where that comes from): what the pod's workload can run on.

    First what the pod requires (its nodeSelector / required node affinity on the OS and arch labels), then
    where running pods with the same image set run (their nodes' labels); an image named for Windows
    (nanoserver, servercore) implies windows. Unknown parts are absent from the dict."""
    out: dict[str, set[str]] = {}
    arch = _required_values(pod, ARCH_LABELS)
    os_ = _required_values(pod, OS_LABELS)
    source = "the pod's own requirements"
    if arch:
        out["arch"] = arch
    if os_:
        out["os"] = os_
    if "arch" not in out or "os" not in out:
        imgs = tuple(sorted(set(pod.images())))
        seen = _platforms_by_images(snapshot).get(imgs) if imgs else None
        if seen:
            if "arch" not in out and all(a for _, a in seen):
                out["arch"] = {a for _, a in seen}
                source = "where pods with the same images run"
            if "os" not in out and all(o for o, _ in seen):
                out["os"] = {o for o, _ in seen}
                source = "where pods with the same images run"
    if "os" not in out and any(
        w in img.lower() for img in pod.images() for w in ("nanoserver", "servercore")
    ):
        out["os"] = {"windows"}
        source = "its Windows images"
    return out, source


def fits_platform(node: Node, platform: dict[str, set[str]]) -> bool:
    os_, arch = platform_of(node)
    if arch and "arch" in platform and arch not in platform["arch"]:
        return False
    return not (os_ and "os" in platform and os_ not in platform["os"])


def ruled_out(kind: str, what: str, why: str) -> str:
    """The "Ruled out" line of a change that is never a remedy."""
    return f"{kind}: never a remedy: {what}: {why}"


def platform_warning(snapshot: Snapshot, d: Diagnosis) -> str:
    """kube-scheduler filters on labels and taints only: a pod without an OS/arch selector binds to a
    Windows or arm64 node its images cannot run on, and then fails to start. Said when a node it would be
    bound to (any of the nodes tied at the best score) is of another platform than the pod's workload
    runs on (its requirements, else where pods with the same images run)."""
    platform, source = implied_platform(snapshot, d.pod)
    if not platform:
        return ""
    by_name = snapshot.node_info_by_name
    wrong = [
        x
        for x in d.top_nodes or [d.chosen or ""]
        if x in by_name and not fits_platform(by_name[x].node, platform)
    ]
    if not wrong:
        return ""
    os_, arch = platform_of(by_name[wrong[0]].node)
    want = "/".join("|".join(sorted(platform[k])) if k in platform else "?" for k in ("os", "arch"))
    pins = [
        f"{label}={next(iter(platform[k]))}"
        for k, label, have in (("os", "kubernetes.io/os", os_), ("arch", "kubernetes.io/arch", arch))
        if k in platform and len(platform[k]) == 1 and have and have not in platform[k]
    ]
    where = wrong[0] if len(wrong) == 1 else f"{wrong[0]} (or {len(wrong) - 1} other tied node(s))"
    # The pod's own OS/arch requirements never lead here (the scheduler honours them): the evidence is
    # where its images run, which a multi-arch image does not bind, hence "unless".
    evidence = (
        "its images are Windows images"
        if "Windows" in source
        else f"pods with the same images run only on {want} nodes"
    )
    node_platform = f"{os_ or '?'}/{arch or '?'}"
    return (
        f"platform: kube-scheduler would bind it to {where}, a {node_platform} node, but {evidence}: unless "
        f"they are built for {node_platform}, its containers will fail to start there"
        + (f"; pin it with nodeSelector {', '.join(pins)}" if pins else "")
    )
