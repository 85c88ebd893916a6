"""`kdiagnose check -o human`: one line per workload, then the causes per node and remedies of failures.

The verdict first, then one paragraph per workload, word-wrapped (80 columns in CI logs, the terminal's
width on a terminal) and coloured only on a terminal, as the diagnose report. Shared helpers
(`node_causes`, `failure_text`) give the same per-node wording to the JUnit, SARIF and GitHub formats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from kdiagnose.report.details import describe_details, short_list, with_cause

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult, WorkloadResult
    from kdiagnose.results import PodReport

__all__ = ["MARKS", "OUTCOME_WORDS", "failure_text", "location", "node_causes", "render", "write"]

MARKS = {
    "fits": "PASS",
    "preemption": "WARN",
    "scale-up": "WARN",
    "unschedulable": "FAIL",
    "not-checked": "SKIP",
    "ignored": "SKIP",
}
OUTCOME_WORDS = {
    "fits": "fits now",
    "preemption": "fits only by preemption",
    "scale-up": "fits only after scale-up",
    "unschedulable": "never fits",
    "not-checked": "not checked",
    "ignored": "skipped",
}
_MAX_NODES_SHOWN = 3
_MAX_REMEDIES = 3


def location(r: WorkloadResult) -> str:
    """`file:line:column` of the object (relative to the path base; gate/locate.py), else the source."""
    if r.location is not None:
        return r.location.text
    w = r.workload
    return f"{w.source}:{w.line}" if w.line > 0 else w.source


def node_causes(pr: PodReport) -> list[str]:
    """Rejected nodes grouped by (plugin, reasons), in the order of the first node of each group."""
    d = pr.diagnosis
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]] = {}
    for node, st in d.verdicts.items():
        if st.ok:
            continue
        groups.setdefault((st.plugin or "", tuple(st.reasons)), []).append(
            (node, describe_details(st.details))
        )
    if d.not_evaluated and d.absent is not None:
        groups.setdefault(("", (_not_candidates(pr),)), []).extend((n, "") for n in d.not_evaluated)
    lines = []
    for (plugin, reasons), nodes in groups.items():
        names = [n for n, _ in nodes]
        shown = ", ".join(names[:_MAX_NODES_SHOWN]) + (
            f" and {len(names) - _MAX_NODES_SHOWN} more" if len(names) > _MAX_NODES_SHOWN else ""
        )
        head = f"{shown}: {plugin + ': ' if plugin else ''}{'; '.join(reasons)}"
        # "reason: node-a: cause; node-b: cause", joined as the remedies' notes join a reason and its cause
        # (scheduler/describe.py with_cause), not "reason (node-a: cause)": the causes have parentheses of
        # their own. A group of one node is named once, in the head: "node-c: Plugin: reason: cause".
        if len(nodes) == 1:
            lines.append(with_cause(head, nodes[0][1]))
        else:
            lines.append(
                with_cause(head, "; ".join(with_cause(n, x) for n, x in nodes[:_MAX_NODES_SHOWN] if x))
            )
    if d.preemption is not None:
        victims = ", ".join(sorted(v.key for v in d.preemption.victims))
        lines.append(
            f"preemption: nominated node {d.preemption.nominated_node}, evicting {victims or 'nothing'}"
        )
    return lines


def _not_candidates(pr: PodReport) -> str:
    """Why the nodes a PreFilterResult left out were never filtered, in words: "PreFilter: node(s) didn't
    satisfy plugin(s) [NodeAffinity]" next to a DaemonSet read as if the DaemonSet failed on those nodes,
    when its controller pins each node's pod to that node (ReplaceDaemonSetPodNodeNameNodeAffinity,
    pkg/controller/daemon/util) and kube-scheduler's PreFilter then skips every other node."""
    d = pr.diagnosis
    pinned = d.prefilter_node_names or []
    owner = d.pod.controller_ref() or {}
    if owner.get("kind") == "DaemonSet" and len(pinned) == 1:
        return (
            f"not this pod's node: the DaemonSet's pod for {pinned[0]} is pinned to it (node affinity on "
            "metadata.name), so kube-scheduler skips the other nodes; each node's own pod is checked on its own"
        )
    reasons = "; ".join(d.absent.reasons) if d.absent is not None else ""
    only = f": only {short_list(pinned, 5)} can be chosen" if pinned else ""
    return f"skipped at PreFilter{only} ({reasons})" if reasons else f"skipped at PreFilter{only}"


