"""NodePorts: wanted hostPorts must be free on the node (plugins/nodeports/node_ports.go,
framework HostPortInfo.CheckConflict, scheduler/util GetHostPorts)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, CycleState, Plugin, PreFilterResult, Status

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot

__all__ = ["ERR_REASON", "NodePorts", "fits_ports", "port_conflicts", "wanted_ports"]

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

_PRE_FILTER_KEY = "PreFilter" + names.NODE_PORTS
_SIDECAR_PORTS_CACHE = "nodeports/sidecar-ports-by-node"
_BIND_ALL = "0.0.0.0"

Port = tuple[str, str, int]  # (hostIP, protocol, hostPort), already sanitized (0.0.0.0, TCP)


def wanted_ports(pod: Pod, include_sidecars: bool) -> list[Port]:
    """GetHostPorts: ports with hostPort > 0 of the containers (and, v1.34+, the sidecars)."""
    return pod.host_ports(include_sidecars=include_sidecars)


def port_conflicts(want: Port, used: Port) -> bool:
    """CheckConflict: 0.0.0.0 conflicts with any IP; a specific IP with itself or 0.0.0.0; protocols differ."""
    ip, proto, port = want
    uip, uproto, uport = used
    if port <= 0 or port != uport or proto != uproto:
        return False
    return ip == _BIND_ALL or uip in (_BIND_ALL, ip)


def fits_ports(wanted: list[Port], used: list[Port]) -> bool:
    return not any(port_conflicts(w, u) for w in wanted for u in used)


def _sidecar_ports_by_node(snapshot: Snapshot) -> dict[str, set[int]]:
    """Bound pods' ids with sidecar hostPorts, per node; v1.33- must not count those ports as used."""
    idx: dict[str, set[int]] | None = snapshot.cache.get(_SIDECAR_PORTS_CACHE)
    if idx is None:
        idx = {}
        for ni in snapshot.node_infos:
            for p in ni.pods:
                if len(p.host_ports(include_sidecars=True)) != len(p.host_ports(include_sidecars=False)):
                    idx.setdefault(ni.name, set()).add(id(p))
        snapshot.cache[_SIDECAR_PORTS_CACHE] = idx
    return idx


class NodePorts(Plugin):
    name = names.NODE_PORTS

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        ports = wanted_ports(pod, self.dialect.sidecar_host_ports)
        if not ports:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, ports)
        return None, SUCCESS

    def _used_ports(self, node_info: NodeInfo) -> list[Port]:
        if self.dialect.sidecar_host_ports:
            return node_info.used_ports
        # NodeInfo counts sidecar ports (v1.34+ accounting); older releases did not.
        if node_info.name not in _sidecar_ports_by_node(self.snapshot):
            return node_info.used_ports
        used = Counter(node_info.used_ports)
        for p in node_info.pods:
            extra = Counter(p.host_ports(include_sidecars=True))
            extra.subtract(Counter(p.host_ports(include_sidecars=False)))
            used.subtract(+extra)
        return list((+used).elements())

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        wanted: list[Port] | None = state.read(_PRE_FILTER_KEY)
        if wanted is None:
            return Status.error(f'reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        used = self._used_ports(node_info)
        if not used or fits_ports(wanted, used):
            return SUCCESS
        return Status.unschedulable(ERR_REASON, details=(self._conflict_details(wanted, node_info),))

    def _conflict_details(self, wanted: list[Port], node_info: NodeInfo) -> dict[str, Any]:
        """The first conflicting wanted port and the bound pod holding it (rejection path only)."""
        sidecars = self.dialect.sidecar_host_ports
        for w in wanted:
            for p in node_info.pods:
                for u in p.host_ports(include_sidecars=sidecars):
                    if port_conflicts(w, u):
                        return {
                            "port": f"{w[0]}:{w[2]}/{w[1]}",
                            "usedBy": p.key,
                            "usedAs": f"{u[0]}:{u[2]}/{u[1]}",
                        }
        for w in wanted:
            for u in node_info.used_ports:
                if port_conflicts(w, u):
                    return {"port": f"{w[0]}:{w[2]}/{w[1]}", "usedAs": f"{u[0]}:{u[2]}/{u[1]}"}
        return {}
