"""Benchmark runner: wall time and peak RSS per phase (parse, build snapshot, diagnose).

    python benchmarks/run.py /tmp/c5k.json            # one dump, one process
    python benchmarks/run.py --sizes 500,1000,5000    # generate and measure each size in a fresh process
    python benchmarks/run.py /tmp/c5k.json --jobs 1,2 --pin --repeat 3   # 1 vs 2 decoding workers/cores

Each measurement runs in its own process so peak RSS is that of one load.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    # CPU time (user + system): unlike wall time, it does not grow when other processes share the cores.
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _children_cpu_s() -> float:
    # The decoding workers (load/parallel.py), once they have exited.
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _children_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def measure(path: str, k8s_version: str, pods_limit: int, jobs: int | None = None) -> dict[str, float]:
    from kdiagnose.load import parallel
    from kdiagnose.load.files import load_paths
    from kdiagnose.load.snapshot import build_snapshot
    from kdiagnose.scheduler.engine import Scheduler
    from kdiagnose.versions import dialect_for

    parallel.set_jobs(jobs)
    out: dict[str, float] = {"jobs": parallel.jobs()}
    # As load/dump.py load_snapshot does it: no cyclic GC while loading, then the loaded objects frozen out
    # of its way (else the first diagnosis pays for collecting over all of them).
    gc.disable()
    c0 = _cpu_s()
    t0 = time.perf_counter()
    loaded = load_paths([path])
    t1 = time.perf_counter()
    out["parse_s"] = t1 - t0
    out["parse_cpu_s"] = _cpu_s() - c0
    out["parse_workers_cpu_s"] = _children_cpu_s()
    out["workers_peak_rss_mb"] = _children_rss_mb()
    out["parse_rss_mb"] = _rss_mb()
    snap = build_snapshot(loaded.objects, dialect_for(k8s_version), list_kinds=loaded.list_kinds)
    del loaded
    gc.freeze()
    gc.enable()
    t2 = time.perf_counter()
    out["snapshot_s"] = t2 - t1
    out["snapshot_cpu_s"] = _cpu_s() - c0 - out["parse_cpu_s"]
    out["nodes"] = snap.num_nodes
    out["pods"] = len(snap.pods)
    sched = Scheduler(snap)
    pending = snap.pending[:pods_limit]
    times = []
    for p in pending:
        ts = time.perf_counter()
        sched.diagnose(p)
        times.append(time.perf_counter() - ts)
    out["first_pod_s"] = times[0] if times else 0.0
    out["next_pods_avg_s"] = sum(times[1:]) / len(times[1:]) if len(times) > 1 else 0.0
    out["pending_diagnosed"] = len(times)
    out["total_s"] = time.perf_counter() - t0
    out["total_cpu_s"] = _cpu_s() - c0
    out["peak_rss_mb"] = _rss_mb()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", nargs="?")
    ap.add_argument("--sizes", default="")
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--pending", type=int, default=10)
    ap.add_argument("--format", choices=["json", "yaml"], default="json")
    ap.add_argument("--k8s-version", default="v1.34.1")
    ap.add_argument("--workdir", default=os.environ.get("TMPDIR", "/tmp") + "/kdiagnose-bench")
    ap.add_argument("--jobs", default="", help="decoding processes: one value, or a list (1,2) to compare")
    ap.add_argument("--pin", action="store_true", help="run jobs=N on N cores only (taskset)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--varied", action="store_true", help="generate.py --varied (issue #17's incident)")
    a = ap.parse_args()
    if a.dump and "," not in a.jobs:
        print(json.dumps(measure(a.dump, a.k8s_version, a.pending, int(a.jobs) if a.jobs else None)))
        return 0
    Path(a.workdir).mkdir(parents=True, exist_ok=True)
    dumps = [Path(a.dump)] if a.dump else []
    for size in [int(s) for s in a.sizes.split(",") if s]:
        dump = Path(a.workdir) / f"cluster-{size}-{a.pods_per_node}{'-varied' if a.varied else ''}.{a.format}"
        if not dump.exists():
            subprocess.run(
                [
                    sys.executable,
                    str(HERE / "generate.py"),
                    *("--nodes", str(size), "--pods-per-node", str(a.pods_per_node)),
                    *("--pending", str(a.pending), "--format", a.format, "--out", str(dump)),
                    *(["--varied"] if a.varied else []),
                ],
                check=True,
            )
        dumps.append(dump)
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    for dump in dumps:
        for jobs in [int(j) for j in (a.jobs or "0").split(",")]:
            cmd = [
                sys.executable,
                __file__,
                str(dump),
                "--pending",
                str(a.pending),
                "--k8s-version",
                a.k8s_version,
            ]
            if jobs:
                cmd += ["--jobs", str(jobs)]
            if jobs and a.pin and len(cores) >= jobs:
                # N workers on N cores: the 1-vs-2-core comparison of issue #17.
                cmd = ["taskset", "-c", ",".join(map(str, cores[:jobs])), *cmd]
            for _ in range(a.repeat):
                res = subprocess.run(cmd, check=True, capture_output=True, text=True)
                row = json.loads(res.stdout.strip().splitlines()[-1])
                row["size_mb"] = dump.stat().st_size / 2**20
                print(
                    f"{dump.name} jobs={int(row['jobs'])} {int(row['pods'])} pods {row['size_mb']:.0f} MB | "
                    f"parse {row['parse_s']:.1f}s (cpu {row['parse_cpu_s']:.1f} + workers "
                    f"{row['parse_workers_cpu_s']:.1f}) snapshot {row['snapshot_s']:.1f}s (cpu "
                    f"{row['snapshot_cpu_s']:.1f}) first pod {row['first_pod_s']:.2f}s | total {row['total_s']:.1f}s "
                    f"cpu {row['total_cpu_s']:.1f}+{row['parse_workers_cpu_s']:.1f}s | peak {row['peak_rss_mb']:.0f} MB "
                    f"(workers {row['workers_peak_rss_mb']:.0f} MB each)",
                    flush=True,
                )
                print(json.dumps(row), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
