"""Ports of pkg/scheduler/framework/plugins/nodeports/node_ports_test.go (TestNodePorts, TestPreFilterDisabled,
TestFits), of HostPortInfo's TestHostPortInfo_AddRemove / TestHostPortInfo_Check (framework types_test.go)
and of GetHostPorts (pkg/scheduler/util/utils.go, with the hostNetwork port defaulting of
pkg/apis/core/v1/defaults.go), against kdiagnose NodePorts and NodeInfo.used_ports.

Skipped, Go-only mechanics: Test_isSchedulableAfterAssignedPodDeleted (queueing hints).
"""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.model.snapshot import NodeInfo
from kdiagnose.scheduler.framework import Code, CycleState
from kdiagnose.scheduler.plugins.nodeports.node_ports import ERR_REASON, NodePorts, fits_ports, wanted_ports
from kdiagnose.versions import dialect_for
from tests.upstream.basic_builders import make_node, make_pod
from tests.upstream.builders import new_plugin, new_snapshot

Obj = dict[str, Any]
V133 = dialect_for("v1.33.3")


def _ports(*infos: str) -> list[Obj]:
    """newPod's "PROTO/IP/PORT" strings as ContainerPorts (no containerPort, as upstream)."""
    out = []
    for info in infos:
        proto, ip, port = info.split("/")
        p: Obj = {"hostPort": int(port)}
        if ip:
            p["hostIP"] = ip
        if proto:
            p["protocol"] = proto
        out.append(p)
    return out


def new_pod(host: str, *infos: str) -> Pod:
    """newPod (node_ports_test.go): one container with all the ports."""
    w = make_pod().name("p-" + "-".join(infos) if infos else "p-empty")
    if infos:
        w.container_port(_ports(*infos))
    if host:
        w.node(host)
    return w.obj()


def node_info(*pods: Pod) -> NodeInfo:
    """framework.NewNodeInfo(pods...)."""
    ni = NodeInfo(make_node().name("n").obj())
    for p in pods:
        ni.add_pod(p)
    return ni


def _run(
    pod: Pod, ni: NodeInfo, dialect_version: str = "v1.34.1"
) -> tuple[Code, Code | None, tuple[str, ...]]:
    snap = new_snapshot([], [ni.node], dialect=dialect_for(dialect_version))
    plugin = new_plugin(NodePorts, snap)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod)
    if pre.code == Code.SKIP:
        return pre.code, None, ()
    st = plugin.filter(state, pod, ni)
    return pre.code, st.code, st.reasons


SIDECAR_8001 = make_pod().init_container_port(
    True, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]
)
INIT_8001 = make_pod().init_container_port(
    False, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]
)


@pytest.mark.parametrize(
    ("pod", "ni", "want_skip", "want_fail"),
    [
        pytest.param(make_pod().name("empty").obj(), node_info(), True, False, id="skip filter"),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info(new_pod("m1", "UDP/127.0.0.1/9090")),
            False,
            False,
            id="other port",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
            False,
            True,
            id="same udp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
            False,
            True,
            id="same tcp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            node_info(new_pod("m1", "TCP/127.0.0.2/8080")),
            False,
            False,
            id="different host ip",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8080")),
            False,
            False,
            id="different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            node_info(new_pod("m1", "UDP/127.0.0.1/8080")),
            False,
            True,
            id="second udp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
            False,
            True,
            id="first tcp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/0.0.0.0/8001"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
            False,
            True,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            node_info(new_pod("m1", "TCP/127.0.0.1/8001")),
            False,
            True,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001"),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
            False,
            True,
            id="second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
            False,
            False,
            id="second different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
            False,
            True,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            INIT_8001.obj(),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
            True,
            False,
            id="non-sidecar initContainer using hostPort",
        ),
        pytest.param(
            SIDECAR_8001.obj(),
            node_info(new_pod("m1", "TCP/0.0.0.0/8001")),
            False,
            True,
            id="TCP hostPort conflict from sidecar initContainer",
        ),
    ],
)
def test_node_ports(pod: Pod, ni: NodeInfo, want_skip: bool, want_fail: bool) -> None:
    pre, code, reasons = _run(pod, ni)
    if want_skip:
        assert pre == Code.SKIP
        return
    assert pre == Code.SUCCESS
    if want_fail:
        assert code == Code.UNSCHEDULABLE
        assert reasons == (ERR_REASON,)
    else:
        assert code == Code.SUCCESS


