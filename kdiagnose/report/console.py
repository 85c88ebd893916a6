"""`-o human`: the console report an on-call engineer reads, laid out for 80 columns, color only on a TTY.

Per pod, most actionable first: a title with a one-line summary ("3 rejected by taints, 2 by cpu; fix: …"),
the scheduler's message verbatim (soft-wrapped, never altered), the rejected nodes grouped by reason (and
collapsed by pool for big clusters), what would make it schedulable, then details (scores, what the cluster
recorded, notes). Notes shared by several pods are printed once at the end.

The layout is computed here rather than by rich tables so that long unbreakable tokens (taint keys, node names)
wrap at spaces, node names stay whole, and every line fits the width. Object names are never parsed as markup
(markup=False, Text objects) and control characters are escaped.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from kdiagnose.model.quantity import format_quantity
from kdiagnose.scheduler.framework import Code

if TYPE_CHECKING:
    from rich.console import Console

    from kdiagnose.report.interface import PodReport, Remedy, Report
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.framework import Status

__all__ = ["RenderOptions", "describe_details", "glance", "render", "render_text"]

# A reason group with more nodes than this is collapsed by pool and cause.
_MAX_ROWS_PER_GROUP = 6
# More reason groups than this (e.g. one per tenant taint) are merged per plugin.
_MAX_GROUPS = 8
# Pods listed in the overview at the top of a multi-pod report.
_MAX_OVERVIEW = 20
_SHORT_PLUGIN = {
    "TaintToleration": "Taint",
    "NodeAffinity": "NodeAff",
    "NodeResourcesFit": "Fit",
    "VolumeBinding": "Volume",
    "PodTopologySpread": "Spread",
    "InterPodAffinity": "PodAff",
    "NodeResourcesBalancedAllocation": "Balanced",
    "ImageLocality": "Image",
    "DynamicResources": "DRA",
}
# What a rejection is "by", in the one-line summary.
_BY = {
    "TaintToleration": "taints",
    "NodeAffinity": "node affinity/selector",
    "NodeUnschedulable": "cordon",
    "NodeName": "nodeName",
    "NodePorts": "host ports",
    "InterPodAffinity": "pod affinity",
    "PodTopologySpread": "topology spread",
    "VolumeBinding": "volumes",
    "VolumeZone": "volume zone",
    "VolumeRestrictions": "volumes",
    "NodeVolumeLimits": "volume limits",
    "DynamicResources": "devices (DRA)",
}
_STATUS_RANK = {"unschedulable": 0, "gated": 1, "ignored": 2, "schedulable": 3, "bound": 4}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(slots=True)
class RenderOptions:
    top: int = 5
    all_nodes: bool = False
    all_remedies: bool = False
    color: bool | None = None  # None: only on a TTY (and never with NO_COLOR)
    width: int | None = None
    max_remedies: int = 3
    extra: dict[str, Any] = field(default_factory=dict)


def _safe(text: str) -> str:
    """Escape control characters: object names must not drive the terminal (Kubernetes names cannot hold
    them, so a real cluster's text is unchanged)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# ---------------------------------------------------------------------------------------------- causes


def _bytes(n: int) -> str:
    """Binary units: exact when that reads well (6Gi, 512Mi), else two decimals of the largest unit (4.19Gi
    rather than 4394396Ki)."""
    exact = format_quantity("memory", n)
    digits = exact.rstrip("KMGTPEikmgtpe")
    if not digits.isdigit() or int(digits) < 1024:
        return exact
    for suffix, mult in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if n >= mult:
            text = f"{n / mult:.2f}".rstrip("0").rstrip(".")
            return exact if float(text) >= 1024 else text + suffix  # 1023.999Mi must not read as 1024Mi
    return exact  # pragma: no cover - n >= 1024 always matches Ki


def _amount(resource: str, n: Any) -> str:
    if isinstance(n, tuple) and len(n) == 2:
        return f"{_amount(resource, n[0])} to {_amount(resource, n[1])}"
    if not isinstance(n, int) or isinstance(n, bool):
        return str(n)
    if resource == "cpu":
        return f"{n // 1000}" if n % 1000 == 0 else f"{n / 1000:g}"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return _bytes(n)
    return format_quantity(resource, n)


def _fit(d: dict[str, Any]) -> str:
    r = str(d.get("resource"))
    label = {"cpu": " CPU", "pods": " pod(s)"}.get(r, f" {r}")
    req, free, alloc = d.get("requested"), d.get("free"), d.get("allocatable")
    want = _amount(r, req)
    text = f"needs {want}{label}"
    if free is not None:
        have = _amount(r, free)
        if have == want and free != req and isinstance(free, int):
            have = format_quantity(r, free)  # rounding must not hide the shortfall
        text += f", {have} free"
    if alloc is not None:
        text += f" of {_amount(r, alloc)} allocatable"
    return text


def _value(v: Any) -> str:
    if isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return f"{v[0]} to {v[1]}"
    if isinstance(v, list | tuple | set | frozenset):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def _pods(v: Any, limit: int = 3) -> str:
    items = [str(x) for x in v] if isinstance(v, list | tuple) else [str(v)]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _one(d: dict[str, Any]) -> str:
    """Plain words for one details dict: known keys get sentences, the rest `k=v`."""
    d = dict(d)
    parts: list[str] = []
    if "resource" in d and "requested" in d:
        parts.append(_fit(d))
        for k in ("resource", "requested", "free", "allocatable"):
            d.pop(k, None)
    if "taint" in d:
        parts.append(f"taint {d.pop('taint')} not tolerated")
    if "nodeSelector" in d:
        actual = d.pop("nodeValue", None)
        has = "label missing" if actual is None else f"node has {actual!r}"
        parts.append(f"nodeSelector {d.pop('nodeSelector')} ({has})")
    if "nodeAffinity" in d:
        terms = d.pop("nodeAffinity")
        if isinstance(terms, list):
            parts.append("no required term matches: " + " | ".join(str(t) for t in terms if t))
        else:
            parts.append(f"node affinity: {terms}")
    if d.get("unschedulable") is True:
        d.pop("unschedulable")
        parts.append("node is cordoned (spec.unschedulable)")
    if "nodeName" in d:
        parts.append(f"pod is pinned to node {d.pop('nodeName')}")
    if "port" in d:
        text = f"host port {d.pop('port')}"
        if "usedBy" in d:
            text += f" used by {d.pop('usedBy')}"
            used_as = d.pop("usedAs", None)
            if used_as:
                text += f" ({used_as})"
        parts.append(text)
    if "term" in d:
        # InterPodAffinity (filtering.go): "pods" is present only for the incoming pod's anti-affinity.
        term = d.pop("term")
        if "missingLabel" in d:
            parts.append(f"pod affinity term {term}: node has no {d.pop('missingLabel')} label")
        elif "pods" in d:
            n = d.pop("matchingPods", None)
            parts.append(
                f"anti-affinity term {term}: {n if n is not None else 'some'} matching pod(s) in "
                f"{d.pop('domain', 'the domain')} ({_pods(d.pop('pods'))})"
            )
        else:
            d.pop("matchingPods", None)
            where = d.pop("domain", "the domain")
            text = f"affinity term {term}: no matching pod in {where}"
            if d.pop("matchingPodsInCluster", None) == 0:
                text += " (none in the cluster)"
            parts.append(text)
    if "podsWithAntiAffinity" in d:
        parts.append(
            f"existing pod(s) {_pods(d.pop('podsWithAntiAffinity'))} forbid this pod in {d.pop('domain', 'the domain')}"
        )
    if "missingLabel" in d:
        parts.append(f"node has no {d.pop('missingLabel')} label")
        if "constraint" in d:
            parts[-1] += f" (spread constraint {d.pop('constraint')})"
    if "skew" in d and "maxSkew" in d:
        # PodTopologySpread (filtering.go): matching pods in the domain + self - global minimum > maxSkew.
        dom = d.pop("domain", None)
        key = d.pop("topologyKey", "domain")
        text = f"skew would be {_value(d.pop('skew'))} > maxSkew {_value(d.pop('maxSkew'))}"
        if dom is not None:
            text += f" in {key}={dom}"
        elif key != "domain":
            text += f" in {key}"
        counts = []
        if "matchingPods" in d:
            counts.append(f"{_value(d.pop('matchingPods'))} matching pod(s) there")
        if "globalMinimum" in d:
            counts.append(f"minimum {_value(d.pop('globalMinimum'))}")
        if counts:
            text += f" ({', '.join(counts)})"
        parts.append(text)
        for k in ("constraint", "selfMatch", "eligibleDomains"):
            d.pop(k, None)
        if d.get("minDomains") in (None, 1):
            d.pop("minDomains", None)
    if "claim" in d:
        claim = d.pop("claim")
        if d.pop("no_matching_pv", None):
            prov = d.pop("provisioner", None)
            parts.append(
                f"claim {claim}: no PersistentVolume matches"
                + (f" (provisioner {prov} cannot create one)" if prov else "")
            )
        elif d.get("allowed_topologies") is False:
            d.pop("allowed_topologies")
            parts.append(
                f"claim {claim}: StorageClass {d.pop('storage_class', '?')} allowedTopologies exclude the node"
            )
        elif "storage_class" in d and "requested" in d:
            req = d.pop("requested")
            amount = _bytes(int(req)) if str(req).isdigit() else str(req)
            parts.append(
                f"claim {claim}: StorageClass {d.pop('storage_class')} has no capacity for {amount} on the node"
            )
        elif "missing_pv" in d:
            parts.append(f"claim {claim}: bound PersistentVolume {d.pop('missing_pv')} not found")
        elif "pv" in d:
            parts.append(
                f"claim {claim}: bound PersistentVolume {d.pop('pv')}'s node affinity excludes the node"
            )
        elif "selected_node" in d:
            parts.append(f"claim {claim}: provisioning was started for node {d.pop('selected_node')}")
        else:
            parts.append(f"claim {claim}")
    if "pv" in d and "label" in d:
        vals = d.pop("pv_values", None)
        node_value = d.pop("node_value", None)
        parts.append(
            f"PersistentVolume {d.pop('pv')} needs {d.pop('label')} in {_value(vals)} "
            f"(node has {'none' if node_value is None else repr(node_value)})"
        )
    if "driver" in d and "limit" in d:
        parts.append(
            f"CSI driver {d.pop('driver')}: {d.pop('attached', '?')} attached + {d.pop('new', '?')} new "
            f"> limit {d.pop('limit')}"
        )
    if "claims" in d:
        parts.append(f"claim(s) {_pods(d.pop('claims'), 5)}")
    if "pv" in d and len(d) == 1:
        parts.append(f"PersistentVolume {d.pop('pv')}")
    if "deviceClass" in d:
        parts.append(f"DeviceClass {d.pop('deviceClass')}")
    if "deallocate" in d:
        parts.append(f"claim {d.pop('deallocate')} would be deallocated")
    if "volume" in d and "pod" in d:
        parts.append(f"volume {d.pop('volume')} is in use by {d.pop('pod')}")
    parts.extend(f"{k}={_value(v)}" for k, v in d.items() if v is not None and v != "" and v != [])
    return ", ".join(parts)


def describe_details(details: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    """Status.details in plain words (details keys are chosen by plugin authors; unknown keys as k=v)."""
    return "; ".join(x for x in (_one(d) for d in details if isinstance(d, dict)) if x)


def _cause(st: Status) -> str:
    """The concrete cause when the plugin gave details (the reason is in the group title), else the reason."""
    return describe_details(st.details) or ", ".join(st.reasons) or st.code.label


_VARIES = object()


def _merge(statuses: list[Status]) -> str:
    """One cause for many nodes: keys equal everywhere are kept, varying integers become ranges, other
    varying keys are dropped. Empty when the details differ in shape."""
    shapes = {tuple(tuple(sorted(x)) for x in st.details if isinstance(x, dict)) for st in statuses}
    if len(shapes) != 1 or not next(iter(shapes)):
        return ""
    merged: list[dict[str, Any]] = []
    for i in range(len(statuses[0].details)):
        values = [st.details[i] for st in statuses]
        out: dict[str, Any] = {}
        for k in values[0]:
            vs = [v.get(k) for v in values]
            first = vs[0]
            if all(v == first for v in vs):
                out[k] = first
            elif all(isinstance(v, int) and not isinstance(v, bool) for v in vs):
                ints = [int(v) for v in vs if v is not None]
                out[k] = (min(ints), max(ints))
            else:
                out[k] = _VARIES
        if any(v is _VARIES for v in out.values()) and set(out) & {"taint", "nodeSelector", "port"}:
            return ""  # the varying key is the cause itself: a merged sentence would be empty or wrong
        merged.append({k: v for k, v in out.items() if v is not _VARIES})
    return describe_details(merged)


# ---------------------------------------------------------------------------------------------- layout


class _Wrapper(textwrap.TextWrapper):
    """Breaks at spaces; a token wider than a whole line (a long pool or label list) breaks after `,` `/` `=`
    or `:` rather than at an arbitrary character."""

    def _split(self, text: str) -> list[str]:
        room = self.width - len(self.subsequent_indent)
        out: list[str] = []
        for chunk in super()._split(text):
            if len(chunk) > room and not chunk.isspace():
                out.extend(x for x in re.split(r"(?<=[,/=:])", chunk) if x)
            else:
                out.append(chunk)
        return out


def _wrap(text: str, width: int, initial: str = "", subsequent: str = "") -> list[str]:
    w = _Wrapper(
        width=width,
        initial_indent=initial,
        subsequent_indent=subsequent,
        break_on_hyphens=False,
        break_long_words=True,
    )
    return w.wrap(text)


class _Out:
    """Pre-wrapped lines: word-wrapped at spaces only (never inside a taint key or node name unless the token
    alone is wider than the line), with hanging indents."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.width = max(console.width, 40)

    def blank(self) -> None:
        self.console.print()

    def line(self, text: str, style: str | None = None) -> None:
        from rich.text import Text

        self.console.print(Text(_safe(text), style=style or ""), soft_wrap=True)

    def verbatim(self, text: str, style: str | None = None) -> None:
        """Printed as is; the terminal soft-wraps it, so a copy is the exact text."""
        self.line(text, style)

    def para(self, text: str, indent: int = 0, hang: int | None = None, style: str | None = None) -> None:
        for ln in self.wrap(text, indent, hang):
            self.line(ln, style)

    def wrap(self, text: str, indent: int = 0, hang: int | None = None) -> list[str]:
        hang = indent + 2 if hang is None else hang
        return _wrap(_safe(text), self.width, " " * indent, " " * hang) or [" " * indent]

    def columns(self, rows: list[list[str]], indent: int, wrap_last: bool = True) -> None:
        """Aligned columns (no box characters: node names copy cleanly); the last column wraps under itself.
        When it would be narrower than 30 columns, each row is stacked: the cells, then the last one below."""
        if not rows:
            return
        n = len(rows[0])
        widths = [max(len(r[i]) for r in rows) for i in range(n - 1)]
        lead = indent + sum(w + 2 for w in widths)
        room = self.width - lead
        longest = max((len(t) for r in rows for t in r[-1].split()), default=0)
        if (room >= 30 and longest <= room) or not wrap_last:
            for r in rows:
                head = " " * indent + "".join(c.ljust(w + 2) for c, w in zip(r, widths, strict=False))
                if not wrap_last:
                    self.line((head + r[-1]).rstrip())
                    continue
                wrapped = _wrap(_safe(r[-1]), room) or [""]
                self.line((head + wrapped[0]).rstrip())
                for more in wrapped[1:]:
                    self.line(" " * lead + more)
            return
        for r in rows:
            self.para("  ".join(c for c in r[:-1] if c), indent, indent + 4)
            self.para(r[-1], indent + 4, indent + 6)


def _names(nodes: list[str], limit: int = 3) -> str:
    shown = ", ".join(nodes[:limit])
    return (
        f"{len(nodes)} nodes: {shown}, …"
        if len(nodes) > limit
        else (shown if len(nodes) == 1 else f"{len(nodes)} nodes: {shown}")
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


# ---------------------------------------------------------------------------------------------- groups


@dataclass(slots=True)
class _Group:
    plugin: str
    title: str  # the scheduler's reason(s)
    members: list[tuple[str, Status]]
    not_evaluated: bool = False


def _groups(d: Diagnosis, all_nodes: bool) -> list[_Group]:
    """Rejected nodes grouped by (plugin, reasons), biggest first; many small groups merge per plugin."""
    by: dict[tuple[str, tuple[str, ...]], list[tuple[str, Status]]] = {}
    for name, st in d.verdicts.items():
        if not st.ok:
            by.setdefault((st.plugin or "", st.reasons), []).append((name, st))
    groups = [_Group(p, ", ".join(r) or "rejected", m) for (p, r), m in by.items()]
    if not all_nodes and len(groups) > _MAX_GROUPS:
        per: dict[str, list[_Group]] = {}
        for g in groups:
            per.setdefault(g.plugin, []).append(g)
        groups = []
        for plugin, gs in per.items():
            if len(gs) == 1:
                groups.append(gs[0])
                continue
            biggest = max(gs, key=lambda g: len(g.members))
            title = f"{len(gs)} different reasons, e.g. {biggest.title}"
            groups.append(_Group(plugin, title, [m for g in gs for m in g.members]))
    groups.sort(key=lambda g: (-len(g.members), g.plugin, g.title))
    if d.not_evaluated and d.absent is not None:
        groups.append(
            _Group(
                d.absent.plugin or "PreFilter",
                ", ".join(d.absent.reasons) or "not evaluated",
                [(n, d.absent) for n in d.not_evaluated],
                not_evaluated=True,
            )
        )
    return groups


def _pool_summary(members: list[tuple[str, Status]], pools: dict[str, str]) -> str:
    counts = Counter(pools.get(n) for n, _ in members)
    counts.pop(None, None)
    if not counts:
        return ""
    if len(counts) == 1:
        return f"pool {next(iter(counts))}"
    ranked = counts.most_common()
    shown = ", ".join(f"{p} {c}" for p, c in ranked[:4])
    return f"pools {shown}" + (f", +{len(ranked) - 4} more" if len(ranked) > 4 else "")


def _render_group(out: _Out, g: _Group, pools: dict[str, str], all_nodes: bool, brief: bool = False) -> None:
    n = len(g.members)
    where = _pool_summary(g.members, pools)
    nodes = _count(n, "node") + (f" in {where}" if where.startswith("pool ") else "")
    if g.not_evaluated:
        by = "PreFilter" if g.plugin in ("", "PreFilter") else f"{g.plugin} at PreFilter"
        head = f"{nodes} not evaluated, excluded by {by}: {g.title}"
    else:
        head = f"{nodes}, {g.plugin}: {g.title}"
    out.para(head, 2, 6, style="bold")
    if brief:
        if where.startswith("pools "):
            out.para(where, 6, 8, style="dim")
        return
    if g.not_evaluated:
        names = sorted(m[0] for m in g.members)
        listing = (
            ", ".join(names) if len(names) <= 6 else ", ".join(names[:5]) + f" and {len(names) - 5} more"
        )
        out.para(listing, 4, 6, style="dim")
        return
    one_pool = len({pools.get(m[0]) for m in g.members}) <= 1
    buckets: dict[tuple[str, str], list[str]] = {}
    for name, st in g.members:
        buckets.setdefault((pools.get(name, ""), _cause(st)), []).append(name)
    if all_nodes or (n <= _MAX_ROWS_PER_GROUP and len(buckets) == n):
        rows = [[name, *([] if one_pool else [pools.get(name, "-")]), _cause(st)] for name, st in g.members]
        out.columns(rows, 4)
        return
    # Collapse: by (pool, cause), else by pool with merged causes, else one merged row, else the first rows.
    rows2: list[tuple[str, str, list[str]]] = []
    if len(buckets) <= _MAX_ROWS_PER_GROUP:
        rows2 = [(p, c, names) for (p, c), names in sorted(buckets.items(), key=lambda kv: -len(kv[1]))]
    else:
        per_pool: dict[str, list[tuple[str, Status]]] = {}
        for m in g.members:
            per_pool.setdefault(pools.get(m[0], ""), []).append(m)
        merged = {p: _merge([st for _, st in ms]) for p, ms in per_pool.items()}
        if len(per_pool) <= _MAX_ROWS_PER_GROUP and all(merged.values()):
            rows2 = [
                (p, merged[p], [x for x, _ in ms])
                for p, ms in sorted(per_pool.items(), key=lambda kv: -len(kv[1]))
            ]
        else:
            whole = _merge([st for _, st in g.members])
            if whole:
                rows2 = [("", whole, [x for x, _ in g.members])]
    if rows2:
        for pool, cause, names in rows2:
            if not one_pool and pool:
                label = f"pool {pool}, {_count(len(names), 'node')}: "
            elif len(rows2) > 1 or not one_pool:
                label = f"{_count(len(names), 'node')}: "
            else:
                label = ""  # the group title has the count and the pool
            out.para(label + cause, 4, 8)
            listing = (
                ", ".join(names) if len(names) <= 4 else ", ".join(names[:3]) + f" and {len(names) - 3} more"
            )
            out.para(listing, 6, 8, style="dim")
        return
    shown = _MAX_ROWS_PER_GROUP - 1
    rows = [
        [name, *([] if one_pool else [pools.get(name, "-")]), _cause(st)] for name, st in g.members[:shown]
    ]
    out.columns(rows, 4)
    out.line(f"    … and {n - shown} more node(s) with other causes (--all-nodes lists them)", "dim")


# ---------------------------------------------------------------------------------------------- summary


def _by(st: Status) -> list[str]:
    """What one node was rejected by, in short words (one entry per insufficient resource)."""
    if st.plugin == "NodeResourcesFit":
        out = [str(x["resource"]) for x in st.details if isinstance(x, dict) and "resource" in x]
        if not out:
            out = [r.removeprefix("Insufficient ") for r in st.reasons]
        return ["+".join(out)] if out else ["resources"]
    if st.plugin == "InterPodAffinity" and any("anti-affinity" in r for r in st.reasons):
        return ["pod anti-affinity"]
    return [_BY.get(st.plugin or "", st.plugin or st.code.label)]


def _rejections(d: Diagnosis) -> str:
    counts: Counter[str] = Counter()
    for st in d.verdicts.values():
        if not st.ok:
            counts.update(_by(st))
    parts = [f"{c} by {what}" for what, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    if parts:
        parts[0] = parts[0].replace(" by ", " rejected by ", 1)
    if d.not_evaluated:
        parts.append(f"{len(d.not_evaluated)} excluded at PreFilter")
    return ", ".join(parts)


def _short_fix(r: Remedy) -> str:
    s = r.summary
    if len(s) > 60 and ": " in s:
        s = s.split(": ", 1)[0]
    return s


def _status(pr: PodReport) -> str:
    d = pr.diagnosis
    if pr.triage:
        return "bound"
    if not d.handled:
        return "ignored"
    if d.preenqueue is not None:
        return "gated"
    return "schedulable" if d.scheduled else "unschedulable"


def glance(pr: PodReport) -> str:
    """The one-line summary of a pod: what rejected how many nodes, and the first fix."""
    d = pr.diagnosis
    status = _status(pr)
    if status in ("bound", "ignored"):
        return ""
    if status == "gated":
        return "held by scheduling gates: kube-scheduler does not try it until they are removed"
    if status == "schedulable":
        if len(d.feasible) == d.num_all_nodes:
            return f"every node fits ({d.num_all_nodes}); the scores pick the node"
        rej = _rejections(d)
        return f"{len(d.feasible)} of {_count(d.num_all_nodes, 'node')} fit" + (f"; {rej}" if rej else "")
    if d.prefilter is not None:
        text = f"rejected at PreFilter by {d.prefilter.plugin or 'a plugin'} before any node was checked"
        cause = describe_details(d.prefilter.details)
        text += f" ({cause})" if cause else ""
    elif d.num_all_nodes == 0:
        return "the input has no nodes: add nodes (or check the dump includes them)"
    else:
        text = _rejections(d) or "no node fits"
    if d.preemption is not None:
        text += (
            f"; kube-scheduler will preempt {_count(len(d.preemption.victims), 'pod')} "
            f"on {d.preemption.nominated_node} and retry there"
        )
    fixes = [r for r in pr.remedies if r.kind != "preemption"]
    if fixes:
        text += f"; fix: {_short_fix(fixes[0])}"
    elif d.preemption is None:
        text += "; no fix found by the what-if replay" + (" (see Ruled out)" if pr.remedy_notes else "")
    return text


# ---------------------------------------------------------------------------------------------- sections


def _headline(pr: PodReport) -> tuple[str, str, str]:
    """(status word, style, headline text). The headline is the scheduler's message verbatim when it has one."""
    d = pr.diagnosis
    word = _status(pr)
    if word == "bound":
        return word, "green", pr.triage + ": not a scheduling problem"
    if word == "ignored":
        return word, "yellow", d.not_handled_reason
    if word == "gated" and d.preenqueue is not None:
        return word, "yellow", d.preenqueue.message
    if word == "schedulable":
        return word, "green", f"kube-scheduler would bind it to {d.chosen}"
    return word, "red", d.message or d.full_message or "not scheduled"


def _winner_sentence(d: Diagnosis) -> str:
    if d.nominated_node_used and d.chosen:
        return f"The pod's nominated node {d.chosen} passes every filter: kube-scheduler takes it without scoring."
    if len(d.feasible) == 1 and d.chosen:
        return f"Only {d.chosen} passes every filter: kube-scheduler binds it without scoring."
    totals = {n: b.total for n, b in d.scores.items()}
    if not totals or d.chosen is None or d.chosen not in totals:
        return ""
    best = totals[d.chosen]
    if len(d.top_nodes) > 1:
        return (
            f"{len(d.top_nodes)} nodes tie at {best} points ({', '.join(sorted(d.top_nodes)[:5])}"
            f"{', …' if len(d.top_nodes) > 5 else ''}): "
            f"kube-scheduler picks one of them at random (kdiagnose shows {d.chosen})."
        )
    rest = [(t, n) for n, t in totals.items() if n not in d.top_nodes]
    if not rest:
        return f"{d.chosen} wins with {best} points."
    runner_total, runner = max(rest, key=lambda x: (x[0], [-ord(c) for c in x[1]]))
    win, other = d.scores[d.chosen].plugins, d.scores[runner].plugins
    diffs = {p: win[p].weighted - (other[p].weighted if p in other else 0) for p in win}
    plugin, gain = max(diffs.items(), key=lambda kv: kv[1]) if diffs else ("", 0)
    text = f"{d.chosen} wins with {best} points, {best - runner_total} ahead of {runner} ({runner_total})"
    if gain > 0:
        text += f", mostly from {plugin} (+{gain})"
    return text + "."


def _scores(out: _Out, d: Diagnosis, pools: dict[str, str], opts: RenderOptions) -> None:
    ranked = sorted(d.scores.values(), key=lambda b: (-b.total, b.node))
    shown = ranked if opts.all_nodes else ranked[: max(opts.top, 1)]
    if d.chosen and all(b.node != d.chosen for b in shown) and d.chosen in d.scores:
        shown.append(d.scores[d.chosen])  # a random pick among ties may sort below the cut
    sentence = _winner_sentence(d)
    without_scoring = d.nominated_node_used or len(d.feasible) == 1
    if without_scoring and not opts.all_nodes:
        if sentence:
            out.para(sentence, 0, 2)
        return
    plugins: list[str] = []
    for b in ranked:
        for p in b.plugins:
            if p not in plugins:
                plugins.append(p)
    nonzero = [p for p in plugins if any(b.plugins[p].weighted for b in shown if p in b.plugins)]
    zero = [p for p in plugins if p not in nonzero]
    what = f"top {len(shown)} of {len(ranked)}" if len(shown) < len(ranked) else f"all {len(ranked)}"
    out.para(f"Scores of {what} feasible node(s), weight × normalized score", 0, 2, style="bold")
    if sentence:
        out.para(sentence, 2, 4)
    with_pool = any(pools.get(b.node) for b in shown)
    head = [
        "",
        "Node",
        *(["Pool"] if with_pool else []),
        "Total",
        *(_SHORT_PLUGIN.get(p, p[:8]) for p in nonzero),
    ]
    rows = [head]
    for b in shown:
        cells = ["*" if b.node == d.chosen else "", b.node, *([pools.get(b.node, "-")] if with_pool else [])]
        cells += [str(b.total), *(str(b.plugins[p].weighted) if p in b.plugins else "-" for p in nonzero)]
        rows.append(cells)
    _number_table(out, rows, first_numeric=3 if with_pool else 2)
    notes = []
    legend = [f"{_SHORT_PLUGIN[p]}={p}" for p in nonzero if p in _SHORT_PLUGIN and _SHORT_PLUGIN[p] != p]
    if legend:
        notes.append(", ".join(legend))
    pick = "kdiagnose's pick among the tied nodes" if len(d.top_nodes) > 1 else "the chosen node"
    notes.append(f"* = {pick}")
    if zero:
        notes.append(f"0 on every shown node: {', '.join(zero)}")
    skipped = sorted({p for b in d.scores.values() for p in b.skipped})
    if skipped:
        notes.append(f"skipped at PreScore (contribute 0): {', '.join(skipped)}")
    if d.feasible_to_find and len(ranked) > d.feasible_to_find:
        notes.append(
            f"kdiagnose scores all {len(ranked)} feasible nodes; kube-scheduler (percentageOfNodesToScore) "
            f"stops filtering after {d.feasible_to_find} feasible nodes from a rotating start and scores "
            "those, so its pick may be a near-best node instead"
        )
    for n in notes:
        out.para(n, 2, 4, style="dim")


def _number_table(out: _Out, rows: list[list[str]], first_numeric: int) -> None:
    """Left-aligned names, right-aligned numbers; node names are ellipsized only when the table is wider than
    the terminal (the names are whole in the sentence above)."""
    n = len(rows[0])
    widths = [max(len(r[i]) for r in rows) for i in range(n)]
    total = 2 + sum(widths) + 2 * (n - 1)
    if total > out.width and widths[1] > 12:
        widths[1] = max(12, widths[1] - (total - out.width))
    for i, r in enumerate(rows):
        cells = []
        for j, c in enumerate(r):
            if len(c) > widths[j]:
                c = c[: widths[j] - 1] + "…"
            cells.append(c.rjust(widths[j]) if j >= first_numeric else c.ljust(widths[j]))
        out.line(("  " + "  ".join(cells)).rstrip(), "bold" if i == 0 or r[0] == "*" else None)


def _remedies(out: _Out, pr: PodReport, opts: RenderOptions) -> None:
    limit = len(pr.remedies) if opts.all_remedies else opts.max_remedies
    out.blank()
    if not pr.remedies:
        out.line("What would make it schedulable", "bold")
        see = " (see Ruled out)" if pr.remedy_notes else ""
        out.para(f"no change found that a what-if replay proves would work{see}", 2, 4)
        return
    out.para("What would make it schedulable (each proven by a what-if replay)", 0, 2, style="bold")
    for i, r in enumerate(pr.remedies[:limit], 1):
        out.para(f"{i}. {r.summary}", 2, 5, style="bold" if i == 1 else None)
        if r.target and r.target not in r.summary:
            out.para(f"target: {r.target}", 5, 7, style="dim")
        if r.unblocks:
            out.para(f"unblocks: {_names(sorted(r.unblocks))}", 5, 7, style="dim")
        if r.risk:
            out.para(f"risk: {r.risk}", 5, 7, style="dim")
        if r.patch:
            for line in r.patch.rstrip("\n").splitlines():
                out.verbatim("       " + line)  # YAML: never re-wrapped
        if r.verify:
            out.para(f"verify: {r.verify}", 5, 7, style="dim")
    if len(pr.remedies) > limit:
        out.line(f"  … {len(pr.remedies) - limit} more (--all-remedies)", "dim")


def _title(out: _Out, pr: PodReport) -> None:
    from rich.text import Text

    d = pr.diagnosis
    word, style, _ = _headline(pr)
    title = Text()
    title.append(_safe(f"Pod {d.pod.key}"), style="bold")
    title.append(": ")
    title.append(word.upper(), style=f"bold {style}")
    extra = [_count(d.num_all_nodes, "node")]
    if d.profile and d.profile != "default-scheduler":
        extra.append(f"profile {d.profile}")
    if pr.owner:
        extra.append(pr.owner)
    meta = f"({', '.join(extra)})"
    if len(title) + 2 + len(meta) <= out.width:
        title.append(_safe(f"  {meta}"), style="dim")
        out.console.print(title, soft_wrap=True)
    else:
        out.console.print(title, soft_wrap=True)  # a pod name is never broken
        out.para(meta, 2, 3, style="dim")


def _pod(out: _Out, pr: PodReport, report: Report, opts: RenderOptions, shared: set[str]) -> None:
    d = pr.diagnosis
    word, _, headline = _headline(pr)
    _title(out, pr)
    out.verbatim(headline)  # right under the title, exactly as kube-scheduler words it
    if word == "unschedulable" and d.full_message and d.message and d.full_message != d.message:
        out.para(
            "(the event recorder truncates messages at 1024 bytes; -o json has the full text)", 0, 2, "dim"
        )
    if d.profile in report.profiles:
        # Filters and scores depend on the profile's plugins and weights: say which, when not the default.
        out.para(report.profiles[d.profile], 0, 2, style="cyan")
    summary = glance(pr)
    if summary:
        out.para(f"Summary: {summary}", 0, 9, style="bold")
    if d.preenqueue is not None:
        out.para(
            "No scheduling attempt is made while gates remain, so no FailedScheduling event is written.",
            0,
            2,
            style="dim",
        )
    if d.prefilter is not None and d.prefilter.code == Code.ERROR:
        out.para(
            f"PreFilter {d.prefilter.plugin} failed with an error: {d.prefilter.message}", 0, 2, "yellow"
        )

    groups = _groups(d, opts.all_nodes) if d.prefilter is None else []

    def rejected() -> None:
        if not groups:
            return
        n = sum(len(g.members) for g in groups)
        out.blank()
        fit = f"; {len(d.feasible)} fit" if d.feasible else ""
        verb = "was" if n == 1 else "were"
        out.line(f"Why {n} of {_count(d.num_all_nodes, 'node')} {verb} rejected{fit}", "bold")
        # For a pod that schedules, the rejections are background: per-node causes only when few.
        brief = bool(d.feasible) and n > _MAX_ROWS_PER_GROUP and not opts.all_nodes
        for g in groups:
            _render_group(out, g, report.node_pools, opts.all_nodes, brief)
        if brief:
            out.line("  (--all-nodes shows the cause on every node)", "dim")

    if word == "schedulable":
        if d.scores:
            out.blank()
            _scores(out, d, report.node_pools, opts)
        rejected()
    elif word == "unschedulable":
        rejected()
        preempt = [r for r in pr.remedies if r.kind == "preemption"]
        if d.preemption is not None and not preempt:
            victims = sorted(v.key for v in d.preemption.victims)
            pdb = d.preemption.pdb_violations
            out.blank()
            out.para(
                f"Preemption: kube-scheduler would evict {_count(len(victims), 'lower-priority pod')} on "
                f"{d.preemption.nominated_node} ({_pods(victims, 5) or 'none'})"
                + (f", violating {_count(pdb, 'PodDisruptionBudget')}" if pdb else "")
                + f", and nominate {d.preemption.nominated_node}: the pod binds there once they are gone.",
                0,
                2,
                style="yellow",
            )
        if pr.remedies or d.preemption is None:
            _remedies(out, pr, opts)
        if pr.remedy_notes:
            out.blank()
            out.line("Ruled out", "bold")
            for n in pr.remedy_notes:
                out.para(f"- {n}", 2, 4)

    if pr.recorded is not None and (pr.recorded.message or pr.recorded.condition_message):
        from kdiagnose.report.recorded import render_recorded

        out.blank()
        for i, line in enumerate(render_recorded(pr.recorded, d.message)):
            line_style = "bold" if i == 0 else ("yellow" if "differs" in line else None)
            out.verbatim(line, line_style)  # holds the recorded message: never re-wrapped

    notes = [n for n in d.notes if n not in shared]
    if word != "unschedulable":
        notes += list(pr.remedy_notes)
    if notes:
        out.blank()
        out.line("Notes", "bold")
        for n in notes:
            out.para(f"- {n}", 2, 4)


def _console(out: TextIO | None, opts: RenderOptions) -> Console:
    import os

    from rich.console import Console

    no_color = opts.color is False or bool(os.environ.get("NO_COLOR"))
    return Console(
        file=out,
        no_color=no_color,
        color_system=None if no_color else "auto",
        # NO_COLOR / --no-color: no escape codes at all (not even bold), whatever the terminal.
        force_terminal=False if no_color else (True if opts.color else None),
        highlight=False,
        emoji=False,
        markup=False,
        width=opts.width,
    )


def _overview(out: _Out, pods: list[PodReport]) -> None:
    counts = Counter(_status(p) for p in pods)
    parts = [f"{counts[w]} {w}" for w in sorted(counts, key=lambda w: _STATUS_RANK[w])]
    out.blank()
    out.para(f"{len(pods)} pods: {', '.join(parts)}", 0, 2, style="bold")
    for pr in pods[:_MAX_OVERVIEW]:
        word = _status(pr)
        short = glance(pr)
        if word == "schedulable":
            short = f"binds to {pr.diagnosis.chosen}"
        elif word in ("ignored", "bound"):
            short = _headline(pr)[2]
        out.para(f"{word:<13} {pr.diagnosis.pod.key}" + (f": {short}" if short else ""), 2, 16)
    if len(pods) > _MAX_OVERVIEW:
        out.line(f"  … {len(pods) - _MAX_OVERVIEW} more below", "dim")


def render(report: Report, out: TextIO | None = None, opts: RenderOptions | None = None) -> None:
    """Print the report to `out` (stdout by default)."""
    opts = opts or RenderOptions()
    o = _Out(_console(out, opts))
    summary = f"kdiagnose {report.k8s_version}: {report.num_nodes} node(s), {report.num_pods} pod(s)"
    if report.source:
        summary += f" from {report.source}"
    o.para(summary, 0, 2, style="dim")
    if not report.pods:
        o.line("No pending pods to diagnose.")
    pods = sorted(report.pods, key=lambda p: (_STATUS_RANK[_status(p)], p.diagnosis.pod.key))
    # A note every pod (or several) carries is about the input, not the pod: print it once at the end.
    seen: Counter[str] = Counter(n for p in pods for n in dict.fromkeys(p.diagnosis.notes))
    shared = {n for n, c in seen.items() if c > 1}
    if len(pods) > 2:
        _overview(o, pods)
    # Replicas of one workload that fail the same way: one full section, then one line each.
    first: dict[tuple[Any, ...], str] = {}
    for pr in pods:
        o.blank()
        o.console.rule(style="dim")
        d = pr.diagnosis
        key = (pr.owner, _status(pr), d.message, tuple(r.summary for r in pr.remedies), tuple(d.notes))
        if pr.owner and key in first and _status(pr) in ("unschedulable", "gated"):
            _title(o, pr)
            o.para(f"same as {first[key]}: same message, rejected nodes and fixes", 2, 4)
            continue
        first.setdefault(key, d.pod.key)
        _pod(o, pr, report, opts, shared)
    if shared:
        o.blank()
        o.line("Notes for the whole report", "bold")
        for n in sorted(shared, key=lambda n: (-seen[n], n)):
            scope = "every pod" if seen[n] == len(pods) else f"{seen[n]} of {len(pods)} pods"
            o.para(f"- {n} ({scope})", 2, 4)
    tail: list[str] = []
    tail += [
        f"not replayed: {n}" if not n.startswith(("profile ", "not ")) else n for n in report.profile_notes
    ]
    tail += list(report.warnings)
    if report.skipped_kinds:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(report.skipped_kinds.items()))
        tail.append(f"skipped objects of kinds the scheduler does not read: {kinds}")
    if tail:
        o.blank()
        o.line("Warnings", "bold yellow")
        for w in tail:
            o.para(f"- {w}", 2, 4)


def render_text(report: Report, opts: RenderOptions | None = None) -> str:
    """The human report as a string (no color unless asked), for tests and embedding."""
    import io

    buf = io.StringIO()
    o = opts or RenderOptions(color=False, width=80)
    render(report, buf, o)
    return buf.getvalue()
