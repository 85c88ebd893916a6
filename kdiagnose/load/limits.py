"""The limits every input passes before it is decoded or kept: hostile input gets one error line, not a crash.

The YAML and JSON parsers we use are fast but trusting: yaml-rs recurses per block level and dies of a stack
overflow (SIGSEGV) near 20,000 levels, expands every alias into a fresh copy (a 1 MB scalar aliased 3,000
times is 3 GB), and nothing stops a 3 MB gzip from inflating to 3 GB or `/dev/zero` from being read forever.
So each input is bounded where it enters, before the parser sees it:
- nesting depth: a cheap upper bound from the text, checked exactly with libyaml's event parser (which
  keeps its own stack, no recursion) only when the bound is high, then exactly again on the decoded value;
- alias expansion, computed from the event stream in bytes before yaml-rs copies anything;
- numbers: no integer over MAX_NUMBER_DIGITS digits, no infinite or NaN float (the API server's JSON
  decoder rejects them; Python's int/str conversion would raise far from the input);
- mapping keys: scalars become strings, as sigs.k8s.io/yaml does; a list or mapping as a key is an error;
- decompressed bytes, archive members and archive nesting; bytes read from stdin and other non-regular files
  (read in chunks, a NUL byte or invalid UTF-8 in the first chunk ends it at once);
- documents of no Kubernetes shape (empty or without `kind`): the file is rejected after MAX_SHAPELESS_DOCS,
  as they are decoded one at a time, not after all of them are built.
"""

from __future__ import annotations

import codecs
import math
import os
import re
import stat
from collections.abc import Callable
from itertools import accumulate, chain
from operator import sub
from pathlib import Path
from typing import Any, BinaryIO

from kdiagnose.errors import InputError

__all__ = [
    "MAX_ALIAS_BYTES",
    "MAX_ARCHIVE_DEPTH",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_DECOMPRESSED_BYTES",
    "MAX_DEPTH",
    "MAX_NUMBER_DIGITS",
    "MAX_SHAPELESS_DOCS",
    "MAX_STREAM_BYTES",
    "ZIP_MAGIC",
    "Budget",
    "LimitError",
    "check_json_depth",
    "check_value",
    "check_yaml_text",
    "gunzip",
    "read_input",
    "read_stream",
    "value_error_text",
]

MAX_DEPTH = 200  # nesting levels of one document (Kubernetes objects, CRD schemas included, stay far below)
MAX_ALIAS_BYTES = 32 << 20  # what YAML aliases may add to a document by expansion
MAX_NUMBER_DIGITS = 1000  # digits of an integer literal (int64 has 19; Python stops converting at 4,300)
MAX_DECOMPRESSED_BYTES = 512 << 20  # per gzip file or archive, nested archives included
MAX_ARCHIVE_MEMBERS = 100_000
# A zip archive's first bytes: a local file header, or the end record of an empty archive.
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
MAX_ARCHIVE_DEPTH = 3  # an archive inside an archive inside an archive
MAX_STREAM_BYTES = 512 << 20  # stdin, FIFOs, devices: anything whose size is not known up front
MAX_SHAPELESS_DOCS = 10_000  # empty documents and mappings without `kind`, per file
_CHUNK = 1 << 20


class LimitError(InputError):
    """An input over one of the limits above: never retried another way (e.g. as YAML after JSON)."""


# ---------------------------------------------------------------------------------------------- bytes


