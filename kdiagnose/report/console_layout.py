"""Line layout for the human report: word wrapping with hanging indents, aligned columns, small word helpers.

The layout is computed here rather than by rich tables so that long unbreakable tokens (taint keys, node names)
wrap at spaces, node names stay whole, and every line fits the width. Object names are never parsed as markup
(markup=False, Text objects) and control characters are escaped.
"""

from __future__ import annotations

import functools
import re
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.color import ColorSystem
    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

__all__ = ["Out", "flush_stdout", "node_list", "plural", "safe", "stdout_closed"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """Escape control characters: object names must not drive the terminal (Kubernetes names cannot hold
    them, so a real cluster's text is unchanged)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class _Wrapper(textwrap.TextWrapper):
    """Breaks at spaces; a token wider than a whole line (a long pool or label list, a field path) breaks
    after `,` `/` `=` `:` or `.` rather than at an arbitrary character."""

    def _split(self, text: str) -> list[str]:
        room = self.width - len(self.subsequent_indent)
        out: list[str] = []
        for chunk in super()._split(text):
            if len(chunk) > room and not chunk.isspace():
                out.extend(x for x in re.split(r"(?<=[,/=:.])", chunk) if x)
            else:
                out.append(chunk)
        return out


def _wrap(text: str, width: int, initial: str = "", subsequent: str = "") -> list[str]:
    return list(_wrapped(text, width, initial, subsequent))


@functools.lru_cache(maxsize=4096)
def _wrapped(text: str, width: int, initial: str, subsequent: str) -> tuple[str, ...]:
    """Cached: a big cluster's node rows repeat a few causes thousands of times (--all-nodes)."""
    if len(initial) + len(text) <= width and text.isprintable() and text and text[-1] != " ":
        # What TextWrapper returns for a line that fits (no tab or newline to munge, no trailing space to
        # drop; a first line keeps its leading spaces), without its ~10 µs of chunking: --all-nodes at
        # 5,000 nodes wraps ~100,000 short cells.
        return (initial + text,)
    return textwrapped(text, width, initial, subsequent)


def textwrapped(text: str, width: int, initial: str, subsequent: str) -> tuple[str, ...]:
    """The lines textwrap gives (through _Wrapper's breaks), uncached: what `_wrapped` stands for."""
    w = _Wrapper(
        width=width,
        initial_indent=initial,
        subsequent_indent=subsequent,
        break_on_hyphens=False,
        break_long_words=True,
    )
    return tuple(w.wrap(text))


def stdout_closed() -> None:
    """`kdiagnose FILE | head`: the reader closed the pipe, it has what it wanted. The rest of the report
    goes to /dev/null, so the exit code stays the verdict's (rich's Console.on_broken_pipe exits 1 instead,
    whatever the verdict). cli.py flushes through here at exit too."""
    import os
    import sys

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def flush_stdout() -> None:
    """Flush the report, the reader gone or not (stdout_closed)."""
    import sys

    try:
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_closed()


class Out:
    """Pre-wrapped lines: word-wrapped at spaces only (never inside a taint key or node name unless the token
    alone is wider than the line), with hanging indents."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.width = max(console.width, 40)
        # Without a color system (a pipe, a file, --no-color, NO_COLOR) rich writes a soft-wrapped Text as
        # its plain characters and a newline (console.py _render_buffer: styles render to nothing), at ~100
        # µs a line; a report of 1,000 pods has 50,000 lines. The text is written directly then, the bytes
        # unchanged: only a tab (which rich expands to its tab stops by cell width) still goes through rich.
        self._write = console.file.write if console.color_system is None else None
        # On a terminal rich renders the same Text as one segment in its style and a newline: the style's
        # escape codes around the text (Style.render for the console's color system), written directly too.
        self._styled: tuple[Callable[[str], object], ColorSystem, dict[str, Style]] | None = None
        if (
            self._write is None
            and console.is_terminal
            and not console.legacy_windows
            and not console.is_jupyter
        ):
            from rich.console import COLOR_SYSTEMS

            self._styled = (console.file.write, COLOR_SYSTEMS[str(console.color_system)], {})
        # console.rule(): the line character (ASCII on a non-UTF-8 stream, rule.py) across the full width.
        self._rule = ("─" if console.encoding.startswith("utf") else "-") * console.width

    def blank(self) -> None:
        if self._write is not None:
            self._write("\n")
        elif self._styled is not None:
            self._styled[0]("\n")
        else:
            self.console.print()

    def rendered(self, text: str) -> None:
        """Lines another Out rendered for this console's width and color system, newlines included."""
        if self._write is not None:
            self._write(text)
        else:
            self.console.file.write(text)

    def rule(self) -> None:
        """A dim horizontal line across the width (between a report's entries)."""
        if self._write is not None:
            self._write(self._rule + "\n")
        else:
            self.console.rule(style="dim")

    def text(self, text: Text) -> None:
        """A styled Text, printed whole (soft-wrapped by the terminal, never broken by rich)."""
        if self._write is not None and "\t" not in text.plain:
            self._write(text.plain + "\n")
        else:
            self.console.print(text, soft_wrap=True)

    def line(self, text: str, style: str | None = None) -> None:
        text = safe(text)
        if "\t" not in text:
            if self._write is not None:
                self._write(text + "\n")
                return
            if self._styled is not None:
                write, system, styles = self._styled
                if not style or not text:
                    write(text + "\n")
                    return
                st = styles.get(style)
                if st is None:
                    st = styles[style] = self.console.get_style(style)
                write(st.render(text, color_system=system) + "\n")
                return
        from rich.text import Text

        self.console.print(Text(text, style=style or ""), soft_wrap=True)

    def verbatim(self, text: str, style: str | None = None) -> None:
        """Printed as is; the terminal soft-wraps it, so a copy is the exact text."""
        self.line(text, style)

    def command(self, text: str, indent: int, style: str | None = None) -> None:
        """A shell line to copy: the command itself is never wrapped (a copy is the exact command), but a
        line that is only a `# ...` comment is wrapped as comment lines, and a trailing `  # ...` remark that
        would push the line past the width goes on comment lines above the command."""
        pad = " " * indent
        if text.startswith("#"):
            body = text[1:].strip()
            for ln in _wrap(safe(body), self.width, pad + "# ", pad + "# ") or [pad + "#"]:
                self.line(ln, style)
            return
        cut = text.rfind("  # ")
        if len(pad) + len(text) > self.width and cut > 0 and not any(q in text[cut:] for q in "'\"`"):
            self.command("# " + text[cut + 4 :], indent, style)
            text = text[:cut]
        self.verbatim(pad + text, style)

    def para(self, text: str, indent: int = 0, hang: int | None = None, style: str | None = None) -> None:
        hang = indent + 2 if hang is None else hang
        for ln in _wrap(safe(text), self.width, " " * indent, " " * hang) or [" " * indent]:
            self.line(ln, style)

    def columns(self, rows: list[list[str]], indent: int) -> None:
        """Aligned columns (no box characters: node names copy cleanly); the last column wraps under itself.
        When it would be narrower than 30 columns, or would leave a stub on a first line, each row is
        stacked: the cells, then the last one below."""
        if not rows:
            return
        n = len(rows[0])
        widths = [max(len(r[i]) for r in rows) for i in range(n - 1)]
        lead = indent + sum(w + 2 for w in widths)
        room = self.width - lead
        longest = max((len(t) for r in rows for t in r[-1].split()), default=0)
        # Side by side only when no cell's first line is left with a stub ("taint" alone, the long taint
        # key on the next line): such a column reads worse than the stacked layout.
        stub = any(len((_wrap(safe(r[-1]), room) or [""])[0]) < min(len(r[-1]), room // 2) for r in rows)
        if room >= 30 and longest <= room and not stub:
            for r in rows:
                head = " " * indent + "".join(c.ljust(w + 2) for c, w in zip(r, widths, strict=False))
                wrapped = _wrap(safe(r[-1]), room) or [""]
                self.line((head + wrapped[0]).rstrip())
                for more in wrapped[1:]:
                    self.line(" " * lead + more)
            return
        for r in rows:
            self.para("  ".join(c for c in r[:-1] if c), indent, indent + 4)
            self.para(r[-1], indent + 4, indent + 6)


def node_list(nodes: list[str], limit: int = 3) -> str:
    """`node-a` for one node, `3 nodes: a, b, c` for a few, `9 nodes: a, b, c, …` for more than `limit`."""
    shown = ", ".join(nodes[:limit])
    return (
        f"{len(nodes)} nodes: {shown}, …"
        if len(nodes) > limit
        else (shown if len(nodes) == 1 else f"{len(nodes)} nodes: {shown}")
    )


def plural(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"
