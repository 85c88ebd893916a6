"""Where a finding is: the manifest file as CI shows it, the object's line, and a field's line and column.

- Paths: relative to a base (`--path-base DIR`, else the git work tree around the working directory, else
  the working directory), POSIX-style, so GitHub and SARIF consumers map them onto the repository. A path
  outside the base stays absolute (nothing to map it to); stdin has no path.
- Lines: the object's line is its `apiVersion` key (else its first key), not the `---` before it. A field's
  line and column come from PyYAML's compose nodes (their marks), built only for the documents a finding
  needs and only then: the manifests are read again from disk (stdin is kept as read), each document
  composed on its own.
- Helm: `helm template` writes `# Source: CHART/templates/x.yaml` before each document; such a document is
  attributed to that template file (found under the base: CHART's directory is the one whose Chart.yaml
  names it), with the rendered stream's line kept beside it. A template is no YAML the composer could read
  (`{{ }}`), so a finding there points at the template's own `apiVersion` line, and field lines are given as
  lines of the rendered output.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from kdiagnose.load.raw import ARCHIVE_EXTS

__all__ = [
    "DocRef",
    "FieldPath",
    "Location",
    "PathBase",
    "Sources",
    "field_label",
    "find_git_root",
    "template_line",
]

# One step of a path into an object: a mapping key, a list index, or (key, value) = the list item whose
# `key` (dotted: `metadata.name`) is `value` (containers by name), as strategic merge identifies them.
Step = str | int | tuple[str, str]
FieldPath = tuple[Step, ...]

_DOC_MARK = re.compile(r"^---(?=[ \t\r\n]|$)")
_DOC_END_OR_DIRECTIVE = re.compile(r"(?m)^(?:%|\.\.\.(?:[ \t\r\n]|$))")
_HELM_SOURCE = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$")
_TOP_API_VERSION = re.compile(r"^(?:---[ \t]+)?[\"']?apiVersion[\"']?[ \t]*:")
# A file read again for locations is a manifest; past this it is not worth composing.
_MAX_TEXT = 32 << 20


def field_label(path: FieldPath) -> str:
    """`spec.template.spec.containers[web].resources.requests.cpu`, as kubectl explain spells fields."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif isinstance(step, tuple):
            out += f"[{step[1]}]"
        else:
            out += ("." if out else "") + step
    return out


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a manifest, as every format shows it."""

    file: str  # relative to the base (POSIX), absolute when outside it, "" for stdin
    line: int = 0  # 1-based; 0 = unknown
    column: int = 0  # 1-based; 0 = unknown
    field: str = ""  # the field's path (field_label), "" for the object itself
    note: str = ""  # why this place: "requests 8 CPU", "rendered from ... line 14"
    outside: bool = False  # the file is outside the base: `file` is absolute
    member: str = ""  # inside an archive: `file` is `ARCHIVE:MEMBER`, lines are the member's

    @property
    def container(self) -> str:
        """The file a CI system can open: the archive itself for an archive's member."""
        return self.file[: len(self.file) - len(self.member) - 1] if self.member else self.file

    @property
    def text(self) -> str:
        """`file:line:column` (what a terminal and an editor read), `<stdin>:line` for stdin."""
        out = self.file or "<stdin>"
        if self.line > 0:
            out += f":{self.line}"
            if self.column > 0:
                out += f":{self.column}"
        return out


def find_git_root(start: Path) -> Path | None:
    """The git work tree containing `start` (a `.git` directory, or a `.git` file for a worktree)."""
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return None


