"""Per Filter plugin: the time of one batch call (`filter_many`) over every node of a dump (issue #17).

    python benchmarks/filters.py /tmp/c5k-1000.json                # 30 pending pods, best of 5 rounds
    python benchmarks/filters.py DUMP --pods 60 --rounds 7

After the load (not timed), PreFilter runs once per sampled pending pod (every k-th in key order); then each
Filter plugin of the default profile is called on all nodes for the pods whose PreFilter did not skip it,
`--rounds` times, and the best round is reported in ms per call, with the number of pods it ran for. Last,
the runner's plugin-major pass (`Framework._filter_nodes`, what a scheduling cycle runs) per pod.

The best of several rounds in one process is steadier than whole-command timings on a shared machine
(benchmarks/README.md: the same CLI run varies by 15-25 % here), which is what a change to one plugin's
loop needs: compare two checkouts with the same dump, alternately.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def setup(doc: str) -> tuple[argparse.Namespace, Any, Any, list[Any]]:
    """The command line (a dump, --pods, --rounds, --k8s-version) and what it names: the loaded snapshot,
    a Framework of its default profile and the sampled pending pods (every k-th in key order). Shared
    with scores.py."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--pods", type=int, default=30, help="pending pods sampled (evenly, in key order)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--k8s-version", default="v1.34.1")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from kdiagnose.load.dump import load_snapshot
    from kdiagnose.scheduler.engine import Scheduler
    from kdiagnose.scheduler.runner import Framework
    from kdiagnose.versions import dialect_for

    snap, _ = load_snapshot([args.dump], dialect_for(args.k8s_version))
    fw = Framework(snap, Scheduler(snap).profiles[0])
    pending = sorted(snap.pending, key=lambda p: p.key)
    pods = pending[:: max(1, len(pending) // max(1, args.pods))][: args.pods]
    return args, snap, fw, pods


def best(rounds: int, run: list[tuple[Any, Any]], call: Callable[..., object], nodes: list[Any]) -> float:
    """The best of `rounds` rounds of `call(state, pod, nodes)` over `run`'s (pod, state) pairs, in ms
    per call."""
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for pod, state in run:
            call(state, pod, nodes)
        times.append(time.perf_counter() - t)
    return 1000 * min(times) / len(run)


def main() -> int:
    args, snap, fw, pods = setup(__doc__ or "")
    from kdiagnose.scheduler.framework import CycleState
    from kdiagnose.scheduler.runner import _SKIP_KEY

    states = []
    for pod in pods:
        state = CycleState()
        fw.run_pre_filter(state, pod)
        states.append(state)
    nodes = snap.node_infos
    print(f"{args.dump}: {len(nodes)} nodes, {len(pods)} pending pods sampled, best of {args.rounds} rounds")
    print(f"{'plugin':28s} {'pods':>5s} {'ms per call':>12s}")
    for pl in fw.filter_plugins:
        run = [(p, s) for p, s in zip(pods, states, strict=True) if pl.name not in (s.read(_SKIP_KEY) or ())]
        if run:
            print(f"{pl.name:28s} {len(run):5d} {best(args.rounds, run, pl.filter_many, nodes):12.2f}")
    every = list(zip(pods, states, strict=True))
    print(
        f"{'(runner) _filter_nodes':28s} {len(every):5d} {best(args.rounds, every, fw._filter_nodes, nodes):12.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
