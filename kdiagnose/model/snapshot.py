"""Snapshot and NodeInfo: the scheduler cache's view of the cluster (pkg/scheduler/framework/types.go)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from kdiagnose.model.objects import Node, Pod
from kdiagnose.versions import Dialect

__all__ = ["POD_BOUND_UPDATERS", "NodeInfo", "Snapshot", "has_pod_affinity", "has_required_anti_affinity"]

Obj = dict[str, Any]

# cache key -> how to update that cached index in place when bind() adds a pod to a node; bind() keeps
# these entries (updated) and drops the rest. Registered by the module that owns the key.
POD_BOUND_UPDATERS: dict[str, Callable[[Any, Pod, NodeInfo], None]] = {}


def has_pod_affinity(pod: Pod) -> bool:
    a = pod.affinity
    return bool(a.get("podAffinity") or a.get("podAntiAffinity"))


def has_required_anti_affinity(pod: Pod) -> bool:
    anti = pod.affinity.get("podAntiAffinity")
    return isinstance(anti, dict) and bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))


def _pvc_keys(pod: Pod) -> list[str]:
    """updatePVCRefCounts (framework/types.go): persistentVolumeClaim volumes only, not ephemeral ones."""
    keys = []
    for v in pod.volumes:
        claim = v.get("persistentVolumeClaim")
        if isinstance(claim, dict):
            keys.append(f"{pod.namespace}/{claim.get('claimName') or ''}")
    return keys


class NodeInfo:
    """A node plus the aggregate of the pods bound to it; mutable only through add_pod/remove_pod on clones."""

    __slots__ = (
        "allocatable",
        "cpu_memory",
        "free",
        "lowest_priority",
        "name",
        "node",
        "non_zero_cpu",
        "non_zero_mem",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node) -> None:
        self.node = node
        # Plain attributes, not properties: read millions of times per replay at 5,000 nodes.
        self.name: str = node.name
        self.allocatable: dict[str, int] = node.allocatable
        self.pods: list[Pod] = []
        self.requested: dict[str, int] = {}
        self.non_zero_cpu = 0
        self.non_zero_mem = 0
        self.used_ports: list[tuple[str, str, int]] = []
        self.pods_with_affinity: list[Pod] = []
        self.pods_with_required_anti_affinity: list[Pod] = []
        self.pvc_ref_counts: dict[str, int] = {}
        # NodeResourcesFit's free room (pods, cpu, memory, ephemeral-storage), computed on its first read
        # (noderesources/fit.py free_room) and dropped by add_pod/remove_pod, the only writers of the
        # aggregates: nodes shared by what-if copies keep it.
        self.free: tuple[int, int, int, int] | None = None
        # The lowest priority of its pods (DefaultPreemption: no pod below the preemptor's means no victim
        # here), computed on first read like `free` and dropped with it.
        self.lowest_priority: int | None = None
        # The cpu and memory columns the default scorers read (allocatable, requested, non-zero requested:
        # noderesources/fit.py cpu_memory), kept like `free` and dropped with it.
        self.cpu_memory: tuple[int, int, int, int, int, int] | None = None

    def add_pod(self, pod: Pod, ports: list[tuple[str, str, int]] | None = None) -> None:
        """`ports`: pod.host_ports() when the caller has it (Snapshot() computes it once per spec)."""
        self.free = self.lowest_priority = self.cpu_memory = None
        self.pods.append(pod)
        req = self.requested
        for k, v in pod.requests.items():
            req[k] = req.get(k, 0) + v
        self.non_zero_cpu += pod.non_zero_cpu
        self.non_zero_mem += pod.non_zero_mem
        if ports is None:
            ports = pod.host_ports()
        if ports:
            self.used_ports.extend(ports)
        if pod.affinity and has_pod_affinity(pod):
            self.pods_with_affinity.append(pod)
            if has_required_anti_affinity(pod):
                self.pods_with_required_anti_affinity.append(pod)
        if pod.volumes:
            for key in _pvc_keys(pod):
                self.pvc_ref_counts[key] = self.pvc_ref_counts.get(key, 0) + 1

    def remove_pod(self, pod: Pod) -> None:
        i = next((j for j, p in enumerate(self.pods) if p is pod), -1)
        if i < 0 and pod.uid:
            # RemovePod finds the pod by UID (GetPodKey); a copy of a bound pod removes the original.
            i = next((j for j, p in enumerate(self.pods) if p.uid == pod.uid), -1)
        if i < 0:
            return
        pod = self.pods.pop(i)
        self.free = self.lowest_priority = self.cpu_memory = None
        req = self.requested
        for k, v in pod.requests.items():
            req[k] = req.get(k, 0) - v
        self.non_zero_cpu -= pod.non_zero_cpu
        self.non_zero_mem -= pod.non_zero_mem
        gone = pod.host_ports()
        if gone:
            # HostPortInfo is a set: removing a port frees it even if another pod also declared it.
            self.used_ports = [u for u in self.used_ports if u not in gone]
        self.pods_with_affinity = [p for p in self.pods_with_affinity if p is not pod]
        self.pods_with_required_anti_affinity = [
            p for p in self.pods_with_required_anti_affinity if p is not pod
        ]
        for key in _pvc_keys(pod):
            n = self.pvc_ref_counts.get(key, 0) - 1
            if n > 0:
                self.pvc_ref_counts[key] = n
            else:
                self.pvc_ref_counts.pop(key, None)

    def clone(self) -> NodeInfo:
        c = NodeInfo(self.node)
        c.pods = list(self.pods)
        c.requested = dict(self.requested)
        c.non_zero_cpu = self.non_zero_cpu
        c.non_zero_mem = self.non_zero_mem
        c.used_ports = list(self.used_ports)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


# remove_pods: up to this many pods are searched for one by one.
_FEW = 8
_POSITIONS_KEY = "snapshot:node-positions"


def _position(pods: list[Pod], pod: Pod) -> int:
    """Where `pod` (this object: Pod compares by identity) is in `pods`, or -1."""
    try:
        return pods.index(pod)
    except ValueError:
        return -1


def _without(pods: list[Pod], old: Pod) -> list[Pod]:
    """A copy of `pods` without `old` (every occurrence), as `[p for p in pods if p is not old]`."""
    out = list(pods)
    i = 0
    while True:
        try:
            i = out.index(old, i)
        except ValueError:
            return out
        del out[i]


class Snapshot:
    """One immutable view of the cluster for a replay; plugins read it, never write it.

    `objects` holds the raw API objects of every other kind by kind name; `present` records which kinds the
    input contained at all (an empty list counts), so a plugin can say "not checked: missing X".
    `unreadable` names what a live read could not read and why ({"NodePool": "forbidden", ...}): set where
    the reader builds the snapshot, read by the autoscaler view's "not checked" notes.
    `cache` is for per-snapshot derived data plugins share across pods (indexes); it never changes a verdict.
    """

    def __init__(
        self,
        dialect: Dialect,
        nodes: Iterable[Node],
        pods: Iterable[Pod],
        objects: dict[str, list[Obj]] | None = None,
        present: Iterable[str] = (),
        skipped: Counter[str] | None = None,
        warnings: Iterable[str] = (),
        unreadable: dict[str, str] | None = None,
    ) -> None:
        self.dialect = dialect
        self.node_infos: list[NodeInfo] = [NodeInfo(n) for n in nodes]
        self.node_info_by_name: dict[str, NodeInfo] = {ni.name: ni for ni in self.node_infos}
        # Every pod the scheduler's informer keeps (not Succeeded/Failed); see the `pods` property.
        self._pods: list[Pod] | None = []
        self._make_pods: Callable[[], list[Pod]] | None = None
        self.pending: list[Pod] = []
        # host_ports() reads the containers and hostNetwork only: the replicas of a spec share those lists
        # (load/snapshot.py), so it is computed once per spec. The lists live as long as the pods, so
        # their ids are not reused while this loop runs.
        ports_of: dict[tuple[int, int, bool], list[tuple[str, str, int]]] = {}
        kept = self._pods
        for pod in pods:
            if pod.phase in ("Succeeded", "Failed"):
                continue
            kept.append(pod)
            if not pod.node_name:
                self.pending.append(pod)
                continue
            ni = self.node_info_by_name.get(pod.node_name)
            if ni is not None:
                key = (id(pod.containers), id(pod.init_containers), pod.host_network)
                ports = ports_of.get(key)
                if ports is None:
                    ports = ports_of[key] = pod.host_ports()
                ni.add_pod(pod, ports)
        self.objects: dict[str, list[Obj]] = objects or {}
        self.present: set[str] = set(present) | {"Node", "Pod"}
        self.skipped: Counter[str] = skipped or Counter()
        self.warnings: list[str] = list(warnings)
        self.unreadable: dict[str, str] = dict(unreadable or {})
        self.cache: dict[str, Any] = {}
        # Indexes derived from the nodes alone (e.g. ImageLocality's image spread): they survive bind and
        # remove_pods, which clear `cache`, so sequential placement does not rebuild them per replica.
        self.node_cache: dict[str, Any] = {}
        # derive() with nodes added and none replaced: the parent's node_cache and its node count (the
        # first nodes here are the parent's, in its order), so node-only indexes can be extended from the
        # parent's instead of built again over every node (a scale-up what-if's simulated node).
        self.node_base: tuple[dict[str, Any], int] | None = None
        # Bumped by every mutation, so results memoized against this snapshot know they are stale.
        self.generation = 0
        # derive(): the snapshot this one was derived from and its generation then, so per-snapshot pod
        # indexes can be adjusted from the parent's (only the changed nodes) instead of rebuilt.
        self.parent: Snapshot | None = None
        self.parent_generation = 0
        # Copy-on-write (derive()): the nodes whose NodeInfo is this snapshot's own (None: every node's),
        # the others' are the parent's objects; the kinds whose object list is still the parent's.
        # bind/remove_pods/add_object copy them before the first change, so a what-if never changes the
        # snapshot it came from.
        self._own_nodes: set[str] | None = None
        self._shared_kinds: set[str] = set()
        # derive(replace_pod=...): the position of each pod in `pods` (see _pods_without), built at the
        # second swap on this snapshot; None until then (or when the list holds a pod twice).
        self._pod_pos: tuple[list[Pod], int, dict[int, int] | None] | None = None
        self._swaps = 0

    @property
    def pods(self) -> list[Pod]:
        """Every pod the scheduler's informer keeps. A what-if copy that only swaps the pending pod
        (derive(replace_pod=...)) makes its list on first read: most copies are never asked for it, and
        the copy is 150,000 pods long on c5k, once per what-if."""
        pods = self._pods
        if pods is None:
            assert self._make_pods is not None
            pods = self._pods = self._make_pods()
            self._make_pods = None
        return pods

    @pods.setter
    def pods(self, pods: list[Pod]) -> None:
        self._pods = pods
        self._make_pods = None

    # ------------------------------------------------------------ what-if copies (remedies, CI gate)

    def bind(self, pod: Pod, node_name: str, *, new: bool = False) -> Pod:
        """Place a pod on a node in THIS snapshot (the CI gate's sequential replicas) and return it. Clears
        derived caches; callers rebuild their Scheduler frameworks (Scheduler.invalidate). A derived
        snapshot binds a copy of a pod that is its parent's object (the parent's stays pending) on its own
        copy of the node's NodeInfo. `new`: the caller made `pod` just now (a copy of a pending pod it
        removed), so it is in none of the lists: not searched for among 150,000 pods."""
        self.generation += 1
        parent = self.parent
        if not new and parent is not None and any(p is pod for p in parent.pods):
            mine = pod
            pod = copy.copy(mine)
            self.pods = [p for p in self.pods if p is not mine]
            self.pending = [p for p in self.pending if p is not mine]
        pod.node_name = node_name
        if not new and pod in self.pending:
            self.pending.remove(pod)
        if new or pod not in self.pods:
            self.pods.append(pod)
        own = self._own_nodes
        copied = own is not None and node_name not in own
        ni = self.own_node_info(node_name)
        # A node copied here leaves the kept indexes naming the parent's NodeInfo: rebuild them instead.
        kept = (
            {k: v for k, v in self.cache.items() if k in POD_BOUND_UPDATERS}
            if ni is not None and not copied
            else {}
        )
        self.cache.clear()
        if ni is not None:
            ni.add_pod(pod)
            for key, value in kept.items():
                POD_BOUND_UPDATERS[key](value, pod, ni)
                self.cache[key] = value
        return pod

    def own_node_info(self, name: str) -> NodeInfo | None:
        """This snapshot's NodeInfo of `name`, ready to change: a NodeInfo still shared with the parent
        (derive()) is replaced by a clone first (copy-on-write). None for an unknown node."""
        ni = self.node_info_by_name.get(name)
        own = self._own_nodes
        if ni is None or own is None or name in own:
            return ni
        c = ni.clone()
        own.add(name)
        self.node_infos[next(i for i, x in enumerate(self.node_infos) if x is ni)] = c
        self.node_info_by_name[name] = c
        return c

    def _own_kind(self, kind: str) -> list[Obj]:
        """This snapshot's list of `kind`, ready to change (copied first while it is the parent's)."""
        if kind in self._shared_kinds:
            self._shared_kinds.discard(kind)
            self.objects[kind] = list(self.objects[kind])
        return self.objects.setdefault(kind, [])

    def add_pending(self, pod: Pod) -> None:
        self.generation += 1
        self.pods.append(pod)
        self.pending.append(pod)
        self.cache.clear()

    def add_object(self, kind: str, obj: Obj) -> None:
        """Add a raw object of another kind (the CI gate's StatefulSet claims, synthetic ReplicaSets).
        Marks the kind present and clears derived caches (indexes are rebuilt on the next read)."""
        self.generation += 1
        self._own_kind(kind).append(obj)
        self.present.add(kind)
        self.cache.clear()

    def replace_object(self, kind: str, old: Obj, new: Obj) -> None:
        """Swap one raw object (found by identity) for an updated copy, e.g. a claim the gate bound."""
        self.generation += 1
        items = self._own_kind(kind)
        for i, o in enumerate(items):
            if o is old:
                items[i] = new
                break
        else:
            items.append(new)
        self.present.add(kind)
        self.cache.clear()

    def fork(self) -> Snapshot:
        """An independent copy with no parent (its indexes are built, not adjusted): every NodeInfo cloned
        at once, so bind() keeps extending its indexes in place (sequential placement). Pods and nodes are
        shared, not copied: bind() sets the node name on the pod it is given."""
        new = self.derive()
        new.parent = None
        new.node_infos = [ni.clone() for ni in new.node_infos]
        new.node_info_by_name = {ni.name: ni for ni in new.node_infos}
        new._own_nodes = None
        new.objects = {k: list(v) for k, v in self.objects.items()}
        new._shared_kinds = set()
        new.skipped = Counter(self.skipped)
        return new

    def remove_pods(self, pods: Iterable[Pod]) -> None:
        self.generation += 1
        removing = list(pods)
        gone = {id(p) for p in removing}
        if len(gone) <= _FEW:
            # A few pods (sequential placement removes one per placement): found by identity at C speed
            # (list.index; Pod compares by identity), not by a Python test per pod of 150,000.
            # A pod is in each list once (build_snapshot makes one object per pod, bind adds one only if it
            # is not there): one scan finds it, removed from a copy of the list (never changed in place:
            # a derived snapshot's lists may be its parent's; bind appends to the copy).
            unique = list({id(p): p for p in removing}.values())
            pos = {id(p): i for p in unique if (i := _position(self.pods, p)) >= 0}
            here = sorted((p for p in unique if id(p) in pos), key=lambda p: pos[id(p)])  # list order
            pods, pending = list(self.pods), list(self.pending)  # this snapshot's own, as below
            for p in reversed(here):
                del pods[pos[id(p)]]
            for p in unique:
                if (i := _position(pending, p)) >= 0:
                    del pending[i]
            self.pods, self.pending = pods, pending
        else:
            here = [p for p in self.pods if id(p) in gone]
            self.pods = [p for p in self.pods if id(p) not in gone]
            self.pending = [p for p in self.pending if id(p) not in gone]
        for p in here:
            ni = self.own_node_info(p.node_name) if p.node_name else None
            if ni is not None:
                ni.remove_pod(p)
        # Removing pending pods leaves every NodeInfo as it was: the indexes of the bound pods stand (the
        # pod placed next in sequential placement is removed as pending, then bound: without this, both
        # indexes were rebuilt over every bound pod per placement, ~0.2 s each at 150,000 pods).
        kept = (
            {k: v for k, v in self.cache.items() if k in POD_BOUND_UPDATERS}
            if not any(p.node_name for p in removing)
            else {}
        )
        self.cache.clear()
        self.cache.update(kept)

    def derive(
        self,
        *,
        extra_nodes: Iterable[tuple[Node, list[Pod]]] = (),
        replace_pod: tuple[Pod, Pod] | None = None,
        remove_pods: Iterable[Pod] = (),
        node_changes: dict[str, Node] | None = None,
        extra_objects: dict[str, list[Obj]] | None = None,
    ) -> Snapshot:
        """A copy for a what-if replay: extra nodes (with their bound pods, e.g. DaemonSets on a simulated
        pool node), one pod swapped for a modified copy, pods removed, nodes replaced, raw objects added
        (a simulated node's ResourceSlices). The original is untouched, also by later bind/remove_pods/
        add_object calls on the copy: it shares the unchanged NodeInfos and object lists copy-on-write."""
        new = Snapshot.__new__(Snapshot)
        new.dialect = self.dialect
        new.objects = dict(self.objects)
        for kind, objs in (extra_objects or {}).items():
            new.objects[kind] = [*self.objects.get(kind, []), *objs]
        new._shared_kinds = set(self.objects) - set(extra_objects or {})
        new.present = set(self.present)
        new.skipped = self.skipped
        new.warnings = list(self.warnings)
        new.unreadable = self.unreadable
        new.cache = {}
        new.generation = 0
        new.parent = self
        new.parent_generation = self.generation
        new.node_cache = {} if (extra_nodes or node_changes) else self.node_cache
        new.node_base = (self.node_cache, len(self.node_infos)) if extra_nodes and not node_changes else None
        gone = list(remove_pods)
        removed = {id(p) for p in gone}
        old, repl = replace_pod if replace_pod else (None, None)
        changes = node_changes or {}
        touched = {p.node_name for p in gone if p.node_name}
        new._own_nodes = own = set(changes) | touched  # the rest stay the parent's NodeInfos
        if not own:
            # Every NodeInfo the parent's (a pending pod swapped, nodes added): C-level copies of the list
            # and of the name index below, not a Python pass over 5,000 nodes per what-if.
            new.node_infos = list(self.node_infos)
        else:
            new.node_infos = []
            for ni in self.node_infos:
                if ni.name in changes:
                    c = NodeInfo(changes[ni.name])
                    for p in ni.pods:
                        if id(p) not in removed:
                            c.add_pod(p)
                    new.node_infos.append(c)
                elif ni.name in touched:
                    c = ni.clone()
                    for p in list(c.pods):
                        if id(p) in removed:
                            c.remove_pod(p)
                    new.node_infos.append(c)
                else:
                    new.node_infos.append(ni)
        if removed:
            new.pods = [p for p in self.pods if id(p) not in removed and p is not old]
            new.pending = [p for p in self.pending if id(p) not in removed and p is not old]
        elif old is not None:
            # Only a pod swapped (a remedy's modified pod): the list is made when first read (`pods`), from
            # the parent's as it is now, by a C-level copy and index (Pod has no __eq__, so list.index
            # compares identity), not a Python-level test per pod (150,000 on c5k, per what-if).
            new.pending = _without(self.pending, old)
        else:
            new.pods = list(self.pods)
            new.pending = list(self.pending)
        added: list[Pod] = []  # appended to the list after the parent's (made now or on first read)
        if repl is not None:
            added.append(repl)
            if not repl.node_name:
                new.pending.append(repl)
        # The name index as the parent's: one C-level copy when no NodeInfo of it was replaced (names are
        # unique in a snapshot: a later entry of the same name would win in the comprehension either way).
        by_name_as_parent = not own and len(self.node_info_by_name) == len(self.node_infos)
        for node, pods in extra_nodes:
            ni = NodeInfo(node)
            for p in pods:
                ni.add_pod(p)
                added.append(p)
            new.node_infos.append(ni)
            own.add(ni.name)
        if by_name_as_parent:
            new.node_info_by_name = dict(self.node_info_by_name)
            new.node_info_by_name.update((ni.name, ni) for ni in new.node_infos[len(self.node_infos) :])
        else:
            new.node_info_by_name = {ni.name: ni for ni in new.node_infos}
        if old is not None and not removed:
            mine = self.pods
            new._pods, new._make_pods = None, partial(self._swapped, mine, len(mine), old, added)
        else:
            new.pods.extend(added)
        new._pod_pos = None
        new._swaps = 0
        return new

    def _swapped(self, mine: list[Pod], length: int, old: Pod, added: list[Pod]) -> list[Pod]:
        """A derived copy's pod list: this snapshot's list as it was when the copy was made (`mine`, its
        first `length` pods: bind appends to it in place, other changes replace it) without `old`, then
        `added`."""
        if mine is self._pods and len(mine) == length:
            pods = self._pods_without(old)
        else:
            pods = _without(mine[:length], old)
        pods.extend(added)
        return pods

    def _pods_without(self, old: Pod) -> list[Pod]:
        """`_without(self.pods, old)`: a remedy derives a copy per what-if from the same snapshot, each time
        without one pending pod; from the second time on, the pod's position comes from an index of the
        list built once (150,000 identity tests per what-if on c5k otherwise). The index is of this list
        object at this length; a list changed since (bind, remove_pods replace or append to it) or a pod in
        it twice takes the scan."""
        pods = self.pods
        self._swaps += 1
        pos = self._pod_pos
        if pos is None or pos[0] is not pods or pos[1] != len(pods):
            if self._swaps < 2:
                return _without(pods, old)
            fresh = {id(p): i for i, p in enumerate(pods)}
            pos = self._pod_pos = (pods, len(pods), fresh if len(fresh) == len(pods) else None)
        index = pos[2]
        i = index.get(id(old)) if index is not None else None
        if i is None or pods[i] is not old:
            return _without(pods, old)
        out = list(pods)
        del out[i]  # the only occurrence: every pod in the list has its own position
        return out

    @property
    def num_nodes(self) -> int:
        return len(self.node_infos)

    def bound_pods(self) -> Iterable[Pod]:
        for ni in self.node_infos:
            yield from ni.pods

    def kind(self, kind: str) -> list[Obj]:
        return self.objects.get(kind, [])

    def has(self, kind: str) -> bool:
        return kind in self.present

    def node_positions(self) -> dict[str, int]:
        """Each node's position in node_infos, by name: made once per node list (kept in node_cache, which
        the copies that keep the list share)."""
        pos: dict[str, int] | None = self.node_cache.get(_POSITIONS_KEY)
        if pos is None:
            pos = self.node_cache[_POSITIONS_KEY] = {ni.name: i for i, ni in enumerate(self.node_infos)}
        return pos

    def index(self, kind: str) -> dict[str, Obj]:
        """Objects of a kind by `namespace/name` (or `name` for cluster-scoped kinds), built once."""
        key = f"index:{kind}"
        idx: dict[str, Obj] | None = self.cache.get(key)
        if idx is None:
            idx = {}
            for o in self.kind(kind):
                meta = o.get("metadata") or {}
                ns = meta.get("namespace")
                idx[f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))] = o
            self.cache[key] = idx
        return idx

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.index(kind).get(f"{namespace}/{name}" if namespace else name)

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        ns = self.get("Namespace", namespace)
        if ns is None:
            # The API server sets this label on every namespace; a dump without Namespaces still has it.
            return {"kubernetes.io/metadata.name": namespace}
        labels = dict((ns.get("metadata") or {}).get("labels") or {})
        labels.setdefault("kubernetes.io/metadata.name", namespace)
        return labels
