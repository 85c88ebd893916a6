"""DynamicResources: ResourceClaims (DRA, resource.k8s.io/v1), mirroring
plugins/dynamicresources/dynamicresources.go of v1.34.1 (release-4.21) and v1.35.4 (master).

PreEnqueue/PreFilter resolve the pod's claims; PreFilter checks device classes and builds the structured
allocator (allocator.py); Filter checks allocated claims' node selectors and tries to allocate the rest on
the node (within DynamicResourcesArgs.filterTimeout: a timeout is UnschedulableAndUnresolvable before v1.36
and an Error from v1.36, dynamicresources.go of v1.36.5); PostFilter says whether deallocating a claim
could help; Score (v1.35) ranks firstAvailable subrequests.

Claims from a ResourceClaimTemplate that the resourceclaim controller has not created yet (no entry in
pod.status.resourceClaimStatuses) are evaluated as the claim the controller would create from the
template, with a note: that is what the scheduler sees a moment later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import (
    SKIP,
    SUCCESS,
    Code,
    CycleState,
    LazyDetails,
    Plugin,
    PreFilterResult,
    Status,
    add_note,
)
from kdiagnose.scheduler.plugins.dynamicresources.allocator import (
    DEVICE_CLASS_PREFIX,
    AllocationError,
    AllocationTimeout,
    Allocator,
    ClaimRequests,
    FailedOnNode,
    Request,
    dra_index,
    parse_claim_requests,
)
from kdiagnose.scheduler.plugins.helper.node_selector import NodeSelectorTerm, parse_node_selector_terms
from kdiagnose.scheduler.plugins.helper.normalize_score import default_normalize_score
from kdiagnose.scheduler.plugins.noderesources.resource_names import is_extended_resource_name

if TYPE_CHECKING:
    from kdiagnose.model.objects import Container, Pod
    from kdiagnose.model.snapshot import NodeInfo
    from kdiagnose.scheduler.diagnosis import Diagnosis

__all__ = [
    "ERR_CANNOT_ALLOCATE",
    "ERR_CLAIM_IN_USE",
    "ERR_NOT_AVAILABLE",
    "ERR_STATE_NOT_FOUND",
    "ERR_TIMED_OUT",
    "POST_DEALLOCATED",
    "POST_NO_CLAIMS",
    "POST_STILL_NOT_SCHEDULABLE",
    "DynamicResources",
]

ERR_CLAIM_IN_USE = "resourceclaim in use"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_TIMED_OUT = "timed out trying to allocate devices"
# CycleState.Read's error when PreFilter never ran (an earlier PreFilter returned UnschedulableAndUnresolvable).
ERR_STATE_NOT_FOUND = "not found"
POST_NO_CLAIMS = "no new claims to deallocate"
POST_DEALLOCATED = "deallocation of ResourceClaim completed"
POST_STILL_NOT_SCHEDULABLE = "still not schedulable"
# resourceapi.FirstAvailableDeviceRequestMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8

_KEY = names.DYNAMIC_RESOURCES
Obj = dict[str, Any]


# A filterTimeout at most this short has expired before the allocator's first step, whatever the machine
# (upstream's own unit test relies on 1ns); a longer one depends on how fast the real allocator runs, which
# a replay does not know: it is replayed as not expiring, with a note when it is short enough to matter.
TIMEOUT_CERTAIN_S = 1e-6
TIMEOUT_NOTE_BELOW_S = 0.1
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def _duration_s(raw: Any) -> float:
    """A Go duration (metav1.Duration as decoded: "10s", "1m30s", "1ns") in seconds; 0 when unparsable."""
    text = str(raw or "").strip()
    sign = -1.0 if text.startswith("-") else 1.0
    return sign * sum(float(n) * _DURATION_UNITS[u] for n, u in _DURATION_RE.findall(text))


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


# Also true of a cluster without any DRA driver; a dump that left the kind out reads the same way.
_NO_SLICES = (
    "the input has no ResourceSlices: no node offers devices to allocate (no DRA driver publishes any, or "
    "the dump left them out: kubectl get resourceslices)"
)


@dataclass(slots=True)
class _Claim:
    namespace: str
    name: str
    raw: Obj
    emulated_from: str = ""  # the ResourceClaimTemplate, when the claim is not created yet

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def status(self) -> Obj:
        return _d(self.raw.get("status"))

    @property
    def allocation(self) -> Obj | None:
        a = self.status.get("allocation")
        return a if isinstance(a, dict) else None

    @property
    def reserved_for(self) -> list[Obj]:
        return [_d(r) for r in _l(self.status.get("reservedFor"))]


@dataclass(slots=True)
class _State:
    """stateData; Clone returns the same object upstream, so preemption's copies share it."""

    claims: list[_Claim] = field(default_factory=list)
    available_on: list[list[NodeSelectorTerm] | None] = field(default_factory=list)
    allocator: Allocator | None = None
    to_allocate: list[int] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, list[list[str]]] = field(default_factory=dict)
    # DRAExtendedResource (v1.36+): the pod's non-zero requests of extended resources a DeviceClass maps;
    # None when it has none (no special claim).
    extended: dict[str, int] | None = None
    user_claims: list[ClaimRequests] = field(default_factory=list)

    def clone(self) -> _State:
        return self


