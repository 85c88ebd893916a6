"""Structured-parameters device allocator (k8s.io/dynamic-resource-allocation/structured/internal/incubating).

Every supported release's default feature set selects upstream's "incubating" allocator: an exhaustive
backtracking search that takes the first full solution. This module mirrors allocator_incubating.go,
pools_incubating.go, constraint.go and consumable_capacity.go (capacity.py) of each release:

- v1.34 (release-4.21): a pool is incomplete when the slices for the node do not add up to
  resourceSliceCount; incomplete pools are still allocated from; an invalid pool (duplicate device names)
  met during the search aborts with an error.
- v1.35 (master): incompleteness looks at the pool's slices cluster-wide, obsolete pools are dropped,
  incomplete and invalid pools are skipped, and a failed search with an invalid pool reports
  `invalid resource pools were encountered` for that node only.
- v1.36 (v0.36.5; DRAPartitionableDevices, DRAConsumableCapacity, DRADeviceBindingConditions and
  DRADeviceTaints on): pools sorted by (driver, pool) with binding-condition pools last, slices by name;
  sharedCounters slices and counter-consuming devices (checkAvailableCounters: what allocated devices of the
  pool, on any node, consume is taken first); per-device node selection; shareable devices
  (allowMultipleAllocations) consumed per capacity, distinctAttribute constraints; the next device of a
  request is searched after the previous one (combinations, deviceLocation).
- v1.37 (v0.37.2): counter-set slices follow their node selection, capacity ranges round in milli-units
  (DRAFractionalCapacityRange), and capacity errors abort (Dialect properties name each difference).

Per-snapshot data (slices by node, pools per node, devices already allocated or shared, CEL results per
device) lives in one `DraIndex` in snapshot.cache, shared by every pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from kdiagnose.model.quantity import QuantityError, parse_quantity
from kdiagnose.scheduler.plugins.dynamicresources.capacity import (
    CapacityError,
    consumed_capacity,
    request_fits_capacity,
)
from kdiagnose.scheduler.plugins.dynamicresources.cel import (
    DEVICE_FIELDS_V131,
    DEVICE_FIELDS_V134,
    CelCompileError,
    CelOverBudget,
    CelRuntimeError,
    CelUnsupported,
    Quantity,
    compile_expression,
    device_env,
    parse_semver,
)
from kdiagnose.scheduler.plugins.helper.node_selector import NodeSelectorTerm, parse_node_selector_terms

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node
    from kdiagnose.model.snapshot import Snapshot

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "DEVICE_CLASS_PREFIX",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "ClaimRequests",
    "DraIndex",
    "FailedOnNode",
    "Request",
    "dra_index",
    "extended_resource_classes",
    "parse_claim_requests",
]

Obj = dict[str, Any]
DeviceID = tuple[str, str, str]  # driver, pool, device

# resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32


class AllocationError(Exception):
    """A fatal allocation error (bad claim/class, CEL runtime error): Filter returns Error, as upstream."""


class AllocationTimeout(Exception):
    """The Filter's context expired (DynamicResourcesArgs.filterTimeout): allocateOne checks it first."""


class FailedOnNode(Exception):  # mirrors structured.ErrFailedAllocationOnNode
    """v1.35: allocation failed on this node only; the message becomes an UnschedulableAndUnresolvable reason."""


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _device_id_str(d: DeviceID) -> str:
    return "/".join(d)


# ---------------------------------------------------------------- slices and pools


def _node_matches(
    node: Node, node_name: str, all_nodes: bool, node_selector: list[NodeSelectorTerm] | None
) -> bool:
    """nodeMatches (dynamic-resource-allocation/structured/internal/*/pools_*.go), shared by a slice's and,
    with perDeviceNodeSelection, a device's nodeName, allNodes and nodeSelector (one of them is set)."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return any(t.match(node) for t in node_selector)
    return False


@dataclass(slots=True)
class Device:
    name: str
    raw: Obj
    binding_conditions: bool
    consumes_counters: bool
    # DRAConsumableCapacity: shareable by several claims (each consuming part of its capacity).
    allow_multiple: bool = False
    # DRAPartitionableDevices: (counter set, counter -> amount) this device takes from its pool.
    consumes: list[tuple[str, dict[str, Fraction]]] = field(default_factory=list)
    # perDeviceNodeSelection: the device's own node selection.
    node_name: str = ""
    all_nodes: bool = False
    node_selector: list[NodeSelectorTerm] | None = None
    _env: Any = None

    def matches_node(self, node: Node) -> bool:
        """NodeMatches with the device's own fields (perDeviceNodeSelection slices)."""
        return _node_matches(node, self.node_name, self.all_nodes, self.node_selector)

    @property
    def capacity(self) -> Obj:
        return _d(self.raw.get("capacity"))

    def env(self, driver: str) -> Obj:
        """The CEL `device` variable; a bad version attribute is a runtime error, as in compile.go."""
        if self._env is None:
            try:
                attrs: Obj = {}
                for name, a in _d(self.raw.get("attributes")).items():
                    a = _d(a)
                    if "int" in a:
                        attrs[name] = int(a["int"])
                    elif "bool" in a:
                        attrs[name] = bool(a["bool"])
                    elif "string" in a:
                        attrs[name] = str(a["string"])
                    elif "version" in a:
                        try:
                            attrs[name] = parse_semver(str(a["version"]))
                        except CelRuntimeError as e:
                            raise CelRuntimeError(f"attribute {name}: parse semantic version: {e}") from None
                    else:
                        raise CelRuntimeError(f"attribute {name}: unsupported attribute value")
                caps: Obj = {}
                for name, c in _d(self.raw.get("capacity")).items():
                    try:
                        caps[name] = Quantity(parse_quantity(_d(c).get("value", "0")))
                    except QuantityError as e:
                        raise CelRuntimeError(f"capacity {name}: {e}") from None
                self._env = device_env(driver, attrs, caps, self.allow_multiple)
            except CelRuntimeError as e:
                self._env = e
        if isinstance(self._env, CelRuntimeError):
            raise self._env
        env: Obj = self._env
        return env

    def attribute(self, qualified: str, driver: str) -> Obj | None:
        """lookupAttribute: the fully-qualified name, or the bare id when the domain is the driver."""
        attrs = _d(self.raw.get("attributes"))
        if qualified in attrs:
            return _d(attrs[qualified])
        domain, sep, ident = qualified.partition("/")
        if not sep or domain != driver:
            return None
        return _d(attrs[ident]) if ident in attrs else None


