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

from typing import Any

from filters import best, setup  # this directory: the scripts run as `python benchmarks/...`


def main() -> int:
    args, snap, fw, pods = setup(__doc__ or "")
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.framework import Code, CycleState

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
    for pl, _ in fw.score_plugins:
        run = [(p, s) for p, s, skipped in runs if pl.name not in skipped]
        if run:
            print(f"{pl.name:34s} {len(run):5d} {best(args.rounds, run, pl.score_many, nodes):12.2f}")

    def whole(state: CycleState, pod: Any, nodes: list[Any]) -> None:
        fw._score(state, pod, Diagnosis(pod=pod, profile=fw.profile.scheduler_name), nodes)

    every = [(p, CycleState()) for p, _, _ in runs]
    for pod, state in every:
        fw.run_pre_filter(state, pod)
    print(f"{'(runner) _score':34s} {len(every):5d} {best(args.rounds, every, whole, nodes):12.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
