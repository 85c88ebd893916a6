"""Live-mode benchmark: list a big cluster through the real kubernetes client from a local API server.

    python benchmarks/live.py /tmp/c5k.json [--repeat 2]

The test suite's fake API server (tests/fake_apiserver.py: real HTTP on 127.0.0.1, paginated lists) runs in
a child process loaded with the dump, on the same cores. First `kdiagnose pods -A`'s phases in one process
(fetch; snapshot build, replay and the -o json text written to /dev/null pod by pod, as the command does),
then the two commands users run, alternated `--repeat` times:
`kdiagnose pods -A -o json` against the server and `kdiagnose DUMP -o json` on the file, each a fresh
process, with its wall time and peak RSS (issue #17: live within 1.2x of offline), and the CPU the server
used meanwhile. The server shares the client's cores here, where a real API server runs on machines of its
own: `--remote` keeps each answer the server encoded (by path and credentials) and sends the same bytes
when it is asked again, so the timed runs after the first read cost these cores only the server's socket
writes (the in-process phases read every page once first).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _serve(dump: str, kubeconfig: str, ready: Any, stop: Any, remote: bool) -> None:
    import orjson

    from tests.fake_apiserver import FakeAPIServer

    doc = orjson.loads(Path(dump).read_bytes())
    items = doc.get("items", []) if isinstance(doc, dict) else doc
    with FakeAPIServer(items) as srv:
        srv.remember_answers = remote
        srv.kubeconfig(Path(kubeconfig))
        ready.set()
        stop.wait()


def _client(kubeconfig: str) -> dict[str, float]:
    from kdiagnose.commands.live import build_live_report
    from kdiagnose.load.cluster import fetch_for_pods, resolve_target
    from kdiagnose.report.json import PodStream

    t0 = time.perf_counter()
    fetched, dialect = fetch_for_pods(resolve_target(kubeconfig, None), None, timeout=600)
    t1 = time.perf_counter()
    # As `kdiagnose pods -A -o json` does: each pod written (here to /dev/null) as it is diagnosed, in the
    # pod workers when there are several.
    with open(os.devnull, "wb") as sink:
        stream = PodStream(sink)
        report = build_live_report(fetched, dialect, sink=stream)
        stream.finish(report)
    t2 = time.perf_counter()
    return {
        "objects": fetched.count(),
        "requests": fetched.requests,
        "fetch_s": t1 - t0,
        "replay_s": t2 - t1,
        "pending": len(report.pods),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _cli(args: list[str]) -> tuple[float, float, int]:
    """(wall s, peak RSS MB, exit code) of one `kdiagnose ARGS` process, its output discarded."""
    code = "import sys; from kdiagnose.cli import main; main(sys.argv[1:])"
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # 1: a pod is unschedulable (README "Exit codes")
        raise SystemExit(f"kdiagnose {' '.join(args)}: exit {proc.returncode}: {err.decode()[-400:]}")
    return wall, usage.ru_maxrss / 1024, proc.returncode


def _cpu_of(pid: int | None) -> float:
    """A process's CPU seconds so far (Linux /proc), or NaN."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=2, help="live/offline CLI pairs, alternated (default 2)")
    ap.add_argument(
        "--chunk-size", type=int, default=0, help="`kdiagnose --chunk-size` (default: its own, 500)"
    )
    ap.add_argument(
        "--remote",
        action="store_true",
        help="the server sends the bytes it encoded for a request before when asked again (see above)",
    )
    a = ap.parse_args()
    if a.client:
        print(json.dumps(_client(a.dump)))  # `dump` is the kubeconfig here
        return 0
    dump = a.dump
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = str(Path(tmp) / "kubeconfig")
        ctx = mp.get_context("spawn")
        ready, stop = ctx.Event(), ctx.Event()
        server = ctx.Process(target=_serve, args=(dump, kubeconfig, ready, stop, a.remote), daemon=True)
        server.start()
        if not ready.wait(900):
            print("server did not start", file=sys.stderr)
            return 1
        try:
            phases = subprocess.run(
                [sys.executable, __file__, "--client", kubeconfig], capture_output=True, text=True, check=True
            )
            row = json.loads(phases.stdout.strip().splitlines()[-1])
            print(
                f"live phases: {row['objects']} objects in {row['requests']} requests, fetch "
                f"{row['fetch_s']:.1f}s, snapshot + report {row['replay_s']:.1f}s, peak {row['peak_rss_mb']:.0f} MB"
            )
            for _ in range(a.repeat):
                chunk = ["--chunk-size", str(a.chunk_size)] if a.chunk_size else []
                served = _cpu_of(server.pid)
                lw, lm, _ = _cli(["pods", "-A", "--kubeconfig", kubeconfig, "-o", "json", *chunk])
                served = _cpu_of(server.pid) - served
                ow, om, _ = _cli([dump, "-o", "json"])
                print(
                    f"CLI -o json: live {lw:.1f}s {lm:.0f} MB (server CPU meanwhile {served:.1f}s), offline "
                    f"{ow:.1f}s {om:.0f} MB: time ratio {lw / ow:.2f}, memory ratio {lm / om:.2f}"
                )
        finally:
            stop.set()
            server.join(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
