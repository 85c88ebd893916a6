"""Document order never changes the answer: every golden case, its documents shuffled, gives the same
`-o json` bytes (diagnosis, remedies, warnings) and the same decisions as the unshuffled input.

The v1.34.1 scenarios (fixtures/golden/) and the configured profiles (golden-config/) are shuffled
PERMUTATIONS times each; the other releases' directories replay the same scenario files under another
dialect, so each of their cases is shuffled once (every case is covered at least once, and the test stays
near 10 s). Seeds derive from the case name (reproducible; a failure names its seed). The in-process
pipeline is used, not subprocesses.
"""

from __future__ import annotations

import random
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from kdiagnose.load.files import LoadResult, _load_bytes
from kdiagnose.load.snapshot import build_snapshot
from kdiagnose.pipeline import diagnose_snapshot
from kdiagnose.report import json as json_report
from kdiagnose.versions import dialect_for
from tests.golden_harness import FIXTURES, all_cases, case_id, scenario_for

PERMUTATIONS = 5
FULLY_SHUFFLED = ("golden", "golden-config")
_DOC_SPLIT = re.compile(r"^---[ \t]*$", re.M)


def _documents(text: str) -> tuple[str, list[str]]:
    """The header comments and the YAML documents of a scenario, as text."""
    parts = _DOC_SPLIT.split(text)
    return parts[0], [p for p in parts[1:] if p.strip()]


def _render(data: bytes, source: str, golden: dict[str, Any], config: Path | None) -> str:
    result = LoadResult()
    _load_bytes(data, source, result, explicit=True)
    dialect = dialect_for(golden.get("k8s_version"))
    snap = build_snapshot(result.objects, dialect, list_kinds=result.list_kinds)
    profiles = None
    if config is not None:
        from kdiagnose.schedconfig import load_scheduler_config

        profiles = list(load_scheduler_config(str(config), dialect, strict=True).profiles)
    report = diagnose_snapshot(snap, profiles, source=source)
    return json_report.render(report)


def _cases() -> list[Path]:
    import json

    out = []
    for c in all_cases():
        if json.loads(c.read_text()).get("error"):
            continue  # a configuration the real scheduler rejected: nothing is replayed
        out.append(c)
    return out


@pytest.mark.parametrize("golden_json", _cases(), ids=case_id)
def test_shuffled_documents_give_identical_json(golden_json: Path) -> None:
    import json

    golden = json.loads(golden_json.read_text())
    scenario = scenario_for(golden_json)
    config = golden_json.with_name(golden_json.stem + ".config.yaml")
    text = scenario.read_text()
    header, docs = _documents(text)
    source = scenario.name
    want = _render(text.encode(), source, golden, config if config.exists() else None)
    seed = zlib.crc32(case_id(golden_json).encode())
    rng = random.Random(seed)
    full = golden_json.relative_to(FIXTURES).parts[0] in FULLY_SHUFFLED
    for i in range(PERMUTATIONS if full else 1):
        shuffled = list(docs)
        rng.shuffle(shuffled)
        data = (header + "".join("---" + d for d in shuffled)).encode()
        got = _render(data, source, golden, config if config.exists() else None)
        assert got == want, f"{case_id(golden_json)}: permutation {i} (seed {seed}) changed the JSON"