@dataclass(slots=True)
class Slice:
    index: int
    name: str
    driver: str
    pool: str
    generation: int
    count: int
    node_name: str
    all_nodes: bool
    node_selector: list[NodeSelectorTerm] | None
    per_device: bool | None
    shared_counters: bool
    devices: list[Device]
    # sharedCounters: (counter set name, counter -> amount), in the slice's order.
    counter_sets: list[tuple[str, dict[str, Fraction]]] = field(default_factory=list)

    def matches_node(self, node: Node) -> bool:
        """NodeMatches with the slice's fields."""
        return _node_matches(node, self.node_name, self.all_nodes, self.node_selector)


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    slices: list[Slice]
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    # DRAPartitionableDevices (v1.36+): the pool's slices that do not target the node (their allocated
    # devices still consume the pool's counters) and its counter sets.
    not_targeting: list[Slice] = field(default_factory=list)
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _amount(raw: Any) -> Fraction:
    """A counter's or capacity's quantity (validated on load; anything else counts as 0)."""
    try:
        return parse_quantity(raw)
    except QuantityError:
        return Fraction(0)


def _counters(raw: Any) -> dict[str, Fraction]:
    return {str(k): _amount(_d(v).get("value", "0")) for k, v in _d(raw).items()}


def _parse_slice(i: int, obj: Obj) -> Slice:
    spec = _d(obj.get("spec"))
    pool = _d(spec.get("pool"))
    ns = spec.get("nodeSelector")
    devices = []
    for d in map(_d, _l(spec.get("devices"))):
        dns = d.get("nodeSelector")
        devices.append(
            Device(
                name=str(d.get("name") or ""),
                raw=d,
                binding_conditions=bool(d.get("bindingConditions")),
                consumes_counters=bool(d.get("consumesCounters")),
                allow_multiple=d.get("allowMultipleAllocations") is True,
                consumes=[
                    (str(c.get("counterSet") or ""), _counters(c.get("counters")))
                    for c in map(_d, _l(d.get("consumesCounters")))
                ],
                node_name=str(d.get("nodeName") or ""),
                all_nodes=d.get("allNodes") is True,
                node_selector=parse_node_selector_terms(_d(dns).get("nodeSelectorTerms"))
                if isinstance(dns, dict)
                else None,
            )
        )
    per_device = spec.get("perDeviceNodeSelection")
    return Slice(
        index=i,
        name=str(_d(obj.get("metadata")).get("name") or ""),
        driver=str(spec.get("driver") or ""),
        pool=str(pool.get("name") or ""),
        generation=int(pool.get("generation") or 0),
        count=int(pool.get("resourceSliceCount") or 0),
        node_name=str(spec.get("nodeName") or ""),
        all_nodes=bool(spec.get("allNodes")),
        node_selector=parse_node_selector_terms(_d(ns).get("nodeSelectorTerms"))
        if isinstance(ns, dict)
        else None,
        per_device=bool(per_device) if per_device is not None else None,
        shared_counters=bool(spec.get("sharedCounters")),
        devices=devices,
        counter_sets=[
            (str(c.get("name") or ""), _counters(c.get("counters")))
            for c in map(_d, _l(spec.get("sharedCounters")))
        ],
    )


DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix


def extended_resource_classes(classes: dict[str, Obj]) -> dict[str, str]:
    """extendedresourcecache.ExtendedResourceCache: extended resource name -> DeviceClass name. Each class
    maps `deviceclass.resource.kubernetes.io/<name>`, and spec.extendedResourceName when set; when several
    classes set the same name the newest (creationTimestamp) wins, then the lowest name."""
    out: dict[str, str] = {DEVICE_CLASS_PREFIX + name: name for name in classes}
    best: dict[str, tuple[str, str]] = {}
    for name, c in classes.items():
        ext = _d(c.get("spec")).get("extendedResourceName")
        if not isinstance(ext, str) or not ext:
            continue
        created = str(_d(c.get("metadata")).get("creationTimestamp") or "")
        cur = best.get(ext)
        # RFC 3339 UTC timestamps of one cluster compare as strings.
        if cur is None or created > cur[0] or (created == cur[0] and name < cur[1]):
            best[ext] = (created, name)
    for ext, (_, name) in best.items():
        out[ext] = name
    return out


