"""ValidateKubeSchedulerConfiguration and the plugin-args validators.

Mirrors pkg/scheduler/apis/config/validation/validation.go and validation_pluginargs.go. Paths are
field.Path strings; the args validators take a prefix (`profiles[0].pluginConfig[1].args`) or "" for the
nil path the plugins' constructors pass.
"""

from __future__ import annotations

import re
from typing import Any

from kdiagnose.schedconfig.defaults import POINTS, Plugins
from kdiagnose.schedconfig.fielderr import (
    DUPLICATE,
    FORBIDDEN,
    PATH_VALUE,
    REQUIRED,
    FieldError,
    invalid,
    is_qualified_name,
    label_name_errors,
    label_value_errors,
    not_supported,
)
from kdiagnose.scheduler import names as n
from kdiagnose.versions import Dialect

__all__ = ["ARGS_VALIDATORS", "validate_configuration", "validate_fit_args"]

GROUP_VERSION = "kubescheduler.config.k8s.io/v1"
# invalidPluginsByVersion: removed in-tree volume limit plugins.
_REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
_MAX_CUSTOM_PRIORITY_SCORE = 10


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _removed_plugin_error(path: str, name: str) -> FieldError:
    return invalid(
        path,
        name,
        f'was invalid in version "{GROUP_VERSION}" (KubeSchedulerConfiguration is version "{GROUP_VERSION}")',
    )


# ---------------------------------------------------------------- plugin args


