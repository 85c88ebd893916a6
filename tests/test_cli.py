"""The command line: exit codes, dispatch of bare paths, output formats, errors, lazy imports, the console."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kdiagnose import __version__
from kdiagnose.cli import app, dispatch_args
from kdiagnose.exitcodes import ExitCode
from kdiagnose.model.objects import Node, Pod
from kdiagnose.model.pools import pool_of
from kdiagnose.pipeline import parse_selector
from kdiagnose.report.console import RenderOptions, describe_details, render_text
from kdiagnose.results import PodReport, Report
from kdiagnose.scheduler.diagnosis import Diagnosis
from kdiagnose.scheduler.framework import Code, Status

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")
ANSI = re.compile(r"\x1b\[")


def run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args, env=env)
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path: Path, name: str, docs: list[dict[str, Any]]) -> str:
    p = tmp_path / name
    p.write_text("---\n".join(json.dumps(d) + "\n" for d in docs))
    return str(p)


def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


# ---------------------------------------------------------------------------------------------- exit codes


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(["diagnose", DEMO], 1, id="a dump with an unschedulable pod exits 1"),
        pytest.param(
            ["diagnose", DEMO, "--pod", "default/hello-web-small"], 0, id="only a schedulable pod exits 0"
        ),
        pytest.param(["diagnose", DEMO, "-l", "app=nothing"], 0, id="no pod selected exits 0"),
        pytest.param(["diagnose", DEMO, "-o", "xml"], 2, id="an unknown output format is a usage error"),
        pytest.param(
            ["diagnose", DEMO, "--k8s-version", "v1.20"], 2, id="an unsupported version is a usage error"
        ),
        pytest.param(
            ["diagnose", DEMO, "--k8s-version", "banana"], 2, id="an invalid version is a usage error"
        ),
        pytest.param(["diagnose", DEMO, "--frobnicate"], 2, id="an unknown option is a usage error"),
        pytest.param(["diagnose", DEMO, "-l", "a in (x"], 2, id="an invalid selector is a usage error"),
        pytest.param(
            ["diagnose", DEMO, "--pod", "default/ghost"],
            2,
            id="a named pod missing from the input is a usage error: exit 2",
        ),
        pytest.param(["diagnose", "/nonexistent/dump.yaml"], 3, id="a missing file exits 3"),
    ],
)
def test_exit_codes(args: list[str], want: int) -> None:
    code, _, err = run(args)
    assert code == want, err


def test_errors_are_one_line_on_stderr() -> None:
    code, _, err = run(["diagnose", DEMO, "--k8s-version", "v1.40"])
    assert code == 2
    assert err.strip().count("\n") == 0 and err.startswith("kdiagnose: error: unsupported Kubernetes version")


def test_a_release_older_than_v131_is_refused() -> None:
    code, _, err = run(["diagnose", DEMO, "--k8s-version", "v1.30.14"])
    assert code == 2
    assert err.strip() == (
        "kdiagnose: error: Kubernetes v1.30.14 is older than v1.31, the oldest release kdiagnose replays "
        "(it knows v1.31-v1.37)"
    )


def _with_kubelets(tmp_path: Path, versions: dict[str, str]) -> str:
    docs = list(yaml.safe_load_all(Path(DEMO).read_text()))
    for d in docs:
        if d and d.get("kind") == "Node" and d["metadata"]["name"] in versions:
            d.setdefault("status", {})["nodeInfo"] = {"kubeletVersion": versions[d["metadata"]["name"]]}
    out = tmp_path / "dump.yaml"
    out.write_text(yaml.safe_dump_all(docs))
    return str(out)


def test_offline_release_is_inferred_from_the_newest_kubelet(tmp_path: Path) -> None:
    # node-b's kubelet is the newest minor: the control plane is at least v1.35, so v1.35's newest patch.
    path = _with_kubelets(tmp_path, {"node-a": "v1.33.5", "node-b": "v1.35.1-eks-4f2", "node-c": "v1.34.9"})
    code, out, _ = run(["diagnose", path, "-o", "json"])
    doc = json.loads(out)
    assert code == 1 and doc["kubernetesVersion"] == "v1.35.8"
    assert doc["kubernetesVersionReason"] == (
        "inferred from the nodes: node node-b runs kubelet v1.35.1-eks-4f2, and the control plane is never "
        "older than its kubelets"
    )
    _, human, _ = run(["diagnose", path, "--no-color"])
    flat = " ".join(human.split())
    assert "replayed as v1.35.8: inferred from the nodes: node node-b runs kubelet v1.35.1-eks-4f2" in flat
    # --k8s-version always wins, and the human report then says nothing more about it.
    code, out, _ = run(["diagnose", path, "-o", "json", "--k8s-version", "v1.33"])
    doc = json.loads(out)
    assert doc["kubernetesVersion"] == "v1.33.3" and doc["kubernetesVersionReason"] == "--k8s-version v1.33"


def test_offline_kubelet_newer_than_known_replays_the_newest_with_a_warning(tmp_path: Path) -> None:
    path = _with_kubelets(tmp_path, {"node-a": "v1.38.0"})
    _, out, _ = run(["diagnose", path, "-o", "json"])
    doc = json.loads(out)
    assert doc["kubernetesVersion"] == "v1.37.2"
    assert any("v1.38.0" in w and "v1.37.2" in w for w in doc["warnings"])


def test_unexpected_exceptions_are_an_internal_error_line_and_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    import kdiagnose.pipeline

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("kaput")

    monkeypatch.setattr(kdiagnose.pipeline, "diagnose_snapshot", boom)
    code, _, err = run(["diagnose", DEMO])
    assert code == 3
    assert (
        err.strip() == "kdiagnose: internal error: RuntimeError: kaput (run with --debug for the traceback)"
    )
    code, _, err = run(["diagnose", DEMO, "--debug"])
    assert code == 3 and "Traceback" in err


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        pytest.param(["dump.yaml"], ["diagnose", "dump.yaml"], id="a bare path means diagnose"),
        pytest.param(
            ["-o", "json", "d/"], ["diagnose", "-o", "json", "d/"], id="options before the path mean diagnose"
        ),
        pytest.param(["-"], ["diagnose", "-"], id="stdin means diagnose"),
        pytest.param(["diagnose", "x"], ["diagnose", "x"], id="an explicit subcommand is kept"),
        pytest.param(["--version"], ["--version"], id="root options are kept"),
        pytest.param(["--help"], ["--help"], id="help is kept"),
        pytest.param([], [], id="no arguments show help"),
    ],
)
def test_dispatch_of_bare_paths(argv: list[str], want: list[str]) -> None:
    assert dispatch_args(argv) == want


def test_bare_path_through_the_console_script_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kdiagnose.cli", DEMO, "--no-color"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector" in proc.stdout


def test_version() -> None:
    code, out, _ = run(["--version"])
    assert code == 0 and out.strip() == f"kdiagnose {__version__}"


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\nfrom kdiagnose.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'rich', 'yaml', 'yaml_rs', 'orjson')]\n"
        "print('HEAVY', heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert "HEAVY []" in proc.stdout, proc.stdout + proc.stderr


# ---------------------------------------------------------------------------------------------- formats


def test_json_document() -> None:
    code, out, _ = run(["diagnose", DEMO, "-o", "json"])
    assert code == 1
    doc = json.loads(out)
    assert doc["apiVersion"] == "kdiagnose/v1"
    # The demo's nodes report no kubelet version: the newest release kdiagnose knows, and why.
    assert doc["kubernetesVersion"] == "v1.37.2"
    assert (
        doc["kubernetesVersionReason"]
        == "the newest release kdiagnose knows (no node reports a kubelet version)"
    )
    assert doc["summary"]["diagnosed"] == 2 and doc["summary"]["unschedulable"] == 1
    pods = {p["pod"]: p for p in doc["pods"]}
    bad = pods["default/hello-web-new"]
    assert bad["scheduled"] is False and bad["node"] is None
    assert bad["message"].startswith("0/5 nodes are available: ")
    assert list(bad["nodes"]) == sorted(bad["nodes"])
    assert bad["nodes"]["node-a"]["verdict"] == "Unschedulable"
    assert bad["nodes"]["node-a"]["plugin"] == "NodeResourcesFit"
    assert bad["nodes"]["node-a"]["reasons"] == ["Insufficient cpu"]
    assert bad["nodes"]["node-a"]["pool"] == "web"
    assert bad["nodes"]["node-d"]["verdict"] == "UnschedulableAndUnresolvable"
    for key in (
        "fullMessage",
        "profile",
        "topNodes",
        "preemption",
        "prefilter",
        "postfilter",
        "gates",
        "notes",
        "remedies",
        "skippedScores",
    ):
        assert key in bad
    good = pods["default/hello-web-small"]
    assert good["scheduled"] is True and good["node"] in good["topNodes"]
    feasible = good["nodes"][good["node"]]
    assert feasible["verdict"] == "Feasible"
    assert feasible["totalScore"] == sum(feasible["weightedScores"].values())
    assert list(out.split('"apiVersion"')[0].strip()) == ["{"]  # sorted keys: apiVersion first


def test_yaml_is_the_same_document_as_json() -> None:
    _, out_json, _ = run(["diagnose", DEMO, "-o", "json"])
    _, out_yaml, _ = run(["diagnose", DEMO, "-o", "yaml"])
    assert yaml.safe_load(out_yaml) == json.loads(out_json)


def test_human_output_has_no_color_when_not_a_tty_or_no_color() -> None:
    for env in ({}, {"NO_COLOR": "1"}):
        code, out, _ = run(["diagnose", DEMO], env=env)
        assert code == 1 and not ANSI.search(out)
    code, out, _ = run(["diagnose", DEMO, "--no-color"])
    assert not ANSI.search(out)


def test_human_output_starts_with_the_answer_and_wraps_the_exact_message_at_80_columns() -> None:
    _, out, _ = run(["diagnose", DEMO, "--pod", "default/hello-web-new"])
    _, js, _ = run(["diagnose", DEMO, "--pod", "default/hello-web-new", "-o", "json"])
    message = json.loads(js)["pods"][0]["message"]
    remedies = json.loads(js)["pods"][0]["remedies"]
    commands = {c for r in remedies for c in [*r["commands"], r["verify"], r["rollback"]] if c}
    lines = out.splitlines()
    assert lines[0].startswith("Pod default/hello-web-new: UNSCHEDULABLE")
    assert lines[1] == "Cause: 2 rejected by cpu, 2 by taints, 1 by node affinity/selector"
    assert lines[2].startswith("Fix: scale node pool web by 1")
    # The message follows, wrapped at spaces: its lines joined give the exact text back (never cut mid-word).
    start = lines.index("Scheduler message:") + 1
    block = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        block.append(line.strip())
    assert " ".join(block) == message
    # Commands are never wrapped (a copy is the exact command); everything else fits 80 columns.
    assert all(len(line) <= 80 for line in lines if line.strip() not in commands)
    assert "needs 1 CPU, 0.5 free of 4" in out


def test_scheduler_name_selection(tmp_path: Path) -> None:
    f = write(
        tmp_path, "d.yaml", [node("n1"), pod("mine", "100m"), pod("theirs", "100m", schedulerName="custom")]
    )
    _, out, _ = run(["diagnose", f, "-o", "json"])
    doc = json.loads(out)
    assert [p["pod"] for p in doc["pods"]] == ["default/mine"]
    assert any("schedulerName 'custom'" in w for w in doc["warnings"])
    _, out, _ = run(["diagnose", f, "-o", "json", "--scheduler-name", "custom"])
    assert [p["pod"] for p in json.loads(out)["pods"]] == ["default/theirs"]


def test_namespace_and_selector_filters(tmp_path: Path) -> None:
    other = pod("x", "100m")
    other["metadata"]["namespace"] = "shop"
    f = write(tmp_path, "d.yaml", [node("n1"), pod("a", "100m"), pod("b", "100m"), other])
    _, out, _ = run(["diagnose", f, "-o", "json", "-n", "shop"])
    assert [p["pod"] for p in json.loads(out)["pods"]] == ["shop/x"]
    _, out, _ = run(["diagnose", f, "-o", "json", "-l", "app in (a, x)"])
    assert [p["pod"] for p in json.loads(out)["pods"]] == ["default/a", "shop/x"]


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param("app=web", {"app": "web"}, True, id="equality matches"),
        pytest.param("app==web", {"app": "db"}, False, id="double equality does not match another value"),
        pytest.param("app!=web", {}, True, id="inequality matches a missing label"),
        pytest.param("tier in (a,b),app", {"tier": "b", "app": "x"}, True, id="set membership and existence"),
        pytest.param("tier notin (a)", {"tier": "a"}, False, id="notin excludes"),
        pytest.param("!canary", {"canary": "1"}, False, id="negated existence"),
    ],
)
def test_label_selectors(selector: str, labels: dict[str, str], want: bool) -> None:
    assert parse_selector(selector)(labels) is want


# ---------------------------------------------------------------------------------------------- console


@pytest.mark.parametrize(
    ("details", "want"),
    [
        pytest.param(
            ({"resource": "cpu", "requested": 1000, "free": 500, "allocatable": 4000},),
            "needs 1 CPU, 0.5 free of 4 allocatable",
            id="a resource shortfall in plain words",
        ),
        pytest.param(
            ({"resource": "memory", "requested": 2 * 2**30, "free": 2**29, "allocatable": 8 * 2**30},),
            "needs 2Gi memory, 512Mi free of 8Gi allocatable",
            id="memory in binary units",
        ),
        pytest.param(
            ({"taint": "dedicated=batch:NoSchedule"},),
            "taint dedicated=batch:NoSchedule not tolerated",
            id="the taint",
        ),
        pytest.param(({"widget": "x", "count": 3},), "widget=x, count=3", id="unknown keys as k=v"),
    ],
)
def test_details_rendering(details: tuple[dict[str, Any], ...], want: str) -> None:
    assert describe_details(details) == want


def _synthetic_report(n_nodes: int) -> Report:
    p = Pod({"metadata": {"name": "big", "namespace": "default"}, "spec": {"containers": []}})
    d = Diagnosis(
        pod=p, num_all_nodes=n_nodes, message=f"0/{n_nodes} nodes are available: {n_nodes} Insufficient cpu."
    )
    pools: dict[str, str] = {}
    for i in range(n_nodes):
        name = f"ip-10-0-{i // 250}-{i % 250}.ec2.internal"
        pools[name] = f"pool-{i % 3}"
        detail = {"resource": "cpu", "requested": 8000, "free": 1000 * (i % 4), "allocatable": 4000}
        d.verdicts[name] = Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit", (detail,))
    return Report(
        k8s_version="v1.34.1",
        source="x",
        num_nodes=n_nodes,
        num_pods=1,
        pods=[PodReport(d)],
        node_pools=pools,
    )


def test_thousands_of_nodes_collapse_into_groups() -> None:
    out = render_text(_synthetic_report(3000))
    assert len(out.splitlines()) < 40
    assert "1000 nodes:" in out
    assert all(len(line) <= 80 for line in out.splitlines() if "nodes are available" not in line)


def test_all_nodes_lists_every_node() -> None:
    out = render_text(_synthetic_report(12), RenderOptions(color=False, width=200, all_nodes=True))
    assert all(f"ip-10-0-0-{i}.ec2.internal" in out for i in range(12))


@pytest.mark.parametrize(
    ("labels", "want"),
    [
        pytest.param(
            {"eks.amazonaws.com/nodegroup": "ng-1", "node.kubernetes.io/instance-type": "m5.large"},
            "ng-1",
            id="EKS node group",
        ),
        pytest.param({"cloud.google.com/gke-nodepool": "default-pool"}, "default-pool", id="GKE node pool"),
        pytest.param({"kubernetes.azure.com/agentpool": "system"}, "system", id="AKS agent pool"),
        pytest.param({"karpenter.sh/nodepool": "spot"}, "spot", id="Karpenter node pool"),
        pytest.param(
            {"node.kubernetes.io/instance-type": "m5.large"}, "m5.large", id="instance type as last resort"
        ),
        pytest.param({"kubernetes.io/hostname": "n1"}, None, id="no pool label"),
    ],
)
def test_pool_of(labels: dict[str, str], want: str | None) -> None:
    assert pool_of(Node({"metadata": {"name": "n", "labels": labels}})) == want


def test_environment_is_clean_of_debug() -> None:
    assert "KDIAGNOSE_DEBUG" not in os.environ


def test_json_owner_is_the_workload_a_change_goes_to(tmp_path: Path) -> None:
    # The dump has no ReplicaSet object: the Deployment is named from the pod-template-hash convention.
    from typer.testing import CliRunner

    from kdiagnose.cli import app, dispatch_args

    case = Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "dra-no-devices-left.yaml"
    res = CliRunner().invoke(app, dispatch_args([str(case), "-o", "json"]))
    doc = json.loads(res.stdout)
    assert [p["owner"] for p in doc["pods"]] == ["Deployment inference/llama-guard"]


def test_help_lists_every_command_whole_and_each_command_states_its_exit_codes() -> None:
    code, out, _ = run(["--help"], env={"COLUMNS": "80"})
    assert code == 0
    commands = out.split("Commands:", 1)[1]
    assert "..." not in commands  # click cuts a long first docstring line
    for name in ("diagnose", "pod", "pods", "check"):
        assert re.search(rf"^  {name} +\S", commands, re.M), name
        code, text, _ = run([name, "--help"], env={"COLUMNS": "80"})
        assert code == 0
        flat = " ".join(text.split())
        # The codes the commands really return (kdiagnose/exitcodes.py), as README "Exit codes" lists them.
        assert f"Exit codes: {ExitCode.OK.value} " in flat, name
        for c in (ExitCode.UNSCHEDULABLE, ExitCode.USAGE, ExitCode.ERROR):
            assert f", {c.value} " in flat, (name, c)
        assert max(len(line) for line in text.splitlines()) <= 80, name
