"""Node pools: the group of identical nodes an autoscaler would add to, derived from well-known labels."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kdiagnose.errors import InputError
from kdiagnose.model.objects import ModelError, Taint, parse_resource_list

if TYPE_CHECKING:
    from kdiagnose.model.objects import Node
    from kdiagnose.model.snapshot import NodeInfo

__all__ = [
    "POOL_LABELS",
    "NodePool",
    "PoolError",
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


class PoolError(InputError, ValueError):
    """An invalid `--pools` file: one error line naming the pool and field (exit 3)."""


def _opt_int(raw: Any, where: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise PoolError(f"{where}: expected an integer, got {raw!r}")
    return raw


def parse_pools(doc: Any, where: str = "pools") -> list[PoolSpec]:
    """Pool specs from a parsed document: a list of {name, labels, taints, allocatable, min, max, current}
    (or a mapping with a `pools` list)."""
    if isinstance(doc, dict) and isinstance(doc.get("pools"), list):
        doc = doc["pools"]
    if not isinstance(doc, list):
        raise PoolError(f"{where}: expected a list of pools")
    out: list[PoolSpec] = []
    for i, raw in enumerate(doc):
        at = f"{where}[{i}]"
        if not isinstance(raw, dict) or not raw.get("name") or not isinstance(raw["name"], str):
            raise PoolError(f"{at}: a pool needs a name (a string)")
        if not isinstance(raw.get("labels") or {}, dict) or not isinstance(
            raw.get("allocatable") or {}, dict
        ):
            raise PoolError(f"{at}: labels and allocatable must be mappings")
        if any(isinstance(v, list | dict) for v in (raw.get("labels") or {}).values()):
            raise PoolError(f"{at}.labels: values must be strings")
        if not isinstance(raw.get("taints") or [], list):
            raise PoolError(f"{at}.taints: must be a list")
        taints = []
        for t in raw.get("taints") or []:
            if not isinstance(t, dict) or not t.get("key") or not t.get("effect"):
                raise PoolError(f"{at}.taints: a taint needs key and effect")
            if not all(isinstance(t.get(k), str | None) for k in ("key", "value", "effect")):
                raise PoolError(f"{at}.taints: key, value and effect must be strings")
            taints.append(Taint(str(t["key"]), str(t.get("value") or ""), str(t["effect"])))
        try:
            allocatable = parse_resource_list(raw.get("allocatable") or {}, f"{at}.allocatable")
        except ModelError as e:
            raise PoolError(str(e)) from None
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
    from kdiagnose.errors import InputError
    from kdiagnose.load.limits import load_small_yaml

    try:
        doc = load_small_yaml(path, "pools file")  # within the input limits (depth, aliases, numbers, size)
    except InputError as e:
        msg = str(e).removeprefix(f"{path}: ")
        if msg.startswith("cannot read"):
            raise InputError(f"{path}: cannot read pools file{msg.removeprefix('cannot read')}") from None
        raise InputError(f"{path}: invalid pools file: {msg}") from None
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
    grouped by identical labels/taints/allocatable, or "file" for a `--pools` entry. `selector` is a label
    selector that lists exactly the members among the shape groups ("" when labels cannot tell them apart)."""

    name: str
    source: str
    members: list[NodeInfo] = field(default_factory=list)
    spec: PoolSpec | None = None
    selector: str = ""
    # What remedies derive from the members alone (scale_pool's representatives), computed once per pool
    # object; pools are detected once per snapshot, so this is per snapshot too.
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def control_plane(self) -> bool:
        # Asked once per pending pod's scale-up: the members' labels and taints are read once per pool.
        hit: bool | None = self.memo.get("control-plane")
        if hit is None:
            hit = self.memo["control-plane"] = any(_is_control_plane_node(ni.node) for ni in self.members)
        return hit


Shape = tuple[frozenset[tuple[str, str]], tuple[str, ...], tuple[tuple[str, int], ...]]

# Labels that say nothing about which group a node belongs to (set on every control-plane node by kubeadm).
_NOISE_LABELS = frozenset({"node.kubernetes.io/exclude-from-external-load-balancers", *CONTROL_PLANE_LABELS})


