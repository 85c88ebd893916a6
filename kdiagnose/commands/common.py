"""Option parsing shared by the commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdiagnose.errors import UsageError

if TYPE_CHECKING:
    from kdiagnose.versions import Dialect

__all__ = ["dialect_option"]


def dialect_option(version: str) -> Dialect:
    """--k8s-version: a usage error (exit 2) for a release kdiagnose does not replay."""
    from kdiagnose.versions import VersionError, dialect_for

    try:
        return dialect_for(version)
    except VersionError as e:
        raise UsageError(str(e)) from None
