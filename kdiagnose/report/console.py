"""`-o human`: the rich console report, readable at 80 columns, no color unless on a TTY.

Per pod: the scheduler's message first (verbatim), then why each node was rejected (grouped by reason and
collapsed by pool for big clusters), the score table of the top nodes, notes, and remedies.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from kdiagnose.model.quantity import format_quantity
from kdiagnose.scheduler.framework import Code

if TYPE_CHECKING:
    from rich.console import Console

    from kdiagnose.report.interface import PodReport, Report
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.framework import Status

__all__ = ["RenderOptions", "describe_details", "render", "render_text"]

# A reason group with more nodes than this is collapsed by pool and cause.
_MAX_ROWS_PER_GROUP = 6
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


@dataclass(slots=True)
class RenderOptions:
    top: int = 5
    all_nodes: bool = False
    all_remedies: bool = False
    color: bool | None = None  # None: only on a TTY (and never with NO_COLOR)
    width: int | None = None
    max_remedies: int = 3
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------- causes


def _amount(resource: str, n: Any) -> str:
    if not isinstance(n, int) or isinstance(n, bool):
        return str(n)
    if resource == "cpu":
        return f"{n // 1000}" if n % 1000 == 0 else f"{n / 1000:g}"
    return format_quantity(resource, n)


def _fit(d: dict[str, Any]) -> str:
    r = str(d.get("resource"))
    label = {"cpu": " CPU", "pods": " pod(s)"}.get(r, f" {r}")
    req, free, alloc = d.get("requested"), d.get("free"), d.get("allocatable")
    text = f"needs {_amount(r, req)}{label}"
    if free is not None:
        text += f", {_amount(r, free)} free"
    if alloc is not None:
        text += f" of {_amount(r, alloc)} allocatable"
    return text


def _value(v: Any) -> str:
    if isinstance(v, list | tuple | set | frozenset):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    return str(v)


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
    if "missingLabel" in d:
        parts.append(f"node has no {d.pop('missingLabel')} label")
    if "skew" in d and "maxSkew" in d:
        dom = d.pop("domain", None)
        text = f"skew would be {d.pop('skew')} > maxSkew {d.pop('maxSkew')}"
        if dom is not None:
            text += f" in {d.pop('topologyKey', 'domain')}={dom}"
        parts.append(text)
    parts.extend(f"{k}={_value(v)}" for k, v in d.items() if v is not None and v != "" and v != [])
    return ", ".join(parts)


def describe_details(details: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    """Status.details in plain words (details keys are chosen by plugin authors; unknown keys as k=v)."""
    return "; ".join(x for x in (_one(d) for d in details if isinstance(d, dict)) if x)


def _cause(st: Status) -> str:
    """The concrete cause when the plugin gave details (the reason is in the headline), else the reason."""
    return describe_details(st.details) or ", ".join(st.reasons) or st.code.label


# ---------------------------------------------------------------------------------------------- sections


def _names(nodes: list[str], limit: int = 3) -> str:
    shown = ", ".join(nodes[:limit])
    return (
        f"{len(nodes)} nodes: {shown}, …"
        if len(nodes) > limit
        else (shown if len(nodes) == 1 else f"{len(nodes)} nodes: {shown}")
    )


def _node_rows(d: Diagnosis, pools: dict[str, str], all_nodes: bool) -> list[list[tuple[str, str, str, str]]]:
    """Rejected nodes grouped by (plugin, reasons); each group a list of (nodes, pool, plugin, cause) rows."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[tuple[str, Status]]] = {}
    for name, st in d.verdicts.items():
        if st.ok:
            continue
        groups.setdefault((st.plugin, st.code.label, st.reasons), []).append((name, st))
    if d.not_evaluated and d.absent is not None:
        groups[(d.absent.plugin, "NotEvaluated", d.absent.reasons)] = [(n, d.absent) for n in d.not_evaluated]
    out = []
    for (plugin, _code, _reasons), members in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0][2])):
        rows: list[tuple[str, str, str, str]] = []
        if all_nodes or len(members) <= _MAX_ROWS_PER_GROUP:
            for name, st in members:
                rows.append((name, pools.get(name, "-"), plugin or "-", _cause(st)))
        else:
            by: dict[tuple[str, str], list[str]] = {}
            for name, st in members:
                by.setdefault((pools.get(name, "-"), _cause(st)), []).append(name)
            if len(by) > _MAX_ROWS_PER_GROUP:
                by2: dict[str, list[tuple[str, str]]] = {}
                for (pool, cause), names in by.items():
                    by2.setdefault(pool, []).extend((n, cause) for n in names)
                if len(by2) > _MAX_ROWS_PER_GROUP:
                    causes = Counter(_cause(st) for _, st in members)
                    cause, _ = causes.most_common(1)[0]
                    more = f" (and {len(causes) - 1} other variant(s))" if len(causes) > 1 else ""
                    rows.append(
                        (_names([m[0] for m in members]), f"{len(by2)} pools", plugin or "-", cause + more)
                    )
                else:
                    for pool, items in sorted(by2.items(), key=lambda kv: -len(kv[1])):
                        causes = Counter(c for _, c in items)
                        cause, _ = causes.most_common(1)[0]
                        more = f" (and {len(causes) - 1} other variant(s))" if len(causes) > 1 else ""
                        rows.append((_names([n for n, _ in items]), pool, plugin or "-", cause + more))
            else:
                for (pool, cause), names in sorted(by.items(), key=lambda kv: -len(kv[1])):
                    rows.append((_names(names), pool, plugin or "-", cause))
        out.append(rows)
    return out


