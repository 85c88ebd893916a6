"""What-if replays shared by every remedy: modified pods, simulated nodes, filter-only replays, patches.

A remedy is proven by replaying the pod's profile on a modified copy (`Snapshot.derive`): PreFilter over the
whole copy (spread and affinity counts see every node), then Filter on the nodes that matter. Scoring and
PostFilter are not run: a pod with one feasible node is bound, whatever the scores.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, eq, is_, is_not
from typing import Any, cast

import yaml

from kdiagnose.model.objects import Node, Pod, Taint
from kdiagnose.model.quantity import QuantityError, parse_quantity
from kdiagnose.model.requests import finish_pod
from kdiagnose.model.snapshot import NodeInfo, Snapshot
from kdiagnose.scheduler.describe import describe_details, with_cause
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.scheduler.framework import SUCCESS, Code, CycleState, Status
from kdiagnose.scheduler.runner import _SKIP_KEY, Framework

__all__ = [
    "Context",
    "Owner",
    "Replay",
    "describe_status",
    "owner_of",
    "simulated_node",
    "template_from_pod",
]

Obj = dict[str, Any]

# Added by admission (DefaultTolerationSeconds), not part of the workload's template.
_DEFAULT_TOLERATION_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_TOLERATION_SECONDS = 300
LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"
_LIMIT_RANGER_PART = re.compile(
    r"^(?P<resources>.+) (?P<what>request|limit) for (?P<kind>init container|container) (?P<name>\S+)$"
)
# SetDefaults_PodSpec values of a live pod that a template need not restate.
_SPEC_DEFAULTS: dict[str, Any] = {
    "schedulerName": "default-scheduler",
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "securityContext": {},
    "enableServiceLinks": True,
}
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
# Labels a workload's controller sets per revision or per object: a selector on them misses the new pod.
_REVISION_LABELS = frozenset(
    {
        "pod-template-hash",
        "controller-revision-hash",
        "pod-template-generation",
        "controller-uid",
        "batch.kubernetes.io/controller-uid",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "batch.kubernetes.io/job-completion-index",
    }
)
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
# Longer patches go to a file rather than the command line.
_INLINE_PATCH_MAX = 300
_TEMPLATE_KINDS = (
    "Deployment",
    "StatefulSet",
    "Job",
    "CronJob",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
)


def is_transient_taint(t: Taint) -> bool:
    return t.key in TRANSIENT_TAINTS or t.key.startswith(TRANSIENT_TAINT_PREFIXES)


# ---------------------------------------------------------------------------------------------- owner


@dataclass(slots=True)
class Owner:
    """The workload whose pod template a patch targets (the pod itself when it has no controller)."""

    kind: str
    namespace: str
    name: str
    template_spec: Obj | None  # the workload's pod template spec when the input has the object

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def is_pod(self) -> bool:
        return self.kind == "Pod"

    @property
    def ref(self) -> str:
        """`deployment/web`: the kubectl TYPE/NAME argument."""
        return f"{self.kind.lower()}/{self.name}"

    @property
    def template_path(self) -> tuple[str, ...]:
        """Where the pod template spec sits in the owner object."""
        if self.is_pod:
            return ("spec",)
        if self.kind == "CronJob":
            return ("spec", "jobTemplate", "spec", "template", "spec")
        return ("spec", "template", "spec")


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
    CronJob for a Job's pod when the Job belongs to one (a Job's template is immutable: the fix goes to the
    CronJob's jobTemplate), else the direct controller; the Pod itself when it has none."""
    ref = pod.controller_ref()
    ns = pod.namespace
    if ref is None:
        return Owner("Pod", ns, pod.name, None)
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    obj = snapshot.get(kind, name, ns) if kind else None
    up = _controller(obj)
    if kind == "ReplicaSet":
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
    if kind == "Job" and up is not None and up.get("kind") == "CronJob":
        cname = str(up.get("name") or "")
        return Owner(
            "CronJob",
            ns,
            cname,
            _template_of("CronJob", snapshot.get("CronJob", cname, ns)) or _template_of(kind, obj),
        )
    return Owner(kind, ns, name, _template_of(kind, obj) if kind in _TEMPLATE_KINDS else None)


# ---------------------------------------------------------------------------------------------- template


