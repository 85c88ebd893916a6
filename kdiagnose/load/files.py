"""Read Kubernetes objects from paths: files, JSON streams, YAML (multi-document), Lists, directories,
tar and zip archives, stdin, and the layout of `kubectl cluster-info dump` trees.

Decoding is in parse.py, the shared types in raw.py (re-exported here); big kubectl Lists stream through
fast.py. Every failure names the file (and document / line where known) and becomes a one-line InputError.
"""

from __future__ import annotations

import io
import os
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from kdiagnose.errors import InputError
from kdiagnose.load.fast import load_large_bytes, load_large_file
from kdiagnose.load.limits import (
    MAX_ARCHIVE_DEPTH,
    MAX_ARCHIVE_MEMBERS,
    ZIP_MAGIC,
    Budget,
    LimitError,
    gunzip,
    read_input,
    read_stream,
)
from kdiagnose.load.parse import Shapes, is_tar_bytes, parse_bytes, parse_text
from kdiagnose.load.raw import (
    ARCHIVE_EXTS,
    KNOWN_KINDS,
    TAR_EXTS,
    ZIP_EXTS,
    LoadResult,
    Obj,
    RawObject,
    record_list,
    where,
)

__all__ = [
    "CLUSTER_INFO_NAMESPACE_FILES",
    "LoadResult",
    "Obj",
    "RawObject",
    "find_cluster_info_dumps",
    "iter_documents",
    "load_paths",
    "parse_text",
    "record_list",
    "where",
]

_EXTS = (".yaml", ".yml", ".json")
# `kubectl cluster-info dump` writes container logs beside the JSON; they are not objects.
_IGNORED_NAMES = {"logs.txt"}


# ---------------------------------------------------------------------------------------------- bytes


def iter_documents(
    docs: list[Any], source: str, result: LoadResult, lines: list[int] | None = None
) -> Iterator[RawObject]:
    """Flatten Lists (`kind: List`, typed `PodList` whose items may lack kind, Lists inside Lists, as kubectl
    accepts them) into objects."""
    for i, doc in enumerate(docs):
        line = lines[i] if lines and i < len(lines) else 0
        if doc is None:
            continue
        if isinstance(doc, list):
            for item in doc:
                if isinstance(item, dict):
                    yield from _flatten(item, source, result, i, line, 0)
                elif item is not None:
                    raise InputError(f"{where(source, i, line)}: list item is not a Kubernetes object")
            continue
        if not isinstance(doc, dict):
            raise InputError(
                f"{where(source, i, line)}: not a Kubernetes object (a {type(doc).__name__}, expected a mapping)"
            )
        yield from _flatten(doc, source, result, i, line, 0)


def _flatten(doc: Obj, source: str, result: LoadResult, i: int, line: int, depth: int) -> Iterator[RawObject]:
    kind = doc.get("kind")
    for key in ("kind", "apiVersion"):
        value = doc.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where(source, i, line)}: {key} is a {type(value).__name__}, not a string")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc and depth < 8:
        items = doc.get("items")
        if items is not None and not isinstance(items, list):
            raise InputError(
                f"{where(source, i, line)}: {kind}: items is a {type(items).__name__}, not a list"
            )
        item_kind = kind[: -len("List")] if kind != "List" else ""
        if item_kind:
            result.list_kinds.add(item_kind)
        api_version = doc.get("apiVersion")
        for item in items or []:
            if not isinstance(item, dict):
                if item is None:
                    continue
                raise InputError(f"{where(source, i, line)}: {kind} item is not a Kubernetes object")
            if item_kind and "kind" not in item:
                # In place: a copy per item costs seconds on a 150,000-pod PodList.
                item["kind"] = item_kind
                item.setdefault("apiVersion", api_version)
            k, av = item.get("kind"), item.get("apiVersion")
            if (
                type(k) is not str
                or (av is not None and type(av) is not str)
                or (k.endswith("List") and "items" in item)
            ):
                yield from _flatten(item, source, result, i, line, depth + 1)  # checks types, nested Lists
            else:
                yield RawObject(item, source, i, line)
        return
    yield RawObject(doc, source, i, line)


def _looks_truncated(data: bytes) -> bool:
    """The last line has no newline and ends inside a value: `phase: Pend`, `"na`, `cpu: 100` cut mid-key."""
    if not data or data.endswith((b"\n", b"\r")):
        return False
    last = data[data.rfind(b"\n") + 1 :].strip()
    if not last or last.startswith(b"#") or last in (b"---", b"..."):
        return False
    return not last.endswith((b"}", b"]")) or last.count(b"{") + last.count(b"[") > last.count(
        b"}"
    ) + last.count(b"]")


