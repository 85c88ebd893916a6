"""The recorded-vs-replayed section as plain text lines any formatter can print (analysis: kdiagnose/recorded.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.recorded import format_age

if TYPE_CHECKING:
    from kdiagnose.results import Recorded

__all__ = ["render_recorded"]


def render_recorded(rec: Recorded | None, replayed: str | None = None) -> list[str]:
    """Plain-text lines of the recorded-vs-replayed section (empty when nothing was recorded)."""
    if rec is None:
        return []
    lines = ["Recorded by the cluster:"]
    if rec.message is not None:
        times = f"{rec.count} time(s)" if rec.count else "once"
        lines.append(f"  FailedScheduling event ({format_age(rec.age_seconds)} ago, {times}):")
        lines.append(f"    {rec.message}")
    else:
        lines.append("  no FailedScheduling event (events expire after 1h by default)")
    if rec.condition_reason or rec.condition_message:
        lines.append(f"  PodScheduled=False {rec.condition_reason}".rstrip())
        if rec.condition_message and rec.condition_message != rec.message:
            lines.append(f"    {rec.condition_message}")
    if rec.agrees is True:
        lines.append(f"  Replay agrees: {rec.explanation or 'same message'}")
    elif rec.agrees is False:
        lines.append("  Replay differs:")
        if replayed:
            lines.append(f"    replayed: {replayed}")
        for cause in rec.explanation.split("; ") if rec.explanation else ():
            lines.append(f"    - {cause}")
    return lines
