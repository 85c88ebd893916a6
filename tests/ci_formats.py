"""Readers of the CI formats as their consumers read them, for every test that looks at `check` output.

- SARIF: the official OASIS SARIF 2.1.0 schema (tests/schemas/sarif-schema-2.1.0.json, draft-04), with
  format checks (uri, uri-reference, date-time), through jsonschema.
- JUnit: the Jenkins xUnit plugin's junit-10.xsd (tests/schemas/junit-10.xsd), through xmlschema.
- GitHub: a strict parser of workflow commands (docs.github.com "Workflow commands for GitHub Actions";
  the runner's ActionCommand parser): `::COMMAND PROPS::MESSAGE`, where PROPS are `k=v` joined by `,`.
  Every `%` in a message must begin `%25`, `%0D` or `%0A`; every `%` in a property value must begin one of
  those or `%3A`/`%2C`, and a value holds no raw `:` `,` CR or LF; annotation commands (error, warning,
  notice) take only file, line, endLine, col, endColumn and title, each once; line and column numbers are
  positive integers, a column needs a line, and a file is a relative path (GitHub maps it onto the
  repository; an absolute one maps to nothing).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parent / "schemas"

__all__ = [
    "GithubCommand",
    "github_commands",
    "junit_cases",
    "unescape_data",
    "unescape_property",
    "validate_junit",
    "validate_sarif",
]


@cache
def _sarif_validator() -> Any:
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def validate_sarif(doc: dict[str, Any]) -> None:
    """Raise unless `doc` is valid SARIF 2.1.0 (every error listed)."""
    errors = sorted(_sarif_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


@cache
def _junit_schema() -> Any:
    import xmlschema  # type: ignore[import-untyped,unused-ignore]

    return xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))


def validate_junit(text: str) -> ET.Element:
    """Raise unless `text` is valid against junit-10.xsd; the parsed root."""
    _junit_schema().validate(text)
    return ET.fromstring(text)


def junit_cases(text: str) -> list[ET.Element]:
    return validate_junit(text).findall("testsuite/testcase")


# ---------------------------------------------------------------------------------------------- GitHub

_ANNOTATIONS = {"error", "warning", "notice"}
_ANNOTATION_PROPS = {"file", "line", "endLine", "col", "endColumn", "title"}
_NUMBERS = {"line", "endLine", "col", "endColumn"}
_COMMAND = re.compile(r"^::(?P<cmd>[A-Za-z-]+)(?: (?P<props>[^:\r\n]*))?::(?P<msg>.*)$")
_DATA_ESCAPE = re.compile(r"%(?!25|0D|0A)")
_PROPERTY_ESCAPE = re.compile(r"%(?!25|0D|0A|3A|2C)")


def unescape_data(s: str) -> str:
    # The runner's command parser (actions/runner ActionCommand.cs): %0D, %0A, then %25.
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(s: str) -> str:
    return (
        s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


@dataclass(frozen=True)
class GithubCommand:
    command: str
    properties: dict[str, str]  # unescaped
    message: str  # unescaped


def _command(line: str) -> GithubCommand:
    m = _COMMAND.match(line)
    assert m is not None, f"not a workflow command: {line!r}"
    cmd, props_text, msg = m.group("cmd"), m.group("props"), m.group("msg")
    assert cmd in _ANNOTATIONS, f"unknown command {cmd!r}: {line!r}"
    assert "\r" not in msg, line
    assert not _DATA_ESCAPE.search(msg), f"unescaped % in the message: {line!r}"
    props: dict[str, str] = {}
    for item in (props_text or "").split(",") if props_text else []:
        key, eq, value = item.partition("=")
        assert eq, f"property without '=': {item!r} in {line!r}"
        assert key in _ANNOTATION_PROPS, f"unknown property {key!r}: {line!r}"
        assert key not in props, f"property {key!r} twice: {line!r}"
        assert not _PROPERTY_ESCAPE.search(value), f"unescaped % in {key}: {line!r}"
        props[key] = unescape_property(value)
    for key in _NUMBERS & set(props):
        assert props[key].isdigit() and int(props[key]) >= 1, f"{key}={props[key]!r}: {line!r}"
    if "col" in props or "endColumn" in props:
        assert "line" in props, f"a column without a line: {line!r}"
    if "file" in props:
        f = props["file"]
        assert f and not f.startswith("/") and "\\" not in f and ".." not in f.split("/"), f"file {f!r}"
    return GithubCommand(cmd, props, unescape_data(msg))


def github_commands(text: str) -> tuple[list[GithubCommand], list[str]]:
    """(the workflow commands, the other lines) of a `-o github` output; AssertionError on bad syntax."""
    assert text.endswith("\n"), "output must end with a newline"
    commands, plain = [], []
    for line in text[:-1].split("\n"):
        assert "\r" not in line, f"raw CR: {line!r}"
        if line.startswith("::"):
            commands.append(_command(line))
        else:
            plain.append(line)
    return commands, plain
