"""Status.details in plain words, for the report: the text lives in scheduler/describe.py so that the
remedies' notes ("a new node is too small: ...") use the same words as the per-node causes."""

from __future__ import annotations

from kdiagnose.scheduler.describe import describe_details, merge_causes, node_cause, short_list, with_cause

__all__ = ["describe_details", "merge_causes", "node_cause", "short_list", "with_cause"]
