"""Bytes -> documents: JSON through orjson, YAML through yaml-rs (Rust) with PyYAML's C/pure loader as the
fallback. Both YAML paths are set up to agree with each other and with what the API server would store:
- timestamps stay strings (yaml-rs would turn even a *quoted* RFC 3339 string into a datetime);
- `yes`/`no`/`on`/`off` stay strings (YAML 1.2 core schema, as yaml-rs does; PyYAML is told the same);
- duplicate keys: the last one wins, as the API server's JSON decoder does (kubectl only warns);
- merge keys (`<<: *anchor`) are expanded (yaml-rs leaves them as a literal `<<` key);
- numbers such as `cpu: 1e3` may arrive as floats; model.quantity reads them from their literal text.
Every failure names the file (and document / line where known) and becomes a one-line InputError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from kdiagnose.errors import InputError
from kdiagnose.load.limits import (
    MAX_DEPTH,
    MAX_NUMBER_DIGITS,
    MAX_SHAPELESS_DOCS,
    LimitError,
    check_json_depth,
    check_value,
    check_yaml_text,
    value_error_text,
)
from kdiagnose.load.raw import where

__all__ = ["DocCheck", "Shapes", "is_tar_bytes", "parse_bytes", "parse_text"]

DocCheck = Callable[[Any, int, int], None]  # (document, 0-based index, 1-based line): raises to reject

# `kubectl cluster-info dump` to stdout interleaves container logs between the JSON documents.
_LOG_START = "==== START logs for"
_LOG_END = "==== END logs for"
_YAML_ERR_RE = re.compile(r"line (\d+), column (\d+)")


# ---------------------------------------------------------------------------------------------- JSON


def _json_error(source: str, e: Any) -> InputError:
    return InputError(f"{where(source, None, getattr(e, 'lineno', 0))}: invalid JSON: {getattr(e, 'msg', e)}")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"integer with more than {MAX_NUMBER_DIGITS} digits")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _decode_json(text: str, source: str, check: DocCheck | None = None) -> list[Any]:
    import orjson

    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    else:
        check_json_depth(value, text, lambda: source)
        if check is not None:
            check(value, 0, 0)
        return [value]
    # A stream of concatenated JSON values (`kubectl get -o json` of several kinds, `kubectl cluster-info dump`
    # to stdout, which interleaves container logs between the Lists); numbers orjson refuses (over 64 bits).
    import json

    dec = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float, parse_constant=_no_constant)
    out: list[Any] = []
    pos = 0
    n = len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos >= n:
            return out
        if text.startswith(_LOG_START, pos):
            end = text.find(_LOG_END, pos)
            if end < 0:
                return out
            nl = text.find("\n", end)
            pos = n if nl < 0 else nl + 1
            continue
        start = pos
        try:
            value, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise _json_error(source, e) from None
        except ValueError as e:  # from the number hooks above
            line = text.count("\n", 0, pos) + 1
            raise LimitError(f"{where(source, None, line)}: invalid JSON: {e}") from None
        except RecursionError:
            # No Kubernetes object nests this deep; the stdlib decoder recurses per level.
            raise LimitError(f"{source}: JSON nested too deeply to be a Kubernetes object") from None
        if isinstance(value, dict | list):
            check_json_depth(value, text[start:pos] if pos - start < 1 << 20 else text, lambda: source)
        if check is not None:
            check(value, len(out), 0)
        out.append(value)


# ---------------------------------------------------------------------------------------------- YAML


def _doc_starts(text: str) -> list[int]:
    """1-based line where each YAML document starts (as yaml-rs counts documents)."""
    starts: list[int] = []
    implicit = False
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith("---") and (len(line) == 3 or line[3] in " \t"):
            starts.append(i)
        elif not starts and not implicit:
            s = line.strip()
            if s and not s.startswith("#") and not line.startswith("%"):
                implicit = True
                starts.append(i)
    return starts or [1]


def _expand_merge_keys(value: Any) -> Any:
    """YAML 1.1 merge keys (`<<: *base`), which go-yaml and PyYAML honour and yaml-rs does not."""
    if isinstance(value, list):
        return [_expand_merge_keys(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    merged = value.get("<<")
    if isinstance(merged, dict | list):
        for m in merged if isinstance(merged, list) else [merged]:
            if isinstance(m, dict):
                for k, v in _expand_merge_keys(m).items():
                    out.setdefault(k, v)
    for k, v in value.items():
        if k == "<<" and isinstance(merged, dict | list):
            continue
        out[k] = _expand_merge_keys(v)
    return out


def _yaml_error(source: str, starts: list[int], line: int, reason: str) -> InputError:
    doc = None
    if len(starts) > 1 and line > 0:
        doc = sum(1 for s in starts if s <= line) - 1
        doc = max(doc, 0)
    return InputError(f"{where(source, doc, line)}: invalid YAML: {reason}")


_DOC_MARK = re.compile(r"(?m)^---(?=[ \t\r\n]|$)")
_DOC_END_OR_DIRECTIVE = re.compile(r"(?m)^(?:%|\.\.\.(?:[ \t\r\n]|$))")


_FIRST_CONTENT = re.compile(r"(?m)^[ \t]*[^\s#]")


def _first_content_line(text: str) -> int:
    """1-based line of the first line that is neither blank nor a comment (a document's start)."""
    m = _FIRST_CONTENT.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _may_start_line(text: str, *prefixes: str) -> bool:
    """Whether a line of `text` may start with one of `prefixes`: the `(?m)^` patterns above tried at every
    position cost ~20 ns a character (~190 ms per 8 MB batch of a streamed dump); a substring search, in C,
    rules most texts out first. (`^` in MULTILINE mode matches at the start and after each "\\n" only.)"""
    return text.startswith(prefixes) or any("\n" + p in text for p in prefixes)


def _yaml_chunks(text: str) -> Iterator[tuple[str, int, bool]]:
    """(text, first line, more follow) of each document, split at `---` lines without building them all.
    (A `---` at column 0 ends any document, block scalars included: YAML's c-forbidden lines.) A file with
    directives or `...` end markers is one chunk for the parser to split."""
    if _may_start_line(text, "%", "...") and _DOC_END_OR_DIRECTIVE.search(text):
        yield text, _first_content_line(text), False
        return
    marks = _DOC_MARK.finditer(text) if _may_start_line(text, "---") else iter(())
    first = next(marks, None)
    if first is None:
        yield text, _first_content_line(text), False
        return
    head = text[: first.start()]
    line = 1
    if _FIRST_CONTENT.search(head):
        yield head, _first_content_line(head), True
    line += head.count("\n")
    start = first.start()
    for m in marks:
        yield text[start : m.start()], line, True
        line += text.count("\n", start, m.start())
        start = m.start()
    yield text[start:], line, False


def _decode_yaml(
    text: str, source: str, check: DocCheck | None = None, *, string_keys: bool = True
) -> tuple[list[Any], list[int] | None]:
    """Documents (None for empty ones) and the line each starts at, decoded one at a time within the
    limits of load/limits.py; `check` sees each document as it is decoded. `string_keys` False: scalar
    mapping keys are left as the parser made them (check_value's key pass skipped: a caller that writes the
    documents as JSON with orjson, which refuses a key that is not a string, parses again with it on)."""
    try:
        import yaml_rs  # noqa: F401
    except ImportError:
        rs = False
    else:
        rs = True
    docs: list[Any] = []
    lines: list[int] = []
    for chunk, line0, more in _yaml_chunks(text):
        multi = more or bool(docs)
        index = len(docs)

        def at(line: int, index: int = index, multi: bool = multi, line0: int = line0) -> str:
            return where(
                source, index if multi else None, line0 - 1 + line if line > 0 else line0 if multi else 0
            )

        check_yaml_text(chunk, source, at, flow=not rs)
        found = _decode_yaml_rs(chunk, at) if rs else _decode_yaml_pyyaml(chunk, source, [1], at)
        for doc in found:
            doc = check_value(doc, lambda: at(0), keys=string_keys)
            if isinstance(doc, dict | list) and "<<" in chunk:
                doc = _expand_merge_keys(doc)
            if check is not None:
                check(doc, len(docs), line0)
            docs.append(doc)
            lines.append(line0)
    return docs, (lines if len(lines) == len(docs) and all(lines) else None)


def _decode_yaml_rs(text: str, at: Callable[[int], str]) -> list[Any]:
    import yaml_rs

    try:
        res = yaml_rs.loads(
            text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins
        )
    except yaml_rs.YAMLDecodeError as e:
        msg = str(e)
        lines = [x for x in msg.splitlines() if x.strip()]
        m = _YAML_ERR_RE.search(lines[0]) if lines else None
        reason = lines[-1].strip() if lines else "parse error"
        if m and len(lines) == 1:
            reason = "parse error"
        if "recursion limit" in reason:  # yaml-rs' own bound on flow nesting
            raise LimitError(
                f"{at(int(m.group(1)) if m else 0)}: nested more than {MAX_DEPTH} levels deep"
            ) from None
        raise InputError(f"{at(int(m.group(1)) if m else 0)}: invalid YAML: {reason}") from None
    except (ValueError, RecursionError, OverflowError) as e:  # alias-expansion limits, 4,300-digit integers
        raise InputError(f"{at(0)}: invalid YAML: {value_error_text(e)}") from None
    except TypeError:  # `? {a: 1}` / `? [a]`: a mapping or list as a key, which a Python dict cannot hold
        raise LimitError(f"{at(0)}: a mapping or list as a mapping key (keys must be strings)") from None
    if isinstance(res, list) and _DOC_END_OR_DIRECTIVE.search(text) and len(_doc_starts(text)) > 1:
        return res  # several documents in one chunk (after `...` or directives)
    return [res]


def _pyyaml_loader() -> Any:
    """SafeLoader (C if available) resolving booleans and timestamps as yaml-rs does (YAML 1.2 core)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc,valid-type]
        pass

    resolvers: dict[Any, list[Any]] = {}
    for ch, items in base.yaml_implicit_resolvers.items():
        kept = [
            (tag, rx)
            for tag, rx in items
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
        ]
        if kept:
            resolvers[ch] = kept
    Loader.yaml_implicit_resolvers = resolvers
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
    )
    # YAML 1.2 floats without a dot (`1e3`), which YAML 1.1 leaves as strings.
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float", re.compile(r"^[-+]?(?:[0-9]+)(?:[eE][-+]?[0-9]+)$"), list("-+0123456789")
    )
    return Loader


def _decode_yaml_pyyaml(
    text: str, source: str, starts: list[int], at: Callable[[int], str] | None = None
) -> list[Any]:
    import yaml

    try:
        return list(yaml.load_all(text, Loader=_pyyaml_loader()))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        reason = str(getattr(e, "problem", None) or e)
        if at is not None:
            raise InputError(f"{at(line)}: invalid YAML: {reason}") from None
        raise _yaml_error(source, starts, line, reason) from None
    except (ValueError, RecursionError, OverflowError) as e:
        raise InputError(f"{source}: invalid YAML: {value_error_text(e)}") from None


def is_tar_bytes(data: bytes) -> bool:
    return len(data) > 262 and data[257:262] == b"ustar"


def parse_text(data: bytes, source: str) -> list[Any]:
    """Decode one file's bytes into its top-level documents (empty documents dropped)."""
    return [d for d in parse_bytes(data, source)[0] if d is not None]


def parse_bytes(
    data: bytes, source: str, check: DocCheck | None = None
) -> tuple[list[Any], list[int] | None]:
    """Documents and the line each starts at (None when unsure); `check` sees each document as it is
    decoded (Shapes rejects documents of no Kubernetes shape before the rest are built)."""
    if b"\x00" in data[:8192]:
        raise InputError(f"{source}: binary file, not YAML or JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{source}: not UTF-8 text (binary file?) at byte {e.start}") from None
    stripped = text.lstrip()
    if not stripped:
        return [], None
    if stripped[0] in "{[":
        try:
            return _decode_json(text, source, check), None
        except LimitError:
            raise
        except InputError:
            if source.endswith(".json"):
                raise
            # JSON is YAML: a flow-style YAML file or a JSON with YAML-only syntax; YAML gives the error.
    return _decode_yaml(text, source, check)


class Shapes:
    """Rejects a file's documents of no Kubernetes shape as they are decoded, not after all are built."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.shapeless = 0

    def __call__(self, doc: Any, index: int, line: int) -> None:
        if isinstance(doc, list):
            return  # items are checked by iter_documents; huge top-level sequences are streamed (fast.py)
        if isinstance(doc, dict) and isinstance(doc.get("kind"), str):
            return
        if doc is not None and not isinstance(doc, dict):
            raise InputError(
                f"{where(self.source, index, line)}: not a Kubernetes object "
                f"(a {type(doc).__name__}, expected a mapping)"
            )
        self.shapeless += 1
        if self.shapeless > MAX_SHAPELESS_DOCS:
            raise LimitError(
                f"{where(self.source, index, line)}: more than {MAX_SHAPELESS_DOCS} documents that are "
                "empty or have no kind: not Kubernetes objects"
            )
