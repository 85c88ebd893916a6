"""Strict decoding of a KubeSchedulerConfiguration, as kube-scheduler's codec does it.

Mirrors k8s.io/kube-scheduler/config/v1/types.go (+ types_pluginargs.go) field by field: an unknown field
is a strict decoding error (`strict decoding error: unknown field "profiles[0].foo"`), a wrongly typed value
a json unmarshal error. Plugin args are decoded separately, per plugin, only for in-tree plugins with an
Args type (`decodeNestedObjects`); an out-of-tree plugin's args stay raw.
"""

from __future__ import annotations

import re
from typing import Any

from kdiagnose.schedconfig.defaults import POINTS

__all__ = ["ARGS_SCHEMAS", "DecodeError", "decode_args", "decode_config"]

GROUP_VERSION = "kubescheduler.config.k8s.io/v1"

Spec = Any  # str (scalar kind) | ("list", Spec) | ("map", Spec) | dict[str, Spec] (a struct)


class DecodeError(Exception):
    """The decoder's error text (load stage)."""


_TYPE_META: dict[str, Spec] = {"apiVersion": "string", "kind": "string"}
_PLUGIN: dict[str, Spec] = {"name": "string", "weight": "int32"}
_PLUGIN_SET: dict[str, Spec] = {"enabled": ("list", _PLUGIN), "disabled": ("list", _PLUGIN)}
_PROFILE: dict[str, Spec] = {
    "schedulerName": "string",
    "percentageOfNodesToScore": "int32",
    "plugins": {p: _PLUGIN_SET for p in POINTS},
    "pluginConfig": ("list", {"name": "string", "args": "raw"}),
}
_EXTENDER: dict[str, Spec] = {
    "urlPrefix": "string",
    "filterVerb": "string",
    "preemptVerb": "string",
    "prioritizeVerb": "string",
    "weight": "int64",
    "bindVerb": "string",
    "enableHTTPS": "bool",
    "tlsConfig": {
        "insecure": "bool",
        "serverName": "string",
        "certFile": "string",
        "keyFile": "string",
        "caFile": "string",
        "certData": "string",
        "keyData": "string",
        "caData": "string",
    },
    "httpTimeout": "duration",
    "nodeCacheCapable": "bool",
    "managedResources": ("list", {"name": "string", "ignoredByScheduler": "bool"}),
    "ignorable": "bool",
}
CONFIG_SCHEMA: dict[str, Spec] = {
    **_TYPE_META,
    "parallelism": "int32",
    "leaderElection": {
        "leaderElect": "bool",
        "leaseDuration": "duration",
        "renewDeadline": "duration",
        "retryPeriod": "duration",
        "resourceLock": "string",
        "resourceName": "string",
        "resourceNamespace": "string",
    },
    "clientConnection": {
        "kubeconfig": "string",
        "acceptContentTypes": "string",
        "contentType": "string",
        "qps": "float",
        "burst": "int32",
    },
    "enableProfiling": "bool",
    "enableContentionProfiling": "bool",
    "percentageOfNodesToScore": "int32",
    "podInitialBackoffSeconds": "int64",
    "podMaxBackoffSeconds": "int64",
    "profiles": ("list", _PROFILE),
    "extenders": ("list", _EXTENDER),
    "delayCacheUntilActive": "bool",
}

