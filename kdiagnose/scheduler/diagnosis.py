"""What one scheduling attempt decided for one pod: the data every report and remedy reads."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from operator import add, mul
from typing import TYPE_CHECKING

from kdiagnose.scheduler import names

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.scheduler.framework import Status

__all__ = ["PREENQUEUE_WAITS", "Diagnosis", "PluginScore", "Preemption", "ScoreBreakdown", "ScoreTable"]

MAX_NODE_SCORE = 100
# What each PreEnqueue plugin waits for (plugins/schedulinggates, plugins/dynamicresources PreEnqueue,
# DefaultPreemption's async-preemption hook): the pod is not tried, and no FailedScheduling event is written.
PREENQUEUE_WAITS = {
    names.SCHEDULING_GATES: "its spec.schedulingGates to be removed (by whoever added them)",
    names.DYNAMIC_RESOURCES: (
        "every ResourceClaim it references to exist (a claim from a ResourceClaimTemplate is created by the "
        "resourceclaim controller, which needs the template)"
    ),
    names.DEFAULT_PREEMPTION: "the preemption it triggered earlier to finish",
}


@dataclass(slots=True)
class PluginScore:
    plugin: str
    raw: int
    score: int  # normalized, 0-100
    weight: int

    @property
    def weighted(self) -> int:
        return self.score * self.weight


@dataclass(slots=True)
class ScoreBreakdown:
    node: str
    plugins: dict[str, PluginScore] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # plugins that returned Skip at PreScore

    @property
    def total(self) -> int:
        return sum(p.weighted for p in self.plugins.values())


class ScoreTable(Mapping[str, ScoreBreakdown]):
    """Per-plugin score columns for the feasible nodes; a node's ScoreBreakdown is built when asked for.

    Scoring 5,000 nodes with 8 plugins would otherwise build 40,000 small objects per pod that reports
    mostly never read (they show the top nodes)."""

    def __init__(self, nodes: list[str]) -> None:
        self.nodes = nodes
        self.skipped: list[str] = []  # plugins that returned Skip at PreScore
        self.columns: list[
            tuple[str, int, dict[str, int], dict[str, int]]
        ] = []  # plugin, weight, raw, normalized
        # The weighted sums in node order, summed column by column in C (map over lists); `totals` is
        # their dict, built when read.
        self._sums: list[int] = [0] * len(nodes)
        self._totals: dict[str, int] | None = None
        self._pos: dict[str, int] | None = None
        self._built: dict[str, ScoreBreakdown] = {}

    @property
    def totals(self) -> dict[str, int]:
        if self._totals is None:
            self._totals = dict(zip(self.nodes, self._sums, strict=True))
        return self._totals

    def add(self, plugin: str, weight: int, raw: dict[str, int], normalized: dict[str, int]) -> None:
        # Share one dict where normalizing or clamping changed nothing: a column costs ~N entries, not 3N.
        clamped = normalized
        if normalized and (min(normalized.values()) < 0 or max(normalized.values()) > MAX_NODE_SCORE):
            clamped = {n: max(0, min(MAX_NODE_SCORE, v)) for n, v in normalized.items()}
        if raw == clamped:
            raw = clamped
        self.columns.append((plugin, weight, raw, clamped))
        self._totals = None
        if list(clamped) == self.nodes:
            self._sums = list(map(add, self._sums, map(mul, clamped.values(), repeat(weight))))
            return
        if self._pos is None:
            self._pos = {n: i for i, n in enumerate(self.nodes)}
        pos, sums = self._pos, self._sums
        for n, v in clamped.items():
            sums[pos[n]] += v * weight

    def __getitem__(self, node: str) -> ScoreBreakdown:
        b = self._built.get(node)
        if b is None:
            if node not in self.totals:
                raise KeyError(node)
            b = ScoreBreakdown(node, skipped=list(self.skipped))
            for plugin, weight, raw, norm in self.columns:
                b.plugins[plugin] = PluginScore(plugin, raw.get(node, 0), norm.get(node, 0), weight)
            self._built[node] = b
        return b

    def __iter__(self) -> Iterator[str]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


@dataclass(slots=True)
class Preemption:
    nominated_node: str
    victims: list[Pod]
    pdb_violations: int = 0


@dataclass(slots=True)
class Diagnosis:
    """`verdicts` maps every evaluated node to its Status (Success = feasible), in snapshot order.
    Nodes PreFilterResult excluded are in `not_evaluated` and carry `absent` in the histogram."""

    pod: Pod
    profile: str = "default-scheduler"
    num_all_nodes: int = 0
    handled: bool = True
    not_handled_reason: str = ""
    preenqueue: Status | None = None
    prefilter: Status | None = None
    prefilter_node_names: list[str] | None = None
    verdicts: dict[str, Status] = field(default_factory=dict)
    not_evaluated: list[str] = field(default_factory=list)
    absent: Status | None = None
    # v1.32+ (findNodesThatFitPod): the nodes a PreFilterResult left out carry `absent` as their status
    # (UnschedulableAndUnresolvable, no plugin); v1.31 gave them none, they were not evaluated.
    absent_counted: bool = False
    feasible: list[str] = field(default_factory=list)
    scores: Mapping[str, ScoreBreakdown] = field(default_factory=dict)
    scored_by_scheduler: bool = False
    # numFeasibleNodesToFind: kube-scheduler stops filtering once it has this many feasible nodes (from a
    # rotating start), so with more feasible nodes than this it scores a sample; kdiagnose scores them all.
    feasible_to_find: int = 0
    top_nodes: list[str] = field(default_factory=list)
    chosen: str | None = None
    nominated_node_used: bool = False
    postfilter: Status | None = None
    preemption: Preemption | None = None
    message: str | None = None  # the event text, truncated at 1024 bytes as the event recorder does
    full_message: str | None = None
    notes: list[str] = field(default_factory=list)  # "not checked: ..." and similar honesty notes

    @property
    def scheduled(self) -> bool:
        return self.chosen is not None

    @property
    def attempted(self) -> bool:
        return self.handled and self.preenqueue is None

    @property
    def gated(self) -> bool:
        """Held by spec.schedulingGates (the SchedulingGates PreEnqueue plugin): the only "gated" pods."""
        return self.preenqueue is not None and self.preenqueue.plugin == names.SCHEDULING_GATES

    @property
    def preenqueue_wait(self) -> str:
        """What the PreEnqueue plugin holding the pod waits for, in words ("" when none holds it)."""
        if self.preenqueue is None:
            return ""
        return PREENQUEUE_WAITS.get(
            self.preenqueue.plugin, f"{self.preenqueue.plugin or 'a plugin'} to admit it"
        )
