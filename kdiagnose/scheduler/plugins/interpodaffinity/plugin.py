"""InterPodAffinity: required pod affinity/anti-affinity as a filter, preferred terms (and existing pods'
terms) as a score (plugins/interpodaffinity/plugin.go).

Args (`pluginConfig` InterPodAffinityArgs): `hardPodAffinityWeight` (default 1, 0 disables) and
`ignorePreferredTermsOfExistingPods` (default false).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import CycleState, Handle, Plugin, PreFilterResult, Status
from kdiagnose.scheduler.plugins.interpodaffinity import filtering, scoring

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "InterPodAffinity",
]

ERR_REASON_AFFINITY_RULES_NOT_MATCH = filtering.ERR_REASON_AFFINITY_RULES_NOT_MATCH
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = filtering.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    filtering.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
)

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1


class InterPodAffinity(Plugin):
    name = names.INTER_POD_AFFINITY

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        args = handle.args or {}
        weight = args.get("hardPodAffinityWeight")
        # SetDefaults_InterPodAffinityArgs: only an unset weight becomes 1; an explicit 0 stays 0.
        self.hard_pod_affinity_weight = (
            int(weight)
            if isinstance(weight, int) and not isinstance(weight, bool)
            else DEFAULT_HARD_POD_AFFINITY_WEIGHT
        )
        self.ignore_preferred_terms_of_existing_pods = bool(
            args.get("ignorePreferredTermsOfExistingPods", False)
        )

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return filtering.pre_filter(self, state, pod)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return filtering.filter_node(state, pod, node_info)

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        return filtering.filter_nodes(state, pod, nodes)

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return filtering.update_with_pod(self, state, pod_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return filtering.update_with_pod(self, state, pod_to_remove, node_info, -1)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        return scoring.pre_score(self, state, pod, nodes)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return scoring.score(state, pod, node_info)

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        return scoring.normalize_score(state, pod, scores)
