"""Live-mode benchmark: list a big cluster through the real kubernetes client from a local API server.

    python benchmarks/live.py /tmp/c5k.json

The test suite's fake API server (tests/fake_apiserver.py: real HTTP on 127.0.0.1, paginated lists) runs in
a child process loaded with the dump; this process runs `kdiagnose pods -A`'s fetch and snapshot build and
reports wall time and peak RSS, next to the offline load of the same file for the 1.5x memory target.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _serve(dump: str, kubeconfig: str, ready: Any, stop: Any) -> None:
    import orjson

    from tests.fake_apiserver import FakeAPIServer

    doc = orjson.loads(Path(dump).read_bytes())
    items = doc.get("items", []) if isinstance(doc, dict) else doc
    with FakeAPIServer(items) as srv:
        srv.kubeconfig(Path(kubeconfig))
        ready.set()
        stop.wait()


def _client(kubeconfig: str) -> dict[str, float]:
    from kdiagnose.commands.live import build_live_report
    from kdiagnose.load.cluster import fetch_for_pods, resolve_target

    t0 = time.perf_counter()
    fetched, dialect = fetch_for_pods(resolve_target(kubeconfig, None), None, timeout=600)
    t1 = time.perf_counter()
    report = build_live_report(fetched, dialect)
    t2 = time.perf_counter()
    return {
        "objects": len(fetched.objects),
        "requests": fetched.requests,
        "fetch_s": t1 - t0,
        "replay_s": t2 - t1,
        "pending": len(report.pods),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--client":
        print(json.dumps(_client(sys.argv[2])))
        return 0
    dump = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = str(Path(tmp) / "kubeconfig")
        ctx = mp.get_context("spawn")
        ready, stop = ctx.Event(), ctx.Event()
        server = ctx.Process(target=_serve, args=(dump, kubeconfig, ready, stop), daemon=True)
        server.start()
        if not ready.wait(900):
            print("server did not start", file=sys.stderr)
            return 1
        try:
            live = subprocess.run(
                [sys.executable, __file__, "--client", kubeconfig], capture_output=True, text=True, check=True
            )
        finally:
            stop.set()
            server.join(30)
    offline = subprocess.run(
        [sys.executable, str(HERE / "run.py"), dump, "--pending", "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(live.stdout.strip().splitlines()[-1])
    off = json.loads(offline.stdout.strip().splitlines()[-1])
    print(
        f"live: {row['objects']} objects in {row['requests']} requests, fetch {row['fetch_s']:.1f}s, "
        f"replay {row['replay_s']:.1f}s, peak {row['peak_rss_mb']:.0f} MB; offline peak {off['peak_rss_mb']:.0f} MB "
        f"(ratio {row['peak_rss_mb'] / off['peak_rss_mb']:.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
