"""Parity with the real kube-scheduler: every golden case, field by field (tests/golden_harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden_harness import all_cases, case_id, compare_case


@pytest.mark.parametrize("case", all_cases(), ids=case_id)
def test_replay_matches_the_real_kube_scheduler(case: Path) -> None:
    diffs = compare_case(case)
    assert not diffs, f"{case_id(case)}: {len(diffs)} difference(s)\n" + "\n".join(diffs)