def _winner_sentence(d: Diagnosis) -> str:
    if d.nominated_node_used and d.chosen:
        return f"The pod's nominated node {d.chosen} passes every filter: kube-scheduler takes it without scoring."
    if len(d.feasible) == 1 and d.chosen:
        return f"Only {d.chosen} passes every filter: kube-scheduler binds it without scoring."
    totals = {n: b.total for n, b in d.scores.items()}
    if not totals or d.chosen is None:
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


def _headline(pr: PodReport) -> tuple[str, str, str]:
    """(status word, style, headline text). The headline is the scheduler's message verbatim when it has one."""
    d = pr.diagnosis
    if pr.triage:
        return "bound", "green", pr.triage + ": not a scheduling problem"
    if not d.handled:
        return "ignored", "yellow", d.not_handled_reason
    if d.preenqueue is not None:
        return "gated", "yellow", d.preenqueue.message
    if d.scheduled:
        return "schedulable", "green", f"kube-scheduler would bind it to {d.chosen}"
    return "unschedulable", "red", d.message or d.full_message or "not scheduled"


def _score_table(console: Console, d: Diagnosis, pools: dict[str, str], opts: RenderOptions) -> None:
    from rich.table import Table

    ranked = sorted(d.scores.values(), key=lambda b: (-b.total, b.node))
    shown = ranked if opts.all_nodes else ranked[: max(opts.top, 1)]
    plugins: list[str] = []
    for b in ranked:
        for p in b.plugins:
            if p not in plugins:
                plugins.append(p)
    nonzero = [p for p in plugins if any(b.plugins[p].weighted for b in shown if p in b.plugins)]
    zero = [p for p in plugins if p not in nonzero]
    console.print(
        f"Scores of the top {len(shown)} of {len(ranked)} feasible node(s) (weight × score)", style="bold"
    )
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("Node", overflow="fold")
    if any(pools.get(b.node) for b in shown):
        table.add_column("Pool", overflow="fold")
    table.add_column("Total", justify="right")
    for p in nonzero:
        table.add_column(_SHORT_PLUGIN.get(p, p[:8]), justify="right")
    with_pool = any(pools.get(b.node) for b in shown)
    for b in shown:
        cells = [b.node] + ([pools.get(b.node, "-")] if with_pool else []) + [str(b.total)]
        cells += [str(b.plugins[p].weighted) if p in b.plugins else "-" for p in nonzero]
        table.add_row(*cells, style="bold" if b.node == d.chosen else None)
    console.print(table)
    legend = [f"{_SHORT_PLUGIN[p]}={p}" for p in nonzero if p in _SHORT_PLUGIN and _SHORT_PLUGIN[p] != p]
    if legend:
        console.print("  " + ", ".join(legend), style="dim")
    if zero:
        console.print(f"  0 on every shown node: {', '.join(zero)}", style="dim")
    skipped = sorted({p for b in d.scores.values() for p in b.skipped})
    if skipped:
        console.print(f"  skipped at PreScore (contribute 0): {', '.join(skipped)}", style="dim")
    if len(ranked) > 100:
        console.print(
            f"  kdiagnose scores all {len(ranked)} feasible nodes; kube-scheduler's percentageOfNodesToScore "
            "may score only a sample",
            style="dim",
        )
    sentence = _winner_sentence(d)
    if sentence:
        console.print(sentence)


