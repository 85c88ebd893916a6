"""From a defaulted, validated profile to a kdiagnose Profile, checked as `scheduler.New` checks it.

Mirrors pkg/scheduler/framework/runtime/framework.go NewFramework: plugin constructors (args checks),
`updatePluginList` per extension point, `expandMultiPointPlugins` (plugins set on a point itself come
first, then multiPoint ones, then the rest; `disabled` and `"*"` stop the expansion), one queue sort and
at least one bind plugin, and `getScoreWeights` (a point's own weight wins over multiPoint's; 0 means 1).
Out-of-tree plugins are rejected like kube-scheduler when `strict`; otherwise they are left out and named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kdiagnose.schedconfig.defaults import Plugins, PluginSet
from kdiagnose.schedconfig.fielderr import aggregate
from kdiagnose.schedconfig.validation import ARGS_VALIDATORS, validate_fit_args
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.profiles import Profile, default_profile
from kdiagnose.scheduler.registry import IN_TREE
from kdiagnose.versions import Dialect

__all__ = ["BuildError", "BuiltProfile", "build_profile", "implements"]

# getExtensionPoints order, with the framework interface each point needs.
_EXTENSION_POINTS = (
    ("preFilter", "PreFilterPlugin"),
    ("filter", "FilterPlugin"),
    ("postFilter", "PostFilterPlugin"),
    ("reserve", "ReservePlugin"),
    ("preScore", "PreScorePlugin"),
    ("score", "ScorePlugin"),
    ("preBind", "PreBindPlugin"),
    ("bind", "BindPlugin"),
    ("postBind", "PostBindPlugin"),
    ("permit", "PermitPlugin"),
    ("preEnqueue", "PreEnqueuePlugin"),
    ("queueSort", "QueueSortPlugin"),
)
# Profile field for each point kdiagnose replays.
_PROFILE_FIELDS = {
    "preEnqueue": "pre_enqueue",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
}
# PreEnqueue hooks kdiagnose does not model (DefaultPreemption's waits for an in-flight async preemption).
_NOT_MODELLED = {"preEnqueue": {n.DEFAULT_PREEMPTION}}


class BuildError(Exception):
    """NewFramework's error text for one profile."""


def implements(dialect: Dialect) -> dict[str, set[str]]:
    """Extension points each in-tree plugin implements (its `var _ framework.XPlugin` assertions)."""
    dp = default_profile(dialect)
    out: dict[str, set[str]] = {name: set() for name in IN_TREE}
    for point, attr in _PROFILE_FIELDS.items():
        for name in getattr(dp, attr):
            out[name].add(point)
    for name in dp.score:
        out[name].add("score")
    out[n.PRIORITY_SORT].add("queueSort")
    out[n.DEFAULT_BINDER].add("bind")
    out[n.VOLUME_BINDING] |= {"reserve", "preBind"}
    # DynamicResources is registered even where it is not a default plugin; same interfaces as v1.34.
    out[n.DYNAMIC_RESOURCES] |= {"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"}
    if dialect.minor >= 32:
        out[n.DEFAULT_PREEMPTION].add("preEnqueue")
    return out


@dataclass(slots=True)
class BuiltProfile:
    profile: Profile
    # out-of-tree plugin -> the points it was named at ("multiPoint" included)
    unknown: dict[str, list[str]] = field(default_factory=dict)


def _check_args(name: str, args: dict[str, Any], dialect: Dialect) -> None:
    """The plugin constructors' own args validation (nil path)."""
    if name == n.NODE_RESOURCES_FIT:
        errs = validate_fit_args("", args, dialect)
    elif name in ARGS_VALIDATORS:
        errs = ARGS_VALIDATORS[name]("", args, dialect)
    else:
        return
    if errs:
        raise BuildError(f'initializing plugin "{name}": {aggregate(errs)}')