def _load_bytes(
    data: bytes,
    source: str,
    result: LoadResult,
    *,
    explicit: bool,
    budget: Budget | None = None,
    depth: int = 0,
    stream: bool = True,
) -> int:
    """Load one file's objects; returns how many documents it had. An explicitly named file must have some."""
    if budget is None:
        budget = Budget(source)
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data, source, budget)
        if is_tar_bytes(data):
            _load_tar_stream(io.BytesIO(data), source, result, budget, depth)
            return 1
    elif is_tar_bytes(data):
        _load_tar_stream(io.BytesIO(data), source, result, budget, depth)
        return 1
    elif data[:4] in ZIP_MAGIC:
        _load_zip(data, source, result, budget, depth)
        return 1
    if stream and load_large_bytes(data, source, result):
        return 1
    docs, lines = parse_bytes(data, source, Shapes(source))
    if docs and _looks_truncated(data):
        result.warnings.append(
            f"{source} looks truncated (its last line has no newline and ends inside a value): "
            "objects at its end may be incomplete"
        )
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
    if any(isinstance(r.kind, str) for r in result.objects[before:]):
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

    def __repr__(self) -> str:
        return f"_FileReader({self.path})"


def _reader(path: Path) -> Callable[[], bytes]:
    return _FileReader(path)


# ---------------------------------------------------------------------------------------------- trees

# Files `kubectl cluster-info dump` writes per namespace (k8s.io/kubectl/pkg/cmd/clusterinfo/clusterinfo_dump.go).
CLUSTER_INFO_NAMESPACE_FILES = {
    "events.json",
    "replication-controllers.json",
    "services.json",
    "daemonsets.json",
    "deployments.json",
    "replicasets.json",
    "pods.json",
}


def find_cluster_info_dumps(relpaths: list[str]) -> dict[str, list[str]]:
    """Roots (relative, '' = the tree itself) of cluster-info dump layouts -> their namespace folders."""
    paths = [PurePosixPath(p) for p in relpaths]
    roots = {p.parent for p in paths if p.name == "nodes.json"}
    out: dict[str, list[str]] = {}
    for root in sorted(roots):
        namespaces = sorted(
            {
                p.parent.name
                for p in paths
                if p.name in CLUSTER_INFO_NAMESPACE_FILES and p.parent.parent == root and p.parent != root
            }
        )
        if namespaces:
            out["" if str(root) == "." else str(root)] = namespaces
    return out


def _wanted(relpath: str) -> bool:
    name = PurePosixPath(relpath).name
    return name not in _IGNORED_NAMES and name.endswith(_EXTS + ARCHIVE_EXTS)


def _load_tree(
    root: str,
    entries: list[tuple[str, Callable[[], bytes]]],
    result: LoadResult,
    label: Callable[[str], str],
    budget: Budget | None = None,
    depth: int = 0,
) -> None:
    """Files of a directory or archive, in name order; records `kubectl cluster-info dump` layouts."""
    before = len(result.objects)
    lists_before = len(result.list_kinds)
    names = sorted(rel for rel, _ in entries)
    for dump_root, namespaces in find_cluster_info_dumps(names).items():
        result.cluster_info_dumps[label(dump_root) if dump_root else root] = namespaces
    for rel, read in sorted(entries, key=lambda e: e[0]):
        source = label(rel)
        file_budget = budget if budget is not None else Budget(source)
        if rel.endswith(TAR_EXTS):
            _load_tar_stream(io.BytesIO(read()), source, result, file_budget, depth)
            continue
        if rel.endswith(ZIP_EXTS):
            _load_zip(read(), source, result, file_budget, depth)
            continue
        if isinstance(read, _FileReader) and load_large_file(read.path, source, result):
            continue  # a cluster-info dump's big <ns>/pods.json, streamed
        _load_bytes(
            read(),
            source,
            result,
            explicit=False,
            budget=file_budget,
            depth=depth,
            stream=not isinstance(read, _FileReader),
        )
    _require_objects(
        result, before, lists_before, f"{root}: no Kubernetes objects in any .yaml/.yml/.json file"
    )


def _load_tar_stream(
    stream: BinaryIO, source: str, result: LoadResult, budget: Budget, depth: int = 0
) -> None:
    if depth >= MAX_ARCHIVE_DEPTH:
        raise LimitError(f"{source}: archives nested more than {MAX_ARCHIVE_DEPTH} deep")
    try:
        with tarfile.open(fileobj=stream, mode="r:*") as tar:
            entries: list[tuple[str, Callable[[], bytes]]] = []
            for m in tar:  # one header at a time: a million empty members cost no list of a million
                budget.member(source)
                if not (m.isfile() and _wanted(m.name)):
                    continue
                budget.take(m.size, f"{source}:{m.name}")
                f = tar.extractfile(m)
                data = f.read() if f is not None else b""
                entries.append((m.name.removeprefix("./"), _const(data)))
    except (tarfile.TarError, OSError, EOFError) as e:
        first = (str(e).splitlines() or [""])[0].rstrip(": ")
        raise InputError(f"{source}: cannot read archive: {first or type(e).__name__}") from None
    _load_tree(source, entries, result, lambda rel: f"{source}:{rel}", budget, depth + 1)


