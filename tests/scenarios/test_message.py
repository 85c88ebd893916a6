"""The FailedScheduling text: histogram order, several reasons on one node, truncation, gates vs no nodes.

Derived from framework/types.go FitError.Error (each reason counted once per node; entries `"<count>
<reason>"` sorted with sort.Strings, i.e. byte-wise on the whole string), schedule_one.go truncateMessage
(over 1024 bytes: the first 1020 bytes + " ..."; Go slices bytes, so a split character shows as one U+FFFD per
byte once the event is read back as JSON) and scheduling_gates.go / scheduler.go (a gated pod never reaches a
cycle, so it never gets `no nodes available to schedule pods`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kdiagnose.scheduler.fit_error import truncate_event
from tests.scenarios.helpers import diagnose, diagnose_all, node, pod, scenario


def test_byte_wise_order_and_multi_reason_nodes(tmp_path: Path) -> None:
    """n1 lacks cpu and memory, n2 and n3 lack cpu only; ten tainted nodes. Sorted as strings:
    "1 Insufficient memory" < "10 node(s)..." < "3 Insufficient cpu" (the count's digits decide first)."""
    nodes = [node("n1", cpu="1", memory="1Gi"), node("n2", cpu="1"), node("n3", cpu="1")]
    nodes += [node(f"t{i}", taints=[{"key": "gpu", "effect": "NoSchedule"}]) for i in range(10)]
    text = scenario(*nodes, pod("p", cpu="2", memory="2Gi"))
    d = diagnose(tmp_path, text, "default/p", "v1.35.4")
    assert d.message == (
        "0/13 nodes are available: 1 Insufficient memory, 10 node(s) had untolerated taint(s), "
        "3 Insufficient cpu. no new claims to deallocate, preemption: 0/13 nodes are available: "
        "13 Preemption is not helpful for scheduling."
    )


def test_same_count_orders_uppercase_first(tmp_path: Path) -> None:
    """With equal counts the reason text decides, byte-wise: `Insufficient` (I, 0x49) before `node(s)`."""
    text = scenario(
        node("a", cpu="1"),
        node("b", labels={"pool": "other"}),
        pod("p", cpu="2", nodeSelector={"kubernetes.io/hostname": "a"}),
    )
    d = diagnose(tmp_path, text, "default/p", "v1.33.3")
    assert d.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


def _taint_flood() -> str:
    nodes = [
        node(f"node-{i:02d}", taints=[{"key": "team", "value": f"t{i:02d}", "effect": "NoSchedule"}])
        for i in range(40)
    ]
    return scenario(*nodes, pod("p"))


def test_truncation_at_1024_bytes(tmp_path: Path) -> None:
    """v1.34.1 names each taint, so 40 distinct taints make a long histogram; the event keeps 1020 bytes."""
    entries = ", ".join(f"1 node(s) had untolerated taint {{team: t{i:02d}}}" for i in range(40))
    full = (
        f"0/40 nodes are available: {entries}. no new claims to deallocate, "
        "preemption: 0/40 nodes are available: 40 Preemption is not helpful for scheduling."
    )
    d = diagnose(tmp_path, _taint_flood(), "default/p", "v1.34.1")
    assert d.full_message == full
    assert d.message == full[:1020] + " ..."
    assert len(d.message.encode()) == 1024


def test_v135_merges_taints_and_fits(tmp_path: Path) -> None:
    d = diagnose(tmp_path, _taint_flood(), "default/p", "v1.35.4")
    assert d.message == (
        "0/40 nodes are available: 40 node(s) had untolerated taint(s). no new claims to deallocate, "
        "preemption: 0/40 nodes are available: 40 Preemption is not helpful for scheduling."
    )


@pytest.mark.parametrize(
    ("message", "want_tail"),
    [
        pytest.param("a" * 1024, "a" * 1024, id="exactly 1024 bytes: unchanged"),
        pytest.param("a" * 1025, "a" * 1020 + " ...", id="1025 bytes: 1020 kept"),
        pytest.param(
            "a" * 1017 + "日" + "b" * 10, "a" * 1017 + "日 ...", id="a 3-byte character ending at byte 1020"
        ),
        pytest.param(
            "a" * 1018 + "日" + "b" * 10, "a" * 1018 + "\ufffd\ufffd ...", id="cut after 2 of 3 bytes"
        ),
        pytest.param("a" * 1019 + "é" + "b" * 10, "a" * 1019 + "\ufffd ...", id="cut after 1 of 2 bytes"),
    ],
)
def test_truncate_cuts_bytes_like_go(message: str, want_tail: str) -> None:
    assert truncate_event(message) == want_tail


def test_gates_win_over_no_nodes(tmp_path: Path) -> None:
    """With no nodes at all, a gated pod is still only `waiting for scheduling gates` (PreEnqueue, no event);
    an ungated pod gets `no nodes available to schedule pods` with no FitError and no PostFilter."""
    text = scenario(pod("gated", schedulingGates=[{"name": "b"}, {"name": "a"}]), pod("free"))
    r = diagnose_all(tmp_path, text)
    gated = r["default/gated"]
    assert gated.message is None
    assert gated.preenqueue is not None
    assert gated.preenqueue.reasons == ("waiting for scheduling gates: [b a]",)
    assert r["default/free"].message == "no nodes available to schedule pods"
    assert r["default/free"].postfilter is None
