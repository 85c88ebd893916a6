"""`kdiagnose check -o sarif`: SARIF 2.1.0 (OASIS), one result per finding (gate/findings.py).

- Results: level `error` for workloads failing the --fail-on policy, `warning` for those passing only by
  preemption or after scale-up, `note` for workloads not checked, with only risky remedies, or with notes.
  Each points at the field to blame (exact line and column) or the object's `apiVersion` line; the object
  and other blamed fields are `relatedLocations`. Paths are relative to `%SRCROOT%` (the path base:
  `--path-base`, else the git work tree, else the working directory), declared in `originalUriBaseIds`;
  a file outside the base is an absolute file URI. The base's own absolute URI is left out (the spec
  allows it), so the report reveals no machine's directory layout and is the same on every checkout. Input read from stdin has only a logical location (the
  workload), unless helm's `# Source:` comments name the template file.
- `invocations[0]`: `executionSuccessful` false when the input could not be read (the report is still
  written), with each input error and each run-level warning (snapshot, no workload) as a
  `toolExecutionNotification`, which needs no location.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from kdiagnose import __version__
from kdiagnose.gate.findings import RULES, Finding, findings
from kdiagnose.gate.locate import Location, PathBase

if TYPE_CHECKING:
    from kdiagnose.gate.result import GateResult

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "SRCROOT", "render", "sarif_document"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/kdiagnose/kdiagnose"
SRCROOT = "%SRCROOT%"
_RULE_INDEX = {rule[0]: i for i, rule in enumerate(RULES)}


def _physical(loc: Location) -> dict[str, Any] | None:
    if not loc.file:
        return None
    artifact: dict[str, Any] = {"uri": PathBase.uri(loc)}
    if not loc.outside:
        artifact["uriBaseId"] = SRCROOT
    if loc.member:  # lines are the archive member's: name the member, point at the archive
        artifact["description"] = {
            "text": f"archive member {loc.member}" + (f", line {loc.line}" if loc.line else "")
        }
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if loc.line > 0 and not loc.member:
        region: dict[str, Any] = {"startLine": loc.line}
        if loc.column > 0:
            region["startColumn"] = loc.column
        physical["region"] = region
    return physical


def _location(loc: Location | None, f: Finding, index: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if index is not None:
        out["id"] = index
    if loc is not None:
        physical = _physical(loc)
        if physical is not None:
            out["physicalLocation"] = physical
        if loc.field or loc.note:
            out["message"] = {"text": f"{loc.field}: {loc.note}" if loc.field else loc.note}
    if index is None and f.workload is not None:
        w = f.workload.workload
        out["logicalLocations"] = [{"name": w.name, "fullyQualifiedName": w.key, "kind": "resource"}]
    return out


def _result(f: Finding) -> dict[str, Any]:
    res: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": _RULE_INDEX[f.rule],
        "level": f.level,
        "message": {"text": f.message},
        "locations": [_location(f.location, f)],
    }
    if f.related:
        res["relatedLocations"] = [_location(x, f, i) for i, x in enumerate(f.related, 1)]
    if f.workload is not None:
        key = f"{f.workload.workload.key}/{f.rule}"
        res["partialFingerprints"] = {"kdiagnoseWorkload/v1": hashlib.sha256(key.encode()).hexdigest()[:32]}
    return res


def _notification(f: Finding) -> dict[str, Any]:
    out: dict[str, Any] = {
        "level": f.level,
        "message": {"text": f.message},
        "descriptor": {"id": f.rule, "index": _RULE_INDEX[f.rule]},
    }
    if f.location is not None and _physical(f.location) is not None:
        out["locations"] = [_location(f.location, f)]
    return out


def sarif_document(result: GateResult) -> dict[str, Any]:
    all_findings = findings(result)
    located = [f for f in all_findings if f.workload is not None]
    run_level = [f for f in all_findings if f.workload is None]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "kdiagnose",
                "version": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [
                    {
                        "id": rid,
                        "name": name,
                        "shortDescription": {"text": text},
                        "defaultConfiguration": {"level": level},
                    }
                    for rid, name, text, level in RULES
                ],
            }
        },
        "invocations": [
            {
                "executionSuccessful": not result.errors,
                "toolExecutionNotifications": [_notification(f) for f in run_level],
            }
        ],
        "results": [_result(f) for f in located],
        "properties": {
            "kubernetesVersion": result.k8s_version,
            "snapshot": result.snapshot_source,
            "failOn": result.fail_on,
        },
    }
    locs = [x for f in all_findings for x in [f.location, *f.related] if x is not None]
    if any(x.file and not x.outside for x in locs):
        paths = result.paths or PathBase()
        # Without `uri` (SARIF 2.1.0 §3.14.14 allows omitting the absolute one): the report names no
        # machine's directories and is the same on every checkout; consumers resolve %SRCROOT% themselves.
        run["originalUriBaseIds"] = {
            SRCROOT: {
                "description": {"text": f"The root the artifact paths are relative to: {paths.reason}."}
            }
        }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render(result: GateResult) -> str:
    import orjson

    data: bytes = orjson.dumps(sarif_document(result), option=orjson.OPT_INDENT_2)
    return data.decode() + "\n"
