"""`-o human` rendered pod by pod while the pods are diagnosed (report/console_stream.py PodSections) prints
the bytes the whole-report renderer prints (report/console.py render), in one process and in workers.

The reference is `render` over the report diagnosed without a sink (every PodReport kept whole); the
streamed text is the sink's, serial and with forked workers, on varied generated clusters (tests/varied.py:
every pending pod its own owner, so the pipeline streams), golden cases, and the real command's stdout.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.load.files import RawObject
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.model.snapshot import Snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report.console import RenderOptions, render
from kdiagnose.report.console_stream import PodSections
from kdiagnose.versions import dialect_for
from tests.varied import varied_items

ROOT = Path(__file__).resolve().parent.parent

OPTIONS = {
    "default": RenderOptions(color=False, width=80),
    "all-nodes": RenderOptions(color=False, width=80, all_nodes=True, top=3),
    "summary": RenderOptions(color=False, width=80, summary=True),
    "wide": RenderOptions(color=False, width=132, all_remedies=True),
}


def _snapshot(items: list[dict[str, Any]], version: str = "v1.34.1") -> Snapshot:
    return build_snapshot([RawObject(o, "varied.json") for o in items], dialect_for(version))


def _whole(snap: Snapshot, opts: RenderOptions, profiles: Any = None) -> str:
    buf = io.StringIO()
    render(diagnose_snapshot(snap, profiles, source="varied.json"), buf, opts)
    return buf.getvalue()


def _streamed(snap: Snapshot, opts: RenderOptions, jobs: int, profiles: Any = None) -> tuple[str, int]:
    """The sink's text and how many pods it rendered as sections."""
    buf = io.StringIO()
    sink = PodSections(opts, buf)
    report = diagnose_snapshot(snap, profiles, source="varied.json", sink=sink, jobs=jobs)
    sink.finish(report)
    # What the pipeline kept of each streamed pod: what the exit code reads, not the verdicts.
    if sink.sections:
        assert all(not p.diagnosis.verdicts for p in report.pods)
    return buf.getvalue(), len(sink.sections)


@pytest.mark.parametrize("name", sorted(OPTIONS))
@pytest.mark.parametrize(("seed", "version"), [(1, "v1.34.1"), (2, "v1.37.2"), (5, "v1.31.8")])
def test_sections_print_the_whole_report_bytes(seed: int, version: str, name: str, forks: list[int]) -> None:
    opts = OPTIONS[name]
    items = varied_items(40, 30, 60, seed)
    whole = _whole(_snapshot(items, version), opts)
    assert "UNSCHEDULABLE" in whole
    serial, n = _streamed(_snapshot(items, version), opts, 1)
    assert n > 30 and not forks  # streamed, in this process
    assert serial == whole
    parallel, n = _streamed(_snapshot(items, version), opts, 2)
    assert n > 30 and forks == [2]
    assert parallel == whole
    # Document order changes nothing.
    random.Random(seed).shuffle(items)
    assert _streamed(_snapshot(items, version), opts, 2)[0] == whole


def test_notes_several_pods_share_are_printed_once_at_the_end(forks: list[int]) -> None:
    """A note is left out of a pod's section only once every pod is known: the sink must not decide it."""
    items = varied_items(20, 10, 12, 3)
    # Without any PodDisruptionBudget, every pending pod that would preempt carries the same note.
    whole = _whole(_snapshot(items), OPTIONS["default"])
    streamed, n = _streamed(_snapshot(items), OPTIONS["default"], 2)
    assert n and streamed == whole
    assert "Notes for the whole report" in whole


