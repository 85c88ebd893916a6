"""How the program ends (cli._exit): as a process, after its output is flushed, with os._exit once a command
kept what it loaded (commands/common.py `held`), so the snapshot is not freed object by object; called
in-process with arguments (these tests, a library caller), with SystemExit and nothing kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kdiagnose.cli import main
from kdiagnose.commands import common

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo" / "cluster.yaml")

# An atexit handler runs at a normal interpreter exit and not after os._exit: its line on stderr tells
# which end the process took.
_RUN = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('interpreter exit\\n'))\n"
    "sys.argv[0] = 'kdiagnose'\n"
    "from kdiagnose.cli import main\n"
    "main()\n"
)


def _process(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-c", _RUN, *args], capture_output=True, cwd=ROOT, env=env, check=False, timeout=120
    )


def _in_process(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    return int(e.value.code or 0), capsys.readouterr().out


@pytest.mark.parametrize("output", ["json", "human", "yaml"])
def test_the_program_ends_with_os_exit_after_writing_everything(
    output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    res = _process(DEMO, "-o", output)
    code, out = _in_process([DEMO, "-o", output], capsys)
    assert res.returncode == code == 1  # the demo pod is unschedulable
    assert b"interpreter exit" not in res.stderr
    # Every byte the in-process run writes came out of the process before it ended.
    assert res.stdout.decode() == out
    if output == "json":
        assert json.loads(res.stdout)["pods"]


def test_an_error_ends_the_ordinary_way() -> None:
    # Nothing was loaded, so nothing is kept: the interpreter's own exit, with the error's code.
    res = _process("/nonexistent/dump.yaml")
    assert res.returncode == 3  # unreadable input (exitcodes.py ERROR)
    assert b"kdiagnose: error:" in res.stderr
    assert b"interpreter exit" in res.stderr


def test_main_called_with_arguments_keeps_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _in_process([DEMO, "-o", "json"], capsys)
    assert code == 1
    assert common.held == []
    common.keep_until_exit(object())  # outside a program run: not kept
    assert common.held == []
