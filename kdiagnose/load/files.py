"""Read Kubernetes objects from files: JSON, JSON streams, YAML (multi-document), Lists, directories, tarballs.

JSON goes through orjson; YAML through yaml-rs (Rust) with PyYAML's C/pure loader as the fallback. Both
YAML paths are set up to agree with each other and with what the API server would store:
- timestamps stay strings (yaml-rs would turn even a *quoted* RFC 3339 string into a datetime);
- `yes`/`no`/`on`/`off` stay strings (YAML 1.2 core schema, as yaml-rs does; PyYAML is told the same);
- duplicate keys: the last one wins, as the API server's JSON decoder does (kubectl only warns);
- merge keys (`<<: *anchor`) are expanded (yaml-rs leaves them as a literal `<<` key);
- numbers such as `cpu: 1e3` may arrive as floats; model.quantity reads them from their literal text.
Every failure names the file (and document / line where known) and becomes a one-line InputError.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import sys
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from kdiagnose.errors import InputError

__all__ = ["LoadResult", "RawObject", "iter_documents", "load_paths", "parse_text", "record_list", "where"]

Obj = dict[str, Any]
_EXTS = (".yaml", ".yml", ".json")
_TAR_EXTS = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")
# `kubectl cluster-info dump` writes container logs beside the JSON; they are not objects.
_IGNORED_NAMES = {"logs.txt"}
_LOG_START = "==== START logs for"
_LOG_END = "==== END logs for"
_YAML_ERR_RE = re.compile(r"line (\d+), column (\d+)")


def where(source: str, doc_index: int | None = None, line: int = 0) -> str:
    """`file`, `file (document 3)`, `file (document 3, line 41)`: the prefix of every input error."""
    parts = []
    if doc_index is not None:
        parts.append(f"document {doc_index + 1}")
    if line > 0:
        parts.append(f"line {line}")
    return f"{source} ({', '.join(parts)})" if parts else source


@dataclass(slots=True)
class RawObject:
    """An API object and where it came from (file, 0-based document index, 1-based line or 0)."""

    obj: Obj
    source: str
    doc_index: int = 0
    line: int = 0

    @property
    def where(self) -> str:
        return where(self.source, self.doc_index, self.line)


@dataclass(slots=True)
class LoadResult:
    objects: list[RawObject] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    list_kinds: set[str] = field(default_factory=set)  # kinds of typed Lists seen, even when empty
    # `kubectl cluster-info dump --output-directory` trees found in the input: root -> namespace folders.
    cluster_info_dumps: dict[str, list[str]] = field(default_factory=dict)


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


# ---------------------------------------------------------------------------------------------- bytes


def _is_tar_bytes(data: bytes) -> bool:
    return len(data) > 262 and data[257:262] == b"ustar"


def parse_text(data: bytes, source: str) -> list[Any]:
    """Decode one file's bytes into its top-level documents (empty documents dropped)."""
    return [d for d in _parse(data, source)[0] if d is not None]


def _parse(data: bytes, source: str) -> tuple[list[Any], list[int] | None]:
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


def iter_documents(
    docs: list[Any], source: str, result: LoadResult, lines: list[int] | None = None
) -> Iterator[RawObject]:
    """Flatten Lists (`kind: List`, typed `PodList` whose items may lack kind) into objects."""
    for i, doc in enumerate(docs):
        line = lines[i] if lines and i < len(lines) else 0
        if doc is None:
            continue
        if isinstance(doc, list):
            for item in doc:
                if isinstance(item, dict):
                    yield RawObject(item, source, i, line)
                elif item is not None:
                    raise InputError(f"{where(source, i, line)}: list item is not a Kubernetes object")
            continue
        if not isinstance(doc, dict):
            raise InputError(
                f"{where(source, i, line)}: not a Kubernetes object (a {type(doc).__name__}, expected a mapping)"
            )
        kind = doc.get("kind")
        if (
            isinstance(kind, str)
            and kind.endswith("List")
            and isinstance(doc.get("items", []), list | type(None))
        ):
            item_kind = kind[: -len("List")] if kind != "List" else ""
            if item_kind:
                result.list_kinds.add(item_kind)
            api_version = doc.get("apiVersion")
            for item in doc.get("items") or []:
                if not isinstance(item, dict):
                    continue
                if item_kind and "kind" not in item:
                    # In place: a copy per item costs seconds on a 150,000-pod PodList.
                    item["kind"] = item_kind
                    item.setdefault("apiVersion", api_version)
                yield RawObject(item, source, i, line)
            continue
        yield RawObject(doc, source, i, line)


def _load_bytes(data: bytes, source: str, result: LoadResult, *, explicit: bool) -> int:
    """Load one file's objects; returns how many documents it had. An explicitly named file must have some."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise InputError(f"{source}: cannot decompress: {e}") from None
        if _is_tar_bytes(data):
            _load_tar_stream(io.BytesIO(data), source, result)
            return 1
    elif _is_tar_bytes(data):
        _load_tar_stream(io.BytesIO(data), source, result)
        return 1
    docs, lines = _parse(data, source)
    result.files.append(source)
    before = len(result.objects)
    lists_before = len(result.list_kinds)
    result.objects.extend(iter_documents(docs, source, result, lines))
    if explicit:
        if any(d is not None for d in docs):
            why = "no document has a kind"
        elif data.strip():
            why = "only comments and document separators"
        else:
            why = "empty file"
        _require_objects(result, before, lists_before, f"{source}: no Kubernetes objects ({why})")
    return len(docs)


def _require_objects(result: LoadResult, before: int, lists_before: int, message: str) -> None:
    if len(result.list_kinds) > lists_before:
        return
    if any(isinstance(r.obj.get("kind"), str) for r in result.objects[before:]):
        return
    raise InputError(message)


def _const(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def _labeller(base: Path) -> Callable[[str], str]:
    return lambda rel: str(base / rel)


class _FileReader:
    """Reads one file of a directory on demand; carries its path so big files can be streamed instead."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> bytes:
        return _read(self.path)


