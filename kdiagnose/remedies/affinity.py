"""Relax affinity: nodeSelector keys, required node affinity, required pod (anti-)affinity terms and
DoNotSchedule topology spread constraints, one source at a time, each the smallest change that replays
feasible (a failing expression moved to preferred before the whole required block; required -> preferred;
DoNotSchedule -> ScheduleAnyway). Every relaxation is risky; one on the node's identity (arch, OS) is never
suggested (remedies/safety.py). Mirrors what the NodeAffinity, InterPodAffinity and PodTopologySpread
filters read (plugins/nodeaffinity, interpodaffinity, podtopologyspread).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kdiagnose.remedies import safety
from kdiagnose.remedies.whatif import Context, describe_status
from kdiagnose.results import RISKY, Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.describe import with_cause

__all__ = ["remedies"]

Obj = dict[str, Any]
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_CAVEAT = "changes where the workload is allowed to run: it may land on nodes the rule was written to avoid"


def _spec_get(obj: Obj, *path: str) -> Any:
    cur: Any = obj
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    return cur


def _blocked_by_expression(ctx: Context) -> dict[str, list[str]]:
    """Failing requirement (`key In [v]` or `nodeSelector k=v`) -> nodes it rejects."""
    out: dict[str, list[str]] = {}
    for name in ctx.nodes_failing(n.NODE_AFFINITY):
        for det in ctx.d.verdicts[name].details:
            if "nodeSelector" in det:
                out.setdefault(f"nodeSelector {det['nodeSelector']}", []).append(name)
            for expr in det.get("nodeAffinity") or [] if isinstance(det.get("nodeAffinity"), list) else []:
                out.setdefault(str(expr), []).append(name)
    return out


def _summ(blocks: dict[str, list[str]]) -> str:
    parts = []
    for what, nodes in sorted(blocks.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:3]:
        parts.append(
            f"{what} rejects {', '.join(nodes[:3])}{f' (+{len(nodes) - 3})' if len(nodes) > 3 else ''}"
        )
    return "; ".join(parts)


def _landing(ctx: Context, nodes: list[str]) -> str:
    """`; it would then run on node-d (workload=batch)`: where the relaxed rule lets the pod go, with the
    values of the labels the pod's node rules name, so the risk is about these nodes, not nodes in general."""
    if not nodes or nodes[0] not in ctx.snapshot.node_info_by_name:
        return ""
    req = (ctx.pod.affinity.get("nodeAffinity") or {}).get(_REQUIRED)
    terms = req.get("nodeSelectorTerms") if isinstance(req, dict) else None
    keys = sorted(set(ctx.pod.node_selector) | (_term_keys(terms) if isinstance(terms, list) else set()))
    labels = ctx.snapshot.node_info_by_name[nodes[0]].node.labels
    values = [f"{k}={labels[k]}" if k in labels else f"no {k} label" for k in keys[:3]]
    where = nodes[0] if len(nodes) == 1 else f"{nodes[0]} (and {len(nodes) - 1} more)"
    return f"; it would then run on {where}" + (f" ({', '.join(values)})" if values else "")


class _Candidate:
    def __init__(
        self,
        label: str,
        mutate: Callable[[Obj], None],
        fragment: Callable[[Obj], Obj],
        blocks: str,
        risk: str = _CAVEAT,
        changed: frozenset[str] = frozenset(),
    ) -> None:
        self.label = label
        self.mutate = mutate
        self.fragment = fragment
        self.blocks = blocks
        self.risk = risk  # every relaxation is risky (remedies/safety.py): this says how
        # The Filter plugins that read what `mutate` changes (the what-if re-runs only them, whatif._refilter).
        self.changed = changed


# Who reads what a relaxation changes: the pod's nodeSelector and required node affinity are read by
# NodeAffinity and by PodTopologySpread (nodeAffinityPolicy Honor, podtopologyspread/common.go: which nodes
# count and are filtered); its required pod (anti-)affinity terms by InterPodAffinity only (its preferred
# terms by scoring only); its topology spread constraints by PodTopologySpread only.
_NODE_RULE = frozenset({n.NODE_AFFINITY, n.POD_TOPOLOGY_SPREAD})
_POD_RULE = frozenset({n.INTER_POD_AFFINITY})
_SPREAD_RULE = frozenset({n.POD_TOPOLOGY_SPREAD})


