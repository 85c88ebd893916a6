"""Root causes for missing objects, and PreEnqueue waits worded for what they are (fixture header:
fixtures/remedies/misspelled-references.yaml). Expected values come from the scenario, not from the code."""

from __future__ import annotations

import json
import shlex

from typer.testing import CliRunner

from kdiagnose.cli import app
from kdiagnose.load.files import load_paths
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.remedies.engine import compute_remedies
from kdiagnose.results import Remedy
from kdiagnose.scheduler.engine import Scheduler
from kdiagnose.versions import dialect_for
from tests.remedies.helpers import FIXTURES

SCENARIO = FIXTURES / "remedies" / "misspelled-references.yaml"


def _remedies(pod: str) -> tuple[list[Remedy], list[str], str]:
    loaded = load_paths([str(SCENARIO)])
    snap = build_snapshot(loaded.objects, dialect_for(None), list_kinds=loaded.list_kinds)
    sched = Scheduler(snap)
    d = sched.diagnose(next(p for p in snap.pending if p.key == pod))
    found, notes = compute_remedies(snap, sched, d)
    return found, notes, d.preenqueue.plugin if d.preenqueue else ""


def test_a_misspelled_template_is_named_with_a_suggestion_and_fixed_by_replay() -> None:
    found, _, held_by = _remedies("ml/llm-finetune-0")
    assert held_by == "DynamicResources"
    first = found[0]
    assert first.kind == "fix-reference"
    assert first.summary.startswith(
        "ResourceClaimTemplate ml/a100-piar does not exist (referenced by "
        "spec.resourceClaims[0].resourceClaimTemplateName); did you mean a100-pair"
    )
    # With a100-pair the pod wants 2 A100s: only gpu-a100-1 has 2 free.
    assert first.unblocks == ["gpu-a100-1"]
    # A StatefulSet (OrderedReady) waits on its Pending pod: patch the template, then delete the pod.
    cmd, delete = first.commands
    assert delete == "kubectl delete pod/llm-finetune-0 -n ml"
    words = shlex.split(cmd)
    assert words[:6] == ["kubectl", "patch", "statefulset/llm-finetune", "-n", "ml", "--type"]
    assert json.loads(words[-1]) == [
        {
            "op": "replace",
            "path": "/spec/template/spec/resourceClaims/0/resourceClaimTemplateName",
            "value": "a100-pair",
        }
    ]


def test_a_missing_claim_with_no_close_name_is_to_be_created() -> None:
    found, _, held_by = _remedies("ml/embed-0")
    assert held_by == "DynamicResources"
    (only,) = found
    assert only.kind == "create-object"
    assert only.summary == (
        "ResourceClaim ml/embedder-gpu does not exist (referenced by spec.resourceClaims[0].resourceClaimName): "
        "create it"
    )
    assert only.verify == "kubectl get resourceclaims/embedder-gpu -n ml  # exists"


def test_a_misspelled_pvc_is_named_with_a_suggestion() -> None:
    found, _, _ = _remedies("ml/notebook-0")
    first = found[0]
    assert first.kind == "fix-reference"
    assert "PersistentVolumeClaim ml/notebok-home does not exist" in first.summary
    assert "did you mean notebook-home?" in first.summary
    assert first.commands == ["kubectl replace --force -f pod.yaml"]  # a bare pod: its manifest changes


def _human(pod: str) -> str:
    result = CliRunner().invoke(app, ["diagnose", str(SCENARIO), "--pod", pod], env={"COLUMNS": "200"})
    return result.stdout


def test_a_pod_held_by_dra_is_never_called_gated() -> None:
    out = _human("ml/llm-finetune-0")
    assert "GATED" not in out and "gate" not in out.lower().replace("schedulinggates", "")
    assert "WAITING" in out
    assert (
        "held at PreEnqueue by DynamicResources: kube-scheduler waits for every ResourceClaim it references to exist"
        in out
    )
    assert "No scheduling attempt is made while DynamicResources waits at PreEnqueue" in out
    doc = json.loads(
        CliRunner()
        .invoke(app, ["diagnose", str(SCENARIO), "--pod", "ml/llm-finetune-0", "-o", "json"])
        .stdout
    )
    (p,) = doc["pods"]
    assert p["gates"] == []
    assert p["preenqueueWaitsFor"].startswith("every ResourceClaim it references to exist")


def test_a_gated_pod_is_still_gated(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "g.yaml"
    f.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: g, namespace: default}\n"
        "spec: {schedulingGates: [{name: example.com/quota}], containers: [{name: c, image: i}]}\n"
    )
    out = CliRunner().invoke(app, ["diagnose", str(f)], env={"COLUMNS": "200"}).stdout
    assert "GATED" in out and "waiting for scheduling gates: [example.com/quota]" in out


def test_live_mode_does_not_ask_whether_a_scheduler_runs_for_a_pod_held_at_preenqueue() -> None:
    from kdiagnose.commands.live import _held_text
    from kdiagnose.recorded import triage_pod

    loaded = load_paths([str(SCENARIO)])
    snap = build_snapshot(loaded.objects, dialect_for(None), list_kinds=loaded.list_kinds)
    d = Scheduler(snap).diagnose(next(p for p in snap.pending if p.key == "ml/llm-finetune-0"))
    raw = next(
        o.obj
        for o in loaded.objects
        if o.obj.get("kind") == "Pod" and o.obj["metadata"]["name"] == "llm-finetune-0"
    )
    # The pod has no PodScheduled condition (no attempt is ever made) and is an hour old.
    raw = {**raw, "status": {"phase": "Pending"}}
    tri = triage_pod(raw, now=1_750_242_470.0 + 3600)
    assert "is a scheduler" in tri.text  # what triage alone would say
    text = _held_text(d, tri.text)
    assert "running?" not in text
    assert text.startswith(
        "no PodScheduled condition yet: expected, kube-scheduler holds the pod at PreEnqueue (DynamicResources)"
    )
