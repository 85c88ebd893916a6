"""Free a host port: the conflicting pod, proven by replay."""

from __future__ import annotations

from tests.remedies.helpers import by_kind, remedies_for


def test_conflicting_pod_is_named() -> None:
    remedies, _ = remedies_for("remedies/host-port-held.yaml", "default/agent")
    (port,) = by_kind(remedies, "free-port")
    assert port.unblocks == ["node-1"]
    assert port.details["holders"] == ["default/metrics-1"]
    assert "8080/TCP" in port.summary


def test_daemonset_holders_are_a_note() -> None:
    remedies, notes = remedies_for(
        "golden/hostports-same-port-conflict.yaml", "traefik/traefik-5c7d9f8b6-m2kqw"
    )
    assert by_kind(remedies, "free-port") == []
    assert any("a DaemonSet pod holds the port" in n for n in notes)
