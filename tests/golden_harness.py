"""Replays a golden scenario and compares kdiagnose's decisions with the real kube-scheduler's, field by field.

Run directly for a readable diff:  python -m tests.golden_harness [--dir fixtures/golden-v135] [NAME-substring ...]
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for

if TYPE_CHECKING:
    from kdiagnose.model.snapshot import Snapshot
    from kdiagnose.scheduler.profiles import Profile

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
GOLDEN_DIRS = [
    "golden",
    "golden-v137",
    "golden-v136",
    "golden-v135",
    "golden-v135-latest",
    "golden-v134-latest",
    "golden-v133",
    "golden-v132",
    "golden-v131",
    "golden-config",
    "fuzz-found",
]

# Cases where the real scheduler chose at random between equally good preemption candidates.
PREEMPTION_ALTERNATIVES: dict[str, list[dict[str, Any]]] = {
    "random/rand-1-0096": [
        {"nominated_node": "node-0", "victims": ["shop/web-5"]},
        {"nominated_node": "node-3", "victims": ["default/web-8"]},
    ],
}


def scenario_for(golden_json: Path) -> Path:
    """The scenario YAML: beside the JSON, or in golden/ for the version directories (same relative name)."""
    rel = golden_json.relative_to(FIXTURES).parts[1:]
    local = golden_json.with_suffix(".yaml")
    if local.exists():
        return local
    main = FIXTURES.joinpath("golden", *rel).with_suffix(".yaml")
    if main.exists():
        return main
    # config-* cases of a version directory: the scenario and its config live in golden-config/.
    return FIXTURES.joinpath("golden-config", *rel).with_suffix(".yaml")


def config_for(golden_json: Path) -> Path:
    """The case's KubeSchedulerConfiguration: beside the JSON, else in golden-config/ (same name)."""
    local = golden_json.with_name(golden_json.stem + ".config.yaml")
    if local.exists():
        return local
    return FIXTURES / "golden-config" / local.name


def case_id(golden_json: Path) -> str:
    return str(golden_json.relative_to(FIXTURES).with_suffix(""))


def all_cases() -> list[Path]:
    out: list[Path] = []
    for d in GOLDEN_DIRS:
        base = FIXTURES / d
        out += sorted(p for p in base.rglob("*.json") if not p.name.endswith(".config.json"))
    return out


def _status_dict(st: Any) -> dict[str, Any] | None:
    if st is None:
        return None
    return {"plugin": st.plugin, "code": st.code.label, "reasons": list(st.reasons)}


def to_golden_shape(
    d: Diagnosis, absent_counted: bool = True, skips_terminating_victims: bool = True
) -> dict[str, Any]:
    """The fields of kdiagnose's Diagnosis in the golden files' shape.

    Nodes outside a PreFilterResult carry the absent status from v1.32 (`absent_counted`), and are
    `"not_evaluated"` in v1.31, as the golden files record them."""
    filters: dict[str, Any] = {}
    for name, st in d.verdicts.items():
        filters[name] = "feasible" if st.ok else _status_dict(st)
    for name in d.not_evaluated:
        filters[name] = _status_dict(d.absent) if absent_counted and d.absent is not None else "not_evaluated"
    scores = {
        node: {
            "plugins": {
                p: {"score": s.score, "weight": s.weight, "weighted": s.weighted}
                for p, s in b.plugins.items()
            },
            "total": b.total,
        }
        for node, b in d.scores.items()
    }
    pre = None
    if d.preemption is not None:
        pre = {
            "nominated_node": d.preemption.nominated_node,
            # The harness records the victims of its Preempted events; where the release skips the API
            # call for a victim already terminating (Dialect.preemption_skips_terminating_victims:
            # v1.34.0-v1.34.1, v1.35+) it gets none, though the scheduler counts it (v1.37's message
            # "preempting N victims" does, and is compared). v1.34.2+ and v1.33 delete it again.
            "victims": sorted(
                v.key for v in d.preemption.victims if not (skips_terminating_victims and v.terminating)
            ),
        }
    return {
        "scheduled": d.scheduled,
        "node": d.chosen,
        "message": d.message,
        "preenqueue_rejected": _status_dict(d.preenqueue),
        "prefilter": _status_dict(d.prefilter),
        "prefilter_node_names": d.prefilter_node_names,
        "filters": filters,
        "feasible_nodes": sorted(d.feasible),
        "scores": scores,
        "top_nodes": d.top_nodes,
        "preemption": pre,
        "handled": d.handled,
    }


