"""`kdiagnose check -o junit`: one JUnit testcase per workload (the Ant/Jenkins JUnit XML format that
GitLab, Jenkins, Azure DevOps and most CI test views read; valid against the Jenkins xUnit junit-10.xsd).

- A workload failing the --fail-on policy is a `<failure>` whose message is the scheduler's message and
  whose text starts with the location (`file:line:column` of the field to blame, else of the object).
- Ignored and unchecked workloads are `<skipped>`.
- Non-failing findings (gate/findings.py: passing only by preemption or scale-up, only risky remedies,
  notes) are the testcase's `<system-out>`, one `warning: ` / `note: ` paragraph each; the suite's
  `<properties>` count them (`warnings`, `notes`) and carry each run-level warning (`warning`).
  junit-10.xsd allows `properties` only on the suite, not on a testcase.
- Input that could not be read is one `<error>` testcase per error, named after the workload (or the file)
  with `file:line` in its message; `errors` counts them.
Only attributes of that schema are used (no file/line attributes on testcases, which strict consumers
reject).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from kdiagnose.gate.findings import Finding, findings

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult

__all__ = ["SUITE_NAME", "render"]

SUITE_NAME = "kdiagnose check"
# XML 1.0 forbids most control characters even when escaped.
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _ILLEGAL_XML.sub("\ufffd", text)


def _at(f: Finding) -> str:
    return f.location.text if f.location is not None else ""


def render(result: GateResult) -> str:
    all_findings = findings(result)
    by_workload: dict[int, list[Finding]] = {}
    for f in all_findings:
        if f.workload is not None:
            by_workload.setdefault(id(f.workload), []).append(f)
    run_warnings = [f for f in all_findings if f.workload is None and f.rule != "input-error"]
    errors = [f for f in all_findings if f.rule == "input-error"]
    failures = len(result.failing)
    skipped = sum(1 for r in result.results if r.outcome.value in ("ignored", "not-checked"))
    tests = str(len(result.results) + len(errors))
    root = ET.Element(
        "testsuites",
        name=SUITE_NAME,
        tests=tests,
        failures=str(failures),
        errors=str(len(errors)),
        time="0",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=SUITE_NAME,
        tests=tests,
        failures=str(failures),
        errors=str(len(errors)),
        skipped=str(skipped),
        time="0",
    )
    props = ET.SubElement(suite, "properties")
    nonfailing = [f for f in all_findings if f.workload is not None and f.level != "error"]
    for name, value in (
        ("kubernetesVersion", result.k8s_version),
        ("snapshot", result.snapshot_source),
        ("failOn", result.fail_on),
        ("warnings", str(sum(1 for f in nonfailing if f.level == "warning") + len(run_warnings))),
        ("notes", str(sum(1 for f in nonfailing if f.level == "note"))),
    ):
        ET.SubElement(props, "property", name=name, value=_clean(value))
    for f in run_warnings:
        ET.SubElement(props, "property", name="warning", value=_clean(f.message))
    for e in errors:
        case = ET.SubElement(
            suite,
            "testcase",
            name=_clean(e.subject or _at(e) or "input"),
            classname="kdiagnose.check.input",
            time="0",
        )
        error = ET.SubElement(case, "error", message=_clean(e.message), type="input-error")
        error.text = _clean(f"{_at(e)}: {e.message}" if _at(e) else e.message)
    for r in result.results:
        w = r.workload
        case = ET.SubElement(
            suite,
            "testcase",
            name=_clean(f"{w.namespace}/{w.name}"),
            classname=f"kdiagnose.check.{w.kind}",
            time="0",
        )
        mine = by_workload.get(id(r), [])
        main = next((f for f in mine if f.level == "error"), None)
        if main is not None:
            failure = ET.SubElement(
                case, "failure", message=_clean(r.message or r.summary), type=r.outcome.value
            )
            failure.text = _clean(f"{_at(main)}: {main.message}")
        elif r.outcome.value in ("ignored", "not-checked"):
            ET.SubElement(case, "skipped", message=_clean(r.summary))
        out = [f"{f.level}: {_at(f)}: {f.message}" for f in mine if f.level != "error"]
        if main is None and not out and r.location is not None:
            out.append(f"{r.location.text}: {r.summary}")
        if out:
            ET.SubElement(case, "system-out").text = _clean("\n".join(out))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
