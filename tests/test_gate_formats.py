"""`kdiagnose check` output formats, each parsed back the way its consumer reads it: SARIF against the
official OASIS 2.1.0 schema, JUnit against the Jenkins junit-10.xsd (both vendored in tests/schemas/, see its
README), GitHub workflow commands through a strict parser of their syntax (tests/ci_formats.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kdiagnose.gate.formats import github, junit, sarif
from kdiagnose.gate.formats import json as gate_json
from kdiagnose.gate.formats import text as gate_text
from kdiagnose.gate.locate import PathBase
from kdiagnose.gate.placement import run_gate
from kdiagnose.gate.result import GateOptions, GateResult
from kdiagnose.load.files import RawObject, load_paths
from kdiagnose.load.manifests import expand_workloads
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.versions import dialect_for
from tests.check_cluster import ANTI_AFFINITY_MSG
from tests.ci_formats import (
    github_commands,
    unescape_data,
    unescape_property,
    validate_junit,
    validate_sarif,
)
from tests.work_tree import git_work_tree

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def work_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures in a git work tree of their own: paths are shown relative to it."""
    return git_work_tree(tmp_path_factory.mktemp("repo"), "fixtures/check", source=REPO)


def _result(work_tree: Path, *, stdin: bool = False, fail_on: str = "unschedulable") -> GateResult:
    """web (fails, line 2 of its file), an ignored Job, and a DaemonSet that fits."""
    fix = work_tree / "fixtures" / "check"
    objects = load_paths(
        [str(fix / "web-anti-affinity.manifests.yaml"), str(fix / "daemonset.manifests.yaml")]
    ).objects
    if stdin:
        objects = [RawObject(r.obj, "<stdin>", r.doc_index, r.line) for r in objects]
    ignored = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "skip-me", "annotations": {"kdiagnose.io/ignore": "true"}},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
    }
    objects.append(RawObject(ignored, "jobs/skip.yaml", 0, 1))
    workloads, other = expand_workloads(objects)
    snap = build_snapshot(load_paths([str(fix / "cluster-two-nodes.yaml")]).objects, dialect_for("v1.34.1"))
    result = run_gate(
        snap,
        workloads,
        options=GateOptions(fail_on=fail_on),
        ignored_kinds=other,
        snapshot_source="cluster.yaml",
    )
    result.paths = PathBase(cwd=work_tree)
    return result


# ---------------------------------------------------------------------------------------------- JUnit


def test_junit_has_one_testcase_per_workload_and_the_message_as_failure(work_tree: Path) -> None:
    text = junit.render(_result(work_tree))
    root = validate_junit(text)
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("kdiagnose.check.Deployment", "default/web"),
        ("kdiagnose.check.DaemonSet", "monitoring/agent"),
        ("kdiagnose.check.Job", "default/skip-me"),
    ]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "3",
        "1",
        "0",
        "1",
    )
    assert root.get("tests") == "3" and root.get("failures") == "1"
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("message") == ANTI_AFFINITY_MSG
    assert failure.get("type") == "unschedulable"
    # The text starts with the field to blame: the pod's one required anti-affinity term (17:13).
    assert (failure.text or "").startswith(
        "fixtures/check/web-anti-affinity.manifests.yaml:17:13: Deployment default/web "
        "(fixtures/check/web-anti-affinity.manifests.yaml:2:1): 2 of 3 fit"
    )
    assert cases[1].find("failure") is None and cases[1].find("skipped") is None
    out = cases[1].find("system-out")
    assert out is not None
    assert out.text == "fixtures/check/daemonset.manifests.yaml:1:1: all 2 targeted node(s) fit"
    assert cases[2].find("skipped") is not None


def test_junit_replaces_characters_xml_cannot_carry() -> None:
    assert junit._clean("a\x00b\x1bc\td") == "a\ufffdb\ufffdc\td"


# ---------------------------------------------------------------------------------------------- SARIF


