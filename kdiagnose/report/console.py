"""`-o human`: the console report an on-call engineer reads, laid out for 80 columns, color only on a TTY.

Per pod, most actionable first: a title with a one-line summary ("3 rejected by taints, 2 by cpu; fix: …"),
the scheduler's message verbatim (soft-wrapped, never altered), the rejected nodes grouped by reason (and
collapsed by pool for big clusters), what would make it schedulable, then details (scores, what the cluster
recorded, notes). Notes shared by several pods are printed once at the end.

This module orchestrates the report and the per-pod sections; the pieces live beside it:
console_layout (wrapping, columns), console_summary (status words, the one-line summary), console_nodes
(rejected nodes by reason, pool and cause), console_scores (the score table) and details (causes in words).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from kdiagnose.report.console_layout import Out, node_list, plural, safe
from kdiagnose.report.console_nodes import MAX_ROWS_PER_GROUP, group_rejections, render_group
from kdiagnose.report.console_scores import render_scores
from kdiagnose.report.console_summary import STATUS_RANK, glance, pod_headline, pod_status
from kdiagnose.report.details import describe_details, short_list
from kdiagnose.scheduler.framework import Code

if TYPE_CHECKING:
    from rich.console import Console

    from kdiagnose.results import PodReport, Report

__all__ = ["RenderOptions", "describe_details", "glance", "render", "render_text"]

# Pods listed in the overview at the top of a multi-pod report.
_MAX_OVERVIEW = 20


@dataclass(slots=True)
class RenderOptions:
    top: int = 5
    all_nodes: bool = False
    all_remedies: bool = False
    color: bool | None = None  # None: only on a TTY (and never with NO_COLOR)
    width: int | None = None
    max_remedies: int = 3


def _remedies(out: Out, pr: PodReport, opts: RenderOptions) -> None:
    limit = len(pr.remedies) if opts.all_remedies else opts.max_remedies
    out.blank()
    if not pr.remedies:
        out.line("What would make it schedulable", "bold")
        see = " (see Ruled out)" if pr.remedy_notes else ""
        out.para(f"no change found that a what-if replay proves would work{see}", 2, 4)
        return
    out.para("What would make it schedulable (each proven by a what-if replay)", 0, 2, style="bold")
    for i, r in enumerate(pr.remedies[:limit], 1):
        out.para(f"{i}. [{r.safety}] {r.summary}", 2, 5, style="bold" if i == 1 else None)
        if r.target and r.target not in r.summary:
            out.para(f"target: {r.target}", 5, 7, style="dim")
        if r.unblocks:
            out.para(f"unblocks: {node_list(sorted(r.unblocks))}", 5, 7, style="dim")
        if r.risk:
            out.para(f"risk: {r.risk}", 5, 7, style="dim")
        if r.patch:
            for line in r.patch.rstrip("\n").splitlines():
                out.verbatim("       " + line)  # YAML: never re-wrapped
        # Commands are printed whole, one per line, never wrapped: a copy is the exact command.
        if r.commands:
            out.line("     run:", "dim")
            for cmd in r.commands:
                out.verbatim("       " + cmd)
        if r.apply_note:
            out.para(f"then: {r.apply_note}", 5, 7, style="dim")
        if r.verify:
            out.line("     verify:", "dim")
            out.verbatim("       " + r.verify)
        if r.rollback:
            out.line("     rollback:", "dim")
            out.verbatim("       " + r.rollback)
    if len(pr.remedies) > limit:
        out.line(f"  … {len(pr.remedies) - limit} more (--all-remedies)", "dim")


def _title(out: Out, pr: PodReport) -> None:
    from rich.text import Text

    d = pr.diagnosis
    word, style, _ = pod_headline(pr)
    title = Text()
    title.append(safe(f"Pod {d.pod.key}"), style="bold")
    title.append(": ")
    title.append(word.upper(), style=f"bold {style}")
    extra = [plural(d.num_all_nodes, "node")]
    if d.profile and d.profile != "default-scheduler":
        extra.append(f"profile {d.profile}")
    if pr.owner:
        extra.append(pr.owner)
    meta = f"({', '.join(extra)})"
    if len(title) + 2 + len(meta) <= out.width:
        title.append(safe(f"  {meta}"), style="dim")
        out.console.print(title, soft_wrap=True)
    else:
        out.console.print(title, soft_wrap=True)  # a pod name is never broken
        out.para(meta, 2, 3, style="dim")


def _pod(out: Out, pr: PodReport, report: Report, opts: RenderOptions, shared: set[str]) -> None:
    d = pr.diagnosis
    word, _, headline = pod_headline(pr)
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
        held = "gates remain" if d.gated else f"{d.preenqueue.plugin} waits at PreEnqueue"
        out.para(
            f"No scheduling attempt is made while {held}, so no FailedScheduling event is written.",
            0,
            2,
            style="dim",
        )
    if d.prefilter is not None and d.prefilter.code == Code.ERROR:
        out.para(
            f"PreFilter {d.prefilter.plugin} failed with an error: {d.prefilter.message}", 0, 2, "yellow"
        )

    groups = group_rejections(d, opts.all_nodes) if d.prefilter is None else []

    def rejected() -> None:
        if not groups:
            return
        n = sum(len(g.members) for g in groups)
        out.blank()
        fit = f"; {len(d.feasible)} fit" if d.feasible else ""
        verb = "was" if n == 1 else "were"
        out.line(f"Why {n} of {plural(d.num_all_nodes, 'node')} {verb} rejected{fit}", "bold")
        # For a pod that schedules, the rejections are background: per-node causes only when few.
        brief = bool(d.feasible) and n > MAX_ROWS_PER_GROUP and not opts.all_nodes
        for g in groups:
            render_group(out, g, report.node_pools, opts.all_nodes, brief)
        if brief:
            out.line("  (--all-nodes shows the cause on every node)", "dim")

    if word == "schedulable":
        if d.scores:
            out.blank()
            render_scores(out, d, report.node_pools, opts.top, opts.all_nodes)
        rejected()
    elif word == "unschedulable":
        rejected()
        preempt = [r for r in pr.remedies if r.kind == "preemption"]
        if d.preemption is not None and not preempt:
            victims = sorted(v.key for v in d.preemption.victims)
            pdb = d.preemption.pdb_violations
            out.blank()
            out.para(
                f"Preemption: kube-scheduler would evict {plural(len(victims), 'lower-priority pod')} on "
                f"{d.preemption.nominated_node} ({short_list(victims, 5) or 'none'})"
                + (f", violating {plural(pdb, 'PodDisruptionBudget')}" if pdb else "")
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
    elif word == "waiting" and pr.remedies:
        # Held at PreEnqueue (DRA claims not created yet): the missing object is the cause and the fix.
        _remedies(out, pr, opts)
        if pr.remedy_notes:
            out.blank()
            out.line("Ruled out", "bold")
            for n in pr.remedy_notes:
                out.para(f"- {n}", 2, 4)

    if pr.recorded is not None and (
        pr.recorded.message or pr.recorded.condition_message or pr.recorded.events
    ):
        from kdiagnose.report.recorded import render_recorded

        out.blank()
        for i, line in enumerate(render_recorded(pr.recorded, d.message)):
            line_style = "bold" if i == 0 else ("yellow" if "differs" in line else None)
            out.verbatim(line, line_style)  # holds the recorded message: never re-wrapped

    notes = [n for n in d.notes if n not in shared]
    if word != "unschedulable" and not (word == "waiting" and pr.remedies):
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


def _overview(out: Out, pods: list[PodReport]) -> None:
    counts = Counter(pod_status(p) for p in pods)
    parts = [f"{counts[w]} {w}" for w in sorted(counts, key=lambda w: STATUS_RANK[w])]
    out.blank()
    out.para(f"{len(pods)} pods: {', '.join(parts)}", 0, 2, style="bold")
    for pr in pods[:_MAX_OVERVIEW]:
        word = pod_status(pr)
        short = glance(pr)
        if word == "schedulable":
            short = f"binds to {pr.diagnosis.chosen}"
        elif word in ("ignored", "bound"):
            short = pod_headline(pr)[2]
        out.para(f"{word:<13} {pr.diagnosis.pod.key}" + (f": {short}" if short else ""), 2, 16)
    if len(pods) > _MAX_OVERVIEW:
        out.line(f"  … {len(pods) - _MAX_OVERVIEW} more below", "dim")


def render(report: Report, out: TextIO | None = None, opts: RenderOptions | None = None) -> None:
    """Print the report to `out` (stdout by default)."""
    opts = opts or RenderOptions()
    o = Out(_console(out, opts))
    summary = f"kdiagnose {report.k8s_version}: {report.num_nodes} node(s), {report.num_pods} pod(s)"
    if report.source:
        summary += f" from {report.source}"
    o.para(summary, 0, 2, style="dim")
    if report.k8s_version_reason and not report.k8s_version_reason.startswith("--k8s-version"):
        o.para(f"replayed as {report.k8s_version}: {report.k8s_version_reason}", 0, 2, style="dim")
    if not report.pods:
        o.line("No pending pods to diagnose.")
    pods = sorted(report.pods, key=lambda p: (STATUS_RANK[pod_status(p)], p.diagnosis.pod.key))
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
        key = (pr.owner, pod_status(pr), d.message, tuple(r.summary for r in pr.remedies), tuple(d.notes))
        if pr.owner and key in first and pod_status(pr) in ("unschedulable", "gated", "waiting"):
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
    tail = [
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
