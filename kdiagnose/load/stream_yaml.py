"""Stream a `kubectl get ... -o yaml` List from disk in batches of items, never the whole document at once.

kubectl (sigs.k8s.io/yaml) and PyYAML write a List's items as an unindented block sequence under `items:` at
column 0: every item starts with `- ` at column 0 and every other line of it is indented. A line at column 0
that is neither `- ...`, indentation nor a comment (`kind: List`, `metadata:`, `---`) ends the sequence. The
file is read in blocks; each block is cut before its last item start and the complete items are parsed as
one small YAML sequence by files.py's own YAML decoder (yaml-rs, PyYAML as the fallback, with the same
boolean/timestamp/merge-key/duplicate-key rules), so a 400 MB dump costs a batch of dicts at a time and
bound Pods and Nodes are trimmed as they arrive.

Any other layout, or a batch that fails to parse (anchors shared across items, tabs, a syntax error), makes
`load_yaml_list` return False with the LoadResult untouched: files.py then reads the file whole and
reports the error with its line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, BinaryIO

from kdiagnose.errors import InputError
from kdiagnose.load.gcpause import without_gc
from kdiagnose.load.limits import MAX_SHAPELESS_DOCS, LimitError
from kdiagnose.load.parse import _decode_yaml
from kdiagnose.load.raw import LoadResult, RawObject, record_list, where
from kdiagnose.load.trim import trim_object

__all__ = ["BLOCK_SIZE", "load_yaml_list"]

Obj = dict[str, Any]

BLOCK_SIZE = 8 << 20
_ITEMS = re.compile(rb"(?m)^items:[ \t]*\r?\n(?=-[ \r\n])")
# A line that leaves the item sequence: not indented, not a comment, not `- ` / `-` (a new item), not blank.
# (A lookahead that needs the next character, so the end of a block is never mistaken for it.)
_OUTSIDE = re.compile(rb"\n(?=[^ \t\r\n#-]|-[^ \r\n])")
_ITEM_START = b"\n- "
# A file that is itself a block sequence (`- kind: Pod ...`), after comments and an optional `---`.
_TOP_SEQUENCE = re.compile(rb"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*(?:---[ \t]*\r?\n)?(?=-[ \r\n])")


class _Fallback(Exception):
    """Not the layout this module reads, or a batch it cannot parse alone."""


def _keep(obj: Any) -> Obj:
    if not isinstance(obj, dict) or "kind" not in obj:
        raise _Fallback  # a typed List whose items take their kind from the List: let files.py do it
    kind = obj.get("kind")
    spec = obj.get("spec")
    if kind == "Node" or (kind == "Pod" and isinstance(spec, dict) and spec.get("nodeName")):
        return trim_object(obj)
    return obj  # pending pods and other kinds stay whole


def _parse(data: bytes, source: str) -> list[Any]:
    try:
        docs, _ = _decode_yaml(data.decode("utf-8"), source)
    except (InputError, UnicodeDecodeError):
        raise _Fallback from None
    return docs


class _TopLevel:
    """Items of a file that is one top-level sequence: checked as they stream (no Kubernetes shape: error)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.shapeless = 0

    def keep(self, item: Any) -> Obj | None:
        if isinstance(item, dict) and isinstance(item.get("kind"), str):
            return _keep(item)
        if item is not None and not isinstance(item, dict):
            raise InputError(f"{where(self.source, 0)}: list item is not a Kubernetes object")
        self.shapeless += 1
        if self.shapeless > MAX_SHAPELESS_DOCS:
            raise LimitError(
                f"{self.source}: more than {MAX_SHAPELESS_DOCS} list items that are empty or have no kind: "
                "not Kubernetes objects"
            )
        return None


def _batch(data: bytes, source: str, top: _TopLevel | None = None) -> list[RawObject]:
    docs = _parse(data, source)
    if len(docs) != 1 or not isinstance(docs[0], list):
        raise _Fallback
    if top is None:
        return [RawObject(_keep(item), source) for item in docs[0]]
    return [RawObject(o, source) for o in map(top.keep, docs[0]) if o is not None]


def _stream(f: BinaryIO, source: str) -> tuple[list[RawObject], Obj | None]:
    """(objects, the List without its items) of a kubectl-layout List, or (objects, None) of a file that
    is one top-level sequence."""
    buf = f.read(BLOCK_SIZE)
    top: _TopLevel | None = None
    if buf.startswith(b"\xef\xbb\xbf"):
        raise _Fallback
    m = _ITEMS.search(buf, 0, 1 << 16)
    if m is None:
        m = _TOP_SEQUENCE.match(buf, 0, 1 << 16)
        if m is None:
            raise _Fallback
        top = _TopLevel(source)
    header = buf[: m.start()]
    buf = b"\n" + buf[m.end() :]  # a leading newline: item starts and the end are then all b"\n..."
    pos = 1
    scanned = 0
    objects: list[RawObject] = []
    eof = False
    while True:
        end = _OUTSIDE.search(buf, scanned)
        if end is not None:
            objects.extend(_batch(buf[pos : end.start() + 1], source, top))
            trailer = buf[end.start() + 1 :] + f.read()
            break
        if eof:
            objects.extend(_batch(buf[pos:], source, top))
            trailer = b""
            break
        scanned = max(len(buf) - 3, pos)  # the pattern reads up to two bytes past a newline
        cut = buf.rfind(_ITEM_START, pos)
        if cut > pos:
            objects.extend(_batch(buf[pos : cut + 1], source, top))
            pos = cut + 1
        more = f.read(BLOCK_SIZE)
        eof = not more
        buf = buf[pos - 1 :] + more
        scanned -= pos - 1
        pos = 1
    if top is not None:
        if any(d is not None for d in _parse(trailer, source)):
            raise _Fallback  # more after the sequence: a syntax error files.py reports with its line
        return objects, None
    shell = _parse(header + trailer, source)
    if len(shell) != 1 or not isinstance(shell[0], dict):
        raise _Fallback
    return objects, shell[0]


def load_yaml_list(path: Path | BinaryIO, source: str, result: LoadResult) -> bool:
    """Load a kubectl-layout YAML List file (or one top-level sequence) into `result`; False (and `result`
    untouched) otherwise."""
    try:
        with path.open("rb") if isinstance(path, Path) else path as f, without_gc():
            objects, shell = _stream(f, source)
    except (_Fallback, OSError):
        return False
    if shell is None:
        if not objects:
            return False
        result.files.append(source)
        result.objects.extend(objects)
        return True
    return record_list(result, source, objects, shell)
