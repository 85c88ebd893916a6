"""Read Kubernetes objects from files: JSON, JSON streams, YAML (multi-document), Lists, directories, tarballs.

JSON goes through orjson; YAML through yaml-rs (Rust) with PyYAML's C/pure loader as the fallback.
Every failure names the file (and document) and becomes an InputError: never a traceback.
"""

from __future__ import annotations

import io
import os
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kdiagnose.errors import InputError

__all__ = ["RawObject", "iter_documents", "load_paths", "parse_text"]

Obj = dict[str, Any]
_EXTS = (".yaml", ".yml", ".json")
# `kubectl cluster-info dump` writes these beside the JSON; they are not objects.
_IGNORED_NAMES = {"logs.txt"}


@dataclass(slots=True)
class RawObject:
    """An API object and where it came from (file, document index) for error messages and SARIF."""

    obj: Obj
    source: str
    doc_index: int = 0
    line: int = 1


@dataclass(slots=True)
class LoadResult:
    objects: list[RawObject] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    list_kinds: set[str] = field(default_factory=set)  # kinds of typed Lists seen, even when empty


def _decode_json(data: bytes, source: str) -> list[Any]:
    import orjson

    try:
        return [orjson.loads(data)]
    except orjson.JSONDecodeError:
        pass
    # A stream of concatenated JSON values (`kubectl get -o json` of several kinds, `-w` output).
    import json

    dec = json.JSONDecoder()
    text = data.decode("utf-8")
    out: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        try:
            value, pos = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise InputError(f"{source}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        out.append(value)


def _yaml_docs_with_lines(text: str) -> list[int]:
    """1-based line where each YAML document starts, for pointing SARIF/GitHub annotations at it."""
    starts = [1]
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith("---") and (len(line) == 3 or line[3] in " \t"):
            starts.append(i + 1)
    return starts


def _decode_yaml(text: str, source: str) -> list[Any]:
    try:
        import yaml_rs

        try:
            docs = yaml_rs.loads(text)
        except yaml_rs.YAMLDecodeError as e:
            raise InputError(f"{source}: invalid YAML: {str(e).splitlines()[0] if str(e) else e}") from None
        if not isinstance(docs, list) or (isinstance(docs, list) and not _is_multi(text)):
            docs = [docs]
        return [d for d in docs if d is not None]
    except ImportError:
        return _decode_yaml_pyyaml(text, source)


def _is_multi(text: str) -> bool:
    # yaml_rs returns a list for multi-document input and the value itself for one document, which is
    # ambiguous when that one document is a YAML list; count separators to tell them apart.
    return any(line.startswith("---") for line in text.splitlines()[1:]) or text.startswith("---")


def _decode_yaml_pyyaml(text: str, source: str) -> list[Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{source}: invalid YAML{where}: {getattr(e, 'problem', None) or e}") from None


def parse_text(data: bytes, source: str) -> list[Any]:
    """Decode one file's bytes into its top-level documents."""
    if b"\x00" in data[:8192]:
        raise InputError(f"{source}: binary file, not YAML or JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{source}: not UTF-8 text (binary file?)") from None
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "{[":
        try:
            return _decode_json(text.encode(), source)
        except InputError:
            if source.endswith(".json"):
                raise
    return _decode_yaml(text, source)


def iter_documents(docs: list[Any], source: str, result: LoadResult, lines: list[int] | None = None) -> Iterator[RawObject]:
    """Flatten Lists (`kind: List`, typed `PodList` whose items may lack kind) into objects."""
    for i, doc in enumerate(docs):
        line = lines[i] if lines and i < len(lines) else 1
        if isinstance(doc, list):
            for item in doc:
                if isinstance(item, dict):
                    yield RawObject(item, source, i, line)
            continue
        if not isinstance(doc, dict):
            raise InputError(f"{source}: document {i + 1} is not a Kubernetes object (got {type(doc).__name__})")
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items", []), list):
            item_kind = kind[: -len("List")] if kind != "List" else ""
            if item_kind:
                result.list_kinds.add(item_kind)
            api_version = doc.get("apiVersion")
            for item in doc.get("items") or []:
                if not isinstance(item, dict):
                    continue
                if item_kind and "kind" not in item:
                    item = {"kind": item_kind, "apiVersion": api_version, **item}
                yield RawObject(item, source, i, line)
            continue
        yield RawObject(doc, source, i, line)


def _load_bytes(data: bytes, source: str, result: LoadResult) -> None:
    docs = parse_text(data, source)
    lines = None
    if docs and not data.lstrip().startswith((b"{", b"[")):
        lines = _yaml_docs_with_lines(data.decode("utf-8-sig", errors="replace"))
        # yaml_rs drops empty documents; keep line numbers only when the counts agree.
        if len(lines) != len(docs):
            lines = lines[1:] if len(lines) - 1 == len(docs) else None
    result.files.append(source)
    result.objects.extend(iter_documents(docs, source, result, lines))


def _load_tar(path: Path, result: LoadResult) -> None:
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                if not member.isfile() or not member.name.endswith(_EXTS):
                    continue
                if os.path.basename(member.name) in _IGNORED_NAMES:
                    continue
                f = tar.extractfile(member)
                if f is not None:
                    _load_bytes(f.read(), f"{path}:{member.name}", result)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise InputError(f"{path}: cannot read archive: {e}") from None


def _is_tar(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz", ".tar"))


def load_paths(paths: list[str], stdin: io.BufferedReader | None = None) -> LoadResult:
    """Load every object under the given paths (files, directories recursively, archives, `-` = stdin)."""
    result = LoadResult()
    for p in paths:
        if p == "-":
            stream = stdin or sys.stdin.buffer
            _load_bytes(stream.read(), "<stdin>", result)
            continue
        path = Path(p)
        if not path.exists():
            raise InputError(f"{p}: no such file or directory")
        if path.is_dir():
            files = sorted(
                f for f in path.rglob("*") if f.is_file() and (f.name.endswith(_EXTS) or _is_tar(f)) and f.name not in _IGNORED_NAMES
            )
            before = len(result.objects)
            for f in files:
                if _is_tar(f):
                    _load_tar(f, result)
                else:
                    _load_bytes(_read(f), str(f), result)
            if len(result.objects) == before and not result.list_kinds:
                raise InputError(f"{p}: directory contains no Kubernetes objects (.yaml/.yml/.json)")
            continue
        if _is_tar(path):
            _load_tar(path, result)
            continue
        _load_bytes(_read(path), str(path), result)
    return result


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
