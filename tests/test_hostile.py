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
            quantity_key = len(p) >= 2 and p[-2] in QUANTITY_PARENTS and isinstance(p[-1], str)
            if quantity_key or (p and p[-1] in ("storage", "capacity", "maximumVolumeSize")):
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
    spec = _spec(rng.choice(nodes))
    taint = rng.choice(
        [{"effect": "NoSchedule"}, {"key": "k"}, {"key": "k", "effect": "Bogus"}, "k=v:NoSchedule", None]
    )
    taints = spec.get("taints")
    spec["taints"] = [*taints, taint] if isinstance(taints, list) else [taint]


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


FUZZ_SAMPLE = 60  # mutants per quick run: a few seconds in-process; KDIAGNOSE_FUZZ_RUNS runs them all


def _sample() -> list[tuple[Path, int]]:
    """Which (file, variant) pairs run: a seeded sample by default (the suite must stay fast), or all."""
    per_file = int(os.environ.get("KDIAGNOSE_FUZZ_RUNS", "0"))
    if per_file:
        return [(p, n) for p in GOLDEN for n in range(per_file)]
    rng = random.Random(20250601)
    pairs = [(p, n) for p in GOLDEN for n in range(VARIANTS_PER_FILE)]
    return sorted(rng.sample(pairs, min(FUZZ_SAMPLE, len(pairs))))


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in GOLDEN[::16]])
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
    assert ran == len(_sample())
    assert not failures, f"{len(failures)} of {ran} mutants broke the contract:\n" + "\n".join(failures[:20])


# ---------------------------------------------------------------------------------------------- (b) targeted

NODE_YAML = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  allocatable: {cpu: '4', memory: 8Gi, pods: '110'}\n"
POD_YAML = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n"
    "spec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: '1'}}\n"
)


def _node(name: str = "n1", **extra: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        **extra,
    }


def _pod(name: str = "p", **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], **spec},
    }


def _write_docs(path: Path, docs: list[Obj]) -> Path:
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return path


def _tarball(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _billion_laughs() -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return NODE_YAML + "\n".join(lines) + "\n"


# (file name, content) -> text the single error line must contain.
BAD_FILES = [
    pytest.param(
        "t.yaml",
        NODE_YAML + "---\n" + POD_YAML[:60] + "\n  labels: {a: [\n",
        "invalid YAML",
        id="truncated YAML",
    ),
    pytest.param("b.yaml", bytes(range(256)) * 8, "binary file", id="binary file"),
    pytest.param("e.yaml", b"", "empty file", id="empty file"),
    pytest.param("n.yaml", NODE_YAML.encode() + b"\x00\x00", "binary file", id="NUL bytes"),
    pytest.param("u.yaml", NODE_YAML.replace("n1", "caf\xe9").encode("latin-1"), "not UTF-8", id="non-UTF-8"),
    pytest.param(
        "w.yaml",
        "apiVersion: x/v1\nkind: Widget\nmetadata: {name: w}\n",
        "no objects of a kind kdiagnose reads",
        id="unknown kinds only",
    ),
    pytest.param(
        "l.yaml",
        "apiVersion: v1\nkind: List\nitems: null\n",
        "no Kubernetes objects",
        id="a List with items null",
    ),
    pytest.param("s.yaml", "x" * 10_000_000, "not a Kubernetes object", id="a 10 MB single line"),
    pytest.param("bomb.yaml", _billion_laughs(), "alias", id="billion laughs YAML bomb"),
    pytest.param(
        "deep.yaml",
        NODE_YAML + "x: " + "[" * 50_000 + "]" * 50_000 + "\n",
        "nested more than 200 levels deep",
        id="deeply nested YAML",
    ),
    pytest.param(
        "deepmap.yaml",
        NODE_YAML + "x: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n",
        "nested more than 200 levels deep",
        id="deeply nested YAML mappings",
    ),
    pytest.param(
        "q.yaml",
        NODE_YAML.replace("cpu: '4'", "cpu: 1.2.3"),
        "Node n1 status.allocatable.cpu",
        id="invalid quantity in a node's allocatable names the node and field",
    ),
    pytest.param(
        "r.yaml",
        NODE_YAML + "---\n" + POD_YAML.replace("cpu: '1'", "cpu: '1', memory: abc"),
        "(document 2",
        id="invalid quantity in a pod's requests names the document",
    ),
    pytest.param(
        "r2.yaml",
        NODE_YAML + "---\n" + POD_YAML.replace("cpu: '1'", "cpu: '1', memory: abc"),
        "Pod default/p spec.containers[0].resources.requests.memory",
        id="invalid quantity in a pod's requests names the pod and field",
    ),
]


@pytest.mark.parametrize(("name", "content", "needle"), BAD_FILES)
def test_bad_files_are_one_error_line(tmp_path: Path, name: str, content: str | bytes, needle: str) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    code, out, err = diagnose(path)
    check_outcome(code, out, err, name)
    assert code == 3
    assert str(path) in err and needle in err
    assert out == ""


def test_yaml_bomb_does_not_blow_up_memory(tmp_path: Path) -> None:
    import resource

    path = tmp_path / "bomb.yaml"
    path.write_text(_billion_laughs())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, out, err = diagnose(path)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    check_outcome(code, out, err, "bomb")
    assert code == 3
    assert grown_mb < 500, f"the bomb grew the process by {grown_mb:.0f} MB"


def test_directory_without_objects(tmp_path: Path) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "a.yaml").write_text("# nothing here\n")
    (tmp_path / "d" / "sub" / "b.json").write_text("")
    code, out, err = diagnose(tmp_path / "d")
    check_outcome(code, out, err, "dir")
    assert code == 3 and "no Kubernetes objects" in err


