"""Fixtures shared by test modules."""

from __future__ import annotations

from typing import Any

import pytest

from kdiagnose import pipeline


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Take the pipeline's parallel path (pods in forked workers) on small clusters, and count the worker
    pools started."""
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_WORK", 0)
    started: list[int] = []
    real = pipeline._in_workers

    def counted(groups: Any, work: Any, jobs: int, **kwargs: Any) -> Any:
        started.append(jobs)
        return real(groups, work, jobs, **kwargs)

    monkeypatch.setattr(pipeline, "_in_workers", counted)
    return started
