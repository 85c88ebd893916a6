"""The human report's layout at 80 columns, one golden file per layout (tests/layout/*.txt).

The expected files were written by reading the output, not regenerated blindly: when a layout changes
on purpose, read the new output critically before replacing a file (`KDIAGNOSE_WRITE_LAYOUT=1`).
The clusters are built in tests/layout/cluster.py; their recorded events are worded as the real
scheduler words them (the golden fixtures' messages).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot, partial_dump_warnings
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report.console import RenderOptions, render_text
from kdiagnose.report.json import report_document
from kdiagnose.results import Report
from kdiagnose.versions import dialect_for
from tests.layout import cluster

HERE = Path(__file__).parent / "layout"
ROOT = Path(__file__).resolve().parent.parent
# A line may pass 80 columns only when it is a command meant to be copied whole.
COMMAND = re.compile(r"^\s*(kubectl|eksctl|gcloud|az|aws|helm)\s")


def _report(objs: list[dict[str, Any]], **kw: Any) -> Report:
    snap = build_snapshot([RawObject(o, "dump.yaml") for o in objs], dialect_for("v1.34.1"), admit=True)
    return diagnose_snapshot(snap, source="dump.yaml", **kw)


def _text(report: Report, **kw: Any) -> str:
    return render_text(report, RenderOptions(color=False, width=80, **kw))


def _golden(name: str, text: str) -> None:
    path = HERE / f"{name}.txt"
    if os.environ.get("KDIAGNOSE_WRITE_LAYOUT"):
        path.write_text(text)
    assert text == path.read_text()


def _check_text() -> str:
    from kdiagnose.gate.formats.text import render
    from kdiagnose.gate.locate import PathBase
    from kdiagnose.gate.placement import load_workloads, run_gate
    from kdiagnose.load.dump import load_snapshot

    fix = ROOT / "fixtures" / "check"
    snap, _ = load_snapshot([str(fix / "cluster-two-nodes.yaml")], dialect_for("v1.34.1"))
    workloads, other = load_workloads([str(fix / "web-anti-affinity.manifests.yaml")])
    for w in workloads:
        w.source = "k8s/web.yaml"  # a repo-relative path, as CI shows it
    result = run_gate(snap, workloads, ignored_kinds=other, snapshot_source="cluster.yaml")
    # Relative to the working directory, as --path-base . shows it: not to a git work tree around it (an
    # exported copy of this repository has none; a copy nested in another checkout has a different one).
    result.paths = PathBase(".")
    return render(result, width=80)


LAYOUTS = {
    "one-pod": lambda: _text(_report(cluster.one_pod())),
    "one-owner": lambda: _text(_report(cluster.one_owner(60))),
    "many-owners": lambda: _text(_report(cluster.many_owners())),
    "many-owners-summary": lambda: _text(_report(cluster.many_owners()), summary=True),
    "bound-pod": lambda: _text(_report(cluster.many_owners(), pods=["kube-system/agent-8k2lp"])),
    "check": _check_text,
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_layout_matches_its_golden_file(name: str) -> None:
    _golden(name, LAYOUTS[name]())


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_no_line_but_a_command_exceeds_80_columns(name: str) -> None:
    long = [line for line in LAYOUTS[name]().splitlines() if len(line) > 80 and not COMMAND.match(line)]
    assert long == []


@pytest.mark.parametrize(
    ("name", "verdict", "cause", "fix"),
    [
        pytest.param(
            "one-pod",
            "Pod shop/report-7d9f8c6b5-x2x9z: UNSCHEDULABLE",
            "Cause: 2 rejected by cpu, 1 by taints",
            "Fix: scale node pool general by 1",
            id="one pod",
        ),
        pytest.param(
            "one-owner",
            "Deployment shop/web: 60 pods ONLY 16 FIT TOGETHER",
            "Cause: each fits alone, 16 of 60 together; then 2 rejected by cpu, 1 by taints",
            "Fix: scale node pool general by",
            id="60 replicas of one Deployment",
        ),
        pytest.param(
            "bound-pod",
            "Pod kube-system/agent-8k2lp: BOUND",
            "Cause: container agent is waiting: ImagePullBackOff",
            "Fix: not a scheduling problem: kubectl describe pod agent-8k2lp -n kube-system",
            id="a bound pod stuck pulling its image",
        ),
    ],
)
def test_the_entry_starts_with_verdict_cause_and_fix(name: str, verdict: str, cause: str, fix: str) -> None:
    lines = LAYOUTS[name]().splitlines()
    assert lines[0].startswith(verdict)
    assert lines[1].startswith(cause)
    # A long cause wraps (continuation lines indented by two): the fix is the next unindented line.
    assert next(line for line in lines[2:] if not line.startswith("  ")).startswith(fix)


def test_many_owners_start_with_the_count_then_the_worst_owner_verdict_cause_and_fix() -> None:
    lines = LAYOUTS["many-owners"]().splitlines()
    assert lines[0] == "11 pods in 4 entries (3 owners with several): 5 unschedulable, 6 schedulable"
    head = " ".join(" ".join(lines[1:4]).split())
    assert head.startswith(
        "UNSCHEDULABLE Deployment shop/api (5 pods): 2 rejected by cpu, 1 by taints; fix: scale"
    )


def test_sixty_replicas_of_one_deployment_are_one_owner_entry() -> None:
    out = LAYOUTS["one-owner"]()
    assert out.count("Deployment shop/web: 60 pods") == 1
    assert "Pod shop/web-" not in out  # no entry per replica
    assert "16 of 60 would fit if scheduled one after another (ip-10-64-76-63 8," in out
    assert "Each alone (against the bound pods, as its event says): 60 schedulable" in out


def test_summary_is_one_line_per_owner() -> None:
    out = LAYOUTS["many-owners-summary"]()
    overview = out.split("\n\n")[0].splitlines()
    entries = [line for line in overview if re.match(r"^  \S", line)]
    assert [e.split("  ")[2].split(":")[0] for e in entries] == [
        "Deployment shop/api (5 pods)",
        "Pod default/debug-shell",
        "Job batch/nightly (2 pods)",
        "StatefulSet shop/queue (3 pods)",
    ]


def test_each_pods_json_diagnosis_is_what_it_is_alone() -> None:
    """Grouping and the placement one after another add an `owners` entry; no pod's own document changes:
    a replica's document in the whole report equals its document when it is the only pod asked for."""
    whole = report_document(_report(cluster.one_owner(5)))
    alone = report_document(_report(cluster.one_owner(5), pods=["shop/web-7d9f8c6b5-00003"]))
    (mine,) = [p for p in whole["pods"] if p["pod"] == "shop/web-7d9f8c6b5-00003"]
    assert mine == alone["pods"][0]
    (owner,) = whole["owners"]
    assert (owner["owner"], owner["total"], owner["fitOneAfterAnother"]) == ("Deployment shop/web", 5, 5)


