"""The human report's fast paths print the same bytes as the paths they replace.

Without a color system the report writes its lines directly instead of through rich (report/console_layout.py
Out), wraps a line that fits without textwrap and caches the wrapping; the score table reads a ScoreTable's
columns instead of each node's breakdown (report/console_scores.py). Each is compared with the plain path on
the golden scenarios (every release's corpus, default and --all-nodes) and on hand-made texts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kdiagnose.load.dump import load_snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report import console_layout
from kdiagnose.report.console import RenderOptions, render_text
from kdiagnose.scheduler.diagnosis import ScoreTable

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SCENARIOS = sorted(
    p.relative_to(FIXTURES).as_posix()
    for d in ("golden", "golden-v137", "golden-config")
    for p in (FIXTURES / d).glob("*.yaml")
    if not p.name.endswith(".config.yaml")  # a case's KubeSchedulerConfiguration, not a cluster
)


def _through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line through rich's Console.print, every wrap through textwrap, nothing cached."""
    init = console_layout.Out.__init__

    def slow_init(self: console_layout.Out, console: object) -> None:
        init(self, console)  # type: ignore[arg-type]
        self._write = None
        self._styled = None

    monkeypatch.setattr(console_layout.Out, "__init__", slow_init)
    monkeypatch.setattr(console_layout, "_wrapped", console_layout.textwrapped)


def _as_dicts(report: object) -> None:
    """Score tables as plain dicts of breakdowns: the generic Mapping path of the score section."""
    for pr in report.pods:  # type: ignore[attr-defined]
        if isinstance(pr.diagnosis.scores, ScoreTable):
            pr.diagnosis.scores = {n: pr.diagnosis.scores[n] for n in pr.diagnosis.scores}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_fast_report_is_byte_identical(scenario: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(FIXTURES / scenario)
    snapshot, _ = load_snapshot([path], None)
    report = diagnose_snapshot(snapshot, None, source=path)
    fast = [render_text(report, RenderOptions(color=False, width=80, all_nodes=a)) for a in (False, True)]
    wide = render_text(report, RenderOptions(color=False, width=132, top=2))
    with monkeypatch.context() as m:
        _through_rich(m)
        _as_dicts(report)
        slow = [render_text(report, RenderOptions(color=False, width=80, all_nodes=a)) for a in (False, True)]
        slow_wide = render_text(report, RenderOptions(color=False, width=132, top=2))
    assert fast == slow
    assert wide == slow_wide


@pytest.mark.parametrize("system", ["standard", "256", "truecolor"])
@pytest.mark.parametrize("scenario", SCENARIOS[::4])
def test_fast_styled_report_is_byte_identical(
    scenario: str, system: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal: the styled lines written directly are the escape codes rich prints."""
    from rich.console import Console

    from kdiagnose.report import console

    def terminal(out: object, opts: RenderOptions) -> Console:
        return Console(
            file=out,  # type: ignore[arg-type]
            width=opts.width,
            color_system=system,  # type: ignore[arg-type]
            force_terminal=True,
            highlight=False,
            emoji=False,
            markup=False,
        )

    monkeypatch.setattr(console, "console_for", terminal)
    path = str(FIXTURES / scenario)
    snapshot, _ = load_snapshot([path], None)
    report = diagnose_snapshot(snapshot, None, source=path)
    fast = [render_text(report, RenderOptions(width=80, all_nodes=a)) for a in (False, True)]
    assert "\x1b[1m" in fast[0] or "No pending pods" in fast[0]
    with monkeypatch.context() as m:
        _through_rich(m)
        slow = [render_text(report, RenderOptions(width=80, all_nodes=a)) for a in (False, True)]
    assert fast == slow


TEXTS = [
    "",
    " ",
    "a",
    "  leading spaces kept",
    "trailing space dropped ",
    "tab\there",
    "new\nline",
    "x" * 79,
    "x" * 80,
    "x" * 81,
    "node-" * 20,
    "eks.amazonaws.com/nodegroup=memory,eks.amazonaws.com/nodegroup=compute,topology.kubernetes.io/zone=a",
    "word " * 30,
    "non-ascii é ü ★ 漢字 fits",
    "\u00a0no-break\u00a0spaces\u00a0",
    "carriage\rreturn",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(
    ("width", "initial", "subsequent"), [(80, "", ""), (80, "  ", "    "), (40, "    ", "  ")]
)
def test_wrap_fast_path_matches_textwrap(text: str, width: int, initial: str, subsequent: str) -> None:
    console_layout._wrapped.cache_clear()
    assert console_layout._wrap(text, width, initial, subsequent) == list(
        console_layout.textwrapped(text, width, initial, subsequent)
    )


def test_a_tab_still_goes_through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich expands a tab to its tab stop by cell width; the direct write must not print a raw tab.
    import io

    from kdiagnose.report.console import console_for

    buf = io.StringIO()
    out = console_layout.Out(console_for(buf, RenderOptions(color=False, width=80)))
    out.line("a\tb")
    out.line("plain")
    assert buf.getvalue() == "a       b\nplain\n"
