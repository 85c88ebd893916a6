"""The "Scores" section of a schedulable pod: the winner sentence and the per-plugin score table.

Scores are weight × normalized score per plugin, as kube-scheduler sums them (runtime/framework.go,
RunScorePlugins); the table shows only the plugins that score non-zero on a shown node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.scheduler.diagnosis import ScoreTable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kdiagnose.report.console_layout import Out
    from kdiagnose.scheduler.diagnosis import Diagnosis, ScoreBreakdown

__all__ = ["render_scores"]

# Column headers of the score table (the legend under it spells them out).
_SHORT_PLUGIN = {
    "TaintToleration": "Taint",
    "NodeAffinity": "NodeAff",
    "NodeResourcesFit": "Fit",
    "VolumeBinding": "Volume",
    "PodTopologySpread": "Spread",
    "InterPodAffinity": "PodAff",
    "NodeResourcesBalancedAllocation": "Balanced",
    "ImageLocality": "Image",
    "DynamicResources": "DRA",
}


def _totals(scores: Mapping[str, ScoreBreakdown]) -> dict[str, int]:
    """Every feasible node's total. A ScoreTable has them summed by column: asking each node's breakdown
    would build 5,000 objects per pod to print the top five."""
    if isinstance(scores, ScoreTable):
        return scores.totals
    return {n: b.total for n, b in scores.items()}


def _plugins(scores: Mapping[str, ScoreBreakdown], ranked: list[str]) -> list[str]:
    """The scoring plugins in the order the breakdowns list them (a ScoreTable's columns: every node's
    breakdown has every column)."""
    if isinstance(scores, ScoreTable):
        return list(dict.fromkeys(c[0] for c in scores.columns))
    return list(dict.fromkeys(p for n in ranked for p in scores[n].plugins))


def _skipped(scores: Mapping[str, ScoreBreakdown]) -> list[str]:
    if isinstance(scores, ScoreTable):
        return sorted(set(scores.skipped)) if scores.nodes else []
    return sorted({p for b in scores.values() for p in b.skipped})


def _winner_sentence(d: Diagnosis, totals: dict[str, int]) -> str:
    """Why the chosen node wins: the only fit, a tie broken at random, or its lead over the runner-up."""
    if d.nominated_node_used and d.chosen:
        return f"The pod's nominated node {d.chosen} passes every filter: kube-scheduler takes it without scoring."
    if len(d.feasible) == 1 and d.chosen:
        return f"Only {d.chosen} passes every filter: kube-scheduler binds it without scoring."
    if not totals or d.chosen is None or d.chosen not in totals:
        return ""
    best = totals[d.chosen]
    if len(d.top_nodes) > 1:
        return (
            f"{len(d.top_nodes)} nodes tie at {best} points ({', '.join(sorted(d.top_nodes)[:5])}"
            f"{', …' if len(d.top_nodes) > 5 else ''}): "
            f"kube-scheduler picks one of them at random (kdiagnose shows {d.chosen})."
        )
    rest = [(t, n) for n, t in totals.items() if n not in d.top_nodes]
    if not rest:
        return f"{d.chosen} wins with {best} points."
    runner_total = max(t for t, _ in rest)
    # Among the runners-up tied on points, the same one as max() over (total, [-ord(c) ...]) of them all.
    runner = max((n for t, n in rest if t == runner_total), key=lambda n: [-ord(c) for c in n])
    win, other = d.scores[d.chosen].plugins, d.scores[runner].plugins
    diffs = {p: win[p].weighted - (other[p].weighted if p in other else 0) for p in win}
    plugin, gain = max(diffs.items(), key=lambda kv: kv[1]) if diffs else ("", 0)
    text = f"{d.chosen} wins with {best} points, {best - runner_total} ahead of {runner} ({runner_total})"
    if gain > 0:
        text += f", mostly from {plugin} (+{gain})"
    return text + "."


def render_scores(out: Out, d: Diagnosis, pools: dict[str, str], top: int, all_nodes: bool) -> None:
    """The winner sentence, then (unless the scheduler binds without scoring) the `top` best nodes' scores."""
    totals = _totals(d.scores)
    ranked = sorted(totals, key=lambda n: (-totals[n], n))
    names = ranked if all_nodes else ranked[: max(top, 1)]
    if d.chosen and d.chosen not in names and d.chosen in totals:
        names.append(d.chosen)  # a random pick among ties may sort below the cut
    shown = [d.scores[n] for n in names]
    sentence = _winner_sentence(d, totals)
    without_scoring = d.nominated_node_used or len(d.feasible) == 1
    if without_scoring and not all_nodes:
        if sentence:
            out.para(sentence, 0, 2)
        return
    plugins = _plugins(d.scores, ranked)
    nonzero = [p for p in plugins if any(b.plugins[p].weighted for b in shown if p in b.plugins)]
    zero = [p for p in plugins if p not in nonzero]
    what = f"top {len(shown)} of {len(ranked)}" if len(shown) < len(ranked) else f"all {len(ranked)}"
    out.para(f"Scores of {what} feasible node(s), weight × normalized score", 0, 2, style="bold")
    if sentence:
        out.para(sentence, 2, 4)
    with_pool = any(pools.get(b.node) for b in shown)
    head = [
        "",
        "Node",
        *(["Pool"] if with_pool else []),
        "Total",
        *(_SHORT_PLUGIN.get(p, p[:8]) for p in nonzero),
    ]
    rows = [head]
    for b in shown:
        cells = ["*" if b.node == d.chosen else "", b.node, *([pools.get(b.node, "-")] if with_pool else [])]
        cells += [str(b.total), *(str(b.plugins[p].weighted) if p in b.plugins else "-" for p in nonzero)]
        rows.append(cells)
    _number_table(out, rows, first_numeric=3 if with_pool else 2)
    notes = []
    legend = [f"{_SHORT_PLUGIN[p]}={p}" for p in nonzero if p in _SHORT_PLUGIN and _SHORT_PLUGIN[p] != p]
    if legend:
        notes.append(", ".join(legend))
    pick = "kdiagnose's pick among the tied nodes" if len(d.top_nodes) > 1 else "the chosen node"
    notes.append(f"* = {pick}")
    if zero:
        notes.append(f"0 on every shown node: {', '.join(zero)}")
    skipped = _skipped(d.scores)
    if skipped:
        notes.append(f"skipped at PreScore (contribute 0): {', '.join(skipped)}")
    if d.feasible_to_find and len(ranked) > d.feasible_to_find:
        notes.append(
            f"kdiagnose scores all {len(ranked)} feasible nodes; kube-scheduler (percentageOfNodesToScore) "
            f"stops filtering after {d.feasible_to_find} feasible nodes from a rotating start and scores "
            "those, so its pick may be a near-best node instead"
        )
    for n in notes:
        out.para(n, 2, 4, style="dim")


def _number_table(out: Out, rows: list[list[str]], first_numeric: int) -> None:
    """Left-aligned names, right-aligned numbers; node names are ellipsized only when the table is wider than
    the terminal (the names are whole in the sentence above)."""
    n = len(rows[0])
    widths = [max(len(r[i]) for r in rows) for i in range(n)]
    total = 2 + sum(widths) + 2 * (n - 1)
    if total > out.width and widths[1] > 12:
        widths[1] = max(12, widths[1] - (total - out.width))
    for i, r in enumerate(rows):
        cells = []
        for j, c in enumerate(r):
            if len(c) > widths[j]:
                c = c[: widths[j] - 1] + "…"
            cells.append(c.rjust(widths[j]) if j >= first_numeric else c.ljust(widths[j]))
        out.line(("  " + "  ".join(cells)).rstrip(), "bold" if i == 0 or r[0] == "*" else None)
