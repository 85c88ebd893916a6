"""The FailedScheduling message: FitError.Error() of pkg/scheduler/framework/types.go, byte for byte."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kdiagnose.scheduler.framework import Status

__all__ = [
    "EVENT_MESSAGE_LIMIT",
    "NO_NODES_AVAILABLE",
    "fit_error_message",
    "reason_histogram",
    "truncate_event",
]

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
EVENT_MESSAGE_LIMIT = 1024


def reason_histogram(
    statuses: Iterable[Status], num_all_nodes: int, absent: Status | None, num_explicit: int
) -> list[str]:
    """`count reason` entries, each reason counted once per node, sorted as strings (Go sort.Strings)."""
    counts: dict[str, int] = {}
    for st in statuses:
        for r in st.reasons:
            counts[r] = counts.get(r, 0) + 1
    if absent is not None and num_explicit < num_all_nodes:
        for r in absent.reasons:
            counts[r] = counts.get(r, 0) + num_all_nodes - num_explicit
    # Go compares strings byte-wise; Python compares code points, which orders UTF-8 identically.
    return sorted(f"{c} {r}" for r, c in counts.items())


def fit_error_message(
    num_all_nodes: int,
    node_statuses: Mapping[str, Status],
    *,
    prefilter_msg: str = "",
    absent: Status | None = None,
    postfilter_msg: str = "",
) -> str:
    msg = f"0/{num_all_nodes} nodes are available:"
    if prefilter_msg:
        msg += f" {prefilter_msg}."
    else:
        items = reason_histogram(node_statuses.values(), num_all_nodes, absent, len(node_statuses))
        if items:
            msg += " " + ", ".join(items) + "."
    if postfilter_msg:
        msg += " " + postfilter_msg
    return msg


_SUFFIX = " ..."


def truncate_event(message: str) -> str:
    """schedule_one.go truncateMessage: over NoteLengthLimit (1024 bytes) the message keeps its first 1020
    bytes and gets ' ...'. Go slices bytes, so a multi-byte character at the cut is split; the event as read
    back (JSON, encoding/json) shows each byte of that partial character as U+FFFD, reproduced here."""
    data = message.encode()
    if len(data) <= EVENT_MESSAGE_LIMIT:
        return message
    head = data[: EVENT_MESSAGE_LIMIT - len(_SUFFIX)].decode(errors="surrogateescape")
    # surrogateescape maps every undecodable byte to one lone surrogate U+DC80-U+DCFF: one U+FFFD per byte.
    return "".join("\ufffd" if "\udc80" <= ch <= "\udcff" else ch for ch in head) + _SUFFIX