# specialClaimInMemName: the in-memory name of the claim for DRA-backed extended resources.
SPECIAL_CLAIM_NAME = "<extended-resources>"


def _extended_requests(pod: Pod, mapped: dict[str, str]) -> dict[str, int] | None:
    """hasDeviceClassMappedExtendedResource over PodRequests: the non-zero DRA extended resource requests
    (extended names, or deviceclass.resource.kubernetes.io/...) that some DeviceClass maps."""
    out = {
        r: q
        for r, q in pod.requests.items()
        if q and r in mapped and (is_extended_resource_name(r) or r.startswith(DEVICE_CLASS_PREFIX))
    }
    return out or None


def _first_available_score(c: _Claim, allocated_subs: set[str]) -> int:
    """computeScore for one claim: MaxSize - rank of each firstAvailable subrequest that was allocated."""
    score = 0
    for req in map(_d, _l(_d(_d(c.raw.get("spec")).get("devices")).get("requests"))):
        if isinstance(req.get("exactly"), dict):
            continue
        for rank, sub in enumerate(map(_d, _l(req.get("firstAvailable")))):
            if f"{req.get('name') or ''}/{sub.get('name') or ''}" in allocated_subs:
                score += FIRST_AVAILABLE_MAX_SIZE - rank
    return score


def _container_request(
    i: int, c: Container, r: str, cls: str, reusable: list[Request | None]
) -> Request | None:
    """createResourceRequestAndMappings: the container's request for `r`, less what the reusable
    (later, long-lived) requests already hold; None when it needs nothing more."""
    q = c.requests.get(r, 0)
    if q <= 0:
        return None
    total = 0
    for prev in reusable:
        if prev is not None:
            total += prev.count
            if total >= q:
                return None
    # The request's index among the container's sorted request names.
    ridx = sorted(c.requests).index(r)
    return Request(f"container-{i}-request-{ridx}", cls, [], "ExactCount", q - total, False)


