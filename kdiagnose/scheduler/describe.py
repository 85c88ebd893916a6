"""Status.details in plain words: the per-node cause text of the human report, the `check` formats and the
remedies' notes.

Details keys are chosen by plugin authors (see each plugin's Filter); known keys get sentences, unknown ones
are shown as `k=v`, so a new plugin's details are readable before this module learns about them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kdiagnose.model.quantity import display_bytes, display_quantity, format_quantity
from kdiagnose.scheduler import names as n
from kdiagnose.scheduler.framework import Code

if TYPE_CHECKING:
    from kdiagnose.scheduler.diagnosis import Diagnosis
    from kdiagnose.scheduler.framework import Status

__all__ = ["describe_details", "merge_causes", "node_cause", "postfilter_notes", "short_list", "with_cause"]


def _amount(resource: str, n: Any) -> str:
    if isinstance(n, tuple) and len(n) == 2:
        return f"{_amount(resource, n[0])} to {_amount(resource, n[1])}"
    if not isinstance(n, int) or isinstance(n, bool):
        return str(n)
    return display_quantity(resource, n)


def _fit(d: dict[str, Any]) -> str:
    r = str(d.get("resource"))
    label = {"cpu": " CPU", "pods": " pod(s)"}.get(r, f" {r}")
    req, free, alloc = d.get("requested"), d.get("free"), d.get("allocatable")
    want = _amount(r, req)
    text = f"needs {want}{label}"
    if free is not None:
        have = _amount(r, free)
        if have == want and free != req and isinstance(free, int):
            have = format_quantity(r, free)  # rounding must not hide the shortfall
        text += f", {have} free"
    if alloc is not None:
        text += f" of {_amount(r, alloc)} allocatable"
    return text


def _value(v: Any) -> str:
    if isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return f"{v[0]} to {v[1]}"
    if isinstance(v, list | tuple | set | frozenset):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def short_list(v: Any, limit: int = 3) -> str:
    """The first `limit` items, then `and N more`."""
    items = [str(x) for x in v] if isinstance(v, list | tuple) else [str(v)]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _one(d: dict[str, Any]) -> str:
    """Plain words for one details dict: known keys get sentences, the rest `k=v`."""
    d = dict(d)
    parts: list[str] = []
    if "resource" in d and "requested" in d:
        parts.append(_fit(d))
        for k in ("resource", "requested", "free", "allocatable"):
            d.pop(k, None)
    if "taint" in d:
        parts.append(f"taint {d.pop('taint')} not tolerated")
    if "nodeSelector" in d:
        actual = d.pop("nodeValue", None)
        has = "label missing" if actual is None else f"node has {actual!r}"
        parts.append(f"nodeSelector {d.pop('nodeSelector')} ({has})")
    if "nodeAffinity" in d:
        terms = d.pop("nodeAffinity")
        if isinstance(terms, list):
            parts.append("no required term matches: " + " | ".join(str(t) for t in terms if t))
        else:
            parts.append(f"node affinity: {terms}")
    if d.get("unschedulable") is True:
        d.pop("unschedulable")
        parts.append("node is cordoned (spec.unschedulable)")
    if "nodeName" in d:
        parts.append(f"pod is pinned to node {d.pop('nodeName')}")
    if "port" in d:
        # NodePorts (plugins/nodeports/node_ports.go): the wanted port and what holds it. The holder's own
        # binding is named only when it differs from the wanted one (0.0.0.0 conflicts with every IP).
        port = d.pop("port")
        used_by, used_as = d.pop("usedBy", None), d.pop("usedAs", None)
        text = f"host port {port}"
        if used_by:
            text += f" used by {used_by}"
        elif used_as:
            text += " in use on the node"
        if used_as and used_as != port:
            text += f" as {used_as}"
        parts.append(text)
    if "term" in d:
        # InterPodAffinity (filtering.go): "pods" is present only for the incoming pod's anti-affinity.
        term = d.pop("term")
        if "missingLabel" in d:
            parts.append(f"pod affinity term {term}: node has no {d.pop('missingLabel')} label")
        elif "pods" in d:
            n = d.pop("matchingPods", None)
            parts.append(
                f"anti-affinity term {term}: {n if n is not None else 'some'} matching pod(s) in "
                f"{d.pop('domain', 'the domain')} ({short_list(d.pop('pods'))})"
            )
        else:
            d.pop("matchingPods", None)
            where = d.pop("domain", "the domain")
            text = f"affinity term {term}: no matching pod in {where}"
            if d.pop("matchingPodsInCluster", None) == 0:
                text += " (none in the cluster)"
            parts.append(text)
    if "podsWithAntiAffinity" in d:
        parts.append(
            f"existing pod(s) {short_list(d.pop('podsWithAntiAffinity'))} forbid this pod in {d.pop('domain', 'the domain')}"
        )
    if "missingLabel" in d:
        parts.append(f"node has no {d.pop('missingLabel')} label")
        if "constraint" in d:
            parts[-1] += f" (spread constraint {d.pop('constraint')})"
    if "skew" in d and "maxSkew" in d:
        # PodTopologySpread (filtering.go): matching pods in the domain + self - global minimum > maxSkew.
        dom = d.pop("domain", None)
        key = d.pop("topologyKey", "domain")
        text = f"skew would be {_value(d.pop('skew'))} > maxSkew {_value(d.pop('maxSkew'))}"
        if dom is not None:
            text += f" in {key}={dom}"
        elif key != "domain":
            text += f" in {key}"
        counts = []
        if "matchingPods" in d:
            counts.append(f"{_value(d.pop('matchingPods'))} matching pod(s) there")
        if "globalMinimum" in d:
            counts.append(f"minimum {_value(d.pop('globalMinimum'))}")
        if counts:
            text += f" ({', '.join(counts)})"
        parts.append(text)
        for k in ("constraint", "selfMatch", "eligibleDomains"):
            d.pop(k, None)
        if d.get("minDomains") in (None, 1):
            d.pop("minDomains", None)
    if "claim" in d:
        claim = d.pop("claim")
        if d.pop("no_matching_pv", None):
            prov = d.pop("provisioner", None)
            parts.append(
                f"claim {claim}: no PersistentVolume matches"
                + (f" (provisioner {prov} cannot create one)" if prov else "")
            )
        elif d.get("allowed_topologies") is False:
            d.pop("allowed_topologies")
            parts.append(
                f"claim {claim}: StorageClass {d.pop('storage_class', '?')} allowedTopologies exclude the node"
            )
        elif "storage_class" in d and "requested" in d:
            req = d.pop("requested")
            amount = display_bytes(int(req)) if str(req).isdigit() else str(req)
            parts.append(
                f"claim {claim}: StorageClass {d.pop('storage_class')} has no capacity for {amount} on the node"
            )
        elif "missing_pv" in d:
            parts.append(f"claim {claim}: bound PersistentVolume {d.pop('missing_pv')} not found")
        elif "pv" in d:
            parts.append(
                f"claim {claim}: bound PersistentVolume {d.pop('pv')}'s node affinity excludes the node"
            )
        elif "selected_node" in d:
            parts.append(f"claim {claim}: provisioning was started for node {d.pop('selected_node')}")
        else:
            parts.append(f"claim {claim}")
    if "pv" in d and "label" in d:
        vals = d.pop("pv_values", None)
        node_value = d.pop("node_value", None)
        parts.append(
            f"PersistentVolume {d.pop('pv')} needs {d.pop('label')} in {_value(vals)} "
            f"(node has {'none' if node_value is None else repr(node_value)})"
        )
    if "driver" in d and "limit" in d:
        parts.append(
            f"CSI driver {d.pop('driver')}: {d.pop('attached', '?')} attached + {d.pop('new', '?')} new "
            f"> limit {d.pop('limit')}"
        )
    if "claims" in d:
        parts.append(f"claim(s) {short_list(d.pop('claims'), 5)}")
    if "pv" in d and len(d) == 1:
        parts.append(f"PersistentVolume {d.pop('pv')}")
    if "missing_features" in d:
        # NodeDeclaredFeatures: what the pod's spec needs that the node's kubelet does not list.
        parts.append(
            f"node does not declare {short_list(d.pop('missing_features'), 5)} (status.declaredFeatures)"
        )
    if "draClaim" in d and "request" in d:
        # DynamicResources: a request the node's devices cannot cover (allocator.Allocator.explain).
        claim, req, klass = d.pop("draClaim"), d.pop("request"), d.pop("deviceClass", "?")
        count, matching, free = d.pop("count", "?"), d.pop("matching", 0), d.pop("free", 0)
        need = "all matching devices" if count == "All" else f"{_value(count)} device(s)"
        if matching == 0:
            have = f"no device on the node matches DeviceClass {klass} and the request's selectors"
        else:
            have = (
                f"{_value(matching)} device(s) match DeviceClass {klass}, {_value(free)} of them unallocated"
            )
        parts.append(f"claim {claim} request {req} needs {need}: {have}")
    if "deviceClass" in d:
        parts.append(f"DeviceClass {d.pop('deviceClass')}")
    if "deallocate" in d:
        parts.append(f"claim {d.pop('deallocate')} would be deallocated")
    if "volume" in d and "pod" in d:
        parts.append(f"volume {d.pop('volume')} is in use by {d.pop('pod')}")
    parts.extend(f"{k}={_value(v)}" for k, v in d.items() if v is not None and v != "" and v != [])
    return ", ".join(parts)


def describe_details(details: Sequence[dict[str, Any]]) -> str:
    """Status.details in plain words (details keys are chosen by plugin authors; unknown keys as k=v)."""
    dicts = [d for d in details if isinstance(d, dict)]
    # DynamicResources: the requests that failed name their claims; the bare claim list then repeats them.
    explained = {str(d["draClaim"]) for d in dicts if "draClaim" in d}
    if explained:
        dicts = [
            d
            for d in dicts
            if not (set(d) == {"claims"} and {str(c) for c in d["claims"] or []} <= explained)
        ]
    return "; ".join(x for x in (_one(d) for d in dicts) if x)


def with_cause(reason: str, cause: str) -> str:
    """`reason: cause`, the one way a reason (or a node, or a plugin) and the concrete cause the details give
    are joined wherever both are shown in one line: the remedies' notes (remedies/whatif.py describe_status),
    `check` and its JUnit/SARIF/GitHub formats (gate/formats/text.py node_causes) and the report's PreFilter
    line. Never `reason (cause)`: cause texts have parentheses of their own ("nodeSelector a=b (label
    missing)", "(status.declaredFeatures)", "(none in the cluster)", spread counts), so wrapping them again
    gave "...(label missing))"; a colon chain nests however deep the consumers compose it."""
    return f"{reason}: {cause}" if cause else reason


def node_cause(st: Status) -> str:
    """The concrete cause when the plugin gave details (the reason is in the group title), else the reason."""
    return describe_details(st.details) or ", ".join(st.reasons) or st.code.label


_VARIES = object()


def merge_causes(statuses: list[Status]) -> str:
    """One cause for many nodes: keys equal everywhere are kept, varying integers become ranges, other
    varying keys are dropped. Empty when the details differ in shape."""
    shapes = {tuple(tuple(sorted(x)) for x in st.details if isinstance(x, dict)) for st in statuses}
    if len(shapes) != 1 or not next(iter(shapes)):
        return ""
    merged: list[dict[str, Any]] = []
    for i in range(len(statuses[0].details)):
        values = [st.details[i] for st in statuses]
        out: dict[str, Any] = {}
        for k in values[0]:
            vs = [v.get(k) for v in values]
            first = vs[0]
            if all(v == first for v in vs):
                out[k] = first
            elif all(isinstance(v, int) and not isinstance(v, bool) for v in vs):
                ints = [int(v) for v in vs if v is not None]
                out[k] = (min(ints), max(ints))
            else:
                out[k] = _VARIES
        if any(v is _VARIES for v in out.values()) and set(out) & {"taint", "nodeSelector", "port"}:
            return ""  # the varying key is the cause itself: a merged sentence would be empty or wrong
        merged.append({k: v for k, v in out.items() if v is not _VARIES})
    return describe_details(merged)


def postfilter_notes(d: Diagnosis) -> list[str]:
    """Notes on PostFilter words in the message that read like an error of the input (framework.go
    RunPostFilterPlugins; dynamicresources.go PostFilter), so the report says what they mean. The replay
    adds them to the cycle's notes right after PostFilter, where they have always been in the notes' order."""
    post = d.postfilter
    if post is None:
        return []
    if post.code == Code.ERROR and post.plugin == n.DYNAMIC_RESOURCES and post.message == "not found":
        by = d.prefilter.plugin if d.prefilter is not None and d.prefilter.plugin else "another plugin"
        return [
            'the message ends in "not found": kube-scheduler\'s DynamicResources PostFilter did not find its '
            f"own cycle state, because {by} rejected the pod at PreFilter before DynamicResources' PreFilter "
            "ran; PostFilter stops at that error, so preemption was not tried. Nothing is missing from the "
            "cluster: fix the PreFilter rejection"
        ]
    if "no new claims to deallocate" in post.reasons:
        # dynamicresources.go PostFilter (v1.34 to v1.36): the pod has no ResourceClaim (state.claims is
        # empty), so it returns Unschedulable with these words; v1.37 returns no reason.
        return [
            '"no new claims to deallocate" is DynamicResources\' PostFilter: the pod uses no ResourceClaim, so '
            "there is no device allocation it could undo to make room. It is not an error and not a cause: "
            "kube-scheduler v1.34 to v1.36 add it to every pod that fits no node while DRA is enabled"
        ]
    if "still not schedulable" in post.reasons:
        return [
            '"still not schedulable" is DynamicResources\' PostFilter: it found no allocated claim of the pod '
            "that it could deallocate to make room (it only deallocates a claim allocated for other nodes and "
            "reserved for no pod or this pod alone); "
            "preemption was then tried as the message says"
        ]
    return []
