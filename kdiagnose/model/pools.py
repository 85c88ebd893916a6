"""Node pools: the group of identical nodes an autoscaler would add to, derived from well-known labels."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kdiagnose.model.objects import ModelError, Taint, parse_resource_list

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node

__all__ = ["POOL_LABELS", "PoolSpec", "load_pools", "parse_pools", "pool_label_of", "pool_of"]

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
    found = pool_label_of(node)
    return found[1] if found else None


def pool_label_of(node: Node) -> tuple[str, str] | None:
    """(label key, pool name) of the first well-known pool label the node carries."""
    labels = node.labels
    for key in POOL_LABELS:
        value = labels.get(key)
        if value:
            return key, value
    return None


# ---------------------------------------------------------------------------------------------- --pools FILE


@dataclass(slots=True)
class PoolSpec:
    """A node pool as the user describes it (`--pools FILE`): the template a scale-up would add.

    `allocatable` keeps the scheduler integers (cpu in millicores); min/max/current are None when unknown.
    """

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    allocatable: dict[str, int] = field(default_factory=dict)
    min: int | None = None
    max: int | None = None
    current: int | None = None


def _opt_int(raw: Any, where: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ValueError(f"{where}: expected an integer, got {raw!r}")
    return raw


def parse_pools(doc: Any, where: str = "pools") -> list[PoolSpec]:
    """Pool specs from a parsed document: a list of {name, labels, taints, allocatable, min, max, current}
    (or a mapping with a `pools` list)."""
    if isinstance(doc, dict) and isinstance(doc.get("pools"), list):
        doc = doc["pools"]
    if not isinstance(doc, list):
        raise ValueError(f"{where}: expected a list of pools")
    out: list[PoolSpec] = []
    for i, raw in enumerate(doc):
        at = f"{where}[{i}]"
        if not isinstance(raw, dict) or not raw.get("name"):
            raise ValueError(f"{at}: a pool needs a name")
        taints = []
        for t in raw.get("taints") or []:
            if not isinstance(t, dict) or not t.get("key") or not t.get("effect"):
                raise ValueError(f"{at}.taints: a taint needs key and effect")
            taints.append(Taint(str(t["key"]), str(t.get("value") or ""), str(t["effect"])))
        try:
            allocatable = parse_resource_list(raw.get("allocatable") or {}, f"{at}.allocatable")
        except ModelError as e:
            raise ValueError(str(e)) from None
        out.append(
            PoolSpec(
                name=str(raw["name"]),
                labels={str(k): "" if v is None else str(v) for k, v in (raw.get("labels") or {}).items()},
                taints=taints,
                allocatable=allocatable,
                min=_opt_int(raw.get("min"), f"{at}.min"),
                max=_opt_int(raw.get("max"), f"{at}.max"),
                current=_opt_int(raw.get("current"), f"{at}.current"),
            )
        )
    return out


def load_pools(path: str) -> list[PoolSpec]:
    """Read a `--pools FILE` (YAML or JSON)."""
    import yaml

    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    return parse_pools(doc, path)
