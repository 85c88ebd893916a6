"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) → kdiagnose Profiles.

The file goes through kube-scheduler's own stages, with its error texts: load (strict decoding,
`decode.py`), defaulting (`defaults.py`), `ValidateKubeSchedulerConfiguration` (`validation.py`) and the
framework build of every profile (`build.py`). A rejected configuration raises ConfigError (exit 2) with
one line naming the file. What kdiagnose cannot replay (extenders, out-of-tree plugins) is kept out of the
profiles and said in `SchedulerConfig.notes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kdiagnose.errors import ConfigError, InputError
from kdiagnose.schedconfig.build import BuildError, BuiltProfile, build_profile
from kdiagnose.schedconfig.decode import ARGS_SCHEMAS, DecodeError, decode_config
from kdiagnose.schedconfig.defaults import default_args, default_plugins, merge_plugins, plugins_from_dict
from kdiagnose.schedconfig.fielderr import aggregate
from kdiagnose.schedconfig.validation import validate_configuration
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.profiles import DEFAULT_SCHEDULER_NAME, Profile, default_profile
from kdiagnose.versions import Dialect

__all__ = ["SchedulerConfig", "load_scheduler_config", "parse_scheduler_config"]

# The framework caps a Permit plugin's Wait at 15 minutes (framework/runtime/framework.go maxTimeout).
_PERMIT_MAX_WAIT = "15 minutes"


@dataclass(slots=True)
class SchedulerConfig:
    profiles: list[Profile]
    notes: list[str] = field(default_factory=list)
    percentage_of_nodes_to_score: int | None = (
        None  # as set in the file (None: kube-scheduler's adaptive default)
    )
    extenders: list[str] = field(default_factory=list)  # urlPrefix of each extender (not simulated)
    # profile -> out-of-tree plugin -> the points it is configured at ("multiPoint" included); for live mode's
    # "may be waiting at Permit" check.
    out_of_tree: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    source: str = ""

    def profile(self, scheduler_name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)


def load_scheduler_config(path: str, dialect: Dialect, *, strict: bool = False) -> SchedulerConfig:
    """Read and check a `--scheduler-config` file as `kube-scheduler --config` would."""
    from kdiagnose.load.limits import read_input

    try:
        data = read_input(Path(path), path, _MAX_CONFIG_BYTES)
    except InputError as e:
        # Unreadable is exit 3; a stream that is binary or endless is a bad configuration (exit 2).
        if "cannot read" in str(e):
            raise InputError(
                f"cannot read scheduler configuration {path}: {str(e).split(': ', 2)[-1]}"
            ) from None
        raise _fail(path, "load", str(e).removeprefix(f"{path}: ")) from None
    if b"\x00" in data[:8192]:
        raise _fail(path, "load", "a binary file, not YAML or JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _fail(path, "load", f"not UTF-8 text at byte {e.start}") from None
    return parse_scheduler_config(text, path, dialect, strict)


_MAX_CONFIG_BYTES = 16 << 20


def _fail(source: str, stage: str, message: str, hint: str = "") -> ConfigError:
    # Only line breaks are folded: upstream texts carry meaningful double spaces ("'MyName',  or 'my.name'").
    one_line = re.sub(r"\s*[\r\n]+\s*", " ", message.strip())
    return ConfigError(f"scheduler configuration {source} rejected ({stage}): {one_line}", hint)


def parse_scheduler_config(text: str, source: str, dialect: Dialect, strict: bool = False) -> SchedulerConfig:
    """The same from text (e.g. a ConfigMap's data); `source` names it in errors and notes."""
    from kdiagnose.load.limits import load_small_yaml_text

    try:
        doc = load_small_yaml_text(text, source)  # PyYAML within the input limits (depth, aliases, numbers)
    except InputError as e:
        raise _fail(source, "load", str(e).removeprefix(f"{source}: ")) from None
    try:
        cfg = decode_config(doc)
    except DecodeError as e:
        raise _fail(source, "load", str(e)) from None

    profiles = _default_profiles(cfg, dialect)
    errs = validate_configuration(cfg, profiles, dialect)
    if errs:
        raise _fail(source, "validate", aggregate(errs))

    built: list[BuiltProfile] = []
    for prof in profiles:
        try:
            built.append(build_profile(prof, dialect, strict=strict))
        except BuildError as e:
            hint = ""
            if "does not exist" in str(e):
                hint = "an out-of-tree plugin needs a custom scheduler build; without --strict-config kdiagnose replays the in-tree part"
            raise _fail(
                source,
                "build",
                f"initializing profiles: creating profile for scheduler name {prof['schedulerName']}: {e}",
                hint,
            ) from None

    extenders = [str(e.get("urlPrefix") or "") for e in cfg.get("extenders") or []]
    global_pct = cfg.get("percentageOfNodesToScore")
    out = SchedulerConfig(
        profiles=[], percentage_of_nodes_to_score=global_pct, extenders=extenders, source=source
    )
    for b in built:
        p = b.profile
        if p.percentage_of_nodes_to_score is None and global_pct is not None:
            p.percentage_of_nodes_to_score = global_pct
        p.not_replayed += [f"extender {u}" for u in extenders]
        summary = _summary(p, dialect)
        p.is_default = not summary and not p.not_replayed
        p.summary = "; ".join(summary)
        out.profiles.append(p)
        if b.unknown:
            out.out_of_tree[p.scheduler_name] = b.unknown
        out.notes += _unknown_notes(p.scheduler_name, b.unknown)
    out.notes += _extender_notes(cfg.get("extenders") or [])
    out.notes += _percentage_notes(global_pct, out.profiles)
    return out


def _default_profiles(cfg: dict[str, Any], dialect: Dialect) -> list[dict[str, Any]]:
    """SetDefaults_KubeSchedulerConfiguration + setDefaults_KubeSchedulerProfile."""
    raw_profiles = [p or {} for p in cfg.get("profiles") or []] or [{}]
    out: list[dict[str, Any]] = []
    for raw in raw_profiles:
        name = raw.get("schedulerName")
        if name is None and len(raw_profiles) == 1:
            name = DEFAULT_SCHEDULER_NAME
        custom = plugins_from_dict(raw["plugins"]) if raw.get("plugins") is not None else None
        plugins = merge_plugins(default_plugins(dialect), custom)
        configs: list[dict[str, Any]] = []
        for pc in raw.get("pluginConfig") or []:
            pc = pc or {}
            pname = str(pc.get("name") or "")
            args = pc.get("args")
            if pname in ARGS_SCHEMAS:
                args = default_args(pname, args or {}, dialect)
            configs.append({"name": pname, "args": args, "explicit": True})
        # Default args for enabled plugins without a pluginConfig entry (pluginsNames: sorted).
        have = {c["name"] for c in configs}
        enabled = sorted({ref.name for ps in plugins.values() for ref in ps.enabled})
        for pname in enabled:
            if pname in ARGS_SCHEMAS and pname not in have:
                configs.append({"name": pname, "args": default_args(pname, {}, dialect), "explicit": False})
        out.append(
            {
                "schedulerName": name or "",
                "percentageOfNodesToScore": raw.get("percentageOfNodesToScore"),
                "plugins": plugins,
                "pluginConfig": configs,
            }
        )
    return out


# ---------------------------------------------------------------- what the report says


def _resources_text(resources: list[dict[str, Any]]) -> str:
    return ", ".join(f"{r.get('name')}:{r.get('weight')}" for r in resources)


def _args_summary(name: str, args: dict[str, Any], dialect: Dialect) -> list[str]:
    default = default_args(name, {}, dialect)
    if args == default:
        return []
    if name == n.NODE_RESOURCES_FIT:
        out: list[str] = []
        strategy = args.get("scoringStrategy") or {}
        if strategy != default["scoringStrategy"]:
            text = f"NodeResourcesFit {strategy.get('type')} ({_resources_text(strategy.get('resources') or [])})"
            shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape")
            if strategy.get("type") == "RequestedToCapacityRatio" and shape:
                text += " shape " + ", ".join(
                    f"{p.get('utilization', 0)}%→{p.get('score', 0)}" for p in shape
                )
            out.append(text)
        ignored = [
            *(args.get("ignoredResources") or []),
            *(f"{g}/*" for g in args.get("ignoredResourceGroups") or []),
        ]
        if ignored:
            out.append("NodeResourcesFit ignores " + ", ".join(ignored))
        return out
    if name == n.POD_TOPOLOGY_SPREAD and args.get("defaultingType") == "List":
        cons = args.get("defaultConstraints") or []
        text = ", ".join(
            f"{c.get('topologyKey')} maxSkew {c.get('maxSkew')} {c.get('whenUnsatisfiable')}" for c in cons
        )
        return [f"PodTopologySpread default constraints: {text or 'none'}"]
    changed = [f"{k} {v}" for k, v in args.items() if default.get(k) != v]
    return [f"{name} " + ", ".join(changed)] if changed else []


def _summary(p: Profile, dialect: Dialect) -> list[str]:
    """How the profile differs from the default one, as short phrases (empty: it is the default)."""
    d = default_profile(dialect, p.scheduler_name)
    out: list[str] = []
    for name, args in p.plugin_args.items():
        out += _args_summary(name, args, dialect)
    points = (
        ("preEnqueue", d.pre_enqueue, p.pre_enqueue),
        ("preFilter", d.pre_filter, p.pre_filter),
        ("filter", d.filter, p.filter),
        ("postFilter", d.post_filter, p.post_filter),
        ("preScore", d.pre_score, p.pre_score),
        ("score", list(d.score), list(p.score)),
    )
    off: dict[str, list[str]] = {}
    on: dict[str, list[str]] = {}
    for point, want, got in points:
        for name in want:
            if name not in got:
                off.setdefault(name, []).append(point)
        for name in got:
            if name not in want:
                on.setdefault(name, []).append(point)
    for name, pts in off.items():
        in_default = [pt for pt, want, _ in points if name in want]
        out.append(f"{name} disabled" if pts == in_default else f"{name} {'/'.join(pts)} disabled")
    for name, pts in on.items():
        out.append(f"{name} {'/'.join(pts)} enabled")
    weights = [
        f"{k} {w} (default {d.score[k]})" for k, w in p.score.items() if k in d.score and d.score[k] != w
    ]
    if weights:
        out.append("score weights " + ", ".join(weights))
    for point, want, got in points[:5]:
        common = [x for x in got if x in want]
        if common != [x for x in want if x in got]:
            out.append(f"{point} order {', '.join(got)}")
    if p.not_replayed:
        out.append("not replayed: " + ", ".join(p.not_replayed))
    return out


def _unknown_notes(profile: str, unknown: dict[str, list[str]]) -> list[str]:
    notes: list[str] = []
    for name, points in unknown.items():
        text = (
            f"profile {profile}: {name} ({', '.join(points)}) is not an in-tree kube-scheduler plugin (it needs a custom "
            "scheduler build); kdiagnose replays the in-tree plugins only: its filters, scores and Permit are not simulated"
        )
        if "permit" in points or "multiPoint" in points:
            text += (
                f". If it is a Permit plugin (e.g. coscheduling / gang scheduling), a pod it holds has no node and no "
                f"FailedScheduling event while it waits (at most {_PERMIT_MAX_WAIT}) before being rejected and retried"
            )
        notes.append(text)
    return notes


def _extender_notes(extenders: list[dict[str, Any]]) -> list[str]:
    notes: list[str] = []
    for e in extenders:
        verbs = [v for v in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb") if e.get(v)]
        what = ", ".join(f"{v.removesuffix('Verb')}" for v in verbs) or "no verbs"
        notes.append(
            f"scheduler extender {e.get('urlPrefix') or '?'} ({what}) is not simulated: nodes it would filter out "
            "and the scores it would add are not in this replay"
        )
    return notes


def _percentage_notes(global_pct: int | None, profiles: list[Profile]) -> list[str]:
    notes: list[str] = []
    for p in profiles:
        pct = p.percentage_of_nodes_to_score
        if pct is None:
            continue
        scope = "global" if pct == global_pct else f"profile {p.scheduler_name}"
        text = f"percentageOfNodesToScore {pct} ({scope}): "
        if pct in (0, 100):
            text += "no effect on the choice" if pct == 100 else "kube-scheduler's adaptive default"
        else:
            text += (
                "kube-scheduler stops searching once it has found that share of feasible nodes (at least 100) and scores "
                "only those; kdiagnose evaluates and scores every node, so in clusters above 100 nodes the real choice may "
                "be another feasible node"
            )
        if text not in notes:
            notes.append(text)
    return notes