def _tol_key(t: Obj) -> tuple[str, str, str, str, Any]:
    # An empty operator means Equal (core/v1 Toleration).
    return (
        str(t.get("key") or ""),
        str(t.get("operator") or "Equal"),
        str(t.get("value") or ""),
        str(t.get("effect") or ""),
        t.get("tolerationSeconds"),
    )


def _is_default_toleration(t: Obj) -> bool:
    """What plugin/pkg/admission/defaulttolerationseconds adds: Exists, NoExecute, 300s."""
    return (
        t.get("key") in _DEFAULT_TOLERATION_KEYS
        and t.get("operator") == "Exists"
        and t.get("effect") == "NoExecute"
        and t.get("tolerationSeconds") == DEFAULT_TOLERATION_SECONDS
    )


def _same_quantity(a: Any, b: Any) -> bool:
    try:
        return parse_quantity(str(a)) == parse_quantity(str(b))
    except QuantityError:
        return str(a) == str(b)


def _limit_ranger_set(annotation: str) -> dict[tuple[str, str], dict[str, set[str]]]:
    """(containers|initContainers, name) -> {requests|limits: resources} from the `kubernetes.io/limit-ranger`
    annotation (plugin/pkg/admission/limitranger/admission.go mergeContainerResources:
    "LimitRanger plugin set: cpu, memory request for container app; cpu limit for init container init")."""
    out: dict[tuple[str, str], dict[str, set[str]]] = {}
    text = annotation.removeprefix("LimitRanger plugin set: ")
    for part in text.split("; "):
        m = _LIMIT_RANGER_PART.match(part.strip())
        if m is None:
            continue
        field = "requests" if m["what"] == "request" else "limits"
        key = "initContainers" if m["kind"] == "init container" else "containers"
        out.setdefault((key, m["name"]), {}).setdefault(field, set()).update(
            r.strip() for r in m["resources"].split(",")
        )
    return out


def _unmerge_label_keys(term: Obj, labels: dict[str, str]) -> None:
    """Drop the requirements the API server merged into a term's labelSelector from matchLabelKeys (In) and
    mismatchLabelKeys (NotIn) with the pod's own label values (pkg/registry/core/pod/strategy.go): the
    template has only the keys, and a value such as pod-template-hash differs per revision."""
    sel = term.get("labelSelector")
    if not isinstance(sel, dict) or not isinstance(sel.get("matchExpressions"), list):
        return
    merged = [("In", k) for k in term.get("matchLabelKeys") or []] + [
        ("NotIn", k) for k in term.get("mismatchLabelKeys") or []
    ]
    added = [
        {"key": k, "operator": op, "values": [labels[k]]}
        for op, k in merged
        if isinstance(k, str) and k in labels
    ]
    if not added:
        return
    exprs = [e for e in sel["matchExpressions"] if e not in added]
    if exprs:
        sel["matchExpressions"] = exprs
    else:
        sel.pop("matchExpressions")