def test_sarif_is_valid_and_points_at_the_blamed_field_with_the_object_related(work_tree: Path) -> None:
    doc = json.loads(sarif.render(_result(work_tree)))
    validate_sarif(doc)
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    (res,) = run["results"]
    assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == "unschedulable"
    assert res["level"] == "error"
    assert res["message"]["text"].startswith("Deployment default/web")
    assert ANTI_AFFINITY_MSG in res["message"]["text"]
    (loc,) = res["locations"]
    assert loc["physicalLocation"] == {
        "artifactLocation": {
            "uri": "fixtures/check/web-anti-affinity.manifests.yaml",
            "uriBaseId": "%SRCROOT%",
        },
        "region": {"startLine": 17, "startColumn": 13},
    }
    assert loc["message"]["text"] == (
        "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]: "
        "node(s) didn't match pod anti-affinity rules"
    )
    assert loc["logicalLocations"] == [
        {"name": "web", "fullyQualifiedName": "Deployment default/web", "kind": "resource"}
    ]
    (obj,) = res["relatedLocations"]
    assert obj["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 1}
    # %SRCROOT% is declared without the machine's absolute path (SARIF 2.1.0 §3.14.14 allows it).
    assert run["originalUriBaseIds"] == {
        "%SRCROOT%": {
            "description": {"text": "The root the artifact paths are relative to: the git work tree."}
        }
    }
    assert run["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_sarif_from_stdin_has_only_a_logical_location(work_tree: Path) -> None:
    doc = json.loads(sarif.render(_result(work_tree, stdin=True)))
    validate_sarif(doc)
    (res,) = doc["runs"][0]["results"]
    assert "physicalLocation" not in res["locations"][0]
    assert "originalUriBaseIds" not in doc["runs"][0]


# ---------------------------------------------------------------------------------------------- GitHub


def test_github_annotations_parse_back_to_file_line_and_message(work_tree: Path) -> None:
    text = github.render(_result(work_tree))
    commands, plain = github_commands(text)
    (cmd,) = commands
    assert cmd.command == "error"
    assert cmd.properties == {
        "file": "fixtures/check/web-anti-affinity.manifests.yaml",
        "line": "17",
        "col": "13",
        "title": "kdiagnose: Deployment default/web (unschedulable)",
    }
    assert cmd.message.splitlines()[0].endswith(ANTI_AFFINITY_MSG)
    assert "\n  node-a, node-b: InterPodAffinity" in cmd.message
    assert plain == ["kdiagnose check: 1 of 3 workload(s) fail the policy (--fail-on unschedulable)"]


def test_github_annotation_from_stdin_has_no_file(work_tree: Path) -> None:
    (cmd,), _ = github_commands(github.render(_result(work_tree, stdin=True)))
    assert set(cmd.properties) == {"title"}


@pytest.mark.parametrize(
    ("text", "data", "prop"),
    [
        pytest.param("50% done", "50%25 done", "50%25 done", id="percent first, so escapes are not doubled"),
        pytest.param("a\r\nb", "a%0D%0Ab", "a%0D%0Ab", id="line breaks"),
        pytest.param("k: v, w", "k: v, w", "k%3A v%2C w", id="colon and comma only in properties"),
        pytest.param("%0A", "%250A", "%250A", id="a literal escape sequence survives"),
    ],
)
def test_github_escaping(text: str, data: str, prop: str) -> None:
    assert github.escape_data(text) == data
    assert github.escape_property(text) == prop
    assert unescape_data(data) == text and unescape_property(prop) == text


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("::error file=a.yaml,line=2::50% done", id="an unescaped percent in the message"),
        pytest.param("::error title=a: b::m", id="an unescaped colon in a property"),
        pytest.param("::error file=a.yaml,line=0::m", id="line 0"),
        pytest.param("::error col=3::m", id="a column without a line"),
        pytest.param("::error file=a.yaml,file=b.yaml::m", id="a property twice"),
        pytest.param("::error fil=a.yaml::m", id="an unknown property"),
        pytest.param("::eror file=a.yaml::m", id="an unknown command"),
        pytest.param("::error file=/abs/a.yaml::m", id="an absolute path GitHub cannot map"),
        pytest.param("::error file=a.yaml,line=2 m", id="no :: before the message"),
    ],
)
def test_the_strict_github_parser_rejects_malformed_commands(line: str) -> None:
    with pytest.raises(AssertionError):
        github_commands(line + "\n")


# ---------------------------------------------------------------------------------------------- JSON, human


def test_yaml_is_the_same_document_as_json(work_tree: Path) -> None:
    import yaml

    from kdiagnose.report.yaml import dump_document

    result = _result(work_tree)
    assert yaml.safe_load(dump_document(gate_json.check_document(result))) == json.loads(
        gate_json.render(result)
    )


def test_json_is_the_versioned_document_with_per_workload_results(work_tree: Path) -> None:
    text = gate_json.render(_result(work_tree))
    assert text == gate_json.render(_result(work_tree))  # deterministic
    doc = json.loads(text)
    assert (doc["apiVersion"], doc["kind"], doc["failOn"], doc["passed"]) == (
        "kdiagnose/v1",
        "CheckReport",
        "unschedulable",
        False,
    )
    web, agent, job = doc["workloads"]
    assert (web["outcome"], web["failsPolicy"], web["failedReplica"], web["message"]) == (
        "unschedulable",
        True,
        3,
        ANTI_AFFINITY_MSG,
    )
    assert web["diagnosis"]["message"] == ANTI_AFFINITY_MSG
    assert sorted(web["diagnosis"]["nodes"]) == ["node-a", "node-b"]
    assert [p["node"] for p in agent["placements"]] == ["node-a", "node-b"]
    assert job["outcome"] == "ignored" and job["ignoreReason"] == 'annotation kdiagnose.io/ignore: "true"'
    assert doc["summary"]["outcomes"] == {"fits": 1, "ignored": 1, "unschedulable": 1}


def test_human_report_has_the_verdict_first_and_one_wrapped_paragraph_per_workload(work_tree: Path) -> None:
    text = gate_text.render(_result(work_tree))
    lines = text.splitlines()
    assert lines[0] == "FAILED: 1 of 3 workload(s) fail the policy (--fail-on unschedulable)"
    flat = " ".join(text.split())
    assert f"FAIL Deployment default/web [never fits]: 2 of 3 fit; replica 3: {ANTI_AFFINITY_MSG}" in flat
    assert "PASS DaemonSet monitoring/agent [fits now]: all 2 targeted node(s) fit" in text
    assert "SKIP Job default/skip-me [skipped]" in text
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    # Continuation lines hang under the workload's text, never at the margin where a mark would be.
    assert all(
        line[:1] in ("", " ")
        or line.split()[0]
        in ("FAILED:", "OK:", "FAIL", "PASS", "WARN", "SKIP", "kdiagnose", "warning:", "other")
        for line in lines
    )


def test_only_documents_with_a_finding_are_composed(work_tree: Path) -> None:
    """Object lines come from the text; PyYAML composes only the failing workload's document."""
    from kdiagnose.gate.where import locate

    result = _result(work_tree)
    locate(result)
    assert result.sources is not None
    composed = sorted(Path(source).name for source, _, _ in result.sources._docs)
    assert composed == ["web-anti-affinity.manifests.yaml"]
    assert [r.location.text if r.location else None for r in result.results] == [
        "fixtures/check/web-anti-affinity.manifests.yaml:2:1",
        "fixtures/check/daemonset.manifests.yaml:1:1",
        "jobs/skip.yaml:1",  # no such file to read: the loader's line, no column
    ]
