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


def _node(name: str) -> dict[str, object]:
    res = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": res, "capacity": res, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _pod(name: str, ports: list[int], node: str = "", owner: str = "") -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "namespace": "default", "uid": f"u-{name}"}
    if owner:
        ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": owner, "uid": f"o-{owner}"}
        meta["ownerReferences"] = [{**ref, "controller": True}]
    spec: dict[str, object] = {
        "containers": [
            {"name": "c", "image": "x", "ports": [{"containerPort": p, "hostPort": p} for p in ports]}
        ]
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def test_many_holders_fix_line_has_one_parenthesis_per_holder_and_plural_words(tmp_path: Path) -> None:
    """Generated: on each of two nodes three pods (two StatefulSets' and a bare one) hold the three ports the
    pod wants. The fix names each holder once with its owner, speaks of them in the plural, and the count
    of other nodes is a clause: `check` appends "(free-port)" after the summary, and "...conflict)
    (free-port)" read as a doubled parenthesis."""
    import json

    items = [_node("n1"), _node("n2")]
    for nd in ("n1", "n2"):
        items += [
            _pod(f"a-{nd}", [80], nd, "ss-a"),
            _pod(f"b-{nd}", [443], nd, "ss-b"),
            _pod(f"c-{nd}", [8080], nd),
        ]
    items.append(_pod("web", [80, 443, 8080]))
    (tmp_path / "many.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    remedies, _ = remedies_for(str(tmp_path / "many.json"), "default/web")
    (port,) = by_kind(remedies, "free-port")
    assert port.summary == (
        "host port 80/TCP, 443/TCP, 8080/TCP on n1 is held by default/a-n1 (StatefulSet default/ss-a), "
        "default/b-n1 (StatefulSet default/ss-b), default/c-n1 (no controller): move them to another node or "
        "give them another hostPort; 1 other node(s) have the same conflict"
    )
    assert "StatefulSet default/ss-a and StatefulSet default/ss-b re-create their pods" in port.risk


def test_fix_line_sorts_ports_by_number_then_protocol(tmp_path: Path) -> None:
    """The held ports in the fix line and in details["ports"]: by number as a number (10000 after 8080,
    which text order puts first), then by protocol name for one number (SCTP, TCP, UDP)."""
    import json

    ports = [(10000, "TCP"), (53, "UDP"), (8080, "TCP"), (53, "TCP"), (53, "SCTP"), (9, "UDP")]
    spec = [{"containerPort": p, "hostPort": p, "protocol": proto} for p, proto in ports]
    holder = _pod("holder", [], "n1")
    wanting = _pod("web", [])
    for pod in (holder, wanting):
        pod["spec"]["containers"][0]["ports"] = spec  # type: ignore[index]
    items = [_node("n1"), holder, wanting]
    (tmp_path / "protocols.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    remedies, _ = remedies_for(str(tmp_path / "protocols.json"), "default/web")
    (port,) = by_kind(remedies, "free-port")
    order = ["9/UDP", "53/SCTP", "53/TCP", "53/UDP", "8080/TCP", "10000/TCP"]
    assert port.details["ports"] == order
    assert port.summary.startswith(f"host port {', '.join(order)} on n1 is held by default/holder")
