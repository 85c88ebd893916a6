"""NodeDeclaredFeatures: a pod that needs a node feature only fits nodes whose status.declaredFeatures
list it (plugins/nodedeclaredfeatures/nodedeclaredfeatures.go, in the default profile from v1.36).

What a pod needs is inferred from its spec by component-helpers' nodedeclaredfeatures registry at the
release (features/registry.go AllFeatures, InferForScheduling of each); the features inferred only on pod
updates (in-place resize, ...) never apply to scheduling. Node names unknown to the registry are ignored
(Framework.TryMap), so only registered names can satisfy a requirement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.scheduler import names
from kdiagnose.scheduler.framework import SKIP, SUCCESS, CycleState, Plugin, PreFilterResult, Status

if TYPE_CHECKING:
    from kdiagnose.model.objects import Pod
    from kdiagnose.model.snapshot import NodeInfo
    from kdiagnose.versions import Dialect

__all__ = [
    "ERR_REASON_UNSATISFIED_REQUIREMENTS",
    "NodeDeclaredFeatures",
    "infer_for_scheduling",
    "registered_features",
]

# errReasonUnsatisfiedRequirements, the same text in v1.36 and v1.37.
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"

# features/registry.go AllFeatures by release: v0.36 (v1.36) and v0.37 (v1.37, which adds
# InPlacePodVerticalScalingMemoryBackedVolumes, DRANodeAllocatableResources, VolumeBindMountOptions and
# DRAOptionalNodeOperations).
_REGISTRY_V136 = frozenset(
    {
        RESTART_ALL_CONTAINERS,
        "PodLevelResourcesResize",
        "ExtendWebSocketsToKubelet",
        "NonSidecarInitContainerResize",
        USER_NAMESPACES_HOST_NETWORK,
    }
)
_REGISTRY_V137 = _REGISTRY_V136 | {
    "InPlacePodVerticalScalingMemoryBackedVolumes",
    "DRANodeAllocatableResources",
    VOLUME_BIND_MOUNT_OPTIONS,
    "DRAOptionalNodeOperations",
}

_PRE_FILTER_KEY = "PreFilter" + names.NODE_DECLARED_FEATURES


def registered_features(dialect: Dialect) -> frozenset[str]:
    """The feature names the release's registry knows (a node's other declared names are dropped)."""
    return _REGISTRY_V137 if dialect.ndf_infers_bind_mount_options else _REGISTRY_V136


def infer_for_scheduling(pod: Pod, dialect: Dialect) -> frozenset[str]:
    """Framework.InferForPodScheduling: the features the pod's spec requires of its node."""
    out: set[str] = set()
    containers = [*pod.containers, *pod.init_containers]
    # restartallcontainers: a restartPolicyRules action RestartAllContainers on any (init) container.
    if any(c.restart_all_containers for c in containers):
        out.add(RESTART_ALL_CONTAINERS)
    # usernamespaceshostnetwork: hostNetwork with hostUsers explicitly false.
    if pod.host_network and pod.host_users is False:
        out.add(USER_NAMESPACES_HOST_NETWORK)
    # volumebindmountoptions (v1.37 registry): any (init) container volumeMount with bindMountOptions.
    if dialect.ndf_infers_bind_mount_options and any(c.bind_mount_options for c in containers):
        out.add(VOLUME_BIND_MOUNT_OPTIONS)
    return frozenset(out)


class NodeDeclaredFeatures(Plugin):
    name = names.NODE_DECLARED_FEATURES

    def pre_filter(self, state: CycleState, pod: Pod) -> tuple[PreFilterResult | None, Status]:
        reqs = infer_for_scheduling(pod, self.dialect)
        if not reqs:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, reqs)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        reqs: frozenset[str] | None = state.read(_PRE_FILTER_KEY)
        if not reqs:
            return SUCCESS
        declared = node_info.node.declared_features & registered_features(self.dialect)
        missing = reqs - declared
        if not missing:
            return SUCCESS
        return Status.unresolvable(
            ERR_REASON_UNSATISFIED_REQUIREMENTS, details=({"missing_features": sorted(missing)},)
        )
