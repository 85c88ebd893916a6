"""How kube-scheduler's events are counted: the real recorder (client-go tools/events) keys a series by
the pod's ObjectReference, resourceVersion included, so the same message after a status update starts a
new Event object (tests/e2e/test_rbac_events.py shows it against the real scheduler). The count is every
attempt with the newest message, over all of them."""

from __future__ import annotations

import time
from typing import Any

from kdiagnose.recorded import latest_failed_scheduling

Obj = dict[str, Any]
NOW = time.time()
OLD = "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
NEW = OLD.replace("0/3", "0/4").replace(
    "3 Insufficient memory.",
    "1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 3 Insufficient memory.",
    1,
)


def _ts(age: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(NOW - age))


def _v1(note: str, age: float, rv: str, series: int = 0, source: str = "default-scheduler") -> Obj:
    ev: Obj = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "reason": "FailedScheduling",
        "note": note,
        "eventTime": _ts(age + 60),
        "reportingController": source,
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default", "resourceVersion": rv},
    }
    if series:
        ev["series"] = {"count": series, "lastObservedTime": _ts(age)}
    return ev


def test_the_count_adds_the_events_with_the_newest_message() -> None:
    events = [
        _v1(OLD, 300, "10"),  # first attempt
        _v1(NEW, 120, "11", series=3),  # the condition changed (rv 11): a new Event, then a series
        _v1(NEW, 10, "12", series=2),  # another status update (rv 12), same message: a new Event again
    ]
    got = latest_failed_scheduling(events)
    assert got is not None
    message, count, when, source = got
    assert (message, count, source) == (NEW, 5, "default-scheduler")
    assert when is not None and abs(when - (NOW - 10)) < 1


def test_other_components_and_older_messages_are_not_added() -> None:
    events = [_v1(NEW, 200, "1", series=4, source="other-scheduler"), _v1(OLD, 100, "2"), _v1(NEW, 5, "3")]
    assert latest_failed_scheduling(events) == (
        NEW,
        1,
        latest_failed_scheduling([events[2]])[2],
        "default-scheduler",
    )  # type: ignore[index]