def failure_text(r: WorkloadResult) -> str:
    """The multi-line explanation of a workload that does not fit now (used as JUnit failure text too)."""
    out = [f"{r.workload.key} ({location(r)}): {r.summary}"]
    for f in r.fields:  # the manifest's fields the failure is about (gate/blame.py)
        where = f.text if f.file else f"line {f.line} of the rendered input"
        out.append(f"field {f.field} ({where}): {f.note}")
    if r.rendered_from is not None and r.location is not None:
        out.append(r.location.note)
    failures = [(f.node, f.report) for f in r.node_failures] or ([("", r.failure)] if r.failure else [])
    for node, pr in failures:
        if node and (len(failures) > 1 or (pr.diagnosis.message or "") not in r.summary):
            out.append(f"node {node}: {pr.diagnosis.message or ''}")
        elif node:
            out.append(f"node {node}:")  # its message is the summary's, not repeated
        out.extend(f"  {c}" for c in node_causes(pr))
        for i, rem in enumerate(pr.remedies[:_MAX_REMEDIES], 1):
            # The safety class first, as the diagnose report prints it: a reviewer must see that a fix is risky.
            out.append(f"  remedy {i}: [{rem.safety}] {rem.summary} ({rem.kind})")
        out.extend(f"  note: {n}" for n in pr.remedy_notes)
        out.extend(f"  note: {n}" for n in pr.diagnosis.notes)
    out.extend(f"note: {n}" for n in r.notes)
    return "\n".join(out)


_STYLE = {"PASS": "green", "WARN": "yellow", "FAIL": "bold red", "SKIP": "dim"}


def _items(result: GateResult) -> list[tuple[str, int, int, str | None]]:
    """(text, indent, hanging indent, style) of every paragraph: the verdict first, the input last."""
    failing = result.failing
    verdict = "FAILED" if failing else "OK"
    items: list[tuple[str, int, int, str | None]] = [
        (
            f"{verdict}: {len(failing)} of {len(result.results)} workload(s) fail the policy "
            f"(--fail-on {result.fail_on})",
            0,
            2,
            "bold red" if failing else "bold green",
        ),
        ("", 0, 0, None),
    ]
    for r in result.results:
        mark = "FAIL" if r.fails_policy else MARKS[r.outcome.value]
        items.append(
            (f"{mark} {r.workload.key} [{OUTCOME_WORDS[r.outcome.value]}]: {r.summary}", 0, 5, _STYLE[mark])
        )
        items.append((location(r), 5, 7, "dim"))
        if r.outcome.value in ("preemption", "scale-up", "unschedulable"):
            for x in failure_text(r).splitlines()[1:]:
                body = x.lstrip(" ")
                indent = 5 + len(x) - len(body)
                items.append((body, indent, indent + 2, None))
        elif r.notes:
            items.extend((f"note: {n}", 5, 7, None) for n in r.notes)
        if r.excluded_nodes:
            items.append(
                (f"not targeted by the DaemonSet controller: {len(r.excluded_nodes)} node(s)", 5, 7, None)
            )
            by_reason: dict[str, list[str]] = {}
            for n, why in sorted(r.excluded_nodes.items()):
                by_reason.setdefault(why, []).append(n)
            for why, nodes in by_reason.items():
                more = f" and {len(nodes) - _MAX_NODES_SHOWN} more" if len(nodes) > _MAX_NODES_SHOWN else ""
                items.append((f"{', '.join(nodes[:_MAX_NODES_SHOWN])}{more}: {why}", 7, 9, None))
        if r.headroom is not None:
            h = r.headroom
            items.append(
                (
                    f"headroom: {h.more}{'+' if h.capped else ''} more replica(s) fit; limit: {h.reason}",
                    5,
                    7,
                    None,
                )
            )
    items.append(("", 0, 0, None))
    if result.ignored_kinds:
        kinds = ", ".join(f"{k} ({n})" for k, n in result.ignored_kinds.items())
        items.append((f"other kinds in the input, not checked: {kinds}", 0, 2, None))
    items.extend((f"warning: {w}", 0, 2, "yellow") for w in result.warnings)
    items.append(
        (
            f"kdiagnose check ({result.k8s_version}): {len(result.results)} workload(s) against "
            f"{result.snapshot_source or 'the snapshot'} ({result.num_nodes} node(s), {result.num_pods} pod(s))",
            0,
            2,
            "dim",
        )
    )
    return items


def write(
    result: GateResult, out: TextIO | None = None, *, color: bool | None = None, width: int | None = None
) -> None:
    """Print the human report, wrapped at word boundaries to the terminal (80 columns when not a terminal)
    and coloured only on a terminal (never with `color=False` / NO_COLOR), as the diagnose report."""
    import os

    from kdiagnose.gate.where import locate

    locate(result)
    from rich.console import Console

    from kdiagnose.report.console_layout import Out

    no_color = color is False or bool(os.environ.get("NO_COLOR"))
    console = Console(
        file=out,
        no_color=no_color,
        color_system=None if no_color else "auto",
        force_terminal=False if no_color else (True if color else None),
        highlight=False,
        emoji=False,
        markup=False,
        width=width,
    )
    o = Out(console)
    for text, indent, hang, style in _items(result):
        if not text:
            o.blank()
        else:
            o.para(text, indent, hang, style)


def render(result: GateResult, width: int = 80) -> str:
    """The human report as plain text (no colour), `width` columns."""
    import io

    buf = io.StringIO()
    write(result, buf, color=False, width=width)
    return buf.getvalue()
