"""kubectl users' habits: shell completion, the `kubectl kdiagnose` plugin, kubectl's pod forms, and the
usage errors that name the right command (exit 2) instead of "no such file" (exit 3)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from kdiagnose.cli import main
from kdiagnose.errors import UsageError
from tests.fake_apiserver import FakeAPIServer
from tests.layout import cluster
from tests.test_live import SEED, _objects, live_json

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def _main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return int(e.value.code or 0), out.out, out.err


# ---------------------------------------------------------------------------------------------- completion


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """The console script as a user's shell runs it (a fresh process: completion reads argv and env)."""
    code = "from kdiagnose.cli import main; main()"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    # A user's `kdiagnose --show-completion` detects the running shell; the test names it instead
    # (Typer's switch for that), so the result does not depend on the shell running the tests.
    env["_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env=env, check=False
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_the_shells_script(shell: str, tmp_path: Path) -> None:
    res = _cli("--show-completion", shell, home=tmp_path / "home")
    assert res.returncode == 0, res.stderr
    assert "_KDIAGNOSE_COMPLETE" in res.stdout  # the variable Click's completion protocol sets


def test_install_completion_writes_the_bash_script(tmp_path: Path) -> None:
    res = _cli("--install-completion", "bash", home=tmp_path / "home")
    assert res.returncode == 0, res.stderr
    assert "bash completion installed" in res.stdout
    assert "kdiagnose" in (tmp_path / "home" / ".bashrc").read_text()


# ---------------------------------------------------------------------------------------------- kubectl plugin


def test_the_kubectl_plugin_entry_point_is_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-kdiagnose"] == "kdiagnose.cli:kubectl_main"


def test_help_says_kubectl_kdiagnose_when_run_as_the_plugin() -> None:
    code = "import sys; sys.argv[0] = '/usr/local/bin/kubectl-kdiagnose'; from kdiagnose.cli import kubectl_main; kubectl_main()"
    res = subprocess.run(
        [sys.executable, "-c", code, "pod", "--help"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Usage: kubectl kdiagnose pod ")
    err = subprocess.run(
        [sys.executable, "-c", code, "-n", "shop", "pod", "web"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert err.returncode == 2
    assert (
        err.stderr.strip()
        == "kdiagnose: error: options go after the command: kubectl kdiagnose pod -n shop web"
    )


def test_the_krew_manifest_is_a_valid_plugin_manifest() -> None:
    doc: dict[str, Any] = yaml.safe_load((ROOT / "plugins" / "kdiagnose.yaml").read_text())
    assert doc["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert doc["kind"] == "Plugin"
    assert doc["metadata"]["name"] == "kdiagnose"
    spec = doc["spec"]
    assert (
        spec["version"].startswith("v")
        and spec["shortDescription"]
        and spec["homepage"].startswith("https://")
    )
    assert spec["version"][1:] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for platform in spec["platforms"]:
        assert platform["bin"] == "kubectl-kdiagnose"
        assert platform["uri"].startswith("https://") and len(platform["sha256"]) == 64
        assert platform["selector"]["matchExpressions"][0]["key"] == "os"


# ---------------------------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["-n", "payments", "pod", "web-1"],
            "kdiagnose: error: options go after the command: kdiagnose pod -n payments web-1",
            id="flags before the subcommand",
        ),
        pytest.param(
            ["pdo", "foo"],
            "kdiagnose: error: unknown command 'pdo': did you mean kdiagnose pod foo?",
            id="a mistyped subcommand",
        ),
        pytest.param(
            ["chekc", "-f", "k8s/"],
            "kdiagnose: error: unknown command 'chekc': did you mean kdiagnose check -f k8s/?",
            id="another mistyped subcommand",
        ),
        pytest.param(
            ["pod", "shop/web-1", "-n", "payments"],
            "kdiagnose: error: pod shop/web-1 is in namespace shop, not -n payments",
            id="NS/NAME against another -n",
        ),
    ],
)
def test_kubectl_habits_are_usage_errors_naming_the_command(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _main(args, capsys)
    assert code == 2
    assert err.splitlines()[0] == message


def test_a_missing_file_is_still_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(["diagnose", "/nonexistent/dump.yaml"], capsys)
    assert code == 3 and "no such file" in err


def test_all_namespaces_is_accepted_on_dumps(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _main([DEMO, "-A", "-o", "json"], capsys)
    assert code == 1 and '"default/hello-web-new"' in out


def test_pod_not_found_names_the_namespaces_where_it_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump_all(cluster.many_owners()))
    code, _, err = _main([str(dump), "--pod", "default/queue-1"], capsys)
    assert code == 2
    assert "pod default/queue-1 not found" in err and "exists in namespace shop (--pod shop/queue-1)" in err
    code, _, err = _main([str(dump), "--pod", "shop/queue-7"], capsys)
    assert code == 2 and "did you mean shop/queue-2, shop/queue-1, shop/queue-0?" in err


def test_check_against_a_snapshot_without_nodes_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}))
    manifests = ROOT / "fixtures" / "check" / "web-anti-affinity.manifests.yaml"
    code, _, err = _main(["check", "-f", str(manifests), "--snapshot", str(snap)], capsys)
    assert code == 3
    assert "the snapshot has no Node objects" in err


@pytest.mark.parametrize("form", ["pod/hello-web-new", "default/hello-web-new", "po/hello-web-new"])
def test_pod_takes_kubectls_forms(form: str, tmp_path: Path) -> None:
    with FakeAPIServer(_objects(SEED)) as srv:
        code, doc = live_json(srv, tmp_path, "pod", form)
    assert code == 1
    assert [p["pod"] for p in doc["pods"]] == ["default/hello-web-new"]


def test_named_pods_are_found_pending_or_bound_in_the_order_asked() -> None:
    from kdiagnose.load.raw import RawObject
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.pipeline import select_pods
    from kdiagnose.scheduler.profiles import default_profile
    from kdiagnose.versions import dialect_for

    dialect = dialect_for("v1.34.1")
    objs = cluster.many_owners()
    snap = build_snapshot([RawObject(o, "x") for o in objs], dialect)
    bound = next(p for p in snap.pods if p.node_name)
    pending = [p for p in snap.pods if not p.node_name]
    assert pending and bound
    asked = [pending[-1].key, bound.key, pending[0].key]
    got, _ = select_pods(snap, [default_profile(dialect)], pods=asked)
    assert [p.key for p in got] == asked
    assert got[1] is bound and got[0] is pending[-1]
    with pytest.raises(UsageError, match="pod default/nope not found"):
        select_pods(snap, [default_profile(dialect)], pods=[pending[0].key, "default/nope"])
