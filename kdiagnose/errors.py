"""Errors kdiagnose reports as one line and an exit code, never as a traceback.

KdiagnoseError
├── UsageError            bad flags or arguments                         exit 2
├── ConfigError           an invalid KubeSchedulerConfiguration          exit 2
├── InputError            a file or object that cannot be read           exit 3
│   └── QuantityInputError  an invalid quantity, naming object and field
└── ClusterError          API unreachable, timeout, RBAC on pods/nodes   exit 3
"""

from __future__ import annotations

from kdiagnose.exitcodes import ExitCode

__all__ = ["ClusterError", "ConfigError", "InputError", "KdiagnoseError", "UsageError"]


class KdiagnoseError(Exception):
    exit_code: ExitCode = ExitCode.ERROR
    hint: str = ""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint


class UsageError(KdiagnoseError):
    exit_code = ExitCode.USAGE


class ConfigError(KdiagnoseError):
    exit_code = ExitCode.USAGE


class InputError(KdiagnoseError):
    exit_code = ExitCode.ERROR


class ClusterError(KdiagnoseError):
    exit_code = ExitCode.ERROR
