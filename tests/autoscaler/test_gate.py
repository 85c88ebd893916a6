"""The CI gate's scale-up policy on fixtures/autoscaler/check/: "fits only after scale-up" passes only
with autoscaler evidence that the node can be added; warnings reach every CI format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app
from tests.ci_formats import github_commands, validate_junit, validate_sarif
from tests.work_tree import git_work_tree

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "fixtures" / "autoscaler" / "check"


@pytest.fixture(scope="module")
def check_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures in a git work tree of their own (paths are shown relative to it), as the working
    directory: fixtures/autoscaler/check/ there."""
    tree = git_work_tree(tmp_path_factory.mktemp("repo"), "fixtures/autoscaler", source=ROOT)
    return tree / "fixtures" / "autoscaler" / "check"


def _check(monkeypatch: pytest.MonkeyPatch, check_dir: Path, *args: str) -> Any:
    monkeypatch.chdir(check_dir)
    return CliRunner().invoke(
        app, ["check", "--no-config", "-f", "web.manifests.yaml", "--snapshot", "eks-nodes.yaml", *args]
    )


@pytest.mark.parametrize(
    ("extra", "code", "text"),
    [
        pytest.param(
            [],
            1,
            "FAIL Deployment shop/web [fits only after scale-up]: 0 of 1 fit; replica 1: fits only after "
            "scale-up of pool apps, which no autoscaler can add now: no autoscaler evidence for pool apps: "
            "the input has no cluster-autoscaler status ConfigMap",
            id="no autoscaler evidence fails",
        ),
        pytest.param(
            ["--snapshot", "ca-status-room.yaml"],
            0,
            "WARN Deployment shop/web [fits only after scale-up]: 0 of 1 fit; replica 1: fits after scale-up "
            "of group apps: 3 of 5 → 4; now: 0/4 nodes are available",
            id="a group with room below maxSize passes, naming the group and its room",
        ),
        pytest.param(
            ["--snapshot", "../ca-at-max.yaml"],
            1,
            "which no autoscaler can add now: at its max size (3 of max 3)",
            id="a group at its max fails",
        ),
        pytest.param(
            ["--snapshot", "ca-status-backoff.yaml"],
            1,
            "which no autoscaler can add now: in backoff after a failed scale-up (InsufficientInstanceCapacity:",
            id="a group in backoff fails and says why",
        ),
        pytest.param(
            ["--pools", "pools-room.yaml"],
            0,
            "fits after scale-up of group apps: 3 of 4 → 4",
            id="a --pools entry with max above current passes",
        ),
    ],
)
def test_scale_up_policy(
    monkeypatch: pytest.MonkeyPatch, check_dir: Path, extra: list[str], code: int, text: str
) -> None:
    res = _check(monkeypatch, check_dir, *extra)
    assert res.exit_code == code, res.stdout + res.stderr
    assert text in " ".join(res.stdout.split())  # the human report is word-wrapped


def test_backoff_names_the_failure_cluster_autoscaler_recorded(
    monkeypatch: pytest.MonkeyPatch, check_dir: Path
) -> None:
    res = _check(monkeypatch, check_dir, "--snapshot", "ca-status-backoff.yaml")
    assert res.exit_code == 1
    assert (
        "cluster-autoscaler recorded ScaleUpFailed: Failed adding 1 nodes to group "
        "eks-apps-4ac6b7d2-1b2c-3d4e-5f60-718293a4b5c6 due to InsufficientInstanceCapacity"
    ) in " ".join(res.stdout.split())


def test_fail_on_scale_up_still_fails_a_scale_up_with_room(
    monkeypatch: pytest.MonkeyPatch, check_dir: Path
) -> None:
    res = _check(monkeypatch, check_dir, "--snapshot", "ca-status-room.yaml", "--fail-on", "scale-up")
    assert res.exit_code == 1


