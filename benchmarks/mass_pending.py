"""Mass-pending benchmark (issue #17): `kdiagnose DUMP -o json` over N distinct pending pods, per phase.

    python benchmarks/mass_pending.py --nodes 5000 --pending 1000     # generate (once) and measure
    python benchmarks/mass_pending.py --dump /tmp/c.json              # measure a given dump
    python benchmarks/mass_pending.py --nodes 1000 --pending 200 --profile out.prof

The dump is `generate.py --varied` (every pending pod its own owner, varied requests, labels and node
selectors, a third with required anti-affinity, a fifth with zone spread). One child process does what
`kdiagnose DUMP -o json` does, phase by phase: load (parse + snapshot), replay (every pending pod's
scheduling cycle), remedies (the top 3 per unschedulable pod, as the CLI searches them), JSON (each pod
written to /dev/null as soon as it is diagnosed, as the CLI does: the phases interleave, each is timed
apart). Each phase reports wall time, CPU time (user + system: on a shared machine wall time
grows with the other processes, CPU time much less) and peak RSS. `--cli` also runs the real commands
(`kdiagnose DUMP -o json > /dev/null` and the human report, `kdiagnose DUMP > /dev/null`) and reports
their wall time, CPU time and peak RSS (each in a process of its own, its workers included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(dump: str, k8s_version: str, limit: int | None, profile: str) -> dict[str, Any]:
    """In this process: the phases of `kdiagnose DUMP -o json` (remedy_limit 3, or None for all)."""
    sys.path.insert(0, str(ROOT))
    from kdiagnose.load.dump import load_snapshot
    from kdiagnose.pipeline import diagnose_snapshot
    from kdiagnose.remedies import engine
    from kdiagnose.report.json import PodStream
    from kdiagnose.versions import dialect_for

    out: dict[str, Any] = {"dump": dump, "remedy_limit": limit}
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
    t0, c0 = time.perf_counter(), _cpu()
    snapshot, _ = load_snapshot([dump], dialect_for(k8s_version))
    out.update(load_s=time.perf_counter() - t0, load_cpu_s=_cpu() - c0, load_rss_mb=_rss_mb())
    out.update(nodes=snapshot.num_nodes, pods=len(snapshot.pods), pending=len(snapshot.pending))

    remedies = {"wall": 0.0, "cpu": 0.0, "pods": 0}
    top = engine.compute_top_remedies

    def timed(*args: Any, **kw: Any) -> Any:
        w, c = time.perf_counter(), _cpu()
        try:
            return top(*args, **kw)
        finally:
            remedies["wall"] += time.perf_counter() - w
            remedies["cpu"] += _cpu() - c
            remedies["pods"] += 1

    engine.compute_top_remedies = timed  # type: ignore[assignment]
    # As the CLI does: each pod's JSON written (to /dev/null) as soon as it is diagnosed (PodStream).
    sink = open(os.devnull, "wb")  # noqa: SIM115
    stream = PodStream(sink)
    js = {"wall": 0.0, "cpu": 0.0, "truncated": 0}

    class Timed:
        """The stream, its per-pod writes timed (the pods diagnosed in this process: jobs=1)."""

        encode, emit = stream.encode, stream.emit

        def pod(self, report: Any, pr: Any) -> Any:
            js["truncated"] += bool(pr.remedies_not_tried)
            w, c = time.perf_counter(), _cpu()
            try:
                return stream.pod(report, pr)
            finally:
                js["wall"] += time.perf_counter() - w
                js["cpu"] += _cpu() - c

    t1, c1 = time.perf_counter(), _cpu()
    if prof is not None:
        prof.enable()
    report = diagnose_snapshot(snapshot, source=dump, remedy_limit=limit, sink=Timed())
    t2, c2 = time.perf_counter(), _cpu()
    out.update(
        replay_s=t2 - t1 - remedies["wall"] - js["wall"],
        replay_cpu_s=c2 - c1 - remedies["cpu"] - js["cpu"],
        remedies_s=remedies["wall"],
        remedies_cpu_s=remedies["cpu"],
        remedied_pods=remedies["pods"],
        unschedulable=sum(1 for p in report.pods if not p.diagnosis.scheduled),
        truncated=js["truncated"],
        streamed=stream.started,
        diagnose_rss_mb=_rss_mb(),
    )
    stream.finish(report)
    sink.close()
    t3, c3 = time.perf_counter(), _cpu()
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    out.update(
        json_s=t3 - t2 + js["wall"],
        json_cpu_s=c3 - c2 + js["cpu"],
        total_s=t3 - t0,
        total_cpu_s=c3 - c0,
        peak_rss_mb=_rss_mb(),
    )
    return out


# One command measured in a process of its own, so that its peak RSS is not the largest of every command
# run before it (RUSAGE_CHILDREN keeps the maximum); the workers it forks are its children, counted too.
_MEASURE_ONE = """
import json, os, resource, subprocess, sys, time
t0 = time.perf_counter()
with open(os.devnull, "wb") as sink:
    rc = subprocess.run([sys.executable, "-c", "from kdiagnose.cli import main; main()", *sys.argv[1:]],
                        stdout=sink, check=False).returncode
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mb": ru.ru_maxrss / 1024, "rc": rc}))
"""


def cli(dump: str, output: str) -> dict[str, float]:
    """The real command, stdout to /dev/null: wall, CPU and peak RSS of the child (and its workers)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NO_COLOR", None)
    res = subprocess.run(
        [sys.executable, "-c", _MEASURE_ONE, dump, *(["-o", output] if output != "human" else [])],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    one = json.loads(res.stdout.strip().splitlines()[-1])
    prefix = "cli" if output == "json" else f"cli_{output}"
    return {
        f"{prefix}_s": one["s"],
        f"{prefix}_cpu_s": one["cpu_s"],
        f"{prefix}_peak_rss_mb": one["peak_rss_mb"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--pending", type=int, default=1000)
    ap.add_argument("--dump", default="", help="measure this dump instead of generating one")
    ap.add_argument("--k8s-version", default="v1.34.1")
    ap.add_argument("--all-remedies", action="store_true", help="search every remedy kind (--all-remedies)")
    ap.add_argument(
        "--cli",
        action="store_true",
        help="also run `kdiagnose DUMP -o json > /dev/null` and the human report, `kdiagnose DUMP > /dev/null`",
    )
    ap.add_argument("--profile", default="", help="write a cProfile of replay + remedies + JSON here")
    ap.add_argument("--workdir", default=os.environ.get("TMPDIR", "/tmp") + "/kdiagnose-bench")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    dump = a.dump
    if not dump:
        Path(a.workdir).mkdir(parents=True, exist_ok=True)
        dump = str(Path(a.workdir) / f"varied-{a.nodes}-{a.pods_per_node}-{a.pending}.json")
        if not Path(dump).exists():
            subprocess.run(
                [sys.executable, str(HERE / "generate.py"), "--nodes", str(a.nodes), "--pods-per-node",
                 str(a.pods_per_node), "--pending", str(a.pending), "--varied", "--out", dump],
                check=True,
            )  # fmt: skip
    limit = None if a.all_remedies else 3
    if a.child:
        print(json.dumps(measure(dump, a.k8s_version, limit, a.profile)))
        return 0
    args = [sys.executable, __file__, "--child", "--dump", dump, "--k8s-version", a.k8s_version]
    args += ["--all-remedies"] if a.all_remedies else []
    args += ["--profile", a.profile] if a.profile else []
    res = subprocess.run(args, check=True, capture_output=True, text=True)
    row: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    if a.cli:
        row.update(cli(dump, "json"))
        row.update(cli(dump, "human"))
    load = os.getloadavg()
    row.update(cores=os.cpu_count(), loadavg=[round(x, 1) for x in load])
    print(json.dumps(row))
    print(
        f"{row['nodes']} nodes, {row['pods']} pods, {row['pending']} pending ({row['unschedulable']} unschedulable, "
        f"{row['truncated']} with the remedy search stopped at the top 3); load average {load[0]:.1f} on "
        f"{os.cpu_count()} cores\n"
        f"  load     {row['load_s']:7.1f} s wall {row['load_cpu_s']:7.1f} s CPU  {row['load_rss_mb']:6.0f} MB\n"
        f"  replay   {row['replay_s']:7.1f} s wall {row['replay_cpu_s']:7.1f} s CPU "
        f"({1000 * row['replay_cpu_s'] / max(row['pending'], 1):.0f} ms/pod)\n"
        f"  remedies {row['remedies_s']:7.1f} s wall {row['remedies_cpu_s']:7.1f} s CPU "
        f"({1000 * row['remedies_cpu_s'] / max(row['remedied_pods'], 1):.0f} ms/unschedulable pod)  "
        f"{row['diagnose_rss_mb']:6.0f} MB\n"
        f"  json     {row['json_s']:7.1f} s wall {row['json_cpu_s']:7.1f} s CPU\n"
        f"  total    {row['total_s']:7.1f} s wall {row['total_cpu_s']:7.1f} s CPU  {row['peak_rss_mb']:6.0f} MB peak"
        + (
            f"\n  kdiagnose DUMP -o json: {row['cli_s']:.1f} s wall, {row['cli_cpu_s']:.1f} s CPU, "
            f"{row['cli_peak_rss_mb']:.0f} MB peak"
            f"\n  kdiagnose DUMP (human): {row['cli_human_s']:.1f} s wall, {row['cli_human_cpu_s']:.1f} s CPU, "
            f"{row['cli_human_peak_rss_mb']:.0f} MB peak"
            if a.cli
            else ""
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
