"""Differential fuzzer: random realistic scenarios, the real kube-scheduler (conformance harness) vs kdiagnose.

    python -m conformance.fuzz.run --k8s v1.35.4 --minutes 10 [--harness BIN] [--out DIR] [--seed N]

For each seed: generate a scenario (conformance/fuzz/gen.py), run the harness on it (its JSON is the
fixtures/golden format), compare kdiagnose with it through tests/golden_harness.compare_case (the corpus'
own field-by-field comparator), and sort every difference into a class (field + plugin). The first scenario
of each class is shrunk (documents, then fields; each step kept only if the harness and kdiagnose still
differ in that class) and written to OUT/<class>.yaml with the harness' JSON beside it and the diff in
OUT/<class>.diff.txt. Exit 1 when a difference was found, 0 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from conformance.fuzz.gen import DEFAULT_TOLERATIONS, generate

Docs = list[dict[str, Any]]
LARGE = 50  # nodes from which a scenario's report is also checked for document-order invariance


class Oracle:
    """Runs one scenario through the harness and kdiagnose; returns the difference classes and lines."""

    def __init__(self, harness: str, work: Path) -> None:
        import tests.golden_harness as gh

        self.gh = gh
        # compare_case names cases relative to FIXTURES; our scratch directory stands in for it.
        gh.FIXTURES = work
        self.harness = harness
        self.dir = work / "fuzz"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.runs = 0
        self.reruns = 4
        self.ties = 0  # differences another run of the real scheduler resolved (random preemption ties)

    def write(self, docs: Docs, path: Path) -> None:
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False, explicit_start=True))

    def harness_json(self, yaml_path: Path) -> tuple[dict[str, Any] | None, str]:
        try:
            p = subprocess.run([self.harness, str(yaml_path)], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, "harness timeout"
        if p.returncode != 0:
            return None, (p.stderr.strip().splitlines() or [f"harness exit {p.returncode}"])[-1][:200]
        out = json.loads(p.stdout)
        if out.get("error"):
            return None, f"harness error: {str(out['error'])[:200]}"
        return out, ""

    def compare(self, out: dict[str, Any]) -> list[str]:
        j = self.dir / "case.json"
        j.write_text(json.dumps(out, indent=2))
        try:
            return self.gh.compare_case(j)
        except Exception as e:  # kdiagnose crashed where the real scheduler answered
            if type(e).__name__ == "InputError":
                raise
            return [f"crash: {type(e).__name__}: {e}"]

    def check(self, docs: Docs) -> tuple[set[str], list[str], dict[str, Any] | None, str]:
        self.runs += 1
        y = self.dir / "case.yaml"
        self.write(docs, y)
        out, err = self.harness_json(y)
        if out is None:
            return set(), [], None, err
        try:
            lines = self.compare(out)
            if lines and any(classify(line) in RANDOM_FIELDS for line in lines) and _preempts(out):
                # The real scheduler breaks preemption ties at random (candidate offset, map order): a
                # difference is kdiagnose's only if no run of the real scheduler agrees with it.
                for _ in range(self.reruns):
                    again, _err = self.harness_json(y)
                    if again is None:
                        break
                    kept = set(self.compare(again))
                    if len(kept) < len(lines):
                        self.ties += 1
                    lines = [line for line in lines if line in kept]
                    if not any(classify(line) in RANDOM_FIELDS for line in lines):
                        break
        except Exception as e:  # InputError
            # kdiagnose validates as the API server would; the harness takes objects as stored.
            return set(), [], out, f"kdiagnose rejected as invalid: {str(e).split(': ', 2)[-1][:160]}"
        return {classify(line) for line in lines}, lines, out, ""


# Fields the real scheduler may decide at random between equally good preemption candidates (from v1.37
# the message names the chosen node).
RANDOM_FIELDS = {"preemption", "message"}


def _preempts(out: dict[str, Any]) -> bool:
    return any(p.get("preemption") for p in out.get("pods", []))


def tally(res: dict[str, Any] | None, outcomes: dict[str, int], rejected_by: dict[str, int]) -> None:
    """What the real scheduler did with the pending pods (coverage: how often each outcome and filter
    plugin was reached)."""
    for p in (res or {}).get("pods", []):
        if p.get("scheduled"):
            key = "scheduled"
        elif p.get("preemption"):
            key = "preemption"
        elif p.get("handled") is False or p.get("preenqueue_rejected"):
            key = "not-attempted"
        else:
            key = "unschedulable"
        outcomes[key] = outcomes.get(key, 0) + 1
        plugins = {f.get("plugin") or "-" for f in (p.get("filters") or {}).values() if isinstance(f, dict)}
        if p.get("prefilter"):
            plugins.add(f"PreFilter:{p['prefilter'].get('plugin')}")
        for plugin in plugins:
            rejected_by[plugin] = rejected_by.get(plugin, 0) + 1


def _lit(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return json.loads(text)
        except ValueError:
            return text


def classify(line: str) -> str:
    """A difference line of compare_case -> its class (what differs, without pod or node names)."""
    if line.startswith("crash:"):
        return "crash-" + line.split(":")[1].strip()
    m = re.match(r"[^:]+: (\w+)(?:\[[^\]]*\])?:?", line)
    field = m.group(1) if m else "other"
    want = re.search(r"want (.*)\n", line + "\n")
    got = re.search(r"got {2}(.*)", line)
    if field == "filters" and want and got:
        w, g = _lit(want.group(1)), _lit(got.group(1))

        def tag(v: Any) -> str:
            return v.get("plugin") or "?" if isinstance(v, dict) else str(v)

        return f"filters-{tag(w)}-vs-{tag(g)}"
    if field == "scores" and want and got:
        w, g = _lit(want.group(1)), _lit(got.group(1))
        if isinstance(w, dict) and isinstance(g, dict):
            wp, gp = w.get("plugins", {}), g.get("plugins", {})
            diff = sorted(p for p in set(wp) | set(gp) if wp.get(p) != gp.get(p))
            return "scores-" + ("+".join(diff) if diff else "total")
        return "scores-presence"
    return field


def _render(docs: Docs, k8s: str) -> Any:
    """kdiagnose's whole `-o json` report (diagnosis, scores, preemption, remedies) for these documents."""
    from kdiagnose.load.files import LoadResult, _load_bytes
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.report import json as json_report
    from kdiagnose.versions import dialect_for

    result = LoadResult()
    _load_bytes(yaml.safe_dump_all(docs, explicit_start=True).encode(), "case.yaml", result, explicit=True)
    snap = build_snapshot(result.objects, dialect_for(k8s), list_kinds=result.list_kinds)
    return json.loads(json_report.render(diagnose_snapshot(snap, None, source="case.yaml")))