def test_tarball_with_a_bad_member_names_the_member(tmp_path: Path) -> None:
    tar = _tarball(
        tmp_path / "dump.tar.gz",
        {"ok.yaml": NODE_YAML.encode(), "bad.yaml": b"kind: Pod\nmetadata: {name: [\n"},
    )
    code, out, err = diagnose(tar)
    check_outcome(code, out, err, "tar")
    assert code == 3 and f"{tar}:bad.yaml" in err and "invalid YAML" in err


def test_truncated_tarball(tmp_path: Path) -> None:
    tar = _tarball(tmp_path / "dump.tar.gz", {"ok.yaml": NODE_YAML.encode() * 50})
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(tar.read_bytes()[:80])
    code, out, err = diagnose(cut)
    check_outcome(code, out, err, "cut tar")
    assert code == 3 and str(cut) in err


def test_json_array_at_top_level_is_a_list_of_objects(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps([_node(), _pod()]))
    code, out, err = diagnose(path)
    check_outcome(code, out, err, "array")
    assert code == 0 and json.loads(out)["summary"]["nodes"] == 1


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(
        json.dumps(_node()) + "\n" + '{"kind": "Pod", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    )
    code, out, err = diagnose(path)
    check_outcome(code, out, err, "deep json")


# What the API server would reject: one line naming the object and the field (model/validation.py).
REJECTED = [
    pytest.param(
        [_node(), {**_pod(), "spec": "x"}], "Pod default/p spec: must be a mapping", id="spec as a string"
    ),
    pytest.param(
        [_node(), _pod(containers=3.5)],
        "Pod default/p spec.containers: must be a list",
        id="containers as a number",
    ),
    pytest.param(
        [_node(), {**_pod(), "metadata": {"name": "p", "labels": ["app=web"]}}],
        "Pod default/p metadata.labels: must be a mapping, not a list",
        id="labels as a list",
    ),
    pytest.param(
        [_node(), _pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "-1"}}}])],
        "requests.cpu: Invalid value: '-1': must be greater than or equal to 0",
        id="a negative request",
    ),
    pytest.param(
        [_node(), _pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "1e40"}}}])],
        "exceeds the int64 range",
        id="a request beyond int64",
    ),
    pytest.param(
        [_node(), _pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "1e999999"}}}])],
        "requests.cpu",
        id="an absurd exponent",
    ),
    pytest.param(
        [_node(spec={"taints": [{"effect": "NoSchedule"}]}), _pod()],
        "Node n1 spec.taints[0].key: Required value",
        id="a taint without key",
    ),
    pytest.param(
        [_node(spec={"taints": [{"key": "k"}]}), _pod()],
        "Node n1 spec.taints[0].effect: Unsupported value",
        id="a taint without effect",
    ),
    pytest.param(
        [_node(), _pod(tolerations=[{"key": "k", "operator": "Foo"}])],
        "spec.tolerations[0].operator: Unsupported value: 'Foo'",
        id="a toleration with operator Foo",
    ),
    pytest.param(
        [_node(), _pod(affinity={"nodeAffinity": "zone=a"})],
        "spec.affinity.nodeAffinity: must be a mapping, not a string",
        id="an affinity as a string",
    ),
    pytest.param(
        [
            _node(),
            _pod(
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]
                        }
                    }
                }
            ),
        ],
        "matchExpressions[0].values: Required value",
        id="matchExpressions In without values",
    ),
    pytest.param(
        [
            _node(),
            _pod(
                topologySpreadConstraints=[
                    {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            ),
        ],
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        id="a spread constraint with maxSkew 0",
    ),
    pytest.param(
        [_node(), _pod(topologySpreadConstraints=[{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}])],
        "spec.topologySpreadConstraints[0].topologyKey: Required value",
        id="a spread constraint without topologyKey",
    ),
    pytest.param(
        [
            _node(),
            _pod(
                affinity={
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Foo"}]},
                                "topologyKey": "kubernetes.io/hostname",
                            }
                        ]
                    }
                }
            ),
        ],
        "labelSelector.matchExpressions[0].operator: Invalid value: 'Foo': not a valid selector operator",
        id="a label selector with an invalid operator",
    ),
    pytest.param(
        [
            _node(),
            _pod(),
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"storageClassName": ["fast"]},
            },
        ],
        "PersistentVolumeClaim default/c spec.storageClassName: must be a string, not a list",
        id="a PVC whose storageClassName is a list",
    ),
    pytest.param(
        [
            _node(),
            _pod(),
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "x"},
                "value": "high",
            },
        ],
        "PriorityClass x value: must be a integer",
        id="a PriorityClass whose value is a string",
    ),
    pytest.param(
        [_node(), _pod(), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": 7}}],
        "Namespace ns metadata.labels: must be a mapping, not a number",
        id="a Namespace whose labels are a number",
    ),
    pytest.param(
        [
            _node(),
            _pod(),
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "b", "namespace": "default"},
                "spec": {"selector": "app=web"},
            },
        ],
        "PodDisruptionBudget default/b spec.selector: must be a mapping, not a string",
        id="a PDB whose selector is a string",
    ),
    pytest.param(
        [_node(name="\u200b" + "x" * 5000, status={"allocatable": {"cpu": "abc"}}), _pod()],
        "(5001 characters)",
        id="a huge invisible node name is shown escaped and cut",
    ),
]


