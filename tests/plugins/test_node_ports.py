"""NodePorts: wanted ports (sidecars per release), 0.0.0.0 and protocol semantics, details."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.nodeports.node_ports import NodePorts
from kdiagnose.versions import dialect_for
from tests.plugins.basic_factories import container, handle, node, pod, snapshot


def port(host_port: int, ip: str = "", proto: str = "") -> dict[str, Any]:
    p: dict[str, Any] = {"containerPort": host_port, "hostPort": host_port}
    if ip:
        p["hostIP"] = ip
    if proto:
        p["protocol"] = proto
    return p


@pytest.mark.parametrize(
    ("used", "wanted", "ok"),
    [
        pytest.param(port(80), port(80), False, id="same port and default protocol"),
        pytest.param(port(80), port(80, proto="UDP"), True, id="protocols are distinct"),
        pytest.param(port(80), port(81), True, id="different ports"),
        pytest.param(port(80), port(80, ip="127.0.0.1"), False, id="a specific IP conflicts with 0.0.0.0"),
        pytest.param(port(80, ip="10.0.0.1"), port(80), False, id="0.0.0.0 conflicts with any IP"),
        pytest.param(
            port(80, ip="10.0.0.1"), port(80, ip="10.0.0.2"), True, id="two specific IPs do not conflict"
        ),
        pytest.param(
            port(80, ip="10.0.0.1"), port(80, ip="10.0.0.1"), False, id="the same specific IP conflicts"
        ),
        pytest.param(
            port(80, proto="TCP"),
            port(80, ip="0.0.0.0", proto="TCP"),
            False,
            id="explicit defaults equal implicit",
        ),
    ],
)
def test_filter_conflicts(used: dict[str, Any], wanted: dict[str, Any], ok: bool) -> None:
    holder = pod("holder", node="n1", containers=[container(ports=[used])])
    snap = snapshot([node("n1")], [holder])
    pl = NodePorts(handle(snap))
    p = pod(containers=[container(ports=[wanted])])
    state = CycleState()
    _, pre = pl.pre_filter(state, p)
    assert pre.ok
    st = pl.filter(state, p, snap.node_infos[0])
    assert st.ok is ok
    if not ok:
        assert st.code == Code.UNSCHEDULABLE
        assert st.reasons == ("node(s) didn't have free ports for the requested pod ports",)
        assert st.details[0]["usedBy"] == "default/holder"


def test_pre_filter_skips_pods_without_host_ports() -> None:
    snap = snapshot([node("n1")])
    p = pod(containers=[container(ports=[{"containerPort": 8080}])])
    _, st = NodePorts(handle(snap)).pre_filter(CycleState(), p)
    assert st.code == Code.SKIP


def test_host_network_uses_the_container_port() -> None:
    holder = pod("holder", node="n1", containers=[container(ports=[port(9100)])])
    snap = snapshot([node("n1")], [holder])
    pl = NodePorts(handle(snap))
    p = pod(hostNetwork=True, containers=[container(ports=[{"containerPort": 9100}])])
    state = CycleState()
    pl.pre_filter(state, p)
    assert not pl.filter(state, p, snap.node_infos[0]).ok


@pytest.mark.parametrize(
    ("version", "ok"),
    [
        pytest.param("v1.34.1", False, id="v1.34 counts sidecar ports"),
        pytest.param("v1.33.3", True, id="v1.33 ignores sidecar ports"),
    ],
)
def test_sidecar_ports(version: str, ok: bool) -> None:
    dialect = dialect_for(version)
    sidecar = container("proxy", ports=[port(15000)], restart_policy="Always")
    holder = pod("holder", node="n1", init=[sidecar], dialect=dialect)
    snap = snapshot([node("n1")], [holder], dialect=dialect)
    pl = NodePorts(handle(snap))
    p = pod(containers=[container(ports=[port(15000)])], dialect=dialect)
    state = CycleState()
    pl.pre_filter(state, p)
    assert pl.filter(state, p, snap.node_infos[0]).ok is ok
    # And the incoming pod's own sidecar ports are wanted only from v1.34.
    p2 = pod(containers=[container()], init=[sidecar], dialect=dialect)
    _, pre = pl.pre_filter(CycleState(), p2)
    assert (pre.code == Code.SKIP) is ok
