"""Karpenter (karpenter.sh/v1): NodePools, NodeClaims, and how Karpenter judges a pending pod per NodePool.

Mirrors kubernetes-sigs/karpenter: pkg/apis/v1/nodepool.go (spec.template.{metadata.labels, spec.requirements,
taints, startupTaints}, spec.limits, spec.disruption.budgets, spec.weight; status.resources),
pkg/apis/v1/nodeclaim_status.go (conditions Launched, Registered, Initialized, Drifted, ...) and the
provisioner's per-NodePool checks in pkg/controllers/provisioning/scheduling/scheduler.go and nodeclaim.go,
in their order: limits first ("all available instance types exceed limits for nodepool"), then taints
(pkg/scheduling/taints.go: every template taint must be tolerated, startupTaints are not checked), then
requirements (pkg/scheduling/requirements.go Compatible: a custom label the pod requires must be defined by
the NodePool, a well-known one may be left to the instance types; defined keys must intersect).
Messages use the v1.0-v1.5 wording (`incompatible with nodepool "P", ...`, `did not tolerate k=v:E`,
`incompatible requirements, key K, <pod> not in <nodepool>`); later releases keep the phrases and move the
names into structured values.

Karpenter also filters instance types by resources and offerings: those come from the cloud provider and
are not in a snapshot, so a NodePool that passes these checks "admits the pod as far as its requirements,
taints and limits go".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kdiagnose.model.objects import Taint
from kdiagnose.model.quantity import milli_value
from kdiagnose.model.quantity import value as quantity_value

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod

__all__ = [
    "NODEPOOL_LABEL",
    "WELL_KNOWN_LABELS",
    "Judgement",
    "KNodeClaim",
    "KNodePool",
    "Requirement",
    "judge",
    "parse_nodeclaim",
    "parse_nodepool",
    "pod_requirement_terms",
]

Obj = dict[str, Any]
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# pkg/apis/v1/labels.go WellKnownLabels; the providers add their own (karpenter.k8s.aws/instance-*, ...).
WELL_KNOWN_LABELS = frozenset(
    {
        NODEPOOL_LABEL,
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "karpenter.sh/capacity-type",
        "node.kubernetes.io/windows-build",
    }
)
_PROVIDER_LABEL_PREFIXES = ("karpenter.k8s.aws/", "karpenter.azure.com/", "karpenter.k8s.gcp/")


def _well_known(key: str) -> bool:
    return key in WELL_KNOWN_LABELS or key.startswith(_PROVIDER_LABEL_PREFIXES)


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


@dataclass(frozen=True, slots=True)
class Requirement:
    """A node selector requirement (pkg/scheduling/requirement.go), values kept sorted."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        # Requirement.String(): "key In [a b]" (Go's %s of a []string), "key Exists".
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        vals = list(self.values)
        if len(vals) > 5:
            vals = [*vals[:5], f"and {len(vals) - 5} others"]
        return f"{self.key} {self.operator} [{' '.join(vals)}]"

    def admits(self, v: str | None) -> bool:
        op = self.operator
        if op == "In":
            return v is not None and v in self.values
        if op == "NotIn":
            return v is None or v not in self.values
        if op == "Exists":
            return v is not None
        if op == "DoesNotExist":
            return v is None
        if op in ("Gt", "Lt") and v is not None and self.values:
            try:
                a, b = int(v), int(self.values[0])
            except ValueError:
                return False
            return a > b if op == "Gt" else a < b
        return False


def _intersects(a: Requirement, b: Requirement) -> bool:
    """Requirement.HasIntersection for the operator pairs NodePools and pods use."""
    if a.operator == "DoesNotExist" or b.operator == "DoesNotExist":
        return a.operator == b.operator == "DoesNotExist"
    if a.operator == "In" and b.operator == "In":
        return bool(set(a.values) & set(b.values))
    if a.operator == "In":
        return any(b.admits(v) for v in a.values)
    if b.operator == "In":
        return any(a.admits(v) for v in b.values)
    return True  # NotIn/Exists/Gt/Lt against each other: an unbounded set remains


def _requirement(raw: Any) -> Requirement | None:
    r = _d(raw)
    key, op = str(r.get("key") or ""), str(r.get("operator") or "")
    if not key or not op:
        return None
    return Requirement(key, op, tuple(sorted(str(v) for v in _l(r.get("values")))))