def _extended_claim_requests(
    pod: Pod, needed: dict[str, int], mapped: dict[str, str]
) -> list[Request | list[Request]]:
    """createRequestsAndMappings (extendeddynamicresources.go): per resource (sorted), one ExactCount request
    per long-lived container (regular and sidecar), named container-<index>-request-<ridx>, plus one for the
    largest remainder of the short-lived init containers after the long-lived requests after them; sorted
    by name."""
    containers = [*pod.init_containers, *pod.containers]
    n_init = len(pod.init_containers)
    out: list[Request] = []
    for r in sorted(needed):
        cls = mapped.get(r)
        if cls is None:
            continue
        long_lived: list[Request | None] = [None] * len(containers)
        short: list[int] = []
        for i, c in enumerate(containers):
            if i < n_init and c.restart_policy != "Always":
                short.append(i)
            else:
                long_lived[i] = _container_request(i, c, r, cls, [])
        biggest: Request | None = None
        for i in short:
            req = _container_request(i, containers[i], r, cls, long_lived[i:])
            if req is not None and (biggest is None or biggest.count < req.count):
                biggest = req
        if biggest is not None:
            out.append(biggest)
        out.extend(req for req in long_lived if req is not None)
    out.sort(key=lambda q: q.name)
    requests: list[Request | list[Request]] = list(out)
    return requests


class _ClaimError(Exception):
    """foreachPodResourceClaim's error: the pod cannot be scheduled until its claims exist."""


def _note_unsupported(state: CycleState, allocator: Allocator) -> None:
    """The selectors the allocator (allocate or explain) read as not matching because the CEL subset cannot
    evaluate them, as honesty notes."""
    for expr, why in sorted(allocator.unsupported.items()):
        shown = expr if len(expr) <= 200 else expr[:200] + "..."
        add_note(state, f"not evaluated: CEL selector {shown!r} {why}; treated as not matching")