def _reader(path: Path) -> Callable[[], bytes]:
    return _FileReader(path)


# ---------------------------------------------------------------------------------------------- trees


def _wanted(relpath: str) -> bool:
    name = PurePosixPath(relpath).name
    return name not in _IGNORED_NAMES and (name.endswith(_EXTS) or name.endswith(_TAR_EXTS))


def _load_tree(
    root: str, entries: list[tuple[str, Callable[[], bytes]]], result: LoadResult, label: Callable[[str], str]
) -> None:
    """Files of a directory or archive, in name order; records `kubectl cluster-info dump` layouts."""
    from kdiagnose.load.dump import find_cluster_info_dumps

    before = len(result.objects)
    lists_before = len(result.list_kinds)
    names = sorted(rel for rel, _ in entries)
    for dump_root, namespaces in find_cluster_info_dumps(names).items():
        result.cluster_info_dumps[label(dump_root) if dump_root else root] = namespaces
    for rel, read in sorted(entries, key=lambda e: e[0]):
        source = label(rel)
        if rel.endswith(_TAR_EXTS) and not rel.endswith(_EXTS):
            _load_tar_stream(io.BytesIO(read()), source, result)
            continue
        if isinstance(read, _FileReader):
            from kdiagnose.load.fast import load_large_file  # a cluster-info dump's big <ns>/pods.json

            if load_large_file(read.path, source, result):
                continue
        _load_bytes(read(), source, result, explicit=False)
    _require_objects(
        result, before, lists_before, f"{root}: no Kubernetes objects in any .yaml/.yml/.json file"
    )


def _load_tar_stream(stream: BinaryIO, source: str, result: LoadResult) -> None:
    try:
        with tarfile.open(fileobj=stream, mode="r:*") as tar:
            members = [m for m in tar.getmembers() if m.isfile() and _wanted(m.name)]
            entries: list[tuple[str, Callable[[], bytes]]] = []
            for m in members:
                f = tar.extractfile(m)
                data = f.read() if f is not None else b""
                entries.append((m.name.removeprefix("./"), _const(data)))
    except (tarfile.TarError, OSError, EOFError) as e:
        first = (str(e).splitlines() or [""])[0].rstrip(": ")
        raise InputError(f"{source}: cannot read archive: {first or type(e).__name__}") from None
    _load_tree(source, entries, result, lambda rel: f"{source}:{rel}")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None


def record_list(result: LoadResult, source: str, objects: list[RawObject], shell: dict[str, Any]) -> bool:
    """Add a streamed List's objects to `result` (False when `shell` is no List with items, result untouched)."""
    kind = shell.get("kind")
    if not isinstance(kind, str) or not kind.endswith("List") or not objects:
        return False
    if kind != "List":
        result.list_kinds.add(kind[: -len("List")])
    result.files.append(source)
    result.objects.extend(objects)
    return True


def load_paths(paths: list[str], stdin: BinaryIO | None = None) -> LoadResult:
    """Load every object under the given paths (files, directories recursively, archives, `-` = stdin)."""
    result = LoadResult()
    if paths.count("-") > 1:
        from kdiagnose.errors import UsageError

        raise UsageError("stdin (-) can be read only once")
    for p in paths:
        if p == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            _load_bytes(stream.read(), "<stdin>", result, explicit=True)
            continue
        path = Path(p)
        if not path.exists():
            raise InputError(f"{p}: no such file or directory")
        if path.is_dir():
            entries: list[tuple[str, Callable[[], bytes]]] = []
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames.sort()
                for fn in filenames:
                    full = Path(dirpath, fn)
                    rel = full.relative_to(path).as_posix()
                    if _wanted(rel) and full.is_file():
                        entries.append((rel, _reader(full)))
            _load_tree(p, entries, result, _labeller(path))
            continue
        if path.name.endswith(_TAR_EXTS):
            try:
                with path.open("rb") as f:
                    _load_tar_stream(io.BytesIO(f.read()), p, result)
            except OSError as e:
                raise InputError(f"{p}: cannot read: {e.strerror or e}") from None
            continue
        from kdiagnose.load.fast import load_large_file  # streams big kubectl Lists (benchmarks/README.md)

        if not load_large_file(path, p, result):
            _load_bytes(_read(path), p, result, explicit=True)
    _validate(result)
    return result


def _validate(result: LoadResult) -> None:
    """Objects of kinds the replay reads must have a name (the API server requires one)."""
    from kdiagnose.load.snapshot import KNOWN_KINDS

    for raw in result.objects:
        kind = raw.obj.get("kind")
        if kind not in KNOWN_KINDS:
            continue
        meta = raw.obj.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise InputError(f"{raw.where}: {kind}: metadata is not a mapping")
        name = (meta or {}).get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{raw.where}: {kind} without metadata.name")
