"""`-o human`: the console report an on-call engineer reads, laid out for 80 columns, color only on a TTY.

The answer comes first: the first three lines are the verdict, the cause in one line and the first fix.
Then the scheduler's message (word-wrapped; -o json has it verbatim), the rejected nodes grouped by reason
(and collapsed by pool for big clusters), what would make it schedulable, then details (scores, what the
cluster recorded, notes). Pending pods of one owner (Deployment, StatefulSet, Job, DaemonSet, ...) are one
entry: the count, the distinct outcomes (each pod judged alone, as its event says) and how many would fit if
scheduled one after another. Notes shared by several pods, warnings and the input are printed at the end.

This module orchestrates the report and the per-pod sections; the pieces live beside it:
console_layout (wrapping, columns), console_summary (status words, the one-line summary), console_nodes
(rejected nodes by reason, pool and cause), console_scores (the score table) and details (causes in words).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from kdiagnose.report.console_layout import Out, node_list, plural, safe, stdout_closed
from kdiagnose.report.console_nodes import MAX_ROWS_PER_GROUP, group_rejections, render_group
from kdiagnose.report.console_scores import render_scores
from kdiagnose.report.console_summary import (
    STATUS_RANK,
    cause_and_fix,
    gates_command,
    glance,
    pod_headline,
    pod_status,
    rejections,
)
from kdiagnose.report.details import describe_details, short_list
from kdiagnose.results import MAX_REMEDIES
from kdiagnose.scheduler.framework import Code

if TYPE_CHECKING:
    from rich.console import Console

    from kdiagnose.results import PodReport, Report, Sequential

__all__ = [
    "MAX_OVERVIEW",
    "RenderOptions",
    "console_for",
    "describe_details",
    "entry_line",
    "footer",
    "glance",
    "overview",
    "own_notes",
    "pod_section",
    "render",
    "render_notes",
    "render_text",
]

# Entries listed in the overview at the top of a multi-entry report.
MAX_OVERVIEW = 20
# Pod names listed under an owner entry.
_MAX_NAMES = 6


@dataclass(slots=True)
class RenderOptions:
    top: int = 5
    all_nodes: bool = False
    all_remedies: bool = False
    color: bool | None = None  # None: only on a TTY (and never with NO_COLOR)
    width: int | None = None
    max_remedies: int = MAX_REMEDIES
    group: bool = True  # pending pods of one owner as one entry (False: --pod, every pod in full)
    summary: bool = False  # one line per entry (--summary)


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
                if line.lstrip().startswith("#"):
                    out.command(line.lstrip(), 7 + len(line) - len(line.lstrip()))  # a YAML comment
                else:
                    out.verbatim("       " + line)  # YAML: never re-wrapped
        # Commands are printed whole, one per line, never wrapped: a copy is the exact command.
        if r.commands:
            out.line("     run:", "dim")
            for cmd in r.commands:
                out.command(cmd, 7)
        if r.apply_note:
            out.para(f"then: {r.apply_note}", 5, 7, style="dim")
        if r.verify:
            out.line("     verify:", "dim")
            out.command(r.verify, 7)
        if r.rollback:
            out.line("     rollback:", "dim")
            out.command(r.rollback, 7)
    if len(pr.remedies) > limit:
        out.line(f"  … {len(pr.remedies) - limit} more (--all-remedies)", "dim")
    elif pr.remedies_not_tried:
        # The search stopped at the top remedies: later kinds could add more (never better ones).
        out.para(
            f"… more may exist: not tried: {', '.join(pr.remedies_not_tried)} (--all-remedies)", 2, 4, "dim"
        )


def _together(lead: PodReport, seq: Sequential | None) -> tuple[str, str, str] | None:
    """(verdict, cause, fix) of an owner whose pods each fit alone but not all together, else None."""
    if seq is None or seq.fit >= seq.total or seq.capped or pod_status(lead) != "schedulable":
        return None
    from kdiagnose.recorded import reason_counts

    if seq.rest_diagnosis is not None:
        why = rejections(seq.rest_diagnosis)
    else:
        reasons = reason_counts(seq.rest)[1]
        why = ", ".join(f"{c} {r}" for r, c in reasons.items()) or seq.rest
    cause = f"each fits alone, {seq.fit} of {seq.total} together; then {why}"
    fix = seq.rest_fix or "none found by the what-if replay"
    return f"only {seq.fit} fit together", cause, fix


def _title(
    out: Out, pr: PodReport, group: list[PodReport] | None = None, seq: Sequential | None = None
) -> str:
    """`Pod ns/name: VERDICT  (5 nodes, Deployment ns/web)`, or for an owner's entry
    `Deployment ns/web: 60 pods UNSCHEDULABLE  (5 nodes)`. Returns the parenthesis when it did not fit
    on the line: the caller prints it after the cause and fix, which keep lines 2 and 3."""
    from rich.text import Text

    d = pr.diagnosis
    word, style, _ = pod_headline(pr)
    title = Text()
    extra = [plural(d.num_all_nodes, "node") if not pr.not_replayed else "nodes not readable"]
    if d.profile and d.profile != "default-scheduler":
        extra.append(f"profile {d.profile}")
    if group is not None:
        counts = Counter(pod_status(p) for p in group)
        title.append(safe(pr.owner), style="bold")
        title.append(f": {len(group)} pods ")
        together = _together(pr, seq)
        if together is not None:
            title.append(together[0].upper(), style="bold yellow")
        elif len(counts) == 1:
            title.append(word.upper(), style=f"bold {style}")
        else:
            parts = [f"{counts[w]} {w}" for w in sorted(counts, key=lambda w: STATUS_RANK[w])]
            title.append(", ".join(parts), style=f"bold {style}")
    else:
        title.append(safe(f"Pod {d.pod.key}"), style="bold")
        title.append(": ")
        title.append(word.upper(), style=f"bold {style}")
        if pr.owner:
            extra.append(pr.owner)
    meta = f"({', '.join(extra)})"
    if len(title) + 2 + len(meta) <= out.width:
        title.append(safe(f"  {meta}"), style="dim")
        meta = ""
    out.text(title)  # a pod name is never broken
    return meta


def _answer(out: Out, pr: PodReport, meta: str = "", seq: Sequential | None = None) -> None:
    """Lines 2 and 3 of an entry: the cause and the first fix (or what happens next), one line each when
    they fit; then the title's parenthesis when it did not fit there."""
    together = _together(pr, seq)
    cause, label, fix = cause_and_fix(pr) if together is None else ("", "Fix", "")
    if together is not None:
        cause, fix = together[1], together[2]
    # Wrapped, never cut: an SRE reads the whole cause; a name or a command cut at the width is useless.
    # Continuation lines hang under the text so the labels stay the only lines starting at column 0.
    out.para(f"Cause: {cause}", 0, 2, style="bold")
    _label_line(out, label, fix, "bold green" if label == "Next" else "bold")
    if meta:
        out.para(meta, 0, 1, style="dim")


