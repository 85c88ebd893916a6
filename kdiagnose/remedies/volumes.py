"""Volumes: the PersistentVolume whose zone / node affinity rejects nodes (plugins/volumezone, volumebinding),
which nodes satisfy it and what blocks them there; and, when no node of the PV's zone exists, a pool scaled
into that zone (a template node with the zone labels changed), proven by replay."""

from __future__ import annotations

from typing import Any

from kdiagnose.model.pools import ZONE_LABELS, zone_of
from kdiagnose.remedies import scale_pool
from kdiagnose.remedies.whatif import Context, describe_status
from kdiagnose.results import Remedy
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.describe import with_cause
from kdiagnose.scheduler.plugins.helper.node_selector import parse_node_selector_terms

__all__ = ["remedies"]

_ZONE_KEYS = (
    *ZONE_LABELS,
    "topology.ebs.csi.aws.com/zone",
    "topology.gke.io/zone",
    "topology.disk.csi.azure.com/zone",
)


def _conflicting_pvs(ctx: Context) -> dict[str, list[str]]:
    """PV name -> nodes its topology rejects."""
    out: dict[str, list[str]] = {}
    for node in ctx.nodes_failing(n.VOLUME_ZONE, n.VOLUME_BINDING):
        for det in ctx.d.verdicts[node].details:
            pv = det.get("pv")
            if isinstance(pv, str) and pv and "missing_pv" not in det:
                out.setdefault(pv, []).append(node)
    return out


def _pv_zones(pv: dict[str, Any]) -> tuple[str, list[str]] | None:
    terms = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get(
        "nodeSelectorTerms"
    ) or []
    for t in terms:
        for e in (t or {}).get("matchExpressions") or []:
            if (
                isinstance(e, dict)
                and e.get("key") in _ZONE_KEYS
                and e.get("operator") == "In"
                and e.get("values")
            ):
                return str(e["key"]), [str(v) for v in e["values"]]
    labels = (pv.get("metadata") or {}).get("labels") or {}
    for key in _ZONE_KEYS:
        if key in labels:
            return key, str(labels[key]).split("__")
    return None


def remedies(ctx: Context) -> tuple[list[Remedy], list[str]]:
    out: list[Remedy] = []
    notes: list[str] = []
    for pv_name, rejected in sorted(_conflicting_pvs(ctx).items()):
        pv = ctx.snapshot.get("PersistentVolume", pv_name) or {}
        terms = parse_node_selector_terms(
            (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get(
                "nodeSelectorTerms"
            )
        )
        zones = _pv_zones(pv)
        satisfy = [
            ni.name
            for ni in ctx.snapshot.node_infos
            if ni.name not in rejected and (not terms or any(t.match(ni.node) for t in terms))
        ]
        where = f"zone {', '.join(zones[1])}" if zones else "its node affinity"
        if satisfy:
            blocked = [
                with_cause(x, describe_status(ctx.d.verdicts[x]))
                for x in satisfy[:3]
                if x in ctx.d.verdicts and not ctx.d.verdicts[x].ok
            ]
            notes.append(
                f"volume: PV {pv_name} restricts the pod to {where}: {len(satisfy)} node(s) satisfy it"
                + (f", blocked there by: {'; '.join(blocked)}" if blocked else "")
            )
        else:
            notes.append(
                f"volume: PV {pv_name} restricts the pod to {where}, and no node of the cluster is there"
            )
        if not zones or satisfy:
            continue
        key, values = zones
        for pool in scale_pool.pools_for(ctx.snapshot):
            if pool.control_plane or any(zone_of(m.node) in values for m in pool.members):
                continue
            over = {
                k: values[0]
                for k in _ZONE_KEYS
                if any(k in m.node.labels for m in pool.members[:1]) or k == key
            }
            fit, why = scale_pool.try_pool(ctx, pool, over)
            if fit is None:
                notes.append(f"volume: pool {pool.name} in zone {values[0]}: no scale-up: {why}")
                continue
            r = scale_pool._remedy(ctx, pool, fit, kind="volume", extra=f" in zone {values[0]}")
            r.summary += f" (PV {pv_name} of the pod lives in {values[0]})"
            r.risk = (
                f"only if the pool can launch nodes in {values[0]} (its subnets/zones); otherwise restore the "
                f"volume from a snapshot in a zone the pool spans; " + r.risk
            )
            r.details["pv"] = pv_name
            out.append(r)
    return out, notes