class Budget:
    """Decompressed bytes and archive members left for one top-level input (shared by nested archives)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.bytes = MAX_DECOMPRESSED_BYTES
        self.members = MAX_ARCHIVE_MEMBERS

    def take(self, n: int, what: str) -> None:
        self.bytes -= n
        if self.bytes < 0:
            raise LimitError(
                f"{what}: expands to more than {MAX_DECOMPRESSED_BYTES >> 20} MiB "
                f"(decompression limit; extract it and pass the files)"
            )

    def member(self, what: str) -> None:
        self.members -= 1
        if self.members < 0:
            raise LimitError(f"{what}: more than {MAX_ARCHIVE_MEMBERS} archive members")


def gunzip(data: bytes, source: str, budget: Budget) -> bytes:
    """Decompress gzip members (concatenated ones too) within the budget."""
    import zlib

    out = bytearray()
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while True:
                chunk = d.decompress(data, _CHUNK)
                budget.take(len(chunk), source)
                out += chunk
                data = d.unconsumed_tail
                if d.eof or not data:
                    break
        except zlib.error as e:
            raise InputError(f"{source}: cannot decompress: {e}") from None
        if not d.eof:
            raise InputError(f"{source}: cannot decompress: truncated gzip data")
        data = d.unused_data.lstrip(b"\x00")
        if data and data[:2] != b"\x1f\x8b":
            break
    return bytes(out)


def read_stream(stream: BinaryIO, source: str, limit: int = MAX_STREAM_BYTES) -> bytes:
    """Read a stream of unknown size in chunks, at most `limit` bytes; fails fast on binary data."""
    parts: list[bytes] = []
    total = 0
    first = True
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        if first:
            _sniff(chunk, source)
            first = False
        total += len(chunk)
        if total > limit:
            raise LimitError(
                f"{source}: more than {limit >> 20} MiB from a stream (limit for stdin and non-regular "
                "files; save it to a file, big Lists are streamed from files)"
            )
        parts.append(chunk)
    return b"".join(parts)


def _sniff(chunk: bytes, source: str) -> None:
    if chunk[:2] == b"\x1f\x8b" or chunk[257:262] == b"ustar" or chunk[:4] in ZIP_MAGIC:
        return  # compressed or an archive: checked after decompression
    if b"\x00" in chunk[:8192]:
        raise InputError(f"{source}: binary file, not YAML or JSON")
    try:
        codecs.getincrementaldecoder("utf-8")().decode(chunk, final=False)
    except UnicodeDecodeError as e:
        raise InputError(f"{source}: not UTF-8 text (binary file?) at byte {e.start}") from None


def read_input(path: Path, source: str, limit: int = MAX_STREAM_BYTES) -> bytes:
    """A file's bytes: regular files whole, anything else (devices, FIFOs, /dev/stdin) as a bounded stream."""
    try:
        with path.open("rb") as f:
            if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return f.read()
            return read_stream(f, source, limit)
    except OSError as e:
        raise InputError(f"{source}: cannot read: {e.strerror or e}") from None


# ---------------------------------------------------------------------------------------------- text

# Block nesting needs indentation or `- `/`? `/`: ` indicators at the start of a line: the longest such run
# bounds block depth (a mapping's block sequence may sit at the key's own indentation: hence the factor).
_LEAD = re.compile(r"(?m)^[ \t?:-]*")
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _flow_depth_bound(text: str) -> int:
    """An upper bound of bracket nesting: the highest rise of the running bracket count (brackets inside
    strings only make it larger). In slices, so a 200 MB text never becomes a 200 MB list."""
    level = low = best = 0
    for i in range(0, len(text), _CHUNK):
        brackets = _NOT_BRACKETS.sub("", text[i : i + _CHUNK])
        if not brackets:
            continue
        levels = list(accumulate(map(_BRACKET_STEP.__getitem__, brackets), initial=level))
        lows = list(accumulate(levels, min, initial=low))[1:]
        best = max(best, max(map(sub, levels, lows)))
        level, low = levels[-1], lows[-1]
    return best


def _yaml_depth_bound(text: str, flow: bool) -> int:
    lead = max(map(len, _LEAD.findall(text)), default=0)
    return 2 * lead + 2 + (_flow_depth_bound(text) if flow else 0)


# The longest lead that keeps the block bound (2 * lead + 2) within MAX_DEPTH; a longer one, at the start of
# the text or after a newline, is what `_yaml_depth_bound(text, False) > MAX_DEPTH` finds. One search that
# starts from the newline (a literal the regex engine skips to), not a match tried at every position and
# a list of every line's lead: 1-2 ms instead of ~90 ms per 8 MB batch of a streamed dump.
_MAX_LEAD = (MAX_DEPTH - 2) // 2
_DEEP_LEAD = re.compile(r"\n[ \t?:-]{" + str(_MAX_LEAD + 1) + "}")
_DEEP_LEAD_AT_START = re.compile(r"[ \t?:-]{" + str(_MAX_LEAD + 1) + "}")


def _block_too_deep(text: str) -> bool:
    """`_yaml_depth_bound(text, False) > MAX_DEPTH`, without measuring every line."""
    return _DEEP_LEAD_AT_START.match(text) is not None or _DEEP_LEAD.search(text) is not None


