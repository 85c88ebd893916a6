"""The analysis' results: Remedy, PodReport, Report (everything a formatter or the gate sees).

They live here, below remedies/, report/ and gate.py, so the pipeline's arrows run one way:
load -> Snapshot -> replay -> Diagnosis -> remedies -> (these results) -> report | gate.
Formatters import them from here (report/interface.py re-exports them for the formatters' ABC habit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kdiagnose.scheduler.diagnosis import Diagnosis

__all__ = ["PodReport", "Recorded", "Remedy", "Report"]


@dataclass(slots=True)
class Remedy:
    """A change that a what-if replay proved would make the pod schedulable."""

    kind: str  # scale-pool | toleration | relax-affinity | right-size | preemption | free-port | volume | ...
    summary: str
    plugin: str = ""
    reason: str = ""
    patch: str = ""  # YAML for the owning workload's pod template, when the change is to the workload
    target: str = ""  # e.g. "Deployment default/web"
    unblocks: list[str] = field(default_factory=list)  # node names (simulated nodes are named as such)
    risk: str = ""
    verify: str = ""
    rank: int = 0
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Recorded:
    """What the cluster itself recorded for the pod (live mode): the latest FailedScheduling event."""

    message: str | None = None
    count: int = 0
    age_seconds: float | None = None
    condition_reason: str = ""
    condition_message: str = ""
    agrees: bool | None = None
    explanation: str = ""


@dataclass(slots=True)
class PodReport:
    diagnosis: Diagnosis
    remedies: list[Remedy] = field(default_factory=list)
    remedy_notes: list[str] = field(default_factory=list)  # e.g. per-pool "why no scale-up"
    triage: str = ""  # live: "bound to node X: not a scheduling problem (ImagePullBackOff)" etc.
    recorded: Recorded | None = None
    owner: str = ""  # "Deployment default/web" when known


@dataclass(slots=True)
class Report:
    k8s_version: str
    source: str  # file paths, or "context <name>" for live
    num_nodes: int
    num_pods: int
    pods: list[PodReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped_kinds: dict[str, int] = field(default_factory=dict)
    missing_kinds: list[str] = field(default_factory=list)
    profile_notes: list[str] = field(
        default_factory=list
    )  # non-default profile, strategies, not replayed parts
    node_pools: dict[str, str] = field(default_factory=dict)  # node -> pool name
    profiles: dict[str, str] = field(default_factory=dict)  # non-default profile -> one-line description
    # Why this release: --k8s-version, the server's /version, the nodes' kubelets, or the default.
    k8s_version_reason: str = ""
