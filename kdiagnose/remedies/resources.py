"""Right-size a request: the largest request per resource that fits a node NodeResourcesFit rejected.

Computed from the Filter's details (free = allocatable - requested, plugins/noderesources/fit.go), then
proven by one replay of the pod with the smaller requests; the node needing the smallest cut sets the cap,
every node with at least that much free is unblocked with it (ties: the node name). A cut of at most
SMALL_CUT (20%) is safe; a larger one is risky (remedies/safety.py).
"""

from __future__ import annotations

from typing import Any

from kdiagnose.model.quantity import QuantityError, format_quantity, parse_quantity
from kdiagnose.remedies.safety import SMALL_CUT
from kdiagnose.remedies.whatif import Context
from kdiagnose.results import RISKY, SAFE, Remedy
from kdiagnose.scheduler import names as n

__all__ = ["remedies", "round_down"]

Obj = dict[str, Any]
_MI = 2**20


def round_down(resource: str, amount: int) -> int:
    """A readable request not above `amount`: whole Mi for byte resources, millicores for cpu."""
    if resource in ("memory", "ephemeral-storage") and amount >= _MI:
        return amount // _MI * _MI
    return amount


# Requests that are reservations a workload can be tuned to; device counts (extended resources, hugepages)
# are what the workload needs and are never suggested smaller.
_SIZED = frozenset({"cpu", "memory", "ephemeral-storage"})


def _caps(ctx: Context) -> list[tuple[dict[str, int], str]]:
    """Per rejected node: {resource: largest request that fits}; nodes that cannot fit any request skipped."""
    out: list[tuple[dict[str, int], str]] = []
    for name in ctx.nodes_failing(n.NODE_RESOURCES_FIT):
        st = ctx.d.verdicts[name]
        caps: dict[str, int] = {}
        ok = True
        for det in st.details:
            res = det.get("resource")
            if not isinstance(res, str) or res == "pods":
                ok = False  # Too many pods: no request is small enough
                break
            if res not in _SIZED:
                ok = False  # GPUs, hugepages, other devices: a count the workload needs, not a reservation
                break
            cap = round_down(res, int(det.get("free", 0)))
            if cap <= 0:
                ok = False
                break
            caps[res] = cap
        if ok and caps:
            out.append((caps, name))
    return out


# The Filter plugins that read a pod's requests (what `_cut` lowers): NodeResourcesFit, DynamicResources
# (extended resources backed by DRA devices, plugins/dynamicresources/extended.go) and NodeDeclaredFeatures
# (per-container features); the what-if re-runs only them on the diagnosis's verdicts (whatif._refilter).
_READS_REQUESTS = frozenset({n.NODE_RESOURCES_FIT, n.DYNAMIC_RESOURCES, n.NODE_DECLARED_FEATURES})