def test_a_recorded_event_is_aged_from_the_dumps_own_time() -> None:
    out = LAYOUTS["one-pod"]()
    assert "FailedScheduling event (last seen 4m before the dump was taken, 7 time(s)):" in out
    assert "unknown ago" not in out


def _snap(namespaces: list[str], pod_namespaces: list[str]) -> Any:
    objs: list[dict[str, Any]] = [cluster.node("n1")]
    objs += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces]
    objs += [
        cluster.pod(f"p{i}", namespace=pod_namespaces[i % len(pod_namespaces)], node_name="n1", cpu="1m")
        for i in range(30)
    ]
    return build_snapshot([RawObject(o, "d.yaml") for o in objs], dialect_for("v1.34.1"))


@pytest.mark.parametrize(
    ("namespaces", "pod_namespaces", "warned"),
    [
        pytest.param(
            ["shop"], ["shop"], False, id="Namespace objects exactly those with pods: the whole cluster"
        ),
        pytest.param([], ["shop"], True, id="no Namespace objects and pods of one namespace: warned"),
        pytest.param(
            ["shop", "kube-system", "web"], ["shop"], True, id="namespaces without pods listed: warned"
        ),
    ],
)
def test_partial_dump_warning(namespaces: list[str], pod_namespaces: list[str], warned: bool) -> None:
    warnings = partial_dump_warnings(_snap(namespaces, pod_namespaces))
    assert any("without -A" in w for w in warnings) is warned


