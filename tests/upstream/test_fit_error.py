"""Ported from pkg/scheduler/framework/types_test.go (v1.34) TestFitError_Error: FitError.Error() for a given
Diagnosis (PreFilterMsg, NodeToStatus, PostFilterMsg)."""

from __future__ import annotations

import pytest

from kdiagnose.scheduler.fit_error import fit_error_message
from kdiagnose.scheduler.framework import Status

PRE = "Node(s) failed PreFilter plugin FalsePreFilter"
POST = "Error running PostFilter plugin FailedPostFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"


def _u(reason: str) -> Status:
    return Status.unschedulable(reason)


@pytest.mark.parametrize(
    ("n", "pre", "statuses", "post", "want"),
    [
        pytest.param(
            3,
            PRE,
            {"node1": _u(PRE), "node2": _u(PRE), "node3": _u(PRE)},
            "",
            f"0/3 nodes are available: {PRE}.",
            id="nodes failed Prefilter plugin",
        ),
        pytest.param(
            3,
            PRE,
            {"node1": _u(PRE), "node2": _u(PRE), "node3": _u(PRE)},
            POST,
            f"0/3 nodes are available: {PRE}. {POST}",
            id="nodes failed Prefilter plugin and the preemption also failed",
        ),
        pytest.param(
            3,
            "",
            {"node1": _u(F1), "node2": _u(F1), "node3": _u(F1)},
            "",
            f"0/3 nodes are available: 3 {F1}.",
            id="nodes failed one Filter plugin with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            "",
            {"node1": _u(F1), "node2": _u(F1), "node3": _u(F1)},
            POST,
            f"0/3 nodes are available: 3 {F1}. {POST}",
            id="nodes failed one Filter plugin with a non-empty PostFilterMsg",
        ),
        pytest.param(
            3,
            "",
            {"node1": _u(F1), "node2": _u(F1), "node3": _u(F2)},
            "",
            f"0/3 nodes are available: 1 {F2}, 2 {F1}.",
            id="nodes failed two Filter plugins with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            "",
            {"node1": _u(F1), "node2": _u(F1), "node3": _u(F2)},
            POST,
            f"0/3 nodes are available: 1 {F2}, 2 {F1}. {POST}",
            id="nodes failed two Filter plugins with a non-empty PostFilterMsg",
        ),
        pytest.param(
            1,
            "",
            {"node1": _u("Node failed Permit plugin Permit-1")},
            "",
            "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
            id="failed to Permit on node",
        ),
        pytest.param(
            1,
            "",
            {"node1": _u("Node failed Reserve plugin Reserve-1")},
            "",
            "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
            id="failed to Reserve on node",
        ),
    ],
)
def test_fit_error_error(n: int, pre: str, statuses: dict[str, Status], post: str, want: str) -> None:
    # The absent-nodes status of NewNodeToStatus(..., UU without reasons) adds nothing.
    absent = Status.unresolvable()
    got = fit_error_message(n, {} if pre else statuses, prefilter_msg=pre, absent=absent, postfilter_msg=post)
    assert got == want
