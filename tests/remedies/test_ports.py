"""Free a host port: the conflicting pod, proven by replay."""

from __future__ import annotations

from pathlib import Path

from tests.remedies.helpers import FIXTURES, by_kind, remedies_for


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


def test_deleting_a_bare_holder_is_risky_and_says_nothing_re_creates_it() -> None:
    remedies, _ = remedies_for("remedies/host-port-held.yaml", "default/agent")
    (port,) = by_kind(remedies, "free-port")
    assert port.safety == "risky"
    assert port.risk.startswith("default/metrics-1 has no controller: deleting it removes it for good")
    assert port.rollback == "# a deleted pod is not restored: re-create a bare pod from its manifest"


def test_a_controllers_holder_names_the_owner_to_change(tmp_path: Path) -> None:
    text = (FIXTURES / "remedies/host-port-held.yaml").read_text()
    owned = text.replace(
        "metadata: {name: metrics-1, namespace: default, labels: {app: metrics}}",
        "metadata: {name: metrics-1, namespace: default, labels: {app: metrics}, ownerReferences: "
        "[{apiVersion: apps/v1, kind: StatefulSet, name: metrics, uid: u1, controller: true}]}",
    )
    assert owned != text
    (tmp_path / "owned.yaml").write_text(owned)
    remedies, _ = remedies_for(str(tmp_path / "owned.yaml"), "default/agent")
    (port,) = by_kind(remedies, "free-port")
    assert port.safety == "safe"
    assert "default/metrics-1 (StatefulSet default/metrics)" in port.summary
    assert port.risk.startswith(
        "StatefulSet default/metrics re-creates its pod, which may land on node-1 again"
    )
    assert port.apply_note == (
        "for a lasting fix change StatefulSet default/metrics: another hostPort, or a podAntiAffinity against "
        "this workload"
    )
    assert port.rollback == "# a deleted pod is not restored: StatefulSet default/metrics re-creates it"
