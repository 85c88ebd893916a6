"""Codes, Status, CycleState and the plugin interface (k8s.io/kube-scheduler/framework/interface.go).

A plugin is a class with a `name` and any of the extension-point methods below; the runner calls only the
ones a plugin defines (as the upstream framework does through interface assertions). Plugins are pure:
they read the Snapshot and the pod, keep per-cycle data in CycleState, and never do I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, overload

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot
    from kdiagnose.versions import Dialect

__all__ = [
    "MAX_NODE_SCORE",
    "Code",
    "CycleState",
    "Handle",
    "LazyDetails",
    "Plugin",
    "PreFilterResult",
    "Status",
    "add_note",
    "notes_of",
]

MAX_NODE_SCORE = 100


class Code(IntEnum):
    """Status codes in upstream order."""

    SUCCESS = 0
    ERROR = 1
    # The node does not fit now; preemption may make it fit.
    UNSCHEDULABLE = 2
    # The node cannot fit whatever is preempted; PostFilter skips it.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    # At PreFilter/PreScore: the plugin has nothing to do for this pod; its Filter/Score is not run.
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _CODE_LABELS[self]


_CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


Details = Sequence[dict[str, Any]]


class LazyDetails(Sequence[dict[str, Any]]):
    """Status.details whose tail is computed the first time it is read, then kept: report-only work (the
    DynamicResources allocator's per-request explanation) stays off the Filter, which runs for every node
    and again in preemption; only a report or a remedy that reads the details pays for it. It compares,
    iterates and pickles as the plain tuple it stands for."""

    __slots__ = ("_head", "_items", "_more")

    def __init__(
        self, head: tuple[dict[str, Any], ...], more: Callable[[], Iterable[dict[str, Any]]]
    ) -> None:
        self._head = head
        self._more: Callable[[], Iterable[dict[str, Any]]] | None = more
        self._items: tuple[dict[str, Any], ...] | None = None

    def _all(self) -> tuple[dict[str, Any], ...]:
        if self._items is None:
            assert self._more is not None
            self._items = (*self._head, *self._more())
            self._more = None  # drop the closure (the allocator, the node) once computed
        return self._items

    @property
    def computed(self) -> bool:
        return self._items is not None

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[dict[str, Any]]: ...
    def __getitem__(self, i: int | slice) -> dict[str, Any] | Sequence[dict[str, Any]]:
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._all())

    def __bool__(self) -> bool:
        return bool(self._head) or bool(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyDetails | tuple):
            return self._all() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> tuple[type[tuple[dict[str, Any], ...]], tuple[tuple[dict[str, Any], ...]]]:
        return tuple, (self._all(),)


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's answer. `details` carries the concrete cause (numbers, the taint, the term) for reports;
    it never affects the message, which is built from `reasons` only, as upstream."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    details: Details = ()

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        # Immutable: a Status that already names the plugin is its own copy (no second object per node
        # for the batch filters that name themselves).
        if self.plugin == plugin:
            return self
        return Status(self.code, self.reasons, plugin, self.details)

    @staticmethod
    def unschedulable(*reasons: str, details: Details = ()) -> Status:
        return Status(Code.UNSCHEDULABLE, reasons, "", details)

    @staticmethod
    def unresolvable(*reasons: str, details: Details = ()) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, "", details)

    @staticmethod
    def error(*reasons: str) -> Status:
        return Status(Code.ERROR, reasons)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


@dataclass(slots=True)
class PreFilterResult:
    """Restricts Filter to these node names (NodeAffinity's matchFields metadata.name); None = all nodes."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return PreFilterResult(other.node_names)
        return PreFilterResult(self.node_names & other.node_names)


class CycleState:
    """Per-pod, per-cycle data keyed by plugin. Values that preemption mutates must define clone()."""

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def read(self, key: str) -> Any:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            clone = getattr(v, "clone", None)
            c._data[k] = clone() if callable(clone) else v
        return c


_NOTES_KEY = "framework/notes"


def add_note(state: CycleState, note: str) -> None:
    """Record an honesty note for the report, e.g. "not checked: the input has no PersistentVolumes"."""
    notes: list[str] | None = state.read(_NOTES_KEY)
    if notes is None:
        notes = []
        state.write(_NOTES_KEY, notes)
    if note not in notes:
        notes.append(note)


def notes_of(state: CycleState) -> list[str]:
    return list(state.read(_NOTES_KEY) or [])


@dataclass(slots=True)
class Handle:
    """What a plugin may read besides the pod: the snapshot, the release dialect, its profile's args."""

    snapshot: Snapshot
    dialect: Dialect
    args: dict[str, Any] = field(default_factory=dict)


class Plugin:
    """Base for every plugin. Subclasses override only the extension points they implement:

    pre_filter(state, pod) -> tuple[PreFilterResult | None, Status]
    filter(state, pod, node_info) -> Status
    filter_many(state, pod, nodes: list[NodeInfo]) -> list[Status]           (batch Filter, same verdicts)
    add_pod(state, pod_to_schedule, pod_to_add, node_info) -> Status       (PreFilterExtensions)
    remove_pod(state, pod_to_schedule, pod_to_remove, node_info) -> Status (PreFilterExtensions)
    post_filter(state, pod, statuses) -> Status
    pre_score(state, pod, nodes: list[NodeInfo]) -> Status
    score(state, pod, node_info) -> tuple[int, Status]
    score_many(state, pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]  (batch Score)
    normalize_score(state, pod, scores: dict[str, int]) -> Status           (in place)
    """

    name: ClassVar[str] = ""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @property
    def snapshot(self) -> Snapshot:
        return self.handle.snapshot

    @property
    def dialect(self) -> Dialect:
        return self.handle.dialect

    # Declared for the type checker; the runner checks `type(p).filter is not Plugin.filter`.
    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        return None, SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        """Filter for many nodes at once, `[filter(state, pod, ni) for ni in nodes]` exactly (kdiagnose's
        own batch form; upstream calls Filter per node). A plugin whose verdict depends on a few node
        fields overrides it to decide once per distinct value and share the Status between those nodes."""
        f = self.filter
        return [f(state, pod, ni) for ni in nodes]

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 0, SUCCESS

    def score_many(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        """Score for many nodes at once (kdiagnose's own batch form; upstream scores node by node): the
        values `score` gives, in node order, and the first Error status among them (None without one). A
        plugin whose score reads a few node fields overrides it with one loop over the nodes."""
        f = self.score
        values: list[int] = []
        error: Status | None = None
        for ni in nodes:
            value, st = f(state, pod, ni)
            if error is None and st.code is Code.ERROR:
                error = st
            values.append(value)
        return values, error

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        return SUCCESS