def _cut(ctx: Context, obj: Obj, caps: dict[str, int]) -> list[tuple[str, str, int]]:
    """Lower container requests in `obj` so the pod's effective request per resource is <= cap; returns
    (container, resource, new request) for the patch. The largest container request is cut first."""
    spec = obj["spec"]
    changes: list[tuple[str, str, int]] = []
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    inits = [c for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    pod = ctx.pod
    for res, cap in caps.items():
        target = cap - pod.overhead.get(res, 0)
        if target <= 0:
            return []

        def req(c: Obj, res: str = res) -> int:
            return next(
                (
                    cc.requests.get(res, 0)
                    for cc in pod.containers + pod.init_containers
                    if cc.name == c.get("name")
                ),
                0,
            )

        sidecars = [c for c in inits if c.get("restartPolicy") == "Always"]
        regular = containers + sidecars
        total = sum(req(c) for c in regular)
        excess = total - target
        for c in sorted(regular, key=lambda c: -req(c)):
            if excess <= 0:
                break
            cur = req(c)
            new = max(cur - excess, 0)
            if new == cur:
                continue
            excess -= cur - new
            c.setdefault("resources", {}).setdefault("requests", {})[res] = format_quantity(res, new)
            changes.append((str(c.get("name")), res, new))
        for c in inits:
            if c.get("restartPolicy") != "Always" and req(c) > target:
                c.setdefault("resources", {}).setdefault("requests", {})[res] = format_quantity(res, target)
                changes.append((str(c.get("name")), res, target))
        if pod.pod_resources["requests"].get(res, 0) > target:
            spec["resources"]["requests"][res] = format_quantity(res, target)
            changes.append(("(pod-level)", res, target))
    return changes


def _with_watch(fields: dict[str, Any]) -> dict[str, Any]:
    fields["apply_note"] = "; ".join(
        x for x in (fields["apply_note"], "watch throttling and OOMKilled restarts after the change") if x
    )
    return fields


def _percent(old: int, new: int) -> str:
    """The cut from `old` to `new` in whole percent, rounded half up; a cut under 0.5% reads as 1%, never 0%."""
    if old <= 0 or new >= old:
        return "0%"
    return f"{max((200 * (old - new) + old) // (2 * old), 1)}%"


def _limit_range_conflict(ctx: Context, changes: list[tuple[str, str, int]]) -> str:
    """Why the LimitRanger admission plugin would refuse the pod with the lowered requests (a container
    request below a Container item's min, or a limit/request ratio above its maxLimitRequestRatio;
    plugin/pkg/admission/limitranger/admission.go), "" when it would not."""
    limits = {c.name: c.limits for c in ctx.pod.containers + ctx.pod.init_containers}
    for lr in ctx.snapshot.kind("LimitRange"):
        meta = lr.get("metadata") or {}
        if str(meta.get("namespace") or "default") != ctx.pod.namespace:
            continue
        where = f"LimitRange {ctx.pod.namespace}/{meta.get('name')}"
        for item in (lr.get("spec") or {}).get("limits") or []:
            if not isinstance(item, dict) or item.get("type") != "Container":
                continue
            for cname, res, new in changes:
                if cname == "(pod-level)":
                    continue
                low = _quantity(res, (item.get("min") or {}).get(res))
                if low is not None and new < low:
                    return (
                        f"{format_quantity(res, new)} {res} for container {cname} is below the min "
                        f"{format_quantity(res, low)} of {where}: the API server would refuse the pod"
                    )
                ratio = _quantity("ratio", (item.get("maxLimitRequestRatio") or {}).get(res))
                limit = limits.get(cname, {}).get(res)
                if ratio is not None and limit is not None and new > 0 and limit * 1000 > ratio * new:
                    return (
                        f"{format_quantity(res, new)} {res} for container {cname} puts its limit/request ratio "
                        f"above the maxLimitRequestRatio of {where}: lower the limit too"
                    )
    return ""


def _quantity(res: str, raw: Any) -> int | None:
    """A LimitRange quantity as the scheduler's integers (cpu in millicores; a ratio in thousandths)."""
    if raw is None:
        return None
    try:
        q = parse_quantity(str(raw))
    except QuantityError:
        return None
    return int(q * 1000) if res in ("cpu", "ratio") else int(q)


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    notes: list[str] = []
    caps = _caps(ctx)
    devices = sorted(
        {
            str(det.get("resource"))
            for name in ctx.nodes_failing(n.NODE_RESOURCES_FIT)
            for det in ctx.d.verdicts[name].details
            if det.get("resource") not in _SIZED and det.get("resource") != "pods"
        }
    )
    if devices and not caps:
        notes.append(
            f"right-size: not suggested for {', '.join(devices)}: a device count is what the workload needs, "
            "not a reservation to trim"
        )
    if not caps or ctx.pod.raw is None:
        return [], notes

    # The node needing the smallest relative cut sets the cap; ties by node name (never by input order).
    def cut_size(c: dict[str, int]) -> float:
        return max(
            (ctx.pod.requests.get(r, 0) - v) / max(ctx.pod.requests.get(r, 1), 1) for r, v in c.items()
        )

    best, _ = min(caps, key=lambda cn: (cut_size(cn[0]), cn[1]))
    # Every resource any best-fitting node lacks is capped at that node's free amount.
    cap = dict(best)
    changes: list[tuple[str, str, int]] = []

    def mutate(obj: Obj) -> None:
        changes.extend(_cut(ctx, obj, cap))

    pod = ctx.modified_pod(mutate)
    if pod is None or not changes:
        return [], notes
    refused = _limit_range_conflict(ctx, changes)
    if refused:
        notes.append(f"right-size: not suggested: {refused}")
        return [], notes
    targets = [name for c, name in caps if all(c.get(r, 0) >= v for r, v in cap.items())]
    r = ctx.replay_modified(pod, changed=_READS_REQUESTS)
    if not r.schedules:
        notes.append(
            f"right-size: requests of {', '.join(format_quantity(k, v) + ' ' + k for k, v in cap.items())} would "
            f"fit {targets[0]} but it would still be blocked: {r.verdicts.get(targets[0]) and r.verdicts[targets[0]].message}"
        )
        return [], notes
    what = ", ".join(f"{res} <= {format_quantity(res, v)}" for res, v in cap.items())
    cut = cut_size(cap)
    cuts = ", ".join(
        f"{res} by {_percent(ctx.pod.requests.get(res, 0), v)}" for res, v in sorted(cap.items())
    )
    others = ", ".join(
        f"{res} {format_quantity(res, q)}"
        for res, q in sorted(ctx.pod.requests.items())
        if res not in cap and q
    )
    current = ", ".join(f"{res} {format_quantity(res, ctx.pod.requests.get(res, 0))}" for res in cap)
    overhead = ", ".join(
        f"{format_quantity(res, ctx.pod.overhead[res])} {res}" for res in cap if ctx.pod.overhead.get(res)
    )
    edits = "; ".join(
        f"{'pod-level' if cname == '(pod-level)' else 'container ' + cname} {res} request "
        f"{format_quantity(res, new)}"
        for cname, res, new in changes
    )
    by_container: dict[str, dict[str, str]] = {}
    for cname, res, new in changes:
        by_container.setdefault(cname, {})[res] = format_quantity(res, new)
    fragment: Obj = {}
    conts = [
        {"name": c, "resources": {"requests": reqs}} for c, reqs in by_container.items() if c != "(pod-level)"
    ]
    init_names = {c.name for c in ctx.pod.init_containers}
    if [c for c in conts if c["name"] not in init_names]:
        fragment["containers"] = [c for c in conts if c["name"] not in init_names]
    if [c for c in conts if c["name"] in init_names]:
        fragment["initContainers"] = [c for c in conts if c["name"] in init_names]
    if "(pod-level)" in by_container:
        fragment["resources"] = {"requests": by_container["(pod-level)"]}
    return [
        Remedy(
            kind="right-size",
            summary=(
                f"right-size {ctx.owner}: {edits}, so the pod requests {what} (now {current}"
                + (f", including {overhead} of RuntimeClass overhead" if overhead else "")
                + f"): a cut of {cuts}"
                + (f"; its other requests ({others}) stay" if others else "")
            ),
            plugin=n.NODE_RESOURCES_FIT,
            reason=ctx.d.verdicts[targets[0]].message if targets else "",
            target=str(ctx.owner),
            unblocks=list(r.feasible),
            safety=SAFE if cut <= SMALL_CUT else RISKY,
            change_size=cut,
            risk=(
                (
                    ""
                    if cut <= SMALL_CUT
                    else f"a cut of {cuts} is far below what the workload asked for ({current}); "
                )
                + "a request is a reservation: below the workload's real need it gets throttled (cpu) or "
                "OOM-killed/evicted (memory); low live usage is not evidence the request is too high (peaks, "
                "start-up, batch phases); requests below limits also change the QoS class"
            ),
            **_with_watch(ctx.change(fragment, r.feasible)),
            details={"requests": {res: v for res, v in cap.items()}, "containers": by_container},
        )
    ], notes