# k8s.io/api/core/v1 types used inside plugin args.
_REQUIREMENT: dict[str, Spec] = {"key": "string", "operator": "string", "values": ("list", "string")}
_LABEL_SELECTOR: dict[str, Spec] = {
    "matchLabels": ("map", "string"),
    "matchExpressions": ("list", _REQUIREMENT),
}
_NODE_SELECTOR_TERM: dict[str, Spec] = {
    "matchExpressions": ("list", _REQUIREMENT),
    "matchFields": ("list", _REQUIREMENT),
}
_NODE_AFFINITY: dict[str, Spec] = {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": ("list", _NODE_SELECTOR_TERM)},
    "preferredDuringSchedulingIgnoredDuringExecution": (
        "list",
        {"weight": "int32", "preference": _NODE_SELECTOR_TERM},
    ),
}
_SPREAD_CONSTRAINT: dict[str, Spec] = {
    "maxSkew": "int32",
    "topologyKey": "string",
    "whenUnsatisfiable": "string",
    "labelSelector": _LABEL_SELECTOR,
    "minDomains": "int32",
    "nodeAffinityPolicy": "string",
    "nodeTaintsPolicy": "string",
    "matchLabelKeys": ("list", "string"),
}
_RESOURCE_SPEC: dict[str, Spec] = {"name": "string", "weight": "int64"}
_SHAPE: Spec = ("list", {"utilization": "int32", "score": "int32"})

# Plugins whose `<Name>Args` kind is registered in the v1 scheme (types_pluginargs.go).
ARGS_SCHEMAS: dict[str, dict[str, Spec]] = {
    "DefaultPreemption": {
        **_TYPE_META,
        "minCandidateNodesPercentage": "int32",
        "minCandidateNodesAbsolute": "int32",
    },
    "InterPodAffinity": {
        **_TYPE_META,
        "hardPodAffinityWeight": "int32",
        "ignorePreferredTermsOfExistingPods": "bool",
    },
    "NodeResourcesFit": {
        **_TYPE_META,
        "ignoredResources": ("list", "string"),
        "ignoredResourceGroups": ("list", "string"),
        "scoringStrategy": {
            "type": "string",
            "resources": ("list", _RESOURCE_SPEC),
            "requestedToCapacityRatio": {"shape": _SHAPE},
        },
    },
    "PodTopologySpread": {
        **_TYPE_META,
        "defaultConstraints": ("list", _SPREAD_CONSTRAINT),
        "defaultingType": "string",
    },
    "NodeResourcesBalancedAllocation": {**_TYPE_META, "resources": ("list", _RESOURCE_SPEC)},
    "VolumeBinding": {**_TYPE_META, "bindTimeoutSeconds": "int64", "shape": _SHAPE},
    "NodeAffinity": {**_TYPE_META, "addedAffinity": _NODE_AFFINITY},
    "DynamicResources": {**_TYPE_META, "filterTimeout": "duration"},
}

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_DURATION_RE = re.compile(
    r"^[-+]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))*$"
)


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


class _Decoder:
    def __init__(self) -> None:
        self.unknown: list[str] = []

    def _type_error(self, value: Any, go_type: str, path: str) -> DecodeError:
        shown = f" {value}" if _json_kind(value) == "number" else ""
        return DecodeError(
            f"json: cannot unmarshal {_json_kind(value)}{shown} into Go struct field {path} of type {go_type}"
        )

    def decode(self, spec: Spec, value: Any, path: str) -> Any:
        if value is None:
            return None  # JSON null leaves the Go zero value
        if isinstance(spec, dict):
            if not isinstance(value, dict):
                raise self._type_error(value, "struct", path)
            out: dict[str, Any] = {}
            for k, v in value.items():
                key = str(k)
                sub = f"{path}.{key}" if path else key
                if key not in spec:
                    self.unknown.append(sub)
                    continue
                out[key] = self.decode(spec[key], v, sub)
            return out
        if isinstance(spec, tuple):
            kind, item = spec
            if kind == "list":
                if not isinstance(value, list):
                    raise self._type_error(value, "[]" + _go_name(item), path)
                # A null element of a list is its element's Go zero value (an empty struct, "", 0, false).
                return [
                    self.decode(item, v, f"{path}[{i}]") if v is not None else _zero(item)
                    for i, v in enumerate(value)
                ]
            if not isinstance(value, dict):
                raise self._type_error(value, "map[string]" + _go_name(item), path)
            return {str(k): self.decode(item, v, f"{path}.{k}") for k, v in value.items()}
        return self._scalar(spec, value, path)

    def _scalar(self, spec: str, value: Any, path: str) -> Any:
        if spec == "raw":
            return value
        if spec == "string":
            if not isinstance(value, str):
                raise self._type_error(value, "string", path)
            return value
        if spec == "bool":
            if not isinstance(value, bool):
                raise self._type_error(value, "bool", path)
            return value
        if spec in _INT_RANGES:
            lo, hi = _INT_RANGES[spec]
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise self._type_error(value, spec, path)
            return value
        if spec == "float":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise self._type_error(value, "float32", path)
            return float(value)
        if spec == "duration":
            if not isinstance(value, str):
                raise self._type_error(value, "string", path)
            if value != "0" and not _DURATION_RE.match(value):
                raise DecodeError(f'time: invalid duration "{value}"')
            return value
        raise AssertionError(spec)