# The zip end-of-central-directory record and a central directory entry: zipfile reads the whole central
# directory into ZipInfo objects before the first member, so their number is counted from the bytes first.
_ZIP_CENTRAL_ENTRY = b"PK\x01\x02"
_S_IFMT, _S_IFLNK = 0o170000, 0o120000


def _load_zip(data: bytes, source: str, result: LoadResult, budget: Budget, depth: int = 0) -> None:
    """A .zip archive's YAML/JSON members (and archives inside it), with the tarballs' limits: members
    counted before zipfile lists them, sizes taken from the budget as declared (zipfile stops reading a
    member at its declared size, so a member that lies inflates no further), stored and deflated members
    only (what `zip` and every kubectl-adjacent tool writes), encrypted ones refused, symlinks skipped."""
    import zipfile
    import zlib

    if depth >= MAX_ARCHIVE_DEPTH:
        raise LimitError(f"{source}: archives nested more than {MAX_ARCHIVE_DEPTH} deep")
    if data.count(_ZIP_CENTRAL_ENTRY) > budget.members:
        raise LimitError(f"{source}: more than {MAX_ARCHIVE_MEMBERS} archive members")
    entries: list[tuple[str, Callable[[], bytes]]] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                budget.member(source)
                name = info.filename
                if info.is_dir() or (info.external_attr >> 16) & _S_IFMT == _S_IFLNK:
                    continue
                if not _wanted(name):
                    continue
                if info.flag_bits & 0x1:
                    raise InputError(
                        f"{source}:{name}: encrypted archive member (extract it and pass the files)"
                    )
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise InputError(
                        f"{source}:{name}: unsupported zip compression method {info.compress_type} "
                        "(stored and deflated are read; extract it and pass the files)"
                    )
                budget.take(info.file_size, f"{source}:{name}")
                with zf.open(info) as f:
                    entries.append((name.removeprefix("./"), _const(f.read())))
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as e:
        first = (str(e).splitlines() or [""])[0].rstrip(": ")
        raise InputError(f"{source}: cannot read archive: {first or type(e).__name__}") from None
    _load_tree(source, entries, result, lambda rel: f"{source}:{rel}", budget, depth + 1)


def _read(path: Path, source: str | None = None) -> bytes:
    return read_input(path, source or str(path))


def _walk_error(e: OSError) -> None:
    raise InputError(f"{e.filename}: cannot read directory: {e.strerror or e}")


def load_paths(paths: list[str], stdin: BinaryIO | None = None) -> LoadResult:
    """Load every object under the given paths (files, directories recursively, archives, `-` = stdin)."""
    result = LoadResult()
    if paths.count("-") > 1:
        from kdiagnose.errors import UsageError

        raise UsageError("stdin (-) can be read only once")
    for p in paths:
        if p == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            _load_bytes(read_stream(stream, "<stdin>"), "<stdin>", result, explicit=True)
            continue
        path = Path(p)
        if not path.exists():
            raise InputError(f"{p}: no such file or directory")
        if path.is_dir():
            entries: list[tuple[str, Callable[[], bytes]]] = []
            for dirpath, dirnames, filenames in os.walk(path, onerror=_walk_error):
                dirnames.sort()
                for fn in filenames:
                    full = Path(dirpath, fn)
                    rel = full.relative_to(path).as_posix()
                    if _wanted(rel) and full.is_file():
                        entries.append((rel, _reader(full)))
            _load_tree(p, entries, result, _labeller(path))
            continue
        if path.name.endswith(TAR_EXTS):
            _load_tar_stream(io.BytesIO(_read(path, p)), p, result, Budget(p))
            continue
        if path.name.endswith(ZIP_EXTS):
            _load_zip(_read(path, p), p, result, Budget(p))
            continue
        if not load_large_file(path, p, result):
            _load_bytes(_read(path, p), p, result, explicit=True, stream=not path.is_file())
    _validate(result)
    return result


def _validate(result: LoadResult) -> None:
    """Objects of kinds the replay reads must have a name (the API server requires one)."""
    for raw in result.objects:
        kind = raw.kind
        if kind not in KNOWN_KINDS:
            continue
        meta = raw.meta
        if meta is not None and not isinstance(meta, dict):
            raise InputError(f"{raw.where}: {kind}: metadata is not a mapping")
        name = (meta or {}).get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{raw.where}: {kind} without metadata.name")