def check_json_depth(value: Any, text: str, at: Callable[[], str]) -> None:
    """A decoded JSON value nested more than MAX_DEPTH levels is an error. orjson (1,024 levels) and the
    stdlib decoder (RecursionError) cannot crash on depth; this keeps what they accept within what the
    rest of kdiagnose walks. Level by level over containers only: a third of orjson's own decoding time."""
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        return
    level = [value]
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            raise LimitError(f"{at()}: nested more than {MAX_DEPTH} levels deep")
        below: list[Any] = []
        for x in level:
            if type(x) is dict:
                below.extend([y for y in x.values() if type(y) is dict or type(y) is list])
            elif type(x) is list:
                below.extend([y for y in x if type(y) is dict or type(y) is list])
        level = below


def _has_alias(text: str) -> bool:
    return "*" in text and re.search(r"(?:^|[\s\[{,:?-])\*[^\s,\[\]{}]", text) is not None


def check_yaml_text(text: str, source: str, where: Callable[[int], str], *, flow: bool = True) -> None:
    """Before a parser sees `text` (one document): nesting depth and alias expansion within the limits.
    `where(line)` names the document in an error. `flow=False` for yaml-rs, which bounds flow nesting
    itself ("recursion limit exceeded") but not block nesting."""
    deep = _yaml_depth_bound(text, flow) > MAX_DEPTH if flow else _block_too_deep(text)
    aliased = _has_alias(text)
    if not deep and not aliased:
        return
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    stack: list[list[Any]] = []  # [anchor, bytes] per open collection
    anchors: dict[str, int] = {}
    total = 0
    try:
        for ev in yaml.parse(text, Loader=loader):
            if isinstance(ev, yaml.CollectionStartEvent):
                stack.append([ev.anchor, 16])
                if len(stack) > MAX_DEPTH:
                    line = ev.start_mark.line + 1 if ev.start_mark else 0
                    raise LimitError(f"{where(line)}: nested more than {MAX_DEPTH} levels deep")
                continue
            if isinstance(ev, yaml.CollectionEndEvent):
                anchor, size = stack.pop()
            elif isinstance(ev, yaml.ScalarEvent):
                anchor, size = ev.anchor, len(ev.value) + 16
            elif isinstance(ev, yaml.AliasEvent):
                anchor, size = None, anchors.get(ev.anchor or "", 0)
                total += size
                if total > MAX_ALIAS_BYTES:
                    line = ev.start_mark.line + 1 if ev.start_mark else 0
                    raise LimitError(
                        f"{where(line)}: YAML aliases expand to more than {MAX_ALIAS_BYTES >> 20} MiB"
                    )
            else:
                continue
            if anchor:
                anchors[anchor] = size
            if stack:
                stack[-1][1] += size
    except yaml.YAMLError:
        return  # a syntax error: the real parser reports it, with its own wording and line


# ---------------------------------------------------------------------------------------------- values


def _key(k: Any, at: Callable[[], str]) -> str:
    if isinstance(k, str):
        return k
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, int | float):
        _number(k, at)
        return str(k)
    raise LimitError(f"{at()}: a {type(k).__name__} as a mapping key (keys must be strings)")


_MAX_INT_BITS = MAX_NUMBER_DIGITS * 3.33


def _number(v: int | float, at: Callable[[], str], where: Callable[[Any], str] | None = None) -> None:
    """A number within limits, or LimitError naming the document (`at()`) or the value (`where(v)`)."""
    if isinstance(v, bool):
        return
    if isinstance(v, int):
        if v.bit_length() > _MAX_INT_BITS:
            place = where(v) if where is not None else at()
            raise LimitError(f"{place}: integer with more than {MAX_NUMBER_DIGITS} digits")
    elif v != v or v in (float("inf"), float("-inf")):
        # In YAML a plain scalar such as 1e400 (or a hex string of digits and one "e") is a float.
        place = where(v) if where is not None else at()
        raise LimitError(f"{place}: number out of range ({v}); quote it if it is a string")


_PLAIN_SCALARS = (bool, type(None))


