"""cluster-autoscaler's status ConfigMap (kube-system/cluster-autoscaler-status), in both formats it writes.

Mirrors cluster-autoscaler/clusterstate/utils/status.go (WriteStatusConfigMap: the `status` data key) and
the two renderings of clusterstate.ClusterStateRegistry.GetStatus:
- 1.30 and later (clusterstate/api/types.go, ClusterAutoscalerStatus): a YAML document marshalled by
  sigs.k8s.io/yaml, so keys come sorted (`autoscalerStatus`, `clusterWide`, `nodeGroups`, `time`); per node
  group `health` {status, nodeCounts {registered {total, ready, notStarted, unready {total, resourceUnready},
  beingDeleted}, longUnregistered, unregistered}, cloudProviderTarget, minSize, maxSize}, `scaleUp` {status,
  backoffInfo {errorCode, errorMessage}}, `scaleDown` {status, candidates}.
- up to 1.29 (clusterstate/api/utils.go GetReadableString): "Cluster-autoscaler status at <time>:" then
  `Cluster-wide:` and `NodeGroups:` blocks of `Name:`/`Health:`/`ScaleUp:`/`ScaleDown:` lines whose
  parenthesised messages carry the counts (clusterstate.go buildHealthStatusNodeGroup:
  "ready=3 unready=0 (resourceUnready=0) notStarted=0 longNotStarted=0 registered=3 longUnregistered=0
  cloudProviderTarget=3 (minSize=1, maxSize=3)").

Pure: raw ConfigMap dicts in, dataclasses out. A status that cannot be read is a ValueError naming the
field; the caller turns it into a "not checked" note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BACKOFF",
    "HEALTHY",
    "IN_PROGRESS",
    "STATUS_CONFIGMAP",
    "CAStatus",
    "GroupStatus",
    "find_status_configmap",
    "parse_status",
    "parse_status_configmap",
    "parse_status_text",
    "parse_status_yaml",
]

Obj = dict[str, Any]

# The default of --status-config-map-name, in the namespace CA runs in (main.go, --namespace kube-system).
STATUS_CONFIGMAP = ("kube-system", "cluster-autoscaler-status")
# ClusterAutoscalerConditionStatus values (clusterstate/api/types.go).
HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
IN_PROGRESS = "InProgress"
BACKOFF = "Backoff"
NO_ACTIVITY = "NoActivity"


@dataclass(slots=True)
class GroupStatus:
    """One node group as cluster-autoscaler last reported it (NodeGroupStatus)."""

    name: str  # the cloud provider's id: an ASG, a MIG URL, a VMSS, "MachineDeployment/ns/name"
    health: str = ""  # Healthy | Unhealthy
    registered: int = 0
    ready: int = 0
    unready: int = 0
    not_started: int = 0
    long_unregistered: int = 0
    cloud_provider_target: int = 0
    min_size: int = 0
    max_size: int = 0
    scale_up: str = ""  # InProgress | NoActivity | Backoff | Unhealthy
    backoff_code: str = ""
    backoff_message: str = ""
    scale_down: str = ""  # CandidatesPresent | NoCandidates
    scale_down_candidates: int = 0

    @property
    def room(self) -> int:
        """Nodes the autoscaler may still add (maxSize - cloudProviderTarget)."""
        return self.max_size - self.cloud_provider_target

    @property
    def short_name(self) -> str:
        """The last path segment of the id (a MIG URL ends with the group's name)."""
        return self.name.rstrip("/").rsplit("/", 1)[-1]

    def blocked(self) -> str:
        """Why the autoscaler will not add a node to this group now ("" when it can)."""
        if self.scale_up == BACKOFF:
            why = ": ".join(x for x in (self.backoff_code, self.backoff_message) if x)
            return "in backoff after a failed scale-up" + (f" ({why})" if why else "")
        if self.health == UNHEALTHY or self.scale_up == UNHEALTHY:
            return (
                f"unhealthy (ready={self.ready} unready={self.unready} notStarted={self.not_started} "
                f"longUnregistered={self.long_unregistered} of cloudProviderTarget={self.cloud_provider_target}): "
                "cluster-autoscaler does not scale up an unhealthy group"
            )
        if self.room <= 0:
            return f"at its max size ({self.cloud_provider_target} of max {self.max_size})"
        return ""


@dataclass(slots=True)
class CAStatus:
    """The whole status document."""

    time: str = ""
    autoscaler_status: str = ""  # Running | Initializing
    message: str = ""
    health: str = ""  # cluster-wide
    scale_up: str = ""  # cluster-wide
    groups: list[GroupStatus] = field(default_factory=list)
    format: str = "yaml"  # "yaml" (1.30+) or "text" (up to 1.29)
    source: str = ""  # "configmap kube-system/cluster-autoscaler-status"

    def group(self, name: str) -> GroupStatus | None:
        return next((g for g in self.groups if g.name == name), None)


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _int(v: Any, where: str) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{where}: expected an integer, got {v!r}")
    return v


def parse_status_yaml(doc: Obj) -> CAStatus:
    """The YAML status document (1.30+) as a parsed mapping."""
    out = CAStatus(
        time=str(doc.get("time") or ""),
        autoscaler_status=str(doc.get("autoscalerStatus") or ""),
        message=str(doc.get("message") or ""),
        format="yaml",
    )
    cw = _d(doc.get("clusterWide"))
    out.health = str(_d(cw.get("health")).get("status") or "")
    out.scale_up = str(_d(cw.get("scaleUp")).get("status") or "")
    groups = doc.get("nodeGroups") or []
    if not isinstance(groups, list):
        raise ValueError("status.nodeGroups: expected a list")
    for i, raw in enumerate(groups):
        at = f"status.nodeGroups[{i}]"
        if not isinstance(raw, dict) or not raw.get("name"):
            raise ValueError(f"{at}: a node group needs a name")
        health, up, down = _d(raw.get("health")), _d(raw.get("scaleUp")), _d(raw.get("scaleDown"))
        counts = _d(health.get("nodeCounts"))
        reg = _d(counts.get("registered"))
        backoff = _d(up.get("backoffInfo"))
        out.groups.append(
            GroupStatus(
                name=str(raw["name"]),
                health=str(health.get("status") or ""),
                registered=_int(reg.get("total"), f"{at}.health.nodeCounts.registered.total"),
                ready=_int(reg.get("ready"), f"{at}.health.nodeCounts.registered.ready"),
                unready=_int(
                    _d(reg.get("unready")).get("total"), f"{at}.health.nodeCounts.registered.unready"
                ),
                not_started=_int(reg.get("notStarted"), f"{at}.health.nodeCounts.registered.notStarted"),
                long_unregistered=_int(
                    counts.get("longUnregistered"), f"{at}.health.nodeCounts.longUnregistered"
                ),
                cloud_provider_target=_int(
                    health.get("cloudProviderTarget"), f"{at}.health.cloudProviderTarget"
                ),
                min_size=_int(health.get("minSize"), f"{at}.health.minSize"),
                max_size=_int(health.get("maxSize"), f"{at}.health.maxSize"),
                scale_up=str(up.get("status") or ""),
                backoff_code=str(backoff.get("errorCode") or ""),
                backoff_message=str(backoff.get("errorMessage") or ""),
                scale_down=str(down.get("status") or ""),
                scale_down_candidates=_int(down.get("candidates"), f"{at}.scaleDown.candidates"),
            )
        )
    return out


# "  Health:      Healthy (ready=3 unready=0 ...)" (getConditionsString: prefix, "%-12v" type+":", status).
_COND_RE = re.compile(r"^\s{2}(Health|ScaleUp|ScaleDown):\s+(\S+)(?:\s+\((.*)\))?\s*$")
_NAME_RE = re.compile(r"^\s{2}Name:\s+(\S+)\s*$")
_HEAD_RE = re.compile(r"^Cluster-autoscaler status at (.+?):\s*$")
_KV_RE = re.compile(r"(\w+)=(\d+)")


def _counts(message: str) -> dict[str, int]:
    return {k: int(v) for k, v in _KV_RE.findall(message)}


def parse_status_text(text: str) -> CAStatus:
    """The plain-text status (up to 1.29)."""
    out = CAStatus(format="text", autoscaler_status="Running")
    section = ""
    cur: GroupStatus | None = None
    seen_section = False
    for line in text.splitlines():
        if m := _HEAD_RE.match(line):
            out.time = m.group(1)
            continue
        stripped = line.strip()
        if stripped in ("Cluster-wide:", "NodeGroups:"):
            section = stripped
            seen_section = True
            continue
        if section == "NodeGroups:" and (m := _NAME_RE.match(line)):
            cur = GroupStatus(name=m.group(1))
            out.groups.append(cur)
            continue
        m = _COND_RE.match(line)
        if not m:
            continue  # LastProbeTime / LastTransitionTime lines and blank lines
        kind, status, message = m.group(1), m.group(2), m.group(3) or ""
        if section == "Cluster-wide:":
            if kind == "Health":
                out.health = status
            elif kind == "ScaleUp":
                out.scale_up = status
            continue
        if cur is None:
            continue
        c = _counts(message)
        if kind == "Health":
            cur.health = status
            cur.ready = c.get("ready", 0)
            cur.unready = c.get("unready", 0)
            cur.not_started = c.get("notStarted", 0)
            cur.registered = c.get("registered", 0)
            cur.long_unregistered = c.get("longUnregistered", 0)
            cur.cloud_provider_target = c.get("cloudProviderTarget", 0)
            cur.min_size = c.get("minSize", 0)
            cur.max_size = c.get("maxSize", 0)
            if "maxSize" not in c:
                raise ValueError(f"status: node group {cur.name}: Health line without maxSize")
        elif kind == "ScaleUp":
            cur.scale_up = status
        else:
            cur.scale_down = status
            cur.scale_down_candidates = c.get("candidates", 0)
    if not seen_section:
        raise ValueError("status: neither a YAML status document nor the Cluster-wide:/NodeGroups: text")
    return out


def parse_status(text: str) -> CAStatus:
    """Either format, told apart as the writer does: the text starts with "Cluster-autoscaler status at"."""
    stripped = text.lstrip()
    if stripped.startswith(("Cluster-autoscaler status at", "Cluster-wide:")):
        return parse_status_text(text)
    import yaml

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"status: invalid YAML: {' '.join(str(e).split())[:200]}") from None
    if not isinstance(doc, dict):
        raise ValueError("status: neither a YAML status document nor the Cluster-wide:/NodeGroups: text")
    return parse_status_yaml(doc)


def find_status_configmap(configmaps: list[Obj]) -> Obj | None:
    """kube-system/cluster-autoscaler-status, else the one ConfigMap anywhere whose `status` key CA wrote
    (a CA run with another --namespace or --status-config-map-name); deterministic when several exist."""
    found: list[tuple[str, str, Obj]] = []
    for cm in configmaps:
        meta = _d(cm.get("metadata"))
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        if (ns, name) == STATUS_CONFIGMAP:
            return cm
        status = _d(cm.get("data")).get("status")
        annotated = "cluster-autoscaler.kubernetes.io/last-updated" in _d(meta.get("annotations"))
        if isinstance(status, str) and (annotated or name.endswith("cluster-autoscaler-status")):
            found.append((ns, name, cm))
    return min(found, key=lambda t: (t[0], t[1]))[2] if found else None


def parse_status_configmap(cm: Obj) -> CAStatus:
    meta = _d(cm.get("metadata"))
    where = f"configmap {meta.get('namespace') or 'default'}/{meta.get('name')}"
    text = _d(cm.get("data")).get("status")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}: no data.status")
    try:
        out = parse_status(text)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    out.source = where
    return out
