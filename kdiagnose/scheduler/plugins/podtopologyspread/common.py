"""Parsed topology spread constraints and node inclusion policies (plugins/podtopologyspread/common.go)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler.plugins.helper.node_selector import (
    LabelRequirement,
    RequiredNodeSelector,
    parse_label_selector,
)
from kdiagnose.scheduler.plugins.helper.spread import Selector, selector_matches
from kdiagnose.scheduler.plugins.tainttoleration.taint_toleration import find_untolerated_taint

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node, Pod

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "IGNORE",
    "LABEL_HOSTNAME",
    "LABEL_ZONE",
    "SCHEDULE_ANYWAY",
    "SpreadConstraint",
    "filter_constraints",
    "node_has_all_keys",
]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """topologySpreadConstraint: a v1.TopologySpreadConstraint with its selector parsed and defaults applied."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE

    def matches(self, labels: dict[str, str]) -> bool:
        return selector_matches(self.selector, labels)

    @property
    def counts_nothing(self) -> bool:
        """countPodsMatchSelector counts 0 for an empty selector (labels.Everything().Empty())."""
        return self.selector == ()

    def include_node(self, pod: Pod, node: Node, required: RequiredNodeSelector) -> bool:
        """matchNodeInclusionPolicies: Honor the pod's required node affinity / NoSchedule+NoExecute taints."""
        if self.node_affinity_policy == HONOR and not required.match(node):
            return False
        return not (
            self.node_taints_policy == HONOR
            and find_untolerated_taint(node.taints, pod.tolerations) is not None
        )

    def describe(self) -> str:
        return f"{self.topology_key} maxSkew={self.max_skew}"


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return int(value)


def _merge_match_label_keys(selector: Selector, keys: Any, pod_labels: dict[str, str]) -> Selector:
    """mergeLabelSetWithSelector: `key in (pod's value)` for each matchLabelKey the pod has. A nil selector
    (labels.Nothing) has no requirements to merge with and stays Nothing."""
    if selector is None or not isinstance(keys, list):
        return selector
    extra = [
        LabelRequirement(str(k), "In", frozenset((pod_labels[str(k)],))) for k in keys if str(k) in pod_labels
    ]
    if not extra:
        return selector
    return tuple(extra) + selector


def filter_constraints(
    raw: list[dict[str, Any]], pod_labels: dict[str, str], action: str
) -> list[SpreadConstraint]:
    """filterTopologySpreadConstraints: the constraints with whenUnsatisfiable == action, parsed.

    matchLabelKeys are merged here as the v1.31-v1.35 scheduler does (MatchLabelKeysInPodTopologySpread is
    on); where the API server already merged them at creation, the repeated requirement changes nothing."""
    out: list[SpreadConstraint] = []
    for c in raw:
        if c.get("whenUnsatisfiable") != action:
            continue
        sel = c.get("labelSelector")
        selector = parse_label_selector(sel if isinstance(sel, dict) else None)
        selector = _merge_match_label_keys(selector, c.get("matchLabelKeys"), pod_labels)
        out.append(
            SpreadConstraint(
                max_skew=_int(c.get("maxSkew"), 0),
                topology_key=str(c.get("topologyKey") or ""),
                selector=selector,
                min_domains=_int(c.get("minDomains"), 1),
                node_affinity_policy=str(c.get("nodeAffinityPolicy") or HONOR),
                node_taints_policy=str(c.get("nodeTaintsPolicy") or IGNORE),
            )
        )
    return out


def node_has_all_keys(labels: dict[str, str], constraints: list[SpreadConstraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints."""
    return all(c.topology_key in labels for c in constraints)
