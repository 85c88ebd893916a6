"""Process exit codes, shared by every command."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    OK = 0  # every diagnosed pod is schedulable (check: every workload passes the policy)
    UNSCHEDULABLE = 1  # at least one pod cannot be scheduled (check: the --fail-on policy failed)
    USAGE = 2  # bad flags, arguments or scheduler configuration
    ERROR = 3  # unreadable input, unreachable cluster, or another runtime error