def _is_control_plane_node(node: Node) -> bool:
    return any(k in node.labels for k in CONTROL_PLANE_LABELS) or any(
        t.key in CONTROL_PLANE_LABELS for t in node.taints
    )


def _shape(node: Node) -> Shape:
    # A label whose value is the node's own name (topology.topolvm.io/node, openebs.io/nodename) is per node.
    labels = frozenset(
        (k, v) for k, v in node.labels.items() if k not in PER_NODE_LABELS and not (v and v == node.name)
    )
    return labels, tuple(sorted(str(t) for t in pool_taints(node))), tuple(sorted(node.allocatable.items()))


def _taint_key(taint: str) -> str:
    return taint.split(":", 1)[0].split("=", 1)[0]


def _shape_is_control_plane(shape: Shape) -> bool:
    return any(k in CONTROL_PLANE_LABELS for k, _ in shape[0]) or any(
        _taint_key(t) in CONTROL_PLANE_LABELS for t in shape[1]
    )


def _label_rank(kv: tuple[str, str]) -> tuple[int, int, str, str]:
    """Which distinguishing label names a group best: pool-like keys, then node roles, then the shortest;
    deprecated beta labels and node-feature-discovery labels last."""
    key, value = kv
    low = key.lower()
    if "pool" in low or "nodegroup" in low or "node-group" in low:
        tier = 0
    elif key.startswith("node-role.kubernetes.io/"):
        tier = 1
    elif key.startswith(("beta.kubernetes.io/", "feature.node.kubernetes.io/")):
        tier = 3
    else:
        tier = 2
    return tier, len(key) + len(value), key, value


def _label_text(kv: tuple[str, str]) -> str:
    return f"{kv[0]}={kv[1]}" if kv[1] else kv[0]


@dataclass(slots=True)
class _Distinct:
    labels: list[tuple[str, str]]
    taints: list[str]
    by_labels: bool  # the labels alone tell the group apart from the others of its partition


def _greedy(
    own: Iterable[Any], confusable: list[int], has: Callable[[int, Any], bool]
) -> tuple[list[Any], list[int]]:
    """The fewest of `own` (in preference order) that rule out the most `confusable` groups."""
    cand = list(own)
    picked: list[Any] = []
    while confusable and cand:
        best, gone = None, 0
        for x in cand:
            g = sum(1 for j in confusable if not has(j, x))
            if g > gone:
                best, gone = x, g
        if best is None:
            break
        picked.append(best)
        cand.remove(best)
        confusable = [j for j in confusable if has(j, best)]
    return picked, confusable


def _distinguish(shapes: list[Shape], part: list[int]) -> dict[int, _Distinct]:
    """Per group of `part`: the labels (then taints) that tell it apart from the other groups of `part`."""
    common = frozenset.intersection(*(shapes[i][0] for i in part))
    common_taints = set.intersection(*(set(shapes[i][1]) for i in part))
    out: dict[int, _Distinct] = {}
    for i in part:
        others = [j for j in part if j != i]
        own = sorted((kv for kv in shapes[i][0] - common if kv[0] not in _NOISE_LABELS), key=_label_rank)
        labels, left = _greedy(own, others, lambda j, kv: kv in shapes[j][0])
        by_labels = not left
        own_taints = [t for t in shapes[i][1] if t not in common_taints]
        taints, _ = _greedy(own_taints, left, lambda j, t: t in shapes[j][1])
        out[i] = _Distinct(labels, taints, by_labels)
    return out


