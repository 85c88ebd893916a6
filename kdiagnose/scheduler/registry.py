"""Plugin name -> implementation (pkg/scheduler/framework/plugins/registry.go); modules load on first use."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kdiagnose.scheduler import names as n

if TYPE_CHECKING:
    from kdiagnose.scheduler.framework import Plugin

__all__ = ["IN_TREE", "plugin_class"]

_P = "kdiagnose.scheduler.plugins."
# Module paths follow upstream's folder/file names.
IN_TREE: dict[str, str] = {
    n.SCHEDULING_GATES: _P + "schedulinggates.scheduling_gates:SchedulingGates",
    n.NODE_UNSCHEDULABLE: _P + "nodeunschedulable.node_unschedulable:NodeUnschedulable",
    n.NODE_NAME: _P + "nodename.node_name:NodeName",
    n.TAINT_TOLERATION: _P + "tainttoleration.taint_toleration:TaintToleration",
    n.NODE_AFFINITY: _P + "nodeaffinity.node_affinity:NodeAffinity",
    n.NODE_PORTS: _P + "nodeports.node_ports:NodePorts",
    n.NODE_RESOURCES_FIT: _P + "noderesources.fit:Fit",
    n.NODE_RESOURCES_BALANCED_ALLOCATION: _P + "noderesources.balanced_allocation:BalancedAllocation",
    n.VOLUME_RESTRICTIONS: _P + "volumerestrictions.volume_restrictions:VolumeRestrictions",
    n.NODE_VOLUME_LIMITS: _P + "nodevolumelimits.csi:CSILimits",
    n.VOLUME_BINDING: _P + "volumebinding.volume_binding:VolumeBinding",
    n.VOLUME_ZONE: _P + "volumezone.volume_zone:VolumeZone",
    n.POD_TOPOLOGY_SPREAD: _P + "podtopologyspread.plugin:PodTopologySpread",
    n.INTER_POD_AFFINITY: _P + "interpodaffinity.plugin:InterPodAffinity",
    n.DYNAMIC_RESOURCES: _P + "dynamicresources.dynamicresources:DynamicResources",
    n.NODE_DECLARED_FEATURES: _P + "nodedeclaredfeatures.nodedeclaredfeatures:NodeDeclaredFeatures",
    n.IMAGE_LOCALITY: _P + "imagelocality.image_locality:ImageLocality",
    n.DEFAULT_PREEMPTION: _P + "defaultpreemption.default_preemption:DefaultPreemption",
    n.PRIORITY_SORT: "",
    n.DEFAULT_BINDER: "",
}


def plugin_class(name: str) -> type[Plugin] | None:
    """The class for an in-tree plugin, or None for names kube-scheduler does not know (out-of-tree)."""
    target = IN_TREE.get(name)
    if not target:
        return None
    hit = _CLASSES.get(target)
    if hit is not None:
        return hit
    module, _, cls = target.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith(_P):
            return None  # not implemented yet: reported by the golden test as a mismatch, not hidden
        raise
    klass: type[Plugin] = getattr(mod, cls)
    _CLASSES[target] = klass
    return klass


# target -> class: every what-if replay instantiates a Framework (17 plugins); import_module per plugin per
# replay cost ~0.3 ms per Framework.
_CLASSES: dict[str, type[Plugin]] = {}
