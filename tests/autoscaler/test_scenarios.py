"""The issue's "Done when" scenarios, end to end through the CLI on fixtures/autoscaler/ (offline dumps):
a group at max, a group with room, a Karpenter NodePool blocked by its limit, a pod Karpenter is already
launching a node for, the autoscaler's own events shown newest first and compared with the replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from kdiagnose.cli import app, dispatch_args

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "autoscaler"
Obj = dict[str, Any]


def _doc(*paths: Path | str) -> Obj:
    res = CliRunner().invoke(app, dispatch_args([*(str(p) for p in paths), "-o", "json"]))
    assert res.exit_code == 1, res.stdout + res.stderr  # the pods stay unschedulable now
    doc: Obj = json.loads(res.stdout)
    return doc


def _human(*paths: Path | str) -> str:
    res = CliRunner().invoke(app, dispatch_args([*(str(p) for p in paths), "--no-color"]))
    return res.stdout


def _pod(doc: Obj, key: str) -> Obj:
    (p,) = [p for p in doc["pods"] if p["pod"] == key]
    return p


def test_group_at_max_gets_raise_the_max_not_scale_by_one() -> None:
    p = _pod(_doc(FIXTURES / "ca-at-max.yaml"), "shop/web-7d4b9c8f6-x2x9q")
    first = p["remedies"][0]
    assert first["kind"] == "raise-max"
    assert first["summary"] == "raise the max of group apps from 3 to 4 (then the autoscaler adds 1 node(s))"
    assert first["commands"] == [
        "eksctl scale nodegroup --cluster <cluster> --name apps --nodes-max 4",
        "# or, for a managed node group, with the AWS CLI:",
        "aws eks update-nodegroup-config --cluster-name <cluster> --nodegroup-name apps --scaling-config maxSize=4",
    ]
    assert first["rollback"] == "eksctl scale nodegroup --cluster <cluster> --name apps --nodes-max 3"
    assert first["safety"] == "safe"
    assert "instance quota" in first["risk"] and "(cost)" in first["risk"]
    assert "eks-apps-4ac6b7d2-1b2c-3d4e-5f60-718293a4b5c6" in first["target"]
    assert first["details"]["autoscaler"] == {
        "source": "cluster-autoscaler",
        "group": "eks-apps-4ac6b7d2-1b2c-3d4e-5f60-718293a4b5c6",
        "current": 3,
        "max": 3,
        "can_add": False,
        "blocked": "at its max size (3 of max 3)",
        "kind": "max",
        "room": "group apps: 3 of 3 (at its max)",
    }
    assert not any(r["summary"].startswith("scale node pool apps by") for r in p["remedies"])


def test_group_with_room_states_the_room() -> None:
    p = _pod(_doc(FIXTURES / "ca-room-text.yaml"), "shop/worker-6c7d8e9f0-w2")
    first = p["remedies"][0]
    assert first["kind"] == "scale-pool"
    # CA's scale-up for this pod is in progress (target 3, 2 registered): wait, not change anything.
    assert first["summary"] == (
        "cluster-autoscaler is already adding 1 node(s) to group apps (registered 2, target 3 of max 5): "
        "wait for them to register"
    )
    assert first["details"]["autoscaler"]["can_add"] is True
    assert first["details"]["autoscaler"]["group"] == "aks-apps-31415926-vmss"  # matched by providerID
    assert first["safety"] == "automatic" and first["commands"] == []  # nothing to apply


def test_group_with_room_and_no_activity_says_the_autoscaler_should_add_it(tmp_path: Path) -> None:
    text = (FIXTURES / "ca-room-text.yaml").read_text()
    idle = text.replace(
        "InProgress (ready=2 cloudProviderTarget=3)", "NoActivity (ready=2 cloudProviderTarget=2)"
    )
    idle = idle.replace(
        "registered=2 longUnregistered=0 cloudProviderTarget=3",
        "registered=2 longUnregistered=0 cloudProviderTarget=2",
    )
    assert idle != text
    (tmp_path / "idle.yaml").write_text(idle)
    p = _pod(_doc(tmp_path / "idle.yaml"), "shop/worker-6c7d8e9f0-w2")
    assert p["remedies"][0]["summary"] == (
        "the autoscaler should add a node of group apps (2 of max 5): wait, or check why it has not"
    )
    assert p["remedies"][0]["details"]["autoscaler"]["room"] == "group apps: 2 of 5 → 3"


def test_karpenter_nodepool_blocked_by_its_limit_names_the_limit() -> None:
    doc = _doc(FIXTURES / "karpenter-limit.yaml")
    p = _pod(doc, "data/report-gen-28912345-x7m4p")
    first = p["remedies"][0]
    assert first["kind"] == "raise-limit"
    # 36 CPU in use + one more node like the NodePool's own (15.89 CPU) = 51.89, rounded up to whole cores.
    assert first["summary"] == "raise spec.limits.cpu of NodePool default from 40 to 52"
    assert first["commands"] == [
        'kubectl patch nodepool default --type merge -p \'{"spec":{"limits":{"cpu":"52"}}}\''
    ]
    assert first["rollback"] == (
        'kubectl patch nodepool default --type merge -p \'{"spec":{"limits":{"cpu":"40"}}}\''
    )
    # The NodePool without nodes is judged as Karpenter would: its taint.
    assert (
        "NodePool gpu: no scale-up: Karpenter: did not tolerate nvidia.com/gpu=true:NoSchedule"
        in p["remedyNotes"]
    )


def test_pod_karpenter_is_launching_for_is_reported_as_such() -> None:
    p = _pod(_doc(FIXTURES / "karpenter-limit.yaml"), "data/api-7f8e9d0c1b-q5w6e")
    assert p["remedies"][0]["summary"].startswith(
        "Karpenter is already launching a node for this pod: nodeclaim default-8xk2q (NodePool default): registering"
    )
    # Disruption budgets as the NodePool states them: Karpenter may consolidate the node later.
    assert p["remedies"][0]["risk"].endswith(
        "(NodePool default disruption: nodes: 10%; nodes: 0 for Underutilized during 0 9 * * mon-fri for 8h)"
    )
    (row,) = [r for r in p["recorded"]["autoscaler"] if r["reason"] == "Nominated"]
    assert (
        row["explanation"]
        == "Karpenter is already launching a node for this pod: wait for it to become Ready"
    )


def test_recorded_shows_every_event_newest_first_aged_against_the_dump() -> None:
    rec = _pod(_doc(FIXTURES / "ca-at-max.yaml"), "shop/web-7d4b9c8f6-x2x9q")["recorded"]
    # The dump's newest timestamp is the CA status time, 2026-11-30 14:02:11.48 UTC.
    assert [(e["who"], e["reason"], e["count"], round(e["ageSeconds"])) for e in rec["events"]] == [
        ("cluster-autoscaler", "NotTriggerScaleUp", 64, 18),  # lastTimestamp 14:01:53
        ("scheduler", "FailedScheduling", 8, 119),  # series.lastObservedTime 14:00:12.118
    ]
    assert round(rec["ageSeconds"]) == 119
    human = _human(FIXTURES / "ca-at-max.yaml")
    assert "unknown ago" not in human
    assert "FailedScheduling event (last seen 1m59s before the dump was taken, 8 time(s))" in human


def test_not_trigger_scale_up_is_compared_with_the_replay_and_agrees_at_max() -> None:
    rec = _pod(_doc(FIXTURES / "ca-at-max.yaml"), "shop/web-7d4b9c8f6-x2x9q")["recorded"]
    (row,) = rec["autoscaler"]
    assert row["reason"] == "NotTriggerScaleUp" and row["agrees"] is True
    assert row["recorded"].endswith("1 max node group size reached")
    assert "a new node of pool apps fits" in row["replayed"] and "at its max size" in row["replayed"]


def test_not_trigger_scale_up_disagreeing_with_the_status_is_shown_side_by_side(tmp_path: Path) -> None:
    # The same dump, but the group's max was raised to 5 after CA wrote its event.
    text = (FIXTURES / "ca-at-max.yaml").read_text()
    raised = text.replace("        maxSize: 3\n", "        maxSize: 5\n")
    assert raised != text
    (tmp_path / "raised.yaml").write_text(raised)
    p = _pod(_doc(tmp_path / "raised.yaml"), "shop/web-7d4b9c8f6-x2x9q")
    (row,) = p["recorded"]["autoscaler"]
    assert row["agrees"] is False
    assert row["explanation"].startswith("cluster-autoscaler skipped the group (max node group size reached)")
    assert "can be added now" in row["replayed"]
    human = _human(tmp_path / "raised.yaml")
    assert "cluster-autoscaler NotTriggerScaleUp vs the replay (differs):" in human
    assert (
        "    recorded: pod didn't trigger scale-up:" in human
        and "    replayed: a new node of pool apps fits" in human
    )


def test_karpenter_failed_scheduling_is_per_nodepool_and_not_taken_for_the_scheduler() -> None:
    rec = _pod(_doc(FIXTURES / "karpenter-limit.yaml"), "data/report-gen-28912345-x7m4p")["recorded"]
    # The scheduler's message, not Karpenter's FailedScheduling (which is newer).
    assert rec["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert rec["agrees"] is True
    rows = {r["replayed"].split(":")[0]: r for r in rec["autoscaler"]}
    assert rows["NodePool default"]["agrees"] is True and rows["NodePool gpu"]["agrees"] is True
    assert [e["who"] for e in rec["events"]] == ["karpenter", "scheduler"]


def test_no_autoscaler_evidence_keeps_scale_by_n_and_says_so() -> None:
    doc = _doc(FIXTURES / "check" / "eks-nodes.yaml", FIXTURES / "check" / "pending-web.yaml")
    first = _pod(doc, "shop/web-7d4b9c8f6-x2x9q")["remedies"][0]
    assert first["summary"] == "scale node pool apps by 1"
    assert "no autoscaler evidence for pool apps" in first["risk"]
    assert first["details"]["autoscaler"]["can_add"] is False


def test_pod_no_nodepool_admits_gets_karpenters_reason_per_nodepool(tmp_path: Path) -> None:
    text = (FIXTURES / "karpenter-limit.yaml").read_text()
    ml = text.replace(
        '  containers: [{name: main, image: "123456789012.dkr.ecr.us-west-2.amazonaws.com/api-7f8e9d0c1b:1.0.4"',
        '  nodeSelector: {team: ml}\n  containers: [{name: main, image: "123456789012.dkr.ecr.us-west-2.amazonaws.com/api-7f8e9d0c1b:1.0.4"',
    )
    assert ml != text
    (tmp_path / "ml.yaml").write_text(ml)
    p = _pod(_doc(tmp_path / "ml.yaml"), "data/api-7f8e9d0c1b-q5w6e")
    assert not [r for r in p["remedies"] if r["kind"] in ("scale-pool", "raise-max", "raise-limit")]
    notes = p["remedyNotes"]
    (default,) = [n for n in notes if n.startswith("pool default: no scale-up:")]
    assert default.endswith(
        "; Karpenter: incompatible requirements, key team, team In [ml] not in team In [data]"
    )
    assert "NodePool gpu: no scale-up: Karpenter: did not tolerate nvidia.com/gpu=true:NoSchedule" in notes


def test_reports_do_not_depend_on_document_order(tmp_path: Path) -> None:
    for name in ("ca-at-max.yaml", "ca-room-text.yaml", "karpenter-limit.yaml"):
        docs = (FIXTURES / name).read_text().split("\n---\n")
        (tmp_path / name).write_text("\n---\n".join(reversed(docs)) + "\n")
        a, b = _doc(FIXTURES / name), _doc(tmp_path / name)
        a.pop("source", None)
        b.pop("source", None)
        assert a == b, name