def _node_selector_candidates(
    ctx: Context, blocks: dict[str, list[str]], notes: list[str]
) -> list[list[_Candidate]]:
    out: list[list[_Candidate]] = []
    own = ctx.base_spec().get("nodeSelector") or {}
    for key, value in ctx.pod.node_selector.items():
        what = f"nodeSelector {key}={value}"
        if what not in blocks:
            continue
        cls = safety.classify_label(key)
        if cls.safety == safety.NEVER:
            notes.append(safety.ruled_out("affinity", f"relaxing {what}", cls.why))
            continue
        if own.get(key) != value and ctx.pod.runtime_class_name:
            # RuntimeClass admission merges scheduling.nodeSelector into every pod that names the class.
            notes.append(
                f"affinity: {what} comes from RuntimeClass {ctx.pod.runtime_class_name} (scheduling.nodeSelector), "
                "not from the workload: label nodes for that runtime, or change the RuntimeClass or runtimeClassName"
            )
            continue
        pref = {
            "weight": 100,
            "preference": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
        }

        def mutate(obj: Obj, key: str = key, pref: Obj = pref) -> None:
            spec = obj["spec"]
            spec["nodeSelector"] = {k: v for k, v in (spec.get("nodeSelector") or {}).items() if k != key}
            na = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
            na[_PREFERRED] = [*(na.get(_PREFERRED) or []), pref]

        def fragment(base: Obj, key: str = key, pref: Obj = pref) -> Obj:
            prefs = [*(_spec_get(base, "affinity", "nodeAffinity", _PREFERRED) or []), pref]
            return {"nodeSelector": {key: None}, "affinity": {"nodeAffinity": {_PREFERRED: prefs}}}

        out.append(
            [
                _Candidate(
                    f"replace nodeSelector {key}={value} by a preferred node affinity",
                    mutate,
                    fragment,
                    f"{what} rejects {', '.join(blocks[what][:3])}",
                    cls.why,
                    _NODE_RULE,
                )
            ]
        )
    return out


def _term_keys(terms: list[Any]) -> set[str]:
    return {
        str(e.get("key"))
        for t in terms
        if isinstance(t, dict)
        for e in t.get("matchExpressions") or []
        if isinstance(e, dict)
    }


def _node_affinity_candidates(
    ctx: Context, blocks: dict[str, list[str]], notes: list[str]
) -> list[list[_Candidate]]:
    req = _spec_get(ctx.pod.raw or {}, "spec", "affinity", "nodeAffinity", _REQUIRED)
    terms = req.get("nodeSelectorTerms") if isinstance(req, dict) else None
    expr_blocks = {k: v for k, v in blocks.items() if not k.startswith("nodeSelector ")}
    if not isinstance(terms, list) or not expr_blocks:
        return []
    # Expressions on the node's identity (arch, OS) are never relaxed: ruled out, and kept required.
    for what in sorted(expr_blocks):
        cls = safety.classify_label(what.split(" ", 1)[0])
        if cls.safety == safety.NEVER:
            notes.append(safety.ruled_out("affinity", f"relaxing the required node affinity {what}", cls.why))
            expr_blocks.pop(what)
    if not expr_blocks:
        return []
    cands: list[_Candidate] = []
    text = _summ(expr_blocks)
    if len(terms) == 1 and isinstance(terms[0], dict):
        exprs = list(terms[0].get("matchExpressions") or [])
        failing = [
            e
            for e in exprs
            if isinstance(e, dict) and any(str(e.get("key")) == k.split(" ", 1)[0] for k in expr_blocks)
        ]
        fail_risk = "; ".join(dict.fromkeys(safety.classify_label(str(e.get("key"))).why for e in failing))
        keep = [e for e in exprs if e not in failing]
        if failing and (keep or terms[0].get("matchFields")):
            pref = {"weight": 100, "preference": {"matchExpressions": failing}}
            new_term = {**terms[0], "matchExpressions": keep}

            def mutate1(obj: Obj) -> None:
                na = obj["spec"]["affinity"]["nodeAffinity"]
                na[_REQUIRED] = {"nodeSelectorTerms": [new_term]}
                na[_PREFERRED] = [*(na.get(_PREFERRED) or []), pref]

            def fragment1(base: Obj) -> Obj:
                prefs = [*(_spec_get(base, "affinity", "nodeAffinity", _PREFERRED) or []), pref]
                return {
                    "affinity": {
                        "nodeAffinity": {_REQUIRED: {"nodeSelectorTerms": [new_term]}, _PREFERRED: prefs}
                    }
                }

            keys = ", ".join(str(e.get("key")) for e in failing)
            cands.append(
                _Candidate(
                    f"move the required node affinity expression(s) on {keys} to preferred",
                    mutate1,
                    fragment1,
                    text,
                    fail_risk or _CAVEAT,
                    _NODE_RULE,
                )
            )
    identity = sorted(k for k in _term_keys(terms) if safety.classify_label(k).safety == safety.NEVER)
    if identity:
        # Turning the whole block into a preference would relax the identity expressions too.
        return [cands]
    prefs_new = [
        {"weight": 100, "preference": t}
        for t in terms
        if isinstance(t, dict) and (t.get("matchExpressions") or t.get("matchFields"))
    ]

    def mutate2(obj: Obj) -> None:
        na = obj["spec"]["affinity"]["nodeAffinity"]
        na.pop(_REQUIRED, None)
        na[_PREFERRED] = [*(na.get(_PREFERRED) or []), *prefs_new]

    def fragment2(base: Obj) -> Obj:
        prefs = list(_spec_get(base, "affinity", "nodeAffinity", _PREFERRED) or []) + prefs_new
        return {"affinity": {"nodeAffinity": {_REQUIRED: None, _PREFERRED: prefs}}}

    whole_risk = "; ".join(dict.fromkeys(safety.classify_label(k).why for k in sorted(_term_keys(terms))))
    cands.append(
        _Candidate(
            "turn the required node affinity into a preferred one (weight 100)",
            mutate2,
            fragment2,
            text,
            whole_risk or _CAVEAT,
            _NODE_RULE,
        )
    )
    return [cands]


