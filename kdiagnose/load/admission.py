"""What the API server and its default admission plugins do to a Pod (and a PVC) before the scheduler sees it.

Dumps of a live cluster are already admitted; raw manifests (and golden scenarios) are not. Decode-time
defaulting (pkg/apis/core/v1/defaults.go SetDefaults_Pod) only fills what is missing, so it runs on every
pod. The admission plugins run once, at creation: a pod that carries `spec.priority` went through the
Priority plugin (it always sets it, and a pod may not be created with a different one), so it is taken as
admitted and left as it is; re-running LimitRanger, DefaultTolerationSeconds or RuntimeClass against
today's LimitRanges/RuntimeClasses would change an object the cluster admitted under other ones.

Mirrors, at v1.34: pkg/apis/core/v1/defaults.go (SetDefaults_Pod, SetDefaults_PodSpec, defaultPodRequests,
defaultHugePagePodLimits, defaultHostNetworkPorts, SetDefaults_LimitRangeItem),
plugin/pkg/admission/{limitranger,priority,defaulttolerationseconds,runtimeclass}/admission.go (mutating
order: LimitRanger, Priority, DefaultTolerationSeconds, RuntimeClass), pkg/util/tolerations
(MergeTolerations), plugin/pkg/admission/storage/storageclass/setdefault and pkg/volume/util/storageclass.go
(GetDefaultClass), and the request/limit part of ValidateResourceRequirements (validation runs after
mutating admission, so a LimitRange default limit below an explicit request rejects the pod).

Not applied here: the matchLabelKeys/mismatchLabelKeys merges of pkg/registry/core/pod/strategy.go. The
InterPodAffinity and PodTopologySpread plugins apply them when they parse the pod, skipping (affinity) or
repeating (spread, as v1.34's scheduler itself does after the API server's merge) a requirement the API
server already added, which selects the same pods; merging here too would change nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from datetime import datetime
from fractions import Fraction
from typing import Any

from kdiagnose.model.quantity import QuantityError, parse_quantity

__all__ = [
    "SYSTEM_PRIORITY_CLASSES",
    "AdmissionContext",
    "admit_pod",
    "admit_pvc",
    "default_storage_class",
    "merge_tolerations",
]

Obj = dict[str, Any]

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300  # --default-{not-ready,unreachable}-toleration-seconds
DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
# pkg/apis/scheduling/types.go: created by the API server at start-up, so they always exist.
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
DEFAULT_SC_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
_HUGEPAGES = "hugepages-"
LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _meta(obj: Obj) -> Obj:
    return _dict(obj.get("metadata"))


def _name(obj: Obj) -> str:
    return str(_meta(obj).get("name") or "")


def _created(obj: Obj) -> float:
    ts = _meta(obj).get("creationTimestamp")
    try:
        return datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp() if ts else float("-inf")
    except ValueError:
        return float("-inf")


def default_storage_class(storage_classes: Iterable[Obj]) -> str | None:
    """GetDefaultClass (pkg/volume/util/storageclass.go): among the classes annotated default (the value
    exactly "true"), the newest; equal creation times: the lowest name."""
    defaults = [
        sc
        for sc in storage_classes
        if isinstance(sc, dict)
        and any((_meta(sc).get("annotations") or {}).get(a) == "true" for a in DEFAULT_SC_ANNOTATIONS)
    ]
    if not defaults:
        return None
    best = min(defaults, key=lambda sc: (-_created(sc), _name(sc)))
    return _name(best)


class AdmissionContext:
    """Cluster objects admission reads: PriorityClasses, LimitRanges, RuntimeClasses, StorageClasses.

    `present` names the kinds the input lists (even empty); by default a kind is present when it has an
    object. Where a kind is absent a reference to it cannot be checked: it is counted in `unresolved`
    (kind, name) instead of being reported as the rejection a real API server would give."""

    def __init__(
        self,
        priority_classes: list[Obj],
        limit_ranges: list[Obj],
        runtime_classes: list[Obj],
        storage_classes: list[Obj] | None = None,
        *,
        present: Collection[str] | None = None,
    ) -> None:
        self.priority_classes = {_name(pc): pc for pc in priority_classes}
        self.global_default: Obj | None = None
        # priority/admission.go getDefaultPriorityClass: the lowest-valued global default when several exist.
        for pc in priority_classes:
            if pc.get("globalDefault") is True and (
                self.global_default is None or _int(self.global_default.get("value")) > _int(pc.get("value"))
            ):
                self.global_default = pc
        self.limit_ranges: dict[str, list[tuple[Obj, Obj]]] = {}
        for lr in limit_ranges:
            ns = str(_meta(lr).get("namespace") or "default")
            self.limit_ranges.setdefault(ns, []).append(_limit_range_defaults(lr))
        self.runtime_classes = {_name(rc): rc for rc in runtime_classes}
        self.default_storage_class = default_storage_class(storage_classes or [])
        self.has_priority_classes = (
            "PriorityClass" in present if present is not None else bool(priority_classes)
        )
        self.has_runtime_classes = "RuntimeClass" in present if present is not None else bool(runtime_classes)
        self.unresolved: Counter[tuple[str, str]] = Counter()


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


# ------------------------------------------------------------------------------------------ quantities


def _q(raw: Any) -> Fraction | None:
    try:
        return parse_quantity(raw)
    except QuantityError:
        return None


def _milli(raw: Any) -> Fraction | None:
    """SetDefaults_ResourceList rounds every quantity up to milli scale at decode."""
    f = _q(raw)
    if f is None:
        return None
    return Fraction(-((-f.numerator * 1000) // f.denominator), 1000)


def _fmt(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{int(f * 1000)}m"


def _same_resources(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual on ResourceLists: nil equals empty, quantities compare by value."""
    da = a if isinstance(a, dict) else {}
    db = b if isinstance(b, dict) else {}
    return da.keys() == db.keys() and all(_q(da[k]) == _q(db[k]) for k in da)