def build_profile(prof: dict[str, Any], dialect: Dialect, *, strict: bool) -> BuiltProfile:
    """`prof`: a defaulted profile ({schedulerName, percentageOfNodesToScore, plugins, pluginConfig})."""
    name: str = prof["schedulerName"]
    plugins: Plugins = prof["plugins"]
    impl = implements(dialect)
    unknown: dict[str, list[str]] = {}

    def is_known(plugin: str) -> bool:
        return plugin in IN_TREE

    needed: list[str] = []
    for point in (*(p for p, _ in _EXTENSION_POINTS), "multiPoint"):
        for ref in plugins[point].enabled:
            if ref.name not in needed:
                needed.append(ref.name)
    args_by_name = {pc["name"]: pc.get("args") for pc in prof["pluginConfig"]}
    for plugin in needed:
        args = args_by_name.get(plugin)
        if is_known(plugin) and isinstance(args, dict):
            _check_args(plugin, args, dialect)

    expanded: dict[str, list[str]] = {}
    for point, iface in _EXTENSION_POINTS:
        seen: list[str] = []
        for ref in plugins[point].enabled:
            if not is_known(ref.name):
                if strict:
                    raise BuildError(f'{iface} "{ref.name}" does not exist')
                unknown.setdefault(ref.name, []).append(point)
            elif point not in impl[ref.name]:
                raise BuildError(f'plugin "{ref.name}" does not extend {iface} plugin')
            if ref.name in seen:
                raise BuildError(f'plugin "{ref.name}" already registered as "{iface}"')
            seen.append(ref.name)
        expanded[point] = seen

    multi = plugins["multiPoint"].enabled
    if multi:
        for point, iface in _EXTENSION_POINTS:
            expanded[point] = _expand(
                point, iface, plugins[point], expanded[point], multi, impl, strict, unknown
            )

    unknown_multi = any("multiPoint" in pts for pts in unknown.values())
    queue_sort = expanded["queueSort"]
    if len(queue_sort) != 1 and not (unknown_multi and not queue_sort):
        raise BuildError(
            f'only one queue sort plugin required for profile with scheduler name "{name}", but got {len(queue_sort)}'
        )
    if not expanded["bind"] and not unknown_multi:
        raise BuildError(f'at least one bind plugin is needed for profile with scheduler name "{name}"')

    weights: dict[str, int] = {}
    for ref in [*plugins["score"].enabled, *multi]:
        if ref.name in weights or not (is_known(ref.name) and "score" in impl[ref.name]):
            continue
        weights[ref.name] = ref.weight or 1

    def replayed(point: str) -> list[str]:
        skip = _NOT_MODELLED.get(point, set())
        return [p for p in expanded[point] if is_known(p) and p not in skip]

    plugin_args: dict[str, dict[str, Any]] = {}
    for pc in prof["pluginConfig"]:
        if pc.get("explicit") and is_known(pc["name"]) and isinstance(pc.get("args"), dict):
            plugin_args[pc["name"]] = pc["args"]
    profile = Profile(
        scheduler_name=name,
        pre_enqueue=replayed("preEnqueue"),
        pre_filter=replayed("preFilter"),
        filter=replayed("filter"),
        post_filter=replayed("postFilter"),
        pre_score=replayed("preScore"),
        score={p: weights[p] for p in replayed("score")},
        plugin_args=plugin_args,
        percentage_of_nodes_to_score=prof.get("percentageOfNodesToScore"),
        not_replayed=list(unknown),
    )
    return BuiltProfile(profile, unknown)


def _expand(
    point: str,
    iface: str,
    own: PluginSet,
    enabled: list[str],
    multi: list[Any],
    impl: dict[str, set[str]],
    strict: bool,
    unknown: dict[str, list[str]],
) -> list[str]:
    """expandMultiPointPlugins for one extension point."""
    disabled = set(own.disabled)
    if "*" in disabled:
        return enabled
    overrides: list[str] = []
    from_multi: list[str] = []
    for ref in multi:
        if ref.name not in IN_TREE:
            if strict:
                raise BuildError(f'{iface} "{ref.name}" does not exist')
            pts = unknown.setdefault(ref.name, [])
            if "multiPoint" not in pts:
                pts.append("multiPoint")
            continue
        if point not in impl[ref.name] or ref.name in disabled:
            continue
        if ref.name in enabled:
            overrides.append(ref.name)
            continue
        if ref.name in from_multi:
            raise BuildError(f'plugin "{ref.name}" already registered as "{iface}"')
        from_multi.append(ref.name)
    first = [p for p in enabled if p in overrides]
    rest = [p for p in enabled if p not in overrides]
    return first + from_multi + rest
