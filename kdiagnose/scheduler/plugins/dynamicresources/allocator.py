"""Structured-parameters device allocator (k8s.io/dynamic-resource-allocation/structured/internal/incubating).

The default feature set of v1.34/v1.35 (AdminAccess and PrioritizedList on; PartitionableDevices,
DeviceTaints, DeviceBindingConditions and ConsumableCapacity off) selects upstream's "incubating"
allocator: an exhaustive backtracking search that takes the first full solution. This module mirrors
allocator_incubating.go and pools_incubating.go of both releases:

- v1.34 (release-4.21): a pool is incomplete when the slices for the node do not add up to
  resourceSliceCount; incomplete pools are still allocated from; an invalid pool (duplicate device names)
  met during the search aborts with an error.
- v1.35 (master): incompleteness looks at the pool's slices cluster-wide, obsolete pools are dropped,
  incomplete and invalid pools are skipped, and a failed search with an invalid pool reports
  `invalid resource pools were encountered` for that node only.

Per-snapshot data (slices by node, pools per node, devices already allocated, CEL results per device)
lives in one `DraIndex` in snapshot.cache, shared by every pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kdiagnose.model.quantity import QuantityError, parse_quantity
from kdiagnose.scheduler.plugins.dynamicresources.cel import (
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


class FailedOnNode(Exception):  # mirrors structured.ErrFailedAllocationOnNode
    """v1.35: allocation failed on this node only; the message becomes an UnschedulableAndUnresolvable reason."""


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _device_id_str(d: DeviceID) -> str:
    return "/".join(d)


# ---------------------------------------------------------------- slices and pools


@dataclass(slots=True)
class Device:
    name: str
    raw: Obj
    binding_conditions: bool
    consumes_counters: bool
    _env: Any = None

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
                self._env = device_env(driver, attrs, caps)
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

    def matches_node(self, node: Node) -> bool:
        if self.node_name:
            return node.name == self.node_name
        if self.all_nodes:
            return True
        if self.node_selector is not None:
            return any(t.match(node) for t in self.node_selector)
        return False


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    slices: list[Slice]
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _parse_slice(i: int, obj: Obj) -> Slice:
    spec = _d(obj.get("spec"))
    pool = _d(spec.get("pool"))
    ns = spec.get("nodeSelector")
    devices = []
    for d in map(_d, _l(spec.get("devices"))):
        devices.append(
            Device(
                name=str(d.get("name") or ""),
                raw=d,
                binding_conditions=bool(d.get("bindingConditions")),
                consumes_counters=bool(d.get("consumesCounters")),
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
        for s in self.slices:
            if s.node_name:
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._other.append(s)
        # ListAllAllocatedDevices: every allocated result except admin-access ones.
        self.allocated: set[DeviceID] = set()
        for claim in snapshot.kind("ResourceClaim"):
            alloc = _d(_d(claim.get("status")).get("allocation"))
            for r in map(_d, _l(_d(alloc.get("devices")).get("results"))):
                if r.get("adminAccess"):
                    continue
                self.allocated.add(
                    (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))
                )
        self._pools: dict[str, list[Pool]] = {}
        # (expression, slice index, device index) -> result, shared across pods: a selector's verdict on a
        # device depends on nothing else.
        self.matches: dict[tuple[str, int, int], bool | CelRuntimeError | CelCompileError] = {}
        self.unsupported: dict[str, str] = {}  # expression -> why it was not evaluated

    def pools_for(self, node: Node) -> list[Pool]:
        pools = self._pools.get(node.name)
        if pools is None:
            pools = self._gather_pools(node)
            self._pools[node.name] = pools
        return pools

    def _gather_pools(self, node: Node) -> list[Pool]:
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
    all_devices: list[tuple[DeviceID, Device, Slice]] | None = None


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


class Allocator:
    """structured.Allocator for one pod's claims that still need an allocation."""

    def __init__(self, index: DraIndex, claims: list[ClaimRequests]) -> None:
        self.index = index
        self.claims = claims
        self.new = index.dialect.dra_skips_unusable_pools
        # Selector expressions this pod met that the CEL subset cannot evaluate (treated as not matching).
        self.unsupported: dict[str, str] = {}  # expression -> why it was not evaluated

    def allocate(self, node: Node) -> list[list[str]] | None:
        """The request reference ("req" or "req/sub") of every allocated device, per claim; None when the
        claims do not fit the node. Raises AllocationError (Filter Error) or FailedOnNode (v1.35)."""
        return _Run(self, node).run()


