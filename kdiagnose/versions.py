"""Kubernetes release dialects: what changed in kube-scheduler between v1.31 and v1.35 (semantics §1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_VERSION", "Dialect", "VersionError", "dialect_for"]

DEFAULT_VERSION = "v1.34.1"
_SUPPORTED_MINORS = (31, 32, 33, 34, 35)
_CORPUS_PATCH = {31: 8, 32: 2, 33: 3, 34: 1, 35: 4}


class VersionError(ValueError):
    """A --k8s-version that is not a Kubernetes release kdiagnose knows."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """Behaviour switches of one kube-scheduler release; every version difference is a field here."""

    version: tuple[int, int, int]

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
    def sidecar_host_ports(self) -> bool:
        """Restartable init (sidecar) containers' hostPorts count, wanted and used, from v1.34
        (scheduler/util GetHostPorts); v1.33 and older read spec.containers only."""
        return self.minor >= 34


_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")


def dialect_for(version: str | None) -> Dialect:
    """Parse `v1.34`, `1.35.4`, `v1.33.3-eks-1234` into a Dialect; a bare minor means the patch the golden
    corpus was recorded with (v1.31.8, v1.32.2, v1.33.3, v1.34.1, v1.35.4)."""
    text = (version or DEFAULT_VERSION).strip()
    m = _VERSION_RE.match(text)
    if not m:
        raise VersionError(f"invalid Kubernetes version {text!r} (expected e.g. v1.34.1)")
    major, minor = int(m.group(1)), int(m.group(2))
    if major != 1 or minor not in _SUPPORTED_MINORS:
        raise VersionError(
            f"unsupported Kubernetes version {text!r}: kdiagnose knows v1.{_SUPPORTED_MINORS[0]}-v1.{_SUPPORTED_MINORS[-1]}"
        )
    if m.group(3) is not None:
        patch = int(m.group(3))
    else:
        # Only v1.34 has patch-gated behaviour (the taint wording changed in v1.34.2); v1.34 alone means the
        # corpus' v1.34.1 so wording matches out of the box, and every minor names a real release.
        patch = _CORPUS_PATCH[minor]
    return Dialect((major, minor, patch))
