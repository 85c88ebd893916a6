"""What the API server would reject, checked before the replay reads an object: ModelError naming the field.

A dump of a live cluster only holds objects that passed the API server's decoding (types) and validation
(pkg/apis/core/validation/validation.go: ValidatePod/ValidateNode, validateTolerations, validateNodeTaints,
ValidateNodeSelectorRequirement, validatePodAffinityTerm, validateTopologySpreadConstraints; apimachinery's
metav1validation.ValidateLabelSelector). Hand-written manifests and edited dumps need not: a wrong type or an
invalid operator would otherwise be read as "absent" and give a verdict the cluster could never produce.
Only fields the replay reads are checked, so an object the checks accept is one the plugins can read
without type errors. Messages follow field.Error's wording ("Unsupported value", "Required value", ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from kdiagnose.model.objects import ModelError
from kdiagnose.model.quantity import QuantityError, resource_value

__all__ = [
    "object_label",
    "validate",
    "validate_node",
    "validate_object",
    "validate_pod",
    "validate_pod_parts",
    "validate_pod_spec",
]

Obj = dict[str, Any]

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_NODE_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_LABEL_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist")
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_INT32_MAX = 2**31 - 1
_CONTAINER_TYPES = frozenset((list, dict))
_INT64_MAX = 2**63 - 1


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def _fail(where: str, message: str) -> ModelError:
    return ModelError(f"{where}: {message}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _mapping(value: Any, where: str) -> Obj:
    """A field that must be a JSON object; null/absent reads as empty (as the API server's decoder does)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(where, f"must be a mapping, not a {_type_name(value)}")
    return value


def _items(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(where, f"must be a list, not a {_type_name(value)}")
    return value


def _objects(value: Any, where: str) -> list[tuple[str, Obj]]:
    """A list of JSON objects, each with its field path."""
    out = []
    for i, item in enumerate(_items(value, where)):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise _fail(at, f"must be a mapping, not a {_type_name(item)}")
        out.append((at, item))
    return out


def _dicts(value: Any, where: str) -> None:
    """A list of JSON objects nobody indexes into deeper here (conditions, ownerReferences, ...)."""
    if type(value) is list:
        for i, item in enumerate(value):
            if type(item) is not dict:
                raise _fail(f"{where}[{i}]", f"must be a mapping, not a {_type_name(item)}")
        return
    _items(value, where)


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(where, f"must be a string, not a {_type_name(value)}")
    return value


def _strings(value: Any, where: str) -> list[str]:
    return [_string(v, f"{where}[{i}]") for i, v in enumerate(_items(value, where))]


def _string_map(value: Any, where: str) -> None:
    """map[string]string (labels, annotations, nodeSelector). Scalars are accepted as their text: YAML
    writers often leave `version: 1` unquoted, and the replay compares text."""
    for k, v in _mapping(value, where).items():
        if type(v) in _CONTAINER_TYPES:
            raise _fail(f"{where}.{k}", f"must be a string, not a {_type_name(v)}")


def _integer(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise _fail(where, f"must be an integer, not a {_type_name(value)} {_shown(value)}")
    return value


def _boolean(value: Any, where: str) -> None:
    if value is not None and not isinstance(value, bool):
        raise _fail(where, f"must be a boolean, not a {_type_name(value)} {_shown(value)}")


def _unsupported(value: Any, where: str, supported: tuple[str, ...]) -> ModelError:
    choices = ", ".join(f'"{s}"' for s in supported)
    return _fail(where, f"Unsupported value: {_shown(value)}: supported values: {choices}")


def _enum(value: Any, where: str, supported: tuple[str, ...], *, required: bool = False) -> str:
    text = _string(value, where)
    if not text and not required:
        return ""
    if text not in supported:
        raise _unsupported(value, where, supported)
    return text


def _required_string(value: Any, where: str) -> str:
    text = _string(value, where)
    if not text:
        raise _fail(where, "Required value")
    return text


def _scalar_strings(obj: Obj, keys: tuple[str, ...], where: str) -> None:
    # Hot (every pod of a 150,000-pod dump): the field path is only formatted for an error.
    for key in keys:
        v = obj.get(key)
        if v is not None and type(v) is not str:
            raise _fail(f"{where}{key}", f"must be a string, not a {_type_name(v)}")


def _metadata(obj: Obj, where: str) -> None:
    meta = obj.get("metadata")
    if type(meta) is not dict:
        meta = _mapping(meta, f"{where} metadata")
    _scalar_strings(meta, ("name", "namespace"), f"{where} metadata.")
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is not None:
            _string_map(value, f"{where} metadata.{key}")
    refs = meta.get("ownerReferences")
    if refs is not None:
        _dicts(refs, f"{where} metadata.ownerReferences")
        for i, ref in enumerate(refs):
            _scalar_strings(
                ref, ("apiVersion", "kind", "name", "uid"), f"{where} metadata.ownerReferences[{i}]."
            )
            if ref.get("controller") is not None:
                _boolean(ref["controller"], f"{where} metadata.ownerReferences[{i}].controller")


# ---------------------------------------------------------------------------------------------- selectors


def _node_selector_requirement(req: Obj, where: str, *, field: bool) -> None:
    """ValidateNodeSelectorRequirement / validateNodeFieldSelectorRequirement."""
    key = _required_string(req.get("key"), f"{where}.key")
    values = _strings(req.get("values"), f"{where}.values")
    ops = ("In", "NotIn") if field else _NODE_SELECTOR_OPS
    op = _enum(req.get("operator"), f"{where}.operator", ops, required=True)
    if field and key != "metadata.name":
        raise _unsupported(key, f"{where}.key", ("metadata.name",))
    if field and len(values) != 1:
        raise _fail(f"{where}.values", "must have one element")
    if op in ("In", "NotIn") and not values:
        raise _fail(f"{where}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'")
    if op in ("Exists", "DoesNotExist") and values:
        raise _fail(
            f"{where}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        )
    if op in ("Gt", "Lt") and (len(values) != 1 or not _INT_RE.match(values[0])):
        raise _fail(
            f"{where}.values", "must be specified single integer value when `operator` is 'Lt' or 'Gt'"
        )


def _node_selector_term(term: Obj, where: str) -> None:
    for at, req in _objects(term.get("matchExpressions"), f"{where}.matchExpressions"):
        _node_selector_requirement(req, at, field=False)
    for at, req in _objects(term.get("matchFields"), f"{where}.matchFields"):
        _node_selector_requirement(req, at, field=True)


def _label_selector(value: Any, where: str) -> None:
    """metav1validation.ValidateLabelSelector (types, operators and value counts)."""
    sel = _mapping(value, where)
    _string_map(sel.get("matchLabels"), f"{where}.matchLabels")
    for at, req in _objects(sel.get("matchExpressions"), f"{where}.matchExpressions"):
        _required_string(req.get("key"), f"{at}.key")
        values = _strings(req.get("values"), f"{at}.values")
        op = _string(req.get("operator"), f"{at}.operator")
        if op not in _LABEL_SELECTOR_OPS:
            raise _fail(f"{at}.operator", f"Invalid value: {_shown(op)}: not a valid selector operator")
        if op in ("In", "NotIn") and not values:
            raise _fail(
                f"{at}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"
            )
        if op in ("Exists", "DoesNotExist") and values:
            raise _fail(
                f"{at}.values",
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )


def _weight(value: Any, where: str) -> None:
    w = _integer(value, where)
    if w is None or not 1 <= w <= 100:
        raise _fail(where, f"Invalid value: {_shown(value)}: must be in the range 1-100")


def _pod_affinity_term(term: Obj, where: str) -> None:
    _label_selector(term.get("labelSelector"), f"{where}.labelSelector")
    _label_selector(term.get("namespaceSelector"), f"{where}.namespaceSelector")
    _strings(term.get("namespaces"), f"{where}.namespaces")
    _strings(term.get("matchLabelKeys"), f"{where}.matchLabelKeys")
    _strings(term.get("mismatchLabelKeys"), f"{where}.mismatchLabelKeys")
    _required_string(term.get("topologyKey"), f"{where}.topologyKey")


def _affinity(value: Any, where: str) -> None:
    aff = _mapping(value, where)
    req_key, pref_key = (
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution",
    )
    na = _mapping(aff.get("nodeAffinity"), f"{where}.nodeAffinity")
    if na.get(req_key) is not None:
        at = f"{where}.nodeAffinity.{req_key}"
        terms = _objects(_mapping(na[req_key], at).get("nodeSelectorTerms"), f"{at}.nodeSelectorTerms")
        if not terms:
            raise _fail(
                f"{at}.nodeSelectorTerms", "Required value: must have at least one node selector term"
            )
        for t_at, term in terms:
            _node_selector_term(term, t_at)
    for at, pref in _objects(na.get(pref_key), f"{where}.nodeAffinity.{pref_key}"):
        _weight(pref.get("weight"), f"{at}.weight")
        _node_selector_term(_mapping(pref.get("preference"), f"{at}.preference"), f"{at}.preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = _mapping(aff.get(kind), f"{where}.{kind}")
        for at, term in _objects(pa.get(req_key), f"{where}.{kind}.{req_key}"):
            _pod_affinity_term(term, at)
        for at, pref in _objects(pa.get(pref_key), f"{where}.{kind}.{pref_key}"):
            _weight(pref.get("weight"), f"{at}.weight")
            term_at = f"{at}.podAffinityTerm"
            term = _mapping(pref.get("podAffinityTerm"), term_at)
            if not term:
                raise _fail(term_at, "Required value")
            _pod_affinity_term(term, term_at)


# Tolerations already found valid, by their fields: 150,000 pods carry a handful of distinct ones.
_VALID_TOLERATIONS: set[tuple[Any, ...]] = set()


def _tolerations(value: Any, where: str) -> None:
    """validateTolerations."""
    if type(value) is list:
        for i, t in enumerate(value):
            sig: tuple[Any, ...] = ()
            if type(t) is dict:
                sig = (
                    t.get("key"),
                    t.get("operator"),
                    t.get("value"),
                    t.get("effect"),
                    t.get("tolerationSeconds"),
                )
                try:
                    if sig in _VALID_TOLERATIONS:
                        continue
                except TypeError:  # an unhashable (wrong-typed) field: the full check names it
                    sig = ()
            _toleration(t, f"{where}[{i}]")
            if sig and len(_VALID_TOLERATIONS) < 4096:
                _VALID_TOLERATIONS.add(sig)
        return
    _items(value, where)


def _toleration(raw: Any, at: str) -> None:
    if not isinstance(raw, dict):
        raise _fail(at, f"must be a mapping, not a {_type_name(raw)}")
    t: Obj = raw
    key = _string(t.get("key"), f"{at}.key")
    op = _string(t.get("operator"), f"{at}.operator")
    val = t.get("value")
    if isinstance(val, list | dict):
        raise _fail(f"{at}.value", f"must be a string, not a {_type_name(val)}")
    if not key and op != "Exists":
        raise _fail(
            f"{at}.operator",
            f"Invalid value: {_shown(op)}: operator must be Exists when `key` is empty, "
            'which means "match all values and all keys"',
        )
    seconds = _integer(t.get("tolerationSeconds"), f"{at}.tolerationSeconds")
    if seconds is not None and not -(2**63) <= seconds <= _INT64_MAX:
        raise _fail(f"{at}.tolerationSeconds", f"Invalid value: {seconds}: must fit in an int64")
    effect = _enum(t.get("effect"), f"{at}.effect", _TAINT_EFFECTS)
    if seconds is not None and effect != "NoExecute":
        raise _fail(
            f"{at}.effect", "Invalid value: effect must be 'NoExecute' when `tolerationSeconds` is set"
        )
    if op == "Exists" and val not in (None, ""):
        raise _fail(f"{at}.operator", "Invalid value: value must be empty when `operator` is 'Exists'")
    if op not in ("", "Equal", "Exists"):
        raise _unsupported(op, f"{at}.operator", ("Equal", "Exists"))


def _spread_constraints(value: Any, where: str) -> None:
    """validateTopologySpreadConstraints."""
    seen: set[tuple[str, str]] = set()
    for at, c in _objects(value, where):
        skew = _integer(c.get("maxSkew"), f"{at}.maxSkew")
        if skew is None or skew <= 0:
            raise _fail(
                f"{at}.maxSkew", f"Invalid value: {_shown(c.get('maxSkew'))}: must be greater than zero"
            )
        key = _required_string(c.get("topologyKey"), f"{at}.topologyKey")
        when = _enum(
            c.get("whenUnsatisfiable"),
            f"{at}.whenUnsatisfiable",
            ("DoNotSchedule", "ScheduleAnyway"),
            required=True,
        )
        min_domains = _integer(c.get("minDomains"), f"{at}.minDomains")
        if min_domains is not None:
            if min_domains <= 0:
                raise _fail(f"{at}.minDomains", f"Invalid value: {min_domains}: must be greater than zero")
            if when != "DoNotSchedule":
                raise _fail(
                    f"{at}.minDomains",
                    f"Invalid value: {min_domains}: can only use minDomains if whenUnsatisfiable=DoNotSchedule",
                )
        _enum(c.get("nodeAffinityPolicy"), f"{at}.nodeAffinityPolicy", ("Honor", "Ignore"))
        _enum(c.get("nodeTaintsPolicy"), f"{at}.nodeTaintsPolicy", ("Honor", "Ignore"))
        _strings(c.get("matchLabelKeys"), f"{at}.matchLabelKeys")
        _label_selector(c.get("labelSelector"), f"{at}.labelSelector")
        if (key, when) in seen:
            raise _fail(at, f'Duplicate value: "{{{key}, {when}}}"')
        seen.add((key, when))


# ---------------------------------------------------------------------------------------------- kinds


@lru_cache(maxsize=4096)
def _str_amount(name: str, q: str) -> int:
    # A dump spells a few dozen distinct quantities across all its pods.
    return resource_value(name, q)


def _quantities(value: Any, where: str) -> None:
    """A ResourceList: valid, non-negative quantities (ValidateResourceQuantityValue) that fit the int64
    kube-scheduler computes in (a larger one would overflow there: no replay could be faithful)."""
    if value is None:
        return
    for name, q in _mapping(value, where).items():
        try:
            amount = _str_amount(str(name), q) if type(q) is str else resource_value(str(name), q)
            if 0 <= amount <= _INT64_MAX:
                if type(q) is str and type(name) is str and len(_GOOD_QUANTITIES) < 65536:
                    _GOOD_QUANTITIES.add((name, q))
                continue
        except QuantityError as e:
            at = f"{where}.{name}"
            reason = str(e)
            raise _fail(
                at, reason if len(reason) <= 200 else f"{reason[:120]}... (invalid quantity)"
            ) from None
        at = f"{where}.{name}"
        if amount < 0:
            raise _fail(at, f"Invalid value: {_shown(q)}: must be greater than or equal to 0")
        if amount > _INT64_MAX:
            raise _fail(at, f"Invalid value: {_shown(q)}: exceeds the int64 range kube-scheduler computes in")


def _resource_lists(res: Obj, where: str) -> None:
    for key in ("requests", "limits"):
        if res.get(key) is not None:
            _quantities(res[key], f"{where}.{key}")


# (resource name, quantity string) pairs already found valid: the fast path of `_container_ok`.
_GOOD_QUANTITIES: set[tuple[str, str]] = set()


def _container_ok(c: Obj) -> bool:
    """The common case of `_container` without building field paths: True when it would pass."""
    for key in ("name", "image", "restartPolicy"):
        v = c.get(key)
        if v is not None and type(v) is not str:
            return False
    res = c.get("resources")
    if res is not None:
        if type(res) is not dict or res.get("claims") is not None:
            return False
        for key in ("requests", "limits"):
            rl = res.get(key)
            if rl is not None:
                if type(rl) is not dict:
                    return False
                for item in rl.items():
                    if type(item[1]) is not str or item not in _GOOD_QUANTITIES:
                        return False
    ports = c.get("ports")
    if ports is not None:
        if type(ports) is not list:
            return False
        for p in ports:
            if type(p) is not dict:
                return False
            for key in ("hostPort", "containerPort"):
                v = p.get(key)
                if v is not None and (type(v) is not int or not 0 <= v <= 65535):
                    return False
            for key in ("protocol", "hostIP"):
                v = p.get(key)
                if v is not None and type(v) is not str:
                    return False
    return True


def _container(c: Obj, where: str) -> None:
    if _container_ok(c):
        return
    _scalar_strings(c, ("name", "image", "restartPolicy"), f"{where}.")
    if c.get("resources") is not None:
        res = _mapping(c["resources"], f"{where}.resources")
        _resource_lists(res, f"{where}.resources")
        if res.get("claims") is not None:
            _dicts(res["claims"], f"{where}.resources.claims")
    if c.get("ports") is None:
        return
    for at, p in _objects(c["ports"], f"{where}.ports"):
        for name in ("hostPort", "containerPort"):
            port = _integer(p.get(name), f"{at}.{name}")
            if port is not None and not 0 <= port <= 65535:
                raise _fail(f"{at}.{name}", f"Invalid value: {port}: must be between 1 and 65535, inclusive")
        _string(p.get("protocol"), f"{at}.protocol")
        _string(p.get("hostIP"), f"{at}.hostIP")


def validate_pod(obj: Obj, where: str) -> None:
    """The fields of a Pod the replay reads, as the API server would decode and validate them."""
    _metadata(obj, where)
    spec = obj.get("spec")
    if type(spec) is not dict:
        spec = _mapping(spec, f"{where} spec")
    validate_pod_spec(spec, where)
    status = obj.get("status")
    if status is None:
        return
    if type(status) is not dict:
        status = _mapping(status, f"{where} status")
    validate_pod_status(status, where)


def validate_pod_parts(meta: Obj, status: Obj, where: str) -> None:
    """validate_pod's checks of a pod's metadata (a mapping) and status (a mapping); the spec's are
    validate_pod_spec (load/snapshot.py checks one spec for all the replicas that share it)."""
    _metadata({"metadata": meta}, where)
    validate_pod_status(status, where)


def validate_pod_spec(spec: Obj, where: str) -> None:
    """validate_pod's checks of the spec (a mapping)."""
    for key in ("containers", "initContainers"):
        if spec.get(key) is not None:
            for at, c in _objects(spec[key], f"{where} spec.{key}"):
                _container(c, at)
    _scalar_strings(
        spec,
        ("nodeName", "schedulerName", "priorityClassName", "preemptionPolicy", "runtimeClassName"),
        f"{where} spec.",
    )
    prio = spec.get("priority")
    if prio is not None and (type(prio) is not int or not -(2**31) <= prio <= _INT32_MAX):
        prio = _integer(prio, f"{where} spec.priority")
        if prio is not None and not -(2**31) <= prio <= _INT32_MAX:
            raise _fail(f"{where} spec.priority", f"Invalid value: {prio}: must fit in an int32")
    if spec.get("hostNetwork") is not None:
        _boolean(spec["hostNetwork"], f"{where} spec.hostNetwork")
    if spec.get("nodeSelector") is not None:
        _string_map(spec["nodeSelector"], f"{where} spec.nodeSelector")
    _pod_spec_rest(spec, where)


def validate_pod_status(status: Obj, where: str) -> None:
    """validate_pod's checks of the status (a mapping)."""
    _scalar_strings(status, ("phase", "nominatedNodeName", "startTime", "resize"), f"{where} status.")
    for key in ("conditions", "resourceClaimStatuses"):
        if status.get(key) is not None:
            _dicts(status[key], f"{where} status.{key}")
    for status_key in ("containerStatuses", "initContainerStatuses"):
        if status.get(status_key) is None:
            continue
        statuses = status[status_key]
        _dicts(statuses, f"{where} status.{status_key}")
        for i, cs in enumerate(statuses):
            name = cs.get("name")
            if name is not None and type(name) is not str:
                raise _fail(
                    f"{where} status.{status_key}[{i}].name", f"must be a string, not a {_type_name(name)}"
                )
            if cs.get("resources") is None and cs.get("allocatedResources") is None:
                continue
            at = f"{where} status.{status_key}[{i}]"
            if cs.get("resources") is not None:
                _resource_lists(_mapping(cs["resources"], f"{at}.resources"), f"{at}.resources")
            _quantities(cs.get("allocatedResources"), f"{at}.allocatedResources")


def _pod_spec_rest(spec: Obj, where: str) -> None:
    """The Pod spec fields most pods lack, each checked only when present."""
    if "affinity" in spec:
        _affinity(spec["affinity"], f"{where} spec.affinity")
    if "tolerations" in spec:
        _tolerations(spec["tolerations"], f"{where} spec.tolerations")
    if "topologySpreadConstraints" in spec:
        _spread_constraints(spec["topologySpreadConstraints"], f"{where} spec.topologySpreadConstraints")
    for at, v in (
        _objects(spec["volumes"], f"{where} spec.volumes") if spec.get("volumes") is not None else ()
    ):
        _string(v.get("name"), f"{at}.name")
        for src, src_value in v.items():
            if src != "name":
                _mapping(src_value, f"{at}.{src}")
        pvc = v.get("persistentVolumeClaim")
        if pvc is not None:
            _required_string(pvc.get("claimName"), f"{at}.persistentVolumeClaim.claimName")
        for src, fields in _VOLUME_SOURCE_FIELDS.items():
            if v.get(src) is not None:
                _check_fields(v[src], fields, f"{at}.{src}")
    if spec.get("overhead") is not None:
        _quantities(spec["overhead"], f"{where} spec.overhead")
    if spec.get("resources") is not None:
        _resource_lists(_mapping(spec["resources"], f"{where} spec.resources"), f"{where} spec.resources")
    if spec.get("schedulingGates") is not None:
        for at, g in _objects(spec["schedulingGates"], f"{where} spec.schedulingGates"):
            _required_string(g.get("name"), f"{at}.name")
    if spec.get("resourceClaims") is not None:
        for at, c in _objects(spec["resourceClaims"], f"{where} spec.resourceClaims"):
            _required_string(c.get("name"), f"{at}.name")
            _scalar_strings(c, ("resourceClaimName", "resourceClaimTemplateName"), f"{at}.")


def validate_node(obj: Obj, where: str) -> None:
    """The fields of a Node the replay reads (ValidateNode, validateNodeTaints)."""
    _metadata(obj, where)
    spec = _mapping(obj.get("spec"), f"{where} spec")
    _boolean(spec.get("unschedulable"), f"{where} spec.unschedulable")
    seen: set[tuple[str, str]] = set()
    taints = spec.get("taints")
    for at, t in _objects(taints, f"{where} spec.taints") if taints is not None else ():
        key = _required_string(t.get("key"), f"{at}.key")
        val = t.get("value")
        if isinstance(val, list | dict):
            raise _fail(f"{at}.value", f"must be a string, not a {_type_name(val)}")
        effect = _enum(t.get("effect"), f"{at}.effect", _TAINT_EFFECTS, required=True)
        if (key, effect) in seen:
            raise _fail(at, f"Duplicate value: taints must be unique by key and effect pair ({key}:{effect})")
        seen.add((key, effect))
    status = _mapping(obj.get("status"), f"{where} status")
    _quantities(status.get("allocatable"), f"{where} status.allocatable")
    _quantities(status.get("capacity"), f"{where} status.capacity")
    _dicts(status.get("conditions"), f"{where} status.conditions")
    for at, img in _objects(status.get("images"), f"{where} status.images"):
        _strings(img.get("names"), f"{at}.names")
        _integer(img.get("sizeBytes"), f"{at}.sizeBytes")


# ---------------------------------------------------------------------------------------------- field specs
# Every field a reader of a raw kind reads, as a path and what the API server's types allow there. A path
# segment ending in `[]` is each item of a list, `*` each value of a mapping. Kinds: a Python type (bool,
# int, str, list, dict), or one of the named checks in _CHECKS.
FieldSpec = tuple[tuple[str, Any], ...]


def _nonneg(value: Any, where: str) -> None:
    n = _integer(value, where)
    if n is not None and not 0 <= n <= _INT64_MAX:
        raise _fail(where, f"Invalid value: {n}: must be greater than or equal to 0")


def _int_or_string(value: Any, where: str) -> None:
    if isinstance(value, str):
        return
    _integer(value, where)


def _node_selector(value: Any, where: str) -> None:
    """A core/v1 NodeSelector: nodeSelectorTerms, each a term of requirements."""
    sel = _mapping(value, where)
    for at, term in _objects(sel.get("nodeSelectorTerms"), f"{where}.nodeSelectorTerms"):
        _node_selector_term(term, at)


def _quantity_value(value: Any, where: str) -> None:
    # Named by its own field (`value`, `min`, `validValues[0]`), so the error points at it.
    parent, _, leaf = where.rpartition(".")
    _quantities({leaf or "value": value}, parent or where)


_CHECKS: dict[str, Any] = {
    "strmap": _string_map,
    "strlist": _strings,
    "nonneg": _nonneg,
    "int-or-string": _int_or_string,
    "nodeselector": _node_selector,
    "labelselector": lambda v, w: _label_selector(v, w),
    "quantities": _quantities,
    "quantity": _quantity_value,
}


def _resolve(value: Any, parts: list[str], where: str) -> list[tuple[str, Any]]:
    """(field path, value) of every match of `parts` under `value`; absent/null fields match nothing.
    Containers on the way must have their type (else the error names them)."""
    if not parts:
        return [] if value is None else [(where, value)]
    head, rest = parts[0], parts[1:]
    if head == "*":
        out: list[tuple[str, Any]] = []
        for k, v in _mapping(value, where).items():
            out += _resolve(v, rest, f"{where}.{k}")
        return out
    items = head.endswith("[]")
    key = head[:-2] if items else head
    child = _mapping(value, where).get(key) if value is not None else None
    at = f"{where}.{key}" if where else key
    if child is None:
        return []
    if not items:
        return _resolve(child, rest, at)
    out = []
    for i, item in enumerate(_items(child, at)):
        out += _resolve(item, rest, f"{at}[{i}]")
    return out


def _check_fields(obj: Any, specs: FieldSpec, where: str) -> None:
    for path, kind in specs:
        for at, value in _resolve(obj, path.split("."), where):
            if isinstance(kind, str):
                _CHECKS[kind](value, at)
                continue
            ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
            if kind is int and isinstance(value, float) and value.is_integer():
                ok = True
            if not ok:
                raise _fail(at, f"must be a {_JSON_TYPES[kind]}, not a {_type_name(value)}")


# Pod volume sources whose fields a plugin reads (VolumeRestrictions' disk conflicts, CSI limits,
# VolumeZone, the CSI translation of in-tree volumes).
_VOLUME_SOURCE_FIELDS: dict[str, FieldSpec] = {
    "gcePersistentDisk": (("pdName", str), ("partition", int), ("readOnly", bool), ("fsType", str)),
    "awsElasticBlockStore": (("volumeID", str), ("partition", int), ("readOnly", bool), ("fsType", str)),
    "iscsi": (("targetPortal", str), ("iqn", str), ("lun", int), ("readOnly", bool), ("portals", "strlist")),
    "rbd": (("monitors", "strlist"), ("pool", str), ("image", str), ("readOnly", bool)),
    "csi": (("driver", str), ("readOnly", bool), ("volumeAttributes", "strmap")),
    "azureDisk": (("diskName", str), ("diskURI", str), ("readOnly", bool)),
    "cinder": (("volumeID", str), ("readOnly", bool)),
    "ephemeral": (("volumeClaimTemplate", dict), ("volumeClaimTemplate.spec", dict)),
    "hostPath": (("path", str), ("type", str)),
}

# The devices part of a ResourceClaim spec (and of a ResourceClaimTemplate's spec.spec), as the allocator
# reads it (k8s.io/api/resource/v1 DeviceClaim).
_DEVICE_REQUEST: FieldSpec = (
    ("deviceClassName", str),
    ("allocationMode", str),
    ("count", "nonneg"),
    ("adminAccess", bool),
    ("selectors[]", dict),
    ("selectors[].cel", dict),
    ("selectors[].cel.expression", str),
    ("tolerations[]", dict),
    # DRAConsumableCapacity (v1.36+): what the request consumes of a shareable device's capacity.
    ("capacity", dict),
    ("capacity.requests", "quantities"),
)


def _device_claim(prefix: str) -> FieldSpec:
    out: list[tuple[str, Any]] = [
        (f"{prefix}", dict),
        (f"{prefix}.requests[]", dict),
        (f"{prefix}.requests[].name", str),
        (f"{prefix}.requests[].exactly", dict),
        (f"{prefix}.requests[].firstAvailable[]", dict),
        (f"{prefix}.requests[].firstAvailable[].name", str),
        (f"{prefix}.constraints[]", dict),
        (f"{prefix}.constraints[].requests", "strlist"),
        (f"{prefix}.constraints[].matchAttribute", str),
        (f"{prefix}.constraints[].distinctAttribute", str),
        (f"{prefix}.config[]", dict),
        (f"{prefix}.config[].requests", "strlist"),
    ]
    for path, kind in _DEVICE_REQUEST:
        out.append((f"{prefix}.requests[].exactly.{path}", kind))
        out.append((f"{prefix}.requests[].firstAvailable[].{path}", kind))
    return tuple(out)


_DEEP_FIELDS: dict[str, FieldSpec] = {
    "ResourceClaim": (
        *_device_claim("spec.devices"),
        ("status.allocation.nodeSelector", "nodeselector"),
        ("status.allocation.devices", dict),
        ("status.allocation.devices.results[]", dict),
        ("status.allocation.devices.results[].request", str),
        ("status.allocation.devices.results[].driver", str),
        ("status.allocation.devices.results[].pool", str),
        ("status.allocation.devices.results[].device", str),
        ("status.allocation.devices.results[].adminAccess", bool),
        ("status.allocation.devices.results[].shareID", str),
        ("status.allocation.devices.results[].consumedCapacity", "quantities"),
        ("status.reservedFor[]", dict),
        ("status.reservedFor[].resource", str),
        ("status.reservedFor[].name", str),
        ("status.reservedFor[].uid", str),
        ("status.devices[]", dict),
    ),
    "ResourceClaimTemplate": _device_claim("spec.spec.devices"),
    "ResourceSlice": (
        ("spec.driver", str),
        ("spec.allNodes", bool),
        ("spec.perDeviceNodeSelection", bool),
        ("spec.nodeSelector", "nodeselector"),
        ("spec.pool.name", str),
        ("spec.pool.generation", "nonneg"),
        ("spec.pool.resourceSliceCount", "nonneg"),
        ("spec.devices[]", dict),
        ("spec.devices[].name", str),
        ("spec.devices[].attributes", dict),
        ("spec.devices[].attributes.*", dict),
        ("spec.devices[].attributes.*.int", int),
        ("spec.devices[].attributes.*.bool", bool),
        ("spec.devices[].attributes.*.string", str),
        ("spec.devices[].attributes.*.version", str),
        ("spec.devices[].capacity", dict),
        ("spec.devices[].capacity.*", dict),
        ("spec.devices[].capacity.*.value", "quantity"),
        ("spec.devices[].nodeName", str),
        ("spec.devices[].nodeSelector", "nodeselector"),
        ("spec.devices[].allNodes", bool),
        ("spec.devices[].bindingConditions", "strlist"),
        ("spec.devices[].capacity.*.requestPolicy", dict),
        ("spec.devices[].capacity.*.requestPolicy.default", "quantity"),
        ("spec.devices[].capacity.*.requestPolicy.validValues[]", "quantity"),
        ("spec.devices[].capacity.*.requestPolicy.validRange", dict),
        ("spec.devices[].capacity.*.requestPolicy.validRange.min", "quantity"),
        ("spec.devices[].capacity.*.requestPolicy.validRange.max", "quantity"),
        ("spec.devices[].capacity.*.requestPolicy.validRange.step", "quantity"),
        ("spec.devices[].allowMultipleAllocations", bool),
        ("spec.devices[].consumesCounters[]", dict),
        ("spec.devices[].consumesCounters[].counterSet", str),
        ("spec.devices[].consumesCounters[].counters", dict),
        ("spec.devices[].consumesCounters[].counters.*", dict),
        ("spec.devices[].consumesCounters[].counters.*.value", "quantity"),
        ("spec.devices[].taints[]", dict),
        ("spec.sharedCounters[]", dict),
        ("spec.sharedCounters[].name", str),
        ("spec.sharedCounters[].counters", dict),
        ("spec.sharedCounters[].counters.*", dict),
        ("spec.sharedCounters[].counters.*.value", "quantity"),
    ),
    "DeviceClass": (
        ("spec.selectors[]", dict),
        ("spec.selectors[].cel", dict),
        ("spec.selectors[].cel.expression", str),
        ("spec.config", list),
    ),
    "StorageClass": (
        ("parameters", "strmap"),
        ("reclaimPolicy", str),
        ("allowVolumeExpansion", bool),
        ("allowedTopologies[]", dict),
        ("allowedTopologies[].matchLabelExpressions[]", dict),
        ("allowedTopologies[].matchLabelExpressions[].key", str),
        ("allowedTopologies[].matchLabelExpressions[].values", "strlist"),
    ),
    "CSIDriver": (
        ("spec.attachRequired", bool),
        ("spec.podInfoOnMount", bool),
        ("spec.storageCapacity", bool),
        ("spec.requiresRepublish", bool),
        ("spec.seLinuxMount", bool),
        ("spec.volumeLifecycleModes", "strlist"),
    ),
    "CSINode": (
        ("spec.drivers[]", dict),
        ("spec.drivers[].name", str),
        ("spec.drivers[].nodeID", str),
        ("spec.drivers[].topologyKeys", "strlist"),
        ("spec.drivers[].allocatable", dict),
        ("spec.drivers[].allocatable.count", "nonneg"),
    ),
    "CSIStorageCapacity": (
        ("nodeTopology", "labelselector"),
        ("capacity", "quantity"),
        ("maximumVolumeSize", "quantity"),
    ),
    "PersistentVolumeClaim": (
        ("spec.dataSource", dict),
        ("spec.volumeAttributesClassName", str),
        ("status.accessModes", "strlist"),
        ("status.capacity", "quantities"),
    ),
    "PersistentVolume": (
        ("spec.claimRef.namespace", str),
        ("spec.claimRef.name", str),
        ("spec.claimRef.uid", str),
        ("spec.csi.driver", str),
        ("spec.csi.volumeHandle", str),
        ("spec.csi.readOnly", bool),
        ("spec.persistentVolumeReclaimPolicy", str),
        ("spec.local", dict),
        ("spec.local.path", str),
        ("spec.gcePersistentDisk", dict),
        ("spec.gcePersistentDisk.pdName", str),
        ("spec.awsElasticBlockStore", dict),
        ("spec.awsElasticBlockStore.volumeID", str),
        ("spec.azureDisk", dict),
        ("spec.azureDisk.diskName", str),
        ("spec.cinder", dict),
        ("spec.cinder.volumeID", str),
    ),
    "VolumeAttachment": (
        ("spec", dict),
        ("spec.attacher", str),
        ("spec.nodeName", str),
        ("spec.source", dict),
        ("spec.source.persistentVolumeName", str),
        ("status", dict),
        ("status.attached", bool),
    ),
    "PodDisruptionBudget": (
        ("spec.minAvailable", "int-or-string"),
        ("spec.maxUnavailable", "int-or-string"),
        ("status.disruptionsAllowed", int),
        ("status.currentHealthy", int),
        ("status.desiredHealthy", int),
        ("status.expectedPods", int),
        ("status.disruptedPods", dict),
    ),
    "Event": (
        ("involvedObject", dict),
        ("involvedObject.kind", str),
        ("involvedObject.name", str),
        ("involvedObject.namespace", str),
        ("involvedObject.uid", str),
        ("reason", str),
        ("message", str),
        ("type", str),
        ("count", int),
        ("firstTimestamp", str),
        ("lastTimestamp", str),
        ("eventTime", str),
        ("series", dict),
        ("series.count", int),
        ("series.lastObservedTime", str),
    ),
    "ConfigMap": (("data", "strmap"),),
    "Namespace": (("status", dict), ("status.phase", str)),
    "DaemonSet": (("spec", dict), ("spec.template", dict), ("spec.selector", "labelselector")),
    "Job": (
        ("spec", dict),
        ("spec.template", dict),
        ("spec.parallelism", "nonneg"),
        ("spec.completions", "nonneg"),
    ),
    "CronJob": (("spec", dict), ("spec.jobTemplate", dict)),
}
for _kind in ("ReplicaSet", "StatefulSet", "Deployment", "ReplicationController"):
    _DEEP_FIELDS[_kind] = (("spec.replicas", "nonneg"), ("spec.template", dict))

# Raw kinds the plugins read: field path -> expected JSON type. Enough for their `.get()` chains to be safe.
_RAW_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    "PersistentVolumeClaim": (
        ("spec", dict),
        ("spec.storageClassName", str),
        ("spec.volumeName", str),
        ("spec.volumeMode", str),
        ("spec.accessModes", list),
        ("spec.resources", dict),
        ("spec.resources.requests", dict),
        ("spec.selector", dict),
        ("status", dict),
        ("status.phase", str),
    ),
    "PersistentVolume": (
        ("spec", dict),
        ("spec.storageClassName", str),
        ("spec.volumeMode", str),
        ("spec.accessModes", list),
        ("spec.capacity", dict),
        ("spec.claimRef", dict),
        ("spec.nodeAffinity", dict),
        ("spec.nodeAffinity.required", dict),
        ("spec.nodeAffinity.required.nodeSelectorTerms", list),
        ("spec.csi", dict),
        ("status", dict),
        ("status.phase", str),
    ),
    "StorageClass": (
        ("provisioner", str),
        ("volumeBindingMode", str),
        ("allowedTopologies", list),
        ("parameters", dict),
    ),
    "CSINode": (("spec", dict), ("spec.drivers", list)),
    "CSIDriver": (("spec", dict),),
    "CSIStorageCapacity": (("nodeTopology", dict), ("storageClassName", str)),
    "PriorityClass": (("value", int), ("globalDefault", bool), ("preemptionPolicy", str)),
    "PodDisruptionBudget": (("spec", dict), ("spec.selector", dict), ("status", dict)),
    "Namespace": (),
    "LimitRange": (("spec", dict), ("spec.limits", list)),
    "RuntimeClass": (("handler", str), ("overhead", dict), ("overhead.podFixed", dict), ("scheduling", dict)),
    "Service": (("spec", dict), ("spec.selector", dict)),
    "ReplicaSet": (("spec", dict), ("spec.selector", dict)),
    "ReplicationController": (("spec", dict), ("spec.selector", dict)),
    "StatefulSet": (("spec", dict), ("spec.selector", dict)),
    "Deployment": (("spec", dict), ("spec.selector", dict)),
    "ResourceClaim": (("spec", dict), ("spec.devices", dict), ("status", dict), ("status.allocation", dict)),
    "ResourceClaimTemplate": (("spec", dict), ("spec.spec", dict)),
    "ResourceSlice": (("spec", dict), ("spec.devices", list), ("spec.pool", dict), ("spec.nodeName", str)),
    "DeviceClass": (("spec", dict), ("spec.selectors", list)),
}
_JSON_TYPES = {dict: "mapping", list: "list", str: "string", int: "integer", bool: "boolean"}


def validate_object(obj: Obj, where: str) -> None:
    """A raw (unmodelled) object of a kind the replay reads: metadata, and the fields its readers expect."""
    kind = str(obj.get("kind") or "")
    _metadata(obj, where)
    for path, typ in _RAW_FIELDS.get(kind, ()):
        value: Any = obj
        for part in path.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            continue
        ok = isinstance(value, typ) and not (typ is int and isinstance(value, bool))
        if not ok:
            raise _fail(f"{where} {path}", f"must be a {_JSON_TYPES[typ]}, not a {_type_name(value)}")
    deep = _DEEP_FIELDS.get(kind)
    if deep:
        _check_fields(obj, deep, f"{where} " if where else " ")
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if kind in ("PodDisruptionBudget", "ReplicaSet", "StatefulSet", "Deployment"):
        if spec.get("selector") is not None:
            _label_selector(spec["selector"], f"{where} spec.selector")
    elif kind in ("Service", "ReplicationController"):
        _string_map(spec.get("selector"), f"{where} spec.selector")
    elif kind == "PersistentVolumeClaim":
        _quantities(_mapping(spec.get("resources"), "").get("requests"), f"{where} spec.resources.requests")
        _strings(spec.get("accessModes"), f"{where} spec.accessModes")
    elif kind == "PersistentVolume":
        _quantities(spec.get("capacity"), f"{where} spec.capacity")
        _strings(spec.get("accessModes"), f"{where} spec.accessModes")
        required = _mapping(spec.get("nodeAffinity"), "").get("required")
        if required is not None:
            at = f"{where} spec.nodeAffinity.required.nodeSelectorTerms"
            for t_at, term in _objects(_mapping(required, "").get("nodeSelectorTerms"), at):
                _node_selector_term(term, t_at)
    elif kind == "LimitRange":
        for at, item in _objects(spec.get("limits"), f"{where} spec.limits"):
            for key in ("default", "defaultRequest", "max", "min"):
                _quantities(item.get(key), f"{at}.{key}")
    elif kind == "PriorityClass":
        value = obj.get("value")
        if isinstance(value, int) and not -(2**31) <= value <= _INT32_MAX:
            raise _fail(f"{where} value", f"Invalid value: {value}: must fit in an int32")
    elif kind == "RuntimeClass":
        _quantities(_mapping(obj.get("overhead"), "").get("podFixed"), f"{where} overhead.podFixed")


def object_label(obj: Obj) -> str:
    """`Pod default/web-1`, `Node worker-1`: how errors name an object."""
    kind = str(obj.get("kind") or "object")
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name, ns = _printable(meta.get("name")), meta.get("namespace")
    if kind == "Pod":
        ns = ns or "default"
    return f"{kind} {_printable(ns)}/{name}" if ns and isinstance(ns, str) else f"{kind} {name}"


def _printable(value: Any) -> str:
    """A name as an error line can show it: invisible characters escaped, a 5,000-character name cut."""
    raw = str(value)
    text = raw if raw.isprintable() else ascii(raw)
    return text if len(text) <= 80 else f"{text[:60]}...({len(raw)} characters)"


def validate(obj: Obj) -> None:
    """Any object of a kind the replay reads; ModelError names the object and the field."""
    kind = obj.get("kind")
    # The checks name fields relative to the object (" spec.x: ..."); the object's name is only looked up
    # for an error, as most objects of a large dump are fine.
    try:
        if kind == "Pod":
            validate_pod(obj, "")
        elif kind == "Node":
            validate_node(obj, "")
        else:
            validate_object(obj, "")
    except ModelError as e:
        raise ModelError(f"{object_label(obj)}{e}") from None
