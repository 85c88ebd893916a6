"""`kdiagnose check` as CI runs it: in a git repository, from a subdirectory, on helm output and on broken
manifests. Every output is read as its consumer reads it (tests/ci_formats.py: the OASIS SARIF schema, the
Jenkins JUnit XSD, a strict GitHub workflow-command parser); lines and columns are those of the manifest
text below, counted by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kdiagnose.cli import app
from kdiagnose.gate.locate import DocRef, PathBase, Sources
from tests.check_cluster import FIX, low_priority_hogs
from tests.ci_formats import GithubCommand, github_commands, junit_cases, validate_junit, validate_sarif

# Lines, for the assertions: big's object at 7 (not the `---` at 6), its cpu request at 24:13; picky's
# object at 27, its nodeSelector key at 40:9; other-sched (another scheduler: not checked) at 45; vip
# (fits only by preempting a low-priority pod: a warning) at 52.
APP = """\
# app manifests
---
apiVersion: v1
kind: Service
metadata: {name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: big
spec:
  replicas: 1
  selector:
    matchLabels: {app: big}
  template:
    metadata:
      labels: {app: big}
    spec:
      containers:
      - name: app
        image: app:1
        resources:
          requests:
            cpu: "8"
            memory: 1Gi
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: picky
spec:
  replicas: 1
  selector:
    matchLabels: {app: picky}
  template:
    metadata:
      labels: {app: picky}
    spec:
      nodeSelector:
        disktype: ssd
      containers:
      - name: app
        image: app:1
---
apiVersion: v1
kind: Pod
metadata: {name: other-sched}
spec:
  schedulerName: my-scheduler
  containers: [{name: c, image: x}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vip
spec:
  replicas: 1
  selector:
    matchLabels: {app: vip}
  template:
    metadata:
      labels: {app: vip}
    spec:
      priorityClassName: high
      containers:
      - name: app
        image: app:1
        resources:
          requests: {cpu: "1"}
"""

HOGS = low_priority_hogs("3500m")

# `helm template rel charts/web`: the Deployment's cpu request on line 26 of this stream.
RENDERED = """\
---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: rel-web
---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rel-web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: web:1
        resources:
          requests:
            cpu: "6"
"""

TEMPLATE = """\
{{- if .Values.enabled }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  template:
    spec:
      containers:
      - name: web
        resources: {{- toYaml .Values.resources | nindent 10 }}
{{- end }}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree with the manifests in k8s/, a chart in charts/web, the cluster at the top; the
    working directory is k8s/ (where the issue's user ran it)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "k8s").mkdir()
    (root / "k8s" / "app.yaml").write_text(APP)
    (root / "cluster.yaml").write_text((FIX / "cluster-two-nodes.yaml").read_text() + HOGS)
    chart = root / "charts" / "web"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 0.1.0\n")
    (chart / "templates" / "deployment.yaml").write_text(TEMPLATE)
    monkeypatch.chdir(root / "k8s")
    return root


def _check(*args: str, stdin: str | None = None, remedies: bool = False) -> Any:
    flags = [
        "check",
        "--no-config",
        "--snapshot",
        "../cluster.yaml",
        *([] if remedies else ["--no-remedies"]),
    ]
    return CliRunner().invoke(app, [*flags, *args], input=stdin)


def _where(c: GithubCommand) -> tuple[str, str | None, str | None, str | None]:
    return (c.command, c.properties.get("file"), c.properties.get("line"), c.properties.get("col"))


# ---------------------------------------------------------------------------------------------- locations


def test_github_annotations_land_on_the_blamed_field_or_the_object_line(repo: Path) -> None:
    res = _check("-f", "app.yaml", "-o", "github")
    assert res.exit_code == 1, res.output
    commands, plain = github_commands(res.stdout)
    assert [_where(c) for c in commands] == [
        ("error", "k8s/app.yaml", "24", "13"),  # big: its containers[app] cpu request
        ("error", "k8s/app.yaml", "40", "9"),  # picky: the nodeSelector key no node has
        ("notice", "k8s/app.yaml", "45", "1"),  # other-sched: not checked (another scheduler)
        ("warning", "k8s/app.yaml", "52", "1"),  # vip: fits only by preemption (passes)
    ]
    big, picky, other, vip = commands
    assert big.properties["title"] == "kdiagnose: Deployment default/big (unschedulable)"
    assert big.message.splitlines()[:2] == [
        "Deployment default/big (k8s/app.yaml:7:1): 0 of 1 fit; replica 1: 0/2 nodes are available: "
        "2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        "field spec.template.spec.containers[app].resources.requests.cpu (k8s/app.yaml:24:13): Insufficient cpu",
    ]
    assert picky.message.splitlines()[1] == (
        "field spec.template.spec.nodeSelector.disktype (k8s/app.yaml:40:9): "
        "node(s) didn't match Pod's node affinity/selector"
    )
    assert other.message.startswith("Pod default/other-sched (k8s/app.yaml:45:1): not checked: ")
    assert vip.properties["title"] == "kdiagnose: Deployment default/vip (preemption)"
    assert plain == ["kdiagnose check: 2 of 4 workload(s) fail the policy (--fail-on unschedulable)"]


def test_sarif_regions_are_the_same_places_with_the_object_as_related_location(repo: Path) -> None:
    res = _check("-f", "app.yaml", "-o", "sarif")
    doc = json.loads(res.stdout)
    validate_sarif(doc)
    (run,) = doc["runs"]

    def place(loc: dict[str, Any]) -> tuple[str, str, int, int]:
        phys = loc["physicalLocation"]
        region = phys["region"]
        art = phys["artifactLocation"]
        return art["uri"], art["uriBaseId"], region["startLine"], region["startColumn"]

    got = [
        (r["ruleId"], r["level"], place(r["locations"][0]), [place(x) for x in r.get("relatedLocations", [])])
        for r in run["results"]
    ]
    assert got == [
        (
            "unschedulable",
            "error",
            ("k8s/app.yaml", "%SRCROOT%", 24, 13),
            [("k8s/app.yaml", "%SRCROOT%", 7, 1)],
        ),
        (
            "unschedulable",
            "error",
            ("k8s/app.yaml", "%SRCROOT%", 40, 9),
            [("k8s/app.yaml", "%SRCROOT%", 27, 1)],
        ),
        ("not-checked", "note", ("k8s/app.yaml", "%SRCROOT%", 45, 1), []),
        ("preemption", "warning", ("k8s/app.yaml", "%SRCROOT%", 52, 1), []),
    ]
    assert run["results"][0]["locations"][0]["message"]["text"] == (
        "spec.template.spec.containers[app].resources.requests.cpu: Insufficient cpu"
    )
    assert "uri" not in run["originalUriBaseIds"]["%SRCROOT%"]  # no absolute path of this machine
    assert str(repo) not in res.stdout
    assert run["properties"]["snapshot"] == "cluster.yaml"  # relative to the base as well


def test_junit_names_the_same_places_and_keeps_non_failing_findings(repo: Path) -> None:
    res = _check("-f", "app.yaml", "-o", "junit")
    root = validate_junit(res.stdout)
    cases = {c.get("name"): c for c in root.findall("testsuite/testcase")}
    big = cases["default/big"].find("failure")
    assert big is not None and (big.text or "").startswith("k8s/app.yaml:24:13: Deployment default/big")
    vip = cases["default/vip"]
    assert vip.find("failure") is None
    out = vip.find("system-out")
    assert out is not None and (out.text or "").startswith(
        "warning: k8s/app.yaml:52:1: Deployment default/vip (k8s/app.yaml:52:1): all 1 fit, 1 only by preemption"
    )
    other = cases["default/other-sched"]
    assert other.find("skipped") is not None
    note = other.find("system-out")
    assert note is not None and (note.text or "").startswith(
        "note: k8s/app.yaml:45:1: Pod default/other-sched"
    )
    props = {p.get("name"): p.get("value") for p in root.findall("testsuite/properties/property")}
    assert (props["warnings"], props["notes"]) == ("1", "1")


def test_every_format_reports_the_same_findings(repo: Path) -> None:
    """Levels and places agree across SARIF (results and notifications), GitHub and JUnit."""
    sarif = json.loads(_check("-f", "app.yaml", "-o", "sarif", remedies=True).stdout)
    validate_sarif(sarif)
    run = sarif["runs"][0]
    from_sarif = sorted(
        (
            r["level"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in run["results"]
    )
    commands, _ = github_commands(_check("-f", "app.yaml", "-o", "github", remedies=True).stdout)
    level = {"error": "error", "warning": "warning", "notice": "note"}
    from_github = sorted(
        (level[c.command], int(c.properties["line"])) for c in commands if "file" in c.properties
    )
    assert from_sarif == from_github
    # Both name the risky-only remedies of big and picky (a 50% cut of its CPU; a relaxed nodeSelector).
    assert from_sarif.count(("note", 24)) == 1 and from_sarif.count(("note", 40)) == 1
    run_level = [
        (n["level"], n["message"]["text"]) for n in run["invocations"][0]["toolExecutionNotifications"]
    ]
    assert run_level == [(c.command, c.message) for c in commands if "file" not in c.properties]
    junit = _check("-f", "app.yaml", "-o", "junit", remedies=True).stdout
    cases = junit_cases(junit)
    levels = sorted(
        line.split(":", 1)[0]
        for c in cases
        for x in [c.find("system-out")]
        if x is not None
        for line in (x.text or "").split("\n")
        # A finding's paragraph starts with its level and place; a workload's notes inside a finding's
        # text ("note: LimitRange defaults not checked: ...") are not findings of their own.
        if re.match(r"(warning|note): \S+:\d+:\d+: ", line)
    )
    assert levels == sorted(lvl for lvl, _ in from_sarif if lvl != "error")
    assert sum(1 for c in cases if c.find("failure") is not None) == from_sarif.count(
        ("error", 24)
    ) + from_sarif.count(("error", 40))


def test_path_base_and_paths_outside_it(repo: Path, tmp_path: Path) -> None:
    commands, _ = github_commands(_check("-f", "app.yaml", "--path-base", ".", "-o", "github").stdout)
    assert {c.properties["file"] for c in commands} == {"app.yaml"}
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(APP)
    res = _check("-f", str(outside), "-o", "sarif")
    doc = json.loads(res.stdout)
    validate_sarif(doc)
    art = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert art == {"uri": outside.as_uri()}  # outside the base: an absolute URI, no %SRCROOT%
    res = _check("-f", str(outside), "-o", "github")
    commands, _ = github_commands(res.stdout)  # the strict parser rejects an absolute file=
    assert "file" not in commands[0].properties
    assert commands[0].message.startswith(f"Deployment default/big ({outside.as_posix()}:7:1)")
    assert _check("-f", "app.yaml", "--path-base", "nowhere").exit_code == 2


@pytest.mark.parametrize(
    ("cwd", "base", "source", "shown"),
    [
        pytest.param(
            "repo/k8s", None, "app.yaml", ("k8s/app.yaml", False), id="relative to the git work tree"
        ),
        pytest.param("repo/k8s", "..", "../x/y.yaml", ("x/y.yaml", False), id="--path-base"),
        pytest.param(
            "repo", None, "my app.yaml", ("my app.yaml", False), id="spaces kept (SARIF encodes them)"
        ),
        pytest.param("repo", None, "/etc/x.yaml", ("/etc/x.yaml", True), id="outside: absolute"),
        pytest.param("repo", None, "k.tgz:a/b.yaml", ("k.tgz:a/b.yaml", False), id="an archive member"),
        pytest.param("repo", None, "k.zip:a/b.yaml", ("k.zip:a/b.yaml", False), id="a zip member"),
        pytest.param("repo", None, "<stdin>", ("", False), id="stdin has no path"),
    ],
)
def test_path_base_relative(
    tmp_path: Path, cwd: str, base: str | None, source: str, shown: tuple[str, bool]
) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "k8s").mkdir()
    paths = PathBase(base, cwd=tmp_path / cwd)
    assert paths.relative(source) == shown
    loc = paths.location(source, 3, 1)
    if source == "my app.yaml":
        assert PathBase.uri(loc) == "my%20app.yaml"


# ---------------------------------------------------------------------------------------------- helm


def test_helm_output_is_attributed_to_the_template_files(repo: Path) -> None:
    res = _check("-f", "-", "-o", "github", stdin=RENDERED)
    assert res.exit_code == 1, res.output
    (cmd,), _ = github_commands(res.stdout)
    # The template's own apiVersion line (its line 1 is `{{- if ... }}`).
    assert _where(cmd) == ("error", "charts/web/templates/deployment.yaml", "2", "1")
    lines = cmd.message.splitlines()
    assert lines[1] == (
        "field spec.template.spec.containers[web].resources.requests.cpu (line 26 of the rendered input): "
        "Insufficient cpu"
    )
    assert lines[2] == "rendered by helm template from web/templates/deployment.yaml (<stdin>:9:1)"
    doc = json.loads(_check("-f", "-", "-o", "json", stdin=RENDERED).stdout)
    (w,) = doc["workloads"]
    assert (w["file"], w["line"], w["column"]) == ("charts/web/templates/deployment.yaml", 2, 1)
    assert w["renderedFrom"] == {"file": None, "line": 9, "column": 1}
    sarif = json.loads(_check("-f", "-", "-o", "sarif", stdin=RENDERED).stdout)
    validate_sarif(sarif)
    loc = sarif["runs"][0]["results"][0]["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"] == {
        "uri": "charts/web/templates/deployment.yaml",
        "uriBaseId": "%SRCROOT%",
    }


def test_a_helm_source_without_its_chart_keeps_the_helm_path(repo: Path) -> None:
    text = RENDERED.replace("web/templates/deployment.yaml", "other/templates/deployment.yaml")
    (cmd,), _ = github_commands(_check("-f", "-", "-o", "github", stdin=text).stdout)
    assert cmd.properties["file"] == "other/templates/deployment.yaml" and "line" not in cmd.properties
    assert "template not found under the path base" in cmd.message


# ---------------------------------------------------------------------------------------------- invalid input

BAD_QUANTITY = APP.replace('cpu: "8"', "cpu: lots")  # line 24
BROKEN_YAML = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}\n"


@pytest.mark.parametrize(
    ("text", "line", "col", "subject"),
    [
        pytest.param(BAD_QUANTITY, 24, 13, "Deployment big", id="a bad quantity: its field"),
        pytest.param(BROKEN_YAML, 5, None, None, id="a YAML syntax error: its line"),
    ],
)
def test_invalid_manifests_still_write_the_report(
    repo: Path, text: str, line: int, col: int | None, subject: str | None
) -> None:
    (repo / "k8s" / "bad.yaml").write_text(text)
    for output in ("junit", "sarif", "github", "json"):
        report = repo / f"report.{output}"
        res = _check("-f", "bad.yaml", "-o", output, "--output-file", str(report))
        assert res.exit_code == 3, res.output
        assert res.stderr.startswith("kdiagnose: error: bad.yaml (") and res.stderr.count("\n") == 1
        written = report.read_text()
        where = f"k8s/bad.yaml:{line}" + (f":{col}" if col else "")
        if output == "junit":
            (case,) = junit_cases(written)
            error = case.find("error")
            assert error is not None and error.get("type") == "input-error"
            assert case.get("name") == (subject or where)
            assert (error.text or "").startswith(f"{where}: bad.yaml (")
        elif output == "sarif":
            doc = json.loads(written)
            validate_sarif(doc)
            (inv,) = doc["runs"][0]["invocations"]
            assert inv["executionSuccessful"] is False
            (note,) = inv["toolExecutionNotifications"]
            assert note["level"] == "error" and note["descriptor"]["id"] == "input-error"
            region = note["locations"][0]["physicalLocation"]["region"]
            assert (region["startLine"], region.get("startColumn")) == (line, col)
            assert doc["runs"][0]["results"] == []
        elif output == "github":
            (cmd,), plain = github_commands(written)
            assert _where(cmd) == ("error", "k8s/bad.yaml", str(line), str(col) if col else None)
            assert plain == ["kdiagnose check: invalid input, nothing was checked (1 error(s))"]
        else:
            doc = json.loads(written)
            (err,) = doc["errors"]
            assert err["location"]["file"] == "k8s/bad.yaml" and err["location"]["line"] == line
            assert doc["passed"] is False and doc["workloads"] == []


def test_an_invalid_manifest_on_stdout_is_still_a_report(repo: Path) -> None:
    res = _check("-f", "-", "-o", "github", stdin=BROKEN_YAML)
    assert res.exit_code == 3
    (cmd,), _ = github_commands(res.stdout)
    assert cmd.command == "error" and "file" not in cmd.properties
    assert cmd.message == "<stdin> (line 5): invalid YAML: unclosed bracket '['" or cmd.message.startswith(
        "<stdin> (line 5): invalid YAML"
    )


# ---------------------------------------------------------------------------------------------- the locator


def test_lists_and_json_are_located_by_the_composer(tmp_path: Path) -> None:
    listing = tmp_path / "list.yaml"
    listing.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n"
        "- kind: Pod\n  apiVersion: v1\n  metadata: {name: b}\n  spec:\n    nodeSelector: {x: y}\n"
    )
    sources = Sources()
    assert sources.object_line(DocRef(str(listing), 0, 1, 0)) == 4
    assert sources.object_line(DocRef(str(listing), 0, 1, 1)) == 8  # its apiVersion key, not `- kind`
    assert sources.field_position(DocRef(str(listing), 0, 1, 1), ("spec", "nodeSelector", "x")) == (11, 20)
    js = tmp_path / "pod.json"
    js.write_text('{\n  "kind": "Pod",\n  "apiVersion": "v1",\n  "metadata": {"name": "p"}\n}\n')
    assert sources.object_line(DocRef(str(js), 0, 0, 0)) == 3
    assert sources.field_position(DocRef(str(js), 0, 0, 0), ("metadata", "name")) == (
        4,
        16,
    )  # the key's opening quote


# ---------------------------------------------------------------------------------------------- blame per plugin

TAINTED = """
apiVersion: v1
kind: Node
metadata: {name: node-t, labels: {kubernetes.io/hostname: node-t}}
spec:
  taints: [{key: dedicated, value: infra, effect: NoSchedule}]
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
"""
PORT_HOLDERS = "".join(
    f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: holder-{n}, namespace: default}}
spec:
  nodeName: node-{n}
  containers: [{{name: c, image: x, ports: [{{containerPort: 80, hostPort: 80}}]}}]
status: {{phase: Running}}
"""
    for n in ("a", "b")
)
OTHER_CLASS = (
    "\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: other}\nvalue: 5\n"
)


def _workload(snippet: str, ports: str = "") -> str:
    """A Deployment whose pod spec starts with `snippet` on line 10 (column 7)."""
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    spec:\n"
        + "".join(f"      {x}\n" for x in snippet.splitlines())
        + "      containers:\n      - name: c\n        image: x\n"
        + (f"        ports: {ports}\n" if ports else "")
    )


@pytest.mark.parametrize(
    ("cluster", "snippet", "ports", "field", "where"),
    [
        pytest.param(
            TAINTED,
            "tolerations: [{key: other, operator: Exists}]",
            "",
            "spec.template.spec.tolerations",
            "k8s/w.yaml:10:7",
            id="TaintToleration: the tolerations",
        ),
        pytest.param(
            (FIX / "cluster-two-nodes.yaml").read_text() + OTHER_CLASS,
            "priorityClassName: missing",
            "",
            "spec.template.spec.priorityClassName",
            "k8s/w.yaml:10:7",
            id="Priority admission: priorityClassName",
        ),
        pytest.param(
            (FIX / "cluster-two-nodes.yaml").read_text() + PORT_HOLDERS,
            "hostname: w",
            "[{containerPort: 80, hostPort: 80}]",
            "spec.template.spec.containers[c].ports[0]",
            "k8s/w.yaml:14:17",
            id="NodePorts: the container port with that hostPort",
        ),
        pytest.param(
            (FIX / "cluster-two-nodes.yaml").read_text(),
            "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
            "      nodeSelectorTerms:\n      - matchExpressions: [{key: gpu, operator: Exists}]",
            "",
            "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0]",
            "k8s/w.yaml:14:15",
            id="NodeAffinity: its one required term",
        ),
        pytest.param(
            (FIX / "cluster-two-nodes.yaml").read_text(),
            "topologySpreadConstraints:\n- {maxSkew: 1, topologyKey: rack, whenUnsatisfiable: DoNotSchedule,"
            " labelSelector: {matchLabels: {app: w}}}",
            "",
            "spec.template.spec.topologySpreadConstraints[0]",
            "k8s/w.yaml:11:9",
            id="PodTopologySpread: the constraint of that topologyKey",
        ),
    ],
)
def test_the_field_each_plugin_blames(
    repo: Path, cluster: str, snippet: str, ports: str, field: str, where: str
) -> None:
    (repo / "k8s" / "w.yaml").write_text(_workload(snippet, ports))
    (repo / "c.yaml").write_text(cluster)
    res = CliRunner().invoke(
        app,
        ["check", "--no-config", "--no-remedies", "-f", "w.yaml", "--snapshot", "../c.yaml", "-o", "github"],
    )
    assert res.exit_code == 1, res.output
    commands, _ = github_commands(res.stdout)
    (cmd,) = [c for c in commands if "file" in c.properties]  # (and the snapshot's warnings)
    file, line, col = where.split(":")
    assert _where(cmd) == ("error", file, line, col)
    assert f"field {field} ({where}): " in cmd.message


def test_an_autoscaler_status_that_cannot_be_read_is_a_warning_in_every_format(repo: Path) -> None:
    cm = (
        "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-autoscaler-status, namespace: kube-system}\n"
        "data:\n  status: 'just text'\n"
    )
    (repo / "c.yaml").write_text((FIX / "cluster-two-nodes.yaml").read_text() + cm)
    args = ["check", "--no-config", "--no-remedies", "-f", "app.yaml", "--snapshot", "../c.yaml"]
    want = (
        "not checked: cluster-autoscaler status unreadable: configmap kube-system/cluster-autoscaler-status"
    )
    commands, _ = github_commands(CliRunner().invoke(app, [*args, "-o", "github"]).stdout)
    (warning,) = [c for c in commands if c.message.startswith(want)]
    assert warning.command == "warning" and "file" not in warning.properties
    assert warning.message.endswith(": scale-up verdicts have no evidence from this autoscaler")
    doc = json.loads(CliRunner().invoke(app, [*args, "-o", "sarif"]).stdout)
    validate_sarif(doc)
    notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [(n["level"], n["message"]["text"]) for n in notes if n["message"]["text"].startswith(want)] == [
        ("warning", warning.message)
    ]
    root = validate_junit(CliRunner().invoke(app, [*args, "-o", "junit"]).stdout)
    values = [
        p.get("value") for p in root.findall("testsuite/properties/property") if p.get("name") == "warning"
    ]
    assert warning.message in values


def test_volume_binding_blames_the_statefulsets_claim_template(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIX.parent.parent)  # this repository's root
    res = CliRunner().invoke(
        app,
        [
            "check",
            "--no-config",
            "--no-remedies",
            # Paths relative to the working directory, whether or not a git work tree is around it.
            "--path-base",
            ".",
            "-f",
            "fixtures/check/statefulset-zonal.manifests.yaml",
            "--snapshot",
            "fixtures/check/cluster-zonal-storage.yaml",
            "-o",
            "json",
        ],
    )
    assert res.exit_code == 1, res.output
    (w,) = json.loads(res.stdout)["workloads"]
    assert (w["file"], w["line"], w["column"]) == ("fixtures/check/statefulset-zonal.manifests.yaml", 1, 1)
    # Replica 2's claim data-db-1 finds no PV: the volumeClaimTemplate it comes from, line 22 column 5.
    assert w["fields"] == [
        {
            "file": "fixtures/check/statefulset-zonal.manifests.yaml",
            "line": 22,
            "column": 5,
            "field": "spec.volumeClaimTemplates[data]",
            "why": "node(s) didn't find available persistent volumes to bind",
        }
    ]


def test_json_lists_the_blamed_fields(repo: Path) -> None:
    doc = json.loads(_check("-f", "app.yaml", "-o", "json").stdout)
    big = next(w for w in doc["workloads"] if w["name"] == "big")
    assert (big["file"], big["line"], big["column"]) == ("k8s/app.yaml", 7, 1)
    assert big["fields"] == [
        {
            "file": "k8s/app.yaml",
            "line": 24,
            "column": 13,
            "field": "spec.template.spec.containers[app].resources.requests.cpu",
            "why": "Insufficient cpu",
        }
    ]
    assert big["renderedFrom"] is None


def test_a_manifest_inside_an_archive_points_at_the_archive(repo: Path) -> None:
    import io
    import tarfile

    data = APP.encode()
    with tarfile.open(repo / "k8s" / "bundle.tgz", "w:gz") as tar:
        info = tarfile.TarInfo("app/app.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    res = _check("-f", "bundle.tgz", "-o", "github")
    commands, _ = github_commands(res.stdout)
    big = commands[0]
    assert big.properties["file"] == "k8s/bundle.tgz" and "line" not in big.properties
    # The member's own lines stay in the message (the loader's document line: no text to scan there).
    assert big.message.startswith("Deployment default/big (k8s/bundle.tgz:app/app.yaml:6)")
    doc = json.loads(_check("-f", "bundle.tgz", "-o", "sarif").stdout)
    validate_sarif(doc)
    phys = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert phys == {
        "artifactLocation": {
            "uri": "k8s/bundle.tgz",
            "uriBaseId": "%SRCROOT%",
            "description": {"text": "archive member app/app.yaml, line 6"},
        }
    }


def test_a_manifest_inside_a_zip_points_at_the_zip(repo: Path) -> None:
    import zipfile

    with zipfile.ZipFile(repo / "k8s" / "bundle.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("app/app.yaml", APP)
    res = _check("-f", "bundle.zip", "-o", "github")
    commands, _ = github_commands(res.stdout)
    big = commands[0]
    assert big.properties["file"] == "k8s/bundle.zip" and "line" not in big.properties
    assert big.message.startswith("Deployment default/big (k8s/bundle.zip:app/app.yaml:6)")
