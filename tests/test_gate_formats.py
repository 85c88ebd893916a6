"""`kdiagnose check` output formats, each parsed back the way its consumer reads it."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest

from kdiagnose.gate.formats import github, junit, sarif
from kdiagnose.gate.formats import json as gate_json
from kdiagnose.gate.formats import text as gate_text
from kdiagnose.gate.placement import run_gate
from kdiagnose.gate.result import GateOptions, GateResult
from kdiagnose.load.files import RawObject, load_paths
from kdiagnose.load.manifests import expand_workloads
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.versions import dialect_for

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "check"
SCHEMA = Path(__file__).resolve().parent / "schemas" / "sarif-2.1.0-subset.json"

ANTI_AFFINITY_MSG = (
    "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, "
    "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
)


def _result(*, stdin: bool = False, fail_on: str = "unschedulable") -> GateResult:
    """web (fails, line 2 of its file), an ignored Job, and a DaemonSet that fits."""
    objects = load_paths(
        [str(FIX / "web-anti-affinity.manifests.yaml"), str(FIX / "daemonset.manifests.yaml")]
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
    snap = build_snapshot(load_paths([str(FIX / "cluster-two-nodes.yaml")]).objects, dialect_for("v1.34.1"))
    return run_gate(
        snap,
        workloads,
        options=GateOptions(fail_on=fail_on),
        ignored_kinds=other,
        snapshot_source="cluster.yaml",
    )


# ---------------------------------------------------------------------------------------------- JUnit


def test_junit_has_one_testcase_per_workload_and_the_message_as_failure() -> None:
    root = ET.fromstring(junit.render(_result()))
    assert root.tag == "testsuites"
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
    assert "web-anti-affinity.manifests.yaml:2" in (failure.text or "")
    assert cases[1].find("failure") is None and cases[1].find("skipped") is None
    assert cases[2].find("skipped") is not None
    for case in cases:  # the children the common JUnit schema allows in a testcase
        assert {child.tag for child in case} <= {"failure", "error", "skipped", "system-out", "system-err"}


def test_junit_replaces_characters_xml_cannot_carry() -> None:
    assert junit._clean("a\x00b\x1bc\td") == "a\ufffdb\ufffdc\td"


# ---------------------------------------------------------------------------------------------- SARIF


def _validate_sarif(doc: dict[str, object]) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)


def test_sarif_is_valid_and_points_at_the_failing_document() -> None:
    doc = json.loads(sarif.render(_result()))
    _validate_sarif(doc)
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    (res,) = run["results"]
    assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == "unschedulable"
    assert res["level"] == "error"
    assert res["message"]["text"].startswith("Deployment default/web")
    assert ANTI_AFFINITY_MSG in res["message"]["text"]
    (loc,) = res["locations"]
    phys = loc["physicalLocation"]
    assert phys["artifactLocation"]["uri"].endswith("fixtures/check/web-anti-affinity.manifests.yaml")
    assert phys["region"] == {"startLine": 2}
    assert loc["logicalLocations"] == [
        {"name": "web", "fullyQualifiedName": "Deployment default/web", "kind": "resource"}
    ]


def test_sarif_from_stdin_has_only_a_logical_location() -> None:
    doc = json.loads(sarif.render(_result(stdin=True)))
    _validate_sarif(doc)
    (res,) = doc["runs"][0]["results"]
    assert "physicalLocation" not in res["locations"][0]
    assert "originalUriBaseIds" not in doc["runs"][0]


@pytest.mark.parametrize(
    ("source", "uri"),
    [
        pytest.param("k8s/app.yaml", ("k8s/app.yaml", "%SRCROOT%"), id="a relative path stays relative"),
        pytest.param("k8s/my app.yaml", ("k8s/my%20app.yaml", "%SRCROOT%"), id="spaces are percent-encoded"),
        pytest.param(
            "/elsewhere/x.yaml",
            ("file:///elsewhere/x.yaml", None),
            id="an outside absolute path is a file URI",
        ),
        pytest.param("<stdin>", None, id="stdin has no URI"),
    ],
)
def test_sarif_artifact_uris(source: str, uri: tuple[str, str | None] | None) -> None:
    assert sarif.artifact_uri(source) == uri


# ---------------------------------------------------------------------------------------------- GitHub

_COMMAND = re.compile(r"^::(?P<cmd>[a-z]+) (?P<props>[^:]*)::(?P<msg>.*)$")


def _unescape_data(s: str) -> str:
    # The runner's command parser (actions/runner ActionCommand.cs): %0D, %0A, then %25.
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _unescape_property(s: str) -> str:
    return (
        s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    m = _COMMAND.match(line)
    assert m is not None, line
    props = dict(p.split("=", 1) for p in m.group("props").split(","))
    return (
        m.group("cmd"),
        {k: _unescape_property(v) for k, v in props.items()},
        _unescape_data(m.group("msg")),
    )


def test_github_annotations_parse_back_to_file_line_and_message() -> None:
    lines = github.render(_result()).splitlines()
    annotations = [x for x in lines if x.startswith("::")]
    assert len(annotations) == 1
    cmd, props, msg = _parse(annotations[0])
    assert cmd == "error"
    assert props["file"].endswith("fixtures/check/web-anti-affinity.manifests.yaml")
    assert props["line"] == "2"
    assert props["title"] == "kdiagnose: Deployment default/web (unschedulable)"
    assert msg.splitlines()[0].endswith(ANTI_AFFINITY_MSG)
    assert "\n  node-a, node-b: InterPodAffinity" in msg
    assert lines[-1] == "kdiagnose check: 1 of 3 workload(s) fail the policy (--fail-on unschedulable)"


def test_github_annotation_from_stdin_has_no_file() -> None:
    line = next(x for x in github.render(_result(stdin=True)).splitlines() if x.startswith("::"))
    _, props, _ = _parse(line)
    assert set(props) == {"title"}


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
    assert _unescape_data(data) == text and _unescape_property(prop) == text


# ---------------------------------------------------------------------------------------------- JSON, human


def test_yaml_is_the_same_document_as_json() -> None:
    import yaml

    from kdiagnose.report.yaml import dump_document

    result = _result()
    assert yaml.safe_load(dump_document(gate_json.check_document(result))) == json.loads(
        gate_json.render(result)
    )


def test_json_is_the_versioned_document_with_per_workload_results() -> None:
    text = gate_json.render(_result())
    assert text == gate_json.render(_result())  # deterministic
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


def test_human_report_has_the_verdict_first_and_one_wrapped_paragraph_per_workload() -> None:
    text = gate_text.render(_result())
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
