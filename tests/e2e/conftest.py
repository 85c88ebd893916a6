"""Live mode against a real kube-apiserver (and kube-scheduler): fixtures that own e2e/bin/e2e-cluster-v*.

Collected only with KDIAGNOSE_E2E=1 (what `make e2e` sets after building the binaries): the normal test
run (`make test`, plain pytest) needs neither Go nor the minutes the first build takes. With KDIAGNOSE_E2E=1
a missing binary is an error, not a skip. KDIAGNOSE_E2E_K8S lists the release lines (default "1.37 1.36").
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENABLED = os.environ.get("KDIAGNOSE_E2E") == "1"
LINES = os.environ.get("KDIAGNOSE_E2E_K8S", "1.37 1.36").split()

if not ENABLED:
    collect_ignore_glob = ["test_*.py"]

READY_TIMEOUT = 300.0  # the first start of a freshly built binary on a loaded 2-core machine
STOP_TIMEOUT = 60.0


def binary(line: str) -> Path:
    path = ROOT / "e2e" / "bin" / f"e2e-cluster-v{line}"
    if not path.exists():
        pytest.fail(f"{path} is missing: `make e2e` builds it")
    return path


@dataclass
class Cluster:
    """One running e2e-cluster process: etcd + kube-apiserver (+ kube-scheduler) with a loaded scenario."""

    line: str
    scenario: Path | None
    out: Path
    proc: subprocess.Popen[str]
    lines: queue.Queue[str | None]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def kubeconfig(self) -> Path:
        return self.out / "kubeconfig"

    @property
    def audit_log(self) -> Path:
        return self.out / "audit.log"

    def _next_line(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"e2e-cluster: no answer within {timeout:g}s; log: {self.log_tail()}"
            ) from None
        if line is None:
            raise AssertionError(f"e2e-cluster exited ({self.proc.wait()}); log: {self.log_tail()}")
        return line

    def command(self, cmd: str, timeout: float = 120.0) -> None:
        """stop-apiserver, start-apiserver, compact (see e2e/main.go)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        answer = self._next_line(timeout)
        assert answer == f"ok {cmd}", answer

    def log_tail(self, n: int = 4000) -> str:
        try:
            return (self.out / "cluster.log").read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def audit(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.audit_log.read_text().splitlines() if line.strip()]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"e2e-cluster ignored SIGTERM for {STOP_TIMEOUT:g}s") from None
        return self.proc.returncode


def start_cluster(
    line: str,
    out: Path,
    scenario: Path | None = None,
    *,
    scheduler: bool = False,
    developer_ns: str = "default",
) -> Cluster:
    out.mkdir(parents=True, exist_ok=True)
    args = [str(binary(line)), "--out", str(out), "--developer-namespace", developer_ns]
    if scenario is not None:
        args += ["--scenario", str(scenario)]
    if scheduler:
        args.append("--scheduler")
    log = (out / "cluster.log").open("w")
    proc = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1
    )
    log.close()
    lines: queue.Queue[str | None] = queue.Queue()

    def reader() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.strip())
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    cl = Cluster(line, scenario, out, proc, lines)
    try:
        first = cl._next_line(READY_TIMEOUT)
        assert first == "ready", first
        cl.info = json.loads((out / "info.json").read_text())
    except BaseException:
        cl.stop()
        raise
    return cl


@pytest.fixture(scope="session")
def cluster_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """start(line, scenario, scheduler=...) -> Cluster; every cluster is stopped (SIGTERM) at the end and
    must exit 0."""
    started: list[Cluster] = []

    def start(line: str, scenario: Path | None = None, **kw: Any) -> Cluster:
        name = f"v{line}-{scenario.stem if scenario else 'empty'}"
        cl = start_cluster(line, tmp_path_factory.mktemp(name), scenario, **kw)
        started.append(cl)
        return cl

    yield start
    codes = {str(cl.out): cl.stop() for cl in started}
    bad = {k: v for k, v in codes.items() if v != 0}
    assert not bad, f"e2e-cluster exit codes after SIGTERM: {bad}"


def kdiagnose(*args: str, home: Path, timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process (as a user runs it), with no ambient kubeconfig."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "NO_COLOR": "1",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-m", "kdiagnose.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=str(home),
    )
