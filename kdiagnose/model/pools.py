"""Node pools: the group of identical nodes an autoscaler would add to, derived from well-known labels."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kdiagnose.model.objects import ModelError, Taint, parse_resource_list
from kdiagnose.model.quantity import format_quantity

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "POOL_LABELS",
    "NodePool",
    "PoolSpec",
    "detect_pools",
    "load_pools",
    "parse_pools",
    "pool_label_of",
    "pool_of",
    "pool_taints",
    "zone_of",
]

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

    from kdiagnose.errors import InputError

    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read pools file: {e.strerror or e}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: invalid pools file: {' '.join(str(e).split())}") from None
    return parse_pools(doc, path)


# ---------------------------------------------------------------------------------------------- detection

# Labels that differ between members of one pool: they never distinguish pools.
PER_NODE_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/zone",
        "topology.ebs.csi.aws.com/zone",
        "topology.gke.io/zone",
        "topology.disk.csi.azure.com/zone",
        "node.kubernetes.io/instance-id",
        "kubernetes.azure.com/node-image-version",
        "k8s.io/cloud-provider-aws",
    }
)
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
_STATE_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
_STATE_TAINTS = frozenset(
    {"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler", "karpenter.sh/disrupted"}
)


def pool_taints(node: Node) -> list[Taint]:
    """The node's taints minus those of its state (NotReady, cordoned, being deleted or consolidated)."""
    return [
        t for t in node.taints if t.key not in _STATE_TAINTS and not t.key.startswith(_STATE_TAINT_PREFIXES)
    ]


def zone_of(node: Node) -> str:
    for key in ZONE_LABELS:
        if key in node.labels:
            return node.labels[key]
    return ""


@dataclass(slots=True)
class NodePool:
    """A group of nodes an autoscaler would add to: `source` is the pool label's key, "shape" for nodes
    grouped by identical labels/taints/allocatable, or "file" for a `--pools` entry."""

    name: str
    source: str
    members: list[NodeInfo] = field(default_factory=list)
    spec: PoolSpec | None = None

    @property
    def control_plane(self) -> bool:
        return any(k in ni.node.labels for ni in self.members for k in CONTROL_PLANE_LABELS)


def _shape(node: Node) -> tuple[frozenset[tuple[str, str]], tuple[str, ...], tuple[tuple[str, int], ...]]:
    labels = frozenset((k, v) for k, v in node.labels.items() if k not in PER_NODE_LABELS)
    return labels, tuple(sorted(str(t) for t in pool_taints(node))), tuple(sorted(node.allocatable.items()))


def _shape_names(
    shapes: list[tuple[frozenset[tuple[str, str]], tuple[str, ...], tuple[tuple[str, int], ...]]],
) -> list[str]:
    """Name each shape by the labels not every shape shares, then its taints, then its allocatable."""
    common = frozenset.intersection(*(s[0] for s in shapes)) if shapes else frozenset()

    def label_text(pairs: frozenset[tuple[str, str]]) -> str:
        return ",".join(f"{k}={v}" if v else k for k, v in sorted(pairs - common))

    names = [label_text(s[0]) for s in shapes]
    for extra in (1, 2):
        seen: dict[str, int] = {}
        for n in names:
            seen[n] = seen.get(n, 0) + 1
        for i, s in enumerate(shapes):
            if seen[names[i]] > 1 or not names[i]:
                if extra == 1 and s[1]:
                    names[i] = ",".join(x for x in (names[i], *s[1]) if x)
                elif extra == 2 and names[i]:
                    alloc = ",".join(_alloc_text(k, v) for k, v in s[2] if k in ("cpu", "memory"))
                    names[i] = ",".join(x for x in (names[i], alloc) if x)
    seen2: dict[str, int] = {}
    out = []
    for i, n in enumerate(names):
        if not n:
            n = "nodes" + (
                ""
                if len(shapes) == 1
                else "," + ",".join(_alloc_text(k, v) for k, v in shapes[i][2] if k in ("cpu", "memory"))
            )
        seen2[n] = seen2.get(n, 0) + 1
        out.append(n if seen2[n] == 1 else f"{n}#{seen2[n]}")
    return out


def _alloc_text(resource: str, amount: int) -> str:
    if resource == "memory":
        return f"memory={amount / 2**30:.3g}Gi"
    return f"{resource}={format_quantity(resource, amount)}"


def _matches_spec(node: Node, spec: PoolSpec) -> bool:
    if pool_of(node) == spec.name:
        return True
    labels = {k: v for k, v in spec.labels.items() if k not in PER_NODE_LABELS}
    return bool(labels) and all(node.labels.get(k) == v for k, v in labels.items())


def detect_pools(node_infos: list[NodeInfo], specs: list[PoolSpec] | None = None) -> list[NodePool]:
    """File pools first (with the nodes that belong to them), then pools by well-known label, then the
    remaining nodes grouped by shape; each pool's members keep snapshot order."""
    pools: list[NodePool] = []
    taken: set[str] = set()
    for spec in specs or []:
        members = [ni for ni in node_infos if ni.name not in taken and _matches_spec(ni.node, spec)]
        taken.update(ni.name for ni in members)
        pools.append(NodePool(spec.name, "file", members, spec))
    by_label: dict[str, NodePool] = {}
    by_shape: dict[Any, list[NodeInfo]] = {}
    for ni in node_infos:
        if ni.name in taken:
            continue
        found = pool_label_of(ni.node)
        if found is not None:
            pool = by_label.get(found[1])
            if pool is None:
                pool = by_label[found[1]] = NodePool(found[1], found[0])
            pool.members.append(ni)
        else:
            by_shape.setdefault(_shape(ni.node), []).append(ni)
    pools.extend(by_label.values())
    shapes = list(by_shape)
    for name, shape in zip(_shape_names(shapes), shapes, strict=True):
        pools.append(NodePool(name, "shape", by_shape[shape]))
    return pools
