"""Hostile and partial inputs: every bad input is one `kdiagnose: error:` line and exit 3, never a traceback.

(a) A deterministic mutation fuzzer over fixtures/golden/*.yaml (wrong types, deleted keys, bad quantities,
    malformed selectors/taints/tolerations/spread constraints, odd names, duplicates, dangling references);
(b) targeted malformed files (truncated, binary, empty, YAML bombs, deep nesting, non-UTF-8, ...);
(c) "missing object class" honesty: a check that needs objects the input lacks says "not checked: ...".
KDIAGNOSE_FUZZ_RUNS=N runs N variants per golden file instead of the quick sample.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kdiagnose.cli import app

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = sorted((ROOT / "fixtures" / "golden").glob("*.yaml"))
Obj = dict[str, Any]
Path_ = list[str | int]

# ---------------------------------------------------------------------------------------------- running


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args)
    # An exception escaping the app would show as exit 1 with no output: that is a crash, not a verdict.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout, result.stderr


def check_outcome(code: int, out: str, err: str, what: str) -> None:
    """The contract for any input: a verdict (0/1) with parseable JSON, or exactly one clean error line."""
    assert code in (0, 1, 3), f"{what}: exit {code}\n{err}"
    if code == 3:
        lines = err.splitlines()
        assert len(lines) == 1, f"{what}: stderr is not one line:\n{err}"
        assert lines[0].startswith("kdiagnose: error:"), f"{what}: {err}"
        assert "internal error" not in err and "Traceback" not in err, f"{what}: {err}"
    else:
        assert "Traceback" not in err and "internal error" not in err, f"{what}: {err}"
        doc = json.loads(out)
        assert doc["kind"] == "Diagnosis", what


def diagnose(path: Path | str, *extra: str) -> tuple[int, str, str]:
    return run(["diagnose", str(path), "-o", "json", *extra])


# ---------------------------------------------------------------------------------------------- mutator

WRONG_TYPES: list[Any] = [[], ["x", 1], {}, {"x": 1}, "x", "", 0, -7, None, True, False, 1.5]
BAD_QUANTITIES: list[Any] = [
    "1.2.3",
    "abc",
    "-",
    "1e999999",
    "9" * 400,
    "1e18E",
    10**40,
    -(10**30),
    "",
    " ",
    "0x10",
    "1Ki2",
    float("1e308"),
    True,
    [],
    {"a": 1},
]
ODD_NAMES = ["🚀-pod", "ünïcødé", "名前", "x" * 5000, "a/b", "with space", "-", "." * 3, "\u200b", "0"]
BAD_OPERATORS = ["Foo", "", "in", "Gt", "Lt", "NotIn ", None, 3, ["In"]]
QUANTITY_PARENTS = {
    "requests",
    "limits",
    "allocatable",
    "capacity",
    "overhead",
    "hard",
    "min",
    "max",
    "default",
}


def _paths(value: Any, prefix: Path_) -> Iterator[Path_]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, [*prefix, k])
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, [*prefix, i])


def _get(obj: Any, path: Path_) -> Any:
    for p in path:
        obj = obj[p]
    return obj


def _set(obj: Any, path: Path_, value: Any) -> None:
    _get(obj, path[:-1])[path[-1]] = value


def _delete(obj: Any, path: Path_) -> None:
    parent = _get(obj, path[:-1])
    del parent[path[-1]]


def _wrong_type_for(value: Any, rng: random.Random) -> Any:
    choices = [w for w in WRONG_TYPES if type(w) is not type(value)]
    return copy.deepcopy(rng.choice(choices))


def _pending_pods(docs: list[Obj]) -> list[Obj]:
    return [d for d in docs if d.get("kind") == "Pod" and not (d.get("spec") or {}).get("nodeName")]


def _of_kind(docs: list[Obj], *kinds: str) -> list[Obj]:
    return [d for d in docs if d.get("kind") in kinds]


def _target_pod(docs: list[Obj], rng: random.Random) -> Obj | None:
    pods = _pending_pods(docs) or _of_kind(docs, "Pod")
    return rng.choice(pods) if pods else None


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def m_wrong_type(docs: list[Obj], rng: random.Random) -> None:
    doc = rng.choice(docs)
    paths = [p for p in _paths(doc, []) if p and p != ["kind"]]
    if paths:
        p = rng.choice(paths)
        _set(doc, p, _wrong_type_for(_get(doc, p), rng))


def m_delete_key(docs: list[Obj], rng: random.Random) -> None:
    doc = rng.choice(docs)
    wanted = [["metadata", "name"], ["metadata"], ["spec"], ["status"], ["spec", "containers"]]
    wanted += [p for p in _paths(doc, []) if p and p[-1] in ("resources", "key", "values", "topologyKey")]
    present = []
    for p in wanted:
        try:
            _get(doc, p)
            present.append(p)
        except (KeyError, IndexError, TypeError):
            continue
    if not present:
        present = [p for p in _paths(doc, []) if p and isinstance(p[-1], str) and p != ["kind"]]
    if present:
        _delete(doc, rng.choice(present))


def m_bad_quantity(docs: list[Obj], rng: random.Random) -> None:
    spots = []
    for i, doc in enumerate(docs):
        for p in _paths(doc, []):
            if len(p) >= 2 and p[-2] in QUANTITY_PARENTS and isinstance(p[-1], str):
                spots.append((i, p))
            elif p and p[-1] in ("storage", "capacity", "maximumVolumeSize"):
                spots.append((i, p))
    if spots:
        i, p = rng.choice(spots)
        _set(docs[i], p, copy.deepcopy(rng.choice(BAD_QUANTITIES)))


def m_labels_as_list(docs: list[Obj], rng: random.Random) -> None:
    doc = rng.choice(docs)
    meta = doc.setdefault("metadata", {})
    if isinstance(meta, dict):
        meta[rng.choice(["labels", "annotations"])] = ["app=web", {"a": "b"}]


def m_taints(docs: list[Obj], rng: random.Random) -> None:
    nodes = _of_kind(docs, "Node")
    if not nodes:
        return
    node = rng.choice(nodes)
    taint = rng.choice(
        [{"effect": "NoSchedule"}, {"key": "k"}, {"key": "k", "effect": "Bogus"}, "k=v:NoSchedule", None]
    )
    _spec(node).setdefault("taints", []).append(taint) if isinstance(
        _spec(node).get("taints"), list
    ) else None
    if not isinstance(_spec(node).get("taints"), list):
        _spec(node)["taints"] = [taint]


def m_tolerations(docs: list[Obj], rng: random.Random) -> None:
    pod = _target_pod(docs, rng)
    if pod is not None:
        tol = rng.choice(
            [
                {"key": "k", "operator": "Foo", "value": "v"},
                {"operator": "Exists", "effect": "Bogus"},
                {"key": "k", "operator": "Exists", "value": "v"},
                {"tolerationSeconds": "soon", "effect": "NoExecute", "operator": "Exists"},
                "dedicated=batch",
            ]
        )
        _spec(pod)["tolerations"] = [tol]


def m_affinity_strings(docs: list[Obj], rng: random.Random) -> None:
    pod = _target_pod(docs, rng)
    if pod is None:
        return
    kind = rng.choice(["nodeAffinity", "podAffinity", "podAntiAffinity"])
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    pref = "preferredDuringSchedulingIgnoredDuringExecution"
    shape: Any = rng.choice(
        [
            "zone=a",
            {req: "x"},
            {req: ["term-as-string"]},
            {req: {"nodeSelectorTerms": "x"}},
            {req: {"nodeSelectorTerms": ["x", None]}},
            {pref: ["x"]},
            {pref: [{"weight": "heavy", "preference": "x"}]},
            {pref: [{"weight": 10, "podAffinityTerm": "x"}]},
            {req: [{"labelSelector": "app=web", "topologyKey": 3}]},
        ]
    )
    _spec(pod).setdefault("affinity", {})
    if not isinstance(_spec(pod)["affinity"], dict):
        _spec(pod)["affinity"] = {}
    _spec(pod)["affinity"][kind] = shape


def _expr(rng: random.Random) -> Any:
    return rng.choice(
        [
            {"key": "zone", "operator": "In"},
            {"key": "zone", "operator": "In", "values": None},
            {"key": "zone", "operator": "In", "values": "a"},
            {"key": "zone", "operator": "Exists", "values": ["a"]},
            {"key": "zone", "operator": rng.choice(BAD_OPERATORS), "values": ["a"]},
            {"operator": "In", "values": ["a"]},
            {"key": "zone", "operator": "Gt", "values": ["x"]},
            {"key": "zone", "operator": "Gt", "values": ["1", "2"]},
            "zone in (a)",
        ]
    )


def m_match_expressions(docs: list[Obj], rng: random.Random) -> None:
    pod = _target_pod(docs, rng)
    if pod is None:
        return
    spec = _spec(pod)
    where = rng.choice(["node", "pod", "anti", "spread"])
    if where == "node":
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{rng.choice(["matchExpressions", "matchFields"]): [_expr(rng)]}]
                }
            }
        }
    elif where in ("pod", "anti"):
        key = "podAffinity" if where == "pod" else "podAntiAffinity"
        sel = rng.choice(["labelSelector", "namespaceSelector"])
        spec["affinity"] = {
            key: {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {sel: {"matchExpressions": [_expr(rng)]}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    else:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchExpressions": [_expr(rng)]},
            }
        ]


def m_spread(docs: list[Obj], rng: random.Random) -> None:
    pod = _target_pod(docs, rng)
    if pod is None:
        return
    base: Obj = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    broken = rng.choice(
        [
            {"maxSkew": 0},
            {"maxSkew": -1},
            {"maxSkew": "1"},
            {"topologyKey": None},
            {"topologyKey": ""},
            {"whenUnsatisfiable": "Sometimes"},
            {"minDomains": 0},
            {"minDomains": "two"},
            {"labelSelector": "app=web"},
            {"labelSelector": {"matchLabels": ["app"]}},
            {"matchLabelKeys": "app"},
            {"matchLabelKeys": ["app", 3]},
            {"nodeAffinityPolicy": "Maybe"},
            {"nodeTaintsPolicy": 1},
        ]
    )
    c = {**base, **broken}
    if c.get("topologyKey") is None:
        c.pop("topologyKey")
    _spec(pod)["topologySpreadConstraints"] = [c]


def m_selectors(docs: list[Obj], rng: random.Random) -> None:
    """Selectors of the kinds plugins read raw: Services, ReplicaSets, PDBs, node selectors."""
    bad_sel = rng.choice(
        [
            {"matchExpressions": [{"key": "app", "operator": rng.choice(BAD_OPERATORS), "values": ["web"]}]},
            {"matchLabels": "app=web"},
            {"matchLabels": {"app": ["web"]}},
            {"matchExpressions": "x"},
            "app=web",
            ["app"],
        ]
    )
    owners = _of_kind(docs, "Service", "ReplicaSet", "StatefulSet", "PodDisruptionBudget", "Deployment")
    if owners and rng.random() < 0.6:
        o = rng.choice(owners)
        _spec(o)["selector"] = bad_sel
        return
    pod = _target_pod(docs, rng)
    if pod is not None:
        _spec(pod)["nodeSelector"] = rng.choice([["zone"], "zone=a", {"zone": None}, {"zone": 3}, {3: "a"}])


def m_odd_names(docs: list[Obj], rng: random.Random) -> None:
    doc = rng.choice(docs)
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        meta[rng.choice(["name", "namespace", "uid"])] = rng.choice(ODD_NAMES)
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if isinstance(labels, dict):
        labels[rng.choice(ODD_NAMES)] = rng.choice(ODD_NAMES)


def m_long_strings(docs: list[Obj], rng: random.Random) -> None:
    doc = rng.choice(docs)
    strings = [p for p in _paths(doc, []) if p and isinstance(_get(doc, p), str) and p != ["kind"]]
    if strings:
        _set(doc, rng.choice(strings), "Z" * rng.choice([1024, 70000]))


def m_duplicate(docs: list[Obj], rng: random.Random) -> None:
    doc = rng.choice(docs)
    twin = copy.deepcopy(doc)
    if rng.random() < 0.5 and isinstance(twin.get("spec"), dict) and twin.get("kind") == "Node":
        twin["status"] = {"allocatable": {"cpu": "1"}}
    docs.insert(rng.randrange(len(docs) + 1), twin)


def m_bound_to_missing_node(docs: list[Obj], rng: random.Random) -> None:
    pods = _of_kind(docs, "Pod")
    if pods:
        pod = rng.choice(pods)
        _spec(pod)["nodeName"] = rng.choice(["ghost-node", "", "🚀"])


def m_missing_storage_class(docs: list[Obj], rng: random.Random) -> None:
    pvcs = _of_kind(docs, "PersistentVolumeClaim", "PersistentVolume")
    if pvcs:
        _spec(rng.choice(pvcs))["storageClassName"] = rng.choice(["no-such-class", "", None, 5, ["x"]])
        return
    pod = _target_pod(docs, rng)
    if pod is not None:
        ns = (pod.get("metadata") or {}).get("namespace") or "default"
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "fuzz-claim", "namespace": ns},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "no-such-class",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        )
        vols = _spec(pod).get("volumes")
        vol = {"name": "fuzz", "persistentVolumeClaim": {"claimName": "fuzz-claim"}}
        _spec(pod)["volumes"] = [*vols, vol] if isinstance(vols, list) else [vol]


def m_raw_kind_fields(docs: list[Obj], rng: random.Random) -> None:
    """Wrong types inside the raw kinds plugins read (PVC/PV/StorageClass/CSINode/PDB/DRA/...)."""
    raw = [d for d in docs if d.get("kind") not in ("Pod", "Node", "Namespace")]
    if not raw:
        return
    doc = rng.choice(raw)
    paths = [
        p for p in _paths(doc, []) if len(p) >= 2 and p[0] in ("spec", "status", "allocation", "devices")
    ]
    paths = paths or [p for p in _paths(doc, []) if p and p != ["kind"]]
    if paths:
        p = rng.choice(paths)
        _set(doc, p, _wrong_type_for(_get(doc, p), rng))


MUTATIONS: list[Callable[[list[Obj], random.Random], None]] = [
    m_wrong_type,
    m_wrong_type,
    m_wrong_type,
    m_delete_key,
    m_delete_key,
    m_bad_quantity,
    m_bad_quantity,
    m_labels_as_list,
    m_taints,
    m_tolerations,
    m_affinity_strings,
    m_match_expressions,
    m_match_expressions,
    m_spread,
    m_spread,
    m_selectors,
    m_odd_names,
    m_long_strings,
    m_duplicate,
    m_bound_to_missing_node,
    m_missing_storage_class,
    m_raw_kind_fields,
    m_raw_kind_fields,
]
VARIANTS_PER_FILE = 36


def variants(path: Path, count: int = VARIANTS_PER_FILE) -> Iterator[tuple[str, list[Obj]]]:
    """`count` mutated copies of a golden file, the same every run (seeded by the file name)."""
    base = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    for n in range(count):
        rng = random.Random(f"{path.name}:{n}")
        docs = copy.deepcopy(base)
        applied = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            m = rng.choice(MUTATIONS)
            if docs:
                m(docs, rng)
                applied.append(m.__name__)
        yield f"{path.stem}#{n}({'+'.join(applied)})", docs


def dump(docs: list[Obj], rng: random.Random) -> str:
    """Half the variants as JSON streams, half as YAML: both loaders see hostile values."""
    if rng.random() < 0.5:
        return "\n".join(json.dumps(d, ensure_ascii=False) for d in docs) + "\n"
    return yaml.safe_dump_all(docs, allow_unicode=True, sort_keys=False)


def _sample() -> list[tuple[Path, int]]:
    """Which (file, variant) pairs run: a seeded sample by default (the suite must stay fast), or all."""
    per_file = int(os.environ.get("KDIAGNOSE_FUZZ_RUNS", "0"))
    if per_file:
        return [(p, n) for p in GOLDEN for n in range(per_file)]
    rng = random.Random(20250601)
    return [(p, rng.randrange(VARIANTS_PER_FILE)) for p in GOLDEN for _ in range(3)]


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in GOLDEN])
def test_golden_files_are_clean_baselines(path: Path) -> None:
    """The unmutated inputs diagnose (exit 0 or 1): a fuzz failure is the mutation's doing."""
    code, out, err = diagnose(path)
    check_outcome(code, out, err, path.name)
    assert code in (0, 1), err


def test_mutation_fuzzer(tmp_path: Path) -> None:
    """Every sampled mutant of every golden case is a verdict or one clean error line (exit 3)."""
    by_file: dict[Path, set[int]] = {}
    for p, n in _sample():
        by_file.setdefault(p, set()).add(n)
    failures: list[str] = []
    ran = 0
    for path, wanted in sorted(by_file.items()):
        for n, (label, docs) in enumerate(variants(path, max(wanted) + 1)):
            if n not in wanted:
                continue
            f = tmp_path / f"{path.stem}-{n}.yaml"
            f.write_text(dump(docs, random.Random(label)), encoding="utf-8")
            code, out, err = diagnose(f)
            ran += 1
            try:
                check_outcome(code, out, err, label)
            except (AssertionError, json.JSONDecodeError) as e:
                failures.append(f"{label}: {str(e)[:400]}")
    assert ran >= len(GOLDEN)
    assert not failures, f"{len(failures)} of {ran} mutants broke the contract:\n" + "\n".join(failures[:20])
