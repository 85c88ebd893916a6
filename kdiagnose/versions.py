"""Kubernetes release dialects: what changed in kube-scheduler between v1.31 and v1.37 (semantics §1), and
which release a replay uses when none is given."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_VERSION",
    "NEWEST_PATCH",
    "Dialect",
    "VersionError",
    "dialect_for",
    "dialect_for_server",
    "infer_from_kubelets",
]

# The newest patch of each supported minor that kdiagnose was checked against (a bare `v1.34` means it).
# v1.31-v1.33: the patches their golden corpora were recorded with; v1.34.12, v1.35.8, v1.36.5, v1.37.2:
# the newest the Go module proxy serves (k8s.io/kubernetes), read at those tags.
NEWEST_PATCH = {31: 8, 32: 2, 33: 3, 34: 12, 35: 8, 36: 5, 37: 2}
_OLDEST_MINOR = min(NEWEST_PATCH)
_NEWEST_MINOR = max(NEWEST_PATCH)
DEFAULT_VERSION = f"v1.{_NEWEST_MINOR}.{NEWEST_PATCH[_NEWEST_MINOR]}"


class VersionError(ValueError):
    """A --k8s-version that is not a Kubernetes release kdiagnose knows."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """Behaviour switches of one kube-scheduler release; every version difference is a field here."""

    version: tuple[int, int, int]
    # How this release was chosen (flag, server, the nodes' kubelets, default): for the report, never a switch.
    reason: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        return "v{}.{}.{}".format(*self.version)

    @property
    def minor(self) -> int:
        return self.version[1]

    @property
    def taint_reason_names_taint(self) -> bool:
        """<= v1.34.1 names the first untolerated taint; v1.34.2 (PR #135023) stopped leaking it."""
        return self.version < (1, 34, 2)

    @property
    def dra_enabled(self) -> bool:
        """DynamicResources is in the default profile (gate GA) from v1.34."""
        return self.minor >= 34

    @property
    def dra_scores(self) -> bool:
        """DynamicResources gained a Score extension (weight 2) in v1.35."""
        return self.minor >= 35

    @property
    def dra_skips_unusable_pools(self) -> bool:
        """v1.35's DRA allocator skips incomplete/invalid resource pools (v1.34: allocates from incomplete
        ones and aborts with an error on an invalid one) and judges completeness cluster-wide."""
        return self.minor >= 35

    @property
    def absent_nodes_counted(self) -> bool:
        """Nodes outside a PreFilterResult count as `didn't satisfy plugin(s)` from v1.32."""
        return self.minor >= 32

    @property
    def fit_uu_over_allocatable(self) -> bool:
        """A request above the node's whole allocatable is UnschedulableAndUnresolvable from v1.34."""
        return self.minor >= 34

    @property
    def balanced_skips_zero_request_pods(self) -> bool:
        """BalancedAllocation's PreScore skips pods that request nothing from v1.33."""
        return self.minor >= 33

    @property
    def pod_level_resources(self) -> bool:
        """PodLevelResources (spec.resources) is beta and on from v1.34."""
        return self.minor >= 34

    @property
    def inplace_resize(self) -> bool:
        """InPlacePodVerticalScaling is on (beta) from v1.33: running pods count max(spec, actuated, allocated)."""
        return self.minor >= 33

    @property
    def rwop_reason_new(self) -> bool:
        """The ReadWriteOncePod conflict wording changed in v1.34."""
        return self.minor >= 34

    @property
    def pv_affinity_reason_new(self) -> bool:
        """v1.33 renamed `had volume node affinity conflict` to `didn't match PersistentVolume's node affinity`."""
        return self.minor >= 33

    @property
    def volume_attributes_class(self) -> bool:
        """VolumeAttributesClass is GA (on) from v1.34; before, PVs with a class never match a claim."""
        return self.minor >= 34

    @property
    def csi_limits_v133(self) -> bool:
        """From v1.33 NodeVolumeLimits reads limits only from CSINode and also counts VolumeAttachments;
        before, Node allocatable `attachable-volumes-csi-<driver>` limits count too."""
        return self.minor >= 33

    @property
    def non_zero_sums_sidecars(self) -> bool:
        """NodeInfo's non-zero cpu/memory add sidecars to the containers' sum from v1.32 (PodInfo.CalculateResource);
        v1.31 (calculateResource) sums regular containers only and maxes the cumulative init steps."""
        return self.minor >= 32

    @property
    def balanced_scores_improvement(self) -> bool:
        """v1.36 (#135573): BalancedAllocation scores the balance with the pod against the balance without
        it (noderesources/balanced_allocation.go balancedResourceScorer); before, with the pod only."""
        return self.minor >= 36

    @property
    def node_declared_features(self) -> bool:
        """NodeDeclaredFeatures (gate beta/on from v1.36, GA v1.37) is in the default profile, appended
        after DefaultBinder (apis/config/v1/default_plugins.go applyFeatureGates)."""
        return self.minor >= 36

    @property
    def ndf_infers_bind_mount_options(self) -> bool:
        """component-helpers v0.37's registry adds VolumeBindMountOptions (inferred from
        volumeMounts[].bindMountOptions) and three update-only or never-inferred features."""
        return self.minor >= 37

    @property
    def volume_bind_mount_options(self) -> bool:
        """VolumeBindMountOptions is alpha (off) in v1.37, the first release with volumeMounts[].bindMountOptions:
        the API server drops the field (pkg/api/pod/util.go dropDisabledFields), so NodeDeclaredFeatures never
        infers VolumeBindMountOptions on a default cluster. Observed from the real v1.37.2 kube-scheduler
        (fixtures/golden-v137/features/ndf-restart-all-containers)."""
        return False

    @property
    def node_name_before_unschedulable(self) -> bool:
        """v1.37's default plugins list NodeName before NodeUnschedulable (v1.36 and older: after)."""
        return self.minor >= 37

    @property
    def dra_post_filter_without_reason(self) -> bool:
        """v1.37 DynamicResources PostFilter (dynamicresources.go, deallocateOrDeletePodClaims) returns a bare
        Unschedulable when the pod has no claims or none can be deallocated: `no new claims to deallocate, `
        and `still not schedulable, ` no longer precede `preemption: ...` (v1.36: they do). Observed from the
        real v1.37.2 kube-scheduler in tests/e2e."""
        return self.minor >= 37

    @property
    def victim_start_time_stamped(self) -> bool:
        """v1.37 sorts preemption victims with MoreImportantVictim on Victims whose start time was read once
        at creation (a missing startTime is time.Now() then, in the node's pod order); v1.36 and older sort
        pods with MoreImportantPod, which calls time.Now() for each pod at every comparison."""
        return self.minor >= 37

    @property
    def preemption_success_message(self) -> bool:
        """v1.37 (#140180): a preemption that found a node says so (`preemption: found a potential placement
        for pod on node N, preempting K victims`) at the end of the message; before, nothing was added."""
        return self.minor >= 37

    @property
    def preemption_skips_terminating_victims(self) -> bool:
        """A victim already terminating (deletionTimestamp set) gets no delete call and no `Preempted` event,
        though it is counted as a victim: v1.34.0-v1.34.1 (#133213, preemption.go prepareCandidate(Async)),
        reverted in v1.34.2 (#134247, cherry-pick of #134245), back from v1.35 (#134927). Observed with the
        real v1.34.1 and v1.34.12 schedulers (fixtures/fuzz-found/v1341-, v134-preemption-terminating-victim)."""
        return self.minor >= 35 or (self.minor == 34 and self.version < (1, 34, 2))

    @property
    def image_locality_image_volumes(self) -> bool:
        """v1.36 ImageLocality (#130231) sums the sizes of the pod's image volumes found on the node."""
        return self.minor >= 36

    @property
    def image_locality_counts_image_volumes(self) -> bool:
        """v1.37 also counts image volumes in the score's maximum threshold (#138951); v1.36 counted only
        containers, so an image volume could push the score above what the same container image gets."""
        return self.minor >= 37

    @property
    def csi_driver_must_be_installed(self) -> bool:
        """VolumeLimitScaling (beta/on in v1.37): NodeVolumeLimits rejects a node whose CSINode lacks the
        driver of a new volume when its CSIDriver sets spec.preventPodSchedulingIfMissing (csi.go)."""
        return self.minor >= 37

    @property
    def storage_capacity_scoring(self) -> bool:
        """StorageCapacityScoring (beta/on in v1.37): VolumeBinding gets a scorer (default shape 0% -> 10,
        100% -> 0) and scores every pod; before, its PreScore skipped (volumebinding/volume_binding.go)."""
        return self.minor >= 37

    @property
    def dra_device_taints(self) -> bool:
        """DRADeviceTaints (beta/on from v1.36): a ResourceSlice device's NoSchedule/NoExecute taints keep
        it from requests that do not tolerate them (structured allocator taintPreventsAllocation)."""
        return self.minor >= 36

    @property
    def dra_device_binding_conditions(self) -> bool:
        """DRADeviceBindingConditions (beta/on from v1.36): devices with bindingConditions are allocatable
        (isSelectable); before, the allocator skips them."""
        return self.minor >= 36

    @property
    def dra_device_taint_rules(self) -> bool:
        """DRADeviceTaintRules (GA, on in v1.37; beta/off in v1.36): DeviceTaintRule objects add their
        taint to the devices their deviceSelector matches (a rule without a selector matches none)."""
        return self.minor >= 37

    @property
    def dra_partitionable_devices(self) -> bool:
        """DRAPartitionableDevices (beta/on from v1.36): ResourceSlices with sharedCounters and devices with
        consumesCounters or per-device node selection are used; a device takes its counters from the pool's
        counter sets (structured allocator checkAvailableCounters); before, such slices are skipped."""
        return self.minor >= 36

    @property
    def dra_cel_allow_multiple_allocations(self) -> bool:
        """The DRA CEL `device` type has `allowMultipleAllocations` from v1.34 (dynamic-resource-allocation
        cel/compile.go fieldsV134ConsumableCapacity; the scheduler compiles stored expressions, whose
        environment declares it whatever DRAConsumableCapacity says); before, selecting it is the compile
        error `undefined field 'allowMultipleAllocations'`."""
        return self.minor >= 34

    @property
    def dra_distinct_attribute_without_gate(self) -> bool:
        """v1.34's scheduler runs the experimental structured allocator (DRAResourceClaimDeviceStatus is on and
        neither the stable nor the incubating one supports it: dynamic-resource-allocation structured/
        allocator.go NewAllocator), which honours a distinctAttribute constraint whatever DRAConsumableCapacity
        says (experimental/allocator_experimental.go); the claim keeps it (see below). Recorded by the
        v1.34.12 harness (features/dra-distinct-attribute)."""
        return self.minor == 34

    @property
    def dra_strategy_drops_distinct_attribute(self) -> bool:
        """With DRAConsumableCapacity off, the API server drops a claim's `distinctAttribute` constraints from
        v1.35 (pkg/api/resourceclaimspec DropDisabledFields); v1.34's strategy
        (resourceclaim/strategy.go dropDisabledDRAResourceClaimConsumableCapacityFields) clears a copy of each
        constraint in its range loop and so keeps them."""
        return self.minor >= 35

    @property
    def dra_consumable_capacity(self) -> bool:
        """DRAConsumableCapacity (beta/on from v1.36): devices with allowMultipleAllocations are shared by
        several claims, each consuming part of the device's capacity (capacity requests, requestPolicy);
        allocated results with a shareID are shares, not exclusive allocations (consumable_capacity.go)."""
        return self.minor >= 36

    @property
    def dra_sorted_pools(self) -> bool:
        """v1.36 (#136641): the allocator tries pools sorted by driver then pool name, each pool's slices by
        name, and pools with binding conditions last (pools_incubating.go GatherPools/buildPool); before,
        the informer's order."""
        return self.minor >= 36

    @property
    def dra_counter_slices_follow_node(self) -> bool:
        """v1.37: a slice with sharedCounters belongs to a node's pools only when its node selection matches
        (otherwise it joins through the pool's other slices); v1.36 includes such slices for every node."""
        return self.minor >= 37

    @property
    def dra_capacity_errors_abort(self) -> bool:
        """v1.37 consumable capacity: a request that cannot be represented (or a negative capacity) aborts the
        allocation with an error, and a requested capacity the device does not define only skips the device;
        v1.36 skips the device on every capacity error."""
        return self.minor >= 37

    @property
    def dra_fractional_capacity_range(self) -> bool:
        """DRAFractionalCapacityRange (beta/on in v1.37): capacity ranges are rounded in milli-units."""
        return self.minor >= 37

    @property
    def dra_shares_mark_capacity_in_use(self) -> bool:
        """v1.37 deviceCapacityInUse also counts allocated shares without consumed capacity (so a further
        share does not charge the device's counters again); v1.36 looks at consumed capacity only."""
        return self.minor >= 37

    @property
    def dra_distinct_attribute_per_device(self) -> bool:
        """v1.37 distinctAttributeConstraint keeps every allocated device's value (a stack); v1.36 keeps one
        per request name, so a request's second device replaces its first one's value (constraint.go).
        Found by a differential DRA fuzz campaign against the real v1.36.5 and v1.37.2 schedulers."""
        return self.minor >= 37

    @property
    def dra_all_devices_static_capacity(self) -> bool:
        """v1.37: an `allocationMode: All` request lists every matching device whose static capacity fits
        (a shared device whose remaining capacity does not fit makes the request fail); v1.36 leaves out the
        devices whose allocated shares leave too little (allocator_incubating.go validateDeviceRequest)."""
        return self.minor >= 37

    @property
    def dra_filter_timeout_is_error(self) -> bool:
        """v1.36 (#137607): a DRA Filter timeout is an Error (`node N: timed out trying to allocate devices`),
        which aborts the attempt; before, the node was UnschedulableAndUnresolvable with `timed out trying to
        allocate devices`."""
        return self.minor >= 36

    @property
    def dra_extended_resources(self) -> bool:
        """DRAExtendedResource (beta/on from v1.36): an extended resource a DeviceClass maps
        (spec.extendedResourceName, or deviceclass.resource.kubernetes.io/<class>) on a node without it in
        allocatable is left by NodeResourcesFit to DynamicResources, which allocates devices for it."""
        return self.minor >= 36

    @property
    def dra_score_reads_allocated_claims(self) -> bool:
        """DynamicResources' computeScore takes an already allocated claim's own allocation (v1.36, and a
        v1.35 patch after v1.35.4: v1.35.8 has it); v1.35.4 matched all claims by position against the
        new allocations and failed (Error) for a mix of allocated and new claims."""
        return self.version >= (1, 35, 8)

    @property
    def sidecar_host_ports(self) -> bool:
        """Restartable init (sidecar) containers' hostPorts count, wanted and used, from v1.34
        (scheduler/util GetHostPorts); v1.33 and older read spec.containers only."""
        return self.minor >= 34


_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")
_SUPPORTED = f"v1.{_OLDEST_MINOR}-v1.{_NEWEST_MINOR}"


def _parse(text: str) -> tuple[int, int, int | None]:
    m = _VERSION_RE.match(text)
    if not m:
        raise VersionError(f"invalid Kubernetes version {text!r} (expected e.g. {DEFAULT_VERSION})")
    return int(m.group(1)), int(m.group(2)), None if m.group(3) is None else int(m.group(3))


def _release(minor: int, patch: int | None, reason: str) -> Dialect:
    # A bare minor is the newest patch kdiagnose knows; a later patch than that is taken as given (its
    # patch-gated behaviour is that of the newest known one, as every patch property compares `>=`).
    return Dialect((1, minor, NEWEST_PATCH[minor] if patch is None else patch), reason)


def dialect_for(version: str | None, reason: str = "") -> Dialect:
    """Parse `v1.34`, `1.35.4`, `v1.33.3-eks-1234` into a Dialect; a bare minor means the newest patch in
    NEWEST_PATCH; None means the newest supported release. A release outside v1.31-v1.37 is refused."""
    if version is None:
        return _release(_NEWEST_MINOR, None, reason or "the newest release kdiagnose knows")
    text = version.strip()
    major, minor, patch = _parse(text)
    if major != 1 or minor > _NEWEST_MINOR:
        raise VersionError(
            f"unsupported Kubernetes version {text!r}: kdiagnose knows {_SUPPORTED} (newest {DEFAULT_VERSION})"
        )
    if minor < _OLDEST_MINOR:
        raise VersionError(
            f"Kubernetes {text} is older than v1.{_OLDEST_MINOR}, the oldest release kdiagnose replays "
            f"(it knows {_SUPPORTED})"
        )
    return _release(minor, patch, reason or f"--k8s-version {text}")


def dialect_for_server(git_version: str) -> tuple[Dialect, list[str]]:
    """The release a live server runs (its /version gitVersion), exactly; a newer minor than kdiagnose knows
    replays as the newest with a warning, one older than v1.31 is refused (VersionError)."""
    text = (git_version or "").strip()
    try:
        major, minor, patch = _parse(text)
    except VersionError:
        d = dialect_for(None, "server version unknown: the newest release kdiagnose knows")
        return d, [f"server version {text!r} not understood: replaying as {d.name} (use --k8s-version)"]
    if major == 1 and _OLDEST_MINOR <= minor <= _NEWEST_MINOR:
        return _release(minor, patch, f"the server's version {text}"), []
    if (major, minor) > (1, _NEWEST_MINOR):
        d = dialect_for(None, f"the server runs {text}, newer than kdiagnose knows")
        return d, [
            f"server {text} is newer than {d.name}, the newest release kdiagnose knows: replaying as {d.name} "
            "(messages and scores of newer plugins may differ)"
        ]
    raise VersionError(
        f"the server runs Kubernetes {text}, older than v1.{_OLDEST_MINOR}, the oldest release kdiagnose "
        f"replays; pass --k8s-version to replay it as a release of {_SUPPORTED}"
    )


def kubelet_version(obj: Any) -> str:
    """status.nodeInfo.kubeletVersion of a raw Node, or ''."""
    status = obj.get("status") if isinstance(obj, dict) else None
    info = status.get("nodeInfo") if isinstance(status, dict) else None
    value = info.get("kubeletVersion") if isinstance(info, dict) else None
    return value.strip() if isinstance(value, str) else ""


def infer_from_kubelets(nodes: Iterable[tuple[str, str]]) -> tuple[Dialect, list[str]]:
    """The release to replay a dump with, from its nodes' (name, kubeletVersion).

    The version skew policy keeps kubelets at or below the control plane's minor, so the highest kubelet
    minor bounds the control plane from below: that minor's newest known patch is the closest release the
    dump proves possible. Without a readable kubelet version: the newest supported release."""
    best: tuple[int, int, str, str] | None = None
    for name, version in nodes:
        try:
            major, minor, patch = _parse(version)
        except VersionError:
            continue
        if major != 1:
            continue
        key = (minor, patch or 0, name, version)
        # The highest minor (then patch); among equals the lowest node name, so the note is order-independent.
        if best is None or key[:2] > best[:2] or (key[:2] == best[:2] and name < best[2]):
            best = key
    if best is None:
        return dialect_for(None, "the newest release kdiagnose knows (no node reports a kubelet version)"), []
    minor, _, name, version = best
    why = f"node {name} runs kubelet {version}, and the control plane is never older than its kubelets"
    if minor > _NEWEST_MINOR:
        d = dialect_for(None, f"the newest release kdiagnose knows ({why})")
        return d, [
            f"node {name} runs kubelet {version}, newer than {d.name}, the newest release kdiagnose knows: "
            f"replaying as {d.name} (use --k8s-version)"
        ]
    if minor < _OLDEST_MINOR:
        d = _release(_OLDEST_MINOR, None, f"the oldest release kdiagnose knows ({why})")
        return d, [
            f"node {name} runs kubelet {version}, older than v1.{_OLDEST_MINOR}: replaying as {d.name}, the "
            "oldest release kdiagnose knows; the control plane may be older (use --k8s-version)"
        ]
    return _release(minor, None, f"inferred from the nodes: {why}"), []
