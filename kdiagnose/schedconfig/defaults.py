"""Defaulting of a decoded configuration (pkg/scheduler/apis/config/v1/default_plugins.go, defaults.go).

`merge_plugins` is mergePlugins/mergePluginSet: the custom set is merged into the default one point by
point; a default plugin re-enabled keeps its place with the custom settings, `disabled: [{name: "*"}]`
drops every default of that point. Args defaulting follows the SetDefaults_*Args functions.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kdiagnose.scheduler import names as n
from kdiagnose.versions import Dialect

__all__ = [
    "POINTS",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "default_args",
    "default_plugins",
    "merge_plugins",
    "plugins_from_dict",
]

# Plugins fields in types.go order (multiPoint last).
POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
    "multiPoint",
)
_DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


@dataclass(slots=True)
class PluginRef:
    name: str
    weight: int = 0  # an unset weight converts to 0 in the internal type


@dataclass(slots=True)
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


Plugins = dict[str, PluginSet]


def plugins_from_dict(raw: dict[str, Any] | None) -> Plugins:
    out: Plugins = {p: PluginSet() for p in POINTS}
    for point, ps in (raw or {}).items():
        ps = ps or {}
        out[point] = PluginSet(
            enabled=[
                PluginRef(str(p.get("name") or ""), int(p.get("weight") or 0))
                for p in ps.get("enabled") or []
                if p
            ],
            disabled=[str(p.get("name") or "") for p in ps.get("disabled") or [] if p],
        )
    return out


def default_plugins(dialect: Dialect) -> Plugins:
    """getDefaultPlugins: everything in multiPoint, DynamicResources before DefaultPreemption when on."""
    multi = [
        PluginRef(n.SCHEDULING_GATES),
        PluginRef(n.PRIORITY_SORT),
        PluginRef(n.NODE_UNSCHEDULABLE),
        PluginRef(n.NODE_NAME),
        PluginRef(n.TAINT_TOLERATION, 3),
        PluginRef(n.NODE_AFFINITY, 2),
        PluginRef(n.NODE_PORTS),
        PluginRef(n.NODE_RESOURCES_FIT, 1),
        PluginRef(n.VOLUME_RESTRICTIONS),
        PluginRef(n.NODE_VOLUME_LIMITS),
        PluginRef(n.VOLUME_BINDING),
        PluginRef(n.VOLUME_ZONE),
        PluginRef(n.POD_TOPOLOGY_SPREAD, 2),
        PluginRef(n.INTER_POD_AFFINITY, 2),
        PluginRef(n.DEFAULT_PREEMPTION),
        PluginRef(n.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
        PluginRef(n.IMAGE_LOCALITY, 1),
        PluginRef(n.DEFAULT_BINDER),
    ]
    if dialect.node_name_before_unschedulable:
        # v1.37 swapped the two (default_plugins.go), so NodeName reports first on a cordoned node.
        multi[2], multi[3] = multi[3], multi[2]
    if dialect.node_declared_features:
        # applyFeatureGates appends it to multiPoint (gate NodeDeclaredFeatures beta/on from v1.36).
        multi.append(PluginRef(n.NODE_DECLARED_FEATURES))
    if dialect.dra_enabled:
        i = next(i for i, p in enumerate(multi) if p.name == n.DEFAULT_PREEMPTION)
        multi.insert(i, PluginRef(n.DYNAMIC_RESOURCES, 2 if dialect.dra_scores else 0))
    out: Plugins = {p: PluginSet() for p in POINTS}
    out["multiPoint"] = PluginSet(enabled=multi)
    return out


def _merge_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    disabled = list(custom.disabled) + list(default.disabled)
    disabled_set = set(disabled)
    custom_index = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_set:
        for p in default.enabled:
            if p.name in disabled_set:
                continue
            if p.name in custom_index:
                i, cp = custom_index[p.name]
                p = cp
                replaced.add(i)
            enabled.append(p)
    # Duplicated custom plugins are appended too; building the framework rejects them.
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    if custom is None:
        return default
    return {p: _merge_set(default[p], custom[p]) for p in POINTS}


def _resources(res: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if not res:
        return copy.deepcopy(_DEFAULT_RESOURCES)
    return [{**r, "weight": r.get("weight") or 1} for r in res]


def default_args(name: str, args: dict[str, Any], dialect: Dialect) -> dict[str, Any]:
    """SetDefaults_<Name>Args on a decoded copy; fields left unset stay absent (omitempty)."""
    a = copy.deepcopy(args)
    if name == n.DEFAULT_PREEMPTION:
        if a.get("minCandidateNodesPercentage") is None:
            a["minCandidateNodesPercentage"] = 10
        if a.get("minCandidateNodesAbsolute") is None:
            a["minCandidateNodesAbsolute"] = 100
    elif name == n.INTER_POD_AFFINITY:
        if a.get("hardPodAffinityWeight") is None:
            a["hardPodAffinityWeight"] = 1
        a.setdefault("ignorePreferredTermsOfExistingPods", False)
    elif name == n.NODE_RESOURCES_FIT:
        strategy = a.get("scoringStrategy")
        if strategy is None:
            a["scoringStrategy"] = {"type": "LeastAllocated", "resources": copy.deepcopy(_DEFAULT_RESOURCES)}
        else:
            strategy["resources"] = _resources(strategy.get("resources"))
    elif name == n.NODE_RESOURCES_BALANCED_ALLOCATION:
        a["resources"] = _resources(a.get("resources"))
    elif name == n.POD_TOPOLOGY_SPREAD:
        if not a.get("defaultingType"):
            a["defaultingType"] = "System"
    elif name == n.VOLUME_BINDING:
        if a.get("bindTimeoutSeconds") is None:
            a["bindTimeoutSeconds"] = 600
    elif name == n.DYNAMIC_RESOURCES and a.get("filterTimeout") is None and dialect.minor >= 34:
        # DRASchedulerFilterTimeout is beta (on) from v1.34.
        a["filterTimeout"] = "10s"
    return a