def _label_line(out: Out, label: str, text: str, style: str) -> None:
    """`Fix: ...` wrapped at spaces; a kubectl command in it is printed whole on a line of its own, so a
    copy is the exact command (a terminal soft-wraps a line wider than itself without changing it)."""
    line = f"{label}: {text}"
    cut = text.find("kubectl ")
    if len(line) <= out.width or cut < 0:
        out.para(line, 0, 2, style=style)
        return
    prose, command = text[:cut].rstrip(), text[cut:]
    out.para(f"{label}: {prose}" if prose else f"{label}:", 0, 2, style=style)
    out.command(command, 2, style)


def _pod(out: Out, pr: PodReport, report: Report, opts: RenderOptions, shared: set[str]) -> None:
    """One pod in full: the title, cause and fix, then the sections."""
    pod_section(out, pr, report, opts)
    render_notes(out, pr.diagnosis.notes, own_notes(pr), shared)


def pod_section(out: Out, pr: PodReport, report: Report, opts: RenderOptions) -> None:
    """One pod's entry but its Notes, which depend on the other pods (a note several pods carry is printed
    once at the end): the part report/console_stream.py renders while the other pods are diagnosed."""
    _answer(out, pr, _title(out, pr))
    _pod_main(out, pr, report, opts)


def _pod_body(out: Out, pr: PodReport, report: Report, opts: RenderOptions, shared: set[str]) -> None:
    _pod_main(out, pr, report, opts)
    render_notes(out, pr.diagnosis.notes, own_notes(pr), shared)