def _taints(raw: Any) -> list[Taint]:
    return [
        Taint(str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
        for t in map(_d, _l(raw))
        if t.get("key")
    ]


def _resources(raw: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, v in _d(raw).items():
        try:
            out[str(k)] = milli_value(v) if k == "cpu" else quantity_value(v)
        except (ValueError, TypeError, ArithmeticError):
            continue
    return out


@dataclass(slots=True)
class KNodePool:
    """A karpenter.sh/v1 NodePool; cpu in millicores, other resources in their base units."""

    name: str
    weight: int = 0
    labels: dict[str, str] = field(default_factory=dict)
    requirements: list[Requirement] = field(default_factory=list)
    taints: list[Taint] = field(default_factory=list)
    startup_taints: list[Taint] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)
    limits_raw: dict[str, str] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)
    budgets: list[Obj] = field(default_factory=list)
    ready: str = ""  # the Ready condition's status ("" when not reported)
    ready_message: str = ""

    def all_requirements(self) -> dict[str, list[Requirement]]:
        """Requirements by key, the template labels and karpenter.sh/nodepool included (a NodeClaim
        inherits them as In [value] requirements)."""
        out: dict[str, list[Requirement]] = {}
        for r in self.requirements:
            out.setdefault(r.key, []).append(r)
        for k, v in self.labels.items():
            out.setdefault(k, []).append(Requirement(k, "In", (v,)))
        out.setdefault(NODEPOOL_LABEL, []).append(Requirement(NODEPOOL_LABEL, "In", (self.name,)))
        return out

    def remaining(self) -> dict[str, int]:
        """spec.limits minus status.resources, per limited resource."""
        return {k: lim - self.resources.get(k, 0) for k, lim in self.limits.items()}

    def budget_text(self) -> str:
        if not self.budgets:
            return "default disruption budget (nodes: 10%)"
        parts = []
        for b in self.budgets:
            text = f"nodes: {b.get('nodes', '10%')}"
            if b.get("reasons"):
                text += f" for {','.join(str(r) for r in _l(b.get('reasons')))}"
            if b.get("schedule"):
                text += f" during {b.get('schedule')} for {b.get('duration', '?')}"
            parts.append(text)
        return "; ".join(parts)


def parse_nodepool(obj: Obj) -> KNodePool:
    meta, spec, status = _d(obj.get("metadata")), _d(obj.get("spec")), _d(obj.get("status"))
    tpl = _d(spec.get("template"))
    tspec = _d(tpl.get("spec"))
    weight = spec.get("weight")
    ready = next(
        (c for c in map(_d, _l(status.get("conditions"))) if c.get("type") == "Ready"),
        {},
    )
    return KNodePool(
        name=str(meta.get("name") or ""),
        weight=weight if isinstance(weight, int) and not isinstance(weight, bool) else 0,
        labels={str(k): str(v) for k, v in _d(_d(tpl.get("metadata")).get("labels")).items()},
        requirements=[r for r in map(_requirement, _l(tspec.get("requirements"))) if r is not None],
        taints=_taints(tspec.get("taints")),
        startup_taints=_taints(tspec.get("startupTaints")),
        limits=_resources(spec.get("limits")),
        limits_raw={str(k): str(v) for k, v in _d(spec.get("limits")).items()},
        resources=_resources(status.get("resources")),
        budgets=[_d(b) for b in _l(_d(spec.get("disruption")).get("budgets"))],
        ready=str(ready.get("status") or ""),
        ready_message=str(ready.get("message") or ""),
    )


@dataclass(slots=True)
class KNodeClaim:
    name: str
    nodepool: str
    node_name: str = ""
    conditions: dict[str, str] = field(default_factory=dict)  # type -> status
    messages: dict[str, str] = field(default_factory=dict)  # type -> reason/message
    deleting: bool = False
    created: str = ""

    @property
    def state(self) -> str:
        """launching | registering | initializing | ready | disrupted (...)."""
        disrupted = [
            t for t in ("Drifted", "Disrupting", "InstanceTerminating") if self.conditions.get(t) == "True"
        ]
        if self.deleting or disrupted:
            return "disrupted" + (f" ({', '.join(disrupted)})" if disrupted else " (being deleted)")
        if self.conditions.get("Launched") != "True":
            return "launching"
        if self.conditions.get("Registered") != "True":
            return "registering"
        if self.conditions.get("Initialized") != "True":
            return "initializing"
        return "ready"

    def describe(self) -> str:
        conds = ", ".join(
            f"{t}={self.conditions[t]}"
            for t in ("Launched", "Registered", "Initialized")
            if t in self.conditions
        )
        why = next(
            (self.messages[t] for t in ("Launched", "Registered", "Initialized") if self.messages.get(t)),
            "",
        )
        node = f", node {self.node_name}" if self.node_name else ""
        return (
            f"nodeclaim {self.name} (NodePool {self.nodepool or '?'}): {self.state}"
            + (f" [{conds}{node}]" if conds or node else "")
            + (f": {why}" if why and self.state != "ready" else "")
        )


