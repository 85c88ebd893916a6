"""`-o human` rendered while the pods are diagnosed (pipeline.diagnose_snapshot's `sink`), in the worker
processes when there are several.

The human report cannot be printed pod by pod: the overview at the top counts every pod and the entries are
sorted by status. But a pod's section (everything but its Notes, which leave out the notes several pods
share) depends on that pod alone, so it is rendered to text as soon as the pod is diagnosed, where it is
diagnosed; the pipeline keeps only what the exit code reads (`slim`), not 5,000 verdicts per pod. At the end
the sections are printed in the report's order with the overview, the notes and the footer that
report/console.py `render` prints: the same bytes.

A section is rendered to a string for the parent's console: its width, and its color system when it has one
(a terminal): rich renders the styles into the string as it would on the terminal (Style.render for that
color system), so the parent writes the same bytes. With several pending pods of one owner the pipeline does
not stream (the owner is one entry, placed one after another) and `finish` renders the whole report.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from kdiagnose.report.console import (
    MAX_OVERVIEW,
    RenderOptions,
    console_for,
    entry_line,
    footer,
    overview,
    own_notes,
    pod_section,
    render,
    render_notes,
)
from kdiagnose.report.console_layout import Out, stdout_closed
from kdiagnose.report.console_summary import STATUS_RANK, pod_status
from kdiagnose.report.json import Kept, from_kept, kept_of, slim

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.results import PodReport, Report

__all__ = ["PodSections", "Section"]


@dataclass(slots=True)
class Section:
    """One pod's part of the report, rendered: what the parent needs to place and finish it."""

    key: str
    status: str
    owner: str
    entry: str  # its one-line summary (the overview, --summary)
    body: str  # its lines up to its Notes
    notes: list[str] = field(default_factory=list)  # the diagnosis' notes (some may be printed at the end)
    own_notes: list[str] = field(default_factory=list)  # printed under its Notes whatever the others say
    kept: Kept = ("", 0, True, None, "")  # what `slim` keeps of the report (report/json.py kept_of)


class PodSections:
    """The pipeline's sink for `-o human`: `pod` in one process; `encode` in a worker, `emit` here."""

    # A section's texts are str, never a spool.FileText.
    takes_file_texts = False

    def __init__(self, opts: RenderOptions, out: TextIO | None = None) -> None:
        self.opts = opts
        self.out = out
        # The parent's width (the terminal's, COLUMNS, or 80 for a pipe) and color system (None: plain
        # text): every section is laid out and styled for them.
        parent = console_for(out, opts)
        self.width = parent.width
        self.color_system = parent.color_system
        self.sections: list[Section] = []

    def _section(self, report: Report, pr: PodReport) -> Section:
        from rich.console import Console

        buf = io.StringIO()
        if not self.opts.summary:
            console = Console(
                file=buf,
                width=self.width,
                color_system=self.color_system,  # type: ignore[arg-type]  # one of rich's own names
                force_terminal=self.color_system is not None,
                no_color=self.color_system is None,
                highlight=False,
                emoji=False,
                markup=False,
            )
            pod_section(Out(console), pr, report, self.opts)
        d = pr.diagnosis
        return Section(
            key=d.pod.key,
            status=pod_status(pr),
            owner=pr.owner,
            entry=entry_line([pr], report),
            body=buf.getvalue(),
            notes=list(d.notes),
            own_notes=own_notes(pr),
            kept=kept_of(pr),
        )

    def pod(self, report: Report, pr: PodReport) -> PodReport:
        self.sections.append(self._section(report, pr))
        return slim(pr)

    def encode(self, report: Report, pr: PodReport) -> Section:
        return self._section(report, pr)

    def emit(self, report: Report, pod: Pod, encoded: Section) -> PodReport:
        self.sections.append(encoded)
        return from_kept(pod, encoded.kept)

    def finish(self, report: Report) -> None:
        """Print the report: from the sections when every pod was streamed, else as `render` does."""
        if not report.pods or len(self.sections) != len(report.pods):
            render(report, self.out, self.opts)
            return
        try:
            self._print(report)
        except BrokenPipeError:
            if self.out is not None:
                raise
            stdout_closed()

    def _print(self, report: Report) -> None:
        o = Out(console_for(self.out, self.opts))
        # As console.py render: every entry is one pod here (no two pending pods share an owner), sorted
        # by status, owner, key.
        secs = sorted(self.sections, key=lambda s: (STATUS_RANK[s.status], s.key))
        seen: Counter[str] = Counter(n for s in secs for n in dict.fromkeys(s.notes))
        shared = {n for n, c in seen.items() if c > 1}
        entries = sorted(secs, key=lambda s: (STATUS_RANK[s.status], s.owner or "", s.key))
        statuses = [s.status for s in entries]
        if self.opts.summary:
            overview(o, statuses, [s.entry for s in entries], len(entries), 0)
        else:
            if len(entries) > 1:
                overview(o, statuses, [s.entry for s in entries[:MAX_OVERVIEW]], len(entries), 0)
            for s in entries:
                if len(entries) > 1:
                    o.blank()
                    o.rule()
                o.rendered(s.body)
                render_notes(o, s.notes, s.own_notes, shared)
        footer(o, report, len(secs), seen, shared)