def test_pods_of_one_owner_are_not_streamed_and_print_the_same(forks: list[int]) -> None:
    import copy

    items = varied_items(20, 10, 12, 4)
    pending = [o for o in items if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    twin = copy.deepcopy(pending[0])
    twin["metadata"]["name"] += "-twin"
    snap_items = [*items, twin]
    whole = _whole(_snapshot(snap_items), OPTIONS["default"])
    streamed, n = _streamed(_snapshot(snap_items), OPTIONS["default"], 2)
    assert n == 0 and not forks  # one entry for the owner: the whole report, in one process
    assert streamed == whole
    assert "2 pods" in whole


def test_golden_cases_streamed_are_the_whole_report(forks: list[int]) -> None:
    from tests.golden_harness import all_cases, case_inputs

    cases = [c for c in all_cases() if not json.loads(c.read_text()).get("error")]
    streamed_cases = 0
    for golden_json in cases[::5]:
        _, snap, profiles = case_inputs(golden_json)
        for opts in (OPTIONS["default"], OPTIONS["all-nodes"]):
            whole = _whole(snap(), opts, profiles)
            text, n = _streamed(snap(), opts, 2, profiles)
            assert text == whole, golden_json
            streamed_cases += n > 0
    assert streamed_cases > 20


@pytest.mark.parametrize("system", ["standard", "256", "truecolor"])
def test_a_color_terminal_gets_the_same_styled_bytes(system: str, forks: list[int]) -> None:
    """On a terminal the sections are rendered in the workers with the terminal's color system: the same
    escape codes as rendered whole."""
    items = varied_items(30, 20, 40, 6)
    opts = RenderOptions(color=True, width=100, all_nodes=True)

    def console_text(stream: bool) -> str:
        import rich.console

        buf = io.StringIO()
        real = rich.console.Console

        def terminal(*a: Any, **k: Any) -> rich.console.Console:
            # The parent's console as on a terminal of that color system (console_for asks for "auto").
            if k.get("color_system") == "auto":
                k["color_system"] = system
            return real(*a, **k)

        with pytest.MonkeyPatch.context() as m:
            m.setattr(rich.console, "Console", terminal)
            if stream:
                sink = PodSections(opts, buf)
                assert sink.color_system == system
                report = diagnose_snapshot(_snapshot(items), None, source="varied.json", sink=sink, jobs=2)
                sink.finish(report)
                assert len(sink.sections) > 20
            else:
                render(diagnose_snapshot(_snapshot(items), None, source="varied.json"), buf, opts)
        return buf.getvalue()

    whole = console_text(False)
    assert "\x1b[1m" in whole  # styled: bold titles
    assert console_text(True) == whole


def test_the_cli_prints_the_same_stdout_with_workers(tmp_path: Path) -> None:
    """The real command: the same stdout and exit code streamed in workers, in one process, and whole."""
    dump = tmp_path / "varied.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": varied_items(30, 10, 40, 2)}))
    # The third run takes the sink away: the report rendered whole at the end.
    code = (
        "import kdiagnose.pipeline as p; p.PARALLEL_MIN_WORK = {}; f = p.diagnose_snapshot; "
        "p.diagnose_snapshot = lambda *a, **k: f(*a, **k) if {} else f(*a, **{{**k, 'sink': None}}); "
        "from kdiagnose.cli import main; main()"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    env.pop("NO_COLOR", None)
    runs = {}
    for jobs, threshold, stream in ((1, 10**18, True), (2, 0, True), (2, 0, False)):
        res = subprocess.run(
            [sys.executable, "-c", code.format(threshold, stream), str(dump), "--jobs", str(jobs)],
            capture_output=True,
            env=env,
            timeout=300,
        )
        assert not res.stderr.strip(), res.stderr
        runs[(jobs, threshold, stream)] = (res.returncode, res.stdout)
    assert runs[(1, 10**18, True)][0] == 1  # some pod is unschedulable
    assert b"UNSCHEDULABLE" in runs[(1, 10**18, True)][1]
    assert runs[(2, 0, True)] == runs[(1, 10**18, True)] == runs[(2, 0, False)]


@pytest.mark.parametrize(
    ("scenario", "verdict"),
    [("golden/seed-hello-web.yaml", 1), ("golden/edge-non-default-namespace.yaml", 0)],
)
@pytest.mark.parametrize("flags", [(), ("--all-nodes", "--pod", "*")], ids=["streamed", "whole"])
def test_a_closed_stdout_keeps_the_verdicts_exit_code(scenario: str, verdict: int, flags: Any) -> None:
    """`kdiagnose FILE | head`: the reader is gone before the first line; no error, the verdict's code."""
    fixture = str(ROOT / "fixtures" / scenario)
    args = list(flags)
    if "*" in args:
        # --pod: every named pod in full, not streamed (the whole-report path)
        doc = json.loads(
            subprocess.run(
                [sys.executable, "-m", "kdiagnose.cli", fixture, "-o", "json"],
                capture_output=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                timeout=60,
            ).stdout
        )
        args[args.index("*")] = doc["pods"][0]["pod"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "kdiagnose.cli", fixture, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # closed before the child writes anything (it takes ~0.3 s to start)
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == verdict, err
    assert err == b""
