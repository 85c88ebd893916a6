"""Resource-name classes (pkg/apis/core/v1/helper/helpers.go, scheduler/util IsScalarResourceName)."""

from __future__ import annotations

from functools import lru_cache

from kdiagnose.scheduler.plugins.helper.node_selector import is_qualified_name

__all__ = ["is_extended_resource_name", "is_scalar_resource_name"]


def _is_prefixed_native(name: str) -> bool:
    return "kubernetes.io/" in name


@lru_cache(maxsize=1024)
def is_extended_resource_name(name: str) -> bool:
    """Not native (has a `/` and no `kubernetes.io/`), not `requests.*`, and a qualified name as quota sees it."""
    if "/" not in name or _is_prefixed_native(name) or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


@lru_cache(maxsize=1024)
def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages-*, prefixed native (`*kubernetes.io/*`) or attachable-volumes-*."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or _is_prefixed_native(name)
        or name.startswith("attachable-volumes-")
    )
