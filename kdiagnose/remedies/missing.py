"""Root causes for missing objects: what the pod references that the cluster does not have.

The scheduler's own words stay in the diagnosis (`persistentvolumeclaim "x" not found`, DynamicResources'
PreEnqueue "ResourceClaim not created yet", `device class y does not exist`); this names the object a person
has to create or spell right: its kind, namespace and name, where the pod references it, and the closest
existing names (difflib) in the same namespace ("did you mean gpu-single?"). A misspelled reference with a
close match is proven by replaying the pod with the name fixed; when the input has no objects of a kind at
all, the reference is "not checked", never reported missing.

References read (the ones the scheduler or admission resolves): spec.resourceClaims[] (ResourceClaim,
ResourceClaimTemplate), their device requests' deviceClassName (DeviceClass), PVC volumes
(PersistentVolumeClaim) and an unbound claim's storageClassName (StorageClass), spec.priorityClassName
(PriorityClass), spec.runtimeClassName (RuntimeClass). ConfigMap and Secret volumes do not matter to the
scheduler and are not read.
"""

from __future__ import annotations

import difflib
import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from kdiagnose.remedies.whatif import Context
from kdiagnose.results import SAFE, Remedy

__all__ = ["MAX_SUGGESTIONS", "Missing", "find_missing", "remedies"]

Obj = dict[str, Any]
MAX_SUGGESTIONS = 3
# difflib's ratio above which a name counts as "close" (gpu-singel / gpu-single is 0.9).
_CUTOFF = 0.6
_CLUSTER_SCOPED = frozenset({"StorageClass", "PriorityClass", "RuntimeClass", "DeviceClass"})
_RESOURCE = {
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "PersistentVolumeClaim": "pvc",
    "StorageClass": "storageclass",
    "PriorityClass": "priorityclass",
    "RuntimeClass": "runtimeclass",
    "DeviceClass": "deviceclasses",
}


@dataclass(slots=True)
class Missing:
    """One reference to an object the input does not have."""

    kind: str
    namespace: str  # "" for cluster-scoped kinds
    name: str
    where: str  # where the pod (or its claim) references it, e.g. spec.resourceClaims[0].resourceClaimTemplateName
    suggestions: list[str] = field(default_factory=list)
    path: tuple[str | int, ...] = ()  # the field's path in the pod spec, when fixing it there is possible

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def text(self) -> str:
        did = f"; did you mean {' or '.join(self.suggestions)}?" if self.suggestions else ""
        return f"{self.ref} does not exist (referenced by {self.where}){did}"


def _names(ctx: Context, kind: str, namespace: str) -> list[str]:
    out = []
    for o in ctx.snapshot.kind(kind):
        meta = o.get("metadata") or {}
        if kind in _CLUSTER_SCOPED or str(meta.get("namespace") or "default") == namespace:
            out.append(str(meta.get("name") or ""))
    return sorted(n for n in out if n)


def _check(
    ctx: Context,
    kind: str,
    name: str,
    where: str,
    path: tuple[str | int, ...],
    out: list[Missing],
    notes: list[str],
) -> Obj | None:
    """The object, or None after recording it missing (or not checked when the input lacks the kind)."""
    ns = "" if kind in _CLUSTER_SCOPED else ctx.pod.namespace
    obj = ctx.snapshot.get(kind, name, ns or None)
    if obj is not None:
        return obj
    if not ctx.snapshot.has(kind):
        line = f"references: not checked: the input has no {kind} objects ({where} names {name})"
        if line not in notes:
            notes.append(line)
        return None
    close = difflib.get_close_matches(name, _names(ctx, kind, ctx.pod.namespace), MAX_SUGGESTIONS, _CUTOFF)
    out.append(Missing(kind, ns, name, where, close, path))
    return None


