"""The autoscalers' pod events, with the exact messages their sources format."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.autoscaler.events import (
    parse_karpenter_failure,
    parse_not_triggered,
    parse_time,
    parse_triggered,
    pod_events,
)


@pytest.mark.parametrize(
    ("message", "want"),
    [
        pytest.param(
            "pod didn't trigger scale-up: 1 node(s) had untolerated taint {dedicated: batch}, 1 max node group size reached",
            {"node(s) had untolerated taint {dedicated: batch}": 1, "max node group size reached": 1},
            id="a predicate reason and a skipped-group reason",
        ),
        pytest.param(
            "pod didn't trigger scale-up: 2 in backoff after failed scale-up, 1 not ready for scale-up",
            {"in backoff after failed scale-up": 2, "not ready for scale-up": 1},
            id="backoff and not ready",
        ),
        pytest.param(
            "pod didn't trigger scale-up: max total nodes in cluster reached",
            {"max total nodes in cluster reached": 0},
            id="ScaleUpLimitedByMaxNodesTotal has no count",
        ),
        pytest.param("something else", {}, id="not cluster-autoscaler's message"),
    ],
)
def test_not_triggered(message: str, want: dict[str, int]) -> None:
    assert parse_not_triggered(message) == want


def test_triggered_lists_each_group_with_sizes() -> None:
    got = parse_triggered(
        "pod triggered scale-up: [{eks-apps-4ac6 2->3 (max: 5)} {https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/gke-c-a-grp 1->2 (max: 4)}]"
    )
    assert [(s.group, s.current, s.new, s.max) for s in got] == [
        ("eks-apps-4ac6", 2, 3, 5),
        ("https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/gke-c-a-grp", 1, 2, 4),
    ]


def test_karpenter_failure_is_split_per_nodepool() -> None:
    got = parse_karpenter_failure(
        'Failed to schedule pod, all available instance types exceed limits for nodepool "default"; '
        'incompatible with nodepool "gpu", daemonset overhead={"cpu":"150m"}, did not tolerate nvidia.com/gpu=true:NoSchedule; '
        'incompatible with nodepool "arm", daemonset overhead={"cpu":"150m"}, incompatible requirements, key kubernetes.io/arch, '
        "kubernetes.io/arch In [amd64] not in kubernetes.io/arch In [arm64]"
    )
    assert sorted(got) == ["arm", "default", "gpu"]
    assert got["gpu"].endswith("did not tolerate nvidia.com/gpu=true:NoSchedule")
    assert got["default"] == 'all available instance types exceed limits for nodepool "default"'


@pytest.mark.parametrize(
    ("text", "epoch"),
    [
        pytest.param("2026-11-30T14:02:11Z", 1796047331.0, id="RFC 3339"),
        pytest.param("2026-11-30T14:02:11.480151346Z", 1796047331.480151, id="RFC 3339 with nanoseconds"),
        pytest.param(
            "2026-11-30 14:02:11.480151346 +0000 UTC", 1796047331.480151, id="Go time.Time String()"
        ),
        pytest.param("2026-11-30 16:02:11 +0200 EET", 1796047331.0, id="Go String() with an offset"),
        pytest.param("yesterday", None, id="unreadable"),
    ],
)
def test_parse_time(text: str, epoch: float | None) -> None:
    got = parse_time(text)
    assert got == epoch if epoch is None else got == pytest.approx(epoch, abs=1e-5)


def _ev(
    reason: str, *, last: str | None = None, series: str | None = None, event_time: str | None = None
) -> dict[str, Any]:
    ev: dict[str, Any] = {"kind": "Event", "reason": reason, "message": reason, "source": {"component": "x"}}
    if last:
        ev["lastTimestamp"] = last
    if series:
        ev["series"] = {"count": 4, "lastObservedTime": series}
    if event_time:
        ev["eventTime"] = event_time
    return ev


def test_events_newest_first_with_ages_from_every_time_field() -> None:
    now = parse_time("2026-12-01T10:00:00Z")
    got = pod_events(
        [
            _ev("A", last="2026-12-01T09:59:00Z"),
            _ev("B", series="2026-12-01T09:59:50Z", event_time="2026-12-01T09:00:00Z"),
            _ev("C", event_time="2026-12-01T09:30:00Z"),
        ],
        now,
    )
    assert [(e.reason, e.age_seconds) for e in got] == [("B", 10.0), ("A", 60.0), ("C", 1800.0)]
    assert got[0].count == 4
