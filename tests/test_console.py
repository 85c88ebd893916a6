"""The human report (kdiagnose/report/console.py): semantics, not snapshots.

Reports are built from small Diagnosis/Status objects so each test states exactly what the engine decided.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from kdiagnose.model.objects import Pod
from kdiagnose.report.console import RenderOptions, describe_details, glance, render_text
from kdiagnose.results import PodReport, Remedy, Report
from kdiagnose.scheduler.diagnosis import Diagnosis, PluginScore, Preemption, ScoreBreakdown
from kdiagnose.scheduler.framework import Code, Status

ANSI = re.compile(r"\x1b\[")
CP_TAINT = "node-role.kubernetes.io/control-plane:NoSchedule"
LONG_NODE = "ip-10-0-123-45.us-west-2.compute.internal"


def pod(name: str = "web-1", namespace: str = "default") -> Pod:
    return Pod({"metadata": {"name": name, "namespace": namespace}, "spec": {"containers": []}})


def cpu(requested: int, free: int, alloc: int = 4000) -> Status:
    detail = {"resource": "cpu", "requested": requested, "free": free, "allocatable": alloc}
    return Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit", (detail,))


def taint(text: str) -> Status:
    key_value = text.rsplit(":", 1)[0]
    key, _, value = key_value.partition("=")
    reason = f"node(s) had untolerated taint {{{key}: {value}}}"
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,), "TaintToleration", ({"taint": text},))


def unschedulable(verdicts: dict[str, Status], message: str | None = None, **kw: Any) -> Diagnosis:
    d = Diagnosis(pod=kw.pop("pod", pod()), num_all_nodes=len(verdicts), verdicts=verdicts, **kw)
    d.message = message or f"0/{len(verdicts)} nodes are available: something."
    return d


def report(*prs: PodReport, pools: dict[str, str] | None = None, n_nodes: int = 0) -> Report:
    return Report(
        k8s_version="v1.34.1",
        source="test",
        num_nodes=n_nodes or max((p.diagnosis.num_all_nodes for p in prs), default=0),
        num_pods=len(prs),
        pods=list(prs),
        node_pools=pools or {},
    )


def remedy(summary: str, kind: str = "scale-pool", **kw: Any) -> Remedy:
    return Remedy(kind=kind, summary=summary, **kw)


def text(r: Report, width: int = 80, **kw: Any) -> str:
    return render_text(r, RenderOptions(color=False, width=width, **kw))


def flat(out: str) -> str:
    """The output with line breaks and indents folded: for phrases that may wrap."""
    return " ".join(out.split())


def demo() -> tuple[Report, str]:
    """Two cpu-starved nodes in pool web, one control-plane node with a long taint key."""
    message = (
        "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
        "2 Insufficient cpu. no new claims to deallocate, preemption: 0/3 nodes are available: "
        "2 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    )
    d = unschedulable(
        {"node-a": cpu(1000, 500), "node-c": cpu(1000, 500), LONG_NODE: taint(CP_TAINT)},
        message,
        notes=["not checked: the input has no Service objects"],
    )
    pr = PodReport(
        d,
        remedies=[
            remedy("scale node pool web by 1", unblocks=["web-simulated-1"], risk="costs money"),
            remedy("add a toleration for dedicated=batch:NoSchedule", kind="toleration"),
            remedy("right-size the requests", kind="right-size"),
            remedy("turn the required node affinity into a preferred one", kind="relax-affinity"),
        ],
        remedy_notes=["pool system: no scale-up: control-plane nodes are not autoscaled"],
    )
    return report(pr, pools={"node-a": "web", "node-c": "web", LONG_NODE: "system"}), message


# ---------------------------------------------------------------------------------------------- headline


def test_verdict_cause_and_fix_come_first_then_the_message_wrapped_at_spaces() -> None:
    r, message = demo()
    lines = text(r).splitlines()
    assert lines[0].startswith("Pod default/web-1: UNSCHEDULABLE")
    assert lines[1] == "Cause: 2 rejected by cpu, 1 by taints"
    assert lines[2].startswith("Fix: scale node pool web by 1")
    start = lines.index("Scheduler message:") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("  "))
    assert " ".join(line.strip() for line in lines[start:end]) == message


@pytest.mark.parametrize("width", [pytest.param(80, id="80 columns"), pytest.param(120, id="120 columns")])
def test_every_line_fits_the_width(width: int) -> None:
    r, _ = demo()
    lines = text(r, width).splitlines()
    assert [line for line in lines if len(line) > width] == []


def test_long_taint_keys_and_node_names_are_never_broken() -> None:
    r, _ = demo()
    out = text(r, 80)
    assert any(CP_TAINT in line for line in out.splitlines())
    assert any(LONG_NODE in line for line in out.splitlines())


def test_summary_line_counts_rejections_and_names_the_first_fix() -> None:
    r, _ = demo()
    assert glance(r.pods[0]).startswith("2 rejected by cpu, 1 by taints; fix: scale node pool web by 1")
    lines = text(r, 120).splitlines()
    assert lines[1:3] == [
        "Cause: 2 rejected by cpu, 1 by taints",
        "Fix: scale node pool web by 1 (or 3 other fixes below)",
    ]


# ---------------------------------------------------------------------------------------------- order


def test_sections_come_most_actionable_first() -> None:
    r, _ = demo()
    out = text(r)
    order = [
        "Cause:",
        "Fix:",
        "Scheduler message:",
        "Why 3 of 3 nodes were rejected",
        "What would make it schedulable",
        "Ruled out",
    ]
    positions = [out.index(x) for x in order]
    assert positions == sorted(positions)


def test_remedies_keep_their_rank_and_the_rest_is_counted() -> None:
    r, _ = demo()
    out = text(r)
    firsts = [out.index(f"  {i}. ") for i in (1, 2, 3)]
    assert firsts == sorted(firsts)
    assert "1. [safe] scale node pool web by 1" in out and "3. [safe] right-size the requests" in out
    assert "turn the required" not in out
    assert "… 1 more (--all-remedies)" in out
    assert "4. [safe] turn the required node affinity" in text(r, all_remedies=True)


def test_groups_show_counts_pools_and_a_shared_cause_once() -> None:
    r, _ = demo()
    lines = text(r).splitlines()
    assert "  2 nodes in pool web, NodeResourcesFit: Insufficient cpu" in lines
    assert sum("needs 1 CPU, 0.5 free of 4 allocatable" in line for line in lines) == 1
    assert "      node-a, node-c" in lines
    assert any(line.startswith("  1 node in pool system, TaintToleration:") for line in lines)


# ---------------------------------------------------------------------------------------------- scale


def _big(n: int) -> Report:
    verdicts: dict[str, Status] = {}
    pools: dict[str, str] = {}
    for i in range(n):
        name = f"ip-10-0-{i // 250}-{i % 250}.ec2.internal"
        pools[name] = f"pool-{i % 3}"
        verdicts[name] = cpu(8000, 1000 * (i % 4)) if i % 5 else taint("dedicated=batch:NoSchedule")
    return report(PodReport(unschedulable(verdicts)), pools=pools)


def test_thousands_of_nodes_collapse_into_pool_groups_with_ranges() -> None:
    out = text(_big(3000))
    lines = out.splitlines()
    assert len(lines) < 50
    assert "2400 nodes, NodeResourcesFit: Insufficient cpu" in out
    assert "600 nodes, TaintToleration: node(s) had untolerated taint {dedicated: batch}" in out
    # 2400 cpu nodes over 3 pools of 800; free cpu varies 0..3: one merged cause per pool with the range.
    assert (
        sum("pool pool-" in line and ", 800 nodes: needs 8 CPU, 0 to 3 free of 4" in line for line in lines)
        == 3
    )
    assert all(len(line) <= 80 for line in lines if "nodes are available" not in line)


def test_all_nodes_lists_every_node_with_its_cause() -> None:
    out = text(_big(30), width=200, all_nodes=True)
    assert all(f"ip-10-0-0-{i}.ec2.internal" in out for i in range(30))
    assert out.count("not tolerated") == 6


def test_many_distinct_reasons_merge_per_plugin() -> None:
    verdicts = {f"tenant-{i:02}": taint(f"tenant=t{i:02}:NoSchedule") for i in range(40)}
    out = text(report(PodReport(unschedulable(verdicts))))
    assert "40 nodes, TaintToleration: 40 different reasons" in out
    assert "… and 35 more node(s) with other causes (--all-nodes lists them)" in out
    assert len(out.splitlines()) < 25


# ---------------------------------------------------------------------------------------------- notes


def test_notes_shared_by_several_pods_are_printed_once_at_the_end() -> None:
    note = "not checked: the input has no Service objects"
    a = PodReport(unschedulable({"n1": cpu(2000, 0)}, pod=pod("a"), notes=[note, "only a"]))
    b = PodReport(unschedulable({"n1": cpu(2000, 0)}, pod=pod("b"), notes=[note]))
    out = text(report(a, b))
    assert out.count(note) == 1
    assert out.index(note) > out.index("Pod default/b")
    assert f"- {note} (every pod)" in out
    assert "only a" in out.split("Pod default/b: UNSCHEDULABLE")[0].split("Pod default/a: UNSCHEDULABLE")[1]


def test_replicas_failing_the_same_way_are_shown_once() -> None:
    prs = [
        PodReport(unschedulable({"n1": cpu(2000, 0)}, pod=pod(f"web-{i}")), owner="Deployment default/web")
        for i in range(3)
    ]
    out = text(report(*prs))
    assert out.count("Why 1 of 1 node was rejected") == 1
    assert out.splitlines()[0] == "Deployment default/web: 3 pods UNSCHEDULABLE  (1 node)"
    assert "Each alone (against the bound pods, as its event says): 3 unschedulable, one" in out
    assert "Pods: web-0, web-1, web-2" in out


# ---------------------------------------------------------------------------------------------- other states


def _schedulable() -> Report:
    d = Diagnosis(pod=pod(), num_all_nodes=3, verdicts={"n1": Status(), "n2": Status(), "n3": cpu(9000, 0)})
    d.feasible = ["n1", "n2"]
    for node, fit in (("n1", 60), ("n2", 40)):
        d.scores[node] = ScoreBreakdown(
            node,
            {
                "TaintToleration": PluginScore("TaintToleration", 0, 100, 3),
                "NodeResourcesFit": PluginScore("NodeResourcesFit", 0, fit, 1),
                "ImageLocality": PluginScore("ImageLocality", 0, 0, 1),
            },
            skipped=["VolumeBinding"],
        )
    d.top_nodes, d.chosen = ["n1"], "n1"
    return report(PodReport(d))


def test_a_schedulable_pod_says_where_it_binds_and_why() -> None:
    out = text(_schedulable())
    lines = out.splitlines()
    assert "Next: kube-scheduler would bind it to n1" in lines
    assert "n1 wins with 360 points, 20 ahead of n2 (340), mostly from NodeResourcesFit (+20)." in flat(out)
    row = next(line for line in lines if line.lstrip().startswith("* "))
    assert row.split() == ["*", "n1", "360", "300", "60"]
    assert "Taint=TaintToleration, Fit=NodeResourcesFit" in out
    assert "0 on every shown node: ImageLocality" in out
    assert "skipped at PreScore (contribute 0): VolumeBinding" in out
    assert lines[1] == "Cause: 2 of 3 nodes fit; 1 rejected by cpu"


def test_top_limits_the_score_rows() -> None:
    out = text(_schedulable(), top=1)
    assert [line.split() for line in out.splitlines() if line.endswith(("60", "40"))] == [
        ["*", "n1", "360", "300", "60"]
    ]
    assert "Scores of top 1 of 2 feasible node(s)" in out


def test_a_gated_pod_says_no_attempt_is_made() -> None:
    d = Diagnosis(pod=pod(), num_all_nodes=2)
    d.preenqueue = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("waiting for scheduling gates: [example.com/q]",),
        "SchedulingGates",
    )
    out = text(report(PodReport(d)))
    assert "Pod default/web-1: GATED" in out
    assert "  waiting for scheduling gates: [example.com/q]" in out.splitlines()
    assert "no FailedScheduling event is written" in flat(out)
    assert "Why " not in out
    # The command that lists them names the pod (without a name the jsonpath printed nothing), whole.
    assert "  kubectl get pod web-1 -n default -o jsonpath='{.spec.schedulingGates}'" in out.splitlines()


def test_preemption_names_the_node_and_the_victims() -> None:
    d = unschedulable({"n1": cpu(2000, 0)})
    d.preemption = Preemption("n1", [pod("low-1"), pod("low-2")], pdb_violations=1)
    out = flat(text(report(PodReport(d))))
    assert "kube-scheduler will preempt 2 pods on n1 and retry there" in out
    assert "evict 2 lower-priority pods on n1 (default/low-1, default/low-2)" in out
    assert "violating 1 PodDisruptionBudget" in out
    assert "What would make it schedulable" not in out  # preemption is the way, said once


# ---------------------------------------------------------------------------------------------- safety


def test_no_escape_codes_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    r, _ = demo()
    assert not ANSI.search(render_text(r, RenderOptions(color=True, width=80)))
    monkeypatch.delenv("NO_COLOR")
    assert ANSI.search(render_text(r, RenderOptions(color=True, width=80)))


def test_object_names_are_neither_markup_nor_terminal_control() -> None:
    p = pod("[bold red]x[/bold red]")
    d = unschedulable({"[link=http://e]n[/link]": cpu(2000, 0), "evil\x1b[2Jnode": cpu(2000, 0)}, pod=p)
    out = render_text(report(PodReport(d)), RenderOptions(color=True, width=120))
    assert "[bold red]x[/bold red]" in out
    assert "[link=http://e]n[/link]" in out
    assert "\x1b[2J" not in out and "evil\\x1b[2Jnode" in out


@pytest.mark.parametrize(
    ("details", "want"),
    [
        pytest.param(
            (
                {
                    "resource": "memory",
                    "requested": 6 * 2**30,
                    "free": 4394396 * 1024,
                    "allocatable": 14880156 * 1024,
                },
            ),
            "needs 6Gi memory, 4.19Gi free of 14.19Gi allocatable",
            id="odd memory amounts in readable binary units",
        ),
        pytest.param(
            ({"resource": "memory", "requested": 2**30, "free": 2**30 - 1024, "allocatable": 2**31},),
            "needs 1Gi memory, 1048575Ki free of 2Gi allocatable",
            id="rounding never hides a shortfall",
        ),
        pytest.param(
            (
                {
                    "constraint": "zone maxSkew=1",
                    "topologyKey": "zone",
                    "domain": "a",
                    "matchingPods": 2,
                    "selfMatch": 1,
                    "globalMinimum": 1,
                    "skew": 2,
                    "maxSkew": 1,
                    "eligibleDomains": 2,
                    "minDomains": 1,
                },
            ),
            "skew would be 2 > maxSkew 1 in zone=a (2 matching pod(s) there, minimum 1)",
            id="topology spread in a sentence",
        ),
        pytest.param(
            (
                {
                    "term": "topologyKey=h selector=[app In [web]]",
                    "domain": "h=n1",
                    "matchingPods": 1,
                    "pods": ["d/w"],
                },
            ),
            "anti-affinity term topologyKey=h selector=[app In [web]]: 1 matching pod(s) in h=n1 (d/w)",
            id="anti-affinity names the pod in the way",
        ),
        pytest.param(({"claims": ["uploads"]},), "claim(s) uploads", id="unbound claims"),
    ],
)
def test_details_in_plain_words(details: tuple[dict[str, Any], ...], want: str) -> None:
    assert describe_details(details) == want


def test_a_field_path_longer_than_the_line_breaks_after_a_dot() -> None:
    from kdiagnose.report.console_layout import _wrap

    path = "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    lines = _wrap(f"field {path} (k8s/web.yaml:17:13)", 80, "     ", "       ")
    assert lines[:2] == [
        "     field spec.template.spec.affinity.podAntiAffinity.",
        "       requiredDuringSchedulingIgnoredDuringExecution[0] (k8s/web.yaml:17:13)",
    ]


def test_a_node_lifecycle_taint_is_named_in_the_cause() -> None:
    from kdiagnose.report.console_summary import rejections

    def taint(t: str) -> Status:
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("node(s) had untolerated taint(s)",),
            "TaintToleration",
            ({"taint": t},),
        )

    d = Diagnosis(pod=pod(), num_all_nodes=5)
    d.verdicts = {
        "a": taint("node.kubernetes.io/unreachable:NoSchedule"),
        "b": taint("node.kubernetes.io/unreachable:NoSchedule"),
        "c": taint("node.kubernetes.io/not-ready:NoSchedule"),
        "d": taint("dedicated=batch:NoSchedule"),
        "e": taint("node.kubernetes.io/unschedulable:NoSchedule"),
    }
    # "taints" alone hid that the nodes are down (or cordoned).
    assert (
        rejections(d)
        == "2 rejected by unreachable taint, 1 by cordon taint, 1 by not-ready taint, 1 by taints"
    )


def test_a_column_that_would_leave_a_stub_on_its_first_line_is_stacked() -> None:
    import io

    from rich.console import Console

    from kdiagnose.report.console_layout import Out

    def render(rows: list[list[str]]) -> list[str]:
        buf = io.StringIO()
        Out(Console(file=buf, width=80, no_color=True, color_system=None)).columns(rows, 4)
        return buf.getvalue().splitlines()

    long_taint = "taint node-role.kubernetes.io/control-plane:NoSchedule not tolerated"
    # Side by side, "taint" would sit alone after the pool column and the key start the next line.
    assert render([["control-plane", "system", long_taint], ["node-b", "web", "taint a=b:NoSchedule"]]) == [
        "    control-plane  system",
        "        " + long_taint,
        "    node-b  web",
        "        taint a=b:NoSchedule",
    ]
    # Cells that start their first line fully stay in columns.
    assert render([["node-a", "web", "needs 1 CPU, 0.5 free of 4 allocatable"]]) == [
        "    node-a  web  needs 1 CPU, 0.5 free of 4 allocatable"
    ]


def test_nodes_never_filtered_say_why_in_words() -> None:
    from kdiagnose.report.console_summary import rejections

    d = Diagnosis(pod=pod(), num_all_nodes=3)
    d.verdicts = {"node-2": cpu(500, 0)}
    d.not_evaluated = ["node-1", "node-3"]
    d.absent = Status.unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]")
    assert rejections(d) == "1 rejected by cpu, 2 excluded by node affinity/selector"
    # The nominated node fits: kube-scheduler filters no other node (not a PreFilter exclusion).
    d = Diagnosis(pod=pod(), num_all_nodes=3, nominated_node_used=True)
    d.not_evaluated = ["node-1", "node-3"]
    assert rejections(d) == "2 not evaluated (the nominated node fits)"


def test_dra_postfilter_words_are_explained_and_the_failing_request_is_named() -> None:
    """ ". not found" after a PreFilter rejection and DRA's "still not schedulable" read like errors of the
    input: the report says what they mean; a node that cannot allocate a claim names the request, its
    DeviceClass, what it needs and what the node has."""
    from pathlib import Path

    from kdiagnose.load.dump import load_snapshot
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.report.console import RenderOptions, render_text
    from kdiagnose.versions import dialect_for

    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "golden"
    snap, _ = load_snapshot([str(fixtures / "volumes-pvc-unbound-immediate.yaml")], dialect_for("v1.37.2"))
    (pr,) = diagnose_snapshot(snap).pods
    assert pr.diagnosis.message.endswith(". not found")
    (note,) = [n for n in pr.diagnosis.notes if "not found" in n]
    assert "because VolumeBinding rejected the pod at PreFilter" in note
    assert "preemption was not tried" in note

    snap, _ = load_snapshot([str(fixtures / "dra-template-gpus-on-some-nodes.yaml")], dialect_for("v1.34.12"))
    pr = next(p for p in diagnose_snapshot(snap).pods if p.diagnosis.pod.key == "ml/llm-pretrain-0")
    assert any(
        n.startswith('"still not schedulable" is DynamicResources\' PostFilter') for n in pr.diagnosis.notes
    )
    flat = " ".join(render_text(diagnose_snapshot(snap), RenderOptions(color=False, width=80)).split())
    assert (
        "1 node: claim ml/llm-pretrain-0-gpu request gpu needs 4 device(s): 4 device(s) match DeviceClass "
        "gpu.example.com, 2 of them unallocated gpu-a100-1"
    ) in flat
    assert (
        "claim ml/llm-pretrain-0-gpu request gpu needs 4 device(s): no device on the node matches DeviceClass "
        "gpu.example.com and the request's selectors cpu-1, cpu-2, gpu-l4-1"
    ) in flat


def test_postfilter_notes_are_report_descriptions_not_replay_text() -> None:
    """The words explaining DRA's PostFilter messages live with the report's descriptions (describe.py);
    the replay only asks for them after PostFilter, so the notes and their order are as before."""
    from pathlib import Path

    import kdiagnose.scheduler.runner as runner
    from kdiagnose.scheduler.describe import postfilter_notes

    d = Diagnosis(pod=pod(), num_all_nodes=1)
    assert postfilter_notes(d) == []
    d.postfilter = Status(Code.ERROR, ("not found",), "DynamicResources")
    d.prefilter = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("x",), "VolumeBinding")
    (note,) = postfilter_notes(d)
    assert note.startswith('the message ends in "not found": kube-scheduler\'s DynamicResources PostFilter')
    assert "because VolumeBinding rejected the pod at PreFilter" in note
    d.postfilter = Status(Code.UNSCHEDULABLE, ("still not schedulable",), "DynamicResources")
    (note,) = postfilter_notes(d)
    assert note.startswith('"still not schedulable" is DynamicResources\' PostFilter: it found no allocated')
    source = Path(runner.__file__).read_text()
    assert "still not schedulable" not in source and "preemption was not tried" not in source


def test_dra_no_new_claims_to_deallocate_is_explained_from_v134_to_v136() -> None:
    """v1.34 to v1.36 DynamicResources' PostFilter answers "no new claims to deallocate" for a pod with no
    ResourceClaim (dynamicresources.go: state.claims is empty): in every such message, and no cause."""
    from pathlib import Path

    from kdiagnose.load.dump import load_snapshot
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.report.console import RenderOptions, render_text
    from kdiagnose.versions import dialect_for

    fixture = (
        Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "hostports-same-port-conflict.yaml"
    )
    for version, explained in (("v1.34.12", True), ("v1.36.0", True), ("v1.37.2", False)):
        snap, _ = load_snapshot([str(fixture)], dialect_for(version))
        report = diagnose_snapshot(snap)
        (pr,) = report.pods
        assert ("no new claims to deallocate" in (pr.diagnosis.message or "")) is explained, version
        notes = [
            n for n in pr.diagnosis.notes if n.startswith('"no new claims to deallocate" is DynamicResources')
        ]
        assert len(notes) == int(explained), version
        if explained:
            assert "the pod uses no ResourceClaim" in notes[0] and "It is not an error" in notes[0]
            flat = " ".join(render_text(report, RenderOptions(color=False, width=80)).split())
            assert '"no new claims to deallocate" is DynamicResources\' PostFilter: the pod uses no' in flat
