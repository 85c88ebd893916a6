"""`kdiagnose check -o junit`: one JUnit testcase per workload (the de-facto Ant/Jenkins JUnit XML format
that GitLab, Jenkins, Azure DevOps and most CI test views read).

A workload failing the --fail-on policy is a `<failure>` whose message is the scheduler's message; ignored
and unchecked workloads are `<skipped>`. Only attributes of the common schema are used (no file/line
attributes, which strict consumers reject): the manifest location is in the failure text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from kdiagnose.gate.formats.text import failure_text, location

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult

__all__ = ["SUITE_NAME", "render"]

SUITE_NAME = "kdiagnose check"
# XML 1.0 forbids most control characters even when escaped.
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _ILLEGAL_XML.sub("\ufffd", text)


def render(result: GateResult) -> str:
    failures = len(result.failing)
    skipped = sum(1 for r in result.results if r.outcome.value in ("ignored", "not-checked"))
    tests = str(len(result.results))
    root = ET.Element(
        "testsuites", name=SUITE_NAME, tests=tests, failures=str(failures), errors="0", time="0"
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=SUITE_NAME,
        tests=tests,
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time="0",
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("kubernetesVersion", result.k8s_version),
        ("snapshot", result.snapshot_source),
        ("failOn", result.fail_on),
    ):
        ET.SubElement(props, "property", name=name, value=_clean(value))
    for r in result.results:
        w = r.workload
        case = ET.SubElement(
            suite,
            "testcase",
            name=_clean(f"{w.namespace}/{w.name}"),
            classname=f"kdiagnose.check.{w.kind}",
            time="0",
        )
        if r.fails_policy:
            failure = ET.SubElement(
                case, "failure", message=_clean(r.message or r.summary), type=r.outcome.value
            )
            failure.text = _clean(failure_text(r))
        elif r.outcome.value in ("ignored", "not-checked"):
            ET.SubElement(case, "skipped", message=_clean(r.summary))
        elif r.outcome.value in ("preemption", "scale-up"):
            # A passing warning: JUnit has no warning element, so properties say it and system-out explains.
            cprops = ET.SubElement(case, "properties")
            ET.SubElement(cprops, "property", name="outcome", value=r.outcome.value)
            ET.SubElement(cprops, "property", name="warning", value=_clean(r.summary))
            out = ET.SubElement(case, "system-out")
            out.text = _clean(f"warning: {failure_text(r)}")
        else:
            out = ET.SubElement(case, "system-out")
            out.text = _clean(f"{location(r)}: {r.summary}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
