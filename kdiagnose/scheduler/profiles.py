"""Plugin order and weights of the default profile per release (apis/config/v1/default_plugins.go)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kdiagnose.scheduler import names as n
from kdiagnose.versions import Dialect

__all__ = ["DEFAULT_SCHEDULER_NAME", "Profile", "default_profile"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"


@dataclass(slots=True)
class Profile:
    """One scheduling profile: which plugin runs at which extension point, score weights, plugin args.

    `not_replayed` names configured parts kdiagnose cannot run (extenders, out-of-tree plugins), so
    reports can say so instead of pretending.
    """

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    pre_enqueue: list[str] = field(default_factory=list)
    pre_filter: list[str] = field(default_factory=list)
    filter: list[str] = field(default_factory=list)
    post_filter: list[str] = field(default_factory=list)
    pre_score: list[str] = field(default_factory=list)
    score: dict[str, int] = field(default_factory=dict)  # plugin -> weight, in run order
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    not_replayed: list[str] = field(default_factory=list)
    is_default: bool = True
    # How the profile differs from the default, set by kdiagnose.schedconfig; not part of equality.
    summary: str = field(default="", compare=False)

    def describe(self) -> str:
        """One line for the human report: the profile's name and what it changes."""
        return f"profile {self.scheduler_name}: {self.summary or 'default plugins and weights'}"

    def plugins(self) -> list[str]:
        seen: dict[str, None] = {}
        for point in (
            self.pre_enqueue,
            self.pre_filter,
            self.filter,
            self.post_filter,
            self.pre_score,
            self.score,
        ):
            for name in point:
                seen.setdefault(name, None)
        return list(seen)


def default_profile(dialect: Dialect, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Profile:
    dra = dialect.dra_enabled
    pre_enqueue = [n.SCHEDULING_GATES] + ([n.DYNAMIC_RESOURCES] if dra else [])
    pre_filter = [
        n.NODE_AFFINITY,
        n.NODE_PORTS,
        n.NODE_RESOURCES_FIT,
        n.VOLUME_RESTRICTIONS,
        n.NODE_VOLUME_LIMITS,
        n.VOLUME_BINDING,
        n.VOLUME_ZONE,
        n.POD_TOPOLOGY_SPREAD,
        n.INTER_POD_AFFINITY,
    ] + ([n.DYNAMIC_RESOURCES] if dra else [])
    filter_ = [
        *(
            (n.NODE_NAME, n.NODE_UNSCHEDULABLE)
            if dialect.node_name_before_unschedulable
            else (n.NODE_UNSCHEDULABLE, n.NODE_NAME)
        ),
        n.TAINT_TOLERATION,
        n.NODE_AFFINITY,
        n.NODE_PORTS,
        n.NODE_RESOURCES_FIT,
        n.VOLUME_RESTRICTIONS,
        n.NODE_VOLUME_LIMITS,
        n.VOLUME_BINDING,
        n.VOLUME_ZONE,
        n.POD_TOPOLOGY_SPREAD,
        n.INTER_POD_AFFINITY,
    ] + ([n.DYNAMIC_RESOURCES] if dra else [])
    if dialect.node_declared_features:
        # Appended after DefaultBinder in multiPoint, so it runs after every other PreFilter and Filter.
        pre_filter.append(n.NODE_DECLARED_FEATURES)
        filter_.append(n.NODE_DECLARED_FEATURES)
    post_filter = ([n.DYNAMIC_RESOURCES] if dra else []) + [n.DEFAULT_PREEMPTION]
    pre_score = [
        n.TAINT_TOLERATION,
        n.NODE_AFFINITY,
        n.NODE_RESOURCES_FIT,
        n.VOLUME_BINDING,
        n.POD_TOPOLOGY_SPREAD,
        n.INTER_POD_AFFINITY,
        n.NODE_RESOURCES_BALANCED_ALLOCATION,
    ]
    score = {
        n.TAINT_TOLERATION: 3,
        n.NODE_AFFINITY: 2,
        n.NODE_RESOURCES_FIT: 1,
        n.VOLUME_BINDING: 1,
        n.POD_TOPOLOGY_SPREAD: 2,
        n.INTER_POD_AFFINITY: 2,
    }
    if dialect.dra_scores:
        score[n.DYNAMIC_RESOURCES] = 2
        pre_score.insert(pre_score.index(n.INTER_POD_AFFINITY) + 1, n.DYNAMIC_RESOURCES)
    score[n.NODE_RESOURCES_BALANCED_ALLOCATION] = 1
    score[n.IMAGE_LOCALITY] = 1
    return Profile(
        scheduler_name=scheduler_name,
        pre_enqueue=pre_enqueue,
        pre_filter=pre_filter,
        filter=filter_,
        post_filter=post_filter,
        pre_score=pre_score,
        score=score,
    )
