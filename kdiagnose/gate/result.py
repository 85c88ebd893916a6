"""What the gate found: per workload (placements, the first failure, headroom) and for the whole run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kdiagnose.gate.policy import Outcome

if TYPE_CHECKING:
    from kdiagnose.gate.config import GateConfig
    from kdiagnose.gate.locate import Location, PathBase, Sources
    from kdiagnose.load.manifests import Workload
    from kdiagnose.results import PodReport

__all__ = [
    "HEADROOM_CAP",
    "GateOptions",
    "GateResult",
    "Headroom",
    "InputProblem",
    "NodeFailure",
    "Placement",
    "WorkloadResult",
    "first_line",
]

HEADROOM_CAP = 1000


@dataclass(slots=True)
class Placement:
    pod: str  # namespace/name
    node: str | None
    how: str  # "fits" | "preemption" | "existing" (a DaemonSet pod the snapshot already runs there)
    victims: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Headroom:
    more: int  # further replicas that fit now, after every workload of the input is placed
    capped: bool
    reason: str  # why the next one does not fit (the scheduler message), or the cap


@dataclass(slots=True)
class NodeFailure:
    """A DaemonSet pod that cannot run on one node its controller targets."""

    node: str
    outcome: Outcome
    report: PodReport


@dataclass(slots=True)
class WorkloadResult:
    workload: Workload
    outcome: Outcome = Outcome.FITS
    total: int = 0  # replicas asked for (DaemonSet: nodes targeted)
    fit_now: int = 0
    fit_preemption: int = 0
    placements: list[Placement] = field(default_factory=list)
    failed_replica: int | None = None  # 0-based index of the first replica that does not fit now
    failure: PodReport | None = None  # that replica's diagnosis and remedies
    message: str = ""  # that replica's scheduler message (or the API server's rejection)
    node_failures: list[NodeFailure] = field(default_factory=list)
    excluded_nodes: dict[str, str] = field(default_factory=dict)  # DaemonSet: node -> why not targeted
    headroom: Headroom | None = None
    ignore_reason: str = ""
    notes: list[str] = field(default_factory=list)
    fails_policy: bool = False
    # SCALE_UP: "fits after scale-up of group apps: 2 of 3 → 3", or why no autoscaler can add the node.
    scale_up: str = ""
    scale_up_ok: bool = False
    # Where CI shows it (gate/locate.py, filled by findings.locate): the object, and the fields to blame.
    location: Location | None = None
    fields: list[Location] = field(default_factory=list)
    rendered_from: Location | None = None  # helm: the document's place in the rendered input

    @property
    def summary(self) -> str:
        """One line: "all 3 fit", "2 of 3 fit; replica 3: <message>", "fits only by preemption: ..."."""
        w = self.workload
        if self.outcome == Outcome.IGNORED:
            return f"skipped: {self.ignore_reason}"
        if self.outcome == Outcome.NOT_CHECKED:
            return f"not checked: {self.message}"
        unit = "targeted node(s)" if w.per_node else "replica(s)"
        if self.total == 0:
            return f"no {unit}: nothing to place"
        if w.per_node:
            if not self.node_failures:
                extra = f" ({self.fit_preemption} only by preemption)" if self.fit_preemption else ""
                return f"all {self.total} targeted node(s) fit{extra}"
            first = self.node_failures[0]
            more = f" (and {len(self.node_failures) - 1} more node(s))" if len(self.node_failures) > 1 else ""
            ok = self.total - len(self.node_failures)
            return f"{ok} of {self.total} targeted node(s) fit; cannot run on {first.node}{more}: {first_line(first.report)}"
        if self.failed_replica is None:
            if self.fit_preemption:
                return (
                    f"all {self.total} fit, {self.fit_preemption} only by preemption: "
                    f"{self._preemption_text()}"
                )
            return f"all {self.total} fit"
        k = self.failed_replica
        prefix = f"{k} of {self.total} fit"
        if self.fit_preemption:
            prefix += f" ({self.fit_preemption} only by preemption)"
        if self.outcome == Outcome.SCALE_UP and self.scale_up:
            return f"{prefix}; replica {k + 1}: {self.scale_up}; now: {self.message}"
        return f"{prefix}; replica {k + 1}: {self.message}"

    def _preemption_text(self) -> str:
        victims = [v for p in self.placements if p.how == "preemption" for v in p.victims]
        nodes = sorted({p.node for p in self.placements if p.how == "preemption" and p.node})
        return f"evicts {len(victims)} pod(s) on {', '.join(nodes)}" + (
            f" ({', '.join(victims[:5])}{', …' if len(victims) > 5 else ''})" if victims else ""
        )


def first_line(pr: PodReport) -> str:
    return pr.diagnosis.message or pr.diagnosis.not_handled_reason or ""


@dataclass(slots=True)
class InputProblem:
    """A manifest (or snapshot) the gate could not read: the report still says where and what."""

    message: str  # the one-line error, as printed
    location: Location | None = None
    workload: str = ""  # "Deployment web" when the error names one


@dataclass(slots=True)
class GateResult:
    results: list[WorkloadResult]
    fail_on: str
    k8s_version: str
    snapshot_source: str
    num_nodes: int
    num_pods: int
    ignored_kinds: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    headroom_cap: int | None = None  # set when headroom was computed
    errors: list[InputProblem] = field(default_factory=list)  # input errors: nothing was checked
    paths: PathBase | None = None  # how paths are shown (default: git work tree or working directory)
    sources: Sources | None = None  # the manifests' text, for lines and columns
    located: bool = False

    @property
    def failing(self) -> list[WorkloadResult]:
        return [r for r in self.results if r.fails_policy]


@dataclass(slots=True)
class GateOptions:
    fail_on: str = "unschedulable"
    replace: bool = False
    headroom: bool = False
    headroom_cap: int = HEADROOM_CAP
    config: GateConfig | None = None
