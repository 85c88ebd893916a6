"""Compare the harness's output with a recorded corpus, field by field.

    python3 conformance/compare.py RECORDED_DIR GENERATED_DIR [--cases a,b,...]

Every NAME.json under RECORDED_DIR must exist under GENERATED_DIR with equal content, except:
- `timing_s` (wall time; not part of the corpus);
- the scheme name inside a `skipped_objects` decoding error (`in scheme "..."`): it is the source position of
  the scheme's NewScheme call as runtime.Caller sees it, which depends on the build layout (built in
  kubernetes' vendor tree: `k8s.io/client-go/kubernetes/scheme/register.go:84`; from the module cache, as
  here, apimachinery's own `pkg/runtime/scheme.go:110`), not on the release;
- the recorded random preemption ties (fixtures/golden/README.md, 'Known nondeterminism'): for the cases in
  RANDOM_PREEMPTION the real scheduler picks one of several equally good candidates at random, so the
  nominated node and the victims may differ; with them replaced by placeholders everywhere in the pod's
  entry (message, postfilter, events), the rest must still be equal;
- the nodes of a scheduling cycle that a Filter Error aborted (the pod's `error`): the scheduler runs the
  Filters of 16 nodes at once and cancels the rest when one returns Error (schedule_one.go
  findNodesThatPassFilters, SendErrorWithCancel), so which nodes got the Error, the cancellation
  (`asked by caller to stop ...`) or no Filter at all is a race; only the distinct Error statuses are compared;
- the order of NodeResourcesFit's scalar-resource reasons (extended resources, hugepages): Go map order.
Exits 1 listing each difference (path of the field, recorded value, generated value).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

# case (relative name without .json) -> the equally good (nominated node, victims) choices recorded in
# fixtures/golden/README.md.
RANDOM_PREEMPTION: dict[str, list[tuple[str, list[str]]]] = {
    "random/rand-1-0096": [("node-0", ["shop/web-5"]), ("node-3", ["default/web-8"])],
}


# corpus directory name -> per-pod fields its recorder did not write. fixtures/golden-v135 has no
# `binding_error` (its 5 binding failures show as scheduled pods with no Scheduled event), so a generated
# one is accepted there when the recorded entry has no such field and no events.
KNOWN_OMISSIONS: dict[str, set[str]] = {"golden-v135": {"binding_error"}}


def _neutralise(entry: dict[str, Any], choices: list[tuple[str, list[str]]]) -> dict[str, Any]:
    pre = entry.get("preemption")
    if not pre:
        return entry
    choice = (pre.get("nominated_node"), sorted(pre.get("victims") or []))
    if choice not in [(n, sorted(v)) for n, v in choices]:
        return entry
    node, victims = choice
    out = dict(entry)
    for field in ("message", "postfilter", "preemption", "events"):
        text = json.dumps(entry.get(field))
        text = text.replace(json.dumps(node)[1:-1], "<NODE>")
        for i, v in enumerate(victims):
            text = text.replace(json.dumps(v)[1:-1], f"<VICTIM{i}>")
        out[field] = json.loads(text)
    return out


def diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k == "timing_s":
                continue
            if k not in a:
                out.append(f"{path}.{k}: missing in recorded, generated {json.dumps(b[k])[:300]}")
            elif k not in b:
                out.append(f"{path}.{k}: recorded {json.dumps(a[k])[:300]}, missing in generated")
            else:
                diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff(x, y, f"{path}[{i}]", out)
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: recorded {json.dumps(a)[:400]}, generated {json.dumps(b)[:400]}")


def aborted_filters(entry: dict[str, Any]) -> dict[str, Any]:
    """A pod entry whose cycle a Filter Error aborted, with `filters` reduced to its distinct Error statuses
    (the race described in the module docstring); other entries unchanged."""
    filters = entry.get("filters")
    if not entry.get("error") or not isinstance(filters, dict):
        return entry
    errors = sorted(
        {
            json.dumps(v, sort_keys=True)
            for v in filters.values()
            if isinstance(v, dict) and v.get("code") == "Error"
        }
    )
    if not errors:
        return entry
    return dict(entry, filters={"<aborted cycle: Error statuses>": [json.loads(e) for e in errors]})


_FIT_FIXED_REASONS = (
    "Too many pods",
    "Insufficient cpu",
    "Insufficient memory",
    "Insufficient ephemeral-storage",
)


def scalar_reasons_sorted(entry: dict[str, Any]) -> dict[str, Any]:
    """A pod entry with each NodeResourcesFit status's scalar-resource reasons sorted: fitsRequest
    (noderesources/fit.go) checks pods, cpu, memory and ephemeral-storage in order, then ranges over the
    podRequest.ScalarResources map, so those come in Go's random map order from run to run
    (fixtures/fuzz-found/v135-fit-scalar-reason-order)."""
    filters = entry.get("filters")
    if not isinstance(filters, dict):
        return entry
    out = {}
    for node, v in filters.items():
        if (
            isinstance(v, dict)
            and v.get("plugin") == "NodeResourcesFit"
            and isinstance(v.get("reasons"), list)
        ):
            fixed = [r for r in v["reasons"] if r in _FIT_FIXED_REASONS]
            scalar = sorted(r for r in v["reasons"] if r not in _FIT_FIXED_REASONS)
            v = dict(v, reasons=fixed + scalar)
        out[node] = v
    return dict(entry, filters=out)


_SCHEME_NAME = re.compile(r'in scheme "[^"]*"')


def _without_scheme_names(doc: Any) -> Any:
    if isinstance(doc, dict) and isinstance(doc.get("skipped_objects"), list):
        skipped = [
            _SCHEME_NAME.sub('in scheme "<scheme>"', s) if isinstance(s, str) else s
            for s in doc["skipped_objects"]
        ]
        return dict(doc, skipped_objects=skipped)
    return doc


def compare_case(rel: str, recorded: Any, generated: Any, omitted: set[str] | None = None) -> list[str]:
    recorded, generated = _without_scheme_names(recorded), _without_scheme_names(generated)
    if omitted and isinstance(recorded, dict) and isinstance(generated, dict):
        gen_pods = []
        for r, g in zip(recorded.get("pods", []), generated.get("pods", []), strict=False):
            if isinstance(g, dict) and isinstance(r, dict) and not r.get("events"):
                g = {k: v for k, v in g.items() if k not in omitted or k in r}
            gen_pods.append(g)
        generated = dict(generated, pods=gen_pods + generated.get("pods", [])[len(gen_pods) :])
    choices = RANDOM_PREEMPTION.get(rel)
    if choices and isinstance(recorded, dict) and isinstance(generated, dict):
        recorded = dict(recorded, pods=[_neutralise(p, choices) for p in recorded.get("pods", [])])
        generated = dict(generated, pods=[_neutralise(p, choices) for p in generated.get("pods", [])])
    if isinstance(recorded, dict) and isinstance(generated, dict):
        recorded = dict(recorded, pods=[aborted_filters(p) for p in recorded.get("pods", [])])
        generated = dict(generated, pods=[aborted_filters(p) for p in generated.get("pods", [])])
        recorded = dict(recorded, pods=[scalar_reasons_sorted(p) for p in recorded.get("pods", [])])
        generated = dict(generated, pods=[scalar_reasons_sorted(p) for p in generated.get("pods", [])])
    out: list[str] = []
    diff(recorded, generated, rel, out)
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    cases: set[str] | None = None
    for a in argv:
        if a.startswith("--cases="):
            cases = {c for c in a.split("=", 1)[1].split(",") if c}
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rec_dir, gen_dir = Path(args[0]), Path(args[1])
    problems: list[str] = []
    n = 0
    for rec in sorted(rec_dir.rglob("*.json")):
        rel = rec.relative_to(rec_dir).with_suffix("").as_posix()
        if cases is not None and rel not in cases:
            continue
        n += 1
        gen = gen_dir / rec.relative_to(rec_dir)
        if not gen.exists():
            problems.append(f"{rel}: not generated")
            continue
        problems += compare_case(
            rel, json.loads(rec.read_text()), json.loads(gen.read_text()), KNOWN_OMISSIONS.get(rec_dir.name)
        )
    for p in problems:
        print(p)
    print(f"{rec_dir}: {n} files compared, {len(problems)} differences", file=sys.stderr)
    return 1 if problems or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