class DraIndex:
    """Everything about DRA objects that does not depend on the pod; one per snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.dialect = snapshot.dialect
        self.cel_fields = (
            DEVICE_FIELDS_V134 if self.dialect.dra_cel_allow_multiple_allocations else DEVICE_FIELDS_V131
        )
        self.classes: dict[str, Obj] = {}
        for c in snapshot.kind("DeviceClass"):
            self.classes[str(_d(c.get("metadata")).get("name") or "")] = c
        self.extended = extended_resource_classes(self.classes) if self.dialect.dra_extended_resources else {}
        self.slices = [_parse_slice(i, s) for i, s in enumerate(snapshot.kind("ResourceSlice"))]
        # DeviceTaintRules (v1.37, DRADeviceTaintRules GA): (driver, pool, device) selector, None = any, and
        # the taint the ResourceSlice tracker appends to every matching device (tracker.go applyPatches).
        self.taint_rules: list[tuple[str | None, str | None, str | None, Obj]] = []
        if self.dialect.dra_device_taint_rules:
            for rule in snapshot.kind("DeviceTaintRule"):
                spec = _d(rule.get("spec"))
                sel = spec.get("deviceSelector")
                if not isinstance(sel, dict):
                    continue  # no selector matches no devices
                opt = [None if sel.get(k) is None else str(sel.get(k)) for k in ("driver", "pool", "device")]
                self.taint_rules.append((opt[0], opt[1], opt[2], _d(spec.get("taint"))))
        self._by_node: dict[str, list[Slice]] = {}
        self._other: list[Slice] = []
        # NewAllocator: slicesOnNode by spec.nodeName, the rest shared; v1.36 also counts a slice with
        # sharedCounters as shared whatever its node.
        counters_shared = (
            self.dialect.dra_partitionable_devices and not self.dialect.dra_counter_slices_follow_node
        )
        for s in self.slices:
            if s.node_name and not (counters_shared and s.shared_counters):
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._other.append(s)
        # ListAllAllocatedDevices / GatherAllocatedState (dra_manager.go, allocateddevices.go
        # foreachAllocatedDevice): every allocated result except admin-access ones; with
        # DRAConsumableCapacity (v1.36+) a result with a shareID is a share (its consumedCapacity summed per
        # device), not an exclusive allocation.
        consumable = self.dialect.dra_consumable_capacity
        self.allocated: set[DeviceID] = set()
        self.shared: set[DeviceID] = set()
        self.aggregated: dict[DeviceID, dict[str, Fraction]] = {}
        for claim in snapshot.kind("ResourceClaim"):
            alloc = _d(_d(claim.get("status")).get("allocation"))
            for r in map(_d, _l(_d(alloc.get("devices")).get("results"))):
                if r.get("adminAccess"):
                    continue
                did = (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))
                if consumable and r.get("shareID") is not None:
                    self.shared.add(did)
                    if r.get("consumedCapacity") is not None:
                        agg = self.aggregated.setdefault(did, {})
                        for name, q in _d(r.get("consumedCapacity")).items():
                            agg[str(name)] = agg.get(str(name), Fraction(0)) + _amount(q)
                    continue
                self.allocated.add(did)
        self._pools: dict[str, list[Pool]] = {}
        # (expression, slice index, device index) -> result, shared across pods: a selector's verdict on a
        # device depends on nothing else.
        self.matches: dict[tuple[str, int, int], bool | CelRuntimeError | CelCompileError] = {}
        self.unsupported: dict[str, str] = {}  # expression -> why it was not evaluated
        self._totals: dict[tuple[str, str], tuple[int, int]] = {}

    def pools_for(self, node: Node) -> list[Pool]:
        pools = self._pools.get(node.name)
        if pools is None:
            pools = self._gather_pools(node)
            self._pools[node.name] = pools
        return pools

    def evaluate(self, expression: str, s: Slice, di: int) -> bool | CelRuntimeError | CelCompileError:
        """One selector on one device, cached for the snapshot; an expression beyond the CEL subset (or over
        its cost budget) is False and recorded in `unsupported`."""
        key = (expression, s.index, di)
        res = self.matches.get(key)
        if res is None:
            try:
                program = compile_expression(expression, self.cel_fields)
            except CelOverBudget as e:
                self.unsupported[expression] = str(e)
                res = False
            except CelUnsupported:
                self.unsupported[expression] = "is beyond kdiagnose's CEL subset"
                res = False
            except CelCompileError as e:
                res = e
            else:
                try:
                    res = program.evaluate(s.devices[di].env(s.driver))
                except CelRuntimeError as e:
                    res = e
                except CelOverBudget as e:  # the cost budget: cel-go would cancel the evaluation
                    self.unsupported[expression] = str(e)
                    res = False
            self.matches[key] = res
        return res

    def extended_totals(self, node: Node, resource: str) -> tuple[int, int]:
        """calculateDRAResourceTotals (noderesources/resource_allocation.go, DRAExtendedResource v1.36+): the
        devices of the class mapping `resource` that the node's slices list, and how many are allocated.
        Every slice counts (no pool completeness or generation check, as upstream); a slice without any node
        selection counts for every node. A selector error makes the resource count as absent (0, 0)."""
        key = (node.name, resource)
        cached = self._totals.get(key)
        if cached is not None:
            return cached
        cls = self.classes.get(self.extended.get(resource, ""))
        total = used = 0
        ok = cls is not None
        selectors = [
            str(_d(_d(x).get("cel")).get("expression") or "")
            for x in _l(_d(_d(cls).get("spec")).get("selectors"))
            if isinstance(_d(x).get("cel"), dict)
        ]
        for s in self.slices if ok else ():
            if s.per_device:
                devices = [
                    i
                    for i, d in enumerate(s.devices)
                    if d.all_nodes
                    or (d.node_name and d.node_name == node.name)
                    or (d.node_selector is not None and d.matches_node(node))
                ]
            else:
                if not s.all_nodes and s.node_name != node.name and s.node_selector is not None:
                    if not any(t.match(node) for t in s.node_selector):
                        continue
                elif not s.all_nodes and s.node_name and s.node_name != node.name:
                    continue
                devices = list(range(len(s.devices)))
            for di in devices:
                matched = True
                for expr in selectors:
                    res = self.evaluate(expr, s, di)
                    if not isinstance(res, bool):
                        ok = False  # logged upstream; the resource is omitted from the score
                        break
                    if not res:
                        matched = False
                        break
                if not ok:
                    break
                if matched:
                    total += 1
                    if self.is_allocated((s.driver, s.pool, s.devices[di].name)):
                        used += 1
            if not ok:
                break
        out = (total, used) if ok else (0, 0)
        self._totals[key] = out
        return out

    def is_allocated(self, did: DeviceID) -> bool:
        """internal.IsDeviceAllocated: exclusively allocated, shared, or with consumed capacity."""
        return did in self.allocated or did in self.shared or did in self.aggregated

    def _gather_pools(self, node: Node) -> list[Pool]:
        if self.dialect.dra_partitionable_devices:
            return self._gather_pools_partitionable(node)
        return self._gather_pools_legacy(node)

    def _gather_pools_partitionable(self, node: Node) -> list[Pool]:
        """GatherPools of v1.36+ (pools_incubating.go, PartitionableDevices on): per-device node selection,
        counter-set slices, the pool's slices that do not target the node, pools sorted by (driver, pool)
        with the pools whose devices have binding conditions last."""
        v137 = self.dialect.dra_counter_slices_follow_node
        grouped: dict[tuple[str, str], list[Slice]] = {}
        for s in self._by_node.get(node.name, []) + self._other:
            if not v137 and s.shared_counters:
                relevant = True  # v1.36: "always include slices with SharedCounters"
            elif s.node_name or s.all_nodes or s.node_selector is not None:
                relevant = s.matches_node(node)
            elif s.per_device:
                relevant = any(d.matches_node(node) for d in s.devices)
            else:
                continue  # some future way of node selection: ignored, as upstream
            if not relevant:
                continue
            key = (s.driver, s.pool)
            cur = grouped.get(key)
            if cur is None or s.generation > cur[0].generation:
                grouped[key] = [s]
            elif s.generation == cur[0].generation:
                cur.append(s)
        plain: list[Pool] = []
        binding: list[Pool] = []
        for (driver, name), slices in grouped.items():
            every: list[Slice] | None = None
            if len(slices) != slices[0].count:
                gen = slices[0].generation
                same = [s for s in self.slices if s.driver == driver and s.pool == name]
                if any(s.generation > gen for s in same):
                    continue  # obsolete: a newer generation exists elsewhere
                every = [s for s in same if s.generation == gen]
                if len(every) != slices[0].count:
                    plain.append(Pool(driver, name, [], incomplete=True))
                    continue
            pool = _build_pool(driver, name, slices, every)
            if any(d.binding_conditions for sl in pool.slices for d in sl.devices):
                binding.append(pool)
            else:
                plain.append(pool)
        plain.sort(key=lambda p: (p.driver, p.name))
        binding.sort(key=lambda p: (p.driver, p.name))
        return plain + binding

    def _gather_pools_legacy(self, node: Node) -> list[Pool]:
        """GatherPools for the dialect (pools_incubating.go); PartitionableDevices is off."""
        new = self.dialect.dra_skips_unusable_pools
        cands = sorted(self._by_node.get(node.name, []) + self._other, key=lambda s: s.index)
        grouped: dict[tuple[str, str], list[Slice]] = {}
        for s in cands:
            if s.per_device is not None or (new and s.shared_counters):
                continue
            if not (s.node_name or s.all_nodes or s.node_selector is not None):
                continue  # some future way of node selection: ignored, as upstream
            if not s.matches_node(node):
                continue
            key = (s.driver, s.pool)
            cur = grouped.get(key)
            if cur is None or s.generation > cur[0].generation:
                grouped[key] = [s]
            elif s.generation == cur[0].generation:
                cur.append(s)
        out: list[Pool] = []
        for (driver, name), slices in grouped.items():
            if not new:
                p = Pool(driver, name, slices, incomplete=len(slices) != slices[0].count)
                p.invalid_reason = _duplicate_device(slices)
                p.invalid = bool(p.invalid_reason)
                out.append(p)
                continue
            if len(slices) != slices[0].count:
                gen = slices[0].generation
                same = [s for s in self.slices if s.driver == driver and s.pool == name]
                if any(s.generation > gen for s in same):
                    continue  # obsolete: a newer generation exists elsewhere
                if sum(1 for s in same if s.generation == gen) != slices[0].count:
                    out.append(Pool(driver, name, [], incomplete=True))
                    continue
            reason = _duplicate_device(slices)
            out.append(
                Pool(driver, name, [] if reason else slices, invalid=bool(reason), invalid_reason=reason)
            )
        return out


def _build_pool(driver: str, name: str, slices: list[Slice], every: list[Slice] | None) -> Pool:
    """buildPool (v1.36+): slices by name; counter-set slices apart; the pool's other slices (`every`, when
    the node's view was incomplete) as not targeting the node; invalid on duplicate device or counter set
    names, or a consumed counter that no counter set defines."""
    slices = sorted(slices, key=lambda s: s.name)
    devices = [s for s in slices if not s.shared_counters]
    counters = [s for s in slices if s.shared_counters]
    other: list[Slice] = []
    if every is not None and len(slices) < len(every):
        seen = {s.name for s in slices}
        for s in every:
            if s.name in seen:
                continue
            (counters if s.shared_counters else other).append(s)
    reason = _duplicate_device(devices)
    if reason:
        return Pool(driver, name, [], invalid=True, invalid_reason=reason)
    sets: dict[str, dict[str, Fraction]] = {}
    for s in counters:
        for cs_name, cs in s.counter_sets:
            if cs_name in sets:
                return Pool(
                    driver, name, [], invalid=True, invalid_reason=f"duplicate counter set name {cs_name}"
                )
            sets[cs_name] = cs
    for group in (devices, other):
        for s in group:
            for d in s.devices:
                for cs_name, wanted in d.consumes:
                    have = sets.get(cs_name)
                    if have is None:
                        return Pool(
                            driver, name, [], invalid=True, invalid_reason=f"counter set {cs_name} not found"
                        )
                    for c in wanted:
                        if c not in have:
                            return Pool(
                                driver,
                                name,
                                [],
                                invalid=True,
                                invalid_reason=f"counter {c} not found in counter set {cs_name}",
                            )
    return Pool(driver, name, devices, not_targeting=other, counter_sets=sets)


def _duplicate_device(slices: list[Slice]) -> str:
    seen: set[str] = set()
    for s in slices:
        for d in s.devices:
            if d.name in seen:
                return f"duplicate device name {d.name}"
            seen.add(d.name)
    return ""


def dra_index(snapshot: Snapshot) -> DraIndex:
    idx = snapshot.cache.get("dra:index")
    if idx is None:
        idx = DraIndex(snapshot)
        snapshot.cache["dra:index"] = idx
    result: DraIndex = idx
    return result


# ---------------------------------------------------------------- claims


@dataclass(slots=True)
class Request:
    """One ExactDeviceRequest or DeviceSubRequest (its `name` is the subrequest's own name)."""

    name: str
    class_name: str
    selectors: list[Obj]
    mode: str
    count: int
    admin_access: bool
    parent: str = ""
    tolerations: list[Obj] = field(default_factory=list)
    # capacity.requests (DRAConsumableCapacity); None when the request has no capacity requirements.
    capacity: dict[str, Fraction] | None = None


@dataclass(slots=True)
class ClaimRequests:
    key: str  # namespace/name, as klog.KObj prints it
    requests: list[Request | list[Request]]
    constraints: list[Obj] = field(default_factory=list)


def _request(raw: Obj, name: str, parent: str = "") -> Request:
    return Request(
        name=name,
        class_name=str(raw.get("deviceClassName") or ""),
        selectors=[_d(s) for s in _l(raw.get("selectors"))],
        mode=str(raw.get("allocationMode") or "ExactCount"),
        count=int(raw.get("count") or 0) if raw.get("count") is not None else 1,
        admin_access=bool(raw.get("adminAccess")),
        parent=parent,
        tolerations=[_d(t) for t in _l(raw.get("tolerations"))],
        capacity=None
        if not isinstance(raw.get("capacity"), dict)
        else {str(k): _amount(v) for k, v in _d(_d(raw.get("capacity")).get("requests")).items()},
    )


def parse_claim_requests(key: str, spec: Obj) -> ClaimRequests:
    devices = _d(spec.get("devices"))
    reqs: list[Request | list[Request]] = []
    for r in map(_d, _l(devices.get("requests"))):
        name = str(r.get("name") or "")
        if r.get("firstAvailable"):
            reqs.append(
                [_request(_d(s), str(_d(s).get("name") or ""), name) for s in _l(r.get("firstAvailable"))]
            )
        elif isinstance(r.get("exactly"), dict):
            reqs.append(_request(r["exactly"], name))
        else:
            reqs.append(_request(r, name))  # v1beta1 shape: the exact request's fields inline
    return ClaimRequests(key, reqs, [_d(c) for c in _l(devices.get("constraints"))])


# ---------------------------------------------------------------- allocation


@dataclass(slots=True)
class _RequestData:
    request: Request
    parent: str
    klass: Obj
    num_devices: int
    all_devices: list[tuple[DeviceID, Device, Slice, Pool]] | None = None


class _MatchAttribute:
    """matchAttributeConstraint: every affected device must carry the same attribute value."""

    __slots__ = ("attribute", "name", "num", "requests")

    def __init__(self, requests: list[str], attribute: str) -> None:
        self.requests = set(requests)
        self.name = attribute
        self.attribute: Obj | None = None
        self.num = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        if not sub:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(request, sub):
            return True
        attr = device.attribute(self.name, driver)
        if attr is None:
            return False
        if self.num == 0:
            self.attribute = attr
            self.num = 1
            return True
        cur = self.attribute or {}
        for kind in ("string", "int", "bool", "version"):
            if kind in attr:
                if kind not in cur or cur[kind] != attr[kind]:
                    return False
                break
        else:
            return False
        self.num += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if self._applies(request, sub):
            self.num -= 1


class _DistinctAttribute(_MatchAttribute):
    """distinctAttributeConstraint (DRAConsumableCapacity, v1.36+, constraint.go): no two affected devices
    share the attribute's value. v1.37 keeps every device's value (`stack`); v1.36 keeps one value per
    *request name* (a second device of the same request replaces the first one's, and removing either
    drops it), mirrored as is."""

    __slots__ = ("per_device", "stack", "values")

    def __init__(self, requests: list[str], attribute: str, per_device: bool) -> None:
        super().__init__(requests, attribute)
        self.per_device = per_device
        self.values: dict[str, Obj] = {}
        self.stack: list[Obj] = []

    @staticmethod
    def _distinct(attr: Obj, seen: list[Obj]) -> bool:
        """matchesAttribute: False when a seen value of the same type equals it (or its type is unknown)."""
        for v in seen:
            for kind in ("string", "int", "bool", "version"):
                if kind in attr:
                    if kind in v and v[kind] == attr[kind]:
                        return False
                    break
            else:
                return False
        return True

    def add(self, request: str, sub: str, device: Device, driver: str) -> bool:
        if not self._applies(request, sub):
            return True
        attr = device.attribute(self.name, driver)
        if attr is None:
            return False
        if self.per_device:
            if not self._distinct(attr, self.stack):
                return False
            self.stack.append(attr)
            return True
        if self.num == 0:
            self.values[request] = attr
            self.num = 1
            return True
        if not self._distinct(attr, list(self.values.values())):
            return False
        self.values[request] = attr
        self.num += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if not self._applies(request, sub):
            return
        if self.per_device:
            self.stack.pop()
            return
        self.values.pop(request, None)
        self.num -= 1


_Counters = dict[str, dict[str, Fraction]]  # counter set -> counter -> amount


class Allocator:
    """structured.Allocator for one pod's claims that still need an allocation."""

    def __init__(self, index: DraIndex, claims: list[ClaimRequests]) -> None:
        self.index = index
        self.claims = claims
        self.new = index.dialect.dra_skips_unusable_pools
        # Selector expressions this pod met that the CEL subset cannot evaluate (treated as not matching).
        self.unsupported: dict[str, str] = {}  # expression -> why it was not evaluated
        # availableCounters: per pool ID, the counters its allocated devices leave; computed the first time a
        # pool is needed and kept for every node (allocator_incubating.go checkAvailableCounters).
        self.available_counters: dict[tuple[str, str], _Counters] = {}
        # The Filter's timeout has certainly expired when the search starts (see the plugin).
        self.timed_out = False
        self._explain_unsupported: bool | None = None  # explain_reads_unsupported(), once computed

    def allocate(self, node: Node) -> list[list[str]] | None:
        """The request reference ("req" or "req/sub") of every allocated device, per claim; None when the
        claims do not fit the node. Raises AllocationError (Filter Error) or FailedOnNode (v1.35)."""
        return _Run(self, node).run()

    def explain_reads_unsupported(self) -> bool:
        """Whether explain() may read a selector beyond the CEL subset (a request's own or its DeviceClass's,
        CelUnsupported or CelOverBudget when compiled): it then records the expression in `unsupported`, as
        allocate() does, and the report's words rest on a selector read as not matching. Once per allocator
        (compile_expression is cached per expression)."""
        if self._explain_unsupported is None:
            found = False
            for claim in self.claims:
                for req in claim.requests:
                    for sub in req if isinstance(req, list) else [req]:
                        klass = self.index.classes.get(sub.class_name)
                        if klass is None:
                            continue  # explain() skips the request
                        exprs = [
                            _d(_d(sel).get("cel")).get("expression")
                            for sel in _l(_d(klass.get("spec")).get("selectors"))
                        ] + [_d(sel.get("cel")).get("expression") for sel in sub.selectors]
                        for expr in exprs:
                            try:
                                compile_expression(str(expr or ""), self.index.cel_fields)
                            except CelUnsupported:  # CelOverBudget too
                                found = True
                            except CelCompileError:
                                pass  # an Error verdict of its own, never an explanation
            self._explain_unsupported = found
        return self._explain_unsupported

    def explain(self, node: Node) -> list[Obj]:
        """Why the claims do not fit `node`, per request, for the report (never a verdict: allocate()
        decides): the device class, how many devices the request needs, how many of the node's devices
        match its class and selectors, and how many of those are not allocated already. A request the
        node's devices could cover alone is left out (the combination failed: constraints, shares)."""
        run = _Run(self, node)
        out: list[Obj] = []
        for claim in self.claims:
            for req in claim.requests:
                for sub in req if isinstance(req, list) else [req]:
                    klass = self.index.classes.get(sub.class_name)
                    if klass is None:
                        continue
                    rd = _RequestData(sub, sub.parent, klass, 0)
                    matching = free = 0
                    try:
                        for pool in run.pools:
                            for sl in pool.slices:
                                for di, dev in enumerate(sl.devices):
                                    if not run._selectable(claim, rd, sl, di):
                                        continue
                                    matching += 1
                                    if (pool.driver, pool.name, dev.name) not in self.index.allocated:
                                        free += 1
                    except AllocationError:
                        continue  # a CEL error is the Filter's own message
                    need = sub.count if sub.mode == "ExactCount" else max(matching, 1)
                    if free >= need and matching > 0:
                        continue
                    name = f"{sub.parent}/{sub.name}" if sub.parent else sub.name
                    out.append(
                        {
                            "draClaim": claim.key,
                            "request": name,
                            "deviceClass": sub.class_name,
                            "count": need if sub.mode == "ExactCount" else "All",
                            "matching": matching,
                            "free": free,
                        }
                    )
        return out


_Start = tuple[int, int, int]  # deviceLocation: pool, slice, device index where the search resumes
_ZERO: _Start = (0, 0, 0)


class _Run:
    def __init__(self, a: Allocator, node: Node) -> None:
        self.owner = a
        self.index = a.index
        self.claims = a.claims
        self.new = a.new
        dialect = a.index.dialect
        # The v1.36+ allocator: partitionable devices, consumable capacity, combinations (deviceLocation).
        self.v136 = dialect.dra_partitionable_devices
        self.consumable = dialect.dra_consumable_capacity
        self.fractional = dialect.dra_fractional_capacity_range
        self.strict = dialect.dra_capacity_errors_abort
        self.node = node
        self.pools = a.index.pools_for(node)
        self.data: dict[tuple[int, int, int], _RequestData] = {}
        self.selected: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        # allocatingCapacity: what the shares of this attempt consume, per device.
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        # consumedCounters: what the devices of this attempt take, per pool.
        self.consumed_counters: dict[tuple[str, str], _Counters] = {}
        self.result: list[list[tuple[str, DeviceID]]] = [[] for _ in a.claims]

    def run(self) -> list[list[str]] | None:
        for ci, claim in enumerate(self.claims):
            min_per_claim = 0
            for ri, req in enumerate(claim.requests):
                if isinstance(req, list):
                    least = None
                    for si, sub in enumerate(req):
                        rd = self._validate(claim, sub)
                        self.data[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    n, name = least or 0, (req[0].parent if req else "")
                else:
                    rd = self._validate(claim, req)
                    self.data[(ci, ri, 0)] = rd
                    n, name = rd.num_devices, req.name
                if self.v136 and n > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    # v1.36+: checked per request, before adding (so a large count cannot overflow).
                    raise AllocationError(
                        f"claim {claim.key}, request {name}: adding {n} devices exceeds the claim limit of "
                        f"{ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} already accounted for"
                    )
                min_per_claim += n
            if min_per_claim > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_per_claim} exceeds the claim limit of "
                    f"{ALLOCATION_RESULTS_MAX_SIZE}"
                )
            cons: list[_MatchAttribute] = []
            for i, c in enumerate(claim.constraints):
                requests = [str(x) for x in _l(c.get("requests"))]
                if c.get("matchAttribute"):
                    cons.append(_MatchAttribute(requests, str(c["matchAttribute"])))
                elif (self.consumable or self.index.dialect.dra_distinct_attribute_without_gate) and c.get(
                    "distinctAttribute"
                ):
                    cons.append(
                        _DistinctAttribute(
                            requests,
                            str(c["distinctAttribute"]),
                            self.index.dialect.dra_distinct_attribute_per_device,
                        )
                    )
                else:
                    raise AllocationError(
                        f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(cons)
        if self.owner.timed_out:
            # allocateOne's first step: `filter operation aborted: context deadline exceeded`.
            raise AllocationTimeout
        try:
            done = self._one(0, 0, 0, 0, False, _ZERO)
        except _MaxSizeExceeded:
            done = False
        if not done:
            if self.new and any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [[ref for ref, _ in devs] for devs in self.result]

    def _validate(self, claim: ClaimRequests, req: Request) -> _RequestData:
        for i, sel in enumerate(req.selectors):
            if not isinstance(sel.get("cel"), dict):
                raise AllocationError(
                    f"claim {claim.key}, request {req.name}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if not req.class_name:
            raise AllocationError(
                f"claim {claim.key}, request {req.name}: missing device class name (unsupported request type?)"
            )
        klass = self.index.classes.get(req.class_name)
        if klass is None:
            raise AllocationError(
                f"claim {claim.key}, request {req.name}: could not retrieve device class {req.class_name}: "
                f'deviceclass.resource.k8s.io "{req.class_name}" not found'
            )
        rd = _RequestData(req, req.parent, klass, 0)
        if req.mode == "ExactCount":
            rd.num_devices = req.count
        elif req.mode == "All":
            rd.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim.key}, request {req.name}: asks for all devices, but resource pool {pool.pool_id} "
                        "is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim.key}, request {req.name}: asks for all devices, but resource pool {pool.pool_id} "
                        "is currently invalid"
                    )
                for s in pool.slices:
                    for di, dev in enumerate(s.devices):
                        if not self._selectable(claim, rd, s, di):
                            continue
                        if self.consumable:
                            # v1.37: static capacity only (what is in use is checked when the device is
                            # allocated, so a capacity-blocked matching device stays and "All" fails);
                            # v1.36: beside the allocated shares, so such a device is left out.
                            did = (s.driver, s.pool, dev.name)
                            static = self.index.dialect.dra_all_devices_static_capacity
                            try:
                                fits = self._fits_capacity(req, None if static else did, dev, None)
                            except CapacityError as e:
                                if self.strict:
                                    raise AllocationError(
                                        f"claim {claim.key}, request {req.name}: checking capacity for device "
                                        f"{dev.name}: {e}"
                                    ) from None
                                continue
                            if not fits:
                                continue
                        rd.all_devices.append(((s.driver, s.pool, dev.name), dev, s, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {req.name}: unsupported count mode {req.mode}")
        return rd

    def _fits_capacity(
        self,
        req: Request,
        did: DeviceID | None,
        dev: Device,
        allocating: dict[str, Fraction] | None,
    ) -> bool:
        current = self.index.aggregated.get(did) if did is not None else None
        return request_fits_capacity(
            current, req.capacity, dev.capacity, allocating, fractional=self.fractional, strict=self.strict
        )

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.index.allocated or bool(self.allocating.get(did))

    def _capacity_in_use(self, did: DeviceID) -> bool:
        """deviceCapacityInUse: a share of the device is allocated or being allocated."""
        if did in self.index.aggregated or did in self.allocating_capacity:
            return True
        return self.index.dialect.dra_shares_mark_capacity_in_use and did in self.index.shared

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: _Start) -> bool:
        """allocateOne; raises _MaxSizeExceeded like errAllocationResultMaxSizeExceeded. From v1.36 the
        next device of a request is searched from after the previous one (`start`): combinations only."""
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False, _ZERO)
            except _MaxSizeExceeded:
                return False
        rd = self.data[(ci, ri, si)]
        if not in_sub and rd.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.data:
                try:
                    ok = self._one(ci, ri, sub, di, True, _ZERO)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.selected[(ci, ri)] = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        req = rd.request
        if rd.all_devices is not None and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, _ZERO)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if rd.all_devices is not None:
            did, dev, s, pool = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, dev, s, pool, must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, _ZERO)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        for pi in range(start[0] if self.v136 else 0, len(self.pools)):
            pool = self.pools[pi]
            if pool.invalid:
                if self.new:
                    continue
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            if pool.incomplete and self.new:
                continue
            first_slice = start[1] if self.v136 and pi == start[0] else 0
            for sli in range(first_slice, len(pool.slices)):
                s = pool.slices[sli]
                first_dev = start[2] if self.v136 and pi == start[0] and sli == start[1] else 0
                for dix in range(first_dev, len(s.devices)):
                    dev = s.devices[dix]
                    did = (pool.driver, pool.name, dev.name)
                    if req.admin_access:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    if not self._selectable(claim, rd, s, dix):
                        continue
                    if self.consumable:
                        try:
                            fits = self._fits_capacity(req, did, dev, self.allocating_capacity.get(did))
                        except CapacityError as e:
                            if self.strict:
                                raise AllocationError(
                                    f"claim {claim.key}, request {req.name}: checking capacity for device "
                                    f"{_device_id_str(did)}: {e}"
                                ) from None
                            continue
                        if not fits:
                            continue
                    undo = self._allocate_device(ci, rd, did, dev, s, pool, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._one(ci, ri, si, di + 1, in_sub, (pi, sli, dix + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _selectable(self, claim: ClaimRequests, rd: _RequestData, s: Slice, di: int) -> bool:
        """isSelectable: class selectors, then the request's; devices with binding conditions are out
        before v1.36; a perDeviceNodeSelection device must select the node."""
        dev = s.devices[di]
        if dev.binding_conditions and not self.index.dialect.dra_device_binding_conditions:
            return False
        class_name = str(_d(rd.klass.get("metadata")).get("name") or "")
        for i, sel in enumerate(_l(_d(rd.klass.get("spec")).get("selectors"))):
            if not self._cel(
                _d(_d(sel).get("cel")).get("expression"), s, di, f"class {class_name}: selector #{i}"
            ):
                return False
        for i, sel in enumerate(rd.request.selectors):
            if not self._cel(
                _d(sel.get("cel")).get("expression"), s, di, f"claim {claim.key}: selector #{i}"
            ):
                return False
        return not (self.v136 and s.per_device and not dev.matches_node(self.node))

    def _cel(self, expression: Any, s: Slice, di: int, where: str) -> bool:
        expr = str(expression or "")
        res = self.index.evaluate(expr, s, di)
        if res is False and expr in self.index.unsupported:
            self.owner.unsupported[expr] = self.index.unsupported[expr]
        if isinstance(res, CelCompileError):
            # isSelectable: a selector that does not compile is an error once a device is examined.
            raise AllocationError(f"{where}: CEL compile error: {res}")
        if isinstance(res, CelRuntimeError):
            raise AllocationError(f"{where}: CEL runtime error: {res}")
        return res

    def _taints(self, s: Slice, dev: Device) -> list[Obj]:
        """The device's own taints, then those of the DeviceTaintRules that select it."""
        taints = [_d(t) for t in _l(dev.raw.get("taints"))]
        for driver, pool, name, taint in self.index.taint_rules:
            if (
                (driver is None or driver == s.driver)
                and (pool is None or pool == s.pool)
                and (name is None or name == dev.name)
            ):
                taints.append(taint)
        return taints

    # ---- counters (DRAPartitionableDevices, v1.36+)

    def _available(self, pool: Pool) -> _Counters:
        """The pool's counter sets less what its allocated devices (on any node) consume; may go negative."""
        key = (pool.driver, pool.name)
        avail = self.owner.available_counters.get(key)
        if avail is None:
            avail = {cs: dict(counters) for cs, counters in pool.counter_sets.items()}
            for group in (pool.slices, pool.not_targeting):
                for s in group:
                    for d in s.devices:
                        if not self.index.is_allocated((s.driver, s.pool, d.name)):
                            continue
                        for cs, counters in d.consumes:
                            have = avail.get(cs)
                            if have is None:
                                continue
                            for c, amount in counters.items():
                                if c in have:
                                    have[c] -= amount
            self.owner.available_counters[key] = avail
        return avail

    def _take_counters(self, pool: Pool, dev: Device) -> bool:
        """checkAvailableCounters: add the device's consumption; False (and undone) when any counter of
        the pool is exceeded (an over-consumed counter blocks every device of the pool)."""
        avail = self._available(pool)
        used = self.consumed_counters.setdefault((pool.driver, pool.name), {})
        for cs, counters in dev.consumes:
            mine = used.setdefault(cs, {})
            for c, amount in counters.items():
                mine[c] = mine.get(c, Fraction(0)) + amount
        for cs, counters in avail.items():
            mine = used.get(cs, {})
            for c, amount in counters.items():
                if amount < mine.get(c, Fraction(0)):
                    self._give_counters(pool, dev)
                    return False
        return True

    def _give_counters(self, pool: Pool, dev: Device) -> None:
        used = self.consumed_counters.get((pool.driver, pool.name), {})
        for cs, counters in dev.consumes:
            mine = used.get(cs, {})
            for c, amount in counters.items():
                mine[c] = mine.get(c, Fraction(0)) - amount

    def _allocate_device(
        self, ci: int, rd: _RequestData, did: DeviceID, dev: Device, s: Slice, pool: Pool, *, must: bool
    ) -> Any:
        """allocateDevice: None when the device cannot be taken, else an undo callable."""
        if self.v136:
            return self._allocate_device_v136(ci, rd, did, dev, s, pool, must=must)
        req = rd.request
        if req.admin_access:
            if ci in self.allocating.get(did, ()):
                return None
        elif self._in_use(did):
            return None
        if dev.consumes_counters:
            return None  # PartitionableDevices is off before v1.36
        if self.index.dialect.dra_device_taints and _taint_prevents_allocation(
            self._taints(s, dev), req.tolerations
        ):
            return None
        base, sub = (rd.parent, req.name) if rd.parent else (req.name, "")
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, dev, s.driver):
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {req.name}: cannot add device {_device_id_str(did)} "
                        "because a claim constraint would not be satisfied"
                    )
                for prev in cons[:i]:
                    prev.remove(base, sub)
                return None
        self.allocating.setdefault(did, set()).add(ci)
        ref = f"{rd.parent}/{req.name}" if rd.parent else req.name
        n = len(self.result[ci])
        self.result[ci].append((ref, did))

        def undo() -> None:
            for c in cons:
                c.remove(base, sub)
            self.allocating[did].discard(ci)
            del self.result[ci][n:]

        return undo

    def _allocate_device_v136(
        self, ci: int, rd: _RequestData, did: DeviceID, dev: Device, s: Slice, pool: Pool, *, must: bool
    ) -> Any:
        """allocateDevice of v1.36+ (allocator_incubating.go): shareable devices (allowMultipleAllocations)
        are not marked in use and record the capacity their share consumes; a device's counters are taken
        unless it is already shared (its counters are charged once); rollback undoes every step in reverse."""
        req = rd.request
        multi = self.consumable and dev.allow_multiple
        if not multi and req.admin_access and ci in self.allocating.get(did, ()):
            return None
        if not req.admin_access and self._in_use(did):
            return None
        skip_counters = multi and self._capacity_in_use(did)
        counters_taken = False
        if not skip_counters and dev.consumes:
            if not self._take_counters(pool, dev):
                return None
            counters_taken = True
        base, sub = (rd.parent, req.name) if rd.parent else (req.name, "")
        cons = self.constraints[ci]
        added = 0
        marked = False
        inserted: dict[str, Fraction] | None = None
        existed = False

        def rollback() -> None:
            if inserted is not None:
                cur = self.allocating_capacity.get(did)
                if cur is not None:
                    for name, q in inserted.items():
                        if name in cur:
                            cur[name] -= q
                    if all(v == 0 for v in cur.values()):
                        del self.allocating_capacity[did]
                if existed and did not in self.allocating_capacity:
                    self.allocating_capacity[did] = {}
            if marked:
                self.allocating[did].discard(ci)
            for c in reversed(cons[:added]):
                c.remove(base, sub)
            if counters_taken:
                self._give_counters(pool, dev)

        if self.index.dialect.dra_device_taints and _taint_prevents_allocation(
            self._taints(s, dev), req.tolerations
        ):
            rollback()
            return None
        for c in cons:
            if not c.add(base, sub, dev, s.driver):
                rollback()
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {req.name}: cannot add device {_device_id_str(did)} "
                        "because a claim constraint would not be satisfied"
                    )
                return None
            added += 1
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
            marked = True
        if self.consumable:
            try:
                fits = self._fits_capacity(req, did, dev, self.allocating_capacity.get(did))
            except CapacityError as e:
                rollback()
                if self.strict:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {req.name}: rechecking capacity for device "
                        f"{_device_id_str(did)}: {e}"
                    ) from None
                return None
            if not fits:
                rollback()
                return None
            if multi:
                share = consumed_capacity(req.capacity, dev.capacity, fractional=self.fractional)
                existed = did in self.allocating_capacity
                cur = self.allocating_capacity.setdefault(did, {})
                for name, q in share.items():
                    cur[name] = cur.get(name, Fraction(0)) + q
                inserted = share
        ref = f"{rd.parent}/{req.name}" if rd.parent else req.name
        n = len(self.result[ci])
        self.result[ci].append((ref, did))

        def undo() -> None:
            del self.result[ci][n:]
            rollback()

        return undo


def _tolerates(toleration: Obj, taint: Obj) -> bool:
    """resourceclaim.ToleratesTaint (dynamic-resource-allocation/resourceclaim/devicetoleration.go)."""
    effect, key = str(toleration.get("effect") or ""), str(toleration.get("key") or "")
    if effect and effect != str(taint.get("effect") or ""):
        return False
    if key and key != str(taint.get("key") or ""):
        return False
    op = str(toleration.get("operator") or "")
    if op in ("", "Equal"):
        return str(toleration.get("value") or "") == str(taint.get("value") or "")
    return op == "Exists"


def _taint_prevents_allocation(taints: list[Obj], tolerations: list[Obj]) -> bool:
    """taintPreventsAllocation (DRADeviceTaints, v1.36+): a NoSchedule or NoExecute device taint that none
    of the request's tolerations tolerates; other effects (None, unknown) never prevent allocation."""
    for taint in taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(
            _tolerates(t, taint) for t in tolerations
        ):
            return True
    return False


class _MaxSizeExceeded(Exception):  # errAllocationResultMaxSizeExceeded
    pass