class _Run:
    def __init__(self, a: Allocator, node: Node) -> None:
        self.owner = a
        self.index = a.index
        self.claims = a.claims
        self.new = a.new
        self.node = node
        self.pools = a.index.pools_for(node)
        self.data: dict[tuple[int, int, int], _RequestData] = {}
        self.selected: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
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
                    min_per_claim += least or 0
                else:
                    rd = self._validate(claim, req)
                    self.data[(ci, ri, 0)] = rd
                    min_per_claim += rd.num_devices
            if min_per_claim > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_per_claim} exceeds the claim limit of "
                    f"{ALLOCATION_RESULTS_MAX_SIZE}"
                )
            cons: list[_MatchAttribute] = []
            for i, c in enumerate(claim.constraints):
                if c.get("matchAttribute"):
                    cons.append(
                        _MatchAttribute([str(x) for x in _l(c.get("requests"))], str(c["matchAttribute"]))
                    )
                else:
                    raise AllocationError(
                        f"claim {claim.key}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(cons)
        try:
            done = self._one(0, 0, 0, 0, False)
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
                        if self._selectable(claim, rd, s, di):
                            rd.all_devices.append(((s.driver, s.pool, dev.name), dev, s))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {req.name}: unsupported count mode {req.mode}")
        return rd

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.index.allocated or bool(self.allocating.get(did))

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne; raises _MaxSizeExceeded like errAllocationResultMaxSizeExceeded."""
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        rd = self.data[(ci, ri, si)]
        if not in_sub and rd.parent:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.data:
                try:
                    ok = self._one(ci, ri, sub, di, True)
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
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if rd.all_devices is not None:
            did, dev, s = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, dev, s, must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        for pool in self.pools:
            if pool.invalid:
                if self.new:
                    continue
                raise AllocationError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            if pool.incomplete and self.new:
                continue
            for s in pool.slices:
                for dix, dev in enumerate(s.devices):
                    did = (pool.driver, pool.name, dev.name)
                    if req.admin_access:
                        if ci in self.allocating.get(did, ()):
                            continue
                    elif self._in_use(did):
                        continue
                    if not self._selectable(claim, rd, s, dix):
                        continue
                    undo = self._allocate_device(ci, rd, did, dev, s, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._one(ci, ri, si, di + 1, in_sub)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _selectable(self, claim: ClaimRequests, rd: _RequestData, s: Slice, di: int) -> bool:
        """isSelectable: class selectors, then the request's; devices with binding conditions are out."""
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
        return True

    def _cel(self, expression: Any, s: Slice, di: int, where: str) -> bool:
        expr = str(expression or "")
        key = (expr, s.index, di)
        res = self.index.matches.get(key)
        if res is None:
            try:
                program = compile_expression(expr)
            except CelOverBudget as e:
                self.index.unsupported[expr] = str(e)
                res = False
            except CelUnsupported:
                # Not evaluable here: treated as not matching; the plugin reports the expression.
                self.index.unsupported[expr] = "is beyond kdiagnose's CEL subset"
                res = False
            except CelCompileError as e:
                # isSelectable: a selector that does not compile is an error once a device is examined.
                res = e
            else:
                try:
                    res = program.evaluate(s.devices[di].env(s.driver))
                except CelRuntimeError as e:
                    res = e
                except CelOverBudget as e:  # the cost budget: cel-go would cancel the evaluation
                    self.index.unsupported[expr] = str(e)
                    res = False
            self.index.matches[key] = res
        if res is False and expr in self.index.unsupported:
            self.owner.unsupported[expr] = self.index.unsupported[expr]
        if isinstance(res, CelCompileError):
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

    def _allocate_device(
        self, ci: int, rd: _RequestData, did: DeviceID, dev: Device, s: Slice, *, must: bool
    ) -> Any:
        """allocateDevice: None when the device cannot be taken, else an undo callable."""
        req = rd.request
        if req.admin_access:
            if ci in self.allocating.get(did, ()):
                return None
        elif self._in_use(did):
            return None
        if dev.consumes_counters:
            return None  # PartitionableDevices: not replayed (see the plugin's note)
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