def _supported_pod_level(name: str) -> bool:
    """IsSupportedPodLevelResource (component-helpers/resource)."""
    return name in ("cpu", "memory") or name.startswith(_HUGEPAGES)


def _overcommit_allowed(name: str) -> bool:
    """IsOvercommitAllowed (pkg/apis/core/v1/helper): native, and not hugepages."""
    native = "/" not in name or name.split("/", 1)[0].endswith("kubernetes.io")
    return native and not name.startswith(_HUGEPAGES)


# ------------------------------------------------------------------------------------------ SetDefaults


def _containers(spec: Obj, key: str) -> list[Obj]:
    return [c for c in spec.get(key) or [] if isinstance(c, dict)]


def _res(c: Obj, field: str) -> dict[str, Any]:
    res = c.get("resources")
    val = res.get(field) if isinstance(res, dict) else None
    return val if isinstance(val, dict) else {}


def _aggregate(spec: Obj, field: str) -> dict[str, Fraction]:
    """AggregateContainerRequests/Limits on the spec: containers summed, init containers maxed with the
    sidecars before them added, sidecars also summed into the total."""

    def add(into: dict[str, Fraction], rl: dict[str, Any]) -> None:
        for k, v in rl.items():
            f = _milli(v)
            if f is not None:
                into[k] = into.get(k, Fraction(0)) + f

    def mx(into: dict[str, Fraction], rl: dict[str, Fraction]) -> None:
        for k, v in rl.items():
            if k not in into or v > into[k]:
                into[k] = v

    total: dict[str, Fraction] = {}
    for c in _containers(spec, "containers"):
        add(total, _res(c, field))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for c in _containers(spec, "initContainers"):
        if c.get("restartPolicy") == "Always":
            add(total, _res(c, field))
            add(sidecars, _res(c, field))
            step = dict(sidecars)
        else:
            step = {}
            add(step, _res(c, field))
            for k, v in sidecars.items():
                step[k] = step.get(k, Fraction(0)) + v
        mx(init_max, step)
    mx(total, init_max)
    return total


def _default_requests_from_limits(spec: Obj) -> None:
    """SetDefaults_Pod: a container's (and init container's) missing request takes its limit."""
    for key in ("containers", "initContainers"):
        for c in _containers(spec, key):
            res = c.get("resources")
            if not isinstance(res, dict) or not isinstance(res.get("limits"), dict):
                continue
            requests = res.get("requests")
            if not isinstance(requests, dict):
                requests = res["requests"] = {}
            for name, q in res["limits"].items():
                requests.setdefault(name, q)