@pytest.mark.parametrize(("docs", "needle"), REJECTED)
def test_objects_the_api_server_would_reject(tmp_path: Path, docs: list[Obj], needle: str) -> None:
    path = _write_docs(tmp_path / "in.json", docs)
    code, out, err = diagnose(path)
    check_outcome(code, out, err, needle)
    assert code == 3, out[:300]
    assert needle in err and str(path) in err
    assert len(err) < 600


ACCEPTED = [
    pytest.param([_node(), _pod(), _pod()], id="a duplicate pod"),
    pytest.param([_node(), _node(status={"allocatable": {"cpu": "1"}}), _pod()], id="a duplicate node"),
    pytest.param(
        [_node(), {**_pod("bound"), "spec": {**_pod()["spec"], "nodeName": "ghost"}}, _pod()],
        id="a pod bound to a missing node",
    ),
    pytest.param(
        [_node(), {**_pod(), "metadata": {"name": "🚀-名前", "labels": {"ünï": "cødé"}}}],
        id="unicode and emoji names",
    ),
    pytest.param(
        [_node(), {**_pod(), "metadata": {"name": "p", "annotations": {"a": "Z" * 100_000}}}],
        id="an extremely long annotation",
    ),
    pytest.param(
        [_node(), {**_pod(), "metadata": {"name": "p", "labels": {"tier": 1, "on": True}}}],
        id="unquoted scalar label values",
    ),
]


