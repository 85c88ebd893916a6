"""`-o yaml`: the same kdiagnose/v1 document as `-o json`, as YAML (sorted keys)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.report.json import report_document, to_plain

if TYPE_CHECKING:
    from kdiagnose.results import Report

__all__ = ["dump_document", "render"]


def render(report: Report) -> str:
    return dump_document(report_document(report))


def dump_document(doc: object) -> str:
    """A report document (the `-o json` data) as YAML: sorted keys, long lines kept whole."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(
        to_plain(doc),
        Dumper=dumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=1_000_000,  # keep the scheduler's message on one line
    )
    return text