def case_inputs(golden_json: Path) -> tuple[dict[str, Any], Callable[[], Snapshot], list[Profile] | None]:
    """A case's golden record, a builder of fresh snapshots of its scenario at its release (a caller that
    diagnoses twice needs two: a what-if or a placement may bind into one) and its configured profiles."""
    golden = json.loads(golden_json.read_text())
    scenario = scenario_for(golden_json)
    dialect = dialect_for(golden.get("k8s_version"))

    def snapshot() -> Snapshot:
        result = load_paths([str(scenario)])
        return build_snapshot(result.objects, dialect, list_kinds=result.list_kinds)

    profiles = None
    config = config_for(golden_json)
    if config.exists():
        from kdiagnose.schedconfig import load_scheduler_config

        profiles = list(load_scheduler_config(str(config), dialect, strict=True).profiles)
    return golden, snapshot, profiles


def load_case(golden_json: Path) -> tuple[dict[str, Any], Scheduler]:
    golden, snapshot, profiles = case_inputs(golden_json)
    return golden, Scheduler(snapshot(), profiles)


def _alternative_message(
    want: str, want_pre: dict[str, Any] | None, ours_pre: dict[str, Any] | None, cid: str
) -> str:
    """From v1.37 the message names the preemption's node: for a recorded random tie, the message the
    real scheduler writes when it picks the alternative kdiagnose picked."""
    alternatives = PREEMPTION_ALTERNATIVES.get(cid.split("/", 1)[1] if "/" in cid else cid) or []
    if not want_pre or not ours_pre:
        return want
    for alt in alternatives:
        if (
            alt["nominated_node"] == ours_pre["nominated_node"]
            and sorted(alt["victims"]) == ours_pre["victims"]
        ):
            return want.replace(
                f"on node {want_pre['nominated_node']}, preempting {len(want_pre['victims'])} victims",
                f"on node {alt['nominated_node']}, preempting {len(alt['victims'])} victims",
            )
    return want


# The 5 characters the API server appends to a generateName (apiserver names.SimpleNameGenerator's alphabet).
_GENERATED_CLAIM = re.compile(r"(claim [a-z0-9.-]+/[a-z0-9.-]+)-[bcdfghjklmnpqrstvwxz2456789]{5}(?=[,:])")


def _without_generated_claim_names(want: Any) -> Any:
    """A recorded text naming a ResourceClaim the resourceclaim controller created for the scenario's pod from
    a template (`<pod>-<claim>-xxxxx`: the harness's stand-in for the API server's random suffix), as
    kdiagnose names a claim that is not created yet in its input (`<pod>-<claim>`): no tool can know the
    suffix a cluster will pick, so the comparison ignores it."""
    if isinstance(want, str):
        return _GENERATED_CLAIM.sub(r"\1", want)
    if isinstance(want, dict):
        return {k: _without_generated_claim_names(v) for k, v in want.items()}
    if isinstance(want, list):
        return [_without_generated_claim_names(v) for v in want]
    return want


def _aborting_errors(gp: dict[str, Any]) -> list[dict[str, Any]]:
    """The distinct Error statuses of a pod whose scheduling cycle a Filter Error aborted (empty otherwise)."""
    if not gp.get("error"):
        return []
    out: list[dict[str, Any]] = []
    for v in (gp.get("filters") or {}).values():
        if isinstance(v, dict) and v.get("code") == "Error" and v not in out:
            out.append(v)
    return out


_FIT_FIXED_REASONS = (
    "Too many pods",
    "Insufficient cpu",
    "Insufficient memory",
    "Insufficient ephemeral-storage",
)


def _scalar_reasons_sorted(status: Any) -> Any:
    """NodeResourcesFit's reasons with the scalar resources' ones (extended resources, hugepages, DRA-mapped
    names) sorted: fitsRequest (noderesources/fit.go) checks pods, cpu, memory, ephemeral-storage in that
    order, then ranges over the podRequest.ScalarResources map, so the real scheduler lists those in Go's
    random map order (fixtures/fuzz-found/v135-fit-scalar-reason-order: several harness runs differ)."""
    if not isinstance(status, dict) or status.get("plugin") != "NodeResourcesFit":
        return status
    reasons = list(status.get("reasons") or [])
    fixed = [r for r in reasons if r in _FIT_FIXED_REASONS]
    scalar = [r for r in reasons if r not in _FIT_FIXED_REASONS]
    return {**status, "reasons": fixed + sorted(scalar)}