@pytest.mark.parametrize("docs", ACCEPTED)
def test_odd_but_valid_inputs_get_a_verdict(tmp_path: Path, docs: list[Obj]) -> None:
    code, out, err = diagnose(_write_docs(tmp_path / "in.json", docs))
    check_outcome(code, out, err, "odd")
    assert code in (0, 1)


# ---------------------------------------------------------------------------------------------- (c) honesty

_SMALL_NODE = _node(status={"allocatable": {"cpu": "1", "memory": "8Gi", "pods": "110"}})
_VICTIM = {**_pod("victim"), "spec": {**_pod()["spec"], "nodeName": "n1", "priority": 0}}
_CLAIM_POD = _pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}])
_CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "gpu-claim", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}},
}
MISSING_CLASSES = [
    pytest.param(
        [_node(), _pod(volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])],
        "not checked: the input has no PersistentVolumeClaims",
        id="a pod with a PVC and no PersistentVolumeClaims in the input",
    ),
    pytest.param(
        [
            _node(),
            _pod(
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchLabels": {"app": "db"}},
                                "namespaceSelector": {"matchLabels": {"team": "a"}},
                                "topologyKey": "kubernetes.io/hostname",
                            }
                        ]
                    }
                }
            ),
        ],
        "not checked: the input has no Namespaces",
        id="a namespaceSelector and no Namespaces",
    ),
    pytest.param(
        [_SMALL_NODE, _VICTIM, {**_pod(), "spec": {**_pod()["spec"], "priority": 1000}}],
        "not checked: the input has no PodDisruptionBudgets",
        id="preemption without PodDisruptionBudgets",
    ),
    pytest.param(
        [_SMALL_NODE, _VICTIM, {**_pod(), "spec": {**_pod()["spec"], "priority": 1000}}],
        "not checked: the input has no PriorityClasses",
        id="preemption without PriorityClasses",
    ),
    pytest.param(
        [
            _SMALL_NODE,
            _VICTIM,
            {**_pod(), "spec": {**_pod()["spec"], "priority": 1000, "priorityClassName": "high"}},
        ],
        "not checked: PriorityClass high is not in the input",
        id="preemption with the pod's PriorityClass missing",
    ),
    pytest.param(
        [_node(), _CLAIM_POD, _CLAIM],
        "not checked: the input has no DeviceClasses",
        id="DRA claims without DeviceClasses",
    ),
    pytest.param(
        [_node(), _CLAIM_POD, _CLAIM],
        "the input has no ResourceSlices",
        id="DRA claims without ResourceSlices",
    ),
    pytest.param(
        [_node(), _CLAIM_POD],
        "not checked: the input has no ResourceClaims",
        id="DRA claim references without ResourceClaims",
    ),
]


@pytest.mark.parametrize(("docs", "note"), MISSING_CLASSES)
def test_missing_object_classes_are_reported_not_passed(tmp_path: Path, docs: list[Obj], note: str) -> None:
    path = _write_docs(tmp_path / "in.json", docs)
    code, out, err = diagnose(path)
    check_outcome(code, out, err, note)
    (pod,) = [p for p in json.loads(out)["pods"] if p["pod"] == "default/p"]
    assert any(n.startswith(note) for n in pod["notes"]), pod["notes"]
    code, human, _ = run(["diagnose", str(path), "--no-color"])
    assert note.split(":")[-1].split()[0] in " ".join(human.split())
    assert note[:40] in " ".join(human.split())


def test_no_priority_notes_when_priorities_decide_nothing(tmp_path: Path) -> None:
    """Every node is out for a reason preemption cannot fix: priorities and PDBs are irrelevant."""
    docs = [_node(spec={"unschedulable": True}), {**_pod(), "spec": {**_pod()["spec"], "priority": 1000}}]
    code, out, err = diagnose(_write_docs(tmp_path / "in.json", docs))
    check_outcome(code, out, err, "cordoned")
    (pod,) = json.loads(out)["pods"]
    assert not [n for n in pod["notes"] if "Priority" in n or "PodDisruptionBudget" in n]
