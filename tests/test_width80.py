"""The human report of real scenarios at 80 columns (`make demo` and a few golden ones), as an SRE reads it
in an 80-column terminal or piped (rich then defaults to 80 columns).

The rule (README "Each remedy in -o json carries ...", tests/test_layout.py COMMAND): no line is wider than
80 columns, except a command the report prints whole on its own line so that a copy is the exact command.
The FailedScheduling message is wrapped at spaces: its lines joined give the scheduler's text back.
Widths are terminal cells (rich.cells.cell_len), not bytes: the section rule is 80 × U+2500 "─", 240 bytes
in UTF-8, which byte-counting tools (mawk's length, `awk 'length > 80'`) report as too wide.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from kdiagnose.cli import app

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SCENARIOS = [
    "demo/cluster.yaml",
    "golden/cluster-eks-large-mixed.yaml",  # long node names, score tables, host ports, preemption
    "golden/features/preemption-success-message.yaml",
    "golden/preemption-pdb-violated-when-unavoidable.yaml",
    "golden/dra-shared-claim-pending-pods.yaml",
    "golden/volumes-pv-node-affinity-conflict.yaml",
    "golden/hostports-same-port-conflict.yaml",
    "golden/edge-message-over-1024.yaml",
]


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, ["diagnose", *args], env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


def _commands(doc: dict[str, object]) -> set[str]:
    pods = doc["pods"]
    assert isinstance(pods, list)
    whole = {
        c for p in pods for r in p["remedies"] for c in [*r["commands"], r["verify"], r["rollback"]] if c
    }
    # A command's trailing "  # comment" may go on a line of its own: the command part is then alone.
    return whole | {c.split("  # ")[0] for c in whole}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize(
    "flags", [pytest.param((), id="default"), pytest.param(("--all-remedies",), id="all")]
)
def test_no_line_but_a_whole_command_exceeds_80_columns(scenario: str, flags: tuple[str, ...]) -> None:
    path = str(FIXTURES / scenario)
    out = _run(path, *flags)
    commands = _commands(json.loads(_run(path, *flags, "-o", "json")))
    wide = [line for line in out.splitlines() if cell_len(line) > 80 and line.strip() not in commands]
    assert wide == []


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_scheduler_message_is_wrapped_never_cut(scenario: str) -> None:
    path = str(FIXTURES / scenario)
    lines = _run(path).splitlines()
    doc = json.loads(_run(path, "-o", "json"))
    messages = [p["message"] for p in doc["pods"] if p.get("message") and not p.get("scheduled")]
    blocks = []
    for i, line in enumerate(lines):
        if line == "Scheduler message:":
            block = []
            for body in lines[i + 1 :]:
                if not body.startswith("  ") or body.startswith("  (the event recorder"):
                    break
                block.append(body.strip())
            blocks.append(" ".join(block))
    assert blocks and all(b in messages for b in blocks)
