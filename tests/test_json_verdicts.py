"""`-o json` per-node verdicts say what the real scheduler recorded, per release (fixtures/golden*/).

In particular nodes outside a PreFilterResult (pods pinned by `matchFields metadata.name`): from v1.32
findNodesThatFitPod gives them the absent status, UnschedulableAndUnresolvable with no plugin; v1.31
gave them none (`not_evaluated` in the golden files, `NotEvaluated` in kdiagnose's JSON).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report.json import report_document
from tests.golden_harness import (
    _aborting_errors,
    _scalar_reasons_sorted,
    _without_generated_claim_names,
    all_cases,
    case_id,
    load_case,
)

PINNED = "cluster-daemonset-pinned-full-node"


def _want(filt: Any) -> dict[str, Any]:
    if filt == "feasible":
        return {"verdict": "Feasible", "plugin": None, "reasons": []}
    if filt == "not_evaluated":
        return {"verdict": "NotEvaluated", "plugin": None, "reasons": []}
    return {"verdict": filt["code"], "plugin": filt["plugin"] or None, "reasons": filt["reasons"]}


def _check(golden_json: Path) -> list[str]:
    if json.loads(golden_json.read_text()).get("error"):
        return []  # a configuration the real scheduler rejected
    golden, sched = load_case(golden_json)
    keys = [gp["pod"] for gp in golden["pods"] if gp.get("handled") is not False]
    report = diagnose_snapshot(sched.snapshot, sched.profiles, pods=keys, remedies=False)
    docs = {p["pod"]: p for p in report_document(report)["pods"]}
    diffs = []
    for gp in golden["pods"]:
        if gp["pod"] not in keys or gp.get("preenqueue_rejected") or gp.get("prefilter"):
            continue
        nodes = docs[gp["pod"]]["nodes"]
        # The same allowances as tests/golden_harness.compare_case: the racy nodes of a cycle a Filter Error
        # aborted, the generated suffix of a claim created from a template, the scalar reasons' order.
        aborted = _aborting_errors(gp)
        for node, filt in gp.get("filters", {}).items():
            if len(aborted) == 1 and filt not in aborted:
                filt = aborted[0]
            # NodeResourcesFit lists scalar resources in Go map order (kdiagnose: sorted by name).
            want = _want(_scalar_reasons_sorted(filt))
            doc = nodes.get(node)
            got = {k: doc[k] for k in want} if doc else None
            if got != want and got == _without_generated_claim_names(want):
                want = got
            if got != want:
                diffs.append(f"{gp['pod']} {node}: want {want}, got {got}")
    return diffs


@pytest.mark.parametrize("golden_json", [c for c in all_cases() if PINNED in c.name], ids=case_id)
def test_nodes_outside_prefilter_result_per_release(golden_json: Path) -> None:
    assert _check(golden_json) == []
    # The recorded cases hold both shapes: v1.31's "not_evaluated" and v1.32+'s absent status.
    golden = json.loads(golden_json.read_text())
    shapes = {json.dumps(f) for gp in golden["pods"] for f in gp.get("filters", {}).values()}
    v131 = golden.get("k8s_version", "").startswith("v1.31")
    assert ('"not_evaluated"' in shapes) == v131


def test_every_golden_node_verdict_in_json() -> None:
    failures = {case_id(c): d for c in all_cases() if (d := _check(c))}
    assert failures == {}
