"""Option parsing shared by the commands."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from kdiagnose.errors import UsageError

if TYPE_CHECKING:
    from kdiagnose.versions import Dialect

__all__ = ["dialect_option", "prog_name"]


def dialect_option(version: str) -> Dialect:
    """--k8s-version: a usage error (exit 2) for a release kdiagnose does not replay."""
    from kdiagnose.versions import VersionError, dialect_for

    try:
        return dialect_for(version)
    except VersionError as e:
        raise UsageError(str(e)) from None


def prog_name() -> str:
    """`kubectl kdiagnose` when run as the kubectl plugin (kubectl runs `kubectl-kdiagnose`), else `kdiagnose`:
    what help, hints and suggested commands call the program."""
    return (
        "kubectl kdiagnose" if os.path.basename(sys.argv[0]).startswith("kubectl-kdiagnose") else "kdiagnose"
    )
