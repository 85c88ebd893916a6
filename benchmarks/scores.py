"""Per Score plugin: the time of one batch call (`score_many`) over every node of a dump (issue #17).

    python benchmarks/scores.py /tmp/c5k-1000.json                 # 30 pending pods, best of 5 rounds
    python benchmarks/scores.py DUMP --pods 60 --rounds 7

The companion of filters.py. After the load (not timed), PreFilter and PreScore run once per sampled
pending pod (every k-th in key order) over every node, as if every node were feasible (the largest batch a
scheduling cycle scores); then each Score plugin of the default profile is called on all nodes for the pods
whose PreScore did not skip it, `--rounds` times, and the best round is reported in ms per call. Last, the
runner's whole scoring step (`Framework._score`: PreScore, Score, NormalizeScore, the weighted table).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--pods", type=int, default=30, help="pending pods sampled (evenly, in key order)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--k8s-version", default="v1.34.1")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from kdiagnose.load.dump import load_snapshot
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.engine import Scheduler
    from kdiagnose.scheduler.framework import Code, CycleState
    from kdiagnose.scheduler.runner import Framework
    from kdiagnose.versions import dialect_for

    snap, _ = load_snapshot([args.dump], dialect_for(args.k8s_version))
    fw = Framework(snap, Scheduler(snap).profiles[0])
    pending = sorted(snap.pending, key=lambda p: p.key)
    pods = pending[:: max(1, len(pending) // max(1, args.pods))][: args.pods]
    nodes = snap.node_infos
    runs: list[tuple[Any, CycleState, set[str]]] = []
    for pod in pods:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        skipped = {
            pl.name for pl in fw.pre_score_plugins if pl.pre_score(state, pod, nodes).code == Code.SKIP
        }
        runs.append((pod, state, skipped))
    print(f"{args.dump}: {len(nodes)} nodes, {len(pods)} pending pods sampled, best of {args.rounds} rounds")
    print(f"{'plugin':34s} {'pods':>5s} {'ms per call':>12s}")

    def best(run: list[tuple[Any, CycleState]], call: Callable[..., object]) -> float:
        times = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            for pod, state in run:
                call(state, pod, nodes)
            times.append(time.perf_counter() - t)
        return 1000 * min(times) / len(run)

    for pl, _ in fw.score_plugins:
        run = [(p, s) for p, s, skipped in runs if pl.name not in skipped]
        if run:
            print(f"{pl.name:34s} {len(run):5d} {best(run, pl.score_many):12.2f}")

    def whole(state: CycleState, pod: Any, nodes: list[Any]) -> None:
        fw._score(state, pod, Diagnosis(pod=pod, profile=fw.profile.scheduler_name), nodes)

    every = [(p, CycleState()) for p, _, _ in runs]
    for pod, state in every:
        fw.run_pre_filter(state, pod)
    print(f"{'(runner) _score':34s} {len(every):5d} {best(every, whole):12.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
