"""One scheduling cycle per pod (pkg/scheduler/schedule_one.go and framework/runtime/framework.go).

The runner, not the plugins, records which plugin rejected a node, runs plugins in profile order, stops
at the first failing filter, and builds the message in one place (fit_error.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress, repeat
from operator import attrgetter, eq, is_, is_not, not_
from typing import TYPE_CHECKING, cast

from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.describe import postfilter_notes
from kdiagnose.scheduler.diagnosis import Diagnosis, ScoreTable
from kdiagnose.scheduler.fit_error import NO_NODES_AVAILABLE, fit_error_message, truncate_event
from kdiagnose.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    Handle,
    Plugin,
    PreFilterResult,
    Status,
    add_note,
    notes_of,
)
from kdiagnose.scheduler.registry import plugin_class

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo, Snapshot
    from kdiagnose.scheduler.profiles import Profile

__all__ = ["Framework"]

_SKIP_KEY = "framework/prefilter-skipped"
_NAME = attrgetter("name")
_CODE = attrgetter("code")
_PLUGIN = attrgetter("plugin")
_REJECTIONS = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
# Plugins with no replayable extension point of their own.
_NOT_INSTANTIATED = {n.PRIORITY_SORT, n.DEFAULT_BINDER}


def _defines(plugin: Plugin, method: str) -> bool:
    return getattr(type(plugin), method) is not getattr(Plugin, method)


MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(
    percentage: int | None, num_all_nodes: int, has_score_plugins: bool = True
) -> int:
    """schedule_one.go numFeasibleNodesToFind: how many feasible nodes kube-scheduler looks for before it
    stops filtering (0 or unset = adaptive: 50% minus 1% per 125 nodes, at least 5%, at least 100 nodes)."""
    if not has_score_plugins:
        return 1
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct <= 0:
        pct = max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - num_all_nodes // 125)
    if pct >= 100:
        return num_all_nodes
    return max(MIN_FEASIBLE_NODES_TO_FIND, num_all_nodes * pct // 100)


class Framework:
    """A profile instantiated against one snapshot; `schedule(pod)` is one scheduling attempt."""

    def __init__(self, snapshot: Snapshot, profile: Profile, *, nominated: bool = False) -> None:
        self.snapshot = snapshot
        self.profile = profile
        # Live clusters: pods nominated by an earlier preemption hold their node for equal-or-lower
        # priority pods (addGENominatedPods). Golden corpora schedule each pending pod alone: off there.
        self.nominated = nominated
        self._nominated_by_node: dict[str, list[Pod]] | None = None
        self.dialect = snapshot.dialect
        self.plugins: dict[str, Plugin] = {}
        for name in profile.plugins():
            if name in _NOT_INSTANTIATED:
                continue
            cls = plugin_class(name)
            if cls is None:
                continue  # out-of-tree: listed in profile.not_replayed by the config loader
            handle = Handle(snapshot, self.dialect, dict(profile.plugin_args.get(name, {})))
            self.plugins[name] = cls(handle)

        def point(names: Iterable[str], method: str) -> list[Plugin]:
            return [self.plugins[x] for x in names if x in self.plugins and _defines(self.plugins[x], method)]

        self.pre_filter_plugins = point(profile.pre_filter, "pre_filter")
        self.filter_plugins = point(profile.filter, "filter")
        self.extension_plugins = [
            p for p in self.pre_filter_plugins if _defines(p, "add_pod") or _defines(p, "remove_pod")
        ]
        self.post_filter_plugins = [self.plugins[x] for x in profile.post_filter if x in self.plugins]
        self.pre_score_plugins = point(profile.pre_score, "pre_score")
        self.score_plugins = [
            (self.plugins[x], w or 1) for x, w in profile.score.items() if x in self.plugins
        ]

    # ---------------------------------------------------------------- filter helpers (also for preemption)

    def run_pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult, Status, list[str]]:
        """RunPreFilterPlugins: Skip disables a Filter, UU stops at once, U is remembered (the last wins)."""
        result = PreFilterResult()
        status = SUCCESS
        skipped: set[str] = set()
        with_nodes: list[str] = []
        state.write(_SKIP_KEY, skipped)
        for pl in self.pre_filter_plugins:
            r, s = pl.pre_filter(state, pod)
            if s.code == Code.SKIP:
                skipped.add(pl.name)
                continue
            if not s.ok:
                s = s.with_plugin(pl.name)
                if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return result, s, with_nodes
                if s.code == Code.UNSCHEDULABLE:
                    status = s
                    continue
                return (
                    result,
                    Status(Code.ERROR, (f'running PreFilter plugin "{pl.name}": {s.message}',), pl.name),
                    with_nodes,
                )
            if r is not None and r.node_names is not None:
                with_nodes.append(pl.name)
                result = result.merge(r)
                if result.node_names is not None and not result.node_names:
                    if len(with_nodes) == 1:
                        msg = f"node(s) didn't satisfy plugin {with_nodes[0]}"
                    else:
                        # sets.List: the plugin names sorted, not in run order.
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}] simultaneously"
                    return result, Status.unresolvable(msg), with_nodes
        return result, status, with_nodes

    def run_filters(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        skipped: set[str] = state.read(_SKIP_KEY) or set()
        for pl in self.filter_plugins:
            if pl.name in skipped:
                continue
            s = pl.filter(state, pod, node_info)
            if s.code is not Code.SUCCESS:
                return self._rejection(pl, s)
        return SUCCESS

    def _filter_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> dict[str, Status]:
        """Every node's verdict, in node order. Plugin-major (each plugin over the nodes still standing):
        the same first-failure result as node-major, since plugins are pure, at a fraction of the calls."""
        return self._filter_feasible(state, pod, nodes)[0]

    def _filter_feasible(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[dict[str, Status], list[NodeInfo]]:
        """_filter_nodes's verdicts and the nodes they pass (in node order): what the plugin-major pass has
        left standing, not a second scan of 5,000 verdicts for the feasible ones."""
        if self.has_nominated_pods(pod):
            verdicts = {ni.name: self.run_filters_with_nominated(state, pod, ni) for ni in nodes}
            return verdicts, [ni for ni in nodes if verdicts[ni.name].code is Code.SUCCESS]
        skipped: set[str] = state.read(_SKIP_KEY) or set()
        # The verdicts of every node in node order, when the first plugin to reject any saw them all (its
        # batch then is the column, made in C); the later rejections, (name, Status) pairs read at the end.
        first: list[Status] | None = None
        later: list[Iterable[tuple[str, Status]]] = []
        remaining = nodes
        for pl in self.filter_plugins:
            if pl.name in skipped:
                continue
            statuses = pl.filter_many(state, pod, remaining)
            if len(statuses) != len(remaining):
                raise ValueError(f"{pl.name}: {len(statuses)} verdicts for {len(remaining)} nodes")
            # Most plugins pass every node still standing: one identity scan in C (no list made), no loop of
            # our own.
            if all(map(is_, statuses, repeat(SUCCESS))):
                continue
            ok = list(map(is_, statuses, repeat(SUCCESS)))
            # Only the nodes not given SUCCESS itself are looked at, a column at a time in C.
            bad = list(compress(range(len(ok)), map(not_, ok)))
            given = list(map(statuses.__getitem__, bad))
            wrapped = self.wrap_rejections(pl, given)
            odd = not all(map(is_not, wrapped, repeat(None)))
            if odd:  # a Success other than SUCCESS: the node stays
                for i in compress(bad, map(is_, wrapped, repeat(None))):
                    ok[i] = True
                kept = list(map(is_not, wrapped, repeat(None)))
                bad, wrapped = list(compress(bad, kept)), list(compress(wrapped, kept))
            rejections = cast("list[Status]", wrapped)
            if remaining is nodes and not odd:
                if rejections is given:  # each its own wrapped form: the batch is the verdict column
                    first = statuses
                else:  # each node's Status swapped for its wrapped form (SUCCESS is none of them)
                    swap = dict(zip(map(id, given), rejections, strict=True))
                    first = list(map(swap.get, map(id, statuses), statuses))
            else:
                # `remaining` is rebound below, never changed: the names are read from this list at the end.
                later.append(zip(map(_NAME, map(remaining.__getitem__, bad)), rejections, strict=True))
            remaining = list(compress(remaining, ok))
            if not remaining:
                break
        # Node order kept: update() rewrites the values of keys already there (rejected names are a subset).
        if first is not None:
            out = dict(zip(map(_NAME, nodes), first, strict=True))
        else:
            out = dict.fromkeys(map(_NAME, nodes), SUCCESS)
        for pairs in later:
            out.update(pairs)
        # Nothing rejected: `remaining` is the caller's list itself (often the snapshot's), handed on as a copy.
        return out, remaining if remaining is not nodes else list(nodes)

    def wrap_rejections(self, pl: Plugin, statuses: list[Status]) -> list[Status | None]:
        """A batch's statuses other than the shared SUCCESS as RunFilterPlugins reports them (`_rejection`),
        each distinct Status object wrapped once: one a batch filter shares between nodes stays shared (the
        reports and -o json treat those nodes' verdicts as one). None for a Success other than SUCCESS (the
        node passes)."""
        distinct = dict(zip(map(id, statuses), statuses, strict=True))
        own = distinct.values()
        if _REJECTIONS.issuperset(map(_CODE, own)) and all(map(eq, map(_PLUGIN, own), repeat(pl.name))):
            # Rejections that name the plugin already (NodeResourcesFit's, one per node): each is its own
            # wrapped form (with_plugin returns it), no Python call per node.
            return cast("list[Status | None]", statuses)
        wrapped = {
            k: None if st.code is Code.SUCCESS else self._rejection(pl, st) for k, st in distinct.items()
        }
        return list(map(wrapped.__getitem__, map(id, statuses)))

    @staticmethod
    def _rejection(pl: Plugin, s: Status) -> Status:
        if s.code not in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
            # RunFilterPlugins wraps a non-rejection: `running "<plugin>" filter plugin: <err>`.
            msg = f'running "{pl.name}" filter plugin: {s.message}'
            return Status(Code.ERROR, (msg,), pl.name, s.details)
        return s.with_plugin(pl.name)

    def _nominated_index(self) -> dict[str, list[Pod]]:
        if self._nominated_by_node is None:
            idx: dict[str, list[Pod]] = {}
            for p in self.snapshot.pending:
                if p.nominated_node_name:
                    idx.setdefault(p.nominated_node_name, []).append(p)
            self._nominated_by_node = idx
        return self._nominated_by_node

    def has_nominated_pods(self, pod: Pod) -> bool:
        """Whether any node carries pods nominated ahead of this one (only with `nominated`)."""
        if not self.nominated:
            return False
        return any(self.nominated_pods_for(pod, node) for node in self._nominated_index())

    def nominated_pods_for(self, pod: Pod, node_name: str) -> list[Pod]:
        """Pods nominated to a node with priority >= the pod's, other than the pod (addGENominatedPods)."""
        if not self.nominated:
            return []
        return [
            p
            for p in self._nominated_index().get(node_name, ())
            if p is not pod and p.priority >= pod.priority and (not p.uid or p.uid != pod.uid)
        ]

    def run_filters_with_nominated(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """RunFilterPluginsWithNominatedPods: pass 1 with higher-or-equal nominated pods added, pass 2 without."""
        nominated = self.nominated_pods_for(pod, node_info.name)
        if not nominated:
            return self.run_filters(state, pod, node_info)
        state1 = state.clone()
        ni1 = node_info.clone()
        for p in nominated:
            ni1.add_pod(p)
            added = self.run_add_pod(state1, pod, p, ni1)
            if not added.ok:
                return added
        s = self.run_filters(state1, pod, ni1)
        if not s.ok:
            return s
        return self.run_filters(state, pod, node_info)

    def run_add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        skipped: set[str] = state.read(_SKIP_KEY) or set()
        for pl in self.extension_plugins:
            if pl.name in skipped:
                continue
            s = pl.add_pod(state, pod, pod_to_add, node_info)
            if not s.ok:
                # RunPreFilterExtensionAddPod turns any non-success into an error naming the plugin.
                return Status(Code.ERROR, (f'running AddPod on PreFilter plugin "{pl.name}": {s.message}',))
        return SUCCESS

    def run_remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo) -> Status:
        skipped: set[str] = state.read(_SKIP_KEY) or set()
        for pl in self.extension_plugins:
            if pl.name in skipped:
                continue
            s = pl.remove_pod(state, pod, pod_to_remove, node_info)
            if not s.ok:
                return Status(
                    Code.ERROR, (f'running RemovePod on PreFilter plugin "{pl.name}": {s.message}',)
                )
        return SUCCESS

    # ---------------------------------------------------------------- the cycle

    def schedule(self, pod: Pod) -> Diagnosis:
        state = CycleState()
        d = self._schedule(state, pod)
        d.notes.extend(n for n in notes_of(state) if n not in d.notes)
        return d

    def _schedule(self, state: CycleState, pod: Pod) -> Diagnosis:
        d = Diagnosis(pod=pod, profile=self.profile.scheduler_name, num_all_nodes=self.snapshot.num_nodes)
        if n.SCHEDULING_GATES in self.profile.pre_enqueue and pod.scheduling_gates:
            gates = " ".join(pod.scheduling_gates)
            d.preenqueue = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"waiting for scheduling gates: [{gates}]",),
                n.SCHEDULING_GATES,
            )
            return d
        # Other PreEnqueue plugins (DynamicResources: every claim must exist) in profile order.
        for name in self.profile.pre_enqueue:
            pre_enqueue = getattr(self.plugins.get(name), "pre_enqueue", None)
            if name == n.SCHEDULING_GATES or pre_enqueue is None:
                continue
            pe: Status = pre_enqueue(pod)
            if not pe.ok:
                d.preenqueue = pe.with_plugin(name)
                return d
        nodes = self.snapshot.node_infos
        if not nodes:
            d.message = d.full_message = NO_NODES_AVAILABLE
            return d

        pre_result, pre_status, with_nodes = self.run_pre_filter(state, pod)
        nominated_status: Status | None = None
        if not pre_status.ok:
            if pre_status.code == Code.ERROR:
                d.prefilter = pre_status
                d.full_message = pre_status.message
                d.message = truncate_event(d.full_message)  # handleSchedulingFailure truncates every event
                return d
            d.prefilter = pre_status
            for ni in nodes:
                d.verdicts[ni.name] = pre_status
            d.full_message = self._fail(state, pod, d, prefilter_msg=pre_status.message)
            d.message = truncate_event(d.full_message)
            return d

        if pre_result.node_names is not None:
            # PreFilter's node set is the cycle's whether or not the nominated node then fits.
            d.prefilter_node_names = sorted(pre_result.node_names)
        if pod.nominated_node_name and pod.nominated_node_name in self.snapshot.node_info_by_name:
            ni = self.snapshot.node_info_by_name[pod.nominated_node_name]
            s = self.run_filters_with_nominated(state, pod, ni)
            if s.ok:
                d.nominated_node_used = True
                d.verdicts[ni.name] = SUCCESS
                d.not_evaluated = [x.name for x in nodes if x.name != ni.name]
                d.feasible = [ni.name]
                self._score(state, pod, d, [ni])
                return d
            if s.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                # evaluateNominatedNode writes into the shared NodeToStatus: a rejected nominated node stays an
                # explicit entry even when the PreFilterResult leaves it out (an Error is only logged).
                nominated_status = s

        candidates = nodes
        if pre_result.node_names is not None:
            candidates = [ni for ni in nodes if ni.name in pre_result.node_names]
            d.not_evaluated = [ni.name for ni in nodes if ni.name not in pre_result.node_names]
            # The set the message names is the diagnosis's UnschedulablePlugins at this point (schedule_one.go,
            # findNodesThatFitPod: `diagnosis.UnschedulablePlugins = unscheduledPlugins`, one shared set), so it
            # also holds the plugin that rejected the nominated node in evaluateNominatedNode just before.
            named = set(with_nodes)
            if nominated_status is not None and nominated_status.plugin:
                named.add(nominated_status.plugin)
            plugins = " ".join(sorted(named))
            d.absent = Status.unresolvable(f"node(s) didn't satisfy plugin(s) [{plugins}]")
            d.absent_counted = self.dialect.absent_nodes_counted
        d.verdicts, feasible = self._filter_feasible(state, pod, candidates)
        for st in d.verdicts.values():
            if st.code is Code.ERROR:
                d.full_message = st.message
                d.message = truncate_event(st.message)
                return d
        nominated = pod.nominated_node_name
        if nominated_status is not None and nominated not in d.verdicts:
            d.verdicts[nominated] = nominated_status
            d.not_evaluated = [x for x in d.not_evaluated if x != nominated]
            order = self.snapshot.node_info_by_name
            d.verdicts = {x: d.verdicts[x] for x in order if x in d.verdicts}
        d.feasible = [ni.name for ni in feasible]
        if feasible:
            self._score(state, pod, d, feasible)
            return d
        statuses = {k: v for k, v in d.verdicts.items()}
        d.full_message = self._fail(state, pod, d, statuses=statuses)
        d.message = truncate_event(d.full_message)
        return d

    def _fail(
        self,
        state: CycleState,
        pod: Pod,
        d: Diagnosis,
        *,
        prefilter_msg: str = "",
        statuses: dict[str, Status] | None = None,
    ) -> str:
        absent = d.absent if self.dialect.absent_nodes_counted else None
        self._post_filter(state, pod, d)
        # A successful PostFilter has no message before v1.37; from v1.37 preemption's success has one.
        post_msg = d.postfilter.message if d.postfilter is not None else ""
        return fit_error_message(
            d.num_all_nodes,
            statuses or {},
            prefilter_msg=prefilter_msg,
            absent=absent,
            postfilter_msg=post_msg,
        )

    def _post_filter(self, state: CycleState, pod: Pod, d: Diagnosis) -> None:
        self._run_post_filter(state, pod, d)
        for note in postfilter_notes(d):  # the words live with the report's (describe.py)
            add_note(state, note)

    def _run_post_filter(self, state: CycleState, pod: Pod, d: Diagnosis) -> None:
        """RunPostFilterPlugins: Success or UU returns at once, Error returns at once, else reasons accumulate."""
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter_plugins:
            post = getattr(pl, "post_filter", None)
            if post is None:
                continue
            s: Status = post(state, pod, d, self)
            if s.ok:
                d.postfilter = s.with_plugin("") if not s.plugin else s
                return
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                d.postfilter = s.with_plugin(pl.name)
                return
            if s.code not in (Code.UNSCHEDULABLE,):
                d.postfilter = Status(Code.ERROR, s.reasons, pl.name)
                return
            reasons.extend(s.reasons)
            rejector = rejector or pl.name
        d.postfilter = Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)

    def _score(self, state: CycleState, pod: Pod, d: Diagnosis, feasible: list[NodeInfo]) -> None:
        """PreScore, Score, NormalizeScore and weights; computed even for one node (reported as unscored)."""
        skipped: set[str] = set()
        for pl in self.pre_score_plugins:
            if pl.name not in dict(self.profile.score):
                continue
            s = pl.pre_score(state, pod, feasible)
            if s.code == Code.SKIP:
                skipped.add(pl.name)
        feasible_names = [ni.name for ni in feasible]
        table = ScoreTable(feasible_names)
        for pl, weight in self.score_plugins:
            if pl.name in skipped:
                table.skipped.append(pl.name)
                continue
            values, st = pl.score_many(state, pod, feasible)
            if st is not None and len(feasible) > 1:
                # framework.go RunScorePlugins: a Score error (e.g. its PreScore disabled in the profile)
                # fails the cycle; with one feasible node schedulePod never scores.
                d.full_message = d.message = (
                    f'running Score plugins: plugin "{pl.name}" failed with: {st.message}'
                )
                return
            raw = dict(zip(feasible_names, values, strict=True))
            normalized = dict(raw)
            pl.normalize_score(state, pod, normalized)
            table.add(pl.name, weight, raw, normalized)
        d.scores = table
        d.scored_by_scheduler = len(feasible) > 1
        d.feasible_to_find = num_feasible_nodes_to_find(
            self.profile.percentage_of_nodes_to_score, self.snapshot.num_nodes, bool(self.score_plugins)
        )
        totals = table.totals
        best = max(totals.values())
        d.top_nodes = sorted(name for name, t in totals.items() if t == best)
        if len(feasible) == 1:
            d.top_nodes = [feasible[0].name]
        d.chosen = d.top_nodes[0]