def _default_pod_level(spec: Obj) -> None:
    """defaultHugePagePodLimits then defaultPodRequests (PodLevelResources), after the container defaults.
    The caller drops spec.resources where the release has the gate off."""
    res = spec.get("resources")
    if not isinstance(res, dict):
        return
    lims = _dict(res.get("limits"))
    reqs = _dict(res.get("requests"))
    if lims or reqs:
        # Hugepage limits of the containers become the pod's, unless the pod requests that size.
        new_lims = dict(lims)
        for k, v in _aggregate(spec, "limits").items():
            if _supported_pod_level(k) and k.startswith(_HUGEPAGES) and k not in reqs:
                new_lims.setdefault(k, _fmt(v))
        if new_lims:
            res["limits"] = lims = new_lims
    if not lims:
        return
    new_reqs = dict(reqs)
    # Containers' requests first (cpu/memory only), then the pod-level limits for what is still missing.
    for k, v in _aggregate(spec, "requests").items():
        if k not in new_reqs and _supported_pod_level(k) and _overcommit_allowed(k):
            new_reqs[k] = _fmt(v)
    for k, q in lims.items():
        if k not in new_reqs and _supported_pod_level(k):
            new_reqs[k] = q
    if new_reqs:
        res["requests"] = new_reqs


def _default_ports(spec: Obj) -> None:
    """Container ports' protocol defaults to TCP; with hostNetwork, hostPort to containerPort."""
    host_network = spec.get("hostNetwork") is True
    for key in ("containers", "initContainers"):
        for c in _containers(spec, key):
            for p in c.get("ports") or []:
                if not isinstance(p, dict):
                    continue
                if not p.get("protocol"):
                    p["protocol"] = "TCP"
                if host_network and not p.get("hostPort") and p.get("containerPort"):
                    p["hostPort"] = p["containerPort"]


def _set_defaults(spec: Obj) -> None:
    _default_requests_from_limits(spec)
    _default_pod_level(spec)
    _default_ports(spec)
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME


# ------------------------------------------------------------------------------------------ LimitRanger


def _limit_range_defaults(lr: Obj) -> tuple[Obj, Obj]:
    """defaultContainerResourceRequirements over the items as SetDefaults_LimitRangeItem stores them:
    default <- max, defaultRequest <- default, defaultRequest <- min (each only where missing). Only
    `type: Container` items default anything; later items win for the same resource."""
    limits: Obj = {}
    requests: Obj = {}
    spec = _dict(lr.get("spec"))
    for item in spec.get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {})
        for k, v in (item.get("max") or {}).items():
            default.setdefault(k, v)
        default_request = dict(item.get("defaultRequest") or {})
        for k, v in default.items():
            default_request.setdefault(k, v)
        for k, v in (item.get("min") or {}).items():
            default_request.setdefault(k, v)
        limits.update(default)
        requests.update(default_request)
    return limits, requests


def _limit_ranger(spec: Obj, ranges: list[tuple[Obj, Obj]]) -> str:
    """mergeContainerResources for every container and init container, one LimitRange after the other:
    only resources the container does not set (after SetDefaults_Pod copied limits into requests).
    Returns the `kubernetes.io/limit-ranger` annotation of mergePodResourceRequirements ("" when nothing
    was set); each LimitRange that sets something overwrites it, as upstream does."""
    annotation = ""
    for limits, requests in ranges:
        if not limits and not requests:
            continue
        parts: list[str] = []
        for key, what in (("containers", "container"), ("initContainers", "init container")):
            for c in _containers(spec, key):
                res = c.get("resources")
                if not isinstance(res, dict):
                    res = c["resources"] = {}
                set_now: dict[str, list[str]] = {}
                for field, defaults in (("limits", limits), ("requests", requests)):
                    if not defaults:
                        continue
                    rl = res.get(field)
                    if not isinstance(rl, dict):
                        rl = res[field] = {}
                    for k, v in defaults.items():
                        if k not in rl:
                            rl[k] = v
                            set_now.setdefault(field, []).append(k)
                for field, word in (("requests", "request"), ("limits", "limit")):
                    if set_now.get(field):
                        parts.append(f"{', '.join(sorted(set_now[field]))} {word} for {what} {c.get('name')}")
        if parts:
            annotation = "LimitRanger plugin set: " + "; ".join(parts)
    return annotation


# ------------------------------------------------------------------------------------------ Priority