def _json_diff(a: Any, b: Any, path: str = "") -> list[str]:
    if type(a) is not type(b) or not isinstance(a, dict | list):
        return (
            []
            if a == b
            else [f"{path or '/'}:\n    first  {json.dumps(a)[:300]}\n    second {json.dumps(b)[:300]}"]
        )
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        return [
            line
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for line in _json_diff(x, y, f"{path}[{i}]")
        ]
    out = [f"{path}/{k}: only in one order" for k in sorted(set(a) ^ set(b))]
    return out + [line for k in sorted(set(a) & set(b)) for line in _json_diff(a[k], b[k], f"{path}/{k}")]


def order_lines(docs: Docs, k8s: str, seed: int) -> list[str]:
    """Differences between kdiagnose's reports for the documents in two orders (empty = order-invariant).
    A report kdiagnose refuses to build (invalid input) is no order difference."""
    import random

    other = list(docs)
    random.Random(seed).shuffle(other)
    try:
        first = _render(docs, k8s)
    except Exception as e:
        if type(e).__name__ == "InputError":
            return []
        return [f"crash: {type(e).__name__}: {e}"]
    return _json_diff(first, _render(other, k8s))


def _admitted_default(doc: Any, path: tuple[Any, ...]) -> bool:
    """Whether removing `path` would strip a stored pod (one with spec.priority) of a toleration that
    DefaultTolerationSeconds admission added: the harness re-admits such a pod (only Priority is skipped),
    kdiagnose takes it as stored, so the shrunk case would differ for a reason no real dump has."""
    if doc.get("kind") != "Pod" or path[:2] != ("spec", "tolerations"):
        return False
    spec = doc.get("spec") or {}
    if "priority" not in spec:
        return False
    tols = spec.get("tolerations") or []
    hit = (
        tols
        if len(path) == 2
        else [tols[path[2]]]
        if isinstance(path[2], int) and path[2] < len(tols)
        else []
    )
    return any(isinstance(t, dict) and t in DEFAULT_TOLERATIONS for t in hit) or (
        len(path) > 3 and isinstance(path[2], int) and tols[path[2]] in DEFAULT_TOLERATIONS
    )


