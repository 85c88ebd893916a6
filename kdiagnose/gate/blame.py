"""Which fields of a workload's manifest a finding is about, so CI annotations land on that line.

From the failing replica's diagnosis (each rejecting plugin's reasons and details, as the scheduler
recorded them) and from the remedies proven for it, the fields of the pod template the scheduler read:
- NodeResourcesFit `Insufficient X`: every container (and init container, pod-level resources) that requests
  X (its `resources.requests.X`, or `limits.X` when the request defaults to the limit);
- NodeAffinity: the `nodeSelector` key a node's label contradicts, else the required node affinity;
- TaintToleration: the `tolerations` (when the template has them; otherwise the object);
- InterPodAffinity: the pod's required (anti-)affinity terms; PodTopologySpread: the constraint of that
  topologyKey; NodePorts: the container port with that hostPort; volume plugins: the claim's volume or
  volumeClaimTemplate; DynamicResources: `resourceClaims`;
- the API server's Priority admission: `priorityClassName`;
- a right-size remedy: the requests it changes; a toleration remedy: `tolerations`.
Paths are relative to the manifest (locate.FieldPath), with list items named as strategic merge names them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdiagnose.gate.locate import FieldPath, Step

if TYPE_CHECKING:
    from kdiagnose.gate.result import WorkloadResult
    from kdiagnose.load.manifests import Workload
    from kdiagnose.scheduler.framework import Status

__all__ = ["Blame", "blame", "pod_spec_path"]


@dataclass(frozen=True, slots=True)
class Blame:
    path: FieldPath
    why: str


def pod_spec_path(kind: str) -> FieldPath:
    """Where the pod spec is in a manifest of this kind."""
    if kind == "Pod":
        return ("spec",)
    if kind == "CronJob":
        return ("spec", "jobTemplate", "spec", "template", "spec")
    return ("spec", "template", "spec")


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


class _Blamer:
    def __init__(self, w: Workload) -> None:
        self.w = w
        self.spec_path = pod_spec_path(w.kind)
        spec = w.template.get("spec") if isinstance(w.template, dict) else None
        self.spec = _dict(spec)
        self.out: list[Blame] = []
        self.seen: set[FieldPath] = set()

    def add(self, rel: tuple[Step, ...], why: str) -> None:
        path = self.spec_path + rel
        if path not in self.seen:
            self.seen.add(path)
            self.out.append(Blame(path, why))

    # ------------------------------------------------------------ per plugin

    def resource(self, res: str, why: str, containers: set[str] | None = None) -> None:
        """Each container requesting `res`, the largest first is not knowable without quantities: in
        manifest order (init containers after containers, pod-level resources first, as the pod's
        effective request takes pod-level resources when set)."""
        pod_level = _dict(self.spec.get("resources"))
        for part in ("requests", "limits"):
            if res in _dict(pod_level.get(part)) and containers is None:
                self.add(("resources", part, res), why)
                return
        for key in ("containers", "initContainers"):
            for c in _list(self.spec.get(key)):
                c = _dict(c)
                name = str(c.get("name") or "")
                if containers is not None and name not in containers:
                    continue
                resources = _dict(c.get("resources"))
                requests, limits = _dict(resources.get("requests")), _dict(resources.get("limits"))
                step: tuple[str, str] = ("name", name)
                if res in requests:
                    self.add((key, step, "resources", "requests", res), why)
                elif res in limits:  # the request defaults to the limit (API server defaulting)
                    self.add((key, step, "resources", "limits", res), why)

    def node_selector(self, st: Status, why: str) -> None:
        for d in st.details:
            sel = d.get("nodeSelector") if isinstance(d, dict) else None
            if isinstance(sel, str):
                key = sel.split("=", 1)[0]
                if key in _dict(self.spec.get("nodeSelector")):
                    self.add(("nodeSelector", key), why)
                    return
        affinity = _dict(_dict(self.spec.get("affinity")).get("nodeAffinity"))
        req = "requiredDuringSchedulingIgnoredDuringExecution"
        if req in affinity:
            terms = _list(_dict(affinity.get(req)).get("nodeSelectorTerms"))
            if len(terms) == 1:  # one term: it is the one no node matches
                self.add(("affinity", "nodeAffinity", req, "nodeSelectorTerms", 0), why)
            else:
                self.add(("affinity", "nodeAffinity", req), why)
        elif self.spec.get("nodeSelector"):
            self.add(("nodeSelector",), why)

    def inter_pod(self, st: Status, why: str) -> None:
        affinity = _dict(self.spec.get("affinity"))
        anti = any("anti-affinity" in r and "existing" not in r for r in st.reasons) or any(
            isinstance(d, dict) and "pods" in d for d in st.details
        )
        plain = any("pod affinity" in r for r in st.reasons) or any(
            isinstance(d, dict) and "term" in d and "pods" not in d for d in st.details
        )
        keys = {
            str(d.get("missingLabel") or str(d.get("domain") or "").split("=", 1)[0])
            for d in st.details
            if isinstance(d, dict)
        } - {""}
        req = "requiredDuringSchedulingIgnoredDuringExecution"
        for key, wanted in (("podAntiAffinity", anti), ("podAffinity", plain)):
            terms = _dict(affinity.get(key)).get(req)
            if not wanted or terms is None:
                continue
            terms = _list(terms)
            # The term itself when it is the only one, or the only one of the failing topologyKey.
            hits = [i for i, t in enumerate(terms) if _dict(t).get("topologyKey") in keys]
            if len(terms) == 1:
                self.add(("affinity", key, req, 0), why)
            elif len(hits) == 1:
                self.add(("affinity", key, req, hits[0]), why)
            else:
                self.add(("affinity", key, req), why)

    def spread(self, st: Status, why: str) -> None:
        keys = {
            str(d.get("topologyKey") or d.get("missingLabel") or "")
            for d in st.details
            if isinstance(d, dict)
        }
        constraints = _list(self.spec.get("topologySpreadConstraints"))
        hit = False
        for i, c in enumerate(constraints):
            if _dict(c).get("topologyKey") in keys:
                self.add(("topologySpreadConstraints", i), why)
                hit = True
        if not hit and constraints:
            self.add(("topologySpreadConstraints",), why)

    def ports(self, st: Status, why: str) -> None:
        wanted = set()
        for d in st.details:
            port = d.get("port") if isinstance(d, dict) else None
            if isinstance(port, str):
                wanted.add(port.rsplit("/", 1)[0].rsplit(":", 1)[-1])
        for key in ("containers", "initContainers"):
            for c in _list(self.spec.get(key)):
                c = _dict(c)
                for j, p in enumerate(_list(c.get("ports"))):
                    hp = _dict(p).get("hostPort")
                    if hp is not None and (not wanted or str(hp) in wanted):
                        self.add((key, ("name", str(c.get("name") or "")), "ports", j), why)

    def volumes(self, st: Status, why: str) -> None:
        claims = {str(d["claim"]) for d in st.details if isinstance(d, dict) and d.get("claim")}
        for d in st.details:
            if isinstance(d, dict) and isinstance(d.get("claims"), list):
                claims.update(str(x) for x in d["claims"])
        names = {c.split("/", 1)[-1] for c in claims}
        hit = False
        for v in _list(self.spec.get("volumes")):
            v = _dict(v)
            claim = _dict(v.get("persistentVolumeClaim")).get("claimName")
            if claim is not None and (not names or str(claim) in names):
                self.add(("volumes", ("name", str(v.get("name") or ""))), why)
                hit = True
        if self.w.kind == "StatefulSet":
            for vct in _list(self.w._extra.get("volumeClaimTemplates")):
                vname = str(_dict(_dict(vct).get("metadata")).get("name") or "")
                if not names or any(n.startswith(f"{vname}-{self.w.name}-") for n in names):
                    path: FieldPath = ("spec", "volumeClaimTemplates", ("metadata.name", vname))
                    if path not in self.seen:
                        self.seen.add(path)
                        self.out.append(Blame(path, why))
                    hit = True
        if not hit and self.spec.get("volumes"):
            self.add(("volumes",), why)

    def status(self, st: Status) -> None:
        from kdiagnose.scheduler import names as n

        why = "; ".join(st.reasons)
        plugin = st.plugin
        if plugin == n.NODE_RESOURCES_FIT:
            resources = [str(d["resource"]) for d in st.details if isinstance(d, dict) and d.get("resource")]
            if not resources:
                resources = [
                    r.removeprefix("Insufficient ") for r in st.reasons if r.startswith("Insufficient ")
                ]
            for res in resources:
                if res != "pods":
                    self.resource(res, f"Insufficient {res}")
        elif plugin == n.NODE_AFFINITY:
            self.node_selector(st, why)
        elif plugin == n.TAINT_TOLERATION:
            if "tolerations" in self.spec:
                self.add(("tolerations",), why)
        elif plugin == n.INTER_POD_AFFINITY:
            self.inter_pod(st, why)
        elif plugin == n.POD_TOPOLOGY_SPREAD:
            self.spread(st, why)
        elif plugin == n.NODE_PORTS:
            self.ports(st, why)
        elif plugin in _VOLUME_PLUGINS:
            self.volumes(st, why)
        elif plugin == n.DYNAMIC_RESOURCES and "resourceClaims" in self.spec:
            self.add(("resourceClaims",), why)


_VOLUME_PLUGINS = {
    "VolumeBinding",
    "VolumeZone",
    "VolumeRestrictions",
    "NodeVolumeLimits",
}


def blame(w: Workload, r: WorkloadResult) -> list[Blame]:
    """The manifest's fields the workload's failure (or warning) is about, most specific first."""
    b = _Blamer(w)
    if r.failure is None:
        if r.message and "PriorityClass" in r.message and "priorityClassName" in b.spec:
            b.add(("priorityClassName",), r.message)
        return b.out
    d = r.failure.diagnosis
    statuses: list[Status] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for st in [*d.verdicts.values(), *([d.absent] if d.absent is not None else [])]:
        if st.ok:
            continue
        key = (st.plugin, st.reasons)
        if key in seen and not st.details:
            continue
        seen.add(key)
        statuses.append(st)
    if d.prefilter is not None and not d.prefilter.ok:
        statuses.append(d.prefilter)
    for st in statuses:
        b.status(st)
    for rem in r.failure.remedies:
        if rem.kind == "right-size":
            for cname, reqs in _dict(rem.details.get("containers")).items():
                for res in _dict(reqs):
                    if cname == "(pod-level)":
                        b.add(("resources", "requests", str(res)), rem.summary)
                    else:
                        b.resource(str(res), rem.summary, {str(cname)})
        elif rem.kind == "toleration" and "tolerations" in b.spec:
            b.add(("tolerations",), rem.summary)
    return b.out