def template_from_pod(snapshot: Snapshot, obj: Obj) -> Obj:
    """The pod template spec a pod was most likely created from: its spec without what defaulting and
    admission added (pkg/apis/core/v1/defaults.go, LimitRanger, Priority, DefaultTolerationSeconds,
    RuntimeClass; the matchLabelKeys merges of pkg/registry/core/pod/strategy.go) and without the
    fields that restate a default. A patch built from it never asks to add or keep those."""
    spec: Obj = copy.deepcopy(obj.get("spec") or {})
    meta = obj.get("metadata") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    for key in ("nodeName", "priority", "preemptionPolicy", "serviceAccount"):
        spec.pop(key, None)
    for key, default in _SPEC_DEFAULTS.items():
        if spec.get(key) == default:
            spec.pop(key)
    rc_name = spec.get("runtimeClassName")
    rc = snapshot.get("RuntimeClass", str(rc_name)) if rc_name else None
    if rc_name:
        spec.pop("overhead", None)  # RuntimeClass admission sets it; a pod may not set another one
    scheduling = (rc or {}).get("scheduling") or {}
    rc_selector = scheduling.get("nodeSelector") or {}
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        kept = {k: v for k, v in selector.items() if rc_selector.get(k) != v}
        if kept:
            spec["nodeSelector"] = kept
        else:
            spec.pop("nodeSelector")
    rc_tols = {_tol_key(t) for t in scheduling.get("tolerations") or [] if isinstance(t, dict)}
    tols = [
        t
        for t in spec.get("tolerations") or []
        if isinstance(t, dict) and not _is_default_toleration(t) and _tol_key(t) not in rc_tols
    ]
    if tols:
        spec["tolerations"] = tols
    else:
        spec.pop("tolerations", None)
    set_by_lr = _limit_ranger_set(str((meta.get("annotations") or {}).get(LIMIT_RANGER_ANNOTATION) or ""))
    host_network = spec.get("hostNetwork") is True
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            res = c.get("resources")
            if isinstance(res, dict):
                for field, names in set_by_lr.get((key, str(c.get("name"))), {}).items():
                    rl = res.get(field)
                    if isinstance(rl, dict):
                        for r in names:
                            rl.pop(r, None)
                _drop_requests_equal_to_limits(res)
                for field in ("requests", "limits"):
                    if res.get(field) == {}:
                        res.pop(field)
            for port in c.get("ports") or []:
                if not isinstance(port, dict):
                    continue
                if port.get("protocol") == "TCP":
                    port.pop("protocol")
                if host_network and port.get("hostPort") == port.get("containerPort"):
                    port.pop("hostPort", None)
    if isinstance(spec.get("resources"), dict):
        _drop_requests_equal_to_limits(spec["resources"])
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        block = affinity.get(kind) or {}
        for term in block.get(_REQUIRED) or []:
            if isinstance(term, dict):
                _unmerge_label_keys(term, labels)
        for weighted in block.get(_PREFERRED) or []:
            if isinstance(weighted, dict) and isinstance(weighted.get("podAffinityTerm"), dict):
                _unmerge_label_keys(weighted["podAffinityTerm"], labels)
    for c in spec.get("topologySpreadConstraints") or []:
        if isinstance(c, dict):
            _unmerge_label_keys(c, labels)
    return spec


def _drop_requests_equal_to_limits(res: Obj) -> None:
    """SetDefaults_Pod copies a missing request from its limit: a request equal to its limit is implied."""
    reqs, lims = res.get("requests"), res.get("limits")
    if not isinstance(reqs, dict) or not isinstance(lims, dict):
        return
    for r in [r for r, q in reqs.items() if r in lims and _same_quantity(q, lims[r])]:
        reqs.pop(r)
    if not reqs:
        res.pop("requests")


# ---------------------------------------------------------------------------------------------- replay

_CODE = attrgetter("code")
_PLUGIN = attrgetter("plugin")

