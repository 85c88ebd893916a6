"""Node pools: the group of identical nodes an autoscaler would add to, derived from well-known labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node

__all__ = ["POOL_LABELS", "pool_of"]

# Most specific first; the instance type is the last resort (it groups nodes, but not by autoscaling group).
POOL_LABELS: tuple[str, ...] = (
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "karpenter.sh/nodepool",
    "karpenter.sh/provisioner-name",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
)


def pool_of(node: Node) -> str | None:
    """The node's pool name, or None when no well-known label says."""
    labels = node.labels
    for key in POOL_LABELS:
        value = labels.get(key)
        if value:
            return value
    return None