def parse_nodeclaim(obj: Obj) -> KNodeClaim:
    meta, status = _d(obj.get("metadata")), _d(obj.get("status"))
    conds: dict[str, str] = {}
    msgs: dict[str, str] = {}
    for c in map(_d, _l(status.get("conditions"))):
        t = str(c.get("type") or "")
        if t:
            conds[t] = str(c.get("status") or "")
            m = " ".join(x for x in (str(c.get("reason") or ""), str(c.get("message") or "")) if x)
            if m and conds[t] != "True":
                msgs[t] = m
    return KNodeClaim(
        name=str(meta.get("name") or ""),
        nodepool=str(_d(meta.get("labels")).get(NODEPOOL_LABEL) or ""),
        node_name=str(status.get("nodeName") or ""),
        conditions=conds,
        messages=msgs,
        deleting=bool(meta.get("deletionTimestamp")),
        created=str(meta.get("creationTimestamp") or ""),
    )


# ---------------------------------------------------------------------------------------------- judging


def pod_requirement_terms(pod: Pod) -> list[list[Requirement]]:
    """The pod's node requirements as Karpenter builds them (pkg/scheduling/requirements.go
    NewPodRequirements): nodeSelector as In [value], plus each required node affinity term (OR'ed; Karpenter
    tries them in order, relaxing to the next)."""
    base = [Requirement(k, "In", (v,)) for k, v in sorted(pod.node_selector.items())]
    na = _d(pod.affinity.get("nodeAffinity"))
    terms = _l(_d(na.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    out: list[list[Requirement]] = []
    for term in map(_d, terms):
        reqs = [r for r in map(_requirement, _l(term.get("matchExpressions"))) if r is not None]
        out.append(base + reqs)
    return out or [base]


@dataclass(slots=True)
class Judgement:
    """Karpenter's verdict for one pod on one NodePool."""

    nodepool: str
    kind: str  # "" (admits) | "limit" | "taint" | "requirement"
    message: str = ""  # Karpenter's own wording
    resource: str = ""  # for "limit": the exhausted resource
    limit: int = 0
    usage: int = 0
    needed: int = 0  # the smallest limit that admits one more node of the size used

    @property
    def admits(self) -> bool:
        return not self.kind


def _compatible(np_reqs: dict[str, list[Requirement]], pod_reqs: list[Requirement]) -> str:
    for r in pod_reqs:
        if _well_known(r.key) or r.key in np_reqs or r.operator in ("NotIn", "DoesNotExist"):
            continue
        return f'label "{r.key}" does not have known values'
    for r in pod_reqs:
        for existing in np_reqs.get(r.key, []):
            if not _intersects(existing, r):
                if r.operator in ("NotIn", "DoesNotExist") and existing.operator in ("NotIn", "DoesNotExist"):
                    continue
                return f"key {r.key}, {r} not in {existing}"
    return ""


def judge(pool: KNodePool, pod: Pod, node_size: dict[str, int] | None = None) -> Judgement:
    """Whether Karpenter could launch a node of `pool` for `pod`, and if not the first reason it would give.

    `node_size`: the capacity of a node this NodePool would launch for the pod (an existing member's, when
    known), used for the limit check; else the pod's own requests (a lower bound: any node holding the pod
    is at least that big)."""
    remaining = pool.remaining()
    for res in sorted(remaining):
        left = remaining[res]
        # Certain only when the pod alone exceeds what is left: smaller instance types may still fit.
        need = 1 if res == "nodes" else pod.requests.get(res, 0)
        if (res == "nodes" and left <= 0) or (need > 0 and need > left):
            size = max(need, (node_size or {}).get(res, 0)) if res != "nodes" else 1
            return Judgement(
                pool.name,
                "limit",
                f'all available instance types exceed limits for nodepool "{pool.name}"',
                resource=res,
                limit=pool.limits[res],
                usage=pool.resources.get(res, 0),
                needed=pool.resources.get(res, 0) + size,
            )
    untolerated = [t for t in pool.taints if not any(tol.tolerates(t) for tol in pod.tolerations)]
    if untolerated:
        text = "; ".join(f"did not tolerate {t}" for t in untolerated)
        return Judgement(pool.name, "taint", text)
    np_reqs = pool.all_requirements()
    first = ""
    for term in pod_requirement_terms(pod):
        err = _compatible(np_reqs, term)
        if not err:
            return Judgement(pool.name, "")
        first = first or err
    return Judgement(pool.name, "requirement", f"incompatible requirements, {first}")