def _priority(spec: Obj, ctx: AdmissionContext, errors: list[str]) -> None:
    """priority/admission.go admitPod (create)."""
    name = str(spec.get("priorityClassName") or "")
    policy: str | None = PREEMPT_LOWER_PRIORITY
    if not name:
        pc = ctx.global_default
        if pc is not None:
            spec["priorityClassName"] = _name(pc)
            value = _int(pc.get("value"))
            # SetDefaults_PriorityClass: preemptionPolicy defaults to PreemptLowerPriority.
            policy = str(pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY)
        else:
            value = 0
    elif name in ctx.priority_classes:
        pc = ctx.priority_classes[name]
        value = _int(pc.get("value"))
        policy = str(pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY)
    elif name in SYSTEM_PRIORITY_CLASSES:
        value = SYSTEM_PRIORITY_CLASSES[name]
    elif ctx.has_priority_classes:
        errors.append(f"no PriorityClass with name {name} was found")
        return
    else:
        ctx.unresolved["PriorityClass", name] += 1
        value, policy = 0, None
    spec["priority"] = value
    if policy is None:
        return
    given = spec.get("preemptionPolicy")
    if given and given != policy:
        errors.append(
            f"the string value of PreemptionPolicy ({given}) must not be provided in pod spec; "
            f"priority admission controller computed {policy} from the given PriorityClass name"
        )
        return
    spec["preemptionPolicy"] = policy


# ------------------------------------------------------------------------------------------ tolerations


def _default_tolerations(spec: Obj) -> None:
    """DefaultTolerationSeconds: a NoExecute toleration (or one of any effect) for the key (or for every
    key) counts as tolerating it, whatever its operator, value or seconds."""
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    not_ready = unreachable = False
    for t in tolerations:
        if not isinstance(t, dict) or (t.get("effect") or "") not in ("NoExecute", ""):
            continue
        key = t.get("key") or ""
        not_ready = not_ready or key in (NOT_READY_TAINT, "")
        unreachable = unreachable or key in (UNREACHABLE_TAINT, "")
    added = [
        {
            "key": k,
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
        }
        for k, has in ((NOT_READY_TAINT, not_ready), (UNREACHABLE_TAINT, unreachable))
        if not has
    ]
    if added:
        spec["tolerations"] = [*tolerations, *added]


def _tol(t: Obj) -> tuple[str, str, str, str, Any]:
    secs = t.get("tolerationSeconds")
    return (
        str(t.get("key") or ""),
        str(t.get("operator") or ""),
        str(t.get("value") or ""),
        str(t.get("effect") or ""),
        secs if isinstance(secs, int) and not isinstance(secs, bool) else None,
    )


def _is_superset(ss: Obj, t: Obj) -> bool:
    """pkg/util/tolerations isSuperset: whether `ss` tolerates everything `t` does."""
    s_key, s_op, s_val, s_eff, s_secs = _tol(ss)
    t_key, t_op, t_val, t_eff, t_secs = _tol(t)
    if (s_key, s_op, s_val, s_eff, s_secs) == (t_key, t_op, t_val, t_eff, t_secs):
        return True
    if t_key != s_key and (s_key != "" or s_op != "Exists"):
        return False
    if t_eff != s_eff and s_eff != "":
        return False
    if s_eff == "NoExecute" and s_secs is not None and (t_secs is None or t_secs > s_secs):
        return False
    if s_op in ("Equal", ""):
        return t_op == "Equal" and t_val == s_val
    return s_op == "Exists"


def merge_tolerations(first: list[Obj], second: list[Obj]) -> list[Obj]:
    """MergeTolerations: both lists, keeping only the widest of tolerations that cover one another (the
    first of equal ones)."""
    every = [t for t in (*first, *second) if isinstance(t, dict)]
    merged: list[Obj] = []
    for i, t in enumerate(every):
        if any(_is_superset(m, t) for m in merged):
            continue
        if any(_tol(t) != _tol(later) and _is_superset(later, t) for later in every[i + 1 :]):
            continue
        merged.append(t)
    return merged


# ------------------------------------------------------------------------------------------ RuntimeClass


