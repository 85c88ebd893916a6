"""The pods' phase of `kdiagnose DUMP -o json` with 1, 2, ... pod workers, its CPU split between this
process (the writer) and the workers (issue #17).

    python benchmarks/pod_workers.py /tmp/c5k-1000.json              # --jobs 1,2
    python benchmarks/pod_workers.py DUMP --jobs 2 --repeat 3

After the load (not timed), every pending pod is diagnosed and written as `-o json` does
(`diagnose_snapshot` with a PodStream, the top remedies), to a sink that drops the bytes, with `--jobs`
forked workers (1: in this process). Printed per run: the phase's wall time, this process's user/sys CPU
and the workers' (their rusage once they have exited), and all of it per pod. A fresh process per run, so
no run starts with the caches of the one before; runs of several --jobs values alternate when --repeat
is above 1 (the machine's speed drifts, benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class _Sink:
    """A binary stream that drops what it is given (the writer's own work stays: reading the workers'
    texts, in the order of the pods)."""

    def write(self, data: bytes) -> int:
        return len(data)

    def writelines(self, parts: object) -> None:
        pass

    def flush(self) -> None:
        pass


def _one(dump: str, jobs: int, version: str) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from kdiagnose.load.dump import load_snapshot
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.report.json import PodStream
    from kdiagnose.results import MAX_REMEDIES
    from kdiagnose.versions import dialect_for

    snap, _ = load_snapshot([dump], dialect_for(version))
    names = [p.key for p in snap.pending]
    stream = PodStream(_Sink())  # type: ignore[arg-type]
    me0 = resource.getrusage(resource.RUSAGE_SELF)
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    report = diagnose_snapshot(
        snap, pods=names, source=dump, remedy_limit=MAX_REMEDIES, sink=stream, jobs=jobs
    )
    stream.finish(report)
    wall = time.perf_counter() - t0
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "pods": len(names),
        "wall": wall,
        "user": me1.ru_utime - me0.ru_utime,
        "sys": me1.ru_stime - me0.ru_stime,
        "workers_user": kids1.ru_utime - kids0.ru_utime,
        "workers_sys": kids1.ru_stime - kids0.ru_stime,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--jobs", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--k8s-version", default="v1.34.1")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a single run, in a fresh process
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(_one(args.dump, args.one, args.k8s_version)))
        return
    for _ in range(args.repeat):
        for jobs in (int(j) for j in args.jobs.split(",")):
            cmd = [sys.executable, __file__, args.dump, "--one", str(jobs), "--k8s-version", args.k8s_version]
            r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            cpu = r["user"] + r["sys"] + r["workers_user"] + r["workers_sys"]
            print(
                f"jobs={jobs} pods={r['pods']} wall={r['wall']:.1f}s"
                f" writer user/sys={r['user']:.1f}/{r['sys']:.1f}s"
                f" workers user/sys={r['workers_user']:.1f}/{r['workers_sys']:.1f}s"
                f" cpu/pod={1000 * cpu / max(1, r['pods']):.1f}ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