def _pod_main(out: Out, pr: PodReport, report: Report, opts: RenderOptions) -> None:
    d = pr.diagnosis
    word, _, headline = pod_headline(pr)
    if word == "bound":
        out.blank()
        out.para(f"State: {pr.triage}", 0, 2)
    if word == "schedulable" and pr.why_pending:
        out.blank()
        out.para(f"Still Pending: {pr.why_pending}", 0, 2, style="yellow")
    if word == "not replayed":
        out.blank()
        out.para(f"{pr.not_replayed}; what the cluster recorded follows.", 0, 2, style="yellow")
    if word in ("unschedulable", "gated", "waiting", "ignored"):
        # kube-scheduler's words, wrapped at spaces (never inside a word); -o json has the exact text.
        out.blank()
        out.line("Scheduler message:" if word != "ignored" else "Not replayed:", "bold")
        out.para(headline, 2, 2)
    if word == "unschedulable" and d.full_message and d.message and d.full_message != d.message:
        out.para(
            "(the event recorder truncates messages at 1024 bytes; -o json has the full text)", 2, 4, "dim"
        )
    if d.profile in report.profiles:
        # Filters and scores depend on the profile's plugins and weights: say which, when not the default.
        out.para(report.profiles[d.profile], 0, 2, style="cyan")
    if d.preenqueue is not None:
        held = "gates remain" if d.gated else f"{d.preenqueue.plugin} waits at PreEnqueue"
        out.para(
            f"No scheduling attempt is made while {held}, so no FailedScheduling event is written.",
            0,
            2,
            style="dim",
        )
        if d.gated:
            out.line("List the gates still set:", "dim")
            out.command(gates_command(d.pod), 2)
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
            body = line.lstrip(" ")
            indent = len(line) - len(body)
            # Wrapped at spaces like the scheduler message (-o json keeps the recorded text verbatim).
            hang = indent + 2 if body.startswith(("- ", "replayed: ")) or indent < 4 else indent
            out.para(body, indent, hang, line_style)


def own_notes(pr: PodReport) -> list[str]:
    """The remedy search's notes printed under the pod's Notes (an unschedulable pod, or one waiting with
    remedies, has them under Ruled out)."""
    word = pod_status(pr)
    if word != "unschedulable" and not (word == "waiting" and pr.remedies):
        return list(pr.remedy_notes)
    return []


def render_notes(out: Out, notes: list[str], own: list[str], shared: set[str]) -> None:
    """A pod's Notes: its diagnosis' notes but those printed once for the whole report, then `own`."""
    shown = [n for n in notes if n not in shared] + own
    if shown:
        out.blank()
        out.line("Notes", "bold")
        for n in shown:
            out.para(f"- {n}", 2, 4)


def console_for(out: TextIO | None, opts: RenderOptions) -> Console:
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


def _entries(pods: list[PodReport], group: bool) -> list[list[PodReport]]:
    """Pods in entries: the pending pods of one owner together (when `group`), every other pod alone;
    most actionable first."""
    entries: dict[str, list[PodReport]] = {}
    for pr in pods:
        key = pr.owner if group and pr.owner and not pr.triage else f"pod {pr.diagnosis.pod.key}"
        entries.setdefault(key, []).append(pr)
    out = [
        sorted(e, key=lambda p: (STATUS_RANK[pod_status(p)], p.diagnosis.pod.key)) for e in entries.values()
    ]
    return sorted(
        out, key=lambda e: (STATUS_RANK[pod_status(e[0])], e[0].owner or "", e[0].diagnosis.pod.key)
    )


def _outcome_key(pr: PodReport) -> tuple[Any, ...]:
    d = pr.diagnosis
    return (
        pod_status(pr),
        d.message,
        d.chosen if d.scheduled else None,
        tuple(r.summary for r in pr.remedies),
    )


def _outcomes(entry: list[PodReport]) -> list[list[PodReport]]:
    """The distinct outcomes of an entry's pods, each pod judged alone: the most common first."""
    by: dict[tuple[Any, ...], list[PodReport]] = {}
    for pr in entry:
        by.setdefault(_outcome_key(pr), []).append(pr)
    return sorted(by.values(), key=lambda g: (STATUS_RANK[pod_status(g[0])], -len(g), g[0].diagnosis.pod.key))


