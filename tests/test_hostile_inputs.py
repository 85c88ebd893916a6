"""Hostile input, round 2: the former unhandled exceptions, each now one error line with its exit code.

4,300-digit integers everywhere (Python refuses to convert them), scheduler configurations that are nested
or not UTF-8 (exit 2, like every bad configuration), `--pools` of the wrong shape, `check -f` manifests with
wrong types or 2,147,483,647 replicas, and an error inside the streaming JSON loader's fallback.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kdiagnose.cli import app

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = str(ROOT / "fixtures" / "check" / "cluster-two-nodes.yaml")
SEED = str(ROOT / "fixtures" / "golden" / "seed-hello-web.yaml")
BIG = "9" * 5000
NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}\n'
CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stderr


def one_error(args: list[str], needle: str, want: int = 3) -> None:
    start = time.monotonic()
    code, err = run(args)
    assert time.monotonic() - start < 10
    lines = err.splitlines()
    assert code == want, err
    assert lines and lines[0].startswith("kdiagnose: error:") and "internal error" not in err, err
    assert all(x.startswith("kdiagnose: ") for x in lines), err
    assert needle in err, err


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param("q.yaml", NODE + f"---\nkind: Pod\nmetadata: {{name: p}}\nspec: {{containers: [{{name: c, resources: {{requests: {{cpu: {BIG}}}}}}}]}}\n", id="YAML quantity"),
        pytest.param("b.yaml", NODE + f"---\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  priority: {BIG}\n", id="YAML block integer"),
        pytest.param("p.json", '{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"priority": ' + BIG + "}}", id="JSON number"),
        pytest.param("s.json", '{"kind": "Node", "metadata": {"name": "n"}}\n{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"priority": ' + BIG + "}}", id="JSON stream"),
    ],
)  # fmt: skip
def test_huge_integers_in_dumps(tmp_path: Path, name: str, text: str) -> None:
    f = tmp_path / name
    f.write_text(text)
    one_error(["diagnose", str(f)], "integer with more than 1000 digits")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # A hex uid of digits and one "e", unquoted (PyYAML, a YAML 1.1 writer, leaves it so): a YAML 1.2
        # float, out of range. The error names the field, and the document of a stream.
        pytest.param(
            "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata:\n    name: n1\n    uid: 31415e92653589793238462643383279\n",
            "items[0].metadata.uid",
            id="List item",
        ),
        pytest.param(NODE + "---\nkind: Pod\nmetadata: {name: p, uid: 1e999}\nspec: {}\n", "metadata.uid", id="second document"),
    ],
)  # fmt: skip
def test_a_float_out_of_range_names_its_field(tmp_path: Path, text: str, where: str) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(text)
    one_error(["diagnose", str(f)], f"{where}: number out of range (inf); quote it if it is a string")


def test_huge_integer_in_a_cel_literal(tmp_path: Path) -> None:
    from tests.test_hostile_cel import diagnose

    code, doc, _, _ = diagnose(tmp_path, f"device.attributes.size() < {BIG}")
    assert code == 1 and "invalid int literal" in json.dumps(doc)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        pytest.param(CONFIG + f"parallelism: {BIG}\n", "integer with more than 1000 digits", id="huge integer"),
        pytest.param(CONFIG + "profiles: " + "[" * 1000 + "]" * 1000 + "\n", "nested more than 200 levels deep", id="nested 1000 deep"),
        pytest.param(CONFIG + "x:\n" + "".join(" " * i + "- \n" for i in range(1, 400)), "nested more than 200 levels deep", id="block nesting"),
        pytest.param(b"\xff\xfeapiVersion: x\n", "not UTF-8", id="not UTF-8"),
        pytest.param(b"\x00" * 100, "binary file", id="binary"),
        pytest.param(CONFIG + "a: &a [x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)), "aliases expand", id="billion laughs"),
    ],
)  # fmt: skip
def test_bad_scheduler_configurations_are_usage_errors(
    tmp_path: Path, content: str | bytes, needle: str
) -> None:
    f = tmp_path / "config.yaml"
    if isinstance(content, bytes):
        f.write_bytes(content)
    else:
        f.write_text(content)
    one_error(["diagnose", SEED, "--scheduler-config", str(f)], needle, want=2)


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        pytest.param(f"- name: p\n  allocatable: {{cpu: {BIG}}}\n", "integer with more than 1000 digits", id="huge integer"),
        pytest.param([{"name": "p", "max": f"{BIG}"}], "expected an integer", id="max a string"),
        pytest.param([{"allocatable": {"cpu": "1"}}], "a pool needs a name", id="no name"),
        pytest.param([{"name": "p", "labels": ["a"]}], "must be mappings", id="labels a list"),
        pytest.param([{"name": "p", "taints": "gpu"}], "taints: must be a list", id="taints a string"),
        pytest.param({"pools": "x"}, "expected a list of pools", id="pools a string"),
    ],
)  # fmt: skip
def test_bad_pools_files(tmp_path: Path, doc: Any, needle: str) -> None:
    f = tmp_path / "pools.yaml"
    f.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    one_error(["diagnose", SEED, "--pools", str(f)], needle)


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]},
        },
    },
}


def _check(tmp_path: Path, **spec: Any) -> list[str]:
    doc = json.loads(json.dumps(DEPLOYMENT))
    for path, value in spec.items():
        target = doc
        parts = path.split("__")
        for p in parts[:-1]:
            target = target[int(p)] if isinstance(target, list) else target[p]
        target[parts[-1]] = value
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump(doc))
    return ["check", "--no-config", "--no-remedies", "-f", str(f), "--snapshot", CLUSTER]


def test_check_base_manifest_passes(tmp_path: Path) -> None:
    assert run(_check(tmp_path))[0] == 0


def test_check_replicas_at_int32_max_is_capped(tmp_path: Path) -> None:
    one_error(_check(tmp_path, spec__replicas=2147483647), "spec.replicas 2147483647 is more than the 10000")


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        pytest.param("spec__replicas", "2", "spec.replicas", id="replicas a string"),
        pytest.param("spec__replicas", -1, "greater than or equal to 0", id="negative replicas"),
        pytest.param("spec__template", ["x"], "spec.template", id="template a list"),
        pytest.param("spec__template__spec__containers", "c", "containers", id="containers a string"),
        pytest.param("spec__template__spec__tolerations", {"key": "x"}, "tolerations", id="tolerations a map"),
        pytest.param("spec__template__metadata__labels", ["app"], "labels", id="labels a list"),
        pytest.param("spec__selector", "app=web", "spec.selector", id="selector a string"),
    ],
)  # fmt: skip
def test_check_manifests_with_wrong_types(tmp_path: Path, field: str, value: Any, needle: str) -> None:
    one_error(_check(tmp_path, **{field: value}), needle)


def test_an_error_inside_the_streaming_loaders_fallback(tmp_path: Path) -> None:
    # A >16 MB kubectl-layout List (streamed) whose one item has an unexpected type (the slim decoder's
    # fallback) and a number msgspec refuses: the streamed decode gives up and the whole-file path says why.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "d"},
        "spec": {"nodeName": "n"},
    }
    items = [
        json.dumps({**pod, "metadata": {"name": f"p{i}", "namespace": "d"}}, indent=4) for i in range(70_000)
    ]
    bad = json.dumps({**pod, "spec": {"nodeName": "n", "containers": "c", "priority": 0}}, indent=4)
    bad = bad.replace('"priority": 0', f'"priority": {BIG}')  # the slim decoder fails, then the whole one
    body = ",\n".join("\n".join("        " + line for line in it.splitlines()) for it in [*items, bad])
    text = (
        '{\n    "apiVersion": "v1",\n    "items": [\n' + body.lstrip() + '\n    ],\n    "kind": "List"\n}\n'
    )
    text = text.replace('"items": [\n{', '"items": [\n        {')
    f = tmp_path / "big.json"
    f.write_text(text)
    assert f.stat().st_size > 16 << 20
    one_error(["diagnose", str(f)], "big.json")