class PathBase:
    """Shows manifest paths relative to the base; see the module docstring for how the base is chosen."""

    def __init__(self, base: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> None:
        self.cwd = Path(os.path.abspath(cwd or Path.cwd()))
        if base is not None:
            self.root = Path(os.path.abspath(self.cwd / base))
            self.reason = "--path-base"
        else:
            git = find_git_root(self.cwd)
            self.root = git or self.cwd
            self.reason = "the git work tree" if git is not None else "the working directory"
        self._chart_dirs: dict[str, list[Path]] | None = None
        self._shown: dict[str, tuple[str, bool]] = {}

    def _split(self, source: str) -> tuple[str, str]:
        """(file, ":member" of an archive or "")."""
        for ext in ARCHIVE_EXTS:
            i = source.find(ext + ":")
            if i > 0:
                cut = i + len(ext)
                return source[:cut], source[cut:]
        return source, ""

    def relative(self, source: str) -> tuple[str, bool]:
        """(path as shown, outside the base?) for a loader's source label; ("", False) for stdin."""
        shown = self._shown.get(source)
        if shown is None:
            shown = self._shown[source] = self._relative(source)
        return shown

    def _relative(self, source: str) -> tuple[str, bool]:
        if source.startswith("<") and source.endswith(">"):
            return "", False
        path, member = self._split(source)
        full = os.path.abspath(self.cwd / path)
        try:
            rel = os.path.relpath(full, self.root)
        except ValueError:  # another drive (Windows)
            return Path(full).as_posix() + member, True
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            return Path(full).as_posix() + member, True
        return PurePosixPath(*Path(rel).parts).as_posix() + member, False

    def location(
        self, source: str, line: int = 0, column: int = 0, field: str = "", note: str = ""
    ) -> Location:
        shown, outside = self.relative(source)
        member = self._split(source)[1][1:]
        return Location(shown, line, column, field, note, outside, member)

    def chart_file(self, helm_path: str) -> str | None:
        """The repository file a `# Source: CHART/templates/x.yaml` comment names, relative to the base:
        BASE/CHART/... when it exists, else DIR/templates/x.yaml for the DIR whose Chart.yaml says
        `name: CHART` (searched a few levels deep, hidden folders skipped). None when not found."""
        parts = PurePosixPath(helm_path).parts
        if not parts or ".." in parts or PurePosixPath(helm_path).is_absolute():
            return None
        if (self.root / helm_path).is_file():
            return PurePosixPath(helm_path).as_posix()
        for chart_dir in self._charts().get(parts[0], []):
            candidate = chart_dir.joinpath(*parts[1:])
            if candidate.is_file():
                return PurePosixPath(*candidate.relative_to(self.root).parts).as_posix()
        return None

    def _charts(self) -> dict[str, list[Path]]:
        if self._chart_dirs is None:
            self._chart_dirs = {}
            for dirpath, dirnames, filenames in os.walk(self.root):
                depth = len(Path(dirpath).relative_to(self.root).parts)
                dirnames[:] = sorted(
                    d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS and depth < 5
                )
                if "Chart.yaml" in filenames:
                    name = _chart_name(Path(dirpath) / "Chart.yaml")
                    if name:
                        self._chart_dirs.setdefault(name, []).append(Path(dirpath))
        return self._chart_dirs

    @staticmethod
    def uri(loc: Location) -> str:
        """The location's file as a URI reference: relative (percent-encoded), or file:// when outside."""
        if loc.outside:
            return Path(loc.container).as_uri()
        return quote(loc.container, safe="/")


@dataclass(frozen=True, slots=True)
class DocRef:
    """Which object of a file: the loader's document index and start line, and the k-th object of that
    document (a List's items, flattened as the loader does)."""

    source: str
    doc_index: int
    line: int  # the line the loader gave (the document's `---`, or its first line); 0 for JSON
    item: int = 0


class Sources:
    """The manifests' text, read again when a location is asked for (stdin: as it was read)."""

    def __init__(self, stdin: bytes | None = None) -> None:
        self._texts: dict[str, str | None] = {}
        if stdin is not None:
            self._texts["<stdin>"] = _decode(stdin)
        self._docs: dict[tuple[str, int, int], Any] = {}
        self._split: dict[str, list[str] | None] = {}
        self._whole: dict[str, bool] = {}

    def set_stdin(self, data: bytes) -> None:
        self._texts["<stdin>"] = _decode(data)

    def text(self, source: str) -> str | None:
        if source not in self._texts:
            self._texts[source] = self._read(source)
        return self._texts[source]

    @staticmethod
    def _read(source: str) -> str | None:
        if source.startswith("<") or any(ext + ":" in source for ext in ARCHIVE_EXTS):
            return None  # an archive's member: its line from the loader is all there is
        try:
            path = Path(source)
            if not path.is_file() or path.stat().st_size > _MAX_TEXT:
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if data[:2] == b"\x1f\x8b":
            return None
        return _decode(data)

    # ------------------------------------------------------------------ object lines (no parsing)

    def _lines(self, source: str) -> list[str] | None:
        if source not in self._split:
            text = self.text(source)
            self._split[source] = text.splitlines() if text is not None else None
        return self._split[source]

    def _chunk_lines(self, ref: DocRef) -> tuple[list[str], int] | None:
        """The document's lines and the 1-based line of the first, split at `---` as the loader does."""
        lines = self._lines(ref.source)
        if lines is None or ref.line <= 0:
            return None
        start = ref.line - 1
        if start >= len(lines):
            return None
        end = start + 1
        while end < len(lines) and not _DOC_MARK.match(lines[end]):
            end += 1
        return lines[start:end], ref.line

    def object_line(self, ref: DocRef) -> int:
        """The object's `apiVersion` line (else its first key); 0 when the text cannot be read (an archive's
        member). Whole YAML documents are scanned as text; a List's items and JSON need the composer."""
        if self._lines(ref.source) is None:
            return 0
        chunk = self._chunk_lines(ref)
        if chunk is None or ref.item or _holds_several(chunk[0]):
            pos = self.field_position(ref, ())
            return pos[0] if pos else 0
        lines, first = chunk
        content = 0
        for i, line in enumerate(lines):
            if _TOP_API_VERSION.match(line):
                return first + i
            s = line.strip()
            if _DOC_MARK.match(s):
                s = s[3:].strip()
            if not content and s and not s.startswith("#"):
                content = first + i
        return content

    def helm_source(self, ref: DocRef) -> str | None:
        """The `# Source: chart/templates/x.yaml` comment heading the document (helm template output)."""
        if ref.item:
            return None
        chunk = self._chunk_lines(ref)
        if chunk is None:
            return None
        for line in chunk[0]:
            s = line.strip()
            if not s or _DOC_MARK.match(s):
                continue
            m = _HELM_SOURCE.match(s)
            if m:
                return m.group(1)
            if not s.startswith("#"):
                return None
        return None

    # ------------------------------------------------------------------ fields (composed lazily)

    def _one_chunk(self, source: str, text: str) -> bool:
        """The loader reads a file with directives or `...` ends as one chunk (load/parse.py)."""
        if source not in self._whole:
            self._whole[source] = _DOC_END_OR_DIRECTIVE.search(text) is not None
        return self._whole[source]

    def _node(self, ref: DocRef) -> Any:
        key = (ref.source, ref.doc_index, ref.line)
        if key not in self._docs:
            self._docs[key] = self._compose(ref)
        root = self._docs[key]
        if root is None:
            return None
        objects = list(_objects(root))
        return objects[ref.item] if ref.item < len(objects) else None

    def _compose(self, ref: DocRef) -> Any:
        import yaml

        text = self.text(ref.source)
        if text is None:
            return None
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            if ref.line <= 0 or self._one_chunk(ref.source, text):
                docs = list(yaml.compose_all(text, Loader=loader))
                return _Shifted(docs[ref.doc_index], 0) if ref.doc_index < len(docs) else None
            chunk = self._chunk_lines(ref)
            if chunk is None:
                return None
            node = yaml.compose("\n".join(chunk[0]) + "\n", Loader=loader)
            return _Shifted(node, chunk[1] - 1) if node is not None else None
        except (yaml.YAMLError, ValueError, RecursionError):
            return None  # yaml-rs read it; if PyYAML cannot, the finding keeps the object's line

    def field_position(self, ref: DocRef, path: FieldPath) -> tuple[int, int] | None:
        """(line, column), 1-based, of the field's key (a list item: the item), or None."""
        node = self._node(ref)
        if node is None:
            return None
        shift = node.shift
        target = _walk(node.node, path)
        if target is None:
            return None
        mark = target.start_mark
        return mark.line + 1 + shift, mark.column + 1


@dataclass(frozen=True, slots=True)
class _Shifted:
    node: Any
    shift: int  # lines before the composed text in its file


_SKIP_DIRS = {"node_modules", "vendor", "__pycache__"}
_CHART_NAME = re.compile(r"^name[ \t]*:[ \t]*[\"']?([^\"'#\s]+)")


def _chart_name(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        return None
    for line in text.splitlines():
        m = _CHART_NAME.match(line)
        if m:
            return m.group(1)
    return None


def template_line(path: Path) -> int:
    """A Helm template's top-level `apiVersion:` line (1 when it has none at column 0)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            for i, line in enumerate(f, 1):
                if _TOP_API_VERSION.match(line):
                    return i
                if i > 5000:
                    break
    except OSError:
        pass
    return 1


_TOP_LIST_KIND = re.compile(r"^kind[ \t]*:[ \t]*[\"']?\w*List[\"']?[ \t]*(?:#.*)?$")
_TOP_ITEMS = re.compile(r"^items[ \t]*:")


def _holds_several(lines: list[str]) -> bool:
    """A `kind: List` document or a top-level sequence: its objects are found by the composer."""
    for line in lines:
        s = line.strip()
        if _DOC_MARK.match(s):
            s = s[3:].strip()
        if s and not s.startswith("#"):
            if s.startswith("- ") or s == "-":
                return True
            break
    return any(_TOP_LIST_KIND.match(x) for x in lines) and any(_TOP_ITEMS.match(x) for x in lines)


def _decode(data: bytes) -> str | None:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _scalar(node: Any) -> str | None:
    import yaml

    return str(node.value) if isinstance(node, yaml.ScalarNode) else None


def _get(node: Any, key: str) -> tuple[Any, Any] | None:
    """(key node, value node) of the mapping's last `key` (the last duplicate wins, as the loader reads)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    found = None
    for k, v in node.value:
        if _scalar(k) == key:
            found = (k, v)
    return found


def _objects(root: _Shifted) -> Any:
    """The document's objects in the loader's order (load/files.py iter_documents/_flatten)."""
    import yaml

    def flatten(node: Any, depth: int) -> Any:
        kind = _get(node, "kind")
        items = _get(node, "items")
        kind_text = _scalar(kind[1]) if kind else None
        if kind_text and kind_text.endswith("List") and items is not None and depth < 8:
            if isinstance(items[1], yaml.SequenceNode):
                for item in items[1].value:
                    if isinstance(item, yaml.MappingNode):
                        yield from flatten(item, depth + 1)
            return
        yield _Shifted(node, root.shift)

    node = root.node
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if isinstance(item, yaml.MappingNode):
                yield from flatten(item, 0)
    elif isinstance(node, yaml.MappingNode):
        yield from flatten(node, 0)


def _walk(node: Any, path: FieldPath) -> Any:
    """The node `path` names: a key's key node (where an editor puts the cursor), a list item's node."""
    import yaml

    at = node
    if not path:
        api = _get(node, "apiVersion")
        if api is not None:
            return api[0]
        if isinstance(node, yaml.MappingNode) and node.value:
            return node.value[0][0]
        return node
    for i, step in enumerate(path):
        last = i == len(path) - 1
        if isinstance(step, str):
            kv = _get(at, step)
            if kv is None:
                return None
            if last:
                return kv[0]
            at = kv[1]
        elif isinstance(step, int):
            if not isinstance(at, yaml.SequenceNode) or not 0 <= step < len(at.value):
                return None
            at = at.value[step]
        else:
            key, value = step
            if not isinstance(at, yaml.SequenceNode):
                return None
            match = None
            for item in at.value:
                sub: Any = item
                for part in key.split("."):
                    kv = _get(sub, part)
                    sub = kv[1] if kv is not None else None
                if sub is not None and _scalar(sub) == value:
                    match = item
                    break
            if match is None:
                return None
            at = match
    return at
