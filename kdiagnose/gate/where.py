"""Fill a GateResult's locations (gate/locate.py) for every workload: where findings point.

Its own module so that the formats (text.py, findings.py) can both use it without importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.gate.blame import blame
from kdiagnose.gate.locate import DocRef, Location, PathBase, Sources, field_label, template_line

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult, WorkloadResult

__all__ = ["locate"]


def _warns(r: WorkloadResult) -> bool:
    return not r.fails_policy and r.outcome.value in ("preemption", "scale-up")


def _ref(r: WorkloadResult) -> DocRef:
    w = r.workload
    return DocRef(w.source, w.doc_index, w.line, w.item)


def locate(result: GateResult) -> None:
    """Fill every workload's location, its blamed fields' locations and, for helm output, where it was
    rendered. Object lines are read from the text; documents are composed only for workloads with a
    finding that names fields."""
    if result.located:
        return
    result.located = True
    paths = result.paths = result.paths or PathBase()
    sources = result.sources = result.sources or Sources()
    for r in result.results:
        ref = _ref(r)
        found = sources.object_line(ref)
        line = found or ref.line  # unreadable text (an archive's member): the loader's document line
        helm = sources.helm_source(ref)
        if helm:
            chart_file = paths.chart_file(helm)
            rendered = paths.location(ref.source, line, 1 if found else 0)
            r.rendered_from = rendered
            note = f"rendered by helm template from {helm} ({rendered.text})"
            if chart_file is not None:
                r.location = Location(chart_file, template_line(paths.root / chart_file), 1, "", note)
            else:
                r.location = Location(helm, 0, 0, "", note + "; template not found under the path base")
        else:
            r.location = paths.location(ref.source, line, 1 if found else 0)
        if not (r.fails_policy or _warns(r)):
            continue
        for b in blame(r.workload, r):
            pos = sources.field_position(ref, b.path)
            if pos is None:
                continue
            label = field_label(b.path)
            if r.rendered_from is not None and not r.rendered_from.file:
                # Rendered on stdin: the line is the rendered stream's, which no file has.
                r.fields.append(Location("", pos[0], pos[1], label, b.why))
            else:
                r.fields.append(paths.location(ref.source, pos[0], pos[1], label, b.why))
