"""What the API server and its default admission plugins do to a Pod before the scheduler sees it.

Dumps of a live cluster are already admitted; raw manifests (and golden scenarios) are not. Applying the
same defaulting to both is idempotent: every step only fills what is missing.
Mirrors pkg/apis/core/v1/defaults.go, plugin/pkg/admission/{priority,defaulttolerationseconds,limitranger,
runtimeclass}, and pkg/registry/core/pod/strategy.go (matchLabelKeys).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AdmissionContext", "admit_pod"]

Obj = dict[str, Any]

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


class AdmissionContext:
    """Cluster objects admission reads: PriorityClasses, LimitRanges, RuntimeClasses."""

    def __init__(
        self, priority_classes: list[Obj], limit_ranges: list[Obj], runtime_classes: list[Obj]
    ) -> None:
        self.priority_classes = {str((pc.get("metadata") or {}).get("name")): pc for pc in priority_classes}
        self.global_default: Obj | None = None
        # The admission plugin takes the lowest-valued global default when several exist.
        defaults = [pc for pc in priority_classes if pc.get("globalDefault")]
        if defaults:
            self.global_default = min(defaults, key=lambda pc: int(pc.get("value") or 0))
        self.limit_ranges: dict[str, list[Obj]] = {}
        for lr in limit_ranges:
            ns = str((lr.get("metadata") or {}).get("namespace") or "default")
            self.limit_ranges.setdefault(ns, []).append(lr)
        self.runtime_classes = {str((rc.get("metadata") or {}).get("name")): rc for rc in runtime_classes}


def _containers(spec: Obj) -> list[Obj]:
    out = []
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                out.append(c)
    return out


def _default_requests_from_limits(spec: Obj) -> None:
    for c in _containers(spec):
        res = c.get("resources")
        if not isinstance(res, dict):
            continue
        limits = res.get("limits")
        if not isinstance(limits, dict) or not limits:
            continue
        requests = res.get("requests")
        if not isinstance(requests, dict):
            requests = {}
            res["requests"] = requests
        for name, q in limits.items():
            requests.setdefault(name, q)
    pod_res = spec.get("resources")
    if isinstance(pod_res, dict) and isinstance(pod_res.get("limits"), dict):
        reqs = pod_res.setdefault("requests", {})
        if isinstance(reqs, dict):
            for name, q in pod_res["limits"].items():
                reqs.setdefault(name, q)


def _apply_limit_ranges(spec: Obj, ranges: list[Obj]) -> None:
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or []:
            if not isinstance(item, dict) or item.get("type", "Container") != "Container":
                continue
            default_req = item.get("defaultRequest") or {}
            default_lim = item.get("default") or {}
            for c in _containers(spec):
                res = c.setdefault("resources", {})
                if not isinstance(res, dict):
                    continue
                lims = res.setdefault("limits", {})
                reqs = res.setdefault("requests", {})
                for name, q in default_lim.items():
                    lims.setdefault(name, q)
                for name, q in default_req.items():
                    reqs.setdefault(name, q)
                # LimitRanger: a request absent after defaults takes the (defaulted) limit.
                for name, q in lims.items():
                    reqs.setdefault(name, q)


def _default_tolerations(spec: Obj) -> None:
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    not_ready = unreachable = False
    for t in tolerations:
        if not isinstance(t, dict):
            continue
        key, effect = t.get("key") or "", t.get("effect") or ""
        if effect not in ("NoExecute", ""):
            continue
        if key in (NOT_READY_TAINT, ""):
            not_ready = True
        if key in (UNREACHABLE_TAINT, ""):
            unreachable = True
    added = []
    if not not_ready:
        added.append(
            {
                "key": NOT_READY_TAINT,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }
        )
    if not unreachable:
        added.append(
            {
                "key": UNREACHABLE_TAINT,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }
        )
    if added:
        spec["tolerations"] = [*tolerations, *added]


def _priority(spec: Obj, ctx: AdmissionContext) -> None:
    if isinstance(spec.get("priority"), int):
        return
    name = spec.get("priorityClassName")
    pc: Obj | None = None
    if name:
        pc = ctx.priority_classes.get(str(name))
        if pc is None and name in ("system-cluster-critical", "system-node-critical"):
            pc = {"value": 2000000000 if name == "system-cluster-critical" else 2000001000}
    elif ctx.global_default is not None:
        pc = ctx.global_default
        spec["priorityClassName"] = (pc.get("metadata") or {}).get("name")
    spec["priority"] = int((pc or {}).get("value") or 0)
    if pc is not None and pc.get("preemptionPolicy") and not spec.get("preemptionPolicy"):
        spec["preemptionPolicy"] = pc["preemptionPolicy"]


def _runtime_class_overhead(spec: Obj, ctx: AdmissionContext) -> None:
    name = spec.get("runtimeClassName")
    if not name or spec.get("overhead"):
        return
    rc = ctx.runtime_classes.get(str(name))
    fixed = ((rc or {}).get("overhead") or {}).get("podFixed")
    if isinstance(fixed, dict) and fixed:
        spec["overhead"] = dict(fixed)


def admit_pod(obj: Obj, ctx: AdmissionContext) -> Obj:
    """Default one Pod object in place (and return it)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        obj["spec"] = spec
    meta = obj.setdefault("metadata", {})
    if isinstance(meta, dict):
        meta.setdefault("namespace", "default")
    ns = str(meta.get("namespace") or "default") if isinstance(meta, dict) else "default"
    if ns in ctx.limit_ranges:
        _apply_limit_ranges(spec, ctx.limit_ranges[ns])
    _default_requests_from_limits(spec)
    _priority(spec, ctx)
    _default_tolerations(spec)
    _runtime_class_overhead(spec, ctx)
    spec.setdefault("schedulerName", "default-scheduler")
    return obj