def compare_case(golden_json: Path) -> list[str]:
    """Every difference between kdiagnose and the golden file, as readable lines (empty = parity)."""
    try:
        golden, sched = load_case(golden_json)
    except Exception as e:  # a config the real scheduler rejected
        golden = json.loads(golden_json.read_text())
        if golden.get("error"):
            if getattr(e, "exit_code", None) != 2:
                return [f"config error: expected exit 2, got {e!r}"]
            # kube-scheduler's own error text, quoted inside kdiagnose's one-line message.
            return (
                []
                if golden["error"] in str(e)
                else [f"config error text:\n    want {golden['error']!r}\n    got  {e}"]
            )
        raise
    if golden.get("error"):
        return [f"expected the config to be rejected: {golden['error']}"]
    diffs: list[str] = []
    pods = {p.key: p for p in sched.snapshot.pending}
    cid = case_id(golden_json)
    for gp in golden["pods"]:
        key = gp["pod"]
        pod = pods.get(key)
        if pod is None:
            diffs.append(f"{key}: not found among pending pods")
            continue
        dialect = sched.snapshot.dialect
        ours = to_golden_shape(
            sched.diagnose(pod), dialect.absent_nodes_counted, dialect.preemption_skips_terminating_victims
        )
        if gp.get("handled") is False:
            if ours["handled"]:
                diffs.append(f"{key}: expected not handled ({gp.get('not_handled')})")
            continue
        for fld in (
            "scheduled",
            "message",
            "preenqueue_rejected",
            "prefilter",
            "prefilter_node_names",
            "feasible_nodes",
            "top_nodes",
        ):
            want = gp.get(fld)
            if fld == "prefilter_node_names" and want is not None:
                want = sorted(want)
            if fld == "top_nodes" and not gp.get("scheduled"):
                continue
            if fld == "message" and want and ours[fld] != want:
                want = _alternative_message(want, gp.get("preemption"), ours["preemption"], cid)
            if ours[fld] != want and ours[fld] == _without_generated_claim_names(want):
                want = ours[fld]
            if ours[fld] != want:
                diffs.append(f"{key}: {fld}:\n    want {want!r}\n    got  {ours[fld]!r}")
        if gp.get("scheduled") and ours["node"] not in (gp.get("top_nodes") or [gp.get("node")]):
            diffs.append(f"{key}: node: want one of {gp.get('top_nodes')}, got {ours['node']}")
        want_filters = gp.get("filters", {})
        aborted = _aborting_errors(gp)
        for node in sorted(set(want_filters) | set(ours["filters"])):
            w, g = want_filters.get(node), ours["filters"].get(node)
            if aborted and w not in aborted:
                # A cycle a Filter Error aborted: the other nodes' recorded statuses are a race
                # (conformance/compare.py); kdiagnose gives every node the Error the recorded ones got.
                w = aborted[0] if len(aborted) == 1 else w
            if w != g and g == _without_generated_claim_names(w):
                w = g
            if w != g and _scalar_reasons_sorted(w) == _scalar_reasons_sorted(g):
                w = g
            if w != g:
                diffs.append(f"{key}: filters[{node}]:\n    want {w!r}\n    got  {g!r}")
        for node in sorted(set(gp.get("scores") or {}) | set(ours["scores"])):
            w, g = (gp.get("scores") or {}).get(node), ours["scores"].get(node)
            if w != g:
                diffs.append(
                    f"{key}: scores[{node}]:\n    want {json.dumps(w, sort_keys=True)}\n    got  {json.dumps(g, sort_keys=True)}"
                )
        want_pre = gp.get("preemption")
        if want_pre is not None:
            want_pre = {"nominated_node": want_pre["nominated_node"], "victims": sorted(want_pre["victims"])}
        alternatives = PREEMPTION_ALTERNATIVES.get(cid.split("/", 1)[1] if "/" in cid else cid)
        ok_pre = [want_pre] + [{**a, "victims": sorted(a["victims"])} for a in (alternatives or [])]
        if ours["preemption"] not in ok_pre:
            diffs.append(f"{key}: preemption:\n    want {want_pre!r}\n    got  {ours['preemption']!r}")
    return diffs


def main(argv: list[str]) -> int:
    dirs = GOLDEN_DIRS
    if "--dir" in argv:
        i = argv.index("--dir")
        dirs = [argv[i + 1]]
        argv = argv[:i] + argv[i + 2 :]
    quiet = "-q" in argv
    argv = [a for a in argv if a != "-q"]
    cases = [c for c in all_cases() if c.relative_to(FIXTURES).parts[0] in dirs]
    if argv:
        cases = [c for c in cases if any(a in str(c) for a in argv)]
    failed = 0
    for c in cases:
        try:
            diffs = compare_case(c)
        except Exception as e:
            diffs = [f"crashed: {type(e).__name__}: {e}"]
        if diffs:
            failed += 1
            print(f"FAIL {case_id(c)}")
            if not quiet:
                for line in diffs[:12]:
                    print("   ", line)
                if len(diffs) > 12:
                    print(f"    ... {len(diffs) - 12} more")
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
