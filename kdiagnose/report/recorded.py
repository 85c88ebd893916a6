"""The recorded-vs-replayed section as plain text lines any formatter can print (analysis: kdiagnose/recorded.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.recorded import describe_age, format_age

if TYPE_CHECKING:
    from kdiagnose.results import Recorded

__all__ = ["render_recorded"]


def _event_lines(rec: Recorded) -> list[str]:
    """Every event about the pod, newest first, then each autoscaler event beside the replay."""
    lines: list[str] = []
    if rec.events:
        lines.append("  Events about the pod (newest first):")
        for e in rec.events:
            age = e.get("ageSeconds")
            when = f"{format_age(age)} ago" if age is not None else "time not recorded"
            times = f" x{e['count']}" if int(e.get("count") or 1) > 1 else ""
            lines.append(
                f"    {when:>10}  {e.get('who')}  {e.get('type')} {e.get('reason')}{times}: {e.get('message')}"
            )
    for row in rec.autoscaler:
        verdict = {True: "agrees", False: "differs", None: "compare"}[row.get("agrees")]
        lines.append(f"  {row.get('who')} {row.get('reason')} vs the replay ({verdict}):")
        lines.append(f"    recorded: {row.get('recorded')}")
        lines.append(f"    replayed: {row.get('replayed')}")
        if row.get("explanation"):
            lines.append(f"    - {row.get('explanation')}")
    return lines


def render_recorded(rec: Recorded | None, replayed: str | None = None) -> list[str]:
    """Plain-text lines of the recorded-vs-replayed section (empty when nothing was recorded)."""
    if rec is None:
        return []
    lines = ["Recorded by the cluster:"]
    if rec.message is not None:
        times = f"{rec.count} time(s)" if rec.count else "once"
        lines.append(f"  FailedScheduling event ({describe_age(rec)}, {times}):")
        lines.append(f"    {rec.message}")
    elif not rec.events:
        lines.append("  no FailedScheduling event (events expire after 1h by default)")
    if rec.condition_reason or rec.condition_message:
        lines.append(f"  PodScheduled=False {rec.condition_reason}".rstrip())
        if rec.condition_message and rec.condition_message != rec.message:
            lines.append(f"    {rec.condition_message}")
    lines.extend(_event_lines(rec))
    if rec.agrees is True:
        lines.append(f"  Replay agrees: {rec.explanation or 'same message'}")
    elif rec.agrees is False:
        lines.append("  Replay differs:")
        if replayed:
            lines.append(f"    replayed: {replayed}")
        for cause in rec.explanation.split("; ") if rec.explanation else ():
            lines.append(f"    - {cause}")
    return lines