def _device_classes(spec: Obj) -> list[tuple[str, str]]:
    """(request path, deviceClassName) of a claim spec's device requests (v1 `exactly`, firstAvailable, v1beta1)."""
    out: list[tuple[str, str]] = []
    for i, req in enumerate(((spec.get("devices") or {}).get("requests")) or []):
        if not isinstance(req, dict):
            continue
        exact: Obj = req["exactly"] if isinstance(req.get("exactly"), dict) else req
        if exact.get("deviceClassName"):
            out.append((f"devices.requests[{i}]", str(exact["deviceClassName"])))
        for j, sub in enumerate(req.get("firstAvailable") or []):
            if isinstance(sub, dict) and sub.get("deviceClassName"):
                out.append((f"devices.requests[{i}].firstAvailable[{j}]", str(sub["deviceClassName"])))
    return out


def find_missing(ctx: Context) -> tuple[list[Missing], list[str]]:
    """Every reference of the pod to an object the input does not have, in spec order."""
    pod = ctx.pod
    missing: list[Missing] = []
    notes: list[str] = []
    statuses = {str(s.get("name") or ""): s for s in pod.resource_claim_statuses}
    for i, pc in enumerate(pod.resource_claims):
        base = f"spec.resourceClaims[{i}]"
        claim_spec: Obj | None = None
        if pc.get("resourceClaimName"):
            name = str(pc["resourceClaimName"])
            obj = _check(
                ctx,
                "ResourceClaim",
                name,
                f"{base}.resourceClaimName",
                ("resourceClaims", i, "resourceClaimName"),
                missing,
                notes,
            )
            claim_spec = (obj or {}).get("spec")
            where = f"ResourceClaim {pod.namespace}/{name}"
        elif pc.get("resourceClaimTemplateName"):
            tname = str(pc["resourceClaimTemplateName"])
            created = statuses.get(str(pc.get("name") or ""), {}).get("resourceClaimName")
            obj = (
                _check(
                    ctx,
                    "ResourceClaimTemplate",
                    tname,
                    f"{base}.resourceClaimTemplateName",
                    ("resourceClaims", i, "resourceClaimTemplateName"),
                    missing,
                    notes,
                )
                if not created
                else None
            )
            claim_spec = ((obj or {}).get("spec") or {}).get("spec")
            where = f"ResourceClaimTemplate {pod.namespace}/{tname}"
        else:
            continue
        if isinstance(claim_spec, dict):
            for rpath, cls in _device_classes(claim_spec):
                _check(ctx, "DeviceClass", cls, f"{where} spec.{rpath}.deviceClassName", (), missing, notes)
    for i, vol in enumerate(pod.volumes):
        claim = vol.get("persistentVolumeClaim")
        if not isinstance(claim, dict) or not claim.get("claimName"):
            continue
        cname = str(claim["claimName"])
        pvc = _check(
            ctx,
            "PersistentVolumeClaim",
            cname,
            f"spec.volumes[{i}] ({vol.get('name')}).persistentVolumeClaim.claimName",
            ("volumes", i, "persistentVolumeClaim", "claimName"),
            missing,
            notes,
        )
        spec = (pvc or {}).get("spec") or {}
        sc = spec.get("storageClassName")
        if pvc is not None and sc and not spec.get("volumeName"):
            _check(
                ctx,
                "StorageClass",
                str(sc),
                f"PersistentVolumeClaim {pod.namespace}/{cname} spec.storageClassName",
                (),
                missing,
                notes,
            )
    if pod.priority_class_name and pod.priority_class_name not in (
        "system-cluster-critical",
        "system-node-critical",
    ):
        _check(
            ctx,
            "PriorityClass",
            pod.priority_class_name,
            "spec.priorityClassName",
            ("priorityClassName",),
            missing,
            notes,
        )
    if pod.runtime_class_name:
        _check(
            ctx,
            "RuntimeClass",
            pod.runtime_class_name,
            "spec.runtimeClassName",
            ("runtimeClassName",),
            missing,
            notes,
        )
    return missing, notes