def _names(prs: list[PodReport]) -> str:
    names = [p.diagnosis.pod.name for p in prs]
    shown = ", ".join(names[:_MAX_NAMES])
    return shown + (f", … ({len(names)})" if len(names) > _MAX_NAMES else "")


def sequential_text(seq: Sequential) -> str:
    """ "12 of 60 would fit if scheduled one after another (node-a 6, node-c 6); the rest: <message>"."""
    placed = list(seq.by_node.items())
    where = ", ".join(f"{n} {c}" for n, c in placed[:3]) + (", …" if len(placed) > 3 else "")
    where = f" ({where})" if where else ""
    if seq.capped:
        return (
            f"at least {seq.fit} of {seq.total} would fit if scheduled one after another{where} "
            f"(stopped after {seq.fit} placements)"
        )
    if seq.fit == seq.total:
        return f"all {seq.total} would fit if scheduled one after another{where}"
    head = "none" if seq.fit == 0 else f"{seq.fit}"
    return f"{head} of {seq.total} would fit if scheduled one after another{where}; the rest: {seq.rest}"


def entry_line(entry: list[PodReport], report: Report) -> str:
    """One line for an entry (the overview, --summary): verdict, what, cause and fix."""
    lead = _outcomes(entry)[0][0]
    word = pod_status(lead)
    seq = report.sequential.get(lead.owner) if len(entry) > 1 else None
    together = _together(lead, seq)
    cause, label, fix = cause_and_fix(lead)
    if together is not None:
        word, cause, label, fix = together[0], together[1], "Fix", together[2]
    what = f"{lead.owner} ({len(entry)} pods)" if len(entry) > 1 else f"Pod {lead.diagnosis.pod.key}"
    text = f"{word.upper()}  {what}: {cause}; {label.lower()}: {fix}"
    if seq is not None and together is None:
        fits = "all" if seq.fit == seq.total else ("none" if seq.fit == 0 else f"{seq.fit}")
        text += f"; one after another {fits} of {seq.total} fit"
    return text


def _overview(out: Out, entries: list[list[PodReport]], report: Report, limit: int | None) -> None:
    shown = entries if limit is None else entries[:limit]
    overview(
        out,
        [pod_status(p) for e in entries for p in e],
        [entry_line(e, report) for e in shown],
        len(entries),
        sum(1 for e in entries if len(e) > 1),
    )


def overview(out: Out, statuses: list[str], lines: list[str], n_entries: int, owners: int) -> None:
    """The head of a multi-entry report: pods per status, then the first entries' one-line summaries."""
    counts = Counter(statuses)
    parts = [f"{counts[w]} {w}" for w in sorted(counts, key=lambda w: STATUS_RANK[w])]
    grouped = f" ({owners} owner{'s' if owners != 1 else ''} with several)" if owners else ""
    head = f"{plural(len(statuses), 'pod')} in {n_entries} {'entry' if n_entries == 1 else 'entries'}"
    out.para(f"{head}{grouped}: {', '.join(parts)}", 0, 2, style="bold")
    for line in lines:
        out.para(line, 2, 4)
    if n_entries > len(lines):
        out.line(f"  … {n_entries - len(lines)} more below (--summary lists every entry)", "dim")


def _owner_entry(
    out: Out, entry: list[PodReport], report: Report, opts: RenderOptions, shared: set[str]
) -> None:
    """An owner's pending pods: title, cause and fix of the most pressing outcome, one after another, the
    distinct outcomes, then each outcome's sections once."""
    outcomes = _outcomes(entry)
    lead = outcomes[0][0]
    seq = report.sequential.get(lead.owner)
    _answer(out, lead, _title(out, lead, entry, seq), seq)
    if seq is not None:
        out.para(f"Together: {sequential_text(seq)}", 0, 2)
    alone = ", ".join(f"{len(g)} {pod_status(g[0])}" for g in outcomes)
    n = len(outcomes)
    out.para(
        f"Each alone (against the bound pods, as its event says): {alone}"
        + (f" ({n} distinct outcomes)" if n > 1 else ", one outcome"),
        0,
        2,
        style="dim",
    )
    for g in outcomes:
        if n > 1:
            out.blank()
            word, style, _ = pod_headline(g[0])
            out.para(f"{len(g)} {word} alike: {_names(g)}", 0, 2, style=f"bold {style}")
            if g is not outcomes[0]:
                _answer(out, g[0])
        else:
            out.para(f"Pods: {_names(g)}", 0, 2, style="dim")
        _pod_body(out, g[0], report, opts, shared)


