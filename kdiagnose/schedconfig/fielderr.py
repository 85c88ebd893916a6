"""Field errors worded as k8s.io/apimachinery/pkg/util/validation/field/errors.go prints them.

Also the aggregate's `[a, b]` joining (util/errors/errors.go) and the qualified-name checks
(util/validation/validation.go) the scheduler's argument validation uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DUPLICATE",
    "FORBIDDEN",
    "INVALID",
    "NOT_SUPPORTED",
    "PATH_VALUE",
    "REQUIRED",
    "FieldError",
    "aggregate",
    "invalid",
    "is_qualified_name",
    "label_name_errors",
    "label_value_errors",
    "not_supported",
]

INVALID = "Invalid value"
REQUIRED = "Required value"
NOT_SUPPORTED = "Unsupported value"
DUPLICATE = "Duplicate value"
FORBIDDEN = "Forbidden"


class _PathValue:
    """A *field.Path passed as a bad value: json.Marshal of its unexported fields prints `{}`."""


PATH_VALUE = _PathValue()


def _go_value(v: Any) -> str:
    """ErrorBody's rendering: %v for numbers and bools, %q for strings, json.Marshal for the rest."""
    if isinstance(v, _PathValue):
        return "{}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if v is None:
        return "null"
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class FieldError:
    type: str
    field: str
    bad_value: Any = None
    detail: str = ""

    def __str__(self) -> str:
        if self.type in (REQUIRED, FORBIDDEN):
            body = self.type
        else:
            body = f"{self.type}: {_go_value(self.bad_value)}"
        if self.detail:
            body += f": {self.detail}"
        return f"{self.field}: {body}"


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(INVALID, path, value, detail)


def not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(json.dumps(v) for v in valid)
    return FieldError(NOT_SUPPORTED, path, value, f"supported values: {quoted}" if quoted else "")


def aggregate(errors: Iterable[object]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, several as `[a, b]` without repeats."""
    seen: list[str] = []
    for e in errors:
        msg = str(e)
        if msg not in seen:
            seen.append(msg)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


# util/validation/validation.go
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}$")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return (
        msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"
    )


def _dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """IsQualifiedName: an optional DNS-subdomain prefix, a slash, and a name of at most 63 characters."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in _dns1123_subdomain(prefix)]
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_name_errors(value: str, path: str) -> list[FieldError]:
    """metav1validation.ValidateLabelName."""
    return [invalid(path, value, m) for m in is_qualified_name(value)]


_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")


def label_value_errors(value: str) -> list[str]:
    """IsValidLabelValue: at most 63 characters, the qualified-name alphabet, or empty."""
    errs: list[str] = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