def shrink(docs: Docs, keep: Callable[[Docs], bool], budget_s: float) -> Docs:
    """Delta debugging over documents, then over fields inside them, while `keep` holds."""
    deadline = time.monotonic() + budget_s
    n = 2
    while len(docs) >= 2 and time.monotonic() < deadline:
        chunk = max(1, len(docs) // n)
        removed = False
        for i in range(0, len(docs), chunk):
            cand = docs[:i] + docs[i + chunk :]
            if cand and keep(cand):
                docs, removed = cand, True
                n = max(n - 1, 2)
                break
            if time.monotonic() > deadline:
                break
        if not removed:
            if chunk == 1:
                break
            n = min(len(docs), n * 2)

    def paths(v: Any, pre: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        if isinstance(v, dict):
            for k in v:
                if pre == () and k in ("apiVersion", "kind", "metadata"):
                    out += paths(v[k], (k,)) if k == "metadata" else []
                    continue
                if pre == ("metadata",) and k in ("name", "namespace"):
                    continue
                out.append((*pre, k))
                out += paths(v[k], (*pre, k))
        elif isinstance(v, list):
            for i in range(len(v)):
                out.append((*pre, i))
                out += paths(v[i], (*pre, i))
        return out

    def without(doc: Any, path: tuple[Any, ...]) -> Any:
        doc = json.loads(json.dumps(doc))
        cur = doc
        for p in path[:-1]:
            cur = cur[p]
        del cur[path[-1]]
        return doc

    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for di in range(len(docs)):
            for path in sorted(paths(docs[di], ()), key=len):
                if time.monotonic() > deadline:
                    return docs
                if _admitted_default(docs[di], path):
                    continue
                try:
                    cand_doc = without(docs[di], path)
                except (KeyError, IndexError, TypeError):
                    continue
                cand = [*docs[:di], cand_doc, *docs[di + 1 :]]
                if keep(cand):
                    docs, changed = cand, True
                    break
    return docs


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fuzz-parity")
    ap.add_argument("--k8s", default="v1.34.1")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--harness", default=None)
    ap.add_argument("--out", default=None, help="where minimal cases go (default fuzz-out/<k8s>)")
    ap.add_argument("--seed", type=int, default=1, help="first seed")
    ap.add_argument("--shrink-seconds", type=float, default=120)
    ap.add_argument("--max-cases", type=int, default=0)
    ap.add_argument(
        "--order-check",
        choices=["large", "all", "none"],
        default="large",
        help=f"also compare kdiagnose's -o json report with the documents reshuffled (large: >= {LARGE} nodes)",
    )
    a = ap.parse_args(argv)
    harness = a.harness or f"conformance/bin/harness-{a.k8s}"
    if not Path(harness).exists():
        print(f"fuzz-parity: harness {harness} not found (make harness K8S={a.k8s})", file=sys.stderr)
        return 2
    out = Path(a.out or f"fuzz-out/{a.k8s}")
    out.mkdir(parents=True, exist_ok=True)
    oracle = Oracle(harness, Path(tempfile.mkdtemp(prefix="fuzz-parity-")))
    stop = time.monotonic() + a.minutes * 60
    seen: dict[str, dict[str, Any]] = {}
    harness_errors: dict[str, int] = {}
    order_diffs: list[int] = []
    ordered = 0
    outcomes: dict[str, int] = {}
    rejected_by: dict[str, int] = {}
    n = 0
    seed = a.seed
    while time.monotonic() < stop and (not a.max_cases or n < a.max_cases):
        docs = generate(seed, a.k8s)
        classes, _lines, res, err = oracle.check(docs)
        tally(res, outcomes, rejected_by)
        nodes = sum(1 for d in docs if d.get("kind") == "Node")
        if a.order_check == "all" or (a.order_check == "large" and nodes >= LARGE):
            ordered += 1
            if order_lines(docs, a.k8s, seed):
                order_diffs.append(seed)
                print(f"seed {seed}: kdiagnose's report depends on document order", flush=True)
                (out / f"order-seed-{seed}.txt").write_text(
                    "\n".join(order_lines(docs, a.k8s, seed)[:50]) + "\n"
                )
        n += 1
        if n % 25 == 0:
            print(f"{n} scenarios (seed {seed}), {len(seen)} difference classes", flush=True)
        if err:
            harness_errors[err] = harness_errors.get(err, 0) + 1
        for cls in sorted(classes - set(seen)):
            print(f"seed {seed}: new difference class {cls}", flush=True)

            def keep(cand: Docs, cls: str = cls) -> bool:
                return cls in oracle.check(cand)[0]

            small = shrink(docs, keep, a.shrink_seconds)
            _, small_lines, small_res, _ = oracle.check(small)
            slug = re.sub(r"[^A-Za-z0-9_.+-]+", "_", cls)[:80]
            oracle.write(small, out / f"{slug}.yaml")
            (out / f"{slug}.json").write_text(json.dumps(small_res, indent=2) + "\n")
            text = "\n".join(line for line in small_lines if classify(line) == cls)
            (out / f"{slug}.diff.txt").write_text(f"# seed {seed}, {a.k8s}, class {cls}\n{text}\n")
            print(
                f"  shrunk {len(docs)} -> {len(small)} documents: {out / slug}.yaml\n  {text[:600]}",
                flush=True,
            )
            seen[cls] = {"seed": seed, "count": 0, "file": f"{slug}.yaml", "docs": len(small)}
        for cls in classes:
            seen[cls]["count"] += 1
        seed += 1
    summary = {
        "k8s": a.k8s,
        "scenarios": n,
        "first_seed": a.seed,
        "last_seed": seed - 1,
        "minutes": a.minutes,
        "harness_runs": oracle.runs,
        "classes": seen,
        "harness_errors": harness_errors,
        "random_ties_resolved": oracle.ties,
        "outcomes": dict(sorted(outcomes.items())),
        "pods_with_nodes_rejected_by": dict(sorted(rejected_by.items(), key=lambda kv: -kv[1])),
        "order_checked": ordered,
        "order_dependent_seeds": order_diffs,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 1 if seen or order_diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