def _validate_preemption(path: str, a: dict[str, Any], dialect: Dialect) -> list[FieldError]:
    errs: list[FieldError] = []
    pct, absolute = a.get("minCandidateNodesPercentage", 10), a.get("minCandidateNodesAbsolute", 100)
    pp, ap = _child(path, "minCandidateNodesPercentage"), _child(path, "minCandidateNodesAbsolute")
    if pct < 0 or pct > 100:
        errs.append(invalid(pp, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(ap, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(pp, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(ap, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _validate_inter_pod_affinity(path: str, a: dict[str, Any], dialect: Dialect) -> list[FieldError]:
    w = a.get("hardPodAffinityWeight", 1)
    if w < 0 or w > 100:
        return [invalid(_child(path, "hardPodAffinityWeight"), w, "not in valid range [0, 100]")]
    return []


def _validate_spread(path: str, a: dict[str, Any], dialect: Dialect) -> list[FieldError]:
    errs: list[FieldError] = []
    dtype = a.get("defaultingType", "")
    constraints = a.get("defaultConstraints") or []
    tp = _child(path, "defaultingType")
    if dtype not in ("System", "List"):
        errs.append(not_supported(tp, dtype, ["System", "List"]))
    elif dtype == "System" and constraints:
        errs.append(invalid(tp, dtype, "when .defaultConstraints are not empty"))
    cpath = _child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = f"{cpath}[{i}]"
        skew = c.get("maxSkew", 0)
        if skew <= 0:
            errs.append(invalid(f"{p}.maxSkew", skew, "not in valid range (0, inf)"))
        key = c.get("topologyKey", "")
        if not key:
            errs.append(FieldError(REQUIRED, f"{p}.topologyKey", "", "can not be empty"))
        else:
            errs += label_name_errors(key, f"{p}.topologyKey")
        when = c.get("whenUnsatisfiable", "")
        if not when:
            errs.append(FieldError(REQUIRED, f"{p}.whenUnsatisfiable", "", "can not be empty"))
        elif when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{p}.whenUnsatisfiable", when, ["DoNotSchedule", "ScheduleAnyway"]))
        if c.get("labelSelector") is not None:
            errs.append(
                FieldError(
                    FORBIDDEN,
                    f"{p}.labelSelector",
                    "",
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        for other in constraints[:i]:
            if other.get("topologyKey", "") == key and other.get("whenUnsatisfiable", "") == when:
                errs.append(FieldError(DUPLICATE, p, f"{{{key}, {when}}}"))
                break
    return errs


def _validate_shape(shape: list[dict[str, Any]], path: str) -> list[FieldError]:
    if not shape:
        return [FieldError(REQUIRED, path, "", "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(
                invalid(
                    f"{path}[{i}].utilization",
                    shape[i].get("utilization", 0),
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        u, s = point.get("utilization", 0), point.get("score", 0)
        if u < 0 or u > 100:
            errs.append(invalid(f"{path}[{i}].utilization", u, "not in valid range [0, 100]"))
        if s < 0 or s > _MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                invalid(f"{path}[{i}].score", s, f"not in valid range [0, {_MAX_CUSTOM_PRIORITY_SCORE}]")
            )
    return errs


def _validate_balanced(path: str, a: dict[str, Any], dialect: Dialect) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, r in enumerate(a.get("resources") or []):
        p = f"{_child(path, 'resources')}[{i}]"
        name = r.get("name", "")
        if name in seen:
            errs.append(FieldError(DUPLICATE, f"{p}.name", name))
        seen.add(name)
        if r.get("weight", 0) != 1:
            errs.append(invalid(f"{p}.weight", r.get("weight", 0), "must be 1"))
    return errs


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _values_value(r: dict[str, Any]) -> Any:
    """The `values` slice as a bad value: an absent list is a nil slice (json `null`)."""
    v = r.get("values")
    return None if v is None else list(v)


def _label_requirements(reqs: list[dict[str, Any]], path: str) -> list[FieldError]:
    """nodeaffinity nodeSelectorRequirementsAsSelector + labels.NewRequirement (apimachinery selector.go)."""
    errs: list[FieldError] = []
    for i, r in enumerate(reqs):
        p = f"{path}[{i}]"
        op, key = r.get("operator", ""), r.get("key", "")
        values: list[str] = list(r.get("values") or [])
        if op not in _OPERATORS:
            errs.append(not_supported(f"{p}.operator", op, list(_OPERATORS)))
            continue
        key_msgs = is_qualified_name(key)
        if key_msgs:
            errs.append(invalid(f"{p}.key", key, "; ".join(key_msgs)))
        vp = f"{p}.values"
        if op in ("In", "NotIn") and not values:
            errs.append(
                invalid(vp, _values_value(r), "for 'in', 'notin' operators, values set can't be empty")
            )
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(invalid(vp, values, "values set must be empty for exists and does not exist"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(
                    invalid(vp, _values_value(r), "for 'Gt', 'Lt' operators, exactly one value is required")
                )
            for j, v in enumerate(values):
                if not re.fullmatch(r"[-+]?\d+", v) or not -(2**63) <= int(v) < 2**63:
                    errs.append(
                        invalid(f"{vp}[{j}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
                    )
        for j, v in enumerate(values):
            msgs = label_value_errors(v)
            if msgs:
                errs.append(invalid(f"{vp}[{j}][{key}]", v, "; ".join(msgs)))
    return errs


def _field_requirements(reqs: list[dict[str, Any]], path: str) -> list[FieldError]:
    """nodeaffinity nodeSelectorRequirementsAsFieldSelector: In/NotIn with one value; the key is not checked."""
    errs: list[FieldError] = []
    for i, r in enumerate(reqs):
        p = f"{path}[{i}]"
        op = r.get("operator", "")
        if op in ("In", "NotIn"):
            if len(r.get("values") or []) != 1:
                errs.append(invalid(f"{p}.values", _values_value(r), "must have one element"))
        else:
            errs.append(not_supported(f"{p}.operator", op, ["In", "NotIn"]))
    return errs


def _term_errors(term: dict[str, Any], path: str) -> list[FieldError]:
    """newNodeSelectorTerm: matchExpressions, then matchFields."""
    return _label_requirements(term.get("matchExpressions") or [], f"{path}.matchExpressions") + (
        _field_requirements(term.get("matchFields") or [], f"{path}.matchFields")
    )


def _validate_node_affinity(path: str, a: dict[str, Any], dialect: Dialect) -> list[FieldError]:
    """ValidateNodeAffinityArgs: NewNodeSelector and NewPreferredSchedulingTerms with the args path."""
    aff = a.get("addedAffinity")
    if not aff:
        return []
    errs: list[FieldError] = []
    base = _child(path, "addedAffinity")
    required = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        p = f"{base}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(required.get("nodeSelectorTerms") or []):
            errs += _term_errors(term or {}, f"{p}.nodeSelectorTerms[{i}]")
    for i, pref in enumerate(aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        term = (pref or {}).get("preference") or {}
        # Terms of weight 0 or without requirements are skipped; the path has no `.preference` element.
        if not (pref or {}).get("weight") or not (term.get("matchExpressions") or term.get("matchFields")):
            continue
        errs += _term_errors(term, f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]")
    return errs


def _validate_volume_binding(path: str, a: dict[str, Any], dialect: Dialect) -> list[FieldError]:
    errs: list[FieldError] = []
    timeout = a.get("bindTimeoutSeconds", 600)
    if timeout < 0:
        errs.append(
            invalid(
                _child(path, "bindTimeoutSeconds"),
                timeout,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )
    # StorageCapacityScoring is alpha (off) in every release kdiagnose knows.
    if a.get("shape") is not None:
        errs.append(
            invalid(
                _child(path, "shape"),
                a["shape"],
                "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring",
            )
        )
    return errs


def _go_duration_seconds(text: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    sign = -1.0 if text.startswith("-") else 1.0
    total = sum(
        float(num) * units[u] for num, u in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)", text)
    )
    return sign * total


def _validate_dra(path: str, a: dict[str, Any], dialect: Dialect) -> list[FieldError]:
    timeout = a.get("filterTimeout")
    if timeout is None:
        return []
    p = _child(path, "filterTimeout")
    if dialect.minor < 34:
        return [FieldError(FORBIDDEN, p, "", "DRASchedulingFilterTimeout feature gate is disabled")]
    if _go_duration_seconds(timeout) < 0:
        return [invalid(p, timeout, "must be zero or positive")]
    return []


def validate_fit_args(path: str, a: dict[str, Any], dialect: Dialect | None = None) -> list[FieldError]:
    """ValidateNodeResourcesFitArgs (run by NewFit, not by the configuration validation: see below)."""
    errs: list[FieldError] = []
    for i, res in enumerate(a.get("ignoredResources") or []):
        errs += label_name_errors(res, f"{_child(path, 'ignoredResources')}[{i}]")
    for i, group in enumerate(a.get("ignoredResourceGroups") or []):
        gp = f"{_child(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in group:
            errs.append(invalid(gp, group, "resource group name can't contain '/'"))
        errs += label_name_errors(group, gp)
    strategy = a.get("scoringStrategy")
    if strategy is not None:
        sp = _child(path, "scoringStrategy")
        stype = strategy.get("type", "")
        if stype not in _STRATEGIES:
            errs.append(not_supported(f"{sp}.type", stype, sorted(_STRATEGIES)))
        for i, r in enumerate(strategy.get("resources") or []):
            w = r.get("weight", 0)
            if w <= 0 or w > 100:
                errs.append(
                    invalid(
                        f"{sp}.resources[{i}].weight",
                        w,
                        f"resource weight of {r.get('name', '')} not in valid range (0, 100]",
                    )
                )
        rtcr = strategy.get("requestedToCapacityRatio")
        if rtcr is not None:
            errs += _validate_shape(rtcr.get("shape") or [], f"{sp}.shape")
    return errs


# validatePluginConfig's table. Upstream keys NodeResourcesFit's validator as "NodeResourcesFitArgs", so
# the configuration validation never matches it: its args are only checked when the plugin is built.
ARGS_VALIDATORS = {
    n.DEFAULT_PREEMPTION: _validate_preemption,
    n.INTER_POD_AFFINITY: _validate_inter_pod_affinity,
    n.NODE_AFFINITY: _validate_node_affinity,
    n.NODE_RESOURCES_BALANCED_ALLOCATION: _validate_balanced,
    n.POD_TOPOLOGY_SPREAD: _validate_spread,
    n.VOLUME_BINDING: _validate_volume_binding,
    n.DYNAMIC_RESOURCES: _validate_dra,
}

# ---------------------------------------------------------------- the configuration

# Every extension point but multiPoint, in types.go order.
_STAGES = tuple(p for p in POINTS if p != "multiPoint")


def _percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and (value < 0 or value > 100):
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _queue_sort_value(plugins: Plugins) -> dict[str, Any]:
    """json.Marshal of the internal config.PluginSet (no json tags), as Invalid prints it."""
    qs = plugins["queueSort"]
    return {
        "Enabled": [{"Name": p.name, "Weight": p.weight} for p in qs.enabled] or None,
        "Disabled": [{"Name": d, "Weight": 0} for d in qs.disabled] or None,
    }


def validate_configuration(
    cfg: dict[str, Any], profiles: list[dict[str, Any]], dialect: Dialect
) -> list[FieldError]:
    """`profiles`: defaulted profiles ({schedulerName, percentageOfNodesToScore, plugins, pluginConfig})."""
    errs: list[FieldError] = []
    cc = cfg.get("clientConnection") or {}
    if cc.get("burst", 100) < 0:
        errs.append(invalid("clientConnection.burst", cc["burst"], "must be non-negative"))
    le = cfg.get("leaderElection") or {}
    lock = le.get("resourceLock") or "leases"
    if le.get("leaderElect", True):
        errs += _validate_leader_election(le)
    if le.get("leaderElect", True) and lock != "leases":
        errs.append(invalid("leaderElection.resourceLock", lock, 'resourceLock value must be "leases"'))
    parallelism = cfg.get("parallelism")
    if parallelism is not None and parallelism <= 0:
        errs.append(invalid("parallelism", parallelism, "should be an integer value greater than zero"))
    seen_names: dict[str, int] = {}
    for i, prof in enumerate(profiles):
        path = f"profiles[{i}]"
        name = prof["schedulerName"]
        if not name:
            errs.append(FieldError(REQUIRED, f"{path}.schedulerName"))
        errs += _percentage(f"{path}.percentageOfNodesToScore", prof.get("percentageOfNodesToScore"))
        plugins: Plugins = prof["plugins"]
        for stage in _STAGES:
            for j, p in enumerate(plugins[stage].enabled):
                if p.name in _REMOVED_PLUGINS:
                    errs.append(_removed_plugin_error(f"{path}.plugins.{stage}.enabled[{j}]", p.name))
        seen_config: set[str] = set()
        for j, pc in enumerate(prof["pluginConfig"]):
            cpath = f"{path}.pluginConfig[{j}]"
            pname = pc["name"]
            if pname in seen_config:
                errs.append(FieldError(DUPLICATE, cpath, pname))
            seen_config.add(pname)
            if pname in _REMOVED_PLUGINS:
                errs.append(_removed_plugin_error(cpath, pname))
            elif pname in ARGS_VALIDATORS and isinstance(pc.get("args"), dict):
                errs += ARGS_VALIDATORS[pname](f"{cpath}.args", pc["args"], dialect)
        if name in seen_names:
            errs.append(FieldError(DUPLICATE, f"{path}.schedulerName", PATH_VALUE))
        seen_names[name] = i
    errs += _validate_common_queue_sort(profiles)
    errs += _percentage("percentageOfNodesToScore", cfg.get("percentageOfNodesToScore"))
    initial = cfg.get("podInitialBackoffSeconds")
    initial = 1 if initial is None else initial
    maximum = cfg.get("podMaxBackoffSeconds")
    maximum = 10 if maximum is None else maximum
    if initial <= 0:
        errs.append(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum < initial:
        errs.append(
            invalid(
                "podMaxBackoffSeconds", maximum, "must be greater than or equal to PodInitialBackoffSeconds"
            )
        )
    errs += _validate_extenders(cfg.get("extenders") or [])
    return errs


_DURATION_UNITS_NS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "μs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "m": 60 * 10**9,
}
_DURATION_UNITS_NS["h"] = 3600 * 10**9


def _go_duration_ns(text: str) -> int:
    """time.ParseDuration, exactly (decimal arithmetic, truncated to nanoseconds)."""
    from decimal import Decimal

    sign = -1 if text.startswith("-") else 1
    total = sum(
        Decimal(num) * _DURATION_UNITS_NS[unit]
        for num, unit in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)", text)
    )
    return sign * int(total)


def _frac(v: int, unit: int) -> str:
    whole, rest = divmod(v, unit)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def _go_duration_str(ns: int) -> str:
    """time.Duration.String (how a metav1.Duration bad value is marshalled)."""
    if ns == 0:
        return "0s"
    u = abs(ns)
    if u < 10**3:
        out = f"{u}ns"
    elif u < 10**6:
        out = _frac(u, 10**3) + "µs"
    elif u < 10**9:
        out = _frac(u, 10**6) + "ms"
    else:
        out = _frac(u % (60 * 10**9), 10**9) + "s"
        minutes = u // (60 * 10**9)
        if minutes:
            hours, minutes = divmod(minutes, 60)
            out = (f"{hours}h" if hours else "") + f"{minutes}m" + out
    return ("-" if ns < 0 else "") + out


def _validate_leader_election(le: dict[str, Any]) -> list[FieldError]:
    """component-base ValidateLeaderElectionConfiguration, after RecommendedDefaultLeaderElectionConfiguration
    (a zero duration is replaced by 15s / 10s / 2s, so only negative ones reach the checks)."""

    def duration(key: str, default: int) -> int:
        raw = le.get(key)
        ns = _go_duration_ns(raw) if raw else 0
        return ns or default

    lease = duration("leaseDuration", 15 * 10**9)
    renew = duration("renewDeadline", 10 * 10**9)
    retry = duration("retryPeriod", 2 * 10**9)
    errs: list[FieldError] = []
    for key, ns in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
        if ns <= 0:
            errs.append(invalid(f"leaderElection.{key}", _go_duration_str(ns), "must be greater than zero"))
    if lease <= renew:
        # Upstream passes RenewDeadline as the bad value of the leaseDuration error.
        errs.append(
            invalid(
                "leaderElection.leaseDuration",
                _go_duration_str(renew),
                "must be greater than `RenewDeadline`",
            )
        )
    return errs


def _validate_common_queue_sort(profiles: list[dict[str, Any]]) -> list[FieldError]:
    if not profiles:
        return []
    errs: list[FieldError] = []
    first = profiles[0]
    canon = _queue_sort_value(first["plugins"])
    qs_enabled = first["plugins"]["queueSort"].enabled
    qs_name = qs_enabled[0].name if qs_enabled else ""
    if len(qs_enabled) > 1:
        errs.append(
            invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(qs_enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    qs_args = next(
        (pc.get("args") for pc in first["pluginConfig"] if qs_name and pc["name"] == qs_name), None
    )
    for i, prof in enumerate(profiles[1:], start=1):
        curr = _queue_sort_value(prof["plugins"])
        if curr != canon:
            errs.append(
                invalid(f"profiles[{i}].plugins.queueSort", curr, "must be the same for all profiles")
            )
        for pc in prof["pluginConfig"]:
            if pc["name"] == qs_name and pc.get("args") != qs_args:
                errs.append(
                    invalid(
                        f"profiles[{i}].pluginConfig.args",
                        pc.get("args"),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


def _validate_extenders(extenders: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if ext.get("prioritizeVerb") and ext.get("weight", 0) <= 0:
            errs.append(
                invalid(f"{path}.weight", ext.get("weight", 0), "must have a positive weight applied to it")
            )
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or []):
            rp = f"{path}.managedResources[{j}].name"
            rname = res.get("name", "")
            msgs = is_qualified_name(rname)
            if msgs:
                errs += [invalid(rp, rname, m) for m in msgs]
            elif not _is_extended_resource_name(rname):
                errs.append(invalid(rp, rname, "is an invalid extended resource name"))
            if rname in managed:
                errs.append(invalid(rp, rname, "duplicate extender managed resource name"))
            managed.add(rname)
    if binders > 1:
        errs.append(
            invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errs


def _is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io, not requests.*-prefixed."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return not is_qualified_name("requests." + name)