def footer(o: Out, report: Report, n_pods: int, seen: Counter[str], shared: set[str]) -> None:
    if shared:
        o.blank()
        o.line("Notes for the whole report", "bold")
        for n in sorted(shared, key=lambda n: (-seen[n], n)):
            scope = "every pod" if seen[n] == n_pods else f"{seen[n]} of {n_pods} pods"
            o.para(f"- {n} ({scope})", 2, 4)
    tail = [
        f"not replayed: {n}" if not n.startswith(("profile ", "not ")) else n for n in report.profile_notes
    ]
    tail += list(report.warnings)
    if report.replay_denied:
        o.blank()
        o.line("Replay not possible", "bold yellow")
        for line in report.replay_denied:
            o.para(f"- {line}", 2, 4)
        o.para(
            "The pods above show what the cluster recorded. To replay them, an admin grants this read-only "
            "access (kubectl apply -f FILE with the YAML below):",
            0,
            0,
        )
        for line in report.rbac.rstrip("\n").splitlines():
            o.verbatim(line)  # YAML: never re-wrapped
    if report.skipped_kinds:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(report.skipped_kinds.items()))
        tail.append(f"skipped objects of kinds the scheduler does not read: {kinds}")
    if tail:
        o.blank()
        o.line("Warnings", "bold yellow")
        for w in tail:
            o.para(f"- {w}", 2, 4)
    o.blank()
    summary = f"kdiagnose {report.k8s_version}: {report.num_nodes} node(s), {report.num_pods} pod(s)"
    if report.source:
        summary += f" from {report.source}"
    o.para(summary, 0, 2, style="dim")
    if report.k8s_version_reason and not report.k8s_version_reason.startswith("--k8s-version"):
        o.para(f"replayed as {report.k8s_version}: {report.k8s_version_reason}", 0, 2, style="dim")


def render(report: Report, out: TextIO | None = None, opts: RenderOptions | None = None) -> None:
    """Print the report to `out` (stdout by default)."""
    try:
        _render(report, out, opts or RenderOptions())
    except BrokenPipeError:
        if out is not None:
            raise
        stdout_closed()


def _render(report: Report, out: TextIO | None, opts: RenderOptions) -> None:
    o = Out(console_for(out, opts))
    pods = sorted(report.pods, key=lambda p: (STATUS_RANK[pod_status(p)], p.diagnosis.pod.key))
    # A note every pod (or several) carries is about the input, not the pod: print it once at the end.
    seen: Counter[str] = Counter(n for p in pods for n in dict.fromkeys(p.diagnosis.notes))
    shared = {n for n, c in seen.items() if c > 1}
    entries = _entries(pods, opts.group)
    if not pods:
        o.line("No pending pods to diagnose.")
        if report.scope_hint:
            o.para(report.scope_hint, 0, 2)
            if report.scope_command:
                o.verbatim("  " + report.scope_command)  # a command is never wrapped
    elif opts.summary:
        _overview(o, entries, report, None)
    else:
        if len(entries) > 1:
            _overview(o, entries, report, MAX_OVERVIEW)
        for i, entry in enumerate(entries):
            if len(entries) > 1 or i > 0:
                o.blank()
                o.rule()
            if len(entry) > 1:
                _owner_entry(o, entry, report, opts, shared)
            else:
                _pod(o, entry[0], report, opts, shared)
    footer(o, report, len(pods), seen, shared)


def render_text(report: Report, opts: RenderOptions | None = None) -> str:
    """The human report as a string (no color unless asked), for tests and embedding."""
    import io

    buf = io.StringIO()
    o = opts or RenderOptions(color=False, width=80)
    render(report, buf, o)
    return buf.getvalue()