def _pod_affinity_candidates(ctx: Context) -> list[list[_Candidate]]:
    failing = ctx.nodes_failing(n.INTER_POD_AFFINITY)
    if not failing:
        return []
    out: list[list[_Candidate]] = []
    for kind, reason_word in (
        ("podAffinity", "pod affinity rules"),
        ("podAntiAffinity", "pod anti-affinity rules"),
    ):
        terms = _spec_get(ctx.pod.raw or {}, "spec", "affinity", kind, _REQUIRED)
        if not isinstance(terms, list) or not terms:
            continue
        nodes = [
            x
            for x in failing
            if any(reason_word in r and "existing" not in r for r in ctx.d.verdicts[x].reasons)
        ]
        if not nodes:
            continue
        for i, term in enumerate(terms):

            def mutate(obj: Obj, kind: str = kind, i: int = i) -> None:
                block = obj["spec"]["affinity"][kind]
                req = list(block.get(_REQUIRED) or [])
                moved = req.pop(i)
                block[_REQUIRED] = req
                block[_PREFERRED] = [
                    *(block.get(_PREFERRED) or []),
                    {"weight": 100, "podAffinityTerm": moved},
                ]

            def fragment(base: Obj, kind: str = kind, i: int = i, terms: list[Any] = terms) -> Obj:
                req = list(_spec_get(base, "affinity", kind, _REQUIRED) or copy.deepcopy(terms))
                moved = req.pop(i) if i < len(req) else terms[i]
                prefs = [
                    *(_spec_get(base, "affinity", kind, _PREFERRED) or []),
                    {"weight": 100, "podAffinityTerm": moved},
                ]
                return {"affinity": {kind: {_REQUIRED: req or None, _PREFERRED: prefs}}}

            tk = term.get("topologyKey") if isinstance(term, dict) else ""
            label = f"turn required {kind} term #{i + 1} (topologyKey {tk}) into a preferred one"
            risk = (
                f"replicas may share a {tk} domain the rule kept apart: one failure of it takes several down"
                if kind == "podAntiAffinity"
                else f"the pod may run away from the pods it was meant to sit beside ({tk}): latency, traffic cost"
            )
            out.append(
                [
                    _Candidate(
                        label,
                        mutate,
                        fragment,
                        f"the {kind} term rejects {', '.join(nodes[:3])}",
                        risk,
                        _POD_RULE,
                    )
                ]
            )
    return out