def _zero(spec: Spec) -> Any:
    if isinstance(spec, dict):
        return {}
    if isinstance(spec, tuple):
        return [] if spec[0] == "list" else {}
    return {"string": "", "bool": False, "float": 0.0, "duration": "0", "raw": None}.get(spec, 0)


def _go_name(spec: Spec) -> str:
    return spec if isinstance(spec, str) else "struct"


def _strict_error(parts: list[str]) -> DecodeError:
    return DecodeError("strict decoding error: " + ", ".join(parts))


def decode_config(doc: Any) -> dict[str, Any]:
    """The configuration's top level (plugin args left raw); raises DecodeError like the codec."""
    if not isinstance(doc, dict):
        raise DecodeError(
            "couldn't get version/kind; json parse error: the configuration is not a YAML mapping"
        )
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not kind:
        raise DecodeError("Object 'Kind' is missing in the configuration")
    if not api_version:
        raise DecodeError("Object 'apiVersion' is missing in the configuration")
    if api_version != GROUP_VERSION or kind != "KubeSchedulerConfiguration":
        raise DecodeError(
            f'no kind "{kind}" is registered for version "{api_version}" in scheme '
            '"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme/scheme.go:30"'
        )
    d = _Decoder()
    out: dict[str, Any] = d.decode(CONFIG_SCHEMA, doc, "")
    unknown = [f'unknown field "{p}"' for p in d.unknown]
    # KubeSchedulerConfiguration.DecodeNestedObjects: args of in-tree plugins, strictly.
    profiles = out.get("profiles") or []
    for i, prof in enumerate(profiles):
        if prof is None:
            profiles[i] = prof = {}  # a null list element decodes to the zero value, as in Go
        configs = prof.get("pluginConfig") or []
        for j, pc in enumerate(configs):
            if pc is None:
                configs[j] = pc = {}
            name = pc.get("name") or ""
            if name not in ARGS_SCHEMAS:
                continue
            try:
                pc["args"], inner = decode_args(name, pc.get("args"))
            except DecodeError as e:
                raise DecodeError(
                    f"decoding .profiles[{i}].pluginConfig[{j}]: decoding args for plugin {name}: {e}"
                ) from None
            if inner:
                unknown.append(
                    f"decoding .profiles[{i}].pluginConfig[{j}]: strict decoding error: decoding args for plugin "
                    f"{name}: strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in inner)
                )
    if unknown:
        raise _strict_error(unknown)
    return out


def decode_args(name: str, args: Any) -> tuple[dict[str, Any], list[str]]:
    """One plugin's args, decoded into its Args type; returns them and the unknown fields found."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise DecodeError(f"json: cannot unmarshal {_json_kind(args)} into Go value of type v1.{name}Args")
    kind = args.get("kind")
    if kind is not None and kind != f"{name}Args":
        raise DecodeError(
            f"args for plugin {name} were not of type {name}Args.kubescheduler.config.k8s.io, got {kind}"
        )
    d = _Decoder()
    out: dict[str, Any] = d.decode(ARGS_SCHEMAS[name], args, "")
    out.pop("apiVersion", None)
    out.pop("kind", None)
    return out, d.unknown