# What-if replays filter plugin-major (tests/test_fast_paths.py turns it off to compare with the plain path).
BATCH_FILTERS = True
# What-ifs that change what a few Filter plugins read re-run only those on the diagnosis's verdicts
# (`_refilter`; tests/test_fast_paths.py turns it off to compare with the full replay).
FAST_WHATIFS = True


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
    snapshot: Snapshot,
    scheduler: Scheduler,
    pod: Pod,
    nodes: Iterable[str] | None = None,
    since: tuple[Diagnosis, frozenset[str]] | None = None,
) -> Replay:
    """PreFilter on the whole snapshot, Filter on `nodes` (default: all), with the pod's profile.

    `since=(diagnosis, changed)`: `pod` differs from the diagnosed pod only in what the Filter plugins named
    in `changed` read, and `snapshot` from the diagnosed one only by that swap; then a node's Filter verdict
    can only change through those plugins (`_refilter`), the others' verdicts are the diagnosis's."""
    profile = next((p for p in scheduler.profiles if p.scheduler_name == pod.scheduler_name), None)
    if profile is None:
        return Replay({}, [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no profile",)))
    # Live clusters: pods nominated by an earlier preemption hold their node in the what-if too.
    fw = Framework(snapshot, profile, nominated=scheduler.nominated)
    state = CycleState()
    result, status, _ = fw.run_pre_filter(state, pod)
    names = list(nodes) if nodes is not None else [ni.name for ni in snapshot.node_infos]
    if not status.ok:
        return Replay(dict.fromkeys(names, status), [], status)
    if since is not None and nodes is None and result.node_names is None and FAST_WHATIFS:
        kept = _refilter(fw, state, pod, since[0], since[1], names)
        if kept is not None:
            return Replay(*kept)
    verdicts: dict[str, Status] = {}
    feasible: list[str] = []
    allowed = result.node_names
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't satisfy PreFilter's node set",))
    by_name = snapshot.node_info_by_name
    if BATCH_FILTERS and len(names) > 1:
        # Plugin-major over the nodes to check (Framework._filter_nodes, the replay's own path: filter_many,
        # the same first-failure verdict per node as running the filters node by node).
        checked = [
            ni
            for name in names
            if (ni := by_name.get(name)) is not None and (allowed is None or name in allowed)
        ]
        got = fw._filter_nodes(state, pod, checked)
        for name in names:
            if name not in by_name:
                continue
            s = got.get(name, absent)
            verdicts[name] = s
            if s.ok:
                feasible.append(name)
        return Replay(verdicts, feasible)
    for name in names:
        ni = by_name.get(name)
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


def _refilter(
    fw: Framework, state: CycleState, pod: Pod, base: Diagnosis, changed: frozenset[str], names: list[str]
) -> tuple[dict[str, Status], list[str]] | None:
    """Every node's Filter verdict (and the feasible nodes, in order) for a pod that differs from `base.pod`
    only in what the plugins in `changed` read, or None when the diagnosis cannot serve as the base (then
    the caller filters every node).

    A node the diagnosis rejected at plugin P (Framework._filter_nodes: the first failing Filter in profile
    order) passed every plugin before P. In the what-if the plugins outside `changed` see the same pod fields
    and the same nodes, so they give the same verdicts (Filter plugins are pure, the premise of the replay's
    plugin-major path): before P only the changed plugins need to run; if P itself is unchanged, P rejects the
    node again with the same Status, else every plugin from P on runs. The first failure is the verdict, as in
    the plain path; a node every plugin passes is feasible.

    Column at a time over the nodes' positions (C-level maps, one list per plugin), not a dict operation per
    node per plugin: at 5,000 nodes every what-if of every unschedulable pod comes through here."""
    if (
        base.prefilter is not None
        or base.preenqueue is not None
        or base.prefilter_node_names is not None
        or base.nominated_node_used
        or pod.nominated_node_name
        or base.pod.nominated_node_name
        or base.profile != pod.scheduler_name
        or fw.has_nominated_pods(pod)
        or list(base.verdicts) != names
    ):
        return None
    skipped: set[str] = state.read(_SKIP_KEY) or set()
    plugins = fw.filter_plugins
    n_pl = len(plugins)
    index = {pl.name: i for i, pl in enumerate(plugins)}
    stats = list(base.verdicts.values())
    found: list[NodeInfo | None] = list(map(fw.snapshot.node_info_by_name.get, names))
    codes = list(map(_CODE, stats))
    if any(map(is_, found, repeat(None))) or Code.ERROR in codes:
        return None
    nis = cast(list[NodeInfo], found)
    # The plugin that rejected each node in the diagnosis (n_pl: it passed every plugin; -1: unknown).
    ks = [
        n_pl if c is Code.SUCCESS else index.get(p, -1)
        for c, p in zip(codes, map(_PLUGIN, stats), strict=True)
    ]
    at: dict[int, list[int]] = {k: list(compress(range(len(ks)), map(eq, ks, repeat(k)))) for k in set(ks)}
    if -1 in at:
        return None
    res: list[Status | None] = [None] * len(names)  # the what-if's rejection of each node, once decided
    # Nodes whose diagnosis plugin is a changed one and was reached: every plugin from there on runs on them.
    rerun: list[int] = []
    for i, pl in enumerate(plugins):
        mine = pl.name in changed
        run = pl.name not in skipped
        if mine:
            rerun.extend(at.get(i, ()))
        elif i in at:
            # Plugin i is unchanged: it rejects the nodes it rejected, unless a changed plugin before it did.
            still = list(compress(at[i], map(is_, map(res.__getitem__, at[i]), repeat(None))))
            if still:
                if not run:
                    return None  # an unchanged plugin that ran in the diagnosis is skipped: not the premise
                for j in still:
                    res[j] = stats[j]
        if not run:
            continue
        if mine:
            batch = list(compress(range(len(res)), map(is_, res, repeat(None))))  # every node not decided
        elif rerun:
            batch = rerun = list(compress(rerun, map(is_, map(res.__getitem__, rerun), repeat(None))))
        else:
            continue
        if not batch:
            continue
        got = pl.filter_many(state, pod, list(map(nis.__getitem__, batch)))
        if len(got) != len(batch):
            raise ValueError(f"{pl.name}: {len(got)} verdicts for {len(batch)} nodes")
        bad = list(map(is_not, got, repeat(SUCCESS)))
        wrapped = fw.wrap_rejections(pl, list(compress(got, bad)))
        for j, w in compress(
            zip(compress(batch, bad), wrapped, strict=True), map(is_not, wrapped, repeat(None))
        ):
            res[j] = w
    undecided = list(map(is_, res, repeat(None)))
    feasible = list(compress(names, undecided))
    for j in compress(range(len(res)), undecided):
        res[j] = SUCCESS
    return dict(zip(names, res, strict=True)), feasible  # type: ignore[arg-type]


def with_bound(snapshot: Snapshot, binds: Sequence[tuple[Pod, str]]) -> Snapshot:
    """A copy of `snapshot` with pending pods bound to (existing or extra) nodes; the original is untouched
    (copies of the pods are bound, on the copy's own clones of the NodeInfos they land on)."""
    out = snapshot.derive(remove_pods=[p for p, _ in binds])
    for pod, node_name in binds:
        ni = out.own_node_info(node_name)
        if ni is None:
            continue
        bound = copy.copy(pod)
        bound.node_name = node_name
        ni.add_pod(bound)
        out.pods.append(bound)
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
        self._base: Obj | None = None
        self._failing: dict[tuple[str, ...], list[str]] = {}
        self._by_plugin: dict[str, list[str]] | None = None

    # ---- replays

    def replay(
        self, snapshot: Snapshot | None = None, pod: Pod | None = None, nodes: Iterable[str] | None = None
    ) -> Replay:
        self.replays += 1
        return filter_replay(snapshot or self.snapshot, self.scheduler, pod or self.pod, nodes)

    def replay_modified(
        self, pod: Pod, nodes: Iterable[str] | None = None, changed: frozenset[str] | None = None
    ) -> Replay:
        """Replay a modified copy of the pending pod in place of the original. `changed`: the only Filter
        plugins that read what the modification changed (their verdicts are re-run on the diagnosis's)."""
        if changed is not None and nodes is None:
            self.replays += 1
            snap = self.snapshot.derive(replace_pod=(self.pod, pod))
            return filter_replay(snap, self.scheduler, pod, since=(self.d, changed))
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
        # Asked by several remedy kinds over the same verdicts (5,000 nodes each time): once per set.
        hit = self._failing.get(plugins)
        if hit is None:
            if self._by_plugin is None:
                # One pass over the verdicts for every plugin asked (each kind asks for its own).
                by: dict[str, list[str]] = {}
                for name, s in self.d.verdicts.items():
                    if s.code != Code.SUCCESS:
                        by.setdefault(s.plugin, []).append(name)
                self._by_plugin = by
            if len(plugins) == 1:
                hit = self._by_plugin.get(plugins[0], [])
            else:
                hit = [
                    n for n, s in self.d.verdicts.items() if s.code != Code.SUCCESS and s.plugin in plugins
                ]
            self._failing[plugins] = hit
        return list(hit)

    # ---- patches

    def base_spec(self) -> Obj:
        """The pod template spec the patch edits: the workload's when the input has it, else the pod's
        spec without what defaulting and admission added (`template_from_pod`)."""
        if self.owner.template_spec is not None:
            return self.owner.template_spec
        cached: Obj | None = self._base
        if cached is None:
            cached = self._base = template_from_pod(self.snapshot, self.pod.raw or {})
        return cached

    def patch_body(self, spec_fragment: Obj) -> Obj:
        body: Obj = spec_fragment
        for key in reversed(self.owner.template_path):
            body = {key: body}
        return body

    def patch(self, spec_fragment: Obj) -> str:
        """A strategic-merge patch for the owner's pod template (the pod's spec for a bare pod)."""
        what = "the pod's manifest" if self.owner.is_pod else str(self.owner)
        head = f"# strategic merge patch for {what}\n"
        return head + yaml.safe_dump(
            self.patch_body(spec_fragment), sort_keys=False, default_flow_style=False
        )

    def _kubectl_patch(self, spec_fragment: Obj) -> str:
        text = json.dumps(self.patch_body(spec_fragment), separators=(",", ":"))
        arg = f"-p {shlex.quote(text)}" if len(text) <= _INLINE_PATCH_MAX else "--patch-file patch.yaml"
        return f"kubectl patch {self.owner.ref} -n {self.owner.namespace} --type strategic {arg}"

    def apply_hint(self, spec_fragment: Obj, added_tolerations: Sequence[Obj] = ()) -> str:
        """The kubectl command that applies the change, what happens to the pending pod, how to roll back.
        `added_tolerations`: the change only adds these tolerations, which a bare pod accepts live."""
        o = self.owner
        ns = o.namespace
        if o.is_pod:
            if added_tolerations:
                has = isinstance((self.pod.raw or {}).get("spec", {}).get("tolerations"), list)
                ops = (
                    [{"op": "add", "path": "/spec/tolerations/-", "value": t} for t in added_tolerations]
                    if has
                    else [{"op": "add", "path": "/spec/tolerations", "value": list(added_tolerations)}]
                )
                cmd = f"kubectl patch pod/{o.name} -n {ns} --type json -p {shlex.quote(json.dumps(ops, separators=(',', ':')))}"
                return (
                    f"{cmd} (a pod accepts added tolerations live); also change the manifest that creates the pod; "
                    "tolerations cannot be removed from a live pod: to roll back, re-create it from the old manifest"
                )
            return (
                "the pod has no controller and a live pod's spec cannot change these fields: change the manifest "
                "(or tool) that creates it and re-create the pod (kubectl replace --force -f pod.yaml); keep the "
                "old manifest to roll back"
            )
        cmd = self._kubectl_patch(spec_fragment)
        if o.kind == "Deployment":
            return f"{cmd} (a new ReplicaSet replaces the pending pod); roll back with kubectl rollout undo {o.ref} -n {ns}"
        if o.kind == "DaemonSet":
            return f"{cmd} (the DaemonSet replaces its pods); roll back with kubectl rollout undo {o.ref} -n {ns}"
        if o.kind == "StatefulSet":
            return (
                f"{cmd}; with podManagementPolicy OrderedReady (the default) the StatefulSet waits on the Pending "
                f"pod instead of replacing it: then kubectl delete pod/{self.pod.name} -n {ns} so it is "
                f"re-created from the new template; roll back with kubectl rollout undo {o.ref} -n {ns}"
            )
        if o.kind in ("ReplicaSet", "ReplicationController"):
            return (
                f"{cmd}; a {o.kind} does not replace existing pods when its template changes: then "
                f"kubectl delete pod/{self.pod.name} -n {ns} so it is re-created from the new template; "
                "re-apply the old template to roll back"
            )
        if o.kind == "CronJob":
            return (
                f"{cmd} (Jobs created from the next schedule on get the change; the current Job keeps its "
                "template); re-apply the old jobTemplate to roll back"
            )
        if o.kind == "Job":
            return (
                f"a Job's pod template is immutable: re-create Job {ns}/{o.name} with the change "
                f"(kubectl get {o.ref} -n {ns} -o yaml, edit spec.template.spec, kubectl replace --force -f); "
                "keep the old manifest to roll back"
            )
        return f"{cmd}; re-apply the previous template to roll back"

    def change(
        self, spec_fragment: Obj, nodes: Sequence[str], added_tolerations: Sequence[Obj] = ()
    ) -> dict[str, Any]:
        """The Remedy fields of a change to the owner's pod template: `patch` (YAML text), `patch_document`,
        `commands` (complete shell commands, in order), `apply_note`, `verify` and `rollback` (one command each,
        or a `# ...` comment when no command does it)."""
        o, ns = self.owner, self.owner.namespace
        body = self.patch_body(spec_fragment)
        # Always inline: one complete command on one line, whatever the patch's length.
        text = json.dumps(body, separators=(",", ":"))
        patch_cmd = f"kubectl patch {o.ref} -n {ns} --type strategic -p {shlex.quote(text)}"
        commands: list[str] = []
        delete_pod = f"kubectl delete pod/{self.pod.name} -n {ns}"
        undo = f"kubectl rollout undo {o.ref} -n {ns}"
        note, rollback = "", "# re-apply the previous template"
        if o.is_pod:
            if added_tolerations:
                has = isinstance((self.pod.raw or {}).get("spec", {}).get("tolerations"), list)
                ops = (
                    [{"op": "add", "path": "/spec/tolerations/-", "value": t} for t in added_tolerations]
                    if has
                    else [{"op": "add", "path": "/spec/tolerations", "value": list(added_tolerations)}]
                )
                ops_text = json.dumps(ops, separators=(",", ":"))
                commands = [f"kubectl patch pod/{o.name} -n {ns} --type json -p {shlex.quote(ops_text)}"]
                note = "a pod accepts added tolerations live; also change the manifest that creates the pod"
                rollback = (
                    "# tolerations cannot be removed from a live pod: re-create it from the old manifest"
                )
            else:
                commands = ["kubectl replace --force -f pod.yaml"]
                note = (
                    "the pod has no controller and a live pod's spec cannot change these fields: apply the patch "
                    "to the manifest that creates it (pod.yaml), then re-create the pod"
                )
                rollback = "# re-create the pod from the old manifest"
        elif o.kind == "Job":
            commands = [
                f"kubectl get {o.ref} -n {ns} -o yaml > job.yaml",
                "kubectl replace --force -f job.yaml",
            ]
            note = (
                f"a Job's pod template is immutable: edit spec.template.spec in job.yaml with the patch, then "
                f"re-create Job {ns}/{o.name}"
            )
            rollback = "# re-create the Job from the old manifest"
        else:
            commands.append(patch_cmd)
            if o.kind == "Deployment":
                note, rollback = "a new ReplicaSet replaces the pending pod", undo
            elif o.kind == "DaemonSet":
                note, rollback = "the DaemonSet replaces its pods", undo
            elif o.kind == "StatefulSet":
                commands.append(delete_pod)
                note = (
                    "with podManagementPolicy OrderedReady (the default) the StatefulSet waits on the Pending pod "
                    "instead of replacing it: the delete re-creates it from the new template"
                )
                rollback = undo
            elif o.kind in ("ReplicaSet", "ReplicationController"):
                commands.append(delete_pod)
                note = (
                    f"a {o.kind} does not replace existing pods when its template changes: the delete re-creates "
                    "the pod from the new template"
                )
            elif o.kind == "CronJob":
                note = "Jobs created from the next schedule on get the change; the current Job keeps its template"
                rollback = "# re-apply the old jobTemplate"
        return {
            "patch": self.patch(spec_fragment),
            "patch_document": body,
            "commands": commands,
            "apply_note": note,
            "verify": self.verify_command(nodes),
            "rollback": rollback,
        }

    def _verify_parts(self, nodes: Sequence[str]) -> tuple[str, str]:
        """The kubectl command listing the workload's pods, and the nodes it should land on (first three)."""
        where = ", ".join(nodes[:3]) + (f" (+{len(nodes) - 3} more)" if len(nodes) > 3 else "")
        sel = ",".join(f"{k}={v}" for k, v in sorted(self.pod.labels.items()) if k not in _REVISION_LABELS)
        pods = (
            f"kubectl get pods -n {self.pod.namespace} -l {shlex.quote(sel)} -o wide"
            if sel and not self.owner.is_pod
            else f"kubectl get pod/{self.pod.name} -n {self.pod.namespace} -o wide"
        )
        return pods, where

    def verify_command(self, nodes: Sequence[str]) -> str:
        """One command that shows whether the pod is bound, its expected output in a trailing comment."""
        pods, where = self._verify_parts(nodes)
        one = "" if len(nodes) == 1 else "one of "
        return f"{pods}  # NODE: {one}{where}"

    def verify_hint(self, nodes: Sequence[str]) -> str:
        pods, where = self._verify_parts(nodes)
        one = "" if len(nodes) == 1 else " one of"
        return f"{pods}: the pod should be bound to{one} {where} (NODE column)"


# ---------------------------------------------------------------------------------------------- text


def describe_status(s: Status) -> str:
    """`reason: concrete cause` for notes: the scheduler's reason plus its details in the words the
    per-node causes use (scheduler/describe.py: "needs 12 CPU, 4 free of 4 allocatable"), not `k=v`;
    joined by with_cause, not parenthesized (the cause has parentheses of its own)."""
    return with_cause(", ".join(s.reasons) or s.code.label, describe_details(s.details))