def _shape_names(shapes: list[Shape], firsts: list[str]) -> list[tuple[str, str]]:
    """(name, selector) per shape, as an on-call engineer would name the group: control-plane groups
    "control-plane"; the others by the labels (then taints) that tell them apart, "workers" when the only
    other groups are the control plane, else "nodes like <first member>" ("<labels> like <first member>"
    when only allocatable differs). Names are unique; `firsts` are the first members' names."""
    cp = [i for i, s in enumerate(shapes) if _shape_is_control_plane(s)]
    rest = [i for i in range(len(shapes)) if i not in cp]
    names: list[str] = [""] * len(shapes)
    selectors: list[str] = [""] * len(shapes)
    for part, is_cp in ((cp, True), (rest, False)):
        if not part:
            continue
        found = _distinguish(shapes, part)
        texts = {i: ",".join([*(_label_text(kv) for kv in d.labels), *d.taints]) for i, d in found.items()}
        counts: dict[str, int] = {}
        for t in texts.values():
            counts[t] = counts.get(t, 0) + 1
        for i, d in found.items():
            text = ",".join(x for x in ("control-plane" if is_cp else "", texts[i]) if x)
            if not text:
                text = "workers" if len(part) == 1 else f"nodes like {firsts[i]}"
            elif counts[texts[i]] > 1:  # only allocatable (or nothing kdiagnose names) tells them apart
                text = f"{text} like {firsts[i]}"
            names[i] = text
            if d.labels and d.by_labels:
                picked = set(d.labels)
                if not any(picked <= s[0] for j, s in enumerate(shapes) if j != i):
                    selectors[i] = ",".join(_label_text(kv) for kv in d.labels)
    return list(zip(_unique(names, firsts), selectors, strict=True))


def _unique(names: list[str], firsts: list[str], taken: Iterable[str] = ()) -> list[str]:
    seen = set(taken)
    out: list[str] = []
    for name, first in zip(names, firsts, strict=True):
        n = name
        if n in seen and " like " not in n:
            n = f"{name} like {first}"
        k = 2
        while n in seen:
            n = f"{name}#{k}"
            k += 1
        seen.add(n)
        out.append(n)
    return out


def _ready(node: Node) -> bool:
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in node.conditions)
    return ready and not node.unschedulable


def _matches_spec(node: Node, spec: PoolSpec) -> bool:
    if pool_of(node) == spec.name:
        return True
    labels = {k: v for k, v in spec.labels.items() if k not in PER_NODE_LABELS}
    return bool(labels) and all(node.labels.get(k) == v for k, v in labels.items())


def detect_pools(node_infos: list[NodeInfo], specs: list[PoolSpec] | None = None) -> list[NodePool]:
    """File pools first (with the nodes that belong to them), then pools by well-known label, then the
    remaining nodes grouped by shape; each pool's members keep snapshot order, and pool names are unique."""
    pools: list[NodePool] = []
    taken: set[str] = set()
    for spec in specs or []:
        members = [ni for ni in node_infos if ni.name not in taken and _matches_spec(ni.node, spec)]
        taken.update(ni.name for ni in members)
        pools.append(NodePool(spec.name, "file", members, spec))
    names = {p.name for p in pools}
    by_label: dict[tuple[str, str], NodePool] = {}
    by_shape: dict[Shape, list[NodeInfo]] = {}
    for ni in node_infos:
        if ni.name in taken:
            continue
        found = pool_label_of(ni.node)
        if found is not None:
            pool = by_label.get(found)
            if pool is None:
                # The same value under two pool labels (an EKS nodegroup and a Karpenter NodePool) is two pools.
                name = found[1] if found[1] not in names else f"{found[0]}={found[1]}"
                names.add(name)
                pool = by_label[found] = NodePool(name, found[0], selector=f"{found[0]}={found[1]}")
            pool.members.append(ni)
        else:
            by_shape.setdefault(_shape(ni.node), []).append(ni)
    pools.extend(by_label.values())
    shapes = list(by_shape)
    # Named after a healthy member where there is one: "nodes like <a cordoned node>" would mislead.
    firsts = [next((ni for ni in by_shape[s] if _ready(ni.node)), by_shape[s][0]).name for s in shapes]
    named = _shape_names(shapes, firsts)
    unique = _unique([n for n, _ in named], firsts, names)
    for name, (_, selector), shape in zip(unique, named, shapes, strict=True):
        pools.append(NodePool(name, "shape", by_shape[shape], selector=selector))
    return pools