def test_warning_is_a_sarif_result_of_level_warning(monkeypatch: pytest.MonkeyPatch, check_dir: Path) -> None:
    res = _check(monkeypatch, check_dir, "--snapshot", "ca-status-room.yaml", "-o", "sarif")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    validate_sarif(doc)
    (result,) = doc["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("scale-up", "warning")
    assert "fits after scale-up of group apps: 3 of 5 → 4" in result["message"]["text"]
    # At the cpu request the scale-up is about (line 14, column 32), relative to the repository.
    phys = result["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == "fixtures/autoscaler/check/web.manifests.yaml"
    assert phys["region"] == {"startLine": 14, "startColumn": 32}
    failing = _check(monkeypatch, check_dir, "-o", "sarif")
    (result,) = json.loads(failing.stdout)["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("scale-up", "error")


def test_warning_is_in_junit_system_out_and_counted_in_the_suite(
    monkeypatch: pytest.MonkeyPatch, check_dir: Path
) -> None:
    res = _check(monkeypatch, check_dir, "--snapshot", "ca-status-room.yaml", "-o", "junit")
    assert res.exit_code == 0
    root = validate_junit(res.stdout)  # junit-10.xsd: no properties inside a testcase
    case = root.find("./testsuite/testcase")
    assert case is not None and case.find("failure") is None
    props = {p.get("name"): p.get("value") for p in root.findall("./testsuite/properties/property")}
    assert props["warnings"] == "1"
    out = case.find("system-out")
    assert out is not None and (out.text or "").startswith(
        "warning: fixtures/autoscaler/check/web.manifests.yaml:14:32: Deployment shop/web"
    )
    assert "fits after scale-up of group apps: 3 of 5 → 4" in (out.text or "")


def test_warning_is_a_github_warning_command(monkeypatch: pytest.MonkeyPatch, check_dir: Path) -> None:
    res = _check(monkeypatch, check_dir, "--snapshot", "ca-status-room.yaml", "-o", "github")
    assert res.exit_code == 0
    (cmd,), _ = github_commands(res.stdout)
    assert cmd.command == "warning"
    assert cmd.properties == {
        "file": "fixtures/autoscaler/check/web.manifests.yaml",
        "line": "14",
        "col": "32",
        "title": "kdiagnose: Deployment shop/web (scale-up)",
    }
    assert "fits after scale-up of group apps: 3 of 5 → 4" in cmd.message


def test_room_is_checked_against_every_replica_that_needs_a_new_node(
    monkeypatch: pytest.MonkeyPatch, check_dir: Path, tmp_path: Path
) -> None:
    # 4 replicas of 1 CPU, one per new m5.large (1.93 CPU): 4 nodes, the group has room for 2 (3 of max 5).
    manifest = (CHECK / "web.manifests.yaml").read_text().replace("replicas: 1", "replicas: 4")
    (tmp_path / "web4.yaml").write_text(manifest)
    monkeypatch.chdir(check_dir)
    res = CliRunner().invoke(
        app,
        [
            "check",
            "--no-config",
            "-f",
            str(tmp_path / "web4.yaml"),
            "--snapshot",
            "eks-nodes.yaml",
            "--snapshot",
            "ca-status-room.yaml",
        ],
    )
    assert res.exit_code == 1, res.stdout
    assert "which no autoscaler can add now: needs 4 node(s), room for 2 (3 of max 5)" in " ".join(
        res.stdout.split()
    )
    assert (
        "remedy 1: [safe] raise the max of group apps from 5 to 7 (then the autoscaler adds 4 node(s)) "
        "(raise-max)" in " ".join(res.stdout.split())
    )
    two = manifest.replace("replicas: 4", "replicas: 2")
    (tmp_path / "web2.yaml").write_text(two)
    res = CliRunner().invoke(
        app,
        [
            "check",
            "--no-config",
            "-f",
            str(tmp_path / "web2.yaml"),
            "--snapshot",
            "eks-nodes.yaml",
            "--snapshot",
            "ca-status-room.yaml",
        ],
    )
    assert res.exit_code == 0, res.stdout
    assert "fits after scale-up of group apps: 3 of 5 → 5" in " ".join(res.stdout.split())


def test_json_gate_document_carries_the_scale_up_evidence(
    monkeypatch: pytest.MonkeyPatch, check_dir: Path
) -> None:
    ok = json.loads(_check(monkeypatch, check_dir, "--snapshot", "ca-status-room.yaml", "-o", "json").stdout)
    assert ok["workloads"][0]["scaleUp"] == {
        "canAdd": True,
        "text": "fits after scale-up of group apps: 3 of 5 → 4",
    }
    blind = json.loads(_check(monkeypatch, check_dir, "-o", "json").stdout)["workloads"][0]
    assert blind["failsPolicy"] is True and blind["scaleUp"]["canAdd"] is False