class DynamicResources(Plugin):
    name = names.DYNAMIC_RESOURCES

    # ------------------------------------------------------------ claims of the pod

    def _pod_claims(self, pod: Pod, state: CycleState | None) -> list[_Claim] | None:
        """podResourceClaims; None when the input lacks the objects needed to tell (a note says so)."""
        snap = self.snapshot
        out: list[_Claim] = []
        statuses = {str(s.get("name") or ""): s for s in pod.resource_claim_statuses}
        for pc in pod.resource_claims:
            pc_name = str(pc.get("name") or "")
            must_check_owner = False
            if pc.get("resourceClaimName"):
                claim_name = str(pc["resourceClaimName"])
            elif pc.get("resourceClaimTemplateName"):
                tname = str(pc["resourceClaimTemplateName"])
                st = statuses.get(pc_name)
                if st is None:
                    template = snap.get("ResourceClaimTemplate", tname, pod.namespace)
                    if template is None:
                        if not snap.has("ResourceClaimTemplate"):
                            return self._missing(state, pod, "ResourceClaimTemplates")
                        raise _ClaimError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
                    out.append(self._from_template(pod, pc_name, tname, template, state))
                    continue
                if not st.get("resourceClaimName"):
                    continue  # no claim needed for this entry
                claim_name = str(st["resourceClaimName"])
                must_check_owner = True
            else:
                raise _ClaimError(
                    f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pc_name}": none of the supported fields are set'
                )
            raw = snap.get("ResourceClaim", claim_name, pod.namespace)
            if raw is None:
                if not snap.has("ResourceClaim"):
                    return self._missing(state, pod, "ResourceClaims")
                raise _ClaimError(f'could not find ResourceClaim "{pod.namespace}/{claim_name}"')
            meta = _d(raw.get("metadata"))
            if meta.get("deletionTimestamp"):
                raise _ClaimError(f'resourceclaim "{claim_name}" is being deleted')
            if must_check_owner:
                owner = next(
                    (r for r in map(_d, _l(meta.get("ownerReferences"))) if r.get("controller")), None
                )
                if owner is None or str(owner.get("uid") or "") != pod.uid:
                    raise _ClaimError(
                        f"ResourceClaim {pod.namespace}/{claim_name} was not created for pod {pod.namespace}/{pod.name} "
                        "(pod is not owner)"
                    )
            out.append(_Claim(pod.namespace, claim_name, raw))
        return out

    @staticmethod
    def _missing(state: CycleState | None, pod: Pod, what: str) -> None:
        if state is not None:
            add_note(
                state, f"not checked: the input has no {what}; the resource claims of {pod.key} were ignored"
            )
        return None

    @staticmethod
    def _from_template(pod: Pod, pc_name: str, tname: str, template: Obj, state: CycleState | None) -> _Claim:
        # The resourceclaim controller copies template.spec.spec into a new, unallocated claim owned by the pod.
        name = f"{pod.name}-{pc_name}"
        raw: Obj = {
            "metadata": {
                "name": name,
                "namespace": pod.namespace,
                "ownerReferences": [{"controller": True, "uid": pod.uid}],
            },
            "spec": _d(_d(template.get("spec")).get("spec")),
            "status": {},
        }
        if state is not None:
            add_note(
                state,
                f"resource claim {pc_name!r} of {pod.key} is not created yet: evaluated as the claim the resourceclaim "
                f"controller creates from ResourceClaimTemplate {tname!r}",
            )
        return _Claim(pod.namespace, name, raw, emulated_from=tname)

    # ------------------------------------------------------------ extension points

    def pre_enqueue(self, pod: Pod) -> Status:
        """PreEnqueue: every claim must exist (and not be deleting) before the pod is tried at all."""
        if not pod.resource_claims:
            return SUCCESS
        try:
            self._pod_claims(pod, None)
        except _ClaimError as e:
            return Status.unresolvable(str(e))
        return SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        # Written before anything else: PostFilter and Score read it even for pods without claims.
        s = _State()
        state.write(_KEY, s)
        idx = dra_index(self.snapshot)
        s.extended = _extended_requests(pod, idx.extended) if idx.extended else None
        if not pod.resource_claims and s.extended is None:
            return None, SKIP
        try:
            claims = self._pod_claims(pod, state) if pod.resource_claims else []
        except _ClaimError as e:
            return None, Status.unresolvable(str(e))
        if claims is None:
            if s.extended is None:
                return None, SKIP
            claims = []
        if not claims and s.extended is None:
            return None, SKIP
        s.available_on = [None] * len(claims)
        to_allocate: list[ClaimRequests] = []
        for i, c in enumerate(claims):
            alloc = c.allocation
            if alloc is not None:
                # CanBeReserved has no restriction on sharing in v1.34/v1.35, so "resourceclaim in use" cannot
                # happen; kept for parity with the upstream check order.
                ns = alloc.get("nodeSelector")
                if isinstance(ns, dict):
                    s.available_on[i] = parse_node_selector_terms(ns.get("nodeSelectorTerms"))
                continue
            s.to_allocate.append(i)
            for req in map(_d, _l(_d(_d(c.raw.get("spec")).get("devices")).get("requests"))):
                rname = str(req.get("name") or "")
                if isinstance(req.get("exactly"), dict):
                    st = self._validate_class(
                        str(req["exactly"].get("deviceClassName") or ""), rname, idx.classes
                    )
                elif req.get("firstAvailable"):
                    st = SUCCESS
                    for sub in map(_d, _l(req.get("firstAvailable"))):
                        q = f"{rname}/{sub.get('name') or ''}"
                        st = self._validate_class(str(sub.get("deviceClassName") or ""), q, idx.classes)
                        if not st.ok:
                            break
                elif req.get("deviceClassName"):
                    st = self._validate_class(str(req["deviceClassName"]), rname, idx.classes)
                else:
                    st = Status.unresolvable(f"resource claim {c.key}, request {rname}: unknown request type")
                if not st.ok:
                    if not self.snapshot.has("DeviceClass"):
                        add_note(
                            state,
                            "not checked: the input has no DeviceClasses: every device class reads as missing",
                        )
                    if not self.snapshot.has("ResourceSlice"):
                        add_note(state, _NO_SLICES)
                    return None, st
            to_allocate.append(parse_claim_requests(c.key, _d(c.raw.get("spec"))))
        if to_allocate:
            if not self.snapshot.has("ResourceSlice"):
                add_note(state, _NO_SLICES)
            if self.dialect.dra_device_taint_rules and not self.snapshot.has("DeviceTaintRule"):
                add_note(
                    state,
                    "not checked: missing DeviceTaintRules (not in the input, or not readable); devices count "
                    "as tainted only by their ResourceSlices",
                )
            s.allocator = Allocator(idx, to_allocate)
            s.allocator.timed_out = self._timed_out(state)
        s.user_claims = to_allocate
        s.claims = claims
        return None, SUCCESS

    def _timed_out(self, state: CycleState) -> bool:
        """DynamicResourcesArgs.filterTimeout (DRASchedulerFilterTimeout, beta/on from v1.34; 0 = none)."""
        if not self.dialect.dra_enabled:
            return False
        timeout = _duration_s(self.handle.args.get("filterTimeout", "10s"))
        if timeout <= 0:
            return False
        if timeout <= TIMEOUT_CERTAIN_S:
            return True
        if timeout < TIMEOUT_NOTE_BELOW_S:
            add_note(
                state,
                f"not checked: DynamicResources filterTimeout {self.handle.args.get('filterTimeout')}: whether the "
                "real allocator finishes that fast is not replayed (replayed as finishing in time)",
            )
        return False

    @staticmethod
    def _validate_class(class_name: str, request: str, classes: dict[str, Obj]) -> Status:
        if not class_name:
            return Status.error(f"request {request}: unsupported request type")
        if class_name not in classes:
            return Status.unresolvable(
                f"request {request}: device class {class_name} does not exist",
                details=({"deviceClass": class_name},),
            )
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s: _State | None = state.read(_KEY)
        if s is None:
            return Status.error(ERR_STATE_NOT_FOUND)
        if not s.claims and s.extended is None:
            return SUCCESS
        node = node_info.node
        allocator = s.allocator
        if s.extended is not None:
            # filterExtendedResources: what this node must provide through DRA (mapped, none in allocatable).
            alloc = node.allocatable
            needed: dict[str, int] = {}
            for r, q in sorted(s.extended.items()):
                if alloc.get(r, 0) == 0:
                    needed[r] = q
            if not needed and not s.claims:
                return SUCCESS
            if needed:
                idx = dra_index(self.snapshot)
                special = ClaimRequests(
                    f"{pod.namespace}/{SPECIAL_CLAIM_NAME}",
                    _extended_claim_requests(pod, needed, idx.extended),
                )
                allocator = Allocator(idx, [*s.user_claims, special])
                allocator.timed_out = self._timed_out(state)
        unavailable = [
            i
            for i, terms in enumerate(s.available_on)
            if terms is not None and not any(t.match(node) for t in terms)
        ]
        results: list[list[str]] | None = None
        if allocator is not None:
            try:
                results = allocator.allocate(node)
            except AllocationTimeout:
                if self.dialect.dra_filter_timeout_is_error:
                    # v1.36 (#137607): transient, so an Error (retried with backoff) naming the node.
                    return Status.error(f"node {node.name}: {ERR_TIMED_OUT}")
                return Status.unresolvable(ERR_TIMED_OUT)
            except AllocationError as e:
                return Status.error(str(e))
            except FailedOnNode as e:
                return Status.unresolvable(str(e))
            finally:
                _note_unsupported(state, allocator)
            if results is None:
                # The requests the node cannot cover, for the report (the message stays upstream's): computed
                # only when read, as the Filter runs for every node (and again in preemption).
                head = ({"claims": [s.claims[i].key for i in s.to_allocate]},)
                if allocator.explain_reads_unsupported():
                    # The explanation would read a selector beyond the CEL subset as not matching: computed
                    # now, so the note saying so is among the cycle's notes (collected when the cycle ends,
                    # before any report reads the details). Rare; the other pods keep the lazy path.
                    details = (*head, *allocator.explain(node))
                    _note_unsupported(state, allocator)
                    return Status.unresolvable(ERR_CANNOT_ALLOCATE, details=details)
                return Status.unresolvable(
                    ERR_CANNOT_ALLOCATE, details=LazyDetails(head, partial(allocator.explain, node))
                )
        if unavailable:
            s.unavailable.update(unavailable)
            return Status.unresolvable(
                ERR_NOT_AVAILABLE, details=({"claims": [s.claims[i].key for i in unavailable]},)
            )
        if results is not None:
            # The special claim's devices (last) are not among the pod's claims that Score walks.
            s.node_allocations[node_info.name] = results[: len(s.user_claims)]
        return SUCCESS

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Diagnosis, framework: Any) -> Status:
        s: _State | None = state.read(_KEY)
        if s is None:
            return Status.error(ERR_STATE_NOT_FOUND)
        if not s.claims and s.extended is None:
            # With a special claim for DRA-backed extended resources the claims are not empty upstream;
            # the in-memory special claim is never deallocated, so it ends in "still not schedulable".
            return self._quiet(POST_NO_CLAIMS)
        # Upstream picks one unavailable claim at random (map order); the lowest index is as good.
        for i in sorted(s.unavailable):
            c = s.claims[i]
            rf = c.reserved_for
            if not rf or (len(rf) == 1 and str(rf[0].get("uid") or "") == pod.uid):
                return Status.unschedulable(POST_DEALLOCATED, details=({"deallocate": c.key},))
        return self._quiet(POST_STILL_NOT_SCHEDULABLE)

    def _quiet(self, reason: str) -> Status:
        # v1.37 PostFilter returns a reasonless Unschedulable when it deallocated nothing.
        return (
            Status(Code.UNSCHEDULABLE)
            if self.dialect.dra_post_filter_without_reason
            else Status.unschedulable(reason)
        )

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        s: _State | None = state.read(_KEY)
        if s is None:
            return 0, Status.error(ERR_STATE_NOT_FOUND)
        if not s.claims:
            return 0, SUCCESS
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0, SUCCESS
        # computeScore walks *all* claims against the results of the claims that needed allocation, by
        # position (master's dynamicresources.go); mirrored as is, including its error when they differ.
        score = 0
        unallocated = 0
        for i, c in enumerate(s.claims):
            if self.dialect.dra_score_reads_allocated_claims:
                # v1.35.8+/v1.36: an allocated claim scores its own status.allocation; the others take the
                # Filter results in order.
                if c.allocation is not None:
                    refs = [
                        str(_d(r).get("request") or "")
                        for r in _l(_d(c.allocation.get("devices")).get("results"))
                    ]
                    score += _first_available_score(c, {ref for ref in refs if len(ref.split("/")) == 2})
                    continue
                if unallocated >= len(allocations):
                    msg = (
                        f"number of allocations {len(allocations)} is smaller than number of claims needing "
                        "allocation"
                    )
                    return 0, Status.error(msg)
                refs = allocations[unallocated]
                unallocated += 1
                score += _first_available_score(c, {ref for ref in refs if len(ref.split("/")) == 2})
                continue
            if i >= len(allocations):
                msg = f"number of allocations {len(allocations)} is smaller than number of claims"
                add_note(
                    state,
                    f"DynamicResources Score fails upstream for a mix of allocated and new claims: {msg}",
                )
                return 0, Status.error(msg)
            allocated_subs = {ref for ref in allocations[i] if len(ref.split("/")) == 2}
            for req in map(_d, _l(_d(_d(c.raw.get("spec")).get("devices")).get("requests"))):
                if isinstance(req.get("exactly"), dict):
                    continue
                for rank, sub in enumerate(map(_d, _l(req.get("firstAvailable")))):
                    if f"{req.get('name') or ''}/{sub.get('name') or ''}" in allocated_subs:
                        score += FIRST_AVAILABLE_MAX_SIZE - rank
        return score, SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        default_normalize_score(100, False, scores)
        return SUCCESS
