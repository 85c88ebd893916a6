"""Write a Report to stdout in the chosen format (shared by `diagnose`, `pod` and `pods`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kdiagnose.report.console import RenderOptions
    from kdiagnose.results import Report

__all__ = ["OUTPUT_FORMATS", "emit", "human_options"]

OUTPUT_FORMATS = ("human", "json", "yaml")


def _color(no_color: bool) -> bool | None:
    if no_color or os.environ.get("NO_COLOR"):
        return False
    return None  # rich decides: color only on a terminal


def emit(
    report: Report,
    output: str,
    *,
    no_color: bool,
    top: int,
    all_nodes: bool,
    all_remedies: bool,
    summary: bool = False,
    group: bool = True,
) -> None:
    if output == "json":
        from kdiagnose.report.json import render as render_json
        from kdiagnose.report.json import write as write_json

        binary = getattr(sys.stdout, "buffer", None)
        if binary is not None:
            # Streamed: 1,000 pods at 5,000 nodes are GBs of JSON, never held whole in memory.
            sys.stdout.flush()
            write_json(report, binary)
            binary.flush()
        else:
            sys.stdout.write(render_json(report))
    elif output == "yaml":
        from kdiagnose.report.yaml import render as render_yaml

        sys.stdout.write(render_yaml(report))
    else:
        from kdiagnose.report.console import render
        from kdiagnose.report.console_layout import flush_stdout

        render(report, None, human_options(no_color, top, all_nodes, all_remedies, summary, group))
        flush_stdout()
        return
    sys.stdout.flush()


def human_options(
    no_color: bool, top: int, all_nodes: bool, all_remedies: bool, summary: bool, group: bool
) -> RenderOptions:
    """The console report's options from the command's flags."""
    from kdiagnose.report.console import RenderOptions

    return RenderOptions(
        top=top,
        all_nodes=all_nodes,
        all_remedies=all_remedies,
        color=_color(no_color),
        summary=summary,
        group=group,
    )
