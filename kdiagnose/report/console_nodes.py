"""The "Why N of M nodes were rejected" section: rejected nodes grouped by reason, collapsed by pool and cause.

Small groups list every node with its cause; big ones (a 5,000-node cluster) collapse to one row per
(pool, cause), else per pool with merged causes, so the section stays a screenful.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kdiagnose.report.console_layout import plural
from kdiagnose.report.details import merge_causes, node_cause

if TYPE_CHECKING:
    from kdiagnose.report.console_layout import Out
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.framework import Status

__all__ = ["MAX_ROWS_PER_GROUP", "Group", "group_rejections", "render_group"]

# A reason group with more nodes than this is collapsed by pool and cause.
MAX_ROWS_PER_GROUP = 6
# More reason groups than this (e.g. one per tenant taint) are merged per plugin.
_MAX_GROUPS = 8


@dataclass(slots=True)
class Group:
    plugin: str
    title: str  # the scheduler's reason(s)
    members: list[tuple[str, Status]]
    not_evaluated: bool = False


def group_rejections(d: Diagnosis, all_nodes: bool) -> list[Group]:
    """Rejected nodes grouped by (plugin, reasons), biggest first; many small groups merge per plugin."""
    by: dict[tuple[str, tuple[str, ...]], list[tuple[str, Status]]] = {}
    for name, st in d.verdicts.items():
        if not st.ok:
            by.setdefault((st.plugin or "", st.reasons), []).append((name, st))
    groups = [Group(p, ", ".join(r) or "rejected", m) for (p, r), m in by.items()]
    if not all_nodes and len(groups) > _MAX_GROUPS:
        per: dict[str, list[Group]] = {}
        for g in groups:
            per.setdefault(g.plugin, []).append(g)
        groups = []
        for plugin, gs in per.items():
            if len(gs) == 1:
                groups.append(gs[0])
                continue
            biggest = max(gs, key=lambda g: len(g.members))
            title = f"{len(gs)} different reasons, e.g. {biggest.title}"
            groups.append(Group(plugin, title, [m for g in gs for m in g.members]))
    groups.sort(key=lambda g: (-len(g.members), g.plugin, g.title))
    if d.not_evaluated and d.absent is not None:
        groups.append(
            Group(
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


def render_group(out: Out, g: Group, pools: dict[str, str], all_nodes: bool, brief: bool = False) -> None:
    n = len(g.members)
    where = _pool_summary(g.members, pools)
    nodes = plural(n, "node") + (f" in {where}" if where.startswith("pool ") else "")
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
    # Nodes with the same cause often share one Status object: its words are computed once.
    causes: dict[int, str] = {}

    def cause_of(st: Status) -> str:
        text = causes.get(id(st))
        if text is None:
            text = causes[id(st)] = node_cause(st)
        return text

    buckets: dict[tuple[str, str], list[str]] = {}
    for name, st in g.members:
        buckets.setdefault((pools.get(name, ""), cause_of(st)), []).append(name)
    if all_nodes or (n <= MAX_ROWS_PER_GROUP and len(buckets) == n):
        rows = [[name, *([] if one_pool else [pools.get(name, "-")]), cause_of(st)] for name, st in g.members]
        out.columns(rows, 4)
        return
    # Collapse: by (pool, cause), else by pool with merged causes, else one merged row, else the first rows.
    rows2: list[tuple[str, str, list[str]]] = []
    if len(buckets) <= MAX_ROWS_PER_GROUP:
        rows2 = [(p, c, names) for (p, c), names in sorted(buckets.items(), key=lambda kv: -len(kv[1]))]
    else:
        per_pool: dict[str, list[tuple[str, Status]]] = {}
        for m in g.members:
            per_pool.setdefault(pools.get(m[0], ""), []).append(m)
        merged = {p: merge_causes([st for _, st in ms]) for p, ms in per_pool.items()}
        if len(per_pool) <= MAX_ROWS_PER_GROUP and all(merged.values()):
            rows2 = [
                (p, merged[p], [x for x, _ in ms])
                for p, ms in sorted(per_pool.items(), key=lambda kv: -len(kv[1]))
            ]
        else:
            whole = merge_causes([st for _, st in g.members])
            if whole:
                rows2 = [("", whole, [x for x, _ in g.members])]
    if rows2:
        for pool, cause, names in rows2:
            if not one_pool and pool:
                label = f"pool {pool}, {plural(len(names), 'node')}: "
            elif len(rows2) > 1 or not one_pool:
                label = f"{plural(len(names), 'node')}: "
            else:
                label = ""  # the group title has the count and the pool
            out.para(label + cause, 4, 8)
            listing = (
                ", ".join(names) if len(names) <= 4 else ", ".join(names[:3]) + f" and {len(names) - 3} more"
            )
            out.para(listing, 6, 8, style="dim")
        return
    shown = MAX_ROWS_PER_GROUP - 1
    rows = [
        [name, *([] if one_pool else [pools.get(name, "-")]), cause_of(st)] for name, st in g.members[:shown]
    ]
    out.columns(rows, 4)
    out.line(f"    … and {n - shown} more node(s) with other causes (--all-nodes lists them)", "dim")
