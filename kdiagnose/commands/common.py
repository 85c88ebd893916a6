"""Option parsing shared by the commands."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from kdiagnose.errors import UsageError

if TYPE_CHECKING:
    from kdiagnose.versions import Dialect

__all__ = ["dialect_option", "held", "keep_until_exit", "prog_name", "set_hard_exit"]

# What a command loaded (the snapshot, the fetched objects): kept referenced until the process ends, which
# cli.main ends with os._exit once the output is flushed. Freeing a 150,000-pod snapshot object by object
# takes a third of a second (benchmarks/README.md, fifteenth round) that the kernel does in a millisecond when it
# takes the process's memory back; mypy ends its runs the same way (mypy/util.py hard_exit).
# Only when cli.main runs as the program (set_hard_exit): a command called in-process (the tests, a library
# caller) keeps nothing.
held: list[object] = []
_hard_exit = False


def set_hard_exit(on: bool) -> None:
    global _hard_exit
    _hard_exit = on
    if not on:
        held.clear()


def keep_until_exit(*objects: object) -> None:
    """Keep `objects` alive to the process's end when it ends with os._exit (see `held`)."""
    if _hard_exit:
        held.extend(objects)


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