def check_value(value: Any, at: Callable[[], str], *, keys: bool = True) -> Any:
    """`value` checked (depth, numbers, keys) and with scalar keys made strings; `at()` names it in errors.

    Level by level (as check_json_depth), each level's values sorted by type with comprehensions over the
    whole level, not a Python call per value: a streamed 8 MB batch of a YAML dump is ~100,000 containers
    and ~200,000 values, most of them strings. A mapping whose keys are not all strings has them made
    strings in place (its order kept, a later equal key winning, as a dict built from its items). The
    first value out of limits in that order (level by level) is the one the error names."""
    if not isinstance(value, dict | list):
        if isinstance(value, int | float):
            _number(value, at)
        return value
    dicts: list[Any] = [value] if isinstance(value, dict) else []
    lists: list[Any] = [] if dicts else [value]
    depth = 0
    while dicts or lists:
        if depth > MAX_DEPTH:
            raise LimitError(f"{at()}: nested more than {MAX_DEPTH} levels deep")
        if keys and dicts:
            try:
                "".join(chain.from_iterable(dicts))  # a TypeError unless every key is a str (in C)
            except TypeError:
                for x in dicts:
                    _string_keys(x, at)
        values = chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists))
        rest = [y for y in values if type(y) is not str]
        depth += 1
        dicts = [y for y in rest if type(y) is dict]
        lists = [y for y in rest if type(y) is list]
        ints = [y for y in rest if type(y) is int]
        floats = [y for y in rest if type(y) is float]
        others = len(rest) - len(dicts) - len(lists) - len(ints) - len(floats)
        if others and others != len([y for y in rest if type(y) in _PLAIN_SCALARS]):
            # Subclasses of the containers or numbers (not what the decoders make), or other scalars.
            for y in rest:
                if type(y) in (dict, list, int, float, bool, type(None)):
                    continue
                if isinstance(y, dict):
                    dicts.append(y)
                elif isinstance(y, list):
                    lists.append(y)
                elif isinstance(y, int) and not isinstance(y, bool):
                    ints.append(y)
                elif isinstance(y, float):
                    floats.append(y)
        if ints or floats:
            if depth > MAX_DEPTH:
                raise LimitError(f"{at()}: nested more than {MAX_DEPTH} levels deep")
            if ints and max(map(int.bit_length, ints)) > _MAX_INT_BITS:
                _number(next(y for y in ints if y.bit_length() > _MAX_INT_BITS), at, _at_value(value, at))
            if floats and not all(map(math.isfinite, floats)):
                _number(next(y for y in floats if not math.isfinite(y)), at, _at_value(value, at))
    return value


def _at_value(root: Any, at: Callable[[], str]) -> Callable[[Any], str]:
    """`at` for a value out of limits, naming where in `root` it is (`items[41].metadata.uid`): found again
    by identity, in the walk's order, only once there is an error to report."""

    def where(target: Any) -> str:
        path = _path_to(root, target)
        return f"{at()}: {path}" if path else at()

    return where


def _path_to(root: Any, target: Any) -> str:
    level: list[tuple[Any, str]] = [(root, "")]
    while level:
        below: list[tuple[Any, str]] = []
        for x, path in level:
            pairs = x.items() if isinstance(x, dict) else enumerate(x)
            for k, y in pairs:
                p = f"{path}[{k}]" if isinstance(x, list) else f"{path}.{k}" if path else str(k)
                if y is target:
                    return p
                if isinstance(y, dict | list):
                    below.append((y, p))
        level = below
    return ""


def _string_keys(x: dict[Any, Any], at: Callable[[], str]) -> None:
    try:
        "".join(x)  # a TypeError unless every key is a str (checked in C, without a Python loop)
    except TypeError:
        new = [(_key(k, at), v) for k, v in x.items()]
        x.clear()
        x.update(new)


def value_error_text(e: BaseException) -> str:
    """One short line for a decoder's ValueError/RecursionError (Python's 4,300-digit message is long)."""
    text = " ".join(str(e).split())
    if "integer string conversion" in text:
        return f"integer with more than {MAX_NUMBER_DIGITS} digits"
    if isinstance(e, RecursionError):
        return f"nested more than {MAX_DEPTH} levels deep"
    return " ".join(text.split()[:12])


def load_small_yaml(path: str, what: str, limit: int = 16 << 20) -> Any:
    """A small YAML/JSON file (scheduler configuration, pools) read with PyYAML's safe loader, within the
    limits above; every failure is an InputError (callers re-raise it as their own kind)."""
    data = read_input(Path(path), path, limit)
    if len(data) > limit:
        raise LimitError(f"{path}: {what} larger than {limit >> 20} MiB")
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: {what} is a binary file, not YAML or JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: {what} is not UTF-8 text at byte {e.start}") from None
    return load_small_yaml_text(text, path)


def load_small_yaml_text(text: str, source: str) -> Any:
    import yaml

    check_yaml_text(text, source, lambda line: f"{source} (line {line})" if line else source)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InputError(f"error converting YAML to JSON: {' '.join(str(e).split())}") from None
    except (ValueError, RecursionError, OverflowError) as e:
        raise InputError(f"{source}: {value_error_text(e)}") from None
    return check_value(doc, lambda: source)
