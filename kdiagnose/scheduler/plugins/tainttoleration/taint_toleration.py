"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score
(plugins/tainttoleration/taint_toleration.go, component-helpers FindMatchingUntoleratedTaint)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import MAX_NODE_SCORE, SUCCESS, CycleState, Handle, Plugin, Status
from kdiagnose.scheduler.plugins.helper.normalize_score import default_normalize_score

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod, Taint, Toleration
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "ERR_REASON_NOT_MATCH",
    "ERR_REASON_UNTOLERATED",
    "ERR_REASON_UNTOLERATED_TAINT_FMT",
    "TaintToleration",
    "find_untolerated_taint",
    "untolerated_reason",
]

# Declared upstream but unused by Filter.
ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"
# <= v1.34.1: names the first untolerated taint; an empty value prints `{k: }`.
ERR_REASON_UNTOLERATED_TAINT_FMT = "node(s) had untolerated taint {{{}: {}}}"
# >= v1.34.2 (PR #135023): the taint is no longer leaked into pod status.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

_PRE_SCORE_KEY = "PreScore" + names.TAINT_TOLERATION
_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


def find_untolerated_taint(taints: Sequence[Taint], tolerations: list[Toleration]) -> Taint | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates, in node taint order."""
    for taint in taints:
        if taint.effect not in _DO_NOT_SCHEDULE:
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


def untolerated_reason(taint: Taint, names_taint: bool) -> str:
    if names_taint:
        return ERR_REASON_UNTOLERATED_TAINT_FMT.format(taint.key, taint.value)
    return ERR_REASON_UNTOLERATED


class TaintToleration(Plugin):
    name = names.TAINT_TOLERATION

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        self._by_list: dict[int, tuple[list[Taint], int]] | None = None
        self._index: dict[tuple[Taint, ...], int] = {}
        # _column: the snapshot's node list it was made for (its length then) and each node's class.
        self._col: tuple[list[NodeInfo], int, list[int]] | None = None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._verdict(node_info.node.taints, pod.tolerations)

    def _verdict(self, taints: list[Taint] | tuple[Taint, ...], tolerations: list[Toleration]) -> Status:
        taint = find_untolerated_taint(taints, tolerations)
        if taint is None:
            return SUCCESS
        reason = untolerated_reason(taint, self.dialect.taint_reason_names_taint)
        return Status.unresolvable(reason, details=({"taint": str(taint)},))

    def _classes(self) -> dict[int, tuple[list[Taint], int]]:
        """The snapshot's nodes' taint classes, once per snapshot (a Framework's plugins live as long as
        its snapshot): id of a node's taint list -> (that list, the index of its distinct tuple). The list
        is kept so an id is only trusted for the same list object; a node built later (a what-if copy)
        is keyed on the spot."""
        if self._by_list is None:
            index: dict[tuple[Taint, ...], int] = {}
            by_list: dict[int, tuple[list[Taint], int]] = {}
            for ni in self.snapshot.node_infos:
                taints = ni.node.taints
                if taints:
                    by_list[id(taints)] = (taints, index.setdefault(tuple(taints), len(index)))
            self._by_list, self._index = by_list, index
        return self._by_list

    def _class_of(self, taints: list[Taint]) -> object:
        """The class of a taint list the snapshot's nodes do not hold (a what-if node's): its tuple's index
        when a snapshot node has an equal list, else the tuple itself (never equal to an index)."""
        t = tuple(taints)
        return self._index.get(t, t)

    def _column(self, nodes: list[NodeInfo]) -> list[int] | None:
        """Each node's taint class (-1: no taints) when `nodes` is the snapshot's own node list, made once
        per snapshot; None for another list (what PreFilter or an earlier plugin left, a what-if's).

        The runner hands the first Filter plugins the snapshot's list itself (NodeUnschedulable rejects
        nothing on most clusters), so one pod's verdicts are then a C-level map over this column instead
        of a Python loop over 5,000 nodes. Its elements change only by own_node_info's clone of the same
        node (same taint list) or by appending (the length tells), as `_classes` assumes already."""
        if nodes is not self.snapshot.node_infos:
            return None
        col = self._col
        if col is None or col[0] is not nodes or col[1] != len(nodes):
            by_list = self._classes()
            classes: list[int] = []
            for ni in nodes:
                taints = ni.node.taints
                e = by_list.get(id(taints)) if taints else None
                if taints and (e is None or e[0] is not taints):
                    return None  # a list no class was made for (cannot happen for the snapshot's nodes)
                classes.append(e[1] if e is not None else -1)
            col = self._col = (nodes, len(nodes), classes)
        return col[2]

    def filter_many(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[Status]:
        # The verdict is a function of the node's taints alone: decided once per distinct taint list
        # (a pool's nodes share theirs), the Status shared by the nodes that carry it. Each node's
        # class is computed once per snapshot, not per pod.
        col = self._column(nodes)
        if col is not None:
            # One verdict per class (in class order, the last entry for the untainted: index -1), then
            # each node's by its class.
            by_class = [self._verdict(taints, pod.tolerations) for taints in self._index]
            by_class.append(SUCCESS)
            return list(map(by_class.__getitem__, col))
        by_list = self._classes()
        memo: dict[object, Status] = {}
        out: list[Status] = []
        for ni in nodes:
            taints = ni.node.taints
            if not taints:
                out.append(SUCCESS)
                continue
            e = by_list.get(id(taints))
            key = e[1] if e is not None and e[0] is taints else self._class_of(taints)
            st = memo.get(key)
            if st is None:
                st = memo[key] = self.filter(state, pod, ni)
            out.append(st)
        return out

    def score_many(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[list[int], Status | None]:
        # The count is a function of the node's taints alone: once per taint class, like filter_many.
        if state.read(_PRE_SCORE_KEY) is None:
            return super().score_many(state, pod, nodes)
        by_list = self._classes()
        memo: dict[object, int] = {}
        values: list[int] = []
        for ni in nodes:
            taints = ni.node.taints
            if not taints:
                values.append(0)
                continue
            e = by_list.get(id(taints))
            key = e[1] if e is not None and e[0] is taints else self._class_of(taints)
            v = memo.get(key)
            if v is None:
                v = memo[key] = self.score(state, pod, ni)[0]
            values.append(v)
        return values, None

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        # getAllTolerationPreferNoSchedule: only tolerations with an empty or PreferNoSchedule effect.
        prefer = [t for t in pod.tolerations if not t.effect or t.effect == "PreferNoSchedule"]
        state.write(_PRE_SCORE_KEY, prefer)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        prefer: list[Toleration] | None = state.read(_PRE_SCORE_KEY)
        if prefer is None:
            # taint_toleration.go getPreScoreState wraps framework.ErrNotFound (PreScore disabled in the profile).
            return 0, Status.error(f'failed to read "{_PRE_SCORE_KEY}" from cycleState: not found')
        count = 0
        for taint in node_info.node.taints:
            if taint.effect != "PreferNoSchedule":
                continue
            if not any(t.tolerates(taint) for t in prefer):
                count += 1
        return count, SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return SUCCESS