def _pod(console: Console, pr: PodReport, report: Report, opts: RenderOptions) -> None:
    from rich.table import Table
    from rich.text import Text

    d = pr.diagnosis
    word, style, headline = _headline(pr)
    title = Text()
    title.append(f"Pod {d.pod.key}", style="bold")
    title.append(": ")
    title.append(word, style=f"bold {style}")
    extra = [f"{d.num_all_nodes} node(s)"]
    if d.profile and d.profile != "default-scheduler":
        extra.append(f"profile {d.profile}")
    if pr.owner:
        extra.append(pr.owner)
    title.append(f"  ({', '.join(extra)})", style="dim")
    console.print(title)
    console.print(Text(headline), soft_wrap=True)  # verbatim: no inserted line breaks
    if d.preenqueue is not None:
        console.print(
            "No scheduling attempt is made while gates remain, so no FailedScheduling event is written.",
            style="dim",
        )
    if d.prefilter is not None and d.prefilter.code != Code.ERROR:
        console.print(
            f"PreFilter {d.prefilter.plugin} rejected the pod before any node was checked.", style="dim"
        )

    groups = _node_rows(d, report.node_pools, opts.all_nodes)
    if groups and d.prefilter is None:
        console.print()
        console.print("Why the nodes were rejected", style="bold")
        table = Table(show_edge=False, pad_edge=False)
        table.add_column("Node", overflow="fold", max_width=28)
        if report.node_pools:
            table.add_column("Pool", overflow="fold", max_width=16)
        table.add_column("Plugin", overflow="fold", max_width=18)
        table.add_column("Cause", overflow="fold")
        for i, rows in enumerate(groups):
            for node, pool, plugin, cause in rows:
                cells = [node] + ([pool] if report.node_pools else []) + [plugin, cause]
                table.add_row(*cells)
            if i < len(groups) - 1:
                table.add_section()
        console.print(table)

    if d.preemption is not None:
        victims = ", ".join(sorted(v.key for v in d.preemption.victims)) or "no pods"
        console.print()
        console.print(
            f"Preemption: kube-scheduler would nominate {d.preemption.nominated_node} and evict {victims}.",
            style="yellow",
        )
    if d.scores and not pr.triage:
        console.print()
        if d.profile in report.profiles:
            # Scores depend on the profile's strategy and weights: say which, when not the default.
            console.print(report.profiles[d.profile], style="cyan")
        _score_table(console, d, report.node_pools, opts)

    if pr.recorded is not None and (pr.recorded.message or pr.recorded.condition_message):
        from kdiagnose.report.recorded import render_recorded

        console.print()
        for i, line in enumerate(render_recorded(pr.recorded, d.message)):
            line_style = "bold" if i == 0 else ("yellow" if "differs" in line else "")
            console.print(Text(line), soft_wrap=True, style=line_style)

    notes = list(d.notes) + list(pr.remedy_notes)
    if notes:
        console.print()
        console.print("Notes", style="bold")
        for n in notes:
            console.print(f"  - {n}")

    if pr.remedies:
        limit = len(pr.remedies) if opts.all_remedies else opts.max_remedies
        console.print()
        console.print("What would make it schedulable", style="bold")
        for i, r in enumerate(pr.remedies[:limit], 1):
            console.print(f"  {i}. {r.summary}", style="bold" if i == 1 else None)
            bits = []
            if r.target:
                bits.append(r.target)
            if r.unblocks:
                bits.append(f"unblocks {_names(sorted(r.unblocks))}")
            if r.risk:
                bits.append(f"risk: {r.risk}")
            if bits:
                console.print("     " + "; ".join(bits), style="dim")
            if r.patch:
                for line in r.patch.rstrip("\n").splitlines():
                    console.print(Text("       " + line), soft_wrap=True)
            if r.verify:
                console.print(f"     verify: {r.verify}", style="dim")
        if len(pr.remedies) > limit:
            console.print(f"  ... {len(pr.remedies) - limit} more (--all-remedies)", style="dim")


def _console(out: TextIO | None, opts: RenderOptions) -> Console:
    import os

    from rich.console import Console

    no_color = opts.color is False or bool(os.environ.get("NO_COLOR"))
    return Console(
        file=out,
        no_color=no_color,
        color_system=None if no_color else "auto",
        force_terminal=True if opts.color else None,
        highlight=False,
        emoji=False,
        markup=False,
        width=opts.width,
    )


def render(report: Report, out: TextIO | None = None, opts: RenderOptions | None = None) -> None:
    """Print the report to `out` (stdout by default)."""
    opts = opts or RenderOptions()
    console = _console(out, opts)
    summary = f"kdiagnose {report.k8s_version}: {report.num_nodes} node(s), {report.num_pods} pod(s)"
    if report.source:
        summary += f" from {report.source}"
    console.print(summary, style="dim")
    if not report.pods:
        console.print("No pending pods to diagnose.")
    for i, pr in enumerate(sorted(report.pods, key=lambda p: p.diagnosis.pod.key)):
        console.print()
        if i:
            console.rule(style="dim")
        _pod(console, pr, report, opts)
    tail: list[str] = []
    tail += [
        f"not replayed: {n}" if not n.startswith(("profile ", "not ")) else n for n in report.profile_notes
    ]
    tail += list(report.warnings)
    if report.skipped_kinds:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(report.skipped_kinds.items()))
        tail.append(f"skipped objects of kinds the scheduler does not read: {kinds}")
    if tail:
        console.print()
        console.print("Warnings", style="bold yellow")
        for w in tail:
            console.print(f"  - {w}")


def render_text(report: Report, opts: RenderOptions | None = None) -> str:
    """The human report as a string (no color unless asked), for tests and embedding."""
    import io

    buf = io.StringIO()
    o = opts or RenderOptions(color=False, width=80)
    render(report, buf, o)
    return buf.getvalue()