def test_pre_filter_disabled() -> None:
    """TestPreFilterDisabled: Filter without PreFilter state is an error (fwk.ErrNotFound)."""
    pod = make_pod().name("p").obj()
    ni = node_info()
    plugin = new_plugin(NodePorts, new_snapshot([], [ni.node]))
    st = plugin.filter(CycleState(), pod, ni)
    assert st.code == Code.ERROR


@pytest.mark.parametrize(
    ("pod", "existing", "expect"),
    [
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80"), ("TCP/127.0.0.1/9090",), True, id="non-conflicting ports"
        ),
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
            ("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"),
            True,
            id="multiple non-conflicting ports",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"),
            ("UDP/127.0.0.1/80",),
            True,
            id="same ports on different protocols",
        ),
        pytest.param(new_pod("m1", "TCP/127.0.0.1/80"), ("TCP/127.0.0.1/80",), False, id="conflicting ports"),
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
            ("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"),
            False,
            id="multiple ports, some conflicting",
        ),
    ],
)
def test_fits(pod: Pod, existing: tuple[str, ...], expect: bool) -> None:
    """TestFits: Fits(pod, newNodeInfo(existing...))."""
    ni = node_info(new_pod("p1", *existing))
    assert fits_ports(wanted_ports(pod, True), ni.used_ports) is expect


# hostPortInfoParam is (protocol, ip, port); each added port goes through a bound pod's container.
HP = tuple[str, str, int]


def _hp_pod(name: str, params: list[HP]) -> Pod:
    return make_pod().name(name).container_port(_ports(*(f"{p}/{ip}/{port}" for p, ip, port in params))).obj()


HP_ALL = [
    ("TCP", "127.0.0.1", 79),
    ("UDP", "127.0.0.1", 80),
    ("TCP", "127.0.0.1", 81),
    ("TCP", "127.0.0.1", 82),
    ("TCP", "0.0.0.0", 79),
    ("UDP", "0.0.0.0", 80),
    ("TCP", "0.0.0.0", 81),
    ("TCP", "0.0.0.0", 82),
]


@pytest.mark.parametrize(
    ("added", "remove", "length"),
    [
        pytest.param(
            [*HP_ALL, ("TCP", "0.0.0.0", 0), ("TCP", "0.0.0.0", -1)], False, 8, id="normal add case"
        ),
        pytest.param(
            [
                ("", "127.0.0.1", 79),
                ("UDP", "127.0.0.1", 80),
                ("", "127.0.0.1", 81),
                ("", "127.0.0.1", 82),
                ("", "", 79),
                ("UDP", "", 80),
                ("", "", 81),
                ("", "", 82),
                ("", "", 0),
                ("", "", -1),
            ],
            False,
            8,
            id="empty ip and protocol add should work",
        ),
        pytest.param(HP_ALL, True, 0, id="normal remove case"),
    ],
)
def test_host_port_info_add_remove(added: list[HP], remove: bool, length: int) -> None:
    """TestHostPortInfo_AddRemove, through NodeInfo.add_pod/remove_pod of a pod declaring the ports
    (the removed list equals the added one in the remove cases)."""
    pod = _hp_pod("hp", added)
    ni = node_info(pod)
    if remove:
        ni.remove_pod(pod)
    assert len(set(ni.used_ports)) == length


