"""Shell completion: live pod and namespace names from the current context (read-only, a short timeout,
silent on error), and completion under `kubectl kdiagnose` (kubectl's plugin protocol, and the
kubectl-kdiagnose script whose program name has no space)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_apiserver import FakeAPIServer

ROOT = Path(__file__).resolve().parent.parent
Obj = dict[str, Any]


def _pod(name: str, namespace: str, phase: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": phase},
    }


def _ns(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


@pytest.fixture
def server() -> Iterator[FakeAPIServer]:
    objs = [
        _ns("default"),
        _ns("shop"),
        _ns("kube-system"),
        _pod("web-1", "shop", "Pending"),
        _pod("web-2", "shop", "Running"),
        _pod("db-0", "shop", "Running"),
        _pod("job-1", "default", "Pending"),
    ]
    with FakeAPIServer(objs) as srv:
        yield srv


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1", **extra}


def _plugin_complete(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """kubectl's call: `kubectl_complete-kdiagnose WORDS... INCOMPLETE` (plugin_completion.go)."""
    code = "from kdiagnose.cli import kubectl_complete_main; kubectl_complete_main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env(home), timeout=60
    )


def _bash_complete(prog: str, line: str, home: Path) -> subprocess.CompletedProcess[str]:
    """What the bash script Click generates runs: _<PROG>_COMPLETE=complete_bash with COMP_WORDS/CWORD."""
    words = line.split(" ")
    var = "_" + prog.replace("-", "_").upper() + "_COMPLETE"
    code = f"import sys; sys.argv[0] = '/usr/local/bin/{prog}'; from kdiagnose.cli import main; main()"
    env = _env(home, COMP_WORDS=line, COMP_CWORD=str(len(words) - 1), **{var: "complete_bash"})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)


def test_kubectl_plugin_completion_of_pod_names(server: FakeAPIServer, tmp_path: Path) -> None:
    kc = str(server.kubeconfig(tmp_path / "kc"))
    res = _plugin_complete("pod", "--kubeconfig", kc, "-n", "shop", "w", home=tmp_path)
    assert res.returncode == 0 and res.stderr == ""
    # cobra's format: value<TAB>description, then the directive (4: no file names).
    assert res.stdout.splitlines() == ["web-1\tPending", "web-2\tRunning", ":4"]
    # The context's namespace, and the NAMESPACE/NAME form the argument accepts.
    res = _plugin_complete("pod", "--kubeconfig", kc, "", home=tmp_path)
    assert res.stdout.splitlines() == ["job-1\tPending", ":4"]
    res = _plugin_complete("pod", "--kubeconfig", kc, "shop/d", home=tmp_path)
    assert res.stdout.splitlines() == ["shop/db-0\tRunning", ":4"]
    res = _plugin_complete("pods", "--kubeconfig", kc, "-n", "", home=tmp_path)
    assert res.stdout.splitlines() == ["default", "kube-system", "shop", ":4"]
    # Read-only: GETs of one page.
    assert server.methods() == {"GET"}
    lists = [p for p in server.paths() if "/pods" in p or "/namespaces?" in p]
    assert lists and all("limit=500" in p for p in lists)


def test_kubectl_plugin_completion_of_commands_options_and_the_shorthand(tmp_path: Path) -> None:
    res = _plugin_complete("p", home=tmp_path)
    assert [line.split("\t")[0] for line in res.stdout.splitlines()] == ["pod", "pods", ":4"]
    res = _plugin_complete("pod", "web", "-o", "j", home=tmp_path)
    assert res.stdout.splitlines() == ["json", ":4"]
    # `kubectl kdiagnose dump.yaml --k8s<TAB>` is `diagnose dump.yaml --k8s<TAB>`.
    res = _plugin_complete("dump.yaml", "--k8s", home=tmp_path)
    assert res.stdout.splitlines()[0].startswith("--k8s-version")


def test_completion_is_silent_and_quick_when_the_cluster_is_unreachable(tmp_path: Path) -> None:
    # A port that accepts connections and never answers: the short timeout, no error, no candidates.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        host, port = s.getsockname()
        kc = FakeAPIServer().kubeconfig(tmp_path / "kc", server=f"http://{host}:{port}")
        start = time.monotonic()
        res = _plugin_complete("pod", "--kubeconfig", str(kc), "", home=tmp_path)
        took = time.monotonic() - start
    assert (res.returncode, res.stderr, res.stdout) == (0, "", ":0\n")
    assert took < 15  # the 2 s request timeout, plus the interpreter start on a loaded machine
    # No kubeconfig at all: also nothing.
    res = _plugin_complete("pod", "", home=tmp_path)
    assert (res.returncode, res.stderr, res.stdout) == (0, "", ":0\n")


@pytest.mark.parametrize("prog", ["kdiagnose", "kubectl-kdiagnose"])
def test_bash_completion_of_pod_names_for_both_program_names(
    server: FakeAPIServer, tmp_path: Path, prog: str
) -> None:
    kc = str(server.kubeconfig(tmp_path / "kc"))
    res = _bash_complete(prog, f"{prog} pod --kubeconfig {kc} -n shop web-", tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["web-1", "web-2"]


def test_show_completion_as_the_kubectl_plugin_is_a_valid_script(tmp_path: Path) -> None:
    code = (
        "import sys; sys.argv[0] = '/usr/local/bin/kubectl-kdiagnose'; from kdiagnose.cli import main; main()"
    )
    env = _env(tmp_path, _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    res = subprocess.run(
        [sys.executable, "-c", code, "--show-completion", "bash"], capture_output=True, text=True, env=env
    )
    assert res.returncode == 0, res.stderr
    script = res.stdout
    # No space in a variable or function name (the program's name "kubectl kdiagnose" has one).
    assert "_KUBECTL_KDIAGNOSE_COMPLETE=complete_bash" in script
    assert "complete -o default -F _kubectl_kdiagnose_completion kubectl-kdiagnose" in script
    assert "kubectl kdiagnose_" not in script and "_KUBECTL KDIAGNOSE" not in script
    assert script.startswith("# kubectl 1.26+ completes `kubectl kdiagnose <TAB>` itself")
    check = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_the_kubectl_completion_entry_point_is_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    # kubectl looks up kubectl_complete-<plugin> on PATH (plugin_completion.go lookupCompletionExec).
    assert scripts["kubectl_complete-kdiagnose"] == "kdiagnose.cli:kubectl_complete_main"
    assert os.path.basename("kubectl-kdiagnose").replace("-", "_complete-", 1) == "kubectl_complete-kdiagnose"
