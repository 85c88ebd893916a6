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
from typing import Any

from kdiagnose.errors import InputError
from kdiagnose.load.raw import where

__all__ = ["is_tar_bytes", "parse_bytes", "parse_text"]

# `kubectl cluster-info dump` to stdout interleaves container logs between the JSON documents.
_LOG_START = "==== START logs for"
_LOG_END = "==== END logs for"
_YAML_ERR_RE = re.compile(r"line (\d+), column (\d+)")


# ---------------------------------------------------------------------------------------------- JSON


def _json_error(source: str, e: Any) -> InputError:
    return InputError(f"{where(source, None, getattr(e, 'lineno', 0))}: invalid JSON: {getattr(e, 'msg', e)}")


def _decode_json(text: str, source: str) -> list[Any]:
    import orjson

    try:
        return [orjson.loads(text)]
    except orjson.JSONDecodeError:
        pass
    # A stream of concatenated JSON values (`kubectl get -o json` of several kinds, `kubectl cluster-info dump`
    # to stdout, which interleaves container logs between the Lists).
    import json

    dec = json.JSONDecoder()
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
        try:
            value, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise _json_error(source, e) from None
        except RecursionError:
            # No Kubernetes object nests this deep; the stdlib decoder recurses per level.
            raise InputError(f"{source}: JSON nested too deeply to be a Kubernetes object") from None
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


def _decode_yaml(text: str, source: str) -> tuple[list[Any], list[int] | None]:
    """Documents (None for empty ones) and the line each starts at (None when unsure)."""
    starts = _doc_starts(text)
    try:
        import yaml_rs
    except ImportError:
        docs = _decode_yaml_pyyaml(text, source, starts)
    else:
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
            raise _yaml_error(source, starts, int(m.group(1)) if m else 0, reason) from None
        except (ValueError, RecursionError) as e:  # alias-expansion limits and the like
            raise InputError(f"{source}: invalid YAML: {e}") from None
        docs = res if len(starts) > 1 and isinstance(res, list) else [res]
        if "<<" in text:
            docs = [_expand_merge_keys(d) for d in docs]
    return docs, (starts if len(starts) == len(docs) else None)


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


def _decode_yaml_pyyaml(text: str, source: str, starts: list[int]) -> list[Any]:
    import yaml

    try:
        return list(yaml.load_all(text, Loader=_pyyaml_loader()))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        raise _yaml_error(source, starts, line, str(getattr(e, "problem", None) or e)) from None


def is_tar_bytes(data: bytes) -> bool:
    return len(data) > 262 and data[257:262] == b"ustar"


def parse_text(data: bytes, source: str) -> list[Any]:
    """Decode one file's bytes into its top-level documents (empty documents dropped)."""
    return [d for d in parse_bytes(data, source)[0] if d is not None]


def parse_bytes(data: bytes, source: str) -> tuple[list[Any], list[int] | None]:
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
            return _decode_json(text, source), None
        except InputError:
            if source.endswith(".json"):
                raise
            # JSON is YAML: a flow-style YAML file or a JSON with YAML-only syntax; YAML gives the error.
    return _decode_yaml(text, source)