@pytest.mark.parametrize(
    ("added", "check", "expect"),
    [
        pytest.param(
            [("TCP", "127.0.0.1", 80)], ("", "", 81), False, id="empty check should check 0.0.0.0 and TCP"
        ),
        pytest.param(
            [("TCP", "127.0.0.1", 80)],
            ("", "", 80),
            True,
            id="empty check should check 0.0.0.0 and TCP (conflicted)",
        ),
        pytest.param([("TCP", "127.0.0.1", 80)], ("", "", 0), False, id="empty port check should pass"),
        pytest.param(
            [("TCP", "127.0.0.1", 80)],
            ("TCP", "0.0.0.0", 80),
            True,
            id="0.0.0.0 should check all registered IPs",
        ),
        pytest.param(
            [("UDP", "127.0.0.1", 80)],
            ("TCP", "0.0.0.0", 80),
            False,
            id="0.0.0.0 with different protocol should be allowed",
        ),
        pytest.param(
            [("TCP", "127.0.0.1", 79), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)],
            ("TCP", "0.0.0.0", 80),
            False,
            id="0.0.0.0 with different port should be allowed",
        ),
        pytest.param(
            [("TCP", "0.0.0.0", 80)],
            ("TCP", "127.0.0.1", 80),
            True,
            id="normal ip should check all registered 0.0.0.0",
        ),
        pytest.param(
            [("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)],
            ("TCP", "127.0.0.1", 80),
            False,
            id="normal ip with different port/protocol should be allowed (0.0.0.0)",
        ),
        pytest.param(
            [
                ("TCP", "127.0.0.1", 79),
                ("UDP", "127.0.0.1", 80),
                ("TCP", "127.0.0.1", 81),
                ("TCP", "127.0.0.1", 82),
            ],
            ("TCP", "127.0.0.1", 80),
            False,
            id="normal ip with different port/protocol should be allowed",
        ),
    ],
)
def test_host_port_info_check(added: list[HP], check: HP, expect: bool) -> None:
    """TestHostPortInfo_Check: CheckConflict of a wanted port (sanitized like the pod's own ports)."""
    ni = node_info(_hp_pod("hp", added))
    proto, ip, port = check
    wanted = [(ip or "0.0.0.0", proto or "TCP", port)]
    assert (not fits_ports(wanted, ni.used_ports)) is expect


def test_removing_one_of_two_pods_sharing_a_port_frees_it() -> None:
    """HostPortInfo is a set (framework types_test.go TestNodeInfoAddPod adds 8080 twice, stored once):
    RemovePod of either pod deletes the entry, so the port counts as free afterwards."""
    a = new_pod("n", "TCP/127.0.0.1/8080")
    b = new_pod("n", "TCP/127.0.0.1/8080")
    ni = node_info(a, b)
    ni.remove_pod(a)
    assert ni.used_ports == []
    assert _run(new_pod("", "TCP/127.0.0.1/8080"), ni)[1] == Code.SUCCESS


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod().name("p").container("img").obj(), [], id="no ports"),
        pytest.param(
            make_pod().name("p").container_port([{"containerPort": 80}]).obj(),
            [],
            id="a containerPort without hostPort is no host port",
        ),
        pytest.param(
            make_pod().name("p").container_port([{"containerPort": 80, "hostPort": 8080}]).obj(),
            [("0.0.0.0", "TCP", 8080)],
            id="hostPort defaults to TCP on every address",
        ),
        pytest.param(
            make_pod()
            .name("p")
            .init_container_port(True, [{"containerPort": 81, "hostPort": 81, "protocol": "UDP"}])
            .container_port([{"containerPort": 80, "hostPort": 80, "hostIP": "10.0.0.1"}])
            .obj(),
            [("0.0.0.0", "UDP", 81), ("10.0.0.1", "TCP", 80)],
            id="restartable init containers come first, then containers",
        ),
        pytest.param(
            make_pod().name("p").init_container_port(False, [{"containerPort": 81, "hostPort": 81}]).obj(),
            [],
            id="regular init containers are not counted",
        ),
        pytest.param(
            make_pod().name("p").host_network().container_port([{"containerPort": 9100}]).obj(),
            [("0.0.0.0", "TCP", 9100)],
            id="hostNetwork defaults hostPort to containerPort",
        ),
        pytest.param(
            make_pod()
            .name("p")
            .host_network()
            .init_container_port(True, [{"containerPort": 9200}])
            .init_container_port(False, [{"containerPort": 9300}])
            .obj(),
            [("0.0.0.0", "TCP", 9200)],
            id="hostNetwork defaulting also applies to init containers, only sidecars count",
        ),
    ],
)
def test_get_host_ports(pod: Pod, want: list[tuple[str, str, int]]) -> None:
    """GetHostPorts (v1.34 pkg/scheduler/util/utils.go): sidecars' then containers' ports with
    hostPort > 0; the API server has already set hostPort = containerPort for hostNetwork pods."""
    assert sorted(wanted_ports(pod, True)) == sorted(want)


def test_v133_ignores_sidecar_host_ports() -> None:
    """v1.33 node_ports.go getContainerPorts reads only spec.containers (sidecars' ports neither wanted
    nor used), unlike v1.34's GetHostPorts."""
    pod = new_pod("", "TCP/0.0.0.0/8001")
    for version, want in (("v1.33.3", Code.SUCCESS), ("v1.34.1", Code.UNSCHEDULABLE)):
        dialect = dialect_for(version)
        bound = SIDECAR_8001.name("bound").node("n").obj(dialect)
        snap = new_snapshot([bound], [make_node().name("n").obj()], dialect=dialect)
        plugin = new_plugin(NodePorts, snap)
        state = CycleState()
        plugin.pre_filter(state, pod)
        assert plugin.filter(state, pod, snap.node_info_by_name["n"]).code == want, version
    assert _run(SIDECAR_8001.name("want").obj(V133), node_info(new_pod("n", "TCP/0.0.0.0/8001")), "v1.33.3")[
        0
    ] == (Code.SKIP)
