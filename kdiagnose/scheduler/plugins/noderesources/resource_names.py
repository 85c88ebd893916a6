"""Resource-name classes (pkg/apis/core/v1/helper/helpers.go, scheduler/util IsScalarResourceName)."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["is_extended_resource_name", "is_scalar_resource_name"]

_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _is_qualified_name(value: str) -> bool:
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.match(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and bool(_NAME_RE.match(name))


def _is_prefixed_native(name: str) -> bool:
    return "kubernetes.io/" in name


@lru_cache(maxsize=1024)
def is_extended_resource_name(name: str) -> bool:
    """Not native (has a `/` and no `kubernetes.io/`), not `requests.*`, and a qualified name as quota sees it."""
    if "/" not in name or _is_prefixed_native(name) or name.startswith("requests."):
        return False
    return _is_qualified_name("requests." + name)


@lru_cache(maxsize=1024)
def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages-*, prefixed native (`*kubernetes.io/*`) or attachable-volumes-*."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or _is_prefixed_native(name)
        or name.startswith("attachable-volumes-")
    )
