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

__all__ = [
    "AUTOMATIC",
    "MAX_REMEDIES",
    "RISKY",
    "SAFE",
    "SAFETY_ORDER",
    "PodReport",
    "Recorded",
    "Remedy",
    "Report",
    "Sequential",
]


# Safety classes, in rank order (README "How remedies are ranked"). A change that is never a remedy (it
# would break the workload: another arch/OS, dedicated hardware, the control plane, a node's bad state)
# is not a Remedy at all: it goes to the pod's remedy notes ("Ruled out") with the reason.
AUTOMATIC = "automatic"  # kube-scheduler does it by itself (preemption): nothing to apply
SAFE = "safe"  # the workload keeps every requirement: more capacity, uncordon, a small right-size, ...
RISKY = "risky"  # the workload runs somewhere or somehow it was not meant to: `risk` says how
SAFETY_ORDER = {AUTOMATIC: 0, SAFE: 1, RISKY: 2}
# Remedies a report shows per pod (and, without --all-remedies, the only ones searched for).
MAX_REMEDIES = 3


@dataclass(slots=True)
class Remedy:
    """A change that a what-if replay proved would make the pod schedulable."""

    kind: (
        str  # scale-pool | toleration | relax-affinity | right-size | uncordon | preemption | free-port | ...
    )
    summary: str
    plugin: str = ""
    reason: str = ""
    patch: str = ""  # YAML for the owning workload's pod template, when the change is to the workload
    target: str = ""  # e.g. "Deployment default/web"
    unblocks: list[str] = field(default_factory=list)  # node names (simulated nodes are named as such)
    risk: str = ""
    verify: str = ""  # one complete shell command (its expected output in a trailing `# ...` comment)
    rank: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    safety: str = SAFE  # AUTOMATIC | SAFE | RISKY
    commands: list[str] = field(default_factory=list)  # complete shell commands that apply it, in order
    patch_document: dict[str, Any] | None = None  # the patch body `patch` shows (JSON: "patch")
    rollback: str = ""  # one complete shell command, or a `# ...` comment when no command undoes it
    apply_note: str = ""  # how the change reaches the pending pod (e.g. "a new ReplicaSet replaces it")
    covers: int = 0  # pending pods of the workload it places (ranking; 0 = not counted)
    change_size: float = 0.0  # how big the change is, per kind (ranking; README "How remedies are ranked")


@dataclass(slots=True)
class Recorded:
    """What the cluster recorded for the pod (live, or in a dump): the latest FailedScheduling event."""

    message: str | None = None
    count: int = 0
    age_seconds: float | None = None  # before `age_reference`
    age_reference: str = "now"  # "now" (live) or "the dump" (offline: its newest timestamp)
    last_seen: str = ""  # the event's own timestamp (RFC 3339), when it has one
    condition_reason: str = ""
    condition_message: str = ""
    agrees: bool | None = None
    explanation: str = ""
    # Every event about the pod (scheduler, cluster-autoscaler, Karpenter), newest first: who, reason, type,
    # count, ageSeconds (against the snapshot time), message.
    events: list[dict[str, Any]] = field(default_factory=list)
    # Each autoscaler event beside what the replay says (who, reason, recorded, replayed, agrees, explanation).
    autoscaler: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Sequential:
    """An owner's pending pods placed one after another (sequential.py): how many fit together."""

    total: int
    fit: int = 0
    by_node: dict[str, int] = field(default_factory=dict)  # node -> pods placed there
    rest: str = ""  # the scheduler's message for the first pod that does not fit ("" when all fit)
    first_failing: str = ""  # that pod (namespace/name)
    rest_fix: str = ""  # the first fix a what-if replay proves for that pod, on the cluster as left before it
    rest_diagnosis: Diagnosis | None = None  # that pod's diagnosis there
    capped: bool = False  # stopped at sequential.MAX_PLACEMENTS: at least `fit` fit


@dataclass(slots=True)
class PodReport:
    diagnosis: Diagnosis
    remedies: list[Remedy] = field(default_factory=list)
    remedy_notes: list[str] = field(default_factory=list)  # e.g. per-pool "why no scale-up"
    # Remedy kinds not tried once the top remedies were known (pipeline remedy_limit; --all-remedies
    # tries every kind): `remedies` is then the top ones only and `remedy_notes` lacks those kinds' notes.
    remedies_not_tried: list[str] = field(default_factory=list)
    triage: str = ""  # live: "bound to node X: not a scheduling problem (ImagePullBackOff)" etc.
    recorded: Recorded | None = None
    owner: str = ""  # "Deployment default/web" when known
    why_pending: str = ""  # offline: why a pod the replay can place is still Pending in the dump
    # Live, when RBAC denied what the replay needs: why it was not replayed (the report falls back to what
    # the cluster recorded: the pod's FailedScheduling event and PodScheduled condition).
    not_replayed: str = ""


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
    sequential: dict[str, Sequential] = field(default_factory=dict)  # owner -> its pods one after another
    # Live: the permissions whose denial made the replay impossible ("cannot list nodes: forbidden: ...")
    # and the read-only ClusterRole + binding (YAML) that would allow it.
    replay_denied: list[str] = field(default_factory=list)
    rbac: str = ""
    # Live `pods` in one namespace with nothing Pending: the Pending pods elsewhere, and the command for them.
    scope_hint: str = ""
    scope_command: str = ""