def _set(obj: Obj, path: tuple[str | int, ...], value: str) -> None:
    cur: Any = obj["spec"]
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value


def _json_path(ctx: Context, path: tuple[str | int, ...]) -> str:
    """The JSON-patch path of a pod spec field in the owner (its pod template; the pod's spec for a bare pod)."""
    return "/" + "/".join(ctx.owner.template_path) + "".join(f"/{p}" for p in path)


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    found, notes = find_missing(ctx)
    out: list[Remedy] = []
    for m in found:
        res = _RESOURCE[m.kind]
        ns_arg = f" -n {m.namespace}" if m.namespace else ""
        fixed = None
        if m.suggestions and m.path and ctx.pod.raw is not None:
            best = m.suggestions[0]

            def rename(obj: Obj, path: tuple[str | int, ...] = m.path, best: str = best) -> None:
                _set(obj, path, best)

            pod = ctx.modified_pod(rename)
            if pod is not None:
                r = ctx.replay_modified(pod)
                fixed = (best, r)
        if fixed is not None and fixed[1].schedules:
            best, r = fixed
            ops = [{"op": "replace", "path": _json_path(ctx, m.path), "value": best}]
            ops_text = json.dumps(ops, separators=(",", ":"))
            change = ctx.change({}, r.feasible)
            patch_cmd = f"kubectl patch {ctx.owner.ref} -n {ctx.owner.namespace} --type json -p {shlex.quote(ops_text)}"
            if ctx.owner.is_pod or ctx.owner.kind == "Job":
                commands = list(change["commands"])  # the live object cannot take the change: re-create it
            else:
                commands = [patch_cmd, *change["commands"][1:]]  # e.g. a StatefulSet's pod delete
            out.append(
                Remedy(
                    kind="fix-reference",
                    summary=f"{m.text()}: point {m.where} of {ctx.owner} at {best}",
                    target=str(ctx.owner),
                    unblocks=list(r.feasible),
                    risk=f"check that {best} is the {m.kind} the workload meant (same devices, size or class)",
                    commands=commands,
                    patch_document={"json_patch": ops},
                    verify=change["verify"],
                    rollback=change["rollback"],
                    apply_note=(
                        f"a live pod's spec cannot change this field: set {m.where} to {best} in pod.yaml, "
                        "then re-create the pod"
                        if ctx.owner.is_pod
                        else change["apply_note"]
                    ),
                    safety=SAFE,
                    change_size=1.0,
                    details={
                        "missing": {
                            "kind": m.kind,
                            "namespace": m.namespace,
                            "name": m.name,
                            "field": m.where,
                        },
                        "suggestions": m.suggestions,
                    },
                )
            )
            continue
        tail = ""
        if fixed is not None:
            st = next((s for s in fixed[1].verdicts.values() if not s.ok), fixed[1].prefilter)
            tail = f" (with {fixed[0]} the pod would still not fit: {st.message if st else 'no node'})"
        out.append(
            Remedy(
                kind="create-object",
                summary=f"{m.text()}: create it{tail}",
                target=m.ref,
                risk=f"a new {m.kind} is what the workload gets: copy an existing one and check it",
                commands=[
                    f"kubectl get {res}{ns_arg}",
                    f"kubectl create -f {m.kind.lower()}-{m.name}.yaml{ns_arg}",
                ],
                verify=f"kubectl get {res}/{m.name}{ns_arg}  # exists",
                rollback=f"kubectl delete {res}/{m.name}{ns_arg}",
                apply_note=f"write {m.kind.lower()}-{m.name}.yaml (kind {m.kind}, name {m.name}); the scheduler retries the pod when it appears",
                safety=SAFE,
                change_size=2.0,
                details={
                    "missing": {"kind": m.kind, "namespace": m.namespace, "name": m.name, "field": m.where},
                    "suggestions": m.suggestions,
                },
            )
        )
    return out, notes