# Real scenarios whose remedies carry long comments (rollback, YAML patch headers, verify remarks), long
# node names, or a message over 1024 bytes.
FIXTURE_CASES = [
    "demo/cluster.yaml",
    "golden/preemption-daemonset-node-critical.yaml",
    "golden/cluster-kind-ingress-control-plane.yaml",
    "golden/cluster-eks-large-mixed.yaml",
    "golden/features/ndf-restart-all-containers.yaml",
    "golden/edge-message-over-1024.yaml",
    "remedies/arch-gpu.yaml",
]


@pytest.mark.parametrize("case", FIXTURE_CASES)
def test_fixture_reports_fit_80_columns_and_keep_the_message_word_for_word(case: str) -> None:
    from typer.testing import CliRunner

    from kdiagnose.cli import app

    path = str(ROOT / "fixtures" / case)
    env = {"COLUMNS": "80", "NO_COLOR": "1"}
    human = CliRunner().invoke(app, ["diagnose", path], env=env).stdout
    long = [line for line in human.splitlines() if len(line) > 80 and not COMMAND.match(line)]
    assert long == []
    # The scheduler's message is wrapped at spaces only: the words, in order, are the recorded text.
    doc = json.loads(CliRunner().invoke(app, ["diagnose", path, "-o", "json"], env=env).stdout)
    flat = " ".join(human.split())
    for pod in doc["pods"]:
        if pod.get("message"):
            assert pod["message"][:1024].rsplit(" ", 1)[0] in flat, pod["pod"]


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_cause_and_fix_are_wrapped_never_cut(name: str) -> None:
    """An SRE reads the whole cause and fix at 80 columns: continuation lines hang by two, nothing ends
    in an ellipsis, and a kubectl command is never split."""
    lines = LAYOUTS[name]().splitlines()
    for i, line in enumerate(lines):
        if not line.startswith(("Cause: ", "Fix: ", "Next: ", "Risky fix: ")):
            continue
        block = [line] + [x for x in _continuation(lines[i + 1 :])]
        assert not any(x.endswith("…") for x in block), block
        for x in block:
            if "kubectl " in x:
                assert re.search(r"kubectl \S+ \S+", x), block  # the command stays on one line


def _continuation(lines: list[str]) -> list[str]:
    out = []
    for x in lines:
        if not x.startswith("  ") or x.startswith("   "):
            break
        out.append(x)
    return out


def test_a_long_cause_is_printed_whole() -> None:
    out = LAYOUTS["many-owners"]()
    assert (
        "Cause: it fits, yet is still Pending: no scheduler has picked it up: no\n"
        '  PodScheduled condition after 10m; is a scheduler named "default-scheduler"\n'
        "  running?\n"
        "Next: kube-scheduler would bind it to ip-10-64-80-12 (2 of 3 nodes fit; 1\n"
        "  rejected by taints)\n"
    ) in out


def test_a_fix_whose_command_does_not_fit_puts_the_command_whole_on_its_own_line() -> None:
    import io

    from rich.console import Console

    from kdiagnose.report.console import _label_line
    from kdiagnose.report.console_layout import Out

    buf = io.StringIO()
    out = Out(Console(file=buf, width=80, no_color=True, highlight=False, markup=False, emoji=False))
    cmd = "kubectl describe pod agent-with-a-very-long-generated-name-8k2lp -n kube-system-monitoring"
    _label_line(out, "Fix", f"not a scheduling problem: {cmd}", "bold")
    assert buf.getvalue().splitlines() == ["Fix: not a scheduling problem:", f"  {cmd}"]


def test_a_summary_of_one_pod_is_singular() -> None:
    out = _text(_report(cluster.one_pod()), summary=True)
    assert out.splitlines()[0].startswith("1 pod in 1 entry: 1 unschedulable")
