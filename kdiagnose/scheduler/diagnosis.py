"""What one scheduling attempt decided for one pod: the data every report and remedy reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.scheduler.framework import Status

__all__ = ["Diagnosis", "PluginScore", "Preemption", "ScoreBreakdown"]


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
    feasible: list[str] = field(default_factory=list)
    scores: dict[str, ScoreBreakdown] = field(default_factory=dict)
    scored_by_scheduler: bool = False
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
