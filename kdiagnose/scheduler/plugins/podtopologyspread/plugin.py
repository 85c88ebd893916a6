"""PodTopologySpread: spread constraints as a filter (DoNotSchedule) and a score (ScheduleAnyway), with the
System or List default constraints for pods that have none (plugins/podtopologyspread/plugin.go).

Args (`pluginConfig` PodTopologySpreadArgs): `defaultingType` System (default) or List, `defaultConstraints`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import CycleState, Handle, Plugin, PreFilterResult, Status
from kdiagnose.scheduler.plugins.helper.spread import default_selector
from kdiagnose.scheduler.plugins.podtopologyspread import filtering, scoring
from kdiagnose.scheduler.plugins.podtopologyspread.common import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_ZONE,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    filter_constraints,
)

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH = filtering.ERR_REASON_CONSTRAINTS_NOT_MATCH
ERR_REASON_NODE_LABEL_NOT_MATCH = filtering.ERR_REASON_NODE_LABEL_NOT_MATCH

SYSTEM_DEFAULT_CONSTRAINTS: list[dict[str, Any]] = [
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
]


class PodTopologySpread(Plugin):
    name = names.POD_TOPOLOGY_SPREAD

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        args = handle.args or {}
        defaulting = args.get("defaultingType") or "System"
        raw = args.get("defaultConstraints")
        self.default_constraints: list[dict[str, Any]] = (
            [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []
        )
        # System defaulting replaces whatever list was given (validation rejects both together).
        self.system_defaulted = defaulting == "System"
        if self.system_defaulted:
            self.default_constraints = SYSTEM_DEFAULT_CONSTRAINTS

    # ------------------------------------------------------------------ constraints

    def build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """buildDefaultConstraints: the default constraints for `action`, all with the pod's DefaultSelector;
        none when no Service/RC/RS/StatefulSet selects the pod."""
        constraints = filter_constraints(self.default_constraints, pod.labels, action)
        if not constraints:
            return []
        selector = default_selector(pod, self.snapshot)
        if not selector:
            return []
        return [
            SpreadConstraint(
                c.max_skew,
                c.topology_key,
                selector,
                c.min_domains,
                c.node_affinity_policy,
                c.node_taints_policy,
            )
            for c in constraints
        ]

    def constraints_for(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """getConstraints (DoNotSchedule) / initPreScoreState (ScheduleAnyway): the pod's own, else defaults."""
        if pod.topology_spread_constraints:
            return filter_constraints(pod.topology_spread_constraints, pod.labels, action)
        return self.build_default_constraints(pod, action)

    def hard_constraints(self, pod: Pod) -> list[SpreadConstraint]:
        return self.constraints_for(pod, DO_NOT_SCHEDULE)

    # ------------------------------------------------------------------ extension points

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return filtering.pre_filter(self, state, pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return filtering.filter_node(state, pod, node_info)

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        return filtering.filter_nodes(state, pod, nodes)

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return filtering.update_with_pod(state, pod, pod_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return filtering.update_with_pod(state, pod, pod_to_remove, node_info, -1)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        return scoring.pre_score(self, state, pod, nodes)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return scoring.score(state, pod, node_info)

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        return scoring.normalize_score(state, pod, scores)