def _spread_candidates(ctx: Context) -> list[list[_Candidate]]:
    failing = ctx.nodes_failing(n.POD_TOPOLOGY_SPREAD)
    raw = _spec_get(ctx.pod.raw or {}, "spec", "topologySpreadConstraints")
    if not failing or not isinstance(raw, list):
        return []
    out: list[list[_Candidate]] = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict) or c.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
            continue

        def mutate(obj: Obj, i: int = i) -> None:
            obj["spec"]["topologySpreadConstraints"][i]["whenUnsatisfiable"] = "ScheduleAnyway"

        def fragment(base: Obj, i: int = i, tk: Any = c.get("topologyKey")) -> Obj:
            # topologySpreadConstraints merge on topologyKey (core/v1 PodSpec patchMergeKey): the one field
            # suffices, unless two constraints share the key; then the whole list replaces the template's.
            cs = copy.deepcopy(_spec_get(base, "topologySpreadConstraints") or raw)
            if sum(1 for x in cs if isinstance(x, dict) and x.get("topologyKey") == tk) == 1:
                return {
                    "topologySpreadConstraints": [{"topologyKey": tk, "whenUnsatisfiable": "ScheduleAnyway"}]
                }
            if i < len(cs):
                cs[i]["whenUnsatisfiable"] = "ScheduleAnyway"
            return {"topologySpreadConstraints": [{"$patch": "replace"}, *cs]}

        tk = c.get("topologyKey")
        label = f"set topology spread constraint #{i + 1} (topologyKey {tk}, maxSkew {c.get('maxSkew')}) to whenUnsatisfiable: ScheduleAnyway"
        risk = (
            f"replicas may pile into one {tk} domain past maxSkew {c.get('maxSkew')}: losing that domain takes "
            "more of them down"
        )
        out.append(
            [
                _Candidate(
                    label,
                    mutate,
                    fragment,
                    f"the spread constraint rejects {', '.join(failing[:3])}",
                    risk,
                    _SPREAD_RULE,
                )
            ]
        )
    return out


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    out: list[Remedy] = []
    notes: list[str] = []
    if ctx.pod.raw is None:
        return out, notes
    blocks = _blocked_by_expression(ctx)
    sources = (
        _node_selector_candidates(ctx, blocks, notes)
        + _node_affinity_candidates(ctx, blocks, notes)
        + _pod_affinity_candidates(ctx)
        + _spread_candidates(ctx)
    )
    existing = [
        x
        for x in ctx.nodes_failing(n.INTER_POD_AFFINITY)
        if any("existing" in r for r in ctx.d.verdicts[x].reasons)
    ]
    if existing:
        pods = sorted(
            {
                p
                for x in existing
                for det in ctx.d.verdicts[x].details
                for p in det.get("podsWithAntiAffinity") or []
            }
        )
        notes.append(
            f"affinity: {len(existing)} node(s) are blocked by the anti-affinity of pods already running "
            f"({', '.join(pods[:5]) or 'see the node table'}): only a change to those pods would free them"
        )
    for candidates in sources:
        last_fail = ""
        for cand in candidates:
            pod = ctx.modified_pod(cand.mutate)
            if pod is None:
                break
            r = ctx.replay_modified(pod, changed=cand.changed or None)
            if not r.schedules:
                blocked = [s for s in r.verdicts.values() if not s.ok]
                worst = max(
                    ({s.plugin: 0 for s in blocked}).keys(),
                    key=lambda p: sum(1 for s in blocked if s.plugin == p),
                    default="",
                )
                sample = next((s for s in blocked if s.plugin == worst), None)
                last_fail = with_cause(
                    f"affinity: to {cand.label} would not help: nodes stay blocked by {worst}",
                    describe_status(sample) if sample else "",
                )
                continue
            fragment = cand.fragment(ctx.base_spec())
            node_rule = "node affinity" in cand.label or "nodeSelector" in cand.label
            out.append(
                Remedy(
                    kind="relax-affinity",
                    summary=f"{cand.label} in {ctx.owner} ({cand.blocks})",
                    plugin=n.NODE_AFFINITY
                    if node_rule
                    else (n.POD_TOPOLOGY_SPREAD if "spread" in cand.label else n.INTER_POD_AFFINITY),
                    target=str(ctx.owner),
                    unblocks=list(r.feasible),
                    risk=cand.risk + (_landing(ctx, r.feasible) if node_rule else ""),
                    safety=RISKY,
                    change_size=1.0,
                    **ctx.change(fragment, r.feasible),
                    details={"relaxation": cand.label, "blocks": cand.blocks},
                )
            )
            last_fail = ""
            break
        if last_fail:
            notes.append(last_fail)
    return out, notes