def _runtime_class(spec: Obj, ctx: AdmissionContext, errors: list[str]) -> None:
    """runtimeclass/admission.go: Admit (setOverhead, setScheduling) and Validate (validateOverhead)."""
    name = str(spec.get("runtimeClassName") or "")
    if not name:
        if spec.get("overhead") is not None:
            errors.append(
                "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
            )
        return
    rc = ctx.runtime_classes.get(name)
    if rc is None:
        if ctx.has_runtime_classes:
            errors.append(f'pod rejected: RuntimeClass "{name}" not found')
        else:
            ctx.unresolved["RuntimeClass", name] += 1
        return
    overhead = rc.get("overhead")
    if isinstance(overhead, dict):
        fixed = overhead.get("podFixed")
        if spec.get("overhead") is not None and not _same_resources(fixed, spec["overhead"]):
            errors.append("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
            return
        if isinstance(fixed, dict) and fixed:
            spec["overhead"] = dict(fixed)
        else:
            spec.pop("overhead", None)
    elif spec.get("overhead") is not None:
        errors.append("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
        return
    scheduling = rc.get("scheduling")
    if not isinstance(scheduling, dict):
        return
    rc_selector = _dict(scheduling.get("nodeSelector"))
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        for key in sorted(rc_selector):
            value = rc_selector[key]
            if key in selector and selector[key] != value:
                errors.append(
                    f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                    f"pod.spec.nodeSelector[{key}] = {selector[key]}"
                )
                return
        selector.update(rc_selector)
    elif rc_selector:
        spec["nodeSelector"] = dict(rc_selector)
    rc_tolerations = scheduling.get("tolerations")
    pod_tolerations = spec.get("tolerations")
    merged = merge_tolerations(
        pod_tolerations if isinstance(pod_tolerations, list) else [],
        rc_tolerations if isinstance(rc_tolerations, list) else [],
    )
    if merged:
        spec["tolerations"] = merged
    else:
        spec.pop("tolerations", None)


# ------------------------------------------------------------------------------------------ validation


def _validate_requests(spec: Obj, errors: list[str]) -> None:
    """ValidateResourceRequirements, request against limit: runs after mutating admission."""
    for key in ("initContainers", "containers"):
        for i, c in enumerate(_containers(spec, key)):
            requests, limits = _res(c, "requests"), _res(c, "limits")
            for name in sorted(requests):
                req, lim = _q(requests[name]), _q(limits[name]) if name in limits else None
                if req is None or (name in limits and lim is None):
                    continue  # not a quantity: model validation names it
                at = f"spec.{key}[{i}].resources.requests[{name}]"
                if lim is None:
                    if not _overcommit_allowed(name):
                        errors.append(
                            f"spec.{key}[{i}].resources.limits: Required value: "
                            "Limit must be set for non overcommitable resources"
                        )
                elif not _overcommit_allowed(name) and req != lim:
                    errors.append(
                        f'{at}: Invalid value: "{requests[name]}": must be equal to {name} limit of {limits[name]}'
                    )
                elif req > lim:
                    errors.append(
                        f'{at}: Invalid value: "{requests[name]}": must be less than or equal to '
                        f"{name} limit of {limits[name]}"
                    )


# ------------------------------------------------------------------------------------------ entry points


def admit_pod(obj: Obj, ctx: AdmissionContext, rejections: list[str] | None = None) -> Obj:
    """Default one Pod object in place (and return it).

    What the API server would reject instead of creating is appended to `rejections` (its Forbidden or
    Invalid message); the pod is still defaulted as far as it goes. A pod already admitted (it carries
    `spec.priority`) is only given the decode-time defaults, which it already has."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        obj["spec"] = spec
    meta = obj.setdefault("metadata", {})
    if isinstance(meta, dict):
        meta.setdefault("namespace", "default")
    ns = str(meta.get("namespace") or "default") if isinstance(meta, dict) else "default"
    _set_defaults(spec)
    priority = spec.get("priority")
    if isinstance(priority, int) and not isinstance(priority, bool):
        return obj
    errors: list[str] = []
    limit_ranger = _limit_ranger(spec, ctx.limit_ranges.get(ns, []))
    if limit_ranger and isinstance(meta, dict):
        annotations = meta.get("annotations")
        if not isinstance(annotations, dict):
            annotations = meta["annotations"] = {}
        annotations[LIMIT_RANGER_ANNOTATION] = limit_ranger
    _priority(spec, ctx, errors)
    _default_tolerations(spec)
    _runtime_class(spec, ctx, errors)
    _validate_requests(spec, errors)
    if rejections is not None:
        rejections.extend(errors)
    return obj


def admit_pvc(obj: Obj, ctx: AdmissionContext) -> Obj:
    """DefaultStorageClass: a claim that names no class (neither spec.storageClassName, even "", nor the
    beta annotation) gets the default class. At creation that is admission; for a claim already created
    (it has a status) it is the PV controller's retroactive assignment, which only touches unbound claims."""
    if ctx.default_storage_class is None:
        return obj
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    annotations = _meta(obj).get("annotations")
    if spec.get("storageClassName") is not None or (
        isinstance(annotations, dict) and BETA_STORAGE_CLASS_ANNOTATION in annotations
    ):
        return obj
    status = obj.get("status")
    if isinstance(status, dict) and status.get("phase") and spec.get("volumeName"):
        return obj
    spec["storageClassName"] = ctx.default_storage_class
    return obj
