"""What-if replays shared by every remedy: modified pods, simulated nodes, filter-only replays, patches.

A remedy is proven by replaying the pod's profile on a modified copy (`Snapshot.derive`): PreFilter over the
whole copy (spread and affinity counts see every node), then Filter on the nodes that matter. Scoring and
PostFilter are not run: a pod with one feasible node is bound, whatever the scores.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from kdiagnose.model.objects import Node, Pod, Taint
from kdiagnose.model.quantity import format_quantity
from kdiagnose.model.requests import finish_pod
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.scheduler.framework import Code, CycleState, Status
from kdiagnose.scheduler.runner import Framework

__all__ = [
    "Context",
    "Owner",
    "Replay",
    "describe_status",
    "owner_of",
    "simulated_node",
]

Obj = dict[str, Any]

# Added by admission (DefaultTolerationSeconds), not part of the workload's template.
_DEFAULT_TOLERATION_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
# Taints a node carries because of its state, not its pool: a fresh node of the pool has none of them.
TRANSIENT_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
TRANSIENT_TAINTS = frozenset(
    {
        "ToBeDeletedByClusterAutoscaler",
        "DeletionCandidateOfClusterAutoscaler",
        "karpenter.sh/disrupted",
        "karpenter.sh/disruption",
    }
)
_TEMPLATE_KINDS = ("Deployment", "StatefulSet", "Job", "DaemonSet", "ReplicaSet", "ReplicationController")


def is_transient_taint(t: Taint) -> bool:
    return t.key in TRANSIENT_TAINTS or t.key.startswith(TRANSIENT_TAINT_PREFIXES)


# ---------------------------------------------------------------------------------------------- owner


@dataclass(slots=True)
class Owner:
    """The workload whose pod template a patch targets (the pod itself when it has no controller)."""

    kind: str
    namespace: str
    name: str
    template_spec: Obj | None  # the workload's spec.template.spec when the input has the object

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def is_pod(self) -> bool:
        return self.kind == "Pod"


def _controller(obj: Obj | None) -> dict[str, Any] | None:
    for ref in ((obj or {}).get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def _template_of(kind: str, obj: Obj | None) -> Obj | None:
    if obj is None:
        return None
    spec = obj.get("spec") or {}
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    tpl = (spec.get("template") or {}).get("spec")
    return tpl if isinstance(tpl, dict) else None


def owner_of(snapshot: Snapshot, pod: Pod) -> Owner:
    """Deployment for a ReplicaSet's pod (ownerReferences, else the pod-template-hash naming convention),
    else the direct controller; the Pod itself when it has none."""
    ref = pod.controller_ref()
    ns = pod.namespace
    if ref is None:
        return Owner("Pod", ns, pod.name, None)
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    obj = snapshot.get(kind, name, ns) if kind else None
    if kind == "ReplicaSet":
        up = _controller(obj)
        if up is not None and up.get("kind") == "Deployment":
            dname = str(up.get("name") or "")
            return Owner(
                "Deployment",
                ns,
                dname,
                _template_of("Deployment", snapshot.get("Deployment", dname, ns)) or _template_of(kind, obj),
            )
        h = pod.labels.get("pod-template-hash")
        if obj is None and h and name.endswith("-" + h):
            dname = name[: -len(h) - 1]
            return Owner(
                "Deployment", ns, dname, _template_of("Deployment", snapshot.get("Deployment", dname, ns))
            )
    return Owner(kind, ns, name, _template_of(kind, obj) if kind in _TEMPLATE_KINDS else None)


# ---------------------------------------------------------------------------------------------- replay


@dataclass(slots=True)
class Replay:
    """The Filter verdicts of a what-if replay: `verdicts` for the nodes checked, `feasible` in order."""

    verdicts: dict[str, Status]
    feasible: list[str]
    prefilter: Status | None = None

    @property
    def schedules(self) -> bool:
        return bool(self.feasible)


def filter_replay(
    snapshot: Snapshot, scheduler: Scheduler, pod: Pod, nodes: Iterable[str] | None = None
) -> Replay:
    """PreFilter on the whole snapshot, Filter on `nodes` (default: all), with the pod's profile."""
    profile = next((p for p in scheduler.profiles if p.scheduler_name == pod.scheduler_name), None)
    if profile is None:
        return Replay({}, [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no profile",)))
    fw = Framework(snapshot, profile)
    state = CycleState()
    result, status, _ = fw.run_pre_filter(state, pod)
    names = list(nodes) if nodes is not None else [ni.name for ni in snapshot.node_infos]
    if not status.ok:
        return Replay(dict.fromkeys(names, status), [], status)
    verdicts: dict[str, Status] = {}
    feasible: list[str] = []
    allowed = result.node_names
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't satisfy PreFilter's node set",))
    for name in names:
        ni = snapshot.node_info_by_name.get(name)
        if ni is None:
            continue
        if allowed is not None and name not in allowed:
            verdicts[name] = absent
            continue
        s = fw.run_filters_with_nominated(state, pod, ni)
        verdicts[name] = s
        if s.ok:
            feasible.append(name)
    return Replay(verdicts, feasible)


def with_bound(snapshot: Snapshot, binds: Sequence[tuple[Pod, str]]) -> Snapshot:
    """A copy of `snapshot` with pending pods bound to (existing or extra) nodes; the original is untouched."""
    out = snapshot.derive(remove_pods=[p for p, _ in binds])
    cloned: dict[str, NodeInfo] = {}
    for pod, node_name in binds:
        ni = cloned.get(node_name)
        if ni is None:
            base = out.node_info_by_name.get(node_name)
            if base is None:
                continue
            ni = base.clone()
            cloned[node_name] = ni
        bound = copy.copy(pod)
        bound.node_name = node_name
        ni.add_pod(bound)
        out.pods.append(bound)
    if cloned:
        out.node_infos = [cloned.get(ni.name, ni) for ni in out.node_infos]
        out.node_info_by_name = {ni.name: ni for ni in out.node_infos}
    return out


# ---------------------------------------------------------------------------------------------- nodes


def simulated_node(
    name: str, labels: dict[str, str], taints: Iterable[Taint], allocatable: dict[str, int]
) -> Node:
    """A fresh, Ready, schedulable node with a pool's labels (hostname adjusted), its pool taints (none of
    the state taints a real member may carry) and its allocatable, named `name`."""
    node = Node({"metadata": {"name": name}})
    node.labels = dict(labels)
    node.labels["kubernetes.io/hostname"] = name
    node.taints = [t for t in taints if not is_transient_taint(t)]
    node.allocatable = dict(allocatable)
    node.conditions = [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]
    node.annotations = {"kdiagnose/simulated": "true"}
    return node


def daemon_pods_for(rep: NodeInfo | None, node_name: str) -> list[Pod]:
    """Copies of the DaemonSet pods on `rep`, bound to the simulated node (they land on every pool node)."""
    out: list[Pod] = []
    if rep is None:
        return out
    for p in rep.pods:
        ref = p.controller_ref()
        if ref is None or ref.get("kind") != "DaemonSet":
            continue
        c = copy.copy(p)
        c.node_name = node_name
        c.name = f"{p.name}-{node_name}"
        out.append(c)
    return out


# ---------------------------------------------------------------------------------------------- context


class Context:
    """One pending pod's remedy session: the snapshot, its scheduler, the diagnosis, the owner."""

    def __init__(self, snapshot: Snapshot, scheduler: Scheduler, diagnosis: Diagnosis) -> None:
        self.snapshot = snapshot
        self.scheduler = scheduler
        self.d = diagnosis
        self.pod = diagnosis.pod
        self.owner = owner_of(snapshot, self.pod)
        self.replays = 0

    # ---- replays

    def replay(
        self, snapshot: Snapshot | None = None, pod: Pod | None = None, nodes: Iterable[str] | None = None
    ) -> Replay:
        self.replays += 1
        return filter_replay(snapshot or self.snapshot, self.scheduler, pod or self.pod, nodes)

    def replay_modified(self, pod: Pod, nodes: Iterable[str] | None = None) -> Replay:
        """Replay a modified copy of the pending pod in place of the original."""
        return self.replay(self.snapshot.derive(replace_pod=(self.pod, pod)), pod, nodes)

    def modified_pod(self, mutate: Callable[[Obj], None]) -> Pod | None:
        """The pending pod rebuilt from a deep copy of its (admitted) object after `mutate(obj)`."""
        if self.pod.raw is None:
            return None
        obj = copy.deepcopy(self.pod.raw)
        obj.setdefault("spec", {})
        mutate(obj)
        pod = Pod(obj, keep_raw=True)
        finish_pod(pod, self.snapshot.dialect)
        return pod

    # ---- verdicts of the original diagnosis

    def nodes_failing(self, *plugins: str) -> list[str]:
        return [n for n, s in self.d.verdicts.items() if not s.ok and s.plugin in plugins]

    # ---- patches

    def base_spec(self) -> Obj:
        """The pod template spec the patch edits: the workload's when the input has it, else the pod's
        spec without what admission added."""
        if self.owner.template_spec is not None:
            return self.owner.template_spec
        spec = dict(((self.pod.raw or {}).get("spec")) or {})
        tols = [
            t
            for t in spec.get("tolerations") or []
            if not (
                isinstance(t, dict)
                and t.get("key") in _DEFAULT_TOLERATION_KEYS
                and t.get("tolerationSeconds") == 300
            )
        ]
        spec["tolerations"] = tols
        return spec

    def patch(self, spec_fragment: Obj) -> str:
        """A strategic-merge patch for the owner's pod template (the pod's spec for a bare pod)."""
        body: Obj = (
            {"spec": spec_fragment} if self.owner.is_pod else {"spec": {"template": {"spec": spec_fragment}}}
        )
        head = f"# strategic merge patch for {self.owner}\n"
        return head + yaml.safe_dump(body, sort_keys=False, default_flow_style=False)

    def apply_hint(self, in_place: bool = False) -> str:
        """How to apply and roll back; `in_place` for fields a pod accepts live (added tolerations)."""
        o = self.owner
        if o.is_pod:
            if in_place:
                return (
                    f"kubectl patch pod {o.name} -n {o.namespace} --type strategic --patch-file patch.yaml "
                    "(tolerations can be added to an existing pod); also add it to the manifest that creates the pod"
                )
            return (
                "the pod has no controller and these fields cannot change on an existing pod: apply the change "
                "to the manifest (or tool) that creates it; keep the old manifest to roll back"
            )
        kind = o.kind.lower()
        text = f"kubectl patch {kind} {o.name} -n {o.namespace} --type strategic --patch-file patch.yaml"
        if o.kind in ("Deployment", "DaemonSet", "StatefulSet"):
            return f"{text}; roll back with kubectl rollout undo {kind}/{o.name} -n {o.namespace}"
        if o.kind in ("Job", "CronJob"):
            return f"a Job's pod template is immutable: re-create the {o.kind} with the change ({text} for a CronJob); keep the old manifest to roll back"
        return f"{text}; re-apply the previous template to roll back"

    def verify_hint(self, nodes: Sequence[str]) -> str:
        where = ", ".join(nodes[:3]) + (f" (+{len(nodes) - 3} more)" if len(nodes) > 3 else "")
        sel = ",".join(f"{k}={v}" for k, v in sorted(self.pod.labels.items()) if k != "pod-template-hash")
        pods = (
            f"kubectl get pods -n {self.pod.namespace} -l {sel} -o wide"
            if sel
            else f"kubectl get pod -n {self.pod.namespace} {self.pod.name} -o wide"
        )
        return f"{pods}: the new pod should be Running on {where}"


# ---------------------------------------------------------------------------------------------- text


def _fmt_value(key: str, v: Any, resource: str | None) -> str:
    if resource and key in ("requested", "free", "allocatable") and isinstance(v, int):
        return format_quantity(resource, v)
    if isinstance(v, list):
        return "[" + ", ".join(str(x) for x in v) + "]"
    return str(v)


def describe_status(s: Status) -> str:
    """`reason (detail k=v, ...)` for notes: the scheduler's reason plus its concrete cause."""
    parts = []
    for det in s.details:
        res = det.get("resource") if isinstance(det.get("resource"), str) else None
        kv = ", ".join(f"{k}={_fmt_value(k, v, res)}" for k, v in det.items() if k != "resource")
        parts.append(f"{res}: {kv}" if res else kv)
    text = ", ".join(s.reasons) or s.code.label
    return f"{text} ({'; '.join(parts)})" if parts else text
